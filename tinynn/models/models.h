/* The models: primitives (one ggml sub-graph each) -> blocks -> the
 * architectures (a table of function pointers, models/arch.c), their
 * configs read from a GGUF, a frozen GGUF base and its fast copies.
 * Not installed.
 *
 * What makes a model writes the session's parts it is handed (the model,
 * the tensor table, the frozen base), never the session itself: session/
 * is above this layer (scripts/check_c_layers.py). */
#ifndef TINYNN_MODELS_H
#define TINYNN_MODELS_H

#include "core/core.h"
#include "cpu/state.h"
#include "csrc/backend.h"
#include "gguf/gguf_file.h"

#include "ggml-alloc.h"

#include <stdbool.h>

/* ---- primitives (primitives.c): one ggml sub-graph each ---------------- */

/* x [d, n] -> x / rms(x) * weight */
struct ggml_tensor * tnn_rms_norm(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * weight,
                                  float eps);
/* How a layer rotates its queries and keys (block.c's rope_params fills it
 * from the config, as llama.cpp's graph sets ggml_rope_ext's arguments). */
struct tnn_rope_params {
    int dim;              /* the rotated dims of each head (all but for partial RoPE) */
    float base;           /* the frequency base */
    bool neox;            /* pairs (i, i + dim/2) (llama.cpp's NEOX: Qwen2, Qwen3, Phi-3), else
                             adjacent pairs (NORM: llama) */
    float attn_factor;    /* cos and sin times it (LongRoPE's attention factor; YaRN's) */
    float freq_scale;     /* 1, or every angle times it: 1 / the context extension factor */
    float ext_factor;     /* 0, or 1: YaRN's ramp between beta_fast and beta_slow over
                             n_ctx_orig tokens (ggml then also scales cos and sin by
                             1 + 0.1 ln(1 / freq_scale)) */
    int n_ctx_orig;
    float beta_fast, beta_slow;
};
/* x [head_dim, n_heads, n_tokens], positions int32 [n_tokens] -> x with its
 * first p->dim dims of each head rotated, the rest as they are.
 * freq_factors F32 [dim/2] or NULL: pair i's angle divided by
 * freq_factors[i] (llama 3's RoPE scaling, LongRoPE's chosen set; checked
 * by tnn_check_rope_freqs before it gets here). */
struct ggml_tensor * tnn_rope(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * positions,
                              struct ggml_tensor * freq_factors, const struct tnn_rope_params * p);
/* x [head_dim, n_heads, n_tokens] times 1 + scale ln(1 + floor(pos / period))
 * at each token's position (Llama 4's and Ministral 3's attention
 * temperature), from ggml's own ops (the positions are no parameter: no
 * backward to them). */
struct ggml_tensor * tnn_attn_temperature(struct ggml_context * ctx, struct ggml_tensor * x,
                                          struct ggml_tensor * positions, float scale, int32_t period);
/* tnn_rope's factors[n] (the tensor name's, from where: a file, an upload)
 * finite and positive; returns TNN_OK or records the first bad one. */
int tnn_check_rope_freqs(const float * factors, int64_t n, const char * name, const char * where);
/* gate, up [d_ff, n] -> silu(gate) * up */
struct ggml_tensor * tnn_swiglu(struct ggml_context * ctx, struct ggml_tensor * gate, struct ggml_tensor * up);
/* gate, up [d_ff, n] -> gelu(gate) * up (Gemma) */
struct ggml_tensor * tnn_geglu(struct ggml_context * ctx, struct ggml_tensor * gate, struct ggml_tensor * up);
/* A small weight (a kernel, a bias, a sink, A, D) as F32 for the ops that
 * take no other type: w itself, or its cast. */
struct ggml_tensor * tnn_as_f32(struct ggml_context * ctx, struct ggml_tensor * w);
/* x -> cap * tanh(x / cap): Gemma 2's soft-capping of scores and logits */
struct ggml_tensor * tnn_softcap(struct ggml_context * ctx, struct ggml_tensor * x, float cap);
/* Causal grouped-query attention: softmax(scale q.k, capped to softcap
 * where softcap > 0, + mask) v; with sinks (F32 [n_heads], or NULL) each
 * head's softmax has one more logit, sinks[head], which takes a share of
 * the weight and adds no value (gpt-oss).
 * q [head_dim, n_heads, t_seq*t_batch], k, v [head_dim, n_kv_heads, t_seq*t_batch],
 * mask [t_seq, t_seq, 1, 1 or t_batch] (0 where a query sees a key, -inf
 * elsewhere: causal, and block-diagonal in packed rows; one for every
 * sequence or one each) -> [head_dim*n_heads, t_seq*t_batch].
 * Taken in pieces, the outputs concatenated, where the mask is one a
 * sequence or tnn_attention_by_sequence says (a sequence or less a piece),
 * or split TNN_ATTENTION_PER_KV_HEAD: one kv head of one
 * sequence (and its query heads) at a time, or as many (whole sequences,
 * or heads of one) as make about TNN_ATTENTION_PIECES pieces; the same
 * values, in pieces a recomputed backward holds one at a time. */
#define TNN_ATTENTION_PIECES 16
enum tnn_attention_split {
    TNN_ATTENTION_BY_CACHE = 0,      /* a sequence at a time where the batch's scores outgrow a cache */
    TNN_ATTENTION_PER_KV_HEAD = 1,   /* recomputed blocks: a kv head of a sequence at a time */
    TNN_ATTENTION_WHOLE = 2,         /* one piece: the fused attention (graph/attention.c) holds no scores */
};
/* Whether tnn_attention takes a batch a sequence at a time: packed rows
 * (mask_per_row), or, split TNN_ATTENTION_BY_CACHE, 2 to
 * TNN_ATTENTION_PIECES sequences whose scores together outgrow a core's
 * cache. */
bool tnn_attention_by_sequence(int64_t n_heads, int64_t t_seq, int64_t t_batch, int32_t split, bool mask_per_row);
struct ggml_tensor * tnn_attention(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                   struct ggml_tensor * v, struct ggml_tensor * mask, struct ggml_tensor * sinks,
                                   int32_t t_seq, int32_t t_batch, float scale, float softcap, int32_t split);
/* Causal GQA attention of n new queries over a KV cache: writes the new keys
 * and values into the cache rows kv->kv_rows, then attends over the first
 * kv->n_kv cache positions under kv->kq_mask (0 where a query may look,
 * -inf elsewhere), with one flash-attention op or, where the backend lacks
 * it, two mul_mats and a softmax; sinks, scale and softcap as for
 * tnn_attention.
 * q [head_dim, n_heads, n], k, v [head_dim, n_kv_heads, n] -> [head_dim*n_heads, n] */
