/* Reading a llama-family GGUF: its hyper-parameters, the shapes and types of
 * its tensors, and the file mapped read-only so that the weights can be used
 * where they lie. Everything a bad file could trip in ggml is checked here. */
#include "internal.h"
#include "gguf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- metadata ------------------------------------------------------------ */

/* An integer key of any integer type; missing -> fallback (or an error when
 * fallback < 0). */
static int get_uint(struct gguf_context * g, const char * key, int64_t fallback, int64_t * out) {
    const int64_t id = gguf_find_key(g, key);
    if (id < 0) {
        if (fallback < 0) {
            return tnn_fail(TNN_ERR_ARG, "the GGUF has no '%s' (not a llama-family model?)", key);
        }
        *out = fallback;
        return TNN_OK;
    }
    switch (gguf_get_kv_type(g, id)) {
        case GGUF_TYPE_UINT8:  *out = gguf_get_val_u8(g, id);  break;
        case GGUF_TYPE_UINT16: *out = gguf_get_val_u16(g, id); break;
        case GGUF_TYPE_UINT32: *out = gguf_get_val_u32(g, id); break;
        case GGUF_TYPE_INT32:  *out = gguf_get_val_i32(g, id); break;
        case GGUF_TYPE_UINT64: *out = (int64_t) gguf_get_val_u64(g, id); break;
        case GGUF_TYPE_INT64:  *out = gguf_get_val_i64(g, id); break;
        default:
            return tnn_fail(TNN_ERR_ARG, "GGUF key '%s' is not an integer", key);
    }
    if (*out < 0 || *out > (1 << 24)) {
        return tnn_fail(TNN_ERR_ARG, "GGUF key '%s' = %lld is out of range", key, (long long) *out);
    }
    return TNN_OK;
}

static int get_float(struct gguf_context * g, const char * key, float fallback, float * out) {
    const int64_t id = gguf_find_key(g, key);
    if (id < 0) {
        *out = fallback;
        return TNN_OK;
    }
    switch (gguf_get_kv_type(g, id)) {
        case GGUF_TYPE_FLOAT32: *out = gguf_get_val_f32(g, id); break;
        case GGUF_TYPE_FLOAT64: *out = (float) gguf_get_val_f64(g, id); break;
        default:
            return tnn_fail(TNN_ERR_ARG, "GGUF key '%s' is not a float", key);
    }
    return TNN_OK;
}

/* Types whose matrix product ggml can back-propagate through on the CPU
 * (out_prod has a kernel for them). BF16 has none in this ggml. */
static bool trainable_through(enum ggml_type type) {
    switch (type) {
        case GGML_TYPE_F32: case GGML_TYPE_F16:
        case GGML_TYPE_Q4_0: case GGML_TYPE_Q4_1: case GGML_TYPE_Q5_0: case GGML_TYPE_Q5_1:
        case GGML_TYPE_Q8_0:
        case GGML_TYPE_Q2_K: case GGML_TYPE_Q3_K: case GGML_TYPE_Q4_K: case GGML_TYPE_Q5_K:
        case GGML_TYPE_Q6_K:
            return true;
        default:
            return false;
    }
}

