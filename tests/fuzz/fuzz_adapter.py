"""LoRA adapter GGUFs as fuzz input: an adapter is as likely to be downloaded
as made by toy-train, so whatever it holds must end in a generation (or a
merge), or in one line saying what is wrong with the file.

Each case writes a valid adapter for a tiny llama base (a random subset of
the weights and layers, a random rank and alpha) and changes one to three
things in it:

    names       another tensor (token_embd, a norm), a layer the base lacks,
                A without B, odd suffixes, unicode, very long, duplicated
    shapes      swapped, another rank (in one half, one pair or all), zero,
                larger than the base allows, huge in the header, 1-D and 3-D
    types       F16, BF16, F64, Q8_0, Q4_0, integer types, unknown numbers
    alpha       missing, a string, an array, a bool, an int, <= 0, NaN,
                infinite, finite in float64 only (1e39)
    metadata    general.type, adapter.type, general.architecture wrong or
                missing; a key twice; general.alignment
    values      NaN, infinity, 1e38 in A or B, 1e300 in an F64 one
    the file    truncated, a few bytes flipped, replaced by the base itself,
                empty, or without tensors

and feeds it to the two users of toy.formats.adapter.read_adapter:

    toy-generate --model BASE --adapter ADAPTER   (a command: exit 0 or exit 2
                                                  with one line)
    toy.formats.merge.merge_lora(BASE, ADAPTER, OUT, dtype) with dtype f32, f16 or base
                                                  (a callable: returns or
                                                  raises a one-line ToyError)

The merge is also held to what it promises: a refused merge leaves no file
behind, and a merge that succeeds writes a GGUF toy reads back with finite
weights. A callable fails on any Python warning too: toy-train lora --merge
would print it on stderr beside its one line (the harness counts the lines
of a command). When every change made to a case keeps the adapter valid (F16
or Q8_0 halves, an integer alpha, a pair left out), the case must succeed: a
valid adapter refused is a failure too.

Not seen here: what ggml's own GGUF parser prints on the process's stderr
(fd 2, below Python's sys.stderr) when it refuses a file.

    cd tests && python -m fuzz.harness fuzz.fuzz_adapter --cases 100 -v
"""

from __future__ import annotations

import atexit
import os
import shutil
import struct
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the fixtures

import gguf  # noqa: E402

import reference_llama as ref  # noqa: E402
from fuzz.gguf_mutate import parse_layout, set_shape  # noqa: E402
from gguf_fixtures import tiny_tokenizer, write_llama_gguf  # noqa: E402

NAME = "adapter"

Q = gguf.GGMLQuantizationType
V = gguf.GGUFValueType

# the base: two layers, so that "a layer the base lacks" and partial adapters
# both mean something; GQA, so that attn_k/attn_v differ from attn_q; two
# quantized weights, so that merging with dtype "base" requantizes
BASE_CFG = ref.Config(vocab=300, d_model=32, n_layers=2, n_heads=2, n_kv_heads=1, d_ff=64, untied=True)
BASE_TYPES = {"blk.0.attn_q.weight": Q.Q8_0, "blk.1.ffn_down.weight": Q.Q4_1}
# numpy (d_out, d_in) of each weight an adapter may adapt (toy.formats.adapter.base_weight_shapes)
_D, _KV, _FF = BASE_CFG.d_model, BASE_CFG.n_kv_heads * BASE_CFG.head_dim, BASE_CFG.d_ff
SHAPES = {
    "attn_q": (_D, _D),
    "attn_k": (_KV, _D),
    "attn_v": (_KV, _D),
    "attn_output": (_D, _D),
    "ffn_gate": (_FF, _D),
    "ffn_up": (_FF, _D),
    "ffn_down": (_D, _FF),
}
MAX_RANK = min(min(s) for s in SHAPES.values())  # 16: the largest rank every weight takes

_BASE: Path | None = None


