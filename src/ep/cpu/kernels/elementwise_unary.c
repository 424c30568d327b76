/* CPU kernels of the unary elementwise operators: math functions and
 * activations, Abs/Neg/Sign, IsNaN/IsInf, Not and BitwiseNot, Clip, and
 * BitCast. Their kernel table entries are in elementwise.c. */

#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "ep/cpu/kernels/activation.h"
#include "ep/cpu/kernels/elementwise.h"
#include "ep/cpu/kernels/exp_fma_avx2.h"

/* ====================================================================
 * Unary
 * ==================================================================== */

typedef struct un_ctx {
    const void *x;
    void *y;
    float alpha, beta, gamma;
    int flag_a, flag_b;
    unsigned char lo[8], hi[8]; /* Clip bounds in the element type */
    const uint8_t *lut;         /* one-byte types: result of each bit pattern */
    ox_act act;                 /* float32 through an activation row (act_range) */
    ox_cpu_isa isa;
} un_ctx;

/* The loop reads its parameters from a local copy of the context: read
 * through the pointer, alpha could alias the output, which would reload
 * it after every store and keep the loop from vectorising. TARGET is
 * empty or a target attribute (the float32 variants below). */
#define UN_FN_T(fn, TARGET, TI, TO, C, LD, ST, EXPR)                       \
    TARGET static void fn(void *arg, int64_t b_, int64_t e_) {             \
        const un_ctx u_ = *(const un_ctx *)arg;                            \
        const un_ctx *p_ = &u_;                                            \
        const TI *X_ = (const TI *)p_->x;                                  \
        TO *Y_ = (TO *)p_->y;                                              \
        (void)p_;                                                          \
        for (int64_t i_ = b_; i_ < e_; i_++) {                             \
            const C x = LD(X_[i_]);                                        \
            Y_[i_] = ST(EXPR);                                             \
        }                                                                  \
    }
#define UN_FN(fn, TI, TO, C, LD, ST, EXPR) UN_FN_T(fn, , TI, TO, C, LD, ST, EXPR)

#define U_DEF(op, sfx, DT, T, C, W, LD, ST, E) UN_FN(op##_##sfx, T, T, C, LD, ST, E(C, W, x))
#define U_BOOL(op, sfx, DT, T, C, W, LD, ST, E) UN_FN(op##_##sfx, T, uint8_t, C, LD, ST_ID, E(C, W, x))

#define E_RELU(C, W, x) ((x) < 0 ? (C)0 : (x))
#define E_NEG_F(C, W, x) (-(x))
#define E_NEG_S(C, W, x) ((C)((W)0 - (W)(x)))
#define E_ABS_F(C, W, x) (fabs(x))
#define E_ABS_S(C, W, x) ((x) < 0 ? (C)((W)0 - (W)(x)) : (x))
#define E_ID(C, W, x) (x)
#define E_SIGN_S(C, W, x) ((x) > 0 ? (C)1 : (x) < 0 ? (C)-1 : (x))
#define E_SIGN_U(C, W, x) ((x) > 0 ? (C)1 : (C)0)
/* e^-x overflowing to inf for very negative x still gives the right 0 */
#define E_SIGMOID(C, W, x) ((C)1 / ((C)1 + GEXP(-(x))))
#define E_TANH(C, W, x) (GTANH(x))
#define E_EXP(C, W, x) (GEXP(x))
#define E_LOG(C, W, x) (log(x))
#define E_SQRT(C, W, x) (sqrt(x))
#define E_RECIP(C, W, x) ((C)1 / (x))
#define E_FLOOR(C, W, x) (floor(x))
#define E_CEIL(C, W, x) (ceil(x))
/* nearbyint in the default rounding mode rounds halves to even. */
#define E_ROUND(C, W, x) (nearbyint(x))
#define E_SIN(C, W, x) (sin(x))
#define E_COS(C, W, x) (cos(x))
#define E_TAN(C, W, x) (tan(x))
#define E_ASIN(C, W, x) (asin(x))
#define E_ACOS(C, W, x) (acos(x))
#define E_ATAN(C, W, x) (atan(x))
#define E_SINH(C, W, x) (sinh(x))
#define E_COSH(C, W, x) (cosh(x))
#define E_ASINH(C, W, x) (asinh(x))
#define E_ACOSH(C, W, x) (acosh(x))
#define E_ATANH(C, W, x) (atanh(x))
#define E_ERF(C, W, x) (GERF(x))
/* log(1 + e^x) without overflowing e^x for large x. */
#define E_SOFTPLUS(C, W, x) ((x) > 0 ? (x) + log1p(exp(-(x))) : log1p(exp(x)))
#define E_SOFTSIGN(C, W, x) ((x) / ((C)1 + fabs(x)))
#define HSIG(C, v) ((v) < 0 ? (C)0 : (v) > 1 ? (C)1 : (v))
#define E_HARDSIGMOID(C, W, x) HSIG(C, (C)p_->alpha * (x) + (C)p_->beta)
/* alpha x + beta with alpha = 1/6 as the spec defines it: a multiply, as
 * ONNX Runtime does too, not a division */
