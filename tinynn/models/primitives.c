/* Primitives: the small ggml sub-graphs a llama block is made of (and the
 * check of RoPE's factors before they reach one). Each has a
 * backward pass in ggml, so everything built from them trains. */
#include "models/models.h"

#include <math.h>

struct ggml_tensor * tnn_rms_norm(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * weight,
                                  float eps) {
    /* [d, n] -> [d, n]; weight [d] broadcasts over n */
    return ggml_mul(ctx, ggml_rms_norm(ctx, x, eps), weight);
}

struct ggml_tensor * tnn_layer_norm(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * weight,
                                    struct ggml_tensor * bias, float eps) {
    /* [d, n] -> [d, n]; ggml_norm's backward is vendor/patches/0007 */
    return ggml_add(ctx, ggml_mul(ctx, ggml_norm(ctx, x, eps), weight), bias);
}

struct ggml_tensor * tnn_gelu(struct ggml_context * ctx, struct ggml_tensor * x) {
    /* Composed from ops with a float32 backward (tanh's is vendor/patches/0007):
     * ggml_gelu has no backward, and on the CPU it reads a float16 table. */
    const float sqrt_2_over_pi = 0.7978845608028654f;
    struct ggml_tensor * x3 = ggml_mul(ctx, ggml_sqr(ctx, x), x);
    struct ggml_tensor * inner = ggml_scale(ctx, ggml_add(ctx, x, ggml_scale(ctx, x3, 0.044715f)), sqrt_2_over_pi);
    struct ggml_tensor * half_x = ggml_scale(ctx, x, 0.5f);
    /* 0.5 x (1 + tanh(inner)) = 0.5 x + 0.5 x tanh(inner) */
    return ggml_add(ctx, half_x, ggml_mul(ctx, half_x, ggml_tanh(ctx, inner)));
}

struct ggml_tensor * tnn_rope(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * positions,
                              struct ggml_tensor * freq_factors, const struct tnn_rope_params * p) {
    /* n_dims = p->dim: ggml rotates the first dim dims and copies the rest,
     * forward and backward; its ROPE backward reads the factors and the
     * YaRN terms from the same op (src2, op params). */
    const int mode = p->neox ? GGML_ROPE_TYPE_NEOX : GGML_ROPE_TYPE_NORMAL;
    return ggml_rope_ext(ctx, x, positions, freq_factors, p->dim, mode, p->n_ctx_orig, p->base, p->freq_scale,
                         p->ext_factor, p->attn_factor, p->beta_fast, p->beta_slow);
}

struct ggml_tensor * tnn_attn_temperature(struct ggml_context * ctx, struct ggml_tensor * x,
                                          struct ggml_tensor * positions, float scale, int32_t period) {
    struct ggml_tensor * pos = ggml_cast(ctx, positions, GGML_TYPE_F32); /* [n] */
    /* floor((pos + 0.5) / period): pos / period for integer positions, where
     * pos * (1 / period) rounds below k at pos = k period for a period not a
     * power of two */
    struct ggml_tensor * steps = ggml_floor(
        ctx, ggml_scale_bias(ctx, pos, 1.0f / (float) period, 0.5f / (float) period));
    struct ggml_tensor * factor = ggml_scale_bias(ctx, ggml_log(ctx, ggml_scale_bias(ctx, steps, 1.0f, 1.0f)),
                                                  scale, 1.0f);
    return ggml_mul(ctx, x, ggml_reshape_3d(ctx, factor, 1, 1, factor->ne[0]));
}

int tnn_check_rope_freqs(const float * factors, int64_t n, const char * name, const char * where) {
    for (int64_t i = 0; i < n; ++i) {
        if (!(factors[i] > 0.0f) || !isfinite(factors[i])) {
            return tnn_fail(TNN_ERR_ARG, "%s: RoPE factor %lld of %s is %g, not a finite positive number", where,
                            (long long) i, name, factors[i]);
        }
    }
    return TNN_OK;
}

struct ggml_tensor * tnn_as_f32(struct ggml_context * ctx, struct ggml_tensor * w) {
    return w->type == GGML_TYPE_F32 ? w : ggml_cast(ctx, w, GGML_TYPE_F32);
}

