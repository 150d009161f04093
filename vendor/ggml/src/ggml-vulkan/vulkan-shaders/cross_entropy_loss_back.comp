#version 450

#include "generic_head.glsl"
#include "types.glsl"

#extension GL_EXT_control_flow_attributes : enable

layout(constant_id = 0) const uint BLOCK_SIZE = 32;
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout (binding = 0) readonly buffer G {A_TYPE data_g[];};
layout (binding = 1) readonly buffer X {B_TYPE data_x[];};
#ifdef LABEL_IDS
layout (binding = 2) readonly buffer Y {int data_y[];};    // toy patch 0009: one id per row
#else
layout (binding = 2) readonly buffer Y {B_TYPE data_y[];};
#endif
layout (binding = 3) writeonly buffer D {D_TYPE data_d[];};

shared FLOAT_TYPE tmp[BLOCK_SIZE];

FLOAT_TYPE wg_reduce_max(FLOAT_TYPE v) {
    const uint tid = gl_LocalInvocationID.x;
    tmp[tid] = v;
    barrier();
    [[unroll]] for (uint s = BLOCK_SIZE / 2; s > 0; s >>= 1) {
        if (tid < s) {
            tmp[tid] = max(tmp[tid], tmp[tid + s]);
        }
        barrier();
    }
    v = tmp[0];
    barrier();
    return v;
}

FLOAT_TYPE wg_reduce_sum(FLOAT_TYPE v) {
    const uint tid = gl_LocalInvocationID.x;
    tmp[tid] = v;
    barrier();
    [[unroll]] for (uint s = BLOCK_SIZE / 2; s > 0; s >>= 1) {
        if (tid < s) {
            tmp[tid] += tmp[tid + s];
        }
        barrier();
    }
    v = tmp[0];
    barrier();
    return v;
}

void main() {
    const uint row = gl_WorkGroupID.z * 262144 + gl_WorkGroupID.y * 512 + gl_WorkGroupID.x;
    const uint tid = gl_LocalInvocationID.x;

    if (row >= p.KY) {
        return;
    }

    const uint off = row * p.KX;
    const FLOAT_TYPE d_by_nrows = FLOAT_TYPE(data_g[0]) / FLOAT_TYPE(p.KY);
#ifdef LABEL_IDS
    // toy patch 0009: a masked row (id -1, or outside the classes) gets no gradient
    const int id = data_y[row];
    if (id < 0 || id >= int(p.KX)) {
        for (uint i = tid; i < p.KX; i += BLOCK_SIZE) {
            data_d[off + i] = D_TYPE(0.0f);
        }
        return;
    }
#endif

    FLOAT_TYPE max_logit = FLOAT_TYPE(uintBitsToFloat(0xFF800000));
    for (uint i = tid; i < p.KX; i += BLOCK_SIZE) {
        max_logit = max(max_logit, FLOAT_TYPE(data_x[off + i]));
    }
    max_logit = wg_reduce_max(max_logit);

    FLOAT_TYPE sum_exp = FLOAT_TYPE(0.0f);
    for (uint i = tid; i < p.KX; i += BLOCK_SIZE) {
        sum_exp += exp(FLOAT_TYPE(data_x[off + i]) - max_logit);
    }
    const FLOAT_TYPE inv_sum = FLOAT_TYPE(1.0f) / wg_reduce_sum(sum_exp);

    for (uint i = tid; i < p.KX; i += BLOCK_SIZE) {
        const FLOAT_TYPE sm = exp(FLOAT_TYPE(data_x[off + i]) - max_logit) * inv_sum;
#ifdef LABEL_IDS
        const FLOAT_TYPE label = FLOAT_TYPE(int(i) == id ? 1.0f : 0.0f);
#else
        const FLOAT_TYPE label = FLOAT_TYPE(data_y[off + i]);
#endif
        data_d[off + i] = D_TYPE((sm - label) * d_by_nrows);
    }
}
