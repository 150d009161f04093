/* The llama family (llama, Qwen2/3, Gemma 3): token embedding -> blocks ->
 * final RMSNorm -> tied or untied output projection. Its table entry: create
 * from random init or over a frozen GGUF base with LoRA adapters, the
 * forward for training and over a KV cache, and the GGUF export. */
#include "models/models.h"
#include "gguf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tnn_check_token_model_config(const tnn_model_config * c) {
    if (c == NULL) {
        return tnn_fail(TNN_ERR_ARG, "config is NULL");
    }
    struct {
        const char * name;
        int32_t value;
        int32_t max;
    } positive[] = {
        { "vocab", c->vocab, 1 << 24 },  { "d_model", c->d_model, 1 << 16 },    { "n_layers", c->n_layers, 1024 },
        { "n_heads", c->n_heads, 1024 }, { "n_kv_heads", c->n_kv_heads, 1024 }, { "d_ff", c->d_ff, 1 << 18 },
        { "t_seq", c->t_seq, 1 << 16 },  { "t_batch", c->t_batch, 1 << 12 },
    };
    for (size_t i = 0; i < sizeof(positive) / sizeof(positive[0]); ++i) {
        if (positive[i].value < 1 || positive[i].value > positive[i].max) {
            return tnn_fail(TNN_ERR_ARG, "%s must be between 1 and %d, got %d", positive[i].name, positive[i].max,
                            positive[i].value);
        }
    }
    if (c->head_dim < 0 || c->head_dim > (1 << 12) || c->head_dim % 2 != 0) {
        return tnn_fail(TNN_ERR_ARG, "head_dim must be 0 (d_model / n_heads) or even and at most %d, got %d",
                        1 << 12, c->head_dim);
    }
    if (c->head_dim == 0 && (c->d_model % c->n_heads != 0 || (c->d_model / c->n_heads) % 2 != 0)) {
        return tnn_fail(TNN_ERR_ARG, "d_model (%d) must be n_heads (%d) times an even head width", c->d_model,
                        c->n_heads);
    }
    if (c->n_heads % c->n_kv_heads != 0) {
        return tnn_fail(TNN_ERR_ARG, "n_kv_heads (%d) must divide n_heads (%d)", c->n_kv_heads, c->n_heads);
    }
    if (!(c->rope_base > 0.0f) || !isfinite(c->rope_base)) {
        return tnn_fail(TNN_ERR_ARG, "rope_base must be positive, got %g", c->rope_base);
    }
    if (!(c->norm_eps > 0.0f) || !isfinite(c->norm_eps)) {
        return tnn_fail(TNN_ERR_ARG, "norm_eps must be positive, got %g", c->norm_eps);
    }
    if (!(c->init_scale >= 0.0f) || !isfinite(c->init_scale)) {
        return tnn_fail(TNN_ERR_ARG, "init_scale must be >= 0, got %g", c->init_scale);
    }
    if (c->donor_d_in < 0 || c->donor_d_in > (1 << 16)) {
        return tnn_fail(TNN_ERR_ARG, "donor_d_in must be between 0 and %d, got %d", 1 << 16, c->donor_d_in);
    }
    if (c->donor_d_in > 0 && c->donor_d_in != c->d_model && !c->untied) {
        return tnn_fail(TNN_ERR_ARG,
                        "a donor embedding of width %d needs a lens to d_model %d "
                        "and an untied output (untied = 1)",
                        c->donor_d_in, c->d_model);
    }
    if (c->swa_window < 0 ||
        (c->swa_window > 0 && (c->swa_period < 1 || !(c->rope_base_swa > 0.0f) || !isfinite(c->rope_base_swa)))) {
        return tnn_fail(TNN_ERR_ARG,
                        "sliding-window attention needs swa_window > 0, swa_period >= 1 "
                        "and a positive rope_base_swa (got %d, %d, %g)",
                        c->swa_window, c->swa_period, c->rope_base_swa);
    }
    if (c->rope_dim < 0 || c->rope_dim % 2 != 0 || c->rope_dim > tnn_head_dim(c)) {
        return tnn_fail(TNN_ERR_ARG, "rope_dim must be 0 (the head width) or even and at most %lld, got %d",
                        (long long) tnn_head_dim(c), c->rope_dim);
    }
    if (c->rope_orig_ctx < 0 || (c->rope_orig_ctx > 0 && !c->rope_freqs)) {
        return tnn_fail(TNN_ERR_ARG, "rope_orig_ctx must be 0, or positive with rope_freqs = 1 (LongRoPE), got %d",
                        c->rope_orig_ctx);
    }
    if (!(c->rope_attn_factor >= 0.0f) || !isfinite(c->rope_attn_factor)) {
        return tnn_fail(TNN_ERR_ARG, "rope_attn_factor must be 0 (1) or positive, got %g", c->rope_attn_factor);
    }
    if (c->no_rope_period < 0 || c->no_rope_period > 1024) {
        return tnn_fail(TNN_ERR_ARG, "no_rope_period must be between 0 and 1024, got %d", c->no_rope_period);
    }
    const struct {
        const char * name;
        float value;
    } non_negative[] = {
        { "attn_scale", c->attn_scale },
        { "attn_softcap", c->attn_softcap },
        { "final_softcap", c->final_softcap },
        { "embd_multiplier", c->embd_multiplier },
        { "residual_multiplier", c->residual_multiplier },
        { "logit_scaling", c->logit_scaling },
        { "rope_scale", c->rope_scale },
        { "rope_yarn_beta_fast", c->rope_yarn_beta_fast },
        { "rope_yarn_beta_slow", c->rope_yarn_beta_slow },
        { "rope_yarn_log_mul", c->rope_yarn_log_mul },
        { "attn_temp_scale", c->attn_temp_scale },
    };
    for (size_t i = 0; i < sizeof(non_negative) / sizeof(non_negative[0]); ++i) {
        if (!(non_negative[i].value >= 0.0f) || !isfinite(non_negative[i].value)) {
            return tnn_fail(TNN_ERR_ARG, "%s must be 0 (off) or positive, got %g", non_negative[i].name,
                            non_negative[i].value);
        }
    }
    if ((c->rope_scale != 0.0f && c->rope_scale < 1.0f) || (c->rope_yarn != 0 && c->rope_yarn != 1) ||
        (c->rope_yarn && (c->rope_scale == 0.0f || !(c->rope_yarn_beta_fast > c->rope_yarn_beta_slow))) ||
        c->rope_yarn_ctx < 0 || ((c->rope_yarn || c->attn_temp_scale > 0.0f) && c->rope_yarn_ctx < 1)) {
        return tnn_fail(TNN_ERR_ARG,
                        "RoPE scaling: rope_scale must be 0 or at least 1, rope_yarn 0 or 1; YaRN needs "
                        "rope_scale, rope_yarn_beta_fast above rope_yarn_beta_slow and rope_yarn_ctx >= 1, "
                        "attn_temp_scale rope_yarn_ctx >= 1 (got %g, %d, %g, %g, %d)",
                        c->rope_scale, c->rope_yarn, c->rope_yarn_beta_fast, c->rope_yarn_beta_slow,
                        c->rope_yarn_ctx);
    }
    _Static_assert(sizeof(c->layer_kinds) == TNN_MAX_LAYERS + 1, "layer_kinds: a letter per layer and a 0");
    const size_t n_kinds = strnlen(c->layer_kinds, sizeof(c->layer_kinds));
    if (n_kinds == sizeof(c->layer_kinds) || (n_kinds != 0 && n_kinds != (size_t) c->n_layers)) {
        return tnn_fail(TNN_ERR_ARG, "layer_kinds must be empty or one letter for each of the %d layers",
                        c->n_layers);
    }
    if ((c->one_sublayer != 0 && c->one_sublayer != 1) || (c->ffn_relu_sq != 0 && c->ffn_relu_sq != 1)) {
        return tnn_fail(TNN_ERR_ARG, "one_sublayer and ffn_relu_sq must be 0 or 1, got %d and %d", c->one_sublayer,
                        c->ffn_relu_sq);
    }
    const struct {
        const char * name;
        int32_t value;
    } flags[] = {
        { "mamba_no_norm", c->mamba_no_norm }, { "swa_rope_scaled", c->swa_rope_scaled },
        { "attn_sinks", c->attn_sinks },       { "attn_out_bias", c->attn_out_bias },
        { "experts_oai", c->experts_oai },     { "shexp_gate", c->shexp_gate },
    };
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); ++i) {
        if (flags[i].value != 0 && flags[i].value != 1) {
            return tnn_fail(TNN_ERR_ARG, "%s must be 0 or 1, got %d", flags[i].name, flags[i].value);
        }
    }
    if (c->ffn_relu_sq && c->fused_gate_up) {
        return tnn_fail(TNN_ERR_ARG, "ffn_relu_sq has no gate: it cannot be fused with up (fused_gate_up)");
    }
    bool convolves = false, deltas = false, mambas = false;
    for (size_t i = 0; i < n_kinds; ++i) {
        if (strchr(c->one_sublayer ? "amf" : "acdmp", c->layer_kinds[i]) == NULL) {
            return tnn_fail(TNN_ERR_ARG,
                            c->one_sublayer ? "layer_kinds: layer %zu is '%c': with one_sublayer 'a' (attention), "
                                              "'m' (Mamba-2) or 'f' (feed-forward) expected"
                                            : "layer_kinds: layer %zu is '%c': 'a' (attention), 'c' (short "
                                              "convolution), 'd' (delta net), 'm' (Mamba-2) or 'p' (attention "
                                              "and Mamba-2) expected",
                            i, c->layer_kinds[i]);
        }
        convolves |= c->layer_kinds[i] != 'a' && c->layer_kinds[i] != 'f';
        deltas |= c->layer_kinds[i] == 'd';
        mambas |= c->layer_kinds[i] == 'm' || c->layer_kinds[i] == 'p';
    }
    if (deltas && mambas) {
        return tnn_fail(TNN_ERR_ARG, "layer_kinds: delta-net and Mamba-2 layers in one model are not supported");
    }
    if ((deltas || mambas) && (c->ssm_state < 1 || c->ssm_state > 1024 || c->ssm_groups < 1 || c->ssm_heads < 1 ||
                               c->ssm_heads > 1024 || c->ssm_heads % c->ssm_groups != 0)) {
        return tnn_fail(TNN_ERR_ARG,
                        "delta-net and Mamba-2 layers need ssm_state 1 to 1024 and ssm_groups dividing ssm_heads "
                        "(1 to 1024), got %d, %d, %d",
                        c->ssm_state, c->ssm_groups, c->ssm_heads);
    }
    if (deltas && c->ssm_inner != 0 && c->ssm_inner != c->ssm_state * c->ssm_heads) {
        return tnn_fail(TNN_ERR_ARG, "delta-net layers' ssm_inner must be 0 or ssm_state x ssm_heads (%d), got %d",
                        c->ssm_state * c->ssm_heads, c->ssm_inner);
    }
    if (mambas && (c->ssm_inner < 1 || c->ssm_inner > (1 << 18) || c->ssm_inner % c->ssm_heads != 0)) {
        return tnn_fail(TNN_ERR_ARG, "Mamba-2 layers need ssm_inner 1 to %d, a multiple of ssm_heads (%d); got %d",
                        1 << 18, c->ssm_heads, c->ssm_inner);
    }
    if (convolves ? c->conv_kernel < 2 || c->conv_kernel > 64 : c->conv_kernel != 0) {
        return tnn_fail(TNN_ERR_ARG, "conv_kernel must be 2 to 64 with short-convolution layers, else 0; got %d",
                        c->conv_kernel);
    }
    if (c->n_experts != 0 && (c->n_experts < 1 || c->n_experts > TNN_EXPERTS_MAX || c->n_experts_used < 1 ||
                              c->n_experts_used > c->n_experts || c->d_ff_exp < 1 || c->d_ff_exp > (1 << 18) ||
                              (c->experts_norm != 0 && c->experts_norm != 1))) {
        return tnn_fail(TNN_ERR_ARG,
                        "a mixture of experts needs n_experts 1 to %d, n_experts_used 1 to n_experts, d_ff_exp 1 "
                        "to %d and experts_norm 0 or 1; got %d, %d, %d, %d",
                        TNN_EXPERTS_MAX, 1 << 18, c->n_experts, c->n_experts_used, c->d_ff_exp, c->experts_norm);
    }
    if (c->n_experts == 0 && (c->n_experts_used != 0 || c->d_ff_exp != 0 || c->experts_norm != 0 ||
                              c->d_ff_shexp != 0 || c->experts_oai != 0)) {
        return tnn_fail(TNN_ERR_ARG,
                        "n_experts_used, d_ff_exp, experts_norm, d_ff_shexp and experts_oai need n_experts");
    }
    if (c->shexp_gate && c->d_ff_shexp == 0) {
        return tnn_fail(TNN_ERR_ARG, "shexp_gate needs a shared expert (d_ff_shexp)");
    }
    if (c->d_ff_shexp < 0 || c->d_ff_shexp > (1 << 18)) {
        return tnn_fail(TNN_ERR_ARG, "d_ff_shexp must be 0 (no shared expert) to %d, got %d", 1 << 18,
                        c->d_ff_shexp);
    }
    int status;
    if (c->n_experts > 0 && (status = tnn_experts_on_this_backend())) {
        return status;
    }
    if ((int64_t) c->t_seq * c->t_batch > (1 << 20)) {
        return tnn_fail(TNN_ERR_ARG, "t_seq * t_batch must be at most %d tokens", 1 << 20);
    }
    return TNN_OK;
}

