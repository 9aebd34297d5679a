"""The gloo machinery the CPU collectives share (health_collective.py, the nccom-test stand-in):
one process a node in a Slurm step, joined through torch.distributed's gloo, a timed all_reduce,
and the stand-ins' slow-node knob.

TRNSLURM_STANDIN_SLOW_NODES=n3,... makes those nodes answer slowly: a sleep before
each timed operation, for the tests that the slow node is named."""

import datetime
import os
import socket
import time

import torch
import torch.distributed as dist

SLOW_SECONDS = 0.3
# uint16 and uint32 as their signed kin (this torch has neither): the same bytes on the wire.
DTYPES = {"uint8": torch.uint8, "int8": torch.int8, "uint16": torch.int16, "int16": torch.int16,
          "uint32": torch.int32, "int32": torch.int32, "fp16": torch.float16, "bf16": torch.bfloat16,
          "fp32": torch.float32}


def node_name():
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def is_slow(node):
    return node in os.environ.get("TRNSLURM_STANDIN_SLOW_NODES", "").split(",")


def join(addr, port, timeout=60):
    """Joins this Slurm task's group: rank SLURM_PROCID of SLURM_NTASKS. Returns (rank, world)."""
    rank = int(os.environ.get("SLURM_PROCID", "0"))
    world = int(os.environ.get("SLURM_NTASKS", "1"))
    dist.init_process_group("gloo", init_method=f"tcp://{addr}:{port}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=timeout))
    return rank, world


def timed_all_reduce(x, iters, warmup, slow):
    """Seconds per all_reduce of x, averaged over `iters` after `warmup` untimed ones; a slow
    node sleeps before each timed one, so every rank waits for it."""
    took = 0.0
    for _ in range(warmup):
        t = time.monotonic()
        dist.all_reduce(x)
        took = time.monotonic() - t
    # Slow against this run's own speed (8 warm-up operations, at most 2 s): on a loaded machine
    # a fixed pause can come near a healthy pair's time, measured in another run, and the slow
    # node would no longer stand out by the check's factor of 4.
    pause = min(max(SLOW_SECONDS, 8 * took), 2.0)
    dist.barrier()
    t0 = time.monotonic()
    for _ in range(iters):
        if slow:
            time.sleep(pause)
        dist.all_reduce(x)
    return (time.monotonic() - t0) / max(iters, 1)


def all_reduce_busbw(nbytes, seconds, world):
    """nccom-test's (and nccl-tests') bus bandwidth of an all_reduce, GiB/s: size / time x 2 (n - 1) / n."""
    return nbytes / seconds * 2 * (world - 1) / world / 2**30 if seconds > 0 else 0.0
