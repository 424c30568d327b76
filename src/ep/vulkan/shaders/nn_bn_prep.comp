#version 450
#include "grid.glsl"
// BatchNormalization (inference), first step: the per-channel affine map
// y = x * a + b with a = scale / sqrt(var + epsilon), b = B - mean * a,
// stored as a[0..C) then b[0..C) for nn_affine.comp (the five
// parameter and data tensors need more buffers than one dispatch binds).

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer S { float scale[]; };
layout(std430, binding = 1) readonly buffer B { float bias[]; };
layout(std430, binding = 2) readonly buffer M { float mean[]; };
layout(std430, binding = 3) readonly buffer V { float var_[]; };
layout(std430, binding = 4) writeonly buffer AB { float ab[]; };
layout(push_constant) uniform P { uint C; float eps; OX_GRID_MEMBER } p;

void main() {
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    for (uint c = gl_GlobalInvocationID.x; c < p.C; c += stride) {
        float a = scale[c] / sqrt(var_[c] + p.eps);
        ab[c] = a;
        ab[p.C + c] = bias[c] - mean[c] * a;
    }
}
