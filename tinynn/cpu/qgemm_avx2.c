/* qgemm on 256-bit registers (kernels.h): 16-row panels times 1 to NC_MAX
 * columns at a time, in two variants that share everything but the int8
 * multiply-add:
 *   avxvnni  vpdpbusd (AVX-VNNI, Alder Lake and later, Zen 5), the
 *            instruction the panels are laid out for, as tnn_qgemm_avx512
 *            uses it, on half as many rows per register
 *   avx2     vpmaddubsw + vpmaddwd (every AVX2 CPU from Haswell and Zen 1)
 * A 16-row panel is two ymm registers per group of 4 values: rows 0-7 and
 * rows 8-15. Each block's int32 dot products are exact, and the float
 * arithmetic around them (the column quantization, the per-block scaled
 * adds in block order) is tnn_qgemm_avx512's operation for operation, so
 * both variants give its bits exactly.
 *
 * Compiled through function attributes and run only when the CPU reports
 * the features at run time (kernels.c), so the library still loads and runs
 * (on ggml's kernels) on any x86-64 or other CPU. */
#include "kernels.h"
#include "layout.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,fma,f16c")))
#define AVXVNNI __attribute__((target("avx2,fma,f16c,avxvnni")))
#define INLINE static inline __attribute__((always_inline))

/* The largest |value| of 8 floats, as _mm512_reduce_max_ps finds it (a max
 * of magnitudes: exact in any order). */
AVX2 INLINE float reduce_max8(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
    m = _mm_max_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(1, 0, 3, 2)));
    m = _mm_max_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtss_f32(m);
}

AVX2 INLINE int32_t reduce_add8_epi32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_extracti128_si256(v, 1), _mm256_castsi256_si128(v));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

/* The low bytes of 32 int32 (a, b, c, d: 8 each) in order, as
 * _mm512_cvtepi32_epi8 truncates: masked to a byte, the packs saturate
 * nothing. The packs interleave the 128-bit lanes; the permute undoes it. */
AVX2 INLINE __m256i low_bytes(__m256i a, __m256i b, __m256i c, __m256i d) {
    const __m256i byte = _mm256_set1_epi32(0xff);
    const __m256i ab = _mm256_packus_epi32(_mm256_and_si256(a, byte), _mm256_and_si256(b, byte));
    const __m256i cd = _mm256_packus_epi32(_mm256_and_si256(c, byte), _mm256_and_si256(d, byte));
    return _mm256_permutevar8x32_epi32(_mm256_packus_epi16(ab, cd), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* A column's blocks as layout.h says, by the arithmetic of
 * tnn_qgemm_avx512's quantize_column, 8 values to a register. */
AVX2 static void quantize_column(const float * x, int64_t kb, struct tnn_qcol * out) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (int64_t b = 0; b < kb; ++b, x += TNN_QBLOCK, ++out) {
        __m256 v[4];
        __m256 mx = _mm256_setzero_ps();
        for (int i = 0; i < 4; ++i) {
            v[i] = _mm256_loadu_ps(x + 8 * i);
            mx = _mm256_max_ps(mx, _mm256_andnot_ps(sign, v[i]));
        }
        const float amax = reduce_max8(mx);
        const __m256 id = _mm256_set1_ps(amax != 0.0f ? 127.0f / amax : 0.0f);
        const __m256 step = _mm256_set1_ps(128.0f);
        __m256i q[4], r[4];
        for (int i = 0; i < 4; ++i) {
            const __m256 s = _mm256_mul_ps(v[i], id);                                     /* x / d */
            q[i] = _mm256_cvtps_epi32(s);
            r[i] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_sub_ps(s, _mm256_cvtepi32_ps(q[i])), step));
        }
        _mm256_storeu_si256((__m256i *) out->q, low_bytes(q[0], q[1], q[2], q[3]));
        _mm256_storeu_si256((__m256i *) out->r, low_bytes(r[0], r[1], r[2], r[3]));
        const int32_t sq = reduce_add8_epi32(
            _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3])));
        const int32_t sr = reduce_add8_epi32(
            _mm256_add_epi32(_mm256_add_epi32(r[0], r[1]), _mm256_add_epi32(r[2], r[3])));
        tnn_qcol_finish(out, amax, sq, sr);
    }
}

/* The widest tile: 16 rows x NC_MAX columns, 2 NC_MAX int32 accumulators
 * in registers (of 16); the float sums, touched once a block, may spill. */
#define NC_MAX 4

/* acc[c] += the block's products of column c (tnn_qgemm_avx512's order):
 * the int32 dot times d_w * scale_x, then for Q4_1 m_w * d_x sum(x / d_x). */
AVX2 INLINE void add_block(enum tnn_qpanel_format format, const int levels, const uint8_t * panel,
                           const struct tnn_qcol * col, int64_t kb, const int nc, __m256i dot[][2],
                           __m256 acc[][2]) {
    const __m256 d0 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) panel));
    const __m256 d1 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (panel + 16)));
