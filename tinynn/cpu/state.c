/* The CPU state of a session: the kernels chosen at realize and their
 * scratch memory, grown as the rewrites need it and freed here. */
#include "cpu/state.h"

#include <stdlib.h>

int tnn_grow_scratch(struct tnn_cpu_scratch * scratch, int32_t n_threads, size_t bytes) {
    if (bytes <= scratch->per_thread) {
        return TNN_OK;
    }
    /* whole cache lines per thread, from a line's start: malloc's large
     * blocks start 16 bytes into a page, and the AMX tile loads from a
     * misaligned scratch each touch two lines a row (fgemm_bf16_amx on the
     * 1 B model's 8192 x 2048 x 1024, one thread: 70 ms against 38 ms).
     * Nothing in the scratch outlives a node, so the old block is freed,
     * not copied. */
    bytes = (bytes + 63) / 64 * 64;
    void * data = NULL;
    if (posix_memalign(&data, 64, bytes * (size_t) n_threads) != 0) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory for the packed products' scratch");
    }
    free(scratch->data);
    scratch->data = data;
    scratch->per_thread = bytes;
    scratch->n_threads = n_threads;
    return TNN_OK;
}

void tnn_cpu_state_free(struct tnn_cpu_state * cpu) {
    free(cpu->scratch.data);
    cpu->scratch.data = NULL;
    for (int32_t i = 0; i < cpu->n_stored_uses; ++i) {
        free(cpu->stored_uses[i]);
    }
    free(cpu->stored_uses);
    cpu->stored_uses = NULL;
    cpu->n_stored_uses = cpu->cap_stored_uses = 0;
}
