"""Ministral 3 (`mistral3`: the 3 B, 8 B and 14 B) as llama.cpp ships it:
llama's block, RoPE extended by YaRN (factor 16 over an original context,
the ramp between beta_fast and beta_slow, mscale_all_dim) and Llama 4's
attention temperature, each query times 1 + beta ln(1 + floor(pos /
original context)). A small random-weight transformers
Ministral3ForCausalLM, written to GGUF by llama.cpp's own
convert_hf_to_gguf.py, with an original context of 8 tokens so that a
12-token sequence crosses into the temperature's second step: the config,
logits and every gradient against transformers; LoRA (its adapter run by
llama.cpp to toy's logits) on F32 and Q8_0; a full fine-tune llama.cpp
runs; cached decoding past the original context; instruct from the
command line with Ministral 3's chat template."""

from __future__ import annotations

import numpy as np
import pytest

import toy
from hf_compare import (
    ALL_SEVEN,
    LLAMA_LIKE_NAMES,
    assert_adapter_runs_in_llama_cpp,
    assert_cached_decoding_matches,
    assert_full_fine_tune_runs_in_llama_cpp,
    assert_toy_matches,
    assert_vulkan_follows_the_cpu,
    hf_logits,
    llama_cpp_logits,
    llama_cpp_rows,
    randomize,
)
from llama_cpp_convert import hf_to_gguf, quantize

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

T = 12
VOCAB = 272
HEADS, KV_HEADS = 4, 2
ORIGINAL = 8  # the original context: positions 8 to 11 have a temperature of 1 + 0.1 ln 2
HF_TO_GGUF = {
    **LLAMA_LIKE_NAMES,
    "lm_head.weight": "output.weight",
    "model.layers.{i}.post_attention_layernorm.weight": "blk.{i}.ffn_norm.weight",
}


def rope_parameters(log_mul: float = 1.0, temperature: float = 0.1, original: int = ORIGINAL) -> dict:
    """Ministral 3's YaRN and temperature, over an original context of `original`."""
    return {
        "type": "yarn",
        "rope_type": "yarn",
        "rope_theta": 1000000.0,
        "factor": 16.0,
        "original_max_position_embeddings": original,
        "max_position_embeddings": 16 * original,
        "beta_fast": 32.0,
        "beta_slow": 1.0,
        "mscale_all_dim": log_mul,
        "mscale": 1.0,
        "llama_4_scaling_beta": temperature,
    }


def hf_model(**rope):
    config = transformers.Ministral3Config(
        vocab_size=VOCAB,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        head_dim=16,
        max_position_embeddings=16 * rope.get("original", ORIGINAL),
        rope_parameters=rope_parameters(**rope),
        tie_word_embeddings=False,
        bos_token_id=VOCAB - 1,
        eos_token_id=VOCAB - 1,
        pad_token_id=0,
    )
    return randomize(transformers.Ministral3ForCausalLM(config))


@pytest.fixture(scope="module")
def mistral3(tmp_path_factory):
    """(the transformers model, its f32 GGUF by llama.cpp's converter)"""
    model = hf_model()
    return model, hf_to_gguf(model, tmp_path_factory.mktemp("mistral3") / "mistral3-f32.gguf")


def ids(seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB - 1, (1, T + 1)).astype(np.int32)


def to_llama_cpp_rows(name, rows):
    return llama_cpp_rows(name, rows, HEADS, KV_HEADS)


def test_the_config_has_yarn_and_the_temperature(mistral3):
    _, path = mistral3
    cfg = toy.native.session.read_gguf_config(path)
    assert (cfg.rope_scale, cfg.rope_yarn, cfg.rope_yarn_ctx) == (16.0, True, ORIGINAL)
    assert (cfg.rope_yarn_beta_fast, cfg.rope_yarn_beta_slow, cfg.rope_yarn_log_mul) == (32.0, 1.0, 1.0)
    assert cfg.attn_temp_scale == pytest.approx(0.1)
    assert not cfg.rope_neox


