"""`python -m torchtitan.train --module M --config F [--section.field VALUE ...]` on CPUs, under
torchrun (gloo) or alone. What upstream's trainer does that trnslurm relies on: parallel degrees
(replicate x shard x cp x tp x pp = world size, shard -1 = the rest), global batch = local x DP x
accumulation (a multiple, or refused), steps as optimizer steps, the LR schedule, the step line at
step 1 and every log_freq, checkpoints and resume, the HF initial load. Deliberately different:
the model is replicated on every rank (TP, CP and PP only shape the rank layout and which data a
rank reads: ranks of one DP group read the same batches), and gradients are averaged over all
ranks, which equals DP averaging since replicas of a DP group hold identical gradients.

Stand-in-only controls (environment): TRNSLURM_STANDIN_STEP_DELAY (seconds slept per step),
TRNSLURM_STANDIN_FAIL_AFTER=N (every rank exits 1 right after step N and its checkpoint: a crash),
TRNSLURM_STANDIN_TINY_MODEL=1, TRNSLURM_STANDIN_INITIAL_LOAD, TRNSLURM_STANDIN_LOG (JSON-lines
events: start, step, checkpoint, end), TRNSLURM_TORCHTITAN_RECORD (another record)."""

import datetime
import json
import logging
import os
import sys
import time

import torch
import torch.distributed as dist

from torchtitan.components import lr_scheduler
from torchtitan.components.checkpoint import CheckpointManager
from torchtitan.components.metrics import MetricsProcessor
from torchtitan.components.tokenizer import HuggingFaceTokenizer
from torchtitan.config.manager import parse_args
from torchtitan.hf_datasets.text_datasets import HuggingFaceTextDataset
from torchtitan.tools.logging import init_logger

logger = logging.getLogger()


def event(name, **fields):
    path = os.environ.get("TRNSLURM_STANDIN_LOG", "")
    if path and int(os.environ.get("RANK", "0")) == 0:
        with open(path, "a") as f:
            f.write(json.dumps({"event": name, "time": round(time.time(), 3), **fields}) + "\n")


