"""The probes of issue 27, run as a user runs them: each hostile command line
or file ends in one line on stderr and exit 2 (or, where the input is valid,
in success) -- no traceback, hang, out-of-memory kill or lost run."""

import json
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

import reference_llama as ref
from cli_helpers import toy_train
from gguf_fixtures import tiny_tokenizer, write_llama_gguf

# a runaway template must be stopped in seconds: the hang guard is far above that
HANG_GUARD = 120


def toy_generate(*args, timeout=HANG_GUARD):
    return subprocess.run(
        [sys.executable, "-m", "toy.cli.generate", *args], capture_output=True, text=True, timeout=timeout
    )


def assert_one_line(result, prog, *phrases):
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert lines[0].startswith(f"{prog}: error: ")
    for phrase in phrases:
        assert phrase in lines[0], lines[0]


def chat_model(path, template):
    """A tiny llama GGUF with a byte-level tokenizer and the given chat template."""
    cfg = ref.Config(vocab=300, d_model=32, n_layers=1, n_heads=4, n_kv_heads=2, d_ff=64, untied=True)
    params = ref.init_params(cfg, np.random.default_rng(0), scale=0.3)
    return write_llama_gguf(path, params, cfg, tokenizer=tiny_tokenizer(300), chat_template=template)


# ---- data loss: a run directory used twice ------------------------------------


def test_a_second_run_into_the_same_out_is_refused_and_the_first_still_resumes(tmp_path):
    first = toy_train("--out", "runA", "--steps", "12", "--save-every", "5", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    before = {p.name: p.read_bytes() for p in (tmp_path / "runA").iterdir() if p.is_file()}

    second = toy_train("--out", "runA", "--steps", "3", "--save-every", "2", "--seed", "1", cwd=tmp_path)
    assert_one_line(second, "toy-train", "--out runA already holds a run", "--resume runA", "--overwrite")
    assert {p.name: p.read_bytes() for p in (tmp_path / "runA").iterdir() if p.is_file()} == before
    assert (tmp_path / "runA/checkpoint/step-00000010.npz").is_file()


def test_a_link_left_at_a_temporary_name_is_replaced_not_written_through(tmp_path):
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me")
    run = tmp_path / "run"
    run.mkdir()
    for name in ("config.json.tmp", "loss.svg.tmp", "model.gguf.tmp"):
        (run / name).symlink_to(outside)
    result = toy_train("--out", str(run), "--steps", "2", "--overwrite")
    assert result.returncode == 0, result.stderr
    assert outside.read_text() == "keep me"
    assert json.loads((run / "config.json").read_text())["steps"] == 2


# ---- hangs and memory blow-ups from input -------------------------------------

LOOP = "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}"


def test_a_chat_template_that_loops_is_stopped_in_one_line(tmp_path):
    model = chat_model(tmp_path / "loop.gguf", LOOP)
    result = toy_generate("hi", "--model", str(model), "--chat", "--max-new-tokens", "2")
    assert_one_line(result, "toy-generate", "chat template")


def test_instruct_stops_a_looping_template_in_one_line(tmp_path):
    model = chat_model(tmp_path / "loop.gguf", LOOP)
    data = tmp_path / "pairs.jsonl"
    data.write_text(json.dumps({"prompt": "hi", "response": "there"}) + "\n")
    result = toy_train(
        "instruct",
        "--model",
        str(model),
        "--data",
        str(data),
        "--steps",
        "1",
        "--seq",
        "16",
        "--batch",
        "1",
        "--out",
        str(tmp_path / "run"),
        timeout=HANG_GUARD,
    )
    assert_one_line(result, "toy-train", "chat template")


def test_a_chat_template_touching_class_internals_is_refused_in_one_line(tmp_path):
    model = chat_model(tmp_path / "escape.gguf", "{{ messages.__class__.__mro__ }}")
    assert_one_line(
        toy_generate("hi", "--model", str(model), "--chat", "--max-new-tokens", "2"), "toy-generate", "chat template"
    )


def png(width: int, height: int) -> bytes:
    """A greyscale PNG of one colour: a few kilobytes however large it claims to be."""

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    row = b"\0" + b"\0" * width
    body = zlib.compress(row * height, 9)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
        + chunk(b"IDAT", body)
        + chunk(b"IEND", b"")
    )


def image_folder(root, big=None):
    for label in ("a", "b"):
        (root / label).mkdir(parents=True)
        for i in range(2):
            (root / label / f"{i}.png").write_bytes(png(8, 8))
    if big is not None:
        (root / "a" / "big.png").write_bytes(png(big, big))
    return root


def test_an_image_size_the_machine_cannot_hold_is_refused_with_the_figure(tmp_path):
    pytest.importorskip("PIL")
    result = toy_train(
        "vit-tiny",
        "--images",
        str(image_folder(tmp_path / "imgs")),
        "--image-size",
        "60000",
        "--steps",
        "1",
        "--out",
        str(tmp_path / "run"),
    )
    assert_one_line(result, "toy-train", "MB")


