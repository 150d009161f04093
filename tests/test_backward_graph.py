"""How the backward pass is expressed: as matrix products, not out_prod.

ggml's stock autodiff writes the gradients of every matrix product as
out_prod, which runs at about half the speed of the matmul kernels and exists
for F32 only on CUDA. vendor/patches/0002 turns them into mul_mat of
transposed copies, and tinynn/models/frozen_copies.c gives a frozen base a transposed copy
made once; on an x86-64 with AVX2 or later, the products with the frozen base run
on tinynn's packed integer kernels (tinynn/cpu/qgemm_*.c) as custom nodes, and the
frozen head and the cross-entropy become one node (tinynn/cpu/head_loss_*.c).
These tests read the ops of a real training step.
"""

from pathlib import Path

import numpy as np
import pytest

import toy
from toy.core.ffi import ffi
from toy.native.library import library
from toy.recipes import FromScratch, LoRA


def cpu_has_packed_products() -> bool:
    """Whether this CPU runs tinynn's packed integer products (tinynn/cpu/qgemm_*.c:
    AVX2 and later on x86-64), as the kernel layer itself chooses them."""
    answer = library("cpu").tnn_cpu_kernel_choice(b"qgemm")
    return answer != ffi.NULL and ffi.string(answer).decode() != "none"


def profiled_ops(recipe) -> dict[str, int]:
    """op name + src0 type -> node count, from one profiled training step."""
    t = recipe.opts.t_seq
    ids = np.zeros((recipe.opts.t_batch, t), dtype=np.int32)
    pos = np.tile(np.arange(t, dtype=np.int32), (recipe.opts.t_batch, 1))
    recipe.step(ids, pos, ids, toy.adamw_hp(1, 1e-3), is_first=True)
    recipe.session.reset_grads_only()
    return {key: count for _, count, key in recipe.session.profile_step()}


def test_from_scratch_backward_has_no_out_prod():
    recipe = FromScratch("cpu", threads=1)
    recipe.realize(
        toy.ModelConfig(vocab=64, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2),
        toy.RecipeOptions(t_seq=16, t_batch=2),
    )
    ops = profiled_ops(recipe)
    assert not [k for k in ops if k.startswith("OUT_PROD")], ops
    assert ops["MUL_MAT f32"] > 0


def test_lora_on_a_quantized_base_trains_through_transposed_copies(smollm2):
    recipe = LoRA("cpu", threads=2)
    recipe.realize(smollm2, None, 4, toy.RecipeOptions(t_seq=8, t_batch=1), targets=("q", "v"))
    ops = profiled_ops(recipe)
    assert not [k for k in ops if k.startswith("OUT_PROD")], ops
    product = "CUSTOM" if cpu_has_packed_products() else "MUL_MAT"
    assert ops[f"{product} q4_1"] == 30 * 7  # the forward: the stored Q4_1 matrices (packed)
    assert ops[f"{product} q8_0"] >= 29 * 7  # the input gradients: their Q8_0 transposes
    assert ops["MUL_MAT f32"] > 0  # the adapters' rank-4 products


def test_without_packed_products_the_base_forwards_through_ggml(smollm2, monkeypatch):
    monkeypatch.setenv("TNN_CPU_KERNELS", "fgemm,adamw")  # no qgemm (nor head_loss, which needs it)
    recipe = LoRA("cpu", threads=2)
    recipe.realize(smollm2, None, 4, toy.RecipeOptions(t_seq=8, t_batch=1), targets=("q", "v"))
    ops = profiled_ops(recipe)
    assert not [k for k in ops if k.startswith(("OUT_PROD", "CUSTOM q"))], ops
    assert ops["MUL_MAT q4_1"] == 30 * 7


def test_lora_with_the_stored_base_keeps_it_in_place(smollm2):
    """No copies: both products through each frozen matrix read it as stored.
    Where tinynn's kernels run, on qgemm with the panels made inside each
    product (tinynn/models/stored_panels.c): the forward of all 30 x 7
    matrices and the input gradient of every one but the first block's q, k
    and v (nothing before them trains); the Q8_0 head, which alone keeps its
    copies, fused into head_loss. Else ggml's products forward and its
    out_prod back."""
    recipe = LoRA("cpu", threads=2)
    recipe.realize(smollm2, None, 4, toy.RecipeOptions(t_seq=8, t_batch=1), targets=("q",), base_compute="stored")
    ops = profiled_ops(recipe)
    if cpu_has_packed_products():
        assert ops["CUSTOM q4_1"] == 30 * 7 + 30 * 7 - 3 and ops["CUSTOM q8_0"] == 1, ops
    else:
        assert ops["MUL_MAT q4_1"] == 30 * 7
        assert ops["OUT_PROD q4_1"] == 30 * 7 - 3 and ops["OUT_PROD q8_0"] == 1, ops