class ParallelDims:
    def __init__(self, p, world):
        self.dp_replicate, self.cp, self.tp, self.pp = (p.data_parallel_replicate_degree, p.context_parallel_degree,
                                                        p.tensor_parallel_degree, p.pipeline_parallel_degree)
        for d in (self.dp_replicate, self.cp, self.tp, self.pp):
            if d < 1:
                raise ValueError("Parallelism degree should be >= 1, except for dp_shard")
        shard = p.data_parallel_shard_degree
        if shard != -1 and shard < 1:
            raise ValueError("dp_shard must -1 or >=1.")
        self.dp_shard = world // (self.dp_replicate * self.cp * self.tp * self.pp) if shard < 0 else shard
        if self.dp_shard < 1 or self.dp_replicate * self.dp_shard * self.cp * self.tp * self.pp != world:
            raise ValueError(f"Invalid parallel dims: dp_replicate({self.dp_replicate}) * dp_shard({self.dp_shard}) * "
                             f"cp({self.cp}) * tp({self.tp}) * pp({self.pp}) != WORLD_SIZE({world})")
        self.dp = self.dp_replicate * self.dp_shard
        self.non_dp = self.cp * self.tp * self.pp

    def dp_rank(self, rank):
        """Mesh order pp, dp_replicate, dp_shard, cp, tp (tp innermost)."""
        return (rank // (self.cp * self.tp)) % self.dp


def all_mean(value: torch.Tensor):
    if dist.is_initialized():
        dist.all_reduce(value)
        value /= dist.get_world_size()
    return value


def train(config):
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if world > 1:
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=config.comm.init_timeout_seconds))
    dims = ParallelDims(config.parallelism, world)
    t = config.training
    if dims.tp > 1 and config.parallelism.enable_sequence_parallel and t.seq_len % dims.tp:
        raise ValueError(f"sequence length {t.seq_len} must be divisible by the tensor parallel degree {dims.tp}")
    global_batch = t.global_batch_size if t.global_batch_size >= 0 else t.local_batch_size * dims.dp
    if global_batch <= 0 or global_batch % (t.local_batch_size * dims.dp):
        raise AssertionError(f"global batch size must be multiple of local batch size times data-parallel degree "
                             f"({global_batch} % ({t.local_batch_size} * {dims.dp}) != 0)")
    accumulation = global_batch // (t.local_batch_size * dims.dp)
    torch.manual_seed(config.debug.seed if config.debug.seed is not None else 0)

    from importlib import import_module
    spec = import_module(f"torchtitan.models.{config.model_spec.name}").model_registry(config.model_spec.flavor)
    logger.info(f"Building {spec.name} {spec.flavor}")
    tokenizer = HuggingFaceTokenizer(config.hf_assets_path)
    if tokenizer.get_vocab_size() > spec.args.vocab_size:
        raise ValueError(f"the tokenizer's vocabulary ({tokenizer.get_vocab_size()}) exceeds the model's "
                         f"({spec.args.vocab_size})")
    model = spec.build()
    o = config.optimizer_settings
    optimizer = torch.optim.AdamW(model.parameters(), lr=o.lr, betas=o.betas, eps=o.eps, weight_decay=o.weight_decay)
    scheduler = lr_scheduler.build(optimizer, config.lr_scheduler, t.steps)
    d = config.dataloader
    dataset = HuggingFaceTextDataset(d.dataset, d.dataset_path, tokenizer, t.seq_len, dims.dp_rank(rank), dims.dp,
                                     d.infinite)
    checkpoint = CheckpointManager(config, model, optimizer, scheduler, dataset, spec)
    step = checkpoint.load()
    metrics = MetricsProcessor(config, dims.non_dp, spec.args.flops_per_token(t.seq_len))
    logger.info(f"Trainer is initialized with local batch size {t.local_batch_size}, global batch size {global_batch}, "
                f"gradient accumulation steps {accumulation}, sequence length {t.seq_len}, total steps {t.steps} "
                f"(warmup {config.lr_scheduler.warmup_steps})")
    event("start", world=world, dp=dims.dp, tp=dims.tp, grad_accum=accumulation, local_batch=t.local_batch_size,
          global_batch=global_batch, seq_len=t.seq_len, steps=t.steps, resumed_from=step,
          module=config.model_spec.name, flavor=spec.flavor)
    logger.info(f"Training starts at step {step + 1}")
    delay = float(os.environ.get("TRNSLURM_STANDIN_STEP_DELAY", "0") or 0)
    fail_after = int(os.environ.get("TRNSLURM_STANDIN_FAIL_AFTER", "0") or 0)
    while step < t.steps:
        step += 1
        optimizer.zero_grad()
        losses = []
        try:
            for _ in range(accumulation):
                inputs, labels = dataset.batch(t.local_batch_size)
                logits = model(inputs)
                loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
                (loss / accumulation).backward()
                losses.append(loss.detach())
                metrics.ntokens_since_last_log += labels.numel()
        except StopIteration:
            logger.warning("Dataset ran out of data (dataloader.infinite is off): training stops")
            step -= 1
            break
        for p in model.parameters():
            if p.grad is not None:
                all_mean(p.grad)
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), t.max_norm)
        lr = scheduler.get_last_lr()[0]
        optimizer.step()
        scheduler.step()
        avg = all_mean(torch.stack(losses).mean()).item()
        if metrics.should_log(step):
            metrics.log(step, avg, grad_norm.item())
        event("step", step=step, loss=avg, lr=lr)
        if checkpoint.save(step, last_step=(step == t.steps), train_state={"step": step}):
            event("checkpoint", step=step)
        if delay:
            time.sleep(delay)
        if step == fail_after:
            logger.error(f"stopping after step {step} (TRNSLURM_STANDIN_FAIL_AFTER): a simulated crash")
            sys.stdout.flush()
            os._exit(1)
    logger.info("Training completed")
    event("end", step=step)
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def main(argv=None):
    init_logger()
    config = parse_args(sys.argv[1:] if argv is None else argv)
    train(config)


if __name__ == "__main__":
    main()
