"""gpt-oss (`gpt-oss`: gpt-oss-20b, gpt-oss-120b) as llama.cpp ships it:
attention with biases (q, k, v and the output), a learned sink logit per
head in each softmax, every other layer (the first, third...) a sliding
window, RoPE on the halves of each head extended by YaRN (the sliding
layers' too); every feed-forward a mixture of experts, the router's top k
(it has a bias) softmaxed among themselves, each expert the clamped SwiGLU
g sigmoid(1.702 g) (u + 1) (g clamped above at 7, u to [-7, 7]) with biases
on its gate, up and down. A small random-weight transformers
GptOssForCausalLM, written to GGUF by llama.cpp's own convert_hf_to_gguf.py
(llama_cpp_convert.py), then run by toy: the config, logits and every
weight's gradient (sinks, biases, router and experts included, through a
full fine-tune) against transformers; LoRA on the attention over F32, Q8_0
and Q4_K files, its adapter run by llama.cpp to toy's logits; LoRA on every
expert: its gradients against transformers' with the pairs merged, its
adapter in llama.cpp; cached decoding past the window.

transformers keeps each layer's experts as gate_up_proj [experts, hidden,
2 x width], gate's and up's columns interleaved (gate the even ones, up the
odd), and down_proj [experts, width, hidden]: input by output, where the
file's stacks (and their gradients) are output by input. The converter
splits gate_up_proj's columns and its bias's the same way and transposes
the matrices (AsStored lays transformers' gradients out so).

YaRN: the released config says "truncate": false (its ramp between the
exact correction dims); llama.cpp's ggml_rope_yarn_corr_dims always floors
and ceils them, and the GGUF has no key for it, so this model's config says
"truncate": true, as llama.cpp (and toy, reading the file) computes it
(with false, llama.cpp's logits differ from transformers' by 1e-2 here)."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np
import pytest

import toy
from hf_compare import (
    LLAMA_LIKE_NAMES,
    assert_adapter_runs_in_llama_cpp,
    assert_cached_decoding_matches,
    assert_full_fine_tune_runs_in_llama_cpp,
    assert_step_matches,
    hf_logits,
    llama_cpp_logits,
    randomize,
    trained_adapter,
)
from llama_cpp_convert import hf_to_gguf, quantize, tensor_types

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

T = 12
VOCAB = 272  # llama_cpp_convert's smallest GPT-2 cut, a multiple of the converter's 8
WINDOW = 4  # the sliding layers' window: T = 12 runs well past it
HF_TO_GGUF = {
    **LLAMA_LIKE_NAMES,
    "lm_head.weight": "output.weight",
    "model.layers.{i}.self_attn.q_proj.bias": "blk.{i}.attn_q.bias",
    "model.layers.{i}.self_attn.k_proj.bias": "blk.{i}.attn_k.bias",
    "model.layers.{i}.self_attn.v_proj.bias": "blk.{i}.attn_v.bias",
    "model.layers.{i}.self_attn.o_proj.bias": "blk.{i}.attn_output.bias",
    "model.layers.{i}.self_attn.sinks": "blk.{i}.attn_sinks.weight",
    # the norm before the feed-forward (llama's ffn_norm), by gpt-oss's own name
    "model.layers.{i}.post_attention_layernorm.weight": "blk.{i}.post_attention_norm.weight",
    "model.layers.{i}.mlp.router.weight": "blk.{i}.ffn_gate_inp.weight",
    "model.layers.{i}.mlp.router.bias": "blk.{i}.ffn_gate_inp.bias",
    # gate's columns the even ones, up's the odd (AsStored makes them gate's rows, then up's)
    "model.layers.{i}.mlp.experts.gate_up_proj": ("blk.{i}.ffn_gate_exps.weight", "blk.{i}.ffn_up_exps.weight"),
    "model.layers.{i}.mlp.experts.gate_up_proj_bias": ("blk.{i}.ffn_gate_exps.bias", "blk.{i}.ffn_up_exps.bias"),
    "model.layers.{i}.mlp.experts.down_proj": "blk.{i}.ffn_down_exps.weight",
    "model.layers.{i}.mlp.experts.down_proj_bias": "blk.{i}.ffn_down_exps.bias",
}
ATTENTION = ("q", "k", "v", "o")
EXPERTS = ("gate_exps", "up_exps", "down_exps")


def hf_model(hidden: int = 64, experts: int = 8, used: int = 2, expert_width: int = 32, layers: int = 2):
    """A gpt-oss of `layers` layers (sliding, full, ...), each with `experts`
    experts of which `used` serve a token, YaRN as gpt-oss-20b's."""
    config = transformers.GptOssConfig(
        vocab_size=VOCAB,
        hidden_size=hidden,
        intermediate_size=expert_width,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=hidden // 4,
        num_local_experts=experts,
        num_experts_per_tok=used,
        sliding_window=WINDOW,
        rope_parameters={
            "rope_type": "yarn",
            "rope_theta": 150000.0,
            "factor": 32.0,
            "original_max_position_embeddings": 4096,
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "truncate": True,  # as llama.cpp computes it (the module's docstring)
        },
        max_position_embeddings=512,
        tie_word_embeddings=False,
        bos_token_id=VOCAB - 1,
        eos_token_id=VOCAB - 1,
        pad_token_id=0,
        attn_implementation="eager",  # the sinks
    )
    assert config.layer_types[:2] == ["sliding_attention", "full_attention"]
    # randomize draws the sinks, every bias and the experts' stacks too (none left zero)
    model = randomize(transformers.GptOssForCausalLM(config))
    with torch.no_grad():
        # a decisive router: randomize's N(0, 0.1) leaves some token's second and third
        # experts within a quantized file's rounding of each other (test_qwen3moe)
        for layer in model.model.layers:
            layer.mlp.router.weight.mul_(10.0)
    return model


