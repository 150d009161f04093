/* The gated delta rule's "recurrent" kernel on AVX512 (kernels.h): 16
 * floats a register. delta_net_rows.h is the body; delta_net.c's portable
 * code is the order it keeps, to the bit. Compiled through function
 * attributes, run only where kernels.c finds AVX512F. */
#include "kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define ROWS_TARGET __attribute__((target("avx512f,avx2,fma")))
#define V __m512

ROWS_TARGET static inline V v_zero(void) { return _mm512_setzero_ps(); }
ROWS_TARGET static inline V v_set1(float x) { return _mm512_set1_ps(x); }
ROWS_TARGET static inline V v_load(const float * p) { return _mm512_loadu_ps(p); }
ROWS_TARGET static inline void v_store(float * p, V x) { _mm512_storeu_ps(p, x); }
ROWS_TARGET static inline V v_add(V a, V b) { return _mm512_add_ps(a, b); }
ROWS_TARGET static inline V v_mul(V a, V b) { return _mm512_mul_ps(a, b); }

/* lanes l and l + 8, then l and l + 4, then (0 + 2) + (1 + 3), then tail */
ROWS_TARGET static inline float v_sum(V x, float tail) {
    const __m256 half = _mm256_add_ps(_mm512_castps512_ps256(x),
                                      _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)));
    const __m128 quarter = _mm_add_ps(_mm256_castps256_ps128(half), _mm256_extractf128_ps(half, 1));
    const __m128 pairs = _mm_add_ps(quarter, _mm_movehl_ps(quarter, quarter));
    return _mm_cvtss_f32(_mm_add_ss(pairs, _mm_shuffle_ps(pairs, pairs, 1))) + tail;
}

#include "delta_net_rows.h"

const struct tnn_recurrent_kernels tnn_recurrent_avx512 = { step_rows, back_rows };

#endif
