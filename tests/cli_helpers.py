"""Run toy-train as a user does: a subprocess, stdout and stderr apart."""

import subprocess
import sys
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"

# --threads changes the low bits of the gradients (ggml splits reductions by
# thread), so every byte-gated run pins it.
GATE_THREADS = "2"
# instruct's defaults before they were measured (issues 28 and 42): the
# settings its golden logs were made with, named so that those logs stay the
# same runs (--min-lr equal to --lr: a constant LR; a tenth held out)
INSTRUCT_FIRST_DEFAULTS = ("--rank", "8", "--targets", "q", "--warmup", "0", "--min-lr", "1e-3", "--eval-split", "0.1")


def toy_train(*args, cwd=None, timeout=600):
    return subprocess.run(
        [sys.executable, "-m", "toy.cli.train", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )


def instruct_and_dpo(model, out: Path, seq: int) -> dict:
    """toy-train instruct (tests/data/instruct-tiny.jsonl) and dpo
    (preferences-small.jsonl) on the GGUF model, one epoch each at --seq
    seq on 2 threads, into out/instruct and out/dpo; both must succeed.
    Returns the instruct run's config.json."""
    import json

    data = Path(__file__).parent / "data"
    common = ("--model", str(model), "--seq", str(seq), "--threads", "2", "--epochs", "1")
    for recipe, file in (("instruct", "instruct-tiny.jsonl"), ("dpo", "preferences-small.jsonl")):
        result = toy_train(recipe, "--data", str(data / file), *common, "--out", str(out / recipe))
        assert result.returncode == 0, result.stderr
    return json.loads((out / "instruct" / "config.json").read_text())


def _cpu_has_avx512() -> bool:
    """Whether this CPU reports AVX-512F (Linux; elsewhere assumed, as the goldens were recorded)."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            return any(line.startswith("flags") and " avx512f" in line for line in cpuinfo)
    except OSError:
        return True


def golden_log(name: str) -> str:
    """The golden loss log of tests/golden/<name>, or of golden/avx2/<name> on a
    CPU without AVX-512 where that file exists: ggml's ops, compiled for the
    building CPU, sum in another order there (golden/avx2/README.md)."""
    avx2 = GOLDEN / "avx2" / name
    if avx2.is_file() and not _cpu_has_avx512():
        return avx2.read_text()
    return (GOLDEN / name).read_text()
