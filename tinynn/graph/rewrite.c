/* Rewriting the nodes of a built graph: what the CPU kernels' rewrites
 * (fast_copies.c, products.c, head_loss.c, adamw.c) and the trainer's
 * written-gradient graph share.
 *
 * Autodiff needs ggml's own ops; once the backward is built, nodes can turn
 * into custom ops that call tinynn's kernels, and nodes nothing reads any
 * more into no-ops. The graph allocator lays the graph out afterwards, so a
 * node may also change its shape. ggml's public API is used, a tensor's
 * public fields (op, op_params, src, ne, nb) and the graph's node array as
 * ggml_graph_nodes hands it out; and two of ggml's internals: a custom
 * node's parameters (ggml_custom_op_params), to tell which function it
 * runs, and the graph's use counts (recompute.c). */
#include "graph/graph.h"
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"   /* the header's static helpers */
#endif
#include "ggml-impl.h"
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void tnn_become_custom(struct ggml_context * ctx, struct ggml_tensor * node, ggml_custom_op_t fn, void * userdata,
                       struct ggml_tensor ** srcs, int n_srcs) {
    /* the op parameters from a ggml_custom_4d template: their layout is
     * ggml's; the template itself is in no graph */
    struct ggml_tensor * tmpl = ggml_custom_4d(ctx, GGML_TYPE_F32, 1, 1, 1, 1, srcs, n_srcs, fn, GGML_N_TASKS_MAX,
                                               userdata);
    node->op = GGML_OP_CUSTOM;
    memcpy(node->op_params, tmpl->op_params, sizeof(node->op_params));
    for (int i = 0; i < GGML_MAX_SRC; ++i) {
        node->src[i] = i < n_srcs ? srcs[i] : NULL;
    }
}

void tnn_copy_use_count(struct ggml_cgraph * graph, const struct ggml_tensor * from,
                        const struct ggml_tensor * to) {
    const size_t i_from = ggml_hash_find(&graph->visited_hash_set, from);
    const size_t i_to = ggml_hash_find(&graph->visited_hash_set, to);
    graph->use_counts[i_to] = graph->use_counts[i_from];
}

void * tnn_custom_userdata(const struct ggml_tensor * node, ggml_custom_op_t fn) {
    const struct ggml_custom_op_params * params = (const struct ggml_custom_op_params *) node->op_params;
    return node->op == GGML_OP_CUSTOM && params->fun == fn ? params->userdata : NULL;
}

