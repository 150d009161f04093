"""The one-line hint for a diverging run (toy.training.divergence)."""

import io
import math

from toy.training.divergence import DivergenceWatch


def watch(losses, lr=2e-3):
    out = io.StringIO()
    w = DivergenceWatch(lr, out=out)
    said = [w.see(step, loss) for step, loss in enumerate(losses, 1)]
    return [s for s in said if s], out.getvalue()


def test_a_noisy_run_that_learns_says_nothing():
    losses = [3.0 - 2.0 * step / 200 + 0.6 * math.sin(step * 1.7) for step in range(200)]
    assert watch(losses) == ([], "")


def test_a_climbing_loss_is_named_once_with_a_lower_lr_to_try():
    losses = [2.5 - 0.05 * step for step in range(20)] + [1.5 + 0.2 * step for step in range(40)]
    said, printed = watch(losses)
    assert len(said) == 1 and printed.count("\n") == 1
    assert "diverging" in said[0] and "--lr 0.0005" in said[0]


def test_a_nan_loss_is_named_at_its_step():
    said, _ = watch([2.0, 1.9, float("nan"), float("nan")])
    assert said == [s for s in said if "the loss is nan at step 3" in s] and len(said) == 1


def test_toy_train_with_a_learning_rate_far_too_high_says_so(tmp_path):
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "toy.cli.train",
            "--lr",
            "1",
            "--steps",
            "14",
            "--threads",
            "2",
            "--out",
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0
    hints = [line for line in done.stderr.splitlines() if "diverging" in line]
    assert len(hints) == 1 and "try --lr 0.25" in hints[0]
