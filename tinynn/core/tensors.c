/* The tensor table (handles for Python) and the counted copies between
 * host and backend memory. Calls nothing of tinynn but tnn_fail. */
#include "core/core.h"

#include <stdlib.h>

size_t tnn_ctx_alloc_bytes(struct ggml_context * ctx, ggml_backend_t backend) {
    ggml_backend_buffer_type_t buft = ggml_backend_get_default_buffer_type(backend);
    const size_t align = ggml_backend_buft_get_alignment(buft);
    size_t total = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->data == NULL && t->view_src == NULL) {
            total += GGML_PAD(ggml_backend_buft_get_alloc_size(buft, t), align);
        }
    }
    return total;
}

void tnn_pretend_allocated(struct ggml_context * ctx) {
    static char placeholder[64];
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->data == NULL && t->view_src == NULL) {
            t->data = placeholder;
        }
    }
}

void tnn_free_tensors(struct ggml_context * ctx, ggml_backend_buffer_t buf) {
    ggml_backend_buffer_free(buf);   /* both take NULL */
    ggml_free(ctx);
}

/* ---- tensor table ------------------------------------------------------- */

int32_t tnn_table_add(struct tnn_tensor_table * table, struct ggml_tensor * t, int32_t kind, int32_t owner) {
    if (table->n == table->cap) {
        int32_t cap = table->cap ? 2 * table->cap : 64;
        struct tnn_entry * entries = realloc(table->entries, (size_t) cap * sizeof(*entries));
        if (entries == NULL) {
            tnn_fail(TNN_ERR_ALLOC, "out of memory growing the tensor table");
            return -1;
        }
        table->entries = entries;
        table->cap = cap;
    }
    table->entries[table->n] = (struct tnn_entry){ t, kind, owner };
    return table->n++;
}

void tnn_table_free(struct tnn_tensor_table * table) {
    free(table->entries);
    table->entries = NULL;
    table->n = table->cap = 0;
}

/* ---- counted copies ------------------------------------------------------ */

void tnn_tensor_set(struct tnn_tensor_table * table, struct ggml_tensor * t, const void * data, size_t offset,
                    size_t size) {
    ggml_backend_tensor_set(t, data, offset, size);
    table->transfers.to_device++;
    table->transfers.bytes_to_device += (int64_t) size;
}

void tnn_tensor_get(struct tnn_tensor_table * table, const struct ggml_tensor * t, void * data, size_t offset,
                    size_t size) {
    ggml_backend_tensor_get(t, data, offset, size);
    table->transfers.to_host++;
    table->transfers.bytes_to_host += (int64_t) size;
}