struct tnn_kv_step;
struct ggml_tensor * tnn_attention_cached(struct ggml_context * ctx, struct ggml_tensor * q,
                                          struct ggml_tensor * k, struct ggml_tensor * v,
                                          const struct tnn_kv_step * kv, struct ggml_tensor * sinks, float scale,
                                          float softcap);
/* x [d, n] -> (x - mean(x)) / sqrt(var(x) + eps) * weight + bias, per column */
struct ggml_tensor * tnn_layer_norm(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * weight,
                                    struct ggml_tensor * bias, float eps);
/* GELU, tanh form (GPT-2's): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
struct ggml_tensor * tnn_gelu(struct ggml_context * ctx, struct ggml_tensor * x);
/* logits [vocab, n], labels int32 [n] (-1: masked) -> cross-entropy summed
 * over the labelled tokens, divided by n (scalar) */
struct ggml_tensor * tnn_cross_entropy(struct ggml_context * ctx, struct ggml_tensor * logits,
                                       struct ggml_tensor * labels);

/* A contiguous view of like's shape at offset floats of all (F32): a
 * custom backward node's output, one source's gradient after another. */
struct ggml_tensor * tnn_view_like(struct ggml_context * ctx, struct ggml_tensor * all,
                                   const struct ggml_tensor * like, int64_t offset);
/* The gated delta rule (Qwen 3.5's linear attention), each head of each
 * sequence from a zero state: q, k, v [n, heads, T, B] (q and k repeated
 * to v's heads beforehand), g (the log of the state's decay) and beta
 * [1, heads, T, B] -> out [n, heads, T, B]; positions (I32 [T x B], or
 * NULL) restart the state at each token at position 0 (a packed row's
 * samples). One custom node each way on the CPU kernels (cpu/delta_net.c);
 * a device backend refuses it. */
struct ggml_tensor * tnn_gated_delta_net(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                         struct ggml_tensor * v, struct ggml_tensor * g, struct ggml_tensor * beta,
                                         struct ggml_tensor * positions);
/* Mamba-2's selective scan, each head of each sequence from a zero state:
 * x [head_dim, heads, T, B], dt [heads, T, B] (before its softplus), a
 * [1, heads] (A, below 0), b and c [state, groups, T, B] (groups dividing
 * heads) -> y [head_dim, heads, T, B], without the D skip (ggml's
 * GGML_OP_SSM_SCAN's y); positions as tnn_gated_delta_net's. One custom
 * node each way on the CPU kernels (cpu/ssm_scan.c); a device backend
 * refuses it. */
struct ggml_tensor * tnn_ssm_scan(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * dt,
                                  struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                  struct ggml_tensor * positions);

/* The causal depthwise convolution of each sequence from a zero state (in
 * training: ggml's GGML_OP_SSM_CONV on the zero-padded, transposed input),
 * on the token-major input: x [channels, T, B], w [taps, channels] (F32,
 * taps up to TNN_CAUSAL_CONV_TAPS_MAX) -> y [channels, T, B]; positions as
 * tnn_gated_delta_net's (a sample's first tokens see zeros before them).
 * One custom node each way on the CPU (cpu/causal_conv.c); a device backend
 * refuses it. */
struct ggml_tensor * tnn_causal_conv(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * w,
                                     struct ggml_tensor * positions);

/* ---- a mixture of experts' products (experts.c) ------------------------ */

/* A mixture-of-experts feed-forward's weights as llama.cpp names them:
 * the router ffn_gate_inp [d, E] and the experts ffn_gate_exps, ffn_up_exps
 * [d, d_ff_exp, E], ffn_down_exps [d_ff_exp, d, E]. */
struct tnn_moe_weights {
    struct ggml_tensor *router, *gate, *up, *down;
    /* gpt-oss's biases (cfg experts_oai), or NULL: the router's [E], gate's and up's
     * [d_ff_exp, E], down's [d_model, E] */
    struct ggml_tensor *router_b, *gate_b, *up_b, *down_b;
    bool oai;   /* gpt-oss's clamped SwiGLU (tnn_swiglu_oai) in place of SwiGLU */
    /* LoRA pairs on gate, up, down (in that order), or NULL: A [d_in, rank, E],
     * B [rank, d_out, E], each expert's W_e x + lora_scale B_e (A_e x) */
    struct ggml_tensor *lora_a[3], *lora_b[3];
    float lora_scale;
};
/* x [d, T] -> the mixture of experts' SwiGLU feed-forward [d, T]: the
 * router's softmax over the experts, its top n_used (normalize: their
 * weights rescaled to sum to 1, Qwen3-MoE's norm_topk_prob), each chosen
 * expert's down(silu(gate x) up x) weighted and summed (llama.cpp's
 * build_moe_ffn). gpt-oss's (w->oai, and the biases where w has them):
 * the router's logits and each product biased, its activation
 * tnn_swiglu_oai. On the CPU backend (its backward's nodes). */
struct ggml_tensor * tnn_moe_ffn(struct ggml_context * ctx, struct ggml_tensor * x,
                                 const struct tnn_moe_weights * w, int32_t n_used, bool normalize);
/* gpt-oss's activation of gate and up (one shape, F32): g' sigmoid(1.702 g')
 * (u' + 1), g' = min(g, 7), u' = clamp(u, -7, 7), as ggml's swiglu_oai; a
 * custom node each way. */
struct ggml_tensor * tnn_swiglu_oai(struct ggml_context * ctx, struct ggml_tensor * gate, struct ggml_tensor * up);
/* The chosen experts' weights [n_used, T] from the probabilities [E, T]
 * and ids [n_used, T]: w[s, t] = probs[ids[s, t], t], normalized over the
 * token's slots where asked; its backward is one custom node. */
struct ggml_tensor * tnn_routed_weights(struct ggml_context * ctx, struct ggml_tensor * probs,
                                        struct ggml_tensor * ids, bool normalize);
/* y [d_out, n_used, T] = the experts' products, y[:, s, t] = W_e x[:, s % r,
 * t] with e = ids[s, t]: ggml's MUL_MAT_ID on experts [d_in, d_out, E] as
 * stored (any type ggml's CPU multiplies, the stored file's blocks, never a
 * float copy), x [d_in, r, T] (F32, r 1 or n_used), ids I32 [n_used, T]
 * (a router's top k). Its backward is x's gradient through the experts
 * as stored (and theirs where they are trained, F32: a full fine-tune),
 * custom nodes on the CPU kernels (cpu/experts.c), so a device backend
 * refuses it. tnn_experts_check first: it refuses what this cannot train
 * in one line. */
struct ggml_tensor * tnn_experts_product(struct ggml_context * ctx, struct ggml_tensor * experts,
                                         struct ggml_tensor * x, struct ggml_tensor * ids);
/* TNN_OK on the CPU, else TNN_ERR_ARG saying the experts run there alone
 * (the router's chosen weights and the experts' gradients are custom
 * nodes). */
