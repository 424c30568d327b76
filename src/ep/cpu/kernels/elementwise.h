/* Internals shared by the CPU elementwise kernel files: element type
 * lists that generate one typed loop per type, load/store conversions,
 * type masks, saturating float-to-integer stores and the vectorisable
 * float32 exp/tanh. The kernels of elementwise_unary.c and
 * elementwise_softmax.c are declared here for the family's one kernel
 * table, in elementwise.c.
 *
 * float16/bfloat16 compute in float. Signed integer arithmetic wraps
 * through an unsigned type because overflow is undefined in C. Every file
 * including this uses <tgmath.h>, so sin(x) on a float is sinf. */
#ifndef ONYX_EP_CPU_KERNELS_ELEMENTWISE_H
#define ONYX_EP_CPU_KERNELS_ELEMENTWISE_H

#include <stdint.h>
#include <string.h>
#include <tgmath.h>

#include "core/dtype.h"
#include "ep/ep.h"
#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/erf_poly.h"
#include "ep/cpu/kernels/saturate.h"

#define NDT (ONYX_BFLOAT16 + 1)

/* Chunk sizes for ox_parallel_for: cheap loops need long chunks to pay
 * for a thread hand-off, libm-bound ones much shorter. A cheap loop over
 * 16K elements or more is shared: its operands are mostly the previous
 * parallel node's output, half of it in the other core's cache, which one
 * thread reads at half speed (LLaMA's [1, 8, 64, 64] Where 0.013 ms at two
 * threads unshared, 0.006 shared; 0.005 at one thread). */
#define GRAIN_CHEAP 8192
#define GRAIN_MATH 4096

/* ---- element type lists ----
 * X(op, suffix, dtype, storage T, compute C, wrap W, load, store, ...)
 * W is the type integer arithmetic runs in so that overflow wraps. */
#define LD_ID(v) (v)
#define ST_ID(v) (v)
#define LD_H(v) ox_half_to_float(v)
#define ST_H(v) ox_float_to_half(v)
#define LD_B(v) ox_bf16_to_float(v)
#define ST_B(v) ox_float_to_bf16(v)

#define FLOAT_TYPES(X, op, ...)                                                   \
    X(op, f32, ONYX_FLOAT32, float, float, float, LD_ID, ST_ID, __VA_ARGS__)     \
    X(op, f64, ONYX_FLOAT64, double, double, double, LD_ID, ST_ID, __VA_ARGS__)  \
    X(op, f16, ONYX_FLOAT16, uint16_t, float, float, LD_H, ST_H, __VA_ARGS__)    \
    X(op, bf16, ONYX_BFLOAT16, uint16_t, float, float, LD_B, ST_B, __VA_ARGS__)
#define SINT_TYPES(X, op, ...)                                                    \
    X(op, i8, ONYX_INT8, int8_t, int8_t, uint32_t, LD_ID, ST_ID, __VA_ARGS__)    \
    X(op, i16, ONYX_INT16, int16_t, int16_t, uint32_t, LD_ID, ST_ID, __VA_ARGS__) \
    X(op, i32, ONYX_INT32, int32_t, int32_t, uint32_t, LD_ID, ST_ID, __VA_ARGS__) \
    X(op, i64, ONYX_INT64, int64_t, int64_t, uint64_t, LD_ID, ST_ID, __VA_ARGS__)
#define UINT_TYPES(X, op, ...)                                                      \
    X(op, u8, ONYX_UINT8, uint8_t, uint8_t, uint32_t, LD_ID, ST_ID, __VA_ARGS__)    \
    X(op, u16, ONYX_UINT16, uint16_t, uint16_t, uint32_t, LD_ID, ST_ID, __VA_ARGS__) \
    X(op, u32, ONYX_UINT32, uint32_t, uint32_t, uint32_t, LD_ID, ST_ID, __VA_ARGS__) \
    X(op, u64, ONYX_UINT64, uint64_t, uint64_t, uint64_t, LD_ID, ST_ID, __VA_ARGS__)
