"""GGUF metadata read in Python with the gguf package, for what tinynn does
not read itself: the tokenizer, the chat template, a donor's embedding.

gguf's reader checks little: a corrupt file surfaces as whatever numpy,
struct or an enum lookup raises on the way. Here every such failure becomes
an InputError in one line that names the file.
"""
from __future__ import annotations

from pathlib import Path

from .corpus import InputError


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
        return gguf.GGUFReader(str(path))
    except Exception as err:   # noqa: BLE001 -- see the module's docstring
        raise InputError(f"{what}{path} could not be read as GGUF (truncated or corrupt: "
                         f"{type(err).__name__}: {one_line(err)})") from None
