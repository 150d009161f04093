/* Memory layouts that the variants of a kernel share, private to
 * tinynn/cpu/ (kernels.c sizes scratch from them, the variants fill it). */
#ifndef TINYNN_CPU_LAYOUT_H
#define TINYNN_CPU_LAYOUT_H

#include "kernels.h"

#include <string.h>

/* qgemm's scratch: a column block, 32 values in two int8 levels,
 * x ~ d (q + r / 128): q as ggml quantizes activations for Q8_0 and Q8_1
 * (d = max|x| / 127, q = round(x / d)), and r = round(128 (x / d - q)),
 * the remainder to 1/256 of a step. One level alone leaves each product
 * 0.4% off, which thirty layers turn into logits visibly off the float
 * model; two make the products those of the float activations to about 15
 * bits. Precomputed for the kernels: d * sum(x / d) for Q4_1's minimums,
 * and -128 sum(q), -128 sum(r), which cancel Q8_0's +128 offset. */
struct tnn_qcol {
    float d;
    float ds;
    int32_t neg128s;
    int32_t neg128s_r;
    int8_t q[TNN_QBLOCK];
    int8_t r[TNN_QBLOCK];
};

/* A thread's share of a qgemm of n columns by n_panels panels: columns
 * [c0, c1) of panels [p0, p1). The columns are split, by whole tiles of
 * tile columns, when each thread gets one (each thread quantizes only its
 * own); else the panels, every thread quantizing all columns. A matrix
 * packed as it is read (align > 0) splits its panels, in multiples of
 * align, so that each thread packs only its own. No thread waits for
 * another either way, and each output is one thread's. */
static inline void tnn_qgemm_share(int64_t n, int64_t n_panels, int64_t tile, int64_t align, int ith, int nth,
                                   int64_t * c0, int64_t * c1, int64_t * p0, int64_t * p1) {
    *c0 = 0, *c1 = n, *p0 = 0, *p1 = n_panels;
    if (align > 0) {
        const int64_t groups = n_panels / align;
        *p0 = groups * ith / nth * align;
        *p1 = ith == nth - 1 ? n_panels : groups * (ith + 1) / nth * align;
    } else if (n >= (int64_t) nth * tile) {
        const int64_t tiles = (n + tile - 1) / tile;
        *c0 = tiles * ith / nth * tile;
        *c1 = tiles * (ith + 1) / nth * tile;
        *c1 = *c1 < n ? *c1 : n;
    } else {
        *p0 = n_panels * ith / nth;
        *p1 = n_panels * (ith + 1) / nth;
    }
}

/* qgemm_avx512.c's parts, which the amx variant reuses for what its tiles
 * leave: one column quantized (kb blocks of x into out), and the product of
 * n quantized columns (column c's blocks at cols + c * kb) by n_panels
 * consecutive panels at panels into y (column c at y + c * y_stride, row 0
 * of the first panel first). */
void tnn_qgemm_avx512_quantize(const float * x, int64_t kb, struct tnn_qcol * out);
void tnn_qgemm_avx512_panels(int format, int levels, const uint8_t * panels, int64_t kb, int64_t n_panels,
                             const struct tnn_qcol * cols, int64_t n, float * y, int64_t y_stride);

/* Columns [c0, c1) of x quantized, column c's kb blocks at the result +
 * (c - c0) * kb: x's own where it comes quantized, else quantized here
 * into the scratch's start (tnn_qgemm_layout) by the variant's
 * quantize_column. */
static inline const struct tnn_qcol * tnn_qgemm_columns_quantized(
    const struct tnn_qgemm_columns * x, int64_t kb, int64_t c0, int64_t c1,
    void (*quantize_column)(const float * x, int64_t kb, struct tnn_qcol * out), void * scratch) {
    if (x->quantized != NULL) {
        return x->quantized + c0 * kb;
    }
    struct tnn_qcol * q = scratch;
    for (int64_t c = c0; c < c1; ++c) {
        quantize_column(x->floats + c * x->stride, kb, q + (c - c0) * kb);
    }
    return q;
}

/* A quantized column block's scalars from its max |x| and the sums of its
 * two int8 levels: every variant's quantize_column ends here, so that all
 * give the same bits. */
