"""DPO and ORPO against float64 numpy references (tests/reference_preference.py):
the losses and every adapter gradient on a tiny model (the head unfused);
on SmolLM2-135M Q4_1 the fused head and loss against that unfused graph."""

import math

import numpy as np
import pytest

import reference_llama as ref
import reference_preference as pref
import toy
from gguf_fixtures import write_llama_gguf
from test_lora_reference import lora_expectations, with_adapters
from toy.recipes import DPO, ORPO

gguf = pytest.importorskip("gguf")

T, ROWS, VOCAB = 6, 6, 13  # three pairs; the last is padding


def tiny_batch(rng, same_pairs=False):
    """Token ids, positions and labels of three pairs: a shared prompt of 2
    tokens, then each row's answer (labelled); the third pair is padding."""
    tokens = rng.integers(0, VOCAB, size=(ROWS, T)).astype(np.int32)
    tokens[1::2, :2] = tokens[0::2, :2]  # a pair shares its prompt
    if same_pairs:
        tokens[1::2] = tokens[0::2]
    labels = np.roll(tokens, -1, axis=1)
    labels[:, :1] = -1  # the prompt predicts no label
    labels[0, 4:] = labels[1, 5:] = -1  # answers of different lengths
    labels[4:] = -1  # the padding pair
    positions = np.tile(np.arange(T, dtype=np.int32), (ROWS, 1))
    return tokens, positions, labels


def realize_tiny(tmp_path, recipe_class, beta, targets=("q", "v", "down"), t_seq=T, rows=ROWS, packed=False):
    cfg = ref.Config(vocab=VOCAB, d_model=8, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=12, untied=True, qkv_bias=False)
    params = ref.init_params(cfg, np.random.default_rng(5), scale=0.5)
    path = write_llama_gguf(tmp_path / "tiny.gguf", params, cfg)
    recipe = recipe_class("cpu", threads=1)
    recipe.realize(
        path,
        None,
        2,
        toy.RecipeOptions(t_seq=t_seq, t_batch=rows, seed=3, init_scale=0.3, packed=packed),
        alpha=3.0,
        targets=targets,
        beta=beta,
    )
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

    loss_ref, grads_ref = ref.objective_and_grads(
        params, cfg, tokens, positions, objective_of(recipe, labels, reference.astype(np.float64))
    )
    assert loss == pytest.approx(loss_ref, rel=1e-5)
    expected = lora_expectations(values, grads_ref, recipe.adapters(), 1.5)
    for name, got in grads.items():
        np.testing.assert_allclose(
            got, expected[name], rtol=0, atol=1e-4 * np.abs(expected[name]).max() + 1e-7, err_msg=name
        )
    # the forward graph computes the same loss, and each row's log-probability
    loss_forward, row_logps = recipe.evaluate_pairs(tokens, positions, labels, reference)
    assert loss_forward == pytest.approx(loss, rel=1e-6)
    logits = ref.forward(params, cfg, tokens, positions)
    np.testing.assert_allclose(row_logps, pref.row_logps(logits, labels), rtol=1e-5, atol=1e-6)


def packed_pairs(tokens, positions, labels):
    """tiny_batch's two real pairs packed a pair a row: each row the chosen
    answer's 6 places, then the rejected's, each from position 0."""
    return tuple(np.concatenate([a[0:4:2], a[1:4:2]], axis=1) for a in (tokens, positions, labels))


@pytest.mark.parametrize("recipe_class", [DPO, ORPO])
def test_pairs_packed_in_rows_give_the_loss_gradients_and_logps_of_the_pairs_one_a_row(tmp_path, recipe_class):
    """Two rows of 12 holding a pair each, the answers from position 0: the
    samples are numbered through the batch, so samples 2k and 2k + 1 are pair
    k as rows 2k and 2k + 1 are unpacked."""
    tokens, positions, labels = tiny_batch(np.random.default_rng(1))
    reference = np.array([-9.0, -11.5, -7.25, -8.0, 0.0, 0.0], dtype=np.float32)
    recipe, params, values, cfg = realize_tiny(tmp_path, recipe_class, beta=0.5)
    loss, grads = gradients(recipe, tokens, positions, labels, reference)
    _, logps = recipe.evaluate_pairs(tokens, positions, labels, reference)

    packed = realize_tiny(tmp_path, recipe_class, beta=0.5, t_seq=2 * T, rows=2, packed=True)[0]
    rows = packed_pairs(tokens, positions, labels)
    packed_reference = np.zeros(256, dtype=np.float32)  # a packed batch's reference: one per sample
    packed_reference[:4] = reference[:4]
    packed_loss, packed_grads = gradients(packed, *rows[:2], rows[2], packed_reference)
    assert packed_loss == pytest.approx(loss, rel=1e-6)
    for name, got in packed_grads.items():
        np.testing.assert_allclose(got, grads[name], rtol=0, atol=1e-5 * np.abs(grads[name]).max(), err_msg=name)
    packed_forward, packed_logps = packed.evaluate_pairs(*rows[:2], rows[2], packed_reference)
    assert packed_forward == pytest.approx(packed_loss, rel=1e-6)
    np.testing.assert_allclose(packed_logps[:4], logps[:4], rtol=1e-6)
    assert not packed_logps[4:].any()
    # and the float64 reference, on the pairs one a row
    objective = objective_of(recipe, labels, reference.astype(np.float64))
    assert packed_loss == pytest.approx(ref.objective_and_grads(params, cfg, tokens, positions, objective)[0], rel=1e-5)


