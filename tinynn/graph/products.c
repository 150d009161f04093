/* Float32 matrix products of a training graph on tinynn's own CPU kernel.
 *
 * The graph is built with ggml_mul_mat, so that autodiff sees it; once the
 * backward is built, tnn_use_fgemm turns every F32 product the session's
 * fgemm kernel (cpu/kernels.h) can take into a custom node that calls it.
 * The values are those of the same product summed in another order.
 *
 * Causal attention's products skip the part its mask makes zero. A training
 * mask hides every key after its query (session/train.c), so the softmax
 * weights W there are exact zeros, and so are the scores' gradients dS.
 * For one head, O [hd, query] = V W, W = softmax(K^T Q + mask):
 *   W itself, each query's row:       keys up to the query, zeros after
 *                                     (ggml's softmax, vendor patch 0012);
 *   O and dQ = K dS, sums over keys:  keys <= the column's query (K_TO_COLUMN);
 *   dV [key, hd] = W dO^T, over queries: queries >= the row's key (K_FROM_ROW);
 *   dK [hd, key], over queries:       summed as dK^T = dS Q^T, reading dS in
 *                                     place from the row's key (key_gradient_node),
 *                                     not from a transposed copy of dS.
 * These products move the T x T matrices through memory, and that traffic,
 * not the multiplies, bounds them (the scores and dW are written whole
 * for the softmax, so they keep the whole product). fgemm sums each output
 * over k in order from zero, so leaving out exact zero terms at either end
 * of k keeps every value's bytes. */
#include "graph/graph.h"

#include <stdlib.h>
#include <string.h>

/* Where an operand of a rewritten product lies: the node's source itself,
 * or, when that source is cont(transpose(X)), X read along k (by_k); in
 * bfloat16 for a frozen matrix's copy. */
static struct tnn_fgemm_operand operand(const struct ggml_tensor * t, bool by_k, int64_t batch, bool tiles) {
    const void * at = (const char *) t->data + batch * t->nb[2];
    const bool bf16 = t->type == GGML_TYPE_BF16;
    struct tnn_fgemm_operand op = {
        .data = bf16 ? NULL : (const float *) at,
        .ld = (int64_t) (t->nb[1] / ggml_type_size(t->type)),
        .by_k = by_k,
        .bf16 = bf16 && !tiles ? (const uint16_t *) at : NULL,
        .tiles = tiles ? (const uint16_t *) at : NULL,
    };
    return op;
}

/* Columns of a sum-over-k part computed in one call: a block's last column
 * sets its k range, so its first columns add up to COLUMN_BLOCK - 1 zero
 * terms each (4 tiles of the avx512 kernel). */
#define COLUMN_BLOCK 48

/* An operand's k range starting at k0. */
static struct tnn_fgemm_operand from_k(struct tnn_fgemm_operand op, int64_t k0) {
    op.data += op.by_k ? k0 * op.ld : k0;
    return op;
}

/* fgemm's product over panels [p0, p1) and columns [n0, n1), only the part
 * of it that a causal mask leaves (the file's comment; float32 only). The
 * keys and queries are as many (k == m for K_FROM_ROW, k == n for
 * K_TO_COLUMN), so no k range is empty. */
static void causal_part(const struct tnn_fgemm_use * use, const struct tnn_fgemm_operand * a, int64_t m, int64_t k,
                        const struct tnn_fgemm_operand * b, float * c, int64_t ldc, int64_t p0, int64_t p1,
                        int64_t n0, int64_t n1, float * work) {
    const tnn_fgemm_fn fgemm = use->cpu->kernels.fgemm;
    if (use->causal == TNN_CAUSAL_K_FROM_ROW) {
        /* rows are keys, k runs over queries: from the panel's first key */
        for (int64_t p = p0; p < p1; ++p) {
            const int64_t k0 = p * TNN_FGEMM_ROWS;
            const struct tnn_fgemm_operand a_k = from_k(*a, k0), b_k = from_k(*b, k0);
            fgemm(&a_k, m, k - k0, &b_k, c, ldc, p, p + 1, n0, n1, false, work);
        }
        return;
    }
    /* columns are queries, k runs over keys: up to the block's last query */
    for (int64_t j0 = n0; j0 < n1; j0 += COLUMN_BLOCK) {
        const int64_t j1 = j0 + COLUMN_BLOCK < n1 ? j0 + COLUMN_BLOCK : n1;
        fgemm(a, m, j1, b, c, ldc, p0, p1, j0, j1, false, work);
    }
}

