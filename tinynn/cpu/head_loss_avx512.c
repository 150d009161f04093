/* head_loss on AVX512 (kernels.h): the softmax, loss and gradient of each
 * token 16 logits at a time, its products through the qgemm it is given.
 * Compiled through function attributes, run only where kernels.c finds
 * AVX512F. */
#include "kernels.h"
#include "layout.h"

#include <math.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f")))

/* Lanes [i, i + 16) of a vocab-long row, fewer at its end. */
static inline __mmask16 lanes(int64_t i, int64_t vocab) {
    return vocab - i >= 16 ? (__mmask16) 0xffff : (__mmask16) ((1u << (vocab - i)) - 1);
}

/* e = exp(z - max z) for one token's logits z [vocab] (e may be z, or
 * NULL) and *sum their sum; returns max z. The sum goes through doubles
 * every 16 vectors. */
AVX512 static float exponentials(const float * z, int64_t vocab, float * e, double * sum_out) {
    __m512 mx = _mm512_set1_ps(-INFINITY);
    for (int64_t i = 0; i < vocab; i += 16) {
        mx = _mm512_mask_max_ps(mx, lanes(i, vocab), mx, _mm512_maskz_loadu_ps(lanes(i, vocab), z + i));
    }
    const float max = _mm512_reduce_max_ps(mx);
    const __m512 vmax = _mm512_set1_ps(max);
    double sum = 0.0;
    for (int64_t i0 = 0; i0 < vocab; i0 += 256) {
        __m512 part = _mm512_setzero_ps();
        for (int64_t i = i0; i < i0 + 256 && i < vocab; i += 16) {
            const __mmask16 m = lanes(i, vocab);
            const __m512 ei = tnn_exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, z + i), vmax));
            if (e != NULL) {
                _mm512_mask_storeu_ps(e + i, m, ei);
            }
            part = _mm512_add_ps(part, _mm512_maskz_mov_ps(m, ei));
        }
        sum += (double) _mm512_reduce_add_ps(part);
    }
    *sum_out = sum;
    return max;
}

/* -log softmax(z)[label] for one token's logits z [vocab]; with e not NULL
 * (it may be z itself) also e = exp(z - max z) and *sum = their sum. The
 * forward graph's loss and the fused training graph's both come from here,
 * so they are equal. */
AVX512 static float token_loss(const float * z, int64_t vocab, int32_t label, float * e, double * sum_out) {
    const float z_label = z[label];
    double sum = 0.0;
    const float max = exponentials(z, vocab, e, &sum);
    if (sum_out != NULL) {
        *sum_out = sum;
    }
    return (float) (log(sum) - ((double) z_label - (double) max));
}

/* One token: z (its logits) becomes the gradient of the mean loss over n
 * tokens, (softmax(z) - onehot(label)) / n; returns its loss. */
AVX512 static float softmax_gradient(float * z, int64_t vocab, int32_t label, float inv_n) {
    double sum = 0.0;
    const float loss = token_loss(z, vocab, label, z, &sum);
    const __m512 scale = _mm512_set1_ps((float) (1.0 / sum) * inv_n);
    for (int64_t i = 0; i < vocab; i += 16) {
        const __mmask16 m = lanes(i, vocab);
        _mm512_mask_storeu_ps(z + i, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, z + i), scale));
    }
    z[label] -= inv_n;
    return loss;
}

float tnn_token_loss_avx512(const float * z, int64_t vocab, int32_t label) {
    return token_loss(z, vocab, label, NULL, NULL);
}

void tnn_head_loss_avx512(const struct tnn_head_products * products, int64_t d, int64_t vocab, const float * h,
                          int64_t h_stride, const int32_t * labels, int64_t n, int64_t t0, int64_t t1, float * out,
                          void * scratch) {
    const struct tnn_softmax_fns fns = { softmax_gradient, exponentials };
    tnn_head_loss_walk(&fns, products, d, vocab, h, h_stride, labels, n, t0, t1, out, scratch);
}

#endif
