/* The kernel checks of tinynn.h: each CPU kernel called on plain arrays,
 * shared out between threads as the graph nodes share it, for tests. */
#include "session/session.h"
#include "ggml-cpu.h"

#include <stdlib.h>
#include <string.h>

const char * tnn_cpu_kernel_choice(const char * kernel) {
    const int id = tnn_cpu_kernel_by_name(kernel);
    struct tnn_cpu_kernels k;
    if (id < 0 || tnn_backend_cpu_kernels(&k) != TNN_OK) {
        return NULL;
    }
    return tnn_cpu_variant_name(k.variant[id]);
}

int tnn_cpu_kernel_runs(const char * kernel, const char * variant) {
    const int id = tnn_cpu_kernel_by_name(kernel), v = tnn_cpu_variant_by_name(variant);
    struct tnn_cpu_kernels k = { 0 };
    return id >= 0 && v > TNN_CPU_NONE &&
           tnn_cpu_kernel_set(&k, (enum tnn_cpu_kernel) id, (enum tnn_cpu_variant) v);
}

/* k with variant's entry points for kernel, or TNN_ERR_ARG saying why not. */
static int kernels_for(const char * variant, enum tnn_cpu_kernel kernel, int32_t nth, struct tnn_cpu_kernels * k) {
    const int v = tnn_cpu_variant_by_name(variant);
    *k = (struct tnn_cpu_kernels){ 0 };
    if (v <= TNN_CPU_NONE) {
        return tnn_fail(TNN_ERR_ARG, "%s: no variant named '%.40s' (avx2, avxvnni, avx512, amx)",
                        tnn_cpu_kernel_name(kernel), variant ? variant : "(null)");
    }
    if (!tnn_cpu_kernel_set(k, kernel, (enum tnn_cpu_variant) v)) {
        return tnn_fail(TNN_ERR_ARG, "%s: this CPU or build cannot run the %s variant",
                        tnn_cpu_kernel_name(kernel), variant);
    }
    if (nth < 1 || nth > 256) {
        return tnn_fail(TNN_ERR_ARG, "%s: nth must be 1 to 256, got %d", tnn_cpu_kernel_name(kernel), nth);
    }
    return TNN_OK;
}

/* Pack n_rows stored rows of Q8_0 / Q4_1 blocks (k values each). */
static void * packed(int32_t q4_1, const void * blocks, int64_t k, int64_t n_rows) {
    const enum tnn_qpanel_format format = q4_1 ? TNN_QPANEL_Q4_1 : TNN_QPANEL_Q8_0;
    const size_t row_bytes = (size_t) (k / TNN_QBLOCK) * (q4_1 ? 20 : 34);
    void * dst = malloc((size_t) (n_rows / TNN_QPANEL_ROWS) * (size_t) (k / TNN_QBLOCK) *
                        tnn_qpanel_block_bytes(format));
    for (int64_t r0 = 0; dst != NULL && r0 < n_rows; r0 += TNN_QPANEL_ROWS) {
        tnn_qpanel_pack(format, (const char *) blocks + r0 * row_bytes, row_bytes, k, r0, dst);
    }
    return dst;
}

int tnn_kernel_check_qgemm(const char * variant, int32_t q4_1, int32_t levels, const void * blocks, int64_t rows,
                           int64_t k, const float * x, int64_t n, float * y, int32_t nth) {
    struct tnn_cpu_kernels kernels;
    int status = kernels_for(variant, TNN_KERNEL_QGEMM, nth, &kernels);
    if (status != TNN_OK) {
        return status;
    }
    if (rows < TNN_QPANEL_ROWS || rows % TNN_QPANEL_ROWS || k < TNN_QBLOCK || k % TNN_QBLOCK || n < 1 ||
        (levels != 1 && levels != 2) || blocks == NULL || x == NULL || y == NULL) {
        return tnn_fail(TNN_ERR_ARG,
                        "qgemm: rows must be a multiple of 16, k of 32, n positive, "
                        "levels 1 or 2 (got %lld, %lld, %lld, %d)",
                        (long long) rows, (long long) k, (long long) n, levels);
    }
    void * a = packed(q4_1, blocks, k, rows);
    const struct tnn_qpanels panels = tnn_qpanels_packed(q4_1 ? TNN_QPANEL_Q4_1 : TNN_QPANEL_Q8_0, a);
    void * scratch = malloc(tnn_qgemm_scratch_bytes(&panels, k, n, false));
    if (a == NULL || scratch == NULL) {
        free(a);
        free(scratch);
        return tnn_fail(TNN_ERR_ALLOC, "qgemm: out of memory");
    }
    /* no thread waits for another: one after another is the same */
    const struct tnn_qgemm_columns columns = { x, k, NULL };
    for (int ith = 0; ith < nth; ++ith) {
        kernels.qgemm(levels, &panels, rows, k, &columns, n, y, rows, scratch, ith, nth);
    }
    free(a);
    free(scratch);
    return TNN_OK;
}

