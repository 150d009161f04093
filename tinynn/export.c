/* Save the model (or the LoRA adapter) as a GGUF file in llama.cpp's layout. */
#include "internal.h"
#include "gguf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void set_llama_metadata(struct gguf_context * gguf, const tnn_llama_config * cfg) {
    const uint32_t head_dim = (uint32_t) tnn_head_dim(cfg);
    gguf_set_val_str(gguf, "general.architecture", "llama");
    gguf_set_val_str(gguf, "general.name", "toy");
    gguf_set_val_u32(gguf, "general.file_type", 0);   /* all F32 */
    gguf_set_val_u32(gguf, "llama.context_length", (uint32_t) cfg->t_seq);
    gguf_set_val_u32(gguf, "llama.embedding_length", (uint32_t) cfg->d_model);
    gguf_set_val_u32(gguf, "llama.block_count", (uint32_t) cfg->n_layers);
    gguf_set_val_u32(gguf, "llama.feed_forward_length", (uint32_t) cfg->d_ff);
    gguf_set_val_u32(gguf, "llama.attention.head_count", (uint32_t) cfg->n_heads);
    gguf_set_val_u32(gguf, "llama.attention.head_count_kv", (uint32_t) cfg->n_kv_heads);
    gguf_set_val_f32(gguf, "llama.attention.layer_norm_rms_epsilon", cfg->rms_eps);
    gguf_set_val_f32(gguf, "llama.rope.freq_base", cfg->rope_base);
    gguf_set_val_u32(gguf, "llama.rope.dimension_count", head_dim);
    gguf_set_val_u32(gguf, "llama.vocab_size", (uint32_t) cfg->vocab);
    gguf_set_val_str(gguf, "tokenizer.ggml.model", "none");
}

/* llama.cpp's gpt2 keys (llm_load_hparams reads these for LLM_ARCH_GPT2). */
static void set_gpt2_metadata(struct gguf_context * gguf, const tnn_llama_config * cfg) {
    gguf_set_val_str(gguf, "general.architecture", "gpt2");
    gguf_set_val_str(gguf, "general.name", "toy");
    gguf_set_val_u32(gguf, "general.file_type", 0);   /* all F32 */
    gguf_set_val_u32(gguf, "gpt2.context_length", (uint32_t) cfg->t_seq);
    gguf_set_val_u32(gguf, "gpt2.embedding_length", (uint32_t) cfg->d_model);
    gguf_set_val_u32(gguf, "gpt2.block_count", (uint32_t) cfg->n_layers);
    gguf_set_val_u32(gguf, "gpt2.feed_forward_length", (uint32_t) cfg->d_ff);
    gguf_set_val_u32(gguf, "gpt2.attention.head_count", (uint32_t) cfg->n_heads);
    gguf_set_val_f32(gguf, "gpt2.attention.layer_norm_epsilon", cfg->rms_eps);
    gguf_set_val_u32(gguf, "gpt2.vocab_size", (uint32_t) cfg->vocab);
    gguf_set_val_str(gguf, "tokenizer.ggml.model", "none");
}

/* A LoRA adapter as llama.cpp's llama_adapter_lora_init reads it: tensors
 * <base weight name>.lora_a [d_in, rank] and .lora_b [rank, d_out], applied
 * as W x + (alpha / rank) * B (A x). */
static void set_adapter_metadata(struct gguf_context * gguf, const tnn_lora_config * lora,
                                 const char * base_arch) {
    /* llama.cpp refuses an adapter whose architecture is not its model's */
    gguf_set_val_str(gguf, "general.architecture", base_arch);
    gguf_set_val_str(gguf, "general.type", "adapter");
    gguf_set_val_str(gguf, "general.name", "toy LoRA adapter");
    gguf_set_val_str(gguf, "adapter.type", "lora");
    gguf_set_val_f32(gguf, "adapter.lora.alpha", lora->alpha);
}

/* The embedding a plain llama would have: E' [d_model, vocab] = lens^T E,
 * with E [donor_d, vocab] and lens [donor_d, d_model]. */
