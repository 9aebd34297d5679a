"""Qwen3 flavors (dimensions as upstream's torchtitan/models/qwen3/__init__.py at c82675eb6
gives them: per-head q/k RMSNorm, head_dim 128) and the tiny CPU one."""

from torchtitan.models.decoder import ModelArgs
from torchtitan.models.spec import registry

qwen3_args = {
    "tiny": ModelArgs(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=258, hidden_dim=128, head_dim=16,
                      rope_theta=1000000.0, norm_eps=1e-6, qk_norm=True),
    "8B": ModelArgs(dim=4096, n_layers=36, n_heads=32, n_kv_heads=8, vocab_size=151936, hidden_dim=12288,
                    head_dim=128, rope_theta=1000000.0, norm_eps=1e-6, qk_norm=True, max_seq_len=40960),
}


def model_registry(flavor: str):
    return registry(qwen3_args, "qwen3", flavor, "Qwen3ForCausalLM", "qwen3")
