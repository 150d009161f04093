"""LoRA adapters read from GGUF files and checked against the base they adapt.

An adapter is as likely to come from the internet as from `toy-train lora`,
so it is hostile input. read_adapter is the one reader: toy-generate
--adapter (generate.load_model) and merge.merge_lora both go through it, and
it refuses in one line (InputError) what the C core would abort on, or
apply wrongly without a word:

    not a GGUF, truncated or corrupt  (gguf_file's checks: ggml parses it first)
    not an adapter                    general.type must be "adapter" and adapter.type
                                      "lora" (a model given as the adapter says so)
    another architecture              general.architecture, when the adapter has
                                      it, must be the base's
    alpha                             adapter.lora.alpha: present, a number, finite
                                      and > 0 in float32, as the C core holds it
                                      (1e39 is infinite there, 1e-50 zero)
    a tensor we do not adapt          names other than blk.<layer>.<weight>.weight
                                      .lora_a / .lora_b, <weight> one of SLOTS
    a layer the base does not have
    an A without its B, or a B without its A
    shapes                            A [d_in, rank], B [rank, d_out] in GGUF order
                                      ((rank, d_in) and (d_out, rank) in numpy's),
                                      d_in and d_out those of the base's weight; a
                                      mixture's experts (ffn_gate_exps, ...) a pair
                                      per expert, [d_in, rank, E] and [rank, d_out, E]
    rank                              1 <= rank <= min(d_in, d_out), the same in
                                      every pair (the C core has one rank)
    types                             F32, F16, BF16, F64 and the quantized types
                                      gguf can dequantize are read (to float32);
                                      integer types and the rest are refused
    values                            NaN or infinity in A or B (in float32: F64
                                      values beyond 3.4e38 are infinite there)

A base that stores weights fused (Phi-3: q, k, v as one attn_qkv, gate and
up as one ffn_up) is adapted under the fused names, as llama.cpp matches
them: toy writes its q/k/v (gate/up) slots as one pair per fused weight
(tinynn/session/save.c), and reads any such pair back split into the slots'
row ranges of B, each with the whole A, the columns of B that are zero in a
slot's rows (and A's matching rows) left out. llama.cpp scales each pair by
alpha / its own rank, so the pairs may differ in rank: each is padded with
zeros to the largest, its B scaled to keep its product.

Partial adapters are accepted, as llama.cpp accepts them: an adapter may
adapt a weight in some layers only, or different weights in different
layers. The session applies the union of the adapted weights in every layer,
so where the adapter has no pair, A and B are zeros (Adapter.session_pairs):
that weight is left as the base has it.

The base's shapes come from its config as tinynn reads it
(session.read_gguf_config, which also checks that every block tensor of the
base has exactly those shapes), so the checks cost no pass over the base's
tensors.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.config import ModelConfig
from ..core.errors import InputError, refusals_as_input_errors
from ..native.session import LORA_TARGETS, layer_targets, read_gguf_config
from .gguf_file import one_line, read_gguf, read_metadata

# the base weights an adapter may adapt (tinynn/models/block.c's SLOT_NAMES), by their
# GGUF name in a block -> the LoRA target (session.LORA_TARGETS) that adapts them
SLOTS = {
    "attn_q": "q",
    "attn_k": "k",
    "attn_v": "v",
    "attn_output": "o",
    "ffn_gate": "gate",
    "ffn_up": "up",
    "ffn_down": "down",
    "shortconv.in_proj": "conv_in",
    "shortconv.out_proj": "conv_out",
    "attn_qkv": "ssm_qkv",
    "attn_gate": "ssm_gate",
    "ssm_out": "ssm_out",
    "ssm_in": "ssm_in",
    "ffn_gate_exps": "gate_exps",
    "ffn_up_exps": "up_exps",
    "ffn_down_exps": "down_exps",
    "ffn_gate_shexp": "gate_shexp",
    "ffn_up_shexp": "up_shexp",
    "ffn_down_shexp": "down_shexp",
}
# the weights that are a stack of one matrix per expert (a pair per expert: A and B 3-D)
EXPERTS = ("ffn_gate_exps", "ffn_up_exps", "ffn_down_exps")
# weights a base may store fused (tnn_fused_weights), and the slots whose rows they stack, in order
FUSED = {"attn_qkv": ("attn_q", "attn_k", "attn_v"), "ffn_up": ("ffn_gate", "ffn_up")}
_TENSOR_NAME = re.compile(
    r"blk\.(0|[1-9][0-9]{0,8})\.(" + "|".join(map(re.escape, [*SLOTS, "attn_qkv"])) + r")\.weight\.lora_(a|b)"
)
_FORM = "blk.<layer>.<" + "|".join(SLOTS) + ">.weight.lora_a / .lora_b"


@dataclass
class Adapter:
    """A checked adapter: A and B as float32 arrays in numpy order."""

    path: Path
    alpha: float
    rank: int
    # "blk.3.attn_q.weight" -> (A (rank, d_in), B (d_out, rank)); an experts' stack's (E, rank, d_in), (E, d_out, rank)
    pairs: dict[str, tuple[np.ndarray, np.ndarray]]
    n_layers: int  # the base's
    base_config: ModelConfig  # the base's: which layers have which slots
    shapes: dict[str, tuple[int, ...]]  # "attn_q" -> the base weight's (d_out, d_in); (E, d_out, d_in) for experts
    fused: dict[str, tuple[str, ...]]  # the base's fused weights: "attn_qkv" -> ("attn_q", "attn_k", "attn_v")

    @property
    def targets(self) -> tuple[str, ...]:
        """The LoRA targets ("q", "down", ...) adapted in at least one layer, in the C core's order."""
        slots = {_layer_and_slot(name)[1] for name in self.pairs}
        return tuple(t for t in LORA_TARGETS if t in {SLOTS[s] for s in slots})

    def session_pairs(self):
        """(weight name, A, B) for every tensor pair a session realized with
        self.rank and self.targets holds: the adapter's, or zeros where it has
        none (B = 0 leaves the base's weight as it is)."""
        slots = [s for s, t in SLOTS.items() if t in self.targets]
        for layer in range(self.n_layers):
            for slot in slots:
                if not layer_has(self.base_config, layer, slot):
                    continue
                name = f"blk.{layer}.{slot}.weight"
                if name in self.pairs:
                    yield (name, *self.pairs[name])
                else:
                    *experts, d_out, d_in = self.shapes[slot]
                    a = np.zeros((*experts, self.rank, d_in), np.float32)
                    yield (name, a, np.zeros((*experts, d_out, self.rank), np.float32))

    def base_names(self) -> list[str]:
        """The base's tensors the adapter changes (a fused weight where one of its slots is adapted)."""
        names = []
        for name in self.pairs:
            layer, slot = _layer_and_slot(name)
            fused = next((f for f, slots in self.fused.items() if slot in slots), None)
            names.append(f"blk.{layer}.{fused}.weight" if fused else name)
        return list(dict.fromkeys(names))

    def delta(self, base_name: str) -> np.ndarray:
        """What the adapter adds to the base's tensor base_name: (alpha / rank) B A
        (each expert's, for a stack of experts), the slots' rows stacked (zeros
        for a slot without a pair) where it is fused."""
        layer, weight = _layer_and_slot(base_name)
        scale = self.alpha / self.rank
        parts = []
        for slot in self.fused.get(weight, (weight,)):
            name = f"blk.{layer}.{slot}.weight"
            if name in self.pairs:
                a, b = self.pairs[name]
                parts.append(scale * (b @ a))
            else:
                parts.append(np.zeros(self.shapes[slot], np.float32))
        return np.concatenate(parts) if len(parts) > 1 else parts[0]


