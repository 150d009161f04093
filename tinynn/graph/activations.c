/* The activations kernels (cpu/kernels.h) in place of ggml's scalar passes,
 * under --precision bf16 (not ggml's bits: the f32 path keeps ggml's ops).
 *
 * SwiGLU's backward. ggml's of swiglu(g, up) = silu(g) up (vendor/ggml/src/ggml.c) is
 *   dgate = silu_back(dy up, g)    (MUL, then SILU_BACK: a scalar expf a value)
 *   dup   = silu(g) dy             (SILU, then MUL)
 * Each pair becomes one custom node reading g, dy (and up) once; the MUL
 * and SILU that fed it, read by it alone, become no-ops.
 *
 * RMS norm. Each RMS_NORM becomes a node, with the weight's MUL after it
 * where that is the norm's one reader (as ggml's CPU backend fuses them);
 * each RMS_NORM_BACK another. */
#include "graph/graph.h"

#include <stdlib.h>
#include <string.h>

/* dst = dgate from src0 = dy, src1 = up, src2 = g (or src0 = dy, src1 = g). */
static void gate_gradient_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct tnn_cpu_kernels * kernels = userdata;
    const bool with_up = dst->src[2] != NULL;
    const float * dy = (const float *) dst->src[0]->data;
    const float * up = with_up ? (const float *) dst->src[1]->data : NULL;
    const float * g = (const float *) dst->src[with_up ? 2 : 1]->data;
    int64_t i0, i1;
    tnn_share_groups(ggml_nelements(dst), 16, ith, nth, &i0, &i1);
    kernels->swiglu_back(g, up, dy, (float *) dst->data, NULL, i0, i1);
}

/* dst = dup = silu(g) dy from src0 = g, src1 = dy. */
static void up_gradient_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct tnn_cpu_kernels * kernels = userdata;
    int64_t i0, i1;
    tnn_share_groups(ggml_nelements(dst), 16, ith, nth, &i0, &i1);
    kernels->swiglu_back((const float *) dst->src[0]->data, NULL, (const float *) dst->src[1]->data, NULL,
                         (float *) dst->data, i0, i1);
}

/* Whether t is a contiguous F32 tensor of node's shape. */
static bool plain(const struct ggml_tensor * t, const struct ggml_tensor * node) {
    return t != NULL && t->type == GGML_TYPE_F32 && ggml_is_contiguous(t) && ggml_are_same_shape(t, node);
}

static bool is_silu(const struct ggml_tensor * t) {
    return t->op == GGML_OP_UNARY && ggml_get_unary_op(t) == GGML_UNARY_OP_SILU;
}

/* Whether t, a node of the graph, can become a no-op: its one reader is
 * the node that absorbs it. */
static bool absorbable(const struct tnn_node_index * index, int n_nodes, const int * readers,
                       const struct ggml_tensor * t) {
    const int i = tnn_node_find(index, n_nodes, t);
    const int32_t kept = GGML_TENSOR_FLAG_OUTPUT | GGML_TENSOR_FLAG_PARAM | GGML_TENSOR_FLAG_LOSS;
    return i >= 0 && readers[i] == 1 && (t->flags & kept) == 0;
}

/* Thread ith's share of t's rows. */
static void rows_of(const struct ggml_tensor * t, int ith, int nth, int64_t * r0, int64_t * r1) {
    const int64_t rows = ggml_nrows(t);
    *r0 = rows * ith / nth;
    *r1 = rows * (ith + 1) / nth;
}

/* dst = rms_norm(src0) (times src1, the weight [d], where given). */
static void norm_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct tnn_norm_use * use = userdata;
    const int64_t d = dst->ne[0];
    const float * w = dst->src[1] != NULL ? (const float *) dst->src[1]->data : NULL;
    int64_t r0, r1;
    rows_of(dst, ith, nth, &r0, &r1);
    use->kernels->rms_norm((const float *) dst->src[0]->data, d, w, use->eps, (float *) dst->data, d, d, r0, r1);
}

/* dst = dx of rms_norm from src0 = dz and src1 = x. */
static void norm_back_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct tnn_norm_use * use = userdata;
    const int64_t d = dst->ne[0];
    int64_t r0, r1;
    rows_of(dst, ith, nth, &r0, &r1);
    use->kernels->rms_norm_back((const float *) dst->src[0]->data, d, (const float *) dst->src[1]->data, d,
                                use->eps, (float *) dst->data, d, d, r0, r1);
}

/* The session's norm use for this epsilon, added if new; NULL when full. */
static const struct tnn_norm_use * norm_use(struct tnn_cpu_state * cpu, float eps) {
    for (int i = 0; i < TNN_NORM_USES; ++i) {
        struct tnn_norm_use * use = &cpu->norm_uses[i];
        if (use->kernels == NULL) {
            *use = (struct tnn_norm_use){ &cpu->kernels, eps };
        }
        if (use->eps == eps) {
            return use;
        }
    }
    return NULL;
}

