"""DPO and ORPO: LoRA adapters on a frozen GGUF trained on preference pairs.

A batch holds pairs of samples, chosen then rejected (samples 2k and
2k + 1, numbered through the batch: a row each, or with packed rows several
to a row, each beginning at position 0), labelled on the answers only. DPO's reference model is the frozen base
itself: the same mapped file with the adapters at zero, so its
log-probabilities come from one forward pass before the first step
(reference_logps) and no second copy of the model is held. ORPO needs no
reference. Both losses live in the one training graph (tnn_set_objective).

A preference batch is the tuple (token ids, positions, reference
log-probabilities [samples], labels), labels last as for every recipe.
"""

from __future__ import annotations

import numpy as np

from ..datasets.preference import real_pairs, sample_counts, summarize
from .lora import LoRA


class PreferenceRecipe(LoRA):
    """What DPO and ORPO share: pairs of samples, each sample's
    log-probability read back after every compute for the step's reward
    margin and accuracy. opts.t_batch counts rows: two per pair unpacked."""

    objective = ""

    def realize(
        self,
        gguf,
        cfg=None,
        rank: int = 8,
        opts=None,
        alpha: float | None = None,
        targets: tuple[str, ...] = ("q",),
        base_compute: str = "auto",
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
        _, positions, reference, labels = batch
        logps = self.session.download(self.session.sample_logps)
        self._margins.append(self.margins(logps, reference, positions, labels))

    def _loss_scale(self, batch, micro_batches, labelled: int) -> float:
        """Each micro-batch's mean over its pairs, weighted by its share of the step's pairs."""

        def pairs(b) -> int:
            return int(real_pairs(sample_counts(b[1], b[-1])).sum())

        total = sum(pairs(b) for b in micro_batches)
        return pairs(batch) / total if total else 0.0

    def rewards(self, sample_logps, reference, counts) -> np.ndarray:
        """Each sample's implicit reward (TRL's rewards/chosen and /rejected)."""
        raise NotImplementedError

    def margins(self, sample_logps, reference, positions, labels) -> np.ndarray:
        """Chosen minus rejected reward of each pair of a batch (padding left out)."""
        counts = sample_counts(positions, labels)
        n = len(counts) // 2 * 2
        logps, reference = (np.asarray(a, dtype=np.float64)[:n] for a in (sample_logps, reference))
        rewards = self.rewards(logps, reference, counts[:n])
        return (rewards[0::2] - rewards[1::2])[real_pairs(counts)]

    def metrics(self) -> dict[str, float]:
        """The reward margin and preference accuracy of the batches computed
        since the last call (summarize)."""
        margins, self._margins = self._margins, []
        return summarize(np.concatenate(margins) if margins else np.zeros(0))

    def evaluate_pairs(self, seq_ids, positions, labels, reference=None) -> tuple[float, np.ndarray]:
        """Forward only: the loss and each sample's summed log-probability of its labelled tokens."""
        session = self.session
        if reference is None:
            reference = np.zeros(session.info(session.reference_logps).shape, dtype=np.float32)
        self._upload_batch(seq_ids, positions, reference, labels)
        session.compute_forward()
        return float(session.download(session.loss)), session.download(session.sample_logps).astype(np.float64)


class DPO(PreferenceRecipe):
    """Direct preference optimisation: -log sigmoid(beta ((lp_c - ref_c) -
    (lp_r - ref_r))) per pair, lp a sample's summed log-probability and ref the
    base model's (adapters off)."""

    objective = "dpo"

    def rewards(self, sample_logps, reference, counts) -> np.ndarray:
        return self.beta * (sample_logps - reference)


class ORPO(PreferenceRecipe):
    """Odds-ratio preference optimisation: the chosen answers' cross-entropy
    plus beta (lambda in the paper) times -log sigmoid of the log odds ratio
    of the length-normalised log-probabilities. No reference."""

    objective = "orpo"

    def rewards(self, sample_logps, reference, counts) -> np.ndarray:
        return self.beta * sample_logps / np.maximum(counts, 1)
