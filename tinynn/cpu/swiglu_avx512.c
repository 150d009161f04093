/* swiglu_back on AVX512 (kernels.h): SwiGLU's backward, 16 values at a
 * time, the tail through a lane mask, with an exponential of its own.
 * Compiled through function attributes, run only where kernels.c finds
 * AVX512F. */
#include "kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f,fma")))

/* exp(x) for 16 floats to about 2 ulps: x = n ln 2 + r with |r| <= ln 2 / 2
 * (ln 2 in two parts, so r is exact to float's precision), e^r by its
 * Taylor series to r^6 (the rest under 1.2e-7 of it), scaled by 2^n
 * (scalef: to infinity past float's range, to 0 below it). x is clamped
 * to +-100 first, where that has happened: a sigmoid of an input past
 * 100 in size is exactly 0 or 1, as with expf. */
AVX512 static inline __m512 exp16(__m512 x) {
    x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-100.0f)), _mm512_set1_ps(100.0f));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);   /* ln 2's first 10 bits */
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);      /* and the rest */
    __m512 p = _mm512_set1_ps(1.0f / 720.0f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, n);
}

AVX512 void tnn_swiglu_back_avx512(const float * g, const float * up, const float * dy, float * dgate, float * dup,
                                   int64_t i0, int64_t i1) {
    const __m512 one = _mm512_set1_ps(1.0f);
    for (int64_t i = i0; i < i1; i += 16) {
        const __mmask16 k = i1 - i >= 16 ? (__mmask16) 0xffff : (__mmask16) ((1u << (i1 - i)) - 1);
        const __m512 gi = _mm512_maskz_loadu_ps(k, g + i), dyi = _mm512_maskz_loadu_ps(k, dy + i);
        /* s = sigmoid(g) */
        const __m512 s = _mm512_div_ps(one, _mm512_add_ps(one, exp16(_mm512_sub_ps(_mm512_setzero_ps(), gi))));
        if (dgate != NULL) {
            /* d silu(g) / dg = s (1 + g (1 - s)), times dy up */
            const __m512 dy_up = up != NULL ? _mm512_mul_ps(dyi, _mm512_maskz_loadu_ps(k, up + i)) : dyi;
            const __m512 slope = _mm512_fmadd_ps(gi, _mm512_sub_ps(one, s), one);
            _mm512_mask_storeu_ps(dgate + i, k, _mm512_mul_ps(_mm512_mul_ps(dy_up, s), slope));
        }
        if (dup != NULL) {
            _mm512_mask_storeu_ps(dup + i, k, _mm512_mul_ps(_mm512_mul_ps(gi, s), dyi));   /* silu(g) dy */
        }
    }
}

#endif
