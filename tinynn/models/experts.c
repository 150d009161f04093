/* A mixture of experts' products through frozen experts kept as stored
 * (models.h's comment on tnn_experts_product). The forward is ggml's own
 * MUL_MAT_ID, llama.cpp's inference product on the stored blocks; its
 * backward (vendor patch 0019 lets a MUL_MAT_ID node carry one) is x's
 * gradient per slot on toy's kernel (cpu/experts.c), summed over the slots
 * where they all read one x. */
#include "models/models.h"

#include <math.h>
#include <string.h>

/* The kernels the experts' nodes run, as the session chooses its CPU
 * kernels (TNN_CPU_KERNELS, TNN_CPU_VARIANT: csrc's tnn_backend_cpu_kernels):
 * fgemm's variant, and the AVX2 dequantizers of Q4_K, Q6_K and MXFP4 where
 * qgemm runs (ggml's bits; ggml-base's own are scalar, and cost the
 * experts' gradient a fifth). A node's user data is one of these entries,
 * or NULL: portable loops on ggml's to_float. */
struct experts_kernels {
    tnn_fgemm_fn fgemm;
    ggml_to_float_t q4_K, q6_K, mxfp4;
};
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))   /* where the variants exist (kernels.c) */
static const struct experts_kernels KERNELS[] = {
    { tnn_fgemm_avx2, tnn_dequantize_q4_K_avx2, tnn_dequantize_q6_K_avx2, tnn_dequantize_mxfp4_avx2 },
    { tnn_fgemm_avx512, tnn_dequantize_q4_K_avx2, tnn_dequantize_q6_K_avx2, tnn_dequantize_mxfp4_avx2 },
    { tnn_fgemm_avx2, NULL, NULL, NULL },
    { tnn_fgemm_avx512, NULL, NULL, NULL },
};

static void * session_kernels(void) {
    struct tnn_cpu_kernels kernels;
    if (tnn_backend_cpu_kernels(&kernels) != TNN_OK) {
        return NULL;
    }
    for (size_t i = 0; i < sizeof(KERNELS) / sizeof(KERNELS[0]); ++i) {
        if (kernels.fgemm == KERNELS[i].fgemm && kernels.dequantize_q4_K == KERNELS[i].q4_K) {
            return (void *) &KERNELS[i];
        }
    }
    return NULL;
}
#else
static void * session_kernels(void) { return NULL; }
#endif

/* F32 experts' "dequantization" (ggml's F32 has no to_float): a copy. */
static void f32_values(const void * blocks, float * values, int64_t n) {
    memcpy(values, blocks, (size_t) n * sizeof(float));
}

/* How the kernel reads a row of type's values, or NULL; k: the node's
 * kernels (or NULL). */
static ggml_to_float_t values_of(enum ggml_type type, const struct experts_kernels * k) {
    if (k != NULL && type == GGML_TYPE_Q4_K && k->q4_K != NULL) {
        return k->q4_K;
    }
    if (k != NULL && type == GGML_TYPE_Q6_K && k->q6_K != NULL) {
        return k->q6_K;
    }
    if (k != NULL && type == GGML_TYPE_MXFP4 && k->mxfp4 != NULL) {
        return k->mxfp4;
    }
    return type == GGML_TYPE_F32 ? f32_values : ggml_get_type_traits(type)->to_float;
}

/* The kernel's arguments from a gradient node's sources: experts, y's
 * gradient (contiguous), ids, and for the weight gradient x. */
static struct tnn_experts_args experts_args(const struct ggml_tensor * dst, void * userdata) {
    const struct ggml_tensor *w = dst->src[0], *dy = dst->src[1], *ids = dst->src[2], *x = dst->src[3];
    const struct experts_kernels * kernels = userdata;
    return (struct tnn_experts_args){
        .d_in = w->ne[0],
        .d_out = w->ne[1],
        .n_experts = w->ne[2],
        .n_used = ids->ne[0],
        .n_tokens = ids->ne[1],
        .w = w->data,
        .expert_bytes = w->nb[2],
        .row_bytes = w->nb[1],
        .block = ggml_blck_size(w->type),
        .to_float = values_of(w->type, kernels),
        .ids = ids->data,
        .ids_ld = (int64_t) (ids->nb[1] / sizeof(int32_t)),
        .dy = dy->data,
        .fgemm = kernels != NULL ? kernels->fgemm : NULL,
        .x = x != NULL ? x->data : NULL,
        .x_slots = x != NULL ? x->ne[1] : 0,
    };
}