def fused_weights(cfg) -> dict[str, tuple[str, ...]]:
    """The weights a base of config cfg stores fused, and their slots."""
    return {name: slots for name, slots in FUSED.items() if getattr(cfg, _FUSED_FLAG[name])}


_FUSED_FLAG = {"attn_qkv": "fused_qkv", "ffn_up": "fused_gate_up"}


def file_weight_shapes(cfg) -> dict[str, tuple[int, int]]:
    """The (d_out, d_in) of each weight an adapter file for a base of config
    cfg may adapt, by its name in the base: fused weights as the base stores them."""
    shapes = base_weight_shapes(cfg)
    for fused, slots in fused_weights(cfg).items():
        rows = sum(shapes[slot][0] for slot in slots)
        d_in = shapes[slots[0]][1]
        for slot in slots:
            shapes.pop(slot)
        shapes[fused] = (rows, d_in)
    return shapes


def base_weight_shapes(cfg) -> dict[str, tuple[int, int]]:
    """The (d_out, d_in) of each adaptable weight of a base of config cfg
    ((E, d_out, d_in) for a mixture's experts: tinynn/models/block.c's
    block_layout, in numpy order)."""
    d, ff = cfg.d_model, cfg.d_ff
    q, kv = cfg.n_heads * cfg.head_width, cfg.n_kv_heads * cfg.head_width
    keys, values = cfg.ssm_state * cfg.ssm_groups, cfg.ssm_state * cfg.ssm_heads
    inner = cfg.ssm_inner or values  # what ssm_out reads (Mamba-2's inner width)
    return {
        "attn_q": ((2 if cfg.attn_gate else 1) * q, d),  # Qwen 3.5's: each head's query and its gate
        "attn_k": (kv, d),
        "attn_v": (kv, d),
        "attn_output": (d, q),
        "ffn_gate": (ff, d),
        "ffn_up": (ff, d),
        "ffn_down": (d, ff),
        "shortconv.in_proj": (3 * d, d),
        "shortconv.out_proj": (d, d),
        # a delta-net layer's (Qwen 3.5); a fused attn_qkv (Phi-3) is fused_weights'
        "attn_qkv": (2 * keys + values, d),
        "attn_gate": (values, d),
        "ssm_out": (d, inner),
        # a Mamba-2 layer's (Granite 4): z, x, B, C, dt
        "ssm_in": (2 * inner + 2 * keys + cfg.ssm_heads, d),
        # a mixture's shared expert (Qwen 3.5 MoE)
        "ffn_gate_shexp": (cfg.d_ff_shexp, d),
        "ffn_up_shexp": (cfg.d_ff_shexp, d),
        "ffn_down_shexp": (d, cfg.d_ff_shexp),
    } | _expert_shapes(cfg)


