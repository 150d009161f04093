/* What the variants of fgemm and head_loss share (layout.h): compiled
 * for any CPU, called by the variants, calling none of them. */
#include "layout.h"

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
 * vocab inner), x's nc columns inner-long, through the head's products. */
static void head_product(const struct tnn_head_products * p, bool transposed, int64_t d, int64_t vocab,
                         const float * x, int64_t nc, float * y, void * scratch) {
    const int64_t rows = transposed ? d : vocab, inner = transposed ? vocab : d;
    if (p->w_bf16 != NULL) {
        /* W^T [d, vocab] is W's copy read by_k: row-major [vocab][d] */
        const struct tnn_fgemm_operand a = { NULL, d, transposed, p->w_bf16 };
        const struct tnn_fgemm_operand b = { x, inner, false, NULL };
        p->fgemm_bf16(&a, rows, inner, &b, y, rows, 0, (rows + TNN_FGEMM_ROWS - 1) / TNN_FGEMM_ROWS, 0, nc,
                      scratch);
        return;
    }
    if (transposed) {
        p->qgemm(TNN_QPANEL_Q8_0, 2, p->wt, d, vocab, x, vocab, nc, y, d, scratch, 0, 1);
    } else {
        p->qgemm(p->w_format, 2, p->w, vocab, d, x, d, nc, y, vocab, scratch, 0, 1);
    }
}

/* The longer of head_loss's two chunks (kernels.h). */
#define MAX_CHUNK (TNN_HEAD_LOSS_CHUNK_BF16 > TNN_HEAD_LOSS_CHUNK ? TNN_HEAD_LOSS_CHUNK_BF16 : TNN_HEAD_LOSS_CHUNK)

void tnn_head_loss_walk(tnn_softmax_gradient_fn softmax_gradient, const struct tnn_head_products * products,
                        int64_t d, int64_t vocab, const float * h, int64_t h_stride, const int32_t * labels,
                        int64_t n, int64_t t0, int64_t t1, float * out, void * scratch) {
    const struct tnn_head_loss_layout layout = tnn_head_loss_layout(d, vocab, products->w_bf16 != NULL);
    float * z = (float *) ((char *) scratch + layout.z);
    float * h_chunk = (float *) ((char *) scratch + layout.h);
    float * dh_chunk = (float *) ((char *) scratch + layout.dh);
    const int64_t out_stride = d + 1;
    const float inv_n = 1.0f / (float) n;
    int64_t tokens[MAX_CHUNK];

    for (int64_t t = t0; t < t1;) {
        /* gather up to a chunk of labelled tokens; a masked one is done at once */
        int nc = 0;
        for (; t < t1 && nc < layout.chunk; ++t) {
            if (labels[t] < 0 || labels[t] >= vocab) {
                memset(out + t * out_stride, 0, (size_t) out_stride * sizeof(float));
                continue;
            }
            memcpy(h_chunk + nc * d, h + t * h_stride, (size_t) d * sizeof(float));
            tokens[nc++] = t;
        }
        if (nc == 0) {
            continue;
        }
        /* z [vocab, nc] = W h; then each column its loss and gradient */
        head_product(products, false, d, vocab, h_chunk, nc, z, scratch);
        for (int c = 0; c < nc; ++c) {
            out[tokens[c] * out_stride + d] = softmax_gradient(z + c * vocab, vocab, labels[tokens[c]], inv_n);
        }
        /* dL/dh [d, nc] = W^T dz */
        head_product(products, true, d, vocab, z, nc, dh_chunk, scratch);
        for (int c = 0; c < nc; ++c) {
            memcpy(out + tokens[c] * out_stride, dh_chunk + c * d, (size_t) d * sizeof(float));
        }
    }
}
