/* The optimizer passes each change the graph as they claim and keep its
 * values:
 * - basic: common-subexpression elimination (equal constants, equal
 *   nodes; never random operators), a Cast to its input's own type
 *   removed, shape folding (Shape/Gather of the
 *   static dimensions of a dynamic-batch input fold into a constant
 *   Reshape target, the batch dimension stays), dead-code elimination;
 *   outputs equal to the unoptimized graph's exactly.
 * - all: MatMul + bias + activation -> onyx.FusedMatMul for every
 *   activation form, the Erf-written GELU -> Gelu (ONNX 20's, or
 *   com.microsoft's below opset 20) and into FusedMatMul, Gemm + activation
 *   -> FusedMatMul (transB: the weights read as stored), LayerNormalization
 *   written out with ReduceMean -> LayerNormalization, a power-of-two
 *   scale of a product moved onto its smaller operand (the same bits), a
 *   squeeze-and-excitation gate (Mul by [N, C, 1, 1]) into the next 1x1
 *   Conv's input scale (the same bits; a gate with another reader or a
 *   factor per position stays), a constant Pad of the spatial axes into
 *   its readers' padding (a Relu's zeros before a max pool and a
 *   convolution; minus infinity before a max pool; left: zeros of a value
 *   that may be negative before a max pool, pads as wide as its kernel,
 *   the channel axis); a
 *   product or sum with a second reader is not fused. Outputs within 1e-5 (relative,
 *   with a 1e-5 floor) of level basic's: the fused kernels compute the same
 *   float operations, the GELU's x / sqrt 2 becomes x * (1 / sqrt 2). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model_builder.h"
#include "session_util.h"

static float frand(unsigned *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 65536.0f - 0.5f;
}

/* a and b of the same shape and type, element by element within
 * rel * |b| + abs (0, 0: bit-equal values) */
static void check_same(onyx_tensor *a, onyx_tensor *b, double rel, double abs_tol) {
    CHECK(a && b);
    if (!a || !b) return;
    CHECK(onyx_tensor_dtype(a) == onyx_tensor_dtype(b));
    CHECK(onyx_tensor_rank(a) == onyx_tensor_rank(b));
    CHECK(onyx_tensor_numel(a) == onyx_tensor_numel(b));
    if (onyx_tensor_numel(a) != onyx_tensor_numel(b)) return;
    for (int d = 0; d < onyx_tensor_rank(a); d++)
        CHECK(onyx_tensor_dims(a)[d] == onyx_tensor_dims(b)[d]);
    int64_t n = onyx_tensor_numel(a);
    if (onyx_tensor_dtype(a) == ONYX_INT64) {
        const int64_t *x = onyx_tensor_data(a), *y = onyx_tensor_data(b);
        for (int64_t i = 0; i < n; i++) CHECK(x[i] == y[i]);
        return;
    }
    const float *x = onyx_tensor_data(a), *y = onyx_tensor_data(b);
    for (int64_t i = 0; i < n; i++) CHECK_NEAR(x[i], y[i], rel * fabs(y[i]) + abs_tol);
}

/* ---- basic: CSE, shape folding, dead code ---- */

static uint8_t *basic_model(size_t *len) {
    mb_model *m = mb_new(17);
    int64_t dx[] = {-1, 4, 6}, dy[] = {-1, 24}, d1[] = {1};
    mb_input(m, "x", ONYX_FLOAT32, dx, 3);
    mb_output(m, "y", ONYX_FLOAT32, dy, 2);
    mb_output(m, "bsz", ONYX_INT64, d1, 1);
    mb_output(m, "pp", ONYX_INT64, d1, 1);
    mb_output(m, "z", ONYX_FLOAT32, dx, 3);
    mb_output(m, "uu", ONYX_FLOAT32, dx, 3);
    mb_output(m, "cn", ONYX_FLOAT32, dx, 3);
    mb_output(m, "ci", ONYX_INT64, dx, 3);
    int64_t i0[] = {0}, i1[] = {1}, i2[] = {2}, neg1[] = {-1};
    mb_init_int64(m, "idx0", d1, 1, i0);
    mb_init_int64(m, "idx1", d1, 1, i1);
    mb_init_int64(m, "idx1b", d1, 1, i1); /* the same constant again */
    mb_init_int64(m, "idx2", d1, 1, i2);
    mb_init_int64(m, "neg1", d1, 1, neg1);
    mb_node(m, "Shape", "x", "s");
    mb_node(m, "Gather", "s,idx1", "g1");
    mb_node(m, "Gather", "s,idx1b", "g1b");
    mb_node(m, "Gather", "s,idx2", "g2");
    mb_node(m, "Mul", "g1,g2", "p");
    mb_node(m, "Mul", "g1b,g2", "pb");
    mb_node(m, "Concat", "neg1,p", "t");
    mb_attr_int(m, "axis", 0);
    mb_node(m, "Reshape", "x,t", "y");
    mb_node(m, "Gather", "s,idx0", "bsz"); /* the batch: unknown at load */
    mb_node(m, "Add", "p,pb", "pp");
    mb_node(m, "Relu", "x", "r1");
    mb_node(m, "Relu", "x", "r2");
    mb_node(m, "Add", "r1,r2", "z");
    /* read by nobody */
    mb_node(m, "Sigmoid", "x", "d1");
    mb_node(m, "Tanh", "d1", "d2");
    /* two samples with the same seed are still two samples */
    mb_node(m, "RandomUniformLike", "x", "u1");
    mb_attr_float(m, "seed", 1.0f);
    mb_node(m, "RandomUniformLike", "x", "u2");
    mb_attr_float(m, "seed", 1.0f);
    mb_node(m, "Add", "u1,u2", "uu");
    /* a Cast to the type x has is x; one to another type stays */
    mb_node(m, "Cast", "x", "cx");
    mb_attr_int(m, "to", ONYX_FLOAT32);
    mb_node(m, "Neg", "cx", "cn");
    mb_node(m, "Cast", "x", "ci");
    mb_attr_int(m, "to", ONYX_INT64);
    uint8_t *buf = mb_serialize(m, len);
    mb_free(m);
    return buf;
}