@pytest.fixture(scope="module")
def gpt_oss(tmp_path_factory):
    """(the transformers model, its f32 GGUF by llama.cpp's converter)"""
    model = hf_model()
    return model, hf_to_gguf(model, tmp_path_factory.mktemp("gpt_oss") / "gpt-oss-f32.gguf")


def ids(seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB - 1, (1, T + 1)).astype(np.int32)


def stored_rows(name: str, grad: np.ndarray) -> np.ndarray:
    """transformers' gradient (or weight) of the parameter `name` laid out
    so that hf_compare's split among HF_TO_GGUF's names (equal runs of the
    last axis but one) gives each of the file's tensors: gate_up_proj
    [E, hidden, 2 width] as gate's [E, width, hidden] over up's (even
    columns, then odd, transposed); its bias [E, 2 width] as gate's
    [E, width] over up's along the experts' axis; down_proj transposed."""
    if name.endswith("experts.gate_up_proj"):
        return np.concatenate([grad[..., ::2], grad[..., 1::2]], axis=-1).swapaxes(-1, -2)
    if name.endswith("experts.gate_up_proj_bias"):
        return np.concatenate([grad[:, ::2], grad[:, 1::2]], axis=0)
    if name.endswith("experts.down_proj"):
        return grad.swapaxes(-1, -2)
    return grad


class AsStored:
    """The transformers model as assert_step_matches reads it (its
    named_parameters' gradients), each gradient in stored_rows' layout."""

    def __init__(self, model):
        self.model = model

    def named_parameters(self):
        for name, p in self.model.named_parameters():
            rows = np.ascontiguousarray(stored_rows(name, p.grad.numpy()))
            yield name, SimpleNamespace(grad=torch.from_numpy(rows))


