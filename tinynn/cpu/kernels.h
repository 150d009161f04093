/* tinynn's CPU kernels: the one interface of tinynn/cpu/.
 *
 * These kernels do what ggml's CPU ops do on the shapes of a training step,
 * several times faster:
 *   qgemm      integer products by a quantized frozen matrix packed in
 *              16-row panels (the forward and input gradients of a LoRA base)
 *   fgemm      float32 products, and the skinny product that is a low-rank
 *              factor's weight gradient
 *   head_loss  the frozen output head and the cross-entropy in one pass, a
 *              few tokens at a time, never holding the logits
 *   adamw      the AdamW update, the same bits as ggml's
 * and, for --precision bf16 only (not float32's bits):
 *   fgemm_bf16      fgemm's products with bfloat16 operands
 *   attention_bf16  causal attention in blocks, each way in one call
 *   activations     SwiGLU's backward and RMS norm both ways, a pass each
 * This layer is pure arithmetic on plain arrays: which graph node becomes
 * which kernel is decided in tinynn/graph/ (fast_copies.c, products.c, head_loss.c,
 * adamw.c), from the one struct tnn_cpu_kernels the session holds.
 *
 * Variants. Each kernel comes in instruction-set variants that live side by
 * side in files named after them (qgemm_avx2.c, qgemm_avx512.c, ...):
 *   avx2      AVX2 + FMA + F16C: every x86-64 from Haswell (2013) and Zen 1
 *             on, today's Intel laptops included; integer products through
 *             vpmaddubsw
 *   avxvnni   avx2 with the 256-bit VNNI of Alder Lake, Meteor/Lunar/Arrow
 *             Lake and Zen 5: qgemm only
 *   avx512    AVX-512 F/BW/VL/DQ (+ VNNI for qgemm, + BF16 for fgemm_bf16):
 *             Skylake-X, Ice Lake, Sapphire Rapids, Zen 4/5
 *   amx       the AMX tiles of Sapphire Rapids and later: qgemm (INT8), and
 *             fgemm_bf16 (BF16)
 * Every variant of a kernel gives the same bits as every other: they add
 * the same numbers in the same order and only the width of the registers
 * differs (integer sums are exact). So a run is the same bytes on every
 * CPU level, and the tests hold each variant to the others bit for bit.
 * The one exception is fgemm_bf16 (--precision bf16 only): the AMX tiles
 * sum each tile product in an order and rounding of their own, which no
 * instruction reproduces (on a Sapphire Rapids Xeon a few ulps from the
 * in-order sum the avx512 variant gives), so its AMX variant is held to the
 * error bound and to its own bits for any thread count.
 * A variant's code is compiled through function attributes
 * (target("avx2,..."), not compile flags, so every build (a portable wheel
 * included) has it, and it runs only where the CPU reports the features at
 * run time. Off x86-64, or without GCC/Clang, no variant is compiled and
 * every kernel answers TNN_CPU_NONE: ggml's ops serve.
 *
 * Choice. tnn_cpu_kernels_choose fills the struct once, at realize, for
 * the CPU backend (csrc/backend_cpu.c); device backends fill none. Two
 * environment settings bound it:
 *   TNN_CPU_KERNELS says which kernels may run:
 *     unset, "" or "on"    every kernel this CPU runs (the default)
 *     "off"                none: ggml's ops throughout
 *     a list, e.g. "qgemm,fgemm"   only those (head_loss needs qgemm: it
 *                          multiplies by the head's packed panels)
 *   TNN_CPU_VARIANT names a CPU level as ggml's variants do (haswell,
 *     alderlake, skylakex, icelake, zen4, sapphirerapids, ...): the kernels
 *     use no feature past it, so one machine measures every level
 *     (tnn_cpu_level_features).
 * Each kernel then runs the best variant the CPU has within the level. Any
 * other value makes tnn_realize fail (TNN_ERR_ARG), naming the choices. */
#ifndef TINYNN_CPU_KERNELS_H
#define TINYNN_CPU_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- choosing the kernels ------------------------------------------------ */

/* In order of preference: a kernel runs the last one its CPU has. */
enum tnn_cpu_variant {
    TNN_CPU_NONE = 0,   /* no kernel of tinynn's: ggml's op serves */
    TNN_CPU_AVX2 = 1,
    TNN_CPU_AVXVNNI = 2,
    TNN_CPU_AVX512 = 3,
    TNN_CPU_AMX = 4,
    TNN_CPU_VARIANT_COUNT
};

/* The CPU features the variants need, as a bit set. */
enum tnn_cpu_feature {
    TNN_FEATURE_AVX2 = 1 << 0,   /* with FMA and F16C */
    TNN_FEATURE_AVXVNNI = 1 << 1,
    TNN_FEATURE_AVX512 = 1 << 2,   /* F, BW, VL and DQ */
    TNN_FEATURE_AVX512VNNI = 1 << 3,
    TNN_FEATURE_AVX512BF16 = 1 << 4,
    TNN_FEATURE_AMX = 1 << 5,   /* AMX-TILE, -INT8 and -BF16, and Linux's leave to use them */
    TNN_FEATURES_ALL = (1 << 6) - 1
};

enum tnn_cpu_kernel {
    TNN_KERNEL_QGEMM,
    TNN_KERNEL_FGEMM,      /* fgemm and fgemm_skinny */
    TNN_KERNEL_HEAD_LOSS,  /* head_loss and token_loss */
    TNN_KERNEL_ADAMW,
    TNN_KERNEL_FGEMM_BF16, /* fgemm's products in bfloat16: --precision bf16 only */
    TNN_KERNEL_ATTENTION_BF16, /* causal attention in blocks, bfloat16 products: --precision bf16 only */
    TNN_KERNEL_ACTIVATIONS,    /* swiglu_back, rms_norm, rms_norm_back: --precision bf16 only */
    TNN_KERNEL_RECURRENT,      /* the gated delta rule's steps: every variant the same bits */
    TNN_CPU_KERNEL_COUNT
};

/* The names TNN_CPU_KERNELS lists. */
#define TNN_CPU_KERNEL_NAMES "qgemm, fgemm, head_loss, adamw, fgemm_bf16, attention_bf16, activations, recurrent"

struct tnn_fgemm_operand;
struct tnn_attention_args;
struct tnn_recurrent_kernels;

