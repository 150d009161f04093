"""Granite 4's hybrids (`granitehybrid`, dense: Mamba-2 layers and attention
layers without RoPE, Granite's multipliers) as llama.cpp ships them: a
small random-weight transformers GraniteMoeHybridForCausalLM with no
experts, written to GGUF by llama.cpp's own convert_hf_to_gguf.py
(llama_cpp_convert.py), then run by toy: logits and every weight's gradient
against transformers (its torch Mamba-2 scan); LoRA on the Mamba-2 and
attention projections on Q8_0 and Q4_K copies, whose adapter llama.cpp
runs to toy's logits. The scan's backward is toy's (tests/
test_recurrent_ops.py holds it alone), the convolution's vendor patch 0015."""

from __future__ import annotations

import numpy as np
import pytest

import toy
from hf_compare import (
    assert_adapter_runs_in_llama_cpp,
    assert_cached_decoding_matches,
    assert_full_fine_tune_runs_in_llama_cpp,
    assert_toy_matches,
    assert_vulkan_follows_the_cpu,
    hf_logits,
    mamba2_as_stored,
    mamba2_names,
    randomize,
)
from llama_cpp_convert import hf_to_gguf, quantize, tensor_types

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

T = 12
VOCAB = 272  # llama_cpp_convert's smallest GPT-2 cut, a multiple of the converter's 8
KINDS = ["mamba", "mamba", "attention", "mamba"]
HF_TO_GGUF = {
    "model.embed_tokens.weight": "token_embd.weight",
    "model.norm.weight": "output_norm.weight",
    "lm_head.weight": "output.weight",
    "model.layers.{i}.input_layernorm.weight": "blk.{i}.attn_norm.weight",
    "model.layers.{i}.post_attention_layernorm.weight": "blk.{i}.ffn_norm.weight",
    "model.layers.{i}.shared_mlp.input_linear.weight": ("blk.{i}.ffn_gate.weight", "blk.{i}.ffn_up.weight"),
    "model.layers.{i}.shared_mlp.output_linear.weight": "blk.{i}.ffn_down.weight",
    "model.layers.{i}.self_attn.q_proj.weight": "blk.{i}.attn_q.weight",
    "model.layers.{i}.self_attn.k_proj.weight": "blk.{i}.attn_k.weight",
    "model.layers.{i}.self_attn.v_proj.weight": "blk.{i}.attn_v.weight",
    "model.layers.{i}.self_attn.o_proj.weight": "blk.{i}.attn_output.weight",
    **mamba2_names("mamba"),
}
EVERY_TARGET = ("q", "k", "v", "o", "gate", "up", "down", "ssm_out", "ssm_in")
HEADS, KV_HEADS = 4, 2


def hf_model(hidden: int = 64, mamba_heads: int = 4, groups: int = 2, state: int = 16):
    """A Granite 4 hybrid of four layers (three Mamba-2, one attention), no
    experts: the feed-forward is its shared_mlp. Mamba-2's inner width is
    twice the model's (llama.cpp's only expansion); Granite's multipliers
    away from 1 so that each is seen."""
    config = transformers.GraniteMoeHybridConfig(
        vocab_size=VOCAB,
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        shared_intermediate_size=2 * hidden,
        num_hidden_layers=len(KINDS),
        layer_types=KINDS,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        num_local_experts=0,
        num_experts_per_tok=0,
        position_embedding_type="nope",
        mamba_n_heads=mamba_heads,
        mamba_n_groups=groups,
        mamba_d_state=state,
        mamba_d_head=2 * hidden // mamba_heads,
        mamba_d_conv=4,
        mamba_expand=2,
        mamba_chunk_size=8,
        embedding_multiplier=2.0,
        residual_multiplier=0.5,
        attention_multiplier=0.1,
        logits_scaling=1.5,
        max_position_embeddings=128,
        tie_word_embeddings=False,
        bos_token_id=VOCAB - 1,
        eos_token_id=VOCAB - 1,
    )
    return randomize(transformers.GraniteMoeHybridForCausalLM(config))


def write(model, path, **kwargs):
    """llama.cpp's converter reads layer_types as IBM's checkpoints carry
    them ("mamba", "attention"); transformers 5 saves its own names."""
    layer_types = ["attention" if k == "attention" else "mamba" for k in KINDS]
    return hf_to_gguf(model, path, config_json={"layer_types": layer_types}, **kwargs)


@pytest.fixture(scope="module")
def granite(tmp_path_factory):
    """(the transformers model, its f32 GGUF by llama.cpp's converter)"""
    model = hf_model()
    return model, write(model, tmp_path_factory.mktemp("granite") / "granite-f32.gguf")


def ids(seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB - 1, (1, T + 1)).astype(np.int32)


