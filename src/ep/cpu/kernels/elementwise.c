/* CPU kernels for the broadcasting elementwise operators: binary
 * arithmetic, comparisons, logic and bitwise operators, BitShift, Pow,
 * PRelu, variadic Min/Max/Sum/Mean and Where; and the kernel table of the
 * whole elementwise family, whose unary kernels are in elementwise_unary.c
 * and Softmax family in elementwise_softmax.c (Cast and CastLike are in
 * cast.c).
 *
 * Each operator gets one small loop per element type, generated from the
 * type lists of elementwise.h, so the compiler sees plain typed loops it
 * can vectorise. */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/broadcast.h"
#include "ep/cpu/kernels/elementwise.h"

extern const ox_kernel_table ox_cpu_kernels_elementwise;

/* ====================================================================
 * Binary with broadcasting
 * ==================================================================== */

typedef struct bin_ctx {
    const void *a, *b;
    void *o;
} bin_ctx;

/* The four inner loops cover same-shape, scalar-on-the-left,
 * scalar-on-the-right and the general strided run. */
#define BIN_FN(fn, TA, TB, TO, CA, CB, LDA, LDB, STO, EXPR)                               \
    static void fn(void *arg, int64_t oo_, const int64_t *io_, const int64_t *is_,        \
                   int64_t n_) {                                                          \
        const bin_ctx *p_ = arg;                                                          \
        const TA *A_ = (const TA *)p_->a + io_[0];                                        \
        const TB *B_ = (const TB *)p_->b + io_[1];                                        \
        TO *O_ = (TO *)p_->o + oo_;                                                       \
        if (is_[0] == 1 && is_[1] == 1) {                                                 \
            for (int64_t i_ = 0; i_ < n_; i_++) {                                         \
                const CA a = LDA(A_[i_]);                                                 \
                const CB b = LDB(B_[i_]);                                                 \
                O_[i_] = STO(EXPR);                                                       \
            }                                                                             \
        } else if (is_[0] == 0 && is_[1] == 1) {                                          \
            const CA a = LDA(A_[0]);                                                      \
            for (int64_t i_ = 0; i_ < n_; i_++) {                                         \
                const CB b = LDB(B_[i_]);                                                 \
                O_[i_] = STO(EXPR);                                                       \
            }                                                                             \
        } else if (is_[0] == 1 && is_[1] == 0) {                                          \
            const CB b = LDB(B_[0]);                                                      \
            for (int64_t i_ = 0; i_ < n_; i_++) {                                         \
                const CA a = LDA(A_[i_]);                                                 \
                O_[i_] = STO(EXPR);                                                       \
            }                                                                             \
        } else {                                                                          \
            const int64_t sa_ = is_[0], sb_ = is_[1];                                     \
            for (int64_t i_ = 0; i_ < n_; i_++) {                                         \
                const CA a = LDA(A_[i_ * sa_]);                                           \
                const CB b = LDB(B_[i_ * sb_]);                                           \
                O_[i_] = STO(EXPR);                                                       \
            }                                                                             \
        }                                                                                 \
    }

