"""A text corpus of any size: tokenized in pieces into a cached token file
that training maps. The pieces must give the whole text's tokens, for every
kind of vocabulary, wherever the cuts fall."""

import hashlib
import random
from pathlib import Path

import numpy as np
import pytest

import toy.datasets.corpus as corpus
from cli_helpers import toy_train
from toy.datasets.corpus import load_corpus, tokenized_corpus
from toy.text.tokenizer import GGUFTokenizer

ROOT = Path(__file__).parents[1]
SHIPPED = [ROOT / "corpus" / "default.txt", ROOT / "python" / "toy" / "data" / "samples" / "notes.txt"]

# llama.cpp's test vocabularies of every kind toy reads: byte-level BPE with
# each family of pre-tokenizer, SentencePiece (with Phi-3's stripping), Gemma 4
VOCABULARIES = ["gpt-2", "llama-bpe", "qwen2", "qwen35", "command-r", "llama-spm", "phi-3", "gemma-4"]


def odd_text(seed: int) -> str:
    """Text that tries the cuts: long lines and no blank lines, runs of
    newlines and spaces, multi-byte characters everywhere, special tokens'
    text, CRLF line ends, digits."""
    rng = random.Random(seed)
    words = ["héllo", "wörld", "東京", "🙂🙂", "naïve", "a", "  ", "\n", "\n\n", "\n\n\n", "\r\n", "\t", "don't",
             "12345", "<|im_end|>", "<s>", " ", "x" * 40, "Привет", "ـعـربـي"]  # fmt: skip
    return "".join(rng.choice(words) + rng.choice(["", " ", ""]) for _ in range(6000))


def pieces_agree_with_whole(tokenizer, path: Path, monkeypatch, piece_chars: int) -> None:
    monkeypatch.setattr(corpus, "PIECE_CHARS", piece_chars)
    monkeypatch.setattr(corpus, "PIECES_AT_ONCE", 3)
    whole = tokenizer.encode_corpus(path.read_text(encoding="utf-8", errors="replace"))
    pieces = tokenized_corpus(path, tokenizer)
    assert isinstance(pieces, np.memmap)
    first_wrong = int(np.argmax(pieces[: whole.size] != whole)) if pieces.size >= whole.size else -1
    assert pieces.size == whole.size and np.array_equal(pieces, whole), (
        f"{pieces.size} tokens in pieces, {whole.size} whole; first differing at {first_wrong}"
    )


@pytest.mark.parametrize("text", SHIPPED, ids=lambda p: p.name)
def test_the_shipped_corpus_in_pieces_gives_the_whole_texts_tokens(smollm2, text, monkeypatch):
    pieces_agree_with_whole(GGUFTokenizer.from_gguf(smollm2), text, monkeypatch, piece_chars=700)


@pytest.mark.parametrize("name", VOCABULARIES)
def test_pieces_give_the_whole_texts_tokens_in_every_kind_of_vocabulary(llama_cpp_models, name, tmp_path, monkeypatch):
    tokenizer = GGUFTokenizer.from_gguf(llama_cpp_models / f"ggml-vocab-{name}.gguf")
    # llama.cpp's own test texts (every odd run of whitespace it tests) and the odd text
    tests = (llama_cpp_models / f"ggml-vocab-{name}.gguf.inp").read_text(encoding="utf-8")
    path = tmp_path / "corpus.txt"
    path.write_bytes((tests + odd_text(1)).encode("utf-8"))
    pieces_agree_with_whole(tokenizer, path, monkeypatch, piece_chars=500)


def test_a_cut_at_every_multibyte_character_and_a_line_longer_than_a_piece(smollm2, tmp_path, monkeypatch):
    path = tmp_path / "one-line.txt"
    path.write_bytes(("東京 🙂 " * 5000 + "no newline at the end").encode("utf-8"))  # one 45 KB line
    pieces_agree_with_whole(GGUFTokenizer.from_gguf(smollm2), path, monkeypatch, piece_chars=257)


def test_bytes_that_are_not_utf8_and_crlf_read_as_the_whole_file_does(smollm2, tmp_path, monkeypatch):
    path = tmp_path / "mixed.txt"
    path.write_bytes(b"line one\r\nline two \xff\xfe\r\n" * 2000 + b"\xe6\x9d")  # a cut-off character at the end
    pieces_agree_with_whole(GGUFTokenizer.from_gguf(smollm2), path, monkeypatch, piece_chars=300)


def test_the_second_run_maps_the_token_file_without_tokenizing(smollm2, tmp_path, monkeypatch):
    path = tmp_path / "notes.txt"
    path.write_text("Some notes about the island.\n\n" * 300)
    tokenizer = GGUFTokenizer.from_gguf(smollm2)
    first = tokenized_corpus(path, tokenizer)
    monkeypatch.setattr(GGUFTokenizer, "encode_pieces", lambda *a, **k: pytest.fail("tokenized again"))
    again = tokenized_corpus(path, tokenizer)
    assert again.filename == first.filename and np.array_equal(again, first)
    path.write_text("Other notes.\n\n" * 300)  # another text: another token file
    monkeypatch.undo()
    assert tokenized_corpus(path, tokenizer).filename != first.filename


def test_a_token_file_left_half_written_is_made_again(smollm2, tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("Some notes about the island.\n\n" * 300)
    tokenizer = GGUFTokenizer.from_gguf(smollm2)
    made = tokenized_corpus(path, tokenizer)
    expected = np.array(made)
    with open(made.filename, "r+b") as f:  # as a kill during the write would leave it, were it not renamed
        f.truncate(100)
    assert np.array_equal(tokenized_corpus(path, tokenizer), expected)


def test_a_token_corpus_is_mapped_and_checked_without_being_read_whole(tmp_path):
    path = tmp_path / "ids.tok"
    np.arange(1000, dtype="<i4").tofile(path)
    tokens = load_corpus(path)
    assert isinstance(tokens, np.memmap) and tokens[999] == 999
    assert corpus.token_range(tokens) == (0, 999)
    assert corpus.tokens_digest(tokens) == hashlib.sha256(np.arange(1000, dtype="<i4").tobytes()).hexdigest()


def test_lora_on_a_text_corpus_tokenizes_it_once(smollm2, tmp_path, monkeypatch):
    path = tmp_path / "notes.txt"
    path.write_text((SHIPPED[1].read_text() + "\n\n") * 20)
    cache = tmp_path / "cache"
    monkeypatch.setenv("TOY_CACHE_DIR", str(cache))
    run = ["lora", "--model", str(smollm2), "--corpus", str(path), "--steps", "2", "--seq", "32", "--threads", "2"]
    first = toy_train(*run, "--out", str(tmp_path / "a"))
    second = toy_train(*run, "--out", str(tmp_path / "b"))
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert "from the cache" not in first.stderr and "from the cache" in second.stderr
    assert first.stdout == second.stdout
    assert len(list((cache / "corpora").glob("*.tok"))) == 1
