/* tnn_op_check (tinynn.h): one ggml operation forward and backward on the
 * session's backend, for tests that hold the backward toy gave it (a vendor
 * patch) against a float64 reference. The graph is what a training step's
 * would be around the op: its inputs are parameters, the loss the sum of
 * the output times a given gradient, ggml_build_backward_expand the rest. */
#include "session/session.h"

#include <string.h>

#define MAX_OP_INPUTS 11

/* An operation's graph from its inputs, or NULL (tnn_fail said why) when
 * the shapes do not fit it. */
typedef struct ggml_tensor * (*op_builder)(struct ggml_context * ctx, struct ggml_tensor ** in);

static struct ggml_tensor * build_ssm_conv(struct ggml_context * ctx, struct ggml_tensor ** in) {
    struct ggml_tensor *sx = in[0], *c = in[1];
    if (sx->ne[3] != 1 || c->ne[2] != 1 || c->ne[3] != 1 || c->ne[0] < 1 || sx->ne[1] != c->ne[1] ||
        sx->ne[0] < c->ne[0]) {
        tnn_fail(TNN_ERR_ARG, "ssm_conv: sx must be [d_conv - 1 + n_t, d_inner, n_s] with n_t >= 1 and "
                              "c [d_conv, d_inner]");
        return NULL;
    }
    return ggml_ssm_conv(ctx, sx, c);
}

/* x zero-padded: 2 before and 1 after along dim 0, 1 before along dim 1 */
static struct ggml_tensor * build_pad(struct ggml_context * ctx, struct ggml_tensor ** in) {
    return ggml_pad_ext(ctx, in[0], 2, 1, 1, 0, 0, 0, 0, 0);
}

/* q, k, v [n, heads, T, B], g and beta [1, heads, T, B] */
static struct ggml_tensor * build_gated_delta_net(struct ggml_context * ctx, struct ggml_tensor ** in) {
    for (int i = 1; i < 5; ++i) {
        const int64_t ne0 = i < 3 ? in[0]->ne[0] : 1;
        if (in[i]->ne[0] != ne0 || in[i]->ne[1] != in[0]->ne[1] || in[i]->ne[2] != in[0]->ne[2] ||
            in[i]->ne[3] != in[0]->ne[3]) {
            tnn_fail(TNN_ERR_ARG,
                     "gated_delta_net: q, k, v must be [n, heads, T, B] and g, beta [1, heads, T, B]");
            return NULL;
        }
    }
    return tnn_gated_delta_net(ctx, in[0], in[1], in[2], in[3], in[4], NULL);
}

/* x [head_dim, heads, T, B], dt [heads, T, B], a [1, heads], b and c
 * [state, groups, T, B] */
static struct ggml_tensor * build_ssm_scan(struct ggml_context * ctx, struct ggml_tensor ** in) {
    const struct ggml_tensor *x = in[0], *dt = in[1], *a = in[2], *b = in[3], *c = in[4];
    const bool fits = dt->ne[0] == x->ne[1] && dt->ne[1] == x->ne[2] && dt->ne[2] == x->ne[3] && dt->ne[3] == 1 &&
                      a->ne[0] == 1 && a->ne[1] == x->ne[1] && a->ne[2] == 1 && a->ne[3] == 1 &&
                      ggml_are_same_shape(b, c) && x->ne[1] % b->ne[1] == 0 && b->ne[2] == x->ne[2] &&
                      b->ne[3] == x->ne[3];
    if (!fits) {
        tnn_fail(TNN_ERR_ARG, "ssm_scan: x must be [head_dim, heads, T, B], dt [heads, T, B], a [1, heads] and "
                              "b, c [state, groups, T, B] with groups dividing heads");
        return NULL;
    }
    return tnn_ssm_scan(ctx, in[0], in[1], in[2], in[3], in[4], NULL);
}

/* x [channels, T, B], w [taps, channels] */
static struct ggml_tensor * build_causal_conv(struct ggml_context * ctx, struct ggml_tensor ** in) {
    const struct ggml_tensor *x = in[0], *w = in[1];
    if (x->ne[3] != 1 || w->ne[1] != x->ne[0] || w->ne[2] != 1 || w->ne[3] != 1 || w->ne[0] < 1 ||
        w->ne[0] > TNN_CAUSAL_CONV_TAPS_MAX) {
        tnn_fail(TNN_ERR_ARG, "causal_conv: x must be [channels, T, B] and w [taps, channels], 1 to %d taps",
                 TNN_CAUSAL_CONV_TAPS_MAX);
        return NULL;
    }
    return tnn_causal_conv(ctx, in[0], in[1], NULL);
}

/* Whether x [d, T], router [d, E], gate and up [d, ff, E] and down [ff, d,
 * E] fit a mixture choosing n_used experts a token (tnn_fail says why not). */
