// The activations of onyx's fused operators (FusedConv, FusedMatMul:
// src/ep/cpu/kernels/activation.h), numbered as ox_act_kind, with their
// parameters a and b. The standalone operators' kernels (unary.comp,
// data_unary.comp) call the same function, so a fused node's epilogue
// and the node it replaced compute the same expression.
#ifndef OX_ACTIVATION_GLSL
#define OX_ACTIVATION_GLSL
#include "math.glsl"

float ox_hsig(float v) { return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v; }

float ox_activation(uint kind, float v, float a, float b) {
    switch (kind) {
    case 1u: return v < 0.0 ? 0.0 : v; // Relu (NaN passes)
    case 2u: { // Clip, compared as the Clip kernel compares
        float r = v < a ? a : v;
        return r > b ? b : r;
    }
    case 3u: return ox_sigmoid(v);
    case 4u: return ox_hsig(a * v + b);         // HardSigmoid
    case 5u: return v * ox_hsig(v / 6.0 + 0.5); // HardSwish
    case 6u: return v * ox_sigmoid(v);          // SiLU
    case 7u: return v < 0.0 ? a * v : v;        // LeakyRelu
    case 8u: return ox_tanh(v);
    case 9u: return ox_gelu(v);
    case 10u: // Gelu, approximate="tanh"
        return 0.5 * v * (1.0 + ox_tanh(0.79788456080286535588 * (v + 0.044715 * v * v * v)));
    }
    return v;
}
#endif
