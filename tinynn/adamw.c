/* The AdamW update on AVX512, as a custom node in place of ggml's.
 *
 * ggml's CPU AdamW is a scalar loop: a square root and a division per
 * parameter, about 2.5 ns each on one core here, so the update of
 * SmolLM2's 135 M parameters took 0.18 s, an eighth of a full training
 * step, short of the memory traffic that bounds it. This node does the same
 * arithmetic 16 parameters at a time, each rounding where ggml's build
 * rounds (it contracts the multiply-adds marked below into FMAs), so the
 * weights and moments are the same to the bit.
 *
 * Per parameter, with hp = [alpha, beta1, beta2, eps, wd, beta1h, beta2h]:
 *     m = beta1 m + (1 - beta1) g                        (FMA)
 *     v = beta2 v + (1 - beta2) g^2                      (FMA)
 *     w = keep w - alpha (beta1h m) / (sqrt(beta2h v) + eps)   (FMA)
 * with keep = 1 - alpha wd (FMA). */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f,fma")))

static bool adamw_supported(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
}

/* Parameters [i0, i1) of one tensor; the tail through a lane mask. */
AVX512 static void adamw_range(float * w, const float * g, float * m, float * v, const float * hp,
                               int64_t i0, int64_t i1) {
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

#else

static bool adamw_supported(void) {
    return false;
}

static void adamw_range(float * w, const float * g, float * m, float * v, const float * hp,
                        int64_t i0, int64_t i1) {
    (void) w; (void) g; (void) m; (void) v; (void) hp; (void) i0; (void) i1;
}

#endif

/* srcs as ggml_opt_step_adamw's: weight, gradient, m, v, hp [7]; threads
 * take 16-aligned shares of the parameters. */
static void adamw_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    (void) userdata;
    const int64_t n = ggml_nelements(dst->src[0]), blocks = (n + 15) / 16;
    const int64_t i0 = blocks * ith / nth * 16, i1 = blocks * (ith + 1) / nth * 16;
    adamw_range((float *) dst->src[0]->data, (const float *) dst->src[1]->data, (float *) dst->src[2]->data,
                (float *) dst->src[3]->data, (const float *) dst->src[4]->data, i0, i1 < n ? i1 : n);
}

int tnn_use_fast_adamw(tnn_session * s, struct ggml_cgraph * graph) {
    if (strcmp(tnn_backend_name(), "cpu") != 0 || !adamw_supported() || getenv("TNN_NO_FAST_ADAMW") != NULL) {
        return TNN_OK;
    }
    for (int i = 0; i < ggml_graph_n_nodes(graph); ++i) {
        struct ggml_tensor * node = ggml_graph_node(graph, i);
        if (node->op != GGML_OP_OPT_STEP_ADAMW) {
            continue;
        }
        bool contiguous = true;
        for (int j = 0; j < 4; ++j) {
            contiguous = contiguous && node->src[j]->type == GGML_TYPE_F32 && ggml_is_contiguous(node->src[j]);
        }
        if (!contiguous) {
            continue;
        }
        struct ggml_tensor * srcs[5] = { node->src[0], node->src[1], node->src[2], node->src[3], node->src[4] };
        tnn_become_custom(s->train.ctx_graph, node, adamw_node, NULL, srcs, 5);
    }
    return TNN_OK;
}
