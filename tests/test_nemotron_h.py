"""NVIDIA's Nemotron-H (`nemotron_h`, dense: Nemotron Nano 9B/12B v2) as
llama.cpp ships it: every layer one sub-layer after its norm, Mamba-2,
attention without RoPE, or a feed-forward of relu squared with no gate. A
small random-weight transformers NemotronHForCausalLM, written to GGUF by
llama.cpp's own convert_hf_to_gguf.py (llama_cpp_convert.py), then run by
toy: logits and every weight's gradient against transformers; LoRA on
every projection on Q8_0 and Q4_K copies, whose adapter llama.cpp runs to
toy's logits; a full fine-tune llama.cpp runs; cached decoding. The
Mamba-2 mixer is Granite 4's (test_granitehybrid)."""

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
PATTERN = "M-*-M-"  # Nemotron's hybrid_override_pattern: M Mamba-2, * attention, - feed-forward
HF_TO_GGUF = {
    "model.embeddings.weight": "token_embd.weight",
    "model.norm_f.weight": "output_norm.weight",
    "lm_head.weight": "output.weight",
    "model.layers.{i}.norm.weight": "blk.{i}.attn_norm.weight",
    "model.layers.{i}.mixer.up_proj.weight": "blk.{i}.ffn_up.weight",
    "model.layers.{i}.mixer.down_proj.weight": "blk.{i}.ffn_down.weight",
    "model.layers.{i}.mixer.q_proj.weight": "blk.{i}.attn_q.weight",
    "model.layers.{i}.mixer.k_proj.weight": "blk.{i}.attn_k.weight",
    "model.layers.{i}.mixer.v_proj.weight": "blk.{i}.attn_v.weight",
    "model.layers.{i}.mixer.o_proj.weight": "blk.{i}.attn_output.weight",
    **mamba2_names("mixer"),
}
EVERY_TARGET = ("q", "k", "v", "o", "up", "down", "ssm_out", "ssm_in")
HEADS, KV_HEADS = 4, 2


def hf_model(hidden: int = 64, mamba_heads: int = 4, groups: int = 2, state: int = 16, eps: float = 1e-4):
    """A Nemotron-H of six layers (PATTERN). Mamba-2's inner width is twice
    the model's; the norms' epsilon away from the default so that reading
    it (attention.layer_norm_epsilon) is seen."""
    kinds = {"M": "linear_attention", "*": "full_attention", "-": "mlp"}
    config = transformers.NemotronHConfig(
        vocab_size=VOCAB,
        hidden_size=hidden,
        layers_block_type=[kinds[c] for c in PATTERN],
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        head_dim=hidden // HEADS,
        intermediate_size=2 * hidden,
        ssm_state_size=state,
        mamba_num_heads=mamba_heads,
        mamba_head_dim=2 * hidden // mamba_heads,
        n_groups=groups,
        conv_kernel=4,
        expand=2,
        chunk_size=8,
        layer_norm_epsilon=eps,
        max_position_embeddings=128,
        tie_word_embeddings=False,
        bos_token_id=VOCAB - 1,
        eos_token_id=VOCAB - 1,
        pad_token_id=0,
    )
    return randomize(transformers.NemotronHForCausalLM(config))


def write(model, path, **kwargs):
    """The config as NVIDIA's dense checkpoints carry it: the layers as
    hybrid_override_pattern with num_hidden_layers, and no MoE keys. The
    converter reads any num_experts_per_tok as the MoE family, and reads
    the config through transformers when it can, which puts one back: an
    unknown model_type makes it read config.json as it is. (An expert group
    count, from n_group, stops llama.cpp's loader.)"""
    moe_keys = ("num_experts_per_tok", "n_routed_experts", "n_group", "topk_group")
    config = {
        "model_type": "nemotron_h_checkpoint",
        "hybrid_override_pattern": PATTERN,
        "num_hidden_layers": len(PATTERN),
        "layers_block_type": None,
        **dict.fromkeys(moe_keys),
    }
    return hf_to_gguf(model, path, config_json=config, **kwargs)


@pytest.fixture(scope="module")
def nemotron(tmp_path_factory):
    """(the transformers model, its f32 GGUF by llama.cpp's converter)"""
    model = hf_model()
    return model, write(model, tmp_path_factory.mktemp("nemotron") / "nemotron-f32.gguf")


def ids(seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB - 1, (1, T + 1)).astype(np.int32)


def test_the_config_read_from_the_file_tells_the_three_layer_kinds_apart(nemotron):
    _, path = nemotron
    cfg = toy.native.session.read_gguf_config(path)
    assert (cfg.layer_kinds, cfg.one_sublayer, cfg.ffn_relu_sq, cfg.d_ff) == ("mfafmf", True, True, 128)
    assert (cfg.conv_kernel, cfg.ssm_state, cfg.ssm_groups, cfg.ssm_heads, cfg.ssm_inner) == (4, 16, 2, 4, 128)
    assert cfg.no_rope_period == 1 and cfg.norm_eps == pytest.approx(1e-4)


