// The body of matmul.comp and matmul_w16.comp (weights.glsl).
#include "grid.glsl"
// Bounds: one workgroup's own work grows with a whole row, block or
// reduction (its loop length); the dispatch budget splits grids, never a
// group, so this shader's per-group work is unbounded (vk_stream.c).
// MatMul, Gemm and onyx FusedMatMul: Y = act(alpha * op(A) op(B)
// (+ beta * C)), per batch, the activation (activation.glsl) from bits
// 8..15 of the flags with its parameters act_a and act_b, in
// OX_TILE x OX_TILE output tiles (16 x 16 on a device with 256
// invocations, 8 x 8 under 64: wg.glsl) whose A and B panels pass
// through shared memory.
// Workgroups stride over tiles and batches, so any size fits the
// device's workgroup-count limits.

#define OX_WG_TILED
#include "wg.glsl"
layout(std430, binding = 0) readonly buffer A { float a[]; };
#include "weights.glsl"
layout(std430, binding = 2) readonly buffer C { float c[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
#include "activation.glsl"
layout(push_constant) uniform P {
    uint M, N, K, batch;
    uint flags; // 1: A is stored K x M (transA), 2: B is N x K (transB), 4: C is given
    uint c_sm, c_sn; // C's element strides along M and N (0 where it broadcasts)
    float alpha, beta;
    uint brank;    // batch dimensions of the output (at most 4)
    uint bdims[4];
    uint sa[4];    // element offset of A's matrix per step of each batch dimension
    uint sb[4];
    float act_a, act_b;
    OX_GRID_MEMBER
} p;

// one float of padding per row: the column reads of tb do not collide in
// the same shared-memory bank
shared float ta[OX_TILE][OX_TILE + 1u];
shared float tb[OX_TILE][OX_TILE + 1u];

void main() {
    uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;
    uint tiles_m = (p.M + OX_TILE - 1u) / OX_TILE, tiles_n = (p.N + OX_TILE - 1u) / OX_TILE;
    bool ta_t = (p.flags & 1u) != 0u, tb_t = (p.flags & 2u) != 0u;
    for (uint bt = gl_WorkGroupID.z; bt < p.batch; bt += OX_NUM_GROUPS.z) {
        uint off_a = 0u, off_b = 0u, r = bt;
        for (int d = int(p.brank) - 1; d >= 0; d--) {
            uint cd = r % p.bdims[d];
            r /= p.bdims[d];
            off_a += cd * p.sa[d];
            off_b += cd * p.sb[d];
        }
        for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += OX_NUM_GROUPS.y) {
            for (uint tn = gl_WorkGroupID.x; tn < tiles_n; tn += OX_NUM_GROUPS.x) {
                uint row = tm * OX_TILE + ly, col = tn * OX_TILE + lx;
                float acc = 0.0;
                for (uint k0 = 0u; k0 < p.K; k0 += OX_TILE) {
                    uint ka = k0 + lx, kb = k0 + ly;
                    float va = 0.0, vb = 0.0;
                    if (row < p.M && ka < p.K)
                        va = a[off_a + (ta_t ? ka * p.M + row : row * p.K + ka)];
                    if (kb < p.K && col < p.N)
                        vb = ox_w(off_b + (tb_t ? col * p.K + kb : kb * p.N + col));
                    ta[ly][lx] = va;
                    tb[ly][lx] = vb;
                    barrier();
                    for (uint k = 0u; k < OX_TILE; k++) acc += ta[ly][k] * tb[k][lx];
                    barrier();
                }
                if (row < p.M && col < p.N) {
                    float v = p.alpha * acc;
                    if ((p.flags & 4u) != 0u) v += p.beta * c[row * p.c_sm + col * p.c_sn];
                    y[(bt * p.M + row) * p.N + col] = ox_activation((p.flags >> 8) & 255u, v, p.act_a, p.act_b);
                }
            }
        }
    }
}
