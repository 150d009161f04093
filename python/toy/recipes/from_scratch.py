"""FromScratch: a llama model from seeded random init, every weight trained."""
from __future__ import annotations

from ..config import LlamaConfig, RecipeOptions
from .base import TrainingRecipe


class FromScratch(TrainingRecipe):
    """Train a new llama model from random init.

    realize(cfg, opts) allocates and initialises the model and bakes the
    training step; step(...) runs one step and returns its loss.
    """

    def realize(self, cfg: LlamaConfig, opts: RecipeOptions) -> None:
        self.cfg, self.opts = cfg, opts
        self.engine.realize(cfg, opts)
        self.engine.build(opts.clip_norm)
