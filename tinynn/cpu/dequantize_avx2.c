/* ggml's dequantization (its to_float) of the K-quants that Q4_K_M files
 * store most of their matrices in, on AVX2: a matrix kept as stored is
 * packed through it (models/stored_panels.c), and ggml-base's own is
 * compiled for any x86-64 (SSE2), which cost packing a Q6_K matrix for its
 * W^T product a fifth of the product. The bits are ggml's: the same float
 * operations in the same order, none contracted (this file is compiled
 * with -ffp-contract=off: ggml-base's are separate multiplies and
 * subtractions). */
#include "kernels.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,f16c")))

/* ggml's Q6_K block (ggml-common.h): 256 values as 128 bytes of low
 * nibbles, 64 of 2-bit high parts, 16 int8 scales (one per 16 values) and
 * an FP16 d; value = d * scale * (q - 32), q the 6-bit code. */
#define Q6_K_BYTES 210

AVX2 void tnn_dequantize_q6_K_avx2(const void * blocks, float * y, int64_t n) {
    const __m256i low4 = _mm256_set1_epi8(0x0f), low2 = _mm256_set1_epi8(3), bias = _mm256_set1_epi8(32);
    const uint8_t * b = blocks;
    for (int64_t i = 0; i < n / 256; ++i, b += Q6_K_BYTES) {
        uint16_t d_bits;
        memcpy(&d_bits, b + 208, 2);
        const float d = _cvtsh_ss(d_bits);
        const uint8_t *ql = b, *qh = b + 128;
        const int8_t * sc = (const int8_t *) (b + 192);
        /* each half: 128 values from 64 low-nibble bytes and 32 high bytes,
         * in four runs of 32 (ggml's dequantize_row_q6_K's q1..q4) */
        for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8, y += 128) {
            const __m256i l0 = _mm256_loadu_si256((const __m256i *) ql);
            const __m256i l1 = _mm256_loadu_si256((const __m256i *) (ql + 32));
            const __m256i h = _mm256_loadu_si256((const __m256i *) qh);
            /* 16-bit shifts: the bits a byte takes from its neighbour are masked off */
            const __m256i q[4] = {
                _mm256_or_si256(_mm256_and_si256(l0, low4), _mm256_slli_epi16(_mm256_and_si256(h, low2), 4)),
                _mm256_or_si256(_mm256_and_si256(l1, low4),
                                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 2), low2), 4)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low4),
                                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 4), low2), 4)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low4),
                                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 6), low2), 4)),
            };
            for (int run = 0; run < 4; ++run) {
                const __m256i centred = _mm256_sub_epi8(q[run], bias);
                for (int g = 0; g < 2; ++g) {
                    /* d * scale exact in float (11 x 8 bits), then one rounding, as ggml */
                    const __m256 scale = _mm256_set1_ps(d * (float) sc[2 * run + g]);
                    const __m128i part = g ? _mm256_extracti128_si256(centred, 1)
                                           : _mm256_castsi256_si128(centred);
                    const __m256 lo = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(part));
                    const __m256 hi = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(part, 8)));
                    _mm256_storeu_ps(y + 32 * run + 16 * g, _mm256_mul_ps(lo, scale));
                    _mm256_storeu_ps(y + 32 * run + 16 * g + 8, _mm256_mul_ps(hi, scale));
                }
            }
        }
    }
}

/* ggml's Q4_K block: FP16 d and dmin, 12 bytes of 6-bit scales and
 * minimums for its 8 runs of 32 values, 128 bytes of nibbles (a run's 32
 * low nibbles, then the next run's 32 high ones); value = d * scale * q -
 * dmin * min. */
#define Q4_K_BYTES 144

