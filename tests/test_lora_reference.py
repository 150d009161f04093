"""LoRA on the real SmolLM2-135M Q4_1 file against the independent numpy
reference run on the dequantized weights."""

import numpy as np
import pytest

import reference_llama as ref
import toy
from gguf_fixtures import write_llama_gguf
from toy.recipes import LoRA

gguf = pytest.importorskip("gguf")


def lora_expectations(values, grads_ref, adapters, scale):
    """dL/dA and dL/dB from the reference's dL/dW of W + scale * B @ A."""
    out = {}
    for name in adapters:
        weight = name.rsplit(".", 1)[0]
        if name.endswith(".lora_a"):
            out[name] = scale * values[weight + ".lora_b"].T @ grads_ref[weight]
        else:
            out[name] = scale * grads_ref[weight] @ values[weight + ".lora_a"].T
    return out


def with_adapters(params, values, scale):
    params = dict(params)
    for name in [n for n in values if n.endswith(".lora_a")]:
        weight = name[: -len(".lora_a")]
        params[weight] = params[weight] + scale * values[weight + ".lora_b"] @ values[name]
    return params


@pytest.mark.parametrize("targets", [("q",), ("q", "k", "v", "o", "gate", "up", "down")])
def test_lora_gradients_on_an_f32_gguf_match_the_reference_tightly(tmp_path, targets):
    cfg = ref.Config(vocab=13, d_model=8, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=12, untied=True, qkv_bias=False)
    params = ref.init_params(cfg, np.random.default_rng(5), scale=0.5)
    path = write_llama_gguf(tmp_path / "tiny.gguf", params, cfg)
    recipe = LoRA("cpu", threads=1)
    recipe.realize(
        path, None, 2, toy.RecipeOptions(t_seq=5, t_batch=2, seed=3, init_scale=0.3), alpha=3.0, targets=targets
    )
    e, adapters = recipe.session, recipe.adapters()
    rng = np.random.default_rng(0)
    for name, h in adapters.items():
        if name.endswith(".lora_b"):
            e.upload(h, rng.normal(0, 0.3, e.info(h).shape).astype(np.float32))
    values = {name: e.download(h).astype(np.float64) for name, h in adapters.items()}
    tokens = rng.integers(0, 13, size=(2, 5)).astype(np.int32)
    labels = rng.integers(0, 13, size=(2, 5)).astype(np.int32)
    positions = np.tile(np.arange(5, dtype=np.int32), (2, 1))
    recipe._upload_batch(tokens, positions, labels)
    e.reset()
    e.compute_gradients()
    loss_ref, grads_ref = ref.loss_and_grads(with_adapters(params, values, 1.5), cfg, tokens, positions, labels)
    assert float(e.download(e.loss)) == pytest.approx(loss_ref, rel=1e-5)
    expected = lora_expectations(values, grads_ref, adapters, 1.5)
    assert len(adapters) == 2 * 2 * len(targets)
    for name, h in adapters.items():
        np.testing.assert_allclose(
            e.download(e.grad_of(h)),
            expected[name],
            rtol=0,
            atol=1e-4 * np.abs(expected[name]).max() + 1e-7,
            err_msg=name,
        )


@pytest.fixture(scope="module")
def dequantized(smollm2):
    """Every tensor of the file as float64, numpy (out, in) layout."""
    reader = gguf.GGUFReader(str(smollm2))
    return {t.name: gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float64) for t in reader.tensors}


