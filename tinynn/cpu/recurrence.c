/* Backward through time of a recurrence on a state from zero, for
 * the gated delta rule (delta_net.c) and Mamba-2's scan (ssm_scan.c): the
 * backward of token t needs the state before it and after it, and keeping
 * all T states would take T state sizes. So the states are kept every
 * TNN_RECURRENCE_CHUNK tokens from a first forward pass, and each chunk's
 * are made again from its first when the backward walk reaches it:
 * (T / chunk + chunk + 1) states at a time, and a state of zeros for the
 * tokens that start a sample. */
#include "cpu/kernels.h"

#include <math.h>
#include <string.h>

#define TNN_RECURRENCE_CHUNK 64

static int64_t chunks_of(int64_t t_seq) { return (t_seq + TNN_RECURRENCE_CHUNK - 1) / TNN_RECURRENCE_CHUNK; }

size_t tnn_recurrence_floats(int64_t state_floats, int64_t t_seq) {
    return (size_t) ((chunks_of(t_seq) + TNN_RECURRENCE_CHUNK + 2) * state_floats);
}

void tnn_recurrence_backward(const struct tnn_recurrence * r, float * mem) {
    const int64_t s = r->state_floats, chunks = chunks_of(r->t_seq);
    float * marks = mem;                      /* the state before each chunk */
    float * states = marks + chunks * s;      /* a chunk's: before its first token, after each */
    float * zeros = states + (TNN_RECURRENCE_CHUNK + 1) * s;
    memset(zeros, 0, (size_t) s * sizeof(float));
    memset(states, 0, (size_t) s * sizeof(float));
    for (int64_t t = 0; t < r->t_seq; ++t) {
        if (tnn_starts_sample(r->positions, t)) {
            memset(states, 0, (size_t) s * sizeof(float));
        }
        if (t % TNN_RECURRENCE_CHUNK == 0) {
            memcpy(marks + (t / TNN_RECURRENCE_CHUNK) * s, states, (size_t) s * sizeof(float));
        }
        r->step(states, t, r->ctx);
    }
    for (int64_t c = chunks - 1; c >= 0; --c) {
        const int64_t t0 = c * TNN_RECURRENCE_CHUNK;
        const int64_t t1 = t0 + TNN_RECURRENCE_CHUNK < r->t_seq ? t0 + TNN_RECURRENCE_CHUNK : r->t_seq;
        memcpy(states, marks + c * s, (size_t) s * sizeof(float));
        for (int64_t t = t0; t < t1; ++t) {
            float * next = states + (t - t0 + 1) * s;
            memcpy(next, tnn_starts_sample(r->positions, t) ? zeros : next - s, (size_t) s * sizeof(float));
            r->step(next, t, r->ctx);
        }
        for (int64_t t = t1 - 1; t >= t0; --t) {
            const float * after = states + (t - t0 + 1) * s;
            if (tnn_starts_sample(r->positions, t)) {
                /* from zeros; nothing before the sample's start gets a gradient */
                r->back(zeros, after, t, r->ctx);
                memset(r->grad, 0, (size_t) s * sizeof(float));
            } else {
                r->back(after - s, after, t, r->ctx);
            }
        }
    }
}

void tnn_recurrence_poison(float * values, float * per_head, int64_t width, int64_t heads, int64_t t_seq,
                           int64_t n_seqs, int ith, int nth) {
    for (int64_t item = ith; item < heads * n_seqs; item += nth) {
        const int64_t head = item % heads, seq = item / heads;
        for (int64_t t = 0; t < t_seq; ++t) {
            const int64_t at = head + heads * (t + t_seq * seq);
            for (int64_t i = 0; values != NULL && i < width; ++i) {
                values[width * at + i] = NAN;
            }
            if (per_head != NULL) {
                per_head[at] = NAN;
            }
        }
    }
}
