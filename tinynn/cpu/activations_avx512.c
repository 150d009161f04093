/* The activations kernels on AVX512 (kernels.h): SwiGLU's backward and RMS
 * norm both ways, 16 values at a time, the tail through a lane mask.
 * Compiled through function attributes, run only where kernels.c finds
 * AVX512F. */
#include "kernels.h"
#include "layout.h"

#include <math.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f,fma")))

/* exp(x) for 16 floats (layout.h), x clamped to +-100 first, past which
 * it is infinity or 0 anyway: a sigmoid of an input past 100 in size is
 * exactly 0 or 1, as with expf. */
AVX512 static inline __m512 exp16(__m512 x) {
    return tnn_exp16(_mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-100.0f)), _mm512_set1_ps(100.0f)));
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

/* sum(a b) over d values, in 16 float lanes then across them */
AVX512 static inline float dot(const float * a, const float * b, int64_t d) {
    __m512 sum = _mm512_setzero_ps();
    for (int64_t i = 0; i < d; i += 16) {
        const __mmask16 k = d - i >= 16 ? (__mmask16) 0xffff : (__mmask16) ((1u << (d - i)) - 1);
        sum = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, a + i), _mm512_maskz_loadu_ps(k, b + i), sum);
    }
    return _mm512_reduce_add_ps(sum);
}

AVX512 void tnn_rms_norm_avx512(const float * x, int64_t ldx, const float * w, float eps, float * y, int64_t ldy,
                                int64_t d, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
        const float * xr = x + r * ldx;
        float * yr = y + r * ldy;
        const __m512 scale = _mm512_set1_ps(1.0f / sqrtf(dot(xr, xr, d) / (float) d + eps));
        for (int64_t i = 0; i < d; i += 16) {
            const __mmask16 k = d - i >= 16 ? (__mmask16) 0xffff : (__mmask16) ((1u << (d - i)) - 1);
            __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, xr + i), scale);
            if (w != NULL) {
                v = _mm512_mul_ps(v, _mm512_maskz_loadu_ps(k, w + i));
            }
            _mm512_mask_storeu_ps(yr + i, k, v);
        }
    }
}

AVX512 void tnn_rms_norm_back_avx512(const float * dz, int64_t ldz, const float * x, int64_t ldx, float eps,
                                     float * dx, int64_t lddx, int64_t d, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
        const float *xr = x + r * ldx, *dzr = dz + r * ldz;
        float * dxr = dx + r * lddx;
        const float sum_xx = dot(xr, xr, d), sum_xdz = dot(xr, dzr, d);
        const __m512 rrms = _mm512_set1_ps(1.0f / sqrtf(sum_xx / (float) d + eps));
        const __m512 scale_x = _mm512_set1_ps(-sum_xdz / (sum_xx + eps * (float) d));
        for (int64_t i = 0; i < d; i += 16) {
            const __mmask16 k = d - i >= 16 ? (__mmask16) 0xffff : (__mmask16) ((1u << (d - i)) - 1);
            const __m512 v = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, xr + i), scale_x,
                                             _mm512_maskz_loadu_ps(k, dzr + i));
            _mm512_mask_storeu_ps(dxr + i, k, _mm512_mul_ps(v, rrms));
        }
    }
}

#endif
