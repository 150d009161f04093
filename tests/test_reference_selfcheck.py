"""Self-checks for tests/reference_llama.py (the float64 numpy reference).

The main check compares the hand-written backward pass against central finite
differences on every entry of every parameter of a tiny model.
"""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_llama as ref  # noqa: E402


def tiny_cfg(untied, qkv_bias, **kw):
    base = dict(
        vocab=11,
        d_model=8,
        n_layers=2,
        n_heads=4,
        n_kv_heads=2,
        d_ff=12,
        rope_base=10000.0,
        rms_eps=1e-5,
        untied=untied,
        qkv_bias=qkv_bias,
    )
    base.update(kw)
    return ref.Config(**base)


def tiny_batch(rng, cfg, B=2, T=5):
    tokens = rng.integers(0, cfg.vocab, size=(B, T))
    tokens[0, 1] = tokens[0, 3]  # a repeated token exercises embedding accumulation
    positions = np.arange(T)[None, :] + np.array([[0], [7]])  # second row offset by 7
    labels = rng.integers(0, cfg.vocab, size=(B, T))
    return tokens, positions, labels


@pytest.mark.parametrize("untied", [False, True])
@pytest.mark.parametrize("qkv_bias", [False, True])
def test_grads_match_finite_differences(untied, qkv_bias):
    rng = np.random.default_rng(1234 + 2 * untied + qkv_bias)
    cfg = tiny_cfg(untied, qkv_bias)
    # A large init scale keeps the attention weights far from uniform and the
    # gradients well above finite-difference noise.
    params = ref.init_params(cfg, rng, scale=0.5)
    tokens, positions, labels = tiny_batch(rng, cfg)

    loss, grads = ref.loss_and_grads(params, cfg, tokens, positions, labels)
    assert np.isfinite(loss)
    assert set(grads) == set(params) == set(ref.param_shapes(cfg))
    assert np.isclose(loss, ref.loss(params, cfg, tokens, positions, labels), rtol=0, atol=1e-13)

    h = 1e-6
    for name, p in params.items():
        assert grads[name].shape == p.shape, name
        fd = np.zeros_like(p)
        flat, fd_flat = p.reshape(-1), fd.reshape(-1)  # views into params[name] / fd
        for j in range(flat.size):
            orig = flat[j]
            flat[j] = orig + h
            lp = ref.loss(params, cfg, tokens, positions, labels)
            flat[j] = orig - h
            lm = ref.loss(params, cfg, tokens, positions, labels)
            flat[j] = orig
            fd_flat[j] = (lp - lm) / (2 * h)
        g = grads[name]
        rel = np.linalg.norm(g - fd) / max(np.linalg.norm(fd), 1e-12)
        assert np.linalg.norm(fd) > 1e-6, f"{name}: gradient suspiciously small"
        assert rel < 1e-6, f"{name}: relative error {rel:.3e}"
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-8, err_msg=name)


def test_rope_matches_explicit_loop():
    rng = np.random.default_rng(0)
    B, T, nh, D, base = 1, 3, 2, 6, 500.0
    x = rng.standard_normal((B, T, nh, D))
    positions = np.array([[0, 4, 11]])
    cos, sin = ref.rope_angles(positions, D, base)
    out, _ = ref.rope_fwd(x, cos, sin)
    expect = np.empty_like(x)
    for t in range(T):
        for h in range(nh):
            for i in range(D // 2):
                th = positions[0, t] * base ** (-2.0 * i / D)
                a, b = x[0, t, h, 2 * i], x[0, t, h, 2 * i + 1]
                expect[0, t, h, 2 * i] = a * np.cos(th) - b * np.sin(th)
                expect[0, t, h, 2 * i + 1] = a * np.sin(th) + b * np.cos(th)
    np.testing.assert_allclose(out, expect, rtol=0, atol=1e-14)
    # position 0 is the identity; backward undoes forward
    np.testing.assert_allclose(out[:, 0], x[:, 0], rtol=0, atol=0)
    np.testing.assert_allclose(ref.rope_bwd(out, (cos, sin)), x, rtol=0, atol=1e-14)


def test_rope_only_relative_positions_matter():
    rng = np.random.default_rng(5)
    cfg = tiny_cfg(untied=True, qkv_bias=True)
    params = ref.init_params(cfg, rng, scale=0.5)
    tokens, _, _ = tiny_batch(rng, cfg)
    pos = np.tile(np.arange(5), (2, 1))
    a = ref.forward(params, cfg, tokens, pos)
    b = ref.forward(params, cfg, tokens, pos + 123)
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)
    # ...but non-uniform position changes do matter
    c = ref.forward(params, cfg, tokens, pos * 2)
    assert np.abs(a - c).max() > 1e-4


