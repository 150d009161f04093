/* Fast copies of a frozen base's matrices, made once at realize.
 *
 * Training through a frozen weight needs two products per step: the forward
 * y = W x and the input gradient dx = W^T dy. ggml's autodiff writes the
 * second as out_prod(W, dy^T), a loop that walks W row by row and, for a
 * quantized W, dequantizes as it goes: the slowest part of a LoRA step, and
 * an op the CUDA backend has for F32 only. With a transposed copy W^T made
 * here, the same gradient is mul_mat(W^T, dy): ggml's matmul kernels
 * (llamafile sgemm), on every backend. tnn_use_transposed_weights rewrites
 * the backward graph to use it.
 *
 * The forward stays in the stored type where ggml has a fast kernel for it
 * (F32, F16, Q8_0, Q4_0, Q5_0, and Q4_1 through vendor/patches/0004), so the
 * model computes what llama.cpp computes; other quantized types (Q5_1, the
 * K-quants) also get a Q8_0 copy for the forward. W^T is Q8_0 (F16 or F32
 * for such bases; F32 for the output head; see transposed_type).
 * TNN_BASE_STORED skips all of this: the stored types in place, backward by
 * out_prod (the least memory, about half the speed).
 *
 * Every copy is made from the stored bytes of the mapped file, 32 rows of W
 * at a time, so the only scratch memory is a 32-row tile. */
#include "internal.h"
#include "gguf.h"

#include <stdlib.h>
#include <string.h>

/* Rows of W (= 32 values along each row of W^T) per tile. */
#define TILE_ROWS 32

/* Types that forward fast in place: llamafile sgemm has kernels for them. */
static bool forwards_fast(enum ggml_type type) {
    return type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_Q8_0 ||
           type == GGML_TYPE_Q4_0 || type == GGML_TYPE_Q4_1 || type == GGML_TYPE_Q5_0;
}

/* The type of W^T. The input gradients dx = W^T dy are computed in it, and
 * mul_mat rounds dy to its partner type (Q8_0: 8 bits per block of 32; F16:
 * 11 bits per value). Measured against the float64 reference (SmolLM2 Q4_1,
 * 200 tokens, adapter-gradient cosine, median / min): stored out_prod
 * 0.9982 / 0.9875; F16 transposes the same; Q8_0 0.9956 / 0.9748, at half
 * the memory of F16 and 15% less time, so the blocks take Q8_0 (within 8-bit
 * activation noise; F32 for an F32 base). The output head's gradient
 * (softmax minus one-hot over the vocabulary) spans too many decades for
 * either (F16 0.9955 / 0.9652, Q8_0 0.38 at the worst adapter): its W^T is F32. */
static enum ggml_type transposed_type(enum ggml_type stored, bool is_head) {
    if (is_head || stored == GGML_TYPE_F32) {
        return GGML_TYPE_F32;
    }
    return stored == GGML_TYPE_F16 ? GGML_TYPE_F16 : GGML_TYPE_Q8_0;
}

/* Q8_0 rows of W^T are written a 32-wide block at a time: d_out must be a
 * multiple of 32 (else no transpose: that weight keeps out_prod). */
static bool transposable(const struct ggml_tensor * w, enum ggml_type type) {
    return type != GGML_TYPE_Q8_0 || w->ne[1] % TILE_ROWS == 0;
}

/* The stored bytes of a base tensor in the mapped file. */
static const char * stored_bytes(const tnn_session * s, const struct ggml_tensor * t) {
    const int64_t i = gguf_find_tensor(s->gguf_base, t->name);
    return (const char *) s->base_file.addr + gguf_get_data_offset(s->gguf_base) +
           gguf_get_tensor_offset(s->gguf_base, i);
}

/* Host memory to write a copy into: the tensor itself on a host buffer,
 * else scratch that is uploaded afterwards. */
static void * writable(struct ggml_tensor * t) {
    return ggml_backend_buffer_is_host(t->buffer) ? t->data : malloc(ggml_nbytes(t));
}