static void test_basic(onyx_env *env) {
    size_t len;
    uint8_t *buf = basic_model(&len);
    onyx_session *none = tu_session(env, buf, len, ONYX_OPT_NONE, 0);
    onyx_session *basic = tu_session(env, buf, len, ONYX_OPT_BASIC, 0);
    free(buf);
    if (!none || !basic) goto out;
    CHECK(tu_count_op(none, "", "Relu") == 2);
    CHECK(tu_count_op(none, "", "Gather") == 4);
    CHECK(tu_count_op(basic, "", "Relu") == 1);    /* CSE */
    CHECK(tu_count_op(basic, "", "Shape") == 1);   /* for the batch dimension */
    CHECK(tu_count_op(basic, "", "Gather") == 1);  /* the batch dimension */
    CHECK(tu_count_op(basic, "", "Mul") == 0);     /* folded */
    CHECK(tu_count_op(basic, "", "Concat") == 0);  /* folded */
    CHECK(tu_count_op(basic, "", "Reshape") == 1); /* now with a constant target */
    CHECK(tu_count_op(basic, "", "Sigmoid") == 0); /* dead */
    CHECK(tu_count_op(basic, "", "Tanh") == 0);    /* dead */
    CHECK(tu_count_op(basic, "", "RandomUniformLike") == 2);
    CHECK(tu_count_op(basic, "", "Add") == 2); /* z and uu; pp folded */
    CHECK(tu_count_op(none, "", "Cast") == 2);
    CHECK(tu_count_op(basic, "", "Cast") == 1); /* float to float removed */

    enum { B = 2, N = B * 4 * 6 };
    float x[N];
    unsigned seed = 7;
    for (int i = 0; i < N; i++) x[i] = frand(&seed) * 4.0f;
    int64_t dims[] = {B, 4, 6};
    const char *names[] = {"y", "bsz", "pp", "z", "cn", "ci"};
    onyx_tensor *on[6], *ob[6];
    tu_run_x(none, x, dims, 3, names, on, 6);
    tu_run_x(basic, x, dims, 3, names, ob, 6);
    for (int k = 0; k < 6; k++) check_same(ob[k], on[k], 0.0, 0.0);
    if (ob[4] && ob[5]) {
        const float *cn = onyx_tensor_data(ob[4]);
        const int64_t *ci = onyx_tensor_data(ob[5]);
        for (int i = 0; i < N; i++) {
            CHECK(cn[i] == -x[i]);
            CHECK(ci[i] == (int64_t)x[i]);
        }
    }
    if (ob[0] && ob[1] && ob[2] && ob[3]) {
        CHECK(onyx_tensor_dims(ob[0])[0] == B && onyx_tensor_dims(ob[0])[1] == 24);
        const float *y = onyx_tensor_data(ob[0]), *z = onyx_tensor_data(ob[3]);
        for (int i = 0; i < N; i++) {
            CHECK(y[i] == x[i]);
            CHECK(z[i] == 2.0f * (x[i] > 0 ? x[i] : 0.0f));
        }
        CHECK(((const int64_t *)onyx_tensor_data(ob[1]))[0] == B);
        CHECK(((const int64_t *)onyx_tensor_data(ob[2]))[0] == 48);
    }
    for (int k = 0; k < 6; k++) {
        onyx_tensor_free(on[k]);
        onyx_tensor_free(ob[k]);
    }
out:
    onyx_session_free(none);
    onyx_session_free(basic);
}

/* ---- basic: a Reshape target with the batch in it still tells the
 * other dimensions, so shape arithmetic after it folds ---- */

static void test_partial_shapes(onyx_env *env) {
    mb_model *m = mb_new(17);
    int64_t dx[] = {-1, 4, 6}, d1[] = {1}, d2[] = {2};
    mb_input(m, "x", ONYX_FLOAT32, dx, 3);
    mb_output(m, "r2", ONYX_FLOAT32, NULL, -1);
    int64_t i0 = 0, i2[] = {2}, two_twelve[] = {2, 12}, a0[] = {0}, neg1[] = {-1};
    mb_init_int64(m, "i0", NULL, 0, &i0);
    mb_init_int64(m, "i2", d1, 1, i2);
    mb_init_int64(m, "two_twelve", d2, 1, two_twelve);
    mb_init_int64(m, "a0", d1, 1, a0);
    mb_init_int64(m, "neg1", d1, 1, neg1);
    mb_node(m, "Shape", "x", "s");
    mb_node(m, "Gather", "s,i0", "b"); /* the batch, a scalar */
    mb_node(m, "Unsqueeze", "b,a0", "bu");
    mb_node(m, "Concat", "bu,two_twelve", "t");
    mb_attr_int(m, "axis", 0);
    mb_node(m, "Reshape", "x,t", "r"); /* [batch, 2, 12] */
    mb_node(m, "Shape", "r", "s2");
    mb_node(m, "Gather", "s2,i2", "last"); /* 12, known at load */
    mb_node(m, "Concat", "neg1,last", "t2");
    mb_attr_int(m, "axis", 0);
    mb_node(m, "Reshape", "r,t2", "r2"); /* [2 batch, 12] */
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *none = tu_session(env, buf, len, ONYX_OPT_NONE, 0);
    onyx_session *basic = tu_session(env, buf, len, ONYX_OPT_BASIC, 0);
    free(buf);
    if (none && basic) {
        CHECK(tu_count_op(none, "", "Shape") == 2);
        /* Shape(r) folds only with r's dimensions known; then t2 is a
         * constant, r2 reshapes x directly and the batch arithmetic that
         * only r needed goes: one node is left */
        CHECK(tu_count_op(basic, "", "Shape") == 0);
        CHECK(tu_count_op(basic, "", "Concat") == 0);
        CHECK(tu_count_op(basic, "", "Reshape") == 1);
        CHECK(onyx_session_node_count(basic) == 1);
        float x[3 * 24];
        for (int i = 0; i < 72; i++) x[i] = (float)i;
        int64_t dims[] = {3, 4, 6};
        const char *names[] = {"r2"};
        onyx_tensor *on[1], *ob[1];
        tu_run_x(none, x, dims, 3, names, on, 1);
        tu_run_x(basic, x, dims, 3, names, ob, 1);
        check_same(ob[0], on[0], 0.0, 0.0);
        if (ob[0]) CHECK(onyx_tensor_dims(ob[0])[0] == 6 && onyx_tensor_dims(ob[0])[1] == 12);
        onyx_tensor_free(on[0]);
        onyx_tensor_free(ob[0]);
    }
    onyx_session_free(none);
    onyx_session_free(basic);
}

