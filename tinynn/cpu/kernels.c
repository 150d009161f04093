/* The kernel layer's choice of variants (kernels.h), and what every
 * variant shares: the packed-panel layout of qgemm and the scratch sizes. */
#include "kernels.h"
#include "layout.h"

#include <string.h>

static const char * const kernel_names[TNN_CPU_KERNEL_COUNT] = { "qgemm", "fgemm", "head_loss", "adamw" };
static const char * const variant_names[] = { "none", "avx512" };
#define N_VARIANTS (int) (sizeof variant_names / sizeof variant_names[0])

const char * tnn_cpu_kernel_name(enum tnn_cpu_kernel kernel) {
    return kernel >= 0 && kernel < TNN_CPU_KERNEL_COUNT ? kernel_names[kernel] : "?";
}

const char * tnn_cpu_variant_name(enum tnn_cpu_variant variant) {
    return (int) variant >= 0 && (int) variant < N_VARIANTS ? variant_names[variant] : "?";
}

int tnn_cpu_kernel_by_name(const char * name) {
    for (int i = 0; name != NULL && i < TNN_CPU_KERNEL_COUNT; ++i) {
        if (strcmp(name, kernel_names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

int tnn_cpu_variant_by_name(const char * name) {
    for (int i = 0; name != NULL && i < N_VARIANTS; ++i) {
        if (strcmp(name, variant_names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

/* ---- which variants this CPU runs ---------------------------------------- */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

/* The CPU features each kernel's avx512 variant is compiled for (its
 * target attribute), asked of the CPU at run time. */
static bool avx512_runs(enum tnn_cpu_kernel kernel) {
    __builtin_cpu_init();
    const bool f = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
    const bool vnni = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("f16c");
    /* head_loss multiplies through qgemm */
    return kernel == TNN_KERNEL_QGEMM || kernel == TNN_KERNEL_HEAD_LOSS ? f && vnni : f;
}

static void set_avx512(struct tnn_cpu_kernels * k, enum tnn_cpu_kernel kernel) {
    switch (kernel) {
    case TNN_KERNEL_QGEMM:
        k->qgemm = tnn_qgemm_avx512;
        break;
    case TNN_KERNEL_FGEMM:
        k->fgemm = tnn_fgemm_avx512;
        k->fgemm_skinny = tnn_fgemm_skinny_avx512;
        break;
    case TNN_KERNEL_HEAD_LOSS:
        k->head_loss = tnn_head_loss_avx512;
        k->token_loss = tnn_token_loss_avx512;
        break;
    case TNN_KERNEL_ADAMW:
        k->adamw = tnn_adamw_avx512;
        break;
    default:
        break;
    }
}

#endif

static void clear(struct tnn_cpu_kernels * k, enum tnn_cpu_kernel kernel) {
    switch (kernel) {
    case TNN_KERNEL_QGEMM: k->qgemm = NULL; break;
    case TNN_KERNEL_FGEMM: k->fgemm = NULL; k->fgemm_skinny = NULL; break;
    case TNN_KERNEL_HEAD_LOSS: k->head_loss = NULL; k->token_loss = NULL; break;
    case TNN_KERNEL_ADAMW: k->adamw = NULL; break;
    default: break;
    }
}

bool tnn_cpu_kernel_set(struct tnn_cpu_kernels * k, enum tnn_cpu_kernel kernel, enum tnn_cpu_variant variant) {
    if ((int) kernel < 0 || kernel >= TNN_CPU_KERNEL_COUNT) {
        return false;
    }
    if (variant == TNN_CPU_NONE) {
        clear(k, kernel);
        k->variant[kernel] = TNN_CPU_NONE;
        return true;
    }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (variant == TNN_CPU_AVX512 && avx512_runs(kernel)) {
        set_avx512(k, kernel);
        k->variant[kernel] = TNN_CPU_AVX512;
        return true;
    }
#endif
    return false;
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

bool tnn_cpu_kernels_choose(const char * setting, struct tnn_cpu_kernels * k) {
    *k = (struct tnn_cpu_kernels) { 0 };
    const bool all = setting == NULL || setting[0] == '\0' || strcmp(setting, "on") == 0;
    if (!all && strcmp(setting, "off") == 0) {
        return true;
    }
    bool ok = true;
    for (int i = 0; i < TNN_CPU_KERNEL_COUNT; ++i) {
        if (!all && !lists(setting, kernel_names[i], &ok)) {
            continue;
        }
        /* the best variant first (one today) */
        for (int v = N_VARIANTS - 1; v > TNN_CPU_NONE; --v) {
            if (tnn_cpu_kernel_set(k, (enum tnn_cpu_kernel) i, (enum tnn_cpu_variant) v)) {
                break;
            }
        }
    }
    if (!ok) {
        *k = (struct tnn_cpu_kernels) { 0 };
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

size_t tnn_qgemm_scratch_bytes(int64_t k, int64_t n) {
    return (size_t) (k / TNN_QBLOCK) * (size_t) n * sizeof(struct tnn_qcol);
}

/* Stored block layouts (ggml-common.h): Q8_0 {fp16 d; int8 q[32]},
 * Q4_1 {fp16 d; fp16 m; uint8 qs[16]}, qs[t] = q[t] | q[t + 16] << 4. */
#define Q8_0_BYTES 34
#define Q4_1_BYTES 20

void tnn_qpanel_pack(enum tnn_qpanel_format format, const void * src, size_t row_bytes,
                     int64_t k, int64_t r0, void * dst) {
    const int64_t kb = k / TNN_QBLOCK;
    const size_t bb = tnn_qpanel_block_bytes(format);
    uint8_t * panel = (uint8_t *) dst + (size_t) (r0 / TNN_QPANEL_ROWS) * (size_t) kb * bb;
    for (int64_t b = 0; b < kb; ++b) {
        uint8_t * out = panel + (size_t) b * bb;
        for (int r = 0; r < TNN_QPANEL_ROWS; ++r) {
            const uint8_t * row = (const uint8_t *) src + (size_t) r * row_bytes;
            if (format == TNN_QPANEL_Q8_0) {
                const uint8_t * blk = row + (size_t) b * Q8_0_BYTES;
                memcpy(out + 2 * r, blk, 2);                                 /* d */
                for (int g = 0; g < 8; ++g) {
                    for (int t = 0; t < 4; ++t) {
                        out[32 + g * 64 + r * 4 + t] = (uint8_t) (blk[2 + 4 * g + t] ^ 0x80);
                    }
                }
            } else {
                const uint8_t * blk = row + (size_t) b * Q4_1_BYTES;
                memcpy(out + 2 * r, blk, 2);                                 /* d */
                memcpy(out + 32 + 2 * r, blk + 2, 2);                        /* m */
                for (int g = 0; g < 4; ++g) {
                    memcpy(out + 64 + g * 64 + r * 4, blk + 4 + 4 * g, 4);
                }
            }
        }
    }
}

/* ---- scratch of fgemm and head_loss --------------------------------------- */

size_t tnn_fgemm_scratch_bytes(void) {
    return (size_t) TNN_FGEMM_DEPTH * TNN_FGEMM_ROWS * sizeof(float);
}

size_t tnn_head_loss_scratch_bytes(int64_t d, int64_t vocab) {
    return tnn_head_loss_layout(d, vocab).total;
}
