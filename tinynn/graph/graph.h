/* Rewrites of a built training graph: node surgery (graph/rewrite.c), the
 * frozen base's fast copies, float32 products and AdamW on tinynn's CPU
 * kernels, the frozen head and loss in one node, preference objectives.
 * Not installed.
 *
 * A rewrite takes the parts it works on as arguments: the trainer's part
 * below (struct tnn_step), the session's CPU state (cpu/state.h) and its
 * frozen base (models/models.h). It reads nothing else of the session, and
 * session/ is above this layer (scripts/check_c_layers.py). */
#ifndef TINYNN_GRAPH_H
#define TINYNN_GRAPH_H

#include "models/models.h"

/* ---- what the rewrites work on: the trainer's part ------------------------ */

/* The part of the trainer (session/train.h, which embeds it as train.step)
 * that the rewrites read and add to: where their nodes and tensors go, the
 * step's settings, and the tensors its loss reads and writes. The trainer
 * owns and fills all of it; graph/ adds the preference objective's tensors
 * (tnn_preference_tensors) and the nodes it rewrites into. A preference
 * node reads it while it computes (its user data). */
struct tnn_step {
    const struct tnn_model * model;   /* the model trained (the session's): its shape and inputs */
    int32_t n_threads;                /* the threads a step computes on (the session's): the
                                         kernel nodes' scratch is sized for as many */
    /* graph nodes; their memory comes from the trainer's graph allocator */
    struct ggml_context * ctx_graph;
    /* gradient accumulators, AdamW moments and the step's small inputs,
     * in the trainer's buffer of their own */
    struct ggml_context * ctx_opt;
    /* the dense products in bfloat16 (tnn_set_precision "bf16") */
    bool bf16_products;
    /* packed rows (tnn_set_packed_rows): the masks hold one [t_seq, t_seq]
     * per row, filled from the positions */
    bool packed_rows;
    /* the objective (tnn_set_objective, preference.c) and its beta */
    int32_t objective;
    float beta;
    /* the attention masks [t_seq, t_seq, 1, 1 or t_batch] (swa_mask: the
     * sliding window's, or NULL); the fused attention takes the causal one */
    struct ggml_tensor *causal_mask, *swa_mask;
    struct ggml_tensor * labels;   /* int32, one per column of the logits */
    /* n_tokens / n_labelled, set when labels are uploaded: ggml's cross-entropy
     * averages over every token, a masked loss over the labelled ones */
    struct ggml_tensor * loss_scale;
    /* for a preference objective, its tensors [tnn_preference_samples]:
     * reference input, outputs; and the weights [n] of the tokens */
    struct ggml_tensor *reference_logps, *sample_logps, *token_weights;
};

/* ---- rewriting a built graph's nodes (rewrite.c) ------------------------- */

/* node becomes a custom node running fn(node, ith, nth, userdata) on srcs
 * (n_srcs of them); its shape stays. */
void tnn_become_custom(struct ggml_context * ctx, struct ggml_tensor * node, ggml_custom_op_t fn, void * userdata,
                       struct ggml_tensor ** srcs, int n_srcs);
/* Give to, a node of graph, the use count (how many nodes read it) of
 * from: the CPU backend fuses a node with one reader into that reader
 * without writing it (RMS_NORM into the MUL after it). */
void tnn_copy_use_count(struct ggml_cgraph * graph, const struct ggml_tensor * from,
                        const struct ggml_tensor * to);
/* The user data of node when it is a custom node running fn, else NULL. */
void * tnn_custom_userdata(const struct ggml_tensor * node, ggml_custom_op_t fn);
/* The first node of graph that reads src as its source slot with op, or NULL. */
struct ggml_tensor * tnn_graph_reader(struct ggml_cgraph * graph, const struct ggml_tensor * src, int slot,
                                      enum ggml_op op);
/* Set node's shape to [ne0, ne1], contiguous. */
void tnn_reshape_node(struct ggml_tensor * node, int64_t ne0, int64_t ne1);
/* A node nothing reads any more becomes a no-op one element large (the
 * graph allocator never frees a node that nothing reads). Its sources stay:
 * the allocator frees them after their last reader, and a view source whose
 * reader vanished would keep what it views alive to the end. */
