#!/usr/bin/env python3
"""Writes the interface record of an upstream release (docs/upstream.md): the command-line
interface of the scripts trnslurm's recipes run, what their launcher scripts pass them, and the
progress lines they print, read from the sources of one git revision. Facts only: help strings
and code are never copied. Python 3 standard library only.

  extract.py --repo DIR --rev REV --release NAME --out FILE [--check]
             [--package NAME --repository URL --script PATH... --launcher PATH|GLOB...
              --log PATH:FUNCTION[:LABEL:PREFIX]...]

Without --script/--launcher/--log, the package's built-in list is used (neuronx-distributed).
Refuses (exit 2, nothing written) when a path is missing at that revision or a fact cannot be
read; --check exits 1 when FILE differs from what the sources give."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from argparse_facts import ArgparseReader  # noqa: E402
from gitsrc import ExtractError, GitSource  # noqa: E402
from launcher_facts import LauncherReader  # noqa: E402
from log_facts import LogReader  # noqa: E402
from record_io import arguments as record_arguments, deliver  # noqa: E402

FORMAT = 1
EXTRACTED_BY = "tools/upstream-interface/extract.py"
LLAMA = "examples/training/llama"
DEFAULTS = {
    "neuronx-distributed": {
        "repository": "https://github.com/aws-neuron/neuronx-distributed",
        "scripts": [
            f"{LLAMA}/tp_zero1_llama_hf_pretrain/tp_zero1_llama_hf_pretrain.py",
            f"{LLAMA}/tp_pp_llama_hf_pretrain/run_llama_nxd.py",
            f"{LLAMA}/convert_checkpoints.py",
        ],
        "launchers": [
            f"{LLAMA}/tp_zero1_llama_hf_pretrain/*.sh",
            f"{LLAMA}/tp_pp_llama_hf_pretrain/run_*.sh",
        ],
        "logs": [
            f"{LLAMA}/tp_zero1_llama_hf_pretrain/logger.py:Logger.log",
            f"{LLAMA}/tp_zero1_llama_hf_pretrain/tp_zero1_llama_hf_pretrain.py:train_llama:epoch_begin:Epoch {{}} begin",
            f"{LLAMA}/tp_zero1_llama_hf_pretrain/tp_zero1_llama_hf_pretrain.py:train_llama:epoch_end:Epoch {{}} step",
            f"{LLAMA}/tp_pp_llama_hf_pretrain/logger.py:Logger.log",
            f"{LLAMA}/tp_pp_llama_hf_pretrain/run_llama_nxd.py:train_llama:epoch_begin:Epoch {{}}",
            f"{LLAMA}/tp_pp_llama_hf_pretrain/run_llama_nxd.py:train_llama:finished:Training finished",
        ],
    },
}


def parse_log_spec(spec):
    parts = spec.split(":", 3)
    if len(parts) not in (2, 4) or not all(parts[:2]):
        raise ExtractError(f"--log {spec!r}: expected PATH:FUNCTION or PATH:FUNCTION:LABEL:PREFIX")
    return parts[0], parts[1], (parts[2] if len(parts) == 4 else None), (parts[3] if len(parts) == 4 else None)


def launcher_paths(src, patterns):
    paths = []
    for pattern in patterns:
        found = src.glob(pattern) if any(c in pattern for c in "*?[") else [pattern]
        if not found:
            raise ExtractError(f"{pattern}: no file matches at {src.rev} ({src.commit[:12]})")
        for path in found:
            src.read(path)  # refuses a missing path
            if path not in paths:
                paths.append(path)
    return paths


def build_record(src, package, repository, release, scripts, launchers, logs):
    argparse_reader = ArgparseReader(src)
    script_facts = {path: argparse_reader.script(path) for path in scripts}
    launcher_reader = LauncherReader(src, script_facts)
    launcher_facts = {path: launcher_reader.launcher(path) for path in launcher_paths(src, launchers)}
    log_reader = LogReader(src)
    log_facts = {}
    for spec in logs:
        path, function, label, prefix = parse_log_spec(spec)
        key = path if label is None else f"{path}#{label}"
        if key in log_facts:
            raise ExtractError(f"--log {spec!r}: {key} is recorded twice; give each line its own LABEL")
        log_facts[key] = log_reader.log_format(path, function, prefix)
    return {
        "format": FORMAT,
        "package": package,
        "repository": repository,
        "release": release,
        "commit": src.commit,
        "extracted_by": EXTRACTED_BY,
        "scripts": script_facts,
        "launchers": launcher_facts,
        "log_formats": log_facts,
    }


def arguments(argv):
    p = record_arguments("extract.py", "Write an upstream interface record.",
                         "git repository (bare or not) holding the sources", "revision to read: commit, tag or branch")
    p.add_argument("--package", default="neuronx-distributed", help="package name (default: %(default)s)")
    p.add_argument("--repository", help="public URL of the repository (default: the package's)")
    p.add_argument("--script", action="append", default=[], help="a Python script to record (repeatable)")
    p.add_argument("--launcher", action="append", default=[], help="a launcher .sh or a glob (repeatable)")
    p.add_argument("--log", action="append", default=[], help="PATH:FUNCTION[:LABEL:PREFIX] (repeatable)")
    return p.parse_args(argv)


def resolve_lists(args):
    defaults = DEFAULTS.get(args.package)
    if not (args.script or args.launcher or args.log):
        if defaults is None:
            raise ExtractError(f"no built-in list for package {args.package!r}: give --script/--launcher/--log")
        return defaults["scripts"], defaults["launchers"], defaults["logs"]
    return args.script, args.launcher, args.log


def main(argv):
    args = arguments(argv)

    def build():
        scripts, launchers, logs = resolve_lists(args)
        repository = args.repository or DEFAULTS.get(args.package, {}).get("repository")
        if not repository:
            raise ExtractError("--repository is required for a package without built-in defaults")
        src = GitSource(args.repo, args.rev)
        return build_record(src, args.package, repository, args.release, scripts, launchers, logs)

    return deliver("extract.py", build, args.out, args.check, args.rev)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