def _expert_shapes(cfg) -> dict[str, tuple[int, int, int]]:
    """A mixture's experts' (E, d_out, d_in), or none for a dense base."""
    if cfg.n_experts == 0:
        return {}
    d, ff, n = cfg.d_model, cfg.d_ff_exp, cfg.n_experts
    return {"ffn_gate_exps": (n, ff, d), "ffn_up_exps": (n, ff, d), "ffn_down_exps": (n, d, ff)}


def layer_has(cfg, layer: int, slot: str) -> bool:
    """Whether the base's layer has the weight slot (an LFM2 short-convolution
    layer has no attention weights, an attention layer no convolution), as
    the C core binds it; a fused attn_qkv (Phi-3) is an attention layer's."""
    targets = layer_targets(cfg)[layer]
    return "q" in targets if slot == "attn_qkv" and cfg.fused_qkv else SLOTS[slot] in targets


def read_adapter(adapter_path, base_path) -> Adapter:
    """The adapter at adapter_path, checked against the base GGUF at
    base_path (see the module's docstring); InputError in one line otherwise."""
    path = Path(adapter_path)
    with refusals_as_input_errors():
        cfg = read_gguf_config(base_path)
    meta = read_metadata(path, "adapter ")
    alpha = _check_metadata(path, meta, base_path)
    reader = read_gguf(path, "adapter ")
    shapes, fused = base_weight_shapes(cfg), fused_weights(cfg)
    file_shapes = file_weight_shapes(cfg)
    found: dict[str, dict[str, np.ndarray]] = {}  # weight -> {"a": A, "b": B}
    for tensor in reader.tensors:
        weight, which, array = _checked_tensor(path, tensor, cfg.n_layers, file_shapes)
        layer, slot = _layer_and_slot(weight)
        if not layer_has(cfg, layer, slot):
            raise InputError(f"adapter {path}: {weight} adapts {slot}, which layer {layer} of the base does not have")
        found.setdefault(weight, {})[which] = array
    if not found:
        raise InputError(f"adapter {path} holds no LoRA tensors")
    pairs, rank, first = {}, None, None
    for weight, ab in found.items():
        for have, lack in (("a", "b"), ("b", "a")):
            if lack not in ab:
                raise InputError(f"adapter {path}: {weight}.lora_{have} has no {weight}.lora_{lack}")
        a, b = ab["a"], ab["b"]
        if a.shape[-2] != b.shape[-1]:
            raise InputError(
                f"adapter {path}: {weight}.lora_a has rank {a.shape[-2]} and its "
                f".lora_b rank {b.shape[-1]} (A is [d_in, rank], B [rank, d_out])"
            )
        if fused:
            continue  # ranks may differ (below)
        if rank is None:
            rank, first = a.shape[-2], weight
        elif a.shape[-2] != rank:
            raise InputError(
                f"adapter {path}: {weight} has rank {a.shape[-2]} and {first} rank "
                f"{rank}: toy applies one rank to every pair"
            )
        pairs[weight] = (a, b)
    if fused:
        pairs, rank = _split_fused(found, fused, shapes)
        if not pairs:
            raise InputError(f"adapter {path} holds only zeros (every lora_b is zero)")
    return Adapter(path, alpha, rank, pairs, cfg.n_layers, cfg, shapes, fused)