/* fgemm or fgemm_bf16 (kernel) of variant, shared out as products.c
 * shares one batch: panels, a thread's run of them in one call, split by
 * columns too when there are too few of them. */
static int check_fgemm(enum tnn_cpu_kernel kernel, const char * variant, const float * a, int32_t a_by_k,
                       const uint16_t * a_bf16, const uint16_t * a_tiles, int64_t m, int64_t k, const float * b,
                       int32_t b_by_k, int64_t n, bool accumulate, float * c, int32_t nth) {
    struct tnn_cpu_kernels kernels;
    int status = kernels_for(variant, kernel, nth, &kernels);
    if (status != TNN_OK) {
        return status;
    }
    if (m < 1 || k < 1 || n < 1 || a == NULL || b == NULL || c == NULL) {
        return tnn_fail(TNN_ERR_ARG, "%s: m, k and n must be positive", tnn_cpu_kernel_name(kernel));
    }
    const struct tnn_fgemm_operand a_op = { a, a_by_k ? m : k, a_by_k != 0, a_bf16, a_tiles };
    const struct tnn_fgemm_operand b_op = { b, b_by_k ? n : k, b_by_k != 0, NULL };
    const bool bf16 = kernel == TNN_KERNEL_FGEMM_BF16;
    /* from a cache line's start, as a session's scratch (cpu/state.c): the
     * tiles' rows are 64 bytes, each in two lines from anywhere else */
    float * work = NULL;
    if (posix_memalign((void **) &work, 64, bf16 ? tnn_fgemm_bf16_scratch_bytes() : tnn_fgemm_scratch_bytes()) !=
        0) {
        work = NULL;
    }
    if (work == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "%s: out of memory", tnn_cpu_kernel_name(kernel));
    }
    const int64_t panels = (m + TNN_FGEMM_ROWS - 1) / TNN_FGEMM_ROWS;
    const int64_t splits = tnn_column_splits(panels, nth, n);
    const int64_t items = panels * splits;
    for (int ith = 0; ith < nth; ++ith) {
        const int64_t first = items * ith / nth, last = items * (ith + 1) / nth;
        for (int64_t item = first; item < last; ++item) {
            const int64_t panel = item / splits, split = item % splits;
            const int64_t panel_end = splits == 1 ? last : panel + 1;
            (bf16 ? kernels.fgemm_bf16 : kernels.fgemm)(&a_op, m, k, &b_op, c, m, panel, panel_end,
                                                        n * split / splits, n * (split + 1) / splits, accumulate,
                                                        work);
            item += splits == 1 ? panel_end - panel - 1 : 0;
        }
    }
    free(work);
    return TNN_OK;
}

int tnn_kernel_check_fgemm(const char * variant, const float * a, int32_t a_by_k, int64_t m, int64_t k,
                           const float * b, int32_t b_by_k, int64_t n, float * c, int32_t nth) {
    return check_fgemm(TNN_KERNEL_FGEMM, variant, a, a_by_k, NULL, NULL, m, k, b, b_by_k, n, false, c, nth);
}

