/* Qwen3: the llama block with NEOX RoPE; its q/k norms (and heads wider
 * than d_model / n_heads, attention.key_length) are found in the file. */
#include "models/models.h"

const struct tnn_family tnn_family_qwen3 = {
    .gguf_arch = "qwen3",
    .arch = "llama",
    .keys = TNN_LLAMA_CPP_KEYS,
    .rope_neox = true,
    .tokenizer_kinds = "gpt2",
};
