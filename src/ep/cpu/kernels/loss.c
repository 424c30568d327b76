/* CPU kernels of the loss operators and of Dropout. Losses accumulate in
 * double whatever the element type, so float16 / bfloat16 losses and
 * long reductions keep their precision until the final store. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"

extern const ox_kernel_table ox_cpu_kernels_loss;

static void store_f64(ox_tensor *t, const double *d) {
    int64_t n = ox_tensor_numel(t);
    if (t->dtype == ONYX_FLOAT32) {
        float *f = t->data;
        for (int64_t i = 0; i < n; i++) f[i] = (float)d[i];
    } else if (t->dtype == ONYX_FLOAT64) {
        memcpy(t->data, d, sizeof(double) * (size_t)n);
    } else {
        for (int64_t i = 0; i < n; i++) ox_set_f64(t->data, t->dtype, (size_t)i, d[i]);
    }
}

/* ================================================================ */
/* SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss share one
 * kernel: SCE first turns scores into log-probabilities along the class
 * axis, then both pick -logp[label] * weight[label] per sample. */

typedef enum { RED_NONE, RED_SUM, RED_MEAN } reduction;

static int loss_compute(ox_kernel_ctx *ctx) {
    const char *op = ctx->node->op_type;
    int sce = strcmp(op, "SoftmaxCrossEntropyLoss") == 0;
    const ox_tensor *x = ox_cpu_input(ctx, 0), *lab = ox_cpu_input(ctx, 1),
                    *w = ox_cpu_input(ctx, 2);
    ox_tensor *out = ox_cpu_output(ctx, 0), *logp_out = sce ? ox_cpu_output(ctx, 1) : NULL;
    if (!x || !lab || !out)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: inputs 0 and 1 are required", op);
    if (!ox_dtype_is_float(x->dtype))
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "%s: element type %s is not supported", op,
                              ox_dtype_name(x->dtype));
    if (lab->dtype != ONYX_INT32 && lab->dtype != ONYX_INT64)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: labels must be int32 or int64, got %s", op,
                              ox_dtype_name(lab->dtype));
    if (x->rank < 2 || lab->rank != x->rank - 1)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: expected input of rank >= 2 and labels of rank one less, got %d and %d", op,
                              x->rank, lab->rank);
    const int64_t N = x->dims[0], C = x->dims[1];
    int64_t D = 1;
    for (int i = 2; i < x->rank; i++) D *= x->dims[i];
    for (int i = 0; i < lab->rank; i++)
        if (lab->dims[i] != x->dims[i == 0 ? 0 : i + 1])
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: labels dim %d is %" PRId64 " but the input has %" PRId64, op, i,
                                  lab->dims[i], x->dims[i == 0 ? 0 : i + 1]);
    if (w && (w->rank != 1 || w->dims[0] != C || w->dtype != x->dtype))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: weights must be a 1-D %s tensor with one value per class (%" PRId64 ")", op,
                              ox_dtype_name(x->dtype), C);
    const char *rs = ir_attr_string(ctx->node, "reduction", "mean");
    reduction red = strcmp(rs, "none") == 0 ? RED_NONE : strcmp(rs, "sum") == 0 ? RED_SUM : RED_MEAN;
    if (red == RED_MEAN && strcmp(rs, "mean") != 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: unknown reduction '%s'", op, rs);
    const ir_attr *ia = ir_node_attr(ctx->node, "ignore_index");
    int has_ignore = ia != NULL;
    int64_t ignore = has_ignore ? ia->i : 0;

    int64_t nx = ox_tensor_numel(x), ns = N * D;
    double *xv = ox_cpu_load_f64(x);
    double *wv = w ? ox_cpu_load_f64(w) : NULL;
    double *loss = malloc(sizeof(double) * (size_t)(ns > 0 ? ns : 1));
    double *lse = sce ? malloc(sizeof(double) * (size_t)(D > 0 ? D : 1)) : NULL;
    int rc = 0;
    if (!xv || (w && !wv) || !loss || (sce && !lse)) {
        rc = ox_cpu_oom(ctx);
        goto done;
    }

    double total = 0.0, total_w = 0.0;
    for (int64_t n = 0; n < N && rc == 0; n++) {
        double *xn = xv + n * C * D;
        if (sce) {
            /* log-softmax over classes, one column per spatial position;
             * subtracting the max keeps exp() from overflowing */
            for (int64_t d = 0; d < D; d++) lse[d] = -INFINITY;
            for (int64_t c = 0; c < C; c++)
                for (int64_t d = 0; d < D; d++)
                    if (xn[c * D + d] > lse[d]) lse[d] = xn[c * D + d];
            double *sum = loss + n * D; /* scratch until the losses are written */
            for (int64_t d = 0; d < D; d++) sum[d] = 0.0;
            for (int64_t c = 0; c < C; c++)
                for (int64_t d = 0; d < D; d++) sum[d] += exp(xn[c * D + d] - lse[d]);
            for (int64_t d = 0; d < D; d++) lse[d] += log(sum[d]);
            for (int64_t c = 0; c < C; c++)
                for (int64_t d = 0; d < D; d++) xn[c * D + d] -= lse[d];
        }
        for (int64_t d = 0; d < D; d++) {
            int64_t k = n * D + d;
            int64_t label = ox_get_i64(lab->data, lab->dtype, (size_t)k);
            if (has_ignore && label == ignore) {
                loss[k] = 0.0;
                continue;
            }
            if (label < 0 || label >= C) {
                rc = ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR,
                                    "%s: label %" PRId64 " at flat position %" PRId64
                                    " is out of range for %" PRId64 " classes (allowed [0, %" PRId64 "]%s)",
                                    op, label, k, C, C - 1, has_ignore ? " or ignore_index" : "");
                break;
            }
            double wt = wv ? wv[label] : 1.0;
            loss[k] = -xn[label * D + d] * wt;
            total += loss[k];
            total_w += wt;
        }
    }
    if (rc) goto done;

    if (red == RED_NONE) {
        store_f64(out, loss);
    } else {
        /* mean divides by the weights of the counted samples (their
         * number when unweighted): ignored samples count for nothing */
        double v = red == RED_SUM ? total : total / total_w;
        ox_set_f64(out->data, out->dtype, 0, v);
    }
    if (logp_out) {
        if (ox_tensor_numel(logp_out) != nx) {
            rc = ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: log_prob output has the wrong size", op);
            goto done;
        }
        store_f64(logp_out, xv);
    }
