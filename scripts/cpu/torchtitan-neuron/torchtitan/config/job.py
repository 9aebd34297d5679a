"""The configuration tree, built from the record (interfaces/torchtitan-neuron-2.33.json): every
field the record lists, with its recorded default, as `config.<section>.<field>`. A config
registry function returns a TrainerConfig (trainer_config below); the command line then
overrides it (manager.py). Fields the record does not list cannot be set, by a registry or a flag."""

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

RECORD_NAME = "torchtitan-neuron-2.33.json"


def record_path() -> Path:
    """The record: TRNSLURM_TORCHTITAN_RECORD, else the repository's interfaces/ three levels up
    from this stand-in's root (scripts/cpu/torchtitan-neuron)."""
    env = os.environ.get("TRNSLURM_TORCHTITAN_RECORD")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[5] / "interfaces" / RECORD_NAME


_RECORD = None


def record() -> dict:
    global _RECORD
    if _RECORD is None:
        path = record_path()
        try:
            _RECORD = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise SystemExit(f"torchtitan (CPU stand-in): cannot read the interface record {path}: {e}")
    return _RECORD


def fields() -> dict:
    """{dotted name: the record's field}, in the record's order."""
    return {f["name"]: f for f in record()["torchtitan"]["fields"]}


class Section:
    """One config section: attribute access to its fields and sub-sections."""

    def __init__(self):
        self.__dict__["_values"] = {}

    def __getattr__(self, name):
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self.__dict__["_values"][name] = value


@dataclass
class ModelSpec:
    """What upstream's model_spec carries (not a command-line field): the model and its flavor."""
    name: str
    flavor: str


@dataclass
class OptimizerSettings:
    """Set in Python by a registry, as upstream does since the optimizer flags left the CLI."""
    lr: float = 8e-4
    eps: float = 1e-8
    weight_decay: float = 0.1
    betas: tuple = (0.9, 0.95)


@dataclass
class TrainerConfig:
    model_spec: ModelSpec
    optimizer_settings: OptimizerSettings = field(default_factory=OptimizerSettings)
    root: Section = field(default_factory=Section)

    def set(self, dotted: str, value):
        section = self.root
        parts = dotted.split(".")
        for part in parts[:-1]:
            if part not in section._values:
                setattr(section, part, Section())
            section = getattr(section, part)
        setattr(section, parts[-1], value)

    def get(self, dotted: str):
        value = self.root
        for part in dotted.split("."):
            value = getattr(value, part)
        return value

    def __getattr__(self, name):
        if name in ("model_spec", "optimizer_settings", "root"):
            raise AttributeError(name)
        return getattr(self.root, name)


def _default(f):
    default = f["default"]
    if isinstance(default, dict) and "expr" in default:
        return None  # not a literal upstream; the stand-in never reads these fields
    return default


def trainer_config(model: str, flavor: str, lr: float = 8e-4, **overrides) -> TrainerConfig:
    """A TrainerConfig with the record's defaults and a registry's settings: `overrides` are
    dotted field names written with `__` for the dot (training__steps=10)."""
    config = TrainerConfig(ModelSpec(model, flavor), OptimizerSettings(lr=lr))
    known = fields()
    for name, f in known.items():
        config.set(name, _default(f))
    for key, value in overrides.items():
        name = key.replace("__", ".")
        if name not in known:
            raise ValueError(f"config registry sets {name!r}, which is not a field of the record")
        config.set(name, value)
    return config
