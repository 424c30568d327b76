/* Corners of the elementwise, reduce and normalization operators that the
 * ONNX node suite leaves out, through the public API: BitShift-28 on
 * signed types at the extremes, Mod-28's signed zeros, bool ReduceMax/Min,
 * CumProd, GroupNormalization's two scale layouts, RMSNormalization's
 * broadcasting and mixed types, LpNormalization with p = 1 on negative
 * values (where the ONNX reference forgets the absolute value), BitCast
 * on sub-byte and float8 types, IsNaN/IsInf on float8, Where's scalar and
 * row broadcasts, and the errors of malformed nodes. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ep/cpu/kernels/activation.h"
#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/elementwise.h"
#include "model_builder.h"

#define F32 ONYX_FLOAT32
#define F16 ONYX_FLOAT16
#define I64 ONYX_INT64
#define I8 ONYX_INT8
#define U8 ONYX_UINT8
#define BOOL ONYX_BOOL

#define I64S(...) ((const int64_t[]){__VA_ARGS__})
#define I8S(...) ((const int8_t[]){__VA_ARGS__})
#define F32S(...) ((const float[]){__VA_ARGS__})
#define U8S(...) ((const uint8_t[]){__VA_ARGS__})

static onyx_env *env;

typedef struct arg {
    onyx_dtype dt;
    int rank;
    int64_t dims[4];
    const void *data;
} arg;

#define IN(dt, data, rank, ...) ((arg){(dt), (rank), {__VA_ARGS__}, (data)})
#define ARGS(...) ((const arg[]){__VA_ARGS__}), (int)(sizeof((const arg[]){__VA_ARGS__}) / sizeof(arg))

/* A model of one node `op` at `opset` reading i0, i1, ... and writing o0. */
static mb_model *one_op(int64_t opset, const char *op, const char *inputs) {
    mb_model *m = mb_new(opset);
    mb_node(m, op, inputs, "o0");
    return m;
}

/* Runs m once (then frees it); inputs declare their shapes so that load
 * time inference sees them. */
static onyx_status *run(mb_model *m, const arg *in, int n_in, onyx_dtype out_dt, onyx_tensor **out) {
    static const char *const in_names[] = {"i0", "i1", "i2"};
    static const char *const out_name = "o0";
    for (int i = 0; i < n_in; i++) mb_input(m, in_names[i], in[i].dt, in[i].dims, in[i].rank);
    mb_output(m, out_name, out_dt, NULL, -1);
    *out = NULL;
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *s = NULL;
    onyx_status *st = onyx_session_create_from_buffer(env, buf, len, NULL, &s);
    free(buf);
    if (st) return st;
    onyx_tensor *t[3] = {0};
    for (int i = 0; i < n_in && !st; i++) {
        st = onyx_tensor_create(in[i].dt, in[i].dims, in[i].rank, &t[i]);
        if (!st && onyx_tensor_nbytes(t[i])) memcpy(onyx_tensor_data(t[i]), in[i].data, onyx_tensor_nbytes(t[i]));
    }
    if (!st) st = onyx_session_run(s, in_names, (const onyx_tensor *const *)t, (size_t)n_in, &out_name, out, 1);
    for (int i = 0; i < n_in; i++) onyx_tensor_free(t[i]);
    onyx_session_free(s);
    return st;
}

/* Output bytes equal `want` (n elements of the output's type). */
static int bytes_are(onyx_tensor *t, onyx_dtype dt, const void *want, int64_t n) {
    if (!t || onyx_tensor_dtype(t) != dt || onyx_tensor_numel(t) != n) {
        fprintf(stderr, "  wrong output type or size\n");
        return 0;
    }
    if (memcmp(onyx_tensor_data(t), want, onyx_tensor_nbytes(t)) != 0) {
        fprintf(stderr, "  output bytes differ\n");
        return 0;
    }
    return 1;
}

static int near_f32(onyx_tensor *t, const float *want, int64_t n, double tol) {
    if (!t || onyx_tensor_dtype(t) != F32 || onyx_tensor_numel(t) != n) return 0;
    const float *d = onyx_tensor_data(t);
    for (int64_t i = 0; i < n; i++)
        if (!(fabs((double)d[i] - want[i]) <= tol)) {
            fprintf(stderr, "  element %lld is %.9g, expected %.9g\n", (long long)i, d[i], want[i]);
            return 0;
        }
    return 1;
}

#define DONE(o)              \
    do {                     \
        onyx_tensor_free(o); \
        o = NULL;            \
    } while (0)

static mb_model *bitshift(const char *dir) {
    mb_model *m = one_op(28, "BitShift", "i0,i1");
    mb_attr_string(m, "direction", dir);
    return m;
}

static void test_bitshift(void) {
    onyx_tensor *o;
    /* arithmetic right shift; counts < 0 or >= 64 leave only the sign fill */
    CHECK_OK(run(bitshift("RIGHT"),
                 ARGS(IN(I64, I64S(INT64_MIN, -1, 5, INT64_MAX, -8, -8), 1, 6),
                      IN(I64, I64S(63, 64, -1, 62, 3, 100), 1, 6)), I64, &o));
    CHECK(bytes_are(o, I64, I64S(-1, -1, 0, 1, -1, -1), 6));
    DONE(o);
    /* left: bits past the sign are dropped */
    CHECK_OK(run(bitshift("LEFT"),
                 ARGS(IN(I64, I64S(INT64_MIN, -1, 5, INT64_MAX, 1, 3), 1, 6),
                      IN(I64, I64S(1, 63, -1, 1, 63, 64), 1, 6)), I64, &o));
    CHECK(bytes_are(o, I64, I64S(0, INT64_MIN, 0, -2, INT64_MIN, 0), 6));
    DONE(o);
    CHECK_OK(run(bitshift("RIGHT"), ARGS(IN(I8, I8S(-128, -128, 64, -3), 1, 4), IN(I8, I8S(7, 8, 6, -1), 1, 4)),
                 I8, &o));
    CHECK(bytes_are(o, I8, I8S(-1, -1, 1, -1), 4));
    DONE(o);
    /* signed types arrived with version 28 */
    mb_model *m = one_op(18, "BitShift", "i0,i1");
    mb_attr_string(m, "direction", "LEFT");
    CHECK_FAILS(run(m, ARGS(IN(I8, I8S(1), 1, 1), IN(I8, I8S(1), 1, 1)), I8, &o), ONYX_INVALID_MODEL,
                "input 0 has type int8");
    DONE(o);
}

