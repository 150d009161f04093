/* The input gradient through frozen experts kept as stored, and where ggml's
 * product is slow their forward (kernels.h's comment on struct
 * tnn_experts_args).
 *
 * An expert sees about T k / E of a step's T tokens (64 of 1024 for
 * Qwen3-30B-A3B: 8 of 128 experts), too few to repay packing it into
 * int8 panels every step. W_e is dequantized a block of columns at a time
 * instead, as graph/stored_products.c does for a dense matrix, and the
 * product runs in float32 on the expert's gathered columns. */
#include "cpu/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rows of W dequantized per pass: 1024 x 256 floats, 1 MB for a K-quant. */
#define K_CHUNK 1024
/* Columns of dy gathered per pass (an expert that more slots chose takes
 * several passes, each dequantizing its block again). */
#define COLUMNS 512

int64_t tnn_experts_block_width(int64_t block) { return block % TNN_FGEMM_ROWS == 0 ? block : TNN_FGEMM_ROWS; }

/* One thread's memory: fgemm's panel, W's block [K_CHUNK][width], the
 * gathered columns of dy [COLUMNS][d_out], their product [COLUMNS][width],
 * and the columns' places. */
struct work {
    float *panel, *block, *gathered, *product;
    int64_t * columns;
};

static size_t panel_floats(void) { return (tnn_fgemm_scratch_bytes() + 63) / 64 * 16; }

static bool work_get(struct work * w, int64_t width, int64_t d_out) {
    const size_t floats = panel_floats() + (size_t) width * K_CHUNK + (size_t) COLUMNS * (size_t) (d_out + width);
    float * mem = malloc(floats * sizeof(float) + COLUMNS * sizeof(int64_t));
    if (mem == NULL) {
        return false;
    }
    w->panel = mem;
    w->block = w->panel + panel_floats();
    w->gathered = w->block + (size_t) width * K_CHUNK;
    w->product = w->gathered + (size_t) COLUMNS * (size_t) d_out;
    w->columns = (int64_t *) (w->product + (size_t) COLUMNS * (size_t) width);
    return true;
}

/* The expert slot i = t * n_used + s chose. */
static int32_t expert_of(const struct tnn_experts_args * a, int64_t i) {
    return a->ids[i / a->n_used * a->ids_ld + i % a->n_used];
}

/* The next columns i = t * n_used + s whose slot chose expert e, from
 * *from on, at most COLUMNS of them; *from moves past them. */
static int64_t next_columns(const struct tnn_experts_args * a, int32_t e, int64_t * from, int64_t * columns) {
    const int64_t slots = a->n_used * a->n_tokens;
    int64_t n = 0, i = *from;
    for (; i < slots && n < COLUMNS; ++i) {
        if (expert_of(a, i) == e) {
            columns[n++] = i;
        }
    }
    *from = i;
    return n;
}

/* c [n][m] (+)= A g with A [m][depth] (by_k: stored [depth][m], W's
 * columns for the input gradient; else W's rows, for the forward) and g's
 * columns depth long, ld apart: fgemm, or the same sums in order without
 * it. */
static void product(const struct tnn_experts_args * a, const float * block, bool by_k, int64_t m, int64_t depth,
                    const float * g, int64_t ld, int64_t n, float * c, bool accumulate, float * panel) {
    if (a->fgemm != NULL) {
        const struct tnn_fgemm_operand w = { .data = block, .ld = by_k ? m : depth, .by_k = by_k };
        const struct tnn_fgemm_operand cols = { .data = g, .ld = ld };
        a->fgemm(&w, m, depth, &cols, c, m, 0, (m + TNN_FGEMM_ROWS - 1) / TNN_FGEMM_ROWS, 0, n, accumulate, panel);
        return;
    }
    for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = 0; i < m; ++i) {
            float sum = accumulate ? c[j * m + i] : 0.0f;
            for (int64_t k = 0; k < depth; ++k) {
                sum += block[by_k ? k * m + i : i * depth + k] * g[j * ld + k];
            }
            c[j * m + i] = sum;
        }
    }
}

