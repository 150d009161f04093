/* Save the model (or the LoRA adapter) as a GGUF file in llama.cpp's layout. */
#include "session/session.h"
#include "gguf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- Phi-3's adapter: the fused weights' slots written as one pair ----------
 *
 * toy trains separate q, k, v (gate, up) slots on row ranges of a fused
 * weight (models/block.c); llama.cpp matches an adapter to the model's
 * tensors by name, and a Phi-3 has only attn_qkv and ffn_up. The exact fused
 * equivalent of the slots present (p of them, rank r each): A = their A's
 * stacked (rank p r), B block-diagonal (zeros where a slot has no adapter,
 * and across slots). llama.cpp scales each pair by alpha / its own rank, so
 * B is multiplied by p to keep toy's alpha / r. (A fused LoRA slot would
 * save this rewrite, but cost the separate targets and the unchanged block,
 * fast copies and checks: see docs/ARCHITECTURE.md.) */

/* Whether t is an adapter of a slot that lies in a fused weight. */
static bool in_fused_weight(const tnn_session * s, const struct ggml_tensor * t) {
    const struct tnn_llama * m = tnn_llama_of(&s->model);
    struct tnn_fused_weight fused[2];
    const int n_fused = tnn_fused_weights(&s->model.cfg, fused);
    for (int32_t l = 0; l < s->model.cfg.n_layers; ++l) {
        for (int f = 0; f < n_fused; ++f) {
            for (int slot = fused[f].first_slot; slot < fused[f].first_slot + fused[f].n_slots; ++slot) {
                if (t == m->blocks[l].lora_a[slot] || t == m->blocks[l].lora_b[slot]) {
                    return true;
                }
            }
        }
    }
    return false;
}

/* The shape of one fused weight's pair in one layer; returns its rank (the
 * slots present times theirs), 0 where no slot has an adapter. */
static int64_t fused_pair_shape(const struct tnn_block * b, const struct tnn_fused_weight * f, int64_t * d_in,
                                int64_t * d_out, int * present) {
    int64_t rank = 0;
    *d_in = *d_out = 0;
    *present = 0;
    for (int slot = f->first_slot; slot < f->first_slot + f->n_slots; ++slot) {
        *d_in = tnn_block_weight(b, slot)->ne[0];
        *d_out += tnn_block_weight(b, slot)->ne[1];
        if (b->lora_a[slot] != NULL) {
            rank = b->lora_a[slot]->ne[1];
            ++*present;
        }
    }
    return *present * rank;
}

/* The host memory every fused pair takes (A, B and their descriptors). */
static size_t fused_pairs_bytes(const tnn_session * s, const struct tnn_fused_weight * fused, int n_fused) {
    size_t bytes = 0;
    for (int32_t l = 0; l < s->model.cfg.n_layers; ++l) {
        for (int f = 0; f < n_fused; ++f) {
            int64_t d_in, d_out;
            int present;
            const int64_t r = fused_pair_shape(&tnn_llama_of(&s->model)->blocks[l], &fused[f], &d_in, &d_out,
                                               &present);
            bytes += (size_t) (r * (d_in + d_out)) * sizeof(float) + 2 * (ggml_tensor_overhead() + 64);
        }
    }
    return bytes;
}

/* The fused pair of one fused weight of one layer, or nothing where none of
 * its slots has an adapter. */
static void add_fused_pair(struct ggml_context * host, struct gguf_context * gguf, const struct tnn_block * b,
                           int32_t layer, const struct tnn_fused_weight * f) {
    int64_t d_in, d_out;
    int present;
    const int64_t fused_rank = fused_pair_shape(b, f, &d_in, &d_out, &present);
    if (fused_rank == 0) {
        return;
    }
    const int64_t rank = fused_rank / present;
    struct ggml_tensor * a = ggml_new_tensor_2d(host, GGML_TYPE_F32, d_in, fused_rank);   /* [d_in, R] */
    struct ggml_tensor * bf = ggml_new_tensor_2d(host, GGML_TYPE_F32, fused_rank, d_out); /* [R, d_out] */
    ggml_format_name(a, "blk.%d.%s.weight.lora_a", layer, f->name);
    ggml_format_name(bf, "blk.%d.%s.weight.lora_b", layer, f->name);
    float *A = a->data, *B = bf->data;
    memset(B, 0, ggml_nbytes(bf));
    int64_t col = 0, row = 0;   /* where the next slot's rank columns and output rows start */
    for (int slot = f->first_slot; slot < f->first_slot + f->n_slots; ++slot) {
        const int64_t rows = tnn_block_weight(b, slot)->ne[1];
        if (b->lora_a[slot] != NULL) {
            const float * sa = tnn_host_copy(host, b->lora_a[slot])->data;   /* [d_in, rank] */
            const float * sb = tnn_host_copy(host, b->lora_b[slot])->data;   /* [rank, rows] */
            memcpy(A + col * d_in, sa, (size_t) (rank * d_in) * sizeof(float));
            for (int64_t o = 0; o < rows; ++o) {
                for (int64_t c = 0; c < rank; ++c) {
                    B[(col + c) + (row + o) * fused_rank] = sb[c + o * rank] * (float) present;
                }
            }
            col += rank;
        }
        row += rows;
    }
    gguf_add_tensor(gguf, a);
    gguf_add_tensor(gguf, bf);
}

