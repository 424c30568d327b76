#version 450
#include "grid.glsl"
// Gather of 32-bit elements along one axis (moved as bits: float32 and
// int32 data alike). int64 indices are read as
// pairs of 32-bit words (low word first), so no shaderInt64 is needed: an
// index fits when its high word is the sign extension of its low word.
// Negative indices count from the end; an index still outside the axis
// writes 0 and raises the flag the host reads back, with the first such
// position, so the run fails naming it instead of reading out of bounds.

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer D { uint data[]; };
layout(std430, binding = 1) readonly buffer I { uint ind[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };
layout(std430, binding = 5) buffer F { uint flag; uint first_bad; };
layout(push_constant) uniform P {
    uint n;     // output elements
    uint inner; // elements after the axis
    uint nidx;  // indices
    uint axis;  // length of the gathered axis
    uint idx64; // 1: int64 indices
    OX_GRID_MEMBER
} p;

void main() {
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uint in_i = i % p.inner;
        uint t = i / p.inner;
        uint j = t % p.nidx;
        uint outer = t / p.nidx;
        int idx;
        bool ok = true;
        if (p.idx64 != 0u) {
            uint lo = ind[2u * j], hi = ind[2u * j + 1u];
            ok = hi == ((lo & 0x80000000u) != 0u ? 0xffffffffu : 0u);
            idx = int(lo);
        } else {
            idx = int(ind[j]);
        }
        if (idx < 0) idx += int(p.axis);
        if (!ok || idx < 0 || idx >= int(p.axis)) {
            atomicOr(flag, 1u);
            atomicMin(first_bad, j);
            y[i] = 0u;
            continue;
        }
        y[i] = data[(outer * p.axis + uint(idx)) * p.inner + in_i];
    }
}
