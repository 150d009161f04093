/* The gated delta rule's "recurrent" kernel on registers: the body of
 * delta_net_avx2.c and delta_net_avx512.c, each of which defines, before
 * including this, for 16 floats in its registers:
 *   ROWS_TARGET       the function attribute of its instruction set
 *   V                 the type; v_zero(), v_set1(x), v_load(p), v_store(p, x),
 *                     v_add(a, b), v_mul(a, b)
 *   v_sum(x, tail)    the lanes' sum in delta_net.c's tree order, plus tail
 * and gets step_rows and back_rows: delta_net.c's step_portable and
 * back_portable, the same operations in the same order (so the same bits),
 * four rows at a time so that their sums run side by side. */
#ifndef ROWS_TARGET
#error "define ROWS_TARGET, V and its operations before including delta_net_rows.h"
#endif

#define ROWS_LANES 16
#define ROWS_BLOCK 4
#define ROWS_INLINE ROWS_TARGET static inline __attribute__((always_inline))

/* u = exp(g) (b . k) and delta = beta (v - u) of rows j0 .. j0 + rows - 1
 * (rows ROWS_BLOCK or 1) of m, the state before the token. */
ROWS_INLINE void u_and_delta(const float * restrict m, int64_t n, int64_t j0, int rows, const float * restrict k,
                             const float * restrict v, float decay, float beta, float * u, float * delta) {
    const int64_t whole = n - n % ROWS_LANES;
    V sum[ROWS_BLOCK];
    float tail[ROWS_BLOCK];
    for (int r = 0; r < rows; ++r) {
        sum[r] = v_zero();
        tail[r] = 0.0f;
    }
    for (int64_t i = 0; i < whole; i += ROWS_LANES) {
        const V ki = v_load(k + i);
        for (int r = 0; r < rows; ++r) {
            sum[r] = v_add(sum[r], v_mul(v_load(m + (j0 + r) * n + i), ki));
        }
    }
    for (int r = 0; r < rows; ++r) {
        const float * b = m + (j0 + r) * n;
        for (int64_t i = whole; i < n; ++i) {
            tail[r] += b[i] * k[i];
        }
        u[r] = decay * v_sum(sum[r], tail[r]);
        delta[r] = (v[j0 + r] - u[r]) * beta;
    }
}

/* Rows j0 .. j0 + rows - 1 (rows ROWS_BLOCK or 1) of step_portable. */
ROWS_INLINE void step_block(float * restrict m, int64_t n, int64_t j0, int rows, const float * restrict k,
                            const float * restrict v, float decay, float beta, const float * restrict q,
                            float q_scale, float * restrict out) {
    const int64_t whole = n - n % ROWS_LANES;
    const V vdecay = v_set1(decay);
    V sum[ROWS_BLOCK], vdelta[ROWS_BLOCK];
    float tail[ROWS_BLOCK], u[ROWS_BLOCK], delta[ROWS_BLOCK];
    u_and_delta(m, n, j0, rows, k, v, decay, beta, u, delta);
    for (int r = 0; r < rows; ++r) {
        vdelta[r] = v_set1(delta[r]);
        sum[r] = v_zero();
        tail[r] = 0.0f;
    }
    for (int64_t i = 0; i < whole; i += ROWS_LANES) {
        const V ki = v_load(k + i), qi = v_load(q + i);
        for (int r = 0; r < rows; ++r) {
            float * b = m + (j0 + r) * n + i;
            const V a = v_add(v_mul(vdecay, v_load(b)), v_mul(ki, vdelta[r]));
            v_store(b, a);
            sum[r] = v_add(sum[r], v_mul(a, qi));
        }
    }
    for (int r = 0; r < rows; ++r) {
        float * b = m + (j0 + r) * n;
        for (int64_t i = whole; i < n; ++i) {
            b[i] = decay * b[i] + k[i] * delta[r];
            tail[r] += b[i] * q[i];
        }
        if (out != NULL) {
            out[j0 + r] = v_sum(sum[r], tail[r]) * q_scale;
        }
    }
}

ROWS_TARGET static void step_rows(float * m, int64_t rows, int64_t n, const float * k, const float * v,
                                  float decay, float beta, const float * q, float q_scale, float * out) {
    int64_t j = 0;
    for (; j + ROWS_BLOCK <= rows; j += ROWS_BLOCK) {
        step_block(m, n, j, ROWS_BLOCK, k, v, decay, beta, q, q_scale, out);
    }
    for (; j < rows; ++j) {
        step_block(m, n, j, 1, k, v, decay, beta, q, q_scale, out);
    }
}

/* Rows j0 .. j0 + rows - 1 (rows ROWS_BLOCK or 1) of back_portable: their
 * shares added to dq, dk, *gate_sum and *beta_sum in row order. */
