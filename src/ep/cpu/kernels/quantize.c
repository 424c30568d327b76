/* CPU kernels of the linear quantization operators.
 *
 * QuantizeLinear divides x by its scale in the "precision" type (the
 * `precision` attribute, else what the reference's numpy arithmetic gives:
 * the wider of x's and the scale's float types, double for int32 x),
 * then:
 * - integer outputs: round half to even, add the zero point, saturate to
 *   the type's range (NaN maps to the zero point, so no float-to-integer
 *   conversion is undefined);
 * - float8 outputs: convert the quotient with round to nearest even,
 *   saturating unless saturate=0 (the zero point is not added, as the
 *   reference does; it is zero for these types);
 * - float4/float6 outputs: quotient plus zero point, converted (always
 *   saturating: these formats have no infinity or NaN).
 * DequantizeLinear computes (x - zero_point) * scale in float32 (the
 * reference's arithmetic) and rounds once into the output type. A float8
 * or float4 x ignores its zero point, which the spec requires to be zero.
 *
 * Scale layouts (see ops/quantize.c): per-tensor, per-axis (one value per
 * slice along axis) and blocked (x's shape with the axis dimension
 * divided by block_size, rounded up). The common float32 -> int8/uint8
 * per-tensor and per-axis case keeps a dedicated typed loop. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/dtype.h"
#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define OX_QUANT_X86 1
#endif
#include "ops/op.h"

extern const ox_kernel_table ox_cpu_kernels_quantize;

/* Elements per parallel task: small enough to spread, big enough that
 * scheduling costs nothing next to the arithmetic. */
#define GRAIN 16384

/* Where element i of x finds its scale and zero point. */
typedef enum qmode { Q_TENSOR, Q_AXIS, Q_BLOCKED } qmode;

typedef struct qlayout {
    qmode mode;
    int64_t dim;    /* x's size along the axis */
    int64_t inner;  /* elements of x per step along the axis */
    int64_t block;  /* Q_BLOCKED: block size along the axis */
    int64_t blocks; /* Q_BLOCKED: the scale's size along the axis */
} qlayout;

static inline int64_t param_index(const qlayout *l, int64_t i) {
    if (l->mode == Q_TENSOR) return 0;
    int64_t t = i / l->inner, d = t % l->dim;
    if (l->mode == Q_AXIS) return d;
    return ((t / l->dim) * l->blocks + d / l->block) * l->inner + i % l->inner;
}

static int quant_layout(ox_kernel_ctx *ctx, const ox_tensor *x, const ox_tensor *scale,
                        const ox_tensor *zp, qlayout *l) {
    const char *op = ctx->node->op_type;
    int v = ox_op_since_version(ctx->node->domain, op, ctx->node->opset);
    int64_t ns = ox_tensor_numel(scale);
    memset(l, 0, sizeof *l);
    l->dim = l->inner = l->block = l->blocks = 1;
    /* one value each is per-tensor whatever the ranks ([] with [1]) */
    if (zp && !(ns == 1 && ox_tensor_numel(zp) == 1) &&
        !ox_shape_equal(zp->dims, zp->rank, scale->dims, scale->rank))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: scale (%lld values) and zero point (%lld values) must have the "
                              "same shape",
                              op, (long long)ns, (long long)ox_tensor_numel(zp));
    if (ns == 1) return 0; /* per-tensor, whatever the scale's rank */
    if (v < 13)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: scale must hold one value before version 13, got %lld", op,
                              (long long)ns);
    int64_t axis = ir_attr_int(ctx->node, "axis", 1);
    if (axis < -(int64_t)x->rank || axis >= x->rank)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: axis %lld is out of range for rank %d",
                              op, (long long)axis, x->rank);
    if (axis < 0) axis += x->rank;
    int64_t inner = 1;
    for (int d = (int)axis + 1; d < x->rank; d++) inner *= x->dims[d];
    l->dim = x->dims[axis] > 0 ? x->dims[axis] : 1;
    l->inner = inner > 0 ? inner : 1;
    int64_t block = v >= 21 ? ir_attr_int(ctx->node, "block_size", 0) : 0;
    if (block <= 0) {
        if (scale->rank != 1 || x->dims[axis] != ns)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: scale has %lld values but x has %lld along axis %lld", op,
                                  (long long)ns, (long long)x->dims[axis], (long long)axis);
        l->mode = Q_AXIS;
        return 0;
    }
    if (scale->rank != x->rank)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: blocked quantization needs a scale of rank %d, got %d", op,
                              x->rank, scale->rank);
    for (int d = 0; d < x->rank; d++) {
        int64_t want = d == axis ? (x->dims[d] + block - 1) / block : x->dims[d];
        if (scale->dims[d] != want)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: scale has %lld values along dimension %d, blocked "
                                  "quantization with block_size %lld needs %lld",
                                  op, (long long)scale->dims[d], d, (long long)block,
                                  (long long)want);
    }
    l->mode = Q_BLOCKED;
    l->block = block;
    l->blocks = scale->dims[axis];
    return 0;
}