static bool moe_shapes_fit(struct ggml_tensor ** in, int32_t n_used) {
    const struct ggml_tensor *x = in[0], *router = in[1], *gate = in[2], *up = in[3], *down = in[4];
    const int64_t d = x->ne[0], n_experts = router->ne[1], ff = gate->ne[1];
    const bool fits = x->ne[2] == 1 && x->ne[3] == 1 && router->ne[0] == d && router->ne[2] == 1 &&
                      n_experts >= n_used && ggml_are_same_shape(gate, up) && gate->ne[0] == d &&
                      gate->ne[2] == n_experts && down->ne[0] == ff && down->ne[1] == d &&
                      down->ne[2] == n_experts;
    if (!fits) {
        tnn_fail(TNN_ERR_ARG,
                 "moe_ffn: x must be [d, T], router [d, E], gate and up [d, ff, E] and down [ff, d, "
                 "E], E at least %d",
                 n_used);
    }
    return fits;
}

/* the mixture of experts' feed-forward choosing n_used experts a token */
static struct ggml_tensor * build_moe_ffn(struct ggml_context * ctx, struct ggml_tensor ** in, int32_t n_used,
                                          bool normalize) {
    if (!moe_shapes_fit(in, n_used)) {
        return NULL;
    }
    const struct tnn_moe_weights w = { .router = in[1], .gate = in[2], .up = in[3], .down = in[4] };
    return tnn_moe_ffn(ctx, in[0], &w, n_used, normalize);
}

/* build_moe_ffn's five, then LoRA pairs on gate, up and down: A [d_in, r,
 * E], B [r, d_out, E] each, scaled by 0.75 (top 3, normalized) */
static struct ggml_tensor * build_moe_ffn_lora(struct ggml_context * ctx, struct ggml_tensor ** in) {
    const int64_t d = in[0]->ne[0], ff = in[2]->ne[1], n_experts = in[1]->ne[1], rank = in[5]->ne[1];
    const int64_t d_in[3] = { d, d, ff }, d_out[3] = { ff, ff, d };
    for (int i = 0; i < 3; ++i) {
        const struct ggml_tensor *a = in[5 + 2 * i], *b = in[6 + 2 * i];
        if (a->ne[0] != d_in[i] || a->ne[1] != rank || a->ne[2] != n_experts || b->ne[0] != rank ||
            b->ne[1] != d_out[i] || b->ne[2] != n_experts) {
            tnn_fail(TNN_ERR_ARG, "moe_ffn_lora: each pair must be A [d_in, r, E] and B [r, d_out, E]");
            return NULL;
        }
    }
    if (!moe_shapes_fit(in, 3)) {
        return NULL;
    }
    const struct tnn_moe_weights w = {
        .router = in[1],
        .gate = in[2],
        .up = in[3],
        .down = in[4],
        .lora_a = { in[5], in[7], in[9] },
        .lora_b = { in[6], in[8], in[10] },
        .lora_scale = 0.75f,
    };
    return tnn_moe_ffn(ctx, in[0], &w, 3, true);
}

static struct ggml_tensor * build_moe_ffn_top1(struct ggml_context * ctx, struct ggml_tensor ** in) {
    return build_moe_ffn(ctx, in, 1, false);
}

static struct ggml_tensor * build_moe_ffn_top3(struct ggml_context * ctx, struct ggml_tensor ** in) {
    return build_moe_ffn(ctx, in, 3, false);
}

static struct ggml_tensor * build_moe_ffn_top3_norm(struct ggml_context * ctx, struct ggml_tensor ** in) {
    return build_moe_ffn(ctx, in, 3, true);
}

static struct ggml_tensor * build_sigmoid(struct ggml_context * ctx, struct ggml_tensor ** in) {
    return ggml_sigmoid(ctx, in[0]);
}

static const struct {
    const char * name;
    int32_t n_inputs;
    op_builder build;
} OPS[] = {
    { "ssm_conv", 2, build_ssm_conv },
    { "pad", 1, build_pad },
    { "sigmoid", 1, build_sigmoid },
    { "gated_delta_net", 5, build_gated_delta_net },
    { "ssm_scan", 5, build_ssm_scan },
    { "causal_conv", 2, build_causal_conv },
    { "moe_ffn_top1", 5, build_moe_ffn_top1 },
    { "moe_ffn_top3", 5, build_moe_ffn_top3 },
    { "moe_ffn_top3_norm", 5, build_moe_ffn_top3_norm },
    { "moe_ffn_lora", 11, build_moe_ffn_lora },
};

/* The index of the check named name in OPS, or -1 (tnn_fail said why). */
static int find_op(const char * name, int32_t n_inputs) {
    for (size_t i = 0; i < sizeof(OPS) / sizeof(OPS[0]); ++i) {
        if (name != NULL && strcmp(OPS[i].name, name) == 0) {
            if (OPS[i].n_inputs != n_inputs) {
                tnn_fail(TNN_ERR_ARG, "%s takes %d inputs, got %d", name, OPS[i].n_inputs, n_inputs);
                return -1;
            }
            return (int) i;
        }
    }
    tnn_fail(TNN_ERR_ARG, "no operation check named '%.40s'", name ? name : "(null)");
    return -1;
}

