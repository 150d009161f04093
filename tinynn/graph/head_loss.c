/* The frozen output head and the cross-entropy of a training step, a few
 * tokens at a time.
 *
 * With the head W [d, vocab] frozen (LoRA), the loss needs the logits
 * z = W h only through their log-softmax, and the backward needs only
 *     dL/dh = W^T (softmax(z) - onehot(label)) / n.
 * ggml's graph keeps z [vocab, n] from the forward until the backward and
 * writes its gradient, as large again: 2 x 201 MB at batch 4 x 256 tokens of
 * SmolLM2, a fifth of a LoRA step's memory. tnn_fuse_head_loss rewrites the
 * training graph so that one node computes with the session's head_loss
 * kernel (cpu/kernels.h), for 48 labelled tokens at a time per thread, z
 * (packed product), each token's loss and its dL/dh, into [d + 1, n]:
 * column t is dL/dh_t, then the loss of token t.
 * Masked tokens (label -1) cost nothing: loss 0, gradient 0. Then
 *     ce    = sum of the n losses / n              (was cross_entropy_loss)
 *     dL/dh = that node's columns x dL/dce         (was out_prod(W, dz^T))
 * and the nodes that held z's gradient become one-float no-ops.
 *
 * The products are those of the head's copies as tnn_use_fast_copies runs
 * them (two int8 levels both ways on its packed copies; fgemm_bf16 on its
 * bfloat16 copy under --precision bf16 with a bfloat16 base), so only the
 * softmax's summation order differs from the unfused graph. Runs when the
 * session's kernels have head_loss, the head has such copies and its logits
 * are not capped (Gemma 2) or scaled (Granite); the forward graph (tnn_compute_forward) keeps
 * the logits. */
#include "graph/graph.h"

/* The head pair (models/frozen_copies.c puts it last), when both of its
 * products run on packed copies or on its bfloat16 copy. */
static const struct tnn_frozen_pair * packed_head(const struct tnn_cpu_state * cpu,
                                                  const struct tnn_frozen_base * base) {
    if (base->pairs == NULL || base->n_pairs < 1) {
        return NULL;
    }
    const struct tnn_frozen_pair * p = &base->pairs[base->n_pairs - 1];
    const bool packed = p->w_panels != NULL && p->wt_panels;
    const bool bf16 = p->w_bf16 != NULL && cpu->kernels.fgemm_bf16 != NULL;
    return packed || bf16 ? p : NULL;
}

bool tnn_head_loss_fusable(const struct tnn_step * step, const struct tnn_cpu_state * cpu,
                           const struct tnn_frozen_base * base) {
    /* capped (Gemma 2) or scaled (Granite) logits are not the head's products */
    return cpu->kernels.head_loss != NULL && packed_head(cpu, base) != NULL &&
           step->model->cfg.final_softcap == 0.0f && step->model->cfg.logit_scaling == 0.0f;
}

/* dst [d + 1, n]: per token, dL/dh and the loss (see the top of the file).
 * srcs: W [d, vocab] (its panels, or its bfloat16 copy), h [d, n], labels
 * int32 [n], and with panels W^T's [vocab, d]. Thread ith takes tokens
 * [n ith / nth, n (ith + 1) / nth). */
static void head_loss_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct tnn_cpu_state * cpu = userdata;
    char * scratch = tnn_thread_scratch(&cpu->scratch, ith, &nth);
    const struct ggml_tensor *w = dst->src[0], *h = dst->src[1], *labels = dst->src[2], *wt = dst->src[3];
    if (scratch == NULL) {
        return;
    }
    const int64_t d = h->ne[0], n = h->ne[1], vocab = w->ne[1];
    const bool bf16 = w->type == GGML_TYPE_BF16;
    const struct tnn_head_products products = {
        .qgemm = cpu->kernels.qgemm,
        .w_format = w->type == GGML_TYPE_Q4_1 ? TNN_QPANEL_Q4_1 : TNN_QPANEL_Q8_0,
        .w = bf16 ? NULL : w->data,
        .wt = bf16 ? NULL : wt->data,
        .fgemm_bf16 = cpu->kernels.fgemm_bf16,
        .w_bf16 = bf16 ? w->data : NULL,
    };
    cpu->kernels.head_loss(&products, d, vocab, h->data, (int64_t) (h->nb[1] / sizeof(float)), labels->data, n,
                           n * ith / nth, n * (ith + 1) / nth, dst->data, scratch);
}

/* dst [1] = the mean over n tokens of their losses, the last row of src
 * [m, n]; summed in order by one thread, so the same bytes every run. */
static void mean_loss_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    (void) nth;
    (void) userdata;
    if (ith != 0) {
        return;
    }
    const struct ggml_tensor * per_token = dst->src[0];
    const int64_t m = per_token->ne[0], n = per_token->ne[1];
    double sum = 0.0;
    for (int64_t t = 0; t < n; ++t) {
        sum += ((const float *) per_token->data)[t * m + m - 1];
    }
    *(float *) dst->data = (float) (sum / (double) n);
}

/* dst [1, n] = each token's loss from logits src0 [vocab, n] and int32
 * labels src1 (0 for a masked token): the forward graph's side of the
 * fusion, whose logits are kept. userdata: the session's kernels. */
