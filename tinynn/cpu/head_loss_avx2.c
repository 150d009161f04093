/* head_loss on AVX2 (kernels.h): the softmax, loss and gradient of each
 * token 8 logits at a time, its products through the qgemm it is given.
 *
 * The same bits as tnn_head_loss_avx512, which works on 16 logits: each
 * 16-logit step of it is two 8-logit halves here (lanes 0-7 and 8-15, in
 * two accumulators), the exponential is its polynomial with the same FMAs,
 * scalef is reproduced exactly (scalef8), and a 256-logit partial sum is
 * reduced across the lanes in the order of GCC's _mm512_reduce_add_ps.
 * Compiled through function attributes, run only where kernels.c finds
 * AVX2, FMA and F16C. */
#include "kernels.h"
#include "layout.h"

#include <math.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,fma,f16c")))
#define INLINE static inline __attribute__((always_inline))

/* 2^k for 4 k: e where k is finite, 0 for -inf, inf for +inf. */
AVX2 INLINE __m256d infinite_as_is(__m128 k, __m256d e) {
    const __m256d kd = _mm256_cvtps_pd(k);
    const __m256d infinite = _mm256_cmp_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), kd), _mm256_set1_pd(INFINITY),
                                           _CMP_EQ_OQ);
    return _mm256_blendv_pd(e, _mm256_max_pd(kd, _mm256_setzero_pd()), infinite);
}

/* _mm512_scalef_ps(p, k) for integral k: p 2^k rounded once. Where every k
 * lies in [-100, 0] (|x| < 70, the logits that count) p is in [0.7, 1.5]
 * and p 2^k a normal float: one exact product by 2^k built in the exponent
 * field. Else (the far tail, which underflows into subnormals or to 0) the
 * exact product in double, rounded once to float; k is clamped to
 * [-300, 300], past which any finite p gives 0 or infinity either way,
 * and an infinite k (x beyond -3.4e38 / log2 e) multiplies by 0 or
 * infinity, as scalef does (inf 2^-inf and 0 2^inf are NaN). */
AVX2 INLINE __m256 scalef8(__m256 p, __m256 k) {
    const __m256 in_range = _mm256_and_ps(_mm256_cmp_ps(k, _mm256_set1_ps(-100.0f), _CMP_GE_OQ),
                                          _mm256_cmp_ps(k, _mm256_setzero_ps(), _CMP_LE_OQ));
    if (_mm256_movemask_ps(in_range) == 0xff) {
        const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
        return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
    }
    const __m256 kc = _mm256_min_ps(_mm256_max_ps(k, _mm256_set1_ps(-300.0f)), _mm256_set1_ps(300.0f));
    const __m256i ki = _mm256_cvtps_epi32(kc);
    const __m256i bias = _mm256_set1_epi64x(1023);
    const __m256d e0 = _mm256_castsi256_pd(
        _mm256_slli_epi64(_mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(ki)), bias), 52));
    const __m256d e1 = _mm256_castsi256_pd(
        _mm256_slli_epi64(_mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_extracti128_si256(ki, 1)), bias), 52));
    const __m128 y0 = _mm256_cvtpd_ps(
        _mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(p)), infinite_as_is(_mm256_castps256_ps128(k), e0)));
    const __m128 y1 = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(p, 1)),
                                                    infinite_as_is(_mm256_extractf128_ps(k, 1), e1)));
    return _mm256_insertf128_ps(_mm256_castps128_ps256(y0), y1, 1);
}

/* e^x for 8 floats, exactly as layout.h's tnn_exp16: 2^k e^r with
 * k = round(x / ln 2), r = x - k ln 2 (ln 2 in two parts), e^r by its
 * Taylor series to r^7 / 7!. */
AVX2 INLINE __m256 exp8(__m256 x) {
    const __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693145752f), x);
    r = _mm256_fnmadd_ps(k, _mm256_set1_ps(1.42860677e-6f), r);
    __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    return scalef8(p, k);
}

/* Lanes [i, i + 8) of a vocab-long row that lie in it, as a mask vector
 * (all ones where in; maskload reads zeros elsewhere, as maskz loads). */