static inline void tnn_qcol_finish(struct tnn_qcol * out, float amax, int32_t sq, int32_t sr) {
    out->d = amax / 127.0f;
    out->ds = out->d * ((float) sq + (float) sr / 128.0f);
    out->neg128s = -128 * sq;
    out->neg128s_r = -128 * sr;
}

/* 4 int8 values as one int32, for a broadcast. */
static inline int32_t tnn_load4(const int8_t * p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline size_t tnn_align64(size_t bytes) { return (bytes + 63) / 64 * 64; }

/* The amx variant reads a panel block with a byte a value: 8 groups of
 * [16 rows][4 values]. qgemm's scratch has room for one panel so spread
 * (tnn_qgemm_layout). */
#define TNN_QAMX_BLOCK_BYTES (TNN_QBLOCK / 4 * TNN_QPANEL_ROWS * 4)

/* The avx2 variant's levels = 2 reads a panel block as int16, two bytes a
 * value (qgemm_avx2.c), and each column block as 32 int16 128 q + r. */
#define TNN_QSPREAD_BLOCK_BYTES (TNN_QBLOCK * TNN_QPANEL_ROWS * 2)
#define TNN_QX16_BLOCK_BYTES (TNN_QBLOCK * 2)

/* qgemm's scratch (tnn_qgemm_scratch_bytes), by byte offset: the n
 * quantized columns (kb struct tnn_qcol each) from 0 unless x comes
 * quantized, then room for one spread panel (kb * TNN_QSPREAD_BLOCK_BYTES:
 * the amx variant uses the first TNN_QAMX_BLOCK_BYTES a block of it, avx2
 * all), then the n columns as int16 (kb * TNN_QX16_BLOCK_BYTES each; avx2
 * at levels = 2 only). */
struct tnn_qgemm_layout {
    size_t spread, x16, total;
};

static inline struct tnn_qgemm_layout tnn_qgemm_layout(int64_t k, int64_t n, bool quantized) {
    const size_t kb = (size_t) (k / TNN_QBLOCK);
    struct tnn_qgemm_layout l;
    l.spread = quantized ? 0 : tnn_align64(kb * (size_t) n * sizeof(struct tnn_qcol));
    l.x16 = l.spread + kb * TNN_QSPREAD_BLOCK_BYTES;
    l.total = l.x16 + kb * (size_t) n * TNN_QX16_BLOCK_BYTES;
    return l;
}

/* Panels a pass of qgemm goes over (every column tile reads them): about
 * 256 KB of a packed matrix, which stays in L2; a matrix packed as it is
 * read says its own. */
static inline int64_t tnn_qpanels_pass(const struct tnn_qpanels * a, size_t panel_bytes) {
    if (a->pack != NULL) {
        return a->pass;
    }
    const int64_t n = (int64_t) ((256 << 10) / (panel_bytes ? panel_bytes : 1));
    return n > 0 ? n : 1;
}

/* Panels [p0, p1) of a (one pass), ready to read: in place, or packed into
 * the room after qgemm's own scratch (tnn_qgemm_scratch_bytes). */
static inline const uint8_t * tnn_qpanels_get(const struct tnn_qpanels * a, int64_t p0, int64_t p1, int64_t k,
                                              const struct tnn_qgemm_layout * l, void * scratch) {
    const size_t panel_bytes = (size_t) (k / TNN_QBLOCK) * tnn_qpanel_block_bytes(a->format);
    if (a->pack == NULL) {
        return (const uint8_t *) a->packed + (size_t) p0 * panel_bytes;
    }
    uint8_t * room = (uint8_t *) scratch + tnn_align64(l->total);
    a->pack(a, p0, p1, room, room + tnn_align64((size_t) a->pass * panel_bytes));
    return room;
}

/* head_loss's scratch, by byte offset: the products' own (qgemm's quantized
 * columns for either product, or fgemm_bf16's), then z [rows, chunk], the
 * gathered h [d, chunk] and their dL/dh [d, chunk]; chunk:
 * TNN_HEAD_LOSS_CHUNK, or TNN_HEAD_LOSS_CHUNK_BF16 with bfloat16 products.
 * z holds all vocab rows of the logits, or with bfloat16 products one
 * block of TNN_HEAD_LOSS_BLOCK_BF16 rows; then dh is the running sum
 * W^T e, and part [d, chunk] and the per-token running max, sum and
 * block factors (struct tnn_head_loss_token) follow it. */
struct tnn_head_loss_layout {
    int64_t chunk, rows;
    size_t z, h, dh, part, tokens, total;
};

/* One token's running state in the bfloat16 walk (layout.c). */
struct tnn_head_loss_token {
    double sum;          /* sum of exp(z - max) over the blocks so far */
    float max, z_label;  /* the largest logit so far; the label's logit */
    float old_scale, block_scale;   /* the last block's factors (layout.c) */
};

static inline struct tnn_head_loss_layout tnn_head_loss_layout(int64_t d, int64_t vocab, bool bf16) {
    const int64_t c = bf16 ? TNN_HEAD_LOSS_CHUNK_BF16 : TNN_HEAD_LOSS_CHUNK;
    const size_t q_d = tnn_qgemm_scratch_bytes(NULL, d, c, false),
                 q_v = tnn_qgemm_scratch_bytes(NULL, vocab, c, false);
    const size_t q = bf16 ? tnn_fgemm_bf16_scratch_bytes() : q_d > q_v ? q_d : q_v;
    const size_t dc = tnn_align64((size_t) d * c * sizeof(float));
    struct tnn_head_loss_layout l;
    l.chunk = c;
    l.rows = bf16 && vocab > TNN_HEAD_LOSS_BLOCK_BF16 ? TNN_HEAD_LOSS_BLOCK_BF16 : vocab;
    l.z = tnn_align64(q);
    l.h = l.z + tnn_align64((size_t) l.rows * c * sizeof(float));
    l.dh = l.h + dc;
    l.part = l.dh + dc;
    l.tokens = l.part + (bf16 ? dc : 0);
    l.total = l.tokens + (bf16 ? tnn_align64((size_t) c * sizeof(struct tnn_head_loss_token)) : 0);
    return l;
}

/* ---- what the variants of fgemm and head_loss share (kernels.c) ---------- */

/* panel[kk][r] = A[m0 + r, k0 + kk] for r < rows (of TNN_FGEMM_ROWS), 0 past
 * them: the panel fgemm's tiles read. */
void tnn_fgemm_pack_panel(struct tnn_fgemm_operand a, int64_t m0, int64_t rows, int64_t k0, int64_t depth,
                          float * panel);

/* One token of head_loss: z (its logits) becomes the gradient of the mean
 * loss over n tokens, (softmax(z) - onehot(label)) / n; returns its loss. */
typedef float (*tnn_softmax_gradient_fn)(float * z, int64_t vocab, int32_t label, float inv_n);

/* One token's logits z [len]: e = exp(z - max z) (e may be z) and *sum
 * their sum, in the variant's lanes 256 values at a time, those sums in a
 * double; returns max z. */
typedef float (*tnn_exponentials_fn)(const float * z, int64_t len, float * e, double * sum);

/* A head_loss variant's own pieces for the walk. */
struct tnn_softmax_fns {
    tnn_softmax_gradient_fn gradient;
    tnn_exponentials_fn exponentials;
};

/* head_loss over tokens [t0, t1) (kernels.h): gathers up to a chunk of
 * labelled tokens (a masked one is done at once), then with the int8
 * products their logits, each token's loss and gradient, then dL/dh =
 * W^T dz through them again; with bfloat16 products both products a block
 * of the vocabulary at a time (layout.c). */
void tnn_head_loss_walk(const struct tnn_softmax_fns * fns, const struct tnn_head_products * products, int64_t d,
                        int64_t vocab, const float * h, int64_t h_stride, const int32_t * labels, int64_t n,
                        int64_t t0, int64_t t1, float * out, void * scratch);

/* ---- AMX tiles (qgemm_amx.c, fgemm_bf16_amx.c) --------------------------- */

/* ldtilecfg's 64-byte operand (palette 1): rows and bytes per row of each
 * of the 8 tiles. */
struct tnn_amx_tile_config {
    uint8_t palette;
    uint8_t start_row;
    uint8_t reserved[14];
    uint16_t bytes_per_row[16];
    uint8_t rows[16];
};

/* ---- bfloat16 pairs and AMX tiles (fgemm_bf16_*.c, attention_bf16.c) ---- */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* Loads a tile configuration for this thread with all eight tiles 16 rows
 * of 64 bytes (16 floats, or 32 bfloat16s): what fgemm_bf16_amx.c and
 * attention_bf16.c multiply with. */
__attribute__((target("amx-tile"))) static inline void tnn_amx_configure_full_tiles(void) {
    struct tnn_amx_tile_config config;
    memset(&config, 0, sizeof config);
    config.palette = 1;
    for (int t = 0; t < 8; ++t) {
        config.rows[t] = 16;
        config.bytes_per_row[t] = 64;
    }
    _tile_loadconfig(&config);
}

/* e^x for 16 floats: 2^k e^r with k = round(x / ln 2), r = x - k ln 2 in
 * [-0.35, 0.35] (ln 2 in two parts), e^r by its Taylor series to r^7 / 7!
 * (under 2e-8 relative), 2^k by scalef, which underflows to 0 for x far
 * below 0 (the softmax's z - max <= 0) and overflows to infinity far above.
 * head_loss's softmax and the activations kernels' sigmoid. */
__attribute__((target("avx512f"))) static inline __m512 tnn_exp16(__m512 x) {
    const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693145752f), x);
    r = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.42860677e-6f), r);
    __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, k);
}

