/* A model family's config from its GGUF: the hyper-parameters its family
 * entry names (models/families.c), the shapes of the tensors outside and
 * inside the blocks. Everything a bad file could trip in ggml is checked. */
#include "models/models.h"
#include "gguf.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* t must be a matrix [ne0, ne1] (ne1 = 1: a vector): a third or fourth
 * dimension would reach ggml's get_rows / mul_mat and trip their asserts. */
static int check_shape(const struct ggml_tensor * t, int64_t ne0, int64_t ne1) {
    if (t->ne[0] != ne0 || t->ne[1] != ne1 || t->ne[2] != 1 || t->ne[3] != 1) {
        return tnn_fail(TNN_ERR_ARG, "tensor %s has shape [%lld, %lld, %lld, %lld], expected [%lld, %lld]",
                        t->name, (long long) t->ne[0], (long long) t->ne[1], (long long) t->ne[2],
                        (long long) t->ne[3], (long long) ne0, (long long) ne1);
    }
    return TNN_OK;
}

/* The tensors outside the blocks: token_embd [d_model, vocab], the optional
 * output [d_model, vocab] and the final norm [d_model] (output_norm_name). */
static int check_outer_tensors(struct ggml_context * tensors, const char * output_norm_name, int64_t d_model,
                               int64_t * vocab) {
    const struct ggml_tensor * embd = ggml_get_tensor(tensors, "token_embd.weight");
    if (embd == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tensor token_embd.weight is missing");
    }
    *vocab = embd->ne[1];
    if (*vocab < 1 || *vocab > (1 << 24)) {
        return tnn_fail(TNN_ERR_ARG,
                        "tensor token_embd.weight has %lld rows: a vocabulary of 1 to "
                        "16777216 tokens expected",
                        (long long) *vocab);
    }
    int status = check_shape(embd, d_model, *vocab);
    const struct ggml_tensor * output = ggml_get_tensor(tensors, "output.weight");
    if (status == TNN_OK && output != NULL) {
        status = check_shape(output, d_model, *vocab);
    }
    const struct ggml_tensor * norm = ggml_get_tensor(tensors, output_norm_name);
    if (status == TNN_OK && norm == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tensor %s is missing", output_norm_name);
    }
    return status != TNN_OK ? status : check_shape(norm, d_model, 1);
}

/* A RoPE factor set: F32 [rope_dim/2] (ggml's rope asserts on another type,
 * and a longer one would be read short). */
static int check_factor_tensor(const struct ggml_tensor * t, int64_t rope_dim) {
    if (t->type != GGML_TYPE_F32) {
        return tnn_fail(TNN_ERR_ARG, "tensor %s has type %s, expected F32", t->name, ggml_type_name(t->type));
    }
    if (t->ne[0] != rope_dim / 2 || ggml_nelements(t) != rope_dim / 2) {
        return tnn_fail(TNN_ERR_ARG,
                        "tensor %s has shape [%lld, %lld, %lld, %lld], expected [%lld]: one RoPE factor per "
                        "pair of the %lld rotated dims of a head",
                        t->name, (long long) t->ne[0], (long long) t->ne[1], (long long) t->ne[2],
                        (long long) t->ne[3], (long long) (rope_dim / 2), (long long) rope_dim);
    }
    return TNN_OK;
}

/* LongRoPE (Phi-3.5, the 128k Phi-3 models, Phi-4-mini): both factor sets,
 * the context they switch at (llama.cpp's n_ctx_orig_yarn: the original
 * context, else the context length) and the attention factor the converter
 * writes with them (read for every file, as llama.cpp does). */
static int read_longrope(struct gguf_context * g, struct ggml_context * tensors, const struct tnn_family * family,
                         int64_t rope_dim, tnn_model_config * c) {
    const char * arch = family->gguf_arch;
    char k[96];
    snprintf(k, sizeof(k), "%s.%s", arch, family->keys.rope_attn_factor);
    int status = tnn_gguf_get_float(g, k, 1.0f, &c->rope_attn_factor);
    if (status != TNN_OK) {
        return status;
    }
    if (!(c->rope_attn_factor > 0.0f) || !isfinite(c->rope_attn_factor)) {
        return tnn_fail(TNN_ERR_ARG, "%s: RoPE attention factor %g is not a finite positive number", k,
                        c->rope_attn_factor);
    }
    const struct ggml_tensor * sets[2] = { ggml_get_tensor(tensors, TNN_ROPE_FACTORS_SHORT),
                                           ggml_get_tensor(tensors, TNN_ROPE_FACTORS_LONG) };
    if (sets[0] == NULL && sets[1] == NULL) {
        return TNN_OK;
    }
    if (!family->longrope) {
        return tnn_fail(TNN_ERR_ARG, "tensor %s: %s models have no LongRoPE factors",
                        (sets[0] ? sets[0] : sets[1])->name, family->gguf_arch);
    }
    if (sets[0] == NULL || sets[1] == NULL) {
        /* the converter writes both; llama.cpp would run the missing one's
         * contexts with plain RoPE, which a model trained with factors is not */
        return tnn_fail(TNN_ERR_ARG, "tensor %s without %s: LongRoPE needs both factor sets",
                        sets[0] ? TNN_ROPE_FACTORS_SHORT : TNN_ROPE_FACTORS_LONG,
                        sets[0] ? TNN_ROPE_FACTORS_LONG : TNN_ROPE_FACTORS_SHORT);
    }
    for (int i = 0; i < 2; ++i) {
        if ((status = check_factor_tensor(sets[i], rope_dim))) {
            return status;
        }
    }
    int64_t n_ctx, orig;
    char kc[96];
    snprintf(kc, sizeof(kc), "%s.%s", arch, family->keys.context_length);
    snprintf(k, sizeof(k), "%s.%s", arch, family->keys.rope_orig_ctx);
    if ((status = tnn_gguf_get_uint(g, kc, 0, &n_ctx)) || (status = tnn_gguf_get_uint(g, k, n_ctx, &orig))) {
        return status;
    }
    if (orig < 1 || orig > INT32_MAX) {
        return tnn_fail(TNN_ERR_ARG, "%s: LongRoPE needs the original context length (1 to %d), got %lld", k,
                        INT32_MAX, (long long) orig);
    }
    c->rope_freqs = 1;
    c->rope_orig_ctx = (int32_t) orig;
    return TNN_OK;
}

