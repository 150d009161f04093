/* qgemm on the AMX-INT8 tiles (kernels.h): 16 columns x 16 rows x one
 * block of 32 values per tile product.
 *
 * A tile product multiplies 16 columns' int8 blocks (A: 16 rows of 32
 * bytes, read straight from the quantized columns with their stride) by
 * one block of a 16-row panel (B: 8 rows of [16 rows][4 values], the
 * panels' own order). Each panel is first spread to a byte a value, once
 * per thread and panel: Q8_0's bytes lose their +128 so that they multiply
 * as signed, Q4_1's nibbles are split. The int32 sums come out into memory
 * and take the same float steps, in the same order, as in the avx512
 * variant, so the bits are the same; one tile product stands for 128 (256
 * with two levels) VNNI multiply-adds, and the float steps, the same in
 * both, are what is left to pay. Columns that fill no tile of 16 go
 * through the avx512 variant's tiles (qgemm_avx512.c).
 *
 * Linux hands out the tile registers only to a process that asked for them
 * (kernels.c asks, once, before it reports AMX). Each thread loads the tile
 * configuration itself on entry and releases the tiles on leaving. */
#include "kernels.h"
#include "layout.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define AMX __attribute__((target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx512vnni,f16c,fma")))

/* Columns per tile product: A's and C's 16 rows. */
#define NC 16

/* The tiles (numbers, as the intrinsics paste them into the instruction).
 * Two sets of sums and panel blocks, used by turns, so that one block's
 * tile products run while the previous block's sums are scaled: the int32
 * sums of the int8 level q and of the remainder level r, and the panel
 * block; and the columns' two levels. */
#define C_Q0 0
#define C_R0 1
#define B0 2
#define C_Q1 3
#define C_R1 4
#define B1 5
#define A_Q 6
#define A_R 7

AMX static void configure_tiles(void) {
    struct tnn_amx_tile_config config;
    memset(&config, 0, sizeof config);
    config.palette = 1;
    const int sums[] = { C_Q0, C_R0, C_Q1, C_R1 }, columns[] = { A_Q, A_R }, blocks[] = { B0, B1 };
    for (int i = 0; i < 4; ++i) {
        config.rows[sums[i]] = NC, config.bytes_per_row[sums[i]] = TNN_QPANEL_ROWS * 4;
    }
    for (int i = 0; i < 2; ++i) {
        config.rows[columns[i]] = NC, config.bytes_per_row[columns[i]] = TNN_QBLOCK;
        config.rows[blocks[i]] = TNN_QBLOCK / 4, config.bytes_per_row[blocks[i]] = TNN_QPANEL_ROWS * 4;
    }
    _tile_loadconfig(&config);
}

/* A panel (kb blocks) as B reads it: per block 8 groups of [16 rows][4
 * values], one value a byte. Q8_0's bytes lose their +128 and are read
 * signed (so no correction is left for the sums); Q4_1's low nibbles
 * (values 0..15 of the block) and high ones (16..31) are read unsigned. */
AMX static void spread(enum tnn_qpanel_format format, const uint8_t * panel, int64_t kb, uint8_t * out) {
    const __m512i low4 = _mm512_set1_epi8(0x0f), offset = _mm512_set1_epi8((char) 0x80);
    const size_t bb = tnn_qpanel_block_bytes(format);
    for (int64_t b = 0; b < kb; ++b, panel += bb, out += TNN_QAMX_BLOCK_BYTES) {
        if (format == TNN_QPANEL_Q8_0) {
            for (int g = 0; g < 8; ++g) {
                _mm512_storeu_si512(out + 64 * g,
                                    _mm512_xor_si512(_mm512_loadu_si512(panel + 32 + 64 * g), offset));
            }
            continue;
        }
        for (int g = 0; g < 4; ++g) {
            const __m512i packed = _mm512_loadu_si512(panel + 64 + 64 * g);
            _mm512_storeu_si512(out + 64 * g, _mm512_and_si512(packed, low4));
            _mm512_storeu_si512(out + 64 * (4 + g), _mm512_and_si512(_mm512_srli_epi16(packed, 4), low4));
        }
    }
}

