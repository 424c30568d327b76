/* CPU kernels of the com.microsoft contrib operators that ONNX Runtime
 * writes into its saved optimized graphs (see src/ops/contrib.c). The
 * fused ones run the provider's own kernel for their base ONNX operator
 * (Conv, Gemm, MatMul) and then their epilogue, so a fused node computes
 * exactly what the unfused pair computes in onyx. float32 only: ONNX
 * Runtime's CPU provider writes these operators for float32 graphs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/activation.h"
#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/elementwise.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"
#include "ops/contrib.h"

/* ---- activations of the fused operators ---- */

typedef enum { ACT_NONE, ACT_RELU, ACT_SIGMOID, ACT_TANH, ACT_LEAKY, ACT_CLIP, ACT_HARDSIGMOID,
               ACT_ELU, ACT_SOFTPLUS } act_kind;

typedef struct activation {
    act_kind kind;
    float a, b;
} activation;

/* FusedConv passes the parameters as `activation_params`; FusedGemm and
 * FusedMatMulActivation as activation_alpha/activation_beta. Defaults
 * are the standalone ONNX operators'. */
static int parse_activation(ox_kernel_ctx *ctx, activation *act) {
    static const struct {
        const char *name;
        act_kind kind;
        float a, b;
    } KINDS[] = {{"Relu", ACT_RELU, 0, 0},         {"Sigmoid", ACT_SIGMOID, 0, 0},
                 {"Tanh", ACT_TANH, 0, 0},         {"LeakyRelu", ACT_LEAKY, 0.01f, 0},
                 {"Clip", ACT_CLIP, -INFINITY, INFINITY},
                 {"HardSigmoid", ACT_HARDSIGMOID, 0.2f, 0.5f},
                 {"Elu", ACT_ELU, 1.0f, 0},        {"Softplus", ACT_SOFTPLUS, 0, 0}};
    const ir_node *n = ctx->node;
    act->kind = ACT_NONE;
    const char *name = ir_attr_string(n, "activation", NULL);
    if (!name) return 0;
    size_t i = 0;
    while (i < sizeof KINDS / sizeof KINDS[0] && strcmp(KINDS[i].name, name) != 0) i++;
    if (i == sizeof KINDS / sizeof KINDS[0])
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "%s: activation '%s' is not supported",
                              n->op_type, name);
    act->kind = KINDS[i].kind;
    act->a = KINDS[i].a;
    act->b = KINDS[i].b;
    size_t np = 0;
    const float *p = ir_attr_floats(n, "activation_params", &np);
    if (p && np > 0) act->a = p[0];
    if (p && np > 1) act->b = p[1];
    if (ir_node_attr(n, "activation_alpha")) act->a = ir_attr_float(n, "activation_alpha", act->a);
    if (ir_node_attr(n, "activation_beta")) act->b = ir_attr_float(n, "activation_beta", act->b);
    return 0;
}

static void apply_activation(const activation *act, float *y, int64_t n) {
    float a = act->a, b = act->b;
    switch (act->kind) {
    case ACT_NONE: break;
    case ACT_RELU:
        for (int64_t i = 0; i < n; i++) y[i] = y[i] > 0.0f ? y[i] : 0.0f;
        break;
    case ACT_SIGMOID:
        for (int64_t i = 0; i < n; i++) y[i] = 1.0f / (1.0f + expf(-y[i]));
        break;
    case ACT_TANH:
        for (int64_t i = 0; i < n; i++) y[i] = tanhf(y[i]);
        break;
    case ACT_LEAKY:
        for (int64_t i = 0; i < n; i++) y[i] = y[i] >= 0.0f ? y[i] : a * y[i];
        break;
    case ACT_CLIP:
        for (int64_t i = 0; i < n; i++) y[i] = y[i] < a ? a : (y[i] > b ? b : y[i]);
        break;
    case ACT_HARDSIGMOID:
        for (int64_t i = 0; i < n; i++) {
            float v = a * y[i] + b;
            y[i] = v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
        }
        break;
    case ACT_ELU:
        for (int64_t i = 0; i < n; i++) y[i] = y[i] >= 0.0f ? y[i] : a * expm1f(y[i]);
        break;
    case ACT_SOFTPLUS:
        for (int64_t i = 0; i < n; i++) y[i] = y[i] > 20.0f ? y[i] : log1pf(expf(y[i]));
        break;
    }
}

