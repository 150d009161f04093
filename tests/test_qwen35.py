"""Qwen 3.5 and 3.6 dense (`qwen35`: Gated DeltaNet linear attention in three
of every four layers, gated attention in the rest) as llama.cpp ships it: a
small random-weight transformers Qwen3_5ForCausalLM written to GGUF by
llama.cpp's own convert_hf_to_gguf.py (llama_cpp_convert.py), then run by
toy: logits and every weight's gradient against transformers; LoRA on the
delta-net and attention projections on Q8_0 and Q4_K copies, whose adapter
llama.cpp runs to toy's logits. The delta rule's backward is toy's
(tests/test_recurrent_ops.py holds it alone), the convolution's vendor
patch 0015, the gates' sigmoid patch 0017."""

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
    randomize,
    toy_logits,
)
from llama_cpp_convert import hf_to_gguf, quantize, tensor_types

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

T = 12
VOCAB = 272  # llama_cpp_convert's smallest GPT-2 cut
KINDS = ["linear_attention"] * 3 + ["full_attention"]
HF_TO_GGUF = {
    "model.embed_tokens.weight": "token_embd.weight",
    "model.norm.weight": "output_norm.weight",
    "lm_head.weight": "output.weight",
    "model.layers.{i}.input_layernorm.weight": "blk.{i}.attn_norm.weight",
    "model.layers.{i}.post_attention_layernorm.weight": "blk.{i}.post_attention_norm.weight",
    "model.layers.{i}.mlp.gate_proj.weight": "blk.{i}.ffn_gate.weight",
    "model.layers.{i}.mlp.up_proj.weight": "blk.{i}.ffn_up.weight",
    "model.layers.{i}.mlp.down_proj.weight": "blk.{i}.ffn_down.weight",
    "model.layers.{i}.self_attn.q_proj.weight": "blk.{i}.attn_q.weight",
    "model.layers.{i}.self_attn.k_proj.weight": "blk.{i}.attn_k.weight",
    "model.layers.{i}.self_attn.v_proj.weight": "blk.{i}.attn_v.weight",
    "model.layers.{i}.self_attn.o_proj.weight": "blk.{i}.attn_output.weight",
    "model.layers.{i}.self_attn.q_norm.weight": "blk.{i}.attn_q_norm.weight",
    "model.layers.{i}.self_attn.k_norm.weight": "blk.{i}.attn_k_norm.weight",
    "model.layers.{i}.linear_attn.in_proj_qkv.weight": "blk.{i}.attn_qkv.weight",
    "model.layers.{i}.linear_attn.in_proj_z.weight": "blk.{i}.attn_gate.weight",
    "model.layers.{i}.linear_attn.in_proj_b.weight": "blk.{i}.ssm_beta.weight",
    "model.layers.{i}.linear_attn.in_proj_a.weight": "blk.{i}.ssm_alpha.weight",
    "model.layers.{i}.linear_attn.dt_bias": "blk.{i}.ssm_dt.bias",
    "model.layers.{i}.linear_attn.A_log": "blk.{i}.ssm_a",
    "model.layers.{i}.linear_attn.conv1d.weight": "blk.{i}.ssm_conv1d.weight",
    "model.layers.{i}.linear_attn.norm.weight": "blk.{i}.ssm_norm.weight",
    "model.layers.{i}.linear_attn.out_proj.weight": "blk.{i}.ssm_out.weight",
}
EVERY_TARGET = ("q", "k", "v", "o", "gate", "up", "down", "ssm_qkv", "ssm_gate", "ssm_out")


def hf_model(hidden: int = 64, head: int = 16, key_heads: int = 2, value_heads: int = 2):
    """A Qwen 3.5 of four layers (three delta-net, one attention). A head of
    16 rotates 4 dims (partial_rotary_factor 0.25), in mrope sections [1, 1,
    0] (the default sections assume 64); text positions make MRoPE plain."""
    config = transformers.Qwen3_5TextConfig(
        vocab_size=VOCAB,
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=len(KINDS),
        layer_types=KINDS,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=head,
        linear_conv_kernel_dim=4,
        linear_key_head_dim=head,
        linear_value_head_dim=head,
        linear_num_key_heads=key_heads,
        linear_num_value_heads=value_heads,
        rope_parameters=dict(
            rope_type="default",
            rope_theta=10000.0,
            partial_rotary_factor=0.25,
            mrope_section=[1, 1, 0] if head == 16 else [11, 11, 10],
            mrope_interleaved=True,
        ),
        max_position_embeddings=128,
        tie_word_embeddings=False,
        bos_token_id=VOCAB - 1,
        eos_token_id=VOCAB - 1,
    )
    return randomize(transformers.Qwen3_5ForCausalLM(config))


def write(model, path):
    return hf_to_gguf(model, path, converter_args=("--no-mtp",))


@pytest.fixture(scope="module")
def qwen35(tmp_path_factory):
    """(the transformers model, its f32 GGUF by llama.cpp's converter)"""
    model = hf_model()
    return model, write(model, tmp_path_factory.mktemp("qwen35") / "qwen35-f32.gguf")


def ids(seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB - 1, (1, T + 1)).astype(np.int32)


def test_the_config_read_from_the_file_marks_the_delta_net_layers(qwen35):
    _, path = qwen35
    cfg = toy.native.session.read_gguf_config(path)
    assert (cfg.layer_kinds, cfg.conv_kernel, cfg.ssm_state, cfg.ssm_groups, cfg.ssm_heads) == ("ddda", 4, 16, 2, 2)
    assert cfg.attn_gate and cfg.qk_norm and cfg.rope_neox and cfg.rope_dim == 4


