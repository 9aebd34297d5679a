#!/usr/bin/env python3
"""Writes the interface record of TorchTitan as the Neuron fork (aws-neuron/torchtitan-neuron)
builds on it, read from one revision of pytorch/torchtitan (docs/upstream.md): the training entry
point's command line (every `--section.field` tyro makes of the config dataclasses, with types,
defaults, choices, the bool `--x`/`--no_x` pair), how `--module/--config` select a config, the
launcher (run_train.sh) and the Slurm template, the step line, the checkpoint layout and the
conversion scripts' flags. Facts only: help strings, docstrings and code are never copied.
Python 3 standard library only.

  extract_torchtitan.py --repo DIR --rev REV --release NAME --out FILE [--check]

What the fork changes is not readable here: the record lists it under torchtitan.not_seen.
Refuses (exit 2, nothing written) when a file or fact is missing at that revision; --check exits 1
when FILE differs from what the sources give."""

import ast
import re
import sys


from argparse_facts import ArgparseReader  # noqa: E402
from config_facts import ConfigReader  # noqa: E402
from gitsrc import ExtractError, GitSource  # noqa: E402
from log_facts import LogReader  # noqa: E402
from record_io import arguments, deliver  # noqa: E402
from shell_words import commands  # noqa: E402

FORMAT = 1
EXTRACTED_BY = "tools/upstream-interface/extract_torchtitan.py"
REPOSITORY = "https://github.com/pytorch/torchtitan"
PACKAGE = "torchtitan-neuron"
TRAIN = "torchtitan/train.py"
TRAINER = "torchtitan/trainer.py"
MANAGER = "torchtitan/config/manager.py"
METRICS = "torchtitan/components/metrics.py"
LOGGING = "torchtitan/tools/logging.py"
UTILS = "torchtitan/tools/utils.py"
DCP = "torchtitan/components/checkpointer/dcp.py"
REGISTRIES = ["torchtitan/models/llama3/config_registry.py", "torchtitan/models/qwen3/config_registry.py"]
CONVERTERS = ["scripts/checkpoint_conversion/convert_from_hf.py", "scripts/checkpoint_conversion/convert_to_hf.py"]
RUN_TRAIN = "run_train.sh"
SLURM = "multinode_trainer.slurm"

# What the public sources of pytorch/torchtitan cannot say about the fork (its source is not
# readable here): to be asked of the installed trainer (`--help`) on a cluster.
NOT_SEEN = [
    "the upstream commit the fork 0.2.2+neuron.1 is based on (upstream's version file reads 0.2.2 "
    "from 2026-02-20 to the newest commit read)",
    "flags the fork adds, removes or renames (its own config sections, e.g. Neuron compile options)",
    "the fork's run_train.sh: its multi-node variables (the Neuron docs name RDZV_ENDPOINT) and defaults",
    "the fork's config registries (torchtitan_neuron.models.*): their batch, sequence length, steps",
    "whether the fork's checkpoint load keeps the pre-2026-07-22 initial-load rule (HF load only when "
    "checkpoint.folder does not exist)",
    "whether the conversion scripts know the fork's model names and flavors",
]


def _dashed(name):
    return name.replace("_", "-")


def _names(dotted):
    """A field's option strings: tyro takes `_` and `-` alike after the section."""
    out = ["--" + dotted]
    if _dashed(dotted) != dotted:
        out.append("--" + _dashed(dotted))
    return out


def _no_names(dotted):
    section, _, leaf = dotted.rpartition(".")
    stem = (section + ".") if section else ""
    out = ["--" + stem + "no_" + leaf, "--" + stem + "no-" + _dashed(leaf)]
    if _dashed(stem) != stem:
        out.append("--" + _dashed(stem) + "no-" + _dashed(leaf))
    return list(dict.fromkeys(out))


def _flag(names, dest, action, kind, default, choices, required=False):
    return {"names": names, "dest": dest, "action": action, "type": kind, "required": required,
            "default": default, "nargs": None, "choices": choices}


def train_flags(fields):
    """The entry point's flags in the argparse-shaped form the core checks arguments with."""
    flags = [_flag(["--module"], "module", "store", "str", None, None, True),
             _flag(["--config"], "config", "store", "str", None, None, True)]
    for f in fields:
        if f["type"] == "bool" and not f["optional"]:
            flags.append(_flag(_names(f["name"]), f["name"], "store_true", None, f["default"], None))
            flags.append(_flag(_no_names(f["name"]), f["name"], "store_false", None, f["default"], None))
            continue
        kind = f["type"]
        if f["optional"] or kind.startswith("list"):
            kind = "other:" + kind.removeprefix("other:") + (" | None" if f["optional"] else "")
        flags.append(_flag(_names(f["name"]), f["name"], "store", kind, f["default"], f["choices"]))
    return flags