/* qgemm's entry point (see tnn_qgemm_avx512 below). */
struct tnn_qpanels;
/* One TNN_QPANEL_Q8_0 panel block from 16 rows of 32 floats (tnn_qpanel_quantize_avx2). */
typedef void (*tnn_qpanel_quantize_fn)(const float * x, int64_t stride, void * out);
struct tnn_qgemm_columns;
struct tnn_qcol;
typedef void (*tnn_qgemm_fn)(int levels, const struct tnn_qpanels * a, int64_t rows, int64_t k,
                             const struct tnn_qgemm_columns * x, int64_t n, float * y, int64_t y_stride,
                             void * scratch, int ith, int nth);
/* qgemm's quantization of columns [c0, c1) of x (column j at x + j *
 * x_stride, k values) into q (column j's k / 32 blocks at q + j * k / 32):
 * the bits every variant's qgemm quantizes them to. */
typedef void (*tnn_qgemm_quantize_fn)(const float * x, int64_t x_stride, int64_t k, int64_t c0, int64_t c1,
                                      struct tnn_qcol * q);
/* fgemm's and fgemm_bf16's entry point (see tnn_fgemm_avx512 below). */
typedef void (*tnn_fgemm_fn)(const struct tnn_fgemm_operand * a, int64_t m, int64_t k,
                             const struct tnn_fgemm_operand * b, float * c, int64_t ldc, int64_t p0, int64_t p1,
                             int64_t n0, int64_t n1, bool accumulate, float * scratch);
struct tnn_head_products;

/* The kernels a session uses: for each, the variant that runs it and its
 * entry points (NULL where TNN_CPU_NONE). The graph rewrites consult this
 * and nothing else; a node calls through the pointers once per thread per
 * node, never inside a loop. */
struct tnn_cpu_kernels {
    enum tnn_cpu_variant variant[TNN_CPU_KERNEL_COUNT];   /* by enum tnn_cpu_kernel */

    /* each as its variants below declare it: tnn_qgemm_<variant>, ... */
    tnn_qgemm_fn qgemm;
    tnn_qgemm_quantize_fn qgemm_quantize;             /* with qgemm: its columns, quantized ahead */
    tnn_qpanel_quantize_fn qpanel_quantize;           /* with qgemm: its panels from floats */
    tnn_qpanel_quantize_fn qpanel_quantize_columns;   /* the same from columns (W^T's from W) */
    void (*dequantize_q4_K)(const void * blocks, float * y, int64_t n);   /* with qgemm: ggml's */
    void (*dequantize_q6_K)(const void * blocks, float * y, int64_t n);   /* to_float, vectorized */
    tnn_fgemm_fn fgemm;
    void (*fgemm_skinny)(const float * x, int64_t ldx, int64_t m, const float * y, int64_t ldy, int64_t k,
                         float * c, int64_t ldc, int64_t n0, int64_t n1);
    void (*head_loss)(const struct tnn_head_products * products, int64_t d, int64_t vocab, const float * h,
                      int64_t h_stride, const int32_t * labels, int64_t n, int64_t t0, int64_t t1, float * out,
                      void * scratch);
    float (*token_loss)(const float * z, int64_t vocab, int32_t label);
    void (*adamw)(float * w, const float * g, float * m, float * v, const float * hp, int64_t i0, int64_t i1);
    tnn_fgemm_fn fgemm_bf16;
    void (*fgemm_bf16_tiles)(const uint16_t * panel_rows, int64_t k, uint16_t * panel_out);   /* amx only */
    void (*attention_forward)(const struct tnn_attention_args * args, void * scratch, int ith, int nth);
    void (*attention_backward)(const struct tnn_attention_args * args, void * scratch, int ith, int nth);
    void (*swiglu_back)(const float * g, const float * up, const float * dy, float * dgate, float * dup,
                        int64_t i0, int64_t i1);
    void (*rms_norm)(const float * x, int64_t ldx, const float * w, float eps, float * y, int64_t ldy, int64_t d,
                     int64_t r0, int64_t r1);
    void (*rms_norm_back)(const float * dz, int64_t ldz, const float * x, int64_t ldx, float eps, float * dx,
                          int64_t lddx, int64_t d, int64_t r0, int64_t r1);
    const struct tnn_recurrent_kernels * recurrent;   /* NULL: tnn_recurrent_portable */
};

/* The features this CPU (and its OS) offers: a set of enum tnn_cpu_feature. */
unsigned tnn_cpu_features(void);

/* The features a CPU level of ggml's variant names allows ("x64",
 * "haswell", "alderlake", "skylakex", "icelake", "sapphirerapids", ...);
 * false for a name that is no x86-64 level. */
bool tnn_cpu_level_features(const char * level, unsigned * features);

/* Fill k for a session under the TNN_CPU_KERNELS setting (NULL when
 * unset), using no CPU feature outside allowed (TNN_FEATURES_ALL: no
 * bound): each allowed kernel gets the best variant this CPU, the build
 * and the bound run. false (k all NONE) when the setting names something
 * else than "on", "off" or kernels of TNN_CPU_KERNEL_NAMES. */
bool tnn_cpu_kernels_choose(const char * setting, unsigned allowed, struct tnn_cpu_kernels * k);

/* Put variant's entry points for kernel into k; false (k unchanged) when
 * this CPU or build cannot run them. NONE always succeeds and clears them. */
bool tnn_cpu_kernel_set(struct tnn_cpu_kernels * k, enum tnn_cpu_kernel kernel, enum tnn_cpu_variant variant);

/* "qgemm", "fgemm", "head_loss", "adamw", "fgemm_bf16"; "none", "avx2",
 * "avxvnni", "avx512", "amx". */
const char * tnn_cpu_kernel_name(enum tnn_cpu_kernel kernel);
const char * tnn_cpu_variant_name(enum tnn_cpu_variant variant);
/* The kernel or variant of that name; -1 for none such. */
int tnn_cpu_kernel_by_name(const char * name);
int tnn_cpu_variant_by_name(const char * name);