static void test_mod(void) {
    onyx_tensor *o;
    /* a zero result takes the divisor's sign; x mod inf is x or inf */
    CHECK_OK(run(one_op(28, "Mod", "i0,i1"),
                 ARGS(IN(F32, F32S(-0.0f, 0.0f, 4, -4, 1, -1, INFINITY, 2), 1, 8),
                      IN(F32, F32S(3, -3, -2, 2, -INFINITY, INFINITY, 2, 0), 1, 8)), F32, &o));
    if (o && onyx_tensor_numel(o) == 8) {
        const float *d = onyx_tensor_data(o);
        CHECK(d[0] == 0 && !signbit(d[0]));
        CHECK(d[1] == 0 && signbit(d[1]));
        CHECK(d[2] == 0 && signbit(d[2]));
        CHECK(d[3] == 0 && !signbit(d[3]));
        CHECK(d[4] == -INFINITY && d[5] == INFINITY);
        CHECK(isnan(d[6]) && isnan(d[7]));
    } else {
        CHECK(!"Mod output");
    }
    DONE(o);
    mb_model *m = one_op(28, "Mod", "i0,i1");
    mb_attr_int(m, "fmod", 1);
    CHECK_OK(run(m, ARGS(IN(F32, F32S(-7, 7, 3.5f), 1, 3), IN(F32, F32S(3, -3, INFINITY), 1, 3)), F32, &o));
    CHECK(near_f32(o, F32S(-1, 1, 3.5f), 3, 0));
    DONE(o);
    /* INT64_MIN mod -1 is 0, not a trap */
    CHECK_OK(run(one_op(28, "Mod", "i0,i1"), ARGS(IN(I64, I64S(INT64_MIN, -7), 1, 2), IN(I64, I64S(-1, 3), 1, 2)),
                 I64, &o));
    CHECK(bytes_are(o, I64, I64S(0, 2), 2));
    DONE(o);
}

static void test_reduce(void) {
    onyx_tensor *o;
    mb_model *m = one_op(20, "ReduceMin", "i0,i1");
    mb_attr_int(m, "keepdims", 0);
    CHECK_OK(run(m, ARGS(IN(BOOL, U8S(1, 0, 1, 1), 2, 2, 2), IN(I64, I64S(1), 1, 1)), BOOL, &o));
    CHECK(bytes_are(o, BOOL, U8S(0, 1), 2));
    DONE(o);
    /* "all" of nothing is true, "any" of nothing false */
    m = one_op(20, "ReduceMin", "i0,i1");
    mb_attr_int(m, "keepdims", 0);
    CHECK_OK(run(m, ARGS(IN(BOOL, NULL, 2, 2, 0), IN(I64, I64S(1), 1, 1)), BOOL, &o));
    CHECK(bytes_are(o, BOOL, U8S(1, 1), 2));
    DONE(o);
    m = one_op(20, "ReduceMax", "i0,i1");
    mb_attr_int(m, "keepdims", 0);
    CHECK_OK(run(m, ARGS(IN(BOOL, NULL, 2, 2, 0), IN(I64, I64S(1), 1, 1)), BOOL, &o));
    CHECK(bytes_are(o, BOOL, U8S(0, 0), 2));
    DONE(o);
    CHECK_FAILS(run(one_op(18, "ReduceMax", "i0"), ARGS(IN(BOOL, U8S(1), 1, 1)), BOOL, &o), ONYX_INVALID_MODEL,
                "which needs ReduceMax-20");
    DONE(o);
    CHECK_FAILS(run(one_op(28, "ReduceLogSum", "i0"), ARGS(IN(I64, I64S(1), 1, 1)), I64, &o), ONYX_INVALID_MODEL,
                "expected a floating-point type");
    DONE(o);
    /* float32 over the innermost axes (the contiguous runs' path): a NaN
     * anywhere in a run makes its maximum and minimum NaN, infinities
     * win, and means and sums of whole runs */
    static const float rows[15] = {3, -1, 7, 2, 5, 1, NAN, 9, -4, 0, -INFINITY, 4, INFINITY, 2, -3};
    static const char *const ext[2] = {"ReduceMax", "ReduceMin"};
    for (int e = 0; e < 2; e++) {
        m = one_op(18, ext[e], "i0,i1");
        mb_attr_int(m, "keepdims", 0);
        CHECK_OK(run(m, ARGS(IN(F32, rows, 2, 3, 5), IN(I64, I64S(-1), 1, 1)), F32, &o));
        const float *d = o && onyx_tensor_numel(o) == 3 ? onyx_tensor_data(o) : NULL;
        CHECK(d && d[0] == (e ? -1.0f : 7.0f) && isnan(d[1]) && d[2] == (e ? -INFINITY : INFINITY));
        DONE(o);
    }
    m = one_op(18, "ReduceMean", "i0,i1");
    CHECK_OK(run(m, ARGS(IN(F32, F32S(1, 2, 3, 4, 5, 6, -6, -5, -4, -3, -2, 10), 3, 2, 2, 3), IN(I64, I64S(1, 2), 1, 2)),
                 F32, &o));
    CHECK(near_f32(o, F32S(3.5f, -10.0f / 6.0f), 2, 1e-6));
    DONE(o);
    m = one_op(18, "ReduceSum", "i0,i1");
    CHECK_OK(run(m, ARGS(IN(F32, F32S(1, 2, 3, 4, 5, 6, -6, -5, -4, -3, -2, 10), 3, 2, 2, 3), IN(I64, I64S(-1), 1, 1)),
                 F32, &o));
    CHECK(near_f32(o, F32S(6, 15, -15, 5), 4, 0));
    DONE(o);
    /* noop_with_empty_axes with an empty axes input passes X through */
    m = one_op(18, "ReduceSum", "i0,i1");
    mb_attr_int(m, "noop_with_empty_axes", 1);
    CHECK_OK(run(m, ARGS(IN(F32, F32S(1, 2, 3), 1, 3), IN(I64, NULL, 1, 0)), F32, &o));
    CHECK(near_f32(o, F32S(1, 2, 3), 3, 0));
    DONE(o);
}

