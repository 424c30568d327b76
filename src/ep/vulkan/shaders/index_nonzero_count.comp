#version 450
#include "grid.glsl"
// NonZero, pass 1: the count of nonzero elements in each block of OX_WG
// (the workgroup size; the host counts blocks with the same size).
#include "wg.glsl"
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) writeonly buffer C { uint counts[]; };
layout(push_constant) uniform P { uint n, kind, blocks; OX_GRID_MEMBER } p;

#include "index_nonzero.glsl"

void main() {
    for (uint b = gl_WorkGroupID.x; b < p.blocks; b += OX_NUM_GROUPS.x) {
        uint total;
        ox_block_scan(ox_nonzero(b * OX_WG + gl_LocalInvocationID.x) ? 1u : 0u, total);
        if (gl_LocalInvocationID.x == 0u) counts[b] = total;
    }
}