/* ---- basic: Transpose / Reshape / Squeeze-Unsqueeze pairs ---- */

static void test_transforms(onyx_env *env) {
    mb_model *m = mb_new(17);
    int64_t dx[] = {2, 3, 4}, d2[] = {2}, d1[] = {1};
    mb_input(m, "x", ONYX_FLOAT32, dx, 3);
    static const char *const OUTS[] = {"y1", "y2", "y3", "y4", "y5"};
    for (int i = 0; i < 5; i++) mb_output(m, OUTS[i], ONYX_FLOAT32, NULL, -1);
    int64_t p1[] = {1, 0, 2}, p2[] = {2, 0, 1}, s64[] = {6, 4}, s46[] = {4, 6}, s0[] = {0, -1},
            a0[] = {0};
    mb_init_int64(m, "s64", d2, 1, s64);
    mb_init_int64(m, "s46", d2, 1, s46);
    mb_init_int64(m, "s0", d2, 1, s0);
    mb_init_int64(m, "a0", d1, 1, a0);
    mb_node(m, "Transpose", "x", "t1");
    mb_attr_ints(m, "perm", p1, 3);
    mb_node(m, "Transpose", "t1", "t2");
    mb_attr_ints(m, "perm", p1, 3);
    mb_node(m, "Relu", "t2", "y1"); /* the pair is the identity */
    mb_node(m, "Transpose", "x", "u1");
    mb_attr_ints(m, "perm", p2, 3);
    mb_node(m, "Transpose", "u1", "y2"); /* one Transpose, perm [1, 2, 0] */
    mb_attr_ints(m, "perm", p2, 3);
    mb_node(m, "Reshape", "x,s64", "r1");
    mb_node(m, "Reshape", "r1,s46", "y3"); /* one Reshape */
    mb_node(m, "Reshape", "r1,s0", "y4");  /* a 0 copies r1's dimension: kept */
    mb_node(m, "Unsqueeze", "x,a0", "q1");
    mb_node(m, "Squeeze", "q1,a0", "q2");
    mb_node(m, "Neg", "q2", "y5");
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *none = tu_session(env, buf, len, ONYX_OPT_NONE, 0);
    onyx_session *basic = tu_session(env, buf, len, ONYX_OPT_BASIC, 0);
    free(buf);
    if (none && basic) {
        CHECK(tu_count_op(none, "", "Transpose") == 4);
        CHECK(tu_count_op(basic, "", "Transpose") == 1);
        CHECK(tu_count_op(basic, "", "Reshape") == 3);
        CHECK(tu_count_op(basic, "", "Unsqueeze") == 0);
        CHECK(tu_count_op(basic, "", "Squeeze") == 0);
        float x[24];
        for (int i = 0; i < 24; i++) x[i] = (float)i - 11.5f;
        onyx_tensor *on[5], *ob[5];
        tu_run_x(none, x, dx, 3, OUTS, on, 5);
        tu_run_x(basic, x, dx, 3, OUTS, ob, 5);
        for (int k = 0; k < 5; k++) {
            check_same(ob[k], on[k], 0.0, 0.0);
            onyx_tensor_free(on[k]);
            onyx_tensor_free(ob[k]);
        }
    }
    onyx_session_free(none);
    onyx_session_free(basic);
}

/* ---- all: MatMul fusions and the GELU pattern ---- */

enum { K = 8, NO = 5, LAYERS = 8 };

static void linear(mb_model *m, unsigned *seed, int i) {
    float w[K * NO], b[NO];
    for (int j = 0; j < K * NO; j++) w[j] = frand(seed);
    for (int j = 0; j < NO; j++) b[j] = frand(seed);
    int64_t dw[] = {K, NO}, db[] = {NO};
    char wn[16], bn[16];
    snprintf(wn, sizeof wn, "w%d", i);
    snprintf(bn, sizeof bn, "b%d", i);
    mb_init_float(m, wn, dw, 2, w);
    mb_init_float(m, bn, db, 1, b);
}

static uint8_t *fusion_model(size_t *len) {
    unsigned seed = 4242;
    mb_model *m = mb_new(20);
    int64_t dx[] = {2, 3, K}, dy[] = {2, 3, NO};
    mb_input(m, "x", ONYX_FLOAT32, dx, 3);
    static const char *const OUTS[] = {"y1", "y2",  "y3", "y4",  "y5",
                                       "y6", "y6b", "y7", "y7b", "y8"};
    for (size_t i = 0; i < sizeof OUTS / sizeof OUTS[0]; i++)
        mb_output(m, OUTS[i], ONYX_FLOAT32, dy, 3);
    for (int i = 1; i <= LAYERS; i++) linear(m, &seed, i);
    float cmin = -0.1f, cmax = 0.2f, sqrt2 = 1.41421356f, one = 1.0f, half = 0.5f;
    mb_init_float(m, "cmin", NULL, 0, &cmin);
    mb_init_float(m, "cmax", NULL, 0, &cmax);
    mb_init_float(m, "sqrt2", NULL, 0, &sqrt2);
    mb_init_float(m, "one", NULL, 0, &one);
    mb_init_float(m, "half", NULL, 0, &half);
    mb_node(m, "MatMul", "x,w1", "m1");
    mb_node(m, "Add", "m1,b1", "a1");
    mb_node(m, "Relu", "a1", "y1");
    mb_node(m, "MatMul", "x,w2", "m2");
    mb_node(m, "Add", "b2,m2", "a2"); /* bias first */
    mb_node(m, "Gelu", "a2", "y2");
    mb_attr_string(m, "approximate", "tanh");
    mb_node(m, "MatMul", "x,w3", "m3");
    mb_node(m, "Add", "m3,b3", "a3");
    mb_node(m, "Sigmoid", "a3", "s3");
    mb_node(m, "Mul", "s3,a3", "y3"); /* SiLU */
    mb_node(m, "MatMul", "x,w4", "m4");
    mb_node(m, "Add", "m4,b4", "y4"); /* bias alone */
    mb_node(m, "MatMul", "x,w5", "m5");
    mb_node(m, "Add", "m5,b5", "a5");
    mb_node(m, "Clip", "a5,cmin,cmax", "y5");
    mb_node(m, "MatMul", "x,w6", "m6");
    mb_node(m, "Add", "m6,b6", "a6"); /* two readers: the activation stays */
    mb_node(m, "HardSwish", "a6", "y6");
    mb_node(m, "Relu", "a6", "y6b");
    mb_node(m, "MatMul", "x,w7", "m7"); /* two readers: nothing fuses */
    mb_node(m, "Add", "m7,b7", "y7");
    mb_node(m, "Neg", "m7", "y7b");
    mb_node(m, "MatMul", "x,w8", "m8"); /* GELU written out */
    mb_node(m, "Add", "m8,b8", "a8");
    mb_node(m, "Div", "a8,sqrt2", "g_d");
    mb_node(m, "Erf", "g_d", "g_e");
    mb_node(m, "Add", "g_e,one", "g_a");
    mb_node(m, "Mul", "a8,g_a", "g_m");
    mb_node(m, "Mul", "g_m,half", "y8");
    uint8_t *buf = mb_serialize(m, len);
    mb_free(m);
    return buf;
}

