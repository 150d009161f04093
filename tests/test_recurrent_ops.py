"""The recurrent operations toy gave a backward (vendor/patches: 0015 for
GGML_OP_SSM_CONV), forward and backward through tnn_op_check on each
backend, against the float64 references of reference_recurrent.py at the
sequence lengths where chunked and vectorized code changes course (1, 2,
63, 64, 65) and a long one (1024). The references themselves are held to
finite differences. `pytest -m vulkan` runs the Vulkan cases (lavapipe in
CI: scripts/vulkan_check.sh)."""

from __future__ import annotations

import numpy as np
import pytest

import reference_recurrent as ref
from op_check import op_check
from toy.native.library import ffi
from toy.native.session import Session

LENGTHS = [1, 2, 63, 64, 65, 1024]
DEVICES = ["cpu", pytest.param("vulkan", marks=pytest.mark.vulkan)]


def conv_inputs(n_t: int, d_conv: int, d_inner: int, n_s: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    sx = rng.standard_normal((n_s, d_inner, d_conv - 1 + n_t))
    c = rng.standard_normal((d_inner, d_conv))
    dy = rng.standard_normal((n_s, n_t, d_inner))
    return sx, c, dy


def assert_close(ours: np.ndarray, expected: np.ndarray, what: str):
    # float32 sums of a few terms each: a few ulps of the largest value
    np.testing.assert_allclose(ours, expected, atol=1e-5 * max(1.0, np.abs(expected).max()), err_msg=what)


def test_ssm_conv_reference_gradients_are_finite_differences():
    sx, c, dy = conv_inputs(n_t=5, d_conv=4, d_inner=3, n_s=2)
    dsx, dc = ref.ssm_conv_backward(sx, c, dy)
    np.testing.assert_allclose(dsx, ref.finite_differences(lambda x: ref.ssm_conv(x, c), sx, dy), atol=1e-7)
    np.testing.assert_allclose(dc, ref.finite_differences(lambda w: ref.ssm_conv(sx, w), c, dy), atol=1e-7)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n_t", LENGTHS)
@pytest.mark.parametrize("d_conv,n_s", [(3, 1), (4, 2)])
def test_ssm_conv_forward_and_backward_match_the_reference(device, n_t, d_conv, n_s):
    sx, c, dy = conv_inputs(n_t, d_conv, d_inner=24, n_s=n_s, seed=n_t)
    status, message, y, (dsx, dc) = op_check(device, "ssm_conv", [sx, c], dy)
    assert status == 0, message
    assert_close(y, ref.ssm_conv(sx, c), "y")
    expected_dsx, expected_dc = ref.ssm_conv_backward(sx, c, dy)
    assert_close(dsx, expected_dsx, "d sx")
    assert_close(dc, expected_dc, "d c")


@pytest.mark.parametrize("n_t", LENGTHS)
@pytest.mark.parametrize("taps,n_s", [(2, 1), (4, 2)])
@pytest.mark.parametrize("threads", [1, 2])
def test_causal_conv_is_ssm_conv_on_the_padded_transposed_input(n_t, taps, n_s, threads):
    """toy's node for training (cpu/causal_conv.c) reads the token-major
    input as the layer makes it: ggml's ssm_conv after a zero state, values
    and both gradients; 80 channels cross its blocks of 32, and one thread
    or two give the same bits."""
    rng = np.random.default_rng(n_t)
    x = rng.standard_normal((n_s, n_t, 80))
    w = rng.standard_normal((80, taps))
    dy = rng.standard_normal((n_s, n_t, 80))
    sx = np.pad(x.transpose(0, 2, 1), ((0, 0), (0, 0), (taps - 1, 0)))
    status, message, y, (dx, dw) = op_check("cpu", "causal_conv", [x, w], dy, threads)
    assert status == 0, message
    assert_close(y, ref.ssm_conv(sx, w), "y")
    expected_dsx, expected_dw = ref.ssm_conv_backward(sx, w, dy)
    assert_close(dx, expected_dsx[:, :, taps - 1 :].transpose(0, 2, 1), "dx")
    assert_close(dw, expected_dw, "dw")
    if threads == 2:
        _, _, y1, (dx1, dw1) = op_check("cpu", "causal_conv", [x, w], dy, 1)
        for ours, one in ((y, y1), (dx, dx1), (dw, dw1)):
            np.testing.assert_array_equal(ours, one)


def test_causal_conv_refuses_mismatched_shapes_in_one_line():
    x, w, dy = np.ones((1, 4, 8)), np.ones((8, 3)), np.ones((1, 4, 8))
    status, message, *_ = op_check("cpu", "causal_conv", [x, w[:4]], dy)
    assert status != 0 and message.startswith("causal_conv: x must be") and "\n" not in message


@pytest.mark.vulkan
def test_causal_conv_is_refused_in_one_line_where_the_backend_lacks_it():
    x, w, dy = np.ones((1, 4, 8)), np.ones((8, 3)), np.ones((1, 4, 8))
    status, message, *_ = op_check("vulkan", "causal_conv", [x, w], dy)
    assert status != 0 and message.startswith("the vulkan backend cannot run") and "\n" not in message


def test_op_check_refuses_what_it_does_not_know():
    sx, c, dy = conv_inputs(4, 3, 8, 1)
    status, message, *_ = op_check("cpu", "no_such_op", [sx, c], dy)
    assert status != 0 and "no operation check named 'no_such_op'" in message
    status, message, *_ = op_check("cpu", "ssm_conv", [sx, c[:4]], dy)
    assert status != 0 and "ssm_conv: sx must be" in message


@pytest.mark.parametrize("device", DEVICES)
def test_zero_padding_passes_back_the_gradient_of_what_it_padded(device):
    """ggml_pad_ext's backward (patch 0016): LFM2's convolution input is
    the sequence after a zero state."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 7))
    padded = np.pad(x, ((0, 0), (1, 0), (2, 1)))
    dy = rng.standard_normal(padded.shape)
    status, message, y, (dx,) = op_check(device, "pad", [x], dy)
    assert status == 0, message
    np.testing.assert_array_equal(y, padded.astype(np.float32))
    np.testing.assert_array_equal(dx, dy.astype(np.float32)[:, 1:, 2:-1])


def delta_inputs(n_t: int, n: int, heads: int, n_s: int, seed: int = 0):
    """q, k as Qwen 3.5 feeds them (L2-normalized rows), a log-decay g below
    0 and beta in (0, 1), as the layer makes them."""
    rng = np.random.default_rng(seed)

    def unit(x):
        return x / np.linalg.norm(x, axis=-1, keepdims=True)

    q, k = unit(rng.standard_normal((2, n_s, n_t, heads, n)))
    v = rng.standard_normal((n_s, n_t, heads, n))
    g = -np.log1p(np.exp(rng.standard_normal((n_s, n_t, heads, 1))))
    beta = 1 / (1 + np.exp(-rng.standard_normal((n_s, n_t, heads, 1))))
    dy = rng.standard_normal((n_s, n_t, heads, n))
    return [q, k, v, g, beta], dy


def test_gated_delta_net_reference_gradients_are_finite_differences():
    inputs, dy = delta_inputs(n_t=4, n=3, heads=2, n_s=1)
    grads = ref.gated_delta_net_backward(*inputs, dy)
    for i, name in enumerate(("q", "k", "v", "g", "beta")):

        def f(x, i=i):
            return ref.gated_delta_net(*inputs[:i], x, *inputs[i + 1 :])

        np.testing.assert_allclose(grads[i], ref.finite_differences(f, inputs[i], dy), atol=1e-7, err_msg=name)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n_t", LENGTHS)
def test_gated_delta_net_forward_and_backward_match_the_reference(device, n_t):
    """toy's custom node on the CPU (cpu/delta_net.c), the op of vendor patch
    0018 on Vulkan (gated_delta_net_train.comp): each backward remakes each
    chunk of 64 tokens' states from the one before it, so 63, 64, 65 and
    1024 cross chunk edges."""
    n, heads, n_s = (16, 2, 1) if n_t == 1024 else (8, 2, 2)
    inputs, dy = delta_inputs(n_t, n, heads, n_s, seed=n_t)
    status, message, y, grads = op_check(device, "gated_delta_net", inputs, dy)
    assert status == 0, message
    assert_close(y, ref.gated_delta_net(*inputs), "out")
    for ours, expected, name in zip(grads, ref.gated_delta_net_backward(*inputs, dy), ("q", "k", "v", "g", "beta")):
        # a sum over up to 1024 tokens of float32 steps: 1e-4 of the largest
        np.testing.assert_allclose(ours, expected, atol=1e-4 * max(1.0, np.abs(expected).max()), err_msg=name)


@pytest.mark.parametrize("n", [128, 40])
def test_gated_delta_net_variants_give_the_same_bits(monkeypatch, n):
    """The "recurrent" kernel's variants (cpu/delta_net.c, its AVX2 and
    AVX-512 files) keep one order of operations: portable C, AVX2 and
    AVX-512 give the same bits, at Qwen 3.5's head width and at one with a
    tail past the last whole 16 lanes (40), with rows past the last whole
    block of 16."""
    lib = Session("cpu", threads=1).lib
    inputs, dy = delta_inputs(70, n, 3, 2, seed=n)
    monkeypatch.delenv("TNN_CPU_VARIANT", raising=False)
    monkeypatch.setenv("TNN_CPU_KERNELS", "off")
    _, _, y0, grads0 = op_check("cpu", "gated_delta_net", inputs, dy)
    monkeypatch.delenv("TNN_CPU_KERNELS")
    ran = []
    for variant, level in (("avx2", "haswell"), ("avx512", "skylakex")):
        if not lib.tnn_cpu_kernel_runs(b"recurrent", variant.encode()):
            continue
        monkeypatch.setenv("TNN_CPU_VARIANT", level)
        assert ffi.string(lib.tnn_cpu_kernel_choice(b"recurrent")).decode() == variant
        status, message, y, grads = op_check("cpu", "gated_delta_net", inputs, dy)
        assert status == 0, message
        np.testing.assert_array_equal(y, y0, err_msg=variant)
        for ours, portable in zip(grads, grads0):
            np.testing.assert_array_equal(ours, portable, err_msg=variant)
        ran.append(variant)
    if not ran:
        pytest.skip("this CPU runs no variant of the recurrent kernel but the portable one")


@pytest.mark.vulkan
def test_a_head_width_vulkan_has_no_pipeline_for_is_refused_in_one_line():
    """Patch 0018's pipelines take head widths of 8, 16, 32, 64, 80 and 128
    (the shaders unroll their loops over it); another is refused when the
    step is built, before anything runs."""
    inputs, dy = delta_inputs(4, 12, 2, 1)
    status, message, *_ = op_check("vulkan", "gated_delta_net", inputs, dy)
    assert status != 0 and message.startswith("the vulkan backend cannot run") and "\n" not in message


def scan_inputs(n_t: int, head_dim: int, heads: int, groups: int, state: int, n_s: int, seed: int = 0):
    """The scan's inputs as a Mamba-2 layer makes them: dt around the
    softplus's knee (with one past ggml's linear cut at 20), A below 0."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n_s, n_t, heads, head_dim))
    dt = rng.standard_normal((n_s, n_t, heads))
    dt.flat[0] = 21.0 if n_t > 1 else dt.flat[0]
    a = -np.exp(rng.standard_normal((heads, 1)) * 0.5)
    b, c = rng.standard_normal((2, n_s, n_t, groups, state))
    dy = rng.standard_normal(x.shape)
    return [x, dt, a, b, c], dy


