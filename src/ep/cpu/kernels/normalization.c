/* CPU kernels of the normalization operators (Batch, Instance, Layer,
 * Group, RMS, Lp, LRN and MeanVariance). Statistics accumulate in
 * double; float32 and float64 data are read directly, float16 and
 * bfloat16 go through converted copies. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/gemm.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/cpu/kernels/layernorm_row.h"
#include "ep/ep.h"
#include "ops/normalization.h"
#include "ops/op.h"

extern const ox_kernel_table ox_cpu_kernels_normalization;

static int unsupported(ox_kernel_ctx *ctx, ox_dtype t) {
    return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "%s: element type %s is not supported",
                          ctx->node->op_type, ox_dtype_name(t));
}

/* X and Y as arrays of the working type (float32 or float64): the
 * tensors' own buffers when they already hold it, otherwise converted
 * copies, the output one written back to Y by view_close. */
typedef struct wview {
    const void *x;
    void *y;
    void *xbuf, *ybuf;
    ox_dtype work;
} wview;

static int view_open(wview *v, const ox_tensor *X, ox_tensor *Y, ox_dtype work) {
    memset(v, 0, sizeof *v);
    v->work = work;
    if (X->dtype == work) {
        v->x = X->data;
        v->y = Y->data;
        return 0;
    }
    int64_t n = ox_tensor_numel(X);
    size_t bytes = ox_dtype_size(work) * (size_t)(n > 0 ? n : 1);
    v->xbuf = malloc(bytes);
    v->ybuf = malloc(bytes);
    if (!v->xbuf || !v->ybuf) {
        free(v->xbuf);
        free(v->ybuf);
        v->xbuf = v->ybuf = NULL;
        return -1;
    }
    for (int64_t i = 0; i < n; i++)
        ox_set_f64(v->xbuf, work, (size_t)i, ox_get_f64(X->data, X->dtype, (size_t)i));
    v->x = v->xbuf;
    v->y = v->ybuf;
    return 0;
}

static void view_close(wview *v, ox_tensor *Y) {
    if (v->ybuf) {
        int64_t n = ox_tensor_numel(Y);
        for (int64_t i = 0; i < n; i++)
            ox_set_f64(Y->data, Y->dtype, (size_t)i, ox_get_f64(v->ybuf, v->work, (size_t)i));
    }
    free(v->xbuf);
    free(v->ybuf);
}

/* ================================================================ */
/* per-plane affine map y = x * a + b, shared by BatchNormalization and
 * InstanceNormalization */

typedef struct affine_job {
    const void *x;
    void *y;
    int64_t planes_per_image; /* C */
    int64_t inner;
    const double *a, *b; /* per channel, or per element of an image when per_elem */
    int per_elem;
    int f64;
} affine_job;

static void affine_range(void *arg, int64_t p0, int64_t p1) {
    const affine_job *j = arg;
    for (int64_t p = p0; p < p1; p++) {
        int64_t c = p % j->planes_per_image;
        int64_t off = p * j->inner;
        if (j->f64) {
            const double *x = (const double *)j->x + off;
            double *y = (double *)j->y + off;
            if (j->per_elem) {
                const double *a = j->a + c * j->inner, *b = j->b + c * j->inner;
                for (int64_t i = 0; i < j->inner; i++) y[i] = x[i] * a[i] + b[i];
            } else {
                double a = j->a[c], b = j->b[c];
                for (int64_t i = 0; i < j->inner; i++) y[i] = x[i] * a + b;
            }
        } else {
            const float *x = (const float *)j->x + off;
            float *y = (float *)j->y + off;
            if (j->per_elem) {
                const double *a = j->a + c * j->inner, *b = j->b + c * j->inner;
                for (int64_t i = 0; i < j->inner; i++) y[i] = (float)(x[i] * a[i] + b[i]);
            } else {
                ox_vec_affine(y, x, (float)j->a[c], (float)j->b[c], j->inner);
            }
        }
    }
}

static void run_affine(ox_kernel_ctx *ctx, affine_job *j, int64_t planes) {
    int64_t grain = j->inner >= 16384 ? 1 : 16384 / (j->inner ? j->inner : 1);
    ox_parallel_for(ctx->pool, planes, grain, affine_range, j);
}

/* Mean and population variance of each channel over N and the spatial
 * axes (float32 or float64 data). */
static void channel_stats(const void *x, int f64, int64_t N, int64_t C, int64_t inner, double *mean,
                          double *var) {
    double cnt = (double)(N * inner);
    for (int64_t c = 0; c < C; c++) {
        double s = 0, ss = 0;
        for (int64_t n = 0; n < N; n++) {
            int64_t off = (n * C + c) * inner;
            for (int64_t i = 0; i < inner; i++) {
                double v = f64 ? ((const double *)x)[off + i] : ((const float *)x)[off + i];
                s += v;
            }
        }
        double m = cnt > 0 ? s / cnt : 0;
        for (int64_t n = 0; n < N; n++) {
            int64_t off = (n * C + c) * inner;
            for (int64_t i = 0; i < inner; i++) {
                double v = (f64 ? ((const double *)x)[off + i] : ((const float *)x)[off + i]) - m;
                ss += v * v;
            }
        }
        mean[c] = m;
        var[c] = cnt > 0 ? ss / cnt : 0;
    }
}

