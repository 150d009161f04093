#version 450

// toy patch 0018: the gated delta rule as a training graph takes it
// (ggml_gated_delta_net_train): every sequence from a zero state, forward or
// backward. One workgroup a (head, sequence). Each column c of the state
// S [n, n] (one value channel) is a recurrence of its own, carried by one
// invocation: per token, with e = exp(g),
//   kv = e S_c . k;  delta = beta (v_c - kv);  S_c = e S_c + delta k;
//   o_c = S_c . q / sqrt(n).
// The backward walks the chunks last to first: the chunk's states made again
// from the one kept before it (phase 1, a column an invocation), the column's
// gradient carried back through the chunk (phase 2, the same), then dq and dk,
// sums over columns, a row an invocation, and dg, dbeta a token an invocation
// (phase 3). No atomics: every float is written by one invocation, in one order.
// The head width n is a specialization constant so that every loop over it
// is unrolled: lavapipe (llvmpipe) ends an invocation's loops after 65535
// iterations in all, which leaves the loops over tokens (about 4 T).

#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(constant_id = 0) const uint n = 128;

layout(push_constant) uniform Parameters {
    uint heads;
    uint t_seq;
    uint backward;
    uint chunk;
    uint scratch_at;         // floats into dst
    uint scratch_per_group;  // floats a workgroup
    uint groups;             // the scan's
};

layout(binding = 0) readonly buffer QBuf    { float data_q[];    };
layout(binding = 1) readonly buffer KBuf    { float data_k[];    };
layout(binding = 2) readonly buffer VBuf    { float data_v[];    };
layout(binding = 3) readonly buffer GBuf    { float data_g[];    };
layout(binding = 4) readonly buffer BetaBuf { float data_beta[]; };
layout(binding = 5) readonly buffer DOBuf   { float data_do[];   };
layout(binding = 6)          buffer DstBuf  { float data_dst[];  };

uint head;
uint seq;

// where token t's vector of this head starts in q, k, v (and dq, dk, dv);
// its gate's index in g, beta (and dg, dbeta)
uint vec_at(uint t) { return ((seq * t_seq + t) * heads + head) * n; }
uint gate_at(uint t) { return (seq * t_seq + t) * heads + head; }

void sync() {
    memoryBarrierBuffer();
    barrier();
}

