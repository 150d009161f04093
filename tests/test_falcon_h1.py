"""TII's Falcon-H1 (`falcon-h1`) as llama.cpp ships it: every layer runs
attention (NEOX RoPE) and Mamba-2 side by side on one normed input, adds
both to the residual, then a SwiGLU feed-forward. A small random-weight
transformers FalconH1ForCausalLM, with every muP multiplier away from 1,
written to GGUF by llama.cpp's own convert_hf_to_gguf.py (which folds the
multipliers into the weights), then run by toy: logits and every weight's
gradient against transformers, with Mamba-2's grouped norm and without it
(mamba_rms_norm, which the released checkpoints turn off); LoRA on every
projection on Q8_0 and Q4_K copies, whose adapter llama.cpp runs to toy's
logits; a full fine-tune llama.cpp runs; cached decoding."""

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
    gguf_names,
    hf_logits,
    mamba2_as_stored,
    mamba2_names,
    randomize,
)
from llama_cpp_convert import hf_to_gguf, quantize, tensor_types

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
gguf = pytest.importorskip("gguf")

T = 12
VOCAB = 272  # llama_cpp_convert's smallest GPT-2 cut
HF_TO_GGUF = {
    "model.embed_tokens.weight": "token_embd.weight",
    "model.final_layernorm.weight": "output_norm.weight",
    "lm_head.weight": "output.weight",
    "model.layers.{i}.input_layernorm.weight": "blk.{i}.attn_norm.weight",
    "model.layers.{i}.pre_ff_layernorm.weight": "blk.{i}.ffn_norm",
    "model.layers.{i}.feed_forward.gate_proj.weight": "blk.{i}.ffn_gate.weight",
    "model.layers.{i}.feed_forward.up_proj.weight": "blk.{i}.ffn_up.weight",
    "model.layers.{i}.feed_forward.down_proj.weight": "blk.{i}.ffn_down.weight",
    "model.layers.{i}.self_attn.q_proj.weight": "blk.{i}.attn_q.weight",
    "model.layers.{i}.self_attn.k_proj.weight": "blk.{i}.attn_k.weight",
    "model.layers.{i}.self_attn.v_proj.weight": "blk.{i}.attn_v.weight",
    "model.layers.{i}.self_attn.o_proj.weight": "blk.{i}.attn_output.weight",
    **mamba2_names("mamba"),
}
EVERY_TARGET = ("q", "k", "v", "o", "gate", "up", "down", "ssm_out", "ssm_in")
HEADS, KV_HEADS, GROUPS = 4, 2, 2


def hf_model(mamba_norm: bool, hidden: int = 64, mamba_heads: int = 4, state: int = 16, layers: int = 3):
    """A Falcon-H1 of three layers; Mamba-2's inner width twice the model's;
    each muP multiplier (embedding, head, MLP, attention in and out, key,
    SSM in and out, the five parts of the SSM's projection) away from 1."""
    config = transformers.FalconH1Config(
        vocab_size=VOCAB,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        head_dim=hidden // HEADS,
        intermediate_size=2 * hidden,
        mamba_d_ssm=2 * hidden,
        mamba_n_heads=mamba_heads,
        mamba_d_head=2 * hidden // mamba_heads,
        mamba_n_groups=GROUPS,
        mamba_d_state=state,
        mamba_d_conv=4,
        mamba_chunk_size=8,
        mamba_rms_norm=mamba_norm,
        mamba_norm_before_gate=False,  # llama.cpp normalizes y silu(z), as these checkpoints do
        lm_head_multiplier=0.5,
        embedding_multiplier=2.0,
        mlp_multipliers=[0.8, 1.2],
        key_multiplier=0.7,
        attention_in_multiplier=1.1,
        attention_out_multiplier=0.9,
        ssm_in_multiplier=0.9,
        ssm_out_multiplier=1.1,
        ssm_multipliers=[1.0, 0.9, 1.1, 0.8, 1.2],
        max_position_embeddings=512,  # instruct's --seq 256 fits
        tie_word_embeddings=False,
        bos_token_id=VOCAB - 1,
        eos_token_id=VOCAB - 1,
        pad_token_id=0,
    )
    return randomize(transformers.FalconH1ForCausalLM(config))


@pytest.fixture(scope="module", params=[True, False], ids=["ssm-norm", "no-ssm-norm"])
def falcon(request, tmp_path_factory):
    """(the transformers model, its f32 GGUF by llama.cpp's converter)"""
    model = hf_model(mamba_norm=request.param)
    return model, hf_to_gguf(model, tmp_path_factory.mktemp("falcon") / "falcon-f32.gguf")


def ids(seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB - 1, (1, T + 1)).astype(np.int32)


