"""tinynn's forward and gradients against the independent numpy reference."""

from dataclasses import replace

import numpy as np
import pytest

import reference_llama as ref
import toy
from gradient_checks import assert_every_gradient_matches
from toy.native.session import ModelDesc, Session

TINY = toy.ModelConfig(vocab=11, d_model=8, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=12)
T_SEQ, T_BATCH = 5, 2


def realize(untied: bool, qkv_bias: bool, seed: int = 3) -> Session:
    opts = toy.RecipeOptions(t_seq=T_SEQ, t_batch=T_BATCH, seed=seed, init_scale=0.5)
    session = Session("cpu", threads=1)
    session.realize(ModelDesc.from_scratch(replace(TINY, untied=untied, qkv_bias=qkv_bias), opts))
    session.build()
    return session


def ref_config(untied: bool, qkv_bias: bool) -> ref.Config:
    c = TINY
    return ref.Config(
        vocab=c.vocab,
        d_model=c.d_model,
        n_layers=c.n_layers,
        n_heads=c.n_heads,
        n_kv_heads=c.n_kv_heads,
        d_ff=c.d_ff,
        rope_base=c.rope_base,
        rms_eps=c.norm_eps,
        untied=untied,
        qkv_bias=qkv_bias,
    )


def batch(seed: int = 0):
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, TINY.vocab, size=(T_BATCH, T_SEQ)).astype(np.int32)
    labels = rng.integers(0, TINY.vocab, size=(T_BATCH, T_SEQ)).astype(np.int32)
    # the second sequence continues at an offset, as a packed window would
    positions = (np.arange(T_SEQ)[None, :] + np.array([[0], [7]])).astype(np.int32)
    return tokens, positions, labels


def upload_batch(session, tokens, positions, labels):
    session.upload(session.tokens, tokens)
    session.upload(session.positions, positions)
    session.upload(session.labels, labels)


def test_the_gradients_cross_as_one_array_in_parameter_order():
    """sum_gradients (data parallelism's step) hands every gradient to one
    collective as one float32 array and puts back what the collective returns."""
    session = realize(untied=True, qkv_bias=True)
    upload_batch(session, *batch())
    session.reset()
    session.compute_gradients()
    grads = [session.grad_of(h) for h in session.params().values()]
    each = [session.download(g) for g in grads]
    collectives = []

    def doubled_over_two_ranks(flat):
        collectives.append(flat.copy())
        return flat + flat

    session.sum_gradients(doubled_over_two_ranks)
    assert len(collectives) == 1
    np.testing.assert_array_equal(collectives[0], np.concatenate([g.ravel() for g in each]))
    for g, before in zip(grads, each):
        np.testing.assert_array_equal(session.download(g), 2 * before)


@pytest.mark.parametrize("untied", [False, True])
@pytest.mark.parametrize("qkv_bias", [False, True])
def test_logits_loss_and_every_gradient_match_the_reference(untied, qkv_bias):
    session = realize(untied, qkv_bias)
    params = {name: session.download(h).astype(np.float64) for name, h in session.params().items()}
    if qkv_bias:
        # biases start at zero; give them values so their effect is tested
        rng = np.random.default_rng(9)
        for name in [n for n in params if n.endswith(".bias")]:
            params[name] = rng.normal(0, 0.5, params[name].shape)
            session.upload(session.find(name), params[name].astype(np.float32))
    tokens, positions, labels = batch()
    upload_batch(session, tokens, positions, labels)
    session.reset()
    session.compute_gradients()

    cfg = ref_config(untied, qkv_bias)
    loss_ref, grads_ref = ref.loss_and_grads(params, cfg, tokens, positions, labels)
    assert float(session.download(session.loss)) == pytest.approx(loss_ref, rel=1e-5)

    session.compute_forward()
    logits = session.download(session.logits).reshape(T_BATCH, T_SEQ, TINY.vocab)
    np.testing.assert_allclose(logits, ref.forward(params, cfg, tokens, positions), rtol=1e-4, atol=1e-5)

    assert_every_gradient_matches(session, grads_ref)