static void test_fusions(onyx_env *env) {
    size_t len;
    uint8_t *buf = fusion_model(&len);
    onyx_session *basic = tu_session(env, buf, len, ONYX_OPT_BASIC, 0);
    onyx_session *all = tu_session(env, buf, len, ONYX_OPT_ALL, 0);
    free(buf);
    if (!basic || !all) goto out;
    CHECK(tu_count_op(basic, "", "MatMul") == LAYERS);
    CHECK(tu_count_op(all, "onyx", "FusedMatMul") == 7);
    CHECK(tu_count_op(all, "", "MatMul") == 1); /* m7 */
    CHECK(tu_count_op(all, "", "Add") == 1);    /* y7 */
    CHECK(tu_count_op(all, "", "Gelu") == 0);
    CHECK(tu_count_op(all, "", "Erf") == 0);
    CHECK(tu_count_op(all, "", "Sigmoid") == 0);
    CHECK(tu_count_op(all, "", "Clip") == 0);
    CHECK(tu_count_op(all, "", "HardSwish") == 1);
    CHECK(tu_count_op(all, "", "Relu") == 1); /* y6b's */
    CHECK(tu_count_op(all, "", "Neg") == 1);

    enum { N = 2 * 3 * K };
    float x[N];
    unsigned seed = 99;
    for (int i = 0; i < N; i++) x[i] = frand(&seed) * 6.0f;
    int64_t dims[] = {2, 3, K};
    const char *names[] = {"y1", "y2", "y3", "y4", "y5", "y6", "y6b", "y7", "y7b", "y8"};
    enum { NOUT = sizeof names / sizeof names[0] };
    onyx_tensor *ob[NOUT], *oa[NOUT];
    tu_run_x(basic, x, dims, 3, names, ob, NOUT);
    tu_run_x(all, x, dims, 3, names, oa, NOUT);
    for (int k = 0; k < NOUT; k++) {
        check_same(oa[k], ob[k], 1e-5, 1e-5);
        onyx_tensor_free(oa[k]);
        onyx_tensor_free(ob[k]);
    }
out:
    onyx_session_free(basic);
    onyx_session_free(all);
}

/* Gemm + activation: with transB (the fused node reads the weights as
 * stored, transposed) and without; a Gemm with no activation stays a
 * Gemm. M rows: 1 takes the row-vector product, more the packed one. */
static void test_gemm_activation(onyx_env *env, int M) {
    enum { M_MAX = 40 };
    unsigned seed = 555;
    mb_model *m = mb_new(17);
    int64_t dx[] = {M, K}, dy[] = {M, NO}, dwt[] = {NO, K}, dw[] = {K, NO}, db[] = {NO};
    mb_input(m, "x", ONYX_FLOAT32, dx, 2);
    mb_output(m, "y1", ONYX_FLOAT32, dy, 2);
    mb_output(m, "y2", ONYX_FLOAT32, dy, 2);
    mb_output(m, "y3", ONYX_FLOAT32, dy, 2);
    float wt[NO * K], w[K * NO], b[NO];
    for (int i = 0; i < NO * K; i++) wt[i] = frand(&seed);
    for (int i = 0; i < NO * K; i++) w[i] = frand(&seed);
    for (int i = 0; i < NO; i++) b[i] = frand(&seed);
    mb_init_float(m, "wt", dwt, 2, wt);
    mb_init_float(m, "w", dw, 2, w);
    mb_init_float(m, "b", db, 1, b);
    mb_node(m, "Gemm", "x,wt,b", "g1");
    mb_attr_int(m, "transB", 1);
    mb_node(m, "HardSwish", "g1", "y1");
    mb_node(m, "Gemm", "x,w", "g2");
    mb_node(m, "LeakyRelu", "g2", "y2");
    mb_attr_float(m, "alpha", 0.3f);
    mb_node(m, "Gemm", "x,w,b", "y3"); /* no activation */
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *basic = tu_session(env, buf, len, ONYX_OPT_BASIC, 0);
    onyx_session *all = tu_session(env, buf, len, ONYX_OPT_ALL, 0);
    free(buf);
    if (basic && all) {
        CHECK(tu_count_op(all, "onyx", "FusedMatMul") == 2);
        CHECK(tu_count_op(all, "", "Gemm") == 1);
        CHECK(tu_count_op(all, "", "HardSwish") == 0);
        CHECK(tu_count_op(all, "", "LeakyRelu") == 0);
        float x[M_MAX * K];
        for (int i = 0; i < M * K; i++) x[i] = frand(&seed) * 8.0f;
        const char *names[] = {"y1", "y2", "y3"};
        onyx_tensor *ob[3], *oa[3];
        tu_run_x(basic, x, dx, 2, names, ob, 3);
        tu_run_x(all, x, dx, 2, names, oa, 3);
        for (int k = 0; k < 3; k++) {
            check_same(oa[k], ob[k], 1e-5, 1e-5);
            onyx_tensor_free(oa[k]);
            onyx_tensor_free(ob[k]);
        }
    }
    onyx_session_free(basic);
    onyx_session_free(all);
}

/* Below opset 20 the GELU becomes com.microsoft's Gelu: the other
 * operand order, (x * 0.5) * (1 + erf(x * (1 / sqrt 2))). */
