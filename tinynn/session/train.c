/* The training step as one ggml graph: forward, cross-entropy, backward and
 * AdamW, built once and run every step. Modelled on ggml-opt's static-graph
 * path, without its dataset and scheduler layers. */
#include "session/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

/* Nodes a graph may hold: the forward is ~40 nodes a layer, the backward
 * roughly triples that, and AdamW adds one per parameter. */
static size_t graph_size_for(const tnn_model_config * cfg, bool recompute, bool packed) {
    /* recomputation adds a second copy of the blocks' forward nodes, and
     * attention in pieces ~40 nodes a piece, forward and backward (whole
     * sequences a piece: up to twice TNN_ATTENTION_PIECES; packed rows, or
     * up to TNN_ATTENTION_PIECES sequences: one sequence or less a piece) */
    const bool by_sequence = tnn_attention_by_sequence(cfg->n_heads, cfg->t_seq, cfg->t_batch, cfg->attn_split,
                                                       packed);
    const size_t pieces = (cfg->attn_split == TNN_ATTENTION_PER_KV_HEAD ? 2 * TNN_ATTENTION_PIECES : 0) +
                          (by_sequence ? cfg->t_batch : 0);
    return 4096 + (size_t) cfg->n_layers * ((recompute ? 1536 : 1024) + 64 * pieces);
}

/* The global gradient norm of grads[0..n) and the factor min(1, max_norm /
 * norm), as nodes of graph: sqrt(sum over parameters of sum(g^2)), then
 * 1 / clamp(norm / max_norm, 1, inf). */
static struct ggml_tensor * build_clip_scale(tnn_session * s, struct ggml_context * ctx,
                                             struct ggml_cgraph * graph, struct ggml_tensor ** grads, int n) {
    struct ggml_tensor * sum_sq = NULL;
    for (int k = 0; k < n; ++k) {
        struct ggml_tensor * part = ggml_sum(ctx, ggml_sqr(ctx, grads[k]));
        sum_sq = sum_sq ? ggml_add(ctx, sum_sq, part) : part;
    }
    struct ggml_tensor * norm = ggml_sqrt(ctx, sum_sq);
    /* a copy in static memory, so the norm can be read after the step */
    ggml_build_forward_expand(graph, ggml_cpy(ctx, norm, s->train.grad_norm));
    struct ggml_tensor * ratio = ggml_clamp(ctx, ggml_scale(ctx, norm, 1.0f / s->train.clip_norm), 1.0f, INFINITY);
    return ggml_div(ctx, s->train.clip_one, ratio);
}

/* mask [t, t, 1, rows]: query i of row r sees key j when j is in i's sample
 * and j <= i (window > 0: i - j < window, counted in positions); 0 there,
 * -inf elsewhere. positions NULL: every row is one sample, 0 .. t-1. */
static void causal_rows(float * host, const int32_t * positions, int64_t t, int64_t rows, int64_t window) {
    for (int64_t r = 0; r < rows; ++r) {
        const int32_t * pos = positions ? positions + r * t : NULL;
        float * m = host + r * t * t;
        int64_t start = 0;                      /* where query i's sample begins */
        for (int64_t i = 0; i < t; ++i) {
            if (pos != NULL && i > 0 && pos[i] == 0) {
                start = i;
            }
            for (int64_t j = 0; j < t; ++j) {
                const int64_t apart = pos ? (int64_t) pos[i] - pos[j] : i - j;
                const bool seen = j >= start && j <= i && (window == 0 || apart < window);
                m[i * t + j] = seen ? 0.0f : -INFINITY;
            }
        }
    }
}

static int fill_masks(tnn_session * s, const int32_t * positions) {
    struct ggml_tensor * masks[2] = { s->train.step.causal_mask, s->train.step.swa_mask };
    const int64_t windows[2] = { 0, s->model.cfg.swa_window };
    for (int k = 0; k < 2; ++k) {
        struct ggml_tensor * mask = masks[k];
        if (mask == NULL) {
            continue;
        }
        float * host = malloc(ggml_nbytes(mask));
        if (host == NULL) {
            return tnn_fail(TNN_ERR_ALLOC, "out of memory filling the attention mask");
        }
        causal_rows(host, positions, mask->ne[0], mask->ne[3], windows[k]);
        tnn_tensor_set(&s->tensors, mask, host, 0, ggml_nbytes(mask));
        free(host);
    }
    return TNN_OK;
}

/* Packed rows: the masks from the positions uploaded since the last compute
 * (and, for a preference objective, no more samples than it pairs). */
static int follow_positions(tnn_session * s) {
    const struct tnn_step * step = &s->train.step;
    if (!step->packed_rows || !s->train.positions_changed) {
        return TNN_OK;
    }
    const size_t nbytes = ggml_nbytes(s->model.positions);
    int32_t * positions = malloc(nbytes);
    if (positions == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory reading the positions");
    }
    tnn_tensor_get(&s->tensors, s->model.positions, positions, 0, nbytes);
    int status = TNN_OK;
    if (step->objective != TNN_OBJECTIVE_CROSS_ENTROPY &&
        tnn_count_samples(step, positions) > tnn_preference_samples(step)) {
        status = tnn_fail(
            TNN_ERR_ARG, "these positions make %lld samples in one batch; a preference batch holds %lld",
            (long long) tnn_count_samples(step, positions), (long long) tnn_preference_samples(step));
    }
    if (status == TNN_OK) {
        status = fill_masks(s, positions);
    }
    free(positions);
    s->train.positions_changed = status != TNN_OK;
    return status;
}