def test_lora_targets_are_what_each_layer_has(nemotron):
    """An 'f' layer has up and down (no gate), an attention layer q k v o,
    a Mamba-2 layer ssm_in and ssm_out."""
    _, path = nemotron
    cfg = toy.native.session.read_gguf_config(path)
    mamba, ffn = ("ssm_out", "ssm_in"), ("up", "down")
    assert toy.native.session.layer_targets(cfg) == [mamba, ffn, ("q", "k", "v", "o"), ffn, mamba, ffn]


def test_logits_and_every_gradient_match_transformers(nemotron):
    """Each gradient in the layout llama.cpp's converter stores its weight
    (mamba2_as_stored says how)."""
    model, path = nemotron
    assert_toy_matches(model, path, ids(), HF_TO_GGUF, to_gguf=mamba2_as_stored(model, 2, HEADS, KV_HEADS))


def test_a_full_fine_tune_saves_a_model_llama_cpp_runs_to_our_logits(nemotron, tmp_path):
    _, path = nemotron
    batch = ids(3)
    assert_full_fine_tune_runs_in_llama_cpp(path, batch, tmp_path / "full.gguf")


@pytest.mark.parametrize("kind", ["F32", "Q8_0", "Q4_K"])
def test_lora_trains_and_llama_cpp_runs_its_adapter_to_our_logits(tmp_path, kind):
    """Every projection a layer has. Q4_K at a width of 256 (tensor_types
    shows the k-quants)."""
    wide = kind == "Q4_K"
    model = hf_model(hidden=256, mamba_heads=8, groups=2, state=32) if wide else hf_model()
    f32 = write(model, tmp_path / "f32.gguf")
    path = f32 if kind == "F32" else quantize(f32, tmp_path / f"nemotron-{kind}.gguf", kind)
    if wide:
        types = tensor_types(path)  # llama.cpp's Q4_K mix keeps some matrices at Q5_K and Q6_K
        assert types["blk.1.ffn_up.weight"] == "Q4_K" and types["blk.0.ssm_out.weight"] == "Q4_K"
    assert_adapter_runs_in_llama_cpp(path, ids(2), tmp_path / "adapter.gguf", EVERY_TARGET, exact=kind == "F32")


@pytest.mark.vulkan
def test_lora_and_cached_decoding_on_vulkan_follow_the_cpu(tmp_path):
    """As Granite 4's (test_granitehybrid): Nemotron-H's layers on Vulkan."""
    path = write(hf_model(state=128), tmp_path / "nemotron-state128.gguf")
    assert_vulkan_follows_the_cpu(path, ids(2), VOCAB, EVERY_TARGET)


def test_cached_decoding_carries_the_states_past_the_feed_forward_layers(nemotron):
    """Generation's decode: a prompt at once, then a token at a time, the
    Mamba-2 layers continuing from their states, the attention layer from
    its cache, the feed-forward layers keeping nothing: transformers'
    logits over the whole sequence."""
    model, path = nemotron
    tokens = ids(4)[0]
    assert_cached_decoding_matches(path, tokens, hf_logits(model, tokens[None]), prefill=5)


def test_the_mixture_of_experts_nemotron_is_refused_by_name(tmp_path):
    """Nemotron 3 Nano and Super route to experts: llama.cpp's converter
    writes them as nemotron_h_moe, refused in one line."""
    model = hf_model()
    config = {"model_type": "nemotron_h_checkpoint", "hybrid_override_pattern": "M-*-M-", "num_hidden_layers": 6}
    path = hf_to_gguf(model, tmp_path / "moe.gguf", config_json={**config, "layers_block_type": None})
    with pytest.raises(toy.ToyError, match="'nemotron_h_moe' cannot be trained yet: its mixture-of-experts") as e:
        toy.native.session.read_gguf_config(path)
    assert "\n" not in str(e.value)


def test_instruct_and_dpo_run_on_nemotron_from_the_command_line(tmp_path, llama_cpp_models):
    """instruct with Nemotron Nano v2's own chat template (every projection
    by default) and DPO, on a Q8_0 copy."""
    from cli_helpers import instruct_and_dpo

    template = (llama_cpp_models / "templates" / "NVIDIA-Nemotron-Nano-v2.jinja").read_text(encoding="utf-8")
    f32 = write(hf_model(), tmp_path / "f32.gguf", chat_template=template)
    model = quantize(f32, tmp_path / "nemotron-chat-q8_0.gguf", "Q8_0")
    config = instruct_and_dpo(model, tmp_path, seq=384)
    assert config["lora"]["targets"] == ["q", "k", "v", "o", "up", "down", "ssm_out", "ssm_in"]
