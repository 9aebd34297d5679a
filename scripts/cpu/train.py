#!/usr/bin/python3
"""Stage 3, train (and stage 2, precompile, with --max-steps): the tiny model trained with torchrun
and DDP over gloo, with the sampler semantics of the neuronx-distributed training loop:
DistributedSampler(drop_last=True) over the data-parallel ranks, a DataLoader with drop_last,
an optimizer step every grad_accum micro-steps, and a micro-step counter that carries across
epochs. Loads the TP shards of stage 1, checkpoints as step_<n>/{model, optim, scheduler.pt,
user_content.pt, done}, and resumes from the newest completed checkpoint.

Writes JSON lines to --log (rank 0): start (rendezvous as each rank saw it), step, epoch_end,
checkpoint, end. On SIGUSR1 or SIGTERM every rank stops at the next optimizer step, rank 0
checkpoints, and the process exits with status 3 (see --help of the chain's train stage)."""

import argparse
import json
import math
import os
import signal
import time
from pathlib import Path

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler

import checkpoints
import sharding
from megatron import TokenSamples
from model import Config, TinyLlama
from nxd_trainer import ordered_allreduce  # lib/ is on sys.path: model.py puts it there

EXIT_PREEMPTED = 3
stop_requested = False


def request_stop(_signum, _frame):
    global stop_requested
    stop_requested = True


def lr_lambda(warmup: int, total: int):
    def f(step):
        if warmup and step < warmup:
            return (step + 1) / warmup
        decay = max(1, total - warmup)
        progress = min(1.0, (step - warmup) / decay)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))

    return f


