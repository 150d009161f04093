"""Memory over a long run: resident memory after 100 and after 1,000 steps.

A training step must not leak: the graph, the buffers and the Python side
are all made once, so RSS after 1,000 steps should be within a few MB of
RSS after 100 (issue 12 asks for 5 MB). Steps run in this process through
the Python API, as toy-train runs them; RSS is read from /proc/self/status.

    python benchmarks/bench_memory.py                    # from-scratch default model
    python benchmarks/bench_memory.py --recipe lora      # LoRA q,v on SmolLM2 Q4_1, seq 32
    python benchmarks/bench_memory.py --steps 1000 --first 100 --threads 2
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

import toy
from toy.core.models import default_model_path
from toy.datasets.corpus import BatchSampler, default_corpus
from toy.recipes import FromScratch, LoRA


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def realize(recipe_name: str, threads: int):
    if recipe_name == "from-scratch":
        cfg = toy.ModelConfig(vocab=256, d_model=64, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=0)
        opts = toy.RecipeOptions(t_seq=64, t_batch=4)
        recipe = FromScratch("cpu", threads)
        recipe.realize(cfg, opts)
        tokens = default_corpus()
    else:
        opts = toy.RecipeOptions(t_seq=32, t_batch=2)
        recipe = LoRA("cpu", threads)
        recipe.realize(default_model_path(), None, 8, opts, targets=("q", "v"))
        tokens = default_corpus() % recipe.cfg.vocab
    return recipe, BatchSampler(tokens, opts.t_seq, opts.t_batch, seed=0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--recipe", choices=("from-scratch", "lora"), default="from-scratch")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--first", type=int, default=100, help="the step whose RSS is the baseline")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    recipe, sampler = realize(args.recipe, args.threads)
    started, marks = time.perf_counter(), {}
    for step in range(1, args.steps + 1):
        hp = toy.adamw_hp(step, 1e-3, 0.9, 0.999, 1e-8, 0.0)
        loss = recipe.step(*sampler.next(), hp, is_first=(step == 1))
        if step in (args.first, args.steps) or step % 250 == 0:
            marks[step] = rss_mb()
            print(f"step {step:5d}: RSS {marks[step]:8.1f} MB  loss {loss:.4f}", flush=True)
    growth = marks[args.steps] - marks[args.first]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{args.recipe}: RSS after {args.steps} steps minus after {args.first}: {growth:+.1f} MB "
        f"(peak {peak:.1f} MB, {time.perf_counter() - started:.0f} s)"
    )
    if not np.isfinite(loss):
        raise SystemExit("the loss went non-finite")


if __name__ == "__main__":
    main()
