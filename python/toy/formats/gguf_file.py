"""GGUF metadata read in Python with the gguf package, for what tinynn does
not read itself: the tokenizer, the chat template, a donor's embedding.

gguf's reader checks little: a corrupt file surfaces as whatever numpy,
struct or an enum lookup raises on the way, and a count read from the file
can keep it looping past the file's end for ever. So the file is first
parsed by ggml's own GGUF reader in tinynn, which checks every count and
length against the bytes left, and every remaining failure of gguf's reader
becomes an InputError in one line that names the file.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..core.errors import InputError, ToyError, one_line  # noqa: F401  (one_line: merge and tokenizer import it here)
from ..core.files import replacing
from ..native.session import check_gguf


@contextmanager
def writing_gguf(path, arch: str):
    """A gguf.GGUFWriter for a new GGUF at path, written whole or not at all
    (files.replacing): the file appears only when the block completes."""
    import gguf

    with replacing(path) as tmp:
        writer = gguf.GGUFWriter(str(tmp), arch)
        try:
            yield writer
        finally:
            writer.close()


def _check(path: Path, what: str) -> None:
    """InputError unless path is a GGUF that ggml's own parser accepts."""
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError as err:
        raise InputError(f"cannot open {what}{path}: {err.strerror or err}") from None
    if magic != b"GGUF":
        raise InputError(f"{what}{path} is not a GGUF file (no GGUF magic at its start)")
    try:
        check_gguf(path)
    except ToyError as err:
        raise InputError(f"{what}{err}") from None


# the last readers made, by file: gguf's reader takes seconds over a large
# vocabulary (3.7 s for SmolLM2's), and a full fine-tune reads its base three
# times (weights, the requantization check, the save)
_READERS: dict[tuple, object] = {}
_KEEP_READERS = 2


def read_gguf(path, what: str = ""):
    """A gguf.GGUFReader over path (the one made before while the file is
    unchanged); `what` ("donor ", ...) prefixes the messages."""
    import gguf

    path = Path(path)
    try:
        stat = path.stat()
        key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino)
    except OSError:
        key = None
    if key in _READERS:
        return _READERS[key]
    _check(path, what)
    try:
        reader = gguf.GGUFReader(str(path))
    except Exception as err:  # noqa: BLE001 -- see the module's docstring
        raise InputError(
            f"{what}{path} could not be read as GGUF (truncated or corrupt: {type(err).__name__}: {one_line(err)})"
        ) from None
    if key is not None:
        while len(_READERS) >= _KEEP_READERS:
            _READERS.pop(next(iter(_READERS)))
        _READERS[key] = reader
    return reader


# GGUF value types with a fixed size, as numpy dtypes (7 is bool)
_FIXED = {
    0: "<u1",
    1: "<i1",
    2: "<u2",
    3: "<i2",
    4: "<u4",
    5: "<i4",
    6: "<f4",
    7: "<u1",
    10: "<u8",
    11: "<i8",
    12: "<f8",
}
_STRING, _ARRAY = 8, 9


def _string_at(buf, pos: int) -> tuple[str, int]:
    n = int.from_bytes(buf[pos : pos + 8], "little")
    return str(buf[pos + 8 : pos + 8 + n], "utf-8"), pos + 8 + n


def _value_at(buf, pos: int, kind: int):
    """(value, position after it): a string, a Python scalar, a list of
    strings (or of arrays), or a numpy array of numbers."""
    if kind == _STRING:
        return _string_at(buf, pos)
    if kind == _ARRAY:
        item_kind = int.from_bytes(buf[pos : pos + 4], "little")
        count = int.from_bytes(buf[pos + 4 : pos + 12], "little")
        pos += 12
        if item_kind in _FIXED:
            dtype = np.dtype(_FIXED[item_kind])
            return np.frombuffer(buf, dtype, count, pos).copy(), pos + count * dtype.itemsize
        items = []
        for _ in range(count):
            item, pos = _value_at(buf, pos, item_kind)
            items.append(item)
        return items, pos
    dtype = np.dtype(_FIXED[kind])
    value = np.frombuffer(buf, dtype, 1, pos)[0].item()
    return (bool(value) if kind == 7 else value), pos + dtype.itemsize


def read_metadata(path, what: str = "", until=None) -> dict:
    """Every key/value of a GGUF (no tensors), by key: about a second for a
    262k-token vocabulary where gguf's reader takes tens. The file is first
    parsed by ggml (read_gguf's checks), so counts and lengths are sound.
    until(key, read so far): True ends the walk after that key -- writers put
    general.* and the architecture's keys before the tokenizer's, so a
    question about those leaves the vocabulary unread."""
    import mmap

    path = Path(path)
    _check(path, what)
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            buf = memoryview(mapped)
            try:
                n_kv = int.from_bytes(buf[16:24], "little")
                pos, out = 24, {}
                for _ in range(n_kv):
                    key, pos = _string_at(buf, pos)
                    kind = int.from_bytes(buf[pos : pos + 4], "little")
                    out[key], pos = _value_at(buf, pos + 4, kind)
                    if until is not None and until(key, out):
                        break
                return out
            finally:
                buf.release()
    except (OSError, ValueError, KeyError, UnicodeDecodeError) as err:
        raise InputError(
            f"{what}{path}: its metadata could not be read ({type(err).__name__}: {one_line(err)})"
        ) from None


def context_length(path, what: str = "") -> int | None:
    """The context a GGUF's model was trained for (<arch>.context_length), None
    where the file does not say. The vocabulary is left unread."""

    def is_context_length(key: str, meta: dict) -> bool:
        return key == f"{meta.get('general.architecture')}.context_length"

    meta = read_metadata(path, what, until=is_context_length)
    value = meta.get(f"{meta.get('general.architecture')}.context_length")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
