/* gpt-oss (gpt-oss-20b, gpt-oss-120b): attention with a learned sink per
 * head and biases on q, k, v and the output, every other layer (the even
 * ones) a sliding window, YaRN on every layer; every feed-forward a
 * mixture of experts whose router and experts have biases, the top k's
 * logits softmaxed (the top k's probabilities normalized), the clamped
 * SwiGLU g sigmoid(1.702 g) (u + 1); the feed-forward's norm is named
 * post_attention_norm (llama.cpp's openai-moe). */
#include "models/models.h"

const struct tnn_family tnn_family_gpt_oss = {
    .gguf_arch = "gpt-oss",
    .arch = "llama",
    .keys = TNN_LLAMA_CPP_KEYS,
    .rope_neox = true,
    .swa_period = 2,
    .experts = true,
    .experts_norm = true,
    .oai = true,
    .tokenizer_kinds = "gpt2",
};
