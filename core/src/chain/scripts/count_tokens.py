"""The token-count stage (docs/plan.md, "Steps from the token count"): a text corpus counted with
the trainer's own tokenizer, on a compute node, as TorchTitan's text loader tokenizes it (each
document's `text` with BOS and EOS, upstream torchtitan/hf_datasets/text_datasets.py). Compiled
into trnslurm and run by the chain's first job in the recipe's virtual environment:
python3 - --dataset DIR --tokenizer DIR --output FILE. Writes FILE (JSON) atomically; any
problem is one line on stderr naming the file and line, and exit status 1."""

import argparse
import csv
import json
import os
import sys
import time

TEXT_SUFFIXES = (".jsonl", ".json", ".csv")


def fail(message):
    print(f"trnslurm: token count: {message}", file=sys.stderr)
    sys.exit(1)


def data_files(root):
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.startswith("."):
                found.append(os.path.join(folder, name))
    return found


def texts_of(path):
    """The `text` column of one json/jsonl/csv file, as the datasets library would read it."""
    if path.endswith(".csv"):
        with open(path, newline="", encoding="utf-8") as f:
            for line, row in enumerate(csv.DictReader(f), start=2):
                if "text" not in row:
                    fail(f"{path}:{line}: no 'text' column")
                yield row["text"]
        return
    with open(path, encoding="utf-8") as f:
        for line, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except ValueError as e:
                fail(f"{path}:{line}: not JSON ({e})")
            if not isinstance(row, dict) or not isinstance(row.get("text"), str):
                fail(f"{path}:{line}: no string 'text' field")
            yield row["text"]


def documents(root):
    # Upstream reads a local corpus with datasets.load_dataset(dir); where that library is
    # missing, the formats it would read as text are read here the same way.
    try:
        import datasets
    except ImportError:
        datasets = None
    if datasets is not None:
        for row in datasets.load_dataset(root, split="train"):
            yield row["text"]
        return
    files = data_files(root)
    other = [f for f in files if not f.endswith(TEXT_SUFFIXES)]
    if other:
        fail(f"{other[0]}: only json, jsonl and csv are read without the datasets package")
    if not files:
        fail(f"{root}: no data file")
    for path in files:
        yield from texts_of(path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    try:
        from torchtitan.components.tokenizer import HuggingFaceTokenizer
    except ImportError as e:
        fail(f"the trainer's tokenizer cannot be imported ({e}): is the recipe's venv the trainer's?")
    tokenizer = HuggingFaceTokenizer(tokenizer_path=args.tokenizer)
    tokens = 0
    docs = 0
    for text in documents(args.dataset):
        tokens += len(tokenizer.encode(text, add_bos=True, add_eos=True))
        docs += 1
    record = {
        "format": 1,
        "dataset": os.path.abspath(args.dataset),
        "tokenizer": os.path.abspath(args.tokenizer),
        "tokens": tokens,
        "documents": docs,
        "counted_by": "torchtitan.components.tokenizer.HuggingFaceTokenizer",
        "time": int(time.time()),
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    partial = f"{args.output}.{os.getpid()}.tmp"
    with open(partial, "w", encoding="utf-8") as f:
        json.dump(record, f)
        f.write("\n")
    os.replace(partial, args.output)
    print(f"trnslurm: {tokens} tokens in {docs} documents of {args.dataset}", file=sys.stderr)


if __name__ == "__main__":
    main()
