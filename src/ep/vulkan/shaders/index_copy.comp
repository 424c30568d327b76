#version 450
#include "grid.glsl"
// Copies n 32-bit words: a scatter's output starts as its data.
#include "wg.glsl"
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) writeonly buffer B { uint b[]; };
layout(push_constant) uniform P { uint n; OX_GRID_MEMBER } p;

void main() {
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) b[i] = a[i];
}