#pragma GCC unroll 12
    for (int c = 0; c < nc; ++c) {
        const __m256 s = _mm256_set1_ps(levels == 2 ? col[c * kb].d * (1.0f / 128.0f) : col[c * kb].d);
        acc[c][0] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[c][0]), _mm256_mul_ps(d0, s), acc[c][0]);
        acc[c][1] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[c][1]), _mm256_mul_ps(d1, s), acc[c][1]);
    }
    if (format == TNN_QPANEL_Q4_1) {
        const __m256 m0 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (panel + 32)));
        const __m256 m1 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (panel + 48)));
#pragma GCC unroll 12
        for (int c = 0; c < nc; ++c) {
            const __m256 ds = _mm256_set1_ps(col[c * kb].ds);
            acc[c][0] = _mm256_fmadd_ps(m0, ds, acc[c][0]);
            acc[c][1] = _mm256_fmadd_ps(m1, ds, acc[c][1]);
        }
    }
}

/* ---- avx2: vpmaddubsw multiplies u8 by s8 and adds pairs into int16 ------ *
 *
 * Q8_0's panels hold w + 128 (0..255) for vpdpbusd; against x in
 * [-127, 127] a pair could reach 2 * 255 * 127 and saturate int16. So the
 * kernel recovers w (xor 0x80) and multiplies |w| (<= 128, unsigned) by x
 * with w's sign: each pair is at most 2 * 128 * 127 = 32512, exact, and
 * the dot is sum w x directly, what vpdpbusd's sum (w + 128) x plus
 * -128 sum(x) comes to. Q4_1's nibbles are 0..15: a pair is at most
 * 2 * 15 * 127 = 3810, so the 8 products of a block (4 groups, low and
 * high nibbles) add up in int16 (<= 30480) before one vpmaddwd. */

/* y[c][0..16) = panel (16 rows x kb blocks) . column c, c < nc.
 * cols: the first column's blocks; column c's at cols + c * kb. */
AVX2 INLINE void tile_avx2(enum tnn_qpanel_format format, const int levels, const uint8_t * panel, int64_t kb,
                           const struct tnn_qcol * cols, const int nc, float * y, int64_t y_stride) {
    const size_t bb = tnn_qpanel_block_bytes(format);
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256i flip = _mm256_set1_epi8((char) 0x80);
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    __m256 acc[NC_MAX][2];
#pragma GCC unroll 12
    for (int c = 0; c < nc; ++c) {
        acc[c][0] = acc[c][1] = _mm256_setzero_ps();
    }
    for (int64_t b = 0; b < kb; ++b, panel += bb) {
        const struct tnn_qcol * col = cols + b;
        __m256i dot[NC_MAX][2];
#pragma GCC unroll 12
        for (int c = 0; c < nc; ++c) {
            dot[c][0] = dot[c][1] = _mm256_setzero_si256();
        }
        if (format == TNN_QPANEL_Q8_0) {
            /* sum w q, then for two levels 128 sum w q + sum w r */
            for (int level = 0; level < levels; ++level) {
#pragma GCC unroll 12
                for (int c = 0; c < nc && level == 1; ++c) {
                    dot[c][0] = _mm256_slli_epi32(dot[c][0], 7);
                    dot[c][1] = _mm256_slli_epi32(dot[c][1], 7);
                }
#pragma GCC unroll 8
                for (int g = 0; g < 8; ++g) {
                    const __m256i w0 = _mm256_xor_si256(
                        _mm256_loadu_si256((const __m256i *) (panel + 32 + 64 * g)), flip);
                    const __m256i w1 = _mm256_xor_si256(
                        _mm256_loadu_si256((const __m256i *) (panel + 64 + 64 * g)), flip);
                    const __m256i a0 = _mm256_abs_epi8(w0), a1 = _mm256_abs_epi8(w1);
#pragma GCC unroll 12
                    for (int c = 0; c < nc; ++c) {
                        const int8_t * x = level == 0 ? col[c * kb].q : col[c * kb].r;
                        const __m256i xb = _mm256_set1_epi32(tnn_load4(x + 4 * g));
                        dot[c][0] = _mm256_add_epi32(
                            dot[c][0],
                            _mm256_madd_epi16(_mm256_maddubs_epi16(a0, _mm256_sign_epi8(xb, w0)), ones));
                        dot[c][1] = _mm256_add_epi32(
                            dot[c][1],
                            _mm256_madd_epi16(_mm256_maddubs_epi16(a1, _mm256_sign_epi8(xb, w1)), ones));
                    }
                }
            }
        } else {
            /* sum over nibbles, then for two levels 128 of that + the r's */
            for (int level = 0; level < levels; ++level) {
                __m256i s16[NC_MAX][2];
#pragma GCC unroll 12
                for (int c = 0; c < nc; ++c) {
                    s16[c][0] = s16[c][1] = _mm256_setzero_si256();
                }
#pragma GCC unroll 2
                for (int g = 0; g < 4; ++g) {
                    const __m256i p0 = _mm256_loadu_si256((const __m256i *) (panel + 64 + 64 * g));
                    const __m256i p1 = _mm256_loadu_si256((const __m256i *) (panel + 96 + 64 * g));
                    const __m256i lo0 = _mm256_and_si256(p0, low4),
                                  hi0 = _mm256_and_si256(_mm256_srli_epi16(p0, 4), low4);
                    const __m256i lo1 = _mm256_and_si256(p1, low4),
                                  hi1 = _mm256_and_si256(_mm256_srli_epi16(p1, 4), low4);
#pragma GCC unroll 12
                    for (int c = 0; c < nc; ++c) {
                        const int8_t * x = level == 0 ? col[c * kb].q : col[c * kb].r;
                        const __m256i xl = _mm256_set1_epi32(tnn_load4(x + 4 * g));
                        const __m256i xh = _mm256_set1_epi32(tnn_load4(x + 16 + 4 * g));
                        s16[c][0] = _mm256_add_epi16(s16[c][0], _mm256_add_epi16(_mm256_maddubs_epi16(lo0, xl),
                                                                                 _mm256_maddubs_epi16(hi0, xh)));
                        s16[c][1] = _mm256_add_epi16(s16[c][1], _mm256_add_epi16(_mm256_maddubs_epi16(lo1, xl),
                                                                                 _mm256_maddubs_epi16(hi1, xh)));
                    }
                }
#pragma GCC unroll 12
                for (int c = 0; c < nc; ++c) {
                    dot[c][0] = _mm256_add_epi32(_mm256_slli_epi32(dot[c][0], 7),
                                                 _mm256_madd_epi16(s16[c][0], ones));
                    dot[c][1] = _mm256_add_epi32(_mm256_slli_epi32(dot[c][1], 7),
                                                 _mm256_madd_epi16(s16[c][1], ones));
                }
            }
        }
        add_block(format, levels, panel, col, kb, nc, dot, acc);
    }
#pragma GCC unroll 12
    for (int c = 0; c < nc; ++c) {
        _mm256_storeu_ps(y + c * y_stride, acc[c][0]);
        _mm256_storeu_ps(y + c * y_stride + 8, acc[c][1]);
    }
}