#define E_HARDSWISH(C, W, x) ((x) * HSIG(C, (x) * (C)(1.0 / 6.0) + (C)0.5))
#define E_ELU(C, W, x) ((x) < 0 ? (C)p_->alpha * expm1(x) : (x))
#define E_SELU(C, W, x) \
    ((x) <= 0 ? (C)p_->gamma * ((C)p_->alpha * expm1(x)) : (C)p_->gamma * (x))
#define E_CELU(C, W, x) ((x) > 0 ? (x) : (C)p_->alpha * expm1((x) / (C)p_->alpha))
#define E_LEAKY(C, W, x) ((x) < 0 ? (C)p_->alpha * (x) : (x))
#define E_THRELU(C, W, x) ((x) > (C)p_->alpha ? (x) : (C)0)
#define E_SHRINK_F(C, W, x) \
    ((x) < -(C)p_->alpha ? (x) + (C)p_->beta : (x) > (C)p_->alpha ? (x) - (C)p_->beta : (C)0)
#define E_ISNAN(C, W, x) ((uint8_t)(isnan(x) != 0))
#define E_ISINF(C, W, x) ((uint8_t)(isinf(x) && ((x) > 0 ? p_->flag_a : p_->flag_b)))
#define E_NOT(C, W, x) ((uint8_t)!(x))
#define E_BNOT(C, W, x) ((C)~(x))
/* x * tanh(softplus(x)) */
#define E_MISH(C, W, x) ((x) * GTANH((x) > 0 ? (x) + log1p(exp(-(x))) : log1p(exp(x))))
/* Gelu-20: x * Phi(x) exactly (approximate="none"), or its tanh fit */
#define E_GELU(C, W, x) ((C)GGELU(x))
#define E_GELU_TANH(C, W, x)                                                          \
    ((C)0.5 * (x) *                                                                   \
     ((C)1 + GTANH((C)0.79788456080286535588 * ((x) + (C)0.044715 * (x) * (x) * (x)))))
/* x * sigmoid(alpha * x) */
#define E_SWISH(C, W, x) ((x) / ((C)1 + GEXP(-(C)p_->alpha * (x))))

#define UNARY_FLOAT(op, E)                                                           \
    FLOAT_TYPES(U_DEF, op, E)                                                        \
    static const ox_range_fn op##_tab[NDT] = {FLOAT_TYPES(ENTRY, op)};

UNARY_FLOAT(sigmoid, E_SIGMOID)
UNARY_FLOAT(tanh, E_TANH)
UNARY_FLOAT(exp, E_EXP)
UNARY_FLOAT(log, E_LOG)
UNARY_FLOAT(sqrt, E_SQRT)
UNARY_FLOAT(recip, E_RECIP)
UNARY_FLOAT(floor, E_FLOOR)
UNARY_FLOAT(ceil, E_CEIL)
UNARY_FLOAT(round, E_ROUND)
UNARY_FLOAT(sin, E_SIN)
UNARY_FLOAT(cos, E_COS)
UNARY_FLOAT(tan, E_TAN)
UNARY_FLOAT(asin, E_ASIN)
UNARY_FLOAT(acos, E_ACOS)
UNARY_FLOAT(atan, E_ATAN)
UNARY_FLOAT(sinh, E_SINH)
UNARY_FLOAT(cosh, E_COSH)
UNARY_FLOAT(asinh, E_ASINH)
UNARY_FLOAT(acosh, E_ACOSH)
UNARY_FLOAT(atanh, E_ATANH)
UNARY_FLOAT(erf, E_ERF)
UNARY_FLOAT(softplus, E_SOFTPLUS)
UNARY_FLOAT(softsign, E_SOFTSIGN)
UNARY_FLOAT(hardsigmoid, E_HARDSIGMOID)
UNARY_FLOAT(hardswish, E_HARDSWISH)
UNARY_FLOAT(elu, E_ELU)
UNARY_FLOAT(selu, E_SELU)
UNARY_FLOAT(celu, E_CELU)
UNARY_FLOAT(leaky, E_LEAKY)
UNARY_FLOAT(threlu, E_THRELU)
UNARY_FLOAT(mish, E_MISH)
UNARY_FLOAT(gelu, E_GELU)
UNARY_FLOAT(gelu_tanh, E_GELU_TANH)
UNARY_FLOAT(swish, E_SWISH)

