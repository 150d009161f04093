/* A frozen base's fast copies (made once at realize) and the rewrite of a
 * training graph onto them.
 *
 * Training through a frozen weight W needs two products per step: the
 * forward y = W x and the input gradient dx = W^T dy, which ggml's autodiff
 * writes as out_prod(W, dy^T): a loop that walks W row by row and, for a
 * quantized W, dequantizes as it goes, the slowest part of a LoRA step.
 * tnn_frozen_prepare makes, from the stored bytes of the mapped file, a
 * transposed copy W^T of every matrix (Q8_0; F16 or F32 for such bases and
 * for the output head, see transposed_type), and a Q8_0 forward copy of
 * the quantized types ggml has no fast product for (Q5_1, the K-quants;
 * F32, F16, Q8_0, Q4_0, Q5_0 and, through vendor/patches/0004, Q4_1 forward
 * in the stored type, so the model computes what llama.cpp computes). When the session's CPU kernels have qgemm
 * (cpu/kernels.h), the quantized copies are packed in 16-row panels for it
 * instead: W^T as Q8_0, and W for the forward as stored (Q4_1, Q8_0; Q4_0
 * as the Q4_1 blocks it equals) or requantized to Q8_0.
 *
 * Under base_compute bf16 (toy's precision bf16) each matrix, the head
 * included, gets one bfloat16 copy instead, W as stored rounded to nearest
 * even (2 bytes a weight, against 2.1 for the head's two int8 copies): both
 * products read it through fgemm_bf16, the input gradient as its
 * transpose, with no step per block of 32 (head_loss too). Under
 * base_compute bf16_head the head alone gets its bfloat16 copy and the
 * blocks' matrices their int8 copies: on AVX512-BF16 without AMX the
 * blocks' int8 products outrun bfloat16, the head's two int8 levels do not.
 *
 * tnn_use_fast_copies then rewrites the built training graph, whose nodes
 * stay mul_mat / out_prod for autodiff: the products with packed copies
 * become custom nodes that call qgemm; the other input gradients become
 * mul_mat(W^T, dy), ggml's matmul kernels on every backend. It also owns
 * the CPU kernel nodes' scratch (tnn_grow_scratch). Generation reads the
 * stored matrices, never the panels; TNN_BASE_STORED makes no copies at
 * all (the least memory; graph/stored_products.c then runs the input
 * gradients on fgemm).
 *
 * Every copy is made 32 rows of W at a time, so the only scratch memory is
 * a 32-row tile (and, for a packed copy, the matrix in standard blocks
 * before it is packed). */
#include "models/models.h"
#include "gguf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#endif

/* Rows of W (= 32 values along each row of W^T) per tile. */
#define TILE_ROWS 32