int tnn_kernel_check_fgemm_bf16(const char * variant, const float * a, int32_t a_by_k, int32_t a_stored_bf16,
                                int64_t m, int64_t k, const float * b, int32_t b_by_k, int64_t n,
                                int32_t accumulate, float * c, int32_t nth) {
    uint16_t *a_bf16 = NULL, *a_tiles = NULL;
    /* the matrix stored: A [m, k], or with a_by_k A^T [k, m], in rows */
    const int64_t rows = a_by_k ? k : m, cols = a_by_k ? m : k;
    void (*tile)(const uint16_t *, int64_t, uint16_t *) = NULL;
    if (a_stored_bf16 == 2) {
        struct tnn_cpu_kernels kernels;
        const int status = kernels_for(variant, TNN_KERNEL_FGEMM_BF16, nth, &kernels);
        if (status != TNN_OK) {
            return status;
        }
        if (kernels.fgemm_bf16_tiles == NULL || rows % TNN_FGEMM_ROWS != 0 || cols % TNN_FGEMM_ROWS != 0) {
            return tnn_fail(TNN_ERR_ARG, "fgemm_bf16: tiles need the amx variant and m, k multiples of %d",
                            TNN_FGEMM_ROWS);
        }
        tile = kernels.fgemm_bf16_tiles;
    }
    if (a_stored_bf16 && m > 0 && k > 0 && a != NULL) {
        a_bf16 = malloc((size_t) m * (size_t) k * sizeof(uint16_t));
        a_tiles = a_stored_bf16 == 2 ? malloc((size_t) m * (size_t) k * sizeof(uint16_t)) : NULL;
        if (a_bf16 == NULL || (a_stored_bf16 == 2 && a_tiles == NULL)) {
            free(a_bf16);
            return tnn_fail(TNN_ERR_ALLOC, "fgemm_bf16: out of memory");
        }
        for (int64_t i = 0; i < m * k; ++i) {
            a_bf16[i] = ggml_fp32_to_bf16(a[i]).bits;
        }
        for (int64_t r = 0; r < rows && a_tiles != NULL; r += TNN_FGEMM_ROWS) {
            tile(a_bf16 + r * cols, cols, a_tiles + r * cols);
        }
    }
    const int status = check_fgemm(TNN_KERNEL_FGEMM_BF16, variant, a, a_by_k, a_tiles ? NULL : a_bf16, a_tiles, m,
                                   k, b, b_by_k, n, accumulate != 0, c, nth);
    free(a_bf16);
    free(a_tiles);
    return status;
}

int tnn_kernel_check_fgemm_skinny(const char * variant, const float * x, int64_t m, const float * y, int64_t n,
                                  int64_t k, float * c, int32_t nth) {
    struct tnn_cpu_kernels kernels;
    int status = kernels_for(variant, TNN_KERNEL_FGEMM, nth, &kernels);
    if (status != TNN_OK) {
        return status;
    }
    if (m < 1 || m > TNN_SKINNY_MAX_M || n < 1 || k < 1 || x == NULL || y == NULL || c == NULL) {
        return tnn_fail(TNN_ERR_ARG, "fgemm_skinny: m must be 1 to %d, n and k positive", TNN_SKINNY_MAX_M);
    }
    for (int ith = 0; ith < nth; ++ith) {
        int64_t n0, n1;
        tnn_share_groups(n, 16, ith, nth, &n0, &n1);
        kernels.fgemm_skinny(x, m, m, y, n, k, c, m, n0, n1);
    }
    return TNN_OK;
}

/* head_loss over n tokens as nth threads would share them, one after another. */
static void run_head_loss(const struct tnn_cpu_kernels * kernels, const struct tnn_head_products * products,
                          int64_t d, int64_t vocab, const float * h, const int32_t * labels, int64_t n,
                          float * out, void * scratch, int32_t nth) {
    for (int ith = 0; ith < nth; ++ith) {
        kernels->head_loss(products, d, vocab, h, d, labels, n, n * ith / nth, n * (ith + 1) / nth, out, scratch);
    }
}

int tnn_kernel_check_head_loss(const char * variant, int32_t q4_1, const void * w_blocks, const void * wt_blocks,
                               int64_t d, int64_t vocab, const float * h, const int32_t * labels, int64_t n,
                               float * out, int32_t nth) {
    struct tnn_cpu_kernels kernels;
    int status = kernels_for(variant, TNN_KERNEL_HEAD_LOSS, nth, &kernels);
    if (status != TNN_OK) {
        return status;
    }
    if (d < TNN_QBLOCK || d % TNN_QBLOCK || vocab < TNN_QBLOCK || vocab % TNN_QBLOCK || n < 1 ||
        w_blocks == NULL || wt_blocks == NULL || h == NULL || labels == NULL || out == NULL) {
        return tnn_fail(TNN_ERR_ARG, "head_loss: d and vocab must be multiples of 32, n positive");
    }
    void * w = packed(q4_1, w_blocks, d, vocab);
    void * wt = packed(0, wt_blocks, vocab, d);
    void * scratch = malloc(tnn_head_loss_scratch_bytes(d, vocab, false));
    if (w == NULL || wt == NULL || scratch == NULL) {
        free(w);
        free(wt);
        free(scratch);
        return tnn_fail(TNN_ERR_ALLOC, "head_loss: out of memory");
    }
    /* its products through the best qgemm up to its own level */
    for (int v = kernels.variant[TNN_KERNEL_HEAD_LOSS]; v > TNN_CPU_NONE; --v) {
        if (tnn_cpu_kernel_set(&kernels, TNN_KERNEL_QGEMM, (enum tnn_cpu_variant) v)) {
            break;
        }
    }
    if (kernels.qgemm == NULL) {
        free(w);
        free(wt);
        free(scratch);
        return tnn_fail(TNN_ERR_ARG, "head_loss: no qgemm variant runs here");
    }
    const struct tnn_head_products products = { .qgemm = kernels.qgemm,
                                                .w_format = q4_1 ? TNN_QPANEL_Q4_1 : TNN_QPANEL_Q8_0,
                                                .w = w,
                                                .wt = wt };
    run_head_loss(&kernels, &products, d, vocab, h, labels, n, out, scratch, nth);
    free(w);
    free(wt);
    free(scratch);
    return TNN_OK;
}

