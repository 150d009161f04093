/* The session: one part per concern, each managed by its own file, and
 * the training step and generation built on them. Not installed.
 *
 * Only session/'s files include this header. The layers below take the
 * parts they work on as arguments (the model, the frozen base, the tensor
 * table, the CPU state, the trainer's struct tnn_step), never the session
 * (scripts/check_c_layers.py). */
#ifndef TINYNN_SESSION_H
#define TINYNN_SESSION_H

#include "session/generate.h"
#include "session/train.h"

/* The session owns one part per concern; each part's file manages it. */
struct tnn_session {
    ggml_backend_t backend;
    int32_t n_threads;
    struct tnn_tensor_table tensors; /* core/tensors.c */
    bool realized;
    struct tnn_measure measure;      /* core/core.h: a measuring session's counts */

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
