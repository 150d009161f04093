"""What every recipe shares: the training step and forward-only evaluation,
thin over the session (reset, uploads, compute, download).

A batch is a tuple of arrays whose last one is the labels: (token ids,
positions, labels) for the language models, (patches, labels) for a ViT;
each recipe's _upload_batch knows its inputs."""

from __future__ import annotations

import numpy as np

from ..core.config import ModelConfig, RecipeOptions
from ..native.session import Session


class TrainingRecipe:
    def __init__(self, device: str = "cpu", threads: int | None = None):
        self.session = Session(device, threads)
        self.cfg: ModelConfig | None = None
        self.opts: RecipeOptions | None = None

    def _build_args(self, **objective) -> dict:
        """What Session.build gets from self.opts (and realize, to plan the memory)."""
        opts = self.opts
        return dict(
            clip_norm=opts.clip_norm,
            precision=opts.precision,
            recompute=opts.recompute,
            packed=opts.packed,
            **objective,
        )

    def _upload_batch(self, seq_ids, positions, labels=None) -> None:
        session = self.session
        session.upload(session.tokens, np.asarray(seq_ids, dtype=np.int32))
        session.upload(session.positions, np.asarray(positions, dtype=np.int32))
        if labels is not None:
            session.upload(session.labels, np.asarray(labels, dtype=np.int32))

    def step(
        self, seq_ids: np.ndarray, positions: np.ndarray, labels: np.ndarray, hp: np.ndarray, is_first: bool
    ) -> float:
        """One training step on a batch; arrays are int32 [t_batch, t_seq]
        (labels: the next token of each position), hp from toy.adamw_hp."""
        return self.step_batch((seq_ids, positions, labels), hp, is_first)

    def step_batch(self, batch: tuple, hp: np.ndarray, is_first: bool) -> float:
        """One training step on a batch tuple (labels last), whatever the model's inputs."""
        session = self.session
        if is_first:
            session.reset()
        self._upload_batch(*batch)
        session.upload(session.hp, np.asarray(hp, dtype=np.float32))
        session.compute_step()  # the gradients are written: no zeroing pass
        self._computed(batch)
        return float(session.download(session.loss))

    def metrics(self) -> dict[str, float]:
        """What the log reports beside the loss for the steps since the last
        call (none here; the preference recipes' reward margin and accuracy)."""
        return {}

    def _computed(self, batch) -> None:
        """After each batch's compute: what a recipe reads besides the loss (none here)."""

    def _loss_scale(self, batch, micro_batches, labelled: int) -> float:
        """The factor on one micro-batch's loss that makes the sum over
        micro-batches the mean over all labelled tokens (or images)."""
        n_rows = np.asarray(batch[-1]).size
        return n_rows / labelled if labelled else 0.0

    def step_accumulated(
        self, micro_batches, hp: np.ndarray, is_first: bool, labelled: int | None = None, sum_over_ranks=None
    ) -> float:
        """One optimizer step over several micro-batches (each a batch as for
        step, labels last): gradients add up in the graph's accumulators, and
        each micro-batch's loss is scaled so that the update is the one a
        single batch of all of them would give. Returns the mean loss over
        all labelled tokens (or images).

        Data parallel: micro_batches are this rank's share, labelled counts
        the labelled rows of every rank's, and sum_over_ranks(array) sums
        over ranks; the gradients and losses are summed before the update."""
        session = self.session
        if labelled is None:
            labelled = sum(int((np.asarray(b[-1]) != -1).sum()) for b in micro_batches)
        total = 0.0
        for j, batch in enumerate(micro_batches):
            if j == 0:
                session.reset() if is_first else session.reset_grads_only()
            self._upload_batch(*batch)
            session.set_loss_scale(self._loss_scale(batch, micro_batches, labelled))
            if j < len(micro_batches) - 1 or sum_over_ranks is not None:
                session.compute_gradients()
            else:
                session.upload(session.hp, np.asarray(hp, dtype=np.float32))
                session.compute_accumulated_step()
            self._computed(batch)
            total += float(session.download(session.loss))
        if sum_over_ranks is not None:
            total = float(sum_over_ranks(np.array([total]))[0])
            session.sum_gradients(sum_over_ranks)
            session.upload(session.hp, np.asarray(hp, dtype=np.float32))
            session.apply_update()
        return total

    def evaluate(
        self, seq_ids: np.ndarray, positions: np.ndarray, labels: np.ndarray | None = None
    ) -> tuple[np.ndarray, float | None]:
        """Forward only: logits [t_batch, t_seq, vocab] and, given labels, the loss."""
        session = self.session
        self._upload_batch(seq_ids, positions, labels)
        session.compute_forward()
        logits = session.download(session.logits).reshape(self.opts.t_batch, self.opts.t_seq, self.cfg.vocab)
        loss = float(session.download(session.loss)) if labels is not None else None
        return logits, loss

    def save(self, path) -> None:
        """The trained tensors as GGUF: the model (FromScratch) or the adapter (LoRA)."""
        self.session.save_gguf(path)