/* Whether the backend runs every node of graph (TNN_ERR_BACKEND saying
 * which it does not). */
static int backend_runs(ggml_backend_t backend, struct ggml_cgraph * graph) {
    for (int i = 0; i < ggml_graph_n_nodes(graph); ++i) {
        struct ggml_tensor * node = ggml_graph_node(graph, i);
        if (!ggml_backend_supports_op(backend, node)) {
            return tnn_fail(TNN_ERR_BACKEND, "the %s backend cannot run %s (%s)", tnn_backend_name(),
                            ggml_op_desc(node), node->name);
        }
    }
    return TNN_OK;
}

int tnn_op_check(tnn_session * s, const char * op, const int64_t * shapes, int32_t n_inputs,
                 const float * const * inputs, const float * grad_out, float * out, float * const * grads) {
    if (s == NULL || shapes == NULL || inputs == NULL || grad_out == NULL || out == NULL || grads == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_op_check: a NULL argument");
    }
    if (n_inputs < 1 || n_inputs > MAX_OP_INPUTS) {
        return tnn_fail(TNN_ERR_ARG, "tnn_op_check: n_inputs must be 1 to %d, got %d", MAX_OP_INPUTS, n_inputs);
    }
    const int which = find_op(op, n_inputs);
    if (which < 0) {
        return TNN_ERR_ARG;
    }
    for (int32_t i = 0; i < 4 * n_inputs; ++i) {
        if (shapes[i] < 1 || shapes[i] > (1 << 24)) {
            return tnn_fail(TNN_ERR_ARG, "tnn_op_check: every dim must be 1 to %d, got %lld", 1 << 24,
                            (long long) shapes[i]);
        }
    }
    const size_t graph_size = 1024;
    struct ggml_init_params params = {
        .mem_size = ggml_tensor_overhead() * graph_size * 4 + ggml_graph_overhead_custom(graph_size, true) * 2,
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    struct ggml_context * ctx = ggml_init(params);
    if (ctx == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "tnn_op_check: out of memory");
    }
    struct ggml_tensor * in[MAX_OP_INPUTS];
    for (int32_t i = 0; i < n_inputs; ++i) {
        const int64_t * ne = shapes + 4 * i;
        in[i] = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ne[0], ne[1], ne[2], ne[3]);
        ggml_format_name(in[i], "input %d", i);
        ggml_set_param(in[i]);
    }
    int status = TNN_OK;
    ggml_backend_buffer_t buf = NULL;
    struct ggml_tensor * y = OPS[which].build(ctx, in);
    if (y == NULL) {
        status = TNN_ERR_ARG;
        goto done;
    }
    struct ggml_tensor * dy = ggml_new_tensor(ctx, GGML_TYPE_F32, GGML_MAX_DIMS, y->ne);
    struct ggml_tensor * loss = ggml_sum(ctx, ggml_mul(ctx, y, dy));
    ggml_set_loss(loss);
    struct ggml_cgraph * graph = ggml_new_graph_custom(ctx, graph_size, true);
    ggml_build_forward_expand(graph, loss);
    ggml_build_backward_expand(ctx, graph, NULL);
    status = backend_runs(s->backend, graph);
    if (status != TNN_OK) {
        goto done;
    }
    buf = ggml_backend_alloc_ctx_tensors(ctx, s->backend);
    if (buf == NULL) {
        status = tnn_fail(TNN_ERR_ALLOC, "tnn_op_check: could not allocate the graph on the %s backend",
                          tnn_backend_name());
        goto done;
    }
    ggml_graph_reset(graph);   /* every gradient 0, the loss's 1 */
    for (int32_t i = 0; i < n_inputs; ++i) {
        ggml_backend_tensor_set(in[i], inputs[i], 0, ggml_nbytes(in[i]));
    }
    ggml_backend_tensor_set(dy, grad_out, 0, ggml_nbytes(dy));
    if (ggml_backend_graph_compute(s->backend, graph) != GGML_STATUS_SUCCESS) {
        status = tnn_fail(TNN_ERR_BACKEND, "tnn_op_check: %s failed on the %s backend", op, tnn_backend_name());
        goto done;
    }
    ggml_backend_tensor_get(y, out, 0, ggml_nbytes(y));
    for (int32_t i = 0; i < n_inputs; ++i) {
        struct ggml_tensor * g = ggml_graph_get_grad(graph, in[i]);
        if (grads[i] != NULL) {
            if (g == NULL) {
                memset(grads[i], 0, ggml_nbytes(in[i]));   /* the output does not depend on it */
            } else {
                ggml_backend_tensor_get(g, grads[i], 0, ggml_nbytes(in[i]));
            }
        }
    }
done:
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    return status;
}
