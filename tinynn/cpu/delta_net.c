/* The gated delta rule (Qwen 3.5's linear attention, ggml's
 * GGML_OP_GATED_DELTA_NET with a scalar gate), forward and backward, for
 * one custom node each way (models/primitives.c: tnn_gated_delta_net).
 *
 * Per head and sequence, the state S [S_k x S_v] starts at zero and each
 * token t does
 *   A = exp(g_t) S;  u = A^T k_t;  delta = beta_t (v_t - u);
 *   S = A + k_t delta^T;  o_t = S^T q_t / sqrt(S_v).
 * The state is held transposed, M[j][i] = S[i][j]. Row j of M is then a
 * recurrence of its own: its update reads only itself, k, q and v's
 * element j. So the rows are taken 16 at a time (8 KB at S_k = 128, kept
 * in L1) through every token, and a token's step does all of a row's work
 * while the row is at hand: u_j = exp(g) (b . k) for the row b before the
 * token, the row after it exp(g) b + k delta_j, its product with q. The
 * backward's step the same, its sums over rows (dq, dk, the gate's and
 * beta's) added up row by row.
 *
 * The "recurrent" kernel (kernels.h) is a token's step each way on a block
 * of rows. Its variants give the same bits: this file's portable C is the
 * reference order (every sum over a row in 16 lanes, i mod 16, added up as
 * the tree of lanes_sum, then the tail past the last whole 16; no
 * multiply-add contracted: CMakeLists gives these files -ffp-contract=off),
 * and delta_net_avx2.c and delta_net_avx512.c hold the same operations in
 * registers (delta_net_rows.h).
 *
 * The backward goes through time backwards (cpu/recurrence.c: each
 * chunk of 64 tokens' states made again from the one kept before it):
 * (T / 64 + 67) x 16 rows of state a thread, not T states. */
#include "cpu/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LANES 16

/* x . y in the reference order (module comment). */
static float dot(const float * x, const float * y, int64_t n) {
    const int64_t whole = n - n % LANES;
    float lane[LANES] = { 0.0f }, tail = 0.0f;
    for (int64_t i = 0; i < whole; i += LANES) {
        for (int l = 0; l < LANES; ++l) {
            lane[l] += x[i + l] * y[i + l];
        }
    }
    for (int64_t i = whole; i < n; ++i) {
        tail += x[i] * y[i];
    }
    float half[LANES / 2], quarter[LANES / 4];
    for (int l = 0; l < LANES / 2; ++l) {
        half[l] = lane[l] + lane[l + LANES / 2];
    }
    for (int l = 0; l < LANES / 4; ++l) {
        quarter[l] = half[l] + half[l + LANES / 4];
    }
    return ((quarter[0] + quarter[2]) + (quarter[1] + quarter[3])) + tail;
}

/* A token's step of rows rows of M [rows, n], in place; v and out are
 * those rows' elements; where out is not NULL, out_j = q_scale (S^T q)_j. */
static void step_portable(float * m, int64_t rows, int64_t n, const float * k, const float * v, float decay,
                          float beta, const float * q, float q_scale, float * out) {
    for (int64_t j = 0; j < rows; ++j) {
        float * b = m + j * n;
        const float delta = (v[j] - decay * dot(b, k, n)) * beta;
        for (int64_t i = 0; i < n; ++i) {
            b[i] = decay * b[i] + k[i] * delta;
        }
        if (out != NULL) {
            out[j] = dot(b, q, n) * q_scale;
        }
    }
}

/* The backward of a token's step on rows rows of M, from their state
 * before it, prev: dm, their gradient after the token, in; before it, out.
 * v, dout and dv are those rows' elements: dv written; their shares of the
 * token's dq, dk [n], and the gate's and beta's gradients added, row by
 * row. */