/* Item (expert e, columns [m0, m0 + width) of W): every column of dx that
 * chose e, rows m0 .. m0 + width. */
static void expert_block(const struct tnn_experts_args * a, int32_t e, int64_t m0, int64_t width,
                         const struct work * w) {
    const char * expert = a->w + (size_t) e * a->expert_bytes;
    const size_t first_byte = (size_t) (m0 / a->block) * (a->row_bytes / (size_t) (a->d_in / a->block));
    int64_t from = 0, n;
    while ((n = next_columns(a, e, &from, w->columns)) > 0) {
        for (int64_t j = 0; j < n; ++j) {
            memcpy(w->gathered + j * a->d_out, a->dy + w->columns[j] * a->d_out,
                   (size_t) a->d_out * sizeof(float));
        }
        for (int64_t k0 = 0; k0 < a->d_out; k0 += K_CHUNK) {
            const int64_t depth = a->d_out - k0 < K_CHUNK ? a->d_out - k0 : K_CHUNK;
            for (int64_t k = 0; k < depth; ++k) {
                a->to_float(expert + (size_t) (k0 + k) * a->row_bytes + first_byte, w->block + k * width, width);
            }
            product(a, w->block, true, width, depth, w->gathered + k0, a->d_out, n, w->product, k0 > 0, w->panel);
        }
        for (int64_t j = 0; j < n; ++j) {
            memcpy(a->dx + w->columns[j] * a->d_in + m0, w->product + j * width, (size_t) width * sizeof(float));
        }
    }
}

/* Where the scratch could not be had: NaN in the item's values [first,
 * first + count) of each column of out (stride apart) whose slot chose e. */
static void poison(const struct tnn_experts_args * a, int32_t e, float * out, int64_t stride, int64_t first,
                   int64_t count) {
    for (int64_t i = 0; i < a->n_used * a->n_tokens; ++i) {
        if (expert_of(a, i) == e) {
            for (int64_t m = first; m < first + count; ++m) {
                out[i * stride + m] = NAN;
            }
        }
    }
}

/* The experts some slot chose, in order, into experts; their count. */
static int64_t chosen_experts(const struct tnn_experts_args * a, int32_t * experts) {
    bool chosen[TNN_EXPERTS_MAX] = { false };
    for (int64_t i = 0; i < a->n_used * a->n_tokens; ++i) {
        const int32_t e = expert_of(a, i);
        if (e >= 0 && e < a->n_experts) {
            chosen[e] = true;
        }
    }
    int64_t n = 0;
    for (int32_t e = 0; e < a->n_experts; ++e) {
        if (chosen[e]) {
            experts[n++] = e;
        }
    }
    return n;
}

void tnn_experts_input_gradient(const struct tnn_experts_args * a, int ith, int nth) {
    const int64_t slots = a->n_used * a->n_tokens, width = tnn_experts_block_width(a->block);
    const int64_t blocks = (a->d_in + width - 1) / width;
    /* slots that name no expert: zeros, shared out by slot */
    for (int64_t i = ith; i < slots; i += nth) {
        if (expert_of(a, i) < 0 || expert_of(a, i) >= a->n_experts) {
            memset(a->dx + i * a->d_in, 0, (size_t) a->d_in * sizeof(float));
        }
    }
    /* items are (chosen expert, block) */
    int32_t experts[TNN_EXPERTS_MAX];
    const int64_t n_chosen = chosen_experts(a, experts);
    struct work w = { 0 };
    const bool have_work = work_get(&w, width, a->d_out);
    const int64_t items = n_chosen * blocks;
    for (int64_t item = items * ith / nth; item < items * (ith + 1) / nth; ++item) {
        const int64_t m0 = item % blocks * width, cols = a->d_in - m0 < width ? a->d_in - m0 : width;
        if (have_work) {
            expert_block(a, experts[item / blocks], m0, cols, &w);
        } else {
            poison(a, experts[item / blocks], a->dx, a->d_in, m0, cols);
        }
    }
    free(w.panel);
}

/* ---- the forward ---------------------------------------------------------- */