void tnn_become_noop(struct ggml_tensor * node);
/* A view nothing in graph reads (the backward's transposes whose product a
 * rewrite replaced) becomes op NONE: the allocator holds what a view views
 * until the view's own readers are done, so an unread view held it to the
 * end of the step. */
int tnn_drop_unread_views(struct ggml_cgraph * graph);
/* A graph's nodes sorted by address, to find a node's index in
 * O(log n): tnn_index_nodes (malloc'ed, NULL when out of memory; free it),
 * tnn_node_find (-1 for a tensor that is not among them, or NULL). */
struct tnn_node_index {
    const struct ggml_tensor * node;
    int index;
};
struct tnn_node_index * tnn_index_nodes(struct ggml_tensor ** nodes, int n);
int tnn_node_find(const struct tnn_node_index * index, int n, const struct ggml_tensor * t);
/* How many times each node of graph is read (as a source or viewed): the
 * nodes' index (tnn_index_nodes) in *index and the counts by node index in
 * *readers, both malloc'ed (free both); TNN_ERR_ALLOC when out of memory. */
int tnn_count_readers(struct ggml_cgraph * graph, struct tnn_node_index ** index, int ** readers);
/* A copy of graph (forward, backward, AdamW) whose nodes write each
 * accumulator's first gradient (acc = g) instead of adding it (acc = acc + g,
 * which needs acc zeroed first); NULL when some accumulator's first write is
 * not a whole-tensor add, or out of memory. New nodes go in ctx. */
struct ggml_cgraph * tnn_graph_writing_gradients(struct ggml_context * ctx, struct ggml_cgraph * graph,
                                                 struct ggml_tensor ** accs, int n_accs);

/* ---- activation recomputation (recompute.c) ------------------------------ */

/* Rewrite a training graph (its first n_forward nodes the forward, then the
 * backward) so that the backward keeps only residuals[0], residuals[every],
 * residuals[2 every], ... and residuals[n_layers] (the residual stream
 * entering each block and leaving the last, struct tnn_forward_inputs) and
 * recomputes every other activation it reads from them, just before it
 * reads it. The same values: every gradient keeps its bytes. New nodes go
 * in ctx; the graph needs room for a second copy of the blocks' nodes.
 * keep_attention: the attention's output, its pieces concatenated
 * (tnn_attention per_kv_head), is kept too, so that the output projection's
 * backward does not recompute every piece at once and hold each until its
 * own backward: worth it when one layer's scores outweigh every layer's
 * attention output. */
int tnn_recompute_blocks(struct ggml_context * ctx, struct ggml_cgraph * graph, int n_forward,
                         struct ggml_tensor ** residuals, int32_t n_layers, int32_t every, bool keep_attention);

/* The same rewrite for the blocks' elementwise activations only (a norm's
 * output, the gated unit's product, their views and copies) whose sources
 * the backward keeps anyway: each is recomputed in one pass over memory
 * instead of kept from the forward to its backward (the input of every
 * adapter but o's and down's, the input of down's). Training without block
 * recomputation uses it; an architecture that does not name its blocks'
 * inputs keeps everything. */
int tnn_recompute_elementwise(struct ggml_context * ctx, struct ggml_cgraph * graph, int n_forward,
                              struct ggml_tensor ** residuals, int32_t n_layers);

/* ---- the frozen base's fast copies in a training graph (fast_copies.c) ---- */

/* Rewrite a training graph to use the copies (models/frozen_copies.c): the
 * input gradients through
 * frozen matrices, out_prod(W, dy^T) -> mul_mat(W^T, dy), and on the CPU the
 * products with packed copies -> the packed integer kernels, those with
 * bfloat16 copies -> fgemm_bf16 (tnn_use_bf16_copy). */
int tnn_use_fast_copies(const struct tnn_step * step, struct tnn_cpu_state * cpu,
                        const struct tnn_frozen_base * base, struct ggml_cgraph * graph);

/* ---- the input gradients through a base kept as stored (stored_products.c) */

