"""Writing a record: checked against record_format first, rendered deterministically (sorted
keys, two-space indent), written atomically, or compared with the committed file (--check)."""

import argparse
import json
import os
import sys
import tempfile

from gitsrc import ExtractError, GitSource
from record_format import problems


def arguments(prog, description, repo_help, rev_help):
    """The options every extractor takes; each adds its own."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--repo", required=True, help=repo_help)
    p.add_argument("--rev", required=True, help=rev_help)
    p.add_argument("--release", required=True, help="release name the record is for, e.g. 2.29")
    p.add_argument("--out", required=True, help="the JSON record to write")
    p.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    return p


def render(record):
    found = problems(record)
    if found:
        raise ExtractError("the record would be malformed (an extractor bug):\n  " + "\n  ".join(found))
    return json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_atomically(path, text):
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".extract-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def deliver(prog, build, out, check, rev):
    """Runs `build` (which returns the record) and writes or checks `out`; the exit status."""
    try:
        text = render(build())
    except ExtractError as e:
        print(f"{prog}: error: {e}\n{prog}: nothing written", file=sys.stderr)
        return 2
    if not check:
        write_atomically(out, text)
        return 0
    try:
        with open(out, encoding="utf-8") as f:
            current = f.read()
    except OSError as e:
        print(f"{prog}: {out}: {e.strerror}", file=sys.stderr)
        return 1
    if current != text:
        print(f"{prog}: {out} differs from what {rev} gives: regenerate it", file=sys.stderr)
        return 1
    return 0


def docs_main(prog, tool, build, argv):
    """The main() of an extractor that reads the Neuron documentation (aws-neuron/aws-neuron-sdk):
    `build(source, release)` returns the record."""
    args = arguments(prog, f"Write {tool}'s record.", "git repository of aws-neuron/aws-neuron-sdk",
                     "revision to read, e.g. v2.29.0").parse_args(argv)
    return deliver(prog, lambda: build(GitSource(args.repo, args.rev), args.release), args.out, args.check, args.rev)
