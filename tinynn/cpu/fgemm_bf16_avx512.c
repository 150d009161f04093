/* fgemm_bf16 on AVX512-BF16 (kernels.h): float32 products with their
 * operands rounded to bfloat16, summed in float32, for the CPUs with
 * bfloat16 dot products and no AMX tiles (Zen 4 and 5, Cooper Lake).
 *
 * vdpbf16ps multiplies 16 pairs of bfloat16 by 16 pairs and adds both
 * products to 16 float32 sums, the high half's product first, each add
 * rounded (the products of two bfloat16 are exact in float32). So with k
 * in the high half of a pair and k + 1 in the low, every sum of C is
 *     c = ((c + a_k b_k) + a_k+1 b_k+1) + ...
 * in order of k: the numpy reference's in the tests (measured on Zen 4:
 * vdpbf16ps adds the high product first in 2,000,000 random cases of
 * 2,000,000; the same tests pass on a Sapphire Rapids Xeon). The AMX tiles
 * on that Xeon sum differently, a few ulps apart (kernels.h).
 *
 * The layout is fgemm_avx512's with pairs for values: per 256-deep slice of
 * k, a panel of 32 rows of A lies as [k / 2][32 rows] pairs (two 64-byte
 * loads), 12 columns of B as [12][k / 2] pairs broadcast from memory, and
 * 2 x 12 accumulators take 24 vdpbf16ps per pair of k. As in the AMX
 * variant, up to TNN_FGEMM_BF16_PANELS panels of A are rounded once per
 * slice and every column group passes over all of them. */
#include "kernels.h"
#include "layout.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

#define KC TNN_FGEMM_DEPTH
#define PAIRS (KC / 2)                                  /* pairs of k per slice */
#define PANEL_WORDS ((size_t) PAIRS * TNN_FGEMM_ROWS)  /* 32-bit pairs per packed panel */
/* Columns per tile: 2 x 12 accumulators of the 32 registers. */
#define NR 12

static inline __mmask16 first_lanes(int64_t count) {
    return count >= 16 ? 0xffff : count <= 0 ? 0 : (__mmask16) ((1u << count) - 1);
}

/* Two 16-lane words of bfloat16 (k, k + 1) as pairs, k in the high half. */
BF16 static inline __m512i pair(__m512i k_words, __m512i next_words) {
    return _mm512_or_si512(_mm512_slli_epi32(k_words, 16), next_words);
}

/* 32 consecutive values along k from offset (fewer: masks lo / hi), as 16
 * pairs, k first. */
BF16 static inline __m512i pairs_along_k(struct tnn_fgemm_operand x, int64_t offset, __mmask16 lo, __mmask16 hi) {
    return _mm512_rol_epi32(tnn_bf16_words32(x, offset, lo, hi), 16);
}

/* The panel of rows [m0, m0 + rows) of A over k [k0, k0 + depth) as
 * out[q][32 rows] pairs (k0 + 2q, k0 + 2q + 1), zeros past rows and depth. */
BF16 static void pack_panel(struct tnn_fgemm_operand a, int64_t m0, int64_t rows, int64_t k0, int64_t depth,
                            uint32_t * out) {
    const int64_t pairs = (depth + 1) / 2;
    for (int h = 0; h < 2; ++h) {
        const int64_t r0 = m0 + h * 16, left = rows - h * 16;
        const __mmask16 row_mask = first_lanes(left);
        if (a.by_k) {
            /* A read by_k lies along the rows: 16 rows at one k are one load */
            for (int64_t q = 0; q < pairs; ++q) {
                const int64_t kk = k0 + 2 * q;
                const __m512i even = tnn_bf16_words16(a, kk * a.ld + r0, row_mask);
                const __m512i odd = 2 * q + 1 < depth ? tnn_bf16_words16(a, (kk + 1) * a.ld + r0, row_mask)
                                                      : _mm512_setzero_si512();
                _mm512_storeu_si512(out + q * TNN_FGEMM_ROWS + h * 16, pair(even, odd));
            }
            continue;
        }
        /* a row of A lies along k: 32 of its values are 16 pairs, and 16
         * rows' registers transposed are 16 pairs of 16 rows */
        for (int64_t s = 0; s * 32 < depth; ++s) {
            const int64_t kk = s * 32;
            __m512i r[16];
            for (int i = 0; i < 16; ++i) {
                r[i] = i < left ? pairs_along_k(a, (r0 + i) * a.ld + k0 + kk, first_lanes(depth - kk),
                                                first_lanes(depth - kk - 16))
                                : _mm512_setzero_si512();
            }
            tnn_transpose16_epi32(r);
            for (int j = 0; j < 16 && s * 16 + j < pairs; ++j) {
                _mm512_storeu_si512(out + (s * 16 + j) * TNN_FGEMM_ROWS + h * 16, r[j]);
            }
        }
    }
}

/* Columns [j0, j0 + cols) of B over k [k0, k0 + depth) as out[column][q]
 * pairs, zeros past depth. */
