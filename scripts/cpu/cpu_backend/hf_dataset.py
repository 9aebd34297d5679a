"""Hugging Face `save_to_disk` directories without the `datasets` package (not in Debian 12):
what `datasets.load_from_disk(data_dir)` gives the upstream trainers (neuronx-distributed
examples/training/llama/training_utils.py, create_llama_pretraining_dataset), read with the
backend's own Arrow reader, and the writer of the demo's dataset.

Directory layout (datasets' arrow_dataset.py save_to_disk): state.json (`_data_files`: the
shards in order), dataset_info.json (features, splits), data-<i>-of-<n>.arrow (Arrow IPC
streams). Rows are taken in `_data_files` order; a stray .arrow file is never read."""

import json
from pathlib import Path

import numpy as np
import torch

from . import arrow_ipc

# What examples/training/llama/get_dataset.py leaves after tokenizing and grouping: the
# tokenizer's columns (input_ids, attention_mask) and labels = a copy of input_ids. The dtypes
# are those `datasets` gives these columns (int32 ids, int8 mask, int64 for a plain int list).
COLUMNS = {"input_ids": np.int32, "attention_mask": np.int8, "labels": np.int64}


class DatasetError(ValueError):
    pass


def _shards(directory: Path):
    if (directory / "dataset_dict.json").is_file():
        raise DatasetError(f"{directory}: a DatasetDict (dataset_dict.json): load_from_disk returns a dict of "
                           "splits there, which the trainer cannot index; give the split's directory, e.g. "
                           f"{directory}/train")
    state_file = directory / "state.json"
    if not state_file.is_file():
        if (directory / "dataset.arrow").is_file():  # written by datasets < 2.8
            return [directory / "dataset.arrow"]
        raise DatasetError(f"{directory}: no state.json: not a directory written by Dataset.save_to_disk")
    try:
        state = json.loads(state_file.read_text())
    except json.JSONDecodeError as e:
        raise DatasetError(f"{state_file}:offset {e.pos}: not valid JSON: {e.msg}") from None
    if state.get("_indices_data_files"):
        raise DatasetError(f"{state_file}: an indices mapping (_indices_data_files) is not supported: "
                           "save the dataset again after flatten_indices()")
    names = [f.get("filename", "") for f in state.get("_data_files", [])]
    for n in names:
        if not n or "/" in n or n in (".", ".."):
            raise DatasetError(f"{state_file}: shard name {n!r} is not a file name in this directory")
    if len(set(names)) != len(names):
        raise DatasetError(f"{state_file}: a shard is listed twice in _data_files")
    return [directory / n for n in names]


class HFDataset(torch.utils.data.Dataset):
    """The rows of a save_to_disk directory; item i is {column: int64 tensor} for every integer
    and integer-list column, as default_data_collator stacks them."""

    def __init__(self, data_dir):
        self.directory = Path(data_dir).expanduser()
        if not self.directory.is_dir():
            raise DatasetError(f"{self.directory}: no such dataset directory")
        self.files = _shards(self.directory)
        values, offsets, schema = {}, {}, None
        for f in self.files:
            stream = arrow_ipc.read_stream(f)
            described = [(c.name, c.describe()) for c in stream.fields]
            if schema is None:
                schema = described
            elif described != schema:
                raise DatasetError(f"{f}: its columns {described} differ from the first shard's {schema}")
            for _, cols in stream.batches:
                for name, col in cols.items():
                    first, last = int(col.offsets[0]), int(col.offsets[-1])
                    base = sum(len(v) for v in values.get(name, []))
                    values.setdefault(name, []).append(col.values[first:last])
                    offsets.setdefault(name, []).append(col.offsets[1:] - first + base)
        self.schema = schema or []
        self.columns = {}
        for name in values:
            self.columns[name] = (np.concatenate(values[name]),
                                  np.concatenate([[0]] + offsets[name]).astype(np.int64))
        self.rows = len(next(iter(self.columns.values()))[1]) - 1 if self.columns else 0

    def __len__(self):
        return self.rows

    def row(self, name, i):
        vals, offs = self.columns[name]
        return vals[offs[i]:offs[i + 1]]

    def __getitem__(self, i):
        return {name: torch.from_numpy(self.row(name, i).astype(np.int64)) for name in self.columns}

    def require(self, columns, seq_len=None):
        """Refuses a dataset the trainer cannot use: a missing column, or rows not seq_len long."""
        for c in columns:
            if c not in self.columns:
                raise DatasetError(f"{self.directory}: no integer column '{c}' (columns: "
                                   f"{', '.join(f'{n} {t}' for n, t in self.schema)})")
        if seq_len is not None and self.rows:
            lengths = np.diff(self.columns[columns[0]][1])
            bad = np.nonzero(lengths != seq_len)[0]
            if len(bad):
                raise DatasetError(f"{self.directory}: row {bad[0]} holds {lengths[bad[0]]} tokens in "
                                   f"'{columns[0]}', not --seq_len {seq_len}: the trainer stacks rows into a "
                                   "batch, so every row must be seq_len long (pack the dataset to seq_len)")


def features_json(columns: dict) -> dict:
    return {name: {"feature": {"dtype": np.dtype(dt).name, "_type": "Value"}, "_type": "Sequence"}
            for name, dt in columns.items()}


def save_to_disk(directory, rows: list, columns: dict = None, num_shards: int = 1, batch_rows: int = 1000):
    """Writes `rows` ({column: list of ints}) as Dataset.save_to_disk lays a dataset out."""
    columns = columns or COLUMNS
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    features = features_json(columns)
    meta = {"huggingface": json.dumps({"info": {"features": features}})}
    per = -(-len(rows) // num_shards) if rows else 0
    files = []
    for i in range(num_shards):
        name = f"data-{i:05d}-of-{num_shards:05d}.arrow"
        arrow_ipc.write_stream(directory / name, columns, rows[i * per:(i + 1) * per], meta, batch_rows)
        files.append({"filename": name})
    state = {"_data_files": files, "_fingerprint": "trnslurm-demo", "_format_columns": None, "_format_kwargs": {},
             "_format_type": None, "_output_all_columns": False, "_split": "train"}
    (directory / "state.json").write_text(json.dumps(state, indent=2) + "\n")
    info = {"citation": "", "description": "", "features": features,
            "splits": {"train": {"name": "train", "num_bytes": 0, "num_examples": len(rows)}}}
    (directory / "dataset_info.json").write_text(json.dumps(info, indent=2) + "\n")
