/* The model families toy reads from GGUF, as a table: the GGUF's
 * general.architecture names one, and its entry says which architecture
 * builds it and what differs (struct tnn_family). Adding a family is a file
 * defining its entry (family_<name>.c) and a line here. Exported through
 * tnn_family_count and tnn_family_info (family_info.c) for Python. */
#include "models/models.h"

#include <stdio.h>
#include <string.h>

/* each defined in the family's own file */
extern const struct tnn_family tnn_family_llama, tnn_family_qwen2, tnn_family_qwen3, tnn_family_gemma3,
    tnn_family_gemma2, tnn_family_smollm3, tnn_family_phi3, tnn_family_lfm2, tnn_family_qwen35,
    tnn_family_granitehybrid, tnn_family_nemotron_h, tnn_family_falcon_h1, tnn_family_qwen3moe,
    tnn_family_mistral3, tnn_family_qwen35moe, tnn_family_gpt_oss;

static const struct tnn_family * const FAMILIES[] = {
    &tnn_family_llama,    &tnn_family_qwen2,         &tnn_family_qwen3,      &tnn_family_gemma3,
    &tnn_family_gemma2,   &tnn_family_smollm3,       &tnn_family_phi3,       &tnn_family_lfm2,
    &tnn_family_qwen35,   &tnn_family_granitehybrid, &tnn_family_nemotron_h, &tnn_family_falcon_h1,
    &tnn_family_qwen3moe, &tnn_family_mistral3,      &tnn_family_qwen35moe,  &tnn_family_gpt_oss,
};

#define N_FAMILIES ((int32_t) (sizeof(FAMILIES) / sizeof(FAMILIES[0])))

const struct tnn_family * tnn_family_find(const char * gguf_arch) {
    for (int32_t i = 0; i < N_FAMILIES; ++i) {
        if (strcmp(FAMILIES[i]->gguf_arch, gguf_arch) == 0) {
            return FAMILIES[i];
        }
    }
    return NULL;
}

/* Families whose layers toy cannot train yet, and why: most need a ggml op
 * that ggml_build_backward_expand cannot differentiate (no case for it in
 * ggml_compute_backward) and toy has no backward for. Refused by name
 * before anything is allocated. */
static const struct {
    const char * gguf_arch;
    const char * why;
} UNTRAINABLE[] = {
    { "qwen3next", "its delta-net projections are stored fused and interleaved (attn_qkvz), which toy does "
                   "not read yet (Qwen 3.5, qwen35, trains)" },
    { "mamba", "its state-space layers use GGML_OP_SSM_SCAN, which ggml cannot differentiate" },
    { "mamba2", "its state-space layers use GGML_OP_SSM_SCAN, which ggml cannot differentiate" },
    { "jamba", "its Mamba layers use GGML_OP_SSM_SCAN, which ggml cannot differentiate" },
    { "nemotron_h_moe", "its mixture-of-experts layers (relu-squared experts, a biased sigmoid router) are not "
                        "built in toy yet (the dense Nemotron-H, nemotron_h, trains)" },
    { "rwkv6", "its time-mixing layers use GGML_OP_RWKV_WKV6, which ggml cannot differentiate" },
    { "rwkv7", "its time-mixing layers use GGML_OP_RWKV_WKV7, which ggml cannot differentiate" },
};

const char * tnn_family_untrainable(const char * gguf_arch) {
    for (size_t i = 0; i < sizeof(UNTRAINABLE) / sizeof(UNTRAINABLE[0]); ++i) {
        if (strcmp(UNTRAINABLE[i].gguf_arch, gguf_arch) == 0) {
            return UNTRAINABLE[i].why;
        }
    }
    return NULL;
}

const char * tnn_family_output_norm(const struct tnn_family * family) {
    return family->output_norm != NULL ? family->output_norm : "output_norm.weight";
}

const char * tnn_family_names(void) {
    static char names[256];
    if (names[0] == '\0') {
        size_t used = 0;
        for (int32_t i = 0; i < N_FAMILIES && used < sizeof(names); ++i) {
            int n = snprintf(names + used, sizeof(names) - used, "%s%s", i ? ", " : "", FAMILIES[i]->gguf_arch);
            used += n > 0 ? (size_t) n : 0;
        }
    }
    return names;
}

int32_t tnn_family_count(void) { return N_FAMILIES; }

const struct tnn_family * tnn_family_at(int32_t index) {
    return index >= 0 && index < N_FAMILIES ? FAMILIES[index] : NULL;
}
