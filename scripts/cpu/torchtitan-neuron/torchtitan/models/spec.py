"""What a model registry returns in the CPU stand-in: the model's arguments and how its Hugging
Face config.json reads (the conversion scripts and the HF initial load use both)."""

import os
from dataclasses import dataclass, replace

from torchtitan.models.decoder import Decoder, ModelArgs

# The tiny dimensions every flavor takes under TRNSLURM_STANDIN_TINY_MODEL=1, so that a published
# config (8B dimensions) trains on CPUs with everything else it sets unchanged.
TINY = dict(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, hidden_dim=128, head_dim=16, vocab_size=258)


@dataclass
class ModelSpec:
    name: str
    flavor: str
    args: ModelArgs
    hf_architecture: str
    hf_model_type: str

    def build(self) -> Decoder:
        return Decoder(self.args)

    def hf_config(self) -> dict:
        a = self.args
        return {"architectures": [self.hf_architecture], "model_type": self.hf_model_type,
                "hidden_size": a.dim, "num_hidden_layers": a.n_layers, "num_attention_heads": a.n_heads,
                "num_key_value_heads": a.n_kv_heads, "head_dim": a.head_dim, "intermediate_size": a.hidden_dim,
                "vocab_size": a.vocab_size, "rope_theta": a.rope_theta, "rms_norm_eps": a.norm_eps,
                "max_position_embeddings": a.max_seq_len, "hidden_act": "silu", "tie_word_embeddings": False,
                "torch_dtype": "float32"}

    def check_hf_config(self, hf: dict, where: str):
        """The HF config.json must describe this model: a mismatch is an error naming the field."""
        mine = self.hf_config()
        for key in ("hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
                    "intermediate_size", "vocab_size"):
            if key in hf and hf[key] != mine[key]:
                raise ValueError(f"{where}: {key} is {hf[key]}, but {self.name} {self.flavor} has {mine[key]}")


def registry(table: dict, name: str, flavor: str, architecture: str, model_type: str) -> ModelSpec:
    if flavor not in table:
        raise KeyError(f"{name} has no flavor {flavor!r}; flavors: {', '.join(sorted(table))}")
    args = table[flavor]
    if os.environ.get("TRNSLURM_STANDIN_TINY_MODEL") == "1":
        args = replace(args, **TINY)
    return ModelSpec(name, flavor, args, architecture, model_type)
