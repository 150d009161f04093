"""Independent float64 numpy reference for the pre-LayerNorm GELU models:
GPT-2 (causal, tied head, learned positions) and ViT (bidirectional, class
token, linear head). Reuses reference_llama's primitives (linear,
embedding, attention, cross-entropy); adds LayerNorm and tanh-GELU.

Parameters are named as toy names them (llama.cpp's GPT-2 names), matrices
stored (out, in) and applied as ``y = x @ W.T``:

* ``blk.{i}.attn_norm.weight/bias``, ``attn_qkv.weight`` (3d, d) with q, k, v
  stacked, ``attn_qkv.bias``, ``attn_output.weight/bias``,
  ``ffn_norm.weight/bias``, ``ffn_up.weight/bias``, ``ffn_down.weight/bias``;
* GPT-2: ``token_embd.weight`` (V, d) (also the head), ``position_embd.weight``
  (T, d), ``output_norm.weight/bias``;
* ViT: ``patch_embd.weight`` (d, patch_dim), ``patch_embd.bias``,
  ``position_embd.weight`` (1 + P, d) (row 0 is the class token's: its patch
  is zeros), ``output_norm.weight/bias``, ``output.weight`` (C, d),
  ``output.bias``.

Public API:

    gpt2_loss_and_grads(params, cfg, tokens, positions, labels) -> (loss, grads, logits)
    vit_loss_and_grads(params, cfg, patches, labels) -> (loss, grads, logits)

cfg has n_layers, n_heads and eps.
"""

from __future__ import annotations

import numpy as np

from reference_llama import (
    attention_bwd,
    attention_fwd,
    cross_entropy_bwd,
    cross_entropy_fwd,
    embedding_bwd,
    embedding_fwd,
    linear_bwd,
    linear_fwd,
)

SQRT_2_OVER_PI = np.sqrt(2.0 / np.pi)


# ---- LayerNorm (weight and bias) ----


def layernorm_fwd(x, w, b, eps):
    # x (..., d) -> y (..., d);  y = (x - mean) / sqrt(var + eps) * w + b
    xc = x - x.mean(axis=-1, keepdims=True)
    r = 1.0 / np.sqrt(np.mean(xc * xc, axis=-1, keepdims=True) + eps)
    xn = xc * r
    return xn * w + b, (xn, r, w)


def layernorm_bwd(dy, cache):
    # dy (..., d) -> dx (..., d), dw (d,), db (d,)
    xn, r, w = cache
    d = xn.shape[-1]
    dw = (dy * xn).reshape(-1, d).sum(axis=0)
    db = dy.reshape(-1, d).sum(axis=0)
    dxn = dy * w
    dx = r * (dxn - dxn.mean(axis=-1, keepdims=True) - xn * np.mean(dxn * xn, axis=-1, keepdims=True))
    return dx, dw, db


# ---- GELU, tanh form ----


def gelu_fwd(x):
    t = np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x**3))
    return 0.5 * x * (1.0 + t), (x, t)


def gelu_bwd(dy, cache):
    x, t = cache
    dinner = SQRT_2_OVER_PI * (1.0 + 3 * 0.044715 * x**2)
    return dy * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * dinner)


# ---- the block ----


