"""FullFineTune: every weight of an existing llama-family GGUF trained.

The base's matrices (in whatever type they are stored) are dequantized once
into F32 trainable tensors of a llama model of the file's shape; the saved
model keeps the base's metadata (tokenizer, chat template, hyper-parameters)
and is written in F32, F16 or requantized to the base's types.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from ..core.config import RecipeOptions
from ..core.errors import TNN_ERR_ARG, ToyError
from ..formats.gguf_file import read_gguf
from ..formats.merge import write_like_base
from ..native.families import family
from ..native.session import ModelDesc, read_gguf_config
from .base import TrainingRecipe

ROPE_FREQS = "rope_freqs.weight"  # llama 3's RoPE factors (tinynn's TNN_ROPE_FREQS)
# LongRoPE's two sets (Phi-3.5, Phi-4-mini): the model holds both, as the file does
LONGROPE_FACTORS = ("rope_factors_short.weight", "rope_factors_long.weight")


class _Downloads(Mapping):
    """The session's parameters by their name in the file (file_names: the
    session's name -> the file's, where they differ), each downloaded when
    looked up."""

    def __init__(self, session, file_names: dict[str, str]):
        self.session = session
        self.handles = {file_names.get(name, name): handle for name, handle in session.params().items()}

    def __getitem__(self, name: str) -> np.ndarray:
        return self.session.download(self.handles[name])

    def __contains__(self, name) -> bool:
        return name in self.handles

    def __iter__(self):
        return iter(self.handles)

    def __len__(self) -> int:
        return len(self.handles)


class FullFineTune(TrainingRecipe):
    """Fine-tune all of a GGUF model's weights.

    realize(gguf, opts) builds a llama model of the file's shape, fills it
    with the file's weights (dequantized to F32) and bakes the training step;
    save_model(path, dtype) writes the result as a GGUF llama.cpp loads.
    """

    def realize(self, gguf, opts: RecipeOptions | None = None) -> None:
        cfg = read_gguf_config(gguf, self.session.lib)
        opts = opts or RecipeOptions()
        self.cfg, self.opts, self.base_path = cfg, opts, gguf
        # the model made here names its final norm output_norm.weight; the family's files may not (LFM2)
        entry = family(read_gguf(gguf).fields["general.architecture"].contents())
        self.file_names = {"output_norm.weight": entry.output_norm} if entry else {}
        build = self._build_args()
        # every weight is uploaded from the file next: realized as zeros (scale 0), not drawn
        self.session.realize(ModelDesc.from_scratch(cfg, replace(opts, init_scale=0.0)), build, opts.evaluates)
        self._load_weights(gguf)
        self.session.build(**build)

    def _load_weights(self, gguf_path) -> None:
        """Every parameter from the file, and its RoPE factors (Llama 3.1-3.3,
        LongRoPE's two sets), which the forward reads but nothing trains."""
        from gguf.quants import dequantize

        stored = {t.name: t for t in read_gguf(gguf_path).tensors}
        handles = {self.file_names.get(name, name): handle for name, handle in self.session.params().items()}
        if self.cfg.rope_freqs:
            for name in LONGROPE_FACTORS if self.cfg.rope_orig_ctx else (ROPE_FREQS,):
                handles[name] = self.session.find(name)
        for name, handle in handles.items():
            tensor = stored.get(name)
            if tensor is None:
                raise ToyError(f"{gguf_path} has no tensor {name}", TNN_ERR_ARG)
            shape = self.session.info(handle).shape
            weight = dequantize(tensor.data, tensor.tensor_type).astype(np.float32)
            if weight.size != int(np.prod(shape)):
                raise ToyError(f"{gguf_path}: {name} holds {weight.size} values, the model needs {shape}", TNN_ERR_ARG)
            self.session.upload(handle, weight.reshape(shape))

    def weights(self) -> dict[str, np.ndarray]:
        """The trained weights, F32, by GGUF tensor name."""
        return dict(_Downloads(self.session, self.file_names))

    def save_model(self, path, dtype: str = "f32"):
        """The fine-tuned model as a GGUF with the base's metadata: dtype f32,
        f16 or "base" (each matrix requantized to its type in the base).
        Each weight is downloaded only when it is written."""
        return write_like_base(read_gguf(self.base_path), path, _Downloads(self.session, self.file_names), dtype)

    save_dtype = "f32"  # what save() (toy-train's final write) uses

    def save(self, path) -> None:
        self.save_model(path, self.save_dtype)
