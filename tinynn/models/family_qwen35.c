/* Qwen 3.5 and 3.6, dense: three of every four layers (attention.
 * recurrent_layers, or full_attention_interval) are Gated DeltaNet linear
 * attention ('d': attn_qkv -> a short convolution (ssm_conv1d, SiLU) -> q,
 * k (L2-normed), v; the gated delta rule with beta = sigmoid(ssm_beta h)
 * and a log-decay ssm_a softplus(ssm_alpha h + ssm_dt); its output
 * RMS-normed times silu(attn_gate h); ssm_out), the rest gated attention
 * (attn_q holds each head's query and output gate; q/k norms; partial
 * NEOX RoPE: llama.cpp's IMROPE, the same rotation for text positions).
 * The feed-forward's norm is post_attention_norm. */
#include "models/models.h"

const struct tnn_family tnn_family_qwen35 = {
    .gguf_arch = "qwen35",
    .arch = "llama",
    .keys = TNN_LLAMA_CPP_KEYS,
    .rope_neox = true,
    .hybrid = true,
    .recurrent_kind = 'd',
    .recurrent_layers = "attention.recurrent_layers",
    .attn_gate = true,
    .tokenizer_kinds = "gpt2",
};
