"""LFM2 (Liquid AI's hybrid: gated short convolutions and attention layers)
as llama.cpp ships it: a small random-weight transformers Lfm2ForCausalLM
written to GGUF by llama.cpp's own convert_hf_to_gguf.py
(llama_cpp_convert.py), then run by toy: logits and every weight's
gradient against transformers; LoRA on every projection, on Q8_0 and Q4_K
copies quantized by llama.cpp, whose adapter llama.cpp loads and runs to
toy's logits. The short convolution's backward is vendor patch 0015
(tests/test_recurrent_ops.py holds it alone)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import toy
from cli_helpers import toy_train
from hf_compare import (
    assert_cached_decoding_matches,
    assert_full_fine_tune_runs_in_llama_cpp,
    assert_toy_matches,
    assert_vulkan_follows_the_cpu,
    hf_logits,
    llama_cpp_logits,
    randomize,
    trained_adapter,
)
from llama_cpp_convert import hf_to_gguf, quantize, tensor_types

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

T = 12
VOCAB = 272  # llama_cpp_convert's smallest GPT-2 cut, a multiple of 16
KINDS = ["conv", "full_attention", "conv", "full_attention"]
# transformers -> GGUF names ({i}: the layer); the final norm as toy's session names it
HF_TO_GGUF = {
    "model.embed_tokens.weight": "token_embd.weight",
    "model.embedding_norm.weight": "output_norm.weight",
    "model.layers.{i}.operator_norm.weight": "blk.{i}.attn_norm.weight",
    "model.layers.{i}.ffn_norm.weight": "blk.{i}.ffn_norm.weight",
    "model.layers.{i}.feed_forward.w1.weight": "blk.{i}.ffn_gate.weight",
    "model.layers.{i}.feed_forward.w3.weight": "blk.{i}.ffn_up.weight",
    "model.layers.{i}.feed_forward.w2.weight": "blk.{i}.ffn_down.weight",
    "model.layers.{i}.self_attn.q_proj.weight": "blk.{i}.attn_q.weight",
    "model.layers.{i}.self_attn.k_proj.weight": "blk.{i}.attn_k.weight",
    "model.layers.{i}.self_attn.v_proj.weight": "blk.{i}.attn_v.weight",
    "model.layers.{i}.self_attn.out_proj.weight": "blk.{i}.attn_output.weight",
    "model.layers.{i}.self_attn.q_layernorm.weight": "blk.{i}.attn_q_norm.weight",
    "model.layers.{i}.self_attn.k_layernorm.weight": "blk.{i}.attn_k_norm.weight",
    "model.layers.{i}.conv.conv.weight": "blk.{i}.shortconv.conv.weight",
    "model.layers.{i}.conv.in_proj.weight": "blk.{i}.shortconv.in_proj.weight",
    "model.layers.{i}.conv.out_proj.weight": "blk.{i}.shortconv.out_proj.weight",
}
EVERY_TARGET = ("q", "k", "v", "o", "gate", "up", "down", "conv_in", "conv_out")


def hf_model(hidden: int = 64, ff: int = 64):
    config = transformers.Lfm2Config(
        vocab_size=VOCAB,
        hidden_size=hidden,
        intermediate_size=ff,
        block_auto_adjust_ff_dim=False,
        num_hidden_layers=len(KINDS),
        layer_types=KINDS,
        num_attention_heads=4,
        num_key_value_heads=2,
        conv_L_cache=3,
        max_position_embeddings=128,
        bos_token_id=VOCAB - 1,
        eos_token_id=VOCAB - 1,
        pad_token_id=VOCAB - 1,
    )
    return randomize(transformers.Lfm2ForCausalLM(config))


@pytest.fixture(scope="module")
def lfm2(tmp_path_factory):
    """(the transformers model, its f32 GGUF by llama.cpp's converter)"""
    model = hf_model()
    return model, hf_to_gguf(model, tmp_path_factory.mktemp("lfm2") / "lfm2-f32.gguf")


def ids(seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB - 1, (1, T + 1)).astype(np.int32)


def conv_as_stored(name: str, grad: np.ndarray) -> np.ndarray:
    """transformers' Conv1d weight [d, 1, width] as the GGUF stores it, [d, width]."""
    return grad.reshape(grad.shape[0], -1) if name.endswith("shortconv.conv.weight") else grad


def test_the_config_read_from_the_file_marks_the_convolution_layers(lfm2):
    _, path = lfm2
    cfg = toy.native.session.read_gguf_config(path)
    assert (cfg.layer_kinds, cfg.conv_kernel, cfg.n_kv_heads, cfg.rope_neox, cfg.qk_norm) == ("caca", 3, 2, True, True)


def test_logits_and_every_gradient_match_transformers(lfm2):
    model, path = lfm2
    assert_toy_matches(model, path, ids(), HF_TO_GGUF, to_gguf=conv_as_stored)


def test_a_full_fine_tune_saves_a_model_llama_cpp_runs_to_our_logits(lfm2, tmp_path):
    """Every weight trained, the final norm written back under the file's
    own name (token_embd_norm.weight), and llama.cpp's logits on the saved
    model toy's after training."""
    _, path = lfm2
    batch = ids(3)
    assert_full_fine_tune_runs_in_llama_cpp(path, batch, tmp_path / "full.gguf")


def test_lora_targets_name_what_the_layers_have(lfm2, tmp_path):
    _, path = lfm2
    recipe = toy.recipes.LoRA("cpu", threads=1)
    recipe.realize(path, None, 2, toy.RecipeOptions(t_seq=T, t_batch=1), targets=("all",))
    assert recipe.targets == EVERY_TARGET
    names = set(recipe.adapters())
    assert "blk.0.shortconv.in_proj.weight.lora_a" in names and "blk.0.attn_q.weight.lora_a" not in names
    assert "blk.1.attn_q.weight.lora_a" in names and "blk.1.shortconv.out_proj.weight.lora_b" not in names


@pytest.mark.parametrize("kind", ["F32", "Q8_0", "Q4_K"])
def test_lora_trains_and_llama_cpp_runs_its_adapter_to_our_logits(tmp_path, kind):
    """On the f32 file llama.cpp's logits with our adapter are ours to float
    rounding; on quantized copies llama.cpp rounds the activations to 8 bits
    for each quantized product, toy not always: close, as for the other
    families (test_qwen), and far closer than llama.cpp's without the
    adapter. Q4_K packs 256 values a block: a model 256 wide, so that every
    matrix is stored in it (tensor_types), not in a fallback type."""
    wide = kind == "Q4_K"
    model = hf_model(hidden=256, ff=512) if wide else hf_model()
    f32 = hf_to_gguf(model, tmp_path / "lfm2-f32.gguf")
    path = f32 if kind == "F32" else quantize(f32, tmp_path / f"lfm2-{kind}.gguf", kind)
    if wide:
        assert tensor_types(path)["blk.0.shortconv.in_proj.weight"] == "Q4_K"
    batch = ids(2)
    recipe, ours = trained_adapter(path, batch, tmp_path / "adapter.gguf", targets=EVERY_TARGET)
    positions = np.arange(T, dtype=np.int32)[None]
    assert recipe.evaluate(batch[:, :-1], positions, batch[:, 1:])[1] < 0.9 * np.log(VOCAB)  # it learned the batch
    theirs = llama_cpp_logits(path, batch[0, :-1], tmp_path / "adapter.gguf", f32_cache=True)
    base = llama_cpp_logits(path, batch[0, :-1], f32_cache=True)
    scale = np.abs(ours).max()
    np.testing.assert_allclose(theirs, ours, atol=(1e-5 if kind == "F32" else 2e-2) * scale)
    assert np.abs(theirs - ours).max() < 0.1 * np.abs(base - ours).max()


def test_cached_decoding_carries_the_convolution_state(lfm2):
    """Generation's decode: a prompt at once, then a token at a time, each
    short-convolution layer continuing from its state (the last inputs of
    its convolution), as transformers' logits over the whole sequence."""
    model, path = lfm2
    tokens = ids(4)[0]
    expected = hf_logits(model, tokens[None])
    assert_cached_decoding_matches(path, tokens, expected, prefill=5)


def test_a_decode_continues_from_the_state_or_starts_again(lfm2):
    model, path = lfm2
    tokens = ids(5)[0, :8]
    expected = hf_logits(model, tokens[None])
    recipe = toy.recipes.LoRA("cpu", threads=1)
    recipe.realize(path, None, 1, toy.RecipeOptions(t_seq=T, t_batch=1), targets=("q",))
    e = recipe.session
    e.kv_init(16)
    e.decode(tokens[:6], 0, VOCAB)
    with pytest.raises(toy.ToyError, match="recurrent layers continue from position 6 .their state., not 3"):
        e.decode(tokens[3:4], 3, VOCAB)
    # from 0 the states start again from zeros
    again = e.decode(tokens[:8], 0, VOCAB)
    np.testing.assert_allclose(again, expected[7], atol=1e-4 * np.abs(expected).max())


DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def lfm2_chat(tmp_path_factory, llama_cpp_models):
    """An LFM2 GGUF carrying LFM2.5-Instruct's chat template (llama.cpp's copy), Q8_0."""
    template = (llama_cpp_models / "templates" / "LFM2.5-Instruct.jinja").read_text(encoding="utf-8")
    folder = tmp_path_factory.mktemp("lfm2-chat")
    f32 = hf_to_gguf(hf_model(), folder / "f32.gguf", chat_template=template)
    return quantize(f32, folder / "lfm2-chat-q8_0.gguf", "Q8_0")


def test_instruct_dpo_and_generation_run_on_lfm2_from_the_command_line(lfm2_chat, tmp_path):
    """instruct with its chat template (every projection by default), again
    with --packing on (each sample's convolution starts from zeros), DPO on
    top of nothing, and toy-generate with the adapter."""
    common = ("--model", str(lfm2_chat), "--seq", "128", "--threads", "2", "--epochs", "1")
    run = tmp_path / "instruct"
    result = toy_train("instruct", "--data", str(DATA / "instruct-tiny.jsonl"), *common, "--out", str(run))
    assert result.returncode == 0, result.stderr
    config = json.loads((run / "config.json").read_text())
    assert config["lora"]["targets"] == list(EVERY_TARGET)
    losses = [json.loads(line)["loss"] for line in (run / "events.jsonl").read_text().splitlines() if '"loss"' in line]
    assert losses and all(np.isfinite(losses))
    packed = toy_train(
        "instruct",
        "--data",
        str(DATA / "instruct-tiny.jsonl"),
        *common,
        "--packing",
        "on",
        "--out",
        str(tmp_path / "p"),
    )
    assert packed.returncode == 0, packed.stderr
    assert json.loads((tmp_path / "p" / "config.json").read_text())["packed_rows"] is not None
    dpo = toy_train("dpo", "--data", str(DATA / "preferences-small.jsonl"), *common, "--out", str(tmp_path / "dpo"))
    assert dpo.returncode == 0, dpo.stderr
    generated = subprocess.run(
        [sys.executable, "-m", "toy.cli.generate", "hello", "-m", str(lfm2_chat), "--adapter",
         str(run / "adapter.gguf"), "-n", "8", "--threads", "2"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert generated.returncode == 0, generated.stderr


def test_packing_on_a_device_is_refused_for_recurrent_layers(lfm2):
    """Only the CPU's nodes start a packed row's next sample from zeros:
    on a device, --packing auto is off and --packing on one line."""
    from toy.core.errors import InputError
    from toy.options.common import packing_for

    _, model = lfm2
    assert packing_for(SimpleNamespace(packing="auto", device="cpu"), model) == "auto"
    assert packing_for(SimpleNamespace(packing="auto", device="vulkan"), model) == "off"
    with pytest.raises(InputError, match="start each sample anew on the CPU only"):
        packing_for(SimpleNamespace(packing="on", device="vulkan"), model)


@pytest.mark.vulkan
def test_lora_and_cached_decoding_on_vulkan_follow_the_cpu(lfm2):
    """The short convolution's backward (patches 0015, 0016) and its state
    in the decoder on the Vulkan backend (lavapipe in CI): the losses of
    five LoRA steps and the decoded logits the CPU's, to float rounding."""
    assert_vulkan_follows_the_cpu(lfm2[1], ids(2), VOCAB, EVERY_TARGET)