/* ---- float32 at the machine's vector width ----
 * These operators' float32 loops are compiled again for AVX2 and for
 * AVX-512 (target attributes), so that they vectorise at 8 and 16 lanes
 * where the machine has them. ISO C contracts nothing into fused
 * multiply-adds, so every variant gives the portable loop's bits. */
#if defined(__x86_64__) && defined(__GNUC__)
#define F32_ISA(op, E)                                                                       \
    UN_FN_T(op##_f32_avx2, __attribute__((target("avx2,fma"))), float, float, float, LD_ID,  \
            ST_ID, E(float, float, x))                                                       \
    UN_FN_T(op##_f32_avx512, __attribute__((target("avx512f,avx2,fma"))), float, float,     \
            float, LD_ID, ST_ID, E(float, float, x))                                         \
    static const ox_range_fn op##_f32_isa[3] = {op##_f32, op##_f32_avx2, op##_f32_avx512};
#else
#define F32_ISA(op, E) static const ox_range_fn op##_f32_isa[3] = {op##_f32, op##_f32, op##_f32};
#endif
#if defined(__x86_64__) && defined(__GNUC__)
/* Exp and Erf on AVX2 and AVX-512 machines by the FMA forms
 * (exp_fma_avx2.h; Exp is the exp Softmax uses): the same bits at 8 and
 * 16 lanes, within an ulp or two of the portable loops'. The ragged end
 * through masked loads and stores, or a padded copy on AVX2. */
#define FMA_ROWS(name, F8, F16)                                                                    \
    __attribute__((target("avx2,fma"))) static void name##_f32_fma8(void *arg, int64_t b, int64_t e) { \
        const un_ctx *p = arg;                                                                     \
        const float *x = (const float *)p->x;                                                      \
        float *y = (float *)p->y;                                                                  \
        int64_t i = b;                                                                             \
        for (; i + 8 <= e; i += 8) _mm256_storeu_ps(y + i, F8(_mm256_loadu_ps(x + i)));           \
        if (i < e) {                                                                               \
            float t[8] = {0};                                                                      \
            memcpy(t, x + i, sizeof(float) * (size_t)(e - i));                                     \
            _mm256_storeu_ps(t, F8(_mm256_loadu_ps(t)));                                           \
            memcpy(y + i, t, sizeof(float) * (size_t)(e - i));                                     \
        }                                                                                          \
    }                                                                                              \
    __attribute__((target("avx512f"))) static void name##_f32_fma16(void *arg, int64_t b, int64_t e) { \
        const un_ctx *p = arg;                                                                     \
        const float *x = (const float *)p->x;                                                      \
        float *y = (float *)p->y;                                                                  \
        int64_t i = b;                                                                             \
        for (; i + 16 <= e; i += 16) _mm512_storeu_ps(y + i, F16(_mm512_loadu_ps(x + i)));        \
        if (i < e) {                                                                               \
            const __mmask16 m = (__mmask16)((1u << (e - i)) - 1);                                  \
            _mm512_mask_storeu_ps(y + i, m, F16(_mm512_maskz_loadu_ps(m, x + i)));                 \
        }                                                                                          \
    }                                                                                              \
    static const ox_range_fn name##_f32_isa[3] = {name##_f32, name##_f32_fma8, name##_f32_fma16};
FMA_ROWS(exp, ox_exp8_fma, ox_exp16_avx512)
FMA_ROWS(erf, ox_erf8_fma, ox_erf16_avx512)
#else
static const ox_range_fn exp_f32_isa[3] = {exp_f32, exp_f32, exp_f32};
static const ox_range_fn erf_f32_isa[3] = {erf_f32, erf_f32, erf_f32};
#endif
F32_ISA(sqrt, E_SQRT)
F32_ISA(recip, E_RECIP)
F32_ISA(floor, E_FLOOR)
F32_ISA(ceil, E_CEIL)
F32_ISA(round, E_ROUND)
F32_ISA(softsign, E_SOFTSIGN)
F32_ISA(swish, E_SWISH)

