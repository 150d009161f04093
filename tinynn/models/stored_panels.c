/* qgemm's panels made from a frozen matrix as stored, a pass at a time
 * inside the product (cpu/kernels.h: struct tnn_qpanels), so that no copy
 * of the matrix is kept: the products of base_compute stored.
 *
 * The panels are those frozen_copies.c would have made once, to the bit:
 *   W for the forward: Q8_0 and Q4_1 packed as stored, Q4_0 as the Q4_1
 *     blocks it equals, every other type dequantized a row at a time and
 *     requantized to Q8_0 (ggml's reference rounding);
 *   W^T for the input gradient: each 32 rows of W dequantized over the
 *     pass's columns, each column's 32 values quantized as one Q8_0 block of
 *     a row of W^T where they lie (qpanel_quantize_columns: 16 columns on a
 *     vector's lanes, no transposed copy).
 * A pass of W^T covers whole stored blocks of W's columns (256 for the
 * K-quants), so that each stored block is dequantized once a product. */
#include "models/models.h"

#include <string.h>

/* The most bytes of panels a pass of W^T may take (a thread's scratch). */
#define MAX_PASS_BYTES ((size_t) 16 << 20)

enum ggml_type tnn_panel_type(enum ggml_type stored) {
    if (stored == GGML_TYPE_F32 || stored == GGML_TYPE_F16 || ggml_get_type_traits(stored)->to_float == NULL) {
        return GGML_TYPE_COUNT;
    }
    return stored == GGML_TYPE_Q4_1 || stored == GGML_TYPE_Q4_0 ? GGML_TYPE_Q4_1 : GGML_TYPE_Q8_0;
}

void tnn_q4_0_as_q4_1(const void * src, int64_t n, void * dst) {
    const char * in = src;
    char * out = dst;
    for (int64_t b = 0; b < n; ++b, in += 18, out += 20) {
        ggml_fp16_t d, m;
        memcpy(&d, in, 2);
        m = ggml_fp32_to_fp16(-8.0f * ggml_fp16_to_fp32(d));
        memcpy(out, &d, 2);
        memcpy(out + 2, &m, 2);
        memcpy(out + 4, in + 2, 16);
    }
}

/* the bytes of one packed panel of k values */
static size_t panel_bytes(const struct tnn_qpanels * a, int64_t k) {
    return (size_t) (k / TNN_QBLOCK) * tnn_qpanel_block_bytes(a->format);
}

/* W's rows [16 p0, 16 p1) as panels: W [k = source_width, rows]. */
static void pack_rows(const struct tnn_qpanels * a, int64_t p0, int64_t p1, void * dst, void * work) {
    const enum ggml_type type = (enum ggml_type) a->source_type;
    const int64_t k = a->source_width;
    const size_t row_bytes = a->source_row_bytes;
    const enum tnn_qpanel_format format = (enum tnn_qpanel_format) a->format;
    const size_t retyped_row = ggml_row_size(format == TNN_QPANEL_Q4_1 ? GGML_TYPE_Q4_1 : GGML_TYPE_Q8_0, k);
    const size_t panel_block = tnn_qpanel_block_bytes(format);
    float * values = work;                                            /* [16 rows][k] floats */
    char * retyped = work;                                            /* or 16 rows of Q4_1 */
    for (int64_t p = p0; p < p1; ++p) {
        const char * rows = (const char *) a->source + (size_t) p * TNN_QPANEL_ROWS * row_bytes;
        char * out = (char *) dst + (size_t) (p - p0) * panel_bytes(a, k);
        if (type == GGML_TYPE_Q8_0 || type == GGML_TYPE_Q4_1) {
            tnn_qpanel_pack(format, rows, row_bytes, k, 0, out);
            continue;
        }
        if (type == GGML_TYPE_Q4_0) {
            for (int r = 0; r < TNN_QPANEL_ROWS; ++r) {
                tnn_q4_0_as_q4_1(rows + r * row_bytes, k / TNN_QBLOCK, retyped + r * retyped_row);
            }
            tnn_qpanel_pack(format, retyped, retyped_row, k, 0, out);
            continue;
        }
        for (int r = 0; r < TNN_QPANEL_ROWS; ++r) {
            a->to_float(rows + r * row_bytes, values + (size_t) r * k, k);
        }
        for (int64_t b = 0; b < k / TNN_QBLOCK; ++b) {
            a->quantize(values + b * TNN_QBLOCK, k, (uint8_t *) out + (size_t) b * panel_block);
        }
    }
}

/* W^T's rows [16 p0, 16 p1) as Q8_0 panels: W's columns [16 p0, 16 p1)
 * (whole stored blocks of them), k = W's rows. Each 32 rows of W become
 * one panel block of every panel. */
