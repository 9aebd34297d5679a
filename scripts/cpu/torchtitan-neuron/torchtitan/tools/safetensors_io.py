"""The safetensors format, written and read here because Debian 12 packages no safetensors: an
8-byte little-endian header length, a JSON header ({name: {dtype, shape, data_offsets}}, plus
"__metadata__"), then the raw little-endian tensor bytes. Files it writes load with the real
library; it reads the dtypes it writes (F32, BF16, F16) and refuses others by name."""

import json
import struct
from pathlib import Path

import torch

DTYPES = {torch.float32: "F32", torch.bfloat16: "BF16", torch.float16: "F16", torch.int64: "I64"}
BY_NAME = {v: k for k, v in DTYPES.items()}


def save_file(tensors: dict, path, metadata=None):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous().cpu()
        if t.dtype not in DTYPES:
            raise ValueError(f"{name}: dtype {t.dtype} is not written by this safetensors writer")
        raw = t.view(torch.uint8).numpy().tobytes() if t.dim() else t.reshape(1).view(torch.uint8).numpy().tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    tmp = Path(str(path) + ".tmp")
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)
    tmp.replace(path)


def load_file(path) -> dict:
    data = Path(path).read_bytes()
    if len(data) < 8:
        raise ValueError(f"{path}: too short for a safetensors file")
    (size,) = struct.unpack("<Q", data[:8])
    if 8 + size > len(data):
        raise ValueError(f"{path}: header length {size} runs past the end of the file")
    try:
        header = json.loads(data[8:8 + size])
    except ValueError as e:
        raise ValueError(f"{path}: header is not JSON ({e})") from None
    out, base = {}, 8 + size
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] not in BY_NAME:
            raise ValueError(f"{path}: {name}: dtype {info['dtype']} is not read by the CPU stand-in")
        begin, end = info["data_offsets"]
        raw = bytearray(data[base + begin:base + end])
        t = torch.frombuffer(raw, dtype=torch.uint8) if raw else torch.empty(0, dtype=torch.uint8)
        out[name] = t.view(BY_NAME[info["dtype"]]).reshape(info["shape"]).clone()
    return out


def load_dir(directory) -> dict:
    """Every tensor of an HF checkpoint directory: model.safetensors.index.json's files, or each
    *.safetensors file."""
    directory = Path(directory)
    index = directory / "model.safetensors.index.json"
    if index.exists():
        files = sorted(set(json.loads(index.read_text())["weight_map"].values()))
    else:
        files = sorted(p.name for p in directory.glob("*.safetensors"))
    if not files:
        raise FileNotFoundError(f"{directory}: no *.safetensors file")
    tensors = {}
    for name in files:
        tensors.update(load_file(directory / name))
    return tensors


def save_dir(tensors: dict, directory, shards: int = 1):
    """model-0000K-of-0000N.safetensors (or model.safetensors) plus model.safetensors.index.json."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    names = sorted(tensors)
    shards = max(1, min(shards, len(names)))
    weight_map, total = {}, 0
    for k in range(shards):
        part = names[k::shards]
        fname = "model.safetensors" if shards == 1 else f"model-{k + 1:05d}-of-{shards:05d}.safetensors"
        save_file({n: tensors[n] for n in part}, directory / fname, {"format": "pt"})
        for n in part:
            weight_map[n] = fname
            total += tensors[n].numel() * tensors[n].element_size()
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    (directory / "model.safetensors.index.json").write_text(json.dumps(index, indent=2) + "\n")
