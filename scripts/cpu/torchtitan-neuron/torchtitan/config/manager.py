"""`--module M --config F [--section.field VALUE ...]`, parsed as the record says upstream's
ConfigManager and tyro do: --module and --config both required (M a short name or any importable
module, tried with `.config_registry` first); `--S.F V` or `--S.F=V`; `_` and `-` alike; a bool is
`--S.F` / `--S.no_F` / `--S.no-F` and takes no value; list[str] comma-separated; `T | None` takes
None; no abbreviations; anything else (an unknown flag, a bad value) exits 2 with tyro-like
messages. `--help` lists the flags (what `trnslurm doctor` asks the installed trainer)."""

import difflib
import importlib
import sys

from torchtitan.config.job import TrainerConfig, record

EXIT_USAGE = 2
PROG = "torchtitan.train"


class ConfigError(Exception):
    pass


def _norm(option: str) -> str:
    return option.replace("-", "_") if option.startswith("--") else option


def _flags():
    """{normalised option: (flag, the option as the record writes it)} for the entry point."""
    script = record()["scripts"]["torchtitan/train.py"]
    table = {}
    for flag in script["flags"]:
        for name in flag["names"]:
            table.setdefault(_norm(name), (flag, name))
    return table


def _usage_error(message: str, hint: str = ""):
    print(f"usage: {PROG} --module M --config F [--section.field VALUE ...]", file=sys.stderr)
    print(f"{PROG}: error: {message}" + (f"\n  {hint}" if hint else ""), file=sys.stderr)
    sys.exit(EXIT_USAGE)


def convert(flag, value: str):
    """A word as tyro reads it for the field; ConfigError names what is wrong."""
    kind = flag["type"]
    optional = kind.startswith("other:") and kind.endswith(" | None")
    if optional:
        if value == "None":
            return None
        kind = kind[len("other:"):-len(" | None")]
    if kind.startswith("other:"):
        kind = kind[len("other:"):]
    if kind == "list[str]":
        return value.split(",")
    if kind == "int":
        try:
            out = int(value)
        except ValueError:
            raise ConfigError(f"'{value}' is not an int") from None
    elif kind == "float":
        try:
            out = float(value)
        except ValueError:
            raise ConfigError(f"'{value}' is not a float") from None
    elif kind == "str":
        out = value
    else:
        raise ConfigError(f"the CPU stand-in cannot parse a {kind} from the command line")
    if flag["choices"] and out not in flag["choices"]:
        raise ConfigError(f"'{value}' is not one of {', '.join(map(str, flag['choices']))}")
    return out


def select(args):
    """(module name, config name, the other words), as upstream's _load_config splits them."""
    module = config = None
    rest = []
    i = 0
    while i < len(args):
        arg = args[i]
        for name in ("module", "config"):
            if arg.startswith(f"--{name}="):
                value = arg.split("=", 1)[1]
                break
            if arg == f"--{name}":
                if i + 1 >= len(args):
                    raise ValueError(f"--{name} requires a value")
                i += 1
                value = args[i]
                break
        else:
            rest.append(arg)
            i += 1
            continue
        if name == "module":
            module = value
        else:
            config = value
        i += 1
    for name, value in (("module", module), ("config", config)):
        if value is None:
            raise ValueError(f"--{name} is required. Example: --module torchtitan_neuron.models.qwen3 "
                             "--config qwen3_tiny_cpu")
    return module, config, rest


def load_registry_config(module_name: str, config_name: str) -> TrainerConfig:
    from torchtitan.models import _supported_models

    candidates = ([f"torchtitan.models.{module_name}.config_registry"] if module_name in _supported_models
                  else [f"{module_name}.config_registry", module_name])
    module = None
    for candidate in candidates:
        try:
            module = importlib.import_module(candidate)
            path = candidate
            break
        except ImportError:
            continue
    if module is None:
        raise ImportError(f"Cannot import module '{module_name}' or '{module_name}.config_registry'. "
                          f"For shorthands, supported modules are: {sorted(_supported_models)}")
    fn = getattr(module, config_name, None)
    if fn is None or not callable(fn):
        available = [n for n in dir(module) if not n.startswith("_") and callable(getattr(module, n)) and n[0].islower()
                     and n not in ("trainer_config",)]
        raise ValueError(f"Config function '{config_name}' not found in {path}. "
                         f"Available config functions: {available}")
    return fn()


def print_help():
    script = record()["scripts"]["torchtitan/train.py"]
    print(f"usage: {PROG} --module M --config F [--section.field VALUE ...]\n")
    print("options (pytorch/torchtitan " + record()["commit"][:9] + ", as the CPU stand-in reads its record):")
    for flag in script["flags"]:
        kind = "" if flag["action"] != "store" else f" {flag['type']}"
        choices = f" {{{','.join(map(str, flag['choices']))}}}" if flag["choices"] else ""
        default = flag["default"]
        shown = f" (default: {default})" if not isinstance(default, dict) else ""
        print(f"  {', '.join(flag['names'])}{kind}{choices}{shown}")


def parse_args(args):
    """The config the trainer runs with; exits 2 on a command line upstream refuses."""
    if "-h" in args or "--help" in args:
        print_help()
        sys.exit(0)
    module_name, config_name, rest = select(args)
    config = load_registry_config(module_name, config_name)
    table = _flags()
    i = 0
    while i < len(rest):
        word = rest[i]
        if not word.startswith("--"):
            _usage_error(f"unrecognized arguments: {word}", "is a flag missing before it?")
        option, eq, inline = word.partition("=")
        flag, _ = table.get(_norm(option), (None, None))
        if flag is None or flag["dest"] in ("module", "config"):
            close = difflib.get_close_matches(_norm(option), list(table), n=1, cutoff=0.6)
            _usage_error(f"Unrecognized options: {option}", f"Did you mean {table[close[0]][1]}?" if close else "")
        if flag["action"] in ("store_true", "store_false"):
            if eq:
                _usage_error(f"{option}: a boolean flag takes no value ('{inline}' given); "
                             f"use {flag['names'][0]} or its --no_ form")
            config.set(flag["dest"], flag["action"] == "store_true")
            i += 1
            continue
        if eq:
            value = inline
            i += 1
        elif i + 1 < len(rest) and not (rest[i + 1].startswith("--") and len(rest[i + 1]) > 2):
            value = rest[i + 1]
            i += 2
        else:
            _usage_error(f"{option}: expected a value")
        try:
            config.set(flag["dest"], convert(flag, value))
        except ConfigError as e:
            _usage_error(f"{option}: {e}")
    return config