def _layer_and_slot(weight: str) -> tuple[int, str]:
    """ "blk.3.shortconv.in_proj.weight" -> (3, "shortconv.in_proj")."""
    _, layer, rest = weight.split(".", 2)
    return int(layer), rest.removesuffix(".weight")


def _split_fused(found, fused, shapes) -> tuple[dict, int]:
    """The file's pairs over a base with fused weights as the session's
    per-slot pairs of one rank, each pair's product (alpha / its rank) B A
    kept: a fused pair split into its slots' rows of B (each with the whole
    A, less the columns of B that are zero in those rows), then every pair
    padded with zeros to the largest rank and its B scaled by that rank over
    its file pair's."""
    split = {}  # slot weight -> (A, B, the rank of the file's pair)
    for weight, ab in found.items():
        layer, name = _layer_and_slot(weight)
        a, b = ab["a"], ab["b"]
        first = 0
        for slot in fused.get(name, (name,)):
            rows = b[first : first + shapes[slot][0]]
            first += shapes[slot][0]
            used = np.flatnonzero(np.any(rows != 0, axis=0))
            if used.size:
                split[f"blk.{layer}.{slot}.weight"] = (a[used], rows[:, used], a.shape[0])
    rank = max((a.shape[0] for a, _, _ in split.values()), default=0)
    pairs = {}
    for weight, (a, b, file_rank) in split.items():
        padded_a = np.zeros((rank, a.shape[1]), np.float32)
        padded_b = np.zeros((b.shape[0], rank), np.float32)
        padded_a[: a.shape[0]] = a
        padded_b[:, : b.shape[1]] = b * np.float32(rank / file_rank)
        pairs[weight] = (padded_a, padded_b)
    return pairs, rank


def _check_metadata(path: Path, meta: dict, base_path) -> float:
    """The adapter's alpha, once its type and architecture are those of a
    LoRA adapter for the base."""
    kind, lora = meta.get("general.type"), meta.get("adapter.type")
    if kind != "adapter" or lora != "lora":
        if kind == "model":
            raise InputError(f"{path} is a model (general.type 'model'), not a LoRA adapter")
        raise InputError(
            f"{path} is not a LoRA adapter (general.type {_shown(kind)}, adapter.type "
            f"{_shown(lora)}; an adapter has 'adapter' and 'lora')"
        )
    arch = meta.get("general.architecture")
    if arch is not None:
        base_arch = _architecture(base_path)
        if arch != base_arch:
            raise InputError(
                f"adapter {path} is for the architecture {_shown(arch)} and the base {base_path} is {_shown(base_arch)}"
            )
    if "adapter.lora.alpha" not in meta:
        raise InputError(f"adapter {path} has no adapter.lora.alpha")
    alpha = meta["adapter.lora.alpha"]
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise InputError(f"adapter {path}: adapter.lora.alpha is {_shown(alpha)}, not a number")
    with np.errstate(over="ignore"):  # 1e39 becomes inf, refused below (numpy would warn on stderr)
        held = np.float32(alpha)  # the value the C core applies: 1e-50 is 0 there
    if not (math.isfinite(held) and held > 0):
        raise InputError(
            f"adapter {path}: adapter.lora.alpha is {alpha}; it must be > 0 and finite "
            "in float32, as the C core holds it (1e39 is infinite there, 1e-50 zero)"
        )
    return float(held)


