"""Training data: token corpora and the batches drawn from them.

A corpus of any size is held mapped, not read: a token file (.tok) as it
is, a text for a byte-level model as its bytes, and a text for a GGUF's
tokenizer as a token file made once in pieces (text/pieces.py: the whole
text's tokens, on every core, with bounded memory) and kept in a cache
keyed by the text's and the tokenizer's digests, so that the next run on
the same text, a resume included, starts at once.

The cache is shared by every run on the machine: a token file is written by
one process at a time (a lock beside it; the others wait, then map it), under
a temporary name of its own and renamed once whole, and its sidecar (.json)
keeps its token count and sha256, checked at every run's start, so that a
token file damaged in place is made again rather than trained on.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import secrets
import shutil
import sys
import time
from importlib import resources
from pathlib import Path

import numpy as np

from ..core.errors import InputError
from ..core.files import locked, replacing, write_whole
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

# a token file's sha256 is checked 16 MB at a time at each run's start
# (~0.1 s a 100 MB token file, 25 M tokens, on one core with SHA extensions)
_DIGEST_BLOCK = 1 << 24

# where the file system has no locks, a temporary token file untouched for
# this long is a killed writer's (a live one adds to it every few seconds)
_STALE_SECONDS = 3600


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
    """The sha256 of the file at path, read 16 MB at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(_DIGEST_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def tokenized_corpus(path: str | Path, tokenizer) -> np.ndarray:
    """The tokens of the text file at path by tokenizer (its encode_corpus
    of the whole text), mapped from the cache; made there first if missing,
    or again if the token file is not the one its sidecar describes.

    Runs that share a machine (MPI ranks, runs started together) share the
    cache: one of them writes a token file, under a lock beside it, while the
    others wait and then map what it wrote."""
    path = Path(path)
    _checked_file(path)
    key = hashlib.sha256(f"{_CACHE_FORMAT} {_file_digest(path)} {tokenizer.fingerprint()}".encode()).hexdigest()
    folder = cache_dir() / "corpora"
    token_file, about_file = folder / f"{key}.tok", folder / f"{key}.json"
    seen = _stat_of(token_file, about_file)
    fault = _cache_fault(token_file, about_file, check_digest=True)
    if fault is None:
        return _from_cache(path, token_file, about_file)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        waiting = f"toy-train: {path.name}: another run is tokenizing it; waiting for its token file ({token_file})"
        with locked(folder / f"{key}.lock", waiting=lambda: print(waiting, file=sys.stderr)) as alone:
            if _stat_of(token_file, about_file) != seen:
                # written since it was looked at (by the run waited for): whole, as it
                # was written under the lock -- its size is checked, not its digest again
                fault = _cache_fault(token_file, about_file, check_digest=False)
                if fault is None:
                    return _from_cache(path, token_file, about_file)
            if fault != "missing":
                said = f"toy-train: {path.name}: the cached token file {token_file} {fault}: tokenizing it again"
                print(said, file=sys.stderr)
            _clear_temporaries(folder, key, alone)
            check_fits(TOKENIZE_BYTES, f"tokenizing {path}", "free some memory")
            # a token a word: the token file is about the text's size (4 bytes a token, 4 or more characters a word)
            free, need = shutil.disk_usage(folder).free, path.stat().st_size
            if need > free:
                raise InputError(
                    f"tokenizing {path} needs about {need / MB:,.0f} MB of disk in {folder} and {free / MB:,.0f} MB "
                    "are free: free some, or set TOY_CACHE_DIR to a folder on another disk"
                )
            # a temporary name of this process's own: never one another writer has open
            tag = f"{os.getpid()}-{secrets.token_hex(4)}"
            n_tokens, digest = _write_tokens(path, tokenizer, token_file, tag)
            about = {"tokens": n_tokens, "sha256": digest, "text": str(path.resolve())}
            write_whole(about_file, json.dumps(about).encode(), tag=tag)
            return _mapped(token_file, "<i4")
    except OSError as err:
        raise InputError(
            f"cannot write the corpus's token file in {folder}: {err.strerror} (set TOY_CACHE_DIR to a writable folder)"
        ) from None


def _from_cache(path: Path, token_file: Path, about_file: Path) -> np.ndarray:
    n_tokens = os.stat(token_file).st_size // 4
    print(f"toy-train: {path.name}: {n_tokens:,} tokens from the cache ({token_file})", file=sys.stderr)
    return _mapped(token_file, "<i4")


def _stat_of(*files: Path) -> tuple:
    """Which files are at those paths: their identity and last change (None for one missing)."""
    seen: list[tuple | None] = []
    for file in files:
        try:
            st = os.stat(file)
            seen.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
        except OSError:
            seen.append(None)
    return tuple(seen)


def _cache_fault(token_file: Path, about_file: Path, check_digest: bool) -> str | None:
    """None where token_file is the one its sidecar (about_file) describes: as
    many tokens and, with check_digest, their sha256 (read 16 MB at a time);
    else what is wrong, "missing" where either is not there or the sidecar is
    unreadable (never made, or a run killed making it)."""
    try:
        about = json.loads(about_file.read_text())
        n_tokens, digest = int(about["tokens"]), about.get("sha256")
        size = token_file.stat().st_size
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return "missing"
    if size != 4 * n_tokens:
        return f"holds {size:,} bytes, not the {4 * n_tokens:,} of its {n_tokens:,} tokens (damaged)"
    if not isinstance(digest, str):
        return "has no checksum (made by an earlier toy)"
    if check_digest:
        try:
            if _file_digest(token_file) != digest:
                return "does not match its checksum (damaged)"
        except OSError:
            return "missing"
    return None


def _clear_temporaries(folder: Path, key: str, alone: bool) -> None:
    """Remove the temporary files of killed writes of the token file named
    key (and of its sidecar): every one, when the lock is held (alone), since
    only the lock's holder writes one and a killed holder's lock is gone with
    it; else (a file system without locks) those untouched for an hour, since
    a live write adds to its file every few seconds."""
    for tmp in folder.glob(f"{key}.*.tmp"):
        try:
            if alone or time.time() - tmp.lstat().st_mtime > _STALE_SECONDS:
                tmp.unlink()
        except FileNotFoundError:
            pass


def _write_tokens(path: Path, tokenizer, token_file: Path, tag: str) -> tuple[int, str]:
    """Encode path's text into token_file in pieces (under a temporary name
    with tag in it, renamed once whole); the number of tokens and their sha256."""
    from tqdm import tqdm

    written: dict = {"tokens": 0, "last": None}
    digest = hashlib.sha256()

    def write(ids: list[int]) -> None:
        if ids:
            data = np.asarray(ids, dtype="<i4").tobytes()
            out.write(data)
            digest.update(data)
            written["tokens"] += len(ids)
            written["last"] = ids[-1]

    with (
        open(path, "rb") as raw,
        # as Path.read_text reads: UTF-8, bad bytes as U+FFFD, line ends as \n
        io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline=None) as reader,
        replacing(token_file, tag) as tmp,
        # O_EXCL: a file made here, never one a link planted at tmp points to
        os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), "wb") as out,
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
    return int(written["tokens"]), digest.hexdigest()


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