/* ---- create ----------------------------------------------------------------- */

/* Every block reads the model's RoPE factors (or none), as llama.cpp's
 * layers do. */
static void share_rope_freqs(struct tnn_llama * m) {
    for (int32_t l = 0; l < m->cfg->n_layers; ++l) {
        m->blocks[l].rope_freqs = m->rope_freqs;
        m->blocks[l].rope_freqs_long = m->rope_freqs_long;
    }
}

static struct ggml_tensor * new_rope_factors(struct tnn_model * model, struct tnn_tensor_table * tensors,
                                             const char * name) {
    struct ggml_tensor * t = ggml_new_tensor_1d(model->ctx, GGML_TYPE_F32, tnn_rope_dim(&model->cfg) / 2);
    ggml_set_name(t, name);
    return tnn_table_add(tensors, t, TNN_KIND_ROPE_FREQS, -1) < 0 ? NULL : t;
}

/* A model created here with cfg->rope_freqs: the factors [rope_dim/2] (both
 * LongRoPE sets with rope_orig_ctx, named as llama.cpp names them, so that
 * the saved model carries both), not trained (ggml has no gradient for
 * them), 1 until uploaded. */
static int add_rope_freqs(struct tnn_model * model, struct tnn_tensor_table * tensors, struct tnn_llama * m) {
    const bool longrope = m->cfg->rope_orig_ctx > 0;
    m->rope_freqs = new_rope_factors(model, tensors, longrope ? TNN_ROPE_FACTORS_SHORT : TNN_ROPE_FREQS);
    m->rope_freqs_long = longrope ? new_rope_factors(model, tensors, TNN_ROPE_FACTORS_LONG) : NULL;
    return m->rope_freqs == NULL || (longrope && m->rope_freqs_long == NULL) ? TNN_ERR_ALLOC : TNN_OK;
}

