"""Qwen 3.5 LoRA beside PyTorch + PEFT: a random-weight Qwen 3.5 of the 0.8 B
model's widths (hidden 1024, 8 attention heads of 256, 16 delta-net heads of
128, FFN 3584, vocabulary 248,320, tied), --layers deep (default 4: three
Gated DeltaNet layers and one attention layer, a sixth of the 24; --layers
24 is the whole shape), written by llama.cpp's own convert_hf_to_gguf.py and
quantized by llama.cpp to Q4_K_M, the file toy trains on. Both sides train
LoRA r16 on every projection (toy: --targets all; PEFT: q, k, v, o, gate,
up, down and the delta-net's in_proj_qkv, in_proj_z, out_proj), batch 1,
random tokens, each in a process of its own: toy through toy.recipes.LoRA
(--recompute auto), PyTorch + PEFT on the same transformers model in
bfloat16 autocast (its fp32 weights; transformers' torch fallback of the
delta rule: flash-linear-attention has no CPU kernels) with gradient
checkpointing.

    python benchmarks/bench_qwen35.py [--layers 4] [--seqs 1024] [--steps 2] [--threads 2]

Needs torch, transformers, peft, llama-cpp-python and the references
(python scripts/fetch_references.py). Prints one markdown row a sequence
length: tokens/s and peak RSS of each, and toy's ratio. Take the figures on
an idle machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
from side_by_side import cpu_model, median_seconds, peak_rss_mb, run_worker  # noqa: E402

RANK, ALPHA = 16, 32.0
PEFT_NAMES = [
    "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj",
    "in_proj_qkv", "in_proj_z", "out_proj",
]  # fmt: skip


def hf_config(layers: int):
    """Qwen3.5-0.8B's widths, `layers` deep (every fourth layer attention)."""
    import transformers

    kinds = ["full_attention" if (i + 1) % 4 == 0 else "linear_attention" for i in range(layers)]
    return transformers.Qwen3_5TextConfig(
        vocab_size=248320,
        hidden_size=1024,
        intermediate_size=3584,
        num_hidden_layers=layers,
        layer_types=kinds,
        num_attention_heads=8,
        num_key_value_heads=2,
        head_dim=256,
        linear_conv_kernel_dim=4,
        linear_key_head_dim=128,
        linear_value_head_dim=128,
        linear_num_key_heads=16,
        linear_num_value_heads=16,
        max_position_embeddings=8192,
        tie_word_embeddings=True,
        use_cache=False,
    )


def hf_model(layers: int):
    import torch
    import transformers

    torch.manual_seed(0)
    return transformers.Qwen3_5ForCausalLM(hf_config(layers)).float()


def write_gguf(layers: int, folder: Path) -> Path:
    from llama_cpp_convert import hf_to_gguf, quantize

    f32 = hf_to_gguf(hf_model(layers), folder / "qwen35-f32.gguf", converter_args=("--no-mtp",))
    path = quantize(f32, folder / "qwen35-Q4_K_M.gguf", "Q4_K_M")
    f32.unlink()
    return path


def run_toy(model: str, seq: int, steps: int, threads: int, started: float) -> dict:
    import numpy as np

    import toy
    from toy.recipes import LoRA

    recipe = LoRA("cpu", threads)
    opts = toy.RecipeOptions(t_seq=seq, t_batch=1, evaluates=False)
    recipe.realize(model, None, RANK, opts, alpha=ALPHA, targets=("all",))
    rng = np.random.default_rng(0)
    positions = np.arange(seq, dtype=np.int32)[None, :]
    first = {}

    def step(i):
        ids = rng.integers(0, recipe.cfg.vocab, size=(1, seq + 1)).astype(np.int32)
        recipe.step(ids[:, :-1], positions, ids[:, 1:], toy.adamw_hp(i, 1e-4), i == 1)
        first.setdefault("at", time.time() - started)

    seconds = median_seconds(step, steps)
    return {"tokens_per_s": seq / seconds, "peak_rss_mb": peak_rss_mb(), "first_step_s": first["at"]}


def run_peft(layers: int, seq: int, steps: int, threads: int, started: float) -> dict:
    import torch
    from peft import LoraConfig, get_peft_model

    torch.set_num_threads(threads)
    net = hf_model(layers)
    net.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    net.enable_input_require_grads()
    net = get_peft_model(net, LoraConfig(r=RANK, lora_alpha=ALPHA, lora_dropout=0.0, target_modules=PEFT_NAMES))
    net.train()
    opt = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=1e-4)
    first = {}

    def step(i):
        ids = torch.randint(0, 248320, (1, seq + 1))
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = net(input_ids=ids[:, :-1], labels=ids[:, :-1])
        opt.zero_grad(set_to_none=True)
        out.loss.backward()
        opt.step()
        first.setdefault("at", time.time() - started)

    seconds = median_seconds(step, steps)
    return {"tokens_per_s": seq / seconds, "peak_rss_mb": peak_rss_mb(), "first_step_s": first["at"]}


def worker(argv: list[str]) -> None:
    side, started = argv[0], time.time()
    if side == "toy":
        model, seq, steps, threads = argv[1], *map(int, argv[2:5])
        result = run_toy(model, seq, steps, threads, started)
    else:
        layers, seq, steps, threads = map(int, argv[1:5])
        result = run_peft(layers, seq, steps, threads, started)
    print(json.dumps(result))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--seqs", default="1024")
    p.add_argument("--steps", type=int, default=2, help="timed steps after the first, median reported")
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    name, _ = cpu_model()
    print(f"CPU: {name}; {args.threads} threads; Qwen 3.5 0.8 B widths, {args.layers} layers, LoRA r{RANK}")
    print("| seq | toy tokens/s | toy peak RSS MB | PEFT bf16 tokens/s | PEFT peak RSS MB | toy / PEFT |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        model = write_gguf(args.layers, Path(tmp))
        for seq in map(int, args.seqs.split(",")):
            common = (str(seq), str(args.steps), str(args.threads))
            ours = run_worker(__file__, "--worker", "toy", str(model), *common)
            theirs = run_worker(__file__, "--worker", "peft", str(args.layers), *common)
            ratio = (
                f"{ours['tokens_per_s'] / theirs['tokens_per_s']:.2f}x"
                if "error" not in ours and "error" not in theirs
                else "-"
            )

            def cells(r):
                return (
                    ("failed: " + r["error"], "-")
                    if "error" in r
                    else (f"{r['tokens_per_s']:.1f}", f"{r['peak_rss_mb']:,.0f}")
                )

            print(f"| {seq} | {' | '.join(cells(ours))} | {' | '.join(cells(theirs))} | {ratio} |", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2:])
    else:
        main()
