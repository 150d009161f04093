"""GGUF files read in Python, for what tinynn does not read itself: the
tokenizer, the chat template, a donor's embedding, the weights a full
fine-tune starts from or a merge writes over; written with the gguf package.

Every file is first parsed by ggml's own GGUF reader in tinynn, which checks
every count and length against the bytes left; the walk here then reads
what that parser accepted, and any remaining failure becomes an InputError
in one line that names the file. (gguf's own reader makes a numpy view per
value: 3.9 s for SmolLM2's 49,152-token vocabulary, against a few tenths
of a second here.)
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
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


# the last files read, by file: a full fine-tune reads its base three times
# (weights, the requantization check, the save)
_READERS: dict[tuple, GGUFContents] = {}
_KEEP_READERS = 2


def read_gguf(path, what: str = "") -> GGUFContents:
    """The metadata and tensors of the GGUF at path (the ones read before
    while the file is unchanged); `what` ("donor ", ...) prefixes the messages."""
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
        contents = GGUFContents(path)
    except Exception as err:  # noqa: BLE001 -- see the module's docstring
        raise InputError(
            f"{what}{path} could not be read as GGUF (truncated or corrupt: {type(err).__name__}: {one_line(err)})"
        ) from None
    if key is not None:
        while len(_READERS) >= _KEEP_READERS:
            _READERS.pop(next(iter(_READERS)))
        _READERS[key] = contents
    return contents


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


def _key_values(buf):
    """Each key/value of the header in file order: (key, its types: [type] or
    [ARRAY, item type], value, the position after it)."""
    n_kv = int.from_bytes(buf[16:24], "little")
    pos = 24
    for _ in range(n_kv):
        key, pos = _string_at(buf, pos)
        kind = int.from_bytes(buf[pos : pos + 4], "little")
        types = [kind, int.from_bytes(buf[pos + 4 : pos + 8], "little")] if kind == _ARRAY else [kind]
        value, pos = _value_at(buf, pos + 4, kind)
        yield key, types, value, pos


@dataclass
class GGUFField:
    """A metadata key/value, as gguf's reader names its parts."""

    name: str
    types: list  # [gguf.GGUFValueType], [ARRAY, the items' type] for an array
    value: object

    def contents(self):
        """The value: a str, a Python number or bool, or a list of them."""
        return self.value.tolist() if isinstance(self.value, np.ndarray) else self.value


@dataclass
class GGUFTensor:
    """A tensor as stored: data is a read-only view of the mapped file, in
    numpy order, the quantized types as rows of block bytes (gguf's layout)."""

    name: str
    tensor_type: object  # gguf.GGMLQuantizationType
    shape: np.ndarray  # GGUF order, ne[0] first
    data: np.ndarray


# numpy's dtype for the types stored a value at a time (the others are blocks of bytes)
_ELEMENT_DTYPES = {0: np.float32, 1: np.float16, 24: np.int8, 25: np.int16, 26: np.int32, 27: np.int64, 28: np.float64}


class GGUFContents:
    """A GGUF's metadata (fields, by key) and tensors (in file order), the
    file mapped read-only: what toy used gguf.GGUFReader for, at the speed of
    one walk over the header."""

    def __init__(self, path) -> None:
        import gguf

        # views of a plain array over the map (each tensor's keeps it mapped): a memmap's cost more to make
        mapped = np.memmap(path, mode="r").view(np.ndarray)
        buf = memoryview(mapped)
        n_tensors = int.from_bytes(buf[8:16], "little")
        pos, self.fields = 24, {}  # pos: past the header, then past the last key/value
        for key, types, value, end in _key_values(buf):
            self.fields[key] = GGUFField(key, [gguf.GGUFValueType(t) for t in types], value)
            pos = end
        infos = []
        for _ in range(n_tensors):
            name, pos = _string_at(buf, pos)
            n_dims = int.from_bytes(buf[pos : pos + 4], "little")
            dims = np.frombuffer(buf, "<u8", n_dims, pos + 4).copy()
            pos += 4 + 8 * n_dims
            kind = int.from_bytes(buf[pos : pos + 4], "little")
            offset = int.from_bytes(buf[pos + 4 : pos + 12], "little")
            infos.append((name, dims, kind, offset))
            pos += 12
        alignment = self.fields.get("general.alignment")
        align = int(alignment.value) if alignment is not None else 32
        data_start = (pos + align - 1) // align * align
        self.tensors = []
        for name, dims, kind, offset in infos:
            tensor_type = gguf.GGMLQuantizationType(kind)
            shape = tuple(reversed(dims.tolist()))
            start = data_start + offset
            if kind in _ELEMENT_DTYPES:
                dtype = np.dtype(_ELEMENT_DTYPES[kind])
                data = mapped[start : start + int(np.prod(shape)) * dtype.itemsize].view(dtype).reshape(shape)
            else:
                block, block_bytes = gguf.GGML_QUANT_SIZES[tensor_type]
                n_bytes = int(np.prod(shape)) // block * block_bytes
                data = mapped[start : start + n_bytes].reshape(gguf.quant_shape_to_byte_shape(shape, tensor_type))
            self.tensors.append(GGUFTensor(name, tensor_type, dims, data))


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
                out = {}
                for key, _, out[key], _ in _key_values(buf):
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


def experts_bytes(path) -> int:
    """The bytes of a GGUF's mixture-of-experts stacks (ffn_*_exps), 0 for a
    dense file: what a step reads as its tokens choose them, not what it must
    hold (the memory plan's base_streamed)."""
    return sum(int(t.data.nbytes) for t in read_gguf(path).tensors if t.name.endswith("_exps.weight"))
