/* CPU kernels of the pooling operators. Windowed pools walk, for each
 * output element, only the part of the window that overlaps the input,
 * so padding never costs reads; work is split over output elements. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/gemm.h"
#include "ep/ep.h"

extern const ox_kernel_table ox_cpu_kernels_pool;

static const ox_tensor *input(const ox_kernel_ctx *ctx, int i) {
    return i < ctx->n_inputs ? ctx->inputs[i] : NULL;
}

static int oom(ox_kernel_ctx *ctx) {
    return ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "%s: out of memory", ctx->node->op_type);
}

/* ================================================================ */
/* geometry */

typedef struct pool_geom {
    int r;
    int64_t planes; /* N * C */
    int64_t in[OX_MAX_RANK], k[OX_MAX_RANK], out[OX_MAX_RANK];
    int64_t s[OX_MAX_RANK], d[OX_MAX_RANK], pb[OX_MAX_RANK], pe[OX_MAX_RANK];
    int64_t in_str[OX_MAX_RANK];
    int64_t in_sz, out_sz;
} pool_geom;

static int read_ints(ox_kernel_ctx *ctx, const char *name, int want, const int64_t **v) {
    size_t n = 0;
    *v = ir_attr_ints(ctx->node, name, &n);
    if (*v && (int)n != want)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: attribute '%s' has %zu values, expected %d",
                              ctx->node->op_type, name, n, want);
    return 0;
}

static int pool_geom_make(ox_kernel_ctx *ctx, const ox_tensor *x, const ox_tensor *y, pool_geom *g) {
    const char *op = ctx->node->op_type;
    size_t nk = 0;
    const int64_t *k = ir_attr_ints(ctx->node, "kernel_shape", &nk);
    if (!k || nk == 0 || (int)nk + 2 != x->rank || y->rank != x->rank)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: kernel_shape does not match input rank %d",
                              op, x->rank);
    int r = (int)nk;
    const int64_t *strides, *dils, *pads;
    if (read_ints(ctx, "strides", r, &strides) || read_ints(ctx, "dilations", r, &dils) ||
        read_ints(ctx, "pads", 2 * r, &pads))
        return -1;
    int ap = ox_parse_auto_pad(ir_attr_string(ctx->node, "auto_pad", "NOTSET"));
    if (ap < 0) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: unknown auto_pad", op);
    int ceil_mode = (int)ir_attr_int(ctx->node, "ceil_mode", 0);
    g->r = r;
    g->planes = x->dims[0] * x->dims[1];
    if (y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1])
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "%s: output shape does not match input", op);
    g->in_sz = g->out_sz = 1;
    for (int i = 0; i < r; i++) {
        g->in[i] = x->dims[i + 2];
        g->k[i] = k[i];
        g->s[i] = strides ? strides[i] : 1;
        g->d[i] = dils ? dils[i] : 1;
        g->pb[i] = pads ? pads[i] : 0;
        g->pe[i] = pads ? pads[i + r] : 0;
        if (ox_window_axis(g->in[i], g->k[i], g->s[i], g->d[i], ap, ceil_mode, &g->pb[i], &g->pe[i],
                           &g->out[i]))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: invalid window on spatial axis %d (kernel %lld, input %lld)", op,
                                  i, (long long)k[i], (long long)g->in[i]);
        if (g->out[i] != y->dims[i + 2])
            return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "%s: output shape does not match input", op);
        g->in_sz *= g->in[i];
        g->out_sz *= g->out[i];
    }
    g->in_str[r - 1] = 1;
    for (int i = r - 2; i >= 0; i--) g->in_str[i] = g->in_str[i + 1] * g->in[i + 1];
    return 0;
}

/* Window of output position o (multi-index): start coordinate and the
 * range [k0, k1) of kernel taps that land inside [lo, hi) per axis.
 * Returns 0 when the window misses that range entirely. */
static int window(const pool_geom *g, const int64_t *o, int64_t *st, int64_t *k0, int64_t *k1,
                  int with_pads) {
    int nonempty = 1;
    for (int i = 0; i < g->r; i++) {
        int64_t s = o[i] * g->s[i] - g->pb[i], dl = g->d[i];
        int64_t lo = with_pads ? -g->pb[i] : 0, hi = g->in[i] + (with_pads ? g->pe[i] : 0);
        int64_t a = s < lo ? (lo - s + dl - 1) / dl : 0;
        int64_t b = hi - s <= 0 ? 0 : (hi - s + dl - 1) / dl;
        if (b > g->k[i]) b = g->k[i];
        st[i] = s;
        k0[i] = a;
        k1[i] = b;
        if (b <= a) nonempty = 0;
    }
    return nonempty;
}

