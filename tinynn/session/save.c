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

/* What a saved model holds: its parameters and its RoPE factors (a
 * frozen base's tensors stay in the base's file). */
static bool is_saved(int32_t kind) { return kind == TNN_KIND_PARAM || kind == TNN_KIND_ROPE_FREQS; }

int tnn_save_gguf(tnn_session * s, const char * path) {
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
        if (!is_saved(s->tensors.entries[h].kind)) {
            continue;
        }
        struct ggml_tensor * out = arch->gguf_tensor && !s->model.has_lora ? arch->gguf_tensor(host, &s->model, t)
                                                                           : tnn_host_copy(host, t);
        if (out != NULL) {
            gguf_add_tensor(gguf, out);
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