/* A llama struct for model, its blocks not yet filled. */
static struct tnn_llama * new_llama(struct tnn_model * model) {
    void * blocks = NULL;
    struct tnn_llama * m = tnn_alloc_with_blocks(sizeof(*m), sizeof(*m->blocks), model->cfg.n_layers, &blocks);
    if (m != NULL) {
        m->cfg = &model->cfg;
        m->blocks = blocks;
    }
    model->params = m;
    return m;
}

int tnn_llama_create(struct tnn_model * model, struct tnn_tensor_table * tensors, const tnn_model_desc * desc) {
    const tnn_model_config * cfg = &desc->config;
    int status = tnn_check_token_model_config(cfg);
    if (status != TNN_OK) {
        return status;
    }
    model->cfg = *cfg;
    struct tnn_llama * m = new_llama(model);
    model->ctx = tnn_tensor_context(8 + (size_t) cfg->n_layers * (30 + TNN_BLOCK_FUSED_VIEWS));
    if (m == NULL || model->ctx == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory creating the model");
    }
    struct ggml_context * ctx = model->ctx;

    const bool lens = cfg->donor_d_in > 0 && cfg->donor_d_in != cfg->d_model;
    const int64_t embd_width = lens ? cfg->donor_d_in : cfg->d_model;
    m->token_embd = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, embd_width, cfg->vocab);
    ggml_set_name(m->token_embd, "token_embd.weight");
    status = tnn_add_param(tensors, m->token_embd);
    m->embd_proj = NULL;
    if (lens && status == TNN_OK) {
        m->embd_proj = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, cfg->donor_d_in, cfg->d_model);
        ggml_set_name(m->embd_proj, "token_embd_proj.weight");
        status = tnn_add_param(tensors, m->embd_proj);
    }
    for (int32_t l = 0; l < cfg->n_layers && status == TNN_OK; ++l) {
        struct tnn_block * b = &m->blocks[l];
        tnn_block_create(ctx, b, l, cfg);
        struct ggml_tensor * weights[TNN_BLOCK_MAX_TENSORS];
        const int n_weights = tnn_block_tensors(b, cfg, l, weights);
        for (int i = 0; i < n_weights && status == TNN_OK; ++i) {
            status = tnn_add_param(tensors, weights[i]);
        }
    }
    m->output_norm = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, cfg->d_model);
    ggml_set_name(m->output_norm, "output_norm.weight");
    if (status == TNN_OK) status = tnn_add_param(tensors, m->output_norm);
    m->output = NULL;
    if (cfg->untied && status == TNN_OK) {
        m->output = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, cfg->d_model, cfg->vocab);
        ggml_set_name(m->output, "output.weight");
        status = tnn_add_param(tensors, m->output);
    }
    m->head = m->output ? m->output : m->token_embd;
    m->rope_freqs = NULL;
    m->rope_freqs_long = NULL;
    if (cfg->rope_freqs && status == TNN_OK) {
        status = add_rope_freqs(model, tensors, m);
    }
    share_rope_freqs(m);
    return status != TNN_OK ? status : tnn_add_token_inputs(model, tensors);
}

