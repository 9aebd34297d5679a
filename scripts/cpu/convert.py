#!/usr/bin/python3
"""Stage 1, convert: a full checkpoint (model.pt + config.json) into tensor-parallel shards in the
neuronx-distributed layout (<out>/model/dp_rank_00_tp_rank_<tt>_pp_rank_00.pt)."""

import argparse
import shutil
from pathlib import Path

import torch

import sharding


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--input_dir", required=True)
    ap.add_argument("--output_dir", required=True)
    ap.add_argument("--tp_size", type=int, required=True)
    ap.add_argument("--pp_size", type=int, default=1)
    a = ap.parse_args()
    if a.pp_size != 1:
        raise SystemExit("the CPU backend shards tensor-parallel only: use pp_size = 1")
    src, out = Path(a.input_dir), Path(a.output_dir)
    state = torch.load(src / "model.pt")
    sharding.save_shards(state, a.tp_size, out / "model")
    shutil.copy(src / "config.json", out / "config.json")
    print(f"convert: {len(state)} tensors from {src} into {a.tp_size} TP shards under {out}/model")


if __name__ == "__main__":
    main()
