// The body of nn_conv_dw.comp and nn_conv_dw_w16.comp (weights.glsl).
#include "grid.glsl"
// Conv with one input channel per group (depthwise, Cg == 1, any
// channel multiplier Mg): there is no reduction over channels to tile,
// so each invocation computes one output element directly from the
// window taps that fall inside the input.
#include "nn_conv.glsl"

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
#include "weights.glsl"
layout(std430, binding = 2) readonly buffer B { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
#include "conv_epilogue.glsl"

void main() {
    uint osz = p.od * p.oh * p.ow, ohw = p.oh * p.ow;
    uint isz = p.id * p.ih * p.iw, ksz = p.kd * p.kh * p.kw;
    uint M = p.Mg * p.G;
    uint total = p.N * M * osz;
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
        uint pix = i % osz, nm = i / osz;
        uint m = nm % M, n = nm / M;
        // input channel: the group of output channel m
        uint xb = (n * p.G + m / p.Mg) * isz, wb = m * ksz;
        int z0 = int(pix / ohw) * int(p.sd) - p.pd;
        int y0 = int((pix % ohw) / p.ow) * int(p.sh) - p.ph;
        int x0 = int(pix % p.ow) * int(p.sw) - p.pw;
        float acc = 0.0;
        for (uint a = 0u; a < p.kd; a++) {
            int zz = z0 + int(a * p.dd);
            if (zz < 0 || zz >= int(p.id)) continue;
            for (uint b = 0u; b < p.kh; b++) {
                int yy = y0 + int(b * p.dh);
                if (yy < 0 || yy >= int(p.ih)) continue;
                uint row = xb + (uint(zz) * p.ih + uint(yy)) * p.iw;
                uint wrow = wb + (a * p.kh + b) * p.kw;
                for (uint c = 0u; c < p.kw; c++) {
                    int xx = x0 + int(c * p.dw);
                    if (xx >= 0 && xx < int(p.iw)) acc += x[row + uint(xx)] * ox_w(wrow + c);
                }
            }
        }
        // S is one factor over the whole window: the sum scaled once
        if ((p.flags & 8u) != 0u) acc *= ox_conv_scale(n, m / p.Mg);
        if ((p.flags & 1u) != 0u) acc += bias[m];
        y[i] = ox_conv_epilogue(acc, i);
    }
}