int tnn_experts_on_this_backend(void);
/* TNN_OK, or TNN_ERR_ARG (where: the caller's name for it) for shapes that
 * do not fit, more than TNN_EXPERTS_MAX experts, or trained experts that
 * are not F32. */
int tnn_experts_check(const struct ggml_tensor * experts, const struct ggml_tensor * x,
                      const struct ggml_tensor * ids, const char * where);

/* ---- one transformer block (block.c) ----------------------------------- */

/* LoRA target slots, in enum tnn_lora_target bit order */
enum {
    TNN_LORA_SLOT_Q,
    TNN_LORA_SLOT_K,
    TNN_LORA_SLOT_V,
    TNN_LORA_SLOT_O,
    TNN_LORA_SLOT_GATE,
    TNN_LORA_SLOT_UP,
    TNN_LORA_SLOT_DOWN,
    TNN_LORA_SLOT_CONV_IN,
    TNN_LORA_SLOT_CONV_OUT,
    TNN_LORA_SLOT_SSM_QKV,
    TNN_LORA_SLOT_SSM_GATE,
    TNN_LORA_SLOT_SSM_OUT,
    TNN_LORA_SLOT_SSM_IN,
    TNN_LORA_SLOT_GATE_EXPS,
    TNN_LORA_SLOT_UP_EXPS,
    TNN_LORA_SLOT_DOWN_EXPS,
    TNN_LORA_SLOT_GATE_SHEXP,
    TNN_LORA_SLOT_UP_SHEXP,
    TNN_LORA_SLOT_DOWN_SHEXP,
    TNN_LORA_SLOTS
};

/* Whether a slot adapts a mixture's experts (a stack of matrices, a pair
 * per expert) rather than one matrix. */
static inline bool tnn_lora_slot_experts(int slot) {
    return slot >= TNN_LORA_SLOT_GATE_EXPS && slot <= TNN_LORA_SLOT_DOWN_EXPS;
}

struct tnn_block {
    struct ggml_tensor * attn_norm;                   /* [d_model] */
    struct ggml_tensor *wq, *wk, *wv;              /* [d_model, n_heads*hd], [d_model, n_kv*hd] x2 */
    struct ggml_tensor *bq, *bk, *bv;              /* biases or NULL */
    struct ggml_tensor *q_norm, *k_norm;            /* [hd] per-head RMSNorm weights or NULL */
    struct ggml_tensor *post_attn_norm, *post_ffn_norm;  /* [d] or NULL (Gemma 3) */
    bool local;                                       /* sliding-window attention (Gemma 2, 3) */
    bool rope;                                        /* q and k rotated (SmolLM3: not every
                                                         fourth layer) */
    struct ggml_tensor * rope_freqs;                  /* [rope_dim/2] RoPE factors, the model's (every
                                                         layer shares them, as in llama.cpp), or NULL;
                                                         LongRoPE's short set */
    struct ggml_tensor * rope_freqs_long;             /* LongRoPE's long set (past cfg->rope_orig_ctx),
                                                         or NULL */
    struct ggml_tensor * wo;                          /* [n_heads*hd, d_model] */
    struct ggml_tensor * bo;                          /* [d_model] or NULL (gpt-oss) */
    struct ggml_tensor * attn_sinks;                  /* [n_heads] each head's sink logit, or NULL
                                                         (gpt-oss) */
    struct ggml_tensor * ffn_norm;                    /* [d_model] */
    struct ggml_tensor *w_gate, *w_up;              /* [d_model, d_ff] */
    struct ggml_tensor * w_down;                      /* [d_ff, d_model] */
    /* a mixture of experts' (cfg n_experts > 0) in place of w_gate, w_up, w_down, or NULL: the
     * router ffn_gate_inp [d_model, E], ffn_gate_exps and ffn_up_exps [d_model, d_ff_exp, E],
     * ffn_down_exps [d_ff_exp, d_model, E]; LoRA's *_EXPS slots adapt the experts */
    struct tnn_moe_weights moe;
    /* a mixture's shared expert (cfg d_ff_shexp > 0), or NULL: its gate ffn_gate_inp_shexp
     * [d_model], ffn_gate_shexp and ffn_up_shexp [d_model, d_ff_shexp], ffn_down_shexp
     * [d_ff_shexp, d_model] */
    struct ggml_tensor *shexp_gate_inp, *w_gate_shexp, *w_up_shexp, *w_down_shexp;
    /* Phi-3's fused weights, or NULL: attn_qkv [d_model, (n_heads + 2 n_kv)*hd] (q, k, v rows
     * stacked) and ffn_up [d_model, 2 d_ff] (gate rows, then up rows). wq, wk, wv and
     * w_gate, w_up are then row-range views of them (tnn_block_fused_views), so the
     * products, LoRA slots and fast copies see separate matrices, and a trainable fused
     * weight gathers its views' gradients through ggml's view backward. */
    struct ggml_tensor *wqkv, *w_gate_up;
    /* a short-convolution layer's (kind 'c', LFM2), or NULL: in_proj [d_model, 3 d_model]
     * (rows: B, C, x), the depthwise kernel conv [conv_kernel, d_model], out_proj
     * [d_model, d_model]; such a layer has no attention tensors */
    struct ggml_tensor *conv_in, *conv, *conv_out;
    /* a delta-net layer's (kind 'd', Qwen 3.5), or NULL: ssm_qkv (attn_qkv) [d_model, 2 K + V]
     * (K = ssm_groups S, V = ssm_heads S), ssm_gate (attn_gate) [d_model, V], ssm_conv1d
     * [conv_kernel, 2 K + V], ssm_dt and ssm_a [ssm_heads], ssm_beta and ssm_alpha [d_model,
     * ssm_heads], ssm_norm [S], ssm_out [V, d_model] */
    struct ggml_tensor *ssm_qkv, *ssm_gate, *ssm_conv, *ssm_dt, *ssm_a, *ssm_beta, *ssm_alpha, *ssm_norm, *ssm_out;
    /* a Mamba-2 layer's (kind 'm', Granite 4), or NULL: ssm_in [d_model, 2 I + 2 G S + H]
     * (rows: z [I], x [I], B, C [G S each], dt [H]; I = ssm_inner, G = ssm_groups, S =
     * ssm_state, H = ssm_heads), ssm_conv1d [conv_kernel, I + 2 G S] and its bias ssm_conv_b,
     * ssm_dt [H], ssm_a and ssm_d [1, H], ssm_norm [I / G, G], ssm_out [I, d_model] */
    struct ggml_tensor *ssm_in, *ssm_conv_b, *ssm_d;
    char kind;                                        /* 'a' attention, 'c' short convolution,
                                                         'd' delta net, 'm' Mamba-2 */
    /* LoRA adapters per slot, or NULL: A [d_in, rank], B [rank, d_out] (an experts'
     * slot: [d_in, rank, E], [rank, d_out, E]) */
    struct ggml_tensor * lora_a[TNN_LORA_SLOTS];
    struct ggml_tensor * lora_b[TNN_LORA_SLOTS];
    float lora_scale;                                 /* alpha / rank */
};

