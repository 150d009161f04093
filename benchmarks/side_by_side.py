"""What the benchmark scripts share: each measurement in its own process (so
that its peak RSS is its own), median step times, one table row per run, and
the CPU level each side is held to (--cpu-level)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time

# --cpu-level: the environment that holds each side to one instruction-set
# level. toy: TNN_CPU_VARIANT, read at session realize, bounds toy's own
# kernels (and, in a portable install, picks ggml's variant of that level).
# PyTorch: ATen's vectorized kernels (ATEN_CPU_CAPABILITY), oneDNN (its bf16
# and other primitives, ONEDNN_MAX_CPU_ISA) and MKL (the f32 matrix products
# of nn.Linear go to MKL's SGEMM, MKL_ENABLE_INSTRUCTIONS); all three are
# read when torch loads, so the PyTorch worker is a fresh process.
# ATen has no level past AVX512 and "default" would be its scalar code, so
# amx leaves ATEN_CPU_CAPABILITY unset.
CPU_LEVELS = {
    "avx2": {
        "toy": {"TNN_CPU_VARIANT": "haswell"},
        "torch": {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"},
        "needs": "avx2",
    },
    "avx512": {
        "toy": {"TNN_CPU_VARIANT": "icelake"},
        "torch": {
            "ATEN_CPU_CAPABILITY": "avx512",
            "ONEDNN_MAX_CPU_ISA": "AVX512_CORE_VNNI",
            "MKL_ENABLE_INSTRUCTIONS": "AVX512_E1",
        },
        "needs": "avx512_vnni",
    },
    "amx": {
        "toy": {"TNN_CPU_VARIANT": "sapphirerapids"},
        "torch": {"ONEDNN_MAX_CPU_ISA": "AVX512_CORE_AMX", "MKL_ENABLE_INSTRUCTIONS": "AVX512_E4"},
        "needs": "amx_tile",
    },
}
# every variable a level sets (the header names those already in the environment)
_LEVEL_VARS = sorted({k for lv in CPU_LEVELS.values() for side in ("toy", "torch") for k in lv[side]})
SIMD_FLAGS = (
    "avx2",
    "fma",
    "avx_vnni",
    "avx512f",
    "avx512bw",
    "avx512_vnni",
    "avx512_bf16",
    "avx512_fp16",
    "amx_tile",
    "amx_int8",
    "amx_bf16",
)


def level_env(level: str | None, side: str) -> dict:
    """The environment of a `side` ("toy" or "torch") worker at `level`
    (None: this one's, as it is)."""
    env = dict(os.environ)
    if level is not None:
        env.update(CPU_LEVELS[level][side])
    return env


def peak_rss_mb() -> float:
    """This process's peak RSS: VmHWM, its own since exec. (ru_maxrss is not:
    Linux carries the parent's peak across fork and exec, so a worker started
    by a parent that had imported torch reported at least the parent's.)"""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
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


def run_worker(script: str, *args: str, python: str = sys.executable, env: dict | None = None) -> dict:
    """Run `python script --worker ... args` and return its JSON line, or
    {"error": last line of stderr}. python: the interpreter (another venv's
    to measure another install of toy); env: the worker's whole environment
    (default: this one's)."""
    out = subprocess.run([python, script, *args], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        lines = out.stderr.strip().splitlines()
        return {"error": lines[-1] if lines else f"exit {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def importable(*modules: str) -> bool:
    """Whether every module can be found (without importing it here: torch
    must first load in a worker that has its level's environment)."""
    return all(importlib.util.find_spec(m) is not None for m in modules)


def cpu_model() -> tuple[str, list[str]]:
    """lscpu's "Model name" and which of SIMD_FLAGS this CPU has."""
    name, flags = "?", set()
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        out = ""
    for line in out.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "Model name":
            name = value.strip()
        elif key.strip() == "Flags":
            flags = set(value.split())
    return name, [f for f in SIMD_FLAGS if f in flags]


_TOY_PROBE = """
import json
from toy.native.library import backend_variant, library, ffi
lib = library("cpu")
kernels = {}
for k in ("qgemm", "fgemm", "head_loss", "adamw", "fgemm_bf16"):
    try:
        c = lib.tnn_cpu_kernel_choice(k.encode())
        kernels[k] = ffi.string(c).decode() if c != ffi.NULL else "error: " + ffi.string(lib.tnn_last_error()).decode()
    except AttributeError:
        kernels[k] = "?"
print(json.dumps({"build": backend_variant(), "kernels": kernels}))
"""

_TORCH_PROBE = """
import torch
print("aten", torch.backends.cpu.get_cpu_capability(), flush=True)
a, b = torch.randn(128, 128), torch.randn(128, 128)
torch.nn.functional.linear(a, b)
with torch.autocast("cpu", dtype=torch.bfloat16):
    torch.nn.functional.linear(a, b)
"""


def probe_toy(python: str, env: dict) -> dict:
    """Which toy build `python` imports ("native" or ggml's variant name) and
    the variant each of toy's kernels runs in under env."""
    out = subprocess.run([python, "-c", _TOY_PROBE], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        lines = out.stderr.strip().splitlines()
        return {"build": f"error: {lines[-1] if lines else out.returncode}", "kernels": {}}
    return json.loads(out.stdout.strip().splitlines()[-1])


def probe_torch(env: dict) -> dict:
    """What a PyTorch worker under env runs: ATen's CPU capability, the ISA
    MKL's SGEMM dispatched to (f32 matmuls), and oneDNN's, when a bf16 matmul
    under autocast reached oneDNN (else "not used": ATen's own bf16 gemm)."""
    env = dict(env, MKL_VERBOSE="1", ONEDNN_VERBOSE="1")
    out = subprocess.run([sys.executable, "-c", _TORCH_PROBE], capture_output=True, text=True, env=env)
    text = out.stdout + out.stderr
    aten = re.search(r"^aten (\S+)", text, re.M)
    mkl = re.search(r"MKL_VERBOSE oneMKL.*?architecture (.*?) enabled processors", text)
    mkl = mkl or re.search(r"MKL_VERBOSE oneMKL.*?architecture (.*?)(?:, Lnx|$)", text, re.M)
    dnnl = re.search(r"onednn_verbose,.*?info,cpu,isa:(.*)", text)
    return {
        "aten": aten.group(1) if aten else f"error (exit {out.returncode})",
        "mkl": mkl.group(1).replace("Intel(R) ", "").strip() if mkl else "not used",
        "onednn": dnnl.group(1).strip() if dnnl else "not used (ATen's own bf16 gemm, slow)",
    }


def print_header(level: str | None, python: str, with_torch: bool) -> None:
    """The CPU, the level each side is held to (and what that set), which
    toy build is measured and what each side's kernels then run in."""
    name, flags = cpu_model()
    print(f"CPU: {name}; {os.cpu_count()} logical CPUs; SIMD flags: {' '.join(flags) or '-'}")
    if level is None:
        inherited = " ".join(f"{k}={os.environ[k]}" for k in _LEVEL_VARS if k in os.environ)
        print(f"CPU level: native (no cap){'; from the environment: ' + inherited if inherited else ''}")
    else:
        lv = CPU_LEVELS[level]
        sets = lambda d: " ".join(f"{k}={v}" for k, v in d.items())  # noqa: E731
        print(
            f"CPU level: {level}: toy {sets(lv['toy'])}; PyTorch {sets(lv['torch'])}"
            f"{' (ATEN_CPU_CAPABILITY unset: ATen tops out at AVX512)' if level == 'amx' else ''}"
        )
        if lv["needs"] not in flags:
            print(f"  note: this CPU lacks {lv['needs']}: the cap is above what it has, both sides run native")
    toy = probe_toy(python, level_env(level, "toy"))
    kernels = ", ".join(f"{k} {v}" for k, v in toy["kernels"].items())
    print(f"toy: {python}: build {toy['build']}; its kernels: {kernels or '?'}")
    if level is not None and toy["build"] == "native":
        print(
            "  warning: native build of toy: ggml's own ops stay native; "
            "use a portable install (--python) for a full same-level comparison"
        )
    if with_torch:
        import importlib.metadata as md

        t = probe_torch(level_env(level, "torch"))
        print(
            f"PyTorch {md.version('torch')}: ATen {t['aten']}; MKL (f32 matmul) {t['mkl']}; "
            f"oneDNN (bf16 matmul) {t['onednn']}"
        )


def add_level_arguments(p) -> None:
    """--cpu-level, --torch-bf16, --no-torch-f32 and --python, shared by
    bench_lora.py and bench_train.py."""
    p.add_argument(
        "--cpu-level",
        choices=tuple(CPU_LEVELS),
        help="hold both sides to this instruction-set level (default: native, no cap)",
    )
    p.add_argument(
        "--torch-bf16",
        action="store_true",
        help="add a PyTorch column under torch.autocast('cpu', bfloat16), weights f32",
    )
    p.add_argument("--no-torch-f32", action="store_true", help="leave out the PyTorch f32 column")
    p.add_argument(
        "--python",
        default=sys.executable,
        help="the interpreter whose toy is measured (another venv's, e.g. a portable install; default: this one)",
    )


class Table:
    """One line per run: toy's tokens/s and peak RSS, then each PyTorch
    column's, with toy / that column for speed and memory; markdown() gives
    the same rows for the README."""

    def __init__(self, label: str, width: int, columns: list[str]):
        self.label, self.width, self.columns, self.rows = label, width, columns, []
        head = f"{label:<{width}} {'toy tok/s':>10} {'toy MB':>7}"
        for c in columns:
            head += f" | {c + ' tok/s':>16} {c + ' MB':>12} {'speed':>6} {'memory':>6}"
        print(head, flush=True)

    @staticmethod
    def _cells(r: dict) -> tuple[str, str]:
        if "error" in r:
            return r["error"][:10], "-"
        return f"{r['tokens_per_s']:,.1f}", f"{r['peak_rss_mb']:,.0f}"

    @staticmethod
    def _ratios(toy: dict, r: dict) -> tuple[str, str]:
        if "error" in toy or "error" in r:
            return "-", "-"
        return (f"{toy['tokens_per_s'] / r['tokens_per_s']:.2f}x", f"{toy['peak_rss_mb'] / r['peak_rss_mb']:.2f}x")

    def row(self, name: str, toy: dict, results: dict[str, dict]) -> None:
        self.rows.append((name, toy, results))
        line = f"{name:<{self.width}} " + " ".join(f"{c:>{w}}" for c, w in zip(self._cells(toy), (10, 7)))
        for c in self.columns:
            r = results[c]
            line += f" | {self._cells(r)[0]:>16} {self._cells(r)[1]:>12} " + " ".join(
                f"{x:>6}" for x in self._ratios(toy, r)
            )
        print(line, flush=True)
        for who, r in [("toy", toy), *results.items()]:
            if "error" in r and r["error"] != "-":
                print(f"  {who} failed: {r['error']}", file=sys.stderr)

    def markdown(self, describe) -> None:
        """The rows as README table rows; describe(name) names the run."""
        if not self.rows:
            return
        aten = sorted({r["aten"] for _, _, rs in self.rows for r in rs.values() if "aten" in r})
        if aten:
            print(f"(the PyTorch workers ran with ATen CPU capability {', '.join(aten)})")
        head = "| run | toy tokens/s | toy peak RSS |"
        for c in self.columns:
            head += f" {c} tokens/s | {c} peak RSS | toy / {c} |"
        print("\n" + head)
        print("|" + "---|" * (head.count("|") - 1))
        for name, toy, results in self.rows:
            tok, mb = self._cells(toy)
            line = f"| {describe(name)} | {tok} | {mb} MB |"
            for c in self.columns:
                t, m = self._cells(results[c])
                speed, memory = self._ratios(toy, results[c])
                line += f" {t} | {m} MB | {speed}, {memory} memory |"
            print(line)
