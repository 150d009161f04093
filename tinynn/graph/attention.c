/* Causal attention in one node each way under --precision bf16: the
 * attention_bf16 kernels (cpu/kernels.h) in place of ggml's scores,
 * softmax and products, which hold each head's T x T matrices in memory.
 *
 * The rewrite runs on the forward graph, before the backward is built. Each
 *   O [hd, T, H] = mul_mat(vt, softmax(mul_mat(k3, q3) scale + causal mask))
 * (models/primitives.c: attention_heads) becomes one custom node on q3, k3
 * and vt, whose backward (ggml_custom_set_backward, vendor patch 0013) is a
 * second custom node writing dK, dV and each thread's part of dQ, the parts
 * summed after it. The forward keeps each query's log-sum-exp (lse) in a
 * tensor of its own for the backward. The scores and softmax nodes become
 * no-ops. Only the plain causal mask is taken: packed rows' masks and the
 * sliding windows keep ggml's ops, and so do capped scores (Gemma 2). */
#include "session/session.h"

#include <string.h>

bool tnn_attention_fusable(const tnn_session * s) {
    const tnn_model_config * cfg = &s->model.cfg;
    const int64_t hd = tnn_head_dim(cfg);
    return s->train.bf16_products && s->cpu.kernels.attention_forward != NULL && cfg->attn_softcap == 0.0f &&
           hd % 32 == 0 && hd <= TNN_ATTENTION_MAX_HEAD_DIM && s->train.packed_rows == 0;
}

/* An operand of [a, b, c] in ggml's order, element (matrix c, token, dim). */
static struct tnn_attention_operand operand(const struct ggml_tensor * t, bool tokens_first) {
    const int64_t f = (int64_t) sizeof(float);
    struct tnn_attention_operand op = { (float *) t->data, (int64_t) t->nb[2] / f, (int64_t) t->nb[1] / f, 1 };
    if (tokens_first) {   /* vt [T, hd, n]: a token's dims are a column */
        op.token = 1;
        op.dim = (int64_t) t->nb[1] / f;
    }
    return op;
}

/* The kernels' arguments from a node's first four sources, q3 [hd, T, H],
 * k3 [hd, T, KV], vt [T, hd, KV] and lse [T, H], and the forward's output
 * out [hd, T, H]. The backward node reads its own sources, not the forward
 * node's: with recomputation they are the duplicates, and the forward's
 * own may be gone by then. */
static struct tnn_attention_args args_of(const struct ggml_tensor * node, const struct ggml_tensor * out,
                                         float scale) {
    const struct ggml_tensor *q3 = node->src[0], *k3 = node->src[1], *vt = node->src[2];
    return (struct tnn_attention_args){
        .head_dim = q3->ne[0],
        .t_seq = q3->ne[1],
        .n_queries = q3->ne[2],
        .group = q3->ne[2] / k3->ne[2],
        .scale = scale,
        .q = operand(q3, false),
        .k = operand(k3, false),
        .v = operand(vt, true),
        .out = operand(out, false),
        .lse = (float *) node->src[3]->data,
    };
}

static void forward_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct tnn_attention_use * use = userdata;
    void * scratch = tnn_thread_scratch(&use->cpu->scratch, ith, &nth);
    if (scratch == NULL) {
        return;
    }
    const struct tnn_attention_args args = args_of(dst, dst, use->scale);
    use->cpu->kernels.attention_forward(&args, scratch, ith, nth);
}

/* dQ's rows a query matrix in a thread's part: the sequence padded to whole blocks. */
static int64_t padded_tokens(int64_t t_seq) {
    return (t_seq + TNN_ATTENTION_BLOCK - 1) / TNN_ATTENTION_BLOCK * TNN_ATTENTION_BLOCK;
}

/* dst, flat: dK [hd, T, KV], dV [T, hd, KV] (vt's shape), then the
 * threads' parts of dQ, [H][padded T][hd] each. srcs: the forward's four,
 * the forward node (O) and its gradient. */
static void backward_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct tnn_attention_use * use = userdata;
    void * scratch = tnn_thread_scratch(&use->cpu->scratch, ith, &nth);
    if (scratch == NULL) {
        return;
    }
    struct tnn_attention_args args = args_of(dst, dst->src[4], use->scale);
    const int64_t hd = args.head_dim, t = args.t_seq, kv = args.n_queries / args.group;
    float * out = (float *) dst->data;
    args.dout = operand(dst->src[5], false);
    args.dk = (struct tnn_attention_operand){ out, t * hd, hd, 1 };
    args.dv = (struct tnn_attention_operand){ out + kv * t * hd, t * hd, 1, t };
    args.dq_part = args.n_queries * padded_tokens(t) * hd;
    args.dq_parts = use->dq_parts;
    args.dq = (struct tnn_attention_operand){ out + 2 * kv * t * hd, padded_tokens(t) * hd, hd, 1 };
    use->cpu->kernels.attention_backward(&args, scratch, ith, nth);
}

/* The forward node's backward (ggml_custom_backward_t): the gradients of
 * q3, k3 and vt. */