/* The block's weight for a LoRA slot (wq, wk, ... w_down), and the field
 * that holds it (a fast copy of a frozen base replaces it there). */
struct ggml_tensor * tnn_block_weight(const struct tnn_block * block, int slot);
struct ggml_tensor ** tnn_block_weight_field(struct tnn_block * block, int slot);
/* The GGUF name suffix of a slot's weight ("attn_q", ..., "ffn_down",
 * "shortconv.in_proj"). */
const char * tnn_lora_slot_name(int slot);
/* What layer does: 'a' (attention) where cfg->layer_kinds is "", else its letter. */
char tnn_layer_kind(const tnn_model_config * cfg, int32_t layer);
/* Whether the layer carries a state from token to token ('c', 'd', 'm'). */
bool tnn_layer_recurrent(const tnn_model_config * cfg, int32_t layer);
/* Whether any layer does. */
bool tnn_model_recurrent(const tnn_model_config * cfg);
/* The first layer with the slot's weight, or -1 where no layer has it. */
int32_t tnn_first_layer_with(const tnn_model_config * cfg, int slot);

/* Point the block at existing weights named blk.<layer>.* in ctx (a mapped
 * GGUF); returns TNN_OK or records which tensor is missing or misshapen.
 * Fused weights (cfg->fused_qkv, fused_gate_up) are bound and checked here;
 * their views are made by tnn_block_fused_views. */
int tnn_block_bind(struct ggml_context * ctx, struct tnn_block * block, int32_t layer,
                   const tnn_model_config * cfg);
/* For a block with fused weights: wq, wk, wv (w_gate, w_up) as row ranges of
 * wqkv (w_gate_up), made in views (room for TNN_BLOCK_FUSED_VIEWS
 * tensors per block). A row range of a quantized matrix is a matrix of the same type. */
void tnn_block_fused_views(struct ggml_context * views, struct tnn_block * block, int32_t layer);
#define TNN_BLOCK_FUSED_VIEWS 5
/* A weight stored fused in the GGUF, and the LoRA slots (first, first + 1,
 * ...) whose weights are its row ranges, in the order they are stacked. */
struct tnn_fused_weight {
    const char * name;   /* "attn_qkv", "ffn_up" */
    int first_slot, n_slots;
};
/* The fused weights of a config (0, 1 or 2 of them) into out[2]. */
int tnn_fused_weights(const tnn_model_config * cfg, struct tnn_fused_weight * out);
/* Create LoRA A and B (named <weight name>.lora_a / .lora_b) in ctx for the
 * slots in targets (a mask of enum tnn_lora_target). */
void tnn_block_add_lora(struct ggml_context * ctx, struct tnn_block * block, int32_t layer,
                        const tnn_lora_config * lora);
/* Create the block's weight tensors (named blk.<layer>.*) in ctx. */
void tnn_block_create(struct ggml_context * ctx, struct tnn_block * block, int32_t layer,
                      const tnn_model_config * cfg);
/* The block's own weight tensors (those that are not views of a fused one:
 * what training updates), in its layout's order, into out; returns how many. */
#define TNN_BLOCK_MAX_TENSORS 56
int tnn_block_tensors(struct tnn_block * block, const tnn_model_config * cfg, int32_t layer,
                      struct ggml_tensor ** out);
/* For generation: this layer's KV cache and the decode graph's inputs. The
 * graph does not depend on where the new tokens go: their cache rows, the
 * mask and the positions are inputs, so one graph serves every decode step
 * of the same shape (generate.c builds and keeps it, filling every field). */
struct tnn_kv_step {
    struct ggml_tensor *k_cache, *v_cache;   /* [head_dim, n_ctx, n_kv_heads]: a head's
                                                  positions are consecutive rows */
    struct ggml_tensor * kv_rows;              /* I64 [n]: the cache row of each new token */
    struct ggml_tensor * kq_mask;              /* F16 [n_kv, n]: 0 or -inf */
    int32_t n_kv;                              /* cache positions attended (the mask's width) */
    bool flash;                                /* ggml_flash_attn_ext, else mul_mat + softmax */
    struct ggml_tensor * conv_state;           /* a recurrent layer's convolution state [conv_kernel
                                                  - 1, channels] (one sequence), else NULL */
    struct ggml_tensor ** conv_update;         /* out: the copy of its new state into conv_state */
    struct ggml_tensor * ssm_state;            /* a delta-net layer's [S, S, ssm_heads], a Mamba-2
                                                  layer's [S, ssm_inner / ssm_heads, ssm_heads],
                                                  else NULL */
    struct ggml_tensor ** ssm_update;          /* out: the copy of its new state into ssm_state */
    struct ggml_tensor * state_slot;           /* I32 [1] holding 0 (ggml_ssm_scan's ids) */
};

/* The block's two sub-layers, without norms or residuals, for blocks that
 * place them otherwise (a variant architecture):
 * attention: h [d_model, n] -> wo attend(rope(wq h), rope(wk h), wv h) [d_model, n]
 * (kv and causal_mask as for tnn_block_forward); ffn: h -> w_down (act(w_gate h) * w_up h). */
struct ggml_tensor * tnn_block_attention(struct ggml_context * ctx, const struct tnn_block * block,
                                         struct ggml_tensor * h, struct ggml_tensor * positions,
                                         struct ggml_tensor * causal_mask, const tnn_model_config * cfg,
                                         const struct tnn_kv_step * kv);
struct ggml_tensor * tnn_block_ffn(struct ggml_context * ctx, const struct tnn_block * block,
                                   struct ggml_tensor * h, const tnn_model_config * cfg);
/* A short-convolution layer ('c'): h [d_model, n] -> out_proj (C * conv(B * x)), B, C,
 * x = in_proj h. kv NULL: training, t_batch sequences of t_seq each convolved from a zero
 * state; else one sequence after kv->conv_state, whose update *kv->conv_update is. */
struct ggml_tensor * tnn_block_shortconv(struct ggml_context * ctx, const struct tnn_block * block,
                                         struct ggml_tensor * h, struct ggml_tensor * positions,
                                         const tnn_model_config * cfg, const struct tnn_kv_step * kv);
/* A delta-net layer ('d'): h [d_model, n] -> ssm_out(norm(o) * silu(z)), o the gated delta
 * rule over the convolved, L2-normed q, k and v of attn_qkv (as llama.cpp's qwen35 builds it).
 * kv NULL: training, t_batch sequences of t_seq each from zero states (toy's node); else one
 * sequence after kv's states (ggml's GATED_DELTA_NET), their updates *kv->conv_update and
 * *kv->ssm_update. */
