/* The frozen output head and the cross-entropy of a training step, a few
 * tokens at a time.
 *
 * With the head W [d, vocab] frozen (LoRA), the loss needs the logits
 * z = W h only through their log-softmax, and the backward needs only
 *     dL/dh = W^T (softmax(z) - onehot(label)) / n.
 * ggml's graph keeps z [vocab, n] from the forward until the backward and
 * writes its gradient, as large again: 2 x 201 MB at batch 4 x 256 tokens of
 * SmolLM2, a fifth of a LoRA step's memory. tnn_fuse_head_loss rewrites the
 * training graph so that one node computes, for CHUNK labelled tokens at a
 * time per thread, z (packed product, qgemm.h), each token's loss and its
 * dL/dh, into [d + 1, n]: column t is dL/dh_t, then the loss of token t.
 * Masked tokens (label -1) cost nothing: loss 0, gradient 0. Then
 *     ce    = sum of the n losses / n              (was cross_entropy_loss)
 *     dL/dh = that node's columns x dL/dce         (was out_prod(W, dz^T))
 * and the nodes that held z's gradient become one-float no-ops.
 *
 * The products are those of the packed head (two int8 levels both ways, as
 * tnn_use_fast_copies runs them), so only the softmax's summation order
 * differs from the unfused graph. Runs on the CPU backend when the head has
 * packed copies; the forward graph (tnn_compute_forward) keeps the logits. */
#include "internal.h"
#include "qgemm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Labelled tokens per product: a multiple of qgemm's 12-column tile, and
 * z for them (vocab x CHUNK floats, 9.4 MB for SmolLM2) is a few MB. */
#define CHUNK 48

/* The head pair (frozen.c puts it last), when both of its products are packed. */
static const struct tnn_frozen_pair * packed_head(const tnn_session * s) {
    if (s->base.pairs == NULL || s->base.n_pairs < 1) {
        return NULL;
    }
    const struct tnn_frozen_pair * p = &s->base.pairs[s->base.n_pairs - 1];
    return p->w_panels != NULL && p->wt_panels ? p : NULL;
}

bool tnn_head_loss_fusable(const tnn_session * s) {
    return packed_head(s) != NULL && getenv("TNN_NO_HEAD_LOSS") == NULL;
}

static size_t align64(size_t bytes) {
    return (bytes + 63) / 64 * 64;
}

/* One thread's scratch: quantized columns for either product, then z
 * [vocab, CHUNK], the gathered h [d, CHUNK] and their dL/dh [d, CHUNK]. */
static size_t scratch_bytes(int64_t d, int64_t vocab) {
    const size_t q_d = tnn_qgemm_scratch_bytes(d, CHUNK), q_v = tnn_qgemm_scratch_bytes(vocab, CHUNK);
    return align64(q_d > q_v ? q_d : q_v) + align64((size_t) vocab * CHUNK * sizeof(float)) +
           2 * align64((size_t) d * CHUNK * sizeof(float));
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f")))

/* e^x for 16 floats: 2^k e^r with k = round(x / ln 2), r = x - k ln 2 in
 * [-0.35, 0.35] (ln 2 in two parts), e^r by its Taylor series to r^7 / 7!
 * (under 2e-8 relative), 2^k by scalef, which underflows to 0 for x far
 * below 0 (the softmax's z - max <= 0). */
AVX512 static inline __m512 exp16(__m512 x) {
    const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693145752f), x);
    r = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.42860677e-6f), r);
    __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, k);
}

/* Lanes [i, i + 16) of a vocab-long row, fewer at its end. */
static inline __mmask16 lanes(int64_t i, int64_t vocab) {
    return vocab - i >= 16 ? (__mmask16) 0xffff : (__mmask16) ((1u << (vocab - i)) - 1);
}