static void test_cumprod(void) {
    onyx_tensor *o;
    mb_model *m = one_op(26, "CumProd", "i0,i1");
    mb_attr_int(m, "exclusive", 1);
    mb_attr_int(m, "reverse", 1);
    CHECK_OK(run(m, ARGS(IN(F32, F32S(1, 2, 3, 4, 5, 6), 2, 2, 3), IN(I64, I64S(-1), 0, 0)), F32, &o));
    CHECK(near_f32(o, F32S(6, 3, 1, 30, 6, 1), 6, 0));
    DONE(o);
    /* integer products wrap */
    CHECK_OK(run(one_op(26, "CumProd", "i0,i1"), ARGS(IN(I64, I64S(INT64_MAX, 3), 1, 2), IN(I64, I64S(0), 0, 0)),
                 I64, &o));
    CHECK(bytes_are(o, I64, I64S(INT64_MAX, (int64_t)((uint64_t)INT64_MAX * 3u)), 2));
    DONE(o);
    CHECK_FAILS(run(one_op(26, "CumProd", "i0,i1"), ARGS(IN(F32, F32S(1, 2), 1, 2), IN(I64, I64S(1), 0, 0)), F32,
                    &o),
                ONYX_INVALID_ARGUMENT, "out of range");
    DONE(o);
}

static mb_model *groupnorm(int64_t opset, int64_t groups) {
    mb_model *m = one_op(opset, "GroupNormalization", "i0,i1,i2");
    mb_attr_int(m, "num_groups", groups);
    mb_attr_float(m, "epsilon", 0.0f);
    return m;
}

static void test_groupnorm(void) {
    onyx_tensor *o;
    /* X [1, 4, 2]: groups {c0, c1} and {c2, c3}, each normalizes to -a, a */
    static const float x[8] = {0, 0, 2, 2, 1, 1, 3, 3};
    /* version 18: one scale/bias per group */
    CHECK_OK(run(groupnorm(18, 2), ARGS(IN(F32, x, 3, 1, 4, 2), IN(F32, F32S(1, 2), 1, 2), IN(F32, F32S(0, 10), 1, 2)),
                 F32, &o));
    CHECK(near_f32(o, F32S(-1, -1, 1, 1, 8, 8, 12, 12), 8, 1e-6));
    DONE(o);
    /* version 21: one per channel */
    CHECK_OK(run(groupnorm(21, 2),
                 ARGS(IN(F32, x, 3, 1, 4, 2), IN(F32, F32S(1, 2, 3, 4), 1, 4), IN(F32, F32S(0, 0, 0, 1), 1, 4)), F32,
                 &o));
    CHECK(near_f32(o, F32S(-1, -1, 2, 2, -3, -3, 5, 5), 8, 1e-6));
    DONE(o);
    CHECK_FAILS(run(groupnorm(21, 3),
                    ARGS(IN(F32, x, 3, 1, 4, 2), IN(F32, F32S(1, 1, 1, 1), 1, 4), IN(F32, F32S(0, 0, 0, 0), 1, 4)),
                    F32, &o),
                ONYX_INVALID_MODEL, "4 channels do not split into 3 groups");
    DONE(o);
    CHECK_FAILS(run(groupnorm(21, 2), ARGS(IN(F32, x, 3, 1, 4, 2), IN(F32, F32S(1, 1), 1, 2), IN(F32, F32S(0, 0), 1, 2)),
                    F32, &o),
                ONYX_INVALID_MODEL, "one per channel");
    DONE(o);
}

static void test_rmsnorm(void) {
    onyx_tensor *o;
    /* rows [3, 4] and [0, 0]: rms 5/sqrt(2) and 0; the scale varies along
     * the leading (not normalized) axis */
    mb_model *m = one_op(23, "RMSNormalization", "i0,i1");
    mb_attr_float(m, "epsilon", 0.0f);
    CHECK_OK(run(m, ARGS(IN(F32, F32S(3, 4, 1, 1), 2, 2, 2), IN(F32, F32S(1, 2), 2, 2, 1)), F32, &o));
    const float r = sqrtf(2.0f) / 5.0f;
    CHECK(near_f32(o, F32S(3 * r, 4 * r, 2, 2), 4, 1e-6));
    DONE(o);
    /* float16 X with a float32 scale gives float16, as ONNX's inference says */
    static const uint16_t h[2] = {0x4200, 0x4400}; /* 3, 4 */
    CHECK_OK(run(one_op(23, "RMSNormalization", "i0,i1"), ARGS(IN(F16, h, 1, 2), IN(F32, F32S(1, 1), 1, 2)), F16, &o));
    CHECK(o && onyx_tensor_dtype(o) == F16);
    DONE(o);
    CHECK_FAILS(run(one_op(23, "RMSNormalization", "i0,i1"), ARGS(IN(F32, F32S(1, 2), 1, 2), IN(F32, F32S(1, 2, 3), 1, 3)),
                    F32, &o),
                ONYX_INVALID_MODEL, "scale does not broadcast to X");
    DONE(o);
}