def base_path() -> Path:
    """The tiny base, written once per worker process (the cases run one
    after another in a long-lived child)."""
    global _BASE
    if _BASE is None:
        folder = Path(tempfile.mkdtemp(prefix="toy-fuzz-adapter-base-"))
        atexit.register(shutil.rmtree, folder, True)
        params = ref.init_params(BASE_CFG, np.random.default_rng(0), scale=0.3)
        _BASE = write_llama_gguf(
            folder / "base.gguf", params, BASE_CFG, types=BASE_TYPES, tokenizer=tiny_tokenizer(BASE_CFG.vocab)
        )
    return _BASE


# ---- a draft of an adapter, and its file ------------------------------------------


@dataclass
class Draft:
    """What the adapter file will hold; the mutations edit it before it is
    written, or add byte-level edits made to the written file."""

    meta: dict  # key -> (value, GGUFValueType, array element type or None)
    tensors: list  # [name, numpy array, GGML type or None (the array's own)]
    header_edits: list = field(default_factory=list)  # fn(bytearray, Layout): the file still parses
    damage: list = field(default_factory=list)  # fn(bytearray, where the data starts): applied last
    replaced_by: Path | None = None  # another file written in place of the adapter
    valid: bool = True  # every change keeps an adapter toy must accept
    done: list = field(default_factory=list)  # what the mutations did, for the case's name


def valid_draft(rng) -> Draft:
    """A LoRA adapter for the base: some weights, in some layers, one rank."""
    nrng = np.random.default_rng(rng.getrandbits(32))
    rank = rng.choice([1, 2, 4, 8, MAX_RANK])
    slots = rng.sample(list(SHAPES), rng.randint(1, len(SHAPES)))
    tensors = []
    for layer in range(BASE_CFG.n_layers):
        for slot in slots:
            if rng.random() < 0.25:  # partial adapters are valid, as in llama.cpp
                continue
            d_out, d_in = SHAPES[slot]
            name = f"blk.{layer}.{slot}.weight"
            tensors.append([name + ".lora_a", nrng.normal(0, 0.1, (rank, d_in)).astype(np.float32), None])
            tensors.append([name + ".lora_b", nrng.normal(0, 0.1, (d_out, rank)).astype(np.float32), None])
    if not tensors:
        d_out, d_in = SHAPES[slots[0]]
        tensors = [
            [f"blk.0.{slots[0]}.weight.lora_a", np.full((rank, d_in), 0.1, np.float32), None],
            [f"blk.0.{slots[0]}.weight.lora_b", np.full((d_out, rank), 0.1, np.float32), None],
        ]
    meta = {
        "general.architecture": ("llama", V.STRING, None),
        "general.type": ("adapter", V.STRING, None),
        "adapter.type": ("lora", V.STRING, None),
        "adapter.lora.alpha": (float(rng.choice([1, 8, 16, 32])), V.FLOAT32, None),
    }
    return Draft(meta, tensors)


def write(draft: Draft, path: Path) -> Path:
    """The draft as a GGUF at path: written by GGUFWriter, then edited in its bytes."""
    if draft.replaced_by is not None:
        shutil.copyfile(draft.replaced_by, path)
        return path
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.kv_data[0].clear()  # the architecture is in draft.meta, or deliberately not
    for key, (value, vtype, sub) in draft.meta.items():
        writer.add_key_value(key, value, vtype, sub_type=sub)
    # GGUFWriter refuses a name twice: the second is written as a stand-in of
    # the same length and renamed in the bytes
    renames, seen = {}, set()
    for name, array, raw in draft.tensors:
        written = name
        if name in seen:
            written = _stand_in(name, seen)
            if written is None:  # "" twice: no name of the same length stands in for it
                continue
            renames[written] = name
        seen.add(written)
        writer.add_tensor(written, array, raw_dtype=raw)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    buf = bytearray(path.read_bytes())
    for stand_in, name in renames.items():
        at, n = next(t["name"] for t in _layout(buf).tensors if t["name_bytes"] == stand_in.encode())
        buf[at : at + n] = name.encode()
    for edit in draft.header_edits:
        edit(buf, _layout(buf))
    data_start = _layout(buf).data_start
    for edit in draft.damage:
        edit(buf, data_start)
    path.write_bytes(bytes(buf))
    return path


