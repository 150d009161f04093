"""WarmStart: a new, smaller llama model whose token embedding starts from a
bigger donor's (same tokenizer), through a trainable lens when the widths
differ. The warm window runs from realize_scratch to build."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..core.config import ModelConfig, RecipeOptions
from ..core.errors import TNN_ERR_ARG, TNN_ERR_STATE, ToyError
from ..formats.donor import donor_embed_width, donor_embedding, pca_lens
from ..native.session import ModelDesc
from .base import TrainingRecipe


class WarmStart(TrainingRecipe):
    donor_embed_width = staticmethod(donor_embed_width)

    def realize_scratch(self, cfg: ModelConfig, opts: RecipeOptions) -> None:
        """Allocate the random-init model; opens the warm window."""
        if cfg.donor_d_in and cfg.donor_d_in != cfg.d_model:
            cfg = replace(cfg, untied=True)  # a donor-width table cannot be the d_model-wide output
        self.cfg, self.opts = cfg, opts
        self.session.realize(ModelDesc.from_scratch(cfg, opts), self._build_args(), opts.evaluates)

    def realize_warm(self, donor_gguf_path, cfg: ModelConfig | None = None) -> np.ndarray:
        """Upload the donor's first cfg.vocab embedding rows; returns them [vocab, d_in]."""
        if self.cfg is None:
            raise ToyError("realize_warm before realize_scratch: realize the model first", TNN_ERR_STATE)
        cfg = cfg or self.cfg
        if not cfg.donor_d_in:
            raise ToyError("realize_warm needs cfg.donor_d_in (see WarmStart.donor_embed_width)", TNN_ERR_ARG)
        table = donor_embedding(donor_gguf_path, cfg.donor_d_in, cfg.vocab)
        self.upload_donor(table, table.size)
        return table

    def upload_donor(self, buffer: np.ndarray, n_floats: int) -> None:
        self.session.upload_donor(buffer, n_floats)

    def init_lens_pca(self, table: np.ndarray) -> None:
        """Start the lens on the donor table's top principal directions."""
        lens = self.session.find("token_embd_proj.weight")
        self.session.upload(lens, pca_lens(table, self.cfg.d_model))

    def build(self) -> None:
        """Close the warm window: bake forward + CE + backward + AdamW."""
        self.session.build(**self._build_args())