static void test_lpnorm(void) {
    onyx_tensor *o;
    mb_model *m = one_op(22, "LpNormalization", "i0");
    mb_attr_int(m, "p", 1);
    mb_attr_int(m, "axis", 0);
    CHECK_OK(run(m, ARGS(IN(F32, F32S(1, -2, 0, 3, 4, 0), 2, 2, 3)), F32, &o));
    CHECK(near_f32(o, F32S(0.25f, -1.0f / 3, 0, 0.75f, 2.0f / 3, 0), 6, 1e-7));
    DONE(o);
    CHECK_OK(run(one_op(22, "LpNormalization", "i0"), ARGS(IN(F32, F32S(3, -4, 0, 0), 2, 2, 2)), F32, &o));
    CHECK(near_f32(o, F32S(0.6f, -0.8f, 0, 0), 4, 1e-7));
    DONE(o);
    m = one_op(22, "LpNormalization", "i0");
    mb_attr_int(m, "p", 3);
    CHECK_FAILS(run(m, ARGS(IN(F32, F32S(1), 1, 1)), F32, &o), ONYX_INVALID_MODEL, "p must be 1 or 2, got 3");
    DONE(o);
}

static mb_model *bitcast(int64_t to) {
    mb_model *m = one_op(26, "BitCast", "i0");
    mb_attr_int(m, "to", to);
    return m;
}

static void test_bitcast(void) {
    onyx_tensor *o;
    /* int4 is held sign-extended, one per byte: its 4 bits read as uint4 */
    CHECK_OK(run(bitcast(ONYX_UINT4), ARGS(IN(ONYX_INT4, I8S(-8, -1, 0, 7), 1, 4)), ONYX_UINT4, &o));
    CHECK(bytes_are(o, ONYX_UINT4, U8S(8, 15, 0, 7), 4));
    DONE(o);
    CHECK_OK(run(bitcast(ONYX_INT4), ARGS(IN(ONYX_UINT4, U8S(8, 15, 0, 7), 1, 4)), ONYX_INT4, &o));
    CHECK(bytes_are(o, ONYX_INT4, I8S(-8, -1, 0, 7), 4));
    DONE(o);
    CHECK_OK(run(bitcast(ONYX_FLOAT8E5M2), ARGS(IN(U8, U8S(0x7c, 0x3c), 1, 2)), ONYX_FLOAT8E5M2, &o));
    CHECK(bytes_are(o, ONYX_FLOAT8E5M2, U8S(0x7c, 0x3c), 2));
    DONE(o);
    CHECK_OK(run(bitcast(I64), ARGS(IN(ONYX_FLOAT64, ((const double[]){1.0}), 1, 1)), I64, &o));
    CHECK(bytes_are(o, I64, I64S(0x3ff0000000000000), 1));
    DONE(o);
    CHECK_FAILS(run(bitcast(I64), ARGS(IN(F32, F32S(1), 1, 1)), I64, &o), ONYX_INVALID_MODEL,
                "float32 is 32 bits but int64 is 64 bits");
    DONE(o);
    CHECK_FAILS(run(bitcast(ONYX_STRING), ARGS(IN(F32, F32S(1), 1, 1)), ONYX_STRING, &o), ONYX_INVALID_MODEL,
                "cannot reinterpret as string");
    DONE(o);
}

static void test_float8_classes(void) {
    onyx_tensor *o;
    /* E5M2: +inf 0x7c, -inf 0xfc, NaN 0x7d / 0xff, 1.0 0x3c */
    static const uint8_t x[5] = {0x7c, 0xfc, 0x7d, 0xff, 0x3c};
    CHECK_OK(run(one_op(20, "IsNaN", "i0"), ARGS(IN(ONYX_FLOAT8E5M2, x, 1, 5)), BOOL, &o));
    CHECK(bytes_are(o, BOOL, U8S(0, 0, 1, 1, 0), 5));
    DONE(o);
    mb_model *m = one_op(20, "IsInf", "i0");
    mb_attr_int(m, "detect_positive", 0);
    CHECK_OK(run(m, ARGS(IN(ONYX_FLOAT8E5M2, x, 1, 5)), BOOL, &o));
    CHECK(bytes_are(o, BOOL, U8S(0, 1, 0, 0, 0), 5));
    DONE(o);
    /* E4M3FN has no infinity; 0x7f and 0xff are NaN */
    static const uint8_t y[3] = {0x7f, 0xff, 0x7e};
    CHECK_OK(run(one_op(20, "IsNaN", "i0"), ARGS(IN(ONYX_FLOAT8E4M3FN, y, 1, 3)), BOOL, &o));
    CHECK(bytes_are(o, BOOL, U8S(1, 1, 0), 3));
    DONE(o);
    CHECK_FAILS(run(one_op(13, "IsNaN", "i0"), ARGS(IN(ONYX_FLOAT8E4M3FN, y, 1, 3)), BOOL, &o), ONYX_INVALID_MODEL,
                "input 0 has type float8e4m3fn");
    DONE(o);
}

