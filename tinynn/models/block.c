/* One llama-family transformer block: pre-norm attention and a pre-norm
 * gated MLP, each with a residual connection, and optional LoRA adapters on
 * its projections. The family's variants are config flags: q/k/v biases
 * (Qwen2), per-head q/k norms (Qwen3, Gemma 3), NEOX RoPE, a GELU gate, norms
 * after attention and MLP and sliding-window local layers (Gemma 2, 3),
 * soft-capped attention scores (Gemma 2), layers without RoPE (SmolLM3),
 * gated short convolutions in place of attention (LFM2's 'c' layers), the
 * gated delta rule (Qwen 3.5's 'd'), Mamba-2 (Granite 4's 'm'), both
 * attention and Mamba-2 on one input (Falcon-H1's 'p'), and layers of one
 * sub-layer each (Nemotron-H: one_sublayer, 'f' a feed-forward alone). */
#include "models/models.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char * const SLOT_NAMES[TNN_LORA_SLOTS] = {
    "attn_q",
    "attn_k",
    "attn_v",
    "attn_output",
    "ffn_gate",
    "ffn_up",
    "ffn_down",
    "shortconv.in_proj",
    "shortconv.out_proj",
    "attn_qkv",
    "attn_gate",
    "ssm_out",
    "ssm_in",
    "ffn_gate_exps",
    "ffn_up_exps",
    "ffn_down_exps",
    "ffn_gate_shexp",
    "ffn_up_shexp",
    "ffn_down_shexp",
};

const char * tnn_lora_slot_name(int slot) { return SLOT_NAMES[slot]; }

struct ggml_tensor ** tnn_block_weight_field(struct tnn_block * b, int slot) {
    struct ggml_tensor ** const fields[TNN_LORA_SLOTS] = {
        &b->wq,      &b->wk,       &b->wv,           &b->wo,         &b->w_gate,       &b->w_up,   &b->w_down,
        &b->conv_in, &b->conv_out, &b->ssm_qkv,      &b->ssm_gate,   &b->ssm_out,      &b->ssm_in, &b->moe.gate,
        &b->moe.up,  &b->moe.down, &b->w_gate_shexp, &b->w_up_shexp, &b->w_down_shexp,
    };
    return fields[slot];
}

struct ggml_tensor * tnn_block_weight(const struct tnn_block * b, int slot) {
    return *tnn_block_weight_field((struct tnn_block *) b, slot);   /* read only: one table */
}

char tnn_layer_kind(const tnn_model_config * cfg, int32_t layer) {
    return cfg->layer_kinds[0] == '\0' ? 'a' : cfg->layer_kinds[layer];
}

bool tnn_layer_recurrent(const tnn_model_config * cfg, int32_t layer) {
    const char kind = tnn_layer_kind(cfg, layer);
    return kind == 'c' || kind == 'd' || kind == 'm' || kind == 'p';
}

bool tnn_model_recurrent(const tnn_model_config * cfg) {
    for (int32_t l = 0; l < cfg->n_layers; ++l) {
        if (tnn_layer_recurrent(cfg, l)) {
            return true;
        }
    }
    return false;
}

/* Whether a layer of kind has a feed-forward: every layer, but with
 * one_sublayer (Nemotron-H) only the 'f' layers. */
static bool kind_has_ffn(const tnn_model_config * cfg, char kind) { return !cfg->one_sublayer || kind == 'f'; }

/* Whether a layer of kind has the slot's weight. */
static bool kind_has_slot(const tnn_model_config * cfg, char kind, int slot) {
    if (slot >= TNN_LORA_SLOT_GATE && slot <= TNN_LORA_SLOT_DOWN) {
        /* a mixture of experts has no dense gate, up and down */
        return kind_has_ffn(cfg, kind) && cfg->n_experts == 0 && (slot != TNN_LORA_SLOT_GATE || !cfg->ffn_relu_sq);
    }
    if (tnn_lora_slot_experts(slot)) {
        return kind_has_ffn(cfg, kind) && cfg->n_experts > 0;
    }
    if (slot >= TNN_LORA_SLOT_GATE_SHEXP && slot <= TNN_LORA_SLOT_DOWN_SHEXP) {
        return kind_has_ffn(cfg, kind) && cfg->n_experts > 0 && cfg->d_ff_shexp > 0;
    }
    switch (kind) {
        case 'c': return slot == TNN_LORA_SLOT_CONV_IN || slot == TNN_LORA_SLOT_CONV_OUT;
        case 'd': return slot >= TNN_LORA_SLOT_SSM_QKV && slot <= TNN_LORA_SLOT_SSM_OUT;
        case 'm': return slot == TNN_LORA_SLOT_SSM_IN || slot == TNN_LORA_SLOT_SSM_OUT;
        case 'p': return slot <= TNN_LORA_SLOT_O || slot == TNN_LORA_SLOT_SSM_IN || slot == TNN_LORA_SLOT_SSM_OUT;
        case 'f': return false;
        default: return slot <= TNN_LORA_SLOT_O;
    }
}

uint32_t tnn_layer_targets(const tnn_model_config * cfg, int32_t layer) {
    if (cfg == NULL || cfg->n_layers < 1 || cfg->n_layers > TNN_MAX_LAYERS || layer < 0 ||
        layer >= cfg->n_layers) {
        tnn_fail(TNN_ERR_ARG, "tnn_layer_targets: no layer %d in a config of %d layers", layer,
                 cfg != NULL ? cfg->n_layers : 0);
        return 0;
    }
    const size_t n_kinds = strnlen(cfg->layer_kinds, sizeof(cfg->layer_kinds));
    if (n_kinds != 0 && n_kinds != (size_t) cfg->n_layers) {
        tnn_fail(TNN_ERR_ARG,
                 "tnn_layer_targets: layer_kinds must be empty or one letter for each of the %d layers",
                 cfg->n_layers);
        return 0;
    }
    uint32_t targets = 0;
    for (int slot = 0; slot < TNN_LORA_SLOTS; ++slot) {
        targets |= kind_has_slot(cfg, tnn_layer_kind(cfg, layer), slot) ? 1u << slot : 0;
    }
    return targets;
}

