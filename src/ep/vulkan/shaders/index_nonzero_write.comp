#version 450
#include "grid.glsl"
// NonZero, pass 3: each nonzero element writes its coordinates into
// column (its block's first column + its rank within the block) of the
// (rank, nnz) int64 output, as word pairs.
#include "wg.glsl"
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) readonly buffer C { uint counts[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform P { uint n, kind, blocks, nnz, rank; uint dims[8]; OX_GRID_MEMBER } p;

#include "index_nonzero.glsl"

void main() {
    for (uint b = gl_WorkGroupID.x; b < p.blocks; b += OX_NUM_GROUPS.x) {
        uint i = b * OX_WG + gl_LocalInvocationID.x, total;
        bool nz = ox_nonzero(i);
        uint col = counts[b] + ox_block_scan(nz ? 1u : 0u, total);
        uint rem = i;
        for (int a = int(p.rank) - 1; nz && a >= 0; a--) {
            uint pos = uint(a) * p.nnz + col;
            y[2u * pos] = rem % p.dims[a];
            y[2u * pos + 1u] = 0u;
            rem /= p.dims[a];
        }
    }
}
