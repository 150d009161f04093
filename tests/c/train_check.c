/* train_check: tinynn through its public C API, for platforms without Python.
 *
 * scripts/arm_check.sh builds this twice: cross-compiled for aarch64 (run
 * under qemu-aarch64) and natively for x86-64 (run with TNN_CPU_KERNELS=off),
 * each linked against libtinynn_cpu.so built for that target, and compares
 * what the two print. What it proves:
 *
 *  1. The kernel layer (tinynn/cpu/kernels.h) answers as it must on a CPU
 *     where none of tinynn's kernels runs. Built for anything but x86-64 it
 *     checks what tests/test_cpu_kernels.py checks there: no variant of any
 *     kernel runs (tnn_cpu_kernel_runs), every kernel's choice is "none"
 *     whatever TNN_CPU_KERNELS lists, a CPU level in TNN_CPU_VARIANT bounds
 *     nothing (an x86 level or an ARM one alike), the kernel checks refuse
 *     every variant rather than pretend to compute, and a setting realize
 *     cannot read is refused. On x86-64 only the parts that hold on any CPU
 *     run ("off" means none, a bad setting is refused, "none" is no variant).
 *
 *  2. A training step runs and learns: the default tiny llama of toy
 *     (python/toy/config.py: vocab 256, d_model 64, 2 layers, 4 heads, 2 KV
 *     heads, d_ff 160, 4 sequences of 64 tokens) from seed 0 takes STEPS
 *     AdamW steps, as python/toy/recipes/base.py drives them (reset before
 *     the first, upload tokens / positions / labels / hp, tnn_compute_step,
 *     download the loss), on batches of a fixed bigram rule it can learn.
 *     Every kernel must be "none" here: ggml's ops do all the work, so the
 *     aarch64 run (ggml's NEON code) and the x86-64 run (ggml's AVX code,
 *     tinynn's kernels off) compute the same thing in a different float
 *     order, and their figures must agree closely, not bit for bit.
 *
 * Output, one figure a line, for the script to compare:
 *     loss <step> <value>     the step's loss (before its update)
 *     eval_loss <value>       the first batch's loss after the last step
 *                             (tnn_compute_forward)
 *     update_l1 <value>       sum |w - w0| over the token embedding: how far
 *                             training moved it
 * then "ok". Any failed check prints "FAIL: ..." and exits 1.
 *
 *     train_check [steps] [threads]     (defaults 6 and 2) */
#include "tinynn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define FAIL(...) do { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); ++failures; } while (0)

/* A tinynn call that must succeed: stop with its error otherwise. */
#define CHECK(call) do {                                                        \
        int status_ = (call);                                                   \
        if (status_ != TNN_OK) {                                                \
            printf("FAIL: %s -> %d: %s\n", #call, status_, tnn_last_error());   \
            return 1;                                                           \
        }                                                                       \
    } while (0)

static const char * const KERNELS[] = { "qgemm", "fgemm", "head_loss", "adamw" };
#define N_KERNELS 4
#if !defined(__x86_64__) && !defined(_M_X64)
static const char * const VARIANTS[] = { "avx2", "avxvnni", "avx512", "amx" };
#define N_VARIANTS 4
#endif

static void set_env(const char * name, const char * value) {
    if (value) {
        setenv(name, value, 1);
    } else {
        unsetenv(name);
    }
}

/* Every kernel's choice under TNN_CPU_KERNELS = kernels (NULL: unset) and
 * TNN_CPU_VARIANT = level must be "none". */
static void expect_none(const char * kernels, const char * level) {
    set_env("TNN_CPU_KERNELS", kernels);
    set_env("TNN_CPU_VARIANT", level);
    for (int i = 0; i < N_KERNELS; ++i) {
        const char * c = tnn_cpu_kernel_choice(KERNELS[i]);
        if (c == NULL || strcmp(c, "none") != 0) {
            FAIL("TNN_CPU_KERNELS=%s TNN_CPU_VARIANT=%s: %s chose %s (%s)", kernels ? kernels : "(unset)",
                 level ? level : "(unset)", KERNELS[i], c ? c : "NULL", c ? "" : tnn_last_error());
        }
    }
}

