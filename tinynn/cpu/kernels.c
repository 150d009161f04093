/* The kernel layer's choice of variants (kernels.h), and what every
 * variant shares: the packed-panel layout of qgemm and the scratch sizes. */
#include "kernels.h"
#include "layout.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#endif

static const char * const kernel_names[TNN_CPU_KERNEL_COUNT] = { "qgemm",       "fgemm",      "head_loss",
                                                                 "adamw",       "fgemm_bf16", "attention_bf16",
                                                                 "activations", "recurrent" };
static const char * const variant_names[TNN_CPU_VARIANT_COUNT] = { "none", "avx2", "avxvnni", "avx512", "amx" };

const char * tnn_cpu_kernel_name(enum tnn_cpu_kernel kernel) {
    return kernel >= 0 && kernel < TNN_CPU_KERNEL_COUNT ? kernel_names[kernel] : "?";
}

const char * tnn_cpu_variant_name(enum tnn_cpu_variant variant) {
    return (int) variant >= 0 && variant < TNN_CPU_VARIANT_COUNT ? variant_names[variant] : "?";
}

static int index_of(const char * name, const char * const * names, int count) {
    for (int i = 0; name != NULL && i < count; ++i) {
        if (strcmp(name, names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

int tnn_cpu_kernel_by_name(const char * name) { return index_of(name, kernel_names, TNN_CPU_KERNEL_COUNT); }
int tnn_cpu_variant_by_name(const char * name) { return index_of(name, variant_names, TNN_CPU_VARIANT_COUNT); }

/* ---- CPU levels ------------------------------------------------------------ */

#define AVX2 TNN_FEATURE_AVX2
#define AVX512 (TNN_FEATURE_AVX2 | TNN_FEATURE_AVX512)
#define AVX512VNNI (AVX512 | TNN_FEATURE_AVX512VNNI)

/* ggml's x86-64 variant names (vendor/ggml/src/CMakeLists.txt) and the
 * features of ours each allows. */
static const struct {
    const char * name;
    unsigned features;
} levels[] = {
    { "x64", 0 },
    { "sse42", 0 },
    { "sandybridge", 0 },
    { "ivybridge", 0 },
    { "piledriver", 0 },
    { "haswell", AVX2 },
    { "alderlake", AVX2 | TNN_FEATURE_AVXVNNI },
    { "skylakex", AVX512 },
    { "cannonlake", AVX512 },
    { "cascadelake", AVX512VNNI },
    { "icelake", AVX512VNNI },
    { "cooperlake", AVX512VNNI | TNN_FEATURE_AVX512BF16 },
    { "zen4", AVX512VNNI | TNN_FEATURE_AVX512BF16 },
    { "sapphirerapids", TNN_FEATURES_ALL },
};

bool tnn_cpu_level_features(const char * level, unsigned * features) {
    for (size_t i = 0; level != NULL && i < sizeof levels / sizeof levels[0]; ++i) {
        if (strcmp(level, levels[i].name) == 0) {
            *features = levels[i].features;
            return true;
        }
    }
    return false;
}

/* ---- the variants, and what each needs ----------------------------------- */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#if defined(__linux__)
/* Linux hands out the AMX tile state only to a process that asks. */
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18
static bool amx_permitted(void) { return syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0; }
#else
static bool amx_permitted(void) { return false; }
#endif

unsigned tnn_cpu_features(void) {
    static int known = 0;
    static unsigned features = 0;
    if (known) {
        return features;
    }
    /* the builtins also ask the OS whether it saves the registers; the
     * newer features, which they may not know, come from cpuid leaf 7 */
    __builtin_cpu_init();
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0, eax1 = 0, unused = 0;
    __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx);
    __get_cpuid_count(7, 1, &eax1, &unused, &unused, &unused);
    unsigned f = 0;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c")) {
        f |= TNN_FEATURE_AVX2;
        f |= (eax1 >> 4) & 1 ? TNN_FEATURE_AVXVNNI : 0;                      /* AVX-VNNI */
    }
    if ((f & TNN_FEATURE_AVX2) && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
        f |= TNN_FEATURE_AVX512;
        f |= __builtin_cpu_supports("avx512vnni") ? TNN_FEATURE_AVX512VNNI : 0;
        f |= (eax1 >> 5) & 1 ? TNN_FEATURE_AVX512BF16 : 0;                   /* AVX512-BF16 */
        const bool amx = ((edx >> 22) & 1) && ((edx >> 24) & 1) && ((edx >> 25) & 1); /* AMX-BF16, -TILE, -INT8 */
        f |= amx && amx_permitted() ? TNN_FEATURE_AMX : 0;
    }
    features = f;
    known = 1;
    return features;
}

/* Each variant of each kernel this build has: the features it needs and
 * where its entry points go. */
struct variant_entry {
    enum tnn_cpu_kernel kernel;
    enum tnn_cpu_variant variant;
    unsigned needs;
    void (*set)(struct tnn_cpu_kernels * k);
};

static void qgemm_avx2(struct tnn_cpu_kernels * k) {
    k->qgemm = tnn_qgemm_avx2;
    k->dequantize_q4_K = tnn_dequantize_q4_K_avx2;
    k->dequantize_q6_K = tnn_dequantize_q6_K_avx2;
    k->qgemm_quantize = tnn_qgemm_quantize_avx2;
    k->qpanel_quantize = tnn_qpanel_quantize_avx2;
    k->qpanel_quantize_columns = tnn_qpanel_quantize_columns_avx2;
}
static void qgemm_avxvnni(struct tnn_cpu_kernels * k) {
    k->qgemm = tnn_qgemm_avxvnni;
    k->dequantize_q4_K = tnn_dequantize_q4_K_avx2;
    k->dequantize_q6_K = tnn_dequantize_q6_K_avx2;
    k->qgemm_quantize = tnn_qgemm_quantize_avx2;
    k->qpanel_quantize = tnn_qpanel_quantize_avx2;
    k->qpanel_quantize_columns = tnn_qpanel_quantize_columns_avx2;
}
static void qgemm_avx512(struct tnn_cpu_kernels * k) {
    k->qgemm = tnn_qgemm_avx512;
    k->dequantize_q4_K = tnn_dequantize_q4_K_avx2;
    k->dequantize_q6_K = tnn_dequantize_q6_K_avx2;
    k->qgemm_quantize = tnn_qgemm_quantize_avx512;
    k->qpanel_quantize = tnn_qpanel_quantize_avx512;
    k->qpanel_quantize_columns = tnn_qpanel_quantize_columns_avx512;
}
static void qgemm_amx(struct tnn_cpu_kernels * k) {
    k->qgemm = tnn_qgemm_amx;
    k->dequantize_q4_K = tnn_dequantize_q4_K_avx2;
    k->dequantize_q6_K = tnn_dequantize_q6_K_avx2;
    k->qgemm_quantize = tnn_qgemm_quantize_avx512;
    k->qpanel_quantize = tnn_qpanel_quantize_avx512;
    k->qpanel_quantize_columns = tnn_qpanel_quantize_columns_avx512;
}
static void fgemm_avx2(struct tnn_cpu_kernels * k) {
    k->fgemm = tnn_fgemm_avx2;
    k->fgemm_skinny = tnn_fgemm_skinny_avx2;
}
static void fgemm_avx512(struct tnn_cpu_kernels * k) {
    k->fgemm = tnn_fgemm_avx512;
    k->fgemm_skinny = tnn_fgemm_skinny_avx512;
}
static void head_loss_avx2(struct tnn_cpu_kernels * k) {
    k->head_loss = tnn_head_loss_avx2;
    k->token_loss = tnn_token_loss_avx2;
}
static void head_loss_avx512(struct tnn_cpu_kernels * k) {
    k->head_loss = tnn_head_loss_avx512;
    k->token_loss = tnn_token_loss_avx512;
}
static void adamw_avx2(struct tnn_cpu_kernels * k) { k->adamw = tnn_adamw_avx2; }
static void adamw_avx512(struct tnn_cpu_kernels * k) { k->adamw = tnn_adamw_avx512; }
static void fgemm_bf16_avx512(struct tnn_cpu_kernels * k) {
    k->fgemm_bf16 = tnn_fgemm_bf16_avx512;
    k->fgemm_bf16_tiles = NULL;
}
static void fgemm_bf16_amx(struct tnn_cpu_kernels * k) {
    k->fgemm_bf16 = tnn_fgemm_bf16_amx;
    k->fgemm_bf16_tiles = tnn_fgemm_bf16_amx_tiles;
}
static void attention_bf16_avx512(struct tnn_cpu_kernels * k) {
    k->attention_forward = tnn_attention_bf16_forward_avx512;
    k->attention_backward = tnn_attention_bf16_backward_avx512;
}
static void attention_bf16_amx(struct tnn_cpu_kernels * k) {
    k->attention_forward = tnn_attention_bf16_forward_amx;
    k->attention_backward = tnn_attention_bf16_backward_amx;
}

static void activations_avx512(struct tnn_cpu_kernels * k) {
    k->swiglu_back = tnn_swiglu_back_avx512;
    k->rms_norm = tnn_rms_norm_avx512;
    k->rms_norm_back = tnn_rms_norm_back_avx512;
}

static void recurrent_avx2(struct tnn_cpu_kernels * k) { k->recurrent = &tnn_recurrent_avx2; }
static void recurrent_avx512(struct tnn_cpu_kernels * k) { k->recurrent = &tnn_recurrent_avx512; }

static const struct variant_entry variants[] = {
    { TNN_KERNEL_QGEMM, TNN_CPU_AVX2, AVX2, qgemm_avx2 },
    { TNN_KERNEL_QGEMM, TNN_CPU_AVXVNNI, AVX2 | TNN_FEATURE_AVXVNNI, qgemm_avxvnni },
    { TNN_KERNEL_QGEMM, TNN_CPU_AVX512, AVX512VNNI, qgemm_avx512 },
    { TNN_KERNEL_QGEMM, TNN_CPU_AMX, AVX512VNNI | TNN_FEATURE_AMX, qgemm_amx },
    { TNN_KERNEL_FGEMM, TNN_CPU_AVX2, AVX2, fgemm_avx2 },
    { TNN_KERNEL_FGEMM, TNN_CPU_AVX512, AVX512, fgemm_avx512 },
    { TNN_KERNEL_HEAD_LOSS, TNN_CPU_AVX2, AVX2, head_loss_avx2 },
    { TNN_KERNEL_HEAD_LOSS, TNN_CPU_AVX512, AVX512, head_loss_avx512 },
    { TNN_KERNEL_ADAMW, TNN_CPU_AVX2, AVX2, adamw_avx2 },
    { TNN_KERNEL_ADAMW, TNN_CPU_AVX512, AVX512, adamw_avx512 },
    { TNN_KERNEL_FGEMM_BF16, TNN_CPU_AVX512, AVX512 | TNN_FEATURE_AVX512BF16, fgemm_bf16_avx512 },
    { TNN_KERNEL_FGEMM_BF16, TNN_CPU_AMX, AVX512 | TNN_FEATURE_AVX512BF16 | TNN_FEATURE_AMX, fgemm_bf16_amx },
    { TNN_KERNEL_ATTENTION_BF16, TNN_CPU_AVX512, AVX512 | TNN_FEATURE_AVX512BF16, attention_bf16_avx512 },
    { TNN_KERNEL_ATTENTION_BF16, TNN_CPU_AMX, AVX512 | TNN_FEATURE_AVX512BF16 | TNN_FEATURE_AMX,
      attention_bf16_amx },
    { TNN_KERNEL_ACTIVATIONS, TNN_CPU_AVX512, AVX512, activations_avx512 },
    { TNN_KERNEL_RECURRENT, TNN_CPU_AVX2, AVX2, recurrent_avx2 },
    { TNN_KERNEL_RECURRENT, TNN_CPU_AVX512, AVX512, recurrent_avx512 },
};

static const struct variant_entry * find_variant(enum tnn_cpu_kernel kernel, enum tnn_cpu_variant variant) {
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; ++i) {
        if (variants[i].kernel == kernel && variants[i].variant == variant) {
            return &variants[i];
        }
    }
    return NULL;
}

#else

unsigned tnn_cpu_features(void) { return 0; }

struct variant_entry {
    unsigned needs;
    void (*set)(struct tnn_cpu_kernels * k);
};

static const struct variant_entry * find_variant(enum tnn_cpu_kernel kernel, enum tnn_cpu_variant variant) {
    (void) kernel;
    (void) variant;
    return NULL;
}

#endif

static void clear(struct tnn_cpu_kernels * k, enum tnn_cpu_kernel kernel) {
    switch (kernel) {
        case TNN_KERNEL_QGEMM:
            k->qgemm = NULL;
            k->qgemm_quantize = NULL;
            k->dequantize_q4_K = NULL;
            k->dequantize_q6_K = NULL;
            break;
        case TNN_KERNEL_FGEMM:
            k->fgemm = NULL;
            k->fgemm_skinny = NULL;
            break;
        case TNN_KERNEL_HEAD_LOSS:
            k->head_loss = NULL;
            k->token_loss = NULL;
            break;
        case TNN_KERNEL_ADAMW: k->adamw = NULL; break;
        case TNN_KERNEL_FGEMM_BF16:
            k->fgemm_bf16 = NULL;
            k->fgemm_bf16_tiles = NULL;
            break;
        case TNN_KERNEL_ATTENTION_BF16:
            k->attention_forward = NULL;
            k->attention_backward = NULL;
            break;
        case TNN_KERNEL_ACTIVATIONS:
            k->swiglu_back = NULL;
            k->rms_norm = NULL;
            k->rms_norm_back = NULL;
            break;
        case TNN_KERNEL_RECURRENT: k->recurrent = NULL; break;
        default: break;
    }
}

/* Set variant of kernel when the CPU has what it needs within allowed. */
static bool set_within(struct tnn_cpu_kernels * k, enum tnn_cpu_kernel kernel, enum tnn_cpu_variant variant,
                       unsigned allowed) {
    if ((int) kernel < 0 || kernel >= TNN_CPU_KERNEL_COUNT) {
        return false;
    }
    if (variant == TNN_CPU_NONE) {
        clear(k, kernel);
        k->variant[kernel] = TNN_CPU_NONE;
        return true;
    }
    const struct variant_entry * entry = find_variant(kernel, variant);
    if (entry == NULL || (entry->needs & ~(tnn_cpu_features() & allowed)) != 0) {
        return false;
    }
    entry->set(k);
    k->variant[kernel] = variant;
    return true;
}

bool tnn_cpu_kernel_set(struct tnn_cpu_kernels * k, enum tnn_cpu_kernel kernel, enum tnn_cpu_variant variant) {
    return set_within(k, kernel, variant, TNN_FEATURES_ALL);
}

/* Whether the comma-separated list names kernel; *ok false when it names
 * something that is no kernel. */
static bool lists(const char * list, const char * kernel, bool * ok) {
    bool found = false;
    for (const char * p = list; *p != '\0';) {
        const size_t len = strcspn(p, ",");
        bool known = false;
        for (int i = 0; i < TNN_CPU_KERNEL_COUNT; ++i) {
            known = known || (strlen(kernel_names[i]) == len && strncmp(p, kernel_names[i], len) == 0);
        }
        *ok = *ok && known;
        found = found || (strlen(kernel) == len && strncmp(p, kernel, len) == 0);
        p += len + (p[len] == ',');
    }
    return found;
}

bool tnn_cpu_kernels_choose(const char * setting, unsigned allowed, struct tnn_cpu_kernels * k) {
    *k = (struct tnn_cpu_kernels){ 0 };
    const bool all = setting == NULL || setting[0] == '\0' || strcmp(setting, "on") == 0;
    if (!all && strcmp(setting, "off") == 0) {
        return true;
    }
    bool ok = true;
    for (int i = 0; i < TNN_CPU_KERNEL_COUNT; ++i) {
        if (!all && !lists(setting, kernel_names[i], &ok)) {
            continue;
        }
        for (int v = TNN_CPU_VARIANT_COUNT - 1; v > TNN_CPU_NONE; --v) {
            if (set_within(k, (enum tnn_cpu_kernel) i, (enum tnn_cpu_variant) v, allowed)) {
                break;
            }
        }
    }
    if (!ok) {
        *k = (struct tnn_cpu_kernels){ 0 };
        return false;
    }
    /* the fused head multiplies by the head's packed panels, which only
     * qgemm's rewrite makes */
    if (k->qgemm == NULL) {
        tnn_cpu_kernel_set(k, TNN_KERNEL_HEAD_LOSS, TNN_CPU_NONE);
    }
    return true;
}

/* ---- qgemm's packed panels (every variant reads them) -------------------- */

size_t tnn_qgemm_scratch_bytes(const struct tnn_qpanels * a, int64_t k, int64_t n, bool quantized) {
    /* the quantized columns, one spread panel, the columns as int16
     * (layout.h); then a pass of panels and pack's work (tnn_qpanels_get) */
    const size_t own = tnn_align64(tnn_qgemm_layout(k, n, quantized).total);
    if (a == NULL || a->pack == NULL) {
        return own;
    }
    const size_t panel_bytes = (size_t) (k / TNN_QBLOCK) * tnn_qpanel_block_bytes(a->format);
    return own + tnn_align64((size_t) a->pass * panel_bytes) + a->work_bytes;
}

size_t tnn_qgemm_quantized_bytes(int64_t k, int64_t n) {
    return tnn_align64((size_t) (k / TNN_QBLOCK) * (size_t) n * sizeof(struct tnn_qcol));
}

/* Stored block layouts (ggml-common.h): Q8_0 {fp16 d; int8 q[32]},
 * Q4_1 {fp16 d; fp16 m; uint8 qs[16]}, qs[t] = q[t] | q[t + 16] << 4. */
#define Q8_0_BYTES 34
#define Q4_1_BYTES 20

/* Write one stored Q8_0 block (34 bytes) as row r of a TNN_QPANEL_Q8_0
 * panel block. */
static void put_q8_0(void * panel_block, int r, const void * block) {
    uint8_t * out = panel_block;
    const uint8_t * blk = block;
    memcpy(out + 2 * r, blk, 2); /* d */
    for (int g = 0; g < 8; ++g) {
        for (int t = 0; t < 4; ++t) {
            out[32 + g * 64 + r * 4 + t] = (uint8_t) (blk[2 + 4 * g + t] ^ 0x80);
        }
    }
}

void tnn_qpanel_pack(enum tnn_qpanel_format format, const void * src, size_t row_bytes, int64_t k, int64_t r0,
                     void * dst) {
    const int64_t kb = k / TNN_QBLOCK;
    const size_t bb = tnn_qpanel_block_bytes(format);
    uint8_t * panel = (uint8_t *) dst + (size_t) (r0 / TNN_QPANEL_ROWS) * (size_t) kb * bb;
    for (int64_t b = 0; b < kb; ++b) {
        uint8_t * out = panel + (size_t) b * bb;
        for (int r = 0; r < TNN_QPANEL_ROWS; ++r) {
            const uint8_t * row = (const uint8_t *) src + (size_t) r * row_bytes;
            if (format == TNN_QPANEL_Q8_0) {
                put_q8_0(out, r, row + (size_t) b * Q8_0_BYTES);
            } else {
                const uint8_t * blk = row + (size_t) b * Q4_1_BYTES;
                memcpy(out + 2 * r, blk, 2); /* d */
                memcpy(out + 32 + 2 * r, blk + 2, 2); /* m */
                for (int g = 0; g < 4; ++g) {
                    memcpy(out + 64 + g * 64 + r * 4, blk + 4 + 4 * g, 4);
                }
            }
        }
    }
}

/* ---- scratch of fgemm and head_loss --------------------------------------- */

size_t tnn_fgemm_scratch_bytes(void) { return (size_t) TNN_FGEMM_DEPTH * TNN_FGEMM_ROWS * sizeof(float); }

size_t tnn_fgemm_bf16_scratch_bytes(void) {
    /* up to TNN_FGEMM_BF16_PANELS panels of A and amx's columns of B
     * rounded at once, each as deep as the deeper variant's slice of k
     * (amx's), in bfloat16 */
    const int64_t depth = TNN_FGEMM_BF16_AMX_DEPTH > TNN_FGEMM_DEPTH ? TNN_FGEMM_BF16_AMX_DEPTH : TNN_FGEMM_DEPTH;
    return ((size_t) TNN_FGEMM_BF16_PANELS * TNN_FGEMM_ROWS + TNN_FGEMM_BF16_AMX_COLUMNS) * depth *
           sizeof(uint16_t);
}

size_t tnn_head_loss_scratch_bytes(int64_t d, int64_t vocab, bool bf16) {
    return tnn_head_loss_layout(d, vocab, bf16).total;
}
