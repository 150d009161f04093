/* attention_bf16 (kernels.h): causal attention a 64 x 64 block of scores
 * at a time, its products in bfloat16. Two variants share everything but
 * the products: avx512 on vdpbf16ps (AVX512-BF16), amx on the AMX-BF16
 * tiles.
 *
 * Every product here is C [m, n] (+)= A [m, k] B [k, n] over pairs of k,
 * on packed bfloat16 words (a 32-bit word holds values k and k + 1, k in
 * the low half), which is the tiles' own layout:
 *   A: word (i, pair p) at a[i * lda + p];
 *   B: word (pair p, column j) at b[p * ldb + j].
 * The operands are packed once per head in three layouts (pack_*):
 *   rows         [token][dim / 2]   A of the products over dims;
 *   dim pairs    [dim / 2][token]   B of the products over dims (columns: tokens);
 *   token pairs  [token / 2][dim]   B of the products over tokens (columns: dims).
 * Sequences are padded to whole blocks with zeros; a padded query sees only
 * keys up to itself and a real query no padded key, and nothing of a padded
 * query is written or summed into a real one.
 *
 * The softmax works in base 2: x = S log2(e), P = 2^(x - max), so that one
 * exp2 (a degree-6 polynomial and vscalefps) serves every exponential. P
 * and dS, made here in float32, enter their products as two bfloat16 terms
 * (split32): one product more each, on the tiles nearly free. */
#include "kernels.h"
#include "layout.h"

#include <math.h>
#include <string.h>

#define BLOCK TNN_ATTENTION_BLOCK

static int64_t padded(int64_t t) { return (t + BLOCK - 1) / BLOCK * BLOCK; }

static size_t align64(size_t bytes) { return (bytes + 63) / 64 * 64; }

/* ---- scratch -------------------------------------------------------------- */

struct forward_scratch {
    uint32_t *k_dims, *v_tokens, *q_rows, *p_rows, *p_low;
    float *s, *o, *row, *max, *sum;
};

struct backward_scratch {
    uint32_t *k_rows, *k_tokens, *v_rows;       /* the key head's */
    uint32_t *q_dims, *q_tokens, *do_dims, *do_tokens;   /* [group] of each */
    float * delta;                               /* [group][tp] */
    float *s, *dp, *dk, *dv, *row;
    uint32_t *p_rows, *ds_rows, *ds_pairs;       /* bfloat16's high terms */
    uint32_t *p_low, *ds_low, *ds_pairs_low;     /* and the low ones */
};

static size_t bytes_of(int64_t hd, int64_t tp, int64_t group, bool backward, char * base, void * layout) {
    const size_t head = align64((size_t) tp * (size_t) hd * 2), block = (size_t) BLOCK * BLOCK;
    size_t at = 0;
#define TAKE(field, bytes)                   \
    do {                                     \
        if (base != NULL) {                  \
            *(void **) &(field) = base + at; \
        }                                    \
        at += align64(bytes);                \
    } while (0)
    if (!backward) {
        struct forward_scratch * f = layout;
        struct forward_scratch unused;
        if (f == NULL) {
            f = &unused;
        }
        TAKE(f->k_dims, head);
        TAKE(f->v_tokens, head);
        TAKE(f->q_rows, (size_t) BLOCK * hd * 2);
        TAKE(f->p_rows, block * 2);
        TAKE(f->p_low, block * 2);
        TAKE(f->s, block * 4);
        TAKE(f->o, (size_t) BLOCK * hd * 4);
        TAKE(f->row, (size_t) hd * 4);
        TAKE(f->max, BLOCK * 4);
        TAKE(f->sum, BLOCK * 4);
        return at;
    }
    struct backward_scratch * b = layout;
    struct backward_scratch unused;
    if (b == NULL) {
        b = &unused;
    }
    TAKE(b->k_rows, head);
    TAKE(b->k_tokens, head);
    TAKE(b->v_rows, head);
    TAKE(b->q_dims, head * group);
    TAKE(b->q_tokens, head * group);
    TAKE(b->do_dims, head * group);
    TAKE(b->do_tokens, head * group);
    TAKE(b->delta, (size_t) group * tp * 4);
    TAKE(b->s, block * 4);
    TAKE(b->dp, block * 4);
    TAKE(b->dk, (size_t) BLOCK * hd * 4);
    TAKE(b->dv, (size_t) BLOCK * hd * 4);
    TAKE(b->row, (size_t) 2 * hd * 4);
    TAKE(b->p_rows, block * 2);
    TAKE(b->ds_rows, block * 2);
    TAKE(b->ds_pairs, block * 2);
    TAKE(b->p_low, block * 2);
    TAKE(b->ds_low, block * 2);
    TAKE(b->ds_pairs_low, block * 2);
#undef TAKE
    return at;
}