int32_t tnn_first_layer_with(const tnn_model_config * cfg, int slot) {
    for (int32_t l = 0; l < cfg->n_layers; ++l) {
        if (kind_has_slot(cfg, tnn_layer_kind(cfg, l), slot)) {
            return l;
        }
    }
    return -1;
}

/* Whether a layer rotates q and k (SmolLM3 leaves every fourth alone). */
static bool has_rope(const tnn_model_config * cfg, int32_t layer) {
    return cfg->no_rope_period <= 0 || (layer + 1) % cfg->no_rope_period != 0;
}

/* Whether a layer attends through a sliding window (Gemma 3's local layers). */
static bool is_local(const tnn_model_config * cfg, int32_t layer) {
    return cfg->swa_window > 0 && cfg->swa_period > 0 && layer % cfg->swa_period != cfg->swa_period - 1;
}


/* RoPE's settings for a layer (local: a sliding-window layer's base, and
 * no context extension unless swa_rope_scaled), as llama.cpp derives ggml_rope_ext's arguments:
 * with YaRN its attention factor cancels the 1 + 0.1 ln(factor) ggml
 * multiplies cos and sin by, unless mscale_all_dim (rope_yarn_log_mul)
 * asks for part of it. */
static struct tnn_rope_params rope_params(const tnn_model_config * cfg, bool local) {
    const float attn_factor = cfg->rope_attn_factor > 0.0f ? cfg->rope_attn_factor : 1.0f;
    struct tnn_rope_params p = {
        .dim = (int) tnn_rope_dim(cfg),
        .base = local ? cfg->rope_base_swa : cfg->rope_base,
        .neox = cfg->rope_neox,
        .attn_factor = attn_factor,
        .freq_scale = cfg->rope_scale > 0.0f ? 1.0f / cfg->rope_scale : 1.0f,
        .beta_fast = 32.0f,
        .beta_slow = 1.0f,
    };
    if (local && !cfg->swa_rope_scaled) {
        p.freq_scale = 1.0f;   /* a sliding-window layer's RoPE is not extended (llama.cpp's gemma3) */
        return p;
    }
    if (cfg->rope_yarn) {
        const float factor = cfg->rope_scale, log_mul = cfg->rope_yarn_log_mul;
        p.ext_factor = 1.0f;
        p.n_ctx_orig = cfg->rope_yarn_ctx;
        p.beta_fast = cfg->rope_yarn_beta_fast;
        p.beta_slow = cfg->rope_yarn_beta_slow;
        /* llama.cpp's, in its order: mscale(f, m) = 1 + 0.1 m ln f (rope_scale >= 1) */
        const float one = 0.1f * logf(factor) + 1.0f;
        const float all_dims = 0.1f * log_mul * logf(factor) + 1.0f;
        p.attn_factor = log_mul != 0.0f ? one / all_dims : one;
        p.attn_factor *= 1.0f / (1.0f + 0.1f * logf(factor));
        p.attn_factor *= attn_factor;
    }
    return p;
}

/* The shape every block tensor must have, ggml order (ne1 = 0: a vector;
 * ne2 = 0: a matrix, else a stack of ne2 matrices: the experts). */
struct block_tensor {
    struct ggml_tensor ** field;
    const char * name;
    int64_t ne0, ne1;
    bool present;     /* false: the config has none (biases, q/k norms) */
    int64_t ne2;
};

/* The feed-forward's norm as llama.cpp names it: Qwen 3.5's and gpt-oss's
 * are post_attention_norm, Falcon-H1's has no .weight. */
static const char * ffn_norm_name(const tnn_model_config * cfg, char kind) {
    return cfg->attn_gate || cfg->experts_oai ? "post_attention_norm.weight"
           : kind == 'p'                      ? "ffn_norm"
                                              : "ffn_norm.weight";
}

