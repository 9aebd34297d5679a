#!/usr/bin/env python3
"""Writes the interface record of an upstream release (docs/upstream.md): the command-line
interface of the scripts trnslurm's recipes run, what their launcher scripts pass them, and the
progress lines they print, read from the sources of one git revision. Facts only: help strings
and code are never copied. Python 3 standard library only.

  extract.py --repo DIR --rev REV --release NAME --out FILE [--check]
             [--package NAME --repository URL --script PATH... --launcher PATH|GLOB...
              --log PATH:FUNCTION[:LABEL:PREFIX]... --log-call LOGPATH:PATH:FUNCTION...]

A --log-call records, beside the line LOGPATH's Logger.log prints, how FUNCTION in PATH calls it:
which argument feeds each parameter, under which conditions, and whether each counter among them
is moved before or after the call (whether a logged step counts the step just done).

Without --script/--launcher/--log, the package's built-in list is used (neuronx-distributed).
Refuses (exit 2, nothing written) when a path is missing at that revision or a fact cannot be
read; --check exits 1 when FILE differs from what the sources give."""

import sys


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
        "log_calls": [
            f"{LLAMA}/tp_zero1_llama_hf_pretrain/logger.py:"
            f"{LLAMA}/tp_zero1_llama_hf_pretrain/tp_zero1_llama_hf_pretrain.py:train_llama",
            f"{LLAMA}/tp_pp_llama_hf_pretrain/logger.py:{LLAMA}/tp_pp_llama_hf_pretrain/run_llama_nxd.py:train_llama",
        ],
    },
}


def parse_log_spec(spec):
    parts = spec.split(":", 3)
    if len(parts) not in (2, 4) or not all(parts[:2]):
        raise ExtractError(f"--log {spec!r}: expected PATH:FUNCTION or PATH:FUNCTION:LABEL:PREFIX")
    return parts[0], parts[1], (parts[2] if len(parts) == 4 else None), (parts[3] if len(parts) == 4 else None)


def parse_log_call(spec):
    parts = spec.split(":")
    if len(parts) != 3 or not all(parts):
        raise ExtractError(f"--log-call {spec!r}: expected LOGPATH:PATH:FUNCTION")
    return parts


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


def build_record(src, package, repository, release, scripts, launchers, logs, log_calls=()):
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
    for spec in log_calls:
        log_path, path, function = parse_log_call(spec)
        fmt = log_facts.get(log_path)
        if fmt is None:
            raise ExtractError(f"--log-call {spec!r}: {log_path} is not a recorded --log line")
        if "call" in fmt:
            raise ExtractError(f"--log-call {spec!r}: {log_path} already has its call recorded")
        fmt["call"] = log_reader.log_call(log_path, fmt["function"], path, function)
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
    p.add_argument("--log-call", action="append", default=[], dest="log_call",
                   help="LOGPATH:PATH:FUNCTION: how FUNCTION calls LOGPATH's logger (repeatable)")
    return p.parse_args(argv)


def resolve_lists(args):
    defaults = DEFAULTS.get(args.package)
    if not (args.script or args.launcher or args.log or args.log_call):
        if defaults is None:
            raise ExtractError(f"no built-in list for package {args.package!r}: give --script/--launcher/--log")
        return defaults["scripts"], defaults["launchers"], defaults["logs"], defaults["log_calls"]
    return args.script, args.launcher, args.log, args.log_call


def main(argv):
    args = arguments(argv)

    def build():
        scripts, launchers, logs, log_calls = resolve_lists(args)
        repository = args.repository or DEFAULTS.get(args.package, {}).get("repository")
        if not repository:
            raise ExtractError("--repository is required for a package without built-in defaults")
        src = GitSource(args.repo, args.rev)
        return build_record(src, args.package, repository, args.release, scripts, launchers, logs, log_calls)

    return deliver("extract.py", build, args.out, args.check, args.rev)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
