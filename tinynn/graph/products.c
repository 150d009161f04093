/* Float32 matrix products of a training graph on tinynn's own CPU kernel.
 *
 * The graph is built with ggml_mul_mat, so that autodiff sees it; once the
 * backward is built, tnn_use_fgemm turns every F32 product the session's
 * fgemm kernel (cpu/kernels.h) can take into a custom node that calls it.
 * The values are those of the same product summed in another order. */
#include "session/session.h"

#include <stdlib.h>

/* Where an operand of a rewritten product lies: the node's source itself,
 * or, when that source is cont(transpose(X)), X read along k (by_k); in
 * bfloat16 for a frozen matrix's copy. */
static struct tnn_fgemm_operand operand(const struct ggml_tensor * t, bool by_k, int64_t batch) {
    const void * at = (const char *) t->data + batch * t->nb[2];
    const bool bf16 = t->type == GGML_TYPE_BF16;
    struct tnn_fgemm_operand op = {
        .data = bf16 ? NULL : (const float *) at,
        .ld = (int64_t) (t->nb[1] / ggml_type_size(t->type)),
        .by_k = by_k,
        .bf16 = bf16 ? (const uint16_t *) at : NULL,
    };
    return op;
}

/* dst [m, n, batches] = A [k, m, batches / ratio] . B [k, n, batches], in
 * work items of (batch, panel, column range) shared out between threads;
 * a thread's run of whole panels of one batch goes to the kernel in one
 * call (fgemm_bf16 rounds each operand once per call and group). */
static void fgemm_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct tnn_fgemm_use * use = userdata;
    float * work = (float *) tnn_thread_scratch(&use->cpu->scratch, ith, &nth);
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    if (work == NULL) {
        return;
    }
    /* a by_k source is X [m, k] of A = X^T; likewise B */
    const int64_t m = use->a_by_k ? a->ne[0] : a->ne[1];
    const int64_t k = use->a_by_k ? a->ne[1] : a->ne[0];
    const int64_t n = use->b_by_k ? b->ne[0] : b->ne[1];
    const int64_t batches = b->ne[2], ratio = b->ne[2] / a->ne[2];
    const int64_t panels = (m + TNN_FGEMM_ROWS - 1) / TNN_FGEMM_ROWS;
    const int64_t units = batches * panels;
    /* too few panels to share: split the columns too */
    int64_t splits = units >= 2 * nth ? 1 : (2 * nth + units - 1) / units;
    splits = splits < n ? splits : n;
    const int64_t items = units * splits;
    const struct tnn_cpu_kernels * kernels = &use->cpu->kernels;
    const int64_t last = items * (ith + 1) / nth;
    for (int64_t item = items * ith / nth; item < last;) {
        const int64_t unit = item / splits, split = item % splits;
        const int64_t batch = unit / panels, panel = unit % panels;
        /* whole panels (no column split): on to the batch's or the share's end */
        int64_t panel_end = panel + 1;
        if (splits == 1) {
            panel_end = last - item < panels - panel ? panel + (last - item) : panels;
        }
        float * c = (float *) ((char *) dst->data + batch * dst->nb[2]);
        const struct tnn_fgemm_operand a_op = operand(a, use->a_by_k, batch / ratio);
        const struct tnn_fgemm_operand b_op = operand(b, use->b_by_k, batch);
        (use->bf16 ? kernels->fgemm_bf16
                   : kernels->fgemm)(&a_op, m, k, &b_op, c, (int64_t) (dst->nb[1] / sizeof(float)), panel,
                                     panel_end, n * split / splits, n * (split + 1) / splits, work);
        item += splits == 1 ? panel_end - panel : 1;
    }
}

/* X when t = cont(transpose(X)) with X an F32 matrix contiguous along its
 * rows (so that t's k runs along X's rows), else NULL. */
static struct ggml_tensor * transposed_source(const struct ggml_tensor * t) {
    if (t->op != GGML_OP_CONT || t->src[0] == NULL || t->src[0]->op != GGML_OP_TRANSPOSE) {
        return NULL;
    }
    struct ggml_tensor * x = t->src[0]->src[0];
    const size_t f = sizeof(float);
    const bool fits = x->type == GGML_TYPE_F32 && x->nb[0] == f && x->nb[1] % f == 0 && x->nb[2] % f == 0 &&
                      x->ne[3] == 1 && x->ne[0] == t->ne[1] && x->ne[1] == t->ne[0] && x->ne[2] == t->ne[2];
    return fits ? x : NULL;
}

/* dst [m, n] = X [m, k] . Y [n, k]^T, src0 = X and src1 = Y as the
 * forward left them (kernels.h, tnn_fgemm_skinny); threads share out blocks
 * of 16 columns. userdata: the session's kernels. */