def test_the_config_read_from_the_file_marks_the_mamba_layers(granite):
    _, path = granite
    cfg = toy.native.session.read_gguf_config(path)
    assert (cfg.layer_kinds, cfg.conv_kernel, cfg.ssm_state, cfg.ssm_groups, cfg.ssm_heads) == ("mmam", 4, 16, 2, 4)
    assert cfg.ssm_inner == 128 and cfg.no_rope_period == 1
    assert (cfg.embd_multiplier, cfg.residual_multiplier, cfg.logit_scaling) == (2.0, 0.5, 1.5)
    assert cfg.attn_scale == pytest.approx(0.1)


def test_logits_and_every_gradient_match_transformers(granite):
    """Each gradient in the layout llama.cpp's converter stores its weight
    (mamba2_as_stored says how)."""
    model, path = granite
    assert_toy_matches(model, path, ids(), HF_TO_GGUF, to_gguf=mamba2_as_stored(model, 2, HEADS, KV_HEADS))


def test_a_full_fine_tune_saves_a_model_llama_cpp_runs_to_our_logits(granite, tmp_path):
    _, path = granite
    batch = ids(3)
    assert_full_fine_tune_runs_in_llama_cpp(path, batch, tmp_path / "full.gguf")


@pytest.mark.parametrize("kind", ["F32", "Q8_0", "Q4_K"])
def test_lora_trains_and_llama_cpp_runs_its_adapter_to_our_logits(tmp_path, kind):
    """Every projection a layer has (assert_adapter_runs_in_llama_cpp says
    how close on each kind of file). Q4_K at a width of 256 (tensor_types
    shows the k-quants), one group as Granite 4 has."""
    wide = kind == "Q4_K"
    model = hf_model(hidden=256, mamba_heads=8, groups=1, state=32) if wide else hf_model()
    f32 = write(model, tmp_path / "f32.gguf")
    path = f32 if kind == "F32" else quantize(f32, tmp_path / f"granite-{kind}.gguf", kind)
    if wide:
        types = tensor_types(path)  # llama.cpp's Q4_K mix keeps some matrices at Q5_K and Q6_K
        assert types["blk.0.ssm_in.weight"] in ("Q4_K", "Q5_K") and types["blk.0.ssm_out.weight"] == "Q4_K"
    assert_adapter_runs_in_llama_cpp(path, ids(2), tmp_path / "adapter.gguf", EVERY_TARGET, exact=kind == "F32")


def test_cached_decoding_carries_the_scan_and_convolution_states(granite):
    """Generation's decode on ggml's own SSM_SCAN: a prompt at once, then a
    token at a time, each Mamba-2 layer continuing from its two states (the
    convolution's last inputs, the scan's S), as transformers' logits over
    the whole sequence."""
    model, path = granite
    tokens = ids(4)[0]
    assert_cached_decoding_matches(path, tokens, hf_logits(model, tokens[None]), prefill=5)


@pytest.mark.vulkan
def test_lora_and_cached_decoding_on_vulkan_follow_the_cpu(tmp_path):
    """Granite 4 on Vulkan (the scan: vendor patch 0018), as on the CPU; a state
    of 128, as ggml's decoding shader needs (hf_compare's helper says what)."""
    path = write(hf_model(state=128), tmp_path / "granite-state128.gguf")
    assert_vulkan_follows_the_cpu(path, ids(2), VOCAB, EVERY_TARGET)


def test_a_mixture_of_experts_granite_is_refused_in_one_line(tmp_path):
    """Granite 4's tiny and small sizes route to experts: refused by name
    until toy has an expert path (not a missing-tensor error)."""
    config = hf_model().config
    config.num_local_experts, config.num_experts_per_tok = 4, 2
    path = write(randomize(transformers.GraniteMoeHybridForCausalLM(config)), tmp_path / "moe.gguf")
    with pytest.raises(toy.ToyError, match="mixture-of-experts layers .* cannot be trained yet") as refused:
        toy.native.session.read_gguf_config(path)
    assert "\n" not in str(refused.value)


def test_instruct_and_dpo_run_on_granite_from_the_command_line(tmp_path, llama_cpp_models):
    """instruct with Granite 4's own chat template (every projection by
    default, rows as --packing auto lays them)
    and DPO, on a Q8_0 copy."""
    from cli_helpers import instruct_and_dpo

    template = (llama_cpp_models / "templates" / "ibm-granite-granite-4.0.jinja").read_text(encoding="utf-8")
    f32 = write(hf_model(), tmp_path / "f32.gguf", chat_template=template)
    model = quantize(f32, tmp_path / "granite-chat-q8_0.gguf", "Q8_0")
    # Granite 4's template opens with a system turn of its own: 233 tokens of GPT-2's cut
    config = instruct_and_dpo(model, tmp_path, seq=384)
    assert config["lora"]["targets"] == ["q", "k", "v", "o", "gate", "up", "down", "ssm_out", "ssm_in"]