/* Runs the base ONNX operator's kernel of this provider on the view of the
 * node, with `inputs` (n of them) and the node's outputs. A base kernel
 * with per-node state gets it built for this call. */
static int run_base(ox_kernel_ctx *ctx, ox_tensor *const *inputs, int n) {
    ir_node view;
    if (ox_contrib_base_view(ctx->node, &view) != 0)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "%s has no base operator",
                              ctx->node->op_type);
    const ox_kernel_def *k = ctx->ep->ops->find_kernel(ctx->ep, &view);
    if (!k)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "%s: no kernel for its base %s",
                              ctx->node->op_type, view.op_type);
    ox_kernel_ctx sub = *ctx;
    sub.node = &view;
    sub.n_inputs = n < view.n_inputs ? n : view.n_inputs;
    sub.inputs = inputs;
    sub.state = NULL;
    ox_kernel_init in = {&view, (const ox_tensor *const *)inputs, sub.n_inputs, NULL, NULL, NULL};
    if (k->init && k->init(&in, &sub.state, ctx->err) != 0) return -1;
    int rc = k->compute(&sub);
    if (k->release && sub.state) k->release(sub.state);
    return rc;
}

static int fused_conv_compute(ox_kernel_ctx *ctx) {
    activation act;
    if (parse_activation(ctx, &act)) return -1;
    if (run_base(ctx, ctx->inputs, ctx->n_inputs < 3 ? ctx->n_inputs : 3)) return -1;
    ox_tensor *y = ctx->outputs[0];
    const ox_tensor *z = ox_cpu_input(ctx, 3);
    int64_t n = ox_tensor_numel(y);
    float *yd = y->data;
    if (z) {
        if (z->dtype != ONYX_FLOAT32 || ox_tensor_numel(z) != n)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "FusedConv: Z must be float32 with the output's %lld elements",
                                  (long long)n);
        const float *zd = z->data;
        for (int64_t i = 0; i < n; i++) yd[i] += zd[i];
    }
    apply_activation(&act, yd, n);
    return 0;
}

static int fused_gemm_compute(ox_kernel_ctx *ctx) {
    activation act;
    if (parse_activation(ctx, &act) || run_base(ctx, ctx->inputs, ctx->n_inputs)) return -1;
    apply_activation(&act, ctx->outputs[0]->data, ox_tensor_numel(ctx->outputs[0]));
    return 0;
}

/* A copy of x with its last two dimensions swapped. */
static ox_tensor *transpose_last2(ox_kernel_ctx *ctx, const ox_tensor *x) {
    int r = x->rank;
    int64_t dims[OX_MAX_RANK];
    memcpy(dims, x->dims, (size_t)r * sizeof *dims);
    int64_t rows = dims[r - 2], cols = dims[r - 1];
    dims[r - 2] = cols;
    dims[r - 1] = rows;
    ox_tensor *t = ox_tensor_new(ONYX_FLOAT32, dims, r, ctx->err);
    if (!t) return NULL;
    int64_t mat = rows * cols, batches = mat ? ox_tensor_numel(x) / mat : 0;
    const float *src = x->data;
    float *dst = t->data;
    for (int64_t b = 0; b < batches; b++)
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) dst[b * mat + j * rows + i] = src[b * mat + i * cols + j];
    return t;
}