/* ---- qgemm: integer products by a packed quantized matrix ---------------- *
 *
 * ggml's CPU kernels for a quantized weight times many tokens take one
 * 32-value block of one row and one column at a time, and spend five or six
 * instructions per block pair on signs, conversions and scales around the
 * one that multiplies. Here a weight matrix is packed once into panels of 16
 * rows whose bytes lie in the order the VNNI instruction reads them: one
 * 64-byte load is 4 values of 16 rows, multiplied against 4 values of a
 * column broadcast from memory, so a block of 32 values of 16 rows and one
 * column is 8 multiply-adds into 16 int32 lanes, then one conversion and one
 * scaled add. The packed bytes take exactly as much memory as the stored
 * blocks (the scales stay FP16).
 *
 * Two packed formats, both 16 rows x 32 values per block:
 *   TNN_QPANEL_Q8_0  from Q8_0: 16 FP16 scales, then 8 groups of
 *                    [16 rows][4 values] as u8 (q + 128)           544 bytes
 *   TNN_QPANEL_Q4_1  from Q4_1: 16 FP16 scales, 16 FP16 minimums, then 4
 *                    groups of [16 rows][4 bytes], each byte holding values
 *                    t and t + 16 of the block as Q4_1 stores them   320 bytes
 * The columns (activations) are quantized per block of 32 to int8 with one
 * float scale, as ggml quantizes them for these types (Q8_0 / Q8_1): with
 * levels = 1 the products are ggml's own up to the order of the float sums
 * (each about 0.4% off the float product). levels = 2 adds a second int8
 * level for the remainder, at twice the multiply-adds: about 3e-5 off.
 *
 * Rows must be a multiple of 16 and the inner size a multiple of 32. The
 * packing and the sizes below are the same for every variant. */

enum tnn_qpanel_format {
    TNN_QPANEL_Q8_0 = 0,
    TNN_QPANEL_Q4_1 = 1,
};

#define TNN_QPANEL_ROWS 16
#define TNN_QBLOCK 32

/* Bytes of one packed 16-row panel block (= 16 stored blocks); inline, so
 * that a kernel specialised for one format steps by a constant. */
static inline size_t tnn_qpanel_block_bytes(enum tnn_qpanel_format format) {
    return format == TNN_QPANEL_Q8_0 ? 16 * 2 + 16 * 32 : 16 * 2 * 2 + 16 * 16;
}

/* Pack rows [r0, r0 + 16) of a stored Q8_0 / Q4_1 matrix into panel r0 / 16.
 * src: the first of the 16 stored rows, row_bytes apart; dst: the packed
 * matrix (k / 32 panel blocks per panel). */
void tnn_qpanel_pack(enum tnn_qpanel_format format, const void * src, size_t row_bytes, int64_t k, int64_t r0,
                     void * dst);

/* One TNN_QPANEL_Q8_0 panel block (16 rows x 32 values) from floats, row
 * r at x + r * stride, each row quantized as ggml's reference Q8_0
 * quantizes a block (quantize_row_q8_0_ref: d = max|x| / 127 in FP16,
 * q = roundf(x / d), half away from zero): the bits of quantizing each row
 * with ggml and packing it (tnn_qpanel_pack), which test_cpu_kernels holds
 * them to. On 256- and 512-bit registers, with qgemm's variants. */
void tnn_qpanel_quantize_avx2(const float * x, int64_t stride, void * out);
void tnn_qpanel_quantize_avx512(const float * x, int64_t stride, void * out);
/* The same block from the panel's 16 rows given as 32 columns: value j of
 * row r at x[j * stride + r] (W^T's panels straight from W's rows, no
 * transposed copy): the bits of tnn_qpanel_quantize on the transpose. */
void tnn_qpanel_quantize_columns_avx2(const float * x, int64_t stride, void * out);
void tnn_qpanel_quantize_columns_avx512(const float * x, int64_t stride, void * out);

/* A qgemm's matrix [rows, k] in 16-row panels of format (enum
 * tnn_qpanel_format). Either packed: every panel at packed, made once
 * (the base's copies); or made as the product reads them, pass panels at a
 * time, by pack into the thread's scratch, from a matrix kept as stored
 * (graph/stored_products.c: products straight from the stored blocks, no
 * copy kept). pack(a, p0, p1, dst, work) writes panels [p0, p1) to dst,
 * work_bytes of scratch at work its own; source and the fields after it
 * are for pack to read. */
struct tnn_qpanels {
    int format;
    const void * packed;
    void (*pack)(const struct tnn_qpanels * a, int64_t p0, int64_t p1, void * dst, void * work);
    int64_t pass;              /* with pack: panels a pass (1 or more) */
    int64_t align;             /* with pack: a thread's share starts at a multiple of it
                                  (whole stored blocks); each thread packs its own panels */
    size_t work_bytes;         /* with pack */
    const void * source;       /* the stored matrix */
    int32_t source_type;       /* its ggml type */
    size_t source_row_bytes;   /* the bytes of one of its rows */
    int64_t source_width;      /* with pack: values of one of its rows */
    tnn_qpanel_quantize_fn quantize;   /* with pack: the session's qpanel_quantize (W's panels) or
                                          qpanel_quantize_columns (W^T's) */
    void (*to_float)(const void * blocks, float * y, int64_t n);   /* with pack: the source's
                                                                      dequantization */
};

/* A matrix of packed panels. */
static inline struct tnn_qpanels tnn_qpanels_packed(enum tnn_qpanel_format format, const void * packed) {
    struct tnn_qpanels a = { 0 };
    a.format = format;
    a.packed = packed;
    return a;
}

/* qgemm's columns x [k, n]: floats (column j at floats + j * stride,
 * contiguous along k), which each thread quantizes as far as its share
 * needs; or, where quantized is set, all n columns quantized once already
 * (qgemm_quantize; column j's blocks at quantized + j * k / 32), which
 * every thread reads: a matrix packed as it is read splits its panels
 * between the threads, so that each would quantize all of x. */
struct tnn_qgemm_columns {
    const float * floats;
    int64_t stride;
    const struct tnn_qcol * quantized;
};

/* Scratch bytes a thread needs for a product by a of n columns of k
 * values: the quantized columns (none when x comes quantized), and where a
 * is packed as it is read, room for a pass of panels and pack's work. */
size_t tnn_qgemm_scratch_bytes(const struct tnn_qpanels * a, int64_t k, int64_t n, bool quantized);
/* Bytes of n columns of k values quantized (qgemm_quantize). */
size_t tnn_qgemm_quantized_bytes(int64_t k, int64_t n);

/* y [rows, n] = A [rows, k] x [k, n], for the share of thread ith of nth;
 * x quantized in levels (1 or 2) int8 levels. y: column j at y + j *
 * y_stride. scratch: this thread's tnn_qgemm_scratch_bytes(a, k, n, x
 * quantized). Every thread must be called; none waits for another. */
