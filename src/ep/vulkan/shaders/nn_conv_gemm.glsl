// The body of nn_conv_gemm.comp and nn_conv_gemm_w16.comp (weights.glsl).
#include "grid.glsl"
// Bounds: one workgroup's own work grows with a whole row, block or
// reduction (its loop length); the dispatch budget splits grids, never a
// group, so this shader's per-group work is unbounded (vk_stream.c).
// Conv as an implicit GEMM, per group: Y (Mg x N*pixels) = W (Mg x K)
// times the im2col matrix (K x N*pixels), K = Cg * kernel taps. The
// workgroup is T x T invocations (T = OX_TILE: 16 on a device with 256
// invocations, 8 under 64; wg.glsl) and computes a 4T x 4T output tile
// (OX_BLK), each invocation a 4 x 4 block of it (output channels
// ty + T i, columns tx + T j, so neighbouring invocations write
// neighbouring pixels). The im2col matrix is never stored: each T x 4T
// panel is gathered from X into shared memory as the tile walks K.
// Columns run over images and pixels together, so small late-stage
// feature maps still fill whole tiles. Workgroups stride over column
// tiles (x), channel tiles (y) and groups (z).
#include "nn_conv.glsl"

#define OX_WG_TILED
#include "wg.glsl"
const uint OX_BLK = 4u * OX_TILE;
layout(std430, binding = 0) readonly buffer X { float x[]; };
#include "weights.glsl"
layout(std430, binding = 2) readonly buffer B { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
#include "conv_epilogue.glsl"

// a padding column keeps the transposing stores to ws off one bank
shared float ws[OX_TILE][OX_BLK + 1u];
shared float xs[OX_TILE][OX_BLK];

void main() {
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    uint ksz = p.kd * p.kh * p.kw, khw = p.kh * p.kw;
    uint K = p.Cg * ksz;
    uint osz = p.od * p.oh * p.ow, ohw = p.oh * p.ow;
    uint isz = p.id * p.ih * p.iw;
    uint cols = p.N * osz, M = p.Mg * p.G, C = p.Cg * p.G;
    uint tiles_n = (cols + OX_BLK - 1u) / OX_BLK, tiles_m = (p.Mg + OX_BLK - 1u) / OX_BLK;
    bool pointwise = (p.flags & 2u) != 0u;
    // the panel elements each invocation loads: X panel row ty, columns
    // tx + T j (one kernel tap decoded per step for four pixels); W panel
    // column tx, rows ty + T r
    uint xr = ty, xc = tx;
    uint wk = tx, wm = ty;
    for (uint g = gl_WorkGroupID.z; g < p.G; g += OX_NUM_GROUPS.z) {
        for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += OX_NUM_GROUPS.y) {
            for (uint tn = gl_WorkGroupID.x; tn < tiles_n; tn += OX_NUM_GROUPS.x) {
                // where this invocation's four X columns start: the image's
                // channel block (plus the pixel for pointwise kernels) and
                // the window origin of the pixel
                bool qok[4];
                uint xbase[4], img[4];
                int z0[4], y0[4], x0[4];
                for (uint j = 0u; j < 4u; j++) {
                    uint q = tn * OX_BLK + xc + OX_TILE * j;
                    qok[j] = q < cols;
                    uint n = qok[j] ? q / osz : 0u, pix = qok[j] ? q % osz : 0u;
                    img[j] = n;
                    xbase[j] = (n * C + g * p.Cg) * isz + (pointwise ? pix : 0u);
                    z0[j] = int(pix / ohw) * int(p.sd) - p.pd;
                    y0[j] = int((pix % ohw) / p.ow) * int(p.sh) - p.ph;
                    x0[j] = int(pix % p.ow) * int(p.sw) - p.pw;
                }
                float acc[4][4];
                for (uint i = 0u; i < 4u; i++)
                    for (uint j = 0u; j < 4u; j++) acc[i][j] = 0.0;
                for (uint k0 = 0u; k0 < K; k0 += OX_TILE) {
                    for (uint r = 0u; r < 4u; r++) {
                        uint mr = wm + OX_TILE * r, m = tm * OX_BLK + mr, k = k0 + wk;
                        ws[wk][mr] = (m < p.Mg && k < K) ? ox_w((g * p.Mg + m) * K + k) : 0.0;
                    }
                    uint k = k0 + xr;
                    bool kok = k < K;
                    if (pointwise) {
                        for (uint j = 0u; j < 4u; j++)
                            xs[xr][xc + OX_TILE * j] =
                                kok && qok[j] ? OX_CONV_SCALED(x[xbase[j] + k * isz], img[j], g * p.Cg + k) : 0.0;
                    } else {
                        uint c = k / ksz, t = k % ksz;
                        int dz = int(t / khw) * int(p.dd), dy = int((t % khw) / p.kw) * int(p.dh);
                        int dx = int(t % p.kw) * int(p.dw);
                        for (uint j = 0u; j < 4u; j++) {
                            int zz = z0[j] + dz, yy = y0[j] + dy, xx = x0[j] + dx;
                            bool in_ = kok && qok[j] && zz >= 0 && zz < int(p.id) && yy >= 0 &&
                                       yy < int(p.ih) && xx >= 0 && xx < int(p.iw);
                            xs[xr][xc + OX_TILE * j] =
                                in_ ? OX_CONV_SCALED(x[xbase[j] + c * isz + (uint(zz) * p.ih + uint(yy)) * p.iw +
                                                       uint(xx)],
                                                     img[j], g * p.Cg + c)
                                    : 0.0;
                        }
                    }
                    barrier();
                    for (uint k = 0u; k < OX_TILE; k++) {
                        float a[4], b[4];
                        for (uint i = 0u; i < 4u; i++) a[i] = ws[k][ty + OX_TILE * i];
                        for (uint j = 0u; j < 4u; j++) b[j] = xs[k][tx + OX_TILE * j];
                        for (uint i = 0u; i < 4u; i++)
                            for (uint j = 0u; j < 4u; j++) acc[i][j] += a[i] * b[j];
                    }
                    barrier();
                }
                for (uint i = 0u; i < 4u; i++) {
                    uint m = tm * OX_BLK + ty + OX_TILE * i;
                    if (m >= p.Mg) continue;
                    uint oc = g * p.Mg + m;
                    float bv = (p.flags & 1u) != 0u ? bias[oc] : 0.0;
                    for (uint j = 0u; j < 4u; j++) {
                        uint qq = tn * OX_BLK + tx + OX_TILE * j;
                        if (qq >= cols) continue;
                        uint nn = qq / osz, pp = qq % osz;
                        uint o = (nn * M + oc) * osz + pp;
                        y[o] = ox_conv_epilogue(acc[i][j] + bv, o);
                    }
                }
            }
        }
    }
}
