/* Writing GGUF metadata: the keys every token model shares, the vocabulary
 * keys, and host copies of tensors to save. */
#include "gguf/gguf_file.h"
#include "gguf.h"

#include <stdio.h>
#include <string.h>

void tnn_gguf_model_keys(struct gguf_context * gguf, const char * arch, const tnn_model_config * cfg) {
    char key[96];
    gguf_set_val_str(gguf, "general.architecture", arch);
    gguf_set_val_str(gguf, "general.name", "toy");
    gguf_set_val_u32(gguf, "general.file_type", 0);   /* all F32 */
    const struct {
        const char * name;
        int32_t value;
    } keys[] = {
        { "context_length", cfg->t_seq },         { "embedding_length", cfg->d_model },
        { "block_count", cfg->n_layers },         { "feed_forward_length", cfg->d_ff },
        { "attention.head_count", cfg->n_heads },
    };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); ++i) {
        snprintf(key, sizeof(key), "%s.%s", arch, keys[i].name);
        gguf_set_val_u32(gguf, key, (uint32_t) keys[i].value);
    }
}

void tnn_gguf_vocab_keys(struct gguf_context * gguf, const char * arch, const tnn_model_config * cfg) {
    char key[96];
    snprintf(key, sizeof(key), "%s.vocab_size", arch);
    gguf_set_val_u32(gguf, key, (uint32_t) cfg->vocab);
    gguf_set_val_str(gguf, "tokenizer.ggml.model", "none");   /* raw byte ids */
}

struct ggml_tensor * tnn_host_copy(struct ggml_context * host, const struct ggml_tensor * t) {
    struct ggml_tensor * copy = ggml_dup_tensor(host, t);
    ggml_set_name(copy, t->name);
    ggml_backend_tensor_get(t, copy->data, 0, ggml_nbytes(t));
    return copy;
}