def _layout(buf: bytearray):
    """Where the fields of the file lie (parse_layout), the data aligned to
    32 bytes as GGUFWriter wrote it whatever general.alignment says."""
    return parse_layout(bytes(buf).replace(b"general.alignment", b"general.alignmenu"))


def _stand_in(name: str, taken: set) -> str | None:
    """A name of the same length in bytes as name, not yet taken."""
    n = len(name.encode())
    return next((c * n for c in "xyzwvutsrq" if c * n not in taken), None) if n else None


# ---- mutations: each edits the draft and returns whether it is still valid --------


def _floats(t) -> np.ndarray:
    """The tensor's values as float32 in their logical shape (a quantized
    tensor is held as its bytes); the tensor is made float32 from now on."""
    with np.errstate(over="ignore", invalid="ignore"):  # an F64 1e300 becomes inf, quietly
        if t[2] is not None:
            t[1], t[2] = gguf.quants.dequantize(t[1], t[2]).astype(np.float32), None
        elif t[1].dtype != np.float32:
            t[1] = t[1].astype(np.float32)
    return t[1]


def _pick(rng, draft):
    """One of the draft's tensors."""
    return rng.choice(draft.tensors)


def _pairs(draft) -> list[str]:
    return sorted({t[0][: -len(".lora_a")] for t in draft.tensors if t[0].endswith((".lora_a", ".lora_b"))})


OTHER_TENSORS = [
    "token_embd.weight",
    "output.weight",
    "output_norm.weight",
    "blk.0.attn_norm.weight",
    "blk.0.ffn_norm.weight",
    "blk.0.attn_q.bias",
    "blk.0.attn_qkv.weight",
    "rope_freqs.weight",
]
LAYERS = [
    "2",
    "3",
    "99",
    "999999999",
    "1000000000",
    "4294967296",
    "99999999999999999999",
    "-1",
    "01",
    "00",
    "٠",
    "１",
    " 0",
    "0x0",
    "",
    "+1",
]
SUFFIXES = [
    ".lora_A",
    ".lora_B",
    ".lora_a.weight",
    ".lora_ab",
    ".lora",
    ".lora_c",
    ".lora_a\x00",
    ".lora_a ",
    ".lora_a\n",
    ".lora_",
    "",
    ".weight",
    ".lora_а",
    ".lora_b.lora_a",
]


def m_name_other_tensor(rng, draft):
    """An A and B pair for a tensor toy does not adapt."""
    t = _pick(rng, draft)
    which = t[0][-1] if t[0][-7:-1] == ".lora_" else rng.choice("ab")
    t[0] = f"{rng.choice(OTHER_TENSORS)}.lora_{which}"
    return False


def m_name_layer(rng, draft):
    """A layer the base does not have, or a layer number written oddly."""
    t = _pick(rng, draft)
    parts = t[0].split(".")
    if len(parts) < 2:  # a name an earlier mutation left without one
        parts = ["blk", "0", *parts]
    parts[1] = rng.choice(LAYERS)
    t[0] = ".".join(parts)
    return False


def m_name_half(rng, draft):
    """One half of a pair left out (or renamed to the other half: A twice)."""
    t = _pick(rng, draft)
    if rng.random() < 0.7:
        draft.tensors.remove(t)
    else:
        t[0] = t[0][:-1] + ("b" if t[0].endswith("a") else "a")
    return False


def m_name_pair_out(rng, draft):
    """A whole pair left out: still valid while one pair remains."""
    pair = rng.choice(_pairs(draft) or [""])
    draft.tensors = [t for t in draft.tensors if not t[0].startswith(pair + ".lora_")]
    return bool(draft.tensors)


def m_name_suffix(rng, draft):
    t = _pick(rng, draft)
    stem = t[0].rsplit(".", 1)[0] if t[0].count(".") > 1 else t[0]
    t[0] = stem + rng.choice(SUFFIXES)
    return False


def m_name_unicode(rng, draft):
    """Unicode where the name has ASCII: homoglyphs, accents, a zero-width space."""
    t = _pick(rng, draft)
    at = rng.randrange(len(t[0]) + 1)
    t[0] = t[0][:at] + rng.choice(["а", "é", "\u200b", "ǉ", "🙂", "\ufeff", "ı"]) + t[0][at + 1 :]
    return False