static void pack_columns(const struct tnn_qpanels * a, int64_t p0, int64_t p1, void * dst, void * work) {
    const enum ggml_type type = (enum ggml_type) a->source_type;
    const int64_t k = a->source_width, m0 = p0 * TNN_QPANEL_ROWS, width = (p1 - p0) * TNN_QPANEL_ROWS;
    const size_t first_byte = ggml_row_size(type, m0);
    const size_t panel_block = tnn_qpanel_block_bytes(TNN_QPANEL_Q8_0);
    float * tile = work;   /* [32 rows of W][width]: each panel's 32 values a row as columns */
    for (int64_t j0 = 0; j0 < k; j0 += TNN_QBLOCK) {
        for (int64_t r = 0; r < TNN_QBLOCK; ++r) {
            const char * row = (const char *) a->source + (size_t) (j0 + r) * a->source_row_bytes + first_byte;
            if (type == GGML_TYPE_F32) {
                memcpy(tile + r * width, row, (size_t) width * sizeof(float));
            } else {
                a->to_float(row, tile + r * width, width);
            }
        }
        for (int64_t pl = 0; pl < p1 - p0; ++pl) {
            uint8_t * out = (uint8_t *) dst + (size_t) pl * panel_bytes(a, k) +
                            (size_t) (j0 / TNN_QBLOCK) * panel_block;
            a->quantize(tile + pl * TNN_QPANEL_ROWS, width, out);   /* qpanel_quantize_columns */
        }
    }
}

bool tnn_stored_panels(const struct ggml_tensor * w, bool transposed, const struct tnn_cpu_kernels * kernels,
                       struct tnn_qpanels * out) {
    const enum ggml_type type = w->type;
    const int64_t d_in = w->ne[0], d_out = w->ne[1];
    const tnn_qpanel_quantize_fn quantize = transposed ? kernels->qpanel_quantize_columns
                                                       : kernels->qpanel_quantize;
    memset(out, 0, sizeof(*out));
    if (quantize == NULL || w->data == NULL || w->ne[2] != 1 || w->ne[3] != 1 || !ggml_is_contiguous_rows(w)) {
        return false;
    }
    out->source = w->data;
    out->quantize = quantize;
    /* ggml's own are scalar: packing through them cost a Q6_K W^T product a fifth */
    out->to_float = ggml_get_type_traits(type)->to_float;
    if (type == GGML_TYPE_Q4_K && kernels->dequantize_q4_K != NULL) {
        out->to_float = kernels->dequantize_q4_K;
    } else if (type == GGML_TYPE_Q6_K && kernels->dequantize_q6_K != NULL) {
        out->to_float = kernels->dequantize_q6_K;
    }
    out->source_type = (int32_t) type;
    out->source_row_bytes = w->nb[1];
    if (!transposed) {
        const enum ggml_type panels = tnn_panel_type(type);
        if (panels == GGML_TYPE_COUNT || d_in % TNN_QBLOCK != 0 || d_out % TNN_QPANEL_ROWS != 0) {
            return false;
        }
        out->format = panels == GGML_TYPE_Q4_1 ? TNN_QPANEL_Q4_1 : TNN_QPANEL_Q8_0;
        out->pack = pack_rows;
        out->source_width = d_in;
        /* about 256 KB of panels a pass (qgemm's own rule) */
        const size_t bytes = panel_bytes(out, d_in);
        out->pass = (int64_t) ((256 << 10) / bytes) > 0 ? (int64_t) ((256 << 10) / bytes) : 1;
        out->align = 1;
        out->work_bytes = TNN_QPANEL_ROWS * (size_t) d_in * sizeof(float);   /* more than 16 Q4_1 rows */
        return true;
    }
    /* W^T [k = d_out, rows = d_in]: a pass is whole stored blocks of W's columns */
    const int64_t block = ggml_blck_size(type);
    const int64_t columns = block > TNN_QPANEL_ROWS ? block : TNN_QPANEL_ROWS;
    if ((type != GGML_TYPE_F32 && ggml_get_type_traits(type)->to_float == NULL) || d_out % TNN_QBLOCK != 0 ||
        d_in % columns != 0 || columns % TNN_QPANEL_ROWS != 0) {
        return false;
    }
    out->format = TNN_QPANEL_Q8_0;
    out->pack = pack_columns;
    out->source_width = d_out;
    const size_t bytes = panel_bytes(out, d_out);
    const int64_t per_block = columns / TNN_QPANEL_ROWS;
    const int64_t fit = (int64_t) ((256 << 10) / bytes) / per_block * per_block;
    out->pass = fit > per_block ? fit : per_block;
    if ((size_t) out->pass * bytes > MAX_PASS_BYTES) {
        return false;   /* a wide head of 256-value blocks: 16 panels of a long k */
    }
    const int64_t width = out->pass * TNN_QPANEL_ROWS;
    out->align = per_block;
    out->work_bytes = (size_t) TNN_QBLOCK * width * sizeof(float);
    return true;
}
