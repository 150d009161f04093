/* LFM2 and LFM2.5 (Liquid AI): the llama block with NEOX RoPE and q/k
 * norms in its attention layers; the other layers are gated short
 * convolutions (kind 'c': in_proj -> B, C, x; C * conv(B * x); out_proj),
 * the layers told apart by a zero in the per-layer attention.head_count_kv.
 * The final norm is stored as token_embd_norm.weight (llama.cpp's name for
 * it), the head tied to the embedding. */
#include "models/models.h"

const struct tnn_family tnn_family_lfm2 = {
    .gguf_arch = "lfm2",
    .arch = "llama",
    .keys = TNN_LLAMA_CPP_KEYS,
    .rope_neox = true,
    .hybrid = true,
    .recurrent_kind = 'c',
    .output_norm = "token_embd_norm.weight",
    .tokenizer_kinds = "gpt2",
};
