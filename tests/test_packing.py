"""Packed rows: several samples one after another in a row of t_seq tokens,
each beginning at position 0 and attending only to itself. Every token's
logits, the loss and every gradient must be those of the samples trained
alone, one a row: against toy's own unpacked step, the float64 numpy
reference and transformers (position ids restarting, a block-diagonal
attention mask)."""

import numpy as np
import pytest

import reference_llama as ref
import toy
from test_gradients import TINY, ref_config
from toy.datasets.instruct import pack, packed_rows, places
from toy.native.session import ModelDesc, Session
from toy.text.chat import Sample

# two rows of 12: (5, 4, and 3 places of padding), (7, 5)
ROWS = [[5, 4], [7, 5]]
T_PACKED, T_ALONE = 12, 7


def samples_of(lengths, seed=0) -> list[Sample]:
    """Samples of these many places (a sample of L+1 tokens fills L); the
    first two tokens of each are a prompt, the rest trained."""
    rng = np.random.default_rng(seed)
    out = []
    for n in lengths:
        tokens = rng.integers(0, TINY.vocab, n + 1).astype(np.int32)
        out.append(Sample(tokens, np.arange(n + 1) > 1))
    return out


# recurrent layers ('c' LFM2's short convolution, 'd' Qwen 3.5's delta net,
# 'm' Mamba-2), each with an attention layer after it
HYBRIDS = {
    "conv+delta": dict(n_layers=3, layer_kinds="cda", conv_kernel=3, ssm_state=4, ssm_groups=1, ssm_heads=2),
    "mamba": dict(n_layers=2, layer_kinds="ma", conv_kernel=4, ssm_state=4, ssm_groups=1, ssm_heads=2, ssm_inner=8),
    # Falcon-H1's: attention and Mamba-2 side by side in each layer, no grouped norm
    "side-by-side": dict(
        n_layers=2,
        layer_kinds="pp",
        mamba_no_norm=True,
        conv_kernel=4,
        ssm_state=4,
        ssm_groups=1,
        ssm_heads=2,
        ssm_inner=8,
    ),
    # Nemotron-H's: each layer one sub-layer, the feed-forward one relu squared
    "one-sublayer": dict(
        n_layers=3,
        layer_kinds="mfa",
        one_sublayer=True,
        ffn_relu_sq=True,
        conv_kernel=4,
        ssm_state=4,
        ssm_groups=1,
        ssm_heads=2,
        ssm_inner=8,
    ),
}


def session_for(
    t_seq: int, t_batch: int, packed: bool, recompute: int = 0, arch: str = "llama", hybrid: str | None = None
) -> Session:
    cfg = toy.ModelConfig(**{**TINY.__dict__, "arch": arch, **HYBRIDS.get(hybrid, {})})
    opts = toy.RecipeOptions(t_seq=t_seq, t_batch=t_batch, seed=3, init_scale=0.5)
    session = Session("cpu", threads=1)
    session.realize(ModelDesc.from_scratch(cfg, opts))
    session.build(recompute=recompute, packed=packed)
    return session


def gradients(session: Session, batch, params=None) -> tuple[float, np.ndarray, dict]:
    """The loss, the logits [B, T, V] and every gradient of one batch (with params uploaded first)."""
    if params is not None:
        for name, handle in session.params().items():
            # GPT-2's learned positions: the first t_seq rows of the packed session's table
            shape = session.download(handle).shape
            session.upload(handle, np.ascontiguousarray(params[name][tuple(slice(0, n) for n in shape)]))
    ids, positions, labels = batch
    session.upload(session.tokens, ids)
    session.upload(session.positions, positions)
    session.upload(session.labels, labels)
    session.reset()
    session.compute_gradients()
    grads = {name: session.download(session.grad_of(h)) for name, h in session.params().items()}
    loss = float(session.download(session.loss))
    session.compute_forward()
    return loss, session.download(session.logits).reshape(*ids.shape, -1), grads


def packed_and_alone(arch="llama", recompute=0, hybrid=None):
    samples = samples_of([n for row in ROWS for n in row])
    rows, at = [], 0
    for row in ROWS:
        rows.append(samples[at : at + len(row)])
        at += len(row)
    packed = session_for(T_PACKED, len(ROWS), True, recompute, arch, hybrid)
    params = {name: packed.download(h) for name, h in packed.params().items()}
    alone = session_for(T_ALONE, len(samples), False, arch=arch, hybrid=hybrid)
    return (
        samples,
        gradients(packed, packed_rows(rows, T_PACKED, 0)),
        gradients(alone, packed_rows([[s] for s in samples], T_ALONE, 0), params),
        params,
    )


