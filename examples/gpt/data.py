"""Text for the GPT example, one token a byte (a vocabulary of 256, already a multiple of
the 64 that tensor-core tiles want): by default the Python standard library's own ``.py``
sources found on this machine, in sorted order up to a size cap, so every run on one
machine reads the same corpus with nothing to download; or any file. The first 90% is for
training, the last 10% for validation; a batch is B windows of T + 1 bytes at offsets a
seeded NumPy generator draws (of which each of several processes takes its rows).
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

import numpy as np

from compiler.errors import TilecError

VOCAB_SIZE = 256
CORPUS_BYTES = 4 << 20
TRAIN_FRACTION = 0.9


class DataError(TilecError):
    """Text the GPT example cannot train on: no file, or too little of it."""


def encode(text: str | bytes) -> np.ndarray:
    """The tokens (uint8) of ``text``: its UTF-8 bytes."""
    data = text.encode() if isinstance(text, str) else bytes(text)
    return np.frombuffer(data, np.uint8).copy()


def decode(tokens) -> str:
    """The text of ``tokens``; bytes that are not UTF-8 (and tokens past 255, which a
    vocabulary padded beyond the bytes may produce) show as U+FFFD."""
    t = np.asarray(tokens).ravel()
    # 0xFF never occurs in UTF-8, so an out-of-vocabulary token decodes as U+FFFD too
    return bytes(np.where(t < VOCAB_SIZE, t, 0xFF).astype(np.uint8)).decode(errors="replace")


def stdlib_corpus(limit: int = CORPUS_BYTES) -> bytes:
    """The standard library's ``.py`` files (sorted by path, each followed by a newline),
    the first ``limit`` bytes of them."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted((p for p in root.rglob("*.py")
                    if not {"site-packages", "dist-packages"} & set(p.parts)),
                   key=lambda p: p.relative_to(root).as_posix())
    chunks, size = [], 0
    for path in files:
        if size >= limit:
            break
        try:
            text = path.read_bytes() + b"\n"
        except OSError:
            continue  # an unreadable file is not part of the corpus
        chunks.append(text)
        size += len(text)
    if not chunks:
        raise DataError(f"found no .py files under {root}; pass --data FILE to train on a "
                        f"text file")
    return b"".join(chunks)[:limit]


def load(path: str | None = None, limit: int = CORPUS_BYTES) -> tuple[np.ndarray, np.ndarray]:
    """(train, validation) tokens of the file at ``path`` (None: ``stdlib_corpus``), the
    first ``limit`` bytes of it, split 90/10."""
    if path is None:
        data = stdlib_corpus(limit)
    else:
        try:
            with open(path, "rb") as f:
                data = f.read(limit)
        except OSError as e:
            raise DataError(f"cannot read {path}: {e.strerror}") from None
    tokens = encode(data)
    cut = int(len(tokens) * TRAIN_FRACTION)
    return tokens[:cut], tokens[cut:]


def batch(data: np.ndarray, B: int, T: int, rng: np.random.Generator,
          rows: slice = slice(None)) -> tuple[np.ndarray, np.ndarray]:
    """B windows of T + 1 tokens of ``data`` at offsets ``rng`` draws: the inputs (the
    first T of each) and the targets (the last T), int32 (B, T); only ``rows`` of them
    (one process's share of a batch split across processes), all B offsets drawn."""
    if len(data) < T + 1:
        raise DataError(f"a batch of {T} positions needs at least {T + 1} tokens, the text "
                        f"has {len(data)} (use a longer file or a smaller --seq)")
    starts = rng.integers(0, len(data) - T, B)[rows]
    windows = np.stack([data[s:s + T + 1] for s in starts]).astype(np.int32)
    return np.ascontiguousarray(windows[:, :-1]), np.ascontiguousarray(windows[:, 1:])
