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
from typing import Protocol

import numpy as np

from ..core.errors import InputError
from .corpus import BatchSampler, tokens_digest
from .images import to_patches
from .instruct import fit, pack, packed_rows, places, split
from .preference import PACKED_SAMPLES, fit_pairs_to_rows, pair_places, pair_rows, summarize

# --packing auto packs (instruct and preference data) where that saves at least this share of the rows
AUTO_SAVING = 0.25


class BatchSource(Protocol):
    """What the training loop asks of a recipe's data (CorpusSource,
    InstructSource, PreferenceSource, ImageSource)."""

    name: str  # the data's file (or "default"), for messages and config.json
    n_tokens: int  # its size, in tokens (images for ImageSource)
    steps: int  # the run's optimizer steps
    tokens_per_step: int

    def next(self) -> list:
        """The next step's micro-batches, each a tuple of arrays the recipe uploads."""
        ...

    def state(self) -> dict:
        """What a checkpoint keeps to draw the same batches after a resume."""
        ...

    def restore(self, state: dict) -> None: ...

    def fingerprint(self) -> str:
        """The sha256 of the data: a resume on other data is refused."""
        ...

    def before_training(self, recipe, run_dir) -> None: ...

    def after_step(self, step: int, recipe, run_dir) -> None: ...


class EpochQueue:
    """Indices 0..n-1 drawn per_step at a time, epoch after epoch, each epoch
    a fresh permutation by seed; a step may take the end of one epoch and
    the start of the next."""

    def __init__(self, n: int, per_step: int, seed: int):
        self.n, self.per_step = n, per_step
        self.rng = np.random.default_rng(seed)
        self.queue: list[int] = []  # in drawing order

    def take(self) -> list[int]:
        if len(self.queue) < self.per_step:
            self.queue += [int(i) for i in self.rng.permutation(self.n)]
        chunk, self.queue = self.queue[: self.per_step], self.queue[self.per_step :]
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
        return tokens_digest(self.sampler.tokens)

    def before_training(self, recipe, run_dir) -> None:
        pass

    def after_step(self, step, recipe, run_dir) -> None:
        pass


class InstructSource:
    """Epochs over instruction samples, shuffled by seed, with a held-out
    split. With packing, the training samples are laid into rows of --seq
    places once (pack), several to a row, and the epochs go over the rows:
    each sample attends only to itself, as it would alone, and a step does
    the work of its rows' tokens, not of padding."""

    def __init__(self, samples, name: str, args, pad_id: int):
        fitted = [fit(s, args.seq) for s in samples]
        skipped = sum(f is None for f in fitted)
        truncated = sum(f is not None and f is not s for f, s in zip(fitted, samples))
        kept = [f for f in fitted if f is not None]
        if not kept:
            raise InputError(
                f"no sample of {name} fits in --seq {args.seq}: every response is longer (give a larger --seq)"
            )
        if skipped or truncated:
            print(
                f"toy-train: {truncated} samples had their prompt cut from the left and {skipped} "
                f"were skipped (response longer than --seq {args.seq})",
                file=sys.stderr,
            )
        self.train, self.eval = split(kept, args.eval_split, args.seed)
        self.name = name
        self.n_tokens = int(sum(len(s.tokens) for s in kept))
        self.args, self.pad_id = args, pad_id
        packing = getattr(args, "packing", "off")
        packed = pack([places(s) for s in self.train], args.seq) if packing != "off" else []
        self.packed = packing == "on" or (packing == "auto" and len(packed) <= (1 - AUTO_SAVING) * len(self.train))
        self.rows = [[self.train[i] for i in row] for row in packed] if self.packed else [[s] for s in self.train]
        self.per_step = args.batch * args.grad_accum
        self.tokens_per_step = args.seq * self.per_step
        self.steps_per_epoch = math.ceil(len(self.rows) / self.per_step)
        self.steps, self.epochs = args.steps, args.epochs
        if args.epochs is not None:  # None: the recipe decides them from steps_per_epoch
            self.set_epochs(args.epochs)
        self.order = EpochQueue(len(self.rows), self.per_step, args.seed)

    def set_epochs(self, epochs: int) -> None:
        """The run's passes over the rows, decided after the rows are laid
        out (--steps, where given, still wins)."""
        self.epochs = epochs
        self.steps = self.args.steps or epochs * self.steps_per_epoch

    def describe_packing(self) -> str:
        """How the training samples lie in rows, for the run's first lines."""
        if not self.packed:
            return f"{len(self.train)} training samples, one a row"
        filled = sum(len(s.tokens) - 1 for s in self.train) / (len(self.rows) * self.args.seq)
        return (
            f"{len(self.train)} training samples packed into {len(self.rows)} rows of {self.args.seq} "
            f"({filled:.0%} filled)"
        )

    def next(self):
        chunk = [self.rows[i] for i in self.order.take()]
        b = self.args.batch
        return [self._rows(chunk[i : i + b]) for i in range(0, len(chunk), b)]

    def state(self) -> dict:
        return self.order.state()

    def restore(self, state: dict) -> None:
        self.order.restore(state)

    def fingerprint(self) -> str:
        return hashlib.sha256(Path(self.name).read_bytes()).hexdigest()

    def _rows(self, rows):
        """rows (each a list of samples) as (ids, positions, labels)
        [t_batch, t_seq]; missing rows are padding with every label masked."""
        rows = rows + [[]] * (self.args.batch - len(rows))
        return packed_rows(rows, self.args.seq, self.pad_id)

    def _pad(self, samples):
        """samples one a row, as _rows."""
        return self._rows([[s] for s in samples])

    def perplexity(self, recipe, samples) -> float:
        """exp(mean loss over the labelled tokens of samples), forward only."""
        total, count = 0.0, 0
        b = self.args.batch
        for i in range(0, len(samples), b):
            ids, positions, labels = self._pad(samples[i : i + b])
            _, loss = recipe.evaluate(ids, positions, labels)
            n = int((labels != -1).sum())
            total, count = total + loss * n, count + n
        return math.exp(total / count) if count else float("nan")

    def before_training(self, recipe, run_dir) -> None:
        self.report(0, 0, recipe, run_dir)  # the base model's perplexities

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