void tnn_qgemm_avx512(int levels, const struct tnn_qpanels * a, int64_t rows, int64_t k,
                      const struct tnn_qgemm_columns * x, int64_t n, float * y, int64_t y_stride, void * scratch,
                      int ith, int nth);
/* The same on 256-bit registers: the VNNI multiply-add (avxvnni), or
 * vpmaddubsw and vpmaddwd where there is none (avx2); and on the AMX tiles,
 * 16 columns x 16 rows x one block per tile product (amx). */
void tnn_qgemm_avx2(int levels, const struct tnn_qpanels * a, int64_t rows, int64_t k,
                    const struct tnn_qgemm_columns * x, int64_t n, float * y, int64_t y_stride, void * scratch,
                    int ith, int nth);
void tnn_qgemm_avxvnni(int levels, const struct tnn_qpanels * a, int64_t rows, int64_t k,
                       const struct tnn_qgemm_columns * x, int64_t n, float * y, int64_t y_stride, void * scratch,
                       int ith, int nth);
void tnn_qgemm_amx(int levels, const struct tnn_qpanels * a, int64_t rows, int64_t k,
                   const struct tnn_qgemm_columns * x, int64_t n, float * y, int64_t y_stride, void * scratch,
                   int ith, int nth);
/* n values of Q4_K or Q6_K blocks as floats (n a multiple of 256): the
 * bits of ggml's dequantize_row_q4_K / _q6_K (its to_float), which a
 * matrix kept as stored is packed through (models/stored_panels.c);
 * ggml's are scalar (dequantize_avx2.c). */
void tnn_dequantize_q4_K_avx2(const void * blocks, float * y, int64_t n);
void tnn_dequantize_q6_K_avx2(const void * blocks, float * y, int64_t n);
/* ggml's dequantize_row_mxfp4's bits (exact products), on AVX2. */
void tnn_dequantize_mxfp4_avx2(const void * blocks, float * y, int64_t n);
/* qgemm_quantize on 512- and 256-bit registers (the same bits). */
void tnn_qgemm_quantize_avx512(const float * x, int64_t x_stride, int64_t k, int64_t c0, int64_t c1,
                               struct tnn_qcol * q);
void tnn_qgemm_quantize_avx2(const float * x, int64_t x_stride, int64_t k, int64_t c0, int64_t c1,
                             struct tnn_qcol * q);

/* ---- fgemm: float32 products ---------------------------------------------- *
 *
 * ggml's F32 products (llamafile sgemm) walk 4 x 6 output tiles along the
 * whole inner dimension, reading both operands from L2 or beyond for every
 * tile: about 100 GFLOP/s on two cores here, half of what the FMA units
 * give. This kernel copies 32 rows of A at a time into a small panel, 256
 * inner values deep, laid out [k][32 rows] so that two 64-byte loads feed
 * 24 fused multiply-adds against 12 columns of B broadcast from memory;
 * the panel stays in L1 while every column tile passes over it.
 *
 * Every output is summed over k in order, whatever the thread count, so the
 * result does not depend on the number of threads. */

/* Rows of A per panel: a product has ceil(M / TNN_FGEMM_ROWS) panels. */
#define TNN_FGEMM_ROWS 32
/* Inner values per packed panel: 256 x 32 floats = 32 KB, in L1. */
#define TNN_FGEMM_DEPTH 256

/* Scratch bytes a thread needs (one packed panel). */
size_t tnn_fgemm_scratch_bytes(void);

/* How an operand lies in memory. */
struct tnn_fgemm_operand {
    const float * data;
    int64_t ld;          /* floats between rows (A) / columns (B), or between k's if by_k */
    bool by_k;           /* A[m, k] at data + k * ld + m (B[n, k] at data + k * ld + n):
                            the transpose of a contiguous matrix, read without a copy */
    const uint16_t * bf16; /* fgemm_bf16's A only: when set, A's values are bfloat16 words here,
                              laid out as data's would be (data unused): a frozen matrix
                              rounded once, not at every product */
    const uint16_t * tiles; /* fgemm_bf16_amx's A only: when set, a frozen matrix W [rows, k]
                               in the kernel's own layout (tnn_fgemm_bf16_amx_tiles; data, bf16
                               and ld unused): A = W, or W^T with by_k */
};

/* C[m, n] = sum_k A[m, k] B[n, k] for the rows of panels [p0, p1) and the
 * columns [n0, n1): A[m, k] at a->data + m * a->ld + k, B[n, k] at b->data +
 * n * b->ld + k (unless by_k), C column n at c + n * ldc (contiguous along m). */
void tnn_fgemm_avx512(const struct tnn_fgemm_operand * a, int64_t m, int64_t k, const struct tnn_fgemm_operand * b,
                      float * c, int64_t ldc, int64_t p0, int64_t p1, int64_t n0, int64_t n1, bool accumulate,
                      float * scratch);
void tnn_fgemm_avx2(const struct tnn_fgemm_operand * a, int64_t m, int64_t k, const struct tnn_fgemm_operand * b,
                    float * c, int64_t ldc, int64_t p0, int64_t p1, int64_t n0, int64_t n1, bool accumulate,
                    float * scratch);

/* fgemm_bf16: the same product with A and B rounded to bfloat16 (nearest
 * even) and the products summed in float32, each sum over k in order,
 * c = ((a_0 b_0 + a_1 b_1) + a_2 b_2) + ..., every add rounded (a product
 * of two bfloat16 is exact): the products of --precision bf16. Not
 * float32's bits, but the same bits for any thread count. Two variants:
 * avx512, on AVX512-BF16's vdpbf16ps (Zen 4 and 5, Cooper Lake, and every
 * AMX CPU); amx, on the AMX-BF16 tiles, whose pseudo-code (Intel SDM) sums
 * in the same order; that the tiles give avx512's bits has not been seen on
 * a machine here. Its panels come in groups of up to
 * TNN_FGEMM_BF16_PANELS, each operand rounded once per group: give it a
 * thread's panels in one call. */
#define TNN_FGEMM_BF16_PANELS 16
/* The amx variant's slice of k (avx512's is TNN_FGEMM_DEPTH): deeper,
 * because its tiles outrun C's traffic at 256 (fgemm_bf16_amx.c). */
