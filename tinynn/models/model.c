/* What the architectures' create functions share: the allocation of an
 * architecture's struct, a tensor context, parameters and token inputs. */
#include "models/models.h"

#include <stdlib.h>

void * tnn_alloc_with_blocks(size_t struct_size, size_t block_size, int32_t n_blocks, void ** blocks) {
    /* the blocks start at a multiple of the largest alignment */
    const size_t align = sizeof(max_align_t);
    const size_t offset = (struct_size + align - 1) / align * align;
    char * memory = calloc(1, offset + block_size * (size_t) n_blocks);
    *blocks = memory ? memory + offset : NULL;
    return memory;
}

struct ggml_context * tnn_tensor_context(size_t n_tensors) {
    struct ggml_init_params ip = {
        .mem_size = n_tensors * ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    return ggml_init(ip);
}

int tnn_add_param(struct tnn_tensor_table * tensors, struct ggml_tensor * t) {
    ggml_set_param(t);
    return tnn_table_add(tensors, t, TNN_KIND_PARAM, -1) < 0 ? TNN_ERR_ALLOC : TNN_OK;
}

int tnn_add_ln_blocks(struct tnn_model * model, struct tnn_tensor_table * tensors, struct tnn_ln_block * blocks,
                      int32_t n_layers, int64_t d_model, int64_t d_ff) {
    int status = TNN_OK;
    for (int32_t l = 0; l < n_layers && status == TNN_OK; ++l) {
        struct ggml_tensor * block_tensors[TNN_LN_BLOCK_TENSORS];
        tnn_ln_block_create(model->ctx, &blocks[l], l, d_model, d_ff, block_tensors);
        for (int i = 0; i < TNN_LN_BLOCK_TENSORS && status == TNN_OK; ++i) {
            status = tnn_add_param(tensors, block_tensors[i]);
        }
    }
    return status;
}

int tnn_add_token_inputs(struct tnn_model * model, struct tnn_tensor_table * tensors) {
    model->n_outputs = model->cfg.vocab;
    const tnn_model_config * cfg = &model->cfg;
    const int64_t n_tokens = (int64_t) cfg->t_seq * cfg->t_batch;
    struct ggml_context * ctx = model->ctx;
    model->tokens = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n_tokens);
    ggml_set_name(model->tokens, "tokens");
    ggml_set_input(model->tokens);
    model->positions = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n_tokens);
    ggml_set_name(model->positions, "positions");
    ggml_set_input(model->positions);
    const int32_t tokens = tnn_table_add(tensors, model->tokens, TNN_KIND_TOKENS, -1);
    const int32_t positions = tnn_table_add(tensors, model->positions, TNN_KIND_POSITIONS, -1);
    return tokens < 0 || positions < 0 ? TNN_ERR_ALLOC : TNN_OK;
}

/* ---- realize ---------------------------------------------------------------- */
