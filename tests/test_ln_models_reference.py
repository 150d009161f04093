"""GPT-2 and ViT in tinynn against the independent float64 numpy reference
(tests/reference_gpt2.py): logits, loss and every parameter's gradient."""

from types import SimpleNamespace

import numpy as np
import pytest

import reference_gpt2 as ref
import toy
from gradient_checks import assert_every_gradient_matches
from toy.core.config import ViTConfig
from toy.native.session import ModelDesc, Session

GPT2 = toy.ModelConfig(arch="gpt2", vocab=11, d_model=8, n_layers=2, n_heads=2, d_ff=12)
VIT = ViTConfig(n_classes=5, image_size=4, patch=2, d_model=8, n_layers=2, n_heads=2, d_ff=12)
T_SEQ, T_BATCH = 5, 3


def perturbed_params(session, seed=9):
    """The session's init with norms and biases moved off 1 and 0, so that
    their effect (and gradient) is tested; uploaded back."""
    rng = np.random.default_rng(seed)
    params = {}
    for name, handle in session.params().items():
        value = session.download(handle).astype(np.float64)
        if name.endswith(".bias") or "norm" in name:
            value = value + rng.normal(0, 0.3, value.shape)
            session.upload(handle, value.astype(np.float32))
        params[name] = value
    return params


def test_gpt2_logits_loss_and_every_gradient_match_the_reference():
    session = Session("cpu", threads=1)
    opts = toy.RecipeOptions(t_seq=T_SEQ, t_batch=T_BATCH, seed=3, init_scale=0.5)
    session.realize(ModelDesc.from_scratch(GPT2, opts))
    session.build()
    params = perturbed_params(session)
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, GPT2.vocab, (T_BATCH, T_SEQ)).astype(np.int32)
    labels = rng.integers(0, GPT2.vocab, (T_BATCH, T_SEQ)).astype(np.int32)
    positions = np.tile(np.arange(T_SEQ, dtype=np.int32), (T_BATCH, 1))
    for handle, array in ((session.tokens, tokens), (session.positions, positions), (session.labels, labels)):
        session.upload(handle, array)
    session.reset()
    session.compute_gradients()

    cfg = SimpleNamespace(n_layers=GPT2.n_layers, n_heads=GPT2.n_heads, eps=GPT2.norm_eps)
    loss_ref, grads_ref, logits_ref = ref.gpt2_loss_and_grads(params, cfg, tokens, positions, labels)
    assert float(session.download(session.loss)) == pytest.approx(loss_ref, rel=1e-5)
    session.compute_forward()
    logits = session.download(session.logits).reshape(T_BATCH, T_SEQ, GPT2.vocab)
    np.testing.assert_allclose(logits, logits_ref, rtol=1e-4, atol=1e-5)
    assert_every_gradient_matches(session, grads_ref)


def test_vit_logits_loss_and_every_gradient_match_the_reference():
    session = Session("cpu", threads=1)
    session.realize(ModelDesc.vit(VIT, t_batch=T_BATCH, seed=3, init_scale=0.5))
    session.build()
    params = perturbed_params(session)
    rng = np.random.default_rng(0)
    patches = rng.normal(0, 1, (T_BATCH, VIT.n_patches, VIT.patch_dim)).astype(np.float32)
    labels = rng.integers(0, VIT.n_classes, T_BATCH).astype(np.int32)
    session.upload(session.images, patches)
    session.upload(session.labels, labels)
    session.reset()
    session.compute_gradients()

    cfg = SimpleNamespace(n_layers=VIT.n_layers, n_heads=VIT.n_heads, eps=VIT.ln_eps)
    loss_ref, grads_ref, logits_ref = ref.vit_loss_and_grads(params, cfg, patches.astype(np.float64), labels)
    assert float(session.download(session.loss)) == pytest.approx(loss_ref, rel=1e-5)
    session.compute_forward()
    np.testing.assert_allclose(session.download(session.logits), logits_ref, rtol=1e-4, atol=1e-5)
    assert_every_gradient_matches(session, grads_ref)


def test_vit_attention_is_bidirectional_and_gpt2_is_causal():
    """Changing the last patch moves a ViT's class logits; changing the last
    token leaves a GPT-2's earlier logits alone."""
    vit = Session("cpu", threads=1)
    vit.realize(ModelDesc.vit(VIT, t_batch=1, seed=1, init_scale=0.5))
    vit.build()
    patches = np.random.default_rng(1).normal(0, 1, (1, VIT.n_patches, VIT.patch_dim)).astype(np.float32)
    outputs = []
    for last in (0.0, 5.0):
        patches[0, -1] = last
        vit.upload(vit.images, patches)
        vit.compute_forward()
        outputs.append(vit.download(vit.logits).copy())
    assert np.abs(outputs[0] - outputs[1]).max() > 1e-3

    gpt2 = Session("cpu", threads=1)
    opts = toy.RecipeOptions(t_seq=T_SEQ, t_batch=1, seed=1, init_scale=0.5)
    gpt2.realize(ModelDesc.from_scratch(GPT2, opts))
    gpt2.build()
    gpt2.upload(gpt2.positions, np.arange(T_SEQ, dtype=np.int32))
    outputs = []
    for last in (1, 7):
        gpt2.upload(gpt2.tokens, np.array([2, 3, 4, 5, last], dtype=np.int32))
        gpt2.compute_forward()
        outputs.append(gpt2.download(gpt2.logits).reshape(T_SEQ, GPT2.vocab).copy())
    np.testing.assert_array_equal(outputs[0][:-1], outputs[1][:-1])
    assert np.abs(outputs[0][-1] - outputs[1][-1]).max() > 1e-3


def test_gpt2_refuses_positions_beyond_its_learned_table():
    session = Session("cpu", threads=1)
    session.realize(ModelDesc.from_scratch(GPT2, toy.RecipeOptions(t_seq=T_SEQ, t_batch=1)))
    with pytest.raises(toy.ToyError, match="outside the learned positions"):
        session.upload(session.positions, np.arange(1, T_SEQ + 1, dtype=np.int32))


def test_gpt2_and_vit_have_no_kv_cache_generation():
    session = Session("cpu", threads=1)
    session.realize(ModelDesc.from_scratch(GPT2, toy.RecipeOptions(t_seq=T_SEQ, t_batch=1)))
    with pytest.raises(toy.ToyError, match="llama models only"):
        session.kv_init(16)
