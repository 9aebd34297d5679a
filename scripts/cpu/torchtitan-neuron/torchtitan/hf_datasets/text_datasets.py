"""The text dataset as upstream's hf_datasets/text_datasets.py reads it (c82675eb6), for a local
corpus: `--dataloader.dataset c4_test --dataloader.dataset_path DIR`, a directory of JSON lines
(.jsonl/.json) or CSV files with a `text` column (`load_dataset(DIR)`; parquet and arrow need
pyarrow, which Debian 12 does not package: refused with a message). Documents are split across
data-parallel ranks in contiguous blocks (split_dataset_by_node on a map-style dataset), each
tokenized on the fly with BOS and EOS, concatenated, and cut into chunks of seq_len + 1 tokens
(input = the first seq_len, label = the last seq_len); the token buffer carries over; with
`infinite` the data loops, each later pass reshuffled with seed 42 + epoch (numpy's default_rng
permutation, as datasets' shuffle)."""

import csv
import io
import json
import logging
from pathlib import Path

import numpy as np
import torch

logger = logging.getLogger()

TEXT_SUFFIXES = (".jsonl", ".json", ".csv")
REFUSED_SUFFIXES = (".parquet", ".arrow")


class DatasetError(ValueError):
    pass


def _json_documents(path: Path):
    data = path.read_bytes()
    stripped = data.lstrip()
    if stripped.startswith(b"["):
        try:
            rows = json.loads(data)
        except ValueError as e:
            raise DatasetError(f"{path}: not JSON ({e})") from None
        for i, row in enumerate(rows):
            yield row, f"{path}: row {i}"
        return
    offset = 0
    for line in io.BytesIO(data):
        if line.strip():
            try:
                row = json.loads(line)
            except ValueError as e:
                raise DatasetError(f"{path}: byte {offset}: not a JSON line ({e})") from None
            yield row, f"{path}: byte {offset}"
        offset += len(line)


def _csv_documents(path: Path):
    with open(path, newline="", encoding="utf-8") as f:
        for i, row in enumerate(csv.DictReader(f)):
            yield row, f"{path}: row {i + 1}"


def load_documents(directory: str) -> list:
    """Every document's text, in file-name order then file order."""
    root = Path(directory)
    if not root.is_dir():
        raise DatasetError(f"dataset_path {directory}: not a directory")
    if (root / "dataset_info.json").exists() or (root / "state.json").exists():
        raise DatasetError(f"dataset_path {directory}: a save_to_disk folder, which load_dataset refuses; "
                           "give a directory of .jsonl/.json/.csv files with a `text` column")
    files = sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith("."))
    refused = [p for p in files if p.suffix in REFUSED_SUFFIXES]
    if refused:
        raise DatasetError(f"{refused[0]}: parquet/arrow files need pyarrow, which the CPU stand-in does not have; "
                           "convert the corpus to .jsonl (upstream reads both)")
    texts = [p for p in files if p.suffix in TEXT_SUFFIXES]
    if not texts:
        raise DatasetError(f"dataset_path {directory}: no .jsonl, .json or .csv file")
    docs = []
    for path in texts:
        rows = _csv_documents(path) if path.suffix == ".csv" else _json_documents(path)
        for row, where in rows:
            if not isinstance(row, dict) or "text" not in row:
                raise DatasetError(f"{where}: no `text` column")
            if not isinstance(row["text"], str):
                raise DatasetError(f"{where}: `text` is not a string")
            docs.append(row["text"])
    return docs


def shard_bounds(n: int, world: int, rank: int):
    """The contiguous block of rank's documents (datasets' shard(contiguous=True))."""
    div, mod = divmod(n, world)
    start = div * rank + min(rank, mod)
    return start, start + div + (1 if rank < mod else 0)


class HuggingFaceTextDataset:
    def __init__(self, dataset_name, dataset_path, tokenizer, seq_len, dp_rank, dp_world_size, infinite):
        if dataset_path is None:
            if dataset_name != "c4_test":
                raise DatasetError(f"dataset {dataset_name!r} needs a download, which the CPU stand-in does "
                                   "not do: give --dataloader.dataset_path")
            dataset_path = "tests/assets/c4_test"
        docs = load_documents(dataset_path)
        start, end = shard_bounds(len(docs), dp_world_size, dp_rank)
        self.original = docs[start:end]
        if not self.original:
            raise DatasetError(f"dataset_path {dataset_path}: {len(docs)} documents leave data-parallel rank "
                               f"{dp_rank} of {dp_world_size} none")
        self.name, self.tokenizer, self.seq_len, self.infinite = dataset_name, tokenizer, seq_len, infinite
        self.order = list(range(len(self.original)))
        self.sample_idx, self.epoch, self.buffer = 0, 0, []

    def next_sample(self):
        """(input, label) of seq_len tokens each; StopIteration when a finite pass ends."""
        need = self.seq_len + 1
        while len(self.buffer) < need:
            if self.sample_idx == len(self.order):
                if not self.infinite:
                    raise StopIteration
                self.sample_idx, self.epoch = 0, self.epoch + 1
                self.order = [int(i) for i in np.random.default_rng(42 + self.epoch).permutation(len(self.original))]
                logger.warning(f"Dataset {self.name} is being re-looped (epoch {self.epoch})")
            text = self.original[self.order[self.sample_idx]]
            self.buffer.extend(self.tokenizer.encode(text, add_bos=True, add_eos=True))
            self.sample_idx += 1
        chunk = torch.tensor(self.buffer[:need], dtype=torch.long)
        self.buffer = self.buffer[need:]
        return chunk[:-1], chunk[1:]

    def batch(self, size):
        inputs, labels = zip(*(self.next_sample() for _ in range(size)))
        return torch.stack(inputs), torch.stack(labels)

    def state_dict(self):
        return {"sample_idx": self.sample_idx, "epoch": self.epoch, "buffer": list(self.buffer),
                "order": list(self.order)}

    def load_state_dict(self, state):
        self.sample_idx, self.epoch = state["sample_idx"], state["epoch"]
        self.buffer, self.order = list(state["buffer"]), list(state["order"])