#define BOOL_TYPES(X, op, ...) \
    X(op, b8, ONYX_BOOL, uint8_t, uint8_t, uint32_t, LD_ID, ST_ID, __VA_ARGS__)

#define ENTRY(op, sfx, DT, ...) [DT] = op##_##sfx,

static inline uint32_t mask_of(ox_dtype t) { return t > 0 && t < 32 ? 1u << t : 0; }
#define M_FLOAT                                                                    \
    ((1u << ONYX_FLOAT32) | (1u << ONYX_FLOAT64) | (1u << ONYX_FLOAT16) |         \
     (1u << ONYX_BFLOAT16))
#define M_SINT ((1u << ONYX_INT8) | (1u << ONYX_INT16) | (1u << ONYX_INT32) | (1u << ONYX_INT64))
#define M_UINT                                                                     \
    ((1u << ONYX_UINT8) | (1u << ONYX_UINT16) | (1u << ONYX_UINT32) | (1u << ONYX_UINT64))
#define M_FLOAT8                                                                   \
    ((1u << ONYX_FLOAT8E4M3FN) | (1u << ONYX_FLOAT8E4M3FNUZ) | (1u << ONYX_FLOAT8E5M2) | \
     (1u << ONYX_FLOAT8E5M2FNUZ))
#define M_BOOL (1u << ONYX_BOOL)
#define M_NUM (M_FLOAT | M_SINT | M_UINT)


/* Stores a double into any numeric element without undefined behaviour. */
static inline void store_f64(void *data, ox_dtype t, size_t i, double v) {
    switch (t) {
    case ONYX_INT8: ((int8_t *)data)[i] = sat_i8(v); break;
    case ONYX_INT16: ((int16_t *)data)[i] = sat_i16(v); break;
    case ONYX_INT32: ((int32_t *)data)[i] = sat_i32(v); break;
    case ONYX_INT64: ((int64_t *)data)[i] = sat_i64(v); break;
    case ONYX_UINT8: ((uint8_t *)data)[i] = sat_u8(v); break;
    case ONYX_UINT16: ((uint16_t *)data)[i] = sat_u16(v); break;
    case ONYX_UINT32: ((uint32_t *)data)[i] = sat_u32(v); break;
    case ONYX_UINT64: ((uint64_t *)data)[i] = sat_u64(v); break;
    default: ox_set_f64(data, t, i, v); break;
    }
}

/* ---- vectorisable float32 exp and tanh ----
 * libm calls keep a loop scalar. These use only arithmetic, integer
 * conversion and bit selects (a float ?: blocks if-conversion under the
 * default -ftrapping-math), so loops calling them vectorise. Measured
 * against double precision over the whole float range: exp within 1.2
 * ulp, tanh within 1.5 ulp, sigmoid built on exp within 2.4 ulp. */
static inline float sel_f32(int c, float a, float b) {
    uint32_t m = 0u - (uint32_t)c, ua, ub;
    memcpy(&ua, &a, sizeof ua);
    memcpy(&ub, &b, sizeof ub);
    uint32_t r = (ua & m) | (ub & ~m);
    float f;
    memcpy(&f, &r, sizeof f);
    return f;
}

/* fast_expf's argument clamped: below -104 and above 89 the result has
 * already flushed to 0 or overflowed to inf, and the clamp keeps the
 * integer conversion defined; NaN becomes 0 (the callers return the NaN
 * itself). */
static inline float exp_clamp(float x) {
    float xc = sel_f32(x < -104.0f, -104.0f, x);
    xc = sel_f32(xc > 89.0f, 89.0f, xc);
    return sel_f32(xc != xc, 0.0f, xc);
}

/* p * 2^n for the whole number n, 2^n in two halves so both stay normal
 * floats for n in [-150, 129]; x itself when it is NaN. */
static inline float exp_scale(float p, float n, float x) {
    const int32_t k = (int32_t)n;
    const int32_t k1 = k / 2, k2 = k - k1;
    const uint32_t b1 = (uint32_t)(k1 + 127) << 23, b2 = (uint32_t)(k2 + 127) << 23;
    float s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    return sel_f32(x != x, x, p * s1 * s2);
}

