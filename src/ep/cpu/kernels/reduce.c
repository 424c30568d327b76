/* CPU kernels of the reductions, ArgMax/ArgMin, CumSum and CumProd.
 *
 * A reduction walks the input in memory order and folds every element
 * into an accumulator of the output element it maps to. The mapping is a
 * broadcast plan run backwards: the keepdims-shaped output "broadcasts"
 * to the input shape, so along a run of input elements the accumulator
 * either stays put (reducing the innermost dims) or advances with the
 * input (reducing outer dims), and both are tight loops. Accumulators are
 * double for float types (sums of many float32 lose too much otherwise),
 * int64 for signed and uint64 for unsigned integers. */

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "ep/cpu/kernels/broadcast.h"
#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"

extern const ox_kernel_table ox_cpu_kernels_reduce;

#define NDT (ONYX_BFLOAT16 + 1)
#define MAX_AXES 64

typedef enum red_kind {
    RK_SUM,
    RK_MEAN,
    RK_MAX,
    RK_MIN,
    RK_PROD,
    RK_L1,
    RK_L2,
    RK_LOGSUM,
    RK_LOGSUMEXP,
    RK_SUMSQ,
} red_kind;

/* How each element is folded in. LogSumExp folds exp(x - max) after a
 * first max pass. */
typedef enum fold_kind { F_SUM, F_SUMSQ, F_ABS, F_PROD, F_MAX, F_MIN, F_EXPSUM, F_COUNT } fold_kind;

typedef struct red_ctx {
    const void *x;
    void *acc;
    const double *shift; /* per-output max for F_EXPSUM */
} red_ctx;

#define LD_ID(v) (v)
#define LD_H(v) ox_half_to_float(v)
#define LD_B(v) ox_bf16_to_float(v)

/* X(sfx, dtype, T, load, accumulator A) */
#define RED_TYPES(X, ...)                                         \
    X(f32, ONYX_FLOAT32, float, LD_ID, double, __VA_ARGS__)       \
    X(f64, ONYX_FLOAT64, double, LD_ID, double, __VA_ARGS__)      \
    X(f16, ONYX_FLOAT16, uint16_t, LD_H, double, __VA_ARGS__)     \
    X(bf16, ONYX_BFLOAT16, uint16_t, LD_B, double, __VA_ARGS__)   \
    X(i8, ONYX_INT8, int8_t, LD_ID, int64_t, __VA_ARGS__)         \
    X(i16, ONYX_INT16, int16_t, LD_ID, int64_t, __VA_ARGS__)      \
    X(i32, ONYX_INT32, int32_t, LD_ID, int64_t, __VA_ARGS__)      \
    X(i64, ONYX_INT64, int64_t, LD_ID, int64_t, __VA_ARGS__)      \
    X(u8, ONYX_UINT8, uint8_t, LD_ID, uint64_t, __VA_ARGS__)      \
    X(u16, ONYX_UINT16, uint16_t, LD_ID, uint64_t, __VA_ARGS__)   \
    X(u32, ONYX_UINT32, uint32_t, LD_ID, uint64_t, __VA_ARGS__)   \
    X(u64, ONYX_UINT64, uint64_t, LD_ID, uint64_t, __VA_ARGS__)

/* Integer sums wrap through uint64 (signed overflow is undefined in C). */
#define W(A, e) ((A)(uint64_t)(e))
#define S_SUM(A, a, x) W(A, (uint64_t)(a) + (uint64_t)(x))
#define S_SUMSQ(A, a, x) W(A, (uint64_t)(a) + (uint64_t)(x) * (uint64_t)(x))
#define S_PROD(A, a, x) W(A, (uint64_t)(a) * (uint64_t)(x))
#define S_ABS(A, a, x) W(A, (uint64_t)(a) + ((x) < 0 ? (uint64_t)0 - (uint64_t)(x) : (uint64_t)(x)))
#define F_SUM_(A, a, x) ((a) + (x))
#define F_SUMSQ_(A, a, x) ((a) + (x) * (x))
#define F_PROD_(A, a, x) ((a) * (x))
#define F_ABS_(A, a, x) ((a) + fabs(x))
#define F_MAX_(A, a, x) ((x) > (a) || (x) != (x) ? (x) : (a))
#define F_MIN_(A, a, x) ((x) < (a) || (x) != (x) ? (x) : (a))
#define I_MAX_(A, a, x) ((x) > (a) ? (x) : (a))
#define I_MIN_(A, a, x) ((x) < (a) ? (x) : (a))

/* Along a run that folds into one accumulator, four independent partial
 * results (starting from the fold's identity ID) break the dependency
 * chain; MERGE combines them. */