/* Floats of a thread's scratch after fgemm's panel: key_gradient_node's
 * tile of dK^T, TNN_FGEMM_ROWS keys of up to this many head dims. */
#define KEY_TILE_DIMS 512

/* dst = dK [hd, keys, heads] of causal attention from src0 = Q [hd,
 * queries, heads] and src1 = dS [keys, queries, heads] (as many keys as
 * queries): dK^T = dS Q^T a panel of TNN_FGEMM_ROWS keys at a time, both
 * read along k in place (dS's keys and Q's dims are contiguous), over the
 * queries from the panel's first key on, then written transposed. The
 * same terms in the same order as the product of Q^T and dS's transposed
 * copy, so the same bytes (fma's two factors swap places). Threads share
 * out (head, panel) units. */
static void key_gradient_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct tnn_cpu_state * cpu = userdata;
    float * work = (float *) tnn_thread_scratch(&cpu->scratch, ith, &nth);
    if (work == NULL) {
        return;
    }
    float * tile = work + tnn_fgemm_scratch_bytes() / sizeof(float);   /* [hd][TNN_FGEMM_ROWS] */
    const struct ggml_tensor *q = dst->src[0], *ds = dst->src[1];
    const int64_t hd = dst->ne[0], keys = dst->ne[1], queries = ds->ne[1];
    const int64_t panels = (keys + TNN_FGEMM_ROWS - 1) / TNN_FGEMM_ROWS, units = dst->ne[2] * panels;
    for (int64_t unit = units * ith / nth; unit < units * (ith + 1) / nth; ++unit) {
        const int64_t head = unit / panels, m0 = unit % panels * TNN_FGEMM_ROWS;
        const int64_t rows = keys - m0 < TNN_FGEMM_ROWS ? keys - m0 : TNN_FGEMM_ROWS;
        const int64_t ld_ds = (int64_t) (ds->nb[1] / sizeof(float)), ld_q = (int64_t) (q->nb[1] / sizeof(float));
        /* A[key, query] at ds + query * ld_ds + key, B[dim, query] at q + query * ld_q + dim */
        const struct tnn_fgemm_operand a = {
            .data = (const float *) ((const char *) ds->data + head * ds->nb[2]) + m0 * ld_ds + m0,
            .ld = ld_ds,
            .by_k = true,
        };
        const struct tnn_fgemm_operand b = {
            .data = (const float *) ((const char *) q->data + head * q->nb[2]) + m0 * ld_q,
            .ld = ld_q,
            .by_k = true,
        };
        cpu->kernels.fgemm(&a, rows, queries - m0, &b, tile, TNN_FGEMM_ROWS, 0, 1, 0, hd, false, work);
        float * out = (float *) ((char *) dst->data + head * dst->nb[2]);
        for (int64_t r = 0; r < rows; ++r) {
            float * column = (float *) ((char *) out + (m0 + r) * dst->nb[1]);
            for (int64_t d = 0; d < hd; ++d) {
                column[d] = tile[d * TNN_FGEMM_ROWS + r];
            }
        }
    }
}

int64_t tnn_column_splits(int64_t units, int nth, int64_t n) {
    /* at least two items a thread, where the columns allow */
    const int64_t splits = units >= 2 * nth ? 1 : (2 * nth + units - 1) / units;
    return splits < n ? splits : n;
}

