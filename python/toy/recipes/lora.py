"""LoRA: adapters trained on a frozen llama-family GGUF (llama, Qwen2/3,
Gemma 3), kept in its stored types."""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from ..core.config import ModelConfig, RecipeOptions
from ..core.errors import TNN_ERR_ARG, ToyError
from ..formats.gguf_file import experts_bytes
from ..native.session import ModelDesc, read_gguf_config, resolve_targets
from .base import TrainingRecipe


class LoRA(TrainingRecipe):
    """Fine-tune a GGUF model through low-rank adapters.

    realize(gguf, cfg, rank, opts) maps the base (no dequantized copy), adds
    A [rank x d_in] (random, init_scale) and B [d_out x rank] (zero) on each
    target projection, and bakes the training step; only A and B train.
    base_compute "fast" trains through transposed Q8_0 copies of the base's
    matrices (F32 for the output head); "stored" uses the stored types in
    place: least memory (near fast's speed on K-quant bases, slower on the Q4_0, Q4_1
    and Q8_0 ones the packed kernels read in place); "auto" (default) is fast where
    the step fits in memory with the copies, else stored (self.base_compute
    says which after realize).
    """

    def realize(
        self,
        gguf,
        cfg: ModelConfig | None = None,
        rank: int = 8,
        opts: RecipeOptions | None = None,
        alpha: float | None = None,
        targets: tuple[str, ...] = ("q",),
        base_compute: str = "auto",
    ) -> None:
        file_cfg = read_gguf_config(gguf, self.session.lib)
        if cfg is not None and cfg.to_dict() != file_cfg.to_dict():
            raise ToyError(f"the config given does not match {gguf}: {file_cfg}", TNN_ERR_ARG)
        self.cfg, self.opts = file_cfg, opts or RecipeOptions()
        self.base_path = gguf
        self.rank, self.alpha = rank, float(alpha if alpha is not None else 2 * rank)
        self.targets = resolve_targets(tuple(targets), file_cfg)
        build = self._build_args(**self._objective())
        self.session.realize(
            ModelDesc.lora(gguf, self.opts, rank, self.alpha, self.targets, base_compute),
            build,
            self.opts.evaluates,
            streamed=experts_bytes(gguf),
        )
        self.base_compute = self.session.base_compute
        self.session.build(**build)

    def _objective(self) -> dict:
        """What the step minimises (Session.build's objective and beta): the mean cross-entropy."""
        return {}

    def adapters(self) -> dict[str, int]:
        """Adapter tensor name -> handle (<weight>.lora_a / .lora_b)."""
        return self.session.params()

    @contextmanager
    def adapters_off(self):
        """Evaluate the base model alone: B is zeroed, then restored."""
        session = self.session
        saved = {h: session.download(h) for name, h in self.adapters().items() if name.endswith(".lora_b")}
        try:
            for h, value in saved.items():
                session.upload(h, np.zeros_like(value))
            yield
        finally:
            for h, value in saved.items():
                session.upload(h, value)

    def save_adapter(self, path) -> None:
        """The adapter as a GGUF LoRA file llama.cpp loads (--lora PATH)."""
        self.save(path)