/* ---- create over a frozen GGUF base with LoRA adapters ------------------------ */

static int check_lora_config(const tnn_lora_config * lora) {
    if (lora == NULL) {
        return tnn_fail(TNN_ERR_ARG, "LoRA config is NULL");
    }
    if (lora->rank == 0 && lora->targets == 0) {
        return TNN_OK;   /* no adapters: a base to generate with */
    }
    if (lora->rank < 1) {
        return tnn_fail(TNN_ERR_ARG, "LoRA rank must be at least 1, got %d", lora->rank);
    }
    if (lora->targets == 0 || (lora->targets & ~((1u << TNN_LORA_SLOTS) - 1)) != 0) {
        return tnn_fail(TNN_ERR_ARG,
                        "LoRA targets must be a non-empty set of q,k,v,o,gate,up,down,conv_in,conv_out,ssm_qkv,"
                        "ssm_gate,ssm_out,ssm_in,gate_exps,up_exps,down_exps,gate_shexp,up_shexp,down_shexp");
    }
    if (!isfinite(lora->alpha) || !(lora->init_scale >= 0.0f) || !isfinite(lora->init_scale)) {
        return tnn_fail(TNN_ERR_ARG, "LoRA alpha must be finite and init_scale >= 0");
    }
    if (lora->base_compute < TNN_BASE_FAST || lora->base_compute > TNN_BASE_BF16_HEAD) {
        return tnn_fail(TNN_ERR_ARG,
                        "base_compute must be %d (fast), %d (stored), %d (bf16) or %d (bf16_head), got %d",
                        TNN_BASE_FAST, TNN_BASE_STORED, TNN_BASE_BF16, TNN_BASE_BF16_HEAD, lora->base_compute);
    }
    return TNN_OK;
}

