"""tinynn's CPU kernels (tinynn/cpu/kernels.h), each on its own against numpy.

Every kernel is called through the kernel checks of tinynn.h on plain
arrays, apart from any training step, in every variant this machine runs
(skipped with the reason where the CPU lacks it), on odd shapes: rows and
columns that fill no tile, inner sizes that are odd multiples of a block,
several thread splits. Also what the kernel layer answers: which variant a
session would use under TNN_CPU_KERNELS, and "none" where nothing runs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, quants

from toy.native.library import ffi, library

lib = library("cpu")

KERNELS = ["qgemm", "fgemm", "head_loss", "adamw", "fgemm_bf16", "attention_bf16", "activations", "recurrent"]
# the variants of each kernel, in order of preference (kernels.h)
VARIANTS = {
    "qgemm": ["avx2", "avxvnni", "avx512", "amx"],
    "fgemm": ["avx2", "avx512"],
    "head_loss": ["avx2", "avx512"],
    "adamw": ["avx2", "avx512"],
    "fgemm_bf16": ["avx512", "amx"],
    "attention_bf16": ["avx512", "amx"],
    "activations": ["avx512"],
    "recurrent": ["avx2", "avx512"],
}
# the /proc/cpuinfo flags each variant is compiled for (kernels.c asks the CPU)
AVX2 = {"avx2", "fma", "f16c"}
AVX512 = AVX2 | {"avx512f", "avx512bw", "avx512vl", "avx512dq"}
NEEDS = {
    "avx2": AVX2,
    "avxvnni": AVX2 | {"avx_vnni"},
    "avx512": AVX512,
    "amx": AVX512 | {"avx512_vnni", "amx_tile", "amx_int8"},
}
QTYPES = {
    "q8_0": GGMLQuantizationType.Q8_0,
    "q4_1": GGMLQuantizationType.Q4_1,
    "q4_0": GGMLQuantizationType.Q4_0,
    "q5_0": GGMLQuantizationType.Q5_0,
}


def needs(kernel: str, variant: str) -> set[str]:
    if kernel in ("fgemm_bf16", "attention_bf16"):
        return AVX512 | {"avx512_bf16"} | ({"amx_tile", "amx_bf16"} if variant == "amx" else set())
    return NEEDS[variant] | ({"avx512_vnni"} if (kernel, variant) == ("qgemm", "avx512") else set())


def runs(kernel: str, variant: str) -> bool:
    return bool(lib.tnn_cpu_kernel_runs(kernel.encode(), variant.encode()))


def need(kernel: str, variant: str) -> None:
    if not runs(kernel, variant):
        pytest.skip(f"this CPU lacks {', '.join(sorted(needs(kernel, variant)))} for {kernel}'s {variant} variant")


def check(status: int) -> None:
    assert status == 0, ffi.string(lib.tnn_last_error()).decode()


def f32(a: np.ndarray):
    return ffi.from_buffer("float[]", a)


def quantized(w: np.ndarray, qtype: str) -> tuple[np.ndarray, np.ndarray]:
    """ggml blocks of w's rows (the gguf package quantizes as ggml does),
    and the matrix they hold."""
    blocks = quants.quantize(w, QTYPES[qtype])
    return np.ascontiguousarray(blocks), quants.dequantize(blocks, QTYPES[qtype]).astype(np.float64)


# ---- what the kernel layer answers -------------------------------------------


def cpu_flags() -> set[str]:
    try:
        return set(Path("/proc/cpuinfo").read_text().split())
    except OSError:
        pytest.skip("no /proc/cpuinfo to compare with")


def choice(kernel: str) -> str | None:
    answer = lib.tnn_cpu_kernel_choice(kernel.encode())
    return None if answer == ffi.NULL else ffi.string(answer).decode()


def best(kernel: str, within: set[str] | None = None) -> str:
    """The variant a session should use: the last that runs (within the
    variants a level allows)."""
    usable = [v for v in VARIANTS[kernel] if runs(kernel, v) and (within is None or v in within)]
    return usable[-1] if usable else "none"


def test_each_variant_runs_exactly_where_the_cpu_has_the_features():
    flags = cpu_flags()
    for kernel, variants in VARIANTS.items():
        for variant in variants:
            assert runs(kernel, variant) == (needs(kernel, variant) <= flags), (kernel, variant)


def test_by_default_a_session_uses_the_best_variant_the_cpu_runs(monkeypatch):
    monkeypatch.delenv("TNN_CPU_KERNELS", raising=False)
    monkeypatch.delenv("TNN_CPU_VARIANT", raising=False)
    for kernel in KERNELS:
        assert choice(kernel) == best(kernel)


@pytest.mark.parametrize(
    "level, within",
    [
        ("x64", set()),
        ("haswell", {"avx2"}),
        ("alderlake", {"avx2", "avxvnni"}),
        ("skylakex", {"avx2", "avx512"}),
        ("icelake", {"avx2", "avx512"}),
        ("zen4", {"avx2", "avx512"}),
        ("sapphirerapids", {"avx2", "avxvnni", "avx512", "amx"}),
    ],
)
def test_a_cpu_level_bounds_every_kernel_to_its_features(monkeypatch, level, within):
    """TNN_CPU_VARIANT=haswell on any machine runs what a Haswell would."""
    monkeypatch.delenv("TNN_CPU_KERNELS", raising=False)
    monkeypatch.setenv("TNN_CPU_VARIANT", level)
    for kernel in KERNELS:
        allowed = within
        if level == "skylakex" and kernel == "qgemm":
            allowed = {"avx2"}  # Skylake-X has AVX-512 but no VNNI
        if level in ("skylakex", "icelake") and kernel in ("fgemm_bf16", "attention_bf16"):
            allowed = set()  # nor AVX512-BF16
        assert choice(kernel) == best(kernel, allowed), (level, kernel)


def test_a_level_that_is_no_x86_level_is_refused(monkeypatch):
    monkeypatch.setenv("TNN_CPU_VARIANT", "pentium")
    if not runs("adamw", "avx2"):
        pytest.skip("no kernel of tinynn's runs on this CPU: the level bounds nothing")
    assert choice("qgemm") is None
    message = ffi.string(lib.tnn_last_error()).decode()
    assert "TNN_CPU_VARIANT='pentium'" in message and "haswell" in message


def test_off_leaves_every_product_to_ggml(monkeypatch):
    monkeypatch.setenv("TNN_CPU_KERNELS", "off")
    assert [choice(k) for k in KERNELS] == ["none"] * len(KERNELS)


def test_a_list_names_the_kernels_to_use_and_head_loss_needs_qgemm(monkeypatch):
    monkeypatch.delenv("TNN_CPU_VARIANT", raising=False)
    monkeypatch.setenv("TNN_CPU_KERNELS", "fgemm,head_loss")
    assert choice("qgemm") == "none" and choice("adamw") == "none"
    assert choice("head_loss") == "none"  # it multiplies by qgemm's packed panels
    assert choice("fgemm") == best("fgemm")
    monkeypatch.setenv("TNN_CPU_KERNELS", "qgemm,head_loss")
    assert choice("head_loss") == best("head_loss")


def tiny_llama_desc():
    desc = ffi.new("tnn_model_desc *")
    arch = ffi.new("char[]", b"llama")
    desc.arch = arch
    c = desc.config
    c.vocab, c.d_model, c.n_layers, c.n_heads, c.n_kv_heads, c.d_ff = 32, 32, 1, 4, 2, 64
    c.t_seq, c.t_batch, c.rope_base, c.norm_eps, c.init_scale, c.seed = 8, 1, 10000.0, 1e-5, 0.02, 1
    return desc, arch


@pytest.mark.parametrize("setting, ok", [("off", True), ("qgemm,adamw", True), ("fgemm,sgemm", False), ("no", False)])
def test_realize_refuses_a_setting_it_cannot_read(monkeypatch, setting, ok):
    monkeypatch.setenv("TNN_CPU_KERNELS", setting)
    session = ffi.new("tnn_session **")
    check(lib.tnn_session_new(1, session))
    try:
        desc, _arch = tiny_llama_desc()
        status = lib.tnn_realize(session[0], desc, ffi.new("int32_t[2]"))
        if ok:
            check(status)
        else:
            assert status == 1  # TNN_ERR_ARG
            message = ffi.string(lib.tnn_last_error()).decode()
            assert (
                "TNN_CPU_KERNELS" in message
                and "qgemm, fgemm, head_loss, adamw, fgemm_bf16, attention_bf16, activations, recurrent" in message
            )
    finally:
        lib.tnn_session_free(session[0])


def test_no_variant_named_none_pretends_to_compute():
    y = np.zeros(16, np.float32)
    status = lib.tnn_kernel_check_qgemm(
        b"none", 0, 2, ffi.new("char[34]"), 16, 32, f32(np.ones(32, np.float32)), 1, f32(y), 1
    )
    assert status == 1 and "no variant named 'none'" in ffi.string(lib.tnn_last_error()).decode()


# ---- qgemm ----------------------------------------------------------------------


def activation_bound(a: np.ndarray, x: np.ndarray, levels: int) -> np.ndarray:
    """The most a product can be off once each block of 32 of a column is
    quantized: half a step (max|x| / 127, over 256 more for two levels)
    per value, times the weights it meets. [rows, n]."""
    k = x.shape[1]
    blocks = np.abs(x.reshape(x.shape[0], k // 32, 32)).max(axis=2) / 127 / 2  # [n, kb]
    if levels == 2:
        blocks = blocks / 256
    weight = np.abs(a).reshape(a.shape[0], k // 32, 32).sum(axis=2)  # [rows, kb]
    return weight @ blocks.T


@pytest.mark.parametrize("variant", VARIANTS["qgemm"])
@pytest.mark.parametrize("qtype", ["q8_0", "q4_1"])
@pytest.mark.parametrize("levels", [1, 2])
@pytest.mark.parametrize("rows, k", [(16, 32), (48, 96), (80, 160)])
def test_qgemm_is_the_dequantized_product_within_the_activation_rounding(variant, qtype, levels, rows, k):
    need("qgemm", variant)
    rng = np.random.default_rng(rows + k + levels)
    blocks, a = quantized(rng.standard_normal((rows, k)).astype(np.float32), qtype)
    for n in (1, 3, 12, 17, 33):
        x = (rng.standard_normal((n, k)) * rng.uniform(0.1, 10, size=(n, 1))).astype(np.float32)
        exact = x.astype(np.float64) @ a.T  # [n, rows]
        bound = activation_bound(a, x.astype(np.float64), levels).T
        outputs = []
        for nth in (1, 2, 3):
            y = np.full((n, rows), np.nan, np.float32)
            check(
                lib.tnn_kernel_check_qgemm(
                    variant.encode(), qtype == "q4_1", levels, ffi.from_buffer(blocks), rows, k, f32(x), n, f32(y), nth
                )
            )
            outputs.append(y)
        # the float sums round too: a few units in the last place of the terms
        slack = 1e-5 * (np.abs(x) @ np.abs(a).T)
        assert np.all(np.abs(outputs[0] - exact) <= bound + slack), (n, np.abs(outputs[0] - exact).max())
        for y in outputs[1:]:
            np.testing.assert_array_equal(y, outputs[0])  # the same bits whatever the split


@pytest.mark.parametrize("variant", VARIANTS["qgemm"])
def test_qgemm_two_levels_are_some_hundred_times_closer_than_one(variant):
    """The accuracy qgemm's header states: about 0.4% off a product with one
    level (ggml's), about 3e-5 with two."""
    need("qgemm", variant)
    rng = np.random.default_rng(7)
    blocks, a = quantized(rng.standard_normal((64, 576)).astype(np.float32), "q8_0")
    x = rng.standard_normal((24, 576)).astype(np.float32)
    exact = x.astype(np.float64) @ a.T
    errors = {}
    for levels in (1, 2):
        y = np.empty((24, 64), np.float32)
        check(
            lib.tnn_kernel_check_qgemm(
                variant.encode(), 0, levels, ffi.from_buffer(blocks), 64, 576, f32(x), 24, f32(y), 1
            )
        )
        errors[levels] = np.linalg.norm(y - exact) / np.linalg.norm(exact)
    assert 1e-3 < errors[1] < 1e-2
    assert errors[2] < 1e-4


@pytest.mark.parametrize("variant", VARIANTS["qgemm"])
def test_qgemm_refuses_shapes_that_fill_no_panel(variant):
    need("qgemm", variant)
    y = np.zeros(64, np.float32)
    x = np.zeros(64, np.float32)
    for rows, k in ((8, 32), (16, 48)):
        status = lib.tnn_kernel_check_qgemm(
            variant.encode(), 0, 1, ffi.new("char[]", 4096), rows, k, f32(x), 1, f32(y), 1
        )
        assert status == 1 and "multiple of" in ffi.string(lib.tnn_last_error()).decode()


# ---- fgemm ----------------------------------------------------------------------


def float_sum_bound(a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    """A float32 sum of k products is within k units of rounding of the sum
    of their magnitudes (in any order, fused or not)."""
    return (k + 2) * 2.0**-24 * (np.abs(a) @ np.abs(b).T) + 1e-30


@pytest.mark.parametrize("variant", VARIANTS["fgemm"])
@pytest.mark.parametrize("a_by_k", [False, True])
@pytest.mark.parametrize("b_by_k", [False, True])
@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (31, 7, 13), (33, 300, 25), (70, 513, 11), (96, 256, 37)])
def test_fgemm_is_the_float64_product_within_float32_rounding(variant, a_by_k, b_by_k, m, k, n):
    need("fgemm", variant)
    rng = np.random.default_rng(m * 1000 + k + n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((n, k)).astype(np.float32)
    a_in = np.ascontiguousarray(a.T if a_by_k else a)  # by_k: the operand as its transpose lies
    b_in = np.ascontiguousarray(b.T if b_by_k else b)
    exact = a.astype(np.float64) @ b.T.astype(np.float64)  # [m, n]
    outputs = []
    for nth in (1, 2, 5):
        c = np.full((n, m), np.nan, np.float32)  # column j: C[:, j]
        check(lib.tnn_kernel_check_fgemm(variant.encode(), f32(a_in), a_by_k, m, k, f32(b_in), b_by_k, n, f32(c), nth))
        outputs.append(c)
    assert np.all(np.abs(outputs[0].T - exact) <= float_sum_bound(a, b, k))
    for c in outputs[1:]:
        np.testing.assert_array_equal(c, outputs[0])  # summed over k in order whatever the threads


def bfloat16(x: np.ndarray) -> np.ndarray:
    """float32 rounded to bfloat16 (to nearest, ties to even), as float64."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32).view(np.float32).astype(np.float64)


def summed_in_order(a: np.ndarray, b: np.ndarray, start: np.ndarray | None = None) -> np.ndarray:
    """C [m, n] = A [m, k] B [n, k]^T as fgemm_bf16 sums it: operands in
    bfloat16, c = ((a_0 b_0 + a_1 b_1) + a_2 b_2) + ... in float32, each add
    rounded (the products of two bfloat16 are exact in float32); from start
    rather than zero where given (accumulate)."""
    a16, b16 = bfloat16(a).astype(np.float32), bfloat16(b).astype(np.float32)
    c = np.zeros((a.shape[0], b.shape[0]), np.float32) if start is None else start.astype(np.float32).copy()
    for t in range(a.shape[1]):
        c += np.outer(a16[:, t], b16[:, t])
    return c


@pytest.mark.parametrize("variant", VARIANTS["fgemm_bf16"])
@pytest.mark.parametrize("a_by_k", [False, True])
@pytest.mark.parametrize("b_by_k", [False, True])
# k = 1100: past the amx variant's 1024-deep slice (TNN_FGEMM_BF16_AMX_DEPTH), its last step part empty
@pytest.mark.parametrize(
    "m, k, n", [(1, 1, 1), (31, 7, 13), (33, 300, 25), (70, 513, 40), (600, 64, 33), (40, 1100, 35)]
)
def test_fgemm_bf16_is_the_product_of_bfloat16_operands_summed_in_float32(variant, a_by_k, b_by_k, m, k, n):
    """--precision bf16's dense products: A and B rounded to bfloat16, the
    products (exact in float32) summed in float32, in order of k."""
    need("fgemm_bf16", variant)
    rng = np.random.default_rng(m * 1000 + k + n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((n, k)).astype(np.float32)
    a_in = np.ascontiguousarray(a.T if a_by_k else a)
    b_in = np.ascontiguousarray(b.T if b_by_k else b)
    exact = bfloat16(a) @ bfloat16(b).T
    outputs = []
    for nth, a_stored_bf16 in ((1, 0), (2, 0), (5, 0), (2, 1)):
        c = np.full((n, m), np.nan, np.float32)
        check(
            lib.tnn_kernel_check_fgemm_bf16(
                variant.encode(), f32(a_in), a_by_k, a_stored_bf16, m, k, f32(b_in), b_by_k, n, 0, f32(c), nth
            )
        )
        outputs.append(c)
    assert np.all(np.abs(outputs[0].T - exact) <= float_sum_bound(a, b, k))
    # and about bfloat16's 8 bits off the float32 product, no further
    assert np.abs(outputs[0].T - a.astype(np.float64) @ b.T).max() <= 2**-7 * (np.abs(a) @ np.abs(b).T).max()
    # the same bits for any thread count, and with A handed over in bfloat16 (a frozen base's copy)
    for c in outputs[1:]:
        np.testing.assert_array_equal(c, outputs[0])
    if variant == "avx512":  # the order is the kernel's contract; the AMX tiles sum their own way (kernels.h)
        np.testing.assert_array_equal(outputs[0].T, summed_in_order(a, b))


@pytest.mark.parametrize("a_by_k", [False, True])
# past a 1024-deep slice of k (1088), and of W's columns when A = W^T (m = 1056)
@pytest.mark.parametrize("m, k, n", [(32, 32, 5), (96, 1088, 40), (1056, 96, 33), (64, 2080, 17)])
def test_fgemm_bf16_reads_a_frozen_matrix_in_the_amx_tiles_with_the_same_bits(a_by_k, m, k, n):
    """A frozen base's bfloat16 copy made once in fgemm_bf16_amx's own
    layout: the forward W x reads its tiles in place, the input gradient
    W^T dy transposes them; either way the same bits as W in bfloat16 rows,
    for any thread count."""
    need("fgemm_bf16", "amx")
    rng = np.random.default_rng(m + k + n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((n, k)).astype(np.float32)
    a_in = np.ascontiguousarray(a.T if a_by_k else a)
    outputs = []
    for nth, a_stored_bf16 in ((1, 1), (1, 2), (2, 2), (3, 2)):
        c = np.full((n, m), np.nan, np.float32)
        check(
            lib.tnn_kernel_check_fgemm_bf16(
                b"amx", f32(a_in), a_by_k, a_stored_bf16, m, k, f32(b), 0, n, 0, f32(c), nth
            )
        )
        outputs.append(c)
    assert np.all(np.abs(outputs[0].T - bfloat16(a) @ bfloat16(b).T) <= float_sum_bound(a, b, k))
    for c in outputs[1:]:
        np.testing.assert_array_equal(c, outputs[0])


def test_every_tensor_in_a_cpu_buffer_starts_a_cache_line():
    """vendor patch 0014: ggml placed tensors 32 bytes apart, and a kernel's
    64-byte rows (an AMX tile's, a register's) from the middle of a line
    read and wrote two lines each (85% of a LoRA step's products did)."""
    misaligned = ffi.new("int32_t *")
    check(lib.tnn_kernel_check_tensor_alignment(20, misaligned))
    assert misaligned[0] == 0


def test_fgemm_bf16_tiles_refuse_a_matrix_not_in_whole_panels():
    need("fgemm_bf16", "amx")
    a, b, c = np.ones((40, 64), np.float32), np.ones((8, 64), np.float32), np.zeros((8, 40), np.float32)
    assert lib.tnn_kernel_check_fgemm_bf16(b"amx", f32(a), 0, 2, 40, 64, f32(b), 0, 8, 0, f32(c), 1) != 0
    assert "multiples of 32" in ffi.string(lib.tnn_last_error()).decode()


@pytest.mark.parametrize("variant", VARIANTS["fgemm_bf16"])
@pytest.mark.parametrize("m, k, n", [(31, 7, 13), (70, 513, 40), (40, 1100, 35)])
def test_fgemm_bf16_accumulating_adds_the_product_to_what_c_holds(variant, m, k, n):
    """accumulate: c += A B^T, each sum starting from c's value: how one node
    computes a sum of two products (a LoRA layer's W x + B (A x)) without
    writing either product on its own."""
    need("fgemm_bf16", variant)
    rng = np.random.default_rng(m + k + n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((n, k)).astype(np.float32)
    start = rng.standard_normal((n, m)).astype(np.float32)
    outputs = []
    for nth in (1, 2, 5):
        c = start.copy()
        check(lib.tnn_kernel_check_fgemm_bf16(variant.encode(), f32(a), 0, 0, m, k, f32(b), 0, n, 1, f32(c), nth))
        outputs.append(c)
    exact = start.T.astype(np.float64) + bfloat16(a) @ bfloat16(b).T
    bound = float_sum_bound(a, b, k + 1) + (k + 3) * 2.0**-24 * np.abs(start.T)  # k + 1 terms
    assert np.all(np.abs(outputs[0].T - exact) <= bound)
    for c in outputs[1:]:
        np.testing.assert_array_equal(c, outputs[0])
    if variant == "avx512":
        np.testing.assert_array_equal(outputs[0].T, summed_in_order(a, b, start.T))


def causal_attention(q, k, v, dout, group: int, scale: float):
    """Causal attention and its backward in float64, query matrix m reading
    key and value matrix m // group: out, lse (log2 of the sum of
    exp(scores)), dq, dk, dv."""
    n_queries, t, _ = q.shape
    hidden = np.triu(np.ones((t, t), bool), 1)  # keys after the query
    out, lse, dq = np.zeros_like(q), np.zeros((n_queries, t)), np.zeros_like(q)
    dk, dv = np.zeros_like(k), np.zeros_like(v)
    for m in range(n_queries):
        kv = m // group
        s = np.where(hidden, -np.inf, scale * q[m] @ k[kv].T)
        top = s.max(axis=1, keepdims=True)
        e = np.exp(s - top)
        p = e / e.sum(axis=1, keepdims=True)
        lse[m] = (np.log(e.sum(axis=1)) + top[:, 0]) / np.log(2.0)
        out[m] = p @ v[kv]
        dp = dout[m] @ v[kv].T
        ds = p * (dp - (dp * p).sum(axis=1, keepdims=True))
        dq[m] = scale * ds @ k[kv]
        dk[kv] += scale * ds.T @ q[m]
        dv[kv] += p.T @ dout[m]
    return out, lse, dq, dk, dv


@pytest.mark.parametrize("variant", VARIANTS["attention_bf16"])
# a single token; a sequence short of a block; two blocks and a part (GQA
# groups of 2 and 3); four whole blocks
@pytest.mark.parametrize(
    "head_dim, t, n_queries, group", [(32, 1, 1, 1), (64, 50, 2, 1), (64, 150, 4, 2), (128, 130, 3, 3), (32, 256, 2, 2)]
)
def test_attention_bf16_is_causal_attention_and_its_gradients(variant, head_dim, t, n_queries, group):
    """--precision bf16's attention a block at a time: the output, each
    query's log-sum-exp and the gradients of q, k and v are those of float64
    causal attention on q, k, v and dout rounded to bfloat16, to float32's
    rounding (the softmax weights and their gradients go into the products
    as two bfloat16 terms each); out, lse, dk and dv the same bits for any
    thread count (dq sums the threads' parts)."""
    need("attention_bf16", variant)
    rng = np.random.default_rng(head_dim * t + n_queries)
    q = rng.standard_normal((n_queries, t, head_dim)).astype(np.float32)
    k = rng.standard_normal((n_queries // group, t, head_dim)).astype(np.float32)
    v = rng.standard_normal((n_queries // group, t, head_dim)).astype(np.float32)
    dout = rng.standard_normal((n_queries, t, head_dim)).astype(np.float32)
    scale = 1.0 / np.sqrt(head_dim)
    results = []
    for nth in (1, 2, 3):
        out, dq = np.full_like(q, np.nan), np.full_like(q, np.nan)
        dk, dv = np.full_like(k, np.nan), np.full_like(v, np.nan)
        lse = np.full((n_queries, t), np.nan, np.float32)
        check(
            lib.tnn_kernel_check_attention_bf16(
                variant.encode(),
                f32(q),
                f32(k),
                f32(v),
                head_dim,
                t,
                n_queries,
                group,
                scale,
                f32(dout),
                f32(out),
                f32(lse),
                f32(dq),
                f32(dk),
                f32(dv),
                nth,
            )
        )
        results.append((out, lse, dq, dk, dv))
    exact = causal_attention(*(bfloat16(x).reshape(x.shape) for x in (q, k, v, dout)), group, scale)
    names = ("out", "lse", "dq", "dk", "dv")
    for name, ours, theirs in zip(names, results[0], exact, strict=True):
        # measured: 1.6e-5 of the largest value at most (dk), lse 9e-8; one
        # token's dq and dk are zeros, ours within float32's rounding
        err = np.abs(ours - theirs).max() / (np.abs(theirs).max() + 1e-2)
        assert err <= (1e-6 if name == "lse" else 1e-4), (name, err)
    for other in results[1:]:
        for name, ours, theirs in zip(names, results[0], other, strict=True):
            if name == "dq":
                np.testing.assert_allclose(theirs, ours, rtol=0, atol=1e-6 * np.abs(ours).max())
            else:
                np.testing.assert_array_equal(theirs, ours, err_msg=name)


@pytest.mark.parametrize("variant", VARIANTS["fgemm"])
@pytest.mark.parametrize("m", [1, 4, 7, 16])
@pytest.mark.parametrize("n, k", [(1, 1), (15, 9), (17, 64), (100, 33)])
def test_fgemm_skinny_is_the_low_rank_weight_gradient(variant, m, n, k):
    """dB [m, n] = h [m, k] dy [n, k]^T from h and dy as the forward left
    them (k outermost)."""
    need("fgemm", variant)
    rng = np.random.default_rng(m * 100 + n + k)
    h = rng.standard_normal((k, m)).astype(np.float32)  # x[t * m + j] = X[j, t]
    dy = rng.standard_normal((k, n)).astype(np.float32)  # y[t * n + i] = Y[i, t]
    exact = h.T.astype(np.float64) @ dy.astype(np.float64)  # [m, n]
    outputs = []
    for nth in (1, 3):
        c = np.full((n, m), np.nan, np.float32)
        check(lib.tnn_kernel_check_fgemm_skinny(variant.encode(), f32(h), m, f32(dy), n, k, f32(c), nth))
        outputs.append(c)
    assert np.all(np.abs(outputs[0].T - exact) <= float_sum_bound(h.T, dy.T, k))
    np.testing.assert_array_equal(outputs[1], outputs[0])


def stored_rows(rng, d_in: int, d_out: int, qtype: str) -> tuple[np.ndarray, np.ndarray]:
    """W [d_out rows of d_in] as a GGUF stores it in qtype (ggml's own
    quantizer: tnn_kernel_quantize_rows), and the float64 matrix it holds."""
    w = rng.standard_normal((d_out, d_in)).astype(np.float32)
    if qtype == "f16":
        return w.astype(np.float16).view(np.uint8), w.astype(np.float16).astype(np.float64)
    kind = GGMLQuantizationType[qtype.upper()]
    block, size = GGML_QUANT_SIZES[kind]
    rows = np.zeros((d_out, d_in // block * size), np.uint8)
    check(lib.tnn_kernel_quantize_rows(qtype.encode(), f32(w), d_out, d_in, ffi.from_buffer(rows)))
    return rows, quants.dequantize(rows, kind).astype(np.float64)


@pytest.mark.parametrize("variant", VARIANTS["fgemm"])
@pytest.mark.parametrize("qtype, d_in", [("q4_K", 512), ("q6_K", 256), ("q8_0", 96), ("q4_1", 64), ("f16", 32)])
@pytest.mark.parametrize("d_out, n", [(40, 1), (2100, 13)])
def test_the_input_gradient_through_a_stored_matrix_is_its_float64_product(variant, qtype, d_in, d_out, n):
    """dx = W^T dy with W as stored, dequantized a block of columns at a
    time (tinynn/graph/stored_products.c): d_out past one chunk of 1024 rows,
    a single column, and any thread count giving the same bits."""
    need("fgemm", variant)
    rng = np.random.default_rng(d_in + d_out + n)
    rows, w = stored_rows(rng, d_in, d_out, qtype)
    dy = rng.standard_normal((n, d_out)).astype(np.float32)  # dy[j * d_out + k]
    exact = w.T @ dy.T.astype(np.float64)  # [d_in, n]
    outputs = []
    for nth in (1, 2, 5):
        dx = np.full((n, d_in), np.nan, np.float32)
        rows_buffer = ffi.from_buffer("char[]", np.ascontiguousarray(rows))
        check(lib.tnn_kernel_check_stored_gradient(variant.encode(), qtype.encode(), rows_buffer, d_in, d_out,
                                                   f32(dy), n, f32(dx), nth))  # fmt: skip
        outputs.append(dx)
    assert np.all(np.abs(outputs[0].T - exact) <= float_sum_bound(w.T, dy, d_out))
    for dx in outputs[1:]:
        np.testing.assert_array_equal(dx, outputs[0])


def q4_0_as_q4_1(rows: np.ndarray) -> np.ndarray:
    """Q4_0 blocks {fp16 d; 16 bytes} as the Q4_1 blocks {d; m = -8 d; the
    same bytes} they equal."""
    blocks = rows.reshape(-1, 18)
    d = blocks[:, :2].copy().view(np.float16)
    m = (np.float16(-8) * d).view(np.uint8)
    return np.concatenate([blocks[:, :2], m, blocks[:, 2:]], axis=1).reshape(rows.shape[0], -1)


def copies_product(variant, rows, w, qtype, transposed, x, levels) -> np.ndarray:
    """qgemm by the copy frozen_copies.c makes of W (stored rows; w its
    float64 values [d_out, d_in]) or of W^T: W as stored for q4_1 and q8_0,
    q4_0 as q4_1, Q8_0 blocks of its values for the rest; W^T always Q8_0
    blocks. x [n, k] -> [n, rows]."""
    a = w.T if transposed else w
    if transposed or qtype not in ("q8_0", "q4_1", "q4_0"):
        blocks, _ = quantized(a.astype(np.float32), "q8_0")
        q4_1 = False
    else:
        blocks = q4_0_as_q4_1(rows) if qtype == "q4_0" else np.ascontiguousarray(rows)
        q4_1 = qtype != "q8_0"
    y = np.full((x.shape[0], a.shape[0]), np.nan, np.float32)
    check(lib.tnn_kernel_check_qgemm(variant.encode(), q4_1, levels, ffi.from_buffer(np.ascontiguousarray(blocks)),
                                     a.shape[0], a.shape[1], f32(x), x.shape[0], f32(y), 1))  # fmt: skip
    return y


# every type a GGUF stores its matrices in that ggml quantizes without an
# importance matrix: the K-quants' 256 and the rest's 32 values a block
STORED_SHAPES = [
    ("q2_K", 512, 64),
    ("q3_K", 256, 64),
    ("q4_K", 512, 64),
    ("q5_K", 256, 32),
    ("q6_K", 256, 96),
    ("q5_0", 96, 64),
    ("q5_1", 64, 96),
    ("q4_0", 64, 32),
    ("q4_1", 64, 32),
    ("iq4_nl", 64, 32),
    ("iq4_xs", 256, 32),
    ("mxfp4", 64, 32),
    ("bf16", 32, 64),
]


@pytest.mark.parametrize("variant", VARIANTS["qgemm"])
@pytest.mark.parametrize("qtype, d_in, d_out", [*STORED_SHAPES, ("q8_0", 96, 64), ("f16", 32, 64)])
@pytest.mark.parametrize("transposed", [False, True])
def test_qgemm_on_a_stored_matrix_is_the_copies_product(variant, qtype, d_in, d_out, transposed):
    """Products straight from the stored blocks (tinynn/models/stored_panels.c:
    the panels packed a pass at a time inside the product): W x, or W^T x
    for the input gradient, the same bits as qgemm on the copies of W or W^T
    made once, for any thread count; within the int8 rounding of the
    float64 product of the matrix the blocks hold."""
    need("qgemm", variant)
    if qtype == "f16" and not transposed:
        pytest.skip("an F16 matrix forwards through ggml's own products")
    rng = np.random.default_rng(d_in + d_out + transposed)
    rows_, w = stored_rows(rng, d_in, d_out, qtype)
    a = w.T if transposed else w  # [rows, k]
    levels = 1 if transposed else 2
    for n in (1, 13):
        x = (rng.standard_normal((n, a.shape[1])) * rng.uniform(0.1, 10, size=(n, 1))).astype(np.float32)
        expected = copies_product(variant, rows_, w, qtype, transposed, x, levels)
        exact = x.astype(np.float64) @ a.T
        np.testing.assert_allclose(expected, exact, atol=2e-2 * np.abs(exact).max(), err_msg="float64")
        for nth in (1, 2, 3):
            y = np.full((n, a.shape[0]), np.nan, np.float32)
            rows_buffer = ffi.from_buffer("char[]", np.ascontiguousarray(rows_))
            check(lib.tnn_kernel_check_stored_qgemm(variant.encode(), qtype.encode(), rows_buffer, d_in, d_out,
                                                    transposed, levels, f32(x), n, f32(y), nth))  # fmt: skip
            np.testing.assert_array_equal(y, expected, err_msg=f"n {n}, {nth} threads")


@pytest.mark.parametrize("qtype, d_in, d_out", [("q4_K", 512, 64), ("q8_0", 96, 64), ("mxfp4", 64, 32)])
@pytest.mark.parametrize("transposed", [False, True])
def test_ggml_s_own_product_the_benchmarks_hold_toy_to_is_the_float64_product(qtype, d_in, d_out, transposed):
    """tnn_kernel_check_ggml_product, benchmarks/bench_kernels.py's anchor:
    ggml's mul_mat (W x) or out_prod (W^T x, its backward of mul_mat) on
    the stored blocks, within ggml's own rounding of x."""
    rng = np.random.default_rng(d_in)
    rows_, w = stored_rows(rng, d_in, d_out, qtype)
    a = w.T if transposed else w
    x = rng.standard_normal((13, a.shape[1])).astype(np.float32)
    y = np.full((13, a.shape[0]), np.nan, np.float32)
    check(lib.tnn_kernel_check_ggml_product(qtype.encode(), ffi.from_buffer(rows_), d_in, d_out, transposed, f32(x),
                                            13, f32(y), 2))  # fmt: skip
    exact = x.astype(np.float64) @ a.T
    np.testing.assert_allclose(y, exact, atol=2e-2 * np.abs(exact).max())


def test_a_stored_gradient_refuses_a_width_its_blocks_do_not_fill():
    dx = np.zeros(64, np.float32)
    status = lib.tnn_kernel_check_stored_gradient(b"avx2", b"q4_K", ffi.NULL, 64, 1, f32(dx), 1, f32(dx), 1)
    assert status != 0 and "multiple of its block width" in ffi.string(lib.tnn_last_error()).decode()


@pytest.mark.parametrize("variant", VARIANTS["fgemm"])
def test_fgemm_skinny_refuses_a_rank_above_16(variant):
    need("fgemm", variant)
    x = np.zeros(17, np.float32)
    c = np.zeros(17, np.float32)
    assert lib.tnn_kernel_check_fgemm_skinny(variant.encode(), f32(x), 17, f32(x), 1, 1, f32(c), 1) == 1


# ---- head_loss --------------------------------------------------------------------


def softmax_cross_entropy(z: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per token loss [n] and the gradient of their mean over all n tokens
    with respect to z [n, vocab]; a token labelled -1 counts for nothing."""
    n = z.shape[0]
    shifted = z - z.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    labelled = labels >= 0
    loss = np.where(labelled, -log_p[np.arange(n), np.maximum(labels, 0)], 0.0)
    dz = np.exp(log_p)
    dz[np.arange(n), np.maximum(labels, 0)] -= 1
    dz[~labelled] = 0
    return loss, dz / n


def head_loss_outputs(n: int, d: int, run) -> np.ndarray:
    """head_loss's out [n, d + 1] from run(out, nth), the same bits with 1,
    2 and 4 threads."""
    outputs = []
    for nth in (1, 2, 4):
        out = np.full((n, d + 1), np.nan, np.float32)
        check(run(out, nth))
        outputs.append(out)
    for other in outputs[1:]:
        np.testing.assert_array_equal(other, outputs[0])
    return outputs[0]


@pytest.mark.parametrize("variant", VARIANTS["head_loss"])
@pytest.mark.parametrize("qtype", ["q8_0", "q4_1"])
@pytest.mark.parametrize("d, vocab, n", [(32, 32, 2), (96, 160, 7), (64, 544, 53), (160, 96, 100)])
def test_head_loss_gives_each_tokens_loss_and_its_gradient(variant, qtype, d, vocab, n):
    need("head_loss", variant)
    rng = np.random.default_rng(d + vocab + n)
    w = (rng.standard_normal((vocab, d)) * 0.5).astype(np.float32)  # the head, row v: W[:, v]
    w_blocks, w_held = quantized(w, qtype)
    wt_blocks, wt_held = quantized(np.ascontiguousarray(w_held.T.astype(np.float32)), "q8_0")
    h = rng.standard_normal((n, d)).astype(np.float32)
    labels = rng.integers(0, vocab, size=n).astype(np.int32)
    labels[::3] = -1  # masked (a prompt)
    if n > 5:
        labels[5] = vocab + 1  # out of range: masked too
    loss, dz = softmax_cross_entropy(h.astype(np.float64) @ w_held.T, np.where(labels < vocab, labels, -1))
    dh = dz @ wt_held.T  # [n, d]
    w_in, wt_in = ffi.from_buffer(w_blocks), ffi.from_buffer(wt_blocks)
    out = head_loss_outputs(
        n,
        d,
        lambda out, nth: lib.tnn_kernel_check_head_loss(
            variant.encode(),
            qtype == "q4_1",
            w_in,
            wt_in,
            d,
            vocab,
            f32(h),
            ffi.from_buffer("int32_t[]", labels),
            n,
            f32(out),
            nth,
        ),
    )
    # the logits come from qgemm in two int8 levels, each within its
    # activation bound; a loss (logsumexp(z) - z[label]) moves at most twice
    # as far as the farthest logit
    z_bound = activation_bound(w_held, h.astype(np.float64), 2).max(axis=0)  # [n]
    assert np.all(np.abs(out[:, d] - loss) <= 2 * z_bound + 1e-5 * (1 + loss)), np.abs(out[:, d] - loss).max()
    masked = (labels < 0) | (labels >= vocab)
    assert np.all(out[masked] == 0)
    # dL/dh through W^T in two levels of dz (measured: 1.3e-4 of the
    # largest at worst, 8e-5 in norm)
    scale = np.abs(dh).max()
    np.testing.assert_allclose(out[:, :d], dh, rtol=0, atol=5e-4 * scale)
    assert np.linalg.norm(out[:, :d] - dh) <= 3e-4 * np.linalg.norm(dh)


@pytest.mark.parametrize("variant", VARIANTS["head_loss"])
@pytest.mark.parametrize("products", VARIANTS["fgemm_bf16"])
@pytest.mark.parametrize("d, vocab, n", [(32, 32, 2), (50, 300, 60), (96, 1100, 7), (40, 100, 200), (48, 2500, 530)])
def test_head_loss_in_bfloat16_gives_each_tokens_loss_and_its_gradient(variant, products, d, vocab, n):
    """--precision bf16's head: both products through fgemm_bf16 on the
    head's bfloat16 copy, a block of the vocabulary at a time (1024 rows:
    TNN_HEAD_LOSS_BLOCK_BF16), any d and vocab, more tokens than one chunk
    (TNN_HEAD_LOSS_CHUNK_BF16, 512)."""
    need("head_loss", variant)
    need("fgemm_bf16", products)
    rng = np.random.default_rng(d + vocab + n)
    w = (rng.standard_normal((vocab, d)) * 0.5).astype(np.float32)  # the head, row v: W[:, v]
    w16 = bfloat16(w)
    words = (np.ascontiguousarray(w16, np.float32).view(np.uint32) >> 16).astype(np.uint16)
    h = rng.standard_normal((n, d)).astype(np.float32)
    labels = rng.integers(0, vocab, size=n).astype(np.int32)
    labels[::3] = -1  # masked (a prompt)
    loss, dz = softmax_cross_entropy(bfloat16(h) @ w16.T, labels)
    w_in = ffi.from_buffer("uint16_t[]", words)
    out = head_loss_outputs(
        n,
        d,
        lambda out, nth: lib.tnn_kernel_check_head_loss_bf16(
            variant.encode(),
            products.encode(),
            w_in,
            d,
            vocab,
            f32(h),
            ffi.from_buffer("int32_t[]", labels),
            n,
            f32(out),
            nth,
        ),
    )
    # the logits are float32 sums of exact products; a loss moves at most twice as far as its farthest logit
    z_bound = float_sum_bound(bfloat16(h), w16, d).max(axis=1)  # [n]
    assert np.all(np.abs(out[:, d] - loss) <= 2 * z_bound + 1e-5 * (1 + loss)), np.abs(out[:, d] - loss).max()
    assert np.all(out[labels < 0] == 0)
    # dL/dh = W^T dz with dz rounded to bfloat16 (half an ulp: 2^-9 of each value), summed in float32
    dh = dz @ w16
    bound = 2**-8 * (np.abs(dz) @ np.abs(w16)) + 1e-6 * np.abs(dh).max()
    assert np.all(np.abs(out[:, :d] - dh) <= bound), np.abs(out[:, :d] - dh).max()


@pytest.mark.parametrize("variant", VARIANTS["head_loss"])
def test_token_loss_of_held_logits_is_the_cross_entropy(variant):
    need("head_loss", variant)
    rng = np.random.default_rng(3)
    for vocab in (1, 15, 17, 256, 1000):
        z = (rng.standard_normal((9, vocab)) * 8).astype(np.float32)
        z[0, 0] = 90.0  # one logit far above the rest
        labels = rng.integers(0, vocab, size=9).astype(np.int32)
        labels[4] = -1
        loss = np.full(9, np.nan, np.float32)
        check(
            lib.tnn_kernel_check_token_loss(
                variant.encode(), f32(z), vocab, ffi.from_buffer("int32_t[]", labels), 9, f32(loss)
            )
        )
        exact, _ = softmax_cross_entropy(z.astype(np.float64), labels)
        np.testing.assert_allclose(loss, exact, rtol=2e-6, atol=2e-6)
        assert loss[4] == 0.0


# ---- adamw ------------------------------------------------------------------------


def fma32(a, b, c):
    """float32 a * b + c rounded once, as an FMA rounds: the product is
    exact in float64, and the sum's float64 rounding error (two-sum) breaks
    the ties a second rounding would get wrong."""
    a, b, c = (np.asarray(v, np.float32).astype(np.float64) for v in (a, b, c))
    p = a * b
    s = p + c
    bb = s - p
    err = (p - (s - bb)) + (c - bb)
    r = s.astype(np.float32)
    lo = np.where(r.astype(np.float64) > s, np.nextafter(r, np.float32(-np.inf)), r)
    hi = np.nextafter(lo, np.float32(np.inf))
    tie = (lo.astype(np.float64) + hi.astype(np.float64)) / 2 == s
    return np.where(tie & (err > 0), hi, np.where(tie & (err < 0), lo, r)).astype(np.float32)


def adamw_reference(w, g, m, v, hp):
    """ggml's opt_step_adamw (ggml-cpu/ops.cpp) in float32, with the
    multiply-adds its build fuses (keep, m, v and w) fused."""
    alpha, beta1, beta2, eps, wd, beta1h, beta2h = (np.float32(x) for x in hp)
    one = np.float32(1)
    keep = fma32(-alpha, wd, one)
    m = fma32(beta1, m, g * (one - beta1))
    v = fma32(beta2, v, (g * g) * (one - beta2))
    mh = m * beta1h
    vh = np.sqrt(v * beta2h) + eps
    w = fma32(w, keep, -(alpha * mh / vh))
    return w, m, v


@pytest.mark.parametrize("variant", VARIANTS["adamw"])
@pytest.mark.parametrize("n", [1, 15, 17, 1000, 4099])
def test_adamw_is_ggmls_update_to_the_bit(variant, n):
    need("adamw", variant)
    rng = np.random.default_rng(n)
    w0 = rng.standard_normal(n).astype(np.float32)
    m0 = (rng.standard_normal(n) * 0.1).astype(np.float32)
    v0 = (rng.random(n) * 0.01).astype(np.float32)
    for step in (1, 7):
        g = (rng.standard_normal(n) * 10.0 ** rng.uniform(-6, 1, n)).astype(np.float32)
        beta1, beta2 = 0.9, 0.999
        hp = np.array([1e-3, beta1, beta2, 1e-8, 0.1, 1 / (1 - beta1**step), 1 / (1 - beta2**step)], np.float32)
        expected = adamw_reference(w0, g, m0, v0, hp)
        for nth in (1, 3):
            w, m, v = w0.copy(), m0.copy(), v0.copy()
            check(lib.tnn_kernel_check_adamw(variant.encode(), f32(w), f32(g), f32(m), f32(v), f32(hp), n, nth))
            for ours, theirs in zip((w, m, v), expected, strict=True):
                np.testing.assert_array_equal(ours.view(np.uint32), theirs.view(np.uint32))


@pytest.mark.parametrize("variant", VARIANTS["activations"])
@pytest.mark.parametrize("n", [1, 17, 4099])
def test_swiglu_back_is_swiglus_gradient_to_a_few_ulps(variant, n):
    """The gradients of silu(g) up against float64, over inputs from -100 to
    100 (the sigmoid's saturated ends included), for any thread count."""
    need("activations", variant)
    rng = np.random.default_rng(n)
    g = (rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 2, n)).astype(np.float32)
    up, dy = rng.standard_normal((2, n)).astype(np.float32)
    x = g.astype(np.float64)
    s = 1.0 / (1.0 + np.exp(-x))
    dy_up = (dy * up).astype(np.float64)  # rounded to float32 first, as ggml's mul is
    expected_dgate = dy_up * s * (1.0 + x * (1.0 - s))
    expected_dup = x * s * dy.astype(np.float64)
    outputs = []
    for nth in (1, 3):
        dgate, dup = np.full(n, np.nan, np.float32), np.full(n, np.nan, np.float32)
        check(
            lib.tnn_kernel_check_swiglu_back(variant.encode(), f32(g), f32(up), f32(dy), n, f32(dgate), f32(dup), nth)
        )
        outputs.append((dgate, dup))
    dgate, dup = outputs[0]
    # each term of the formula a few ulps off: within 1e-6 of the terms'
    # magnitudes, or past float's range (g below about -88: s underflows to 0, as with expf)
    tiny = 1e-35
    scale = np.abs(dy_up) * s * (1.0 + np.abs(x) * (1.0 - s))
    assert np.all(np.abs(dgate - expected_dgate) <= 1e-6 * scale + tiny)
    assert np.all(np.abs(dup - expected_dup) <= 1e-6 * np.abs(expected_dup) + tiny)
    np.testing.assert_array_equal(outputs[1][0], dgate)
    np.testing.assert_array_equal(outputs[1][1], dup)
    # up NULL: dy alone is silu's own gradient
    alone = np.full(n, np.nan, np.float32)
    check(lib.tnn_kernel_check_swiglu_back(variant.encode(), f32(g), ffi.NULL, f32(dy), n, f32(alone), ffi.NULL, 1))
    expected_alone = dy.astype(np.float64) * s * (1.0 + x * (1.0 - s))
    assert np.all(np.abs(alone - expected_alone) <= 1e-6 * np.abs(dy) * s * (1.0 + np.abs(x) * (1.0 - s)) + tiny)


@pytest.mark.parametrize("variant", VARIANTS["activations"])
@pytest.mark.parametrize("d, rows", [(1, 3), (31, 5), (576, 7)])
def test_rms_norm_both_ways_is_float64s_to_float_rounding(variant, d, rows):
    need("activations", variant)
    rng = np.random.default_rng(d * rows)
    x = (rng.standard_normal((rows, d)) * 10.0 ** rng.uniform(-2, 2, (rows, 1))).astype(np.float32)
    w, dz = rng.standard_normal(d).astype(np.float32), rng.standard_normal((rows, d)).astype(np.float32)
    eps = 1e-5
    x64 = x.astype(np.float64)
    rrms = 1.0 / np.sqrt((x64**2).mean(axis=1, keepdims=True) + eps)
    expected_y = x64 * rrms * w
    # the norm's gradient: dx = (dz - x sum(x dz) / (sum(x^2) + eps d)) rrms
    sum_xdz = (x64 * dz).sum(axis=1, keepdims=True)
    expected_dx = (dz - x64 * sum_xdz / ((x64**2).sum(axis=1, keepdims=True) + eps * d)) * rrms
    outputs = []
    for nth in (1, 3):
        y, dx = np.full((rows, d), np.nan, np.float32), np.full((rows, d), np.nan, np.float32)
        check(
            lib.tnn_kernel_check_rms_norm(variant.encode(), f32(x), f32(w), f32(dz), d, rows, eps, f32(y), f32(dx), nth)
        )
        outputs.append((y, dx))
    y, dx = outputs[0]
    assert np.all(np.abs(y - expected_y) <= 1e-6 * np.abs(x64 * rrms * w) + 1e-30)
    magnitude = (np.abs(dz) + np.abs(x64 * sum_xdz) / ((x64**2).sum(axis=1, keepdims=True) + eps * d)) * rrms
    assert np.all(np.abs(dx - expected_dx) <= 1e-5 * magnitude + 1e-30)
    np.testing.assert_array_equal(outputs[1][0], y)
    np.testing.assert_array_equal(outputs[1][1], dx)


# ---- every variant the same bits ----------------------------------------------------
#
# The variants add the same numbers in the same order (kernels.h), so a run
# is the same bytes on every CPU level. Each runnable variant against the
# first that runs, on shapes that fill no tile and cross the kernels' blocks.


def runnable(kernel: str) -> list[str]:
    usable = [v for v in VARIANTS[kernel] if runs(kernel, v)]
    if len(usable) < 2:
        pytest.skip(f"this CPU runs {len(usable)} variant(s) of {kernel}: nothing to compare")
    return usable


def same_bits(outputs: dict[str, np.ndarray]) -> None:
    (first, reference), *others = outputs.items()
    for variant, output in others:
        assert np.array_equal(output.view(np.uint32), reference.view(np.uint32)), (variant, first)


@pytest.mark.parametrize("qtype", ["q8_0", "q4_1"])
@pytest.mark.parametrize("levels", [1, 2])
def test_every_qgemm_variant_gives_the_same_bits(qtype, levels):
    rng = np.random.default_rng(11)
    for rows, k, n in ((16, 32, 1), (48, 96, 5), (80, 608, 13), (32, 160, 40)):
        blocks, _ = quantized(rng.standard_normal((rows, k)).astype(np.float32), qtype)
        x = (rng.standard_normal((n, k)) * rng.uniform(0.01, 100, size=(n, 1))).astype(np.float32)
        x[0, :32] = 0.0  # a block of zeros: scale 0
        outputs = {}
        for variant in runnable("qgemm"):
            y = np.full((n, rows), np.nan, np.float32)
            check(
                lib.tnn_kernel_check_qgemm(
                    variant.encode(), qtype == "q4_1", levels, ffi.from_buffer(blocks), rows, k, f32(x), n, f32(y), 2
                )
            )
            outputs[variant] = y
        same_bits(outputs)


def test_every_fgemm_variant_gives_the_same_bits():
    rng = np.random.default_rng(12)
    for m, k, n, a_by_k, b_by_k in ((1, 1, 1, 0, 0), (33, 300, 25, 1, 0), (70, 513, 11, 0, 1), (96, 256, 37, 1, 1)):
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((n, k)).astype(np.float32)
        a_in = np.ascontiguousarray(a.T if a_by_k else a)
        b_in = np.ascontiguousarray(b.T if b_by_k else b)
        outputs = {}
        for variant in runnable("fgemm"):
            c = np.full((n, m), np.nan, np.float32)
            check(
                lib.tnn_kernel_check_fgemm(variant.encode(), f32(a_in), a_by_k, m, k, f32(b_in), b_by_k, n, f32(c), 2)
            )
            outputs[variant] = c
        same_bits(outputs)
    for m, n, k in ((1, 1, 1), (7, 17, 64), (16, 100, 33)):
        h = rng.standard_normal((k, m)).astype(np.float32)
        dy = rng.standard_normal((k, n)).astype(np.float32)
        outputs = {}
        for variant in runnable("fgemm"):
            c = np.full((n, m), np.nan, np.float32)
            check(lib.tnn_kernel_check_fgemm_skinny(variant.encode(), f32(h), m, f32(dy), n, k, f32(c), 2))
            outputs[variant] = c
        same_bits(outputs)


@pytest.mark.parametrize("qtype", ["q8_0", "q4_1"])
def test_every_head_loss_variant_gives_the_same_bits(qtype):
    rng = np.random.default_rng(13)
    d, vocab, n = 96, 544, 53
    w_blocks, w_held = quantized((rng.standard_normal((vocab, d)) * 2).astype(np.float32), qtype)
    wt_blocks, _ = quantized(np.ascontiguousarray(w_held.T.astype(np.float32)), "q8_0")
    h = (rng.standard_normal((n, d)) * 4).astype(np.float32)
    labels = rng.integers(0, vocab, size=n).astype(np.int32)
    labels[::5] = -1
    outputs, losses = {}, {}
    z = (rng.standard_normal((7, 1000)) * 30).astype(np.float32)  # far apart: exponentials underflow
    z_labels = rng.integers(0, 1000, size=7).astype(np.int32)
    for variant in runnable("head_loss"):
        out = np.full((n, d + 1), np.nan, np.float32)
        check(
            lib.tnn_kernel_check_head_loss(
                variant.encode(),
                qtype == "q4_1",
                ffi.from_buffer(w_blocks),
                ffi.from_buffer(wt_blocks),
                d,
                vocab,
                f32(h),
                ffi.from_buffer("int32_t[]", labels),
                n,
                f32(out),
                2,
            )
        )
        outputs[variant] = out
        loss = np.full(7, np.nan, np.float32)
        check(
            lib.tnn_kernel_check_token_loss(
                variant.encode(), f32(z), 1000, ffi.from_buffer("int32_t[]", z_labels), 7, f32(loss)
            )
        )
        losses[variant] = loss
    same_bits(outputs)
    same_bits(losses)


def test_every_adamw_variant_gives_the_same_bits():
    rng = np.random.default_rng(14)
    n = 4099
    g = (rng.standard_normal(n) * 10.0 ** rng.uniform(-8, 2, n)).astype(np.float32)
    hp = np.array([1e-3, 0.9, 0.999, 1e-8, 0.1, 10.0, 1000.0], np.float32)
    outputs = {}
    for variant in runnable("adamw"):
        w = np.linspace(-1, 1, n, dtype=np.float32)
        m = np.full(n, 0.01, np.float32)
        v = np.full(n, 1e-4, np.float32)
        check(lib.tnn_kernel_check_adamw(variant.encode(), f32(w), f32(g), f32(m), f32(v), f32(hp), n, 3))
        outputs[variant] = np.concatenate([w, m, v])
    same_bits(outputs)