/* A double outside float's range has no defined conversion to float. */
static inline float to_f32(double v) {
    if (isnan(v)) return (float)v;
    if (v > FLT_MAX) return INFINITY;
    if (v < -FLT_MAX) return -INFINITY;
    return (float)v;
}

/* v rounded to the precision type p, as a double. */
static inline double round_to(ox_dtype p, double v) {
    switch (p) {
    case ONYX_FLOAT32: return to_f32(v);
    case ONYX_FLOAT16: return ox_half_to_float(ox_float_to_half(to_f32(v)));
    case ONYX_BFLOAT16: return ox_bf16_to_float(ox_float_to_bf16(to_f32(v)));
    default: return v;
    }
}

/* Range of an integer quantized type; 0 for float outputs. */
static int int_range(ox_dtype t, int64_t *lo, int64_t *hi) {
    switch (t) {
    case ONYX_UINT8: *lo = 0, *hi = 255; return 1;
    case ONYX_INT8: *lo = -128, *hi = 127; return 1;
    case ONYX_UINT16: *lo = 0, *hi = 65535; return 1;
    case ONYX_INT16: *lo = -32768, *hi = 32767; return 1;
    default:
        if (ox_dtype_is_narrow_int(t)) {
            ox_narrow_int_range(t, lo, hi);
            return 1;
        }
        return 0;
    }
}

static inline int64_t saturate_round(double v, int64_t zp, int64_t lo, int64_t hi) {
    if (isnan(v)) return zp < lo ? lo : zp > hi ? hi : zp;
    double q = nearbyint(v) + (double)zp;
    if (q <= (double)lo) return lo;
    if (q >= (double)hi) return hi;
    return (int64_t)q;
}

/* ---------------------------------------------------------------- */
/* QuantizeLinear */

typedef struct quant_job {
    const void *x;
    ox_dtype xt;
    void *y;
    ox_dtype yt;
    const void *scale;
    ox_dtype st;
    const void *zp; /* NULL: every element uses zp_fixed */
    ox_dtype zt;
    int64_t zp_fixed;
    ox_dtype prec; /* type the division rounds to */
    int saturate;
    qlayout l;
    int avx2; /* quant_fast may take quant_run_avx2 */
} quant_job;

#ifdef OX_QUANT_X86
/* y[k] = saturate(round_half_even(x[k] / s) + zp) for 8-bit y, eight at a
 * time: the float32 division and rounding give quant_fast's integers (an
 * integer-valued float rounds the same in float and double), and adding
 * zp in float is exact wherever the result is not clamped anyway. NaN
 * becomes zp, as saturate_round makes it. */
__attribute__((target("avx2"))) static int64_t quant_run_avx2(const float *x, float s, int64_t zp, int is_signed,
                                                              void *y, int64_t n) {
    const float lo = is_signed ? -128.0f : 0.0f, hi = is_signed ? 127.0f : 255.0f;
    const __m256 vs = _mm256_set1_ps(s), vz = _mm256_set1_ps((float)zp), vlo = _mm256_set1_ps(lo),
                 vhi = _mm256_set1_ps(hi);
    const __m256 vnan = _mm256_min_ps(_mm256_max_ps(vz, vlo), vhi);
    int64_t k = 0;
    for (; k + 8 <= n; k += 8) {
        __m256 q = _mm256_div_ps(_mm256_loadu_ps(x + k), vs);
        __m256 nan = _mm256_cmp_ps(q, q, _CMP_UNORD_Q);
        q = _mm256_add_ps(_mm256_round_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), vz);
        q = _mm256_blendv_ps(_mm256_min_ps(_mm256_max_ps(q, vlo), vhi), vnan, nan);
        __m256i i32 = _mm256_cvtps_epi32(q);
        __m128i i16 = _mm_packs_epi32(_mm256_castsi256_si128(i32), _mm256_extracti128_si256(i32, 1));
        __m128i i8 = is_signed ? _mm_packs_epi16(i16, i16) : _mm_packus_epi16(i16, i16);
        _mm_storel_epi64((__m128i *)(void *)((uint8_t *)y + k), i8);
    }
    return k;
}