static void back_portable(const float * prev, float * dm, int64_t rows, int64_t n, const float * q,
                          const float * k, const float * v, const float * dout, float decay, float beta,
                          float scale, float * dq, float * dk, float * dv, float * dgate, float * dbeta) {
    float gate_sum = 0.0f, beta_sum = 0.0f;
    for (int64_t j = 0; j < rows; ++j) {
        const float * p = prev + j * n;
        float * d = dm + j * n;
        /* the forward's u and delta, as step_portable made them */
        const float u = decay * dot(p, k, n), delta = (v[j] - u) * beta;
        /* o = scale S^T q: dq += c (row j after the token, made again),
         * dm_j += c q */
        const float c = scale * dout[j];
        for (int64_t i = 0; i < n; ++i) {
            dq[i] += c * (decay * p[i] + k[i] * delta);
            d[i] += c * q[i];
        }
        /* S = A + k delta^T, delta = beta (v - u), u = A^T k, A = exp(g) S_prev */
        const float ddelta = dot(d, k, n), du = -beta * ddelta, decay_du = decay * du;
        dv[j] = beta * ddelta;
        beta_sum += ddelta * (v[j] - u);
        /* dk += delta dm_j + exp(g) du p; dm_j += du k; the gate's share
         * dm_j . p; then dm_j, through A, times exp(g) */
        for (int64_t i = 0; i < n; ++i) {
            dk[i] += delta * d[i] + decay_du * p[i];
            d[i] += du * k[i];
        }
        gate_sum += dot(d, p, n);
        for (int64_t i = 0; i < n; ++i) {
            d[i] *= decay;
        }
    }
    *dgate += decay * gate_sum;
    *dbeta += beta_sum;
}

const struct tnn_recurrent_kernels tnn_recurrent_portable = { step_portable, back_portable };

/* ---- the nodes' entry points ---------------------------------------------- */

/* Element (i, head, t, seq) of a [S, H, T, B] array, and (head, t, seq) of [1, H, T, B]. */
static inline int64_t at(const struct tnn_delta_net_args * a, int64_t head, int64_t t, int64_t seq) {
    return a->n * (head + a->heads * (t + a->t_seq * seq));
}

static inline int64_t at1(const struct tnn_delta_net_args * a, int64_t head, int64_t t, int64_t seq) {
    return head + a->heads * (t + a->t_seq * seq);
}

static const struct tnn_recurrent_kernels * rows_of(const struct tnn_delta_net_args * a) {
    return a->rows != NULL ? a->rows : &tnn_recurrent_portable;
}

/* Rows of M at a time (module comment): a block's state, 16 x 128 floats,
 * stays in L1 through all the tokens. */
#define ROW_BLOCK 16

static int64_t block_rows(int64_t n, int64_t j0) { return n - j0 < ROW_BLOCK ? n - j0 : ROW_BLOCK; }

void tnn_delta_net_forward(const struct tnn_delta_net_args * a, int ith, int nth) {
    const int64_t n = a->n;
    const float q_scale = 1.0f / sqrtf((float) n);
    const struct tnn_recurrent_kernels * kernels = rows_of(a);
    float * m = malloc((size_t) (ROW_BLOCK * n) * sizeof(float));
    if (m == NULL) {
        tnn_recurrence_poison(a->out, NULL, a->n, a->heads, a->t_seq, a->n_seqs, ith, nth);
        return;
    }
    for (int64_t item = ith; item < a->heads * a->n_seqs; item += nth) {
        const int64_t head = item % a->heads, seq = item / a->heads;
        for (int64_t j0 = 0; j0 < n; j0 += ROW_BLOCK) {
            const int64_t rows = block_rows(n, j0);
            memset(m, 0, (size_t) (rows * n) * sizeof(float));
            for (int64_t t = 0; t < a->t_seq; ++t) {
                const int64_t x = at(a, head, t, seq), x1 = at1(a, head, t, seq);
                if (tnn_starts_sample(tnn_sequence_positions(a->positions, a->t_seq, seq), t)) {
                    memset(m, 0, (size_t) (rows * n) * sizeof(float));
                }
                kernels->delta_step(m, rows, n, a->k + x, a->v + x + j0, expf(a->g[x1]), a->beta[x1], a->q + x,
                                    q_scale, a->out + x + j0);
            }
        }
    }
    free(m);
}

