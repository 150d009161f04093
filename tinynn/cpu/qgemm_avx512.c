/* qgemm on AVX512-VNNI (kernels.h): 16-row panels times 1 to 12 columns
 * at a time.
 *
 * Compiled for AVX512 through function attributes and run only when the
 * CPU reports the features at run time (kernels.c), so the library still
 * loads and runs (on ggml's kernels) on any x86-64 or other CPU. */
#include "kernels.h"
#include "layout.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,f16c,fma")))

AVX512 static void quantize_column(const float * x, int64_t kb, struct tnn_qcol * out) {
    for (int64_t b = 0; b < kb; ++b, x += TNN_QBLOCK, ++out) {
        const __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
        const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
        const __m512 id = _mm512_set1_ps(amax != 0.0f ? 127.0f / amax : 0.0f);
        const __m512 s0 = _mm512_mul_ps(v0, id), s1 = _mm512_mul_ps(v1, id);   /* x / d */
        const __m512i q0 = _mm512_cvtps_epi32(s0), q1 = _mm512_cvtps_epi32(s1);
        const __m512 step = _mm512_set1_ps(128.0f);
        const __m512i r0 = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_sub_ps(s0, _mm512_cvtepi32_ps(q0)), step));
        const __m512i r1 = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_sub_ps(s1, _mm512_cvtepi32_ps(q1)), step));
        _mm_storeu_si128((__m128i *) out->q, _mm512_cvtepi32_epi8(q0));
        _mm_storeu_si128((__m128i *) (out->q + 16), _mm512_cvtepi32_epi8(q1));
        _mm_storeu_si128((__m128i *) out->r, _mm512_cvtepi32_epi8(r0));
        _mm_storeu_si128((__m128i *) (out->r + 16), _mm512_cvtepi32_epi8(r1));
        const int32_t sq = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
        const int32_t sr = _mm512_reduce_add_epi32(_mm512_add_epi32(r0, r1));
        tnn_qcol_finish(out, amax, sq, sr);
    }
}

/* dot += w . x: per lane, the 4 unsigned bytes of w times the 4 signed bytes
 * at x (the same 4 in every lane), summed into int32. GCC does not fold
 * _mm512_set1_epi32 of a load into vpdpbusd's broadcast memory operand
 * ({1to16}): it issues a vpbroadcastd per product, as many instructions as
 * the products themselves. */
typedef int32_t __attribute__((may_alias)) four_bytes;

AVX512 static inline __m512i dpbusd_broadcast(__m512i dot, __m512i w, const int8_t * x) {
#if defined(__GNUC__) && !defined(__clang__)
    __asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(dot) : "v"(w), "m"(*(const four_bytes *) x));
    return dot;
#else
    return _mm512_dpbusd_epi32(dot, w, _mm512_set1_epi32(tnn_load4(x)));
#endif
}

/* The widest tile: 16 rows x NC_MAX columns, NC_MAX int32 and NC_MAX float
 * accumulators in registers (of 32). */
#define NC_MAX 12

/* y[c][0..16) = panel (16 rows x kb blocks) . column c, c < nc.
 * cols: the first column's blocks; column c's at cols + c * kb. */