int tnn_kernel_check_head_loss_bf16(const char * variant, const char * fgemm_bf16_variant, const uint16_t * w_bf16,
                                    int64_t d, int64_t vocab, const float * h, const int32_t * labels, int64_t n,
                                    float * out, int32_t nth) {
    struct tnn_cpu_kernels kernels;
    int status = kernels_for(variant, TNN_KERNEL_HEAD_LOSS, nth, &kernels);
    if (status != TNN_OK) {
        return status;
    }
    const int products_variant = tnn_cpu_variant_by_name(fgemm_bf16_variant);
    if (products_variant <= TNN_CPU_NONE ||
        !tnn_cpu_kernel_set(&kernels, TNN_KERNEL_FGEMM_BF16, (enum tnn_cpu_variant) products_variant)) {
        return tnn_fail(TNN_ERR_ARG, "head_loss: this CPU or build cannot run fgemm_bf16's %.40s variant",
                        fgemm_bf16_variant ? fgemm_bf16_variant : "(null)");
    }
    if (d < 1 || vocab < 1 || n < 1 || w_bf16 == NULL || h == NULL || labels == NULL || out == NULL) {
        return tnn_fail(TNN_ERR_ARG, "head_loss: d, vocab and n must be positive");
    }
    void * scratch = malloc(tnn_head_loss_scratch_bytes(d, vocab, true));
    if (scratch == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "head_loss: out of memory");
    }
    const struct tnn_head_products products = { .fgemm_bf16 = kernels.fgemm_bf16, .w_bf16 = w_bf16 };
    run_head_loss(&kernels, &products, d, vocab, h, labels, n, out, scratch, nth);
    free(scratch);
    return TNN_OK;
}

int tnn_kernel_check_token_loss(const char * variant, const float * z, int64_t vocab, const int32_t * labels,
                                int64_t n, float * loss) {
    struct tnn_cpu_kernels kernels;
    int status = kernels_for(variant, TNN_KERNEL_HEAD_LOSS, 1, &kernels);
    if (status != TNN_OK) {
        return status;
    }
    if (vocab < 1 || n < 1 || z == NULL || labels == NULL || loss == NULL) {
        return tnn_fail(TNN_ERR_ARG, "token_loss: vocab and n must be positive");
    }
    for (int64_t t = 0; t < n; ++t) {
        loss[t] = labels[t] < 0 || labels[t] >= vocab ? 0.0f : kernels.token_loss(z + t * vocab, vocab, labels[t]);
    }
    return TNN_OK;
}

int tnn_kernel_check_adamw(const char * variant, float * w, const float * g, float * m, float * v,
                           const float * hp, int64_t n, int32_t nth) {
    struct tnn_cpu_kernels kernels;
    int status = kernels_for(variant, TNN_KERNEL_ADAMW, nth, &kernels);
    if (status != TNN_OK) {
        return status;
    }
    if (n < 1 || w == NULL || g == NULL || m == NULL || v == NULL || hp == NULL) {
        return tnn_fail(TNN_ERR_ARG, "adamw: n must be positive");
    }
    /* as graph/adamw.c shares it out */
    for (int ith = 0; ith < nth; ++ith) {
        int64_t i0, i1;
        tnn_share_groups(n, 16, ith, nth, &i0, &i1);
        kernels.adamw(w, g, m, v, hp, i0, i1);
    }
    return TNN_OK;
}

