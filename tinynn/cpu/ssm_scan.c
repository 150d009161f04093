/* Mamba-2's selective scan (ggml's GGML_OP_SSM_SCAN with a scalar decay
 * per head, as Granite 4's, Nemotron-H's and Falcon-H1's layers use it),
 * forward and backward, for one custom node each way
 * (models/primitives.c: tnn_ssm_scan).
 *
 * Per head h and sequence, the state S [head_dim x state] starts at zero
 * and each token t does
 *   dts = softplus(dt_t);  decay = exp(dts A_h);
 *   S = decay S + (dts x_t) B_t^T;  y_t = S C_t,
 * B_t and C_t [state] those of the head's group (heads h_0 .. h_0 + H/G - 1
 * share group h / (H/G), as ggml's repeat_interleave). Each of S's rows
 * runs along the state, contiguous, as ggml's CPU op holds it.
 *
 * The backward goes through time backwards with dS, the loss's gradient
 * with respect to S after the token:
 *   dS += dy_t C_t^T;  dC_t += S^T dy_t;  du = dS B_t (u = dts x_t);
 *   dB_t += dS^T u;  d decay = <dS, S_before>;  dS = decay dS.
 * It needs each token's state before and after, kept every 64 tokens and
 * made again per chunk (cpu/recurrence.c): (T / 64 + 67) head_dim x state
 * floats a thread, not T of them. B's and C's gradients are a sum over the
 * group's heads: each head writes its own share (the node's caller sums
 * them), so that threads never add into the same floats. */
#include "cpu/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ggml's softplus (ggml-impl.h), and its derivative */
static float softplus(float x) { return x > 20.0f ? x : logf(1.0f + expf(x)); }

static float softplus_slope(float x) { return x > 20.0f ? 1.0f : 1.0f / (1.0f + expf(-x)); }

/* One (head, sequence) pair's view of the arrays at token t. */
struct scan_token {
    const float *x, *b, *c;   /* [head_dim], [state], [state] */
    float dt, decay, dts;
    int64_t at_x, at_dt, at_bc;   /* offsets of x, dt, and B/C at t */
};

static struct scan_token token_at(const struct tnn_ssm_scan_args * a, int64_t head, int64_t seq, int64_t t) {
    const int64_t group = head / (a->heads / a->groups);
    const int64_t step = t + a->t_seq * seq;
    struct scan_token k = {
        .at_x = a->head_dim * (head + a->heads * step),
        .at_dt = head + a->heads * step,
        .at_bc = a->state * (group + a->groups * step),
    };
    k.x = a->x + k.at_x;
    k.b = a->b + k.at_bc;
    k.c = a->c + k.at_bc;
    k.dt = a->dt[k.at_dt];
    k.dts = softplus(k.dt);
    k.decay = expf(k.dts * a->a[head]);
    return k;
}

/* S = decay S + (dts x) B^T, S [head_dim rows of state] */
static void step_state(float * s, const struct scan_token * k, int64_t head_dim, int64_t state) {
    for (int64_t i = 0; i < head_dim; ++i) {
        float * row = s + i * state;
        const float u = k->x[i] * k->dts;
        for (int64_t n = 0; n < state; ++n) {
            row[n] = row[n] * k->decay + u * k->b[n];
        }
    }
}

static float dot(const float * a, const float * b, int64_t n) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
        sum += a[i] * b[i];
    }
    return sum;
}

void tnn_ssm_scan_forward(const struct tnn_ssm_scan_args * a, int ith, int nth) {
    const int64_t hd = a->head_dim, ns = a->state;
    float * s = malloc((size_t) (hd * ns) * sizeof(float));
    if (s == NULL) {
        tnn_recurrence_poison(a->y, NULL, a->head_dim, a->heads, a->t_seq, a->n_seqs, ith, nth);
        return;
    }
    for (int64_t item = ith; item < a->heads * a->n_seqs; item += nth) {
        const int64_t head = item % a->heads, seq = item / a->heads;
        memset(s, 0, (size_t) (hd * ns) * sizeof(float));
        for (int64_t t = 0; t < a->t_seq; ++t) {
            const struct scan_token k = token_at(a, head, seq, t);
            if (tnn_starts_sample(tnn_sequence_positions(a->positions, a->t_seq, seq), t)) {
                memset(s, 0, (size_t) (hd * ns) * sizeof(float));
            }
            step_state(s, &k, hd, ns);
            for (int64_t i = 0; i < hd; ++i) {
                a->y[k.at_x + i] = dot(s + i * ns, k.c, ns);
            }
        }
    }
    free(s);
}

