"""A text corpus of any size: tokenized in pieces into a cached token file
that training maps. The pieces must give the whole text's tokens, for every
kind of vocabulary, wherever the cuts fall."""

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
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


# A run tokenizing a corpus into the cache, started with others (as MPI ranks
# are): argv model, text, signals folder, name. Each says it is ready and waits
# for "go", so that all reach the cache at once; the one that tokenizes marks
# it (tokenizing-NAME) and holds its first piece: HOLD seconds, or, for HOLD
# "waiters:N", until N processes wait for the cache's lock (/proc/locks), so
# that the others surely arrive while it writes. stdout: its tokens' sha256.
RUN_TOGETHER = r"""
import hashlib, os, sys, time
from pathlib import Path
import numpy as np
from toy.datasets.corpus import cache_dir, tokenized_corpus
from toy.text.tokenizer import GGUFTokenizer

model, text, signals, name = sys.argv[1:5]
signals = Path(signals)
tokenizer = GGUFTokenizer.from_gguf(model)
fingerprint = tokenizer.fingerprint()
tokenizer.fingerprint = lambda: fingerprint  # computed before "go": the cache is reached at once
encode = tokenizer.encode_pieces

def waiters() -> int:
    inodes = {f":{lock.stat().st_ino} " for lock in (cache_dir() / "corpora").glob("*.lock")}
    with open("/proc/locks") as locks:
        return sum("->" in line and any(i in line for i in inodes) for line in locks)

def held_encode(pieces, continuing):
    if not continuing:
        (signals / f"tokenizing-{name}").touch()
        hold = os.environ["HOLD"]
        if hold.startswith("waiters:"):
            deadline = time.monotonic() + 60
            while waiters() < int(hold[8:]) and time.monotonic() < deadline:
                time.sleep(0.01)
        else:
            time.sleep(float(hold))
    return encode(pieces, continuing=continuing)

tokenizer.encode_pieces = held_encode
(signals / f"ready-{name}").touch()
deadline = time.monotonic() + 120
while not (signals / "go").exists():
    if time.monotonic() > deadline:
        sys.exit("no go within 120 s")
    time.sleep(0.005)
tokens = tokenized_corpus(text, tokenizer)
print(hashlib.sha256(np.asarray(tokens, dtype="<i4").tobytes()).hexdigest())
"""


def start_runs(smollm2, text: Path, signals: Path, names, hold: str) -> list:
    """Runs of RUN_TOGETHER, each ready (imports and tokenizer loaded) when this returns."""
    signals.mkdir(exist_ok=True)
    env = {**os.environ, "HOLD": hold}
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", RUN_TOGETHER, str(smollm2), str(text), str(signals), name],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name in names
    ]
    # ready in ~2 s each on two busy cores; 120 s: a hang
    deadline = time.monotonic() + 120
    while len(list(signals.glob("ready-*"))) < len(names):
        if time.monotonic() > deadline or any(run.poll() is not None for run in runs):
            for run in runs:
                run.kill()
            pytest.fail("the runs did not get ready: " + "".join(run.communicate()[1] for run in runs))
        time.sleep(0.02)
    return runs


def cache_files(cache: Path) -> list[str]:
    return sorted(f.suffix if f.suffix in (".tok", ".json") else f.name for f in (cache / "corpora").iterdir())


def test_runs_started_together_on_a_new_corpus_share_one_token_file(smollm2, tmp_path, monkeypatch):
    """Four runs reach an empty cache for the same text together: one
    tokenizes it while the others wait for its lock, then all map its file."""
    text = tmp_path / "notes.txt"
    text.write_text("Some notes about the island, its birds and its tides.\n\n" * 400)
    cache = tmp_path / "cache"
    monkeypatch.setenv("TOY_CACHE_DIR", str(cache))
    signals = tmp_path / "signals"
    # where /proc/locks lists the lock's waiters the writer holds its file until the
    # other three wait (a first draft without the lock: each tokenized and a rename failed)
    hold = "waiters:3" if Path("/proc/locks").exists() else "3"
    runs = start_runs(smollm2, text, signals, ["a", "b", "c", "d"], hold=hold)
    (signals / "go").touch()
    results = [run.communicate(timeout=120) for run in runs]  # ~1 s after go
    for run, (_, err) in zip(runs, results):
        assert run.returncode == 0, err
    expected = hashlib.sha256(GGUFTokenizer.from_gguf(smollm2).encode_corpus(text.read_text()).astype("<i4").tobytes())
    assert {out.strip() for out, _ in results} == {expected.hexdigest()}
    # tokenized once, while the others waited for it
    assert len(list(signals.glob("tokenizing-*"))) == 1
    waited = [err for _, err in results if "another run is tokenizing it; waiting" in err]
    assert len(waited) == 3, [err for _, err in results]
    # one token file and its sidecar: no temporary file, no lock left
    assert cache_files(cache) == [".json", ".tok"]


