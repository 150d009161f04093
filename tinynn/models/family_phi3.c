/* Phi-3 (Phi-3-mini, Phi-3.5-mini, the 128k models, Phi-4-mini): the llama
 * block with NEOX RoPE, its gate and up stored as one ffn_up [d, 2 d_ff]
 * (gate rows first: llama.cpp's SwiGLU on the fused product, silu of the
 * first half times the second) and q, k, v as one attn_qkv where the file
 * has it. Sliding window is ignored, as llama.cpp ignores it. LongRoPE's
 * two factor sets (rope_factors_short/long.weight) and attention factor,
 * and partial RoPE (rope.dimension_count below the head width: Phi-4-mini)
 * are read from the file (gguf_config.c) and run by tnn_rope as llama.cpp
 * runs them. */
#include "models/models.h"

const struct tnn_family tnn_family_phi3 = {
    .gguf_arch = "phi3",
    .arch = "llama",
    .keys = TNN_LLAMA_CPP_KEYS,
    .rope_neox = true,
    .fused = true,
    .longrope = true,
    .tokenizer_kinds = "llama,gpt2",
};