int tnn_kernel_check_swiglu_back(const char * variant, const float * g, const float * up, const float * dy,
                                 int64_t n, float * dgate, float * dup, int32_t nth) {
    struct tnn_cpu_kernels kernels;
    int status = kernels_for(variant, TNN_KERNEL_ACTIVATIONS, nth, &kernels);
    if (status != TNN_OK) {
        return status;
    }
    if (n < 1 || g == NULL || dy == NULL) {
        return tnn_fail(TNN_ERR_ARG, "swiglu_back: n must be positive");
    }
    /* as graph/activations.c shares it out */
    for (int ith = 0; ith < nth; ++ith) {
        int64_t i0, i1;
        tnn_share_groups(n, 16, ith, nth, &i0, &i1);
        kernels.swiglu_back(g, up, dy, dgate, dup, i0, i1);
    }
    return TNN_OK;
}

int tnn_kernel_check_rms_norm(const char * variant, const float * x, const float * w, const float * dz, int64_t d,
                              int64_t rows, float eps, float * y, float * dx, int32_t nth) {
    struct tnn_cpu_kernels kernels;
    int status = kernels_for(variant, TNN_KERNEL_ACTIVATIONS, nth, &kernels);
    if (status != TNN_OK) {
        return status;
    }
    if (d < 1 || rows < 1 || x == NULL || y == NULL || (dz != NULL && dx == NULL)) {
        return tnn_fail(TNN_ERR_ARG, "rms_norm: d and rows must be positive");
    }
    /* as graph/activations.c shares them out: rows */
    for (int ith = 0; ith < nth; ++ith) {
        const int64_t r0 = rows * ith / nth, r1 = rows * (ith + 1) / nth;
        kernels.rms_norm(x, d, w, eps, y, d, d, r0, r1);
        if (dz != NULL) {
            kernels.rms_norm_back(dz, d, x, d, eps, dx, d, d, r0, r1);
        }
    }
    return TNN_OK;
}

/* The ggml type of a stored matrix by ggml's name: one with a
 * dequantization, not F32; GGML_TYPE_COUNT for none. */
static enum ggml_type stored_type(const char * type_name) {
    for (int t = 0; t < GGML_TYPE_COUNT && type_name != NULL; ++t) {
        const char * name = ggml_type_name((enum ggml_type) t);
        if (ggml_get_type_traits((enum ggml_type) t)->to_float != NULL && t != GGML_TYPE_F32 && name != NULL &&
            strcmp(name, type_name) == 0) {
            return (enum ggml_type) t;
        }
    }
    return GGML_TYPE_COUNT;
}

int tnn_kernel_check_stored_qgemm(const char * variant, const char * type_name, const void * w_rows, int64_t d_in,
                                  int64_t d_out, int32_t transposed, int32_t levels, const float * x, int64_t n,
                                  float * y, int32_t nth) {
    struct tnn_cpu_kernels kernels;
    int status = kernels_for(variant, TNN_KERNEL_QGEMM, nth, &kernels);
    if (status != TNN_OK) {
        return status;
    }
    const enum ggml_type type = stored_type(type_name);
    if (type == GGML_TYPE_COUNT || w_rows == NULL || x == NULL || y == NULL || d_in < 1 || d_out < 1 || n < 1 ||
        (levels != 1 && levels != 2)) {
        return tnn_fail(TNN_ERR_ARG,
                        "stored_qgemm: a quantized, F16 or BF16 type, positive shapes, levels 1 or 2");
    }
    struct ggml_init_params params = { ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(params);
    if (ctx == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "stored_qgemm: out of memory");
    }
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, type, d_in, d_out);
    w->data = (void *) w_rows;
    struct tnn_qpanels panels;
    if (!tnn_stored_panels(w, transposed != 0, &kernels, &panels)) {
        ggml_free(ctx);
        return tnn_fail(TNN_ERR_ARG, "stored_qgemm: qgemm cannot take a %s [%lld, %lld]%s as stored", type_name,
                        (long long) d_in, (long long) d_out, transposed ? " transposed" : "");
    }
    /* as the step's node runs it (graph/stored_products.c): x quantized
     * once, each thread its share of the columns, then the products; here
     * one thread after another */
    const int64_t k = transposed ? d_out : d_in, rows = transposed ? d_in : d_out;
    const size_t per_thread = tnn_qgemm_scratch_bytes(&panels, k, n, true);
    void * scratch = malloc(per_thread * (size_t) nth);
    struct tnn_qcol * quantized = malloc(tnn_qgemm_quantized_bytes(k, n));
    if (scratch == NULL || quantized == NULL) {
        free(scratch);
        free(quantized);
        ggml_free(ctx);
        return tnn_fail(TNN_ERR_ALLOC, "stored_qgemm: out of memory");
    }
    for (int ith = 0; ith < nth; ++ith) {
        int64_t j0, j1;
        tnn_share_groups(n, 1, ith, nth, &j0, &j1);
        kernels.qgemm_quantize(x, k, k, j0, j1, quantized);
    }
    const struct tnn_qgemm_columns columns = { NULL, 0, quantized };
    for (int ith = 0; ith < nth; ++ith) {
        kernels.qgemm(levels, &panels, rows, k, &columns, n, y, rows, (char *) scratch + (size_t) ith * per_thread,
                      ith, nth);
    }
    free(scratch);
    free(quantized);
    ggml_free(ctx);
    return TNN_OK;
}