static void test_activations(void) {
    onyx_tensor *o;
    mb_model *m = one_op(20, "Gelu", "i0");
    mb_attr_string(m, "approximate", "fast");
    CHECK_FAILS(run(m, ARGS(IN(F32, F32S(1), 1, 1)), F32, &o), ONYX_INVALID_MODEL,
                "approximate must be \"none\" or \"tanh\"");
    DONE(o);
    /* Mish and Swish stay finite far out */
    CHECK_OK(run(one_op(22, "Mish", "i0"), ARGS(IN(F32, F32S(-1000, 1000, 0), 1, 3)), F32, &o));
    CHECK(near_f32(o, F32S(0, 1000, 0), 3, 1e-6));
    DONE(o);
    m = one_op(24, "Swish", "i0");
    mb_attr_float(m, "alpha", 0.5f);
    CHECK_OK(run(m, ARGS(IN(F32, F32S(-1000, 1000, 2), 1, 3)), F32, &o));
    CHECK(near_f32(o, F32S(0, 1000, 2.0f / (1.0f + expf(-1.0f))), 3, 1e-5));
    DONE(o);
}

/* fast_erff and fast_gelu (elementwise.h) against double erf over
 * [-8, 8]: erf within 5e-7 absolute and 1e-6 relative below 0.5, where
 * it is small; GELU within 2e-6 relative for x >= -4 and 1e-5 in its far
 * negative tail (computed from erfc, so 1 + erf(z) does not cancel; what
 * is left is the rounding of z^2 inside e^(-z^2)); erf odd,
 * exact at 0, +-1 and NaN for infinities and NaN. */
static void test_fast_erf(void) {
    double worst = 0, worst_rel = 0, worst_gelu = 0, worst_tail = 0;
    for (int i = -80000; i <= 80000; i++) {
        float x = (float)i * 1e-4f;
        double want = erf((double)x), got = fast_erff(x);
        if (fabs(got - want) > worst) worst = fabs(got - want);
        if (fabsf(x) < 0.5f && x != 0 && fabs(got - want) / fabs(want) > worst_rel)
            worst_rel = fabs(got - want) / fabs(want);
        CHECK(fast_erff(-x) == -got);
        double g = 0.5 * x * erfc(-(double)x * 0.70710678118654752440);
        double rel = x != 0 ? fabs(fast_gelu(x) - g) / fabs(g) : 0;
        if (x >= -4.0f && rel > worst_gelu) worst_gelu = rel;
        if (x < -4.0f && rel > worst_tail) worst_tail = rel;
    }
    printf("fast_erff: max |diff| %.3g over [-8, 8], max relative %.3g below 0.5; fast_gelu: max "
           "relative %.3g (x >= -4), %.3g (x < -4)\n", worst, worst_rel, worst_gelu, worst_tail);
    CHECK(worst <= 5e-7);
    CHECK(worst_rel <= 1e-6);
    CHECK(worst_gelu <= 2e-6);
    CHECK(worst_tail <= 1e-5);
    CHECK(fast_erff(0.0f) == 0.0f && fast_erff(1e-30f) > 0.0f && fast_gelu(0.0f) == 0.0f);
    CHECK(fast_erff(INFINITY) == 1.0f && fast_erff(-INFINITY) == -1.0f);
    CHECK(isnan(fast_erff(NAN)) && isnan(fast_gelu(NAN)));
}

/* The GELU activation rows (ox_act_bias_rows: Gelu, BiasGelu and the
 * fused products' epilogues) under every instruction set this machine
 * has, over the same sweep as test_fast_erf with a ragged end: within
 * fast_gelu's bounds of the exact GELU; the AVX2 and AVX-512 rows (the
 * FMA forms of exp_fma_avx2.h) give the same bits; NaN stays NaN, 0 and
 * +inf stay themselves; com.microsoft.Gelu, computed in shares, gives the
 * same bits as one row. */
static void test_gelu_rows(void) {
    enum { N = 160001 + 3 };
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N), *fma8 = malloc(sizeof(float) * N);
    if (!x || !y || !fma8) {
        check_failures++;
        goto out;
    }
    for (int i = 0; i < N - 3; i++) x[i] = (float)(i - 80000) * 1e-4f;
    x[N - 3] = NAN;
    x[N - 2] = INFINITY;
    x[N - 1] = -0.0f;
    const ox_act gelu = {OX_ACT_GELU, 0.0f, 0.0f};
    static const char *const names[] = {"portable", "avx2", "avx512"};
    for (int isa = OX_ISA_PORTABLE; isa <= (int)ox_cpu_isa_best(); isa++) {
        memcpy(y, x, sizeof(float) * N);
        ox_act_bias_rows(&gelu, y, 1, N, N, NULL, (ox_cpu_isa)isa);
        double worst = 0, worst_tail = 0;
        for (int i = 0; i < N - 3; i++) {
            double g = 0.5 * x[i] * erfc(-(double)x[i] * 0.70710678118654752440);
            double rel = x[i] != 0 ? fabs(y[i] - g) / fabs(g) : fabs(y[i]);
            if (x[i] >= -4.0f && rel > worst) worst = rel;
            if (x[i] < -4.0f && rel > worst_tail) worst_tail = rel;
        }
        printf("GELU rows %s: max relative %.3g (x >= -4), %.3g (x < -4)\n", names[isa], worst, worst_tail);
        CHECK(worst <= 2e-6 && worst_tail <= 1e-5);
        CHECK(isnan(y[N - 3]) && y[N - 2] == INFINITY && y[N - 1] == 0.0f);
        if (isa == OX_ISA_AVX2) memcpy(fma8, y, sizeof(float) * N);
        if (isa == OX_ISA_AVX512) CHECK(memcmp(fma8, y, sizeof(float) * (N - 3)) == 0);
    }
    /* com.microsoft.Gelu in shares over the session's pool (one per core:
     * ragged shares on a machine with two or more) gives the bits of one
     * row over the whole tensor */
    {
        enum { G = 10007 };
        memcpy(y, x, sizeof(float) * G);
        ox_act_bias_rows(&gelu, y, 1, G, G, NULL, ox_cpu_isa_active());
        mb_model *m = one_op(17, "Gelu", "i0");
        mb_domain(m, "com.microsoft", 1);
        onyx_tensor *o;
        CHECK_OK(run(m, ARGS(IN(F32, x, 1, G)), F32, &o));
        CHECK(o && onyx_tensor_numel(o) == G && memcmp(onyx_tensor_data(o), y, sizeof(float) * G) == 0);
        DONE(o);
    }
