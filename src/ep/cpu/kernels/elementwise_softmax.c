/* CPU kernels of Softmax, LogSoftmax and Hardmax. Their kernel table
 * entries are in elementwise.c. */

#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/elementwise.h"
#include "ep/cpu/kernels/exp_fma_avx2.h"
#include "ep/cpu/kernels/kernel_util.h"

/* ====================================================================
 * Softmax, LogSoftmax, Hardmax
 * ==================================================================== */

enum { SM_SOFTMAX, SM_LOGSOFTMAX, SM_HARDMAX };

typedef struct sm_ctx {
    const void *x;
    void *y;
    ox_dtype t;
    int64_t n, inner;
    int mode;
    ox_softmax_row_fn row; /* the contiguous float32 row of this ISA */
} sm_ctx;

/* e^(x - max) below e^SM_EXP_FLOOR is taken as 0 by every row: it is
 * then below float's smallest normal number (e^-87.34), where the exp's
 * last scaling, and every sum and product that reads the result, take the
 * processor's slow path for subnormals. Rows under a causal mask have
 * half their scores at -inf or float's lowest: LLaMA's 64 x 64 attention
 * rows took 0.050 ms a head block against 0.028 unmasked (AMD Zen 4;
 * ONNX Runtime 0.020 either way). Such an element's probability is below
 * 1.7e-38 whatever the rest of the row. */
#define SM_EXP_FLOOR -87.0f

/* One contiguous float32 row (the softmax axis is the last one). */
static void sm_row_f32(const float *x, float *y, int64_t n, int mode) {
    float mx = x[0];
    int64_t arg = 0;
    if (mode == SM_HARDMAX) {
        for (int64_t j = 1; j < n; j++)
            if (x[j] > mx) {
                mx = x[j];
                arg = j;
            }
        for (int64_t j = 0; j < n; j++) y[j] = j == arg ? 1.0f : 0.0f;
        return;
    }
    for (int64_t j = 1; j < n; j++) mx = x[j] > mx ? x[j] : mx;
    for (int64_t j = 0; j < n; j++) y[j] = x[j] - mx < SM_EXP_FLOOR ? 0.0f : fast_expf(x[j] - mx);
    /* sixteen partial sums, no single add chain: element j of the whole
     * blocks of sixteen into sum j % 16 in float (one vector add per
     * sixteen exponentials in the vector rows, as they are made; partial
     * sums in double converted every element cost a fifth of the row's
     * time), then in double the rest into sum 0 and the sixteen by a
     * tree */
    float s16[16] = {0};
    int64_t j = 0;
    for (; j + 16 <= n; j += 16)
        for (int k = 0; k < 16; k++) s16[k] += y[j + k];
    double s[16];
    for (int k = 0; k < 16; k++) s[k] = s16[k];
    for (; j < n; j++) s[0] += y[j];
    double sum = ox_sum16_tree(s);
    if (mode == SM_SOFTMAX) {
        const float inv = (float)(1.0 / sum);
        for (int64_t k = 0; k < n; k++) y[k] *= inv;
    } else {
        const float off = mx + (float)log(sum);
        for (int64_t k = 0; k < n; k++) y[k] = x[k] - off;
    }
}

/* The same row in vectors of every width this file is built for (see
 * softmax_row.inc); bitwise equal to sm_row_f32. */
#define SMV_W 4
#define SMV_SUF sse
#define SMV_TARGET
#include "ep/cpu/kernels/softmax_row.inc"
#undef SMV_W
#undef SMV_SUF
#undef SMV_TARGET
#if defined(__x86_64__) && defined(__GNUC__)
#define SMV_W 8
#define SMV_SUF avx2
#define SMV_FMA8 1
#define SMV_TARGET __attribute__((target("avx2,fma")))
#include "ep/cpu/kernels/softmax_row.inc"
#undef SMV_W
#undef SMV_SUF
#undef SMV_TARGET
#define SMV_W 16
#define SMV_SUF avx512
#define SMV_FMA16 1
#define SMV_TARGET __attribute__((target("avx512f,avx2,fma")))
#include "ep/cpu/kernels/softmax_row.inc"
#undef SMV_W
#undef SMV_SUF
#undef SMV_TARGET
#endif

static void row_scalar(const float *x, float *y, int64_t n, int log_softmax) {
    sm_row_f32(x, y, n, log_softmax ? SM_LOGSOFTMAX : SM_SOFTMAX);
}

static const ox_softmax_row_variant VARIANTS[] = {
    {"scalar", OX_ISA_PORTABLE, 0, row_scalar},
    {"sse", OX_ISA_PORTABLE, 0, sm_row_f32_sse},
#if defined(__x86_64__) && defined(__GNUC__)
    {"avx2", OX_ISA_AVX2, 1, sm_row_f32_avx2},
    {"avx512", OX_ISA_AVX512, 1, sm_row_f32_avx512},
#endif
};

const ox_softmax_row_variant *ox_softmax_row_variants(size_t *count) {
    *count = sizeof VARIANTS / sizeof VARIANTS[0];
    return VARIANTS;
}

/* The row the kernels use under this ISA for rows of n. AVX-512
 * machines take the 16-lane row from 128 elements (bench/rows_bench on
 * AMD Zen 4: rows of 336 in 177 ns against the AVX2 row's 225, 4096 in
 * 2.1 against 2.7 us) and for whole multiples of 16, which leave it no
 * tail (Softmax over [1, 8, 256, n], one thread: n = 32 0.081 -> 0.074
 * ms, 64 0.030 -> 0.024, 96 0.160 -> 0.120), the AVX2 row below (100:
 * 85 against 96 ns, the 16-lane row's tail being longer); both give the
 * same bits. */
