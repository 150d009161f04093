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


def gated_delta_net(q, k, v, g, beta) -> np.ndarray:
    """The gated delta rule, each head of each sequence from a zero state.
    q, k, v (B, T, H, n); g, beta (B, T, H, 1): per token
    A = exp(g) S; delta = beta (v - A^T k); S = A + k delta^T; o = S^T q / sqrt(n).
    Returns o (B, T, H, n)."""
    b_, t_, h_, n = v.shape
    out = np.zeros_like(v)
    for b in range(b_):
        for h in range(h_):
            s = np.zeros((n, n))
            for t in range(t_):
                k_t, v_t, q_t = k[b, t, h], v[b, t, h], q[b, t, h]
                a = np.exp(g[b, t, h, 0]) * s
                delta = beta[b, t, h, 0] * (v_t - a.T @ k_t)
                s = a + np.outer(k_t, delta)
                out[b, t, h] = s.T @ q_t / np.sqrt(n)
    return out


def gated_delta_net_backward(q, k, v, g, beta, dout):
    """Every input's gradient of sum(gated_delta_net(...) * dout), through
    time backwards with every state kept (float64; the sizes tests use)."""
    b_, t_, h_, n = v.shape
    grads = [np.zeros_like(x) for x in (q, k, v, g, beta)]
    dq, dk, dv, dg, dbeta = grads
    scale = 1 / np.sqrt(n)
    for b in range(b_):
        for h in range(h_):
            states = [np.zeros((n, n))]
            for t in range(t_):
                a = np.exp(g[b, t, h, 0]) * states[-1]
                delta = beta[b, t, h, 0] * (v[b, t, h] - a.T @ k[b, t, h])
                states.append(a + np.outer(k[b, t, h], delta))
            ds = np.zeros((n, n))
            for t in reversed(range(t_)):
                k_t, v_t, q_t, do = k[b, t, h], v[b, t, h], q[b, t, h], dout[b, t, h]
                decay, bt = np.exp(g[b, t, h, 0]), beta[b, t, h, 0]
                prev, cur = states[t], states[t + 1]
                a = decay * prev
                u = a.T @ k_t
                delta = bt * (v_t - u)
                dq[b, t, h] = scale * cur @ do
                ds = ds + scale * np.outer(q_t, do)
                ddelta = ds.T @ k_t
                dk[b, t, h] = ds @ delta
                dv[b, t, h] = bt * ddelta
                dbeta[b, t, h, 0] = ddelta @ (v_t - u)
                du = -bt * ddelta
                da = ds + np.outer(k_t, du)
                dk[b, t, h] += a @ du
                dg[b, t, h, 0] = np.sum(da * a)
                ds = decay * da
    return grads


def _softplus(x):
    return np.where(x > 20, x, np.log1p(np.exp(np.minimum(x, 20))))


def ssm_scan(x, dt, a, b, c) -> np.ndarray:
    """Mamba-2's selective scan (GGML_OP_SSM_SCAN's y, without the D skip),
    each head of each sequence from a zero state. x (B, T, H, P); dt
    (B, T, H), before its softplus; a (H, 1), below 0; b, c (B, T, G, N),
    head h reading group h // (H / G). Per token
    dts = softplus(dt); S = exp(dts a) S + dts x b^T; y = S c.
    Returns y (B, T, H, P)."""
    b_, t_, h_, p = x.shape
    share = h_ // b.shape[2]
    y = np.zeros_like(x)
    for s_ in range(b_):
        for h in range(h_):
            g = h // share
            state = np.zeros((p, b.shape[3]))
            for t in range(t_):
                dts = _softplus(dt[s_, t, h])
                state = np.exp(dts * a[h, 0]) * state + dts * np.outer(x[s_, t, h], b[s_, t, g])
                y[s_, t, h] = state @ c[s_, t, g]
    return y


def ssm_scan_backward(x, dt, a, b, c, dy):
    """Every input's gradient of sum(ssm_scan(...) * dy), through time
    backwards with every state kept (float64; the sizes tests use)."""
    b_, t_, h_, p = x.shape
    share = h_ // b.shape[2]
    grads = [np.zeros_like(v) for v in (x, dt, a, b, c)]
    dx, ddt, da, db, dc = grads
    for s_ in range(b_):
        for h in range(h_):
            g = h // share
            states = [np.zeros((p, b.shape[3]))]
            for t in range(t_):
                dts = _softplus(dt[s_, t, h])
                states.append(np.exp(dts * a[h, 0]) * states[-1] + dts * np.outer(x[s_, t, h], b[s_, t, g]))
            ds = np.zeros_like(states[0])
            for t in reversed(range(t_)):
                dts = _softplus(dt[s_, t, h])
                decay = np.exp(dts * a[h, 0])
                slope = 1.0 if dt[s_, t, h] > 20 else 1 / (1 + np.exp(-dt[s_, t, h]))
                x_t, b_t, c_t = x[s_, t, h], b[s_, t, g], c[s_, t, g]
                dc[s_, t, g] += states[t + 1].T @ dy[s_, t, h]
                ds = ds + np.outer(dy[s_, t, h], c_t)
                du = ds @ b_t  # u = dts x
                db[s_, t, g] += ds.T @ (dts * x_t)
                ddecay = np.sum(ds * states[t])
                dx[s_, t, h] = dts * du
                ddts = du @ x_t + ddecay * decay * a[h, 0]
                da[h, 0] += ddecay * decay * dts
                ddt[s_, t, h] = ddts * slope
                ds = decay * ds
    return grads
