"""toy-generate as llama.cpp's llama-cli is used: sampling options, streamed
output, interactive chat, --version, -c, byte-level models from toy-train and
--run. Each command runs as a user runs it: a subprocess, stdout and stderr apart."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import reference_llama as ref
import toy
from cli_helpers import toy_train
from gguf_fixtures import tiny_tokenizer, write_llama_gguf
from toy.generation.chat import Chat
from toy.recipes import LoRA

# one thread: on a machine shared with other work, two threads wait on each
# other at every op (ten times slower and more)
THREADS = ("-t", "1")


def toy_generate(*args, input=None, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "toy.cli.generate", *args], capture_output=True, input=input, timeout=timeout
    )


def text(result) -> str:
    return result.stdout.decode("utf-8")


def assert_one_line(result, *phrases):
    stderr = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 2, (result.returncode, stderr[-2000:])
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("toy-generate: error: "), stderr[-2000:]
    for phrase in phrases:
        assert phrase in lines[0], lines[0]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """toy-train runs: from scratch (llama, byte tokens) and GPT-2."""
    root = tmp_path_factory.mktemp("runs")
    for name, args in (("scratch", ["--steps", "5"]), ("gpt2", ["--arch", "gpt2", "--steps", "2"])):
        result = toy_train(*args, "--threads", "1", "--out", str(root / name))
        assert result.returncode == 0, result.stderr
    return root


def test_sampling_options_as_llama_cpp_spells_them(smollm2):
    prompt = ("1 2 3 1 2 3 1 2 3 1 2 3", "-n", "12", *THREADS)
    greedy = toy_generate(*prompt)
    assert greedy.returncode == 0 and "1 2 3" in text(greedy)
    assert toy_generate(*prompt, "--temp", "1.5", "--seed", "4", "--top-p", "0.000001").stdout == greedy.stdout
    assert toy_generate(*prompt, "--temperature", "1.5", "--seed", "4", "--min-p", "1").stdout == greedy.stdout
    penalized = toy_generate(*prompt, "--repeat-penalty", "1.5")
    assert penalized.returncode == 0 and "1 2 3" not in text(penalized)
    assert toy_generate(*prompt, "--repetition-penalty", "1.5").stdout == penalized.stdout
    assert toy_generate(*prompt, "--repeat-penalty", "1.5", "--repeat-last-n", "0").stdout == greedy.stdout


@pytest.mark.parametrize(
    "option,value",
    [
        ("--top-p", "1.5"),
        ("--top-p", "nan"),
        ("--min-p", "-0.1"),
        ("--min-p", "inf"),
        ("--repeat-penalty", "0"),
        ("--repetition-penalty", "-1"),
        ("--repeat-penalty", "nan"),
        ("--repeat-last-n", "-2"),
        ("--repeat-last-n", "3000000000"),
        ("--ctx-size", "2000000"),
        ("-c", "-1"),
    ],
)
def test_new_options_out_of_range_are_one_line(option, value):
    flag = {"--repetition-penalty": "--repeat-penalty", "-c": "--ctx-size"}.get(option, option)
    assert_one_line(toy_generate("hi", option, value), flag)


def test_the_text_is_streamed_as_it_is_generated(smollm2):
    want = toy.generate(toy.load_model(smollm2, threads=1), "Once upon a time", 24) + "\n"
    child = subprocess.Popen(
        [sys.executable, "-m", "toy.cli.generate", "Once upon a time", "-n", "24", *THREADS],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    chunks = []
    while True:
        chunk = os.read(child.stdout.fileno(), 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    child.wait(timeout=60)
    assert child.returncode == 0, child.stderr.read()
    assert b"".join(chunks).decode() == want
    assert len(chunks) >= 3, chunks  # in pieces, as they came, not once at the end


def test_stop_strings_hold_while_streaming(smollm2):
    full = text(toy_generate("Once upon a time", "-n", "20", *THREADS))
    stop = " ".join(full.split()[3:5])
    cut = toy_generate("Once upon a time", "-n", "20", "--stop", stop, "--stop", "never-there", *THREADS)
    assert cut.returncode == 0 and text(cut) == full[: full.index(stop)] + "\n"


def test_chat_reads_turns_from_stdin_and_keeps_the_conversation(smollm2):
    turns = ["What is the capital of France?", "", "And of Italy?"]
    result = toy_generate("--chat", "-n", "16", "--stop", "\n", *THREADS, input="\n".join(turns).encode() + b"\n")
    assert result.returncode == 0, result.stderr
    assert b"> " not in result.stderr  # stdin is not a terminal: no prompt shown
    answers = text(result).splitlines()
    chat = Chat(toy.load_model(smollm2, threads=1))
    expected = [chat.say(turns[0], 16, stop=("\n",)), chat.say(turns[2], 16, stop=("\n",))]
    assert answers == expected and all(answers)
    # the second turn was answered after the first: in the rendering it was given
    assert turns[0] in chat.prompt_for("x") and expected[0] in chat.prompt_for("x")


def test_a_system_message_for_chats_only(smollm2):
    plain = toy_generate("--chat", "Say hello.", "-n", "8", *THREADS)
    pirate = toy_generate(
        "--chat", "--system", "You are a pirate. Start every answer with Arr.", "Say hello.", "-n", "8", *THREADS
    )
    assert plain.returncode == pirate.returncode == 0 and plain.stdout != pirate.stdout
    assert (
        text(pirate)
        == toy.generate(
            toy.load_model(smollm2, threads=1),
            "Say hello.",
            8,
            chat=True,
            system="You are a pirate. Start every answer with Arr.",
        )
        + "\n"
    )
    assert_one_line(toy_generate("Say hello.", "--system", "Be brief."), "--system needs --chat")
    assert_one_line(toy_generate("-n", "2"), "give a prompt", "--chat")


def test_stdin_that_is_not_utf8_is_one_line(smollm2):
    assert_one_line(toy_generate("--chat", "-n", "2", *THREADS, input=b"hi\n\xff\xfe\n"), "stdin line 2", "UTF-8")


def test_version_names_the_command_and_its_backends():
    result = toy_generate("--version")
    lines = text(result).splitlines()
    assert result.returncode == 0 and lines[0] == f"toy-generate {toy.__version__}"
    assert any(line.startswith("cpu: ") for line in lines[1:])


def test_ctx_size(runs):
    model = str(runs / "scratch" / "model.gguf")  # trained with --seq 64: a context of 64
    assert_one_line(toy_generate("hello", "-m", model, "-n", "100", *THREADS), "context of 64 tokens")
    wider = toy_generate("hello", "-m", model, "-n", "100", "-c", "128", *THREADS)
    assert wider.returncode == 0 and len(wider.stdout) >= 100  # a byte per token
    assert_one_line(toy_generate("hello", "-m", model, "-n", "4", "-c", "6", *THREADS), "context given")


def test_a_from_scratch_model_generates_bytes(runs):
    model = runs / "scratch" / "model.gguf"
    result = toy_generate("hello", "-m", str(model), *THREADS)  # -n by default: what the context leaves
    assert result.returncode == 0, result.stderr
    assert len(result.stdout) >= 59 and text(result).endswith("\n")
    loaded = toy.load_model(model, threads=1)
    assert toy.generate(loaded, "hello", 59) + "\n" == result.stdout.decode("utf-8")
    # bytes in, bytes out: a prompt that is not UTF-8 is taken as given, bytes out that are not show as U+FFFD
    assert loaded.tokenizer.encode("h\u00e9\udcff") == [0x68, 0xC3, 0xA9, 0xFF]
    assert loaded.tokenizer.decode([0x68, 0xFF, 0xC3, 0xA9, 0xE6]) == "h\ufffd\u00e9\ufffd"
    assert toy_generate(b"\xff\xfe hi", "-m", str(model), "-n", "3", *THREADS).returncode == 0
    assert_one_line(toy_generate("hello", "-m", str(model), "--chat", *THREADS), "chat template")


def test_a_prompt_that_is_not_utf8_is_one_line_for_a_text_tokenizer(smollm2):
    assert_one_line(toy_generate(b"\xff\xfe hi", "-n", "2", *THREADS), "not UTF-8")


def test_a_gpt2_model_is_refused_by_name(runs):
    assert_one_line(toy_generate("hello", "-m", str(runs / "gpt2" / "model.gguf"), "-n", "2"), "GPT-2")
    assert_one_line(toy_generate("hello", "--run", str(runs / "gpt2"), "-n", "2"), "GPT-2")


def test_run_takes_the_model_from_a_run_directory(runs):
    by_run = toy_generate("hello", "--run", str(runs / "scratch"), "-n", "8", *THREADS)
    by_model = toy_generate("hello", "-m", str(runs / "scratch" / "model.gguf"), "-n", "8", *THREADS)
    assert by_run.returncode == 0 and by_run.stdout == by_model.stdout and len(by_run.stdout) >= 8


def test_run_takes_the_base_and_adapter_of_a_lora_run(tmp_path):
    cfg = ref.Config(vocab=300, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=64, untied=True)
    params = ref.init_params(cfg, np.random.default_rng(0), scale=0.3)
    base = write_llama_gguf(tmp_path / "base.gguf", params, cfg, tokenizer=tiny_tokenizer(300))
    recipe = LoRA("cpu", threads=1)
    recipe.realize(base, None, 4, toy.RecipeOptions(t_seq=6, t_batch=1), targets=("q", "v"))
    ids = np.array([[3, 7, 11, 2, 9, 4, 5]], dtype=np.int32)
    for step in range(1, 4):
        recipe.step(ids[:, :-1], np.arange(6)[None], ids[:, 1:], toy.adamw_hp(step, 5e-2), step == 1)
    run = tmp_path / "run"
    run.mkdir()
    recipe.save_adapter(run / "adapter.gguf")
    (run / "config.json").write_text(json.dumps({"recipe": "lora", "base": str(base)}))
    by_run = toy_generate("the", "--run", str(run), "-n", "6", *THREADS)
    by_files = toy_generate("the", "-m", str(base), "--adapter", str(run / "adapter.gguf"), "-n", "6", *THREADS)
    base_only = toy_generate("the", "-m", str(base), "-n", "6", *THREADS)
    assert by_run.returncode == 0 and by_run.stdout == by_files.stdout != base_only.stdout
    assert_one_line(toy_generate("the", "--run", str(run), "-m", str(base)), "--run", "-m/--model")
    assert_one_line(toy_generate("the", "--run", str(run), "--adapter", str(run / "adapter.gguf")), "--run")
    (run / "adapter.gguf").unlink()
    assert_one_line(toy_generate("the", "--run", str(run)), "no adapter.gguf", "--resume")


@pytest.mark.parametrize(
    "content,phrase",
    [
        (None, "config.json not found"),
        (b"{not json", "config.json is damaged"),
        (b"[1, 2]", "config.json is damaged"),
        (b'{"recipe": "lora", "base": 7}', "config.json is damaged"),
        (b'{"recipe": "lora", "base": "/nonexistent/base.gguf"}', "/nonexistent/base.gguf"),
        (b'{"recipe": "vit-tiny"}', "image classifier"),
    ],
)
def test_a_run_directory_that_is_missing_or_damaged_is_one_line(tmp_path, content, phrase):
    run = tmp_path / "run"
    run.mkdir()
    if content is not None:
        (run / "config.json").write_bytes(content)
    assert_one_line(toy_generate("hi", "--run", str(run)), phrase)
    assert_one_line(toy_generate("hi", "--run", str(tmp_path / "none")), "not a directory")
