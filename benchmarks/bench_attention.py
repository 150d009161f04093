"""Training attention, forward and backward, one layer: toy's attention_bf16
kernels against PyTorch's scaled-dot-product attention in bfloat16.

    python benchmarks/bench_attention.py [--seqs 1024,4096] [--repeats 3]

For Llama 3.2 1B's (32 query heads, 8 key heads, 64 wide) and 3B's (24, 8,
128) attention at each sequence length: seconds for the causal forward and
backward of one layer, batch 1, one thread each, best of --repeats. toy:
the kernel check (tnn_kernel_check_attention_bf16, each variant this CPU
runs: avx512 on vdpbf16ps, amx on the tiles), which runs the threads'
shares in turn (so: one thread) and also allocates, zeroes and sums dQ's
parts, so its figure is a bound on what the training step spends.
PyTorch: q, k and v in bfloat16 ([1, heads, seq, width], key heads
repeated to the query heads, as transformers' llama does without a
grouped kernel), torch.nn.functional.scaled_dot_product_attention with
is_causal, then backward from a random output gradient, on
torch.set_num_threads(1). Take figures on an idle machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_kernels import best_seconds  # noqa: E402
from side_by_side import cpu_model  # noqa: E402

SHAPES = {"1 B": (32, 8, 64), "3 B": (24, 8, 128)}  # query heads, key heads, head width


def toy_seconds(variant: str, heads: int, kv: int, width: int, t: int, threads: int, repeats: int) -> float:
    from toy.native.library import ffi, library

    lib = library("cpu")
    rng = np.random.default_rng(0)
    q, dout = (rng.standard_normal((heads, t, width)).astype(np.float32) for _ in range(2))
    k, v = (rng.standard_normal((kv, t, width)).astype(np.float32) for _ in range(2))
    out, dq = np.empty_like(q), np.empty_like(q)
    dk, dv = np.empty_like(k), np.empty_like(v)
    lse = np.empty((heads, t), np.float32)

    def f32(a):
        return ffi.from_buffer("float[]", a)

    args = [f32(x) for x in (q, k, v)] + [width, t, heads, heads // kv, 1 / np.sqrt(width)]
    args += [f32(x) for x in (dout, out, lse, dq, dk, dv)] + [threads]

    def call():
        assert lib.tnn_kernel_check_attention_bf16(variant.encode(), *args) == 0

    return best_seconds(call, repeats)


def torch_seconds(heads: int, kv: int, width: int, t: int, threads: int, repeats: int) -> float:
    import torch

    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(0)
    q = torch.randn(1, heads, t, width, generator=g, dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(1, kv, t, width, generator=g, dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(1, kv, t, width, generator=g, dtype=torch.bfloat16, requires_grad=True)
    dout = torch.randn(1, heads, t, width, generator=g, dtype=torch.bfloat16)

    def call():
        keys = k.repeat_interleave(heads // kv, dim=1)
        values = v.repeat_interleave(heads // kv, dim=1)
        out = torch.nn.functional.scaled_dot_product_attention(q, keys, values, is_causal=True)
        out.backward(dout)

    return best_seconds(call, repeats)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seqs", default="1024,4096", help="sequence lengths, comma-separated (default 1024,4096)")
    p.add_argument("--repeats", type=int, default=3, help="timed calls after a first, best kept (default 3)")
    p.add_argument("--no-torch", action="store_true", help="toy's columns only (default: PyTorch's too)")
    args = p.parse_args()
    from toy.native.library import library

    lib = library("cpu")
    variants = [v for v in ("avx512", "amx") if lib.tnn_cpu_kernel_runs(b"attention_bf16", v.encode())]
    names = [f"toy {v} (s)" for v in variants] + ([] if args.no_torch else ["PyTorch SDPA bf16 (s)"])
    print(f"CPU: {cpu_model()[0]}; one layer's causal attention, forward + backward, batch 1, one thread")
    print("| model | seq | " + " | ".join(names) + " | PyTorch / best toy |")
    print("|---|---|" + "---|" * (len(names) + 1))
    for model, (heads, kv, width) in SHAPES.items():
        for t in (int(s) for s in args.seqs.split(",")):
            toy = [toy_seconds(v, heads, kv, width, t, 1, args.repeats) for v in variants]
            cells = [f"{s:.3f}" for s in toy]
            ratio = "-"
            if not args.no_torch:
                theirs = torch_seconds(heads, kv, width, t, 1, args.repeats)
                cells.append(f"{theirs:.3f}")
                ratio = f"{theirs / min(toy):.2f}x" if toy else "-"
            print(f"| {model} | {t} | " + " | ".join(cells) + f" | {ratio} |")


if __name__ == "__main__":
    main()
