"""Model and recipe options, as plain dataclasses."""

from __future__ import annotations

from dataclasses import asdict, dataclass

ARCHITECTURES = ("llama", "gpt2")
# the layer kinds that carry a state from token to token (tinynn's tnn_layer_recurrent)
RECURRENT_KINDS = "cdmp"


@dataclass
class ModelConfig:
    """The shape of a token model, whatever its architecture. Its fields are
    tinynn's struct tnn_model_config's, by the same names (bool for an
    int32_t flag), but for the run's (RecipeOptions: t_seq, t_batch, seed,
    init_scale) and the trainer's own (attn_split); `arch` is the desc's.
    native/session.py's config_to_c and config_from_c cross the seam by
    these names, and tests/test_config_seam.py holds the two sets equal:
    a field is added here and in tinynn.h, nowhere else.

    The architecture: the llama family (llama, Qwen2/3 and Gemma 3 through
    the fields below), "llama-postnorm", or a GPT-2 (arch "gpt2": LayerNorm,
    GELU MLP, learned positions; n_kv_heads = n_heads, rope_base unused,
    norm_eps is the LayerNorm epsilon)."""

    vocab: int = 256
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    n_kv_heads: int = 2
    d_ff: int = 0  # 0: the llama default, about 8/3 d_model rounded to 32
    rope_base: float = 10000.0
    norm_eps: float = 1e-5
    donor_d_in: int = 0  # warm start: the donor embedding's width (0: no donor)
    arch: str = "llama"
    head_dim: int = 0  # 0: d_model / n_heads (Qwen3's heads are wider)
    rope_neox: bool = False  # RoPE on the pairs (i, i + head_dim/2): Qwen2, Qwen3
    qk_norm: bool = False  # RMSNorm on each head of q and k: Qwen3, Gemma 3
    # Gemma: embeddings x sqrt(d_model), GELU gate, norms after attention and MLP,
    # sliding-window local layers (every swa_period-th layer global)
    embd_scale: bool = False
    ffn_gelu: bool = False
    post_norms: bool = False
    swa_window: int = 0
    swa_period: int = 0
    rope_base_swa: float = 0.0
    # Llama 3.1-3.3: RoPE's pair i turns rope_freqs[i] times slower (rope_freqs.weight
    # [head_dim/2], frozen: a GGUF's own, or uploaded to a model made here)
    rope_freqs: bool = False
    no_rope_period: int = 0  # SmolLM3: every fourth layer without RoPE
    attn_scale: float = 0.0  # 0: 1/sqrt(head width); Gemma's 27 B: 1/sqrt(d_model/n_heads)
    # Gemma 2: attention scores and logits capped to cap * tanh(x / cap) (0: no cap)
    attn_softcap: float = 0.0
    final_softcap: float = 0.0
    # Phi-3: q/k/v stored as one attn_qkv, gate/up as one ffn_up (tinynn's fused_qkv, fused_gate_up)
    fused_qkv: bool = False
    fused_gate_up: bool = False
    # Phi-4-mini: RoPE rotates the first rope_dim dims of each head (0: all of them)
    rope_dim: int = 0
    # LongRoPE (Phi-3.5, the 128k Phi-3 models, Phi-4-mini), with rope_freqs: two factor
    # sets, rope_factors_short.weight up to rope_orig_ctx tokens of context, else _long
    rope_orig_ctx: int = 0
    rope_attn_factor: float = 0.0  # 0: 1; else RoPE's cos and sin times it (LongRoPE)
    untied: bool = False  # a separate output projection instead of the embedding
    qkv_bias: bool = False  # q, k and v projections with biases (Qwen2)
    # hybrids: a letter per layer, 'a' attention, 'c' a gated short convolution of
    # conv_kernel taps (LFM2), 'd' a delta net (Qwen 3.5), 'm' Mamba-2 (Granite 4),
    # 'p' attention and Mamba-2 side by side (Falcon-H1), 'f' a feed-forward alone
    # (with one_sublayer) ("": every layer attends)
    conv_kernel: int = 0
    layer_kinds: str = ""
    # Qwen 3.5: gated attention layers ('a'), and 'd' layers of the gated delta rule with
    # ssm_groups key and ssm_heads value heads of ssm_state each
    attn_gate: bool = False
    ssm_state: int = 0
    ssm_groups: int = 0
    ssm_heads: int = 0
    # Granite 4 ('m': Mamba-2 layers): ssm_heads scan heads over an inner width of ssm_inner
    # ('d' too: ssm_state x ssm_heads), and Granite's multipliers (0: 1)
    ssm_inner: int = 0
    embd_multiplier: float = 0.0
    residual_multiplier: float = 0.0
    logit_scaling: float = 0.0  # the logits divided by it
    # Nemotron-H: each layer one sub-layer after attn_norm ('a', 'm' without a feed-forward;
    # 'f' the feed-forward alone), and a feed-forward of ffn_down(relu(ffn_up x)^2)
    one_sublayer: bool = False
    ffn_relu_sq: bool = False
    # Falcon-H1 ('p': attention and Mamba-2 side by side): files without ssm_norm
    mamba_no_norm: bool = False
    # Qwen3-MoE: every feed-forward a mixture of n_experts SwiGLU experts of width d_ff_exp,
    # the router's top n_experts_used (their weights rescaled to sum to 1 with experts_norm)
    n_experts: int = 0
    n_experts_used: int = 0
    d_ff_exp: int = 0
    experts_norm: bool = False
    # a shared expert of this width beside the routed ones, gated by sigmoid(w x) with
    # shexp_gate (Qwen 3.5 MoE), else added as it is (Granite 4 MoE)
    d_ff_shexp: int = 0
    shexp_gate: bool = False
    # RoPE's context extension (0: none): every angle divided by rope_scale, or with rope_yarn
    # YaRN's ramp between the pairs that turn rope_yarn_beta_slow and rope_yarn_beta_fast times
    # over rope_yarn_ctx tokens (its cos and sin scaled, over 1 + 0.1 rope_yarn_log_mul
    # ln(rope_scale) where that is set); Ministral 3's attention temperature: queries times
    # 1 + attn_temp_scale ln(1 + floor(pos / rope_yarn_ctx))
    rope_scale: float = 0.0
    rope_yarn: bool = False
    rope_yarn_ctx: int = 0
    rope_yarn_beta_fast: float = 0.0
    rope_yarn_beta_slow: float = 0.0
    rope_yarn_log_mul: float = 0.0
    attn_temp_scale: float = 0.0
    # gpt-oss: sliding-window layers' RoPE extended too (swa_rope_scaled), a learned sink logit
    # per head in each softmax, a bias on the attention's output, and its experts (experts_oai:
    # biases on the router and the experts, the clamped SwiGLU g sigmoid(1.702 g) (u + 1))
    swa_rope_scaled: bool = False
    attn_sinks: bool = False
    attn_out_bias: bool = False
    experts_oai: bool = False

    def __post_init__(self):
        if self.arch == "gpt2":
            self.n_kv_heads = self.n_heads
            self.d_ff = self.d_ff or 4 * self.d_model
        if self.d_ff == 0:
            self.d_ff = max(32, int(round(self.d_model * 8 / 3 / 32)) * 32)

    @property
    def head_width(self) -> int:
        """The width of one attention head."""
        return self.head_dim or self.d_model // self.n_heads

    @property
    def recurrent(self) -> bool:
        """Whether a layer carries a state from token to token (a convolution,
        a delta net, Mamba-2): such models decode only forward from where their
        state stands, and pack rows on the CPU only."""
        return bool(set(self.layer_kinds) & set(RECURRENT_KINDS))

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class RecipeOptions:
    """How a recipe realizes and trains a model."""

    t_seq: int = 64  # tokens per sequence
    t_batch: int = 4  # sequences per step
    weight_dtype: str = "f32"
    seed: int = 0
    init_scale: float = 0.02
    clip_norm: float = 0.0  # clip gradients to this global norm in the graph (0: off)
    precision: str = "f32"  # "bf16": the dense products' operands in bfloat16 (tnn_set_precision)
    recompute: int = 0  # k > 0: keep every k-th block's input, recompute the rest (tnn_set_recompute); -1: auto
    packed: bool = False  # rows hold several samples, each from position 0 (tnn_set_packed_rows)
    evaluates: bool = True  # the run also evaluates (forward graph, its logits whole): counted in the memory plan

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class ViTConfig:
    """The shape of a ViT image classifier: square images of image_size
    pixels and `channels` channels, cut into square patches of `patch`."""

    n_classes: int = 10
    image_size: int = 8
    patch: int = 2
    channels: int = 1
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 0  # 0: 4 d_model
    ln_eps: float = 1e-6

    def __post_init__(self):
        self.d_ff = self.d_ff or 4 * self.d_model

    @property
    def patch_dim(self) -> int:
        return self.patch * self.patch * self.channels

    @property
    def n_patches(self) -> int:
        return (self.image_size // self.patch) ** 2

    def to_dict(self) -> dict:
        return asdict(self)