static int bind_base(struct tnn_frozen_base * frozen, struct tnn_llama * m) {
    const tnn_model_config * cfg = m->cfg;
    struct ggml_context * base = frozen->ctx;
    m->token_embd = ggml_get_tensor(base, "token_embd.weight");
    const struct tnn_family * family = tnn_family_find(frozen->arch_name);
    const char * output_norm = family != NULL ? tnn_family_output_norm(family) : "output_norm.weight";
    m->output_norm = ggml_get_tensor(base, output_norm);
    m->output = cfg->untied ? ggml_get_tensor(base, "output.weight") : NULL;
    m->head = m->output ? m->output : m->token_embd;
    if (m->output_norm == NULL || m->output_norm->ne[0] != cfg->d_model) {
        return tnn_fail(TNN_ERR_ARG, "tensor %s is missing or misshapen", output_norm);
    }
    if (m->token_embd->ne[0] != cfg->d_model || (m->output && m->output->ne[0] != cfg->d_model)) {
        return tnn_fail(TNN_ERR_ARG, "token_embd.weight or output.weight does not have width %d", cfg->d_model);
    }
    if (cfg->fused_qkv || cfg->fused_gate_up) {
        frozen->ctx_views = tnn_tensor_context((size_t) cfg->n_layers * TNN_BLOCK_FUSED_VIEWS);
        if (frozen->ctx_views == NULL) {
            return tnn_fail(TNN_ERR_ALLOC, "out of memory binding the base");
        }
    }
    for (int32_t l = 0; l < cfg->n_layers; ++l) {
        int status = tnn_block_bind(base, &m->blocks[l], l, cfg);
        if (status != TNN_OK) {
            return status;
        }
        if (frozen->ctx_views != NULL) {
            tnn_block_fused_views(frozen->ctx_views, &m->blocks[l], l);
        }
    }
    /* checked (shape, type, values) when the file was opened (gguf_config.c) */
    const bool longrope = cfg->rope_orig_ctx > 0;
    m->rope_freqs = !cfg->rope_freqs ? NULL
                                     : ggml_get_tensor(base, longrope ? TNN_ROPE_FACTORS_SHORT : TNN_ROPE_FREQS);
    m->rope_freqs_long = longrope ? ggml_get_tensor(base, TNN_ROPE_FACTORS_LONG) : NULL;
    share_rope_freqs(m);
    return TNN_OK;
}

