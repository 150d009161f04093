"""Training throughput and peak memory: toy (tinynn on ggml) vs PyTorch.

    python benchmarks/bench_train.py [--steps N] [--threads N] [--configs default,smollm2]
                                     [--cpu-level avx2|avx512|amx] [--torch-bf16] [--no-torch-f32]
                                     [--python PATH] [--precision f32|bf16]

The median of --steps timed steps after one warm-up step.
Each measurement runs in its own process so that its peak RSS is its own.
Both sides train the same llama shape from random init with AdamW, full
fine-tune, on random tokens. PyTorch runs only when `torch` is importable.
Take figures on an idle machine: on 2 cores any other busy process slows a
2-thread step several-fold.

--cpu-level holds both sides to one instruction-set level (side_by_side.py
says what it sets); --torch-bf16 adds PyTorch under torch.autocast("cpu",
bfloat16), the weights and AdamW's state left f32; --python measures the toy
installed for another interpreter (a portable install); --precision bf16
trains toy's side as `toy-train --precision bf16` does (the dense products in
bfloat16 on the AMX tiles, weights and AdamW f32). The header names the
CPU, the level, the toy build and what each side's kernels run in; the table
ends with the rows in the README's markdown.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from side_by_side import (  # noqa: E402
    Table,
    add_level_arguments,
    importable,
    level_env,
    median_seconds,
    peak_rss_mb,
    print_header,
    run_worker,
)

CONFIGS = {
    # the toy-train default
    "default": dict(
        vocab=256, d_model=64, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=160, t_seq=64, t_batch=4, untied=False
    ),
    # SmolLM2-135M's shape, random init
    "smollm2": dict(
        vocab=49152, d_model=576, n_layers=30, n_heads=9, n_kv_heads=3, d_ff=1536, t_seq=256, t_batch=1, untied=False
    ),
}


def run_toy(shape: dict, steps: int, threads: int, precision: str = "f32") -> dict:
    import numpy as np

    import toy
    from toy.recipes import FromScratch

    cfg = toy.ModelConfig(
        vocab=shape["vocab"],
        d_model=shape["d_model"],
        n_layers=shape["n_layers"],
        n_heads=shape["n_heads"],
        n_kv_heads=shape["n_kv_heads"],
        d_ff=shape["d_ff"],
    )
    opts = toy.RecipeOptions(
        t_seq=shape["t_seq"], t_batch=shape["t_batch"], untied=shape["untied"], precision=precision
    )
    recipe = FromScratch("cpu", threads)
    recipe.realize(cfg, opts)
    rng = np.random.default_rng(0)
    positions = np.tile(np.arange(opts.t_seq, dtype=np.int32), (opts.t_batch, 1))

    def step(i):
        ids = rng.integers(0, cfg.vocab, size=(opts.t_batch, opts.t_seq + 1)).astype(np.int32)
        recipe.step(ids[:, :-1], positions, ids[:, 1:], toy.adamw_hp(i, 1e-4), i == 1)

    seconds = median_seconds(step, steps)
    return {"tokens_per_s": opts.t_seq * opts.t_batch / seconds, "peak_rss_mb": peak_rss_mb()}


def run_torch(shape: dict, steps: int, threads: int, bf16: bool = False) -> dict:
    import contextlib

    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    torch.set_num_threads(threads)
    d, hd = shape["d_model"], shape["d_model"] // shape["n_heads"]
    H, KV = shape["n_heads"], shape["n_kv_heads"]

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.n1, self.n2 = torch.nn.RMSNorm(d, eps=1e-5), torch.nn.RMSNorm(d, eps=1e-5)
            self.q = torch.nn.Linear(d, H * hd, bias=False)
            self.k = torch.nn.Linear(d, KV * hd, bias=False)
            self.v = torch.nn.Linear(d, KV * hd, bias=False)
            self.o = torch.nn.Linear(H * hd, d, bias=False)
            self.gate = torch.nn.Linear(d, shape["d_ff"], bias=False)
            self.up = torch.nn.Linear(d, shape["d_ff"], bias=False)
            self.down = torch.nn.Linear(shape["d_ff"], d, bias=False)

        def rope(self, x, cos, sin):
            x1, x2 = x[..., 0::2], x[..., 1::2]
            return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)

        def forward(self, x, cos, sin):
            B, T, _ = x.shape
            h = self.n1(x)
            q = self.rope(self.q(h).view(B, T, H, hd), cos, sin).transpose(1, 2)
            k = self.rope(self.k(h).view(B, T, KV, hd), cos, sin).transpose(1, 2)
            v = self.v(h).view(B, T, KV, hd).transpose(1, 2)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            x = x + self.o(a.transpose(1, 2).reshape(B, T, H * hd))
            h = self.n2(x)
            return x + self.down(F.silu(self.gate(h)) * self.up(h))

    class Llama(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embd = torch.nn.Embedding(shape["vocab"], d)
            self.blocks = torch.nn.ModuleList(Block() for _ in range(shape["n_layers"]))
            self.norm = torch.nn.RMSNorm(d, eps=1e-5)

        def forward(self, ids, cos, sin):
            x = self.embd(ids)
            for b in self.blocks:
                x = b(x, cos, sin)
            return self.norm(x) @ self.embd.weight.T

    model = Llama()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.0)
    T, B = shape["t_seq"], shape["t_batch"]
    inv = 10000.0 ** (-torch.arange(0, hd, 2).float() / hd)
    ang = torch.arange(T).float()[:, None] * inv[None, :]
    cos, sin = ang.cos()[None, :, None, :], ang.sin()[None, :, None, :]

    # autocast: matrix products in bf16, the f32 weights cast on the way in
    cast = (lambda: torch.autocast("cpu", dtype=torch.bfloat16)) if bf16 else contextlib.nullcontext

    def step(i):
        ids = torch.randint(0, shape["vocab"], (B, T + 1))
        with cast():
            logits = model(ids[:, :-1], cos, sin)
            loss = F.cross_entropy(logits.reshape(-1, shape["vocab"]), ids[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    seconds = median_seconds(step, steps)
    return {
        "tokens_per_s": T * B / seconds,
        "peak_rss_mb": peak_rss_mb(),
        "aten": torch.backends.cpu.get_cpu_capability(),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--configs", default="default,smollm2")
    add_level_arguments(p)
    p.add_argument("--worker", choices=("toy", "torch", "torch-bf16"))
    p.add_argument("--config")
    p.add_argument(
        "--precision",
        choices=("f32", "bf16"),
        default="f32",
        help="toy-train's --precision for toy's side (default f32)",
    )
    args = p.parse_args()
    if args.worker:
        w = (CONFIGS[args.config], args.steps, args.threads)
        r = (
            run_toy(*w, precision=args.precision)
            if args.worker == "toy"
            else run_torch(*w, bf16=args.worker == "torch-bf16")
        )
        print(json.dumps(r))
        return

    with_torch = importable("torch")
    if not with_torch:
        print("(torch not installed: PyTorch columns skipped)", file=sys.stderr)
    columns = [c for c, on in (("torch f32", not args.no_torch_f32), ("torch bf16", args.torch_bf16)) if on]
    workers = {"torch f32": "torch", "torch bf16": "torch-bf16"}
    print_header(args.cpu_level, args.python, with_torch and bool(columns))
    print(f"full training step, AdamW, random init, {args.threads} threads, median of {args.steps} steps")
    table = Table("config", 10, columns)
    for name in args.configs.split(","):
        common = ["--config", name, "--steps", str(args.steps), "--threads", str(args.threads)]
        toy_r = run_worker(
            __file__,
            "--worker",
            "toy",
            *common,
            "--precision",
            args.precision,
            python=args.python,
            env=level_env(args.cpu_level, "toy"),
        )
        results = {
            c: run_worker(__file__, "--worker", workers[c], *common, env=level_env(args.cpu_level, "torch"))
            if with_torch
            else {"error": "-"}
            for c in columns
        }
        table.row(name, toy_r, results)
    level = f", {args.cpu_level} level" if args.cpu_level else ""
    level += ", toy --precision bf16" if args.precision == "bf16" else ""

    def describe(name: str) -> str:
        c = CONFIGS[name]
        what = {"default": "from-scratch default", "smollm2": "SmolLM2-135M shape, random init, full training"}
        return (
            f"{what.get(name, name)} (d {c['d_model']}, {c['n_layers']} layers, seq {c['t_seq']}, "
            f"batch {c['t_batch']}){level}"
        )

    table.markdown(describe)


if __name__ == "__main__":
    main()