out:
    free(x);
    free(y);
    free(fma8);
}

/* One float32 unary node over x[0, n) under instruction set isa (the
 * ONYX_CPU_ISA cap, read by the kernels on every run); the result in y.
 * alpha < 0: the node has no alpha attribute. */
static int run_unary_isa(const char *op, int64_t opset, float alpha, const float *x, int64_t n,
                         const char *isa, float *y) {
    setenv("ONYX_CPU_ISA", isa, 1);
    mb_model *m = one_op(opset, op, "i0");
    if (alpha >= 0) mb_attr_float(m, "alpha", alpha);
    onyx_tensor *o = NULL;
    onyx_status *st = run(m, ARGS(IN(F32, x, 1, n)), F32, &o);
    unsetenv("ONYX_CPU_ISA");
    int ok = st == NULL && o && onyx_tensor_numel(o) == n;
    if (st) {
        fprintf(stderr, "  %s under %s: %s\n", op, isa, onyx_status_message(st));
        onyx_status_free(st);
    }
    if (ok) memcpy(y, onyx_tensor_data(o), sizeof(float) * (size_t)n);
    onyx_tensor_free(o);
    return ok;
}

/* Distance in units in the last place of float between got and the
 * double want (at want's magnitude; normal range) */
static double ulps(float got, double want) {
    if (isnan(want)) return isnan(got) ? 0 : INFINITY;
    if (isinf(want) || want == 0) return (double)got == want ? 0 : INFINITY;
    int e;
    frexp(want, &e);
    return fabs((double)got - want) / ldexp(1.0, e - 24);
}

typedef struct unary_case {
    const char *op;
    int64_t opset;
    float alpha;    /* < 0: no attribute */
    double (*ref)(double x, double alpha);
    double max_ulps; /* against ref; 0: ref rounded to float exactly */
    double abs_tol;  /* or within this absolute distance (erf near its zeros of float) */
    int same_bits;   /* portable, AVX2 and AVX-512 give the same bits */
    double tail_ulps; /* if set, the bound below x = -4 (GELU's tail, where
                         z^2 rounded inside e^(-z^2) costs up to 2.5e-5
                         relative before the result underflows) */
} unary_case;

static double r_exp(double x, double a) { (void)a; return exp(x); }
static double r_erf(double x, double a) { (void)a; return erf(x); }
static double r_tanh(double x, double a) { (void)a; return tanh(x); }
static double r_sigmoid(double x, double a) { (void)a; return 1 / (1 + exp(-x)); }
static double r_swish(double x, double a) { return x / (1 + exp(-a * x)); }
static double r_gelu(double x, double a) { (void)a; return 0.5 * x * erfc(-x * 0.70710678118654752440); }
static double r_sqrt(double x, double a) { (void)a; return sqrt(x); }
static double r_recip(double x, double a) { (void)a; return 1 / x; }
static double r_floor(double x, double a) { (void)a; return floor(x); }
static double r_ceil(double x, double a) { (void)a; return ceil(x); }
static double r_round(double x, double a) { (void)a; return nearbyint(x); }
static double r_softsign(double x, double a) { (void)a; return x / (1 + fabs(x)); }
static double r_leaky(double x, double a) { return x < 0 ? (double)((float)a * (float)x) : x; }

/* The float32 unary operators that run at the machine's vector width
 * (their loops compiled per instruction set, or the activation rows),
 * under every instruction set this machine has, over [-30, 30] in steps
 * of 1e-3 plus NaN, the infinities, -0, halves (Round), tiny and huge
 * values, with a ragged end: each within its bound of the double result
 * (exact where the float operation rounds once); the loops compiled per
 * instruction set give the same bits under each, the activation rows the
 * same bits under AVX2 and AVX-512. */
