/* The session: one part per concern, each managed by its own file, and
 * the training step and generation built on them. Not installed.
 *
 * Lower layers read the parts of the session they work on (s->model,
 * s->base, s->cpu, s->train, s->tensors) through this struct; they call
 * nothing here (scripts/check_c_layers.py). */
#ifndef TINYNN_SESSION_H
#define TINYNN_SESSION_H

#include "graph/graph.h"

/* ---- the trainer (train.c) ------------------------------------------------ */

/* The training step's graphs, their inputs and outputs, the gradient
 * accumulators and the AdamW moments. */
struct tnn_trainer {
    /* gradient accumulators, AdamW moments and the step's small inputs */
    struct ggml_context * ctx_opt;
    ggml_backend_buffer_t buf_opt;
    /* graph nodes; their memory comes from the graph allocator */
    struct ggml_context * ctx_graph;
    ggml_gallocr_t galloc;

    struct ggml_cgraph * gf;        /* forward + loss */
    struct ggml_cgraph * gb_grad;   /* forward + loss + backward */
    struct ggml_cgraph * gb_opt;    /* forward + loss + backward + AdamW */
    struct ggml_cgraph * gb_step;   /* gb_opt with the gradients written, not added */
    struct ggml_cgraph * gb_update; /* AdamW alone, from the gradient accumulators */
    struct ggml_cgraph * allocated; /* the graph whose layout the allocator holds */

    struct ggml_tensor *causal_mask, *swa_mask;
    struct ggml_tensor *labels, *hp, *loss, *logits;
    /* n_tokens / n_labelled, set when labels are uploaded: ggml's cross-entropy
     * averages over every token, a masked loss over the labelled ones */
    struct ggml_tensor * loss_scale;
    /* activation recomputation (tnn_set_recompute): keep every n-th block's
     * input, 0 when off; residuals [n_layers + 1]: the forward's residual
     * stream at each block's input and the last block's output */
    int32_t recompute_every;
    struct ggml_tensor ** residuals;
    /* packed rows (tnn_set_packed_rows): the masks hold one [t_seq, t_seq]
     * per row, filled from the positions before a compute that follows an
     * upload of them (positions_changed) */
    bool packed_rows, positions_changed;
    /* the dense products in bfloat16 (tnn_set_precision "bf16") */
    bool bf16_products;
    /* gradient clipping (tnn_enable_grad_clipping): max norm, 0 when off */
    float clip_norm;
    struct ggml_tensor *grad_norm, *clip_one;
    /* the objective (tnn_set_objective, preference.c) and, for a preference
     * objective, its tensors [t_batch]: reference input, outputs, weights */
    int32_t objective;
    float beta;
    struct ggml_tensor *reference_logps, *sample_logps, *token_weights;
    bool built, reset_done;
};

void tnn_trainer_free(struct tnn_trainer * train);

/* ---- the decoder (generate.c) ------------------------------------------------ */

/* Generation: the KV caches and the decode graph, kept while its shape stays. */
struct tnn_decoder {
    struct ggml_context * ctx_kv;
    ggml_backend_buffer_t buf_kv;
    struct ggml_tensor **k_caches, **v_caches;
    int32_t n_ctx;
    ggml_gallocr_t galloc;
    /* the last decode graph, reused while the shape (n, n_kv) stays the same */
    struct ggml_context * ctx_graph;
    struct ggml_cgraph * graph;
    struct ggml_tensor *tokens, *positions, *rows, *mask, *logits;
    int32_t n, n_kv;
    bool flash;                      /* the backend runs ggml_flash_attn_ext */
    bool base_only;                  /* tnn_decode_adapters(s, 0): no LoRA products */
    uint16_t * mask_host;            /* staging for the F16 mask, mask_cap halves */
    size_t mask_cap;
};

/* Free the KV caches and the decode graph (nothing when kv_init never ran). */
void tnn_decoder_free(struct tnn_decoder * decoder);

/* The session owns one part per concern; each part's file manages it. */
/* A measuring session (tnn_set_measure_only): what realize and build would
 * allocate, counted instead (tnn_training_memory reads it). */
struct tnn_measure {
    bool on;
    int64_t params, optimizer, copies, graph;
    int64_t forward;    /* the forward graph's layout alone (evaluation, with its logits) */
    int64_t overhead;   /* the CPU kernels' scratch, the backend's work buffer, the graphs' descriptions */
    int64_t released;   /* bytes of the mapped base a step no longer reads (packed copies replace them) */
};

struct tnn_session {
    ggml_backend_t backend;
    int32_t n_threads;
    struct tnn_tensor_table tensors; /* core/tensors.c */
    bool realized;
    struct tnn_measure measure;

    struct tnn_model model;          /* models/ */
    struct tnn_frozen_base base;     /* models/frozen_base.c, frozen_copies.c: LoRA's frozen base */
    struct tnn_cpu_state cpu;        /* cpu/state.c: tinynn's CPU kernels and their scratch */
    struct tnn_trainer train;        /* session/train.c */
    struct tnn_decoder decoder;      /* session/generate.c */
};

/* TNN_ERR_STATE (recorded) for a measuring session, which holds no data:
 * every call that reads, writes or computes asks first. */
static inline int tnn_refuse_measuring(const tnn_session * s, const char * what) {
    return s != NULL && s->measure.on
               ? tnn_fail(TNN_ERR_STATE, "%s: a measuring session computes nothing (tnn_set_measure_only)", what)
               : TNN_OK;
}

#endif