def test_gradient_matches_finite_differences_of_tinynn_loss():
    """A check that needs no reference: nudge single weights and watch the
    loss tinynn itself computes (float32, so a coarse step)."""
    session = realize(untied=True, qkv_bias=False)
    tokens, positions, labels = batch(1)
    upload_batch(session, tokens, positions, labels)
    session.reset()
    session.compute_gradients()
    rng = np.random.default_rng(4)
    for name in [
        "blk.0.attn_q.weight",
        "blk.1.ffn_down.weight",
        "token_embd.weight",
        "output.weight",
        "blk.0.attn_norm.weight",
    ]:
        handle = session.find(name)
        grad = session.download(session.grad_of(handle))
        weights = session.download(handle)
        for _ in range(3):
            index = tuple(rng.integers(0, n) for n in weights.shape)
            # the largest-gradient entry is also checked: it is the most telling
            for idx in (index, np.unravel_index(np.abs(grad).argmax(), grad.shape)):
                h = 1e-2
                losses = []
                for sign in (+1, -1):
                    nudged = weights.copy()
                    nudged[idx] += sign * h
                    session.upload(handle, nudged)
                    session.compute_forward()
                    losses.append(float(session.download(session.loss)))
                session.upload(handle, weights)
                numeric = (losses[0] - losses[1]) / (2 * h)
                assert numeric == pytest.approx(grad[idx], rel=0.05, abs=2e-3), (name, idx)


def test_compute_gradients_accumulates_until_reset():
    session = realize(untied=False, qkv_bias=False)
    upload_batch(session, *batch())
    session.reset()
    session.compute_gradients()
    handle = session.grad_of(session.find("blk.0.ffn_up.weight"))
    once = session.download(handle)
    session.compute_gradients()
    np.testing.assert_allclose(session.download(handle), 2 * once, rtol=1e-6)
    session.reset_grads_only()
    session.compute_gradients()
    np.testing.assert_allclose(session.download(handle), once, rtol=1e-6)


def test_one_training_step_is_the_textbook_adamw_update():
    session = realize(untied=True, qkv_bias=False)
    params = session.params()
    before = {name: session.download(h) for name, h in params.items()}
    upload_batch(session, *batch())
    lr, beta1, beta2, eps, wd = 0.01, 0.8, 0.95, 1e-6, 0.1
    for step in (1, 2):
        start = {name: session.download(h).astype(np.float64) for name, h in params.items()}
        if step == 1:
            session.reset()
            moments = {name: (np.zeros_like(w), np.zeros_like(w)) for name, w in start.items()}
        else:
            session.reset_grads_only()
        session.upload(session.hp, toy.adamw_hp(step, lr, beta1, beta2, eps, wd))
        session.compute_accumulated_step()
        for name, handle in params.items():
            grad = session.download(session.grad_of(handle)).astype(np.float64)
            m, v = moments[name]
            expected, m, v = ref.adamw_step(start[name], grad, m, v, lr, beta1, beta2, eps, wd, step)
            moments[name] = (m, v)
            np.testing.assert_allclose(
                session.download(handle), expected, rtol=1e-5, atol=1e-6, err_msg=f"{name} after step {step}"
            )
    assert any(not np.array_equal(before[n], session.download(h)) for n, h in params.items())


def test_masked_labels_drop_their_tokens_from_the_loss_and_the_gradients():
    """Masking the whole second sequence (-1 labels) must give exactly the loss
    and gradients of the first sequence alone (attention never crosses
    sequences), by the reference run on that one sequence."""
    session = realize(untied=False, qkv_bias=False)
    params = {name: session.download(h).astype(np.float64) for name, h in session.params().items()}
    tokens, positions, labels = batch(2)
    masked = labels.copy()
    masked[1, :] = -1
    upload_batch(session, tokens, positions, masked)
    session.reset()
    session.compute_gradients()
    loss_ref, grads_ref = ref.loss_and_grads(params, ref_config(False, False), tokens[:1], positions[:1], labels[:1])
    assert float(session.download(session.loss)) == pytest.approx(loss_ref, rel=1e-5)
    for name, handle in session.params().items():
        scale = np.abs(grads_ref[name]).max()
        np.testing.assert_allclose(
            session.download(session.grad_of(handle)), grads_ref[name], rtol=0, atol=1e-4 * scale + 1e-7, err_msg=name
        )


def test_a_partly_masked_loss_is_the_mean_over_labelled_tokens():
    session = realize(untied=True, qkv_bias=False)
    tokens, positions, labels = batch(3)
    session.upload(session.tokens, tokens)
    session.upload(session.positions, positions)
    session.compute_forward()
    logits = session.download(session.logits).reshape(T_BATCH, T_SEQ, TINY.vocab).astype(np.float64)
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    token_loss = -np.take_along_axis(log_probs, labels[..., None], -1)[..., 0]
    keep = np.zeros_like(labels, dtype=bool)
    keep[0, 2:] = keep[1, :2] = True
    session.upload(session.labels, np.where(keep, labels, -1).astype(np.int32))
    session.compute_forward()
    assert float(session.download(session.loss)) == pytest.approx(token_loss[keep].mean(), rel=1e-5)