static float eps_of(const struct ggml_tensor * norm) {
    float eps;
    memcpy(&eps, norm->op_params, sizeof eps);
    return eps;
}

/* node (RMS_NORM or RMS_NORM_BACK on contiguous F32 rows) on the kernels. */
static void use_norm_kernels(struct ggml_context * ctx, struct tnn_cpu_state * cpu,
                             const struct tnn_node_index * index, int n_nodes, const int * readers,
                             struct ggml_cgraph * graph, struct ggml_tensor * node) {
    const struct tnn_norm_use * use = norm_use(cpu, eps_of(node));
    if (use == NULL || !plain(node, node) || !plain(node->src[0], node) ||
        (node->op == GGML_OP_RMS_NORM_BACK && !plain(node->src[1], node))) {
        return;
    }
    void * userdata = (void *) use;
    if (node->op == GGML_OP_RMS_NORM_BACK) {
        struct ggml_tensor * srcs[2] = { node->src[0], node->src[1] };
        tnn_become_custom(ctx, node, norm_back_node, userdata, srcs, 2);
        return;
    }
    /* the weight's MUL, when it alone reads the norm: one node */
    struct ggml_tensor * mul = absorbable(index, n_nodes, readers, node)
                                   ? tnn_graph_reader(graph, node, 0, GGML_OP_MUL)
                                   : NULL;
    if (mul == NULL) {
        mul = absorbable(index, n_nodes, readers, node) ? tnn_graph_reader(graph, node, 1, GGML_OP_MUL) : NULL;
    }
    struct ggml_tensor * w = mul == NULL ? NULL : mul->src[0] == node ? mul->src[1] : mul->src[0];
    if (mul != NULL && plain(mul, node) && w->type == GGML_TYPE_F32 && ggml_is_contiguous(w) &&
        ggml_nelements(w) == node->ne[0]) {
        struct ggml_tensor * srcs[2] = { node->src[0], w };
        tnn_become_custom(ctx, mul, norm_node, userdata, srcs, 2);
        tnn_become_noop(node);
        return;
    }
    struct ggml_tensor * srcs[1] = { node->src[0] };
    tnn_become_custom(ctx, node, norm_node, userdata, srcs, 1);
}

int tnn_use_activation_kernels(const struct tnn_step * step, struct tnn_cpu_state * cpu,
                               struct ggml_cgraph * graph) {
    if (!step->bf16_products || cpu->kernels.swiglu_back == NULL) {
        return TNN_OK;
    }
    struct tnn_node_index * index = NULL;
    int * readers = NULL;
    const int status = tnn_count_readers(graph, &index, &readers);
    if (status != TNN_OK) {
        return status;
    }
    struct ggml_tensor ** nodes = ggml_graph_nodes(graph);
    const int n_nodes = ggml_graph_n_nodes(graph);
    void * kernels = &cpu->kernels;
    struct ggml_context * ctx = step->ctx_graph;
    for (int i = 0; i < n_nodes; ++i) {
        struct ggml_tensor * node = nodes[i];
        if (node->op == GGML_OP_RMS_NORM || node->op == GGML_OP_RMS_NORM_BACK) {
            use_norm_kernels(ctx, cpu, index, n_nodes, readers, graph, node);
            continue;
        }
        if (node->op == GGML_OP_SILU_BACK && plain(node, node) && plain(node->src[0], node) &&
            plain(node->src[1], node)) {
            struct ggml_tensor *dy_up = node->src[0], *g = node->src[1];
            if (dy_up->op == GGML_OP_MUL && plain(dy_up->src[0], node) && plain(dy_up->src[1], node) &&
                absorbable(index, n_nodes, readers, dy_up)) {
                struct ggml_tensor * srcs[3] = { dy_up->src[0], dy_up->src[1], g };
                tnn_become_custom(ctx, node, gate_gradient_node, kernels, srcs, 3);
                tnn_become_noop(dy_up);
            } else {
                struct ggml_tensor * srcs[2] = { dy_up, g };
                tnn_become_custom(ctx, node, gate_gradient_node, kernels, srcs, 2);
            }
            continue;
        }
        if (node->op == GGML_OP_MUL && plain(node, node)) {
            const int which = is_silu(node->src[0]) ? 0 : is_silu(node->src[1]) ? 1 : -1;
            if (which < 0) {
                continue;
            }
            struct ggml_tensor *silu = node->src[which], *dy = node->src[1 - which];
            if (!plain(silu, node) || !plain(silu->src[0], node) || !plain(dy, node) ||
                !absorbable(index, n_nodes, readers, silu)) {
                continue;
            }
            struct ggml_tensor * srcs[2] = { silu->src[0], dy };
            tnn_become_custom(ctx, node, up_gradient_node, kernels, srcs, 2);
            tnn_become_noop(silu);
        }
    }
    free(index);
    free(readers);
    return TNN_OK;
}