/* ---- avxvnni: vpdpbusd, as tnn_qgemm_avx512 ---------------------------- *
 *
 * The same int32 sums as there: for Q8_0 sum (w + 128) q starting from
 * -128 sum(q), which cancels the offset. */

AVXVNNI INLINE void tile_vnni(enum tnn_qpanel_format format, const int levels, const uint8_t * panel, int64_t kb,
                              const struct tnn_qcol * cols, const int nc, float * y, int64_t y_stride) {
    const size_t bb = tnn_qpanel_block_bytes(format);
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    __m256 acc[NC_MAX][2];
#pragma GCC unroll 12
    for (int c = 0; c < nc; ++c) {
        acc[c][0] = acc[c][1] = _mm256_setzero_ps();
    }
    for (int64_t b = 0; b < kb; ++b, panel += bb) {
        const struct tnn_qcol * col = cols + b;
        __m256i dot[NC_MAX][2];
        if (format == TNN_QPANEL_Q8_0) {
            for (int level = 0; level < levels; ++level) {
#pragma GCC unroll 12
                for (int c = 0; c < nc; ++c) {
                    const __m256i offset = _mm256_set1_epi32(level == 0 ? col[c * kb].neg128s
                                                                        : col[c * kb].neg128s_r);
                    dot[c][0] = level == 0 ? offset : _mm256_add_epi32(_mm256_slli_epi32(dot[c][0], 7), offset);
                    dot[c][1] = level == 0 ? offset : _mm256_add_epi32(_mm256_slli_epi32(dot[c][1], 7), offset);
                }
#pragma GCC unroll 8
                for (int g = 0; g < 8; ++g) {
                    const __m256i w0 = _mm256_loadu_si256((const __m256i *) (panel + 32 + 64 * g));
                    const __m256i w1 = _mm256_loadu_si256((const __m256i *) (panel + 64 + 64 * g));
#pragma GCC unroll 12
                    for (int c = 0; c < nc; ++c) {
                        const int8_t * x = level == 0 ? col[c * kb].q : col[c * kb].r;
                        const __m256i xb = _mm256_set1_epi32(tnn_load4(x + 4 * g));
                        dot[c][0] = _mm256_dpbusd_avx_epi32(dot[c][0], w0, xb);
                        dot[c][1] = _mm256_dpbusd_avx_epi32(dot[c][1], w1, xb);
                    }
                }
            }
        } else {
#pragma GCC unroll 12
            for (int c = 0; c < nc; ++c) {
                dot[c][0] = dot[c][1] = _mm256_setzero_si256();
            }
            for (int level = 0; level < levels; ++level) {
#pragma GCC unroll 12
                for (int c = 0; c < nc && level == 1; ++c) {
                    dot[c][0] = _mm256_slli_epi32(dot[c][0], 7);
                    dot[c][1] = _mm256_slli_epi32(dot[c][1], 7);
                }
#pragma GCC unroll 4
                for (int g = 0; g < 4; ++g) {
                    const __m256i p0 = _mm256_loadu_si256((const __m256i *) (panel + 64 + 64 * g));
                    const __m256i p1 = _mm256_loadu_si256((const __m256i *) (panel + 96 + 64 * g));
                    const __m256i lo0 = _mm256_and_si256(p0, low4),
                                  hi0 = _mm256_and_si256(_mm256_srli_epi16(p0, 4), low4);
                    const __m256i lo1 = _mm256_and_si256(p1, low4),
                                  hi1 = _mm256_and_si256(_mm256_srli_epi16(p1, 4), low4);
#pragma GCC unroll 12
                    for (int c = 0; c < nc; ++c) {
                        const int8_t * x = level == 0 ? col[c * kb].q : col[c * kb].r;
                        const __m256i xl = _mm256_set1_epi32(tnn_load4(x + 4 * g));
                        const __m256i xh = _mm256_set1_epi32(tnn_load4(x + 16 + 4 * g));
                        dot[c][0] = _mm256_dpbusd_avx_epi32(_mm256_dpbusd_avx_epi32(dot[c][0], lo0, xl), hi0, xh);
                        dot[c][1] = _mm256_dpbusd_avx_epi32(_mm256_dpbusd_avx_epi32(dot[c][1], lo1, xl), hi1, xh);
                    }
                }
            }
        }
        add_block(format, levels, panel, col, kb, nc, dot, acc);
    }
#pragma GCC unroll 12
    for (int c = 0; c < nc; ++c) {
        _mm256_storeu_ps(y + c * y_stride, acc[c][0]);
        _mm256_storeu_ps(y + c * y_stride + 8, acc[c][1]);
    }
}

