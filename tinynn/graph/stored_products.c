/* The input gradients through a frozen matrix kept as stored, on fgemm.
 *
 * Without the base's copies (base_compute stored: the least memory, what a
 * model too big for the copies gets), the input gradient of y = W x is
 * dx = W^T dy, which ggml's autodiff writes as out_prod(W, dy^T): a loop over
 * W's rows that dequantizes each and adds it, scaled, into every column of
 * dx (24 G multiply-adds/s on two Zen 3 cores, fgemm about 60). Here
 * the same product runs on fgemm (cpu/kernels.h) with W dequantized a
 * column block at a time into scratch memory, never whole:
 *
 *   dx [d_in, n] = sum over k of W[k, m] dy[k, n],  m < d_in, k < d_out
 *
 * A thread takes a block of `width` columns of W (m: dx's rows), the
 * dequantized values laid out [k][width] (fgemm's A read by_k), K_CHUNK rows
 * of W at a time: the first chunk's product is written to dx, each later
 * chunk's is added to it. The chunks are the same whatever the thread
 * count, so every value is the same bits for any number of threads. The
 * values are the out_prod's up to the order of the sums (both multiply the
 * dequantized float32 weights by float32 gradients). */
#include "graph/graph.h"

#include <stdlib.h>

/* Rows of W (d_out) dequantized and multiplied per pass: 1024 x 256 floats,
 * 1 MB of scratch for a K-quant's 256-wide blocks. */
#define K_CHUNK 1024

/* Columns of W per block: whole quantization blocks (256 values for the
 * K-quants, 32 for the others) and whole fgemm panels. */
int64_t tnn_stored_block_width(enum ggml_type type) {
    const int64_t blck = ggml_blck_size(type);
    return blck % TNN_FGEMM_ROWS == 0 ? blck : TNN_FGEMM_ROWS;
}

/* fgemm's panel, in whole cache lines: the first part of a thread's scratch. */
static size_t panel_bytes(void) { return (tnn_fgemm_scratch_bytes() + 63) / 64 * 64; }

size_t tnn_stored_scratch_bytes(int64_t width, int64_t n) {
    return panel_bytes() + sizeof(float) * (size_t) width * (K_CHUNK + (size_t) n);
}

/* Work items of (column block, column range of dx) shared out between
 * threads. */
void tnn_stored_input_gradient_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct tnn_cpu_state * cpu = userdata;
    char * scratch = tnn_thread_scratch(&cpu->scratch, ith, &nth);
    const struct ggml_tensor *w = dst->src[0], *dy = dst->src[1];
    if (scratch == NULL) {
        return;
    }
    const int64_t d_in = w->ne[0], d_out = w->ne[1], n = dy->ne[1];
    const int64_t width = tnn_stored_block_width(w->type), blocks = d_in / width;
    float * panel = (float *) scratch;
    float * block = (float *) (scratch + panel_bytes());
    float * later = block + (size_t) width * K_CHUNK;
    const ggml_to_float_t to_float = ggml_get_type_traits(w->type)->to_float;
    const int64_t ldy = (int64_t) (dy->nb[1] / sizeof(float)), ldx = (int64_t) (dst->nb[1] / sizeof(float));

    /* too few blocks to share: dx's columns split too (each split
     * dequantizes its block again) */
    const int64_t splits = tnn_column_splits(blocks, nth, n);
    const int64_t items = blocks * splits;
    for (int64_t item = items * ith / nth; item < items * (ith + 1) / nth; ++item) {
        const int64_t m0 = item / splits * width, split = item % splits;
        const int64_t n0 = n * split / splits, cols = n * (split + 1) / splits - n0;
        float * dx = (float *) dst->data + n0 * ldx + m0;
        const size_t first_byte = ggml_row_size(w->type, m0);   /* of the block in each row of W */
        for (int64_t k0 = 0; k0 < d_out; k0 += K_CHUNK) {
            const int64_t depth = d_out - k0 < K_CHUNK ? d_out - k0 : K_CHUNK;
            for (int64_t k = 0; k < depth; ++k) {
                const char * row = (const char *) w->data + (k0 + k) * w->nb[1];
                to_float(row + first_byte, block + k * width, width);
            }
            const struct tnn_fgemm_operand a = { .data = block, .ld = width, .by_k = true };
            const struct tnn_fgemm_operand b = { .data = (const float *) dy->data + n0 * ldy + k0, .ld = ldy };
            if (k0 == 0) {
                cpu->kernels.fgemm(&a, width, depth, &b, dx, ldx, 0, width / TNN_FGEMM_ROWS, 0, cols, false,
                                   panel);
                continue;
            }
            cpu->kernels.fgemm(&a, width, depth, &b, later, width, 0, width / TNN_FGEMM_ROWS, 0, cols, false,
                               panel);
            for (int64_t j = 0; j < cols; ++j) {
                for (int64_t i = 0; i < width; ++i) {
                    dx[j * ldx + i] += later[j * width + i];
                }
            }
        }
    }
}

/* ---- qgemm on the stored blocks --------------------------------------------- */

