/* CPU kernels of ConvInteger and QLinearConv: the geometry as Conv's
 * (conv.c), the products by the exact 8-bit GEMM over a byte im2col
 * (conv_q8.c), then QLinearConv's requantization. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "ep/cpu/kernels/conv_extra.h"
#include "ep/cpu/kernels/conv_q8.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/cpu/kernels/saturate.h"

/* Zero point (or scale) j of a scalar-or-vector tensor; 0 if absent. */
static double per_channel(const ox_tensor *t, int64_t j) {
    if (!t) return 0.0;
    int64_t n = ox_tensor_numel(t);
    if (n <= 1) return n == 1 ? ox_get_f64(t->data, t->dtype, 0) : 0.0;
    return ox_get_f64(t->data, t->dtype, (size_t)j);
}

static int check_per_channel(ox_kernel_ctx *ctx, const ox_tensor *t, int64_t m, const char *what) {
    if (!t) return 0;
    int64_t n = ox_tensor_numel(t);
    if (t->rank > 1 || (n != 1 && n != m))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: %s must have 1 or %lld values, got %lld",
                              ctx->node->op_type, what, (long long)m, (long long)n);
    return 0;
}

static int is_q8(const ox_tensor *t) { return t->dtype == ONYX_INT8 || t->dtype == ONYX_UINT8; }

/* acc = the exact convolution of x - x_zero_point with w - w_zero_point
 * (per output channel). */
static int quant_conv(ox_kernel_ctx *ctx, int xi, int xzi, int wi, int wzi, const conv_geom *g, int32_t *acc) {
    const ox_tensor *X = ox_cpu_input(ctx, xi), *W = ox_cpu_input(ctx, wi);
    const ox_tensor *XZ = ox_cpu_input(ctx, xzi), *WZ = ox_cpu_input(ctx, wzi);
    if (check_per_channel(ctx, XZ, 1, "x_zero_point") || check_per_channel(ctx, WZ, g->M, "w_zero_point"))
        return -1;
    if (!is_q8(X) || !is_q8(W) || (XZ && XZ->dtype != X->dtype) || (WZ && WZ->dtype != W->dtype))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: x and w must be int8 or uint8, and their zero points of the same type",
                              ctx->node->op_type);
    int32_t *wz = malloc(sizeof(int32_t) * (size_t)(g->M > 0 ? g->M : 1));
    if (!wz) return ox_cpu_oom(ctx);
    for (int64_t m = 0; m < g->M; m++) wz[m] = (int32_t)per_channel(WZ, m);
    int rc = ox_conv_q8(ctx->pool, ctx->stop, g, X, (int32_t)per_channel(XZ, 0), W, wz, acc);
    free(wz);
    return rc ? ox_cpu_oom(ctx) : 0;
}

int ox_cpu_conv_integer_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = ox_cpu_input(ctx, 0), *W = ox_cpu_input(ctx, 1);
    ox_tensor *Y = ctx->outputs[0];
    conv_geom g;
    if (ox_conv_geom_make(ctx, X, W, Y, 0, &g)) return -1;
    if (Y->dtype != ONYX_INT32) return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "ConvInteger: output must be int32");
    return quant_conv(ctx, 0, 2, 1, 3, &g, Y->data);
}

int ox_cpu_qlinear_conv_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = ox_cpu_input(ctx, 0), *XS = ox_cpu_input(ctx, 1),
                    *W = ox_cpu_input(ctx, 3), *WS = ox_cpu_input(ctx, 4);
    const ox_tensor *YS = ox_cpu_input(ctx, 6), *YZ = ox_cpu_input(ctx, 7),
                    *B = ox_cpu_input(ctx, 8);
    ox_tensor *Y = ctx->outputs[0];
    conv_geom g;
    if (ox_conv_geom_make(ctx, X, W, Y, 0, &g) || ox_conv_check_bias(ctx, B, g.M)) return -1;
    if (check_per_channel(ctx, XS, 1, "x_scale") || check_per_channel(ctx, WS, g.M, "w_scale") ||
        check_per_channel(ctx, YS, 1, "y_scale") || check_per_channel(ctx, YZ, 1, "y_zero_point"))
        return -1;
    if (Y->dtype != ONYX_UINT8 && Y->dtype != ONYX_INT8)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "QLinearConv: output must be int8 or uint8");
    int64_t ny = ox_tensor_numel(Y);
    int32_t *acc = malloc(sizeof(int32_t) * (size_t)(ny > 0 ? ny : 1));
    if (!acc) return ox_cpu_oom(ctx);
    if (quant_conv(ctx, 0, 2, 3, 5, &g, acc)) {
        free(acc);
        return -1;
    }
    double xs = per_channel(XS, 0), ys = per_channel(YS, 0), yz = per_channel(YZ, 0);
    double lo = Y->dtype == ONYX_UINT8 ? 0 : -128, hi = Y->dtype == ONYX_UINT8 ? 255 : 127;
    for (int64_t n = 0; n < g.N; n++)
        for (int64_t m = 0; m < g.M; m++) {
            /* scales are float32 in the model; multiply as float like the spec's reference */
            float scale = (float)xs * (float)per_channel(WS, m) / (float)ys;
            double bias = B ? (double)((const int32_t *)B->data)[m] : 0.0;
            int64_t base = (n * g.M + m) * g.out_sz;
            for (int64_t p = 0; p < g.out_sz; p++) {
                double v = nearbyint(((double)acc[base + p] + bias) * (double)scale) + yz;
                v = v < lo ? lo : v > hi ? hi : v;
                /* a zero or NaN scale makes v NaN, which the clamp
                 * keeps: the saturating store maps it to 0 (as
                 * ONNX Runtime does) instead of an undefined cast */
                if (Y->dtype == ONYX_UINT8)
                    ((uint8_t *)Y->data)[base + p] = sat_u8(v);
                else
                    ((int8_t *)Y->data)[base + p] = sat_i8(v);
            }
        }
    free(acc);
    return 0;
}
