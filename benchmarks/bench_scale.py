"""Big models on a small machine: toy's LoRA from 135 M to 8 B parameters at
long context, beside PyTorch + PEFT in bf16 with gradient checkpointing.

    python benchmarks/bench_scale.py [--sizes 135m,1b,3b,8b,qwen35-0.8b,qwen35-2b,qwen35-9b,qwen3moe-30b-a3b,
                                     gpt-oss-20b]
                                     [--seqs 256,1024,4096]
                                     [--steps 2] [--threads 2] [--no-torch] [--torch-seqs 256,1024]
                                     [--precision f32|bf16] [--stored-from 8b] [--keep DIR]
                                     [--recompute auto|off|blocks]

Each llama size is a llama-shaped GGUF with random weights in Q4_K_M's types
(Q4_K matrices; Q6_K for the untied output and for attn_v and ffn_down in
every other layer, as llama.cpp's Q4_K_M mixes them; Q5_0 and Q8_0 where
the rows are not a multiple of 256, as llama.cpp falls back for SmolLM2), written here with
gguf-py and deleted after its rows (--keep DIR keeps them): SmolLM2-135M's
shape, Llama 3.2 1B's, Llama 3.2 3B's and Llama 3.1 8B's. Every cell trains
LoRA r16 on all seven projections, batch 1, random tokens, in a process of
its own: toy through toy.recipes.LoRA with --recompute auto (the memory plan
chooses) and the fast copies of the base, or the base as stored (no copies)
where the sizes reach --stored-from (8b by default: the copies of an 8 B
model alone are 15 GB); PyTorch + PEFT on a LlamaForCausalLM of the same
shape, its weights in bfloat16, gradient checkpointing on, where its weights
and one layer's activations fit in the memory this machine has (else the
cell says how much it needs).

Figures per cell: tokens/s (the median of --steps timed steps after the
first), peak RSS (VmHWM), time to the end of the first step from the
process's start (loading or initialising the model included), and for toy
the memory its plan printed before the run. Each row is printed as it comes,
one markdown row a cell, starting `| 8 B | 1024 |` with toy's tokens/s and
peak RSS in MB in the next two columns. Take the figures on an idle machine.

The qwen35-* sizes are Qwen 3.5 files of the released shapes written the
same way (write_random_qwen35_gguf), trained on every projection
(--targets all); their PyTorch cells point at bench_qwen35.py, which builds
transformers' model and llama.cpp's file of it.

qwen3moe-30b-a3b is Qwen3-30B-A3B's shape (128 experts of 768, 8 a token,
48 layers: an 18 GB Q4_K_M file, write_random_qwen3moe_gguf), LoRA on the
attention (the experts frozen as stored, a mixture of experts has no dense
gate, up or down); the dense row of the same active size is the 3 B's.
gpt-oss-20b is gpt-oss-20b's shape (32 experts of 2880, 4 a token, 24
layers, a window of 128 on every other one: a 12 GB file as llama.cpp's
MXFP4_MOE writes it, the experts MXFP4 and the rest Q8_0,
write_random_gpt_oss_gguf), LoRA on the attention likewise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from side_by_side import cpu_model, importable, median_seconds, peak_rss_mb, run_worker  # noqa: E402

RANK, ALPHA = 16, 32.0
SEVEN = ("q", "k", "v", "o", "gate", "up", "down")
PEFT_NAMES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


@dataclass(frozen=True)
class Shape:
    label: str
    d_model: int
    layers: int
    heads: int
    kv_heads: int
    d_ff: int
    vocab: int
    tied: bool
    rope_base: float
    context: int

    def params(self) -> int:
        head = self.d_model // self.heads
        per_layer = 2 * self.d_model * self.heads * head + 2 * self.d_model * self.kv_heads * head
        per_layer += 3 * self.d_model * self.d_ff + 2 * self.d_model
        return self.vocab * self.d_model * (1 if self.tied else 2) + self.layers * per_layer + self.d_model


@dataclass(frozen=True)
class Qwen35Shape:
    """Qwen 3.5 dense: every fourth layer gated attention (heads of head_dim,
    RoPE on rope_dim of them), the rest Gated DeltaNet (key_heads query/key
    heads and value_heads value heads of 128, a convolution of 4 taps)."""

    label: str
    d_model: int
    layers: int
    heads: int
    kv_heads: int
    d_ff: int
    key_heads: int
    value_heads: int
    tied: bool
    vocab: int = 248320
    head_dim: int = 256
    rope_dim: int = 64
    delta_dim: int = 128
    rope_base: float = 10000000.0
    context: int = 262144

    def params(self) -> int:
        d, attn_layers = self.d_model, self.layers // 4
        keys, values = self.key_heads * self.delta_dim, self.value_heads * self.delta_dim
        attention = (
            d * (2 * self.heads * self.head_dim + 2 * self.kv_heads * self.head_dim) + self.heads * self.head_dim * d
        )
        delta = d * (2 * keys + values) + 2 * d * values + 2 * d * self.value_heads
        per_layer = 3 * d * self.d_ff
        return (
            self.vocab * d * (1 if self.tied else 2)
            + self.layers * per_layer
            + attn_layers * attention
            + (self.layers - attn_layers) * delta
        )


@dataclass(frozen=True)
class Qwen3MoeShape:
    """Qwen3-MoE: Qwen3's attention (q/k norms, heads of head_dim), every
    feed-forward `experts` SwiGLU experts of width d_ff_exp, `used` a token."""

    label: str
    d_model: int
    layers: int
    heads: int
    kv_heads: int
    experts: int
    used: int
    d_ff_exp: int
    vocab: int = 151936
    head_dim: int = 128
    tied: bool = False
    rope_base: float = 1000000.0
    context: int = 40960
    d_ff: int = 6144  # the file's feed_forward_length, which no layer reads

    def attention(self) -> int:
        return 2 * self.d_model * (self.heads + self.kv_heads) * self.head_dim

    def params(self) -> int:
        experts = 3 * self.d_model * self.d_ff_exp * self.experts + self.d_model * self.experts
        return self.vocab * self.d_model * 2 + self.layers * (self.attention() + experts)

    def active_params(self) -> int:
        """What a token reads: the attention, its experts, the head."""
        return self.vocab * self.d_model + self.layers * (
            self.attention() + 3 * self.d_model * self.d_ff_exp * self.used
        )


@dataclass(frozen=True)
class GptOssShape(Qwen3MoeShape):
    """gpt-oss: attention with biases and sinks, every other layer a
    window; experts with biases (write_random_gpt_oss_gguf)."""

    vocab: int = 201088
    head_dim: int = 64
    rope_base: float = 150000.0
    context: int = 131072
    d_ff: int = 2880
    window: int = 128


SHAPES = {
    "135m": Shape("135 M", 576, 30, 9, 3, 1536, 49152, True, 100000.0, 8192),
    "1b": Shape("1 B", 2048, 16, 32, 8, 8192, 128256, True, 500000.0, 131072),
    "3b": Shape("3 B", 3072, 28, 24, 8, 8192, 128256, True, 500000.0, 131072),
    "8b": Shape("8 B", 4096, 32, 32, 8, 14336, 128256, False, 500000.0, 131072),
    # Qwen 3.5's released sizes (9 B: its model card's; 0.8 B and 2 B: the same heads, narrower)
    "qwen35-0.8b": Qwen35Shape("Qwen 3.5 0.8 B", 1024, 24, 8, 2, 3584, 16, 16, True),
    "qwen35-2b": Qwen35Shape("Qwen 3.5 2 B", 2048, 24, 8, 2, 6144, 16, 16, True),
    "qwen35-9b": Qwen35Shape("Qwen 3.5 9 B", 4096, 32, 16, 4, 12288, 16, 32, False),
    # Qwen3-30B-A3B's released shape: 128 experts of 768, 8 a token (about 3.3 B read a token)
    "qwen3moe-30b-a3b": Qwen3MoeShape("Qwen3-30B-A3B", 2048, 48, 32, 4, 128, 8, 768),
    # gpt-oss-20b's released shape: 32 experts of 2880, 4 a token (about 3.6 B read a token)
    "gpt-oss-20b": GptOssShape("gpt-oss-20b", 2880, 24, 64, 8, 32, 4, 2880),
}


# ---- the random Q4_K_M file --------------------------------------------------


def random_blocks(rng, n_values: int, qtype):
    """n_values of random weights (|w| about 0.02 or less) as quantized blocks:
    the scales fixed small, the quants random."""
    import gguf
    import numpy as np

    block_values, block_bytes = gguf.GGML_QUANT_SIZES[qtype]
    n_blocks = n_values // block_values
    blocks = np.frombuffer(rng.bytes(n_blocks * block_bytes), dtype=np.uint8).reshape(n_blocks, block_bytes).copy()
    T = gguf.GGMLQuantizationType
    if qtype == T.MXFP4:  # e (E8M0) first: w = e2m1(q) * 2^(e - 128), |w| <= 12 * 2^-9
        blocks[:, 0] = 119
    elif qtype == T.Q4_K:
        # d, dmin (f16) first: w = d * scale * q - dmin * min, scale and min 6 bits, q 4 bits
        blocks[:, 0:2] = np.frombuffer(np.float16(2e-5).tobytes(), dtype=np.uint8)
        blocks[:, 2:4] = np.frombuffer(np.float16(1.5e-4).tobytes(), dtype=np.uint8)
    elif qtype == T.Q6_K:  # ql, qh, 16 int8 scales, then d (f16): w = d * scale * (q - 32)
        blocks[:, 192:208] = rng.integers(1, 16, size=(n_blocks, 16), dtype=np.uint8)
        blocks[:, 208:210] = np.frombuffer(np.float16(4e-5).tobytes(), dtype=np.uint8)
    else:  # Q5_0, Q8_0: d (f16) first
        d = 1.2e-3 if qtype == T.Q5_0 else 1.5e-4
        blocks[:, 0:2] = np.frombuffer(np.float16(d).tobytes(), dtype=np.uint8)
    return blocks.reshape(-1)


def write_random_gguf(path: Path, s: Shape, seed: int = 0) -> None:
    """A llama GGUF of shape s, its weights random, written a tensor at a time
    (an 8 B file never whole in memory)."""
    import gguf
    import numpy as np

    rng = np.random.default_rng(seed)
    head = s.d_model // s.heads
    q4k, q6k, f32 = gguf.GGMLQuantizationType.Q4_K, gguf.GGMLQuantizationType.Q6_K, gguf.GGMLQuantizationType.F32
    if s.d_model % 256:  # rows K-quants cannot hold: llama.cpp's fallbacks
        q4k, q6k = gguf.GGMLQuantizationType.Q5_0, gguf.GGMLQuantizationType.Q8_0
    tensors = [("token_embd.weight", (s.vocab, s.d_model), q4k)]
    for i in range(s.layers):
        mixed = q6k if i % 2 == 0 else q4k  # Q4_K_M: half the attn_v and ffn_down in Q6_K
        tensors += [
            (f"blk.{i}.attn_norm.weight", (s.d_model,), f32),
            (f"blk.{i}.attn_q.weight", (s.heads * head, s.d_model), q4k),
            (f"blk.{i}.attn_k.weight", (s.kv_heads * head, s.d_model), q4k),
            (f"blk.{i}.attn_v.weight", (s.kv_heads * head, s.d_model), mixed),
            (f"blk.{i}.attn_output.weight", (s.d_model, s.heads * head), q4k),
            (f"blk.{i}.ffn_norm.weight", (s.d_model,), f32),
            (f"blk.{i}.ffn_gate.weight", (s.d_ff, s.d_model), q4k),
            (f"blk.{i}.ffn_up.weight", (s.d_ff, s.d_model), q4k),
            (f"blk.{i}.ffn_down.weight", (s.d_model, s.d_ff), mixed),
        ]
    tensors.append(("output_norm.weight", (s.d_model,), f32))
    if not s.tied:
        tensors.append(("output.weight", (s.vocab, s.d_model), q6k))

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(f"random llama {s.label}")
    common_keys(writer, s)
    writer.add_head_count_kv(s.kv_heads)
    write_tensors(writer, rng, tensors)


def common_keys(writer, s) -> None:
    """The hyper-parameters a llama and a Qwen 3.5 file share."""
    writer.add_block_count(s.layers)
    writer.add_context_length(s.context)
    writer.add_embedding_length(s.d_model)
    writer.add_feed_forward_length(s.d_ff)
    writer.add_head_count(s.heads)
    writer.add_rope_freq_base(s.rope_base)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_tokenizer_model("none")
    writer.add_vocab_size(s.vocab)


def write_tensors(writer, rng, tensors, f32_values=None, by_shape=False) -> None:
    """tensors [(name, numpy shape, type)] after the keys: quantized ones
    random (random_blocks), F32 ones f32_values(name) everywhere or ones
    (by_shape: the array f32_values(name, shape))."""
    import gguf
    import numpy as np

    f32 = gguf.GGMLQuantizationType.F32
    for name, shape, qtype in tensors:
        if qtype == f32:
            writer.add_tensor_info(name, shape, np.dtype(np.float32), 4 * int(np.prod(shape)))
        else:
            values, size = gguf.GGML_QUANT_SIZES[qtype]
            byte_shape = (*shape[:-1], shape[-1] // values * size)
            nbytes = int(np.prod(byte_shape))
            writer.add_tensor_info(name, byte_shape, np.dtype(np.uint8), nbytes, raw_dtype=qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for name, shape, qtype in tensors:
        if qtype == f32 and by_shape:
            writer.write_tensor_data(f32_values(name, shape))
        elif qtype == f32:
            value = f32_values(name) if f32_values else 1.0
            writer.write_tensor_data(np.full(shape, value, dtype=np.float32))
        else:
            writer.write_tensor_data(random_blocks(rng, int(np.prod(shape)), qtype))
    writer.close()


def write_random_qwen35_gguf(path: Path, s: Qwen35Shape, seed: int = 0) -> None:
    """A qwen35 GGUF of shape s, its weights random, in the types llama.cpp's
    Q4_K_M gives Qwen 3.5 (Q4_K; Q6_K for half the attn_v and ffn_down and
    the untied output; Q5_K for attn_qkv and ssm_out; Q8_0 for the narrow
    ssm_alpha and ssm_beta), a tensor at a time. A below 0, so that each
    delta-net state decays as a trained one does."""
    import gguf
    import numpy as np

    rng = np.random.default_rng(seed)
    T = gguf.GGMLQuantizationType
    d, hd = s.d_model, s.head_dim
    keys, values = s.key_heads * s.delta_dim, s.value_heads * s.delta_dim
    tensors = [("token_embd.weight", (s.vocab, d), T.Q4_K)]
    kinds = [(i + 1) % 4 == 0 for i in range(s.layers)]  # attention every fourth layer
    for i, attends in enumerate(kinds):
        mixed = T.Q6_K if i % 2 == 0 else T.Q4_K
        b = f"blk.{i}."
        tensors.append((b + "attn_norm.weight", (d,), T.F32))
        if attends:
            tensors += [
                (b + "attn_q.weight", (2 * s.heads * hd, d), T.Q4_K),
                (b + "attn_k.weight", (s.kv_heads * hd, d), T.Q4_K),
                (b + "attn_v.weight", (s.kv_heads * hd, d), mixed),
                (b + "attn_output.weight", (d, s.heads * hd), T.Q4_K),
                (b + "attn_q_norm.weight", (hd,), T.F32),
                (b + "attn_k_norm.weight", (hd,), T.F32),
            ]
        else:
            tensors += [
                (b + "attn_qkv.weight", (2 * keys + values, d), T.Q5_K),
                (b + "attn_gate.weight", (values, d), T.Q4_K),
                (b + "ssm_conv1d.weight", (2 * keys + values, 4), T.F32),
                (b + "ssm_dt.bias", (s.value_heads,), T.F32),
                (b + "ssm_a", (s.value_heads,), T.F32),
                (b + "ssm_beta.weight", (s.value_heads, d), T.Q8_0),
                (b + "ssm_alpha.weight", (s.value_heads, d), T.Q8_0),
                (b + "ssm_norm.weight", (s.delta_dim,), T.F32),
                (b + "ssm_out.weight", (d, values), T.Q5_K),
            ]
        tensors += [
            (b + "post_attention_norm.weight", (d,), T.F32),
            (b + "ffn_gate.weight", (s.d_ff, d), T.Q4_K),
            (b + "ffn_up.weight", (s.d_ff, d), T.Q4_K),
            (b + "ffn_down.weight", (d, s.d_ff), mixed),
        ]
    tensors.append(("output_norm.weight", (d,), T.F32))
    if not s.tied:
        tensors.append(("output.weight", (s.vocab, d), T.Q6_K))

    writer = gguf.GGUFWriter(str(path), "qwen35")
    writer.add_name(f"random qwen35 {s.label}")
    common_keys(writer, s)
    writer.add_head_count_kv(s.kv_heads)
    writer.add_key_length(hd)
    writer.add_value_length(hd)
    writer.add_rope_dimension_count(s.rope_dim)
    writer.add_uint32("qwen35.full_attention_interval", 4)
    writer.add_ssm_conv_kernel(4)
    writer.add_ssm_state_size(s.delta_dim)
    writer.add_ssm_group_count(s.key_heads)
    writer.add_ssm_time_step_rank(s.value_heads)
    writer.add_ssm_inner_size(values)
    write_tensors(writer, rng, tensors, qwen35_f32_value)


def mixture_writer(path: Path, arch: str, s: Qwen3MoeShape):
    """A GGUF writer for a mixture of experts of shape s, its common keys,
    heads and experts' written."""
    import gguf

    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_name(f"random {arch} {s.label}")
    common_keys(writer, s)
    writer.add_head_count_kv(s.kv_heads)
    writer.add_key_length(s.head_dim)
    writer.add_value_length(s.head_dim)
    writer.add_expert_count(s.experts)
    writer.add_expert_used_count(s.used)
    writer.add_expert_feed_forward_length(s.d_ff_exp)
    return writer