static int create_on_base(struct tnn_model * model, struct tnn_tensor_table * tensors,
                          struct tnn_frozen_base * base, const struct tnn_base_placement * place,
                          const tnn_model_desc * desc) {
    const tnn_lora_config * lora = &desc->lora;
    int status = check_lora_config(lora);
    if (status == TNN_OK) {
        status = tnn_base_open(base, &model->cfg, desc->base_gguf);
    }
    if (status != TNN_OK) {
        return status;
    }
    tnn_model_config * cfg = &model->cfg;
    cfg->t_seq = lora->t_seq;
    cfg->t_batch = lora->t_batch;
    cfg->init_scale = lora->init_scale;
    cfg->seed = lora->seed;
    if ((status = tnn_check_token_model_config(cfg)) != TNN_OK) {
        return status;
    }
    struct tnn_llama * m = new_llama(model);
    if (m == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory creating the model");
    }
    if ((status = bind_base(base, m)) != TNN_OK) {
        return status;
    }
    for (int slot = 0; slot < TNN_LORA_SLOTS; ++slot) {
        if (!(lora->targets & (1u << slot))) {
            continue;
        }
        const int32_t layer = tnn_first_layer_with(cfg, slot);
        if (layer < 0) {
            return tnn_fail(TNN_ERR_ARG, "LoRA target %s: no layer of this %s model has it",
                            tnn_lora_slot_name(slot), base->arch_name);
        }
        const struct ggml_tensor * w = tnn_block_weight(&m->blocks[layer], slot);
        const int64_t max_rank = w->ne[0] < w->ne[1] ? w->ne[0] : w->ne[1];
        if (lora->rank > max_rank) {
            return tnn_fail(TNN_ERR_ARG, "LoRA rank %d is larger than %s allows (min(d_in, d_out) = %lld)",
                            lora->rank, tnn_lora_slot_name(slot), (long long) max_rank);
        }
    }
    if ((status = tnn_base_place(base, m, tensors, place, (enum tnn_base_compute) lora->base_compute)) != TNN_OK) {
        return status;
    }
    model->ctx = tnn_tensor_context(8 + (size_t) cfg->n_layers * 2 * TNN_LORA_SLOTS);
    if (model->ctx == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory creating the adapters");
    }
    for (int32_t l = 0; l < cfg->n_layers && lora->rank > 0; ++l) {
        struct tnn_block * b = &m->blocks[l];
        tnn_block_add_lora(model->ctx, b, l, lora);
        for (int slot = 0; slot < TNN_LORA_SLOTS; ++slot) {
            if (b->lora_a[slot] &&
                (tnn_add_param(tensors, b->lora_a[slot]) || tnn_add_param(tensors, b->lora_b[slot]))) {
                return TNN_ERR_ALLOC;
            }
        }
    }
    model->lora = *lora;
    model->has_lora = lora->rank > 0;
    return tnn_add_token_inputs(model, tensors);
}

