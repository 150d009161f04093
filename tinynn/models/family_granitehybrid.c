/* Granite 4's hybrids (IBM granite-4.0-h-*): Mamba-2 layers (kind
 * 'm': ssm_in -> z, x B C, dt; a short convolution with a bias and SiLU;
 * the selective scan; the D skip; y silu(z) RMS-normed in ssm_groups
 * groups; ssm_out) and attention layers, told apart by a zero in the
 * per-layer attention.head_count_kv, each followed by the SwiGLU
 * feed-forward. Granite's multipliers scale the embeddings, each residual
 * branch, the attention scores and the logits; the hybrids turn RoPE off
 * (rope.scaling.finetuned false). Its mixture-of-experts sizes (tiny,
 * small): every feed-forward the router's softmax, its top k rescaled, the
 * experts as stored, beside a shared expert without a gate (llama.cpp's
 * granite-hybrid). */
#include "models/models.h"

const struct tnn_family tnn_family_granitehybrid = {
    .gguf_arch = "granitehybrid",
    .arch = "llama",
    .keys = TNN_LLAMA_CPP_KEYS,
    .hybrid = true,
    .recurrent_kind = 'm',
    .granite_scales = true,
    .experts_optional = true,
    .experts_norm = true,
    .shared_expert = true,
    .tokenizer_kinds = "gpt2",
};
