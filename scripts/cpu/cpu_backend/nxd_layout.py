"""How neuronx-distributed splits a Llama's full (Hugging Face-named) state over tensor- and
pipeline-parallel ranks, and back: the rules of its checkpoint converter
(src/neuronx_distributed/scripts/checkpoint_converter.py at release 2.29, convert_full_state_to_tp
and merge_tp_checkpoints) and of its pipeline partitioning (pipeline/partition.py,
create_partitions and stage_to_pipeline_parallel_rank), written here for the CPU backend.

Per TP rank: the embedding and lm_head split on the vocabulary (dim 0); q, k, v, gate and up
on dim 0 (gate and up then joined as gate_up_proj = [gate_r; up_r]); o_proj and down_proj on
dim 1; norms whole. Per PP rank: the embedding on the first, lm_head and the final norm on the
last, each decoder layer on the rank of its stage (pp x virtual-pp stages, the remainder of
layers going to the last stages; stage s runs on PP rank s % pp).

With qkv_linear (NxD's GQAQKVColumnParallelLinear) q, k, v become qkv_proj.weight_q/_k/_v:
k and v repeated kv_size_multiplier times before the split, q's heads (and o_proj's columns)
reordered so that each rank's query heads meet its key/value heads: on trn1 interleaved, on
trn2 in blocks (the converter's --hw_backend). fuse_qkv joins them per rank as
qkv_proj.weight_qkv; coalesce_qkv (query heads = key/value heads only) as qkv_proj.weight."""

import re
from dataclasses import dataclass

import torch

LAYER = re.compile(r"^model\.layers\.(\d+)\.")


class LayoutError(ValueError):
    pass


@dataclass(frozen=True)
class Layout:
    tp: int = 1
    pp: int = 1
    virtual_pp: int = 1
    qkv_linear: bool = False
    fuse_qkv: bool = False
    coalesce_qkv: bool = False
    kv_size_multiplier: int = 1
    hw_backend: str = "trn1"

    def shard_name(self, tp_rank: int, pp_rank: int) -> str:
        return f"dp_rank_00_tp_rank_{tp_rank:02d}_pp_rank_{pp_rank:02d}.pt"