/* dst [d_in, n_used, T]: each slot's input gradient. */
static void input_gradient_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    struct tnn_experts_args args = experts_args(dst, userdata);
    args.dx = dst->data;
    tnn_experts_input_gradient(&args, ith, nth);
}

/* dst [d_out, n_used, T]: the forward, from srcs experts, x and ids (as
 * MUL_MAT_ID's). */
static void forward_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct ggml_tensor * x = dst->src[1];
    struct tnn_experts_args args = experts_args(dst, userdata); /* its src[1] is x here, not dy */
    args.dy = NULL;
    args.x = x->data;
    args.x_slots = x->ne[1];
    args.y = dst->data;
    tnn_experts_forward(&args, ith, nth);
}

/* dst [d_in, d_out, E]: the experts' gradient (F32 experts, trained). */
static void weight_gradient_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    struct tnn_experts_args args = experts_args(dst, userdata);
    args.dw = dst->data;
    tnn_experts_weight_gradient(&args, ith, nth);
}

/* ---- sums over a token's slots ------------------------------------------------- */

/* dst [d, 1, T] = sum over s of src [d, n_used, T], in slot order (tokens
 * shared out between threads). */
static void slot_sum_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    (void) userdata;
    const struct ggml_tensor * src = dst->src[0];
    const int64_t d = src->ne[0], n_used = src->ne[1];
    int64_t t0, t1;
    tnn_share_groups(src->ne[2], 1, ith, nth, &t0, &t1);
    for (int64_t t = t0; t < t1; ++t) {
        const float * y = (const float *) src->data + t * n_used * d;
        float * out = (float *) dst->data + t * d;
        memcpy(out, y, (size_t) d * sizeof(float));
        for (int64_t s = 1; s < n_used; ++s) {
            for (int64_t i = 0; i < d; ++i) {
                out[i] += y[s * d + i];
            }
        }
    }
}

/* [d, n_used, T] -> [d, 1, T], summed over the slots (no backward: a
 * gradient's sum). */
static struct ggml_tensor * slot_sum(struct ggml_context * ctx, struct ggml_tensor * per_slot) {
    return ggml_custom_4d(ctx, GGML_TYPE_F32, per_slot->ne[0], 1, per_slot->ne[2], 1, &per_slot, 1, slot_sum_node,
                          GGML_N_TASKS_MAX, NULL);
}

/* dst [d, T] = sum over s of w[s, t] y[:, s, t], from srcs y [d, n_used, T]
 * and w [n_used, T], in slot order. */
static void weighted_sum_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    (void) userdata;
    const struct ggml_tensor *y = dst->src[0], *w = dst->src[1];
    const int64_t d = y->ne[0], n_used = y->ne[1];
    int64_t t0, t1;
    tnn_share_groups(y->ne[2], 1, ith, nth, &t0, &t1);
    for (int64_t t = t0; t < t1; ++t) {
        const float * ys = (const float *) y->data + t * n_used * d;
        const float * ws = (const float *) w->data + t * n_used;
        float * out = (float *) dst->data + t * d;
        for (int64_t i = 0; i < d; ++i) {
            out[i] = ws[0] * ys[i];
        }
        for (int64_t s = 1; s < n_used; ++s) {
            for (int64_t i = 0; i < d; ++i) {
                out[i] += ws[s] * ys[s * d + i];
            }
        }
    }
}

/* dst [d, n_used, T]: y's gradient w[s, t] dout[:, t], from srcs w and
 * dout [d, T]. */
