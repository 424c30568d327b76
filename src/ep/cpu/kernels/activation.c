#include "ep/cpu/kernels/activation.h"

#include <string.h>

#include "ep/cpu/kernels/elementwise.h"
#include "ep/cpu/kernels/gemm.h"

int ox_act_parse(const char *name, const float *params, size_t n, ox_act *out) {
    static const struct {
        const char *name;
        ox_act_kind kind;
        int n_params;
        float p0, p1;
    } KINDS[] = {
        {"", OX_ACT_NONE, 0, 0, 0},
        {"Relu", OX_ACT_RELU, 0, 0, 0},
        {"Clip", OX_ACT_CLIP, 2, -INFINITY, INFINITY},
        {"Sigmoid", OX_ACT_SIGMOID, 0, 0, 0},
        {"HardSigmoid", OX_ACT_HARDSIGMOID, 2, 0.2f, 0.5f},
        {"HardSwish", OX_ACT_HARDSWISH, 0, 0, 0},
        {"SiLU", OX_ACT_SILU, 0, 0, 0},
        {"LeakyRelu", OX_ACT_LEAKYRELU, 1, 0.01f, 0},
        {"Tanh", OX_ACT_TANH, 0, 0, 0},
        {"Gelu", OX_ACT_GELU, 0, 0, 0},
        {"GeluTanh", OX_ACT_GELU_TANH, 0, 0, 0},
    };
    if (!name) name = "";
    for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; i++) {
        if (strcmp(KINDS[i].name, name) != 0) continue;
        if (n > (size_t)KINDS[i].n_params) return -1;
        out->kind = KINDS[i].kind;
        out->p0 = n > 0 ? params[0] : KINDS[i].p0;
        out->p1 = n > 1 ? params[1] : KINDS[i].p1;
        return 0;
    }
    return -1;
}

/* The loops below use the branch-free float helpers of elementwise.h
 * (fast_expf, fast_tanhf, fast_erff, sel_f32) so that they vectorise. */
static void act_range(const ox_act *act, float *restrict y, int64_t n) {
    const float a = act->p0, b = act->p1;
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

void ox_act_apply(const ox_act *act, float *y, int64_t n) { act_range(act, y, n); }

void ox_act_bias_rows(const ox_act *act, float *y, int64_t rows, int64_t cols, int64_t ld,
                      const float *bias) {
    for (int64_t r = 0; r < rows; r++) {
        float *row = y + r * ld;
        if (bias) ox_vec_add(row, bias, cols);
        act_range(act, row, cols);
    }
}