FLOAT_TYPES(U_BOOL, isnan, E_ISNAN)
static const ox_range_fn isnan_tab[NDT] = {FLOAT_TYPES(ENTRY, isnan)};
FLOAT_TYPES(U_BOOL, isinf, E_ISINF)
static const ox_range_fn isinf_tab[NDT] = {FLOAT_TYPES(ENTRY, isinf)};
BOOL_TYPES(U_BOOL, not, E_NOT)
static const ox_range_fn not_tab[NDT] = {BOOL_TYPES(ENTRY, not)};
SINT_TYPES(U_DEF, bnot, E_BNOT)
UINT_TYPES(U_DEF, bnot, E_BNOT)
static const ox_range_fn bnot_tab[NDT] = {SINT_TYPES(ENTRY, bnot) UINT_TYPES(ENTRY, bnot)};

FLOAT_TYPES(U_DEF, relu, E_RELU)
SINT_TYPES(U_DEF, relu, E_RELU)
static const ox_range_fn relu_tab[NDT] = {FLOAT_TYPES(ENTRY, relu) SINT_TYPES(ENTRY, relu)};

FLOAT_TYPES(U_DEF, neg, E_NEG_F)
SINT_TYPES(U_DEF, neg, E_NEG_S)
static const ox_range_fn neg_tab[NDT] = {FLOAT_TYPES(ENTRY, neg) SINT_TYPES(ENTRY, neg)};

FLOAT_TYPES(U_DEF, abs, E_ABS_F)
SINT_TYPES(U_DEF, abs, E_ABS_S)
UINT_TYPES(U_DEF, abs, E_ID)
static const ox_range_fn abs_tab[NDT] = {
    FLOAT_TYPES(ENTRY, abs) SINT_TYPES(ENTRY, abs) UINT_TYPES(ENTRY, abs)};

FLOAT_TYPES(U_DEF, sign, E_SIGN_S)
SINT_TYPES(U_DEF, sign, E_SIGN_S)
UINT_TYPES(U_DEF, sign, E_SIGN_U)
static const ox_range_fn sign_tab[NDT] = {
    FLOAT_TYPES(ENTRY, sign) SINT_TYPES(ENTRY, sign) UINT_TYPES(ENTRY, sign)};

/* Shrink on integers computes in double: bias and lambd are floats. */
#define E_SHRINK_I(C, W, x) \
    ((double)(x) < -(double)p_->alpha ? (C)sat_i64((double)(x) + p_->beta) \
     : (double)(x) > (double)p_->alpha ? (C)sat_i64((double)(x) - p_->beta) : (C)0)
FLOAT_TYPES(U_DEF, shrink, E_SHRINK_F)
SINT_TYPES(U_DEF, shrink, E_SHRINK_I)
UINT_TYPES(U_DEF, shrink, E_SHRINK_I)
static const ox_range_fn shrink_tab[NDT] = {
    FLOAT_TYPES(ENTRY, shrink) SINT_TYPES(ENTRY, shrink) UINT_TYPES(ENTRY, shrink)};

/* Clip: bounds are read once in the element type. */
#define CLIP_FN(op, sfx, DT, T, C, W, LD, ST, ...)                        \
    static void op##_##sfx(void *arg, int64_t b_, int64_t e_) {           \
        const un_ctx *p_ = arg;                                           \
        const T *X_ = (const T *)p_->x;                                   \
        T *Y_ = (T *)p_->y;                                               \
        T lo_, hi_;                                                       \
        memcpy(&lo_, p_->lo, sizeof lo_);                                 \
        memcpy(&hi_, p_->hi, sizeof hi_);                                 \
        const C lo = LD(lo_), hi = LD(hi_);                               \
        for (int64_t i_ = b_; i_ < e_; i_++) {                            \
            C v = LD(X_[i_]);                                             \
            v = v < lo ? lo : v;                                          \
            v = v > hi ? hi : v;                                          \
            Y_[i_] = ST(v);                                               \
        }                                                                 \
    }
FLOAT_TYPES(CLIP_FN, clip)
SINT_TYPES(CLIP_FN, clip)
UINT_TYPES(CLIP_FN, clip)
static const ox_range_fn clip_tab[NDT] = {
    FLOAT_TYPES(ENTRY, clip) SINT_TYPES(ENTRY, clip) UINT_TYPES(ENTRY, clip)};

