/* GPT-2: token embedding + learned absolute positions -> pre-LayerNorm
 * blocks (ln_block.c, causal) -> final LayerNorm -> LM head tied to the
 * token embedding. Tensor names are llama.cpp's for the gpt2 architecture. */
#include "models/models.h"
#include "gguf.h"

#include <stdlib.h>

static int create(struct tnn_model * model, struct tnn_tensor_table * tensors, const tnn_model_desc * desc) {
    const tnn_model_config * cfg = &desc->config;
    int status = tnn_check_token_model_config(cfg);
    if (status != TNN_OK) {
        return status;
    }
    if (cfg->n_kv_heads != cfg->n_heads) {
        return tnn_fail(TNN_ERR_ARG,
                        "GPT-2 has no grouped-query attention: n_kv_heads (%d) must "
                        "equal n_heads (%d)",
                        cfg->n_kv_heads, cfg->n_heads);
    }
    if (cfg->donor_d_in != 0 || cfg->untied || cfg->qkv_bias) {
        return tnn_fail(TNN_ERR_ARG, "GPT-2 takes no donor, untied head or qkv_bias option "
                                     "(its head is tied and every projection has a bias)");
    }
    model->cfg = *cfg;
    void * blocks = NULL;
    struct tnn_gpt2 * m = tnn_alloc_with_blocks(sizeof(*m), sizeof(*m->blocks), cfg->n_layers, &blocks);
    model->params = m;
    const int64_t d = cfg->d_model;
    model->ctx = tnn_tensor_context(8 + (size_t) cfg->n_layers * TNN_LN_BLOCK_TENSORS);
    if (m == NULL || model->ctx == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory creating the model");
    }
    m->blocks = blocks;
    struct ggml_context * ctx = model->ctx;

    m->token_embd = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, d, cfg->vocab);
    ggml_set_name(m->token_embd, "token_embd.weight");
    m->position_embd = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, d, cfg->t_seq);
    ggml_set_name(m->position_embd, "position_embd.weight");
    status = tnn_add_param(tensors, m->token_embd);
    if (status == TNN_OK) status = tnn_add_param(tensors, m->position_embd);
    if (status == TNN_OK) status = tnn_add_ln_blocks(model, tensors, m->blocks, cfg->n_layers, d, cfg->d_ff);
    m->output_norm = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, d);
    ggml_set_name(m->output_norm, "output_norm.weight");
    m->output_norm_b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, d);
    ggml_set_name(m->output_norm_b, "output_norm.bias");
    if (status == TNN_OK) status = tnn_add_param(tensors, m->output_norm);
    if (status == TNN_OK) status = tnn_add_param(tensors, m->output_norm_b);
    return status != TNN_OK ? status : tnn_add_token_inputs(model, tensors);
}

/* tokens, positions int32 [t_seq*t_batch] -> logits [vocab, t_seq*t_batch] */
static struct ggml_tensor * forward(struct ggml_context * ctx, const struct tnn_model * model,
                                    const struct tnn_forward_inputs * in) {
    const struct tnn_gpt2 * m = model->params;
    const tnn_model_config * cfg = &model->cfg;
    /* positions index the learned table: [d, n] each */
    struct ggml_tensor * x = ggml_add(ctx, ggml_get_rows(ctx, m->token_embd, in->tokens),
                                      ggml_get_rows(ctx, m->position_embd, in->positions));
    for (int32_t l = 0; l < cfg->n_layers; ++l) {
        tnn_note_residual(in, l, x);
        x = tnn_ln_block_forward(ctx, &m->blocks[l], x, cfg->n_heads, cfg->t_seq, cfg->t_batch, in->causal_mask,
                                 cfg->norm_eps);
    }
    tnn_note_residual(in, cfg->n_layers, x);
    x = tnn_layer_norm(ctx, x, m->output_norm, m->output_norm_b, cfg->norm_eps);
    return ggml_mul_mat(ctx, m->token_embd, x);                          /* [vocab, n] */
}

/* llama.cpp's gpt2 keys (llm_load_hparams reads these for LLM_ARCH_GPT2). */
static void gguf_metadata(struct gguf_context * gguf, const tnn_model_config * cfg) {
    tnn_gguf_model_keys(gguf, "gpt2", cfg);
    gguf_set_val_f32(gguf, "gpt2.attention.layer_norm_epsilon", cfg->norm_eps);
    tnn_gguf_vocab_keys(gguf, "gpt2", cfg);
}

const struct tnn_arch tnn_arch_gpt2 = {
    .name = "gpt2",
    .create = create,
    .forward = forward,
    .gguf_metadata = gguf_metadata,
    .learned_positions = true,
};
