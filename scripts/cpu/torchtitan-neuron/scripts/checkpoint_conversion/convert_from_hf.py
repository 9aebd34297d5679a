"""Hugging Face safetensors -> a TorchTitan checkpoint (a step-0 style DCP folder, model only),
with upstream's command line (scripts/checkpoint_conversion/convert_from_hf.py at c82675eb6):
`convert_from_hf.py INPUT_DIR OUTPUT_DIR [--model_name NAME] [--model_flavor FLAVOR]`, strict
parse_args. The model comes from torchtitan.models.<model_name>'s model_registry(<model_flavor>),
as upstream looks it up; the HF config.json, when present, must describe that model. CPU stand-in."""

import argparse
import sys
from importlib import import_module
from pathlib import Path

import torch

from torchtitan.components.checkpoint import write_metadata
from torchtitan.models.decoder import from_hf
from torchtitan.tools import safetensors_io


def build_parser():
    p = argparse.ArgumentParser(description="Convert HF checkpoint to DCP format.")
    p.add_argument("input_dir", type=Path)
    p.add_argument("output_dir", type=Path)
    p.add_argument("--model_name", type=str, nargs="?", default="llama3")
    p.add_argument("--model_flavor", type=str, nargs="?", default="8B")
    return p


def convert_from_hf(input_dir, output_dir, model_name, model_flavor):
    spec = import_module(f"torchtitan.models.{model_name}").model_registry(model_flavor)
    config = Path(input_dir) / "config.json"
    if config.exists():
        import json
        spec.check_hf_config(json.loads(config.read_text()), str(config))
    state = from_hf(safetensors_io.load_dir(input_dir), spec.args)
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    torch.save({"model": {k: v.float() for k, v in state.items()}}, out / "__0_0.distcp")
    write_metadata(out, sorted(state), model_only=True)


if __name__ == "__main__":
    args = build_parser().parse_args()
    try:
        convert_from_hf(args.input_dir, args.output_dir, args.model_name, args.model_flavor)
    except (KeyError, ValueError, FileNotFoundError, ModuleNotFoundError) as e:
        print(f"convert_from_hf.py (CPU stand-in): {e}", file=sys.stderr)
        sys.exit(1)