/* Part 1: the kernel layer's answers. The caller's settings are put back. */
static void check_kernel_layer(void) {
    char * saved_kernels = getenv("TNN_CPU_KERNELS") ? strdup(getenv("TNN_CPU_KERNELS")) : NULL;
    char * saved_level = getenv("TNN_CPU_VARIANT") ? strdup(getenv("TNN_CPU_VARIANT")) : NULL;

    if (strcmp(tnn_backend_name(), "cpu") != 0) {
        FAIL("backend is %s, not cpu", tnn_backend_name());
    }

    /* on any CPU: "off" leaves every product to ggml ... */
    expect_none("off", NULL);
    /* ... a setting that names no kernel is refused ... */
    set_env("TNN_CPU_KERNELS", "qgemm,bogus");
    set_env("TNN_CPU_VARIANT", NULL);
    if (tnn_cpu_kernel_choice("qgemm") != NULL) {
        FAIL("TNN_CPU_KERNELS=qgemm,bogus was accepted");
    }
    /* ... and "none" is no variant a check can run */
    static const float x0[32 * 1] = { 0 };
    float y0[16];
    static const char block0[16 * 34];   /* 16 rows x one Q8_0 block */
    if (tnn_kernel_check_qgemm("none", 0, 2, block0, 16, 32, x0, 1, y0, 1) != TNN_ERR_ARG) {
        FAIL("the qgemm check ran a variant named 'none'");
    }

#if !defined(__x86_64__) && !defined(_M_X64)
    /* Off x86-64 no variant is compiled: nothing runs ... */
    for (int i = 0; i < N_KERNELS; ++i) {
        for (int v = 0; v < N_VARIANTS; ++v) {
            if (tnn_cpu_kernel_runs(KERNELS[i], VARIANTS[v])) {
                FAIL("%s's %s variant claims to run here", KERNELS[i], VARIANTS[v]);
            }
        }
    }
    /* ... so whatever the settings, every kernel is "none" (ggml's ops) ... */
    expect_none(NULL, NULL);
    expect_none("", NULL);
    expect_none("on", NULL);
    expect_none("qgemm,fgemm", NULL);
    expect_none("qgemm,head_loss,adamw", NULL);
    /* ... a level bounds nothing: an x86 one, or ggml's name for an ARM one
     * (refused only where tinynn's kernels could run) ... */
    expect_none(NULL, "haswell");
    expect_none(NULL, "sapphirerapids");
    expect_none(NULL, "armv8.2_1");
    /* ... and the kernel checks refuse every variant rather than compute */
    float w[64], g[64], m[64], v[64], hp[7] = { 1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f, 10.0f, 1000.0f };
    for (int i = 0; i < 64; ++i) {
        w[i] = g[i] = 1.0f;
        m[i] = v[i] = 0.0f;
    }
    for (int vi = 0; vi < N_VARIANTS; ++vi) {
        if (tnn_kernel_check_adamw(VARIANTS[vi], w, g, m, v, hp, 64, 1) != TNN_ERR_ARG) {
            FAIL("the adamw check ran its %s variant here", VARIANTS[vi]);
        }
        if (tnn_kernel_check_qgemm(VARIANTS[vi], 0, 2, block0, 16, 32, x0, 1, y0, 1) != TNN_ERR_ARG) {
            FAIL("the qgemm check ran its %s variant here", VARIANTS[vi]);
        }
    }
    if (w[0] != 1.0f) {
        FAIL("a refused adamw check changed its weights");
    }
    printf("kernel_layer no tinynn kernel runs on this CPU: every kernel \"none\" (ggml's ops)\n");
#else
    printf("kernel_layer x86-64: the checks that hold on any CPU\n");
#endif
    set_env("TNN_CPU_KERNELS", saved_kernels);
    set_env("TNN_CPU_VARIANT", saved_level);
    free(saved_kernels);
    free(saved_level);
}

/* A batch of the rule t' = (5 t + 3) mod 256 from a start per sequence, drawn
 * from a small deterministic generator: ids [t_batch][t_seq], positions
 * 0..t_seq-1 in each sequence, labels the next token. */
static void make_batch(uint32_t * state, int t_seq, int t_batch, int32_t * ids, int32_t * pos, int32_t * labels) {
    for (int b = 0; b < t_batch; ++b) {
        *state = *state * 1664525u + 1013904223u;
        int32_t t = (int32_t) (*state >> 24);
        for (int i = 0; i < t_seq; ++i) {
            const int32_t next = (5 * t + 3) % 256;
            ids[b * t_seq + i] = t;
            pos[b * t_seq + i] = i;
            labels[b * t_seq + i] = next;
            t = next;
        }
    }
}