#define B_DEF(op, sfx, DT, T, C, W, LD, ST, E) \
    BIN_FN(op##_##sfx, T, T, T, C, C, LD, LD, ST, E(C, W, a, b))
#define B_CMP(op, sfx, DT, T, C, W, LD, ST, E) \
    BIN_FN(op##_##sfx, T, T, uint8_t, C, C, LD, LD, ST_ID, E(C, W, a, b))

#define E_ADD(C, W, a, b) ((C)((W)(a) + (W)(b)))
#define E_SUB(C, W, a, b) ((C)((W)(a) - (W)(b)))
#define E_MUL(C, W, a, b) ((C)((W)(a) * (W)(b)))
#define E_DIV_F(C, W, a, b) ((a) / (b))
/* INT_MIN / -1 overflows; negating through W wraps like the hardware. */
#define E_DIV_S(C, W, a, b) ((b) == -1 ? (C)((W)0 - (W)(a)) : (C)((a) / (b)))
#define E_DIV_U(C, W, a, b) ((C)((a) / (b)))
#define E_MAX_F(C, W, a, b) ((a) > (b) || (a) != (a) ? (a) : (b))
#define E_MIN_F(C, W, a, b) ((a) < (b) || (a) != (a) ? (a) : (b))
#define E_MAX_I(C, W, a, b) ((a) > (b) ? (a) : (b))
#define E_MIN_I(C, W, a, b) ((a) < (b) ? (a) : (b))
#define E_POW_F(C, W, a, b) ((C)pow(a, b))
#define E_PRELU_F(C, W, a, b) ((a) < 0 ? (a) * (b) : (a))
#define E_PRELU_S(C, W, a, b) ((a) < 0 ? (C)((W)(a) * (W)(b)) : (a))
#define E_SHL(C, W, a, b) ((b) >= sizeof(C) * 8 ? (C)0 : (C)((W)(a) << (b)))
#define E_SHR(C, W, a, b) ((b) >= sizeof(C) * 8 ? (C)0 : (C)((W)(a) >> (b)))
/* BitShift-28 on signed types: a shift count outside [0, bits) leaves only
 * the sign fill (-1 for a negative X shifted right, else 0). The left
 * shift runs on the unsigned bits so that bits past the sign drop off;
 * the right shift is arithmetic, written with ~ so that no negative
 * value is shifted (implementation-defined in C). */
#define SH_OUT(C, b) ((int64_t)(b) < 0 || (int64_t)(b) >= (int64_t)(sizeof(C) * 8))
#define E_SHL_S(C, W, a, b) \
    (SH_OUT(C, b) ? (C)0 : (C)(int64_t)((uint64_t)(int64_t)(a) << (b)))
#define E_SHR_S(C, W, a, b)                                                          \
    (SH_OUT(C, b) ? (C)((a) < 0 ? -1 : 0)                                            \
                  : (C)((a) < 0 ? ~(~(int64_t)(a) >> (b)) : (int64_t)(a) >> (b)))
#define E_BAND(C, W, a, b) ((C)((a) & (b)))
#define E_BOR(C, W, a, b) ((C)((a) | (b)))
#define E_BXOR(C, W, a, b) ((C)((a) ^ (b)))
#define E_EQ(C, W, a, b) ((uint8_t)((a) == (b)))
#define E_EQ_B(C, W, a, b) ((uint8_t)(!(a) == !(b)))
#define E_LT(C, W, a, b) ((uint8_t)((a) < (b)))
#define E_LE(C, W, a, b) ((uint8_t)((a) <= (b)))
#define E_GT(C, W, a, b) ((uint8_t)((a) > (b)))
#define E_GE(C, W, a, b) ((uint8_t)((a) >= (b)))
#define E_AND(C, W, a, b) ((uint8_t)((a) && (b)))
#define E_OR(C, W, a, b) ((uint8_t)((a) || (b)))
#define E_XOR(C, W, a, b) ((uint8_t)(!(a) != !(b)))

/* Mod: fmod=1 follows C (sign of the dividend), fmod=0 follows the
 * divisor's sign like Python's %. */
static inline double mod_floor_f(double a, double b) {
    double r = fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    /* a zero result takes the divisor's sign (Mod-28: -0 mod 3 = +0) */
    if (r == 0) r = copysign(0.0, b);
    return r;
}
static inline int64_t mod_floor_i(int64_t a, int64_t b) {
    if (b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
#define E_MOD_F(C, W, a, b) ((C)mod_floor_f((double)(a), (double)(b)))
#define E_FMOD_F(C, W, a, b) ((C)fmod((double)(a), (double)(b)))
#define E_MOD_S(C, W, a, b) ((C)mod_floor_i((int64_t)(a), (int64_t)(b)))
#define E_FMOD_S(C, W, a, b) ((b) == -1 ? (C)0 : (C)((a) % (b)))
#define E_MOD_U(C, W, a, b) ((C)((a) % (b)))

#define ALL_NUM(X, op, EF, ES, EU) FLOAT_TYPES(X, op, EF) SINT_TYPES(X, op, ES) UINT_TYPES(X, op, EU)
#define NUM_TAB(op)                                                                      \
    static const ox_bcast_fn op##_tab[NDT] = {FLOAT_TYPES(ENTRY, op) SINT_TYPES(ENTRY, op) \
                                                  UINT_TYPES(ENTRY, op)};

ALL_NUM(B_DEF, add, E_ADD, E_ADD, E_ADD)
NUM_TAB(add)
ALL_NUM(B_DEF, sub, E_SUB, E_SUB, E_SUB)
NUM_TAB(sub)
ALL_NUM(B_DEF, mul, E_MUL, E_MUL, E_MUL)
NUM_TAB(mul)
ALL_NUM(B_DEF, div, E_DIV_F, E_DIV_S, E_DIV_U)
NUM_TAB(div)
ALL_NUM(B_DEF, max, E_MAX_F, E_MAX_I, E_MAX_I)
NUM_TAB(max)
ALL_NUM(B_DEF, min, E_MIN_F, E_MIN_I, E_MIN_I)
NUM_TAB(min)
ALL_NUM(B_DEF, mod, E_MOD_F, E_MOD_S, E_MOD_U)
NUM_TAB(mod)
ALL_NUM(B_DEF, fmod, E_FMOD_F, E_FMOD_S, E_MOD_U)
NUM_TAB(fmod)
ALL_NUM(B_CMP, lt, E_LT, E_LT, E_LT)
NUM_TAB(lt)
ALL_NUM(B_CMP, le, E_LE, E_LE, E_LE)
NUM_TAB(le)
ALL_NUM(B_CMP, gt, E_GT, E_GT, E_GT)
NUM_TAB(gt)
ALL_NUM(B_CMP, ge, E_GE, E_GE, E_GE)
NUM_TAB(ge)
ALL_NUM(B_CMP, eq, E_EQ, E_EQ, E_EQ)
BOOL_TYPES(B_CMP, eq, E_EQ_B)
/* Equal-19 on strings: byte-wise equality (a NULL element reads as ""). */
static void eq_str(void *arg, int64_t oo, const int64_t *io, const int64_t *is, int64_t n) {
    const bin_ctx *p = arg;
    const char *const *A = (const char *const *)p->a + io[0];
    const char *const *B = (const char *const *)p->b + io[1];
    uint8_t *O = (uint8_t *)p->o + oo;
    for (int64_t i = 0; i < n; i++) {
        const char *a = A[i * is[0]], *b = B[i * is[1]];
        O[i] = strcmp(a ? a : "", b ? b : "") == 0;
    }
}
static const ox_bcast_fn eq_tab[NDT] = {FLOAT_TYPES(ENTRY, eq) SINT_TYPES(ENTRY, eq)
                                            UINT_TYPES(ENTRY, eq) BOOL_TYPES(ENTRY, eq)
                                                [ONYX_STRING] = eq_str};

FLOAT_TYPES(B_DEF, pow, E_POW_F)
static const ox_bcast_fn pow_tab[NDT] = {FLOAT_TYPES(ENTRY, pow)};

#define E_FIRST(C, W, a, b) ((void)(b), (a))
ALL_NUM(B_DEF, prelu, E_PRELU_F, E_PRELU_S, E_FIRST)
NUM_TAB(prelu)

BOOL_TYPES(B_CMP, and, E_AND)
static const ox_bcast_fn and_tab[NDT] = {BOOL_TYPES(ENTRY, and)};
BOOL_TYPES(B_CMP, or, E_OR)
static const ox_bcast_fn or_tab[NDT] = {BOOL_TYPES(ENTRY, or)};
BOOL_TYPES(B_CMP, xor, E_XOR)
static const ox_bcast_fn xor_tab[NDT] = {BOOL_TYPES(ENTRY, xor)};
UINT_TYPES(B_DEF, shl, E_SHL)
SINT_TYPES(B_DEF, shl, E_SHL_S)
static const ox_bcast_fn shl_tab[NDT] = {UINT_TYPES(ENTRY, shl) SINT_TYPES(ENTRY, shl)};
UINT_TYPES(B_DEF, shr, E_SHR)
SINT_TYPES(B_DEF, shr, E_SHR_S)
static const ox_bcast_fn shr_tab[NDT] = {UINT_TYPES(ENTRY, shr) SINT_TYPES(ENTRY, shr)};
#define INT_TAB(op) \
    static const ox_bcast_fn op##_tab[NDT] = {SINT_TYPES(ENTRY, op) UINT_TYPES(ENTRY, op)};
SINT_TYPES(B_DEF, band, E_BAND)
UINT_TYPES(B_DEF, band, E_BAND)
INT_TAB(band)
SINT_TYPES(B_DEF, bor, E_BOR)
UINT_TYPES(B_DEF, bor, E_BOR)
INT_TAB(bor)
SINT_TYPES(B_DEF, bxor, E_BXOR)
UINT_TYPES(B_DEF, bxor, E_BXOR)
INT_TAB(bxor)

/* Before opset 7, B broadcast onto A only with broadcast=1, and `axis`
 * placed B's dims starting at that axis of A instead of at the end. */
static int legacy_b_dims(const ir_node *n, const ox_tensor *A, const ox_tensor *B, int64_t *dims,
                         int *rank) {
    *rank = B->rank;
    if (B->rank) memcpy(dims, B->dims, (size_t)B->rank * sizeof *dims);
    if (n->opset >= 7 || ir_attr_int(n, "broadcast", 0) == 0) return 0;
    const ir_attr *ax = ir_node_attr(n, "axis");
    if (!ax) return 0;
    int64_t axis = ax->i < 0 ? ax->i + A->rank : ax->i;
    if (axis < 0 || axis + B->rank > A->rank) return -1;
    int r = (int)(A->rank - axis);
    for (int i = B->rank; i < r; i++) dims[i] = 1;
    *rank = r;
    return 0;
}

/* Runs fn over the broadcast of A and B into O. io holds the data
 * pointers fn reads (inside ctx): where the runs would be short and one
 * input small, that input is read from an expanded copy instead
 * (ox_bcast_widen), so that fn sees runs of many elements: D-FINE's
 * decoder multiplies [1, 100, 4, 12, 2] by [12, 1], 4800 runs of 2. */
static int run_binary_fn(ox_kernel_ctx *c, ox_bcast_fn fn, void *ctx, bin_ctx *io,
                         const ox_tensor *A, const ox_tensor *B, ox_tensor *O, int64_t grain) {
    int64_t bd[OX_MAX_RANK];
    int br;
    char s1[128], s2[128], s3[128];
    if (legacy_b_dims(c->node, A, B, bd, &br) != 0)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: axis %" PRId64
                              " does not fit B %s into A %s", c->node->op_type,
                              ir_attr_int(c->node, "axis", 0),
                              ox_shape_str(B->dims, B->rank, s2, sizeof s2),
                              ox_shape_str(A->dims, A->rank, s1, sizeof s1));
    const int64_t *dims[2] = {A->dims, bd};
    int ranks[2] = {A->rank, br};
    ox_bcast plan;
    if (ox_bcast_plan(&plan, 2, dims, ranks, O->dims, O->rank) != 0)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                              "%s: inputs %s and %s do not broadcast to output %s",
                              c->node->op_type, ox_shape_str(A->dims, A->rank, s1, sizeof s1),
                              ox_shape_str(B->dims, B->rank, s2, sizeof s2),
                              ox_shape_str(O->dims, O->rank, s3, sizeof s3));
    /* the copy (up to 64 KiB) in the pool's scratch buffer, which stays
     * allocated from run to run; without it, the runs stay short */
    ox_bcast_wide w;
    void *buf = NULL;
    int lent = 0;
    const size_t elem = ox_dtype_size(A->dtype);
    if (elem > 0 && elem == ox_dtype_size(B->dtype) && A->dtype != ONYX_STRING &&
        ox_bcast_widen_plan(&plan, (int64_t)(65536 / elem), &w) == 0 &&
        (buf = ox_threadpool_scratch(c->pool, (size_t)w.elems * elem, &lent)) != NULL) {
        ox_bcast_widen(&plan, &w, w.k == 0 ? io->a : io->b, elem, buf);
        if (w.k == 0) io->a = buf;
        else io->b = buf;
    }
    ox_bcast_run(&plan, c->pool, grain, fn, ctx);
    if (buf) ox_threadpool_scratch_done(c->pool, buf, lent);
    return 0;
}

static int get_binary(ox_kernel_ctx *c, const ox_tensor **A, const ox_tensor **B, ox_tensor **O) {
    *A = c->n_inputs > 0 ? c->inputs[0] : NULL;
    *B = c->n_inputs > 1 ? c->inputs[1] : NULL;
    *O = c->n_outputs > 0 ? c->outputs[0] : NULL;
    if (!*A || !*B || !*O)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: needs two inputs and an output",
                              c->node->op_type);
    return 0;
}

