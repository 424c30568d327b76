#include "ep/cpu/kernels/activation.h"

#include <string.h>

#include "ep/cpu/kernels/activation_row.h"
#include "ep/cpu/kernels/exp_fma_avx2.h"
#include "ir/ir.h"

int ox_act_of_node(const ir_node *node, ox_act *out) {
    size_t np = 0;
    const float *params = ir_attr_floats(node, "activation_params", &np);
    return ox_act_parse(ir_attr_string(node, "activation", ""), params, np, out);
}

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

#if defined(__x86_64__) && defined(__GNUC__)
/* The activation of act->kind (Sigmoid, SiLU, Tanh or GELU) on eight lanes. */
__attribute__((target("avx2,fma"), always_inline)) static inline __m256 exp_act8(int kind, __m256 v) {
    return kind == OX_ACT_GELU   ? ox_gelu8_fma(v)
           : kind == OX_ACT_TANH ? ox_tanh8_fma(v)
                                 : ox_exp_act8(kind == OX_ACT_SILU, v);
}

__attribute__((target("avx512f"), always_inline)) static inline __m512 exp_act16(int kind, __m512 v) {
    return kind == OX_ACT_GELU   ? ox_gelu16_avx512(v)
           : kind == OX_ACT_TANH ? ox_tanh16_avx512(v)
                                 : ox_exp_act16(kind == OX_ACT_SILU, v);
}

/* One loop per kind, so the kind is not tested per vector. */
#define EXP_ROW8(KIND)                                                                             \
    do {                                                                                           \
        int64_t i = 0;                                                                             \
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, exp_act8(KIND, _mm256_loadu_ps(y + i))); \
        if (i < n) {                                                                               \
            float t[8] = {0};                                                                      \
            memcpy(t, y + i, sizeof(float) * (size_t)(n - i));                                     \
            _mm256_storeu_ps(t, exp_act8(KIND, _mm256_loadu_ps(t)));                               \
            memcpy(y + i, t, sizeof(float) * (size_t)(n - i));                                     \
        }                                                                                          \
    } while (0)

#define EXP_ROW16(KIND)                                                                            \
    do {                                                                                           \
        int64_t i = 0;                                                                             \
        for (; i + 16 <= n; i += 16)                                                               \
            _mm512_storeu_ps(y + i, exp_act16(KIND, _mm512_loadu_ps(y + i)));                      \
        if (i < n) {                                                                               \
            const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);                                  \
            _mm512_mask_storeu_ps(y + i, m, exp_act16(KIND, _mm512_maskz_loadu_ps(m, y + i)));     \
        }                                                                                          \
    } while (0)

__attribute__((target("avx2,fma"))) void ox_act_exp_row_avx2(const ox_act *act, float *y, int64_t n) {
    if (act->kind == OX_ACT_GELU) EXP_ROW8(OX_ACT_GELU);
    else if (act->kind == OX_ACT_TANH) EXP_ROW8(OX_ACT_TANH);
    else if (act->kind == OX_ACT_SILU) EXP_ROW8(OX_ACT_SILU);
    else EXP_ROW8(OX_ACT_SIGMOID);
}

__attribute__((target("avx512f"))) void ox_act_exp_row_avx512(const ox_act *act, float *y, int64_t n) {
    if (act->kind == OX_ACT_GELU) EXP_ROW16(OX_ACT_GELU);
    else if (act->kind == OX_ACT_TANH) EXP_ROW16(OX_ACT_TANH);
    else if (act->kind == OX_ACT_SILU) EXP_ROW16(OX_ACT_SILU);
    else EXP_ROW16(OX_ACT_SIGMOID);
}
#endif

/* act(y + bias) over rows, compiled once per instruction set: the
 * activation loops then run at the variant's vector width. */
#define DEF_ACT_ROWS(SUF, TARGET, FMA)                                                             \
    TARGET static void act_rows_##SUF(const ox_act *act, float *y, int64_t rows, int64_t cols,     \
                                      int64_t ld, const float *bias) {                            \
        for (int64_t r = 0; r < rows; r++) {                                                       \
            float *restrict row = y + r * ld;                                                      \
            if (bias)                                                                              \
                for (int64_t i = 0; i < cols; i++) row[i] += bias[i];                              \
            ox_act_row(act, row, cols, FMA);                                                       \
        }                                                                                          \
    }

DEF_ACT_ROWS(portable, , 0)
#if defined(__x86_64__) && defined(__GNUC__)
DEF_ACT_ROWS(avx2, __attribute__((target("avx2"))), 1)
DEF_ACT_ROWS(avx512, __attribute__((target("avx512f"))), 2)
#endif

void ox_act_bias_rows(const ox_act *act, float *y, int64_t rows, int64_t cols, int64_t ld,
                      const float *bias, ox_cpu_isa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (isa == OX_ISA_AVX512) {
        act_rows_avx512(act, y, rows, cols, ld, bias);
        return;
    }
    if (isa == OX_ISA_AVX2) {
        act_rows_avx2(act, y, rows, cols, ld, bias);
        return;
    }
#endif
    (void)isa;
    act_rows_portable(act, y, rows, cols, ld, bias);
}
