/* CPU kernels of RNN, GRU and LSTM. Each direction first projects the
 * whole input sequence through W in one GEMM (with both biases folded
 * in where they simply add), then walks the time steps with one small
 * GEMM per step for the recurrent product. Gate arithmetic runs in
 * double; storage and GEMMs use float32 (also for float16/bfloat16,
 * converted on the way in and out) or float64. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ep/cpu/kernels/gemm.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"

extern const ox_kernel_table ox_cpu_kernels_recurrent;

/* ---- activation functions ---- */

typedef enum act_kind {
    ACT_RELU,
    ACT_TANH,
    ACT_SIGMOID,
    ACT_AFFINE,
    ACT_LEAKY_RELU,
    ACT_THRESHOLDED_RELU,
    ACT_SCALED_TANH,
    ACT_HARD_SIGMOID,
    ACT_ELU,
    ACT_SOFTSIGN,
    ACT_SOFTPLUS,
} act_kind;

typedef struct act_info {
    const char *name;
    act_kind kind;
    int uses_alpha, uses_beta;
    double alpha, beta; /* defaults, those of the standalone operators */
} act_info;

static const act_info ACTS[] = {
    {"Relu", ACT_RELU, 0, 0, 0.0, 0.0},
    {"Tanh", ACT_TANH, 0, 0, 0.0, 0.0},
    {"Sigmoid", ACT_SIGMOID, 0, 0, 0.0, 0.0},
    {"Affine", ACT_AFFINE, 1, 1, 1.0, 0.0},
    {"LeakyRelu", ACT_LEAKY_RELU, 1, 0, 0.01, 0.0},
    {"ThresholdedRelu", ACT_THRESHOLDED_RELU, 1, 0, 1.0, 0.0},
    {"ScaledTanh", ACT_SCALED_TANH, 1, 1, 1.0, 1.0},
    {"HardSigmoid", ACT_HARD_SIGMOID, 1, 1, 0.2, 0.5},
    {"Elu", ACT_ELU, 1, 0, 1.0, 0.0},
    {"Softsign", ACT_SOFTSIGN, 0, 0, 0.0, 0.0},
    {"Softplus", ACT_SOFTPLUS, 0, 0, 0.0, 0.0},
};

typedef struct act_fn {
    act_kind kind;
    double alpha, beta;
} act_fn;

static double sigmoid(double v) {
    /* both branches keep exp's argument non-positive: no overflow */
    if (v >= 0) return 1.0 / (1.0 + exp(-v));
    double e = exp(v);
    return e / (1.0 + e);
}

static double apply_act(const act_fn *f, double v) {
    switch (f->kind) {
    case ACT_RELU:
        return v > 0 ? v : 0.0;
    case ACT_TANH:
        return tanh(v);
    case ACT_SIGMOID:
        return sigmoid(v);
    case ACT_AFFINE:
        return f->alpha * v + f->beta;
    case ACT_LEAKY_RELU:
        return v >= 0 ? v : f->alpha * v;
    case ACT_THRESHOLDED_RELU:
        return v >= f->alpha ? v : 0.0;
    case ACT_SCALED_TANH:
        return f->alpha * tanh(f->beta * v);
    case ACT_HARD_SIGMOID: {
        double y = f->alpha * v + f->beta;
        return y < 0 ? 0.0 : (y > 1 ? 1.0 : y);
    }
    case ACT_ELU:
        return v >= 0 ? v : f->alpha * expm1(v);
    case ACT_SOFTSIGN:
        return v / (1.0 + fabs(v));
    case ACT_SOFTPLUS:
        return v > 0 ? v + log1p(exp(-v)) : log1p(exp(v));
    }
    return v;
}

/* ---- the job ---- */