struct ggml_tensor * tnn_block_delta_net(struct ggml_context * ctx, const struct tnn_block * block,
                                         struct ggml_tensor * h, struct ggml_tensor * positions,
                                         const tnn_model_config * cfg, const struct tnn_kv_step * kv);
/* A Mamba-2 layer ('m'): h [d_model, n] -> ssm_out(norm(y silu(z))), y the selective scan
 * of the convolved x, B, C of ssm_in plus D x (as llama.cpp's build_mamba2_layer). kv as for
 * tnn_block_delta_net (training on toy's scan node, decoding on ggml's SSM_SCAN). */
struct ggml_tensor * tnn_block_mamba2(struct ggml_context * ctx, const struct tnn_block * block,
                                      struct ggml_tensor * h, struct ggml_tensor * positions,
                                      const tnn_model_config * cfg, const struct tnn_kv_step * kv);
/* x [d_model, n_tokens] -> x after attention and feed-forward residuals.
 * kv NULL: training (t_batch sequences of t_seq, causal_mask as for
 * tnn_attention); else one sequence, cached (causal_mask unused). */
struct ggml_tensor * tnn_block_forward(struct ggml_context * ctx, const struct tnn_block * block,
                                       struct ggml_tensor * x, struct ggml_tensor * positions,
                                       struct ggml_tensor * causal_mask, const tnn_model_config * cfg,
                                       const struct tnn_kv_step * kv);

/* ---- the pre-LayerNorm GELU block of GPT-2 and ViT (ln_block.c) -------- */

struct tnn_ln_block {
    struct ggml_tensor *attn_norm, *attn_norm_b;    /* [d] */
    struct ggml_tensor *wqkv, *bqkv;                /* [d, 3d], [3d]: q, k, v stacked */
    struct ggml_tensor *wo, *bo;                    /* [d, d], [d] */
    struct ggml_tensor *ffn_norm, *ffn_norm_b;      /* [d] */
    struct ggml_tensor *w_up, *b_up;                /* [d, d_ff], [d_ff] */
    struct ggml_tensor *w_down, *b_down;            /* [d_ff, d], [d] */
};

#define TNN_LN_BLOCK_TENSORS 12

/* Create the block's tensors (named blk.<layer>.* as llama.cpp's GPT-2) in
 * ctx and list them in out (TNN_LN_BLOCK_TENSORS of them). */
void tnn_ln_block_create(struct ggml_context * ctx, struct tnn_ln_block * block, int32_t layer, int64_t d_model,
                         int64_t d_ff, struct ggml_tensor ** out);
/* x [d, t_seq*t_batch] -> x + attn(LN1(x)), then + mlp(LN2(.)). causal_mask
 * as for tnn_attention, or NULL: every position sees every other. */
struct ggml_tensor * tnn_ln_block_forward(struct ggml_context * ctx, const struct tnn_ln_block * block,
                                          struct ggml_tensor * x, int32_t n_heads, int32_t t_seq, int32_t t_batch,
                                          struct ggml_tensor * causal_mask, float eps);

/* ---- the model and its architecture (models/) ------------------------------- */

struct gguf_context;
struct tnn_model;
struct tnn_frozen_base;
struct tnn_base_placement;

/* What a forward reads besides the parameters (NULL where unused). */
struct tnn_forward_inputs {
    struct ggml_tensor *tokens, *positions;   /* int32 [t_seq*t_batch] (token models) */
    struct ggml_tensor * images;                /* [patch_dim, n_patches, t_batch] (ViT) */
    struct ggml_tensor * causal_mask;           /* [t_seq, t_seq, 1, 1 or t_batch]: 0 where a query
                                                   sees a key, else -inf (one per packed row) */
    struct ggml_tensor * swa_mask;              /* the same within the sliding window, or NULL */
    /* out, when not NULL: [n_layers + 1], the residual stream entering each
     * block and, last, leaving the last block (tnn_note_residual); the
     * checkpoints of activation recomputation (graph/recompute.c) */
    struct ggml_tensor ** residuals;
};

/* Note x as the residual stream entering block l (l = n_layers: leaving the last). */
static inline void tnn_note_residual(const struct tnn_forward_inputs * in, int32_t l, struct ggml_tensor * x) {
    if (in->residuals != NULL) {
        in->residuals[l] = x;
    }
}

/* Generation's forward over a KV cache: n new tokens, their cache rows and
 * the mask over the n_kv positions they attend (generate.c fills it). */
struct tnn_decode_inputs {
    struct ggml_tensor *tokens, *positions;   /* int32 [n] */
    struct ggml_tensor * rows;                  /* int64 [n]: each token's cache row */
    struct ggml_tensor * mask;                  /* F16 [n_kv, n] */
    struct ggml_tensor * mask_swa;              /* F16 [n_kv, n], the sliding-window layers' (cfg
                                                   swa_window), or NULL */
    struct ggml_tensor **k_caches, **v_caches;/* one per layer (NULL: a short convolution's) */
    struct ggml_tensor ** conv_states;          /* one per recurrent layer (a convolution's), else NULL */
    struct ggml_tensor ** ssm_states;           /* one per delta-net or Mamba-2 layer, else NULL */
    struct ggml_tensor * state_slot;            /* I32 [1] holding 0: the states' one sequence */
    struct ggml_tensor ** state_updates;        /* out: 2 a layer, the copies of its new states
                                                   (the decoder computes them after the logits) */
    int32_t n, n_kv;
    bool flash;                                 /* ggml_flash_attn_ext, else mul_mat + softmax */
    bool base_only;                             /* leave the LoRA adapters out */
};

/* An architecture as data: one table entry each (arch.c lists them), so
 * adding one is a file and a line there. NULL members are things the
 * architecture does not do. */
struct tnn_arch {
    const char * name;                          /* tnn_model_desc.arch */
    /* Check desc, fill model (its shape, its params) and create the
     * parameters in model->ctx, each added to tensors (tnn_add_param), and
     * the inputs (tnn_add_token_inputs, or its own); the memory and the
     * init come after. */
    int (*create)(struct tnn_model * model, struct tnn_tensor_table * tensors, const tnn_model_desc * desc);
    /* The same over desc->base_gguf: open it as base, bind its weights,
     * place them (tnn_base_place) and create desc->lora's adapters. */
    int (*create_on_base)(struct tnn_model * model, struct tnn_tensor_table * tensors,
                          struct tnn_frozen_base * base, const struct tnn_base_placement * place,
                          const tnn_model_desc * desc);
    /* inputs -> logits [vocab (classes for a ViT), n] */
    struct ggml_tensor * (*forward)(struct ggml_context * ctx, const struct tnn_model * model,
                                    const struct tnn_forward_inputs * in);
    /* new tokens over the KV cache -> logits [vocab, 1] of the last one */
    struct ggml_tensor * (*forward_cached)(struct ggml_context * ctx, const struct tnn_model * model,
                                           const struct tnn_decode_inputs * in);
    /* The model's GGUF metadata as llama.cpp reads it (NULL: not saved by
     * tinynn, e.g. the ViT, whose file Python writes). */
    void (*gguf_metadata)(struct gguf_context * gguf, const tnn_model_config * cfg);
    /* The host tensor to save for a parameter (NULL: leave it out), when the
     * file's tensor is not a plain copy (a lens folded into an embedding). */
    struct ggml_tensor * (*gguf_tensor)(struct ggml_context * host, const struct tnn_model * model,
                                        struct ggml_tensor * param);
    bool learned_positions;                     /* positions index a table of t_seq rows */
};

