"""Training throughput and peak memory: toy (tinynn on ggml) vs PyTorch.

    python benchmarks/bench_train.py [--steps N] [--threads N] [--configs default,smollm2]

The median of --steps timed steps after one warm-up step.
Each measurement runs in its own process so that its peak RSS is its own.
Both sides train the same llama shape from random init with AdamW, full
fine-tune, on random tokens. PyTorch runs only when `torch` is importable.
Take figures on an idle machine: on 2 cores any other busy process slows a
2-thread step several-fold.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from side_by_side import importable, median_seconds, peak_rss_mb, run_worker  # noqa: E402

CONFIGS = {
    # the toy-train default
    "default": dict(vocab=256, d_model=64, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=160,
                    t_seq=64, t_batch=4, untied=False),
    # SmolLM2-135M's shape, random init
    "smollm2": dict(vocab=49152, d_model=576, n_layers=30, n_heads=9, n_kv_heads=3, d_ff=1536,
                    t_seq=256, t_batch=1, untied=False),
}


def run_toy(shape: dict, steps: int, threads: int) -> dict:
    import numpy as np
    import toy
    from toy.recipes import FromScratch

    cfg = toy.ModelConfig(vocab=shape["vocab"], d_model=shape["d_model"], n_layers=shape["n_layers"],
                          n_heads=shape["n_heads"], n_kv_heads=shape["n_kv_heads"], d_ff=shape["d_ff"])
    opts = toy.RecipeOptions(t_seq=shape["t_seq"], t_batch=shape["t_batch"], untied=shape["untied"])
    recipe = FromScratch("cpu", threads)
    recipe.realize(cfg, opts)
    rng = np.random.default_rng(0)
    positions = np.tile(np.arange(opts.t_seq, dtype=np.int32), (opts.t_batch, 1))

    def step(i):
        ids = rng.integers(0, cfg.vocab, size=(opts.t_batch, opts.t_seq + 1)).astype(np.int32)
        recipe.step(ids[:, :-1], positions, ids[:, 1:], toy.adamw_hp(i, 1e-4), i == 1)

    seconds = median_seconds(step, steps)
    return {"tokens_per_s": opts.t_seq * opts.t_batch / seconds, "peak_rss_mb": peak_rss_mb()}


def run_torch(shape: dict, steps: int, threads: int) -> dict:
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

    def step(i):
        ids = torch.randint(0, shape["vocab"], (B, T + 1))
        logits = model(ids[:, :-1], cos, sin)
        loss = F.cross_entropy(logits.reshape(-1, shape["vocab"]), ids[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    seconds = median_seconds(step, steps)
    return {"tokens_per_s": T * B / seconds, "peak_rss_mb": peak_rss_mb()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--configs", default="default,smollm2")
    p.add_argument("--worker", choices=("toy", "torch"))
    p.add_argument("--config")
    args = p.parse_args()
    if args.worker:
        fn = run_toy if args.worker == "toy" else run_torch
        print(json.dumps(fn(CONFIGS[args.config], args.steps, args.threads)))
        return

    engines = ["toy", "torch"] if importable("torch") else ["toy"]
    if len(engines) == 1:
        print("(torch not installed: PyTorch column skipped)", file=sys.stderr)
    print(f"full training step, AdamW, random init, {args.threads} threads, median of {args.steps} steps")
    print(f"{'config':<10} {'toy tok/s':>10} {'toy MB':>8} {'torch tok/s':>12} {'torch MB':>9} {'speed':>6}")
    for name in args.configs.split(","):
        rows = [run_worker(__file__, "--worker", engine, "--config", name, "--steps", str(args.steps),
                           "--threads", str(args.threads)) for engine in engines]
        cells = []
        for r in rows + [{"error": "-"}] * (2 - len(rows)):
            cells += ([f"{r['tokens_per_s']:.1f}", f"{r['peak_rss_mb']:.0f}"] if "error" not in r
                      else [r["error"][:10], "-"])
        ratio = (f"{rows[0]['tokens_per_s'] / rows[1]['tokens_per_s']:.2f}x"
                 if len(rows) == 2 and "error" not in rows[0] and "error" not in rows[1] else "-")
        print(f"{name:<10} {cells[0]:>10} {cells[1]:>8} {cells[2]:>12} {cells[3]:>9} {ratio:>6}", flush=True)


if __name__ == "__main__":
    main()