static void next_pos(const pool_geom *g, int64_t *o) {
    for (int i = g->r - 1; i >= 0; i--) {
        if (++o[i] < g->out[i]) return;
        o[i] = 0;
    }
}

static void pos_of(const pool_geom *g, int64_t p, int64_t *o) {
    for (int i = g->r - 1; i >= 0; i--) {
        o[i] = p % g->out[i];
        p /= g->out[i];
    }
}

/* Runs BODY for every in-range tap of the window (st, k0, k1); `idx` is
 * the tap's flat offset inside the plane. */
#define FOR_EACH_TAP(g, st, k0, k1, BODY)                                                       \
    do {                                                                                        \
        const int L_ = (g)->r - 1;                                                              \
        int64_t kk_[OX_MAX_RANK];                                                               \
        for (int i_ = 0; i_ < L_; i_++) kk_[i_] = (k0)[i_];                                     \
        for (;;) {                                                                              \
            int64_t base_ = (st)[L_];                                                           \
            for (int i_ = 0; i_ < L_; i_++)                                                     \
                base_ += ((st)[i_] + kk_[i_] * (g)->d[i_]) * (g)->in_str[i_];                   \
            for (int64_t t_ = (k0)[L_]; t_ < (k1)[L_]; t_++) {                                  \
                int64_t idx = base_ + t_ * (g)->d[L_];                                          \
                BODY                                                                            \
            }                                                                                   \
            int i_ = L_ - 1;                                                                    \
            for (; i_ >= 0; i_--) {                                                             \
                if (++kk_[i_] < (k1)[i_]) break;                                                \
                kk_[i_] = (k0)[i_];                                                             \
            }                                                                                   \
            if (i_ < 0) break;                                                                  \
        }                                                                                       \
    } while (0)

/* Column-major (storage_order 1) flat offset of a row-major one. */
static int64_t col_major(const pool_geom *g, int64_t idx) {
    int64_t coord[OX_MAX_RANK];
    for (int i = g->r - 1; i >= 0; i--) {
        coord[i] = idx % g->in[i];
        idx /= g->in[i];
    }
    int64_t res = 0, mul = 1;
    for (int i = 0; i < g->r; i++) {
        res += coord[i] * mul;
        mul *= g->in[i];
    }
    return res;
}

/* ================================================================ */
/* windowed pools */

enum { POOL_MAX, POOL_AVG, POOL_LP };

typedef struct pool_job {
    const pool_geom *g;
    int kind;
    const void *x;
    void *y;
    int64_t *ind; /* MaxPool indices or NULL */
    int col_major;
    int include_pad;
    double p; /* LpPool exponent */
} pool_job;

