#version 450
// Softmax over the last axis, one row per workgroup at a time: the
// row's maximum and the sum of exponentials reduce through shared memory
// (softmax_subgroup.comp is the same with subgroup reductions).

layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint rows; uint len; } p;

shared float red[256];

float reduce(float v, bool take_max) {
    uint t = gl_LocalInvocationID.x;
    red[t] = v;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1u) {
        if (t < s) red[t] = take_max ? max(red[t], red[t + s]) : red[t] + red[t + s];
        barrier();
    }
    float r = red[0];
    barrier(); // red is reused by the next reduction
    return r;
}

void main() {
    uint t = gl_LocalInvocationID.x;
    for (uint row = gl_WorkGroupID.x; row < p.rows; row += gl_NumWorkGroups.x) {
        uint base = row * p.len;
        float m = uintBitsToFloat(0xff800000u); // -inf
        for (uint j = t; j < p.len; j += 256u) m = max(m, x[base + j]);
        m = reduce(m, true);
        float s = 0.0;
        for (uint j = t; j < p.len; j += 256u) s += exp(x[base + j] - m);
        s = reduce(s, false);
        for (uint j = t; j < p.len; j += 256u) y[base + j] = exp(x[base + j] - m) / s;
    }
}
