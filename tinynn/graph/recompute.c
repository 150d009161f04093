/* Activation recomputation: a training graph that keeps only some blocks'
 * inputs for the backward and runs the blocks' forward a second time as the
 * backward reaches them.
 *
 * ggml's autodiff writes a backward that reads the forward's activations,
 * so the graph allocator keeps each of them from the forward until its
 * backward has read it: memory grows with layers x tokens, and with
 * tokens^2 for attention. The rewrite keeps the residual stream entering
 * every `every`-th block and leaving the last (the checkpoints). Any other
 * forward node between the first checkpoint and the last that depends on
 * the residual stream (not a weight or an input) is an activation; a
 * backward node that reads one reads a duplicate instead, made from the
 * duplicates of its sources down to the checkpoints. The duplicates go into
 * the node order just before the first backward node that needs them, so
 * the forward's own activations have no reader after the forward (the
 * allocator reuses their memory), and a block's duplicates live from the
 * first backward node that needs them to the last.
 *
 * A duplicate is the same op with the same parameters on the same values,
 * so every gradient keeps its bytes. ggml_build_forward_expand puts the
 * duplicates in the graph and the node array orders them; one thing needs
 * ggml's internals: each duplicate's use count (how many nodes read it) is
 * set to its original's, since the CPU backend fuses RMS_NORM into the MUL
 * after it, without writing the norm, when the norm has one reader. A
 * duplicate read by the backward must be written, and the same fusions as
 * in the forward keep the same bytes.
 *
 * Without block recomputation the same rewrite runs on a narrower set
 * (tnn_recompute_elementwise): the elementwise activations whose sources the
 * backward keeps anyway, such as a norm's output (an adapter's input, made
 * from the residual the norm's own backward keeps) or the gated unit's
 * product (down's adapter's input, from the gate and up its backward
 * keeps): one pass over memory each, for 10-30% of a LoRA step's
 * activation memory. */
#include "graph/graph.h"

#include <stdlib.h>
#include <string.h>

struct recompute {
    struct ggml_context * ctx;
    int n_forward;
    struct tnn_node_index * by_address;   /* [n_forward] */
    bool * activation;                /* [n_forward]: recomputed when the backward reads it */
    struct ggml_tensor ** duplicate;  /* [n_forward]: its duplicate, once made */
};

/* The index of t among the forward's nodes, or -1. */
static int forward_index(const struct recompute * r, const struct ggml_tensor * t) {
    return tnn_node_find(r->by_address, r->n_forward, t);
}

/* What the backward reads in place of t: t itself when it is kept (a
 * checkpoint, a weight, an input, the head), else its duplicate. */
static struct ggml_tensor * recomputed(struct recompute * r, struct ggml_tensor * t) {
    const int i = forward_index(r, t);
    if (i < 0 || !r->activation[i]) {
        return t;
    }
    if (r->duplicate[i] == NULL) {
        struct ggml_tensor * d = ggml_new_tensor(r->ctx, t->type, GGML_MAX_DIMS, t->ne);
        memcpy(d->nb, t->nb, sizeof(d->nb));   /* a view's strides */
        d->op = t->op;
        memcpy(d->op_params, t->op_params, sizeof(d->op_params));
        for (int k = 0; k < GGML_MAX_SRC; ++k) {
            d->src[k] = recomputed(r, t->src[k]);
        }
        d->view_src = recomputed(r, t->view_src);
        d->view_offs = t->view_offs;
        ggml_format_name(d, "%.50s (again)", t->name);
        r->duplicate[i] = d;
    }
    return r->duplicate[i];
}

/* activation[i] for the forward's nodes: on the residual stream's path from
 * residuals[0] to residuals[n_layers], and not a checkpoint (keep_attention:
 * the attention's outputs are checkpoints too, a fused attention's or the
 * end of its concatenated pieces). */
