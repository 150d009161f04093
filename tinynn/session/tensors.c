/* The session's tensors through the C API: count, info, find, the
 * gradient of a parameter, upload (with its checks), download, the
 * transfer counts and the loss scale. */
#include "session/session.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_handle(tnn_session * s, int32_t handle, const char * what) {
    if (s == NULL) {
        return tnn_fail(TNN_ERR_ARG, "%s: session is NULL", what);
    }
    if (handle < 0 || handle >= s->tensors.n) {
        return tnn_fail(TNN_ERR_ARG, "%s: no tensor with handle %d (the session has %d)", what, handle,
                        s->tensors.n);
    }
    if (s->tensors.entries[handle].tensor->buffer == NULL) {
        return tnn_fail(TNN_ERR_STATE, "%s: tensor '%s' has no memory yet (call build first)", what,
                        s->tensors.entries[handle].tensor->name);
    }
    return TNN_OK;
}

int tnn_tensor_count(tnn_session * s, int32_t * count) {
    if (s == NULL || count == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_tensor_count: NULL argument");
    }
    *count = s->tensors.n;
    return TNN_OK;
}

int tnn_tensor_info(tnn_session * s, int32_t handle, char * name_out, size_t name_cap, int32_t * kind,
                    int32_t * ggml_type, int64_t * ne4, size_t * nbytes) {
    if (s == NULL || handle < 0 || handle >= s->tensors.n) {
        return tnn_fail(TNN_ERR_ARG, "tnn_tensor_info: no tensor with handle %d", handle);
    }
    const struct tnn_entry * e = &s->tensors.entries[handle];
    if (name_out && name_cap > 0) {
        snprintf(name_out, name_cap, "%s", e->tensor->name);
    }
    if (kind) *kind = e->kind;
    if (ggml_type) *ggml_type = (int32_t) e->tensor->type;
    if (ne4) {
        for (int i = 0; i < 4; ++i) ne4[i] = e->tensor->ne[i];
    }
    if (nbytes) {
        *nbytes = ggml_nbytes(e->tensor);
    }
    return TNN_OK;
}

int tnn_find(tnn_session * s, const char * name, int32_t * handle) {
    if (s == NULL || name == NULL || handle == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_find: NULL argument");
    }
    for (int32_t i = 0; i < s->tensors.n; ++i) {
        if (strcmp(s->tensors.entries[i].tensor->name, name) == 0) {
            *handle = i;
            return TNN_OK;
        }
    }
    return tnn_fail(TNN_ERR_ARG, "no tensor named '%s'", name);
}

int tnn_grad_of(tnn_session * s, int32_t param_handle, int32_t * grad_handle) {
    if (s == NULL || grad_handle == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_grad_of: NULL argument");
    }
    for (int32_t i = 0; i < s->tensors.n; ++i) {
        if (s->tensors.entries[i].kind == TNN_KIND_GRAD && s->tensors.entries[i].owner == param_handle) {
            *grad_handle = i;
            return TNN_OK;
        }
    }
    return tnn_fail(TNN_ERR_ARG, "tensor %d has no gradient (not a parameter, or not built yet)", param_handle);
}

/* ---- upload / download -------------------------------------------------- */

/* Token ids and labels index the vocabulary; an id outside it would trip a
 * ggml assert (get_rows) or silently read garbage, so refuse it here. */
static int check_ids(const int32_t * ids, int64_t n, int64_t vocab, const char * what) {
    for (int64_t i = 0; i < n; ++i) {
        if (ids[i] < 0 || ids[i] >= vocab) {
            return tnn_fail(TNN_ERR_ARG, "%s[%lld] = %d is outside the vocabulary [0, %lld)", what, (long long) i,
                            ids[i], (long long) vocab);
        }
    }
    return TNN_OK;
}

static int check_positions(const int32_t * positions, int64_t n, int64_t n_ctx) {
    for (int64_t i = 0; i < n; ++i) {
        if (positions[i] < 0 || positions[i] >= n_ctx) {
            return tnn_fail(TNN_ERR_ARG, "positions[%lld] = %d is outside the learned positions [0, %lld)",
                            (long long) i, positions[i], (long long) n_ctx);
        }
    }
    return TNN_OK;
}

/* Labels are int32 ids, one per token; ggml's cross-entropy takes them as
 * they are (vendor/patches/0005) and a label of -1 masks its token: no loss
 * and no gradient. The loss is a mean over all tokens, so the loss scale
 * n_tokens / n_labelled makes it the mean over the labelled ones. */
