#version 450
#include "grid.glsl"
// Cast between float32, int32, int64 (word pairs, low word first), bool
// and uint8 (bytes), with the CPU's rules: float to integer truncates
// toward zero into int64, saturating there (NaN -> 0), then keeps the low
// bits of narrower types; int64 to float is rounded once, correctly; to
// bool is "not zero". Byte outputs are assembled a word (four elements)
// per invocation. Type codes: 0 float32, 1 int32, 2 int64, 3 bool, 4 uint8.

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform P {
    uint n;
    uint from;
    uint to;
    OX_GRID_MEMBER
} p;

// int64 (lo, hi) to float, rounded once: the magnitude's leading 32 bits
// with a sticky bit for the rest below them, converted, then scaled.
float i64_to_float(uint lo, uint hi) {
    bool neg = (hi & 0x80000000u) != 0u;
    if (neg) {
        lo = ~lo + 1u;
        hi = ~hi + (lo == 0u ? 1u : 0u);
    }
    float r;
    if (hi == 0u) {
        r = float(lo);
    } else {
        int k = findMSB(hi) + 1;
        uint m = k == 32 ? hi : (hi << uint(32 - k)) | (lo >> uint(k));
        uint rest = k == 32 ? lo : lo << uint(32 - k);
        r = ldexp(float(m | (rest != 0u ? 1u : 0u)), k);
    }
    return neg ? -r : r;
}

// float to int64 words: truncation toward zero, saturating, NaN -> 0.
uvec2 float_to_i64(float f) {
    if (isnan(f)) return uvec2(0u);
    float t = trunc(f);
    if (t >= 9223372036854775808.0) return uvec2(0xffffffffu, 0x7fffffffu);
    if (t <= -9223372036854775808.0) return uvec2(0u, 0x80000000u);
    if (abs(t) < 2147483648.0) {
        int i = int(t);
        return uvec2(uint(i), i < 0 ? 0xffffffffu : 0u);
    }
    // |t| >= 2^31 has at most 24 significant bits, all above bit 7: the
    // split into 2^32 * h + l is exact
    float h = floor(t * (1.0 / 4294967296.0));
    float l = t - h * 4294967296.0;
    return uvec2(uint(l), uint(int(h)));
}

// Element i of the source as int64 words, or as a float (is_float).
void load(uint i, out uvec2 iv, out float fv, out bool is_float) {
    is_float = false;
    fv = 0.0;
    switch (p.from) {
    case 0u: is_float = true; fv = uintBitsToFloat(x[i]); iv = uvec2(0u); break;
    case 1u: iv = uvec2(x[i], (x[i] & 0x80000000u) != 0u ? 0xffffffffu : 0u); break;
    case 2u: iv = uvec2(x[2u * i], x[2u * i + 1u]); break;
    default: iv = uvec2((x[i >> 2] >> ((i & 3u) * 8u)) & 0xffu, 0u); break;
    }
}

// Element i converted to the destination type, as up to two words
// (bytes in the low 8 bits).
uvec2 convert(uint i) {
    uvec2 iv;
    float fv;
    bool isf;
    load(i, iv, fv, isf);
    if (p.to == 0u) return uvec2(floatBitsToUint(isf ? fv : i64_to_float(iv.x, iv.y)), 0u);
    if (p.to == 3u) return uvec2(isf ? (!(fv == 0.0) ? 1u : 0u) : ((iv.x | iv.y) != 0u ? 1u : 0u), 0u);
    uvec2 w = isf ? float_to_i64(fv) : iv;
    return p.to == 4u ? uvec2(w.x & 0xffu, 0u) : w;
}

void main() {
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    if (p.to >= 3u) {
        uint nw = (p.n + 3u) / 4u;
        for (uint w = gl_GlobalInvocationID.x; w < nw; w += stride) {
            uint packed = 0u;
            for (uint k = 0u; k < 4u && 4u * w + k < p.n; k++) packed |= convert(4u * w + k).x << (8u * k);
            y[w] = packed;
        }
        return;
    }
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uvec2 v = convert(i);
        if (p.to == 2u) {
            y[2u * i] = v.x;
            y[2u * i + 1u] = v.y;
        } else {
            y[i] = v.x;
        }
    }
}