/* ================================================================ */
/* BatchNormalization */

static void store_vec(ox_tensor *t, const double *v, int64_t n) {
    if (!t) return;
    for (int64_t i = 0; i < n && i < ox_tensor_numel(t); i++) ox_set_f64(t->data, t->dtype, (size_t)i, v[i]);
}

static int batchnorm_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = ox_cpu_input(ctx, 0);
    ox_tensor *Y = ox_cpu_output(ctx, 0);
    const ir_node *nd = ctx->node;
    if (X->rank < 2)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "BatchNormalization: X must have rank >= 2");
    double eps = ir_attr_float(nd, "epsilon", 1e-5f);
    double momentum = ir_attr_float(nd, "momentum", 0.9f);
    int spatial = nd->opset < 9 ? (int)ir_attr_int(nd, "spatial", 1) : 1;
    int training = ox_batchnorm_training(nd);
    int64_t N = X->dims[0], C = X->dims[1], inner = ox_numel(X->dims + 2, X->rank - 2);
    int64_t P = spatial ? C : C * inner;
    static const char *const names[5] = {"X", "scale", "B", "mean", "var"};
    for (int i = 1; i < 5; i++)
        if (ox_tensor_numel(ox_cpu_input(ctx, i)) != P)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "BatchNormalization: %s has %lld values, expected %lld", names[i],
                                  (long long)ox_tensor_numel(ox_cpu_input(ctx, i)), (long long)P);
    if (training && !spatial)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED,
                              "BatchNormalization: training with spatial=0 is not supported");
    if (X->dtype != ONYX_FLOAT32 && X->dtype != ONYX_FLOAT64 && X->dtype != ONYX_FLOAT16 &&
        X->dtype != ONYX_BFLOAT16)
        return unsupported(ctx, X->dtype);
    double *scale = ox_cpu_load_f64(ox_cpu_input(ctx, 1)),
           *bias = ox_cpu_load_f64(ox_cpu_input(ctx, 2));
    double *mean = ox_cpu_load_f64(ox_cpu_input(ctx, 3)),
           *var = ox_cpu_load_f64(ox_cpu_input(ctx, 4));
    double *a = malloc(sizeof(double) * (size_t)(P > 0 ? P : 1));
    double *b = malloc(sizeof(double) * (size_t)(P > 0 ? P : 1));
    double *bm = malloc(sizeof(double) * (size_t)(P > 0 ? P : 1));
    double *bv = malloc(sizeof(double) * (size_t)(P > 0 ? P : 1));
    int rc = 0;
    wview v = {0};
    int f64 = X->dtype == ONYX_FLOAT64;
    if (!scale || !bias || !mean || !var || !a || !b || !bm || !bv ||
        (!f64 && view_open(&v, X, Y, ONYX_FLOAT32))) {
        rc = ox_cpu_oom(ctx);
        goto done;
    }
    const void *xd = f64 ? X->data : v.x;
    void *yd = f64 ? Y->data : v.y;
    if (training) {
        channel_stats(xd, f64, N, C, inner, bm, bv);
    } else {
        memcpy(bm, mean, sizeof(double) * (size_t)P);
        memcpy(bv, var, sizeof(double) * (size_t)P);
    }
    for (int64_t p = 0; p < P; p++) {
        a[p] = scale[p] / sqrt(bv[p] + eps);
        b[p] = bias[p] - bm[p] * a[p];
    }
    affine_job j = {xd, yd, C, inner, a, b, !spatial, f64};
    run_affine(ctx, &j, N * C);
    if (!f64) view_close(&v, Y);
    if (training) {
        /* running statistics: mean/var outputs; older opsets add the batch ones */
        for (int64_t p = 0; p < P; p++) {
            a[p] = mean[p] * momentum + bm[p] * (1 - momentum);
            b[p] = var[p] * momentum + bv[p] * (1 - momentum);
        }
        store_vec(ox_cpu_output(ctx, 1), a, P);
        store_vec(ox_cpu_output(ctx, 2), b, P);
        store_vec(ox_cpu_output(ctx, 3), bm, P);
        store_vec(ox_cpu_output(ctx, 4), bv, P);
    } else {
        store_vec(ox_cpu_output(ctx, 1), mean, P);
        store_vec(ox_cpu_output(ctx, 2), var, P);
        store_vec(ox_cpu_output(ctx, 3), mean, P);
        store_vec(ox_cpu_output(ctx, 4), var, P);
    }
