#!/usr/bin/python3
"""The inputs of the TorchTitan stand-in (scripts/cpu/torchtitan-neuron), made here so that nothing
is downloaded, each in the form TorchTitan Neuron takes it:

  OUT/data/  a local text corpus: JSON lines with a `text` column (--dataloader.dataset c4_test
             --dataloader.dataset_path OUT/data), several files, --docs documents in all;
  OUT/hf/    Hugging Face pretrained weights and assets (--hf_assets_path, convert_from_hf.py's
             input, --checkpoint.initial_load_path with --checkpoint.initial_load_in_hf):
             config.json, model.safetensors + model.safetensors.index.json, tokenizer.json and
             tokenizer_config.json (a byte-level tokenizer).

  make_titan_inputs.py OUT [--model qwen3|llama3] [--flavor tiny] [--docs N] [--files K] [--seed S]"""

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from torchtitan.components.tokenizer import tokenizer_files
from torchtitan.models.decoder import to_hf
from torchtitan.tools import safetensors_io

WORDS = ("the cat sat on a mat while seven small dogs ran past the red barn and a bird sang over green hills "
         "near quiet water").split()


def documents(rng, count):
    """Documents of counting phrases over a small vocabulary: learnable, so a tiny model's loss falls."""
    docs = []
    for _ in range(count):
        start, stride, n = int(rng.integers(0, len(WORDS))), int(rng.integers(1, 4)), int(rng.integers(8, 40))
        docs.append(" ".join(WORDS[(start + stride * k) % len(WORDS)] for k in range(n)) + ".")
    return docs


def write_corpus(out: Path, docs, files: int):
    out.mkdir(parents=True, exist_ok=True)
    for k in range(files):
        with open(out / f"part-{k:04d}.jsonl", "w", encoding="utf-8") as f:
            for i in range(k, len(docs), files):
                f.write(json.dumps({"id": i, "text": docs[i]}) + "\n")


def write_hf(out: Path, model: str, flavor: str, seed: int):
    from importlib import import_module

    spec = import_module(f"torchtitan.models.{model}").model_registry(flavor)
    torch.manual_seed(seed)
    weights = to_hf(spec.build().state_dict(), spec.args)
    safetensors_io.save_dir(weights, out)
    (out / "config.json").write_text(json.dumps(spec.hf_config(), indent=2) + "\n")
    for name, data in tokenizer_files().items():
        (out / name).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="make_titan_inputs.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--model", choices=["qwen3", "llama3"], default="qwen3")
    ap.add_argument("--flavor", default="tiny")
    ap.add_argument("--docs", type=int, default=200)
    ap.add_argument("--files", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1234)
    a = ap.parse_args(argv)
    out = Path(a.out)
    write_corpus(out / "data", documents(np.random.default_rng(a.seed), a.docs), a.files)
    write_hf(out / "hf", a.model, a.flavor, a.seed)
    print(f"make_titan_inputs: {a.docs} documents in {out / 'data'}, {a.model} {a.flavor} weights in {out / 'hf'}")


if __name__ == "__main__":
    main()