def write_random_qwen3moe_gguf(path: Path, s: Qwen3MoeShape, seed: int = 0) -> None:
    """A qwen3moe GGUF of shape s, its weights random, in the types llama.cpp's
    Q4_K_M gives Qwen3-30B-A3B (Q4_K; Q6_K for half the attn_v and
    ffn_down_exps and the output; the router F32), a tensor at a time: the
    18 GB file is never whole in memory. The router's rows differ, so that
    tokens spread over the experts as a trained router spreads them."""
    import gguf
    import numpy as np

    rng = np.random.default_rng(seed)
    T = gguf.GGMLQuantizationType
    d, hd, e, ff = s.d_model, s.head_dim, s.experts, s.d_ff_exp
    tensors = [("token_embd.weight", (s.vocab, d), T.Q4_K)]
    for i in range(s.layers):
        mixed = T.Q6_K if i % 2 == 0 else T.Q4_K
        b = f"blk.{i}."
        tensors += [
            (b + "attn_norm.weight", (d,), T.F32),
            (b + "attn_q.weight", (s.heads * hd, d), T.Q4_K),
            (b + "attn_k.weight", (s.kv_heads * hd, d), T.Q4_K),
            (b + "attn_v.weight", (s.kv_heads * hd, d), mixed),
            (b + "attn_output.weight", (d, s.heads * hd), T.Q4_K),
            (b + "attn_q_norm.weight", (hd,), T.F32),
            (b + "attn_k_norm.weight", (hd,), T.F32),
            (b + "ffn_norm.weight", (d,), T.F32),
            (b + "ffn_gate_inp.weight", (e, d), T.F32),
            (b + "ffn_gate_exps.weight", (e, ff, d), T.Q4_K),
            (b + "ffn_up_exps.weight", (e, ff, d), T.Q4_K),
            (b + "ffn_down_exps.weight", (e, d, ff), mixed),
        ]
    tensors += [("output_norm.weight", (d,), T.F32), ("output.weight", (s.vocab, d), T.Q6_K)]

    writer = mixture_writer(path, "qwen3moe", s)
    router = np.random.default_rng(seed + 1)

    def f32_values(name: str, shape) -> np.ndarray:
        if name.endswith("ffn_gate_inp.weight"):
            return (router.standard_normal(shape) * 0.5).astype(np.float32)
        return np.ones(shape, dtype=np.float32)

    write_tensors(writer, rng, tensors, f32_values, by_shape=True)


