#!/usr/bin/python3
"""Writes the demo's inputs, so the demo needs no download: a Megatron dataset whose token
stream has learnable structure, and a full (Hugging Face-named) initial checkpoint."""

import argparse
import sys
import tomllib
from pathlib import Path

import numpy as np
import torch

import megatron
from model import Config, TinyLlama

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
from demo_tokens import add_shape_args, documents  # noqa: E402


def from_recipe(a):
    """The recipe's [model] shape, dataset.path and model.pretrained (relative to the recipe's
    directory, as trnslurm resolves them), so the inputs fit the recipe exactly."""
    path = Path(a.recipe)
    recipe = tomllib.loads(path.read_text())
    model, base = recipe["model"], path.resolve().parent
    a.vocab, a.hidden, a.layers = model["vocab"], model["hidden"], model["layers"]
    a.heads, a.kv_heads = model["heads"], model.get("kv_heads", model["heads"])
    a.intermediate, a.seq_len = model["ffn_hidden"], model["seq_len"]
    a.dataset = a.dataset or str(megatron.prefix_of(str(base / recipe["dataset"]["path"])))
    a.checkpoint = a.checkpoint or str(base / model["pretrained"])


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--recipe", help="take the paths and the model shape from this trnslurm recipe")
    ap.add_argument("--dataset", help="output prefix of <prefix>.idx/.bin")
    ap.add_argument("--checkpoint", help="directory of the full initial checkpoint")
    ap.add_argument("--tokens", type=int, default=12000)
    add_shape_args(ap)
    a = ap.parse_args()
    if a.recipe:
        from_recipe(a)
    if not a.dataset or not a.checkpoint:
        ap.error("give --recipe, or both --dataset and --checkpoint")

    rng = np.random.default_rng(a.seed)
    prefix = Path(a.dataset)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    megatron.write(prefix, documents(rng, a.vocab, a.tokens))

    config = Config(a.vocab, a.hidden, a.layers, a.heads, a.kv_heads, a.intermediate, a.seq_len)
    torch.manual_seed(a.seed)
    model = TinyLlama(config)
    out = Path(a.checkpoint)
    out.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), out / "model.pt")
    config.save(out)
    print(f"dataset {prefix}.idx/.bin ({a.tokens} tokens), checkpoint {out}/model.pt")


if __name__ == "__main__":
    main()
