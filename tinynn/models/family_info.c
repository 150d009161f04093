/* tnn_family_info: a family's table entry (families.c) for the C API, its
 * architecture looked up in the architectures' table (arch.c). */
#include "models/models.h"

int tnn_family_info(int32_t index, tnn_family_desc * out) {
    if (out == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_family_info: out is NULL");
    }
    const struct tnn_family * f = tnn_family_at(index);
    if (f == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_family_info: no family %d (there are %d)", index, tnn_family_count());
    }
    const struct tnn_arch * arch = tnn_arch_find(f->arch);
    *out = (tnn_family_desc){
        .gguf_arch = f->gguf_arch,
        .arch = f->arch,
        .generates = arch != NULL && arch->forward_cached != NULL,
        .rope_neox = f->rope_neox,
        .embd_scale = f->embd_scale,
        .ffn_gelu = f->ffn_gelu,
        .post_norms = f->post_norms,
        .swa_period = f->swa_period,
        .output_norm = tnn_family_output_norm(f),
        .tokenizer_kinds = f->tokenizer_kinds,
        .default_chat_template = f->default_chat_template,
    };
    return TNN_OK;
}
