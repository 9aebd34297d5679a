"""The pre-flight's collective on the CPU backend (docs/health.md): what nccom-test's all_reduce
is on Neuron, with torch.distributed's gloo between the nodes of a Slurm step, one task a node.

Every task takes part in a gloo all_reduce of --bytes of fp32 (nccom-test's default size, 32M),
then in a ring of point-to-point transfers (each rank sends to the next and receives from the
previous) that times every link. Rank 0 prints one JSON line per node, in the form
`trnslurm health-node` prints (check "collective"): a link far below the fastest is
named, and a node at both ends of slow links is the slow node.

Stand-in knob: TRNSLURM_STANDIN_SLOW_NODES=n3,... makes those nodes answer slowly (a sleep
before each timed operation, lib/gloo_collective.py), for the test that the slow node is named.
"""

import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))

from gloo_collective import all_reduce_busbw, is_slow, join, node_name, timed_all_reduce  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bytes", type=int, default=32 << 20)
    p.add_argument("--iters", type=int, default=3)
    p.add_argument("--link-bytes", type=int, default=4 << 20, help="bytes each link of the ring carries")
    p.add_argument("--slow-factor", type=float, default=4.0,
                   help="a link this many times slower than the fastest is named")
    a = p.parse_args()
    node = node_name()
    slow = is_slow(node)
    # A port of this job's own: other jobs (and other clusters) may run on the same hosts.
    port = 20000 + int(os.environ.get("SLURM_JOB_ID", "0")) * 7 % 20000
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
        # Against the fastest link: one slow node slows two links of the ring, which on three
        # nodes is most of them (a median would be slow itself).
        fastest = max(links)
        slow_links = [i for i in range(world) if world > 2 and links[i] * a.slow_factor < fastest]
        # A node at both ends of slow links is the slow one; those links say nothing of its neighbours.
        slow_nodes = {i for i in range(world) if i in slow_links and (i + 1) % world in slow_links}
        for i in range(world):
            explained = i in slow_links and ((i - 1) % world in slow_nodes or i in slow_nodes)
            findings = []
            if not ok:
                findings.append({"check": "collective", "status": "FAIL", "detail": "all_reduce gave a wrong sum"})
            if i in slow_nodes:
                findings.append({"check": "collective", "status": "FAIL", "detail":
                                 f"this node is slow: its links {names[(i - 1) % world]}->{names[i]} at "
                                 f"{links[i]:.0f} MiB/s and {names[i]}->{names[(i + 1) % world]} at "
                                 f"{links[(i + 1) % world]:.0f} MiB/s, the fastest {fastest:.0f} MiB/s"})
            elif i in slow_links and not explained:
                findings.append({"check": "collective", "status": "warn", "detail":
                                 f"link {names[(i - 1) % world]}->{names[i]} at {links[i]:.0f} MiB/s, the fastest "
                                 f"{fastest:.0f} MiB/s"})
            if not findings:
                findings.append({"check": "collective", "status": "ok", "detail":
                                 f"gloo all_reduce of {a.bytes >> 20} MiB on {world} nodes: {busbw:.2f} GB/s bus "
                                 f"bandwidth; its link in {links[i]:.0f} MiB/s"})
            print(json.dumps({"node": names[i], "findings": findings}), flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