static int block_layout(struct tnn_block * b, const tnn_model_config * cfg, int32_t layer,
                        struct block_tensor * out) {
    const int64_t d = cfg->d_model;
    const char kind = tnn_layer_kind(cfg, layer);
    /* a 'p' layer (Falcon-H1) has attention's tensors and Mamba-2's */
    const bool attends = kind == 'a' || kind == 'p', convolves = kind == 'c', deltas = kind == 'd';
    const bool mamba = kind == 'm' || kind == 'p';
    const int64_t s = cfg->ssm_state, keys = s * cfg->ssm_groups, values = s * cfg->ssm_heads;
    const int64_t inner = cfg->ssm_inner, heads = cfg->ssm_heads, scanned = inner + 2 * keys;
    const int64_t q_rows = (cfg->attn_gate ? 2 : 1) * tnn_head_dim(cfg) * cfg->n_heads;
    const int64_t head_dim = tnn_head_dim(cfg);
    const int64_t q_width = head_dim * cfg->n_heads;
    const int64_t kv_width = head_dim * cfg->n_kv_heads;
    const bool bias = attends && cfg->qkv_bias, qk_norm = attends && cfg->qk_norm, post = cfg->post_norms;
    const bool moe = kind_has_ffn(cfg, kind) && cfg->n_experts > 0, oai = moe && cfg->experts_oai;
    const bool ffn = kind_has_ffn(cfg, kind) && !moe, gated = ffn && !cfg->ffn_relu_sq;
    const int64_t experts = cfg->n_experts, ff_exp = cfg->d_ff_exp;
    const bool shared = moe && cfg->d_ff_shexp > 0;
    const bool fused_qkv = attends && cfg->fused_qkv, fused_ffn = cfg->fused_gate_up;
    const bool separate_qkv = attends && !cfg->fused_qkv;
    const struct block_tensor layout[] = {
        { &b->attn_norm, "attn_norm.weight", d, 0, true },
        { &b->wq, "attn_q.weight", d, q_rows, separate_qkv },
        { &b->wk, "attn_k.weight", d, kv_width, separate_qkv },
        { &b->wv, "attn_v.weight", d, kv_width, separate_qkv },
        { &b->wqkv, "attn_qkv.weight", d, q_width + 2 * kv_width, fused_qkv },
        { &b->bq, "attn_q.bias", q_width, 0, bias },
        { &b->bk, "attn_k.bias", kv_width, 0, bias },
        { &b->bv, "attn_v.bias", kv_width, 0, bias },
        { &b->q_norm, "attn_q_norm.weight", head_dim, 0, qk_norm },
        { &b->k_norm, "attn_k_norm.weight", head_dim, 0, qk_norm },
        { &b->wo, "attn_output.weight", q_width, d, attends },
        { &b->bo, "attn_output.bias", d, 0, attends && cfg->attn_out_bias },
        { &b->attn_sinks, "attn_sinks.weight", cfg->n_heads, 0, attends && cfg->attn_sinks },
        { &b->conv_in, "shortconv.in_proj.weight", d, 3 * d, convolves },
        { &b->conv, "shortconv.conv.weight", cfg->conv_kernel, d, convolves },
        { &b->conv_out, "shortconv.out_proj.weight", d, d, convolves },
        { &b->ssm_qkv, "attn_qkv.weight", d, 2 * keys + values, deltas },
        { &b->ssm_gate, "attn_gate.weight", d, values, deltas },
        { &b->ssm_conv, "ssm_conv1d.weight", cfg->conv_kernel, 2 * keys + values, deltas },
        { &b->ssm_dt, "ssm_dt.bias", cfg->ssm_heads, 0, deltas },
        { &b->ssm_a, "ssm_a", cfg->ssm_heads, 0, deltas },
        { &b->ssm_beta, "ssm_beta.weight", d, cfg->ssm_heads, deltas },
        { &b->ssm_alpha, "ssm_alpha.weight", d, cfg->ssm_heads, deltas },
        { &b->ssm_norm, "ssm_norm.weight", s, 0, deltas },
        { &b->ssm_out, "ssm_out.weight", values, d, deltas },
        { &b->ssm_in, "ssm_in.weight", d, inner + scanned + heads, mamba },
        { &b->ssm_conv, "ssm_conv1d.weight", cfg->conv_kernel, scanned, mamba },
        { &b->ssm_conv_b, "ssm_conv1d.bias", scanned, 0, mamba },
        { &b->ssm_dt, "ssm_dt.bias", heads, 0, mamba },
        { &b->ssm_a, "ssm_a", 1, heads, mamba },
        { &b->ssm_d, "ssm_d", 1, heads, mamba },
        { &b->ssm_norm, "ssm_norm.weight", mamba ? inner / cfg->ssm_groups : 0, cfg->ssm_groups,
          mamba && !cfg->mamba_no_norm },
        { &b->ssm_out, "ssm_out.weight", inner, d, mamba },
        { &b->post_attn_norm, "post_attention_norm.weight", d, 0, post },
        { &b->ffn_norm, ffn_norm_name(cfg, kind), d, 0, !cfg->one_sublayer },
        { &b->w_gate, "ffn_gate.weight", d, cfg->d_ff, gated && !fused_ffn },
        { &b->w_up, "ffn_up.weight", d, cfg->d_ff, ffn && !fused_ffn },
        { &b->w_gate_up, "ffn_up.weight", d, 2 * (int64_t) cfg->d_ff, gated && fused_ffn && !moe },
        { &b->w_down, "ffn_down.weight", cfg->d_ff, d, ffn },
        { &b->moe.router, "ffn_gate_inp.weight", d, experts, moe },
        { &b->moe.gate, "ffn_gate_exps.weight", d, ff_exp, moe, experts },
        { &b->moe.up, "ffn_up_exps.weight", d, ff_exp, moe, experts },
        { &b->moe.down, "ffn_down_exps.weight", ff_exp, d, moe, experts },
        { &b->moe.router_b, "ffn_gate_inp.bias", experts, 0, oai },
        { &b->moe.gate_b, "ffn_gate_exps.bias", ff_exp, experts, oai },
        { &b->moe.up_b, "ffn_up_exps.bias", ff_exp, experts, oai },
        { &b->moe.down_b, "ffn_down_exps.bias", d, experts, oai },
        { &b->shexp_gate_inp, "ffn_gate_inp_shexp.weight", d, 0, shared && cfg->shexp_gate },
        { &b->w_gate_shexp, "ffn_gate_shexp.weight", d, cfg->d_ff_shexp, shared },
        { &b->w_up_shexp, "ffn_up_shexp.weight", d, cfg->d_ff_shexp, shared },
        { &b->w_down_shexp, "ffn_down_shexp.weight", cfg->d_ff_shexp, d, shared },
        { &b->post_ffn_norm, "post_ffw_norm.weight", d, 0, post },
    };
    _Static_assert(sizeof(layout) / sizeof(layout[0]) <= TNN_BLOCK_MAX_TENSORS, "TNN_BLOCK_MAX_TENSORS");
    const int n = (int) (sizeof(layout) / sizeof(layout[0]));
    for (int i = 0; i < n; ++i) out[i] = layout[i];
    return n;
}

int tnn_fused_weights(const tnn_model_config * cfg, struct tnn_fused_weight * out) {
    int n = 0;
    if (cfg->fused_qkv) {
        out[n++] = (struct tnn_fused_weight){ "attn_qkv", TNN_LORA_SLOT_Q, 3 };
    }
    if (cfg->fused_gate_up) {
        out[n++] = (struct tnn_fused_weight){ "ffn_up", TNN_LORA_SLOT_GATE, 2 };
    }
    return n;
}

/* rows [first, first + n) of the matrix w [d_in, rows] */
static struct ggml_tensor * row_view(struct ggml_context * ctx, struct ggml_tensor * w, int64_t first, int64_t n,
                                     int32_t layer, const char * name) {
    struct ggml_tensor * v = ggml_view_2d(ctx, w, w->ne[0], n, w->nb[1], (size_t) first * w->nb[1]);
    ggml_format_name(v, "blk.%d.%s.weight (view)", layer, name);
    return v;
}

