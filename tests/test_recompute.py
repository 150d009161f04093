"""Activation recomputation (tnn_set_recompute, tinynn/graph/recompute.c): the
backward keeps only some blocks' inputs and computes the rest again. What a
user sees: the same loss and the same gradients, to the bit, in much less
memory."""

import numpy as np
import pytest

import toy
from toy.recipes import FromScratch, LoRA, ViTTiny

T_SEQ, T_BATCH = 24, 2


def token_batch(vocab: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, vocab, size=(T_BATCH, T_SEQ)).astype(np.int32)
    positions = np.tile(np.arange(T_SEQ, dtype=np.int32), (T_BATCH, 1))
    return tokens, positions, np.roll(tokens, -1, axis=1)


def two_steps(recipe, batch) -> tuple[list[float], np.ndarray, dict]:
    """Two training steps: the losses, the second step's gradients and what the step holds."""
    losses = [recipe.step(*batch, toy.adamw_hp(1, 1e-2), is_first=True)]
    losses.append(recipe.step(*batch, toy.adamw_hp(2, 1e-2), is_first=False))
    return losses, recipe.session.gradients().copy(), recipe.session.memory()


def from_scratch(arch: str, recompute: int, t_seq: int = T_SEQ, t_batch: int = T_BATCH, **shape):
    recipe = FromScratch("cpu", threads=2)
    cfg = toy.ModelConfig(arch=arch, vocab=96, d_model=48, n_layers=5, n_heads=4, n_kv_heads=2, d_ff=80, **shape)
    opts = toy.RecipeOptions(t_seq=t_seq, t_batch=t_batch, seed=3, init_scale=0.3, recompute=recompute)
    recipe.realize(cfg, opts)
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, 96, size=(t_batch, t_seq)).astype(np.int32)
    positions = np.tile(np.arange(t_seq, dtype=np.int32), (t_batch, 1))
    return two_steps(recipe, (tokens, positions, np.roll(tokens, -1, axis=1)))


@pytest.mark.parametrize("arch", ["llama", "llama-postnorm", "gpt2"])
@pytest.mark.parametrize("every", [1, 2, 99])
def test_recomputed_blocks_give_the_same_losses_and_gradients_to_the_bit(arch, every):
    losses, grads, memory = from_scratch(arch, 0)
    losses_again, grads_again, memory_again = from_scratch(arch, every)
    assert losses_again == losses
    assert np.array_equal(grads_again, grads)
    if every < 5:
        # (every >= the 5 layers: the first block's input alone is kept, and
        # the blocks are all recomputed at once, as much as keeping them)
        assert memory_again["graph"] < memory["graph"]


GEMMA_2_SHAPE = dict(
    head_dim=16,
    rope_neox=True,
    qk_norm=True,
    embd_scale=True,
    ffn_gelu=True,
    post_norms=True,
    swa_window=7,
    swa_period=2,
    rope_base_swa=10000.0,
    attn_softcap=50.0,
    final_softcap=30.0,
)


def test_a_gemma_shaped_model_recomputes_to_the_bit():
    """Sliding-window layers, soft caps, q/k norms and post-norms: the attention
    a kv head at a time, under both masks, gives the same bytes."""
    losses, grads, _ = from_scratch("llama", 0, **GEMMA_2_SHAPE)
    losses_again, grads_again, _ = from_scratch("llama", 2, **GEMMA_2_SHAPE)
    assert losses_again == losses
    assert np.array_equal(grads_again, grads)


def test_many_sequences_share_attention_pieces_to_the_bit():
    """9 sequences x 2 kv heads: 18 kv heads in at most 16 pieces, two a piece."""
    losses, grads, _ = from_scratch("llama", 0, t_seq=12, t_batch=9)
    losses_again, grads_again, _ = from_scratch("llama", 1, t_seq=12, t_batch=9)
    assert losses_again == losses
    assert np.array_equal(grads_again, grads)


def test_at_long_context_the_attention_output_is_kept_too_to_the_bit():
    """128 tokens against 5 layers x 12-wide heads: one layer's scores outweigh
    every layer's attention output, which is then kept (graph/recompute.c)."""
    losses, grads, _ = from_scratch("llama", 0, t_seq=128)
    losses_again, grads_again, _ = from_scratch("llama", 1, t_seq=128)
    assert losses_again == losses
    assert np.array_equal(grads_again, grads)