#define TNN_FGEMM_BF16_AMX_DEPTH 1024
/* The amx variant's columns of B rounded at once, for all its panels. */
#define TNN_FGEMM_BF16_AMX_COLUMNS 1024
/* What a refusal of --precision bf16 names (a CPU without either variant). */
#define TNN_FGEMM_BF16_NEEDS "AVX512-BF16 (Zen 4 and later, Cooper Lake) or AMX (Sapphire Rapids and later)"
/* Scratch bytes a thread needs for it (3,072 KB: amx's 16 panels of A and
 * 1024 columns of B, 1024 deep). */
size_t tnn_fgemm_bf16_scratch_bytes(void);
void tnn_fgemm_bf16_avx512(const struct tnn_fgemm_operand * a, int64_t m, int64_t k,
                           const struct tnn_fgemm_operand * b, float * c, int64_t ldc, int64_t p0, int64_t p1,
                           int64_t n0, int64_t n1, bool accumulate, float * scratch);
void tnn_fgemm_bf16_amx(const struct tnn_fgemm_operand * a, int64_t m, int64_t k,
                        const struct tnn_fgemm_operand * b, float * c, int64_t ldc, int64_t p0, int64_t p1,
                        int64_t n0, int64_t n1, bool accumulate, float * scratch);
/* A frozen matrix W [rows, k] (rows and k multiples of TNN_FGEMM_ROWS) in
 * fgemm_bf16_amx's own layout, made once: each panel of 32 rows as the
 * kernel would round it into tiles' pairs for every slice of k, one panel
 * every 32 k values. The forward W x then reads its tiles in place, and the
 * input gradient W^T dy makes its pairs from them with a transpose of 8 x 8
 * words, from contiguous memory rather than two rows of W a pair. The same
 * bits as W in bfloat16 rows (operand.bf16) both ways. Panel by panel: the
 * panel's rows here in bfloat16, k apart, to the panel's place in out. */
void tnn_fgemm_bf16_amx_tiles(const uint16_t * panel_rows, int64_t k, uint16_t * panel_out);

/* The weight gradient of a low-rank factor, dB [m, n] = h [m, k] dy [n, k]^T
 * with m (the rank) at most TNN_SKINNY_MAX_M, from h and dy as the forward
 * left them, contiguous along m and n: X[j, t] at x + t * ldx + j, Y[i, t]
 * at y + t * ldy + i, C column i at c + i * ldc. ggml (and tnn_fgemm, whose
 * panels are 32 rows) would first copy both transposed; here 16 columns of
 * C take m accumulators and one pass over their stripe of dy. Columns
 * [n0, n1), n0 a multiple of 16. */
#define TNN_SKINNY_MAX_M 16
void tnn_fgemm_skinny_avx512(const float * x, int64_t ldx, int64_t m, const float * y, int64_t ldy, int64_t k,
                             float * c, int64_t ldc, int64_t n0, int64_t n1);
void tnn_fgemm_skinny_avx2(const float * x, int64_t ldx, int64_t m, const float * y, int64_t ldy, int64_t k,
                           float * c, int64_t ldc, int64_t n0, int64_t n1);

/* ---- head_loss: the frozen head and the cross-entropy in one pass -------- *
 *
 * With the head W [d, vocab] frozen, the loss needs the logits z = W h only
 * through their log-softmax, and the backward needs only
 *     dL/dh = W^T (softmax(z) - onehot(label)) / n.
 * For a chunk of labelled tokens at a time this computes z, each
 * token's loss and its dL/dh; the logits of all tokens are never held. The
 * two products go through qgemm (two int8 levels both ways) on the head's
 * packed copies, or, under --precision bf16 with a bfloat16 base, through
 * fgemm_bf16 on its bfloat16 copy. Each token's softmax sums its
 * exponentials in float lanes, 256 values at a time, and those sums in a
 * double: the same order for every thread count. */

/* Labelled tokens per product: a multiple of qgemm's 12-column tile, and
 * z for them (vocab x 48 floats, 9.4 MB for SmolLM2) is a few MB. */
#define TNN_HEAD_LOSS_CHUNK 48
/* With bfloat16 products the head goes a block of the vocabulary at a
 * time, both products, each token's softmax carried online from block to
 * block (layout.c): the head's copy is read once a chunk, not twice, and z
 * is one block, so a chunk can be every token a thread has in a step of
 * 1024 (the 1 B model at 1024 tokens: the head 1.53 s -> 1.08 s of a 9 s
 * step, Xeon with AMX). A chunk's sums are 12 d bytes a token (h, dL/dh
 * and a block's part): 12 MB a thread for d = 2048. */
#define TNN_HEAD_LOSS_CHUNK_BF16 512
/* Vocabulary rows per block: z [rows, chunk] is 2 MB. */
#define TNN_HEAD_LOSS_BLOCK_BF16 1024

/* Scratch bytes a thread needs for a head of d x vocab, its products in
 * bfloat16 (bf16) or not. */
size_t tnn_head_loss_scratch_bytes(int64_t d, int64_t vocab, bool bf16);

/* The head's two products, z [vocab, c] = W h and dL/dh [d, c] = W^T dz:
 * with w_bf16 set, fgemm_bf16 on W's bfloat16 copy (vocab rows of d, as
 * stored), both ways; otherwise qgemm (any variant: they give the same
 * bits) on w, the head's panels (vocab rows, d inner; w_format an enum
 * tnn_qpanel_format), and wt, W^T's TNN_QPANEL_Q8_0 panels (d rows, vocab
 * inner), d and vocab multiples of 32. */
struct tnn_head_products {
    tnn_qgemm_fn qgemm;
    int w_format;
    const void * w;
    const void * wt;
    tnn_fgemm_fn fgemm_bf16;
    const uint16_t * w_bf16;
};

/* out [d + 1, n]: for tokens [t0, t1) of n, column t = dL/dh_t (of the mean
 * loss over all n tokens), then the loss of token t. h: column t at h + t *
 * h_stride; labels: int32 [n], a token with a label outside [0, vocab)
 * (-1: masked) gets loss 0 and gradient 0. */
void tnn_head_loss_avx512(const struct tnn_head_products * products, int64_t d, int64_t vocab, const float * h,
                          int64_t h_stride, const int32_t * labels, int64_t n, int64_t t0, int64_t t1, float * out,
                          void * scratch);
void tnn_head_loss_avx2(const struct tnn_head_products * products, int64_t d, int64_t vocab, const float * h,
                        int64_t h_stride, const int32_t * labels, int64_t n, int64_t t0, int64_t t1, float * out,
                        void * scratch);