static int fused_matmul_compute(ox_kernel_ctx *ctx) {
    activation act = {ACT_NONE, 0, 0};
    if (strcmp(ctx->node->op_type, "FusedMatMulActivation") == 0 && parse_activation(ctx, &act))
        return -1;
    ox_tensor *ins[2] = {ctx->inputs[0], ctx->inputs[1]}, *owned[2] = {NULL, NULL};
    int rc = 0;
    for (int i = 0; i < 2 && rc == 0; i++) {
        if (!ir_attr_int(ctx->node, i ? "transB" : "transA", 0)) continue;
        if (ins[i]->rank < 2) {
            rc = ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: cannot transpose a 1-D operand",
                                ctx->node->op_type);
            break;
        }
        owned[i] = transpose_last2(ctx, ins[i]);
        if (!owned[i]) rc = -1;
        ins[i] = owned[i];
    }
    if (rc == 0) rc = run_base(ctx, ins, 2);
    ox_tensor_free(owned[0]);
    ox_tensor_free(owned[1]);
    if (rc) return -1;
    float alpha = ir_attr_float(ctx->node, "alpha", 1.0f);
    float *y = ctx->outputs[0]->data;
    int64_t n = ox_tensor_numel(ctx->outputs[0]);
    if (alpha != 1.0f)
        for (int64_t i = 0; i < n; i++) y[i] *= alpha;
    apply_activation(&act, y, n);
    return 0;
}

/* ---- GELU family ---- */

/* x (+ a 1-D bias along the last dimension, when given) into y. */
static int add_bias(ox_kernel_ctx *ctx, const ox_tensor *x, const ox_tensor *bias, float *y) {
    int64_t n = ox_tensor_numel(x);
    memcpy(y, x->data, (size_t)n * sizeof *y);
    if (!bias) return 0;
    int64_t h = ox_tensor_numel(bias);
    if (bias->dtype != ONYX_FLOAT32 || x->rank < 1 || h != x->dims[x->rank - 1])
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: bias must be float32 with the last dimension's %lld entries",
                              ctx->node->op_type, (long long)(x->rank ? x->dims[x->rank - 1] : 0));
    const float *b = bias->data;
    for (int64_t i = 0; i < n; i += h)
        for (int64_t j = 0; j < h; j++) y[i + j] += b[j];
    return 0;
}

/* The exact GELU over [b, e) of y, a thread's share of the tensor. */
typedef struct gelu_job {
    float *y;
    ox_cpu_isa isa;
} gelu_job;

static void gelu_range(void *arg, int64_t b, int64_t e) {
    const gelu_job *j = arg;
    const ox_act gelu = {OX_ACT_GELU, 0.0f, 0.0f};
    ox_act_bias_rows(&gelu, j->y + b, 1, e - b, e - b, NULL, j->isa);
}

/* Elements per share: each costs a few nanoseconds (an exp and a
 * division), so shares this size are worth handing to a thread. */
#define GELU_GRAIN 4096

static int gelu_family_compute(ox_kernel_ctx *ctx) {
    const char *op = ctx->node->op_type;
    const ox_tensor *x = ctx->inputs[0];
    float *y = ctx->outputs[0]->data;
    int64_t n = ox_tensor_numel(x);
    if (add_bias(ctx, x, ox_cpu_input(ctx, 1), y)) return -1;
    if (strcmp(op, "QuickGelu") == 0) {
        /* x * sigmoid(alpha x), alpha 1.702 by default */
        float alpha = ir_attr_float(ctx->node, "alpha", 1.702f);
        for (int64_t i = 0; i < n; i++) y[i] = y[i] / (1.0f + expf(-alpha * y[i]));
    } else if (strcmp(op, "FastGelu") == 0) {
        /* the tanh approximation 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x +
         * 0.044715 x^3), written as x * sigmoid(2u): the same function,
         * without the cancellation of 1 + tanh(u) for very negative x */
        for (int64_t i = 0; i < n; i++) {
            float v = y[i];
            float u = 0.7978845608f * (v + 0.044715f * v * v * v);
            y[i] = v / (1.0f + expf(-2.0f * u));
        }
    } else {
        /* Gelu and BiasGelu: the exact form with erf, by the vector
         * activation rows of the fused ops, in shares over the pool (an
         * element's value does not depend on its share) */
        gelu_job j = {y, ox_cpu_isa_active()};
        ox_parallel_for(ctx->pool, n, GELU_GRAIN, gelu_range, &j);
    }
    return 0;
}

