"""The demo's token stream: documents with learnable structure, so that a tiny model's loss falls
within a few hundred steps and the tests can see that training happened."""


def documents(rng, vocab: int, tokens: int):
    """Documents of counting runs with random starts and strides: the next token is predictable
    from the previous two, so the loss falls quickly."""
    docs, left = [], tokens
    while left > 0:
        n = min(left, int(rng.integers(16, 96)))
        start, stride = int(rng.integers(0, vocab)), int(rng.integers(1, 4))
        docs.append([(start + stride * k) % vocab for k in range(n)])
        left -= n
    return docs


def packed_rows(docs, seq_len: int):
    """The documents concatenated and cut into rows of seq_len tokens, the remainder dropped, as
    the upstream example's get_dataset.py groups a tokenized corpus; labels = input_ids."""
    stream = [t for d in docs for t in d]
    rows = []
    for i in range(0, len(stream) - seq_len + 1, seq_len):
        ids = stream[i:i + seq_len]
        rows.append({"input_ids": ids, "attention_mask": [1] * seq_len, "labels": list(ids)})
    return rows


def add_shape_args(ap):
    """The tiny model's shape and the seed, as both demo-input writers take them."""
    ap.add_argument("--vocab", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--intermediate", type=int, default=128)
    ap.add_argument("--seq-len", type=int, default=32)
    ap.add_argument("--seed", type=int, default=1234)
