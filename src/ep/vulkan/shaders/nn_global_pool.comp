#version 450
#include "grid.glsl"
// Bounds: one workgroup's own work grows with a whole row, block or
// reduction (its loop length); the dispatch budget splits grids, never a
// group, so this shader's per-group work is unbounded (vk_stream.c).
// GlobalAveragePool and GlobalMaxPool: one (image, channel) plane per
// workgroup at a time, reduced through shared memory. An empty plane
// gives 0, as on the CPU.

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint planes;
    uint len; // elements per plane
    uint avg; // 0 max, 1 average
    OX_GRID_MEMBER
} p;

shared float red[OX_WG];

void main() {
    uint t = gl_LocalInvocationID.x;
    bool avg = p.avg != 0u;
    for (uint plane = gl_WorkGroupID.x; plane < p.planes; plane += OX_NUM_GROUPS.x) {
        uint base = plane * p.len;
        float acc = avg ? 0.0 : uintBitsToFloat(0xff800000u); // -inf for max
        for (uint j = t; j < p.len; j += OX_WG) {
            float v = x[base + j];
            if (avg)
                acc += v;
            else if (v > acc)
                acc = v;
        }
        red[t] = acc;
        barrier();
        for (uint s = OX_WG / 2u; s > 0u; s >>= 1u) {
            if (t < s) {
                float o = red[t + s];
                red[t] = avg ? red[t] + o : (o > red[t] ? o : red[t]);
            }
            barrier();
        }
        if (t == 0u) y[plane] = p.len == 0u ? 0.0 : (avg ? red[0] / float(p.len) : red[0]);
        barrier(); // red is reused by the next plane
    }
}
