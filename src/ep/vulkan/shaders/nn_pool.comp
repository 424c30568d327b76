#version 450
#include "grid.glsl"
// MaxPool and AveragePool over up to three spatial axes (1-D and 2-D
// pools pass leading axes of size 1), one output element per
// invocation. Per axis, only the taps inside the input are visited; as
// on the CPU, a window that misses the input gives 0, MaxPool ignores
// the padding, and AveragePool divides by the taps inside the input or,
// with count_include_pad, by those inside the padded extent.

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint planes;          // N * C
    uint in_[3], out_[3]; // input and output extents
    uint k[3], s[3], d[3];
    uint pb[3], pe[3];    // leading and trailing pads
    uint avg;             // 0 MaxPool, 1 AveragePool
    uint include_pad;
    OX_GRID_MEMBER
} p;

uint cdiv(uint a, uint b) { return (a + b - 1u) / b; }

void main() {
    uint osz = p.out_[0] * p.out_[1] * p.out_[2];
    uint isz = p.in_[0] * p.in_[1] * p.in_[2];
    uint total = p.planes * osz;
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
        uint pix = i % osz, plane = i / osz;
        uint o[3];
        o[2] = pix % p.out_[2];
        o[1] = (pix / p.out_[2]) % p.out_[1];
        o[0] = pix / (p.out_[2] * p.out_[1]);
        int st[3];
        uint k0[3], k1[3];
        uint inside = 1u, padded = 1u;
        for (int a = 0; a < 3; a++) {
            int s0 = int(o[a] * p.s[a]) - int(p.pb[a]);
            st[a] = s0;
            k0[a] = s0 < 0 ? cdiv(uint(-s0), p.d[a]) : 0u;
            int left = int(p.in_[a]) - s0;
            k1[a] = left <= 0 ? 0u : min(p.k[a], cdiv(uint(left), p.d[a]));
            if (k1[a] < k0[a]) k1[a] = k0[a];
            inside *= k1[a] - k0[a];
            int hi = int(p.in_[a] + p.pe[a]) - s0;
            padded *= hi <= 0 ? 0u : min(p.k[a], cdiv(uint(hi), p.d[a]));
        }
        float acc = p.avg != 0u ? 0.0 : uintBitsToFloat(0xff800000u); // -inf for max
        uint base = plane * isz;
        for (uint a = k0[0]; a < k1[0]; a++) {
            uint zz = uint(st[0] + int(a * p.d[0]));
            for (uint b = k0[1]; b < k1[1]; b++) {
                uint row = base + (zz * p.in_[1] + uint(st[1] + int(b * p.d[1]))) * p.in_[2];
                for (uint c = k0[2]; c < k1[2]; c++) {
                    float v = x[row + uint(st[2] + int(c * p.d[2]))];
                    if (p.avg != 0u)
                        acc += v;
                    else if (v > acc)
                        acc = v;
                }
            }
        }
        if (inside == 0u) {
            acc = 0.0;
        } else if (p.avg != 0u) {
            uint cnt = p.include_pad != 0u ? padded : inside;
            acc = cnt != 0u ? acc / float(cnt) : 0.0;
        }
        y[i] = acc;
    }
}
