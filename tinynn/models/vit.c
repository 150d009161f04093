/* ViT: an image classifier. Patches -> linear embedding -> [class token,
 * patches] + learned positions -> pre-LayerNorm blocks (ln_block.c,
 * bidirectional) -> LayerNorm of the class token -> linear head. */
#include "models/models.h"

#include <stdlib.h>

static int check_vit_config(const tnn_vit_config * c) {
    if (c == NULL) {
        return tnn_fail(TNN_ERR_ARG, "config is NULL");
    }
    struct {
        const char * name;
        int32_t value;
        int32_t max;
    } positive[] = {
        { "n_classes", c->n_classes, 1 << 20 }, { "patch_dim", c->patch_dim, 1 << 16 },
        { "n_patches", c->n_patches, 1 << 16 }, { "d_model", c->d_model, 1 << 16 },
        { "n_layers", c->n_layers, 1024 },      { "n_heads", c->n_heads, 1024 },
        { "d_ff", c->d_ff, 1 << 18 },           { "t_batch", c->t_batch, 1 << 16 },
    };
    for (size_t i = 0; i < sizeof(positive) / sizeof(positive[0]); ++i) {
        if (positive[i].value < 1 || positive[i].value > positive[i].max) {
            return tnn_fail(TNN_ERR_ARG, "%s must be between 1 and %d, got %d", positive[i].name, positive[i].max,
                            positive[i].value);
        }
    }
    if (c->d_model % c->n_heads != 0) {
        return tnn_fail(TNN_ERR_ARG, "n_heads (%d) must divide d_model (%d)", c->n_heads, c->d_model);
    }
    if ((int64_t) (c->n_patches + 1) * c->t_batch > (1 << 20)) {
        return tnn_fail(TNN_ERR_ARG, "(n_patches + 1) * t_batch must be at most %d", 1 << 20);
    }
    if (!(c->ln_eps > 0.0f) || !(c->ln_eps < 1.0f)) {
        return tnn_fail(TNN_ERR_ARG, "ln_eps must be in (0, 1), got %g", c->ln_eps);
    }
    if (!(c->init_scale >= 0.0f) || !(c->init_scale < 1e6f)) {
        return tnn_fail(TNN_ERR_ARG, "init_scale must be >= 0, got %g", c->init_scale);
    }
    return TNN_OK;
}

/* A trainable F32 tensor [ne0] (ne1 = 0) or [ne0, ne1] in model->ctx, added
 * to tensors while *status is TNN_OK. */
static struct ggml_tensor * new_param(struct tnn_model * model, struct tnn_tensor_table * tensors, int64_t ne0,
                                      int64_t ne1, const char * name, int * status) {
    struct ggml_tensor * t = ne1 > 0 ? ggml_new_tensor_2d(model->ctx, GGML_TYPE_F32, ne0, ne1)
                                     : ggml_new_tensor_1d(model->ctx, GGML_TYPE_F32, ne0);
    ggml_set_name(t, name);
    if (*status == TNN_OK) {
        *status = tnn_add_param(tensors, t);
    }
    return t;
}