SCAN_INPUTS = ("x", "dt", "a", "b", "c")


def test_ssm_scan_reference_gradients_are_finite_differences():
    inputs, dy = scan_inputs(n_t=4, head_dim=3, heads=4, groups=2, state=2, n_s=2)
    inputs[1].flat[0] = 0.3  # finite differences across ggml's cut at 20 would see its kink
    grads = ref.ssm_scan_backward(*inputs, dy)
    for i, name in enumerate(SCAN_INPUTS):

        def f(x, i=i):
            return ref.ssm_scan(*inputs[:i], x, *inputs[i + 1 :])

        np.testing.assert_allclose(grads[i], ref.finite_differences(f, inputs[i], dy), atol=1e-7, err_msg=name)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n_t", LENGTHS)
def test_ssm_scan_forward_and_backward_match_the_reference(device, n_t):
    """toy's custom node on the CPU (cpu/ssm_scan.c), the op of vendor patch
    0018 on Vulkan (ssm_scan_train.comp): each backward remakes each chunk
    of 64 tokens' states from the one before it, and sums B's and C's
    gradients over each group's heads (two groups of two heads here)."""
    head_dim, heads, groups, state, n_s = (8, 2, 1, 16, 1) if n_t == 1024 else (8, 4, 2, 8, 2)
    inputs, dy = scan_inputs(n_t, head_dim, heads, groups, state, n_s, seed=n_t)
    status, message, y, grads = op_check(device, "ssm_scan", inputs, dy)
    assert status == 0, message
    assert_close(y, ref.ssm_scan(*inputs), "y")
    for ours, expected, name in zip(grads, ref.ssm_scan_backward(*inputs, dy), SCAN_INPUTS):
        np.testing.assert_allclose(ours, expected, atol=1e-4 * max(1.0, np.abs(expected).max()), err_msg=name)


def test_ssm_scan_refuses_mismatched_shapes_in_one_line():
    inputs, dy = scan_inputs(4, 4, 4, 3, 8, 1)  # 3 groups do not divide 4 heads
    status, message, *_ = op_check("cpu", "ssm_scan", inputs, dy)
    assert status != 0 and message.startswith("ssm_scan:") and "\n" not in message


@pytest.mark.parametrize("device", DEVICES)
def test_sigmoid_passes_back_s_times_one_minus_s(device):
    """ggml_sigmoid's backward (patch 0017): Qwen 3.5's gates."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 50)) * 4
    dy = rng.standard_normal(x.shape)
    status, message, y, (dx,) = op_check(device, "sigmoid", [x], dy)
    assert status == 0, message
    s = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(y, s, atol=1e-6)
    np.testing.assert_allclose(dx, dy * s * (1 - s), atol=1e-6)
