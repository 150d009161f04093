"""Reading a donor model's token embedding from a llama GGUF, for warm starts.

Every failure names the file, the tensor or key, and what was expected.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.errors import InputError
from .gguf_file import read_gguf


def _reader(path):
    path = Path(path)
    if not path.is_file():
        raise InputError(f"donor file not found: {path} (give an existing --donor PATH)")
    return read_gguf(path, "donor ")


def donor_embed_width(path) -> int:
    """llama.embedding_length of a donor GGUF."""
    field = _reader(path).fields.get("llama.embedding_length")
    if field is None:
        raise InputError(f"donor {path} has no llama.embedding_length: not a llama-family model")
    return int(field.contents())


def donor_embedding(path, d_in: int, vocab: int) -> np.ndarray:
    """The first `vocab` rows of the donor's token_embd.weight as float32 [vocab, d_in]."""
    from gguf.quants import dequantize

    reader = _reader(path)
    field = reader.fields.get("llama.embedding_length")
    if field is None:
        raise InputError(f"donor {path} has no llama.embedding_length: not a llama-family model")
    width = int(field.contents())
    if width != d_in:
        raise InputError(f"donor {path}: llama.embedding_length is {width}, expected {d_in} (the model's donor_d_in)")
    tensor = next((t for t in reader.tensors if t.name == "token_embd.weight"), None)
    if tensor is None:
        raise InputError(f"donor {path} has no tensor token_embd.weight")
    rows = int(tensor.shape[1]) if len(tensor.shape) > 1 else 0
    if int(tensor.shape[0]) != width:
        raise InputError(
            f"donor {path}: token_embd.weight is {int(tensor.shape[0])} wide, llama.embedding_length says {width}"
        )
    if rows < vocab:
        raise InputError(f"donor {path}: token_embd.weight has {rows} rows, fewer than the model's vocab of {vocab}")
    try:
        table = dequantize(tensor.data, tensor.tensor_type)
    except (NotImplementedError, ValueError) as err:
        raise InputError(f"donor {path}: cannot read token_embd.weight ({tensor.tensor_type.name}): {err}") from None
    return np.ascontiguousarray(table[:vocab], dtype=np.float32)


def pca_lens(embedding: np.ndarray, d_model: int) -> np.ndarray:
    """A lens [d_model, d_in] (numpy layout) onto the embedding's top d_model
    principal directions, so that the projected table keeps the most variance."""
    centered = embedding.astype(np.float64) - embedding.mean(axis=0)
    covariance = centered.T @ centered / max(len(centered) - 1, 1)  # [d_in, d_in]
    values, vectors = np.linalg.eigh(covariance)  # ascending
    top = vectors[:, ::-1][:, :d_model]  # [d_in, d_model]
    # a deterministic sign per direction: its largest component positive
    signs = np.sign(top[np.abs(top).argmax(axis=0), np.arange(top.shape[1])])
    return np.ascontiguousarray((top * signs).T, dtype=np.float32)