class PreferenceSource:
    """Epochs over preference pairs (dpo, orpo), shuffled by seed, with a
    held-out split. A micro-batch is 2 --batch rows (rows, with each
    sample's reference log-probability: for DPO the base model's, from one
    forward pass before the first step with the adapters off, kept in the
    checkpoints so that a resume does not redo it; zeros for ORPO, which has
    no reference). Unpacked, a row is one answer and a micro-batch --batch
    pairs, chosen and rejected in rows 2k and 2k + 1. Packed, a row holds
    whole pairs, each pair's chosen then its rejected answer, laid once
    (pack) and shuffled as rows. At the end the held-out pairs' loss, reward
    margin and accuracy are reported."""

    def __init__(self, pairs, name: str, args, pad_id: int, needs_reference: bool):
        self.name, self.args, self.pad_id = name, args, pad_id
        self.t_batch = 2 * args.batch
        self.packed, pairs = self._choose_packing(pairs, args)
        self.train, self.eval = split(pairs, args.eval_split, args.seed)
        self.n_tokens = int(sum(len(p.chosen.tokens) + len(p.rejected.tokens) for p in pairs))
        # the pairs of each row (packed) or of each two rows, per part
        self.layout = {part: self._lay(getattr(self, part)) for part in ("train", "eval")}
        self.units_per_batch = self.t_batch if self.packed else args.batch
        self.per_step = self.units_per_batch * args.grad_accum
        self.tokens_per_step = self.t_batch * args.seq * args.grad_accum
        self.steps_per_epoch = math.ceil(len(self.layout["train"]) / self.per_step)
        self.steps = args.steps or args.epochs * self.steps_per_epoch
        self.order = EpochQueue(len(self.layout["train"]), self.per_step, args.seed)
        self.needs_reference = needs_reference
        self.samples = PACKED_SAMPLES if self.packed else self.t_batch  # the session's reference_logps
        # [pairs, 2]: each pair's chosen and rejected reference log-probabilities
        self.reference = {"train": np.zeros((len(self.train), 2)), "eval": np.zeros((len(self.eval), 2))}

    def _most_per_row(self) -> int:
        """Pairs a packed row may hold: a batch holds at most PACKED_SAMPLES samples."""
        return PACKED_SAMPLES // (2 * self.t_batch)

    def _choose_packing(self, pairs, args):
        """(packed, the pairs as they will train): --packing on packs (cutting
        pairs too long for one row), auto where no pair is cut for it and the
        rows fall by a quarter."""
        packing = getattr(args, "packing", "off")
        if packing == "off":
            return False, pairs
        if self._most_per_row() < 1:
            if packing == "on":
                raise InputError(f"--packing on: a packed preference batch holds at most {PACKED_SAMPLES // 4} pairs")
            return False, pairs
        if packing == "on":
            return True, fit_pairs_to_rows(pairs, args.seq)
        if any(pair_places(p) > args.seq for p in pairs):
            return False, pairs
        rows = pack([pair_places(p) for p in pairs], args.seq, self._most_per_row())
        return len(rows) <= (1 - AUTO_SAVING) * 2 * len(pairs), pairs

    def _lay(self, pairs) -> list[list[int]]:
        if not self.packed:
            return [[i] for i in range(len(pairs))]
        return pack([pair_places(p) for p in pairs], self.args.seq, self._most_per_row())

    def describe_packing(self) -> str:
        """How the training pairs lie in rows, for the run's first lines."""
        n = len(self.train)
        if not self.packed:
            return f"{n} training pairs, one answer a row"
        rows = len(self.layout["train"])
        filled = sum(pair_places(p) for p in self.train) / (rows * self.args.seq)
        return f"{n} training pairs packed into {rows} rows of {self.args.seq} ({filled:.0%} filled)"

    def _batch(self, part: str, units):
        """(pair indices in the batch's order, (ids, positions, reference, labels)) of these units."""
        pairs, layout = getattr(self, part), self.layout[part]
        indices = [i for u in units for i in layout[u]]
        if self.packed:
            laid = [[pairs[i] for i in layout[u]] for u in units]
        else:
            laid = [pairs[i] for i in indices]
        ids, positions, labels = pair_rows(laid, self.t_batch, self.args.seq, self.pad_id, self.packed)
        reference = np.zeros(self.samples, dtype=np.float32)
        reference[: 2 * len(indices)] = self.reference[part][indices].ravel()
        return indices, (ids, positions, reference, labels)

    def _batches(self, part: str):
        n, b = len(self.layout[part]), self.units_per_batch
        return [self._batch(part, range(i, min(i + b, n))) for i in range(0, n, b)]

    def next(self):
        chunk = self.order.take()
        b = self.units_per_batch
        return [self._batch("train", chunk[i : i + b])[1] for i in range(0, len(chunk), b)]

    def state(self) -> dict:
        return {
            "order": self.order.state(),
            "reference": {part: values.tolist() for part, values in self.reference.items()},
        }

    def restore(self, state: dict) -> None:
        reference = {}
        for part in ("train", "eval"):
            values = np.asarray(state["reference"][part], dtype=np.float64).reshape(-1, 2)
            if values.shape != self.reference[part].shape or not np.isfinite(values).all():
                raise ValueError("the reference log-probabilities do not fit these pairs")
            reference[part] = values
        self.order.restore(state["order"])
        self.reference = reference

    def fingerprint(self) -> str:
        return hashlib.sha256(Path(self.name).read_bytes()).hexdigest()

    def before_training(self, recipe, run_dir) -> None:
        """DPO's reference: every pair's log-probabilities under the base model."""
        if not self.needs_reference:
            return
        with recipe.adapters_off():
            for part in ("train", "eval"):
                for indices, (ids, positions, _, labels) in self._batches(part):
                    _, sample_logps = recipe.evaluate_pairs(ids, positions, labels)
                    self.reference[part][indices] = sample_logps[: 2 * len(indices)].reshape(-1, 2)
        print(
            f"toy-train: reference log-probabilities of {len(self.train) + len(self.eval)} pairs from the base model",
            file=sys.stderr,
        )

    def after_step(self, step, recipe, run_dir) -> None:
        if step != self.steps or not self.eval:
            return
        losses, weights, margins = [], [], []
        for indices, (ids, positions, reference, labels) in self._batches("eval"):
            loss, sample_logps = recipe.evaluate_pairs(ids, positions, labels, reference)
            losses.append(loss)
            weights.append(len(indices))
            margins.append(recipe.margins(sample_logps, reference, positions, labels))
        held_out = summarize(np.concatenate(margins))
        held_out["loss"] = float(np.average(losses, weights=weights))
        run_dir.event(step=step, eval_pairs=len(self.eval), **{f"eval_{key}": value for key, value in held_out.items()})
        print(
            f"toy-train: held-out ({len(self.eval)} pairs): loss {held_out['loss']:.4f}, reward margin "
            f"{held_out['margin']:.4f}, accuracy {100 * held_out['accuracy']:.1f}%",
            file=sys.stderr,
        )