def stage_of_layers(layers: int, stages: int) -> list:
    """The pipeline stage of each decoder layer: equal parts, the remainder to the last stages."""
    if layers < stages:
        raise LayoutError(f"{layers} decoder layers cannot fill {stages} pipeline stages (pp x virtual pp)")
    sizes = [layers // stages] * stages
    for i in range(layers % stages):
        sizes[stages - 1 - i] += 1
    return [s for s, n in enumerate(sizes) for _ in range(n)]


def _pp_rank_of(name: str, layout: Layout, stages: list):
    """The PP rank holding `name`, or None for every rank."""
    if "embed_tokens" in name:
        return 0
    if "lm_head" in name or name == "model.norm.weight":
        return layout.pp - 1
    m = LAYER.match(name)
    return stages[int(m.group(1))] % layout.pp if m else None


def _q_head_groups(cfg, layout: Layout) -> list:
    """For each TP rank, the original query heads it holds, in order (qkv_linear only)."""
    q, kv, m, tp = cfg.heads, cfg.kv_heads, layout.kv_size_multiplier, layout.tp
    if layout.hw_backend == "trn2":
        if q % tp:
            raise LayoutError(f"{q} query heads do not divide over tp {tp}")
        per = q // tp
        return [list(range(r * per, (r + 1) * per)) for r in range(tp)]
    if kv * m != tp or q % tp or tp % kv:
        raise LayoutError(f"qkv_linear on trn1 needs key/value heads x kv_size_multiplier = tp, query heads a "
                          f"multiple of tp: here {kv} x {m} and tp {tp}, {q} query heads")
    per = q // tp
    order = [k * (tp // kv) + i for i in range(tp // kv) for k in range(kv)]
    return [list(range(g * per, (g + 1) * per)) for g in order]


def _split(t: torch.Tensor, dim: int, parts: int, name: str) -> list:
    if t.shape[dim] % parts:
        raise LayoutError(f"{name}: dimension {dim} of size {t.shape[dim]} is not divisible by tp {parts}")
    return [c.clone() for c in t.chunk(parts, dim=dim)]


def _heads(t: torch.Tensor, heads: list, head_dim: int, dim: int) -> torch.Tensor:
    idx = torch.tensor([h * head_dim + j for h in heads for j in range(head_dim)])
    return t.index_select(dim, idx).clone()


def _attention_shards(prefix, full, cfg, layout: Layout) -> list:
    """The q, k, v, o tensors of one layer, per TP rank, under NxD's names."""
    tp, hd = layout.tp, cfg.hidden // cfg.heads
    q, k, v, o = (full.pop(f"{prefix}.{n}_proj.weight") for n in "qkvo")
    out = [dict() for _ in range(tp)]
    if layout.qkv_linear:
        groups = _q_head_groups(cfg, layout)
        m = layout.kv_size_multiplier
        ks = _split(k.repeat(m, 1), 0, tp, f"{prefix}.k_proj.weight x kv_size_multiplier")
        vs = _split(v.repeat(m, 1), 0, tp, f"{prefix}.v_proj.weight x kv_size_multiplier")
        for r in range(tp):
            qr = _heads(q, groups[r], hd, 0)
            if layout.fuse_qkv:
                out[r][f"{prefix}.qkv_proj.weight_qkv"] = torch.cat([qr, ks[r], vs[r]], 0)
            else:
                out[r].update({f"{prefix}.qkv_proj.weight_q": qr, f"{prefix}.qkv_proj.weight_k": ks[r],
                               f"{prefix}.qkv_proj.weight_v": vs[r]})
            out[r][f"{prefix}.o_proj.weight"] = _heads(o, groups[r], hd, 1)
        return out
    qs, ks, vs = (_split(t, 0, tp, f"{prefix}.{n}_proj.weight") for t, n in ((q, "q"), (k, "k"), (v, "v")))
    os_ = _split(o, 1, tp, f"{prefix}.o_proj.weight")
    for r in range(tp):
        if layout.coalesce_qkv:
            if cfg.heads != cfg.kv_heads:
                raise LayoutError("coalesce_qkv joins q, k and v of equal size: this model has grouped key/value "
                                  f"heads ({cfg.heads} query, {cfg.kv_heads} key/value)")
            out[r][f"{prefix}.qkv_proj.weight"] = torch.cat([qs[r], ks[r], vs[r]], 0)
        else:
            out[r].update({f"{prefix}.q_proj.weight": qs[r], f"{prefix}.k_proj.weight": ks[r],
                           f"{prefix}.v_proj.weight": vs[r]})
        out[r][f"{prefix}.o_proj.weight"] = os_[r]
    return out


def shard(full: dict, cfg, layout: Layout) -> dict:
    """{(tp_rank, pp_rank): state} of a full state dict."""
    full = dict(full)
    stages = stage_of_layers(cfg.layers, layout.pp * layout.virtual_pp)
    per_tp = [dict() for _ in range(layout.tp)]
    for i in range(cfg.layers):
        prefix = f"model.layers.{i}.self_attn"
        if f"{prefix}.q_proj.weight" in full:
            for r, part in enumerate(_attention_shards(prefix, full, cfg, layout)):
                per_tp[r].update(part)
        mlp = f"model.layers.{i}.mlp"
        if f"{mlp}.gate_proj.weight" in full:
            gates = _split(full.pop(f"{mlp}.gate_proj.weight"), 0, layout.tp, f"{mlp}.gate_proj.weight")
            ups = _split(full.pop(f"{mlp}.up_proj.weight"), 0, layout.tp, f"{mlp}.up_proj.weight")
            for r in range(layout.tp):
                per_tp[r][f"{mlp}.gate_up_proj.weight"] = torch.cat([gates[r], ups[r]], 0)
    for name, t in full.items():
        if "embed_tokens" in name or "lm_head" in name:
            parts = _split(t, 0, layout.tp, name)
        elif "down_proj" in name:
            parts = _split(t, 1, layout.tp, name)
        else:
            parts = [t.clone() for _ in range(layout.tp)]
        for r in range(layout.tp):
            per_tp[r][name] = parts[r]
    shards = {}
    for r in range(layout.tp):
        for p in range(layout.pp):
            shards[(r, p)] = {n: t for n, t in per_tp[r].items() if _pp_rank_of(n, layout, stages) in (None, p)}
    return shards


def merge(shards: dict, cfg, layout: Layout) -> dict:
    """The full state dict of {(tp_rank, pp_rank): state}, the inverse of shard()."""
    missing = [k for k in ((r, p) for r in range(layout.tp) for p in range(layout.pp)) if k not in shards]
    if missing:
        raise LayoutError(f"no shard for (tp_rank, pp_rank) {missing[0]} of tp {layout.tp} x pp {layout.pp}")
    per_tp = []
    for r in range(layout.tp):
        merged = {}
        for p in range(layout.pp):
            merged.update(shards[(r, p)])
        per_tp.append(merged)
    hd = cfg.hidden // cfg.heads
    full = {}
    groups = _q_head_groups(cfg, layout) if layout.qkv_linear else None
    for name in per_tp[0]:
        parts = [s[name] for s in per_tp]
        m = re.match(r"^(.*)\.qkv_proj\.weight(_qkv|_q|_k|_v)?$", name)
        if m:
            prefix, kind = m.group(1), m.group(2)
            kv_rows = cfg.kv_heads * hd * (layout.kv_size_multiplier if layout.qkv_linear else 1) // layout.tp
            if kind in ("_qkv", None):
                q_rows = parts[0].shape[0] - 2 * kv_rows
                splits = [p.split([q_rows, kv_rows, kv_rows], 0) for p in parts]
                pieces = {"q": [s[0] for s in splits], "k": [s[1] for s in splits], "v": [s[2] for s in splits]}
            else:
                if kind != "_q":
                    continue  # _k and _v are taken with _q
                pieces = {c: [s[f"{prefix}.qkv_proj.weight_{c}"] for s in per_tp] for c in "qkv"}
            if layout.qkv_linear:
                full[f"{prefix}.q_proj.weight"] = _unorder(pieces["q"], groups, hd, 0, cfg.heads)
                for c in "kv":
                    full[f"{prefix}.{c}_proj.weight"] = torch.cat(pieces[c], 0).chunk(layout.kv_size_multiplier)[0].clone()
            else:
                for c in "qkv":
                    full[f"{prefix}.{c}_proj.weight"] = torch.cat(pieces[c], 0)
        elif name.endswith("gate_up_proj.weight"):
            halves = [p.chunk(2, 0) for p in parts]
            full[name.replace("gate_up_proj", "gate_proj")] = torch.cat([h[0] for h in halves], 0)
            full[name.replace("gate_up_proj", "up_proj")] = torch.cat([h[1] for h in halves], 0)
        elif "o_proj" in name and layout.qkv_linear:
            full[name] = _unorder(parts, groups, hd, 1, cfg.heads)
        elif name.endswith(("q_proj.weight", "k_proj.weight", "v_proj.weight")) or "embed_tokens" in name \
                or "lm_head" in name:
            full[name] = torch.cat(parts, 0)
        elif "o_proj" in name or "down_proj" in name:
            full[name] = torch.cat(parts, 1)
        else:
            full[name] = parts[0].clone()
    return full


def _unorder(parts, groups, head_dim, dim, heads):
    """Puts the heads each rank holds (groups[r], in order) back in their original places."""
    joined = torch.cat(parts, dim)
    order = [h for g in groups for h in g]
    idx = torch.empty(heads * head_dim, dtype=torch.long)
    for pos, h in enumerate(order):
        idx[h * head_dim:(h + 1) * head_dim] = torch.arange(pos * head_dim, (pos + 1) * head_dim)
    return joined.index_select(dim, idx).clone()


def full_names(cfg) -> set:
    """The tensor names of the full Hugging Face state of `cfg`."""
    names = {"model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"}
    for i in range(cfg.layers):
        p = f"model.layers.{i}"
        names |= {f"{p}.self_attn.{n}_proj.weight" for n in "qkvo"}
        names |= {f"{p}.mlp.{n}_proj.weight" for n in ("gate", "up", "down")}
        names |= {f"{p}.input_layernorm.weight", f"{p}.post_attention_layernorm.weight"}
    return names