/* A float32 activation through the row the fused operators' epilogues
 * use (activation.h), at the machine's vector width: the same values as
 * a Conv or MatMul with the activation fused. In place on the output,
 * after copying the input there. */
static void act_range(void *arg, int64_t b, int64_t e) {
    const un_ctx *p = arg;
    float *y = (float *)p->y + b;
    const float *x = (const float *)p->x + b;
    if (x != y) memcpy(y, x, sizeof(float) * (size_t)(e - b));
    ox_act_bias_rows(&p->act, y, 1, e - b, e - b, NULL, p->isa);
}

/* How a float32 input runs instead of through the type table: f32_isa,
 * the loop compiled for each instruction set; or act, an activation row
 * (kind not OX_ACT_NONE). */
typedef struct f32_way {
    const ox_range_fn *f32_isa;
    ox_act act;
} f32_way;

static int run_unary_way(ox_kernel_ctx *c, const ox_range_fn *tab, un_ctx *u, int64_t grain,
                         const f32_way *way) {
    const ox_tensor *x = c->inputs[0];
    ox_tensor *y = c->outputs[0];
    if (!x || !y) return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: missing input or output",
                                        c->node->op_type);
    ox_range_fn fn = x->dtype > 0 && x->dtype < NDT ? tab[x->dtype] : NULL;
    if (!fn)
        return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "%s: element type %s is not supported",
                              c->node->op_type, ox_dtype_name(x->dtype));
    int64_t n = ox_tensor_numel(x);
    if (ox_tensor_numel(y) != n)
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "%s: output has %" PRId64
                              " elements, input %" PRId64, c->node->op_type,
                              ox_tensor_numel(y), n);
    u->x = x->data;
    u->y = y->data;
    if (way && x->dtype == ONYX_FLOAT32 && y->dtype == ONYX_FLOAT32) {
        u->isa = ox_cpu_isa_active();
        if (way->act.kind != OX_ACT_NONE) {
            u->act = way->act;
            fn = act_range;
        } else if (way->f32_isa) {
            fn = way->f32_isa[u->isa];
        }
    }
    ox_parallel_for(c->pool, n, grain, fn, u);
    return 0;
}

static int run_unary_with(ox_kernel_ctx *c, const ox_range_fn *tab, un_ctx *u, int64_t grain) {
    return run_unary_way(c, tab, u, grain, NULL);
}

static int run_unary(ox_kernel_ctx *c, const ox_range_fn *tab, int64_t grain) {
    un_ctx u = {0};
    return run_unary_with(c, tab, &u, grain);
}

/* A unary operator whose float32 loop has per-instruction-set variants */
static int run_unary_isa(ox_kernel_ctx *c, const ox_range_fn *tab, const ox_range_fn *f32_isa,
                         float alpha, int64_t grain) {
    un_ctx u = {0};
    u.alpha = alpha;
    const f32_way way = {f32_isa, {OX_ACT_NONE, 0, 0}};
    return run_unary_way(c, tab, &u, grain, &way);
}

/* A unary operator that is also an activation (kind, parameters p0, p1) */
static int run_unary_act(ox_kernel_ctx *c, const ox_range_fn *tab, ox_act_kind kind, float p0,
                         float p1, int64_t grain) {
    un_ctx u = {0};
    u.alpha = p0;
    u.beta = p1;
    const f32_way way = {NULL, {kind, p0, p1}};
    return run_unary_way(c, tab, &u, grain, &way);
}

static int run_unary_alpha(ox_kernel_ctx *c, const ox_range_fn *tab, float alpha, float beta,
                           float gamma) {
    un_ctx u = {0};
    u.alpha = alpha;
    u.beta = beta;
    u.gamma = gamma;
    return run_unary_with(c, tab, &u, GRAIN_MATH);
}

#define SIMPLE_UNARY(name, tab, grain) \
    int ox_ew_##name(ox_kernel_ctx *c) { return run_unary(c, tab, grain); }
