/* The CPU state of a session: the kernels chosen at realize and their
 * scratch memory, grown as the rewrites need it and freed here. */
#include "cpu/state.h"

#include <stdatomic.h>
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

/* The meeting point: threads arrived at the current meeting, and how many
 * meetings have ended (a thread waits for that count to move). */
struct meeting {
    atomic_int arrived;
    atomic_int ended;
};

int tnn_grow_shared_scratch(struct tnn_cpu_scratch * scratch, size_t bytes) {
    if (scratch->shared != NULL && bytes <= scratch->shared_bytes) {
        return TNN_OK;
    }
    bytes = (bytes + 63) / 64 * 64;
    void * data = NULL;
    if (posix_memalign(&data, 64, 64 + bytes) != 0) {
        return tnn_fail(TNN_ERR_ALLOC, "out of memory for the products' shared scratch");
    }
    struct meeting * m = data;
    atomic_init(&m->arrived, 0);
    atomic_init(&m->ended, 0);
    free(scratch->shared);
    scratch->shared = data;
    scratch->shared_bytes = bytes;
    return TNN_OK;
}

void tnn_threads_meet(const struct tnn_cpu_scratch * scratch, int nth) {
    if (nth <= 1) {
        return;
    }
    struct meeting * m = (struct meeting *) scratch->shared;
    const int ended = atomic_load_explicit(&m->ended, memory_order_acquire);
    if (atomic_fetch_add_explicit(&m->arrived, 1, memory_order_acq_rel) == nth - 1) {
        /* the last to arrive: reset for the next meeting, then end this one */
        atomic_store_explicit(&m->arrived, 0, memory_order_relaxed);
        atomic_fetch_add_explicit(&m->ended, 1, memory_order_release);
        return;
    }
    while (atomic_load_explicit(&m->ended, memory_order_acquire) == ended) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield");
#endif
    }
}

void tnn_cpu_state_free(struct tnn_cpu_state * cpu) {
    free(cpu->scratch.data);
    cpu->scratch.data = NULL;
    free(cpu->scratch.shared);
    cpu->scratch.shared = NULL;
    cpu->scratch.shared_bytes = 0;
    for (int32_t i = 0; i < cpu->n_stored_uses; ++i) {
        free(cpu->stored_uses[i]);
    }
    free(cpu->stored_uses);
    cpu->stored_uses = NULL;
    cpu->n_stored_uses = cpu->cap_stored_uses = 0;
}