done:
    free(scale);
    free(bias);
    free(mean);
    free(var);
    free(a);
    free(b);
    free(bm);
    free(bv);
    return rc;
}

/* ================================================================ */
/* InstanceNormalization */

typedef struct inorm_job {
    const void *x;
    void *y;
    int f64;
    int64_t C, inner;
    const double *scale, *bias;
    double eps;
} inorm_job;

static void inorm_range(void *arg, int64_t p0, int64_t p1) {
    const inorm_job *j = arg;
    for (int64_t p = p0; p < p1; p++) {
        int64_t c = p % j->C, off = p * j->inner;
        double s = 0, ss = 0;
        if (j->f64) {
            const double *x = (const double *)j->x + off;
            for (int64_t i = 0; i < j->inner; i++) s += x[i];
            double m = j->inner ? s / (double)j->inner : 0;
            for (int64_t i = 0; i < j->inner; i++) ss += (x[i] - m) * (x[i] - m);
            double var = j->inner ? ss / (double)j->inner : 0;
            double a = j->scale[c] / sqrt(var + j->eps), b = j->bias[c] - m * a;
            double *y = (double *)j->y + off;
            for (int64_t i = 0; i < j->inner; i++) y[i] = x[i] * a + b;
        } else {
            const float *x = (const float *)j->x + off;
            for (int64_t i = 0; i < j->inner; i++) s += x[i];
            double m = j->inner ? s / (double)j->inner : 0;
            for (int64_t i = 0; i < j->inner; i++) ss += (x[i] - m) * (x[i] - m);
            double var = j->inner ? ss / (double)j->inner : 0;
            double a = j->scale[c] / sqrt(var + j->eps), b = j->bias[c] - m * a;
            ox_vec_affine((float *)j->y + off, x, (float)a, (float)b, j->inner);
        }
    }
}

static int instancenorm_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = ox_cpu_input(ctx, 0), *S = ox_cpu_input(ctx, 1), *B = ox_cpu_input(ctx, 2);
    ox_tensor *Y = ox_cpu_output(ctx, 0);
    if (X->rank < 3)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "InstanceNormalization: input must have rank >= 3");
    int64_t N = X->dims[0], C = X->dims[1], inner = ox_numel(X->dims + 2, X->rank - 2);
    if (ox_tensor_numel(S) != C || ox_tensor_numel(B) != C)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "InstanceNormalization: scale and B must have %lld values", (long long)C);
    if (!ox_dtype_is_float(X->dtype)) return unsupported(ctx, X->dtype);
    double *scale = ox_cpu_load_f64(S), *bias = ox_cpu_load_f64(B);
    wview v = {0};
    int f64 = X->dtype == ONYX_FLOAT64, rc = 0;
    if (!scale || !bias || (!f64 && view_open(&v, X, Y, ONYX_FLOAT32))) {
        rc = ox_cpu_oom(ctx);
    } else {
        inorm_job j = {f64 ? X->data : v.x, f64 ? Y->data : v.y, f64, C, inner, scale, bias,
                       ir_attr_float(ctx->node, "epsilon", 1e-5f)};
        int64_t grain = inner >= 8192 ? 1 : 8192 / (inner ? inner : 1);
        ox_parallel_for(ctx->pool, N * C, grain, inorm_range, &j);
        if (!f64) view_close(&v, Y);
    }
    free(scale);
    free(bias);
    return rc;
}

/* ================================================================ */
/* LayerNormalization */

/* Expands a parameter that broadcasts to the normalized shape nd (nr
 * dims, D elements) into D doubles. */
static double *expand_param(const ox_tensor *t, const int64_t *nd, int nr, int64_t D) {
    double *out = malloc(sizeof(double) * (size_t)(D > 0 ? D : 1));
    if (!out) return NULL;
    int64_t str[OX_MAX_RANK];
    int64_t s = 1;
    for (int d = nr - 1; d >= 0; d--) {
        int td = d - (nr - t->rank);
        if (td < 0 || t->dims[td] == 1) {
            str[d] = 0;
        } else {
            str[d] = s;
            s *= t->dims[td];
        }
    }
    for (int64_t j = 0; j < D; j++) {
        int64_t rem = j, off = 0;
        for (int d = nr - 1; d >= 0; d--) {
            off += (rem % nd[d]) * str[d];
            rem /= nd[d];
        }
        out[j] = ox_get_f64(t->data, t->dtype, (size_t)off);
    }
    return out;
}

typedef struct lnorm_job {
    ox_layernorm_row_fn row_f32; /* this CPU's float32 row */
    const float *xf;
    float *yf;
    const double *xd;
    double *yd;
    int64_t D;
    const double *scale, *bias;
    double eps;
    ox_tensor *mean_out, *inv_out;
} lnorm_job;

