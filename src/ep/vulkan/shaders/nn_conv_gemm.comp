#version 450
#include "grid.glsl"
// Bounds: one workgroup's own work grows with a whole row, block or
// reduction (its loop length); the dispatch budget splits grids, never a
// group, so this shader's per-group work is unbounded (vk_stream.c).
// Conv as an implicit GEMM, per group: Y (Mg x N*pixels) = W (Mg x K)
// times the im2col matrix (K x N*pixels), K = Cg * kernel taps. The
// im2col matrix is never stored: each 16 x 64 panel is gathered from X
// into shared memory as the tile walks K. A workgroup computes a 64 x 64
// output tile, each invocation a 4 x 4 block of it (output channels
// ty + 16 i, columns tx + 16 j, so neighbouring invocations write
// neighbouring pixels). Columns run over images and pixels together, so
// small late-stage feature maps still fill whole tiles. Workgroups
// stride over column tiles (x), channel tiles (y) and groups (z).
#include "nn_conv.glsl"

layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) readonly buffer B { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };

// a padding column keeps the transposing stores to ws off one bank
shared float ws[16][65];
shared float xs[16][64];

void main() {
    uint lid = gl_LocalInvocationID.x;
    uint tx = lid % 16u, ty = lid / 16u;
    uint ksz = p.kd * p.kh * p.kw, khw = p.kh * p.kw;
    uint K = p.Cg * ksz;
    uint osz = p.od * p.oh * p.ow, ohw = p.oh * p.ow;
    uint isz = p.id * p.ih * p.iw;
    uint cols = p.N * osz, M = p.Mg * p.G, C = p.Cg * p.G;
    uint tiles_n = (cols + 63u) / 64u, tiles_m = (p.Mg + 63u) / 64u;
    bool pointwise = (p.flags & 2u) != 0u;
    // the panel elements each invocation loads: X panel row lid / 16,
    // columns lid % 16 + 16 j (one kernel tap decoded per step for four
    // pixels); W panel column lid % 16, rows lid / 16 + 16 r
    uint xr = lid / 16u, xc = lid % 16u;
    uint wk = lid % 16u, wm = lid / 16u;
    for (uint g = gl_WorkGroupID.z; g < p.G; g += OX_NUM_GROUPS.z) {
        for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += OX_NUM_GROUPS.y) {
            for (uint tn = gl_WorkGroupID.x; tn < tiles_n; tn += OX_NUM_GROUPS.x) {
                // where this invocation's four X columns start: the image's
                // channel block (plus the pixel for pointwise kernels) and
                // the window origin of the pixel
                bool qok[4];
                uint xbase[4];
                int z0[4], y0[4], x0[4];
                for (uint j = 0u; j < 4u; j++) {
                    uint q = tn * 64u + xc + 16u * j;
                    qok[j] = q < cols;
                    uint n = qok[j] ? q / osz : 0u, pix = qok[j] ? q % osz : 0u;
                    xbase[j] = (n * C + g * p.Cg) * isz + (pointwise ? pix : 0u);
                    z0[j] = int(pix / ohw) * int(p.sd) - p.pd;
                    y0[j] = int((pix % ohw) / p.ow) * int(p.sh) - p.ph;
                    x0[j] = int(pix % p.ow) * int(p.sw) - p.pw;
                }
                float acc[4][4];
                for (uint i = 0u; i < 4u; i++)
                    for (uint j = 0u; j < 4u; j++) acc[i][j] = 0.0;
                for (uint k0 = 0u; k0 < K; k0 += 16u) {
                    for (uint r = 0u; r < 4u; r++) {
                        uint mr = wm + 16u * r, m = tm * 64u + mr, k = k0 + wk;
                        ws[wk][mr] = (m < p.Mg && k < K) ? w[(g * p.Mg + m) * K + k] : 0.0;
                    }
                    uint k = k0 + xr;
                    bool kok = k < K;
                    if (pointwise) {
                        for (uint j = 0u; j < 4u; j++)
                            xs[xr][xc + 16u * j] = kok && qok[j] ? x[xbase[j] + k * isz] : 0.0;
                    } else {
                        uint c = k / ksz, t = k % ksz;
                        int dz = int(t / khw) * int(p.dd), dy = int((t % khw) / p.kw) * int(p.dh);
                        int dx = int(t % p.kw) * int(p.dw);
                        for (uint j = 0u; j < 4u; j++) {
                            int zz = z0[j] + dz, yy = y0[j] + dy, xx = x0[j] + dx;
                            bool in_ = kok && qok[j] && zz >= 0 && zz < int(p.id) && yy >= 0 &&
                                       yy < int(p.ih) && xx >= 0 && xx < int(p.iw);
                            xs[xr][xc + 16u * j] =
                                in_ ? x[xbase[j] + c * isz + (uint(zz) * p.ih + uint(yy)) * p.iw + uint(xx)]
                                    : 0.0;
                        }
                    }
                    barrier();
                    for (uint k = 0u; k < 16u; k++) {
                        float a[4], b[4];
                        for (uint i = 0u; i < 4u; i++) a[i] = ws[k][ty + 16u * i];
                        for (uint j = 0u; j < 4u; j++) b[j] = xs[k][tx + 16u * j];
                        for (uint i = 0u; i < 4u; i++)
                            for (uint j = 0u; j < 4u; j++) acc[i][j] += a[i] * b[j];
                    }
                    barrier();
                }
                for (uint i = 0u; i < 4u; i++) {
                    uint m = tm * 64u + ty + 16u * i;
                    if (m >= p.Mg) continue;
                    uint oc = g * p.Mg + m;
                    float bv = (p.flags & 1u) != 0u ? bias[oc] : 0.0;
                    for (uint j = 0u; j < 4u; j++) {
                        uint qq = tn * 64u + tx + 16u * j;
                        if (qq >= cols) continue;
                        uint nn = qq / osz, pp = qq % osz;
                        y[(nn * M + oc) * osz + pp] = acc[i][j] + bv;
                    }
                }
            }
        }
    }
}
