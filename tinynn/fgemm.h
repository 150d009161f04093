/* Float32 matrix products on x86 CPUs with AVX512 (tinynn's own kernel).
 *
 * ggml's F32 products (llamafile sgemm) walk 4 x 6 output tiles along the
 * whole inner dimension, reading both operands from L2 or beyond for every
 * tile: about 100 GFLOP/s on two cores here, half of what the FMA units
 * give. This kernel copies 32 rows of A at a time into a small panel, 256
 * inner values deep, laid out [k][32 rows] so that two 64-byte loads feed
 * 24 fused multiply-adds against 12 columns of B broadcast from memory;
 * the panel stays in L1 while every column tile passes over it.
 *
 * Every output is summed over k in order, whatever the thread count, so the
 * result does not depend on the number of threads. */
#ifndef TINYNN_FGEMM_H
#define TINYNN_FGEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether this CPU (and this build) runs the kernel. */
bool tnn_fgemm_supported(void);

/* Scratch floats a thread needs (one packed panel). */
size_t tnn_fgemm_scratch_bytes(void);

/* Rows of A per panel: a product has ceil(M / TNN_FGEMM_ROWS) panels. */
#define TNN_FGEMM_ROWS 32

/* How an operand lies in memory. */
struct tnn_fgemm_operand {
    const float * data;
    int64_t ld;          /* floats between rows (A) / columns (B), or between k's if by_k */
    bool by_k;           /* A[m, k] at data + k * ld + m (B[n, k] at data + k * ld + n):
                            the transpose of a contiguous matrix, read without a copy */
};

/* C[m, n] = sum_k A[m, k] B[n, k] for the rows of panels [p0, p1) and the
 * columns [n0, n1): A[m, k] at a.data + m * a.ld + k, B[n, k] at b.data +
 * n * b.ld + k (unless by_k), C column n at c + n * ldc (contiguous along m). */
void tnn_fgemm(struct tnn_fgemm_operand a, int64_t m, int64_t k, struct tnn_fgemm_operand b,
               float * c, int64_t ldc, int64_t p0, int64_t p1, int64_t n0, int64_t n1, float * scratch);

/* The weight gradient of a low-rank factor, dB [m, n] = h [m, k] dy [n, k]^T
 * with m (the rank) at most TNN_SKINNY_MAX_M, from h and dy as the forward
 * left them, contiguous along m and n: X[j, t] at x + t * ldx + j, Y[i, t]
 * at y + t * ldy + i, C column i at c + i * ldc. ggml (and tnn_fgemm, whose
 * panels are 32 rows) would first copy both transposed; here 16 columns of
 * C take m accumulators and one pass over their stripe of dy. Columns
 * [n0, n1), n0 a multiple of 16. */
#define TNN_SKINNY_MAX_M 16
void tnn_fgemm_skinny(const float * x, int64_t ldx, int64_t m, const float * y, int64_t ldy, int64_t k,
                      float * c, int64_t ldc, int64_t n0, int64_t n1);

#endif