#define DEF_POOL(T, SUF)                                                                        \
    static void pool_range_##SUF(void *arg, int64_t e0, int64_t e1) {                           \
        const pool_job *j = arg;                                                                \
        const pool_geom *g = j->g;                                                              \
        int64_t o[OX_MAX_RANK], st[OX_MAX_RANK], k0[OX_MAX_RANK], k1[OX_MAX_RANK];              \
        pos_of(g, e0 % g->out_sz, o);                                                           \
        for (int64_t e = e0; e < e1; e++) {                                                     \
            int64_t plane = e / g->out_sz;                                                      \
            const T *x = (const T *)j->x + plane * g->in_sz;                                    \
            int any = window(g, o, st, k0, k1, 0);                                              \
            if (j->kind == POOL_MAX) {                                                          \
                T best = 0;                                                                     \
                int64_t arg_i = -1;                                                             \
                if (any)                                                                        \
                    FOR_EACH_TAP(g, st, k0, k1, {                                               \
                        T v = x[idx];                                                           \
                        if (arg_i < 0 || v > best) {                                            \
                            best = v;                                                           \
                            arg_i = idx;                                                        \
                        }                                                                       \
                    });                                                                         \
                ((T *)j->y)[e] = best;                                                          \
                if (j->ind) {                                                                   \
                    int64_t at = arg_i < 0 ? 0 : (j->col_major ? col_major(g, arg_i) : arg_i);  \
                    j->ind[e] = plane * g->in_sz + at;                                          \
                }                                                                               \
            } else if (j->kind == POOL_AVG) {                                                   \
                double sum = 0;                                                                 \
                int64_t cnt = 0;                                                                \
                if (any) FOR_EACH_TAP(g, st, k0, k1, {                                          \
                        sum += (double)x[idx];                                                  \
                        cnt++;                                                                  \
                    });                                                                         \
                if (j->include_pad) {                                                           \
                    int64_t q0[OX_MAX_RANK], q1[OX_MAX_RANK], qs[OX_MAX_RANK];                  \
                    window(g, o, qs, q0, q1, 1);                                                \
                    cnt = 1;                                                                    \
                    for (int i = 0; i < g->r; i++) cnt *= q1[i] > q0[i] ? q1[i] - q0[i] : 0;    \
                }                                                                               \
                ((T *)j->y)[e] = cnt ? (T)(sum / (double)cnt) : (T)0;                           \
            } else {                                                                            \
                double sum = 0;                                                                 \
                if (any) FOR_EACH_TAP(g, st, k0, k1, { sum += pow(fabs((double)x[idx]), j->p); }); \
                ((T *)j->y)[e] = (T)pow(sum, 1.0 / j->p);                                       \
            }                                                                                   \
            next_pos(g, o);                                                                     \
        }                                                                                       \
    }

DEF_POOL(float, f32)
DEF_POOL(double, f64)
DEF_POOL(int8_t, i8)
DEF_POOL(uint8_t, u8)

static void run_pool_range(ox_kernel_ctx *ctx, pool_job *j, ox_dtype dt) {
    int64_t total = j->g->planes * j->g->out_sz;
    int64_t taps = 1;
    for (int i = 0; i < j->g->r; i++) taps *= j->g->k[i];
    int64_t grain = taps >= 4096 ? 1 : 4096 / taps;
    ox_range_fn fn = dt == ONYX_FLOAT32  ? pool_range_f32
                     : dt == ONYX_FLOAT64 ? pool_range_f64
                     : dt == ONYX_INT8    ? pool_range_i8
                                          : pool_range_u8;
    ox_parallel_for(ctx->pool, total, grain, fn, j);
}

static float *half_in(const ox_tensor *t) {
    int64_t n = ox_tensor_numel(t);
    float *f = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    if (!f) return NULL;
    const uint16_t *h = t->data;
    for (int64_t i = 0; i < n; i++) f[i] = ox_half_to_float(h[i]);
    return f;
}

static void half_out(ox_tensor *t, const float *f) {
    int64_t n = ox_tensor_numel(t);
    uint16_t *h = t->data;
    for (int64_t i = 0; i < n; i++) h[i] = ox_float_to_half(f[i]);
}

static int window_pool(ox_kernel_ctx *ctx, int kind) {
    const ox_tensor *X = input(ctx, 0);
    ox_tensor *Y = ctx->outputs[0];
    ox_tensor *I = ctx->n_outputs > 1 ? ctx->outputs[1] : NULL;
    pool_geom g;
    if (pool_geom_make(ctx, X, Y, &g)) return -1;
    pool_job j = {.g = &g, .kind = kind, .x = X->data, .y = Y->data};
    if (kind == POOL_MAX) {
        j.ind = I ? I->data : NULL;
        j.col_major = ir_attr_int(ctx->node, "storage_order", 0) == 1;
    } else if (kind == POOL_AVG) {
        j.include_pad = ir_attr_int(ctx->node, "count_include_pad", 0) != 0;
    } else {
        j.p = ir_attr_float(ctx->node, "p", 2.0f);
        if (!(j.p > 0))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "LpPool: p must be positive");
    }
    if (g.planes * g.out_sz == 0) return 0;
    switch (X->dtype) {
    case ONYX_FLOAT32:
    case ONYX_FLOAT64:
    case ONYX_INT8:
    case ONYX_UINT8:
        if ((X->dtype == ONYX_INT8 || X->dtype == ONYX_UINT8) && kind != POOL_MAX) break;
        run_pool_range(ctx, &j, X->dtype);
        return 0;
    case ONYX_FLOAT16: {
        float *x = half_in(X);
        float *y = malloc(sizeof(float) * (size_t)ox_tensor_numel(Y));
        if (!x || !y) {
            free(x);
            free(y);
            return oom(ctx);
        }
        j.x = x;
        j.y = y;
        run_pool_range(ctx, &j, ONYX_FLOAT32);
        half_out(Y, y);
        free(x);
        free(y);
        return 0;
    }
    default:
        break;
    }
    return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "%s: element type %s is not supported",
                          ctx->node->op_type, ox_dtype_name(X->dtype));
}