def test_gradient_clipping_in_the_graph_scales_the_update_by_max_norm_over_norm():
    opts = toy.RecipeOptions(t_seq=T_SEQ, t_batch=T_BATCH, seed=3, init_scale=0.5)
    session = Session("cpu", threads=1)
    session.realize(ModelDesc.from_scratch(replace(TINY, untied=True), opts))
    max_norm = 0.05
    session.build(clip_norm=max_norm)
    params = session.params()
    start = {name: session.download(h).astype(np.float64) for name, h in params.items()}
    upload_batch(session, *batch())
    session.reset()
    lr, beta1, beta2, eps = 0.01, 0.9, 0.999, 1e-8
    session.upload(session.hp, toy.adamw_hp(1, lr, beta1, beta2, eps, 0.0))
    session.compute_accumulated_step()
    grads = {name: session.download(session.grad_of(h)).astype(np.float64) for name, h in params.items()}
    norm = np.sqrt(sum((g**2).sum() for g in grads.values()))
    assert float(session.download(session.grad_norm)) == pytest.approx(norm, rel=1e-5)
    assert norm > 4 * max_norm  # the clip is active
    for name, handle in params.items():
        clipped = grads[name] * (max_norm / norm)
        expected, _, _ = ref.adamw_step(
            start[name], clipped, np.zeros_like(clipped), np.zeros_like(clipped), lr, beta1, beta2, eps, 0.0, 1
        )
        np.testing.assert_allclose(session.download(handle), expected, rtol=1e-5, atol=1e-6, err_msg=name)


def test_clipping_leaves_small_gradients_alone():
    opts = toy.RecipeOptions(t_seq=T_SEQ, t_batch=T_BATCH, seed=3, init_scale=0.5)
    plain, clipped = Session("cpu", threads=1), Session("cpu", threads=1)
    for session, clip in ((plain, 0.0), (clipped, 1e6)):
        session.realize(ModelDesc.from_scratch(TINY, opts))
        session.build(clip_norm=clip)
        upload_batch(session, *batch())
        session.reset()
        session.upload(session.hp, toy.adamw_hp(1, 0.01))
        session.compute_accumulated_step()
    for name, handle in plain.params().items():
        np.testing.assert_array_equal(plain.download(handle), clipped.download(clipped.find(name)))


def test_a_batch_whose_scores_outgrow_the_cache_matches_the_reference_a_sequence_at_a_time():
    """3 sequences of 512 tokens, 4 heads: 12.6 MB of attention scores, past
    the 4 MB beyond which tnn_attention takes a sequence at a time
    (primitives.c: tnn_attention_by_sequence). The loss and every gradient
    are the reference's as for a batch taken whole."""
    t_seq, t_batch = 512, 3
    opts = toy.RecipeOptions(t_seq=t_seq, t_batch=t_batch, seed=3, init_scale=0.5)
    session = Session("cpu", threads=2)
    session.realize(ModelDesc.from_scratch(TINY, opts))
    session.build()
    params = {name: session.download(h).astype(np.float64) for name, h in session.params().items()}
    rng = np.random.default_rng(4)
    tokens = rng.integers(0, TINY.vocab, size=(t_batch, t_seq)).astype(np.int32)
    labels = rng.integers(0, TINY.vocab, size=(t_batch, t_seq)).astype(np.int32)
    positions = np.tile(np.arange(t_seq, dtype=np.int32), (t_batch, 1))
    upload_batch(session, tokens, positions, labels)
    session.reset()
    session.compute_gradients()
    loss_ref, grads_ref = ref.loss_and_grads(params, ref_config(False, False), tokens, positions, labels)
    assert float(session.download(session.loss)) == pytest.approx(loss_ref, rel=1e-5)
    assert_every_gradient_matches(session, grads_ref)