def test_a_killed_runs_temporary_file_is_removed_by_the_next(smollm2, tmp_path, monkeypatch):
    """A run killed while it writes leaves its temporary file (and its lock
    file); the next run holds the lock, so that file is no live writer's: it
    is removed, and the token file made whole."""
    text = tmp_path / "notes.txt"
    text.write_text("Other notes, on the harbour and its boats.\n\n" * 300)
    cache = tmp_path / "cache"
    monkeypatch.setenv("TOY_CACHE_DIR", str(cache))
    signals = tmp_path / "signals"
    (killed,) = start_runs(smollm2, text, signals, ["killed"], hold="600")
    (signals / "go").touch()
    deadline = time.monotonic() + 60  # tokenizing within ~0.1 s of go
    while not (signals / "tokenizing-killed").exists():
        assert time.monotonic() < deadline and killed.poll() is None, killed.communicate()[1]
        time.sleep(0.01)
    killed.send_signal(signal.SIGKILL)
    killed.communicate(timeout=60)
    left = cache_files(cache)
    assert any(name.endswith(".tmp") for name in left) and any(name.endswith(".lock") for name in left), left
    assert ".tok" not in left and ".json" not in left

    tokens = tokenized_corpus(text, GGUFTokenizer.from_gguf(smollm2))
    assert np.array_equal(tokens, GGUFTokenizer.from_gguf(smollm2).encode_corpus(text.read_text()))
    assert cache_files(cache) == [".json", ".tok"]


def test_a_token_file_damaged_in_place_is_made_again_and_the_run_trains(smollm2, tmp_path, monkeypatch):
    """Bytes of the cached token file overwritten in place (its size, even its
    time, unchanged: only the sidecar's sha256 tells): the next run says so,
    makes it again and trains on it, where it failed in C before ("token
    ids[0] = -1 is outside the vocabulary")."""
    path = tmp_path / "notes.txt"
    path.write_text((SHIPPED[1].read_text() + "\n\n") * 20)
    cache = tmp_path / "cache"
    monkeypatch.setenv("TOY_CACHE_DIR", str(cache))
    token_file = Path(tokenized_corpus(path, GGUFTokenizer.from_gguf(smollm2)).filename)
    made = token_file.read_bytes()
    before = os.stat(token_file)
    with open(token_file, "r+b") as f:  # token ids -1 (out of every vocabulary) and 0x41414141
        f.write(b"\xff\xff\xff\xff")
        f.seek(len(made) // 2)
        f.write(b"AAAA")
    os.utime(token_file, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(token_file).st_size == len(made) and token_file.read_bytes() != made

    run = ["lora", "--model", str(smollm2), "--corpus", str(path), "--steps", "2", "--seq", "32", "--threads", "2"]
    again = toy_train(*run, "--out", str(tmp_path / "again"))  # ~5 s
    assert again.returncode == 0, again.stderr
    said = f"the cached token file {token_file} does not match its checksum (damaged): tokenizing it again"
    assert said in again.stderr
    assert [line.split(":")[0] for line in again.stdout.splitlines()] == ["step 1", "step 2"], again.stdout
    assert token_file.read_bytes() == made and cache_files(cache) == [".json", ".tok"]


def test_a_token_file_of_a_sidecar_without_a_checksum_is_made_again(smollm2, tmp_path, capsys):
    """An earlier toy's sidecar kept only the token count: its token file
    cannot be checked, so it is made again (once) with a checksum."""
    path = tmp_path / "notes.txt"
    path.write_text("Some notes about the island.\n\n" * 300)
    tokenizer = GGUFTokenizer.from_gguf(smollm2)
    made = tokenized_corpus(path, tokenizer)
    about = Path(made.filename).with_suffix(".json")
    n_tokens = json.loads(about.read_text())["tokens"]
    about.write_text(json.dumps({"tokens": n_tokens, "text": str(path)}))
    capsys.readouterr()
    assert np.array_equal(tokenized_corpus(path, tokenizer), made)
    assert "has no checksum (made by an earlier toy): tokenizing it again" in capsys.readouterr().err
    assert json.loads(about.read_text())["sha256"] == corpus.tokens_digest(made)


def test_mpi_ranks_on_one_machine_share_a_new_corpus_token_file(smollm2, tmp_path):
    """mpiexec -n 2 toy-train lora on a text no run has tokenized: both ranks
    reach the empty cache together; the job trains and one token file is made."""
    pytest.importorskip("mpi4py")
    mpiexec = shutil.which("mpiexec") or str(Path(sys.executable).parent / "mpiexec")
    if not Path(mpiexec).exists():
        pytest.skip("no mpiexec")
    path = tmp_path / "notes.txt"
    path.write_text((SHIPPED[1].read_text() + "\n\n") * 200)  # ~1 s to tokenize: the ranks overlap
    cache = tmp_path / "cache"
    run = ["lora", "--model", str(smollm2), "--corpus", str(path), "--steps", "1", "--seq", "32", "--batch", "1"]
    job = subprocess.run(
        [mpiexec, "-n", "2", sys.executable, "-m", "toy.cli.train", *run, "--grad-accum", "2", "--threads", "1"]
        + ["--out", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=300,  # ~20 s
        env={**os.environ, "TOY_CACHE_DIR": str(cache)},
    )
    assert job.returncode == 0, job.stderr
    assert cache_files(cache) == [".json", ".tok"]