/* The smallest and largest of x[0..n) by eight lanes, NaNs left out
 * (minps and maxps return their second operand when either is NaN), into
 * *lo and *hi; returns how many values it read (a multiple of 8). */
__attribute__((target("avx2"))) static int64_t range_avx2(const float *x, int64_t n, float *lo, float *hi) {
    __m256 vlo = _mm256_set1_ps(*lo), vhi = _mm256_set1_ps(*hi);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        vlo = _mm256_min_ps(v, vlo);
        vhi = _mm256_max_ps(v, vhi);
    }
    float l[8], h[8];
    _mm256_storeu_ps(l, vlo);
    _mm256_storeu_ps(h, vhi);
    for (int k = 0; k < 8; k++) {
        if (l[k] < *lo) *lo = l[k];
        if (h[k] > *hi) *hi = h[k];
    }
    return i;
}
#endif

/* float32 x, float32 scale, int8/uint8 y, per-tensor or per-axis: the
 * case real models spend their time in. Dividing in float matches
 * float32 arithmetic exactly. */
static void quant_fast(const quant_job *j, int64_t b, int64_t e) {
    const float *x = j->x, *sc = j->scale;
    int64_t lo = j->yt == ONYX_UINT8 ? 0 : -128, hi = j->yt == ONYX_UINT8 ? 255 : 127;
    int64_t i = b;
    while (i < e) {
        int64_t end = e, c = 0;
        if (j->l.mode == Q_AXIS) {
            int64_t slice = i / j->l.inner;
            c = slice % j->l.dim;
            end = (slice + 1) * j->l.inner;
            if (end > e) end = e;
        }
        float s = sc[c];
        int64_t zp = j->zp ? ox_get_i64(j->zp, j->zt, (size_t)c) : j->zp_fixed;
        int64_t done = i;
#ifdef OX_QUANT_X86
        if (j->avx2) done += quant_run_avx2(x + i, s, zp, j->yt == ONYX_INT8, (uint8_t *)j->y + i, end - i);
#endif
        if (j->yt == ONYX_UINT8) {
            uint8_t *y = j->y;
            for (int64_t k = done; k < end; k++) y[k] = (uint8_t)saturate_round((double)(x[k] / s), zp, lo, hi);
        } else {
            int8_t *y = j->y;
            for (int64_t k = done; k < end; k++) y[k] = (int8_t)saturate_round((double)(x[k] / s), zp, lo, hi);
        }
        i = end;
    }
}

static void quant_range(void *arg, int64_t b, int64_t e) {
    const quant_job *j = arg;
    if (j->xt == ONYX_FLOAT32 && j->st == ONYX_FLOAT32 && j->prec == ONYX_FLOAT32 &&
        (j->yt == ONYX_UINT8 || j->yt == ONYX_INT8) && j->l.mode != Q_BLOCKED) {
        quant_fast(j, b, e);
        return;
    }
    int64_t lo = 0, hi = 0;
    int is_int = int_range(j->yt, &lo, &hi);
    for (int64_t i = b; i < e; i++) {
        size_t p = (size_t)param_index(&j->l, i);
        double q = round_to(j->prec, ox_get_f64(j->x, j->xt, (size_t)i) / ox_get_f64(j->scale, j->st, p));
        if (is_int) {
            int64_t zp = j->zp ? ox_get_i64(j->zp, j->zt, p) : j->zp_fixed;
            ox_set_i64(j->y, j->yt, (size_t)i, saturate_round(q, zp, lo, hi));
        } else if (ox_dtype_is_float8(j->yt)) {
            ((uint8_t *)j->y)[i] = ox_float_to_narrow(j->yt, q, j->saturate);
        } else {
            /* float4/float6: the reference adds the zero point in the
             * precision type before converting */
            double zp = j->zp ? ox_get_f64(j->zp, j->zt, p) : 0.0;
            ((uint8_t *)j->y)[i] = ox_float_to_narrow(j->yt, round_to(j->prec, q + zp), 1);
        }
    }
}

/* The type numpy's x / scale computes in, as the reference divides. */
static ox_dtype default_precision(ox_dtype xt, ox_dtype st) {
    if (xt == ONYX_INT32 || st == ONYX_INT32 || xt == ONYX_FLOAT64 || st == ONYX_FLOAT64)
        return ONYX_FLOAT64;
    if (xt == st) return xt;
    if (st == ONYX_FLOAT8E8M0) return xt; /* exact powers of two */
    return ONYX_FLOAT32;                   /* float16 with bfloat16, or either with float32 */
}

