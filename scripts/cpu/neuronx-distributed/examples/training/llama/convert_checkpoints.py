#!/usr/bin/python3
"""CPU stand-in for neuronx-distributed's examples/training/llama/convert_checkpoints.py (release
2.29): the parser of src/neuronx_distributed/scripts/checkpoint_converter.py get_arg_parser(),
read with parse_known_args as the example does, and the same conversions on files:

--convert_from_full_state: --input_dir is the full state dict FILE (torch.load), --config the
  model's config.json FILE; writes <output_dir>/model/dp_rank_00_tp_rank_TT_pp_rank_PP.pt.
--convert_to_full_state: --input_dir is the DIRECTORY of those shard files (e.g.
  <checkpoint>/step_N/model); writes <output_dir>/checkpoint.pt.
--save_xser / --load_xser: the xser layout (see cpu_backend/nxd_checkpoint.py).
Refused (exit 2, with the reason): downloads (--hf_model_name), expert parallelism, padded heads
and intermediate rounding, Megatron-style names, NxDT YAML configs, and --convert_from_xser /
--convert_to_xser, which upstream 2.29 cannot run either (they call its loaders without an
expert-parallel rank and fail with a TypeError)."""

import argparse
import json
from pathlib import Path

from cpu_backend import nxd_checkpoint, nxd_layout, standin
from cpu_backend.llama import Config

SCRIPT = "convert_checkpoints.py"
PARSE_KNOWN = True  # the example reads the converter's parser with parse_known_args


def build_parser():
    """The converter's options: names, types, defaults, required and choices as upstream's."""
    p = argparse.ArgumentParser(description="Full <-> sharded neuronx-distributed checkpoints (CPU stand-in).")
    p.add_argument("--input_dir", type=str, default=None, help="full state file, or the directory of shard files")
    p.add_argument("--hf_model_name", type=str, default=None, help="Hugging Face model to download (refused here)")
    p.add_argument("--output_dir", type=str, required=True, help="where the converted checkpoint goes")
    p.add_argument("--hw_backend", type=str, required=True, help="trn1 or trn2: the qkv_linear head order")
    p.add_argument("--config", type=str, help="the model's config.json file")
    p.add_argument("--model_key", type=str, default="model", help="key of the state dict inside a shard, if wrapped")
    p.add_argument("--tp_size", type=int, default=1, help="tensor-parallel degree")
    p.add_argument("--pp_size", type=int, default=1, help="pipeline-parallel degree")
    p.add_argument("--ep_size", type=int, default=1, help="expert-parallel degree (only 1 here)")
    p.add_argument("--virtual_pp_size", type=int, default=1, help="virtual pipeline stages per PP rank")
    p.add_argument("--n_layers", type=int, default=0, help="decoder layers (informational)")
    p.add_argument("--coalesce_qkv", type=bool, default=False, help="join q, k, v into qkv_proj.weight")
    p.add_argument("--kv_size_multiplier", type=int, default=1, help="replication factor of the key/value heads")
    p.add_argument("--qkv_linear", type=bool, default=False, help="names and head order of the QKV linear layer")
    p.add_argument("--fuse_qkv", type=bool, default=False, help="join the QKV linear's q, k, v per rank")
    p.add_argument("--i_tp_round_factor", type=int, default=0, help="intermediate-size rounding (only 0 here)")
    p.add_argument("--pad_attn_heads", type=bool, default=False, help="pad attention heads (refused here)")
    p.add_argument("--load_xser", type=bool, default=False, help="read shards saved in the xser layout")
    p.add_argument("--save_xser", type=bool, default=False, help="write shards in the xser layout")
    p.add_argument("--convert_from_xser", action="store_true", help="xser shards to plain ones (refused here)")
    p.add_argument("--convert_to_xser", action="store_true", help="plain shards to xser ones (refused here)")
    p.add_argument("--convert_from_full_state", action="store_true", help="full state file to shards")
    p.add_argument("--convert_to_full_state", action="store_true", help="shards to a full state file")
    p.add_argument("--model_style", type=str, choices=["hf", "megatron"], default="hf", help="tensor naming style")
    p.add_argument("--nxdt_yaml_config", type=str, help="NxD Training YAML model config (refused here)")
    return p


def refuse(what):
    standin.refuse(SCRIPT, what)


