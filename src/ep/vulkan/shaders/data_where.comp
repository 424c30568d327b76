#version 450
#include "grid.glsl"
// Where: y = cond ? x : y-input, the three broadcast to the output (at
// most 6 folded dimensions, an element stride per input, 0 where it
// broadcasts). The condition is bool bytes; the branches move as words,
// word pairs (8-byte types, p.words = 2) or bytes (p.words = 0: one
// invocation per output word of four).

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer C { uint cnd[]; };
layout(std430, binding = 1) readonly buffer X { uint xs[]; };
layout(std430, binding = 2) readonly buffer Y { uint ys[]; };
layout(std430, binding = 3) writeonly buffer O { uint o[]; };
layout(push_constant) uniform P {
    uint n;
    uint rank;
    uint words;
    uint pad_;
    uint dims[6];
    uint sc[6];
    uint sx[6];
    uint sy[6];
    OX_GRID_MEMBER
} p;

// Element offsets of i in cond, x and y.
uvec3 offsets(uint i) {
    uint r = i;
    uvec3 o3 = uvec3(0u);
    for (int d = int(p.rank) - 1; d >= 0; d--) {
        uint c = r % p.dims[d];
        r /= p.dims[d];
        o3 += c * uvec3(p.sc[d], p.sx[d], p.sy[d]);
    }
    return o3;
}

bool cond_at(uint j) { return ((cnd[j >> 2] >> ((j & 3u) * 8u)) & 0xffu) != 0u; }

void main() {
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    if (p.words == 0u) {
        uint nw = (p.n + 3u) / 4u;
        for (uint w = gl_GlobalInvocationID.x; w < nw; w += stride) {
            uint packed = 0u;
            for (uint k = 0u; k < 4u && 4u * w + k < p.n; k++) {
                uvec3 q = offsets(4u * w + k);
                uint j = cond_at(q.x) ? q.y : q.z;
                uint src = cond_at(q.x) ? xs[j >> 2] : ys[j >> 2];
                packed |= ((src >> ((j & 3u) * 8u)) & 0xffu) << (8u * k);
            }
            o[w] = packed;
        }
        return;
    }
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uvec3 q = offsets(i);
        bool c = cond_at(q.x);
        for (uint k = 0u; k < p.words; k++)
            o[i * p.words + k] = c ? xs[q.y * p.words + k] : ys[q.z * p.words + k];
    }
}