/* One product of a node: how to run it and its operands' sources. */
struct product {
    const struct tnn_fgemm_use * use;
    const struct ggml_tensor *a, *b;
};

/* One product's panels [p0, p1) and columns [n0, n1) of a batch into c:
 * written, or added to c with accumulate. */
static void run_product(const struct product * product, int64_t m, int64_t batch, float * c, int64_t ldc,
                        int64_t p0, int64_t p1, int64_t n0, int64_t n1, bool accumulate, float * work) {
    const struct tnn_fgemm_use * use = product->use;
    const struct ggml_tensor *a = product->a, *b = product->b;
    /* a by_k source is X [m, k] of A = X^T */
    const int64_t k = use->a_by_k ? a->ne[1] : a->ne[0];
    const struct tnn_fgemm_operand a_op = operand(a, use->a_by_k, batch / (b->ne[2] / a->ne[2]), use->a_tiles);
    const struct tnn_fgemm_operand b_op = operand(b, use->b_by_k, batch, false);
    if (use->causal == TNN_CAUSAL_ALL) {
        (use->bf16 ? use->cpu->kernels.fgemm_bf16 : use->cpu->kernels.fgemm)(&a_op, m, k, &b_op, c, ldc, p0, p1,
                                                                             n0, n1, accumulate, work);
    } else {
        causal_part(use, &a_op, m, k, &b_op, c, ldc, p0, p1, n0, n1, work);
    }
}

/* Columns a thread's share of a node split by columns comes in multiples
 * of: fgemm_bf16_amx's blocks of 32 (two tiles). */
#define COLUMN_SHARE 32

/* Whether threads share out a node's columns rather than its panels.
 * fgemm_bf16 reads and rounds both operands once per call (and group), so
 * a thread given a share of the panels reads its part of A and all of B,
 * one given a share of the columns all of A and its part of B: the second
 * reads less where A's bytes are fewer than B's, as for a frozen matrix's
 * bfloat16 copy (2 bytes a value) by activations or gradients (float32)
 * over more tokens than half its rows. Nodes with a bfloat16 product only:
 * float32's fgemm keeps its panel split (either way, each value is the
 * same sum in the same order). */
static bool split_by_columns(const struct product * products, int n_products, int64_t n, int nth) {
    if (nth < 2 || n < COLUMN_SHARE * nth) {
        return false;
    }
    bool bf16 = false;
    int64_t a_bytes = 0, b_bytes = 0;
    for (int i = 0; i < n_products; ++i) {
        const struct ggml_tensor *a = products[i].a, *b = products[i].b;
        if (products[i].use->causal != TNN_CAUSAL_ALL) {
            return false;
        }
        bf16 = bf16 || products[i].use->bf16;
        a_bytes += ggml_nbytes(a) / a->ne[2];
        b_bytes += ggml_nbytes(b) / b->ne[2];
    }
    return bf16 && a_bytes < b_bytes;
}

/* dst [m, n, batches] = the sum of n_products products, each A [k, m,
 * batches / ratio] . B [k, n, batches]: the first written, the others
 * added to it (the kernels' accumulate), one work item at a time, so that
 * each item's part of dst is written once and read back while warm. Work
 * items of (batch, panel, column range) are shared out between threads; a
 * thread's run of whole panels of one batch goes to the kernel in one call
 * (fgemm_bf16 rounds each operand once per call and group). */
