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

With --stored, the products on a base kept as its stored blocks instead
(issue 70), one thread: for each type a GGUF stores matrices in and each
direction (W x forward, W^T dy the input gradient), GFLOP/s of ggml's own
product as llama.cpp runs it (mul_mat; out_prod, ggml's backward of
mul_mat, for W^T), of toy's qgemm on the copies a session would make once
(Q8_0, or Q4_1 as stored; the timed call packs the copy too, about 2% at
512 tokens) and of toy's qgemm straight from the stored blocks in every
variant this CPU runs (tnn_kernel_check_stored_qgemm: the panels made a
pass at a time inside the product, as a training step makes them):

    python benchmarks/bench_kernels.py --stored [--stored-shape 4096x4096] [--tokens 512]
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


STORED_TYPES = [
    "q4_0",
    "q4_1",
    "q5_0",
    "q5_1",
    "q8_0",
    "q2_K",
    "q3_K",
    "q4_K",
    "q5_K",
    "q6_K",
    "iq4_nl",
    "iq4_xs",
    "mxfp4",
]


def stored_rows(lib, ffi, w: np.ndarray, qtype: str) -> np.ndarray:
    """w [rows, cols] as a GGUF stores it in qtype (ggml's quantizer)."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    block, size = GGML_QUANT_SIZES[GGMLQuantizationType[qtype.upper()]]
    rows = np.zeros((w.shape[0], w.shape[1] // block * size), np.uint8)
    assert (
        lib.tnn_kernel_quantize_rows(qtype.encode(), ffi.from_buffer("float[]", w), *w.shape, ffi.from_buffer(rows))
        == 0
    )
    return rows


def stored_gflops(repeats: int, d_in: int, d_out: int, n: int) -> list[dict]:
    """One row per type and direction: GFLOP/s of ggml's product, of qgemm
    on the copies and of qgemm from the stored blocks per variant."""
    from gguf import GGMLQuantizationType, quants

    from toy.native.library import ffi, library

    lib = library("cpu")
    variants = [v for v in ("avx2", "avxvnni", "avx512", "amx") if lib.tnn_cpu_kernel_runs(b"qgemm", v.encode())]
    rng = np.random.default_rng(0)
    w = rng.standard_normal((d_out, d_in)).astype(np.float32)
    flop = 2 * d_in * d_out * n
    table = []
    for qtype in STORED_TYPES:
        rows = stored_rows(lib, ffi, w, qtype)
        held = quants.dequantize(rows, GGMLQuantizationType[qtype.upper()]).astype(np.float32)  # [d_out, d_in]
        prows = ffi.from_buffer("char[]", rows)
        for transposed in (0, 1):
            k, m = (d_out, d_in) if transposed else (d_in, d_out)
            x = rng.standard_normal((n, k)).astype(np.float32)
            y = np.empty((n, m), np.float32)
            px, py = ffi.from_buffer("float[]", x), ffi.from_buffer("float[]", y)
            row = {"type": qtype, "direction": "W^T dy" if transposed else "W x"}

            def timed(fn, *args):
                return flop / best_seconds(lambda: fn(*args), repeats) / 1e9

            row["ggml"] = timed(lib.tnn_kernel_check_ggml_product, qtype.encode(), prows, d_in, d_out, transposed, px,
                                n, py, 1)  # fmt: skip
            # the copies frozen_copies.c makes: W^T and every other type as Q8_0 blocks, q4_0/q4_1/q8_0 W as stored
            as_stored = not transposed and qtype in ("q4_0", "q4_1", "q8_0")
            copy = held.T.copy() if transposed else held
            copy_q4_1 = as_stored and qtype != "q8_0"
            blocks = (
                rows if as_stored and qtype == "q4_1" else stored_rows(lib, ffi, copy, "q4_1" if copy_q4_1 else "q8_0")
            )
            levels = 1 if transposed else 2
            row["copies"] = timed(lib.tnn_kernel_check_qgemm, variants[-1].encode(), copy_q4_1, levels,
                                  ffi.from_buffer("char[]", blocks), m, k, px, n, py, 1)  # fmt: skip
            for v in variants:
                row[f"stored {v}"] = timed(lib.tnn_kernel_check_stored_qgemm, v.encode(), qtype.encode(), prows, d_in,
                                           d_out, transposed, levels, px, n, py, 1)  # fmt: skip
            table.append(row)
            print(row, file=sys.stderr, flush=True)
    return table


def print_stored(table: list[dict], d_in: int, d_out: int, n: int) -> None:
    names = [c for c in table[0] if c not in ("type", "direction")]
    best = [c for c in names if c.startswith("stored")][-1]
    print(f"GFLOP/s, one thread, W [{d_in} in, {d_out} out] by {n} tokens; stored / ggml and stored / copies: {best}")
    print("| type | product | " + " | ".join(names) + " | stored / ggml | stored / copies |")
    print("|---|---|" + "---|" * (len(names) + 2))
    for r in table:
        cells = " | ".join(f"{r[c]:.1f}" for c in names)
        print(
            f"| {r['type']} | {r['direction']} | {cells} | {r[best] / r['ggml']:.2f}x | {r[best] / r['copies']:.2f}x |"
        )


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
    p.add_argument("--stored", action="store_true", help="the products on a base kept as stored (see above)")
    p.add_argument("--stored-shape", default="4096x4096", help="d_in x d_out of W (default 4096x4096)")
    p.add_argument("--tokens", type=int, default=512, help="columns of x for --stored (default 512)")
    args = p.parse_args()
    if args.stored:
        d_in, d_out = (int(v) for v in args.stored_shape.split("x"))
        print_stored(stored_gflops(args.repeats, d_in, d_out, args.tokens), d_in, d_out, args.tokens)
        return
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
