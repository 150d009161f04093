/* SmolLM3: the llama block, but every fourth layer applies no RoPE (its
 * attention sees no positions but the causal mask's); llama.cpp fixes the
 * period rather than reading it from the file. */
#include "models/models.h"

const struct tnn_family tnn_family_smollm3 = {
    .gguf_arch = "smollm3",
    .arch = "llama",
    .keys = TNN_LLAMA_CPP_KEYS,
    .no_rope_period = 4,
    .tokenizer_kinds = "gpt2",
};
