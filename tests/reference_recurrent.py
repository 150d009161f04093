"""Float64 numpy references for the recurrent operations toy gave a backward
(vendor/patches): each operation's forward and, in closed form, the gradient
of every input. Arrays are numpy's order, the reverse of ggml's (a ggml
tensor [ne0, ne1, ne2] is an array of shape (ne2, ne1, ne0)).
tests/test_recurrent_ops.py holds these against finite differences and the
ggml operations against these."""

from __future__ import annotations

import numpy as np


def ssm_conv(sx: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The causal depthwise convolution (GGML_OP_SSM_CONV).
    sx (n_s, d_inner, d_conv - 1 + n_t): the carried state, then the
    sequence; c (d_inner, d_conv). Returns y (n_s, n_t, d_inner),
    y[s, t, i] = sum_k sx[s, i, t + k] c[i, k]."""
    d_conv = c.shape[1]
    n_t = sx.shape[2] - d_conv + 1
    y = sum(sx[:, :, k : k + n_t] * c[None, :, k : k + 1] for k in range(d_conv))
    return y.transpose(0, 2, 1)


def ssm_conv_backward(sx: np.ndarray, c: np.ndarray, dy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """d loss / d sx and d loss / d c, given dy = d loss / d y."""
    d_conv = c.shape[1]
    n_t = dy.shape[1]
    g = dy.transpose(0, 2, 1)  # (n_s, d_inner, n_t), as sx is laid out
    dsx = np.zeros_like(sx)
    dc = np.zeros_like(c)
    for k in range(d_conv):
        dsx[:, :, k : k + n_t] += g * c[None, :, k : k + 1]
        dc[:, k] = (g * sx[:, :, k : k + n_t]).sum(axis=(0, 2))
    return dsx, dc


def finite_differences(f, x: np.ndarray, dy: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d sum(f(x) * dy) / dx by central differences, one entry at a time."""
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        saved = x[idx]
        x[idx] = saved + eps
        up = (f(x) * dy).sum()
        x[idx] = saved - eps
        down = (f(x) * dy).sum()
        x[idx] = saved
        grad[idx] = (up - down) / (2 * eps)
    return grad