struct ggml_tensor * tnn_softcap(struct ggml_context * ctx, struct ggml_tensor * x, float cap) {
    /* tanh's backward is vendor/patches/0007 */
    return ggml_scale(ctx, ggml_tanh(ctx, ggml_scale(ctx, x, 1.0f / cap)), cap);
}

struct ggml_tensor * tnn_swiglu(struct ggml_context * ctx, struct ggml_tensor * gate, struct ggml_tensor * up) {
    return ggml_swiglu_split(ctx, gate, up);
}

struct ggml_tensor * tnn_geglu(struct ggml_context * ctx, struct ggml_tensor * gate, struct ggml_tensor * up) {
    return ggml_mul(ctx, tnn_gelu(ctx, gate), up);
}

/* [head_dim, n_heads, t_seq*t_batch] -> [head_dim, t_seq, n_heads*t_batch]:
 * one (head, sequence) pair per matrix, heads fastest, so that a query head
 * h of sequence b sits at h + n_heads*b. */
static struct ggml_tensor * heads_to_batch(struct ggml_context * ctx, struct ggml_tensor * x, int32_t t_seq,
                                           int32_t t_batch) {
    const int64_t head_dim = x->ne[0], n_heads = x->ne[1];
    x = ggml_reshape_4d(ctx, x, head_dim, n_heads, t_seq, t_batch);
    x = ggml_cont(ctx, ggml_permute(ctx, x, 0, 2, 1, 3));          /* [hd, t_seq, n_heads, B] */
    return ggml_reshape_3d(ctx, x, head_dim, t_seq, n_heads * t_batch);
}

/* Softmax attention of q3 [hd, T, G*n] over k3 [hd, T, n] and vt [T, hd, n]
 * under mask [T, T] -> [hd, T, G*n]. Grouped-query attention by
 * broadcasting: mul_mat repeats each of the n key matrices over G
 * consecutive query matrices, so query head h reads kv head h / G, as
 * llama.cpp does. */
static struct ggml_tensor * attention_heads(struct ggml_context * ctx, struct ggml_tensor * q3,
                                            struct ggml_tensor * k3, struct ggml_tensor * vt,
                                            struct ggml_tensor * mask, struct ggml_tensor * sinks, float scale,
                                            float softcap) {
    struct ggml_tensor * scores = ggml_mul_mat(ctx, k3, q3);            /* [T_k, T_q, G*n] */
    if (softcap > 0.0f) {
        /* Gemma 2: the scaled scores capped before the mask and the softmax */
        scores = tnn_softcap(ctx, ggml_scale(ctx, scores, scale), softcap);
        scale = 1.0f;
    }
    /* causal: the mask adds -inf above the diagonal inside the softmax, so
     * no masked copy of the scores is kept for the backward */
    struct ggml_tensor * weights = ggml_soft_max_ext(ctx, scores, mask, scale, 0.0f);
    ggml_soft_max_add_sinks(weights, sinks);   /* one a query matrix, or NULL */
    return ggml_mul_mat(ctx, vt, weights);                              /* [hd, T_q, G*n] */
}

/* Slices [first, first + n) of x's third dimension. */
static struct ggml_tensor * slices(struct ggml_context * ctx, struct ggml_tensor * x, int64_t first, int64_t n) {
    return ggml_view_3d(ctx, x, x->ne[0], x->ne[1], n, x->nb[1], x->nb[2], (size_t) first * x->nb[2]);
}

/* The mask of sequence `row`: mask [T, T, 1, B] holds one a sequence
 * (packed rows), [T, T, 1, 1] one for all. */
static struct ggml_tensor * mask_of(struct ggml_context * ctx, struct ggml_tensor * mask, int64_t row) {
    if (mask == NULL || mask->ne[3] == 1) {
        return mask;
    }
    return ggml_view_2d(ctx, mask, mask->ne[0], mask->ne[1], mask->nb[1], (size_t) row * mask->nb[3]);
}

/* The sinks of query matrices [first, first + n), or NULL. */
static struct ggml_tensor * sinks_of(struct ggml_context * ctx, struct ggml_tensor * sinks, int64_t first,
                                     int64_t n) {
    return sinks == NULL ? NULL : ggml_view_1d(ctx, sinks, n, (size_t) first * sizeof(float));
}

/* A batch's scores past this (a core's L2 and some): a sequence at a time. */
#define BATCH_SCORES_BYTES (4.0 * 1024 * 1024)