/* Run j's 6-bit scale and minimum (ggml's get_scale_min_k4). */
static inline void q4_K_scale_min(int j, const uint8_t * q, int * scale, int * min) {
    if (j < 4) {
        *scale = q[j] & 63;
        *min = q[j + 4] & 63;
    } else {
        *scale = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        *min = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

/* 32 nibbles (bytes 0..15) as d * q - m, 8 a register. */
AVX2 static inline void q4_K_run(__m256i nibbles, float d, float m, float * y) {
    const __m256 dv = _mm256_set1_ps(d), mv = _mm256_set1_ps(m);
    const __m128i lo = _mm256_castsi256_si128(nibbles), hi = _mm256_extracti128_si256(nibbles, 1);
    const __m128i parts[4] = { lo, _mm_srli_si128(lo, 8), hi, _mm_srli_si128(hi, 8) };
    for (int i = 0; i < 4; ++i) {
        const __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(parts[i]));
        _mm256_storeu_ps(y + 8 * i, _mm256_sub_ps(_mm256_mul_ps(q, dv), mv));
    }
}

AVX2 void tnn_dequantize_q4_K_avx2(const void * blocks, float * y, int64_t n) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    const uint8_t * b = blocks;
    for (int64_t i = 0; i < n / 256; ++i, b += Q4_K_BYTES) {
        uint16_t d_bits, dmin_bits;
        memcpy(&d_bits, b, 2);
        memcpy(&dmin_bits, b + 2, 2);
        const float d = _cvtsh_ss(d_bits), dmin = _cvtsh_ss(dmin_bits);
        const uint8_t *scales = b + 4, *qs = b + 16;
        for (int j = 0; j < 8; j += 2, qs += 32, y += 64) {
            int s1, m1, s2, m2;
            q4_K_scale_min(j, scales, &s1, &m1);
            q4_K_scale_min(j + 1, scales, &s2, &m2);
            const __m256i q = _mm256_loadu_si256((const __m256i *) qs);
            /* d * scale and dmin * min exact in float (11 x 6 bits), as ggml's */
            q4_K_run(_mm256_and_si256(q, low4), d * (float) s1, dmin * (float) m1, y);
            q4_K_run(_mm256_and_si256(_mm256_srli_epi16(q, 4), low4), d * (float) s2, dmin * (float) m2, y + 32);
        }
    }
}

/* ggml's MXFP4 block (ggml-common.h): an E8M0 exponent e and 32 values as
 * 16 bytes of nibbles (value j the low nibble of byte j, value j + 16 its
 * high one), each an E2M1 code; value = kvalues_mxfp4[code] * 2^(e - 128).
 * The products are exact (a small integer by a power of two), so any
 * order gives ggml's bits. */
#define MXFP4_BYTES 17

static float e8m0_half(uint8_t e) {
    const uint32_t bits = e < 2 ? 0x00200000u << e : (uint32_t) (e - 1) << 23;
    float d;
    memcpy(&d, &bits, sizeof(d));
    return d;
}

/* 16 int8 codes' values times d, into y[0..15] */
AVX2 static void mxfp4_run(__m128i values, __m256 d, float * y) {
    _mm256_storeu_ps(y, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(values)), d));
    _mm256_storeu_ps(y + 8, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(values, 8))), d));
}

AVX2 void tnn_dequantize_mxfp4_avx2(const void * blocks, float * y, int64_t n) {
    /* ggml's kvalues_mxfp4: twice E2M1's values, as int8 */
    const __m128i table = _mm_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
    const __m128i low4 = _mm_set1_epi8(0x0f);
    const uint8_t * b = blocks;
    for (int64_t i = 0; i < n / 32; ++i, b += MXFP4_BYTES, y += 32) {
        const __m256 d = _mm256_set1_ps(e8m0_half(b[0]));
        const __m128i q = _mm_loadu_si128((const __m128i *) (b + 1));
        mxfp4_run(_mm_shuffle_epi8(table, _mm_and_si128(q, low4)), d, y);
        mxfp4_run(_mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(q, 4), low4)), d, y + 16);
    }
}

#endif
