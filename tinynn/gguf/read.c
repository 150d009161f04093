/* Reading a GGUF file: its header, ggml's parse (its reason kept for the
 * one-line error), the extent and types of its tensors, typed keys, and
 * the file mapped read-only so that the weights can be used where they
 * lie. What a family's config is made of is models/gguf_config.c's. */
#include "gguf/gguf_file.h"
#include "gguf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- metadata ------------------------------------------------------------ */

/* An integer key of any integer type; missing -> fallback (or an error when
 * fallback < 0). */
int tnn_gguf_get_uint(struct gguf_context * g, const char * key, int64_t fallback, int64_t * out) {
    const int64_t id = gguf_find_key(g, key);
    if (id < 0) {
        if (fallback < 0) {
            return tnn_fail(TNN_ERR_ARG, "the GGUF has no '%s' (not a llama-family model?)", key);
        }
        *out = fallback;
        return TNN_OK;
    }
    switch (gguf_get_kv_type(g, id)) {
        case GGUF_TYPE_UINT8: *out = gguf_get_val_u8(g, id); break;
        case GGUF_TYPE_UINT16: *out = gguf_get_val_u16(g, id); break;
        case GGUF_TYPE_UINT32: *out = gguf_get_val_u32(g, id); break;
        case GGUF_TYPE_INT32: *out = gguf_get_val_i32(g, id); break;
        case GGUF_TYPE_UINT64: *out = (int64_t) gguf_get_val_u64(g, id); break;
        case GGUF_TYPE_INT64: *out = gguf_get_val_i64(g, id); break;
        default: return tnn_fail(TNN_ERR_ARG, "GGUF key '%s' is not an integer", key);
    }
    if (*out < 0 || *out > (1 << 24)) {
        return tnn_fail(TNN_ERR_ARG, "GGUF key '%s' = %lld is out of range", key, (long long) *out);
    }
    return TNN_OK;
}

int tnn_gguf_get_float(struct gguf_context * g, const char * key, float fallback, float * out) {
    const int64_t id = gguf_find_key(g, key);
    if (id < 0) {
        *out = fallback;
        return TNN_OK;
    }
    switch (gguf_get_kv_type(g, id)) {
        case GGUF_TYPE_FLOAT32: *out = gguf_get_val_f32(g, id); break;
        case GGUF_TYPE_FLOAT64: *out = (float) gguf_get_val_f64(g, id); break;
        default: return tnn_fail(TNN_ERR_ARG, "GGUF key '%s' is not a float", key);
    }
    return TNN_OK;
}

/* Types whose matrix product ggml can back-propagate through on the CPU
 * (out_prod has a kernel for them). BF16 has none in this ggml. */
static bool trainable_through(enum ggml_type type) {
    switch (type) {
        case GGML_TYPE_F32:
        case GGML_TYPE_F16:
        case GGML_TYPE_Q4_0:
        case GGML_TYPE_Q4_1:
        case GGML_TYPE_Q5_0:
        case GGML_TYPE_Q5_1:
        case GGML_TYPE_Q8_0:
        case GGML_TYPE_Q2_K:
        case GGML_TYPE_Q3_K:
        case GGML_TYPE_Q4_K:
        case GGML_TYPE_Q5_K:
        case GGML_TYPE_Q6_K: return true;
        default: return false;
    }
}

int tnn_gguf_check_header(const char * path) {
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

const char * tnn_gguf_arch(struct gguf_context * g) {
    const int64_t id = gguf_find_key(g, "general.architecture");
    return id >= 0 && gguf_get_kv_type(g, id) == GGUF_TYPE_STRING ? gguf_get_val_str(g, id) : NULL;
}

/* Every tensor's bytes must lie inside the file: a truncated download would
 * otherwise be read past its end. */
int tnn_gguf_check_extent(struct gguf_context * g, struct ggml_context * tensors, const char * path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        return tnn_fail(TNN_ERR_IO, "cannot stat %s: %s", path, strerror(errno));
    }
    const size_t data_offset = gguf_get_data_offset(g);
    for (int64_t i = 0; i < gguf_get_n_tensors(g); ++i) {
        const struct ggml_tensor * t = ggml_get_tensor(tensors, gguf_get_tensor_name(g, i));
        const size_t end = data_offset + gguf_get_tensor_offset(g, i) + ggml_nbytes(t);
        if (end > (size_t) st.st_size) {
            return tnn_fail(TNN_ERR_ARG, "%s is truncated: tensor %s ends at byte %zu of %lld", path, t->name, end,
                            (long long) st.st_size);
        }
    }
    return TNN_OK;
}

int tnn_gguf_check_types(struct ggml_context * tensors) {
    for (struct ggml_tensor * t = ggml_get_first_tensor(tensors); t != NULL;
         t = ggml_get_next_tensor(tensors, t)) {
        const bool vector = t->ne[1] == 1 && t->ne[2] == 1 && t->ne[3] == 1;
        /* a mixture's experts run on toy's own kernel (models/experts.c), which also reads
         * gpt-oss's MXFP4 */
        const bool experts = t->ne[2] > 1 && t->type == GGML_TYPE_MXFP4;
        if (vector ? t->type != GGML_TYPE_F32 : !trainable_through(t->type) && !experts) {
            return tnn_fail(TNN_ERR_ARG,
                            "tensor %s has type %s, which toy cannot train through "
                            "(supported: F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K..Q6_K; "
                            "experts MXFP4 too; norms and biases F32)",
                            t->name, ggml_type_name(t->type));
        }
    }
    return TNN_OK;
}

int tnn_gguf_read_tensor(struct gguf_context * g, const char * path, const char * name, void * out,
                         size_t nbytes) {
    const int64_t id = gguf_find_tensor(g, name);
    if (id < 0) {
        return tnn_fail(TNN_ERR_ARG, "tensor %s is missing", name);
    }
    const off_t offset = (off_t) (gguf_get_data_offset(g) + gguf_get_tensor_offset(g, id));
    FILE * f = fopen(path, "rb");
    if (f == NULL) {
        return tnn_fail(TNN_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    }
    const bool ok = fseeko(f, offset, SEEK_SET) == 0 && fread(out, 1, nbytes, f) == nbytes;
    fclose(f);
    return ok ? TNN_OK : tnn_fail(TNN_ERR_IO, "cannot read tensor %s of %s", name, path);
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
struct gguf_context * tnn_gguf_parse(const char * path, struct gguf_init_params params) {
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

int tnn_gguf_check(const char * path) {
    if (path == NULL || path[0] == '\0') {
        return tnn_fail(TNN_ERR_ARG, "no GGUF path given");
    }
    const int status = tnn_gguf_check_header(path);
    if (status != TNN_OK) {
        return status;
    }
    struct gguf_init_params params = { .no_alloc = true, .ctx = NULL };
    struct gguf_context * g = tnn_gguf_parse(path, params);
    if (g == NULL) {
        return TNN_ERR_ARG;
    }
    gguf_free(g);
    return TNN_OK;
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