typedef struct rnn_job {
    const char *op;
    int gates;  /* 1 RNN, 3 GRU, 4 LSTM */
    int dirs;   /* 1 or 2 */
    int reverse; /* single direction walking backwards */
    int layout; /* 1: batch-major X, Y, states */
    int lbr;    /* GRU linear_before_reset */
    int input_forget;
    int has_clip;
    double clip;
    int f64; /* work type: double, else float */
    int64_t S, B, I, H;
    act_fn act[2][3];
    /* inputs in the work type (NULL when omitted) */
    const void *x, *w, *r, *bias, *h0, *c0, *p;
    int64_t *lens;
    /* outputs in the work type (NULL when not wanted) */
    void *y, *yh, *yc;
} rnn_job;

static inline double ld(const rnn_job *j, const void *p, int64_t i) {
    return j->f64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

static inline void st(const rnn_job *j, void *p, int64_t i, double v) {
    if (j->f64)
        ((double *)p)[i] = v;
    else
        ((float *)p)[i] = (float)v;
}

static inline double clipv(const rnn_job *j, double v) {
    if (!j->has_clip) return v;
    return v < -j->clip ? -j->clip : (v > j->clip ? j->clip : v);
}

static inline double act(const rnn_job *j, int d, int k, double v) {
    return apply_act(&j->act[d][k], clipv(j, v));
}

static size_t esize(const rnn_job *j) { return j->f64 ? sizeof(double) : sizeof(float); }

/* C (M x N) = A (M x K) * B^T, B stored N x K; beta 0. */
static int mm_nt(const rnn_job *j, ox_kernel_ctx *ctx, int64_t M, int64_t N, int64_t K,
                 const void *A, int64_t lda, const void *B, int64_t ldb, void *C, int64_t ldc) {
    if (j->f64)
        return ox_gemm_f64(ctx->pool, ctx->stop, 0, 1, M, N, K, 1.0, A, lda, B, ldb, 0.0, C, ldc);
    return ox_gemm_f32(ctx->pool, ctx->stop, 0, 1, M, N, K, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
}

static int64_t state_index(const rnn_job *j, int d, int64_t b) {
    return (j->layout ? b * j->dirs + d : (int64_t)d * j->B + b) * j->H;
}

static int64_t y_index(const rnn_job *j, int d, int64_t t, int64_t b) {
    return (j->layout ? (b * j->S + t) * j->dirs + d : (t * j->dirs + d) * j->B + b) * j->H;
}

/* Scratch shared by all directions. */
typedef struct rnn_scratch {
    void *xs;  /* X as [S, B, I] when the layout is batch-major */
    void *xw;  /* [S*B, G*H] input projections plus biases */
    void *hr;  /* [B, G*H] recurrent projections of one step */
    void *h;   /* [B, H] hidden state */
    void *c;   /* [B, H] cell state (LSTM) */
    void *rh;  /* [B, H] GRU: reset gate times the previous state */
    void *z;   /* [B, H] GRU: update gate */
    void *hh;  /* [B, H] GRU: (r . H) R_h^T */
    double *bsum; /* [G*H] biases folded into xw */
    double *rbh;  /* [H] GRU recurrent hidden-gate bias kept apart */
    double *peep; /* [3*H] peepholes i, o, f */
} rnn_scratch;

static void step_rnn(const rnn_job *j, rnn_scratch *s, int d, int64_t t) {
    const int64_t H = j->H;
    for (int64_t b = 0; b < j->B; b++) {
        if (t >= j->lens[b]) continue;
        int64_t xo = (t * j->B + b) * H, ho = b * H;
        for (int64_t q = 0; q < H; q++) {
            double v = ld(j, s->xw, xo + q) + ld(j, s->hr, ho + q);
            st(j, s->h, ho + q, act(j, d, 0, v));
        }
    }
}

static void step_lstm(const rnn_job *j, rnn_scratch *s, int d, int64_t t) {
    const int64_t H = j->H, G = 4 * H;
    const double *pi = s->peep, *po = s->peep + H, *pf = s->peep + 2 * H;
    for (int64_t b = 0; b < j->B; b++) {
        if (t >= j->lens[b]) continue;
        int64_t xo = (t * j->B + b) * G, ro = b * G, so = b * H;
        for (int64_t q = 0; q < H; q++) {
            /* gate blocks are ordered i, o, f, c */
            double gi = ld(j, s->xw, xo + q) + ld(j, s->hr, ro + q);
            double go = ld(j, s->xw, xo + H + q) + ld(j, s->hr, ro + H + q);
            double gf = ld(j, s->xw, xo + 2 * H + q) + ld(j, s->hr, ro + 2 * H + q);
            double gc = ld(j, s->xw, xo + 3 * H + q) + ld(j, s->hr, ro + 3 * H + q);
            double cp = ld(j, s->c, so + q);
            double i = act(j, d, 0, gi + pi[q] * cp);
            double f = j->input_forget ? 1.0 - i : act(j, d, 0, gf + pf[q] * cp);
            double cc = act(j, d, 1, gc);
            double cn = f * cp + i * cc;
            double o = act(j, d, 0, go + po[q] * cn);
            st(j, s->c, so + q, cn);
            st(j, s->h, so + q, o * act(j, d, 2, cn));
        }
    }
}

/* GRU, first half: update and reset gates from the z/r projections. */
static void step_gru_gates(const rnn_job *j, rnn_scratch *s, int d, int64_t t) {
    const int64_t H = j->H, G = 3 * H, RG = j->lbr ? 3 * H : 2 * H;
    for (int64_t b = 0; b < j->B; b++) {
        if (t >= j->lens[b]) continue;
        int64_t xo = (t * j->B + b) * G, ro = b * RG, so = b * H;
        for (int64_t q = 0; q < H; q++) {
            double z = act(j, d, 0, ld(j, s->xw, xo + q) + ld(j, s->hr, ro + q));
            double r = act(j, d, 0, ld(j, s->xw, xo + H + q) + ld(j, s->hr, ro + H + q));
            st(j, s->z, so + q, z);
            if (j->lbr) {
                /* r scales the whole recurrent term, bias included */
                double rec = ld(j, s->hr, ro + 2 * H + q) + s->rbh[q];
                st(j, s->hh, so + q, r * rec);
            } else {
                st(j, s->rh, so + q, r * ld(j, s->h, so + q));
            }
        }
    }
}

/* GRU, second half: candidate state and the blend into H. */
static void step_gru_state(const rnn_job *j, rnn_scratch *s, int d, int64_t t) {
    const int64_t H = j->H, G = 3 * H;
    for (int64_t b = 0; b < j->B; b++) {
        if (t >= j->lens[b]) continue;
        int64_t xo = (t * j->B + b) * G + 2 * H, so = b * H;
        for (int64_t q = 0; q < H; q++) {
            double cand = act(j, d, 1, ld(j, s->xw, xo + q) + ld(j, s->hh, so + q));
            double z = ld(j, s->z, so + q), hp = ld(j, s->h, so + q);
            st(j, s->h, so + q, (1.0 - z) * cand + z * hp);
        }
    }
}

static int run_direction(ox_kernel_ctx *ctx, const rnn_job *j, rnn_scratch *s, int d) {
    const int64_t S = j->S, B = j->B, I = j->I, H = j->H, G = j->gates * H;
    const size_t es = esize(j);
    const int rev = j->reverse || d == 1;
    const char *wd = (const char *)j->w + (size_t)d * (size_t)(G * I) * es;
    const char *rd = (const char *)j->r + (size_t)d * (size_t)(G * H) * es;
    const void *xs = s->xs ? s->xs : j->x;

    if (mm_nt(j, ctx, S * B, G, I, xs, I, wd, I, s->xw, G) != 0)
        return ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "%s: out of memory", j->op);

    /* Both biases add straight to the pre-activations, except GRU's
     * recurrent hidden-gate bias under linear_before_reset, which the
     * reset gate scales. */
    for (int64_t k = 0; k < G; k++) s->bsum[k] = 0.0;
    for (int64_t k = 0; k < H; k++) s->rbh[k] = 0.0;
    if (j->bias) {
        int64_t bo = (int64_t)d * 2 * G;
        for (int64_t k = 0; k < G; k++) {
            double wb = ld(j, j->bias, bo + k), rb = ld(j, j->bias, bo + G + k);
            if (j->gates == 3 && j->lbr && k >= 2 * H) {
                s->bsum[k] = wb;
                s->rbh[k - 2 * H] = rb;
            } else {
                s->bsum[k] = wb + rb;
            }
        }
        for (int64_t row = 0; row < S * B; row++)
            for (int64_t k = 0; k < G; k++)
                st(j, s->xw, row * G + k, ld(j, s->xw, row * G + k) + s->bsum[k]);
    }
    for (int64_t k = 0; k < 3 * H; k++)
        s->peep[k] = j->p ? ld(j, j->p, (int64_t)d * 3 * H + k) : 0.0;

    for (int64_t b = 0; b < B; b++) {
        int64_t si = state_index(j, d, b);
        for (int64_t q = 0; q < H; q++) {
            st(j, s->h, b * H + q, j->h0 ? ld(j, j->h0, si + q) : 0.0);
            if (s->c) st(j, s->c, b * H + q, j->c0 ? ld(j, j->c0, si + q) : 0.0);
        }
    }

    for (int64_t step = 0; step < S; step++) {
        if (ox_stop_requested(ctx->stop)) return 0; /* the executor reports it */
        int64_t t = rev ? S - 1 - step : step;
        int rc = 0;
        if (j->gates == 1) {
            rc = mm_nt(j, ctx, B, H, H, s->h, H, rd, H, s->hr, H);
            if (rc == 0) step_rnn(j, s, d, t);
        } else if (j->gates == 4) {
            rc = mm_nt(j, ctx, B, G, H, s->h, H, rd, H, s->hr, G);
            if (rc == 0) step_lstm(j, s, d, t);
        } else {
            int64_t rg = j->lbr ? G : 2 * H;
            rc = mm_nt(j, ctx, B, rg, H, s->h, H, rd, H, s->hr, rg);
            if (rc == 0) step_gru_gates(j, s, d, t);
            if (rc == 0 && !j->lbr)
                rc = mm_nt(j, ctx, B, H, H, s->rh, H, rd + (size_t)(2 * H * H) * es, H,
                           s->hh, H);
            if (rc == 0) step_gru_state(j, s, d, t);
        }
        if (rc != 0) return ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "%s: out of memory", j->op);
        if (j->y) {
            for (int64_t b = 0; b < B; b++) {
                char *dst = (char *)j->y + (size_t)y_index(j, d, t, b) * es;
                /* steps past a sequence's end are zero-padded */
                if (t >= j->lens[b])
                    memset(dst, 0, (size_t)H * es);
                else
                    memcpy(dst, (const char *)s->h + (size_t)(b * H) * es, (size_t)H * es);
            }
        }
    }

    for (int64_t b = 0; b < B; b++) {
        int64_t si = state_index(j, d, b);
        if (j->yh)
            memcpy((char *)j->yh + (size_t)si * es, (const char *)s->h + (size_t)(b * H) * es,
                   (size_t)H * es);
        if (j->yc)
            memcpy((char *)j->yc + (size_t)si * es, (const char *)s->c + (size_t)(b * H) * es,
                   (size_t)H * es);
    }
    return 0;
}

