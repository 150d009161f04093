/* Generation: a forward graph over a KV cache, so that generating n tokens
 * costs O(n) forwards of one token instead of O(n) forwards of the whole
 * prefix. The graph does not depend on the position it runs at (the cache
 * rows, the attention mask and the positions are inputs), so it is built
 * once per shape and reused: a generated token only uploads three small
 * inputs and computes. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Cache positions attended are rounded up to this, so that one graph serves
 * this many consecutive tokens; masked positions cost flash attention a
 * mask read each. */
#define KV_WINDOW_STEP 256

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
    if (s->arch != TNN_ARCH_LLAMA) {
        return tnn_fail(TNN_ERR_ARG, "generation with a KV cache runs llama models only");
    }
    if (s->model.cfg.swa_window > 0 && n_ctx > s->model.cfg.swa_window) {
        /* the decode graph has one mask for every layer: within the window a
         * local layer sees what a global one sees */
        return tnn_fail(TNN_ERR_ARG, "this model's local layers attend over %d positions: generation "
                        "runs a context of at most %d tokens, not %d", s->model.cfg.swa_window,
                        s->model.cfg.swa_window, n_ctx);
    }
    const tnn_llama_config * cfg = &s->model.cfg;
    const int64_t head_dim = tnn_head_dim(cfg);
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
    /* [head_dim, n_ctx, n_kv_heads]: the first n_kv positions of every head
     * are a strided view that attention reads in place */
    for (int32_t l = 0; l < cfg->n_layers; ++l) {
        s->k_caches[l] = ggml_new_tensor_3d(s->ctx_kv, GGML_TYPE_F32, head_dim, n_ctx, cfg->n_kv_heads);
        s->v_caches[l] = ggml_new_tensor_3d(s->ctx_kv, GGML_TYPE_F32, head_dim, n_ctx, cfg->n_kv_heads);
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
    /* flash attention unless the backend lacks it (the CUDA build leaves it
     * out) or TNN_DECODE_ATTENTION=matmul asks for the portable path */
    const char * attention = getenv("TNN_DECODE_ATTENTION");
    s->decode_flash = !(attention != NULL && strcmp(attention, "matmul") == 0);
    return TNN_OK;
}

void tnn_kv_free(tnn_session * s) {
    if (s->ctx_decode)    ggml_free(s->ctx_decode);
    if (s->galloc_decode) ggml_gallocr_free(s->galloc_decode);
    if (s->buf_kv)        ggml_backend_buffer_free(s->buf_kv);
    if (s->ctx_kv)        ggml_free(s->ctx_kv);
    free(s->k_caches);
    free(s->v_caches);
    free(s->decode_mask_host);
}

/* tokens, positions [n] -> logits [vocab, 1] of the last token, as the
 * llama forward (llama.c) but over the caches, and with the output head run
 * on the last token only: a prompt's other logits are never read. */
static struct ggml_tensor * decode_forward(struct ggml_context * ctx, tnn_session * s,
                                           struct ggml_cgraph * graph, int32_t n, int32_t n_kv) {
    const struct tnn_llama * m = &s->model;
    const tnn_llama_config * cfg = &m->cfg;
    s->decode_tokens = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n);
    s->decode_positions = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n);
    s->decode_rows = ggml_new_tensor_1d(ctx, GGML_TYPE_I64, n);
    s->decode_mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, n_kv, n);
    ggml_set_input(s->decode_tokens);
    ggml_set_input(s->decode_positions);
    ggml_set_input(s->decode_rows);
    ggml_set_input(s->decode_mask);

    struct ggml_tensor * x = tnn_embed(ctx, m, s->decode_tokens);
    if (m->embd_proj) {
        x = ggml_mul_mat(ctx, m->embd_proj, x);
    }
    for (int32_t l = 0; l < cfg->n_layers; ++l) {
        struct tnn_kv_step kv = {
            .k_cache = s->k_caches[l], .v_cache = s->v_caches[l],
            .kv_rows = s->decode_rows, .kq_mask = s->decode_mask, .n_kv = n_kv, .flash = s->decode_flash,
        };
        struct tnn_block block = m->blocks[l];
        if (s->decode_base_only) {
            for (int slot = 0; slot < TNN_LORA_SLOTS; ++slot) {
                block.lora_a[slot] = block.lora_b[slot] = NULL;
            }
        }
        x = tnn_block_forward(ctx, &block, x, s->decode_positions, NULL, cfg, &kv);
    }
    x = ggml_view_1d(ctx, x, x->ne[0], (size_t) (n - 1) * x->nb[1]);      /* the last token */
    x = tnn_rms_norm(ctx, x, m->output_norm, cfg->rms_eps);
    return ggml_mul_mat(ctx, m->head, x);                                 /* [vocab, 1] */
}