/* ---- normalizations ---- */

/* A 1-D float32 parameter of h entries, or NULL when the input is absent. */
static int vector_param(ox_kernel_ctx *ctx, int i, int64_t h, const float **out) {
    const ox_tensor *t = ox_cpu_input(ctx, i);
    *out = NULL;
    if (!t) return 0;
    if (t->dtype != ONYX_FLOAT32 || ox_tensor_numel(t) != h)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: input %d must be float32 with %lld entries", ctx->node->op_type,
                              i, (long long)h);
    *out = t->data;
    return 0;
}

/* Skip[Simplified]LayerNormalization: per row of `hidden` values,
 * s = input + skip + bias, then (s - mean) / sqrt(var + eps) * gamma +
 * beta, or s / sqrt(mean(s^2) + eps) * gamma for the simplified form. The
 * skip tensor may cover fewer rows (shape [1, S, H] or [S, H]) and then
 * repeats over the batch. Statistics are accumulated in double. */
static int skip_layernorm_compute(ox_kernel_ctx *ctx) {
    int simplified = strcmp(ctx->node->op_type, "SkipSimplifiedLayerNormalization") == 0;
    const ox_tensor *x = ctx->inputs[0], *skip = ctx->inputs[1];
    int64_t h = x->dims[x->rank - 1], n = ox_tensor_numel(x);
    int64_t rows = h ? n / h : 0, skip_rows = h ? ox_tensor_numel(skip) / h : 0;
    if (skip->dtype != ONYX_FLOAT32 || skip->dims[skip->rank - 1] != h || skip_rows < 1 ||
        rows % skip_rows != 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: skip does not broadcast to the input", ctx->node->op_type);
    const float *gamma, *beta = NULL, *bias;
    if (vector_param(ctx, 2, h, &gamma) || (!simplified && vector_param(ctx, 3, h, &beta)) ||
        vector_param(ctx, simplified ? 3 : 4, h, &bias))
        return -1;
    double eps = ir_attr_float(ctx->node, "epsilon", 1e-12f);
    const float *xd = x->data, *sd = skip->data;
    float *y = ctx->outputs[0]->data;
    ox_tensor *mean_t = ox_cpu_output(ctx, 1), *inv_t = ox_cpu_output(ctx, 2);
    ox_tensor *sum_t = ox_cpu_output(ctx, 3);
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = xd + r * h, *sr = sd + (r % skip_rows) * h;
        float *yr = y + r * h;
        double sum = 0.0, sq = 0.0;
        for (int64_t j = 0; j < h; j++) {
            float v = xr[j] + sr[j] + (bias ? bias[j] : 0.0f);
            yr[j] = v;
            sum += v;
            sq += (double)v * v;
        }
        if (sum_t) memcpy((float *)sum_t->data + r * h, yr, (size_t)h * sizeof *yr);
        double mean = simplified ? 0.0 : sum / (double)h;
        double var = simplified ? sq / (double)h : sq / (double)h - mean * mean;
        if (var < 0.0) var = 0.0;
        double inv = 1.0 / sqrt(var + eps);
        for (int64_t j = 0; j < h; j++)
            yr[j] = (float)(((double)yr[j] - mean) * inv) * gamma[j] + (beta ? beta[j] : 0.0f);
        if (mean_t) ((float *)mean_t->data)[r] = (float)mean;
        if (inv_t) ((float *)inv_t->data)[r] = (float)inv;
    }
    return 0;
}

/* SimplifiedLayerNormalization: RMS normalization over axis..rank-1,
 * with `scale` broadcast over the normalized shape (what the optimizer's
 * fuse_rmsnorm pass makes of LLaMA's and T5's written-out RMSNorm): rows
 * in parallel, each row's squares summed in double (ox_sumsq_f32_wide,
 * as RMSNormalization's), y = (float)(x / rms) * scale. */
typedef struct rms_job {
    const float *x, *scale;
    float *y, *inv; /* inv: 1 / rms per row, or NULL */
    int64_t h, sn;  /* row length; scale's length, which divides h */
    double eps;
} rms_job;