done:
    free(xv);
    free(wv);
    free(loss);
    free(lse);
    return rc;
}

/* ================================================================ */
/* regularisation in inference: Dropout.
 *
 * Without training_mode (always before opset 12, since onyx does not
 * train) Dropout is the identity and its mask is all true. In training
 * mode each element is kept when a uniform draw in [0, 1) is >= ratio and
 * scaled by 1 / (1 - ratio). The draws come from a 32-bit Mersenne
 * Twister seeded with the `seed` attribute (taken modulo 2^32), with
 * 53-bit doubles built from two outputs: the same stream numpy's legacy
 * generator produces for that seed. Other runtimes use other generators,
 * so their masks differ. With no `seed` the seed is derived from the
 * node's name and output, so each node has its own stream. Every run
 * restarts the stream: the same node on the same input gives the same
 * mask each time, which keeps runs reproducible and free of shared
 * mutable state. */

#define MT_N 624
#define MT_M 397

typedef struct mt19937 {
    uint32_t s[MT_N];
    int pos;
} mt19937;

static void mt_seed(mt19937 *g, uint32_t seed) {
    g->s[0] = seed;
    for (uint32_t i = 1; i < MT_N; i++)
        g->s[i] = 1812433253u * (g->s[i - 1] ^ (g->s[i - 1] >> 30)) + i;
    g->pos = MT_N;
}

static void mt_refill(mt19937 *g) {
    for (int i = 0; i < MT_N; i++) {
        uint32_t y = (g->s[i] & 0x80000000u) | (g->s[(i + 1) % MT_N] & 0x7fffffffu);
        g->s[i] = g->s[(i + MT_M) % MT_N] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    }
    g->pos = 0;
}

