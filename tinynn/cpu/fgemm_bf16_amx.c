/* fgemm_bf16 on the AMX-BF16 tiles (kernels.h): float32 products with
 * their operands rounded to bfloat16, summed in float32.
 *
 * The product is taken transposed, C^T = B A^T, so that a tile of sums is
 * 16 columns of C by 16 of its rows, each tile row 16 consecutive floats of
 * one column of C, as C lies. Per 1024-deep slice of k:
 *   - up to 1024 columns of B are rounded into tiles of [16 columns][32]
 *     (the tile product's first operand), once for all the call's panels;
 *   - per group of 16 panels, each panel of 32 rows of A is rounded into
 *     two tiles' worth of pairs, [k / 2][16 rows][2] (its second);
 *   - 2 x 2 tiles of sums run over the slice 32 values of k at a time, four
 *     tile products per step, and go back to C, which carries the sums from
 *     one slice to the next.
 * B rounded once a slice, not once a group and slice as before: the 1 B
 * model's products (2048-8192 rows, 2048-8192 deep, 1024 tokens) ran 5-15%
 * faster on two threads with operands from memory (the same bits: each sum
 * still runs over k in order). Where all of B fits in that room (the head's
 * blocks: up to 512 tokens of d <= 2048), it is rounded once for every
 * slice, and each group runs over all slices, so that its part of C stays
 * in cache.
 * The slice is 1024 deep, not fgemm's 256, because C's traffic was what
 * held the tiles back: a 256-deep slice loads and stores each 32 x 32
 * block of C for every 32 tile products, from beyond L2 once C passes 2 MB
 * (1024 tokens of a 512-row group); 1024 deep, with B's tiles each in one
 * piece (below), the 1 B model's products at 1024 tokens ran 1.4-1.6x as
 * fast, the same bits (the slices' sums go through C exactly).
 * Float32 sums of bfloat16 products, in the tile unit's order: the result
 * is not the float32 product's bits (that is what --precision bf16 opts
 * into), nor the avx512 variant's in-order sum (measured on a Sapphire
 * Rapids Xeon: a few ulps apart; neither an in-order, a pairwise nor an
 * exact sum per tile product matched the tiles' bits), but the same bits
 * for any thread count.
 *
 * Linux hands out the tile registers only to a process that asked (kernels.c
 * asks, once, before it reports AMX). Each call loads the tile
 * configuration on entry and releases the tiles on leaving. */
#include "kernels.h"
#include "layout.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define AMX __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl,avx512bf16,fma")))

#define KC TNN_FGEMM_BF16_AMX_DEPTH
#define GP TNN_FGEMM_BF16_PANELS
#define COLS TNN_FGEMM_BF16_AMX_COLUMNS
#define HALF 16            /* rows of A, or columns of B, per tile */
#define STEP 32            /* values of k per tile product */
#define TILE_VALUES (HALF * STEP)   /* bfloat16 in one tile */

/* Tiles: sums (columns group g, rows half h) at 2 g + h; B's two column
 * groups; A's two halves. */
#define C00 0
#define C01 1
#define C10 2
#define C11 3
#define BCOLS0 4
#define BCOLS1 5
#define AROWS0 6
#define AROWS1 7

/* Round 16 floats to bfloat16 (nearest, ties to even). */
AMX static inline __m256i round16(__m512 v) { return (__m256i) _mm512_cvtneps_pbh(v); }

/* The panel of rows [m0, m0 + rows) of A over k [k0, k0 + depth) as pairs:
 * for each half (rows 0..15, 16..31), steps * 16 pair rows of 16 rows x
 * (k, k + 1) in bfloat16, as one 32-bit word each; zeros past rows and
 * past depth (up to steps * 32). A row of A lies along k: 32 of its values
 * make one register of 16 pairs, and 16 rows' registers transposed make the
 * 16 pair rows of one tile. A read by_k lies along the rows: 16 rows at one
 * k are one load. */