def test_the_config_read_from_the_file_runs_both_mixers_in_every_layer(falcon):
    model, path = falcon
    cfg = toy.native.session.read_gguf_config(path)
    assert (cfg.layer_kinds, cfg.rope_neox, cfg.n_kv_heads, cfg.d_ff) == ("ppp", True, KV_HEADS, 128)
    assert (cfg.conv_kernel, cfg.ssm_state, cfg.ssm_groups, cfg.ssm_heads, cfg.ssm_inner) == (4, 16, GROUPS, 4, 128)
    assert cfg.mamba_no_norm == (not model.config.mamba_rms_norm)
    assert toy.native.session.lora_targets_of(cfg) == EVERY_TARGET


def test_the_released_files_pre_tokenizer_is_llama_3s():
    """TII's Falcon-H1 GGUFs carry tokenizer.ggml.pre "falcon-h1", which
    llama.cpp splits as Llama 3 (its llama-vocab.cpp); toy reads it so."""
    from toy.text.tokenizer import PRE_TOKENIZERS

    assert PRE_TOKENIZERS["falcon-h1"] is PRE_TOKENIZERS["llama-bpe"]


def test_logits_and_every_gradient_match_transformers(falcon):
    """The converter folds each muP multiplier into a weight, so the
    file's weight is transformers' times a factor (per row of ssm_in) and
    its gradient transformers' over that factor: the factor is read as the
    file's weight over transformers'."""
    model, path = falcon
    stored = {t.name: np.asarray(t.data) for t in gguf.GGUFReader(path).tensors}
    weights = {}
    for name, p in model.named_parameters():
        if name.endswith("proj.weight") or name in ("model.embed_tokens.weight", "lm_head.weight"):
            weights[name] = p.detach().numpy()
    layout = mamba2_as_stored(model, GROUPS, HEADS, KV_HEADS)
    folded = {}
    for name, weight in weights.items():
        (gguf_name,) = gguf_names(name, HF_TO_GGUF)
        folded[gguf_name] = stored[gguf_name] / weight

    def as_stored(name: str, grad: np.ndarray) -> np.ndarray:
        grad = layout(name, grad) if name.endswith((".ssm_a", ".ssm_d", "conv1d.weight", "norm.weight")) else grad
        return grad / folded[name] if name in folded else grad

    assert_toy_matches(model, path, ids(), HF_TO_GGUF, to_gguf=as_stored)


def test_a_full_fine_tune_saves_a_model_llama_cpp_runs_to_our_logits(falcon, tmp_path):
    _, path = falcon
    assert_full_fine_tune_runs_in_llama_cpp(path, ids(3), tmp_path / "full.gguf")


@pytest.mark.parametrize("kind", ["F32", "Q8_0", "Q4_K"])
def test_lora_trains_and_llama_cpp_runs_its_adapter_to_our_logits(tmp_path, kind):
    """Every projection; Q4_K at a width of 256 (tensor_types shows the
    k-quants), without the grouped norm as the released checkpoints."""
    wide = kind == "Q4_K"
    model = hf_model(False, hidden=256, mamba_heads=8, state=32) if wide else hf_model(True)
    f32 = hf_to_gguf(model, tmp_path / "f32.gguf")
    path = f32 if kind == "F32" else quantize(f32, tmp_path / f"falcon-{kind}.gguf", kind)
    if wide:
        types = tensor_types(path)  # llama.cpp's Q4_K mix keeps some matrices at Q5_K and Q6_K
        assert types["blk.0.ssm_out.weight"] == "Q4_K" and types["blk.0.attn_q.weight"] == "Q4_K"
    assert_adapter_runs_in_llama_cpp(path, ids(2), tmp_path / "adapter.gguf", EVERY_TARGET, exact=kind == "F32")


@pytest.mark.vulkan
def test_lora_and_cached_decoding_on_vulkan_follow_the_cpu(tmp_path):
    """As Granite 4's (test_granitehybrid): Falcon-H1's layers on Vulkan."""
    path = hf_to_gguf(hf_model(mamba_norm=True, state=128), tmp_path / "falcon-state128.gguf")
    assert_vulkan_follows_the_cpu(path, ids(2), VOCAB, EVERY_TARGET)


def test_cached_decoding_carries_the_kv_cache_and_the_states_of_each_layer(falcon):
    """Generation's decode: a prompt at once, then a token at a time, each
    layer's attention reading its KV cache and its Mamba-2 continuing from
    its two states, as transformers' logits over the whole sequence."""
    model, path = falcon
    tokens = ids(4)[0]
    assert_cached_decoding_matches(path, tokens, hf_logits(model, tokens[None]), prefill=5)


def test_instruct_and_dpo_run_on_falcon_h1_from_the_command_line(tmp_path):
    """instruct (every projection by default; llama.cpp ships no Falcon-H1
    template, so a ChatML one) and DPO, on a Q8_0 copy."""
    from cli_helpers import instruct_and_dpo

    chatml = (
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    f32 = hf_to_gguf(hf_model(False), tmp_path / "f32.gguf", chat_template=chatml)
    model = quantize(f32, tmp_path / "falcon-chat-q8_0.gguf", "Q8_0")
    config = instruct_and_dpo(model, tmp_path, seq=256)
    assert config["lora"]["targets"] == list(EVERY_TARGET)
