"""Gemma 2 (GGUF architecture `gemma2`): Gemma 3's block without q/k norms,
every second layer global and the rest attending through a sliding window,
and soft-capping, cap * tanh(x / cap), of the attention scores and of the
logits.

A small random-weight Gemma 2 is built in transformers and written to GGUF
as llama.cpp's converter writes one (norm weights stored as 1 + w), with
caps small enough (3 and 5, not 50 and 30) that capping changes every
score, then run by toy: logits and every gradient against transformers,
cached decoding, LoRA on a Q8_0 copy, and llama.cpp running the file and
an adapter trained on it. Its local layers see 4 positions of 16."""

import numpy as np
import pytest

import toy
from gguf_fixtures import tiny_tokenizer, write_llama_gguf
from hf_compare import (
    ALL_SEVEN,
    GEMMA_NAMES,
    assert_cached_decoding_matches,
    assert_toy_matches,
    full_fine_tune,
    gguf_name,
    hf_logits,
    llama_cpp_logits,
    q8_0_copy,
    randomize,
    toy_logits,
    trained_adapter,
)
from toy.native.session import read_gguf_config
from toy.recipes import LoRA

gguf = pytest.importorskip("gguf")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

T, WINDOW, VOCAB, D_MODEL, HEAD_DIM, N_HEADS, N_KV_HEADS, D_FF = 16, 4, 300, 32, 16, 4, 2, 64
ATTN_CAP, FINAL_CAP = 3.0, 5.0


def hf_gemma2(n_layers=4, query_pre_attn_scalar=HEAD_DIM, attn_cap=ATTN_CAP, final_cap=FINAL_CAP):
    """Layers 0 and 2 local (window 4), 1 and 3 global."""
    config = transformers.Gemma2Config(
        vocab_size=VOCAB,
        hidden_size=D_MODEL,
        intermediate_size=D_FF,
        num_hidden_layers=n_layers,
        num_attention_heads=N_HEADS,
        num_key_value_heads=N_KV_HEADS,
        head_dim=HEAD_DIM,
        query_pre_attn_scalar=query_pre_attn_scalar,
        sliding_window=WINDOW,
        attn_logit_softcapping=attn_cap,
        final_logit_softcapping=final_cap,
        max_position_embeddings=256,
        rms_norm_eps=1e-6,
        tie_word_embeddings=True,
    )
    model = randomize(transformers.Gemma2ForCausalLM(config), norm_offset=0.0)
    model.config._attn_implementation = "eager"  # the only one that soft-caps
    return model


def write_gguf(model, path, types=None, caps=(ATTN_CAP, FINAL_CAP)):
    """caps: the soft-capping keys' values (attention, final), or None:
    the file without them (llama.cpp's defaults apply)."""
    params = {}
    for name, p in model.named_parameters():
        value = p.detach().numpy().astype(np.float64)
        params[gguf_name(name, GEMMA_NAMES)] = value + 1.0 if name.endswith("norm.weight") else value
    cfg = model.config
    spec = toy.ModelConfig(
        vocab=VOCAB,
        d_model=D_MODEL,
        n_layers=cfg.num_hidden_layers,
        n_heads=N_HEADS,
        n_kv_heads=N_KV_HEADS,
        d_ff=D_FF,
        rope_base=10000.0,
        norm_eps=1e-6,
    )
    path = write_llama_gguf(
        path,
        params,
        spec,
        arch="gemma2",
        types=types,
        head_dim=HEAD_DIM,
        extra_u32={"attention.sliding_window": WINDOW},
        tokenizer=tiny_tokenizer(VOCAB),
        extra_f32=None if caps is None else {"attn_logit_softcapping": caps[0], "final_logit_softcapping": caps[1]},
    )
    return path


@pytest.fixture(scope="module")
def model():
    return hf_gemma2()


@pytest.fixture(scope="module")
def ids():
    return np.random.default_rng(7).integers(0, VOCAB, (1, T + 1)).astype(np.int32)


def test_gemma2_config_is_read_from_the_file(tmp_path, model):
    cfg = read_gguf_config(write_gguf(model, tmp_path / "gemma2.gguf"))
    assert (cfg.swa_window, cfg.swa_period, cfg.rope_base_swa) == (WINDOW, 2, 10000.0)
    assert (cfg.attn_softcap, cfg.final_softcap, cfg.attn_scale) == (ATTN_CAP, FINAL_CAP, 0.0)
    assert cfg.rope_neox and cfg.embd_scale and cfg.ffn_gelu and cfg.post_norms and not cfg.qk_norm
    # without the keys, llama.cpp's caps
    cfg = read_gguf_config(write_gguf(model, tmp_path / "default.gguf", caps=None))
    assert (cfg.attn_softcap, cfg.final_softcap) == (50.0, 30.0)


def test_logits_and_every_gradient_match_transformers(tmp_path, model, ids):
    path = write_gguf(model, tmp_path / "gemma2.gguf")
    assert_toy_matches(model, path, ids, GEMMA_NAMES)