AMX static void pack_rows(struct tnn_fgemm_operand a, int64_t m0, int64_t rows, int64_t k0, int64_t depth,
                          int64_t steps, uint16_t * out) {
    uint32_t * pairs = (uint32_t *) out;
    for (int h = 0; h < 2; ++h) {
        const int64_t r0 = m0 + h * HALF, left = rows - h * HALF;
        const __mmask16 mask = left >= HALF ? 0xffff : left <= 0 ? 0 : (__mmask16) ((1u << left) - 1);
        uint32_t * half = pairs + (size_t) h * steps * STEP / 2 * HALF;
        if (a.by_k) {
            for (int64_t q = 0; q < steps * STEP / 2; ++q) {
                const int64_t kk = 2 * q;
                const __m512i lo = kk < depth ? tnn_bf16_words16(a, (k0 + kk) * a.ld + r0, mask)
                                              : _mm512_setzero_si512();
                const __m512i hi = kk + 1 < depth ? tnn_bf16_words16(a, (k0 + kk + 1) * a.ld + r0, mask)
                                                  : _mm512_setzero_si512();
                _mm512_storeu_si512(half + q * HALF, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
            }
            continue;
        }
        for (int64_t s = 0; s < steps; ++s) {
            const int64_t kk = s * STEP;
            const __mmask16 lo_k = depth - kk >= 16  ? 0xffff
                                   : depth - kk <= 0 ? 0
                                                     : (__mmask16) ((1u << (depth - kk)) - 1);
            const __mmask16 hi_k = depth - kk >= 32   ? 0xffff
                                   : depth - kk <= 16 ? 0
                                                      : (__mmask16) ((1u << (depth - kk - 16)) - 1);
            __m512i r[HALF];
            for (int i = 0; i < HALF; ++i) {
                const bool here = (mask >> i) & 1;
                r[i] = here ? tnn_bf16_words32(a, (r0 + i) * a.ld + k0 + kk, lo_k, hi_k) : _mm512_setzero_si512();
            }
            tnn_transpose16_epi32(r);
            for (int j = 0; j < HALF; ++j) {
                _mm512_storeu_si512(half + (s * HALF + j) * HALF, r[j]);
            }
        }
    }
}

/* A frozen matrix's panel, its rows here in bfloat16 (tnn_fgemm_bf16_amx_tiles):
 * for each slice of k, the pairs pack_rows makes of it, one after another. */
AMX void tnn_fgemm_bf16_amx_tiles(const uint16_t * panel_rows, int64_t k, uint16_t * panel_out) {
    const struct tnn_fgemm_operand w = { .ld = k, .bf16 = panel_rows };
    for (int64_t k0 = 0; k0 < k; k0 += KC) {
        const int64_t depth = k - k0 < KC ? k - k0 : KC;
        pack_rows(w, 0, TNN_FGEMM_ROWS, k0, depth, (depth + STEP - 1) / STEP, panel_out + k0 * TNN_FGEMM_ROWS);
    }
}

/* Eight pair rows of a matrix W's tiles (src, 32 words apart: columns
 * c, c + 1 of 16 rows r0.. each, as in pack_rows) as the eight pair rows of
 * W^T's tiles for the same 16 x 16 values (to dst: rows r, r + 1 of 16
 * columns each). Read as 64-bit words, W's pair row q holds (W[r][c],
 * W[r][c + 1], W[r + 1][c], W[r + 1][c + 1]) for r = r0 + 2 j at word j;
 * W^T's pair row j holds the same four, the middle two swapped, at word q:
 * a transpose of 8 x 8 words, then a shuffle within each. */
AMX static inline void transpose_pairs(const uint16_t * src, uint16_t * dst) {
    __m512i t[8];
    for (int i = 0; i < 4; ++i) {
        const __m512i even = _mm512_loadu_si512(src + 2 * i * STEP),
                      odd = _mm512_loadu_si512(src + (2 * i + 1) * STEP);
        /* t[2 i + e], 128-bit lane L: words 2 L + e of rows 2 i and 2 i + 1 */
        t[2 * i] = _mm512_unpacklo_epi64(even, odd);
        t[2 * i + 1] = _mm512_unpackhi_epi64(even, odd);
    }
    const __m512i middle = _mm512_broadcast_i32x4(
        _mm_setr_epi8(0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15));
    /* out row j = 2 L + e, lane i: lane L of t[2 i + e] */
#define PAIR_ROW(j, e, L)                                                                                       \
    do {                                                                                                        \
        const __m512i lo = _mm512_shuffle_i64x2(t[e], t[2 + e], (L) * 0x55);                                    \
        const __m512i hi = _mm512_shuffle_i64x2(t[4 + e], t[6 + e], (L) * 0x55);                                \
        _mm512_storeu_si512(dst + (j) * STEP, _mm512_shuffle_epi8(_mm512_shuffle_i64x2(lo, hi, 0x88), middle)); \
    } while (0)
    PAIR_ROW(0, 0, 0);
    PAIR_ROW(1, 1, 0);
    PAIR_ROW(2, 0, 1);
    PAIR_ROW(3, 1, 1);
    PAIR_ROW(4, 0, 2);
    PAIR_ROW(5, 1, 2);
    PAIR_ROW(6, 0, 3);
    PAIR_ROW(7, 1, 3);
#undef PAIR_ROW
}

/* The panel of rows [m0, m0 + 32) of A = W^T, W's tiles at tiles (W [k, m]:
 * A's rows are W's columns), over k [k0, k0 + depth) (W's rows; a multiple
 * of 32), as pack_rows lays them out: each 16 of A's rows by 16 of k from
 * 8 of W's pair rows. */
AMX static void pack_transposed_tiles(const uint16_t * tiles, int64_t m, int64_t m0, int64_t k0, int64_t depth,
                                      int64_t steps, uint16_t * out) {
    for (int h = 0; h < 2; ++h) {
        /* W's columns c0.. lie in its slice at kc, as pairs from pair row q0 */
        const int64_t c0 = m0 + h * HALF, kc = c0 / KC * KC;
        const int64_t w_steps = ((m - kc < KC ? m - kc : KC) + STEP - 1) / STEP, q0 = (c0 - kc) / 2;
        for (int64_t g = 0; g < depth / HALF; ++g) {
            const int64_t r0 = k0 + g * HALF;   /* W's rows r0.. : half (r0 % 32) / 16 of its panel */
            const uint16_t * src = tiles + r0 / TNN_FGEMM_ROWS * TNN_FGEMM_ROWS * m + kc * TNN_FGEMM_ROWS +
                                   r0 % TNN_FGEMM_ROWS / HALF * w_steps * TILE_VALUES + q0 * STEP;
            transpose_pairs(src, out + (size_t) h * steps * TILE_VALUES + g * (HALF / 2) * STEP);
        }
    }
}

/* Columns [j0, j0 + cols) of B over k [k0, k0 + depth) as tiles: for each
 * step of 32 values of k, the two groups of 16 columns, each [16 columns]
 * [32] bfloat16, 1 KB in one piece; zeros past cols and past depth. One
 * piece per tile, not [32 columns][depth] rows, because 16 rows 2 KB apart
 * (depth 1024) fall in two sets of the L1 cache: loading the tiles from
 * there ran at two thirds of the speed. */
AMX static void pack_columns(struct tnn_fgemm_operand b, int64_t j0, int64_t cols, int64_t k0, int64_t depth,
                             int64_t steps, uint16_t * out) {
    if (cols < 2 * HALF || depth < steps * STEP) {
        memset(out, 0, (size_t) 2 * steps * TILE_VALUES * sizeof(uint16_t));
    }
    if (b.by_k) {
        /* B read by_k lies along the columns: 16 columns at two values of
         * k make one register of their pairs, and 16 of those (32 values
         * of k) transposed make the 16 columns' rows */
        for (int64_t h = 0; h * HALF < cols; ++h) {
            const int64_t left = cols - h * HALF;
            const __mmask16 mask = left >= HALF ? 0xffff : (__mmask16) ((1u << left) - 1);
            const float * src = b.data + k0 * b.ld + j0 + h * HALF;
            for (int64_t s = 0; s < steps; ++s) {
                __m512i r[HALF];
                for (int q = 0; q < HALF; ++q) {
                    const int64_t kk = s * STEP + 2 * q;
                    const __m512 even = kk < depth ? _mm512_maskz_loadu_ps(mask, src + kk * b.ld)
                                                   : _mm512_setzero_ps();
                    const __m512 odd = kk + 1 < depth ? _mm512_maskz_loadu_ps(mask, src + (kk + 1) * b.ld)
                                                      : _mm512_setzero_ps();
                    r[q] = _mm512_or_si512(_mm512_cvtepu16_epi32(round16(even)),
                                           _mm512_slli_epi32(_mm512_cvtepu16_epi32(round16(odd)), 16));
                }
                tnn_transpose16_epi32(r);
                uint16_t * tile = out + (2 * s + h) * TILE_VALUES;
                for (int j = 0; j < HALF && j < left; ++j) {
                    _mm512_storeu_si512(tile + j * STEP, r[j]);
                }
            }
        }
        return;
    }
    for (int64_t j = 0; j < cols; ++j) {
        uint16_t * dst = out + (j / HALF) * TILE_VALUES + (j % HALF) * STEP;
        const float * src = b.data + (j0 + j) * b.ld + k0;
        for (int64_t kk = 0; kk < depth; kk += STEP) {
            const int64_t left = depth - kk;
            const __mmask16 lo = left >= 16 ? 0xffff : (__mmask16) ((1u << left) - 1);
            const __mmask16 hi = left >= 32 ? 0xffff : left <= 16 ? 0 : (__mmask16) ((1u << (left - 16)) - 1);
            uint16_t * step = dst + (kk / STEP) * 2 * TILE_VALUES;
            _mm256_mask_storeu_epi16(step, lo, round16(_mm512_maskz_loadu_ps(lo, src + kk)));
            _mm256_mask_storeu_epi16(step + 16, hi, round16(_mm512_maskz_loadu_ps(hi, src + kk + 16)));
        }
    }
}

/* A 16 x 16 block of C^T: columns [j, j + cols) by rows [r, r + rows) of C,
 * column j at c + j * ldc. Full blocks are read and written in place; a
 * partial one goes through buf, so nothing past C is touched. */
struct block {
    float * at;
    int64_t ldc;
    int cols, rows;
};

static bool full(struct block b) { return b.cols == HALF && b.rows == HALF; }

static void to_buffer(struct block b, bool accumulate, float * buf) {
    memset(buf, 0, HALF * HALF * sizeof(float));
    for (int j = 0; j < b.cols && accumulate; ++j) {
        memcpy(buf + j * HALF, b.at + j * b.ldc, (size_t) b.rows * sizeof(float));
    }
}

static void from_buffer(struct block b, const float * buf) {
    for (int j = 0; j < b.cols; ++j) {
        memcpy(b.at + j * b.ldc, buf + j * HALF, (size_t) b.rows * sizeof(float));
    }
}

#define LOAD_SUMS(T, B, BUF)                                 \
    do {                                                     \
        if (full(B) && accumulate) {                         \
            _tile_loadd(T, (B).at, (B).ldc * sizeof(float)); \
        } else if (full(B)) {                                \
            _tile_zero(T);                                   \
        } else {                                             \
            to_buffer(B, accumulate, BUF);                   \
            _tile_loadd(T, BUF, HALF * sizeof(float));       \
        }                                                    \
    } while (0)

#define STORE_SUMS(T, B, BUF)                                 \
    do {                                                      \
        if (full(B)) {                                        \
            _tile_stored(T, (B).at, (B).ldc * sizeof(float)); \
        } else {                                              \
            _tile_stored(T, BUF, HALF * sizeof(float));       \
            from_buffer(B, BUF);                              \
        }                                                     \
    } while (0)

/* Columns [j, j + cols) of C^T for the panel at m0 (rows of it), from
 * its pairs and the columns' bfloat16 over steps of 32. */
AMX static void tile_panel(const uint16_t * rows_bf16, const uint16_t * cols_bf16, int64_t steps, float * c,
                           int64_t ldc, int64_t m0, int64_t rows, int64_t j, int64_t cols, bool accumulate) {
    float bufs[4][HALF * HALF] __attribute__((aligned(64)));
    const int rows0 = (int) (rows < HALF ? rows : HALF), rows1 = (int) (rows > HALF ? rows - HALF : 0);
    const int cols0 = (int) (cols < HALF ? cols : HALF), cols1 = (int) (cols > HALF ? cols - HALF : 0);
    const size_t half_stride = (size_t) steps * STEP * HALF;   /* values per half of the panel */
    const struct block b00 = { c + j * ldc + m0, ldc, cols0, rows0 };
    const struct block b01 = { c + j * ldc + m0 + HALF, ldc, cols0, rows1 };
    const struct block b10 = { c + (j + HALF) * ldc + m0, ldc, cols1, rows0 };
    const struct block b11 = { c + (j + HALF) * ldc + m0 + HALF, ldc, cols1, rows1 };
    LOAD_SUMS(C00, b00, bufs[0]);
    LOAD_SUMS(C01, b01, bufs[1]);
    LOAD_SUMS(C10, b10, bufs[2]);
    LOAD_SUMS(C11, b11, bufs[3]);
    for (int64_t s = 0; s < steps; ++s) {
        _tile_loadd(BCOLS0, cols_bf16 + 2 * s * TILE_VALUES, STEP * sizeof(uint16_t));
        _tile_loadd(BCOLS1, cols_bf16 + (2 * s + 1) * TILE_VALUES, STEP * sizeof(uint16_t));
        _tile_loadd(AROWS0, rows_bf16 + s * STEP * HALF, 64);
        _tile_loadd(AROWS1, rows_bf16 + half_stride + s * STEP * HALF, 64);
        _tile_dpbf16ps(C00, BCOLS0, AROWS0);
        _tile_dpbf16ps(C01, BCOLS0, AROWS1);
        _tile_dpbf16ps(C10, BCOLS1, AROWS0);
        _tile_dpbf16ps(C11, BCOLS1, AROWS1);
    }
    /* empty blocks (a last panel of 16 rows or fewer, a last group of 16
     * columns or fewer) hold nothing to keep */
    STORE_SUMS(C00, b00, bufs[0]);
    if (rows1 > 0) STORE_SUMS(C01, b01, bufs[1]);
    if (cols1 > 0) STORE_SUMS(C10, b10, bufs[2]);
    if (rows1 > 0 && cols1 > 0) STORE_SUMS(C11, b11, bufs[3]);
}

/* The group of panels [g0, g1) over the slice at k0: its panels of A
 * rounded into rows_bf16, then the tiles for columns [c0, c1), whose B
 * lies rounded at cols_bf16, one block of 32 columns every block_values;
 * added to C past the first slice, or from the first with accumulate. */
AMX static void group_slice(struct tnn_fgemm_operand a, int64_t m, int64_t k, int64_t g0, int64_t g1, int64_t k0,
                            int64_t depth, const uint16_t * cols_bf16, size_t block_values, int64_t c0, int64_t c1,
                            float * c, int64_t ldc, bool accumulate, uint16_t * rows_bf16) {
    const int64_t steps = (depth + STEP - 1) / STEP;
    const size_t panel_values = (size_t) KC * TNN_FGEMM_ROWS;
    const uint16_t * pairs[GP];
    for (int64_t p = g0; p < g1; ++p) {
        const int64_t m0 = p * TNN_FGEMM_ROWS;
        uint16_t * room = rows_bf16 + (p - g0) * panel_values;
        if (a.tiles != NULL && !a.by_k) {
            /* W's own tiles, in place (k a multiple of 32) */
            pairs[p - g0] = a.tiles + m0 * k + k0 * TNN_FGEMM_ROWS;
            continue;
        }
        if (a.tiles != NULL) {
            pack_transposed_tiles(a.tiles, m, m0, k0, depth, steps, room);
        } else {
            pack_rows(a, m0, m - m0 < TNN_FGEMM_ROWS ? m - m0 : TNN_FGEMM_ROWS, k0, depth, steps, room);
        }
        pairs[p - g0] = room;
    }
    for (int64_t j = c0; j < c1; j += 2 * HALF) {
        const int64_t cols = c1 - j < 2 * HALF ? c1 - j : 2 * HALF;
        const uint16_t * tiles = cols_bf16 + (j - c0) / (2 * HALF) * block_values;
        for (int64_t p = g0; p < g1; ++p) {
            const int64_t m0 = p * TNN_FGEMM_ROWS;
            tile_panel(pairs[p - g0], tiles, steps, c, ldc, m0, m - m0 < TNN_FGEMM_ROWS ? m - m0 : TNN_FGEMM_ROWS,
                       j, cols, accumulate || k0 > 0);
        }
    }
}

/* B's columns [c0, c1) over the slice at k0 rounded into blocks of 32
 * columns, one every block_values from out. */
AMX static void pack_slice(struct tnn_fgemm_operand b, int64_t c0, int64_t c1, int64_t k0, int64_t depth,
                           size_t block_values, uint16_t * out) {
    const int64_t steps = (depth + STEP - 1) / STEP;
    for (int64_t j = c0; j < c1; j += 2 * HALF) {
        pack_columns(b, j, c1 - j < 2 * HALF ? c1 - j : 2 * HALF, k0, depth, steps,
                     out + (j - c0) / (2 * HALF) * block_values);
    }
}

AMX void tnn_fgemm_bf16_amx(const struct tnn_fgemm_operand * a_in, int64_t m, int64_t k,
                            const struct tnn_fgemm_operand * b_in, float * c, int64_t ldc, int64_t p0, int64_t p1,
                            int64_t n0, int64_t n1, bool accumulate, float * scratch) {
    const struct tnn_fgemm_operand a = *a_in, b = *b_in;
    /* scratch (tnn_fgemm_bf16_scratch_bytes): up to GP panels of A in
     * pairs, then room for COLS columns of B in tiles at a slice of KC */
    const size_t panel_values = (size_t) KC * TNN_FGEMM_ROWS;
    uint16_t * rows_bf16 = (uint16_t *) scratch;
    uint16_t * cols_bf16 = rows_bf16 + GP * panel_values;
    const int64_t blocks = (n1 - n0 + 2 * HALF - 1) / (2 * HALF);
    const int64_t k_steps = (k + STEP - 1) / STEP;
    tnn_amx_configure_full_tiles();
    if ((size_t) blocks * k_steps * STEP * 2 * HALF <= (size_t) COLS * KC) {
        /* all of B fits: rounded once, then each group of panels over every
         * slice, its part of C kept in cache from one slice to the next
         * (the head's blocks of 1024 vocabulary rows, both ways) */
        for (int64_t k0 = 0; k0 < k; k0 += KC) {
            const int64_t depth = k - k0 < KC ? k - k0 : KC;
            const size_t block_values = (size_t) (depth + STEP - 1) / STEP * STEP * 2 * HALF;
            pack_slice(b, n0, n1, k0, depth, block_values, cols_bf16 + (size_t) blocks * k0 * 2 * HALF);
        }
        for (int64_t g0 = p0; g0 < p1; g0 += GP) {
            const int64_t g1 = g0 + GP < p1 ? g0 + GP : p1;
            for (int64_t k0 = 0; k0 < k; k0 += KC) {
                const int64_t depth = k - k0 < KC ? k - k0 : KC;
                const size_t block_values = (size_t) (depth + STEP - 1) / STEP * STEP * 2 * HALF;
                group_slice(a, m, k, g0, g1, k0, depth, cols_bf16 + (size_t) blocks * k0 * 2 * HALF, block_values,
                            n0, n1, c, ldc, accumulate, rows_bf16);
            }
        }
        _tile_release();
        return;
    }
    /* otherwise B rounded once a slice for all the panels, up to COLS
     * columns at a time, C carrying the sums from one slice to the next */
    for (int64_t c0 = n0; c0 < n1; c0 += COLS) {
        const int64_t c1 = c0 + COLS < n1 ? c0 + COLS : n1;
        for (int64_t k0 = 0; k0 < k; k0 += KC) {
            const int64_t depth = k - k0 < KC ? k - k0 : KC;
            pack_slice(b, c0, c1, k0, depth, panel_values, cols_bf16);
            for (int64_t g0 = p0; g0 < p1; g0 += GP) {
                group_slice(a, m, k, g0, g0 + GP < p1 ? g0 + GP : p1, k0, depth, cols_bf16, panel_values, c0, c1,
                            c, ldc, accumulate, rows_bf16);
            }
        }
    }
    _tile_release();
}

#endif