/* The realized architecture's forward: its inputs -> logits [vocab, n]. */
static struct ggml_tensor * model_forward(tnn_session * s, struct ggml_context * ctx) {
    const struct tnn_forward_inputs in = {
        .tokens = s->model.tokens,
        .positions = s->model.positions,
        .images = s->model.images,
        .causal_mask = s->train.step.causal_mask,
        .swa_mask = s->train.step.swa_mask,
        .residuals = s->train.residuals,
    };
    return s->model.arch->forward(ctx, &s->model, &in);
}

/* The loss of logits against the step's labels: the mean cross-entropy over
 * the tokens, times its loss_scale (which makes it the mean over the labelled). */
static struct ggml_tensor * mean_loss(tnn_session * s, struct ggml_context * ctx, struct ggml_tensor * logits) {
    return ggml_mul(ctx, tnn_cross_entropy(ctx, logits, s->train.step.labels), s->train.step.loss_scale);
}

/* A named input [ne0] (ne1 = 0) or [ne0, ne1] in ctx. */
static struct ggml_tensor * new_input(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1,
                                      const char * name) {
    struct ggml_tensor * t = ne1 > 0 ? ggml_new_tensor_2d(ctx, type, ne0, ne1)
                                     : ggml_new_tensor_1d(ctx, type, ne0);
    ggml_set_name(t, name);
    ggml_set_input(t);
    return t;
}

/* The two contexts: ctx_graph for the graphs' nodes, ctx_opt for tensors
 * that get backend memory of their own; in ctx_opt the step's small
 * tensors: the attention masks, the AdamW row, the loss scale, the loss and
 * the clipping scalars (accumulators and moments come later). */