ROWS_INLINE void back_block(const float * restrict prev, float * restrict dm, int64_t n, int64_t j0, int rows,
                            const float * restrict q, const float * restrict k, const float * restrict v,
                            const float * restrict dout, float decay, float beta, float scale, float * restrict dq,
                            float * restrict dk, float * restrict dv, float * gate_sum, float * beta_sum) {
    const int64_t whole = n - n % ROWS_LANES;
    const V vdecay = v_set1(decay);
    V sum[ROWS_BLOCK], vdelta[ROWS_BLOCK], vc[ROWS_BLOCK], vdu[ROWS_BLOCK], vdecay_du[ROWS_BLOCK];
    float tail[ROWS_BLOCK], u[ROWS_BLOCK], delta[ROWS_BLOCK], c[ROWS_BLOCK], du[ROWS_BLOCK], decay_du[ROWS_BLOCK];
    u_and_delta(prev, n, j0, rows, k, v, decay, beta, u, delta);   /* as the step made them */
    for (int r = 0; r < rows; ++r) {
        c[r] = scale * dout[j0 + r];
        vdelta[r] = v_set1(delta[r]);
        vc[r] = v_set1(c[r]);
        sum[r] = v_zero();
        tail[r] = 0.0f;
    }
    /* dq += c (the row after the token), dm_j += c q; ddelta = dm_j . k */
    for (int64_t i = 0; i < whole; i += ROWS_LANES) {
        const V ki = v_load(k + i), qi = v_load(q + i);
        V dqi = v_load(dq + i);
        for (int r = 0; r < rows; ++r) {
            const V p = v_load(prev + (j0 + r) * n + i);
            const V d = v_add(v_load(dm + (j0 + r) * n + i), v_mul(vc[r], qi));
            dqi = v_add(dqi, v_mul(vc[r], v_add(v_mul(vdecay, p), v_mul(ki, vdelta[r]))));
            v_store(dm + (j0 + r) * n + i, d);
            sum[r] = v_add(sum[r], v_mul(d, ki));
        }
        v_store(dq + i, dqi);
    }
    for (int r = 0; r < rows; ++r) {
        const float * p = prev + (j0 + r) * n;
        float * d = dm + (j0 + r) * n;
        for (int64_t i = whole; i < n; ++i) {
            dq[i] += c[r] * (decay * p[i] + k[i] * delta[r]);
            d[i] += c[r] * q[i];
            tail[r] += d[i] * k[i];
        }
        const float ddelta = v_sum(sum[r], tail[r]);
        du[r] = -beta * ddelta;
        decay_du[r] = decay * du[r];
        vdu[r] = v_set1(du[r]);
        vdecay_du[r] = v_set1(decay_du[r]);
        dv[j0 + r] = beta * ddelta;
        *beta_sum += ddelta * (v[j0 + r] - u[r]);
        sum[r] = v_zero();
        tail[r] = 0.0f;
    }
    /* dk += delta dm_j + exp(g) du p; dm_j += du k; the gate's share
     * dm_j . p; then dm_j times exp(g) */
    for (int64_t i = 0; i < whole; i += ROWS_LANES) {
        const V ki = v_load(k + i);
        V dki = v_load(dk + i);
        for (int r = 0; r < rows; ++r) {
            const V p = v_load(prev + (j0 + r) * n + i);
            V d = v_load(dm + (j0 + r) * n + i);
            dki = v_add(dki, v_add(v_mul(vdelta[r], d), v_mul(vdecay_du[r], p)));
            d = v_add(d, v_mul(vdu[r], ki));
            sum[r] = v_add(sum[r], v_mul(d, p));
            v_store(dm + (j0 + r) * n + i, v_mul(d, vdecay));
        }
        v_store(dk + i, dki);
    }
    for (int r = 0; r < rows; ++r) {
        const float * p = prev + (j0 + r) * n;
        float * d = dm + (j0 + r) * n;
        for (int64_t i = whole; i < n; ++i) {
            dk[i] += delta[r] * d[i] + decay_du[r] * p[i];
            d[i] += du[r] * k[i];
            tail[r] += d[i] * p[i];
            d[i] *= decay;
        }
        *gate_sum += v_sum(sum[r], tail[r]);
    }
}

ROWS_TARGET static void back_rows(const float * prev, float * dm, int64_t rows, int64_t n, const float * q,
                                  const float * k, const float * v, const float * dout, float decay, float beta,
                                  float scale, float * dq, float * dk, float * dv, float * dgate, float * dbeta) {
    float gate_sum = 0.0f, beta_sum = 0.0f;
    int64_t j = 0;
    for (; j + ROWS_BLOCK <= rows; j += ROWS_BLOCK) {
        back_block(prev, dm, n, j, ROWS_BLOCK, q, k, v, dout, decay, beta, scale, dq, dk, dv, &gate_sum,
                   &beta_sum);
    }
    for (; j < rows; ++j) {
        back_block(prev, dm, n, j, 1, q, k, v, dout, decay, beta, scale, dq, dk, dv, &gate_sum, &beta_sum);
    }
    *dgate += decay * gate_sum;
    *dbeta += beta_sum;
}
