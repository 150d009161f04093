"""FromScratch: a token model (llama, GPT-2, ...) from seeded random init,
every weight trained."""

from __future__ import annotations

from ..core.config import ModelConfig, RecipeOptions
from ..native.session import ModelDesc
from .base import TrainingRecipe


class FromScratch(TrainingRecipe):
    """Train a new model of cfg.arch from random init.

    realize(cfg, opts) allocates and initialises the model and bakes the
    training step; step(...) runs one step and returns its loss.
    """

    def realize(self, cfg: ModelConfig, opts: RecipeOptions) -> None:
        self.cfg, self.opts = cfg, opts
        build = self._build_args()
        self.session.realize(ModelDesc.from_scratch(cfg, opts), build, opts.evaluates)
        self.session.build(**build)
