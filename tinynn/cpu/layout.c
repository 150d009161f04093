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

void tnn_head_loss_walk(tnn_softmax_gradient_fn softmax_gradient, tnn_qgemm_fn qgemm, int w_format, const void * w,
                        const void * wt, int64_t d, int64_t vocab, const float * h, int64_t h_stride,
                        const int32_t * labels, int64_t n, int64_t t0, int64_t t1, float * out, void * scratch) {
    const struct tnn_head_loss_layout layout = tnn_head_loss_layout(d, vocab);
    char * quantized = scratch;
    float * z = (float *) ((char *) scratch + layout.z);
    float * h_chunk = (float *) ((char *) scratch + layout.h);
    float * dh_chunk = (float *) ((char *) scratch + layout.dh);
    const int64_t out_stride = d + 1;
    const float inv_n = 1.0f / (float) n;
    int64_t tokens[TNN_HEAD_LOSS_CHUNK];

    for (int64_t t = t0; t < t1;) {
        /* gather up to CHUNK labelled tokens; a masked one is done at once */
        int nc = 0;
        for (; t < t1 && nc < TNN_HEAD_LOSS_CHUNK; ++t) {
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
        qgemm(w_format, 2, w, vocab, d, h_chunk, d, nc, z, vocab, quantized, 0, 1);
        for (int c = 0; c < nc; ++c) {
            out[tokens[c] * out_stride + d] = softmax_gradient(z + c * vocab, vocab, labels[tokens[c]], inv_n);
        }
        /* dL/dh [d, nc] = W^T dz */
        qgemm(TNN_QPANEL_Q8_0, 2, wt, d, vocab, z, vocab, nc, dh_chunk, d, quantized, 0, 1);
        for (int c = 0; c < nc; ++c) {
            memcpy(out + tokens[c] * out_stride, dh_chunk + c * d, (size_t) d * sizeof(float));
        }
    }
}
