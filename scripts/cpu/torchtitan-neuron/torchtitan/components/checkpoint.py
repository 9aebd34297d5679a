"""Checkpoints in upstream's layout (components/checkpointer/dcp.py at c82675eb6):
`<dump_folder>/<checkpoint.folder>/step-N/`, complete when `.metadata` (or an HF
model.safetensors.index.json) is in it; saved every `interval` steps, at step 1 with
enable_first_step_checkpoint, and at the last step (model only, in export_dtype, unless
last_save_model_only is off; HF safetensors with last_save_in_hf); keep_latest_k newest kept;
resume from the highest complete step, all initial_* options then ignored.

The files are DCP's names (`__<rank>_0.distcp` shards, `.metadata` last) but not its binary
format: Debian's torch 1.13 has no torch.distributed.checkpoint usable on Python 3.11, so the
stand-in writes torch.save shards (rank 0 the replicated model and optimizer, every rank its
dataloader state) and a `.metadata` naming them, written by rank 0 after every shard.

The initial load (HF weights) follows TRNSLURM_STANDIN_INITIAL_LOAD: `folder_missing` (default:
upstream before 7463c1646, 2026-07-22, which the fork may still have: only when the checkpoint
folder does not exist, so a folder without a complete step starts from random weights without a
word) or `no_valid_step` (c82675eb6, the recorded commit: whenever no step is complete)."""

import logging
import os
import re
import shutil
from pathlib import Path

import torch
import torch.distributed as dist

from torchtitan.tools import safetensors_io

logger = logging.getLogger()

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
FULL_KEYS = ("optimizer", "lr_scheduler", "dataloader", "train_state")


def _rank():
    return dist.get_rank() if dist.is_initialized() else 0


def _barrier():
    if dist.is_initialized():
        dist.barrier()


def write_metadata(target: Path, keys, model_only: bool):
    """`.metadata`, last: what makes step-N complete. Names the shards and the keys they hold."""
    files = sorted(p.name for p in target.glob("__*_0.distcp"))
    tmp = target / "metadata.tmp"  # torch.save refuses a file name starting with '.'
    torch.save({"writer": "torchtitan CPU stand-in", "files": files, "keys": list(keys), "model_only": model_only},
               tmp)
    tmp.replace(target / ".metadata")


def find_load_step(folder: Path) -> int:
    if not folder.is_dir():
        return -1
    steps = []
    for entry in folder.iterdir():
        match = re.search(r"step-(\d+)", entry.name)
        if match and ((entry / ".metadata").is_file() or (entry / "model.safetensors.index.json").is_file()):
            steps.append(int(match.group(1)))
    return max(steps) if steps else -1