/* RoPE's factors where the family reads them: llama 3's TNN_ROPE_FREQS or
 * LongRoPE's two sets, one mechanism (llama.cpp's freq_factors). Sets
 * c->rope_freqs (and c->rope_orig_ctx for LongRoPE); the values are checked
 * by check_rope_freq_values once the file's extent is known. */
static int read_rope_freqs(struct gguf_context * g, struct ggml_context * tensors,
                           const struct tnn_family * family, int64_t rope_dim, tnn_model_config * c) {
    const struct ggml_tensor * t = ggml_get_tensor(tensors, TNN_ROPE_FREQS);
    c->rope_freqs = t != NULL;
    if (t != NULL && !family->rope_freqs) {
        return tnn_fail(TNN_ERR_ARG, "tensor %s: %s models have no RoPE frequency factors", TNN_ROPE_FREQS,
                        family->gguf_arch);
    }
    int status = t != NULL ? check_factor_tensor(t, rope_dim) : TNN_OK;
    return status != TNN_OK ? status : read_longrope(g, tensors, family, rope_dim, c);
}

/* The factors themselves, read from the file: finite and positive. */
static int check_rope_freq_values(struct gguf_context * g, const char * path, const tnn_model_config * c) {
    const int64_t n = tnn_rope_dim(c) / 2;   /* at most 2048 (read_config) */
    float factors[2048];
    const char * names[2] = { TNN_ROPE_FACTORS_SHORT, TNN_ROPE_FACTORS_LONG };
    if (c->rope_orig_ctx == 0) {
        names[0] = TNN_ROPE_FREQS;
        names[1] = NULL;
    }
    int status = TNN_OK;
    for (int i = 0; i < 2 && names[i] != NULL && status == TNN_OK; ++i) {
        status = tnn_gguf_read_tensor(g, path, names[i], factors, (size_t) n * sizeof(float));
        if (status == TNN_OK) {
            status = tnn_check_rope_freqs(factors, n, names[i], path);
        }
    }
    return status;
}

/* Phi-3's fused weights: ffn_up holds gate and up, and q, k, v are one
 * attn_qkv where the file has it (llama.cpp reads either). What toy cannot
 * run as llama.cpp does is refused by name: a fused bias. */
static int read_fused(struct ggml_context * tensors, const struct tnn_family * family, tnn_model_config * c) {
    c->fused_gate_up = family->fused;
    c->fused_qkv = family->fused && ggml_get_tensor(tensors, "blk.0.attn_qkv.weight") != NULL;
    if (c->fused_qkv && ggml_get_tensor(tensors, "blk.0.attn_qkv.bias") != NULL) {
        return tnn_fail(TNN_ERR_ARG, "tensor blk.0.attn_qkv.bias: %s models with q/k/v biases are not supported",
                        family->gguf_arch);
    }
    return TNN_OK;
}

/* "<arch>.<name>": the arch's own key */
static const char * arch_key(char * buf, size_t cap, const char * arch, const char * name) {
    snprintf(buf, cap, "%s.%s", arch, name);
    return buf;
}

/* A per-layer array of 32-bit counts at key, each 0 to most. */
static int read_layer_counts(struct gguf_context * g, const char * key, int64_t n_layers, int32_t most,
                             const int32_t ** counts) {
    const int64_t id = gguf_find_key(g, key);
    if (id < 0 || gguf_get_kv_type(g, id) != GGUF_TYPE_ARRAY ||
        (gguf_get_arr_type(g, id) != GGUF_TYPE_UINT32 && gguf_get_arr_type(g, id) != GGUF_TYPE_INT32) ||
        (int64_t) gguf_get_arr_n(g, id) != n_layers) {
        return tnn_fail(TNN_ERR_ARG, "%s must be an array of %lld 32-bit integers, one for each layer", key,
                        (long long) n_layers);
    }
    *counts = gguf_get_arr_data(g, id);   /* INT32 and UINT32 alike: 0 to most checked */
    for (int64_t l = 0; l < n_layers; ++l) {
        if ((*counts)[l] < 0 || (*counts)[l] > most) {
            return tnn_fail(TNN_ERR_ARG, "%s[%lld] = %d: 0 to %d expected", key, (long long) l, (*counts)[l],
                            most);
        }
    }
    return TNN_OK;
}

