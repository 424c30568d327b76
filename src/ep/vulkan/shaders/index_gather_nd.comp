#version 450
#include "grid.glsl"
// GatherND: output element e is element e % slice of the slice that index
// tuple e / slice addresses, within batch tuple / per_batch. A tuple with
// a bad component gives zeros and raises the flag.

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer D { uint data[]; };
layout(std430, binding = 1) readonly buffer I { uint ind[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };
layout(std430, binding = 5) buffer F { uint flag; uint first_bad; };
layout(push_constant) uniform P {
    uint n;            // output elements
    uint m;            // components per tuple
    uint slice;        // elements per tuple
    uint per_batch;    // tuples per batch
    uint batch_stride; // data elements per batch
    uint idx64, words;
    uint dims[8];      // data dims b..b+m-1
    uint xs[8];        // their strides
    OX_GRID_MEMBER
} p;

#include "index_util.glsl"

void main() {
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    for (uint e = gl_GlobalInvocationID.x; e < p.n; e += stride) {
        uint t = e / p.slice;
        uint off = (t / p.per_batch) * p.batch_stride + e % p.slice;
        bool ok = true;
        for (uint k = 0u; k < p.m && ok; k++) {
            uint v;
            ok = ox_index(t * p.m + k, p.idx64, p.dims[k], v);
            if (!ok) ox_bad_index(t * p.m + k);
            off += v * p.xs[k];
        }
        for (uint w = 0u; w < p.words; w++) y[e * p.words + w] = ok ? data[off * p.words + w] : 0u;
    }
}