size_t tnn_attention_bf16_scratch_bytes(int64_t head_dim, int64_t t_seq, int64_t group) {
    const int64_t tp = padded(t_seq);
    const size_t f = bytes_of(head_dim, tp, group, false, NULL, NULL),
                 b = bytes_of(head_dim, tp, group, true, NULL, NULL);
    return f > b ? f : b;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))

#define LOG2E 1.4426950408889634f

/* ---- the products ---------------------------------------------------------- */

/* C [m, n] (+)= A B over `pairs` pairs of k (the file's comment); m and
 * n multiples of 32, pairs of 16. */
typedef void (*product_fn)(int64_t m, int64_t n, int64_t pairs, const uint32_t * a, int64_t lda,
                           const uint32_t * b, int64_t ldb, float * c, int64_t ldc, bool accumulate);

/* avx512: each 8 x 32 tile of C takes 16 accumulators, A's words broadcast
 * from memory, B's 16 columns a load. */
BF16 static void product_avx512(int64_t m, int64_t n, int64_t pairs, const uint32_t * a, int64_t lda,
                                const uint32_t * b, int64_t ldb, float * c, int64_t ldc, bool accumulate) {
    for (int64_t i0 = 0; i0 < m; i0 += 8) {
        for (int64_t j0 = 0; j0 < n; j0 += 32) {
            __m512 acc[8][2];
            for (int r = 0; r < 8; ++r) {
                float * row = c + (i0 + r) * ldc + j0;
                acc[r][0] = accumulate ? _mm512_loadu_ps(row) : _mm512_setzero_ps();
                acc[r][1] = accumulate ? _mm512_loadu_ps(row + 16) : _mm512_setzero_ps();
            }
            const uint32_t * a0 = a + i0 * lda;
            for (int64_t p = 0; p < pairs; ++p) {
                const __m512bh b0 = (__m512bh) _mm512_loadu_si512(b + p * ldb + j0);
                const __m512bh b1 = (__m512bh) _mm512_loadu_si512(b + p * ldb + j0 + 16);
#pragma GCC unroll 8
                for (int r = 0; r < 8; ++r) {
                    const __m512bh x = (__m512bh) _mm512_set1_epi32((int) a0[r * lda + p]);
                    acc[r][0] = _mm512_dpbf16_ps(acc[r][0], x, b0);
                    acc[r][1] = _mm512_dpbf16_ps(acc[r][1], x, b1);
                }
            }
            for (int r = 0; r < 8; ++r) {
                float * row = c + (i0 + r) * ldc + j0;
                _mm512_storeu_ps(row, acc[r][0]);
                _mm512_storeu_ps(row + 16, acc[r][1]);
            }
        }
    }
}

#define AMX __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))

/* amx: C in 32 x 32 blocks of four 16 x 16 tiles, A's two 16-row tiles and
 * B's two 16-column tiles 16 pairs deep a step. */
AMX static void product_amx(int64_t m, int64_t n, int64_t pairs, const uint32_t * a, int64_t lda,
                            const uint32_t * b, int64_t ldb, float * c, int64_t ldc, bool accumulate) {
    const size_t a_stride = (size_t) lda * 4, b_stride = (size_t) ldb * 4, c_stride = (size_t) ldc * 4;
    for (int64_t i0 = 0; i0 < m; i0 += 32) {
        for (int64_t j0 = 0; j0 < n; j0 += 32) {
            float * c0 = c + i0 * ldc + j0;
            if (accumulate) {
                _tile_loadd(0, c0, c_stride);
                _tile_loadd(1, c0 + 16, c_stride);
                _tile_loadd(2, c0 + 16 * ldc, c_stride);
                _tile_loadd(3, c0 + 16 * ldc + 16, c_stride);
            } else {
                _tile_zero(0);
                _tile_zero(1);
                _tile_zero(2);
                _tile_zero(3);
            }
            for (int64_t p = 0; p < pairs; p += 16) {
                _tile_loadd(4, a + i0 * lda + p, a_stride);
                _tile_loadd(5, a + (i0 + 16) * lda + p, a_stride);
                _tile_loadd(6, b + p * ldb + j0, b_stride);
                _tile_loadd(7, b + p * ldb + j0 + 16, b_stride);
                _tile_dpbf16ps(0, 4, 6);
                _tile_dpbf16ps(1, 4, 7);
                _tile_dpbf16ps(2, 5, 6);
                _tile_dpbf16ps(3, 5, 7);
            }
            _tile_stored(0, c0, c_stride);
            _tile_stored(1, c0 + 16, c_stride);
            _tile_stored(2, c0 + 16 * ldc, c_stride);
            _tile_stored(3, c0 + 16 * ldc + 16, c_stride);
        }
    }
}


