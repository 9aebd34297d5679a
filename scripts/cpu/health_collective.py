"""The pre-flight's collective on the CPU backend (docs/health.md): what nccom-test's all_reduce
is on Neuron, with torch.distributed's gloo between the nodes of a Slurm step, one task a node.

Every task takes part in a gloo all_reduce of --bytes of fp32 (nccom-test's default size, 32M),
then in a ring of point-to-point transfers (each rank sends to the next and receives from the
previous) that times every link. Rank 0 prints the measurements as one JSON line ("gloo_ring":
the nodes in rank order, each one's incoming link in MiB/s, the all_reduce's bytes, bus bandwidth
and whether its sum was right), which `trnslurm health-node` judges as it judges nccom-test's
pairs: a link far below the fastest is named, a node at both ends of slow links is the slow node.

Stand-in knob: TRNSLURM_STANDIN_SLOW_NODES=n3,... makes those nodes answer slowly (a sleep
before each timed operation, cpu_backend/gloo_collective.py), for the test that the slow node is named.
"""

import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist

from cpu_backend.gloo_collective import all_reduce_busbw, is_slow, join, node_name, timed_all_reduce


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bytes", type=int, default=32 << 20)
    p.add_argument("--iters", type=int, default=3)
    p.add_argument("--link-bytes", type=int, default=4 << 20, help="bytes each link of the ring carries")
    a = p.parse_args()
    node = node_name()
    slow = is_slow(node)
    # A port of this job's own: other jobs, and other clusters whose job ids are the same, may run
    # on the same hosts (the plugin's MASTER_PORT tells clusters apart). It stays below Linux's
    # ephemeral range (net.ipv4.ip_local_port_range, 32768 up), where outgoing connections take
    # theirs.
    job = int(os.environ.get("SLURM_JOB_ID", "0"))
    cluster = int(os.environ.get("MASTER_PORT", "0"))
    port = 20000 + (cluster * 7919 + job * 7) % 12000
    rank, world = join(os.environ.get("MASTER_ADDR", "127.0.0.1"), port)
    x = torch.ones(a.bytes // 4, dtype=torch.float32)
    per_op = timed_all_reduce(x, a.iters, 1, slow)  # one warm-up: connections made
    busbw = all_reduce_busbw(a.bytes, per_op, world)
    ok = bool(x[0].item() == world ** (a.iters + 1))
    # The ring: link (rank - 1 -> rank) timed at its receiver.
    buf = torch.ones(a.link_bytes // 4, dtype=torch.float32)
    got = torch.empty_like(buf)
    dist.barrier()
    t0 = time.monotonic()
    if slow:
        time.sleep(1.0)
    send = dist.isend(buf, (rank + 1) % world)
    dist.irecv(got, (rank - 1) % world).wait()
    link = a.link_bytes / (time.monotonic() - t0) / 2**20  # MiB/s into this rank
    send.wait()
    names = [None] * world
    links = [None] * world
    dist.all_gather_object(names, node)
    dist.all_gather_object(links, link)
    if rank == 0:
        # The measurements; `trnslurm health-node` judges them (core/src/health/collective.cpp).
        print(json.dumps({"gloo_ring": {"nodes": names, "links_mib_per_s": links, "bytes": a.bytes,
                                        "busbw": busbw, "sum_ok": ok}}), flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
