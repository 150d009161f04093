/* Generation: a forward graph over a KV cache, so that generating n tokens
 * costs O(n) forwards of one token instead of O(n) forwards of the whole
 * prefix. The graph does not depend on the position it runs at (the cache
 * rows, the attention mask and the positions are inputs), so it is built
 * once per shape and reused: a generated token only uploads three small
 * inputs and computes. */
#include "session/session.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Cache positions attended are rounded up to this, so that one graph serves
 * this many consecutive tokens; masked positions cost flash attention a
 * mask read each. */
#define KV_WINDOW_STEP 256

int tnn_kv_init(tnn_session * s, int32_t n_ctx) {
    if (tnn_refuse_measuring(s, "kv_init") != TNN_OK) {
        return TNN_ERR_STATE;
    }
    if (s == NULL || !s->realized) {
        return tnn_fail(TNN_ERR_STATE, "kv_init before realize: there is no model to run");
    }
    if (n_ctx < 1 || n_ctx > (1 << 20)) {
        return tnn_fail(TNN_ERR_ARG, "the context must be between 1 and %d tokens, got %d", 1 << 20, n_ctx);
    }
    if (s->decoder.ctx_kv != NULL) {
        return tnn_fail(TNN_ERR_STATE, "kv_init called twice on one session");
    }
    if (s->model.arch->forward_cached == NULL) {
        return tnn_fail(TNN_ERR_ARG, "generation with a KV cache runs llama models only, not %s",
                        s->model.arch->name);
    }
    const tnn_model_config * cfg = &s->model.cfg;
    const int64_t head_dim = tnn_head_dim(cfg);
    struct ggml_init_params ip = {
        .mem_size = (size_t) (4 * cfg->n_layers + 3) * ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    s->decoder.ctx_kv = ggml_init(ip);
    s->decoder.k_caches = calloc((size_t) cfg->n_layers, sizeof(*s->decoder.k_caches));
    s->decoder.v_caches = calloc((size_t) cfg->n_layers, sizeof(*s->decoder.v_caches));
    s->decoder.conv_states = calloc((size_t) cfg->n_layers, sizeof(*s->decoder.conv_states));
    s->decoder.ssm_states = calloc((size_t) cfg->n_layers, sizeof(*s->decoder.ssm_states));
    s->decoder.state_updates = calloc(2 * (size_t) cfg->n_layers, sizeof(*s->decoder.state_updates));
    if (s->decoder.ctx_kv == NULL || s->decoder.k_caches == NULL || s->decoder.v_caches == NULL ||
        s->decoder.conv_states == NULL || s->decoder.ssm_states == NULL || s->decoder.state_updates == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory creating the KV cache");
    }
    /* [head_dim, n_ctx, n_kv_heads]: the first n_kv positions of every head
     * are a strided view that attention reads in place */
    for (int32_t l = 0; l < cfg->n_layers; ++l) {
        const char kind = tnn_layer_kind(cfg, l);
        if (tnn_layer_recurrent(cfg, l)) {
            const int64_t s_width = cfg->ssm_state, keys = s_width * cfg->ssm_groups;
            const int64_t channels = kind == 'c'   ? cfg->d_model
                                     : kind == 'd' ? 2 * keys + s_width * cfg->ssm_heads
                                                   : cfg->ssm_inner + 2 * keys;
            s->decoder.conv_states[l] = ggml_new_tensor_2d(s->decoder.ctx_kv, GGML_TYPE_F32, cfg->conv_kernel - 1,
                                                           channels);
            ggml_format_name(s->decoder.conv_states[l], "conv_state.%d", l);
            if (kind != 'c') {
                /* the delta rule's [S, S] a head, the scan's [S, head width] */
                const int64_t rows = kind == 'd' ? s_width : cfg->ssm_inner / cfg->ssm_heads;
                s->decoder.ssm_states[l] = ggml_new_tensor_3d(s->decoder.ctx_kv, GGML_TYPE_F32, s_width, rows,
                                                              cfg->ssm_heads);
                ggml_format_name(s->decoder.ssm_states[l], "ssm_state.%d", l);
            }
        }
        if (kind == 'a' || kind == 'p') {   /* 'p': Falcon-H1's attention beside its Mamba-2 */
            s->decoder.k_caches[l] = ggml_new_tensor_3d(s->decoder.ctx_kv, GGML_TYPE_F32, head_dim, n_ctx,
                                                        cfg->n_kv_heads);
            s->decoder.v_caches[l] = ggml_new_tensor_3d(s->decoder.ctx_kv, GGML_TYPE_F32, head_dim, n_ctx,
                                                        cfg->n_kv_heads);
            ggml_format_name(s->decoder.k_caches[l], "cache_k.%d", l);
            ggml_format_name(s->decoder.v_caches[l], "cache_v.%d", l);
        }
    }
    s->decoder.state_slot = ggml_new_tensor_1d(s->decoder.ctx_kv, GGML_TYPE_I32, 1);   /* 0 once cleared */
    ggml_set_name(s->decoder.state_slot, "state_slot");
    s->decoder.buf_kv = ggml_backend_alloc_ctx_tensors(s->decoder.ctx_kv, s->backend);
    s->decoder.galloc = ggml_gallocr_new(ggml_backend_get_default_buffer_type(s->backend));
    if (s->decoder.buf_kv == NULL || s->decoder.galloc == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of %s memory for a %d-token KV cache", tnn_backend_name(), n_ctx);
    }
    ggml_backend_buffer_clear(s->decoder.buf_kv, 0);
    s->decoder.n_ctx = n_ctx;
    /* flash attention unless the backend lacks it (the CUDA build leaves it
     * out), TNN_DECODE_ATTENTION=matmul asks for the portable path, or the
     * backend is Vulkan: ggml-vulkan's flash attention killed the process
     * (SIGSEGV inside Mesa's lavapipe, at the first one-token decode) in 31
     * of 600 `toy-generate --device vulkan` runs, mul_mat + softmax in 0 of
     * 160; a GPU driver we cannot test here gets the path that held. */
    const char * attention = getenv("TNN_DECODE_ATTENTION");
    s->decoder.flash = !(attention != NULL && strcmp(attention, "matmul") == 0) &&
                       strcmp(tnn_backend_name(), "vulkan") != 0;
    return TNN_OK;
}

void tnn_decoder_free(struct tnn_decoder * d) {
    ggml_free(d->ctx_graph);
    ggml_gallocr_free(d->galloc);
    tnn_free_tensors(d->ctx_kv, d->buf_kv);
    free(d->k_caches);
    free(d->v_caches);
    free(d->conv_states);
    free(d->ssm_states);
    free(d->state_updates);
    free(d->mask_host);
}

/* The decode graph's inputs, then the architecture's cached forward. */
static struct ggml_tensor * decode_forward(struct ggml_context * ctx, tnn_session * s, int32_t n, int32_t n_kv) {
    struct tnn_decoder * d = &s->decoder;
    d->tokens = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n);
    d->positions = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n);
    d->rows = ggml_new_tensor_1d(ctx, GGML_TYPE_I64, n);
    d->mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, n_kv, n);
    d->mask_swa = s->model.cfg.swa_window > 0 ? ggml_new_tensor_2d(ctx, GGML_TYPE_F16, n_kv, n) : NULL;
    if (d->mask_swa != NULL) {
        ggml_set_input(d->mask_swa);
    }
    ggml_set_input(d->tokens);
    ggml_set_input(d->positions);
    ggml_set_input(d->rows);
    ggml_set_input(d->mask);
    const struct tnn_decode_inputs in = {
        .tokens = d->tokens,
        .positions = d->positions,
        .rows = d->rows,
        .mask = d->mask,
        .mask_swa = d->mask_swa,
        .k_caches = d->k_caches,
        .v_caches = d->v_caches,
        .conv_states = d->conv_states,
        .ssm_states = d->ssm_states,
        .state_slot = d->state_slot,
        .state_updates = d->state_updates,
        .n = n,
        .n_kv = n_kv,
        .flash = d->flash,
        .base_only = d->base_only,
    };
    return s->model.arch->forward_cached(ctx, &s->model, &in);
}