def m_name_long(rng, draft):
    """Names about ggml's limit (63 bytes) and far past it."""
    t = _pick(rng, draft)
    n = rng.choice([63, 64, 65, 200, 5000])
    if rng.random() < 0.5:
        t[0] = (t[0] + "." + "x" * n)[:n]  # the name itself, padded to n bytes
    else:
        t[0] = "blk.0." + "y" * n + ".weight.lora_a"
    return False


def m_name_empty(rng, draft):
    _pick(rng, draft)[0] = ""
    return False


def m_name_duplicate(rng, draft):
    """A tensor twice under one name (as itself, or with another shape)."""
    t = _pick(rng, draft)
    a = _floats(t)
    array = a if rng.random() < 0.5 else np.zeros((a.shape[0] + 1,) + a.shape[1:], np.float32)
    draft.tensors.insert(rng.randrange(len(draft.tensors) + 1), [t[0], array, None])
    return False


def m_shape_swap(rng, draft):
    t = _pick(rng, draft)
    t[1] = np.ascontiguousarray(_floats(t).T)
    return False


def m_shape_rank(rng, draft):
    """Another rank in one half, in one pair, or in every pair (then still
    valid, when the base's weights all take it)."""
    scope = rng.choice(["half", "pair", "all"])
    rank = rng.choice([1, 3, 5, 8, MAX_RANK, MAX_RANK + 1, 32, 33, 64, 65, 200])
    nrng = np.random.default_rng(rng.getrandbits(32))
    pick = _pick(rng, draft)
    pair = pick[0][:-1] if pick[0][-7:-1] == ".lora_" else pick[0]
    for t in draft.tensors:
        if scope == "half" and t is not pick or scope == "pair" and not t[0].startswith(pair):
            continue
        a, values = t[0].endswith(".lora_a"), _floats(t)
        d_out, d_in = values.shape if values.ndim == 2 else (1, 1)
        t[1] = nrng.normal(0, 0.1, (rank, d_in) if a else (d_out, rank)).astype(np.float32)
    return scope == "all" and rank <= MAX_RANK


def m_shape_zero(rng, draft):
    t = _pick(rng, draft)
    shape = list(_floats(t).shape) or [0]
    shape[rng.randrange(len(shape))] = 0
    t[1] = np.zeros(shape, np.float32)
    return False


def m_shape_dims(rng, draft):
    """1-D, 3-D, 4-D or 5-D (ggml has 4)."""
    t = _pick(rng, draft)
    a = _floats(t)
    form = rng.choice(["flat", "1x", "x1", "4d", "5d"])
    t[1] = {
        "flat": lambda: a.reshape(-1),
        "1x": lambda: a.reshape((1,) + a.shape),
        "x1": lambda: a.reshape(a.shape + (1,)),
        "4d": lambda: a.reshape((1, 1) + a.shape),
        "5d": lambda: a.reshape((1, 1, 1) + a.shape),
    }[form]()
    return False


def m_shape_other_weight(rng, draft):
    """A and B shaped for another weight of the base (d_in or d_out wrong)."""
    t = _pick(rng, draft)
    d_out, d_in = rng.choice(list(SHAPES.values()))
    now = _floats(t).shape
    rank = now[0] if t[0].endswith("a") else now[-1]
    shape = (rank, d_in) if t[0].endswith("a") else (d_out, rank)
    valid = shape == now
    t[1] = np.full(shape, 0.01, np.float32)
    return valid


def _written(lay, draft, t):
    """Where tensor t of the draft lies in the written file (None when a
    later mutation removed it): the file holds the draft's tensors in order."""
    at = next((i for i, other in enumerate(draft.tensors) if other is t), None)
    return None if at is None else lay.tensors[at]