bool tnn_attention_by_sequence(int64_t n_heads, int64_t t_seq, int64_t t_batch, int32_t split, bool mask_per_row) {
    /* one sequence's scores then stay in cache from the product through the
     * softmax to the next product (SmolLM2 at 256 tokens: 2.4 MB a sequence;
     * four sequences' 9.4 MB at once made batch 4 slower per token than
     * batch 1); up to TNN_ATTENTION_PIECES sequences, as the outputs are
     * concatenated one piece at a time */
    const double scores = (double) n_heads * (double) t_seq * (double) t_seq * (double) t_batch * sizeof(float);
    return mask_per_row || (split == TNN_ATTENTION_BY_CACHE && t_batch > 1 && t_batch <= TNN_ATTENTION_PIECES &&
                            scores > BATCH_SCORES_BYTES);
}

struct ggml_tensor * tnn_attention(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                   struct ggml_tensor * v, struct ggml_tensor * mask, struct ggml_tensor * sinks,
                                   int32_t t_seq, int32_t t_batch, float scale, float softcap, int32_t split) {
    const int64_t head_dim = q->ne[0], n_heads = q->ne[1], n_kv_heads = k->ne[1];
    if (sinks != NULL) {
        /* the softmax reads a sink for each query matrix, head h of sequence b at h + H b */
        sinks = ggml_reshape_1d(ctx,
                                ggml_repeat(ctx, sinks, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n_heads, t_batch)),
                                n_heads * t_batch);
    }

    struct ggml_tensor * q3 = heads_to_batch(ctx, q, t_seq, t_batch);   /* [hd, T, H*B] */
    struct ggml_tensor * k3 = heads_to_batch(ctx, k, t_seq, t_batch);   /* [hd, T, KV*B] */
    /* v transposed per head: [T, hd, KV*B], so that weights @ v is a mul_mat */
    struct ggml_tensor * v4 = ggml_reshape_4d(ctx, v, head_dim, n_kv_heads, t_seq, t_batch);
    struct ggml_tensor * vt = ggml_cont(ctx, ggml_permute(ctx, v4, 1, 2, 0, 3));  /* [T, hd, KV, B] */
    vt = ggml_reshape_3d(ctx, vt, t_seq, head_dim, n_kv_heads * t_batch);

    const bool mask_per_row = mask != NULL && mask->ne[3] > 1;
    const bool per_kv_head = split == TNN_ATTENTION_PER_KV_HEAD;
    const bool by_sequence = tnn_attention_by_sequence(n_heads, t_seq, t_batch, split, mask_per_row);
    struct ggml_tensor * out = NULL;
    if (!per_kv_head && !by_sequence) {
        out = attention_heads(ctx, q3, k3, vt, mask, sinks, scale, softcap);
    } else {
        /* in pieces, the outputs concatenated: a few kv heads of one
         * sequence, or a few whole sequences, and their G query heads at a
         * time. per_kv_head: with the blocks recomputed (graph/recompute.c)
         * one piece's [T, T, G] scores per kv head are held, not all H*B
         * heads'. Each sequence's own mask (packed rows): no piece holds
         * two. No sum crosses a kv head, so every value, and every
         * gradient, keeps its bytes. */
        const int64_t group = n_heads / n_kv_heads, slots = n_kv_heads * t_batch;
        const int64_t per_piece = per_kv_head ? (slots + TNN_ATTENTION_PIECES - 1) / TNN_ATTENTION_PIECES : slots;
        const int64_t heads = per_piece < n_kv_heads ? per_piece : n_kv_heads;   /* of a sequence */
        const int64_t rows = per_piece < n_kv_heads || by_sequence ? 1 : per_piece / n_kv_heads;
        for (int64_t b = 0; b < t_batch; b += rows) {
            const int64_t r = b + rows < t_batch ? rows : t_batch - b;
            for (int64_t h = 0; h < n_kv_heads; h += heads) {
                const int64_t first = b * n_kv_heads + h;       /* kv slot */
                const int64_t n = r > 1 ? r * n_kv_heads : (h + heads < n_kv_heads ? heads : n_kv_heads - h);
                struct ggml_tensor * part = attention_heads(
                    ctx, slices(ctx, q3, first * group, n * group), slices(ctx, k3, first, n),
                    slices(ctx, vt, first, n), mask_of(ctx, mask, b),
                    sinks_of(ctx, sinks, first * group, n * group), scale, softcap);
                out = out == NULL ? part : ggml_concat(ctx, out, part, 2);
            }
        }
    }
    out = ggml_reshape_4d(ctx, out, head_dim, t_seq, n_heads, t_batch);
    out = ggml_cont(ctx, ggml_permute(ctx, out, 0, 2, 1, 3));           /* [hd, H, T, B] */
    return ggml_reshape_2d(ctx, out, head_dim * n_heads, (int64_t) t_seq * t_batch);
}