/* ---- elementwise ------------------------------------------------------------ */

/* 2^x for x >= -125 (below, 0): 2^n 2^f, n = round(x), f in [-0.5, 0.5],
 * 2^f by its Taylor polynomial to degree 6 (relative error under 2e-7).
 * Lanes below -125 are masked out of vscalefps, not scaled to nothing: a
 * result below float32's normal range costs the core a microcode assist
 * (the masked keys' 2^-inf, a third of the forward's, made its softmax
 * run at a tenth of its speed). */
BF16 static inline __m512 exp2_ps(__m512 x) {
    const __mmask16 normal = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-125.0f), _CMP_GE_OQ);
    x = _mm512_max_ps(x, _mm512_set1_ps(-125.0f));
    const __m512 n = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 f = _mm512_sub_ps(x, n);
    __m512 p = _mm512_set1_ps(1.5403530e-4f);
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.3333558e-3f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.6181291e-3f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.5504109e-2f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.4022651e-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.9314718e-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
    return _mm512_maskz_scalef_ps(normal, p, n);
}

/* 32 floats as 16 words of bfloat16 pairs (nearest even), in order. */
BF16 static inline __m512i words32(const float * x) {
    return (__m512i) _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + 16), _mm512_loadu_ps(x));
}

/* 32 floats as two bfloat16 terms, high + low, 16 words each: the low term
 * the high one's rounding error, rounded (x to about 16 bits). */
BF16 static inline void split32(const float * x, uint32_t * high, uint32_t * low) {
    const __m512 x0 = _mm512_loadu_ps(x), x1 = _mm512_loadu_ps(x + 16);
    const __m512bh h = _mm512_cvtne2ps_pbh(x1, x0);
    const __m512i hw = (__m512i) h;
    /* the high words back to float32: a bfloat16 is a float32's top half */
    const __m512 h0 = _mm512_castsi512_ps(
        _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(hw)), 16));
    const __m512 h1 = _mm512_castsi512_ps(
        _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(hw, 1)), 16));
    _mm512_storeu_si512(high, hw);
    _mm512_storeu_si512(low, (__m512i) _mm512_cvtne2ps_pbh(_mm512_sub_ps(x1, h1), _mm512_sub_ps(x0, h0)));
}

/* One term of 16 floats' split (split32), in the low halves of 16 words. */
BF16 static inline __m512i term16(const float * x, bool low) {
    const __m512 v = _mm512_loadu_ps(x);
    __m512i w = _mm512_cvtepu16_epi32((__m256i) _mm512_cvtneps_pbh(v));
    if (low) {
        const __m512 high = _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
        w = _mm512_cvtepu16_epi32((__m256i) _mm512_cvtneps_pbh(_mm512_sub_ps(v, high)));
    }
    return w;
}

/* Lanes [0, count) of 16. */
static inline __mmask16 first_lanes(int64_t count) {
    return count >= 16 ? 0xffff : count <= 0 ? 0 : (__mmask16) ((1u << count) - 1);
}

/* ---- packing ------------------------------------------------------------------ */

/* Row t of matrix m of x as head_dim floats (zeros past t_seq). */
static void gather_row(const struct tnn_attention_operand * x, int64_t m, int64_t t, int64_t t_seq, int64_t hd,
                       float * row) {
    if (t >= t_seq) {
        memset(row, 0, (size_t) hd * sizeof(float));
        return;
    }
    const float * at = tnn_attention_matrix(x, m) + t * x->token;
    if (x->dim == 1) {
        memcpy(row, at, (size_t) hd * sizeof(float));
        return;
    }
    for (int64_t d = 0; d < hd; ++d) {
        row[d] = at[d * x->dim];
    }
}