void main() {
    head = gl_WorkGroupID.x;
    seq = gl_WorkGroupID.y;
    const uint c = gl_LocalInvocationID.x;   // the column this invocation carries
    const bool carries = c < n;
    const float scale = 1.0 / sqrt(float(n));
    float s[n];

    if (backward == 0u) {
        if (!carries) {
            return;
        }
        [[unroll]] for (uint i = 0; i < n; i++) {
            s[i] = 0.0;
        }
        for (uint t = 0; t < t_seq; t++) {
            const uint at = vec_at(t);
            const float e = exp(data_g[gate_at(t)]);
            float kv = 0.0;
            [[unroll]] for (uint i = 0; i < n; i++) {
                kv += s[i] * data_k[at + i];
            }
            const float delta = data_beta[gate_at(t)] * (data_v[at + c] - e * kv);
            float o = 0.0;
            [[unroll]] for (uint i = 0; i < n; i++) {
                s[i] = e * s[i] + delta * data_k[at + i];
                o += s[i] * data_q[at + i];
            }
            data_dst[at + c] = o * scale;
        }
        return;
    }

    // the gradients' places in dst, then this workgroup's scratch
    const uint values = n * heads * t_seq * (gl_NumWorkGroups.y);
    const uint gates = heads * t_seq * gl_NumWorkGroups.y;
    const uint dq_at = 0, dk_at = values, dv_at = 2 * values, dg_at = 3 * values, dbeta_at = 3 * values + gates;
    const uint chunks = (t_seq + chunk - 1) / chunk;
    const uint nn = n * n;
    const uint kept_at = scratch_at + (seq * heads + head) * scratch_per_group; // a state a chunk
    const uint states_at = kept_at + chunks * nn;      // the chunk's states, chunk + 1
    const uint grads_at = states_at + (chunk + 1) * nn; // each token's gradient of its state
    const uint deltas_at = grads_at + chunk * nn;      // [chunk][n] each: delta, its gradient,
    const uint ddeltas_at = deltas_at + chunk * n;     // dbeta's and dg's terms
    const uint dbetas_at = ddeltas_at + chunk * n;
    const uint dgs_at = dbetas_at + chunk * n;

    // the forward, keeping the state before each chunk
    if (carries) {
        [[unroll]] for (uint i = 0; i < n; i++) {
            s[i] = 0.0;
        }
        for (uint t = 0; t < t_seq; t++) {
            if (t % chunk == 0u) {
                const uint to = kept_at + (t / chunk) * nn + c * n;
                [[unroll]] for (uint i = 0; i < n; i++) {
                    data_dst[to + i] = s[i];
                }
            }
            const uint at = vec_at(t);
            const float e = exp(data_g[gate_at(t)]);
            float kv = 0.0;
            [[unroll]] for (uint i = 0; i < n; i++) {
                kv += s[i] * data_k[at + i];
            }
            const float delta = data_beta[gate_at(t)] * (data_v[at + c] - e * kv);
            [[unroll]] for (uint i = 0; i < n; i++) {
                s[i] = e * s[i] + delta * data_k[at + i];
            }
        }
    }
    float d[n];   // the gradient of column c of the state, carried back
    [[unroll]] for (uint i = 0; i < n; i++) {
        d[i] = 0.0;
    }
    sync();

    for (uint j = chunks; j-- > 0u;) {
        const uint t0 = j * chunk;
        const uint len = min(chunk, t_seq - t0);
        // phase 1: the chunk's states, states[0] the one before it
        if (carries) {
            const uint from = kept_at + j * nn + c * n;
            [[unroll]] for (uint i = 0; i < n; i++) {
                s[i] = data_dst[from + i];
                data_dst[states_at + c * n + i] = s[i];
            }
            for (uint u = 0; u < len; u++) {
                const uint at = vec_at(t0 + u);
                const float e = exp(data_g[gate_at(t0 + u)]);
                float kv = 0.0;
                [[unroll]] for (uint i = 0; i < n; i++) {
                    kv += s[i] * data_k[at + i];
                }
                const float delta = data_beta[gate_at(t0 + u)] * (data_v[at + c] - e * kv);
                const uint to = states_at + (u + 1) * nn + c * n;
                [[unroll]] for (uint i = 0; i < n; i++) {
                    s[i] = e * s[i] + delta * data_k[at + i];
                    data_dst[to + i] = s[i];
                }
            }
        }
        sync();
        // phase 2: back through the chunk, column c
        if (carries) {
            for (uint u = len; u-- > 0u;) {
                const uint t = t0 + u, at = vec_at(t);
                const float e = exp(data_g[gate_at(t)]), beta = data_beta[gate_at(t)];
                const float dout = data_do[at + c] * scale;
                const uint before = states_at + u * nn + c * n;
                float kv = 0.0, ddelta = 0.0;
                [[unroll]] for (uint i = 0; i < n; i++) {
                    d[i] += dout * data_q[at + i];
                    data_dst[grads_at + u * nn + c * n + i] = d[i];
                    kv += data_dst[before + i] * data_k[at + i];
                    ddelta += d[i] * data_k[at + i];
                }
                kv *= e;
                const float delta = beta * (data_v[at + c] - kv);
                data_dst[dv_at + at + c] = beta * ddelta;
                data_dst[deltas_at + u * n + c] = delta;
                data_dst[ddeltas_at + u * n + c] = ddelta;
                data_dst[dbetas_at + u * n + c] = ddelta * (data_v[at + c] - kv);
                float dg = 0.0;
                [[unroll]] for (uint i = 0; i < n; i++) {
                    d[i] -= beta * ddelta * data_k[at + i];   // the gradient of e S_{t-1}
                    dg += d[i] * data_dst[before + i];
                }
                data_dst[dgs_at + u * n + c] = e * dg;
                [[unroll]] for (uint i = 0; i < n; i++) {
                    d[i] *= e;
                }
            }
        }
        sync();
        // phase 3: sums over the columns, row r of dq and dk a token at a time
        const uint r = gl_LocalInvocationID.x;
        if (r < n) {
            for (uint u = 0; u < len; u++) {
                const uint t = t0 + u, at = vec_at(t);
                const float e = exp(data_g[gate_at(t)]), beta = data_beta[gate_at(t)];
                float dq = 0.0, dk = 0.0;
                [[unroll]] for (uint col = 0; col < n; col++) {
                    dq += data_do[at + col] * data_dst[states_at + (u + 1) * nn + col * n + r];
                    dk += data_dst[deltas_at + u * n + col] * data_dst[grads_at + u * nn + col * n + r] -
                          beta * data_dst[ddeltas_at + u * n + col] * e * data_dst[states_at + u * nn + col * n + r];
                }
                data_dst[dq_at + at + r] = dq * scale;
                data_dst[dk_at + at + r] = dk;
            }
        }
        for (uint u = gl_LocalInvocationID.x; u < len; u += gl_WorkGroupSize.x) {
            float dbeta = 0.0, dg = 0.0;
            [[unroll]] for (uint col = 0; col < n; col++) {
                dbeta += data_dst[dbetas_at + u * n + col];
                dg += data_dst[dgs_at + u * n + col];
            }
            data_dst[dbeta_at + gate_at(t0 + u)] = dbeta;
            data_dst[dg_at + gate_at(t0 + u)] = dg;
        }
        sync();
    }
}
