#version 450
#include "grid.glsl"
// Concat of byte elements (bool, uint8, int8), one dispatch per input:
// input regions of the output need not start or end on word boundaries,
// so each invocation owns one whole output word, takes the bytes that
// belong to this input's region and keeps the others as they are (the
// other inputs' dispatches write them). Within a dispatch no two
// invocations share a word.

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) buffer Y { uint y[]; };
layout(push_constant) uniform P {
    uint n;     // output bytes
    uint inner; // elements after the axis
    uint axis;  // output length of the axis
    uint off;   // where this input starts along it
    uint len;   // this input's length along it
    OX_GRID_MEMBER
} p;

void main() {
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    uint words = (p.n + 3u) / 4u;
    for (uint w = gl_GlobalInvocationID.x; w < words; w += stride) {
        uint v = y[w], old = v;
        for (uint b = 0u; b < 4u; b++) {
            uint o = 4u * w + b;
            if (o >= p.n) break;
            uint in_i = o % p.inner, t = o / p.inner;
            uint c = t % p.axis, outer = t / p.axis;
            if (c < p.off || c >= p.off + p.len) continue;
            uint s = (outer * p.len + (c - p.off)) * p.inner + in_i;
            uint byte = (x[s >> 2] >> ((s & 3u) * 8u)) & 0xffu;
            v = (v & ~(0xffu << (8u * b))) | (byte << (8u * b));
        }
        if (v != old) y[w] = v;
    }
}