def test_attention_holds_one_kv_head_of_scores_at_a_time():
    """At 512 tokens one layer's scores, 4 heads x 2 sequences, are 8 MB a tensor.
    Without recomputation the step keeps every layer's; recomputed, the
    backward of a block holds a kv head's group at a time (2 query heads of
    one sequence: a quarter of that per tensor, three of them: the softmax,
    its gradient and the scores' gradient), beside the kept inputs and the mask."""
    t = 512
    scores_all_heads = 4 * T_BATCH * t * t * 4
    whole = from_scratch("llama", 0, t_seq=t)[2]["graph"]
    recomputed = from_scratch("llama", 1, t_seq=t)[2]["graph"]
    assert whole > 5 * scores_all_heads
    assert recomputed < 2 * scores_all_heads


def test_keeping_every_block_input_holds_a_fraction_of_the_activations():
    memory = {every: from_scratch("llama", every)[2]["graph"] for every in (0, 1, 2, 5)}
    # every block's input kept: one block's activations at a time
    assert memory[1] < 0.5 * memory[0]
    # fewer inputs kept, more blocks' activations held at once; only the
    # first block's (5): all five recomputed at once at the end
    assert memory[1] < memory[2] < memory[5]


def lora_on_smollm2(smollm2, recompute: int):
    recipe = LoRA("cpu", threads=2)
    opts = toy.RecipeOptions(t_seq=64, t_batch=2, recompute=recompute)
    recipe.realize(smollm2, None, 4, opts, targets=("q", "k", "v", "o", "gate", "up", "down"))
    rng = np.random.default_rng(1)
    tokens = rng.integers(0, 49152, size=(2, 64)).astype(np.int32)
    positions = np.tile(np.arange(64, dtype=np.int32), (2, 1))
    return two_steps(recipe, (tokens, positions, np.roll(tokens, -1, axis=1)))


def test_lora_on_a_quantized_gguf_recomputes_through_the_fast_copies_and_fused_head(smollm2):
    losses, grads, memory = lora_on_smollm2(smollm2, 0)
    losses_again, grads_again, memory_again = lora_on_smollm2(smollm2, 1)
    assert losses_again == losses
    assert np.array_equal(grads_again, grads)
    # SmolLM2's 30 blocks: one block's activations held instead of thirty
    assert memory_again["graph"] < 0.25 * memory["graph"]


def test_the_adapters_inputs_are_computed_again_not_kept(smollm2, monkeypatch):
    """Without block recomputation the backward still recomputes what one
    elementwise pass makes from what it keeps anyway: each block's two normed
    inputs (q, k, v's adapters; gate and up's) and the gated product (down's),
    [576 or 1536, 128 tokens] floats in 30 blocks, less the first block's
    normed input, computed from the embedding rows the backward does not keep."""
    losses, grads, memory = lora_on_smollm2(smollm2, 0)
    monkeypatch.setenv("TNN_KEEP_ACTIVATIONS", "1")
    losses_kept, grads_kept, memory_kept = lora_on_smollm2(smollm2, 0)
    assert losses == losses_kept
    assert np.array_equal(grads, grads_kept)
    tokens = 2 * 64
    inputs = (30 * (2 * 576 + 1536) - 576) * tokens * 4
    assert memory_kept["graph"] - memory["graph"] >= 0.9 * inputs


def vit(recompute: int):
    recipe = ViTTiny("cpu", threads=2)
    cfg = toy.ViTConfig(n_layers=4, d_model=32, n_heads=4)
    recipe.realize(cfg, t_batch=3, seed=2, init_scale=0.2, recompute=recompute)
    rng = np.random.default_rng(0)
    patches = rng.standard_normal((3, cfg.n_patches, cfg.patch_dim)).astype(np.float32)
    labels = np.array([1, 7, 3], dtype=np.int32)
    return two_steps(recipe, (patches, labels))


def test_a_vit_recomputes_its_blocks_too():
    losses, grads, _ = vit(0)
    losses_again, grads_again, _ = vit(1)
    assert losses_again == losses
    assert np.array_equal(grads_again, grads)


def test_a_negative_block_count_is_refused():
    recipe = FromScratch("cpu", threads=1)
    cfg = toy.ModelConfig(vocab=32, d_model=16, n_layers=2, n_heads=2)
    with pytest.raises(toy.ToyError, match="recompute every -2 blocks"):
        recipe.realize(cfg, toy.RecipeOptions(t_seq=8, t_batch=1, recompute=-2))
