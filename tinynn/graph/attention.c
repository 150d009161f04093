/* Causal attention in one node each way under --precision bf16: the
 * attention_bf16 kernels (cpu/kernels.h) in place of ggml's scores,
 * softmax and products, which hold each head's T x T matrices in memory.
 *
 * The rewrite runs on the forward graph, before the backward is built.
 * tnn_attention (models/primitives.c) copies q, k and v [hd, heads, T * B]
 * into one matrix per head and sequence (q3, k3 [hd, T, heads B], vt [T,
 * hd, KV B]), computes
 *   O [hd, T, H B] = mul_mat(vt, softmax(mul_mat(k3, q3) scale + causal mask))
 * and copies O back to [hd, H, T, B]. That last copy becomes one custom
 * node on q, k and v as the block made them (the kernels read a batch's
 * heads in place: struct tnn_attention_operand's per_sequence), whose
 * backward (ggml_custom_set_backward, vendor patch 0013) is a second
 * custom node writing dK, dV in k's and v's layout and each thread's part
 * of dQ, the parts summed after it. The forward keeps each query's
 * log-sum-exp (lse) in a tensor of its own for the backward. The copies,
 * the scores, the softmax and O become no-ops. Only the plain causal mask
 * is taken: packed rows' masks and the sliding windows keep ggml's ops, and
 * so do capped scores (Gemma 2) and sinks (gpt-oss). */
#include "graph/graph.h"

#include <string.h>

bool tnn_attention_fusable(const struct tnn_step * step, const struct tnn_cpu_state * cpu) {
    const tnn_model_config * cfg = &step->model->cfg;
    const int64_t hd = tnn_head_dim(cfg);
    return step->bf16_products && cpu->kernels.attention_forward != NULL && cfg->attn_softcap == 0.0f &&
           !cfg->attn_sinks && hd % 32 == 0 && hd <= TNN_ATTENTION_MAX_HEAD_DIM && step->packed_rows == 0;
}

/* An operand as a batch's heads lie in x [hd, heads, T * B] (or [hd,
 * heads, T, B]): matrix h + heads b is head h of sequence b. */
static struct tnn_attention_operand operand(const struct ggml_tensor * x, int64_t t_seq) {
    const int64_t f = (int64_t) sizeof(float);
    const int64_t sequence = x->ne[2] == t_seq ? (int64_t) x->nb[3] / f : t_seq * (int64_t) x->nb[2] / f;
    return (struct tnn_attention_operand){
        (float *) x->data, (int64_t) x->nb[1] / f, (int64_t) x->nb[2] / f, 1, x->ne[1], sequence
    };
}

/* The kernels' arguments from a node's first four sources, q [hd, H, T *
 * B], k and v [hd, KV, T * B] and lse [T, H * B], and the forward's output
 * out [hd, H, T, B]. The backward node reads its own sources, not the
 * forward node's: with recomputation they are the duplicates, and the
 * forward's own may be gone by then. */
