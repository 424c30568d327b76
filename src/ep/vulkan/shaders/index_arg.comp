#version 450
#include "grid.glsl"
// Bounds: one workgroup's own work grows with a whole row, block or
// reduction (its loop length); the dispatch budget splits grids, never a
// group, so this shader's per-group work is unbounded (vk_stream.c).
// ArgMax / ArgMin of float32 along one axis, one invocation per output,
// scanning in order exactly as the CPU does: a strictly better value
// wins, an equal one too with select_last_index, and the first NaN is
// the answer (the scan stops there). int64 output as word pairs.

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform P {
    uint lines; // outputs
    uint len;   // size of the axis (> 0)
    uint inner; // elements after the axis
    uint is_min;
    uint last;  // select_last_index
    OX_GRID_MEMBER
} p;

void main() {
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    for (uint l = gl_GlobalInvocationID.x; l < p.lines; l += stride) {
        uint base = (l / p.inner) * p.len * p.inner + l % p.inner;
        float best = x[base];
        uint bi = 0u;
        for (uint j = 1u; j < p.len && !isnan(best); j++) {
            float v = x[base + j * p.inner];
            bool better = p.is_min != 0u ? v < best : v > best;
            if (isnan(v) || better || (p.last != 0u && v == best)) {
                best = v;
                bi = j;
            }
        }
        y[2u * l] = bi;
        y[2u * l + 1u] = 0u;
    }
}