/* The most columns a stored product takes at a time: its scratch (the
 * columns quantized, which every thread reads, its panels split) stays
 * that of 2048 tokens however many a step has. Each part packs the whole
 * matrix again, which costs about as much as 50 (W) to 150 (W^T) columns'
 * products, so the parts are as few as that allows and of equal width:
 * 960 + 64 columns for 1024 tokens cost a 1 B step 4% (a second packing of
 * every W^T). */
#define STORED_COLUMNS 2048
/* a whole number of every variant's column tiles (12, 16) */
#define STORED_COLUMN_TILES 48

/* The columns of each part of a stored product over n columns. */
static int64_t stored_part_columns(int64_t n) {
    const int64_t parts = (n + STORED_COLUMNS - 1) / STORED_COLUMNS;
    const int64_t tiles = (n + parts * STORED_COLUMN_TILES - 1) / (parts * STORED_COLUMN_TILES);
    return tiles * STORED_COLUMN_TILES < n ? tiles * STORED_COLUMN_TILES : n;
}

/* dst [rows, n] = A x, A W or W^T packed as it is read (struct
 * tnn_stored_use). The threads split A's panels, so that each packs only
 * its own, and every thread reads every column: the columns are quantized
 * once, a share by each thread into the shared scratch, and the threads
 * meet before reading them (and before a next part overwrites them). */
static void stored_qgemm_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct tnn_stored_use * use = userdata;
    const struct tnn_cpu_state * cpu = use->qgemm.cpu;
    char * scratch = tnn_thread_scratch(&cpu->scratch, ith, &nth);
    const struct ggml_tensor * x = dst->src[1];
    if (scratch == NULL) {
        return;
    }
    struct tnn_qcol * quantized = tnn_shared_scratch(&cpu->scratch);
    const int64_t k = x->ne[0];
    const int64_t ldx = (int64_t) (x->nb[1] / sizeof(float)), ldy = (int64_t) (dst->nb[1] / sizeof(float));
    const int64_t part = stored_part_columns(x->ne[1]);
    for (int64_t c0 = 0; c0 < x->ne[1]; c0 += part) {
        const int64_t n = x->ne[1] - c0 < part ? x->ne[1] - c0 : part;
        int64_t j0, j1;
        tnn_share_groups(n, 1, ith, nth, &j0, &j1);
        if (c0 > 0) {
            tnn_threads_meet(&cpu->scratch, nth);   /* the last part's columns read by all */
        }
        cpu->kernels.qgemm_quantize((const float *) x->data + c0 * ldx, ldx, k, j0, j1, quantized);
        tnn_threads_meet(&cpu->scratch, nth);
        const struct tnn_qgemm_columns columns = { NULL, 0, quantized };
        cpu->kernels.qgemm(use->qgemm.levels, &use->panels, dst->ne[0], k, &columns, n,
                           (float *) dst->data + c0 * ldy, ldy, scratch, ith, nth);
    }
}

/* The use of W (transposed: W^T) at levels, found or made; NULL where qgemm
 * cannot take W as stored, or out of memory. */
static const struct tnn_stored_use * stored_use(struct tnn_cpu_state * cpu, const struct ggml_tensor * w,
                                                bool transposed, int32_t levels) {
    for (int32_t i = 0; i < cpu->n_stored_uses; ++i) {
        struct tnn_stored_use * use = cpu->stored_uses[i];
        if (use->w == w && use->transposed == transposed && use->qgemm.levels == levels) {
            return use;
        }
    }
    struct tnn_qpanels panels;
    if (!tnn_stored_panels(w, transposed, &cpu->kernels, &panels)) {
        return NULL;
    }
    if (cpu->n_stored_uses == cpu->cap_stored_uses) {
        const int32_t cap = cpu->cap_stored_uses ? 2 * cpu->cap_stored_uses : 64;
        struct tnn_stored_use ** grown = realloc(cpu->stored_uses, (size_t) cap * sizeof(*grown));
        if (grown == NULL) {
            return NULL;
        }
        cpu->stored_uses = grown;
        cpu->cap_stored_uses = cap;
    }
    struct tnn_stored_use * use = malloc(sizeof(*use));
    if (use == NULL) {
        return NULL;
    }
    *use = (struct tnn_stored_use){ { cpu, levels }, w, transposed, panels };
    cpu->stored_uses[cpu->n_stored_uses++] = use;
    return use;
}

/* Whether t is a frozen base matrix read as stored: not trained, not made
 * by the graph, in host memory (the mapped file). */
static bool frozen_stored(const struct ggml_tensor * t) {
    return t->op == GGML_OP_NONE && !(t->flags & GGML_TENSOR_FLAG_PARAM) && t->data != NULL && t->buffer != NULL &&
           ggml_backend_buffer_is_host(t->buffer) && t->ne[2] == 1 && t->ne[3] == 1;
}

/* Whether x can be the columns of qgemm: F32 [k, n], contiguous columns. */
static bool qgemm_columns(const struct ggml_tensor * x, int64_t k) {
    return x->type == GGML_TYPE_F32 && x->ne[0] == k && x->ne[2] == 1 && x->ne[3] == 1 &&
           x->nb[0] == sizeof(float) && x->nb[1] % sizeof(float) == 0;
}