static int check_file_header(const char * path) {
    FILE * f = fopen(path, "rb");
    if (f == NULL) {
        return tnn_fail(TNN_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    }
    char magic[4] = { 0 };
    const size_t n = fread(magic, 1, 4, f);
    fclose(f);
    if (n != 4 || memcmp(magic, "GGUF", 4) != 0) {
        return tnn_fail(TNN_ERR_ARG, "%s is not a GGUF file (no GGUF magic at its start)", path);
    }
    return TNN_OK;
}

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
 * output [d_model, vocab] and output_norm [d_model]. */
static int check_outer_tensors(struct ggml_context * tensors, int64_t d_model, int64_t * vocab) {
    const struct ggml_tensor * embd = ggml_get_tensor(tensors, "token_embd.weight");
    if (embd == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tensor token_embd.weight is missing");
    }
    *vocab = embd->ne[1];
    if (*vocab < 1 || *vocab > (1 << 24)) {
        return tnn_fail(TNN_ERR_ARG, "tensor token_embd.weight has %lld rows: a vocabulary of 1 to "
                        "16777216 tokens expected", (long long) *vocab);
    }
    int status = check_shape(embd, d_model, *vocab);
    const struct ggml_tensor * output = ggml_get_tensor(tensors, "output.weight");
    if (status == TNN_OK && output != NULL) {
        status = check_shape(output, d_model, *vocab);
    }
    const struct ggml_tensor * norm = ggml_get_tensor(tensors, "output_norm.weight");
    if (status == TNN_OK && norm == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tensor output_norm.weight is missing");
    }
    return status != TNN_OK ? status : check_shape(norm, d_model, 1);
}

/* The llama-family architectures toy reads: llama's block, with what
 * differs as config flags (Qwen: NEOX RoPE; Qwen2's q/k/v biases and Qwen3's
 * q/k norms are found by their tensors). */
static const char * const SUPPORTED_ARCHS[] = { "llama", "qwen2", "qwen3", "gemma3" };
#define SUPPORTED_LIST "llama, qwen2, qwen3, gemma3"
/* What llama.cpp fixes for Gemma 3 rather than reading from the file: every
 * sixth layer is global, the local layers' RoPE base is 10000. */
#define GEMMA3_SWA_PERIOD 6
#define GEMMA3_ROPE_BASE_SWA 10000.0f

const char * tnn_gguf_arch(struct gguf_context * g) {
    const int64_t id = gguf_find_key(g, "general.architecture");
    return id >= 0 && gguf_get_kv_type(g, id) == GGUF_TYPE_STRING ? gguf_get_val_str(g, id) : NULL;
}

/* "<arch>.<name>": the arch's own key */
static const char * arch_key(char * buf, size_t cap, const char * arch, const char * name) {
    snprintf(buf, cap, "%s.%s", arch, name);
    return buf;
}

static int read_config(struct gguf_context * g, struct ggml_context * tensors, tnn_model_config * c) {
    const char * arch = tnn_gguf_arch(g);
    if (arch == NULL) {
        return tnn_fail(TNN_ERR_ARG, "the GGUF has no general.architecture");
    }
    bool supported = false;
    for (size_t i = 0; i < sizeof(SUPPORTED_ARCHS) / sizeof(SUPPORTED_ARCHS[0]); ++i) {
        supported = supported || strcmp(arch, SUPPORTED_ARCHS[i]) == 0;
    }
    if (!supported) {
        return tnn_fail(TNN_ERR_ARG, "unsupported architecture '%.40s': toy trains " SUPPORTED_LIST, arch);
    }
    char k[96];
    const size_t kc = sizeof(k);
    int64_t n_layers, d_model, d_ff, n_heads, n_kv_heads, head_dim, rope_dim;
    int status;
    if ((status = get_uint(g, arch_key(k, kc, arch, "block_count"), -1, &n_layers)) ||
        (status = get_uint(g, arch_key(k, kc, arch, "embedding_length"), -1, &d_model)) ||
        (status = get_uint(g, arch_key(k, kc, arch, "feed_forward_length"), -1, &d_ff)) ||
        (status = get_uint(g, arch_key(k, kc, arch, "attention.head_count"), -1, &n_heads)) ||
        (status = get_uint(g, arch_key(k, kc, arch, "attention.head_count_kv"), n_heads, &n_kv_heads))) {
        return status;
    }
    if (n_heads < 1 || n_kv_heads < 1 || n_heads % n_kv_heads != 0) {
        return tnn_fail(TNN_ERR_ARG, "%s.attention.head_count_kv (%lld) does not divide head_count (%lld)",
                        arch, (long long) n_kv_heads, (long long) n_heads);
    }
    /* a head's width: key_length when given (Qwen3's heads are wider than d_model / n_heads) */
    if ((status = get_uint(g, arch_key(k, kc, arch, "attention.key_length"), d_model / n_heads, &head_dim))) {
        return status;
    }
    if (head_dim < 2 || head_dim % 2 != 0 || head_dim > (1 << 12)) {
        return tnn_fail(TNN_ERR_ARG, "%s: a head width of %lld is not supported (even, 2 to 4096)",
                        arch, (long long) head_dim);
    }
    if ((status = get_uint(g, arch_key(k, kc, arch, "rope.dimension_count"), head_dim, &rope_dim))) {
        return status;
    }
    if (rope_dim != head_dim) {
        return tnn_fail(TNN_ERR_ARG, "partial RoPE (%lld of %lld dims) is not supported",
                        (long long) rope_dim, (long long) head_dim);
    }
    memset(c, 0, sizeof(*c));
    c->n_layers = (int32_t) n_layers;
    c->d_model = (int32_t) d_model;
    c->d_ff = (int32_t) d_ff;
    c->n_heads = (int32_t) n_heads;
    c->n_kv_heads = (int32_t) n_kv_heads;
    c->head_dim = head_dim == d_model / n_heads && d_model % n_heads == 0 ? 0 : (int32_t) head_dim;
    c->rope_neox = strcmp(arch, "llama") != 0;
    if ((status = get_float(g, arch_key(k, kc, arch, "rope.freq_base"), 10000.0f, &c->rope_base)) ||
        (status = get_float(g, arch_key(k, kc, arch, "attention.layer_norm_rms_epsilon"), 1e-5f, &c->rms_eps))) {
        return status;
    }
    int64_t vocab = 0;
    if ((status = check_outer_tensors(tensors, d_model, &vocab))) {
        return status;
    }
    c->vocab = (int32_t) vocab;
    c->untied = ggml_get_tensor(tensors, "output.weight") != NULL;
    c->qkv_bias = ggml_get_tensor(tensors, "blk.0.attn_q.bias") != NULL;
    c->qk_norm = ggml_get_tensor(tensors, "blk.0.attn_q_norm.weight") != NULL;
    if (strcmp(arch, "gemma3") == 0) {
        int64_t window;
        if ((status = get_uint(g, arch_key(k, kc, arch, "attention.sliding_window"), 0, &window)) ||
            (status = get_float(g, arch_key(k, kc, arch, "rope.local.freq_base"), GEMMA3_ROPE_BASE_SWA,
                                &c->rope_base_swa))) {
            return status;
        }
        c->embd_scale = 1;
        c->ffn_gelu = 1;
        c->post_norms = ggml_get_tensor(tensors, "blk.0.post_attention_norm.weight") != NULL;
        c->swa_window = (int32_t) window;
        c->swa_period = GEMMA3_SWA_PERIOD;
    }
    c->t_seq = 1;
    c->t_batch = 1;
    return TNN_OK;
}

/* Every tensor's bytes must lie inside the file: a truncated download would
 * otherwise be read past its end. */
static int check_extent(struct gguf_context * g, struct ggml_context * tensors, const char * path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        return tnn_fail(TNN_ERR_IO, "cannot stat %s: %s", path, strerror(errno));
    }
    const size_t data_offset = gguf_get_data_offset(g);
    for (int64_t i = 0; i < gguf_get_n_tensors(g); ++i) {
        const struct ggml_tensor * t = ggml_get_tensor(tensors, gguf_get_tensor_name(g, i));
        const size_t end = data_offset + gguf_get_tensor_offset(g, i) + ggml_nbytes(t);
        if (end > (size_t) st.st_size) {
            return tnn_fail(TNN_ERR_ARG, "%s is truncated: tensor %s ends at byte %zu of %lld",
                            path, t->name, end, (long long) st.st_size);
        }
    }
    return TNN_OK;
}

