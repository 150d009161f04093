/* The backend's entry points: csrc/backend_<name>.c defines them, one file
 * per library (libtinynn_<name>); everything else in tinynn is the same in
 * every library. Not installed. */
#ifndef TINYNN_CSRC_BACKEND_H
#define TINYNN_CSRC_BACKEND_H

#include "core/core.h"
#include "cpu/kernels.h"

#include <stdbool.h>

ggml_backend_t tnn_backend_create(int32_t n_threads);
/* true when the backend computes on host memory, so a mapped file can be used
 * in place (CPU); false when weights must be copied to the device. */
bool tnn_backend_uses_host_memory(void);
/* The largest tensor the backend's ops take, in bytes: ggml's largest buffer,
 * or less where the device's shaders address less (Vulkan's
 * maxStorageBufferRange: 128 MiB on lavapipe). */
size_t tnn_backend_max_tensor_bytes(ggml_backend_t backend);
/* The work memory the backend takes to compute graph on n_threads (the CPU
 * backend's work buffer, kept between computes); 0 where it is the device's. */
size_t tnn_backend_work_bytes(ggml_backend_t backend, struct ggml_cgraph * graph, int32_t n_threads);
/* Which of tinynn's CPU kernels (cpu/kernels.h) this backend's graphs run,
 * chosen once at realize: the CPU backend asks the kernel layer (this CPU's
 * features under TNN_CPU_KERNELS), a device backend answers none. TNN_OK,
 * or TNN_ERR_ARG (recorded) for a TNN_CPU_KERNELS it cannot read. */
int tnn_backend_cpu_kernels(struct tnn_cpu_kernels * kernels);

#endif
