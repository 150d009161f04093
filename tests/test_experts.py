"""A mixture of experts' products through frozen experts kept as stored
(tinynn/models/experts.c, cpu/experts.c): ggml's MUL_MAT_ID forward (toy's
own where ggml's is slow: MXFP4 experts in a training step) and toy's
backward to the layer's input, no float copy of an expert, against a
float64 reference on the dequantized experts, through
tnn_kernel_check_experts (the graph a training step builds around them, on
the CPU backend). The experts' types are those of this year's MoE GGUFs:
Q4_K, Q5_K, Q6_K (Qwen3-30B-A3B at Q4_K_M), Q8_0, MXFP4 (gpt-oss-20b), and
F16."""

from __future__ import annotations

import numpy as np
import pytest
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, quants

from op_check import op_check
from toy.native.library import ffi, library

lib = library("cpu")


def error() -> str:
    return ffi.string(lib.tnn_last_error()).decode()


def stored_experts(rng, n_experts: int, d_in: int, d_out: int, qtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Experts [E][d_out rows of d_in] as a GGUF stores them in qtype (ggml's
    quantizer), and the float64 values they hold (gguf-py's dequantizer)."""
    w = rng.standard_normal((n_experts * d_out, d_in)).astype(np.float32)
    if qtype == "f16":
        return w.astype(np.float16).view(np.uint8), w.astype(np.float16).astype(np.float64).reshape(
            n_experts, d_out, d_in
        )
    kind = GGMLQuantizationType[qtype.upper()]
    block, size = GGML_QUANT_SIZES[kind]
    rows = np.zeros((n_experts * d_out, d_in // block * size), np.uint8)
    status = lib.tnn_kernel_quantize_rows(qtype.encode(), ffi.from_buffer("float[]", w), n_experts * d_out, d_in,
                                          ffi.from_buffer(rows))  # fmt: skip
    assert status == 0, error()
    return rows, quants.dequantize(rows, kind).astype(np.float64).reshape(n_experts, d_out, d_in)


def experts(qtype, rows, shape, x, ids, dy, threads=2):
    """y and dx from tnn_kernel_check_experts; shape (E, d_in, d_out)."""
    n_experts, d_in, d_out = shape
    n_tokens, n_used = ids.shape
    y = np.full((n_tokens, n_used, d_out), np.nan, np.float32)
    dx = np.full(x.shape, np.nan, np.float32)
    status = lib.tnn_kernel_check_experts(
        qtype.encode(),
        ffi.from_buffer("char[]", np.ascontiguousarray(rows)),
        d_in,
        d_out,
        n_experts,
        ffi.from_buffer("float[]", np.ascontiguousarray(x, np.float32)),
        x.shape[1],
        ffi.from_buffer("int32_t[]", np.ascontiguousarray(ids, np.int32)),
        n_used,
        n_tokens,
        ffi.from_buffer("float[]", np.ascontiguousarray(dy, np.float32)),
        ffi.from_buffer("float[]", y),
        ffi.from_buffer("float[]", dx),
        threads,
    )
    return status, y, dx


def reference(w: np.ndarray, x: np.ndarray, ids: np.ndarray, dy: np.ndarray):
    """y[t, s] = W[ids[t, s]] x[t, s % r], and dx = d sum(y dy) / dx, in
    float64, with each slot's |W^T| |dy| (the size of its float32 sums)."""
    n_tokens, n_used = ids.shape
    r = x.shape[1]
    y = np.zeros((n_tokens, n_used, w.shape[1]))
    dx = np.zeros(x.shape)
    size = np.zeros(x.shape)
    for t in range(n_tokens):
        for s in range(n_used):
            e = ids[t, s]
            y[t, s] = w[e] @ x[t, s % r]
            dx[t, s % r] += w[e].T @ dy[t, s]
            size[t, s % r] += np.abs(w[e]).T @ np.abs(dy[t, s])
    return y, dx, size


def routed(rng, n_tokens: int, n_used: int, n_experts: int) -> np.ndarray:
    """Each token's n_used distinct experts, as a router's top k picks them."""
    return np.stack([rng.permutation(n_experts)[:n_used] for _ in range(n_tokens)]).astype(np.int32)


CASES = [
    # qtype, E, d_in, d_out, n_used, n_tokens
    ("q4_K", 8, 256, 96, 2, 13),
    ("q5_K", 4, 512, 64, 2, 7),
    ("q6_K", 6, 256, 40, 3, 9),
    ("q8_0", 8, 96, 1100, 2, 5),  # d_out past one chunk of 1024 rows
    ("mxfp4", 4, 64, 32, 2, 11),
    ("f16", 3, 40, 24, 2, 6),  # a width that is no whole panel
]


@pytest.mark.parametrize("shared_x", [True, False])
@pytest.mark.parametrize("qtype, n_experts, d_in, d_out, n_used, n_tokens", CASES)
def test_experts_forward_and_input_gradient_match_float64(qtype, n_experts, d_in, d_out, n_used, n_tokens, shared_x):
    """y within ggml's rounding of x (its products quantize x to 8 bits),
    dx within float32's sums of the dequantized experts, whether every slot
    reads its token's one x (gate and up: the slots' gradients summed) or
    each its own (down)."""
    rng = np.random.default_rng(d_in + d_out + n_tokens)
    rows, w = stored_experts(rng, n_experts, d_in, d_out, qtype)
    x = rng.standard_normal((n_tokens, 1 if shared_x else n_used, d_in)).astype(np.float32)
    ids = routed(rng, n_tokens, n_used, n_experts)
    dy = rng.standard_normal((n_tokens, n_used, d_out)).astype(np.float32)
    status, y, dx = experts(qtype, rows, (n_experts, d_in, d_out), x, ids, dy)
    assert status == 0, error()
    exact_y, exact_dx, size = reference(w, x.astype(np.float64), ids, dy.astype(np.float64))
    np.testing.assert_allclose(y, exact_y, atol=2e-2 * np.abs(exact_y).max())
    # each value a float32 sum of d_out products (and of n_used slots)
    bound = (d_out + n_used) * np.finfo(np.float32).eps * size
    assert np.all(np.abs(dx - exact_dx) <= bound), np.abs(dx - exact_dx).max()


def test_every_thread_count_gives_the_same_bits_with_an_expert_past_one_pass_of_columns():
    """Two experts, 600 tokens each: more columns than one gathering takes
    (512), so an expert's block is dequantized twice; and experts that no
    slot chose. 1, 2 and 5 threads give the same bits."""
    rng = np.random.default_rng(7)
    n_experts, d_in, d_out = 5, 256, 48
    rows, w = stored_experts(rng, n_experts, d_in, d_out, "q4_K")
    ids = np.tile(np.array([[3, 1]], np.int32), (600, 1))
    x = rng.standard_normal((600, 1, d_in)).astype(np.float32)
    dy = rng.standard_normal((600, 2, d_out)).astype(np.float32)
    outputs = []
    for threads in (1, 2, 5):
        status, y, dx = experts("q4_K", rows, (n_experts, d_in, d_out), x, ids, dy, threads)
        assert status == 0, error()
        outputs.append((y, dx))
    _, exact_dx, size = reference(w, x.astype(np.float64), ids, dy.astype(np.float64))
    assert np.all(np.abs(outputs[0][1] - exact_dx) <= (d_out + 2) * np.finfo(np.float32).eps * size)
    for y, dx in outputs[1:]:
        np.testing.assert_array_equal(y, outputs[0][0])
        np.testing.assert_array_equal(dx, outputs[0][1])


def test_the_fgemm_variants_give_the_same_bits_and_the_portable_loops_the_same_values(monkeypatch):
    """The gradient runs on the session's fgemm (AVX2 and AVX-512 give the
    same bits) or, with the kernels off, on portable loops (float32 sums in
    the same order, without fused multiply-adds)."""
    rng = np.random.default_rng(3)
    shape = (4, 256, 80)
    rows, w = stored_experts(rng, *shape[:1], shape[1], shape[2], "q6_K")
    ids = routed(rng, 9, 2, 4)
    x = rng.standard_normal((9, 2, 256)).astype(np.float32)
    dy = rng.standard_normal((9, 2, 80)).astype(np.float32)
    _, exact_dx, size = reference(w, x.astype(np.float64), ids, dy.astype(np.float64))
    bound = 82 * np.finfo(np.float32).eps * size
    monkeypatch.delenv("TNN_CPU_VARIANT", raising=False)
    monkeypatch.setenv("TNN_CPU_KERNELS", "off")
    status, _, portable = experts("q6_K", rows, shape, x, ids, dy)
    assert status == 0, error()
    assert np.all(np.abs(portable - exact_dx) <= bound)
    monkeypatch.delenv("TNN_CPU_KERNELS")
    ran = {}
    for variant, level in (("avx2", "haswell"), ("avx512", "skylakex")):
        if lib.tnn_cpu_kernel_runs(b"fgemm", variant.encode()):
            monkeypatch.setenv("TNN_CPU_VARIANT", level)
            assert ffi.string(lib.tnn_cpu_kernel_choice(b"fgemm")).decode() == variant
            status, _, ran[variant] = experts("q6_K", rows, shape, x, ids, dy)
            assert status == 0, error()
            assert np.all(np.abs(ran[variant] - exact_dx) <= bound)
    if len(ran) == 2:
        np.testing.assert_array_equal(ran["avx2"], ran["avx512"])
    if not ran:
        pytest.skip("this CPU runs no fgemm variant")


@pytest.mark.parametrize("shared_x", [True, False])
def test_mxfp4_experts_forward_on_toys_kernel_is_float32s_product_in_every_variant(monkeypatch, shared_x):
    """MXFP4 experts that see 16 slots or more on average (a training step's
    gpt-oss-20b: 128 of 1024 tokens an expert) run their forward on toy's
    kernel, not ggml's MUL_MAT_ID (which quantizes x to 8 bits): y is the
    float32 product of the dequantized experts (rows past one chunk of
    1024 columns, 600 slots past one gathering of 512, an expert no slot
    chose); 1, 2 and 5 threads and the AVX2 and AVX-512 fgemm give the same
    bits, the portable loops the same values."""
    rng = np.random.default_rng(11)
    n_experts, d_in, d_out, n_tokens, n_used = 4, 1056, 72, 800, 2
    rows, w = stored_experts(rng, n_experts, d_in, d_out, "mxfp4")
    ids = routed(rng, n_tokens, n_used, 3)  # expert 3: no slot
    x = rng.standard_normal((n_tokens, 1 if shared_x else n_used, d_in)).astype(np.float32)
    dy = rng.standard_normal((n_tokens, n_used, d_out)).astype(np.float32)
    exact_y, _, _ = reference(w, x.astype(np.float64), ids, dy.astype(np.float64))
    size = np.abs(w).max() * np.abs(x).max()
    bound = d_in * np.finfo(np.float32).eps * size * 4
    outputs = {}
    for threads in (1, 2, 5):
        status, outputs[threads], _ = experts("mxfp4", rows, (n_experts, d_in, d_out), x, ids, dy, threads)
        assert status == 0, error()
    assert np.all(np.abs(outputs[1] - exact_y) <= bound), np.abs(outputs[1] - exact_y).max()
    for threads in (2, 5):
        np.testing.assert_array_equal(outputs[threads], outputs[1])
    monkeypatch.delenv("TNN_CPU_VARIANT", raising=False)
    monkeypatch.setenv("TNN_CPU_KERNELS", "off")
    status, portable, _ = experts("mxfp4", rows, (n_experts, d_in, d_out), x, ids, dy)
    assert status == 0, error()
    assert np.all(np.abs(portable - exact_y) <= bound)
    monkeypatch.delenv("TNN_CPU_KERNELS")
    ran = {}
    for variant, level in (("avx2", "haswell"), ("avx512", "skylakex")):
        if lib.tnn_cpu_kernel_runs(b"fgemm", variant.encode()):
            monkeypatch.setenv("TNN_CPU_VARIANT", level)
            status, ran[variant], _ = experts("mxfp4", rows, (n_experts, d_in, d_out), x, ids, dy)
            assert status == 0, error()
    if len(ran) == 2:
        np.testing.assert_array_equal(ran["avx2"], ran["avx512"])


@pytest.mark.parametrize(
    "change, message",
    [
        ({"ids": -1}, "not an expert"),
        ({"ids": 4}, "not an expert"),
        ({"x_slots": 3}, "x F32 [d_in, 1 or n_used, T]"),
        ({"d_in": 100}, "not whole blocks"),
        ({"n_experts": 2000}, "1 to 1024 experts"),
    ],
)
def test_what_the_experts_cannot_take_is_refused_in_one_line(change, message):
    n_experts, d_in, d_out, n_used, n_tokens = change.get("n_experts", 4), change.get("d_in", 256), 32, 2, 3
    ids = np.tile(np.array([[0, 1]], np.int32), (n_tokens, 1))
    if "ids" in change:
        ids[1, 1] = change["ids"]
    x = np.zeros((n_tokens, change.get("x_slots", 1), d_in), np.float32)
    rows = np.zeros(n_experts * d_out * (d_in // 256 + 1) * 144, np.uint8)
    dy = np.zeros((n_tokens, n_used, d_out), np.float32)
    status, _, _ = experts("q4_K", rows, (n_experts, d_in, d_out), x, ids, dy)
    assert status != 0
    assert message in error() and "\n" not in error()


def moe_reference(x, router, gate, up, down, n_used: int, normalize: bool, dy, pairs=(), scale=0.0):
    """The mixture of experts' feed-forward as transformers' Qwen3-MoE block
    computes it (softmax over the experts, top n_used, renormalized with
    norm_topk_prob), in float64 with torch's autograd: out [T, d] and the
    gradient of sum(out * dy) for each input. Arrays in numpy's order
    (ggml's reversed): x [T, d], router [E, d], gate and up [E, ff, d],
    down [E, d, ff]. pairs: LoRA's A [E, r, d_in] and B [E, d_out, r] for
    gate, up and down in turn, each expert's weight W_e + scale B_e A_e (as
    llama.cpp applies an adapter of the experts)."""
    torch = pytest.importorskip("torch")
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (x, router, gate, up, down, *pairs)]
    tx, tr, tg, tu, td = ts[:5]
    if pairs:
        tg, tu, td = (w + scale * b @ a for w, a, b in zip((tg, tu, td), ts[5::2], ts[6::2]))
    probs = torch.softmax(tx @ tr.T, dim=-1)
    weights, chosen = torch.topk(probs, n_used, dim=-1)
    if normalize:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    out = torch.zeros_like(tx)
    for t in range(x.shape[0]):
        for s in range(n_used):
            e = chosen[t, s]
            hidden = torch.nn.functional.silu(tg[e] @ tx[t]) * (tu[e] @ tx[t])
            out[t] = out[t] + weights[t, s] * (td[e] @ hidden)
    (out * torch.tensor(dy, dtype=torch.float64)).sum().backward()
    return out.detach().numpy(), [t.grad.numpy() for t in ts]


@pytest.mark.parametrize("op, n_used, normalize", [("moe_ffn_top1", 1, False), ("moe_ffn_top3", 3, False),
                                                   ("moe_ffn_top3_norm", 3, True)])  # fmt: skip
def test_the_mixture_of_experts_feed_forward_and_every_gradient_match_float64(op, n_used, normalize):
    """tnn_moe_ffn, every input trained (F32 experts, as a full fine-tune
    trains them): the output and the gradients of x, the router (through
    the softmax and the chosen weights) and each expert (the ones no token
    chose get zeros) against torch in float64. 6 experts, 11 tokens."""
    rng = np.random.default_rng(n_used)
    d, ff, n_experts, n_tokens = 48, 40, 6, 11
    x = rng.standard_normal((n_tokens, d))
    router = rng.standard_normal((n_experts, d)) * 0.3
    gate, up = (rng.standard_normal((n_experts, ff, d)) * 0.2 for _ in range(2))
    down = rng.standard_normal((n_experts, d, ff)) * 0.2
    dy = rng.standard_normal((n_tokens, d))
    inputs = [a.astype(np.float32) for a in (x, router, gate, up, down)]
    status, message, out, grads = op_check("cpu", op, inputs, dy)
    assert status == 0, message
    expected, expected_grads = moe_reference(*(a.astype(np.float64) for a in inputs), n_used, normalize, dy)
    np.testing.assert_allclose(out, expected, atol=1e-5 * np.abs(expected).max())
    for name, ours, theirs in zip(("x", "router", "gate", "up", "down"), grads, expected_grads):
        np.testing.assert_allclose(ours, theirs, atol=1e-5 * np.abs(theirs).max(), err_msg=name)


def test_lora_on_every_expert_matches_float64():
    """LoRA pairs on the experts' gate, up and down (A [d_in, r, E], B [r,
    d_out, E]: each expert's W_e x + 0.75 B_e (A_e x), as llama.cpp's
    build_lora_mm_id applies them): the output and the gradients of x, the
    experts and every A and B against torch in float64, each expert's weight
    merged."""
    rng = np.random.default_rng(7)
    d, ff, n_experts, n_tokens, rank = 48, 40, 6, 11, 4
    x = rng.standard_normal((n_tokens, d))
    router = rng.standard_normal((n_experts, d)) * 0.3
    gate, up = (rng.standard_normal((n_experts, ff, d)) * 0.2 for _ in range(2))
    down = rng.standard_normal((n_experts, d, ff)) * 0.2
    pairs = []
    for d_in, d_out in ((d, ff), (d, ff), (ff, d)):
        pairs += [
            rng.standard_normal((n_experts, rank, d_in)) * 0.2,
            rng.standard_normal((n_experts, d_out, rank)) * 0.2,
        ]
    dy = rng.standard_normal((n_tokens, d))
    inputs = [a.astype(np.float32) for a in (x, router, gate, up, down, *pairs)]
    status, message, out, grads = op_check("cpu", "moe_ffn_lora", inputs, dy)
    assert status == 0, message
    wide = [a.astype(np.float64) for a in inputs]
    expected, expected_grads = moe_reference(*wide[:5], 3, True, dy, pairs=wide[5:], scale=0.75)
    np.testing.assert_allclose(out, expected, atol=1e-5 * np.abs(expected).max())
    names = ("x", "router", "gate", "up", "down", "gate A", "gate B", "up A", "up B", "down A", "down B")
    for name, ours, theirs in zip(names, grads, expected_grads):
        np.testing.assert_allclose(ours, theirs, atol=1e-5 * np.abs(theirs).max(), err_msg=name)


def test_the_mixture_of_experts_is_refused_in_one_line_where_its_shapes_do_not_fit():
    x, router = np.zeros((3, 8)), np.zeros((2, 8))  # two experts, three chosen
    experts = [np.zeros((2, 4, 8)), np.zeros((2, 4, 8)), np.zeros((2, 8, 4))]
    status, message, _, _ = op_check("cpu", "moe_ffn_top3", [x, router, *experts], np.zeros((3, 8)))
    assert status != 0 and "E at least 3" in message and "\n" not in message
