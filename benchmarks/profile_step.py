"""Where a training step's time goes, by ggml op and operand type.

    python benchmarks/profile_step.py lora [--batch 1] [--seq 256] [--targets q,v] [--model PATH]
                                           [--base-compute stored]
    python benchmarks/profile_step.py full [--batch 1] [--seq 256] [--precision bf16]   # SmolLM2 shape, random init
    python benchmarks/profile_step.py tiny [--batch 4] [--seq 64]       # toy-train's default model

One warm-up step, then one step run node by node (tnn_profile_step): each node
pays a thread start, so the total is above a real step; the shares are what
to read. TNN_PROFILE_SHAPES=1 splits the rows by operand shape. Take figures
on an idle machine.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import toy
from toy.core.models import default_model_path
from toy.options.common import recompute_every
from toy.recipes import FromScratch, LoRA

SMOLLM2_SHAPE = dict(vocab=49152, d_model=576, n_layers=30, n_heads=9, n_kv_heads=3, d_ff=1536)
TINY_SHAPE = dict(vocab=256, d_model=64, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=160)  # bench_train "default"


def make_recipe(args):
    opts = toy.RecipeOptions(
        t_seq=args.seq, t_batch=args.batch, precision=args.precision, recompute=recompute_every(args.recompute)
    )
    if args.recipe == "lora":
        recipe = LoRA("cpu", args.threads)
        recipe.realize(
            args.model or default_model_path(),
            None,
            args.rank,
            opts,
            targets=tuple(args.targets.split(",")),
            base_compute=args.base_compute,
        )
    else:
        recipe = FromScratch("cpu", args.threads)
        recipe.realize(toy.ModelConfig(**(SMOLLM2_SHAPE if args.recipe == "full" else TINY_SHAPE)), opts)
    return recipe


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("recipe", choices=("lora", "full", "tiny"))
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--rank", type=int, default=8)
    p.add_argument("--targets", default="q,v")
    p.add_argument("--model")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--recompute", default="auto", help="toy-train's --recompute (default auto)")
    p.add_argument("--precision", choices=("f32", "bf16"), default="f32", help="toy-train's --precision (default f32)")
    p.add_argument(
        "--base-compute",
        default="auto",
        choices=("auto", "fast", "stored", "bf16", "bf16_head"),
        help="lora's --base-compute (default auto)",
    )
    args = p.parse_args()

    recipe = make_recipe(args)
    rng = np.random.default_rng(0)
    ids = rng.integers(0, recipe.cfg.vocab, size=(args.batch, args.seq + 1)).astype(np.int32)
    positions = np.tile(np.arange(args.seq, dtype=np.int32), (args.batch, 1))
    t0 = time.perf_counter()
    recipe.step(ids[:, :-1], positions, ids[:, 1:], toy.adamw_hp(1, 1e-4), True)
    whole = time.perf_counter() - t0
    t0 = time.perf_counter()
    recipe.step(ids[:, :-1], positions, ids[:, 1:], toy.adamw_hp(2, 1e-4), False)
    whole = time.perf_counter() - t0
    e = recipe.session
    e.reset_grads_only()
    rows = e.profile_step()
    total = sum(r[0] for r in rows)
    print(
        f"{args.recipe} batch {args.batch} seq {args.seq}: step {1e3 * whole:.3f} ms "
        f"({args.batch * args.seq / whole:.1f} tokens/s); node by node {1e3 * total:.3f} ms"
    )
    print(f"{'ms':>9} {'share':>6} {'nodes':>6}  op (src0 type)")
    for seconds, count, key in rows[: args.top]:
        print(f"{1e3 * seconds:9.3f} {100 * seconds / total:5.1f}% {count:6d}  {key}")


if __name__ == "__main__":
    main()