def test_llama_cpp_runs_the_file_to_transformers_logits(gpt_oss):
    """The fixture itself, toy aside: llama.cpp's logits are transformers'
    at every position, those past the window included; and the window and
    the sinks each move transformers' logits (so that matching them checks
    both)."""
    model, path = gpt_oss
    batch = ids()[:, :-1]
    expected = hf_logits(model, batch)
    theirs = llama_cpp_logits(path, batch[0], f32_cache=True)
    np.testing.assert_allclose(theirs, expected, atol=1e-5 * np.abs(expected).max())
    unwindowed, sinkless = copy.deepcopy(model), copy.deepcopy(model)
    for layer in unwindowed.model.layers:
        layer.self_attn.sliding_window = None
    unwindowed.config.layer_types = ["full_attention"] * len(unwindowed.model.layers)
    with torch.no_grad():
        for layer in sinkless.model.layers:
            layer.self_attn.sinks.fill_(-1e4)
    moved = np.abs(hf_logits(unwindowed, batch) - expected).max(axis=1)
    assert moved[:WINDOW].max() < 1e-5 and moved[WINDOW:].min() > 0.1
    assert np.abs(hf_logits(sinkless, batch) - expected).max() > 0.1


def test_the_config_read_from_the_file_has_the_experts_the_window_and_yarn(gpt_oss):
    _, path = gpt_oss
    cfg = toy.native.session.read_gguf_config(path)
    assert (cfg.n_experts, cfg.n_experts_used, cfg.d_ff_exp) == (8, 2, 32)
    assert (cfg.swa_window, cfg.swa_period, cfg.rope_base, cfg.rope_base_swa) == (WINDOW, 2, 150000.0, 150000.0)
    assert (cfg.rope_scale, cfg.rope_yarn, cfg.rope_yarn_ctx) == (32.0, True, 4096)
    assert (cfg.rope_yarn_beta_fast, cfg.rope_yarn_beta_slow, cfg.rope_yarn_log_mul) == (32.0, 1.0, 0.0)
    assert cfg.rope_neox and cfg.qkv_bias and cfg.untied and cfg.head_dim == 0
    assert not (cfg.qk_norm or cfg.post_norms or cfg.d_ff_shexp)
    for field in ("swa_rope_scaled", "attn_sinks", "attn_out_bias", "experts_oai"):
        assert getattr(cfg, field) is True, field


def test_lora_targets_are_the_attention_and_the_experts_by_name(gpt_oss):
    """As Qwen3-MoE's: no dense gate, up or down; "all" is the attention."""
    from toy.native.session import resolve_targets

    _, path = gpt_oss
    cfg = toy.native.session.read_gguf_config(path)
    assert toy.native.session.layer_targets(cfg) == [ATTENTION + EXPERTS] * 2
    assert resolve_targets(("all",), cfg) == ATTENTION
    assert resolve_targets(("q", "experts"), cfg) == ("q", *EXPERTS)


def test_logits_and_every_gradient_match_transformers(gpt_oss):
    """The sinks', the biases', the router's and every expert's gradients
    too (a full fine-tune trains every tensor of the F32 file)."""
    from toy.recipes import FullFineTune

    model, path = gpt_oss
    batch = ids()
    model.zero_grad()
    out = model(torch.tensor(batch[:, :-1], dtype=torch.long))
    loss = torch.nn.functional.cross_entropy(out.logits[0], torch.tensor(batch[0, 1:], dtype=torch.long))
    loss.backward()
    recipe = FullFineTune("cpu", threads=1)
    recipe.realize(path, toy.RecipeOptions(t_seq=T, t_batch=1))
    step = (batch[:, :-1], np.arange(T, dtype=np.int32)[None], batch[:, 1:])
    assert_step_matches(recipe, step, AsStored(model), out.logits, loss, HF_TO_GGUF)


def test_a_full_fine_tune_saves_a_model_llama_cpp_runs_to_our_logits(gpt_oss, tmp_path):
    """Every weight, the sinks, biases and experts too, written back in F32."""
    _, path = gpt_oss
    assert_full_fine_tune_runs_in_llama_cpp(path, ids(3), tmp_path / "full.gguf")