/* Matrix m of x over tokens [0, tp) in all three layouts, those asked for
 * (NULL: not wanted); row: head_dim floats of room. Sixteen tokens at a
 * time: their rows of words, then 16 x 16 words transposed for the dim
 * pairs, and two tokens' bfloat16 interleaved for the token pairs (tp is a
 * whole number of blocks). */
BF16 static void pack(const struct tnn_attention_operand * x, int64_t m, int64_t t_seq, int64_t tp, int64_t hd,
                      uint32_t * rows, uint32_t * dim_pairs, uint32_t * token_pairs, float * row) {
    const int64_t words = hd / 2;
    uint32_t lines[16][TNN_ATTENTION_MAX_HEAD_DIM / 2] __attribute__((aligned(64)));
    for (int64_t t0 = 0; t0 < tp; t0 += 16) {
        for (int64_t i = 0; i < 16; ++i) {
            gather_row(x, m, t0 + i, t_seq, hd, row);
            for (int64_t d = 0; d < hd; d += 32) {
                _mm512_storeu_si512(lines[i] + d / 2, words32(row + d));
            }
            if (rows != NULL) {
                memcpy(rows + (t0 + i) * words, lines[i], (size_t) words * sizeof(uint32_t));
            }
        }
        for (int64_t p0 = 0; p0 < words && dim_pairs != NULL; p0 += 16) {
            __m512i r[16];
            for (int i = 0; i < 16; ++i) {
                r[i] = _mm512_loadu_si512(lines[i] + p0);
            }
            tnn_transpose16_epi32(r);
            for (int j = 0; j < 16; ++j) {
                _mm512_storeu_si512(dim_pairs + (p0 + j) * tp + t0, r[j]);
            }
        }
        for (int64_t i = 0; i < 16 && token_pairs != NULL; i += 2) {
            /* tokens t0 + i and t0 + i + 1: each dim's two values, the first low */
            const uint16_t *even = (const uint16_t *) lines[i], *odd = (const uint16_t *) lines[i + 1];
            uint32_t * out = token_pairs + (t0 + i) / 2 * hd;
            for (int64_t d = 0; d < hd; d += 16) {
                const __m512i lo = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *) (even + d)));
                const __m512i hi = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *) (odd + d)));
                _mm512_storeu_si512(out + d, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
            }
        }
    }
}

/* ---- shares of the work --------------------------------------------------- */

/* Thread ith's units [*u0, *u1) of n, unit u costing cost(u % blocks)
 * (blocks a matrix): the shares' costs as even as whole units allow. */
static void share(int64_t units, int64_t blocks, bool rising, int ith, int nth, int64_t * u0, int64_t * u1) {
    /* unit b of a matrix costs b + 1 (rising: the forward's query blocks)
     * or blocks - b (the backward's key blocks) */
    const int64_t per_matrix = blocks * (blocks + 1) / 2, total = units / blocks * per_matrix;
    const int64_t from = total * ith / nth, to = total * (ith + 1) / nth;
    int64_t sum = 0;
    *u0 = *u1 = units;
    for (int64_t u = 0; u < units; ++u) {
        const int64_t b = u % blocks, cost = rising ? b + 1 : blocks - b;
        if (sum >= from && *u0 == units) {
            *u0 = u;
        }
        if (sum >= to) {
            *u1 = u;
            break;
        }
        sum += cost;
    }
    if (*u1 < *u0) {
        *u1 = *u0;
    }
}

/* ---- forward ---------------------------------------------------------------- */

/* Lane i: the maximum (or the sum, in order) of v[i]'s 16 lanes. Sixteen
 * rows reduced at once, through a transpose, rather than each row's own
 * chain of shuffles: those chains, one after another, bounded the
 * forward's softmax. */
BF16 static inline __m512 across_rows(const __m512 * v, bool max) {
    __m512i r[16];
    for (int i = 0; i < 16; ++i) {
        r[i] = _mm512_castps_si512(v[i]);
    }
    tnn_transpose16_epi32(r);
    __m512 out = _mm512_castsi512_ps(r[0]);
    for (int j = 1; j < 16; ++j) {
        out = max ? _mm512_max_ps(out, _mm512_castsi512_ps(r[j])) : _mm512_add_ps(out, _mm512_castsi512_ps(r[j]));
    }
    return out;
}

