/* llama-postnorm: the llama block with its RMSNorms after each residual add
 * (the original Transformer's placement) instead of before each sub-layer:
 *
 *   x = norm_attn(x + attention(x)),  x = norm_ffn(x + ffn(x))
 *
 * then llama's final norm and head. A small made-up variant: what adding an architecture takes is
 * this file and its line in arch.c. Same tensors and names as llama; it has
 * no GGUF layout of its own in llama.cpp, so it is not saved as one. */
#include "models/models.h"

/* tokens, positions int32 [t_seq*t_batch] -> logits [vocab, t_seq*t_batch] */
static struct ggml_tensor * forward(struct ggml_context * ctx, const struct tnn_model * model,
                                    const struct tnn_forward_inputs * in) {
    const struct tnn_llama * m = tnn_llama_of(model);
    const tnn_model_config * cfg = m->cfg;
    struct ggml_tensor * x = tnn_llama_embed(ctx, m, in->tokens);          /* [d, n] */
    for (int32_t l = 0; l < cfg->n_layers; ++l) {
        const struct tnn_block * b = &m->blocks[l];
        tnn_note_residual(in, l, x);
        x = ggml_add(ctx, x, tnn_block_attention(ctx, b, x, in->positions, in->causal_mask, cfg, NULL));
        x = tnn_rms_norm(ctx, x, b->attn_norm, cfg->norm_eps);
        x = ggml_add(ctx, x, tnn_block_ffn(ctx, b, x, cfg));
        x = tnn_rms_norm(ctx, x, b->ffn_norm, cfg->norm_eps);
    }
    tnn_note_residual(in, cfg->n_layers, x);
    x = tnn_rms_norm(ctx, x, m->output_norm, cfg->norm_eps);
    return ggml_mul_mat(ctx, m->head, x);                                 /* [vocab, n] */
}

/* llama's parameters: the same tensors, used in another order */
static int create(struct tnn_model * model, struct tnn_tensor_table * tensors, const tnn_model_desc * desc) {
    if (desc->config.swa_window > 0 || desc->config.post_norms) {
        return tnn_fail(TNN_ERR_ARG, "llama-postnorm takes no sliding window or Gemma post-norms");
    }
    return tnn_llama_create(model, tensors, desc);
}

const struct tnn_arch tnn_arch_llama_postnorm = {
    .name = "llama-postnorm",
    .create = create,
    .forward = forward,
};