/* The backward of one token: prev the state before it, cur after it, ds
 * the state's gradient after it in, before it out; du [head_dim] scratch.
 * Returns d loss / d decay. */
static float step_back(const struct tnn_ssm_scan_args * a, const struct scan_token * k, int64_t head,
                       const float * prev, const float * cur, float * ds, float * du) {
    const int64_t hd = a->head_dim, ns = a->state, share = a->heads / a->groups, r = head % share;
    const float * dy = a->dy + k->at_x;
    /* this head's shares of dB_t and dC_t, at (r, n) of [share, state] */
    float * db = a->db + share * k->at_bc;
    float * dc = a->dc + share * k->at_bc;
    for (int64_t n = 0; n < ns; ++n) {
        db[r + share * n] = 0.0f;
        dc[r + share * n] = 0.0f;
    }
    float ddecay = 0.0f;
    for (int64_t i = 0; i < hd; ++i) {
        float * row = ds + i * ns;
        const float * now = cur + i * ns;
        const float u = k->x[i] * k->dts;
        for (int64_t n = 0; n < ns; ++n) {
            dc[r + share * n] += dy[i] * now[n];
            row[n] += dy[i] * k->c[n];
            db[r + share * n] += row[n] * u;
        }
        du[i] = dot(row, k->b, ns);
        ddecay += dot(row, prev + i * ns, ns);
        for (int64_t n = 0; n < ns; ++n) {
            row[n] *= k->decay;
        }
    }
    float ddts = ddecay * k->decay * a->a[head];
    for (int64_t i = 0; i < hd; ++i) {
        a->dx[k->at_x + i] = du[i] * k->dts;
        ddts += du[i] * k->x[i];
    }
    a->ddt[k->at_dt] = ddts * softplus_slope(k->dt);
    return ddecay * k->decay * k->dts;   /* d loss / d A_h, this token's share */
}

size_t tnn_ssm_scan_backward_floats(int64_t head_dim, int64_t state, int64_t t_seq) {
    return tnn_recurrence_floats(head_dim * state, t_seq) + (size_t) (head_dim * state + head_dim);
}

/* One (head, sequence) pair's walk back through time (cpu/recurrence.c). */
struct scan_walk {
    const struct tnn_ssm_scan_args * a;
    int64_t head, seq;
    float *ds, *du;   /* the state's gradient [head_dim, state]; head_dim scratch */
    float da;         /* d loss / d A_h, summed over the walk */
};

static void scan_step(float * s, int64_t t, void * ctx) {
    const struct scan_walk * w = ctx;
    const struct scan_token k = token_at(w->a, w->head, w->seq, t);
    step_state(s, &k, w->a->head_dim, w->a->state);
}

static void scan_back(const float * before, const float * after, int64_t t, void * ctx) {
    struct scan_walk * w = ctx;
    const struct scan_token k = token_at(w->a, w->head, w->seq, t);
    w->da += step_back(w->a, &k, w->head, before, after, w->ds, w->du);
}

void tnn_ssm_scan_backward(const struct tnn_ssm_scan_args * a, int ith, int nth) {
    const int64_t s2 = a->head_dim * a->state;
    float * mem = malloc(tnn_ssm_scan_backward_floats(a->head_dim, a->state, a->t_seq) * sizeof(float));
    if (mem == NULL) {
        tnn_recurrence_poison(a->dx, a->ddt, a->head_dim, a->heads, a->t_seq, a->n_seqs, ith,
                              nth);   /* the weights' next values, then the loss, say so */
        return;
    }
    struct scan_walk w = { .a = a, .ds = mem + tnn_recurrence_floats(s2, a->t_seq) };
    w.du = w.ds + s2;
    for (int64_t item = ith; item < a->heads * a->n_seqs; item += nth) {
        w.head = item % a->heads;
        w.seq = item / a->heads;
        w.da = 0.0f;
        const struct tnn_recurrence walk = {
            .state_floats = s2,
            .t_seq = a->t_seq,
            .step = scan_step,
            .back = scan_back,
            .ctx = &w,
            .positions = tnn_sequence_positions(a->positions, a->t_seq, w.seq),
            .grad = w.ds,
        };
        memset(w.ds, 0, (size_t) s2 * sizeof(float));
        tnn_recurrence_backward(&walk, mem);
        a->da[w.head + a->heads * w.seq] = w.da;
    }
    free(mem);
}