struct ggml_tensor * tnn_attention_cached(struct ggml_context * ctx, struct ggml_tensor * q,
                                          struct ggml_tensor * k, struct ggml_tensor * v,
                                          const struct tnn_kv_step * kv, struct ggml_tensor * sinks, float scale,
                                          float softcap) {
    const int64_t head_dim = q->ne[0], n_heads = q->ne[1], n = q->ne[2];
    const int64_t n_kv_heads = k->ne[1];
    /* the new keys and values [hd, KV, n] -> [hd, n, KV], scattered into the
     * cache rows; reading the cache through set_rows' result orders the
     * write before the attention */
    struct ggml_tensor * k_all = ggml_set_rows(ctx, kv->k_cache, ggml_permute(ctx, k, 0, 2, 1, 3), kv->kv_rows);
    struct ggml_tensor * v_all = ggml_set_rows(ctx, kv->v_cache, ggml_permute(ctx, v, 0, 2, 1, 3), kv->kv_rows);
    /* the first n_kv positions of each head, read in place: [hd, n_kv, KV] */
    struct ggml_tensor * keys = ggml_view_3d(ctx, k_all, head_dim, kv->n_kv, n_kv_heads, k_all->nb[1],
                                             k_all->nb[2], 0);
    struct ggml_tensor * values = ggml_view_3d(ctx, v_all, head_dim, kv->n_kv, n_kv_heads, v_all->nb[1],
                                               v_all->nb[2], 0);
    struct ggml_tensor * q3 = ggml_permute(ctx, q, 0, 2, 1, 3);                /* [hd, n, H] */
    struct ggml_tensor * out;
    if (kv->flash) {
        /* one op: online softmax over the unmasked keys; query head h reads
         * kv head h / (H/KV); the result is already [hd, H, n] */
        out = ggml_flash_attn_ext(ctx, q3, keys, values, kv->kq_mask, scale, 0.0f, softcap);
        ggml_flash_attn_ext_add_sinks(out, sinks);
        return ggml_reshape_2d(ctx, out, head_dim * n_heads, n);
    }
    /* mul_mat broadcasts each kv head over H/KV consecutive query heads */
    struct ggml_tensor * scores = ggml_mul_mat(ctx, keys, q3);                 /* [n_kv, n, H] */
    if (softcap > 0.0f) {
        scores = tnn_softcap(ctx, ggml_scale(ctx, scores, scale), softcap);
        scale = 1.0f;
    }
    struct ggml_tensor * weights = ggml_soft_max_ext(ctx, scores, kv->kq_mask, scale, 0.0f);
    ggml_soft_max_add_sinks(weights, sinks);
    struct ggml_tensor * vt = ggml_cont(ctx, ggml_transpose(ctx, values));     /* [n_kv, hd, KV] */
    out = ggml_mul_mat(ctx, vt, weights);                                      /* [hd, n, H] */
    out = ggml_cont(ctx, ggml_permute(ctx, out, 0, 2, 1, 3));                  /* [hd, H, n] */
    return ggml_reshape_2d(ctx, out, head_dim * n_heads, n);
}

struct ggml_tensor * tnn_cross_entropy(struct ggml_context * ctx, struct ggml_tensor * logits,
                                       struct ggml_tensor * labels) {
    /* sum over the labelled tokens of -log_softmax(logits)[label], over n:
     * int32 labels need no vocab x n one-hot tensor (vendor/patches/0005) */
    return ggml_cross_entropy_loss(ctx, logits, labels);
}

/* t, or a contiguous copy of it: the custom nodes read their sources as
 * plain arrays. */
static struct ggml_tensor * contiguous(struct ggml_context * ctx, struct ggml_tensor * t) {
    return ggml_is_contiguous(t) ? t : ggml_cont(ctx, t);
}