/* Rewrite node onto qgemm from the stored blocks where it is W x (forward)
 * or out_prod(W, dy^T) (the input gradient W^T dy); *bytes grows to its
 * scratch. Levels as the copies take them (graph/fast_copies.c): two for
 * the forward and for the output head's gradient (which spans many
 * decades), one for the blocks' gradients. */
static void use_stored_qgemm(const struct tnn_step * step, struct tnn_cpu_state * cpu, struct ggml_tensor * node,
                             const struct ggml_tensor * head, size_t * bytes, size_t * shared_bytes) {
    const bool forward = node->op == GGML_OP_MUL_MAT;
    const bool input_grad = node->op == GGML_OP_OUT_PROD && node->src[1]->op == GGML_OP_TRANSPOSE;
    if ((!forward && !input_grad) || !frozen_stored(node->src[0]) || node->type != GGML_TYPE_F32 ||
        !ggml_is_contiguous(node)) {
        return;
    }
    struct ggml_tensor * w = node->src[0];
    struct ggml_tensor * x = forward ? node->src[1] : node->src[1]->src[0];
    const int64_t k = forward ? w->ne[0] : w->ne[1];
    if (!qgemm_columns(x, k) || node->ne[1] != x->ne[1]) {
        return;
    }
    const struct tnn_stored_use * use = stored_use(cpu, w, input_grad, forward || w == head ? 2 : 1);
    if (use == NULL) {
        return;   /* the fgemm path below, or ggml's */
    }
    struct ggml_tensor * srcs[2] = { w, x };
    tnn_become_custom(step->ctx_graph, node, stored_qgemm_node, (void *) use, srcs, 2);
    const int64_t n = stored_part_columns(x->ne[1]);
    const size_t need = tnn_qgemm_scratch_bytes(&use->panels, k, n, true);
    const size_t shared = tnn_qgemm_quantized_bytes(k, n);
    *bytes = need > *bytes ? need : *bytes;
    *shared_bytes = shared > *shared_bytes ? shared : *shared_bytes;
}

/* ---- the input gradient on fgemm -------------------------------------------- */

/* Whether node is out_prod(W, transpose(dy)), the input gradient through a
 * frozen matrix W as stored, in a form the node above takes. */
static bool stored_input_gradient(const struct ggml_tensor * node) {
    if (node->op != GGML_OP_OUT_PROD || node->src[1]->op != GGML_OP_TRANSPOSE) {
        return false;
    }
    const struct ggml_tensor *w = node->src[0], *dy = node->src[1]->src[0];
    const bool frozen = w->op == GGML_OP_NONE && !(w->flags & GGML_TENSOR_FLAG_PARAM) &&
                        w->type != GGML_TYPE_F32 && ggml_get_type_traits(w->type)->to_float != NULL &&
                        ggml_is_contiguous_rows(w) && w->ne[2] == 1 && w->ne[3] == 1 &&
                        w->ne[0] % tnn_stored_block_width(w->type) == 0;
    const bool columns = dy->type == GGML_TYPE_F32 && dy->nb[0] == sizeof(float) && dy->ne[0] == w->ne[1] &&
                         dy->ne[2] == 1 && dy->ne[3] == 1;
    const bool result = node->type == GGML_TYPE_F32 && ggml_is_contiguous(node) && node->ne[0] == w->ne[0] &&
                        node->ne[1] == dy->ne[1] && node->ne[2] == 1 && node->ne[3] == 1;
    return frozen && columns && result;
}

int tnn_use_stored_products(const struct tnn_step * step, struct tnn_cpu_state * cpu, struct ggml_cgraph * graph,
                            const struct ggml_tensor * head) {
    /* TNN_STORED_OUT_PROD: ggml's out_prod kept, to compare (tinynn.h) */
    if (cpu->kernels.fgemm == NULL || getenv("TNN_STORED_OUT_PROD") != NULL) {
        return TNN_OK;
    }
    size_t bytes = 0, shared_bytes = 0;
    for (int i = 0; i < ggml_graph_n_nodes(graph); ++i) {
        struct ggml_tensor * node = ggml_graph_node(graph, i);
        if (cpu->kernels.qgemm != NULL && getenv("TNN_STORED_FGEMM") == NULL) {
            use_stored_qgemm(step, cpu, node, head, &bytes, &shared_bytes);
        }
        if (!stored_input_gradient(node)) {
            continue;
        }
        struct ggml_tensor * srcs[2] = { node->src[0], node->src[1]->src[0] };
        tnn_become_custom(step->ctx_graph, node, tnn_stored_input_gradient_node, cpu, srcs, 2);
        const size_t need = tnn_stored_scratch_bytes(tnn_stored_block_width(srcs[0]->type), srcs[1]->ne[1]);
        bytes = need > bytes ? need : bytes;
    }
    const int status = shared_bytes > 0 ? tnn_grow_shared_scratch(&cpu->scratch, shared_bytes) : TNN_OK;
    return status != TNN_OK ? status : tnn_grow_scratch(&cpu->scratch, step->n_threads, bytes);
}
