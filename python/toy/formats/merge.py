"""Merge a LoRA adapter into its base: W' = W + (alpha / rank) * B @ A, written
as a GGUF llama.cpp loads like any model.

The merged weights are written in F32, F16, or requantized to the base's own
type ("base"); tensors without an adapter are copied as stored. All metadata of
the base (tokenizer, chat template, hyper-parameters) is kept. The adapter is
read and checked by toy.formats.adapter.read_adapter, as toy-generate --adapter reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ..core.errors import InputError
from .adapter import read_adapter
from .gguf_file import read_gguf, writing_gguf

DTYPES = ("f32", "f16", "base")
_SKIP_KEYS = {"GGUF.version", "GGUF.tensor_count", "GGUF.kv_count", "general.architecture"}


def merge_lora(base_path, adapter_path, out_path, dtype: str = "f32") -> Path:
    """Write base + adapter as one GGUF at out_path (temp file, then rename).
    The adapter is checked against the base first (toy.formats.adapter.read_adapter);
    a merge whose weights overflow to infinity is refused and leaves no file."""
    if dtype not in DTYPES:
        raise InputError(f"dtype '{dtype}' is not one of {', '.join(DTYPES)}")
    adapter = read_adapter(adapter_path, base_path)
    base = read_gguf(base_path, "base ")
    return write_like_base(base, out_path, _Merged(base, adapter), dtype)


class _Merged(Mapping):
    """W + (alpha / rank) * B @ A by the base's tensor name, made when asked:
    the writer holds one merged weight at a time."""

    def __init__(self, base, adapter):
        self.stored = {t.name: t for t in base.tensors}
        self.adapter = adapter
        self.names = adapter.base_names()  # a fused weight (Phi-3's attn_qkv) once for its slots

    def __getitem__(self, name: str) -> np.ndarray:
        from gguf.quants import dequantize

        if name not in self.names:
            raise KeyError(name)
        tensor = self.stored[name]
        try:
            weight = dequantize(tensor.data, tensor.tensor_type).astype(np.float32)
        except NotImplementedError:
            raise InputError(
                f"the base's {name} is {tensor.tensor_type.name}, which toy cannot dequantize to merge into"
            ) from None
        with np.errstate(over="ignore", invalid="ignore"):  # refused below, without numpy's warning
            merged = weight + self.adapter.delta(name)
        if not np.isfinite(merged).all():
            raise InputError(
                f"merging {self.adapter.path} into {name} gives values that are not finite (its A and B are too large)"
            )
        return merged

    def __contains__(self, name) -> bool:  # without making the weight (Mapping's would)
        return name in self.names

    def __iter__(self):
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


def check_requantizable(base_path) -> None:
    """Refuse, before any work, a base whose matrix types gguf cannot requantize to."""
    import gguf
    from gguf.quants import quantize

    for tensor in read_gguf(base_path).tensors:
        if len(tensor.shape) < 2 or tensor.tensor_type in (
            gguf.GGMLQuantizationType.F32,
            gguf.GGMLQuantizationType.F16,
        ):
            continue
        try:
            quantize(np.zeros((1, 256), dtype=np.float32), tensor.tensor_type)
        except NotImplementedError:
            raise InputError(
                f"{tensor.name} is {tensor.tensor_type.name}, which toy cannot requantize to: write f32 or f16"
            ) from None


def write_like_base(base, out_path, weights, dtype: str = "f32") -> Path:
    """A GGUF with the metadata and tensor order of base (a gguf.GGUFReader),
    the F32 weights of `weights` (a mapping by tensor name, which may make
    each array only when asked) in place of the base's tensors of the same
    names, in F32, F16 or requantized to the base's type (dtype "base"); the
    other tensors copied as stored. The tensors are written one at a time, so
    at most one converted array is held. A weight the type cannot hold (past
    F16's 65504, or a quantized type's F16 scales) is refused, not written as
    infinity. Written to a temporary name, then renamed; a failure leaves no
    file."""
    if dtype not in DTYPES:
        raise InputError(f"dtype '{dtype}' is not one of {', '.join(DTYPES)}")
    out_path = Path(out_path)
    arch = base.fields["general.architecture"].contents()
    with writing_gguf(out_path, arch) as writer:
        for field in base.fields.values():
            if field.name in _SKIP_KEYS:
                continue
            sub_type = field.types[1] if len(field.types) > 1 else None
            value = field.contents()
            if field.name == "general.file_type" and dtype != "base":
                value = {"f32": 0, "f16": 1}[dtype]
            writer.add_key_value(field.name, value, field.types[0], sub_type=sub_type)
        for tensor in base.tensors:
            writer.add_tensor_info(tensor.name, *_planned(tensor, tensor.name in weights, dtype))
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_ti_data_to_file()
        for tensor in base.tensors:
            writer.write_tensor_data(_encoded(tensor, weights.get(tensor.name), dtype, out_path))
    return out_path


def _planned(tensor, replaced: bool, dtype: str):
    """(shape, numpy dtype, bytes, raw type) of what _encoded will make of tensor."""
    import gguf

    if not replaced:
        data = np.asarray(tensor.data)
        return data.shape, data.dtype, data.nbytes, tensor.tensor_type
    shape = tuple(int(n) for n in reversed(tensor.shape))  # numpy order
    count = int(np.prod(shape))
    if dtype == "f32" or len(shape) == 1:
        return shape, np.dtype(np.float32), 4 * count, None
    if dtype == "f16":
        return shape, np.dtype(np.float16), 2 * count, None
    byte_shape = gguf.quant_shape_to_byte_shape(shape, tensor.tensor_type)
    return byte_shape, np.dtype(np.uint8), int(np.prod(byte_shape)), tensor.tensor_type


def _encoded(tensor, weight, dtype: str, out_path: Path) -> np.ndarray:
    """The bytes to write for one tensor of the base: as stored, or weight
    converted (InputError when the weight does not fit the type)."""
    import gguf
    from gguf.quants import quantize

    if weight is None:
        return np.asarray(tensor.data)
    if dtype == "f32" or weight.ndim == 1:  # norms stay F32, as llama.cpp writes them
        return np.ascontiguousarray(weight, dtype=np.float32)
    kind = gguf.GGMLQuantizationType.F16 if dtype == "f16" else tensor.tensor_type
    # what overflows is refused by _check_fits, without numpy's warnings on stderr
    with np.errstate(over="ignore", invalid="ignore"):
        if dtype == "f16":
            encoded = weight.astype(np.float16)
        else:
            try:
                encoded = quantize(weight, kind)
            except NotImplementedError:
                raise InputError(f"requantizing to {kind.name} is not supported; write f32 or f16") from None
        _check_fits(encoded, kind, tensor.name, weight, out_path)
    return encoded


def _check_fits(encoded, kind, name: str, weight, out_path: Path) -> None:
    """InputError when weight overflowed on its way to kind: F16 holds up to
    65504, and the quantized types keep their block scales in F16 (BF16
    overflows only next to float32's own limit)."""
    import gguf
    from gguf.quants import dequantize

    back = encoded if kind == gguf.GGMLQuantizationType.F16 else dequantize(encoded, kind)
    if not np.isfinite(back).all():
        raise InputError(
            f"cannot write {out_path} as {kind.name}: {name} has values up to "
            f"{float(np.abs(weight).max()):.3g}, more than {kind.name} holds; write f32"
        )