/* The tokens' positions a recurrent node was given as its source i (I32
 * [T x B]: a token at position 0 starts its sample from zeros), or NULL. */
static const int32_t * positions_at(const struct ggml_tensor * node, int i) {
    return node->src[i] != NULL ? (const int32_t *) node->src[i]->data : NULL;
}

/* srcs[n] = positions where there are any: the count of sources. */
static int with_positions(struct ggml_tensor ** srcs, int n, struct ggml_tensor * positions) {
    if (positions != NULL) {
        srcs[n++] = positions;
    }
    return n;
}

/* A device backend's op for a recurrence in training (vendor patch 0018:
 * ggml_gated_delta_net_train, ggml_ssm_scan_train): the forward with grad
 * NULL, else the backward's flat gradients in the CPU node's layout. */
typedef struct ggml_tensor * (*device_recurrence)(struct ggml_context * ctx, struct ggml_tensor * a,
                                                  struct ggml_tensor * b, struct ggml_tensor * c,
                                                  struct ggml_tensor * d, struct ggml_tensor * e,
                                                  struct ggml_tensor * grad);

static device_recurrence device_op_of(const struct ggml_tensor * forward) {
    return forward->op == GGML_OP_GATED_DELTA_NET_TRAIN ? ggml_gated_delta_net_train : ggml_ssm_scan_train;
}

/* A recurrent op's forward node (the delta rule's, the scan's): five
 * sources made contiguous, then the positions if any; out shaped like the
 * first; backward its backward. On the CPU toy's custom node (forward its
 * kernel); on a device backend, which runs no custom node, device's op,
 * without the positions: packed rows are refused there (train.c), so each
 * row is one sample from a zero state. */
static struct ggml_tensor * recurrent_node(struct ggml_context * ctx, struct ggml_tensor * sources[5],
                                           struct ggml_tensor * positions, ggml_custom_op_t forward,
                                           void * userdata, ggml_custom_backward_t backward,
                                           device_recurrence device) {
    struct ggml_tensor * srcs[6];
    for (int i = 0; i < 5; ++i) {
        srcs[i] = contiguous(ctx, sources[i]);
    }
    if (!tnn_backend_uses_host_memory()) {
        struct ggml_tensor * out = device(ctx, srcs[0], srcs[1], srcs[2], srcs[3], srcs[4], NULL);
        ggml_custom_set_backward(out, backward);
        return out;
    }
    const int64_t * ne = srcs[0]->ne;
    struct ggml_tensor * out = ggml_custom_4d(ctx, GGML_TYPE_F32, ne[0], ne[1], ne[2], ne[3], srcs,
                                              with_positions(srcs, 5, positions), forward, GGML_N_TASKS_MAX,
                                              userdata);
    ggml_custom_set_backward(out, backward);
    return out;
}

/* The sources of a recurrent op's backward node into srcs: its forward's
 * five, the output's gradient (contiguous), the positions if any; their
 * count. */
static int recurrent_backward_sources(struct ggml_context * ctx, const struct ggml_tensor * forward,
                                      struct ggml_tensor * grad, struct ggml_tensor * srcs[7]) {
    for (int i = 0; i < 5; ++i) {
        srcs[i] = forward->src[i];
    }
    srcs[5] = contiguous(ctx, grad);
    return with_positions(srcs, 6, forward->src[5]);
}

/* A recurrent op's backward node: its forward's sources and the output's
 * gradient into srcs (recurrent_backward_sources), and a flat output whose
 * first floats are the gradients: toy's custom node (node, userdata) after
 * a custom forward, the device's op after its own. */
static struct ggml_tensor * recurrent_backward_node(struct ggml_context * ctx, const struct ggml_tensor * forward,
                                                    struct ggml_tensor * grad, struct ggml_tensor * srcs[7],
                                                    int64_t floats, ggml_custom_op_t node, void * userdata) {
    const int n_srcs = recurrent_backward_sources(ctx, forward, grad, srcs);
    if (forward->op != GGML_OP_CUSTOM) {
        return device_op_of(forward)(ctx, srcs[0], srcs[1], srcs[2], srcs[3], srcs[4], srcs[5]);
    }
    return ggml_custom_4d(ctx, GGML_TYPE_F32, floats, 1, 1, 1, srcs, n_srcs, node, GGML_N_TASKS_MAX, userdata);
}

/* ---- the gated delta rule: a custom node each way (cpu/delta_net.c), on a device patch 0018's op ---- */

