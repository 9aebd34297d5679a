"""One worker of the exported entry point's two-node test (test_batch_entry.sh): joins the
process group torchrun set up (env://: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE), sums the
ranks with gloo, and writes what it saw to <dir>/rank-<RANK>.json."""

import json
import os
import sys

import torch
import torch.distributed as dist


def main(out_dir):
    dist.init_process_group("gloo")
    total = torch.tensor([dist.get_rank()])
    dist.all_reduce(total)
    seen = {
        "rank": dist.get_rank(),
        "world": dist.get_world_size(),
        "sum": int(total.item()),
        "group_rank": int(os.environ["GROUP_RANK"]),
        "node_rank": os.environ.get("TRNSLURM_NODE_RANK"),
        "nnodes": os.environ.get("TRNSLURM_NNODES"),
        "master_addr": os.environ["MASTER_ADDR"],
        "master_port": os.environ["MASTER_PORT"],
        "malloc_arena_max": os.environ.get("MALLOC_ARENA_MAX"),
        "recipe_env": os.environ.get("TRN_PROBE_RECIPE_ENV"),
    }
    with open(os.path.join(out_dir, f"rank-{seen['rank']}.json"), "w") as f:
        json.dump(seen, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
