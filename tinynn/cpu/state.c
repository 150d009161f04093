/* The CPU state of a session: the kernels chosen at realize and their
 * scratch memory, grown as the rewrites need it and freed here. */
#include "cpu/state.h"

#include <stdlib.h>

int tnn_grow_scratch(struct tnn_cpu_scratch * scratch, int32_t n_threads, size_t bytes) {
    if (bytes <= scratch->per_thread) {
        return TNN_OK;
    }
    /* whole cache lines per thread */
    bytes = (bytes + 63) / 64 * 64;
    char * data = realloc(scratch->data, bytes * (size_t) n_threads);
    if (data == NULL) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory for the packed products' scratch");
    }
    scratch->data = data;
    scratch->per_thread = bytes;
    scratch->n_threads = n_threads;
    return TNN_OK;
}

void tnn_cpu_state_free(struct tnn_cpu_state * cpu) {
    free(cpu->scratch.data);
    cpu->scratch.data = NULL;
}
