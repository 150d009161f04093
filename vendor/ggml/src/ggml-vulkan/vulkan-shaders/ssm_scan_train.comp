#version 450

// toy patch 0018: Mamba-2's selective scan (a scalar decay a head) as a
// training graph takes it (ggml_ssm_scan_train): every sequence from a zero
// state, forward or backward. One workgroup a (head, sequence). Each row p of
// the state S [head_dim, state] (one channel of x) is a recurrence of its own,
// carried by one invocation: per token, with dts = softplus(dt) and
// decay = exp(dts a),
//   S_p = decay S_p + dts x_p b;  y_p = S_p . c.
// The backward walks the chunks last to first as gated_delta_net_train.comp
// does: the chunk's states made again from the one kept before it (a row an
// invocation), the row's gradient carried back through the chunk (the same),
// then this head's shares of db and dc, sums over rows, a state index an
// invocation, and ddt a token an invocation; dA summed by invocation 0.
// The head width and the state are specialization constants so that every
// loop over them is unrolled: lavapipe (llvmpipe) ends an invocation's loops
// after 65535 iterations in all, which leaves the loops over tokens (about 4 T).

#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(constant_id = 0) const uint head_dim = 64;
layout(constant_id = 1) const uint state = 128;

layout(push_constant) uniform Parameters {
    uint heads;
    uint t_seq;
    uint backward;
    uint chunk;
    uint scratch_at;         // floats into dst
    uint scratch_per_group;  // floats a workgroup
    uint groups;
};

layout(binding = 0) readonly buffer XBuf   { float data_x[];   };
layout(binding = 1) readonly buffer DtBuf  { float data_dt[];  };
layout(binding = 2) readonly buffer ABuf   { float data_a[];   };
layout(binding = 3) readonly buffer BBuf   { float data_b[];   };
layout(binding = 4) readonly buffer CBuf   { float data_c[];   };
layout(binding = 5) readonly buffer DYBuf  { float data_dy[];  };
layout(binding = 6)          buffer DstBuf { float data_dst[]; };

uint head;
uint seq;
uint group;

// token t's x (and dy, dx) row of this head; its dt (and ddt); its b and c
uint x_at(uint t) { return ((seq * t_seq + t) * heads + head) * head_dim; }
uint dt_at(uint t) { return (seq * t_seq + t) * heads + head; }
uint bc_at(uint t) { return ((seq * t_seq + t) * groups + group) * state; }

// ggml's softplus (ggml-impl.h) and its derivative
float softplus(float x) { return x > 20.0 ? x : log(1.0 + exp(x)); }
float softplus_slope(float x) { return x > 20.0 ? 1.0 : 1.0 / (1.0 + exp(-x)); }

void sync() {
    memoryBarrierBuffer();
    barrier();
}

