"""A small Llama-style decoder with TorchTitan's parameter names (tok_embeddings, layers.N.attention.
wq/wk/wv/wo, feed_forward.w1/w2/w3, attention_norm, ffn_norm, norm, output) and interleaved rotary
pairs, so that its checkpoints look like TorchTitan's and converting to Hugging Face needs the
same q/k permutation; Qwen3's per-head q/k RMSNorm when qk_norm is set. Written for the CPU
stand-in; not upstream code."""

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F


@dataclass
class ModelArgs:
    dim: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    vocab_size: int
    hidden_dim: int
    head_dim: int = 0  # 0: dim // n_heads
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5
    qk_norm: bool = False
    max_seq_len: int = 131072

    def __post_init__(self):
        if not self.head_dim:
            self.head_dim = self.dim // self.n_heads
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_heads {self.n_heads} is not a multiple of n_kv_heads {self.n_kv_heads}")

    def num_params(self) -> int:
        attn = self.dim * self.head_dim * (2 * self.n_heads + 2 * self.n_kv_heads)
        ffn = 3 * self.dim * self.hidden_dim
        return 2 * self.vocab_size * self.dim + self.n_layers * (attn + ffn + 2 * self.dim) + self.dim

    def flops_per_token(self, seq_len: int) -> int:
        """6 x parameters + attention, as upstream's estimate counts them."""
        return 6 * self.num_params() + 12 * self.n_layers * self.n_heads * self.head_dim * seq_len


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_interleaved(x, theta):
    """Rotary embedding on adjacent pairs (x0, x1), (x2, x3), ... as TorchTitan's complex form."""
    t, d = x.shape[-2], x.shape[-1]
    freqs = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    angles = torch.arange(t, dtype=torch.float32)[:, None] * freqs[None, :]
    cos, sin = angles.cos(), angles.sin()
    pairs = x.reshape(*x.shape[:-1], d // 2, 2)
    a, b = pairs[..., 0], pairs[..., 1]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).reshape(x.shape)


class Attention(nn.Module):
    def __init__(self, a: ModelArgs):
        super().__init__()
        self.a = a
        self.wq = nn.Linear(a.dim, a.n_heads * a.head_dim, bias=False)
        self.wk = nn.Linear(a.dim, a.n_kv_heads * a.head_dim, bias=False)
        self.wv = nn.Linear(a.dim, a.n_kv_heads * a.head_dim, bias=False)
        self.wo = nn.Linear(a.n_heads * a.head_dim, a.dim, bias=False)
        if a.qk_norm:
            self.q_norm = RMSNorm(a.head_dim, a.norm_eps)
            self.k_norm = RMSNorm(a.head_dim, a.norm_eps)

    def forward(self, x):
        a = self.a
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, a.n_heads, a.head_dim)
        k = self.wk(x).view(b, t, a.n_kv_heads, a.head_dim)
        v = self.wv(x).view(b, t, a.n_kv_heads, a.head_dim)
        if a.qk_norm:
            q, k = self.q_norm(q), self.k_norm(k)
        q = rotate_interleaved(q.transpose(1, 2), a.rope_theta)
        k = rotate_interleaved(k.transpose(1, 2), a.rope_theta)
        v = v.transpose(1, 2)
        repeat = a.n_heads // a.n_kv_heads
        k, v = k.repeat_interleave(repeat, dim=1), v.repeat_interleave(repeat, dim=1)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(a.head_dim)
        scores = scores.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
        out = F.softmax(scores, dim=-1) @ v
        return self.wo(out.transpose(1, 2).reshape(b, t, -1))


class FeedForward(nn.Module):
    def __init__(self, a: ModelArgs):
        super().__init__()
        self.w1 = nn.Linear(a.dim, a.hidden_dim, bias=False)
        self.w2 = nn.Linear(a.hidden_dim, a.dim, bias=False)
        self.w3 = nn.Linear(a.dim, a.hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, a: ModelArgs):
        super().__init__()
        self.attention = Attention(a)
        self.feed_forward = FeedForward(a)
        self.attention_norm = RMSNorm(a.dim, a.norm_eps)
        self.ffn_norm = RMSNorm(a.dim, a.norm_eps)

    def forward(self, x):
        x = x + self.attention(self.attention_norm(x))
        return x + self.feed_forward(self.ffn_norm(x))


class Decoder(nn.Module):
    def __init__(self, a: ModelArgs):
        super().__init__()
        self.args = a
        self.tok_embeddings = nn.Embedding(a.vocab_size, a.dim)
        self.layers = nn.ModuleDict({str(i): Block(a) for i in range(a.n_layers)})
        self.norm = RMSNorm(a.dim, a.norm_eps)
        self.output = nn.Linear(a.dim, a.vocab_size, bias=False)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.trunc_normal_(p, std=0.02)

    def forward(self, tokens):
        x = self.tok_embeddings(tokens)
        for layer in self.layers.values():
            x = layer(x)
        return self.output(self.norm(x))


def hf_permute(w, n_heads):
    """TorchTitan's interleaved q/k rows -> Hugging Face's rotate-half order (per head)."""
    rows, cols = w.shape
    return w.view(n_heads, rows // n_heads // 2, 2, cols).transpose(1, 2).reshape(rows, cols)


def tt_permute(w, n_heads):
    """The inverse of hf_permute."""
    rows, cols = w.shape
    return w.view(n_heads, 2, rows // n_heads // 2, cols).transpose(1, 2).reshape(rows, cols)


def name_pairs(a: ModelArgs):
    """(TorchTitan name, Hugging Face Llama/Qwen3 name, heads to permute by or 0), as upstream's
    state_dict_adapter maps them."""
    yield "tok_embeddings.weight", "model.embed_tokens.weight", 0
    for i in range(a.n_layers):
        p, h = f"layers.{i}.", f"model.layers.{i}."
        yield p + "attention.wq.weight", h + "self_attn.q_proj.weight", a.n_heads
        yield p + "attention.wk.weight", h + "self_attn.k_proj.weight", a.n_kv_heads
        yield p + "attention.wv.weight", h + "self_attn.v_proj.weight", 0
        yield p + "attention.wo.weight", h + "self_attn.o_proj.weight", 0
        if a.qk_norm:
            yield p + "attention.q_norm.weight", h + "self_attn.q_norm.weight", 0
            yield p + "attention.k_norm.weight", h + "self_attn.k_norm.weight", 0
        yield p + "feed_forward.w1.weight", h + "mlp.gate_proj.weight", 0
        yield p + "feed_forward.w2.weight", h + "mlp.down_proj.weight", 0
        yield p + "feed_forward.w3.weight", h + "mlp.up_proj.weight", 0
        yield p + "attention_norm.weight", h + "input_layernorm.weight", 0
        yield p + "ffn_norm.weight", h + "post_attention_layernorm.weight", 0
    yield "norm.weight", "model.norm.weight", 0
    yield "output.weight", "lm_head.weight", 0


def to_hf(state: dict, a: ModelArgs) -> dict:
    return {hf: hf_permute(state[tt], heads) if heads else state[tt] for tt, hf, heads in name_pairs(a)}


def from_hf(hf: dict, a: ModelArgs) -> dict:
    """The inverse of to_hf; a missing tensor is a KeyError naming it."""
    out = {}
    for tt, name, heads in name_pairs(a):
        if name not in hf:
            raise KeyError(f"{name} is not in the Hugging Face checkpoint")
        out[tt] = tt_permute(hf[name], heads) if heads else hf[name]
    return out
