/* TII's Falcon-H1 (0.5 B to 34 B, and Falcon-H1R): every layer runs
 * attention (NEOX RoPE) and Mamba-2 side by side on the same normed input
 * and adds both to the residual (kind 'p'), then the SwiGLU feed-forward,
 * whose norm llama.cpp names ffn_norm without .weight. Falcon-H1's muP
 * multipliers are folded into the weights by llama.cpp's converter, so
 * the file holds plain projections. Mamba-2's grouped RMS norm is there
 * only where the checkpoint had one (mamba_rms_norm). */
#include "models/models.h"

const struct tnn_family tnn_family_falcon_h1 = {
    .gguf_arch = "falcon-h1",
    .arch = "llama",
    .keys = TNN_LLAMA_CPP_KEYS,
    .rope_neox = true,
    .layer_kind = 'p',
    .ssm_norm_optional = true,
    .tokenizer_kinds = "gpt2",
};
