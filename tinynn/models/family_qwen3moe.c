/* Qwen3-MoE (Qwen3-30B-A3B, Qwen3-235B-A22B, Qwen3-Coder-30B-A3B): Qwen3's
 * attention, and every feed-forward a mixture of SwiGLU experts, the
 * router's softmax, its top k rescaled to sum to 1 (llama.cpp's qwen3moe
 * always rescales: the released models set norm_topk_prob). */
#include "models/models.h"

const struct tnn_family tnn_family_qwen3moe = {
    .gguf_arch = "qwen3moe",
    .arch = "llama",
    .keys = TNN_LLAMA_CPP_KEYS,
    .rope_neox = true,
    .experts = true,
    .experts_norm = true,
    .tokenizer_kinds = "gpt2",
};