/* Build (or keep) the graph for n new tokens attending n_kv positions. */
static int decode_graph(tnn_session * s, int32_t n, int32_t n_kv) {
    if (s->decoder.graph != NULL && s->decoder.n == n && s->decoder.n_kv == n_kv) {
        return TNN_OK;
    }
    if (s->decoder.ctx_graph != NULL) {
        ggml_free(s->decoder.ctx_graph);
        s->decoder.ctx_graph = NULL;
    }
    s->decoder.graph = NULL;
    const size_t graph_size = 2048 + (size_t) s->model.cfg.n_layers * 64;
    struct ggml_init_params ip = {
        .mem_size = graph_size * ggml_tensor_overhead() + ggml_graph_overhead_custom(graph_size, false),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    for (;;) {
        s->decoder.ctx_graph = ggml_init(ip);
        if (s->decoder.ctx_graph == NULL) {
            return tnn_fail(TNN_ERR_ALLOC, "out of memory building the decode graph");
        }
        struct ggml_cgraph * graph = ggml_new_graph_custom(s->decoder.ctx_graph, graph_size, false);
        s->decoder.logits = decode_forward(s->decoder.ctx_graph, s, n, n_kv);
        ggml_set_output(s->decoder.logits);
        ggml_build_forward_expand(graph, s->decoder.logits);
        /* after every read of the states: their copies for the next decode */
        for (int32_t u = 0; u < 2 * s->model.cfg.n_layers; ++u) {
            if (s->decoder.state_updates[u] != NULL) {
                ggml_build_forward_expand(graph, s->decoder.state_updates[u]);
            }
        }
        const struct ggml_tensor * unsupported = NULL;
        for (int i = 0; i < ggml_graph_n_nodes(graph) && unsupported == NULL; ++i) {
            struct ggml_tensor * node = ggml_graph_node(graph, i);
            if (!ggml_backend_supports_op(s->backend, node)) {
                unsupported = node;
            }
        }
        if (unsupported == NULL) {
            s->decoder.graph = graph;
            break;
        }
        ggml_free(s->decoder.ctx_graph);
        s->decoder.ctx_graph = NULL;
        if (unsupported->op == GGML_OP_FLASH_ATTN_EXT && s->decoder.flash) {
            s->decoder.flash = false;         /* once for the session: mul_mat + softmax */
            continue;
        }
        return tnn_fail(TNN_ERR_BACKEND, "the %s backend cannot run %s (%s, type %s) of the decode graph",
                        tnn_backend_name(), ggml_op_desc(unsupported), unsupported->name,
                        ggml_type_name(unsupported->src[0] ? unsupported->src[0]->type : unsupported->type));
    }
    if (!ggml_gallocr_alloc_graph(s->decoder.galloc, s->decoder.graph)) {
        s->decoder.graph = NULL;
        return tnn_fail(TNN_ERR_ALLOC, "out of %s memory for the decode graph", tnn_backend_name());
    }
    s->decoder.n = n;
    s->decoder.n_kv = n_kv;
    return TNN_OK;
}

/* A recurrent layer's state holds only what came before conv_next: a
 * decode continues from there, or starts again at 0 from zeros (a KV cache
 * keeps every position, so attention alone could go back anywhere). */
static int continue_states(tnn_session * s, int32_t n_past) {
    const tnn_model_config * cfg = &s->model.cfg;
    if (!tnn_model_recurrent(cfg) || n_past == s->decoder.conv_next) {
        return TNN_OK;
    }
    if (n_past != 0) {
        return tnn_fail(TNN_ERR_ARG,
                        "this model's recurrent layers continue from position %d (their state), not %d: "
                        "decode from there or from 0",
                        s->decoder.conv_next, n_past);
    }
    for (int32_t l = 0; l < cfg->n_layers; ++l) {
        struct ggml_tensor * states[2] = { s->decoder.conv_states[l], s->decoder.ssm_states[l] };
        for (int i = 0; i < 2; ++i) {
            if (states[i] != NULL) {
                ggml_backend_tensor_memset(states[i], 0, 0, ggml_nbytes(states[i]));
            }
        }
    }
    s->decoder.conv_next = 0;
    return TNN_OK;
}

/* A decode graph input's values; none where the graph does not read it
 * (positions, where no layer rotates: Granite 4's hybrids). */
static void set_input(tnn_session * s, struct ggml_tensor * input, const void * data, size_t nbytes) {
    if (input->buffer != NULL) {
        tnn_tensor_set(&s->tensors, input, data, 0, nbytes);
    }
}

int tnn_decode(tnn_session * s, const int32_t * tokens, int32_t n, int32_t n_past, float * logits_out,
               size_t n_logits) {
    if (tnn_refuse_measuring(s, "decode") != TNN_OK) {
        return TNN_ERR_STATE;
    }
    if (s == NULL || tokens == NULL || logits_out == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_decode: NULL argument");
    }
    if (s->decoder.ctx_kv == NULL) {
        return tnn_fail(TNN_ERR_STATE, "decode before kv_init");
    }
    const tnn_model_config * cfg = &s->model.cfg;
    if (n < 1 || n_past < 0 || (int64_t) n_past + n > s->decoder.n_ctx) {
        return tnn_fail(TNN_ERR_ARG, "decode of %d tokens after %d does not fit the %d-token context", n, n_past,
                        s->decoder.n_ctx);
    }
    if (n_logits != (size_t) cfg->vocab) {
        return tnn_fail(TNN_ERR_ARG, "decode: the logits buffer must hold %d floats, got %zu", cfg->vocab,
                        n_logits);
    }
    for (int32_t i = 0; i < n; ++i) {
        if (tokens[i] < 0 || tokens[i] >= cfg->vocab) {
            return tnn_fail(TNN_ERR_ARG, "token %d at %d is outside the vocabulary [0, %d)", tokens[i], i,
                            cfg->vocab);
        }
    }

    int status = continue_states(s, n_past);
    if (status != TNN_OK) {
        return status;
    }
    const int64_t end = (int64_t) n_past + n;
    const int64_t window = (end + KV_WINDOW_STEP - 1) / KV_WINDOW_STEP * KV_WINDOW_STEP;
    const int32_t n_kv = (int32_t) (window < s->decoder.n_ctx ? window : s->decoder.n_ctx);
    status = decode_graph(s, n, n_kv);
    if (status != TNN_OK) {
        return status;
    }

    /* query j (position n_past + j) sees cache positions 0 .. n_past + j; in
     * a sliding-window layer the last swa_window of them */
    const size_t n_mask = (size_t) n_kv * (size_t) n;
    if (n_mask > s->decoder.mask_cap) {
        uint16_t * grown = realloc(s->decoder.mask_host, 2 * n_mask * sizeof(uint16_t));
        if (grown == NULL) {
            return tnn_fail(TNN_ERR_ALLOC, "out of memory for a %d x %d attention mask", n_kv, n);
        }
        s->decoder.mask_host = grown;
        s->decoder.mask_cap = n_mask;
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
        uint16_t * mask_row = s->decoder.mask_host + (size_t) j * n_kv;
        uint16_t * swa_row = mask_row + n_mask;
        const int32_t seen = n_past + j + 1, first = seen - cfg->swa_window;
        for (int32_t i = 0; i < n_kv; ++i) {
            mask_row[i] = i < seen ? zero : minus_inf;
            swa_row[i] = i < seen && i >= first ? zero : minus_inf;
        }
    }
    set_input(s, s->decoder.tokens, tokens, (size_t) n * sizeof(int32_t));
    set_input(s, s->decoder.positions, positions, (size_t) n * sizeof(int32_t));
    set_input(s, s->decoder.rows, rows, (size_t) n * sizeof(int64_t));
    set_input(s, s->decoder.mask, s->decoder.mask_host, n_mask * sizeof(uint16_t));
    if (s->decoder.mask_swa != NULL) {
        set_input(s, s->decoder.mask_swa, s->decoder.mask_host + n_mask, n_mask * sizeof(uint16_t));
    }
    free(rows);
    if (ggml_backend_graph_compute(s->backend, s->decoder.graph) != GGML_STATUS_SUCCESS) {
        return tnn_fail(TNN_ERR_BACKEND, "the %s backend failed to run the decode graph", tnn_backend_name());
    }
    s->decoder.conv_next = n_past + n;
    tnn_tensor_get(&s->tensors, s->decoder.logits, logits_out, 0, (size_t) cfg->vocab * sizeof(float));
    return TNN_OK;
}

int tnn_decode_adapters(tnn_session * s, int32_t on) {
    if (s == NULL || !s->realized) {
        return tnn_fail(TNN_ERR_STATE, "decode_adapters before realize: there is no model to run");
    }
    if (on != 0 && on != 1) {
        return tnn_fail(TNN_ERR_ARG, "decode_adapters takes 0 (base alone) or 1 (with adapters), got %d", on);
    }
    if (s->decoder.base_only != (on == 0)) {
        s->decoder.base_only = on == 0;
        s->decoder.graph = NULL;              /* the kept graph is of the other kind */
    }
    return TNN_OK;
}
