/* One llama transformer block: pre-norm attention and pre-norm SwiGLU
 * feed-forward, each with a residual connection. */
#include "internal.h"

static struct ggml_tensor * new_weight(struct ggml_context * ctx, int64_t ne0, int64_t ne1,
                                       int32_t layer, const char * name) {
    struct ggml_tensor * t = ne1 > 0 ? ggml_new_tensor_2d(ctx, GGML_TYPE_F32, ne0, ne1)
                                     : ggml_new_tensor_1d(ctx, GGML_TYPE_F32, ne0);
    ggml_format_name(t, "blk.%d.%s", layer, name);
    return t;
}

void tnn_block_create(struct ggml_context * ctx, struct tnn_block * b, int32_t layer,
                      const tnn_llama_config * cfg) {
    const int64_t d = cfg->d_model;
    const int64_t head_dim = cfg->d_model / cfg->n_heads;
    const int64_t q_width = head_dim * cfg->n_heads;
    const int64_t kv_width = head_dim * cfg->n_kv_heads;

    b->attn_norm = new_weight(ctx, d, 0, layer, "attn_norm.weight");
    b->wq = new_weight(ctx, d, q_width, layer, "attn_q.weight");
    b->wk = new_weight(ctx, d, kv_width, layer, "attn_k.weight");
    b->wv = new_weight(ctx, d, kv_width, layer, "attn_v.weight");
    b->bq = b->bk = b->bv = NULL;
    if (cfg->qkv_bias) {
        b->bq = new_weight(ctx, q_width, 0, layer, "attn_q.bias");
        b->bk = new_weight(ctx, kv_width, 0, layer, "attn_k.bias");
        b->bv = new_weight(ctx, kv_width, 0, layer, "attn_v.bias");
    }
    b->wo = new_weight(ctx, q_width, d, layer, "attn_output.weight");
    b->ffn_norm = new_weight(ctx, d, 0, layer, "ffn_norm.weight");
    b->w_gate = new_weight(ctx, d, cfg->d_ff, layer, "ffn_gate.weight");
    b->w_up = new_weight(ctx, d, cfg->d_ff, layer, "ffn_up.weight");
    b->w_down = new_weight(ctx, cfg->d_ff, d, layer, "ffn_down.weight");
}

/* x [d_in, n] -> W x (+ bias) [d_out, n] */
static struct ggml_tensor * linear(struct ggml_context * ctx, struct ggml_tensor * w,
                                   struct ggml_tensor * bias, struct ggml_tensor * x) {
    struct ggml_tensor * y = ggml_mul_mat(ctx, w, x);
    return bias ? ggml_add(ctx, y, bias) : y;
}

struct ggml_tensor * tnn_block_forward(struct ggml_context * ctx, const struct tnn_block * b,
                                       struct ggml_tensor * x, struct ggml_tensor * positions,
                                       const tnn_llama_config * cfg) {
    const int64_t n_tokens = x->ne[1];
    const int64_t head_dim = cfg->d_model / cfg->n_heads;

    /* attention: x [d, n] */
    struct ggml_tensor * h = tnn_rms_norm(ctx, x, b->attn_norm, cfg->rms_eps);
    struct ggml_tensor * q = linear(ctx, b->wq, b->bq, h);            /* [H*hd, n] */
    struct ggml_tensor * k = linear(ctx, b->wk, b->bk, h);            /* [KV*hd, n] */
    struct ggml_tensor * v = linear(ctx, b->wv, b->bv, h);            /* [KV*hd, n] */
    q = ggml_reshape_3d(ctx, q, head_dim, cfg->n_heads, n_tokens);
    k = ggml_reshape_3d(ctx, k, head_dim, cfg->n_kv_heads, n_tokens);
    v = ggml_reshape_3d(ctx, v, head_dim, cfg->n_kv_heads, n_tokens);
    q = tnn_rope(ctx, q, positions, cfg->rope_base);
    k = tnn_rope(ctx, k, positions, cfg->rope_base);
    struct ggml_tensor * attn = tnn_attention(ctx, q, k, v, cfg->t_seq, cfg->t_batch);
    x = ggml_add(ctx, x, ggml_mul_mat(ctx, b->wo, attn));

    /* feed-forward */
    h = tnn_rms_norm(ctx, x, b->ffn_norm, cfg->rms_eps);
    struct ggml_tensor * ff = tnn_swiglu(ctx, ggml_mul_mat(ctx, b->w_gate, h),
                                         ggml_mul_mat(ctx, b->w_up, h));   /* [d_ff, n] */
    return ggml_add(ctx, x, ggml_mul_mat(ctx, b->w_down, ff));
}