static void logits_loss_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct tnn_cpu_kernels * kernels = userdata;
    const struct ggml_tensor * logits = dst->src[0];
    const int32_t * ids = dst->src[1]->data;
    const int64_t vocab = logits->ne[0], n = logits->ne[1];
    for (int64_t t = n * ith / nth; t < n * (ith + 1) / nth; ++t) {
        const float * z = (const float *) ((const char *) logits->data + t * logits->nb[1]);
        ((float *) dst->data)[t] = ids[t] < 0 || ids[t] >= vocab ? 0.0f : kernels->token_loss(z, vocab, ids[t]);
    }
}

struct ggml_tensor * tnn_head_loss_of_logits(const struct tnn_cpu_state * cpu, struct ggml_context * ctx,
                                             struct ggml_tensor * logits, struct ggml_tensor * labels) {
    struct ggml_tensor * args[2] = { logits, labels };
    struct ggml_tensor * per_token = ggml_custom_4d(ctx, GGML_TYPE_F32, 1, logits->ne[1], 1, 1, args, 2,
                                                    logits_loss_node, GGML_N_TASKS_MAX, (void *) &cpu->kernels);
    return ggml_custom_4d(ctx, GGML_TYPE_F32, 1, 1, 1, 1, &per_token, 1, mean_loss_node, 1, NULL);
}

/* dst [d, n] = rows [0, d) of src0 [d + 1, n] times the scalar src1 (dL/dce). */
static void scale_gradient_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    (void) userdata;
    const struct ggml_tensor * per_token = dst->src[0];
    const float g = *(const float *) dst->src[1]->data;
    const int64_t d = dst->ne[0], n = dst->ne[1];
    for (int64_t t = n * ith / nth; t < n * (ith + 1) / nth; ++t) {
        const float * in = (const float *) per_token->data + t * (d + 1);
        float * out = (float *) ((char *) dst->data + t * dst->nb[1]);
        for (int64_t i = 0; i < d; ++i) {
            out[i] = in[i] * g;
        }
    }
}

int tnn_fuse_head_loss(const struct tnn_step * step, struct tnn_cpu_state * cpu,
                       const struct tnn_frozen_base * base, struct ggml_cgraph * graph,
                       struct ggml_tensor * logits) {
    const struct tnn_frozen_pair * head = packed_head(cpu, base);
    struct ggml_tensor * ce = tnn_graph_reader(graph, logits, 0, GGML_OP_CROSS_ENTROPY_LOSS);
    struct ggml_tensor * dz = tnn_graph_reader(graph, logits, 1, GGML_OP_CROSS_ENTROPY_LOSS_BACK);
    struct ggml_tensor * dz_t = dz ? tnn_graph_reader(graph, dz, 0, GGML_OP_TRANSPOSE) : NULL;
    struct ggml_tensor * dh = dz_t ? tnn_graph_reader(graph, dz_t, 1, GGML_OP_OUT_PROD) : NULL;
    if (head == NULL || logits->op != GGML_OP_MUL_MAT || logits->src[0] != head->w || ce == NULL || dh == NULL ||
        dh->src[0] != head->w || ce->src[1]->type != GGML_TYPE_I32 || (logits->flags & GGML_TENSOR_FLAG_OUTPUT)) {
        return tnn_fail(TNN_ERR_STATE, "internal: the training graph's head and loss are not as "
                                       "tnn_fuse_head_loss expects");
    }
    struct ggml_tensor *h = logits->src[1], *labels = ce->src[1], *dce = dz->src[0];
    const int64_t d = h->ne[0], n = h->ne[1];
    if (h->type != GGML_TYPE_F32 || h->nb[0] != sizeof(float) || h->ne[2] != 1 || h->ne[3] != 1 ||
        dce->type != GGML_TYPE_F32) {
        return tnn_fail(TNN_ERR_STATE, "internal: the head's input is not an F32 matrix");
    }
    struct ggml_tensor * per_token = logits;   /* the node that held z now holds [d + 1, n] */
    struct ggml_tensor * head_srcs[4] = { head->w_bf16 ? head->w_bf16 : head->w_panels, h, labels, head->wt };
    tnn_become_custom(step->ctx_graph, per_token, head_loss_node, cpu, head_srcs, head->w_bf16 ? 3 : 4);
    tnn_reshape_node(per_token, d + 1, n);
    struct ggml_tensor * mean_srcs[1] = { per_token };
    tnn_become_custom(step->ctx_graph, ce, mean_loss_node, NULL, mean_srcs, 1);
    struct ggml_tensor * scale_srcs[2] = { per_token, dce };
    tnn_become_custom(step->ctx_graph, dh, scale_gradient_node, NULL, scale_srcs, 2);
    /* z's gradient and its transpose: read by nothing now */
    tnn_become_noop(dz);
    dz_t->src[0] = dz;
    tnn_reshape_node(dz_t, 1, 1);
    int status = tnn_grow_scratch(&cpu->scratch, step->n_threads,
                                  tnn_head_loss_scratch_bytes(d, head->w->ne[1], head->w_bf16 != NULL));
    if (status == TNN_OK && step->objective != TNN_OBJECTIVE_CROSS_ENTROPY) {
        status = tnn_preference_fuse(step, graph, per_token, ce, dh, dce);
    }
    return status;
}
