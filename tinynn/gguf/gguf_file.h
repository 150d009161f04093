/* GGUF files as files: reading (header, parse, checks, typed keys), mapping
 * and the metadata every saved token model shares. What a model family's
 * config is made of is models/'s. Not installed. */
#ifndef TINYNN_GGUF_FILE_H
#define TINYNN_GGUF_FILE_H

#include "core/core.h"
#include "gguf.h"

/* ---- reading (gguf/read.c) ------------------------------------------------ */

/* An integer key of any integer type; missing -> fallback (or an error when
 * fallback < 0). */
int tnn_gguf_get_uint(struct gguf_context * g, const char * key, int64_t fallback, int64_t * out);
/* A float key (F32 or F64); missing -> fallback. */
int tnn_gguf_get_float(struct gguf_context * g, const char * key, float fallback, float * out);
/* TNN_OK when path opens and starts with the GGUF magic. */
int tnn_gguf_check_header(const char * path);
/* gguf_init_from_file, ggml's log held back; NULL with tnn_fail's message
 * (ggml's reason in it) when the file does not parse. */
struct gguf_context * tnn_gguf_parse(const char * path, struct gguf_init_params params);
/* Every tensor's bytes lie inside the file (a truncated download). */
int tnn_gguf_check_extent(struct gguf_context * g, struct ggml_context * tensors, const char * path);
/* Every matrix has a type toy trains through, every vector is F32. */
int tnn_gguf_check_types(struct ggml_context * tensors);
/* The first nbytes of tensor name's data, read from the file at path (a
 * small tensor checked before the file is mapped); the extent checked first. */
int tnn_gguf_read_tensor(struct gguf_context * g, const char * path, const char * name, void * out, size_t nbytes);
/* general.architecture of an opened GGUF, or NULL. */
const char * tnn_gguf_arch(struct gguf_context * g);

struct tnn_mapped_file {
    void * addr;      /* the whole file, read-only */
    size_t size;
};

/* Map path read-only, whole; unmap (nothing when not mapped). */
int tnn_map_file(const char * path, struct tnn_mapped_file * map);
void tnn_unmap_file(struct tnn_mapped_file * map);

/* ---- writing (gguf/write.c) ---------------------------------------------- */

/* The GGUF keys llama.cpp reads for arch that every token model shares
 * (general.*, <arch>.context_length, embedding_length, block_count,
 * feed_forward_length, attention.head_count), and, written last,
 * <arch>.vocab_size and a raw-byte tokenizer (gguf/write.c). */
void tnn_gguf_model_keys(struct gguf_context * gguf, const char * arch, const tnn_model_config * cfg);
void tnn_gguf_vocab_keys(struct gguf_context * gguf, const char * arch, const tnn_model_config * cfg);
/* A host copy of t (same name) in host, a context with memory (gguf/write.c). */
struct ggml_tensor * tnn_host_copy(struct ggml_context * host, const struct ggml_tensor * t);

#endif