class ImageSource:
    """Epochs over labelled images, shuffled by seed, with a held-out split
    whose accuracy is reported after every epoch."""

    def __init__(self, images, labels, patch: int, train_idx, eval_idx, name: str, args):
        self.images, self.labels, self.patch = images, labels, patch
        self.train, self.eval = train_idx, eval_idx
        self.eval_patches = to_patches(images[eval_idx], patch)
        self.name, self.n_tokens = name, int(len(labels))  # "tokens": images, here
        self.batch, self.accum = args.batch, args.grad_accum
        self.per_step = self.batch * self.accum
        self.tokens_per_step = self.per_step
        self.steps_per_epoch = math.ceil(len(self.train) / self.per_step)
        self.steps = args.steps or args.epochs * self.steps_per_epoch
        self.order = EpochQueue(len(self.train), self.per_step, args.seed)
        self.accuracy = None  # the last held-out accuracy

    def next(self):
        rows = self.train[np.array(self.order.take())]
        patches = to_patches(self.images[rows], self.patch)
        return [
            (patches[i : i + self.batch], self.labels[rows[i : i + self.batch]])
            for i in range(0, len(rows), self.batch)
        ]

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
        run_dir.event(
            epoch=epoch, step=step, eval_accuracy=self.accuracy, eval_correct=correct, eval_images=len(self.eval)
        )
        print(
            f"toy-train: epoch {epoch}: held-out accuracy {100 * self.accuracy:.1f}% ({correct}/{len(self.eval)})",
            file=sys.stderr,
        )
