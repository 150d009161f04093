"""FromScratch: a llama model from seeded random init, every weight trained."""
from __future__ import annotations

import numpy as np

from ..config import LlamaConfig, RecipeOptions
from ..engine import LlamaSeqEngine


class FromScratch:
    """Train a new llama model from random init.

    realize(cfg, opts) allocates and initialises the model and bakes the
    training step; step(...) runs one step and returns its loss.
    """

    def __init__(self, device: str = "cpu", threads: int | None = None):
        self.engine = LlamaSeqEngine(device, threads)
        self.cfg: LlamaConfig | None = None
        self.opts: RecipeOptions | None = None

    def realize(self, cfg: LlamaConfig, opts: RecipeOptions) -> None:
        self.cfg, self.opts = cfg, opts
        self.engine.realize(cfg, opts)
        self.engine.build()

    def step(self, seq_ids: np.ndarray, positions: np.ndarray, labels: np.ndarray,
             hp: np.ndarray, is_first: bool) -> float:
        """One training step on a batch; arrays are int32 [t_batch, t_seq]
        (labels: the next token of each position), hp from toy.adamw_hp."""
        e = self.engine
        if is_first:
            e.reset()
        else:
            e.reset_grads_only()
        e.upload(e.tokens, np.asarray(seq_ids, dtype=np.int32))
        e.upload(e.positions, np.asarray(positions, dtype=np.int32))
        e.upload(e.labels, np.asarray(labels, dtype=np.int32))
        e.upload(e.hp, np.asarray(hp, dtype=np.float32))
        e.compute_backward()
        return float(e.download(e.loss))

    def evaluate(self, seq_ids: np.ndarray, positions: np.ndarray,
                 labels: np.ndarray | None = None) -> tuple[np.ndarray, float | None]:
        """Forward only: logits [t_batch, t_seq, vocab] and, given labels, the loss."""
        e = self.engine
        e.upload(e.tokens, np.asarray(seq_ids, dtype=np.int32))
        e.upload(e.positions, np.asarray(positions, dtype=np.int32))
        if labels is not None:
            e.upload(e.labels, np.asarray(labels, dtype=np.int32))
        e.compute_forward()
        logits = e.download(e.logits).reshape(self.opts.t_batch, self.opts.t_seq, self.cfg.vocab)
        loss = float(e.download(e.loss)) if labels is not None else None
        return logits, loss

    def save(self, path) -> None:
        """The model as a GGUF file in llama.cpp's layout."""
        self.engine.save_gguf(path)