static int run_binary(ox_kernel_ctx *c, const ox_bcast_fn *tab, int same_type, int64_t grain) {
    const ox_tensor *A, *B;
    ox_tensor *O;
    if (get_binary(c, &A, &B, &O) != 0) return -1;
    if (same_type && A->dtype != B->dtype)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: input types differ (%s and %s)",
                              c->node->op_type, ox_dtype_name(A->dtype), ox_dtype_name(B->dtype));
    ox_bcast_fn fn = A->dtype > 0 && A->dtype < NDT ? tab[A->dtype] : NULL;
    if (!fn)
        return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "%s: element type %s is not supported",
                              c->node->op_type, ox_dtype_name(A->dtype));
    if (ox_tensor_numel(O) == 0) return 0;
    bin_ctx ctx = {A->data, B->data, O->data};
    return run_binary_fn(c, fn, &ctx, &ctx, A, B, O, grain);
}

/* Integer division and modulo by zero have no defined result: refuse
 * them with an error rather than trap. */
static int check_divisor(ox_kernel_ctx *c, const ox_tensor *B) {
    if (!ox_dtype_is_integer(B->dtype)) return 0;
    if (c->outputs[0] && ox_tensor_numel(c->outputs[0]) == 0) return 0;
    int64_t n = ox_tensor_numel(B);
    for (int64_t i = 0; i < n; i++)
        if (ox_get_i64(B->data, B->dtype, (size_t)i) == 0)
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                                  "%s: integer division by zero (divisor element %" PRId64 ")",
                                  c->node->op_type, i);
    return 0;
}

