"""The model families toy reads from GGUF, as the C core lists them: one
table (tinynn/models/families.c) keyed by a GGUF's general.architecture,
exported as tnn_family_count / tnn_family_info and read here once. Python
asks this table instead of keeping its own list of architectures."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..core.ffi import ffi
from .library import check, library


@dataclass(frozen=True)
class Family:
    """One entry of the C core's family table (tnn_family_desc)."""

    gguf_arch: str  # general.architecture: "llama", "qwen2", ...
    arch: str  # the tinynn architecture that builds it
    generates: bool  # the KV-cache decoder runs it (toy-generate)
    rope_neox: bool
    embd_scale: bool
    ffn_gelu: bool
    post_norms: bool
    swa_period: int
    output_norm: str  # the final norm's tensor in its GGUFs (a model made here names it output_norm.weight)
    tokenizer_kinds: tuple[str, ...]  # the tokenizer.ggml.model values its GGUFs carry
    default_chat_template: str | None  # Jinja for a GGUF that ships none (Gemma 3's base models)


def _text(pointer) -> str | None:
    return None if pointer == ffi.NULL else ffi.string(pointer).decode()


@functools.cache
def families() -> dict[str, Family]:
    """Every family by its general.architecture, in the table's order. The
    table is the same in every backend's library: the CPU's is read."""
    lib = library("cpu")
    table = {}
    for index in range(lib.tnn_family_count()):
        info = ffi.new("tnn_family_desc *")
        check(lib, lib.tnn_family_info(index, info))
        family = Family(
            gguf_arch=_text(info.gguf_arch) or "",
            arch=_text(info.arch) or "",
            generates=bool(info.generates),
            rope_neox=bool(info.rope_neox),
            embd_scale=bool(info.embd_scale),
            ffn_gelu=bool(info.ffn_gelu),
            post_norms=bool(info.post_norms),
            swa_period=int(info.swa_period),
            output_norm=_text(info.output_norm) or "output_norm.weight",
            tokenizer_kinds=tuple((_text(info.tokenizer_kinds) or "").split(",")),
            default_chat_template=_text(info.default_chat_template),
        )
        table[family.gguf_arch] = family
    return table


def family(gguf_arch: str | None) -> Family | None:
    """The family of a general.architecture, or None for one toy does not read."""
    return families().get(gguf_arch) if isinstance(gguf_arch, str) else None


def generating_families() -> tuple[str, ...]:
    """The general.architecture names the decoder runs (toy-generate, Run.generate)."""
    return tuple(name for name, entry in families().items() if entry.generates)
