"""The model families toy reads from GGUF are one table in the C core
(tinynn/models/families.c), exported as tnn_family_count / tnn_family_info:
read here through cffi as Python will read it."""
import pytest

import toy
from toy._native import check, ffi, library



def families():
    lib = library("cpu")
    out = {}
    for i in range(lib.tnn_family_count()):
        info = ffi.new("tnn_family_desc *")
        check(lib, lib.tnn_family_info(i, info))
        text = lambda p: None if p == ffi.NULL else ffi.string(p).decode()  # noqa: E731
        out[text(info.gguf_arch)] = dict(
            arch=text(info.arch), generates=bool(info.generates), rope_neox=bool(info.rope_neox),
            embd_scale=bool(info.embd_scale), ffn_gelu=bool(info.ffn_gelu), post_norms=bool(info.post_norms),
            swa_period=info.swa_period, tokenizer_kinds=text(info.tokenizer_kinds).split(","),
            default_chat_template=text(info.default_chat_template))
    return out


def test_the_table_lists_the_families_toy_reads():
    table = families()
    assert list(table) == ["llama", "qwen2", "qwen3", "gemma3"]
    assert all(f["arch"] == "llama" and f["generates"] for f in table.values())
    assert [name for name, f in table.items() if f["rope_neox"]] == ["qwen2", "qwen3", "gemma3"]
    gemma = table["gemma3"]
    assert gemma["embd_scale"] and gemma["ffn_gelu"] and gemma["post_norms"] and gemma["swa_period"] == 6
    assert table["llama"]["tokenizer_kinds"] == ["gpt2", "llama"] and gemma["tokenizer_kinds"] == ["llama"]


def test_gemma3_carries_the_default_chat_template_python_uses():
    from toy.instruct import GEMMA_TURNS
    table = families()
    assert table["gemma3"]["default_chat_template"] == GEMMA_TURNS
    assert [name for name, f in table.items() if f["default_chat_template"]] == ["gemma3"]


def test_an_index_outside_the_table_is_refused():
    lib = library("cpu")
    info = ffi.new("tnn_family_desc *")
    with pytest.raises(toy.ToyError, match="no family"):
        check(lib, lib.tnn_family_info(lib.tnn_family_count(), info))