/* The "recurrent" kernel's variant as the session chooses its kernels
 * (TNN_CPU_KERNELS, TNN_CPU_VARIANT: csrc's tnn_backend_cpu_kernels), for
 * the nodes' userdata; NULL, the portable variant, where none is chosen.
 * Every variant gives the same bits, so the choice is speed alone. */
static void * delta_net_rows(void) {
    struct tnn_cpu_kernels kernels;
    return tnn_backend_cpu_kernels(&kernels) == TNN_OK ? (void *) kernels.recurrent : NULL;
}

/* The kernels' arguments from a node's sources q, k, v, g, beta. */
static struct tnn_delta_net_args delta_net_args(const struct ggml_tensor * node) {
    const struct ggml_tensor * q = node->src[0];
    return (struct tnn_delta_net_args){
        .n = q->ne[0],
        .heads = q->ne[1],
        .t_seq = q->ne[2],
        .n_seqs = q->ne[3],
        .q = q->data,
        .k = node->src[1]->data,
        .v = node->src[2]->data,
        .g = node->src[3]->data,
        .beta = node->src[4]->data,
    };
}

/* userdata: the session's "recurrent" kernel (delta_net_rows). */
static void delta_net_forward_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    struct tnn_delta_net_args args = delta_net_args(dst);
    args.rows = userdata;
    args.positions = positions_at(dst, 5);
    args.out = dst->data;
    tnn_delta_net_forward(&args, ith, nth);
}

/* dst, flat: dq, dk, dv (q's layout each), then dg and dbeta (g's); srcs:
 * the forward's five, the output's gradient, the positions if any. */
static void delta_net_backward_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    struct tnn_delta_net_args args = delta_net_args(dst);
    args.rows = userdata;
    args.positions = positions_at(dst, 6);
    const int64_t values = ggml_nelements(dst->src[0]), gates = ggml_nelements(dst->src[3]);
    float * out = dst->data;
    args.dout = dst->src[5]->data;
    args.dq = out;
    args.dk = out + values;
    args.dv = out + 2 * values;
    args.dg = out + 3 * values;
    args.dbeta = out + 3 * values + gates;
    tnn_delta_net_backward(&args, ith, nth);
}

struct ggml_tensor * tnn_view_like(struct ggml_context * ctx, struct ggml_tensor * all,
                                   const struct ggml_tensor * like, int64_t offset) {
    const size_t f = sizeof(float);
    const int64_t * ne = like->ne;
    return ggml_view_4d(ctx, all, ne[0], ne[1], ne[2], ne[3], ne[0] * f, ne[0] * ne[1] * f,
                        ne[0] * ne[1] * ne[2] * f, (size_t) offset * f);
}

static void delta_net_backward(struct ggml_context * ctx, struct ggml_tensor * forward, struct ggml_tensor * grad,
                               struct ggml_tensor ** src_grads) {
    struct ggml_tensor * srcs[7];
    const int64_t values = ggml_nelements(forward->src[0]), gates = ggml_nelements(forward->src[3]);
    struct ggml_tensor * all = recurrent_backward_node(ctx, forward, grad, srcs, 3 * values + 2 * gates,
                                                       delta_net_backward_node, delta_net_rows());
    for (int i = 0; i < 3; ++i) {
        src_grads[i] = tnn_view_like(ctx, all, srcs[i], i * values);
    }
    src_grads[3] = tnn_view_like(ctx, all, srcs[3], 3 * values);
    src_grads[4] = tnn_view_like(ctx, all, srcs[4], 3 * values + gates);
}

struct ggml_tensor * tnn_gated_delta_net(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                         struct ggml_tensor * v, struct ggml_tensor * g, struct ggml_tensor * beta,
                                         struct ggml_tensor * positions) {
    struct ggml_tensor * sources[5] = { q, k, v, g, beta };
    return recurrent_node(ctx, sources, positions, delta_net_forward_node, delta_net_rows(), delta_net_backward,
                          ggml_gated_delta_net_train);
}

/* ---- the causal convolution: one custom node each way (cpu/causal_conv.c) ---- */

