#version 450
// Copies n 32-bit words: a scatter's output starts as its data.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) writeonly buffer B { uint b[]; };
layout(push_constant) uniform P { uint n; } p;

void main() {
    uint stride = gl_NumWorkGroups.x * 256u;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) b[i] = a[i];
}
