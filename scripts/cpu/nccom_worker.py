"""A worker of the nccom-test stand-in (scripts/cpu/nccom-test): one task a node of the Slurm step
the stand-in starts, joined at NEURON_RT_ROOT_COMM_ID with gloo. Runs the all_reduce of every size
asked for and, from rank 0, prints one JSON line per size (size, seconds per operation, world,
whether the sum was right) for the stand-in to print as nccom-test's table.

  nccom_worker.py --sizes 33554432,... --dtype fp32 --iters N --warmup W"""

import argparse
import json
import os
import sys

import torch
import torch.distributed as dist

from cpu_backend.gloo_collective import DTYPES, is_slow, join, node_name, timed_all_reduce


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", required=True)
    p.add_argument("--dtype", required=True, choices=sorted(DTYPES))
    p.add_argument("--iters", type=int, required=True)
    p.add_argument("--warmup", type=int, required=True)
    a = p.parse_args()
    addr, _, port = os.environ["NEURON_RT_ROOT_COMM_ID"].rpartition(":")
    rank, world = join(addr, int(port))
    slow = is_slow(node_name())
    dtype = DTYPES[a.dtype]
    width = torch.tensor([], dtype=dtype).element_size()
    for size in (int(s) for s in a.sizes.split(",")):
        x = torch.ones(max(size // width, 1), dtype=dtype)
        seconds = timed_all_reduce(x, a.iters, a.warmup, slow)
        # ones summed once per operation: world ** ops overflows small types, so only the first
        # operation's sum is compared, on a fresh tensor.
        y = torch.ones(1, dtype=dtype)
        dist.all_reduce(y)
        if rank == 0:
            print(json.dumps({"size": size, "seconds": seconds, "world": world, "ok": bool(y.item() == world)}),
                  flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