#define FOLD_FN(name, T, LD, A, STEP, MERGE, ID)                                          \
    static void name(void *arg, int64_t xo, const int64_t *ao, const int64_t *as,         \
                     int64_t n) {                                                         \
        const red_ctx *p = arg;                                                           \
        const T *X = (const T *)p->x + xo;                                                \
        A *acc = (A *)p->acc + ao[0];                                                     \
        if (as[0] == 0) {                                                                 \
            A a0 = acc[0], a1 = ID, a2 = ID, a3 = ID;                                     \
            int64_t i = 0;                                                                \
            for (; i + 4 <= n; i += 4) {                                                  \
                a0 = STEP(A, a0, (A)LD(X[i]));                                            \
                a1 = STEP(A, a1, (A)LD(X[i + 1]));                                        \
                a2 = STEP(A, a2, (A)LD(X[i + 2]));                                        \
                a3 = STEP(A, a3, (A)LD(X[i + 3]));                                        \
            }                                                                             \
            for (; i < n; i++) a0 = STEP(A, a0, (A)LD(X[i]));                             \
            acc[0] = MERGE(A, MERGE(A, a0, a1), MERGE(A, a2, a3));                        \
        } else {                                                                          \
            const int64_t s = as[0];                                                      \
            for (int64_t i = 0; i < n; i++) {                                             \
                const A x = (A)LD(X[i]);                                                  \
                acc[i * s] = STEP(A, acc[i * s], x);                                      \
            }                                                                             \
        }                                                                                 \
    }

/* Float types use the F_ steps; for integers the wrap-safe S_ steps. The
 * choice is made per accumulator type with _Generic-free token pasting:
 * each type list entry instantiates both and the table picks one. */