static int check_types(struct ggml_context * tensors) {
    for (struct ggml_tensor * t = ggml_get_first_tensor(tensors); t != NULL;
         t = ggml_get_next_tensor(tensors, t)) {
        const bool vector = t->ne[1] == 1 && t->ne[2] == 1 && t->ne[3] == 1;
        if (vector ? t->type != GGML_TYPE_F32 : !trainable_through(t->type)) {
            return tnn_fail(TNN_ERR_ARG, "tensor %s has type %s, which toy cannot train through "
                            "(supported: F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K..Q6_K; "
                            "norms and biases F32)", t->name, ggml_type_name(t->type));
        }
    }
    return TNN_OK;
}

/* ggml's GGUF parser says why it refuses a file on stderr, in lines of its
 * own; while it parses, the first of them is kept here instead, to become
 * part of the one-line error. */
static char g_parse_reason[200];

static void keep_first_error(enum ggml_log_level level, const char * text, void * user_data) {
    (void) user_data;
    if (level != GGML_LOG_LEVEL_ERROR || g_parse_reason[0] != '\0') {
        return;
    }
    const char * reason = strstr(text, ": ");       /* after "gguf_init_from_reader: " */
    reason = reason != NULL ? reason + 2 : text;
    snprintf(g_parse_reason, sizeof g_parse_reason, "%s", reason);
    g_parse_reason[strcspn(g_parse_reason, "\n")] = '\0';
}