static void rms_rows(void *arg, int64_t r0, int64_t r1) {
    const rms_job *j = arg;
    const int64_t h = j->h;
    for (int64_t r = r0; r < r1; r++) {
        const float *xr = j->x + r * h;
        float *yr = j->y + r * h;
        const double inv = 1.0 / sqrt(ox_sumsq_f32_wide(xr, h) / (double)h + j->eps);
        int64_t k;
        if (j->sn == h)
            for (k = 0; k < h; k++) yr[k] = (float)((double)xr[k] * inv) * j->scale[k];
        else
            for (k = 0; k < h; k++) yr[k] = (float)((double)xr[k] * inv) * j->scale[k % j->sn];
        if (j->inv) j->inv[r] = (float)inv;
    }
}

static int simplified_layernorm_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ctx->inputs[0], *scale = ctx->inputs[1];
    int64_t ax = ir_attr_int(ctx->node, "axis", -1);
    if (ax < 0) ax += x->rank;
    if (ax < 0 || ax >= x->rank)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "SimplifiedLayerNormalization: axis out of range");
    int64_t h = 1;
    for (int d = (int)ax; d < x->rank; d++) h *= x->dims[d];
    int64_t rows = h ? ox_tensor_numel(x) / h : 0, sn = ox_tensor_numel(scale);
    if (scale->dtype != ONYX_FLOAT32 || sn < 1 || h % sn != 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "SimplifiedLayerNormalization: scale does not broadcast to the "
                              "normalized shape");
    ox_tensor *inv_t = ox_cpu_output(ctx, 1);
    rms_job j = {x->data, scale->data, ctx->outputs[0]->data, inv_t ? inv_t->data : NULL, h, sn,
                 ir_attr_float(ctx->node, "epsilon", 1e-5f)};
    if (rows > 0) ox_parallel_for(ctx->pool, rows, h >= 8192 ? 1 : 8192 / (h ? h : 1), rms_rows, &j);
    return 0;
}

static int layernorm_v1_compute(ox_kernel_ctx *ctx) {
    return run_base(ctx, ctx->inputs, ctx->n_inputs);
}

static const ox_kernel_def KERNELS[] = {
    {"com.microsoft", "FusedConv", 1, 1, fused_conv_compute, ox_cpu_supports_f32, NULL, NULL, NULL},
    {"com.microsoft", "FusedGemm", 1, 1, fused_gemm_compute, ox_cpu_supports_f32, NULL, NULL, NULL},
    {"com.microsoft", "FusedMatMul", 1, 1, fused_matmul_compute, ox_cpu_supports_f32, NULL, NULL, NULL},
    {"com.microsoft", "FusedMatMulActivation", 1, 1, fused_matmul_compute, ox_cpu_supports_f32, NULL,
     NULL, NULL},
    {"com.microsoft", "QuickGelu", 1, 1, gelu_family_compute, ox_cpu_supports_f32, NULL, NULL, NULL},
    {"com.microsoft", "Gelu", 1, 1, gelu_family_compute, ox_cpu_supports_f32, NULL, NULL, NULL},
    {"com.microsoft", "FastGelu", 1, 1, gelu_family_compute, ox_cpu_supports_f32, NULL, NULL, NULL},
    {"com.microsoft", "BiasGelu", 1, 1, gelu_family_compute, ox_cpu_supports_f32, NULL, NULL, NULL},
    {"com.microsoft", "SkipLayerNormalization", 1, 1, skip_layernorm_compute, ox_cpu_supports_f32, NULL,
     NULL, NULL},
    {"com.microsoft", "SkipSimplifiedLayerNormalization", 1, 1, skip_layernorm_compute,
     ox_cpu_supports_f32, NULL, NULL, NULL},
    {"", "LayerNormalization", 1, 16, layernorm_v1_compute, ox_cpu_supports_f32, NULL, NULL, NULL},
    {"", "SimplifiedLayerNormalization", 1, 1000, simplified_layernorm_compute, ox_cpu_supports_f32, NULL,
     NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_contrib = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