static int find_activations(struct recompute * r, struct ggml_tensor ** nodes, struct ggml_tensor ** residuals,
                            int32_t n_layers, int32_t every, bool keep_attention) {
    int first = forward_index(r, residuals[0]), last = forward_index(r, residuals[n_layers]);
    if (first < 0 || last < 0) {
        return tnn_fail(TNN_ERR_STATE, "recompute: the blocks' inputs are not in the training graph");
    }
    bool * on_stream = calloc((size_t) r->n_forward, sizeof(bool));
    if (on_stream == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory");
    }
    on_stream[first] = true;
    for (int i = first + 1; i < last; ++i) {
        for (int k = 0; k < GGML_MAX_SRC && !on_stream[i]; ++k) {
            const int j = forward_index(r, nodes[i]->src[k]);
            on_stream[i] = j >= 0 && on_stream[j];
        }
        const int v = forward_index(r, nodes[i]->view_src);
        on_stream[i] = on_stream[i] || (v >= 0 && on_stream[v]);
        r->activation[i] = on_stream[i];
    }
    for (int32_t l = 0; l <= n_layers; l += every) {
        const int i = forward_index(r, residuals[l]);
        if (i >= 0) {
            r->activation[i] = false;
        }
    }
    if (keep_attention) {
        /* a fused attention's output (graph/attention.c), which its
         * backward reads: kept, the attention's forward runs once */
        for (int i = first + 1; i < last; ++i) {
            if (tnn_is_fused_attention(nodes[i])) {
                r->activation[i] = false;
            }
        }
        /* the end of each chain of concatenated attention pieces: a chain's
         * earlier links are the first source of the next */
        for (int i = first + 1; i < last; ++i) {
            if (nodes[i]->op == GGML_OP_CONCAT) {
                const int inner = forward_index(r, nodes[i]->src[0]);
                on_stream[inner >= 0 ? inner : i] = inner >= 0 ? false : on_stream[i];
            }
        }
        for (int i = first + 1; i < last; ++i) {
            if (nodes[i]->op == GGML_OP_CONCAT && on_stream[i]) {
                r->activation[i] = false;
            }
        }
    }
    free(on_stream);
    return TNN_OK;
}

/* Ops that cost one pass over their operands (and views, which cost
 * nothing): recomputing one is cheap beside keeping its output. */
static bool elementwise(const struct ggml_tensor * t) {
    switch (t->op) {
        case GGML_OP_RMS_NORM:
        case GGML_OP_NORM:
        case GGML_OP_MUL:
        case GGML_OP_ADD:
        case GGML_OP_SCALE:
        case GGML_OP_SQR:
        case GGML_OP_UNARY:
        case GGML_OP_GLU:
        case GGML_OP_CONT:
        case GGML_OP_VIEW:
        case GGML_OP_RESHAPE:
        case GGML_OP_PERMUTE:
        case GGML_OP_TRANSPOSE: return true;
        default: return false;
    }
}

/* Narrow the activations to the elementwise ones that read only what the
 * backward keeps anyway (a weight, an input, an activation the backward
 * reads itself) or other such ones: recomputing those frees their memory
 * and holds nothing else longer. In forward order, so that a node's sources
 * are decided before it. */
static int keep_only_elementwise(struct recompute * r, struct ggml_tensor ** nodes, int n_nodes) {
    bool * read_back = calloc((size_t) r->n_forward, sizeof(bool));   /* read by a backward node */
    if (read_back == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory");
    }
    for (int i = r->n_forward; i < n_nodes; ++i) {
        for (int k = 0; k < GGML_MAX_SRC; ++k) {
            const int j = forward_index(r, nodes[i]->src[k]);
            if (j >= 0) {
                read_back[j] = true;
            }
        }
        const int v = forward_index(r, nodes[i]->view_src);
        if (v >= 0) {
            read_back[v] = true;
        }
    }
    for (int i = 0; i < r->n_forward; ++i) {
        if (!r->activation[i]) {
            continue;
        }
        bool cheap = elementwise(nodes[i]);
        for (int k = 0; k <= GGML_MAX_SRC && cheap; ++k) {
            const int j = forward_index(r, k < GGML_MAX_SRC ? nodes[i]->src[k] : nodes[i]->view_src);
            cheap = j < 0 || r->activation[j] || read_back[j];
        }
        r->activation[i] = cheap;
    }
    free(read_back);
    return TNN_OK;
}

/* The original's use count for its duplicate (see the top of the file). */
static void copy_use_counts(const struct recompute * r, struct ggml_cgraph * graph, struct ggml_tensor ** nodes) {
    for (int i = 0; i < r->n_forward; ++i) {
        if (r->duplicate[i] != NULL) {
            tnn_copy_use_count(graph, nodes[i], r->duplicate[i]);
        }
    }
}

/* Point node's sources at their recomputed versions and put those (and
 * what they need) at the end of graph; true when it read an activation. */
