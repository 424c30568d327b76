/* Helpers shared by the CPU kernel families (see kernel_util.h). */
#include "ep/cpu/kernels/kernel_util.h"

#include <stdlib.h>
#include <string.h>

int ox_cpu_oom(ox_kernel_ctx *ctx) {
    return ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "%s: out of memory", ctx->node->op_type);
}

int ox_cpu_attr_ints(ox_kernel_ctx *ctx, const char *name, int want, const int64_t **v) {
    size_t n = 0;
    *v = ir_attr_ints(ctx->node, name, &n);
    if (*v && (int)n != want)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: attribute '%s' has %zu values, expected %d", ctx->node->op_type,
                              name, n, want);
    return 0;
}

int ox_cpu_str_assign(ox_kernel_ctx *ctx, char **slot, const char *s) {
    char *d = strdup(s ? s : "");
    if (!d) return ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "out of memory copying a string");
    free(*slot);
    *slot = d;
    return 0;
}

int ox_cpu_copy_elems(ox_kernel_ctx *ctx, ox_tensor *dst, int64_t di, const ox_tensor *src,
                      int64_t si, int64_t n) {
    if (n <= 0) return 0;
    if (dst->dtype == ONYX_STRING) {
        char **d = (char **)dst->data + di;
        char *const *s = (char *const *)src->data + si;
        if (d == s) return 0;
        for (int64_t i = 0; i < n; i++)
            if (ox_cpu_str_assign(ctx, &d[i], s[i]) != 0) return -1;
        return 0;
    }
    size_t es = ox_dtype_size(dst->dtype);
    char *d = (char *)dst->data + (size_t)di * es;
    const char *s = (const char *)src->data + (size_t)si * es;
    if (d != s) memmove(d, s, (size_t)n * es);
    return 0;
}

ox_tensor *ox_cpu_slab(ox_kernel_ctx *ctx, const ox_tensor *x, int axis, int64_t start, int64_t len,
                       int keep) {
    int64_t dims[OX_MAX_RANK];
    int rank = 0;
    for (int d = 0; d < x->rank; d++) {
        if (d == axis && !keep) continue;
        dims[rank++] = d == axis ? len : x->dims[d];
    }
    ox_tensor *t = ox_tensor_new(x->dtype, dims, rank, ctx->err);
    if (!t) return NULL;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= x->dims[d];
    for (int d = axis + 1; d < x->rank; d++) inner *= x->dims[d];
    int64_t span = x->dims[axis];
    for (int64_t o = 0; o < outer; o++)
        if (ox_cpu_copy_elems(ctx, t, o * len * inner, x, (o * span + start) * inner,
                              len * inner) != 0) {
            ox_tensor_free(t);
            return NULL;
        }
    return t;
}

double *ox_cpu_load_f64(const ox_tensor *t) {
    int64_t n = ox_tensor_numel(t);
    double *d = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (!d) return NULL;
    if (t->dtype == ONYX_FLOAT32) {
        const float *f = t->data;
        for (int64_t i = 0; i < n; i++) d[i] = f[i];
    } else if (t->dtype == ONYX_FLOAT64) {
        memcpy(d, t->data, sizeof(double) * (size_t)n);
    } else {
        for (int64_t i = 0; i < n; i++) d[i] = ox_get_f64(t->data, t->dtype, (size_t)i);
    }
    return d;
}

float *ox_cpu_to_f32(const ox_tensor *t) {
    if (!t) return NULL;
    int64_t n = ox_tensor_numel(t);
    float *f = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    if (!f) return NULL;
    const uint16_t *h = t->data;
    if (t->dtype == ONYX_FLOAT16)
        ox_half_to_float_n(h, f, n);
    else
        for (int64_t i = 0; i < n; i++) f[i] = ox_bf16_to_float(h[i]);
    return f;
}

void ox_cpu_from_f32(ox_tensor *t, const float *f) {
    int64_t n = ox_tensor_numel(t);
    uint16_t *h = t->data;
    if (t->dtype == ONYX_FLOAT16)
        for (int64_t i = 0; i < n; i++) h[i] = ox_float_to_half(f[i]);
    else
        for (int64_t i = 0; i < n; i++) h[i] = ox_float_to_bf16(f[i]);
}

int ox_cpu_supports_float(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    (void)node;
    if (n_inputs < 1 || !inputs[0]) return 1;
    ox_dtype t = inputs[0]->dtype;
    return t == ONYX_UNDEFINED || ox_dtype_is_float(t);
}

int ox_cpu_supports_f32(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    (void)node;
    if (n_inputs < 1 || !inputs[0]) return 1;
    return inputs[0]->dtype == ONYX_FLOAT32 || inputs[0]->dtype == ONYX_UNDEFINED;
}

int ox_cpu_supports_float_no_bf16(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    (void)node;
    if (n_inputs < 1 || !inputs[0]) return 1;
    ox_dtype t = inputs[0]->dtype;
    return t == ONYX_FLOAT32 || t == ONYX_FLOAT64 || t == ONYX_FLOAT16 || t == ONYX_UNDEFINED;
}