@pytest.mark.parametrize("kind", ["F32", "Q8_0", "Q4_K", "MXFP4_MOE"])
def test_lora_trains_and_llama_cpp_runs_its_adapter_to_our_logits(tmp_path, kind):
    """LoRA on the attention; the experts stay as the file stores them
    (Q4_K at a width of 256: llama.cpp's k-quant mix; MXFP4_MOE: the
    experts MXFP4, as gpt-oss ships, the rest Q8_0), the sinks and biases
    in F32."""
    from test_qwen3moe import assert_routed_alike

    wide = kind == "Q4_K"
    model = hf_model(hidden=256, expert_width=256) if wide else hf_model()
    f32 = hf_to_gguf(model, tmp_path / "f32.gguf")
    path = f32 if kind == "F32" else quantize(f32, tmp_path / f"gpt-oss-{kind}.gguf", kind)
    types = tensor_types(path)
    assert types["blk.0.attn_sinks.weight"] == types["blk.0.ffn_gate_exps.bias"] == "F32"
    if wide:
        assert types["blk.0.ffn_gate_exps.weight"] == "Q4_K" and types["blk.0.attn_q.weight"] == "Q4_K"
    if kind == "MXFP4_MOE":
        assert types["blk.0.ffn_down_exps.weight"] == "MXFP4" and types["blk.0.attn_q.weight"] == "Q8_0"
    if kind in ("F32", "Q8_0"):
        assert_adapter_runs_in_llama_cpp(path, ids(2), tmp_path / "adapter.gguf", ATTENTION, exact=kind == "F32")
        return
    batch = ids(2)
    _, ours = trained_adapter(path, batch, tmp_path / "adapter.gguf", targets=ATTENTION)
    theirs = llama_cpp_logits(path, batch[0, :-1], tmp_path / "adapter.gguf", f32_cache=True)
    assert_routed_alike(theirs, ours, llama_cpp_logits(path, batch[0, :-1], f32_cache=True))


def test_expert_lora_gradients_match_transformers_with_the_pairs_merged(gpt_oss):
    """LoRA on every expert of an F32 file with random A and B: toy's logits
    are transformers' with each expert's weight W_e + (alpha / r) B_e A_e
    (in the file's layout: gate's into gate_up_proj's even columns, up's
    into its odd ones, transposed), and the pairs' gradients are those the
    chain rule gives from transformers' gradient G_e of that weight (in the
    file's layout): s B_e^T G_e and s G_e A_e^T."""
    from toy.recipes import LoRA

    model, path = gpt_oss
    rank, alpha, batch = 4, 8.0, ids(6)
    scale = alpha / rank
    recipe = LoRA("cpu", threads=1)
    recipe.realize(path, None, rank, toy.RecipeOptions(t_seq=T, t_batch=1), alpha=alpha, targets=EXPERTS)
    e = recipe.session
    rng = np.random.default_rng(0)
    pairs = {}
    for name, handle in e.params().items():
        value = rng.standard_normal(e.download(handle).shape).astype(np.float32) * 0.2
        e.upload(handle, value)
        pairs[name] = value
    merged = copy.deepcopy(model)
    merged.zero_grad()

    def delta(i: int, weight: str) -> torch.Tensor:
        a, b = (pairs[f"blk.{i}.{weight}.weight.lora_{which}"].astype(np.float64) for which in "ab")
        # each expert's (alpha / r) B_e A_e [E, out, in], as transformers holds it: [E, in, out]
        return torch.from_numpy((scale * b @ a).astype(np.float32).transpose(0, 2, 1).copy())

    with torch.no_grad():
        for i, layer in enumerate(merged.model.layers):
            experts = layer.mlp.experts
            experts.gate_up_proj[..., ::2] += delta(i, "ffn_gate_exps")
            experts.gate_up_proj[..., 1::2] += delta(i, "ffn_up_exps")
            experts.down_proj += delta(i, "ffn_down_exps")
    out = merged(torch.tensor(batch[:, :-1], dtype=torch.long))
    loss = torch.nn.functional.cross_entropy(out.logits[0], torch.tensor(batch[0, 1:], dtype=torch.long))
    loss.backward()
    positions = np.arange(T, dtype=np.int32)[None]
    logits, ours = recipe.evaluate(batch[:, :-1], positions, batch[:, 1:])
    expected = out.logits[0].detach().numpy()
    np.testing.assert_allclose(logits[0], expected, atol=1e-4 * np.abs(expected).max())
    assert ours == pytest.approx(float(loss.detach()), rel=1e-5)
    e.reset()
    e.compute_gradients()
    for i, layer in enumerate(merged.model.layers):
        experts = layer.mlp.experts
        gate, up = np.split(stored_rows("experts.gate_up_proj", experts.gate_up_proj.grad.numpy()), 2, axis=-2)
        down = stored_rows("experts.down_proj", experts.down_proj.grad.numpy())
        for weight, g in (("ffn_gate_exps", gate), ("ffn_up_exps", up), ("ffn_down_exps", down)):
            a, b = (pairs[f"blk.{i}.{weight}.weight.lora_{which}"] for which in "ab")
            expected = {"lora_a": scale * b.transpose(0, 2, 1) @ g, "lora_b": scale * g @ a.transpose(0, 2, 1)}
            for which, want in expected.items():
                name = f"blk.{i}.{weight}.weight.{which}"
                got = e.download(e.grad_of(e.params()[name]))
                np.testing.assert_allclose(got, want, atol=1e-4 * np.abs(want).max(), err_msg=name)


