/* Gemma 3: the llama block with NEOX RoPE, embeddings scaled by
 * sqrt(d_model), GEGLU, norms after attention and FFN, and sliding-window
 * attention. What llama.cpp fixes rather than reading from the file: every
 * sixth layer is global, the local layers' RoPE base is 10000, the 27 B
 * (62 layers) scales its scores by d_model / n_heads. The base models ship
 * no chat template: Gemma's turn format is the default. */
#include "models/models.h"

/* Gemma's turns, for Gemma 2 and 3 GGUFs that ship no template */
const char tnn_gemma_chat_template[] = "{% for m in messages %}"
                                       "{% set role = 'model' if m['role'] == 'assistant' else 'user' %}"
                                       "<start_of_turn>{{ role }}\n{{ m['content'] | trim }}<end_of_turn>\n"
                                       "{% endfor %}"
                                       "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}";

const struct tnn_family tnn_family_gemma3 = {
    .gguf_arch = "gemma3",
    .arch = "llama",
    .keys = TNN_LLAMA_CPP_KEYS,
    .rope_neox = true,
    .embd_scale = true,
    .ffn_gelu = true,
    .post_norms = true,
    .swa_period = 6,
    .rope_base_swa = 10000.0f,
    .wide_query_layers = 62,
    .tokenizer_kinds = "llama",
    .default_chat_template = tnn_gemma_chat_template,
};
