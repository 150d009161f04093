"""DPO and ORPO against float64 numpy references (tests/reference_preference.py):
the losses and every adapter gradient, on a tiny model (the head unfused)
and on SmolLM2-135M Q4_1 (the head and loss fused)."""
import math

import numpy as np
import pytest

import toy
from toy.recipes import DPO, ORPO

import reference_llama as ref
import reference_preference as pref
from gguf_fixtures import write_llama_gguf
from test_lora_reference import dequantized, lora_expectations, with_adapters  # noqa: F401 (a fixture)

gguf = pytest.importorskip("gguf")

T, ROWS, VOCAB = 6, 6, 13       # three pairs; the last is padding


def tiny_batch(rng, same_pairs=False):
    """Token ids, positions and labels of three pairs: a shared prompt of 2
    tokens, then each row's answer (labelled); the third pair is padding."""
    tokens = rng.integers(0, VOCAB, size=(ROWS, T)).astype(np.int32)
    tokens[1::2, :2] = tokens[0::2, :2]                  # a pair shares its prompt
    if same_pairs:
        tokens[1::2] = tokens[0::2]
    labels = np.roll(tokens, -1, axis=1)
    labels[:, :1] = -1                                   # the prompt predicts no label
    labels[0, 4:] = labels[1, 5:] = -1                   # answers of different lengths
    labels[4:] = -1                                      # the padding pair
    positions = np.tile(np.arange(T, dtype=np.int32), (ROWS, 1))
    return tokens, positions, labels


def realize_tiny(tmp_path, recipe_class, beta, targets=("q", "v", "down")):
    cfg = ref.Config(vocab=VOCAB, d_model=8, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=12,
                     untied=True, qkv_bias=False)
    params = ref.init_params(cfg, np.random.default_rng(5), scale=0.5)
    path = write_llama_gguf(tmp_path / "tiny.gguf", params, cfg)
    recipe = recipe_class("cpu", threads=1)
    recipe.realize(path, None, 2, toy.RecipeOptions(t_seq=T, t_batch=ROWS, seed=3, init_scale=0.3),
                   alpha=3.0, targets=targets, beta=beta)
    rng = np.random.default_rng(0)
    for name, h in recipe.adapters().items():
        if name.endswith(".lora_b"):
            recipe.session.upload(h, rng.normal(0, 0.3, recipe.session.info(h).shape).astype(np.float32))
    values = {name: recipe.session.download(h).astype(np.float64) for name, h in recipe.adapters().items()}
    return recipe, with_adapters(params, values, 1.5), values, cfg


def gradients(recipe, tokens, positions, labels, reference):
    e = recipe.session
    recipe._upload_batch(tokens, positions, reference, labels)
    e.reset()
    e.compute_gradients()
    return float(e.download(e.loss)), {name: e.download(e.grad_of(h)) for name, h in recipe.adapters().items()}


def objective_of(recipe, labels, reference):
    if isinstance(recipe, DPO):
        return lambda logits: pref.dpo(logits, labels, reference, recipe.beta)
    return lambda logits: pref.orpo(logits, labels, recipe.beta)


