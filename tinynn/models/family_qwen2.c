/* Qwen2 (and Qwen2.5): the llama block with NEOX RoPE; its q/k/v biases are
 * found by their tensors. */
#include "models/models.h"

const struct tnn_family tnn_family_qwen2 = {
    .gguf_arch = "qwen2",
    .arch = "llama",
    .keys = TNN_LLAMA_CPP_KEYS,
    .rope_neox = true,
    .tokenizer_kinds = "gpt2",
};
