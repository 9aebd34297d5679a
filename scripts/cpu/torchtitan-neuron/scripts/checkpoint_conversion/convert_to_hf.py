"""A TorchTitan checkpoint (a step-N folder, full or model only) -> Hugging Face safetensors, with
upstream's command line (scripts/checkpoint_conversion/convert_to_hf.py at c82675eb6):
`convert_to_hf.py INPUT_DIR OUTPUT_DIR [--hf_assets_path DIR] [--model_name NAME]
[--model_flavor FLAVOR] [--export_dtype float16|bfloat16|float32]`, strict parse_args.
Writes model.safetensors + model.safetensors.index.json as upstream's HuggingFaceStorageWriter
does; like upstream it writes no config.json and no tokenizer (it reads --hf_assets_path's index
only to keep its file mapping): copying those is the caller's step. CPU stand-in."""

import argparse
import json
import sys
from importlib import import_module
from pathlib import Path

import torch

from torchtitan.models.decoder import to_hf
from torchtitan.tools import safetensors_io

DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}


def build_parser():
    p = argparse.ArgumentParser(description="Convert DCP weights to HF format.")
    p.add_argument("input_dir", type=Path)
    p.add_argument("output_dir", type=Path)
    p.add_argument("--hf_assets_path", type=Path, default="./assets/hf/Llama-3.1-8B")
    p.add_argument("--model_name", type=str, nargs="?", default="llama3")
    p.add_argument("--model_flavor", type=str, nargs="?", default="8B")
    p.add_argument("--export_dtype", type=str, nargs="?", choices=["float16", "bfloat16", "float32"],
                   default="float32")
    return p


def convert_to_hf(input_dir, output_dir, model_name, model_flavor, hf_assets_path, export_dtype):
    spec = import_module(f"torchtitan.models.{model_name}").model_registry(model_flavor)
    input_dir = Path(input_dir)
    if not (input_dir / ".metadata").is_file():
        raise FileNotFoundError(f"{input_dir}: no .metadata: not a complete checkpoint")
    state = torch.load(input_dir / "__0_0.distcp")["model"]
    hf = to_hf(state, spec.args)
    shards = 1
    index = Path(hf_assets_path) / "model.safetensors.index.json"
    if index.exists():
        shards = len(set(json.loads(index.read_text())["weight_map"].values()))
    dtype = DTYPES[export_dtype]
    safetensors_io.save_dir({k: v.to(dtype) for k, v in hf.items()}, output_dir, shards)


if __name__ == "__main__":
    args = build_parser().parse_args()
    try:
        convert_to_hf(args.input_dir, args.output_dir, args.model_name, args.model_flavor, args.hf_assets_path,
                      args.export_dtype)
    except (KeyError, ValueError, FileNotFoundError, ModuleNotFoundError) as e:
        print(f"convert_to_hf.py (CPU stand-in): {e}", file=sys.stderr)
        sys.exit(1)