static void test_unary_isa(void) {
    enum { SWEEP = 60001, N = SWEEP + 10 };
    static const unary_case cases[] = {
        {"Exp", 13, -1, r_exp, 2, 0, 0, 0},
        {"Erf", 13, -1, r_erf, 0, 5e-7, 0, 0},
        {"Tanh", 13, -1, r_tanh, 3, 0, 0, 0},
        {"Sigmoid", 13, -1, r_sigmoid, 4, 0, 0, 0},
        {"Swish", 24, 0.5f, r_swish, 4, 0, 1, 0},
        {"Gelu", 20, -1, r_gelu, 34, 0, 0, 420},
        {"Sqrt", 13, -1, r_sqrt, 0, 0, 1, 0},
        {"Reciprocal", 13, -1, r_recip, 0, 0, 1, 0},
        {"Floor", 13, -1, r_floor, 0, 0, 1, 0},
        {"Ceil", 13, -1, r_ceil, 0, 0, 1, 0},
        {"Round", 22, -1, r_round, 0, 0, 1, 0},
        {"Softsign", 22, -1, r_softsign, 2, 0, 1, 0},
        {"LeakyRelu", 16, 0.1f, r_leaky, 0, 0, 1, 0},
    };
    static const char *const isas[] = {"portable", "avx2", "avx512"};
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N), *first = malloc(sizeof(float) * N);
    if (!x || !y || !first) {
        check_failures++;
        goto out;
    }
    for (int i = 0; i < SWEEP; i++) x[i] = (float)(i - SWEEP / 2) * 1e-3f;
    const float extra[] = {NAN, INFINITY, -INFINITY, -0.0f, 2.5f, -3.5f, 1e-30f, -1e-30f, 3e38f, 80.0f};
    memcpy(x + SWEEP, extra, sizeof extra);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const unary_case *c = &cases[k];
        for (int isa = OX_ISA_PORTABLE; isa <= (int)ox_cpu_isa_best(); isa++) {
            if (!run_unary_isa(c->op, c->opset, c->alpha, x, N, isas[isa], y)) {
                check_failures++;
                continue;
            }
            double worst = 0;
            int64_t bad = -1;
            for (int64_t i = 0; i < N; i++) {
                const double want = c->ref(x[i], c->alpha);
                /* a finite result beyond float's range may round to inf or 0 */
                if (isfinite(want) && (fabs(want) > 3.4e38 || (want != 0 && fabs(want) < 1.2e-38))) continue;
                double u = ulps(y[i], want);
                if (c->abs_tol > 0 && fabs((double)y[i] - want) <= c->abs_tol) u = 0;
                if (c->max_ulps == 0 && y[i] == (float)want) u = 0;
                if (c->tail_ulps > 0 && x[i] < -4.0f) u *= c->max_ulps / c->tail_ulps;
                if (u > worst) {
                    worst = u;
                    bad = i;
                }
            }
            printf("%-10s %-8s worst %.3g ulp%s", c->op, isas[isa], worst,
                   c->tail_ulps > 0 ? " (below -4 scaled to the bound above)" : "");
            if (bad >= 0) printf(" at %.9g (%.9g, want %.9g)", x[bad], y[bad], c->ref(x[bad], c->alpha));
            printf("\n");
            CHECK(worst <= c->max_ulps);
            if (isa == (c->same_bits ? OX_ISA_PORTABLE : OX_ISA_AVX2))
                memcpy(first, y, sizeof(float) * N);
            else if (isa > OX_ISA_AVX2 || c->same_bits)
                CHECK(memcmp(first, y, sizeof(float) * N) == 0);
        }
    }
out:
    free(x);
    free(y);
    free(first);
}

/* Flat index into an input of shape in (rank r, right-aligned against the
 * rank-4 output index o of shape out) under numpy broadcasting */
static int64_t bcast_at(const int64_t *o, const int64_t *in, int r) {
    int64_t f = 0;
    for (int d = 0; d < r; d++) {
        const int64_t i = in[d] == 1 ? 0 : o[4 - r + d];
        f = f * in[d] + i;
    }
    return f;
}

/* A binary node over a and b (float32, or int64 for Add) against the same
 * operation element by element in the test, bit for bit */
static void check_binary(const char *op, onyx_dtype dt, arg a, arg b, const int64_t out[4]) {
    onyx_tensor *o;
    CHECK_OK(run(one_op(17, op, "i0,i1"), ARGS(a, b), dt, &o));
    const int64_t n = out[0] * out[1] * out[2] * out[3];
    if (!o || onyx_tensor_numel(o) != n) {
        CHECK(!"binary output size");
        DONE(o);
        return;
    }
    int64_t bad = -1;
    for (int64_t f = 0; f < n && bad < 0; f++) {
        const int64_t idx[4] = {f / (out[1] * out[2] * out[3]), f / (out[2] * out[3]) % out[1],
                                f / out[3] % out[2], f % out[3]};
        const int64_t ia = bcast_at(idx, a.dims, a.rank), ib = bcast_at(idx, b.dims, b.rank);
        if (dt == I64) {
            const int64_t *A = a.data, *B = b.data, *O = onyx_tensor_data(o);
            if (O[f] != A[ia] + B[ib]) bad = f;
        } else {
            const float *A = a.data, *B = b.data, *O = onyx_tensor_data(o);
            const float want = strcmp(op, "Mul") == 0 ? A[ia] * B[ib]
                               : strcmp(op, "Sub") == 0 ? A[ia] - B[ib]
                                                        : powf(A[ia], B[ib]);
            if (memcmp(&O[f], &want, sizeof want) != 0) bad = f;
        }
    }
    if (bad >= 0) fprintf(stderr, "  %s: element %lld differs\n", op, (long long)bad);
    CHECK(bad < 0);
    DONE(o);
}

/* Broadcasts whose runs are short, where one input is read from a copy
 * expanded over the inner dims (ox_bcast_widen): that input on either
 * side, the same over all outer indices or changing along them (a copy
 * as large as the output), a non-commutative operator,
 * 38,400 elements (shared by two threads where the machine has them);
 * and one whose copy would be too large */
