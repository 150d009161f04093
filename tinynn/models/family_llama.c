/* llama (SmolLM2, Llama 2/3 ...): the llama block as it is; Llama 3.1 to
 * 3.3 carry RoPE factors (rope_freqs.weight). */
#include "models/models.h"

const struct tnn_family tnn_family_llama = {
    .gguf_arch = "llama",
    .arch = "llama",
    .keys = TNN_LLAMA_CPP_KEYS,
    .rope_neox = false,
    .rope_freqs = true,
    .tokenizer_kinds = "gpt2,llama",
};
