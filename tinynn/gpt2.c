/* GPT-2: token embedding + learned absolute positions -> pre-LayerNorm
 * blocks (ln_block.c, causal) -> final LayerNorm -> LM head tied to the
 * token embedding. Tensor names are llama.cpp's for the gpt2 architecture. */
#include "internal.h"

#include <stdlib.h>

int tnn_realize_gpt2(tnn_session * s, const tnn_llama_config * cfg,
                     int32_t * tokens_handle, int32_t * positions_handle) {
    int status = tnn_realize_begin(s, tokens_handle != NULL && positions_handle != NULL, "tnn_realize_gpt2");
    if (status != TNN_OK) {
        return status;
    }
    status = tnn_llama_check_config(cfg);
    if (status != TNN_OK) {
        return status;
    }
    if (cfg->n_kv_heads != cfg->n_heads) {
        return tnn_fail(TNN_ERR_ARG, "GPT-2 has no grouped-query attention: n_kv_heads (%d) must "
                        "equal n_heads (%d)", cfg->n_kv_heads, cfg->n_heads);
    }
    if (cfg->donor_d_in != 0 || cfg->untied || cfg->qkv_bias) {
        return tnn_fail(TNN_ERR_ARG, "GPT-2 takes no donor, untied head or qkv_bias option "
                        "(its head is tied and every projection has a bias)");
    }
    s->model.cfg = *cfg;
    s->arch = TNN_ARCH_GPT2;
    struct tnn_gpt2 * m = &s->gpt2;
    const int64_t d = cfg->d_model;
    m->blocks = calloc((size_t) cfg->n_layers, sizeof(*m->blocks));
    struct ggml_init_params ip = {
        .mem_size = (8 + (size_t) cfg->n_layers * TNN_LN_BLOCK_TENSORS) * ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    s->ctx_static = ggml_init(ip);
    if (m->blocks == NULL || s->ctx_static == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory creating the model");
    }
    struct ggml_context * ctx = s->ctx_static;

    m->token_embd = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, d, cfg->vocab);
    ggml_set_name(m->token_embd, "token_embd.weight");
    m->position_embd = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, d, cfg->t_seq);
    ggml_set_name(m->position_embd, "position_embd.weight");
    status = tnn_add_param(s, m->token_embd);
    if (status == TNN_OK) status = tnn_add_param(s, m->position_embd);
    if (status == TNN_OK) status = tnn_add_ln_blocks(s, m->blocks, cfg->n_layers, d, cfg->d_ff);
    m->output_norm = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, d);
    ggml_set_name(m->output_norm, "output_norm.weight");
    m->output_norm_b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, d);
    ggml_set_name(m->output_norm_b, "output_norm.bias");
    if (status == TNN_OK) status = tnn_add_param(s, m->output_norm);
    if (status == TNN_OK) status = tnn_add_param(s, m->output_norm_b);
    return status != TNN_OK ? status : tnn_finish_token_model(s, tokens_handle, positions_handle);
}

struct ggml_tensor * tnn_gpt2_forward(struct ggml_context * ctx, const struct tnn_gpt2 * m,
                                      const tnn_llama_config * cfg, struct ggml_tensor * tokens,
                                      struct ggml_tensor * positions, struct ggml_tensor * causal_mask) {
    /* positions index the learned table: [d, n] each */
    struct ggml_tensor * x = ggml_add(ctx, ggml_get_rows(ctx, m->token_embd, tokens),
                                      ggml_get_rows(ctx, m->position_embd, positions));
    for (int32_t l = 0; l < cfg->n_layers; ++l) {
        x = tnn_ln_block_forward(ctx, &m->blocks[l], x, cfg->n_heads, cfg->t_seq, cfg->t_batch,
                                 causal_mask, cfg->rms_eps);
    }
    x = tnn_layer_norm(ctx, x, m->output_norm, m->output_norm_b, cfg->rms_eps);
    return ggml_mul_mat(ctx, m->token_embd, x);                          /* [vocab, n] */
}