@pytest.mark.parametrize("log_mul", [1.0, 0.0])
def test_logits_and_every_gradient_match_transformers(tmp_path, log_mul):
    """Past the original context, so that the temperature's second step is
    in the loss; mscale_all_dim 1 (Ministral 3's: cos and sin as they are)
    and 0 (YaRN's own 1 + 0.1 ln 16)."""
    model = hf_model(log_mul=log_mul)
    path = hf_to_gguf(model, tmp_path / "mistral3.gguf")
    assert_toy_matches(model, path, ids(), HF_TO_GGUF, to_gguf=to_llama_cpp_rows)


def test_yarn_and_the_temperature_both_change_the_logits(tmp_path):
    """Neither is a no-op at these positions: a model without the
    temperature, and one without YaRN, give other logits (so the test above
    holds both)."""
    base = hf_model()
    state = base.state_dict()
    plain = hf_model(temperature=0.0)
    plain.load_state_dict(state)
    batch = ids()[:, :-1]
    theirs = hf_logits(base, batch)
    assert np.abs(hf_logits(plain, batch)[ORIGINAL:] - theirs[ORIGINAL:]).max() > 1e-3 * np.abs(theirs).max()
    np.testing.assert_allclose(hf_logits(plain, batch)[:ORIGINAL], theirs[:ORIGINAL], atol=1e-5)
    llama = randomize(
        transformers.LlamaForCausalLM(
            transformers.LlamaConfig(
                **{k: getattr(base.config, k) for k in ("vocab_size", "hidden_size", "intermediate_size")},
                num_hidden_layers=2,
                num_attention_heads=HEADS,
                num_key_value_heads=KV_HEADS,
                head_dim=16,
                rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
                tie_word_embeddings=False,
            )
        )
    )
    llama.load_state_dict(state)
    assert np.abs(hf_logits(llama, batch)[:ORIGINAL] - theirs[:ORIGINAL]).max() > 1e-3 * np.abs(theirs).max()


@pytest.mark.parametrize("kind", ["F32", "Q8_0"])
def test_lora_trains_and_llama_cpp_runs_its_adapter_to_our_logits(mistral3, tmp_path, kind):
    _, f32 = mistral3
    path = f32 if kind == "F32" else quantize(f32, tmp_path / "mistral3-q8_0.gguf", kind)
    assert_adapter_runs_in_llama_cpp(path, ids(2), tmp_path / "adapter.gguf", ALL_SEVEN, exact=kind == "F32")


def test_a_full_fine_tune_saves_a_model_llama_cpp_runs_to_our_logits(mistral3, tmp_path):
    _, path = mistral3
    assert_full_fine_tune_runs_in_llama_cpp(path, ids(3), tmp_path / "full.gguf")


def test_llama_cpp_runs_the_file_to_our_logits(mistral3):
    """The base as llama.cpp runs it (YaRN and the temperature its way)."""
    model, path = mistral3
    batch = ids(4)[0, :-1]
    expected = hf_logits(model, batch[None])
    np.testing.assert_allclose(llama_cpp_logits(path, batch, f32_cache=True), expected,
                               atol=1e-4 * np.abs(expected).max())  # fmt: skip


def test_cached_decoding_past_the_original_context_matches_transformers(mistral3):
    """A prompt of 5, then a token at a time from the KV cache, each query's
    temperature by its own position."""
    model, path = mistral3
    tokens = ids(5)[0]
    assert_cached_decoding_matches(path, tokens, hf_logits(model, tokens[None]), prefill=5)


def test_instruct_runs_with_ministral_3s_template_from_the_command_line(tmp_path, llama_cpp_models):
    from cli_helpers import instruct_and_dpo

    template = (llama_cpp_models / "templates" / "mistralai-Ministral-3-14B-Reasoning-2512.jinja").read_text(
        encoding="utf-8"
    )
    f32 = hf_to_gguf(hf_model(original=64), tmp_path / "f32.gguf", chat_template=template)  # 1024 long
    model = quantize(f32, tmp_path / "mistral3-chat-q8_0.gguf", "Q8_0")
    config = instruct_and_dpo(model, tmp_path, seq=1024)  # its default system prompt: 536 tokens here
    assert config["lora"]["targets"] == list(ALL_SEVEN)