def write_random_gpt_oss_gguf(path: Path, s: GptOssShape, seed: int = 0) -> None:
    """A gpt-oss GGUF of shape s, its weights random, in the types llama.cpp's
    MXFP4_MOE gives gpt-oss (the experts MXFP4, as the model ships; every
    other matrix Q8_0; norms, biases, sinks and the router F32), a tensor at
    a time. The router's rows differ, as in write_random_qwen3moe_gguf; the
    biases and sinks are 0."""
    import gguf
    import numpy as np

    rng = np.random.default_rng(seed)
    T = gguf.GGMLQuantizationType
    d, hd, e, ff = s.d_model, s.head_dim, s.experts, s.d_ff_exp
    q, kv = s.heads * hd, s.kv_heads * hd
    tensors = [("token_embd.weight", (s.vocab, d), T.Q8_0)]
    for i in range(s.layers):
        b = f"blk.{i}."
        tensors += [
            (b + "attn_norm.weight", (d,), T.F32),
            (b + "attn_q.weight", (q, d), T.Q8_0),
            (b + "attn_k.weight", (kv, d), T.Q8_0),
            (b + "attn_v.weight", (kv, d), T.Q8_0),
            (b + "attn_q.bias", (q,), T.F32),
            (b + "attn_k.bias", (kv,), T.F32),
            (b + "attn_v.bias", (kv,), T.F32),
            (b + "attn_output.weight", (d, q), T.Q8_0),
            (b + "attn_output.bias", (d,), T.F32),
            (b + "attn_sinks.weight", (s.heads,), T.F32),
            (b + "post_attention_norm.weight", (d,), T.F32),
            (b + "ffn_gate_inp.weight", (e, d), T.F32),
            (b + "ffn_gate_inp.bias", (e,), T.F32),
            (b + "ffn_gate_exps.weight", (e, ff, d), T.MXFP4),
            (b + "ffn_up_exps.weight", (e, ff, d), T.MXFP4),
            (b + "ffn_down_exps.weight", (e, d, ff), T.MXFP4),
            (b + "ffn_gate_exps.bias", (e, ff), T.F32),
            (b + "ffn_up_exps.bias", (e, ff), T.F32),
            (b + "ffn_down_exps.bias", (e, d), T.F32),
        ]
    tensors += [("output_norm.weight", (d,), T.F32), ("output.weight", (s.vocab, d), T.Q8_0)]

    writer = mixture_writer(path, "gpt-oss", s)
    writer.add_sliding_window(s.window)
    writer.add_rope_scaling_type(gguf.RopeScalingType.YARN)
    writer.add_rope_scaling_factor(32.0)
    writer.add_rope_scaling_orig_ctx_len(4096)
    router = np.random.default_rng(seed + 1)

    def f32_values(name: str, shape) -> np.ndarray:
        if name.endswith("ffn_gate_inp.weight"):
            return (router.standard_normal(shape) * 0.5).astype(np.float32)
        return np.full(shape, 1.0 if name.endswith("norm.weight") else 0.0, dtype=np.float32)

    write_tensors(writer, rng, tensors, f32_values, by_shape=True)


