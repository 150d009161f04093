/* The llama architecture: token embedding -> blocks -> final RMSNorm ->
 * tied or untied output projection. Also the realize step that allocates and
 * randomly initialises its parameters. */
#include "internal.h"
#include "gguf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tnn_llama_check_config(const tnn_llama_config * c) {
    if (c == NULL) {
        return tnn_fail(TNN_ERR_ARG, "config is NULL");
    }
    struct { const char * name; int32_t value; int32_t max; } positive[] = {
        { "vocab", c->vocab, 1 << 24 },     { "d_model", c->d_model, 1 << 16 },
        { "n_layers", c->n_layers, 1024 },  { "n_heads", c->n_heads, 1024 },
        { "n_kv_heads", c->n_kv_heads, 1024 }, { "d_ff", c->d_ff, 1 << 18 },
        { "t_seq", c->t_seq, 1 << 16 },     { "t_batch", c->t_batch, 1 << 12 },
    };
    for (size_t i = 0; i < sizeof(positive) / sizeof(positive[0]); ++i) {
        if (positive[i].value < 1 || positive[i].value > positive[i].max) {
            return tnn_fail(TNN_ERR_ARG, "%s must be between 1 and %d, got %d",
                            positive[i].name, positive[i].max, positive[i].value);
        }
    }
    if (c->head_dim < 0 || c->head_dim > (1 << 12) || c->head_dim % 2 != 0) {
        return tnn_fail(TNN_ERR_ARG, "head_dim must be 0 (d_model / n_heads) or even and at most %d, got %d",
                        1 << 12, c->head_dim);
    }
    if (c->head_dim == 0 && (c->d_model % c->n_heads != 0 || (c->d_model / c->n_heads) % 2 != 0)) {
        return tnn_fail(TNN_ERR_ARG, "d_model (%d) must be n_heads (%d) times an even head width",
                        c->d_model, c->n_heads);
    }
    if (c->n_heads % c->n_kv_heads != 0) {
        return tnn_fail(TNN_ERR_ARG, "n_kv_heads (%d) must divide n_heads (%d)",
                        c->n_kv_heads, c->n_heads);
    }
    if (!(c->rope_base > 0.0f) || !isfinite(c->rope_base)) {
        return tnn_fail(TNN_ERR_ARG, "rope_base must be positive, got %g", c->rope_base);
    }
    if (!(c->rms_eps > 0.0f) || !isfinite(c->rms_eps)) {
        return tnn_fail(TNN_ERR_ARG, "rms_eps must be positive, got %g", c->rms_eps);
    }
    if (!(c->init_scale >= 0.0f) || !isfinite(c->init_scale)) {
        return tnn_fail(TNN_ERR_ARG, "init_scale must be >= 0, got %g", c->init_scale);
    }
    if (c->donor_d_in < 0 || c->donor_d_in > (1 << 16)) {
        return tnn_fail(TNN_ERR_ARG, "donor_d_in must be between 0 and %d, got %d", 1 << 16, c->donor_d_in);
    }
    if (c->donor_d_in > 0 && c->donor_d_in != c->d_model && !c->untied) {
        return tnn_fail(TNN_ERR_ARG, "a donor embedding of width %d needs a lens to d_model %d "
                        "and an untied output (untied = 1)", c->donor_d_in, c->d_model);
    }
    if (c->swa_window < 0 || (c->swa_window > 0 && (c->swa_period < 1 || !(c->rope_base_swa > 0.0f) ||
                                                    !isfinite(c->rope_base_swa)))) {
        return tnn_fail(TNN_ERR_ARG, "sliding-window attention needs swa_window > 0, swa_period >= 1 "
                        "and a positive rope_base_swa (got %d, %d, %g)", c->swa_window, c->swa_period,
                        c->rope_base_swa);
    }
    if ((int64_t) c->t_seq * c->t_batch > (1 << 20)) {
        return tnn_fail(TNN_ERR_ARG, "t_seq * t_batch must be at most %d tokens", 1 << 20);
    }
    return TNN_OK;
}

/* ---- realize ------------------------------------------------------------ */