static int upload_labels(tnn_session * s, const int32_t * ids) {
    const int64_t vocab = s->model.n_outputs;   /* a ViT's labels index its classes */
    const int64_t n = ggml_nelements(s->train.step.labels);
    int64_t n_labelled = 0;
    for (int64_t i = 0; i < n; ++i) {
        if (ids[i] == -1) {
            continue;
        }
        if (ids[i] < 0 || ids[i] >= vocab) {
            return tnn_fail(TNN_ERR_ARG,
                            "labels[%lld] = %d is outside the vocabulary [0, %lld) "
                            "(-1 masks a token)",
                            (long long) i, ids[i], (long long) vocab);
        }
        n_labelled++;
    }
    tnn_tensor_set(&s->tensors, s->train.step.labels, ids, 0, (size_t) n * sizeof(int32_t));
    /* a preference objective averages over its pairs itself */
    const float scale = s->train.step.objective != TNN_OBJECTIVE_CROSS_ENTROPY ? 1.0f
                        : n_labelled > 0                                       ? (float) n / (float) n_labelled
                                                                               : 0.0f;
    tnn_tensor_set(&s->tensors, s->train.step.loss_scale, &scale, 0, sizeof(float));
    return TNN_OK;
}

int tnn_upload(tnn_session * s, int32_t handle, const void * data, size_t nbytes) {
    if (tnn_refuse_measuring(s, "upload") != TNN_OK) {
        return TNN_ERR_STATE;
    }
    int status = check_handle(s, handle, "upload");
    if (status != TNN_OK) {
        return status;
    }
    const struct tnn_entry * e = &s->tensors.entries[handle];
    size_t expected = 0;
    tnn_tensor_info(s, handle, NULL, 0, NULL, NULL, NULL, &expected);
    if (data == NULL || nbytes != expected) {
        return tnn_fail(TNN_ERR_ARG, "upload to '%s': expected %zu bytes, got %zu", e->tensor->name, expected,
                        data ? nbytes : 0);
    }
    switch (e->kind) {
        case TNN_KIND_LABELS: return upload_labels(s, (const int32_t *) data);
        case TNN_KIND_TOKENS:
            status = check_ids((const int32_t *) data, ggml_nelements(e->tensor), s->model.cfg.vocab, "token ids");
            if (status != TNN_OK) {
                return status;
            }
            break;
        case TNN_KIND_REFERENCE:
            for (int64_t i = 0; i < ggml_nelements(e->tensor); ++i) {
                if (!isfinite(((const float *) data)[i])) {
                    return tnn_fail(TNN_ERR_ARG, "reference_logps[%lld] is not a finite number", (long long) i);
                }
            }
            break;
        case TNN_KIND_ROPE_FREQS:
            status = tnn_check_rope_freqs((const float *) data, ggml_nelements(e->tensor), e->tensor->name,
                                          "upload");
            if (status != TNN_OK) {
                return status;
            }
            break;
        case TNN_KIND_POSITIONS:
            /* GPT-2's positions index its learned table (RoPE takes any) */
            if (s->model.arch->learned_positions) {
                status = check_positions((const int32_t *) data, ggml_nelements(e->tensor), s->model.cfg.t_seq);
                if (status != TNN_OK) {
                    return status;
                }
            }
            break;
        default: break;
    }
    tnn_tensor_set(&s->tensors, e->tensor, data, 0, nbytes);
    /* packed rows: the positions say where each sample begins, so the masks
     * follow them before the next compute (train.c) */
    s->train.positions_changed |= e->kind == TNN_KIND_POSITIONS;
    return TNN_OK;
}

int tnn_download(tnn_session * s, int32_t handle, void * data, size_t nbytes) {
    if (tnn_refuse_measuring(s, "download") != TNN_OK) {
        return TNN_ERR_STATE;
    }
    int status = check_handle(s, handle, "download");
    if (status != TNN_OK) {
        return status;
    }
    struct ggml_tensor * t = s->tensors.entries[handle].tensor;
    if (data == NULL || nbytes != ggml_nbytes(t)) {
        return tnn_fail(TNN_ERR_ARG, "download of '%s': expected %zu bytes, got %zu", t->name, ggml_nbytes(t),
                        data ? nbytes : 0);
    }
    tnn_tensor_get(&s->tensors, t, data, 0, nbytes);
    return TNN_OK;
}

int tnn_transfer_counts(tnn_session * s, tnn_transfers * out) {
    if (s == NULL || out == NULL) {
        return tnn_fail(TNN_ERR_ARG, "transfer_counts: session or out is NULL");
    }
    *out = s->tensors.transfers;
    return TNN_OK;
}

int tnn_set_loss_scale(tnn_session * s, float scale) {
    if (tnn_refuse_measuring(s, "set_loss_scale") != TNN_OK) {
        return TNN_ERR_STATE;
    }
    if (s == NULL || s->train.step.loss_scale == NULL) {
        return tnn_fail(TNN_ERR_STATE, "set_loss_scale before build_training_step");
    }
    if (!(scale >= 0.0f) || scale > 1e30f) {
        return tnn_fail(TNN_ERR_ARG, "the loss scale must be a finite number >= 0, got %g", scale);
    }
    tnn_tensor_set(&s->tensors, s->train.step.loss_scale, &scale, 0, sizeof(float));
    return TNN_OK;
}