def test_q4_1_products_over_many_tokens_match_one_token_at_a_time(smollm2):
    """A prompt runs its Q4_1 matrix products over all its tokens at once
    (llamafile sgemm, vendor/patches/0004); one token at a time runs ggml's
    vec_dot. The two must agree to the bit: the model quantizes activations
    to 8 bits, so any rounding difference grows through the layers."""
    prompt = [1, 504, 3458, 282, 260, 2489, 30, 378, 1115, 314, 253, 1352]
    batched = toy.load_model(smollm2, threads=1)
    batched.session.kv_init(32)
    at_once = batched.session.decode(prompt, 0, batched.cfg.vocab)
    stepped = toy.load_model(smollm2, threads=1)
    stepped.session.kv_init(32)
    for position, token in enumerate(prompt):
        one_by_one = stepped.session.decode([token], position, stepped.cfg.vocab)
    np.testing.assert_array_equal(at_once, one_by_one)


def test_fast_and_stored_base_give_the_same_adapter_gradients(smollm2):
    """The transposed copies change how the input gradients are computed, not
    what they are: on 256 tokens of text every adapter gradient points where
    the stored-weights path's does, up to 8-bit rounding noise (measured:
    cosine min 0.972, median 0.997). A Q8_0 transpose of the output head gave
    min 0.17, median 0.82: its gradient spans too many decades for 8 bits."""
    from toy.text.tokenizer import GGUFTokenizer

    text = (Path(__file__).parents[1] / "corpus" / "default.txt").read_text()[:6000]
    ids = np.array(GGUFTokenizer.from_gguf(smollm2).encode(text)[:257], dtype=np.int32)
    grads = {}
    for base_compute in ("stored", "fast"):
        recipe = LoRA("cpu", threads=2)
        recipe.realize(
            smollm2,
            None,
            8,
            toy.RecipeOptions(t_seq=256, t_batch=1),
            targets=("q", "v", "down"),
            base_compute=base_compute,
        )
        e = recipe.session
        rng = np.random.default_rng(0)  # B != 0, so that A has a gradient too
        for name, h in recipe.adapters().items():
            if name.endswith(".lora_b"):
                e.upload(h, rng.normal(0, 0.01, e.info(h).shape).astype(np.float32))
        recipe._upload_batch(ids[None, :-1], np.arange(256, dtype=np.int32)[None], ids[None, 1:])
        e.reset()
        e.compute_gradients()
        grads[base_compute] = {name: e.download(e.grad_of(h)) for name, h in recipe.adapters().items()}
    cosines = [
        float(np.dot(grads["fast"][n].ravel(), g.ravel()) / (np.linalg.norm(grads["fast"][n]) * np.linalg.norm(g)))
        for n, g in grads["stored"].items()
    ]
    assert min(cosines) > 0.95 and np.median(cosines) > 0.99, (min(cosines), np.median(cosines))


def adapter_gradients(smollm2, labels: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
    """The loss and every adapter gradient of one LoRA step on random tokens."""
    batch, t = labels.shape
    recipe = LoRA("cpu", threads=2)
    recipe.realize(smollm2, None, 8, toy.RecipeOptions(t_seq=t, t_batch=batch), targets=("q", "v", "down"))
    e = recipe.session
    rng = np.random.default_rng(0)  # B != 0, so that A has a gradient too
    for name, h in recipe.adapters().items():
        if name.endswith(".lora_b"):
            e.upload(h, rng.normal(0, 0.02, e.info(h).shape).astype(np.float32))
    ids = rng.integers(0, recipe.cfg.vocab, size=(batch, t)).astype(np.int32)
    recipe._upload_batch(ids, np.tile(np.arange(t, dtype=np.int32), (batch, 1)), labels)
    e.reset()
    e.compute_gradients()
    return float(e.download(e.loss)), {n: e.download(e.grad_of(h)) for n, h in recipe.adapters().items()}


@pytest.mark.skipif(not cpu_has_packed_products(), reason="the fused head needs the packed products")
def test_lora_fuses_the_frozen_head_and_the_loss_with_the_same_gradients(smollm2, monkeypatch):
    """The logits [vocab, tokens] and their gradient are never held (at batch
    4 x 256 that is 402 MB of a 1.3 GB graph), and the gradients are those
    of the unfused graph up to int8 rounding (measured: cosine min 0.9994),
    prompt tokens masked (-1) and a fully masked sequence included."""
    recipe = LoRA("cpu", threads=2)
    recipe.realize(smollm2, None, 4, toy.RecipeOptions(t_seq=8, t_batch=1), targets=("q", "v"))
    ops = profiled_ops(recipe)
    assert not [k for k in ops if k.startswith("CROSS_ENTROPY")], ops

    rng = np.random.default_rng(1)
    labels = rng.integers(0, 49152, size=(4, 64)).astype(np.int32)
    labels[:, :32] = -1  # the prompts
    labels[1] = -1  # a padding row
    fused_loss, fused = adapter_gradients(smollm2, labels)
    monkeypatch.setenv("TNN_CPU_KERNELS", "qgemm,fgemm,adamw")  # all but head_loss
    loss, unfused = adapter_gradients(smollm2, labels)
    assert fused_loss == pytest.approx(loss, rel=1e-5)
    cosines = [
        float(np.dot(fused[n].ravel(), g.ravel()) / (np.linalg.norm(fused[n]) * np.linalg.norm(g)))
        for n, g in unfused.items()
    ]
    assert min(cosines) > 0.99, min(cosines)
