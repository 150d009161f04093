"""Data parallelism over MPI (mpiexec -n 2, one thread each): every rank ends
with the same parameters, the loss log follows a one-process run over the
same global batch, and a rank that dies or hangs ends the job instead of
hanging it. Skips without mpi4py and mpiexec (pip install "toy[mpi]")."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import mpi_worker
import toy
from cli_helpers import toy_train

pytest.importorskip("mpi4py")
MPIEXEC = shutil.which("mpiexec") or str(Path(sys.executable).parent / "mpiexec")
if not Path(MPIEXEC).exists():
    pytest.skip("no mpiexec", allow_module_level=True)
HERE = Path(__file__).parent


def mpiexec(*args, timeout=300, env=None):
    return subprocess.run(
        [MPIEXEC, "-n", "2", sys.executable, *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def losses(stdout: str) -> np.ndarray:
    return np.array([float(line.split("=")[1]) for line in stdout.splitlines()])


def test_ranks_end_bitwise_equal_and_match_one_process():
    result = mpiexec(str(HERE / "mpi_worker.py"))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert len(set(report["hashes"])) == 1  # both ranks hold the same bytes

    # one process, the same four micro-batches a step, accumulated
    recipe = mpi_worker.small_model()
    rng = np.random.default_rng(5)
    alone = [
        recipe.step_accumulated(mpi_worker.micro_batches(rng), toy.adamw_hp(step, 3e-3), step == 1)
        for step in range(1, mpi_worker.STEPS + 1)
    ]
    np.testing.assert_allclose(report["losses"], alone, rtol=0, atol=1e-5)


@pytest.mark.parametrize(
    "recipe",
    [
        ("--steps", "20", "--grad-accum", "2"),
        ("lora", "--steps", "6", "--seq", "32", "--batch", "1", "--grad-accum", "2", "--targets", "q,v"),
    ],
    ids=["from-scratch", "lora"],
)
def test_mpiexec_toy_train_logs_what_one_process_logs(tmp_path, recipe, smollm2):
    parallel = mpiexec("-m", "toy.cli.train", *recipe, "--threads", "1", "--out", str(tmp_path / "two"))
    assert parallel.returncode == 0, parallel.stderr
    alone = toy_train(*recipe, "--threads", "1", "--out", str(tmp_path / "one"))
    assert alone.returncode == 0, alone.stderr
    assert len(parallel.stdout.splitlines()) == len(alone.stdout.splitlines())  # rank 0 alone prints
    np.testing.assert_allclose(losses(parallel.stdout), losses(alone.stdout), rtol=0, atol=1e-5 + 1e-6)
    config = json.loads((tmp_path / "two" / "config.json").read_text())
    assert config["ranks"] == 2
    assert parallel.stderr.count("wrote") == 1  # one summary line, rank 0's


def test_grad_accum_must_split_over_the_ranks(tmp_path):
    result = mpiexec("-m", "toy.cli.train", "--steps", "2", "--out", str(tmp_path / "run"))
    assert result.returncode == 2
    assert "--grad-accum (1) must be a multiple of the 2 ranks" in result.stderr


def rank_pid(rank: int, marker: str, deadline: float) -> int:
    """The pid of the toy-train process of that rank whose command line holds marker."""
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            try:
                if marker in (entry / "cmdline").read_bytes().decode(
                    errors="replace"
                ) and f"PMI_RANK={rank}".encode() in (entry / "environ").read_bytes().split(b"\0"):
                    return int(entry.name)
            except (OSError, ValueError):
                continue
        time.sleep(0.05)
    raise AssertionError(f"rank {rank} did not start")


def start_long_run(out: Path, launcher=(), **env):
    args = [
        MPIEXEC,
        *launcher,
        "-n",
        "2",
        sys.executable,
        "-m",
        "toy.cli.train",
        "--steps",
        "100000",
        "--grad-accum",
        "2",
        "--threads",
        "1",
        "--save-every",
        "0",
        "--out",
        str(out),
    ]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **env})


def test_a_rank_that_hangs_is_named_and_the_job_ends(tmp_path):
    # MPICH's launcher may itself end a job whose process it sees stopped;
    # -disable-auto-cleanup leaves the stopped rank to toy's timeout
    run = start_long_run(tmp_path / "hang", launcher=("-disable-auto-cleanup",), TOY_MPI_TIMEOUT="3")
    pid = rank_pid(1, str(tmp_path / "hang"), time.monotonic() + 60)
    time.sleep(1.0)  # a few steps in
    os.kill(pid, signal.SIGSTOP)
    try:
        _, err = run.communicate(timeout=120)  # hang guard: the timeout is 3 s
    finally:
        os.kill(pid, signal.SIGKILL) if Path(f"/proc/{pid}").exists() else None
    assert run.returncode != 0
    line = next(text for text in err.splitlines() if text.startswith("toy-train: rank 0:"))
    assert "rank 1 does not answer" in line and "waited 3 s" in line


def test_a_rank_that_dies_ends_the_job(tmp_path):
    run = start_long_run(tmp_path / "die")
    pid = rank_pid(1, str(tmp_path / "die"), time.monotonic() + 60)
    time.sleep(1.0)
    os.kill(pid, signal.SIGKILL)
    out, err = run.communicate(timeout=120)  # hang guard
    assert run.returncode != 0
    assert "BAD TERMINATION" in out + err  # MPICH's launcher reports the dead process


def test_ctrl_c_stops_every_rank_after_the_same_step_with_one_checkpoint(tmp_path):
    out = tmp_path / "stop"
    run = start_long_run(out)
    first = run.stdout.readline()  # training has started
    assert first.startswith("step 1:")
    run.send_signal(signal.SIGINT)  # mpiexec forwards it to both ranks
    _, err = run.communicate(timeout=120)
    assert run.returncode == 130, err
    assert err.count("stopped by SIGINT") == 1  # rank 0 says it, once
    latest = json.loads((out / "checkpoint/latest.json").read_text())
    assert latest["step"] >= 1 and (out / "checkpoint" / latest["file"]).exists()
