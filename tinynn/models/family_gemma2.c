/* Gemma 2: Gemma 3's block without the q/k norms (none in its files) and
 * with soft-capped attention scores and logits, cap * tanh(x / cap).
 * What llama.cpp fixes rather than reading from the file: every second
 * layer global, the rest attending through a window of 4096, with the
 * global layers' RoPE base; caps of 50 (scores) and 30 (logits); the 27 B
 * (46 layers) scales its scores by d_model / n_heads. */
#include "models/models.h"

extern const char tnn_gemma_chat_template[];

const struct tnn_family tnn_family_gemma2 = {
    .gguf_arch = "gemma2",
    .arch = "llama",
    .keys = TNN_LLAMA_CPP_KEYS,
    .rope_neox = true,
    .embd_scale = true,
    .ffn_gelu = true,
    .post_norms = true,
    .swa_period = 2,
    .swa_window = 4096,
    .attn_softcap = 50.0f,
    .final_softcap = 30.0f,
    .wide_query_layers = 46,
    .tokenizer_kinds = "llama",
    .default_chat_template = tnn_gemma_chat_template,
};
