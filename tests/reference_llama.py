"""Independent float64 numpy reference for the llama forward/backward pass.

This module is deliberately self-contained (numpy only, no autograd) so it can
serve as ground truth for the ggml-based training code in ``toy``.

Conventions (they mirror ggml / llama.cpp GGUF tensor names):

* matrices are stored (out, in) and applied as ``y = x @ W.T``;
* ``token_embd.weight`` (vocab, d), per layer ``blk.{i}.attn_norm.weight``,
  ``attn_q/k/v/output.weight`` (+ optional ``attn_q/k/v.bias``),
  ``ffn_norm.weight``, ``ffn_gate/up/down.weight``; ``output_norm.weight``;
  ``output.weight`` only when the output projection is untied;
* RoPE is ggml's NORM mode (adjacent pairs ``(x[2i], x[2i+1])`` are rotated by
  ``pos * base**(-2i/head_dim)``), applied to q and k;
* grouped-query attention: query head ``h`` reads kv head ``h // (n_heads // n_kv_heads)``;
* the causal mask is by index within the sequence, not by ``positions``.

Public API:

    forward(params, cfg, tokens, positions) -> logits            (B, T, vocab)
    loss_and_grads(params, cfg, tokens, positions, labels) -> (loss, grads)
    init_params(cfg, rng, scale=0.02) -> params
    adamw_step(param, grad, m, v, lr, beta1, beta2, eps, weight_decay, t)
        -> (new_param, new_m, new_v)

``cfg`` may be a :class:`Config` or any mapping / object with the fields
vocab, d_model, n_layers, n_heads, n_kv_heads, d_ff, rope_base, rms_eps,
untied, qkv_bias.

Shape letters used in comments: B batch, T sequence, d d_model, H n_heads,
K n_kv_heads, D head_dim, F d_ff, V vocab, G = H // K (query heads per kv head).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

# --------------------------------------------------------------------------
# config
# --------------------------------------------------------------------------


@dataclass
class Config:
    vocab: int
    d_model: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_ff: int
    rope_base: float = 10000.0
    rms_eps: float = 1e-5
    untied: bool = True
    qkv_bias: bool = False

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


def as_config(cfg) -> Config:
    """Accept a Config, a dict, or any object with the right attributes."""
    if isinstance(cfg, Config):
        return cfg
    names = [f.name for f in fields(Config)]
    if isinstance(cfg, dict):
        kw = {n: cfg[n] for n in names if n in cfg}
    else:
        kw = {n: getattr(cfg, n) for n in names if hasattr(cfg, n)}
    if "rms_eps" not in kw:
        # toy's ModelConfig calls it norm_eps (RMSNorm's here, LayerNorm's for GPT-2)
        source = cfg if isinstance(cfg, dict) else vars(cfg)
        if "norm_eps" in source:
            kw["rms_eps"] = source["norm_eps"]
    c = Config(**kw)
    c.untied = bool(c.untied)
    c.qkv_bias = bool(c.qkv_bias)
    c.rope_base = float(c.rope_base)
    c.rms_eps = float(c.rms_eps)
    return c


def _check_config(c: Config) -> None:
    assert c.d_model % c.n_heads == 0, "d_model must be divisible by n_heads"
    assert c.n_heads % c.n_kv_heads == 0, "n_heads must be divisible by n_kv_heads"
    assert c.head_dim % 2 == 0, "head_dim must be even for RoPE"


def param_shapes(cfg) -> dict[str, tuple[int, ...]]:
    """Name -> numpy shape of every parameter the config implies."""
    c = as_config(cfg)
    d, hd = c.d_model, c.head_dim
    q_dim, kv_dim = c.n_heads * hd, c.n_kv_heads * hd
    shapes: dict[str, tuple[int, ...]] = {"token_embd.weight": (c.vocab, d)}
    for i in range(c.n_layers):
        p = f"blk.{i}."
        shapes[p + "attn_norm.weight"] = (d,)
        shapes[p + "attn_q.weight"] = (q_dim, d)
        shapes[p + "attn_k.weight"] = (kv_dim, d)
        shapes[p + "attn_v.weight"] = (kv_dim, d)
        if c.qkv_bias:
            shapes[p + "attn_q.bias"] = (q_dim,)
            shapes[p + "attn_k.bias"] = (kv_dim,)
            shapes[p + "attn_v.bias"] = (kv_dim,)
        shapes[p + "attn_output.weight"] = (d, q_dim)
        shapes[p + "ffn_norm.weight"] = (d,)
        shapes[p + "ffn_gate.weight"] = (c.d_ff, d)
        shapes[p + "ffn_up.weight"] = (c.d_ff, d)
        shapes[p + "ffn_down.weight"] = (d, c.d_ff)
    shapes["output_norm.weight"] = (d,)
    if c.untied:
        shapes["output.weight"] = (c.vocab, d)
    return shapes


def init_params(cfg, rng: np.random.Generator, scale: float = 0.02) -> dict[str, np.ndarray]:
    """Random float64 parameters: matrices/biases ~ N(0, scale^2), norm weights ~ 1 + N(0, 0.1^2)."""
    params = {}
    for name, shape in param_shapes(cfg).items():
        if name.endswith("norm.weight"):
            params[name] = 1.0 + 0.1 * rng.standard_normal(shape)
        else:
            params[name] = scale * rng.standard_normal(shape)
    return params


# --------------------------------------------------------------------------
# primitives: each *_fwd returns (out, cache); each *_bwd takes (dout, cache)
# --------------------------------------------------------------------------

# ---- embedding ----


def embedding_fwd(table, tokens):
    # table (V, d), tokens (B, T) int -> (B, T, d)
    return table[tokens], (table.shape, tokens)


def embedding_bwd(dout, cache):
    # dout (B, T, d) -> dtable (V, d); repeated tokens accumulate
    shape, tokens = cache
    dtable = np.zeros(shape)
    np.add.at(dtable, tokens.reshape(-1), dout.reshape(-1, shape[1]))
    return dtable


# ---- rmsnorm (with weight) ----


def rmsnorm_fwd(x, w, eps):
    # x (..., d), w (d,) -> y (..., d);  y = x / sqrt(mean(x^2) + eps) * w
    r = 1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)  # (..., 1)
    xn = x * r  # (..., d)
    return xn * w, (xn, r, w)


def rmsnorm_bwd(dy, cache):
    # dy (..., d) -> dx (..., d), dw (d,)
    xn, r, w = cache
    dw = (dy * xn).reshape(-1, xn.shape[-1]).sum(axis=0)
    dxn = dy * w
    # d(xn_j)/d(x_k) = r * (delta_jk - xn_j * xn_k / d)
    dx = r * (dxn - xn * np.mean(dxn * xn, axis=-1, keepdims=True))
    return dx, dw


# ---- linear: y = x @ W.T (+ b) ----


def linear_fwd(x, W, b=None):
    # x (..., in), W (out, in), b (out,) or None -> y (..., out)
    y = x @ W.T
    if b is not None:
        y = y + b
    return y, (x, W, b is not None)


def linear_bwd(dy, cache):
    # dy (..., out) -> dx (..., in), dW (out, in), db (out,) or None
    x, W, has_bias = cache
    dy2 = dy.reshape(-1, dy.shape[-1])  # (N, out)
    x2 = x.reshape(-1, x.shape[-1])  # (N, in)
    dW = dy2.T @ x2
    db = dy2.sum(axis=0) if has_bias else None
    dx = dy @ W
    return dx, dW, db


# ---- RoPE, ggml NORM mode (adjacent pairs) ----


def rope_angles(positions, head_dim, base):
    # positions (B, T) int -> cos, sin each (B, T, 1, D/2), broadcast over heads
    i = np.arange(head_dim // 2, dtype=np.float64)
    inv_freq = base ** (-2.0 * i / head_dim)  # (D/2,)
    theta = positions.astype(np.float64)[:, :, None] * inv_freq[None, None, :]  # (B, T, D/2)
    return np.cos(theta)[:, :, None, :], np.sin(theta)[:, :, None, :]


def _rotate_pairs(x, cos, sin):
    # x (B, T, nh, D); rotate each (x[2i], x[2i+1]) by the angle whose cos/sin are given
    x0, x1 = x[..., 0::2], x[..., 1::2]  # (B, T, nh, D/2)
    out = np.empty_like(x)
    out[..., 0::2] = x0 * cos - x1 * sin
    out[..., 1::2] = x0 * sin + x1 * cos
    return out


def rope_fwd(x, cos, sin):
    # x (B, T, nh, D) -> (B, T, nh, D)
    return _rotate_pairs(x, cos, sin), (cos, sin)


def rope_bwd(dout, cache):
    # rotation is orthogonal: the backward pass is the rotation by -theta
    cos, sin = cache
    return _rotate_pairs(dout, cos, -sin)


# ---- grouped-query attention, causal unless told (pure, no projections) ----


def attention_fwd(q, k, v, causal=True):
    # q (B, T, H, D), k/v (B, T, K, D) -> out (B, T, H, D)
    B, T, H, D = q.shape
    G = H // k.shape[2]
    ke = np.repeat(k, G, axis=2)  # (B, T, H, D): query head h uses kv head h // G
    ve = np.repeat(v, G, axis=2)  # (B, T, H, D)
    scale = 1.0 / np.sqrt(D)
    s = np.einsum("bihd,bjhd->bhij", q, ke) * scale  # (B, H, Tq, Tk)
    if causal:
        s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, -np.inf)  # key j <= query i
    s = s - s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    p = p / p.sum(axis=-1, keepdims=True)  # (B, H, T, T)
    out = np.einsum("bhij,bjhd->bihd", p, ve)  # (B, T, H, D)
    return out, (q, ke, ve, p, G, scale)


def attention_bwd(dout, cache):
    # dout (B, T, H, D) -> dq (B, T, H, D), dk/dv (B, T, K, D)
    q, ke, ve, p, G, scale = cache
    B, T, H, D = q.shape
    dp = np.einsum("bihd,bjhd->bhij", dout, ve)  # (B, H, T, T)
    dve = np.einsum("bhij,bihd->bjhd", p, dout)  # (B, T, H, D)
    # softmax backward (masked entries have p == 0, so they get ds == 0)
    ds = p * (dp - np.sum(dp * p, axis=-1, keepdims=True))  # (B, H, T, T)
    dq = np.einsum("bhij,bjhd->bihd", ds, ke) * scale  # (B, T, H, D)
    dke = np.einsum("bhij,bihd->bjhd", ds, q) * scale  # (B, T, H, D)
    # GQA backward: sum over the G consecutive query heads sharing each kv head
    dk = dke.reshape(B, T, H // G, G, D).sum(axis=3)  # (B, T, K, D)
    dv = dve.reshape(B, T, H // G, G, D).sum(axis=3)  # (B, T, K, D)
    return dq, dk, dv


# ---- SwiGLU pieces ----


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # overflow-free logistic


def silu_fwd(z):
    s = _sigmoid(z)
    return z * s, (z, s)


def silu_bwd(dy, cache):
    z, s = cache
    return dy * s * (1.0 + z * (1.0 - s))


# ---- cross-entropy ----


def cross_entropy_fwd(logits, labels):
    # logits (B, T, V), labels (B, T) -> mean loss over B*T tokens
    m = logits.max(axis=-1, keepdims=True)
    z = logits - m
    lse = np.log(np.exp(z).sum(axis=-1, keepdims=True))
    logp = z - lse  # (B, T, V)
    picked = np.take_along_axis(logp, labels[..., None], axis=-1)[..., 0]
    return -picked.mean(), (logp, labels)


def cross_entropy_bwd(cache):
    # -> dlogits (B, T, V) for d(loss) = 1
    logp, labels = cache
    n = labels.size
    dlogits = np.exp(logp)
    np.put_along_axis(
        dlogits, labels[..., None], np.take_along_axis(dlogits, labels[..., None], axis=-1) - 1.0, axis=-1
    )
    return dlogits / n


# --------------------------------------------------------------------------
# blocks
# --------------------------------------------------------------------------


def attn_block_fwd(x, params, prefix, c: Config, cos, sin):
    # x (B, T, d) -> attn (B, T, d)   (residual added by the caller)
    B, T, _ = x.shape
    H, K, D = c.n_heads, c.n_kv_heads, c.head_dim
    bias = (lambda n: params[prefix + n + ".bias"]) if c.qkv_bias else (lambda n: None)
    h, c_norm = rmsnorm_fwd(x, params[prefix + "attn_norm.weight"], c.rms_eps)
    q, c_q = linear_fwd(h, params[prefix + "attn_q.weight"], bias("attn_q"))  # (B, T, H*D)
    k, c_k = linear_fwd(h, params[prefix + "attn_k.weight"], bias("attn_k"))  # (B, T, K*D)
    v, c_v = linear_fwd(h, params[prefix + "attn_v.weight"], bias("attn_v"))  # (B, T, K*D)
    q = q.reshape(B, T, H, D)
    k = k.reshape(B, T, K, D)
    v = v.reshape(B, T, K, D)
    q, c_rq = rope_fwd(q, cos, sin)
    k, c_rk = rope_fwd(k, cos, sin)
    o, c_att = attention_fwd(q, k, v)  # (B, T, H, D)
    out, c_o = linear_fwd(o.reshape(B, T, H * D), params[prefix + "attn_output.weight"])
    return out, (c_norm, c_q, c_k, c_v, c_rq, c_rk, c_att, c_o)


def attn_block_bwd(dout, cache, prefix, c: Config, grads):
    # dout (B, T, d) -> dx (B, T, d); parameter grads written into `grads`
    c_norm, c_q, c_k, c_v, c_rq, c_rk, c_att, c_o = cache
    B, T, _ = dout.shape
    H, K, D = c.n_heads, c.n_kv_heads, c.head_dim
    do, grads[prefix + "attn_output.weight"], _ = linear_bwd(dout, c_o)  # (B, T, H*D)
    dq, dk, dv = attention_bwd(do.reshape(B, T, H, D), c_att)
    dq = rope_bwd(dq, c_rq).reshape(B, T, H * D)
    dk = rope_bwd(dk, c_rk).reshape(B, T, K * D)
    dv = dv.reshape(B, T, K * D)
    dh = np.zeros(dout.shape)
    for name, dy, cc in (("attn_q", dq, c_q), ("attn_k", dk, c_k), ("attn_v", dv, c_v)):
        dh_part, dW, db = linear_bwd(dy, cc)
        dh += dh_part
        grads[prefix + name + ".weight"] = dW
        if c.qkv_bias:
            grads[prefix + name + ".bias"] = db
    dx, grads[prefix + "attn_norm.weight"] = rmsnorm_bwd(dh, c_norm)
    return dx


def ffn_block_fwd(x, params, prefix, c: Config):
    # x (B, T, d) -> ffn (B, T, d)   (residual added by the caller)
    h, c_norm = rmsnorm_fwd(x, params[prefix + "ffn_norm.weight"], c.rms_eps)
    g, c_g = linear_fwd(h, params[prefix + "ffn_gate.weight"])  # (B, T, F)
    u, c_u = linear_fwd(h, params[prefix + "ffn_up.weight"])  # (B, T, F)
    a, c_silu = silu_fwd(g)  # (B, T, F)
    m = a * u  # (B, T, F)
    out, c_d = linear_fwd(m, params[prefix + "ffn_down.weight"])  # (B, T, d)
    return out, (c_norm, c_g, c_u, c_silu, a, u, c_d)


def ffn_block_bwd(dout, cache, prefix, c: Config, grads):
    c_norm, c_g, c_u, c_silu, a, u, c_d = cache
    dm, grads[prefix + "ffn_down.weight"], _ = linear_bwd(dout, c_d)  # (B, T, F)
    da = dm * u
    du = dm * a
    dg = silu_bwd(da, c_silu)
    dh_g, grads[prefix + "ffn_gate.weight"], _ = linear_bwd(dg, c_g)
    dh_u, grads[prefix + "ffn_up.weight"], _ = linear_bwd(du, c_u)
    dx, grads[prefix + "ffn_norm.weight"] = rmsnorm_bwd(dh_g + dh_u, c_norm)
    return dx


# --------------------------------------------------------------------------
# whole model
# --------------------------------------------------------------------------


def _forward_with_cache(params, cfg, tokens, positions):
    c = as_config(cfg)
    _check_config(c)
    params = {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}
    tokens = np.asarray(tokens)
    positions = np.asarray(positions)
    assert tokens.ndim == 2 and positions.shape == tokens.shape

    cos, sin = rope_angles(positions, c.head_dim, c.rope_base)
    x, c_emb = embedding_fwd(params["token_embd.weight"], tokens)  # (B, T, d)
    layer_caches = []
    for i in range(c.n_layers):
        prefix = f"blk.{i}."
        a, c_attn = attn_block_fwd(x, params, prefix, c, cos, sin)
        x = x + a
        f, c_ffn = ffn_block_fwd(x, params, prefix, c)
        x = x + f
        layer_caches.append((c_attn, c_ffn))
    xf, c_fnorm = rmsnorm_fwd(x, params["output_norm.weight"], c.rms_eps)
    w_out = params["output.weight"] if c.untied else params["token_embd.weight"]
    logits, c_out = linear_fwd(xf, w_out)  # (B, T, V)
    return logits, (c, c_emb, layer_caches, c_fnorm, c_out)


def forward(params, cfg, tokens, positions) -> np.ndarray:
    """Logits (B, T, vocab), float64."""
    logits, _ = _forward_with_cache(params, cfg, tokens, positions)
    return logits


def loss(params, cfg, tokens, positions, labels) -> float:
    """Mean cross-entropy only (handy for finite differences)."""
    logits = forward(params, cfg, tokens, positions)
    value, _ = cross_entropy_fwd(logits, np.asarray(labels))
    return float(value)


def loss_and_grads(params, cfg, tokens, positions, labels):
    """Mean cross-entropy loss and d(loss)/d(param) for every key of `params`."""

    def mean_cross_entropy(logits):
        value, c_ce = cross_entropy_fwd(logits, np.asarray(labels))
        return value, cross_entropy_bwd(c_ce)

    return objective_and_grads(params, cfg, tokens, positions, mean_cross_entropy)


def objective_and_grads(params, cfg, tokens, positions, objective):
    """objective(logits (B, T, V)) -> (value, d value / d logits); returns the
    value and d value / d param for every key of `params`."""
    logits, (c, c_emb, layer_caches, c_fnorm, c_out) = _forward_with_cache(params, cfg, tokens, positions)
    value, dlogits = objective(logits)  # dlogits (B, T, V)

    grads: dict[str, np.ndarray] = {}
    dxf, dw_out, _ = linear_bwd(dlogits, c_out)  # (B, T, d), (V, d)
    dx, grads["output_norm.weight"] = rmsnorm_bwd(dxf, c_fnorm)
    for i in reversed(range(c.n_layers)):
        prefix = f"blk.{i}."
        c_attn, c_ffn = layer_caches[i]
        dx = dx + ffn_block_bwd(dx, c_ffn, prefix, c, grads)  # residual + ffn branch
        dx = dx + attn_block_bwd(dx, c_attn, prefix, c, grads)  # residual + attn branch
    d_embd = embedding_bwd(dx, c_emb)
    if c.untied:
        grads["output.weight"] = dw_out
        grads["token_embd.weight"] = d_embd
    else:
        grads["token_embd.weight"] = d_embd + dw_out  # tied: both uses accumulate

    missing = set(params) - set(grads)
    extra = set(grads) - set(params)
    assert not missing and not extra, f"param/grad key mismatch: missing={missing} extra={extra}"
    for k in grads:
        assert grads[k].shape == np.shape(params[k]), k
    return float(value), {k: grads[k] for k in params}


# --------------------------------------------------------------------------
# optimizer
# --------------------------------------------------------------------------


def adamw_step(param, grad, m, v, lr, beta1, beta2, eps, weight_decay, t):
    """One decoupled-weight-decay AdamW step (Loshchilov & Hutter); t starts at 1.

    Returns (new_param, new_m, new_v); inputs are not modified.
    """
    param = np.asarray(param, dtype=np.float64)
    grad = np.asarray(grad, dtype=np.float64)
    m = beta1 * np.asarray(m, dtype=np.float64) + (1.0 - beta1) * grad
    v = beta2 * np.asarray(v, dtype=np.float64) + (1.0 - beta2) * grad * grad
    mhat = m / (1.0 - beta1**t)
    vhat = v / (1.0 - beta2**t)
    new_param = param * (1.0 - lr * weight_decay) - lr * mhat / (np.sqrt(vhat) + eps)
    return new_param, m, v