/* A float64 row; float32 rows are layernorm_row.c's. */
static void lnorm_row_f64(const double *x, double *y, int64_t D, const double *scale, const double *bias,
                          double eps, double *mean, double *inv) {
    double s = 0, ss = 0;
    for (int64_t i = 0; i < D; i++) s += x[i];
    double m = D ? s / (double)D : 0;
    for (int64_t i = 0; i < D; i++) ss += (x[i] - m) * (x[i] - m);
    double iv = 1.0 / sqrt((D ? ss / (double)D : 0) + eps);
    for (int64_t i = 0; i < D; i++) y[i] = bias ? (x[i] - m) * iv * scale[i] + bias[i] : (x[i] - m) * iv * scale[i];
    *mean = m;
    *inv = iv;
}

static void lnorm_range(void *arg, int64_t r0, int64_t r1) {
    const lnorm_job *j = arg;
    for (int64_t r = r0; r < r1; r++) {
        int64_t off = r * j->D;
        double m, inv;
        if (j->xf)
            j->row_f32(j->xf + off, j->yf + off, j->D, j->scale, j->bias, j->eps, &m, &inv);
        else
            lnorm_row_f64(j->xd + off, j->yd + off, j->D, j->scale, j->bias, j->eps, &m, &inv);
        if (j->mean_out) ox_set_f64(j->mean_out->data, j->mean_out->dtype, (size_t)r, m);
        if (j->inv_out) ox_set_f64(j->inv_out->data, j->inv_out->dtype, (size_t)r, inv);
    }
}

static int layernorm_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = ox_cpu_input(ctx, 0), *S = ox_cpu_input(ctx, 1), *B = ox_cpu_input(ctx, 2);
    ox_tensor *Y = ox_cpu_output(ctx, 0);
    int64_t axis = ir_attr_int(ctx->node, "axis", -1);
    if (axis < 0) axis += X->rank;
    if (axis < 0 || axis >= X->rank)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "LayerNormalization: axis out of range");
    int nr = X->rank - (int)axis;
    const int64_t *nd = X->dims + axis;
    int64_t D = ox_numel(nd, nr), rows = ox_numel(X->dims, (int)axis);
    const ox_tensor *params[2] = {S, B};
    for (int k = 0; k < 2; k++) {
        const ox_tensor *t = params[k];
        if (!t) continue;
        int ok = t->rank <= nr;
        for (int d = 0; ok && d < t->rank; d++) {
            int64_t v = t->dims[d], w = nd[nr - t->rank + d];
            if (v != 1 && v != w) ok = 0;
        }
        if (!ok)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "LayerNormalization: %s does not broadcast to the normalized shape",
                                  k ? "B" : "Scale");
    }
    ox_tensor *MO = ox_cpu_output(ctx, 1), *IO = ox_cpu_output(ctx, 2);
    if ((MO && ox_tensor_numel(MO) != rows) || (IO && ox_tensor_numel(IO) != rows))
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "LayerNormalization: statistics outputs have the wrong size");
    if (!ox_dtype_is_float(X->dtype)) return unsupported(ctx, X->dtype);
    double *scale = expand_param(S, nd, nr, D), *bias = B ? expand_param(B, nd, nr, D) : NULL;
    wview v = {0};
    int f64 = X->dtype == ONYX_FLOAT64, rc = 0;
    if (!scale || (B && !bias) || (!f64 && view_open(&v, X, Y, ONYX_FLOAT32))) {
        rc = ox_cpu_oom(ctx);
    } else {
        lnorm_job j = {ox_layernorm_row_for(ox_cpu_isa_active()), f64 ? NULL : v.x, f64 ? NULL : v.y, f64 ? X->data : NULL, f64 ? Y->data : NULL, D,
                       scale, bias, ir_attr_float(ctx->node, "epsilon", 1e-5f), MO, IO};
        int64_t grain = D >= 8192 ? 1 : 8192 / (D ? D : 1);
        ox_parallel_for(ctx->pool, rows, grain, lnorm_range, &j);
        if (!f64) view_close(&v, Y);
    }
    free(scale);
    free(bias);
    return rc;
}

/* ================================================================ */
/* GroupNormalization: statistics per image and group of C/G adjacent
 * channels (one contiguous block), then a per-channel affine map. The
 * scale and bias hold one value per group in version 18 and one per
 * channel from version 21. Statistics are kept in double, at least the
 * precision any stash_type asks for. */

typedef struct gnorm_job {
    const void *x;
    void *y;
    int f64;
    int64_t G, cpg, inner; /* groups, channels per group, elements per channel */
    const double *scale, *bias;
    int per_channel;
    double eps;
    /* float16/bfloat16: rounds a float to that type. The spec casts the
     * normalized values back to X's type before the scale and bias stage
     * and runs that stage in X's type; this repeats those roundings. */
    float (*round_t)(float);
} gnorm_job;

static float round_f16(float v) { return ox_half_to_float(ox_float_to_half(v)); }
static float round_bf16(float v) { return ox_bf16_to_float(ox_float_to_bf16(v)); }

