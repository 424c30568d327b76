#version 450
#include "grid.glsl"
// GatherElements: y[i] = data[i with its axis coordinate replaced by
// indices[i]]. Elements of one or two 32-bit words (float32/int32,
// int64), moved as bits. A bad index writes zeros and raises the flag.

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer D { uint data[]; };
layout(std430, binding = 1) readonly buffer I { uint ind[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };
layout(std430, binding = 5) buffer F { uint flag; uint first_bad; };
layout(push_constant) uniform P {
    uint n;        // output (= indices) elements
    uint rank;
    uint axis;
    uint axis_len; // data's size along the axis
    uint idx64;
    uint words;    // 32-bit words per element
    uint dims[8];  // indices shape
    uint xs[8];    // data strides, in elements
    OX_GRID_MEMBER
} p;

#include "index_util.glsl"

void main() {
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uint rem = i, off = 0u;
        for (int a = int(p.rank) - 1; a >= 0; a--) {
            uint c = rem % p.dims[a];
            rem /= p.dims[a];
            if (uint(a) != p.axis) off += c * p.xs[a];
        }
        uint k;
        bool ok = ox_index(i, p.idx64, p.axis_len, k);
        if (!ok) ox_bad_index(i);
        off += k * p.xs[p.axis];
        for (uint w = 0u; w < p.words; w++) y[i * p.words + w] = ok ? data[off * p.words + w] : 0u;
    }
}