def m_shape_huge_header(rng, draft):
    """A dimension in the header too large for the file (the data is not there)."""
    t = _pick(rng, draft)
    value = rng.choice([1 << 31, 1 << 32, 1 << 40, (1 << 62), (1 << 63) - 1, -1, -(1 << 63), 0])
    dim = rng.randrange(2)

    def edit(buf, lay):
        tensor = _written(lay, draft, t)
        if tensor is None:
            return
        ne = [struct.unpack_from("<q", buf, n.offset)[0] for n in tensor["ne"]]
        ne[min(dim, len(ne) - 1)] = value
        set_shape(buf, lay, tensor, ne)

    draft.header_edits.append(edit)
    return False


def m_type(rng, draft):
    """A or B stored as another type. F16, BF16, F64 and Q8_0/Q4_0 (where
    the row fits the block) are read; the integer types are refused."""
    t = _pick(rng, draft)
    a = _floats(t)
    kind = rng.choice(["F16", "BF16", "F64", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "I8", "I16", "I32", "I64"])
    if kind == "F16":
        t[1] = a.astype(np.float16)
    elif kind == "F64":
        t[1] = a.astype(np.float64)
    elif kind.startswith("I"):
        t[1] = (a * 100).astype({"I8": np.int8, "I16": np.int16, "I32": np.int32, "I64": np.int64}[kind])
        return False
    else:
        qtype = Q[kind]
        block, _ = gguf.GGML_QUANT_SIZES[qtype]
        if a.ndim == 0 or a.shape[-1] % block:  # the row does not fit the block: stays F32
            return True
        t[1], t[2] = gguf.quants.quantize(a, qtype), qtype
    return np.isfinite(a).all()


def m_type_number(rng, draft):
    """A type number in the header: one ggml does not know, or F32 <-> I32
    and F16 <-> BF16 (the data still adds up)."""
    t = _pick(rng, draft)
    value = rng.choice([4, 5, 26, 40, 41, 255, 1 << 31, 0xFFFFFFFF])

    def edit(buf, lay):
        tensor = _written(lay, draft, t)
        if tensor is not None:
            struct.pack_into("<I", buf, tensor["type"].offset, value)

    draft.header_edits.append(edit)
    return False


ALPHAS = [  # (value, its GGUF type, whether toy must accept it)
    (16.0, V.FLOAT32, True),
    (0.5, V.FLOAT64, True),
    (16, V.UINT32, True),
    (8, V.INT32, True),
    (1, V.UINT8, True),
    (32, V.INT64, True),
    ("16", V.STRING, False),
    ([16.0], V.ARRAY, False),
    ([16.0, 8.0], V.ARRAY, False),
    (True, V.BOOL, False),
    (False, V.BOOL, False),
    (-16.0, V.FLOAT32, False),
    (0.0, V.FLOAT32, False),
    (-0.0, V.FLOAT32, False),
    (0, V.UINT32, False),
    (-1, V.INT32, False),
    (float("nan"), V.FLOAT32, False),
    (float("inf"), V.FLOAT32, False),
    (float("-inf"), V.FLOAT64, False),
    (1e39, V.FLOAT64, False),
    (1e-50, V.FLOAT64, False),
    (1e-45, V.FLOAT32, False),
    (3e38, V.FLOAT32, False),
    ((1 << 64) - 1, V.UINT64, False),
    (-(1 << 63), V.INT64, False),
]


def m_alpha(rng, draft):
    if rng.random() < 0.15:
        draft.meta.pop("adapter.lora.alpha", None)
        return False
    value, vtype, valid = rng.choice(ALPHAS)
    sub = V.FLOAT32 if vtype == V.ARRAY else None
    draft.meta["adapter.lora.alpha"] = (value, vtype, sub)
    return valid


META = {
    "general.type": ["model", "Adapter", "adapter ", "", "lora", "adapter\x00", 7, ["adapter"]],
    "adapter.type": ["LoRA", "lora ", "ia3", "", "adapter", 1, ["lora"]],
    "general.architecture": ["gpt2", "qwen2", "gemma3", "", "llama\x00x", "LLAMA", 5, ["llama"]],
}