/* Turn the products by a frozen quantized (or F16/BF16) matrix kept as
 * stored, W x and the input gradient out_prod(W, dy^T), into qgemm on its
 * panels made as read (when the session's kernels have qgemm), else the
 * input gradient into fgemm on W dequantized a column block at a time:
 * base_compute stored, and any matrix the copies left out. head: the
 * matrix the logits are a product of (its gradient takes two int8 levels). */
int tnn_use_stored_products(const struct tnn_step * step, struct tnn_cpu_state * cpu, struct ggml_cgraph * graph,
                            const struct ggml_tensor * head);
/* The node's compute: dst [d_in, n] = W^T dy, src0 = W [d_in, d_out] as
 * stored, src1 = dy [d_out, n] (F32, contiguous columns); userdata: a
 * struct tnn_cpu_state with fgemm and tnn_stored_scratch_bytes of scratch
 * per thread. d_in a multiple of tnn_stored_block_width(W's type). */
void tnn_stored_input_gradient_node(struct ggml_tensor * dst, int ith, int nth, void * userdata);
int64_t tnn_stored_block_width(enum ggml_type type);
/* A thread's scratch: fgemm's panel, the dequantized block, the product of
 * a later chunk before it is added. */
size_t tnn_stored_scratch_bytes(int64_t width, int64_t n);

/* ---- float32 products on tinynn's CPU kernel (products.c) ------------------ */

/* How many column ranges each of units (a product's panels, a stored
 * matrix's column blocks) is split into, so that nth threads have at least
 * two work items each where the n columns allow: 1 when there are units
 * enough. Each range's values do not depend on the split. */
int64_t tnn_column_splits(int64_t units, int nth, int64_t n);
/* Turn the F32 matrix products of a training graph into custom nodes that
 * run the fgemm kernel (when the session's kernels have it). */
int tnn_use_fgemm(const struct tnn_step * step, struct tnn_cpu_state * cpu, struct ggml_cgraph * graph);

/* Under --precision bf16, each sum of two products (each read by the sum
 * alone, one of them through fgemm_bf16), as LoRA's W x + B (s A x) and
 * its backward's W^T dy + A (s B^T dy) are, becomes one node: the first
 * product written, the second added to it as the kernel sums (its
 * accumulate), a work item at a time. Neither product is written on its
 * own, nor read back by an add. Run after the products' rewrites. */
int tnn_sum_products(const struct tnn_step * step, struct tnn_cpu_state * cpu, struct ggml_cgraph * graph);

/* ---- SwiGLU's backward and RMS norm on the kernels (activations.c) -------- */

/* Under --precision bf16, with the activations kernels: dgate =
 * silu_back(dy up, g) and dup = silu(g) dy each become one node, and so
 * does each RMS norm (with its weight's MUL) and its backward. */
int tnn_use_activation_kernels(const struct tnn_step * step, struct tnn_cpu_state * cpu,
                               struct ggml_cgraph * graph);

/* Make node [rows, n] the product of a frozen matrix's bfloat16 copy
 * w_bf16 [k, rows] and x [k, n] (transposed: of its transpose, w_bf16 [rows,
 * k]) on fgemm_bf16; tiles: the copy lies in fgemm_bf16_amx's own layout
 * (tnn_fgemm_bf16_amx_tiles), not in rows. The caller grows the scratch
 * (tnn_fgemm_bf16_scratch_bytes). The node's new sources go in ctx. */
void tnn_use_bf16_copy(struct ggml_context * ctx, struct tnn_cpu_state * cpu, struct ggml_tensor * node,
                       struct ggml_tensor * w_bf16, bool tiles, struct ggml_tensor * x, bool transposed);

/* ---- causal attention in one node each way (attention.c) ------------------ */

/* Whether a training graph's attention can run on the attention_bf16
 * kernels: --precision bf16, a CPU with them, uncapped scores, a head width
 * they take, and no packed rows. */
bool tnn_attention_fusable(const struct tnn_step * step, const struct tnn_cpu_state * cpu);
/* Rewrite a forward graph, before its backward is built: each causal
 * attention becomes one custom node, its backward another (attention.c's
 * comment). TNN_OK when there is nothing to fuse. */
