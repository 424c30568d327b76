#version 450
#include "grid.glsl"
// Bounds: one workgroup's own work grows with a whole row, block or
// reduction (its loop length); the dispatch budget splits grids, never a
// group, so this shader's per-group work is unbounded (vk_stream.c).
// NonZero, pass 2 (one workgroup): the block counts become each block's
// first output column (exclusive prefix sum, in place); the total goes
// to counts[blocks], which the host reads back to shape the output.
#include "wg.glsl"
layout(std430, binding = 0) buffer C { uint counts[]; };
layout(push_constant) uniform P { uint n, kind, blocks; OX_GRID_MEMBER } p;

shared uint ox_sc[OX_WG];

void main() {
    uint t = gl_LocalInvocationID.x, carry = 0u;
    for (uint base = 0u; base < p.blocks; base += OX_WG) {
        uint i = base + t, v = i < p.blocks ? counts[i] : 0u;
        ox_sc[t] = v;
        barrier();
        for (uint o = 1u; o < OX_WG; o <<= 1u) {
            uint a = t >= o ? ox_sc[t - o] : 0u;
            barrier();
            ox_sc[t] += a;
            barrier();
        }
        if (i < p.blocks) counts[i] = carry + ox_sc[t] - v;
        carry += ox_sc[OX_WG - 1u];
        barrier();
    }
    if (t == 0u) counts[p.blocks] = carry;
}
