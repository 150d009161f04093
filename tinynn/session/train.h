/* The trainer (session/train.c): the training step's graphs, their inputs
 * and outputs, the gradient accumulators and the AdamW moments. Not
 * installed.
 *
 * Beside train.c, which owns it; the session holds one (session.h). The
 * part of it that graph/'s rewrites read and add to is struct tnn_step
 * (graph/graph.h), embedded here as `step`: graph/ is a layer below and
 * may not see this struct. */
#ifndef TINYNN_SESSION_TRAIN_H
#define TINYNN_SESSION_TRAIN_H

#include "graph/graph.h"

struct tnn_trainer {
    /* what the rewrites read and fill: the graph and optimizer contexts,
     * the step's settings (precision, packed rows, objective), the masks
     * and the loss's tensors */
    struct tnn_step step;
    /* step.ctx_opt's tensors' memory: gradient accumulators, AdamW moments
     * and the step's small inputs */
    ggml_backend_buffer_t buf_opt;
    /* memory for step.ctx_graph's nodes, one graph's layout at a time */
    ggml_gallocr_t galloc;

    struct ggml_cgraph * gf;        /* forward + loss */
    struct ggml_cgraph * gb_grad;   /* forward + loss + backward */
    struct ggml_cgraph * gb_opt;    /* forward + loss + backward + AdamW */
    struct ggml_cgraph * gb_step;   /* gb_opt with the gradients written, not added */
    struct ggml_cgraph * gb_update; /* AdamW alone, from the gradient accumulators */
    struct ggml_cgraph * allocated; /* the graph whose layout the allocator holds */

    struct ggml_tensor *hp, *loss, *logits;
    /* activation recomputation (tnn_set_recompute): keep every n-th block's
     * input, 0 when off; residuals [n_layers + 1]: the forward's residual
     * stream at each block's input and the last block's output */
    int32_t recompute_every;
    struct ggml_tensor ** residuals;
    /* packed rows (step.packed_rows): the masks are filled from the
     * positions before a compute that follows an upload of them */
    bool positions_changed;
    /* gradient clipping (tnn_enable_grad_clipping): max norm, 0 when off */
    float clip_norm;
    struct ggml_tensor *grad_norm, *clip_one;
    bool built, reset_done;
};

void tnn_trainer_free(struct tnn_trainer * train);

#endif