int ox_ew_relu(ox_kernel_ctx *c) { return run_unary_act(c, relu_tab, OX_ACT_RELU, 0, 0, GRAIN_CHEAP); }
SIMPLE_UNARY(neg, neg_tab, GRAIN_CHEAP)
SIMPLE_UNARY(abs, abs_tab, GRAIN_CHEAP)
SIMPLE_UNARY(sign, sign_tab, GRAIN_CHEAP)
SIMPLE_UNARY(not, not_tab, GRAIN_CHEAP)
int ox_ew_hardswish(ox_kernel_ctx *c) {
    return run_unary_act(c, hardswish_tab, OX_ACT_HARDSWISH, 0, 0, GRAIN_CHEAP);
}
int ox_ew_sigmoid(ox_kernel_ctx *c) {
    return run_unary_act(c, sigmoid_tab, OX_ACT_SIGMOID, 0, 0, GRAIN_MATH);
}
int ox_ew_tanh(ox_kernel_ctx *c) { return run_unary_act(c, tanh_tab, OX_ACT_TANH, 0, 0, GRAIN_MATH); }
SIMPLE_UNARY(log, log_tab, GRAIN_MATH)
SIMPLE_UNARY(sin, sin_tab, GRAIN_MATH)
SIMPLE_UNARY(cos, cos_tab, GRAIN_MATH)
SIMPLE_UNARY(tan, tan_tab, GRAIN_MATH)
SIMPLE_UNARY(asin, asin_tab, GRAIN_MATH)
SIMPLE_UNARY(acos, acos_tab, GRAIN_MATH)
SIMPLE_UNARY(atan, atan_tab, GRAIN_MATH)
SIMPLE_UNARY(sinh, sinh_tab, GRAIN_MATH)
SIMPLE_UNARY(cosh, cosh_tab, GRAIN_MATH)
SIMPLE_UNARY(asinh, asinh_tab, GRAIN_MATH)
SIMPLE_UNARY(acosh, acosh_tab, GRAIN_MATH)
SIMPLE_UNARY(atanh, atanh_tab, GRAIN_MATH)
SIMPLE_UNARY(softplus, softplus_tab, GRAIN_MATH)
SIMPLE_UNARY(mish, mish_tab, GRAIN_MATH)
SIMPLE_UNARY(bitwise_not, bnot_tab, GRAIN_CHEAP)

#define ISA_UNARY(name, grain) \
    int ox_ew_##name(ox_kernel_ctx *c) { return run_unary_isa(c, name##_tab, name##_f32_isa, 0, grain); }
ISA_UNARY(floor, GRAIN_CHEAP)
ISA_UNARY(ceil, GRAIN_CHEAP)
ISA_UNARY(round, GRAIN_CHEAP)
ISA_UNARY(recip, GRAIN_CHEAP)
ISA_UNARY(sqrt, GRAIN_CHEAP)
ISA_UNARY(softsign, GRAIN_CHEAP)
ISA_UNARY(exp, GRAIN_MATH)
ISA_UNARY(erf, GRAIN_MATH)

int ox_ew_gelu(ox_kernel_ctx *c) {
    const char *ap = ir_attr_string(c->node, "approximate", "none");
    if (strcmp(ap, "none") == 0) return run_unary_act(c, gelu_tab, OX_ACT_GELU, 0, 0, GRAIN_MATH);
    if (strcmp(ap, "tanh") == 0)
        return run_unary_act(c, gelu_tanh_tab, OX_ACT_GELU_TANH, 0, 0, GRAIN_MATH);
    return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                          "Gelu: approximate must be \"none\" or \"tanh\", got \"%s\"", ap);
}
int ox_ew_swish(ox_kernel_ctx *c) {
    return run_unary_isa(c, swish_tab, swish_f32_isa, ir_attr_float(c->node, "alpha", 1.0f),
                         GRAIN_MATH);
}

int ox_ew_hardsigmoid(ox_kernel_ctx *c) {
    return run_unary_act(c, hardsigmoid_tab, OX_ACT_HARDSIGMOID,
                         ir_attr_float(c->node, "alpha", 0.2f), ir_attr_float(c->node, "beta", 0.5f),
                         GRAIN_CHEAP);
}
int ox_ew_elu(ox_kernel_ctx *c) {
    return run_unary_alpha(c, elu_tab, ir_attr_float(c->node, "alpha", 1.0f), 0, 0);
}
int ox_ew_selu(ox_kernel_ctx *c) {
    return run_unary_alpha(c, selu_tab, ir_attr_float(c->node, "alpha", 1.67326319217681884765625f),
                           0, ir_attr_float(c->node, "gamma", 1.05070102214813232421875f));
}
int ox_ew_celu(ox_kernel_ctx *c) {
    float alpha = ir_attr_float(c->node, "alpha", 1.0f);
    if (alpha == 0) return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Celu: alpha must not be 0");
    return run_unary_alpha(c, celu_tab, alpha, 0, 0);
}
int ox_ew_leaky(ox_kernel_ctx *c) {
    return run_unary_act(c, leaky_tab, OX_ACT_LEAKYRELU, ir_attr_float(c->node, "alpha", 0.01f), 0,
                         GRAIN_CHEAP);
}
int ox_ew_threlu(ox_kernel_ctx *c) {
    return run_unary_alpha(c, threlu_tab, ir_attr_float(c->node, "alpha", 1.0f), 0, 0);
}
int ox_ew_shrink(ox_kernel_ctx *c) {
    /* alpha carries lambd, beta carries bias */
    return run_unary_alpha(c, shrink_tab, ir_attr_float(c->node, "lambd", 0.5f),
                           ir_attr_float(c->node, "bias", 0.0f), 0);
}

