"""Llama 3.1-3.3's RoPE scaling, as llama.cpp runs it: the GGUF carries
rope_freqs.weight, one factor per pair of head dims (F32 [head_dim/2]), and
each pair's angle is divided by its factor (ggml_rope_ext's freq_factors).

A small random-weight Llama 3-style model is built in transformers with
rope_type "llama3", written to GGUF here with the factors computed by the
published rule (below, in numpy), then run by toy: logits and every
gradient against transformers, the same file without its factors (which
must then differ), cached decoding, LoRA on a Q8_0 copy, and llama.cpp
where llama-cpp-python is installed. Skips without torch and transformers
(neither is a dependency of toy)."""

import subprocess
import sys

import numpy as np
import pytest

import toy
from gguf_fixtures import tiny_tokenizer, write_llama_gguf
from hf_compare import (
    LLAMA_LIKE_NAMES,
    assert_cached_decoding_matches,
    assert_toy_matches,
    gguf_name,
    hf_logits,
    llama_cpp_logits,
    llama_cpp_rows,
    q8_0_copy,
    randomize,
    toy_logits,
    trained_adapter,
)
from toy.native.session import ModelDesc, read_gguf_config
from toy.recipes import FullFineTune, LoRA

gguf = pytest.importorskip("gguf")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

T = 64  # positions 0..63
VOCAB, D_MODEL, N_HEADS, N_KV_HEADS, D_FF = 300, 64, 4, 2, 128
HEAD_DIM = D_MODEL // N_HEADS  # 16: eight rotary pairs
ROPE_THETA = 500000.0
# Llama 3.1's rope_scaling, as its config.json has it
SCALING = {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
HF_TO_GGUF = {
    **LLAMA_LIKE_NAMES,
    "lm_head.weight": "output.weight",
    "model.layers.{i}.post_attention_layernorm.weight": "blk.{i}.ffn_norm.weight",
}
ROPE_FREQS = "rope_freqs.weight"
Q8_0 = gguf.GGMLQuantizationType.Q8_0


def llama3_rope_factors(head_dim, theta, factor, low_freq_factor, high_freq_factor, original_max_position_embeddings):
    """The factor each rotary pair's angle is divided by, [head_dim/2].

    Pair i turns at freq_i = theta^(-2i/head_dim) radians per position, a
    wavelength of 2 pi / freq_i positions. Llama 3 leaves the short waves
    (shorter than original / high_freq_factor) as they are, slows the long
    ones (longer than original / low_freq_factor) by `factor`, and between
    the two blends freq / factor and freq linearly in
    s = (original / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor),
    i.e. freq * ((1 - s) / factor + s): a divisor of 1 / ((1 - s) / factor + s)."""
    original = original_max_position_embeddings
    freqs = theta ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    wavelength = 2 * np.pi / freqs
    s = (original / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)
    blended = 1.0 / ((1.0 - s) / factor + s)
    short, long = wavelength < original / high_freq_factor, wavelength > original / low_freq_factor
    return np.where(short, 1.0, np.where(long, factor, blended)).astype(np.float32)


FACTORS = llama3_rope_factors(HEAD_DIM, ROPE_THETA, **SCALING)


def test_the_factors_cover_every_case_of_the_rule():
    """With head_dim 16 and theta 500000 the pairs' wavelengths run from 6
    to 6e5 positions: some pairs keep their speed, some are slowed by 8,
    and one is blended, so the test below exercises all three."""
    assert (FACTORS == 1.0).sum() == 4
    assert (FACTORS == 8.0).sum() == 3
    assert ((FACTORS > 1.0) & (FACTORS < 8.0)).sum() == 1
    np.testing.assert_array_equal(np.sort(FACTORS), FACTORS)  # slower with i


def hf_model():
    config = transformers.LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=D_MODEL,
        intermediate_size=D_FF,
        num_hidden_layers=2,
        num_attention_heads=N_HEADS,
        num_key_value_heads=N_KV_HEADS,
        max_position_embeddings=131072,
        rope_parameters={"rope_type": "llama3", "rope_theta": ROPE_THETA, **SCALING},
        rms_norm_eps=1e-5,
        tie_word_embeddings=False,
    )
    return randomize(transformers.LlamaForCausalLM(config))