static int maxpool_compute(ox_kernel_ctx *ctx) { return window_pool(ctx, POOL_MAX); }
static int avgpool_compute(ox_kernel_ctx *ctx) { return window_pool(ctx, POOL_AVG); }
static int lppool_compute(ox_kernel_ctx *ctx) { return window_pool(ctx, POOL_LP); }

/* ================================================================ */
/* global pools: one reduction per (n, c) plane */

typedef struct global_job {
    int kind;
    const void *x;
    void *y;
    int64_t len;
    double p;
} global_job;

#define DEF_GLOBAL(T, SUF)                                                                      \
    static void global_range_##SUF(void *arg, int64_t p0, int64_t p1) {                         \
        const global_job *j = arg;                                                              \
        for (int64_t p = p0; p < p1; p++) {                                                     \
            const T *x = (const T *)j->x + p * j->len;                                          \
            T *y = (T *)j->y + p;                                                               \
            if (j->kind == POOL_MAX) {                                                          \
                T best = j->len ? x[0] : (T)0;                                                  \
                for (int64_t i = 1; i < j->len; i++)                                            \
                    if (x[i] > best) best = x[i];                                               \
                *y = best;                                                                      \
            } else if (j->kind == POOL_AVG) {                                                   \
                double s = 0;                                                                   \
                for (int64_t i = 0; i < j->len; i++) s += x[i];                                 \
                *y = j->len ? (T)(s / (double)j->len) : (T)0;                                   \
            } else {                                                                            \
                double s = 0;                                                                   \
                for (int64_t i = 0; i < j->len; i++) s += pow(fabs((double)x[i]), j->p);        \
                *y = (T)pow(s, 1.0 / j->p);                                                     \
            }                                                                                   \
        }                                                                                       \
    }

DEF_GLOBAL(float, f32)
DEF_GLOBAL(double, f64)

static int global_pool(ox_kernel_ctx *ctx, int kind) {
    const ox_tensor *X = input(ctx, 0);
    ox_tensor *Y = ctx->outputs[0];
    if (X->rank < 2)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: input must have rank >= 2",
                              ctx->node->op_type);
    int64_t planes = X->dims[0] * X->dims[1];
    if (ox_tensor_numel(Y) != planes)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "%s: output shape does not match input",
                              ctx->node->op_type);
    global_job j = {kind, X->data, Y->data, ox_numel(X->dims + 2, X->rank - 2), 0};
    if (kind == POOL_LP) {
        j.p = ir_attr_float(ctx->node, "p", 2.0f);
        if (!(j.p > 0))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "GlobalLpPool: p must be positive");
    }
    if (planes == 0) return 0;
    int64_t grain = j.len >= 8192 ? 1 : 8192 / (j.len ? j.len : 1);
    switch (X->dtype) {
    case ONYX_FLOAT32:
        ox_parallel_for(ctx->pool, planes, grain, global_range_f32, &j);
        return 0;
    case ONYX_FLOAT64:
        ox_parallel_for(ctx->pool, planes, grain, global_range_f64, &j);
        return 0;
    case ONYX_FLOAT16: {
        float *x = half_in(X), *y = malloc(sizeof(float) * (size_t)planes);
        if (!x || !y) {
            free(x);
            free(y);
            return oom(ctx);
        }
        j.x = x;
        j.y = y;
        ox_parallel_for(ctx->pool, planes, grain, global_range_f32, &j);
        half_out(Y, y);
        free(x);
        free(y);
        return 0;
    }
    default:
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "%s: element type %s is not supported",
                              ctx->node->op_type, ox_dtype_name(X->dtype));
    }
}

static int global_avg_compute(ox_kernel_ctx *ctx) { return global_pool(ctx, POOL_AVG); }
static int global_max_compute(ox_kernel_ctx *ctx) { return global_pool(ctx, POOL_MAX); }
static int global_lp_compute(ox_kernel_ctx *ctx) { return global_pool(ctx, POOL_LP); }

