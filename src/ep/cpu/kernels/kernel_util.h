/* Small helpers shared by the CPU kernel families: input and output
 * lookup, common failures, attribute lists, element copies that respect
 * string ownership, float conversions and the usual `supports` checks. */
#ifndef ONYX_EP_CPU_KERNELS_KERNEL_UTIL_H
#define ONYX_EP_CPU_KERNELS_KERNEL_UTIL_H

#include <stdint.h>

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
 * sum in double by sixteen partial sums (element i of the whole blocks of
 * sixteen into sum i % 16: Softmax rows, LayerNormalization rows) end
 * with it in every variant, so their scalar and vector forms add in the
 * same order and give the same bits. */
static inline double ox_sum16_tree(const double s[16]) {
    double t[8];
    for (int k = 0; k < 8; k++) t[k] = s[k] + s[k + 8];
    for (int k = 0; k < 4; k++) t[k] += t[k + 4];
    return (t[0] + t[2]) + (t[1] + t[3]);
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
 * passes): any float type, or one of float16/32/64 (no bfloat16). */
int ox_cpu_supports_float(const ir_node *node, const ir_type *const *inputs, int n_inputs);
int ox_cpu_supports_float_no_bf16(const ir_node *node, const ir_type *const *inputs, int n_inputs);

#endif