def to_llama_cpp_rows(name, rows):
    return llama_cpp_rows(name, rows, N_HEADS, N_KV_HEADS)


def write_gguf(model, path, factors=FACTORS, types=None, arch="llama"):
    """The model as llama.cpp's converter writes a Llama 3.1 (factors=None:
    the same file without rope_freqs.weight); types: name -> quantization."""
    params = {}
    for name, p in model.named_parameters():
        gguf_key = gguf_name(name, HF_TO_GGUF)
        params[gguf_key] = to_llama_cpp_rows(gguf_key, p.detach().numpy().astype(np.float64))
    if factors is not None:
        params[ROPE_FREQS] = factors
    spec = toy.ModelConfig(
        vocab=VOCAB,
        d_model=D_MODEL,
        n_layers=2,
        n_heads=N_HEADS,
        n_kv_heads=N_KV_HEADS,
        d_ff=D_FF,
        rope_base=ROPE_THETA,
        norm_eps=1e-5,
    )
    return write_llama_gguf(path, params, spec, arch=arch, types=types, tokenizer=tiny_tokenizer(VOCAB))


@pytest.fixture(scope="module")
def model():
    return hf_model()


@pytest.fixture(scope="module")
def ids():
    return np.random.default_rng(1).integers(0, VOCAB, (1, T + 1)).astype(np.int32)


def test_our_factors_are_transformers_llama3_frequencies(model):
    """The rule above, written here, gives transformers' own llama3 inverse
    frequencies: theta^(-2i/head_dim) / factor_i."""
    freqs = ROPE_THETA ** (-np.arange(0, HEAD_DIM, 2, dtype=np.float64) / HEAD_DIM)
    inv_freq = model.model.rotary_emb.inv_freq.numpy()
    np.testing.assert_allclose(freqs / FACTORS, inv_freq, rtol=1e-6)


def test_logits_and_every_gradient_match_transformers(tmp_path, model, ids):
    path = write_gguf(model, tmp_path / "llama3.gguf")
    assert read_gguf_config(path).rope_freqs
    assert_toy_matches(model, path, ids, HF_TO_GGUF, to_gguf=to_llama_cpp_rows)


def test_without_the_factors_the_logits_differ(tmp_path, model, ids):
    """The same weights without rope_freqs.weight: plain RoPE, which
    transformers' llama3 model does not compute (so the test above can fail)."""
    expected = hf_logits(model, ids[:, :-1])
    tolerance = 1e-4 * np.abs(expected).max()  # what the test above allows
    with_factors = toy_logits(write_gguf(model, tmp_path / "with.gguf"), ids[:, :-1])
    without = toy_logits(write_gguf(model, tmp_path / "without.gguf", factors=None), ids[:, :-1])
    assert np.abs(with_factors - expected).max() < tolerance  # measured 2.4e-6 of 3.0
    assert np.abs(without - expected).max() > 20 * tolerance  # measured 0.026: 86 times


def test_lora_on_the_file_matches_transformers(tmp_path, model, ids):
    """LoRA over the file as a frozen base (its factors bound from the file,
    not uploaded): the logits are transformers', and with B = 0 each B's
    gradient is scale * dL/dW A^T from transformers' dL/dW, through RoPE's
    backward on q and k."""
    path = write_gguf(model, tmp_path / "llama3.gguf")
    recipe = LoRA("cpu", threads=1)
    recipe.realize(path, None, 2, toy.RecipeOptions(t_seq=T, t_batch=1, seed=3, init_scale=0.3), targets=("q", "k"))
    e, adapters = recipe.session, recipe.adapters()
    positions = np.arange(T, dtype=np.int32)[None]

    model.zero_grad()
    out = model(torch.tensor(ids[:, :-1], dtype=torch.long))
    torch.nn.functional.cross_entropy(out.logits[0], torch.tensor(ids[0, 1:], dtype=torch.long)).backward()
    expected = out.logits[0].detach().numpy()
    logits, _ = recipe.evaluate(ids[:, :-1], positions)
    np.testing.assert_allclose(logits[0], expected, atol=1e-4 * np.abs(expected).max())

    recipe._upload_batch(ids[:, :-1], positions, ids[:, 1:])
    e.reset()
    e.compute_gradients()
    weight_grads = {gguf_name(n, HF_TO_GGUF): p.grad.numpy() for n, p in model.named_parameters()}
    for name in [n for n in adapters if n.endswith(".lora_b")]:
        weight = name[: -len(".lora_b")]
        a = e.download(adapters[weight + ".lora_a"])
        want = recipe.alpha / recipe.rank * to_llama_cpp_rows(weight, weight_grads[weight]) @ a.T
        got = e.download(e.grad_of(adapters[name]))
        np.testing.assert_allclose(got, want, atol=1e-4 * np.abs(want).max(), err_msg=name)


