"""Tensor-parallel sharding in the neuronx-distributed layout: column-parallel weights (q, k, v,
gate, up, lm_head) split on dim 0, row-parallel weights (o_proj, down_proj) on dim 1, the token
embedding on the vocabulary (dim 0); norms are replicated. One file per TP rank:
<dir>/dp_rank_00_tp_rank_<tt>_pp_rank_00.pt."""

from pathlib import Path

import torch

COLUMN = ("q_proj.weight", "k_proj.weight", "v_proj.weight", "gate_proj.weight", "up_proj.weight", "lm_head.weight")
ROW = ("o_proj.weight", "down_proj.weight")
VOCAB = ("embed_tokens.weight",)


def split_dim(name: str):
    if name.endswith(COLUMN) or name.endswith(VOCAB):
        return 0
    if name.endswith(ROW):
        return 1
    return None


def shard_file(directory: Path, tp_rank: int) -> Path:
    return directory / f"dp_rank_00_tp_rank_{tp_rank:02d}_pp_rank_00.pt"


def check_divisible(state: dict, tp: int):
    for name, tensor in state.items():
        dim = split_dim(name)
        if dim is not None and tensor.shape[dim] % tp:
            raise SystemExit(f"{name}: dimension {dim} of size {tensor.shape[dim]} is not divisible by tp={tp}")


def shard(state: dict, tp: int) -> list:
    check_divisible(state, tp)
    shards = [dict() for _ in range(tp)]
    for name, tensor in state.items():
        dim = split_dim(name)
        parts = tensor.chunk(tp, dim=dim) if dim is not None else [tensor] * tp
        for rank, part in enumerate(parts):
            shards[rank][name] = part.clone()
    return shards


def merge(shards: list) -> dict:
    merged = {}
    for name in shards[0]:
        dim = split_dim(name)
        tensors = [s[name] for s in shards]
        merged[name] = torch.cat(tensors, dim=dim) if dim is not None else tensors[0].clone()
    return merged


def save_shards(state: dict, tp: int, directory: Path):
    directory.mkdir(parents=True, exist_ok=True)
    for rank, part in enumerate(shard(state, tp)):
        torch.save(part, shard_file(directory, rank))


def load_shards(directory: Path) -> dict:
    files = sorted(directory.glob("dp_rank_00_tp_rank_*_pp_rank_00.pt"))
    if not files:
        raise SystemExit(f"{directory}: no dp_rank_00_tp_rank_*_pp_rank_00.pt shard files")
    expected = [shard_file(directory, r) for r in range(len(files))]
    if files != expected:
        raise SystemExit(f"{directory}: shard files are not tp_rank_00..{len(files) - 1:02d}")
    return merge([torch.load(f) for f in files])