/* Item (expert e, rows [o0, o0 + rows) of W): those rows of every column
 * of y whose slot chose e. mem: the panel, W's rows [rows][K_CHUNK], the
 * gathered x [COLUMNS][d_in], the product [COLUMNS][rows], the columns. */
static void expert_rows(const struct tnn_experts_args * a, int32_t e, int64_t o0, int64_t rows, float * mem) {
    const char * expert = a->w + (size_t) e * a->expert_bytes;
    const size_t block_bytes = a->row_bytes / (size_t) (a->d_in / a->block);
    float *panel = mem, *block = panel + panel_floats(), *gathered = block + (size_t) rows * K_CHUNK;
    float * out = gathered + (size_t) COLUMNS * (size_t) a->d_in;
    int64_t * columns = (int64_t *) (out + (size_t) COLUMNS * (size_t) rows);
    int64_t from = 0, n;
    while ((n = next_columns(a, e, &from, columns)) > 0) {
        for (int64_t j = 0; j < n; ++j) {
            const int64_t t = columns[j] / a->n_used, s = columns[j] % a->n_used;
            const float * x = a->x + (t * a->x_slots + (a->x_slots == 1 ? 0 : s)) * a->d_in;
            memcpy(gathered + j * a->d_in, x, (size_t) a->d_in * sizeof(float));
        }
        for (int64_t k0 = 0; k0 < a->d_in; k0 += K_CHUNK) {
            const int64_t depth = a->d_in - k0 < K_CHUNK ? a->d_in - k0 : K_CHUNK;
            const size_t first_byte = (size_t) (k0 / a->block) * block_bytes;
            for (int64_t r = 0; r < rows; ++r) {
                a->to_float(expert + (size_t) (o0 + r) * a->row_bytes + first_byte, block + r * depth, depth);
            }
            product(a, block, false, rows, depth, gathered + k0, a->d_in, n, out, k0 > 0, panel);
        }
        for (int64_t j = 0; j < n; ++j) {
            memcpy(a->y + columns[j] * a->d_out + o0, out + j * rows, (size_t) rows * sizeof(float));
        }
    }
}

void tnn_experts_forward(const struct tnn_experts_args * a, int ith, int nth) {
    const int64_t slots = a->n_used * a->n_tokens,
                  blocks = (a->d_out + TNN_EXPERTS_FORWARD_ROWS - 1) / TNN_EXPERTS_FORWARD_ROWS;
    for (int64_t i = ith; i < slots; i += nth) {   /* slots that name no expert: zeros */
        if (expert_of(a, i) < 0 || expert_of(a, i) >= a->n_experts) {
            memset(a->y + i * a->d_out, 0, (size_t) a->d_out * sizeof(float));
        }
    }
    int32_t experts[TNN_EXPERTS_MAX];
    const int64_t n_chosen = chosen_experts(a, experts), items = n_chosen * blocks;
    const size_t floats = panel_floats() + (size_t) TNN_EXPERTS_FORWARD_ROWS * K_CHUNK +
                          (size_t) COLUMNS * (size_t) (a->d_in + TNN_EXPERTS_FORWARD_ROWS);
    float * mem = malloc(floats * sizeof(float) + COLUMNS * sizeof(int64_t));
    for (int64_t item = items * ith / nth; item < items * (ith + 1) / nth; ++item) {
        const int32_t e = experts[item / blocks];
        const int64_t o0 = item % blocks * TNN_EXPERTS_FORWARD_ROWS;
        const int64_t rows = a->d_out - o0 < TNN_EXPERTS_FORWARD_ROWS ? a->d_out - o0 : TNN_EXPERTS_FORWARD_ROWS;
        if (mem != NULL) {
            expert_rows(a, e, o0, rows, mem);
        } else {
            poison(a, e, a->y, a->d_out, o0, rows);
        }
    }
    free(mem);
}

/* ---- the weight gradient --------------------------------------------------- */

/* Rows of dW_e per work item. */
#define DW_ROWS 64

/* dW_e rows [o0, o0 + rows) = sum over e's slots of dy x^T: the slots' x
 * and dy gathered COLUMNS at a time, the product's sum over them carried
 * from pass to pass (fgemm's accumulate) in order. */