void tnn_block_fused_views(struct ggml_context * views, struct tnn_block * b, int32_t layer) {
    if (b->wqkv) {
        /* the rows are q's, then k's, then v's; k and v are equally wide */
        const int64_t kv_width = (b->wqkv->ne[1] - b->wo->ne[0]) / 2, q_width = b->wo->ne[0];
        b->wq = row_view(views, b->wqkv, 0, q_width, layer, "attn_q");
        b->wk = row_view(views, b->wqkv, q_width, kv_width, layer, "attn_k");
        b->wv = row_view(views, b->wqkv, q_width + kv_width, kv_width, layer, "attn_v");
    }
    if (b->w_gate_up) {
        const int64_t d_ff = b->w_gate_up->ne[1] / 2;
        b->w_gate = row_view(views, b->w_gate_up, 0, d_ff, layer, "ffn_gate");
        b->w_up = row_view(views, b->w_gate_up, d_ff, d_ff, layer, "ffn_up");
    }
}

/* Every field of the layout NULL, before the present ones are set: a field
 * may appear in several kinds' rows (ssm_out in 'd' and 'm' layers). */
static void clear_fields(const struct block_tensor * layout, int n) {
    for (int i = 0; i < n; ++i) {
        *layout[i].field = NULL;
    }
}

void tnn_block_create(struct ggml_context * ctx, struct tnn_block * b, int32_t layer,
                      const tnn_model_config * cfg) {
    struct block_tensor layout[TNN_BLOCK_MAX_TENSORS];
    const int n = block_layout(b, cfg, layer, layout);
    clear_fields(layout, n);
    for (int i = 0; i < n; ++i) {
        struct block_tensor * e = &layout[i];
        if (!e->present) {
            continue;
        }
        *e->field = e->ne2 > 0   ? ggml_new_tensor_3d(ctx, GGML_TYPE_F32, e->ne0, e->ne1, e->ne2)
                    : e->ne1 > 0 ? ggml_new_tensor_2d(ctx, GGML_TYPE_F32, e->ne0, e->ne1)
                                 : ggml_new_tensor_1d(ctx, GGML_TYPE_F32, e->ne0);
        ggml_format_name(*e->field, "blk.%d.%s", layer, e->name);
    }
    tnn_block_fused_views(ctx, b, layer);
    b->lora_scale = 0.0f;
    b->kind = tnn_layer_kind(cfg, layer);
    b->local = is_local(cfg, layer);
    b->rope = has_rope(cfg, layer);
}

int tnn_block_tensors(struct tnn_block * b, const tnn_model_config * cfg, int32_t layer,
                      struct ggml_tensor ** out) {
    struct block_tensor layout[TNN_BLOCK_MAX_TENSORS];
    const int n = block_layout(b, cfg, layer, layout);
    int count = 0;
    for (int i = 0; i < n; ++i) {
        struct ggml_tensor * t = layout[i].present ? *layout[i].field : NULL;
        if (t != NULL && t->view_src == NULL) {   /* a view of a fused weight is trained through it */
            out[count++] = t;
        }
    }
    return count;
}

/* "[ne0, ne1]", or "[ne0, ne1, ne2]" for a stack of matrices (ne2 > 1). */
static void shape_text(char * buf, size_t cap, int64_t ne0, int64_t ne1, int64_t ne2) {
    if (ne2 > 1) {
        snprintf(buf, cap, "[%lld, %lld, %lld]", (long long) ne0, (long long) ne1, (long long) ne2);
    } else {
        snprintf(buf, cap, "[%lld, %lld]", (long long) ne0, (long long) ne1);
    }
}

int tnn_block_bind(struct ggml_context * ctx, struct tnn_block * b, int32_t layer, const tnn_model_config * cfg) {
    struct block_tensor layout[TNN_BLOCK_MAX_TENSORS];
    const int n = block_layout(b, cfg, layer, layout);
    clear_fields(layout, n);
    char name[GGML_MAX_NAME + 16];
    for (int i = 0; i < n; ++i) {
        struct block_tensor * e = &layout[i];
        if (!e->present) {
            continue;
        }
        snprintf(name, sizeof(name), "blk.%d.%s", layer, e->name);
        struct ggml_tensor * t = ggml_get_tensor(ctx, name);
        *e->field = t;
        if (t == NULL) {
            return tnn_fail(TNN_ERR_ARG, "tensor %s is missing", name);
        }
        const int64_t ne1 = e->ne1 > 0 ? e->ne1 : 1, ne2 = e->ne2 > 0 ? e->ne2 : 1;
        if (t->ne[0] != e->ne0 || t->ne[1] != ne1 || t->ne[2] != ne2 || t->ne[3] != 1) {
            char found[80], expected[80];
            shape_text(found, sizeof(found), t->ne[0], t->ne[1], t->ne[2]);
            shape_text(expected, sizeof(expected), e->ne0, ne1, ne2);
            return tnn_fail(TNN_ERR_ARG, "tensor %s has shape %s, expected %s", name, found, expected);
        }
    }
    b->lora_scale = 0.0f;
    b->kind = tnn_layer_kind(cfg, layer);
    b->local = is_local(cfg, layer);
    b->rope = has_rope(cfg, layer);
    return TNN_OK;
}

void tnn_block_add_lora(struct ggml_context * ctx, struct tnn_block * b, int32_t layer,
                        const tnn_lora_config * lora) {
    for (int slot = 0; slot < TNN_LORA_SLOTS; ++slot) {
        b->lora_a[slot] = b->lora_b[slot] = NULL;
        if (!(lora->targets & (1u << slot)) || tnn_block_weight(b, slot) == NULL) {
            continue;
        }
        const struct ggml_tensor * w = tnn_block_weight(b, slot);   /* [d_in, d_out] or [d_in, d_out, E] */
        b->lora_a[slot] = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, w->ne[0], lora->rank, w->ne[2]);
        b->lora_b[slot] = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, lora->rank, w->ne[1], w->ne[2]);
        ggml_format_name(b->lora_a[slot], "blk.%d.%s.weight.lora_a", layer, SLOT_NAMES[slot]);
        ggml_format_name(b->lora_b[slot], "blk.%d.%s.weight.lora_b", layer, SLOT_NAMES[slot]);
    }
    b->lora_scale = lora->alpha / (float) lora->rank;
}

