"""Qwen2 and Qwen3 GGUFs: a small randomly initialized model of each built in
transformers, written to GGUF here (llama.cpp's names and keys), then run by
toy: logits and every weight's gradient against transformers' own model,
and a LoRA adapter that names the base's architecture. Skips without torch
and transformers (neither is a dependency of toy)."""

import gguf
import numpy as np
import pytest

import toy
from gguf_fixtures import write_llama_gguf
from hf_compare import LLAMA_LIKE_NAMES, assert_toy_matches, gguf_name, llama_cpp_logits
from toy.recipes import LoRA

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

T = 12
ROPE_BASE = 5000.0
# HF parameter name -> GGUF name (per layer: {i})
HF_TO_GGUF = {
    **LLAMA_LIKE_NAMES,
    "lm_head.weight": "output.weight",
    "model.layers.{i}.post_attention_layernorm.weight": "blk.{i}.ffn_norm.weight",
    "model.layers.{i}.self_attn.q_proj.bias": "blk.{i}.attn_q.bias",
    "model.layers.{i}.self_attn.k_proj.bias": "blk.{i}.attn_k.bias",
    "model.layers.{i}.self_attn.v_proj.bias": "blk.{i}.attn_v.bias",
}


def hf_model(arch: str, tied: bool):
    common = dict(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        rope_theta=ROPE_BASE,
        rms_norm_eps=1e-6,
        tie_word_embeddings=tied,
    )
    if arch == "qwen2":
        config = transformers.Qwen2Config(**common)
        model_class = transformers.Qwen2ForCausalLM
    else:
        # Qwen3's heads are wider than hidden / heads
        config = transformers.Qwen3Config(**common, head_dim=16)
        model_class = transformers.Qwen3ForCausalLM
    torch.manual_seed(0)
    model = model_class(config).float().eval()
    with torch.no_grad():  # larger weights than the default init: logits worth comparing
        for name, p in model.named_parameters():
            p.copy_(torch.randn_like(p) * (0.1 if p.ndim == 2 else 0.3) + (1.0 if "norm" in name else 0.0))
    return model


def write_gguf(model, arch: str, path):
    params = {gguf_name(n, HF_TO_GGUF): p.detach().numpy().astype(np.float64) for n, p in model.named_parameters()}
    cfg = model.config
    spec = toy.ModelConfig(
        vocab=cfg.vocab_size,
        d_model=cfg.hidden_size,
        n_layers=cfg.num_hidden_layers,
        n_heads=cfg.num_attention_heads,
        n_kv_heads=cfg.num_key_value_heads,
        d_ff=cfg.intermediate_size,
        rope_base=ROPE_BASE,
        norm_eps=cfg.rms_norm_eps,
    )
    head_dim = getattr(cfg, "head_dim", None) if arch == "qwen3" else None
    return write_llama_gguf(path, params, spec, arch=arch, head_dim=head_dim)


CASES = [("qwen2", False), ("qwen2", True), ("qwen3", False)]


@pytest.mark.parametrize("arch,tied", CASES)
def test_logits_and_every_gradient_match_transformers(tmp_path, arch, tied):
    model = hf_model(arch, tied)
    path = write_gguf(model, arch, tmp_path / f"{arch}.gguf")
    ids = np.random.default_rng(1).integers(0, model.config.vocab_size, (1, T + 1)).astype(np.int32)
    # tied: the head is the embedding, which carries both gradients
    assert_toy_matches(model, path, ids, HF_TO_GGUF, skip=("output.weight",) if tied else ())


@pytest.mark.parametrize("arch", ["qwen2", "qwen3"])
def test_lora_on_qwen_trains_and_writes_an_adapter_for_its_architecture(tmp_path, arch):
    path = write_gguf(hf_model(arch, tied=True), arch, tmp_path / f"{arch}.gguf")
    recipe = LoRA("cpu", threads=1)
    recipe.realize(
        path, None, 4, toy.RecipeOptions(t_seq=T, t_batch=1, seed=0), targets=("q", "k", "v", "o", "gate", "up", "down")
    )
    ids = np.tile(np.arange(T + 1, dtype=np.int32) % 7, (1, 1))
    positions = np.arange(T, dtype=np.int32)[None]
    losses = [
        recipe.step(ids[:, :-1], positions, ids[:, 1:], toy.adamw_hp(step, 1e-2), step == 1) for step in range(1, 16)
    ]
    assert losses[-1] < losses[0] - 0.5
    recipe.save_adapter(tmp_path / "adapter.gguf")
    reader = gguf.GGUFReader(str(tmp_path / "adapter.gguf"))
    assert reader.fields["general.architecture"].contents() == arch
    assert reader.fields["general.type"].contents() == "adapter"


@pytest.mark.parametrize("arch", ["qwen2", "qwen3"])
def test_llama_cpp_loads_our_adapter(tmp_path, arch):
    pytest.importorskip("llama_cpp")
    path = write_gguf(hf_model(arch, tied=False), arch, tmp_path / f"{arch}.gguf")
    recipe = LoRA("cpu", threads=1)
    recipe.realize(path, None, 4, toy.RecipeOptions(t_seq=T, t_batch=1, seed=0), targets=("q", "v"))
    ids = (np.arange(T + 1, dtype=np.int32) % 7)[None]
    positions = np.arange(T, dtype=np.int32)[None]
    for step in range(1, 11):
        recipe.step(ids[:, :-1], positions, ids[:, 1:], toy.adamw_hp(step, 1e-2), step == 1)
    ours, _ = recipe.evaluate(ids[:, :-1], positions)
    recipe.save_adapter(tmp_path / "adapter.gguf")
    theirs = llama_cpp_logits(path, ids[0, :-1], tmp_path / "adapter.gguf")
    np.testing.assert_allclose(theirs, ours[0], atol=2e-2 * np.abs(ours).max())


@pytest.mark.parametrize("arch", ["qwen2", "qwen3"])
def test_kv_cache_decoding_matches_transformers(tmp_path, arch):
    """Generation's cached decode (one graph per new token) runs NEOX RoPE,
    the biases and the q/k norms as the training graph does."""
    model = hf_model(arch, tied=False)
    path = write_gguf(model, arch, tmp_path / f"{arch}.gguf")
    ids = np.random.default_rng(2).integers(0, model.config.vocab_size, T).astype(np.int32)
    with torch.no_grad():
        expected = model(torch.tensor(ids[None], dtype=torch.long)).logits[0].numpy()
    recipe = LoRA("cpu", threads=1)
    recipe.realize(path, None, 1, toy.RecipeOptions(t_seq=T, t_batch=1), targets=("q",))
    e = recipe.session
    e.kv_init(T)
    atol = 1e-4 * np.abs(expected).max()
    np.testing.assert_allclose(e.decode(ids[:6], 0, model.config.vocab_size), expected[5], atol=atol)
    for i in range(6, T):
        np.testing.assert_allclose(e.decode(ids[i : i + 1], i, model.config.vocab_size), expected[i], atol=atol)
