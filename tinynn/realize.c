/* What every realize shares (llama.c, gpt2.c, vit.c): trainable parameters
 * registered in the tensor table, the token inputs, one buffer for both and
 * the seeded random init. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- seeded random init ------------------------------------------------- */

/* splitmix64: tiny, portable, and the same stream on every platform. */
static uint64_t splitmix64(uint64_t * state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* uniform in (0, 1], 53 bits */
static double uniform01(uint64_t * state) {
    return ((double) (splitmix64(state) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

/* Fill with N(0, scale^2) by Box-Muller. Each tensor has its own stream,
 * seeded from the session seed and the tensor's index, so adding a tensor
 * never shifts the values of the others. */
static void fill_normal(float * out, int64_t n, float scale, uint64_t seed, uint64_t index) {
    uint64_t state = seed ^ (0xD1B54A32D192ED03ull * (index + 1));
    for (int64_t i = 0; i < n; i += 2) {
        const double r = sqrt(-2.0 * log(uniform01(&state)));
        const double theta = 2.0 * M_PI * uniform01(&state);
        out[i] = (float) (scale * r * cos(theta));
        if (i + 1 < n) {
            out[i + 1] = (float) (scale * r * sin(theta));
        }
    }
}

static bool is_norm_or_bias(const struct ggml_tensor * t) {
    return ggml_n_dims(t) == 1;
}

/* Norm weights start at 1, biases (norm biases too) at 0, LoRA B at 0 (step
 * 1 sees exactly the base model), every other matrix N(0, init_scale^2). */
static int init_parameters(tnn_session * s) {
    const tnn_llama_config * cfg = &s->model.cfg;
    int64_t max_elems = 0;
    for (int32_t h = 0; h < s->n_table; ++h) {
        int64_t n = ggml_nelements(s->table[h].tensor);
        max_elems = n > max_elems ? n : max_elems;
    }
    float * host = malloc((size_t) max_elems * sizeof(float));
    if (host == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory initialising parameters");
    }
    for (int32_t h = 0; h < s->n_table; ++h) {
        struct ggml_tensor * t = s->table[h].tensor;
        if (s->table[h].kind != TNN_KIND_PARAM) {
            continue;
        }
        const int64_t n = ggml_nelements(t);
        if (strstr(t->name, ".lora_b") != NULL) {
            for (int64_t i = 0; i < n; ++i) host[i] = 0.0f;
        } else if (is_norm_or_bias(t)) {
            const float value = strstr(t->name, "norm.weight") ? 1.0f : 0.0f;
            for (int64_t i = 0; i < n; ++i) host[i] = value;
        } else {
            fill_normal(host, n, cfg->init_scale, cfg->seed, (uint64_t) h);
        }
        ggml_backend_tensor_set(t, host, 0, ggml_nbytes(t));
    }
    free(host);
    return TNN_OK;
}

/* ---- parameters and inputs ------------------------------------------------ */

int tnn_realize_begin(tnn_session * s, bool args_given, const char * fn) {
    if (s == NULL || !args_given) {
        return tnn_fail(TNN_ERR_ARG, "%s: NULL argument", fn);
    }
    if (s->realized) {
        return tnn_fail(TNN_ERR_STATE, "realize called twice on one session");
    }
    return TNN_OK;
}

int tnn_add_param(tnn_session * s, struct ggml_tensor * t) {
    ggml_set_param(t);
    return tnn_table_add(s, t, TNN_KIND_PARAM, -1) < 0 ? TNN_ERR_ALLOC : TNN_OK;
}

int tnn_add_ln_blocks(tnn_session * s, struct tnn_ln_block * blocks, int32_t n_layers,
                      int64_t d_model, int64_t d_ff) {
    int status = TNN_OK;
    for (int32_t l = 0; l < n_layers && status == TNN_OK; ++l) {
        struct ggml_tensor * tensors[TNN_LN_BLOCK_TENSORS];
        tnn_ln_block_create(s->ctx_static, &blocks[l], l, d_model, d_ff, tensors);
        for (int i = 0; i < TNN_LN_BLOCK_TENSORS && status == TNN_OK; ++i) {
            status = tnn_add_param(s, tensors[i]);
        }
    }
    return status;
}

static int add_token_inputs(tnn_session * s, int64_t n_tokens, int32_t * tokens_handle,
                            int32_t * positions_handle) {
    struct ggml_context * ctx = s->ctx_static;
    s->tokens = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n_tokens);
    ggml_set_name(s->tokens, "tokens");
    ggml_set_input(s->tokens);
    s->positions = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n_tokens);
    ggml_set_name(s->positions, "positions");
    ggml_set_input(s->positions);
    *tokens_handle = tnn_table_add(s, s->tokens, TNN_KIND_TOKENS, -1);
    *positions_handle = tnn_table_add(s, s->positions, TNN_KIND_POSITIONS, -1);
    return *tokens_handle < 0 || *positions_handle < 0 ? TNN_ERR_ALLOC : TNN_OK;
}

int tnn_allocate_and_init(tnn_session * s) {
    s->buf_static = ggml_backend_alloc_ctx_tensors(s->ctx_static, s->backend);
    if (s->buf_static == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of %s memory for the model parameters",
                        tnn_backend_name());
    }
    ggml_backend_buffer_clear(s->buf_static, 0);
    int status = init_parameters(s);
    if (status != TNN_OK) {
        return status;
    }
    s->realized = true;
    return TNN_OK;
}

int tnn_finish_token_model(tnn_session * s, int32_t * tokens_handle, int32_t * positions_handle) {
    const tnn_llama_config * cfg = &s->model.cfg;
    int status = add_token_inputs(s, (int64_t) cfg->t_seq * cfg->t_batch, tokens_handle, positions_handle);
    return status != TNN_OK ? status : tnn_allocate_and_init(s);
}