/* gguf_init_from_file, ggml's log held back; NULL with tnn_fail's message
 * (ggml's reason in it) when the file does not parse. */
static struct gguf_context * parse_gguf(const char * path, struct gguf_init_params params) {
    ggml_log_callback log = NULL;
    void * log_data = NULL;
    ggml_log_get(&log, &log_data);
    g_parse_reason[0] = '\0';
    ggml_log_set(keep_first_error, NULL);
    struct gguf_context * g = gguf_init_from_file(path, params);
    ggml_log_set(log, log_data);
    if (g == NULL) {
        tnn_fail(TNN_ERR_ARG, "%s could not be parsed as GGUF (%s)", path,
                 g_parse_reason[0] != '\0' ? g_parse_reason : "truncated or corrupt");
    }
    return g;
}

int tnn_gguf_open(const char * path, tnn_model_config * cfg, struct gguf_context ** gguf_out,
                  struct ggml_context ** tensors_out) {
    *gguf_out = NULL;
    *tensors_out = NULL;
    if (path == NULL || path[0] == '\0') {
        return tnn_fail(TNN_ERR_ARG, "no GGUF path given");
    }
    int status = check_file_header(path);
    if (status != TNN_OK) {
        return status;
    }
    struct ggml_context * tensors = NULL;
    struct gguf_init_params params = { .no_alloc = true, .ctx = &tensors };
    struct gguf_context * g = parse_gguf(path, params);
    if (g == NULL) {
        return TNN_ERR_ARG;
    }
    if ((status = check_extent(g, tensors, path)) ||
        (status = read_config(g, tensors, cfg)) ||
        (status = check_types(tensors))) {
        gguf_free(g);
        ggml_free(tensors);
        return status;
    }
    *gguf_out = g;
    *tensors_out = tensors;
    return TNN_OK;
}

int tnn_gguf_check(const char * path) {
    if (path == NULL || path[0] == '\0') {
        return tnn_fail(TNN_ERR_ARG, "no GGUF path given");
    }
    const int status = check_file_header(path);
    if (status != TNN_OK) {
        return status;
    }
    struct gguf_init_params params = { .no_alloc = true, .ctx = NULL };
    struct gguf_context * g = parse_gguf(path, params);
    if (g == NULL) {
        return TNN_ERR_ARG;
    }
    gguf_free(g);
    return TNN_OK;
}