int tnn_kernel_quantize_rows(const char * type_name, const float * src, int64_t rows, int64_t cols, void * dst) {
    const enum ggml_type type = stored_type(type_name);
    if (type == GGML_TYPE_COUNT || src == NULL || dst == NULL || rows < 1 || cols < 1 ||
        cols % ggml_blck_size(type) != 0 || ggml_quantize_requires_imatrix(type)) {
        return tnn_fail(TNN_ERR_ARG, "quantize_rows: a type ggml quantizes without an importance matrix, "
                                     "positive shapes, cols a multiple of its block");
    }
    ggml_quantize_init(type);
    ggml_quantize_chunk(type, src, dst, 0, rows, cols, NULL);
    return TNN_OK;
}

int tnn_kernel_check_ggml_product(const char * type_name, const void * w_rows, int64_t d_in, int64_t d_out,
                                  int32_t transposed, const float * x, int64_t n, float * y, int32_t nth) {
    const enum ggml_type type = stored_type(type_name);
    if (type == GGML_TYPE_COUNT || w_rows == NULL || x == NULL || y == NULL || d_in < 1 || d_out < 1 || n < 1 ||
        nth < 1 || nth > 256 || d_in % ggml_blck_size(type) != 0) {
        return tnn_fail(TNN_ERR_ARG, "ggml_product: a quantized, F16 or BF16 type, positive shapes, d_in a "
                                     "multiple of its block, 1 to 256 threads");
    }
    if (!tnn_backend_uses_host_memory()) {
        return tnn_fail(TNN_ERR_ARG, "ggml_product: the CPU library's check");
    }
    struct ggml_init_params params = { 4 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(params);
    /* the backend as a session makes it: the portable build's CPU variant is
     * loaded at run time, so ggml-cpu's own calls are not linked here */
    ggml_backend_t backend = tnn_backend_create(nth);
    if (ctx == NULL || backend == NULL) {
        ggml_free(ctx);
        ggml_backend_free(backend);
        return tnn_fail(TNN_ERR_ALLOC, "ggml_product: out of memory");
    }
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, type, d_in, d_out);
    struct ggml_tensor * xt = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, transposed ? d_out : d_in, n);
    w->data = (void *) w_rows;
    xt->data = (void *) x;
    struct ggml_tensor * out = transposed ? ggml_out_prod(ctx, w, ggml_transpose(ctx, xt))
                                          : ggml_mul_mat(ctx, w, xt);
    out->data = y;
    struct ggml_cgraph * graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, out);
    const int status = ggml_backend_graph_compute(backend, graph) == GGML_STATUS_SUCCESS
                           ? TNN_OK
                           : tnn_fail(TNN_ERR_BACKEND, "ggml_product: ggml's compute failed");
    ggml_backend_free(backend);
    ggml_free(ctx);
    return status;
}

