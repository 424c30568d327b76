#version 450
#include "grid.glsl"
// ScatterElements after the copy of data into y: update i goes to the
// position of i (in the indices' shape) with its axis coordinate replaced
// by indices[i]. A bad index writes nothing. Repeated targets with
// reduction none: one write wins (the spec leaves it undefined).

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer U { uint upd[]; };
layout(std430, binding = 1) readonly buffer I { uint ind[]; };
layout(std430, binding = 2) buffer Y { uint y[]; };
layout(std430, binding = 5) buffer F { uint flag; uint first_bad; };
layout(push_constant) uniform P {
    uint n, rank, axis, axis_len, idx64, words, red, is_int;
    uint dims[8]; // indices (= updates) shape
    uint xs[8];   // data strides
    OX_GRID_MEMBER
} p;

#include "index_util.glsl"
#include "index_scatter.glsl"

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
        if (!ox_index(i, p.idx64, p.axis_len, k)) {
            ox_bad_index(i);
            continue;
        }
        off += k * p.xs[p.axis];
        for (uint w = 0u; w < p.words; w++)
            ox_scatter_word(off * p.words + w, upd[i * p.words + w], p.red, p.is_int);
    }
}