def qwen35_f32_value(name: str) -> float:
    """The value of every entry of a Qwen 3.5 F32 tensor: A = -exp(A_log)
    below 0 (each state decays), no dt bias, a mild convolution, norms 1."""
    if name.endswith(".ssm_a"):
        return -1.0
    if name.endswith(".ssm_dt.bias"):
        return 0.0
    return 0.25 if name.endswith(".ssm_conv1d.weight") else 1.0


# ---- the workers: one cell each, in a process of its own ---------------------

# toy's --recompute as RecipeOptions.recompute: auto, off, every block
RECOMPUTE = {"auto": -1, "off": 0, "blocks": 1}


def run_toy(
    model: str,
    seq: int,
    steps: int,
    threads: int,
    base_compute: str,
    precision: str,
    recompute: int,
    started: float,
    targets: tuple[str, ...] = SEVEN,
) -> dict:
    import numpy as np

    import toy
    from toy.recipes import LoRA

    recipe = LoRA("cpu", threads)
    opts = toy.RecipeOptions(t_seq=seq, t_batch=1, recompute=recompute, evaluates=False, precision=precision)
    recipe.realize(model, None, RANK, opts, alpha=ALPHA, targets=targets, base_compute=base_compute)
    plan = recipe.session.plan
    rng = np.random.default_rng(0)
    positions = np.arange(seq, dtype=np.int32)[None, :]
    first = {}

    def step(i):
        ids = rng.integers(0, recipe.cfg.vocab, size=(1, seq + 1)).astype(np.int32)
        recipe.step(ids[:, :-1], positions, ids[:, 1:], toy.adamw_hp(i, 1e-4), i == 1)
        first.setdefault("at", time.time() - started)

    seconds = median_seconds(step, steps)
    return {
        "tokens_per_s": seq / seconds,
        "peak_rss_mb": peak_rss_mb(),
        "first_step_s": first["at"],
        "planned_mb": plan.total / 2**20 if plan else None,
        "recompute": plan.recompute if plan else None,
    }