/* ---- setup ---- */

static int parse_activations(ox_kernel_ctx *ctx, rnn_job *j) {
    static const char *const DEFAULTS[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    const int per = j->gates == 1 ? 1 : (j->gates == 3 ? 2 : 3);
    const char *const *deflt = DEFAULTS[per - 1];
    const ir_attr *a = ir_node_attr(ctx->node, "activations");
    size_t n = a && a->type == IR_ATTR_STRINGS ? a->n : 0;
    if (a && n != (size_t)per && n != (size_t)(2 * per))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: activations lists %zu functions; expected %d per direction",
                              j->op, n, per);
    size_t na = 0, nb = 0;
    const float *alphas = ir_attr_floats(ctx->node, "activation_alpha", &na);
    const float *betas = ir_attr_floats(ctx->node, "activation_beta", &nb);
    size_t ia = 0, ib = 0;
    act_fn listed[6];
    size_t count = n ? n : (size_t)per;
    for (size_t k = 0; k < count; k++) {
        const char *name = n ? a->strings[k] : deflt[k];
        const act_info *info = NULL;
        for (size_t q = 0; q < sizeof ACTS / sizeof ACTS[0]; q++)
            if (name && strcasecmp(name, ACTS[q].name) == 0) info = &ACTS[q];
        if (!info)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: unknown activation function '%s'",
                                  j->op, name ? name : "");
        listed[k].kind = info->kind;
        listed[k].alpha = info->alpha;
        listed[k].beta = info->beta;
        /* alpha/beta entries are consumed, in order, only by the
         * functions that take them */
        if (n && info->uses_alpha && ia < na) listed[k].alpha = alphas[ia++];
        if (n && info->uses_beta && ib < nb) listed[k].beta = betas[ib++];
    }
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < per; k++) {
            size_t src = (d == 1 && j->dirs == 2 && count == (size_t)(2 * per)) ? (size_t)(per + k)
                                                                               : (size_t)k;
            j->act[d][k] = listed[src];
        }
    return 0;
}

