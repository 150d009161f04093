/* adamw on AVX512 (kernels.h): 16 parameters at a time, the tail through a
 * lane mask. Compiled through function attributes, run only where
 * kernels.c finds AVX512F and FMA. */
#include "kernels.h"

#include <math.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f,fma")))

AVX512 void tnn_adamw_avx512(float * w, const float * g, float * m, float * v, const float * hp, int64_t i0,
                             int64_t i1) {
    const float alpha = hp[0], beta1 = hp[1], beta2 = hp[2], eps = hp[3], wd = hp[4];
    const __m512 b1 = _mm512_set1_ps(beta1), b2 = _mm512_set1_ps(beta2);
    const __m512 one_b1 = _mm512_set1_ps(1.0f - beta1), one_b2 = _mm512_set1_ps(1.0f - beta2);
    const __m512 vb1h = _mm512_set1_ps(hp[5]), vb2h = _mm512_set1_ps(hp[6]);
    const __m512 veps = _mm512_set1_ps(eps), valpha = _mm512_set1_ps(alpha);
    const __m512 keep = _mm512_set1_ps(fmaf(-alpha, wd, 1.0f));
    for (int64_t i = i0; i < i1; i += 16) {
        const __mmask16 k = i1 - i >= 16 ? (__mmask16) 0xffff : (__mmask16) ((1u << (i1 - i)) - 1);
        const __m512 gi = _mm512_maskz_loadu_ps(k, g + i);
        const __m512 mi = _mm512_fmadd_ps(b1, _mm512_maskz_loadu_ps(k, m + i), _mm512_mul_ps(gi, one_b1));
        const __m512 vi = _mm512_fmadd_ps(b2, _mm512_maskz_loadu_ps(k, v + i),
                                          _mm512_mul_ps(_mm512_mul_ps(gi, gi), one_b2));
        const __m512 vh = _mm512_add_ps(_mm512_sqrt_ps(_mm512_mul_ps(vi, vb2h)), veps);
        const __m512 step = _mm512_div_ps(_mm512_mul_ps(valpha, _mm512_mul_ps(mi, vb1h)), vh);
        const __m512 wi = _mm512_fmsub_ps(_mm512_maskz_loadu_ps(k, w + i), keep, step);
        _mm512_mask_storeu_ps(m + i, k, mi);
        _mm512_mask_storeu_ps(v + i, k, vi);
        _mm512_mask_storeu_ps(w + i, k, wi);
    }
}

#endif