#define SIMPLE_BINARY(name, tab, grain) \
    static int k_##name(ox_kernel_ctx *c) { return run_binary(c, tab, 1, grain); }
SIMPLE_BINARY(add, add_tab, GRAIN_CHEAP)
SIMPLE_BINARY(sub, sub_tab, GRAIN_CHEAP)
SIMPLE_BINARY(mul, mul_tab, GRAIN_CHEAP)
SIMPLE_BINARY(equal, eq_tab, GRAIN_CHEAP)
SIMPLE_BINARY(less, lt_tab, GRAIN_CHEAP)
SIMPLE_BINARY(less_equal, le_tab, GRAIN_CHEAP)
SIMPLE_BINARY(greater, gt_tab, GRAIN_CHEAP)
SIMPLE_BINARY(greater_equal, ge_tab, GRAIN_CHEAP)
SIMPLE_BINARY(and, and_tab, GRAIN_CHEAP)
SIMPLE_BINARY(or, or_tab, GRAIN_CHEAP)
SIMPLE_BINARY(xor, xor_tab, GRAIN_CHEAP)
SIMPLE_BINARY(bitwise_and, band_tab, GRAIN_CHEAP)
SIMPLE_BINARY(bitwise_or, bor_tab, GRAIN_CHEAP)
SIMPLE_BINARY(bitwise_xor, bxor_tab, GRAIN_CHEAP)

/* PRelu before opset 7 took a 1-D slope per channel (axis 1), which
 * numpy broadcasting would align with the last axis instead. */
