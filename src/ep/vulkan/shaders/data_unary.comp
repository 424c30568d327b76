#version 450
#include "grid.glsl"
// One-input float operators beyond unary.comp, chosen by p.op (numbers
// as in vk_data_ew.c), and Not on bool bytes (op 13: one invocation per
// word of four).

#include "activation.glsl"
#include "wg.glsl"
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform P {
    uint n;
    uint op;
    float alpha; // HardSigmoid, Elu, Selu
    float beta;  // HardSigmoid
    float gamma; // Selu
    OX_GRID_MEMBER
} p;

// log(1 + v) accurate for small v: the rounding of 1 + v is divided
// back out (u - 1 is exact).
float ox_log1p(float v) {
    float u = 1.0 + v;
    if (u == 1.0) return v;
    if (isinf(u)) return u;
    return log(u) * (v / (u - 1.0));
}

// e^v - 1 accurate near 0, by the same correction.
float ox_expm1(float v) {
    if (abs(v) < 1e-5) return v + 0.5 * v * v;
    float u = exp(v);
    if (u == 1.0) return v;
    if (u == 0.0 || isinf(u)) return u - 1.0;
    return (u - 1.0) * v / log(u);
}

float apply(float v) {
    switch (p.op) {
    case 0u: return 1.0 / v;
    case 1u: return log(v);
    case 2u: return floor(v);
    case 3u: return ceil(v);
    case 4u: return roundEven(v);
    case 5u: return ox_sin(v);
    case 6u: return ox_cos(v);
    case 7u: return ox_activation(4u, v, p.alpha, p.beta); // HardSigmoid
    case 8u: return ox_activation(5u, v, 0.0, 0.0);        // HardSwish
    case 9u: return v > 0.0 ? v + ox_log1p(exp(-v)) : ox_log1p(exp(v));
    case 10u: return v > 0.0 ? 1.0 : v < 0.0 ? -1.0 : v; // NaN and -0 stay
    case 11u: return v < 0.0 ? p.alpha * ox_expm1(v) : v;
    case 12u: return v <= 0.0 ? p.gamma * (p.alpha * ox_expm1(v)) : p.gamma * v;
    }
    return v;
}

void main() {
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    if (p.op == 13u) {
        uint words = (p.n + 3u) / 4u;
        for (uint w = gl_GlobalInvocationID.x; w < words; w += stride) {
            uint v = x[w], r = 0u;
            for (uint k = 0u; k < 4u && 4u * w + k < p.n; k++)
                r |= (((v >> (8u * k)) & 0xffu) == 0u ? 1u : 0u) << (8u * k);
            y[w] = r;
        }
        return;
    }
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride)
        y[i] = floatBitsToUint(apply(uintBitsToFloat(x[i])));
}