static void test_gelu_opset17(onyx_env *env) {
    mb_model *m = mb_new(17);
    int64_t dx[] = {3, 7};
    mb_input(m, "x", ONYX_FLOAT32, dx, 2);
    mb_output(m, "y", ONYX_FLOAT32, dx, 2);
    float inv = 0.70710678f, one = 1.0f, half = 0.5f;
    mb_init_float(m, "inv", NULL, 0, &inv);
    mb_init_float(m, "one", NULL, 0, &one);
    mb_init_float(m, "half", NULL, 0, &half);
    mb_node(m, "Mul", "inv,x", "d");
    mb_node(m, "Erf", "d", "e");
    mb_node(m, "Add", "one,e", "a");
    mb_node(m, "Mul", "x,half", "h");
    mb_node(m, "Mul", "h,a", "y");
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *basic = tu_session(env, buf, len, ONYX_OPT_BASIC, 0);
    onyx_session *all = tu_session(env, buf, len, ONYX_OPT_ALL, 0);
    free(buf);
    if (basic && all) {
        CHECK(onyx_session_node_count(all) == 1);
        CHECK(tu_count_op(all, "com.microsoft", "Gelu") == 1);
        float x[21];
        for (int i = 0; i < 21; i++) x[i] = (float)(i - 10) * 0.45f;
        const char *names[] = {"y"};
        onyx_tensor *ob[1], *oa[1];
        tu_run_x(basic, x, dx, 2, names, ob, 1);
        tu_run_x(all, x, dx, 2, names, oa, 1);
        check_same(oa[0], ob[0], 1e-5, 1e-6);
        if (oa[0]) {
            const float *y = onyx_tensor_data(oa[0]);
            for (int i = 0; i < 21; i++)
                CHECK_NEAR(y[i], 0.5 * x[i] * (1.0 + erf(x[i] / sqrt(2.0))),
                           1e-6 + 1e-6 * fabs(x[i]));
        }
        onyx_tensor_free(oa[0]);
        onyx_tensor_free(ob[0]);
    }
    onyx_session_free(basic);
    onyx_session_free(all);
}

/* ---- all: LayerNormalization written out (opset 12: ONNX Runtime's
 * ONNX-domain LayerNormalization of opsets 1..16) ---- */

static void test_layernorm(onyx_env *env) {
    enum { H = 8 };
    mb_model *m = mb_new(12);
    int64_t dx[] = {2, 3, H}, dh[] = {H};
    mb_input(m, "x", ONYX_FLOAT32, dx, 3);
    mb_output(m, "y1", ONYX_FLOAT32, dx, 3);
    mb_output(m, "y2", ONYX_FLOAT32, dx, 3);
    float gamma[H], beta[H], two = 2.0f, eps1 = 1e-5f, eps2 = 1e-6f;
    unsigned seed = 31;
    for (int i = 0; i < H; i++) {
        gamma[i] = 1.0f + frand(&seed);
        beta[i] = frand(&seed);
    }
    mb_init_float(m, "gamma", dh, 1, gamma);
    mb_init_float(m, "beta", dh, 1, beta);
    mb_init_float(m, "two", NULL, 0, &two);
    mb_init_float(m, "eps1", NULL, 0, &eps1);
    mb_init_float(m, "eps2", NULL, 0, &eps2);
    int64_t last[] = {-1}, two_ax[] = {2};
    /* Pow form, axis -1, with beta */
    mb_node(m, "ReduceMean", "x", "m1");
    mb_attr_ints(m, "axes", last, 1);
    mb_node(m, "Sub", "x,m1", "d1");
    mb_node(m, "Pow", "d1,two", "p1");
    mb_node(m, "ReduceMean", "p1", "v1");
    mb_attr_ints(m, "axes", last, 1);
    mb_node(m, "Add", "v1,eps1", "e1");
    mb_node(m, "Sqrt", "e1", "s1");
    mb_node(m, "Div", "d1,s1", "n1");
    mb_node(m, "Mul", "n1,gamma", "g1");
    mb_node(m, "Add", "beta,g1", "y1");
    /* d * d, axis 2 (= rank - 1), no beta, on another input */
    mb_node(m, "Neg", "x", "x2");
    mb_node(m, "ReduceMean", "x2", "m2");
    mb_attr_ints(m, "axes", two_ax, 1);
    mb_node(m, "Sub", "x2,m2", "d2");
    mb_node(m, "Mul", "d2,d2", "p2");
    mb_node(m, "ReduceMean", "p2", "v2");
    mb_attr_ints(m, "axes", two_ax, 1);
    mb_node(m, "Add", "eps2,v2", "e2");
    mb_node(m, "Sqrt", "e2", "s2");
    mb_node(m, "Div", "d2,s2", "n2");
    mb_node(m, "Mul", "gamma,n2", "y2");
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *basic = tu_session(env, buf, len, ONYX_OPT_BASIC, 0);
    onyx_session *all = tu_session(env, buf, len, ONYX_OPT_ALL, 0);
    free(buf);
    if (basic && all) {
        CHECK(tu_count_op(basic, "", "ReduceMean") == 4);
        CHECK(tu_count_op(all, "", "LayerNormalization") == 2);
        CHECK(tu_count_op(all, "", "ReduceMean") == 0);
        CHECK(tu_count_op(all, "", "Sqrt") == 0);
        CHECK(onyx_session_node_count(all) == 3); /* and the Neg */
        float x[2 * 3 * H];
        for (int i = 0; i < 2 * 3 * H; i++) x[i] = frand(&seed) * 3.0f + (float)(i % 5);
        const char *names[] = {"y1", "y2"};
        onyx_tensor *ob[2], *oa[2];
        tu_run_x(basic, x, dx, 3, names, ob, 2);
        tu_run_x(all, x, dx, 3, names, oa, 2);
        for (int k = 0; k < 2; k++) {
            /* statistics accumulated differently: a few float32 roundings */
            check_same(oa[k], ob[k], 1e-5, 1e-5);
            onyx_tensor_free(oa[k]);
            onyx_tensor_free(ob[k]);
        }
    }
    onyx_session_free(basic);
    onyx_session_free(all);
}

/* A product divided or multiplied by a power of two (attention's 1/sqrt
 * d): the scale moves onto the smaller operand (x, 40 x 8, instead of the
 * 40 x 40 product), with the same bits; a scale of 3 would round
 * differently and stays where it is. */