/* A hybrid's per-layer attention.head_count_kv (key): its zeros mark the
 * layers of the family's recurrent kind, the rest attend with that many kv
 * heads, the same in every attention layer (as llama.cpp's LFM2 asserts). */
static int read_layer_kinds(struct gguf_context * g, const char * key, const struct tnn_family * family,
                            int64_t n_layers, char * kinds, int64_t * n_kv_heads) {
    const int32_t * counts;
    int status = read_layer_counts(g, key, n_layers, 1024, &counts);
    if (status != TNN_OK) {
        return status;
    }
    *n_kv_heads = 0;
    for (int64_t l = 0; l < n_layers; ++l) {
        if (counts[l] != 0 && *n_kv_heads != 0 && counts[l] != *n_kv_heads) {
            return tnn_fail(TNN_ERR_ARG,
                            "%s[%lld] = %d: a layer's kv heads must be 0 (a %s layer) or the same "
                            "count in every attention layer",
                            key, (long long) l, counts[l],
                            family->recurrent_kind == 'c' ? "short-convolution" : "recurrent");
        }
        kinds[l] = counts[l] == 0 ? family->recurrent_kind : 'a';
        if (counts[l] != 0) {
            *n_kv_heads = counts[l];
        }
    }
    kinds[n_layers] = '\0';
    return TNN_OK;
}

/* Nemotron-H's layers, each one sub-layer: the per-layer
 * feed_forward_length (key) marks the feed-forward layers ('f', all of
 * one width, d_ff), among the others as read_layer_kinds tells them
 * apart (as llama.cpp reads them: recurrent where both counts are 0). */
static int read_sublayer_kinds(struct gguf_context * g, const char * key, int64_t n_layers, char * kinds,
                               int64_t * d_ff) {
    const int32_t * widths;
    int status = read_layer_counts(g, key, n_layers, 1 << 20, &widths);
    if (status != TNN_OK) {
        return status;
    }
    *d_ff = 0;
    for (int64_t l = 0; l < n_layers; ++l) {
        if (widths[l] == 0) {
            continue;
        }
        if (kinds[l] == 'a' || (*d_ff != 0 && widths[l] != *d_ff)) {
            return tnn_fail(TNN_ERR_ARG,
                            "%s[%lld] = %d: a feed-forward layer has no attention heads, and every one the "
                            "same width",
                            key, (long long) l, widths[l]);
        }
        kinds[l] = 'f';
        *d_ff = widths[l];
    }
    if (*d_ff == 0) {
        return tnn_fail(TNN_ERR_ARG, "%s: no layer is a feed-forward layer", key);
    }
    return TNN_OK;
}

/* Qwen 3.5's recurrent layers: the bool array at key (true: a delta-net
 * layer), or without it every interval-th layer attending (llama.cpp's
 * default 4), as llama.cpp reads them. */
static int read_recurrent_layers(struct gguf_context * g, const char * key, const char * interval_key,
                                 const struct tnn_family * family, int64_t n_layers, char * kinds) {
    const int64_t id = gguf_find_key(g, key);
    if (id < 0) {
        int64_t interval;
        int status = tnn_gguf_get_uint(g, interval_key, 4, &interval);
        if (status != TNN_OK) {
            return status;
        }
        if (interval < 1 || interval > n_layers) {
            return tnn_fail(TNN_ERR_ARG, "%s must be 1 to %lld, got %lld", interval_key, (long long) n_layers,
                            (long long) interval);
        }
        for (int64_t l = 0; l < n_layers; ++l) {
            kinds[l] = (l + 1) % interval != 0 ? family->recurrent_kind : 'a';
        }
        kinds[n_layers] = '\0';
        return TNN_OK;
    }
    if (gguf_get_kv_type(g, id) != GGUF_TYPE_ARRAY || gguf_get_arr_type(g, id) != GGUF_TYPE_BOOL ||
        (int64_t) gguf_get_arr_n(g, id) != n_layers) {
        return tnn_fail(TNN_ERR_ARG, "%s must be an array of %lld bools, one for each layer", key,
                        (long long) n_layers);
    }
    const int8_t * recurrent = gguf_get_arr_data(g, id);
    for (int64_t l = 0; l < n_layers; ++l) {
        kinds[l] = recurrent[l] ? family->recurrent_kind : 'a';
    }
    kinds[n_layers] = '\0';
    return TNN_OK;
}

/* The shape of delta-net ('d', Qwen 3.5) or Mamba-2 ('m', Granite 4)
 * layers from the ssm.* keys: S, the groups (key heads) and heads, the
 * inner width, the convolution's taps. A delta net's inner width must be S
 * value heads (ggml's delta rule takes square states), Mamba-2's a
 * multiple of its heads. */
