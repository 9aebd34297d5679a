"""Checkpoints as neuronx-distributed writes them: <dir>/step_<n>/{model/, optim/, scheduler.pt,
user_content.pt, done}. A checkpoint is complete only once `done` exists."""

import os
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
from nxd_checkpoint import _fsync_dir as fsync_path  # noqa: E402  (os.open + fsync: files too)

STEP = re.compile(r"^step_(\d+)$")


def completed(ckpt_dir: Path) -> list:
    """(step, path) of every completed checkpoint, oldest first."""
    if not ckpt_dir.is_dir():
        return []
    found = []
    for entry in ckpt_dir.iterdir():
        m = STEP.match(entry.name)
        if m and (entry / "done").is_file():
            found.append((int(m.group(1)), entry))
    return sorted(found)


def newest(ckpt_dir: Path):
    done = completed(ckpt_dir)
    return done[-1] if done else None


def begin(ckpt_dir: Path, step: int) -> Path:
    """A fresh temporary directory for step `step`; `commit` makes it visible."""
    tmp = ckpt_dir / f".step_{step}.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    return tmp


def commit(ckpt_dir: Path, tmp: Path, step: int) -> Path:
    """Crash-consistent: every file and directory of the checkpoint reaches the disk before `done`
    exists, so a crash never leaves `done` beside data that was still in the page cache."""
    for root, _, files in os.walk(tmp, topdown=False):
        for name in files:
            fsync_path(Path(root) / name)
        fsync_path(Path(root))
    final = ckpt_dir / f"step_{step}"
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    fsync_path(ckpt_dir)
    # `done` last: a reader that sees it sees every other file of the checkpoint.
    with open(final / "done", "w") as f:
        f.flush()
        os.fsync(f.fileno())
    fsync_path(final)
    return final
