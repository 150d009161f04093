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

from pathlib import Path

from ._native import ToyError
from .corpus import InputError
from .engine import check_gguf


def one_line(text, limit: int = 160) -> str:
    """text with its line breaks and runs of spaces folded, cut to `limit` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def read_gguf(path, what: str = ""):
    """A gguf.GGUFReader over path; `what` ("donor ", ...) prefixes the messages."""
    import gguf

    path = Path(path)
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
    try:
        return gguf.GGUFReader(str(path))
    except Exception as err:   # noqa: BLE001 -- see the module's docstring
        raise InputError(f"{what}{path} could not be read as GGUF (truncated or corrupt: "
                         f"{type(err).__name__}: {one_line(err)})") from None