class Log:
    def __init__(self, path, enabled):
        self.file = open(path, "a", buffering=1) if enabled and path else None

    def __call__(self, event, **fields):
        if self.file:
            self.file.write(json.dumps({"event": event, "time": round(time.time(), 3), **fields}) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="Megatron dataset prefix (<prefix>.idx/.bin)")
    ap.add_argument("--init_dir", required=True, help="sharded checkpoint of stage 1 (model/ and config.json)")
    ap.add_argument("--checkpoint_dir", required=True)
    ap.add_argument("--checkpoint_every", type=int, default=10, help="optimizer steps between checkpoints")
    ap.add_argument("--tp", type=int, default=1, help="tensor-parallel degree: rank layout and checkpoint files")
    ap.add_argument("--mbs", type=int, required=True)
    ap.add_argument("--gbs", type=int, required=True)
    ap.add_argument("--grad_accum", type=int, required=True, help="must equal gbs / (mbs x dp)")
    ap.add_argument("--epochs", type=int, required=True)
    ap.add_argument("--total_steps", type=int, required=True)
    ap.add_argument("--warmup_steps", type=int, required=True)
    ap.add_argument("--lr", type=float, required=True)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--max_steps", type=int, default=0, help="stop after this many steps (precompile); 0 = no limit")
    ap.add_argument("--no_checkpoint", action="store_true", help="precompile: write no checkpoint")
    ap.add_argument("--log", default="")
    ap.add_argument("--step_delay", type=float, default=0.0,
                    help="seconds to sleep after each optimizer step: a slow run for the resilience tests")
    a = ap.parse_args()

    torch.set_num_threads(1)
    signal.signal(signal.SIGUSR1, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    log = Log(a.log, rank == 0)

    # What torchrun handed this rank, gathered so rank 0 can record the whole rendezvous.
    seen = {k: os.environ.get(k) for k in ("MASTER_ADDR", "MASTER_PORT", "GROUP_RANK", "RANK", "LOCAL_RANK", "WORLD_SIZE")}
    seen["hostname"] = os.uname().nodename
    everyone = [None] * world
    dist.all_gather_object(everyone, seen)

    # Ranks are laid out as in neuronx-distributed, TP innermost: tp_rank = rank % tp. The CPU
    # backend does not split tensors: the ranks of one TP group hold the whole model and see the
    # same data, as real TP ranks do, so DP, the sampler and gradient accumulation are exactly the
    # plan's. Gradients are averaged over the DP group of equal tp_rank.
    if world % a.tp:
        raise SystemExit(f"world size {world} is not a multiple of tp {a.tp}")
    dp = world // a.tp
    dp_rank = rank // a.tp
    dp_groups = [dist.new_group([t + a.tp * d for d in range(dp)]) for t in range(a.tp)]
    dp_group = dp_groups[rank % a.tp]
    if a.gbs % (a.mbs * dp) or a.gbs // (a.mbs * dp) != a.grad_accum:
        raise SystemExit(f"grad_accum {a.grad_accum} does not match gbs {a.gbs} / (mbs {a.mbs} x dp {dp})")

    init_dir = Path(a.init_dir)
    config = Config.load(init_dir)
    data = TokenSamples(a.data, config.seq_len)
    sampler = DistributedSampler(data, num_replicas=dp, rank=dp_rank, shuffle=True, seed=a.seed, drop_last=True)
    loader = DataLoader(data, batch_size=a.mbs, sampler=sampler, drop_last=True)
    micro_per_epoch = len(loader)
    if micro_per_epoch == 0:
        raise SystemExit(f"{len(data)} samples give no micro-step of {a.mbs} on {dp} data-parallel ranks")
    planned_total = a.epochs * micro_per_epoch // a.grad_accum

    torch.manual_seed(a.seed)
    model = TinyLlama(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda(a.warmup_steps, a.total_steps))

    ckpt_dir = Path(a.checkpoint_dir)
    resumed = checkpoints.newest(ckpt_dir) if not a.no_checkpoint else None
    step = 0
    if resumed:
        step, path = resumed
        model.load_state_dict(sharding.load_shards(path / "model"))
        optimizer.load_state_dict(torch.load(path / "optim" / "optim.pt"))
        scheduler.load_state_dict(torch.load(path / "scheduler.pt"))
    else:
        model.load_state_dict(sharding.load_shards(init_dir / "model"))
    ddp = DistributedDataParallel(model, process_group=dp_group)
    # Gradients summed in rank order, whatever DDP's bucket layout: gloo's ring allreduce adds the
    # ranks in an order that depends on where a value sits in the bucket, and DDP rebuilds its
    # buckets after the first synchronised step, so with more than 2 DP ranks a run resumed from a
    # checkpoint would differ from an uninterrupted one in the last bit.
    ddp.register_comm_hook(dp_group, ordered_allreduce)

    log("start", world=world, dp=dp, grad_accum=a.grad_accum, micro_per_epoch=micro_per_epoch,
        samples=len(data), planned_total=planned_total, resumed_from=step if resumed else None, ranks=everyone)

    def save(at_step, epoch):
        if a.no_checkpoint:
            return
        if rank == 0:
            tmp = checkpoints.begin(ckpt_dir, at_step)
            sharding.save_shards(model.state_dict(), a.tp, tmp / "model")
            (tmp / "optim").mkdir()
            torch.save(optimizer.state_dict(), tmp / "optim" / "optim.pt")
            torch.save(scheduler.state_dict(), tmp / "scheduler.pt")
            torch.save({"step": at_step, "epoch": epoch}, tmp / "user_content.pt")
            (tmp / "config.json").write_text((init_dir / "config.json").read_text())
            checkpoints.commit(ckpt_dir, tmp, at_step)
            log("checkpoint", step=at_step)
        dist.barrier()

    limit = min(a.total_steps, a.max_steps) if a.max_steps else a.total_steps
    saved = step
    micro = step * a.grad_accum  # the counter that carries across epochs
    start_epoch, skip = divmod(micro, micro_per_epoch)
    preempted = False
    for epoch in range(start_epoch, a.epochs):
        if step >= limit or preempted:
            break
        sampler.set_epoch(epoch)
        steps_at_epoch_start = step
        for i, (tokens, labels) in enumerate(loader):
            if epoch == start_epoch and i < skip:
                continue
            micro += 1
            stepping = micro % a.grad_accum == 0
            if stepping:
                loss = ddp(tokens, labels) / a.grad_accum
                loss.backward()
            else:
                with ddp.no_sync():
                    loss = ddp(tokens, labels) / a.grad_accum
                    loss.backward()
            if not stepping:
                continue
            lr = scheduler.get_last_lr()[0]  # the rate this step used, logged with it
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            if a.step_delay > 0:
                time.sleep(a.step_delay)
            total = loss.detach() * a.grad_accum
            dist.all_reduce(total)
            log("step", step=step, epoch=epoch, loss=round(total.item() / world, 5), lr=lr)
            flag = torch.tensor([1 if stop_requested else 0])
            dist.all_reduce(flag)
            if step % a.checkpoint_every == 0 or step == limit or flag.item():
                save(step, epoch)
                saved = step
            if flag.item():
                log("preempted", step=step)
                preempted = True
                break
            if step >= limit:
                break
        if not preempted:
            log("epoch_end", epoch=epoch, steps=step - steps_at_epoch_start, step=step)
    if step != saved:  # the data ran out before the step limit: keep the last step too
        save(step, a.epochs - 1)
    log("end", step=step, preempted=preempted)
    dist.barrier()
    dist.destroy_process_group()
    raise SystemExit(EXIT_PREEMPTED if preempted else 0)


if __name__ == "__main__":
    main()