/* -log softmax(z)[label] of one token's logits z [vocab], summed as
 * tnn_head_loss sums them, so that a graph holding the logits (the forward
 * beside a fused training graph) reports the same loss to the bit. */
float tnn_token_loss_avx512(const float * z, int64_t vocab, int32_t label);
float tnn_token_loss_avx2(const float * z, int64_t vocab, int32_t label);

/* ---- attention_bf16: causal attention a block of keys at a time ---------- *
 *
 * Training attention through ggml's ops writes each head's T x T scores,
 * softmax weights and their gradients to memory and reads them back, about
 * ten passes of 64 MB a head at 4096 tokens: that traffic, not the
 * multiplies, bounded a 1 B model's step at 4096 tokens (41 of 71 s). These
 * kernels hold a 64 x 64 block of them at a time in cache, as flash
 * attention does, with the products in bfloat16 (the products of
 * --precision bf16) and the softmax, its gradient and every sum in float32:
 *   forward:  per block of 64 queries, over the key blocks up to its own,
 *             the scores S = scale Q K^T, the running max and sum of each
 *             query's exp(S) (online softmax), O += P V; then O /= sum, and
 *             lse = log2 of each query's sum of 2^(S log2 e) kept for the
 *             backward.
 *   backward: per block of 64 keys, over the query blocks from its own on,
 *             and over the query heads sharing its key head: P from lse,
 *             dV += P^T dO, dP = dO V^T, dS = P (dP - D), D = rowsum(dO O),
 *             dK += scale dS^T Q, and dQ += scale dS K into the thread's own
 *             part (the parts summed after the node: no two threads add to
 *             one value, so the bits depend on the thread count only).
 * Q, K, V and dO are rounded to bfloat16 once (as autocast rounds them); P
 * and dS go into the products as two bfloat16 terms each, high and low (to
 * about 16 bits: rounded once, they moved a LoRA run's losses twice as far
 * from float32's as ggml's attention did), and D takes dO rounded as dP
 * does. So the results are float64 attention's on the rounded Q, K, V and
 * dO to float32's rounding (tests/test_cpu_kernels.py). The mask is causal
 * (key <= query) and nothing else. Query matrix m reads key and value
 * matrix m / group (grouped-query attention). head_dim is a multiple of 32,
 * at most TNN_ATTENTION_MAX_HEAD_DIM. Two variants: avx512 (vdpbf16ps) and
 * amx (the tiles; the same layouts, summed in the tiles' order). */
#define TNN_ATTENTION_BLOCK 64
#define TNN_ATTENTION_MAX_HEAD_DIM 256

/* One operand: element (matrix m, token t, dim d) at data[m * matrix + t *
 * token + d * dim]; or, with per_sequence > 0 (a batch's heads as they lie
 * in a [head_dim, heads, tokens] tensor), at data[(m % per_sequence) *
 * matrix + (m / per_sequence) * sequence + t * token + d * dim]. */
struct tnn_attention_operand {
    float * data;
    int64_t matrix, token, dim;
    int64_t per_sequence, sequence;   /* 0: one run of matrices */
};

/* Where matrix m of x begins. */
static inline float * tnn_attention_matrix(const struct tnn_attention_operand * x, int64_t m) {
    return x->per_sequence > 0 ? x->data + (m % x->per_sequence) * x->matrix + (m / x->per_sequence) * x->sequence
                               : x->data + m * x->matrix;
}

struct tnn_attention_args {
    int64_t head_dim, t_seq, n_queries, group;   /* n_queries query matrices, n_queries / group key matrices */
    float scale;                                 /* of the scores: S = scale Q K^T */
    struct tnn_attention_operand q, k, v;
    struct tnn_attention_operand out;            /* forward: written; backward: the forward's output */
    float * lse;                                 /* [n_queries][t_seq]: forward: written; backward: read */
    struct tnn_attention_operand dout;           /* backward: the output's gradient */
    struct tnn_attention_operand dk, dv;         /* backward: written */
    struct tnn_attention_operand dq;             /* backward: thread ith's part at dq.data + ith * dq_part;
                                                    parts [nth, dq_parts) are zeroed */
    int64_t dq_part, dq_parts;
};

/* Scratch bytes a thread needs for either pass. */
size_t tnn_attention_bf16_scratch_bytes(int64_t head_dim, int64_t t_seq, int64_t group);
/* The forward's share of thread ith of nth (shares balanced by the causal work). */
void tnn_attention_bf16_forward_avx512(const struct tnn_attention_args * args, void * scratch, int ith, int nth);
/* The backward's share of thread ith of nth. */
void tnn_attention_bf16_backward_avx512(const struct tnn_attention_args * args, void * scratch, int ith, int nth);
/* The same with the products on the AMX-BF16 tiles (summed in the tiles'
 * order: not avx512's bits). */
void tnn_attention_bf16_forward_amx(const struct tnn_attention_args * args, void * scratch, int ith, int nth);
void tnn_attention_bf16_backward_amx(const struct tnn_attention_args * args, void * scratch, int ith, int nth);

/* ---- adamw: the AdamW update ----------------------------------------------- *
 *
 * ggml's CPU AdamW is a scalar loop: a square root and a division per
 * parameter, about 2.5 ns each on one core here, so the update of
 * SmolLM2's 135 M parameters took 0.18 s, an eighth of a full training
 * step, short of the memory traffic that bounds it. This kernel does the
 * same arithmetic 16 parameters at a time, each rounding where ggml's build
 * rounds (it contracts the multiply-adds marked below into FMAs), so the
 * weights and moments are the same to the bit.
 *
 * Per parameter, with hp = [alpha, beta1, beta2, eps, wd, beta1h, beta2h]:
 *     m = beta1 m + (1 - beta1) g                        (FMA)
 *     v = beta2 v + (1 - beta2) g^2                      (FMA)
 *     w = keep w - alpha (beta1h m) / (sqrt(beta2h v) + eps)   (FMA)
 * with keep = 1 - alpha wd (FMA). */

/* ---- backward through time (recurrence.c) --------------------------------
 * A recurrence on a state of state_floats floats from zero, t_seq tokens:
 * step(state, t) turns the state before token t into the one after it;
 * back(before, after, t) is token t's backward, given both states, and
 * turns grad (state_floats: the loss's gradient with respect to the state
 * after the token) into the one before it. Where tnn_starts_sample says
 * so, a token starts from a zero state (a packed row's next sample): step
 * and back are given zeros for the state before it, and the gradient
 * before it is dropped. tnn_recurrence_backward runs step forward, then
 * back from the last token to the first, each chunk of 64 tokens' states
 * made again from the one kept before it, in mem (tnn_recurrence_floats
 * floats). */
