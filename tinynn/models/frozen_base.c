/* The frozen base of a LoRA session: its GGUF opened and mapped, its
 * weights placed (in the mapped file or copied to the device), freed. */
#include "models/models.h"
#include "gguf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- the frozen base of a session ------------------------------------------- */

int tnn_base_open(struct tnn_frozen_base * base, tnn_model_config * cfg, const char * path) {
    int status = tnn_gguf_open(path, cfg, &base->gguf, &base->ctx);
    if (status == TNN_OK) {
        snprintf(base->arch_name, sizeof(base->arch_name), "%s", tnn_gguf_arch(base->gguf));
        status = tnn_map_file(path, &base->file);
    }
    return status;
}

/* In place needs ggml's 32-byte tensor alignment; GGUF's default is 32. */
static int place_weights(struct tnn_frozen_base * base, struct tnn_tensor_table * tensors,
                         ggml_backend_t backend) {
    const size_t data_offset = gguf_get_data_offset(base->gguf);
    char * data = (char *) base->file.addr + data_offset;
    const size_t data_size = base->file.size - data_offset;
    const bool in_place = tnn_backend_uses_host_memory() && ((uintptr_t) data % 32) == 0;
    if (in_place) {
        base->buf = ggml_backend_dev_buffer_from_host_ptr(ggml_backend_get_device(backend), data, data_size,
                                                          data_size);
    } else {
        base->buf = ggml_backend_alloc_ctx_tensors(base->ctx, backend);
    }
    if (base->buf == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of %s memory for the base model", tnn_backend_name());
    }
    for (int64_t i = 0; i < gguf_get_n_tensors(base->gguf); ++i) {
        struct ggml_tensor * t = ggml_get_tensor(base->ctx, gguf_get_tensor_name(base->gguf, i));
        char * src = data + gguf_get_tensor_offset(base->gguf, i);
        if (in_place) {
            if (ggml_backend_tensor_alloc(base->buf, t, src) != GGML_STATUS_SUCCESS) {
                return tnn_fail(TNN_ERR_ALLOC, "cannot place tensor %s in the mapped file", t->name);
            }
        } else {
            tnn_tensor_set(tensors, t, src, 0, ggml_nbytes(t));
        }
    }
    base->in_place = in_place;
    /* the fused weights' row views (Phi-3) now have memory to point into */
    for (struct ggml_tensor * t = base->ctx_views ? ggml_get_first_tensor(base->ctx_views) : NULL; t != NULL;
         t = ggml_get_next_tensor(base->ctx_views, t)) {
        if (ggml_backend_view_init(t) != GGML_STATUS_SUCCESS) {
            return tnn_fail(TNN_ERR_ALLOC, "cannot place the view %s", t->name);
        }
    }
    return TNN_OK;
}

int tnn_base_place(struct tnn_frozen_base * base, struct tnn_llama * llama, struct tnn_tensor_table * tensors,
                   const struct tnn_base_placement * place, enum tnn_base_compute compute) {
    int status = place_weights(base, tensors, place->backend);
    /* stored: the output head alone keeps its copies where head_loss fuses
     * it (frozen_copies.c) */
    if (status == TNN_OK && (compute != TNN_BASE_STORED || place->kernels->head_loss != NULL)) {
        status = tnn_frozen_prepare(base, llama, place, compute);
    }
    if (status != TNN_OK) {
        return status;
    }
    /* a device copy (or the fast copies) no longer reads the file */
    if (!base->in_place) {
        tnn_unmap_file(&base->file);
    }
    for (struct ggml_tensor * t = ggml_get_first_tensor(base->ctx); t != NULL;
         t = ggml_get_next_tensor(base->ctx, t)) {
        if (tnn_table_add(tensors, t, TNN_KIND_FROZEN, -1) < 0) {
            return TNN_ERR_ALLOC;
        }
    }
    return TNN_OK;
}

void tnn_base_free(struct tnn_frozen_base * base) {
    tnn_free_tensors(base->ctx_copies, base->buf_copies);
    free(base->pairs);
    if (base->ctx_views != NULL) {
        ggml_free(base->ctx_views);
    }
    tnn_free_tensors(base->ctx, base->buf);
    gguf_free(base->gguf);
    tnn_unmap_file(&base->file);
}