static uint32_t mt_next(mt19937 *g) {
    if (g->pos >= MT_N) mt_refill(g);
    uint32_t y = g->s[g->pos++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

/* Uniform in [0, 1) with 53 random bits. */
static double mt_uniform(mt19937 *g) {
    uint32_t a = mt_next(g) >> 5, b = mt_next(g) >> 6;
    return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

static uint32_t default_seed(const ir_node *node) {
    /* FNV-1a over the name, then the output value id, which tells
     * unnamed nodes apart */
    const char *s = node->name ? node->name : "";
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
    uint32_t out = node->n_outputs > 0 ? (uint32_t)node->outputs[0] : 0u;
    for (int k = 0; k < 4; k++) h = (h ^ ((out >> (8 * k)) & 0xffu)) * 16777619u;
    return h;
}

static void set_mask(ox_tensor *mask, int64_t i, int keep) {
    if (mask->dtype == ONYX_BOOL)
        ((uint8_t *)mask->data)[i] = (uint8_t)keep;
    else
        ox_set_f64(mask->data, mask->dtype, (size_t)i, keep ? 1.0 : 0.0);
}

static int dropout_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ox_cpu_input(ctx, 0);
    ox_tensor *y = ox_cpu_output(ctx, 0), *mask = ox_cpu_output(ctx, 1);
    if (!x || !y) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Dropout: data is required");
    if (!ox_dtype_is_float(x->dtype) || y->dtype != x->dtype)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "Dropout: element type %s is not supported",
                              ox_dtype_name(x->dtype));
    int64_t n = ox_tensor_numel(x);
    if (ox_tensor_numel(y) != n || (mask && ox_tensor_numel(mask) != n))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Dropout: outputs do not match the data shape");

    int training = 0;
    double ratio = 0.5;
    if (ctx->node->opset >= 12) {
        const ox_tensor *r = ox_cpu_input(ctx, 1), *t = ox_cpu_input(ctx, 2);
        if (t) {
            if (t->dtype != ONYX_BOOL || ox_tensor_numel(t) != 1)
                return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Dropout: training_mode must be one bool");
            training = ((const uint8_t *)t->data)[0] != 0;
        }
        if (r) {
            if (!ox_dtype_is_float(r->dtype) || ox_tensor_numel(r) != 1)
                return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Dropout: ratio must be one float value");
            ratio = ox_get_f64(r->data, r->dtype, 0);
        }
    }
    if (training && !(ratio >= 0.0 && ratio < 1.0))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Dropout: ratio %g is outside [0, 1)", ratio);

    if (!training || ratio == 0.0) {
        if (y->data != x->data && n > 0) memcpy(y->data, x->data, (size_t)n * ox_dtype_size(x->dtype));
        if (mask)
            for (int64_t i = 0; i < n; i++) set_mask(mask, i, 1);
        return 0;
    }

    mt19937 *g = malloc(sizeof *g);
    if (!g) return ox_cpu_oom(ctx);
    const ir_attr *sa = ir_node_attr(ctx->node, "seed");
    mt_seed(g, sa ? (uint32_t)(uint64_t)sa->i : default_seed(ctx->node));
    if (x->dtype == ONYX_FLOAT32) {
        /* scale in float32, as data * mask * scale is written for float data */
        float scale = 1.0f / (1.0f - (float)ratio);
        const float *xd = x->data;
        float *yd = y->data;
        for (int64_t i = 0; i < n; i++) {
            int keep = mt_uniform(g) >= ratio;
            yd[i] = xd[i] * (keep ? 1.0f : 0.0f) * scale;
            if (mask) set_mask(mask, i, keep);
        }
    } else {
        double scale = 1.0 / (1.0 - ratio);
        for (int64_t i = 0; i < n; i++) {
            int keep = mt_uniform(g) >= ratio;
            double v = ox_get_f64(x->data, x->dtype, (size_t)i);
            ox_set_f64(y->data, y->dtype, (size_t)i, v * (keep ? 1.0 : 0.0) * scale);
            if (mask) set_mask(mask, i, keep);
        }
    }
    free(g);
    return 0;
}

static const ox_kernel_def KERNELS[] = {
    {"", "SoftmaxCrossEntropyLoss", 12, 17, loss_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "NegativeLogLikelihoodLoss", 12, 22, loss_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "Dropout", 1, 22, dropout_compute, ox_cpu_supports_float, NULL, NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_loss = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
