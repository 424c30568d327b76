#version 450
// one-dimensional grid, members up to byte 124 (grid.glsl)
#define OX_GRID_X_ONLY
#include "grid.glsl"
// Strided copy of 32-bit words, or of bytes into a contiguous output: the
// one shader behind Transpose, Slice, Expand, Tile, Concat, Split and the
// reshaping copies. The host describes the iteration space (at most 7
// dimensions, row-major, last fastest) and, per dimension, a signed
// source stride (negative for reversed slices, 0 for broadcasts), a
// destination stride and an optional modulus (Tile: the source coordinate
// wraps at the input's size). 8-byte elements arrive as an extra inner
// dimension of two words.
//
// Byte mode (bit 8 of p.mode) serves bool and uint8: one invocation per
// output word assembles its four bytes, so no two invocations write the
// same word; the destination is then contiguous from word 0.

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform P {
    uint n;    // elements (words, or bytes in byte mode)
    uint mode; // rank in bits 0..7, byte mode in bit 8
    int sbase; // source offset of coordinate 0
    uint dbase;
    uint dims[7];
    int ss[7];
    uint ds[7];
    uint mods[6]; // 0: no wrap; the 7th dimension is always a word pair, which never wraps
    OX_GRID_MEMBER
} p;

// Source offset of element i; the destination offset through *dst.
int source_of(uint i, out uint dst) {
    uint rank = p.mode & 0xffu;
    uint r = i;
    int s = p.sbase;
    uint d = p.dbase;
    for (int k = int(rank) - 1; k >= 0; k--) {
        uint c = r % p.dims[k];
        r /= p.dims[k];
        d += c * p.ds[k];
        uint m = k < 6 ? p.mods[k] : 0u;
        uint cs = m != 0u ? c % m : c;
        s += int(cs) * p.ss[k];
    }
    dst = d;
    return s;
}

void main() {
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    if ((p.mode & 0x100u) == 0u) {
        for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
            uint d;
            int s = source_of(i, d);
            y[d] = x[uint(s)];
        }
        return;
    }
    uint words = (p.n + 3u) / 4u;
    for (uint w = gl_GlobalInvocationID.x; w < words; w += stride) {
        uint packed = 0u;
        for (uint b = 0u; b < 4u; b++) {
            uint i = 4u * w + b;
            if (i >= p.n) break;
            uint d;
            uint s = uint(source_of(i, d));
            packed |= ((x[s >> 2] >> ((s & 3u) * 8u)) & 0xffu) << (b * 8u);
        }
        y[w] = packed;
    }
}
