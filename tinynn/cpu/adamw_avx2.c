/* adamw on AVX2 + FMA (kernels.h): 8 parameters at a time, the tail through
 * masked loads and stores. The same operations in the same order as
 * adamw_avx512.c, each multiply-add an explicit FMA where ggml's build
 * contracts one and an explicit multiply and add where it does not, so the
 * weights and moments are ggml's to the bit on every CPU level. Compiled
 * through function attributes, run only where kernels.c finds AVX2 and FMA. */
#include "kernels.h"

#include <math.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,fma,f16c")))

/* One step of 8 parameters at p; with full false, only the lanes of mask
 * (masked-off lanes load 0 and store nothing: AMD before Zen 3 runs a
 * masked store slowly, so whole steps use plain loads and stores). */
AVX2 static inline __attribute__((always_inline)) void update8(float * w, const float * g, float * m, float * v,
                                                               const bool full, __m256i mask, __m256 b1, __m256 b2,
                                                               __m256 one_b1, __m256 one_b2, __m256 vb1h,
                                                               __m256 vb2h, __m256 veps, __m256 valpha,
                                                               __m256 keep) {
#define LOAD(p) (full ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask))
#define STORE(p, x) (full ? _mm256_storeu_ps(p, x) : _mm256_maskstore_ps(p, mask, x))
    const __m256 gi = LOAD(g);
    const __m256 mi = _mm256_fmadd_ps(b1, LOAD(m), _mm256_mul_ps(gi, one_b1));
    const __m256 vi = _mm256_fmadd_ps(b2, LOAD(v), _mm256_mul_ps(_mm256_mul_ps(gi, gi), one_b2));
    const __m256 vh = _mm256_add_ps(_mm256_sqrt_ps(_mm256_mul_ps(vi, vb2h)), veps);
    const __m256 step = _mm256_div_ps(_mm256_mul_ps(valpha, _mm256_mul_ps(mi, vb1h)), vh);
    const __m256 wi = _mm256_fmsub_ps(LOAD(w), keep, step);
    STORE(m, mi);
    STORE(v, vi);
    STORE(w, wi);
#undef LOAD
#undef STORE
}

AVX2 void tnn_adamw_avx2(float * w, const float * g, float * m, float * v, const float * hp, int64_t i0,
                         int64_t i1) {
    const float alpha = hp[0], beta1 = hp[1], beta2 = hp[2], eps = hp[3], wd = hp[4];
    const __m256 b1 = _mm256_set1_ps(beta1), b2 = _mm256_set1_ps(beta2);
    const __m256 one_b1 = _mm256_set1_ps(1.0f - beta1), one_b2 = _mm256_set1_ps(1.0f - beta2);
    const __m256 vb1h = _mm256_set1_ps(hp[5]), vb2h = _mm256_set1_ps(hp[6]);
    const __m256 veps = _mm256_set1_ps(eps), valpha = _mm256_set1_ps(alpha);
    const __m256 keep = _mm256_set1_ps(fmaf(-alpha, wd, 1.0f));
    int64_t i = i0;
    for (; i + 8 <= i1; i += 8) {
        update8(w + i, g + i, m + i, v + i, true, _mm256_setzero_si256(), b1, b2, one_b1, one_b2, vb1h, vb2h, veps,
                valpha, keep);
    }
    if (i < i1) {
        const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int) (i1 - i)),
                                                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        update8(w + i, g + i, m + i, v + i, false, mask, b1, b2, one_b1, one_b2, vb1h, vb2h, veps, valpha, keep);
    }
}

#endif