static int is_work_type(ox_dtype t) { return t == ONYX_FLOAT32 || t == ONYX_FLOAT64; }

/* Input i in the work type: its own data, or a float32 copy for the
 * half-precision types (stored in *owned). */
static int work_input(ox_kernel_ctx *ctx, int i, const void **out, void **owned) {
    *out = NULL;
    *owned = NULL;
    const ox_tensor *t = ox_cpu_input(ctx, i);
    if (!t) return 0;
    if (is_work_type(t->dtype)) {
        *out = t->data;
        return 0;
    }
    int64_t n = ox_tensor_numel(t);
    float *buf = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (!buf) return ox_cpu_oom(ctx);
    for (int64_t k = 0; k < n; k++) buf[k] = (float)ox_get_f64(t->data, t->dtype, (size_t)k);
    *out = buf;
    *owned = buf;
    return 0;
}

static int work_output(ox_kernel_ctx *ctx, int i, void **out, void **owned) {
    *out = NULL;
    *owned = NULL;
    ox_tensor *t = ox_cpu_output(ctx, i);
    if (!t) return 0;
    if (is_work_type(t->dtype)) {
        *out = t->data;
        return 0;
    }
    int64_t n = ox_tensor_numel(t);
    float *buf = calloc((size_t)(n > 0 ? n : 1), sizeof(float));
    if (!buf) return ox_cpu_oom(ctx);
    *out = buf;
    *owned = buf;
    return 0;
}