/* The table entry of an architecture, or NULL. */
const struct tnn_arch * tnn_arch_find(const char * name);
/* Every architecture's name, ", "-separated (for messages). */
const char * tnn_arch_names(void);

/* llama's entry, which also serves every GGUF base (session/realize.c) */
extern const struct tnn_arch tnn_arch_llama;

/* ---- model families read from GGUF (families.c, family_<name>.c) ---------- */

/* The hyper-parameter keys of a family's GGUF, each "<general.architecture>.<key>". */
struct tnn_family_keys {
    const char *n_layers, *d_model, *d_ff, *n_heads, *n_kv_heads;
    const char * head_dim;          /* optional: d_model / n_heads */
    const char * rope_dim;          /* optional: the head width (fewer: partial RoPE) */
    const char *rope_base, *norm_eps;
    const char * norm_eps_layernorm;  /* where norm_eps is absent (Nemotron-H), as llama.cpp
                                         reads it; else 1e-5 */
    const char *swa_window, *rope_base_swa;   /* read where swa_period > 0 */
    const char *attn_softcap, *final_softcap; /* optional: the family's defaults */
    const char * rope_attn_factor;  /* optional: 1 */
    const char *context_length, *rope_orig_ctx; /* read with LongRoPE's factors: the original
                                                   context (default: the context length) */
    const char * conv_kernel;       /* a hybrid's short convolutions' width (LFM2) */
    const char *ssm_state, *ssm_groups, *ssm_heads, *ssm_inner;   /* delta-net and Mamba-2 layers' shape */
    const char * ssm_conv_kernel;   /* and their convolution's taps */
    const char * full_attention_interval;   /* without recurrent_layers: every n-th layer attends */
};

/* llama.cpp's keys, which every family toy reads so far uses. */
#define TNN_LLAMA_CPP_KEYS                                       \
    {                                                            \
        .n_layers = "block_count",                               \
        .d_model = "embedding_length",                           \
        .d_ff = "feed_forward_length",                           \
        .n_heads = "attention.head_count",                       \
        .n_kv_heads = "attention.head_count_kv",                 \
        .head_dim = "attention.key_length",                      \
        .rope_dim = "rope.dimension_count",                      \
        .rope_base = "rope.freq_base",                           \
        .norm_eps = "attention.layer_norm_rms_epsilon",          \
        .norm_eps_layernorm = "attention.layer_norm_epsilon",    \
        .swa_window = "attention.sliding_window",                \
        .rope_base_swa = "rope.freq_base_swa",                   \
        .attn_softcap = "attn_logit_softcapping",                \
        .final_softcap = "final_logit_softcapping",              \
        .rope_attn_factor = "rope.scaling.attn_factor",          \
        .context_length = "context_length",                      \
        .rope_orig_ctx = "rope.scaling.original_context_length", \
        .conv_kernel = "shortconv.l_cache",                      \
        .ssm_state = "ssm.state_size",                           \
        .ssm_groups = "ssm.group_count",                         \
        .ssm_heads = "ssm.time_step_rank",                       \
        .ssm_inner = "ssm.inner_size",                           \
        .ssm_conv_kernel = "ssm.conv_kernel",                    \
        .full_attention_interval = "full_attention_interval",    \
    }

/* llama 3's RoPE scaling as llama.cpp stores it: one factor per pair of
 * head dims, F32 [head_dim/2], each pair's angle divided by its factor. */
#define TNN_ROPE_FREQS "rope_freqs.weight"
/* LongRoPE's two sets as llama.cpp stores them, each like TNN_ROPE_FREQS
 * (over the rotated dims): short up to the original context, long past it. */
#define TNN_ROPE_FACTORS_SHORT "rope_factors_short.weight"
#define TNN_ROPE_FACTORS_LONG "rope_factors_long.weight"

/* A model family a GGUF names in general.architecture, as data: one file
 * each (family_<name>.c) and a line in families.c. What the file's tensors
 * show (q/k/v biases, q/k norms, an untied head) is found there instead. */