/* What a saved model holds: its parameters and its RoPE factors (a
 * frozen base's tensors stay in the base's file). */
static bool is_saved(int32_t kind) { return kind == TNN_KIND_PARAM || kind == TNN_KIND_ROPE_FREQS; }

int tnn_save_gguf(tnn_session * s, const char * path) {
    if (tnn_refuse_measuring(s, "save_gguf") != TNN_OK) {
        return TNN_ERR_STATE;
    }
    if (s == NULL || path == NULL || path[0] == '\0') {
        return tnn_fail(TNN_ERR_ARG, "save_gguf: no path given");
    }
    if (!s->realized) {
        return tnn_fail(TNN_ERR_STATE, "save_gguf before realize: there is no model to save");
    }
    const struct tnn_arch * arch = s->model.arch;
    if (!s->model.has_lora && arch->gguf_metadata == NULL) {
        /* a ViT's file carries the preprocessing (image size, classes) too,
         * and toy writes it */
        return tnn_fail(TNN_ERR_STATE,
                        "save_gguf: tinynn writes no GGUF layout for the %s architecture "
                        "(a ViT is saved by toy's ViTTiny.save)",
                        arch->name);
    }
    /* Host copies of the parameters: the backend's memory may not be
     * addressable from here (CUDA, Metal). */
    size_t total = 0;
    int32_t n_params = 0;
    for (int32_t h = 0; h < s->tensors.n; ++h) {
        if (is_saved(s->tensors.entries[h].kind)) {
            total += 2 * (ggml_nbytes(s->tensors.entries[h].tensor) + ggml_tensor_overhead() + 64);
            n_params++;
        }
    }
    struct tnn_fused_weight fused[2];
    const int n_fused = s->model.has_lora ? tnn_fused_weights(&s->model.cfg, fused) : 0;
    total += n_fused > 0 ? fused_pairs_bytes(s, fused, n_fused) : 0;
    struct ggml_init_params ip = { .mem_size = total + 1024, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * host = ggml_init(ip);
    struct gguf_context * gguf = gguf_init_empty();
    if (host == NULL || gguf == NULL) {
        if (host) ggml_free(host);
        if (gguf) gguf_free(gguf);
        return tnn_fail(TNN_ERR_ALLOC, "out of memory preparing the GGUF file");
    }
    if (s->model.has_lora) {
        set_adapter_metadata(gguf, &s->model.lora, s->base.arch_name);
    } else {
        arch->gguf_metadata(gguf, &s->model.cfg);
    }
    for (int32_t h = 0; h < s->tensors.n; ++h) {
        struct ggml_tensor * t = s->tensors.entries[h].tensor;
        if (!is_saved(s->tensors.entries[h].kind) || (n_fused > 0 && in_fused_weight(s, t))) {
            continue;
        }
        struct ggml_tensor * out = arch->gguf_tensor && !s->model.has_lora ? arch->gguf_tensor(host, &s->model, t)
                                                                           : tnn_host_copy(host, t);
        if (out != NULL) {
            gguf_add_tensor(gguf, out);
        }
    }
    for (int32_t l = 0; l < s->model.cfg.n_layers && n_fused > 0; ++l) {
        for (int f = 0; f < n_fused; ++f) {
            add_fused_pair(host, gguf, &tnn_llama_of(&s->model)->blocks[l], l, &fused[f]);
        }
    }

    const size_t len = strlen(path);
    char * tmp = malloc(len + 5);
    int status = TNN_OK;
    if (tmp == NULL) {
        status = tnn_fail(TNN_ERR_ALLOC, "out of memory");
    } else {
        memcpy(tmp, path, len);
        memcpy(tmp + len, ".tmp", 5);
        /* what a killed write left there goes first: a link would be written through */
        remove(tmp);
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