static void products_into(struct ggml_tensor * dst, const struct product * products, int n_products, int ith,
                          int nth) {
    float * work = (float *) tnn_thread_scratch(&products[0].use->cpu->scratch, ith, &nth);
    if (work == NULL) {
        return;
    }
    const int64_t m = dst->ne[0], n = dst->ne[1], batches = dst->ne[2];
    const int64_t ldc = (int64_t) (dst->nb[1] / sizeof(float));
    const int64_t panels = (m + TNN_FGEMM_ROWS - 1) / TNN_FGEMM_ROWS;
    if (split_by_columns(products, n_products, n, nth)) {
        /* a run of whole blocks of columns a thread, every panel of each batch */
        int64_t n0, n1;
        tnn_share_groups(n, COLUMN_SHARE, ith, nth, &n0, &n1);
        for (int64_t batch = 0; batch < batches && n0 < n1; ++batch) {
            float * c = (float *) ((char *) dst->data + batch * dst->nb[2]);
            for (int i = 0; i < n_products; ++i) {
                run_product(&products[i], m, batch, c, ldc, 0, panels, n0, n1, i > 0, work);
            }
        }
        return;
    }
    const int64_t units = batches * panels;
    const int64_t splits = tnn_column_splits(units, nth, n);
    const int64_t items = units * splits;
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
        const int64_t n0 = n * split / splits, n1 = n * (split + 1) / splits;
        for (int i = 0; i < n_products; ++i) {
            run_product(&products[i], m, batch, c, ldc, panel, panel_end, n0, n1, i > 0, work);
        }
        item += splits == 1 ? panel_end - panel : 1;
    }
}

/* dst = A . B, src0 and src1 the operands' sources (struct tnn_fgemm_use). */
static void fgemm_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct product product = { userdata, dst->src[0], dst->src[1] };
    products_into(dst, &product, 1, ith, nth);
}

/* dst = A1 . B1 + A2 . B2 from src0..3 (struct tnn_fgemm_sum). */
static void sum_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct tnn_fgemm_sum * sum = userdata;
    const struct product products[2] = { { sum->first, dst->src[0], dst->src[1] },
                                         { sum->second, dst->src[2], dst->src[3] } };
    products_into(dst, products, 2, ith, nth);
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
    const int64_t m = dst->ne[0], n = dst->ne[1], k = x->ne[1];
    int64_t n0, n1;
    tnn_share_groups(n, 16, ith, nth, &n0, &n1);
    kernels->fgemm_skinny((const float *) x->data, (int64_t) (x->nb[1] / sizeof(float)), m,
                          (const float *) y->data, (int64_t) (y->nb[1] / sizeof(float)), k, (float *) dst->data,
                          (int64_t) (dst->nb[1] / sizeof(float)), n0, n1);
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

/* The product node (if it is one) gets part in parts[] (by node index). */
static void mark_part(const struct tnn_node_index * index, int n_nodes, enum tnn_causal_part * parts,
                      const struct ggml_tensor * node, enum tnn_causal_part part) {
    const int i = node != NULL && node->op == GGML_OP_MUL_MAT ? tnn_node_find(index, n_nodes, node) : -1;
    if (i >= 0) {
        parts[i] = part;
    }
}

/* The graph's cont(transpose(t)), or NULL. */
static struct ggml_tensor * transposed_copy(struct ggml_cgraph * graph, const struct ggml_tensor * t) {
    struct ggml_tensor * transposed = tnn_graph_reader(graph, t, 0, GGML_OP_TRANSPOSE);
    return transposed != NULL ? tnn_graph_reader(graph, transposed, 0, GGML_OP_CONT) : NULL;
}

/* The product node (if it is one) marked in scores[] (by node index). */
static void mark_scores(const struct tnn_node_index * index, int n_nodes, bool * scores,
                        const struct ggml_tensor * node) {
    const int i = node != NULL && node->op == GGML_OP_MUL_MAT ? tnn_node_find(index, n_nodes, node) : -1;
    if (i >= 0) {
        scores[i] = true;
    }
}

