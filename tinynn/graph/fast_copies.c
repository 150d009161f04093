/* The rewrite of a training graph onto a frozen base's fast copies
 * (models/frozen_copies.c makes them): the input gradients through frozen
 * matrices, out_prod(W, dy^T) -> mul_mat(W^T, dy), and on the CPU the
 * products with packed copies -> the packed integer kernels (qgemm). */
#include "graph/graph.h"

/* ---- the rewrite --------------------------------------------------------- */

/* A custom node's compute: dst [rows, n] = panels [k, rows] . x [k, n]. */
static void qgemm_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct tnn_qgemm_use * use = userdata;
    char * scratch = tnn_thread_scratch(&use->cpu->scratch, ith, &nth);
    const struct ggml_tensor *a = dst->src[0], *x = dst->src[1];
    if (scratch == NULL) {
        return;
    }
    const struct tnn_qpanels panels = tnn_qpanels_packed(
        a->type == GGML_TYPE_Q4_1 ? TNN_QPANEL_Q4_1 : TNN_QPANEL_Q8_0, a->data);
    const struct tnn_qgemm_columns columns = { (const float *) x->data, (int64_t) (x->nb[1] / sizeof(float)),
                                               NULL };
    use->cpu->kernels.qgemm(use->levels, &panels, a->ne[1], a->ne[0], &columns, x->ne[1], (float *) dst->data,
                            (int64_t) (dst->nb[1] / sizeof(float)), scratch, ith, nth);
}

/* Whether x can be the columns of a packed product: F32 [k, n] with
 * contiguous columns. */
static bool packed_operand(const struct ggml_tensor * x, int64_t k) {
    return x->type == GGML_TYPE_F32 && x->ne[0] == k && x->ne[2] == 1 && x->ne[3] == 1 &&
           x->nb[0] == sizeof(float) && x->nb[1] % sizeof(float) == 0;
}

int tnn_use_fast_copies(const struct tnn_step * step, struct tnn_cpu_state * cpu,
                        const struct tnn_frozen_base * base, struct ggml_cgraph * graph) {
    /* The forward quantizes its activations in two int8 levels: with one,
     * as ggml does, each product is 0.4% off and thirty layers of it move
     * logits by a unit. The blocks' input gradients keep one level, as with
     * ggml's Q8_0 products (the adapter gradients' agreement with the
     * float64 reference is unchanged), at half the multiply-adds; the
     * head's (softmax minus one-hot, many decades) takes two. */
    cpu->qgemm_two_levels = (struct tnn_qgemm_use){ cpu, 2 };
    cpu->qgemm_one_level = (struct tnn_qgemm_use){ cpu, 1 };
    size_t scratch_bytes = 0;
    for (int i = 0; i < ggml_graph_n_nodes(graph); ++i) {
        struct ggml_tensor * node = ggml_graph_node(graph, i);
        const bool forward = node->op == GGML_OP_MUL_MAT;
        /* the input gradient of mul_mat(W, x): out_prod(W, transpose(dy)) */
        const bool input_grad = node->op == GGML_OP_OUT_PROD && node->src[1]->op == GGML_OP_TRANSPOSE;
        if (!forward && !input_grad) {
            continue;
        }
        for (int k = 0; k < base->n_pairs; ++k) {
            const struct tnn_frozen_pair * p = &base->pairs[k];
            if (node->src[0] != p->w) {
                continue;
            }
            struct ggml_tensor * x_bf16 = forward ? node->src[1] : node->src[1]->src[0];
            if (p->w_bf16 != NULL && packed_operand(x_bf16, forward ? p->w->ne[0] : p->w->ne[1])) {
                tnn_use_bf16_copy(step->ctx_graph, cpu, node, p->w_bf16, p->w_bf16_tiles, x_bf16, input_grad);
                const size_t need = tnn_fgemm_bf16_scratch_bytes();
                scratch_bytes = need > scratch_bytes ? need : scratch_bytes;
                break;
            }
            struct ggml_tensor * panels = forward ? p->w_panels : p->wt_panels ? p->wt : NULL;
            struct ggml_tensor * x = forward ? node->src[1] : node->src[1]->src[0];
            if (panels != NULL && packed_operand(x, panels->ne[0])) {
                const int one_level = input_grad && p->wt_levels == 1;
                struct ggml_tensor * srcs[2] = { panels, x };   /* node = panels . x */
                tnn_become_custom(step->ctx_graph, node, qgemm_node,
                                  one_level ? &cpu->qgemm_one_level : &cpu->qgemm_two_levels, srcs, 2);
                const size_t need = tnn_qgemm_scratch_bytes(NULL, panels->ne[0], x->ne[1], false);
                scratch_bytes = need > scratch_bytes ? need : scratch_bytes;
            } else if (input_grad && p->wt != NULL && !p->wt_panels) {
                /* [d_in, n] = mul_mat(W^T [d_out, d_in], dy [d_out, n]) */
                node->op = GGML_OP_MUL_MAT;
                node->src[0] = p->wt;
                node->src[1] = x;
            }
            break;
        }
    }
    return tnn_grow_scratch(&cpu->scratch, step->n_threads, scratch_bytes);
}
