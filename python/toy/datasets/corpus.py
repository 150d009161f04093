"""Training data: token corpora and the batches drawn from them."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np

from ..core.errors import InputError

# Suffixes read as packed little-endian int32 token ids; anything else is text,
# tokenized as raw UTF-8 bytes (ids 0..255).
TOKEN_SUFFIXES = (".tok", ".bin", ".i32")


def default_corpus() -> np.ndarray:
    """The embedded default corpus (corpus/default.txt, byte-tokenized)."""
    data = (resources.files("toy") / "data" / "default_corpus.tok").read_bytes()
    return np.frombuffer(data, dtype="<i4").astype(np.int32)


def load_corpus(path: str | Path) -> np.ndarray:
    """Tokens from a packed int32 file (.tok/.bin/.i32) or a text file (bytes)."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"corpus file not found: {path} (give an existing --corpus PATH)")
    if not path.is_file():
        raise InputError(f"corpus is not a file: {path}")
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise InputError(f"cannot read corpus {path}: {err.strerror}") from None
    if path.suffix in TOKEN_SUFFIXES:
        if len(raw) % 4 != 0:
            raise InputError(
                f"corpus {path} is not packed int32: its size ({len(raw)} bytes) "
                "is not a multiple of 4 (text files need a .txt suffix)"
            )
        tokens = np.frombuffer(raw, dtype="<i4").astype(np.int32)
        if tokens.size and tokens.min() < 0:
            raise InputError(f"corpus {path} holds a negative token id ({tokens.min()})")
        return tokens
    return np.frombuffer(raw, dtype=np.uint8).astype(np.int32)


def check_corpus(tokens: np.ndarray, t_seq: int, vocab: int, name: str) -> None:
    if tokens.size < t_seq + 1:
        raise InputError(
            f"corpus {name} has {tokens.size} tokens; one training sequence needs "
            f"{t_seq + 1} (use a smaller --seq or a longer corpus)"
        )
    if tokens.max() >= vocab:
        raise InputError(f"corpus {name} holds token id {tokens.max()}, outside the model's vocabulary of {vocab}")


class BatchSampler:
    """Random windows of t_seq+1 tokens: inputs, next-token labels, positions.

    Seeded, so a run's batches are the same on every machine.
    """

    def __init__(self, tokens: np.ndarray, t_seq: int, t_batch: int, seed: int):
        self.tokens, self.t_seq, self.t_batch = tokens, t_seq, t_batch
        self.rng = np.random.default_rng(seed)
        self.positions = np.tile(np.arange(t_seq, dtype=np.int32), (t_batch, 1))

    def next(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(seq_ids, positions, labels), each int32 [t_batch, t_seq]."""
        starts = self.rng.integers(0, self.tokens.size - self.t_seq, size=self.t_batch)
        windows = np.stack([self.tokens[s : s + self.t_seq + 1] for s in starts])
        return windows[:, :-1].copy(), self.positions, windows[:, 1:].copy()
