/* Integer matrix products for a frozen base on AVX512-VNNI (see qgemm.h).
 *
 * The kernels are compiled for AVX512 through function attributes and run
 * only when the CPU reports the features at run time, so the library still
 * loads and runs (on ggml's kernels) on any x86-64 or other CPU. */
#include "qgemm.h"

#include <string.h>

/* A column block: 32 values in two int8 levels, x ~ d (q + r / 128): q as
 * ggml quantizes activations for Q8_0 and Q8_1 (d = max|x| / 127, q =
 * round(x / d)), and r = round(128 (x / d - q)), the remainder to 1/256 of
 * a step. One level alone leaves each product 0.4% off, which thirty
 * layers turn into logits visibly off the float model; two make the
 * products those of the float activations to about 15 bits. Precomputed
 * for the kernels: d * sum(x / d) for Q4_1's minimums, and -128 sum(q),
 * -128 sum(r), which cancel Q8_0's +128 offset. */
struct qcol {
    float d;
    float ds;
    int32_t neg128s;
    int32_t neg128s_r;
    int8_t q[TNN_QBLOCK];
    int8_t r[TNN_QBLOCK];
};

size_t tnn_qpanel_block_bytes(enum tnn_qpanel_format format) {
    return format == TNN_QPANEL_Q8_0 ? 16 * 2 + 16 * 32 : 16 * 2 * 2 + 16 * 16;
}

size_t tnn_qgemm_scratch_bytes(int64_t k, int64_t n) {
    return (size_t) (k / TNN_QBLOCK) * (size_t) n * sizeof(struct qcol);
}

/* Stored block layouts (ggml-common.h): Q8_0 {fp16 d; int8 q[32]},
 * Q4_1 {fp16 d; fp16 m; uint8 qs[16]}, qs[t] = q[t] | q[t + 16] << 4. */
#define Q8_0_BYTES 34
#define Q4_1_BYTES 20

void tnn_qpanel_pack(enum tnn_qpanel_format format, const void * src, size_t row_bytes,
                     int64_t k, int64_t r0, void * dst) {
    const int64_t kb = k / TNN_QBLOCK;
    const size_t bb = tnn_qpanel_block_bytes(format);
    uint8_t * panel = (uint8_t *) dst + (size_t) (r0 / TNN_QPANEL_ROWS) * (size_t) kb * bb;
    for (int64_t b = 0; b < kb; ++b) {
        uint8_t * out = panel + (size_t) b * bb;
        for (int r = 0; r < TNN_QPANEL_ROWS; ++r) {
            const uint8_t * row = (const uint8_t *) src + (size_t) r * row_bytes;
            if (format == TNN_QPANEL_Q8_0) {
                const uint8_t * blk = row + (size_t) b * Q8_0_BYTES;
                memcpy(out + 2 * r, blk, 2);                                 /* d */
                for (int g = 0; g < 8; ++g) {
                    for (int t = 0; t < 4; ++t) {
                        out[32 + g * 64 + r * 4 + t] = (uint8_t) (blk[2 + 4 * g + t] ^ 0x80);
                    }
                }
            } else {
                const uint8_t * blk = row + (size_t) b * Q4_1_BYTES;
                memcpy(out + 2 * r, blk, 2);                                 /* d */
                memcpy(out + 32 + 2 * r, blk + 2, 2);                        /* m */
                for (int g = 0; g < 4; ++g) {
                    memcpy(out + 64 + g * 64 + r * 4, blk + 4 + 4 * g, 4);
                }
            }
        }
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,f16c,fma")))

bool tnn_qgemm_supported(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
}

AVX512 static void quantize_column(const float * x, int64_t kb, struct qcol * out) {
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
        out->d = amax / 127.0f;
        out->ds = out->d * ((float) sq + (float) sr / 128.0f);
        out->neg128s = -128 * sq;
        out->neg128s_r = -128 * sr;
    }
}

static inline int32_t load4(const int8_t * p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* The widest tile: 16 rows x NC_MAX columns, NC_MAX int32 and NC_MAX float
 * accumulators in registers (of 32). */
#define NC_MAX 12

/* y[c][0..16) = panel (16 rows x kb blocks) . column c, c < nc.
 * cols: the first column's blocks; column c's at cols + c * kb. */
AVX512 static inline __attribute__((always_inline)) void
tile(enum tnn_qpanel_format format, const int levels, const uint8_t * panel, int64_t kb,
     const struct qcol * cols, const int nc, float * y, int64_t y_stride) {
    const size_t bb = tnn_qpanel_block_bytes(format);
    __m512 acc[NC_MAX];
#pragma GCC unroll 12
    for (int c = 0; c < nc; ++c) {
        acc[c] = _mm512_setzero_ps();
    }
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    for (int64_t b = 0; b < kb; ++b, panel += bb) {
        __m512i dot[NC_MAX];
        const struct qcol * col = cols + b;
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
                    dot[c] = _mm512_dpbusd_epi32(dot[c], w, _mm512_set1_epi32(load4(col[c * kb].q + 4 * g)));
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
                    dot[c] = _mm512_dpbusd_epi32(dot[c], w, _mm512_set1_epi32(load4(col[c * kb].r + 4 * g)));
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
                    dot[c] = _mm512_dpbusd_epi32(dot[c], lo[g], _mm512_set1_epi32(load4(col[c * kb].q + 4 * g)));
                    dot[c] = _mm512_dpbusd_epi32(dot[c], hi[g], _mm512_set1_epi32(load4(col[c * kb].q + 16 + 4 * g)));
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
                    dot[c] = _mm512_dpbusd_epi32(dot[c], lo[g], _mm512_set1_epi32(load4(col[c * kb].r + 4 * g)));
                    dot[c] = _mm512_dpbusd_epi32(dot[c], hi[g], _mm512_set1_epi32(load4(col[c * kb].r + 16 + 4 * g)));
                }
            }
        }
        const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) panel));
