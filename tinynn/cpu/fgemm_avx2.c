/* fgemm and the skinny product on AVX2 + FMA (kernels.h), for the x86-64
 * CPUs without AVX-512: Intel's Haswell to today's laptops, AMD's Zen 1-3.
 * Compiled through function attributes, run only where kernels.c finds
 * AVX2, FMA and F16C.
 *
 * The same bits as fgemm_avx512.c: every output is one chain of FMAs over
 * k in order, starting from 0 and continuing from C across the 256-deep
 * panels; only the register width and the blocking differ. AVX2 has 16
 * registers of 8 floats, so a whole 32-row panel row (4 registers) leaves
 * room for too few columns to hide the FMA latency. The tile here is half a
 * panel, 16 rows (2 registers), by 6 columns: 12 accumulators, 2 panel
 * values and one broadcast column value, 15 registers in all, 8 loads per
 * 12 FMAs. The two halves of a panel each pass over the columns; the panel
 * (32 KB) stays in L1 for both. */
#include "kernels.h"
#include "layout.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,fma,f16c")))

#define KC TNN_FGEMM_DEPTH
/* Rows of a tile (half a panel) and columns per tile. */
#define MR 16
#define NR 6

/* Lane mask of the first n of 8 lanes (n may be <= 0 or >= 8). */
AVX2 static inline __m256i lanes(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* C[16 rows from the panel's half, nc columns] (+)= half . B[k0 .. k0 + depth).
 * Rows past the matrix are zeros in the panel; only the C accesses are
 * masked (full: all 16 rows are C's, plain loads and stores). */
AVX2 static inline __attribute__((always_inline)) void tile(const float * half, int64_t depth, const float * b,
                                                            int64_t ldb, const bool b_by_k, const int nc,
                                                            float * c, int64_t ldc, bool full, __m256i mask_lo,
                                                            __m256i mask_hi, bool accumulate) {
    __m256 lo[NR], hi[NR];
#pragma GCC unroll 6
    for (int j = 0; j < nc; ++j) {
        if (!accumulate) {
            lo[j] = _mm256_setzero_ps();
            hi[j] = _mm256_setzero_ps();
        } else if (full) {
            lo[j] = _mm256_loadu_ps(c + j * ldc);
            hi[j] = _mm256_loadu_ps(c + j * ldc + 8);
        } else {
            lo[j] = _mm256_maskload_ps(c + j * ldc, mask_lo);
            hi[j] = _mm256_maskload_ps(c + j * ldc + 8, mask_hi);
        }
    }
    for (int64_t kk = 0; kk < depth; ++kk) {
        const __m256 w_lo = _mm256_loadu_ps(half + kk * TNN_FGEMM_ROWS);
        const __m256 w_hi = _mm256_loadu_ps(half + kk * TNN_FGEMM_ROWS + 8);
#pragma GCC unroll 6
        for (int j = 0; j < nc; ++j) {
            const __m256 x = _mm256_broadcast_ss(b_by_k ? b + kk * ldb + j : b + j * ldb + kk);
            lo[j] = _mm256_fmadd_ps(w_lo, x, lo[j]);
            hi[j] = _mm256_fmadd_ps(w_hi, x, hi[j]);
        }
    }
#pragma GCC unroll 6
    for (int j = 0; j < nc; ++j) {
        if (full) {
            _mm256_storeu_ps(c + j * ldc, lo[j]);
            _mm256_storeu_ps(c + j * ldc + 8, hi[j]);
        } else {
            _mm256_maskstore_ps(c + j * ldc, mask_lo, lo[j]);
            _mm256_maskstore_ps(c + j * ldc + 8, mask_hi, hi[j]);
        }
    }
}

#define TILE_CASE(BK, N) \
    case N: tile(half, depth, b, ldb, BK, N, c, ldc, full, mask_lo, mask_hi, accumulate); break;

#define TILE_FN(NAME, BK)                                                                                         \
    AVX2 static void NAME(const float * half, int64_t depth, const float * b, int64_t ldb, int nc, float * c,     \
                          int64_t ldc, bool full, __m256i mask_lo, __m256i mask_hi, bool accumulate) {            \
        switch (nc) {                                                                                             \
            TILE_CASE(BK, 1)                                                                                      \
            TILE_CASE(BK, 2) TILE_CASE(BK, 3) TILE_CASE(BK, 4) TILE_CASE(BK, 5) TILE_CASE(BK, 6) default : break; \
        }                                                                                                         \
    }

TILE_FN(tile_by_n, false)
TILE_FN(tile_by_k, true)

AVX2 void tnn_fgemm_avx2(const struct tnn_fgemm_operand * a_in, int64_t m, int64_t k,
                         const struct tnn_fgemm_operand * b_in, float * c, int64_t ldc, int64_t p0, int64_t p1,
                         int64_t n0, int64_t n1, bool accumulate, float * scratch) {
    const struct tnn_fgemm_operand a = *a_in, b = *b_in;
    for (int64_t p = p0; p < p1; ++p) {
        const int64_t m0 = p * TNN_FGEMM_ROWS;
        const int64_t rows = m - m0 < TNN_FGEMM_ROWS ? m - m0 : TNN_FGEMM_ROWS;
        for (int64_t k0 = 0; k0 < k; k0 += KC) {
            const int64_t depth = k - k0 < KC ? k - k0 : KC;
            tnn_fgemm_pack_panel(a, m0, rows, k0, depth, scratch);
            /* the lower 16 rows, then the upper ones if the panel has any */
            for (int64_t h = 0; h < rows; h += MR) {
                const int in_half = (int) (rows - h < MR ? rows - h : MR);
                const bool full = in_half == MR;
                const __m256i mask_lo = lanes(in_half), mask_hi = lanes(in_half - 8);
                float * ch = c + m0 + h;
                for (int64_t j = n0; j < n1; j += NR) {
                    const int nc = (int) (n1 - j < NR ? n1 - j : NR);
                    if (b.by_k) {
                        tile_by_k(scratch + h, depth, b.data + k0 * b.ld + j, b.ld, nc, ch + j * ldc, ldc, full,
                                  mask_lo, mask_hi, accumulate || k0 > 0);
                    } else {
                        tile_by_n(scratch + h, depth, b.data + j * b.ld + k0, b.ld, nc, ch + j * ldc, ldc, full,
                                  mask_lo, mask_hi, accumulate || k0 > 0);
                    }
                }
            }
        }
    }
}

/* The skinny product: C columns [i0, i0 + 16) (cols of them at n's end),
 * rows [j0, j0 + M) of C [m, n] = X Y^T, summed over t in order. 16
 * columns are 2 registers, so M <= 6 rows at a time keep 12 accumulators,
 * the 2 values of Y and a broadcast value of X in the 16 registers; a
 * larger rank takes several passes over the stripe of Y. */
#define SKINNY_ROWS 6

AVX2 static inline
    __attribute__((always_inline)) void skinny_block(const int M, const float * x, int64_t ldx, const float * y,
                                                     int64_t ldy, int64_t k, float * c, int64_t ldc, int cols) {
    const bool full = cols == 16;
    const __m256i mask_lo = lanes(cols), mask_hi = lanes(cols - 8);
    __m256 lo[SKINNY_ROWS], hi[SKINNY_ROWS];
    for (int j = 0; j < M; ++j) {
        lo[j] = _mm256_setzero_ps();
        hi[j] = _mm256_setzero_ps();
    }
    for (int64_t t = 0; t < k; ++t) {
        /* masked where the stripe passes n's end: nothing read past y's row */
        const __m256 y_lo = full ? _mm256_loadu_ps(y + t * ldy) : _mm256_maskload_ps(y + t * ldy, mask_lo);
        const __m256 y_hi = full ? _mm256_loadu_ps(y + t * ldy + 8) : _mm256_maskload_ps(y + t * ldy + 8, mask_hi);
        for (int j = 0; j < M; ++j) {
            const __m256 xv = _mm256_broadcast_ss(x + t * ldx + j);
            lo[j] = _mm256_fmadd_ps(xv, y_lo, lo[j]);
            hi[j] = _mm256_fmadd_ps(xv, y_hi, hi[j]);
        }
    }
    /* C column i holds the M sums of column i: a transpose on the way out */
    float out[SKINNY_ROWS][16];
    for (int j = 0; j < M; ++j) {
        _mm256_storeu_ps(out[j], lo[j]);
        _mm256_storeu_ps(out[j] + 8, hi[j]);
    }
    for (int i = 0; i < cols; ++i) {
        for (int j = 0; j < M; ++j) {
            c[i * ldc + j] = out[j][i];
        }
    }
}

#define SKINNY_CASE(M) \
    case M: skinny_block(M, x + j0, ldx, y + i0, ldy, k, c + i0 * ldc + j0, ldc, cols); break;

AVX2 void tnn_fgemm_skinny_avx2(const float * x, int64_t ldx, int64_t m, const float * y, int64_t ldy, int64_t k,
                                float * c, int64_t ldc, int64_t n0, int64_t n1) {
    for (int64_t i0 = n0; i0 < n1; i0 += 16) {
        const int cols = (int) (n1 - i0 < 16 ? n1 - i0 : 16);
        /* the rank in near-equal groups of at most SKINNY_ROWS rows */
        const int64_t groups = (m + SKINNY_ROWS - 1) / SKINNY_ROWS;
        for (int64_t g = 0; g < groups; ++g) {
            const int64_t j0 = m * g / groups, rows = m * (g + 1) / groups - j0;
            switch (rows) {
                SKINNY_CASE(1)
                SKINNY_CASE(2) SKINNY_CASE(3) SKINNY_CASE(4) SKINNY_CASE(5) SKINNY_CASE(6) default : break;
            }
        }
    }
}

#endif