@pytest.mark.parametrize("recipe_class", [DPO, ORPO])
def test_the_loss_and_every_adapter_gradient_match_the_reference(tmp_path, recipe_class):
    recipe, params, values, cfg = realize_tiny(tmp_path, recipe_class, beta=0.5)
    tokens, positions, labels = tiny_batch(np.random.default_rng(1))
    reference = np.array([-9.0, -11.5, -7.25, -8.0, 0.0, 0.0], dtype=np.float32)
    loss, grads = gradients(recipe, tokens, positions, labels, reference)

    loss_ref, grads_ref = ref.objective_and_grads(params, cfg, tokens, positions,
                                                  objective_of(recipe, labels, reference.astype(np.float64)))
    assert loss == pytest.approx(loss_ref, rel=1e-5)
    expected = lora_expectations(values, grads_ref, recipe.adapters(), 1.5)
    for name, got in grads.items():
        np.testing.assert_allclose(got, expected[name], rtol=0,
                                   atol=1e-4 * np.abs(expected[name]).max() + 1e-7, err_msg=name)
    # the forward graph computes the same loss, and each row's log-probability
    loss_forward, row_logps = recipe.evaluate_pairs(tokens, positions, labels, reference)
    assert loss_forward == pytest.approx(loss, rel=1e-6)
    logits = ref.forward(params, cfg, tokens, positions)
    np.testing.assert_allclose(row_logps, pref.row_logps(logits, labels), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("objective", [pref.dpo, pref.orpo])
def test_the_numpy_references_gradient_is_their_losss_derivative(objective):
    """Central differences on the logits: the references' own check."""
    rng = np.random.default_rng(2)
    logits = rng.normal(0, 2, size=(ROWS, T, VOCAB))
    _, _, labels = tiny_batch(rng)
    reference = rng.normal(-8, 1, size=ROWS)
    loss_of = (lambda z: pref.dpo(z, labels, reference, 0.7)) if objective is pref.dpo \
        else (lambda z: pref.orpo(z, labels, 0.7))
    _, grad = loss_of(logits)
    for index in [(0, 1, 3), (1, 2, 0), (2, 3, 5), (3, 5, 12), (4, 2, 2)]:
        bumped = logits.copy()
        bumped[index] += 1e-6
        lowered = logits.copy()
        lowered[index] -= 1e-6
        numeric = (loss_of(bumped)[0] - loss_of(lowered)[0]) / 2e-6
        assert numeric == pytest.approx(grad[index], abs=1e-8), index


def test_dpo_as_beta_goes_to_zero_is_log_2_with_a_vanishing_gradient(tmp_path):
    tokens, positions, labels = tiny_batch(np.random.default_rng(1))
    reference = np.array([-9.0, -11.5, -7.25, -8.0, 0.0, 0.0], dtype=np.float32)
    norms = {}
    for beta in (1e-3, 1e-6):
        recipe, *_ = realize_tiny(tmp_path, DPO, beta=beta)
        loss, grads = gradients(recipe, tokens, positions, labels, reference)
        assert loss == pytest.approx(math.log(2), abs=10 * beta)
        norms[beta] = math.sqrt(sum(float((g ** 2).sum()) for g in grads.values()))
    # d loss / d theta = beta sigmoid(-h) d(h / beta)/d theta: proportional to beta near 0
    assert norms[1e-6] / norms[1e-3] == pytest.approx(1e-3, rel=0.01)


@pytest.mark.parametrize("recipe_class", [DPO, ORPO])
def test_identical_chosen_and_rejected_answers(tmp_path, recipe_class):
    """DPO: h = 0, so the loss is log 2 and the two rows' gradients cancel.
    ORPO: the odds ratio is 1, so the loss is the chosen answers' mean
    cross-entropy + beta log 2, and the gradient the cross-entropy's alone."""
    recipe, params, values, cfg = realize_tiny(tmp_path, recipe_class, beta=0.5)
    tokens, positions, labels = tiny_batch(np.random.default_rng(1), same_pairs=True)
    labels[1::2] = labels[0::2]
    reference = np.array([-9.0, -9.0, -7.25, -7.25, 0.0, 0.0], dtype=np.float32)
    loss, grads = gradients(recipe, tokens, positions, labels, reference)
    if recipe_class is DPO:
        assert loss == pytest.approx(math.log(2), rel=1e-6)
        for name, g in grads.items():
            assert np.abs(g).max() < 1e-6, name
        return
    # beta 0 leaves the chosen answers' cross-entropy alone
    ce, ce_grads = ref.objective_and_grads(params, cfg, tokens, positions, lambda z: pref.orpo(z, labels, 0.0))
    assert loss == pytest.approx(ce + 0.5 * math.log(2), rel=1e-5)
    expected = lora_expectations(values, ce_grads, recipe.adapters(), 1.5)
    for name, got in grads.items():
        np.testing.assert_allclose(got, expected[name], rtol=0,
                                   atol=1e-4 * np.abs(expected[name]).max() + 1e-7, err_msg=name)


@pytest.mark.parametrize("recipe_class", [DPO, ORPO])
def test_smollm2_with_the_head_and_loss_fused_matches_the_reference(smollm2, dequantized, recipe_class):
    """The fused head (head_loss.c) feeds the preference loss on a real Q4_1
    model: its products are int8 ones, so close to the reference, not exact."""
    t, rows, scale = 8, 4, 2.0
    recipe = recipe_class("cpu", threads=2)
    recipe.realize(smollm2, None, 4, toy.RecipeOptions(t_seq=t, t_batch=rows, seed=1, init_scale=0.05),
                   alpha=8.0, targets=("q", "v"), beta=0.5)
    e, cfg = recipe.session, recipe.cfg
    rng = np.random.default_rng(0)
    for name, h in recipe.adapters().items():
        if name.endswith(".lora_b"):
            e.upload(h, rng.normal(0, 0.02, e.info(h).shape).astype(np.float32))
    values = {name: e.download(h).astype(np.float64) for name, h in recipe.adapters().items()}
    tokens = rng.integers(0, 5000, size=(rows, t)).astype(np.int32)
    tokens[1::2, :3] = tokens[0::2, :3]
    labels = np.roll(tokens, -1, axis=1)
    labels[:, :2] = -1
    positions = np.tile(np.arange(t, dtype=np.int32), (rows, 1))
    reference = np.array([-60.0, -58.0, -61.0, -63.0], dtype=np.float32)
    loss, grads = gradients(recipe, tokens, positions, labels, reference)

    params = with_adapters(dequantized, values, scale)
    rcfg = ref.Config(vocab=cfg.vocab, d_model=cfg.d_model, n_layers=cfg.n_layers, n_heads=cfg.n_heads,
                      n_kv_heads=cfg.n_kv_heads, d_ff=cfg.d_ff, rope_base=cfg.rope_base,
                      rms_eps=cfg.rms_eps, untied=False, qkv_bias=False)
    loss_ref, grads_ref = ref.objective_and_grads(params, rcfg, tokens, positions,
                                                  objective_of(recipe, labels, reference.astype(np.float64)))
    assert loss == pytest.approx(loss_ref, rel=0.02)
    expected = lora_expectations(values, grads_ref, recipe.adapters(), scale)
    cosines = [float((g * expected[n]).sum() / (np.linalg.norm(g) * np.linalg.norm(expected[n])))
               for n, g in grads.items()]
    ratios = [float(np.linalg.norm(g) / np.linalg.norm(expected[n])) for n, g in grads.items()]
    assert np.median(cosines) > 0.98 and min(cosines) > 0.7
    assert 0.9 < np.median(ratios) < 1.1