/* x [d_in, n] -> W x (+ bias) (+ scale * B (A x)) [d_out, n] */
static struct ggml_tensor * linear(struct ggml_context * ctx, const struct tnn_block * b, int slot,
                                   struct ggml_tensor * bias, struct ggml_tensor * x) {
    struct ggml_tensor * y = ggml_mul_mat(ctx, tnn_block_weight(b, slot), x);
    if (bias) {
        y = ggml_add(ctx, y, bias);
    }
    if (b->lora_a[slot]) {
        /* the scale on [rank, n], not [d_out, n]: the same values (exactly
         * so for a power-of-two alpha / rank), a fraction of the work, in
         * the forward and in the backward */
        struct ggml_tensor * ax = ggml_mul_mat(ctx, b->lora_a[slot], x);         /* [rank, n] */
        ax = ggml_scale(ctx, ax, b->lora_scale);
        y = ggml_add(ctx, y, ggml_mul_mat(ctx, b->lora_b[slot], ax));           /* [d_out, n] */
    }
    return y;
}

struct ggml_tensor * tnn_block_attention(struct ggml_context * ctx, const struct tnn_block * b,
                                         struct ggml_tensor * h, struct ggml_tensor * positions,
                                         struct ggml_tensor * causal_mask, const tnn_model_config * cfg,
                                         const struct tnn_kv_step * kv) {
    const int64_t n_tokens = h->ne[1];
    const int64_t head_dim = tnn_head_dim(cfg);
    struct ggml_tensor * q = linear(ctx, b, TNN_LORA_SLOT_Q, b->bq, h);     /* [H*hd, n] */
    struct ggml_tensor * k = linear(ctx, b, TNN_LORA_SLOT_K, b->bk, h);     /* [KV*hd, n] */
    struct ggml_tensor * v = linear(ctx, b, TNN_LORA_SLOT_V, b->bv, h);     /* [KV*hd, n] */
    struct ggml_tensor * gate = NULL;
    if (cfg->attn_gate) {
        /* Qwen 3.5: each head's query, then its output gate [2 hd, H, n] */
        const size_t f = sizeof(float);
        gate = ggml_cont(ctx, ggml_view_3d(ctx, q, head_dim, cfg->n_heads, n_tokens, 2 * head_dim * f,
                                           2 * head_dim * cfg->n_heads * f, head_dim * f));
        q = ggml_cont(ctx, ggml_view_3d(ctx, q, head_dim, cfg->n_heads, n_tokens, 2 * head_dim * f,
                                        2 * head_dim * cfg->n_heads * f, 0));
    }
    q = ggml_reshape_3d(ctx, q, head_dim, cfg->n_heads, n_tokens);
    k = ggml_reshape_3d(ctx, k, head_dim, cfg->n_kv_heads, n_tokens);
    v = ggml_reshape_3d(ctx, v, head_dim, cfg->n_kv_heads, n_tokens);
    if (b->q_norm) {
        /* Qwen3: each head of q and k RMS-normalized (ggml_rms_norm works along head_dim) */
        q = tnn_rms_norm(ctx, q, b->q_norm, cfg->norm_eps);
        k = tnn_rms_norm(ctx, k, b->k_norm, cfg->norm_eps);
    }
    if (b->rope) {
        const struct tnn_rope_params rope = rope_params(cfg, b->local);
        /* LongRoPE: the long factors past the original context. llama.cpp
         * picks by its context size; the context is the sequence when
         * training (t_seq: at most the original context -> short) and the
         * cache when generating, so a model decodes as it trained. */
        const int64_t n_ctx = kv != NULL ? kv->k_cache->ne[1] : cfg->t_seq;
        struct ggml_tensor * factors = b->rope_freqs_long != NULL && n_ctx > cfg->rope_orig_ctx
                                           ? b->rope_freqs_long
                                           : b->rope_freqs;
        q = tnn_rope(ctx, q, positions, factors, &rope);
        k = tnn_rope(ctx, k, positions, factors, &rope);
    }
    if (cfg->attn_temp_scale > 0.0f) {
        q = tnn_attn_temperature(ctx, q, positions, cfg->attn_temp_scale, cfg->rope_yarn_ctx);
    }
    const float scale = cfg->attn_scale > 0.0f ? cfg->attn_scale : 1.0f / sqrtf((float) head_dim);
    struct ggml_tensor * attn;
    /* gpt-oss's sinks: ggml's softmax takes them as F32 */
    struct ggml_tensor * sinks = b->attn_sinks != NULL ? tnn_as_f32(ctx, b->attn_sinks) : NULL;
    if (kv == NULL) {
        attn = tnn_attention(ctx, q, k, v, causal_mask, sinks, cfg->t_seq, cfg->t_batch, scale, cfg->attn_softcap,
                             cfg->attn_split);
    } else {
        /* the new keys and values go into the cache, then all are attended */
        attn = tnn_attention_cached(ctx, q, k, v, kv, sinks, scale, cfg->attn_softcap);
    }
    if (gate != NULL) {
        attn = ggml_mul(ctx, attn,
                        ggml_sigmoid(ctx, ggml_reshape_2d(ctx, gate, head_dim * cfg->n_heads, n_tokens)));
    }
    return linear(ctx, b, TNN_LORA_SLOT_O, b->bo, attn);
}


/* A sequence's convolution input after the zero state (training) or after
 * kv's state, whose update it sets: seq [T, channels, B] -> [taps - 1 + T,
 * channels, B]. LFM2's and Qwen 3.5's convolutions alike. */