static int read_ssm(struct gguf_context * g, const char * arch, const struct tnn_family_keys * keys, char kind,
                    tnn_model_config * c) {
    char k[96];
    int64_t state, groups, heads, inner, taps;
    int status;
    if ((status = tnn_gguf_get_uint(g, arch_key(k, sizeof(k), arch, keys->ssm_state), -1, &state)) ||
        (status = tnn_gguf_get_uint(g, arch_key(k, sizeof(k), arch, keys->ssm_groups), -1, &groups)) ||
        (status = tnn_gguf_get_uint(g, arch_key(k, sizeof(k), arch, keys->ssm_heads), -1, &heads)) ||
        (status = tnn_gguf_get_uint(g, arch_key(k, sizeof(k), arch, keys->ssm_inner), -1, &inner)) ||
        (status = tnn_gguf_get_uint(g, arch_key(k, sizeof(k), arch, keys->ssm_conv_kernel), -1, &taps))) {
        return status;
    }
    const bool inner_fits = kind == 'd' ? inner == state * heads
                                        : inner >= 1 && inner <= (1 << 18) && inner % heads == 0;
    if (state < 1 || state > 1024 || groups < 1 || heads < 1 || heads > 1024 || heads % groups != 0 ||
        !inner_fits || taps < 2 || taps > 64) {
        return tnn_fail(TNN_ERR_ARG,
                        "%s: %s layers of state %lld, %lld groups and %lld heads, inner width %lld and %lld taps "
                        "are not supported (%s)",
                        arch, kind == 'd' ? "delta-net" : "Mamba-2", (long long) state, (long long) groups,
                        (long long) heads, (long long) inner, (long long) taps,
                        kind == 'd' ? "the inner width must be state x value heads"
                                    : "the inner width must be a multiple of the heads");
    }
    c->ssm_state = (int32_t) state;
    c->ssm_groups = (int32_t) groups;
    c->ssm_heads = (int32_t) heads;
    c->ssm_inner = (int32_t) inner;
    c->conv_kernel = (int32_t) taps;
    return TNN_OK;
}

/* Granite's multipliers (each optional: 0, which means 1) and its switch
 * for RoPE: rope.scaling.finetuned false (Granite 4's hybrids) turns RoPE
 * off in every layer, as llama.cpp reads it. */
static int read_granite_scales(struct gguf_context * g, const char * arch, tnn_model_config * c) {
    char k[96];
    int status;
    if ((status = tnn_gguf_get_float(g, arch_key(k, sizeof(k), arch, "embedding_scale"), 0.0f,
                                     &c->embd_multiplier)) ||
        (status = tnn_gguf_get_float(g, arch_key(k, sizeof(k), arch, "residual_scale"), 0.0f,
                                     &c->residual_multiplier)) ||
        (status = tnn_gguf_get_float(g, arch_key(k, sizeof(k), arch, "logit_scale"), 0.0f, &c->logit_scaling)) ||
        (status = tnn_gguf_get_float(g, arch_key(k, sizeof(k), arch, "attention.scale"), 0.0f, &c->attn_scale))) {
        return status;
    }
    const float scales[] = { c->embd_multiplier, c->residual_multiplier, c->logit_scaling, c->attn_scale };
    for (size_t i = 0; i < sizeof(scales) / sizeof(scales[0]); ++i) {
        if (!(scales[i] >= 0.0f) || !isfinite(scales[i])) {
            return tnn_fail(TNN_ERR_ARG, "%s: a multiplier of %g is not supported (finite, 0 or above)", arch,
                            scales[i]);
        }
    }
    const int64_t id = gguf_find_key(g, arch_key(k, sizeof(k), arch, "rope.scaling.finetuned"));
    if (id >= 0 && gguf_get_kv_type(g, id) != GGUF_TYPE_BOOL) {
        return tnn_fail(TNN_ERR_ARG, "GGUF key '%s' is not a bool", k);
    }
    if (id >= 0 && !gguf_get_val_bool(g, id)) {
        c->no_rope_period = 1;   /* (l + 1) % 1 == 0: no layer rotates */
    }
    return TNN_OK;
}

/* RoPE's context extension, read for every family as llama.cpp reads it:
 * rope.scaling.type (linear when absent) and .factor; YaRN's original
 * context (the context length when absent), ramp ends (32, 1) and
 * mscale_all_dim (yarn_log_multiplier); LongRoPE is read_longrope's. With
 * the family's attention temperature (Ministral 3), its scale, over the
 * same original context. */