def _line_of(src, path, pattern):
    for number, line in enumerate(src.read(path).splitlines(), 1):
        if re.search(pattern, line):
            return f"{path}:{number}"
    raise ExtractError(f"{path}: nothing matches {pattern!r}: the fact cannot be read at this revision")


def config_selection(src):
    text = src.read(MANAGER)
    for needed in ('"--module="', '"--config="', "config_registry"):
        if needed not in text:
            raise ExtractError(f"{MANAGER}: no {needed}: --module/--config selection not found")
    tree = ast.parse(text)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "tyro.cli"]
    if len(calls) != 1:
        raise ExtractError(f"{MANAGER}: {len(calls)} tyro.cli calls; exactly one expected")
    keywords = {k.arg for k in calls[0].keywords}
    return {
        "flags": ["--module", "--config"],
        "both_required": True,
        "forms": ["--module M", "--module=M"],
        # any importable module (cfd67d392): tried as M.config_registry, then as M itself
        "fully_qualified_module": 'f"{module_name}.config_registry", module_name' in text,
        "registry_attribute_tried_first": ".config_registry",
        "source": _line_of(src, MANAGER, r'arg\.startswith\("--module="\)'),
        "parser": "tyro.cli",
        "parser_source": f"{MANAGER}:{calls[0].lineno}",
        "unknown_args_returned": "return_unknown_args" in keywords,
    }


def cli_rules(selection):
    return {
        "strict": not selection["unknown_args_returned"],
        "unknown_flag_exit": 2,
        "exit_source": "tyro reports a parse error and exits 2, as argparse does",
        "underscore_hyphen_equivalent": True,
        "bool_forms": ["--S.F", "--S.no_F", "--S.no-F"],
        "bool_value_refused": True,
        "bool_source": "docs/debugging.md: Overriding Boolean Flags from Config via CLI",
        "list_separator": ",",
        "list_source": f"{MANAGER}: list_str_rule",
        "value_forms": ["--S.F V", "--S.F=V"],
    }


def launcher(src):
    text = src.read(RUN_TRAIN)
    defaults = dict(re.findall(r'^(?:export )?([A-Z_]+)=\$\{\1:-"?([^"}]*)"?\}', text, re.M))
    runs = [c.words for c in commands(text, RUN_TRAIN) if "torchrun" in c.words]
    if len(runs) != 1:
        raise ExtractError(f"{RUN_TRAIN}: {len(runs)} torchrun commands; exactly one expected")
    command = runs[0][runs[0].index("torchrun"):]
    if "-m" not in command or command[command.index("-m") + 1] != "torchtitan.train":
        raise ExtractError(f"{RUN_TRAIN}: torchrun does not run -m torchtitan.train")
    slurm = next((line.strip() for line in src.read(SLURM).splitlines() if line.strip().startswith("srun torchrun")),
                 None)
    if slurm is None:
        raise ExtractError(f"{SLURM}: no `srun torchrun` line")
    return {
        "path": RUN_TRAIN,
        "env_defaults": {k: v for k, v in defaults.items() if k in ("NGPU", "LOG_RANK", "MODULE", "CONFIG")},
        "nproc_per_node_from": "NGPU",
        "command": command,
        "entry": "-m torchtitan.train",
        "rank_prefix": "[rank<N>]: (torchrun --role rank --tee 3; --local-ranks-filter picks the ranks shown)",
        "slurm_template": {"path": SLURM, "command": slurm.split()},
    }


def step_line(src):
    reader = LogReader(src)
    fmt = reader.log_format(METRICS, "MetricsProcessor.log", prefix="{}step: ", callee="logger.info")
    fmt["call"] = step_call(src, reader)
    formatter = re.search(r'logging\.Formatter\(\s*"([^"]+)"', src.read(LOGGING))
    if formatter is None:
        raise ExtractError(f"{LOGGING}: no logging.Formatter format")
    colors = {}
    tree = ast.parse(src.read(UTILS))
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Color"), None)
    if cls is None:
        raise ExtractError(f"{UTILS}: no class Color")
    for stmt in cls.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant):
            colors[stmt.targets[0].id] = stmt.value.value
    return fmt, {
        "line_format": formatter.group(1),
        "line_format_source": _line_of(src, LOGGING, r"logging\.Formatter\("),
        "colors": colors,
        "colors_source": f"{UTILS}: class Color",
        "colors_off_with": "--metrics.disable_color_printing",
        "step_key": f"{METRICS}#step",
    }


