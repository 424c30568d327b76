#version 450
#include "grid.glsl"
// Resize of 4-D float32 data, nearest or linear, separable per axis. The
// host computes the two input taps and weights of every output position
// of every axis exactly as the CPU kernel does (in double, weights then
// rounded to float) and passes them in table t: per axis, per output
// position, four words (i0, i1, w0, w1), axis k starting at word
// 4 * (out[0] + ... + out[k-1]). Nearest uses i0 alone. Within an
// (N, C) plane the bilinear sum is ordered as the CPU's and kept from
// contraction; the leading axes (usually identities, weights 1 and 0)
// combine whole planes.

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer T { uint t[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint n; // output elements
    uint linear;
    uint ind[4];
    uint outd[4];
    OX_GRID_MEMBER
} p;

// The plane's value at output position (oy, ox).
float plane_value(uint base, uint ry, uint rx) {
    uint iw = p.ind[3];
    if (p.linear == 0u) return x[base + t[ry] * iw + t[rx]];
    uint r0 = base + t[ry] * iw, r1 = base + t[ry + 1u] * iw;
    uint x0 = t[rx], x1 = t[rx + 1u];
    float w0 = uintBitsToFloat(t[ry + 2u]), w1 = uintBitsToFloat(t[ry + 3u]);
    float v0 = uintBitsToFloat(t[rx + 2u]), v1 = uintBitsToFloat(t[rx + 3u]);
    precise float top = v0 * x[r0 + x0] + v1 * x[r0 + x1];
    precise float bottom = v0 * x[r1 + x0] + v1 * x[r1 + x1];
    precise float v = w0 * top + w1 * bottom;
    return v;
}

void main() {
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    uint plane = p.ind[2] * p.ind[3];
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uint ox = i % p.outd[3];
        uint r = i / p.outd[3];
        uint oy = r % p.outd[2];
        r /= p.outd[2];
        uint oc = r % p.outd[1];
        uint on = r / p.outd[1];
        uint rn = 4u * on, rc = 4u * (p.outd[0] + oc);
        uint ry = 4u * (p.outd[0] + p.outd[1] + oy);
        uint rx = 4u * (p.outd[0] + p.outd[1] + p.outd[2] + ox);
        if (p.linear == 0u) {
            y[i] = plane_value((t[rn] * p.ind[1] + t[rc]) * plane, ry, rx);
            continue;
        }
        float acc = 0.0;
        for (uint a = 0u; a < 2u; a++) {
            float wn = uintBitsToFloat(t[rn + 2u + a]);
            if (wn == 0.0) continue;
            for (uint b = 0u; b < 2u; b++) {
                float wc = uintBitsToFloat(t[rc + 2u + b]);
                if (wc == 0.0) continue;
                acc += wn * wc * plane_value((t[rn + a] * p.ind[1] + t[rc + b]) * plane, ry, rx);
            }
        }
        y[i] = acc;
    }
}
