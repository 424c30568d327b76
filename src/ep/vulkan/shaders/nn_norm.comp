#version 450
#include "grid.glsl"
// Bounds: one workgroup's own work grows with a whole row, block or
// reduction (its loop length); the dispatch budget splits grids, never a
// group, so this shader's per-group work is unbounded (vk_stream.c).
// Instance, Group and Layer normalization: the input is a run of equal
// blocks (an image's channel, group of channels, or row), each
// normalized by its own mean and variance, then scaled and shifted by
// parameters that depend on the block and the position inside it:
// parameter index (block % bmod) * bmul + position / pdiv (InstanceNorm:
// the channel; GroupNorm: the group, or the channel from version 21;
// LayerNorm: the position, or 0 for one shared value with pone). One
// workgroup per block at a time; mean, then the mean squared deviation
// from it, reduce through shared memory (two passes, as on the CPU).

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer S { float scale[]; };
layout(std430, binding = 2) readonly buffer B { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint blocks, len;
    uint bmod, bmul, pdiv;
    uint flags; // 1: bias given; 2: scale is one value; 4: bias is one value
    float eps;
    OX_GRID_MEMBER
} p;

shared float red[OX_WG];

float block_sum(float v) {
    uint t = gl_LocalInvocationID.x;
    red[t] = v;
    barrier();
    for (uint s = OX_WG / 2u; s > 0u; s >>= 1u) {
        if (t < s) red[t] += red[t + s];
        barrier();
    }
    float r = red[0];
    barrier(); // red is reused by the next reduction
    return r;
}

void main() {
    uint t = gl_LocalInvocationID.x;
    float n = float(p.len);
    for (uint blk = gl_WorkGroupID.x; blk < p.blocks; blk += OX_NUM_GROUPS.x) {
        uint base = blk * p.len;
        float s = 0.0;
        for (uint j = t; j < p.len; j += OX_WG) s += x[base + j];
        float mean = block_sum(s) / n;
        float ss = 0.0;
        for (uint j = t; j < p.len; j += OX_WG) {
            float dv = x[base + j] - mean;
            ss += dv * dv;
        }
        float inv = 1.0 / sqrt(block_sum(ss) / n + p.eps);
        uint pbase = (blk % p.bmod) * p.bmul;
        for (uint j = t; j < p.len; j += OX_WG) {
            uint pi = pbase + j / p.pdiv;
            float v = (x[base + j] - mean) * inv * scale[(p.flags & 2u) != 0u ? 0u : pi];
            if ((p.flags & 1u) != 0u) v += bias[(p.flags & 4u) != 0u ? 0u : pi];
            y[base + j] = v;
        }
    }
}
