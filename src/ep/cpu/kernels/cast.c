/* CPU kernels of Cast and CastLike.
 *
 * Between the classic types (float16/32/64, bfloat16, 8..64-bit integers,
 * bool) every pair has its own typed loop, generated below, so the common
 * casts vectorise. Anything involving a narrow type (float8, float4,
 * float6, int4/uint4/int2/uint2, held one element per byte) goes through
 * one generic loop: integer-like sources as int64, float-like ones as
 * double, both exact for every narrow value, then rounded once into the
 * destination. Strings parse and print through the same paths.
 *
 * Rules beyond the classic C conversions, from the spec and from the
 * reference's converters (ml_dtypes):
 * - float -> float8: round to nearest even; out of range saturates to the
 *   largest finite value unless saturate=0, which gives NaN (infinity for
 *   E5M2). float4/float6 always saturate. float8e8m0 rounds by round_mode.
 * - float -> int4/uint4/int2/uint2: truncate toward zero; NaN and values
 *   outside the type's range become 0 (the spec leaves them undefined).
 * - integer -> int4/uint4/int2/uint2: keep the low bits (two's complement).
 * - float -> classic integer: truncate toward zero, saturating in int64
 *   (NaN -> 0) and wrapping to narrower types, so no conversion is
 *   undefined in C.
 * - float -> bfloat16 rounds to nearest even from Cast-19 on, as the
 *   reference does; earlier versions' test data keeps the upper 16 bits. */

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/dtype.h"
#include "ep/ep.h"
#include "ep/cpu/kernels/saturate.h"
#include "ops/op.h"

extern const ox_kernel_table ox_cpu_kernels_cast;

#define NDT (ONYX_BFLOAT16 + 1) /* the classic types' table size */
#define GRAIN 32768             /* elements per parallel task: cheap loops */

typedef struct cast_job {
    const void *x;
    void *y;
    ox_dtype from, to;
    int saturate;
    ox_round_mode mode;
    int bf16_rne; /* float -> bfloat16 rounds to nearest even (else truncates) */
} cast_job;


/* A double outside float's range has no defined conversion to float. */
static inline float to_f32(double v) {
    if (v > FLT_MAX) return INFINITY;
    if (v < -FLT_MAX) return -INFINITY;
    return (float)v;
}

/* Upper half of the float32 bits (NaN stays NaN): the bfloat16 cast of
 * the versions before Cast-19, as their test data expects. */
static inline uint16_t bf16_trunc(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
    return (uint16_t)(u >> 16);
}

/* ====================================================================
 * Classic types: one typed loop per (source, destination) pair
 * ==================================================================== */

#define LD_ID(v) (v)
#define LD_H(v) ox_half_to_float(v)
#define LD_B(v) ox_bf16_to_float(v)
#define ST_ID(v) (v)
#define ST_H(v) ox_float_to_half(v)
#define ST_BT(v) bf16_trunc(v)
#define ST_BR(v) ox_float_to_bf16(v)

#define CV_FN(name, TS, TD, EXPR)                          \
    static void name(void *arg, int64_t b_, int64_t e_) {  \
        const cast_job *p_ = arg;                          \
        const TS *X_ = (const TS *)p_->x;                  \
        TD *Y_ = (TD *)p_->y;                              \
        for (int64_t i_ = b_; i_ < e_; i_++) {             \
            const TS x = X_[i_];                           \
            Y_[i_] = EXPR;                                 \
        }                                                  \
    }

/* Source lists: X(suffix, dtype, T, load, <destination params>) */
#define S_FLOAT(X, ...)                               \
    X(f32, ONYX_FLOAT32, float, LD_ID, __VA_ARGS__)   \
    X(f64, ONYX_FLOAT64, double, LD_ID, __VA_ARGS__)  \
    X(f16, ONYX_FLOAT16, uint16_t, LD_H, __VA_ARGS__) \
    X(bf16, ONYX_BFLOAT16, uint16_t, LD_B, __VA_ARGS__)