static void skinny_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct tnn_cpu_kernels * kernels = userdata;
    const struct ggml_tensor *x = dst->src[0], *y = dst->src[1];
    const int64_t m = dst->ne[0], n = dst->ne[1], k = x->ne[1], blocks = (n + 15) / 16;
    const int64_t n0 = blocks * ith / nth * 16, n1 = blocks * (ith + 1) / nth * 16;
    kernels->fgemm_skinny((const float *) x->data, (int64_t) (x->nb[1] / sizeof(float)), m,
                          (const float *) y->data, (int64_t) (y->nb[1] / sizeof(float)), k, (float *) dst->data,
                          (int64_t) (dst->nb[1] / sizeof(float)), n0, n1 < n ? n1 : n);
}

/* The largest X read in place as B = X^T (see tnn_use_fgemm). */
#define B_BY_K_MAX_BYTES (256 << 10)

/* Whether the kernel takes this product: F32 operands contiguous along k,
 * at most three dimensions, src0 broadcast over src1's batches, and at
 * least a panel of rows (a LoRA A's 8 rows would waste three quarters of
 * the kernel: ggml's is faster there). */
static bool fgemm_takes(const struct ggml_tensor * node) {
    const struct ggml_tensor *a = node->src[0], *b = node->src[1];
    if (node->op != GGML_OP_MUL_MAT || a->type != GGML_TYPE_F32 || b->type != GGML_TYPE_F32 ||
        node->type != GGML_TYPE_F32) {
        return false;
    }
    const size_t f = sizeof(float);
    return a->nb[0] == f && b->nb[0] == f && node->nb[0] == f && a->nb[1] % f == 0 && a->nb[2] % f == 0 &&
           b->nb[1] % f == 0 && b->nb[2] % f == 0 && node->nb[1] % f == 0 && node->nb[2] % f == 0 &&
           a->ne[3] == 1 && b->ne[3] == 1 && b->ne[2] % a->ne[2] == 0 && a->ne[1] >= TNN_FGEMM_ROWS;
}

/* Whether node is mul_mat(cont(transpose(X)), cont(transpose(Y))) with at
 * most TNN_SKINNY_MAX_M rows (a low-rank factor's weight gradient), one
 * batch: then *x = X [m, k] and *y = Y [n, k]. */
static bool skinny_takes(const struct ggml_tensor * node, struct ggml_tensor ** x, struct ggml_tensor ** y) {
    if (node->op != GGML_OP_MUL_MAT || node->type != GGML_TYPE_F32 || node->ne[0] > TNN_SKINNY_MAX_M ||
        node->ne[2] != 1 || node->ne[3] != 1 || node->nb[0] != sizeof(float)) {
        return false;
    }
    *x = transposed_source(node->src[0]);
    *y = transposed_source(node->src[1]);
    return *x != NULL && *y != NULL && (*x)->ne[2] == 1 && (*y)->ne[2] == 1;
}

static int compare_pointers(const void * a, const void * b) {
    const uintptr_t x = (uintptr_t) *(const struct ggml_tensor * const *) a;
    const uintptr_t y = (uintptr_t) *(const struct ggml_tensor * const *) b;
    return (x > y) - (x < y);
}

/* Turn the copies nothing reads any more into no-ops (tnn_become_noop): a
 * transposed copy whose only reader now reads its source. One pass over the
 * graph, each source looked up in the sorted copies: a graph of a thousand
 * layers has tens of thousands of both, too many to compare pairwise. */
static int drop_unread_copies(struct ggml_cgraph * graph, struct ggml_tensor ** dropped, int n_dropped) {
    if (n_dropped == 0) {
        return TNN_OK;
    }
    qsort(dropped, (size_t) n_dropped, sizeof(*dropped), compare_pointers);
    int n_unique = 1;           /* a copy read by several products is listed once per product */
    for (int d = 1; d < n_dropped; ++d) {
        if (dropped[d] != dropped[n_unique - 1]) {
            dropped[n_unique++] = dropped[d];
        }
    }
    bool * read = calloc((size_t) n_unique, sizeof(*read));
    if (read == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory");
    }
    const int n_nodes = ggml_graph_n_nodes(graph);
    for (int i = 0; i < n_nodes; ++i) {
        const struct ggml_tensor * node = ggml_graph_node(graph, i);
        for (int j = 0; j < GGML_MAX_SRC; ++j) {
            if (node->src[j] == NULL) {
                continue;
            }
            struct ggml_tensor ** found = bsearch(&node->src[j], dropped, (size_t) n_unique, sizeof(*dropped),
                                                  compare_pointers);
            if (found != NULL) {
                read[found - dropped] = true;
            }
        }
    }
    for (int d = 0; d < n_unique; ++d) {
        if (!read[d] && (dropped[d]->flags & GGML_TENSOR_FLAG_OUTPUT) == 0) {
            tnn_become_noop(dropped[d]);
        }
    }
    free(read);
    return TNN_OK;
}