/* -log softmax(z)[label] for one token's logits z [vocab]; with e not NULL
 * (it may be z itself) also e = exp(z - max z) and *sum = their sum. The
 * sum goes through doubles every 16 vectors. The forward graph's loss and
 * the fused training graph's both come from here, so they are equal. */
AVX512 static float token_loss(const float * z, int64_t vocab, int32_t label, float * e, double * sum_out) {
    __m512 mx = _mm512_set1_ps(-INFINITY);
    for (int64_t i = 0; i < vocab; i += 16) {
        mx = _mm512_mask_max_ps(mx, lanes(i, vocab), mx, _mm512_maskz_loadu_ps(lanes(i, vocab), z + i));
    }
    const float max = _mm512_reduce_max_ps(mx);
    const float z_label = z[label];
    const __m512 vmax = _mm512_set1_ps(max);
    double sum = 0.0;
    for (int64_t i0 = 0; i0 < vocab; i0 += 256) {
        __m512 part = _mm512_setzero_ps();
        for (int64_t i = i0; i < i0 + 256 && i < vocab; i += 16) {
            const __mmask16 m = lanes(i, vocab);
            const __m512 ei = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, z + i), vmax));
            if (e != NULL) {
                _mm512_mask_storeu_ps(e + i, m, ei);
            }
            part = _mm512_add_ps(part, _mm512_maskz_mov_ps(m, ei));
        }
        sum += (double) _mm512_reduce_add_ps(part);
    }
    if (sum_out != NULL) {
        *sum_out = sum;
    }
    return (float) (log(sum) - ((double) z_label - (double) max));
}

/* One token: z (its logits) becomes the gradient of the mean loss over n
 * tokens, (softmax(z) - onehot(label)) / n; returns its loss. */
AVX512 static float softmax_gradient(float * z, int64_t vocab, int32_t label, float inv_n) {
    double sum = 0.0;
    const float loss = token_loss(z, vocab, label, z, &sum);
    const __m512 scale = _mm512_set1_ps((float) (1.0 / sum) * inv_n);
    for (int64_t i = 0; i < vocab; i += 16) {
        const __mmask16 m = lanes(i, vocab);
        _mm512_mask_storeu_ps(z + i, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, z + i), scale));
    }
    z[label] -= inv_n;
    return loss;
}

#else  /* packed_head is never set without qgemm's kernels */

static float token_loss(const float * z, int64_t vocab, int32_t label, float * e, double * sum_out) {
    (void) z; (void) vocab; (void) label; (void) e; (void) sum_out;
    return 0.0f;
}

static float softmax_gradient(float * z, int64_t vocab, int32_t label, float inv_n) {
    (void) z; (void) vocab; (void) label; (void) inv_n;
    return 0.0f;
}

#endif

/* dst [d + 1, n]: per token, dL/dh and the loss (see the top of the file).
 * srcs: W panels [d, vocab], h [d, n], labels int32 [n], W^T panels
 * [vocab, d]. Thread ith takes tokens [n ith / nth, n (ith + 1) / nth). */
