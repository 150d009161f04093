"""Long runs: a run stopped by Ctrl-C, SIGTERM or kill -9 resumes from its
last checkpoint and prints the very lines the uninterrupted run prints."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_helpers import GATE_THREADS, toy_train

DATA = Path(__file__).parent / "data" / "instruct-small.jsonl"

FROM_SCRATCH = ("--threads", GATE_THREADS, "--steps", "40")
LORA = ("lora", "--threads", GATE_THREADS, "--steps", "4", "--seq", "32", "--batch", "1", "--targets", "q,v")
INSTRUCT = (
    "instruct",
    "--threads",
    GATE_THREADS,
    "--seq",
    "48",
    "--batch",
    "1",
    "--grad-accum",
    "2",
    "--steps",
    "3",
    "--eval-split",
    "0",
)


def start(*args):
    return subprocess.Popen(
        [sys.executable, "-m", "toy.cli.train", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def interrupt_after(lines_before_signal: int, *args, sig=signal.SIGINT):
    """Run toy-train, send sig once it has printed that many loss lines;
    returns (exit status, stdout, stderr)."""
    run = start(*args)
    printed = []
    for line in run.stdout:
        printed.append(line)
        if len(printed) == lines_before_signal:
            run.send_signal(sig)
    _, err = run.communicate(timeout=300)
    return run.returncode, "".join(printed), err


def assert_resume_equals_uninterrupted(tmp_path, args, weights):
    whole = toy_train(*args, "--out", str(tmp_path / "whole"))
    assert whole.returncode == 0, whole.stderr

    status, head, err = interrupt_after(1, *args, "--out", str(tmp_path / "cut"))
    assert status == 130, err
    assert "resume with: toy-train --resume" in err
    assert err.strip().splitlines()[-1].startswith("toy-train: stopped by SIGINT after step")

    rest = toy_train("--resume", str(tmp_path / "cut"))
    assert rest.returncode == 0, rest.stderr
    assert head + rest.stdout == whole.stdout
    assert (tmp_path / "cut" / weights).read_bytes() == (tmp_path / "whole" / weights).read_bytes()
    steps = [
        json.loads(line)["step"] for line in (tmp_path / "cut/events.jsonl").read_text().splitlines() if "loss" in line
    ]
    assert steps == list(range(1, len(whole.stdout.splitlines()) + 1))
    return rest


def test_from_scratch_resumes_byte_identical(tmp_path):
    assert_resume_equals_uninterrupted(tmp_path, FROM_SCRATCH, "model.gguf")


@pytest.mark.parametrize(
    "args",
    [("--arch", "gpt2", *FROM_SCRATCH), ("vit-tiny", "--threads", GATE_THREADS, "--steps", "60")],
    ids=["gpt2", "vit-tiny"],
)
def test_gpt2_and_vit_resume_byte_identical(tmp_path, args):
    assert_resume_equals_uninterrupted(tmp_path, args, "model.gguf")


def test_lora_resumes_byte_identical(smollm2, tmp_path):
    assert_resume_equals_uninterrupted(tmp_path, LORA, "adapter.gguf")


def test_instruct_with_grad_accum_resumes_byte_identical(smollm2, tmp_path):
    data = tmp_path / "eight.jsonl"  # fewer samples: quicker perplexity reports
    data.write_text("".join(DATA.read_text().splitlines(keepends=True)[:8]))
    assert_resume_equals_uninterrupted(tmp_path, (*INSTRUCT, "--data", str(data)), "adapter.gguf")


def test_dpo_resumes_byte_identical_without_redoing_its_reference(smollm2, tmp_path):
    pairs = Path(__file__).parent / "data" / "preferences-small.jsonl"
    rest = assert_resume_equals_uninterrupted(
        tmp_path,
        (
            "dpo",
            "--threads",
            GATE_THREADS,
            "--steps",
            "3",
            "--seq",
            "48",
            "--batch",
            "1",
            "--targets",
            "q,v",
            "--eval-split",
            "0",
            "--data",
            str(pairs),
        ),
        "adapter.gguf",
    )
    assert "reference log-probabilities" not in rest.stderr  # read from the checkpoint


def test_sigterm_saves_a_checkpoint_and_exits_143(tmp_path):
    status, head, err = interrupt_after(1, *FROM_SCRATCH, "--out", str(tmp_path / "run"), sig=signal.SIGTERM)
    assert status == 143, err
    assert "stopped by SIGTERM" in err
    latest = json.loads((tmp_path / "run/checkpoint/latest.json").read_text())
    assert latest["step"] == len(head.splitlines())


def test_checkpoints_every_n_steps_keep_the_newest(tmp_path):
    result = toy_train("--steps", "9", "--save-every", "2", "--keep", "2", "--out", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    names = sorted(p.name for p in (tmp_path / "run/checkpoint").iterdir())
    assert names == ["latest.json", "step-00000006.npz", "step-00000008.npz"]


def test_kill_9_never_leaves_an_unreadable_checkpoint(tmp_path):
    """Killed at any moment, saving a checkpoint every step, the run stays resumable."""
    out = tmp_path / "run"
    args = ("--threads", GATE_THREADS, "--steps", "80", "--save-every", "1", "--d-model", "128", "--layers", "4")
    whole = toy_train(*args, "--out", str(tmp_path / "whole"))
    for delay in (0.0, 0.05, 0.13):
        run = start("--resume", str(out)) if (out / "checkpoint").exists() else start(*args, "--out", str(out))
        deadline = time.monotonic() + 120  # a hang guard: the first checkpoint comes within seconds
        while not (out / "checkpoint/latest.json").exists():
            assert time.monotonic() < deadline and run.poll() is None, "no checkpoint was written"
            time.sleep(0.01)
        time.sleep(delay)
        run.kill()
        run.communicate()
    latest = json.loads((out / "checkpoint/latest.json").read_text())
    rest = toy_train("--resume", str(out))
    assert rest.returncode == 0, rest.stderr
    assert rest.stdout.splitlines() == whole.stdout.splitlines()[latest["step"] :]


def test_resume_refuses_a_changed_run(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the quick brown fox jumps over the lazy dog. " * 40)
    status, _, err = interrupt_after(
        1, "--corpus", str(corpus), "--steps", "200", "--seq", "16", "--out", str(tmp_path / "run")
    )
    assert status == 130, err

    changed = toy_train("--resume", str(tmp_path / "run"), "--lr", "0.1")
    assert changed.returncode == 2
    assert changed.stderr.strip() == (
        "toy-train: error: --lr 0.1 differs from the run being resumed "
        "(0.003); a resume continues that run as it was started"
    )

    corpus.write_text("another text altogether, " * 40)
    edited = toy_train("--resume", str(tmp_path / "run"))
    assert edited.returncode == 2
    assert "the data file" in edited.stderr and "changed since" in edited.stderr
    assert len(edited.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "where, phrase",
    [
        ("missing", "no such run directory"),
        ("empty", "no checkpoint was written there"),
    ],
)
def test_resume_of_nothing_is_one_line(tmp_path, where, phrase):
    (tmp_path / "empty").mkdir()
    result = toy_train("--resume", str(tmp_path / where))
    assert result.returncode == 2
    assert phrase in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_resume_with_out_is_refused(tmp_path):
    result = toy_train("--resume", str(tmp_path), "--out", str(tmp_path / "elsewhere"))
    assert result.returncode == 2 and "drop --out" in result.stderr