static void expert_weight_rows(const struct tnn_experts_args * a, int32_t e, int64_t o0, int64_t rows,
                               float * gathered_x, float * gathered_dy, int64_t * columns, float * panel) {
    float * dw = a->dw + ((size_t) e * (size_t) a->d_out + (size_t) o0) * (size_t) a->d_in;
    int64_t from = 0, n;
    bool accumulate = false;
    while ((n = next_columns(a, e, &from, columns)) > 0) {
        for (int64_t j = 0; j < n; ++j) {
            const int64_t t = columns[j] / a->n_used, s = columns[j] % a->n_used;
            const float * x = a->x + (t * a->x_slots + (a->x_slots == 1 ? 0 : s)) * a->d_in;
            memcpy(gathered_x + j * a->d_in, x, (size_t) a->d_in * sizeof(float));
            memcpy(gathered_dy + j * rows, a->dy + columns[j] * a->d_out + o0, (size_t) rows * sizeof(float));
        }
        if (a->fgemm != NULL) {
            /* C [d_in, rows] = X [d_in, n] DY [rows, n]^T, both read by k (the slot) */
            const struct tnn_fgemm_operand xs = { .data = gathered_x, .ld = a->d_in, .by_k = true };
            const struct tnn_fgemm_operand dys = { .data = gathered_dy, .ld = rows, .by_k = true };
            a->fgemm(&xs, a->d_in, n, &dys, dw, a->d_in, 0, (a->d_in + TNN_FGEMM_ROWS - 1) / TNN_FGEMM_ROWS, 0,
                     rows, accumulate, panel);
        } else {
            for (int64_t o = 0; o < rows; ++o) {
                for (int64_t i = 0; i < a->d_in; ++i) {
                    float sum = accumulate ? dw[o * a->d_in + i] : 0.0f;
                    for (int64_t j = 0; j < n; ++j) {
                        sum += gathered_x[j * a->d_in + i] * gathered_dy[j * rows + o];
                    }
                    dw[o * a->d_in + i] = sum;
                }
            }
        }
        accumulate = true;
    }
}

void tnn_experts_weight_gradient(const struct tnn_experts_args * a, int ith, int nth) {
    int32_t experts[TNN_EXPERTS_MAX];
    const int64_t n_chosen = chosen_experts(a, experts), blocks = (a->d_out + DW_ROWS - 1) / DW_ROWS;
    const size_t matrix = (size_t) a->d_in * (size_t) a->d_out;
    /* experts no slot chose: zeros, shared out by expert */
    for (int32_t e = 0, k = 0; e < a->n_experts; ++e) {
        const bool chosen = k < n_chosen && experts[k] == e;
        k += chosen;
        if (!chosen && e % nth == ith) {
            memset(a->dw + (size_t) e * matrix, 0, matrix * sizeof(float));
        }
    }
    const size_t floats = panel_floats() + (size_t) COLUMNS * (size_t) (a->d_in + DW_ROWS);
    float * mem = malloc(floats * sizeof(float) + COLUMNS * sizeof(int64_t));
    const int64_t items = n_chosen * blocks;
    for (int64_t item = items * ith / nth; item < items * (ith + 1) / nth; ++item) {
        const int32_t e = experts[item / blocks];
        const int64_t o0 = item % blocks * DW_ROWS, rows = a->d_out - o0 < DW_ROWS ? a->d_out - o0 : DW_ROWS;
        if (mem == NULL) {
            float * dw = a->dw + (size_t) e * matrix + (size_t) o0 * (size_t) a->d_in;
            for (int64_t i = 0; i < rows * a->d_in; ++i) {
                dw[i] = NAN;
            }
            continue;
        }
        float * gathered_x = mem + panel_floats();
        float * gathered_dy = gathered_x + (size_t) COLUMNS * (size_t) a->d_in;
        expert_weight_rows(a, e, o0, rows, gathered_x, gathered_dy,
                           (int64_t *) (gathered_dy + (size_t) COLUMNS * DW_ROWS), mem);
    }
    free(mem);
}
