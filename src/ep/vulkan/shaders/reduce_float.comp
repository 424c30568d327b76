#version 450
// one-dimensional grid, members up to byte 124 (grid.glsl)
#define OX_GRID_X_ONLY
#include "grid.glsl"
// Bounds: one workgroup's own work grows with a whole row, block or
// reduction (its loop length); the dispatch budget splits grids, never a
// group, so this shader's per-group work is unbounded (vk_stream.c).
// The float32 reductions over any set of axes. The host folds the input
// shape into kept and reduced dimensions (each run of neighbours of one
// kind merged), so output o starts at base(o) and its elements sit at
// base(o) + roff(r), r < n_red: a reduction over a permuted view with no
// copy. Short reductions run one output per invocation; longer ones one
// output per workgroup with a tree through shared memory.
//
// Empty reductions give the fold's identity (the CPU's): 0 for sums,
// 1 for products, -inf for max, +inf for min, NaN for the mean, -inf for
// the logarithms. Max and min propagate NaN.

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint n_out, n_red, op, krank, rrank, per_thread;
    uint kd[6], ks[6]; // kept dimensions and their input strides
    uint rd[6], rs[6]; // reduced dimensions and their input strides
    OX_GRID_MEMBER
} p;

// op codes (vk_kernels_index.c)
const uint SUM = 0u, MEAN = 1u, MAX = 2u, MIN = 3u, PROD = 4u, L1 = 5u, L2 = 6u,
           LOGSUM = 7u, LOGSUMEXP = 8u, SUMSQ = 9u;
// how an element folds in
const uint F_SUM = 0u, F_SQ = 1u, F_ABS = 2u, F_PROD = 3u, F_MAX = 4u, F_MIN = 5u, F_EXP = 6u;

#define INF uintBitsToFloat(0x7f800000u)
#define QNAN uintBitsToFloat(0x7fc00000u)

shared float red[OX_WG];

uint fold_of(uint op) {
    if (op == MAX || op == LOGSUMEXP) return F_MAX;
    if (op == MIN) return F_MIN;
    if (op == PROD) return F_PROD;
    if (op == L1) return F_ABS;
    if (op == L2 || op == SUMSQ) return F_SQ;
    return F_SUM;
}

float identity(uint f) {
    if (f == F_PROD) return 1.0;
    if (f == F_MAX) return -INF;
    if (f == F_MIN) return INF;
    return 0.0;
}

float pick_max(float a, float b) { return (b > a || isnan(b)) ? b : a; }
float pick_min(float a, float b) { return (b < a || isnan(b)) ? b : a; }

float fold(uint f, float a, float v, float shift) {
    if (f == F_SUM) return a + v;
    if (f == F_SQ) return a + v * v;
    if (f == F_ABS) return a + abs(v);
    if (f == F_PROD) return a * v;
    if (f == F_MAX) return pick_max(a, v);
    if (f == F_MIN) return pick_min(a, v);
    return a + exp(v - shift);
}

// combines two partial results
float merge(uint f, float a, float b) {
    if (f == F_PROD) return a * b;
    if (f == F_MAX) return pick_max(a, b);
    if (f == F_MIN) return pick_min(a, b);
    return a + b;
}

uint base_of(uint o) {
    uint off = 0u;
    for (int d = int(p.krank) - 1; d >= 0; d--) {
        off += (o % p.kd[d]) * p.ks[d];
        o /= p.kd[d];
    }
    return off;
}

uint roff(uint r) {
    uint off = 0u;
    for (int d = int(p.rrank) - 1; d >= 0; d--) {
        off += (r % p.rd[d]) * p.rs[d];
        r /= p.rd[d];
    }
    return off;
}

// log that names its special values instead of leaving them to the
// driver: log(0) = -inf, log(inf) = inf, log(negative) = NaN
float safe_log(float s) {
    if (isnan(s) || s < 0.0) return QNAN;
    if (s == 0.0) return -INF;
    if (isinf(s)) return INF;
    return log(s);
}

// The LogSumExp shift: the maximum when finite (large inputs then do not
// overflow exp), else 0 as on the CPU.
float shift_of(float m) { return (isinf(m) || isnan(m)) ? 0.0 : m; }

float finish(float acc, float shift) {
    if (p.op == MEAN) return p.n_red == 0u ? QNAN : acc / float(p.n_red);
    if (p.op == L2) return sqrt(acc);
    if (p.op == LOGSUM) return safe_log(acc);
    if (p.op == LOGSUMEXP) return safe_log(acc) + shift;
    return acc;
}

float serial(uint base, uint f, float shift) {
    float a = identity(f);
    for (uint r = 0u; r < p.n_red; r++) a = fold(f, a, x[base + roff(r)], shift);
    return a;
}

// One output by the whole workgroup: strided partials, then a tree.
float group(uint base, uint f, float shift) {
    uint t = gl_LocalInvocationID.x;
    float a = identity(f);
    for (uint r = t; r < p.n_red; r += OX_WG) a = fold(f, a, x[base + roff(r)], shift);
    red[t] = a;
    barrier();
    for (uint s = OX_WG / 2u; s > 0u; s >>= 1u) {
        if (t < s) red[t] = merge(f == F_EXP ? F_SUM : f, red[t], red[t + s]);
        barrier();
    }
    float v = red[0];
    barrier(); // red is reused by the next reduction
    return v;
}

void main() {
    uint f = fold_of(p.op);
    if (p.per_thread != 0u) {
        uint stride = OX_NUM_GROUPS.x * OX_WG;
        for (uint o = gl_GlobalInvocationID.x; o < p.n_out; o += stride) {
            uint base = base_of(o);
            float a = serial(base, f, 0.0), shift = 0.0;
            if (p.op == LOGSUMEXP) {
                shift = shift_of(a);
                a = serial(base, F_EXP, shift);
            }
            y[o] = finish(a, shift);
        }
        return;
    }
    for (uint o = gl_WorkGroupID.x; o < p.n_out; o += OX_NUM_GROUPS.x) {
        uint base = base_of(o);
        float a = group(base, f, 0.0), shift = 0.0;
        if (p.op == LOGSUMEXP) {
            shift = shift_of(a);
            a = group(base, F_EXP, shift);
        }
        if (gl_LocalInvocationID.x == 0u) y[o] = finish(a, shift);
    }
}
