#!/usr/bin/env python3
"""Which translation units clang-tidy must look at again, and the record of those it passed.

clang-tidy's findings for a translation unit depend only on what it reads: the compile command,
the sources and headers the compiler opened (from the build's dependency files, `*.o.d`), the
`.clang-tidy` configuration, the options scripts/tidy adds and clang-tidy itself. This tool hashes
exactly those (headers outside the repository and the build directory, the system's, are left
out: a Debian upgrade of them is not noticed) and compares each translation unit's hash with the
one recorded when clang-tidy last passed it (tools/tidy/clean.txt). A unit without dependency
files (not built) or without a compile command is always selected.

  select.py select --build DIR --record FILE --tool VERSION --options TEXT --save HASHES -- SOURCE...
      prints the sources to lint, one a line; says on stderr how many and why; keeps every
      source's hash in HASHES
  select.py record ... --save HASHES --passed LIST --out FILE -- SOURCE...
      writes the record as it is after a run without findings: the sources in LIST (a file, one a
      line: they just passed) and those whose hash the record already holds, each with its hash;
      a source that changed while clang-tidy ran (its hash is not the one in HASHES) is left out
"""

import argparse
import hashlib
import json
import os
import shlex
import sys

HEADER = """\
# The translation units clang-tidy passed, each with the hash of everything its findings depend on
# (compile command, the repository's sources and headers it reads, .clang-tidy, scripts/tidy's
# options, clang-tidy's version). scripts/tidy lints only the units whose hash differs from this
# record. After a run without findings scripts/tidy writes the record as it then is to
# BUILD_DIR/tidy-clean.txt, or here with --record (tools/tidy/select.py, docs/security.md).
"""


def sha(data):
    return hashlib.sha256(data).hexdigest()


class Tree:
    def __init__(self, repo, build):
        self.repo = os.path.realpath(repo)
        self.build = os.path.realpath(build)
        self.file_hashes = {}

    def where(self, path):
        """('build'|'src', relative path) for a file of the build or the repository, else None."""
        real = os.path.realpath(path)
        for kind, root in (("build", self.build), ("src", self.repo)):
            if real.startswith(root + os.sep):
                return kind, os.path.relpath(real, root)
        return None

    def content(self, path):
        real = os.path.realpath(path)
        if real not in self.file_hashes:
            try:
                with open(real, "rb") as f:
                    self.file_hashes[real] = sha(f.read())
            except OSError:
                self.file_hashes[real] = "missing"
        return self.file_hashes[real]

    def normalise(self, text):
        # The same tree built elsewhere (another clone, scripts/test's copy) hashes the same.
        return text.replace(self.build, "@BUILD@").replace(self.repo, "@SRC@")


def depfile_paths(text):
    """The prerequisites of a make-style dependency file (as g++ -MD writes it)."""
    text = text.replace("\\\n", " ")
    _, _, prereqs = text.partition(": ")
    words, word, escaped = [], [], False
    for ch in prereqs:
        if escaped:
            word.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch.isspace():
            if word:
                words.append("".join(word))
                word = []
        else:
            word.append(ch)
    if word:
        words.append("".join(word))
    return words


def compile_commands(tree):
    path = os.path.join(tree.build, "compile_commands.json")
    with open(path, encoding="utf-8") as f:
        entries = json.load(f)
    commands = {}
    for entry in entries:
        source = os.path.join(entry["directory"], entry["file"])
        place = tree.where(source)
        if place is None or place[0] != "src":
            continue  # generated sources: not ours to lint
        argv = shlex.split(entry["command"]) if "command" in entry else entry["arguments"]
        commands[place[1]] = (entry["directory"], argv)
    return commands


def unit_hash(tree, source, command, common):
    """The hash of one translation unit, or None when it cannot be told (not built)."""
    if command is None:
        return None
    directory, argv = command
    if "-o" not in argv:
        return None
    depfile = os.path.join(directory, argv[argv.index("-o") + 1] + ".d")
    try:
        with open(depfile, encoding="utf-8") as f:
            deps = depfile_paths(f.read())
    except OSError:
        return None
    inputs = {}
    for dep in deps:
        path = dep if os.path.isabs(dep) else os.path.join(directory, dep)
        place = tree.where(path)
        if place is not None and place not in inputs:
            inputs[place] = tree.content(path)
    if ("src", source) not in inputs:
        return None  # a dependency file that does not name its own source is not this build's
    lines = [common, tree.normalise(shlex.join(argv))]
    lines += sorted(f"{kind}:{rel}:{digest}" for (kind, rel), digest in inputs.items())
    return sha("\n".join(lines).encode())


def read_record(path):
    record = {}
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                fields = line.split()
                if len(fields) != 2:
                    sys.exit(f"tidy: {path}:{number}: expected 'SOURCE HASH', got {line!r}")
                record[fields[0]] = fields[1]
    except FileNotFoundError:
        pass
    return record


def hashes(args):
    tree = Tree(args.repo, args.build)
    common = sha(
        "\n".join([args.tool, args.options, tree.content(os.path.join(tree.repo, ".clang-tidy"))]).encode()
    )
    commands = compile_commands(tree)
    return {source: unit_hash(tree, source, commands.get(source), common) for source in args.sources}


def select(args):
    record = read_record(args.record)
    current = hashes(args)
    with open(args.save, "w", encoding="utf-8") as f:
        json.dump(current, f)
    chosen = [s for s in args.sources if current[s] is None or record.get(s) != current[s]]
    for source in chosen:
        print(source)
    unknown = sum(1 for s in chosen if current[s] is None)
    why = f"{len(chosen)} of {len(args.sources)} files: those whose compile command, sources, headers or checks changed since {os.path.relpath(args.record, args.repo)}"
    if unknown:
        why += f" ({unknown} not built, so linted)"
    print(f"tidy: {why}", file=sys.stderr)


def record(args):
    with open(args.passed, encoding="utf-8") as f:
        passed = {line.strip() for line in f if line.strip()}
    with open(args.save, encoding="utf-8") as f:
        before = json.load(f)
    old = read_record(args.record)
    current = hashes(args)
    lines = []
    for source in sorted(args.sources):
        h = current[source]
        if h is not None and h != before.get(source):
            print(f"tidy: {source} changed while clang-tidy ran: not recorded", file=sys.stderr)
        elif h is not None and (source in passed or old.get(source) == h):
            lines.append(f"{source} {h}\n")
    temporary = args.out + ".new"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(HEADER)
        f.writelines(lines)
    os.replace(temporary, args.out)
    print(f"tidy: {len(lines)} of {len(args.sources)} files recorded in {args.out}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["select", "record"])
    parser.add_argument("--repo", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    parser.add_argument("--build", required=True)
    parser.add_argument("--record", required=True)
    parser.add_argument("--tool", required=True, help="clang-tidy --version's output")
    parser.add_argument("--options", required=True, help="the options scripts/tidy passes")
    parser.add_argument("--save", required=True, help="where select keeps every source's hash for record")
    parser.add_argument("--passed", help="record: a file listing the sources that just passed")
    parser.add_argument("--out", help="record: the record to write")
    parser.add_argument("sources", nargs="*")
    args = parser.parse_intermixed_args()
    if args.mode == "record" and not (args.passed and args.out):
        parser.error("record needs --passed and --out")
    select(args) if args.mode == "select" else record(args)


if __name__ == "__main__":
    main()