def test_lora_loss_logits_and_adapter_gradients_match_the_reference(smollm2, dequantized):
    T = 6
    recipe = LoRA("cpu", threads=2)
    opts = toy.RecipeOptions(t_seq=T, t_batch=1, seed=1, init_scale=0.05)
    recipe.realize(smollm2, None, 4, opts, alpha=8.0, targets=("q", "v", "down"))
    e, cfg = recipe.session, recipe.cfg
    scale = 8.0 / 4
    # B starts at zero (so step 1 is the base model); give it values so that
    # the gradient of A is not trivially zero
    rng = np.random.default_rng(0)
    adapters = recipe.adapters()
    for name, h in adapters.items():
        if name.endswith(".lora_b"):
            e.upload(h, rng.normal(0, 0.02, e.info(h).shape).astype(np.float32))
    values = {name: e.download(h).astype(np.float64) for name, h in adapters.items()}

    tokens = np.array([[1, 504, 3458, 282, 260, 2489]], dtype=np.int32)  # arbitrary ids
    labels = np.array([[504, 3458, 282, 260, 2489, 30]], dtype=np.int32)
    positions = np.arange(T, dtype=np.int32)[None]
    recipe._upload_batch(tokens, positions, labels)
    e.reset()
    e.compute_gradients()

    # the reference sees W + scale * B @ A on every adapted weight
    params = with_adapters(dequantized, values, scale)
    rcfg = ref.Config(
        vocab=cfg.vocab,
        d_model=cfg.d_model,
        n_layers=cfg.n_layers,
        n_heads=cfg.n_heads,
        n_kv_heads=cfg.n_kv_heads,
        d_ff=cfg.d_ff,
        rope_base=cfg.rope_base,
        rms_eps=cfg.norm_eps,
        untied=False,
        qkv_bias=False,
    )
    loss_ref, grads_ref = ref.loss_and_grads(params, rcfg, tokens, positions, labels)

    # ggml multiplies quantized weights with 8-bit-quantized activations: close, not exact
    loss = float(e.download(e.loss))
    assert loss == pytest.approx(loss_ref, rel=0.02)
    e.compute_forward()
    logits = e.download(e.logits).reshape(T, cfg.vocab)
    logits_ref = ref.forward(params, rcfg, tokens, positions)[0]
    assert np.corrcoef(logits.ravel(), logits_ref.ravel())[0, 1] > 0.999
    assert (logits.argmax(-1) == logits_ref.argmax(-1)).mean() >= 5 / 6

    cosines, norm_ratios = [], []
    all_expected = lora_expectations(values, grads_ref, adapters, scale)
    for name, h in adapters.items():
        expected = all_expected[name]
        got = e.download(e.grad_of(h))
        cos = (got * expected).sum() / (np.linalg.norm(got) * np.linalg.norm(expected))
        cosines.append(cos)
        norm_ratios.append(np.linalg.norm(got) / np.linalg.norm(expected))
    # noise from the 8-bit activations, not a systematic error (a wrong sign,
    # a transposed factor or a missing scale would show as cos ~0 or ratio off)
    assert np.median(cosines) > 0.98 and min(cosines) > 0.7
    assert 0.9 < np.median(norm_ratios) < 1.1


def test_step_one_is_the_base_model_and_adapters_off_restores_it(smollm2):
    recipe = LoRA("cpu", threads=2)
    opts = toy.RecipeOptions(t_seq=8, t_batch=1, seed=0)
    recipe.realize(smollm2, None, 8, opts, targets=("q", "v"))
    rng = np.random.default_rng(1)
    ids = rng.integers(0, recipe.cfg.vocab, size=(1, 9)).astype(np.int32)
    positions = np.arange(8, dtype=np.int32)[None]
    _, base_loss = recipe.evaluate(ids[:, :-1], positions, ids[:, 1:])
    first = recipe.step(ids[:, :-1], positions, ids[:, 1:], toy.adamw_hp(1, 1e-2), True)
    assert first == base_loss  # B = 0: the adapters change nothing yet
    for step in range(2, 6):
        recipe.step(ids[:, :-1], positions, ids[:, 1:], toy.adamw_hp(step, 1e-2), False)
    _, tuned = recipe.evaluate(ids[:, :-1], positions, ids[:, 1:])
    assert tuned < base_loss - 0.1  # it learned the batch
    with recipe.adapters_off():
        _, off = recipe.evaluate(ids[:, :-1], positions, ids[:, 1:])
    assert off == base_loss
    _, again = recipe.evaluate(ids[:, :-1], positions, ids[:, 1:])
    assert again == tuned