static struct ggml_tensor * after_conv_state(struct ggml_context * ctx, struct ggml_tensor * seq, int32_t taps,
                                             const struct tnn_kv_step * kv) {
    if (kv == NULL) {
        return ggml_pad_ext(ctx, seq, taps - 1, 0, 0, 0, 0, 0, 0, 0);
    }
    const int64_t channels = seq->ne[1], n = seq->ne[0];
    struct ggml_tensor * sx = ggml_concat(ctx, ggml_reshape_3d(ctx, kv->conv_state, taps - 1, channels, 1), seq,
                                          0);
    /* the next state: the last taps - 1 inputs */
    struct ggml_tensor * last = ggml_view_2d(ctx, sx, taps - 1, channels, sx->nb[1], (size_t) n * sx->nb[0]);
    *kv->conv_update = ggml_cpy(ctx, last, kv->conv_state);
    return sx;
}

/* The causal convolution of x [channels, T, B] (token-major) by kernel
 * [taps, channels] after kv's state, whose update it sets: [channels, T,
 * B]. Training on the CPU (kv NULL: a zero state, again at each token at
 * position 0) takes toy's node on x as it is, which needs no transposed
 * and padded copy; decoding, and the
 * device backends (which run no custom node), ggml's op. */
static struct ggml_tensor * causal_conv(struct ggml_context * ctx, struct ggml_tensor * x,
                                        struct ggml_tensor * kernel, struct ggml_tensor * positions,
                                        const struct tnn_kv_step * kv) {
    if (kv == NULL && tnn_backend_uses_host_memory()) {
        return tnn_causal_conv(ctx, x, kernel, positions);
    }
    struct ggml_tensor * sx = after_conv_state(ctx, ggml_cont(ctx, ggml_transpose(ctx, x)),
                                               (int32_t) kernel->ne[0], kv);
    return ggml_ssm_conv(ctx, sx, kernel);
}

struct ggml_tensor * tnn_block_shortconv(struct ggml_context * ctx, const struct tnn_block * b,
                                         struct ggml_tensor * h, struct ggml_tensor * positions,
                                         const tnn_model_config * cfg, const struct tnn_kv_step * kv) {
    const int64_t d = cfg->d_model, n = h->ne[1];
    const int64_t t_seq = kv != NULL ? n : cfg->t_seq, t_batch = n / t_seq;
    struct ggml_tensor * bcx = linear(ctx, b, TNN_LORA_SLOT_CONV_IN, NULL, h);     /* [3d, n] */
    struct ggml_tensor * gate_b = ggml_view_2d(ctx, bcx, d, n, bcx->nb[1], 0);
    struct ggml_tensor * gate_c = ggml_view_2d(ctx, bcx, d, n, bcx->nb[1], (size_t) d * bcx->nb[0]);
    struct ggml_tensor * x = ggml_view_2d(ctx, bcx, d, n, bcx->nb[1], (size_t) (2 * d) * bcx->nb[0]);
    struct ggml_tensor * bx = ggml_mul(ctx, x, gate_b);                              /* [d, n] */
    struct ggml_tensor * conv = causal_conv(ctx, ggml_reshape_3d(ctx, bx, d, t_seq, t_batch),
                                            tnn_as_f32(ctx, b->conv), positions, kv); /* [d, t_seq, t_batch] */
    struct ggml_tensor * y = ggml_mul(ctx, ggml_reshape_2d(ctx, conv, d, n), gate_c);
    return linear(ctx, b, TNN_LORA_SLOT_CONV_OUT, NULL, y);
}

/* The product of a frozen matrix the base keeps no copies of (Qwen 3.5's
 * beta and alpha projections, [d, heads]) with x. For a constant matrix
 * ggml's backward gives x the gradient out_prod(W, dy^T), which Vulkan does
 * not run on a transposed operand; for one a node makes, mul_mat(W^T, dy)
 * (vendor patch 0002), which every backend runs. So a device takes the
 * matrix through a node: a copy of [d, heads] floats a step. */
static struct ggml_tensor * small_frozen_product(struct ggml_context * ctx, struct ggml_tensor * w,
                                                 struct ggml_tensor * x) {
    if (!tnn_backend_uses_host_memory()) {
        w = w->type == GGML_TYPE_F32 ? ggml_cont(ctx, w) : ggml_cast(ctx, w, GGML_TYPE_F32);
    }
    return ggml_mul_mat(ctx, w, x);
}

/* Each head's rows L2-normalized, as llama.cpp's build_gdn_l2_norm: an
 * RMS norm with eps / n, over sqrt(n) (ggml's RMS norm has a backward). */
static struct ggml_tensor * l2_norm(struct ggml_context * ctx, struct ggml_tensor * x, float eps) {
    const float n = (float) x->ne[0];
    return ggml_scale(ctx, ggml_rms_norm(ctx, x, eps / n), 1.0f / sqrtf(n));
}