#define S_INT(X, ...)                                 \
    X(i8, ONYX_INT8, int8_t, LD_ID, __VA_ARGS__)      \
    X(i16, ONYX_INT16, int16_t, LD_ID, __VA_ARGS__)   \
    X(i32, ONYX_INT32, int32_t, LD_ID, __VA_ARGS__)   \
    X(i64, ONYX_INT64, int64_t, LD_ID, __VA_ARGS__)   \
    X(u8, ONYX_UINT8, uint8_t, LD_ID, __VA_ARGS__)    \
    X(u16, ONYX_UINT16, uint16_t, LD_ID, __VA_ARGS__) \
    X(u32, ONYX_UINT32, uint32_t, LD_ID, __VA_ARGS__) \
    X(u64, ONYX_UINT64, uint64_t, LD_ID, __VA_ARGS__)
#define S_BOOL(X, ...) X(b8, ONYX_BOOL, uint8_t, LD_ID, __VA_ARGS__)

/* Destination lists: X(suffix, dtype, T, compute, store). bf16 appears
 * twice: truncating (bf16) and rounding (bf16r, Cast-19 on). */
#define D_FLOAT(X)                              \
    X(f32, ONYX_FLOAT32, float, float, ST_ID)   \
    X(f64, ONYX_FLOAT64, double, double, ST_ID) \
    X(f16, ONYX_FLOAT16, uint16_t, float, ST_H) \
    X(bf16, ONYX_BFLOAT16, uint16_t, float, ST_BT)
#define D_BF16R(X) X(bf16r, ONYX_BFLOAT16, uint16_t, float, ST_BR)
#define D_INT(X)                                   \
    X(i8, ONYX_INT8, int8_t, int8_t, ST_ID)        \
    X(i16, ONYX_INT16, int16_t, int16_t, ST_ID)    \
    X(i32, ONYX_INT32, int32_t, int32_t, ST_ID)    \
    X(i64, ONYX_INT64, int64_t, int64_t, ST_ID)    \
    X(u8, ONYX_UINT8, uint8_t, uint8_t, ST_ID)     \
    X(u16, ONYX_UINT16, uint16_t, uint16_t, ST_ID) \
    X(u32, ONYX_UINT32, uint32_t, uint32_t, ST_ID) \
    X(u64, ONYX_UINT64, uint64_t, uint64_t, ST_ID)
#define D_BOOL(X) X(b8, ONYX_BOOL, uint8_t, uint8_t, ST_ID)