static void attention_backward(struct ggml_context * ctx, struct ggml_tensor * forward, struct ggml_tensor * grad,
                               struct ggml_tensor ** src_grads) {
    const struct tnn_attention_use * use = tnn_custom_userdata(forward, forward_node);
    struct ggml_tensor *q3 = forward->src[0], *k3 = forward->src[1], *vt = forward->src[2];
    const int64_t hd = q3->ne[0], t = q3->ne[1], heads = q3->ne[2], kv = k3->ne[2];
    const int64_t part = heads * padded_tokens(t) * hd;
    struct ggml_tensor * srcs[6] = { q3, k3, vt, forward->src[3], forward, grad };
    struct ggml_tensor * all = ggml_custom_4d(ctx, GGML_TYPE_F32, 2 * kv * t * hd + use->dq_parts * part, 1, 1, 1,
                                              srcs, 6, backward_node, GGML_N_TASKS_MAX, (void *) use);
    const size_t f = sizeof(float);
    src_grads[1] = ggml_view_3d(ctx, all, hd, t, kv, hd * f, t * hd * f, 0);
    src_grads[2] = ggml_view_3d(ctx, all, t, hd, kv, t * f, t * hd * f, kv * t * hd * f);
    struct ggml_tensor * dq = NULL;
    for (int32_t p = 0; p < use->dq_parts; ++p) {
        struct ggml_tensor * one = ggml_view_3d(ctx, all, hd, t, heads, hd * f, padded_tokens(t) * hd * f,
                                                (2 * kv * t * hd + p * part) * f);
        dq = dq == NULL ? one : ggml_add(ctx, dq, one);
    }
    src_grads[0] = use->dq_parts == 1 ? ggml_cont(ctx, dq) : dq;
}

bool tnn_is_fused_attention(const struct ggml_tensor * node) {
    return tnn_custom_userdata(node, forward_node) != NULL;
}

/* The one reader of t in graph, or NULL (none, or more than one). */
static struct ggml_tensor * only_reader(struct ggml_cgraph * graph, const struct ggml_tensor * t) {
    struct ggml_tensor * found = NULL;
    for (int i = 0; i < ggml_graph_n_nodes(graph); ++i) {
        struct ggml_tensor * node = ggml_graph_node(graph, i);
        for (int k = 0; k < GGML_MAX_SRC; ++k) {
            if (node->src[k] == t || (node->view_src == t && k == 0)) {
                if (found != NULL && found != node) {
                    return NULL;
                }
                found = node;
            }
        }
    }
    return found;
}

static bool f32_rows(const struct ggml_tensor * t) {
    return t->type == GGML_TYPE_F32 && t->nb[0] == sizeof(float) && t->ne[3] == 1 &&
           t->nb[1] % sizeof(float) == 0 && t->nb[2] % sizeof(float) == 0;
}

/* An op's float parameter i (the softmax's scale 0 and max_bias 1). */
static float op_param_f32(const struct ggml_tensor * t, int i) {
    float value;
    memcpy(&value, (const char *) t->op_params + i * sizeof(float), sizeof value);
    return value;
}

/* Whether out is attention the kernels take (the file's comment); then
 * *scores and *weights are its inner nodes. */
static bool fusable_node(const tnn_session * s, struct ggml_cgraph * graph, struct ggml_tensor * out,
                         struct ggml_tensor ** scores, struct ggml_tensor ** weights) {
    struct ggml_tensor * w = out->src[1];
    if (out->op != GGML_OP_MUL_MAT || w == NULL || w->op != GGML_OP_SOFT_MAX ||
        w->src[1] != s->train.causal_mask || w->src[2] != NULL || op_param_f32(w, 1) != 0.0f) {
        return false;
    }
    struct ggml_tensor * sc = w->src[0];
    if (sc->op != GGML_OP_MUL_MAT) {
        return false;
    }
    const struct ggml_tensor *q3 = sc->src[1], *k3 = sc->src[0], *vt = out->src[0];
    const int64_t hd = q3->ne[0], t = q3->ne[1];
    const bool shapes = f32_rows(q3) && f32_rows(k3) && f32_rows(vt) && f32_rows(out) && k3->ne[0] == hd &&
                        k3->ne[1] == t && vt->ne[0] == t && vt->ne[1] == hd && vt->ne[2] == k3->ne[2] &&
                        q3->ne[2] % k3->ne[2] == 0 && hd % 32 == 0 && hd <= TNN_ATTENTION_MAX_HEAD_DIM;
    if (!shapes || only_reader(graph, sc) != w || only_reader(graph, w) != out) {
        return false;
    }
    *scores = sc;
    *weights = w;
    return true;
}

int tnn_fuse_attention(tnn_session * s, struct ggml_cgraph * graph) {
    if (!tnn_attention_fusable(s)) {
        return TNN_OK;
    }
    struct tnn_attention_use * use = &s->cpu.attention_use;
    size_t scratch = 0;
    for (int i = 0; i < ggml_graph_n_nodes(graph); ++i) {
        struct ggml_tensor *out = ggml_graph_node(graph, i), *scores = NULL, *weights = NULL;
        if (!fusable_node(s, graph, out, &scores, &weights)) {
            continue;
        }
        const float scale = op_param_f32(weights, 0);
        if (use->cpu != NULL && use->scale != scale) {
            continue;   /* (one scale a model) */
        }
        *use = (struct tnn_attention_use){ &s->cpu, scale, s->n_threads };
        struct ggml_tensor *q3 = scores->src[1], *k3 = scores->src[0], *vt = out->src[0];
        struct ggml_tensor * lse = ggml_new_tensor_2d(s->train.ctx_opt, GGML_TYPE_F32, q3->ne[1], q3->ne[2]);
        ggml_set_name(lse, "attention lse");
        struct ggml_tensor * srcs[4] = { q3, k3, vt, lse };
        tnn_become_custom(s->train.ctx_graph, out, forward_node, use, srcs, 4);
        ggml_custom_set_backward(out, attention_backward);
        tnn_become_noop(weights);
        tnn_become_noop(scores);
        const size_t bytes = tnn_attention_bf16_scratch_bytes(q3->ne[0], q3->ne[1], q3->ne[2] / k3->ne[2]);
        scratch = bytes > scratch ? bytes : scratch;
    }
    return scratch > 0 ? tnn_grow_scratch(&s->cpu.scratch, s->n_threads, scratch) : TNN_OK;
}