struct ggml_tensor * tnn_block_delta_net(struct ggml_context * ctx, const struct tnn_block * b,
                                         struct ggml_tensor * h, struct ggml_tensor * positions,
                                         const tnn_model_config * cfg, const struct tnn_kv_step * kv) {
    const int64_t s = cfg->ssm_state, groups = cfg->ssm_groups, heads = cfg->ssm_heads;
    const int64_t keys = s * groups, values = s * heads, channels = 2 * keys + values;
    const int64_t n = h->ne[1], t_seq = kv != NULL ? n : cfg->t_seq, t_batch = n / t_seq;
    const size_t f = sizeof(float);
    struct ggml_tensor * qkv = linear(ctx, b, TNN_LORA_SLOT_SSM_QKV, NULL, h); /* [2K + V, n] */
    struct ggml_tensor * z = linear(ctx, b, TNN_LORA_SLOT_SSM_GATE, NULL, h); /* [V, n] */
    struct ggml_tensor * beta = ggml_sigmoid(ctx, small_frozen_product(ctx, b->ssm_beta, h)); /* [heads, n] */
    /* the log of each head's decay: -exp(A_log) softplus(alpha + dt), ssm_a holding -exp(A_log) */
    struct ggml_tensor * decay = ggml_mul(
        ctx, ggml_softplus(ctx, ggml_add(ctx, small_frozen_product(ctx, b->ssm_alpha, h), b->ssm_dt)), b->ssm_a);
    /* the causal convolution of each sequence after its state, then SiLU */
    struct ggml_tensor * mixed = ggml_silu(
        ctx, causal_conv(ctx, ggml_reshape_3d(ctx, qkv, channels, t_seq, t_batch), tnn_as_f32(ctx, b->ssm_conv),
                         positions, kv)); /* [2K + V, t_seq, B] */
    struct ggml_tensor * q = ggml_view_4d(ctx, mixed, s, groups, t_seq, t_batch, s * f, channels * f,
                                          channels * t_seq * f, 0);
    struct ggml_tensor * k = ggml_view_4d(ctx, mixed, s, groups, t_seq, t_batch, s * f, channels * f,
                                          channels * t_seq * f, keys * f);
    struct ggml_tensor * v = ggml_cont(ctx, ggml_view_4d(ctx, mixed, s, heads, t_seq, t_batch, s * f, channels * f,
                                                         channels * t_seq * f, 2 * keys * f));
    q = l2_norm(ctx, ggml_cont(ctx, q), cfg->norm_eps);
    k = l2_norm(ctx, ggml_cont(ctx, k), cfg->norm_eps);
    if (groups != heads) {
        /* value head j reads key head j % groups (llama.cpp's tiled repeat) */
        q = ggml_repeat_4d(ctx, q, s, heads, t_seq, t_batch);
        k = ggml_repeat_4d(ctx, k, s, heads, t_seq, t_batch);
    }
    struct ggml_tensor * g4 = ggml_reshape_4d(ctx, decay, 1, heads, t_seq, t_batch);
    struct ggml_tensor * beta4 = ggml_reshape_4d(ctx, beta, 1, heads, t_seq, t_batch);
    struct ggml_tensor * o;
    if (kv == NULL) {
        o = tnn_gated_delta_net(ctx, q, k, v, g4, beta4, positions);
    } else {
        /* ggml's op: the outputs [s heads, n], then the final state [s, s, heads] */
        struct ggml_tensor * all = ggml_gated_delta_net(ctx, q, k, v, g4, beta4,
                                                        ggml_reshape_4d(ctx, kv->ssm_state, s, s, heads, 1), 1);
        o = ggml_view_4d(ctx, all, s, heads, n, 1, s * f, values * f, values * n * f, 0);
        struct ggml_tensor * state = ggml_view_1d(ctx, all, s * s * heads, (size_t) (values * n) * f);
        *kv->ssm_update = ggml_cpy(ctx, state, kv->ssm_state);
    }
    /* each head RMS-normed, times silu(z) */
    o = ggml_mul(ctx, tnn_rms_norm(ctx, o, b->ssm_norm, cfg->norm_eps),
                 ggml_silu(ctx, ggml_reshape_4d(ctx, z, s, heads, t_seq, t_batch)));
    return linear(ctx, b, TNN_LORA_SLOT_SSM_OUT, NULL, ggml_reshape_2d(ctx, o, values, n));
}


struct ggml_tensor * tnn_block_mamba2(struct ggml_context * ctx, const struct tnn_block * b,
                                      struct ggml_tensor * h, struct ggml_tensor * positions,
                                      const tnn_model_config * cfg, const struct tnn_kv_step * kv) {
    const int64_t s = cfg->ssm_state, groups = cfg->ssm_groups, heads = cfg->ssm_heads;
    const int64_t inner = cfg->ssm_inner, width = inner / heads, channels = inner + 2 * s * groups;
    const int64_t n = h->ne[1], t_seq = kv != NULL ? n : cfg->t_seq, t_batch = n / t_seq;
    const size_t f = sizeof(float);
    struct ggml_tensor * zxbcdt = linear(ctx, b, TNN_LORA_SLOT_SSM_IN, NULL, h); /* [I + C + H, n] */
    const size_t row = zxbcdt->nb[1];
    struct ggml_tensor * z = ggml_view_2d(ctx, zxbcdt, inner, n, row, 0);
    /* x B C contiguous and then reshaped: ggml's backward of a view takes a contiguous
     * gradient, which the reshape's backward makes of the transpose's */
    struct ggml_tensor * xbc = ggml_reshape_3d(
        ctx, ggml_cont(ctx, ggml_view_2d(ctx, zxbcdt, channels, n, row, inner * f)), channels, t_seq, t_batch);
    struct ggml_tensor * dt = ggml_cont(ctx, ggml_view_2d(ctx, zxbcdt, heads, n, row, (inner + channels) * f));
    dt = ggml_reshape_3d(ctx, ggml_add(ctx, dt, tnn_as_f32(ctx, b->ssm_dt)), heads, t_seq, t_batch);
    /* the causal convolution of each sequence after its state, its bias, then SiLU */
    struct ggml_tensor * conv = causal_conv(ctx, xbc, tnn_as_f32(ctx, b->ssm_conv), positions,
                                            kv); /* [C, t_seq, B] */
    conv = ggml_silu(ctx, ggml_add(ctx, conv, tnn_as_f32(ctx, b->ssm_conv_b)));
    const size_t step = channels * f, seq = channels * t_seq * f;
    struct ggml_tensor * x = ggml_view_4d(ctx, conv, width, heads, t_seq, t_batch, width * f, step, seq, 0);
    struct ggml_tensor * bs = ggml_view_4d(ctx, conv, s, groups, t_seq, t_batch, s * f, step, seq, inner * f);
    struct ggml_tensor * cs = ggml_view_4d(ctx, conv, s, groups, t_seq, t_batch, s * f, step, seq,
                                           (inner + s * groups) * f);
    struct ggml_tensor * a = tnn_as_f32(ctx, b->ssm_a);
    struct ggml_tensor * y;
    if (kv == NULL) {
        y = tnn_ssm_scan(ctx, x, dt, a, bs, cs, positions);
    } else {
        /* ggml's op: y [width, heads, n], then the final state [s, width, heads] */
        x = ggml_cont(ctx, x);
        struct ggml_tensor * all = ggml_ssm_scan(ctx, ggml_reshape_4d(ctx, kv->ssm_state, s, width, heads, 1), x,
                                                 dt, a, ggml_cont(ctx, bs), ggml_cont(ctx, cs), kv->state_slot, 1);
        y = ggml_view_4d(ctx, all, width, heads, n, 1, width * f, inner * f, inner * n * f, 0);
        struct ggml_tensor * state = ggml_view_1d(ctx, all, s * inner, (size_t) (inner * n) * f);
        *kv->ssm_update = ggml_cpy(ctx, state, kv->ssm_state);
    }
    /* the D skip, the gate silu(z), then each group's RMS norm (where there is one) */
    y = ggml_add(ctx, y, ggml_mul(ctx, x, tnn_as_f32(ctx, b->ssm_d)));
    y = ggml_mul(ctx, ggml_reshape_2d(ctx, y, inner, n), ggml_silu(ctx, ggml_cont(ctx, z)));
    if (b->ssm_norm != NULL) { /* Falcon-H1's files may have none */
        y = tnn_rms_norm(ctx, ggml_reshape_3d(ctx, y, inner / groups, groups, n), b->ssm_norm, cfg->norm_eps);
    }
    return linear(ctx, b, TNN_LORA_SLOT_SSM_OUT, NULL, ggml_reshape_2d(ctx, y, inner, n));
}

