/* Generation: a forward graph over a KV cache, built for each decode call
 * (prompt or one token), so that generating n tokens costs O(n) forwards of
 * one token instead of O(n) forwards of the whole prefix. */
#include "internal.h"

#include <stdlib.h>

int tnn_kv_init(tnn_session * s, int32_t n_ctx) {
    if (s == NULL || !s->realized) {
        return tnn_fail(TNN_ERR_STATE, "kv_init before realize: there is no model to run");
    }
    if (n_ctx < 1 || n_ctx > (1 << 20)) {
        return tnn_fail(TNN_ERR_ARG, "the context must be between 1 and %d tokens, got %d", 1 << 20, n_ctx);
    }
    if (s->ctx_kv != NULL) {
        return tnn_fail(TNN_ERR_STATE, "kv_init called twice on one session");
    }
    const tnn_llama_config * cfg = &s->model.cfg;
    const int64_t head_dim = cfg->d_model / cfg->n_heads;
    struct ggml_init_params ip = {
        .mem_size = (size_t) (2 * cfg->n_layers + 2) * ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    s->ctx_kv = ggml_init(ip);
    s->k_caches = calloc((size_t) cfg->n_layers, sizeof(*s->k_caches));
    s->v_caches = calloc((size_t) cfg->n_layers, sizeof(*s->v_caches));
    if (s->ctx_kv == NULL || s->k_caches == NULL || s->v_caches == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory creating the KV cache");
    }
    for (int32_t l = 0; l < cfg->n_layers; ++l) {
        s->k_caches[l] = ggml_new_tensor_3d(s->ctx_kv, GGML_TYPE_F32, head_dim, cfg->n_kv_heads, n_ctx);
        s->v_caches[l] = ggml_new_tensor_3d(s->ctx_kv, GGML_TYPE_F32, head_dim, cfg->n_kv_heads, n_ctx);
        ggml_format_name(s->k_caches[l], "cache_k.%d", l);
        ggml_format_name(s->v_caches[l], "cache_v.%d", l);
    }
    s->buf_kv = ggml_backend_alloc_ctx_tensors(s->ctx_kv, s->backend);
    s->galloc_decode = ggml_gallocr_new(ggml_backend_get_default_buffer_type(s->backend));
    if (s->buf_kv == NULL || s->galloc_decode == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of %s memory for a %d-token KV cache", tnn_backend_name(), n_ctx);
    }
    ggml_backend_buffer_clear(s->buf_kv, 0);
    s->n_ctx = n_ctx;
    return TNN_OK;
}

int tnn_decode(tnn_session * s, const int32_t * tokens, int32_t n, int32_t n_past,
               float * logits_out, size_t n_logits) {
    if (s == NULL || tokens == NULL || logits_out == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_decode: NULL argument");
    }
    if (s->ctx_kv == NULL) {
        return tnn_fail(TNN_ERR_STATE, "decode before kv_init");
    }
    const tnn_llama_config * cfg = &s->model.cfg;
    if (n < 1 || n_past < 0 || (int64_t) n_past + n > s->n_ctx) {
        return tnn_fail(TNN_ERR_ARG, "decode of %d tokens after %d does not fit the %d-token context",
                        n, n_past, s->n_ctx);
    }
    if (n_logits != (size_t) cfg->vocab) {
        return tnn_fail(TNN_ERR_ARG, "decode: the logits buffer must hold %d floats, got %zu",
                        cfg->vocab, n_logits);
    }
    for (int32_t i = 0; i < n; ++i) {
        if (tokens[i] < 0 || tokens[i] >= cfg->vocab) {
            return tnn_fail(TNN_ERR_ARG, "token %d at %d is outside the vocabulary [0, %d)",
                            tokens[i], i, cfg->vocab);
        }
    }

    const size_t graph_size = 2048 + (size_t) cfg->n_layers * 64;
    struct ggml_init_params ip = {
        .mem_size = graph_size * ggml_tensor_overhead() + ggml_graph_overhead_custom(graph_size, false),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    struct ggml_context * ctx = ggml_init(ip);
    if (ctx == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory building the decode graph");
    }
    struct ggml_cgraph * graph = ggml_new_graph_custom(ctx, graph_size, false);
    struct ggml_tensor * tok = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n);
    struct ggml_tensor * pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n);
    ggml_set_input(tok);
    ggml_set_input(pos);
    struct ggml_tensor * logits = tnn_llama_forward(ctx, &s->model, tok, pos, graph, s->k_caches,
                                                    s->v_caches, n_past);
    ggml_set_output(logits);
    ggml_build_forward_expand(graph, logits);

    int status = TNN_OK;
    if (!ggml_gallocr_alloc_graph(s->galloc_decode, graph)) {
        status = tnn_fail(TNN_ERR_ALLOC, "out of %s memory for the decode graph", tnn_backend_name());
    } else {
        int32_t * positions = malloc((size_t) n * sizeof(int32_t));
        if (positions == NULL) {
            status = tnn_fail(TNN_ERR_ALLOC, "out of memory");
        } else {
            for (int32_t i = 0; i < n; ++i) positions[i] = n_past + i;
            ggml_backend_tensor_set(tok, tokens, 0, (size_t) n * sizeof(int32_t));
            ggml_backend_tensor_set(pos, positions, 0, (size_t) n * sizeof(int32_t));
            free(positions);
            if (ggml_backend_graph_compute(s->backend, graph) != GGML_STATUS_SUCCESS) {
                status = tnn_fail(TNN_ERR_BACKEND, "the %s backend failed to run the decode graph",
                                  tnn_backend_name());
            } else {
                ggml_backend_tensor_get(logits, logits_out, (size_t) (n - 1) * cfg->vocab * sizeof(float),
                                        (size_t) cfg->vocab * sizeof(float));
            }
        }
    }
    ggml_free(ctx);
    return status;
}