static int k_prelu(ox_kernel_ctx *c) {
    const ox_tensor *A, *B;
    ox_tensor *O;
    if (get_binary(c, &A, &B, &O) != 0) return -1;
    if (c->node->opset >= 7 || B->rank != 1 || A->rank < 2 || B->dims[0] != A->dims[1] ||
        B->dims[0] == 1)
        return run_binary(c, prelu_tab, 1, GRAIN_CHEAP);
    if (A->dtype != B->dtype || !prelu_tab[A->dtype])
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "PRelu: unsupported types %s and %s",
                              ox_dtype_name(A->dtype), ox_dtype_name(B->dtype));
    ox_tensor slope = *B;
    slope.rank = A->rank - 1;
    for (int i = 1; i < slope.rank; i++) slope.dims[i] = 1;
    if (ox_tensor_numel(O) == 0) return 0;
    bin_ctx ctx = {A->data, B->data, O->data};
    return run_binary_fn(c, prelu_tab[A->dtype], &ctx, &ctx, A, &slope, O, GRAIN_CHEAP);
}

static int k_div(ox_kernel_ctx *c) {
    if (c->n_inputs > 1 && c->inputs[1] && check_divisor(c, c->inputs[1]) != 0) return -1;
    return run_binary(c, div_tab, 1, GRAIN_CHEAP);
}

static int k_mod(ox_kernel_ctx *c) {
    if (c->n_inputs > 1 && c->inputs[1] && check_divisor(c, c->inputs[1]) != 0) return -1;
    int fm = ir_attr_int(c->node, "fmod", 0) != 0;
    return run_binary(c, fm ? fmod_tab : mod_tab, 1, GRAIN_MATH);
}

static int k_bitshift(ox_kernel_ctx *c) {
    const char *dir = ir_attr_string(c->node, "direction", "");
    int left = strcmp(dir, "LEFT") == 0;
    if (!left && strcmp(dir, "RIGHT") != 0)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                              "BitShift: direction must be \"LEFT\" or \"RIGHT\", got \"%s\"", dir);
    return run_binary(c, left ? shl_tab : shr_tab, 1, GRAIN_CHEAP);
}

/* ---- Pow: base and exponent may have different types ---- */

typedef struct pow_ctx {
    bin_ctx io;
    ox_dtype ta, tb;
    int int_mode;
} pow_ctx;

static int64_t ipow(int64_t a, int64_t e) {
    if (e < 0) {
        /* the exact result truncates to 0 unless |a| == 1 */
        if (a == 1) return 1;
        if (a == -1) return (e & 1) ? -1 : 1;
        return 0;
    }
    uint64_t r = 1, base = (uint64_t)a;
    uint64_t k = (uint64_t)e;
    while (k) {
        if (k & 1) r *= base;
        base *= base;
        k >>= 1;
    }
    return (int64_t)r;
}

static void pow_generic(void *arg, int64_t oo, const int64_t *io, const int64_t *is, int64_t n) {
    const pow_ctx *p = arg;
    for (int64_t i = 0; i < n; i++) {
        size_t ia = (size_t)(io[0] + i * is[0]), ib = (size_t)(io[1] + i * is[1]);
        if (p->int_mode) {
            int64_t a = ox_get_i64(p->io.a, p->ta, ia), b = ox_get_i64(p->io.b, p->tb, ib);
            ox_set_i64(p->io.o, p->ta, (size_t)(oo + i), ipow(a, b));
        } else {
            double a = ox_get_f64(p->io.a, p->ta, ia), b = ox_get_f64(p->io.b, p->tb, ib);
            store_f64(p->io.o, p->ta, (size_t)(oo + i), pow(a, b));
        }
    }
}

static int k_pow(ox_kernel_ctx *c) {
    const ox_tensor *A, *B;
    ox_tensor *O;
    if (get_binary(c, &A, &B, &O) != 0) return -1;
    if (ox_tensor_numel(O) == 0) return 0;
    if (A->dtype == B->dtype && pow_tab[A->dtype]) {
        bin_ctx ctx = {A->data, B->data, O->data};
        return run_binary_fn(c, pow_tab[A->dtype], &ctx, &ctx, A, B, O, GRAIN_MATH);
    }
    if (!(mask_of(A->dtype) & (M_FLOAT | M_SINT | M_UINT)) ||
        !(mask_of(B->dtype) & (M_FLOAT | M_SINT | M_UINT)))
        return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "Pow: types %s ^ %s are not supported",
                              ox_dtype_name(A->dtype), ox_dtype_name(B->dtype));
    pow_ctx ctx = {{A->data, B->data, O->data}, A->dtype, B->dtype,
                   ox_dtype_is_integer(A->dtype) && ox_dtype_is_integer(B->dtype)};
    return run_binary_fn(c, pow_generic, &ctx, &ctx.io, A, B, O, GRAIN_MATH);
}

typedef struct u128_t {
    uint64_t lo, hi;
} u128_t;

/* Min/Max/Sum/Mean: start from the first input broadcast to the output,
 * then fold in the others one at a time. */