class CheckpointManager:
    def __init__(self, config, model, optimizer, scheduler, dataset, spec):
        c = config.checkpoint
        self.c, self.model, self.optimizer, self.scheduler, self.dataset, self.spec = c, model, optimizer, scheduler, \
            dataset, spec
        self.enable = c.enable
        self.folder = Path(config.dump_folder) / c.folder
        self.hf_assets_path = config.hf_assets_path
        if c.async_mode != "disabled":
            logger.info(f"checkpoint.async_mode {c.async_mode}: the CPU stand-in saves synchronously")

    # ---- saving ------------------------------------------------------------------------------------
    def _should_save(self, step, last_step):
        if not self.enable or self.c.load_only:
            return False
        return (step == 1 and self.c.enable_first_step_checkpoint) or last_step or step % self.c.interval == 0

    def save(self, step: int, last_step: bool = False, train_state=None) -> bool:
        if not self._should_save(step, last_step):
            return False
        target = self.folder / f"step-{step}"
        if _rank() == 0:
            if target.exists():
                shutil.rmtree(target)
            target.mkdir(parents=True)
        _barrier()
        model_state = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        if last_step and self.c.last_save_model_only:
            dtype = DTYPES[self.c.export_dtype]
            states = {k: v.to(dtype) for k, v in model_state.items()}
            logger.info(f"Saving a model only checkpoint in {dtype} at last step, step {step}.")
            if self.c.last_save_in_hf:
                if _rank() == 0:
                    from torchtitan.models.decoder import to_hf
                    safetensors_io.save_dir(to_hf(states, self.spec.args), target)
                _barrier()
                return True
            self._write(target, {"model": states} if _rank() == 0 else {}, keys=sorted(states), model_only=True)
        else:
            if last_step:
                logger.info(f"Saving a full checkpoint at last step, step {step}.")
            shard = {"dataloader": self.dataset.state_dict()}
            if _rank() == 0:
                shard.update(model=model_state, optimizer=self.optimizer.state_dict(),
                             lr_scheduler=self.scheduler.state_dict(), train_state=train_state or {"step": step})
            self._write(target, shard, keys=sorted(model_state) + list(FULL_KEYS), model_only=False)
        self._purge()
        return True

    def _write(self, target: Path, shard: dict, keys, model_only: bool):
        rank = _rank()
        if shard:
            tmp = target / f".__{rank}_0.distcp.tmp"
            torch.save(shard, tmp)
            tmp.replace(target / f"__{rank}_0.distcp")
        _barrier()
        if rank == 0:
            write_metadata(target, keys, model_only)
            logger.info(f"Finished saving the checkpoint in {target}.")
        _barrier()

    def _purge(self):
        k = self.c.keep_latest_k
        if k <= 0 or _rank() != 0:
            return
        found = sorted((int(m.group(1)), p) for p in self.folder.iterdir() if (m := re.search(r"step-(\d+)", p.name)))
        for _, path in found[:-k]:
            shutil.rmtree(path, ignore_errors=True)

    # ---- loading ------------------------------------------------------------------------------------
    def load(self) -> int:
        """The step to continue after (0 for a fresh start or an initial load)."""
        if not self.enable:
            return 0
        rule = os.environ.get("TRNSLURM_STANDIN_INITIAL_LOAD", "folder_missing")
        if rule not in ("folder_missing", "no_valid_step"):
            raise ValueError(f"TRNSLURM_STANDIN_INITIAL_LOAD={rule!r}: folder_missing or no_valid_step")
        has_folder = self.folder.exists()
        explicit = self.c.load_step
        if explicit != -1 and not has_folder:
            raise FileNotFoundError(f"--checkpoint.load_step={explicit} not found because checkpoint.folder "
                                    f"{self.folder} does not exist")
        load_step = (find_load_step(self.folder) if explicit == -1 else explicit) if has_folder else -1
        if load_step == -1:
            if has_folder and rule == "folder_missing":
                return 0  # upstream before 2026-07-22: no initial load, no message
            return self._initial_load()
        target = self.folder / f"step-{load_step}"
        if not target.is_dir():
            raise FileNotFoundError(f"--checkpoint.load_step={load_step} not found at {target}")
        logger.info(f"Loading the checkpoint from {target}.")
        model_only = load_step == 0
        self._read(target, model_only)
        return load_step

    def _initial_load(self) -> int:
        c = self.c
        if c.initial_load_in_hf:
            source = c.initial_load_path or self.hf_assets_path
            if not Path(source).is_dir():
                raise ValueError(f"Checkpoint.initial_load_path is invalid: {source}" if c.initial_load_path else
                                 "model.hf_assets_path is being used to load HF weights but the path is not valid")
            logger.info(f"Loading HF safetensors from {source}")
            from torchtitan.models.decoder import from_hf
            state = from_hf(safetensors_io.load_dir(source), self.spec.args)
            self.model.load_state_dict({k: v.float() for k, v in state.items()})
            return 0
        if c.initial_load_path:
            if not Path(c.initial_load_path).is_dir():
                raise ValueError(f"Checkpoint.initial_load_path is invalid: {c.initial_load_path}")
            logger.info(f"Loading the checkpoint from {c.initial_load_path}.")
            self._read(Path(c.initial_load_path), model_only=c.initial_load_model_only)
            return 0
        logger.info("No checkpoint was provided, this is a fresh start.")
        return 0

    def _read(self, target: Path, model_only: bool):
        meta = torch.load(target / ".metadata") if (target / ".metadata").exists() else None
        if meta is None:
            raise RuntimeError(f"{target}: an HF checkpoint (last_save_in_hf) cannot be resumed: no .metadata")
        exclude = set(self.c.exclude_from_loading or [])
        main = torch.load(target / "__0_0.distcp")
        self.model.load_state_dict({k: v.float() for k, v in main["model"].items()})
        if model_only:
            return
        missing = [k for k in FULL_KEYS if k not in exclude and k not in meta["keys"]]
        if missing:
            raise RuntimeError(f"{target} holds the model only (a last_save_model_only save) and cannot be resumed: "
                               f"missing {', '.join(missing)} (use --checkpoint.no_last_save_model_only to keep "
                               "the last save resumable)")
        if "optimizer" not in exclude:
            self.optimizer.load_state_dict(main["optimizer"])
        if "lr_scheduler" not in exclude:
            self.scheduler.load_state_dict(main["lr_scheduler"])
        if "dataloader" not in exclude:
            mine = target / f"__{_rank()}_0.distcp"
            if not mine.exists():
                raise RuntimeError(f"{target}: no dataloader state for rank {_rank()} (saved with fewer ranks; "
                                   "add dataloader to --checkpoint.exclude_from_loading)")
            self.dataset.load_state_dict(torch.load(mine)["dataloader"])