def test_kv_cache_decoding_matches_transformers(tmp_path, model, ids):
    """Generation's cached decode (a graph per step over the KV cache) passes
    the factors to RoPE as the training graph does."""
    path = write_gguf(model, tmp_path / "llama3.gguf")
    tokens = ids[0, :T]
    assert_cached_decoding_matches(path, tokens, hf_logits(model, tokens[None]), prefill=40)


def test_lora_on_a_q8_0_copy_follows_transformers_and_trains(tmp_path, model, ids):
    """LoRA over a Q8_0 copy (its factors F32), at positions 32 apart as in
    a long context (up to 2016, where the slowed pairs have turned): before
    a step its logits are transformers' on the dequantized weights, to the
    int8 activations' rounding, far closer than plain RoPE's; then it trains."""
    types = {gguf_name(n, HF_TO_GGUF): Q8_0 for n, p in model.named_parameters() if p.ndim == 2}
    positions = np.arange(T, dtype=np.int32)[None] * 32
    expected = hf_logits(q8_0_copy(model), ids[:, :-1], positions)

    def lora(factors):
        recipe = LoRA("cpu", threads=1)
        path = write_gguf(model, tmp_path / f"q8_0-{factors is None}.gguf", factors=factors, types=types)
        recipe.realize(path, None, 4, toy.RecipeOptions(t_seq=T, t_batch=1, seed=0), targets=("q", "k", "v", "o"))
        return recipe

    def error(recipe):
        return np.abs(recipe.evaluate(ids[:, :-1], positions)[0][0] - expected).max() / np.abs(expected).max()

    recipe = lora(FACTORS)
    ours, plain = error(recipe), error(lora(None))
    assert ours < 1e-2 and plain > 10 * ours, (ours, plain)  # measured 0.0075 and 0.49

    hp = toy.adamw_hp
    losses = [recipe.step(ids[:, :-1], positions, ids[:, 1:], hp(step, 1e-2), step == 1) for step in range(1, 11)]
    assert losses[-1] < losses[0] - 0.5, losses