/* Rows [i0, i0 + 16) of a block of scores S (f->s, keys after the query
 * -inf on the diagonal block): the online softmax's step. Each row's
 * running maximum and sum move to this block's keys, O's row is rescaled,
 * and P = 2^(x - max) is written both to f->s and as two bfloat16 terms
 * (f->p_rows, f->p_low) for O += P V. */
BF16 static void softmax_rows(const struct forward_scratch * f, int64_t i0, int64_t hd, bool diagonal, __m512 c) {
    __m512 reduced[16];
    for (int64_t i = 0; i < 16; ++i) {
        float * s = f->s + (i0 + i) * BLOCK;
        __m512 top = _mm512_set1_ps(-INFINITY);
        for (int v = 0; v < 4; ++v) {
            __m512 x = _mm512_mul_ps(_mm512_loadu_ps(s + 16 * v), c);
            if (diagonal) {
                /* keys after the query: -inf */
                x = _mm512_mask_mov_ps(_mm512_set1_ps(-INFINITY), first_lanes(i0 + i + 1 - 16 * v), x);
            }
            _mm512_storeu_ps(s + 16 * v, x);
            top = _mm512_max_ps(top, x);
        }
        reduced[i] = top;
    }
    /* every row has a key at or before its query, so its maximum is finite;
     * before the first block it was -inf, and 2^-inf (clamped to 2^-200)
     * rescales the empty sum and O by 0 */
    const __m512 old = _mm512_loadu_ps(f->max + i0), now = _mm512_max_ps(old, across_rows(reduced, true));
    const __m512 rescale = exp2_ps(_mm512_sub_ps(old, now));
    float now_of[16], rescale_of[16];
    _mm512_storeu_ps(now_of, now);
    _mm512_storeu_ps(rescale_of, rescale);
    _mm512_storeu_ps(f->max + i0, now);
    for (int64_t i = 0; i < 16; ++i) {
        float * s = f->s + (i0 + i) * BLOCK;
        const __m512 top = _mm512_set1_ps(now_of[i]);
        __m512 total = _mm512_setzero_ps();
        for (int v = 0; v < 4; ++v) {
            const __m512 p = exp2_ps(_mm512_sub_ps(_mm512_loadu_ps(s + 16 * v), top));
            total = _mm512_add_ps(total, p);
            _mm512_storeu_ps(s + 16 * v, p);
        }
        reduced[i] = total;
        float * o = f->o + (i0 + i) * hd;
        const __m512 r = _mm512_set1_ps(rescale_of[i]);
        for (int64_t d = 0; d < hd; d += 16) {
            _mm512_storeu_ps(o + d, _mm512_mul_ps(_mm512_loadu_ps(o + d), r));
        }
        split32(s, f->p_rows + (i0 + i) * (BLOCK / 2), f->p_low + (i0 + i) * (BLOCK / 2));
        split32(s + 32, f->p_rows + (i0 + i) * (BLOCK / 2) + 16, f->p_low + (i0 + i) * (BLOCK / 2) + 16);
    }
    const __m512 sum = _mm512_fmadd_ps(_mm512_loadu_ps(f->sum + i0), rescale, across_rows(reduced, false));
    _mm512_storeu_ps(f->sum + i0, sum);
}

/* One block of 64 queries [q0, q0 + 64) of query matrix m (the key
 * matrix's operands packed in f): O and lse. */