struct ggml_tensor * tnn_block_ffn(struct ggml_context * ctx, const struct tnn_block * b, struct ggml_tensor * h,
                                   const tnn_model_config * cfg) {
    if (b->moe.router != NULL) {
        struct tnn_moe_weights moe = b->moe;
        for (int i = 0; i < 3; ++i) {
            moe.lora_a[i] = b->lora_a[TNN_LORA_SLOT_GATE_EXPS + i];
            moe.lora_b[i] = b->lora_b[TNN_LORA_SLOT_GATE_EXPS + i];
        }
        moe.lora_scale = b->lora_scale;
        moe.oai = cfg->experts_oai;
        struct ggml_tensor * out = tnn_moe_ffn(ctx, h, &moe, cfg->n_experts_used, cfg->experts_norm);
        if (b->w_up_shexp == NULL) {
            return out;
        }
        /* the shared expert, every token through it, gated by sigmoid(w x) [1, n] where it has a gate */
        struct ggml_tensor * shared = tnn_swiglu(ctx, linear(ctx, b, TNN_LORA_SLOT_GATE_SHEXP, NULL, h),
                                                 linear(ctx, b, TNN_LORA_SLOT_UP_SHEXP, NULL, h));
        shared = linear(ctx, b, TNN_LORA_SLOT_DOWN_SHEXP, NULL, shared); /* [d, n] */
        if (b->shexp_gate_inp != NULL) {
            shared = ggml_mul(ctx, shared, ggml_sigmoid(ctx, ggml_mul_mat(ctx, b->shexp_gate_inp, h)));
        }
        return ggml_add(ctx, out, shared);
    }
    if (cfg->ffn_relu_sq) {
        /* Nemotron-H: no gate, the square of a ReLU */
        struct ggml_tensor * up = ggml_relu(ctx, linear(ctx, b, TNN_LORA_SLOT_UP, NULL, h));
        return linear(ctx, b, TNN_LORA_SLOT_DOWN, NULL, ggml_sqr(ctx, up));
    }
    struct ggml_tensor * gate = linear(ctx, b, TNN_LORA_SLOT_GATE, NULL, h);
    struct ggml_tensor * up = linear(ctx, b, TNN_LORA_SLOT_UP, NULL, h);
    struct ggml_tensor * ff = cfg->ffn_gelu ? tnn_geglu(ctx, gate, up) : tnn_swiglu(ctx, gate, up); /* [d_ff, n] */
    return linear(ctx, b, TNN_LORA_SLOT_DOWN, NULL, ff);
}

/* A sub-layer's output as it joins the residual stream (Granite scales it). */
static struct ggml_tensor * residual_share(struct ggml_context * ctx, struct ggml_tensor * out,
                                           const tnn_model_config * cfg) {
    return cfg->residual_multiplier > 0.0f ? ggml_scale(ctx, out, cfg->residual_multiplier) : out;
}

struct ggml_tensor * tnn_block_forward(struct ggml_context * ctx, const struct tnn_block * b,
                                       struct ggml_tensor * x, struct ggml_tensor * positions,
                                       struct ggml_tensor * causal_mask, const tnn_model_config * cfg,
                                       const struct tnn_kv_step * kv) {
    /* attention or its stand-in: x [d, n] */
    struct ggml_tensor * h = tnn_rms_norm(ctx, x, b->attn_norm, cfg->norm_eps);
    struct ggml_tensor * out = b->kind == 'c'   ? tnn_block_shortconv(ctx, b, h, positions, cfg, kv)
                               : b->kind == 'd' ? tnn_block_delta_net(ctx, b, h, positions, cfg, kv)
                               : b->kind == 'm' ? tnn_block_mamba2(ctx, b, h, positions, cfg, kv)
                               : b->kind == 'f' ? tnn_block_ffn(ctx, b, h, cfg)
                                                : tnn_block_attention(ctx, b, h, positions, causal_mask, cfg, kv);
    if (b->kind == 'p') {
        /* Falcon-H1: Mamba-2 beside attention, on the same input */
        out = ggml_add(ctx, out, tnn_block_mamba2(ctx, b, h, positions, cfg, kv));
    }
    if (b->post_attn_norm) {
        out = tnn_rms_norm(ctx, out, b->post_attn_norm, cfg->norm_eps);
    }
    x = ggml_add(ctx, x, residual_share(ctx, out, cfg));
    if (cfg->one_sublayer) {
        return x; /* Nemotron-H: that was the whole layer */
    }

    /* feed-forward */
    h = tnn_rms_norm(ctx, x, b->ffn_norm, cfg->norm_eps);
    out = tnn_block_ffn(ctx, b, h, cfg);
    if (b->post_ffn_norm) {
        out = tnn_rms_norm(ctx, out, b->post_ffn_norm, cfg->norm_eps);
    }
    return ggml_add(ctx, x, residual_share(ctx, out, cfg));
}
