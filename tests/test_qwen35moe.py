"""Qwen 3.5 and 3.6 MoE (`qwen35moe`: Qwen3.6-35B-A3B and its kin) as
llama.cpp ships it: Qwen 3.5's layers (Gated DeltaNet in three of four,
gated attention in the rest: test_qwen35.py) with every feed-forward a
mixture of SwiGLU experts, the router's top k rescaled to sum to 1, beside
a shared expert every token goes through, gated by sigmoid(w x). A small
random-weight transformers Qwen3_5MoeForCausalLM, written to GGUF by
llama.cpp's own convert_hf_to_gguf.py, then run by toy: the config, logits
and every gradient (router, experts, shared expert and its gate) against
transformers; LoRA on every projection but the experts, and on the experts
too, its adapter run by llama.cpp to toy's logits on F32 and Q8_0; a full
fine-tune llama.cpp runs; cached decoding."""

from __future__ import annotations

import numpy as np
import pytest

import toy
from hf_compare import (
    assert_adapter_runs_in_llama_cpp,
    assert_cached_decoding_matches,
    assert_full_fine_tune_runs_in_llama_cpp,
    assert_toy_matches,
    hf_logits,
    llama_cpp_logits,
    randomize,
    trained_adapter,
)
from llama_cpp_convert import hf_to_gguf, quantize
from test_qwen35 import HF_TO_GGUF as QWEN35_NAMES
from test_qwen35 import KINDS

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

T = 12
VOCAB = 272
HF_TO_GGUF = {
    **QWEN35_NAMES,
    "model.layers.{i}.mlp.gate.weight": "blk.{i}.ffn_gate_inp.weight",
    "model.layers.{i}.mlp.experts.gate_up_proj": ("blk.{i}.ffn_gate_exps.weight", "blk.{i}.ffn_up_exps.weight"),
    "model.layers.{i}.mlp.experts.down_proj": "blk.{i}.ffn_down_exps.weight",
    "model.layers.{i}.mlp.shared_expert.gate_proj.weight": "blk.{i}.ffn_gate_shexp.weight",
    "model.layers.{i}.mlp.shared_expert.up_proj.weight": "blk.{i}.ffn_up_shexp.weight",
    "model.layers.{i}.mlp.shared_expert.down_proj.weight": "blk.{i}.ffn_down_shexp.weight",
    "model.layers.{i}.mlp.shared_expert_gate.weight": "blk.{i}.ffn_gate_inp_shexp.weight",
}
# every projection a layer has but the routed experts ("all"), and with them
ALL = ("q", "k", "v", "o", "ssm_qkv", "ssm_gate", "ssm_out", "gate_shexp", "up_shexp", "down_shexp")
EXPERTS = ("gate_exps", "up_exps", "down_exps")


def hf_model(router_scale: float = 10.0):
    """Four layers (three delta-net, one attention), 8 experts of 32 (2 a
    token) and a shared expert of 48; the router's weights times
    router_scale (a decisive router: test_qwen3moe.hf_model says why)."""
    config = transformers.Qwen3_5MoeTextConfig(
        vocab_size=VOCAB,
        hidden_size=64,
        num_hidden_layers=len(KINDS),
        layer_types=KINDS,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        linear_conv_kernel_dim=4,
        linear_key_head_dim=16,
        linear_value_head_dim=16,
        linear_num_key_heads=2,
        linear_num_value_heads=2,
        moe_intermediate_size=32,
        shared_expert_intermediate_size=48,
        num_experts=8,
        num_experts_per_tok=2,
        rope_parameters=dict(
            rope_type="default",
            rope_theta=10000.0,
            partial_rotary_factor=0.25,
            mrope_section=[1, 1, 0],
            mrope_interleaved=True,
        ),
        max_position_embeddings=128,
        tie_word_embeddings=False,
        bos_token_id=VOCAB - 1,
        eos_token_id=VOCAB - 1,
    )
    model = randomize(transformers.Qwen3_5MoeForCausalLM(config))
    with torch.no_grad():
        for layer in model.model.layers:
            layer.mlp.gate.weight.mul_(router_scale)
    return model


def write(model, path):
    return hf_to_gguf(model, path, converter_args=("--no-mtp",))