/* Build (or keep) the graph for n new tokens attending n_kv positions. */
static int decode_graph(tnn_session * s, int32_t n, int32_t n_kv) {
    if (s->decode_graph != NULL && s->decode_n == n && s->decode_n_kv == n_kv) {
        return TNN_OK;
    }
    if (s->ctx_decode != NULL) {
        ggml_free(s->ctx_decode);
        s->ctx_decode = NULL;
    }
    s->decode_graph = NULL;
    const size_t graph_size = 2048 + (size_t) s->model.cfg.n_layers * 64;
    struct ggml_init_params ip = {
        .mem_size = graph_size * ggml_tensor_overhead() + ggml_graph_overhead_custom(graph_size, false),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    for (;;) {
        s->ctx_decode = ggml_init(ip);
        if (s->ctx_decode == NULL) {
            return tnn_fail(TNN_ERR_ALLOC, "out of memory building the decode graph");
        }
        struct ggml_cgraph * graph = ggml_new_graph_custom(s->ctx_decode, graph_size, false);
        s->decode_logits = decode_forward(s->ctx_decode, s, graph, n, n_kv);
        ggml_set_output(s->decode_logits);
        ggml_build_forward_expand(graph, s->decode_logits);
        const struct ggml_tensor * unsupported = NULL;
        for (int i = 0; i < ggml_graph_n_nodes(graph) && unsupported == NULL; ++i) {
            struct ggml_tensor * node = ggml_graph_node(graph, i);
            if (!ggml_backend_supports_op(s->backend, node)) {
                unsupported = node;
            }
        }
        if (unsupported == NULL) {
            s->decode_graph = graph;
            break;
        }
        ggml_free(s->ctx_decode);
        s->ctx_decode = NULL;
        if (unsupported->op == GGML_OP_FLASH_ATTN_EXT && s->decode_flash) {
            s->decode_flash = false;         /* once for the session: mul_mat + softmax */
            continue;
        }
        return tnn_fail(TNN_ERR_BACKEND, "the %s backend cannot run %s (%s, type %s) of the decode graph",
                        tnn_backend_name(), ggml_op_desc(unsupported), unsupported->name,
                        ggml_type_name(unsupported->src[0] ? unsupported->src[0]->type : unsupported->type));
    }
    if (!ggml_gallocr_alloc_graph(s->galloc_decode, s->decode_graph)) {
        s->decode_graph = NULL;
        return tnn_fail(TNN_ERR_ALLOC, "out of %s memory for the decode graph", tnn_backend_name());
    }
    s->decode_n = n;
    s->decode_n_kv = n_kv;
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

    const int64_t end = (int64_t) n_past + n;
    const int64_t window = (end + KV_WINDOW_STEP - 1) / KV_WINDOW_STEP * KV_WINDOW_STEP;
    const int32_t n_kv = (int32_t) (window < s->n_ctx ? window : s->n_ctx);
    int status = decode_graph(s, n, n_kv);
    if (status != TNN_OK) {
        return status;
    }

    /* query j (position n_past + j) sees cache positions 0 .. n_past + j */
    const size_t n_mask = (size_t) n_kv * (size_t) n;
    if (n_mask > s->decode_mask_cap) {
        uint16_t * grown = realloc(s->decode_mask_host, n_mask * sizeof(uint16_t));
        if (grown == NULL) {
            return tnn_fail(TNN_ERR_ALLOC, "out of memory for a %d x %d attention mask", n_kv, n);
        }
        s->decode_mask_host = grown;
        s->decode_mask_cap = n_mask;
    }
    /* the 8-byte rows first: after n 4-byte positions they would be misaligned for odd n */
    int64_t * rows = malloc((size_t) n * (sizeof(int64_t) + sizeof(int32_t)));
    if (rows == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory");
    }
    int32_t * positions = (int32_t *) (rows + n);
    const ggml_fp16_t zero = ggml_fp32_to_fp16(0.0f), minus_inf = ggml_fp32_to_fp16(-INFINITY);
    for (int32_t j = 0; j < n; ++j) {
        positions[j] = n_past + j;
        rows[j] = n_past + j;
        uint16_t * mask_row = s->decode_mask_host + (size_t) j * n_kv;
        const int32_t seen = n_past + j + 1;
        for (int32_t i = 0; i < n_kv; ++i) {
            mask_row[i] = i < seen ? zero : minus_inf;
        }
    }
    ggml_backend_tensor_set(s->decode_tokens, tokens, 0, (size_t) n * sizeof(int32_t));
    ggml_backend_tensor_set(s->decode_positions, positions, 0, (size_t) n * sizeof(int32_t));
    ggml_backend_tensor_set(s->decode_rows, rows, 0, (size_t) n * sizeof(int64_t));
    ggml_backend_tensor_set(s->decode_mask, s->decode_mask_host, 0, n_mask * sizeof(uint16_t));
    free(rows);
    if (ggml_backend_graph_compute(s->backend, s->decode_graph) != GGML_STATUS_SUCCESS) {
        return tnn_fail(TNN_ERR_BACKEND, "the %s backend failed to run the decode graph", tnn_backend_name());
    }
    ggml_backend_tensor_get(s->decode_logits, logits_out, 0, (size_t) cfg->vocab * sizeof(float));
    return TNN_OK;
}

int tnn_decode_adapters(tnn_session * s, int32_t on) {
    if (s == NULL || !s->realized) {
        return tnn_fail(TNN_ERR_STATE, "decode_adapters before realize: there is no model to run");
    }
    if (on != 0 && on != 1) {
        return tnn_fail(TNN_ERR_ARG, "decode_adapters takes 0 (base alone) or 1 (with adapters), got %d", on);
    }
    if (s->decode_base_only != (on == 0)) {
        s->decode_base_only = on == 0;
        s->decode_graph = NULL;              /* the kept graph is of the other kind */
    }
    return TNN_OK;
}