struct tnn_recurrence {
    int64_t state_floats, t_seq;
    void (*step)(float * state, int64_t t, void * ctx);
    void (*back)(const float * before, const float * after, int64_t t, void * ctx);
    void * ctx;
    const int32_t * positions;   /* the sequence's [t_seq], or NULL (tnn_starts_sample) */
    float * grad;
};

/* Whether token t of a sequence whose positions these are starts a sample
 * from a zero state: a packed row's later samples begin at position 0, as
 * its attention mask does (positions NULL: one sample). */
static inline bool tnn_starts_sample(const int32_t * positions, int64_t t) {
    return positions != NULL && t > 0 && positions[t] == 0;
}

/* Sequence seq's positions in positions [t_seq, n_seqs], or NULL for none. */
static inline const int32_t * tnn_sequence_positions(const int32_t * positions, int64_t t_seq, int64_t seq) {
    return positions != NULL ? positions + t_seq * seq : NULL;
}

/* Where a recurrent node's scratch could not be had: NaN in this thread's
 * (head, sequence) items of values [width, heads, t_seq, n_seqs] and of
 * per_head [heads, t_seq, n_seqs] (either NULL), so that the step's loss
 * says so (not finite) rather than being silently wrong. */
void tnn_recurrence_poison(float * values, float * per_head, int64_t width, int64_t heads, int64_t t_seq,
                           int64_t n_seqs, int ith, int nth);

size_t tnn_recurrence_floats(int64_t state_floats, int64_t t_seq);
void tnn_recurrence_backward(const struct tnn_recurrence * recurrence, float * mem);

/* ---- the gated delta rule (delta_net.c) ---------------------------------
 * Qwen 3.5's linear attention with a scalar gate per head and token, each
 * (head, sequence) from a zero state (the module comment says the rule).
 * Every array contiguous: q, k, v, out and their gradients [n, heads,
 * t_seq, n_seqs] (ggml's order: n the fastest), g and beta [heads, t_seq,
 * n_seqs]. Work items (head, sequence) are shared out between nth threads.
 * The backward writes every input's gradient from dout; it keeps
 * (t_seq / 64 + 67) x 16 rows of n floats a thread
 * (tnn_delta_net_backward_floats),
 * malloc'ed (where that fails, the thread's outputs are NaN: the loss then
 * says so).
 *
 * The "recurrent" kernel is a token's step over the state's rows, each way
 * (delta_step: the state after the token, in place, and the output;
 * delta_back: the step's backward); its variants portable, avx2
 * and avx512 are one C body compiled for each, the same bits. */
struct tnn_recurrent_kernels {
    void (*delta_step)(float * m, int64_t rows, int64_t n, const float * k, const float * v, float decay,
                       float beta, const float * q, float q_scale, float * out);
    void (*delta_back)(const float * prev, float * dm, int64_t rows, int64_t n, const float * q, const float * k,
                       const float * v, const float * dout, float decay, float beta, float scale, float * dq,
                       float * dk, float * dv, float * dgate, float * dbeta);
};
extern const struct tnn_recurrent_kernels tnn_recurrent_portable;
extern const struct tnn_recurrent_kernels tnn_recurrent_avx2;
extern const struct tnn_recurrent_kernels tnn_recurrent_avx512;

struct tnn_delta_net_args {
    int64_t n, heads, t_seq, n_seqs;
    const float *q, *k, *v, *g, *beta;
    float * out;                              /* forward */
    const float * dout;                       /* backward: in */
    float *dq, *dk, *dv, *dg, *dbeta;         /* backward: out */
    const struct tnn_recurrent_kernels * rows;   /* NULL: tnn_recurrent_portable */
    const int32_t * positions;                /* [t_seq, n_seqs], or NULL (tnn_starts_sample) */
};
void tnn_delta_net_forward(const struct tnn_delta_net_args * args, int ith, int nth);
void tnn_delta_net_backward(const struct tnn_delta_net_args * args, int ith, int nth);
size_t tnn_delta_net_backward_floats(int64_t n, int64_t t_seq);

/* ---- the input gradient through frozen experts (experts.c) ----------------
 * A mixture-of-experts layer's products, y[:, s, t] = W_e x[:, s % r, t]
 * with e = ids[s, t] (ggml's MUL_MAT_ID), through experts kept as stored
 * (no float copy of an expert, ever): each slot's input gradient
 *     dx[:, s, t] = W_e^T dy[:, s, t]
 * in float32. A work item is (expert, block of `width` of W's columns: whole
 * quantization blocks, tnn_experts_block_width); its slots' columns of dy
 * are gathered, W_e's block dequantized K_CHUNK rows at a time, and the
 * product, on fgemm (NULL: portable loops), summed over W's rows in order,
 * so every value is the same bits for any thread count. Scratch is
 * malloc'ed per thread (where that fails, the thread's outputs are NaN: the
 * loss says so). */
#define TNN_EXPERTS_MAX 1024
struct tnn_experts_args {
    int64_t d_in, d_out;          /* each expert W [d_out rows of d_in] */
    int64_t n_experts, n_used, n_tokens;   /* n_experts at most TNN_EXPERTS_MAX */
    const char * w;               /* expert e's row j at w + e * expert_bytes + j * row_bytes */
    size_t expert_bytes, row_bytes;
    int64_t block;                /* values per quantization block (1: F32, F16, BF16) */
    void (*to_float)(const void * blocks, float * values, int64_t n);   /* n values of whole blocks */
    const int32_t * ids;          /* [n_used, n_tokens]: slot s of token t at t * ids_ld + s */
    int64_t ids_ld;
    const float * dy;             /* [d_out, n_used, n_tokens]: slot s of token t the column t * n_used + s */
    float * dx;                   /* [d_in, n_used, n_tokens]; a slot naming no expert gets zeros */
    float * y;                    /* the forward's (tnn_experts_forward) [d_out, n_used, n_tokens] */
    tnn_fgemm_fn fgemm;           /* NULL: portable loops */
    /* the weight gradient's (F32 experts, a full fine-tune): x [d_in, x_slots, n_tokens]
     * (x_slots 1: every slot reads its token's one x, else n_used) and dw [d_in, d_out,
     * n_experts], an expert no slot chose all zeros */
    const float * x;
    int64_t x_slots;
    float * dw;
};
int64_t tnn_experts_block_width(int64_t block);
void tnn_experts_input_gradient(const struct tnn_experts_args * args, int ith, int nth);
/* The forward y[:, s, t] = W_e x[:, s % x_slots, t] the same way, in float32
 * (where ggml's MUL_MAT_ID is slow on the experts' type: MXFP4): work items
 * (expert, TNN_EXPERTS_FORWARD_ROWS of W's rows), the expert's slots' x
 * gathered, W_e's rows dequantized K_CHUNK columns at a time, the product
 * summed over them in order: any thread count the same bits. */
