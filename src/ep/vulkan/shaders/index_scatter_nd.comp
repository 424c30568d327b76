#version 450
#include "grid.glsl"
// ScatterND after the copy of data into y: update element e belongs to
// index tuple t = e / slice, whose m components (checked one by one)
// address a slice of y. A tuple with a bad component writes nothing.
//
// With reduction none and repeated tuples the spec leaves the result
// undefined (the order of the updates is not defined): here one of the
// writes wins, the CPU keeps the last.

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer U { uint upd[]; };
layout(std430, binding = 1) readonly buffer I { uint ind[]; };
layout(std430, binding = 2) buffer Y { uint y[]; };
layout(std430, binding = 5) buffer F { uint flag; uint first_bad; };
layout(push_constant) uniform P {
    uint n;      // update elements
    uint m;      // components per tuple
    uint slice;  // elements per tuple
    uint idx64, words, red, is_int;
    uint dims[8]; // data dims 0..m-1
    uint xs[8];   // their strides
    OX_GRID_MEMBER
} p;

#include "index_util.glsl"
#include "index_scatter.glsl"

void main() {
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    for (uint e = gl_GlobalInvocationID.x; e < p.n; e += stride) {
        uint t = e / p.slice, off = e % p.slice;
        bool ok = true;
        for (uint k = 0u; k < p.m && ok; k++) {
            uint v;
            ok = ox_index(t * p.m + k, p.idx64, p.dims[k], v);
            if (!ok) ox_bad_index(t * p.m + k);
            off += v * p.xs[k];
        }
        if (!ok) continue;
        for (uint w = 0u; w < p.words; w++)
            ox_scatter_word(off * p.words + w, upd[e * p.words + w], p.red, p.is_int);
    }
}