/* ---- IsNaN / IsInf on float8 (version 20) ----
 * A one-byte type has 256 bit patterns: classify each once, then map. */

static void lut_map(void *arg, int64_t b, int64_t e) {
    const un_ctx *p = arg;
    const uint8_t *x = p->x;
    uint8_t *y = p->y;
    for (int64_t i = b; i < e; i++) y[i] = p->lut[x[i]];
}

static int classify_float8(ox_kernel_ctx *c, int nan, int pos, int neg) {
    const ox_tensor *x = c->inputs[0];
    ox_tensor *y = c->outputs[0];
    int64_t n = ox_tensor_numel(x);
    if (ox_tensor_numel(y) != n || y->dtype != ONYX_BOOL)
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "%s: output does not match the input",
                              c->node->op_type);
    uint8_t lut[256];
    for (int b = 0; b < 256; b++) {
        float v = ox_narrow_to_float(x->dtype, (uint8_t)b);
        lut[b] = nan ? isnan(v) != 0 : isinf(v) && (v > 0 ? pos : neg);
    }
    un_ctx u = {0};
    u.x = x->data;
    u.y = y->data;
    u.lut = lut;
    ox_parallel_for(c->pool, n, GRAIN_CHEAP, lut_map, &u);
    return 0;
}

int ox_ew_isnan(ox_kernel_ctx *c) {
    if (c->inputs[0] && c->outputs[0] && ox_dtype_is_float8(c->inputs[0]->dtype))
        return classify_float8(c, 1, 0, 0);
    return run_unary(c, isnan_tab, GRAIN_CHEAP);
}
int ox_ew_isinf(ox_kernel_ctx *c) {
    un_ctx u = {0};
    u.flag_a = ir_attr_int(c->node, "detect_positive", 1) != 0;
    u.flag_b = ir_attr_int(c->node, "detect_negative", 1) != 0;
    if (c->inputs[0] && c->outputs[0] && ox_dtype_is_float8(c->inputs[0]->dtype))
        return classify_float8(c, 0, u.flag_a, u.flag_b);
    return run_unary_with(c, isinf_tab, &u, GRAIN_CHEAP);
}

/* The widest bound of a type (Clip without min or max). */
static void type_limit(ox_dtype t, int upper, unsigned char *buf) {
    memset(buf, 0, 8);
    switch (t) {
    case ONYX_FLOAT32: {
        float v = upper ? INFINITY : -INFINITY;
        memcpy(buf, &v, sizeof v);
        break;
    }
    case ONYX_FLOAT64: {
        double v = upper ? INFINITY : -INFINITY;
        memcpy(buf, &v, sizeof v);
        break;
    }
    case ONYX_FLOAT16: {
        uint16_t v = upper ? 0x7c00 : 0xfc00;
        memcpy(buf, &v, sizeof v);
        break;
    }
    case ONYX_BFLOAT16: {
        uint16_t v = upper ? 0x7f80 : 0xff80;
        memcpy(buf, &v, sizeof v);
        break;
    }
#define LIMIT(DT, T, LO, HI)            \
    case DT: {                          \
        T v = upper ? HI : LO;          \
        memcpy(buf, &v, sizeof v);      \
        break;                          \
    }
        LIMIT(ONYX_INT8, int8_t, INT8_MIN, INT8_MAX)
        LIMIT(ONYX_INT16, int16_t, INT16_MIN, INT16_MAX)
        LIMIT(ONYX_INT32, int32_t, INT32_MIN, INT32_MAX)
        LIMIT(ONYX_INT64, int64_t, INT64_MIN, INT64_MAX)
        LIMIT(ONYX_UINT8, uint8_t, 0, UINT8_MAX)
        LIMIT(ONYX_UINT16, uint16_t, 0, UINT16_MAX)
        LIMIT(ONYX_UINT32, uint32_t, 0, UINT32_MAX)
        LIMIT(ONYX_UINT64, uint64_t, 0, UINT64_MAX)
#undef LIMIT
    default: break;
    }
}

