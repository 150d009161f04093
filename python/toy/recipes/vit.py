"""ViTTiny: a small ViT image classifier trained from random init, and
load_vit to read one back and predict."""

from __future__ import annotations

import numpy as np

from ..core.config import ViTConfig
from ..core.errors import InputError
from ..datasets.images import to_patches
from ..formats.gguf_file import writing_gguf
from ..native.session import ModelDesc
from .base import TrainingRecipe

ARCH = "toy-vit"


class ViTTiny(TrainingRecipe):
    """Train a ViT on images: realize(cfg, t_batch, ...), then step(patches,
    labels, hp, is_first) per batch; predict(images) gives class
    probabilities; save(path) writes a GGUF that load_vit reads."""

    def realize(
        self,
        cfg: ViTConfig,
        t_batch: int,
        seed: int = 0,
        init_scale: float = 0.02,
        clip_norm: float = 0.0,
        classes: list[str] | None = None,
        recompute: int = 0,
    ) -> None:
        self.cfg, self.t_batch = cfg, t_batch
        self.classes = list(classes) if classes else [str(i) for i in range(cfg.n_classes)]
        self.session.realize(ModelDesc.vit(cfg, t_batch, seed, init_scale))
        self.session.build(clip_norm, recompute=recompute)

    def _upload_batch(self, patches, labels=None) -> None:
        session = self.session
        session.upload(session.images, np.asarray(patches, dtype=np.float32))
        if labels is not None:
            session.upload(session.labels, np.asarray(labels, dtype=np.int32))

    def step(self, patches: np.ndarray, labels: np.ndarray, hp: np.ndarray, is_first: bool) -> float:
        """One training step: patches float32 [t_batch, n_patches, patch_dim]
        (images.to_patches), labels int32 [t_batch] (-1 leaves an image out)."""
        return self.step_batch((patches, labels), hp, is_first)

    def logits(self, patches: np.ndarray) -> np.ndarray:
        """Forward only: [n, n_classes] for any number n of images' patches."""
        session, b = self.session, self.t_batch
        out = []
        for i in range(0, len(patches), b):
            chunk = np.asarray(patches[i : i + b], dtype=np.float32)
            padded = np.zeros((b, *chunk.shape[1:]), dtype=np.float32)
            padded[: len(chunk)] = chunk
            self._upload_batch(padded)
            session.compute_forward()
            # [b, n_classes] even when b is 1 (the session drops a trailing dimension of 1)
            out.append(session.download(session.logits).reshape(b, -1)[: len(chunk)])
        return np.concatenate(out) if out else np.zeros((0, self.cfg.n_classes), np.float32)

    def predict(self, images) -> np.ndarray:
        """Class probabilities [n, n_classes] of images: float arrays (n, H, W)
        or (n, H, W, C) with values in [0, 1], H = W = the model's image size."""
        images = np.asarray(images, dtype=np.float32)
        if images.ndim == 3:
            images = images[..., None]
        cfg = self.cfg
        want = (cfg.image_size, cfg.image_size, cfg.channels)
        if images.ndim != 4 or images.shape[1:] != want:
            raise InputError(
                f"images must be (n, {want[0]}, {want[1]}) or (n, {', '.join(map(str, want))}) "
                f"with values in [0, 1], got shape {images.shape}"
            )
        logits = self.logits(to_patches(images, cfg.patch)).astype(np.float64)
        z = np.exp(logits - logits.max(axis=1, keepdims=True))
        return (z / z.sum(axis=1, keepdims=True)).astype(np.float32)

    def save(self, path) -> None:
        """The model and its preprocessing as GGUF (general.architecture
        "toy-vit"): tensors F32 by name, shape and image keys under toy-vit.*."""
        cfg = self.cfg
        with writing_gguf(path, ARCH) as writer:
            writer.add_name("toy ViT")
            for key, value in (
                ("class_count", cfg.n_classes),
                ("image_size", cfg.image_size),
                ("patch_size", cfg.patch),
                ("channels", cfg.channels),
                ("embedding_length", cfg.d_model),
                ("block_count", cfg.n_layers),
                ("attention.head_count", cfg.n_heads),
                ("feed_forward_length", cfg.d_ff),
            ):
                writer.add_uint32(f"{ARCH}.{key}", value)
            writer.add_float32(f"{ARCH}.attention.layer_norm_epsilon", cfg.ln_eps)
            writer.add_array(f"{ARCH}.class_names", self.classes)
            for name, handle in self.session.params().items():
                writer.add_tensor(name, self.session.download(handle))
            writer.write_header_to_file()
            writer.write_kv_data_to_file()
            writer.write_tensors_to_file()


def load_vit(path, device: str = "cpu", threads: int | None = None, batch: int = 32) -> ViTTiny:
    """A ViT saved by ViTTiny.save (toy-train vit-tiny's model.gguf), ready to predict."""
    from ..formats.gguf_file import read_gguf

    reader = read_gguf(path)
    arch = reader.fields.get("general.architecture")
    if arch is None or arch.contents() != ARCH:
        found = arch.contents() if arch is not None else "none"
        raise InputError(f"{path} is not a toy ViT (general.architecture is {found}, not {ARCH})")

    def key(name):
        field = reader.fields.get(f"{ARCH}.{name}")
        if field is None:
            raise InputError(f"{path} lacks the key {ARCH}.{name}")
        return field.contents()

    cfg = ViTConfig(
        n_classes=key("class_count"),
        image_size=key("image_size"),
        patch=key("patch_size"),
        channels=key("channels"),
        d_model=key("embedding_length"),
        n_layers=key("block_count"),
        n_heads=key("attention.head_count"),
        d_ff=key("feed_forward_length"),
        ln_eps=key("attention.layer_norm_epsilon"),
    )
    model = ViTTiny(device, threads)
    model.realize(cfg, batch, classes=key("class_names"))
    tensors = {t.name: t for t in reader.tensors}
    for name, handle in model.session.params().items():
        tensor = tensors.get(name)
        want = model.session.info(handle).shape
        if tensor is None or tuple(np.asarray(tensor.data).shape) != want:
            raise InputError(f"{path}: tensor {name} is missing or not of shape {want}")
        model.session.upload(handle, np.asarray(tensor.data, dtype=np.float32))
    return model
