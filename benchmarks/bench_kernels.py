"""toy's product kernels against OpenBLAS's sgemm, one thread, per CPU level.

    pip install scipy-openblas32        # optional: the OpenBLAS columns
    python benchmarks/bench_kernels.py [--repeats 7]

For each training-step shape of SmolLM2-135M (C [m, n] = A [m, k] B [n, k]^T,
n = 256 tokens), GFLOP/s of toy's fgemm in every variant this CPU runs
(tnn_kernel_check_fgemm, one thread) and of OpenBLAS's cblas_sgemm
(scipy-openblas32, its runtime dispatch, one thread), best of --repeats.
OpenBLAS runs in a subprocess per level with OPENBLAS_CORETYPE set
(Haswell: AVX2; SkylakeX: AVX-512; its own choice: native), the
counterpart of toy's avx2 and avx512 variants; --precision bf16's
products (fgemm_bf16, avx512 and amx) are listed beside them, and so are
the frozen base's int8 products (qgemm in its best variant here, the
stored blocks packed in the timed call): a Q4_1 forward (two int8 levels)
and a Q8_0 input gradient (one), what a bfloat16 copy of the base would
replace. Take figures on an idle machine.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import subprocess
import sys
import time

import numpy as np

SHAPES = [(576, 576, 256), (1536, 576, 256), (576, 1536, 256), (576, 256, 1536), (49152, 576, 256)]
CORETYPES = {"avx2": "Haswell", "avx512": "SkylakeX", "native": None}


def best_seconds(call, repeats: int) -> float:
    call()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - t)
    return best


def operands(m: int, k: int, n: int):
    rng = np.random.default_rng(0)
    return rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((n, k)).astype(np.float32)


def toy_gflops(repeats: int) -> dict:
    from toy.native.library import ffi, library

    lib = library("cpu")
    out = {}
    for kernel, variant in (("fgemm", "avx2"), ("fgemm", "avx512"), ("fgemm_bf16", "avx512"), ("fgemm_bf16", "amx")):
        if not lib.tnn_cpu_kernel_runs(kernel.encode(), variant.encode()):
            continue
        if kernel == "fgemm":
            check = lib.tnn_kernel_check_fgemm
        else:  # A as float32, rounded at each product

            def check(v, pa, a_by_k, m, k, pb, b_by_k, n, pc, nth):
                return lib.tnn_kernel_check_fgemm_bf16(v, pa, a_by_k, 0, m, k, pb, b_by_k, n, 0, pc, nth)

        name = f"toy {variant}" + (" bf16" if kernel == "fgemm_bf16" else "")
        for m, k, n in SHAPES:
            a, b = operands(m, k, n)
            c = np.empty((n, m), np.float32)
            pa, pb, pc = (ffi.from_buffer("float[]", x) for x in (a, b, c))
            # best_seconds calls the lambda inside this iteration: the loop variables are its own
            seconds = best_seconds(lambda: check(variant.encode(), pa, 0, m, k, pb, 0, n, pc, 1), repeats)  # noqa: B023
            out.setdefault(name, {})[f"{m}x{k}x{n}"] = 2 * m * k * n / seconds / 1e9
    out.update(qgemm_gflops(lib, ffi, repeats))
    return out


def qgemm_gflops(lib, ffi, repeats: int) -> dict:
    """The base's int8 products in qgemm's best variant: the forward by Q4_1
    (two levels) and the input gradient by Q8_0 (one level)."""
    from gguf import GGMLQuantizationType, quants

    variant = next(
        (v for v in ("amx", "avx512", "avxvnni", "avx2") if lib.tnn_cpu_kernel_runs(b"qgemm", v.encode())), None
    )
    out = {}
    for q4_1, levels, label in ((1, 2, "q4_1 fwd"), (0, 1, "q8_0 bwd")):
        qtype = GGMLQuantizationType.Q4_1 if q4_1 else GGMLQuantizationType.Q8_0
        for m, k, n in SHAPES if variant else ():
            a, b = operands(m, k, n)
            blocks = np.ascontiguousarray(quants.quantize(a, qtype))
            y = np.empty((n, m), np.float32)
            pa, pb, py = ffi.from_buffer("char[]", blocks), ffi.from_buffer("float[]", b), ffi.from_buffer("float[]", y)
            seconds = best_seconds(
                lambda: lib.tnn_kernel_check_qgemm(variant.encode(), q4_1, levels, pa, m, k, pb, n, py, 1),  # noqa: B023
                repeats,
            )
            out.setdefault(f"toy qgemm {variant} {label}", {})[f"{m}x{k}x{n}"] = 2 * m * k * n / seconds / 1e9
    return out


def openblas_gflops(repeats: int) -> dict:
    """In a worker whose OPENBLAS_CORETYPE is set: cblas_sgemm, one thread."""
    import scipy_openblas32

    blas = ctypes.CDLL(os.path.join(scipy_openblas32.get_lib_dir(), "libscipy_openblas.so"))
    blas.scipy_openblas_set_num_threads(1)
    blas.scipy_openblas_get_corename.restype = ctypes.c_char_p
    ptr = ctypes.POINTER(ctypes.c_float)
    result = {"core": blas.scipy_openblas_get_corename().decode()}
    for m, k, n in SHAPES:
        a, b = operands(m, k, n)
        c = np.empty((n, m), np.float32)
        # row-major C^T [n, m] = B [n, k] . A^T: the same layout as toy's (column j of C contiguous)
        args = [
            ctypes.c_int(101),
            ctypes.c_int(111),
            ctypes.c_int(112),
            n,
            m,
            k,
            ctypes.c_float(1.0),
            b.ctypes.data_as(ptr),
            k,
            a.ctypes.data_as(ptr),
            k,
            ctypes.c_float(0.0),
            c.ctypes.data_as(ptr),
            m,
        ]
        seconds = best_seconds(lambda: blas.scipy_cblas_sgemm(*args), repeats)  # noqa: B023 (called here)
        result[f"{m}x{k}x{n}"] = 2 * m * k * n / seconds / 1e9
    return result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--worker", action="store_true")
    args = p.parse_args()
    if args.worker:
        print(json.dumps(openblas_gflops(args.repeats)))
        return
    columns = toy_gflops(args.repeats)
    try:
        import scipy_openblas32  # noqa: F401

        have_blas = True
    except ImportError:
        have_blas = False
        print("(scipy-openblas32 not installed: OpenBLAS columns skipped)", file=sys.stderr)
    for level, core in CORETYPES.items() if have_blas else ():
        env = dict(os.environ)
        env.pop("OPENBLAS_CORETYPE", None)
        if core:
            env["OPENBLAS_CORETYPE"] = core
        run = subprocess.run(
            [sys.executable, __file__, "--worker", "--repeats", str(args.repeats)],
            capture_output=True,
            text=True,
            env=env,
        )
        if run.returncode != 0:
            print(f"(OpenBLAS at {level}: {run.stderr.strip().splitlines()[-1]})", file=sys.stderr)
            continue
        r = json.loads(run.stdout)
        columns[f"OpenBLAS {level}: {r.pop('core')}"] = r
    names = list(columns)
    print("GFLOP/s, one thread: C [m, n] = A [m, k] B [n, k]^T")
    print(f"{'m x k x n':18}" + "".join(f"{name:>26}" for name in names))
    for m, k, n in SHAPES:
        key = f"{m}x{k}x{n}"
        print(f"{key:18}" + "".join(f"{columns[name].get(key, float('nan')):26.1f}" for name in names))


if __name__ == "__main__":
    main()