def step_call(src, reader):
    """How the trainer calls MetricsProcessor.log (the log format's `call`): the argument of each
    parameter, the early return that skips it (`if not should_log: return`), and whether the step
    counter moves before the step runs (`self.step += 1` in Trainer.train's loop, before
    `self.train_step(...)`), i.e. whether the logged step counts the step just done."""
    params = reader._params(METRICS, "MetricsProcessor.log")
    module = reader.repo.module(TRAINER)
    step_fn = reader.function(module, "Trainer.train_step")
    sites = [n for n in ast.walk(step_fn) if isinstance(n, ast.Call)
             and ast.unparse(n.func).endswith("metrics_processor.log")]
    if len(sites) != 1:
        raise ExtractError(f"{TRAINER}: {len(sites)} metrics_processor.log calls in Trainer.train_step; one expected")
    args, keywords = reader._bound(sites[0], params)
    arguments = {p: ast.unparse(a) for p, a in zip(params, args)}
    arguments.update({k: ast.unparse(v) for k, v in keywords.items()})
    when = reader._conditions(module, sites[0], step_fn)
    assigned = {t.id: ast.unparse(n.value) for n in ast.walk(step_fn) if isinstance(n, ast.Assign)
                for t in n.targets if isinstance(t, ast.Name)}
    for stmt in step_fn.body:
        if stmt.lineno >= sites[0].lineno:
            break
        if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.UnaryOp) and isinstance(stmt.test.op, ast.Not) \
                and any(isinstance(b, ast.Return) for b in stmt.body):
            name = ast.unparse(stmt.test.operand)
            when.append(assigned.get(name, name))
    counter = arguments.get(params[0])
    train = reader.function(module, "Trainer.train")
    bumps = [n for n in ast.walk(train) if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add)
             and ast.unparse(n.target) == counter]
    runs = [n for n in ast.walk(train) if isinstance(n, ast.Call) and ast.unparse(n.func) == "self.train_step"]
    if len(bumps) != 1 or len(runs) != 1:
        raise ExtractError(f"{TRAINER}: Trainer.train moves {counter} {len(bumps)} times and runs train_step "
                           f"{len(runs)} times; once each expected")
    moment = "before" if (bumps[0].lineno, bumps[0].col_offset) < (runs[0].lineno, runs[0].col_offset) else "after"
    return {"path": TRAINER, "function": "Trainer.train_step", "arguments": arguments, "when": when,
            "counted": {counter: moment}}


def checkpoint_layout(src):
    return {
        "folder": "<dump_folder>/<checkpoint.folder>",
        "step_dir": "step-{step}",
        "step_dir_source": _line_of(src, DCP, r'f"step-\{step\}"'),
        "complete_when": [".metadata", "model.safetensors.index.json"],
        "complete_source": _line_of(src, DCP, r'"\.metadata"'),
        "resume": "highest complete step-N",
        "initial_load": "when checkpoint.folder has no complete step (load_step == -1)",
        "initial_load_source": _line_of(src, DCP, r"if load_step == -1:"),
        "initial_load_before_7463c1646": "only when checkpoint.folder does not exist: an existing folder "
                                         "with no complete step started from random weights (fixed 2026-07-22)",
        "keep_latest_k_source": _line_of(src, DCP, r"self\.keep_latest_k > 0"),
    }


def build_record(src, release):
    reader = ConfigReader(src)
    narrowed, varies = reader.registry_classes(REGISTRIES, "Trainer.Config")
    module, root = reader.class_at(TRAINER, "Trainer.Config")
    fields = reader.fields(module, root, narrowed)
    if not fields:
        raise ExtractError(f"{TRAINER}: Trainer.Config gives no command-line field")
    selection = config_selection(src)
    argparse_reader = ArgparseReader(src)
    # tyro builds its parser without argparse's prefix matching: `--training.step` is unknown.
    scripts = {TRAIN: {"parse": "strict" if not selection["unknown_args_returned"] else "known",
                       "parser": MANAGER, "allow_abbrev": False, "flags": train_flags(fields)}}
    src.read(TRAIN)  # the entry point must exist at this revision
    for path in CONVERTERS:
        scripts[path] = argparse_reader.script(path)
    step_format, log = step_line(src)
    return {
        "format": FORMAT,
        "package": PACKAGE,
        "repository": REPOSITORY,
        "release": release,
        "commit": src.commit,
        "extracted_by": EXTRACTED_BY,
        "scripts": scripts,
        "launchers": {},
        "log_formats": {log["step_key"]: step_format},
        "torchtitan": {
            "config_selection": selection,
            "cli": cli_rules(selection),
            "fields": fields,
            "narrowed_by_registries": {k: f"{m.path}:{c.lineno}" for k, (m, c) in sorted(narrowed.items())},
            "varies_by_config": varies,
            "launcher": launcher(src),
            "log": log,
            "checkpoint": checkpoint_layout(src),
            "not_seen": NOT_SEEN,
        },
    }


def main(argv):
    args = arguments("extract_torchtitan.py", "Write TorchTitan's interface record.",
                     "git repository of pytorch/torchtitan", "revision to read (a commit)").parse_args(argv)
    return deliver("extract_torchtitan.py", lambda: build_record(GitSource(args.repo, args.rev), args.release),
                   args.out, args.check, args.rev)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