def _checked_tensor(path: Path, tensor, n_layers: int, shapes) -> tuple[str, str, np.ndarray]:
    """(base weight name, "a" or "b", the values as float32 in numpy order)
    of one of the adapter's tensors, checked alone."""
    import gguf
    from gguf.quants import dequantize

    name = str(tensor.name)
    match = _TENSOR_NAME.fullmatch(name)
    if match is None:
        raise InputError(
            f"adapter {path} has a tensor {_shown(name)} that toy does not adapt (LoRA tensors are named {_FORM})"
        )
    layer, slot, which = int(match[1]), match[2], match[3]
    if layer >= n_layers:
        raise InputError(
            f"adapter {path}: {name} is for layer {layer}, and the base has {n_layers} layers (0 to {n_layers - 1})"
        )
    if slot not in shapes:  # attn_qkv over a base with separate q, k, v, or attn_q over a fused one
        if slot in EXPERTS:
            raise InputError(f"adapter {path}: {name} adapts {slot}, and the base has no experts")
        if slot in FUSED:
            stored = f"{', '.join(FUSED[slot])} apart"
        else:
            stored = next(f"{', '.join(slots)} as one {f}" for f, slots in FUSED.items() if slot in slots)
        raise InputError(f"adapter {path}: {name} adapts {slot}, and the base stores {stored}")
    *experts, d_out, d_in = shapes[slot]  # experts: [E] for a stack of experts, else []
    ne = [int(n) for n in tensor.shape]  # GGUF order: ne[0] first
    want = [d_in, "rank", *experts] if which == "a" else ["rank", d_out, *experts]
    free = 1 if which == "a" else 0  # where the rank is
    base_shape = ", ".join(map(str, [d_in, d_out, *experts]))
    if len(ne) != len(want) or any(n != w for i, (n, w) in enumerate(zip(ne, want)) if i != free):
        raise InputError(
            f"adapter {path}: {name} has the shape {ne}; the base's {slot}.weight "
            f"[{base_shape}] takes [{', '.join(map(str, want))}]"
        )
    if not 1 <= ne[free] <= min(d_in, d_out):  # checked before converting: bounds the memory
        raise InputError(
            f"adapter {path}: {name} has rank {ne[free]}; the base's {slot}.weight "
            f"[{base_shape}] takes a rank from 1 to {min(d_in, d_out)}"
        )
    kind = tensor.tensor_type
    integer = {
        gguf.GGMLQuantizationType.I8,
        gguf.GGMLQuantizationType.I16,
        gguf.GGMLQuantizationType.I32,
        gguf.GGMLQuantizationType.I64,
    }
    try:
        if kind in integer:
            raise NotImplementedError
        # F64 beyond float32 becomes inf, and a quantized block's inf scale NaN: refused below,
        # where numpy would warn on stderr first
        with np.errstate(over="ignore", invalid="ignore"):
            if kind in (gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16, gguf.GGMLQuantizationType.F64):
                array = np.asarray(tensor.data, dtype=np.float32)
            else:  # BF16 and the quantized types
                array = dequantize(tensor.data, kind).astype(np.float32)
    except NotImplementedError:
        raise InputError(
            f"adapter {path}: {name} is of type {kind.name}, which toy does not read "
            "(F32, F16, BF16 or a quantized type gguf dequantizes)"
        ) from None
    array = np.ascontiguousarray(array.reshape(ne[::-1]))
    if not np.isfinite(array).all():
        raise InputError(
            f"adapter {path}: {name} holds NaN or infinite values (in float32, as toy "
            "applies them): the adapter is damaged, or its training diverged"
        )
    return f"blk.{layer}.{slot}.weight", which, array


def _architecture(gguf_path) -> str | None:
    """A GGUF's general.architecture, the walk of its key/values stopped there."""
    value = read_metadata(gguf_path, "base ", until=lambda key, _: key == "general.architecture").get(
        "general.architecture"
    )
    return value if isinstance(value, str) else None


def _shown(value) -> str:
    """A value read from the file, quoted and on one line."""
    return one_line(repr(value), 80)