static inline float fast_expf(float x) {
    const float xc = exp_clamp(x);
    /* x = n ln2 + r, |r| <= ln2/2; adding 1.5 * 2^23 rounds to an integer */
    const float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    /* ln2 split so that n * 0.693359375 is exact */
    float r = xc - n * 0.693359375f;
    r = r + n * 2.12194440054690583e-4f;
    /* e^r by its Taylor series to degree 7: truncation < 6e-9 */
    float p = 1.0f / 5040;
    p = p * r + 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    return exp_scale(p, n, x);
}

/* fast_expf with every multiply-add fused (C's fmaf: one rounding), the
 * scalar twin of the AVX2 vector exp (exp_fma_avx2.h) that the AVX2 and
 * AVX-512 variants of Softmax rows, Sigmoid and SiLU use; only for code
 * compiled for FMA hardware (elsewhere fmaf is a library call). */
static inline float fast_expf_fma(float x) {
    const float xc = exp_clamp(x);
    const float n = fmaf(xc, 1.44269504088896341f, 12582912.0f) - 12582912.0f;
    float r = fmaf(-n, 0.693359375f, xc);
    r = fmaf(n, 2.12194440054690583e-4f, r);
    /* the polynomial by Estrin's scheme: pairs of terms, then pairs of
     * pairs, so its chain of dependent operations is three multiply-adds
     * long instead of seven (a vector Softmax row waited on that chain:
     * ox_exp8_fma evaluates it in the same order) */
    const float r2 = r * r, r4 = r2 * r2;
    const float a01 = fmaf(1.0f, r, 1.0f), a23 = fmaf(1.0f / 6, r, 0.5f);
    const float a45 = fmaf(1.0f / 120, r, 1.0f / 24), a67 = fmaf(1.0f / 5040, r, 1.0f / 720);
    const float p = fmaf(fmaf(a67, r2, a45), r4, fmaf(a23, r2, a01));
    return exp_scale(p, n, x);
}

static inline float fast_tanhf(float x) {
    const float a = fabsf(x);
    /* near 0, 1 - 2/(e^2a + 1) cancels: use the odd Taylor series, whose
     * terms past x^15 stay under 5e-8 relative for |x| < 0.55 */
    const float u = x * x;
    float p = (float)(-929569.0 / 638512875.0);
    p = p * u + (float)(21844.0 / 6081075.0);
    p = p * u + (float)(-1382.0 / 155925.0);
    p = p * u + 62.0f / 2835;
    p = p * u + -17.0f / 315;
    p = p * u + 2.0f / 15;
    p = p * u + -1.0f / 3;
    const float small = x + x * u * p;
    const float big = copysignf(1.0f - 2.0f / (fast_expf(2.0f * a) + 1.0f), x);
    return sel_f32(a < 0.55f, small, big);
}

/* erf and GELU without branches, so that their loops vectorise.
 * |z| < 0.5: erf by its odd Taylor series to z^13 (the first term left out
 * is under 1e-9 relative). |z| >= 0.5: erfc(|z|) = R(t) e^(-z^2) with
 * t = 1/(1 + 0.47047|z|) and R a degree-8 polynomial fitted (least squares,
 * relative) to erfc(z) e^(z^2) on [0.5, 10]: 1.3e-7 relative in exact
 * arithmetic, under 4e-7 in float. erfc is kept apart so that 1 + erf(z)
 * for negative z (GELU's tail) needs no subtraction that cancels. Checked
 * by unit.elementwise_ops: erf within 5e-7 absolute, GELU within 2e-6
 * relative for x >= -4 and 1e-5 below (the rounding of z^2 in e^(-z^2)). */
static inline float erf_taylor(float z) {
    static const float c[] = {OX_ERF_TAYLOR_COEFFS};
    const float u = z * z;
    float p = c[0];
#pragma GCC unroll 16
    for (size_t i = 1; i < sizeof c / sizeof c[0]; i++) p = p * u + c[i];
    return OX_ERF_TAYLOR_SCALE * z * p;
}