def test_logits_and_every_gradient_match_transformers(qwen35):
    """The converter stores A_log as ssm_a = -exp(A_log) (its gradient is
    A_log's over ssm_a) and conv1d [C, 1, K] as [C, K]; its norms' +1 leaves
    their gradients as they are."""
    model, path = qwen35
    a_logs = {n: p.detach().numpy() for n, p in model.named_parameters() if n.endswith("A_log")}

    def as_stored(name: str, grad: np.ndarray) -> np.ndarray:
        if name.endswith(".ssm_a"):
            a_log = a_logs[f"model.layers.{name.split('.')[1]}.linear_attn.A_log"]
            return grad / -np.exp(a_log)
        return grad.reshape(grad.shape[0], -1) if name.endswith("ssm_conv1d.weight") else grad

    assert_toy_matches(model, path, ids(), HF_TO_GGUF, to_gguf=as_stored)


def test_a_full_fine_tune_saves_a_model_llama_cpp_runs_to_our_logits(qwen35, tmp_path):
    """Every weight trained (ssm_a itself, as the file stores it) and the
    model written back: llama.cpp's logits on it are toy's after training."""
    _, path = qwen35
    batch = ids(3)
    assert_full_fine_tune_runs_in_llama_cpp(path, batch, tmp_path / "full.gguf")


def test_more_value_heads_than_key_heads_read_as_llama_cpp_tiles_them(tmp_path):
    """Value head j reads key head j % groups in llama.cpp's layout (the
    converter reorders transformers' grouped heads): logits as transformers'."""
    model = hf_model(key_heads=2, value_heads=4)
    path = write(model, tmp_path / "qwen35-gqa.gguf")
    batch = ids(5)[:, :-1]
    expected = hf_logits(model, batch)
    ours = toy_logits(path, batch)
    np.testing.assert_allclose(ours, expected, atol=1e-4 * np.abs(expected).max())


@pytest.mark.parametrize("kind", ["F32", "Q8_0", "Q4_K"])
def test_lora_trains_and_llama_cpp_runs_its_adapter_to_our_logits(tmp_path, kind):
    """Every projection a layer has. On the f32 file llama.cpp's logits with
    our adapter are ours to float rounding. On quantized copies llama.cpp
    rounds each quantized product's activations to 8 bits, toy not always,
    and the delta rule carries that along the sequence (on this random
    model the two bases differ by about a tenth of the largest logit at
    Q8_0): there the adapted logits correlate, and llama.cpp's with the
    adapter are ten times closer to ours than its own without. Q4_K at
    widths of 256 (tensor_types shows the k-quants), with more value heads
    than key heads."""
    wide = kind == "Q4_K"
    # 4 value heads of 64: ssm_out's rows 256 wide as well
    model = hf_model(hidden=256, head=64, value_heads=4) if wide else hf_model()
    f32 = write(model, tmp_path / "f32.gguf")
    path = f32 if kind == "F32" else quantize(f32, tmp_path / f"qwen35-{kind}.gguf", kind)
    if wide:
        types = tensor_types(path)  # llama.cpp's Q4_K mix keeps some matrices at Q5_K and Q6_K
        assert types["blk.0.ssm_out.weight"] == "Q4_K" and types["blk.0.attn_qkv.weight"] in ("Q4_K", "Q5_K")
    assert_adapter_runs_in_llama_cpp(path, ids(2), tmp_path / "adapter.gguf", EVERY_TARGET, exact=kind == "F32")


def test_cached_decoding_carries_the_delta_net_and_convolution_states(qwen35):
    """Generation's decode on ggml's own GATED_DELTA_NET: a prompt at once,
    then a token at a time, each delta-net layer continuing from its two
    states (the convolution's last inputs, the delta rule's S), as
    transformers' logits over the whole sequence."""
    model, path = qwen35
    tokens = ids(4)[0]
    assert_cached_decoding_matches(path, tokens, hf_logits(model, tokens[None]), prefill=5)


@pytest.mark.vulkan
def test_lora_and_cached_decoding_on_vulkan_follow_the_cpu(qwen35):
    """The delta rule's training op on Vulkan (vendor patch 0018,
    gated_delta_net_train.comp) and ggml's own GATED_DELTA_NET in the
    decoder: the losses of five LoRA steps on every target and the decoded
    logits the CPU's, to float rounding."""
    assert_vulkan_follows_the_cpu(qwen35[1], ids(2), VOCAB, EVERY_TARGET)


def test_instruct_and_dpo_run_on_qwen35_from_the_command_line(tmp_path, llama_cpp_models):
    """instruct with Qwen 3.5's own chat template (every projection by
    default, rows as
    --packing auto lays them) and DPO, on a Q8_0 copy."""
    from cli_helpers import instruct_and_dpo

    template = (llama_cpp_models / "templates" / "Qwen3.5-4B.jinja").read_text(encoding="utf-8")
    f32 = hf_to_gguf(hf_model(), tmp_path / "f32.gguf", converter_args=("--no-mtp",), chat_template=template)
    model = quantize(f32, tmp_path / "qwen35-chat-q8_0.gguf", "Q8_0")
    config = instruct_and_dpo(model, tmp_path, seq=128)
    assert config["lora"]["targets"] == list(EVERY_TARGET)