/* ---- levels = 2 as one int16 a value: vpmaddwd / vpdpwssd ---------------- *
 *
 * For two levels the kernels above multiply each weight twice, by q and by
 * r, and add the int32 dot 128 sum(w q) + sum(w r). The two levels of a
 * column value fit one int16 instead, x16 = 128 q + r: q = round(x / d) is
 * in [-127, 127] and r = round(128 (x / d - q)) in [-64, 64] (x / d - q is
 * exact in float and within half a step), so |x16| <= 127 * 128 + 64 =
 * 16320. With the weights as int16 too (Q8_0: w itself in [-128, 127], the
 * packed w + 128 xor 0x80; Q4_1: the nibbles 0..15), sum(w x16) is that
 * same int32 dot, and exact: a vpmaddwd pair is at most 2 * 128 * 16320 and
 * a block's 32 products at most 32 * 128 * 16320 < 2^27, nowhere near
 * int16 pair saturation (vpmaddwd saturates only -32768 * -32768 pairs) or
 * int32 overflow. For Q8_0 it needs no offset terms: vpdpbusd's
 * -128 sum(q) and -128 sum(r) only cancel its +128. One vpmaddwd (or one
 * AVX-VNNI vpdpwssd) then does 16 products where the int8 path spends a
 * vpsignb, vpmaddubsw and vpmaddwd per 32 and level, twice.
 *
 * The panel is spread once per call into scratch (layout.h), a block as 16
 * pairs of values (t, t + 1), each [16 rows][2 values] int16: two ymm, rows
 * 0-7 and 8-15, so vpmaddwd of one by the column's (x16[t], x16[t + 1])
 * broadcast adds 8 rows' two products, no horizontal adds. Each column's
 * x16 is computed once, after quantize_column, into scratch too. The float
 * steps per block (add_block) are those of levels = 2 above. */

/* The int16 of 16 packed bytes of 8 rows x (bytes 2h, 2h + 1) of a group of
 * [8 rows][4 bytes] v, h = 0 then 1: per 128-bit lane (4 rows) vpshufb puts
 * bytes 0-1 of each row first, bytes 2-3 after; vpermq gathers the lanes'
 * first halves (h = 0, 8 rows) low and the second halves high. */
AVX2 INLINE void pairs_of(__m256i v, const int sign, int16_t * h0, int16_t * h1) {
    const __m256i order = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15, 0, 1, 4, 5, 8, 9,
                                           12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    v = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, order), _MM_SHUFFLE(3, 1, 2, 0));
    const __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
    _mm256_storeu_si256((__m256i *) h0, sign ? _mm256_cvtepi8_epi16(lo) : _mm256_cvtepu8_epi16(lo));
    _mm256_storeu_si256((__m256i *) h1, sign ? _mm256_cvtepi8_epi16(hi) : _mm256_cvtepu8_epi16(hi));
}

/* One panel's kb blocks as int16 into out: block b at out + b * 512, its
 * pair p (values 2p, 2p + 1) at + 32 p, rows 0-7 then 8-15 (16 int16 each). */
