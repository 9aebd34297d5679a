"""docs/ARCHITECTURE.md stays true: every top-level folder and every core source is named in it,
and the core's layering table holds (a folder includes only folders above it in that table).

Run by CTest as docs.architecture; exits 1 with one line per drift."""

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ARCHITECTURE.md"
ROW = re.compile(r"^\| `([^`]+)/` \|(.*)$")


def tracked(*paths: str) -> list[str]:
    """Files git tracks (a build tree or an editor's leftovers are not the project's folders)."""
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--", *paths], check=True,
                         capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line]


def tables(text: str) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The top-level folder table (before the core section) and the core's rows in table order."""
    top: dict[str, str] = {}
    core: list[tuple[str, str]] = []
    in_core = False
    for line in text.splitlines():
        if line.startswith("## The core, folder by folder"):
            in_core = True
        elif line.startswith("## ") and in_core:
            in_core = False
        match = ROW.match(line)
        if not match:
            continue
        if in_core:
            core.append((match.group(1), match.group(2)))
        elif not core:
            top.setdefault(match.group(1), match.group(2))
    return top, core


def named(stem: str, row: str) -> bool:
    """`stem`, `stem.hpp`, `stem.{hpp,cpp}` or a (`a`, `stem`) list all name a file."""
    return re.search(r"`" + re.escape(stem) + r"(\.[a-z{},]+)?`", row) is not None


def main() -> int:
    text = DOC.read_text(encoding="utf-8")
    top, core = tables(text)
    problems: list[str] = []

    folders = sorted({path.split("/", 1)[0] for path in tracked(".") if "/" in path
                      and not path.startswith(".")})
    problems += [f"top-level folder '{f}/' is not in the Folders table" for f in folders
                 if f not in top]
    problems += [f"the Folders table names '{f}/', which does not exist" for f in top
                 if f not in folders]

    order = {folder: i for i, (folder, _) in enumerate(core)}
    rows = dict(core)
    sources = [p for p in tracked("core/src", "core/include/trnslurm")
               if p.endswith((".cpp", ".hpp"))]
    include = re.compile(r'^\s*#\s*include\s+"(?:trnslurm/)?([a-z_]+)/[^"]+"', re.M)
    for path in sources:
        parts = pathlib.PurePosixPath(path).parts
        folder = parts[2] if parts[1] == "src" else parts[3]
        if folder not in rows:
            problems.append(f"{path}: folder '{folder}/' has no row in the core table")
            continue
        stem = pathlib.PurePosixPath(path).stem
        if not named(stem, rows[folder]):
            problems.append(f"{path}: '{stem}' is not named in the core table's '{folder}/' row")
        for used in include.findall((ROOT / path).read_text(encoding="utf-8")):
            if used in order and order[used] > order[folder]:
                problems.append(f"{path}: includes '{used}/', which is below '{folder}/' in the "
                                "layering table")

    for line in problems:
        print(f"docs/ARCHITECTURE.md: {line}")
    print(f"{len(sources)} core sources and {len(folders)} folders checked, {len(problems)} drifts")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
