"""What the benchmark scripts share: each measurement in its own process (so
that its peak RSS is its own), median step times, one table row per run."""
from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import time


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def median_seconds(step, steps: int, warmup: int = 1) -> float:
    """Median wall time of step(i) over `steps` timed calls after `warmup`
    untimed ones (the first step pays for allocation)."""
    times = []
    for i in range(1, warmup + steps + 1):
        t0 = time.perf_counter()
        step(i)
        if i > warmup:
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run_worker(script: str, *args: str, python: str = sys.executable) -> dict:
    """Run `python script --worker ... args` and return its JSON line, or
    {"error": last line of stderr}. python: the interpreter (another venv's
    to measure another install of toy)."""
    out = subprocess.run([python, script, *args], capture_output=True, text=True)
    if out.returncode != 0:
        lines = out.stderr.strip().splitlines()
        return {"error": lines[-1] if lines else f"exit {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def importable(*modules: str) -> bool:
    try:
        for m in modules:
            __import__(m)
    except ImportError:
        return False
    return True
