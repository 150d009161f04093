"""The model families toy reads from GGUF are one table in the C core
(tinynn/models/families.c), exported as tnn_family_count / tnn_family_info:
read here through cffi as Python will read it."""

import pytest

import toy
from toy.core.ffi import ffi
from toy.native.families import families as python_families
from toy.native.library import check, library


def families():
    lib = library("cpu")
    out = {}
    for i in range(lib.tnn_family_count()):
        info = ffi.new("tnn_family_desc *")
        check(lib, lib.tnn_family_info(i, info))
        text = lambda p: None if p == ffi.NULL else ffi.string(p).decode()  # noqa: E731
        out[text(info.gguf_arch)] = dict(
            arch=text(info.arch),
            generates=bool(info.generates),
            rope_neox=bool(info.rope_neox),
            embd_scale=bool(info.embd_scale),
            ffn_gelu=bool(info.ffn_gelu),
            post_norms=bool(info.post_norms),
            swa_period=info.swa_period,
            tokenizer_kinds=text(info.tokenizer_kinds).split(","),
            default_chat_template=text(info.default_chat_template),
        )
    return out


def test_the_table_lists_the_families_toy_reads():
    table = families()
    assert list(table) == [
        "llama",
        "qwen2",
        "qwen3",
        "gemma3",
        "gemma2",
        "smollm3",
        "phi3",
        "lfm2",
        "qwen35",
        "granitehybrid",
        "nemotron_h",
        "falcon-h1",
        "qwen3moe",
        "mistral3",
        "qwen35moe",
        "gpt-oss",
    ]
    assert all(f["arch"] == "llama" and f["generates"] for f in table.values())
    neox = [
        "qwen2",
        "qwen3",
        "gemma3",
        "gemma2",
        "phi3",
        "lfm2",
        "qwen35",
        "falcon-h1",
        "qwen3moe",
        "qwen35moe",
        "gpt-oss",
    ]
    assert [name for name, f in table.items() if f["rope_neox"]] == neox
    for name, period in (("gemma3", 6), ("gemma2", 2)):
        gemma = table[name]
        assert gemma["embd_scale"] and gemma["ffn_gelu"] and gemma["post_norms"] and gemma["swa_period"] == period
        assert gemma["tokenizer_kinds"] == ["llama"]
    assert table["llama"]["tokenizer_kinds"] == ["gpt2", "llama"] and table["smollm3"]["tokenizer_kinds"] == ["gpt2"]


def test_gemma_carries_its_turn_format_as_its_default_chat_template():
    from toy.text.chat_template import ChatTemplate

    table = families()
    assert [name for name, f in table.items() if f["default_chat_template"]] == ["gemma3", "gemma2"]
    assert table["gemma2"]["default_chat_template"] == table["gemma3"]["default_chat_template"]
    template = ChatTemplate(table["gemma3"]["default_chat_template"])
    text = template.render(
        messages=[{"role": "user", "content": " Hi "}, {"role": "assistant", "content": "Hello."}],
        add_generation_prompt=False,
        bos_token="",
        eos_token="",
    )
    assert text == "<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\nHello.<end_of_turn>\n"


def test_python_reads_the_same_table():
    """toy.native.families is what generation and the chat formatter ask."""
    table = families()
    assert list(python_families()) == list(table)
    for name, entry in python_families().items():
        assert entry.generates == table[name]["generates"]
        assert list(entry.tokenizer_kinds) == table[name]["tokenizer_kinds"]
        assert entry.default_chat_template == table[name]["default_chat_template"]


def test_an_index_outside_the_table_is_refused():
    lib = library("cpu")
    info = ffi.new("tnn_family_desc *")
    with pytest.raises(toy.ToyError, match="no family"):
        check(lib, lib.tnn_family_info(lib.tnn_family_count(), info))