/* ---- forward ------------------------------------------------------------ */

struct ggml_tensor * tnn_llama_embed(struct ggml_context * ctx, const struct tnn_llama * m,
                                     struct ggml_tensor * tokens) {
    struct ggml_tensor * x = ggml_get_rows(ctx, m->token_embd, tokens);   /* [d or donor_d, n] */
    if (m->cfg->embd_scale) {
        x = ggml_scale(ctx, x, sqrtf((float) m->cfg->d_model));
    }
    if (m->cfg->embd_multiplier > 0.0f) {
        x = ggml_scale(ctx, x, m->cfg->embd_multiplier);
    }
    if (m->embd_proj) {
        x = ggml_mul_mat(ctx, m->embd_proj, x);                            /* [d, n] */
    }
    return x;
}

/* x [d, n] through every block, then the final norm and the head on the
 * columns from first on: training (train: the masks) or over the KV cache
 * (cached: its inputs, the LoRA products left out when it says so). */
static struct ggml_tensor * blocks_and_head(struct ggml_context * ctx, const struct tnn_llama * m,
                                            struct ggml_tensor * x, struct ggml_tensor * positions,
                                            const struct tnn_forward_inputs * train,
                                            const struct tnn_decode_inputs * cached, int64_t first) {
    const tnn_model_config * cfg = m->cfg;
    for (int32_t l = 0; l < cfg->n_layers; ++l) {
        struct tnn_block block = m->blocks[l];
        if (train != NULL) {
            tnn_note_residual(train, l, x);
            x = tnn_block_forward(ctx, &block, x, positions, block.local ? train->swa_mask : train->causal_mask,
                                  cfg, NULL);
            continue;
        }
        struct tnn_kv_step kv = {
            .k_cache = cached->k_caches[l],
            .v_cache = cached->v_caches[l],
            .kv_rows = cached->rows,
            .kq_mask = block.local ? cached->mask_swa : cached->mask,
            .n_kv = cached->n_kv,
            .flash = cached->flash,
            .conv_state = cached->conv_states[l],
            .conv_update = &cached->state_updates[2 * l],
            .ssm_state = cached->ssm_states[l],
            .ssm_update = &cached->state_updates[2 * l + 1],
            .state_slot = cached->state_slot,
        };
        for (int slot = 0; slot < TNN_LORA_SLOTS && cached->base_only; ++slot) {
            block.lora_a[slot] = block.lora_b[slot] = NULL;
        }
        x = tnn_block_forward(ctx, &block, x, positions, NULL, cfg, &kv);
    }
    if (train != NULL) {
        tnn_note_residual(train, cfg->n_layers, x);
    }
    if (first > 0) {
        x = ggml_view_2d(ctx, x, x->ne[0], x->ne[1] - first, x->nb[1], (size_t) first * x->nb[1]);
    }
    x = tnn_rms_norm(ctx, x, m->output_norm, cfg->norm_eps);
    struct ggml_tensor * logits = ggml_mul_mat(ctx, m->head, x);          /* [vocab, n - first] */
    if (cfg->logit_scaling > 0.0f) {
        logits = ggml_scale(ctx, logits, 1.0f / cfg->logit_scaling);
    }
    return cfg->final_softcap > 0.0f ? tnn_softcap(ctx, logits, cfg->final_softcap) : logits;
}