AVX512 static inline __attribute__((always_inline)) void tile(enum tnn_qpanel_format format, const int levels,
                                                              const uint8_t * panel, int64_t kb,
                                                              const struct tnn_qcol * cols, const int nc,
                                                              float * y, int64_t y_stride) {
    const size_t bb = tnn_qpanel_block_bytes(format);
    __m512 acc[NC_MAX];
#pragma GCC unroll 12
    for (int c = 0; c < nc; ++c) {
        acc[c] = _mm512_setzero_ps();
    }
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    for (int64_t b = 0; b < kb; ++b, panel += bb) {
        __m512i dot[NC_MAX];
        const struct tnn_qcol * col = cols + b;
        /* the int32 dot products with q (times 128, plus those with r for
         * two levels): the sum over the block of w * x / d (* 128), exact
         * (|.| < 2^28) */
        if (format == TNN_QPANEL_Q8_0) {
#pragma GCC unroll 12
            for (int c = 0; c < nc; ++c) {
                dot[c] = _mm512_set1_epi32(col[c * kb].neg128s);
            }
#pragma GCC unroll 8
            for (int g = 0; g < 8; ++g) {
                const __m512i w = _mm512_loadu_si512(panel + 32 + 64 * g);
#pragma GCC unroll 12
                for (int c = 0; c < nc; ++c) {
                    dot[c] = dpbusd_broadcast(dot[c], w, col[c * kb].q + 4 * g);
                }
            }
#pragma GCC unroll 12
            for (int c = 0; c < nc && levels == 2; ++c) {
                dot[c] = _mm512_add_epi32(_mm512_slli_epi32(dot[c], 7), _mm512_set1_epi32(col[c * kb].neg128s_r));
            }
#pragma GCC unroll 8
            for (int g = 0; g < 8 && levels == 2; ++g) {
                const __m512i w = _mm512_loadu_si512(panel + 32 + 64 * g);
#pragma GCC unroll 12
                for (int c = 0; c < nc; ++c) {
                    dot[c] = dpbusd_broadcast(dot[c], w, col[c * kb].r + 4 * g);
                }
            }
        } else {
            __m512i lo[4], hi[4];
#pragma GCC unroll 4
            for (int g = 0; g < 4; ++g) {
                const __m512i packed = _mm512_loadu_si512(panel + 64 + 64 * g);
                lo[g] = _mm512_and_si512(packed, low4);
                hi[g] = _mm512_and_si512(_mm512_srli_epi16(packed, 4), low4);
            }
#pragma GCC unroll 12
            for (int c = 0; c < nc; ++c) {
                dot[c] = _mm512_setzero_si512();
            }
#pragma GCC unroll 4
            for (int g = 0; g < 4; ++g) {
#pragma GCC unroll 12
                for (int c = 0; c < nc; ++c) {
                    dot[c] = dpbusd_broadcast(dot[c], lo[g], col[c * kb].q + 4 * g);
                    dot[c] = dpbusd_broadcast(dot[c], hi[g], col[c * kb].q + 16 + 4 * g);
                }
            }
#pragma GCC unroll 12
            for (int c = 0; c < nc && levels == 2; ++c) {
                dot[c] = _mm512_slli_epi32(dot[c], 7);
            }
#pragma GCC unroll 4
            for (int g = 0; g < 4 && levels == 2; ++g) {
#pragma GCC unroll 12
                for (int c = 0; c < nc; ++c) {
                    dot[c] = dpbusd_broadcast(dot[c], lo[g], col[c * kb].r + 4 * g);
                    dot[c] = dpbusd_broadcast(dot[c], hi[g], col[c * kb].r + 16 + 4 * g);
                }
            }
        }
        const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) panel));
#pragma GCC unroll 12
        for (int c = 0; c < nc; ++c) {
            const __m512 scale = _mm512_mul_ps(
                d, _mm512_set1_ps(levels == 2 ? col[c * kb].d * (1.0f / 128.0f) : col[c * kb].d));
            acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[c]), scale, acc[c]);
        }
        if (format == TNN_QPANEL_Q4_1) {
            /* sum over the block of m * x = m * d_x * sum(q_x) */
            const __m512 m = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (panel + 32)));
#pragma GCC unroll 12
            for (int c = 0; c < nc; ++c) {
                acc[c] = _mm512_fmadd_ps(m, _mm512_set1_ps(col[c * kb].ds), acc[c]);
            }
        }
    }
#pragma GCC unroll 12
    for (int c = 0; c < nc; ++c) {
        _mm512_storeu_ps(y + c * y_stride, acc[c]);
    }
}

/* the cases of a switch written by a macro, a row of them a line */
/* clang-format off */
#define TILE_CASE(F, L, N) \
    case N: tile(F, L, panel, kb, cols, N, y, y_stride); break;

#define TILE_SWITCH(F, L)                                                                  \
    switch (nc) {                                                                          \
        TILE_CASE(F, L, 1) TILE_CASE(F, L, 2) TILE_CASE(F, L, 3) TILE_CASE(F, L, 4)        \
        TILE_CASE(F, L, 5) TILE_CASE(F, L, 6) TILE_CASE(F, L, 7) TILE_CASE(F, L, 8)        \
        TILE_CASE(F, L, 9) TILE_CASE(F, L, 10) TILE_CASE(F, L, 11) TILE_CASE(F, L, 12)     \
        default: break;                                                                    \
    }