def test_accumulated_micro_batches_give_the_update_of_one_large_batch():
    tokens, positions, labels = batch(5)
    labels = labels.copy()
    labels[0, :3] = -1  # unequal labelled counts: the mean must be over all tokens
    one = toy.recipes.FromScratch("cpu", threads=1)
    one.realize(TINY, toy.RecipeOptions(t_seq=T_SEQ, t_batch=2, seed=3, init_scale=0.5))
    micro = toy.recipes.FromScratch("cpu", threads=1)
    micro.realize(TINY, toy.RecipeOptions(t_seq=T_SEQ, t_batch=1, seed=3, init_scale=0.5))
    for step in (1, 2):
        hp = toy.adamw_hp(step, 0.01)
        big_loss = one.step(tokens, positions, labels, hp, step == 1)
        parts = [(tokens[i : i + 1], positions[i : i + 1], labels[i : i + 1]) for i in range(2)]
        acc_loss = micro.step_accumulated(parts, hp, step == 1)
        assert acc_loss == pytest.approx(big_loss, rel=1e-5)
    for name, handle in one.session.params().items():
        np.testing.assert_allclose(
            micro.session.download(micro.session.find(name)),
            one.session.download(handle),
            rtol=1e-4,
            atol=1e-6,
            err_msg=name,
        )


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_a_step_that_writes_its_gradients_equals_zeroing_then_adding(arch):
    """compute_step (what Recipe.step runs) writes each gradient into its
    accumulator instead of zeroing it and adding: the same losses, gradients
    and weights to the bit, step after step. GPT-2's fused qkv weight takes
    its parts by ggml_acc, so its graph keeps the zeroing pass."""
    from toy.recipes import FromScratch

    cfg = toy.ModelConfig(
        vocab=64, d_model=32, n_layers=2, n_heads=4, n_kv_heads=4 if arch == "gpt2" else 2, d_ff=64, arch=arch
    )

    def train(writes: bool):
        recipe = FromScratch("cpu", threads=2)
        recipe.realize(cfg, toy.RecipeOptions(t_seq=16, t_batch=2, seed=3))
        e, rng, losses = recipe.session, np.random.default_rng(0), []
        for step in range(1, 5):
            ids = rng.integers(0, cfg.vocab, size=(2, 17)).astype(np.int32)
            if step == 1:
                e.reset()
            elif not writes:
                e.reset_grads_only()
            recipe._upload_batch(ids[:, :-1], np.tile(np.arange(16, dtype=np.int32), (2, 1)), ids[:, 1:])
            e.upload(e.hp, np.asarray(toy.adamw_hp(step, 1e-2), dtype=np.float32))
            e.compute_step() if writes else e.compute_accumulated_step()
            losses.append(float(e.download(e.loss)))
        state = {n: (e.download(h), e.download(e.grad_of(h))) for n, h in e.params().items()}
        return losses, state

    losses, state = train(writes=True)
    losses_ref, state_ref = train(writes=False)
    assert losses == losses_ref
    for name, (weight, grad) in state.items():
        np.testing.assert_array_equal(weight, state_ref[name][0], err_msg=name)
        np.testing.assert_array_equal(grad, state_ref[name][1], err_msg=name)


def test_the_avx512_adamw_gives_ggml_s_bits(monkeypatch):
    """tinynn/cpu/adamw_avx512.c replaces ggml's scalar AdamW on AVX512 CPUs: the same
    weights and moments to the bit, weight decay included."""
    from toy.native.session import KIND_MOMENT
    from toy.recipes import FromScratch

    cfg = toy.ModelConfig(vocab=64, d_model=32, n_layers=1, n_heads=4, n_kv_heads=2, d_ff=64)

    def train() -> list[np.ndarray]:
        recipe = FromScratch("cpu", threads=2)
        recipe.realize(cfg, toy.RecipeOptions(t_seq=16, t_batch=2, seed=3))
        rng = np.random.default_rng(0)
        for step in range(1, 4):
            ids = rng.integers(0, cfg.vocab, size=(2, 17)).astype(np.int32)
            recipe.step(
                ids[:, :-1],
                np.tile(np.arange(16, dtype=np.int32), (2, 1)),
                ids[:, 1:],
                toy.adamw_hp(step, 1e-2, weight_decay=0.1),
                step == 1,
            )
        e = recipe.session
        return [e.download(h) for h in [*e.params().values(), *e.handles(KIND_MOMENT)]]

    fast = train()
    monkeypatch.setenv("TNN_CPU_KERNELS", "qgemm,fgemm,head_loss")  # all but adamw
    for ours, ggml in zip(fast, train(), strict=True):
        np.testing.assert_array_equal(ours, ggml)
