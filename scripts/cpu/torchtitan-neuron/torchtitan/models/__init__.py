"""Models by their upstream short names (the conversion scripts' --model_name)."""

_supported_models = frozenset({"llama3", "qwen3"})