static void head_loss_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    char * scratch = tnn_thread_scratch(userdata, ith, &nth);
    const struct ggml_tensor * w = dst->src[0], * h = dst->src[1], * labels = dst->src[2], * wt = dst->src[3];
    if (scratch == NULL) {
        return;
    }
    const int64_t d = h->ne[0], n = h->ne[1], vocab = w->ne[1];
    const int64_t h_stride = (int64_t) (h->nb[1] / sizeof(float)), out_stride = d + 1;
    const size_t q_d = tnn_qgemm_scratch_bytes(d, CHUNK), q_v = tnn_qgemm_scratch_bytes(vocab, CHUNK);
    char * quantized = scratch;
    float * z = (float *) (scratch + align64(q_d > q_v ? q_d : q_v));
    float * h_chunk = (float *) ((char *) z + align64((size_t) vocab * CHUNK * sizeof(float)));
    float * dh_chunk = (float *) ((char *) h_chunk + align64((size_t) d * CHUNK * sizeof(float)));
    const int32_t * ids = labels->data;
    const float inv_n = 1.0f / (float) n;
    const enum tnn_qpanel_format w_format = w->type == GGML_TYPE_Q4_1 ? TNN_QPANEL_Q4_1 : TNN_QPANEL_Q8_0;
    int64_t tokens[CHUNK];

    const int64_t t1 = n * (ith + 1) / nth;
    for (int64_t t = n * ith / nth; t < t1;) {
        /* gather up to CHUNK labelled tokens; a masked one is done at once */
        int nc = 0;
        for (; t < t1 && nc < CHUNK; ++t) {
            float * out = (float *) dst->data + t * out_stride;
            if (ids[t] < 0 || ids[t] >= vocab) {
                memset(out, 0, (size_t) out_stride * sizeof(float));
                continue;
            }
            memcpy(h_chunk + nc * d, (const float *) h->data + t * h_stride, (size_t) d * sizeof(float));
            tokens[nc++] = t;
        }
        if (nc == 0) {
            continue;
        }
        /* z [vocab, nc] = W h; then each column its loss and gradient */
        tnn_qgemm(w_format, 2, w->data, vocab, d, h_chunk, d, nc, z, vocab, quantized, 0, 1);
        for (int c = 0; c < nc; ++c) {
            float * out = (float *) dst->data + tokens[c] * out_stride;
            out[d] = softmax_gradient(z + c * vocab, vocab, ids[tokens[c]], inv_n);
        }
        /* dL/dh [d, nc] = W^T dz */
        tnn_qgemm(TNN_QPANEL_Q8_0, 2, wt->data, d, vocab, z, vocab, nc, dh_chunk, d, quantized, 0, 1);
        for (int c = 0; c < nc; ++c) {
            memcpy((float *) dst->data + tokens[c] * out_stride, dh_chunk + c * d, (size_t) d * sizeof(float));
        }
    }
}

/* dst [1] = the mean over n tokens of their losses, the last row of src
 * [m, n]; summed in order by one thread, so the same bytes every run. */
static void mean_loss_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    (void) nth; (void) userdata;
    if (ith != 0) {
        return;
    }
    const struct ggml_tensor * per_token = dst->src[0];
    const int64_t m = per_token->ne[0], n = per_token->ne[1];
    double sum = 0.0;
    for (int64_t t = 0; t < n; ++t) {
        sum += ((const float *) per_token->data)[t * m + m - 1];
    }
    *(float *) dst->data = (float) (sum / (double) n);
}

/* dst [1, n] = each token's loss from logits src0 [vocab, n] and int32
 * labels src1 (0 for a masked token): the forward graph's side of the
 * fusion, whose logits are kept. */
static void logits_loss_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    (void) userdata;
    const struct ggml_tensor * logits = dst->src[0];
    const int32_t * ids = dst->src[1]->data;
    const int64_t vocab = logits->ne[0], n = logits->ne[1];
    for (int64_t t = n * ith / nth; t < n * (ith + 1) / nth; ++t) {
        const float * z = (const float *) ((const char *) logits->data + t * logits->nb[1]);
        ((float *) dst->data)[t] = ids[t] < 0 || ids[t] >= vocab ? 0.0f : token_loss(z, vocab, ids[t], NULL, NULL);
    }
}

struct ggml_tensor * tnn_head_loss_of_logits(struct ggml_context * ctx, struct ggml_tensor * logits,
                                             struct ggml_tensor * labels) {
    struct ggml_tensor * args[2] = { logits, labels };
    struct ggml_tensor * per_token = ggml_custom_4d(ctx, GGML_TYPE_F32, 1, logits->ne[1], 1, 1, args, 2,
                                                    logits_loss_node, GGML_N_TASKS_MAX, NULL);
    return ggml_custom_4d(ctx, GGML_TYPE_F32, 1, 1, 1, 1, &per_token, 1, mean_loss_node, 1, NULL);
}