static void gnorm_range(void *arg, int64_t b0, int64_t b1) {
    const gnorm_job *j = arg;
    const int64_t len = j->cpg * j->inner;
    for (int64_t blk = b0; blk < b1; blk++) {
        int64_t g = blk % j->G, off = blk * len;
        double s = 0, ss = 0;
        if (j->f64) {
            const double *x = (const double *)j->x + off;
            for (int64_t i = 0; i < len; i++) s += x[i];
            double m = len ? s / (double)len : 0;
            for (int64_t i = 0; i < len; i++) ss += (x[i] - m) * (x[i] - m);
            double inv = 1.0 / sqrt((len ? ss / (double)len : 0) + j->eps);
            for (int64_t k = 0; k < j->cpg; k++) {
                int64_t p = j->per_channel ? g * j->cpg + k : g;
                double a = j->scale[p] * inv, b = j->bias[p] - m * a;
                const double *xc = x + k * j->inner;
                double *yc = (double *)j->y + off + k * j->inner;
                for (int64_t i = 0; i < j->inner; i++) yc[i] = xc[i] * a + b;
            }
        } else {
            const float *x = (const float *)j->x + off;
            for (int64_t i = 0; i < len; i++) s += x[i];
            double m = len ? s / (double)len : 0;
            for (int64_t i = 0; i < len; i++) ss += (x[i] - m) * (x[i] - m);
            double inv = 1.0 / sqrt((len ? ss / (double)len : 0) + j->eps);
            for (int64_t k = 0; k < j->cpg; k++) {
                int64_t p = j->per_channel ? g * j->cpg + k : g;
                const float *xc = x + k * j->inner;
                float *yc = (float *)j->y + off + k * j->inner;
                if (j->round_t) {
                    const float sc = (float)j->scale[p], bi = (float)j->bias[p];
                    for (int64_t i = 0; i < j->inner; i++) {
                        float nv = j->round_t((float)((xc[i] - m) * inv));
                        yc[i] = j->round_t(j->round_t(nv * sc) + bi);
                    }
                    continue;
                }
                double a = j->scale[p] * inv, b = j->bias[p] - m * a;
                ox_vec_affine(yc, xc, (float)a, (float)b, j->inner);
            }
        }
    }
}

static int groupnorm_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = ox_cpu_input(ctx, 0), *S = ox_cpu_input(ctx, 1), *B = ox_cpu_input(ctx, 2);
    ox_tensor *Y = ox_cpu_output(ctx, 0);
    const ir_node *nd = ctx->node;
    if (X->rank < 2)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "GroupNormalization: X must have rank >= 2, got %d", X->rank);
    int64_t G = ir_attr_int(nd, "num_groups", 0);
    int64_t N = X->dims[0], C = X->dims[1], inner = ox_numel(X->dims + 2, X->rank - 2);
    if (G < 1 || C % G != 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "GroupNormalization: %lld channels do not split into %lld groups",
                              (long long)C, (long long)G);
    int per_channel = ox_op_since_version(nd->domain, "GroupNormalization", nd->opset) >= 21;
    int64_t want = per_channel ? C : G;
    if (ox_tensor_numel(S) != want || ox_tensor_numel(B) != want)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "GroupNormalization: scale and bias must have %lld values "
                              "(one per %s)",
                              (long long)want, per_channel ? "channel" : "group");
    if (!ox_dtype_is_float(X->dtype)) return unsupported(ctx, X->dtype);
    if (ox_tensor_numel(X) == 0) return 0;
    double *scale = ox_cpu_load_f64(S), *bias = ox_cpu_load_f64(B);
    wview v = {0};
    int f64 = X->dtype == ONYX_FLOAT64, rc = 0;
    if (!scale || !bias || (!f64 && view_open(&v, X, Y, ONYX_FLOAT32))) {
        rc = ox_cpu_oom(ctx);
    } else {
        gnorm_job j = {f64 ? X->data : v.x, f64 ? Y->data : v.y, f64, G, C / G, inner, scale, bias,
                       per_channel, ir_attr_float(nd, "epsilon", 1e-5f),
                       X->dtype == ONYX_FLOAT16    ? round_f16
                       : X->dtype == ONYX_BFLOAT16 ? round_bf16
                                                   : NULL};
        int64_t len = (C / G) * inner;
        int64_t grain = len >= 8192 ? 1 : 8192 / (len ? len : 1);
        ox_parallel_for(ctx->pool, N * G, grain, gnorm_range, &j);
        if (!f64) view_close(&v, Y);
    }
    free(scale);
    free(bias);
    return rc;
}

/* ================================================================ */
/* RMSNormalization: y = x / sqrt(mean(x^2 over axis..) + epsilon) * scale.
 * X (type T) and scale (type V) may differ; Y has type T (see the
 * schema). The scale
 * broadcasts one way to all of X, so it is expanded over the trailing
 * dims from the first one it varies along (at most from `axis`): a
 * period of P elements, a multiple of the row length D. */

