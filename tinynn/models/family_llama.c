/* llama (SmolLM2, Llama 2/3 ...): the llama block as it is. */
#include "models/models.h"

const struct tnn_family tnn_family_llama = {
    .gguf_arch = "llama",
    .arch = "llama",
    .keys = TNN_LLAMA_CPP_KEYS,
    .rope_neox = false,
    .tokenizer_kinds = "gpt2,llama",
};
