"""Run toy-train as a user does: a subprocess, stdout and stderr apart."""
import subprocess
import sys

# --threads changes the low bits of the gradients (ggml splits reductions by
# thread), so every byte-gated run pins it.
GATE_THREADS = "2"


def toy_train(*args, cwd=None, timeout=600):
    return subprocess.run([sys.executable, "-m", "toy.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout)