typedef struct rms_job {
    const ox_tensor *X;
    ox_tensor *Y;
    int64_t D, P;
    const double *scale;
    double eps;
} rms_job;

static void rms_range(void *arg, int64_t r0, int64_t r1) {
    const rms_job *j = arg;
    const int f32 = j->X->dtype == ONYX_FLOAT32 && j->Y->dtype == ONYX_FLOAT32;
    for (int64_t r = r0; r < r1; r++) {
        const int64_t off = r * j->D;
        const double *sc = j->scale + off % j->P;
        double ss = 0;
        if (f32) {
            const float *x = (const float *)j->X->data + off;
            float *y = (float *)j->Y->data + off;
            ss = ox_sumsq_f32_wide(x, j->D);
            double inv = 1.0 / sqrt((j->D ? ss / (double)j->D : 0) + j->eps);
            for (int64_t i = 0; i < j->D; i++) y[i] = (float)(x[i] * inv * sc[i]);
        } else {
            for (int64_t i = 0; i < j->D; i++) {
                double v = ox_get_f64(j->X->data, j->X->dtype, (size_t)(off + i));
                ss += v * v;
            }
            double inv = 1.0 / sqrt((j->D ? ss / (double)j->D : 0) + j->eps);
            /* the spec rounds the normalized values to X's type before
             * scaling: storing them in Y and reading them back does that */
            for (int64_t i = 0; i < j->D; i++) {
                size_t e = (size_t)(off + i);
                double v = ox_get_f64(j->X->data, j->X->dtype, e) * inv;
                ox_set_f64(j->Y->data, j->Y->dtype, e, v);
                v = ox_get_f64(j->Y->data, j->Y->dtype, e) * sc[i];
                ox_set_f64(j->Y->data, j->Y->dtype, e, v);
            }
        }
    }
}

static int rmsnorm_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = ox_cpu_input(ctx, 0), *S = ox_cpu_input(ctx, 1);
    ox_tensor *Y = ox_cpu_output(ctx, 0);
    if (!ox_dtype_is_float(X->dtype)) return unsupported(ctx, X->dtype);
    if (!ox_dtype_is_float(S->dtype)) return unsupported(ctx, S->dtype);
    if (Y->dtype != X->dtype)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "RMSNormalization: Y must have X's type %s",
                              ox_dtype_name(X->dtype));
    int r = X->rank;
    int64_t axis = ir_attr_int(ctx->node, "axis", -1);
    if (axis < -r || axis >= r)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "RMSNormalization: axis %lld is out of range for rank %d",
                              (long long)axis, r);
    if (axis < 0) axis += r;
    if (S->rank > r)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "RMSNormalization: scale has rank %d, more than X's %d", S->rank, r);
    int k = (int)axis;
    for (int d = 0; d < S->rank; d++) {
        int xd = r - S->rank + d;
        int64_t v = S->dims[d];
        if (v != 1 && v != X->dims[xd])
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "RMSNormalization: scale does not broadcast to X");
        if (v != 1 && xd < k) k = xd;
    }
    int64_t D = ox_numel(X->dims + axis, r - (int)axis), rows = ox_numel(X->dims, (int)axis);
    int64_t P = ox_numel(X->dims + k, r - k);
    if (ox_tensor_numel(Y) != ox_tensor_numel(X))
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "RMSNormalization: output shape mismatch");
    if (D == 0 || rows == 0) return 0;
    double *scale = expand_param(S, X->dims + k, r - k, P);
    if (!scale) return ox_cpu_oom(ctx);
    rms_job j = {X, Y, D, P, scale, ir_attr_float(ctx->node, "epsilon", 1e-5f)};
    int64_t grain = D >= 8192 ? 1 : 8192 / D;
    ox_parallel_for(ctx->pool, rows, grain, rms_range, &j);
    free(scale);
    return 0;
}

/* ================================================================ */
/* LpNormalization: x / ||x||_p along one axis (p = 1 or 2); a line whose
 * norm is 0 (all zeros) gives zeros. */

typedef struct lp_job {
    const void *x;
    void *y;
    int f64, p;
    int64_t n, inner;
} lp_job;

#define DEF_LP(T, SUF)                                                                          \
    static void lp_line_##SUF(const lp_job *j, int64_t line) {                                  \
        int64_t base = (line / j->inner) * j->n * j->inner + line % j->inner;                   \
        const T *x = (const T *)j->x + base;                                                    \
        T *y = (T *)j->y + base;                                                                \
        double s = 0;                                                                           \
        for (int64_t k = 0; k < j->n; k++) {                                                    \
            double v = x[k * j->inner];                                                         \
            s += j->p == 1 ? fabs(v) : v * v;                                                   \
        }                                                                                       \
        double norm = j->p == 1 ? s : sqrt(s);                                                  \
        for (int64_t k = 0; k < j->n; k++)                                                      \
            y[k * j->inner] = norm == 0 ? (T)0 : (T)(x[k * j->inner] / norm);                   \
    }