static void finish_writing(struct ggml_tensor * t, void * host) {
    if (host != t->data) {
        ggml_backend_tensor_set(t, host, 0, ggml_nbytes(t));
        free(host);
    }
}

/* Fill fwd (W in another type, or NULL) and wt (W^T, or NULL) from W's stored
 * bytes. W [d_in, d_out]; wt [d_out, d_in], d_out a multiple of 32. */
static int convert(const tnn_session * s, const struct ggml_tensor * w,
                   struct ggml_tensor * fwd, struct ggml_tensor * wt) {
    const int64_t d_in = w->ne[0], d_out = w->ne[1];
    const struct ggml_type_traits * traits = ggml_get_type_traits(w->type);
    const size_t w_row = ggml_row_size(w->type, d_in);
    const char * src = stored_bytes(s, w);

    float * tile = malloc((size_t) TILE_ROWS * d_in * sizeof(float));     /* [TILE_ROWS][d_in] */
    float * tile_t = malloc((size_t) d_in * TILE_ROWS * sizeof(float));   /* [d_in][TILE_ROWS] */
    const size_t piece = wt ? ggml_row_size(wt->type, TILE_ROWS) : 0;     /* a tile's part of a W^T row */
    char * pieces = malloc((size_t) d_in * (piece ? piece : 1));
    char * fwd_out = fwd ? writable(fwd) : NULL;
    char * wt_out = wt ? writable(wt) : NULL;
    if (tile == NULL || tile_t == NULL || pieces == NULL || (fwd && !fwd_out) || (wt && !wt_out)) {
        free(tile); free(tile_t); free(pieces);
        if (fwd_out && fwd_out != fwd->data) free(fwd_out);
        if (wt_out && wt_out != wt->data) free(wt_out);
        return tnn_fail(TNN_ERR_ALLOC, "out of memory preparing %s", w->name);
    }
    const size_t wt_row = wt ? ggml_row_size(wt->type, d_out) : 0;
    for (int64_t j0 = 0; j0 < d_out; j0 += TILE_ROWS) {
        const int64_t rows = d_out - j0 < TILE_ROWS ? d_out - j0 : TILE_ROWS;
        for (int64_t r = 0; r < rows; ++r) {
            if (w->type == GGML_TYPE_F32) {
                memcpy(tile + r * d_in, src + (j0 + r) * w_row, w_row);
            } else {
                traits->to_float(src + (j0 + r) * w_row, tile + r * d_in, d_in);
            }
        }
        if (fwd) {
            ggml_quantize_chunk(fwd->type, tile, fwd_out + j0 * ggml_row_size(fwd->type, d_in),
                                0, rows, d_in, NULL);
        }
        if (wt) {
            /* rows j0..j0+rows of W are a piece of every row of W^T (a short
             * last piece only for F16 and F32, see transposable) */
            for (int64_t i = 0; i < d_in; ++i) {
                for (int64_t r = 0; r < rows; ++r) {
                    tile_t[i * rows + r] = tile[r * d_in + i];
                }
            }
            const size_t part = ggml_row_size(wt->type, rows);
            ggml_quantize_chunk(wt->type, tile_t, pieces, 0, d_in, rows, NULL);
            const size_t offset = (size_t) (j0 / TILE_ROWS) * piece;
            for (int64_t i = 0; i < d_in; ++i) {
                memcpy(wt_out + i * wt_row + offset, pieces + i * part, part);
            }
        }
    }
    free(tile); free(tile_t); free(pieces);
    if (fwd) finish_writing(fwd, fwd_out);
    if (wt) finish_writing(wt, wt_out);
    return TNN_OK;
}

/* The model's fields that hold a matrix of the base a training step
 * multiplies by: the seven projections of every block and the output head. */
