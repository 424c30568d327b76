#version 450
#include "grid.glsl"
// Bounds: one workgroup's own work grows with a whole row, block or
// reduction (its loop length); the dispatch budget splits grids, never a
// group, so this shader's per-group work is unbounded (vk_stream.c).
// TopK of float32 by rank: each element counts the elements of its row
// that come before it in the output order (a better value, or an equal
// one at a lower index, which is the CPU's stable sort); an element whose
// count stays below K is the count-th output. The order is strict and
// total, so ranks are distinct and every output slot is written once.
// NaN ranks above every number and equal to other NaNs, as on the CPU.
// A count stops at K, which bounds the work by about K * len * log(len)
// comparisons per row on typical data instead of len^2.

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer V { float vals[]; };
layout(std430, binding = 2) writeonly buffer I { uint inds[]; }; // int64 pairs
layout(push_constant) uniform P {
    uint n;     // input elements
    uint len;   // size of the axis
    uint inner; // elements after the axis
    uint k;
    uint largest;
    uint outs;  // bit 0: values wanted, bit 1: indices wanted
    OX_GRID_MEMBER
} p;

// -1, 0, 1 like the CPU's cmp_float: NaN above numbers, NaNs equal.
int cmpf(float a, float b) {
    bool na = isnan(a), nb = isnan(b);
    if (na || nb) return int(na) - int(nb);
    return a < b ? -1 : (a > b ? 1 : 0);
}

void main() {
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    for (uint e = gl_GlobalInvocationID.x; e < p.n; e += stride) {
        uint in_i = e % p.inner, t = e / p.inner;
        uint j = t % p.len, o = t / p.len;
        uint base = o * p.len * p.inner + in_i;
        float v = x[e];
        uint rank = 0u;
        for (uint q = 0u; q < p.len && rank < p.k; q++) {
            if (q == j) continue;
            int c = cmpf(x[base + q * p.inner], v);
            if (p.largest != 0u) c = -c;
            if (c < 0 || (c == 0 && q < j)) rank++;
        }
        if (rank >= p.k) continue;
        uint dst = (o * p.k + rank) * p.inner + in_i;
        if ((p.outs & 1u) != 0u) vals[dst] = v;
        if ((p.outs & 2u) != 0u) {
            inds[2u * dst] = j;
            inds[2u * dst + 1u] = 0u;
        }
    }
}
