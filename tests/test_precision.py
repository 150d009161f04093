"""toy-train --precision bf16: mixed precision, the operands of the products
by weights in bfloat16 on the CPU's bfloat16 dot products (AVX512-BF16 or the
AMX tiles), attention and everything else float32. Under LoRA the frozen base
can be a bfloat16 copy multiplied the same way (--base-compute bf16; fast's
choice on AMX).

It must train as float32 does (to bfloat16's rounding), give the same bytes
every run, and, where the CPU has neither, refuse in one line."""

import json
import re

import pytest

from cli_helpers import GATE_THREADS, toy_train
from toy.native.library import library

LOSS = re.compile(r"^step (\d+): loss=(\d+\.\d+)$")


def losses(stdout: str) -> list[float]:
    return [float(LOSS.match(line).group(2)) for line in stdout.splitlines()]


def has_bf16_products() -> bool:
    lib = library("cpu")
    return any(lib.tnn_cpu_kernel_runs(b"fgemm_bf16", variant) for variant in (b"avx512", b"amx"))


NO_BF16 = "this CPU has neither AVX512-BF16 nor AMX-BF16 for the bfloat16 products"


@pytest.mark.skipif(not has_bf16_products(), reason=NO_BF16)
def test_bf16_trains_as_f32_does_and_gives_the_same_bytes_twice(tmp_path):
    args = ("--threads", GATE_THREADS, "--steps", "12", "--d-model", "128", "--d-ff", "352")
    f32 = toy_train(*args, "--out", str(tmp_path / "f32"))
    bf16 = toy_train(*args, "--precision", "bf16", "--out", str(tmp_path / "bf16"))
    again = toy_train(*args, "--precision", "bf16", "--out", str(tmp_path / "again"))
    assert f32.returncode == 0 and bf16.returncode == 0 and again.returncode == 0, bf16.stderr
    assert bf16.stdout == again.stdout
    assert bf16.stdout != f32.stdout  # the products did run in bfloat16
    ours, theirs = losses(bf16.stdout), losses(f32.stdout)
    assert ours[-1] < ours[0] - 1.0  # it learns
    for a, b in zip(ours, theirs, strict=True):
        assert abs(a - b) <= 2e-3 * b  # as float32 does, to bfloat16's rounding
    assert '"precision": "bf16"' in (tmp_path / "bf16/config.json").read_text()


@pytest.mark.skipif(not has_bf16_products(), reason=NO_BF16)
def test_lora_in_bf16_trains_as_f32_does_also_through_a_bfloat16_copy_of_the_base(tmp_path, smollm2):
    """LoRA on SmolLM2 (Q4_1) under --precision bf16: with the blocks' int8
    copies and the head's bfloat16 one (--base-compute bf16_head, fast's
    choice where the CPU has no AMX), with a bfloat16 copy of every matrix
    (--base-compute bf16: both products by it, summed whole in float32;
    fast's choice on AMX) and with fast (the same bytes as its choice), the
    losses follow the f32 run's, the same bytes every run and for any thread
    count (two threads share out some products by columns,
    one runs them whole)."""
    args = ("lora", "--model", smollm2, "--threads", GATE_THREADS, "--steps", "8", "--seq", "64", "--batch", "2")
    args += ("--targets", "q,k,v,o,gate,up,down")
    f32 = toy_train(*args, "--out", str(tmp_path / "f32"))
    runs = {
        (base, n): toy_train(
            *args,
            "--precision",
            "bf16",
            "--base-compute",
            base,
            "--threads",
            threads,
            "--out",
            str(tmp_path / f"{base}{n}"),
        )
        for base in ("fast", "bf16_head", "bf16")
        for n, threads in ((1, GATE_THREADS), (2, "1"))
    }
    assert f32.returncode == 0, f32.stderr
    for base in ("fast", "bf16_head", "bf16"):
        bf16, again = runs[base, 1], runs[base, 2]
        assert bf16.returncode == 0 and again.returncode == 0, bf16.stderr
        assert bf16.stdout == again.stdout
        assert bf16.stdout != f32.stdout
        for a, b in zip(losses(bf16.stdout), losses(f32.stdout), strict=True):
            assert abs(a - b) <= 2e-3 * b  # step by step (the corpus' batches move it up and down)
    amx = library("cpu").tnn_cpu_kernel_runs(b"fgemm_bf16", b"amx")
    assert runs["fast", 1].stdout == runs["bf16" if amx else "bf16_head", 1].stdout
    config = (tmp_path / "bf161/config.json").read_text()
    assert json.loads(config)["lora"]["base_compute"] == "bf16" and '"precision": "bf16"' in config


@pytest.mark.parametrize("base", ["bf16", "bf16_head"])
def test_a_bfloat16_base_without_bf16_precision_is_refused_in_one_line(tmp_path, base):
    result = toy_train("lora", "--base-compute", base, "--steps", "2", "--out", str(tmp_path / "run"))
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "needs precision bf16" in result.stderr and result.stdout == ""


@pytest.mark.parametrize(
    "recipe",
    [[], ["warm-start", "--seq", "16", "--batch", "1", "--d-model", "64"], ["lora", "--seq", "16", "--batch", "1"]],
    ids=["from-scratch", "warm-start", "lora"],
)
def test_bf16_where_the_cpu_has_no_bf16_products_is_refused_in_one_line(tmp_path, monkeypatch, recipe):
    # icelake: AVX-512 without bfloat16 products (on a CPU without them the refusal is the same)
    monkeypatch.setenv("TNN_CPU_VARIANT", "icelake")
    result = toy_train(*recipe, "--threads", "1", "--steps", "2", "--precision", "bf16", "--out", str(tmp_path / "run"))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "precision bf16 needs" in result.stderr
    assert "AVX512-BF16" in result.stderr and "AMX" in result.stderr
    assert result.stdout == ""


def test_an_unknown_precision_is_refused_by_the_parser(tmp_path):
    result = toy_train("--steps", "2", "--precision", "fp8", "--out", str(tmp_path / "run"))
    assert result.returncode == 2 and "invalid choice: 'fp8'" in result.stderr