static void weighted_sum_dy_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    (void) userdata;
    const struct ggml_tensor *w = dst->src[0], *dout = dst->src[1];
    const int64_t d = dst->ne[0], n_used = dst->ne[1];
    int64_t t0, t1;
    tnn_share_groups(dst->ne[2], 1, ith, nth, &t0, &t1);
    for (int64_t t = t0; t < t1; ++t) {
        const float * g = (const float *) dout->data + t * d;
        for (int64_t s = 0; s < n_used; ++s) {
            const float ws = ((const float *) w->data)[t * n_used + s];
            float * dy = (float *) dst->data + (t * n_used + s) * d;
            for (int64_t i = 0; i < d; ++i) {
                dy[i] = ws * g[i];
            }
        }
    }
}

/* dst [n_used, T]: w's gradient, the dot of y[:, s, t] and dout[:, t]
 * (summed in order), from srcs y and dout. */
static void weighted_sum_dw_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    (void) userdata;
    const struct ggml_tensor *y = dst->src[0], *dout = dst->src[1];
    const int64_t d = y->ne[0], n_used = y->ne[1];
    int64_t t0, t1;
    tnn_share_groups(y->ne[2], 1, ith, nth, &t0, &t1);
    for (int64_t t = t0; t < t1; ++t) {
        const float * g = (const float *) dout->data + t * d;
        for (int64_t s = 0; s < n_used; ++s) {
            const float * ys = (const float *) y->data + (t * n_used + s) * d;
            float dot = 0.0f;
            for (int64_t i = 0; i < d; ++i) {
                dot += ys[i] * g[i];
            }
            ((float *) dst->data)[t * n_used + s] = dot;
        }
    }
}

static void weighted_sum_backward(struct ggml_context * ctx, struct ggml_tensor * forward,
                                  struct ggml_tensor * grad, struct ggml_tensor ** src_grads) {
    struct ggml_tensor *y = forward->src[0], *w = forward->src[1];
    struct ggml_tensor * dout = ggml_is_contiguous(grad) ? grad : ggml_cont(ctx, grad);
    struct ggml_tensor * dy_srcs[2] = { w, dout };
    struct ggml_tensor * dw_srcs[2] = { y, dout };
    src_grads[0] = ggml_custom_4d(ctx, GGML_TYPE_F32, y->ne[0], y->ne[1], y->ne[2], 1, dy_srcs, 2,
                                  weighted_sum_dy_node, GGML_N_TASKS_MAX, NULL);
    src_grads[1] = ggml_custom_4d(ctx, GGML_TYPE_F32, w->ne[0], w->ne[1], 1, 1, dw_srcs, 2, weighted_sum_dw_node,
                                  GGML_N_TASKS_MAX, NULL);
}

/* y [d, n_used, T] (contiguous), w [n_used, T] -> [d, T], each token's
 * slots weighted and summed: one node each way, where ggml's broadcast
 * MUL, its REPEAT_BACK and the slots' views' ACC cost a Qwen3-30B-A3B step
 * 8 s of 57. */
static struct ggml_tensor * weighted_sum(struct ggml_context * ctx, struct ggml_tensor * y,
                                         struct ggml_tensor * w) {
    struct ggml_tensor * srcs[2] = { y, w };
    struct ggml_tensor * out = ggml_custom_4d(ctx, GGML_TYPE_F32, y->ne[0], y->ne[2], 1, 1, srcs, 2,
                                              weighted_sum_node, GGML_N_TASKS_MAX, NULL);
    ggml_custom_set_backward(out, weighted_sum_backward);
    return out;
}

static void experts_backward(struct ggml_context * ctx, struct ggml_tensor * forward, struct ggml_tensor * grad,
                             struct ggml_tensor ** src_grads) {
    struct ggml_tensor *experts = forward->src[0], *x = forward->src[1], *ids = forward->src[2];
    struct ggml_tensor * srcs[3] = { experts, ggml_is_contiguous(grad) ? grad : ggml_cont(ctx, grad), ids };
    const int64_t d_in = x->ne[0], n_used = ids->ne[0], n_tokens = ids->ne[1];
    if (experts->flags & GGML_TENSOR_FLAG_PARAM) {
        struct ggml_tensor * dw_srcs[4] = { experts, srcs[1], ids, x };
        src_grads[0] = ggml_custom_4d(ctx, GGML_TYPE_F32, experts->ne[0], experts->ne[1], experts->ne[2], 1,
                                      dw_srcs, 4, weight_gradient_node, GGML_N_TASKS_MAX, session_kernels());
    }
    struct ggml_tensor * per_slot = ggml_custom_4d(ctx, GGML_TYPE_F32, d_in, n_used, n_tokens, 1, srcs, 3,
                                                   input_gradient_node, GGML_N_TASKS_MAX, session_kernels());
    /* where every slot read the one x of its token: the sum over its slots */
    src_grads[1] = x->ne[1] == n_used ? per_slot : slot_sum(ctx, per_slot);
}

int tnn_experts_on_this_backend(void) {
    if (tnn_backend_uses_host_memory()) {
        return TNN_OK;
    }
    return tnn_fail(TNN_ERR_ARG, "mixture-of-experts layers run on the CPU only, not on %s: use --device cpu",
                    tnn_backend_name());
}

int tnn_experts_check(const struct ggml_tensor * experts, const struct ggml_tensor * x,
                      const struct ggml_tensor * ids, const char * where) {
    const bool fits = experts->ne[3] == 1 && x->type == GGML_TYPE_F32 && x->ne[3] == 1 &&
                      x->ne[0] == experts->ne[0] && ids->type == GGML_TYPE_I32 && ids->ne[2] == 1 &&
                      ids->ne[3] == 1 && ids->ne[1] == x->ne[2] && (x->ne[1] == 1 || x->ne[1] == ids->ne[0]);
    if (!fits) {
        return tnn_fail(TNN_ERR_ARG,
                        "%s: the experts must be [d_in, d_out, E], x F32 [d_in, 1 or n_used, T] "
                        "and ids I32 [n_used, T]",
                        where);
    }
    if (experts->ne[2] < 1 || experts->ne[2] > TNN_EXPERTS_MAX || ids->ne[0] > experts->ne[2]) {
        return tnn_fail(TNN_ERR_ARG,
                        "%s: %lld experts, %lld used a token: toy takes 1 to %d experts, at most "
                        "all of them used",
                        where, (long long) experts->ne[2], (long long) ids->ne[0], TNN_EXPERTS_MAX);
    }
    if ((experts->flags & GGML_TENSOR_FLAG_PARAM) && experts->type != GGML_TYPE_F32) {
        return tnn_fail(TNN_ERR_ARG, "%s: trained experts must be F32, not %s", where,
                        ggml_type_name(experts->type));
    }
    if (values_of(experts->type, NULL) == NULL || experts->ne[0] % ggml_blck_size(experts->type)) {
        return tnn_fail(TNN_ERR_ARG, "%s: experts of type %s, %lld wide: not whole blocks toy can read", where,
                        ggml_type_name(experts->type), (long long) experts->ne[0]);
    }
    return TNN_OK;
}

/* Whether toy's forward (tnn_experts_forward) runs the product in place of
 * ggml's MUL_MAT_ID: on MXFP4 experts, whose product ggml's CPU backend
 * runs at a sixth of its Q4_K rate (44 against 270 GFLOP/s a Zen 4 core,
 * benchmarks/results), where its experts see enough slots (16 on average)
 * to repay dequantizing them; decoding a token keeps ggml's, which reads
 * the 4-bit blocks as they are. */
static bool forward_on_toy(const struct ggml_tensor * experts, const struct ggml_tensor * ids) {
    return experts->type == GGML_TYPE_MXFP4 && ggml_nelements(ids) >= 16 * experts->ne[2];
}

struct ggml_tensor * tnn_experts_product(struct ggml_context * ctx, struct ggml_tensor * experts,
                                         struct ggml_tensor * x, struct ggml_tensor * ids) {
    struct ggml_tensor * y;
    if (forward_on_toy(experts, ids) && ggml_is_contiguous(x)) {
        struct ggml_tensor * srcs[3] = { experts, x, ids };
        y = ggml_custom_4d(ctx, GGML_TYPE_F32, experts->ne[1], ids->ne[0], ids->ne[1], 1, srcs, 3, forward_node,
                           GGML_N_TASKS_MAX, session_kernels());
    } else {
        y = ggml_mul_mat_id(ctx, experts, x, ids);
    }
    ggml_custom_set_backward(y, experts_backward);
    return y;
}

/* ---- routing: each slot's weight, and the whole layer ----------------------- */

/* dst [n_used, T]: w[s, t] = p[ids[s, t], t] (normalized: over the token's
 * slots, summing to 1), from srcs probs [E, T] and ids. */
static void routed_weights_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct ggml_tensor *probs = dst->src[0], *ids = dst->src[1];
    const bool normalize = userdata != NULL;
    const int64_t n_used = dst->ne[0], id_ld = (int64_t) (ids->nb[1] / sizeof(int32_t));
    for (int64_t t = ith; t < dst->ne[1]; t += nth) {
        const float * p = (const float *) probs->data + t * probs->ne[0];
        const int32_t * id = (const int32_t *) ids->data + t * id_ld;
        float * w = (float *) dst->data + t * n_used;
        float sum = 0.0f;
        for (int64_t s = 0; s < n_used; ++s) {
            w[s] = p[id[s]];
            sum += w[s];
        }
        for (int64_t s = 0; s < n_used && normalize; ++s) {
            w[s] /= sum;
        }
    }
}

/* dst [E, T]: the probabilities' gradient from srcs the forward's output w,
 * its gradient dw, ids and the probabilities: dp[ids[s, t], t] = dw[s, t], normalized
 * (w = p / S): (dw[s] - sum_s' dw[s'] w[s']) / S, zeros elsewhere. */
static void routed_weights_back_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct ggml_tensor *forward = dst->src[0], *dw = dst->src[1], *ids = dst->src[2], *probs = dst->src[3];
    const bool normalize = userdata != NULL;
    const int64_t n_used = forward->ne[0], n_experts = dst->ne[0];
    const int64_t id_ld = (int64_t) (ids->nb[1] / sizeof(int32_t));
    for (int64_t t = ith; t < dst->ne[1]; t += nth) {
        const float * w = (const float *) forward->data + t * n_used;
        const float * g = (const float *) dw->data + t * n_used;
        const float * p = (const float *) probs->data + t * n_experts;
        const int32_t * id = (const int32_t *) ids->data + t * id_ld;
        float * dp = (float *) dst->data + t * n_experts;
        memset(dp, 0, (size_t) n_experts * sizeof(float));
        float sum = 0.0f, dot = 0.0f;
        for (int64_t s = 0; s < n_used; ++s) {
            sum += p[id[s]];
            dot += g[s] * w[s];
        }
        for (int64_t s = 0; s < n_used; ++s) {
            dp[id[s]] += normalize ? (g[s] - dot) / sum : g[s];
        }
    }
}

/* The probabilities' gradient node, normalized (userdata non-NULL) or not. */
static struct ggml_tensor * routed_weights_back(struct ggml_context * ctx, struct ggml_tensor * forward,
                                                struct ggml_tensor * grad, void * normalize) {
    /* probs too, so that the allocator keeps them until this node reads them */
    struct ggml_tensor * srcs[4] = { forward, ggml_is_contiguous(grad) ? grad : ggml_cont(ctx, grad),
                                     forward->src[1], forward->src[0] };
    const struct ggml_tensor * probs = forward->src[0];
    return ggml_custom_4d(ctx, GGML_TYPE_F32, probs->ne[0], probs->ne[1], 1, 1, srcs, 4, routed_weights_back_node,
                          1, normalize);
}

/* user data that is not NULL: the weights are normalized */
static const bool NORMALIZED = true;

static void normalized_weights_backward(struct ggml_context * ctx, struct ggml_tensor * forward,
                                        struct ggml_tensor * grad, struct ggml_tensor ** src_grads) {
    src_grads[0] = routed_weights_back(ctx, forward, grad, (void *) &NORMALIZED);
}

static void routed_weights_backward(struct ggml_context * ctx, struct ggml_tensor * forward,
                                    struct ggml_tensor * grad, struct ggml_tensor ** src_grads) {
    src_grads[0] = routed_weights_back(ctx, forward, grad, NULL);
}

struct ggml_tensor * tnn_routed_weights(struct ggml_context * ctx, struct ggml_tensor * probs,
                                        struct ggml_tensor * ids, bool normalize) {
    struct ggml_tensor * srcs[2] = { probs, ids };
    struct ggml_tensor * w = ggml_custom_4d(ctx, GGML_TYPE_F32, ids->ne[0], ids->ne[1], 1, 1, srcs, 2,
                                            routed_weights_node, 1, normalize ? (void *) &NORMALIZED : NULL);
    ggml_custom_set_backward(w, normalize ? normalized_weights_backward : routed_weights_backward);
    return w;
}

/* ---- gpt-oss's activation: min(g, 7) sigmoid(1.702 min(g, 7)) (clamp(u, -7, 7) + 1) ---- */

#define OAI_ALPHA 1.702f
#define OAI_LIMIT 7.0f

/* The clamps: g' = min(g, 7), u' = clamp(u, -7, 7). */
static float gate_clamped(float g) { return g < OAI_LIMIT ? g : OAI_LIMIT; }
static float up_clamped(float u) { return u < -OAI_LIMIT ? -OAI_LIMIT : u > OAI_LIMIT ? OAI_LIMIT : u; }

/* dst = the activation of srcs gate and up (contiguous, one shape), as
 * ggml's swiglu_oai computes it (llama.cpp's bits). */
static void swiglu_oai_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    (void) userdata;
    const float *g = dst->src[0]->data, *u = dst->src[1]->data;
    float * out = dst->data;
    int64_t i0, i1;
    tnn_share_groups(ggml_nelements(dst), 1, ith, nth, &i0, &i1);
    for (int64_t i = i0; i < i1; ++i) {
        const float x = gate_clamped(g[i]);
        out[i] = x / (1.0f + expf(OAI_ALPHA * (-x))) * (up_clamped(u[i]) + 1.0f);
    }
}

/* dst: gate's gradient (userdata NULL) or up's, from srcs gate, up and the
 * output's gradient. The clamps pass no gradient where they hold (as
 * torch's clamp, but at the limit itself, which they pass). */
static void swiglu_oai_back_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const bool of_up = userdata != NULL;
    const float *g = dst->src[0]->data, *u = dst->src[1]->data, *dout = dst->src[2]->data;
    float * dx = dst->data;
    int64_t i0, i1;
    tnn_share_groups(ggml_nelements(dst), 1, ith, nth, &i0, &i1);
    for (int64_t i = i0; i < i1; ++i) {
        const float x = gate_clamped(g[i]), y = up_clamped(u[i]);
        const float s = 1.0f / (1.0f + expf(OAI_ALPHA * (-x)));
        if (of_up) {
            dx[i] = y != u[i] ? 0.0f : dout[i] * x * s;
        } else {
            dx[i] = x != g[i] ? 0.0f : dout[i] * (y + 1.0f) * s * (1.0f + OAI_ALPHA * x * (1.0f - s));
        }
    }
}

static const bool OF_UP = true;

static void swiglu_oai_backward(struct ggml_context * ctx, struct ggml_tensor * forward, struct ggml_tensor * grad,
                                struct ggml_tensor ** src_grads) {
    struct ggml_tensor * srcs[3] = { forward->src[0], forward->src[1],
                                     ggml_is_contiguous(grad) ? grad : ggml_cont(ctx, grad) };
    const int64_t * ne = forward->ne;
    src_grads[0] = ggml_custom_4d(ctx, GGML_TYPE_F32, ne[0], ne[1], ne[2], ne[3], srcs, 3, swiglu_oai_back_node,
                                  GGML_N_TASKS_MAX, NULL);
    src_grads[1] = ggml_custom_4d(ctx, GGML_TYPE_F32, ne[0], ne[1], ne[2], ne[3], srcs, 3, swiglu_oai_back_node,
                                  GGML_N_TASKS_MAX, (void *) &OF_UP);
}

struct ggml_tensor * tnn_swiglu_oai(struct ggml_context * ctx, struct ggml_tensor * gate,
                                    struct ggml_tensor * up) {
    struct ggml_tensor * srcs[2] = { ggml_is_contiguous(gate) ? gate : ggml_cont(ctx, gate),
                                     ggml_is_contiguous(up) ? up : ggml_cont(ctx, up) };
    const int64_t * ne = gate->ne;
    struct ggml_tensor * out = ggml_custom_4d(ctx, GGML_TYPE_F32, ne[0], ne[1], ne[2], ne[3], srcs, 2,
                                              swiglu_oai_node, GGML_N_TASKS_MAX, NULL);
    ggml_custom_set_backward(out, swiglu_oai_backward);
    return out;
}

/* y [d, n_used, T] plus each slot's expert's bias (bias [d, E], ids_flat
 * I32 [n_used T]), or y where there is no bias: gathered by get_rows, whose
 * backward scatters the gradient to a trained bias. */
static struct ggml_tensor * add_expert_bias(struct ggml_context * ctx, struct ggml_tensor * y,
                                            struct ggml_tensor * bias, struct ggml_tensor * ids_flat) {
    if (bias == NULL) {
        return y;
    }
    struct ggml_tensor * rows = ggml_get_rows(ctx, bias, ids_flat);   /* [d, n_used T] */
    return ggml_add(ctx, y, ggml_reshape_3d(ctx, rows, y->ne[0], y->ne[1], y->ne[2]));
}

/* The experts' product of gate, up or down (i: 0, 1, 2) with its LoRA pairs
 * where it has them: W_e x + scale B_e (A_e x), the scale on the rank's
 * rows (as linear in block.c). */
static struct ggml_tensor * adapted_product(struct ggml_context * ctx, const struct tnn_moe_weights * w, int i,
                                            struct ggml_tensor * x, struct ggml_tensor * ids) {
    struct ggml_tensor * const experts[3] = { w->gate, w->up, w->down };
    struct ggml_tensor * y = tnn_experts_product(ctx, experts[i], x, ids);
    if (w->lora_a[i] == NULL) {
        return y;
    }
    struct ggml_tensor * ax = ggml_scale(ctx, tnn_experts_product(ctx, w->lora_a[i], x, ids), w->lora_scale);
    return ggml_add(ctx, y, tnn_experts_product(ctx, w->lora_b[i], ax, ids));
}

struct ggml_tensor * tnn_moe_ffn(struct ggml_context * ctx, struct ggml_tensor * x,
                                 const struct tnn_moe_weights * w, int32_t n_used, bool normalize) {
    const int64_t d = x->ne[0], n_tokens = ggml_nelements(x) / d;
    x = ggml_reshape_2d(ctx, x, d, n_tokens); /* a batch's sequences one after another */
    struct ggml_tensor * logits = ggml_mul_mat(ctx, w->router, x);                  /* [E, T] */
    if (w->router_b != NULL) {
        logits = ggml_add(ctx, logits, tnn_as_f32(ctx, w->router_b));
    }
    /* gpt-oss's softmax over the top k's logits is the top k's probabilities normalized */
    struct ggml_tensor * probs = ggml_soft_max(ctx, logits);
    struct ggml_tensor * ids = ggml_top_k(ctx, probs, n_used);                      /* [n_used, T] */
    struct ggml_tensor * weights = tnn_routed_weights(ctx, probs, ids, normalize);  /* [n_used, T] */
    struct ggml_tensor * ids_flat = w->gate_b != NULL ? ggml_reshape_1d(ctx, ids, ggml_nelements(ids)) : NULL;
    struct ggml_tensor * x3 = ggml_reshape_3d(ctx, x, d, 1, n_tokens);
    struct ggml_tensor * gate = add_expert_bias(ctx, adapted_product(ctx, w, 0, x3, ids), w->gate_b, ids_flat);
    struct ggml_tensor * up = add_expert_bias(ctx, adapted_product(ctx, w, 1, x3, ids), w->up_b, ids_flat);
    struct ggml_tensor * act = w->oai ? tnn_swiglu_oai(ctx, gate, up)
                                      : tnn_swiglu(ctx, gate, up); /* [ff, n_used, T] */
    struct ggml_tensor * y = add_expert_bias(ctx, adapted_product(ctx, w, 2, act, ids), w->down_b, ids_flat);
    return weighted_sum(ctx, y, weights); /* [d, T], in slot order, as llama.cpp adds them */
}