AVX2 static void spread16(enum tnn_qpanel_format format, const uint8_t * panel, int64_t kb, int16_t * out) {
    const size_t bb = tnn_qpanel_block_bytes(format);
    const __m256i flip = _mm256_set1_epi8((char) 0x80);
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    for (int64_t b = 0; b < kb; ++b, panel += bb, out += TNN_QSPREAD_BLOCK_BYTES / 2) {
        if (format == TNN_QPANEL_Q8_0) {
            /* group g: values 4g..4g+3 = pairs 2g, 2g + 1; w = (w + 128) ^ 0x80 */
            for (int g = 0; g < 8; ++g) {
                for (int half = 0; half < 2; ++half) {
                    const __m256i v = _mm256_xor_si256(
                        _mm256_loadu_si256((const __m256i *) (panel + 32 + 64 * g + 32 * half)), flip);
                    pairs_of(v, 1, out + 32 * (2 * g) + 16 * half, out + 32 * (2 * g + 1) + 16 * half);
                }
            }
        } else {
            /* group g: low nibbles values 4g..4g+3 (pairs 2g, 2g + 1), high
             * nibbles values 16 + 4g.. (pairs 8 + 2g, 9 + 2g) */
            for (int g = 0; g < 4; ++g) {
                for (int half = 0; half < 2; ++half) {
                    const __m256i v = _mm256_loadu_si256((const __m256i *) (panel + 64 + 64 * g + 32 * half));
                    pairs_of(_mm256_and_si256(v, low4), 0, out + 32 * (2 * g) + 16 * half,
                             out + 32 * (2 * g + 1) + 16 * half);
                    pairs_of(_mm256_and_si256(_mm256_srli_epi16(v, 4), low4), 0,
                             out + 32 * (8 + 2 * g) + 16 * half, out + 32 * (9 + 2 * g) + 16 * half);
                }
            }
        }
    }
}

/* A quantized column's kb blocks as x16 = 128 q + r (32 int16 a block). */
AVX2 static void column16(const struct tnn_qcol * col, int64_t kb, int16_t * out) {
    for (int64_t b = 0; b < kb; ++b, ++col, out += TNN_QBLOCK) {
        for (int h = 0; h < 2; ++h) {
            const __m256i q = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) (col->q + 16 * h)));
            const __m256i r = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) (col->r + 16 * h)));
            _mm256_storeu_si256((__m256i *) (out + 16 * h), _mm256_add_epi16(_mm256_slli_epi16(q, 7), r));
        }
    }
}

