/* The AdamW update as a custom node in place of ggml's: the session's adamw
 * kernel (cpu/kernels.h), the same bits as ggml's, 16 parameters at a time. */
#include "graph/graph.h"

/* srcs as ggml_opt_step_adamw's: weight, gradient, m, v, hp [7]; threads
 * take 16-aligned shares of the parameters. userdata: the session's kernels. */
static void adamw_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct tnn_cpu_kernels * kernels = userdata;
    int64_t i0, i1;
    tnn_share_groups(ggml_nelements(dst->src[0]), 16, ith, nth, &i0, &i1);
    kernels->adamw((float *) dst->src[0]->data, (const float *) dst->src[1]->data, (float *) dst->src[2]->data,
                   (float *) dst->src[3]->data, (const float *) dst->src[4]->data, i0, i1);
}

int tnn_use_fast_adamw(const struct tnn_step * step, struct tnn_cpu_state * cpu, struct ggml_cgraph * graph) {
    if (cpu->kernels.adamw == NULL) {
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
        tnn_become_custom(step->ctx_graph, node, adamw_node, &cpu->kernels, srcs, 5);
    }
    return TNN_OK;
}