static int frozen_matrices(tnn_session * s, struct ggml_tensor **** out) {
    struct tnn_llama * m = &s->model;
    const int n = m->cfg.n_layers * TNN_LORA_SLOTS + 1;
    struct ggml_tensor *** fields = malloc((size_t) n * sizeof(*fields));
    if (fields == NULL) {
        return -1;
    }
    int k = 0;
    for (int32_t l = 0; l < m->cfg.n_layers; ++l) {
        for (int slot = 0; slot < TNN_LORA_SLOTS; ++slot) {
            fields[k++] = tnn_block_weight_field(&m->blocks[l], slot);
        }
    }
    fields[k++] = &m->head;
    *out = fields;
    return k;
}

int tnn_frozen_prepare(tnn_session * s) {
    struct ggml_tensor *** fields = NULL;
    const int n = frozen_matrices(s, &fields);
    if (n < 0) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory");
    }
    struct ggml_init_params ip = {
        .mem_size = (size_t) (2 * n + 1) * ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    s->ctx_frozen = ggml_init(ip);
    s->frozen_pairs = calloc((size_t) n, sizeof(*s->frozen_pairs));
    struct ggml_tensor ** fwd = calloc((size_t) n, sizeof(*fwd));
    if (s->ctx_frozen == NULL || s->frozen_pairs == NULL || fwd == NULL) {
        free(fields); free(fwd);
        return tnn_fail(TNN_ERR_ALLOC, "out of memory");
    }

    /* describe the copies */
    for (int k = 0; k < n; ++k) {
        struct ggml_tensor * w = *fields[k];
        if (!forwards_fast(w->type)) {
            fwd[k] = ggml_new_tensor_2d(s->ctx_frozen, GGML_TYPE_Q8_0, w->ne[0], w->ne[1]);
            ggml_format_name(fwd[k], "%s.q8_0", w->name);
        }
        struct tnn_frozen_pair * p = &s->frozen_pairs[k];
        const enum ggml_type wt_type = transposed_type(w->type, k == n - 1);
        if (transposable(w, wt_type)) {
            p->wt = ggml_new_tensor_2d(s->ctx_frozen, wt_type, w->ne[1], w->ne[0]);
            ggml_format_name(p->wt, "%s.T", w->name);
        }
    }
    s->buf_frozen = ggml_get_first_tensor(s->ctx_frozen) == NULL ? NULL
                  : ggml_backend_alloc_ctx_tensors(s->ctx_frozen, s->backend);
    if (s->buf_frozen == NULL && ggml_get_first_tensor(s->ctx_frozen) != NULL) {
        free(fields); free(fwd);
        return tnn_fail(TNN_ERR_ALLOC, "out of %s memory for the fast copies of the base "
                        "(base_compute = stored needs none)", tnn_backend_name());
    }

    /* fill them, and point the model at the forward copies */
    int status = TNN_OK;
    for (int k = 0; k < n && status == TNN_OK; ++k) {
        struct ggml_tensor ** field = fields[k];
        struct tnn_frozen_pair * p = &s->frozen_pairs[k];
        status = convert(s, *field, fwd[k], p->wt);
        if (fwd[k] != NULL) {
            *field = fwd[k];
        }
        p->w = *field;
    }
    s->n_frozen_pairs = n;
    free(fields);
    free(fwd);
    return status;
}

int tnn_use_transposed_weights(tnn_session * s, struct ggml_cgraph * graph) {
    int rewritten = 0;
    for (int i = 0; i < ggml_graph_n_nodes(graph); ++i) {
        struct ggml_tensor * node = ggml_graph_node(graph, i);
        /* the input gradient of mul_mat(W, x): out_prod(W, transpose(dy)) */
        if (node->op != GGML_OP_OUT_PROD || node->src[1]->op != GGML_OP_TRANSPOSE) {
            continue;
        }
        for (int k = 0; k < s->n_frozen_pairs; ++k) {
            const struct tnn_frozen_pair * p = &s->frozen_pairs[k];
            if (p->wt != NULL && node->src[0] == p->w) {
                /* [d_in, n] = mul_mat(W^T [d_out, d_in], dy [d_out, n]) */
                node->op = GGML_OP_MUL_MAT;
                node->src[0] = p->wt;
                node->src[1] = node->src[1]->src[0];
                ++rewritten;
                break;
            }
        }
    }
    return rewritten;
}
