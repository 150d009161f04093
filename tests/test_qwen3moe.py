"""Qwen3-MoE (`qwen3moe`: Qwen3-30B-A3B, Qwen3-Coder-30B-A3B) as llama.cpp
ships it: Qwen3's attention, and every feed-forward a mixture of SwiGLU
experts, the router's softmax, its top k rescaled to sum to 1. A small
random-weight transformers Qwen3MoeForCausalLM, written to GGUF by
llama.cpp's own convert_hf_to_gguf.py (llama_cpp_convert.py), then run by
toy: the config, logits and every weight's gradient (router and experts
included, through a full fine-tune) against transformers; LoRA on the
attention over Q8_0 and Q4_K copies whose experts stay as stored, its
adapter run by llama.cpp to toy's logits; LoRA on every expert (a pair per
expert, as llama.cpp's adapters hold them): its gradients against
transformers' with the pairs merged, its adapter in llama.cpp, merged into
the base; cached decoding."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import toy
from hf_compare import (
    LLAMA_LIKE_NAMES,
    assert_adapter_runs_in_llama_cpp,
    assert_cached_decoding_matches,
    assert_full_fine_tune_runs_in_llama_cpp,
    assert_toy_matches,
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
HF_TO_GGUF = {
    **LLAMA_LIKE_NAMES,
    "lm_head.weight": "output.weight",
    "model.layers.{i}.post_attention_layernorm.weight": "blk.{i}.ffn_norm.weight",
    "model.layers.{i}.mlp.gate.weight": "blk.{i}.ffn_gate_inp.weight",
    # transformers keeps each layer's experts as one tensor, gate's rows then up's
    "model.layers.{i}.mlp.experts.gate_up_proj": ("blk.{i}.ffn_gate_exps.weight", "blk.{i}.ffn_up_exps.weight"),
    "model.layers.{i}.mlp.experts.down_proj": "blk.{i}.ffn_down_exps.weight",
}
ATTENTION = ("q", "k", "v", "o")
EXPERTS = ("gate_exps", "up_exps", "down_exps")


def hf_model(hidden: int = 64, experts: int = 8, used: int = 2, expert_width: int = 32, layers: int = 2):
    """A Qwen3-MoE of `layers` layers, each with `experts` experts of which
    `used` serve a token, normalized as the released models are."""
    config = transformers.Qwen3MoeConfig(
        vocab_size=VOCAB,
        hidden_size=hidden,
        intermediate_size=3 * hidden,
        moe_intermediate_size=expert_width,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=hidden // 4,
        num_experts=experts,
        num_experts_per_tok=used,
        norm_topk_prob=True,
        max_position_embeddings=512,
        tie_word_embeddings=False,
        bos_token_id=VOCAB - 1,
        eos_token_id=VOCAB - 1,
        pad_token_id=0,
    )
    model = randomize(transformers.Qwen3MoeForCausalLM(config))
    with torch.no_grad():
        # a decisive router: randomize's N(0, 0.1) leaves some token's second and third
        # experts within a quantized file's rounding of each other, so that llama.cpp and
        # toy (whose products round differently) choose apart and that token's logits jump
        for layer in model.model.layers:
            layer.mlp.gate.weight.mul_(10.0)
    return model


@pytest.fixture(scope="module")
def qwen3moe(tmp_path_factory):
    """(the transformers model, its f32 GGUF by llama.cpp's converter)"""
    model = hf_model()
    return model, hf_to_gguf(model, tmp_path_factory.mktemp("qwen3moe") / "qwen3moe-f32.gguf")


def ids(seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB - 1, (1, T + 1)).astype(np.int32)


def test_the_config_read_from_the_file_has_the_experts(qwen3moe):
    _, path = qwen3moe
    cfg = toy.native.session.read_gguf_config(path)
    assert (cfg.n_experts, cfg.n_experts_used, cfg.d_ff_exp, cfg.experts_norm) == (8, 2, 32, True)
    assert cfg.rope_neox and cfg.qk_norm and cfg.head_dim == 0


def test_lora_targets_are_the_attention_and_the_experts_by_name(qwen3moe):
    """No layer has a dense gate, up or down; the experts take a pair per
    expert when asked for by name ("experts" or llama.cpp's tensor names),
    not by "all" (PEFT's all-linear leaves them out too)."""
    from toy.native.session import resolve_targets
    from toy.options.lora import targets_option

    _, path = qwen3moe
    cfg = toy.native.session.read_gguf_config(path)
    assert toy.native.session.layer_targets(cfg) == [ATTENTION + EXPERTS] * 2
    assert resolve_targets(("all",), cfg) == ATTENTION
    assert resolve_targets(("q", "experts"), cfg) == ("q", *EXPERTS)
    assert targets_option("q_proj,ffn_gate_exps,ffn_down_exps") == "q,gate_exps,down_exps"


def test_logits_and_every_gradient_match_transformers(qwen3moe):
    """The router's and every expert's gradients too (a full fine-tune
    trains the F32 experts)."""
    model, path = qwen3moe
    assert_toy_matches(model, path, ids(), HF_TO_GGUF)


def test_a_full_fine_tune_saves_a_model_llama_cpp_runs_to_our_logits(qwen3moe, tmp_path):
    """Every weight, the experts too, written back in F32 as stacks of
    matrices."""
    _, path = qwen3moe
    assert_full_fine_tune_runs_in_llama_cpp(path, ids(3), tmp_path / "full.gguf")


@pytest.mark.parametrize("kind", ["F32", "Q8_0", "Q4_K"])
def test_lora_trains_and_llama_cpp_runs_its_adapter_to_our_logits(tmp_path, kind):
    """LoRA on the attention; the experts stay as the file stores them
    (Q4_K at a width of 256: llama.cpp's k-quant mix)."""
    wide = kind == "Q4_K"
    model = hf_model(hidden=256, expert_width=256) if wide else hf_model()
    f32 = hf_to_gguf(model, tmp_path / "f32.gguf")
    path = f32 if kind == "F32" else quantize(f32, tmp_path / f"qwen3moe-{kind}.gguf", kind)
    if wide:
        types = tensor_types(path)
        assert types["blk.0.ffn_gate_exps.weight"] == "Q4_K" and types["blk.0.attn_q.weight"] == "Q4_K"
    if kind != "Q4_K":
        assert_adapter_runs_in_llama_cpp(path, ids(2), tmp_path / "adapter.gguf", ATTENTION, exact=kind == "F32")
        return
    batch = ids(2)
    _, ours = trained_adapter(path, batch, tmp_path / "adapter.gguf", targets=ATTENTION)
    theirs = llama_cpp_logits(path, batch[0, :-1], tmp_path / "adapter.gguf", f32_cache=True)
    assert_routed_alike(theirs, ours, llama_cpp_logits(path, batch[0, :-1], f32_cache=True))


def test_expert_lora_gradients_match_transformers_with_the_pairs_merged(qwen3moe):
    """LoRA on every expert of an F32 file with random A and B: toy's logits
    are transformers' with each expert's weight W_e + (alpha / r) B_e A_e,
    and the pairs' gradients are those the chain rule gives from
    transformers' gradient G_e of that weight: s B_e^T G_e and s G_e A_e^T."""
    from toy.recipes import LoRA

    model, path = qwen3moe
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
    merged = copy.deepcopy(model)  # float32: transformers' grouped experts' product takes no float64

    def delta(i: int, weight: str) -> np.ndarray:
        a, b = (pairs[f"blk.{i}.{weight}.weight.lora_{which}"].astype(np.float64) for which in "ab")
        return (scale * b @ a).astype(np.float32)  # each expert's (alpha / r) B_e A_e

    with torch.no_grad():
        for i, layer in enumerate(merged.model.layers):
            gate_up = np.concatenate([delta(i, "ffn_gate_exps"), delta(i, "ffn_up_exps")], axis=1)
            layer.mlp.experts.gate_up_proj += torch.from_numpy(gate_up)
            layer.mlp.experts.down_proj += torch.from_numpy(delta(i, "ffn_down_exps"))
    out = merged(torch.tensor(batch[:, :-1], dtype=torch.long))
    loss = torch.nn.functional.cross_entropy(out.logits[0], torch.tensor(batch[0, 1:], dtype=torch.long))
    loss.backward()
    positions = np.arange(T, dtype=np.int32)[None]
    logits, ours = recipe.evaluate(batch[:, :-1], positions, batch[:, 1:])
    expected = out.logits[0].detach().numpy()
    np.testing.assert_allclose(logits[0], expected, atol=1e-4 * np.abs(expected).max())
    assert ours == pytest.approx(float(loss), rel=1e-5)
    e.reset()
    e.compute_gradients()
    for i, layer in enumerate(merged.model.layers):
        gate, up = np.split(layer.mlp.experts.gate_up_proj.grad.numpy(), 2, axis=-2)
        down = layer.mlp.experts.down_proj.grad.numpy()
        for weight, g in (("ffn_gate_exps", gate), ("ffn_up_exps", up), ("ffn_down_exps", down)):
            a, b = (pairs[f"blk.{i}.{weight}.weight.lora_{which}"] for which in "ab")
            expected = {"lora_a": scale * b.transpose(0, 2, 1) @ g, "lora_b": scale * g @ a.transpose(0, 2, 1)}
            for which, want in expected.items():
                name = f"blk.{i}.{weight}.weight.{which}"
                got = e.download(e.grad_of(e.params()[name]))
                np.testing.assert_allclose(got, want, atol=1e-4 * np.abs(want).max(), err_msg=name)


@pytest.mark.parametrize("kind", ["F32", "Q4_K"])
def test_expert_lora_trains_and_llama_cpp_runs_its_adapter_to_our_logits(tmp_path, kind):
    """LoRA on q, v and every expert (`--targets q,v,experts`), the experts
    as stored: llama.cpp loads the adapter's 3-D pairs unchanged and runs it
    to toy's logits (exactly on F32; routed alike on Q4_K)."""
    wide = kind == "Q4_K"
    model = hf_model(hidden=256, expert_width=256) if wide else hf_model()
    f32 = hf_to_gguf(model, tmp_path / "f32.gguf")
    path = f32 if kind == "F32" else quantize(f32, tmp_path / f"qwen3moe-{kind}.gguf", kind)
    targets = ("q", "v", *EXPERTS)
    if not wide:
        assert_adapter_runs_in_llama_cpp(path, ids(2), tmp_path / "adapter.gguf", targets, exact=True)
        return
    assert tensor_types(path)["blk.0.ffn_down_exps.weight"] in ("Q4_K", "Q6_K")
    batch = ids(2)
    _, ours = trained_adapter(path, batch, tmp_path / "adapter.gguf", targets=targets)
    theirs = llama_cpp_logits(path, batch[0, :-1], tmp_path / "adapter.gguf", f32_cache=True)
    assert_routed_alike(theirs, ours, llama_cpp_logits(path, batch[0, :-1], f32_cache=True))


def test_generation_loads_an_expert_adapter_to_the_trained_logits(qwen3moe, tmp_path):
    """toy-generate's loader reads the adapter's 3-D pairs back (checked
    against the base) and decodes from its KV cache to the logits training
    ended with."""
    from toy.generation.model import load_model

    _, path = qwen3moe
    batch = ids(7)
    _, ours = trained_adapter(path, batch, tmp_path / "adapter.gguf", targets=("k", *EXPERTS))
    session = load_model(path, tmp_path / "adapter.gguf", threads=1).session
    session.kv_init(T)
    logits = session.decode(batch[0, :T], 0, VOCAB)
    np.testing.assert_allclose(logits, ours[-1], atol=1e-4 * np.abs(ours).max())


def test_an_expert_adapter_of_another_shape_is_refused_in_one_line(qwen3moe, tmp_path):
    """A pair per expert of a base with 8 experts: an adapter made for 4 is
    refused before anything is built, naming the shape the base takes."""
    from gguf_fixtures import write_lora_adapter
    from toy.formats.adapter import read_adapter

    _, path = qwen3moe
    pair = {"blk.0.ffn_up_exps.weight.lora_a": np.zeros((4, 4, 64), np.float32)}
    pair["blk.0.ffn_up_exps.weight.lora_b"] = np.zeros((4, 32, 4), np.float32)
    write_lora_adapter(tmp_path / "adapter.gguf", "qwen3moe", pair, alpha=8.0)
    with pytest.raises(toy.InputError) as refused:
        read_adapter(tmp_path / "adapter.gguf", path)
    message = str(refused.value)
    assert "[64, 32, 8] takes [64, rank, 8]" in message and "\n" not in message


def assert_routed_alike(theirs, ours, base):
    """llama.cpp's logits [T, vocab] against toy's, on a quantized file:
    llama.cpp's products round their activations otherwise than toy's, and
    where a token's second and third experts lie within that of each other
    the two route it apart and its logits jump (1.9 where the rest differ
    by 0.2). Three quarters of the positions agree as a dense model's do:
    within a tenth of what the adapter moved (base: llama.cpp's logits
    without it)."""
    assert np.corrcoef(theirs.ravel(), ours.ravel())[0, 1] > 0.99
    close = np.abs(theirs - ours).max(axis=1) < 0.1 * np.abs(base - ours).max()
    assert close.mean() >= 0.75, np.abs(theirs - ours).max(axis=1)


def test_cached_decoding_matches_transformers(qwen3moe):
    """A prompt at once, then a token at a time from the KV cache: each
    token's router chooses its experts alone."""
    model, path = qwen3moe
    tokens = ids(4)[0]
    assert_cached_decoding_matches(path, tokens, hf_logits(model, tokens[None]), prefill=5)


def test_the_dense_targets_are_refused_in_one_line(qwen3moe):
    """gate, up and down name dense matrices a mixture of experts lacks."""
    from toy.recipes import LoRA

    _, path = qwen3moe
    recipe = LoRA("cpu", threads=1)
    with pytest.raises(toy.ToyError) as e:
        recipe.realize(path, None, 4, toy.RecipeOptions(t_seq=T, t_batch=1), targets=("q", "gate"))
    assert "gate" in str(e.value) and "\n" not in str(e.value)


def test_recomputed_blocks_give_the_same_losses_to_the_bit(tmp_path):
    """LoRA on a Q4_K file with every block's activations recomputed in the
    backward (the router, its choice and the experts' products again): the
    losses of keeping them, bit for bit."""
    from toy.recipes import LoRA

    f32 = hf_to_gguf(hf_model(hidden=256, expert_width=256), tmp_path / "f32.gguf")
    path = quantize(f32, tmp_path / "qwen3moe-q4_k.gguf", "Q4_K")
    batch = ids(5)
    positions = np.arange(T, dtype=np.int32)[None]
    losses = []
    for recompute in (0, 1):
        recipe = LoRA("cpu", threads=2)
        recipe.realize(path, None, 4, toy.RecipeOptions(t_seq=T, t_batch=1, seed=0, recompute=recompute))
        losses.append(
            [recipe.step(batch[:, :-1], positions, batch[:, 1:], toy.adamw_hp(s, 1e-2), s == 1) for s in (1, 2, 3)]
        )
    assert losses[0] == losses[1]


def test_instruct_and_dpo_run_on_qwen3moe_from_the_command_line(tmp_path, llama_cpp_models):
    """instruct with Qwen3-Coder's own chat template (Qwen3-Coder-30B-A3B is
    a qwen3moe) and DPO, on a Q8_0 copy: the attention by default."""
    from cli_helpers import instruct_and_dpo

    template = (llama_cpp_models / "templates" / "Qwen3-Coder.jinja").read_text(encoding="utf-8")
    f32 = hf_to_gguf(hf_model(), tmp_path / "f32.gguf", chat_template=template)
    model = quantize(f32, tmp_path / "qwen3moe-chat-q8_0.gguf", "Q8_0")
    config = instruct_and_dpo(model, tmp_path, seq=384)
    assert config["lora"]["targets"] == list(ATTENTION)


def test_toy_train_lora_takes_the_experts_by_name(qwen3moe, tmp_path):
    """`toy-train lora --targets q,experts`: the run records the three
    experts' targets and writes their pairs, 3-D, as llama.cpp reads them."""
    import json

    from gguf import GGUFReader

    from cli_helpers import toy_train

    _, path = qwen3moe
    out = tmp_path / "run"
    result = toy_train("lora", "--model", str(path), "--targets", "q,experts", "--rank", "4", "--seq", "32",
                       "--steps", "2", "--threads", "2", "--out", str(out))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads((out / "config.json").read_text())["lora"]["targets"] == ["q", *EXPERTS]
    shapes = {t.name: [int(n) for n in t.shape] for t in GGUFReader(out / "adapter.gguf").tensors}
    assert shapes["blk.1.ffn_down_exps.weight.lora_a"] == [32, 4, 8]
    assert shapes["blk.1.ffn_down_exps.weight.lora_b"] == [4, 64, 8]
    assert shapes["blk.0.attn_q.weight.lora_a"] == [64, 4]


@pytest.mark.parametrize(
    "fields, refusal",
    [
        (dict(n_experts=4, n_experts_used=5, d_ff_exp=16), "n_experts_used 1 to n_experts"),
        (dict(n_experts=2000, n_experts_used=2, d_ff_exp=16), "n_experts 1 to 1024"),
        (dict(n_experts=4, n_experts_used=2, d_ff_exp=0), "d_ff_exp 1 to"),
        (dict(n_experts_used=2), "need n_experts"),
    ],
)
def test_a_mixture_of_experts_it_cannot_build_is_refused_in_one_line(fields, refusal):
    from test_gradients import TINY
    from toy.native.session import ModelDesc, Session

    cfg = toy.ModelConfig(**{**TINY.__dict__, **fields})
    with pytest.raises(toy.ToyError, match=refusal) as refused:
        Session("cpu", threads=1).realize(ModelDesc.from_scratch(cfg, toy.RecipeOptions(t_seq=8, t_batch=1)))
    assert "\n" not in str(refused.value)


def test_a_mixture_of_experts_trains_from_scratch():
    """ModelConfig's n_experts on a model made here: the loss falls on a
    repeated batch, and the router and the experts move."""
    from test_gradients import TINY
    from toy.recipes import FromScratch

    cfg = toy.ModelConfig(**{**TINY.__dict__, "n_experts": 4, "n_experts_used": 2, "d_ff_exp": 16})
    recipe = FromScratch("cpu", threads=2)
    recipe.realize(cfg, toy.RecipeOptions(t_seq=8, t_batch=2, seed=0))
    session = recipe.session
    names = ("blk.0.ffn_gate_inp.weight", "blk.0.ffn_up_exps.weight", "blk.1.ffn_down_exps.weight")
    before = {name: session.download(session.params()[name]) for name in names}
    batch = np.random.default_rng(0).integers(0, cfg.vocab, (2, 9)).astype(np.int32)
    positions = np.tile(np.arange(8, dtype=np.int32), (2, 1))
    losses = [recipe.step(batch[:, :-1], positions, batch[:, 1:], toy.adamw_hp(s, 1e-2), s == 1) for s in range(1, 21)]
    assert losses[-1] < 0.8 * losses[0]
    for name in names:
        assert not np.array_equal(session.download(session.params()[name]), before[name]), name


@pytest.mark.vulkan
def test_vulkan_refuses_the_experts_in_one_line(qwen3moe):
    from toy.recipes import LoRA

    _, path = qwen3moe
    with pytest.raises(toy.ToyError, match="mixture-of-experts layers run on the CPU only") as refused:
        LoRA("vulkan", threads=2).realize(path, None, 4, toy.RecipeOptions(t_seq=T, t_batch=1))
    assert "\n" not in str(refused.value)


def test_merging_the_adapter_keeps_the_experts_as_stored(tmp_path):
    """base + an attention adapter as one GGUF in the base's types: the
    experts copied as the file stores them (Q8_0), and llama.cpp runs the
    merged file to the adapter's logits (the merged matrices requantized:
    routed alike)."""
    from toy.formats.merge import merge_lora

    f32 = hf_to_gguf(hf_model(), tmp_path / "f32.gguf")
    path = quantize(f32, tmp_path / "qwen3moe-q8_0.gguf", "Q8_0")
    batch = ids(2)
    _, ours = trained_adapter(path, batch, tmp_path / "adapter.gguf", targets=ATTENTION)
    merged = merge_lora(path, tmp_path / "adapter.gguf", tmp_path / "merged.gguf", dtype="base")
    types = tensor_types(merged)
    assert types["blk.0.ffn_up_exps.weight"] == "Q8_0" and types["blk.1.attn_q.weight"] == "Q8_0"
    assert (merged.read_bytes() != path.read_bytes()) and tensor_types(path) == types
    theirs = llama_cpp_logits(merged, batch[0, :-1], f32_cache=True)
    assert_routed_alike(theirs, ours, llama_cpp_logits(path, batch[0, :-1], f32_cache=True))


def test_the_memory_plan_streams_the_experts_from_the_file(tmp_path):
    """The plan holds the file's pages but the experts' stacks, which a
    step reads as its tokens choose them and the kernel may drop: a 30 B
    MoE's 17 GB of experts would otherwise refuse a run that fits."""
    from toy.formats.gguf_file import experts_bytes
    from toy.recipes import LoRA

    f32 = hf_to_gguf(hf_model(), tmp_path / "f32.gguf")
    path = quantize(f32, tmp_path / "qwen3moe-q8_0.gguf", "Q8_0")
    stacks = sum(n for name, n in tensor_bytes(path).items() if name.endswith("_exps.weight"))
    assert experts_bytes(path) == stacks > 0 and experts_bytes(f32) > 0
    recipe = LoRA("cpu", threads=1)
    recipe.realize(path, None, 4, toy.RecipeOptions(t_seq=T, t_batch=1), targets=ATTENTION)
    plan = recipe.session.plan
    assert plan.base_streamed == stacks
    assert plan.base_read == path.stat().st_size - stacks - plan.parts.get("base_released", 0)
    assert "experts streamed from the file" in plan.describe()


def test_merging_an_expert_adapter_requantizes_the_experts_it_changed(tmp_path):
    """An adapter of the experts merged in the base's types: the experts
    it changed requantized to Q8_0, the rest copied as stored, and
    llama.cpp runs the merged file to the adapter's logits (routed alike)."""
    from toy.formats.merge import merge_lora

    f32 = hf_to_gguf(hf_model(hidden=256, expert_width=256), tmp_path / "f32.gguf")  # 64 wide: near-ties
    path = quantize(f32, tmp_path / "qwen3moe-q8_0.gguf", "Q8_0")
    batch = ids(2)
    _, ours = trained_adapter(path, batch, tmp_path / "adapter.gguf", targets=("up_exps",))
    merged = merge_lora(path, tmp_path / "adapter.gguf", tmp_path / "merged.gguf", dtype="base")
    assert tensor_types(merged) == tensor_types(path)
    before, after = tensor_bytes(path, data=True), tensor_bytes(merged, data=True)
    changed = {name for name in before if not np.array_equal(before[name], after[name])}
    assert changed == {"blk.0.ffn_up_exps.weight", "blk.1.ffn_up_exps.weight"}
    theirs = llama_cpp_logits(merged, batch[0, :-1], f32_cache=True)
    assert_routed_alike(theirs, ours, llama_cpp_logits(path, batch[0, :-1], f32_cache=True))


def tensor_bytes(path, data: bool = False) -> dict:
    from gguf import GGUFReader

    return {t.name: np.array(t.data) if data else int(t.n_bytes) for t in GGUFReader(path).tensors}
