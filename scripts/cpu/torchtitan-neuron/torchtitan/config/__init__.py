"""The trainer's configuration: the record's fields with their defaults, what a config registry
sets, then the command line (torchtitan/config/manager.py)."""

from torchtitan.config.job import ModelSpec, TrainerConfig, trainer_config

__all__ = ["ModelSpec", "TrainerConfig", "trainer_config"]
