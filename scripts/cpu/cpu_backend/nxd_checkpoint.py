"""Checkpoints in the layout neuronx-distributed's save_checkpoint writes
(src/neuronx_distributed/trainer/checkpoint.py and checkpoint_storage.py at release 2.29):

    <checkpoint_dir>/<tag>/checkpoint        "1", written first: marks a checkpoint directory
    <checkpoint_dir>/<tag>/model/dp_rank_00_tp_rank_TT_pp_rank_PP.pt
    <checkpoint_dir>/<tag>/optim/dp_rank_DD_tp_rank_TT_pp_rank_PP.pt   (DD = 00 without ZeRO-1)
    <checkpoint_dir>/<tag>/scheduler.pt, user_content.pt
    <checkpoint_dir>/<tag>/done              "1", written last: the checkpoint is complete

With xser (torch-xla serialization) each .pt holds the object with its tensors replaced by
references, each tensor in <file>.pt.tensors/tensor_<i>.pt, shapes and dtypes in
<file>.pt.info.pt; a tag is read as xser when a *.tensors directory is in it. The reference
objects are this backend's own (torch_xla is not installed), so only the layout is upstream's.

Completed tags are those with `done`, ordered by the time `done` was written; pruning keeps the
newest num_kept and removes unfinished tags older than the first completed one (an interrupted
deletion), deleting `done` before anything else. Every file and directory is fsynced before
`done` is written, so a crash never leaves a `done` beside missing data."""

import os
import shutil
from pathlib import Path

import torch

XSER_REF = "__trnslurm_xser_tensor__"


def _fsync_dir(path: Path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _save(obj, path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        torch.save(obj, f)
        f.flush()
        os.fsync(f.fileno())


def save_text(text: str, path: Path):
    with open(path, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    _fsync_dir(path.parent)


def save_file(obj, path, xser: bool):
    """One checkpoint file, plain torch.save or in xser layout, fsynced with its directories."""
    path = Path(path)
    if not xser:
        _save(obj, path)
        _fsync_dir(path.parent)
        return
    tensors_dir = Path(f"{path}.tensors")
    shutil.rmtree(tensors_dir, ignore_errors=True)
    tensors_dir.mkdir(parents=True)
    info = {}

    def refs(o):
        if isinstance(o, torch.Tensor):
            i = len(info)
            info[i] = {"dtype": o.dtype, "shape": o.shape}
            _save(o.detach().clone(), tensors_dir / f"tensor_{i}.pt")
            return {XSER_REF: i}
        if isinstance(o, dict):
            return {k: refs(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return type(o)(refs(v) for v in o)
        return o

    ref_data = refs(obj)
    _fsync_dir(tensors_dir)
    _save(info, Path(f"{path}.info.pt"))
    _save(ref_data, path)
    _fsync_dir(path.parent)


def load_file(path, xser=None):
    """A file written by save_file; xser None: as the file is laid out."""
    path = Path(path)
    tensors_dir = Path(f"{path}.tensors")
    if xser is None:
        xser = tensors_dir.is_dir()
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such checkpoint file")
    data = torch.load(path, map_location="cpu")
    if not xser:
        return data
    if not tensors_dir.is_dir():
        raise ValueError(f"{path}: no {tensors_dir.name} directory beside it: not saved with xser")

    def back(o):
        if isinstance(o, dict) and set(o) == {XSER_REF}:
            return torch.load(tensors_dir / f"tensor_{o[XSER_REF]}.pt", map_location="cpu")
        if isinstance(o, dict):
            return {k: back(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return type(o)(back(v) for v in o)
        return o

    return back(data)


def is_xser(tag_dir) -> bool:
    """Whether a tag was saved with xser: a *.tensors directory within two levels, as upstream looks."""
    tag_dir = Path(tag_dir)
    return any(p.is_dir() for p in [*tag_dir.glob("*.tensors"), *tag_dir.glob("*/*.tensors")])


def _tags_with(ckpt_dir: Path, marker: str) -> list:
    if not ckpt_dir.is_dir():
        return []
    found = [(p / marker).stat().st_mtime_ns for p in ckpt_dir.iterdir() if (p / marker).is_file()]
    names = [p.name for p in ckpt_dir.iterdir() if (p / marker).is_file()]
    return [n for _, n in sorted(zip(found, names))]


def completed_tags(ckpt_dir) -> list:
    """Tags with `done`, oldest first (by the time `done` was written), as has_checkpoint and
    load_checkpoint(tag=None) see them."""
    return _tags_with(Path(ckpt_dir), "done")


def begin(ckpt_dir, tag: str) -> Path:
    """Rank 0, before any rank writes into the tag: a tag directory marked as a checkpoint and
    not (or no longer) complete."""
    tag_dir = Path(ckpt_dir) / tag
    tag_dir.mkdir(parents=True, exist_ok=True)
    done = tag_dir / "done"
    if done.exists():  # saving the same tag again: it is incomplete until done is rewritten
        done.unlink()
        _fsync_dir(tag_dir)
    save_text("1", tag_dir / "checkpoint")
    _fsync_dir(Path(ckpt_dir))
    return tag_dir


def finish(ckpt_dir, tag: str, num_kept) -> list:
    """Rank 0, after every rank has written its files: `done`, then pruning. Returns the tags removed."""
    tag_dir = Path(ckpt_dir) / tag
    for d in sorted({p.parent for p in tag_dir.rglob("*")} | {tag_dir}, key=lambda p: -len(p.parts)):
        _fsync_dir(d)
    save_text("1", tag_dir / "done")
    return prune(ckpt_dir, num_kept)


def prune(ckpt_dir, num_kept) -> list:
    ckpt_dir = Path(ckpt_dir)
    completed, corrupted = [], []
    for tag in _tags_with(ckpt_dir, "checkpoint"):
        if (ckpt_dir / tag / "done").is_file():
            completed.append(tag)
        elif not completed:
            corrupted.append(tag)
    remove = corrupted
    if num_kept is not None and num_kept != -1 and len(completed) > num_kept:
        remove = remove + completed[:len(completed) - num_kept]
    for tag in remove:
        done = ckpt_dir / tag / "done"
        if done.exists():
            done.unlink()
            _fsync_dir(done.parent)
    for tag in remove:
        shutil.rmtree(ckpt_dir / tag, ignore_errors=True)
    return remove