static struct tnn_attention_args args_of(const struct ggml_tensor * node, const struct ggml_tensor * out,
                                         float scale) {
    const struct ggml_tensor *q = node->src[0], *k = node->src[1], *v = node->src[2], *lse = node->src[3];
    const int64_t t = lse->ne[0];
    return (struct tnn_attention_args){
        .head_dim = q->ne[0],
        .t_seq = t,
        .n_queries = lse->ne[1],
        .group = q->ne[1] / k->ne[1],
        .scale = scale,
        .q = operand(q, t),
        .k = operand(k, t),
        .v = operand(v, t),
        .out = operand(out, t),
        .lse = (float *) lse->data,
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

/* dst, flat: dK and dV [hd, KV, T * B] (k's and v's layout), then the
 * threads' parts of dQ, [H * B][padded T][hd] each. srcs: the forward's
 * four, the forward node (O) and its gradient. */
static void backward_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct tnn_attention_use * use = userdata;
    void * scratch = tnn_thread_scratch(&use->cpu->scratch, ith, &nth);
    if (scratch == NULL) {
        return;
    }
    struct tnn_attention_args args = args_of(dst, dst->src[4], use->scale);
    const int64_t hd = args.head_dim, t = args.t_seq, kv = dst->src[1]->ne[1];
    const int64_t kv_values = ggml_nelements(dst->src[1]);
    float * out = (float *) dst->data;
    args.dout = operand(dst->src[5], t);
    args.dk = (struct tnn_attention_operand){ out, hd, kv * hd, 1, kv, t * kv * hd };
    args.dv = (struct tnn_attention_operand){ out + kv_values, hd, kv * hd, 1, kv, t * kv * hd };
    args.dq_part = args.n_queries * padded_tokens(t) * hd;
    args.dq_parts = use->dq_parts;
    args.dq = (struct tnn_attention_operand){ out + 2 * kv_values, padded_tokens(t) * hd, hd, 1, 0, 0 };
    use->cpu->kernels.attention_backward(&args, scratch, ith, nth);
}

/* The forward node's backward (ggml_custom_backward_t): the gradients of
 * q, k and v, each in its own layout. */
static void attention_backward(struct ggml_context * ctx, struct ggml_tensor * forward, struct ggml_tensor * grad,
                               struct ggml_tensor ** src_grads) {
    const struct tnn_attention_use * use = tnn_custom_userdata(forward, forward_node);
    struct ggml_tensor *q = forward->src[0], *k = forward->src[1], *v = forward->src[2], *lse = forward->src[3];
    const int64_t hd = q->ne[0], heads = q->ne[1], t = lse->ne[0], batch = lse->ne[1] / heads;
    const int64_t tp = padded_tokens(t), part = lse->ne[1] * tp * hd, kv_values = ggml_nelements(k);
    struct ggml_tensor * srcs[6] = { q, k, v, lse, forward, grad };
    struct ggml_tensor * all = ggml_custom_4d(ctx, GGML_TYPE_F32, 2 * kv_values + use->dq_parts * part, 1, 1, 1,
                                              srcs, 6, backward_node, GGML_N_TASKS_MAX, (void *) use);
    src_grads[1] = tnn_view_like(ctx, all, k, 0);
    src_grads[2] = tnn_view_like(ctx, all, v, kv_values);
    /* each part [H * B][tp][hd] read as [hd, H, T, B]: dims, heads, tokens, sequences */
    const size_t f = sizeof(float);
    struct ggml_tensor * dq = NULL;
    for (int32_t p = 0; p < use->dq_parts; ++p) {
        struct ggml_tensor * one = ggml_view_4d(ctx, all, hd, heads, t, batch, tp * hd * f, hd * f,
                                                heads * tp * hd * f, (2 * kv_values + p * part) * f);
        dq = dq == NULL ? one : ggml_add(ctx, dq, one);
    }
    src_grads[0] = ggml_reshape(ctx, use->dq_parts == 1 ? ggml_cont(ctx, dq) : dq, q);
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

/* The one node of graph with t among its sources, or NULL (none, or more
 * than one); views of t through another view are not counted. */
static struct ggml_tensor * source_reader(struct ggml_cgraph * graph, const struct ggml_tensor * t) {
    struct ggml_tensor * found = NULL;
    for (int i = 0; i < ggml_graph_n_nodes(graph); ++i) {
        struct ggml_tensor * node = ggml_graph_node(graph, i);
        for (int k = 0; k < GGML_MAX_SRC; ++k) {
            if (node->src[k] == t) {
                if (found != NULL && found != node) {
                    return NULL;
                }
                found = node;
            }
        }
    }
    return found;
}

/* Whether the only views of t in graph are a and b. */
static bool views_only(struct ggml_cgraph * graph, const struct ggml_tensor * t, const struct ggml_tensor * a,
                       const struct ggml_tensor * b) {
    for (int i = 0; i < ggml_graph_n_nodes(graph); ++i) {
        const struct ggml_tensor * node = ggml_graph_node(graph, i);
        if (node->view_src == t && node != a && node != b) {
            return false;
        }
    }
    return true;
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

/* Whether t is a permute of these axes. */
static bool permutes(const struct ggml_tensor * t, int a0, int a1, int a2, int a3) {
    int32_t axes[4];
    memcpy(axes, t->op_params, sizeof axes);
    return t->op == GGML_OP_PERMUTE && axes[0] == a0 && axes[1] == a1 && axes[2] == a2 && axes[3] == a3;
}

/* x3 = reshape(cont(permute(reshape(x), axes))) as tnn_attention lays out
 * a batch's heads (models/primitives.c): x [hd, heads, T * B], contiguous,
 * and *copy the cont; else NULL. */
static struct ggml_tensor * heads_source(struct ggml_tensor * x3, int a0, int a1, int a2, int a3,
                                         struct ggml_tensor ** copy) {
    struct ggml_tensor * c = x3->op == GGML_OP_RESHAPE ? x3->src[0] : NULL;
    struct ggml_tensor * p = c != NULL && c->op == GGML_OP_CONT ? c->src[0] : NULL;
    struct ggml_tensor * r = p != NULL && permutes(p, a0, a1, a2, a3) ? p->src[0] : NULL;
    struct ggml_tensor * x = r != NULL && r->op == GGML_OP_RESHAPE ? r->src[0] : NULL;
    if (x == NULL || !f32_rows(x) || !ggml_is_contiguous(x)) {
        return NULL;
    }
    *copy = c;
    return x;
}

/* What the rewrite of one attention touches (the file's comment). */
struct attention_nodes {
    struct ggml_tensor *q, *k, *v;                /* [hd, heads, T * B], as the block made them */
    struct ggml_tensor *q_copy, *k_copy, *v_copy; /* their per-head copies: no-ops after */
    struct ggml_tensor *q3, *k3, *vt;             /* the copies' 3-d views: no-ops after */
    struct ggml_tensor *scores, *weights, *out;   /* no-ops after */
    struct ggml_tensor *out_4d, *out_permuted;    /* out's views: no-ops after */
    struct ggml_tensor * result;                  /* [hd, H, T, B]: becomes the fused node */
};

/* Whether out is attention the kernels take (the file's comment); then
 * *a holds its nodes. */
static bool fusable_node(const struct tnn_step * step, struct ggml_cgraph * graph, struct ggml_tensor * out,
                         struct attention_nodes * a) {
    struct ggml_tensor * w = out->src[1];
    if (out->op != GGML_OP_MUL_MAT || w == NULL || w->op != GGML_OP_SOFT_MAX || w->src[1] != step->causal_mask ||
        w->src[2] != NULL || op_param_f32(w, 1) != 0.0f) {
        return false;
    }
    struct ggml_tensor * sc = w->src[0];
    if (sc->op != GGML_OP_MUL_MAT) {
        return false;
    }
    struct ggml_tensor *q3 = sc->src[1], *k3 = sc->src[0], *vt = out->src[0];
    const int64_t hd = q3->ne[0], t = q3->ne[1];
    const bool shapes = f32_rows(q3) && f32_rows(k3) && f32_rows(vt) && f32_rows(out) && k3->ne[0] == hd &&
                        k3->ne[1] == t && vt->ne[0] == t && vt->ne[1] == hd && vt->ne[2] == k3->ne[2] &&
                        q3->ne[2] % k3->ne[2] == 0 && hd % 32 == 0 && hd <= TNN_ATTENTION_MAX_HEAD_DIM;
    if (!shapes || only_reader(graph, sc) != w || only_reader(graph, w) != out) {
        return false;
    }
    *a = (struct attention_nodes){ .scores = sc, .weights = w, .out = out, .q3 = q3, .k3 = k3, .vt = vt };
    a->q = heads_source(q3, 0, 2, 1, 3, &a->q_copy);
    a->k = heads_source(k3, 0, 2, 1, 3, &a->k_copy);
    a->v = heads_source(vt, 1, 2, 0, 3, &a->v_copy);
    /* out's chain of views: each view's view_src is out itself */
    a->out_4d = source_reader(graph, out);
    a->out_permuted = a->out_4d != NULL ? source_reader(graph, a->out_4d) : NULL;
    a->result = a->out_permuted != NULL ? only_reader(graph, a->out_permuted) : NULL;
    if (a->out_permuted == NULL || !views_only(graph, out, a->out_4d, a->out_permuted)) {
        return false;
    }
    return a->q != NULL && a->k != NULL && a->v != NULL && only_reader(graph, q3) == sc &&
           only_reader(graph, k3) == sc && only_reader(graph, vt) == out && only_reader(graph, a->q_copy) == q3 &&
           only_reader(graph, a->k_copy) == k3 && only_reader(graph, a->v_copy) == vt && a->out_4d != NULL &&
           a->out_4d->op == GGML_OP_RESHAPE && a->out_permuted->op == GGML_OP_PERMUTE &&
           permutes(a->out_permuted, 0, 2, 1, 3) && a->result != NULL && a->result->op == GGML_OP_CONT &&
           a->k->ne[1] * (q3->ne[2] / k3->ne[2]) == a->q->ne[1] && a->q->ne[0] == hd;
}

int tnn_fuse_attention(const struct tnn_step * step, struct tnn_cpu_state * cpu, struct ggml_cgraph * graph) {
    if (!tnn_attention_fusable(step, cpu)) {
        return TNN_OK;
    }
    struct tnn_attention_use * use = &cpu->attention_use;
    size_t scratch = 0;
    for (int i = 0; i < ggml_graph_n_nodes(graph); ++i) {
        struct attention_nodes a;
        if (!fusable_node(step, graph, ggml_graph_node(graph, i), &a)) {
            continue;
        }
        const float scale = op_param_f32(a.weights, 0);
        if (use->cpu != NULL && use->scale != scale) {
            continue;   /* (one scale a model) */
        }
        *use = (struct tnn_attention_use){ cpu, scale, step->n_threads };
        const int64_t t = a.scores->src[1]->ne[1], n_queries = a.scores->src[1]->ne[2];
        struct ggml_tensor * lse = ggml_new_tensor_2d(step->ctx_opt, GGML_TYPE_F32, t, n_queries);
        ggml_set_name(lse, "attention lse");
        struct ggml_tensor * srcs[4] = { a.q, a.k, a.v, lse };
        tnn_become_custom(step->ctx_graph, a.result, forward_node, use, srcs, 4);
        ggml_custom_set_backward(a.result, attention_backward);
        struct ggml_tensor * unused[] = { a.out_permuted, a.out_4d, a.out,    a.weights, a.scores, a.q3,
                                          a.k3,           a.vt,     a.q_copy, a.k_copy,  a.v_copy };
        for (size_t u = 0; u < sizeof unused / sizeof unused[0]; ++u) {
            tnn_become_noop(unused[u]);
            unused[u]->view_src = NULL;   /* (autodiff takes a view only as a view op) */
            unused[u]->view_offs = 0;
        }
        const size_t bytes = tnn_attention_bf16_scratch_bytes(a.q->ne[0], t, a.q->ne[1] / a.k->ne[1]);
        scratch = bytes > scratch ? bytes : scratch;
    }
    return scratch > 0 ? tnn_grow_scratch(&cpu->scratch, step->n_threads, scratch) : TNN_OK;
}