def block_fwd(x, params, prefix, cfg, causal):
    # x (B, T, d) -> (B, T, d), residuals included
    B, T, d = x.shape
    H = cfg.n_heads

    def p(n):
        return params[prefix + n]

    h, c_ln1 = layernorm_fwd(x, p("attn_norm.weight"), p("attn_norm.bias"), cfg.eps)
    qkv, c_qkv = linear_fwd(h, p("attn_qkv.weight"), p("attn_qkv.bias"))  # (B, T, 3d)
    q, k, v = (qkv[..., i * d : (i + 1) * d].reshape(B, T, H, d // H) for i in range(3))
    o, c_att = attention_fwd(q, k, v, causal=causal)
    a, c_o = linear_fwd(o.reshape(B, T, d), p("attn_output.weight"), p("attn_output.bias"))
    x = x + a
    h2, c_ln2 = layernorm_fwd(x, p("ffn_norm.weight"), p("ffn_norm.bias"), cfg.eps)
    u, c_up = linear_fwd(h2, p("ffn_up.weight"), p("ffn_up.bias"))
    g, c_gelu = gelu_fwd(u)
    f, c_down = linear_fwd(g, p("ffn_down.weight"), p("ffn_down.bias"))
    return x + f, (c_ln1, c_qkv, c_att, c_o, c_ln2, c_up, c_gelu, c_down)


def block_bwd(dx, cache, prefix, grads):
    c_ln1, c_qkv, c_att, c_o, c_ln2, c_up, c_gelu, c_down = cache
    B, T, d = dx.shape
    dg, grads[prefix + "ffn_down.weight"], grads[prefix + "ffn_down.bias"] = linear_bwd(dx, c_down)
    du = gelu_bwd(dg, c_gelu)
    dh2, grads[prefix + "ffn_up.weight"], grads[prefix + "ffn_up.bias"] = linear_bwd(du, c_up)
    dln2, grads[prefix + "ffn_norm.weight"], grads[prefix + "ffn_norm.bias"] = layernorm_bwd(dh2, c_ln2)
    dx = dx + dln2
    do, grads[prefix + "attn_output.weight"], grads[prefix + "attn_output.bias"] = linear_bwd(dx, c_o)
    H = do.shape[-1] // c_att[0].shape[-1]
    dq, dk, dv = attention_bwd(do.reshape(B, T, H, d // H), c_att)
    dqkv = np.concatenate([t.reshape(B, T, d) for t in (dq, dk, dv)], axis=-1)
    dh, grads[prefix + "attn_qkv.weight"], grads[prefix + "attn_qkv.bias"] = linear_bwd(dqkv, c_qkv)
    dln1, grads[prefix + "attn_norm.weight"], grads[prefix + "attn_norm.bias"] = layernorm_bwd(dh, c_ln1)
    return dx + dln1


def _blocks_fwd(x, params, cfg, causal):
    caches = []
    for i in range(cfg.n_layers):
        x, c = block_fwd(x, params, f"blk.{i}.", cfg, causal)
        caches.append(c)
    return x, caches


def _blocks_bwd(dx, caches, grads):
    for i in reversed(range(len(caches))):
        dx = block_bwd(dx, caches[i], f"blk.{i}.", grads)
    return dx


# ---- GPT-2 ----


def gpt2_loss_and_grads(params, cfg, tokens, positions, labels):
    """Mean cross-entropy, d(loss)/d(param) for every param, and the logits (B, T, V)."""
    params = {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}
    e, c_e = embedding_fwd(params["token_embd.weight"], tokens)
    pe, c_pe = embedding_fwd(params["position_embd.weight"], positions)
    x, caches = _blocks_fwd(e + pe, params, cfg, causal=True)
    xf, c_lnf = layernorm_fwd(x, params["output_norm.weight"], params["output_norm.bias"], cfg.eps)
    logits, c_head = linear_fwd(xf, params["token_embd.weight"])
    loss, c_ce = cross_entropy_fwd(logits, labels)

    grads = {}
    dxf, d_head, _ = linear_bwd(cross_entropy_bwd(c_ce), c_head)
    dx, grads["output_norm.weight"], grads["output_norm.bias"] = layernorm_bwd(dxf, c_lnf)
    dx = _blocks_bwd(dx, caches, grads)
    grads["token_embd.weight"] = embedding_bwd(dx, c_e) + d_head  # tied: both uses add up
    grads["position_embd.weight"] = embedding_bwd(dx, c_pe)
    return loss, grads, logits


# ---- ViT ----


def vit_loss_and_grads(params, cfg, patches, labels):
    """patches (B, P, patch_dim), labels (B,) -> loss, grads, logits (B, C)."""
    params = {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}
    B, P, _ = patches.shape
    padded = np.concatenate([np.zeros((B, 1, patches.shape[2])), patches], axis=1)  # class slot first
    x, c_patch = linear_fwd(padded, params["patch_embd.weight"], params["patch_embd.bias"])
    x = x + params["position_embd.weight"]
    x, caches = _blocks_fwd(x, params, cfg, causal=False)
    cls, c_lnf = layernorm_fwd(x[:, 0], params["output_norm.weight"], params["output_norm.bias"], cfg.eps)
    logits, c_head = linear_fwd(cls, params["output.weight"], params["output.bias"])
    loss, c_ce = cross_entropy_fwd(logits[:, None, :], labels[:, None])

    grads = {}
    dlogits = cross_entropy_bwd(c_ce)[:, 0, :]
    dcls, grads["output.weight"], grads["output.bias"] = linear_bwd(dlogits, c_head)
    dcls, grads["output_norm.weight"], grads["output_norm.bias"] = layernorm_bwd(dcls, c_lnf)
    dx = np.zeros(x.shape)
    dx[:, 0] = dcls
    dx = _blocks_bwd(dx, caches, grads)
    grads["position_embd.weight"] = dx.sum(axis=0)
    _, grads["patch_embd.weight"], grads["patch_embd.bias"] = linear_bwd(dx, c_patch)
    return loss, grads, logits