/* clang-format on */

typedef void (*tile_fn)(const uint8_t * panel, int64_t kb, const struct tnn_qcol * cols, int nc, float * y,
                        int64_t y_stride);

#define TILE_FN(NAME, F, L)                                                                                     \
    AVX512 static void NAME(const uint8_t * panel, int64_t kb, const struct tnn_qcol * cols, int nc, float * y, \
                            int64_t y_stride) {                                                                 \
        TILE_SWITCH(F, L)                                                                                       \
    }

TILE_FN(tile_q8_0_1, TNN_QPANEL_Q8_0, 1)
TILE_FN(tile_q8_0_2, TNN_QPANEL_Q8_0, 2)
TILE_FN(tile_q4_1_1, TNN_QPANEL_Q4_1, 1)
TILE_FN(tile_q4_1_2, TNN_QPANEL_Q4_1, 2)

AVX512 void tnn_qpanel_quantize_avx512(const float * x, int64_t stride, void * out) {
    uint8_t * o = out;
    int32_t rows[TNN_QPANEL_ROWS][TNN_QBLOCK / 4];   /* each row's 32 bytes, 4 a group */
    const __m512i one = _mm512_set1_epi32(1), offset = _mm512_set1_epi32(0x80);
    for (int r = 0; r < TNN_QPANEL_ROWS; ++r) {
        const __m512 v[2] = { _mm512_loadu_ps(x + r * stride), _mm512_loadu_ps(x + r * stride + 16) };
        const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v[0]), _mm512_abs_ps(v[1])));
        const float d = amax / 127.0f;
        const __m512 id = _mm512_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
        const uint16_t d16 = _cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
        memcpy(o + 2 * r, &d16, 2);
        for (int h = 0; h < 2; ++h) {
            const __m512 y = _mm512_mul_ps(v[h], id);
            const __m512 t = _mm512_roundscale_ps(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
            const __m512 rest = _mm512_sub_ps(y, t);
            __m512i q = _mm512_cvttps_epi32(t);
            q = _mm512_mask_add_epi32(q, _mm512_cmp_ps_mask(rest, _mm512_set1_ps(0.5f), _CMP_GE_OQ), q, one);
            q = _mm512_mask_sub_epi32(q, _mm512_cmp_ps_mask(rest, _mm512_set1_ps(-0.5f), _CMP_LE_OQ), q, one);
            _mm_storeu_si128((__m128i *) &rows[r][4 * h], _mm512_cvtepi32_epi8(_mm512_xor_si512(q, offset)));
        }
    }
    for (int g = 0; g < TNN_QBLOCK / 4; ++g) {
        for (int r = 0; r < TNN_QPANEL_ROWS; ++r) {
            memcpy(o + 32 + g * 64 + r * 4, &rows[r][g], 4);
        }
    }
}