#pragma GCC unroll 12
        for (int c = 0; c < nc; ++c) {
            const __m512 scale = _mm512_mul_ps(d, _mm512_set1_ps(levels == 2 ? col[c * kb].d * (1.0f / 128.0f)
                                                                             : col[c * kb].d));
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

#define TILE_CASE(F, L, N) \
    case N: tile(F, L, panel, kb, cols, N, y, y_stride); break;

#define TILE_SWITCH(F, L)                                                                  \
    switch (nc) {                                                                          \
        TILE_CASE(F, L, 1) TILE_CASE(F, L, 2) TILE_CASE(F, L, 3) TILE_CASE(F, L, 4)        \
        TILE_CASE(F, L, 5) TILE_CASE(F, L, 6) TILE_CASE(F, L, 7) TILE_CASE(F, L, 8)        \
        TILE_CASE(F, L, 9) TILE_CASE(F, L, 10) TILE_CASE(F, L, 11) TILE_CASE(F, L, 12)     \
        default: break;                                                                    \
    }

typedef void (*tile_fn)(const uint8_t * panel, int64_t kb, const struct qcol * cols, int nc,
                        float * y, int64_t y_stride);

#define TILE_FN(NAME, F, L)                                                                \
    AVX512 static void NAME(const uint8_t * panel, int64_t kb, const struct qcol * cols,   \
                            int nc, float * y, int64_t y_stride) {                         \
        TILE_SWITCH(F, L)                                                                  \
    }

TILE_FN(tile_q8_0_1, TNN_QPANEL_Q8_0, 1)
TILE_FN(tile_q8_0_2, TNN_QPANEL_Q8_0, 2)
TILE_FN(tile_q4_1_1, TNN_QPANEL_Q4_1, 1)
TILE_FN(tile_q4_1_2, TNN_QPANEL_Q4_1, 2)

/* Panels per pass over a thread's columns: about 256 KB of the packed matrix,
 * which stays in L2 while every column tile reads it. */
static int64_t panels_per_pass(size_t panel_bytes) {
    const int64_t n = (int64_t) ((256 << 10) / (panel_bytes ? panel_bytes : 1));
    return n > 0 ? n : 1;
}

void tnn_qgemm(enum tnn_qpanel_format format, int levels, const void * a, int64_t rows, int64_t k,
               const float * x, int64_t x_stride, int64_t n,
               float * y, int64_t y_stride, void * scratch, int ith, int nth) {
    const tile_fn tile_at = format == TNN_QPANEL_Q8_0 ? (levels == 2 ? tile_q8_0_2 : tile_q8_0_1)
                                                      : (levels == 2 ? tile_q4_1_2 : tile_q4_1_1);
    const int64_t kb = k / TNN_QBLOCK;
    const int64_t n_panels = rows / TNN_QPANEL_ROWS;
    const size_t panel_bytes = (size_t) kb * tnn_qpanel_block_bytes(format);
    struct qcol * q = scratch;

    /* Split the columns between threads when each gets a full tile (each
     * quantizes only its own); else split the panels, every thread
     * quantizing all columns. No thread waits for another either way. */
    int64_t c0 = 0, c1 = n, p0 = 0, p1 = n_panels;
    if (n >= (int64_t) nth * NC_MAX) {
        const int64_t tiles = (n + NC_MAX - 1) / NC_MAX;
        c0 = tiles * ith / nth * NC_MAX;
        c1 = tiles * (ith + 1) / nth * NC_MAX;
        if (c1 > n) c1 = n;
    } else {
        p0 = n_panels * ith / nth;
        p1 = n_panels * (ith + 1) / nth;
    }
    for (int64_t c = c0; c < c1; ++c) {
        quantize_column(x + c * x_stride, kb, q + (c - c0) * kb);
    }
    const int64_t pass = panels_per_pass(panel_bytes);
    for (int64_t pp = p0; pp < p1; pp += pass) {
        const int64_t pe = pp + pass < p1 ? pp + pass : p1;
        for (int64_t c = c0; c < c1; c += NC_MAX) {
            const int nc = (int) (c1 - c < NC_MAX ? c1 - c : NC_MAX);
            const struct qcol * cols = q + (c - c0) * kb;
            for (int64_t p = pp; p < pe; ++p) {
                const uint8_t * panel = (const uint8_t *) a + (size_t) p * panel_bytes;
                float * out = y + c * y_stride + p * TNN_QPANEL_ROWS;
                tile_at(panel, kb, cols, nc, out, y_stride);
            }
        }
    }
}

#else  /* not x86-64 with GCC or Clang: ggml's kernels serve */

bool tnn_qgemm_supported(void) {
    return false;
}

void tnn_qgemm(enum tnn_qpanel_format format, int levels, const void * a, int64_t rows, int64_t k,
               const float * x, int64_t x_stride, int64_t n,
               float * y, int64_t y_stride, void * scratch, int ith, int nth) {
    (void) format; (void) levels; (void) a; (void) rows; (void) k; (void) x; (void) x_stride; (void) n;
    (void) y; (void) y_stride; (void) scratch; (void) ith; (void) nth;
}

#endif
