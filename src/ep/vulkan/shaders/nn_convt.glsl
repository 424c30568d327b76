// The body of nn_convt.comp and nn_convt_w16.comp (weights.glsl).
#include "grid.glsl"
// ConvTranspose as a gather: each invocation computes one output element
// from the input positions whose strided, dilated taps land on it. An
// input position i reaches output o through tap t when
// i * stride + t * dilation - pad == o, so per axis only the taps with
// o + pad - t * dilation a non-negative multiple of the stride below
// stride * extent contribute. W is laid out (C, Mg, kernel...).
#include "nn_conv.glsl"

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
#include "weights.glsl"
layout(std430, binding = 2) readonly buffer B { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };

// The input index tap t of an axis reads for output o, or -1.
int src(int o, uint t, int pad, uint s, uint d, uint extent) {
    int v = o + pad - int(t * d);
    if (v < 0 || v % int(s) != 0) return -1;
    v /= int(s);
    return v < int(extent) ? v : -1;
}

void main() {
    uint osz = p.od * p.oh * p.ow, ohw = p.oh * p.ow;
    uint isz = p.id * p.ih * p.iw, ksz = p.kd * p.kh * p.kw;
    uint M = p.Mg * p.G, C = p.Cg * p.G;
    uint total = p.N * M * osz;
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
        uint pix = i % osz, nm = i / osz;
        uint m = nm % M, n = nm / M;
        uint g = m / p.Mg, mm = m % p.Mg;
        int oz = int(pix / ohw), oy = int((pix % ohw) / p.ow), ox = int(pix % p.ow);
        uint xb = (n * C + g * p.Cg) * isz;
        uint wb = (g * p.Cg * p.Mg + mm) * ksz; // channel ci adds ci * Mg * ksz
        float acc = 0.0;
        for (uint a = 0u; a < p.kd; a++) {
            int zz = src(oz, a, p.pd, p.sd, p.dd, p.id);
            if (zz < 0) continue;
            for (uint b = 0u; b < p.kh; b++) {
                int yy = src(oy, b, p.ph, p.sh, p.dh, p.ih);
                if (yy < 0) continue;
                for (uint c = 0u; c < p.kw; c++) {
                    int xx = src(ox, c, p.pw, p.sw, p.dw, p.iw);
                    if (xx < 0) continue;
                    uint xo = xb + (uint(zz) * p.ih + uint(yy)) * p.iw + uint(xx);
                    uint wo = wb + (a * p.kh + b) * p.kw + c;
                    for (uint ci = 0u; ci < p.Cg; ci++)
                        acc += x[xo + ci * isz] * ox_w(wo + ci * p.Mg * ksz);
                }
            }
        }
        if ((p.flags & 1u) != 0u) acc += bias[m];
        y[i] = acc;
    }
}