BF16 static void forward_block(product_fn product, const struct tnn_attention_args * a,
                               const struct forward_scratch * f, int64_t m, int64_t q0, int64_t tp) {
    const int64_t hd = a->head_dim, words = hd / 2;
    const __m512 c = _mm512_set1_ps(a->scale * LOG2E);
    for (int64_t i = 0; i < BLOCK; ++i) {
        gather_row(&a->q, m, q0 + i, a->t_seq, hd, f->row);
        for (int64_t d = 0; d < hd; d += 32) {
            _mm512_storeu_si512(f->q_rows + i * words + d / 2, words32(f->row + d));
        }
        f->max[i] = -INFINITY;
        f->sum[i] = 0.0f;
    }
    memset(f->o, 0, (size_t) BLOCK * hd * sizeof(float));
    for (int64_t k0 = 0; k0 <= q0; k0 += BLOCK) {
        /* S [query, key] = Q K^T over the dims */
        product(BLOCK, BLOCK, words, f->q_rows, words, f->k_dims + k0, tp, f->s, BLOCK, false);
        for (int64_t i0 = 0; i0 < BLOCK; i0 += 16) {
            softmax_rows(f, i0, hd, k0 == q0, c);
        }
        /* O [query, dim] += P V over the keys */
        product(BLOCK, hd, BLOCK / 2, f->p_rows, BLOCK / 2, f->v_tokens + (k0 / 2) * hd, hd, f->o, hd, true);
        product(BLOCK, hd, BLOCK / 2, f->p_low, BLOCK / 2, f->v_tokens + (k0 / 2) * hd, hd, f->o, hd, true);
    }
    for (int64_t i = 0; i < BLOCK && q0 + i < a->t_seq; ++i) {
        const float inv = 1.0f / f->sum[i];
        const float * o = f->o + i * hd;
        float * out = tnn_attention_matrix(&a->out, m) + (q0 + i) * a->out.token;
        for (int64_t d = 0; d < hd && a->out.dim == 1; d += 16) {
            _mm512_storeu_ps(out + d, _mm512_mul_ps(_mm512_loadu_ps(o + d), _mm512_set1_ps(inv)));
        }
        for (int64_t d = 0; d < hd && a->out.dim != 1; ++d) {
            out[d * a->out.dim] = o[d] * inv;
        }
        a->lse[m * a->t_seq + q0 + i] = f->max[i] + log2f(f->sum[i]);
    }
}

BF16 static void forward(product_fn product, const struct tnn_attention_args * a, void * scratch, int ith,
                         int nth) {
    const int64_t tp = padded(a->t_seq), blocks = tp / BLOCK;
    struct forward_scratch f;
    bytes_of(a->head_dim, tp, a->group, false, scratch, &f);
    int64_t u0, u1;
    share(a->n_queries * blocks, blocks, true, ith, nth, &u0, &u1);
    int64_t packed = -1;   /* the key matrix whose K and V are packed */
    for (int64_t u = u0; u < u1; ++u) {
        const int64_t m = u / blocks, kv = m / a->group, b = u % blocks;
        if (kv != packed) {
            pack(&a->k, kv, a->t_seq, tp, a->head_dim, NULL, f.k_dims, NULL, f.row);
            pack(&a->v, kv, a->t_seq, tp, a->head_dim, NULL, NULL, f.v_tokens, f.row);
            packed = kv;
        }
        forward_block(product, a, &f, m, b * BLOCK, tp);
    }
}

BF16 void tnn_attention_bf16_forward_avx512(const struct tnn_attention_args * a, void * scratch, int ith,
                                            int nth) {
    forward(product_avx512, a, scratch, ith, nth);
}

AMX void tnn_attention_bf16_forward_amx(const struct tnn_attention_args * a, void * scratch, int ith, int nth) {
    tnn_amx_configure_full_tiles();
    forward(product_amx, a, scratch, ith, nth);
    _tile_release();
}

/* ---- backward --------------------------------------------------------------- */

/* Query head g of key matrix kv: its Q and dO packed, and D = rowsum(dO O). */
BF16 static void pack_query_head(const struct tnn_attention_args * a, const struct backward_scratch * s,
                                 int64_t kv, int64_t g, int64_t tp) {
    const int64_t hd = a->head_dim, m = kv * a->group + g;
    const size_t head = align64((size_t) tp * (size_t) hd * 2) / sizeof(uint32_t);
    pack(&a->q, m, a->t_seq, tp, hd, NULL, s->q_dims + g * head, s->q_tokens + g * head, s->row);
    pack(&a->dout, m, a->t_seq, tp, hd, NULL, s->do_dims + g * head, s->do_tokens + g * head, s->row);
    float *d_out = s->row, *o = s->row + hd;
    for (int64_t t = 0; t < tp; ++t) {
        gather_row(&a->dout, m, t, a->t_seq, hd, d_out);
        gather_row(&a->out, m, t, a->t_seq, hd, o);
        /* dO rounded as dP = dO V^T rounds it: then each row of dS sums
         * to zero as softmax's gradient does */
        __m512 sum16 = _mm512_setzero_ps();
        for (int64_t d = 0; d < hd; d += 16) {
            const __m512i w = _mm512_cvtepu16_epi32((__m256i) _mm512_cvtneps_pbh(_mm512_loadu_ps(d_out + d)));
            sum16 = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_slli_epi32(w, 16)), _mm512_loadu_ps(o + d), sum16);
        }
        s->delta[g * tp + t] = _mm512_reduce_add_ps(sum16);
    }
}