static int run_variadic(ox_kernel_ctx *c, const ox_bcast_fn *tab, int mean) {
    ox_tensor *O = c->n_outputs > 0 ? c->outputs[0] : NULL;
    if (c->n_inputs < 1 || !O)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: needs at least one input",
                              c->node->op_type);
    const ox_tensor *first = c->inputs[0];
    for (int k = 0; k < c->n_inputs; k++) {
        if (!c->inputs[k])
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: input %d is missing",
                                  c->node->op_type, k);
        if (c->inputs[k]->dtype != first->dtype)
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                                  "%s: input %d has type %s, input 0 has %s", c->node->op_type, k,
                                  ox_dtype_name(c->inputs[k]->dtype),
                                  ox_dtype_name(first->dtype));
    }
    ox_bcast_fn fn = first->dtype > 0 && first->dtype < NDT ? tab[first->dtype] : NULL;
    if (!fn || (mean && !ox_dtype_is_float(first->dtype)))
        return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "%s: element type %s is not supported",
                              c->node->op_type, ox_dtype_name(first->dtype));
    int64_t n = ox_tensor_numel(O);
    if (n == 0) return 0;
    if (ox_bcast_copy(first, O, c->pool) != 0) {
        char s1[128], s2[128];
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: input %s does not broadcast to %s",
                              c->node->op_type,
                              ox_shape_str(first->dims, first->rank, s1, sizeof s1),
                              ox_shape_str(O->dims, O->rank, s2, sizeof s2));
    }
    for (int k = 1; k < c->n_inputs; k++) {
        bin_ctx ctx = {O->data, c->inputs[k]->data, O->data};
        if (run_binary_fn(c, fn, &ctx, &ctx, O, c->inputs[k], O, GRAIN_CHEAP) != 0) return -1;
    }
    if (mean && c->n_inputs > 1) {
        if (O->dtype == ONYX_FLOAT32) {
            float *y = O->data, s = 1.0f / (float)c->n_inputs;
            for (int64_t i = 0; i < n; i++) y[i] *= s;
        } else {
            for (int64_t i = 0; i < n; i++)
                ox_set_f64(O->data, O->dtype, (size_t)i,
                           ox_get_f64(O->data, O->dtype, (size_t)i) / c->n_inputs);
        }
    }
    return 0;
}

static int k_max(ox_kernel_ctx *c) { return run_variadic(c, max_tab, 0); }
static int k_min(ox_kernel_ctx *c) { return run_variadic(c, min_tab, 0); }
static int k_sum(ox_kernel_ctx *c) { return run_variadic(c, add_tab, 0); }
static int k_mean(ox_kernel_ctx *c) { return run_variadic(c, add_tab, 1); }

/* ---- Where ---- */

typedef struct where_ctx {
    const uint8_t *cond;
    const void *x, *y;
    void *o;
    int failed;
} where_ctx;

/* Whole runs where X or Y is one repeated value (a scalar's stride 0, as
 * in Where(IsNaN(p), 0, p)) take loops with the strides as constants, which
 * the compiler turns into vector selects; other strides take the general
 * loop. */
/* a ? x : y by masks, without a branch (a is a bool byte, 0 or 1) */
#define WHERE_MASK(T, a, x, y) ((T)(((T)0 - (T)(a)) & (x)) | (T)(((T)(a) - (T)1) & (y)))
#define WHERE_BRANCH(T, a, x, y) ((a) ? (x) : (y))
#define WHERE_FN(T, WHERE_SEL)                                                            \
    static void where_##T(void *arg, int64_t oo, const int64_t *io, const int64_t *is,    \
                          int64_t n) {                                                    \
        const where_ctx *p = arg;                                                         \
        const uint8_t *C = p->cond + io[0];                                               \
        const T *X = (const T *)p->x + io[1];                                             \
        const T *Y = (const T *)p->y + io[2];                                             \
        T *O = (T *)p->o + oo;                                                            \
        if (is[0] != 1 || is[1] > 1 || is[2] > 1) {                                       \
            for (int64_t i = 0; i < n; i++)                                               \
                O[i] = C[i * is[0]] ? X[i * is[1]] : Y[i * is[2]];                        \
        } else if (is[1] && is[2]) {                                                      \
            for (int64_t i = 0; i < n; i++) O[i] = WHERE_SEL(T, C[i], X[i], Y[i]);        \
        } else if (is[2]) {                                                               \
            const T x = X[0];                                                             \
            for (int64_t i = 0; i < n; i++) O[i] = WHERE_SEL(T, C[i], x, Y[i]);           \
        } else if (is[1]) {                                                               \
            const T y = Y[0];                                                             \
            for (int64_t i = 0; i < n; i++) O[i] = WHERE_SEL(T, C[i], X[i], y);           \
        } else {                                                                          \
            const T x = X[0], y = Y[0];                                                   \
            for (int64_t i = 0; i < n; i++) O[i] = WHERE_SEL(T, C[i], x, y);              \
        }                                                                                 \
    }