struct tnn_family {
    const char * gguf_arch;              /* general.architecture */
    const char * arch;                   /* the architecture that builds it (models/arch.c), by
                                            name: a family file calls nothing */
    struct tnn_family_keys keys;
    bool rope_neox;                      /* RoPE on pairs (i, i + head_dim/2), else adjacent pairs */
    bool embd_scale;                     /* embeddings scaled by sqrt(d_model) */
    bool ffn_gelu;                       /* GEGLU feed-forward, else SwiGLU */
    bool post_norms;                     /* norms after attention and FFN, where the file has them */
    bool fused;                          /* its GGUFs store gate and up as one ffn_up [d, 2 d_ff]
                                            and may store q, k, v as one attn_qkv (Phi-3) */
    bool rope_freqs;                     /* its GGUFs may carry TNN_ROPE_FREQS (llama 3's RoPE
                                            scaling); a file of another family with one is refused */
    bool longrope;                       /* its GGUFs may carry TNN_ROPE_FACTORS_SHORT and _LONG
                                            (LongRoPE); another family's file with them is refused */
    int32_t swa_period;                  /* every swa_period-th layer global, the rest sliding
                                            window; 0: no sliding window */
    float rope_base_swa;                 /* the local layers' RoPE base when the file has none
                                            (0: the global layers') */
    int32_t swa_window;                  /* the window when the file has none (0: no window) */
    int32_t no_rope_period;              /* every no_rope_period-th layer without RoPE (0: none) */
    float attn_softcap, final_softcap;   /* soft caps when the file has none (0: no cap) */
    int32_t wide_query_layers;           /* the layer count of the size whose scores scale by
                                            1 / sqrt(d_model / n_heads), not 1 / sqrt(head
                                            width) (Gemma's 27 B; 0: none): llama.cpp knows
                                            it by that count, the file does not say */
    bool hybrid;                         /* attention.head_count_kv is a per-layer array whose 0s
                                            mark the layers of kind recurrent_kind (LFM2) */
    char recurrent_kind;                 /* with hybrid: 'c' (short convolutions), 'd' (delta net)
                                            or 'm' (Mamba-2) */
    bool one_sublayer;                   /* with hybrid: each layer one sub-layer (Nemotron-H), the
                                            feed-forward ones ('f') marked by the per-layer
                                            feed_forward_length (tnn_model_config.one_sublayer) */
    bool ffn_relu_sq;                    /* the feed-forward ungated, relu squared */
    char layer_kind;                     /* not hybrid: 0 (attention), or every layer's kind
                                            (Falcon-H1: 'p') */
    bool ssm_norm_optional;              /* a file may leave out Mamba-2's ssm_norm (Falcon-H1:
                                            tnn_model_config.mamba_no_norm) */
    const char * recurrent_layers;       /* with hybrid: the key of a per-layer bool array marking the
                                            recurrent layers (Qwen 3.5), else NULL: the zeros of
                                            attention.head_count_kv mark them (LFM2) */
    bool attn_gate;                      /* Qwen 3.5's gated attention (tnn_model_config.attn_gate) */
    bool experts;                        /* every feed-forward a mixture of experts
                                            (tnn_model_config.n_experts: keys expert_count,
                                            expert_used_count, expert_feed_forward_length) */
    bool experts_norm;                   /* with experts: the chosen weights normalized */
    bool shared_expert;                  /* with experts: a shared expert (key
                                            expert_shared_feed_forward_length: required, or with
                                            experts_optional optional), gated where the file has
                                            ffn_gate_inp_shexp (tnn_model_config.shexp_gate) */
    bool experts_optional;               /* some sizes are a mixture of experts (Granite 4's tiny
                                            and small): read as experts where the file has
                                            expert_count > 0, the experts' width
                                            feed_forward_length where it has no
                                            expert_feed_forward_length (as llama.cpp reads it) */
    bool oai;                            /* gpt-oss: attention sinks, an output bias, sliding
                                            layers' RoPE extended too, its experts
                                            (tnn_model_config's swa_rope_scaled, attn_sinks,
                                            attn_out_bias, experts_oai) */
    bool attn_temperature;               /* the queries' temperature (key attention.temperature_scale,
                                            tnn_model_config.attn_temp_scale: Ministral 3) */
    bool granite_scales;                 /* Granite's embedding, residual, attention and logit
                                            multipliers (optional keys) and its RoPE switch
                                            rope.scaling.finetuned */
    const char * output_norm;            /* the final norm's tensor when not output_norm.weight
                                            (LFM2: token_embd_norm.weight), or NULL */
    const char * tokenizer_kinds;        /* tokenizer.ggml.model values its GGUFs carry */
    const char * default_chat_template;  /* Jinja, for a GGUF without one, or NULL */
};

/* The name of the family's final norm tensor ("output_norm.weight" unless
 * its entry says otherwise). */
const char * tnn_family_output_norm(const struct tnn_family * family);
/* The family of a general.architecture, or NULL. */
const struct tnn_family * tnn_family_find(const char * gguf_arch);
/* Why a GGUF architecture cannot be trained at all (an op ggml cannot
 * differentiate), or NULL where that is not known of it. */
const char * tnn_family_untrainable(const char * gguf_arch);
/* Every family's name, ", "-separated (for messages). */
const char * tnn_family_names(void);
/* The family at index (0 .. tnn_family_count() - 1), or NULL. */
const struct tnn_family * tnn_family_at(int32_t index);

/* The realized model: its architecture, shape, parameters and inputs. */
struct tnn_model {
    const struct tnn_arch * arch;
    tnn_model_config cfg;        /* the shape every layer reads (a ViT's: no vocab) */
    int32_t n_outputs;           /* the logits' rows, what labels index: a token model's
                                    vocabulary (tnn_add_token_inputs), a ViT's classes */
    void * params;               /* the architecture's own struct (struct tnn_llama, ...),
                                    from tnn_alloc_with_blocks: free() frees it */
    struct ggml_context * ctx;   /* trainable parameters and inputs */
    ggml_backend_buffer_t buf;
    struct ggml_tensor *tokens, *positions, *images;
    bool has_lora;               /* adapters on a frozen base (lora says which) */
    tnn_lora_config lora;
};

/* Mark t trainable and add it to the table. */
int tnn_add_param(struct tnn_tensor_table * tensors, struct ggml_tensor * t);
/* The model's int32 token and position inputs of t_seq x t_batch
 * (model->cfg), added to the table; the logits' rows (n_outputs) are the
 * vocabulary. */
int tnn_add_token_inputs(struct tnn_model * model, struct tnn_tensor_table * tensors);
/* n_layers pre-LayerNorm blocks in model->ctx, every tensor trainable. */
int tnn_add_ln_blocks(struct tnn_model * model, struct tnn_tensor_table * tensors, struct tnn_ln_block * blocks,
                      int32_t n_layers, int64_t d_model, int64_t d_ff);
/* An architecture's struct (struct_size bytes) and its n_blocks blocks
 * (block_size bytes each) in one zeroed allocation, which free() frees;
 * *blocks points at the first block. NULL when out of memory. */
void * tnn_alloc_with_blocks(size_t struct_size, size_t block_size, int32_t n_blocks, void ** blocks);
/* A context for a model's tensors: n_tensors descriptors, no data. */
struct ggml_context * tnn_tensor_context(size_t n_tensors);

/* ---- llama-family models (llama.c) ------------------------------------------ */

/* The width of one attention head. */
static inline int64_t tnn_head_dim(const tnn_model_config * cfg) {
    return cfg->head_dim > 0 ? cfg->head_dim : cfg->d_model / cfg->n_heads;
}

/* How many of a head's dims RoPE rotates (partial RoPE: fewer). */
static inline int64_t tnn_rope_dim(const tnn_model_config * cfg) {
    return cfg->rope_dim > 0 ? cfg->rope_dim : tnn_head_dim(cfg);
}

struct tnn_llama {
    const tnn_model_config * cfg;      /* the model's (struct tnn_model's cfg) */
    struct ggml_tensor * token_embd;   /* [d_model, vocab], or [donor_d_in, vocab] with a lens */
    struct ggml_tensor * embd_proj;    /* the lens [donor_d_in, d_model], or NULL */
    struct tnn_block * blocks;       /* n_layers */
    struct ggml_tensor * output_norm;  /* [d_model] */
    struct ggml_tensor * output;       /* [d_model, vocab] or NULL when tied */
    struct ggml_tensor * head;         /* what logits are computed with: output, or
                                          token_embd when tied, or a fast copy of either */
    struct ggml_tensor * rope_freqs;   /* [rope_dim/2] F32, frozen (TNN_ROPE_FREQS or LongRoPE's
                                          short set), or NULL */
    struct ggml_tensor * rope_freqs_long; /* LongRoPE's long set, or NULL */
};