static int read_rope_scaling(struct gguf_context * g, const struct tnn_family * family, tnn_model_config * c) {
    const char * arch = family->gguf_arch;
    char k[96];
    const int64_t id = gguf_find_key(g, arch_key(k, sizeof(k), arch, "rope.scaling.type"));
    if (id >= 0 && gguf_get_kv_type(g, id) != GGUF_TYPE_STRING) {
        return tnn_fail(TNN_ERR_ARG, "GGUF key '%s' is not a string", k);
    }
    const char * type = id >= 0 ? gguf_get_val_str(g, id) : "linear";
    const bool yarn = strcmp(type, "yarn") == 0;
    if (!yarn && strcmp(type, "linear") != 0 && strcmp(type, "none") != 0 && strcmp(type, "longrope") != 0) {
        return tnn_fail(TNN_ERR_ARG, "%s: RoPE scaling '%.32s' is not one toy runs (none, linear, yarn, longrope)",
                        k, type);
    }
    float factor = 0.0f, temp_scale = 0.0f;
    int status;
    if ((status = tnn_gguf_get_float(g, arch_key(k, sizeof(k), arch, "rope.scaling.factor"), 0.0f, &factor)) ||
        (family->attn_temperature &&
         (status = tnn_gguf_get_float(g, arch_key(k, sizeof(k), arch, "attention.temperature_scale"), 0.0f,
                                      &temp_scale)))) {
        return status;
    }
    if (!(factor == 0.0f || factor >= 1.0f) || !isfinite(factor) || !(temp_scale >= 0.0f) ||
        !isfinite(temp_scale)) {
        return tnn_fail(TNN_ERR_ARG,
                        "%s: a RoPE scaling factor of %g or an attention temperature scale of %g is not "
                        "supported (0, or at least 1; 0 or above)",
                        arch, factor, temp_scale);
    }
    const bool scaled = factor > 1.0f && strcmp(type, "none") != 0 && strcmp(type, "longrope") != 0;
    if (!scaled && temp_scale == 0.0f) {
        return TNN_OK;
    }
    int64_t n_ctx, orig;
    if ((status = tnn_gguf_get_uint(g, arch_key(k, sizeof(k), arch, "context_length"), 0, &n_ctx)) ||
        (status = tnn_gguf_get_uint(g, arch_key(k, sizeof(k), arch, "rope.scaling.original_context_length"), n_ctx,
                                    &orig))) {
        return status;
    }
    c->rope_scale = scaled ? factor : 0.0f;
    c->rope_yarn = scaled && yarn;
    c->attn_temp_scale = temp_scale;
    c->rope_yarn_ctx = (int32_t) (orig < 1 || orig > INT32_MAX ? 0 : orig); /* 0: refused by the config check */
    c->rope_yarn_beta_fast = 32.0f;
    c->rope_yarn_beta_slow = 1.0f;
    if (c->rope_yarn &&
        ((status = tnn_gguf_get_float(g, arch_key(k, sizeof(k), arch, "rope.scaling.yarn_beta_fast"), 32.0f,
                                      &c->rope_yarn_beta_fast)) ||
         (status = tnn_gguf_get_float(g, arch_key(k, sizeof(k), arch, "rope.scaling.yarn_beta_slow"), 1.0f,
                                      &c->rope_yarn_beta_slow)) ||
         (status = tnn_gguf_get_float(g, arch_key(k, sizeof(k), arch, "rope.scaling.yarn_log_multiplier"), 0.0f,
                                      &c->rope_yarn_log_mul)))) {
        return status;
    }
    if (!(c->rope_yarn_beta_fast > c->rope_yarn_beta_slow) || !isfinite(c->rope_yarn_beta_fast) ||
        !isfinite(c->rope_yarn_beta_slow) || !(c->rope_yarn_log_mul >= 0.0f) || !isfinite(c->rope_yarn_log_mul)) {
        return tnn_fail(TNN_ERR_ARG,
                        "%s: YaRN's beta_fast %g must be above its beta_slow %g, and its log multiplier %g 0 or "
                        "above, each finite",
                        arch, c->rope_yarn_beta_fast, c->rope_yarn_beta_slow, c->rope_yarn_log_mul);
    }
    return TNN_OK;
}

/* A family read here may come in mixture-of-experts sizes (Granite 4's
 * tiny and small): refused by name, before any tensor is bound. */
static int refuse_experts(struct ggml_context * tensors, const char * arch, int64_t n_layers) {
    char name[64];
    for (int64_t l = 0; l < n_layers; ++l) {
        snprintf(name, sizeof(name), "blk.%lld.ffn_gate_inp.weight", (long long) l);
        if (ggml_get_tensor(tensors, name) != NULL) {
            return tnn_fail(TNN_ERR_ARG,
                            "%s: this file's mixture-of-experts layers (%s) cannot be trained yet: toy has no "
                            "expert path (its dense sizes train)",
                            arch, name);
        }
    }
    return TNN_OK;
}

/* A mixture of experts' shape (llama.cpp's keys): how many experts, how
 * many a token uses, an expert's hidden width. */