int ox_ew_clip(ox_kernel_ctx *c) {
    const ox_tensor *x = c->inputs[0];
    un_ctx u = {0};
    if (!x) return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Clip: missing input");
    size_t es = ox_dtype_size(x->dtype);
    if (c->node->opset < 11) {
        /* bounds are float attributes before opset 11 */
        float lo = ir_attr_float(c->node, "min", -3.402823466e+38f);
        float hi = ir_attr_float(c->node, "max", 3.402823466e+38f);
        if (!ox_dtype_is_float(x->dtype))
            return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED,
                                  "Clip: opset %d supports only float inputs, got %s",
                                  c->node->opset, ox_dtype_name(x->dtype));
        store_f64(u.lo, x->dtype, 0, lo);
        store_f64(u.hi, x->dtype, 0, hi);
    } else {
        for (int k = 1; k <= 2; k++) {
            const ox_tensor *b = k < c->n_inputs ? c->inputs[k] : NULL;
            unsigned char *dst = k == 1 ? u.lo : u.hi;
            if (!b) {
                type_limit(x->dtype, k == 2, dst);
                continue;
            }
            if (b->dtype != x->dtype)
                return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                                      "Clip: %s has type %s but input is %s",
                                      k == 1 ? "min" : "max", ox_dtype_name(b->dtype),
                                      ox_dtype_name(x->dtype));
            if (ox_tensor_numel(b) != 1)
                return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                                      "Clip: %s must be a scalar, got %" PRId64 " elements",
                                      k == 1 ? "min" : "max", ox_tensor_numel(b));
            memcpy(dst, b->data, es);
        }
    }
    return run_unary_with(c, clip_tab, &u, GRAIN_CHEAP);
}

/* ====================================================================
 * BitCast: the same bits read as another type of the same width. onyx
 * holds tensor data little endian, as the spec reads it, so for whole-byte
 * types this is a copy.
 * ==================================================================== */

int ox_ew_bitcast_bits(ox_dtype t) {
    /* float6 is not among BitCast's types */
    if (t == ONYX_STRING || t == ONYX_FLOAT6E2M3 || t == ONYX_FLOAT6E3M2 ||
        !ox_dtype_valid((int)t))
        return 0;
    return ox_dtype_bits(t);
}

int ox_ew_bitcast(ox_kernel_ctx *c) {
    const ox_tensor *X = c->n_inputs > 0 ? c->inputs[0] : NULL;
    ox_tensor *Y = c->n_outputs > 0 ? c->outputs[0] : NULL;
    if (!X || !Y) return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "BitCast: missing input");
    int bits = ox_ew_bitcast_bits(X->dtype);
    if (bits == 0 || bits != ox_ew_bitcast_bits(Y->dtype))
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                              "BitCast: cannot reinterpret %s as %s (widths differ, or a type "
                              "BitCast does not take)",
                              ox_dtype_name(X->dtype), ox_dtype_name(Y->dtype));
    int64_t n = ox_tensor_numel(X);
    if (ox_tensor_numel(Y) != n)
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "BitCast: output has %" PRId64
                              " elements, input %" PRId64, ox_tensor_numel(Y), n);
    if (n == 0) return 0;
    if (bits % 8 == 0) {
        memcpy(Y->data, X->data, (size_t)n * ox_dtype_size(X->dtype));
        return 0;
    }
    /* sub-byte types sit one per byte, int4/int2 sign-extended: keep the
     * element's own bits and extend them as the target type wants */
    const uint8_t *x = X->data;
    uint8_t *y = Y->data;
    const uint8_t mask = (uint8_t)((1u << bits) - 1);
    int narrow_int = ox_dtype_is_narrow_int(Y->dtype);
    for (int64_t i = 0; i < n; i++)
        y[i] = narrow_int ? (uint8_t)ox_narrow_int_wrap(Y->dtype, x[i] & mask)
                          : (uint8_t)(x[i] & mask);
    return 0;
}
