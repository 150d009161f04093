/* libtinynn_cuda: the first CUDA device. The thread count is not used. */
#include "csrc/backend.h"
#include "ggml-cuda.h"

const char * tnn_backend_name(void) { return "cuda"; }

/* one build of the device code: CMAKE_CUDA_ARCHITECTURES picks what it holds */
const char * tnn_backend_variant(void) { return "default"; }

ggml_backend_t tnn_backend_create(int32_t n_threads) {
    (void) n_threads;
    if (ggml_backend_cuda_get_device_count() < 1) {
        return NULL;
    }
    return ggml_backend_cuda_init(0);
}

size_t tnn_backend_work_bytes(ggml_backend_t backend, struct ggml_cgraph * graph, int32_t n_threads) {
    (void) backend;
    (void) graph;
    (void) n_threads;
    return 0;
}

size_t tnn_backend_max_tensor_bytes(ggml_backend_t backend) { return ggml_backend_get_max_size(backend); }

bool tnn_backend_uses_host_memory(void) { return false; }

/* the device computes every node: none of tinynn's CPU kernels */
int tnn_backend_cpu_kernels(struct tnn_cpu_kernels * kernels) {
    *kernels = (struct tnn_cpu_kernels){ 0 };
    return TNN_OK;
}
