#!/usr/bin/python3
"""Stage 4, convert back: the newest COMPLETED checkpoint (step_<n>/done) merged into one full
checkpoint. The step is found at run time, never hard-coded."""

import argparse
import json
import shutil
from pathlib import Path

import torch

import checkpoints
import sharding


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--checkpoint_dir", required=True)
    ap.add_argument("--output_dir", required=True)
    a = ap.parse_args()
    found = checkpoints.newest(Path(a.checkpoint_dir))
    if found is None:
        raise SystemExit(f"convert-back: no completed checkpoint (step_*/done) under {a.checkpoint_dir}")
    step, path = found
    out = Path(a.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    torch.save(sharding.load_shards(path / "model"), out / "model.pt")
    shutil.copy(path / "config.json", out / "config.json")
    (out / "source.json").write_text(json.dumps({"step": step, "checkpoint": str(path)}) + "\n")
    print(f"convert-back: step {step} from {path} into {out}/model.pt")


if __name__ == "__main__":
    main()