static int read_experts(struct gguf_context * g, const char * arch, const struct tnn_family * family,
                        tnn_model_config * c) {
    char k[96];
    int64_t n_experts, n_used, d_ff_exp;
    int status;
    const bool optional = family->experts_optional;
    if ((status = tnn_gguf_get_uint(g, arch_key(k, sizeof(k), arch, "expert_count"), optional ? 0 : -1,
                                    &n_experts))) {
        return status;
    }
    if (optional && n_experts == 0) {
        return TNN_OK; /* a dense size */
    }
    if ((status = tnn_gguf_get_uint(g, arch_key(k, sizeof(k), arch, "expert_used_count"), -1, &n_used)) ||
        (status = tnn_gguf_get_uint(g, arch_key(k, sizeof(k), arch, "expert_feed_forward_length"),
                                    optional ? c->d_ff : -1, &d_ff_exp))) {
        return status;
    }
    if ((status = tnn_experts_on_this_backend())) { /* before the base is read onto a device */
        return status;
    }
    if (n_experts < 1 || n_experts > TNN_EXPERTS_MAX || n_used < 1 || n_used > n_experts || d_ff_exp < 1 ||
        d_ff_exp > (1 << 20)) {
        return tnn_fail(TNN_ERR_ARG,
                        "%s: %lld experts, %lld used a token, %lld wide: toy takes 1 to %d experts, "
                        "1 to all of them used, 1 to %d wide",
                        arch, (long long) n_experts, (long long) n_used, (long long) d_ff_exp, TNN_EXPERTS_MAX,
                        1 << 20);
    }
    c->n_experts = (int32_t) n_experts;
    c->n_experts_used = (int32_t) n_used;
    c->d_ff_exp = (int32_t) d_ff_exp;
    c->experts_norm = family->experts_norm;
    if (c->d_ff == 0) {
        c->d_ff = c->d_ff_exp; /* no dense width in the file: no layer has a dense feed-forward to read it */
    }
    if (family->shared_expert) {
        int64_t d_ff_shexp;
        if ((status = tnn_gguf_get_uint(g, arch_key(k, sizeof(k), arch, "expert_shared_feed_forward_length"),
                                        optional ? 0 : -1, &d_ff_shexp))) {
            return status;
        }
        if ((d_ff_shexp < 1 && !optional) || d_ff_shexp < 0 || d_ff_shexp > (1 << 18)) {
            return tnn_fail(TNN_ERR_ARG, "%s: a shared expert %lld wide: toy takes 1 to %d", k,
                            (long long) d_ff_shexp, 1 << 18);
        }
        c->d_ff_shexp = (int32_t) d_ff_shexp;
    }
    float weights_scale;
    if ((status = tnn_gguf_get_float(g, arch_key(k, sizeof(k), arch, "expert_weights_scale"), 0.0f,
                                     &weights_scale))) {
        return status;
    }
    if (weights_scale != 0.0f && weights_scale != 1.0f) {
        return tnn_fail(TNN_ERR_ARG, "%s: experts' weights scaled by %g: toy does not scale them yet", k,
                        weights_scale);
    }
    return TNN_OK;
}

/* The family's config from its GGUF: the hyper-parameters under the keys
 * its entry names (models/families.c), what differs as its entry says, and
 * what the file's tensors show (q/k/v biases, q/k norms, an untied head,
 * RoPE factors). */
