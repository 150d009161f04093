/* The gated delta rule (Qwen 3.5's linear attention, ggml's
 * GGML_OP_GATED_DELTA_NET with a scalar gate), forward and backward, for
 * one custom node each way (models/primitives.c: tnn_gated_delta_net).
 *
 * Per head and sequence, the state S [S_k x S_v] starts at zero and each
 * token t does
 *   A = exp(g_t) S;  u = A^T k_t;  delta = beta_t (v_t - u);
 *   S = A + k_t delta^T;  o_t = S^T q_t / sqrt(S_v).
 * The state is held transposed, M[j][i] = S[i][j], so that every product
 * runs along contiguous rows (as ggml's CPU op holds it). Sums over a row
 * run in 8 lanes, and sums down a column as row updates, so that the
 * compiler vectorizes both at the baseline instruction set (the sums'
 * order differs from ggml's SIMD dot products by float rounding only).
 *
 * The backward goes through time backwards (cpu/recurrence.c: each
 * chunk of 64 tokens' states made again from the one kept before it):
 * (T / 64 + 66) S^2 floats a head at a time, not T S^2. */
#include "cpu/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LANES 8

static float dot(const float * a, const float * b, int64_t n) {
    float lane[LANES] = { 0.0f };
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES) {
        for (int l = 0; l < LANES; ++l) {
            lane[l] += a[i + l] * b[i + l];
        }
    }
    float sum = 0.0f;
    for (; i < n; ++i) {
        sum += a[i] * b[i];
    }
    for (int l = 0; l < LANES; ++l) {
        sum += lane[l];
    }
    return sum;
}

/* y += c x, n values */
static void add_scaled(float * y, const float * x, float c, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        y[i] += c * x[i];
    }
}

/* One token's step of the state M [S_v rows of S_k]; writes delta [S_v]. */
static void step_state(float * m, int64_t n, const float * k, const float * v, float gate, float beta,
                       float * delta) {
    const float decay = expf(gate);
    for (int64_t x = 0; x < n * n; ++x) {
        m[x] *= decay;
    }
    for (int64_t j = 0; j < n; ++j) {
        delta[j] = (v[j] - dot(m + j * n, k, n)) * beta;
    }
    for (int64_t j = 0; j < n; ++j) {
        add_scaled(m + j * n, k, delta[j], n);
    }
}

/* Element (i, head, t, seq) of a [S, H, T, B] array, and (head, t, seq) of [1, H, T, B]. */
static inline int64_t at(const struct tnn_delta_net_args * a, int64_t head, int64_t t, int64_t seq) {
    return a->n * (head + a->heads * (t + a->t_seq * seq));
}

static inline int64_t at1(const struct tnn_delta_net_args * a, int64_t head, int64_t t, int64_t seq) {
    return head + a->heads * (t + a->t_seq * seq);
}

void tnn_delta_net_forward(const struct tnn_delta_net_args * a, int ith, int nth) {
    const int64_t n = a->n;
    const float scale = 1.0f / sqrtf((float) n);
    float * m = malloc((size_t) (n * n + n) * sizeof(float));
    if (m == NULL) {
        return;   /* (the node's caller checked the memory it plans; nothing to report here) */
    }
    float * delta = m + n * n;
    for (int64_t item = ith; item < a->heads * a->n_seqs; item += nth) {
        const int64_t head = item % a->heads, seq = item / a->heads;
        memset(m, 0, (size_t) (n * n) * sizeof(float));
        for (int64_t t = 0; t < a->t_seq; ++t) {
            const int64_t x = at(a, head, t, seq), x1 = at1(a, head, t, seq);
            step_state(m, n, a->k + x, a->v + x, a->g[x1], a->beta[x1], delta);
            for (int64_t j = 0; j < n; ++j) {
                a->out[x + j] = dot(m + j * n, a->q + x, n) * scale;
            }
        }
    }
    free(m);
}

/* The backward of one token (module comment): prev the state before it,
 * cur after it, dm the state's gradient after it in, before it out. */
