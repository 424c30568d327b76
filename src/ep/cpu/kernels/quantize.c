/* CPU kernels of the linear quantization operators. Quantization divides
 * in float32 (as the reference does for float32 inputs), rounds half to
 * even, adds the zero point and saturates to the target range; NaN maps
 * to the zero point so that no float-to-integer conversion is undefined
 * (a zero scale thus gives the zero point for 0 and saturates the rest).
 * The tensor is walked as [outer, channels, inner] so that per-axis and
 * per-tensor parameters share one loop (per-tensor: one channel). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"

extern const ox_kernel_table ox_cpu_kernels_quantize;

/* Elements per parallel task: small enough to spread, big enough that
 * scheduling costs nothing next to the arithmetic. */
#define GRAIN 16384

/* Layout of the scale / zero point against x. */
typedef struct qlayout {
    int64_t channels; /* values in scale (1 when per-tensor) */
    int64_t inner;    /* elements of x per channel slice */
} qlayout;

/* End of the run of elements from i (stopping at e) that share one
 * scale and zero point; *c is their channel. */
static int64_t channel_run(const qlayout *l, int64_t i, int64_t e, int64_t *c) {
    int64_t slice = i / l->inner;
    *c = slice % l->channels;
    int64_t end = (slice + 1) * l->inner;
    return end > e ? e : end;
}

static int quant_layout(ox_kernel_ctx *ctx, const ox_tensor *x, const ox_tensor *scale,
                        const ox_tensor *zp, qlayout *l) {
    const char *op = ctx->node->op_type;
    int64_t n = ox_tensor_numel(x);
    int64_t ns = ox_tensor_numel(scale);
    if (scale->dtype != ONYX_FLOAT32)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: scale must be float32, got %s", op,
                              ox_dtype_name(scale->dtype));
    if (zp && (ox_tensor_numel(zp) != ns || zp->rank != scale->rank))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: scale (%lld values) and zero point (%lld values) must have the same "
                              "shape",
                              op, (long long)ns, (long long)ox_tensor_numel(zp));
    if (scale->rank > 1)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: scale must be a scalar or 1-D, got rank %d",
                              op, scale->rank);
    if (ns == 1) {
        l->channels = 1;
        l->inner = n > 0 ? n : 1;
        return 0;
    }
    if (ctx->node->opset < 13)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: scale must hold one value before opset 13, got %lld", op, (long long)ns);
    int64_t axis = ir_attr_int(ctx->node, "axis", 1);
    if (axis < -(int64_t)x->rank || axis >= x->rank)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: axis %lld is out of range for rank %d", op,
                              (long long)axis, x->rank);
    if (axis < 0) axis += x->rank;
    if (x->dims[axis] != ns)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: scale has %lld values but x has %lld along axis %lld", op,
                              (long long)ns, (long long)x->dims[axis], (long long)axis);
    int64_t inner = 1;
    for (int d = (int)axis + 1; d < x->rank; d++) inner *= x->dims[d];
    l->channels = ns;
    l->inner = inner > 0 ? inner : 1;
    return 0;
}


/* ---------------------------------------------------------------- */
/* QuantizeLinear */

static inline int64_t saturate_round(double v, int64_t zp, int64_t lo, int64_t hi) {
    if (isnan(v)) return zp < lo ? lo : zp > hi ? hi : zp;
    double q = nearbyint(v) + (double)zp;
    if (q <= (double)lo) return lo;
    if (q >= (double)hi) return hi;
    return (int64_t)q;
}

typedef struct quant_job {
    const void *x;
    ox_dtype xt;
    void *y;
    ox_dtype yt;
    const float *scale;
    const ox_tensor *zp; /* NULL: every channel uses zp_fixed */
    int64_t zp_fixed;
    qlayout l;
} quant_job;

static int64_t quant_zp(const quant_job *j, int64_t c) {
    return j->zp ? ox_get_i64(j->zp->data, j->zp->dtype, (size_t)c) : j->zp_fixed;
}

/* One run of elements sharing a channel. float32 inputs divide in float
 * so results match float32 arithmetic exactly; int32 inputs divide in
 * double, where every int32 is exact. */
static void quant_segment(const quant_job *j, int64_t b, int64_t e, float s, int64_t zp) {
    int64_t lo = j->yt == ONYX_UINT8 ? 0 : -128, hi = j->yt == ONYX_UINT8 ? 255 : 127;
    if (j->xt == ONYX_FLOAT32) {
        const float *x = j->x;
        if (j->yt == ONYX_UINT8) {
            uint8_t *y = j->y;
            for (int64_t i = b; i < e; i++) y[i] = (uint8_t)saturate_round((double)(x[i] / s), zp, lo, hi);
        } else {
            int8_t *y = j->y;
            for (int64_t i = b; i < e; i++) y[i] = (int8_t)saturate_round((double)(x[i] / s), zp, lo, hi);
        }
    } else {
        const int32_t *x = j->x;
        for (int64_t i = b; i < e; i++) {
            int64_t q = saturate_round((double)x[i] / (double)s, zp, lo, hi);
            if (j->yt == ONYX_UINT8)
                ((uint8_t *)j->y)[i] = (uint8_t)q;
            else
                ((int8_t *)j->y)[i] = (int8_t)q;
        }
    }
}