struct ggml_tensor * tnn_graph_reader(struct ggml_cgraph * graph, const struct ggml_tensor * src, int slot,
                                      enum ggml_op op) {
    for (int i = 0; i < ggml_graph_n_nodes(graph); ++i) {
        struct ggml_tensor * node = ggml_graph_node(graph, i);
        if (node->op == op && node->src[slot] == src) {
            return node;
        }
    }
    return NULL;
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

static int compare_node_index(const void * a, const void * b) {
    const uintptr_t x = (uintptr_t) ((const struct tnn_node_index *) a)->node;
    const uintptr_t y = (uintptr_t) ((const struct tnn_node_index *) b)->node;
    return x < y ? -1 : x > y;
}

struct tnn_node_index * tnn_index_nodes(struct ggml_tensor ** nodes, int n) {
    struct tnn_node_index * index = malloc((size_t) (n > 0 ? n : 1) * sizeof(*index));
    if (index != NULL) {
        for (int i = 0; i < n; ++i) {
            index[i] = (struct tnn_node_index){ nodes[i], i };
        }
        qsort(index, (size_t) n, sizeof(*index), compare_node_index);
    }
    return index;
}

int tnn_node_find(const struct tnn_node_index * index, int n, const struct ggml_tensor * t) {
    const struct tnn_node_index key = { t, 0 };
    const struct tnn_node_index * hit = t ? bsearch(&key, index, (size_t) n, sizeof(key), compare_node_index)
                                          : NULL;
    return hit ? hit->index : -1;
}

int tnn_count_readers(struct ggml_cgraph * graph, struct tnn_node_index ** index_out, int ** readers_out) {
    struct ggml_tensor ** nodes = ggml_graph_nodes(graph);
    const int n = ggml_graph_n_nodes(graph);
    struct tnn_node_index * index = tnn_index_nodes(nodes, n);
    int * readers = calloc((size_t) n + 1, sizeof(*readers));   /* [n]: what reads no node */
    if (index == NULL || readers == NULL) {
        free(index);
        free(readers);
        return tnn_fail(TNN_ERR_ALLOC, "out of memory");
    }
    for (int i = 0; i < n; ++i) {
        for (int k = 0; k < GGML_MAX_SRC + 1; ++k) {
            const struct ggml_tensor * src = k < GGML_MAX_SRC ? nodes[i]->src[k] : nodes[i]->view_src;
            const int j = src != NULL ? tnn_node_find(index, n, src) : -1;
            readers[j >= 0 ? j : n] += 1;
        }
    }
    *index_out = index;
    *readers_out = readers;
    return TNN_OK;
}

int tnn_drop_unread_views(struct ggml_cgraph * graph) {
    struct ggml_tensor ** nodes = ggml_graph_nodes(graph);
    const int n = ggml_graph_n_nodes(graph);
    struct tnn_node_index * index = tnn_index_nodes(nodes, n);
    bool * read = calloc((size_t) n + 1, sizeof(bool));
    if (index == NULL || read == NULL) {
        free(index);
        free(read);
        return tnn_fail(TNN_ERR_ALLOC, "out of memory");
    }
    for (int i = 0; i < n; ++i) {
        for (int k = 0; k < GGML_MAX_SRC; ++k) {
            const int j = tnn_node_find(index, n, nodes[i]->src[k]);
            read[j >= 0 ? j : n] = true;
        }
        const int v = tnn_node_find(index, n, nodes[i]->view_src);
        read[v >= 0 ? v : n] = true;
    }
    for (int i = 0; i < n; ++i) {
        const enum ggml_op op = nodes[i]->op;
        const bool pure_view = op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE ||
                               op == GGML_OP_TRANSPOSE;
        if (pure_view && !read[i] && !(nodes[i]->flags & GGML_TENSOR_FLAG_OUTPUT)) {
            nodes[i]->op = GGML_OP_NONE;
        }
    }
    free(index);
    free(read);
    return TNN_OK;
}

/* The index of the only node of graph that reads t, or -1. */
static int only_reader(struct ggml_cgraph * graph, const struct ggml_tensor * t) {
    struct ggml_tensor ** nodes = ggml_graph_nodes(graph);
    int reader = -1;
    for (int i = 0; i < ggml_graph_n_nodes(graph); ++i) {
        for (int j = 0; j < GGML_MAX_SRC; ++j) {
            if (nodes[i]->src[j] == t) {
                if (reader >= 0 && reader != i) {
                    return -1;
                }
                reader = i;
            }
        }
    }
    return reader;
}

/* Node add_at of graph is acc = acc + g in place: make it acc = g. When g is
 * a node that only this add reads, g itself is recomputed straight into acc
 * (a node of its own, a view of acc, in g's place) and the add does nothing;
 * else the add becomes a copy. New nodes: the graphs share their nodes. */
static void write_into(struct ggml_context * ctx, struct ggml_cgraph * graph, int add_at,
                       struct ggml_tensor * acc) {
    struct ggml_tensor ** nodes = ggml_graph_nodes(graph);
    struct ggml_tensor * g = nodes[add_at]->src[1];
    int g_at = -1;
    for (int i = 0; i < add_at; ++i) {
        g_at = nodes[i] == g ? i : g_at;
    }
    if (g_at >= 0 && g->view_src == NULL && g->type == acc->type && ggml_is_contiguous(g) &&
        ggml_are_same_shape(g, acc) && !(g->flags & GGML_TENSOR_FLAG_OUTPUT) && only_reader(graph, g) == add_at) {
        struct ggml_tensor * direct = ggml_view_tensor(ctx, acc);
        direct->op = g->op;
        memcpy(direct->op_params, g->op_params, sizeof(g->op_params));
        memcpy(direct->src, g->src, sizeof(g->src));
        direct->flags |= GGML_TENSOR_FLAG_COMPUTE;   /* as graph building marks a node */
        nodes[g_at] = direct;
        nodes[add_at] = ggml_view_tensor(ctx, acc);   /* op NONE: not computed */
        return;
    }
    struct ggml_tensor * copy = ggml_cpy(ctx, g, acc);
    copy->flags |= GGML_TENSOR_FLAG_COMPUTE;
    nodes[add_at] = copy;
}

/* A copy of graph (forward, backward, AdamW) in which each accumulator's
 * first gradient is copied in instead of added: ggml's backward writes
 * acc = acc + g (in place) so that gradients add up across calls; a step
 * from one batch then needs acc zeroed first. Here that node becomes
 * acc = g, in a node of its own (the graphs share their nodes); what reads
 * the old node reads the accumulator's memory, which is the same. NULL when
 * some accumulator's first write is not a whole-tensor add (GPT-2's fused
 * qkv weight takes its q, k and v parts by ggml_acc at offsets): that graph
 * keeps zeroing. */
struct ggml_cgraph * tnn_graph_writing_gradients(struct ggml_context * ctx, struct ggml_cgraph * graph,
                                                 struct ggml_tensor ** accs, int n_accs) {
    struct ggml_cgraph * step = ggml_graph_dup(ctx, graph, true);
    struct ggml_tensor ** nodes = ggml_graph_nodes(step);
    bool * written = calloc((size_t) n_accs, sizeof(bool));
    if (written == NULL) {
        return NULL;
    }
    bool all = true;
    for (int i = 0; i < ggml_graph_n_nodes(step) && all; ++i) {
        struct ggml_tensor * node = nodes[i];
        if ((node->op != GGML_OP_ADD && node->op != GGML_OP_ACC) || node->view_src == NULL) {
            continue;
        }
        for (int k = 0; k < n_accs; ++k) {
            if (node->view_src != accs[k] || written[k]) {
                continue;
            }
            written[k] = true;
            all = node->op == GGML_OP_ADD && node->src[0] == accs[k] && ggml_are_same_shape(node->src[1], accs[k]);
            if (all) {
                write_into(ctx, step, i, accs[k]);
            }
            break;
        }
    }
    free(written);
    return all ? step : NULL;
}