static void test_matmul_scale(onyx_env *env) {
    unsigned seed = 99;
    mb_model *m = mb_new(17);
    int64_t dx[] = {1, 2, 40, 8}, dk[] = {1, 2, 8, 40}, dy[] = {1, 2, 40, 40}, ds[] = {1};
    mb_input(m, "x", ONYX_FLOAT32, dx, 4);
    mb_output(m, "y1", ONYX_FLOAT32, dy, 4);
    mb_output(m, "y2", ONYX_FLOAT32, dy, 4);
    float k[2 * 8 * 40], k2[2 * 8 * 40], four = 4.0f, three = 3.0f;
    for (int i = 0; i < 2 * 8 * 40; i++) k[i] = frand(&seed);
    for (int i = 0; i < 2 * 8 * 40; i++) k2[i] = frand(&seed);
    mb_init_float(m, "k", dk, 4, k);
    mb_init_float(m, "k2", dk, 4, k2);
    mb_init_float(m, "four", ds, 1, &four);
    mb_init_float(m, "three", ds, 1, &three);
    mb_node(m, "MatMul", "x,k", "p1");
    mb_node(m, "Div", "p1,four", "y1");
    mb_node(m, "MatMul", "x,k2", "p2");
    mb_node(m, "Div", "p2,three", "y2");
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *basic = tu_session(env, buf, len, ONYX_OPT_BASIC, 0);
    onyx_session *all = tu_session(env, buf, len, ONYX_OPT_ALL, 0);
    free(buf);
    if (basic && all) {
        /* in all: the Div by 4 reads x, the MatMul reads its output and
         * produces y1; the Div by 3 still reads a MatMul's product */
        int moved = 0, kept = 0;
        for (size_t i = 0; i < onyx_session_node_count(all); i++) {
            if (strcmp(onyx_session_node_op_type(all, i), "Div") != 0) continue;
            const char *in = onyx_session_node_input_name(all, i, 0);
            const char *c = onyx_session_node_input_name(all, i, 1);
            if (strcmp(c, "four") == 0) moved += strcmp(in, "x") == 0;
            if (strcmp(c, "three") == 0) kept += strcmp(in, "x") != 0;
        }
        CHECK(moved == 1 && kept == 1);
        float x[2 * 40 * 8];
        for (int i = 0; i < 2 * 40 * 8; i++) x[i] = frand(&seed) * 3.0f;
        const char *names[] = {"y1", "y2"};
        onyx_tensor *ob[2], *oa[2];
        tu_run_x(basic, x, dx, 4, names, ob, 2);
        tu_run_x(all, x, dx, 4, names, oa, 2);
        for (int i = 0; i < 2; i++) {
            check_same(oa[i], ob[i], 0.0, 0.0);
            onyx_tensor_free(oa[i]);
            onyx_tensor_free(ob[i]);
        }
    }
    onyx_session_free(basic);
    onyx_session_free(all);
}

/* ---- basic: identities in a graph with a subgraph: an Identity read
 * only by a node goes, a Cast to x's own type that the If's branches read
 * by name stays ---- */
static void test_identity_captured(onyx_env *env) {
    static const float k[2] = {0.5f, -3.0f};
    int64_t d[1] = {2};
    mb_model *then_b = mb_new(17), *else_b = mb_new(17), *m = mb_new(17);
    mb_output(then_b, "to", ONYX_FLOAT32, d, 1);
    mb_node(then_b, "Add", "c,k", "to");
    mb_output(else_b, "eo", ONYX_FLOAT32, d, 1);
    mb_node(else_b, "Sub", "c,k", "eo");
    mb_input(m, "x", ONYX_FLOAT32, d, 1);
    mb_input(m, "cond", ONYX_BOOL, NULL, 0);
    mb_output(m, "y", ONYX_FLOAT32, d, 1);
    mb_output(m, "z", ONYX_FLOAT32, d, 1);
    mb_init_float(m, "k", d, 1, k);
    mb_node(m, "Cast", "x", "c");
    mb_attr_int(m, "to", ONYX_FLOAT32);
    mb_node(m, "Identity", "x", "i");
    mb_node(m, "Neg", "i", "z");
    mb_node(m, "If", "cond", "y");
    mb_attr_graph(m, "then_branch", then_b);
    mb_attr_graph(m, "else_branch", else_b);
    size_t len = 0;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *none = tu_session(env, buf, len, ONYX_OPT_NONE, 0);
    onyx_session *basic = tu_session(env, buf, len, ONYX_OPT_BASIC, 0);
    free(buf);
    if (!none || !basic) goto out;
    CHECK(tu_count_op(none, "", "Identity") == 1 && tu_count_op(none, "", "Cast") == 1);
    CHECK(tu_count_op(basic, "", "Identity") == 0);
    CHECK(tu_count_op(basic, "", "Cast") == 1); /* its output is read by name */
    for (int c = 0; c < 2; c++) {
        float x[2] = {1.25f, -2.5f};
        uint8_t cond = (uint8_t)c;
        onyx_tensor *xt = NULL, *ct = NULL, *on[2] = {NULL, NULL}, *ob[2] = {NULL, NULL};
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, d, 1, x, sizeof x, &xt));
        CHECK_OK(onyx_tensor_wrap(ONYX_BOOL, NULL, 0, &cond, 1, &ct));
        const char *in[2] = {"x", "cond"}, *outs[2] = {"y", "z"};
        const onyx_tensor *args[2] = {xt, ct};
        CHECK_OK(onyx_session_run(none, in, args, 2, outs, on, 2));
        CHECK_OK(onyx_session_run(basic, in, args, 2, outs, ob, 2));
        for (int j = 0; j < 2; j++) check_same(ob[j], on[j], 0.0, 0.0);
        if (ob[0] && ob[1]) {
            const float *y = onyx_tensor_data(ob[0]), *z = onyx_tensor_data(ob[1]);
            for (int i = 0; i < 2; i++) {
                CHECK(y[i] == (c ? x[i] + k[i] : x[i] - k[i]));
                CHECK(z[i] == -x[i]);
            }
        }
        onyx_tensor_free(xt);
        onyx_tensor_free(ct);
        for (int j = 0; j < 2; j++) {
            onyx_tensor_free(on[j]);
            onyx_tensor_free(ob[j]);
        }
    }
out:
    onyx_session_free(none);
    onyx_session_free(basic);
}

/* ---- all: a squeeze-and-excitation gate into a 1x1 Conv becomes the
 * FusedConv's input scale; the same Mul with a second reader, or by a
 * factor per position, stays ---- */