#define CV_TOF(ss, SDT, TS, SLD, ds, DDT, TD, DC, DST) \
    CV_FN(cv_##ss##_##ds, TS, TD, DST((DC)SLD(x)))
#define CV_BTOF(ss, SDT, TS, SLD, ds, DDT, TD, DC, DST) \
    CV_FN(cv_##ss##_##ds, TS, TD, DST((DC)(x != 0)))
#define CV_F2I(ss, SDT, TS, SLD, ds, DDT, TD, DC, DST) \
    CV_FN(cv_##ss##_##ds, TS, TD, sat_##ds((double)SLD(x)))
#define CV_I2I(ss, SDT, TS, SLD, ds, DDT, TD, DC, DST) CV_FN(cv_##ss##_##ds, TS, TD, (TD)(x))
#define CV_B2I(ss, SDT, TS, SLD, ds, DDT, TD, DC, DST) CV_FN(cv_##ss##_##ds, TS, TD, (TD)(x != 0))
#define CV_TOB(ss, SDT, TS, SLD, ds, DDT, TD, DC, DST) \
    CV_FN(cv_##ss##_##ds, TS, TD, (uint8_t)(SLD(x) != 0))

#define OUT_TOF(ds, DDT, TD, DC, DST)     \
    S_FLOAT(CV_TOF, ds, DDT, TD, DC, DST) \
    S_INT(CV_TOF, ds, DDT, TD, DC, DST)   \
    S_BOOL(CV_BTOF, ds, DDT, TD, DC, DST)
#define OUT_TOI(ds, DDT, TD, DC, DST)     \
    S_FLOAT(CV_F2I, ds, DDT, TD, DC, DST) \
    S_INT(CV_I2I, ds, DDT, TD, DC, DST)   \
    S_BOOL(CV_B2I, ds, DDT, TD, DC, DST)
#define OUT_TOB(ds, DDT, TD, DC, DST)     \
    S_FLOAT(CV_TOB, ds, DDT, TD, DC, DST) \
    S_INT(CV_TOB, ds, DDT, TD, DC, DST)   \
    S_BOOL(CV_TOB, ds, DDT, TD, DC, DST)
D_FLOAT(OUT_TOF)
D_BF16R(OUT_TOF)
D_INT(OUT_TOI)
D_BOOL(OUT_TOB)

#define CV_ENT(ss, SDT, TS, SLD, ds, DDT, ...) [SDT][DDT] = cv_##ss##_##ds,
#define OUT_ENT(ds, DDT, TD, DC, DST)     \
    S_FLOAT(CV_ENT, ds, DDT, TD, DC, DST) \
    S_INT(CV_ENT, ds, DDT, TD, DC, DST)   \
    S_BOOL(CV_ENT, ds, DDT, TD, DC, DST)
static const ox_range_fn cast_tab[NDT][NDT] = {D_FLOAT(OUT_ENT) D_INT(OUT_ENT) D_BOOL(OUT_ENT)};
/* sources into bfloat16 with rounding (the other column of the table) */
#define CV_ENT_R(ss, SDT, TS, SLD, ds, DDT, ...) [SDT] = cv_##ss##_##ds,
#define OUT_ENT_R(ds, DDT, TD, DC, DST)     \
    S_FLOAT(CV_ENT_R, ds, DDT, TD, DC, DST) \
    S_INT(CV_ENT_R, ds, DDT, TD, DC, DST)   \
    S_BOOL(CV_ENT_R, ds, DDT, TD, DC, DST)
static const ox_range_fn cast_to_bf16r[NDT] = {D_BF16R(OUT_ENT_R)};

/* ====================================================================
 * Generic path: any pair with a narrow type on either side
 * ==================================================================== */

/* Sources read exactly as int64: every integer type, bool, int4/int2. */
static int int_like(ox_dtype t) {
    return ox_dtype_is_integer(t) || ox_dtype_is_narrow_int(t) || t == ONYX_BOOL;
}

/* Stores a float-valued element (v from a float-like source). */
static void store_from_float(const cast_job *j, size_t i, double v) {
    ox_dtype t = j->to;
    void *y = j->y;
    if (t == ONYX_FLOAT8E8M0) {
        ((uint8_t *)y)[i] = ox_float_to_e8m0(isnan(v) ? NAN : to_f32(v), j->saturate, j->mode);
    } else if (ox_dtype_is_narrow_float(t)) {
        ((uint8_t *)y)[i] = ox_float_to_narrow(t, v, j->saturate);
    } else if (ox_dtype_is_narrow_int(t)) {
        int64_t lo, hi;
        ox_narrow_int_range(t, &lo, &hi);
        double w = trunc(v);
        ((int8_t *)y)[i] = (int8_t)(w >= (double)lo && w <= (double)hi ? (int64_t)w : 0);
    } else {
        switch (t) {
        case ONYX_FLOAT32: ((float *)y)[i] = isnan(v) ? (float)v : to_f32(v); break;
        case ONYX_FLOAT64: ((double *)y)[i] = v; break;
        case ONYX_FLOAT16: ((uint16_t *)y)[i] = ox_float_to_half(isnan(v) ? (float)v : to_f32(v)); break;
        case ONYX_BFLOAT16: {
            float f = isnan(v) ? (float)v : to_f32(v);
            ((uint16_t *)y)[i] = j->bf16_rne ? ox_float_to_bf16(f) : bf16_trunc(f);
            break;
        }
        case ONYX_BOOL: ((uint8_t *)y)[i] = v != 0.0; break;
        case ONYX_INT8: ((int8_t *)y)[i] = sat_i8(v); break;
        case ONYX_INT16: ((int16_t *)y)[i] = sat_i16(v); break;
        case ONYX_INT32: ((int32_t *)y)[i] = sat_i32(v); break;
        case ONYX_INT64: ((int64_t *)y)[i] = sat_i64(v); break;
        case ONYX_UINT8: ((uint8_t *)y)[i] = sat_u8(v); break;
        case ONYX_UINT16: ((uint16_t *)y)[i] = sat_u16(v); break;
        case ONYX_UINT32: ((uint32_t *)y)[i] = sat_u32(v); break;
        case ONYX_UINT64: ((uint64_t *)y)[i] = sat_u64(v); break;
        default: break;
        }
    }
}

/* Stores an integer-valued element; is_u64: v holds uint64 bits. */
static void store_from_int(const cast_job *j, size_t i, int64_t v, int is_u64) {
    ox_dtype t = j->to;
    if (ox_dtype_is_narrow_int(t)) {
        ((int8_t *)j->y)[i] = ox_narrow_int_wrap(t, v);
    } else if (int_like(t)) {
        ox_set_i64(j->y, t, i, v); /* wraps, bool is v != 0 */
    } else {
        store_from_float(j, i, is_u64 ? (double)(uint64_t)v : (double)v);
    }
}

static void cast_generic(void *arg, int64_t b, int64_t e) {
    const cast_job *j = arg;
    ox_dtype from = j->from;
    if (int_like(from)) {
        int is_u64 = from == ONYX_UINT64;
        for (int64_t i = b; i < e; i++)
            store_from_int(j, (size_t)i, ox_get_i64(j->x, from, (size_t)i), is_u64);
    } else {
        for (int64_t i = b; i < e; i++)
            store_from_float(j, (size_t)i, ox_get_f64(j->x, from, (size_t)i));
    }
}

/* ====================================================================
 * Strings
 * ==================================================================== */

static int str_is(const char *s, const char *end, const char *word) {
    size_t n = strlen(word);
    return (size_t)(end - s) == n && strncasecmp(s, word, n) == 0;
}

/* Parses one string into element i of the output. Integers are read
 * exactly when the text is an integer; other text goes through double
 * (strtod reads "INF", "+INF", "-INF" and "NaN" in any case, as the spec
 * asks). */
static int parse_element(const cast_job *j, const char *s, size_t i) {
    ox_dtype t = j->to;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    const char *end = s + strlen(s);
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r'))
        end--;
    if (end == s) return -1;
    char *stop;
    if (t == ONYX_BOOL) {
        if (str_is(s, end, "true")) {
            ((uint8_t *)j->y)[i] = 1;
            return 0;
        }
        if (str_is(s, end, "false")) {
            ((uint8_t *)j->y)[i] = 0;
            return 0;
        }
    }
    if (int_like(t)) {
        errno = 0;
        if (t == ONYX_UINT64 && *s != '-') {
            unsigned long long u = strtoull(s, &stop, 10);
            if (stop == end && errno == 0) {
                ((uint64_t *)j->y)[i] = u;
                return 0;
            }
        } else {
            long long v = strtoll(s, &stop, 10);
            if (stop == end && errno == 0) {
                store_from_int(j, i, v, 0);
                return 0;
            }
        }
    }
    errno = 0;
    if (t == ONYX_FLOAT32 || t == ONYX_BFLOAT16) {
        /* strtof rounds once, straight from the text */
        float f = strtof(s, &stop);
        if (stop != end) return -1;
        if (t == ONYX_FLOAT32)
            ((float *)j->y)[i] = f;
        else
            ((uint16_t *)j->y)[i] = j->bf16_rne ? ox_float_to_bf16(f) : bf16_trunc(f);
        return 0;
    }
    double d = strtod(s, &stop);
    if (stop != end) return -1;
    store_from_float(j, i, d);
    return 0;
}

/* Does text read back as element i of x (type t)? */
static int reads_back(const char *text, const void *x, ox_dtype t, size_t i) {
    switch (t) {
    case ONYX_FLOAT64: return strtod(text, NULL) == ((const double *)x)[i];
    case ONYX_FLOAT32: return strtof(text, NULL) == ((const float *)x)[i];
    case ONYX_FLOAT16: return ox_float_to_half(strtof(text, NULL)) == ((const uint16_t *)x)[i];
    case ONYX_BFLOAT16: return ox_float_to_bf16(strtof(text, NULL)) == ((const uint16_t *)x)[i];
    default: /* narrow floats: every value is exact in double */
        return strtod(text, NULL) == ox_get_f64(x, t, i);
    }
}

/* Shortest plain text that reads back as the same value of its type. */
static void format_element(const void *x, ox_dtype t, size_t i, char *buf, size_t n) {
    if (ox_dtype_is_float(t) || ox_dtype_is_narrow_float(t)) {
        double v = ox_get_f64(x, t, i);
        if (isnan(v)) {
            snprintf(buf, n, "NaN");
            return;
        }
        if (isinf(v)) {
            snprintf(buf, n, v > 0 ? "INF" : "-INF");
            return;
        }
        for (int p = 1; p <= 17; p++) {
            snprintf(buf, n, "%.*g", p, v);
            if (reads_back(buf, x, t, i)) return;
        }
        return;
    }
    if (t == ONYX_UINT64)
        snprintf(buf, n, "%" PRIu64, ((const uint64_t *)x)[i]);
    else
        snprintf(buf, n, "%" PRId64, ox_get_i64(x, t, i));
}

/* ====================================================================
 * Kernel
 * ==================================================================== */

static int castable(ox_dtype t) {
    return ox_dtype_valid((int)t) && t != ONYX_COMPLEX64 && t != ONYX_COMPLEX128;
}

static int cast_tensor(ox_kernel_ctx *c, const ox_tensor *X, ox_tensor *Y) {
    const char *op = c->node->op_type;
    int64_t n = ox_tensor_numel(X);
    if (ox_tensor_numel(Y) != n)
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "%s: output size does not match input", op);
    ox_dtype from = X->dtype, to = Y->dtype;
    if (!castable(from) || !castable(to))
        return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "%s: cannot cast %s to %s", op,
                              ox_dtype_name(from), ox_dtype_name(to));
    const char *mode = ir_attr_string(c->node, "round_mode", "up");
    cast_job j = {X->data, Y->data, from, to, ir_attr_int(c->node, "saturate", 1) != 0,
                  strcmp(mode, "down") == 0      ? OX_ROUND_DOWN
                  : strcmp(mode, "nearest") == 0 ? OX_ROUND_NEAREST
                                                 : OX_ROUND_UP,
                  ox_op_since_version(c->node->domain, c->node->op_type, c->node->opset) >= 19};
    if (n == 0) return 0;
    if (from == ONYX_STRING && to == ONYX_STRING) {
        char *const *src = X->data;
        char **dst = Y->data;
        for (int64_t i = 0; i < n; i++) {
            char *dup = strdup(src[i] ? src[i] : "");
            if (!dup) return ox_kernel_fail(c, ONYX_OUT_OF_MEMORY, "%s: out of memory", op);
            free(dst[i]);
            dst[i] = dup;
        }
        return 0;
    }
    if (from == ONYX_STRING) {
        char *const *src = X->data;
        for (int64_t i = 0; i < n; i++)
            if (parse_element(&j, src[i] ? src[i] : "", (size_t)i) != 0)
                return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                                      "%s: string \"%.64s\" (element %" PRId64
                                      ") is not a number of type %s",
                                      op, src[i] ? src[i] : "", i, ox_dtype_name(to));
        return 0;
    }
    if (to == ONYX_STRING) {
        char **dst = Y->data;
        char buf[64];
        for (int64_t i = 0; i < n; i++) {
            format_element(X->data, from, (size_t)i, buf, sizeof buf);
            char *dup = strdup(buf);
            if (!dup) return ox_kernel_fail(c, ONYX_OUT_OF_MEMORY, "%s: out of memory", op);
            free(dst[i]);
            dst[i] = dup;
        }
        return 0;
    }
    if (from == to) {
        memcpy(Y->data, X->data, (size_t)n * ox_dtype_size(from));
        return 0;
    }
    ox_range_fn fn = cast_generic;
    if (from < NDT && to < NDT)
        fn = to == ONYX_BFLOAT16 && j.bf16_rne ? cast_to_bf16r[from] : cast_tab[from][to];
    if (!fn) /* a classic pair the tables lack (complex was refused above) */
        fn = cast_generic;
    ox_parallel_for(c->pool, n, GRAIN, fn, &j);
    return 0;
}

static int k_cast(ox_kernel_ctx *c) {
    if (c->n_inputs < 1 || !c->inputs[0] || !c->outputs[0])
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: missing input or output",
                              c->node->op_type);
    return cast_tensor(c, c->inputs[0], c->outputs[0]);
}

static int input_castable(const ir_type *const *in, int n, int i) {
    if (i >= n || !in[i]) return 1;
    if (in[i]->kind != OX_KIND_TENSOR) return 0;
    return in[i]->dtype == ONYX_UNDEFINED || castable(in[i]->dtype);
}

static int s_cast(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    return input_castable(in, n, 0);
}

static int s_castlike(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    return input_castable(in, n, 0) && input_castable(in, n, 1);
}

static const ox_kernel_def KERNELS[] = {
    {"", "Cast", 1, 28, k_cast, s_cast, NULL, NULL, NULL},
    {"", "CastLike", 15, 25, k_cast, s_castlike, NULL, NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_cast = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