static int dims_are(const ox_tensor *t, int rank, const int64_t *want) {
    if (t->rank != rank) return 0;
    for (int k = 0; k < rank; k++)
        if (t->dims[k] != want[k]) return 0;
    return 1;
}

/* Product of non-negative sizes, failing past what memory can hold. */
static int size_mul(int64_t a, int64_t b, int64_t *out) {
    if (a < 0 || b < 0) return -1;
    if (a != 0 && b > (INT64_MAX / 16) / a) return -1;
    *out = a * b;
    return 0;
}

static int rnn_compute(ox_kernel_ctx *ctx) {
    const ir_node *n = ctx->node;
    rnn_job j;
    memset(&j, 0, sizeof j);
    j.op = n->op_type;
    j.gates = n->op_type[0] == 'L' ? 4 : (n->op_type[0] == 'G' ? 3 : 1);
    const char *dir = ir_attr_string(n, "direction", "forward");
    j.dirs = strcasecmp(dir, "bidirectional") == 0 ? 2 : 1;
    j.reverse = strcasecmp(dir, "reverse") == 0;
    j.layout = n->opset >= 14 && ir_attr_int(n, "layout", 0) != 0;
    j.lbr = j.gates == 3 && ir_attr_int(n, "linear_before_reset", 0) != 0;
    j.input_forget = j.gates == 4 && ir_attr_int(n, "input_forget", 0) != 0;
    const ir_attr *clip = ir_node_attr(n, "clip");
    if (clip) {
        j.has_clip = 1;
        j.clip = clip->f;
    }

    const ox_tensor *X = ctx->inputs[0], *W = ctx->inputs[1], *R = ctx->inputs[2];
    const ox_tensor *Bt = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
    const ox_tensor *L = ctx->n_inputs > 4 ? ctx->inputs[4] : NULL;
    const ox_tensor *H0 = ctx->n_inputs > 5 ? ctx->inputs[5] : NULL;
    const ox_tensor *C0 = j.gates == 4 && ctx->n_inputs > 6 ? ctx->inputs[6] : NULL;
    const ox_tensor *P = j.gates == 4 && ctx->n_inputs > 7 ? ctx->inputs[7] : NULL;
    if (X->rank != 3 || W->rank != 3 || R->rank != 3)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: X, W and R must have rank 3", j.op);
    j.S = X->dims[j.layout ? 1 : 0];
    j.B = X->dims[j.layout ? 0 : 1];
    j.I = X->dims[2];
    j.H = ir_attr_int(n, "hidden_size", R->dims[2]);
    int64_t G = j.gates * j.H;
    const int64_t D = j.dirs;
    char sh[128];
    {
        int64_t w[3] = {D, G, j.I}, r[3] = {D, G, j.H};
        if (!dims_are(W, 3, w))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: W has shape %s; expected [%lld, %lld, %lld]", j.op,
                                  ox_shape_str(W->dims, W->rank, sh, sizeof sh), (long long)D,
                                  (long long)G, (long long)j.I);
        if (!dims_are(R, 3, r))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: R has shape %s; expected [%lld, %lld, %lld]", j.op,
                                  ox_shape_str(R->dims, R->rank, sh, sizeof sh), (long long)D,
                                  (long long)G, (long long)j.H);
        int64_t b[2] = {D, 2 * G}, p[2] = {D, 3 * j.H};
        if (Bt && !dims_are(Bt, 2, b))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: B has shape %s; expected [%lld, %lld]",
                                  j.op, ox_shape_str(Bt->dims, Bt->rank, sh, sizeof sh),
                                  (long long)D, (long long)(2 * G));
        if (P && !dims_are(P, 2, p))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: P has shape %s; expected [%lld, %lld]",
                                  j.op, ox_shape_str(P->dims, P->rank, sh, sizeof sh),
                                  (long long)D, (long long)(3 * j.H));
        int64_t st3[3] = {j.layout ? j.B : D, j.layout ? D : j.B, j.H};
        if (H0 && !dims_are(H0, 3, st3))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: initial_h has shape %s; expected %s",
                                  j.op, ox_shape_str(H0->dims, H0->rank, sh, sizeof sh),
                                  j.layout ? "[batch, num_directions, hidden]"
                                           : "[num_directions, batch, hidden]");
        if (C0 && !dims_are(C0, 3, st3))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: initial_c has shape %s; expected %s",
                                  j.op, ox_shape_str(C0->dims, C0->rank, sh, sizeof sh),
                                  j.layout ? "[batch, num_directions, hidden]"
                                           : "[num_directions, batch, hidden]");
        if (L && (L->rank != 1 || L->dims[0] != j.B))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: sequence_lens has shape %s; expected [%lld]", j.op,
                                  ox_shape_str(L->dims, L->rank, sh, sizeof sh), (long long)j.B);
    }
    if (parse_activations(ctx, &j) != 0) return -1;
    j.f64 = X->dtype == ONYX_FLOAT64;

    int64_t sb, sbg, sbi, bg, bh;
    if (size_mul(j.S, j.B, &sb) || size_mul(sb, G, &sbg) || size_mul(sb, j.I, &sbi) ||
        size_mul(j.B, G, &bg) || size_mul(j.B, j.H, &bh))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: problem size too large", j.op);

    int rc = -1;
    const size_t es = esize(&j);
    void *owned_in[7] = {0}, *owned_out[3] = {0};
    rnn_scratch s;
    memset(&s, 0, sizeof s);
    j.lens = malloc((size_t)(j.B > 0 ? j.B : 1) * sizeof(int64_t));
    if (!j.lens) {
        ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "%s: out of memory", j.op);
        goto done;
    }
    for (int64_t b = 0; b < j.B; b++) {
        j.lens[b] = L ? ox_get_i64(L->data, L->dtype, (size_t)b) : j.S;
        if (j.lens[b] < 0 || j.lens[b] > j.S) {
            ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                           "%s: sequence_lens[%lld] = %lld is outside [0, seq_length = %lld]", j.op,
                           (long long)b, (long long)j.lens[b], (long long)j.S);
            goto done;
        }
    }

    static const int IN_IDX[7] = {0, 1, 2, 3, 5, 6, 7};
    const void **in_ptr[7] = {&j.x, &j.w, &j.r, &j.bias, &j.h0, &j.c0, &j.p};
    for (int k = 0; k < 7; k++) {
        int idx = IN_IDX[k];
        if (j.gates != 4 && idx >= 6) continue;
        if (work_input(ctx, idx, in_ptr[k], &owned_in[k]) != 0) goto done;
    }
    void **out_ptr[3] = {&j.y, &j.yh, &j.yc};
    for (int k = 0; k < 3 && k < ctx->n_outputs; k++) {
        if (k == 2 && j.gates != 4) break;
        if (work_output(ctx, k, out_ptr[k], &owned_out[k]) != 0) goto done;
    }

    {
        /* every buffer gets at least one element so that malloc(0) never
         * reads as a failure */
#define ALLOC(p, cnt, sz)                                                \
    do {                                                                 \
        (p) = calloc((size_t)((cnt) > 0 ? (cnt) : 1), (sz));         \
        if (!(p)) {                                                      \
            ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "%s: out of memory", j.op); \
            goto done;                                                   \
        }                                                                \
    } while (0)
        ALLOC(s.xw, sbg, es);
        ALLOC(s.hr, bg, es);
        ALLOC(s.h, bh, es);
        ALLOC(s.bsum, G, sizeof(double));
        ALLOC(s.rbh, j.H, sizeof(double));
        ALLOC(s.peep, 3 * j.H, sizeof(double));
        if (j.gates == 4) ALLOC(s.c, bh, es);
        if (j.gates == 3) {
            ALLOC(s.rh, bh, es);
            ALLOC(s.z, bh, es);
            ALLOC(s.hh, bh, es);
        }
        if (j.layout) {
            ALLOC(s.xs, sbi, es);
            size_t row = (size_t)j.I * es;
            for (int64_t t = 0; t < j.S; t++)
                for (int64_t b = 0; b < j.B; b++)
                    memcpy((char *)s.xs + (size_t)(t * j.B + b) * row,
                           (const char *)j.x + (size_t)(b * j.S + t) * row, row);
        }
#undef ALLOC
    }

    for (int d = 0; d < j.dirs; d++)
        if (run_direction(ctx, &j, &s, d) != 0) goto done;

    for (int k = 0; k < 3; k++) {
        if (!owned_out[k]) continue;
        ox_tensor *t = ctx->outputs[k];
        int64_t cnt = ox_tensor_numel(t);
        for (int64_t q = 0; q < cnt; q++)
            ox_set_f64(t->data, t->dtype, (size_t)q, ((const float *)owned_out[k])[q]);
    }
    rc = 0;

done:
    for (int k = 0; k < 7; k++) free(owned_in[k]);
    for (int k = 0; k < 3; k++) free(owned_out[k]);
    free(j.lens);
    free(s.xs);
    free(s.xw);
    free(s.hr);
    free(s.h);
    free(s.c);
    free(s.rh);
    free(s.z);
    free(s.hh);
    free(s.bsum);
    free(s.rbh);
    free(s.peep);
    return rc;
}

static const ox_kernel_def KERNELS[] = {
    {"", "RNN", 7, 22, rnn_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "GRU", 7, 22, rnn_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "LSTM", 7, 22, rnn_compute, ox_cpu_supports_float, NULL, NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_recurrent = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