def m_metadata(rng, draft):
    """general.type, adapter.type or the architecture wrong or missing (an
    adapter without an architecture is still valid)."""
    key = rng.choice(list(META))
    if rng.random() < 0.3:
        draft.meta.pop(key, None)
        return key == "general.architecture"
    value = rng.choice(META[key])
    if isinstance(value, list):
        draft.meta[key] = (value, V.ARRAY, V.STRING)
    elif isinstance(value, int):
        draft.meta[key] = (value, V.UINT32, None)
    else:
        draft.meta[key] = (value, V.STRING, None)
    return False


def m_metadata_extra(rng, draft):
    """Keys toy does not read (valid), general.alignment (changes where the
    data lies), or a key written twice."""
    roll = rng.random()
    if roll < 0.4:
        key = rng.choice(["adapter.lora.rank", "general.name", "adapter.lora.dropout"])
        draft.meta[key] = rng.choice(
            [(8, V.UINT32, None), ("x" * 1000, V.STRING, None), (list(range(100)), V.ARRAY, V.INT32)]
        )
        return True
    if roll < 0.7:
        draft.meta["general.alignment"] = (rng.choice([0, 1, 3, 64, 1 << 31]), V.UINT32, None)
        return False
    # "general.typf" (a key of the same length) becomes a second general.type in the bytes
    key = rng.choice(["general.type", "adapter.type", "adapter.lora.alpha"])
    twin = key[:-1] + chr(ord(key[-1]) + 1)
    draft.meta[twin] = rng.choice([("model", V.STRING, None), (4.0, V.FLOAT32, None)])

    def edit(buf, lay):
        for at, n, role in lay.strings:
            if role == "key" and bytes(buf[at : at + n]) == twin.encode():
                buf[at : at + n] = key.encode()

    draft.header_edits.append(edit)
    return False


def m_values(rng, draft):
    """NaN, infinity or values near float32's largest in A or B; or all
    zeros (valid: a LoRA whose B is zero changes nothing)."""
    t = _pick(rng, draft)
    a = _floats(t).copy()
    value = rng.choice([np.nan, np.inf, -np.inf, 1e38, -3e38, 65504.0, 1e300, 0.0])
    if value == 1e300:  # beyond float32: only an F64 tensor holds it
        a = a.astype(np.float64)
    if a.size:
        if rng.random() < 0.5:
            a.flat[rng.randrange(a.size)] = value
        else:
            a[...] = value
    t[1] = a
    return value == 0.0


