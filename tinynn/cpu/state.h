/* A session's CPU state: which of tinynn's CPU kernels its graphs run
 * (chosen at realize), their scratch memory (cpu/state.c owns it), and the
 * user data the kernel nodes point at. Not installed. */
#ifndef TINYNN_CPU_STATE_H
#define TINYNN_CPU_STATE_H

#include "core/core.h"
#include "cpu/kernels.h"

/* What the kernel nodes share: scratch memory, per_thread bytes for each of
 * n_threads threads (grown by tnn_grow_scratch as rewrites need it); and
 * shared_bytes that a node's threads fill and read together, after the
 * point where they meet (tnn_grow_shared_scratch, tnn_threads_meet). */
struct tnn_cpu_scratch {
    char * data;
    size_t per_thread;
    int32_t n_threads;
    char * shared;   /* the meeting point's counters, then shared_bytes */
    size_t shared_bytes;
};

int tnn_grow_shared_scratch(struct tnn_cpu_scratch * scratch, size_t bytes);

/* The shared scratch's bytes (NULL before tnn_grow_shared_scratch). */
static inline void * tnn_shared_scratch(const struct tnn_cpu_scratch * scratch) {
    return scratch->shared != NULL ? scratch->shared + 64 : NULL;
}

/* Inside a custom node's compute: return once all nth threads of the node
 * have called it, as ggml's own ops meet (ggml_barrier) between filling a
 * shared buffer and reading it. ggml's CPU backend runs a node's threads at
 * once, so each arrives; never call it where threads run one after another
 * (the kernel checks). */
void tnn_threads_meet(const struct tnn_cpu_scratch * scratch, int nth);

/* Thread ith's scratch inside a custom node's compute, or NULL for a thread
 * the scratch was not sized for (never: ggml runs the session's threads);
 * *nth is lowered to the threads that have scratch. */
static inline char * tnn_thread_scratch(const struct tnn_cpu_scratch * scratch, int ith, int * nth) {
    if (ith >= scratch->n_threads) {
        return NULL;
    }
    *nth = *nth < scratch->n_threads ? *nth : scratch->n_threads;
    return scratch->data + (size_t) ith * scratch->per_thread;
}

/* Thread ith's share [*i0, *i1) of n values in whole groups of `group`
 * (a kernel's vector or block; the last share ends at n): the shares the
 * kernels' nodes and their checks give out. */
static inline void tnn_share_groups(int64_t n, int64_t group, int ith, int nth, int64_t * i0, int64_t * i1) {
    const int64_t groups = (n + group - 1) / group, from = groups * ith / nth * group,
                  to = groups * (ith + 1) / nth * group;
    *i0 = from < n ? from : n;
    *i1 = to < n ? to : n;
}

struct tnn_cpu_state;

/* A packed product node's user data: the kernels and scratch, and how many
 * int8 levels its columns are quantized in (qgemm). */
struct tnn_qgemm_use {
    const struct tnn_cpu_state * cpu;
    int32_t levels;
};

/* A product node's from a frozen matrix kept as stored (graph/
 * stored_products.c): a qgemm use and the matrix, W or W^T, packed as it is
 * read. One for each (matrix, direction), however many nodes read it. */
struct tnn_stored_use {
    struct tnn_qgemm_use qgemm;
    const void * w;      /* the ggml tensor, to find the use again */
    bool transposed;
    struct tnn_qpanels panels;
};

/* The part of a causal attention product that its mask leaves nonzero
 * (graph/products.c); the rest is skipped. */
enum tnn_causal_part {
    TNN_CAUSAL_ALL,             /* not an attention product: the whole product */
    TNN_CAUSAL_K_TO_COLUMN,     /* output and query gradient [hd, query]: keys <= query */
    TNN_CAUSAL_K_FROM_ROW,      /* value gradient [key, hd]: queries >= key */
    TNN_CAUSAL_KEY_GRADIENT,    /* key gradient [hd, key]: its own node, dS read in place */
    TNN_CAUSAL_PARTS
};

/* A float32 product node's user data: the kernels and scratch, whether
 * each operand is read as the transpose of its source (fgemm, by_k), and
 * which part of it a causal mask leaves to compute. */
struct tnn_fgemm_use {
    const struct tnn_cpu_state * cpu;
    bool a_by_k, b_by_k;
    bool bf16;        /* through fgemm_bf16 (tnn_set_precision) */
    enum tnn_causal_part causal;
    bool a_tiles;     /* A's source is a frozen copy in fgemm_bf16_amx's tiles (kernels.h) */
};

/* A node summing two products (graph/products.c, tnn_sum_products): the
 * first written, the second (fgemm_bf16) added to it. */
struct tnn_fgemm_sum {
    const struct tnn_fgemm_use *first, *second;
};
#define TNN_FGEMM_SUMS 16   /* pairs of uses a session's sums take */

/* An RMS norm node's user data (graph/activations.c): the kernels and
 * the norm's epsilon. */
struct tnn_norm_use {
    const struct tnn_cpu_kernels * kernels;
    float eps;
};
#define TNN_NORM_USES 4   /* epsilons a session's norms take */

/* A fused attention node's user data (graph/attention.c): the kernels and
 * scratch, the scores' scale, and how many parts of dQ its backward writes
 * (one a thread). */
struct tnn_attention_use {
    const struct tnn_cpu_state * cpu;
    float scale;
    int32_t dq_parts;
};

/* The session's one member for the CPU kernels: which run (chosen at
 * realize), their scratch, and the user data their nodes point at. */
struct tnn_cpu_state {
    struct tnn_cpu_kernels kernels;              /* tnn_backend_cpu_kernels; all NULL off the CPU */
    struct tnn_cpu_scratch scratch;
    struct tnn_qgemm_use qgemm_two_levels, qgemm_one_level;   /* models/frozen_copies.c */
    struct tnn_fgemm_use fgemm_uses[8 * TNN_CAUSAL_PARTS];   /* by operand layout, bf16 and causal part
                                                                (graph/products.c) */
    struct tnn_fgemm_use bf16_copy_uses[4];      /* W x and W^T dy by a bfloat16 copy, in rows or tiles
                                                    (products.c) */
    struct tnn_fgemm_sum fgemm_sums[TNN_FGEMM_SUMS];   /* the sum nodes' pairs of the uses above */
    struct tnn_norm_use norm_uses[TNN_NORM_USES];      /* graph/activations.c */
    struct tnn_attention_use attention_use;      /* the fused attention nodes' (graph/attention.c) */
    struct tnn_stored_use ** stored_uses;        /* graph/stored_products.c, each its own allocation
                                                    (nodes point at them); freed with the state */
    int32_t n_stored_uses, cap_stored_uses;
};

/* Make the CPU kernel nodes' scratch at least bytes per thread, for n_threads threads. */
int tnn_grow_scratch(struct tnn_cpu_scratch * scratch, int32_t n_threads, size_t bytes);
/* Free the scratch. */
void tnn_cpu_state_free(struct tnn_cpu_state * cpu);

#endif