/* The kernel's arguments from a node's sources x, w. */
static struct tnn_causal_conv_args causal_conv_args(const struct ggml_tensor * node) {
    const struct ggml_tensor * x = node->src[0];
    return (struct tnn_causal_conv_args){
        .channels = x->ne[0],
        .taps = node->src[1]->ne[0],
        .t_seq = x->ne[1],
        .n_seqs = x->ne[2],
        .x = x->data,
        .w = node->src[1]->data,
    };
}

static void causal_conv_forward_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    (void) userdata;
    struct tnn_causal_conv_args args = causal_conv_args(dst);
    args.positions = positions_at(dst, 2);
    args.y = dst->data;
    tnn_causal_conv_forward(&args, ith, nth);
}

/* dst: dx (x's layout) from srcs w, y's gradient and the positions if any. */
static void causal_conv_dx_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct ggml_tensor * w = dst->src[0];
    const struct tnn_causal_conv_args args = {
        .channels = dst->ne[0],
        .taps = w->ne[0],
        .t_seq = dst->ne[1],
        .n_seqs = dst->ne[2],
        .w = w->data,
        .dy = dst->src[1]->data,
        .dx = dst->data,
        .positions = positions_at(dst, 2),
    };
    (void) userdata;
    tnn_causal_conv_backward(&args, ith, nth);
}

/* dst: dw (w's layout) from srcs x, y's gradient and the positions if any. */
static void causal_conv_dw_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct ggml_tensor * x = dst->src[0];
    const struct tnn_causal_conv_args args = {
        .channels = x->ne[0],
        .taps = dst->ne[0],
        .t_seq = x->ne[1],
        .n_seqs = x->ne[2],
        .x = x->data,
        .dy = dst->src[1]->data,
        .dw = dst->data,
        .positions = positions_at(dst, 2),
    };
    (void) userdata;
    tnn_causal_conv_backward(&args, ith, nth);
}

/* dx and dw as two nodes: ggml computes only the gradients it needs, so
 * LoRA (a frozen kernel) runs no dw node and keeps no x for one. */
static void causal_conv_backward(struct ggml_context * ctx, struct ggml_tensor * forward,
                                 struct ggml_tensor * grad, struct ggml_tensor ** src_grads) {
    struct ggml_tensor *x = forward->src[0], *w = forward->src[1], *dy = contiguous(ctx, grad);
    struct ggml_tensor * dx_srcs[3] = { w, dy };
    struct ggml_tensor * dw_srcs[3] = { x, dy };
    src_grads[0] = ggml_custom_4d(ctx, GGML_TYPE_F32, x->ne[0], x->ne[1], x->ne[2], 1, dx_srcs,
                                  with_positions(dx_srcs, 2, forward->src[2]), causal_conv_dx_node,
                                  GGML_N_TASKS_MAX, NULL);
    src_grads[1] = ggml_custom_4d(ctx, GGML_TYPE_F32, w->ne[0], w->ne[1], 1, 1, dw_srcs,
                                  with_positions(dw_srcs, 2, forward->src[2]), causal_conv_dw_node,
                                  GGML_N_TASKS_MAX, NULL);
}

struct ggml_tensor * tnn_causal_conv(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * w,
                                     struct ggml_tensor * positions) {
    struct ggml_tensor * srcs[3] = { contiguous(ctx, x), contiguous(ctx, w) };
    struct ggml_tensor * out = ggml_custom_4d(ctx, GGML_TYPE_F32, x->ne[0], x->ne[1], x->ne[2], 1, srcs,
                                              with_positions(srcs, 2, positions), causal_conv_forward_node,
                                              GGML_N_TASKS_MAX, NULL);
    ggml_custom_set_backward(out, causal_conv_backward);
    return out;
}

/* ---- Mamba-2's selective scan: a custom node each way (cpu/ssm_scan.c), on a device patch 0018's op ---- */

/* The kernels' arguments from a node's sources x, dt, a, b, c. */
static struct tnn_ssm_scan_args ssm_scan_args(const struct ggml_tensor * node) {
    const struct ggml_tensor *x = node->src[0], *b = node->src[3];
    return (struct tnn_ssm_scan_args){
        .head_dim = x->ne[0],
        .heads = x->ne[1],
        .t_seq = x->ne[2],
        .n_seqs = x->ne[3],
        .state = b->ne[0],
        .groups = b->ne[1],
        .x = x->data,
        .dt = node->src[1]->data,
        .a = node->src[2]->data,
        .b = b->data,
        .c = node->src[4]->data,
    };
}