int tnn_realize_llama(tnn_session * s, const tnn_llama_config * cfg,
                      int32_t * tokens_handle, int32_t * positions_handle) {
    int status = tnn_realize_begin(s, tokens_handle != NULL && positions_handle != NULL, "tnn_realize_llama");
    if (status != TNN_OK) {
        return status;
    }
    status = tnn_llama_check_config(cfg);
    if (status != TNN_OK) {
        return status;
    }
    struct tnn_llama * m = &s->model;
    m->cfg = *cfg;
    m->blocks = calloc((size_t) cfg->n_layers, sizeof(*m->blocks));
    const size_t n_tensors = 8 + (size_t) cfg->n_layers * 16;
    struct ggml_init_params ip = {
        .mem_size = n_tensors * ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    s->ctx_static = ggml_init(ip);
    if (m->blocks == NULL || s->ctx_static == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory creating the model");
    }
    struct ggml_context * ctx = s->ctx_static;

    const bool lens = cfg->donor_d_in > 0 && cfg->donor_d_in != cfg->d_model;
    const int64_t embd_width = lens ? cfg->donor_d_in : cfg->d_model;
    m->token_embd = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, embd_width, cfg->vocab);
    ggml_set_name(m->token_embd, "token_embd.weight");
    status = tnn_add_param(s, m->token_embd);
    m->embd_proj = NULL;
    if (lens && status == TNN_OK) {
        m->embd_proj = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, cfg->donor_d_in, cfg->d_model);
        ggml_set_name(m->embd_proj, "token_embd_proj.weight");
        status = tnn_add_param(s, m->embd_proj);
    }
    for (int32_t l = 0; l < cfg->n_layers && status == TNN_OK; ++l) {
        struct tnn_block * b = &m->blocks[l];
        tnn_block_create(ctx, b, l, cfg);
        struct ggml_tensor * weights[] = { b->attn_norm, b->wq, b->wk, b->wv, b->bq, b->bk, b->bv,
                                           b->q_norm, b->k_norm, b->wo, b->post_attn_norm, b->ffn_norm,
                                           b->w_gate, b->w_up, b->w_down, b->post_ffn_norm };
        for (size_t i = 0; i < sizeof(weights) / sizeof(weights[0]) && status == TNN_OK; ++i) {
            if (weights[i] != NULL) {
                status = tnn_add_param(s, weights[i]);
            }
        }
    }
    m->output_norm = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, cfg->d_model);
    ggml_set_name(m->output_norm, "output_norm.weight");
    if (status == TNN_OK) status = tnn_add_param(s, m->output_norm);
    m->output = NULL;
    if (cfg->untied && status == TNN_OK) {
        m->output = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, cfg->d_model, cfg->vocab);
        ggml_set_name(m->output, "output.weight");
        status = tnn_add_param(s, m->output);
    }
    m->head = m->output ? m->output : m->token_embd;

    if (status != TNN_OK) {
        return status;
    }
    return tnn_finish_token_model(s, tokens_handle, positions_handle);
}

/* ---- realize a frozen GGUF base with LoRA adapters ------------------------ */

static int check_lora_config(const tnn_lora_config * lora) {
    if (lora == NULL) {
        return tnn_fail(TNN_ERR_ARG, "LoRA config is NULL");
    }
    if (lora->rank < 1) {
        return tnn_fail(TNN_ERR_ARG, "LoRA rank must be at least 1, got %d", lora->rank);
    }
    if (lora->targets == 0 || (lora->targets & ~((1u << TNN_LORA_SLOTS) - 1)) != 0) {
        return tnn_fail(TNN_ERR_ARG, "LoRA targets must be a non-empty set of q,k,v,o,gate,up,down");
    }
    if (!isfinite(lora->alpha) || !(lora->init_scale >= 0.0f) || !isfinite(lora->init_scale)) {
        return tnn_fail(TNN_ERR_ARG, "LoRA alpha must be finite and init_scale >= 0");
    }
    if (lora->base_compute != TNN_BASE_FAST && lora->base_compute != TNN_BASE_STORED) {
        return tnn_fail(TNN_ERR_ARG, "base_compute must be %d (fast) or %d (stored), got %d",
                        TNN_BASE_FAST, TNN_BASE_STORED, lora->base_compute);
    }
    return TNN_OK;
}

/* Give the base tensors their memory: in place in the mapped file when the
 * backend computes on host memory, else a device copy (the map is let go
 * once the fast copies are made from it). */