static void quant_range(void *arg, int64_t b, int64_t e) {
    const quant_job *j = arg;
    int64_t i = b;
    while (i < e) {
        int64_t c, end = channel_run(&j->l, i, e, &c);
        quant_segment(j, i, end, j->scale[c], quant_zp(j, c));
        i = end;
    }
}

static int quantize_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ox_cpu_input(ctx, 0), *scale = ox_cpu_input(ctx, 1),
                    *zp = ox_cpu_input(ctx, 2);
    ox_tensor *y = ox_cpu_output(ctx, 0);
    if (!x || !scale || !y)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "QuantizeLinear: x and y_scale are required");
    if (x->dtype != ONYX_FLOAT32 && x->dtype != ONYX_INT32)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "QuantizeLinear: x of type %s is not supported",
                              ox_dtype_name(x->dtype));
    if (y->dtype != ONYX_UINT8 && y->dtype != ONYX_INT8)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "QuantizeLinear: output type %s is not supported",
                              ox_dtype_name(y->dtype));
    if (zp && zp->dtype != y->dtype)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "QuantizeLinear: y_zero_point is %s but the output is %s",
                              ox_dtype_name(zp->dtype), ox_dtype_name(y->dtype));
    quant_job j = {x->data, x->dtype, y->data, y->dtype, scale->data, zp, 0, {1, 1}};
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
    float *y;
    const float *scale;
    const ox_tensor *zp;
    qlayout l;
} dequant_job;

static void dequant_range(void *arg, int64_t b, int64_t e) {
    const dequant_job *j = arg;
    int64_t i = b;
    while (i < e) {
        int64_t c, end = channel_run(&j->l, i, e, &c);
        float s = j->scale[c];
        int64_t zp = j->zp ? ox_get_i64(j->zp->data, j->zp->dtype, (size_t)c) : 0;
        switch (j->xt) {
        case ONYX_UINT8: {
            const uint8_t *x = j->x;
            for (int64_t k = i; k < end; k++) j->y[k] = (float)((int32_t)x[k] - (int32_t)zp) * s;
            break;
        }
        case ONYX_INT8: {
            const int8_t *x = j->x;
            for (int64_t k = i; k < end; k++) j->y[k] = (float)((int32_t)x[k] - (int32_t)zp) * s;
            break;
        }
        default: {
            /* int64 difference: int32 minus int32 can leave int32 */
            const int32_t *x = j->x;
            for (int64_t k = i; k < end; k++) j->y[k] = (float)((int64_t)x[k] - zp) * s;
            break;
        }
        }
        i = end;
    }
}

static int dequantize_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ox_cpu_input(ctx, 0), *scale = ox_cpu_input(ctx, 1),
                    *zp = ox_cpu_input(ctx, 2);
    ox_tensor *y = ox_cpu_output(ctx, 0);
    if (!x || !scale || !y)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "DequantizeLinear: x and x_scale are required");
    if (x->dtype != ONYX_UINT8 && x->dtype != ONYX_INT8 && x->dtype != ONYX_INT32)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "DequantizeLinear: x of type %s is not supported",
                              ox_dtype_name(x->dtype));
    if (zp && zp->dtype != x->dtype)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "DequantizeLinear: x_zero_point is %s but x is %s", ox_dtype_name(zp->dtype),
                              ox_dtype_name(x->dtype));
    if (y->dtype != ONYX_FLOAT32)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "DequantizeLinear: output type %s is not supported",
                              ox_dtype_name(y->dtype));
    dequant_job j = {x->data, x->dtype, y->data, scale->data, zp, {1, 1}};
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
    for (int64_t i = 0; i < n; i++) {
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
        quant_job j = {x->data, ONYX_FLOAT32, y->data, ONYX_UINT8, &scale, NULL, zp, {1, n}};
        ox_parallel_for(ctx->pool, n, GRAIN, quant_range, &j);
    }
    return 0;
}

static int supports_quantize(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    (void)node;
    if (n_inputs < 1 || !inputs[0]) return 1;
    ox_dtype t = inputs[0]->dtype;
    return t == ONYX_FLOAT32 || t == ONYX_INT32 || t == ONYX_UNDEFINED;
}

static int supports_dequantize(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    (void)node;
    if (n_inputs < 1 || !inputs[0]) return 1;
    ox_dtype t = inputs[0]->dtype;
    return t == ONYX_UINT8 || t == ONYX_INT8 || t == ONYX_INT32 || t == ONYX_UNDEFINED;
}

static int supports_dynamic(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    (void)node;
    if (n_inputs < 1 || !inputs[0]) return 1;
    return inputs[0]->dtype == ONYX_FLOAT32 || inputs[0]->dtype == ONYX_UNDEFINED;
}

static const ox_kernel_def KERNELS[] = {
    {"", "QuantizeLinear", 10, 17, quantize_compute, supports_quantize, NULL, NULL},
    {"", "DequantizeLinear", 10, 17, dequantize_compute, supports_dequantize, NULL, NULL},
    {"", "DynamicQuantizeLinear", 11, 17, dynamic_quantize_compute, supports_dynamic, NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_quantize = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
