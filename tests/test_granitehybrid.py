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


# Granite 4's mixture-of-experts sizes (tiny, small): the feed-forward is the routed
# experts (transformers' gate_up_proj: gate's rows, then up's) beside shared_mlp, which
# the converter writes as a shared expert without a gate
MOE_TO_GGUF = {
    **{hf: gguf for hf, gguf in HF_TO_GGUF.items() if "shared_mlp" not in hf},
    "model.layers.{i}.block_sparse_moe.router.weight": "blk.{i}.ffn_gate_inp.weight",
    "model.layers.{i}.block_sparse_moe.experts.gate_up_proj": (
        "blk.{i}.ffn_gate_exps.weight",
        "blk.{i}.ffn_up_exps.weight",
    ),
    "model.layers.{i}.block_sparse_moe.experts.down_proj": "blk.{i}.ffn_down_exps.weight",
    "model.layers.{i}.shared_mlp.input_linear.weight": ("blk.{i}.ffn_gate_shexp.weight", "blk.{i}.ffn_up_shexp.weight"),
    "model.layers.{i}.shared_mlp.output_linear.weight": "blk.{i}.ffn_down_shexp.weight",
}
MOE_TARGETS = ("q", "k", "v", "o", "ssm_out", "ssm_in", "gate_shexp", "up_shexp", "down_shexp")
EXPERTS = ("gate_exps", "up_exps", "down_exps")


def moe_model(router_scale: float = 10.0):
    """hf_model's with 4 experts, 2 a token, in every layer; the router x10,
    so that a token's second and third experts are rarely within a quantized
    file's rounding of each other (test_qwen3moe)."""
    config = hf_model().config
    config.num_local_experts, config.num_experts_per_tok = 4, 2
    model = randomize(transformers.GraniteMoeHybridForCausalLM(config))
    with torch.no_grad():
        for layer in model.model.layers:
            layer.block_sparse_moe.router.weight.mul_(router_scale)
    return model


@pytest.fixture(scope="module")
def granite_moe(tmp_path_factory):
    """(the transformers MoE model, its f32 GGUF by llama.cpp's converter)"""
    model = moe_model()
    return model, write(model, tmp_path_factory.mktemp("granite_moe") / "granite-moe-f32.gguf")


def test_a_mixture_of_experts_granite_reads_its_experts_and_shared_expert(granite_moe):
    """The experts' width is feed_forward_length, as llama.cpp reads it; the
    shared expert has no gate; LoRA's `all` is every dense projection."""
    from toy.native.session import resolve_targets

    _, path = granite_moe
    cfg = toy.native.session.read_gguf_config(path)
    assert (cfg.n_experts, cfg.n_experts_used, cfg.d_ff_exp, cfg.experts_norm) == (4, 2, 128, True)
    assert (cfg.d_ff_shexp, cfg.shexp_gate, cfg.layer_kinds) == (128, False, "mmam")
    assert set(resolve_targets(("all",), cfg)) == set(MOE_TARGETS)


def test_a_mixture_of_experts_granite_matches_transformers(tmp_path):
    """Logits and every gradient: the router's, the experts' and the shared
    expert's too (the router unscaled: x10 carries float32's rounding of its
    inputs past the tolerance, as in test_qwen35moe)."""
    model = moe_model(router_scale=1.0)
    path = write(model, tmp_path / "granite-moe-f32.gguf")
    assert_toy_matches(model, path, ids(), MOE_TO_GGUF, to_gguf=mamba2_as_stored(model, 2, HEADS, KV_HEADS))


def test_lora_on_a_mixture_of_experts_granite_runs_in_llama_cpp(granite_moe, tmp_path):
    """Every dense projection and a pair per expert on the F32 file: llama.cpp
    runs the adapter to toy's logits."""
    _, path = granite_moe
    assert_adapter_runs_in_llama_cpp(path, ids(2), tmp_path / "adapter.gguf", MOE_TARGETS + EXPERTS, exact=True)


def test_lora_on_a_q8_0_mixture_of_experts_granite_runs_in_llama_cpp_routed_alike(granite_moe, tmp_path):
    from hf_compare import llama_cpp_logits, trained_adapter
    from test_qwen3moe import assert_routed_alike

    _, f32 = granite_moe
    path = quantize(f32, tmp_path / "granite-moe-q8_0.gguf", "Q8_0")
    batch = ids(2)
    _, ours = trained_adapter(path, batch, tmp_path / "adapter.gguf", targets=MOE_TARGETS)
    theirs = llama_cpp_logits(path, batch[0, :-1], tmp_path / "adapter.gguf", f32_cache=True)
    assert_routed_alike(theirs, ours, llama_cpp_logits(path, batch[0, :-1], f32_cache=True))


def test_a_mixture_of_experts_granite_decodes_as_transformers(granite_moe):
    model, path = granite_moe
    tokens = ids(4)[0]
    assert_cached_decoding_matches(path, tokens, hf_logits(model, tokens[None]), prefill=5)


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
