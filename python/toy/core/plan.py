"""What a model will hold in memory, estimated before anything is built, so
that a configuration the machine cannot hold is refused with the figures
(toy.core.machine.check_fits) instead of ending in the out-of-memory killer.

The estimates count what certainly is allocated -- F32 weights and their
gradients and AdamW moments, the activations the backward keeps, the
logits -- and leave out what is small or uncertain, so that they err low:
a refusal is always right, an acceptance may still meet a tight machine.
"""

from __future__ import annotations

from dataclasses import dataclass

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


# ---- a measured plan (toy.native.session.plan_memory) ----------------------

MB = 2**20
RECOMPUTE_AUTO = -1  # RecipeOptions.recompute: let the plan choose (--recompute auto)


def _proc_status(key: str) -> int:
    """A memory figure of this process from /proc/self/status, in bytes; 0 where unknown."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def process_rss() -> int:
    """What this process holds now (VmRSS), 0 where unknown."""
    return _proc_status("VmRSS")


def peak_rss() -> int:
    """The most this process has held (VmHWM), 0 where unknown."""
    return _proc_status("VmHWM")


@dataclass
class MemoryPlan:
    """What a training run will hold at its peak, before anything is allocated:
    a measuring session's parts (tnn_training_memory: the graph allocator's
    buffer, the weights trained, gradients and moments, a base's fast copies),
    plus the base file's pages a step reads (mapped: the file, less what the
    copies replace, less a mixture of experts' stacks, which the kernel
    streams) and what the process holds already."""

    recompute: int  # blocks per kept input (0: every activation kept)
    parts: dict
    base_file: int = 0  # the mapped GGUF's size (0: no base)
    process: int = 0
    evaluates: bool = True  # the forward graph runs too: the allocator's buffer grows to its size
    built_rss: int = 0  # what the process held right after build (Session.build)
    # of base_file, a mixture of experts' stacks: read a step as the tokens choose them,
    # and dropped and read again by the kernel under pressure, never held whole
    base_streamed: int = 0

    def count_loaded_since_build(self) -> None:
        """Add what the process took since the step was built (the data, a tokenizer) to its part."""
        if self.built_rss:
            self.process += max(process_rss() - self.built_rss, 0)
            self.built_rss = 0

    @property
    def base_read(self) -> int:
        return max(self.base_file - self.base_streamed - self.parts.get("base_released", 0), 0)

    @property
    def step(self) -> int:
        """The graph allocator's buffer: the training step's, or the forward's where larger and run."""
        return max(self.parts["graph"], self.parts["forward"] if self.evaluates else 0)

    @property
    def new_bytes(self) -> int:
        """What the run adds to the process."""
        p = self.parts
        return self.step + p["params"] + p["optimizer"] + p["base_copies"] + p["overhead"] + self.base_read

    @property
    def total(self) -> int:
        return self.process + self.new_bytes

    def describe(self) -> str:
        p = self.parts
        recompute = {0: "off", 1: "blocks"}.get(self.recompute, str(self.recompute))
        pieces = [
            f"step {(self.step + p['overhead']) / MB:,.0f}",
            f"trained {(p['params'] + p['optimizer']) / MB:,.0f}",
        ]
        if self.base_file:
            pieces += [f"base read {self.base_read / MB:,.0f}", f"base copies {p['base_copies'] / MB:,.0f}"]
        if self.base_streamed:
            pieces.append(f"experts streamed from the file {self.base_streamed / MB:,.0f}")
        pieces.append(f"process {self.process / MB:,.0f}")
        return f"planned peak memory {self.total / MB:,.0f} MB ({', '.join(pieces)} MB; recompute {recompute})"