/* Each node's causal part (the file's comment), by node index: found from
 * every masked softmax W of scores mul_mat(K, Q) with as many keys as
 * queries, O = mul_mat(V^T, W), dS = soft_max_back(dW, W), and the
 * backward's products of patch 0002 around them: dV = mul_mat(W^T,
 * dO^T), dQ = mul_mat(K^T, dS), dK = mul_mat(Q^T, dS^T) (KEY_GRADIENT, with
 * Q^T's source and dS as its sources). Each such W is flagged on the way
 * (op_params[2]) for ggml's softmax to run its rows only up to their
 * query (vendor patch 0012). The scores' products K^T Q are marked in
 * scores (n + 1 of them, false). NULL: out of memory. */
static enum tnn_causal_part * causal_parts(struct ggml_cgraph * graph, bool * scores) {
    struct ggml_tensor ** nodes = ggml_graph_nodes(graph);
    const int n = ggml_graph_n_nodes(graph);
    enum tnn_causal_part * parts = calloc((size_t) n + 1, sizeof(*parts));   /* TNN_CAUSAL_ALL */
    struct tnn_node_index * index = tnn_index_nodes(nodes, n);
    if (parts == NULL || index == NULL) {
        free(parts);
        free(index);
        return NULL;
    }
    for (int i = 0; i < n; ++i) {
        struct ggml_tensor * w = nodes[i];
        if (w->op != GGML_OP_SOFT_MAX || w->src[1] == NULL || w->src[0]->op != GGML_OP_MUL_MAT ||
            w->ne[0] != w->ne[1]) {
            continue;
        }
        /* the softmax itself: each row only up to its query (vendor patch 0012) */
        const int32_t causal_rows = 1;
        memcpy((char *) w->op_params + 2 * sizeof(int32_t), &causal_rows, sizeof causal_rows);
        mark_scores(index, n, scores, w->src[0]);
        mark_part(index, n, parts, tnn_graph_reader(graph, w, 1, GGML_OP_MUL_MAT), TNN_CAUSAL_K_TO_COLUMN);
        const struct ggml_tensor * w_t = transposed_copy(graph, w);
        if (w_t != NULL) {
            mark_part(index, n, parts, tnn_graph_reader(graph, w_t, 0, GGML_OP_MUL_MAT), TNN_CAUSAL_K_FROM_ROW);
        }
        const struct ggml_tensor * ds = tnn_graph_reader(graph, w, 1, GGML_OP_SOFT_MAX_BACK);
        if (ds == NULL) {
            continue;
        }
        mark_part(index, n, parts, tnn_graph_reader(graph, ds, 1, GGML_OP_MUL_MAT), TNN_CAUSAL_K_TO_COLUMN);
        const struct ggml_tensor * ds_t = transposed_copy(graph, ds);
        const struct ggml_tensor * dk = ds_t != NULL ? tnn_graph_reader(graph, ds_t, 1, GGML_OP_MUL_MAT) : NULL;
        if (dk != NULL && transposed_source(dk->src[0]) != NULL && dk->ne[0] <= KEY_TILE_DIMS) {
            mark_part(index, n, parts, dk, TNN_CAUSAL_KEY_GRADIENT);
        }
    }
    free(index);
    return parts;
}

