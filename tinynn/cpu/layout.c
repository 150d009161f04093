/* What the variants of fgemm and head_loss share (layout.h): compiled
 * for any CPU, called by the variants, calling none of them. */
#include "layout.h"

#include <math.h>
#include <string.h>

/* ---- what the variants of fgemm and head_loss share ------------------------ */

void tnn_fgemm_pack_panel(struct tnn_fgemm_operand a, int64_t m0, int64_t rows, int64_t k0, int64_t depth,
                          float * panel) {
    if (rows < TNN_FGEMM_ROWS) {
        memset(panel, 0, (size_t) depth * TNN_FGEMM_ROWS * sizeof(float));
    }
    if (a.by_k) {
        for (int64_t kk = 0; kk < depth; ++kk) {
            memcpy(panel + kk * TNN_FGEMM_ROWS, a.data + (k0 + kk) * a.ld + m0, (size_t) rows * sizeof(float));
        }
        return;
    }
    for (int64_t r = 0; r < rows; ++r) {
        const float * row = a.data + (m0 + r) * a.ld + k0;
        for (int64_t kk = 0; kk < depth; ++kk) {
            panel[kk * TNN_FGEMM_ROWS + r] = row[kk];
        }
    }
}

/* y [rows, nc] = W x (vocab rows, d inner) or, transposed, W^T x (d rows,
 * vocab inner), x's nc columns inner-long, through the head's int8 products. */
static void head_product(const struct tnn_head_products * p, bool transposed, int64_t d, int64_t vocab,
                         const float * x, int64_t nc, float * y, void * scratch) {
    const struct tnn_qgemm_columns columns = { x, transposed ? vocab : d, NULL };
    if (transposed) {
        const struct tnn_qpanels wt = tnn_qpanels_packed(TNN_QPANEL_Q8_0, p->wt);
        p->qgemm(2, &wt, d, vocab, &columns, nc, y, d, scratch, 0, 1);
    } else {
        const struct tnn_qpanels w = tnn_qpanels_packed(p->w_format, p->w);
        p->qgemm(2, &w, vocab, d, &columns, nc, y, vocab, scratch, 0, 1);
    }
}

/* The longer of head_loss's two chunks (kernels.h). */
#define MAX_CHUNK (TNN_HEAD_LOSS_CHUNK_BF16 > TNN_HEAD_LOSS_CHUNK ? TNN_HEAD_LOSS_CHUNK_BF16 : TNN_HEAD_LOSS_CHUNK)

/* Up to a chunk of labelled tokens from t on (of t1), their h gathered into
 * h_chunk [d, chunk] and their indices into tokens; a masked token's out
 * column is zeros at once. Returns how many; *t moves past them. */
static int gather_chunk(int64_t * t, int64_t t1, int64_t chunk, int64_t d, int64_t vocab, const float * h,
                        int64_t h_stride, const int32_t * labels, float * out, float * h_chunk, int64_t * tokens) {
    const int64_t out_stride = d + 1;
    int nc = 0;
    for (; *t < t1 && nc < chunk; ++*t) {
        if (labels[*t] < 0 || labels[*t] >= vocab) {
            memset(out + *t * out_stride, 0, (size_t) out_stride * sizeof(float));
            continue;
        }
        memcpy(h_chunk + nc * d, h + *t * h_stride, (size_t) d * sizeof(float));
        tokens[nc++] = *t;
    }
    return nc;
}

/* The bfloat16 walk: the vocabulary a block of rows at a time, z [rows, nc]
 * = W_block h and e = exp(z - the block's max) per token, then part [d, nc]
 * = W_block^T e, so that the head's copy is read once a chunk and z is
 * never whole. Each token carries its largest logit m so far, the sum S of
 * exp(z - m) and dh = sum of W_v exp(z_v - m); a block with max b joins them
 * at the new max M = max(m, b): S' = S e^(m - M) + S_block e^(b - M), dh'
 * = dh e^(m - M) + part e^(b - M) (one of the two factors is 1). At the
 * end, loss = log S + m - z_label and dL/dh = (dh / S - W_label) / n:
 * softmax(z) - onehot(label) through W^T, the label's row subtracted exactly
 * rather than rounded with the rest. The blocks are the same for every
 * thread count, and each token's sums its own, so the bits are too. */
