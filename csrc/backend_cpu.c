/* libtinynn_cpu: the CPU backend.
 *
 * Two builds of the same file (CMakeLists.txt, TOY_PORTABLE):
 *  - native (the source-build default): ggml's CPU code is compiled for the
 *    build machine (-march=native) and linked in; the registry has it already.
 *  - portable (wheels, TOY_CPU_VARIANTS): ggml's CPU code is compiled once per
 *    instruction-set level as libggml-cpu-<level>.so next to this library.
 *    ggml scores each against the running CPU and loads the best on first use
 *    (TNN_CPU_VARIANT=<level> loads that one instead, for the whole process).
 * Either way the backend is then reached through ggml's registry only.
 * tinynn's own CPU kernels (tinynn/cpu/) are chosen apart from ggml's
 * variant: by this CPU's features, under TNN_CPU_KERNELS, and no further
 * than the level TNN_CPU_VARIANT names. */
#if defined(TOY_CPU_VARIANTS) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE  /* dladdr */
#endif
#include "csrc/backend.h"
#include "ggml-cpu.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(TOY_CPU_VARIANTS)
#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

/* The path of the shared library that holds addr, or NULL. */
static const char * file_holding(const void * addr) {
    Dl_info info;
    if (addr == NULL || dladdr(addr, &info) == 0) {
        return NULL;
    }
    return info.dli_fname;
}

/* The folder this library was loaded from: the variants lie beside it. */
static bool this_library_dir(char * dir, size_t size) {
    const char * path = file_holding((const void *) &this_library_dir);
    const char * slash = path ? strrchr(path, '/') : NULL;
    const size_t len = slash ? (size_t) (slash - path) : 0;
    if (len == 0 || len + 1 > size) {
        return false;
    }
    memcpy(dir, path, len);
    dir[len] = '\0';
    return true;
}

/* A variant's name as the user may give it: letters, digits, '.', '_'. */
static bool is_variant_name(const char * name) {
    const size_t len = strlen(name);
    if (len == 0 || len > 32) {
        return false;
    }
    for (const char * c = name; *c != '\0'; ++c) {
        if (!isalnum((unsigned char) *c) && *c != '.' && *c != '_') {
            return false;
        }
    }
    return true;
}

/* Load the CPU variant: the best-scoring libggml-cpu-*.so of dir (nothing
 * else lies there), or the one TNN_CPU_VARIANT names, which ggml refuses
 * when this CPU cannot run it. */
static void load_variant(const char * dir) {
    ggml_log_callback log = NULL;
    void * log_data = NULL;
    ggml_log_get(&log, &log_data);
    ggml_log_set(tnn_log_warnings_only, NULL);   /* ggml announces every variant it loads */
    const char * forced = getenv("TNN_CPU_VARIANT");
    if (forced != NULL && forced[0] != '\0') {
        char path[PATH_MAX];
        if (!is_variant_name(forced)) {
            tnn_fail(TNN_ERR_BACKEND, "TNN_CPU_VARIANT='%.40s' is not a variant name (e.g. haswell, x64)", forced);
        } else if (snprintf(path, sizeof path, "%s/libggml-cpu-%s.so", dir, forced) >= (int) sizeof path ||
                   access(path, R_OK) != 0) {
            tnn_fail(TNN_ERR_BACKEND,
                     "TNN_CPU_VARIANT=%s: this install has no such CPU variant "
                     "(libggml-cpu-%s.so)",
                     forced, forced);
        } else if (ggml_backend_load(path) == NULL) {
            tnn_fail(TNN_ERR_BACKEND, "TNN_CPU_VARIANT=%s: this CPU cannot run that variant", forced);
        }
    } else {
        ggml_backend_load_all_from_path(dir);
    }
    ggml_log_set(log, log_data);
}
#endif

static ggml_backend_reg_t cpu_registry(void) {
#if defined(TOY_CPU_VARIANTS)
    ggml_backend_reg_t reg = ggml_backend_reg_by_name("CPU");
    if (reg == NULL) {
        char dir[PATH_MAX];
        if (!this_library_dir(dir, sizeof dir)) {
            return NULL;
        }
        load_variant(dir);
        reg = ggml_backend_reg_by_name("CPU");
    }
    return reg;
#else
    /* ggml-cpu itself, not through ggml's registry: the registry would also
     * bring in every other backend of the same build (TOY_VULKAN=ON builds
     * ggml once for both libraries) and start their devices */
    return ggml_backend_cpu_reg();
#endif
}

