/* The AMX-BF16 tile unit's ceiling on this CPU, one thread: the loop at the
 * heart of fgemm_bf16_amx (2 x 2 tiles of sums, four 1 KB tile loads and four
 * tile products per 32 values of k) over operands streamed from L2, with
 * nothing else to do. It is what the kernel's tile loop could reach, so the
 * kernel's own figure (bench_kernels.py, profile_step.py) reads against it.
 *
 * The operands are first all zeros, then bfloat16 values near 1: the tile
 * unit runs slower on real data (measured: 2.8 TFLOP/s against 1.5-1.8 on a
 * Sapphire Rapids Xeon VM), so a ceiling taken on zeroed buffers overstates
 * what a product can reach.
 *
 *     gcc -O2 benchmarks/amx_ceiling.c -o /tmp/amx_ceiling && /tmp/amx_ceiling
 *
 * Linux hands out the tile registers only to a process that asks
 * (arch_prctl ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA); without AMX the
 * program says so and exits 1. */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define AMX __attribute__((target("amx-tile,amx-bf16")))
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

#define STEPS 256                   /* 32 values of k each: 4 KB of operands a step, 1 MB in all */
#define STEP_VALUES (4 * 16 * 32)   /* bfloat16 values of the step's four tiles */
#define FLOP_PER_STEP (4.0 * 16 * 16 * 32 * 2)

struct tile_config {
    uint8_t palette, start_row, reserved[14];
    uint16_t bytes_per_row[16];
    uint8_t rows[16];
};

static uint16_t operands[STEPS * STEP_VALUES] __attribute__((aligned(64)));

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

/* GFLOP/s of `passes` passes over the operands: tiles 0-3 the sums, 4-5
 * the first operand's two tiles, 6-7 the second's. */
AMX static double tile_loop(long passes) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    const double t0 = seconds();
    for (long pass = 0; pass < passes; ++pass) {
        const uint16_t * step = operands;
        for (int s = 0; s < STEPS; ++s, step += STEP_VALUES) {
            _tile_loadd(4, step, 64);
            _tile_loadd(5, step + 512, 64);
            _tile_loadd(6, step + 1024, 64);
            _tile_loadd(7, step + 1536, 64);
            _tile_dpbf16ps(0, 4, 6);
            _tile_dpbf16ps(1, 4, 7);
            _tile_dpbf16ps(2, 5, 6);
            _tile_dpbf16ps(3, 5, 7);
        }
    }
    const double elapsed = seconds() - t0;
    static float sums[16 * 16] __attribute__((aligned(64)));
    _tile_stored(0, sums, 64);   /* the sums are used: the loop cannot be dropped */
    return (double) passes * STEPS * FLOP_PER_STEP / elapsed / 1e9 + 0.0 * sums[0];
}

AMX static int run(void) {
    struct tile_config config;
    memset(&config, 0, sizeof config);
    config.palette = 1;
    for (int t = 0; t < 8; ++t) {
        config.rows[t] = 16;
        config.bytes_per_row[t] = 64;
    }
    _tile_loadconfig(&config);
    const long passes = 3000;
    printf("zeros:              %6.0f GFLOP/s one thread\n", tile_loop(passes));
    for (size_t i = 0; i < sizeof operands / sizeof operands[0]; ++i) {
        operands[i] = (uint16_t) (0x3f80 + i % 7 + ((i % 3) << 7));   /* 1.0 to about 4, varied */
    }
    printf("values near 1 to 4: %6.0f GFLOP/s one thread\n", tile_loop(passes));
    _tile_release();
    return 0;
}

int main(void) {
    if (!__builtin_cpu_supports("amx-bf16") || syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)) {
        fprintf(stderr, "amx_ceiling: this CPU or kernel gives no AMX-BF16 tiles\n");
        return 1;
    }
    return run();
}
