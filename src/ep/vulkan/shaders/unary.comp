#version 450
#include "grid.glsl"
// One-input elementwise operators, chosen by p.op (numbers as in
// vk_kernels.c). A grid-stride loop covers any element count with the
// workgroups the device allows.
#include "activation.glsl"

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
    // the activations as the fused operators' epilogues compute them
    case 0u: return ox_activation(1u, v, 0.0, 0.0); // Relu (NaN passes, as on the CPU)
    case 1u: return ox_activation(3u, v, 0.0, 0.0); // Sigmoid
    case 2u: return ox_activation(8u, v, 0.0, 0.0); // Tanh
    case 3u: return exp(v);
    case 4u: return -v;
    case 5u: return abs(v);
    case 6u: return sqrt(v);
    case 7u: return ox_erf(v);
    case 8u: return ox_activation(9u, v, 0.0, 0.0);          // Gelu
    case 9u: return ox_activation(10u, v, 0.0, 0.0);         // Gelu, approximate="tanh"
    case 10u: return ox_activation(7u, v, p.alpha, 0.0);     // LeakyRelu
    case 11u: return ox_activation(2u, v, p.alpha, p.beta);  // Clip (NaN passes, as on the CPU)
    }
    return v;
}

void main() {
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) y[i] = apply(x[i]);
}
