/* The session: new (its backend) and free (every part, each by its owner). */
#include "session/session.h"

#include <stdlib.h>
#include <string.h>

/* ---- session ------------------------------------------------------------ */

int tnn_session_new(int32_t n_threads, tnn_session ** out) {
    if (out == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_session_new: out is NULL");
    }
    *out = NULL;
    if (n_threads < 1 || n_threads > 512) {
        return tnn_fail(TNN_ERR_ARG, "threads must be between 1 and 512, got %d", n_threads);
    }
    tnn_session * s = calloc(1, sizeof(*s));
    if (s == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory creating a session");
    }
    s->n_threads = n_threads;
    tnn_clear_last_error();   /* the backend may say why it failed */
    s->backend = tnn_backend_create(n_threads);
    if (s->backend == NULL) {
        free(s);
        if (tnn_last_error()[0] != '\0') {
            return TNN_ERR_BACKEND;
        }
        return tnn_fail(TNN_ERR_BACKEND, "could not initialise the %s backend", tnn_backend_name());
    }
    *out = s;
    return TNN_OK;
}

void tnn_session_free(tnn_session * s) {
    if (s == NULL) {
        return;
    }
    tnn_trainer_free(&s->train);
    tnn_decoder_free(&s->decoder);
    tnn_free_tensors(s->model.ctx, s->model.buf);
    free(s->model.params);
    tnn_cpu_state_free(&s->cpu);
    tnn_base_free(&s->base);
    ggml_backend_free(s->backend);
    tnn_table_free(&s->tensors);
    free(s);
}
