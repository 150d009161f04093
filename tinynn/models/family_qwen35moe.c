/* Qwen 3.5 and 3.6 MoE (Qwen3.5-35B-A3B, Qwen3.6-35B-A3B and up): Qwen 3.5's
 * layers (three of every four Gated DeltaNet, the rest gated attention:
 * family_qwen35.c), every feed-forward a mixture of SwiGLU experts (the
 * router's softmax, its top k rescaled to sum to 1) beside a shared expert
 * every token goes through, gated by sigmoid(ffn_gate_inp_shexp x). */
#include "models/models.h"

const struct tnn_family tnn_family_qwen35moe = {
    .gguf_arch = "qwen35moe",
    .arch = "llama",
    .keys = TNN_LLAMA_CPP_KEYS,
    .rope_neox = true,
    .hybrid = true,
    .recurrent_kind = 'd',
    .recurrent_layers = "attention.recurrent_layers",
    .attn_gate = true,
    .experts = true,
    .experts_norm = true,
    .shared_expert = true,
    .tokenizer_kinds = "gpt2",
};
