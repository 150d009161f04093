"""DPO and ORPO: LoRA adapters on a frozen GGUF trained on preference pairs.

A batch holds pairs of rows, chosen then rejected (rows 2k and 2k + 1),
labelled on the answers only. DPO's reference model is the frozen base
itself: the same mapped file with the adapters at zero, so its
log-probabilities come from one forward pass before the first step
(reference_logps) and no second copy of the model is held. ORPO needs no
reference. Both losses live in the one training graph (tnn_set_objective).

A preference batch is the tuple (token ids, positions, reference
log-probabilities [t_batch], labels), labels last as for every recipe.
"""

from __future__ import annotations

import numpy as np

from ..datasets.preference import summarize
from .lora import LoRA


class PreferenceRecipe(LoRA):
    """What DPO and ORPO share: pairs of rows, each row's log-probability
    read back after every compute for the step's reward margin and
    accuracy. opts.t_batch counts rows: two per pair."""

    objective = ""

    def realize(
        self,
        gguf,
        cfg=None,
        rank: int = 8,
        opts=None,
        alpha: float | None = None,
        targets: tuple[str, ...] = ("q",),
        base_compute: str = "fast",
        beta: float = 0.1,
    ) -> None:
        self.beta = float(beta)
        self._margins: list[np.ndarray] = []  # the batches' since metrics()
        super().realize(gguf, cfg, rank, opts, alpha, targets, base_compute)

    def _objective(self) -> dict:
        return {"objective": self.objective, "beta": self.beta}

    def _upload_batch(self, seq_ids, positions, reference, labels=None) -> None:
        super()._upload_batch(seq_ids, positions, labels)
        self.session.upload(self.session.reference_logps, np.asarray(reference, dtype=np.float32))

    def _computed(self, batch) -> None:
        *_, reference, labels = batch
        self._margins.append(self.margins(self.session.download(self.session.row_logps), reference, labels))

    def _loss_scale(self, batch, micro_batches, labelled: int) -> float:
        """Each micro-batch's mean over its pairs, weighted by its share of the step's pairs."""
        pairs = [int(real_pairs(b[-1]).sum()) for b in micro_batches]
        return int(real_pairs(batch[-1]).sum()) / sum(pairs) if sum(pairs) else 0.0

    def rewards(self, row_logps, reference, counts) -> np.ndarray:
        """Each row's implicit reward (TRL's rewards/chosen and /rejected)."""
        raise NotImplementedError

    def margins(self, row_logps, reference, labels) -> np.ndarray:
        """Chosen minus rejected reward of each pair of a batch (padding left out)."""
        counts = (np.asarray(labels) >= 0).sum(axis=1)
        rewards = self.rewards(np.asarray(row_logps, dtype=np.float64), np.asarray(reference, dtype=np.float64), counts)
        return (rewards[0::2] - rewards[1::2])[real_pairs(labels)]

    def metrics(self) -> dict[str, float]:
        """The reward margin and preference accuracy of the batches computed
        since the last call (summarize)."""
        margins, self._margins = self._margins, []
        return summarize(np.concatenate(margins) if margins else np.zeros(0))

    def evaluate_pairs(self, seq_ids, positions, labels, reference=None) -> tuple[float, np.ndarray]:
        """Forward only: the loss and each row's summed log-probability of its labelled tokens."""
        session = self.session
        reference = np.zeros(len(labels), dtype=np.float32) if reference is None else reference
        self._upload_batch(seq_ids, positions, reference, labels)
        session.compute_forward()
        return float(session.download(session.loss)), session.download(session.row_logps).astype(np.float64)


def real_pairs(labels) -> np.ndarray:
    """Which pairs of a batch hold two labelled rows (the others are padding)."""
    counts = (np.asarray(labels) >= 0).sum(axis=1)
    return (counts[0::2] > 0) & (counts[1::2] > 0)


class DPO(PreferenceRecipe):
    """Direct preference optimisation: -log sigmoid(beta ((lp_c - ref_c) -
    (lp_r - ref_r))) per pair, lp a row's summed log-probability and ref the
    base model's (adapters off)."""

    objective = "dpo"

    def rewards(self, row_logps, reference, counts) -> np.ndarray:
        return self.beta * (row_logps - reference)


class ORPO(PreferenceRecipe):
    """Odds-ratio preference optimisation: the chosen answers' cross-entropy
    plus beta (lambda in the paper) times -log sigmoid of the log odds ratio
    of the length-normalised log-probabilities. No reference."""

    objective = "orpo"

    def rewards(self, row_logps, reference, counts) -> np.ndarray:
        return self.beta * row_logps / np.maximum(counts, 1)
