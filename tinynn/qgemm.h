/* Integer matrix products for a frozen base on x86 CPUs with AVX512-VNNI.
 *
 * ggml's CPU kernels for a quantized weight times many tokens take one
 * 32-value block of one row and one column at a time, and spend five or six
 * instructions per block pair on signs, conversions and scales around the
 * one that multiplies. Here a weight matrix is packed once into panels of 16
 * rows whose bytes lie in the order the VNNI instruction reads them: one
 * 64-byte load is 4 values of 16 rows, multiplied against 4 values of a
 * column broadcast from memory, so a block of 32 values of 16 rows and one
 * column is 8 multiply-adds into 16 int32 lanes, then one conversion and one
 * scaled add. The packed bytes take exactly as much memory as the stored
 * blocks (the scales stay FP16).
 *
 * Two packed formats, both 16 rows x 32 values per block:
 *   TNN_QPANEL_Q8_0  from Q8_0: 16 FP16 scales, then 8 groups of
 *                    [16 rows][4 values] as u8 (q + 128)           544 bytes
 *   TNN_QPANEL_Q4_1  from Q4_1: 16 FP16 scales, 16 FP16 minimums, then 4
 *                    groups of [16 rows][4 bytes], each byte holding values
 *                    t and t + 16 of the block as Q4_1 stores them   320 bytes
 * The columns (activations) are quantized per block of 32 to int8 with one
 * float scale, as ggml quantizes them for these types (Q8_0 / Q8_1): with
 * levels = 1 the products are ggml's own up to the order of the float sums
 * (each about 0.4% off the float product). levels = 2 adds a second int8
 * level for the remainder, at twice the multiply-adds: about 3e-5 off.
 *
 * Rows must be a multiple of 16 and the inner size a multiple of 32. */
#ifndef TINYNN_QGEMM_H
#define TINYNN_QGEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum tnn_qpanel_format {
    TNN_QPANEL_Q8_0 = 0,
    TNN_QPANEL_Q4_1 = 1,
};

#define TNN_QPANEL_ROWS 16
#define TNN_QBLOCK 32

/* Whether this CPU (and this build) runs the packed products. */
bool tnn_qgemm_supported(void);

/* Bytes of one packed 16-row panel block (= 16 stored blocks). */
size_t tnn_qpanel_block_bytes(enum tnn_qpanel_format format);

/* Pack rows [r0, r0 + 16) of a stored Q8_0 / Q4_1 matrix into panel r0 / 16.
 * src: the first of the 16 stored rows, row_bytes apart; dst: the packed
 * matrix (k / 32 panel blocks per panel). */
void tnn_qpanel_pack(enum tnn_qpanel_format format, const void * src, size_t row_bytes,
                     int64_t k, int64_t r0, void * dst);

/* Scratch bytes a thread needs to quantize n columns of k values. */
size_t tnn_qgemm_scratch_bytes(int64_t k, int64_t n);

/* y [rows, n] = A [rows, k] x [k, n], for the share of thread ith of nth;
 * x quantized in levels (1 or 2) int8 levels.
 * x: column j at x + j * x_stride (floats, contiguous along k); y: column j
 * at y + j * y_stride. scratch: this thread's tnn_qgemm_scratch_bytes(k, n).
 * Every thread must be called; none waits for another. */
void tnn_qgemm(enum tnn_qpanel_format format, int levels, const void * a, int64_t rows, int64_t k,
               const float * x, int64_t x_stride, int64_t n,
               float * y, int64_t y_stride, void * scratch, int ith, int nth);

#endif