static void test_short_runs(void) {
    enum { BIG = 400 * 4 * 12 * 2 };
    float *x = malloc(sizeof(float) * BIG), *w = malloc(sizeof(float) * 8192);
    int64_t *xi = malloc(sizeof(int64_t) * 6 * 7 * 5 * 3);
    if (!x || !w || !xi) {
        check_failures++;
        goto out;
    }
    for (int i = 0; i < BIG; i++) x[i] = (float)((i * 37) % 101) * 0.25f - 12.0f;
    for (int i = 0; i < 8192; i++) w[i] = (float)((i * 13) % 29) * 0.125f - 1.5f;
    for (int i = 0; i < 6 * 7 * 5 * 3; i++) xi[i] = (int64_t)i * 1000003 - 500;
    /* D-FINE's decoder shape: B [12, 1] over A's last two dims */
    check_binary("Mul", F32, IN(F32, x, 4, 400, 4, 12, 2), IN(F32, w, 2, 12, 1), I64S(400, 4, 12, 2));
    /* D-FINE's other decoder shape: B changes along the outer dim too;
     * its copy, 9600 elements, is A's size */
    check_binary("Mul", F32, IN(F32, x, 4, 100, 4, 12, 2), IN(F32, w, 4, 100, 1, 1, 2), I64S(100, 4, 12, 2));
    check_binary("Sub", F32, IN(F32, w, 4, 100, 1, 1, 2), IN(F32, x, 4, 100, 4, 12, 2), I64S(100, 4, 12, 2));
    /* the small input on the left, int64 */
    const int64_t small[5] = {7, -3, INT64_MAX / 4, 0, 11};
    check_binary("Add", I64, IN(I64, small, 2, 5, 1), IN(I64, xi, 4, 6, 7, 5, 3), I64S(6, 7, 5, 3));
    /* a block of 800 and the order of the operands kept */
    check_binary("Sub", F32, IN(F32, x, 4, 3, 200, 2, 2), IN(F32, w, 3, 200, 1, 2), I64S(3, 200, 2, 2));
    check_binary("Sub", F32, IN(F32, w, 3, 200, 1, 2), IN(F32, x, 4, 3, 200, 2, 2), I64S(3, 200, 2, 2));
    /* a copy of [4, 1000, 3, 2] would pass 64 KiB: runs stay short */
    check_binary("Mul", F32, IN(F32, x, 4, 4, 1000, 3, 2), IN(F32, w, 4, 4, 1000, 1, 2), I64S(4, 1000, 3, 2));
    check_binary("Pow", F32, IN(F32, w, 3, 50, 3, 2), IN(F32, F32S(2, 3, 0.5f), 2, 3, 1), I64S(1, 50, 3, 2));
out:
    free(x);
    free(w);
    free(xi);
}

/* Where over condition c [2, 3, 40] with X and Y of each shape class the
 * kernel takes apart (the same shape, a scalar, rows [40] repeated, one
 * value per row [2, 3, 1]) against the selection made here, bit for bit,
 * for elements of 1, 2, 4 and 8 bytes */
static void test_where(void) {
    enum { N = 2 * 3 * 40 };
    static const onyx_dtype types[] = {U8, ONYX_INT16, F32, I64};
    static const int64_t shapes[4][4] = {{3, 2, 3, 40}, {0}, {1, 40}, {3, 2, 3, 1}};
    static uint8_t cond[N], xs[N * 8], ys[N * 8];
    for (int i = 0; i < N; i++) cond[i] = (uint8_t)((i * 7 + i / 5) % 3 == 0);
    for (int i = 0; i < N * 8; i++) {
        xs[i] = (uint8_t)(i * 31 + 1);
        ys[i] = (uint8_t)(i * 17 + 200);
    }
    for (int t = 0; t < 4; t++)
        for (int sx = 0; sx < 4; sx++)
            for (int sy = 0; sy < 4; sy++) {
                const size_t es = t == 0 ? 1 : t == 1 ? 2 : t == 2 ? 4 : 8;
                const arg c = IN(BOOL, cond, 3, 2, 3, 40);
                arg x = {types[t], (int)shapes[sx][0], {0}, xs}, y = {types[t], (int)shapes[sy][0], {0}, ys};
                for (int d = 0; d < x.rank; d++) x.dims[d] = shapes[sx][1 + d];
                for (int d = 0; d < y.rank; d++) y.dims[d] = shapes[sy][1 + d];
                onyx_tensor *o;
                CHECK_OK(run(one_op(16, "Where", "i0,i1,i2"), ARGS(c, x, y), types[t], &o));
                if (!o || onyx_tensor_numel(o) != N) {
                    CHECK(!"Where output size");
                    DONE(o);
                    continue;
                }
                int64_t bad = -1;
                for (int64_t f = 0; f < N && bad < 0; f++) {
                    const int64_t idx[4] = {0, f / 120, f / 40 % 3, f % 40};
                    const uint8_t *want = cond[f] ? xs + bcast_at(idx, x.dims, x.rank) * es
                                                  : ys + bcast_at(idx, y.dims, y.rank) * es;
                    if (memcmp((const uint8_t *)onyx_tensor_data(o) + f * es, want, es) != 0) bad = f;
                }
                if (bad >= 0)
                    fprintf(stderr, "  Where (%zu-byte, X shape %d, Y shape %d): element %lld differs\n", es, sx, sy,
                            (long long)bad);
                CHECK(bad < 0);
                DONE(o);
            }
}

int main(void) {
    CHECK_OK(onyx_env_create(&env));
    if (!env) CHECK_DONE();
    test_bitshift();
    test_mod();
    test_reduce();
    test_cumprod();
    test_groupnorm();
    test_rmsnorm();
    test_lpnorm();
    test_bitcast();
    test_float8_classes();
    test_activations();
    test_fast_erf();
    test_gelu_rows();
    test_unary_isa();
    test_short_runs();
    test_where();
    onyx_env_free(env);
    CHECK_DONE();
}