AVX512 void tnn_qpanel_quantize_columns_avx512(const float * x, int64_t stride, void * out) {
    uint8_t * o = out;
    __m512 v[TNN_QBLOCK], amax = _mm512_setzero_ps();   /* lane r: the panel's row r */
    for (int j = 0; j < TNN_QBLOCK; ++j) {
        v[j] = _mm512_loadu_ps(x + j * stride);
        amax = _mm512_max_ps(amax, _mm512_abs_ps(v[j]));
    }
    const __m512 d = _mm512_div_ps(amax, _mm512_set1_ps(127.0f));
    const __m512 id = _mm512_maskz_div_ps(_mm512_cmp_ps_mask(d, _mm512_setzero_ps(), _CMP_NEQ_OQ),
                                          _mm512_set1_ps(1.0f), d);
    _mm256_storeu_si256((__m256i *) o, _mm512_cvtps_ph(d, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    const __m512i one = _mm512_set1_epi32(1), offset = _mm512_set1_epi32(0x80), low = _mm512_set1_epi32(0xff);
    for (int g = 0; g < TNN_QBLOCK / 4; ++g) {
        __m512i group = _mm512_setzero_si512();   /* each row's 4 bytes of values 4g .. 4g + 3 */
        for (int u = 0; u < 4; ++u) {
            const __m512 y = _mm512_mul_ps(v[4 * g + u], id);
            const __m512 t = _mm512_roundscale_ps(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
            const __m512 rest = _mm512_sub_ps(y, t);
            __m512i q = _mm512_cvttps_epi32(t);
            q = _mm512_mask_add_epi32(q, _mm512_cmp_ps_mask(rest, _mm512_set1_ps(0.5f), _CMP_GE_OQ), q, one);
            q = _mm512_mask_sub_epi32(q, _mm512_cmp_ps_mask(rest, _mm512_set1_ps(-0.5f), _CMP_LE_OQ), q, one);
            q = _mm512_and_si512(_mm512_xor_si512(q, offset), low);
            group = _mm512_or_si512(group, _mm512_slli_epi32(q, 8 * u));
        }
        _mm512_storeu_si512(o + 32 + g * 64, group);
    }
}

AVX512 void tnn_qgemm_avx512_quantize(const float * x, int64_t kb, struct tnn_qcol * out) {
    quantize_column(x, kb, out);
}

AVX512 void tnn_qgemm_avx512_panels(int format, int levels, const uint8_t * panels, int64_t kb, int64_t n_panels,
                                    const struct tnn_qcol * cols, int64_t n, float * y, int64_t y_stride) {
    const tile_fn tile_at = format == TNN_QPANEL_Q8_0 ? (levels == 2 ? tile_q8_0_2 : tile_q8_0_1)
                                                      : (levels == 2 ? tile_q4_1_2 : tile_q4_1_1);
    const size_t panel_bytes = (size_t) kb * tnn_qpanel_block_bytes(format);
    for (int64_t c = 0; c < n; c += NC_MAX) {
        const int nc = (int) (n - c < NC_MAX ? n - c : NC_MAX);
        for (int64_t p = 0; p < n_panels; ++p) {
            tile_at(panels + (size_t) p * panel_bytes, kb, cols + c * kb, nc,
                    y + c * y_stride + p * TNN_QPANEL_ROWS, y_stride);
        }
    }
}

AVX512 void tnn_qgemm_quantize_avx512(const float * x, int64_t x_stride, int64_t k, int64_t c0, int64_t c1,
                                      struct tnn_qcol * q) {
    for (int64_t c = c0; c < c1; ++c) {
        quantize_column(x + c * x_stride, k / TNN_QBLOCK, q + c * (k / TNN_QBLOCK));
    }
}

void tnn_qgemm_avx512(int levels, const struct tnn_qpanels * a, int64_t rows, int64_t k,
                      const struct tnn_qgemm_columns * x, int64_t n, float * y, int64_t y_stride, void * scratch,
                      int ith, int nth) {
    const int64_t kb = k / TNN_QBLOCK;
    int64_t c0, c1, p0, p1;
    tnn_qgemm_share(n, rows / TNN_QPANEL_ROWS, NC_MAX, a->pack != NULL ? a->align : 0, ith, nth, &c0, &c1, &p0,
                    &p1);
    const struct tnn_qcol * q = tnn_qgemm_columns_quantized(x, kb, c0, c1, quantize_column, scratch);
    const struct tnn_qgemm_layout l = tnn_qgemm_layout(k, n, x->quantized != NULL);
    /* a pass of panels at a time, in L2 while every column tile reads it */
    const int64_t pass = tnn_qpanels_pass(a, (size_t) kb * tnn_qpanel_block_bytes(a->format));
    for (int64_t pp = p0; pp < p1; pp += pass) {
        const int64_t pe = pp + pass < p1 ? pp + pass : p1;
        const uint8_t * panels = tnn_qpanels_get(a, pp, pe, k, &l, scratch);
        tnn_qgemm_avx512_panels(a->format, levels, panels, kb, pe - pp, q, c1 - c0,
                                y + c0 * y_stride + pp * TNN_QPANEL_ROWS, y_stride);
    }
}

#endif
