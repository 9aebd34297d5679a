"""Megatron/NeMo mmap indexed datasets (<prefix>.idx + <prefix>.bin), read and written with numpy.
Samples are GPT-style: the documents' tokens concatenated, sample i is tokens
[i*L, i*L + L] (L + 1 tokens: inputs and shifted labels), so there are (tokens - 1) // L samples,
the count `trnslurm plan` computes."""

import struct
from pathlib import Path

import numpy as np
import torch

MAGIC = b"MMIDIDX\x00\x00"
DTYPES = {1: np.uint8, 2: np.int8, 3: np.int16, 4: np.int32, 5: np.int64, 8: np.uint16}


def prefix_of(path: str) -> Path:
    p = Path(path)
    return p.with_suffix("") if p.suffix in (".idx", ".bin") else p


def write(prefix: Path, documents: list, dtype=np.uint16):
    code = next(c for c, d in DTYPES.items() if d == dtype)
    sizes = np.array([len(d) for d in documents], dtype=np.int32)
    itemsize = np.dtype(dtype).itemsize
    pointers = np.concatenate([[0], np.cumsum(sizes[:-1], dtype=np.int64) * itemsize]).astype(np.int64)
    doc_idx = np.arange(len(documents) + 1, dtype=np.int64)
    with open(prefix.with_suffix(".bin"), "wb") as f:
        for d in documents:
            f.write(np.asarray(d, dtype=dtype).tobytes())
    with open(prefix.with_suffix(".idx"), "wb") as f:
        f.write(MAGIC)
        f.write(struct.pack("<QBQQ", 1, code, len(sizes), len(doc_idx)))
        f.write(sizes.tobytes())
        f.write(pointers.tobytes())
        f.write(doc_idx.tobytes())


class TokenSamples(torch.utils.data.Dataset):
    def __init__(self, path: str, seq_len: int):
        prefix = prefix_of(path)
        idx = prefix.with_suffix(".idx").read_bytes()
        if idx[:9] != MAGIC:
            raise SystemExit(f"{prefix}.idx: not a Megatron index (bad magic)")
        version, code, count, _docs = struct.unpack_from("<QBQQ", idx, 9)
        if version != 1 or code not in DTYPES:
            raise SystemExit(f"{prefix}.idx: unsupported version {version} or dtype code {code}")
        sizes = np.frombuffer(idx, dtype=np.int32, count=count, offset=34)
        self.tokens = np.memmap(prefix.with_suffix(".bin"), dtype=DTYPES[code], mode="r")
        total = int(sizes.sum(dtype=np.int64))
        if total > len(self.tokens):
            raise SystemExit(f"{prefix}.bin: holds {len(self.tokens)} tokens, the index says {total}")
        self.tokens = self.tokens[:total]
        self.seq_len = seq_len
        self.count = (total - 1) // seq_len

    def __len__(self):
        return self.count

    def __getitem__(self, i):
        chunk = torch.from_numpy(self.tokens[i * self.seq_len : (i + 1) * self.seq_len + 1].astype(np.int64))
        return chunk[:-1], chunk[1:]