static inline int32_t load2x16(const int16_t * p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* y[c][0..16) (+)= nb blocks of panel . column c, c < nc, at levels = 2:
 * spread, those blocks' spread16; x16: column 0's column16 blocks, column
 * c's at + c * kb * 32; cols: the columns' tnn_qcol (scales), as
 * tile_avx2. With more, the sums start from y (the earlier blocks' sums as
 * this wrote them: exact, so the order of the float adds is unchanged).
 * MADD(dot, w, x) adds the int16 pairs' products of w and x to dot. */
#define TILE16(TARGET, NAME, MADD)                                                                               \
    TARGET INLINE void NAME(enum tnn_qpanel_format format, const uint8_t * panel, const int16_t * spread,        \
                            int64_t kb, int64_t nb, int more, const struct tnn_qcol * cols, const int16_t * x16, \
                            const int nc, float * y, int64_t y_stride) {                                         \
        const size_t bb = tnn_qpanel_block_bytes(format);                                                        \
        __m256 acc[NC_MAX][2];                                                                                   \
        _Pragma("GCC unroll 12") for (int c = 0; c < nc; ++c) {                                                  \
            acc[c][0] = more ? _mm256_loadu_ps(y + c * y_stride) : _mm256_setzero_ps();                          \
            acc[c][1] = more ? _mm256_loadu_ps(y + c * y_stride + 8) : _mm256_setzero_ps();                      \
        }                                                                                                        \
        for (int64_t b = 0; b < nb; ++b, panel += bb, spread += TNN_QSPREAD_BLOCK_BYTES / 2) {                   \
            const int16_t * x = x16 + b * TNN_QBLOCK;                                                            \
            __m256i dot[NC_MAX][2];                                                                              \
            _Pragma("GCC unroll 12") for (int c = 0; c < nc; ++c) {                                              \
                dot[c][0] = dot[c][1] = _mm256_setzero_si256();                                                  \
            }                                                                                                    \
            _Pragma("GCC unroll 16") for (int p = 0; p < TNN_QBLOCK / 2; ++p) {                                  \
                const __m256i w0 = _mm256_loadu_si256((const __m256i *) (spread + 32 * p));                      \
                const __m256i w1 = _mm256_loadu_si256((const __m256i *) (spread + 32 * p + 16));                 \
                _Pragma("GCC unroll 12") for (int c = 0; c < nc; ++c) {                                          \
                    const __m256i xb = _mm256_set1_epi32(load2x16(x + c * kb * TNN_QBLOCK + 2 * p));             \
                    dot[c][0] = MADD(dot[c][0], w0, xb);                                                         \
                    dot[c][1] = MADD(dot[c][1], w1, xb);                                                         \
                }                                                                                                \
            }                                                                                                    \
            add_block(format, 2, panel, cols + b, kb, nc, dot, acc);                                             \
        }                                                                                                        \
        _Pragma("GCC unroll 12") for (int c = 0; c < nc; ++c) {                                                  \
            _mm256_storeu_ps(y + c * y_stride, acc[c][0]);                                                       \
            _mm256_storeu_ps(y + c * y_stride + 8, acc[c][1]);                                                   \
        }                                                                                                        \
    }

#define MADD_AVX2(dot, w, x) _mm256_add_epi32(dot, _mm256_madd_epi16(w, x))
#define MADD_VNNI(dot, w, x) _mm256_dpwssd_avx_epi32(dot, w, x)

TILE16(AVX2, tile16_avx2, MADD_AVX2)
TILE16(AVXVNNI, tile16_vnni, MADD_VNNI)

typedef void (*tile16_fn)(const uint8_t * panel, const int16_t * spread, int64_t kb, int64_t nb, int more,
                          const struct tnn_qcol * cols, const int16_t * x16, int nc, float * y, int64_t y_stride);

#define TILE16_CASE(T, F, N) \
    case N: T(F, panel, spread, kb, nb, more, cols, x16, N, y, y_stride); break;

#define TILE16_FN(TARGET, NAME, T, F)                                                                            \
    TARGET static void NAME(const uint8_t * panel, const int16_t * spread, int64_t kb, int64_t nb, int more,     \
                            const struct tnn_qcol * cols, const int16_t * x16, int nc, float * y,                \
                            int64_t y_stride) {                                                                  \
        switch (nc) {                                                                                            \
            TILE16_CASE(T, F, 1) TILE16_CASE(T, F, 2) TILE16_CASE(T, F, 3) TILE16_CASE(T, F, 4) default : break; \
        }                                                                                                        \
    }

TILE16_FN(AVX2, avx2_q8_0_16, tile16_avx2, TNN_QPANEL_Q8_0)
TILE16_FN(AVXVNNI, vnni_q8_0_16, tile16_vnni, TNN_QPANEL_Q8_0)
TILE16_FN(AVXVNNI, vnni_q4_1_16, tile16_vnni, TNN_QPANEL_Q4_1)

/* By format, where measured faster than the int8 kernels (a Xeon with
 * both, one thread, 16 x 576..1536 x 256): avx2 Q8_0 46 against 30 GMAC/s;
 * avx2 Q4_1 45 against 49 (its int8 products add up in int16 before one
 * vpmaddwd), so not there; avxvnni 83 against 77 (Q8_0), 80 against 71
 * (Q4_1) up to k = K16_MAX_VNNI, and slower beyond (the head's k = 49152:
 * 59 against 69, its columns' many blocks read from farther away). */
static const tile16_fn avx2_tiles16[2] = { avx2_q8_0_16, NULL };
static const tile16_fn vnni_tiles16[2] = { vnni_q8_0_16, vnni_q4_1_16 };
#define K16_MAX_VNNI 4096

/* ---- one function per (variant, format, levels), nc by a switch --------- */

typedef void (*tile_fn)(const uint8_t * panel, int64_t kb, const struct tnn_qcol * cols, int nc, float * y,
                        int64_t y_stride);

#define TILE_CASE(T, F, L, N) \
    case N: T(F, L, panel, kb, cols, N, y, y_stride); break;

#define TILE_FN(TARGET, NAME, T, F, L)                                                                          \
    TARGET static void NAME(const uint8_t * panel, int64_t kb, const struct tnn_qcol * cols, int nc, float * y, \
                            int64_t y_stride) {                                                                 \
        switch (nc) {                                                                                           \
            TILE_CASE(T, F, L, 1)                                                                               \
            TILE_CASE(T, F, L, 2) TILE_CASE(T, F, L, 3) TILE_CASE(T, F, L, 4) default : break;                  \
        }                                                                                                       \
    }

TILE_FN(AVX2, avx2_q8_0_1, tile_avx2, TNN_QPANEL_Q8_0, 1)
TILE_FN(AVX2, avx2_q8_0_2, tile_avx2, TNN_QPANEL_Q8_0, 2)
TILE_FN(AVX2, avx2_q4_1_1, tile_avx2, TNN_QPANEL_Q4_1, 1)
TILE_FN(AVX2, avx2_q4_1_2, tile_avx2, TNN_QPANEL_Q4_1, 2)
TILE_FN(AVXVNNI, vnni_q8_0_1, tile_vnni, TNN_QPANEL_Q8_0, 1)
TILE_FN(AVXVNNI, vnni_q8_0_2, tile_vnni, TNN_QPANEL_Q8_0, 2)
TILE_FN(AVXVNNI, vnni_q4_1_1, tile_vnni, TNN_QPANEL_Q4_1, 1)
TILE_FN(AVXVNNI, vnni_q4_1_2, tile_vnni, TNN_QPANEL_Q4_1, 2)

/* by format * 2 + levels - 1 */
static const tile_fn avx2_tiles[4] = { avx2_q8_0_1, avx2_q8_0_2, avx2_q4_1_1, avx2_q4_1_2 };
static const tile_fn vnni_tiles[4] = { vnni_q8_0_1, vnni_q8_0_2, vnni_q4_1_1, vnni_q4_1_2 };

AVX2 void tnn_qpanel_quantize_avx2(const float * x, int64_t stride, void * out) {
    uint8_t * o = out;
    const __m256 sign = _mm256_set1_ps(-0.0f), half = _mm256_set1_ps(0.5f), minus_half = _mm256_set1_ps(-0.5f);
    const __m256 one = _mm256_set1_ps(1.0f);
    for (int r = 0; r < TNN_QPANEL_ROWS; ++r) {
        __m256 v[4], m = _mm256_setzero_ps();
        for (int i = 0; i < 4; ++i) {
            v[i] = _mm256_loadu_ps(x + r * stride + 8 * i);
            m = _mm256_max_ps(m, _mm256_andnot_ps(sign, v[i]));
        }
        __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        m4 = _mm_max_ss(m4, _mm_shuffle_ps(m4, m4, 1));
        const float d = _mm_cvtss_f32(m4) / 127.0f;
        const __m256 id = _mm256_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
        const uint16_t d16 = _cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
        memcpy(o + 2 * r, &d16, 2);
        int32_t q[TNN_QBLOCK];
        for (int i = 0; i < 4; ++i) {
            const __m256 y = _mm256_mul_ps(v[i], id);
            __m256 t = _mm256_round_ps(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
            const __m256 rest = _mm256_sub_ps(y, t);
            t = _mm256_add_ps(t, _mm256_and_ps(_mm256_cmp_ps(rest, half, _CMP_GE_OQ), one));
            t = _mm256_sub_ps(t, _mm256_and_ps(_mm256_cmp_ps(rest, minus_half, _CMP_LE_OQ), one));
            _mm256_storeu_si256((__m256i *) (q + 8 * i), _mm256_cvttps_epi32(t));
        }
        for (int j = 0; j < TNN_QBLOCK; ++j) {
            o[32 + (j / 4) * 64 + r * 4 + j % 4] = (uint8_t) ((int8_t) q[j] ^ 0x80);
        }
    }
}

AVX2 void tnn_qpanel_quantize_columns_avx2(const float * x, int64_t stride, void * out) {
    uint8_t * o = out;
    const __m256 sign = _mm256_set1_ps(-0.0f), half = _mm256_set1_ps(0.5f), minus_half = _mm256_set1_ps(-0.5f);
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256i offset = _mm256_set1_epi32(0x80), low = _mm256_set1_epi32(0xff);
    for (int h = 0; h < TNN_QPANEL_ROWS / 8; ++h) {   /* lane r: the panel's row 8 h + r */
        __m256 v[TNN_QBLOCK], m = _mm256_setzero_ps();
        for (int j = 0; j < TNN_QBLOCK; ++j) {
            v[j] = _mm256_loadu_ps(x + j * stride + 8 * h);
            m = _mm256_max_ps(m, _mm256_andnot_ps(sign, v[j]));
        }
        const __m256 d = _mm256_div_ps(m, _mm256_set1_ps(127.0f));
        const __m256 id = _mm256_and_ps(_mm256_cmp_ps(d, _mm256_setzero_ps(), _CMP_NEQ_OQ), _mm256_div_ps(one, d));
        _mm_storeu_si128((__m128i *) (o + 16 * h), _mm256_cvtps_ph(d, _MM_FROUND_TO_NEAREST_INT));
        for (int g = 0; g < TNN_QBLOCK / 4; ++g) {
            __m256i group = _mm256_setzero_si256();
            for (int u = 0; u < 4; ++u) {
                const __m256 y = _mm256_mul_ps(v[4 * g + u], id);
                __m256 t = _mm256_round_ps(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
                const __m256 rest = _mm256_sub_ps(y, t);
                t = _mm256_add_ps(t, _mm256_and_ps(_mm256_cmp_ps(rest, half, _CMP_GE_OQ), one));
                t = _mm256_sub_ps(t, _mm256_and_ps(_mm256_cmp_ps(rest, minus_half, _CMP_LE_OQ), one));
                const __m256i q = _mm256_and_si256(_mm256_xor_si256(_mm256_cvttps_epi32(t), offset), low);
                group = _mm256_or_si256(group, _mm256_slli_epi32(q, 8 * u));
            }
            _mm256_storeu_si256((__m256i *) (o + 32 + g * 64 + 32 * h), group);
        }
    }
}

/* tnn_qgemm_avx512's walk, with its tiles NC_MAX columns wide. */
AVX2 static void qgemm(const tile_fn * tiles, const tile16_fn * tiles16, int64_t k16_max, int levels,
                       const struct tnn_qpanels * a, int64_t rows, int64_t k, const struct tnn_qgemm_columns * x,
                       int64_t n, float * y, int64_t y_stride, void * scratch, int ith, int nth) {
    const int format = a->format;
    const tile_fn tile_at = tiles[(format == TNN_QPANEL_Q4_1) * 2 + (levels == 2)];
    const int64_t kb = k / TNN_QBLOCK;
    const int64_t n_panels = rows / TNN_QPANEL_ROWS;
    const size_t panel_bytes = (size_t) kb * tnn_qpanel_block_bytes(format);
    int64_t c0, c1, p0, p1;
    tnn_qgemm_share(n, n_panels, NC_MAX, a->pack != NULL ? a->align : 0, ith, nth, &c0, &c1, &p0, &p1);
    const struct tnn_qcol * q = tnn_qgemm_columns_quantized(x, kb, c0, c1, quantize_column, scratch);
    const tile16_fn tile16_at = tiles16[format == TNN_QPANEL_Q4_1];
    const bool spread_columns = levels == 2 && tile16_at != NULL && k <= k16_max;
    const struct tnn_qgemm_layout l = tnn_qgemm_layout(k, n, x->quantized != NULL);
    int16_t * spread = (int16_t *) ((uint8_t *) scratch + l.spread);
    int16_t * x16 = (int16_t *) ((uint8_t *) scratch + l.x16);
    if (spread_columns) {
        /* the columns as int16, then each panel spread once for all of them */
        for (int64_t c = c0; c < c1; ++c) {
            column16(q + (c - c0) * kb, kb, x16 + (c - c0) * kb * TNN_QBLOCK);
        }
    }
    const int64_t pass = tnn_qpanels_pass(a, panel_bytes);
    for (int64_t pp = p0; pp < p1; pp += pass) {
        const int64_t pe = pp + pass < p1 ? pp + pass : p1;
        const uint8_t * panels = tnn_qpanels_get(a, pp, pe, k, &l, scratch);
        if (spread_columns) {
            /* by KC blocks of a panel, whose spread (32 KB) stays in L1 while
             * the column tiles go over it */
            enum { KC = 32 };
            for (int64_t p = pp; p < pe; ++p) {
                for (int64_t b0 = 0; b0 < kb; b0 += KC) {
                    const int64_t nb = kb - b0 < KC ? kb - b0 : KC;
                    const uint8_t * panel = panels + (size_t) (p - pp) * panel_bytes +
                                            (size_t) b0 * tnn_qpanel_block_bytes(format);
                    spread16(format, panel, nb, spread);
                    for (int64_t c = c0; c < c1; c += NC_MAX) {
                        const int nc = (int) (c1 - c < NC_MAX ? c1 - c : NC_MAX);
                        tile16_at(panel, spread, kb, nb, b0 > 0, q + (c - c0) * kb + b0,
                                  x16 + ((c - c0) * kb + b0) * TNN_QBLOCK, nc,
                                  y + c * y_stride + p * TNN_QPANEL_ROWS, y_stride);
                    }
                }
            }
            continue;
        }
        for (int64_t c = c0; c < c1; c += NC_MAX) {
            const int nc = (int) (c1 - c < NC_MAX ? c1 - c : NC_MAX);
            const struct tnn_qcol * cols = q + (c - c0) * kb;
            for (int64_t p = pp; p < pe; ++p) {
                const uint8_t * panel = panels + (size_t) (p - pp) * panel_bytes;
                float * out = y + c * y_stride + p * TNN_QPANEL_ROWS;
                tile_at(panel, kb, cols, nc, out, y_stride);
            }
        }
    }
}

void tnn_qgemm_avx2(int levels, const struct tnn_qpanels * a, int64_t rows, int64_t k,
                    const struct tnn_qgemm_columns * x, int64_t n, float * y, int64_t y_stride, void * scratch,
                    int ith, int nth) {
    qgemm(avx2_tiles, avx2_tiles16, INT64_MAX, levels, a, rows, k, x, n, y, y_stride, scratch, ith, nth);
}

void tnn_qgemm_avxvnni(int levels, const struct tnn_qpanels * a, int64_t rows, int64_t k,
                       const struct tnn_qgemm_columns * x, int64_t n, float * y, int64_t y_stride, void * scratch,
                       int ith, int nth) {
    qgemm(vnni_tiles, vnni_tiles16, K16_MAX_VNNI, levels, a, rows, k, x, n, y, y_stride, scratch, ith, nth);
}

AVX2 void tnn_qgemm_quantize_avx2(const float * x, int64_t x_stride, int64_t k, int64_t c0, int64_t c1,
                                  struct tnn_qcol * q) {
    for (int64_t c = c0; c < c1; ++c) {
        quantize_column(x + c * x_stride, k / TNN_QBLOCK, q + c * (k / TNN_QBLOCK));
    }
}

#endif