def test_expert_lora_trains_and_llama_cpp_runs_its_adapter_to_our_logits(gpt_oss, tmp_path):
    """LoRA on q, v and every expert of the F32 file: llama.cpp loads the
    adapter's 3-D pairs unchanged and runs it to toy's logits."""
    _, path = gpt_oss
    assert_adapter_runs_in_llama_cpp(path, ids(2), tmp_path / "adapter.gguf", ("q", "v", *EXPERTS), exact=True)


def test_cached_decoding_matches_transformers_past_the_window(gpt_oss):
    """A prompt of 5 tokens at once, then a token at a time from the KV
    cache, well past the window (the sliding layers' mask keeps its last
    WINDOW positions): each token's router chooses its experts alone, the
    sinks in every softmax."""
    model, path = gpt_oss
    tokens = ids(4)[0]
    assert_cached_decoding_matches(path, tokens, hf_logits(model, tokens[None]), prefill=5)


def test_instruct_and_dpo_run_on_gpt_oss_from_the_command_line(tmp_path, llama_cpp_models):
    """instruct with gpt-oss's own harmony template and DPO, on the file as
    gpt-oss ships (experts MXFP4, the rest Q8_0): the attention by default."""
    from cli_helpers import instruct_and_dpo

    template = (llama_cpp_models / "templates" / "openai-gpt-oss-120b.jinja").read_text(encoding="utf-8")
    f32 = hf_to_gguf(hf_model(), tmp_path / "f32.gguf", chat_template=template)
    model = quantize(f32, tmp_path / "gpt-oss-chat-mxfp4.gguf", "MXFP4_MOE")
    config = instruct_and_dpo(model, tmp_path, seq=384)
    assert config["lora"]["targets"] == list(ATTENTION)


def test_a_long_step_on_mxfp4_experts_runs_toys_forward_to_llama_cpps_logits(tmp_path):
    """64 tokens, 16 slots an expert on average: toy's own forward runs the
    MXFP4 experts (ggml's MUL_MAT_ID is slow on them; test_experts holds
    the kernel alone). llama.cpp's logits, whose products round x to 8
    bits, correlate with toy's, and most positions agree as a dense
    model's quantized products do."""
    from toy.recipes import LoRA

    t = 64
    f32 = hf_to_gguf(hf_model(), tmp_path / "f32.gguf")
    path = quantize(f32, tmp_path / "gpt-oss-mxfp4.gguf", "MXFP4_MOE")
    batch = np.random.default_rng(5).integers(0, VOCAB - 1, (1, t)).astype(np.int32)
    recipe = LoRA("cpu", threads=2)
    recipe.realize(path, None, 4, toy.RecipeOptions(t_seq=t, t_batch=1), targets=("q",))
    ours, _ = recipe.evaluate(batch, np.arange(t, dtype=np.int32)[None])
    theirs = llama_cpp_logits(path, batch[0], f32_cache=True)
    assert np.corrcoef(theirs.ravel(), ours[0].ravel())[0, 1] > 0.99
    close = np.abs(theirs - ours[0]).max(axis=1) < 0.1 * np.abs(theirs).max()
    assert close.mean() >= 0.75, np.abs(theirs - ours[0]).max(axis=1)