def each_sample(logits, rows, t_seq):
    """The packed logits cut back into each sample's [L, V]."""
    out = []
    for r, row in enumerate(rows):
        at = 0
        for n in row:
            out.append(logits[r, at : at + n])
            at += n
    return out


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_each_packed_sample_has_the_logits_loss_and_gradients_it_has_alone(arch):
    samples, (loss, logits, grads), (loss_alone, logits_alone, grads_alone), _ = packed_and_alone(arch)
    for i, got in enumerate(each_sample(logits, ROWS, T_PACKED)):
        np.testing.assert_allclose(got, logits_alone[i, : len(got)], rtol=1e-5, atol=1e-6)
    # the same tokens summed in another order: float32 rounding apart
    assert loss == pytest.approx(loss_alone, rel=1e-6)
    for name, grad in grads.items():
        if name == "position_embd.weight":  # GPT-2's: no sample reaches position 7
            assert not grad[T_ALONE:].any()
            grad = grad[:T_ALONE]
        scale = np.abs(grads_alone[name]).max()
        np.testing.assert_allclose(grad, grads_alone[name], rtol=0, atol=1e-5 * scale, err_msg=name)


@pytest.mark.parametrize("hybrid", HYBRIDS)
@pytest.mark.parametrize("recompute", [0, 1])
def test_each_packed_sample_of_a_recurrent_model_starts_from_a_zero_state(hybrid, recompute):
    """A convolution, a delta net or a scan carries a state from token to
    token: in a packed row each sample must start from zeros, as it does
    alone (toy's CPU nodes restart at each token at position 0), or the
    later samples' logits and every gradient would take the earlier ones'."""
    _, (loss, logits, grads), (loss_alone, logits_alone, grads_alone), _ = packed_and_alone(
        recompute=recompute, hybrid=hybrid
    )
    for i, got in enumerate(each_sample(logits, ROWS, T_PACKED)):
        np.testing.assert_allclose(got, logits_alone[i, : len(got)], rtol=1e-5, atol=1e-5, err_msg=f"sample {i}")
    assert loss == pytest.approx(loss_alone, rel=1e-5)
    for name, grad in grads.items():
        scale = np.abs(grads_alone[name]).max()
        np.testing.assert_allclose(grad, grads_alone[name], rtol=0, atol=1e-5 * scale, err_msg=name)


def test_packed_rows_match_the_float64_reference_of_the_samples_alone():
    samples, (loss, _, grads), _, params = packed_and_alone()
    ids, positions, labels = packed_rows([[s] for s in samples], T_ALONE, 0)
    labelled = labels != -1

    def mean_over_labelled(logits):
        value, (logp, _) = ref.cross_entropy_fwd(logits, np.where(labelled, labels, 0))
        d = np.exp(logp)
        picked = np.where(labelled, labels, 0)
        np.put_along_axis(d, picked[..., None], np.take_along_axis(d, picked[..., None], axis=-1) - 1.0, axis=-1)
        d *= labelled[..., None] / labelled.sum()
        value = -(np.take_along_axis(logp, picked[..., None], axis=-1)[..., 0] * labelled).sum() / labelled.sum()
        return value, d

    cfg = ref_config(untied=False, qkv_bias=False)
    value, grads_ref = ref.objective_and_grads(
        {k: v.astype(np.float64) for k, v in params.items()}, cfg, ids, positions, mean_over_labelled
    )
    assert loss == pytest.approx(value, rel=1e-5)
    for name, grad in grads.items():
        scale = np.abs(grads_ref[name]).max()
        np.testing.assert_allclose(grad, grads_ref[name], rtol=0, atol=1e-4 * scale + 1e-7, err_msg=name)


def test_packed_rows_recompute_to_the_bit():
    _, (loss, logits, grads), _, _ = packed_and_alone()
    _, (loss_again, logits_again, grads_again), _, _ = packed_and_alone(recompute=1)
    assert loss_again == loss
    np.testing.assert_array_equal(logits_again, logits)
    for name in grads:
        np.testing.assert_array_equal(grads_again[name], grads[name], err_msg=name)