static void ssm_scan_forward_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    (void) userdata;
    struct tnn_ssm_scan_args args = ssm_scan_args(dst);
    args.positions = positions_at(dst, 5);
    args.y = dst->data;
    tnn_ssm_scan_forward(&args, ith, nth);
}

/* The backward node's output, flat: dx, ddt, then each sequence's share of
 * dA [heads, n_seqs] and each head's of dB and dC [heads / groups, state,
 * groups, T, B]. */
struct ssm_scan_grads {
    int64_t dx, ddt, da, db, dc, total;   /* offsets, in floats */
};

static struct ssm_scan_grads ssm_scan_grads(const struct ggml_tensor * x, const struct ggml_tensor * b) {
    const int64_t tokens = x->ne[2] * x->ne[3], heads = x->ne[1];
    const int64_t shares = heads * b->ne[0] * tokens;
    struct ssm_scan_grads g = { .dx = 0, .ddt = ggml_nelements(x) };
    g.da = g.ddt + heads * tokens;
    g.db = g.da + heads * x->ne[3];
    g.dc = g.db + shares;
    g.total = g.dc + shares;
    return g;
}

static void ssm_scan_backward_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    (void) userdata;
    struct tnn_ssm_scan_args args = ssm_scan_args(dst);
    args.positions = positions_at(dst, 6);
    const struct ssm_scan_grads at = ssm_scan_grads(dst->src[0], dst->src[3]);
    float * out = dst->data;
    args.dy = dst->src[5]->data;
    args.dx = out + at.dx;
    args.ddt = out + at.ddt;
    args.da = out + at.da;
    args.db = out + at.db;
    args.dc = out + at.dc;
    tnn_ssm_scan_backward(&args, ith, nth);
}

/* The sum over the group's heads of each head's share of dB (or dC). */
static struct ggml_tensor * sum_head_shares(struct ggml_context * ctx, struct ggml_tensor * all,
                                            const struct ggml_tensor * like, int64_t heads, int64_t offset) {
    const int64_t share = heads / like->ne[1];
    struct ggml_tensor * shares = ggml_view_2d(ctx, all, share, ggml_nelements(like),
                                               (size_t) share * sizeof(float), (size_t) offset * sizeof(float));
    return ggml_reshape_4d(ctx, ggml_sum_rows(ctx, shares), like->ne[0], like->ne[1], like->ne[2], like->ne[3]);
}

static void ssm_scan_backward(struct ggml_context * ctx, struct ggml_tensor * forward, struct ggml_tensor * grad,
                              struct ggml_tensor ** src_grads) {
    struct ggml_tensor * srcs[7];
    const struct ssm_scan_grads at = ssm_scan_grads(forward->src[0], forward->src[3]);
    const int64_t heads = forward->src[0]->ne[1], n_seqs = forward->src[0]->ne[3];
    struct ggml_tensor * all = recurrent_backward_node(ctx, forward, grad, srcs, at.total, ssm_scan_backward_node,
                                                       NULL);
    src_grads[0] = tnn_view_like(ctx, all, srcs[0], at.dx);
    src_grads[1] = tnn_view_like(ctx, all, srcs[1], at.ddt);
    /* dA: the sequences' shares summed, [heads, n_seqs] -> [n_seqs, heads] -> [1, heads] */
    struct ggml_tensor * da = ggml_view_2d(ctx, all, heads, n_seqs, (size_t) heads * sizeof(float),
                                           (size_t) at.da * sizeof(float));
    const int64_t * a_ne = srcs[2]->ne;
    src_grads[2] = ggml_reshape_4d(ctx, ggml_sum_rows(ctx, ggml_cont(ctx, ggml_transpose(ctx, da))), a_ne[0],
                                   a_ne[1], a_ne[2], a_ne[3]);
    src_grads[3] = sum_head_shares(ctx, all, srcs[3], heads, at.db);
    src_grads[4] = sum_head_shares(ctx, all, srcs[4], heads, at.dc);
}

struct ggml_tensor * tnn_ssm_scan(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * dt,
                                  struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                  struct ggml_tensor * positions) {
    struct ggml_tensor * sources[5] = { x, dt, a, b, c };
    return recurrent_node(ctx, sources, positions, ssm_scan_forward_node, NULL, ssm_scan_backward,
                          ggml_ssm_scan_train);
}