static void step_back(const struct tnn_delta_net_args * a, int64_t x, int64_t x1, const float * prev,
                      const float * cur, float * dm, float * work) {
    const int64_t n = a->n;
    const float scale = 1.0f / sqrtf((float) n);
    const float decay = expf(a->g[x1]), beta = a->beta[x1];
    const float *q = a->q + x, *k = a->k + x, *v = a->v + x, *dout = a->dout + x;
    float *dq = a->dq + x, *dk = a->dk + x, *dv = a->dv + x;
    float *u = work, *delta = work + n, *ddelta = work + 2 * n, *du = work + 3 * n;
    for (int64_t j = 0; j < n; ++j) {
        u[j] = decay * dot(prev + j * n, k, n);
        delta[j] = (v[j] - u[j]) * beta;
    }
    /* o = scale S^T q: dq = scale S dout, a sum of S's columns (M's rows) */
    memset(dq, 0, (size_t) n * sizeof(float));
    for (int64_t j = 0; j < n; ++j) {
        add_scaled(dq, cur + j * n, scale * dout[j], n);
        add_scaled(dm + j * n, q, scale * dout[j], n);
    }
    /* S = A + k delta^T */
    float dbeta = 0.0f;
    for (int64_t j = 0; j < n; ++j) {
        ddelta[j] = dot(dm + j * n, k, n);
        dv[j] = beta * ddelta[j];
        dbeta += ddelta[j] * (v[j] - u[j]);
        du[j] = -beta * ddelta[j];
    }
    /* dk = dS delta + exp(g) S_prev du, sums of M's rows */
    memset(dk, 0, (size_t) n * sizeof(float));
    for (int64_t j = 0; j < n; ++j) {
        add_scaled(dk, dm + j * n, delta[j], n);
        add_scaled(dk, prev + j * n, decay * du[j], n);
    }
    /* u = A^T k, A = exp(g) S_prev */
    float dgate = 0.0f;
    for (int64_t j = 0; j < n; ++j) {
        float * row = dm + j * n;
        add_scaled(row, k, du[j], n);
        dgate += dot(row, prev + j * n, n);
        for (int64_t i = 0; i < n; ++i) {
            row[i] *= decay;
        }
    }
    a->dg[x1] = decay * dgate;
    a->dbeta[x1] = dbeta;
}

size_t tnn_delta_net_backward_floats(int64_t n, int64_t t_seq) {
    return tnn_recurrence_floats(n * n, t_seq) + (size_t) (n * n + 4 * n);
}

/* One (head, sequence) pair's walk back through time (cpu/recurrence.c). */
struct delta_walk {
    const struct tnn_delta_net_args * a;
    int64_t head, seq;
    float *dm, *work;   /* the state's gradient [n, n]; 4 n scratch */
};

static void delta_step(float * m, int64_t t, void * ctx) {
    const struct delta_walk * w = ctx;
    const struct tnn_delta_net_args * a = w->a;
    const int64_t x = at(a, w->head, t, w->seq), x1 = at1(a, w->head, t, w->seq);
    step_state(m, a->n, a->k + x, a->v + x, a->g[x1], a->beta[x1], w->work);
}

static void delta_back(const float * before, const float * after, int64_t t, void * ctx) {
    const struct delta_walk * w = ctx;
    step_back(w->a, at(w->a, w->head, t, w->seq), at1(w->a, w->head, t, w->seq), before, after, w->dm, w->work);
}

void tnn_delta_net_backward(const struct tnn_delta_net_args * a, int ith, int nth) {
    const int64_t n = a->n;
    float * mem = malloc(tnn_delta_net_backward_floats(n, a->t_seq) * sizeof(float));
    if (mem == NULL) {
        return;
    }
    struct delta_walk w = { .a = a, .dm = mem + tnn_recurrence_floats(n * n, a->t_seq) };
    w.work = w.dm + n * n;
    const struct tnn_recurrence walk = {
        .state_floats = n * n,
        .t_seq = a->t_seq,
        .step = delta_step,
        .back = delta_back,
        .ctx = &w,
    };
    for (int64_t item = ith; item < a->heads * a->n_seqs; item += nth) {
        w.head = item % a->heads;
        w.seq = item / a->heads;
        memset(w.dm, 0, (size_t) (n * n) * sizeof(float));
        tnn_recurrence_backward(&walk, mem);
    }
    free(mem);
}