/* One block of 64 keys [k0, k0 + 64) of key matrix kv against query head g's
 * query blocks from its own on: dK, dV (summed in s) and the thread's dQ. */
BF16 static void backward_block(product_fn product, const struct tnn_attention_args * a,
                                const struct backward_scratch * s, int64_t kv, int64_t g, int64_t k0, int64_t tp,
                                float * dq) {
    const int64_t hd = a->head_dim, words = hd / 2, m = kv * a->group + g;
    const size_t head = align64((size_t) tp * (size_t) hd * 2) / sizeof(uint32_t);
    const uint32_t *q_dims = s->q_dims + g * head, *q_tokens = s->q_tokens + g * head;
    const uint32_t *do_dims = s->do_dims + g * head, *do_tokens = s->do_tokens + g * head;
    const float * lse = a->lse + m * a->t_seq;
    const __m512 c = _mm512_set1_ps(a->scale * LOG2E), scale = _mm512_set1_ps(a->scale);
    for (int64_t q0 = k0; q0 < tp; q0 += BLOCK) {
        /* S^T [key, query] = K Q^T, dP^T = V dO^T, over the dims */
        product(BLOCK, BLOCK, words, s->k_rows + k0 * words, words, q_dims + q0, tp, s->s, BLOCK, false);
        product(BLOCK, BLOCK, words, s->v_rows + k0 * words, words, do_dims + q0, tp, s->dp, BLOCK, false);
        for (int64_t j = 0; j < BLOCK; ++j) {
            float *p = s->s + j * BLOCK, *dp = s->dp + j * BLOCK;
            for (int v = 0; v < 4; ++v) {
                const int64_t i0 = q0 + 16 * v;
                /* real queries at or after the key */
                __mmask16 live = first_lanes(a->t_seq - i0);
                if (q0 == k0) {
                    live &= (__mmask16) ~first_lanes(j - 16 * v);
                }
                const __m512 l = _mm512_maskz_loadu_ps(first_lanes(a->t_seq - i0), lse + i0);
                const __m512 x = _mm512_fmsub_ps(_mm512_loadu_ps(p + 16 * v), c, l);
                const __m512 pv = _mm512_maskz_mov_ps(live, exp2_ps(x));
                const __m512 dl = _mm512_loadu_ps(s->delta + g * tp + i0);
                const __m512 ds = _mm512_mul_ps(_mm512_mul_ps(pv, _mm512_sub_ps(_mm512_loadu_ps(dp + 16 * v), dl)),
                                                scale);
                _mm512_storeu_ps(p + 16 * v, pv);
                _mm512_storeu_ps(dp + 16 * v, ds);
            }
            for (int64_t half = 0; half < BLOCK; half += 32) {
                const int64_t at = j * (BLOCK / 2) + half / 2;
                split32(p + half, s->p_rows + at, s->p_low + at);
                split32(dp + half, s->ds_rows + at, s->ds_low + at);
            }
        }
        /* dS [query, key] for dQ's A: rows of queries, pairs of keys. Two
         * keys' rows of dS^T make the words (pair of keys, query), and 16 x
         * 16 of those transposed make 16 queries' rows of 16 pairs. */
        for (int term = 0; term < 2; ++term) {
            uint32_t * out = term == 0 ? s->ds_pairs : s->ds_pairs_low;
            for (int64_t pb = 0; pb < BLOCK / 2; pb += 16) {
                for (int64_t i0 = 0; i0 < BLOCK; i0 += 16) {
                    __m512i r[16];
                    for (int64_t p = 0; p < 16; ++p) {
                        const float * key = s->dp + 2 * (pb + p) * BLOCK + i0;   /* and key + 1 a row on */
                        r[p] = _mm512_or_si512(term16(key, term),
                                               _mm512_slli_epi32(term16(key + BLOCK, term), 16));
                    }
                    tnn_transpose16_epi32(r);
                    for (int64_t i = 0; i < 16; ++i) {
                        _mm512_storeu_si512(out + (i0 + i) * (BLOCK / 2) + pb, r[i]);
                    }
                }
            }
        }
        /* dV [key, dim] += P^T dO, dK += dS^T Q over the queries */
        product(BLOCK, hd, BLOCK / 2, s->p_rows, BLOCK / 2, do_tokens + (q0 / 2) * hd, hd, s->dv, hd, true);
        product(BLOCK, hd, BLOCK / 2, s->p_low, BLOCK / 2, do_tokens + (q0 / 2) * hd, hd, s->dv, hd, true);
        product(BLOCK, hd, BLOCK / 2, s->ds_rows, BLOCK / 2, q_tokens + (q0 / 2) * hd, hd, s->dk, hd, true);
        product(BLOCK, hd, BLOCK / 2, s->ds_low, BLOCK / 2, q_tokens + (q0 / 2) * hd, hd, s->dk, hd, true);
        /* dQ [query, dim] += dS K over the keys */
        product(BLOCK, hd, BLOCK / 2, s->ds_pairs, BLOCK / 2, s->k_tokens + (k0 / 2) * hd, hd, dq + q0 * hd, hd,
                true);
        product(BLOCK, hd, BLOCK / 2, s->ds_pairs_low, BLOCK / 2, s->k_tokens + (k0 / 2) * hd, hd, dq + q0 * hd,
                hd, true);
    }
}

