"""The GGUF's own tokenizer: byte-level BPE with SmolLM2's pre-tokenizer."""
import pytest

from toy.tokenizer import GGUFTokenizer

TEXTS = [
    "Hello world! It costs 1234 dollars.",
    "  leading spaces, tabs\tand\nnew lines\n\n",
    "unicode: café, naïve, 東京, emoji 🙂",
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n",
]


@pytest.fixture(scope="module")
def tokenizer(smollm2):
    return GGUFTokenizer.from_gguf(smollm2)


@pytest.mark.parametrize("text", TEXTS)
def test_round_trip(tokenizer, text):
    assert tokenizer.decode(tokenizer.encode(text)) == text


def test_digits_are_split_one_by_one_as_smollm_does(tokenizer):
    digits = [tokenizer.decode([i]) for i in tokenizer.encode("2026")]
    assert digits == ["2", "0", "2", "6"]


def test_chat_markers_are_single_special_tokens(tokenizer):
    ids = tokenizer.encode("<|im_start|>user")
    assert tokenizer.decode(ids[:1]) == "<|im_start|>"


def test_eos_closes_a_corpus(tokenizer):
    ids = tokenizer.encode_corpus("one document")
    assert ids[-1] == tokenizer.eos_id and tokenizer.decode([tokenizer.eos_id]) == "<|im_end|>"


def test_matches_transformers_when_installed(smollm2, tokenizer):
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("torch")
    reference = transformers.AutoTokenizer.from_pretrained(str(smollm2.parent), gguf_file=smollm2.name)
    for text in TEXTS:
        assert tokenizer.encode(text) == reference.encode(text, add_special_tokens=False), text


def test_qwen2_pre_tokenizer_splits_as_llama_cpps_qwen2_regex():
    """Qwen2/Qwen3 GGUFs say tokenizer.ggml.pre = "qwen2": contractions in
    any case, single digits, newlines apart from the spaces after them."""
    from toy.tokenizer import _pre_tokenizer

    pieces = [p for p, _ in _pre_tokenizer("qwen2").pre_tokenize_str("Hello, world's 2024 IT'S\n\n  ok")]
    assert pieces == ["Hello", ",", "Ġworld", "'s", "Ġ", "2", "0", "2", "4", "ĠIT", "'S", "ĊĊ", "Ġ", "Ġok"]
