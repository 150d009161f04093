"""Attention under --precision bf16 as one node each way (tinynn/graph/attention.c
on the attention_bf16 kernels): what a user sees is a step that trains as
ggml's attention does, to bfloat16's rounding, holds no sequence x sequence
matrix, and gives the same bytes with its blocks recomputed."""

import numpy as np
import pytest

import toy
from toy.native.library import library
from toy.recipes import FromScratch

UNFUSED = "qgemm,fgemm,head_loss,adamw,fgemm_bf16,activations"  # every kernel but attention_bf16

pytestmark = pytest.mark.skipif(
    not library("cpu").tnn_cpu_kernel_runs(b"attention_bf16", b"avx512"),
    reason="this CPU lacks AVX512-BF16 for the attention_bf16 kernels",
)


def two_steps(precision: str, t_seq: int, recompute: int = 0, t_batch: int = 2):
    """Two steps of a llama with 32-wide heads in groups of 2: the losses,
    the first step's gradients (before AdamW's first update, which moves
    each weight by about the learning rate whatever its gradient's size)
    and what the step holds."""
    recipe = FromScratch("cpu", threads=2)
    cfg = toy.ModelConfig(arch="llama", vocab=96, d_model=128, n_layers=3, n_heads=4, n_kv_heads=2, d_ff=160)
    opts = toy.RecipeOptions(t_seq=t_seq, t_batch=t_batch, seed=3, recompute=recompute, precision=precision)
    recipe.realize(cfg, opts)
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, 96, size=(t_batch, t_seq)).astype(np.int32)
    positions = np.tile(np.arange(t_seq, dtype=np.int32), (t_batch, 1))
    batch = (tokens, positions, np.roll(tokens, -1, axis=1))
    losses = [recipe.step(*batch, toy.adamw_hp(1, 1e-2), is_first=True)]
    grads = recipe.session.gradients().copy()
    losses.append(recipe.step(*batch, toy.adamw_hp(2, 1e-2), is_first=False))
    return losses, grads, recipe.session.memory()


def test_fused_attention_trains_as_ggmls_attention_does(monkeypatch):
    """100 tokens (a block and a part): the losses and gradients of the fused
    step are the float32 step's to bfloat16's rounding, as close as ggml's
    own attention under bf16 is, and not its bytes (the kernels did run)."""
    f32_losses, f32_grads, _ = two_steps("f32", 100)
    losses, grads, _ = two_steps("bf16", 100)
    monkeypatch.setenv("TNN_CPU_KERNELS", UNFUSED)
    ggml_losses, ggml_grads, _ = two_steps("bf16", 100)
    assert not np.array_equal(grads, ggml_grads)

    def distance(g):
        return np.linalg.norm(g - f32_grads) / np.linalg.norm(f32_grads)

    # measured: the fused step's gradients 0.61% from float32's, ggml's attention's 0.53%
    assert distance(grads) <= 1e-2 and distance(ggml_grads) <= 1e-2
    for ours, theirs in zip(losses, f32_losses, strict=True):
        assert abs(ours - theirs) <= 2e-3 * theirs


# 64 tokens: the attention's forward runs again in the backward; 150 (past
# 3 layers x 32-wide heads): its output is kept instead (graph/recompute.c)
@pytest.mark.parametrize("t_seq", [64, 150])
def test_recomputed_blocks_keep_the_fused_steps_bytes(t_seq):
    losses, grads, _ = two_steps("bf16", t_seq)
    losses_again, grads_again, _ = two_steps("bf16", t_seq, recompute=1)
    assert losses_again == losses
    assert np.array_equal(grads_again, grads)


def test_the_steps_memory_grows_with_the_sequence_not_its_square(monkeypatch):
    """Twice the tokens: the fused step holds twice the memory (every tensor
    it keeps is tokens x width), ggml's attention about four times (each
    head's scores, softmax and their gradients are tokens x tokens; measured 3.4)."""

    def graph(t):
        return two_steps("bf16", t, t_batch=1)[2]["graph"]

    assert graph(1024) <= 2.1 * graph(512)
    monkeypatch.setenv("TNN_CPU_KERNELS", UNFUSED)
    assert graph(1024) >= 3 * graph(512)