static int create(struct tnn_model * model, struct tnn_tensor_table * tensors, const tnn_model_desc * desc) {
    const tnn_vit_config * cfg = &desc->vit;
    int status = check_vit_config(cfg);
    if (status != TNN_OK) {
        return status;
    }
    void * blocks = NULL;
    struct tnn_vit * m = tnn_alloc_with_blocks(sizeof(*m), sizeof(*m->blocks), cfg->n_layers, &blocks);
    model->params = m;
    if (m == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory creating the model");
    }
    m->blocks = blocks;
    m->cfg = *cfg;
    /* the shape the shared code reads: one sequence of 1 + n_patches
     * positions per image (no vocabulary); labels index the classes */
    model->n_outputs = cfg->n_classes;
    model->cfg = (tnn_model_config){
        .d_model = cfg->d_model,
        .n_layers = cfg->n_layers,
        .n_heads = cfg->n_heads,
        .n_kv_heads = cfg->n_heads,
        .d_ff = cfg->d_ff,
        .t_seq = cfg->n_patches + 1,
        .t_batch = cfg->t_batch,
        .norm_eps = cfg->ln_eps,
        .init_scale = cfg->init_scale,
        .seed = cfg->seed,
    };
    const int64_t d = cfg->d_model;
    model->ctx = tnn_tensor_context(12 + (size_t) cfg->n_layers * TNN_LN_BLOCK_TENSORS);
    if (model->ctx == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory creating the model");
    }
    m->patch_embd = new_param(model, tensors, cfg->patch_dim, d, "patch_embd.weight", &status);
    m->patch_embd_b = new_param(model, tensors, d, 0, "patch_embd.bias", &status);
    m->position_embd = new_param(model, tensors, d, cfg->n_patches + 1, "position_embd.weight", &status);
    if (status == TNN_OK) status = tnn_add_ln_blocks(model, tensors, m->blocks, cfg->n_layers, d, cfg->d_ff);
    m->output_norm = new_param(model, tensors, d, 0, "output_norm.weight", &status);
    m->output_norm_b = new_param(model, tensors, d, 0, "output_norm.bias", &status);
    m->head = new_param(model, tensors, d, cfg->n_classes, "output.weight", &status);
    m->head_b = new_param(model, tensors, cfg->n_classes, 0, "output.bias", &status);
    if (status != TNN_OK) {
        return status;
    }
    struct ggml_tensor * images = ggml_new_tensor_3d(model->ctx, GGML_TYPE_F32, cfg->patch_dim, cfg->n_patches,
                                                     cfg->t_batch);
    ggml_set_name(images, "images");
    ggml_set_input(images);
    model->images = images;
    return tnn_table_add(tensors, images, TNN_KIND_IMAGES, -1) < 0 ? TNN_ERR_ALLOC : TNN_OK;
}

/* images [patch_dim, n_patches, t_batch] -> logits [n_classes, t_batch] */
static struct ggml_tensor * forward(struct ggml_context * ctx, const struct tnn_model * model,
                                    const struct tnn_forward_inputs * in) {
    const struct tnn_vit * m = model->params;
    const tnn_vit_config * cfg = &m->cfg;
    const int64_t d = cfg->d_model, t = cfg->n_patches + 1, batch = cfg->t_batch;
    /* a zero patch in front of each image's: its embedding is the bias, and
     * with position 0's learned vector added it is the class token */
    struct ggml_tensor * patches = ggml_pad_ext(ctx, in->images, 0, 0, 1, 0, 0, 0, 0, 0);  /* [pd, t, B] */
    patches = ggml_reshape_2d(ctx, patches, cfg->patch_dim, t * batch);
    struct ggml_tensor * x = ggml_add(ctx, ggml_mul_mat(ctx, m->patch_embd, patches), m->patch_embd_b);
    x = ggml_reshape_3d(ctx, x, d, t, batch);
    x = ggml_add(ctx, x, m->position_embd);                              /* [d, t, B] */
    x = ggml_reshape_2d(ctx, x, d, t * batch);
    for (int32_t l = 0; l < cfg->n_layers; ++l) {
        tnn_note_residual(in, l, x);
        x = tnn_ln_block_forward(ctx, &m->blocks[l], x, cfg->n_heads, (int32_t) t, (int32_t) batch, NULL,
                                 cfg->ln_eps);
    }
    tnn_note_residual(in, cfg->n_layers, x);
    /* the class token of each image: position 0, every t-th column */
    struct ggml_tensor * cls = ggml_cont(ctx, ggml_view_2d(ctx, x, d, batch, x->nb[1] * t, 0));  /* [d, B] */
    cls = tnn_layer_norm(ctx, cls, m->output_norm, m->output_norm_b, cfg->ln_eps);
    return ggml_add(ctx, ggml_mul_mat(ctx, m->head, cls), m->head_b);    /* [n_classes, B] */
}

const struct tnn_arch tnn_arch_vit = {
    .name = "vit",
    .create = create,
    .forward = forward,
};