static int quantize_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ox_cpu_input(ctx, 0), *scale = ox_cpu_input(ctx, 1),
                    *zp = ox_cpu_input(ctx, 2);
    ox_tensor *y = ox_cpu_output(ctx, 0);
    if (!x || !scale || !y)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "QuantizeLinear: x and y_scale are required");
    if (x->dtype != ONYX_FLOAT32 && x->dtype != ONYX_INT32 && x->dtype != ONYX_FLOAT16 &&
        x->dtype != ONYX_BFLOAT16)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "QuantizeLinear: x of type %s is not supported",
                              ox_dtype_name(x->dtype));
    if (!ox_dtype_is_float(scale->dtype) && scale->dtype != ONYX_INT32 &&
        scale->dtype != ONYX_FLOAT8E8M0)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED,
                              "QuantizeLinear: y_scale of type %s is not supported",
                              ox_dtype_name(scale->dtype));
    int64_t lo, hi;
    if (!int_range(y->dtype, &lo, &hi) && !ox_dtype_is_float8(y->dtype) &&
        y->dtype != ONYX_FLOAT4E2M1 && y->dtype != ONYX_FLOAT6E2M3 && y->dtype != ONYX_FLOAT6E3M2)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "QuantizeLinear: output type %s is not supported",
                              ox_dtype_name(y->dtype));
    if (zp && zp->dtype != y->dtype)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "QuantizeLinear: y_zero_point is %s but the output is %s",
                              ox_dtype_name(zp->dtype), ox_dtype_name(y->dtype));
    int64_t prec = ir_attr_int(ctx->node, "precision", 0);
    quant_job j = {x->data, x->dtype, y->data, y->dtype, scale->data, scale->dtype,
                   zp ? zp->data : NULL, zp ? zp->dtype : ONYX_UNDEFINED, 0,
                   prec > 0 && prec < OX_DTYPE_COUNT ? (ox_dtype)prec
                                                     : default_precision(x->dtype, scale->dtype),
                   ir_attr_int(ctx->node, "saturate", 1) != 0, {0}, ox_cpu_isa_active() >= OX_ISA_AVX2};
    if (quant_layout(ctx, x, scale, zp, &j.l)) return -1;
    int64_t n = ox_tensor_numel(x);
    if (n > 0) ox_parallel_for(ctx->pool, n, GRAIN, quant_range, &j);
    return 0;
}

/* ---------------------------------------------------------------- */
/* DequantizeLinear */

typedef struct dequant_job {
    const void *x;
    ox_dtype xt;
    void *y;
    ox_dtype yt;
    const void *scale;
    ox_dtype st;
    const void *zp; /* NULL: no zero point (or one that must be ignored) */
    ox_dtype zt;
    qlayout l;
} dequant_job;

static void dequant_range(void *arg, int64_t b, int64_t e) {
    const dequant_job *j = arg;
    for (int64_t i = b; i < e; i++) {
        size_t p = (size_t)param_index(&j->l, i);
        /* float32 of x first (the reference's x.astype(float32)); exact
         * for every type but large int32 values */
        double dx = (double)to_f32(ox_get_f64(j->x, j->xt, (size_t)i));
        if (j->zp) dx -= ox_get_f64(j->zp, j->zt, p);
        /* both factors fit in 24 bits, so the double product is exact and
         * rounds once to float32, as float32 arithmetic would */
        float v = to_f32(dx * ox_get_f64(j->scale, j->st, p));
        switch (j->yt) {
        case ONYX_FLOAT32: ((float *)j->y)[i] = v; break;
        case ONYX_FLOAT16: ((uint16_t *)j->y)[i] = ox_float_to_half(v); break;
        default: ((uint16_t *)j->y)[i] = ox_float_to_bf16(v); break;
        }
    }
}

