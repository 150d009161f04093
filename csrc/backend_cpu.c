/* libtinynn_cpu: the CPU backend. */
#include "internal.h"
#include "ggml-cpu.h"

const char * tnn_backend_name(void) { return "cpu"; }

ggml_backend_t tnn_backend_create(int32_t n_threads) {
    ggml_backend_t backend = ggml_backend_cpu_init();
    if (backend != NULL) {
        ggml_backend_cpu_set_n_threads(backend, n_threads);
    }
    return backend;
}

bool tnn_backend_uses_host_memory(void) { return true; }