def test_pack_lays_every_sample_once_longest_first_within_the_row():
    lengths = [9, 2, 7, 3, 5, 5, 1, 11, 4]
    samples = samples_of(lengths)
    rows = pack([places(s) for s in samples], 12)
    assert sorted(i for row in rows for i in row) == list(range(len(lengths)))
    assert all(sum(lengths[i] for i in row) <= 12 for row in rows)
    # 47 places in rows of 12: best-fit decreasing needs no more than the 4 the total asks
    assert len(rows) == 4
    assert rows[0][0] == lengths.index(11)
    assert pack([places(s) for s in samples], 12) == rows


def test_packed_rows_restart_positions_at_each_sample_and_label_only_its_tokens():
    a, b = samples_of([3, 4])
    ids, positions, labels = packed_rows([[a, b]], 10, pad_id=0)
    assert positions[0].tolist() == [0, 1, 2, 0, 1, 2, 3, 4, 5, 6]
    assert ids[0, :7].tolist() == a.tokens[:-1].tolist() + b.tokens[:-1].tolist()
    # the second of each sample's tokens is its prompt's: not a label
    assert labels[0].tolist() == [-1, *a.tokens[2:]] + [-1, *b.tokens[2:]] + [-1] * 3


def test_a_model_without_tokens_is_refused_packed_rows():
    session = Session("cpu", threads=1)
    session.realize(ModelDesc.vit(toy.ViTConfig(), 2))
    with pytest.raises(toy.ToyError, match="packed rows need a token model"):
        session.build(packed=True)


def test_a_checkpoint_from_before_packing_resumes_one_sample_a_row():
    """Its data order counts samples, not rows: the run goes on as it began."""
    from types import SimpleNamespace

    from toy.training.resume import saved_options

    old = SimpleNamespace(path="runs/old/checkpoint-4", state={"args": {"recipe": "instruct", "seq": 64}})
    assert saved_options(old)["packing"] == "off"
    new = SimpleNamespace(path="runs/new/checkpoint-4", state={"args": {"recipe": "instruct", "packing": "auto"}})
    assert saved_options(new)["packing"] == "auto"


torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


def test_transformers_with_restarting_positions_and_a_block_mask_agrees(tmp_path):
    """Qwen2 in transformers given the packed row, its position ids and a
    block-diagonal causal mask: toy's packed step gives its logits, loss and
    gradients, and transformers itself gives each sample's logits alone."""
    from hf_compare import assert_step_matches
    from test_qwen import HF_TO_GGUF, hf_model, write_gguf
    from toy.recipes import FullFineTune

    model = hf_model("qwen2", tied=False)
    path = write_gguf(model, "qwen2", tmp_path / "qwen2.gguf")
    lengths = [5, 4, 3]
    samples = [Sample(s.tokens % model.config.vocab_size, s.trained) for s in samples_of(lengths, seed=2)]
    ids, positions, labels = packed_rows([samples], 12, 0)

    starts = np.cumsum([0, *lengths[:-1]])
    block = np.full((12, 12), -np.inf, dtype=np.float32)
    for start, n in zip(starts, lengths):
        block[start : start + n, start : start + n] = np.triu(np.full((n, n), -np.inf), 1)
    out = model(
        torch.tensor(ids, dtype=torch.long),
        position_ids=torch.tensor(positions, dtype=torch.long),
        attention_mask=torch.tensor(block)[None, None],
    )
    target = torch.tensor(labels[0], dtype=torch.long)
    loss = torch.nn.functional.cross_entropy(out.logits[0], target, ignore_index=-1)
    model.zero_grad()
    loss.backward()
    expected = out.logits[0].detach().numpy()
    with torch.no_grad():
        for start, n in zip(starts, lengths):
            alone = model(torch.tensor(ids[:, start : start + n], dtype=torch.long)).logits[0].numpy()
            np.testing.assert_allclose(expected[start : start + n], alone, atol=1e-5 * np.abs(alone).max())

    recipe = FullFineTune("cpu", threads=1)
    recipe.realize(path, toy.RecipeOptions(t_seq=12, t_batch=1, packed=True))
    assert_step_matches(recipe, (ids, positions, labels), model, out.logits, loss, HF_TO_GGUF)