static bool read_recomputed(struct recompute * r, struct ggml_cgraph * graph, struct ggml_tensor * node) {
    bool changed = false;
    for (int k = 0; k < GGML_MAX_SRC; ++k) {
        struct ggml_tensor * src = recomputed(r, node->src[k]);
        if (src != node->src[k]) {
            node->src[k] = src;
            ggml_build_forward_expand(graph, src);
            changed = true;
        }
    }
    struct ggml_tensor * view_src = recomputed(r, node->view_src);
    if (view_src != node->view_src) {
        node->view_src = view_src;
        ggml_build_forward_expand(graph, view_src);
        changed = true;
    }
    return changed;
}

/* Recompute the activations find_activations names (elementwise_only: only
 * those keep_only_elementwise leaves). */
static int recompute(struct ggml_context * ctx, struct ggml_cgraph * graph, int n_forward,
                     struct ggml_tensor ** residuals, int32_t n_layers, int32_t every, bool keep_attention,
                     bool elementwise_only) {
    struct ggml_tensor ** nodes = ggml_graph_nodes(graph);
    const int n_nodes = ggml_graph_n_nodes(graph);
    struct recompute r = {
        .ctx = ctx,
        .n_forward = n_forward,
        .by_address = tnn_index_nodes(nodes, n_forward),
        .activation = calloc((size_t) n_forward, sizeof(bool)),
        .duplicate = calloc((size_t) n_forward, sizeof(struct ggml_tensor *)),
    };
    /* the backward nodes' places in the new order: node i after the
     * duplicates appended for it, appended[i]..appended[i + 1] */
    int * appended = malloc(((size_t) n_nodes + 1) * sizeof(int));
    struct ggml_tensor ** order = NULL;
    int status = TNN_OK;
    if (r.by_address == NULL || r.activation == NULL || r.duplicate == NULL || appended == NULL) {
        status = tnn_fail(TNN_ERR_ALLOC, "out of memory");
        goto done;
    }
    status = find_activations(&r, nodes, residuals, n_layers, every, keep_attention);
    if (status == TNN_OK && elementwise_only) {
        status = keep_only_elementwise(&r, nodes, n_nodes);
    }
    if (status != TNN_OK) {
        goto done;
    }
    /* each activation is duplicated at most once */
    int n_activations = 0;
    for (int i = 0; i < n_forward; ++i) {
        n_activations += r.activation[i];
    }
    if (n_nodes + n_activations > ggml_graph_size(graph)) {
        status = tnn_fail(TNN_ERR_ALLOC, "recompute: the training graph has room for %d nodes, not %d",
                          (int) ggml_graph_size(graph), n_nodes + n_activations);
        goto done;
    }
    for (int i = n_forward; i < n_nodes; ++i) {
        appended[i] = ggml_graph_n_nodes(graph);
        read_recomputed(&r, graph, nodes[i]);
    }
    appended[n_nodes] = ggml_graph_n_nodes(graph);
    copy_use_counts(&r, graph, nodes);

    /* the forward, then each backward node after what it needs */
    const int n_total = ggml_graph_n_nodes(graph);
    order = malloc((size_t) n_total * sizeof(*order));
    if (order == NULL) {
        status = tnn_fail(TNN_ERR_ALLOC, "out of memory");
        goto done;
    }
    int n = 0;
    for (int i = 0; i < n_forward; ++i) {
        order[n++] = nodes[i];
    }
    for (int i = n_forward; i < n_nodes; ++i) {
        for (int j = appended[i]; j < appended[i + 1]; ++j) {
            order[n++] = nodes[j];
        }
        order[n++] = nodes[i];
    }
    memcpy(nodes, order, (size_t) n_total * sizeof(*order));
done:
    free(order);
    free(appended);
    free(r.by_address);
    free(r.activation);
    free(r.duplicate);
    return status;
}

int tnn_recompute_blocks(struct ggml_context * ctx, struct ggml_cgraph * graph, int n_forward,
                         struct ggml_tensor ** residuals, int32_t n_layers, int32_t every, bool keep_attention) {
    if (residuals == NULL || residuals[0] == NULL || residuals[n_layers] == NULL) {
        return tnn_fail(TNN_ERR_ARG, "this architecture does not name its blocks' inputs: train it "
                                     "without recomputation (--recompute off)");
    }
    return recompute(ctx, graph, n_forward, residuals, n_layers, every, keep_attention, false);
}

int tnn_recompute_elementwise(struct ggml_context * ctx, struct ggml_cgraph * graph, int n_forward,
                              struct ggml_tensor ** residuals, int32_t n_layers) {
    if (residuals == NULL || residuals[0] == NULL || residuals[n_layers] == NULL) {
        return TNN_OK;   /* blocks not named: everything kept */
    }
    return recompute(ctx, graph, n_forward, residuals, n_layers, 1, false, true);
}
