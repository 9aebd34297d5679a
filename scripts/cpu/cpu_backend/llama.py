"""A tiny Llama-style decoder (RMSNorm, rotary attention with grouped KV heads, SwiGLU), named
like Hugging Face's LlamaForCausalLM so that its full checkpoints look like the real thing, and
configured from a Hugging Face config.json (LlamaConfig field names) as the upstream trainers are."""

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
    rope_theta: float = 10000.0
    rms_norm_eps: float = 1e-5

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

    # LlamaConfig's names (transformers models/llama/configuration_llama.py) for our fields.
    HF_NAMES = {"vocab": "vocab_size", "hidden": "hidden_size", "layers": "num_hidden_layers",
                "heads": "num_attention_heads", "kv_heads": "num_key_value_heads",
                "intermediate": "intermediate_size", "seq_len": "max_position_embeddings",
                "rope_theta": "rope_theta", "rms_norm_eps": "rms_norm_eps"}

    def to_hf(self) -> dict:
        hf = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_act": "silu",
              "tie_word_embeddings": False, "torch_dtype": "float32", "bos_token_id": 1, "eos_token_id": 2}
        hf.update({hf_name: getattr(self, ours) for ours, hf_name in self.HF_NAMES.items()})
        return hf

    @staticmethod
    def from_hf(hf: dict, where: str = "config.json") -> "Config":
        """A model config from LlamaConfig fields; num_key_value_heads defaults to the heads, as
        in LlamaConfig. Refuses what the tiny model does not implement."""
        hf = dict(hf)
        hf.setdefault("num_key_value_heads", hf.get("num_attention_heads"))
        missing = [n for n in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                               "intermediate_size") if n not in hf]
        if missing:
            raise ValueError(f"{where}: no {', '.join(missing)} (a Llama config.json needs them)")
        if hf.get("hidden_act", "silu") != "silu":
            raise ValueError(f"{where}: hidden_act {hf['hidden_act']!r}: the CPU model implements silu only")
        if hf.get("rope_scaling"):
            raise ValueError(f"{where}: rope_scaling is not implemented by the CPU model; remove it")
        kw = {ours: hf[n] for ours, n in Config.HF_NAMES.items() if n in hf}
        kw.setdefault("seq_len", 2048)
        return Config(**kw)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotary(x, positions, theta=10000.0):
    half = x.shape[-1] // 2
    freqs = 1.0 / (theta ** (torch.arange(half, dtype=torch.float32) / half))
    angles = positions[:, None].float() * freqs[None, :]
    cos, sin = angles.cos(), angles.sin()
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


class Attention(nn.Module):
    def __init__(self, c: Config):
        super().__init__()
        self.heads, self.kv_heads, self.dim = c.heads, c.kv_heads, c.hidden // c.heads
        self.theta = c.rope_theta
        self.q_proj = nn.Linear(c.hidden, c.heads * self.dim, bias=False)
        self.k_proj = nn.Linear(c.hidden, c.kv_heads * self.dim, bias=False)
        self.v_proj = nn.Linear(c.hidden, c.kv_heads * self.dim, bias=False)
        self.o_proj = nn.Linear(c.heads * self.dim, c.hidden, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        pos = torch.arange(t)
        q = rotary(self.q_proj(x).view(b, t, self.heads, self.dim).transpose(1, 2), pos, self.theta)
        k = rotary(self.k_proj(x).view(b, t, self.kv_heads, self.dim).transpose(1, 2), pos, self.theta)
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
        self.input_layernorm = RMSNorm(c.hidden, c.rms_norm_eps)
        self.self_attn = Attention(c)
        self.post_attention_layernorm = RMSNorm(c.hidden, c.rms_norm_eps)
        self.mlp = MLP(c)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class Decoder(nn.Module):
    def __init__(self, c: Config):
        super().__init__()
        self.embed_tokens = nn.Embedding(c.vocab, c.hidden)
        self.layers = nn.ModuleList(Layer(c) for _ in range(c.layers))
        self.norm = RMSNorm(c.hidden, c.rms_norm_eps)


class TinyLlama(nn.Module):
    def __init__(self, c: Config):
        super().__init__()
        c.validate()
        self.config = c
        self.model = Decoder(c)
        self.lm_head = nn.Linear(c.hidden, c.vocab, bias=False)

    def logits(self, tokens):
        x = self.model.embed_tokens(tokens)
        for layer in self.model.layers:
            x = layer(x)
        return self.lm_head(self.model.norm(x))

    def forward(self, input_ids, labels):
        return self.causal_lm_loss(input_ids, labels)

    def causal_lm_loss(self, input_ids, labels):
        """LlamaForCausalLM's loss: labels equal to the inputs, shifted here (position t predicts
        label t + 1); -100 is ignored, as in Hugging Face."""
        logits = self.logits(input_ids)[:, :-1]
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1), ignore_index=-100)