DEF_LP(float, f32)
DEF_LP(double, f64)

static void lp_range(void *arg, int64_t l0, int64_t l1) {
    const lp_job *j = arg;
    for (int64_t l = l0; l < l1; l++) {
        if (j->f64)
            lp_line_f64(j, l);
        else
            lp_line_f32(j, l);
    }
}

static int lpnorm_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = ox_cpu_input(ctx, 0);
    ox_tensor *Y = ox_cpu_output(ctx, 0);
    if (!ox_dtype_is_float(X->dtype)) return unsupported(ctx, X->dtype);
    int64_t p = ir_attr_int(ctx->node, "p", 2);
    if (p != 1 && p != 2)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "LpNormalization: p must be 1 or 2, got %lld", (long long)p);
    int r = X->rank;
    int64_t axis = ir_attr_int(ctx->node, "axis", -1);
    if (r == 0 || axis < -r || axis >= r)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "LpNormalization: axis %lld is out of range for rank %d",
                              (long long)axis, r);
    if (axis < 0) axis += r;
    int64_t n = X->dims[axis], inner = ox_numel(X->dims + axis + 1, r - (int)axis - 1);
    int64_t lines = ox_numel(X->dims, (int)axis) * inner;
    if (lines == 0 || n == 0) return 0;
    wview v = {0};
    int f64 = X->dtype == ONYX_FLOAT64;
    if (!f64 && view_open(&v, X, Y, ONYX_FLOAT32)) return ox_cpu_oom(ctx);
    lp_job j = {f64 ? X->data : v.x, f64 ? Y->data : v.y, f64, (int)p, n, inner};
    int64_t grain = n >= 8192 ? 1 : 8192 / n;
    ox_parallel_for(ctx->pool, lines, grain, lp_range, &j);
    if (!f64) view_close(&v, Y);
    return 0;
}

/* ================================================================ */
/* LRN: each element divided by a power of the sum of squares over a
 * window of neighbouring channels.
 * MeanVarianceNormalization: (x - mean) / (std + 1e-9) over `axes`.
 * Both run on float32 data directly and on a float64 copy otherwise. */

typedef struct lrn_job {
    const void *x;
    void *y;
    int64_t C, inner;
    int64_t lo, hi; /* window is [c - lo, c + hi] */
    double alpha_n, beta, bias;
} lrn_job;

#define DEF_LRN(T, SUF)                                                                         \
    static void lrn_range_##SUF(void *arg, int64_t p0, int64_t p1) {                            \
        const lrn_job *j = arg;                                                                 \
        const T *xs = j->x;                                                                     \
        T *ys = j->y;                                                                           \
        for (int64_t p = p0; p < p1; p++) {                                                     \
            int64_t n = p / j->C, c = p % j->C;                                                 \
            int64_t c0 = c - j->lo < 0 ? 0 : c - j->lo;                                         \
            int64_t c1 = c + j->hi >= j->C ? j->C - 1 : c + j->hi;                              \
            const T *x = xs + p * j->inner;                                                     \
            T *y = ys + p * j->inner;                                                           \
            for (int64_t i = 0; i < j->inner; i++) {                                            \
                double s = 0;                                                                   \
                for (int64_t k = c0; k <= c1; k++) {                                            \
                    double v = xs[(n * j->C + k) * j->inner + i];                               \
                    s += v * v;                                                                 \
                }                                                                               \
                y[i] = (T)(x[i] / pow(j->bias + j->alpha_n * s, j->beta));                      \
            }                                                                                   \
        }                                                                                       \
    }
DEF_LRN(float, f32)
DEF_LRN(double, f64)

static int lrn_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = ox_cpu_input(ctx, 0);
    ox_tensor *Y = ox_cpu_output(ctx, 0);
    int64_t size = ir_attr_int(ctx->node, "size", 0);
    if (size < 1) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "LRN: size must be >= 1");
    if (X->rank < 2) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "LRN: input must have rank >= 2");
    if (!ox_dtype_is_float(X->dtype)) return unsupported(ctx, X->dtype);
    int f32 = X->dtype == ONYX_FLOAT32;
    wview v = {0};
    if (!f32 && view_open(&v, X, Y, ONYX_FLOAT64)) return ox_cpu_oom(ctx);
    lrn_job j = {f32 ? X->data : v.x,
                 f32 ? Y->data : v.y,
                 X->dims[1],
                 ox_numel(X->dims + 2, X->rank - 2),
                 (size - 1) / 2,
                 size / 2,
                 ir_attr_float(ctx->node, "alpha", 1e-4f) / (double)size,
                 ir_attr_float(ctx->node, "beta", 0.75f),
                 ir_attr_float(ctx->node, "bias", 1.0f)};
    int64_t planes = X->dims[0] * X->dims[1];
    int64_t work;
    if (!ox_mul_i64(j.inner, size, &work)) work = INT64_MAX; /* only a grain heuristic */
    int64_t grain = work >= 8192 ? 1 : 8192 / (work > 0 ? work : 1);
    ox_parallel_for(ctx->pool, planes, grain, f32 ? lrn_range_f32 : lrn_range_f64, &j);
    if (!f32) view_close(&v, Y);
    return 0;
}

