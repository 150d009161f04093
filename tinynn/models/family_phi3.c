/* Phi-3 (Phi-3-mini 4k): the llama block with NEOX RoPE, its gate and up
 * stored as one ffn_up [d, 2 d_ff] (gate rows first: llama.cpp's SwiGLU on
 * the fused product, silu of the first half times the second) and q, k, v
 * as one attn_qkv where the file has it. Sliding window is ignored, as
 * llama.cpp ignores it. LongRoPE (rope_factors_long/short.weight: Phi-3.5,
 * the 128k models) and Phi-4-mini's partial RoPE are refused by name when
 * the file is read (gguf_config.c). */
#include "models/models.h"

const struct tnn_family tnn_family_phi3 = {
    .gguf_arch = "phi3",
    .arch = "llama",
    .keys = TNN_LLAMA_CPP_KEYS,
    .rope_neox = true,
    .fused = true,
    .tokenizer_kinds = "llama",
};