def test_toy_train_full_keeps_the_factors_in_the_model_it_writes(tmp_path, model):
    """toy-train full on the file: the written model carries the base's
    factors unchanged (they are not trained), and reads back as Llama 3."""
    path = write_gguf(model, tmp_path / "llama3.gguf")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the rain in spain stays mainly in the plain. " * 40)
    args = ["full", "--model", str(path), "--corpus", str(corpus), "--steps", "2", "--seq", "16", "--batch", "1"]
    result = subprocess.run(
        [sys.executable, "-m", "toy.cli.train", *args, "--out", str(tmp_path / "run")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-2000:]
    written = {t.name: t for t in gguf.GGUFReader(str(tmp_path / "run" / "model.gguf")).tensors}
    np.testing.assert_array_equal(written[ROPE_FREQS].data, FACTORS)
    assert read_gguf_config(tmp_path / "run" / "model.gguf").rope_freqs


def test_llama_cpp_runs_the_file_as_toy_does(tmp_path, model, ids):
    """llama.cpp (where llama-cpp-python is installed) reads the same file's
    factors: its logits are toy's."""
    path = write_gguf(model, tmp_path / "llama3.gguf")
    ours = toy_logits(path, ids[:, :-1])
    theirs = llama_cpp_logits(path, ids[0, :-1])
    np.testing.assert_allclose(theirs, ours, atol=1e-3 * np.abs(ours).max())


def test_llama_cpp_loads_our_adapter_with_our_logits(tmp_path, model, ids):
    """An adapter trained on the file runs in llama.cpp, which applies the
    same factors: its logits with the adapter are toy's."""
    pytest.importorskip("llama_cpp")
    path = write_gguf(model, tmp_path / "llama3.gguf")
    _, ours = trained_adapter(path, ids, tmp_path / "adapter.gguf", targets=("q", "k", "v", "o"))
    assert np.abs(ours - toy_logits(path, ids[:, :-1])).max() > 1e-2  # the adapter changed something
    theirs = llama_cpp_logits(path, ids[0, :-1], tmp_path / "adapter.gguf")
    np.testing.assert_allclose(theirs, ours, atol=1e-3 * np.abs(ours).max())


# ---- bad factors: refused in one line before any graph -----------------------


def with_nan(factors):
    bad = factors.copy()
    bad[5] = np.nan
    return bad


BAD_FACTORS = {
    "one per head dim": (np.ones(HEAD_DIM, np.float32), "has shape [16, 1, 1, 1], expected [8]: one RoPE factor per"),
    "a matrix": (np.ones((2, HEAD_DIM // 2), np.float32), "has shape [8, 2, 1, 1], expected [8]"),
    "a NaN": (with_nan(FACTORS), "RoPE factor 5 of rope_freqs.weight is nan, not a finite positive number"),
    "a zero": (np.where(FACTORS == 1, 0, FACTORS).astype(np.float32), "RoPE factor 0 of rope_freqs.weight is 0"),
    "an infinity": (FACTORS * np.inf, "RoPE factor 0 of rope_freqs.weight is inf"),
}


@pytest.mark.parametrize("case", BAD_FACTORS)
def test_bad_factors_are_refused_in_one_line(tmp_path, model, case):
    factors, phrase = BAD_FACTORS[case]
    path = write_gguf(model, tmp_path / "bad.gguf", factors=factors)
    for recipe in ("lora", "full"):
        result = subprocess.run(
            [sys.executable, "-m", "toy.cli.train", recipe, "--model", str(path), "--steps", "1"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert result.returncode == 2, result.stderr[-2000:]
        assert result.stdout == ""
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("toy-train: error: "), result.stderr
        assert phrase in result.stderr
    with pytest.raises(toy.ToyError, match="rope_freqs.weight"):
        toy.load_model(path)


def test_factors_of_another_type_or_family_are_refused(tmp_path, model):
    f16 = write_gguf(model, tmp_path / "f16.gguf", types={ROPE_FREQS: gguf.GGMLQuantizationType.F16})
    with pytest.raises(toy.ToyError, match="tensor rope_freqs.weight has type f16, expected F32"):
        read_gguf_config(f16)
    # llama.cpp reads no factors for Qwen2 either: a file with them is refused, not run without them
    qwen2 = write_gguf(model, tmp_path / "qwen2.gguf", arch="qwen2")
    with pytest.raises(toy.ToyError, match="rope_freqs.weight: qwen2 models have no RoPE frequency factors"):
        read_gguf_config(qwen2)


def test_a_model_made_with_factors_checks_their_upload_and_saves_them(tmp_path):
    """A model made here with rope_freqs (as FullFineTune makes one) holds
    the factors as a frozen tensor, 1 until uploaded; an upload is checked,
    and the saved model carries them."""
    recipe = FullFineTune("cpu", threads=1)
    cfg = toy.ModelConfig(vocab=VOCAB, d_model=D_MODEL, n_heads=N_HEADS, n_kv_heads=N_KV_HEADS, rope_freqs=True)
    recipe.session.realize(ModelDesc.from_scratch(cfg, toy.RecipeOptions(t_seq=4, t_batch=1)))
    e = recipe.session
    handle = e.find(ROPE_FREQS)
    assert ROPE_FREQS not in e.params()  # never trained
    np.testing.assert_array_equal(e.download(handle), np.ones(HEAD_DIM // 2, np.float32))
    with pytest.raises(toy.ToyError, match="upload: RoPE factor 5 of rope_freqs.weight is nan"):
        e.upload(handle, with_nan(FACTORS))
    e.upload(handle, FACTORS)
    e.save_gguf(tmp_path / "saved.gguf")
    assert read_gguf_config(tmp_path / "saved.gguf").rope_freqs
    saved = {t.name: t for t in gguf.GGUFReader(str(tmp_path / "saved.gguf")).tensors}
    np.testing.assert_array_equal(saved[ROPE_FREQS].data, FACTORS)