def torch_bytes(s: Shape, seq: int) -> int:
    """What PyTorch + PEFT in bf16 with checkpointing holds, at least: the
    weights (2 bytes each), each layer's input kept, one layer's activations
    recomputed (fp32 attention scores per head), the logits in fp32 twice."""
    per_layer_kept = 2 * seq * s.d_model
    one_layer = 4 * seq * (6 * s.d_model + 4 * s.d_ff) + 4 * 3 * s.heads * seq * seq
    return 2 * s.params() + s.layers * per_layer_kept + one_layer + 2 * 4 * seq * s.vocab


def run_peft(size: str, seq: int, steps: int, threads: int, started: float, dtype: str = "bf16") -> dict:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    s = SHAPES[size]
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=s.vocab,
        hidden_size=s.d_model,
        intermediate_size=s.d_ff,
        num_hidden_layers=s.layers,
        num_attention_heads=s.heads,
        num_key_value_heads=s.kv_heads,
        max_position_embeddings=s.context,
        rope_theta=s.rope_base,
        tie_word_embeddings=s.tied,
        use_cache=False,
    )
    torch.set_default_dtype(torch.bfloat16 if dtype == "bf16" else torch.float32)
    net = LlamaForCausalLM(config)
    torch.set_default_dtype(torch.float32)
    net.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    net.enable_input_require_grads()
    net = get_peft_model(net, LoraConfig(r=RANK, lora_alpha=ALPHA, lora_dropout=0.0, target_modules=PEFT_NAMES))
    net.train()
    opt = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=1e-4)
    first = {}

    def step(i):
        ids = torch.randint(0, s.vocab, (1, seq + 1))
        out = net(input_ids=ids[:, :-1], labels=ids[:, :-1])
        opt.zero_grad(set_to_none=True)
        out.loss.backward()
        opt.step()
        first.setdefault("at", time.time() - started)

    seconds = median_seconds(step, steps)
    return {"tokens_per_s": seq / seconds, "peak_rss_mb": peak_rss_mb(), "first_step_s": first["at"]}


