"""Llama 3 / 3.1 flavors (dimensions as upstream's torchtitan/models/llama3/__init__.py at
c82675eb6 gives them) and the tiny CPU one."""

from torchtitan.models.decoder import ModelArgs
from torchtitan.models.spec import registry

llama3_args = {
    "tiny": ModelArgs(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=258, hidden_dim=128,
                      rope_theta=500000.0),
    "8B": ModelArgs(dim=4096, n_layers=32, n_heads=32, n_kv_heads=8, vocab_size=128256, hidden_dim=14336,
                    rope_theta=500000.0),
    "70B": ModelArgs(dim=8192, n_layers=80, n_heads=64, n_kv_heads=8, vocab_size=128256, hidden_dim=28672,
                     rope_theta=500000.0),
}


def model_registry(flavor: str):
    return registry(llama3_args, "llama3", flavor, "LlamaForCausalLM", "llama")
