"""Where each optimizer step's micro-batches come from.

A source gives the number of steps, the micro-batches of each step, and a
hook after each step (instruct reports perplexities at the end of an epoch).
Its state() is what a checkpoint needs to draw the same batches after a
resume; fingerprint() names the data, so a resume on other data is refused.
"""
from __future__ import annotations

import hashlib
import math
import sys
from pathlib import Path

import numpy as np

from .corpus import BatchSampler
from .errors import InputError
from .images import to_patches
from .instruct import fit, split, to_rows


class EpochQueue:
    """Indices 0..n-1 drawn per_step at a time, epoch after epoch, each epoch
    a fresh permutation by seed; a step may take the end of one epoch and
    the start of the next."""

    def __init__(self, n: int, per_step: int, seed: int):
        self.n, self.per_step = n, per_step
        self.rng = np.random.default_rng(seed)
        self.queue: list[int] = []      # in drawing order

    def take(self) -> list[int]:
        if len(self.queue) < self.per_step:
            self.queue += [int(i) for i in self.rng.permutation(self.n)]
        chunk, self.queue = self.queue[: self.per_step], self.queue[self.per_step:]
        return chunk

    def state(self) -> dict:
        return {"rng": self.rng.bit_generator.state, "queue": self.queue}

    def restore(self, state: dict) -> None:
        queue = state["queue"]
        if not isinstance(queue, list) or not all(type(i) is int and 0 <= i < self.n for i in queue):
            raise ValueError("the queue names samples that are not there")
        self.rng.bit_generator.state = state["rng"]
        self.queue = list(queue)


class CorpusSource:
    """Random windows of a token corpus."""

    def __init__(self, tokens: np.ndarray, name: str, args):
        self.name, self.n_tokens = name, int(tokens.size)
        self.sampler = BatchSampler(tokens, args.seq, args.batch, args.seed)
        self.accum = args.grad_accum
        self.tokens_per_step = args.seq * args.batch * args.grad_accum
        self.steps = args.steps or 5

    def next(self):
        return [self.sampler.next() for _ in range(self.accum)]

    def state(self) -> dict:
        return {"rng": self.sampler.rng.bit_generator.state}

    def restore(self, state: dict) -> None:
        self.sampler.rng.bit_generator.state = state["rng"]

    def fingerprint(self) -> str:
        return hashlib.sha256(self.sampler.tokens.astype("<i4").tobytes()).hexdigest()

    def before_training(self, recipe, run_dir) -> None:
        pass

    def after_step(self, step, recipe, run_dir) -> None:
        pass


