"""toy-train as a user runs it: the loss log, the run directory, the golden bytes."""

import json
import re
from pathlib import Path

import gguf
import numpy as np
import pytest

from cli_helpers import GATE_THREADS, golden_log, toy_train

LOG_LINE = re.compile(r"^step \d+: loss=\d+\.\d{6}$")


def test_default_command_matches_the_golden_log(tmp_path):
    result = toy_train("--threads", GATE_THREADS, "--out", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    assert result.stdout == golden_log("from-scratch-cpu.txt")


def test_same_command_gives_the_same_bytes(tmp_path):
    args = ("--threads", GATE_THREADS, "--steps", "12", "--seed", "7")
    first = toy_train(*args, "--out", str(tmp_path / "a"))
    second = toy_train(*args, "--out", str(tmp_path / "b"))
    assert first.returncode == 0 and second.returncode == 0
    assert first.stdout == second.stdout
    assert len(first.stdout.splitlines()) == 12
    # the saved weights are byte-identical too
    assert (tmp_path / "a/model.gguf").read_bytes() == (tmp_path / "b/model.gguf").read_bytes()


def test_stdout_is_only_the_loss_log(tmp_path):
    result = toy_train("--steps", "3", "--out", str(tmp_path / "run"))
    lines = result.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["step 1", "step 2", "step 3"]
    assert all(LOG_LINE.match(line) for line in lines)
    assert "tokens/s" in result.stderr


def test_a_different_seed_gives_a_different_run(tmp_path):
    a = toy_train("--steps", "2", "--seed", "1", "--out", str(tmp_path / "a"))
    b = toy_train("--steps", "2", "--seed", "2", "--out", str(tmp_path / "b"))
    assert a.stdout != b.stdout


def test_run_directory_holds_config_events_plot_and_a_llama_gguf(tmp_path):
    out = tmp_path / "run"
    result = toy_train(
        "--steps",
        "4",
        "--out",
        str(out),
        "--d-model",
        "32",
        "--layers",
        "3",
        "--heads",
        "4",
        "--kv-heads",
        "1",
        "--untied",
    )
    assert result.returncode == 0, result.stderr
    config = json.loads((out / "config.json").read_text())
    assert config["model"]["n_layers"] == 3 and config["model"]["untied"] is True
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert [e["step"] for e in events] == [1, 2, 3, 4]
    assert all(e["tokens"] == 64 * 4 and e["seconds"] > 0 and e["lr"] > 0 for e in events)
    logged = [float(line.split("=")[1]) for line in result.stdout.splitlines()]
    assert [round(e["loss"], 6) for e in events] == logged
    assert (out / "loss.svg").read_text().startswith("<svg")

    reader = gguf.GGUFReader(out / "model.gguf")
    fields = {name: field for name, field in reader.fields.items()}
    assert bytes(fields["general.architecture"].parts[-1]).decode() == "llama"
    assert int(fields["llama.block_count"].parts[-1][0]) == 3
    assert int(fields["llama.attention.head_count_kv"].parts[-1][0]) == 1
    names = {t.name for t in reader.tensors}
    assert {
        "token_embd.weight",
        "output.weight",
        "output_norm.weight",
        "blk.2.attn_q.weight",
        "blk.2.ffn_down.weight",
    } <= names
    embd = next(t for t in reader.tensors if t.name == "token_embd.weight")
    assert embd.data.shape == (256, 32) and np.isfinite(embd.data).all()


def test_json_mode_prints_one_object(tmp_path):
    result = toy_train("--steps", "2", "--json", "--out", str(tmp_path / "run"))
    assert result.returncode == 0
    report = json.loads(result.stdout)
    assert report["format"] == "toy/train-v1" and len(report["losses"]) == 2
    assert Path(report["run_dir"]) == tmp_path / "run" and report["weights"].endswith("model.gguf")


def test_own_text_corpus_and_token_corpus(tmp_path):
    text = tmp_path / "my.txt"
    text.write_text("the cat sat on the mat. " * 200)
    result = toy_train("--corpus", str(text), "--steps", "3", "--out", str(tmp_path / "a"))
    assert result.returncode == 0, result.stderr
    tokens = tmp_path / "my.tok"
    np.tile(np.arange(300, dtype="<i4"), 10).tofile(tokens)
    result = toy_train("--corpus", str(tokens), "--steps", "3", "--out", str(tmp_path / "b"))
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "b/config.json").read_text())["model"]["vocab"] == 300


@pytest.mark.slow
def test_loss_falls_clearly_over_200_steps(tmp_path):
    result = toy_train("--steps", "200", "--json", "--out", str(tmp_path / "run"))
    losses = json.loads(result.stdout)["losses"]
    first, last = losses[0], np.mean(losses[-10:])
    assert first > 5.0  # about ln(256) = 5.55: nothing learned yet
    assert last < 0.6 * first, (first, last)


def test_clip_norm_writes_the_pre_clip_norm_to_events(tmp_path):
    out = tmp_path / "run"
    result = toy_train("--steps", "3", "--clip-norm", "0.5", "--out", str(out))
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert all(e["grad_norm"] > 0 for e in events)
    plain = toy_train("--steps", "3", "--out", str(tmp_path / "plain"))
    assert "grad_norm" not in (tmp_path / "plain" / "events.jsonl").read_text()
    assert result.stdout.splitlines()[0] == plain.stdout.splitlines()[0]  # step 1's loss is before any update


def test_version_names_the_cpu_build_that_runs():
    # a source build says "native"; a portable wheel names the variant it chose
    result = toy_train("--version")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith("toy ")
    cpu = next(line for line in lines if line.startswith("cpu: "))
    from toy.native.library import backend_variant

    assert cpu.split()[1] == backend_variant("cpu")
    assert any(line.startswith("cuda: ") for line in lines)


def test_version_names_the_variant_each_cpu_kernel_runs_in_and_a_level_bounds_them(monkeypatch):
    from toy.native.library import library

    lib = library("cpu")
    if not lib.tnn_cpu_kernel_runs(b"fgemm", b"avx2"):
        pytest.skip("no kernel of toy's runs on this CPU")
    cpu = next(line for line in toy_train("--version").stdout.splitlines() if line.startswith("cpu: "))
    assert "toy's kernels: qgemm " in cpu and "fgemm_bf16 " in cpu
    monkeypatch.setenv("TNN_CPU_VARIANT", "haswell")
    cpu = next(line for line in toy_train("--version").stdout.splitlines() if line.startswith("cpu: "))
    assert "qgemm avx2, fgemm avx2, head_loss avx2, adamw avx2, fgemm_bf16 none" in cpu


def test_help_shows_every_default_and_each_recipe_describes_its_own_steps():
    import argparse

    from toy.cli.generate import build_parser as generate_parser
    from toy.cli.train import _recipe_parsers, build_parser

    parsers = {**_recipe_parsers(build_parser()), "toy-generate": generate_parser()}
    for name, parser in parsers.items():
        for action in parser._actions:
            if action.option_strings and action.nargs != 0 and action.help is not argparse.SUPPRESS:
                assert "default" in action.help, (name, action.option_strings)
    vit_help = _recipe_parsers(build_parser())["vit-tiny"].format_help()
    assert "--data" not in vit_help and "(default 50)" in vit_help  # its own warmup, not 0