/* Types that forward fast in place: llamafile sgemm has kernels for them. */
static bool forwards_fast(enum ggml_type type) {
    return type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_Q8_0 || type == GGML_TYPE_Q4_0 ||
           type == GGML_TYPE_Q4_1 || type == GGML_TYPE_Q5_0;
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
static enum ggml_type transposed_type(enum ggml_type stored, bool is_head, bool panels) {
    if (is_head && panels && stored != GGML_TYPE_F32) {
        /* packed, with its gradient quantized in two int8 levels (about 15
         * bits per block of 32): F32's agreement at a quarter of the memory */
        return GGML_TYPE_Q8_0;
    }
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
static const char * stored_bytes(const struct tnn_frozen_base * base, const struct ggml_tensor * t) {
    if (t->view_src != NULL) {
        /* a row range of a fused weight (Phi-3's attn_qkv, ffn_up) */
        return stored_bytes(base, t->view_src) + t->view_offs;
    }
    const int64_t i = gguf_find_tensor(base->gguf, t->name);
    return (const char *) base->file.addr + gguf_get_data_offset(base->gguf) +
           gguf_get_tensor_offset(base->gguf, i);
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

/* Write W in fwd_type (or not, fwd_out NULL) and W^T in wt_type (or not)
 * from W's stored bytes, in standard ggml rows. W [d_in, d_out]; W^T
 * [d_out, d_in], d_out a multiple of 32 for Q8_0. */
static int convert(const struct tnn_frozen_base * base, const struct ggml_tensor * w, enum ggml_type fwd_type,
                   char * fwd_out, enum ggml_type wt_type, char * wt_out) {
    const int64_t d_in = w->ne[0], d_out = w->ne[1];
    const struct ggml_type_traits * traits = ggml_get_type_traits(w->type);
    const size_t w_row = ggml_row_size(w->type, d_in);
    const char * src = stored_bytes(base, w);

    float * tile = malloc((size_t) TILE_ROWS * d_in * sizeof(float));     /* [TILE_ROWS][d_in] */
    float * tile_t = malloc((size_t) d_in * TILE_ROWS * sizeof(float));   /* [d_in][TILE_ROWS] */
    const size_t piece = wt_out ? ggml_row_size(wt_type, TILE_ROWS) : 0;  /* a tile's part of a W^T row */
    char * pieces = malloc((size_t) d_in * (piece ? piece : 1));
    if (tile == NULL || tile_t == NULL || pieces == NULL) {
        free(tile);
        free(tile_t);
        free(pieces);
        return tnn_fail(TNN_ERR_ALLOC, "out of memory preparing %s", w->name);
    }
    const size_t wt_row = wt_out ? ggml_row_size(wt_type, d_out) : 0;
    for (int64_t j0 = 0; j0 < d_out; j0 += TILE_ROWS) {
        const int64_t rows = d_out - j0 < TILE_ROWS ? d_out - j0 : TILE_ROWS;
        for (int64_t r = 0; r < rows; ++r) {
            if (w->type == GGML_TYPE_F32) {
                memcpy(tile + r * d_in, src + (j0 + r) * w_row, w_row);
            } else {
                traits->to_float(src + (j0 + r) * w_row, tile + r * d_in, d_in);
            }
        }
        if (fwd_out) {
            ggml_quantize_chunk(fwd_type, tile, fwd_out + j0 * ggml_row_size(fwd_type, d_in), 0, rows, d_in, NULL);
        }
        if (wt_out) {
            /* rows j0..j0+rows of W are a piece of every row of W^T (a short
             * last piece only for F16 and F32, see transposable) */
            for (int64_t i = 0; i < d_in; ++i) {
                for (int64_t r = 0; r < rows; ++r) {
                    tile_t[i * rows + r] = tile[r * d_in + i];
                }
            }
            const size_t part = ggml_row_size(wt_type, rows);
            ggml_quantize_chunk(wt_type, tile_t, pieces, 0, d_in, rows, NULL);
            const size_t offset = (size_t) (j0 / TILE_ROWS) * piece;
            for (int64_t i = 0; i < d_in; ++i) {
                memcpy(wt_out + i * wt_row + offset, pieces + i * part, part);
            }
        }
    }
    free(tile);
    free(tile_t);
    free(pieces);
    return TNN_OK;
}

/* Pack a matrix in standard Q8_0 / Q4_1 rows into 16-row panels in dst. */
static void pack_panels(enum ggml_type type, const char * rows, int64_t k, int64_t n_rows, char * dst) {
    const enum tnn_qpanel_format format = type == GGML_TYPE_Q4_1 ? TNN_QPANEL_Q4_1 : TNN_QPANEL_Q8_0;
    const size_t row_bytes = ggml_row_size(type, k);
    for (int64_t r0 = 0; r0 < n_rows; r0 += TNN_QPANEL_ROWS) {
        tnn_qpanel_pack(format, rows + r0 * row_bytes, row_bytes, k, r0, dst);
    }
}

/* Whether the packed kernels can multiply by a [k, n_rows] matrix. */
static bool packable(int64_t k, int64_t n_rows) { return k % TNN_QBLOCK == 0 && n_rows % TNN_QPANEL_ROWS == 0; }

/* Fill a frozen pair's copies from W's stored bytes; fwd: a standard Q8_0
 * forward copy of a slow type (no panels), or NULL. */
static int fill_copies(const struct tnn_frozen_base * base, const struct ggml_tensor * w, struct ggml_tensor * fwd,
                       const struct tnn_frozen_pair * p) {
    const int64_t d_in = w->ne[0], d_out = w->ne[1];
    char * fwd_out = fwd ? writable(fwd) : NULL;
    char * panels_out = p->w_panels ? writable(p->w_panels) : NULL;
    /* a packed W^T is written in standard rows first, then packed */
    char * wt_out = p->wt == NULL ? NULL : p->wt_panels ? malloc(ggml_nbytes(p->wt)) : writable(p->wt);
    /* a panel copy of a type other than the stored one likewise: Q4_0
     * rewritten block by block, others requantized */
    const bool retyped = p->w_panels && p->w_panels->type != w->type;
    const bool from_q4_0 = retyped && w->type == GGML_TYPE_Q4_0;
    char * fwd_rows = retyped ? malloc(ggml_nbytes(p->w_panels)) : NULL;
    int status = TNN_OK;
    if ((fwd && !fwd_out) || (p->w_panels && !panels_out) || (p->wt && !wt_out) || (retyped && !fwd_rows)) {
        status = tnn_fail(TNN_ERR_ALLOC, "out of memory preparing %s", w->name);
    } else {
        const bool requantize = retyped && !from_q4_0;
        status = convert(base, w,
                         fwd          ? fwd->type
                         : requantize ? p->w_panels->type
                                      : GGML_TYPE_COUNT,
                         fwd          ? fwd_out
                         : requantize ? fwd_rows
                                      : NULL,
                         p->wt ? p->wt->type : GGML_TYPE_COUNT, wt_out);
    }
    if (status == TNN_OK && from_q4_0) {
        tnn_q4_0_as_q4_1(stored_bytes(base, w), ggml_nelements(w) / TNN_QBLOCK, fwd_rows);
    }
    if (status == TNN_OK && p->w_panels) {
        pack_panels(p->w_panels->type, retyped ? fwd_rows : stored_bytes(base, w), d_in, d_out, panels_out);
    }
    if (status == TNN_OK && p->wt_panels) {
        char * packed = writable(p->wt);
        if (packed == NULL) {
            status = tnn_fail(TNN_ERR_ALLOC, "out of memory preparing %s", w->name);
        } else {
            pack_panels(p->wt->type, wt_out, d_out, d_in, packed);
            finish_writing(p->wt, packed);
        }
        free(wt_out);
        wt_out = NULL;
    }
    free(fwd_rows);
    if (fwd_out) finish_writing(fwd, fwd_out);
    if (panels_out) finish_writing(p->w_panels, panels_out);
    if (wt_out) finish_writing(p->wt, wt_out);
    return status;
}

/* Fill W's bfloat16 copy (base_compute bf16) from its stored bytes, a row
 * at a time through float32, rounded to nearest even; in tiles, laid out by
 * the kernels' fgemm_bf16_tiles. */
static int fill_bf16(const struct tnn_frozen_base * base, const struct tnn_cpu_kernels * kernels,
                     const struct ggml_tensor * w, const struct tnn_frozen_pair * p) {
    const int64_t d_in = w->ne[0], d_out = w->ne[1];
    const struct ggml_type_traits * traits = ggml_get_type_traits(w->type);
    const size_t w_row = ggml_row_size(w->type, d_in);
    const char * src = stored_bytes(base, w);
    ggml_bf16_t * out = writable(p->w_bf16);
    float * row = malloc((size_t) d_in * sizeof(float));
    /* in tiles: a panel of TILE_ROWS rows rounded here first */
    ggml_bf16_t * panel = p->w_bf16_tiles ? malloc((size_t) TILE_ROWS * d_in * sizeof(ggml_bf16_t)) : NULL;
    if (out == NULL || row == NULL || (p->w_bf16_tiles && panel == NULL)) {
        free(row);
        free(panel);
        if (out != NULL && (void *) out != p->w_bf16->data) free(out);
        return tnn_fail(TNN_ERR_ALLOC, "out of memory preparing %s", w->name);
    }
    for (int64_t r = 0; r < d_out; ++r) {
        if (w->type == GGML_TYPE_F32) {
            memcpy(row, src + r * w_row, w_row);
        } else {
            traits->to_float(src + r * w_row, row, d_in);
        }
        if (!p->w_bf16_tiles) {
            ggml_fp32_to_bf16_row_ref(row, out + r * d_in, d_in);
            continue;
        }
        ggml_fp32_to_bf16_row_ref(row, panel + r % TILE_ROWS * d_in, d_in);
        if (r % TILE_ROWS == TILE_ROWS - 1) {
            kernels->fgemm_bf16_tiles((const uint16_t *) panel, d_in,
                                      (uint16_t *) (out + (r - (TILE_ROWS - 1)) * d_in));
        }
    }
    free(row);
    free(panel);
    finish_writing(p->w_bf16, out);
    return TNN_OK;
}

/* A training step reads the panels, not the stored matrix they were made
 * from: let the kernel drop those pages of the mapped file from memory
 * (generation, or anything else that reads them, faults them back in).
 * Done as each copy is made, so that the file and all its copies are never
 * in memory at once. */
static void release_packed_original(const struct tnn_frozen_base * base, const struct tnn_frozen_pair * p) {
#if defined(__unix__) || defined(__APPLE__)
    if ((p->w_panels == NULL && p->w_bf16 == NULL) || p->w->data == NULL) {
        return;
    }
    const uintptr_t page = (uintptr_t) sysconf(_SC_PAGESIZE);
    const uintptr_t begin = (uintptr_t) stored_bytes(base, p->w);
    const uintptr_t end = begin + ggml_nbytes(p->w);
    const uintptr_t first = (begin + page - 1) / page * page, last = end / page * page;
    if (last > first) {
        madvise((void *) first, last - first, MADV_DONTNEED);
    }
#else
    (void) base;
    (void) p;
#endif
}

/* A measuring session's copies: counted, not made; the model points at the
 * descriptors as after tnn_frozen_prepare. Frees fields and fwd. */
static int measure_copies(struct tnn_frozen_base * base, const struct tnn_llama * m,
                          const struct tnn_base_placement * place, struct ggml_tensor *** fields,
                          struct ggml_tensor ** fwd, int n) {
    place->measure->copies = (int64_t) tnn_ctx_alloc_bytes(base->ctx_copies, place->backend);
    tnn_pretend_allocated(base->ctx_copies);
    for (int k = 0; k < n; ++k) {
        struct tnn_frozen_pair * p = &base->pairs[k];
        /* release_packed_originals' pages; the embedding's rows are read again */
        if ((p->w_panels != NULL || p->w_bf16 != NULL) && *fields[k] != m->token_embd) {
            place->measure->released += (int64_t) ggml_nbytes(*fields[k]);
        }
        if (fwd[k] != NULL) {
            *fields[k] = fwd[k];
        }
        p->w = *fields[k];
    }
    base->n_pairs = n;
    free(fields);
    free(fwd);
    return TNN_OK;
}

/* The model's fields that hold a matrix of the base a training step
 * multiplies by: the projections of every block (the seven of an attention
 * layer, a short-convolution layer's in and out and its three of the
 * feed-forward) and the output head. */
static int frozen_matrices(struct tnn_llama * m, struct ggml_tensor **** out) {
    const int n = m->cfg->n_layers * TNN_LORA_SLOTS + 1;
    struct ggml_tensor *** fields = malloc((size_t) n * sizeof(*fields));
    if (fields == NULL) {
        return -1;
    }
    int k = 0;
    for (int32_t l = 0; l < m->cfg->n_layers; ++l) {
        /* a mixture's experts stay as stored: MUL_MAT_ID multiplies them so */
        for (int slot = 0; slot < TNN_LORA_SLOTS; ++slot) {
            struct ggml_tensor ** field = tnn_block_weight_field(&m->blocks[l], slot);
            if (*field != NULL && !tnn_lora_slot_experts(slot)) { /* a layer of another kind has none (LFM2's) */
                fields[k++] = field;
            }
        }
    }
    fields[k++] = &m->head;
    *out = fields;
    return k;
}

int tnn_frozen_prepare(struct tnn_frozen_base * base, struct tnn_llama * llama,
                       const struct tnn_base_placement * place, enum tnn_base_compute compute) {
    const struct tnn_cpu_kernels * kernels = place->kernels;
    const bool head_bf16 = compute == TNN_BASE_BF16 || compute == TNN_BASE_BF16_HEAD;
    if (head_bf16 && kernels->fgemm_bf16 == NULL) {
        return tnn_fail(TNN_ERR_ARG,
                        "precision bf16 needs bfloat16 products, which the %s backend and this CPU do not "
                        "have (" TNN_FGEMM_BF16_NEEDS "); use f32",
                        tnn_backend_name());
    }
    struct ggml_tensor *** fields = NULL;
    const int n = frozen_matrices(llama, &fields);
    if (n < 0) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory");
    }
    struct ggml_init_params ip = {
        .mem_size = (size_t) (3 * n + 1) * ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    base->ctx_copies = ggml_init(ip);
    base->pairs = calloc((size_t) n, sizeof(*base->pairs));
    struct ggml_tensor ** fwd = calloc((size_t) n, sizeof(*fwd));
    if (base->ctx_copies == NULL || base->pairs == NULL || fwd == NULL) {
        free(fields);
        free(fwd);
        return tnn_fail(TNN_ERR_ALLOC, "out of memory");
    }
    /* panels only for a session whose backend runs qgemm (tnn_realize chose) */
    const bool panels = kernels->qgemm != NULL;

    /* describe the copies */
    for (int k = 0; k < n; ++k) {
        struct ggml_tensor * w = *fields[k];
        struct tnn_frozen_pair * p = &base->pairs[k];
        const bool is_head = k == n - 1;
        if (compute == TNN_BASE_STORED && !is_head) {
            continue; /* read as stored: products from the stored blocks (stored_panels.c) */
        }
        if (compute == TNN_BASE_BF16 || (head_bf16 && is_head)) {
            p->w_bf16 = ggml_new_tensor_2d(base->ctx_copies, GGML_TYPE_BF16, w->ne[0], w->ne[1]);
            ggml_format_name(p->w_bf16, "%s.bf16", w->name);
            /* the blocks' matrices in the amx kernel's tiles, where they come in
             * whole panels; the head's rows are also read one at a time (layout.c) */
            p->w_bf16_tiles = kernels->fgemm_bf16_tiles != NULL && !is_head && w->ne[0] % TILE_ROWS == 0 &&
                              w->ne[1] % TILE_ROWS == 0;
            continue;
        }
        const enum ggml_type fwd_panel_type = tnn_panel_type(w->type);
        if (panels && fwd_panel_type != GGML_TYPE_COUNT && packable(w->ne[0], w->ne[1])) {
            p->w_panels = ggml_new_tensor_2d(base->ctx_copies, fwd_panel_type, w->ne[0], w->ne[1]);
            ggml_format_name(p->w_panels, "%s.panels", w->name);
        } else if (!forwards_fast(w->type)) {
            fwd[k] = ggml_new_tensor_2d(base->ctx_copies, GGML_TYPE_Q8_0, w->ne[0], w->ne[1]);
            ggml_format_name(fwd[k], "%s.q8_0", w->name);
        }
        enum ggml_type wt_type = transposed_type(w->type, is_head, panels && packable(w->ne[1], w->ne[0]));
        if (transposable(w, wt_type)) {
            p->wt = ggml_new_tensor_2d(base->ctx_copies, wt_type, w->ne[1], w->ne[0]);
            p->wt_panels = panels && wt_type == GGML_TYPE_Q8_0 && packable(w->ne[1], w->ne[0]);
            p->wt_levels = is_head ? 2 : 1;
            ggml_format_name(p->wt, p->wt_panels ? "%s.T.panels" : "%s.T", w->name);
        }
    }
    if (place->measure->on) {
        return measure_copies(base, llama, place, fields, fwd, n);
    }
    base->buf_copies = ggml_get_first_tensor(base->ctx_copies) == NULL
                           ? NULL
                           : ggml_backend_alloc_ctx_tensors(base->ctx_copies, place->backend);
    if (base->buf_copies == NULL && ggml_get_first_tensor(base->ctx_copies) != NULL) {
        free(fields);
        free(fwd);
        return tnn_fail(TNN_ERR_ALLOC,
                        "out of %s memory for the fast copies of the base "
                        "(base_compute = stored needs none)",
                        tnn_backend_name());
    }

    /* fill them, and point the model at the standard forward copies */
    int status = TNN_OK;
    for (int k = 0; k < n && status == TNN_OK; ++k) {
        struct ggml_tensor ** field = fields[k];
        struct tnn_frozen_pair * p = &base->pairs[k];
        const bool copied = p->w_bf16 || p->w_panels || p->wt || fwd[k];
        status = !copied     ? TNN_OK
                 : p->w_bf16 ? fill_bf16(base, kernels, *field, p)
                             : fill_copies(base, *field, fwd[k], p);
        if (fwd[k] != NULL) {
            *field = fwd[k];
        }
        p->w = *field;
        if (status == TNN_OK) {
            release_packed_original(base, p);
        }
    }
    base->n_pairs = n;
    free(fields);
    free(fwd);
    return status;
}