static uint8_t *gate_model(size_t *len) {
    enum { C = 8, R = 4 };
    mb_model *m = mb_new(17);
    int64_t dx[] = {-1, C, 6, 5}, dy[] = {-1, 5, 6, 5}, dw1[] = {R, C, 1, 1}, dw2[] = {C, R, 1, 1},
            dwp[] = {5, C, 1, 1}, db[] = {5}, dpos[] = {1, C, 6, 5};
    float w1[R * C], w2[C * R], wp[5 * C], bp[5], pos[C * 30];
    unsigned seed = 5;
    for (int i = 0; i < R * C; i++) w1[i] = frand(&seed);
    for (int i = 0; i < C * R; i++) w2[i] = frand(&seed);
    for (int i = 0; i < 5 * C; i++) wp[i] = frand(&seed);
    for (int i = 0; i < 5; i++) bp[i] = frand(&seed);
    for (int i = 0; i < C * 30; i++) pos[i] = frand(&seed);
    mb_input(m, "x", ONYX_FLOAT32, dx, 4);
    mb_output(m, "y", ONYX_FLOAT32, dy, 4);
    mb_output(m, "y2", ONYX_FLOAT32, dy, 4);
    mb_output(m, "y3", ONYX_FLOAT32, dy, 4);
    mb_output(m, "g2", ONYX_FLOAT32, dx, 4);
    mb_init_float(m, "w1", dw1, 4, w1);
    mb_init_float(m, "w2", dw2, 4, w2);
    mb_init_float(m, "wp", dwp, 4, wp);
    mb_init_float(m, "bp", db, 1, bp);
    mb_init_float(m, "pos", dpos, 4, pos);
    mb_node(m, "GlobalAveragePool", "x", "p");
    mb_node(m, "Conv", "p,w1", "q");
    mb_node(m, "Relu", "q", "qr");
    mb_node(m, "Conv", "qr,w2", "e");
    mb_node(m, "HardSigmoid", "e", "s");
    mb_node(m, "Mul", "x,s", "g");
    mb_node(m, "Conv", "g,wp,bp", "y"); /* fused: g read by this Conv only */
    mb_node(m, "Mul", "s,x", "g2");     /* a graph output: stays */
    mb_node(m, "Conv", "g2,wp,bp", "y2");
    mb_node(m, "Mul", "x,pos", "g3"); /* a factor per position: stays */
    mb_node(m, "Conv", "g3,wp,bp", "y3");
    uint8_t *buf = mb_serialize(m, len);
    mb_free(m);
    return buf;
}

static void test_input_scale(onyx_env *env) {
    size_t len;
    uint8_t *buf = gate_model(&len);
    onyx_session *basic = tu_session(env, buf, len, ONYX_OPT_BASIC, 0);
    onyx_session *all = tu_session(env, buf, len, ONYX_OPT_ALL, 0);
    free(buf);
    if (!basic || !all) goto out;
    CHECK(tu_count_op(basic, "", "Mul") == 3);
    CHECK(tu_count_op(all, "", "Mul") == 2);
    int scaled = 0;
    for (size_t i = 0; i < onyx_session_node_count(all); i++)
        scaled += strcmp(onyx_session_node_op_type(all, i), "FusedConv") == 0 &&
                  onyx_session_node_input_count(all, i) == 5;
    CHECK(scaled == 1);
    enum { N = 3 * 8 * 30 };
    float x[N];
    unsigned seed = 17;
    for (int i = 0; i < N; i++) x[i] = frand(&seed) * 4.0f;
    int64_t dims[] = {3, 8, 6, 5};
    const char *names[] = {"y", "y2", "y3", "g2"};
    onyx_tensor *ob[4], *oa[4];
    tu_run_x(basic, x, dims, 4, names, ob, 4);
    tu_run_x(all, x, dims, 4, names, oa, 4);
    /* the scale applied as the Mul applies it: the same products */
    for (int k = 0; k < 4; k++) {
        check_same(oa[k], ob[k], 0.0, 0.0);
        onyx_tensor_free(oa[k]);
        onyx_tensor_free(ob[k]);
    }
out:
    onyx_session_free(basic);
    onyx_session_free(all);
}

/* ---- all: Pad folded into its readers' padding ---- */

/* Runs the model at levels none and all: Pad nodes left pads_none and
 * pads_all, outputs names[0..n) within rel (max pools: exact). */
static void check_pad_levels(onyx_env *env, uint8_t *buf, size_t len, const int64_t *dims, size_t pads_none,
                             size_t pads_all, const char *const *names, size_t n, double rel) {
    onyx_session *none = tu_session(env, buf, len, ONYX_OPT_NONE, 0);
    onyx_session *all = tu_session(env, buf, len, ONYX_OPT_ALL, 0);
    free(buf);
    if (!none || !all) goto out;
    CHECK(tu_count_op(none, "", "Pad") == pads_none);
    CHECK(tu_count_op(all, "", "Pad") == pads_all);
    enum { MAXN = 400 };
    float x[MAXN];
    unsigned seed = 4242;
    const size_t count = (size_t)(dims[0] * dims[1] * dims[2] * dims[3]);
    CHECK(count <= MAXN);
    for (size_t i = 0; i < count && i < MAXN; i++) x[i] = frand(&seed) * 4.0f;
    onyx_tensor *a[12], *b[12];
    CHECK(n <= 12);
    tu_run_x(none, x, dims, 4, names, b, n);
    tu_run_x(all, x, dims, 4, names, a, n);
    for (size_t k = 0; k < n; k++) {
        check_same(a[k], b[k], rel, rel);
        onyx_tensor_free(a[k]);
        onyx_tensor_free(b[k]);
    }
out:
    onyx_session_free(none);
    onyx_session_free(all);
}