class InstructSource:
    """Epochs over instruction samples, shuffled by seed, with a held-out split."""

    def __init__(self, samples, name: str, args, pad_id: int):
        fitted = [fit(s, args.seq) for s in samples]
        skipped = sum(f is None for f in fitted)
        truncated = sum(f is not None and f is not s for f, s in zip(fitted, samples))
        kept = [f for f in fitted if f is not None]
        if not kept:
            raise InputError(f"no sample of {name} fits in --seq {args.seq}: every response is longer "
                             "(give a larger --seq)")
        if skipped or truncated:
            print(f"toy-train: {truncated} samples had their prompt cut from the left and {skipped} "
                  f"were skipped (response longer than --seq {args.seq})", file=sys.stderr)
        self.train, self.eval = split(kept, args.eval_split, args.seed)
        self.name = name
        self.n_tokens = int(sum(len(s.tokens) for s in kept))
        self.args, self.pad_id = args, pad_id
        self.per_step = args.batch * args.grad_accum
        self.tokens_per_step = args.seq * self.per_step
        self.steps_per_epoch = math.ceil(len(self.train) / self.per_step)
        self.steps = args.steps or args.epochs * self.steps_per_epoch
        self.order = EpochQueue(len(self.train), self.per_step, args.seed)

    def next(self):
        chunk = [self.train[i] for i in self.order.take()]
        b = self.args.batch
        return [self._pad(chunk[i:i + b]) for i in range(0, len(chunk), b)]

    def state(self) -> dict:
        return self.order.state()

    def restore(self, state: dict) -> None:
        self.order.restore(state)

    def fingerprint(self) -> str:
        return hashlib.sha256(Path(self.name).read_bytes()).hexdigest()

    def _pad(self, rows):
        """rows as (ids, positions, labels) [t_batch, t_seq]; missing rows are
        padding with every label masked."""
        ids, positions, labels = to_rows(rows, self.args.seq, self.pad_id)
        n = self.args.batch - len(rows)
        pad_ids = np.full((n, self.args.seq), self.pad_id, dtype=np.int32)
        pad_labels = np.full((n, self.args.seq), -1, dtype=np.int32)
        positions = np.tile(np.arange(self.args.seq, dtype=np.int32), (self.args.batch, 1))
        return np.vstack([ids, pad_ids]), positions, np.vstack([labels, pad_labels])

    def perplexity(self, recipe, samples) -> float:
        """exp(mean loss over the labelled tokens of samples), forward only."""
        total, count = 0.0, 0
        b = self.args.batch
        for i in range(0, len(samples), b):
            ids, positions, labels = self._pad(samples[i:i + b])
            _, loss = recipe.evaluate(ids, positions, labels)
            n = int((labels != -1).sum())
            total, count = total + loss * n, count + n
        return math.exp(total / count) if count else float("nan")

    def before_training(self, recipe, run_dir) -> None:
        self.report(0, 0, recipe, run_dir)          # the base model's perplexities

    def after_step(self, step, recipe, run_dir) -> None:
        if step % self.steps_per_epoch and step != self.steps:
            return
        self.report(math.ceil(step / self.steps_per_epoch), step, recipe, run_dir)

    def report(self, epoch, step, recipe, run_dir) -> None:
        """Perplexities after an epoch; the eval one only when there is a held-out split."""
        ppl = {"train_perplexity": self.perplexity(recipe, self.train)}
        if self.eval:
            ppl["eval_perplexity"] = self.perplexity(recipe, self.eval)
        run_dir.event(epoch=epoch, step=step, **ppl)
        said = ", ".join(f"{key.split('_')[0]} perplexity {value:.3f}" for key, value in ppl.items())
        print(f"toy-train: epoch {epoch}: {said}", file=sys.stderr)


class ImageSource:
    """Epochs over labelled images, shuffled by seed, with a held-out split
    whose accuracy is reported after every epoch."""

    def __init__(self, images, labels, patch: int, train_idx, eval_idx, name: str, args):
        self.images, self.labels, self.patch = images, labels, patch
        self.train, self.eval = train_idx, eval_idx
        self.eval_patches = to_patches(images[eval_idx], patch)
        self.name, self.n_tokens = name, int(len(labels))     # "tokens": images, here
        self.batch, self.accum = args.batch, args.grad_accum
        self.per_step = self.batch * self.accum
        self.tokens_per_step = self.per_step
        self.steps_per_epoch = math.ceil(len(self.train) / self.per_step)
        self.steps = args.steps or args.epochs * self.steps_per_epoch
        self.order = EpochQueue(len(self.train), self.per_step, args.seed)
        self.accuracy = None            # the last held-out accuracy

    def next(self):
        rows = self.train[np.array(self.order.take())]
        patches = to_patches(self.images[rows], self.patch)
        return [(patches[i:i + self.batch], self.labels[rows[i:i + self.batch]])
                for i in range(0, len(rows), self.batch)]

    def state(self) -> dict:
        return self.order.state()

    def restore(self, state: dict) -> None:
        self.order.restore(state)

    def fingerprint(self) -> str:
        digest = hashlib.sha256(self.images.tobytes())
        digest.update(self.labels.astype("<i4").tobytes())
        return digest.hexdigest()

    def before_training(self, recipe, run_dir) -> None:
        pass

    def after_step(self, step, recipe, run_dir) -> None:
        if step % self.steps_per_epoch and step != self.steps:
            return
        epoch = math.ceil(step / self.steps_per_epoch)
        if not len(self.eval):
            run_dir.event(epoch=epoch, step=step)
            return
        predicted = recipe.logits(self.eval_patches).argmax(axis=1)
        correct = int((predicted == self.labels[self.eval]).sum())
        self.accuracy = correct / len(self.eval)
        run_dir.event(epoch=epoch, step=step, eval_accuracy=self.accuracy, eval_correct=correct,
                      eval_images=len(self.eval))
        print(f"toy-train: epoch {epoch}: held-out accuracy {100 * self.accuracy:.1f}% "
              f"({correct}/{len(self.eval)})", file=sys.stderr)
