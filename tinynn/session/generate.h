/* The decoder (session/generate.c): generation's KV caches and its decode
 * graph. Not installed.
 *
 * Beside generate.c, which owns it; the session holds one (session.h).
 * Nothing below session/ reads it: the architectures' cached forward takes
 * what it needs as struct tnn_decode_inputs (models/models.h). */
#ifndef TINYNN_SESSION_GENERATE_H
#define TINYNN_SESSION_GENERATE_H

#include "models/models.h"

/* Generation: the KV caches and the decode graph, kept while its shape stays. */
struct tnn_decoder {
    struct ggml_context * ctx_kv;
    ggml_backend_buffer_t buf_kv;
    struct ggml_tensor **k_caches, **v_caches;   /* NULL for a short-convolution layer */
    /* a recurrent layer's state, else NULL, as it was after position conv_next - 1: a short
     * convolution's last conv_kernel - 1 inputs [conv_kernel - 1, channels] (LFM2's and
     * Qwen 3.5's delta-net layers), a delta-net layer's [S, S, ssm_heads], a Mamba-2 layer's
     * [S, ssm_inner / ssm_heads, ssm_heads] */
    struct ggml_tensor **conv_states, **ssm_states;
    struct ggml_tensor * state_slot;      /* I32 [1], 0: the states' one sequence (ggml_ssm_scan's ids) */
    struct ggml_tensor ** state_updates;  /* the decode graph's copies into them, 2 a layer */
    int32_t conv_next;                    /* the position the states continue from */
    int32_t n_ctx;
    ggml_gallocr_t galloc;
    /* the last decode graph, reused while the shape (n, n_kv) stays the same */
    struct ggml_context * ctx_graph;
    struct ggml_cgraph * graph;
    struct ggml_tensor *tokens, *positions, *rows, *mask, *logits;
    struct ggml_tensor * mask_swa;   /* the sliding-window layers' mask, or NULL (no window) */
    int32_t n, n_kv;
    bool flash;                      /* the backend runs ggml_flash_attn_ext */
    bool base_only;                  /* tnn_decode_adapters(s, 0): no LoRA products */
    uint16_t * mask_host;            /* staging for the F16 masks, mask_cap halves each */
    size_t mask_cap;
};

/* Free the KV caches and the decode graph (nothing when kv_init never ran). */
void tnn_decoder_free(struct tnn_decoder * decoder);

#endif