static int place_base_weights(tnn_session * s, const char * path) {
    int status = tnn_map_file(path, &s->base_file);
    if (status != TNN_OK) {
        return status;
    }
    const size_t data_offset = gguf_get_data_offset(s->gguf_base);
    char * data = (char *) s->base_file.addr + data_offset;
    const size_t data_size = s->base_file.size - data_offset;
    /* in place needs ggml's 32-byte tensor alignment; GGUF's default is 32 */
    const bool in_place = tnn_backend_uses_host_memory() && ((uintptr_t) data % 32) == 0;
    if (in_place) {
        s->buf_base = ggml_backend_dev_buffer_from_host_ptr(ggml_backend_get_device(s->backend), data,
                                                             data_size, data_size);
    } else {
        s->buf_base = ggml_backend_alloc_ctx_tensors(s->ctx_base, s->backend);
    }
    if (s->buf_base == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of %s memory for the base model", tnn_backend_name());
    }
    for (int64_t i = 0; i < gguf_get_n_tensors(s->gguf_base); ++i) {
        struct ggml_tensor * t = ggml_get_tensor(s->ctx_base, gguf_get_tensor_name(s->gguf_base, i));
        char * src = data + gguf_get_tensor_offset(s->gguf_base, i);
        if (in_place) {
            if (ggml_backend_tensor_alloc(s->buf_base, t, src) != GGML_STATUS_SUCCESS) {
                return tnn_fail(TNN_ERR_ALLOC, "cannot place tensor %s in the mapped file", t->name);
            }
        } else {
            ggml_backend_tensor_set(t, src, 0, ggml_nbytes(t));
        }
    }
    s->base_in_place = in_place;
    return TNN_OK;
}

static int bind_base(tnn_session * s) {
    struct tnn_llama * m = &s->model;
    const tnn_llama_config * cfg = &m->cfg;
    struct ggml_context * base = s->ctx_base;
    m->token_embd = ggml_get_tensor(base, "token_embd.weight");
    m->output_norm = ggml_get_tensor(base, "output_norm.weight");
    m->output = cfg->untied ? ggml_get_tensor(base, "output.weight") : NULL;
    m->head = m->output ? m->output : m->token_embd;
    if (m->output_norm == NULL || m->output_norm->ne[0] != cfg->d_model) {
        return tnn_fail(TNN_ERR_ARG, "tensor output_norm.weight is missing or misshapen");
    }
    if (m->token_embd->ne[0] != cfg->d_model || (m->output && m->output->ne[0] != cfg->d_model)) {
        return tnn_fail(TNN_ERR_ARG, "token_embd.weight or output.weight does not have width %d",
                        cfg->d_model);
    }
    for (int32_t l = 0; l < cfg->n_layers; ++l) {
        int status = tnn_block_bind(base, &m->blocks[l], l, cfg);
        if (status != TNN_OK) {
            return status;
        }
    }
    return TNN_OK;
}