void main() {
    head = gl_WorkGroupID.x;
    seq = gl_WorkGroupID.y;
    group = head / (heads / groups);
    const uint n_seqs = gl_NumWorkGroups.y;
    const uint p = gl_LocalInvocationID.x;   // the row this invocation carries
    const bool carries = p < head_dim;
    const float a = data_a[head];
    float s[state];

    if (backward == 0u) {
        if (!carries) {
            return;
        }
        [[unroll]] for (uint i = 0; i < state; i++) {
            s[i] = 0.0;
        }
        for (uint t = 0; t < t_seq; t++) {
            const float dts = softplus(data_dt[dt_at(t)]);
            const float decay = exp(dts * a), xdt = data_x[x_at(t) + p] * dts;
            const uint bc = bc_at(t);
            float y = 0.0;
            [[unroll]] for (uint i = 0; i < state; i++) {
                s[i] = decay * s[i] + xdt * data_b[bc + i];
                y += s[i] * data_c[bc + i];
            }
            data_dst[x_at(t) + p] = y;
        }
        return;
    }

    // the gradients' places in dst (ggml.h), then this workgroup's scratch
    const uint tokens = t_seq * n_seqs, share = heads / groups, r = head % share;
    const uint dx_at = 0, ddt_at = head_dim * heads * tokens, da_at = ddt_at + heads * tokens;
    const uint db_at = da_at + heads * n_seqs, dc_at = db_at + heads * state * tokens;
    const uint chunks = (t_seq + chunk - 1) / chunk;
    const uint ns = head_dim * state;
    const uint kept_at = scratch_at + (seq * heads + head) * scratch_per_group; // a state a chunk
    const uint states_at = kept_at + chunks * ns;       // the chunk's states, chunk + 1
    const uint grads_at = states_at + (chunk + 1) * ns; // each token's gradient of its state
    const uint xs_at = grads_at + chunk * ns;           // [chunk][head_dim] each: x_p (dS_p . b),
    const uint hs_at = xs_at + chunk * head_dim;        // dS_p . S_{t-1, p}
    const uint das_at = hs_at + chunk * head_dim;       // [chunk]: each token's term of dA

    if (carries) {
        [[unroll]] for (uint i = 0; i < state; i++) {
            s[i] = 0.0;
        }
        for (uint t = 0; t < t_seq; t++) {
            if (t % chunk == 0u) {
                const uint to = kept_at + (t / chunk) * ns + p * state;
                [[unroll]] for (uint i = 0; i < state; i++) {
                    data_dst[to + i] = s[i];
                }
            }
            const float dts = softplus(data_dt[dt_at(t)]);
            const float decay = exp(dts * a), xdt = data_x[x_at(t) + p] * dts;
            const uint bc = bc_at(t);
            [[unroll]] for (uint i = 0; i < state; i++) {
                s[i] = decay * s[i] + xdt * data_b[bc + i];
            }
        }
    }
    float d[state];   // the gradient of row p of the state, carried back
    [[unroll]] for (uint i = 0; i < state; i++) {
        d[i] = 0.0;
    }
    float da = 0.0;   // invocation 0's sum of dA's terms
    sync();

    for (uint j = chunks; j-- > 0u;) {
        const uint t0 = j * chunk;
        const uint len = min(chunk, t_seq - t0);
        // phase 1: the chunk's states, states[0] the one before it
        if (carries) {
            const uint from = kept_at + j * ns + p * state;
            [[unroll]] for (uint i = 0; i < state; i++) {
                s[i] = data_dst[from + i];
                data_dst[states_at + p * state + i] = s[i];
            }
            for (uint u = 0; u < len; u++) {
                const float dts = softplus(data_dt[dt_at(t0 + u)]);
                const float decay = exp(dts * a), xdt = data_x[x_at(t0 + u) + p] * dts;
                const uint bc = bc_at(t0 + u), to = states_at + (u + 1) * ns + p * state;
                [[unroll]] for (uint i = 0; i < state; i++) {
                    s[i] = decay * s[i] + xdt * data_b[bc + i];
                    data_dst[to + i] = s[i];
                }
            }
        }
        sync();
        // phase 2: back through the chunk, row p
        if (carries) {
            for (uint u = len; u-- > 0u;) {
                const uint t = t0 + u, bc = bc_at(t);
                const float dts = softplus(data_dt[dt_at(t)]), decay = exp(dts * a);
                const float dy = data_dy[x_at(t) + p], x = data_x[x_at(t) + p];
                const uint before = states_at + u * ns + p * state;
                float xs = 0.0, hs = 0.0;
                [[unroll]] for (uint i = 0; i < state; i++) {
                    d[i] += dy * data_c[bc + i];
                    data_dst[grads_at + u * ns + p * state + i] = d[i];
                    xs += d[i] * data_b[bc + i];
                    hs += d[i] * data_dst[before + i];
                }
                data_dst[dx_at + x_at(t) + p] = dts * xs;
                data_dst[xs_at + u * head_dim + p] = x * xs;
                data_dst[hs_at + u * head_dim + p] = hs;
                [[unroll]] for (uint i = 0; i < state; i++) {
                    d[i] *= decay;
                }
            }
        }
        sync();
        // phase 3: sums over the rows: this head's shares of db and dc at
        // state index i, then ddt and dA's term a token an invocation
        const uint i = gl_LocalInvocationID.x;
        if (i < state) {
            for (uint u = 0; u < len; u++) {
                const uint t = t0 + u, bc = bc_at(t);
                const float dts = softplus(data_dt[dt_at(t)]);
                float db = 0.0, dc = 0.0;
                [[unroll]] for (uint row = 0; row < head_dim; row++) {
                    db += data_x[x_at(t) + row] * data_dst[grads_at + u * ns + row * state + i];
                    dc += data_dy[x_at(t) + row] * data_dst[states_at + (u + 1) * ns + row * state + i];
                }
                data_dst[db_at + (bc + i) * share + r] = db * dts;
                data_dst[dc_at + (bc + i) * share + r] = dc;
            }
        }
        for (uint u = gl_LocalInvocationID.x; u < len; u += gl_WorkGroupSize.x) {
            const uint t = t0 + u;
            const float dts = softplus(data_dt[dt_at(t)]), decay = exp(dts * a);
            float xs = 0.0, hs = 0.0;
            [[unroll]] for (uint row = 0; row < head_dim; row++) {
                xs += data_dst[xs_at + u * head_dim + row];
                hs += data_dst[hs_at + u * head_dim + row];
            }
            data_dst[ddt_at + dt_at(t)] = (xs + hs * decay * a) * softplus_slope(data_dt[dt_at(t)]);
            data_dst[das_at + u] = hs * decay * dts;
        }
        sync();
        if (gl_LocalInvocationID.x == 0u) {
            for (uint u = len; u-- > 0u;) {
                da += data_dst[das_at + u];
            }
        }
    }
    if (gl_LocalInvocationID.x == 0u) {
        data_dst[da_at + seq * heads + head] = da;
    }
}
