#!/usr/bin/python3
"""The inputs of the upstream stand-ins, made here so that nothing is downloaded, each in the form
the upstream scripts take it:

  --dataset DIR     a Hugging Face save_to_disk directory (Arrow IPC shards, state.json,
                    dataset_info.json) with input_ids, attention_mask and labels rows of seq_len
                    tokens, as examples/training/llama/get_dataset.py leaves its corpus;
  --model_config DIR  config.json with LlamaConfig's field names (the trainers' --model_path /
                    --training_config, the converter's --config DIR/config.json);
  --pretrained FILE the full state dict (Hugging Face tensor names), the converter's
                    --convert_from_full_state --input_dir.

--recipe trnslurm.toml takes all three paths (dataset.path, model.config, model.pretrained,
relative to the recipe's directory) and the model's shape from a recipe."""

import argparse
import json
import tomllib
from pathlib import Path

import numpy as np
import torch

from cpu_backend import hf_dataset
from cpu_backend.demo_tokens import add_shape_args, documents, packed_rows
from cpu_backend.llama import Config, TinyLlama


def from_recipe(a):
    """Fills the paths and shape a recipe names, as trnslurm resolves them."""
    path = Path(a.recipe)
    recipe = tomllib.loads(path.read_text())
    model = recipe.get("model", {})
    base = path.resolve().parent
    a.dataset = a.dataset or str(base / recipe["dataset"]["path"])
    a.model_config = a.model_config or str(base / model["config"])
    a.pretrained = a.pretrained or str(base / model["pretrained"])
    for key, attr in (("vocab", "vocab"), ("hidden", "hidden"), ("layers", "layers"), ("heads", "heads"),
                      ("kv_heads", "kv_heads"), ("ffn_hidden", "intermediate"), ("seq_len", "seq_len")):
        if key in model:
            setattr(a, attr, model[key])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--recipe", help="a trnslurm recipe: paths and model shape from it")
    ap.add_argument("--dataset", help="output directory of the Hugging Face dataset")
    ap.add_argument("--model_config", help="output directory of config.json")
    ap.add_argument("--pretrained", help="output file of the full initial state dict")
    ap.add_argument("--tokens", type=int, default=12000, help="tokens in the corpus before packing")
    ap.add_argument("--shards", type=int, default=2, help="Arrow files of the dataset")
    add_shape_args(ap)
    a = ap.parse_args()
    if a.recipe:
        from_recipe(a)
    for name in ("dataset", "model_config", "pretrained"):
        if getattr(a, name) is None:
            ap.error(f"--{name} is required (or --recipe)")

    rows = packed_rows(documents(np.random.default_rng(a.seed), a.vocab, a.tokens), a.seq_len)
    hf_dataset.save_to_disk(a.dataset, rows, num_shards=a.shards, batch_rows=100)
    config = Config(a.vocab, a.hidden, a.layers, a.heads, a.kv_heads, a.intermediate, a.seq_len)
    config.validate()
    cfg_dir = Path(a.model_config)
    cfg_dir.mkdir(parents=True, exist_ok=True)
    (cfg_dir / "config.json").write_text(json.dumps(config.to_hf(), indent=2) + "\n")
    torch.manual_seed(a.seed)
    out = Path(a.pretrained)
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(TinyLlama(config).state_dict(), out)
    print(f"dataset {a.dataset} ({len(rows)} rows of {a.seq_len} tokens), config {cfg_dir}/config.json, "
          f"pretrained {out}")


if __name__ == "__main__":
    main()