ox_softmax_row_fn ox_softmax_row_for(ox_cpu_isa isa, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (isa >= OX_ISA_AVX512 && (n >= 128 || n % 16 == 0)) return sm_row_f32_avx512;
    if (isa >= OX_ISA_AVX2) return sm_row_f32_avx2;
#endif
    (void)isa;
    (void)n;
    return sm_row_f32_sse;
}

static void sm_lines_f32(const sm_ctx *p, int64_t b, int64_t e) {
    const float *X = p->x;
    float *Y = p->y;
    const int64_t n = p->n, inner = p->inner;
    if (inner == 1) {
        if (p->mode == SM_HARDMAX) {
            for (int64_t line = b; line < e; line++) sm_row_f32(X + line * n, Y + line * n, n, p->mode);
        } else {
            for (int64_t line = b; line < e; line++)
                p->row(X + line * n, Y + line * n, n, p->mode == SM_LOGSOFTMAX);
        }
        return;
    }
    for (int64_t line = b; line < e; line++) {
        int64_t base = (line / inner) * n * inner + line % inner;
        const float *x = X + base;
        float *y = Y + base;
        float mx = x[0];
        int64_t arg = 0;
        for (int64_t j = 1; j < n; j++)
            if (x[j * inner] > mx) {
                mx = x[j * inner];
                arg = j;
            }
        if (p->mode == SM_HARDMAX) {
            for (int64_t j = 0; j < n; j++) y[j * inner] = j == arg ? 1.0f : 0.0f;
            continue;
        }
        double sum = 0;
        for (int64_t j = 0; j < n; j++) {
            float v = fast_expf(x[j * inner] - mx);
            y[j * inner] = v;
            sum += v;
        }
        if (p->mode == SM_SOFTMAX) {
            float inv = (float)(1.0 / sum);
            for (int64_t j = 0; j < n; j++) y[j * inner] *= inv;
        } else {
            float off = mx + (float)log(sum);
            for (int64_t j = 0; j < n; j++) y[j * inner] = x[j * inner] - off;
        }
    }
}

static void sm_lines(void *arg, int64_t b, int64_t e) {
    const sm_ctx *p = arg;
    if (p->t == ONYX_FLOAT32) {
        sm_lines_f32(p, b, e);
        return;
    }
    const int64_t n = p->n, inner = p->inner;
    for (int64_t line = b; line < e; line++) {
        size_t base = (size_t)((line / inner) * n * inner + line % inner);
        double mx = ox_get_f64(p->x, p->t, base);
        int64_t arg = 0;
        for (int64_t j = 1; j < n; j++) {
            double v = ox_get_f64(p->x, p->t, base + (size_t)(j * inner));
            if (v > mx) {
                mx = v;
                arg = j;
            }
        }
        double sum = 0;
        if (p->mode != SM_HARDMAX)
            for (int64_t j = 0; j < n; j++)
                sum += exp(ox_get_f64(p->x, p->t, base + (size_t)(j * inner)) - mx);
        double lse = mx + log(sum);
        for (int64_t j = 0; j < n; j++) {
            size_t k = base + (size_t)(j * inner);
            double v = ox_get_f64(p->x, p->t, k), r;
            if (p->mode == SM_HARDMAX)
                r = j == arg;
            else if (p->mode == SM_SOFTMAX)
                r = exp(v - mx) / sum;
            else
                r = v - lse;
            ox_set_f64(p->y, p->t, k, r);
        }
    }
}

static int run_softmax(ox_kernel_ctx *c, int mode) {
    const ox_tensor *X = c->n_inputs > 0 ? c->inputs[0] : NULL;
    ox_tensor *Y = c->n_outputs > 0 ? c->outputs[0] : NULL;
    const char *op = c->node->op_type;
    if (!X || !Y) return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: missing input", op);
    if (!ox_dtype_is_float(X->dtype) || Y->dtype != X->dtype)
        return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "%s: element type %s is not supported", op,
                              ox_dtype_name(X->dtype));
    int legacy = c->node->opset < 13;
    int64_t axis = ir_attr_int(c->node, "axis", legacy ? 1 : -1);
    int r = X->rank;
    int64_t one = 1;
    const int64_t *dims = r ? X->dims : &one;
    int rr = r ? r : 1;
    if (axis < -rr || axis >= rr)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: axis %" PRId64
                              " is out of range for rank %d", op, axis, r);
    if (axis < 0) axis += rr;
    int64_t outer = 1, n = 1, inner = 1;
    for (int i = 0; i < axis; i++) outer *= dims[i];
    if (legacy) {
        /* before opset 13 the input is seen as 2-D [outer, rest] */
        for (int i = (int)axis; i < rr; i++) n *= dims[i];
    } else {
        n = dims[axis];
        for (int i = (int)axis + 1; i < rr; i++) inner *= dims[i];
    }
    int64_t lines = outer * inner;
    if (lines == 0 || n == 0) return 0;
    sm_ctx ctx = {X->data, Y->data, X->dtype, n, inner, mode, ox_softmax_row_for(ox_cpu_isa_active(), n)};
    int64_t grain = GRAIN_MATH / n;
    ox_parallel_for(c->pool, lines, grain < 1 ? 1 : grain, sm_lines, &ctx);
    return 0;
}

int ox_ew_softmax(ox_kernel_ctx *c) { return run_softmax(c, SM_SOFTMAX); }
int ox_ew_logsoftmax(ox_kernel_ctx *c) { return run_softmax(c, SM_LOGSOFTMAX); }
int ox_ew_hardmax(ox_kernel_ctx *c) { return run_softmax(c, SM_HARDMAX); }