/* The llama of a model built on one (every frozen GGUF base is). */
static inline struct tnn_llama * tnn_llama_of(const struct tnn_model * model) {
    return (struct tnn_llama *) model->params;
}
/* Check a config; returns TNN_OK or records why not. */
int tnn_check_token_model_config(const tnn_model_config * cfg);
/* A llama's parameters with random init, for its own create or a variant's. */
int tnn_llama_create(struct tnn_model * model, struct tnn_tensor_table * tensors, const tnn_model_desc * desc);
/* tokens int32 [n] -> their embedding rows [d, n] (through the lens, scaled
 * by sqrt(d) for Gemma) */
struct ggml_tensor * tnn_llama_embed(struct ggml_context * ctx, const struct tnn_llama * model,
                                     struct ggml_tensor * tokens);

/* ---- GPT-2 (gpt2.c) and ViT (vit.c) ------------------------------------- */

struct tnn_gpt2 {
    struct ggml_tensor * token_embd;     /* [d, vocab], also the LM head */
    struct ggml_tensor * position_embd;  /* [d, t_seq] */
    struct tnn_ln_block * blocks;        /* n_layers */
    struct ggml_tensor *output_norm, *output_norm_b;   /* [d] */
};

struct tnn_vit {
    tnn_vit_config cfg;
    struct ggml_tensor *patch_embd, *patch_embd_b;   /* [patch_dim, d], [d] */
    struct ggml_tensor * position_embd;                /* [d, 1 + n_patches]: 0 is the class token */
    struct tnn_ln_block * blocks;                      /* n_layers */
    struct ggml_tensor *output_norm, *output_norm_b; /* [d] */
    struct ggml_tensor *head, *head_b;               /* [d, n_classes], [n_classes] */
};

/* ---- a GGUF as a frozen base (models/frozen_base.c, frozen_copies.c) ------- */

struct tnn_frozen_pair;

/* The base a LoRA session trains on: the GGUF's tensors, in their stored
 * types, and the fast copies made of them (frozen_copies.c). */
struct tnn_frozen_base {
    struct ggml_context * ctx;       /* tensor descriptors named as in the file */
    ggml_backend_buffer_t buf;
    struct gguf_context * gguf;
    char arch_name[32];              /* general.architecture ("llama", "qwen2", ...) */
    struct ggml_context * ctx_views; /* row views of fused weights (Phi-3), or NULL */
    struct tnn_mapped_file file;
    bool in_place;                   /* tensors point into the mapped file */
    /* fast copies of the matrices, unless base_compute = stored */
    struct ggml_context * ctx_copies;
    ggml_backend_buffer_t buf_copies;
    struct tnn_frozen_pair * pairs;
    int32_t n_pairs;
};

/* Open and validate a model family's GGUF: its config, and a ggml context of
 * tensor descriptors (no data) named as in the file (models/gguf_config.c). */
int tnn_gguf_open(const char * path, tnn_model_config * cfg, struct gguf_context ** gguf_out,
                  struct ggml_context ** tensors_out);
/* Open and map path as base, its config into cfg (the model's). */
int tnn_base_open(struct tnn_frozen_base * base, tnn_model_config * cfg, const char * path);
/* What placing a base takes of its session besides the base, the model and
 * the tensor table: the backend that gives the weights and copies memory,
 * the CPU kernels realize chose (the copies are made for them), and the
 * counts a measuring session keeps instead of memory (measure->on). */
struct tnn_base_placement {
    ggml_backend_t backend;
    const struct tnn_cpu_kernels * kernels;
    struct tnn_measure * measure;
};
/* Give the base's tensors memory (in place in the mapped file when the
 * backend computes on host memory, else a device copy, its upload counted
 * in tensors), make the copies compute asks for (none for stored) of the
 * matrices llama multiplies by, let go of the map where nothing points
 * into it, and add the tensors to the table (kind FROZEN). Needs the base
 * bound to llama (every GGUF base is one). */
int tnn_base_place(struct tnn_frozen_base * base, struct tnn_llama * llama, struct tnn_tensor_table * tensors,
                   const struct tnn_base_placement * place, enum tnn_base_compute compute);
void tnn_base_free(struct tnn_frozen_base * base);

/* ---- fast copies of a frozen base (frozen_copies.c)----------------------------- */

/* A frozen matrix as the forward uses it, its transpose (or NULL), and
 * whether the CPU's packed integer products (qgemm, cpu/kernels.h) serve each. */
struct tnn_frozen_pair {
    struct ggml_tensor * w;        /* [d_in, d_out] */
    struct ggml_tensor * w_bf16;   /* W in bfloat16 for both products (base_compute bf16, bf16_head), or NULL */
    bool w_bf16_tiles;             /* w_bf16 in fgemm_bf16_amx's tiles (kernels.h), not in rows */
    struct ggml_tensor * wt;       /* [d_out, d_in] */
    struct ggml_tensor * w_panels; /* W in 16-row panels for the forward, or NULL */
    bool wt_panels;                /* wt holds 16-row panels (a Q8_0 W^T) */
    int32_t wt_levels;             /* int8 levels of the gradient times panels wt (qgemm) */
};

/* The panel type qgemm multiplies a stored type by (Q4_1 for Q4_1 and
 * Q4_0, Q8_0 for the other quantized types), or GGML_TYPE_COUNT where
 * ggml's own products serve (F32, F16) or there is no dequantization. */
enum ggml_type tnn_panel_type(enum ggml_type stored);
/* n Q4_0 blocks {fp16 d; qs[16]} = d (q - 8) as the Q4_1 blocks {d; m; qs}
 * they equal (m = -8 d, exact in FP16). */
void tnn_q4_0_as_q4_1(const void * src, int64_t n, void * dst);

/* ---- products from the stored blocks (stored_panels.c) ---------------------- */

/* qgemm's matrix for a frozen W [d_in, d_out] as stored (w->data, read in
 * place), its panels packed a pass at a time inside each product: W for
 * the forward, or W^T (transposed) for the input gradient; the panels those
 * of the copies frozen_copies.c makes, to the bit. False where qgemm cannot
 * take W so (F32 or F16 forward, shapes not whole panels and blocks).
 * kernels: the session's, whose qpanel_quantize (W) or
 * qpanel_quantize_columns (W^T) makes the requantized panels. */
bool tnn_stored_panels(const struct ggml_tensor * w, bool transposed, const struct tnn_cpu_kernels * kernels,
                       struct tnn_qpanels * out);

/* Make the transposed copies (and Q8_0 forward copies of slow quantized
 * types) of the base's matrices from the mapped file, and point llama's
 * fields at the forward copies; a bfloat16 copy instead of each matrix
 * under TNN_BASE_BF16, of the head's under TNN_BASE_BF16_HEAD. Needs the
 * base mapped and bound to llama. */
int tnn_frozen_prepare(struct tnn_frozen_base * base, struct tnn_llama * llama,
                       const struct tnn_base_placement * place, enum tnn_base_compute compute);
#endif
