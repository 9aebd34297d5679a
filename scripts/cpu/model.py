"""A tiny Llama-style decoder (RMSNorm, rotary attention with grouped KV heads, SwiGLU), named
like Hugging Face's LlamaForCausalLM so that its full checkpoints look like the real thing."""

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F


@dataclass
class Config:
    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    intermediate: int
    seq_len: int

    def validate(self):
        if self.hidden % self.heads:
            raise ValueError(f"hidden {self.hidden} is not a multiple of heads {self.heads}")
        if self.heads % self.kv_heads:
            raise ValueError(f"heads {self.heads} is not a multiple of kv_heads {self.kv_heads}")

    def save(self, directory: Path):
        (directory / "config.json").write_text(json.dumps(asdict(self), indent=2) + "\n")

    @staticmethod
    def load(directory: Path) -> "Config":
        return Config(**json.loads((directory / "config.json").read_text()))


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotary(x, positions):
    half = x.shape[-1] // 2
    freqs = 1.0 / (10000 ** (torch.arange(half, dtype=torch.float32) / half))
    angles = positions[:, None].float() * freqs[None, :]
    cos, sin = angles.cos(), angles.sin()
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


class Attention(nn.Module):
    def __init__(self, c: Config):
        super().__init__()
        self.heads, self.kv_heads, self.dim = c.heads, c.kv_heads, c.hidden // c.heads
        self.q_proj = nn.Linear(c.hidden, c.heads * self.dim, bias=False)
        self.k_proj = nn.Linear(c.hidden, c.kv_heads * self.dim, bias=False)
        self.v_proj = nn.Linear(c.hidden, c.kv_heads * self.dim, bias=False)
        self.o_proj = nn.Linear(c.heads * self.dim, c.hidden, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        pos = torch.arange(t)
        q = rotary(self.q_proj(x).view(b, t, self.heads, self.dim).transpose(1, 2), pos)
        k = rotary(self.k_proj(x).view(b, t, self.kv_heads, self.dim).transpose(1, 2), pos)
        v = self.v_proj(x).view(b, t, self.kv_heads, self.dim).transpose(1, 2)
        repeat = self.heads // self.kv_heads
        k, v = k.repeat_interleave(repeat, dim=1), v.repeat_interleave(repeat, dim=1)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.dim)
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
        out = F.softmax(scores, dim=-1) @ v
        return self.o_proj(out.transpose(1, 2).reshape(b, t, -1))


class MLP(nn.Module):
    def __init__(self, c: Config):
        super().__init__()
        self.gate_proj = nn.Linear(c.hidden, c.intermediate, bias=False)
        self.up_proj = nn.Linear(c.hidden, c.intermediate, bias=False)
        self.down_proj = nn.Linear(c.intermediate, c.hidden, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self, c: Config):
        super().__init__()
        self.input_layernorm = RMSNorm(c.hidden)
        self.self_attn = Attention(c)
        self.post_attention_layernorm = RMSNorm(c.hidden)
        self.mlp = MLP(c)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class Decoder(nn.Module):
    def __init__(self, c: Config):
        super().__init__()
        self.embed_tokens = nn.Embedding(c.vocab, c.hidden)
        self.layers = nn.ModuleList(Layer(c) for _ in range(c.layers))
        self.norm = RMSNorm(c.hidden)


class TinyLlama(nn.Module):
    def __init__(self, c: Config):
        super().__init__()
        c.validate()
        self.config = c
        self.model = Decoder(c)
        self.lm_head = nn.Linear(c.hidden, c.vocab, bias=False)

    def forward(self, tokens, labels):
        x = self.model.embed_tokens(tokens)
        for layer in self.model.layers:
            x = layer(x)
        logits = self.lm_head(self.model.norm(x))
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