/* dst [d, n] = rows [0, d) of src0 [d + 1, n] times the scalar src1 (dL/dce). */
static void scale_gradient_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    (void) userdata;
    const struct ggml_tensor * per_token = dst->src[0];
    const float g = *(const float *) dst->src[1]->data;
    const int64_t d = dst->ne[0], n = dst->ne[1];
    for (int64_t t = n * ith / nth; t < n * (ith + 1) / nth; ++t) {
        const float * in = (const float *) per_token->data + t * (d + 1);
        float * out = (float *) ((char *) dst->data + t * dst->nb[1]);
        for (int64_t i = 0; i < d; ++i) {
            out[i] = in[i] * g;
        }
    }
}

/* The node of graph that reads src as source slot with op, or NULL. */
static struct ggml_tensor * reader(struct ggml_cgraph * graph, const struct ggml_tensor * src, int slot,
                                   enum ggml_op op) {
    for (int i = 0; i < ggml_graph_n_nodes(graph); ++i) {
        struct ggml_tensor * node = ggml_graph_node(graph, i);
        if (node->op == op && node->src[slot] == src) {
            return node;
        }
    }
    return NULL;
}

int tnn_fuse_head_loss(tnn_session * s, struct ggml_cgraph * graph, struct ggml_tensor * logits) {
    const struct tnn_frozen_pair * head = packed_head(s);
    struct ggml_tensor * ce = reader(graph, logits, 0, GGML_OP_CROSS_ENTROPY_LOSS);
    struct ggml_tensor * dz = reader(graph, logits, 1, GGML_OP_CROSS_ENTROPY_LOSS_BACK);
    struct ggml_tensor * dz_t = dz ? reader(graph, dz, 0, GGML_OP_TRANSPOSE) : NULL;
    struct ggml_tensor * dh = dz_t ? reader(graph, dz_t, 1, GGML_OP_OUT_PROD) : NULL;
    if (head == NULL || logits->op != GGML_OP_MUL_MAT || logits->src[0] != head->w || ce == NULL ||
        dh == NULL || dh->src[0] != head->w || ce->src[1]->type != GGML_TYPE_I32 ||
        (logits->flags & GGML_TENSOR_FLAG_OUTPUT)) {
        return tnn_fail(TNN_ERR_STATE, "internal: the training graph's head and loss are not as "
                        "tnn_fuse_head_loss expects");
    }
    struct ggml_tensor * h = logits->src[1], * labels = ce->src[1], * dce = dz->src[0];
    const int64_t d = h->ne[0], n = h->ne[1];
    if (h->type != GGML_TYPE_F32 || h->nb[0] != sizeof(float) || h->ne[2] != 1 || h->ne[3] != 1 ||
        dce->type != GGML_TYPE_F32) {
        return tnn_fail(TNN_ERR_STATE, "internal: the head's input is not an F32 matrix");
    }
    struct ggml_tensor * per_token = logits;   /* the node that held z now holds [d + 1, n] */
    struct ggml_tensor * head_srcs[4] = { head->w_panels, h, labels, head->wt };
    tnn_become_custom(s->train.ctx_graph, per_token, head_loss_node, &s->cpu_scratch, head_srcs, 4);
    tnn_reshape_node(per_token, d + 1, n);
    struct ggml_tensor * mean_srcs[1] = { per_token };
    tnn_become_custom(s->train.ctx_graph, ce, mean_loss_node, NULL, mean_srcs, 1);
    struct ggml_tensor * scale_srcs[2] = { per_token, dce };
    tnn_become_custom(s->train.ctx_graph, dh, scale_gradient_node, NULL, scale_srcs, 2);
    /* z's gradient and its transpose: read by nothing now */
    tnn_become_noop(dz);
    dz_t->src[0] = dz;
    tnn_reshape_node(dz_t, 1, 1);
    return tnn_grow_scratch(s, scratch_bytes(d, head->w->ne[1]));
}