int tnn_fuse_attention(const struct tnn_step * step, struct tnn_cpu_state * cpu, struct ggml_cgraph * graph);
/* Whether node is a fused attention's forward. */
bool tnn_is_fused_attention(const struct ggml_tensor * node);

/* ---- the AdamW update on tinynn's CPU kernel (adamw.c) ---------------------- */

/* Turn a graph's AdamW nodes into custom nodes that compute the same bits
 * with the adamw kernel (when the session's kernels have it). */
int tnn_use_fast_adamw(const struct tnn_step * step, struct tnn_cpu_state * cpu, struct ggml_cgraph * graph);

/* ---- the frozen head and the loss in one node (head_loss.c) -------------- */

/* Whether a training graph's head and cross-entropy can be fused: the
 * session's kernels have head_loss and the llama's head has packed copies
 * (models/frozen_copies.c). The training graphs then need a forward of their own (the
 * forward graph keeps its logits). */
bool tnn_head_loss_fusable(const struct tnn_step * step, const struct tnn_cpu_state * cpu,
                           const struct tnn_frozen_base * base);
/* Rewrite a training graph (forward + backward) whose loss is
 * cross_entropy_loss(logits = mul_mat(head, h), int32 labels) so that the
 * logits and their gradient [vocab, n] are never held: a few tokens at a
 * time, one node computes each token's loss and dL/dh. */
int tnn_fuse_head_loss(const struct tnn_step * step, struct tnn_cpu_state * cpu,
                       const struct tnn_frozen_base * base, struct ggml_cgraph * graph,
                       struct ggml_tensor * logits);
/* The same loss from logits [vocab, n] held in full, for the forward graph
 * beside a fused training graph: summed as the fused node sums it, so that
 * the two agree to the bit (cross_entropy_loss sums in another order). */
struct ggml_tensor * tnn_head_loss_of_logits(const struct tnn_cpu_state * cpu, struct ggml_context * ctx,
                                             struct ggml_tensor * logits, struct ggml_tensor * labels);

/* ---- preference losses (preference.c) -------------------------------------- */

/* The most rows a preference batch may hold (pairs x 2), and the most
 * samples a batch of packed rows may hold. */
#define TNN_MAX_PREFERENCE_ROWS 256
#define TNN_MAX_PREFERENCE_SAMPLES 256

/* How many samples the objective's tensors hold: t_batch, one a row, or
 * with packed rows TNN_MAX_PREFERENCE_SAMPLES. */
int64_t tnn_preference_samples(const struct tnn_step * step);
/* The samples of a batch with these positions (int32 [t_seq * t_batch]):
 * a row is one, or with packed rows a sample begins at each row's first
 * token and wherever a position is 0. */
int64_t tnn_count_samples(const struct tnn_step * step, const int32_t * positions);
/* The objective's tensors in step->ctx_opt (reference_logps,
 * sample_logps [tnn_preference_samples], token_weights [n]). */
void tnn_preference_tensors(struct tnn_step * step);
/* The forward graph's preference loss from logits [vocab, n] held in full. */
struct ggml_tensor * tnn_preference_loss_of_logits(const struct tnn_step * step, const struct tnn_cpu_state * cpu,
                                                   struct ggml_context * ctx, struct ggml_tensor * logits);
/* Rewrite a training graph whose loss is cross_entropy_loss(logits, labels)
 * * loss_scale, and its backward, onto the preference objective. */
int tnn_preference_rewrite(const struct tnn_step * step, const struct tnn_cpu_state * cpu,
                           struct ggml_cgraph * graph, struct ggml_tensor * logits);
/* The same for a graph tnn_fuse_head_loss rewrote: per_token its fused node
 * [d + 1, n], ce its mean-loss node, dh its gradient node, dce the loss's
 * gradient. */
int tnn_preference_fuse(const struct tnn_step * step, struct ggml_cgraph * graph, struct ggml_tensor * per_token,
                        struct ggml_tensor * ce, struct ggml_tensor * dh, struct ggml_tensor * dce);

#endif