int tnn_kernel_check_experts(const char * type_name, const void * w_rows, int64_t d_in, int64_t d_out,
                             int64_t n_experts, const float * x, int64_t x_slots, const int32_t * ids,
                             int64_t n_used, int64_t n_tokens, const float * dy, float * y, float * dx,
                             int32_t nth) {
    const enum ggml_type type = stored_type(type_name);
    if (type == GGML_TYPE_COUNT || w_rows == NULL || x == NULL || ids == NULL || dy == NULL || y == NULL ||
        dx == NULL || d_in < 1 || d_out < 1 || n_experts < 1 || x_slots < 1 || n_used < 1 || n_tokens < 1 ||
        nth < 1 || nth > 256) {
        return tnn_fail(TNN_ERR_ARG, "experts: a quantized, F16 or BF16 type, the arrays, positive shapes, 1 to "
                                     "256 threads");
    }
    if (!tnn_backend_uses_host_memory()) {
        return tnn_fail(TNN_ERR_ARG, "experts: the CPU library's check");
    }
    if (d_in % ggml_blck_size(type) != 0) {
        return tnn_fail(TNN_ERR_ARG, "experts: %lld values a row of %s: not whole blocks", (long long) d_in,
                        ggml_type_name(type));
    }
    for (int64_t i = 0; i < n_used * n_tokens; ++i) {
        if (ids[i] < 0 || ids[i] >= n_experts) {   /* ggml's MUL_MAT_ID asserts it */
            return tnn_fail(TNN_ERR_ARG, "experts: id %lld is %d, not an expert of %lld", (long long) i, ids[i],
                            (long long) n_experts);
        }
    }
    const size_t graph_size = 64;
    struct ggml_init_params params = {
        .mem_size = ggml_tensor_overhead() * graph_size * 4 + ggml_graph_overhead_custom(graph_size, true) * 2,
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    struct ggml_context * ctx = ggml_init(params);
    ggml_backend_t backend = tnn_backend_create(nth);
    ggml_backend_buffer_t buf = NULL;
    int status = TNN_OK;
    if (ctx == NULL || backend == NULL) {
        status = tnn_fail(TNN_ERR_ALLOC, "experts: out of memory");
        goto done;
    }
    struct ggml_tensor * w = ggml_new_tensor_3d(ctx, type, d_in, d_out, n_experts);
    struct ggml_tensor * xt = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, d_in, x_slots, n_tokens);
    struct ggml_tensor * idt = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, n_used, n_tokens);
    struct ggml_tensor * dyt = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, d_out, n_used, n_tokens);
    ggml_set_param(xt);
    status = tnn_experts_check(w, xt, idt, "experts");
    if (status != TNN_OK) {
        goto done;
    }
    struct ggml_tensor * yt = tnn_experts_product(ctx, w, xt, idt);
    struct ggml_tensor * loss = ggml_sum(ctx, ggml_mul(ctx, yt, dyt));
    ggml_set_loss(loss);
    struct ggml_cgraph * graph = ggml_new_graph_custom(ctx, graph_size, true);
    ggml_build_forward_expand(graph, loss);
    ggml_build_backward_expand(ctx, graph, NULL);
    buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    if (buf == NULL) {
        status = tnn_fail(TNN_ERR_ALLOC, "experts: out of memory");
        goto done;
    }
    ggml_graph_reset(graph);
    ggml_backend_tensor_set(w, w_rows, 0, ggml_nbytes(w));
    ggml_backend_tensor_set(xt, x, 0, ggml_nbytes(xt));
    ggml_backend_tensor_set(idt, ids, 0, ggml_nbytes(idt));
    ggml_backend_tensor_set(dyt, dy, 0, ggml_nbytes(dyt));
    if (ggml_backend_graph_compute(backend, graph) != GGML_STATUS_SUCCESS) {
        status = tnn_fail(TNN_ERR_BACKEND, "experts: the graph's compute failed");
        goto done;
    }
    ggml_backend_tensor_get(yt, y, 0, ggml_nbytes(yt));
    ggml_backend_tensor_get(ggml_graph_get_grad(graph, xt), dx, 0, ggml_nbytes(xt));
done:
    ggml_backend_buffer_free(buf);
    ggml_backend_free(backend);
    ggml_free(ctx);
    return status;
}

int tnn_kernel_check_stored_gradient(const char * variant, const char * type_name, const void * w_rows,
                                     int64_t d_in, int64_t d_out, const float * dy, int64_t n, float * dx,
                                     int32_t nth) {
    struct tnn_cpu_state cpu = { 0 };
    int status = kernels_for(variant, TNN_KERNEL_FGEMM, nth, &cpu.kernels);
    if (status != TNN_OK) {
        return status;
    }
    const enum ggml_type type = stored_type(type_name);
    if (type == GGML_TYPE_COUNT || w_rows == NULL || dy == NULL || dx == NULL || d_out < 1 || n < 1 || d_in < 1 ||
        d_in % tnn_stored_block_width(type) != 0) {
        return tnn_fail(TNN_ERR_ARG, "stored_gradient: a quantized, F16 or BF16 type, d_in a multiple of its "
                                     "block width, and d_out and n positive");
    }
    /* the node's tensors, on the caller's arrays */
    struct ggml_init_params params = { 3 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(params);
    if (ctx == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "stored_gradient: out of memory");
    }
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, type, d_in, d_out);
    struct ggml_tensor * g = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, d_out, n);
    struct ggml_tensor * dst = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, d_in, n);
    w->data = (void *) w_rows;
    g->data = (void *) dy;
    dst->data = dx;
    dst->src[0] = w;
    dst->src[1] = g;
    status = tnn_grow_scratch(&cpu.scratch, nth, tnn_stored_scratch_bytes(tnn_stored_block_width(type), n));
    for (int ith = 0; ith < nth && status == TNN_OK; ++ith) {
        tnn_stored_input_gradient_node(dst, ith, nth, &cpu);
    }
    tnn_cpu_state_free(&cpu);
    ggml_free(ctx);
    return status;
}