/* erfc(a) for a >= 0.5 */
static inline float erfc_tail(float a) {
    static const float c[] = {OX_ERFC_TAIL_COEFFS};
    const float t = 1.0f / (1.0f + OX_ERFC_TAIL_T * a);
    float r = c[0];
#pragma GCC unroll 16
    for (size_t i = 1; i < sizeof c / sizeof c[0]; i++) r = r * t + c[i];
    return r * fast_expf(-a * a);
}

static inline float fast_erff(float x) {
    const float a = fabsf(x);
    return sel_f32(a < 0.5f, erf_taylor(x), copysignf(1.0f - erfc_tail(a), x));
}

/* x * (1 + erf(x / sqrt 2)) / 2, the exact GELU */
static inline float fast_gelu(float x) {
    const float z = x * 0.70710678118654752440f, a = fabsf(z);
    const float tail = erfc_tail(a);
    const float one_plus_erf = sel_f32(a < 0.5f, 1.0f + erf_taylor(z), sel_f32(z < 0.0f, tail, 2.0f - tail));
    return 0.5f * x * one_plus_erf;
}

/* float (and the float16/bfloat16 that compute in float) take the fast
 * versions; double keeps libm. */
#define GEXP(x) _Generic((x), float: fast_expf(x), default: exp(x))
#define GTANH(x) _Generic((x), float: fast_tanhf(x), default: tanh(x))
#define GERF(x) _Generic((x), float: fast_erff(x), default: erf(x))
#define GGELU(x) _Generic((x), float: fast_gelu(x), default: 0.5 * (x) * (1 + erf((x) * 0.70710678118654752440)))

/* Kernels defined in elementwise_unary.c (math, activations, Clip,
 * BitwiseNot, BitCast) and elementwise_softmax.c, as ox_ew_<name>. */
#define OX_EW_UNARY_KERNELS(X) \
    X(relu) X(neg) X(abs) X(sign) X(not) X(isnan) X(floor) X(ceil) X(round) X(recip) \
    X(sqrt) X(softsign) X(hardswish) X(sigmoid) X(tanh) X(exp) X(log) X(sin) X(cos) \
    X(tan) X(asin) X(acos) X(atan) X(sinh) X(cosh) X(asinh) X(acosh) X(atanh) X(erf) \
    X(softplus) X(mish) X(bitwise_not) X(gelu) X(swish) X(hardsigmoid) X(elu) X(selu) \
    X(celu) X(leaky) X(threlu) X(shrink) X(isinf) X(clip) X(bitcast)
#define OX_EW_SOFTMAX_KERNELS(X) \
    X(softmax) X(logsoftmax) X(hardmax)
/* Bits per element of a type BitCast takes, 0 for the others (string,
 * float6). Defined in elementwise_unary.c. */
int ox_ew_bitcast_bits(ox_dtype t);

#define OX_EW_DECLARE(name) int ox_ew_##name(ox_kernel_ctx *c);
OX_EW_UNARY_KERNELS(OX_EW_DECLARE)
OX_EW_SOFTMAX_KERNELS(OX_EW_DECLARE)
#undef OX_EW_DECLARE

/* Softmax (log_softmax 0) or LogSoftmax (1) of one contiguous float32
 * row of n >= 1 values (elementwise_softmax.c). Every variant gives the
 * scalar one's bits; unit.softmax_rows checks each this CPU can run. */
typedef void (*ox_softmax_row_fn)(const float *x, float *y, int64_t n, int log_softmax);
typedef struct ox_softmax_row_variant {
    const char *name;
    int isa;   /* the ox_cpu_isa it needs */
    int fused; /* 1: the exp's multiply-adds fused (the FMA family) */
    ox_softmax_row_fn row;
} ox_softmax_row_variant;
const ox_softmax_row_variant *ox_softmax_row_variants(size_t *count);
/* The row the Softmax kernel takes for rows of n under isa: a kernel
 * computing softmax rows through it gets the Softmax operator's bits. */
ox_softmax_row_fn ox_softmax_row_for(ox_cpu_isa isa, int64_t n);

#endif
