"""Adding an architecture is a file and a table line (tinynn/models/arch.c).

llama-postnorm (tinynn/models/llama_postnorm.c) is a small made-up variant written
that way: the llama block with its norms after each residual add. Its
logits must be what that placement computes, checked against a numpy
forward built from the reference's primitives."""

import numpy as np
import pytest

import reference_llama as ref
import toy
from toy.native.session import ModelDesc, Session

CFG = toy.ModelConfig(vocab=13, d_model=8, n_layers=2, n_heads=2, n_kv_heads=1, d_ff=12, arch="llama-postnorm")
T_SEQ, T_BATCH = 6, 2


def postnorm_logits(params, tokens, positions):
    """(B, T) ids -> (B, T, vocab): x = norm(x + attn(x)), x = norm(x + ffn(x)) per layer."""
    c = ref.as_config(CFG)
    B, T = tokens.shape
    H, K, D = c.n_heads, c.n_kv_heads, c.head_dim
    cos, sin = ref.rope_angles(positions, D, c.rope_base)
    x, _ = ref.embedding_fwd(params["token_embd.weight"], tokens)
    for i in range(c.n_layers):
        p = {name[len(f"blk.{i}.") :]: value for name, value in params.items() if name.startswith(f"blk.{i}.")}
        q = ref.rope_fwd(ref.linear_fwd(x, p["attn_q.weight"])[0].reshape(B, T, H, D), cos, sin)[0]
        k = ref.rope_fwd(ref.linear_fwd(x, p["attn_k.weight"])[0].reshape(B, T, K, D), cos, sin)[0]
        v = ref.linear_fwd(x, p["attn_v.weight"])[0].reshape(B, T, K, D)
        attn = ref.attention_fwd(q, k, v)[0].reshape(B, T, H * D)
        x = ref.rmsnorm_fwd(x + ref.linear_fwd(attn, p["attn_output.weight"])[0], p["attn_norm.weight"], c.rms_eps)[0]
        gate, up = ref.linear_fwd(x, p["ffn_gate.weight"])[0], ref.linear_fwd(x, p["ffn_up.weight"])[0]
        ffn = ref.linear_fwd(ref.silu_fwd(gate)[0] * up, p["ffn_down.weight"])[0]
        x = ref.rmsnorm_fwd(x + ffn, p["ffn_norm.weight"], c.rms_eps)[0]
    x = ref.rmsnorm_fwd(x, params["output_norm.weight"], c.rms_eps)[0]
    return ref.linear_fwd(x, params["token_embd.weight"])[0]


def realized(arch: str) -> Session:
    session = Session("cpu", threads=1)
    cfg = toy.ModelConfig(**{**CFG.to_dict(), "arch": arch})
    opts = toy.RecipeOptions(t_seq=T_SEQ, t_batch=T_BATCH, seed=5, init_scale=0.5)
    session.realize(ModelDesc.from_scratch(cfg, opts))
    session.build()
    return session


def test_a_variant_architecture_computes_what_its_norm_placement_says():
    session = realized("llama-postnorm")
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, CFG.vocab, (T_BATCH, T_SEQ)).astype(np.int32)
    positions = np.tile(np.arange(T_SEQ, dtype=np.int32), (T_BATCH, 1))
    session.upload(session.tokens, tokens)
    session.upload(session.positions, positions)
    session.upload(session.labels, tokens)
    session.compute_forward()
    logits = session.download(session.logits).reshape(T_BATCH, T_SEQ, CFG.vocab)
    params = {name: session.download(h).astype(np.float64) for name, h in session.params().items()}
    np.testing.assert_allclose(logits, postnorm_logits(params, tokens, positions), rtol=1e-4, atol=1e-5)

    # the same parameters in llama's placement give other logits: the table picked the variant
    llama = realized("llama")
    llama.upload(llama.tokens, tokens)
    llama.upload(llama.positions, positions)
    llama.upload(llama.labels, tokens)
    llama.compute_forward()
    assert np.abs(llama.download(llama.logits).reshape(logits.shape) - logits).max() > 1e-3


def test_a_variant_architecture_trains():
    session = realized("llama-postnorm")
    rng = np.random.default_rng(1)
    tokens = rng.integers(0, CFG.vocab, (T_BATCH, T_SEQ)).astype(np.int32)
    hp = np.array([1e-2, 0.9, 0.999, 1e-8, 0.0, 0.0, 0.0], dtype=np.float32)
    losses = []
    for step in range(1, 21):
        hp[5], hp[6] = 1 / (1 - 0.9**step), 1 / (1 - 0.999**step)
        session.upload(session.tokens, tokens)
        session.upload(session.positions, np.tile(np.arange(T_SEQ, dtype=np.int32), (T_BATCH, 1)))
        session.upload(session.labels, np.roll(tokens, -1, axis=1))
        session.upload(session.hp, hp)
        if step == 1:
            session.reset()
        session.compute_step()
        losses.append(float(session.download(session.loss)))
    assert losses[-1] < 0.5 * losses[0]


def test_an_unknown_architecture_is_refused_with_the_known_ones_named():
    session = Session("cpu", threads=1)
    with pytest.raises(
        toy.ToyError, match="unknown architecture 'mamba': choose from llama, gpt2, vit, llama-postnorm"
    ):
        session.realize(
            ModelDesc.from_scratch(
                toy.ModelConfig(**{**CFG.to_dict(), "arch": "mamba"}), toy.RecipeOptions(t_seq=4, t_batch=1)
            )
        )
