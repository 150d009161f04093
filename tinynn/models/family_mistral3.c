/* Ministral 3 (mistral3: the 3 B, 8 B and 14 B; Mistral Small 3.1's text
 * model): llama's block, RoPE extended by YaRN (read for every family,
 * gguf_config.c) and Llama 4's attention temperature past the original
 * context (attention.temperature_scale). Its tokenizer is Tekken's. */
#include "models/models.h"

const struct tnn_family tnn_family_mistral3 = {
    .gguf_arch = "mistral3",
    .arch = "llama",
    .keys = TNN_LLAMA_CPP_KEYS,
    .rope_neox = false,
    .rope_freqs = true,
    .attn_temperature = true,
    .tokenizer_kinds = "gpt2,llama",
};