/* tokens, positions int32 [t_seq*t_batch] -> logits [vocab, t_seq*t_batch] */
static struct ggml_tensor * forward(struct ggml_context * ctx, const struct tnn_model * model,
                                    const struct tnn_forward_inputs * in) {
    const struct tnn_llama * m = tnn_llama_of(model);
    return blocks_and_head(ctx, m, tnn_llama_embed(ctx, m, in->tokens), in->positions, in, NULL, 0);
}

/* tokens, positions [n] -> logits [vocab, 1] of the last token, as forward
 * but over the caches, and with the output head run on the last token only:
 * a prompt's other logits are never read. */
static struct ggml_tensor * forward_cached(struct ggml_context * ctx, const struct tnn_model * model,
                                           const struct tnn_decode_inputs * in) {
    const struct tnn_llama * m = tnn_llama_of(model);
    return blocks_and_head(ctx, m, tnn_llama_embed(ctx, m, in->tokens), in->positions, NULL, in, in->n - 1);
}

/* ---- GGUF export ---------------------------------------------------------------- */

static void gguf_metadata(struct gguf_context * gguf, const tnn_model_config * cfg) {
    tnn_gguf_model_keys(gguf, "llama", cfg);
    gguf_set_val_u32(gguf, "llama.attention.head_count_kv", (uint32_t) cfg->n_kv_heads);
    gguf_set_val_f32(gguf, "llama.attention.layer_norm_rms_epsilon", cfg->norm_eps);
    gguf_set_val_f32(gguf, "llama.rope.freq_base", cfg->rope_base);
    gguf_set_val_u32(gguf, "llama.rope.dimension_count", (uint32_t) tnn_head_dim(cfg));
    tnn_gguf_vocab_keys(gguf, "llama", cfg);
}

/* A model with a donor lens is written with the lens folded into its
 * embedding, E' [d_model, vocab] = lens^T E (E [donor_d, vocab], lens
 * [donor_d, d_model]), so that llama.cpp sees a plain llama. */
static struct ggml_tensor * gguf_tensor(struct ggml_context * host, const struct tnn_model * model,
                                        struct ggml_tensor * param) {
    const struct tnn_llama * m = tnn_llama_of(model);
    if (m->embd_proj == NULL || (param != m->token_embd && param != m->embd_proj)) {
        return tnn_host_copy(host, param);
    }
    if (param == m->embd_proj) {
        return NULL;
    }
    const struct ggml_tensor *e = m->token_embd, *p = m->embd_proj;
    const int64_t donor_d = e->ne[0], vocab = e->ne[1], d_model = p->ne[1];
    const struct ggml_tensor * e_host = tnn_host_copy(host, m->token_embd);
    const struct ggml_tensor * p_host = tnn_host_copy(host, m->embd_proj);
    struct ggml_tensor * out = ggml_new_tensor_2d(host, GGML_TYPE_F32, d_model, vocab);
    ggml_set_name(out, "token_embd.weight");
    const float *E = e_host->data, *P = p_host->data;
    float * O = out->data;
    for (int64_t v = 0; v < vocab; ++v) {
        for (int64_t j = 0; j < d_model; ++j) {
            double acc = 0.0;
            for (int64_t i = 0; i < donor_d; ++i) {
                acc += (double) P[i + j * donor_d] * E[i + v * donor_d];
            }
            O[j + v * d_model] = (float) acc;
        }
    }
    return out;
}

const struct tnn_arch tnn_arch_llama = {
    .name = "llama",
    .create = tnn_llama_create,
    .create_on_base = create_on_base,
    .forward = forward,
    .forward_cached = forward_cached,
    .gguf_metadata = gguf_metadata,
    .gguf_tensor = gguf_tensor,
};