def test_positions_that_make_more_samples_than_a_packed_batch_pairs_are_refused(tmp_path):
    recipe = realize_tiny(tmp_path, DPO, beta=0.5, t_seq=136, rows=2, packed=True)[0]
    tokens = np.zeros((2, 136), dtype=np.int32)
    positions = np.zeros((2, 136), dtype=np.int32)  # every token a sample of its own: 272
    labels = np.full((2, 136), 1, dtype=np.int32)
    with pytest.raises(
        toy.ToyError, match="these positions make 272 samples in one batch; a preference batch holds 256"
    ):
        recipe.evaluate_pairs(tokens, positions, labels)


@pytest.mark.parametrize("objective", [pref.dpo, pref.orpo])
def test_the_numpy_references_gradient_is_their_losss_derivative(objective):
    """Central differences on the logits: the references' own check."""
    rng = np.random.default_rng(2)
    logits = rng.normal(0, 2, size=(ROWS, T, VOCAB))
    _, _, labels = tiny_batch(rng)
    reference = rng.normal(-8, 1, size=ROWS)
    loss_of = (
        (lambda z: pref.dpo(z, labels, reference, 0.7))
        if objective is pref.dpo
        else (lambda z: pref.orpo(z, labels, 0.7))
    )
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
        norms[beta] = math.sqrt(sum(float((g**2).sum()) for g in grads.values()))
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
        np.testing.assert_allclose(
            got, expected[name], rtol=0, atol=1e-4 * np.abs(expected[name]).max() + 1e-7, err_msg=name
        )


@pytest.mark.parametrize("recipe_class", [DPO, ORPO])
def test_smollm2_with_the_head_and_loss_fused_gives_the_unfused_loss_and_gradients(smollm2, monkeypatch, recipe_class):
    """On a real Q4_1 model the frozen head and the loss are one node
    (head_loss.c) feeding the preference loss; without the head_loss kernel
    the graph is the one checked against the reference above. The two
    agree to the int8 products' rounding."""
    t, rows = 8, 4
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, 5000, size=(rows, t)).astype(np.int32)
    tokens[1::2, :3] = tokens[0::2, :3]
    labels = np.roll(tokens, -1, axis=1)
    labels[:, :2] = -1
    positions = np.tile(np.arange(t, dtype=np.int32), (rows, 1))
    reference = np.array([-60.0, -58.0, -61.0, -63.0], dtype=np.float32)
    results = {}
    for kernels in ("on", "qgemm,fgemm"):  # the second: every kernel but head_loss
        monkeypatch.setenv("TNN_CPU_KERNELS", kernels)
        recipe = recipe_class("cpu", threads=2)
        recipe.realize(
            smollm2,
            None,
            4,
            toy.RecipeOptions(t_seq=t, t_batch=rows, seed=1, init_scale=0.05),
            alpha=8.0,
            targets=("q", "v"),
            beta=0.5,
        )
        b_rng = np.random.default_rng(3)
        for name, h in recipe.adapters().items():
            if name.endswith(".lora_b"):
                recipe.session.upload(h, b_rng.normal(0, 0.02, recipe.session.info(h).shape).astype(np.float32))
        results[kernels] = gradients(recipe, tokens, positions, labels, reference)
    (fused_loss, fused), (loss, unfused) = results["on"], results["qgemm,fgemm"]
    assert fused_loss == pytest.approx(loss, rel=1e-5)
    assert any(not np.array_equal(g, unfused[name]) for name, g in fused.items())  # two paths were taken
    # as test_backward_graph's check of the fused cross-entropy: the direction of
    # every gradient (measured: cosine min 0.9988); a rank-4 gradient's noise
    # shows as a scale as much as a turn (norm ratios 0.95-1.03 measured)
    cosines = [
        float((g * unfused[n]).sum() / (np.linalg.norm(g) * np.linalg.norm(unfused[n]))) for n, g in fused.items()
    ]
    ratios = [float(np.linalg.norm(g) / np.linalg.norm(unfused[n])) for n, g in fused.items()]
    assert min(cosines) > 0.99 and 0.98 < np.median(ratios) < 1.02 and 0.9 < min(ratios), (min(cosines), ratios)