def test_causal():
    rng = np.random.default_rng(6)
    cfg = tiny_cfg(untied=False, qkv_bias=False)
    params = ref.init_params(cfg, rng, scale=0.5)
    tokens, positions, _ = tiny_batch(rng, cfg)
    a = ref.forward(params, cfg, tokens, positions)
    tokens2 = tokens.copy()
    tokens2[:, 3] = (tokens2[:, 3] + 1) % cfg.vocab
    b = ref.forward(params, cfg, tokens2, positions)
    np.testing.assert_array_equal(a[:, :3], b[:, :3])
    assert np.abs(a[:, 3:] - b[:, 3:]).max() > 1e-6


def test_gqa_equals_mha_with_duplicated_kv_heads():
    """Query head h must use kv head h // (n_heads // n_kv_heads)."""
    rng = np.random.default_rng(7)
    cfg = tiny_cfg(untied=True, qkv_bias=True)  # 4 query heads, 2 kv heads
    mha = tiny_cfg(untied=True, qkv_bias=True, n_kv_heads=4)
    params = ref.init_params(cfg, rng, scale=0.5)
    D, G = cfg.head_dim, cfg.n_heads // cfg.n_kv_heads
    p_mha = dict(params)
    for i in range(cfg.n_layers):
        for n in ("attn_k", "attn_v"):
            w = params[f"blk.{i}.{n}.weight"].reshape(cfg.n_kv_heads, D, -1)
            p_mha[f"blk.{i}.{n}.weight"] = np.repeat(w, G, axis=0).reshape(-1, cfg.d_model)
            b = params[f"blk.{i}.{n}.bias"].reshape(cfg.n_kv_heads, D)
            p_mha[f"blk.{i}.{n}.bias"] = np.repeat(b, G, axis=0).reshape(-1)
    tokens, positions, _ = tiny_batch(rng, cfg)
    np.testing.assert_allclose(
        ref.forward(params, cfg, tokens, positions), ref.forward(p_mha, mha, tokens, positions), rtol=1e-12, atol=1e-13
    )


def test_config_from_dict_and_small_init():
    cfg = dict(
        vocab=11,
        d_model=8,
        n_layers=1,
        n_heads=2,
        n_kv_heads=1,
        d_ff=12,
        rope_base=10000.0,
        rms_eps=1e-5,
        untied=False,
        qkv_bias=False,
    )
    params = ref.init_params(cfg, np.random.default_rng(0))
    assert "output.weight" not in params and "blk.0.attn_q.bias" not in params
    tokens = np.zeros((1, 4), dtype=np.int64)
    positions = np.arange(4)[None]
    logits = ref.forward(params, cfg, tokens, positions)
    assert logits.shape == (1, 4, 11) and logits.dtype == np.float64
    loss, grads = ref.loss_and_grads(params, cfg, tokens, positions, tokens)
    # near-uniform predictions at small init (tied: label == input token is slightly favoured)
    assert abs(loss - np.log(11)) < 0.2
    assert set(grads) == set(params)


def test_adamw_step():
    rng = np.random.default_rng(8)
    p, g = rng.standard_normal(5), rng.standard_normal(5)
    m, v = np.zeros(5), np.zeros(5)
    lr, b1, b2, eps, wd = 1e-2, 0.9, 0.99, 1e-8, 0.1
    p1, m1, v1 = ref.adamw_step(p, g, m, v, lr, b1, b2, eps, wd, t=1)
    # first step: mhat = g, vhat = g^2
    np.testing.assert_allclose(p1, p * (1 - lr * wd) - lr * g / (np.abs(g) + eps), rtol=1e-13)
    g2 = rng.standard_normal(5)
    p2, m2, v2 = ref.adamw_step(p1, g2, m1, v1, lr, b1, b2, eps, wd, t=2)
    for j in range(5):  # scalar restatement of step 2
        mm = b1 * (1 - b1) * g[j] + (1 - b1) * g2[j]
        vv = b2 * (1 - b2) * g[j] ** 2 + (1 - b2) * g2[j] ** 2
        step = (mm / (1 - b1**2)) / (np.sqrt(vv / (1 - b2**2)) + eps)
        assert np.isclose(p2[j], p1[j] * (1 - lr * wd) - lr * step, rtol=1e-13)
        assert np.isclose(m2[j], mm, rtol=1e-13) and np.isclose(v2[j], vv, rtol=1e-13)
    np.testing.assert_array_equal(m, 0)  # inputs untouched
