/* tinynn's core: errors, logging and the tensor table. Everything else
 * calls down into it; it calls nothing of tinynn. Not installed. */
#ifndef TINYNN_CORE_H
#define TINYNN_CORE_H

#include "tinynn.h"

#include "ggml.h"
#include "ggml-backend.h"

#include <stdbool.h>

/* ---- errors and logging (core/errors.c) ------------------------------------ */

/* Record a one-line message for tnn_last_error and return status. */
int tnn_fail(int status, const char * fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Empty the message tnn_last_error returns (before a call that may record one). */
void tnn_clear_last_error(void);
/* A ggml log callback that passes its warnings and errors to stderr and
 * drops the rest: ggml announces every backend and device it starts, which
 * would bury toy's own stderr. */
void tnn_log_warnings_only(enum ggml_log_level level, const char * text, void * user_data);

/* ---- the tensor table (core/tensors.c) ------------------------------------- */

/* The bytes ggml_backend_alloc_ctx_tensors would give ctx's tensors on
 * backend, without allocating them. */
size_t tnn_ctx_alloc_bytes(struct ggml_context * ctx, ggml_backend_t backend);
/* A measuring session's stand-in for memory (tnn_set_measure_only): ctx's
 * tensors that have none point at a placeholder, never read or written, so
 * that the graph allocator counts them as held elsewhere, as they would be. */
void tnn_pretend_allocated(struct ggml_context * ctx);
/* A measuring session's counts: the bytes realize and build would allocate,
 * counted instead (tnn_training_memory reads them). Here, below every layer
 * that counts: the session holds them, and hands them to what it calls
 * (models/frozen_copies.c counts the base's copies). */
struct tnn_measure {
    bool on;
    int64_t params, optimizer, copies, graph;
    int64_t forward;    /* the forward graph's layout alone (evaluation, with its logits) */
    int64_t overhead;   /* the CPU kernels' scratch, the backend's work buffer, the graphs' descriptions */
    int64_t released;   /* bytes of the mapped base a step no longer reads (packed copies replace them) */
};
/* Free a context of tensors and the backend buffer that holds their data
 * (either may be NULL). */
void tnn_free_tensors(struct ggml_context * ctx, ggml_backend_buffer_t buf);

struct tnn_entry {
    struct ggml_tensor * tensor;
    int32_t kind;      /* enum tnn_tensor_kind */
    int32_t owner;     /* for GRAD and MOMENT: the parameter's handle; else -1 */
};


/* The session's tensors by handle, and the copies between host and backend
 * memory counted (tnn_transfer_counts). */
struct tnn_tensor_table {
    struct tnn_entry * entries;
    int32_t n, cap;
    tnn_transfers transfers;         /* tnn_tensor_set/get */
};

/* Append a tensor to the table; returns its handle or -1 (error recorded). */
int32_t tnn_table_add(struct tnn_tensor_table * table, struct ggml_tensor * t, int32_t kind, int32_t owner);
/* Free the table's entries (not the tensors). */
void tnn_table_free(struct tnn_tensor_table * table);
/* Copies between host and backend memory, counted into table->transfers
 * (tnn_transfer_counts): every per-step ggml_backend_tensor_set/get goes
 * through these (the frozen copies' and save's one-off copies do not). */
void tnn_tensor_set(struct tnn_tensor_table * table, struct ggml_tensor * t, const void * data, size_t offset,
                    size_t size);
void tnn_tensor_get(struct tnn_tensor_table * table, const struct ggml_tensor * t, void * data, size_t offset,
                    size_t size);

#endif