def check_supported(a):
    modes = [m for m in ("convert_from_full_state", "convert_to_full_state", "convert_from_xser", "convert_to_xser")
             if getattr(a, m)]
    if len(modes) != 1:
        refuse(f"give exactly one --convert_* flag (got {', '.join('--' + m for m in modes) or 'none'}), as upstream "
               "asserts")
    if a.convert_from_xser or a.convert_to_xser:
        refuse(f"--{modes[0]}: upstream 2.29 calls its shard loaders without an expert-parallel rank here and fails "
               "with a TypeError; convert with --convert_to_full_state --load_xser instead")
    unsupported = [(a.hf_model_name and not a.input_dir, "--hf_model_name: no downloads; give --input_dir"),
                   (a.ep_size != 1, "--ep_size other than 1: the tiny model has no experts"),
                   (a.i_tp_round_factor != 0, "--i_tp_round_factor: the tiny model has no expert MLP to pad"),
                   (a.pad_attn_heads, "--pad_attn_heads: padding heads is not implemented"),
                   (a.model_style != "hf", "--model_style megatron: only Hugging Face names are implemented"),
                   (a.nxdt_yaml_config, "--nxdt_yaml_config: give the config.json with --config"),
                   (a.coalesce_qkv and a.qkv_linear, "--coalesce_qkv with --qkv_linear: use --fuse_qkv")]
    for bad, why in unsupported:
        if bad:
            refuse(why)
    if not a.config:
        refuse("--config: the model's config.json is needed (upstream opens it in both directions)")
    if not a.input_dir:
        refuse("--input_dir is needed")


def model_config(path):
    try:
        return Config.from_hf(json.loads(Path(path).read_text()), str(path))
    except (OSError, json.JSONDecodeError, ValueError) as e:
        refuse(f"--config {path}: {e}")


def layout_of(a):
    return nxd_layout.Layout(tp=a.tp_size, pp=a.pp_size, virtual_pp=a.virtual_pp_size, qkv_linear=a.qkv_linear,
                             fuse_qkv=a.fuse_qkv, coalesce_qkv=a.coalesce_qkv,
                             kv_size_multiplier=a.kv_size_multiplier,
                             hw_backend="trn2" if a.hw_backend == "trn2" else "trn1")


def from_full(a, cfg, layout):
    src = Path(a.input_dir)
    if not src.is_file():
        refuse(f"--input_dir {src}: not a file: with --convert_from_full_state it is the full state dict file "
               "(torch.load), e.g. .../pretrained/model.pt")
    full = nxd_checkpoint.torch.load(src, map_location="cpu")
    layers = {int(m.group(1)) for m in map(nxd_layout.LAYER.match, full) if m}
    if layers and len(layers) != cfg.layers:
        cfg = Config(**{**cfg.__dict__, "layers": len(layers)})  # upstream partitions the state's own layers
    try:
        shards = nxd_layout.shard(full, cfg, layout)
    except nxd_layout.LayoutError as e:
        refuse(str(e))
    out = Path(a.output_dir) / "model"
    for (tp, pp), state in sorted(shards.items()):
        path = out / layout.shard_name(tp, pp)
        print(f"Saving to {path}")
        nxd_checkpoint.save_file(state, path, xser=a.save_xser)
    print(f"converted {len(full)} tensors of {src} into {layout.tp} TP x {layout.pp} PP shards under {out}")


def to_full(a, cfg, layout):
    src = Path(a.input_dir)
    if not src.is_dir():
        refuse(f"--input_dir {src}: not a directory: with --convert_to_full_state it is the directory of "
               "dp_rank_00_tp_rank_TT_pp_rank_PP.pt files, e.g. <checkpoint_dir>/step_N/model")
    shards = {}
    for tp in range(layout.tp):
        for pp in range(layout.pp):
            path = src / layout.shard_name(tp, pp)
            if not path.is_file():
                refuse(f"{path}: no such shard (tp_size {layout.tp}, pp_size {layout.pp})", 1)
            has_tensors = Path(f"{path}.tensors").is_dir()
            if has_tensors != bool(a.load_xser):
                refuse(f"{path}: saved {'with' if has_tensors else 'without'} xser; "
                       f"{'add' if has_tensors else 'drop'} --load_xser")
            state = nxd_checkpoint.load_file(path, xser=bool(a.load_xser))
            if a.model_key and a.model_key in state:
                state = state[a.model_key]
            shards[(tp, pp)] = state
    layers = {int(m.group(1)) for s in shards.values() for m in map(nxd_layout.LAYER.match, s) if m}
    if layers and len(layers) != cfg.layers:
        cfg = Config(**{**cfg.__dict__, "layers": len(layers)})
    try:
        full = nxd_layout.merge(shards, cfg, layout)
    except (nxd_layout.LayoutError, RuntimeError) as e:
        refuse(f"cannot merge the shards of {src} with these flags: {e}", 1)
    out = Path(a.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    print(f"Saving full checkpoint to {out / 'checkpoint.pt'}")
    nxd_checkpoint.save_file(full, out / "checkpoint.pt", xser=False)


def main(argv=None):
    a = standin.parse(build_parser(), SCRIPT, known=PARSE_KNOWN, argv=argv)
    check_supported(a)
    cfg = model_config(a.config)
    events = standin.Events()
    direction = "from_full_state" if a.convert_from_full_state else "to_full_state"
    events("start", script=SCRIPT, direction=direction, input_dir=a.input_dir)
    (from_full if a.convert_from_full_state else to_full)(a, cfg, layout_of(a))
    events("end", script=SCRIPT, direction=direction, output_dir=a.output_dir)


if __name__ == "__main__":
    main()
