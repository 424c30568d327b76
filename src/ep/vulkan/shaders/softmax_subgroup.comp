#version 450
#include "grid.glsl"
// Bounds: one workgroup's own work grows with a whole row, block or
// reduction (its loop length); the dispatch budget splits grids, never a
// group, so this shader's per-group work is unbounded (vk_stream.c).
// softmax.comp with subgroup reductions: each subgroup reduces in
// registers and leaves one partial in shared memory: one slot per
// invocation, so any subgroup size (even one narrower than the device
// reports, or a workgroup smaller than a subgroup) has room.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint rows;  // outer * inner
    uint len;   // size of the normalized axis
    uint inner; // elements after it (1: the last axis)
    uint log_;  // 1: LogSoftmax
    OX_GRID_MEMBER
} p;

shared float part[OX_WG];

float reduce(float v, bool take_max) {
    v = take_max ? subgroupMax(v) : subgroupAdd(v);
    if (subgroupElect()) part[gl_SubgroupID] = v;
    barrier();
    float r = part[0];
    for (uint s = 1u; s < gl_NumSubgroups; s++) r = take_max ? max(r, part[s]) : r + part[s];
    barrier(); // part is reused by the next reduction
    return r;
}

void main() {
    uint t = gl_LocalInvocationID.x;
    for (uint row = gl_WorkGroupID.x; row < p.rows; row += OX_NUM_GROUPS.x) {
        // element j of the row sits at base + j * inner
        uint base = (row / p.inner) * p.len * p.inner + row % p.inner, st = p.inner;
        float m = uintBitsToFloat(0xff800000u); // -inf
        for (uint j = t; j < p.len; j += OX_WG) m = max(m, x[base + j * st]);
        m = reduce(m, true);
        float s = 0.0;
        for (uint j = t; j < p.len; j += OX_WG) s += exp(x[base + j * st] - m);
        s = reduce(s, false);
        if (p.log_ != 0u) {
            // x - m - log(s): no exp to underflow to log(0) in the tails
            float ls = log(s);
            for (uint j = t; j < p.len; j += OX_WG) y[base + j * st] = x[base + j * st] - m - ls;
        } else {
            for (uint j = t; j < p.len; j += OX_WG) y[base + j * st] = exp(x[base + j * st] - m) / s;
        }
    }
}