size_t tnn_delta_net_backward_floats(int64_t n, int64_t t_seq) {
    return tnn_recurrence_floats(ROW_BLOCK * n, t_seq) + (size_t) (ROW_BLOCK * n);
}

/* One (head, sequence, row block)'s walk back through time (cpu/recurrence.c). */
struct delta_walk {
    const struct tnn_delta_net_args * a;
    const struct tnn_recurrent_kernels * kernels;
    int64_t head, seq, j0, rows;
    float * dm;   /* the block's state gradient [rows, n] */
};

static void delta_step(float * m, int64_t t, void * ctx) {
    const struct delta_walk * w = ctx;
    const struct tnn_delta_net_args * a = w->a;
    const int64_t x = at(a, w->head, t, w->seq), x1 = at1(a, w->head, t, w->seq);
    w->kernels->delta_step(m, w->rows, a->n, a->k + x, a->v + x + w->j0, expf(a->g[x1]), a->beta[x1], a->q + x,
                           0.0f, NULL);
}

static void delta_back(const float * before, const float * after, int64_t t, void * ctx) {
    (void) after;   /* made again row by row from before */
    const struct delta_walk * w = ctx;
    const struct tnn_delta_net_args * a = w->a;
    const int64_t x = at(a, w->head, t, w->seq), x1 = at1(a, w->head, t, w->seq);
    w->kernels->delta_back(before, w->dm, w->rows, a->n, a->q + x, a->k + x, a->v + x + w->j0, a->dout + x + w->j0,
                           expf(a->g[x1]), a->beta[x1], 1.0f / sqrtf((float) a->n), a->dq + x, a->dk + x,
                           a->dv + x + w->j0, a->dg + x1, a->dbeta + x1);
}

void tnn_delta_net_backward(const struct tnn_delta_net_args * a, int ith, int nth) {
    const int64_t n = a->n;
    float * mem = malloc(tnn_delta_net_backward_floats(n, a->t_seq) * sizeof(float));
    if (mem == NULL) {
        tnn_recurrence_poison(a->dq, a->dg, a->n, a->heads, a->t_seq, a->n_seqs, ith, nth);
        tnn_recurrence_poison(a->dk, a->dbeta, a->n, a->heads, a->t_seq, a->n_seqs, ith, nth);
        tnn_recurrence_poison(a->dv, NULL, a->n, a->heads, a->t_seq, a->n_seqs, ith, nth);
        return;
    }
    struct delta_walk w = { .a = a,
                            .kernels = rows_of(a),
                            .dm = mem + tnn_recurrence_floats(ROW_BLOCK * n, a->t_seq) };
    for (int64_t item = ith; item < a->heads * a->n_seqs; item += nth) {
        w.head = item % a->heads;
        w.seq = item / a->heads;
        /* the sums over rows start from zero; each row block adds its share */
        for (int64_t t = 0; t < a->t_seq; ++t) {
            const int64_t x = at(a, w.head, t, w.seq), x1 = at1(a, w.head, t, w.seq);
            memset(a->dq + x, 0, (size_t) n * sizeof(float));
            memset(a->dk + x, 0, (size_t) n * sizeof(float));
            a->dg[x1] = 0.0f;
            a->dbeta[x1] = 0.0f;
        }
        for (w.j0 = 0; w.j0 < n; w.j0 += ROW_BLOCK) {
            w.rows = block_rows(n, w.j0);
            const struct tnn_recurrence walk = {
                .state_floats = w.rows * n,
                .t_seq = a->t_seq,
                .step = delta_step,
                .back = delta_back,
                .ctx = &w,
                .positions = tnn_sequence_positions(a->positions, a->t_seq, w.seq),
                .grad = w.dm,
            };
            memset(w.dm, 0, (size_t) (w.rows * n) * sizeof(float));
            tnn_recurrence_backward(&walk, mem);
        }
    }
    free(mem);
}
