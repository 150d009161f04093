/* Rewriting the nodes of a built graph: what the CPU kernels' rewrites
 * (frozen.c, products.c, head_loss.c, adamw.c) share.
 *
 * Autodiff needs ggml's own ops; once the backward is built, nodes can turn
 * into custom ops that call tinynn's kernels, and nodes nothing reads any
 * more into no-ops. The graph allocator lays the graph out afterwards, so a
 * node may also change its shape. */
#include "internal.h"

#include <string.h>

void tnn_become_custom(struct ggml_context * ctx, struct ggml_tensor * node, ggml_custom_op_t fn,
                       void * userdata, struct ggml_tensor ** srcs, int n_srcs) {
    /* the op parameters from a ggml_custom_4d template: their layout is
     * ggml's; the template itself is in no graph */
    struct ggml_tensor * tmpl = ggml_custom_4d(ctx, GGML_TYPE_F32, 1, 1, 1, 1, srcs, n_srcs, fn,
                                               GGML_N_TASKS_MAX, userdata);
    node->op = GGML_OP_CUSTOM;
    memcpy(node->op_params, tmpl->op_params, sizeof(node->op_params));
    for (int i = 0; i < GGML_MAX_SRC; ++i) {
        node->src[i] = i < n_srcs ? srcs[i] : NULL;
    }
}

void tnn_reshape_node(struct ggml_tensor * node, int64_t ne0, int64_t ne1) {
    const int64_t ne[GGML_MAX_DIMS] = { ne0, ne1, 1, 1 };
    for (int i = 0; i < GGML_MAX_DIMS; ++i) {
        node->ne[i] = ne[i];
        node->nb[i] = i == 0 ? ggml_type_size(node->type) : node->nb[i - 1] * (size_t) node->ne[i - 1];
    }
}

void tnn_become_noop(struct ggml_tensor * node) {
    node->op = GGML_OP_NONE;
    tnn_reshape_node(node, 1, 1);
}