int tnn_use_fgemm(tnn_session * s, struct ggml_cgraph * graph) {
    const bool dense = s->cpu.kernels.fgemm != NULL ||
                       (s->train.bf16_products && s->cpu.kernels.fgemm_bf16 != NULL);
    if (!dense && s->cpu.kernels.fgemm_skinny == NULL) {
        return TNN_OK;
    }
    const int n_nodes = ggml_graph_n_nodes(graph);
    struct ggml_tensor ** copies = calloc((size_t) 2 * n_nodes + 1, sizeof(*copies));
    if (copies == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory");
    }
    int n_copies = 0;
    bool used = false;   /* (skinny_node needs no scratch) */
    for (int i = 0; i < n_nodes; ++i) {
        struct ggml_tensor * node = ggml_graph_node(graph, i);
        struct ggml_tensor *x = NULL, *y = NULL;
        if (s->cpu.kernels.fgemm_skinny != NULL && skinny_takes(node, &x, &y)) {
            copies[n_copies++] = node->src[0];
            copies[n_copies++] = node->src[1];
            struct ggml_tensor * srcs[2] = { x, y };
            tnn_become_custom(s->train.ctx_graph, node, skinny_node, &s->cpu.kernels, srcs, 2);
            continue;
        }
        if (!dense || !fgemm_takes(node)) {
            continue;
        }
        struct ggml_tensor * a_source = transposed_source(node->src[0]);
        /* B read along k strides through memory for every column tile:
         * slower than the copy once X outgrows L2 (SmolLM2's shapes, 576 KB
         * and up: 204 -> 194 tokens/s), faster below it, where the copy is
         * a node of its own for little work (toy-train's default model:
         * 77 -> 83 thousand tokens/s) */
        struct ggml_tensor * b_source = transposed_source(node->src[1]);
        if (b_source != NULL && ggml_nbytes(b_source) > B_BY_K_MAX_BYTES) {
            b_source = NULL;
        }
        /* precision bf16 rounds the products by weights; attention's
         * (batched over heads) stay float32: rounding its weights to bf16,
         * the attention-sink token's near 1, moved one step of a 100-step
         * LoRA run on SmolLM2 25% off the f32 loss (with them in float32: at
         * most 0.5% over the 100 steps) */
        const bool attention = node->src[0]->ne[2] > 1 || node->src[1]->ne[2] > 1;
        const bool bf16 = s->train.bf16_products && !attention;
        if ((bf16 ? s->cpu.kernels.fgemm_bf16 : s->cpu.kernels.fgemm) == NULL) {
            continue;   /* (TNN_CPU_KERNELS left that kernel out) */
        }
        const int layout = (a_source != NULL) + 2 * (b_source != NULL) + 4 * bf16;
        struct tnn_fgemm_use * use = &s->cpu.fgemm_uses[layout];
        *use = (struct tnn_fgemm_use){ &s->cpu, a_source != NULL, b_source != NULL, bf16 };
        if (a_source != NULL) {
            copies[n_copies++] = node->src[0];
        }
        if (b_source != NULL) {
            copies[n_copies++] = node->src[1];
        }
        struct ggml_tensor * srcs[2] = { a_source ? a_source : node->src[0], b_source ? b_source : node->src[1] };
        tnn_become_custom(s->train.ctx_graph, node, fgemm_node, use, srcs, 2);
        used = true;
    }
    const int status = drop_unread_copies(graph, copies, n_copies);
    free(copies);
    if (status != TNN_OK || !used) {
        return status;
    }
    const size_t f32 = tnn_fgemm_scratch_bytes(),
                 bf16 = s->train.bf16_products ? tnn_fgemm_bf16_scratch_bytes() : 0;
    return tnn_grow_scratch(&s->cpu.scratch, s->n_threads, f32 > bf16 ? f32 : bf16);
}

void tnn_use_bf16_copy(tnn_session * s, struct ggml_tensor * node, struct ggml_tensor * w_bf16,
                       struct ggml_tensor * x, bool transposed) {
    struct tnn_fgemm_use * use = &s->cpu.bf16_copy_uses[transposed];
    *use = (struct tnn_fgemm_use){ &s->cpu, transposed, false, true };
    struct ggml_tensor * srcs[2] = { w_bf16, x };
    tnn_become_custom(s->train.ctx_graph, node, fgemm_node, use, srcs, 2);
}
