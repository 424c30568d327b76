/* The indexing operators through the public API: exact results, negative
 * indices, empty tensors, and out-of-range values. Index values above
 * 2^31 are used throughout because a kernel that narrows them to 32 bits
 * would turn an invalid index into a valid one instead of failing. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "model_builder.h"

#define F32 ONYX_FLOAT32
#define I64 ONYX_INT64
#define I32 ONYX_INT32
#define BOOL ONYX_BOOL

#define P33 ((int64_t)1 << 33)         /* 2^33: far outside any test axis */
#define WRAPS_TO_1 (((int64_t)1 << 32) + 1) /* 1 when truncated to 32 bits */

#define I64S(...) ((const int64_t[]){__VA_ARGS__})
#define I32S(...) ((const int32_t[]){__VA_ARGS__})
#define F32S(...) ((const float[]){__VA_ARGS__})
#define U8S(...) ((const uint8_t[]){__VA_ARGS__})

static onyx_env *env;

typedef struct arg {
    onyx_dtype dt;
    int rank;
    int64_t dims[4];
    const void *data;
} arg;

/* IN(dtype, data, rank, dims...); a scalar still needs one dummy dim. */
#define IN(dt, data, rank, ...) ((arg){(dt), (rank), {__VA_ARGS__}, (data)})
#define ARGS(...) ((const arg[]){__VA_ARGS__}), (int)(sizeof((const arg[]){__VA_ARGS__}) / sizeof(arg))
#define OUTS(...) ((const onyx_dtype[]){__VA_ARGS__}), (int)(sizeof((const onyx_dtype[]){__VA_ARGS__}) / sizeof(onyx_dtype))

/* When set, graph inputs declare their real shapes, so the model's own
 * inference sees them at load; otherwise every check happens at run time. */
static int declare_shapes;

/* Runs model m (whose node reads graph inputs i0, i1, ... and writes o0,
 * o1, ...) once on the given inputs, then frees m. */
static onyx_status *run_model(mb_model *m, const arg *in, int n_in, const onyx_dtype *out_dt, int n_out,
                              onyx_tensor **out) {
    static const char *const in_names[] = {"i0", "i1", "i2", "i3", "i4"};
    static const char *const out_names[] = {"o0", "o1", "o2", "o3"};
    for (int i = 0; i < n_in; i++) mb_input(m, in_names[i], in[i].dt, in[i].dims, declare_shapes ? in[i].rank : -1);
    for (int i = 0; i < n_out; i++) {
        mb_output(m, out_names[i], out_dt[i], NULL, -1);
        out[i] = NULL;
    }
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *s = NULL;
    onyx_status *st = onyx_session_create_from_buffer(env, buf, len, NULL, &s);
    free(buf);
    if (st) return st;
    onyx_tensor *t[5] = {0};
    for (int i = 0; i < n_in && !st; i++) {
        st = onyx_tensor_create(in[i].dt, in[i].dims, in[i].rank, &t[i]);
        if (!st && onyx_tensor_nbytes(t[i])) memcpy(onyx_tensor_data(t[i]), in[i].data, onyx_tensor_nbytes(t[i]));
    }
    if (!st)
        st = onyx_session_run(s, in_names, (const onyx_tensor *const *)t, (size_t)n_in, out_names, out, (size_t)n_out);
    for (int i = 0; i < n_in; i++) onyx_tensor_free(t[i]);
    onyx_session_free(s);
    return st;
}

static void free_outs(onyx_tensor **out, int n) {
    for (int i = 0; i < n; i++) {
        onyx_tensor_free(out[i]);
        out[i] = NULL;
    }
}

/* The checks below print what they found, and CHECK names the caller's line. */
static int has_shape(const onyx_tensor *t, onyx_dtype dt, int rank, const int64_t *dims) {
    if (!t) {
        fprintf(stderr, "  no output tensor\n");
        return 0;
    }
    int ok = onyx_tensor_dtype(t) == dt && onyx_tensor_rank(t) == rank;
    for (int i = 0; ok && i < rank; i++) ok = onyx_tensor_dims(t)[i] == dims[i];
    if (!ok) {
        fprintf(stderr, "  got %s [", onyx_dtype_name(onyx_tensor_dtype(t)));
        for (int i = 0; i < onyx_tensor_rank(t); i++) fprintf(stderr, "%s%lld", i ? "," : "", (long long)onyx_tensor_dims(t)[i]);
        fprintf(stderr, "]\n");
    }
    return ok;
}
#define SHAPE(t, dt, rank, ...) has_shape((t), (dt), (rank), I64S(__VA_ARGS__))

static int eq_i64(onyx_tensor *t, const int64_t *v, int64_t n) {
    if (!t || onyx_tensor_numel(t) != n || onyx_tensor_dtype(t) != I64) return 0;
    const int64_t *d = onyx_tensor_data(t);
    for (int64_t i = 0; i < n; i++)
        if (d[i] != v[i]) {
            fprintf(stderr, "  element %lld is %lld, expected %lld\n", (long long)i, (long long)d[i], (long long)v[i]);
            return 0;
        }
    return 1;
}

static int eq_f32(onyx_tensor *t, const float *v, int64_t n) {
    if (!t || onyx_tensor_numel(t) != n || onyx_tensor_dtype(t) != F32) return 0;
    const float *d = onyx_tensor_data(t);
    for (int64_t i = 0; i < n; i++)
        if (d[i] != v[i]) {
            fprintf(stderr, "  element %lld is %g, expected %g\n", (long long)i, d[i], v[i]);
            return 0;
        }
    return 1;
}

/* A failure check that also frees whatever a wrongly successful call
 * produced in the caller's output array `o`. */
#define FAILS(call, code, needle) \
    do { \
        CHECK_FAILS(call, code, needle); \
        free_outs(o, (int)(sizeof o / sizeof o[0])); \
    } while (0)