AVX2 INLINE __m256i lanes(int64_t i, int64_t vocab) {
    const int64_t left = vocab - i;
    const int in = left >= 8 ? 8 : left <= 0 ? 0 : (int) left;
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(in), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* _mm512_reduce_max_ps of the 16 lanes lo (0-7), hi (8-15), operand for
 * operand as GCC's avx512fintrin.h takes them. */
AVX2 INLINE float reduce_max16(__m256 lo, __m256 hi) {
    const __m256 t3 = _mm256_max_ps(hi, lo);
    const __m128 t6 = _mm_max_ps(_mm256_extractf128_ps(t3, 1), _mm256_castps256_ps128(t3));
    const __m128 t8 = _mm_max_ps(t6, _mm_shuffle_ps(t6, t6, _MM_SHUFFLE(1, 0, 3, 2)));
    const __m128 t10 = _mm_max_ps(t8, _mm_shuffle_ps(t8, t8, _MM_SHUFFLE(0, 1, 0, 1)));
    return _mm_cvtss_f32(t10);
}

/* _mm512_reduce_add_ps likewise: lane i + 8 onto lane i, then lane i + 4
 * onto i, then i + 2 onto i, then lane 1 onto lane 0. */
AVX2 INLINE float reduce_add16(__m256 lo, __m256 hi) {
    const __m256 t3 = _mm256_add_ps(hi, lo);
    const __m128 t6 = _mm_add_ps(_mm256_extractf128_ps(t3, 1), _mm256_castps256_ps128(t3));
    const __m128 t8 = _mm_add_ps(t6, _mm_shuffle_ps(t6, t6, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm_cvtss_f32(t8) + _mm_cvtss_f32(_mm_shuffle_ps(t8, t8, _MM_SHUFFLE(1, 1, 1, 1)));
}

/* e = exp(z - max z) for one token's logits z [vocab] (e may be z, or
 * NULL) and *sum their sum; returns max z: as head_loss_avx512.c's
 * exponentials, 16 logits (two halves) a step. */
AVX2 static float exponentials(const float * z, int64_t vocab, float * e, double * sum_out) {
    __m256 mx[2] = { _mm256_set1_ps(-INFINITY), _mm256_set1_ps(-INFINITY) };
    int64_t i = 0;
    for (; i + 16 <= vocab; i += 16) {
        mx[0] = _mm256_max_ps(mx[0], _mm256_loadu_ps(z + i));
        mx[1] = _mm256_max_ps(mx[1], _mm256_loadu_ps(z + i + 8));
    }
    for (int h = 0; h < 2 && i < vocab; ++h) {
        /* the tail: lanes past vocab keep their max, as a masked max does */
        const __m256i m = lanes(i + 8 * h, vocab);
        const __m256 v = _mm256_max_ps(mx[h], _mm256_maskload_ps(z + i + 8 * h, m));
        mx[h] = _mm256_blendv_ps(mx[h], v, _mm256_castsi256_ps(m));
    }
    const float max = reduce_max16(mx[0], mx[1]);
    const __m256 vmax = _mm256_set1_ps(max);
    double sum = 0.0;
    for (int64_t i0 = 0; i0 < vocab; i0 += 256) {
        __m256 part[2] = { _mm256_setzero_ps(), _mm256_setzero_ps() };
        for (int64_t j = i0; j < i0 + 256 && j < vocab; j += 16) {
            for (int h = 0; h < 2; ++h) {
                const int64_t at = j + 8 * h;
                if (at + 8 <= vocab) {
                    const __m256 ei = exp8(_mm256_sub_ps(_mm256_loadu_ps(z + at), vmax));
                    if (e != NULL) {
                        _mm256_storeu_ps(e + at, ei);
                    }
                    part[h] = _mm256_add_ps(part[h], ei);
                } else {
                    /* past vocab: zeros in, nothing out, zeros added */
                    const __m256i m = lanes(at, vocab);
                    const __m256 ei = exp8(_mm256_sub_ps(_mm256_maskload_ps(z + at, m), vmax));
                    if (e != NULL) {
                        _mm256_maskstore_ps(e + at, m, ei);
                    }
                    part[h] = _mm256_add_ps(part[h], _mm256_and_ps(ei, _mm256_castsi256_ps(m)));
                }
            }
        }
        sum += (double) reduce_add16(part[0], part[1]);
    }
    *sum_out = sum;
    return max;
}

/* -log softmax(z)[label] for one token's logits z [vocab]; with e not NULL
 * (it may be z itself) also e = exp(z - max z) and *sum = their sum. */
AVX2 static float token_loss(const float * z, int64_t vocab, int32_t label, float * e, double * sum_out) {
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
AVX2 static float softmax_gradient(float * z, int64_t vocab, int32_t label, float inv_n) {
    double sum = 0.0;
    const float loss = token_loss(z, vocab, label, z, &sum);
    const __m256 scale = _mm256_set1_ps((float) (1.0 / sum) * inv_n);
    int64_t i = 0;
    for (; i + 8 <= vocab; i += 8) {
        _mm256_storeu_ps(z + i, _mm256_mul_ps(_mm256_loadu_ps(z + i), scale));
    }
    if (i < vocab) {
        const __m256i m = lanes(i, vocab);
        _mm256_maskstore_ps(z + i, m, _mm256_mul_ps(_mm256_maskload_ps(z + i, m), scale));
    }
    z[label] -= inv_n;
    return loss;
}

float tnn_token_loss_avx2(const float * z, int64_t vocab, int32_t label) {
    return token_loss(z, vocab, label, NULL, NULL);
}

void tnn_head_loss_avx2(const struct tnn_head_products * products, int64_t d, int64_t vocab, const float * h,
                        int64_t h_stride, const int32_t * labels, int64_t n, int64_t t0, int64_t t1, float * out,
                        void * scratch) {
    const struct tnn_softmax_fns fns = { softmax_gradient, exponentials };
    tnn_head_loss_walk(&fns, products, d, vocab, h, h_stride, labels, n, t0, t1, out, scratch);
}

#endif