@pytest.fixture(scope="module")
def qwen35moe(tmp_path_factory):
    """(the transformers model, its f32 GGUF by llama.cpp's converter)"""
    model = hf_model()
    return model, write(model, tmp_path_factory.mktemp("qwen35moe") / "qwen35moe-f32.gguf")


def ids(seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB - 1, (1, T + 1)).astype(np.int32)


def test_the_config_has_the_delta_net_layers_the_experts_and_the_shared_one(qwen35moe):
    _, path = qwen35moe
    cfg = toy.native.session.read_gguf_config(path)
    assert (cfg.layer_kinds, cfg.n_experts, cfg.n_experts_used, cfg.d_ff_exp, cfg.d_ff_shexp) == ("ddda", 8, 2, 32, 48)
    assert cfg.experts_norm and cfg.attn_gate
    targets = toy.native.session.layer_targets(cfg)
    assert set(targets[0]) == {"ssm_qkv", "ssm_gate", "ssm_out", "gate_shexp", "up_shexp", "down_shexp", *EXPERTS}
    assert set(targets[3]) == {"q", "k", "v", "o", "gate_shexp", "up_shexp", "down_shexp", *EXPERTS}
    assert toy.native.session.resolve_targets(("all",), cfg) == ALL


def test_logits_and_every_gradient_match_transformers(tmp_path):
    """The router's, every expert's, the shared expert's and its gate's
    gradients too (a full fine-tune trains them all); the converter's own
    rewrites of Qwen 3.5's tensors as test_qwen35 undoes them. The router as
    transformers made it: a x10 router's sharp softmax carries float32's
    rounding of the chunked delta rule (transformers') against the
    sequential one (toy's) past 1e-4 of a gradient, on an element or two."""
    model = hf_model(router_scale=1.0)
    path = write(model, tmp_path / "qwen35moe.gguf")
    a_logs = {n: p.detach().numpy() for n, p in model.named_parameters() if n.endswith("A_log")}

    def as_stored(name: str, grad: np.ndarray) -> np.ndarray:
        if name.endswith(".ssm_a"):
            return grad / -np.exp(a_logs[f"model.layers.{name.split('.')[1]}.linear_attn.A_log"])
        if name.endswith("ssm_conv1d.weight"):
            return grad.reshape(grad.shape[0], -1)
        return grad.reshape(-1) if name.endswith("ffn_gate_inp_shexp.weight") else grad

    assert_toy_matches(model, path, ids(), HF_TO_GGUF, to_gguf=as_stored)


def test_a_full_fine_tune_saves_a_model_llama_cpp_runs_to_our_logits(qwen35moe, tmp_path):
    _, path = qwen35moe
    assert_full_fine_tune_runs_in_llama_cpp(path, ids(3), tmp_path / "full.gguf")


@pytest.mark.parametrize("targets", [ALL, ("q", "ssm_qkv", *EXPERTS)])
def test_lora_trains_and_llama_cpp_runs_its_adapter_to_our_logits(qwen35moe, tmp_path, targets):
    """Every projection but the routed experts ("all": the shared expert's
    included), and a pair per routed expert: llama.cpp's logits with the
    adapter are toy's to float rounding."""
    _, path = qwen35moe
    assert_adapter_runs_in_llama_cpp(path, ids(2), tmp_path / "adapter.gguf", targets, exact=True)


def test_lora_on_a_q8_0_copy_runs_in_llama_cpp_routed_alike(qwen35moe, tmp_path):
    """On Q8_0 llama.cpp rounds its products' activations otherwise than
    toy, and a token whose experts lie within that of each other is routed
    apart: three quarters of the positions as close as a dense model's
    (test_qwen3moe.assert_routed_alike)."""
    from test_qwen3moe import assert_routed_alike

    _, f32 = qwen35moe
    path = quantize(f32, tmp_path / "qwen35moe-q8_0.gguf", "Q8_0")
    batch = ids(2)
    _, ours = trained_adapter(path, batch, tmp_path / "adapter.gguf", targets=ALL)
    theirs = llama_cpp_logits(path, batch[0, :-1], tmp_path / "adapter.gguf", f32_cache=True)
    assert_routed_alike(theirs, ours, llama_cpp_logits(path, batch[0, :-1], f32_cache=True))


def test_cached_decoding_matches_transformers(qwen35moe):
    model, path = qwen35moe
    tokens = ids(4)[0]
    assert_cached_decoding_matches(path, tokens, hf_logits(model, tokens[None]), prefill=5)