def m_truncate(rng, draft):
    def edit(buf, data_start):
        cut = rng.choice(
            [rng.randrange(len(buf) + 1), len(buf) - 1, len(buf) // 2, data_start, data_start - 1, 24, 8, 0]
        )
        del buf[cut:]

    draft.damage.append(edit)
    return False


def m_flip(rng, draft):
    """A few bytes set to random ones, mostly in the header (where a flip
    is seldom harmless)."""

    def edit(buf, data_start):
        for _ in range(rng.randint(1, 4) if buf else 0):
            end = min(data_start, len(buf)) if rng.random() < 0.8 else len(buf)
            buf[rng.randrange(end)] = rng.randrange(256)

    draft.damage.append(edit)
    return False


def m_replaced(rng, draft):
    """Not an adapter at all: the base model itself, an empty file, a GGUF
    with no tensors."""
    kind = rng.choice(["base", "empty", "no tensors"])
    if kind == "base":
        draft.replaced_by = base_path()
    elif kind == "empty":
        draft.damage.append(lambda buf, _: buf.clear())
    else:
        draft.tensors = []
    return False


MUTATIONS = [  # (mutation, how often it is drawn)
    (m_name_other_tensor, 2),
    (m_name_layer, 3),
    (m_name_half, 3),
    (m_name_pair_out, 2),
    (m_name_suffix, 2),
    (m_name_unicode, 2),
    (m_name_long, 2),
    (m_name_empty, 1),
    (m_name_duplicate, 2),
    (m_shape_swap, 2),
    (m_shape_rank, 3),
    (m_shape_zero, 2),
    (m_shape_dims, 2),
    (m_shape_other_weight, 2),
    (m_shape_huge_header, 2),
    (m_type, 4),
    (m_type_number, 2),
    (m_alpha, 4),
    (m_metadata, 3),
    (m_metadata_extra, 2),
    (m_values, 3),
    (m_truncate, 2),
    (m_flip, 3),
    (m_replaced, 1),
]

WITHOUT_TENSORS = {m_alpha, m_metadata, m_metadata_extra, m_truncate, m_flip, m_replaced}


def mutate(rng, draft: Draft) -> Draft:
    """One to three mutations, one most often: what ggml's parser refuses
    hides whatever else a case changed. Now and then none: the valid adapter."""
    count = rng.choices([0, 1, 2, 3], weights=[4, 56, 28, 12])[0]
    for _ in range(count):
        mutation = rng.choices([m for m, _ in MUTATIONS], weights=[w for _, w in MUTATIONS])[0]
        if not draft.tensors and mutation not in WITHOUT_TENSORS:
            continue  # left with no tensors: nothing for this mutation to change
        keeps_valid = mutation(rng, draft)
        draft.valid = draft.valid and bool(keeps_valid)
        draft.done.append(mutation.__name__[2:])
    return draft


# ---- the cases --------------------------------------------------------------------


def make_case(rng, workdir):
    base = base_path()
    draft = mutate(rng, valid_draft(rng))
    adapter = write(draft, Path(workdir) / "adapter.gguf")
    use = rng.choice(["generate", "merge"])
    if draft.valid:
        return must_succeed(base, adapter, use, rng.choice(["f32", "f16", "base"]), draft.done)
    if use == "generate":
        return (
            "toy-generate",
            ["hi", "--model", str(base), "--adapter", str(adapter), "--max-new-tokens", "2", "--threads", "1"],
        )
    return merge_case(base, adapter, Path(workdir), rng.choice(["f32", "f16", "base"]), draft.done)


def merge_case(base, adapter, workdir: Path, dtype: str, done: list):
    """merge_lora as a callable: refused, it leaves no file; done, it wrote
    a GGUF toy reads, with finite weights."""

    def merge():
        from toy import ToyError
        from toy.formats.merge import merge_lora

        before = set(os.listdir(workdir))
        out = workdir / "merged.gguf"
        try:
            quietly(merge_lora, base, adapter, out, dtype)
        except ToyError:
            left = set(os.listdir(workdir)) - before
            assert not left, f"a refused merge left {sorted(left)}"
            raise
        check_merged(out)

    merge.__name__ = f"merge_lora(dtype={dtype}) after {'+'.join(done) or 'nothing'}"
    return merge


def quietly(fn, *args):
    """fn(*args), failing on a warning: the command (toy-train lora --merge)
    would print it on stderr beside its one line."""
    from toy import ToyError

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            return fn(*args)
        except ToyError:
            raise
        finally:
            if seen:  # an AssertionError in place of the result or the ToyError
                raise AssertionError(f"a warning on stderr: {seen[0].category.__name__}: {seen[0].message}")


def check_merged(out: Path) -> None:
    from gguf.quants import dequantize

    from toy.native.session import read_gguf_config

    read_gguf_config(out)  # ggml parses it and checks every shape
    for tensor in gguf.GGUFReader(str(out)).tensors:
        values = dequantize(tensor.data, tensor.tensor_type)
        assert np.isfinite(values).all(), f"the merged {tensor.name} holds values that are not finite"


def must_succeed(base, adapter, use: str, dtype: str, done: list):
    """A valid adapter (every change kept it so): a refusal is a failure."""

    def accepted():
        from toy import ToyError
        from toy.formats.merge import merge_lora
        from toy.generation.generate import generate
        from toy.generation.model import load_model

        try:
            if use == "generate":
                model = quietly(load_model, base, adapter, "cpu", 1)
                quietly(generate, model, "hi", 2)
            else:
                out = Path(adapter).with_name("merged.gguf")
                quietly(merge_lora, base, adapter, out, dtype)
                check_merged(out)
        except ToyError as err:
            raise AssertionError(f"a valid adapter was refused: {err}") from None

    accepted.__name__ = (
        f"valid adapter, {use}{'' if use == 'generate' else f' {dtype}'}, after {'+'.join(done) or 'nothing'}"
    )
    return accepted
