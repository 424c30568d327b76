/* Activation epilogues of the fused operators of the onyx domain: an
 * activation applied in place to float32 rows while they are still in
 * cache after the product (or convolution) that wrote them.
 *
 * Named as the fused operators' `activation` attribute names them, with
 * their parameters in `activation_params`:
 *   ""           none
 *   Relu         max(x, 0)
 *   Clip         min(max(x, p0), p1)        (p0, p1 default -inf, +inf)
 *   Sigmoid      1 / (1 + e^-x)
 *   HardSigmoid  max(0, min(1, p0 x + p1))  (p0, p1 default 0.2, 0.5)
 *   HardSwish    x * max(0, min(1, x / 6 + 1/2))  (x / 6 as x * (1/6))
 *   SiLU         x * sigmoid(x)
 *   LeakyRelu    x < 0 ? p0 x : x           (p0 default 0.01)
 *   Tanh         tanh(x)
 *   Gelu         x * Phi(x) = x/2 (1 + erf(x / sqrt 2))
 *   GeluTanh     x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
 * Each is computed by the same float expression as the standalone ONNX
 * operator's CPU kernel, so a fused node gives the unfused graph's values
 * (up to the order of the bias addition, which is the same as well). */
#ifndef ONYX_EP_CPU_KERNELS_ACTIVATION_H
#define ONYX_EP_CPU_KERNELS_ACTIVATION_H

#include <stddef.h>
#include <stdint.h>

#include "ep/cpu/kernels/cpu_isa.h"

typedef enum ox_act_kind {
    OX_ACT_NONE,
    OX_ACT_RELU,
    OX_ACT_CLIP,
    OX_ACT_SIGMOID,
    OX_ACT_HARDSIGMOID,
    OX_ACT_HARDSWISH,
    OX_ACT_SILU,
    OX_ACT_LEAKYRELU,
    OX_ACT_TANH,
    OX_ACT_GELU,
    OX_ACT_GELU_TANH,
} ox_act_kind;

typedef struct ox_act {
    ox_act_kind kind;
    float p0, p1;
} ox_act;

/* Parses an activation name ("" or NULL: none) and its parameters (n of
 * them; missing ones take the defaults above). Returns -1 for an unknown
 * name or too many parameters. */
int ox_act_parse(const char *name, const float *params, size_t n, ox_act *out);
/* The same from a fused node's `activation` and `activation_params`
 * attributes (any provider's kernel for onyx FusedConv or FusedMatMul). */
struct ir_node;
int ox_act_of_node(const struct ir_node *node, ox_act *out);

/* Each of `rows` rows of `cols` values (row stride ld): y = act(y + bias),
 * bias (cols values, may be NULL) broadcast along the rows, in the loops
 * of instruction set isa (the same values on every one). */
/* Sigmoid or SiLU (act's kind) over y[0, n) by the eight-lane FMA exp;
 * AVX2 and FMA machines only (the variants of ox_act_row that pass fma).
 * The ragged end goes through the same vector code on a padded copy. */
#if defined(__x86_64__) && defined(__GNUC__)
void ox_act_exp_row_avx2(const ox_act *act, float *y, int64_t n);
/* The same sixteen lanes at a time (ox_exp_act16: the same bits); the
 * ragged end by masked loads and stores. AVX-512 machines only. */
void ox_act_exp_row_avx512(const ox_act *act, float *y, int64_t n);
#endif

void ox_act_bias_rows(const ox_act *act, float *y, int64_t rows, int64_t cols, int64_t ld,
                      const float *bias, ox_cpu_isa isa);

#endif
