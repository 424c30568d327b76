/* Private to the CPU image kernels (image.c, resize.c, grid_sample.c):
 * the entry points of the kernels that live outside image.c, which owns
 * the family's kernel table, and small helpers they share. */
#ifndef ONYX_EP_CPU_KERNELS_IMAGE_H
#define ONYX_EP_CPU_KERNELS_IMAGE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "ep/ep.h"

/* resize.c */
int ox_cpu_resize_compute(ox_kernel_ctx *ctx);
int ox_cpu_resize_supports(const ir_node *node, const ir_type *const *inputs, int n_inputs);
/* grid_sample.c */
int ox_cpu_gridsample_compute(ox_kernel_ctx *ctx);
int ox_cpu_affine_grid_compute(ox_kernel_ctx *ctx);
/* 1 unless input 0 or 1 has a known non-float element type. */
int ox_cpu_image_float_inputs(const ir_node *node, const ir_type *const *inputs, int n_inputs);

/* Stores a computed value into any numeric element type. Integers round
 * to nearest and saturate, so an interpolated value never wraps around
 * and NaN never reaches an integer conversion. */
static inline void ox_image_store(void *data, ox_dtype t, size_t i, double v) {
    double lo, hi;
    switch (t) {
    case ONYX_INT8:
        lo = -128.0;
        hi = 127.0;
        break;
    case ONYX_UINT8:
        lo = 0.0;
        hi = 255.0;
        break;
    case ONYX_INT16:
        lo = -32768.0;
        hi = 32767.0;
        break;
    case ONYX_UINT16:
        lo = 0.0;
        hi = 65535.0;
        break;
    case ONYX_INT32:
        lo = -2147483648.0;
        hi = 2147483647.0;
        break;
    case ONYX_UINT32:
        lo = 0.0;
        hi = 4294967295.0;
        break;
    case ONYX_INT64:
        lo = -9223372036854775808.0;
        hi = 9223372036854774784.0;
        break;
    case ONYX_UINT64: {
        double r = isnan(v) ? 0.0 : nearbyint(v);
        uint64_t u = r <= 0 ? 0 : r >= 18446744073709549568.0 ? UINT64_MAX : (uint64_t)r;
        ((uint64_t *)data)[i] = u;
        return;
    }
    default:
        ox_set_f64(data, t, i, v);
        return;
    }
    double r = isnan(v) ? 0.0 : nearbyint(v);
    if (r < lo) r = lo;
    if (r > hi) r = hi;
    ox_set_i64(data, t, i, (int64_t)r);
}

/* Float32 view of a float tensor: the data itself for float32, else a
 * converted heap copy (returned in *owned for the caller to free). */
static inline const float *ox_image_as_f32(const ox_tensor *t, float **owned) {
    *owned = NULL;
    if (t->dtype == ONYX_FLOAT32) return (const float *)t->data;
    int64_t n = ox_tensor_numel(t);
    float *b = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    if (!b) return NULL;
    for (int64_t i = 0; i < n; i++) b[i] = (float)ox_get_f64(t->data, t->dtype, (size_t)i);
    *owned = b;
    return b;
}

static inline const double *ox_image_as_f64(const ox_tensor *t, double **owned) {
    *owned = NULL;
    if (t->dtype == ONYX_FLOAT64) return (const double *)t->data;
    int64_t n = ox_tensor_numel(t);
    double *b = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (!b) return NULL;
    if (t->dtype == ONYX_FLOAT32) {
        const float *f = (const float *)t->data;
        for (int64_t i = 0; i < n; i++) b[i] = f[i];
    } else {
        for (int64_t i = 0; i < n; i++) b[i] = ox_get_f64(t->data, t->dtype, (size_t)i);
    }
    *owned = b;
    return b;
}

/* Keys' cubic convolution kernel with parameter a, at distance d. */
static inline double ox_image_cubic_weight(double d, double a) {
    d = fabs(d);
    if (d <= 1.0) return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
    if (d < 2.0) return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
    return 0.0;
}

#endif