int tnn_gguf_llama_config(const char * path, tnn_model_config * cfg) {
    if (cfg == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_gguf_llama_config: config is NULL");
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

/* ---- mapping ------------------------------------------------------------- */

int tnn_map_file(const char * path, struct tnn_mapped_file * map) {
    map->addr = NULL;
    map->size = 0;
    const int fd = open(path, O_RDONLY);
    if (fd < 0) {
        return tnn_fail(TNN_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size == 0) {
        close(fd);
        return tnn_fail(TNN_ERR_IO, "cannot read the size of %s", path);
    }
    void * addr = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (addr == MAP_FAILED) {
        return tnn_fail(TNN_ERR_IO, "cannot map %s: %s", path, strerror(errno));
    }
    map->addr = addr;
    map->size = (size_t) st.st_size;
    return TNN_OK;
}

void tnn_unmap_file(struct tnn_mapped_file * map) {
    if (map->addr != NULL) {
        munmap(map->addr, map->size);
        map->addr = NULL;
        map->size = 0;
    }
}

/* ---- the frozen base of a session ------------------------------------------- */

int tnn_base_open(tnn_session * s, const char * path) {
    struct tnn_frozen_base * base = &s->base;
    int status = tnn_gguf_open(path, &s->model.cfg, &base->gguf, &base->ctx);
    if (status == TNN_OK) {
        snprintf(base->arch_name, sizeof(base->arch_name), "%s", tnn_gguf_arch(base->gguf));
        status = tnn_map_file(path, &base->file);
    }
    return status;
}

/* In place needs ggml's 32-byte tensor alignment; GGUF's default is 32. */
static int place_weights(tnn_session * s) {
    struct tnn_frozen_base * base = &s->base;
    const size_t data_offset = gguf_get_data_offset(base->gguf);
    char * data = (char *) base->file.addr + data_offset;
    const size_t data_size = base->file.size - data_offset;
    const bool in_place = tnn_backend_uses_host_memory() && ((uintptr_t) data % 32) == 0;
    if (in_place) {
        base->buf = ggml_backend_dev_buffer_from_host_ptr(ggml_backend_get_device(s->backend), data,
                                                          data_size, data_size);
    } else {
        base->buf = ggml_backend_alloc_ctx_tensors(base->ctx, s->backend);
    }
    if (base->buf == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of %s memory for the base model", tnn_backend_name());
    }
    for (int64_t i = 0; i < gguf_get_n_tensors(base->gguf); ++i) {
        struct ggml_tensor * t = ggml_get_tensor(base->ctx, gguf_get_tensor_name(base->gguf, i));
        char * src = data + gguf_get_tensor_offset(base->gguf, i);
        if (in_place) {
            if (ggml_backend_tensor_alloc(base->buf, t, src) != GGML_STATUS_SUCCESS) {
                return tnn_fail(TNN_ERR_ALLOC, "cannot place tensor %s in the mapped file", t->name);
            }
        } else {
            tnn_tensor_set(s, t, src, 0, ggml_nbytes(t));
        }
    }
    base->in_place = in_place;
    return TNN_OK;
}

int tnn_base_place(tnn_session * s, bool fast_copies) {
    struct tnn_frozen_base * base = &s->base;
    int status = place_weights(s);
    if (status == TNN_OK && fast_copies) {
        status = tnn_frozen_prepare(s);
    }
    if (status != TNN_OK) {
        return status;
    }
    /* a device copy (or the fast copies) no longer reads the file */
    if (!base->in_place) {
        tnn_unmap_file(&base->file);
    }
    for (struct ggml_tensor * t = ggml_get_first_tensor(base->ctx); t != NULL;
         t = ggml_get_next_tensor(base->ctx, t)) {
        if (tnn_table_add(s, t, TNN_KIND_FROZEN, -1) < 0) {
            return TNN_ERR_ALLOC;
        }
    }
    return TNN_OK;
}

void tnn_base_free(struct tnn_frozen_base * base) {
    tnn_free_tensors(base->ctx_copies, base->buf_copies);
    free(base->pairs);
    tnn_free_tensors(base->ctx, base->buf);
    gguf_free(base->gguf);
    tnn_unmap_file(&base->file);
}