def with_keys(path, out, changes: dict):
    """A copy of the GGUF at path with the mistral3.* keys in changes set
    (string or float32 values), through gguf-py's own metadata editor."""
    import gguf
    from gguf.scripts.gguf_new_metadata import MetadataDetails, copy_with_new_metadata

    reader = gguf.GGUFReader(path)
    writer = gguf.GGUFWriter(out, "mistral3")
    kinds = {str: gguf.GGUFValueType.STRING, float: gguf.GGUFValueType.FLOAT32}
    new = {f"mistral3.{key}": MetadataDetails(kinds[type(value)], value) for key, value in changes.items()}
    copy_with_new_metadata(reader, writer, new, [])
    return out


@pytest.mark.parametrize(
    "changes, refusal",
    [
        ({"rope.scaling.type": "dynamic"}, "RoPE scaling 'dynamic' is not one toy runs"),
        ({"rope.scaling.factor": 0.5}, "a RoPE scaling factor of 0.5"),
        ({"rope.scaling.yarn_beta_fast": 0.5}, "beta_fast 0.5 must be above its beta_slow 1"),
        ({"attention.temperature_scale": float("nan")}, "attention temperature scale of nan"),
    ],
)
def test_rope_scaling_toy_cannot_run_is_refused_in_one_line(mistral3, tmp_path, changes, refusal):
    _, path = mistral3
    edited = with_keys(path, tmp_path / "edited.gguf", changes)
    with pytest.raises(toy.ToyError, match=refusal) as refused:
        toy.native.session.read_gguf_config(edited)
    assert "\n" not in str(refused.value)


def test_linear_rope_scaling_divides_every_angle(mistral3, tmp_path):
    """rope.scaling.type linear (any family; llama.cpp's default type when a
    factor is given): the logits of positions p are the unscaled model's at
    p / factor, which toy is handed as positions of a plain model."""
    from toy.recipes import FullFineTune

    _, path = mistral3
    linear = with_keys(path, tmp_path / "linear.gguf", {"rope.scaling.type": "linear", "rope.scaling.factor": 4.0,
                                                         "attention.temperature_scale": 0.0})  # fmt: skip
    plain = with_keys(path, tmp_path / "plain.gguf", {"rope.scaling.type": "none", "attention.temperature_scale": 0.0})
    cfg = toy.native.session.read_gguf_config(linear)
    assert (cfg.rope_scale, cfg.rope_yarn) == (4.0, False)
    batch = ids(8)[:, :T]
    logits = []
    for file, positions in ((linear, np.arange(T) * 4), (plain, np.arange(T))):
        recipe = FullFineTune("cpu", threads=1)
        recipe.realize(file, toy.RecipeOptions(t_seq=T, t_batch=1))
        logits.append(recipe.evaluate(batch, positions.astype(np.int32)[None])[0][0])
    np.testing.assert_allclose(logits[0], logits[1], atol=1e-5 * np.abs(logits[1]).max())


@pytest.mark.vulkan
def test_vulkan_follows_the_cpu(mistral3):
    """YaRN's RoPE and the temperature (ggml's cast, floor and log) on the
    Vulkan backend, past the original context."""
    _, path = mistral3
    assert_vulkan_follows_the_cpu(path, ids(9), VOCAB, ALL_SEVEN)


def test_the_temperature_steps_exactly_at_multiples_of_an_odd_original_context(tmp_path):
    """An original context of 41: in float32 41 x (1 / 41) rounds below 1, so
    a temperature step taken as pos x (1 / period) would come a token late at
    position 41 (and 82...); transformers divides, and so must toy."""
    from hf_compare import toy_logits

    model = hf_model(original=41)
    path = hf_to_gguf(model, tmp_path / "mistral3-41.gguf")
    batch = np.random.default_rng(10).integers(0, VOCAB - 1, (1, 48)).astype(np.int32)
    expected = hf_logits(model, batch)
    np.testing.assert_allclose(toy_logits(path, batch), expected, atol=1e-4 * np.abs(expected).max())