static int read_config(struct gguf_context * g, struct ggml_context * tensors, tnn_model_config * c) {
    const char * arch = tnn_gguf_arch(g);
    if (arch == NULL) {
        return tnn_fail(TNN_ERR_ARG, "the GGUF has no general.architecture");
    }
    const struct tnn_family * family = tnn_family_find(arch);
    const char * untrainable = tnn_family_untrainable(arch);
    if (family == NULL && untrainable != NULL) {
        return tnn_fail(TNN_ERR_ARG, "architecture '%s' cannot be trained yet: %s", arch, untrainable);
    }
    if (family == NULL) {
        return tnn_fail(TNN_ERR_ARG, "unsupported architecture '%.40s': toy trains %s", arch, tnn_family_names());
    }
    const struct tnn_family_keys * keys = &family->keys;
    char k[96];
    const size_t kc = sizeof(k);
    int64_t n_layers, d_model, d_ff, n_heads, n_kv_heads, head_dim, rope_dim;
    int status;
    if ((status = tnn_gguf_get_uint(g, arch_key(k, kc, arch, keys->n_layers), -1, &n_layers)) ||
        (status = tnn_gguf_get_uint(g, arch_key(k, kc, arch, keys->d_model), -1, &d_model)) ||
        (!family->one_sublayer && /* else a width a layer, read with the kinds */
         /* a mixture of experts may have no dense width (Qwen 3.5 MoE): its experts' stands in */
         (status = tnn_gguf_get_uint(g, arch_key(k, kc, arch, keys->d_ff), family->experts ? 0 : -1, &d_ff))) ||
        (status = tnn_gguf_get_uint(g, arch_key(k, kc, arch, keys->n_heads), -1, &n_heads))) {
        return status;
    }
    if ((family->hybrid || family->layer_kind != 0) && (n_layers < 1 || n_layers > TNN_MAX_LAYERS)) {
        /* before a letter a layer */
        return tnn_fail(TNN_ERR_ARG, "n_layers must be between 1 and %d, got %lld", TNN_MAX_LAYERS,
                        (long long) n_layers);
    }
    char kinds[TNN_MAX_LAYERS + 1] = "";
    if (family->hybrid && family->recurrent_layers == NULL) {
        status = read_layer_kinds(g, arch_key(k, kc, arch, keys->n_kv_heads), family, n_layers, kinds,
                                  &n_kv_heads);
        if (status == TNN_OK && family->one_sublayer) {
            status = read_sublayer_kinds(g, arch_key(k, kc, arch, keys->d_ff), n_layers, kinds, &d_ff);
        }
    } else {
        status = tnn_gguf_get_uint(g, arch_key(k, kc, arch, keys->n_kv_heads), n_heads, &n_kv_heads);
        if (status == TNN_OK && family->recurrent_layers != NULL) {
            char k2[96];
            status = read_recurrent_layers(g, arch_key(k, kc, arch, family->recurrent_layers),
                                           arch_key(k2, sizeof(k2), arch, keys->full_attention_interval), family,
                                           n_layers, kinds);
        }
    }
    if (status != TNN_OK) {
        return status;
    }
    if (family->layer_kind != 0) {
        memset(kinds, family->layer_kind, (size_t) n_layers); /* checked: 1 to TNN_MAX_LAYERS */
        kinds[n_layers] = '\0';
    }
    if (family->hybrid && n_kv_heads == 0) {
        n_kv_heads = n_heads; /* no attention layer: the heads are never used */
    }
    if (n_heads < 1 || n_kv_heads < 1 || n_heads % n_kv_heads != 0) {
        return tnn_fail(TNN_ERR_ARG, "%s.attention.head_count_kv (%lld) does not divide head_count (%lld)", arch,
                        (long long) n_kv_heads, (long long) n_heads);
    }
    /* a head's width: key_length when given (Qwen3's heads are wider than d_model / n_heads) */
    if ((status = tnn_gguf_get_uint(g, arch_key(k, kc, arch, keys->head_dim), d_model / n_heads, &head_dim))) {
        return status;
    }
    if (head_dim < 2 || head_dim % 2 != 0 || head_dim > (1 << 12)) {
        return tnn_fail(TNN_ERR_ARG, "%s: a head width of %lld is not supported (even, 2 to 4096)", arch,
                        (long long) head_dim);
    }
    if ((status = tnn_gguf_get_uint(g, arch_key(k, kc, arch, keys->rope_dim), head_dim, &rope_dim))) {
        return status;
    }
    if (rope_dim < 2 || rope_dim % 2 != 0 || rope_dim > head_dim) {
        /* partial RoPE (Phi-4-mini) rotates the first rope_dim dims of a head */
        return tnn_fail(TNN_ERR_ARG, "%s: RoPE over %lld of a head's %lld dims is not supported (even, 2 to %lld)",
                        arch, (long long) rope_dim, (long long) head_dim, (long long) head_dim);
    }
    memset(c, 0, sizeof(*c));
    c->n_layers = (int32_t) n_layers;
    memcpy(c->layer_kinds, kinds, sizeof(kinds));
    c->attn_gate = family->attn_gate;
    c->one_sublayer = family->one_sublayer;
    c->ffn_relu_sq = family->ffn_relu_sq;
    const char ssm_kind = strchr(kinds, 'd') != NULL                                 ? 'd'
                          : strchr(kinds, 'm') != NULL || strchr(kinds, 'p') != NULL ? 'm'
                                                                                     : 0;
    if (ssm_kind != 0 && (status = read_ssm(g, arch, keys, ssm_kind, c))) {
        return status;
    }
    if (strchr(kinds, 'c') != NULL) {
        int64_t width;
        if ((status = tnn_gguf_get_uint(g, arch_key(k, kc, arch, keys->conv_kernel), -1, &width))) {
            return status;
        }
        if (width < 2 || width > 64) {
            return tnn_fail(TNN_ERR_ARG, "%s.%s: a short convolution of width %lld is not supported (2 to 64)",
                            arch, keys->conv_kernel, (long long) width);
        }
        c->conv_kernel = (int32_t) width;
    }
    c->d_model = (int32_t) d_model;
    c->d_ff = (int32_t) d_ff;
    c->n_heads = (int32_t) n_heads;
    c->n_kv_heads = (int32_t) n_kv_heads;
    c->head_dim = head_dim == d_model / n_heads && d_model % n_heads == 0 ? 0 : (int32_t) head_dim;
    c->rope_dim = rope_dim == head_dim ? 0 : (int32_t) rope_dim;
    c->rope_neox = family->rope_neox;
    if ((status = tnn_gguf_get_float(g, arch_key(k, kc, arch, keys->rope_base), 10000.0f, &c->rope_base)) ||
        (status = tnn_gguf_get_float(g, arch_key(k, kc, arch, keys->norm_eps_layernorm), 1e-5f, &c->norm_eps)) ||
        (status = tnn_gguf_get_float(g, arch_key(k, kc, arch, keys->norm_eps), c->norm_eps, &c->norm_eps))) {
        return status;
    }
    int64_t vocab = 0;
    if ((status = check_outer_tensors(tensors, tnn_family_output_norm(family), d_model, &vocab))) {
        return status;
    }
    c->vocab = (int32_t) vocab;
    const bool experts = family->experts || family->experts_optional;
    if (!experts && (status = refuse_experts(tensors, arch, n_layers))) {
        return status;
    }
    if (experts && (status = read_experts(g, arch, family, c))) {
        return status;
    }
    c->untied = ggml_get_tensor(tensors, "output.weight") != NULL;
    const int32_t scans = tnn_first_layer_with(c, TNN_LORA_SLOT_SSM_IN);
    char norm_name[64];
    snprintf(norm_name, sizeof(norm_name), "blk.%d.ssm_norm.weight", scans);
    c->mamba_no_norm = family->ssm_norm_optional && scans >= 0 && ggml_get_tensor(tensors, norm_name) == NULL;
    /* what the attention layers have, seen in the first of them */
    const int32_t attends = tnn_first_layer_with(c, TNN_LORA_SLOT_Q);
    char name[64];
    snprintf(name, sizeof(name), "blk.%d.attn_q.bias", attends);
    c->qkv_bias = attends >= 0 && ggml_get_tensor(tensors, name) != NULL;
    snprintf(name, sizeof(name), "blk.%d.attn_output.bias", attends);
    c->attn_out_bias = attends >= 0 && ggml_get_tensor(tensors, name) != NULL;
    if (c->d_ff_shexp > 0) { /* a shared expert's gate, seen in the first layer with one */
        snprintf(name, sizeof(name), "blk.%d.ffn_gate_inp_shexp.weight",
                 tnn_first_layer_with(c, TNN_LORA_SLOT_UP_SHEXP));
        c->shexp_gate = ggml_get_tensor(tensors, name) != NULL;
    }
    c->attn_sinks = family->oai;
    c->experts_oai = family->oai && family->experts;
    snprintf(name, sizeof(name), "blk.%d.attn_q_norm.weight", attends);
    c->qk_norm = attends >= 0 && ggml_get_tensor(tensors, name) != NULL;
    c->embd_scale = family->embd_scale;
    c->ffn_gelu = family->ffn_gelu;
    c->post_norms = family->post_norms && ggml_get_tensor(tensors, "blk.0.post_attention_norm.weight") != NULL;
    if ((status = read_fused(tensors, family, c))) {
        return status;
    }
    if ((status = read_rope_freqs(g, tensors, family, rope_dim, c)) ||
        (status = read_rope_scaling(g, family, c))) {
        return status;
    }
    if (family->swa_period > 0) {
        int64_t window;
        if ((status = tnn_gguf_get_uint(g, arch_key(k, kc, arch, keys->swa_window), family->swa_window,
                                        &window)) ||
            (status = tnn_gguf_get_float(g, arch_key(k, kc, arch, keys->rope_base_swa), family->rope_base_swa,
                                         &c->rope_base_swa))) {
            return status;
        }
        c->swa_window = (int32_t) window;
        c->swa_period = family->swa_period;
        c->swa_rope_scaled = family->oai && c->rope_scale > 0.0f;
        if (c->rope_base_swa == 0.0f) {
            c->rope_base_swa = c->rope_base;
        }
    }
    if ((status = tnn_gguf_get_float(g, arch_key(k, kc, arch, keys->attn_softcap), family->attn_softcap,
                                     &c->attn_softcap)) ||
        (status = tnn_gguf_get_float(g, arch_key(k, kc, arch, keys->final_softcap), family->final_softcap,
                                     &c->final_softcap))) {
        return status;
    }
    c->no_rope_period = family->no_rope_period;
    if (family->wide_query_layers > 0 && n_layers == family->wide_query_layers) {
        c->attn_scale = 1.0f / sqrtf((float) (d_model / n_heads));
    }
    if (family->granite_scales && (status = read_granite_scales(g, arch, c))) {
        return status;
    }
    c->t_seq = 1;
    c->t_batch = 1;
    return TNN_OK;
}