def test_a_decompression_bomb_is_refused_in_one_line(tmp_path):
    pytest.importorskip("PIL")
    folder = image_folder(tmp_path / "imgs", big=20000)
    result = toy_train(
        "vit-tiny", "--images", str(folder), "--image-size", "8", "--steps", "1", "--out", str(tmp_path / "run")
    )
    assert_one_line(result, "toy-train", "big.png")


# ---- numbers past the C API's int32_t, NaN, negative seeds -----------------------


@pytest.mark.parametrize(
    "args,phrase",
    [
        (["--d-model", "4294967296"], "--d-model"),
        (["--batch", "5000000000"], "--batch"),
        (["--threads", "3000000000"], "--threads"),
        (["lora", "--rank", "3000000000"], "--rank"),
    ],
)
def test_numbers_past_int32_are_refused_with_their_range(args, phrase):
    assert_one_line(toy_train(*args), "toy-train", phrase, "from 1 to")


@pytest.mark.parametrize(
    "args,phrase",
    [
        (["--max-new-tokens", "3000000000"], "--max-new-tokens"),
        (["--temperature", "nan"], "--temperature"),
        (["--seed", "-1"], "--seed"),
    ],
)
def test_generation_options_out_of_range_are_refused(args, phrase):
    assert_one_line(toy_generate("hi", *args), "toy-generate", phrase)


# ---- instruct data --------------------------------------------------------------


def instruct(tmp_path, data: bytes, *extra):
    path = tmp_path / "data.jsonl"
    path.write_bytes(data)
    return toy_train(
        "instruct",
        "--data",
        str(path),
        "--steps",
        "1",
        "--seq",
        "32",
        "--batch",
        "1",
        "--out",
        str(tmp_path / "run"),
        *extra,
    )


def test_instruct_data_that_is_not_utf8_is_refused_naming_the_line(tmp_path):
    line = json.dumps({"prompt": "hi", "response": "x"}).encode()
    assert_one_line(instruct(tmp_path, line + b"\n" + line.replace(b"x", b"\xff") + b"\n"), "toy-train", "data.jsonl:2")


def test_instruct_data_nested_100000_deep_is_refused_naming_the_line(tmp_path):
    assert_one_line(instruct(tmp_path, b"[" * 100_000 + b"]" * 100_000 + b"\n"), "toy-train", "data.jsonl:1")


def test_line_separators_inside_json_strings_are_text_not_line_breaks(tmp_path, smollm2):
    line = json.dumps({"prompt": "one\u2028two\u2029three", "response": "four"}, ensure_ascii=False)
    result = instruct(tmp_path, (line + "\n").encode())
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("step 1: loss=")


# ---- adapters -------------------------------------------------------------------


def test_an_adapter_for_a_tensor_toy_does_not_adapt_is_refused_naming_it(tmp_path, smollm2):
    import gguf

    writer = gguf.GGUFWriter(str(tmp_path / "odd.gguf"), "llama")
    writer.add_string("general.type", "adapter")
    writer.add_string("adapter.type", "lora")
    writer.add_float32("adapter.lora.alpha", 16.0)
    writer.add_tensor("token_embd.weight.lora_a", np.zeros((8, 576), dtype=np.float32))
    writer.add_tensor("token_embd.weight.lora_b", np.zeros((49152, 8), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    result = toy_generate("hi", "--adapter", str(tmp_path / "odd.gguf"), "--max-new-tokens", "2")
    assert_one_line(result, "toy-generate", "token_embd")


# ---- paths the system refuses -------------------------------------------------------

LONG = "x" * 300  # longer than a file name may be (255 bytes)


@pytest.mark.parametrize(
    "args",
    [
        ["--corpus", LONG],
        ["lora", "--model", LONG],
        ["instruct", "--data", LONG],
        ["vit-tiny", "--images", LONG],
        ["--resume", LONG],
        ["--out", LONG],
    ],
    ids=["corpus", "model", "data", "images", "resume", "out"],
)
def test_a_path_too_long_for_the_system_is_one_line(tmp_path, args):
    assert_one_line(toy_train(*args, "--steps", "1", cwd=tmp_path), "toy-train", "File name too long")


def test_a_line_break_in_a_path_stays_inside_the_one_line(tmp_path):
    assert_one_line(toy_generate("hi", "--adapter", "a\nb"), "toy-generate", "not found: a\\nb")
    assert_one_line(toy_train("--corpus", "c\rd", cwd=tmp_path), "toy-train", "c\\rd")


# ---- ggml's own complaints ---------------------------------------------------------


def test_ggmls_reason_for_refusing_a_gguf_is_part_of_the_one_line(tmp_path):
    cfg = ref.Config(vocab=50, d_model=32, n_layers=1, n_heads=4, n_kv_heads=2, d_ff=64, untied=True)
    whole = write_llama_gguf(tmp_path / "whole.gguf", ref.init_params(cfg, np.random.default_rng(0)), cfg)
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(whole.read_bytes()[:600])  # inside the key/values: ggml's parser refuses it
    result = toy_train("lora", "--model", str(cut), "--steps", "1", "--out", str(tmp_path / "run"))
    # ggml printed two lines of its own before toy's
    assert_one_line(result, "toy-train", "cut.gguf could not be parsed as GGUF (", "exceeds remaining file size")