def test_a_merged_f32_model_computes_what_base_plus_adapter_computes(tmp_path):
    from toy.formats.merge import merge_lora

    cfg = ref.Config(vocab=40, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=64, untied=False)
    params = ref.init_params(cfg, np.random.default_rng(2), scale=0.3)
    base = write_llama_gguf(tmp_path / "base.gguf", params, cfg)
    opts = toy.RecipeOptions(t_seq=6, t_batch=1, seed=0)
    tuned = LoRA("cpu", threads=1)
    tuned.realize(base, None, 4, opts, alpha=8.0, targets=("q", "v", "gate"))
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 40, size=(1, 7)).astype(np.int32)
    positions = np.arange(6, dtype=np.int32)[None]
    for step in range(1, 6):
        tuned.step(ids[:, :-1], positions, ids[:, 1:], toy.adamw_hp(step, 5e-2), step == 1)
    expected, _ = tuned.evaluate(ids[:, :-1], positions)
    tuned.save_adapter(tmp_path / "adapter.gguf")

    merge_lora(base, tmp_path / "adapter.gguf", tmp_path / "merged.gguf", "f32")
    merged = LoRA("cpu", threads=1)  # a fresh adapter (B = 0) leaves the merged model as is
    merged.realize(tmp_path / "merged.gguf", None, 1, opts, targets=("q",))
    got, _ = merged.evaluate(ids[:, :-1], positions)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    original = LoRA("cpu", threads=1)
    original.realize(base, None, 1, opts, targets=("q",))
    assert not np.allclose(original.evaluate(ids[:, :-1], positions)[0], expected, atol=1e-3)


def test_merge_back_into_the_base_quantization(tmp_path):
    from toy.formats.merge import merge_lora

    cfg = ref.Config(vocab=40, d_model=64, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=64, untied=False)
    params = ref.init_params(cfg, np.random.default_rng(3), scale=0.3)
    q8 = gguf.GGMLQuantizationType.Q8_0
    base = write_llama_gguf(tmp_path / "base.gguf", params, cfg, types={"blk.0.attn_q.weight": q8})
    recipe = LoRA("cpu", threads=1)
    recipe.realize(base, None, 2, toy.RecipeOptions(t_seq=4, t_batch=1), targets=("q",))
    recipe.save_adapter(tmp_path / "adapter.gguf")
    merge_lora(base, tmp_path / "adapter.gguf", tmp_path / "merged.gguf", "base")
    reader = gguf.GGUFReader(str(tmp_path / "merged.gguf"))
    types = {t.name: t.tensor_type for t in reader.tensors}
    assert types["blk.0.attn_q.weight"] == q8 and types["blk.0.attn_k.weight"] == gguf.GGMLQuantizationType.F32
    assert reader.fields["llama.block_count"].contents() == 1


def test_a_q4_0_base_forwards_with_its_stored_values(tmp_path):
    """Q4_0 blocks are Q4_1 blocks with m = -8 d: the packed forward takes
    them as they are stored (not requantized to Q8_0, which moved each
    weight by up to 1/254 of its block's range and took 1.9x the memory), so
    the logits are the dequantized model's to the int8 activations' rounding."""
    cfg = ref.Config(vocab=320, d_model=64, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=128, untied=True, qkv_bias=False)
    params = ref.init_params(cfg, np.random.default_rng(3), scale=0.1)
    q4_0 = gguf.GGMLQuantizationType.Q4_0
    types = {n: q4_0 for n in params if not n.endswith("norm.weight")}
    path = write_llama_gguf(tmp_path / "tiny-q4_0.gguf", params, cfg, types=types)
    stored = {
        n: gguf.quants.dequantize(gguf.quants.quantize(v.astype(np.float32), q4_0), q4_0).astype(np.float64)
        if n in types
        else v
        for n, v in params.items()
    }

    recipe = LoRA("cpu", threads=2)
    recipe.realize(str(path), None, 4, toy.RecipeOptions(t_seq=16, t_batch=1), targets=("q",))
    tokens = np.random.default_rng(4).integers(0, cfg.vocab, size=(1, 16)).astype(np.int32)
    positions = np.arange(16, dtype=np.int32)[None]
    logits, _ = recipe.evaluate(tokens, positions)
    expected = ref.forward(stored, cfg, tokens, positions)
    error = np.abs(logits - expected).max() / np.abs(expected).max()
    assert error < 1e-3, error  # measured 1.1e-4; requantized to Q8_0: 2.0e-2