static struct ggml_tensor * fold_lens(struct ggml_context * host, tnn_session * s) {
    const struct ggml_tensor * e = s->model.token_embd;
    const struct ggml_tensor * p = s->model.embd_proj;
    const int64_t donor_d = e->ne[0], vocab = e->ne[1], d_model = p->ne[1];
    struct ggml_tensor * e_host = ggml_dup_tensor(host, e);
    struct ggml_tensor * p_host = ggml_dup_tensor(host, p);
    ggml_backend_tensor_get(e, e_host->data, 0, ggml_nbytes(e));
    ggml_backend_tensor_get(p, p_host->data, 0, ggml_nbytes(p));
    struct ggml_tensor * out = ggml_new_tensor_2d(host, GGML_TYPE_F32, d_model, vocab);
    ggml_set_name(out, "token_embd.weight");
    const float * E = e_host->data, * P = p_host->data;
    float * O = out->data;
    for (int64_t v = 0; v < vocab; ++v) {
        for (int64_t j = 0; j < d_model; ++j) {
            double acc = 0.0;
            for (int64_t i = 0; i < donor_d; ++i) {
                acc += (double) P[i + j * donor_d] * E[i + v * donor_d];
            }
            O[j + v * d_model] = (float) acc;
        }
    }
    return out;
}

int tnn_save_gguf(tnn_session * s, const char * path) {
    if (s == NULL || path == NULL || path[0] == '\0') {
        return tnn_fail(TNN_ERR_ARG, "save_gguf: no path given");
    }
    if (!s->realized) {
        return tnn_fail(TNN_ERR_STATE, "save_gguf before realize: there is no model to save");
    }
    if (s->arch == TNN_ARCH_VIT) {
        /* its file carries the preprocessing (image size, classes) too */
        return tnn_fail(TNN_ERR_STATE, "a ViT is saved by toy (ViTTiny.save), not by save_gguf");
    }
    /* Host copies of the parameters: the backend's memory may not be
     * addressable from here (CUDA, Metal). */
    size_t total = 0;
    int32_t n_params = 0;
    for (int32_t h = 0; h < s->n_table; ++h) {
        if (s->table[h].kind == TNN_KIND_PARAM) {
            total += 2 * (ggml_nbytes(s->table[h].tensor) + ggml_tensor_overhead() + 64);
            n_params++;
        }
    }
    struct ggml_init_params ip = { .mem_size = total + 1024, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * host = ggml_init(ip);
    struct gguf_context * gguf = gguf_init_empty();
    if (host == NULL || gguf == NULL) {
        if (host) ggml_free(host);
        if (gguf) gguf_free(gguf);
        return tnn_fail(TNN_ERR_ALLOC, "out of memory preparing the GGUF file");
    }
    if (s->has_lora) {
        set_adapter_metadata(gguf, &s->lora, s->base_arch);
    } else if (s->arch == TNN_ARCH_GPT2) {
        set_gpt2_metadata(gguf, &s->model.cfg);
    } else {
        set_llama_metadata(gguf, &s->model.cfg);
    }
    for (int32_t h = 0; h < s->n_table; ++h) {
        struct ggml_tensor * t = s->table[h].tensor;
        if (s->table[h].kind != TNN_KIND_PARAM || t == s->model.embd_proj) {
            continue;
        }
        if (t == s->model.token_embd && s->model.embd_proj != NULL) {
            gguf_add_tensor(gguf, fold_lens(host, s));
            continue;
        }
        struct ggml_tensor * copy = ggml_dup_tensor(host, t);
        ggml_set_name(copy, t->name);
        ggml_backend_tensor_get(t, copy->data, 0, ggml_nbytes(t));
        gguf_add_tensor(gguf, copy);
    }

    const size_t len = strlen(path);
    char * tmp = malloc(len + 5);
    int status = TNN_OK;
    if (tmp == NULL) {
        status = tnn_fail(TNN_ERR_ALLOC, "out of memory");
    } else {
        memcpy(tmp, path, len);
        memcpy(tmp + len, ".tmp", 5);
        if (!gguf_write_to_file(gguf, tmp, false)) {
            remove(tmp);
            status = tnn_fail(TNN_ERR_IO, "could not write %s", tmp);
        } else if (rename(tmp, path) != 0) {
            remove(tmp);
            status = tnn_fail(TNN_ERR_IO, "could not rename %s to %s", tmp, path);
        }
        free(tmp);
    }
    gguf_free(gguf);
    ggml_free(host);
    return status;
}