int main(int argc, char ** argv) {
    const int steps = argc > 1 ? atoi(argv[1]) : 6;
    const int threads = argc > 2 ? atoi(argv[2]) : 2;
    if (steps < 1 || threads < 1) {
        fprintf(stderr, "usage: train_check [steps >= 1] [threads >= 1]\n");
        return 2;
    }
    printf("backend %s (%s), %d threads\n", tnn_backend_name(), tnn_backend_variant(), threads);

    check_kernel_layer();

    /* Part 2: the training run, with ggml's ops only */
    for (int i = 0; i < N_KERNELS; ++i) {
        const char * c = tnn_cpu_kernel_choice(KERNELS[i]);
        if (c == NULL || strcmp(c, "none") != 0) {
            printf("FAIL: %s runs %s: this check compares ggml's ops alone "
                   "(on x86-64 run it with TNN_CPU_KERNELS=off)\n", KERNELS[i], c ? c : tnn_last_error());
            return 1;
        }
    }

    /* toy's defaults: ModelConfig() and RecipeOptions() of python/toy/config.py */
    tnn_model_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.arch = "llama";
    tnn_model_config * c = &desc.config;
    c->vocab = 256;
    c->d_model = 64;
    c->n_layers = 2;
    c->n_heads = 4;
    c->n_kv_heads = 2;
    c->d_ff = 160;            /* about 8/3 d_model, rounded to 32 */
    c->t_seq = 64;
    c->t_batch = 4;
    c->rope_base = 10000.0f;
    c->norm_eps = 1e-5f;
    c->init_scale = 0.02f;
    c->seed = 0;

    tnn_session * s = NULL;
    CHECK(tnn_session_new(threads, &s));
    int32_t inputs[2], loss_h, labels_h, hp_h, logits_h;
    CHECK(tnn_realize(s, &desc, inputs));
    CHECK(tnn_build_training_step(s, &loss_h, &labels_h, &hp_h, &logits_h));

    /* the token embedding before training, to measure how far it moves */
    int32_t embd_h, kind, type;
    int64_t ne[4];
    size_t embd_bytes;
    char name[128];
    CHECK(tnn_find(s, "token_embd.weight", &embd_h));
    CHECK(tnn_tensor_info(s, embd_h, name, sizeof name, &kind, &type, ne, &embd_bytes));
    float * w0 = malloc(embd_bytes), * w1 = malloc(embd_bytes);
    if (!w0 || !w1) {
        return 1;
    }
    CHECK(tnn_download(s, embd_h, w0, embd_bytes));

    const int n = c->t_seq * c->t_batch;
    int32_t * ids = malloc(n * sizeof *ids), * pos = malloc(n * sizeof *pos), * labels = malloc(n * sizeof *labels);
    if (!ids || !pos || !labels) {
        return 1;
    }
    const float lr = 1e-2f, beta1 = 0.9f, beta2 = 0.999f;
    double beta1_t = 1.0, beta2_t = 1.0;   /* beta^t by products: the same bits everywhere */
    uint32_t rng = 12345u;
    float first_loss = 0.0f, loss = 0.0f;
    for (int step = 1; step <= steps; ++step) {
        make_batch(&rng, c->t_seq, c->t_batch, ids, pos, labels);
        beta1_t *= beta1;
        beta2_t *= beta2;
        /* lr, beta1, beta2, eps, weight decay, 1/(1-beta1^t), 1/(1-beta2^t) (python/toy/optim.py) */
        const float hp[7] = { lr, beta1, beta2, 1e-8f, 0.0f, (float) (1.0 / (1.0 - beta1_t)),
                              (float) (1.0 / (1.0 - beta2_t)) };
        if (step == 1) {
            CHECK(tnn_graph_reset(s));
        }
        CHECK(tnn_upload(s, inputs[0], ids, n * sizeof *ids));
        CHECK(tnn_upload(s, inputs[1], pos, n * sizeof *pos));
        CHECK(tnn_upload(s, labels_h, labels, n * sizeof *labels));
        CHECK(tnn_upload(s, hp_h, hp, sizeof hp));
        CHECK(tnn_compute_step(s));
        CHECK(tnn_download(s, loss_h, &loss, sizeof loss));
        printf("loss %d %.9g\n", step, loss);
        if (!isfinite(loss)) {
            FAIL("step %d: loss %g", step, loss);
        }
        if (step == 1) {
            first_loss = loss;
        }
    }

    /* the first batch again, forward only, after training */
    rng = 12345u;
    make_batch(&rng, c->t_seq, c->t_batch, ids, pos, labels);
    CHECK(tnn_upload(s, inputs[0], ids, n * sizeof *ids));
    CHECK(tnn_upload(s, inputs[1], pos, n * sizeof *pos));
    CHECK(tnn_upload(s, labels_h, labels, n * sizeof *labels));
    CHECK(tnn_compute_forward(s));
    float eval_loss;
    CHECK(tnn_download(s, loss_h, &eval_loss, sizeof eval_loss));
    printf("eval_loss %.9g\n", eval_loss);

    CHECK(tnn_download(s, embd_h, w1, embd_bytes));
    double moved = 0.0;
    for (size_t i = 0; i < embd_bytes / sizeof(float); ++i) {
        moved += fabs((double) w1[i] - (double) w0[i]);
    }
    printf("update_l1 %.9g\n", moved);

    /* an untrained model of 256 tokens starts near ln 256 = 5.545 and
     * learns a deterministic rule: its loss must fall */
    if (fabsf(first_loss - logf(256.0f)) > 0.1f) {
        FAIL("the first loss %g is not near ln 256 = %g", first_loss, logf(256.0f));
    }
    if (!(eval_loss < first_loss - 0.1f)) {
        FAIL("training did not lower the loss: %g -> %g", first_loss, eval_loss);
    }
    if (!(moved > 0.0)) {
        FAIL("the token embedding did not move");
    }

    tnn_session_free(s);
    free(w0); free(w1); free(ids); free(pos); free(labels);
    if (failures) {
        printf("%d check(s) failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
