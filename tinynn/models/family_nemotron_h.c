/* NVIDIA's Nemotron-H (dense: Nemotron Nano 9B/12B v2): every layer one
 * sub-layer after its attn_norm and its residual add, no ffn_norm. The
 * layers are Mamba-2 ('m', Granite 4's mixer), attention without RoPE
 * ('a') and a feed-forward alone ('f': ffn_down(relu(ffn_up x)^2), no
 * gate), told apart as llama.cpp tells them: a layer with kv heads attends,
 * one with a feed_forward_length is a feed-forward, one with neither is
 * Mamba-2. Its mixture-of-experts sizes are another architecture,
 * nemotron_h_moe (refused by name until toy has an expert path). */
#include "models/models.h"

const struct tnn_family tnn_family_nemotron_h = {
    .gguf_arch = "nemotron_h",
    .arch = "llama",
    .keys = TNN_LLAMA_CPP_KEYS,
    .hybrid = true,
    .recurrent_kind = 'm',
    .one_sublayer = true,
    .ffn_relu_sq = true,
    .no_rope_period = 1,
    .tokenizer_kinds = "gpt2",
};