BF16 static void pack_columns(struct tnn_fgemm_operand b, int64_t j0, int cols, int64_t k0, int64_t depth,
                              uint32_t * out) {
    const int64_t pairs = (depth + 1) / 2;
    if (b.by_k) {
        /* B read by_k lies along the columns: the columns' pairs at one k
         * are one register, its lanes spread out to the columns */
        const __mmask16 mask = first_lanes(cols);
        for (int64_t q = 0; q < pairs; ++q) {
            const int64_t kk = k0 + 2 * q;
            const __m512i even = tnn_bf16_words16(b, kk * b.ld + j0, mask);
            const __m512i odd = 2 * q + 1 < depth ? tnn_bf16_words16(b, (kk + 1) * b.ld + j0, mask)
                                                  : _mm512_setzero_si512();
            uint32_t lanes[16];
            _mm512_storeu_si512(lanes, pair(even, odd));
            for (int j = 0; j < cols; ++j) {
                out[j * PAIRS + q] = lanes[j];
            }
        }
        return;
    }
    for (int j = 0; j < cols; ++j) {
        for (int64_t kk = 0; kk < depth; kk += 32) {
            const __m512i w = pairs_along_k(b, (j0 + j) * b.ld + k0 + kk, first_lanes(depth - kk),
                                            first_lanes(depth - kk - 16));
            _mm512_mask_storeu_epi32(out + j * PAIRS + kk / 2, first_lanes((depth - kk + 1) / 2), w);
        }
    }
}

/* C[rows of the panel, nc columns] (+)= panel . columns, over pairs of k */
BF16 static inline __attribute__((always_inline)) void tile(const uint32_t * panel, int64_t pairs,
                                                            const uint32_t * columns, const int nc, float * c,
                                                            int64_t ldc, __mmask16 mask_lo, __mmask16 mask_hi,
                                                            bool accumulate) {
    __m512 lo[NR], hi[NR];
#pragma GCC unroll 12
    for (int j = 0; j < nc; ++j) {
        lo[j] = accumulate ? _mm512_maskz_loadu_ps(mask_lo, c + j * ldc) : _mm512_setzero_ps();
        hi[j] = accumulate ? _mm512_maskz_loadu_ps(mask_hi, c + j * ldc + 16) : _mm512_setzero_ps();
    }
    for (int64_t q = 0; q < pairs; ++q) {
        const __m512bh w_lo = (__m512bh) _mm512_loadu_si512(panel + q * TNN_FGEMM_ROWS);
        const __m512bh w_hi = (__m512bh) _mm512_loadu_si512(panel + q * TNN_FGEMM_ROWS + 16);
#pragma GCC unroll 12
        for (int j = 0; j < nc; ++j) {
            const __m512bh x = (__m512bh) _mm512_set1_epi32((int) columns[j * PAIRS + q]);
            lo[j] = _mm512_dpbf16_ps(lo[j], w_lo, x);
            hi[j] = _mm512_dpbf16_ps(hi[j], w_hi, x);
        }
    }
#pragma GCC unroll 12
    for (int j = 0; j < nc; ++j) {
        _mm512_mask_storeu_ps(c + j * ldc, mask_lo, lo[j]);
        _mm512_mask_storeu_ps(c + j * ldc + 16, mask_hi, hi[j]);
    }
}

/* the cases of a switch written by a macro, a row of them a line */
/* clang-format off */
#define TILE_CASE(N) \
    case N: tile(panel, pairs, columns, N, c, ldc, mask_lo, mask_hi, accumulate); break;

BF16 static void tile_n(const uint32_t * panel, int64_t pairs, const uint32_t * columns, int nc, float * c,
                        int64_t ldc, __mmask16 mask_lo, __mmask16 mask_hi, bool accumulate) {
    switch (nc) {
        TILE_CASE(1) TILE_CASE(2) TILE_CASE(3) TILE_CASE(4) TILE_CASE(5) TILE_CASE(6)
        TILE_CASE(7) TILE_CASE(8) TILE_CASE(9) TILE_CASE(10) TILE_CASE(11) TILE_CASE(12)
        default: break;
    }
}
/* clang-format on */

BF16 void tnn_fgemm_bf16_avx512(const struct tnn_fgemm_operand * a_in, int64_t m, int64_t k,
                                const struct tnn_fgemm_operand * b_in, float * c, int64_t ldc, int64_t p0,
                                int64_t p1, int64_t n0, int64_t n1, bool accumulate, float * scratch) {
    const struct tnn_fgemm_operand a = *a_in, b = *b_in;
    /* scratch (tnn_fgemm_bf16_scratch_bytes): the columns' pairs in the
     * room of one panel, then up to TNN_FGEMM_BF16_PANELS panels */
    uint32_t * columns = (uint32_t *) scratch;
    uint32_t * panels = columns + PANEL_WORDS;
    for (int64_t g0 = p0; g0 < p1; g0 += TNN_FGEMM_BF16_PANELS) {
        const int64_t g1 = g0 + TNN_FGEMM_BF16_PANELS < p1 ? g0 + TNN_FGEMM_BF16_PANELS : p1;
        for (int64_t k0 = 0; k0 < k; k0 += KC) {
            const int64_t depth = k - k0 < KC ? k - k0 : KC, pairs = (depth + 1) / 2;
            for (int64_t p = g0; p < g1; ++p) {
                const int64_t m0 = p * TNN_FGEMM_ROWS;
                pack_panel(a, m0, m - m0 < TNN_FGEMM_ROWS ? m - m0 : TNN_FGEMM_ROWS, k0, depth,
                           panels + (p - g0) * PANEL_WORDS);
            }
            for (int64_t j = n0; j < n1; j += NR) {
                const int nc = (int) (n1 - j < NR ? n1 - j : NR);
                pack_columns(b, j, nc, k0, depth, columns);
                for (int64_t p = g0; p < g1; ++p) {
                    const int64_t m0 = p * TNN_FGEMM_ROWS,
                                  rows = m - m0 < TNN_FGEMM_ROWS ? m - m0 : TNN_FGEMM_ROWS;
                    tile_n(panels + (p - g0) * PANEL_WORDS, pairs, columns, nc, c + j * ldc + m0, ldc,
                           first_lanes(rows), first_lanes(rows - 16), accumulate || k0 > 0);
                }
            }
        }
    }
}

#endif