/* 1..12 as float, the data of most tests. */
static const float SEQ[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

/* ---- Gather ---- */

static mb_model *gather(int64_t axis) {
    mb_model *m = mb_new(13);
    mb_node(m, "Gather", "i0,i1", "o0");
    mb_attr_int(m, "axis", axis);
    return m;
}

static void test_gather(void) {
    onyx_tensor *o[1];
    /* negative indices count from the end */
    CHECK_OK(run_model(gather(0), ARGS(IN(F32, SEQ, 2, 3, 2), IN(I64, I64S(-1, 0), 1, 2)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 2, 2) && eq_f32(o[0], F32S(5, 6, 1, 2), 4));
    free_outs(o, 1);
    /* int32 indices, a 2-D index tensor and a negative axis */
    CHECK_OK(run_model(gather(-1), ARGS(IN(F32, SEQ, 2, 3, 2), IN(I32, I32S(1, 0, -2, 1), 2, 2, 2)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 3, 3, 2, 2) && eq_f32(o[0], F32S(2, 1, 1, 2, 4, 3, 3, 4, 6, 5, 5, 6), 12));
    free_outs(o, 1);
    /* a scalar index drops the axis */
    CHECK_OK(run_model(gather(0), ARGS(IN(F32, SEQ, 2, 3, 2), IN(I64, I64S(-3), 0, 0)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 1, 2) && eq_f32(o[0], F32S(1, 2), 2));
    free_outs(o, 1);
    /* int64 data keeps its full width */
    CHECK_OK(run_model(gather(0), ARGS(IN(I64, I64S(P33 + 5, -P33, 7), 1, 3), IN(I64, I64S(1, 0, 2), 1, 3)),
                       OUTS(I64), o));
    CHECK(SHAPE(o[0], I64, 1, 3) && eq_i64(o[0], I64S(-P33, P33 + 5, 7), 3));
    free_outs(o, 1);
    /* empty indices, then empty data with empty indices */
    CHECK_OK(run_model(gather(0), ARGS(IN(F32, SEQ, 2, 3, 2), IN(I64, NULL, 1, 0)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 0, 2));
    free_outs(o, 1);
    CHECK_OK(run_model(gather(1), ARGS(IN(F32, NULL, 2, 0, 2), IN(I64, I64S(1, -2), 1, 2)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 0, 2));
    free_outs(o, 1);
    CHECK_OK(run_model(gather(0), ARGS(IN(F32, NULL, 2, 0, 2), IN(I64, NULL, 2, 2, 0)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 3, 2, 0, 2));
    free_outs(o, 1);

    /* out of range, including values that a 32-bit index would wrap into range */
    FAILS(run_model(gather(0), ARGS(IN(F32, SEQ, 2, 3, 2), IN(I64, I64S(0, P33), 1, 2)), OUTS(F32), o),
                ONYX_RUNTIME_ERROR, "Gather: indices[1] = 8589934592 is out of range for axis 0 of size 3 (allowed [-3, 2])");
    FAILS(run_model(gather(0), ARGS(IN(F32, SEQ, 2, 3, 2), IN(I64, I64S(WRAPS_TO_1), 1, 1)), OUTS(F32), o),
                ONYX_RUNTIME_ERROR, "indices[0] = 4294967297 is out of range for axis 0 of size 3");
    FAILS(run_model(gather(1), ARGS(IN(F32, SEQ, 2, 3, 2), IN(I64, I64S(-3), 1, 1)), OUTS(F32), o),
                ONYX_RUNTIME_ERROR, "indices[0] = -3 is out of range for axis 1 of size 2 (allowed [-2, 1])");
    FAILS(run_model(gather(0), ARGS(IN(F32, SEQ, 2, 3, 2), IN(I64, I64S(INT64_MIN), 1, 1)), OUTS(F32), o),
                ONYX_RUNTIME_ERROR, "indices[0] = -9223372036854775808 is out of range");
    FAILS(run_model(gather(0), ARGS(IN(F32, SEQ, 2, 3, 2), IN(I64, I64S(INT64_MAX), 1, 1)), OUTS(F32), o),
                ONYX_RUNTIME_ERROR, "indices[0] = 9223372036854775807 is out of range");
    FAILS(run_model(gather(0), ARGS(IN(F32, SEQ, 2, 3, 2), IN(I32, I32S(3), 1, 1)), OUTS(F32), o),
                ONYX_RUNTIME_ERROR, "indices[0] = 3 is out of range for axis 0 of size 3");
    FAILS(run_model(gather(0), ARGS(IN(F32, NULL, 2, 0, 2), IN(I64, I64S(0), 1, 1)), OUTS(F32), o),
                ONYX_INVALID_ARGUMENT, "Gather: cannot take indices from axis 0, which has size 0");
    FAILS(run_model(gather(2), ARGS(IN(F32, SEQ, 2, 3, 2), IN(I64, I64S(0), 1, 1)), OUTS(F32), o),
                ONYX_INVALID_MODEL, "Gather: axis 2 is out of range for rank 2 (allowed [-2, 1])");
    FAILS(run_model(gather(0), ARGS(IN(F32, SEQ, 2, 3, 2), IN(F32, F32S(0), 1, 1)), OUTS(F32), o),
                ONYX_INVALID_MODEL, "must be int32 or int64, got float32");
}

/* ---- GatherElements ---- */

static mb_model *gather_elements(int64_t axis) {
    mb_model *m = mb_new(13);
    mb_node(m, "GatherElements", "i0,i1", "o0");
    mb_attr_int(m, "axis", axis);
    return m;
}

static void test_gather_elements(void) {
    onyx_tensor *o[1];
    /* data [[1,2,3],[4,5,6]] */
    CHECK_OK(run_model(gather_elements(1), ARGS(IN(F32, SEQ, 2, 2, 3), IN(I64, I64S(-1, 0, 1, -3), 2, 2, 2)),
                       OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 2, 2) && eq_f32(o[0], F32S(3, 1, 5, 4), 4));
    free_outs(o, 1);
    CHECK_OK(run_model(gather_elements(-2), ARGS(IN(F32, SEQ, 2, 2, 3), IN(I32, I32S(1, -2, 1), 2, 1, 3)),
                       OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 1, 3) && eq_f32(o[0], F32S(4, 2, 6), 3));
    free_outs(o, 1);
    /* fewer rows of indices than data: the walk must skip the rest of each row */
    CHECK_OK(run_model(gather_elements(0), ARGS(IN(F32, SEQ, 2, 3, 3), IN(I64, I64S(2, 0, -1, 1), 2, 2, 2)),
                       OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 2, 2) && eq_f32(o[0], F32S(7, 2, 7, 5), 4));
    free_outs(o, 1);
    CHECK_OK(run_model(gather_elements(1), ARGS(IN(F32, SEQ, 2, 2, 3), IN(I64, NULL, 2, 2, 0)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 2, 0));
    free_outs(o, 1);

    FAILS(run_model(gather_elements(1), ARGS(IN(F32, SEQ, 2, 2, 3), IN(I64, I64S(0, P33), 2, 1, 2)),
                          OUTS(F32), o),
                ONYX_RUNTIME_ERROR, "GatherElements: indices[1] = 8589934592 is out of range for axis 1 of size 3 (allowed [-3, 2])");
    FAILS(run_model(gather_elements(0), ARGS(IN(F32, SEQ, 2, 2, 3), IN(I64, I64S(-3), 2, 1, 1)), OUTS(F32), o),
                ONYX_RUNTIME_ERROR, "indices[0] = -3 is out of range for axis 0 of size 2 (allowed [-2, 1])");
    FAILS(run_model(gather_elements(1), ARGS(IN(F32, SEQ, 2, 2, 3), IN(I64, I64S(0, 0, 0), 2, 3, 1)),
                          OUTS(F32), o),
                ONYX_INVALID_ARGUMENT, "GatherElements: indices dim 0 (3) exceeds data dim 2");
    FAILS(run_model(gather_elements(0), ARGS(IN(F32, SEQ, 2, 2, 3), IN(I64, I64S(0), 1, 1)), OUTS(F32), o),
                ONYX_INVALID_ARGUMENT, "GatherElements: data has rank 2 but indices have rank 1");
}

/* ---- GatherND ---- */

static mb_model *gather_nd(int64_t batch_dims) {
    mb_model *m = mb_new(13);
    mb_node(m, "GatherND", "i0,i1", "o0");
    mb_attr_int(m, "batch_dims", batch_dims);
    return m;
}

static void test_gather_nd(void) {
    onyx_tensor *o[1];
    /* data [[1,2],[3,4]]: whole tuples pick elements, shorter ones rows */
    CHECK_OK(run_model(gather_nd(0), ARGS(IN(F32, SEQ, 2, 2, 2), IN(I64, I64S(0, 0, 1, -1), 2, 2, 2)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 1, 2) && eq_f32(o[0], F32S(1, 4), 2));
    free_outs(o, 1);
    CHECK_OK(run_model(gather_nd(0), ARGS(IN(F32, SEQ, 2, 2, 2), IN(I64, I64S(-1, 0), 2, 2, 1)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 2, 2) && eq_f32(o[0], F32S(3, 4, 1, 2), 4));
    free_outs(o, 1);
    /* batch_dims 1 on [[[1,2],[3,4]],[[5,6],[7,8]]] */
    CHECK_OK(run_model(gather_nd(1), ARGS(IN(F32, SEQ, 3, 2, 2, 2), IN(I64, I64S(1, -2), 2, 2, 1)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 2, 2) && eq_f32(o[0], F32S(3, 4, 5, 6), 4));
    free_outs(o, 1);
    CHECK_OK(run_model(gather_nd(0), ARGS(IN(F32, SEQ, 2, 2, 2), IN(I64, NULL, 2, 0, 2)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 1, 0));
    free_outs(o, 1);

    FAILS(run_model(gather_nd(0), ARGS(IN(F32, SEQ, 2, 2, 2), IN(I64, I64S(0, 0, 1, P33), 2, 2, 2)),
                          OUTS(F32), o),
                ONYX_RUNTIME_ERROR, "GatherND: indices[3] = 8589934592 is out of range for axis 1 of size 2 (allowed [-2, 1])");
    FAILS(run_model(gather_nd(0), ARGS(IN(F32, SEQ, 2, 2, 2), IN(I64, I64S(-3, 0), 2, 1, 2)), OUTS(F32), o),
                ONYX_RUNTIME_ERROR, "indices[0] = -3 is out of range for axis 0 of size 2");
    FAILS(run_model(gather_nd(0), ARGS(IN(F32, SEQ, 2, 2, 2), IN(I32, I32S(0, 0), 2, 1, 2)), OUTS(F32), o),
                ONYX_INVALID_MODEL, "GatherND: indices must be int64, got int32");
    FAILS(run_model(gather_nd(0), ARGS(IN(F32, SEQ, 2, 2, 2), IN(I64, I64S(0, 0, 0), 2, 1, 3)), OUTS(F32), o),
                ONYX_INVALID_ARGUMENT, "GatherND: the last indices dim is 3 but must be in [1, 2]");
}

/* ---- ScatterND ---- */

static mb_model *scatter_nd(const char *reduction) {
    mb_model *m = mb_new(16);
    mb_node(m, "ScatterND", "i0,i1,i2", "o0");
    if (reduction) mb_attr_string(m, "reduction", reduction);
    return m;
}

static void test_scatter_nd(void) {
    onyx_tensor *o[1];
    const float *d4 = SEQ; /* [1,2,3,4] */
    CHECK_OK(run_model(scatter_nd(NULL), ARGS(IN(F32, d4, 1, 4), IN(I64, I64S(-1, 0), 2, 2, 1), IN(F32, F32S(10, 20), 1, 2)),
                       OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 1, 4) && eq_f32(o[0], F32S(20, 2, 3, 10), 4));
    free_outs(o, 1);
    /* duplicates accumulate; -4 is element 0 */
    CHECK_OK(run_model(scatter_nd("add"),
                       ARGS(IN(F32, d4, 1, 4), IN(I64, I64S(1, 1, -4), 2, 3, 1), IN(F32, F32S(5, 6, 7), 1, 3)),
                       OUTS(F32), o));
    CHECK(eq_f32(o[0], F32S(8, 13, 3, 4), 4));
    free_outs(o, 1);
    CHECK_OK(run_model(scatter_nd("mul"),
                       ARGS(IN(F32, d4, 1, 4), IN(I64, I64S(1, 1, -4), 2, 3, 1), IN(F32, F32S(2, 3, 4), 1, 3)),
                       OUTS(F32), o));
    CHECK(eq_f32(o[0], F32S(4, 12, 3, 4), 4));
    free_outs(o, 1);
    /* int64 data: an add past 2^32 must not wrap */
    CHECK_OK(run_model(scatter_nd("add"),
                       ARGS(IN(I64, I64S(P33, 1), 1, 2), IN(I64, I64S(0, -1), 2, 2, 1), IN(I64, I64S(P33, P33), 1, 2)),
                       OUTS(I64), o));
    CHECK(eq_i64(o[0], I64S(2 * P33, P33 + 1), 2));
    free_outs(o, 1);
    /* a partial tuple writes a whole row of [[1,2,3],[4,5,6]] */
    CHECK_OK(run_model(scatter_nd(NULL),
                       ARGS(IN(F32, SEQ, 2, 2, 3), IN(I64, I64S(-1), 2, 1, 1), IN(F32, F32S(7, 8, 9), 2, 1, 3)),
                       OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 2, 3) && eq_f32(o[0], F32S(1, 2, 3, 7, 8, 9), 6));
    free_outs(o, 1);
    CHECK_OK(run_model(scatter_nd("mul"), ARGS(IN(F32, d4, 1, 4), IN(I64, NULL, 2, 0, 1), IN(F32, NULL, 1, 0)),
                       OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 1, 4) && eq_f32(o[0], F32S(1, 2, 3, 4), 4));
    free_outs(o, 1);

    FAILS(run_model(scatter_nd(NULL),
                          ARGS(IN(F32, d4, 1, 4), IN(I64, I64S(0, P33), 2, 2, 1), IN(F32, F32S(1, 1), 1, 2)),
                          OUTS(F32), o),
                ONYX_RUNTIME_ERROR, "ScatterND: indices[1] = 8589934592 is out of range for axis 0 of size 4 (allowed [-4, 3])");
    FAILS(run_model(scatter_nd("add"),
                          ARGS(IN(F32, d4, 1, 4), IN(I64, I64S(-5), 2, 1, 1), IN(F32, F32S(1), 1, 1)), OUTS(F32), o),
                ONYX_RUNTIME_ERROR, "indices[0] = -5 is out of range for axis 0 of size 4");
    FAILS(run_model(scatter_nd(NULL),
                          ARGS(IN(F32, d4, 1, 4), IN(I64, I64S(0, 1), 2, 2, 1), IN(F32, F32S(1, 2, 3), 1, 3)),
                          OUTS(F32), o),
                ONYX_INVALID_ARGUMENT, "ScatterND: updates shape [3] does not match indices and data (dim 0 should be 2)");
    FAILS(run_model(scatter_nd("avg"), ARGS(IN(F32, d4, 1, 4), IN(I64, I64S(0), 2, 1, 1), IN(F32, F32S(1), 1, 1)),
                          OUTS(F32), o),
                ONYX_INVALID_MODEL, "ScatterND: unknown reduction 'avg'");
}

/* ---- ScatterElements ---- */

static mb_model *scatter_elements(int64_t axis, const char *reduction) {
    mb_model *m = mb_new(16);
    mb_node(m, "ScatterElements", "i0,i1,i2", "o0");
    mb_attr_int(m, "axis", axis);
    if (reduction) mb_attr_string(m, "reduction", reduction);
    return m;
}

/* Large enough that the plain path splits the work into several tasks
 * (two threads): indices [3, CI, WI] along axis 0 of data [4, 400, 48],
 * every target hit by up to three updates (negative indices among
 * them); indices [3, 400, 48] cover dims 1 and 2 whole (one row of
 * 19200 per roi, split within), [3, 300, 48] leave dim 1 partial (still
 * one row), [3, 400, 40] dim 2 (rows of 40, split over dim 1). The result must be the serial
 * one, the last update in row-major order winning, and the error must
 * name the first index out of range in that order, wherever the tasks
 * meet them. */
static void scatter_split_case(int64_t CI, int64_t WI) {
    enum { A = 4, R = 3, C = 400, W = 48 };
    float *x = malloc(sizeof(float) * A * C * W), *up = malloc(sizeof(float) * R * C * W);
    float *want = malloc(sizeof(float) * A * C * W);
    int64_t *ix = malloc(sizeof(int64_t) * R * C * W);
    if (!x || !up || !want || !ix) {
        CHECK(0);
        goto out;
    }
    for (int64_t i = 0; i < (int64_t)A * C * W; i++) x[i] = want[i] = -(float)i;
    for (int64_t r = 0; r < R; r++)
        for (int64_t c = 0; c < CI; c++)
            for (int64_t w = 0; w < WI; w++) {
                const int64_t i = (r * CI + c) * WI + w, t = (c + w + r * r) % 2 + (w % 3 == 0 ? 1 : 0);
                ix[i] = c % 2 ? t - A : t;
                up[i] = (float)i;
                want[(t * C + c) * W + w] = (float)i;
            }
    onyx_tensor *o[1];
    CHECK_OK(run_model(scatter_elements(0, NULL),
                       ARGS(IN(F32, x, 3, A, C, W), IN(I64, ix, 3, R, CI, WI), IN(F32, up, 3, R, CI, WI)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 3, A, C, W) && eq_f32(o[0], want, (int64_t)A * C * W));
    free_outs(o, 1);
    ix[(2 * CI + 290) * WI + 5] = A;    /* in a late task */
    ix[(1 * CI + 7) * WI + 30] = -A - 1; /* first in row-major order, in an early task */
    char msg[128];
    snprintf(msg, sizeof msg, "ScatterElements: indices[%lld] = -5 is out of range for axis 0 of size 4",
             (long long)((1 * CI + 7) * WI + 30));
    FAILS(run_model(scatter_elements(0, NULL),
                    ARGS(IN(F32, x, 3, A, C, W), IN(I64, ix, 3, R, CI, WI), IN(F32, up, 3, R, CI, WI)), OUTS(F32), o),
          ONYX_RUNTIME_ERROR, msg);
out:
    free(x);
    free(up);
    free(want);
    free(ix);
}

static void test_scatter_elements_split(void) {
    scatter_split_case(400, 48);
    scatter_split_case(300, 48);
    scatter_split_case(400, 40);
}

static void test_scatter_elements(void) {
    onyx_tensor *o[1];
    /* data [[1,2,3],[4,5,6]] */
    CHECK_OK(run_model(scatter_elements(1, "none"),
                       ARGS(IN(F32, SEQ, 2, 2, 3), IN(I64, I64S(-1, 0, 1, -3), 2, 2, 2), IN(F32, F32S(10, 20, 30, 40), 2, 2, 2)),
                       OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 2, 3) && eq_f32(o[0], F32S(20, 2, 10, 40, 30, 6), 6));
    free_outs(o, 1);
    CHECK_OK(run_model(scatter_elements(-2, NULL),
                       ARGS(IN(F32, SEQ, 2, 2, 3), IN(I32, I32S(-1, 0), 2, 1, 2), IN(F32, F32S(7, 8), 2, 1, 2)),
                       OUTS(F32), o));
    CHECK(eq_f32(o[0], F32S(1, 8, 3, 7, 5, 6), 6));
    free_outs(o, 1);
    /* repeated targets with reductions; -3 is column 0 */
    const arg dup_in[] = {IN(F32, SEQ, 2, 1, 3), IN(I64, I64S(0, -3, 2, 2), 2, 1, 4), IN(F32, F32S(1, 2, 3, 4), 2, 1, 4)};
    CHECK_OK(run_model(scatter_elements(1, "add"), dup_in, 3, OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 1, 3) && eq_f32(o[0], F32S(4, 2, 10), 3));
    free_outs(o, 1);
    CHECK_OK(run_model(scatter_elements(1, "mul"), dup_in, 3, OUTS(F32), o));
    CHECK(eq_f32(o[0], F32S(2, 2, 36), 3));
    free_outs(o, 1);
    CHECK_OK(run_model(scatter_elements(0, "add"),
                       ARGS(IN(I64, I64S(P33, 5), 1, 2), IN(I64, I64S(0, -2), 1, 2), IN(I64, I64S(P33, 1), 1, 2)),
                       OUTS(I64), o));
    CHECK(eq_i64(o[0], I64S(2 * P33 + 1, 5), 2));
    free_outs(o, 1);
    CHECK_OK(run_model(scatter_elements(1, "mul"), ARGS(IN(F32, SEQ, 2, 2, 3), IN(I64, NULL, 2, 2, 0), IN(F32, NULL, 2, 2, 0)),
                       OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 2, 3) && eq_f32(o[0], SEQ, 6));
    free_outs(o, 1);

    FAILS(run_model(scatter_elements(1, "add"),
                          ARGS(IN(F32, SEQ, 2, 2, 3), IN(I64, I64S(P33), 2, 1, 1), IN(F32, F32S(1), 2, 1, 1)), OUTS(F32), o),
                ONYX_RUNTIME_ERROR, "ScatterElements: indices[0] = 8589934592 is out of range for axis 1 of size 3 (allowed [-3, 2])");
    FAILS(run_model(scatter_elements(1, NULL),
                          ARGS(IN(F32, SEQ, 2, 2, 3), IN(I64, I64S(0, WRAPS_TO_1), 2, 1, 2), IN(F32, F32S(1, 1), 2, 1, 2)),
                          OUTS(F32), o),
                ONYX_RUNTIME_ERROR, "indices[1] = 4294967297 is out of range");
    FAILS(run_model(scatter_elements(0, "mul"),
                          ARGS(IN(F32, SEQ, 2, 2, 3), IN(I64, I64S(-3), 2, 1, 1), IN(F32, F32S(1), 2, 1, 1)), OUTS(F32), o),
                ONYX_RUNTIME_ERROR, "indices[0] = -3 is out of range for axis 0 of size 2 (allowed [-2, 1])");
    FAILS(run_model(scatter_elements(0, NULL),
                          ARGS(IN(F32, SEQ, 2, 2, 3), IN(I64, I64S(0, 0), 2, 1, 2), IN(F32, F32S(1, 2, 3), 2, 1, 3)),
                          OUTS(F32), o),
                ONYX_INVALID_ARGUMENT, "ScatterElements: indices shape [1,2] differs from updates shape [1,3]");
}

/* ---- TopK ---- */

static mb_model *topk(int64_t axis, int64_t largest) {
    mb_model *m = mb_new(11);
    mb_node(m, "TopK", "i0,i1", "o0,o1");
    mb_attr_int(m, "axis", axis);
    mb_attr_int(m, "largest", largest);
    return m;
}

static void test_topk(void) {
    onyx_tensor *o[2];
    const float *x = F32S(3, 1, 3, 2, 1, 3);
    /* ties go to the lower index, for the largest and for the smallest */
    CHECK_OK(run_model(topk(0, 1), ARGS(IN(F32, x, 1, 6), IN(I64, I64S(4), 1, 1)), OUTS(F32, I64), o));
    CHECK(SHAPE(o[0], F32, 1, 4) && eq_f32(o[0], F32S(3, 3, 3, 2), 4));
    CHECK(SHAPE(o[1], I64, 1, 4) && eq_i64(o[1], I64S(0, 2, 5, 3), 4));
    free_outs(o, 2);
    CHECK_OK(run_model(topk(-1, 0), ARGS(IN(F32, x, 1, 6), IN(I64, I64S(3), 1, 1)), OUTS(F32, I64), o));
    CHECK(eq_f32(o[0], F32S(1, 1, 2), 3) && eq_i64(o[1], I64S(1, 4, 3), 3));
    free_outs(o, 2);
    /* K = axis size sorts the whole axis */
    CHECK_OK(run_model(topk(0, 0), ARGS(IN(F32, x, 1, 6), IN(I64, I64S(6), 1, 1)), OUTS(F32, I64), o));
    CHECK(eq_f32(o[0], F32S(1, 1, 2, 3, 3, 3), 6) && eq_i64(o[1], I64S(1, 4, 3, 0, 2, 5), 6));
    free_outs(o, 2);
    /* along axis 0 of [[1,5,5],[4,5,0]] */
    const float *x2 = F32S(1, 5, 5, 4, 5, 0);
    CHECK_OK(run_model(topk(0, 1), ARGS(IN(F32, x2, 2, 2, 3), IN(I64, I64S(1), 1, 1)), OUTS(F32, I64), o));
    CHECK(SHAPE(o[0], F32, 2, 1, 3) && eq_f32(o[0], F32S(4, 5, 5), 3) && eq_i64(o[1], I64S(1, 0, 0), 3));
    free_outs(o, 2);
    CHECK_OK(run_model(topk(0, 0), ARGS(IN(F32, x2, 2, 2, 3), IN(I64, I64S(1), 1, 1)), OUTS(F32, I64), o));
    CHECK(eq_f32(o[0], F32S(1, 5, 0), 3) && eq_i64(o[1], I64S(0, 0, 1), 3));
    free_outs(o, 2);
    CHECK_OK(run_model(topk(1, 1), ARGS(IN(F32, x2, 2, 2, 3), IN(I64, I64S(2), 1, 1)), OUTS(F32, I64), o));
    CHECK(SHAPE(o[1], I64, 2, 2, 2) && eq_f32(o[0], F32S(5, 5, 5, 4), 4) && eq_i64(o[1], I64S(1, 2, 1, 0), 4));
    free_outs(o, 2);
    /* more than one insertion-sort run, so ties cross a merge */
    float many[40];
    for (int i = 0; i < 40; i++) many[i] = (float)(i % 3);
    CHECK_OK(run_model(topk(0, 1), ARGS(IN(F32, many, 1, 40), IN(I64, I64S(5), 1, 1)), OUTS(F32, I64), o));
    CHECK(eq_f32(o[0], F32S(2, 2, 2, 2, 2), 5) && eq_i64(o[1], I64S(2, 5, 8, 11, 14), 5));
    free_outs(o, 2);
    CHECK_OK(run_model(topk(0, 0), ARGS(IN(F32, many, 1, 40), IN(I64, I64S(5), 1, 1)), OUTS(F32, I64), o));
    CHECK(eq_f32(o[0], F32S(0, 0, 0, 0, 0), 5) && eq_i64(o[1], I64S(0, 3, 6, 9, 12), 5));
    free_outs(o, 2);
    /* float32 with k <= n / 4 (the bounded-heap path): NaN above +inf,
     * -0 equal to +0 (ties by index), -inf, ties; along a middle axis
     * (stride 2), largest and smallest; against a stable reference sort */
    {
        enum { N = 24, K = 5 };
        float v[N * 2];
        for (int i = 0; i < N * 2; i++) v[i] = (float)((i * 7) % 5) - 2.0f;
        v[3] = NAN, v[10] = -0.0f, v[12] = 0.0f, v[20] = -INFINITY, v[21] = INFINITY, v[33] = NAN;
        v[40] = -NAN; /* a NaN with its sign bit set */
        for (int largest = 0; largest < 2; largest++) {
            CHECK_OK(run_model(topk(1, largest), ARGS(IN(F32, v, 3, 1, N, 2), IN(I64, I64S(K), 1, 1)),
                               OUTS(F32, I64), o));
            if (!o[0] || !o[1]) continue;
            const float *got = onyx_tensor_data(o[0]);
            const int64_t *gi = onyx_tensor_data(o[1]);
            for (int col = 0; col < 2; col++) {
                int idx[N];
                for (int i = 0; i < N; i++) idx[i] = i;
                /* insertion sort: stable, NaN the greatest, -0 == +0 */
                for (int i = 1; i < N; i++)
                    for (int jj = i; jj > 0; jj--) {
                        float a = v[idx[jj - 1] * 2 + col], b = v[idx[jj] * 2 + col];
                        int c = (a != a || b != b) ? (a != a) - (b != b) : (a < b ? -1 : a > b);
                        if (largest ? c >= 0 : c <= 0) break;
                        int t = idx[jj - 1];
                        idx[jj - 1] = idx[jj];
                        idx[jj] = t;
                    }
                for (int r = 0; r < K; r++) {
                    CHECK(gi[r * 2 + col] == idx[r]);
                    CHECK(memcmp(&got[r * 2 + col], &v[idx[r] * 2 + col], sizeof(float)) == 0);
                }
            }
            free_outs(o, 2);
        }
    }
    /* int64 values that only differ above bit 31 */
    CHECK_OK(run_model(topk(0, 1), ARGS(IN(I64, I64S((int64_t)1 << 32, 1, -P33, P33), 1, 4), IN(I64, I64S(2), 1, 1)),
                       OUTS(I64, I64), o));
    CHECK(eq_i64(o[0], I64S(P33, (int64_t)1 << 32), 2) && eq_i64(o[1], I64S(3, 0), 2));
    free_outs(o, 2);
    /* K = 0 */
    CHECK_OK(run_model(topk(-1, 1), ARGS(IN(F32, x2, 2, 2, 3), IN(I64, I64S(0), 1, 1)), OUTS(F32, I64), o));
    CHECK(SHAPE(o[0], F32, 2, 2, 0) && SHAPE(o[1], I64, 2, 2, 0));
    free_outs(o, 2);
    CHECK_OK(run_model(topk(0, 1), ARGS(IN(F32, NULL, 1, 0), IN(I64, I64S(0), 1, 1)), OUTS(F32, I64), o));
    CHECK(SHAPE(o[0], F32, 1, 0) && SHAPE(o[1], I64, 1, 0));
    free_outs(o, 2);

    FAILS(run_model(topk(0, 1), ARGS(IN(F32, x, 1, 6), IN(I64, I64S(7), 1, 1)), OUTS(F32, I64), o),
                ONYX_INVALID_ARGUMENT, "TopK: K = 7 exceeds the size 6 of axis 0");
    FAILS(run_model(topk(0, 0), ARGS(IN(F32, x, 1, 6), IN(I64, I64S(WRAPS_TO_1), 1, 1)), OUTS(F32, I64), o),
                ONYX_INVALID_ARGUMENT, "TopK: K = 4294967297 exceeds the size 6 of axis 0");
    FAILS(run_model(topk(1, 1), ARGS(IN(F32, x2, 2, 2, 3), IN(I64, I64S(P33), 1, 1)), OUTS(F32, I64), o),
                ONYX_INVALID_ARGUMENT, "TopK: K = 8589934592 exceeds the size 3 of axis 1");
    FAILS(run_model(topk(0, 1), ARGS(IN(F32, x, 1, 6), IN(I64, I64S(-1), 1, 1)), OUTS(F32, I64), o),
                ONYX_INVALID_ARGUMENT, "TopK: K = -1 is negative");
    FAILS(run_model(topk(0, 1), ARGS(IN(F32, x, 1, 6), IN(I32, I32S(2), 1, 1)), OUTS(F32, I64), o),
                ONYX_INVALID_MODEL, "TopK: K must be int64, got int32");
    /* a constant K is checked against a declared shape when the model loads */
    mb_model *m = topk(0, 1);
    mb_init_int64(m, "i1", I64S(1), 1, I64S(7));
    declare_shapes = 1;
    FAILS(run_model(m, ARGS(IN(F32, x, 1, 6)), OUTS(F32, I64), o), ONYX_INVALID_MODEL,
                "TopK: K = 7 exceeds the size 6 of axis 0");
    declare_shapes = 0;
}

/* ---- NonZero ---- */

static mb_model *one_op(int64_t opset, const char *op, const char *ins, const char *outs) {
    mb_model *m = mb_new(opset);
    mb_node(m, op, ins, outs);
    return m;
}

static void test_nonzero(void) {
    onyx_tensor *o[1];
    CHECK_OK(run_model(one_op(13, "NonZero", "i0", "o0"), ARGS(IN(F32, F32S(0, 1, -0.0f, 2, 0, -3), 2, 2, 3)),
                       OUTS(I64), o));
    CHECK(SHAPE(o[0], I64, 2, 2, 3) && eq_i64(o[0], I64S(0, 1, 1, 1, 0, 2), 6));
    free_outs(o, 1);
    /* 2^32 has no bits in its low word but is not zero */
    CHECK_OK(run_model(one_op(13, "NonZero", "i0", "o0"), ARGS(IN(I64, I64S((int64_t)1 << 32, 0, INT64_MIN), 1, 3)),
                       OUTS(I64), o));
    CHECK(SHAPE(o[0], I64, 2, 1, 2) && eq_i64(o[0], I64S(0, 2), 2));
    free_outs(o, 1);
    CHECK_OK(run_model(one_op(13, "NonZero", "i0", "o0"), ARGS(IN(BOOL, U8S(0, 1, 1, 0), 2, 2, 2)), OUTS(I64), o));
    CHECK(SHAPE(o[0], I64, 2, 2, 2) && eq_i64(o[0], I64S(0, 1, 1, 0), 4));
    free_outs(o, 1);
    CHECK_OK(run_model(one_op(13, "NonZero", "i0", "o0"), ARGS(IN(F32, F32S(0, 0, 0), 2, 3, 1)), OUTS(I64), o));
    CHECK(SHAPE(o[0], I64, 2, 2, 0));
    free_outs(o, 1);
    CHECK_OK(run_model(one_op(13, "NonZero", "i0", "o0"), ARGS(IN(F32, NULL, 3, 2, 0, 4)), OUTS(I64), o));
    CHECK(SHAPE(o[0], I64, 2, 3, 0));
    free_outs(o, 1);
}

/* ---- OneHot ---- */

static mb_model *onehot(int64_t axis) {
    mb_model *m = mb_new(11);
    mb_node(m, "OneHot", "i0,i1,i2", "o0");
    mb_attr_int(m, "axis", axis);
    return m;
}

static void test_onehot(void) {
    onyx_tensor *o[1];
    const float *offon = F32S(0, 1);
    /* out-of-range indices leave a row all off, even when their low 32 bits are in range */
    CHECK_OK(run_model(onehot(-1), ARGS(IN(I64, I64S(0, -1, WRAPS_TO_1, -P33, 3), 1, 5), IN(I64, I64S(3), 0, 0),
                                        IN(F32, offon, 1, 2)),
                       OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 5, 3) && eq_f32(o[0], F32S(1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0), 15));
    free_outs(o, 1);
    CHECK_OK(run_model(onehot(0), ARGS(IN(I64, I64S(1, 0), 1, 2), IN(I64, I64S(3), 1, 1), IN(F32, F32S(-1, 5), 1, 2)),
                       OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 3, 2) && eq_f32(o[0], F32S(-1, 5, 5, -1, -1, -1), 6));
    free_outs(o, 1);
    /* float indices and depth, truncated towards zero */
    CHECK_OK(run_model(onehot(1), ARGS(IN(F32, F32S(1.5f, -1), 1, 2), IN(F32, F32S(2.9f), 0, 0), IN(I64, I64S(0, P33), 1, 2)),
                       OUTS(I64), o));
    CHECK(SHAPE(o[0], I64, 2, 2, 2) && eq_i64(o[0], I64S(0, P33, 0, P33), 4));
    free_outs(o, 1);
    /* float indices that no int64 can hold are off too */
    CHECK_OK(run_model(onehot(-1), ARGS(IN(F32, F32S(1e20f, NAN, -1e20f, -2), 1, 4), IN(I64, I64S(2), 0, 0), IN(F32, offon, 1, 2)),
                       OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 4, 2) && eq_f32(o[0], F32S(0, 0, 0, 0, 0, 0, 1, 0), 8));
    free_outs(o, 1);
    CHECK_OK(run_model(onehot(-1), ARGS(IN(I64, NULL, 1, 0), IN(I64, I64S(4), 0, 0), IN(F32, offon, 1, 2)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 0, 4));
    free_outs(o, 1);

    FAILS(run_model(onehot(-1), ARGS(IN(I64, I64S(0), 1, 1), IN(I64, I64S(0), 0, 0), IN(F32, offon, 1, 2)),
                          OUTS(F32), o),
                ONYX_INVALID_ARGUMENT, "OneHot: depth must be positive, got 0");
    FAILS(run_model(onehot(-1), ARGS(IN(I64, I64S(0), 1, 1), IN(F32, F32S(NAN), 0, 0), IN(F32, offon, 1, 2)),
                          OUTS(F32), o),
                ONYX_INVALID_ARGUMENT, "OneHot: depth nan is not a usable size");
    FAILS(run_model(onehot(-1), ARGS(IN(I64, I64S(0), 1, 1), IN(I64, I64S(2), 0, 0), IN(F32, F32S(0, 1, 2), 1, 3)),
                          OUTS(F32), o),
                ONYX_INVALID_ARGUMENT, "OneHot: values must be a 1-D tensor of 2 elements");
}

/* ---- Compress ---- */

static mb_model *compress(int has_axis, int64_t axis) {
    mb_model *m = mb_new(11);
    mb_node(m, "Compress", "i0,i1", "o0");
    if (has_axis) mb_attr_int(m, "axis", axis);
    return m;
}

static void test_compress(void) {
    onyx_tensor *o[1];
    /* data [[1,2],[3,4],[5,6]] */
    CHECK_OK(run_model(compress(1, 0), ARGS(IN(F32, SEQ, 2, 3, 2), IN(BOOL, U8S(0, 1, 1), 1, 3)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 2, 2) && eq_f32(o[0], F32S(3, 4, 5, 6), 4));
    free_outs(o, 1);
    /* a condition shorter than the axis drops the rest */
    CHECK_OK(run_model(compress(1, -1), ARGS(IN(F32, SEQ, 2, 3, 2), IN(BOOL, U8S(1), 1, 1)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 3, 1) && eq_f32(o[0], F32S(1, 3, 5), 3));
    free_outs(o, 1);
    CHECK_OK(run_model(compress(0, 0), ARGS(IN(F32, SEQ, 2, 3, 2), IN(BOOL, U8S(0, 0, 1, 0, 1), 1, 5)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 1, 2) && eq_f32(o[0], F32S(3, 5), 2));
    free_outs(o, 1);
    CHECK_OK(run_model(compress(1, 0), ARGS(IN(F32, SEQ, 2, 3, 2), IN(BOOL, U8S(0, 0, 0), 1, 3)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 0, 2));
    free_outs(o, 1);
    CHECK_OK(run_model(compress(1, 0), ARGS(IN(F32, NULL, 2, 0, 2), IN(BOOL, NULL, 1, 0)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 0, 2));
    free_outs(o, 1);

    FAILS(run_model(compress(1, 0), ARGS(IN(F32, SEQ, 2, 3, 2), IN(BOOL, U8S(0, 0, 0, 1), 1, 4)), OUTS(F32), o),
                ONYX_INVALID_ARGUMENT, "Compress: condition[3] is true but the axis has only 3 entries");
    FAILS(run_model(compress(0, 0), ARGS(IN(F32, SEQ, 2, 3, 2), IN(BOOL, U8S(0, 0, 0, 0, 0, 0, 1), 1, 7)),
                          OUTS(F32), o),
                ONYX_INVALID_ARGUMENT, "Compress: condition[6] is true but the input has only 6 entries");
    FAILS(run_model(compress(1, 2), ARGS(IN(F32, SEQ, 2, 3, 2), IN(BOOL, U8S(1), 1, 1)), OUTS(F32), o),
                ONYX_INVALID_MODEL, "Compress: axis 2 is out of range for rank 2 (allowed [-2, 1])");
}

/* ---- Unique ---- */

static mb_model *unique(int has_axis, int64_t axis, int64_t sorted) {
    mb_model *m = mb_new(11);
    mb_node(m, "Unique", "i0", "o0,o1,o2,o3");
    if (has_axis) mb_attr_int(m, "axis", axis);
    mb_attr_int(m, "sorted", sorted);
    return m;
}

static void test_unique(void) {
    onyx_tensor *o[4];
    const float *x = F32S(2, 1, 2, 3, 1, 2);
    CHECK_OK(run_model(unique(0, 0, 1), ARGS(IN(F32, x, 1, 6)), OUTS(F32, I64, I64, I64), o));
    CHECK(SHAPE(o[0], F32, 1, 3) && eq_f32(o[0], F32S(1, 2, 3), 3));
    CHECK(SHAPE(o[1], I64, 1, 3) && eq_i64(o[1], I64S(1, 0, 3), 3));
    CHECK(SHAPE(o[2], I64, 1, 6) && eq_i64(o[2], I64S(1, 0, 1, 2, 0, 1), 6));
    CHECK(SHAPE(o[3], I64, 1, 3) && eq_i64(o[3], I64S(2, 3, 1), 3));
    free_outs(o, 4);
    CHECK_OK(run_model(unique(0, 0, 0), ARGS(IN(F32, x, 1, 6)), OUTS(F32, I64, I64, I64), o));
    CHECK(eq_f32(o[0], F32S(2, 1, 3), 3) && eq_i64(o[1], I64S(0, 1, 3), 3));
    CHECK(eq_i64(o[2], I64S(0, 1, 0, 2, 1, 0), 6) && eq_i64(o[3], I64S(3, 2, 1), 3));
    free_outs(o, 4);
    /* rows of [[1,2],[3,4],[1,2],[0,9]] */
    CHECK_OK(run_model(unique(1, 0, 1), ARGS(IN(F32, F32S(1, 2, 3, 4, 1, 2, 0, 9), 2, 4, 2)), OUTS(F32, I64, I64, I64), o));
    CHECK(SHAPE(o[0], F32, 2, 3, 2) && eq_f32(o[0], F32S(0, 9, 1, 2, 3, 4), 6));
    CHECK(eq_i64(o[1], I64S(3, 0, 1), 3) && eq_i64(o[2], I64S(1, 2, 1, 0), 4) && eq_i64(o[3], I64S(1, 2, 1), 3));
    free_outs(o, 4);
    /* columns of the same matrix, with a negative axis: [1,3,1,0] < [2,4,2,9] */
    CHECK_OK(run_model(unique(1, -1, 1), ARGS(IN(F32, F32S(1, 2, 3, 4, 1, 2, 0, 9), 2, 4, 2)), OUTS(F32, I64, I64, I64), o));
    CHECK(SHAPE(o[0], F32, 2, 4, 2) && eq_f32(o[0], F32S(1, 2, 3, 4, 1, 2, 0, 9), 8));
    CHECK(eq_i64(o[1], I64S(0, 1), 2) && eq_i64(o[2], I64S(0, 1), 2) && eq_i64(o[3], I64S(1, 1), 2));
    free_outs(o, 4);
    /* values equal in their low 32 bits stay distinct */
    CHECK_OK(run_model(unique(0, 0, 1), ARGS(IN(I64, I64S((int64_t)1 << 32, 0, (int64_t)1 << 32, 1), 1, 4)),
                       OUTS(I64, I64, I64, I64), o));
    CHECK(eq_i64(o[0], I64S(0, 1, (int64_t)1 << 32), 3) && eq_i64(o[1], I64S(1, 3, 0), 3));
    CHECK(eq_i64(o[2], I64S(2, 0, 2, 1), 4) && eq_i64(o[3], I64S(1, 1, 2), 3));
    free_outs(o, 4);
    CHECK_OK(run_model(unique(0, 0, 1), ARGS(IN(F32, NULL, 1, 0)), OUTS(F32, I64, I64, I64), o));
    CHECK(SHAPE(o[0], F32, 1, 0) && SHAPE(o[1], I64, 1, 0) && SHAPE(o[2], I64, 1, 0) && SHAPE(o[3], I64, 1, 0));
    free_outs(o, 4);

    /* slices that are empty are all equal, found without walking the
     * other axis of 2^40 (the test would run for hours otherwise) */
    const int64_t p40 = (int64_t)1 << 40;
    CHECK_OK(run_model(unique(1, 1, 1), ARGS(IN(F32, NULL, 3, p40, 2, 0)), OUTS(F32, I64, I64, I64), o));
    CHECK(SHAPE(o[0], F32, 3, p40, 1, 0) && eq_i64(o[1], I64S(0), 1) && eq_i64(o[2], I64S(0, 0), 2) &&
          eq_i64(o[3], I64S(2), 1));
    free_outs(o, 4);
    /* no slices at all along the axis, and 2^40 of them outside it */
    CHECK_OK(run_model(unique(1, 1, 1), ARGS(IN(F32, NULL, 3, p40, 0, 4)), OUTS(F32, I64, I64, I64), o));
    CHECK(SHAPE(o[0], F32, 3, p40, 0, 4) && SHAPE(o[1], I64, 1, 0) && SHAPE(o[2], I64, 1, 0) && SHAPE(o[3], I64, 1, 0));
    free_outs(o, 4);
    /* 2^36 slices need 3 TiB of working memory: refused, not attempted */
    FAILS(run_model(unique(1, 1, 1), ARGS(IN(F32, NULL, 3, 0, (int64_t)1 << 36, 4)), OUTS(F32, I64, I64, I64), o),
          ONYX_OUT_OF_MEMORY, "larger than this machine's memory");

    FAILS(run_model(unique(1, 2, 1), ARGS(IN(F32, x, 2, 3, 2)), OUTS(F32, I64, I64, I64), o), ONYX_INVALID_MODEL,
                "Unique: axis 2 is out of range for rank 2 (allowed [-2, 1])");
}

/* ---- Trilu ---- */

static mb_model *trilu(int64_t upper, int with_k) {
    mb_model *m = mb_new(14);
    mb_node(m, "Trilu", with_k ? "i0,i1" : "i0", "o0");
    mb_attr_int(m, "upper", upper);
    return m;
}

static void test_trilu(void) {
    onyx_tensor *o[1];
    const arg x = IN(F32, SEQ, 2, 3, 4);
    CHECK_OK(run_model(trilu(1, 0), &x, 1, OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 3, 4) && eq_f32(o[0], F32S(1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12), 12));
    free_outs(o, 1);
    CHECK_OK(run_model(trilu(0, 1), ARGS(x, IN(I64, I64S(-1), 0, 0)), OUTS(F32), o));
    CHECK(eq_f32(o[0], F32S(0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0), 12));
    free_outs(o, 1);
    CHECK_OK(run_model(trilu(1, 1), ARGS(x, IN(I64, I64S(2), 1, 1)), OUTS(F32), o));
    CHECK(eq_f32(o[0], F32S(0, 0, 3, 4, 0, 0, 0, 8, 0, 0, 0, 0), 12));
    free_outs(o, 1);
    /* |k| beyond 2^32 keeps or clears everything; a 32-bit k would see 0 */
    const float *zeros = F32S(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    CHECK_OK(run_model(trilu(1, 1), ARGS(x, IN(I64, I64S(-((int64_t)1 << 32)), 0, 0)), OUTS(F32), o));
    CHECK(eq_f32(o[0], SEQ, 12));
    free_outs(o, 1);
    CHECK_OK(run_model(trilu(1, 1), ARGS(x, IN(I64, I64S((int64_t)1 << 32), 0, 0)), OUTS(F32), o));
    CHECK(eq_f32(o[0], zeros, 12));
    free_outs(o, 1);
    CHECK_OK(run_model(trilu(1, 1), ARGS(x, IN(I64, I64S(INT64_MIN), 0, 0)), OUTS(F32), o));
    CHECK(eq_f32(o[0], SEQ, 12));
    free_outs(o, 1);
    CHECK_OK(run_model(trilu(0, 1), ARGS(x, IN(I64, I64S(INT64_MAX), 0, 0)), OUTS(F32), o));
    CHECK(eq_f32(o[0], SEQ, 12));
    free_outs(o, 1);
    CHECK_OK(run_model(trilu(0, 1), ARGS(x, IN(I64, I64S(INT64_MIN), 0, 0)), OUTS(F32), o));
    CHECK(eq_f32(o[0], zeros, 12));
    free_outs(o, 1);
    /* a batch of two 2x2 matrices */
    CHECK_OK(run_model(trilu(0, 0), ARGS(IN(F32, SEQ, 3, 2, 2, 2)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 3, 2, 2, 2) && eq_f32(o[0], F32S(1, 0, 3, 4, 5, 0, 7, 8), 8));
    free_outs(o, 1);
    CHECK_OK(run_model(trilu(1, 0), ARGS(IN(F32, NULL, 2, 0, 3)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 0, 3));
    free_outs(o, 1);

    FAILS(run_model(trilu(1, 1), ARGS(x, IN(I32, I32S(0), 0, 0)), OUTS(F32), o), ONYX_INVALID_MODEL,
                "Trilu: k must be int64, got int32");
    FAILS(run_model(trilu(1, 0), ARGS(IN(F32, SEQ, 1, 3)), OUTS(F32), o), ONYX_INVALID_ARGUMENT,
                "Trilu: the input must have rank >= 2, got 1");
}

/* ---- Slice ---- */

/* Slice-13 with starts, ends and optional axes and steps as inputs. */
static onyx_status *slice(const arg *x, int n, const int64_t *starts, const int64_t *ends, const int64_t *axes,
                          const int64_t *steps, onyx_tensor **o) {
    mb_model *m = mb_new(13);
    mb_node(m, "Slice", axes && steps ? "i0,i1,i2,i3,i4" : axes ? "i0,i1,i2,i3" : steps ? "i0,i1,i2,,i3" : "i0,i1,i2",
            "o0");
    arg in[5] = {*x, IN(I64, starts, 1, n), IN(I64, ends, 1, n)};
    int k = 3;
    if (axes) in[k++] = IN(I64, axes, 1, n);
    if (steps) in[k++] = IN(I64, steps, 1, n);
    return run_model(m, in, k, OUTS(x->dt), o);
}

static void test_slice(void) {
    onyx_tensor *o[1];
    const arg x5 = IN(F32, SEQ, 1, 5), x34 = IN(F32, SEQ, 2, 3, 4);
    /* the INT64 sentinels of "from the start" and "to the end", both directions */
    CHECK_OK(slice(&x5, 1, I64S(INT64_MIN), I64S(INT64_MAX), NULL, NULL, o));
    CHECK(SHAPE(o[0], F32, 1, 5) && eq_f32(o[0], F32S(1, 2, 3, 4, 5), 5));
    free_outs(o, 1);
    CHECK_OK(slice(&x5, 1, I64S(INT64_MAX), I64S(INT64_MIN), NULL, I64S(-1), o));
    CHECK(SHAPE(o[0], F32, 1, 5) && eq_f32(o[0], F32S(5, 4, 3, 2, 1), 5));
    free_outs(o, 1);
    CHECK_OK(slice(&x5, 1, I64S(-1), I64S(INT64_MIN), I64S(0), I64S(-2), o));
    CHECK(eq_f32(o[0], F32S(5, 3, 1), 3));
    free_outs(o, 1);
    /* steps at the int64 limits take a single element */
    CHECK_OK(slice(&x5, 1, I64S(1), I64S(INT64_MAX), NULL, I64S(INT64_MAX), o));
    CHECK(SHAPE(o[0], F32, 1, 1) && eq_f32(o[0], F32S(2), 1));
    free_outs(o, 1);
    CHECK_OK(slice(&x5, 1, I64S(-2), I64S(INT64_MIN), NULL, I64S(INT64_MIN), o));
    CHECK(SHAPE(o[0], F32, 1, 1) && eq_f32(o[0], F32S(4), 1));
    free_outs(o, 1);
    /* negative starts and ends, and 2^33 clamped rather than wrapped */
    CHECK_OK(slice(&x5, 1, I64S(-3), I64S(-1), NULL, NULL, o));
    CHECK(eq_f32(o[0], F32S(3, 4), 2));
    free_outs(o, 1);
    CHECK_OK(slice(&x5, 1, I64S(WRAPS_TO_1), I64S(P33), NULL, NULL, o));
    CHECK(SHAPE(o[0], F32, 1, 0));
    free_outs(o, 1);
    CHECK_OK(slice(&x5, 1, I64S(-P33), I64S(WRAPS_TO_1), NULL, I64S(2), o));
    CHECK(eq_f32(o[0], F32S(1, 3, 5), 3));
    free_outs(o, 1);
    CHECK_OK(slice(&x5, 1, I64S(3), I64S(1), NULL, NULL, o));
    CHECK(SHAPE(o[0], F32, 1, 0));
    free_outs(o, 1);
    /* 2-D with negative axes and steps */
    CHECK_OK(slice(&x34, 2, I64S(-1, 0), I64S(INT64_MIN, 2), I64S(-1, -2), I64S(-3, 1), o));
    CHECK(SHAPE(o[0], F32, 2, 2, 2) && eq_f32(o[0], F32S(4, 1, 8, 5), 4));
    free_outs(o, 1);
    CHECK_OK(slice(&x34, 1, I64S(INT64_MAX), I64S(INT64_MIN), I64S(0), I64S(-2), o));
    CHECK(SHAPE(o[0], F32, 2, 2, 4) && eq_f32(o[0], F32S(9, 10, 11, 12, 1, 2, 3, 4), 8));
    free_outs(o, 1);
    const arg empty = IN(F32, NULL, 2, 0, 3);
    CHECK_OK(slice(&empty, 1, I64S(INT64_MAX), I64S(INT64_MIN), I64S(1), I64S(-1), o));
    CHECK(SHAPE(o[0], F32, 2, 0, 3));
    free_outs(o, 1);

    FAILS(slice(&x5, 1, I64S(0), I64S(5), NULL, I64S(0), o), ONYX_INVALID_ARGUMENT, "Slice: steps[0] is 0");
    FAILS(slice(&x5, 1, I64S(0), I64S(5), I64S(P33), NULL, o), ONYX_INVALID_ARGUMENT,
                "Slice: axes[0] = 8589934592 is out of range for rank 1 (allowed [-1, 0])");
    FAILS(slice(&x34, 2, I64S(0, 0), I64S(1, 1), I64S(1, -1), NULL, o), ONYX_INVALID_ARGUMENT,
                "Slice: axis 1 is given twice");
}

/* ---- Expand, Tile, Range: shapes and lengths given as int64 ---- */

static void test_expand_tile_range(void) {
    onyx_tensor *o[1];
    CHECK_OK(run_model(one_op(13, "Expand", "i0,i1", "o0"), ARGS(IN(F32, SEQ, 2, 3, 1), IN(I64, I64S(2, 1, 2), 1, 3)),
                       OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 3, 2, 3, 2) && eq_f32(o[0], F32S(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3), 12));
    free_outs(o, 1);
    CHECK_OK(run_model(one_op(13, "Expand", "i0,i1", "o0"), ARGS(IN(F32, SEQ, 1, 1), IN(I64, I64S(3, 0), 1, 2)),
                       OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 3, 0));
    free_outs(o, 1);
    FAILS(run_model(one_op(13, "Expand", "i0,i1", "o0"), ARGS(IN(F32, SEQ, 1, 3), IN(I64, I64S(P33), 1, 1)),
                          OUTS(F32), o),
                ONYX_INVALID_ARGUMENT, "Expand: input shape [3] cannot be broadcast to [8589934592]");
    FAILS(run_model(one_op(13, "Expand", "i0,i1", "o0"), ARGS(IN(F32, SEQ, 1, 3), IN(I64, I64S(-1, 3), 1, 2)),
                          OUTS(F32), o),
                ONYX_INVALID_ARGUMENT, "Expand: shape[0] = -1 is negative");

    CHECK_OK(run_model(one_op(13, "Tile", "i0,i1", "o0"), ARGS(IN(F32, SEQ, 2, 1, 2), IN(I64, I64S(2, 2), 1, 2)),
                       OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 2, 4) && eq_f32(o[0], F32S(1, 2, 1, 2, 1, 2, 1, 2), 8));
    free_outs(o, 1);
    CHECK_OK(run_model(one_op(13, "Tile", "i0,i1", "o0"), ARGS(IN(F32, SEQ, 2, 1, 2), IN(I64, I64S(0, 3), 1, 2)),
                       OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 2, 0, 6));
    free_outs(o, 1);
    /* an empty axis stays empty however large the repeat */
    CHECK_OK(run_model(one_op(13, "Tile", "i0,i1", "o0"), ARGS(IN(F32, NULL, 1, 0), IN(I64, I64S(P33), 1, 1)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 1, 0));
    free_outs(o, 1);
    /* an empty input with long axes: the output is empty, and nothing
     * walks its 2^40 rows (the copy's strides would overflow int64) */
    const int64_t p40 = (int64_t)1 << 40;
    CHECK_OK(run_model(one_op(13, "Tile", "i0,i1", "o0"), ARGS(IN(F32, NULL, 3, p40, 0, 4), IN(I64, I64S(1, 3, 2), 1, 3)),
                       OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 3, p40, 0, 8));
    free_outs(o, 1);
    CHECK_OK(run_model(one_op(13, "Transpose", "i0", "o0"), ARGS(IN(F32, NULL, 3, 0, (int64_t)1 << 30, (int64_t)1 << 30)),
                       OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 3, (int64_t)1 << 30, (int64_t)1 << 30, 0));
    free_outs(o, 1);
    mb_model *concat = one_op(13, "Concat", "i0,i0", "o0");
    mb_attr_int(concat, "axis", 1);
    CHECK_OK(run_model(concat, ARGS(IN(F32, NULL, 3, p40, 0, 4)), OUTS(F32), o));
    CHECK(SHAPE(o[0], F32, 3, p40, 0, 4));
    free_outs(o, 1);
    /* an empty shape whose other axes multiply past int64 is refused like
     * a huge one, whichever axis is 0 */
    FAILS(run_model(one_op(13, "Transpose", "i0", "o0"), ARGS(IN(F32, NULL, 3, 0, p40, p40)), OUTS(F32), o),
          ONYX_OUT_OF_MEMORY, "tensor size overflows");
    /* sizes whose element count overflows int64 fail before anything is allocated */
    FAILS(run_model(one_op(13, "Tile", "i0,i1", "o0"), ARGS(IN(F32, SEQ, 1, 4), IN(I64, I64S((int64_t)1 << 62), 1, 1)),
                          OUTS(F32), o),
                ONYX_INVALID_ARGUMENT, "Tile: repeats[0] = 4611686018427387904 makes axis 0 too large");
    FAILS(run_model(one_op(13, "Expand", "i0,i1", "o0"),
                          ARGS(IN(F32, SEQ, 1, 1), IN(I64, I64S((int64_t)1 << 62, 4), 1, 2)), OUTS(F32), o),
                ONYX_OUT_OF_MEMORY, "tensor size overflows");
    FAILS(run_model(one_op(13, "Tile", "i0,i1", "o0"), ARGS(IN(F32, SEQ, 1, 2), IN(I64, I64S(-1), 1, 1)),
                          OUTS(F32), o),
                ONYX_INVALID_ARGUMENT, "Tile: repeats[0] = -1 is negative");
    FAILS(run_model(one_op(13, "Tile", "i0,i1", "o0"), ARGS(IN(F32, SEQ, 1, 2), IN(I64, I64S(1, 1), 1, 2)),
                          OUTS(F32), o),
                ONYX_INVALID_ARGUMENT, "Tile: 'repeats' has 2 entries but the input has rank 1");

    /* Range over values past 2^32, and a span wider than INT64_MAX */
    CHECK_OK(run_model(one_op(11, "Range", "i0,i1,i2", "o0"),
                       ARGS(IN(I64, I64S(P33), 0, 0), IN(I64, I64S(P33 + 3), 0, 0), IN(I64, I64S(1), 0, 0)), OUTS(I64), o));
    CHECK(SHAPE(o[0], I64, 1, 3) && eq_i64(o[0], I64S(P33, P33 + 1, P33 + 2), 3));
    free_outs(o, 1);
    const int64_t q = (int64_t)1 << 62;
    CHECK_OK(run_model(one_op(11, "Range", "i0,i1,i2", "o0"),
                       ARGS(IN(I64, I64S(INT64_MIN), 0, 0), IN(I64, I64S(INT64_MAX), 0, 0), IN(I64, I64S(q), 0, 0)),
                       OUTS(I64), o));
    CHECK(SHAPE(o[0], I64, 1, 4) && eq_i64(o[0], I64S(INT64_MIN, -q, 0, q), 4));
    free_outs(o, 1);
    CHECK_OK(run_model(one_op(11, "Range", "i0,i1,i2", "o0"),
                       ARGS(IN(I64, I64S(INT64_MAX), 0, 0), IN(I64, I64S(INT64_MIN), 0, 0), IN(I64, I64S(-q), 0, 0)),
                       OUTS(I64), o));
    CHECK(SHAPE(o[0], I64, 1, 4) && eq_i64(o[0], I64S(INT64_MAX, INT64_MAX - q, INT64_MAX - q - q, INT64_MAX - q - q - q), 4));
    free_outs(o, 1);
    CHECK_OK(run_model(one_op(11, "Range", "i0,i1,i2", "o0"),
                       ARGS(IN(I64, I64S(5), 0, 0), IN(I64, I64S(5), 0, 0), IN(I64, I64S(-1), 0, 0)), OUTS(I64), o));
    CHECK(SHAPE(o[0], I64, 1, 0));
    free_outs(o, 1);
    FAILS(run_model(one_op(11, "Range", "i0,i1,i2", "o0"),
                          ARGS(IN(I64, I64S(0), 0, 0), IN(I64, I64S(3), 0, 0), IN(I64, I64S(0), 0, 0)), OUTS(I64), o),
                ONYX_INVALID_ARGUMENT, "Range: delta is 0");
}

/* A session of model m (freed here) at two threads, or NULL (counted
 * as a failure). */
static onyx_session *two_thread_session(mb_model *m) {
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session_options *o = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_threads(o, 2));
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &s));
    free(buf);
    onyx_session_options_free(o);
    return s;
}

/* Concat along channels of one image, then Split of the result back
 * into the same parts, large enough (at least 128 KiB) to be copied in
 * 64 KiB chunks of the whole by two threads: chunks end inside a part's
 * run and a part between two chunks is skipped whole; uint8 with odd run
 * lengths puts chunk ends at odd offsets. Each byte of the joined tensor
 * and of every split part is checked against its source. */
static void concat_chunked_case(onyx_dtype dt, const int64_t *chans, int n, int64_t H, int64_t W) {
    mb_model *m = mb_new(13);
    static const char *const names[] = {"i0", "i1", "i2", "i3"};
    static const char *const parts[] = {"s0", "s1", "s2", "s3", "o0"};
    const size_t es = dt == ONYX_UINT8 ? 1 : 4;
    int64_t total_c = 0;
    for (int i = 0; i < n; i++) {
        const int64_t d[4] = {1, chans[i], H, W};
        mb_input(m, names[i], dt, d, 4);
        mb_output(m, parts[i], dt, d, 4);
        total_c += chans[i];
    }
    const int64_t dy[4] = {1, total_c, H, W}, dn[1] = {n};
    mb_output(m, "o0", dt, dy, 4);
    mb_init_int64(m, "sizes", dn, 1, chans);
    mb_node(m, "Concat", n == 4 ? "i0,i1,i2,i3" : n == 3 ? "i0,i1,i2" : "i0,i1", "o0");
    mb_attr_int(m, "axis", 1);
    mb_node(m, "Split", "o0,sizes", n == 4 ? "s0,s1,s2,s3" : n == 3 ? "s0,s1,s2" : "s0,s1");
    mb_attr_int(m, "axis", 1);
    onyx_session *s = two_thread_session(m);
    if (!s) return;
    onyx_tensor *t[4] = {0}, *y[5] = {0};
    for (int i = 0; i < n; i++) {
        const int64_t d[4] = {1, chans[i], H, W};
        CHECK_OK(onyx_tensor_create(dt, d, 4, &t[i]));
        uint8_t *p = onyx_tensor_data(t[i]);
        for (size_t b = 0; b < onyx_tensor_nbytes(t[i]); b++) p[b] = (uint8_t)(b * 7 + (size_t)i * 31 + 1);
    }
    /* the parts first, then the whole, as run names them */
    const char *outs[5];
    for (int i = 0; i < n; i++) outs[i] = parts[i];
    outs[n] = "o0";
    CHECK_OK(onyx_session_run(s, names, (const onyx_tensor *const *)t, (size_t)n, outs, y, (size_t)n + 1));
    if (y[n]) {
        const uint8_t *py = onyx_tensor_data(y[n]);
        size_t at = 0, bad = 0, bad_split = 0;
        for (int i = 0; i < n; i++) {
            const uint8_t *p = onyx_tensor_data(t[i]), *q = y[i] ? onyx_tensor_data(y[i]) : NULL;
            const size_t nb = (size_t)(chans[i] * H * W) * es;
            CHECK(y[i] && onyx_tensor_nbytes(y[i]) == nb);
            for (size_t b = 0; b < nb; b++) {
                bad += py[at + b] != p[b];
                bad_split += q && q[b] != p[b];
            }
            at += nb;
        }
        CHECK(at == onyx_tensor_nbytes(y[n]));
        CHECK(bad == 0);
        CHECK(bad_split == 0);
    }
    for (int i = 0; i <= n; i++) onyx_tensor_free(y[i]);
    for (int i = 0; i < n; i++) onyx_tensor_free(t[i]);
    onyx_session_free(s);
}

/* Strings through Concat and Split (element copies that own their
 * strings): [2, 1] and [2, 2] joined along axis 1 at two threads, then
 * split back; every element checked in the whole and in both parts. */
static void test_concat_split_strings(void) {
    mb_model *m = mb_new(13);
    const int64_t d0[2] = {2, 1}, d1[2] = {2, 2}, dw[2] = {2, 3}, dn[1] = {2}, sizes[2] = {1, 2};
    mb_input(m, "i0", ONYX_STRING, d0, 2);
    mb_input(m, "i1", ONYX_STRING, d1, 2);
    mb_output(m, "s0", ONYX_STRING, d0, 2);
    mb_output(m, "s1", ONYX_STRING, d1, 2);
    mb_output(m, "o0", ONYX_STRING, dw, 2);
    mb_init_int64(m, "sizes", dn, 1, sizes);
    mb_node(m, "Concat", "i0,i1", "o0");
    mb_attr_int(m, "axis", 1);
    mb_node(m, "Split", "o0,sizes", "s0,s1");
    mb_attr_int(m, "axis", 1);
    onyx_session *s = two_thread_session(m);
    if (!s) return;
    static const char *const a[2] = {"a0", "a1"}, *const b[4] = {"b00", "b01", "b10", "b11"};
    static const char *const whole[6] = {"a0", "b00", "b01", "a1", "b10", "b11"};
    onyx_tensor *t[2] = {0}, *y[3] = {0};
    CHECK_OK(onyx_tensor_create(ONYX_STRING, d0, 2, &t[0]));
    CHECK_OK(onyx_tensor_create(ONYX_STRING, d1, 2, &t[1]));
    for (int i = 0; t[0] && i < 2; i++) CHECK_OK(onyx_tensor_set_string(t[0], i, a[i]));
    for (int i = 0; t[1] && i < 4; i++) CHECK_OK(onyx_tensor_set_string(t[1], i, b[i]));
    const char *names[2] = {"i0", "i1"}, *outs[3] = {"s0", "s1", "o0"};
    CHECK_OK(onyx_session_run(s, names, (const onyx_tensor *const *)t, 2, outs, y, 3));
    if (y[0] && y[1] && y[2]) {
        for (int i = 0; i < 6; i++) CHECK(strcmp(onyx_tensor_string(y[2], i), whole[i]) == 0);
        for (int i = 0; i < 2; i++) CHECK(strcmp(onyx_tensor_string(y[0], i), a[i]) == 0);
        for (int i = 0; i < 4; i++) CHECK(strcmp(onyx_tensor_string(y[1], i), b[i]) == 0);
    } else {
        CHECK(0);
    }
    for (int i = 0; i < 3; i++) onyx_tensor_free(y[i]);
    onyx_tensor_free(t[0]);
    onyx_tensor_free(t[1]);
    onyx_session_free(s);
}

/* Split with omitted outputs: one at the end leaves the others in place;
 * before a present output, the kernel takes every size from the node
 * (the 'split' input, the attribute before opset 13, num_outputs' equal
 * parts) to place the later outputs, where it once read them from the
 * omitted one's place. */
static void test_split_omitted(void) {
    onyx_tensor *o[2] = {0};
    const float x[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    CHECK_OK(run_model(one_op(13, "Split", "i0,i1", "o0,o1,"), ARGS(IN(F32, x, 1, 6), IN(I64, I64S(1, 2, 3), 1, 3)),
                       OUTS(F32, F32), o));
    CHECK(SHAPE(o[0], F32, 1, 1) && eq_f32(o[0], F32S(0), 1));
    CHECK(SHAPE(o[1], F32, 1, 2) && eq_f32(o[1], F32S(1, 2), 2));
    free_outs(o, 2);
    CHECK_OK(run_model(one_op(13, "Split", "i0,i1", "o0,,o1"), ARGS(IN(F32, x, 1, 6), IN(I64, I64S(1, 2, 3), 1, 3)),
                       OUTS(F32, F32), o));
    CHECK(SHAPE(o[0], F32, 1, 1) && eq_f32(o[0], F32S(0), 1));
    CHECK(SHAPE(o[1], F32, 1, 3) && eq_f32(o[1], F32S(3, 4, 5), 3));
    free_outs(o, 2);
    /* Split-18 by num_outputs: 8 into 3, 3 and 2 */
    mb_model *m = one_op(18, "Split", "i0", ",o0,o1");
    mb_attr_int(m, "num_outputs", 3);
    CHECK_OK(run_model(m, ARGS(IN(F32, x, 1, 8)), OUTS(F32, F32), o));
    CHECK(SHAPE(o[0], F32, 1, 3) && eq_f32(o[0], F32S(3, 4, 5), 3));
    CHECK(SHAPE(o[1], F32, 1, 2) && eq_f32(o[1], F32S(6, 7), 2));
    free_outs(o, 2);
    /* opset 11: sizes in the attribute, along axis 1 of [2, 4] */
    m = one_op(11, "Split", "i0", ",,o0,o1");
    mb_attr_int(m, "axis", 1);
    mb_attr_ints(m, "split", I64S(1, 1, 1, 1), 4);
    CHECK_OK(run_model(m, ARGS(IN(F32, x, 2, 2, 4)), OUTS(F32, F32), o));
    CHECK(SHAPE(o[0], F32, 2, 2, 1) && eq_f32(o[0], F32S(2, 6), 2));
    CHECK(SHAPE(o[1], F32, 2, 2, 1) && eq_f32(o[1], F32S(3, 7), 2));
    free_outs(o, 2);
    /* a split list given at run time that does not fit the axis or the
     * outputs, with an omitted output first: run-time inference's clear
     * error, before the kernel reads anything */
    FAILS(run_model(one_op(13, "Split", "i0,i1", ",o0,o1"), ARGS(IN(F32, x, 1, 6), IN(I64, I64S(1, 2, 4), 1, 3)),
                    OUTS(F32, F32), o),
          ONYX_INVALID_ARGUMENT, "split sizes add up to 7 but axis 0 has size 6");
    FAILS(run_model(one_op(13, "Split", "i0,i1", ",o0,o1"), ARGS(IN(F32, x, 1, 6), IN(I64, I64S(1, 5), 1, 2)),
                    OUTS(F32, F32), o),
          ONYX_INVALID_MODEL, "entries");
    /* equal parts without a list: 6 into 3 */
    CHECK_OK(run_model(one_op(13, "Split", "i0", "o0,,o1"), ARGS(IN(F32, x, 1, 6)), OUTS(F32, F32), o));
    CHECK(SHAPE(o[0], F32, 1, 2) && eq_f32(o[0], F32S(0, 1), 2));
    CHECK(SHAPE(o[1], F32, 1, 2) && eq_f32(o[1], F32S(4, 5), 2));
    free_outs(o, 2);
}

static void test_concat_chunked(void) {
    concat_chunked_case(ONYX_FLOAT32, (const int64_t[]){5, 3, 7}, 3, 97, 101);
    concat_chunked_case(ONYX_FLOAT32, (const int64_t[]){16, 0, 16}, 3, 128, 128);
    concat_chunked_case(ONYX_UINT8, (const int64_t[]){3, 1, 5, 2}, 4, 211, 223);
}

int main(void) {
    CHECK_OK(onyx_env_create(&env));
    if (!env) CHECK_DONE();
    test_gather();
    test_gather_elements();
    test_gather_nd();
    test_scatter_nd();
    test_scatter_elements();
    test_scatter_elements_split();
    test_topk();
    test_nonzero();
    test_onehot();
    test_compress();
    test_unique();
    test_trilu();
    test_slice();
    test_expand_tile_range();
    test_concat_chunked();
    test_concat_split_strings();
    test_split_omitted();
    onyx_env_free(env);
    CHECK_DONE();
}