static void head_loss_blocks(tnn_exponentials_fn exponentials, const struct tnn_head_products * p, int64_t d,
                             int64_t vocab, const float * h, int64_t h_stride, const int32_t * labels, int64_t n,
                             int64_t t0, int64_t t1, float * out, void * scratch) {
    const struct tnn_head_loss_layout layout = tnn_head_loss_layout(d, vocab, true);
    float * z = (float *) ((char *) scratch + layout.z);
    float * h_chunk = (float *) ((char *) scratch + layout.h);
    float * dh = (float *) ((char *) scratch + layout.dh);
    float * part = (float *) ((char *) scratch + layout.part);
    struct tnn_head_loss_token * state = (struct tnn_head_loss_token *) ((char *) scratch + layout.tokens);
    const int64_t out_stride = d + 1, d_panels = (d + TNN_FGEMM_ROWS - 1) / TNN_FGEMM_ROWS;
    const float inv_n = 1.0f / (float) n;
    int64_t tokens[MAX_CHUNK];

    for (int64_t t = t0; t < t1;) {
        const int nc = gather_chunk(&t, t1, layout.chunk, d, vocab, h, h_stride, labels, out, h_chunk, tokens);
        if (nc == 0) {
            continue;
        }
        for (int c = 0; c < nc; ++c) {
            state[c] = (struct tnn_head_loss_token){ 0.0, -INFINITY, 0.0f, 0.0f, 0.0f };
        }
        memset(dh, 0, (size_t) d * nc * sizeof(float));
        for (int64_t v0 = 0; v0 < vocab; v0 += layout.rows) {
            const int64_t rows = vocab - v0 < layout.rows ? vocab - v0 : layout.rows;
            /* z [rows, nc] = W_block h: the block's rows of W, [rows][d] */
            const struct tnn_fgemm_operand w_rows = { NULL, d, false, p->w_bf16 + v0 * d };
            const struct tnn_fgemm_operand h_cols = { h_chunk, d, false, NULL };
            p->fgemm_bf16(&w_rows, rows, d, &h_cols, z, rows, 0, (rows + TNN_FGEMM_ROWS - 1) / TNN_FGEMM_ROWS, 0,
                          nc, false, scratch);
            for (int c = 0; c < nc; ++c) {
                struct tnn_head_loss_token * s = &state[c];
                float * zc = z + (int64_t) c * rows;
                const int64_t label = labels[tokens[c]];
                if (label >= v0 && label < v0 + rows) {
                    s->z_label = zc[label - v0];
                }
                double block_sum = 0.0;
                const float block_max = exponentials(zc, rows, zc, &block_sum);
                const float max = block_max > s->max ? block_max : s->max;
                s->old_scale = (float) exp((double) s->max - (double) max);   /* 0 at the first block */
                s->block_scale = (float) exp((double) block_max - (double) max);
                s->sum = s->sum * (double) s->old_scale + block_sum * (double) s->block_scale;
                s->max = max;
            }
            /* part [d, nc] = W_block^T e: W's block read by_k */
            const struct tnn_fgemm_operand w_cols = { NULL, d, true, p->w_bf16 + v0 * d };
            const struct tnn_fgemm_operand e_cols = { z, rows, false, NULL };
            p->fgemm_bf16(&w_cols, d, rows, &e_cols, part, d, 0, d_panels, 0, nc, false, scratch);
            for (int c = 0; c < nc; ++c) {
                const float old_scale = state[c].old_scale, block_scale = state[c].block_scale;
                float * dh_c = dh + (int64_t) c * d;
                const float * part_c = part + (int64_t) c * d;
                for (int64_t i = 0; i < d; ++i) {
                    dh_c[i] = dh_c[i] * old_scale + part_c[i] * block_scale;
                }
            }
        }
        for (int c = 0; c < nc; ++c) {
            const struct tnn_head_loss_token * s = &state[c];
            const int64_t label = labels[tokens[c]];
            const uint16_t * w_label = p->w_bf16 + label * d;
            const float inv_sum = (float) (1.0 / s->sum);
            float * o = out + tokens[c] * out_stride;
            const float * dh_c = dh + (int64_t) c * d;
            for (int64_t i = 0; i < d; ++i) {
                uint32_t bits = (uint32_t) w_label[i] << 16;
                float w;
                memcpy(&w, &bits, sizeof w);
                o[i] = (dh_c[i] * inv_sum - w) * inv_n;
            }
            o[d] = (float) (log(s->sum) - ((double) s->z_label - (double) s->max));
        }
    }
}

void tnn_head_loss_walk(const struct tnn_softmax_fns * fns, const struct tnn_head_products * products, int64_t d,
                        int64_t vocab, const float * h, int64_t h_stride, const int32_t * labels, int64_t n,
                        int64_t t0, int64_t t1, float * out, void * scratch) {
    if (products->w_bf16 != NULL) {
        head_loss_blocks(fns->exponentials, products, d, vocab, h, h_stride, labels, n, t0, t1, out, scratch);
        return;
    }
    const struct tnn_head_loss_layout layout = tnn_head_loss_layout(d, vocab, false);
    float * z = (float *) ((char *) scratch + layout.z);
    float * h_chunk = (float *) ((char *) scratch + layout.h);
    float * dh_chunk = (float *) ((char *) scratch + layout.dh);
    const int64_t out_stride = d + 1;
    const float inv_n = 1.0f / (float) n;
    int64_t tokens[MAX_CHUNK];

    for (int64_t t = t0; t < t1;) {
        const int nc = gather_chunk(&t, t1, layout.chunk, d, vocab, h, h_stride, labels, out, h_chunk, tokens);
        if (nc == 0) {
            continue;
        }
        /* z [vocab, nc] = W h; then each column its loss and gradient */
        head_product(products, false, d, vocab, h_chunk, nc, z, scratch);
        for (int c = 0; c < nc; ++c) {
            out[tokens[c] * out_stride + d] = fns->gradient(z + c * vocab, vocab, labels[tokens[c]], inv_n);
        }
        /* dL/dh [d, nc] = W^T dz */
        head_product(products, true, d, vocab, z, nc, dh_chunk, scratch);
        for (int c = 0; c < nc; ++c) {
            memcpy(out + tokens[c] * out_stride, dh_chunk + c * d, (size_t) d * sizeof(float));
        }
    }
}
