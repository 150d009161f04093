"""Data parallel on one machine: 2 ranks x 1 thread against 1 process x 2
threads, the same global batch (two micro-batches a step), tokens/s from the
median step time of each run's events.jsonl (step 1 left out).

    python benchmarks/bench_mpi.py                       # from-scratch default model, 60 steps
    python benchmarks/bench_mpi.py --recipe lora          # LoRA r8 q,v on SmolLM2 Q4_1, seq 256
Needs mpi4py and mpiexec (pip install "toy[mpi]"). Take figures on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

WORKLOADS = {
    "from-scratch": ["--steps", "60"],
    "lora": ["lora", "--steps", "8", "--seq", "256", "--batch", "1", "--targets", "q,v"],
}


def tokens_per_second(run_dir: Path) -> float:
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    steps = [e for e in events if "loss" in e and e["step"] > 1]
    return steps[0]["tokens"] / statistics.median(e["seconds"] for e in steps)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--recipe", choices=WORKLOADS, default="from-scratch")
    args = p.parse_args()
    mpiexec = shutil.which("mpiexec") or str(Path(sys.executable).parent / "mpiexec")
    common = [*WORKLOADS[args.recipe], "--grad-accum", "2", "--save-every", "0"]
    with tempfile.TemporaryDirectory() as tmp:
        runs = {
            "1 process x 2 threads": [sys.executable, "-m", "toy.cli.train", *common, "--threads", "2"],
            "2 ranks x 1 thread": [
                mpiexec,
                "-n",
                "2",
                sys.executable,
                "-m",
                "toy.cli.train",
                *common,
                "--threads",
                "1",
            ],
        }
        figures = {}
        for name, command in runs.items():
            out = Path(tmp) / name.replace(" ", "_")
            subprocess.run([*command, "--out", str(out)], check=True, capture_output=True)
            figures[name] = tokens_per_second(out)
    base = figures["1 process x 2 threads"]
    print(f"{args.recipe}, global batch of 2 micro-batches a step:")
    for name, value in figures.items():
        print(f"  {name:24s} {value:10,.1f} tokens/s  ({value / base:.2f}x)")


if __name__ == "__main__":
    main()
