/* Memory layouts that the variants of a kernel share, private to
 * tinynn/cpu/ (kernels.c sizes scratch from them, the variants fill it). */
#ifndef TINYNN_CPU_LAYOUT_H
#define TINYNN_CPU_LAYOUT_H

#include "kernels.h"

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

static inline size_t tnn_align64(size_t bytes) {
    return (bytes + 63) / 64 * 64;
}

/* head_loss's scratch, by byte offset: the quantized columns for either
 * product, then z [vocab, CHUNK], the gathered h [d, CHUNK] and their
 * dL/dh [d, CHUNK]. */
struct tnn_head_loss_layout {
    size_t z, h, dh, total;
};

static inline struct tnn_head_loss_layout tnn_head_loss_layout(int64_t d, int64_t vocab) {
    const int64_t c = TNN_HEAD_LOSS_CHUNK;
    const size_t q_d = tnn_qgemm_scratch_bytes(d, c), q_v = tnn_qgemm_scratch_bytes(vocab, c);
    struct tnn_head_loss_layout l;
    l.z = tnn_align64(q_d > q_v ? q_d : q_v);
    l.h = l.z + tnn_align64((size_t) vocab * c * sizeof(float));
    l.dh = l.h + tnn_align64((size_t) d * c * sizeof(float));
    l.total = l.dh + tnn_align64((size_t) d * c * sizeof(float));
    return l;
}

#endif
