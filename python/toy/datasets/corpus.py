"""Training data: token corpora and the batches drawn from them.

A corpus of any size is held mapped, not read: a token file (.tok) as it
is, a text for a byte-level model as its bytes, and a text for a GGUF's
tokenizer as a token file made once in pieces (text/pieces.py: the whole
text's tokens, on every core, with bounded memory) and kept in a cache
keyed by the text's and the tokenizer's digests, so that the next run on
the same text, a resume included, starts at once.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import sys
from importlib import resources
from pathlib import Path

import numpy as np

from ..core.errors import InputError
from ..core.files import replacing, write_whole
from ..core.machine import check_fits
from ..core.plan import MB
from ..text.pieces import text_pieces

# Suffixes read as packed little-endian int32 token ids; anything else is text,
# tokenized as raw UTF-8 bytes (ids 0..255).
TOKEN_SUFFIXES = (".tok", ".bin", ".i32")

# A text is encoded PIECE_CHARS characters at a time, PIECES_AT_ONCE pieces
# together on every core: about 4 M characters in flight, whose tokens the
# tokenizers library holds with their strings (~100 bytes a token: ~150 MB
# at most), however long the text.
PIECE_CHARS = 1 << 18
PIECES_AT_ONCE = 16
TOKENIZE_BYTES = 150 << 20  # the most the tokenization adds to the process (measured ~100 MB)

# read a mapped corpus this many tokens at a time where every token is
# looked at (range, digest): read, not touched through the map, so the
# process does not keep the file's pages
_SCAN_TOKENS = 1 << 22

# the token files' layout; a change to how pieces are made bumps it
_CACHE_FORMAT = 1


def default_corpus() -> np.ndarray:
    """The embedded default corpus (corpus/default.txt, byte-tokenized)."""
    data = (resources.files("toy") / "data" / "default_corpus.tok").read_bytes()
    return np.frombuffer(data, dtype="<i4").astype(np.int32)


def _checked_file(path: Path, what: str = "corpus") -> None:
    if not path.exists():
        raise InputError(f"{what} file not found: {path} (give an existing --corpus PATH)")
    if not path.is_file():
        raise InputError(f"{what} is not a file: {path}")
    try:
        with open(path, "rb"):
            pass
    except OSError as err:
        raise InputError(f"cannot read {what} {path}: {err.strerror}") from None


def _mapped(path: Path, dtype) -> np.ndarray:
    """path's content as an array mapped read-only (an empty file: an empty array)."""
    if path.stat().st_size == 0:
        return np.zeros(0, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r")


def scan(tokens: np.ndarray):
    """tokens as int32 pieces of _SCAN_TOKENS, read from the file where they
    are mapped (so that its pages are not kept by the process)."""
    filename = getattr(tokens, "filename", None)
    if filename is None or not isinstance(tokens, np.memmap) or tokens.offset != 0:
        for at in range(0, tokens.size, _SCAN_TOKENS):
            yield np.asarray(tokens[at : at + _SCAN_TOKENS], dtype=np.int32)
        return
    with open(filename, "rb") as f:
        while (piece := np.fromfile(f, dtype=tokens.dtype, count=_SCAN_TOKENS)).size:
            yield piece.astype(np.int32)


def token_range(tokens: np.ndarray) -> tuple[int, int]:
    """The smallest and the largest id in tokens ((0, -1) when empty)."""
    lows, highs = [], []
    for piece in scan(tokens):
        lows.append(int(piece.min()))
        highs.append(int(piece.max()))
    return (min(lows), max(highs)) if lows else (0, -1)


def tokens_digest(tokens: np.ndarray) -> str:
    """The sha256 of tokens as little-endian int32."""
    digest = hashlib.sha256()
    for piece in scan(tokens):
        digest.update(piece.astype("<i4").tobytes())
    return digest.hexdigest()


def load_corpus(path: str | Path) -> np.ndarray:
    """Tokens from a packed int32 file (.tok/.bin/.i32) or a text file (bytes), mapped."""
    path = Path(path)
    _checked_file(path)
    if path.suffix in TOKEN_SUFFIXES:
        size = path.stat().st_size
        if size % 4 != 0:
            raise InputError(
                f"corpus {path} is not packed int32: its size ({size} bytes) "
                "is not a multiple of 4 (text files need a .txt suffix)"
            )
        tokens = _mapped(path, "<i4")
        low, _ = token_range(tokens)
        if low < 0:
            raise InputError(f"corpus {path} holds a negative token id ({low})")
        return tokens
    return _mapped(path, np.uint8)


def cache_dir() -> Path:
    """Where corpora's token files are kept: $TOY_CACHE_DIR, else toy/ in
    the user's cache folder ($XDG_CACHE_HOME or ~/.cache)."""
    if os.environ.get("TOY_CACHE_DIR"):
        return Path(os.environ["TOY_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "toy"


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 24):
            digest.update(block)
    return digest.hexdigest()


def tokenized_corpus(path: str | Path, tokenizer) -> np.ndarray:
    """The tokens of the text file at path by tokenizer (its encode_corpus
    of the whole text), mapped from the cache; made there first if missing."""
    path = Path(path)
    _checked_file(path)
    key = hashlib.sha256(f"{_CACHE_FORMAT} {_file_digest(path)} {tokenizer.fingerprint()}".encode()).hexdigest()
    folder = cache_dir() / "corpora"
    token_file, about_file = folder / f"{key}.tok", folder / f"{key}.json"
    try:
        about = json.loads(about_file.read_text())
        if token_file.stat().st_size == 4 * int(about["tokens"]):
            print(f"toy-train: {path.name}: {about['tokens']:,} tokens from the cache ({token_file})", file=sys.stderr)
            return _mapped(token_file, "<i4")
    except (OSError, ValueError, KeyError, TypeError):
        pass  # not made yet, or an earlier run was killed making it: made again
    check_fits(TOKENIZE_BYTES, f"tokenizing {path}", "free some memory")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        # a token a word: the token file is about the text's size (4 bytes a token, 4 or more characters a word)
        free, need = shutil.disk_usage(folder).free, path.stat().st_size
        if need > free:
            raise InputError(
                f"tokenizing {path} needs about {need / MB:,.0f} MB of disk in {folder} and {free / MB:,.0f} MB "
                "are free: free some, or set TOY_CACHE_DIR to a folder on another disk"
            )
        n_tokens = _write_tokens(path, tokenizer, token_file)
        write_whole(about_file, json.dumps({"tokens": n_tokens, "text": str(path.resolve())}).encode())
    except OSError as err:
        raise InputError(
            f"cannot write the corpus's token file in {folder}: {err.strerror} (set TOY_CACHE_DIR to a writable folder)"
        ) from None
    return _mapped(token_file, "<i4")


def _write_tokens(path: Path, tokenizer, token_file: Path) -> int:
    """Encode path's text into token_file in pieces; the number of tokens."""
    from tqdm import tqdm

    written = {"tokens": 0, "last": None}

    def write(ids: list[int]) -> None:
        if ids:
            out.write(np.asarray(ids, dtype="<i4").tobytes())
            written["tokens"] += len(ids)
            written["last"] = ids[-1]

    with (
        open(path, "rb") as raw,
        # as Path.read_text reads: UTF-8, bad bytes as U+FFFD, line ends as \n
        io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline=None) as reader,
        replacing(token_file) as tmp,
        open(tmp, "wb") as out,
        tqdm(total=path.stat().st_size, unit="B", unit_scale=True, desc=f"tokenizing {path.name}", disable=None) as bar,
    ):
        pieces = text_pieces(reader, tokenizer, PIECE_CHARS)
        first = next(pieces, "")
        write(tokenizer.corpus_opening(first) + tokenizer.encode_pieces([first], continuing=False)[0])
        batch: list[str] = []
        for piece in pieces:
            batch.append(piece)
            if len(batch) == PIECES_AT_ONCE:
                for ids in tokenizer.encode_pieces(batch, continuing=True):
                    write(ids)
                batch = []
                bar.update(raw.tell() - bar.n)
        for ids in tokenizer.encode_pieces(batch, continuing=True):
            write(ids)
        write(tokenizer.corpus_closing(first, written["last"]))
        bar.update(raw.tell() - bar.n)
    return int(written["tokens"])


def check_corpus(tokens: np.ndarray, t_seq: int, vocab: int, name: str) -> None:
    if tokens.size < t_seq + 1:
        raise InputError(
            f"corpus {name} has {tokens.size} tokens; one training sequence needs "
            f"{t_seq + 1} (use a smaller --seq or a longer corpus)"
        )
    _, high = token_range(tokens)
    if high >= vocab:
        raise InputError(f"corpus {name} holds token id {high}, outside the model's vocabulary of {vocab}")


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
        # (a mapped corpus: bytes or int32 as the file holds them)
        windows = np.stack([self.tokens[s : s + self.t_seq + 1] for s in starts]).astype(np.int32)
        return windows[:, :-1].copy(), self.positions, windows[:, 1:].copy()