/* Block b of 16 columns into acc, from its int32 sums: as qgemm_avx512.c's
 * tile, the exact dot product, then one scaled add. */
AMX static inline __attribute__((always_inline)) void scale_block(
    const enum tnn_qpanel_format format, const int levels, const uint8_t * block, const struct tnn_qcol * cols,
    int64_t kb, int64_t b, const int32_t (*sum_q)[TNN_QPANEL_ROWS], const int32_t (*sum_r)[TNN_QPANEL_ROWS],
    __m512 * acc) {
    const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) block));
    const __m512 m = format == TNN_QPANEL_Q4_1
                         ? _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (block + 32)))
                         : _mm512_setzero_ps();
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) {
        const struct tnn_qcol * col = cols + c * kb + b;
        __m512i dot = _mm512_load_si512(sum_q[c]);
        if (levels == 2) {
            dot = _mm512_add_epi32(_mm512_slli_epi32(dot, 7), _mm512_load_si512(sum_r[c]));
        }
        const __m512 scale = _mm512_mul_ps(d, _mm512_set1_ps(levels == 2 ? col->d * (1.0f / 128.0f) : col->d));
        acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), scale, acc[c]);
        if (format == TNN_QPANEL_Q4_1) {
            acc[c] = _mm512_fmadd_ps(m, _mm512_set1_ps(col->ds), acc[c]);
        }
    }
}

/* Signed columns times Q8_0's signed or Q4_1's unsigned bytes. */
#define DOT(C, A, BT)                    \
    do {                                 \
        if (format == TNN_QPANEL_Q8_0) { \
            _tile_dpbssd(C, A, BT);      \
        } else {                         \
            _tile_dpbsud(C, A, BT);      \
        }                                \
    } while (0)

/* Start block b's tile products into the sums CQ, CR, its panel bytes in BT. */
#define MULTIPLY(CQ, CR, BT, b)                                            \
    do {                                                                   \
        _tile_loadd(BT, values + (b) * value_stride, TNN_QPANEL_ROWS * 4); \
        _tile_loadd(A_Q, cols[b].q, col_stride);                           \
        _tile_zero(CQ);                                                    \
        DOT(CQ, A_Q, BT);                                                  \
        if (levels == 2) {                                                 \
            _tile_loadd(A_R, cols[b].r, col_stride);                       \
            _tile_zero(CR);                                                \
            DOT(CR, A_R, BT);                                              \
        }                                                                  \
    } while (0)

/* Take block b's sums out of CQ, CR and add them into acc. */
#define ACCUMULATE(CQ, CR, b)                                                          \
    do {                                                                               \
        _tile_stored(CQ, sum_q, TNN_QPANEL_ROWS * 4);                                  \
        if (levels == 2) {                                                             \
            _tile_stored(CR, sum_r, TNN_QPANEL_ROWS * 4);                              \
        }                                                                              \
        scale_block(format, levels, panel + (b) * bb, cols, kb, b, sum_q, sum_r, acc); \
    } while (0)

/* y[c][0..16) = panel . column c for the 16 columns at cols (column c's
 * blocks at cols + c * kb); values: the panel's bytes as B reads them
 * (block b at values + b * value_stride). Blocks in order, two at a time. */
AMX static inline __attribute__((always_inline)) void tile(const enum tnn_qpanel_format format, const int levels,
                                                           const uint8_t * panel, const uint8_t * values,
                                                           size_t value_stride, int64_t kb,
                                                           const struct tnn_qcol * cols, float * y,
                                                           int64_t y_stride) {
    const size_t bb = tnn_qpanel_block_bytes(format);
    const size_t col_stride = (size_t) kb * sizeof(struct tnn_qcol);
    int32_t sum_q[NC][TNN_QPANEL_ROWS] __attribute__((aligned(64)));
    int32_t sum_r[NC][TNN_QPANEL_ROWS] __attribute__((aligned(64)));
    __m512 acc[NC];
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) {
        acc[c] = _mm512_setzero_ps();
    }
    int64_t b = 0;
    for (; b + 1 < kb; b += 2) {
        MULTIPLY(C_Q0, C_R0, B0, b);
        if (b > 0) {
            ACCUMULATE(C_Q1, C_R1, b - 1);
        }
        MULTIPLY(C_Q1, C_R1, B1, b + 1);
        ACCUMULATE(C_Q0, C_R0, b);
    }
    if (b < kb) {                                    /* an odd count: the last block */
        MULTIPLY(C_Q0, C_R0, B0, b);
        if (b > 0) {
            ACCUMULATE(C_Q1, C_R1, b - 1);
        }
        ACCUMULATE(C_Q0, C_R0, b);
    } else {
        ACCUMULATE(C_Q1, C_R1, b - 1);
    }
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) {
        _mm512_storeu_ps(y + c * y_stride, acc[c]);
    }
}

