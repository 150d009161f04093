"""LoRA fine-tuning throughput and peak memory on SmolLM2-135M.

    python benchmarks/bench_lora.py [--steps N] [--threads N] [--batches 1,4]

toy trains rank-8 adapters on q and v of the Q4_1 GGUF as stored (mapped, no
dequantized copy). PyTorch + PEFT (when torch, transformers and peft are
importable) trains the same adapters on the same file, which transformers
dequantizes to float32 on load. seq 256, AdamW, random tokens. Each
measurement runs in its own process so that its peak RSS is its own; take the
figures on an idle machine.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

RANK, ALPHA, SEQ = 8, 16.0, 256


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_toy(batch: int, steps: int, threads: int) -> dict:
    import numpy as np
    import toy
    from toy.models import default_model_path
    from toy.recipes import LoRA

    recipe = LoRA("cpu", threads)
    recipe.realize(default_model_path(), None, RANK, toy.RecipeOptions(t_seq=SEQ, t_batch=batch),
                   alpha=ALPHA, targets=("q", "v"))
    rng = np.random.default_rng(0)
    positions = np.tile(np.arange(SEQ, dtype=np.int32), (batch, 1))
    times = []
    for step in range(1, steps + 2):
        ids = rng.integers(0, recipe.cfg.vocab, size=(batch, SEQ + 1)).astype(np.int32)
        t0 = time.perf_counter()
        recipe.step(ids[:, :-1], positions, ids[:, 1:], toy.adamw_hp(step, 1e-4), step == 1)
        times.append(time.perf_counter() - t0)
    per_step = sum(times[1:]) / steps
    return {"tokens_per_s": SEQ * batch / per_step, "peak_rss_mb": peak_rss_mb(),
            "file_mb": os.path.getsize(default_model_path()) / 2**20}


def run_peft(batch: int, steps: int, threads: int) -> dict:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from toy.models import default_model_path

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    path = default_model_path()
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name,
                                                 torch_dtype=torch.float32)
    model = get_peft_model(model, LoraConfig(r=RANK, lora_alpha=ALPHA, target_modules=["q_proj", "v_proj"],
                                             lora_dropout=0.0))
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    vocab = model.config.vocab_size
    times = []
    for _ in range(steps + 1):
        ids = torch.randint(0, vocab, (batch, SEQ + 1))
        t0 = time.perf_counter()
        out = model(input_ids=ids[:, :-1], labels=ids[:, :-1])
        opt.zero_grad(set_to_none=True)
        out.loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    per_step = sum(times[1:]) / steps
    return {"tokens_per_s": SEQ * batch / per_step, "peak_rss_mb": peak_rss_mb()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batches", default="1,4")
    p.add_argument("--worker", choices=("toy", "peft"))
    p.add_argument("--batch", type=int)
    args = p.parse_args()
    if args.worker:
        fn = run_toy if args.worker == "toy" else run_peft
        print(json.dumps(fn(args.batch, args.steps, args.threads)))
        return
    engines = ["toy"]
    try:
        import peft, torch, transformers  # noqa: F401
        engines.append("peft")
    except ImportError:
        print("(torch/transformers/peft not installed: PyTorch + PEFT column skipped)", file=sys.stderr)
    print(f"LoRA r{RANK} on q,v, SmolLM2-135M, seq {SEQ}, {args.threads} threads, {args.steps} timed steps")
    print(f"{'batch':>5} {'engine':<8} {'tokens/s':>10} {'peak RSS MB':>12}")
    for batch in args.batches.split(","):
        for engine in engines:
            out = subprocess.run([sys.executable, __file__, "--worker", engine, "--batch", batch,
                                  "--steps", str(args.steps), "--threads", str(args.threads)],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                print(f"{batch:>5} {engine:<8} failed: {out.stderr.strip().splitlines()[-1:]}")
                continue
            r = json.loads(out.stdout)
            extra = f"   (mapped file {r['file_mb']:.0f} MB)" if "file_mb" in r else ""
            print(f"{batch:>5} {engine:<8} {r['tokens_per_s']:>10.1f} {r['peak_rss_mb']:>12.0f}{extra}")


if __name__ == "__main__":
    main()