int tnn_realize_for_mmap(tnn_session * s, const char * path, const tnn_lora_config * lora,
                         int32_t * tokens_handle, int32_t * positions_handle) {
    if (s == NULL || tokens_handle == NULL || positions_handle == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_realize_for_mmap: NULL argument");
    }
    if (s->realized || s->ctx_base != NULL) {
        return tnn_fail(TNN_ERR_STATE, "realize called twice on one session");
    }
    int status = check_lora_config(lora);
    if (status != TNN_OK) {
        return status;
    }
    struct tnn_llama * m = &s->model;
    status = tnn_gguf_open(path, &m->cfg, &s->gguf_base, &s->ctx_base);
    if (status != TNN_OK) {
        return status;
    }
    snprintf(s->base_arch, sizeof(s->base_arch), "%s", tnn_gguf_arch(s->gguf_base));
    m->cfg.t_seq = lora->t_seq;
    m->cfg.t_batch = lora->t_batch;
    m->cfg.init_scale = lora->init_scale;
    m->cfg.seed = lora->seed;
    if ((status = tnn_llama_check_config(&m->cfg)) != TNN_OK) {
        return status;
    }
    m->blocks = calloc((size_t) m->cfg.n_layers, sizeof(*m->blocks));
    if (m->blocks == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory creating the model");
    }
    if ((status = bind_base(s)) != TNN_OK) {
        return status;
    }
    for (int slot = 0; slot < TNN_LORA_SLOTS; ++slot) {
        if (!(lora->targets & (1u << slot))) {
            continue;
        }
        const struct ggml_tensor * w = tnn_block_weight(&m->blocks[0], slot);
        const int64_t max_rank = w->ne[0] < w->ne[1] ? w->ne[0] : w->ne[1];
        if (lora->rank > max_rank) {
            return tnn_fail(TNN_ERR_ARG, "LoRA rank %d is larger than %s allows (min(d_in, d_out) = %lld)",
                            lora->rank, tnn_lora_slot_name(slot), (long long) max_rank);
        }
    }
    if ((status = place_base_weights(s, path)) != TNN_OK) {
        return status;
    }
    if (lora->base_compute == TNN_BASE_FAST && (status = tnn_frozen_prepare(s)) != TNN_OK) {
        return status;
    }
    if (!s->base_in_place) {
        tnn_unmap_file(&s->base_file);
    }
    for (struct ggml_tensor * t = ggml_get_first_tensor(s->ctx_base); t != NULL;
         t = ggml_get_next_tensor(s->ctx_base, t)) {
        if (tnn_table_add(s, t, TNN_KIND_FROZEN, -1) < 0) {
            return TNN_ERR_ALLOC;
        }
    }

    struct ggml_init_params ip = {
        .mem_size = (8 + (size_t) m->cfg.n_layers * 2 * TNN_LORA_SLOTS) * ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    s->ctx_static = ggml_init(ip);
    if (s->ctx_static == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory creating the adapters");
    }
    for (int32_t l = 0; l < m->cfg.n_layers; ++l) {
        struct tnn_block * b = &m->blocks[l];
        tnn_block_add_lora(s->ctx_static, b, l, lora);
        for (int slot = 0; slot < TNN_LORA_SLOTS; ++slot) {
            if (b->lora_a[slot] && (tnn_add_param(s, b->lora_a[slot]) || tnn_add_param(s, b->lora_b[slot]))) {
                return TNN_ERR_ALLOC;
            }
        }
    }
    s->lora = *lora;
    s->has_lora = true;
    return tnn_finish_token_model(s, tokens_handle, positions_handle);
}

/* ---- forward ------------------------------------------------------------ */

struct ggml_tensor * tnn_embed(struct ggml_context * ctx, const struct tnn_llama * m,
                               struct ggml_tensor * tokens) {
    struct ggml_tensor * x = ggml_get_rows(ctx, m->token_embd, tokens);
    if (m->cfg.embd_scale) {
        x = ggml_scale(ctx, x, sqrtf((float) m->cfg.d_model));
    }
    return x;
}

struct ggml_tensor * tnn_llama_forward(struct ggml_context * ctx, const struct tnn_llama * m,
                                       struct ggml_tensor * tokens, struct ggml_tensor * positions) {
    const tnn_llama_config * cfg = &m->cfg;
    struct ggml_tensor * x = tnn_embed(ctx, m, tokens);                    /* [d or donor_d, n] */
    if (m->embd_proj) {
        x = ggml_mul_mat(ctx, m->embd_proj, x);                            /* [d, n] */
    }
    for (int32_t l = 0; l < cfg->n_layers; ++l) {
        const struct tnn_block * b = &m->blocks[l];
        x = tnn_block_forward(ctx, b, x, positions, b->local ? m->swa_mask : m->causal_mask, cfg, NULL);
    }
    x = tnn_rms_norm(ctx, x, m->output_norm, cfg->rms_eps);
    return ggml_mul_mat(ctx, m->head, x);                                 /* [vocab, n] */
}

/* ---- warm start ------------------------------------------------------------ */

int tnn_upload_donor(tnn_session * s, const float * data, size_t n_floats) {
    if (s == NULL || data == NULL) {
        return tnn_fail(TNN_ERR_ARG, "upload_donor: NULL argument");
    }
    if (!s->realized || s->has_lora) {
        return tnn_fail(TNN_ERR_STATE, "upload_donor before realize_scratch: the warm window "
                        "opens when the random-init model is realized");
    }
    if (s->built) {
        return tnn_fail(TNN_ERR_STATE, "upload_donor after build: the warm window is closed "
                        "(the donor would not be what training starts from)");
    }
    const struct ggml_tensor * e = s->model.token_embd;
    if (n_floats != (size_t) ggml_nelements(e)) {
        return tnn_fail(TNN_ERR_ARG, "upload_donor: the embedding holds %lld x %lld floats, got %zu",
                        (long long) e->ne[1], (long long) e->ne[0], n_floats);
    }
    ggml_backend_tensor_set(s->model.token_embd, data, 0, n_floats * sizeof(float));
    return TNN_OK;
}