static int dequantize_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ox_cpu_input(ctx, 0), *scale = ox_cpu_input(ctx, 1),
                    *zp = ox_cpu_input(ctx, 2);
    ox_tensor *y = ox_cpu_output(ctx, 0);
    if (!x || !scale || !y)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "DequantizeLinear: x and x_scale are required");
    int64_t lo, hi;
    if (x->dtype != ONYX_INT32 && !int_range(x->dtype, &lo, &hi) && !ox_dtype_is_narrow_float(x->dtype))
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "DequantizeLinear: x of type %s is not supported",
                              ox_dtype_name(x->dtype));
    if (zp && zp->dtype != x->dtype)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "DequantizeLinear: x_zero_point is %s but x is %s", ox_dtype_name(zp->dtype),
                              ox_dtype_name(x->dtype));
    if (!ox_dtype_is_float(scale->dtype) && scale->dtype != ONYX_FLOAT8E8M0)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED,
                              "DequantizeLinear: x_scale of type %s is not supported",
                              ox_dtype_name(scale->dtype));
    if (y->dtype != ONYX_FLOAT32 && y->dtype != ONYX_FLOAT16 && y->dtype != ONYX_BFLOAT16)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "DequantizeLinear: output type %s is not supported",
                              ox_dtype_name(y->dtype));
    /* float8 and float4 zero points must be zero; the reference skips them */
    int use_zp = zp && !ox_dtype_is_float8(x->dtype) && x->dtype != ONYX_FLOAT4E2M1;
    dequant_job j = {x->data, x->dtype, y->data, y->dtype, scale->data, scale->dtype,
                     use_zp ? zp->data : NULL, zp ? zp->dtype : ONYX_UNDEFINED, {0}};
    if (quant_layout(ctx, x, scale, zp, &j.l)) return -1;
    int64_t n = ox_tensor_numel(x);
    if (n > 0) ox_parallel_for(ctx->pool, n, GRAIN, dequant_range, &j);
    return 0;
}

/* ---------------------------------------------------------------- */
/* DynamicQuantizeLinear: uint8 only, as the spec allows. */

static int dynamic_quantize_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ox_cpu_input(ctx, 0);
    ox_tensor *y = ox_cpu_output(ctx, 0), *ys = ox_cpu_output(ctx, 1), *yz = ox_cpu_output(ctx, 2);
    if (!x || x->dtype != ONYX_FLOAT32)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "DynamicQuantizeLinear: x must be float32");
    const float *xd = x->data;
    int64_t n = ox_tensor_numel(x);
    /* The range always includes 0 so that 0 is exactly representable;
     * NaNs are left out of it. */
    float lo = 0.0f, hi = 0.0f;
    int avx2 = ox_cpu_isa_active() >= OX_ISA_AVX2;
    int64_t done = 0;
#ifdef OX_QUANT_X86
    if (avx2) done = range_avx2(xd, n, &lo, &hi);
#endif
    for (int64_t i = done; i < n; i++) {
        if (xd[i] < lo) lo = xd[i];
        if (xd[i] > hi) hi = xd[i];
    }
    if (isinf(lo) || isinf(hi))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "DynamicQuantizeLinear: x contains an infinite value, so no finite scale exists");
    /* An all-zero input would give scale 0; the reference uses a unit
     * range instead, which keeps every value (all zeros) exact. */
    float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
    float zpf = 0.0f - lo / scale;
    if (zpf < 0.0f) zpf = 0.0f;
    if (zpf > 255.0f) zpf = 255.0f;
    int64_t zp = (int64_t)nearbyintf(zpf);
    if (ys) ((float *)ys->data)[0] = scale;
    if (yz) ((uint8_t *)yz->data)[0] = (uint8_t)zp;
    if (y && n > 0) {
        quant_job j = {x->data, ONYX_FLOAT32, y->data, ONYX_UINT8, &scale, ONYX_FLOAT32,
                       NULL, ONYX_UNDEFINED, zp, ONYX_FLOAT32, 1, {Q_TENSOR, 1, n, 1, 1}, avx2};
        ox_parallel_for(ctx->pool, n, GRAIN, quant_range, &j);
    }
    return 0;
}

static int supports_quantize(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    (void)node;
    if (n_inputs < 1 || !inputs[0]) return 1;
    ox_dtype t = inputs[0]->dtype;
    return t == ONYX_FLOAT32 || t == ONYX_INT32 || t == ONYX_FLOAT16 || t == ONYX_BFLOAT16 ||
           t == ONYX_UNDEFINED;
}

static int supports_dequantize(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    (void)node;
    if (n_inputs < 1 || !inputs[0]) return 1;
    ox_dtype t = inputs[0]->dtype;
    int64_t lo, hi;
    return t == ONYX_INT32 || t == ONYX_UNDEFINED || int_range(t, &lo, &hi) ||
           ox_dtype_is_narrow_float(t);
}

static int supports_dynamic(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    (void)node;
    if (n_inputs < 1 || !inputs[0]) return 1;
    return inputs[0]->dtype == ONYX_FLOAT32 || inputs[0]->dtype == ONYX_UNDEFINED;
}

static const ox_kernel_def KERNELS[] = {
    {"", "QuantizeLinear", 10, 28, quantize_compute, supports_quantize, NULL, NULL, NULL},
    {"", "DequantizeLinear", 10, 28, dequantize_compute, supports_dequantize, NULL, NULL, NULL},
    {"", "DynamicQuantizeLinear", 11, 28, dynamic_quantize_compute, supports_dynamic, NULL, NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_quantize = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
