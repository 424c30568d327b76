#version 450
#include "grid.glsl"
// Pad: each output element maps back to an input coordinate per axis
// (c - pads_begin), which mode 0 (constant) replaces by the constant
// outside the input, mode 1 (reflect) mirrors about the edges without
// repeating them, mode 2 (edge) clamps and mode 3 (wrap) takes modulo
// the axis. Elements of one word, two words (8-byte types, p.words = 2),
// or bytes (p.words = 0: one invocation per output word of four bytes).

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform P {
    uint n; // output elements
    uint rank;
    uint mode;
    uint words;      // 0 bytes, 1, 2
    uint cval[2];    // the constant's bits (low word first)
    uint odims[6];
    uint idims[6];
    int lo[6];       // pads at the beginning (negative: cropped)
    OX_GRID_MEMBER
} p;

// a modulo m (m > 0) in [0, m). GLSL leaves % undefined for a negative
// operand, and drivers differ: NVIDIA's takes it as unsigned.
int mod_floor(int a, int m) { return a >= 0 ? a % m : m - 1 - (-(a + 1)) % m; }

// Input element of output element i, or -1 for the constant.
int source_of(uint i) {
    uint r = i;
    int s = 0, st = 1;
    for (int k = int(p.rank) - 1; k >= 0; k--) {
        int c = int(r % p.odims[k]) - p.lo[k];
        r /= p.odims[k];
        int len = int(p.idims[k]);
        if (c < 0 || c >= len) {
            if (p.mode == 0u || len == 0) return -1;
            if (p.mode == 2u) {
                c = clamp(c, 0, len - 1);
            } else if (p.mode == 3u) {
                c = mod_floor(c, len);
            } else if (len == 1) {
                c = 0;
            } else {
                // mirror with period 2 (len - 1), edges not repeated
                int period = 2 * (len - 1);
                c = mod_floor(c, period);
                if (c >= len) c = period - c;
            }
        }
        s += c * st;
        st *= len;
    }
    return s;
}

void main() {
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    if (p.words == 0u) {
        uint nw = (p.n + 3u) / 4u;
        for (uint w = gl_GlobalInvocationID.x; w < nw; w += stride) {
            uint packed = 0u;
            for (uint b = 0u; b < 4u; b++) {
                uint i = 4u * w + b;
                if (i >= p.n) break;
                int s = source_of(i);
                uint v = s < 0 ? p.cval[0] & 0xffu : (x[uint(s) >> 2] >> ((uint(s) & 3u) * 8u)) & 0xffu;
                packed |= v << (b * 8u);
            }
            y[w] = packed;
        }
        return;
    }
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        int s = source_of(i);
        for (uint k = 0u; k < p.words; k++)
            y[i * p.words + k] = s < 0 ? p.cval[k] : x[uint(s) * p.words + k];
    }
}
