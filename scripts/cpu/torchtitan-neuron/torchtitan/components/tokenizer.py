"""HuggingFaceTokenizer at upstream's module path and class name, reading the same HF assets
directory (`--hf_assets_path`): tokenizer.json and tokenizer_config.json (bos_token, eos_token).
The CPU stand-in implements one kind of tokenizer.json, a byte-level BPE without merges (every
UTF-8 byte is a token, GPT-2's byte-to-unicode alphabet), which Hugging Face's `tokenizers` also
loads; anything else is refused with a clear message rather than tokenized differently."""

import json
from pathlib import Path


def bytes_to_unicode():
    """GPT-2's reversible byte -> printable character table (as byte-level BPE vocabularies use)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return dict(zip(printable, (chr(c) for c in chars)))


BOS, EOS = "<|begin_of_text|>", "<|end_of_text|>"


def tokenizer_files(bos=BOS, eos=EOS) -> dict:
    """{file name: JSON} of the byte-level tokenizer the stand-in ships and make_titan_inputs writes."""
    table = bytes_to_unicode()
    vocab = {table[b]: b for b in range(256)}
    added = [{"id": 256 + i, "content": tok, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i, tok in enumerate((bos, eos))]
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "vocab": vocab,
                  "merges": []},
    }
    config = {"bos_token": bos, "eos_token": eos, "tokenizer_class": "PreTrainedTokenizerFast",
              "model_max_length": 131072}
    return {"tokenizer.json": tokenizer, "tokenizer_config.json": config}


class HuggingFaceTokenizer:
    def __init__(self, tokenizer_path: str):
        directory = Path(tokenizer_path)
        path = directory / "tokenizer.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as e:
            raise FileNotFoundError(f"tokenizer.json not found in {directory} (--hf_assets_path): {e.strerror}")
        except ValueError as e:
            raise ValueError(f"{path}: not JSON: {e}") from None
        model = data.get("model", {})
        if model.get("type") != "BPE" or model.get("merges") or \
                (data.get("pre_tokenizer") or {}).get("type") != "ByteLevel":
            raise ValueError(f"{path}: the CPU stand-in reads byte-level BPE tokenizers without merges only "
                             "(scripts/cpu/make_titan_inputs.py writes one); this one is "
                             f"{model.get('type')!r} with {len(model.get('merges') or [])} merges")
        table = bytes_to_unicode()
        vocab = model["vocab"]
        try:
            self._byte_ids = [vocab[table[b]] for b in range(256)]
        except KeyError as e:
            raise ValueError(f"{path}: byte token {e} missing from the vocabulary") from None
        self._id_bytes = {i: b for b, i in enumerate(self._byte_ids)}
        specials = {t["content"]: t["id"] for t in data.get("added_tokens", [])}
        config = {}
        config_path = directory / "tokenizer_config.json"
        if config_path.exists():
            config = json.loads(config_path.read_text(encoding="utf-8"))

        def token(key):
            value = config.get(key)
            return value.get("content") if isinstance(value, dict) else value

        self.bos_token, self.eos_token = token("bos_token"), token("eos_token")
        self.bos_id = specials.get(self.bos_token) if self.bos_token else None
        self.eos_id = specials.get(self.eos_token) if self.eos_token else None
        self._vocab_size = max([*vocab.values(), *specials.values()]) + 1

    def get_vocab_size(self) -> int:
        return self._vocab_size

    def encode(self, text: str, add_bos: bool = True, add_eos: bool = True) -> list:
        ids = [self._byte_ids[b] for b in text.encode("utf-8")]
        if add_bos and self.bos_id is not None:
            ids.insert(0, self.bos_id)
        if add_eos and self.eos_id is not None:
            ids.append(self.eos_id)
        return ids

    def decode(self, ids) -> str:
        return bytes(self._id_bytes[i] for i in ids if i in self._id_bytes).decode("utf-8", "replace")