static void test_fold_pad(onyx_env *env) {
    /* opset 17: a Relu padded by one row above and below and one column on
     * the right, read by a 2x2 ceil-mode max pool and a padded 3x3
     * convolution (D-FINE's stem): folded into both. Left alone: the same
     * Pad of a value that may be negative before a max pool (its zeros
     * could win), one as wide as the pool's kernel (a window of padding
     * only), one of the channel axis, one before a ceil-mode pool of
     * stride 2 (whose last window, starting in the padding, the pool's
     * own padding would drop: 5 columns instead of 6), one also read by an
     * Add, and one that is a graph output. */
    unsigned seed = 9;
    mb_model *m = mb_new(17);
    int64_t dx[] = {1, 3, 9, 10}, dp[] = {8}, dw[] = {4, 3, 3, 3}, db[] = {4};
    int64_t d1[] = {1, 3, 10, 10}, d2[] = {1, 4, 10, 10}, d3[] = {1, 3, 10, 10}, d4[] = {1, 3, 10, 9},
            d5[] = {1, 4, 7, 8}, d6[] = {1, 3, 5, 6}, d7[] = {1, 3, 10, 11},
            d8[] = {1, 3, 9, 10};
    mb_input(m, "x", ONYX_FLOAT32, dx, 4);
    mb_output(m, "y1", ONYX_FLOAT32, d1, 4);
    mb_output(m, "y2", ONYX_FLOAT32, d2, 4);
    mb_output(m, "y3", ONYX_FLOAT32, d3, 4);
    mb_output(m, "y4", ONYX_FLOAT32, d4, 4);
    mb_output(m, "y5", ONYX_FLOAT32, d5, 4);
    mb_output(m, "y6", ONYX_FLOAT32, d6, 4);
    mb_output(m, "y7", ONYX_FLOAT32, d7, 4);
    mb_output(m, "y8", ONYX_FLOAT32, d8, 4);
    mb_output(m, "o", ONYX_FLOAT32, d7, 4);
    mb_output(m, "y9", ONYX_FLOAT32, d8, 4);
    const int64_t stem[] = {0, 0, 1, 0, 0, 0, 1, 1}, wide[] = {0, 0, 2, 0, 0, 0, 0, 0},
                  chan[] = {0, 1, 0, 0, 0, 0, 0, 0}, right[] = {0, 0, 0, 0, 0, 0, 0, 1},
                  /* distinct pads, so that common-subexpression elimination
                   * merges none of these Pads into another */
                  top_right[] = {0, 0, 1, 1, 0, 0, 0, 0}, bottom_left[] = {0, 0, 0, 1, 0, 0, 1, 0};
    mb_init_int64(m, "stem", dp, 1, stem);
    mb_init_int64(m, "wide", dp, 1, wide);
    mb_init_int64(m, "chan", dp, 1, chan);
    mb_init_int64(m, "right", dp, 1, right);
    mb_init_int64(m, "top_right", dp, 1, top_right);
    mb_init_int64(m, "bottom_left", dp, 1, bottom_left);
    float w[4 * 27], b[4];
    for (int i = 0; i < 4 * 27; i++) w[i] = frand(&seed);
    for (int i = 0; i < 4; i++) b[i] = frand(&seed);
    mb_init_float(m, "w", dw, 4, w);
    mb_init_float(m, "b", db, 1, b);
    const int64_t k2[] = {2, 2}, one[] = {1, 1}, cpads[] = {1, 0, 0, 1};
    mb_node(m, "Relu", "x", "r");
    mb_node(m, "Pad", "r,stem", "p");
    mb_node(m, "MaxPool", "p", "y1");
    mb_attr_ints(m, "kernel_shape", k2, 2);
    mb_attr_ints(m, "strides", one, 2);
    mb_attr_int(m, "ceil_mode", 1);
    mb_node(m, "Conv", "p,w,b", "y2");
    mb_attr_ints(m, "pads", cpads, 4);
    mb_node(m, "Pad", "x,stem", "q");
    mb_node(m, "MaxPool", "q", "y3");
    mb_attr_ints(m, "kernel_shape", k2, 2);
    mb_node(m, "Pad", "r,wide", "u");
    mb_node(m, "MaxPool", "u", "y4");
    mb_attr_ints(m, "kernel_shape", k2, 2);
    mb_node(m, "Pad", "r,chan", "v");
    mb_node(m, "MaxPool", "v", "y5");
    const int64_t k3[] = {3, 3};
    mb_attr_ints(m, "kernel_shape", k3, 2);
    const int64_t two[] = {2, 2};
    mb_node(m, "Pad", "r,right", "e");
    mb_node(m, "MaxPool", "e", "y6");
    mb_attr_ints(m, "kernel_shape", k2, 2);
    mb_attr_ints(m, "strides", two, 2);
    mb_attr_int(m, "ceil_mode", 1);
    mb_node(m, "Pad", "r,bottom_left", "a2");
    mb_node(m, "Add", "a2,a2", "y7");
    mb_node(m, "MaxPool", "a2", "y8");
    mb_attr_ints(m, "kernel_shape", k2, 2);
    mb_node(m, "Pad", "r,top_right", "o");
    mb_node(m, "MaxPool", "o", "y9");
    mb_attr_ints(m, "kernel_shape", k2, 2);
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    const char *names[] = {"y1", "y2", "y3", "y4", "y5", "y6", "y7", "y8", "o", "y9"};
    /* the convolution reads its zeros from its own padding: its sums in
     * another order, within 1e-5 */
    check_pad_levels(env, buf, len, dx, 7, 6, names, 10, 1e-5);

    /* opset 10: pads and value as attributes; minus infinity needs no Relu */
    mb_model *m10 = mb_new(10);
    int64_t dx10[] = {1, 2, 7, 8}, dy10[] = {1, 2, 4, 4};
    mb_input(m10, "x", ONYX_FLOAT32, dx10, 4);
    mb_output(m10, "y", ONYX_FLOAT32, dy10, 4);
    const int64_t p10[] = {0, 0, 0, 1, 0, 0, 1, 0}, s2[] = {2, 2};
    mb_node(m10, "Pad", "x", "p");
    mb_attr_ints(m10, "pads", p10, 8);
    mb_attr_float(m10, "value", -INFINITY);
    mb_node(m10, "MaxPool", "p", "y");
    mb_attr_ints(m10, "kernel_shape", k3, 2);
    mb_attr_ints(m10, "strides", s2, 2);
    buf = mb_serialize(m10, &len);
    mb_free(m10);
    const char *name10[] = {"y"};
    check_pad_levels(env, buf, len, dx10, 1, 0, name10, 1, 0.0);
}

int main(void) {
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    if (!env) CHECK_DONE();
    test_basic(env);
    test_identity_captured(env);
    test_transforms(env);
    test_partial_shapes(env);
    test_fusions(env);
    test_input_scale(env);
    test_gemm_activation(env, 1);
    test_gemm_activation(env, 4);
    test_gemm_activation(env, 40);
    test_gelu_opset17(env);
    test_layernorm(env);
    test_matmul_scale(env);
    test_fold_pad(env);
    onyx_env_free(env);
    CHECK_DONE();
}