static int create_contexts(tnn_session * s, size_t graph_size) {
    struct tnn_step * step = &s->train.step;
    struct ggml_init_params ip = {
        .mem_size = 3 * graph_size * ggml_tensor_overhead() + 6 * ggml_graph_overhead_custom(graph_size, true),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    step->ctx_graph = ggml_init(ip);
    struct ggml_init_params op = {
        .mem_size = (size_t) (2 * s->tensors.n + 8) * ggml_tensor_overhead() * 3,
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    step->ctx_opt = ggml_init(op);
    s->train.residuals = calloc((size_t) s->model.cfg.n_layers + 1, sizeof(struct ggml_tensor *));
    if (step->ctx_graph == NULL || step->ctx_opt == NULL || s->train.residuals == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory creating the graph contexts");
    }
    const tnn_model_config * cfg = &s->model.cfg;
    struct ggml_context * ctx = step->ctx_opt;
    /* [t_seq, t_seq, 1, rows]: one mask for all rows, or one per packed row */
    const int64_t mask_rows = step->packed_rows ? cfg->t_batch : 1;
    step->causal_mask = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, cfg->t_seq, cfg->t_seq, 1, mask_rows);
    ggml_set_name(step->causal_mask, "causal_mask");
    ggml_set_input(step->causal_mask);
    if (cfg->swa_window > 0) {
        step->swa_mask = ggml_dup_tensor(ctx, step->causal_mask);
        ggml_set_name(step->swa_mask, "swa_mask");
        ggml_set_input(step->swa_mask);
    }
    s->train.hp = new_input(ctx, GGML_TYPE_F32, 7, 0, "adamw_params");
    step->loss_scale = new_input(ctx, GGML_TYPE_F32, 1, 0, "loss_scale");
    if (s->train.clip_norm > 0.0f) {
        s->train.grad_norm = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
        ggml_set_name(s->train.grad_norm, "grad_norm");
        ggml_set_output(s->train.grad_norm);
        s->train.clip_one = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
        ggml_set_name(s->train.clip_one, "clip_one");
    }
    /* Every graph copies its loss into s->train.loss, a tensor of its own,
     * so that it can be read after whichever graph ran last. */
    s->train.loss = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    ggml_set_name(s->train.loss, "loss");
    ggml_set_output(s->train.loss);
    if (step->objective != TNN_OBJECTIVE_CROSS_ENTROPY) {
        tnn_preference_tensors(step);
    }
    return TNN_OK;
}

/* What the backward differentiates: the forward graph's loss, or (the
 * frozen head and the loss fused, head_loss.c) a forward of its own. */
struct differentiated {
    struct ggml_cgraph * graph;
    struct ggml_tensor *logits, *loss;
    struct ggml_tensor * forward_loss;   /* the forward graph's loss (the same unless fused) */
    bool fused_head;
};

/* The forward graph s->train.gf (logits and loss readable after
 * tnn_compute_forward) and the graph the backward starts from. */
static struct differentiated build_forward(tnn_session * s, size_t graph_size) {
    struct tnn_step * step = &s->train.step;
    struct ggml_context * ctx = step->ctx_graph;
    s->train.logits = model_forward(s, ctx);
    ggml_set_name(s->train.logits, "logits");
    ggml_set_output(s->train.logits);
    /* one label per column of logits: a token, or an image for a ViT */
    step->labels = new_input(step->ctx_opt, GGML_TYPE_I32, s->train.logits->ne[1], 0, "labels");
    const bool fuse_head = tnn_head_loss_fusable(step, &s->cpu, &s->base);
    const bool preference = step->objective != TNN_OBJECTIVE_CROSS_ENTROPY;
    struct ggml_tensor * loss = !fuse_head   ? mean_loss(s, ctx, s->train.logits)
                                : preference ? tnn_preference_loss_of_logits(step, &s->cpu, ctx, s->train.logits)
                                             : ggml_mul(ctx,
                                                        tnn_head_loss_of_logits(&s->cpu, ctx, s->train.logits,
                                                                                step->labels),
                                                        step->loss_scale);
    s->train.gf = ggml_new_graph_custom(ctx, graph_size, true);
    ggml_build_forward_expand(s->train.gf, loss);

    struct differentiated d = { s->train.gf, s->train.logits, loss, loss, fuse_head };
    if (fuse_head) {
        d.logits = model_forward(s, ctx);
        d.loss = mean_loss(s, ctx, d.logits);
        d.graph = ggml_new_graph_custom(ctx, graph_size, true);
        ggml_build_forward_expand(d.graph, d.loss);
    }
    ggml_set_loss(d.loss);
    return d;
}

/* The matrix the logits are a product of (the output head), under any
 * scaling or capping the family puts on them; NULL where there is none. */
static const struct ggml_tensor * head_matrix(const struct ggml_tensor * logits) {
    while (logits != NULL && logits->op != GGML_OP_MUL_MAT) {
        logits = logits->src[0];
    }
    return logits != NULL ? logits->src[0] : NULL;
}

/* s->train.gb_grad: the backward of d into a gradient accumulator for
 * every parameter (so gradients survive the step, can be read back, and
 * add up across tnn_compute_gradients calls) and for the loss (its seed
 * gradient of 1 must persist between steps); then the rewrites onto
 * tinynn's kernels. grad_accs[i]: node i's accumulator, or NULL. */
static int build_backward(tnn_session * s, const struct differentiated * d, struct ggml_tensor ** grad_accs) {
    struct tnn_step * step = &s->train.step;
    struct ggml_context * ctx = step->ctx_graph;
    for (int i = 0; i < ggml_graph_n_nodes(d->graph); ++i) {
        struct ggml_tensor * node = ggml_graph_node(d->graph, i);
        if (node->flags & (GGML_TENSOR_FLAG_PARAM | GGML_TENSOR_FLAG_LOSS)) {
            grad_accs[i] = ggml_new_tensor(step->ctx_opt, GGML_TYPE_F32, GGML_MAX_DIMS, node->ne);
            ggml_format_name(grad_accs[i], "grad.%s", node->name);
        }
    }
    s->train.gb_grad = ggml_graph_dup(ctx, d->graph, true);
    ggml_build_backward_expand(ctx, s->train.gb_grad, grad_accs);
    struct ggml_tensor * loss_copy = ggml_cpy(ctx, d->forward_loss, s->train.loss);
    ggml_build_forward_expand(s->train.gf, loss_copy);
    ggml_build_forward_expand(s->train.gb_grad, d->fused_head ? ggml_cpy(ctx, d->loss, s->train.loss) : loss_copy);
    /* the loss and its gradient as tinynn computes them: the head fused
     * (head_loss.c) and/or the preference objective (preference.c) */
    int status = d->fused_head ? tnn_fuse_head_loss(step, &s->cpu, &s->base, s->train.gb_grad, d->logits)
                 : step->objective != TNN_OBJECTIVE_CROSS_ENTROPY
                     ? tnn_preference_rewrite(step, &s->cpu, s->train.gb_grad, d->logits)
                     : TNN_OK;
    /* the rewrites onto tinynn's kernels; the forward graph's own nodes too
     * when it has them */
    for (int g = 0; g < (d->fused_head ? 2 : 1) && status == TNN_OK; ++g) {
        struct ggml_cgraph * graph = g == 0 ? s->train.gb_grad : s->train.gf;
        status = s->base.pairs != NULL ? tnn_use_fast_copies(step, &s->cpu, &s->base, graph) : TNN_OK;
        if (status == TNN_OK) {
            status = tnn_use_stored_products(step, &s->cpu, graph, head_matrix(d->logits));
        }
        if (status == TNN_OK) {
            status = tnn_use_fgemm(step, &s->cpu, graph);
        }
    }
    if (status == TNN_OK) {
        status = tnn_sum_products(step, &s->cpu, s->train.gb_grad);
    }
    if (status == TNN_OK && s->train.recompute_every > 0) {
        /* one layer's scores, all heads (t_seq^2 per head), against every
         * layer's attention output (t_seq x head_dim per head); fused, the
         * output kept spares running the attention's forward again */
        const tnn_model_config * cfg = &s->model.cfg;
        const bool keep_attention = cfg->attn_split != TNN_ATTENTION_BY_CACHE &&
                                    cfg->t_seq > (int64_t) cfg->n_layers * tnn_head_dim(cfg);
        status = tnn_recompute_blocks(ctx, s->train.gb_grad, ggml_graph_n_nodes(d->graph), s->train.residuals,
                                      cfg->n_layers, s->train.recompute_every, keep_attention);
    } else if (status == TNN_OK && getenv("TNN_KEEP_ACTIVATIONS") == NULL) {
        status = tnn_recompute_elementwise(ctx, s->train.gb_grad, ggml_graph_n_nodes(d->graph), s->train.residuals,
                                           s->model.cfg.n_layers);
    }
    /* after the recomputation, which must see the norms as ggml's ops to
     * recompute them (their duplicates become the kernels' nodes too) */
    if (status == TNN_OK) {
        status = tnn_use_activation_kernels(step, &s->cpu, s->train.gb_grad);
    }
    return status;
}

/* The trainable parameters of d in graph order, each with its accumulator
 * and its gradient as the backward leaves it in gb_opt. */
struct param_grads {
    int n;
    struct ggml_tensor **params, **accs, **grads;
};

static void param_grads_free(struct param_grads * p) {
    free(p->params);
    free(p->accs);
    free(p->grads);
}

static int collect_params(tnn_session * s, const struct differentiated * d, struct ggml_tensor ** grad_accs,
                          struct param_grads * p) {
    const int n_nodes = ggml_graph_n_nodes(d->graph);
    p->params = calloc((size_t) n_nodes, sizeof(*p->params));
    p->accs = calloc((size_t) n_nodes, sizeof(*p->accs));
    p->grads = calloc((size_t) n_nodes, sizeof(*p->grads));
    if (p->params == NULL || p->accs == NULL || p->grads == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory");
    }
    for (int i = 0; i < n_nodes; ++i) {
        struct ggml_tensor * node = ggml_graph_node(d->graph, i);
        if (node->flags & GGML_TENSOR_FLAG_PARAM) {
            p->params[p->n] = node;
            p->accs[p->n] = grad_accs[i];
            p->grads[p->n] = ggml_graph_get_grad(s->train.gb_opt, node);
            p->n++;
        }
    }
    return TNN_OK;
}

/* AdamW on every parameter (with its two moments, registered in the tensor
 * table beside its accumulator), in two graphs: gb_opt after the backward
 * from its gradients, gb_update alone from the accumulators as they stand
 * (tnn_apply_update, e.g. after the caller replaced them by sums over
 * ranks). With clipping, both scale their gradients by the global norm. */
static int build_optimizer(tnn_session * s, const struct param_grads * p, size_t graph_size) {
    struct ggml_context * ctx = s->train.step.ctx_graph;
    s->train.gb_update = ggml_new_graph_custom(ctx, graph_size, false);
    struct ggml_tensor *clip_scale = NULL, *clip_scale_update = NULL;
    if (s->train.clip_norm > 0.0f) {
        clip_scale = build_clip_scale(s, ctx, s->train.gb_opt, p->grads, p->n);
        clip_scale_update = build_clip_scale(s, ctx, s->train.gb_update, p->accs, p->n);
    }
    for (int k = 0; k < p->n; ++k) {
        struct ggml_tensor * node = p->params[k];
        int32_t param_handle = -1;
        tnn_find(s, node->name, &param_handle);
        struct ggml_tensor * m = ggml_new_tensor(s->train.step.ctx_opt, GGML_TYPE_F32, GGML_MAX_DIMS, node->ne);
        struct ggml_tensor * v = ggml_new_tensor(s->train.step.ctx_opt, GGML_TYPE_F32, GGML_MAX_DIMS, node->ne);
        ggml_format_name(m, "adamw_m.%s", node->name);
        ggml_format_name(v, "adamw_v.%s", node->name);
        struct ggml_tensor *grad = p->grads[k], *acc = p->accs[k];
        if (clip_scale != NULL) {
            grad = ggml_mul(ctx, grad, clip_scale);
            acc = ggml_mul(ctx, acc, clip_scale_update);
        }
        ggml_build_forward_expand(s->train.gb_opt, ggml_opt_step_adamw(ctx, node, grad, m, v, s->train.hp));
        ggml_build_forward_expand(s->train.gb_update, ggml_opt_step_adamw(ctx, node, acc, m, v, s->train.hp));
        if (tnn_table_add(&s->tensors, p->accs[k], TNN_KIND_GRAD, param_handle) < 0 ||
            tnn_table_add(&s->tensors, m, TNN_KIND_MOMENT, param_handle) < 0 ||
            tnn_table_add(&s->tensors, v, TNN_KIND_MOMENT, param_handle) < 0) {
            return TNN_ERR_ALLOC;
        }
    }
    int status = tnn_use_fast_adamw(&s->train.step, &s->cpu, s->train.gb_opt);
    if (status == TNN_OK) {
        status = tnn_use_fast_adamw(&s->train.step, &s->cpu, s->train.gb_update);
    }
    return status;
}

/* Every matrix product of the step accumulates in float32. ggml's default
 * precision lets a GPU backend sum quantized products in float16 (Vulkan
 * does on every device with fp16): fine for inference, but it moved
 * SmolLM2's step-1 loss by 0.4% against the CPU, and the gradients with it.
 * The CPU backend sums in float32 whatever the setting. */
static void products_in_f32(struct ggml_cgraph * graph) {
    for (int i = 0; i < ggml_graph_n_nodes(graph); ++i) {
        struct ggml_tensor * node = ggml_graph_node(graph, i);
        if (node->op == GGML_OP_MUL_MAT) {
            ggml_prec_set_acc(node, GGML_PREC_F32);
        }
    }
}

/* An op the backend cannot run would abort inside ggml at compute time
 * (e.g. back-propagating through a quantized weight on a GPU backend whose
 * out_prod takes F32 only): refuse the graph now instead. */
static int check_backend_runs(tnn_session * s, struct ggml_cgraph * graph) {
    /* a device buffer has a largest size (lavapipe: 128 MiB, many GPUs 2 or
     * 4 GiB), and no tensor can be split across two */
    const size_t max_size = tnn_backend_max_tensor_bytes(s->backend);
    for (int i = 0; i < ggml_graph_n_nodes(graph); ++i) {
        const struct ggml_tensor * node = ggml_graph_node(graph, i);
        if (ggml_nbytes(node) > max_size) {
            return tnn_fail(TNN_ERR_ARG,
                            "%s needs %.0f MiB in one piece, more than the %s device's largest "
                            "buffer (%.0f MiB): train a smaller model or batch there",
                            node->name, ggml_nbytes(node) / 1048576.0, tnn_backend_name(), max_size / 1048576.0);
        }
    }
    for (int i = 0; i < ggml_graph_n_nodes(graph); ++i) {
        struct ggml_tensor * node = ggml_graph_node(graph, i);
        if (!ggml_backend_supports_op(s->backend, node)) {
            if (node->op == GGML_OP_OUT_PROD && node->src[0] && ggml_is_quantized(node->src[0]->type)) {
                return tnn_fail(TNN_ERR_ARG,
                                "the %s backend cannot back-propagate through the quantized "
                                "base as stored (out_prod on %s): use base_compute fast (the default; "
                                "--base-compute fast)",
                                tnn_backend_name(), ggml_type_name(node->src[0]->type));
            }
            return tnn_fail(TNN_ERR_BACKEND,
                            "the %s backend cannot run %s (%s, type %s) of the training "
                            "graph",
                            tnn_backend_name(), ggml_op_desc(node), node->name,
                            ggml_type_name(node->src[0] ? node->src[0]->type : node->type));
        }
    }
    return TNN_OK;
}

/* What the step holds besides its buffers: the CPU kernels' scratch, the
 * backend's work buffer, and the graphs' descriptions (nodes, hash sets). */
static int64_t overhead_bytes(const tnn_session * s) {
    return (int64_t) (s->cpu.scratch.per_thread * (size_t) s->cpu.scratch.n_threads + s->cpu.scratch.shared_bytes +
                      tnn_backend_work_bytes(s->backend, s->train.gb_opt, s->n_threads) +
                      ggml_used_mem(s->train.step.ctx_graph) + ggml_used_mem(s->train.step.ctx_opt));
}

/* A measuring session's trainer: the bytes allocate would take. The graph
 * allocator's buffer must hold the largest of the graphs it lays out. */
static int measure(tnn_session * s) {
    s->measure.optimizer = (int64_t) tnn_ctx_alloc_bytes(s->train.step.ctx_opt, s->backend);
    tnn_pretend_allocated(s->train.step.ctx_opt);
    s->train.galloc = ggml_gallocr_new(ggml_backend_get_default_buffer_type(s->backend));
    if (s->train.galloc == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory");
    }
    struct ggml_cgraph * graphs[] = { s->train.gb_opt, s->train.gb_step, s->train.gf };
    for (size_t g = 0; g < sizeof(graphs) / sizeof(graphs[0]); ++g) {
        size_t bytes = 0;
        if (graphs[g] != NULL) {
            ggml_gallocr_reserve_n_size(s->train.galloc, graphs[g], NULL, NULL, &bytes);
        }
        int64_t * part = graphs[g] == s->train.gf ? &s->measure.forward : &s->measure.graph;
        *part = (int64_t) bytes > *part ? (int64_t) bytes : *part;
    }
    s->measure.overhead = overhead_bytes(s);
    return TNN_OK;
}

/* Backend memory for the trainer's tensors and the graphs' nodes (the
 * largest graph, gb_opt, reserves the allocator), the inputs' first
 * values, and the handles Python reads. */
static int allocate(tnn_session * s) {
    if (s->measure.on) {
        return measure(s);
    }
    s->train.buf_opt = ggml_backend_alloc_ctx_tensors(s->train.step.ctx_opt, s->backend);
    if (s->train.buf_opt == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of %s memory for gradients and AdamW moments", tnn_backend_name());
    }
    s->train.galloc = ggml_gallocr_new(ggml_backend_get_default_buffer_type(s->backend));
    if (s->train.galloc == NULL || !ggml_gallocr_reserve(s->train.galloc, s->train.gb_opt)) {
        return tnn_fail(TNN_ERR_ALLOC, "out of %s memory for the training graph", tnn_backend_name());
    }
    if (getenv("TNN_DEBUG_MEM")) {
        fprintf(stderr,
                "tinynn: graph %.1f MB, params+inputs %.1f MB, grads+moments %.1f MB, fast base copies %.1f MB\n",
                ggml_gallocr_get_buffer_size(s->train.galloc, 0) / 1048576.0,
                s->model.buf ? ggml_backend_buffer_get_size(s->model.buf) / 1048576.0 : 0.0,
                s->train.buf_opt ? ggml_backend_buffer_get_size(s->train.buf_opt) / 1048576.0 : 0.0,
                s->base.buf_copies ? ggml_backend_buffer_get_size(s->base.buf_copies) / 1048576.0 : 0.0);
    }
    /* zeroed inputs: a forward before the first upload reads defined memory */
    ggml_backend_buffer_clear(s->train.buf_opt, 0);
    const float one = 1.0f;
    tnn_tensor_set(&s->tensors, s->train.step.loss_scale, &one, 0, sizeof(float));
    if (s->train.clip_one != NULL) {
        tnn_tensor_set(&s->tensors, s->train.clip_one, &one, 0, sizeof(float));
    }
    /* every row one sample until positions come (then follow_positions) */
    return fill_masks(s, NULL);
}

static int check_buildable(tnn_session * s) {
    if (!s->realized) {
        return tnn_fail(TNN_ERR_STATE, "build_training_step before realize: realize the model first");
    }
    if (s->train.built) {
        return tnn_fail(TNN_ERR_STATE, "build_training_step called twice on one session");
    }
    for (int32_t h = 0; h < s->tensors.n; ++h) {
        if (s->tensors.entries[h].kind == TNN_KIND_PARAM) {
            return TNN_OK;
        }
    }
    return tnn_fail(TNN_ERR_STATE, "build_training_step: the model has nothing to train "
                                   "(a base realized without adapters runs generation only)");
}

int tnn_build_training_step(tnn_session * s, int32_t * loss_handle, int32_t * labels_handle, int32_t * hp_handle,
                            int32_t * logits_handle) {
    if (s == NULL || loss_handle == NULL || labels_handle == NULL || hp_handle == NULL || logits_handle == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_build_training_step: NULL argument");
    }
    int status = check_buildable(s);
    if (status != TNN_OK) {
        return status;   /* (before realize the model's shape is unknown) */
    }
    /* what the rewrites read of the session besides the step's own
     * settings: the model it trains, the threads it computes on */
    struct tnn_step * step = &s->train.step;
    step->model = &s->model;
    step->n_threads = s->n_threads;
    /* fused, the attention holds no scores: the whole batch in one node;
     * else with recomputation a kv head at a time */
    s->model.cfg.attn_split = tnn_attention_fusable(step, &s->cpu) ? TNN_ATTENTION_WHOLE
                              : s->train.recompute_every > 0       ? TNN_ATTENTION_PER_KV_HEAD
                                                                   : TNN_ATTENTION_BY_CACHE;
    const size_t graph_size = graph_size_for(&s->model.cfg, s->train.recompute_every > 0,
                                             s->train.step.packed_rows);
    status = create_contexts(s, graph_size);
    if (status != TNN_OK) {
        return status;
    }

    /* forward + loss, then backward, then AdamW: each graph extends the last */
    const struct differentiated d = build_forward(s, graph_size);
    /* attention on the attention_bf16 kernels, before autodiff sees it */
    status = tnn_fuse_attention(step, &s->cpu, d.graph);
    if (status == TNN_OK && d.graph != s->train.gf) {
        status = tnn_fuse_attention(step, &s->cpu, s->train.gf);
    }
    if (status != TNN_OK) {
        return status;
    }
    struct ggml_tensor ** grad_accs = calloc((size_t) ggml_graph_n_nodes(d.graph), sizeof(*grad_accs));
    if (grad_accs == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory");
    }
    status = build_backward(s, &d, grad_accs);
    struct param_grads p = { 0 };
    if (status == TNN_OK) {
        s->train.gb_opt = ggml_graph_dup(s->train.step.ctx_graph, s->train.gb_grad, true);
        status = collect_params(s, &d, grad_accs, &p);
    }
    if (status == TNN_OK) {
        status = build_optimizer(s, &p, graph_size);
    }
    if (status == TNN_OK) {
        status = tnn_drop_unread_views(s->train.gb_opt);
    }
    if (status == TNN_OK) {
        s->train.gb_step = tnn_graph_writing_gradients(s->train.step.ctx_graph, s->train.gb_opt, p.accs, p.n);
        products_in_f32(s->train.gb_opt);
        status = check_backend_runs(s, s->train.gb_opt);
    }
    param_grads_free(&p);
    free(grad_accs);
    if (status == TNN_OK) {
        status = allocate(s);
    }
    if (status != TNN_OK) {
        return status;
    }

    *labels_handle = tnn_table_add(&s->tensors, s->train.step.labels, TNN_KIND_LABELS, -1);
    *hp_handle = tnn_table_add(&s->tensors, s->train.hp, TNN_KIND_HP, -1);
    *loss_handle = tnn_table_add(&s->tensors, s->train.loss, TNN_KIND_LOSS, -1);
    *logits_handle = tnn_table_add(&s->tensors, s->train.logits, TNN_KIND_LOGITS, -1);
    if (s->train.step.objective != TNN_OBJECTIVE_CROSS_ENTROPY &&
        (tnn_table_add(&s->tensors, s->train.step.reference_logps, TNN_KIND_REFERENCE, -1) < 0 ||
         tnn_table_add(&s->tensors, s->train.step.sample_logps, TNN_KIND_SAMPLE_LOGPS, -1) < 0)) {
        return TNN_ERR_ALLOC;
    }
    if (*labels_handle < 0 || *hp_handle < 0 || *loss_handle < 0 || *logits_handle < 0 ||
        (s->train.grad_norm != NULL &&
         tnn_table_add(&s->tensors, s->train.grad_norm, TNN_KIND_GRAD_NORM, -1) < 0)) {
        return TNN_ERR_ALLOC;
    }
    s->train.built = true;
    return TNN_OK;
}

void tnn_trainer_free(struct tnn_trainer * train) {
    free(train->residuals);
    ggml_gallocr_free(train->galloc);
    ggml_free(train->step.ctx_graph);
    tnn_free_tensors(train->step.ctx_opt, train->buf_opt);
}

int tnn_graph_reset(tnn_session * s) {
    if (tnn_refuse_measuring(s, "graph_reset") != TNN_OK) {
        return TNN_ERR_STATE;
    }
    if (s == NULL || !s->train.built) {
        return tnn_fail(TNN_ERR_STATE, "graph_reset before build_training_step");
    }
    ggml_graph_reset(s->train.gb_opt);   /* grads and moments to 0, loss grad to 1 */
    s->train.reset_done = true;
    return TNN_OK;
}

int tnn_graph_reset_grads_only(tnn_session * s) {
    if (tnn_refuse_measuring(s, "graph_reset") != TNN_OK) {
        return TNN_ERR_STATE;
    }
    if (s == NULL || !s->train.built) {
        return tnn_fail(TNN_ERR_STATE, "graph_reset_grads_only before build_training_step");
    }
    if (!s->train.reset_done) {
        return tnn_fail(TNN_ERR_STATE, "graph_reset_grads_only before the first graph_reset: "
                                       "the first step must reset the AdamW moments too");
    }
    ggml_graph_reset(s->train.gb_grad);  /* gb_grad has no AdamW nodes: moments stay */
    return TNN_OK;
}

/* Lay out one graph's intermediate tensors in the shared graph buffer. The
 * three graphs share their forward tensors; when we switch graphs the old
 * addresses belong to another layout, so they are forgotten first. */
static int alloc_graph(tnn_session * s, struct ggml_cgraph * graph) {
    if (s->train.allocated != graph) {
        for (struct ggml_tensor * t = ggml_get_first_tensor(s->train.step.ctx_graph); t != NULL;
             t = ggml_get_next_tensor(s->train.step.ctx_graph, t)) {
            t->data = NULL;
            t->buffer = NULL;
        }
        s->train.allocated = graph;
    }
    if (!ggml_gallocr_alloc_graph(s->train.galloc, graph)) {
        s->train.allocated = NULL;
        return tnn_fail(TNN_ERR_ALLOC, "out of %s memory laying out the graph", tnn_backend_name());
    }
    return TNN_OK;
}

static int compute(tnn_session * s, struct ggml_cgraph * graph, const char * what) {
    if (tnn_refuse_measuring(s, what) != TNN_OK) {
        return TNN_ERR_STATE;
    }
    if (s == NULL || !s->train.built) {
        return tnn_fail(TNN_ERR_STATE, "%s before build_training_step", what);
    }
    if (graph != s->train.gf && !s->train.reset_done) {
        return tnn_fail(TNN_ERR_STATE, "%s before graph_reset: reset before the first step", what);
    }
    int status = follow_positions(s);
    if (status == TNN_OK) {
        status = alloc_graph(s, graph);
    }
    if (status != TNN_OK) {
        return status;
    }
    if (ggml_backend_graph_compute(s->backend, graph) != GGML_STATUS_SUCCESS) {
        return tnn_fail(TNN_ERR_BACKEND, "%s: the %s backend failed to compute the graph", what,
                        tnn_backend_name());
    }
    return TNN_OK;
}

int tnn_compute_accumulated_step(tnn_session * s) {
    return compute(s, s ? s->train.gb_opt : NULL, "compute_accumulated_step");
}

int tnn_compute_step(tnn_session * s) {
    if (tnn_refuse_measuring(s, "compute_step") != TNN_OK) {
        return TNN_ERR_STATE;
    }
    if (s != NULL && s->train.built && s->train.gb_step == NULL) {
        int status = tnn_graph_reset_grads_only(s);
        return status != TNN_OK ? status : compute(s, s->train.gb_opt, "compute_step");
    }
    return compute(s, s ? s->train.gb_step : NULL, "compute_step");
}
int tnn_compute_gradients(tnn_session * s) { return compute(s, s ? s->train.gb_grad : NULL, "compute_gradients"); }
int tnn_compute_forward(tnn_session * s) { return compute(s, s ? s->train.gf : NULL, "compute_forward"); }
int tnn_apply_update(tnn_session * s) { return compute(s, s ? s->train.gb_update : NULL, "apply_update"); }

int tnn_enable_grad_clipping(tnn_session * s, float max_norm) {
    if (s == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_enable_grad_clipping: session is NULL");
    }
    if (!s->realized || s->train.built) {
        return tnn_fail(TNN_ERR_STATE, "enable_grad_clipping must come after realize and before build");
    }
    if (!(max_norm > 0.0f) || !isfinite(max_norm)) {
        return tnn_fail(TNN_ERR_ARG, "the clipping norm must be a positive number, got %g", max_norm);
    }
    s->train.clip_norm = max_norm;
    return TNN_OK;
}

int tnn_set_precision(tnn_session * s, const char * precision) {
    if (s == NULL || precision == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_set_precision: session or precision is NULL");
    }
    if (!s->realized || s->train.built) {
        return tnn_fail(TNN_ERR_STATE, "set_precision must come after realize and before build");
    }
    if (strcmp(precision, "f32") == 0) {
        s->train.step.bf16_products = false;
        return TNN_OK;
    }
    if (strcmp(precision, "bf16") != 0) {
        return tnn_fail(TNN_ERR_ARG, "precision '%.20s': say f32 or bf16", precision);
    }
    if (s->cpu.kernels.fgemm_bf16 == NULL) {
        return tnn_fail(TNN_ERR_ARG,
                        "precision bf16 needs bfloat16 products, which the %s backend and this CPU do not "
                        "have (" TNN_FGEMM_BF16_NEEDS "); use f32",
                        tnn_backend_name());
    }
    s->train.step.bf16_products = true;
    return TNN_OK;
}

int tnn_set_objective(tnn_session * s, int32_t objective, float beta) {
    if (s == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_set_objective: session is NULL");
    }
    if (!s->realized || s->train.built) {
        return tnn_fail(TNN_ERR_STATE, "set_objective must come after realize and before build");
    }
    if (objective == TNN_OBJECTIVE_CROSS_ENTROPY) {
        s->train.step.objective = objective;
        return TNN_OK;
    }
    if (objective != TNN_OBJECTIVE_DPO && objective != TNN_OBJECTIVE_ORPO) {
        return tnn_fail(TNN_ERR_ARG, "unknown objective %d", objective);
    }
    if (!(beta > 0.0f) || !isfinite(beta)) {
        return tnn_fail(TNN_ERR_ARG, "beta must be a positive number, got %g", beta);
    }
    /* the loss is a CPU node of the graph (graph/preference.c) */
    if (strcmp(tnn_backend_name(), "cpu") != 0) {
        return tnn_fail(TNN_ERR_ARG, "preference losses (dpo, orpo) run on the CPU backend only: "
                                     "their loss is a CPU node of the graph; use the cpu device");
    }
    if (s->model.images != NULL || s->model.cfg.t_batch < 2 || s->model.cfg.t_batch % 2 ||
        s->model.cfg.t_batch > TNN_MAX_PREFERENCE_ROWS) {
        return tnn_fail(TNN_ERR_ARG,
                        "a preference loss needs a token model whose batch holds pairs "
                        "of rows (an even t_batch up to %d), got t_batch %d",
                        TNN_MAX_PREFERENCE_ROWS, s->model.cfg.t_batch);
    }
    s->train.step.objective = objective;
    s->train.step.beta = beta;
    return TNN_OK;
}

int tnn_set_recompute(tnn_session * s, int32_t every) {
    if (s == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_set_recompute: session is NULL");
    }
    if (!s->realized || s->train.built) {
        return tnn_fail(TNN_ERR_STATE, "set_recompute must come after realize and before build");
    }
    if (every < 0) {
        return tnn_fail(TNN_ERR_ARG, "recompute every %d blocks: say 0 (off) or a positive count", (int) every);
    }
    s->train.recompute_every = every;
    return TNN_OK;
}

int tnn_set_packed_rows(tnn_session * s, int32_t packed) {
    if (s == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_set_packed_rows: session is NULL");
    }
    if (!s->realized || s->train.built) {
        return tnn_fail(TNN_ERR_STATE, "set_packed_rows must come after realize and before build");
    }
    if (s->model.tokens == NULL) {
        return tnn_fail(TNN_ERR_ARG, "packed rows need a token model (%s takes no tokens)", s->model.arch->name);
    }
    const tnn_model_config * cfg = &s->model.cfg;
    const bool recurrent = tnn_model_recurrent(cfg);
    if (packed != 0 && recurrent && !tnn_backend_uses_host_memory()) {
        /* only the CPU's nodes restart a recurrent state at a sample's start */
        return tnn_fail(TNN_ERR_ARG, "packed rows with recurrent layers train on the CPU only: leave packing off");
    }
    s->train.step.packed_rows = packed != 0;
    return TNN_OK;
}

int tnn_training_memory(tnn_session * s, int64_t parts[7]) {
    if (s == NULL || parts == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_training_memory: NULL argument");
    }
    if (!s->train.built) {
        return tnn_fail(TNN_ERR_STATE, "training_memory before build_training_step");
    }
    if (s->measure.on) {
        parts[0] = s->measure.graph;
        parts[1] = s->measure.params;
        parts[2] = s->measure.optimizer;
        parts[3] = s->measure.copies;
        parts[4] = s->measure.released;
        parts[5] = s->measure.overhead;
        parts[6] = s->measure.forward;
        return TNN_OK;
    }
    parts[0] = (int64_t) ggml_gallocr_get_buffer_size(s->train.galloc, 0);
    parts[1] = s->model.buf ? (int64_t) ggml_backend_buffer_get_size(s->model.buf) : 0;
    parts[2] = s->train.buf_opt ? (int64_t) ggml_backend_buffer_get_size(s->train.buf_opt) : 0;
    parts[3] = s->base.buf_copies ? (int64_t) ggml_backend_buffer_get_size(s->base.buf_copies) : 0;
    parts[4] = 0;
    parts[5] = overhead_bytes(s);
    parts[6] = 0;
    return TNN_OK;
}

/* ---- profiling ------------------------------------------------------------ */

struct op_time {
    char key[64];   /* "<op> <src0 type>" */
    double seconds;
    int count;
};

static int compare_op_time(const void * a, const void * b) {
    const double d = ((const struct op_time *) b)->seconds - ((const struct op_time *) a)->seconds;
    return (d > 0) - (d < 0);
}

int tnn_profile_step(tnn_session * s, char * report, size_t report_cap) {
    if (tnn_refuse_measuring(s, "profile_step") != TNN_OK) {
        return TNN_ERR_STATE;
    }
    if (report == NULL || report_cap == 0) {
        return tnn_fail(TNN_ERR_ARG, "tnn_profile_step: no report buffer");
    }
    report[0] = '\0';
    if (s == NULL || !s->train.built || !s->train.reset_done) {
        return tnn_fail(TNN_ERR_STATE, "profile_step before build_training_step and graph_reset");
    }
    int status = alloc_graph(s, s->train.gb_opt);
    if (status != TNN_OK) {
        return status;
    }
    const int n_nodes = ggml_graph_n_nodes(s->train.gb_opt);
    struct op_time * times = calloc((size_t) n_nodes, sizeof(*times));
    if (times == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory");
    }
    /* each node runs alone in a one-node graph of its own */
    struct ggml_init_params ip = {
        .mem_size = ggml_graph_overhead_custom(1, false),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    struct ggml_context * ctx_one = ggml_init(ip);
    if (ctx_one == NULL) {
        free(times);
        return tnn_fail(TNN_ERR_ALLOC, "out of memory");
    }
    int n_keys = 0;
    for (int i = 0; i < n_nodes; ++i) {
        struct ggml_tensor * node = ggml_graph_node(s->train.gb_opt, i);
        ggml_reset(ctx_one);
        struct ggml_cgraph * one = ggml_new_graph_custom(ctx_one, 1, false);
        ggml_graph_add_node(one, node);
        const int64_t t0 = ggml_time_us();
        if (ggml_backend_graph_compute(s->backend, one) != GGML_STATUS_SUCCESS) {
            free(times);
            ggml_free(ctx_one);
            return tnn_fail(TNN_ERR_BACKEND, "profile_step: the backend failed on %s", node->name);
        }
        const double dt = (double) (ggml_time_us() - t0) * 1e-6;
        char key[64];
        const struct ggml_tensor *a = node->src[0], *b = node->src[1];
        if (getenv("TNN_PROFILE_SHAPES") && a) {
            /* the operands' shapes, and for a copy whether the source is transposed */
            snprintf(key, sizeof(key), "%s %s [%lld %lld %lld]%s x[%lld %lld %lld]", ggml_op_desc(node),
                     ggml_type_name(a->type), (long long) a->ne[0], (long long) a->ne[1], (long long) a->ne[2],
                     a->nb[0] == ggml_type_size(a->type) ? "" : "^T", (long long) (b ? b->ne[0] : 0),
                     (long long) (b ? b->ne[1] : 0), (long long) (b ? b->ne[2] : 0));
        } else {
            snprintf(key, sizeof(key), "%s %s", ggml_op_desc(node),
                     node->src[0] ? ggml_type_name(node->src[0]->type) : "-");
        }
        int k = 0;
        while (k < n_keys && strcmp(times[k].key, key) != 0) ++k;
        if (k == n_keys) {
            snprintf(times[n_keys++].key, sizeof(times[0].key), "%s", key);
        }
        times[k].seconds += dt;
        times[k].count += 1;
    }
    ggml_free(ctx_one);
    qsort(times, (size_t) n_keys, sizeof(*times), compare_op_time);
    size_t used = 0;
    for (int k = 0; k < n_keys && used < report_cap; ++k) {
        int n = snprintf(report + used, report_cap - used, "%.6f %d %s\n", times[k].seconds, times[k].count,
                         times[k].key);
        if (n < 0) break;
        used += (size_t) n;
    }
    free(times);
    return TNN_OK;
}