WHERE_FN(uint8_t, WHERE_MASK)
WHERE_FN(uint16_t, WHERE_MASK)
WHERE_FN(uint32_t, WHERE_MASK)
WHERE_FN(uint64_t, WHERE_MASK)
WHERE_FN(u128_t, WHERE_BRANCH)

/* Runs single-threaded: it allocates and records failures in the ctx. */
static void where_string(void *arg, int64_t oo, const int64_t *io, const int64_t *is,
                         int64_t n) {
    where_ctx *p = arg;
    char *const *X = p->x, *const *Y = p->y;
    char **O = p->o;
    for (int64_t i = 0; i < n && !p->failed; i++) {
        const char *src = p->cond[io[0] + i * is[0]] ? X[io[1] + i * is[1]] : Y[io[2] + i * is[2]];
        char *dup = strdup(src ? src : "");
        if (!dup) {
            p->failed = 1;
            return;
        }
        free(O[oo + i]);
        O[oo + i] = dup;
    }
}

static int k_where(ox_kernel_ctx *c) {
    if (c->n_inputs < 3 || !c->inputs[0] || !c->inputs[1] || !c->inputs[2] || !c->outputs[0])
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Where: needs three inputs");
    const ox_tensor *C = c->inputs[0], *X = c->inputs[1], *Y = c->inputs[2];
    ox_tensor *O = c->outputs[0];
    if (C->dtype != ONYX_BOOL)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Where: condition must be bool, got %s",
                              ox_dtype_name(C->dtype));
    if (X->dtype != Y->dtype || O->dtype != X->dtype)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Where: X is %s but Y is %s",
                              ox_dtype_name(X->dtype), ox_dtype_name(Y->dtype));
    const ox_tensor *ins[3] = {C, X, Y};
    ox_bcast plan;
    char s1[128], s2[128], s3[128], s4[128];
    if (ox_bcast_plan_tensors(&plan, 3, ins, O) != 0)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                              "Where: shapes %s, %s and %s do not broadcast to %s",
                              ox_shape_str(C->dims, C->rank, s1, sizeof s1),
                              ox_shape_str(X->dims, X->rank, s2, sizeof s2),
                              ox_shape_str(Y->dims, Y->rank, s3, sizeof s3),
                              ox_shape_str(O->dims, O->rank, s4, sizeof s4));
    where_ctx ctx = {C->data, X->data, Y->data, O->data, 0};
    if (X->dtype == ONYX_STRING) {
        ox_bcast_walk(&plan, 0, plan.numel, where_string, &ctx);
        if (ctx.failed) return ox_kernel_fail(c, ONYX_OUT_OF_MEMORY, "Where: out of memory");
        return 0;
    }
    ox_bcast_fn fn;
    switch (ox_dtype_size(X->dtype)) {
    case 1: fn = where_uint8_t; break;
    case 2: fn = where_uint16_t; break;
    case 4: fn = where_uint32_t; break;
    case 8: fn = where_uint64_t; break;
    case 16: fn = where_u128_t; break;
    default:
        return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "Where: element type %s is not supported",
                              ox_dtype_name(X->dtype));
    }
    ox_bcast_run(&plan, c->pool, GRAIN_CHEAP, fn, &ctx);
    return 0;
}

/* ====================================================================
 * Type support checks for the partitioner
 * ==================================================================== */

static int input_in(const ir_type *const *in, int n, int i, uint32_t mask) {
    if (i >= n || !in[i]) return 1;
    if (in[i]->kind != OX_KIND_TENSOR) return 0;
    if (in[i]->dtype == ONYX_UNDEFINED) return 1;
    return (mask_of(in[i]->dtype) & mask) != 0;
}

#define SUPPORTS(name, mask)                                                        \
    static int s_##name(const ir_node *node, const ir_type *const *in, int n) {     \
        (void)node;                                                                 \
        return input_in(in, n, 0, mask);                                            \
    }
SUPPORTS(float, M_FLOAT)
SUPPORTS(float_f8, M_FLOAT | M_FLOAT8)
SUPPORTS(num, M_NUM)
SUPPORTS(signed, M_FLOAT | M_SINT)
SUPPORTS(bool, M_BOOL)
SUPPORTS(eq, M_NUM | M_BOOL | (1u << ONYX_STRING))
SUPPORTS(int, M_SINT | M_UINT)

static int s_pow(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    return input_in(in, n, 0, M_NUM) && input_in(in, n, 1, M_NUM);
}

static int s_where(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    return input_in(in, n, 0, M_BOOL) &&
           input_in(in, n, 1, M_NUM | M_BOOL | (1u << ONYX_STRING) | (1u << ONYX_COMPLEX64) |
                                  (1u << ONYX_COMPLEX128));
}

/* BitCast moves bytes of any fixed-width type onyx holds. */
static int s_bitcast(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    if (n < 1 || !in[0]) return 1;
    if (in[0]->kind != OX_KIND_TENSOR) return 0;
    return in[0]->dtype == ONYX_UNDEFINED || ox_ew_bitcast_bits(in[0]->dtype) > 0;
}

