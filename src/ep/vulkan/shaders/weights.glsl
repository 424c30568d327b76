// Binding 1, the weights, read through ox_w(i): float32, or with OX_W16
// float16 values packed two to a 32-bit word (the lower half first),
// which the provider stores for float32 weights that float16 holds
// exactly (vk_weights.c). The halves are widened in integer arithmetic,
// subnormals included, so the value is exact whatever the device's float
// controls and no 16-bit storage feature is needed. Infinities and NaNs
// are never stored this way.
#ifdef OX_W16
layout(std430, binding = 1) readonly buffer W { uint w16[]; };
float ox_w(uint i) {
    uint h = (w16[i >> 1u] >> ((i & 1u) * 16u)) & 0xffffu;
    uint s = (h & 0x8000u) << 16u, e = (h >> 10u) & 0x1fu, m = h & 0x3ffu;
    // zero and subnormals: m * 2^-24, a normal float32, exactly
    if (e == 0u) return uintBitsToFloat(s | floatBitsToUint(float(m) * 5.9604644775390625e-8));
    return uintBitsToFloat(s | ((e + 112u) << 23u) | (m << 13u));
}
#else
layout(std430, binding = 1) readonly buffer W { float w[]; };
float ox_w(uint i) { return w[i]; }
#endif
