#version 450
#include "grid.glsl"
// Two-input elementwise operators with numpy broadcasting, beyond Add,
// Sub, Mul and Div (binary.comp): float Pow, Max, Min and fmod; float or
// int32 comparisons and bool logic, whose bool outputs are bytes, so one
// invocation assembles each output word of four. The host folds the
// broadcast into at most 6 dimensions with a stride per input (0 where
// it broadcasts). The output may also be input a (Max/Min over more than
// two inputs accumulate in place): each element reads only itself.

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 2) buffer Y { uint y[]; };
layout(push_constant) uniform P {
    uint n;
    uint rank;
    uint op; // 0 Pow 1 Max 2 Min 3 fmod; 16+ float, 32+ int32, 64+ int64 compare; 48+ bool logic
    uint pad_;
    uint dims[6];
    uint sa[6];
    uint sb[6];
    OX_GRID_MEMBER
} p;

void offsets(uint i, out uint ia, out uint ib) {
    uint r = i;
    ia = 0u;
    ib = 0u;
    for (int d = int(p.rank) - 1; d >= 0; d--) {
        uint c = r % p.dims[d];
        r /= p.dims[d];
        ia += c * p.sa[d];
        ib += c * p.sb[d];
    }
}

float ox_pow(float x, float e) {
    if (e == 0.0 || x == 1.0) return 1.0;
    if (isnan(x) || isnan(e)) return x + e;
    if (e == 1.0) return x;
    if (e == 2.0) return x * x;
    if (e == 0.5 && x >= 0.0 && !isinf(x)) return sqrt(x);
    float ax = abs(x);
    bool integral = floor(e) == e;
    if (x < 0.0 && !integral) return uintBitsToFloat(0x7fc00000u);
    // odd integral exponents keep the sign (2^24 and beyond are even)
    bool odd = integral && abs(e) < 16777216.0 && mod(e, 2.0) == 1.0;
    float r;
    if (ax == 0.0) r = e > 0.0 ? 0.0 : uintBitsToFloat(0x7f800000u);
    else if (isinf(ax)) r = e > 0.0 ? ax : 0.0;
    else r = exp2(e * log2(ax));
    return x < 0.0 && odd ? -r : (x == 0.0 && odd ? (e > 0.0 ? x : 1.0 / x) : r);
}

// C's fmod: the remainder with the dividend's sign, exact. Binary long
// division: subtract the largest e * 2^k not above the rest; each step is
// exact (the operands are within a factor of two), and the steps are at
// most the exponent difference.
float ox_fmod(float x, float e) {
    if (isnan(x) || isnan(e) || isinf(x) || e == 0.0) return uintBitsToFloat(0x7fc00000u);
    float ae = abs(e), r = abs(x);
    if (isinf(e)) return x;
    int ee, er;
    frexp(ae, ee);
    while (r >= ae) {
        frexp(r, er);
        float s = ldexp(ae, er - ee);
        if (s > r) s = ldexp(ae, er - ee - 1);
        r -= s;
    }
    return x < 0.0 ? -r : r;
}

float apply_f(float va, float vb) {
    switch (p.op) {
    case 0u: return ox_pow(va, vb);
    case 1u: return va > vb || isnan(va) ? va : vb; // NaN wins, as on the CPU
    case 2u: return va < vb || isnan(va) ? va : vb;
    default: return ox_fmod(va, vb);
    }
}

uint byte_at(uint i, uint which) {
    uint w = which == 0u ? a[i >> 2] : b[i >> 2];
    return (w >> ((i & 3u) * 8u)) & 0xffu;
}

uint compare(uint ia, uint ib) {
    uint k = p.op & 15u;
    bool r;
    if (p.op < 32u) {
        float va = uintBitsToFloat(a[ia]), vb = uintBitsToFloat(b[ib]);
        r = k == 0u ? va == vb : k == 1u ? va < vb : k == 2u ? va > vb : k == 3u ? va <= vb : va >= vb;
    } else if (p.op < 48u) {
        int va = int(a[ia]), vb = int(b[ib]);
        r = k == 0u ? va == vb : k == 1u ? va < vb : k == 2u ? va > vb : k == 3u ? va <= vb : va >= vb;
    } else if (p.op < 64u) {
        bool va = byte_at(ia, 0u) != 0u, vb = byte_at(ib, 1u) != 0u;
        r = k == 0u ? va && vb : k == 1u ? va || vb : k == 2u ? va != vb : va == vb;
    } else {
        // int64: the signed high words decide, then the unsigned low words
        int ha = int(a[2u * ia + 1u]), hb = int(b[2u * ib + 1u]);
        uint la = a[2u * ia], lb = b[2u * ib];
        bool eq = ha == hb && la == lb, lt = ha < hb || (ha == hb && la < lb);
        r = k == 0u ? eq : k == 1u ? lt : k == 2u ? !(lt || eq) : k == 3u ? lt || eq : !lt;
    }
    return r ? 1u : 0u;
}

void main() {
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    if (p.op < 16u) {
        for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
            uint ia, ib;
            offsets(i, ia, ib);
            y[i] = floatBitsToUint(apply_f(uintBitsToFloat(a[ia]), uintBitsToFloat(b[ib])));
        }
        return;
    }
    uint words = (p.n + 3u) / 4u;
    for (uint w = gl_GlobalInvocationID.x; w < words; w += stride) {
        uint packed = 0u;
        for (uint k = 0u; k < 4u; k++) {
            uint i = 4u * w + k;
            if (i >= p.n) break;
            uint ia, ib;
            offsets(i, ia, ib);
            packed |= compare(ia, ib) << (8u * k);
        }
        y[w] = packed;
    }
}