int tnn_gguf_open(const char * path, tnn_model_config * cfg, struct gguf_context ** gguf_out,
                  struct ggml_context ** tensors_out) {
    *gguf_out = NULL;
    *tensors_out = NULL;
    if (path == NULL || path[0] == '\0') {
        return tnn_fail(TNN_ERR_ARG, "no GGUF path given");
    }
    int status = tnn_gguf_check_header(path);
    if (status != TNN_OK) {
        return status;
    }
    struct ggml_context * tensors = NULL;
    struct gguf_init_params params = { .no_alloc = true, .ctx = &tensors };
    struct gguf_context * g = tnn_gguf_parse(path, params);
    if (g == NULL) {
        return TNN_ERR_ARG;
    }
    if ((status = tnn_gguf_check_extent(g, tensors, path)) || (status = read_config(g, tensors, cfg)) ||
        (status = tnn_gguf_check_types(tensors)) ||
        (cfg->rope_freqs && (status = check_rope_freq_values(g, path, cfg)))) {
        gguf_free(g);
        ggml_free(tensors);
        return status;
    }
    *gguf_out = g;
    *tensors_out = tensors;
    return TNN_OK;
}

int tnn_gguf_model_config(const char * path, tnn_model_config * cfg) {
    if (cfg == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_gguf_model_config: config is NULL");
    }
    struct gguf_context * g;
    struct ggml_context * tensors;
    int status = tnn_gguf_open(path, cfg, &g, &tensors);
    if (status != TNN_OK) {
        return status;
    }
    /* the shapes of every block's tensors, as the model will bind them */
    struct tnn_block block;
    for (int32_t l = 0; l < cfg->n_layers && status == TNN_OK; ++l) {
        status = tnn_block_bind(tensors, &block, l, cfg);
    }
    gguf_free(g);
    ggml_free(tensors);
    return status;
}
