/* tnn_realize, which has the architecture's table entry (models/arch.c)
 * create the parameters and inputs, then gives them one buffer and the
 * seeded random init; and tnn_upload_donor. */
#include "session/session.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- seeded random init ------------------------------------------------- */

/* splitmix64: tiny, portable, and the same stream on every platform. */
static uint64_t splitmix64(uint64_t * state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* uniform in (0, 1], 53 bits */
static double uniform01(uint64_t * state) {
    return ((double) (splitmix64(state) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

/* Fill with N(0, scale^2) by Box-Muller. Each tensor has its own stream,
 * seeded from the session seed and the tensor's index, so adding a tensor
 * never shifts the values of the others. */
static void fill_normal(float * out, int64_t n, float scale, uint64_t seed, uint64_t index) {
    uint64_t state = seed ^ (0xD1B54A32D192ED03ull * (index + 1));
    for (int64_t i = 0; i < n; i += 2) {
        const double r = sqrt(-2.0 * log(uniform01(&state)));
        const double theta = 2.0 * M_PI * uniform01(&state);
        out[i] = (float) (scale * r * cos(theta));
        if (i + 1 < n) {
            out[i + 1] = (float) (scale * r * sin(theta));
        }
    }
}

static bool is_norm_or_bias(const struct ggml_tensor * t) { return ggml_n_dims(t) == 1; }

/* Norm weights start at 1, biases (norm biases too) at 0, LoRA B at 0 (step
 * 1 sees exactly the base model), every other matrix N(0, init_scale^2);
 * RoPE factors (not trained) at 1, plain RoPE until uploaded. */
static int init_parameters(tnn_session * s) {
    const tnn_model_config * cfg = &s->model.cfg;
    int64_t max_elems = 0;
    for (int32_t h = 0; h < s->tensors.n; ++h) {
        int64_t n = ggml_nelements(s->tensors.entries[h].tensor);
        max_elems = n > max_elems ? n : max_elems;
    }
    float * host = malloc((size_t) max_elems * sizeof(float));
    if (host == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory initialising parameters");
    }
    for (int32_t h = 0; h < s->tensors.n; ++h) {
        struct ggml_tensor * t = s->tensors.entries[h].tensor;
        const int32_t kind = s->tensors.entries[h].kind;
        if (kind != TNN_KIND_PARAM && kind != TNN_KIND_ROPE_FREQS) {
            continue;
        }
        const int64_t n = ggml_nelements(t);
        if (kind == TNN_KIND_ROPE_FREQS) {
            for (int64_t i = 0; i < n; ++i) host[i] = 1.0f;
        } else if (strstr(t->name, ".lora_b") != NULL) {
            for (int64_t i = 0; i < n; ++i) host[i] = 0.0f;
        } else if (is_norm_or_bias(t)) {
            const float value = strstr(t->name, "norm.weight") ? 1.0f : 0.0f;
            for (int64_t i = 0; i < n; ++i) host[i] = value;
        } else if (cfg->init_scale == 0.0f) {
            /* N(0, 0) without drawing: a full fine-tune's, whose weights are
             * uploaded next (drawing 135 M values took 3 s) */
            memset(host, 0, (size_t) n * sizeof(float));
        } else {
            fill_normal(host, n, cfg->init_scale, cfg->seed, (uint64_t) h);
        }
        tnn_tensor_set(&s->tensors, t, host, 0, ggml_nbytes(t));
    }
    free(host);
    return TNN_OK;
}

/* ---- what the architectures' create functions share ----------------------- */

/* Memory for the parameters and inputs, and the seeded init. */
static int allocate_and_init(tnn_session * s) {
    if (s->measure.on) {
        s->measure.params = (int64_t) tnn_ctx_alloc_bytes(s->model.ctx, s->backend);
        tnn_pretend_allocated(s->model.ctx);
        return TNN_OK;
    }
    s->model.buf = ggml_backend_alloc_ctx_tensors(s->model.ctx, s->backend);
    if (s->model.buf == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of %s memory for the model parameters", tnn_backend_name());
    }
    ggml_backend_buffer_clear(s->model.buf, 0);
    return init_parameters(s);
}

/* The architecture's create, over a GGUF base when desc names one. */
static int create_model(tnn_session * s, const tnn_model_desc * desc) {
    if (desc->base_gguf == NULL) {
        s->model.arch = desc->arch ? tnn_arch_find(desc->arch) : NULL;
        if (s->model.arch == NULL) {
            return tnn_fail(TNN_ERR_ARG, "unknown architecture '%s': choose from %s",
                            desc->arch ? desc->arch : "(none)", tnn_arch_names());
        }
        return s->model.arch->create(&s->model, &s->tensors, desc);
    }
    /* every GGUF base is a llama-family model (models/gguf_config.c says which);
     * its weights and copies go on the session's backend, made for the
     * kernels just chosen (or counted, measuring) */
    s->model.arch = &tnn_arch_llama;
    const struct tnn_base_placement place = { s->backend, &s->cpu.kernels, &s->measure };
    return s->model.arch->create_on_base(&s->model, &s->tensors, &s->base, &place, desc);
}

int tnn_realize(tnn_session * s, const tnn_model_desc * desc, int32_t * input_handles) {
    if (s == NULL || desc == NULL || input_handles == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_realize: NULL argument");
    }
    if (s->realized || s->model.arch != NULL) {
        return tnn_fail(TNN_ERR_STATE, "realize called twice on one session");
    }
    /* the backend chooses the CPU kernels once, before the base's copies
     * are made for them */
    int status = tnn_backend_cpu_kernels(&s->cpu.kernels);
    if (status == TNN_OK) {
        status = create_model(s, desc);
    }
    if (status == TNN_OK) {
        status = allocate_and_init(s);
    }
    if (status != TNN_OK) {
        return status;
    }
    int32_t first = -1, second = -1;
    for (int32_t h = 0; h < s->tensors.n; ++h) {
        const int32_t kind = s->tensors.entries[h].kind;
        if (kind == TNN_KIND_TOKENS || kind == TNN_KIND_IMAGES) first = h;
        if (kind == TNN_KIND_POSITIONS) second = h;
    }
    input_handles[0] = first;
    input_handles[1] = second;
    s->realized = true;
    return TNN_OK;
}

int tnn_set_measure_only(tnn_session * s) {
    if (s == NULL) {
        return tnn_fail(TNN_ERR_ARG, "tnn_set_measure_only: session is NULL");
    }
    if (s->realized || s->model.arch != NULL) {
        return tnn_fail(TNN_ERR_STATE, "set_measure_only must come before realize");
    }
    if (!tnn_backend_uses_host_memory()) {
        return tnn_fail(TNN_ERR_ARG, "a measuring session runs on the CPU backend only, not %s",
                        tnn_backend_name());
    }
    s->measure.on = true;
    return TNN_OK;
}

/* ---- warm start ------------------------------------------------------------ */

int tnn_upload_donor(tnn_session * s, const float * data, size_t n_floats) {
    if (tnn_refuse_measuring(s, "upload_donor") != TNN_OK) {
        return TNN_ERR_STATE;
    }
    if (s == NULL || data == NULL) {
        return tnn_fail(TNN_ERR_ARG, "upload_donor: NULL argument");
    }
    int32_t handle = -1;
    if (!s->realized || s->model.has_lora || tnn_find(s, "token_embd.weight", &handle) != TNN_OK ||
        s->tensors.entries[handle].kind != TNN_KIND_PARAM) {
        return tnn_fail(TNN_ERR_STATE, "upload_donor before realize_scratch: the warm window "
                                       "opens when the random-init model is realized");
    }
    if (s->train.built) {
        return tnn_fail(TNN_ERR_STATE, "upload_donor after build: the warm window is closed "
                                       "(the donor would not be what training starts from)");
    }
    struct ggml_tensor * e = s->tensors.entries[handle].tensor;
    if (n_floats != (size_t) ggml_nelements(e)) {
        return tnn_fail(TNN_ERR_ARG, "upload_donor: the embedding holds %lld x %lld floats, got %zu",
                        (long long) e->ne[1], (long long) e->ne[0], n_floats);
    }
    tnn_tensor_set(&s->tensors, e, data, 0, n_floats * sizeof(float));
    return TNN_OK;
}