int tnn_use_fgemm(const struct tnn_step * step, struct tnn_cpu_state * cpu, struct ggml_cgraph * graph) {
    const bool dense = cpu->kernels.fgemm != NULL || (step->bf16_products && cpu->kernels.fgemm_bf16 != NULL);
    if (!dense && cpu->kernels.fgemm_skinny == NULL) {
        return TNN_OK;
    }
    const int n_nodes = ggml_graph_n_nodes(graph);
    struct ggml_tensor ** copies = calloc((size_t) 2 * n_nodes + 1, sizeof(*copies));
    bool * scores = calloc((size_t) n_nodes + 1, sizeof(*scores));
    enum tnn_causal_part * parts = scores != NULL ? causal_parts(graph, scores) : NULL;
    if (copies == NULL || parts == NULL) {
        free(copies);
        free(scores);
        free(parts);
        return tnn_fail(TNN_ERR_ALLOC, "out of memory");
    }
    int n_copies = 0;
    bool used = false;   /* (skinny_node needs no scratch) */
    for (int i = 0; i < n_nodes; ++i) {
        struct ggml_tensor * node = ggml_graph_node(graph, i);
        struct ggml_tensor *x = NULL, *y = NULL;
        if (cpu->kernels.fgemm_skinny != NULL && skinny_takes(node, &x, &y)) {
            copies[n_copies++] = node->src[0];
            copies[n_copies++] = node->src[1];
            struct ggml_tensor * srcs[2] = { x, y };
            tnn_become_custom(step->ctx_graph, node, skinny_node, &cpu->kernels, srcs, 2);
            continue;
        }
        if (!dense || !fgemm_takes(node)) {
            continue;
        }
        if (parts[i] == TNN_CAUSAL_KEY_GRADIENT && cpu->kernels.fgemm != NULL) {
            /* dK from Q and dS in place: dS's transposed copy loses its reader */
            copies[n_copies++] = node->src[0];
            copies[n_copies++] = node->src[1];
            struct ggml_tensor * srcs[2] = { transposed_source(node->src[0]), node->src[1]->src[0]->src[0] };
            tnn_become_custom(step->ctx_graph, node, key_gradient_node, cpu, srcs, 2);
            used = true;
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
        /* precision bf16 rounds the products by weights, and attention's
         * scores K^T Q (Q and K rounded, as autocast rounds them); the rest
         * of attention's stay float32. Rounding the softmax weights W, the
         * attention-sink token's near 1, moved one step of a 100-step LoRA
         * run on SmolLM2 25% off the f32 loss; with the scores in bf16 it
         * kept within 0.64% (0.78% with them in float32), with dW = V^T dO
         * in bf16 as well 1.3% (docs/cpu-levels.md, "--precision bf16") */
        const bool attention = node->src[0]->ne[2] > 1 || node->src[1]->ne[2] > 1;
        const bool bf16 = step->bf16_products && (!attention || scores[i]);
        if ((bf16 ? cpu->kernels.fgemm_bf16 : cpu->kernels.fgemm) == NULL) {
            continue;   /* (TNN_CPU_KERNELS left that kernel out) */
        }
        const enum tnn_causal_part causal = bf16 || parts[i] == TNN_CAUSAL_KEY_GRADIENT ? TNN_CAUSAL_ALL
                                                                                        : parts[i];
        const int layout = (a_source != NULL) + 2 * (b_source != NULL) + 4 * bf16 + 8 * (int) causal;
        struct tnn_fgemm_use * use = &cpu->fgemm_uses[layout];
        *use = (struct tnn_fgemm_use){ cpu, a_source != NULL, b_source != NULL, bf16, causal };
        if (a_source != NULL) {
            copies[n_copies++] = node->src[0];
        }
        if (b_source != NULL) {
            copies[n_copies++] = node->src[1];
        }
        struct ggml_tensor * srcs[2] = { a_source ? a_source : node->src[0], b_source ? b_source : node->src[1] };
        tnn_become_custom(step->ctx_graph, node, fgemm_node, use, srcs, 2);
        used = true;
    }
    const int status = drop_unread_copies(graph, copies, n_copies);
    free(copies);
    free(scores);
    free(parts);
    if (status != TNN_OK || !used) {
        return status;
    }
    const size_t f32 = tnn_fgemm_scratch_bytes() + (size_t) KEY_TILE_DIMS * TNN_FGEMM_ROWS * sizeof(float),
                 bf16 = step->bf16_products ? tnn_fgemm_bf16_scratch_bytes() : 0;
    return tnn_grow_scratch(&cpu->scratch, step->n_threads, f32 > bf16 ? f32 : bf16);
}

void tnn_use_bf16_copy(struct ggml_context * ctx, struct tnn_cpu_state * cpu, struct ggml_tensor * node,
                       struct ggml_tensor * w_bf16, bool tiles, struct ggml_tensor * x, bool transposed) {
    struct tnn_fgemm_use * use = &cpu->bf16_copy_uses[2 * tiles + transposed];
    *use = (struct tnn_fgemm_use){ cpu, transposed, false, true, TNN_CAUSAL_ALL, tiles };
    struct ggml_tensor * srcs[2] = { w_bf16, x };
    tnn_become_custom(ctx, node, fgemm_node, use, srcs, 2);
}

/* t's use when it is a product node of this file (fgemm_node) over one
 * batch, nothing skipped; else NULL. */
static const struct tnn_fgemm_use * whole_product(const struct ggml_tensor * t) {
    const struct tnn_fgemm_use * use = tnn_custom_userdata(t, fgemm_node);
    return use != NULL && use->causal == TNN_CAUSAL_ALL && t->ne[2] == 1 && t->ne[3] == 1 ? use : NULL;
}

/* The session's entry for this pair of uses, added if new; NULL when full. */
static const struct tnn_fgemm_sum * sum_entry(struct tnn_cpu_state * cpu, const struct tnn_fgemm_use * first,
                                              const struct tnn_fgemm_use * second) {
    for (int i = 0; i < TNN_FGEMM_SUMS; ++i) {
        struct tnn_fgemm_sum * sum = &cpu->fgemm_sums[i];
        if (sum->first == NULL) {
            *sum = (struct tnn_fgemm_sum){ first, second };
        }
        if (sum->first == first && sum->second == second) {
            return sum;
        }
    }
    return NULL;
}

int tnn_sum_products(const struct tnn_step * step, struct tnn_cpu_state * cpu, struct ggml_cgraph * graph) {
    if (!step->bf16_products || cpu->kernels.fgemm_bf16 == NULL) {
        return TNN_OK;
    }
    struct tnn_node_index * index = NULL;
    int * readers = NULL;
    const int status = tnn_count_readers(graph, &index, &readers);
    if (status != TNN_OK) {
        return status;
    }
    struct ggml_tensor ** nodes = ggml_graph_nodes(graph);
    const int n_nodes = ggml_graph_n_nodes(graph);
    for (int i = 0; i < n_nodes; ++i) {
        struct ggml_tensor * add = nodes[i];
        if (add->op != GGML_OP_ADD || add->view_src != NULL || !whole_product(add->src[0]) ||
            !whole_product(add->src[1]) || add->src[0] == add->src[1] ||
            !ggml_are_same_shape(add->src[0], add->src[1]) || !ggml_is_contiguous(add)) {
            continue;
        }
        struct ggml_tensor *p = add->src[0], *q = add->src[1];
        const int ip = tnn_node_find(index, n_nodes, p), iq = tnn_node_find(index, n_nodes, q);
        const int32_t flags = GGML_TENSOR_FLAG_OUTPUT | GGML_TENSOR_FLAG_PARAM | GGML_TENSOR_FLAG_LOSS;
        if (ip < 0 || iq < 0 || readers[ip] != 1 || readers[iq] != 1 || ((p->flags | q->flags) & flags) != 0) {
            continue;
        }
        /* the second is added by fgemm_bf16's accumulate; a float32 product first */
        if (!whole_product(q)->bf16) {
            struct ggml_tensor * t = p;
            p = q;
            q = t;
        }
        const struct tnn_fgemm_sum * sum = whole_product(q)->bf16
                                               ? sum_entry(cpu, whole_product(p), whole_product(q))
                                               : NULL;
        if (sum == NULL) {
            continue;
        }
        struct ggml_tensor * srcs[4] = { p->src[0], p->src[1], q->src[0], q->src[1] };
        tnn_become_custom(step->ctx_graph, add, sum_node, (void *) sum, srcs, 4);
        tnn_become_noop(p);
        tnn_become_noop(q);
    }
    free(index);
    free(readers);
    return TNN_OK;
}
