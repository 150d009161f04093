/* Every trainable gradient as one flat float32 buffer: data parallelism
 * sums a step's gradients over processes with one collective on one
 * buffer, instead of one download and one upload per tensor.
 *
 * The buffer holds the gradient accumulators (the tensors of kind
 * TNN_KIND_GRAD that train.c makes) in the order of their parameters'
 * handles, each in ggml order, one after another. */
#include "session/session.h"

#include <stdlib.h>

enum gradients_copy { COUNT_ONLY, TO_HOST, FROM_HOST };

/* Walk the accumulators in parameter order: count their floats into *n_total
 * and, unless COUNT_ONLY, copy each to or from its place in flat. */
static int walk_gradients(tnn_session * s, const char * what, enum gradients_copy copy, float * flat,
                          int64_t * n_total) {
    if (s == NULL) {
        return tnn_fail(TNN_ERR_ARG, "%s: session is NULL", what);
    }
    if (!s->train.built) {
        return tnn_fail(TNN_ERR_STATE, "%s before build_training_step: there are no gradients yet", what);
    }
    /* the accumulator of each parameter, by the parameter's handle */
    int32_t * grad_of = malloc((size_t) s->tensors.n * sizeof(*grad_of));
    if (grad_of == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "%s: out of memory", what);
    }
    for (int32_t i = 0; i < s->tensors.n; ++i) {
        grad_of[i] = -1;
    }
    for (int32_t i = 0; i < s->tensors.n; ++i) {
        const struct tnn_entry * e = &s->tensors.entries[i];
        if (e->kind == TNN_KIND_GRAD && e->owner >= 0 && e->owner < s->tensors.n) {
            grad_of[e->owner] = i;
        }
    }
    int status = TNN_OK;
    int64_t offset = 0;
    for (int32_t i = 0; i < s->tensors.n && status == TNN_OK; ++i) {
        if (s->tensors.entries[i].kind != TNN_KIND_PARAM) {
            continue;
        }
        if (grad_of[i] < 0) {
            status = tnn_fail(TNN_ERR_STATE, "%s: parameter '%s' has no gradient", what,
                              s->tensors.entries[i].tensor->name);
            break;
        }
        struct ggml_tensor * acc = s->tensors.entries[grad_of[i]].tensor;
        if (copy == TO_HOST) {
            tnn_tensor_get(&s->tensors, acc, flat + offset, 0, ggml_nbytes(acc));
        } else if (copy == FROM_HOST) {
            tnn_tensor_set(&s->tensors, acc, flat + offset, 0, ggml_nbytes(acc));
        }
        offset += ggml_nelements(acc);
    }
    free(grad_of);
    *n_total = offset;
    return status;
}

int tnn_gradients_size(tnn_session * s, int64_t * n_floats) {
    if (n_floats == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_gradients_size: n_floats is NULL");
    }
    return walk_gradients(s, "tnn_gradients_size", COUNT_ONLY, NULL, n_floats);
}

/* The buffer must be exactly the gradients' size: checked before any copy,
 * so a wrong n never writes past flat nor leaves the gradients half-set. */
static int copy_gradients(tnn_session * s, const char * what, enum gradients_copy copy, float * flat, int64_t n) {
    int64_t expected = 0;
    int status = walk_gradients(s, what, COUNT_ONLY, NULL, &expected);
    if (status != TNN_OK) {
        return status;
    }
    if (flat == NULL || n != expected) {
        return tnn_fail(TNN_ERR_ARG, "%s: the gradients are %lld floats, got a buffer of %lld", what,
                        (long long) expected, flat ? (long long) n : 0LL);
    }
    return walk_gradients(s, what, copy, flat, &expected);
}

int tnn_download_gradients(tnn_session * s, float * flat, int64_t n) {
    if (tnn_refuse_measuring(s, "download_gradients") != TNN_OK) {
        return TNN_ERR_STATE;
    }
    return copy_gradients(s, "tnn_download_gradients", TO_HOST, flat, n);
}

int tnn_upload_gradients(tnn_session * s, const float * flat, int64_t n) {
    if (tnn_refuse_measuring(s, "upload_gradients") != TNN_OK) {
        return TNN_ERR_STATE;
    }
    /* FROM_HOST only reads flat */
    return copy_gradients(s, "tnn_upload_gradients", FROM_HOST, (float *) flat, n);
}