# ---- the table --------------------------------------------------------------


def cell(result: dict | None, what: str) -> str:
    if result is None:
        return "-"
    if "error" in result:
        return result["error"]
    value = result[what]
    return f"{value:,.0f}" if what != "tokens_per_s" else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="135m,1b,3b,8b", help=f"from {','.join(SHAPES)}")
    p.add_argument("--seqs", default="256,1024,4096")
    p.add_argument("--steps", type=int, default=2, help="timed steps after the first, median reported (default 2)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--no-torch", action="store_true", help="toy's columns only")
    p.add_argument("--torch-seqs", help="the seqs PyTorch + PEFT runs at (default: all of --seqs)")
    p.add_argument(
        "--torch-dtype",
        default="bf16",
        choices=("bf16", "f32"),
        help="PyTorch's weights (bf16 default; f32 where the CPU has no bf16 products and bf16 crawls)",
    )
    p.add_argument(
        "--precision",
        default="f32",
        choices=("f32", "bf16"),
        help="toy's products (default f32; bf16: --precision bf16, the base a bfloat16 copy where AMX runs it)",
    )
    p.add_argument("--stored-from", default="8b", help="the smallest size whose base toy keeps as stored")
    p.add_argument(
        "--recompute",
        default="auto",
        choices=tuple(RECOMPUTE),
        help="toy's --recompute (default auto: the plan chooses; blocks: what a 16 GB laptop's plan would)",
    )
    p.add_argument("--keep", help="write the models in this folder and keep them")
    p.add_argument("--worker", choices=("toy", "peft"))
    p.add_argument("--model")
    p.add_argument("--size")
    p.add_argument("--seq", type=int)
    p.add_argument("--base-compute", default="fast")
    p.add_argument("--targets", default=",".join(SEVEN))
    p.add_argument("--started", type=float)
    args = p.parse_args()
    if args.worker == "toy":
        r = run_toy(
            args.model,
            args.seq,
            args.steps,
            args.threads,
            args.base_compute,
            args.precision,
            RECOMPUTE[args.recompute],
            args.started,
            tuple(args.targets.split(",")),
        )
        print(json.dumps(r))
        return
    if args.worker == "peft":
        print(json.dumps(run_peft(args.size, args.seq, args.steps, args.threads, args.started, args.torch_dtype)))
        return

    sizes = [x.strip() for x in args.sizes.split(",")]
    unknown = [x for x in sizes if x not in SHAPES]
    if unknown:
        p.error(f"--sizes: {', '.join(unknown)} unknown; choose from {', '.join(SHAPES)}")
    seqs = [int(x) for x in args.seqs.split(",")]
    torch_seqs = [int(x) for x in args.torch_seqs.split(",")] if args.torch_seqs else seqs
    with_torch = not args.no_torch and importable("torch", "transformers", "peft")
    from toy.core.machine import available_bytes

    name, _ = cpu_model()
    print(
        f"CPU: {name}, {args.threads} threads; LoRA r{RANK} on all seven projections (Qwen 3.5: every one; "
        "Qwen3-MoE: the attention), "
        "batch 1, random tokens; "
        f"toy --precision {args.precision}"
    )
    peft = f"PEFT {args.torch_dtype}"
    print(
        "| model | seq | toy tokens/s | toy peak RSS (MB) | toy planned (MB) | toy first step (s) "
        f"| {peft} tokens/s | {peft} peak RSS (MB) | {peft} first step (s) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_scale_"))
    folder.mkdir(parents=True, exist_ok=True)
    for size in sizes:
        shape = SHAPES[size]
        qwen35, moe = isinstance(shape, Qwen35Shape), isinstance(shape, Qwen3MoeShape)
        oss = isinstance(shape, GptOssShape)
        model = folder / f"random-{'' if qwen35 or moe else 'llama-'}{size}-{'mxfp4' if oss else 'q4_k_m'}.gguf"
        if not model.is_file():
            write = (
                write_random_gpt_oss_gguf
                if oss
                else write_random_qwen35_gguf
                if qwen35
                else write_random_qwen3moe_gguf
                if moe
                else write_random_gguf
            )
            write(model, shape)
        stored = shape.params() >= SHAPES[args.stored_from].params()
        targets = "all" if qwen35 else "q,k,v,o" if moe else ",".join(SEVEN)
        for seq in seqs:
            common = ["--steps", str(args.steps), "--threads", str(args.threads), "--seq", str(seq)]
            toy_r = run_worker(
                __file__,
                "--worker",
                "toy",
                "--model",
                str(model),
                "--base-compute",
                "stored" if stored else "fast",
                "--precision",
                args.precision,
                "--recompute",
                args.recompute,
                "--targets",
                targets,
                "--started",
                repr(time.time()),
                *common,
            )
            torch_r = None
            if with_torch and qwen35:
                torch_r = {"error": "bench_qwen35"}  # transformers' Qwen 3.5 from llama.cpp's converter
            elif with_torch and moe:
                torch_r = {"error": "not run"}  # 30 B parameters in bfloat16 fit no 24 GB machine
            elif with_torch and seq not in torch_seqs:
                torch_r = {"error": "not run"}
            elif with_torch:
                need = torch_bytes(shape, seq)
                room = available_bytes()
                if room is not None and need > room:
                    torch_r = {"error": f"does not fit ({need / 2**30:.0f} GB of {room / 2**30:.0f})"}
                else:
                    torch_r = run_worker(
                        __file__,
                        "--worker",
                        "peft",
                        "--size",
                        size,
                        "--torch-dtype",
                        args.torch_dtype,
                        "--started",
                        repr(time.time()),
                        *common,
                    )
            base = " (base stored)" if stored else ""
            recompute = {0: "off", 1: "blocks"}.get(toy_r.get("recompute"), "-") if "error" not in toy_r else "-"
            toy_cells = [cell(toy_r, k) for k in ("tokens_per_s", "peak_rss_mb", "planned_mb", "first_step_s")]
            toy_cells[-1] += f"{base}, recompute {recompute}"
            torch_cells = [cell(torch_r, k) for k in ("tokens_per_s", "peak_rss_mb", "first_step_s")]
            print(f"| {shape.label} | {seq} | {' | '.join(toy_cells + torch_cells)} |", flush=True)
        if not args.keep:
            os.remove(model)
    if not args.keep:
        os.rmdir(folder)


if __name__ == "__main__":
    main()