/* Group of each element: its coordinates on the kept axes, walked with
 * an odometer (gstr: group stride per axis, 0 on reduced axes). Advances
 * idx to the next element and returns that element's group. */
static int64_t mvn_next_group(int64_t *idx, const int64_t *dims, const int64_t *gstr, int r,
                              int64_t g) {
    for (int d = r - 1; d >= 0; d--) {
        g += gstr[d];
        if (++idx[d] < dims[d]) break;
        g -= gstr[d] * dims[d];
        idx[d] = 0;
    }
    return g;
}

#define DEF_MVN(T, SUF)                                                                         \
    static void mvn_run_##SUF(const T *x, T *y, const int64_t *dims, int r, const int64_t *gstr, \
                              int64_t n, int64_t groups, double *sum, double *sq) {             \
        int64_t per = groups ? n / groups : 0;                                                  \
        int64_t idx[OX_MAX_RANK] = {0}, g = 0;                                                  \
        for (int64_t e = 0; e < n; e++) {                                                       \
            double v = x[e];                                                                    \
            sum[g] += v;                                                                        \
            sq[g] += v * v;                                                                     \
            g = mvn_next_group(idx, dims, gstr, r, g);                                          \
        }                                                                                       \
        for (int64_t k = 0; k < groups; k++) {                                                  \
            double m = per ? sum[k] / (double)per : 0;                                          \
            double var = per ? sq[k] / (double)per - m * m : 0;                                 \
            sum[k] = m;                                                                         \
            sq[k] = 1.0 / (sqrt(var > 0 ? var : 0) + 1e-9);                                     \
        }                                                                                       \
        memset(idx, 0, sizeof idx);                                                             \
        g = 0;                                                                                  \
        for (int64_t e = 0; e < n; e++) {                                                       \
            y[e] = (T)((x[e] - sum[g]) * sq[g]);                                                \
            g = mvn_next_group(idx, dims, gstr, r, g);                                          \
        }                                                                                       \
    }
DEF_MVN(float, f32)
DEF_MVN(double, f64)

static int mvn_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = ox_cpu_input(ctx, 0);
    ox_tensor *Y = ox_cpu_output(ctx, 0);
    if (!ox_dtype_is_float(X->dtype)) return unsupported(ctx, X->dtype);
    int r = X->rank;
    int reduce[OX_MAX_RANK] = {0};
    size_t na = 0;
    const int64_t *axes = ir_attr_ints(ctx->node, "axes", &na);
    static const int64_t dflt[3] = {0, 2, 3};
    if (!axes) {
        axes = dflt;
        na = 3;
    }
    for (size_t i = 0; i < na; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
        if (a < 0 || a >= r)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "MeanVarianceNormalization: axis %lld is out of range for rank %d",
                                  (long long)axes[i], r);
        reduce[a] = 1;
    }
    int64_t gstr[OX_MAX_RANK], groups = 1;
    for (int d = r - 1; d >= 0; d--) {
        gstr[d] = reduce[d] ? 0 : groups;
        if (!reduce[d]) groups *= X->dims[d];
    }
    int64_t n = ox_tensor_numel(X);
    double *sum = calloc((size_t)(groups > 0 ? groups : 1), sizeof(double));
    double *sq = calloc((size_t)(groups > 0 ? groups : 1), sizeof(double));
    int f32 = X->dtype == ONYX_FLOAT32, rc = 0;
    wview v = {0};
    if (!sum || !sq || (!f32 && view_open(&v, X, Y, ONYX_FLOAT64))) {
        rc = ox_cpu_oom(ctx);
    } else if (f32) {
        mvn_run_f32(X->data, Y->data, X->dims, r, gstr, n, groups, sum, sq);
    } else {
        mvn_run_f64(v.x, v.y, X->dims, r, gstr, n, groups, sum, sq);
        view_close(&v, Y);
    }
    free(sum);
    free(sq);
    return rc;
}

static const ox_kernel_def KERNELS[] = {
    {"", "BatchNormalization", 1, 17, batchnorm_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "InstanceNormalization", 1, 22, instancenorm_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "GroupNormalization", 18, 21, groupnorm_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "RMSNormalization", 23, 23, rmsnorm_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "LpNormalization", 1, 22, lpnorm_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "LayerNormalization", 17, 17, layernorm_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "LRN", 1, 17, lrn_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "MeanVarianceNormalization", 9, 17, mvn_compute, ox_cpu_supports_float, NULL, NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_normalization = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
