/* The pre-LayerNorm transformer block of GPT-2 and ViT: LayerNorm (weight
 * and bias) -> attention with fused q/k/v and biases -> residual, then
 * LayerNorm -> GELU MLP with biases -> residual. Attention is causal for
 * GPT-2 and bidirectional for ViT; everything else is the same. */
#include "models/models.h"

#include <math.h>
#include <stdio.h>

void tnn_ln_block_create(struct ggml_context * ctx, struct tnn_ln_block * b, int32_t layer, int64_t d,
                         int64_t d_ff, struct ggml_tensor ** out) {
    const struct {
        struct ggml_tensor ** field;
        const char * name;
        int64_t ne0, ne1;
    } layout[] = {
        { &b->attn_norm, "attn_norm.weight", d, 0 }, { &b->attn_norm_b, "attn_norm.bias", d, 0 },
        { &b->wqkv, "attn_qkv.weight", d, 3 * d },   { &b->bqkv, "attn_qkv.bias", 3 * d, 0 },
        { &b->wo, "attn_output.weight", d, d },      { &b->bo, "attn_output.bias", d, 0 },
        { &b->ffn_norm, "ffn_norm.weight", d, 0 },   { &b->ffn_norm_b, "ffn_norm.bias", d, 0 },
        { &b->w_up, "ffn_up.weight", d, d_ff },      { &b->b_up, "ffn_up.bias", d_ff, 0 },
        { &b->w_down, "ffn_down.weight", d_ff, d },  { &b->b_down, "ffn_down.bias", d, 0 },
    };
    for (int i = 0; i < TNN_LN_BLOCK_TENSORS; ++i) {
        struct ggml_tensor * t = layout[i].ne1 > 0
                                     ? ggml_new_tensor_2d(ctx, GGML_TYPE_F32, layout[i].ne0, layout[i].ne1)
                                     : ggml_new_tensor_1d(ctx, GGML_TYPE_F32, layout[i].ne0);
        ggml_format_name(t, "blk.%d.%s", layer, layout[i].name);
        *layout[i].field = t;
        out[i] = t;
    }
}

/* x [d_in, n] -> W x + bias; W and bias may be row ranges of fused tensors */
static struct ggml_tensor * linear(struct ggml_context * ctx, struct ggml_tensor * w, struct ggml_tensor * bias,
                                   struct ggml_tensor * x) {
    return ggml_add(ctx, ggml_mul_mat(ctx, w, x), bias);
}

/* Part `which` (0 q, 1 k, 2 v) of the fused projection: rows which*d ..
 * (which+1)*d of W [d, 3d] and of its bias, as views (contiguous rows), so
 * each product is [d, n] and the weight's gradient lands in its rows. */
static struct ggml_tensor * qkv_part(struct ggml_context * ctx, const struct tnn_ln_block * b, int which,
                                     struct ggml_tensor * h) {
    const int64_t d = b->wo->ne[0];
    struct ggml_tensor * w = ggml_view_2d(ctx, b->wqkv, d, d, b->wqkv->nb[1], (size_t) which * d * b->wqkv->nb[1]);
    struct ggml_tensor * bias = ggml_view_1d(ctx, b->bqkv, d, (size_t) which * d * ggml_element_size(b->bqkv));
    return linear(ctx, w, bias, h);
}

struct ggml_tensor * tnn_ln_block_forward(struct ggml_context * ctx, const struct tnn_ln_block * b,
                                          struct ggml_tensor * x, int32_t n_heads, int32_t t_seq, int32_t t_batch,
                                          struct ggml_tensor * causal_mask, float eps) {
    const int64_t d = x->ne[0], n = x->ne[1];
    const int64_t head_dim = d / n_heads;

    /* attention: x [d, n] */
    struct ggml_tensor * h = tnn_layer_norm(ctx, x, b->attn_norm, b->attn_norm_b, eps);
    struct ggml_tensor * q = ggml_reshape_3d(ctx, qkv_part(ctx, b, 0, h), head_dim, n_heads, n);
    struct ggml_tensor * k = ggml_reshape_3d(ctx, qkv_part(ctx, b, 1, h), head_dim, n_heads, n);
    struct ggml_tensor * v = ggml_reshape_3d(ctx, qkv_part(ctx, b, 2, h), head_dim, n_heads, n);
    struct ggml_tensor * attn = tnn_attention(ctx, q, k, v, causal_mask, NULL, t_seq, t_batch,
                                              1.0f / sqrtf((float) head_dim), 0.0f,
                                              TNN_ATTENTION_BY_CACHE);   /* [d, n] */
    x = ggml_add(ctx, x, linear(ctx, b->wo, b->bo, attn));

    /* MLP */
    h = tnn_layer_norm(ctx, x, b->ffn_norm, b->ffn_norm_b, eps);
    struct ggml_tensor * up = tnn_gelu(ctx, linear(ctx, b->w_up, b->b_up, h));   /* [d_ff, n] */
    return ggml_add(ctx, x, linear(ctx, b->w_down, b->b_down, up));
}
