// onyx FusedConv's additions to a convolution shader (the operator:
// src/ops/contrib.c): X scaled by S as it is read, and the epilogue
// y = act(conv + bias + Z) applied to each output before it is stored,
// so neither the scaled input nor the sum is ever written. Flags of the
// push constants (nn_conv.glsl): 4: Z given (binding 4, with Y's shape);
// 8: S given (binding 5, one factor per input channel; the GEMM shader's
// _s variants read it, the depthwise shader scales each sum); 16: S has one
// row per image; bits 8..15: the activation, numbered as ox_act_kind
// (activation.glsl), with p.alpha and p.beta its parameters.
#include "activation.glsl"
layout(std430, binding = 4) readonly buffer Z { float z[]; };
layout(std430, binding = 5) readonly buffer S { float sc[]; };

// The factor of input channel ch (of all G * Cg) of image n: 1 without S.
float ox_conv_scale(uint n, uint ch) {
    if ((p.flags & 8u) == 0u) return 1.0;
    return sc[((p.flags & 16u) != 0u ? n * p.Cg * p.G : 0u) + ch];
}

// An X value of channel ch of image n as the GEMM shader reads it: scaled
// in its _s variants (OX_CONV_SCALE), where the inner gather pays for it,
// and unchanged in the others, which then carry no S code at all (the
// test per read cost a few percent on every convolution).
#ifdef OX_CONV_SCALE
#define OX_CONV_SCALED(v, n, ch) ((v) * ox_conv_scale(n, ch))
#else
#define OX_CONV_SCALED(v, n, ch) (v)
#endif

// v: the convolution plus bias for output element i (Y's flat index).
float ox_conv_epilogue(float v, uint i) {
    if ((p.flags & 4u) != 0u) v += z[i];
    return ox_activation((p.flags >> 8) & 255u, v, p.alpha, p.beta);
}
