/* Small helpers shared by the CPU kernel families: input and output
 * lookup, common failures, attribute lists, element copies that respect
 * string ownership, float conversions and the usual `supports` checks. */
#ifndef ONYX_EP_CPU_KERNELS_KERNEL_UTIL_H
#define ONYX_EP_CPU_KERNELS_KERNEL_UTIL_H

#include <stdint.h>
#include <string.h>

#include "core/checked.h"
#include "ep/ep.h"

/* Input i, or NULL when omitted or past the node's inputs. */
static inline const ox_tensor *ox_cpu_input(const ox_kernel_ctx *ctx, int i) {
    return i < ctx->n_inputs ? ctx->inputs[i] : NULL;
}

/* Output i, or NULL when omitted or past the node's outputs. */
static inline ox_tensor *ox_cpu_output(const ox_kernel_ctx *ctx, int i) {
    return i < ctx->n_outputs ? ctx->outputs[i] : NULL;
}

/* The sum of sixteen partial sums in one fixed tree. Row kernels that
 * sum by sixteen partial sums (element i of the whole blocks of sixteen
 * into sum i % 16: Softmax rows, in float then double, LayerNormalization
 * rows, in double) end
 * with it in every variant, so their scalar and vector forms add in the
 * same order and give the same bits. */
static inline double ox_sum16_tree(const double s[16]) {
    double t[8];
    for (int k = 0; k < 8; k++) t[k] = s[k] + s[k + 8];
    for (int k = 0; k < 4; k++) t[k] += t[k + 4];
    return (t[0] + t[2]) + (t[1] + t[3]);
}

/* The sum of n floats (square 0) or of their squares (square 1) in
 * double, in sixteen interleaved partial sums (four vectors of 4 lanes
 * converted to double), so that the adds do not form one long chain of
 * dependent additions (with eight, GlobalAveragePool over two images of
 * 16 planes of 56x56 took 15 us, now 12; of 576 planes of 7x7, 17 us,
 * now 10). Inlined into per-ISA variants of its callers (pool.c,
 * reduce.c), which then convert four floats per instruction; square is
 * a constant at every call. */
__attribute__((always_inline)) static inline double ox_sum_f32_pow_wide(const float *x, int64_t n,
                                                                        const int square) {
    typedef double vd4 __attribute__((vector_size(32)));
    typedef float vf4 __attribute__((vector_size(16)));
    vd4 a0 = {0, 0, 0, 0}, a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        vf4 u0, u1, u2, u3;
        memcpy(&u0, x + i, sizeof u0);
        memcpy(&u1, x + i + 4, sizeof u1);
        memcpy(&u2, x + i + 8, sizeof u2);
        memcpy(&u3, x + i + 12, sizeof u3);
        const vd4 d0 = __builtin_convertvector(u0, vd4), d1 = __builtin_convertvector(u1, vd4),
                  d2 = __builtin_convertvector(u2, vd4), d3 = __builtin_convertvector(u3, vd4);
        a0 += square ? d0 * d0 : d0;
        a1 += square ? d1 * d1 : d1;
        a2 += square ? d2 * d2 : d2;
        a3 += square ? d3 * d3 : d3;
    }
    for (; i + 4 <= n; i += 4) {
        vf4 u;
        memcpy(&u, x + i, sizeof u);
        const vd4 d = __builtin_convertvector(u, vd4);
        a0 += square ? d * d : d;
    }
    a0 = (a0 + a1) + (a2 + a3);
    double s = (a0[0] + a0[1]) + (a0[2] + a0[3]);
    for (; i < n; i++) s += square ? (double)x[i] * x[i] : x[i];
    return s;
}

__attribute__((always_inline)) static inline double ox_sum_f32_wide(const float *x, int64_t n) {
    return ox_sum_f32_pow_wide(x, n, 0);
}

/* The sum of squares, the same way: RMS normalization's statistics. */
__attribute__((always_inline)) static inline double ox_sumsq_f32_wide(const float *x, int64_t n) {
    return ox_sum_f32_pow_wide(x, n, 1);
}

/* Fails with ONYX_OUT_OF_MEMORY, naming the op. */
int ox_cpu_oom(ox_kernel_ctx *ctx);

/* INTS attribute `name`, which must have `want` entries when present;
 * *v is NULL when it is absent. */
int ox_cpu_attr_ints(ox_kernel_ctx *ctx, const char *name, int want, const int64_t **v);

/* Replaces the string in *slot with a copy of s (NULL copies as ""). */
int ox_cpu_str_assign(ox_kernel_ctx *ctx, char **slot, const char *s);
/* Copies n elements from src (from element si) to dst (from element di),
 * which share one dtype. String elements are duplicated, never shared;
 * other data may overlap. */
int ox_cpu_copy_elems(ox_kernel_ctx *ctx, ox_tensor *dst, int64_t di, const ox_tensor *src,
                      int64_t si, int64_t n);

/* Elements [start, start + len) of `axis` of x as a new tensor, with the
 * axis kept (size len) or dropped. NULL with ctx->err set on failure. */
ox_tensor *ox_cpu_slab(ox_kernel_ctx *ctx, const ox_tensor *x, int axis, int64_t start, int64_t len,
                       int keep);

/* A malloc'ed float64 copy of the whole tensor; NULL when out of memory. */
double *ox_cpu_load_f64(const ox_tensor *t);
/* A malloc'ed float32 copy of a float16 or bfloat16 tensor; NULL for a
 * NULL tensor or when out of memory. */
float *ox_cpu_to_f32(const ox_tensor *t);
/* Stores float32 values into a float16 or bfloat16 tensor. */
void ox_cpu_from_f32(ox_tensor *t, const float *f);

/* `supports` checks on input 0's element type (an absent or unknown type
 * passes): any float type, float32 only, or one of float16/32/64 (no
 * bfloat16). */
int ox_cpu_supports_float(const ir_node *node, const ir_type *const *inputs, int n_inputs);
int ox_cpu_supports_f32(const ir_node *node, const ir_type *const *inputs, int n_inputs);
int ox_cpu_supports_float_no_bf16(const ir_node *node, const ir_type *const *inputs, int n_inputs);

#endif
