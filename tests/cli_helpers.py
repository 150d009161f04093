"""Run toy-train as a user does: a subprocess, stdout and stderr apart."""

import subprocess
import sys

# --threads changes the low bits of the gradients (ggml splits reductions by
# thread), so every byte-gated run pins it.
GATE_THREADS = "2"
# instruct's defaults before they were measured (issue 28): the settings its
# golden logs were made with, named so that those logs stay the same runs
# (--min-lr equal to --lr: a constant LR)
INSTRUCT_FIRST_DEFAULTS = ("--rank", "8", "--targets", "q", "--warmup", "0", "--min-lr", "1e-3")


def toy_train(*args, cwd=None, timeout=600):
    return subprocess.run(
        [sys.executable, "-m", "toy.cli.train", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )
