/* A mixture of experts' products through frozen experts kept as stored
 * (models.h's comment on tnn_experts_product). The forward is ggml's own
 * MUL_MAT_ID, llama.cpp's inference product on the stored blocks; its
 * backward (vendor patch 0019 lets a MUL_MAT_ID node carry one) is x's
 * gradient per slot on toy's kernel (cpu/experts.c), summed over the slots
 * where they all read one x. */
#include "models/models.h"

/* fgemm as the session chooses its kernels (TNN_CPU_KERNELS,
 * TNN_CPU_VARIANT: csrc's tnn_backend_cpu_kernels), for the gradient
 * node's user data: one of these entries, or NULL (portable loops). */
static const tnn_fgemm_fn FGEMM_VARIANTS[] = { tnn_fgemm_avx2, tnn_fgemm_avx512 };

static void * session_fgemm(void) {
    struct tnn_cpu_kernels kernels;
    if (tnn_backend_cpu_kernels(&kernels) != TNN_OK) {
        return NULL;
    }
    for (size_t i = 0; i < sizeof(FGEMM_VARIANTS) / sizeof(FGEMM_VARIANTS[0]); ++i) {
        if (kernels.fgemm == FGEMM_VARIANTS[i]) {
            return (void *) &FGEMM_VARIANTS[i];
        }
    }
    return NULL;
}

/* dst [d_in, n_used, T]: each slot's input gradient, from srcs experts,
 * y's gradient (contiguous) and ids. */
static void input_gradient_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct ggml_tensor *w = dst->src[0], *dy = dst->src[1], *ids = dst->src[2];
    const tnn_fgemm_fn * fgemm = userdata;
    const struct tnn_experts_args args = {
        .d_in = w->ne[0],
        .d_out = w->ne[1],
        .n_experts = w->ne[2],
        .n_used = ids->ne[0],
        .n_tokens = ids->ne[1],
        .w = w->data,
        .expert_bytes = w->nb[2],
        .row_bytes = w->nb[1],
        .block = ggml_blck_size(w->type),
        .to_float = ggml_get_type_traits(w->type)->to_float,
        .ids = ids->data,
        .ids_ld = (int64_t) (ids->nb[1] / sizeof(int32_t)),
        .dy = dy->data,
        .dx = dst->data,
        .fgemm = fgemm != NULL ? *fgemm : NULL,
    };
    tnn_experts_input_gradient(&args, ith, nth);
}

static void experts_backward(struct ggml_context * ctx, struct ggml_tensor * forward, struct ggml_tensor * grad,
                             struct ggml_tensor ** src_grads) {
    struct ggml_tensor *experts = forward->src[0], *x = forward->src[1], *ids = forward->src[2];
    struct ggml_tensor * srcs[3] = { experts, ggml_is_contiguous(grad) ? grad : ggml_cont(ctx, grad), ids };
    const int64_t d_in = x->ne[0], n_used = ids->ne[0], n_tokens = ids->ne[1];
    struct ggml_tensor * per_slot = ggml_custom_4d(ctx, GGML_TYPE_F32, d_in, n_used, n_tokens, 1, srcs, 3,
                                                   input_gradient_node, GGML_N_TASKS_MAX, session_fgemm());
    if (x->ne[1] == n_used) {
        src_grads[1] = per_slot;
        return;
    }
    /* every slot read the one x of its token: the sum over slots */
    struct ggml_tensor * slots_first = ggml_cont(ctx, ggml_permute(ctx, per_slot, 1, 0, 2, 3));
    src_grads[1] = ggml_reshape_3d(ctx, ggml_sum_rows(ctx, slots_first), d_in, 1, n_tokens);
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
    if (experts->flags & GGML_TENSOR_FLAG_PARAM) {
        return tnn_fail(TNN_ERR_ARG, "%s: the experts are frozen (only x has a gradient)", where);
    }
    if (ggml_get_type_traits(experts->type)->to_float == NULL || experts->ne[0] % ggml_blck_size(experts->type)) {
        return tnn_fail(TNN_ERR_ARG, "%s: experts of type %s, %lld wide: not whole blocks toy can read", where,
                        ggml_type_name(experts->type), (long long) experts->ne[0]);
    }
    return TNN_OK;
}

struct ggml_tensor * tnn_experts_product(struct ggml_context * ctx, struct ggml_tensor * experts,
                                         struct ggml_tensor * x, struct ggml_tensor * ids) {
    struct ggml_tensor * y = ggml_mul_mat_id(ctx, experts, x, ids);
    ggml_custom_set_backward(y, experts_backward);
    return y;
}
