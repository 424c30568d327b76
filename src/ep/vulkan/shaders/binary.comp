#version 450
#include "grid.glsl"
// Add, Sub, Mul, Div with numpy broadcasting. The host folds the shapes
// to at most 6 dimensions (dims of the output, element strides of each
// input, 0 where it broadcasts) and flags inputs that need no index walk.

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint n;
    uint rank;
    uint op;    // 0 Add, 1 Sub, 2 Mul, 3 Div
    uint flags; // 1: a is laid out as y, 2: b is, 4: a is one element, 8: b is
    uint dims[6];
    uint sa[6];
    uint sb[6];
    OX_GRID_MEMBER
} p;

void main() {
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uint ia = (p.flags & 1u) != 0u ? i : 0u;
        uint ib = (p.flags & 2u) != 0u ? i : 0u;
        if ((p.flags & 5u) == 0u || (p.flags & 10u) == 0u) {
            uint r = i;
            uint wa = 0u, wb = 0u;
            for (int d = int(p.rank) - 1; d >= 0; d--) {
                uint c = r % p.dims[d];
                r /= p.dims[d];
                wa += c * p.sa[d];
                wb += c * p.sb[d];
            }
            if ((p.flags & 5u) == 0u) ia = wa;
            if ((p.flags & 10u) == 0u) ib = wb;
        }
        float va = a[ia], vb = b[ib];
        float r;
        switch (p.op) {
        case 0u: r = va + vb; break;
        case 1u: r = va - vb; break;
        case 2u: r = va * vb; break;
        default: r = va / vb; break;
        }
        y[i] = r;
    }
}