const char * tnn_backend_name(void) { return "cpu"; }

const char * tnn_backend_variant(void) {
#if defined(TOY_CPU_VARIANTS)
    /* the file name of the loaded variant, e.g. libggml-cpu-icelake.so -> "icelake" */
    static char variant[64];
    ggml_backend_reg_t reg = cpu_registry();
    if (reg == NULL) {
        return "none";
    }
    const char * path = file_holding(ggml_backend_reg_get_proc_address(reg, "ggml_backend_get_features"));
    if (path == NULL) {
        return "unknown";
    }
    const char * name = strrchr(path, '/');
    name = name ? name + 1 : path;
    const char * prefix = "libggml-cpu-";
    if (strncmp(name, prefix, strlen(prefix)) == 0) {
        name += strlen(prefix);
    }
    size_t len = strcspn(name, ".");
    if (len >= sizeof variant) {
        len = sizeof variant - 1;
    }
    memcpy(variant, name, len);
    variant[len] = '\0';
    return variant;
#else
    return "native";
#endif
}

ggml_backend_t tnn_backend_create(int32_t n_threads) {
    ggml_backend_reg_t reg = cpu_registry();
    if (reg == NULL || ggml_backend_reg_dev_count(reg) < 1) {
        return NULL;
    }
    ggml_backend_t backend = ggml_backend_dev_init(ggml_backend_reg_dev_get(reg, 0), NULL);
    ggml_backend_set_n_threads_t set_n_threads = (ggml_backend_set_n_threads_t) ggml_backend_reg_get_proc_address(
        reg, "ggml_backend_set_n_threads");
    if (backend != NULL && set_n_threads != NULL) {
        set_n_threads(backend, n_threads);
    }
    return backend;
}

size_t tnn_backend_max_tensor_bytes(ggml_backend_t backend) { return ggml_backend_get_max_size(backend); }

size_t tnn_backend_work_bytes(ggml_backend_t backend, struct ggml_cgraph * graph, int32_t n_threads) {
    (void) backend;
#if defined(TOY_CPU_VARIANTS)
    /* ggml_graph_plan lives in the loaded variant, not in a library this one
     * links: take it from the file that holds the variant's registry */
    typedef struct ggml_cplan (*graph_plan_t)(const struct ggml_cgraph *, int, struct ggml_threadpool *);
    static graph_plan_t graph_plan = NULL;
    if (graph_plan == NULL) {
        ggml_backend_reg_t reg = cpu_registry();
        const char * path = reg ? file_holding(ggml_backend_reg_get_proc_address(reg, "ggml_backend_get_features"))
                                : NULL;
        void * variant = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
        if (variant != NULL) {
            graph_plan = (graph_plan_t) dlsym(variant, "ggml_graph_plan");
            dlclose(variant);   /* only drops the count RTLD_NOLOAD added: ggml still holds it */
        }
        if (graph_plan == NULL) {
            return 0;
        }
    }
    return graph_plan(graph, n_threads, NULL).work_size;
#else
    return ggml_graph_plan(graph, n_threads, NULL).work_size;
#endif
}

bool tnn_backend_uses_host_memory(void) { return true; }

int tnn_backend_cpu_kernels(struct tnn_cpu_kernels * kernels) {
    /* TNN_CPU_VARIANT bounds tinynn's kernels to its level as well (in a
     * native build, where ggml's code is the build machine's, only them) */
    const char * level = getenv("TNN_CPU_VARIANT");
    unsigned allowed = TNN_FEATURES_ALL;
    if (level != NULL && level[0] != '\0' && !tnn_cpu_level_features(level, &allowed)) {
        if (tnn_cpu_features() != 0) {
            return tnn_fail(TNN_ERR_ARG,
                            "TNN_CPU_VARIANT='%.40s' is no x86-64 level: say x64, haswell, alderlake, "
                            "skylakex, icelake, zen4 or sapphirerapids (ggml's variant names)",
                            level);
        }
        allowed = 0;   /* no kernel of ours runs on this CPU anyway */
    }
    const char * setting = getenv("TNN_CPU_KERNELS");
    if (!tnn_cpu_kernels_choose(setting, allowed, kernels)) {
        return tnn_fail(TNN_ERR_ARG,
                        "TNN_CPU_KERNELS='%.60s': say on, off, or which kernels to use, "
                        "comma-separated (%s)",
                        setting, TNN_CPU_KERNEL_NAMES);
    }
    return TNN_OK;
}