/* ================================================================ */
/* MaxUnpool: scatter X into a zeroed output at the flat indices I.
 * Indices address the unpooled shape implied by the attributes; when
 * output_shape asks for a larger tensor, that shape sits at its origin
 * and the rest is padding (as the ONNX test data expects). */

static int maxunpool_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = input(ctx, 0), *I = input(ctx, 1);
    ox_tensor *Y = ctx->outputs[0];
    if (I->dtype != ONYX_INT64 || !ox_shape_equal(X->dims, X->rank, I->dims, I->rank))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "MaxUnpool: I must be int64 with X's shape");
    if (Y->dtype != X->dtype || Y->rank != X->rank || X->rank < 3)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "MaxUnpool: output does not match X");
    int r = X->rank - 2;
    size_t nk = 0, ns = 0, np = 0;
    const int64_t *k = ir_attr_ints(ctx->node, "kernel_shape", &nk);
    const int64_t *st = ir_attr_ints(ctx->node, "strides", &ns), *pd = ir_attr_ints(ctx->node, "pads", &np);
    if (!k || (int)nk != r || (st && (int)ns != r) || (pd && (int)np != 2 * r))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "MaxUnpool: attributes do not match input rank");
    int64_t def[OX_MAX_RANK];
    def[0] = X->dims[0];
    def[1] = X->dims[1];
    int same = Y->dims[0] == def[0] && Y->dims[1] == def[1];
    if (!same)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "MaxUnpool: output_shape must keep N and C");
    for (int i = 0; i < r; i++) {
        def[i + 2] = (X->dims[i + 2] - 1) * (st ? st[i] : 1) + k[i] - (pd ? pd[i] + pd[i + r] : 0);
        if (def[i + 2] < 0) def[i + 2] = 0;
        if (def[i + 2] > Y->dims[i + 2])
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "MaxUnpool: output_shape is smaller than the unpooled size on axis %d", i + 2);
    }
    int64_t ndef = ox_numel(def, X->rank);
    size_t es = ox_dtype_size(X->dtype);
    int64_t n = ox_tensor_numel(X);
    memset(Y->data, 0, Y->nbytes);
    const int64_t *ind = I->data;
    for (int64_t i = 0; i < n; i++) {
        int64_t idx = ind[i];
        if (idx < 0 || idx >= ndef)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "MaxUnpool: index %lld is outside the unpooled tensor of %lld elements",
                                  (long long)idx, (long long)ndef);
        int64_t off = 0, mul = 1;
        for (int d = X->rank - 1; d >= 0; d--) {
            off += (idx % def[d]) * mul;
            idx /= def[d];
            mul *= Y->dims[d];
        }
        memcpy((char *)Y->data + (size_t)off * es, (const char *)X->data + (size_t)i * es, es);
    }
    return 0;
}

/* ================================================================ */

static int supports_float(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    (void)node;
    if (n_inputs < 1 || !inputs[0]) return 1;
    ox_dtype t = inputs[0]->dtype;
    return t == ONYX_FLOAT32 || t == ONYX_FLOAT64 || t == ONYX_FLOAT16 || t == ONYX_UNDEFINED;
}

static int supports_maxpool(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    if (n_inputs >= 1 && inputs[0] && (inputs[0]->dtype == ONYX_INT8 || inputs[0]->dtype == ONYX_UINT8))
        return 1;
    return supports_float(node, inputs, n_inputs);
}

static const ox_kernel_def KERNELS[] = {
    {"", "MaxPool", 1, 17, maxpool_compute, supports_maxpool, NULL, NULL},
    {"", "AveragePool", 1, 17, avgpool_compute, supports_float, NULL, NULL},
    {"", "LpPool", 1, 17, lppool_compute, supports_float, NULL, NULL},
    {"", "GlobalAveragePool", 1, 17, global_avg_compute, supports_float, NULL, NULL},
    {"", "GlobalMaxPool", 1, 17, global_max_compute, supports_float, NULL, NULL},
    {"", "GlobalLpPool", 1, 17, global_lp_compute, supports_float, NULL, NULL},
    {"", "MaxUnpool", 9, 17, maxunpool_compute, supports_float, NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_pool = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