#define K(name, lo, fn, sup) {"", name, lo, 17, fn, sup, NULL, NULL, NULL}
/* operators whose newest version is past 17 (see the schemas for why) */
#define KV(name, lo, hi, fn, sup) {"", name, lo, hi, fn, sup, NULL, NULL, NULL}

static const ox_kernel_def KERNELS[] = {
    K("Relu", 1, ox_ew_relu, s_signed),
    K("Sigmoid", 1, ox_ew_sigmoid, s_float),
    K("Tanh", 1, ox_ew_tanh, s_float),
    K("Exp", 1, ox_ew_exp, s_float),
    K("Log", 1, ox_ew_log, s_float),
    K("Sqrt", 1, ox_ew_sqrt, s_float),
    K("Reciprocal", 1, ox_ew_recip, s_float),
    K("Floor", 1, ox_ew_floor, s_float),
    K("Ceil", 1, ox_ew_ceil, s_float),
    KV("Round", 11, 22, ox_ew_round, s_float),
    KV("Sin", 7, 22, ox_ew_sin, s_float),
    KV("Cos", 7, 22, ox_ew_cos, s_float),
    KV("Tan", 7, 22, ox_ew_tan, s_float),
    KV("Asin", 7, 22, ox_ew_asin, s_float),
    KV("Acos", 7, 22, ox_ew_acos, s_float),
    KV("Atan", 7, 22, ox_ew_atan, s_float),
    KV("Sinh", 9, 22, ox_ew_sinh, s_float),
    KV("Cosh", 9, 22, ox_ew_cosh, s_float),
    KV("Asinh", 9, 22, ox_ew_asinh, s_float),
    KV("Acosh", 9, 22, ox_ew_acosh, s_float),
    KV("Atanh", 9, 22, ox_ew_atanh, s_float),
    K("Erf", 9, ox_ew_erf, s_float),
    KV("Softplus", 1, 22, ox_ew_softplus, s_float),
    KV("Softsign", 1, 22, ox_ew_softsign, s_float),
    KV("HardSigmoid", 1, 22, ox_ew_hardsigmoid, s_float),
    KV("HardSwish", 14, 22, ox_ew_hardswish, s_float),
    KV("Elu", 1, 22, ox_ew_elu, s_float),
    KV("Selu", 1, 22, ox_ew_selu, s_float),
    KV("Celu", 12, 28, ox_ew_celu, s_float),
    K("LeakyRelu", 1, ox_ew_leaky, s_float),
    KV("ThresholdedRelu", 10, 22, ox_ew_threlu, s_float),
    K("Shrink", 9, ox_ew_shrink, s_num),
    K("Abs", 1, ox_ew_abs, s_num),
    K("Neg", 1, ox_ew_neg, s_signed),
    K("Sign", 9, ox_ew_sign, s_num),
    KV("IsNaN", 9, 20, ox_ew_isnan, s_float_f8),
    KV("IsInf", 10, 20, ox_ew_isinf, s_float_f8),
    K("Not", 1, ox_ew_not, s_bool),
    K("Clip", 1, ox_ew_clip, s_num),
    K("Add", 1, k_add, s_num),
    K("Sub", 1, k_sub, s_num),
    K("Mul", 1, k_mul, s_num),
    K("Div", 1, k_div, s_num),
    KV("Mod", 10, 28, k_mod, s_num),
    K("Pow", 1, k_pow, s_pow),
    K("PRelu", 1, k_prelu, s_num),
    KV("BitShift", 11, 28, k_bitshift, s_int),
    KV("Equal", 1, 19, k_equal, s_eq),
    K("Less", 1, k_less, s_num),
    K("LessOrEqual", 12, k_less_equal, s_num),
    K("Greater", 1, k_greater, s_num),
    K("GreaterOrEqual", 12, k_greater_equal, s_num),
    K("And", 1, k_and, s_bool),
    K("Or", 1, k_or, s_bool),
    K("Xor", 1, k_xor, s_bool),
    K("Max", 1, k_max, s_num),
    K("Min", 1, k_min, s_num),
    K("Sum", 1, k_sum, s_num),
    K("Mean", 1, k_mean, s_float),
    K("Where", 9, k_where, s_where),
    K("Softmax", 1, ox_ew_softmax, s_float),
    K("LogSoftmax", 1, ox_ew_logsoftmax, s_float),
    K("Hardmax", 1, ox_ew_hardmax, s_float),
    KV("BitwiseAnd", 18, 18, k_bitwise_and, s_int),
    KV("BitwiseOr", 18, 18, k_bitwise_or, s_int),
    KV("BitwiseXor", 18, 18, k_bitwise_xor, s_int),
    KV("BitwiseNot", 18, 18, ox_ew_bitwise_not, s_int),
    KV("Mish", 18, 22, ox_ew_mish, s_float),
    KV("Gelu", 20, 20, ox_ew_gelu, s_float),
    KV("Swish", 24, 24, ox_ew_swish, s_float),
    KV("BitCast", 26, 26, ox_ew_bitcast, s_bitcast),
};

const ox_kernel_table ox_cpu_kernels_elementwise = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
