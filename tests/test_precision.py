"""toy-train --precision bf16: mixed precision, the dense products' operands
in bfloat16 on the CPU's AMX tiles, everything else float32.

It must train as float32 does (to bfloat16's rounding), give the same bytes
every run, and, where the CPU has no AMX, refuse in one line."""

import re

import pytest

from cli_helpers import GATE_THREADS, toy_train
from toy.native.library import library

LOSS = re.compile(r"^step (\d+): loss=(\d+\.\d+)$")


def losses(stdout: str) -> list[float]:
    return [float(LOSS.match(line).group(2)) for line in stdout.splitlines()]


def has_bf16_products() -> bool:
    return bool(library("cpu").tnn_cpu_kernel_runs(b"fgemm_bf16", b"amx"))


@pytest.mark.skipif(not has_bf16_products(), reason="this CPU has no AMX-BF16 for the bfloat16 products")
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


@pytest.mark.parametrize(
    "recipe", [[], ["warm-start", "--seq", "16", "--batch", "1", "--d-model", "64"]], ids=["from-scratch", "warm-start"]
)
def test_bf16_where_the_cpu_has_no_amx_is_refused_in_one_line(tmp_path, monkeypatch, recipe):
    # icelake: AVX-512 without AMX (on a CPU without AMX the refusal is the same)
    monkeypatch.setenv("TNN_CPU_VARIANT", "icelake")
    result = toy_train(*recipe, "--threads", "1", "--steps", "2", "--precision", "bf16", "--out", str(tmp_path / "run"))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "precision bf16 needs" in result.stderr and "AMX" in result.stderr
    assert result.stdout == ""


def test_an_unknown_precision_is_refused_by_the_parser(tmp_path):
    result = toy_train("--steps", "2", "--precision", "fp8", "--out", str(tmp_path / "run"))
    assert result.returncode == 2 and "invalid choice: 'fp8'" in result.stderr
