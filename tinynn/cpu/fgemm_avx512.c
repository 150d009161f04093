/* fgemm and the skinny product on AVX512 (kernels.h). Compiled through
 * function attributes, run only where kernels.c finds AVX512F. */
#include "kernels.h"
#include "layout.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f,fma")))

#define KC TNN_FGEMM_DEPTH
/* Columns per tile: 2 x 12 accumulators of the 32 registers. */
#define NR 12

/* C[rows of the panel, nc columns] (+)= panel . B[k0 .. k0 + depth) */
AVX512 static inline __attribute__((always_inline)) void tile(const float * panel, int64_t depth, const float * b,
                                                              int64_t ldb, const bool b_by_k, const int nc,
                                                              float * c, int64_t ldc, __mmask16 mask_lo,
                                                              __mmask16 mask_hi, bool accumulate) {
    __m512 lo[NR], hi[NR];
#pragma GCC unroll 12
    for (int j = 0; j < nc; ++j) {
        lo[j] = accumulate ? _mm512_maskz_loadu_ps(mask_lo, c + j * ldc) : _mm512_setzero_ps();
        hi[j] = accumulate ? _mm512_maskz_loadu_ps(mask_hi, c + j * ldc + 16) : _mm512_setzero_ps();
    }
    for (int64_t kk = 0; kk < depth; ++kk) {
        const __m512 w_lo = _mm512_loadu_ps(panel + kk * TNN_FGEMM_ROWS);
        const __m512 w_hi = _mm512_loadu_ps(panel + kk * TNN_FGEMM_ROWS + 16);
#pragma GCC unroll 12
        for (int j = 0; j < nc; ++j) {
            const __m512 x = _mm512_set1_ps(b_by_k ? b[kk * ldb + j] : b[j * ldb + kk]);
            lo[j] = _mm512_fmadd_ps(w_lo, x, lo[j]);
            hi[j] = _mm512_fmadd_ps(w_hi, x, hi[j]);
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
#define TILE_CASE(BK, N) \
    case N: tile(panel, depth, b, ldb, BK, N, c, ldc, mask_lo, mask_hi, accumulate); break;

#define TILE_FN(NAME, BK)                                                                          \
    AVX512 static void NAME(const float * panel, int64_t depth, const float * b, int64_t ldb, int nc, \
                            float * c, int64_t ldc, __mmask16 mask_lo, __mmask16 mask_hi,            \
                            bool accumulate) {                                                     \
        switch (nc) {                                                                              \
            TILE_CASE(BK, 1) TILE_CASE(BK, 2) TILE_CASE(BK, 3) TILE_CASE(BK, 4)                    \
            TILE_CASE(BK, 5) TILE_CASE(BK, 6) TILE_CASE(BK, 7) TILE_CASE(BK, 8)                    \
            TILE_CASE(BK, 9) TILE_CASE(BK, 10) TILE_CASE(BK, 11) TILE_CASE(BK, 12)                 \
            default: break;                                                                        \
        }                                                                                          \
    }

TILE_FN(tile_by_n, false)
TILE_FN(tile_by_k, true)
/* clang-format on */

void tnn_fgemm_avx512(const struct tnn_fgemm_operand * a_in, int64_t m, int64_t k,
                      const struct tnn_fgemm_operand * b_in, float * c, int64_t ldc, int64_t p0, int64_t p1,
                      int64_t n0, int64_t n1, bool accumulate, float * scratch) {
    const struct tnn_fgemm_operand a = *a_in, b = *b_in;
    for (int64_t p = p0; p < p1; ++p) {
        const int64_t m0 = p * TNN_FGEMM_ROWS;
        const int64_t rows = m - m0 < TNN_FGEMM_ROWS ? m - m0 : TNN_FGEMM_ROWS;
        const __mmask16 mask_lo = rows >= 16 ? 0xffff : (__mmask16) ((1u << rows) - 1);
        const __mmask16 mask_hi = rows <= 16 ? 0 : rows >= 32 ? 0xffff : (__mmask16) ((1u << (rows - 16)) - 1);
        for (int64_t k0 = 0; k0 < k; k0 += KC) {
            const int64_t depth = k - k0 < KC ? k - k0 : KC;
            tnn_fgemm_pack_panel(a, m0, rows, k0, depth, scratch);
            for (int64_t j = n0; j < n1; j += NR) {
                const int nc = (int) (n1 - j < NR ? n1 - j : NR);
                if (b.by_k) {
                    tile_by_k(scratch, depth, b.data + k0 * b.ld + j, b.ld, nc, c + j * ldc + m0, ldc, mask_lo,
                              mask_hi, accumulate || k0 > 0);
                } else {
                    tile_by_n(scratch, depth, b.data + j * b.ld + k0, b.ld, nc, c + j * ldc + m0, ldc, mask_lo,
                              mask_hi, accumulate || k0 > 0);
                }
            }
        }
    }
}

/* 16 columns [n0, n0 + 16) (fewer at n's end: mask) of C [M, n] = X Y^T,
 * M accumulators of 16 columns each, summed over t in order. */
AVX512 static inline __attribute__((always_inline)) void skinny_block(const int M, const float * x, int64_t ldx,
                                                                      const float * y, int64_t ldy, int64_t k,
                                                                      __mmask16 mask, float * c, int64_t ldc,
                                                                      int cols) {
    __m512 acc[TNN_SKINNY_MAX_M];
    for (int j = 0; j < M; ++j) {
        acc[j] = _mm512_setzero_ps();
    }
    for (int64_t t = 0; t < k; ++t) {
        const __m512 yv = _mm512_maskz_loadu_ps(mask, y + t * ldy);
        for (int j = 0; j < M; ++j) {
            acc[j] = _mm512_fmadd_ps(_mm512_set1_ps(x[t * ldx + j]), yv, acc[j]);
        }
    }
    /* C column i holds the M sums of column i: a transpose on the way out */
    float out[TNN_SKINNY_MAX_M][16];
    for (int j = 0; j < M; ++j) {
        _mm512_storeu_ps(out[j], acc[j]);
    }
    for (int i = 0; i < cols; ++i) {
        for (int j = 0; j < M; ++j) {
            c[i * ldc + j] = out[j][i];
        }
    }
}

#define SKINNY_CASE(M) \
    case M: skinny_block(M, x, ldx, y + i0, ldy, k, mask, c + i0 * ldc, ldc, cols); break;

AVX512 void tnn_fgemm_skinny_avx512(const float * x, int64_t ldx, int64_t m, const float * y, int64_t ldy,
                                    int64_t k, float * c, int64_t ldc, int64_t n0, int64_t n1) {
    for (int64_t i0 = n0; i0 < n1; i0 += 16) {
        const int cols = (int) (n1 - i0 < 16 ? n1 - i0 : 16);
        const __mmask16 mask = cols == 16 ? 0xffff : (__mmask16) ((1u << cols) - 1);
        /* the cases of a switch written by a macro, a row of them a line */
        /* clang-format off */
        switch (m) {
            SKINNY_CASE(1) SKINNY_CASE(2) SKINNY_CASE(3) SKINNY_CASE(4)
            SKINNY_CASE(5) SKINNY_CASE(6) SKINNY_CASE(7) SKINNY_CASE(8)
            SKINNY_CASE(9) SKINNY_CASE(10) SKINNY_CASE(11) SKINNY_CASE(12)
            SKINNY_CASE(13) SKINNY_CASE(14) SKINNY_CASE(15) SKINNY_CASE(16)
            default: break;
        }
        /* clang-format on */
    }
}

#endif