BF16 static void backward(product_fn product, const struct tnn_attention_args * a, void * scratch, int ith,
                          int nth) {
    const int64_t hd = a->head_dim, tp = padded(a->t_seq), blocks = tp / BLOCK;
    struct backward_scratch s;
    bytes_of(hd, tp, a->group, true, scratch, &s);
    /* this thread's dQ part, [n_queries][tp][hd] with room for the padding;
     * the parts of threads that do not run are zeros */
    for (int64_t part = ith; part < a->dq_parts; part += nth) {
        memset(a->dq.data + part * a->dq_part, 0, (size_t) a->dq_part * sizeof(float));
    }
    float * dq = a->dq.data + ith * a->dq_part;
    int64_t u0, u1;
    share(a->n_queries / a->group * blocks, blocks, false, ith, nth, &u0, &u1);
    int64_t packed = -1;
    for (int64_t u = u0; u < u1; ++u) {
        const int64_t kv = u / blocks, k0 = u % blocks * BLOCK;
        if (kv != packed) {
            pack(&a->k, kv, a->t_seq, tp, hd, s.k_rows, NULL, s.k_tokens, s.row);
            pack(&a->v, kv, a->t_seq, tp, hd, s.v_rows, NULL, NULL, s.row);
            for (int64_t g = 0; g < a->group; ++g) {
                pack_query_head(a, &s, kv, g, tp);
            }
            packed = kv;
        }
        memset(s.dk, 0, (size_t) BLOCK * hd * sizeof(float));
        memset(s.dv, 0, (size_t) BLOCK * hd * sizeof(float));
        for (int64_t g = 0; g < a->group; ++g) {
            backward_block(product, a, &s, kv, g, k0, tp, dq + (kv * a->group + g) * tp * hd);
        }
        for (int64_t j = 0; j < BLOCK && k0 + j < a->t_seq; ++j) {
            float * dk = tnn_attention_matrix(&a->dk, kv) + (k0 + j) * a->dk.token;
            float * dv = tnn_attention_matrix(&a->dv, kv) + (k0 + j) * a->dv.token;
            for (int64_t d = 0; d < hd; ++d) {
                dk[d * a->dk.dim] = s.dk[j * hd + d];
                dv[d * a->dv.dim] = s.dv[j * hd + d];
            }
        }
    }
}

BF16 void tnn_attention_bf16_backward_avx512(const struct tnn_attention_args * a, void * scratch, int ith,
                                             int nth) {
    backward(product_avx512, a, scratch, ith, nth);
}

AMX void tnn_attention_bf16_backward_amx(const struct tnn_attention_args * a, void * scratch, int ith, int nth) {
    tnn_amx_configure_full_tiles();
    backward(product_amx, a, scratch, ith, nth);
    _tile_release();
}

#endif