/* The 16 x 16 32-bit words r[i] lane j transposed in place: r[j] lane i.
 * Four rounds of shuffles: words, then pairs of words, within 128-bit
 * lanes, then lanes across registers. */
__attribute__((target("avx512f"))) static inline void tnn_transpose16_epi32(__m512i * r) {
    __m512i a[16], b[16];
    for (int i = 0; i < 8; ++i) {
        a[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    /* b[4 i + c], lane L: word 4 L + c of rows 4 i .. 4 i + 3 */
    for (int i = 0; i < 4; ++i) {
        b[4 * i + 0] = _mm512_unpacklo_epi64(a[4 * i], a[4 * i + 2]);
        b[4 * i + 1] = _mm512_unpackhi_epi64(a[4 * i], a[4 * i + 2]);
        b[4 * i + 2] = _mm512_unpacklo_epi64(a[4 * i + 1], a[4 * i + 3]);
        b[4 * i + 3] = _mm512_unpackhi_epi64(a[4 * i + 1], a[4 * i + 3]);
    }
    for (int c = 0; c < 4; ++c) {
        const __m512i u0 = _mm512_shuffle_i32x4(b[c], b[4 + c], 0x44),
                      u1 = _mm512_shuffle_i32x4(b[c], b[4 + c], 0xee);
        const __m512i v0 = _mm512_shuffle_i32x4(b[8 + c], b[12 + c], 0x44);
        const __m512i v1 = _mm512_shuffle_i32x4(b[8 + c], b[12 + c], 0xee);
        r[0 + c] = _mm512_shuffle_i32x4(u0, v0, 0x88);
        r[4 + c] = _mm512_shuffle_i32x4(u0, v0, 0xdd);
        r[8 + c] = _mm512_shuffle_i32x4(u1, v1, 0x88);
        r[12 + c] = _mm512_shuffle_i32x4(u1, v1, 0xdd);
    }
}

/* The 16 values of an operand (kernels.h) at offset, fewer where mask
 * says, as bfloat16 words in the low halves of 32-bit lanes: rounded from
 * float32 (nearest, ties to even), or as stored when it is in bfloat16. */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) static inline __m512i tnn_bf16_words16(
    struct tnn_fgemm_operand x, int64_t offset, __mmask16 mask) {
    if (x.bf16 != NULL) {
        return _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, x.bf16 + offset));
    }
    return _mm512_cvtepu16_epi32((__m256i) _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(mask, x.data + offset)));
}

/* The 32 consecutive values of an operand from offset (the first 16 where
 * lo says, the next where hi says) as 32 bfloat16 words in order: 16
 * pairs, the even value in each pair's low half. */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) static inline __m512i tnn_bf16_words32(
    struct tnn_fgemm_operand x, int64_t offset, __mmask16 lo, __mmask16 hi) {
    if (x.bf16 != NULL) {
        return _mm512_maskz_loadu_epi16((__mmask32) lo | (__mmask32) hi << 16, x.bf16 + offset);
    }
    return (__m512i) _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(hi, x.data + offset + 16),
                                         _mm512_maskz_loadu_ps(lo, x.data + offset));
}
#endif

#endif