int tnn_kernel_check_attention_bf16(const char * variant, const float * q, const float * k, const float * v,
                                    int64_t head_dim, int64_t t_seq, int64_t n_queries, int64_t group, float scale,
                                    const float * dout, float * out, float * lse, float * dq, float * dk,
                                    float * dv, int32_t nth) {
    struct tnn_cpu_kernels kernels;
    int status = kernels_for(variant, TNN_KERNEL_ATTENTION_BF16, nth, &kernels);
    if (status != TNN_OK) {
        return status;
    }
    if (head_dim < 32 || head_dim % 32 != 0 || head_dim > TNN_ATTENTION_MAX_HEAD_DIM || t_seq < 1 || group < 1 ||
        n_queries < 1 || n_queries % group != 0 || q == NULL || k == NULL || v == NULL || dout == NULL ||
        out == NULL || lse == NULL || dq == NULL || dk == NULL || dv == NULL) {
        return tnn_fail(TNN_ERR_ARG,
                        "attention_bf16: head_dim a multiple of 32 up to %d, t_seq and group "
                        "positive, n_queries a multiple of group",
                        TNN_ATTENTION_MAX_HEAD_DIM);
    }
    const int64_t hd = head_dim, t = t_seq,
                  tp = (t + TNN_ATTENTION_BLOCK - 1) / TNN_ATTENTION_BLOCK * TNN_ATTENTION_BLOCK;
    const int64_t part = n_queries * tp * hd;
    void * scratch = malloc(tnn_attention_bf16_scratch_bytes(hd, t, group));
    float * parts = malloc((size_t) (nth + 1) * (size_t) part * sizeof(float));
    if (scratch == NULL || parts == NULL) {
        free(scratch);
        free(parts);
        return tnn_fail(TNN_ERR_ALLOC, "attention_bf16: out of memory");
    }
    const struct tnn_attention_operand rows = { NULL, t * hd, hd, 1 };
    struct tnn_attention_args args = {
        .head_dim = hd,
        .t_seq = t,
        .n_queries = n_queries,
        .group = group,
        .scale = scale,
        .q = rows,
        .k = rows,
        .v = rows,
        .out = rows,
        .lse = lse,
        .dout = rows,
        .dk = rows,
        .dv = rows,
        .dq = { parts, tp * hd, hd, 1 },
        .dq_part = part,
        .dq_parts = nth + 1,
    };
    args.q.data = (float *) q;
    args.k.data = (float *) k;
    args.v.data = (float *) v;
    args.out.data = out;
    args.dout.data = (float *) dout;
    args.dk.data = dk;
    args.dv.data = dv;
    for (int ith = 0; ith < nth; ++ith) {
        kernels.attention_forward(&args, scratch, ith, nth);
    }
    /* one part more than threads: the kernel zeroes a part no thread writes */
    memset(parts + (size_t) nth * part, 0x7f, (size_t) part * sizeof(float));
    for (int ith = 0; ith < nth; ++ith) {
        kernels.attention_backward(&args, scratch, ith, nth);
    }
    for (int64_t m = 0; m < n_queries; ++m) {
        for (int64_t i = 0; i < t * hd; ++i) {
            float sum = 0.0f;
            for (int p = 0; p <= nth; ++p) {
                sum += parts[p * part + m * tp * hd + i];
            }
            dq[m * t * hd + i] = sum;
        }
    }
    free(scratch);
    free(parts);
    return TNN_OK;
}

int tnn_kernel_check_tensor_alignment(int32_t n, int32_t * misaligned) {
    if (n < 1 || n > 1024 || misaligned == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tensor alignment: n must be 1 to 1024");
    }
    struct ggml_init_params ip = { (size_t) n * ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(ip);
    if (ctx == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "tensor alignment: out of memory");
    }
    for (int32_t i = 0; i < n; ++i) {
        ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);   /* 12 bytes: packed, each would follow the last */
    }
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type());
    if (buf == NULL) {
        ggml_free(ctx);
        return tnn_fail(TNN_ERR_ALLOC, "tensor alignment: out of memory");
    }
    *misaligned = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        *misaligned += (uintptr_t) t->data % 64 != 0;
    }
    tnn_free_tensors(ctx, buf);
    return TNN_OK;
}
