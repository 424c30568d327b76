#version 450
#include "grid.glsl"
// A per-channel affine map y = x * a[c] + b[c] over (N, C, inner...)
// data, a and b stored one after the other (nn_bn_prep.comp).

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer AB { float ab[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint n, C, inner; OX_GRID_MEMBER } p;

void main() {
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uint c = (i / p.inner) % p.C;
        y[i] = x[i] * ab[c] + ab[p.C + c];
    }
}
