#version 450
#include "grid.glsl"
// One-input elementwise operators, chosen by p.op (numbers as in
// vk_kernels.c). A grid-stride loop covers any element count with the
// workgroups the device allows.
#include "math.glsl"

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint n;
    uint op;
    float alpha; // LeakyRelu's slope, Clip's lower bound
    float beta;  // Clip's upper bound
    OX_GRID_MEMBER
} p;

float apply(float v) {
    switch (p.op) {
    case 0u: return v < 0.0 ? 0.0 : v; // Relu (NaN passes, as on the CPU)
    case 1u: return ox_sigmoid(v);
    case 2u: return ox_tanh(v);
    case 3u: return exp(v);
    case 4u: return -v;
    case 5u: return abs(v);
    case 6u: return sqrt(v);
    case 7u: return ox_erf(v);
    case 8u: return ox_gelu(v);
    case 9u: // Gelu, approximate="tanh"
        return 0.5 * v * (1.0 + ox_tanh(0.79788456080286535588 * (v + 0.044715 * v * v * v)));
    case 10u: return v < 0.0 ? p.alpha * v : v; // LeakyRelu
    case 11u: { // Clip: compared like the CPU kernel, so NaN passes through
        float r = v < p.alpha ? p.alpha : v;
        return r > p.beta ? p.beta : r;
    }
    }
    return v;
}

void main() {
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) y[i] = apply(x[i]);
}