#define TNN_EXPERTS_FORWARD_ROWS 64
void tnn_experts_forward(const struct tnn_experts_args * args, int ith, int nth);
/* dw_e = sum over the slots that chose e of dy x^T, in float32: work items
 * (expert, 64 rows of W), each summed over the slots in order. */
void tnn_experts_weight_gradient(const struct tnn_experts_args * args, int ith, int nth);

/* ---- the causal depthwise convolution (causal_conv.c) --------------------
 * Portable C: ggml's GGML_OP_SSM_CONV of each sequence from a zero state,
 * on the token-major input. x, y and their gradients [channels, t_seq,
 * n_seqs] (channels fastest), w and dw [taps, channels] (taps fastest),
 * taps at most TNN_CAUSAL_CONV_TAPS_MAX. Blocks of channels are shared out
 * between nth threads; any nth gives the same bits. The backward writes dx
 * and dw where they are not NULL: dx reads w and dy, dw x and dy (apart, so
 * that LoRA, which wants no dw, keeps no x for it). */
#define TNN_CAUSAL_CONV_TAPS_MAX 64
struct tnn_causal_conv_args {
    int64_t channels, taps, t_seq, n_seqs;
    const float *x, *w;
    float * y;                                /* forward */
    const float * dy;                         /* backward: in */
    float *dx, *dw;                           /* backward: out */
    const int32_t * positions;                /* [t_seq, n_seqs], or NULL (tnn_starts_sample) */
};
void tnn_causal_conv_forward(const struct tnn_causal_conv_args * args, int ith, int nth);
void tnn_causal_conv_backward(const struct tnn_causal_conv_args * args, int ith, int nth);

/* ---- Mamba-2's selective scan (ssm_scan.c) -----------------------------
 * Portable C, no variants: ggml's GGML_OP_SSM_SCAN with a scalar decay per
 * head, each (head, sequence) from a zero state (the module comment says
 * the scan). Every array contiguous: x, y and their gradients [head_dim,
 * heads, t_seq, n_seqs] (ggml's order), dt [heads, t_seq, n_seqs] (before
 * its softplus), a [heads] (A, below 0), b and c [state, groups, t_seq,
 * n_seqs]. Work items (head, sequence) are shared out between nth threads.
 * The backward writes dx and ddt whole, da [heads, n_seqs] (each
 * sequence's share of dA) and db, dc [heads / groups, state, groups,
 * t_seq, n_seqs] (each head's share of its group's); it keeps
 * tnn_ssm_scan_backward_floats a thread, malloc'ed (where that fails, the
 * thread's outputs are NaN).  */
struct tnn_ssm_scan_args {
    int64_t head_dim, heads, state, groups, t_seq, n_seqs;
    const float *x, *dt, *a, *b, *c;
    float * y;                                /* forward */
    const float * dy;                         /* backward: in */
    float *dx, *ddt, *da, *db, *dc;           /* backward: out */
    const int32_t * positions;                /* [t_seq, n_seqs], or NULL (tnn_starts_sample) */
};
void tnn_ssm_scan_forward(const struct tnn_ssm_scan_args * args, int ith, int nth);
void tnn_ssm_scan_backward(const struct tnn_ssm_scan_args * args, int ith, int nth);
size_t tnn_ssm_scan_backward_floats(int64_t head_dim, int64_t state, int64_t t_seq);

/* Update parameters [i0, i1) of w, m and v in place from the gradient g. */
void tnn_adamw_avx512(float * w, const float * g, float * m, float * v, const float * hp, int64_t i0, int64_t i1);
void tnn_adamw_avx2(float * w, const float * g, float * m, float * v, const float * hp, int64_t i0, int64_t i1);

/* ---- activations: SwiGLU's backward, RMS norm both ways ------------------- *
 *
 * Passes over the [d, tokens] activations that ggml runs scalar:
 *   - ggml's backward of swiglu(g, up) = silu(g) up is four ops: dy up,
 *     silu_back (a scalar expf per value: SmolLM2's batch-4 LoRA step spent
 *     7% of its time there), silu(g) and silu(g) dy;
 *   - rms_norm and rms_norm_back sum each row's squares (and x dz) in one
 *     double, a chain of dependent adds (~0.5 ms per [576, 1024]).
 * These kernels take 16 values at a time, with an exponential of their own
 * (about 2 ulps) and the row sums in 16 float lanes: not ggml's bits, so
 * --precision bf16 only (graph/activations.c). */

/* SwiGLU's gradients over values [i0, i1), s = 1 / (1 + exp(-g)):
 *     dgate = ((dy up) s) (1 + g (1 - s))      (up NULL: dy alone)
 *     dup   = (g s) dy
 * dgate or dup NULL: not computed. */
void tnn_swiglu_back_avx512(const float * g, const float * up, const float * dy, float * dgate, float * dup,
                            int64_t i0, int64_t i1);
/* Rows [r0, r1) of d values (row r at x + r * ldx, y + r * ldy):
 * y = x / sqrt(mean(x^2) + eps), times w [d] where w is not NULL. */
void tnn_rms_norm_avx512(const float * x, int64_t ldx, const float * w, float eps, float * y, int64_t ldy,
                         int64_t d, int64_t r0, int64_t r1);
/* Its backward over rows [r0, r1): dx = (dz - x sum(x dz) / (sum(x^2) +
 * eps d)) / sqrt(mean(x^2) + eps), as ggml's rms_norm_back writes it. */
void tnn_rms_norm_back_avx512(const float * dz, int64_t ldz, const float * x, int64_t ldx, float eps, float * dx,
                              int64_t lddx, int64_t d, int64_t r0, int64_t r1);

#endif
