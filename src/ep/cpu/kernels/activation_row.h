/* The activation loops of activation.h, as an always-inline function for
 * the kernels that compile them per instruction set (activation.c, the
 * convolution epilogue in conv_gemm.c). */
#ifndef ONYX_EP_CPU_KERNELS_ACTIVATION_ROW_H
#define ONYX_EP_CPU_KERNELS_ACTIVATION_ROW_H

#include <stdint.h>

#include "ep/cpu/kernels/activation.h"
#include "ep/cpu/kernels/elementwise.h"

/* y[i] = act(y[i]) for i in [0, n), inlined into each caller so that
 * the loops vectorise at the width of the function they land in (the
 * per-ISA variants of activation.c and of the convolution epilogue). The
 * loops use the branch-free float helpers of elementwise.h (fast_expf,
 * fast_tanhf, fast_gelu, sel_f32). */
/* fma: the caller is an AVX2 (1) or AVX-512 (2) variant. Sigmoid, SiLU,
 * Tanh and GELU then take the eight- or sixteen-lane FMA forms
 * (exp_fma_avx2.h): the same bits on both kinds of machine, within a few
 * ulp of the portable loops' fast_expf and fast_gelu. */
__attribute__((always_inline)) static inline void ox_act_row(const ox_act *act, float *restrict y,
                                                             int64_t n, const int fma) {
    const float a = act->p0, b = act->p1;
#if defined(__x86_64__) && defined(__GNUC__)
    if (fma && (act->kind == OX_ACT_SIGMOID || act->kind == OX_ACT_SILU || act->kind == OX_ACT_GELU ||
                act->kind == OX_ACT_TANH)) {
        if (fma == 2) ox_act_exp_row_avx512(act, y, n);
        else ox_act_exp_row_avx2(act, y, n);
        return;
    }
#else
    (void)fma; /* only x86 builds have the FMA variants */
#endif
    switch (act->kind) {
    case OX_ACT_NONE: break;
    case OX_ACT_RELU:
        for (int64_t i = 0; i < n; i++) y[i] = sel_f32(y[i] < 0.0f, 0.0f, y[i]);
        break;
    case OX_ACT_CLIP:
        /* Clip's kernel: below min -> min, above max -> max */
        for (int64_t i = 0; i < n; i++) {
            float v = sel_f32(y[i] < a, a, y[i]);
            y[i] = sel_f32(v > b, b, v);
        }
        break;
    case OX_ACT_SIGMOID:
        for (int64_t i = 0; i < n; i++) y[i] = 1.0f / (1.0f + fast_expf(-y[i]));
        break;
    case OX_ACT_HARDSIGMOID:
        for (int64_t i = 0; i < n; i++) {
            float v = a * y[i] + b;
            v = sel_f32(v < 0.0f, 0.0f, v);
            y[i] = sel_f32(v > 1.0f, 1.0f, v);
        }
        break;
    case OX_ACT_HARDSWISH:
        for (int64_t i = 0; i < n; i++) {
            float v = y[i] * (1.0f / 6.0f) + 0.5f;
            v = sel_f32(v < 0.0f, 0.0f, v);
            v = sel_f32(v > 1.0f, 1.0f, v);
            y[i] = y[i] * v;
        }
        break;
    case OX_ACT_SILU:
        /* x * Sigmoid(x) as two kernels compute it: the sigmoid rounded first */
        for (int64_t i = 0; i < n; i++) y[i] = y[i] * (1.0f / (1.0f + fast_expf(-y[i])));
        break;
    case OX_ACT_LEAKYRELU:
        for (int64_t i = 0; i < n; i++) y[i] = sel_f32(y[i] < 0.0f, a * y[i], y[i]);
        break;
    case OX_ACT_TANH:
        for (int64_t i = 0; i < n; i++) y[i] = fast_tanhf(y[i]);
        break;
    case OX_ACT_GELU:
        for (int64_t i = 0; i < n; i++)
            y[i] = fast_gelu(y[i]);
        break;
    case OX_ACT_GELU_TANH:
        for (int64_t i = 0; i < n; i++) {
            float x = y[i];
            y[i] = 0.5f * x *
                   (1.0f + fast_tanhf(0.79788456080286535588f * (x + 0.044715f * x * x * x)));
        }
        break;
    }
}

#endif
