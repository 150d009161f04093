"""What a model will hold in memory, estimated before anything is built, so
that a configuration the machine cannot hold is refused with the figures
(toy.core.machine.check_fits) instead of ending in the out-of-memory killer.

The estimates count what certainly is allocated -- F32 weights and their
gradients and AdamW moments, the activations the backward keeps, the
logits -- and leave out what is small or uncertain, so that they err low:
a refusal is always right, an acceptance may still meet a tight machine.
"""

from __future__ import annotations

F32 = 4


def token_params(cfg, untied: bool = False) -> int:
    """The parameter count of a llama-family token model of cfg's shape."""
    d, ff = cfg.d_model, cfg.d_ff
    q, kv = cfg.n_heads * cfg.head_width, (cfg.n_kv_heads or cfg.n_heads) * cfg.head_width
    per_layer = 2 * d * q + 2 * d * kv + 3 * d * ff + 2 * d
    return cfg.vocab * d * (2 if untied else 1) + cfg.n_layers * per_layer + d


def token_activation_bytes(cfg, t_seq: int, t_batch: int) -> int:
    """What one training step of t_batch sequences of t_seq tokens keeps:
    per token and layer the block's inputs, norms, q/k/v/o, the MLP's three
    d_ff-wide tensors and the attention rows, forward and their gradients;
    and the logits with their gradient."""
    tokens = t_seq * t_batch
    activations = tokens * cfg.n_layers * (12 * cfg.d_model + 6 * cfg.d_ff + 3 * cfg.n_heads * t_seq)
    return F32 * (activations + 3 * tokens * cfg.vocab)


def token_training_bytes(cfg, t_seq: int, t_batch: int, untied: bool = False) -> int:
    """Every weight trained: weights, gradients and two AdamW moments, plus the activations."""
    return 4 * F32 * token_params(cfg, untied) + token_activation_bytes(cfg, t_seq, t_batch)


def vit_training_bytes(cfg, t_batch: int) -> int:
    """A ViT's weights (x4 with gradients and moments) and its step's activations."""
    d, ff, tokens = cfg.d_model, cfg.d_ff, (cfg.n_patches + 1) * t_batch
    params = cfg.patch_dim * d + cfg.n_layers * (4 * d * d + 2 * d * ff) + d * cfg.n_classes
    activations = tokens * cfg.n_layers * (12 * d + 4 * ff + 3 * cfg.n_heads * (cfg.n_patches + 1))
    return F32 * (4 * params + activations)


def kv_cache_bytes(cfg, n_ctx: int) -> int:
    """Keys and values (F32) of every layer for n_ctx positions."""
    return 2 * F32 * cfg.n_layers * n_ctx * (cfg.n_kv_heads or cfg.n_heads) * cfg.head_width