#define DEF_FLOAT_FOLDS(sfx, DT, T, LD, A, ...)                  \
    FOLD_FN(sum_##sfx, T, LD, A, F_SUM_, F_SUM_, 0)              \
    FOLD_FN(sumsq_##sfx, T, LD, A, F_SUMSQ_, F_SUM_, 0)          \
    FOLD_FN(prod_##sfx, T, LD, A, F_PROD_, F_PROD_, 1)           \
    FOLD_FN(abs_##sfx, T, LD, A, F_ABS_, F_SUM_, 0)              \
    FOLD_FN(max_##sfx, T, LD, A, F_MAX_, F_MAX_, acc[0])         \
    FOLD_FN(min_##sfx, T, LD, A, F_MIN_, F_MIN_, acc[0])
#define DEF_SINT_FOLDS(sfx, DT, T, LD, A, ...)                   \
    FOLD_FN(sum_##sfx, T, LD, A, S_SUM, S_SUM, 0)                \
    FOLD_FN(sumsq_##sfx, T, LD, A, S_SUMSQ, S_SUM, 0)            \
    FOLD_FN(prod_##sfx, T, LD, A, S_PROD, S_PROD, 1)             \
    FOLD_FN(abs_##sfx, T, LD, A, S_ABS, S_SUM, 0)                \
    FOLD_FN(max_##sfx, T, LD, A, I_MAX_, I_MAX_, acc[0])         \
    FOLD_FN(min_##sfx, T, LD, A, I_MIN_, I_MIN_, acc[0])
#define DEF_UINT_FOLDS(sfx, DT, T, LD, A, ...)                   \
    FOLD_FN(sum_##sfx, T, LD, A, S_SUM, S_SUM, 0)                \
    FOLD_FN(sumsq_##sfx, T, LD, A, S_SUMSQ, S_SUM, 0)            \
    FOLD_FN(prod_##sfx, T, LD, A, S_PROD, S_PROD, 1)             \
    FOLD_FN(abs_##sfx, T, LD, A, S_SUM, S_SUM, 0)                \
    FOLD_FN(max_##sfx, T, LD, A, I_MAX_, I_MAX_, acc[0])         \
    FOLD_FN(min_##sfx, T, LD, A, I_MIN_, I_MIN_, acc[0])

DEF_FLOAT_FOLDS(f32, ONYX_FLOAT32, float, LD_ID, double)
DEF_FLOAT_FOLDS(f64, ONYX_FLOAT64, double, LD_ID, double)
DEF_FLOAT_FOLDS(f16, ONYX_FLOAT16, uint16_t, LD_H, double)
DEF_FLOAT_FOLDS(bf16, ONYX_BFLOAT16, uint16_t, LD_B, double)
DEF_SINT_FOLDS(i8, ONYX_INT8, int8_t, LD_ID, int64_t)
DEF_SINT_FOLDS(i16, ONYX_INT16, int16_t, LD_ID, int64_t)
DEF_SINT_FOLDS(i32, ONYX_INT32, int32_t, LD_ID, int64_t)
DEF_SINT_FOLDS(i64, ONYX_INT64, int64_t, LD_ID, int64_t)
DEF_UINT_FOLDS(u8, ONYX_UINT8, uint8_t, LD_ID, uint64_t)
DEF_UINT_FOLDS(u16, ONYX_UINT16, uint16_t, LD_ID, uint64_t)
DEF_UINT_FOLDS(u32, ONYX_UINT32, uint32_t, LD_ID, uint64_t)
DEF_UINT_FOLDS(u64, ONYX_UINT64, uint64_t, LD_ID, uint64_t)

/* exp(x - max) summed in double, for every input type. */
#define EXPSUM_FN(sfx, DT, T, LD, A, ...)                                                 \
    static void expsum_##sfx(void *arg, int64_t xo, const int64_t *ao, const int64_t *as,  \
                             int64_t n) {                                                 \
        const red_ctx *p = arg;                                                           \
        const T *X = (const T *)p->x + xo;                                                \
        double *acc = (double *)p->acc + ao[0];                                           \
        const double *m = p->shift + ao[0];                                               \
        for (int64_t i = 0; i < n; i++) {                                                 \
            double x = (double)LD(X[i]);                                                  \
            acc[i * as[0]] += exp(x - m[i * as[0]]);                                      \
        }                                                                                 \
    }
RED_TYPES(EXPSUM_FN, 0)

#define ENT(sfx, DT, T, LD, A, op) [DT] = op##_##sfx,
static const ox_bcast_fn FOLDS[F_COUNT][NDT] = {
    [F_SUM] = {RED_TYPES(ENT, sum)},     [F_SUMSQ] = {RED_TYPES(ENT, sumsq)},
    [F_ABS] = {RED_TYPES(ENT, abs)},     [F_PROD] = {RED_TYPES(ENT, prod)},
    [F_MAX] = {RED_TYPES(ENT, max)},     [F_MIN] = {RED_TYPES(ENT, min)},
    [F_EXPSUM] = {RED_TYPES(ENT, expsum)},
};

typedef enum acc_kind { ACC_F64, ACC_I64, ACC_U64 } acc_kind;

static acc_kind acc_of(ox_dtype t) {
    if (ox_dtype_is_float(t)) return ACC_F64;
    return ox_dtype_is_signed_int(t) ? ACC_I64 : ACC_U64;
}

/* Identity of a fold in the accumulator's representation. */
static void acc_fill(void *acc, int64_t n, acc_kind k, fold_kind f, ox_dtype t) {
    if (k == ACC_F64) {
        double v = f == F_PROD ? 1.0 : f == F_MAX ? -INFINITY : f == F_MIN ? INFINITY : 0.0;
        for (int64_t i = 0; i < n; i++) ((double *)acc)[i] = v;
    } else if (k == ACC_I64) {
        int bits = (int)ox_dtype_size(t) * 8;
        int64_t hi = bits >= 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (bits - 1)) - 1);
        int64_t v = f == F_PROD ? 1 : f == F_MAX ? -hi - 1 : f == F_MIN ? hi : 0;
        for (int64_t i = 0; i < n; i++) ((int64_t *)acc)[i] = v;
    } else {
        int bits = (int)ox_dtype_size(t) * 8;
        uint64_t hi = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
        uint64_t v = f == F_PROD ? 1 : f == F_MIN ? hi : 0;
        for (int64_t i = 0; i < n; i++) ((uint64_t *)acc)[i] = v;
    }
}

static double acc_get(const void *acc, acc_kind k, int64_t i) {
    if (k == ACC_F64) return ((const double *)acc)[i];
    if (k == ACC_I64) return (double)((const int64_t *)acc)[i];
    return (double)((const uint64_t *)acc)[i];
}

/* Float results for integer outputs truncate toward zero; NaN and out of
 * range values saturate instead of invoking undefined conversions. */
static void store_double(void *data, ox_dtype t, int64_t i, double v) {
    if (ox_dtype_is_float(t)) {
        ox_set_f64(data, t, (size_t)i, v);
        return;
    }
    if (v != v) v = 0;
    if (ox_dtype_is_unsigned_int(t)) {
        uint64_t u = v <= 0 ? 0 : v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v;
        if (t == ONYX_UINT64)
            ((uint64_t *)data)[i] = u;
        else
            ox_set_i64(data, t, (size_t)i, (int64_t)u);
        return;
    }
    int64_t s = v >= 9223372036854775807.0    ? INT64_MAX
                : v <= -9223372036854775808.0 ? INT64_MIN
                                              : (int64_t)v;
    ox_set_i64(data, t, (size_t)i, s);
}

typedef struct red_job {
    const ox_bcast *plan;
    ox_bcast_fn fn;
    red_ctx *ctx;
    int64_t block; /* input elements per outermost planned index */
} red_job;

static void red_range(void *arg, int64_t b, int64_t e) {
    const red_job *j = arg;
    ox_bcast_walk(j->plan, b * j->block, e * j->block, j->fn, j->ctx);
}

/* Folds all of X into acc. When the outermost planned dim is kept, its
 * slices write disjoint accumulators and run in parallel. */
static void fold_all(ox_kernel_ctx *c, const ox_bcast *plan, ox_bcast_fn fn, red_ctx *ctx) {
    if (plan->rank >= 2 && plan->strides[0][0] != 0 && plan->numel >= 65536) {
        red_job j = {plan, fn, ctx, plan->numel / plan->dims[0]};
        int64_t grain = 65536 / j.block;
        ox_parallel_for(c->pool, plan->dims[0], grain < 1 ? 1 : grain, red_range, &j);
    } else {
        ox_bcast_walk(plan, 0, plan->numel, fn, ctx);
    }
}

/* Reads the axes (input 1 when given, else the attribute) and marks the
 * reduced dims. Returns 1 for "no reduction at all", 0 otherwise. */
static int reduced_axes(ox_kernel_ctx *c, int rank, int *red) {
    const char *op = c->node->op_type;
    int64_t axes[MAX_AXES];
    int n = 0;
    const ox_tensor *at = c->n_inputs > 1 ? c->inputs[1] : NULL;
    if (at) {
        int64_t cnt = ox_tensor_numel(at);
        if (!ox_dtype_is_integer(at->dtype) || cnt > MAX_AXES)
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: bad axes input", op);
        for (int64_t i = 0; i < cnt; i++) axes[i] = ox_get_i64(at->data, at->dtype, (size_t)i);
        n = (int)cnt;
    } else {
        size_t cnt = 0;
        const int64_t *a = ir_attr_ints(c->node, "axes", &cnt);
        if (cnt > MAX_AXES) return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: too many axes", op);
        if (cnt) memcpy(axes, a, cnt * sizeof *axes);
        n = (int)cnt;
    }
    for (int i = 0; i < rank; i++) red[i] = n == 0;
    if (n == 0) return ir_attr_int(c->node, "noop_with_empty_axes", 0) != 0 ? 1 : 0;
    for (int k = 0; k < n; k++) {
        int64_t a = axes[k];
        if (a < -rank || a >= rank)
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                                  "%s: axis %" PRId64 " is out of range for rank %d", op, a, rank);
        red[a < 0 ? a + rank : a] = 1;
    }
    return 0;
}

/* float32 sums, means, maxima and minima over the innermost axes
 * (ReduceMean over a plane: the squeeze-and-excitation of a network
 * exported without GlobalAveragePool; ReduceMax over a detector's class
 * scores): each output is one contiguous run of `len` elements, sums by
 * ox_sum_f32_wide, in parallel over the outputs. */
typedef struct inner_job {
    const float *x;
    float *y;
    int64_t len;
    red_kind kind;
} inner_job;

/* The maximum (max 1) or minimum of n >= 1 floats as F_MAX_ / F_MIN_
 * fold them: a NaN replaces the current value, then stays. */
static float inner_extreme(const float *x, int64_t n, int max) {
    float a = x[0];
    if (max)
        for (int64_t i = 1; i < n; i++) a = F_MAX_(float, a, x[i]);
    else
        for (int64_t i = 1; i < n; i++) a = F_MIN_(float, a, x[i]);
    return a;
}

#define DEF_INNER(SUF, ATTR)                                                                \
    ATTR static void inner_##SUF(void *arg, int64_t b, int64_t e) {                         \
        const inner_job *j = arg;                                                           \
        for (int64_t o = b; o < e; o++) {                                                   \
            const float *x = j->x + o * j->len;                                             \
            if (j->kind == RK_MAX || j->kind == RK_MIN)                                     \
                j->y[o] = inner_extreme(x, j->len, j->kind == RK_MAX);                      \
            else                                                                            \
                j->y[o] = (float)(ox_sum_f32_wide(x, j->len) /                              \
                                  (j->kind == RK_MEAN ? (double)j->len : 1.0));             \
        }                                                                                   \
    }
DEF_INNER(portable, )
#if defined(__x86_64__) && defined(__GNUC__)
DEF_INNER(avx2, __attribute__((target("avx2"))))
#endif

/* 1 when it ran: X float32, kind a sum, mean, max or min over a
 * nonempty run of innermost axes (red marks them) and nothing else. */
static int inner_reduce(ox_kernel_ctx *c, red_kind kind, const ox_tensor *X, ox_tensor *Y, const int *red) {
    if (X->dtype != ONYX_FLOAT32 || X->rank < 1 ||
        (kind != RK_SUM && kind != RK_MEAN && kind != RK_MAX && kind != RK_MIN))
        return 0;
    int first = X->rank;
    while (first > 0 && red[first - 1]) first--;
    for (int i = 0; i < first; i++)
        if (red[i]) return 0;
    const int64_t len = ox_numel(X->dims + first, X->rank - first), outer = ox_numel(X->dims, first);
    if (first == X->rank || len <= 0 || ox_tensor_numel(Y) != outer) return 0;
    inner_job j = {X->data, Y->data, len, kind};
    ox_range_fn fn = inner_portable;
#if defined(__x86_64__) && defined(__GNUC__)
    if (ox_cpu_isa_active() >= OX_ISA_AVX2) fn = inner_avx2;
#endif
    ox_parallel_for(c->pool, outer, len >= 8192 ? 1 : 8192 / len, fn, &j);
    return 1;
}

static int run_reduce(ox_kernel_ctx *c, red_kind kind) {
    const char *op = c->node->op_type;
    const ox_tensor *X = c->n_inputs > 0 ? c->inputs[0] : NULL;
    ox_tensor *Y = c->n_outputs > 0 ? c->outputs[0] : NULL;
    if (!X || !Y) return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: missing input", op);
    /* bool (ReduceMax/ReduceMin-20) folds as uint8: max is "any", min "all" */
    int is_bool = X->dtype == ONYX_BOOL && (kind == RK_MAX || kind == RK_MIN);
    ox_dtype ft = is_bool ? ONYX_UINT8 : X->dtype;
    if (X->dtype != Y->dtype || ft <= 0 || ft >= NDT || !FOLDS[F_SUM][ft])
        return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "%s: element type %s is not supported", op,
                              ox_dtype_name(X->dtype));
    int red[OX_MAX_RANK];
    int noop = reduced_axes(c, X->rank, red);
    if (noop < 0) return -1;
    int64_t n_out = ox_tensor_numel(Y);
    if (noop) {
        /* with noop_with_empty_axes the input passes through unchanged */
        if (n_out != ox_tensor_numel(X))
            return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "%s: output shape mismatch", op);
        memcpy(Y->data, X->data, (size_t)n_out * ox_dtype_size(X->dtype));
        return 0;
    }
    int64_t kdims[OX_MAX_RANK], count = 1;
    for (int i = 0; i < X->rank; i++) {
        kdims[i] = red[i] ? 1 : X->dims[i];
        if (red[i]) count *= X->dims[i];
    }
    if (ox_numel(kdims, X->rank) != n_out)
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "%s: output has %" PRId64
                              " elements, expected %" PRId64, op, n_out,
                              ox_numel(kdims, X->rank));
    if (n_out == 0) return 0;
    if (inner_reduce(c, kind, X, Y, red)) return 0;

    ox_bcast plan;
    const int64_t *pd[1] = {kdims};
    int pr[1] = {X->rank};
    if (ox_bcast_plan(&plan, 1, pd, pr, X->dims, X->rank) != 0)
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "%s: cannot plan reduction", op);

    acc_kind ak = acc_of(ft);
    fold_kind fk;
    switch (kind) {
    case RK_MAX: fk = F_MAX; break;
    case RK_MIN: fk = F_MIN; break;
    case RK_PROD: fk = F_PROD; break;
    case RK_L1: fk = F_ABS; break;
    case RK_L2:
    case RK_SUMSQ: fk = F_SUMSQ; break;
    case RK_LOGSUMEXP: fk = F_MAX; break;
    default: fk = F_SUM; break;
    }
    void *acc = malloc((size_t)n_out * 8);
    double *acc2 = NULL;
    if (!acc) return ox_kernel_fail(c, ONYX_OUT_OF_MEMORY, "%s: out of memory", op);
    acc_fill(acc, n_out, ak, fk, ft);
    if (is_bool && fk == F_MIN)
        for (int64_t i = 0; i < n_out; i++) ((uint64_t *)acc)[i] = 1; /* "all" of nothing */
    red_ctx ctx = {X->data, acc, NULL};
    fold_all(c, &plan, FOLDS[fk][ft], &ctx);

    if (kind == RK_LOGSUMEXP) {
        /* second pass: sum exp(x - max) so large inputs do not overflow */
        acc2 = malloc((size_t)n_out * sizeof *acc2);
        double *shift = malloc((size_t)n_out * sizeof *shift);
        if (!acc2 || !shift) {
            free(acc);
            free(acc2);
            free(shift);
            return ox_kernel_fail(c, ONYX_OUT_OF_MEMORY, "%s: out of memory", op);
        }
        for (int64_t i = 0; i < n_out; i++) {
            double m = acc_get(acc, ak, i);
            shift[i] = isfinite(m) ? m : 0.0;
            acc2[i] = 0.0;
        }
        red_ctx c2 = {X->data, acc2, shift};
        fold_all(c, &plan, FOLDS[F_EXPSUM][X->dtype], &c2);
        for (int64_t i = 0; i < n_out; i++) store_double(Y->data, Y->dtype, i, log(acc2[i]) + shift[i]);
        free(shift);
        free(acc2);
        free(acc);
        return 0;
    }

    for (int64_t i = 0; i < n_out; i++) {
        switch (kind) {
        case RK_MEAN:
            if (ak == ACC_I64)
                store_double(Y->data, Y->dtype, i,
                             count ? (double)(((int64_t *)acc)[i] / count) : NAN);
            else if (ak == ACC_U64)
                store_double(Y->data, Y->dtype, i,
                             count ? (double)(((uint64_t *)acc)[i] / (uint64_t)count) : NAN);
            else
                store_double(Y->data, Y->dtype, i, acc_get(acc, ak, i) / (double)count);
            break;
        case RK_L2: store_double(Y->data, Y->dtype, i, sqrt(acc_get(acc, ak, i))); break;
        case RK_LOGSUM: store_double(Y->data, Y->dtype, i, log(acc_get(acc, ak, i))); break;
        default:
            if (ak == ACC_F64)
                ox_set_f64(Y->data, Y->dtype, (size_t)i, ((double *)acc)[i]);
            else if (ak == ACC_I64)
                ox_set_i64(Y->data, Y->dtype, (size_t)i, ((int64_t *)acc)[i]);
            else if (Y->dtype == ONYX_UINT64)
                ((uint64_t *)Y->data)[i] = ((uint64_t *)acc)[i];
            else
                ox_set_i64(Y->data, Y->dtype, (size_t)i, (int64_t)((uint64_t *)acc)[i]);
            break;
        }
    }
    free(acc);
    return 0;
}

#define RED_KERNEL(name, kind) \
    static int k_##name(ox_kernel_ctx *c) { return run_reduce(c, kind); }
RED_KERNEL(sum, RK_SUM)
RED_KERNEL(mean, RK_MEAN)
RED_KERNEL(max, RK_MAX)
RED_KERNEL(min, RK_MIN)
RED_KERNEL(prod, RK_PROD)
RED_KERNEL(l1, RK_L1)
RED_KERNEL(l2, RK_L2)
RED_KERNEL(logsum, RK_LOGSUM)
RED_KERNEL(logsumexp, RK_LOGSUMEXP)
RED_KERNEL(sumsq, RK_SUMSQ)

/* ---- ArgMax / ArgMin ---- */

typedef struct arg_ctx {
    const void *x;
    int64_t *y;
    int64_t n, inner;
    int last;
} arg_ctx;

/* NaN wins like numpy's argmax/argmin: the first NaN is the answer. */
#define ARG_FN(name, T, LD, C, BETTER)                                                    \
    static void name(void *arg, int64_t b, int64_t e) {                                   \
        const arg_ctx *p = arg;                                                           \
        const T *X = p->x;                                                                \
        for (int64_t line = b; line < e; line++) {                                        \
            const T *x = X + (line / p->inner) * p->n * p->inner + line % p->inner;       \
            C best = LD(x[0]);                                                            \
            int64_t bi = 0;                                                               \
            for (int64_t j = 1; j < p->n && best == best; j++) {                          \
                C v = LD(x[j * p->inner]);                                                \
                if (v != v || BETTER(v, best) || (p->last && v == best)) {                \
                    best = v;                                                             \
                    bi = j;                                                               \
                }                                                                         \
            }                                                                             \
            p->y[line] = bi;                                                              \
        }                                                                                 \
    }
#define GT(a, b) ((a) > (b))
#define LT(a, b) ((a) < (b))
#define ARG_TYPES(X)                               \
    X(f32, ONYX_FLOAT32, float, LD_ID, float)      \
    X(f64, ONYX_FLOAT64, double, LD_ID, double)    \
    X(f16, ONYX_FLOAT16, uint16_t, LD_H, float)    \
    X(bf16, ONYX_BFLOAT16, uint16_t, LD_B, float)  \
    X(i8, ONYX_INT8, int8_t, LD_ID, int8_t)        \
    X(i16, ONYX_INT16, int16_t, LD_ID, int16_t)    \
    X(i32, ONYX_INT32, int32_t, LD_ID, int32_t)    \
    X(i64, ONYX_INT64, int64_t, LD_ID, int64_t)    \
    X(u8, ONYX_UINT8, uint8_t, LD_ID, uint8_t)     \
    X(u16, ONYX_UINT16, uint16_t, LD_ID, uint16_t) \
    X(u32, ONYX_UINT32, uint32_t, LD_ID, uint32_t) \
    X(u64, ONYX_UINT64, uint64_t, LD_ID, uint64_t)
#define DEF_ARG(sfx, DT, T, LD, C)          \
    ARG_FN(argmax_##sfx, T, LD, C, GT)      \
    ARG_FN(argmin_##sfx, T, LD, C, LT)
ARG_TYPES(DEF_ARG)
#define ENT_MAX(sfx, DT, ...) [DT] = argmax_##sfx,
#define ENT_MIN(sfx, DT, ...) [DT] = argmin_##sfx,
static const ox_range_fn ARGMAX[NDT] = {ARG_TYPES(ENT_MAX)};
static const ox_range_fn ARGMIN[NDT] = {ARG_TYPES(ENT_MIN)};

static int run_arg(ox_kernel_ctx *c, const ox_range_fn *tab) {
    const char *op = c->node->op_type;
    const ox_tensor *X = c->n_inputs > 0 ? c->inputs[0] : NULL;
    ox_tensor *Y = c->n_outputs > 0 ? c->outputs[0] : NULL;
    if (!X || !Y) return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: missing input", op);
    ox_range_fn fn = X->dtype < NDT ? tab[X->dtype] : NULL;
    if (!fn || Y->dtype != ONYX_INT64)
        return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "%s: element type %s is not supported", op,
                              ox_dtype_name(X->dtype));
    int64_t axis = ir_attr_int(c->node, "axis", 0);
    int r = X->rank;
    if (axis < -r || axis >= r)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                              "%s: axis %" PRId64 " is out of range for rank %d", op, axis, r);
    if (axis < 0) axis += r;
    int64_t outer = 1, inner = 1, n = X->dims[axis];
    for (int i = 0; i < axis; i++) outer *= X->dims[i];
    for (int i = (int)axis + 1; i < r; i++) inner *= X->dims[i];
    int64_t lines = outer * inner;
    if (lines == 0) return 0;
    if (n == 0)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: cannot reduce an empty axis", op);
    if (ox_tensor_numel(Y) != lines)
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "%s: output shape mismatch", op);
    arg_ctx ctx = {X->data, Y->data, n, inner, ir_attr_int(c->node, "select_last_index", 0) != 0};
    int64_t grain = 16384 / n;
    ox_parallel_for(c->pool, lines, grain < 1 ? 1 : grain, fn, &ctx);
    return 0;
}

static int k_argmax(ox_kernel_ctx *c) { return run_arg(c, ARGMAX); }
static int k_argmin(ox_kernel_ctx *c) { return run_arg(c, ARGMIN); }

/* ---- CumSum / CumProd ---- */

typedef struct cum_ctx {
    const void *x;
    void *y;
    int64_t n, inner;
    int exclusive, reverse;
} cum_ctx;

/* Parallel over outer slices; each keeps one running total per inner
 * position in the output row it just wrote. ID is the identity of OP
 * (what an exclusive scan writes first). */
#define CUM_FN(name, T, LD, ST, A, OP, ID)                                                \
    static void name(void *arg, int64_t b, int64_t e) {                                   \
        const cum_ctx *p = arg;                                                           \
        const int64_t n = p->n, inner = p->inner;                                         \
        for (int64_t o = b; o < e; o++) {                                                 \
            const T *x = (const T *)p->x + o * n * inner;                                 \
            T *y = (T *)p->y + o * n * inner;                                             \
            for (int64_t jj = 0; jj < n; jj++) {                                          \
                int64_t j = p->reverse ? n - 1 - jj : jj;                                 \
                int64_t prev = p->reverse ? j + 1 : j - 1;                                \
                for (int64_t k = 0; k < inner; k++) {                                     \
                    A s = jj == 0 ? (A)(ID) : (A)LD(y[prev * inner + k]);                 \
                    if (p->exclusive) {                                                   \
                        if (jj > 0) s = OP(A, s, (A)LD(x[prev * inner + k]));             \
                    } else {                                                              \
                        s = OP(A, s, (A)LD(x[j * inner + k]));                            \
                    }                                                                     \
                    y[j * inner + k] = ST(s);                                             \
                }                                                                         \
            }                                                                             \
        }                                                                                 \
    }
#define ST_ID(v) (v)
#define ST_H(v) ox_float_to_half(v)
#define ST_B(v) ox_float_to_bf16(v)
#define PLUS(A, a, b) ((a) + (b))
#define WPLUS(A, a, b) ((A)((uint64_t)(a) + (uint64_t)(b)))
#define TIMES(A, a, b) ((a) * (b))
/* integer products wrap through uint64 (signed overflow is undefined) */
#define WTIMES(A, a, b) ((A)((uint64_t)(a) * (uint64_t)(b)))
/* X(sfx, dtype, T, load, store, running type, float op, integer op) */
#define CUM_TYPES(X, F, I, ID)                                          \
    X(f32, float, LD_ID, ST_ID, float, F, ID)                            \
    X(f64, double, LD_ID, ST_ID, double, F, ID)                          \
    X(f16, uint16_t, LD_H, ST_H, float, F, ID)                           \
    X(bf16, uint16_t, LD_B, ST_B, float, F, ID)                          \
    X(i8, int8_t, LD_ID, ST_ID, int8_t, I, ID)                           \
    X(i16, int16_t, LD_ID, ST_ID, int16_t, I, ID)                        \
    X(i32, int32_t, LD_ID, ST_ID, int32_t, I, ID)                        \
    X(i64, int64_t, LD_ID, ST_ID, int64_t, I, ID)                        \
    X(u8, uint8_t, LD_ID, ST_ID, uint8_t, I, ID)                         \
    X(u16, uint16_t, LD_ID, ST_ID, uint16_t, I, ID)                      \
    X(u32, uint32_t, LD_ID, ST_ID, uint32_t, I, ID)                      \
    X(u64, uint64_t, LD_ID, ST_ID, uint64_t, I, ID)
#define DEF_CUMSUM(sfx, T, LD, ST, A, OP, ID) CUM_FN(cum_##sfx, T, LD, ST, A, OP, ID)
#define DEF_CUMPROD(sfx, T, LD, ST, A, OP, ID) CUM_FN(cumprod_##sfx, T, LD, ST, A, OP, ID)
CUM_TYPES(DEF_CUMSUM, PLUS, WPLUS, 0)
CUM_TYPES(DEF_CUMPROD, TIMES, WTIMES, 1)
#define CUM_TAB(p)                                                                        \
    {[ONYX_FLOAT32] = p##_f32, [ONYX_FLOAT64] = p##_f64, [ONYX_FLOAT16] = p##_f16,        \
     [ONYX_BFLOAT16] = p##_bf16, [ONYX_INT8] = p##_i8,   [ONYX_INT16] = p##_i16,          \
     [ONYX_INT32] = p##_i32,   [ONYX_INT64] = p##_i64,   [ONYX_UINT8] = p##_u8,           \
     [ONYX_UINT16] = p##_u16,  [ONYX_UINT32] = p##_u32,  [ONYX_UINT64] = p##_u64}
static const ox_range_fn CUMSUM[NDT] = CUM_TAB(cum);
static const ox_range_fn CUMPROD[NDT] = CUM_TAB(cumprod);

static int run_cum(ox_kernel_ctx *c, const ox_range_fn *tab) {
    const char *op = c->node->op_type;
    const ox_tensor *X = c->n_inputs > 0 ? c->inputs[0] : NULL;
    const ox_tensor *A = c->n_inputs > 1 ? c->inputs[1] : NULL;
    ox_tensor *Y = c->n_outputs > 0 ? c->outputs[0] : NULL;
    if (!X || !A || !Y) return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: missing input", op);
    ox_range_fn fn = X->dtype > 0 && X->dtype < NDT ? tab[X->dtype] : NULL;
    if (!fn || Y->dtype != X->dtype)
        return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "%s: element type %s is not supported", op,
                              ox_dtype_name(X->dtype));
    if (!ox_dtype_is_integer(A->dtype) || ox_tensor_numel(A) != 1)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                              "%s: axis must be one int32 or int64 value", op);
    int64_t axis = ox_get_i64(A->data, A->dtype, 0);
    int r = X->rank;
    if (axis < -r || axis >= r)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                              "%s: axis %" PRId64 " is out of range for rank %d", op, axis, r);
    if (axis < 0) axis += r;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; i++) outer *= X->dims[i];
    for (int i = (int)axis + 1; i < r; i++) inner *= X->dims[i];
    if (ox_tensor_numel(X) == 0) return 0;
    cum_ctx ctx = {X->data, Y->data, X->dims[axis], inner,
                   ir_attr_int(c->node, "exclusive", 0) != 0,
                   ir_attr_int(c->node, "reverse", 0) != 0};
    int64_t per = X->dims[axis] * inner;
    int64_t grain = 65536 / (per ? per : 1);
    ox_parallel_for(c->pool, outer, grain < 1 ? 1 : grain, fn, &ctx);
    return 0;
}

static int k_cumsum(ox_kernel_ctx *c) { return run_cum(c, CUMSUM); }
static int k_cumprod(ox_kernel_ctx *c) { return run_cum(c, CUMPROD); }

/* ---- type support ---- */

static int s_numeric(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    if (n < 1 || !in[0]) return 1;
    if (in[0]->kind != OX_KIND_TENSOR) return 0;
    ox_dtype t = in[0]->dtype;
    return t == ONYX_UNDEFINED || ox_dtype_is_float(t) || ox_dtype_is_integer(t);
}

/* ReduceMax/ReduceMin also take bool (version 20). */
static int s_numeric_bool(const ir_node *node, const ir_type *const *in, int n) {
    if (n >= 1 && in[0] && in[0]->kind == OX_KIND_TENSOR && in[0]->dtype == ONYX_BOOL) return 1;
    return s_numeric(node, in, n);
}

#define K(name, lo, hi, fn) {"", name, lo, hi, fn, s_numeric, NULL, NULL, NULL}

static const ox_kernel_def KERNELS[] = {
    K("ReduceSum", 1, 13, k_sum),
    K("ReduceMean", 1, 18, k_mean),
    {"", "ReduceMax", 1, 20, k_max, s_numeric_bool, NULL, NULL, NULL},
    {"", "ReduceMin", 1, 20, k_min, s_numeric_bool, NULL, NULL, NULL},
    K("ReduceProd", 1, 18, k_prod),
    K("ReduceL1", 1, 18, k_l1),
    K("ReduceL2", 1, 18, k_l2),
    K("ReduceLogSum", 1, 28, k_logsum),
    K("ReduceLogSumExp", 1, 28, k_logsumexp),
    K("ReduceSumSquare", 1, 18, k_sumsq),
    K("ArgMax", 1, 13, k_argmax),
    K("ArgMin", 1, 13, k_argmin),
    K("CumSum", 11, 14, k_cumsum),
    K("CumProd", 26, 26, k_cumprod),
};

const ox_kernel_table ox_cpu_kernels_reduce = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