typedef void (*tile_fn)(const uint8_t * panel, const uint8_t * values, size_t value_stride, int64_t kb,
                        const struct tnn_qcol * cols, float * y, int64_t y_stride);

#define TILE_FN(NAME, F, L)                                                                              \
    AMX static void NAME(const uint8_t * panel, const uint8_t * values, size_t value_stride, int64_t kb, \
                         const struct tnn_qcol * cols, float * y, int64_t y_stride) {                    \
        tile(F, L, panel, values, value_stride, kb, cols, y, y_stride);                                  \
    }

TILE_FN(tile_q8_0_1, TNN_QPANEL_Q8_0, 1)
TILE_FN(tile_q8_0_2, TNN_QPANEL_Q8_0, 2)
TILE_FN(tile_q4_1_1, TNN_QPANEL_Q4_1, 1)
TILE_FN(tile_q4_1_2, TNN_QPANEL_Q4_1, 2)

AMX void tnn_qgemm_amx(int levels, const struct tnn_qpanels * a, int64_t rows, int64_t k,
                       const struct tnn_qgemm_columns * x, int64_t n, float * y, int64_t y_stride, void * scratch,
                       int ith, int nth) {
    const int format = a->format;
    const tile_fn tile_at = format == TNN_QPANEL_Q8_0 ? (levels == 2 ? tile_q8_0_2 : tile_q8_0_1)
                                                      : (levels == 2 ? tile_q4_1_2 : tile_q4_1_1);
    const int64_t kb = k / TNN_QBLOCK;
    const size_t panel_bytes = (size_t) kb * tnn_qpanel_block_bytes(format);
    int64_t c0, c1, p0, p1;
    tnn_qgemm_share(n, rows / TNN_QPANEL_ROWS, NC, a->pack != NULL ? a->align : 0, ith, nth, &c0, &c1, &p0, &p1);

    const struct tnn_qcol * q = tnn_qgemm_columns_quantized(x, kb, c0, c1, tnn_qgemm_avx512_quantize, scratch);
    const struct tnn_qgemm_layout l = tnn_qgemm_layout(k, n, x->quantized != NULL);
    uint8_t * values = (uint8_t *) scratch + l.spread;
    const int64_t full = (c1 - c0) / NC * NC;
    const int64_t pass = tnn_qpanels_pass(a, panel_bytes);
    for (int64_t pp = p0; pp < p1; pp += pass) {
        const int64_t pe = pp + pass < p1 ? pp + pass : p1;
        const uint8_t * panels = tnn_qpanels_get(a, pp, pe, k, &l, scratch);
        if (full > 0) {
            configure_tiles();
            for (int64_t p = pp; p < pe; ++p) {
                const uint8_t * panel = panels + (size_t) (p - pp) * panel_bytes;
                spread(format, panel, kb, values);
                for (int64_t c = 0; c < full; c += NC) {
                    tile_at(panel, values, TNN_QAMX_BLOCK_BYTES, kb, q + c * kb,
                            y + (c0 + c) * y_stride + p * TNN_QPANEL_ROWS, y_stride);
                }
            }
            _tile_release();
        }
        if (full < c1 - c0) {
            tnn_qgemm_avx512_panels(format, levels, panels, kb, pe - pp, q + full * kb, c1 - c0 - full,
                                    y + (c0 + full) * y_stride + pp * TNN_QPANEL_ROWS, y_stride);
        }
    }
}

#endif