@pytest.mark.parametrize("uncapped", ["attention", "logits"])
def test_without_either_cap_the_logits_differ(tmp_path, model, ids, uncapped):
    """The same file with one cap so large that it caps nothing: toy's
    logits then leave transformers' (so the test above sees both caps)."""
    caps = (1e6, FINAL_CAP) if uncapped == "attention" else (ATTN_CAP, 1e6)
    expected = hf_logits(model, ids[:, :-1])
    ours = toy_logits(write_gguf(model, tmp_path / "uncapped.gguf", caps=caps), ids[:, :-1])
    assert np.abs(ours - expected).max() > 1e-2 * np.abs(expected).max()


def test_the_27b_shape_scales_scores_by_d_model_over_heads(tmp_path):
    """llama.cpp knows Gemma 2 27B by its 46 layers and scales its scores by
    1 / sqrt(d_model / n_heads) (its query_pre_attn_scalar), not by the head
    width: a 46-layer file here does the same, as transformers does."""
    model = hf_gemma2(n_layers=46, query_pre_attn_scalar=D_MODEL // N_HEADS)
    path = write_gguf(model, tmp_path / "gemma2-46.gguf")
    assert read_gguf_config(path).attn_scale == pytest.approx(1 / np.sqrt(D_MODEL // N_HEADS))
    ids = np.random.default_rng(8).integers(0, VOCAB, (1, 8)).astype(np.int32)
    expected = hf_logits(model, ids)
    np.testing.assert_allclose(toy_logits(path, ids), expected, atol=1e-4 * np.abs(expected).max())


def test_kv_cache_decoding_matches_transformers_within_the_window(tmp_path, model, ids):
    path = write_gguf(model, tmp_path / "gemma2.gguf")
    tokens = ids[0, :WINDOW]
    assert_cached_decoding_matches(path, tokens, hf_logits(model, tokens[None]), prefill=2)


def test_lora_on_a_q8_0_copy_follows_transformers_and_trains(tmp_path, model, ids):
    types = {
        gguf_name(n, GEMMA_NAMES): gguf.GGMLQuantizationType.Q8_0 for n, p in model.named_parameters() if p.ndim == 2
    }
    path = write_gguf(model, tmp_path / "q8_0.gguf", types=types)
    positions = np.arange(T, dtype=np.int32)[None]
    expected = hf_logits(q8_0_copy(model), ids[:, :-1])
    recipe = LoRA("cpu", threads=1)
    recipe.realize(path, None, 4, toy.RecipeOptions(t_seq=T, t_batch=1, seed=0), targets=ALL_SEVEN)
    logits, _ = recipe.evaluate(ids[:, :-1], positions)
    assert np.abs(logits[0] - expected).max() < 2e-2 * np.abs(expected).max()
    hp = toy.adamw_hp
    losses = [recipe.step(ids[:, :-1], positions, ids[:, 1:], hp(step, 1e-2), step == 1) for step in range(1, 11)]
    assert losses[-1] < losses[0] - 0.5, losses


def test_llama_cpp_runs_the_file_as_toy_does(tmp_path, model, ids):
    path = write_gguf(model, tmp_path / "gemma2.gguf")
    ours = toy_logits(path, ids[:, :-1])
    theirs = llama_cpp_logits(path, ids[0, :-1])
    np.testing.assert_allclose(theirs, ours, atol=1e-3 * np.abs(ours).max())


def test_llama_cpp_loads_our_adapter_with_our_logits(tmp_path, model, ids):
    """An adapter on all seven projections, trained on the file, runs in
    llama.cpp with toy's logits."""
    pytest.importorskip("llama_cpp")
    path = write_gguf(model, tmp_path / "gemma2.gguf")
    _, ours = trained_adapter(path, ids, tmp_path / "adapter.gguf")
    assert np.abs(ours - toy_logits(path, ids[:, :-1])).max() > 1e-2  # the adapter changed something
    assert gguf.GGUFReader(str(tmp_path / "adapter.gguf")).fields["general.architecture"].contents() == "gemma2"
    theirs = llama_cpp_logits(path, ids[0, :-1], tmp_path / "adapter.gguf")
    np.testing.assert_allclose(theirs, ours, atol=1e-3 * np.abs(ours).max())


def test_full_fine_tuning_writes_a_model_llama_cpp_runs_with_our_logits(tmp_path, model, ids):
    pytest.importorskip("llama_cpp")
    path = write_gguf(model, tmp_path / "gemma2.gguf")
    ours = full_fine_tune(path, ids, tmp_path / "tuned.gguf")
    np.testing.assert_allclose(
        llama_cpp_logits(tmp_path / "tuned.gguf", ids[0, :-1]), ours, atol=1e-3 * np.abs(ours).max()
    )


@pytest.mark.parametrize("cap", [-1.0, float("nan"), float("inf")])
def test_a_bad_cap_in_the_file_is_refused_in_one_line(tmp_path, model, cap):
    path = write_gguf(model, tmp_path / "bad.gguf", caps=(cap, FINAL_CAP))
    recipe = LoRA("cpu", threads=1)
    with pytest.raises(toy.ToyError, match=r"^attn_softcap must be 0 \(off\) or positive, got") as error:
        recipe.realize(path, None, 1, toy.RecipeOptions(t_seq=T, t_batch=1), targets=("q",))
    assert "\n" not in str(error.value)
