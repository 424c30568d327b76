/* Hostile shape and attribute numbers: a model may set any of them to
 * INT64_MAX, INT64_MIN or 2^32. Each case is refused with a clear error
 * (never a crash or a silently wrong shape), and the kernels touched on
 * the way still give the right values for ordinary numbers. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "loader/tensor_proto.h"
#include "model_builder.h"
#include "onnx.pb-c.h"

#define BIG INT64_MAX
#define TWO32 ((int64_t)1 << 32)

static onyx_status *create(onyx_env *env, mb_model *m, onyx_session **s) {
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    *s = NULL;
    onyx_status *st = onyx_session_create_from_buffer(env, buf, len, NULL, s);
    free(buf);
    return st;
}

/* A model with float input x of x_dims, one node made by the caller
 * (added after this returns) and output y of unknown shape. */
static mb_model *one_input(const int64_t *x_dims, int rank) {
    mb_model *m = mb_new(17);
    mb_input(m, "x", ONYX_FLOAT32, x_dims, rank);
    mb_output(m, "y", ONYX_FLOAT32, NULL, -1);
    return m;
}

/* Runs s on float x and returns y (NULL on failure, the status in *st). */
static onyx_tensor *run_x(onyx_session *s, const int64_t *dims, int rank, float *data, size_t bytes,
                          onyx_status **st) {
    onyx_tensor *x = NULL, *y = NULL;
    const char *in = "x", *out = "y";
    *st = onyx_tensor_wrap(ONYX_FLOAT32, dims, rank, data, bytes, &x);
    if (!*st) *st = onyx_session_run(s, &in, (const onyx_tensor *const *)&x, 1, &out, &y, 1);
    onyx_tensor_free(x);
    return y;
}

static void test_depth_space(onyx_env *env) {
    int64_t d[] = {1, 4, 2, 2};
    onyx_session *s;
    /* 2^32 squared is 0 in wrapping arithmetic: it used to divide by it */
    mb_model *m = one_input(d, 4);
    mb_node(m, "DepthToSpace", "x", "y");
    mb_attr_int(m, "blocksize", TWO32);
    CHECK_FAILS(create(env, m, &s), ONYX_INVALID_MODEL,
                "DepthToSpace: blocksize 4294967296 squared overflows int64");
    onyx_session_free(s);
    m = one_input(d, 4);
    mb_node(m, "SpaceToDepth", "x", "y");
    mb_attr_int(m, "blocksize", TWO32);
    CHECK_FAILS(create(env, m, &s), ONYX_INVALID_MODEL,
                "SpaceToDepth: blocksize 4294967296 squared overflows int64");
    onyx_session_free(s);
    /* ordinary blocksize: [1,4,1,1] -> [1,1,2,2] takes the channels in order */
    int64_t d1[] = {1, 4, 1, 1};
    m = one_input(d1, 4);
    mb_node(m, "DepthToSpace", "x", "y");
    mb_attr_int(m, "blocksize", 2);
    CHECK_OK(create(env, m, &s));
    if (s) {
        float x[4] = {1, 2, 3, 4};
        onyx_status *st;
        onyx_tensor *y = run_x(s, d1, 4, x, sizeof x, &st);
        CHECK_OK(st);
        if (y) {
            const float *v = onyx_tensor_data(y);
            CHECK(v[0] == 1 && v[1] == 2 && v[2] == 3 && v[3] == 4);
        }
        onyx_tensor_free(y);
    }
    onyx_session_free(s);
}

/* Einsum "...ij,...jk->...ik" where the ellipsis covers no dims: the
 * kernel used to read the label order at index -1. a = [[1,2,3],[4,5,6]],
 * b = [[1,2],[3,4],[5,6]]: a @ b = [[22,28],[49,64]]. */
static void einsum_case(onyx_env *env, const char *eq, int folded, int as_int, const double *want,
                        int n_want) {
    static const float af[6] = {1, 2, 3, 4, 5, 6}, bf[6] = {1, 2, 3, 4, 5, 6};
    static const int64_t ai[6] = {1, 2, 3, 4, 5, 6}, bi[6] = {1, 2, 3, 4, 5, 6};
    int64_t ad[] = {2, 3}, bd[] = {3, 2};
    int dt = as_int ? ONYX_INT64 : ONYX_FLOAT32;
    mb_model *m = mb_new(17);
    if (folded) {
        if (as_int) {
            mb_init_int64(m, "a", ad, 2, ai);
            mb_init_int64(m, "b", bd, 2, bi);
        } else {
            mb_init_float(m, "a", ad, 2, af);
            mb_init_float(m, "b", bd, 2, bf);
        }
    } else {
        mb_input(m, "a", dt, ad, 2);
        mb_input(m, "b", dt, bd, 2);
    }
    mb_output(m, "y", dt, NULL, -1);
    mb_node(m, "Einsum", "a,b", "y");
    mb_attr_string(m, "equation", eq);
    onyx_session *s;
    CHECK_OK(create(env, m, &s));
    if (!s) return;
    onyx_tensor *ta = NULL, *tb = NULL, *y = NULL;
    const char *names[] = {"a", "b"}, *out = "y";
    if (as_int) {
        CHECK_OK(onyx_tensor_wrap(dt, ad, 2, (void *)ai, sizeof ai, &ta));
        CHECK_OK(onyx_tensor_wrap(dt, bd, 2, (void *)bi, sizeof bi, &tb));
    } else {
        CHECK_OK(onyx_tensor_wrap(dt, ad, 2, (void *)af, sizeof af, &ta));
        CHECK_OK(onyx_tensor_wrap(dt, bd, 2, (void *)bf, sizeof bf, &tb));
    }
    const onyx_tensor *ins[2] = {ta, tb};
    CHECK_OK(onyx_session_run(s, names, ins, folded ? 0 : 2, &out, &y, 1));
    if (y) {
        CHECK(onyx_tensor_rank(y) == 2);
        for (int i = 0; i < n_want; i++) {
            double v = as_int ? (double)((const int64_t *)onyx_tensor_data(y))[i]
                              : ((const float *)onyx_tensor_data(y))[i];
            CHECK_NEAR(v, want[i], 1e-4);
        }
    }
    onyx_tensor_free(y);
    onyx_tensor_free(ta);
    onyx_tensor_free(tb);
    onyx_session_free(s);
}

static void test_einsum(onyx_env *env) {
    const double mm[4] = {22, 28, 49, 64};
    /* b^T a^T = (a b)^T */
    const double mmt[4] = {22, 49, 28, 64};
    for (int folded = 0; folded < 2; folded++)
        for (int as_int = 0; as_int < 2; as_int++) {
            einsum_case(env, "...ij,...jk->...ik", folded, as_int, mm, 4);
            einsum_case(env, "...ij,...jk->...ki", folded, as_int, mmt, 4);
            einsum_case(env, "...ij,...jk", folded, as_int, mm, 4);
        }
}

static void test_lrn(onyx_env *env) {
    int64_t d[] = {1, 4, 2, 2};
    mb_model *m = one_input(d, 4);
    mb_node(m, "LRN", "x", "y");
    mb_attr_int(m, "size", BIG);
    onyx_session *s;
    CHECK_FAILS(create(env, m, &s), ONYX_INVALID_MODEL,
                "LRN: size 9223372036854775807 times the 4 elements of a channel plane overflows int64");
    onyx_session_free(s);
    /* size 3, alpha 3 (alpha/size = 1), beta 1, bias 1 on [1,3,1,1] = {1,2,3}:
     * y_c = x_c / (1 + sum of squares over c-1..c+1) */
    int64_t d3[] = {1, 3, 1, 1};
    m = one_input(d3, 4);
    mb_node(m, "LRN", "x", "y");
    mb_attr_int(m, "size", 3);
    mb_attr_float(m, "alpha", 3.0f);
    mb_attr_float(m, "beta", 1.0f);
    mb_attr_float(m, "bias", 1.0f);
    CHECK_OK(create(env, m, &s));
    if (s) {
        float x[3] = {1, 2, 3};
        onyx_status *st;
        onyx_tensor *y = run_x(s, d3, 4, x, sizeof x, &st);
        CHECK_OK(st);
        if (y) {
            const float *v = onyx_tensor_data(y);
            CHECK_NEAR(v[0], 1.0 / 6, 1e-6);
            CHECK_NEAR(v[1], 2.0 / 15, 1e-6);
            CHECK_NEAR(v[2], 3.0 / 14, 1e-6);
        }
        onyx_tensor_free(y);
    }
    onyx_session_free(s);
}

/* Conv-like node on x [1,4,2,2] with W [m,4/…] as an initializer. */
static mb_model *conv_model(const char *op, const int64_t *wd, int n_w) {
    int64_t d[] = {1, 4, 2, 2};
    mb_model *m = one_input(d, 4);
    float w[16];
    for (int i = 0; i < 16; i++) w[i] = 1;
    (void)n_w;
    mb_init_float(m, "w", wd, 4, w);
    mb_node(m, op, "x,w", "y");
    return m;
}

static void test_conv_windows(onyx_env *env) {
    onyx_session *s;
    int64_t w1[] = {1, 4, 1, 1}, w2[] = {1, 4, 2, 1}, wt[] = {4, 1, 1, 1};
    const int64_t big2[] = {BIG, BIG}, pads[] = {BIG, 0, BIG, 0}, dil[] = {BIG, 1};
    mb_model *m = conv_model("Conv", w1, 4);
    mb_attr_ints(m, "pads", pads, 4);
    CHECK_FAILS(create(env, m, &s), ONYX_INVALID_MODEL,
                "Conv: input size plus pads on spatial axis 0 overflows int64");
    onyx_session_free(s);
    m = conv_model("Conv", w2, 4);
    mb_attr_ints(m, "dilations", dil, 2);
    CHECK_FAILS(create(env, m, &s), ONYX_INVALID_MODEL,
                "Conv: the dilated kernel extent on spatial axis 0 overflows int64");
    onyx_session_free(s);
    /* ConvTranspose: stride INT64_MAX times (2 - 1) plus the kernel */
    m = conv_model("ConvTranspose", wt, 4);
    mb_attr_ints(m, "strides", big2, 2);
    CHECK_FAILS(create(env, m, &s), ONYX_INVALID_MODEL,
                "ConvTranspose: the output size (plus kernel extent) on spatial axis 0 overflows int64");
    onyx_session_free(s);
    const int64_t opad[] = {BIG, 0};
    m = conv_model("ConvTranspose", wt, 4);
    mb_attr_ints(m, "output_padding", opad, 2);
    CHECK_FAILS(create(env, m, &s), ONYX_INVALID_MODEL, "overflows int64");
    onyx_session_free(s);
    const int64_t oshape[] = {-5, 2};
    m = conv_model("ConvTranspose", wt, 4);
    mb_attr_ints(m, "output_shape", oshape, 2);
    CHECK_FAILS(create(env, m, &s), ONYX_INVALID_MODEL, "output_shape[0] = -5 is negative");
    onyx_session_free(s);
    /* a stride of INT64_MAX on a 2x2 input is legal: one window, as in
     * ONNX Runtime; ceil mode must not overflow (o - 1) * stride */
    int64_t d[] = {1, 4, 2, 2};
    m = one_input(d, 4);
    mb_node(m, "MaxPool", "x", "y");
    const int64_t k11[] = {1, 1};
    mb_attr_ints(m, "kernel_shape", k11, 2);
    mb_attr_ints(m, "strides", big2, 2);
    mb_attr_int(m, "ceil_mode", 1);
    CHECK_OK(create(env, m, &s));
    if (s) {
        float x[16];
        for (int i = 0; i < 16; i++) x[i] = (float)i;
        onyx_status *st;
        onyx_tensor *y = run_x(s, d, 4, x, sizeof x, &st);
        CHECK_OK(st);
        if (y) {
            const int64_t *yd = onyx_tensor_dims(y);
            CHECK(yd[2] == 1 && yd[3] == 1);
            const float *v = onyx_tensor_data(y);
            CHECK(v[0] == 0 && v[1] == 4 && v[2] == 8 && v[3] == 12);
        }
        onyx_tensor_free(y);
    }
    onyx_session_free(s);
    /* windows of padding only (pads wider than the 1x1 kernel): they give
     * 0, the others the input, rows and columns alike */
    {
        int64_t dp[] = {1, 1, 2, 3};
        const int64_t k1[] = {1, 1}, pp[] = {1, 2, 1, 2};
        m = one_input(dp, 4);
        mb_node(m, "MaxPool", "x", "y");
        mb_attr_ints(m, "kernel_shape", k1, 2);
        mb_attr_ints(m, "pads", pp, 4);
        CHECK_OK(create(env, m, &s));
        if (s) {
            float x[6] = {-1, -2, -3, -4, -5, -6};
            onyx_status *st;
            onyx_tensor *y = run_x(s, dp, 4, x, sizeof x, &st);
            CHECK_OK(st);
            if (y) {
                const int64_t *yd = onyx_tensor_dims(y);
                CHECK(yd[2] == 4 && yd[3] == 7);
                const float *v = onyx_tensor_data(y);
                for (int r = 0; r < 4; r++)
                    for (int c = 0; c < 7; c++) {
                        int in = r >= 1 && r <= 2 && c >= 2 && c <= 4;
                        CHECK(v[r * 7 + c] == (in ? x[(r - 1) * 3 + (c - 2)] : 0.0f));
                    }
            }
            onyx_tensor_free(y);
        }
        onyx_session_free(s);
    }
    m = one_input(d, 4);
    mb_node(m, "AveragePool", "x", "y");
    const int64_t kbig[] = {BIG, 1};
    mb_attr_ints(m, "kernel_shape", kbig, 2);
    mb_attr_ints(m, "pads", pads, 4);
    CHECK_FAILS(create(env, m, &s), ONYX_INVALID_MODEL,
                "AveragePool: input size plus pads on spatial axis 0 overflows int64");
    onyx_session_free(s);
    /* MaxUnpool: (2 - 1) * INT64_MAX + kernel */
    m = mb_new(17);
    mb_input(m, "x", ONYX_FLOAT32, d, 4);
    mb_input(m, "i", ONYX_INT64, d, 4);
    mb_output(m, "y", ONYX_FLOAT32, NULL, -1);
    mb_node(m, "MaxUnpool", "x,i", "y");
    const int64_t k21[] = {2, 1}, sbig[] = {BIG, 1};
    mb_attr_ints(m, "kernel_shape", k21, 2);
    mb_attr_ints(m, "strides", sbig, 2);
    CHECK_FAILS(create(env, m, &s), ONYX_INVALID_MODEL,
                "MaxUnpool: the output size (plus kernel) on spatial axis 0 overflows int64");
    onyx_session_free(s);
}

static void test_reshape(onyx_env *env) {
    int64_t d[] = {1, 4, 2, 2}, sd[] = {3};
    /* 2^32 * 2^32 * 2 (the 0 copies the input's dim 2) */
    const int64_t shape[] = {TWO32, TWO32, 0};
    mb_model *m = one_input(d, 4);
    mb_init_int64(m, "s", sd, 1, shape);
    mb_node(m, "Reshape", "x,s", "y");
    onyx_session *s;
    CHECK_FAILS(create(env, m, &s), ONYX_INVALID_MODEL,
                "Reshape: the product of the target shape's dims (at shape[1]) overflows int64");
    onyx_session_free(s);
    /* the same shape given at run time */
    m = one_input(d, 4);
    mb_input(m, "s", ONYX_INT64, sd, 1);
    mb_node(m, "Reshape", "x,s", "y");
    CHECK_OK(create(env, m, &s));
    if (s) {
        float x[16] = {0};
        onyx_tensor *tx = NULL, *ts = NULL, *y = NULL;
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, d, 4, x, sizeof x, &tx));
        CHECK_OK(onyx_tensor_wrap(ONYX_INT64, sd, 1, (void *)shape, sizeof shape, &ts));
        const char *names[] = {"x", "s"}, *out = "y";
        const onyx_tensor *ins[2] = {tx, ts};
        CHECK_FAILS(onyx_session_run(s, names, ins, 2, &out, &y, 1), ONYX_INVALID_ARGUMENT,
                    "overflows int64 (4294967296 * 4294967296)");
        onyx_tensor_free(tx);
        onyx_tensor_free(ts);
    }
    onyx_session_free(s);
    /* an input declared with dims whose product overflows */
    int64_t huge[] = {TWO32, TWO32};
    const int64_t flat[] = {-1};
    int64_t fd[] = {1};
    m = one_input(huge, 2);
    mb_init_int64(m, "s", fd, 1, flat);
    mb_node(m, "Reshape", "x,s", "y");
    CHECK_FAILS(create(env, m, &s), ONYX_INVALID_MODEL,
                "Reshape: the element count of the input [4294967296,4294967296] overflows int64");
    onyx_session_free(s);
}

static void test_rnn(onyx_env *env) {
    int64_t xd[] = {1, 1, 2}, wd[] = {1, 1, 2}, rd[] = {1, 1, 1};
    mb_model *m = mb_new(17);
    mb_input(m, "x", ONYX_FLOAT32, xd, 3);
    mb_input(m, "w", ONYX_FLOAT32, wd, 3);
    mb_input(m, "r", ONYX_FLOAT32, rd, 3);
    mb_output(m, "y", ONYX_FLOAT32, NULL, -1);
    mb_node(m, "LSTM", "x,w,r", "y");
    mb_attr_int(m, "hidden_size", (int64_t)1 << 62);
    onyx_session *s;
    CHECK_FAILS(create(env, m, &s), ONYX_INVALID_MODEL,
                "LSTM: 4 times hidden_size overflows int64 (4 * 4611686018427387904)");
    onyx_session_free(s);
}

static void test_tfidf(onyx_env *env) {
    int64_t xd[] = {4};
    mb_model *m = mb_new(17);
    mb_input(m, "x", ONYX_INT64, xd, 1);
    mb_output(m, "y", ONYX_FLOAT32, NULL, -1);
    mb_node(m, "TfIdfVectorizer", "x", "y");
    mb_attr_string(m, "mode", "TF");
    mb_attr_int(m, "min_gram_length", 1);
    mb_attr_int(m, "max_gram_length", 1);
    mb_attr_int(m, "max_skip_count", 0);
    const int64_t counts[] = {0}, idx[] = {BIG}, pool[] = {5};
    mb_attr_ints(m, "ngram_counts", counts, 1);
    mb_attr_ints(m, "ngram_indexes", idx, 1);
    mb_attr_ints(m, "pool_int64s", pool, 1);
    onyx_session *s;
    CHECK_FAILS(create(env, m, &s), ONYX_INVALID_MODEL,
                "TfIdfVectorizer: ngram_indexes[0] + 1 (the output width) overflows int64");
    onyx_session_free(s);
}

/* Shape-building ops whose counts or sums overflow. */
static void test_shape_sums(onyx_env *env) {
    onyx_session *s;
    int64_t one[] = {1}, bigd[] = {BIG};
    /* Range from INT64_MIN to INT64_MAX by 1 holds 2^64 - 1 values */
    mb_model *m = mb_new(17);
    const int64_t lo = INT64_MIN, hi = BIG, step = 1;
    mb_init_int64(m, "a", NULL, 0, &lo);
    mb_init_int64(m, "b", NULL, 0, &hi);
    mb_init_int64(m, "c", NULL, 0, &step);
    mb_output(m, "y", ONYX_INT64, NULL, -1);
    mb_node(m, "Range", "a,b,c", "y");
    CHECK_FAILS(create(env, m, &s), ONYX_INVALID_MODEL,
                "Range: the element count from -9223372036854775808 to 9223372036854775807 by 1 overflows int64");
    onyx_session_free(s);
    /* Concat of declared dims INT64_MAX and 1 */
    m = mb_new(17);
    mb_input(m, "a", ONYX_FLOAT32, bigd, 1);
    mb_input(m, "b", ONYX_FLOAT32, one, 1);
    mb_output(m, "y", ONYX_FLOAT32, NULL, -1);
    mb_node(m, "Concat", "a,b", "y");
    mb_attr_int(m, "axis", 0);
    CHECK_FAILS(create(env, m, &s), ONYX_INVALID_MODEL,
                "Concat: the concatenated axis size (at input 1) overflows int64");
    onyx_session_free(s);
    /* Split sizes INT64_MAX + 2 (wrapping to a negative sum) */
    int64_t xd[] = {4}, sd[] = {2};
    const int64_t split[] = {BIG, 2};
    m = mb_new(17);
    mb_input(m, "x", ONYX_FLOAT32, xd, 1);
    mb_init_int64(m, "sp", sd, 1, split);
    mb_output(m, "y0", ONYX_FLOAT32, NULL, -1);
    mb_output(m, "y1", ONYX_FLOAT32, NULL, -1);
    mb_node(m, "Split", "x,sp", "y0,y1");
    CHECK_FAILS(create(env, m, &s), ONYX_INVALID_MODEL,
                "Split: the sum of split sizes (at split[1]) overflows int64");
    onyx_session_free(s);
    /* Pad: INT64_MAX on the end of an axis */
    int64_t d[] = {1, 4, 2, 2}, pd[] = {8};
    const int64_t pads[] = {0, 0, 0, BIG, 0, 0, 0, 1};
    m = one_input(d, 4);
    mb_init_int64(m, "p", pd, 1, pads);
    mb_node(m, "Pad", "x,p", "y");
    CHECK_FAILS(create(env, m, &s), ONYX_INVALID_MODEL,
                "Pad: pads 9223372036854775807 and 1 overflow axis 3");
    onyx_session_free(s);
}

/* Runs s on n uint8/int8 inputs of one element or a few, returning output y. */
static onyx_tensor *run_bytes(onyx_session *s, int n, const char *const *names, const onyx_dtype *types,
                              const int64_t *const *dims, const int *ranks, void *const *data,
                              const size_t *bytes, onyx_status **st) {
    onyx_tensor *x[8] = {0}, *y = NULL;
    const char *out = "y";
    *st = NULL;
    for (int i = 0; i < n && !*st; i++) *st = onyx_tensor_wrap(types[i], dims[i], ranks[i], data[i], bytes[i], &x[i]);
    if (!*st) *st = onyx_session_run(s, names, (const onyx_tensor *const *)x, (size_t)n, &out, &y, 1);
    for (int i = 0; i < n; i++) onyx_tensor_free(x[i]);
    return y;
}

/* QLinearMatMul with y_scale 0 or NaN: the requantized value is NaN or
 * infinite; NaN is stored as 0 (as ONNX Runtime does), never cast. */
static uint8_t qlinear_matmul_u8(onyx_env *env, float y_scale, uint8_t a0) {
    int64_t ad[] = {1, 2}, bd[] = {2, 1};
    const float one = 1.0f;
    mb_model *m = mb_new(13);
    mb_input(m, "a", ONYX_UINT8, ad, 2);
    mb_input(m, "b", ONYX_UINT8, bd, 2);
    mb_input(m, "zp", ONYX_UINT8, NULL, 0);
    mb_input(m, "yz", ONYX_UINT8, NULL, 0);
    mb_init_float(m, "s1", NULL, 0, &one);
    mb_init_float(m, "ys", NULL, 0, &y_scale);
    mb_output(m, "y", ONYX_UINT8, NULL, -1);
    mb_node(m, "QLinearMatMul", "a,s1,zp,b,s1,zp,ys,yz", "y");
    onyx_session *s;
    CHECK_OK(create(env, m, &s));
    uint8_t a[2] = {a0, a0}, b[2] = {1, 1}, zp = 0, yz = 7, r = 99;
    const char *names[] = {"a", "b", "zp", "yz"};
    const onyx_dtype types[] = {ONYX_UINT8, ONYX_UINT8, ONYX_UINT8, ONYX_UINT8};
    const int64_t *dims[] = {ad, bd, NULL, NULL};
    const int ranks[] = {2, 2, 0, 0};
    void *data[] = {a, b, &zp, &yz};
    const size_t bytes[] = {2, 2, 1, 1};
    onyx_status *st;
    onyx_tensor *y = run_bytes(s, 4, names, types, dims, ranks, data, bytes, &st);
    CHECK_OK(st);
    if (y) r = *(const uint8_t *)onyx_tensor_data(y);
    onyx_tensor_free(y);
    onyx_session_free(s);
    return r;
}

/* QLinearConv to int8 with a NaN y_scale: 0, never an undefined cast. */
static int8_t qlinear_conv_i8(onyx_env *env, float y_scale) {
    int64_t d[] = {1, 1, 1, 1};
    const float one = 1.0f;
    mb_model *m = mb_new(13);
    mb_input(m, "x", ONYX_INT8, d, 4);
    mb_input(m, "w", ONYX_INT8, d, 4);
    mb_input(m, "zp", ONYX_INT8, NULL, 0);
    mb_init_float(m, "s1", NULL, 0, &one);
    mb_init_float(m, "ys", NULL, 0, &y_scale);
    mb_output(m, "y", ONYX_INT8, NULL, -1);
    mb_node(m, "QLinearConv", "x,s1,zp,w,s1,zp,ys,zp", "y");
    onyx_session *s;
    CHECK_OK(create(env, m, &s));
    int8_t x = 3, w = 2, zp = 0, r = 99;
    const char *names[] = {"x", "w", "zp"};
    const onyx_dtype types[] = {ONYX_INT8, ONYX_INT8, ONYX_INT8};
    const int64_t *dims[] = {d, d, NULL};
    const int ranks[] = {4, 4, 0};
    void *data[] = {&x, &w, &zp};
    const size_t bytes[] = {1, 1, 1};
    onyx_status *st;
    onyx_tensor *y = run_bytes(s, 3, names, types, dims, ranks, data, bytes, &st);
    CHECK_OK(st);
    if (y) r = *(const int8_t *)onyx_tensor_data(y);
    onyx_tensor_free(y);
    onyx_session_free(s);
    return r;
}

static void test_qlinear_nan(onyx_env *env) {
    CHECK(qlinear_matmul_u8(env, 0.0f, 0) == 0);     /* 0 * inf is NaN */
    CHECK(qlinear_matmul_u8(env, 0.0f, 1) == 255);   /* 2 * inf saturates */
    CHECK(qlinear_matmul_u8(env, NAN, 1) == 0);
    CHECK(qlinear_matmul_u8(env, 0.5f, 1) == 11);    /* ordinary: 2 / 0.5 + 7 */
    CHECK(qlinear_conv_i8(env, NAN) == 0);
    CHECK(qlinear_conv_i8(env, 0.0f) == 127);        /* 6 * inf saturates */
    CHECK(qlinear_conv_i8(env, 2.0f) == 3);          /* ordinary: 6 / 2 */
}

/* A string tensor with raw_data (which ONNX forbids) declaring a huge
 * shape is refused before anything of that shape is allocated. */
static void test_string_raw_data(void) {
    Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
    int64_t dims[] = {(int64_t)1 << 28, 16};
    uint8_t raw[16] = {0};
    tp.name = "s";
    tp.has_data_type = 1;
    tp.data_type = ONYX_STRING;
    tp.n_dims = 2;
    tp.dims = dims;
    tp.has_raw_data = 1;
    tp.raw_data.len = sizeof raw;
    tp.raw_data.data = raw;
    ox_tensor *t = NULL;
    ox_error err = {0};
    CHECK(ox_tensor_from_proto(&tp, NULL, &t, &err) != 0);
    CHECK(t == NULL);
    CHECK(err.code == ONYX_INVALID_MODEL);
    CHECK(strstr(err.msg, "tensor 's': string tensors cannot use raw_data") != NULL);
}

/* Neg then ConstantOfShape asking for 2^32 floats (16 GiB): constant
 * folding leaves it to run time instead of allocating it at load, and at
 * run time the session memory limit refuses it. */
static void test_fold_huge(onyx_env *env) {
    int64_t sd[] = {2};
    const int64_t neg_shape[] = {-((int64_t)1 << 16), -((int64_t)1 << 16)};
    mb_model *m = mb_new(17);
    mb_init_int64(m, "ns", sd, 1, neg_shape);
    mb_output(m, "y", ONYX_FLOAT32, NULL, -1);
    mb_node(m, "Neg", "ns", "shape");
    mb_node(m, "ConstantOfShape", "shape", "y");
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session_options *opts = NULL;
    CHECK_OK(onyx_session_options_create(&opts));
    CHECK_OK(onyx_session_options_set_memory_limit(opts, (size_t)1 << 26));
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, opts, &s));
    free(buf);
    onyx_session_options_free(opts);
    if (!s) return;
    onyx_tensor *y = NULL;
    const char *out = "y";
    CHECK_FAILS(onyx_session_run(s, NULL, NULL, 0, &out, &y, 1), ONYX_OUT_OF_MEMORY, "memory limit");
    CHECK(y == NULL);
    onyx_session_free(s);
}

/* Quantization attributes and zero points at the int64 edges. */
static void test_quant_edges(onyx_env *env) {
    onyx_session *s;
    /* block_size INT64_MAX: x + block - 1 used to overflow; one block per row */
    int64_t xd[] = {4, 4}, sd[] = {4, 2};
    mb_model *m = mb_new(21);
    mb_input(m, "x", ONYX_FLOAT32, xd, 2);
    mb_input(m, "sc", ONYX_FLOAT32, sd, 2);
    mb_output(m, "y", ONYX_UINT8, NULL, -1);
    mb_node(m, "QuantizeLinear", "x,sc", "y");
    mb_attr_int(m, "axis", 1);
    mb_attr_int(m, "block_size", BIG);
    CHECK_FAILS(create(env, m, &s), ONYX_INVALID_MODEL,
                "block_size is 9223372036854775807, so it needs 1");
    onyx_session_free(s);
    /* MatMulInteger zero point declared [2^32, 2^32] */
    int64_t ad[] = {2, 3}, bd[] = {3, 2}, zd[] = {TWO32, TWO32};
    m = mb_new(17);
    mb_input(m, "a", ONYX_UINT8, ad, 2);
    mb_input(m, "b", ONYX_UINT8, bd, 2);
    mb_input(m, "az", ONYX_UINT8, zd, 2);
    mb_output(m, "y", ONYX_INT32, NULL, -1);
    mb_node(m, "MatMulInteger", "a,b,az", "y");
    CHECK_FAILS(create(env, m, &s), ONYX_INVALID_MODEL, "MatMulInteger: the element count of");
    onyx_session_free(s);
}

/* Runs s (no inputs) for output y, discarding it: the status. */
static onyx_status *run_y(onyx_session *s) {
    onyx_tensor *y = NULL;
    const char *out = "y";
    onyx_status *st = onyx_session_run(s, NULL, NULL, 0, &out, &y, 1);
    onyx_tensor_free(y);
    return st;
}

/* Empty inputs whose other axes are huge: [0, 2^62] holds no element, so
 * it is a legal tensor, but products that skip the zero overflow. A shape
 * whose non-zero axes multiply past int64 is refused when the tensor is
 * made ([2^59, 0, 2^21, 2^21]): every partial product of a legal shape
 * fits int64. */
static void test_empty_huge_axes(onyx_env *env) {
    onyx_session *s;
    const int64_t zero_big[] = {0, (int64_t)1 << 62};
    /* Unique along an axis of 2^62 slices: 6 * 8 * 2^62 bytes of working
     * memory wrapped to 0, and the sort wrote past the buffer */
    mb_model *m = mb_new(11);
    mb_init_float(m, "x", zero_big, 2, NULL);
    mb_output(m, "y", ONYX_FLOAT32, NULL, -1);
    mb_node(m, "Unique", "x", "y");
    mb_attr_int(m, "axis", 1);
    CHECK_OK(create(env, m, &s));
    if (s)
        CHECK_FAILS(run_y(s), ONYX_INVALID_ARGUMENT,
                    "Unique: 4611686018427387904 slices along axis 1 need more than SIZE_MAX bytes");
    onyx_session_free(s);
    /* TopK with K = 0 on [2^40, 0, 2^11, 2^11]: the sizes before and after
     * the axis multiply to 2^62; on [2^59, 0, 2^21, 2^21] to 2^101, which
     * no tensor may have */
    const int64_t xd[] = {(int64_t)1 << 40, 0, (int64_t)1 << 11, (int64_t)1 << 11}, kd[] = {1}, k0 = 0;
    const int64_t xd_huge[] = {(int64_t)1 << 59, 0, (int64_t)1 << 21, (int64_t)1 << 21};
    for (int huge = 0; huge < 2; huge++) {
        m = mb_new(11);
        mb_init_float(m, "x", huge ? xd_huge : xd, 4, NULL);
        mb_init_int64(m, "k", kd, 1, &k0);
        mb_output(m, "y", ONYX_FLOAT32, NULL, -1);
        mb_output(m, "i", ONYX_INT64, NULL, -1);
        mb_node(m, "TopK", "x,k", "y,i");
        mb_attr_int(m, "axis", 1);
        if (huge) {
            CHECK_FAILS(create(env, m, &s), ONYX_OUT_OF_MEMORY,
                        "tensor size overflows: float32 [576460752303423488,0,2097152,2097152] is empty, but "
                        "its other dimensions multiply past int64");
        } else {
            CHECK_OK(create(env, m, &s));
            if (s) CHECK_OK(run_y(s));
        }
        onyx_session_free(s);
    }
    /* Trilu on 2^40 rows of no columns: used to walk every row */
    const int64_t td[] = {(int64_t)1 << 40, 0};
    m = mb_new(14);
    mb_init_float(m, "x", td, 2, NULL);
    mb_output(m, "y", ONYX_FLOAT32, NULL, -1);
    mb_node(m, "Trilu", "x", "y");
    CHECK_OK(create(env, m, &s));
    if (s) CHECK_OK(run_y(s));
    onyx_session_free(s);
}

static void test_dft_lengths(onyx_env *env) {
    onyx_session *s;
    /* a one-sided inverse DFT of INT64_MAX bins: 2 * (bins - 1) */
    const int64_t xd[] = {1, BIG, 2};
    mb_model *m = mb_new(17);
    mb_input(m, "x", ONYX_FLOAT32, xd, 3);
    mb_output(m, "y", ONYX_FLOAT32, NULL, -1);
    mb_node(m, "DFT", "x", "y");
    mb_attr_int(m, "axis", 1);
    mb_attr_int(m, "onesided", 1);
    mb_attr_int(m, "inverse", 1);
    CHECK_FAILS(create(env, m, &s), ONYX_INVALID_MODEL,
                "DFT: the one-sided inverse length 2 * (bins - 1) overflows int64 (9223372036854775806 * 2)");
    onyx_session_free(s);
    /* an empty signal axis between two long ones: the transformed lines
     * used to be counted before noticing there were none */
    const int64_t ed[] = {(int64_t)1 << 40, 0, (int64_t)1 << 20, 1};
    m = mb_new(17);
    mb_init_float(m, "x", ed, 4, NULL);
    mb_output(m, "y", ONYX_FLOAT32, NULL, -1);
    mb_node(m, "DFT", "x", "y");
    mb_attr_int(m, "axis", 1);
    CHECK_OK(create(env, m, &s));
    if (s) CHECK_OK(run_y(s));
    onyx_session_free(s);
    /* a one-sided forward DFT of an empty signal: one bin to write and
     * nothing to compute it from (the output used to be left unwritten) */
    const int64_t zd[] = {2, 0, 2};
    m = mb_new(17);
    mb_init_float(m, "x", zd, 3, NULL);
    mb_output(m, "y", ONYX_FLOAT32, NULL, -1);
    mb_node(m, "DFT", "x", "y");
    mb_attr_int(m, "axis", 1);
    mb_attr_int(m, "onesided", 1);
    CHECK_OK(create(env, m, &s));
    if (s)
        CHECK_FAILS(run_y(s), ONYX_INVALID_ARGUMENT,
                    "DFT: the signal along axis 1 is empty; a one-sided transform needs at least one sample");
    onyx_session_free(s);
}

/* Scan with an identity body: state s passes through, each of the
 * n_out scan outputs is the scanned slice. */
static mb_model *scan_model(const int64_t *x_dims, int rank, int n_out, int64_t in_axis, int64_t out_axis) {
    mb_model *body = mb_new(16);
    mb_input(body, "s_in", ONYX_FLOAT32, NULL, -1);
    mb_input(body, "xi", ONYX_FLOAT32, NULL, -1);
    mb_output(body, "s_out", ONYX_FLOAT32, NULL, -1);
    mb_node(body, "Identity", "s_in", "s_out");
    char outs[64] = "sf", name[16];
    for (int q = 0; q < n_out; q++) {
        snprintf(name, sizeof name, "o%d", q);
        mb_output(body, name, ONYX_FLOAT32, NULL, -1);
        mb_node(body, "Identity", "xi", name);
        snprintf(outs + strlen(outs), sizeof outs - strlen(outs), ",y%d", q);
    }
    mb_model *m = mb_new(16);
    const int64_t sd[] = {1};
    const float zero = 0;
    mb_init_float(m, "s", sd, 1, &zero);
    mb_init_float(m, "x", x_dims, rank, NULL);
    mb_output(m, "sf", ONYX_FLOAT32, NULL, -1);
    for (int q = 0; q < n_out; q++) {
        snprintf(name, sizeof name, "y%d", q);
        mb_output(m, name, ONYX_FLOAT32, NULL, -1);
    }
    mb_node(m, "Scan", "s,x", outs);
    mb_attr_graph(m, "body", body);
    mb_attr_int(m, "num_scan_inputs", 1);
    mb_attr_ints(m, "scan_input_axes", &in_axis, 1);
    const int64_t oa[2] = {out_axis, out_axis};
    mb_attr_ints(m, "scan_output_axes", oa, (size_t)n_out);
    return m;
}

static void test_scan_sizes(onyx_env *env) {
    onyx_session *s;
    /* a sequence of 2^62 empty steps and 2 scan outputs: 2^63 slots */
    const int64_t xd[] = {0, (int64_t)1 << 62};
    CHECK_OK(create(env, scan_model(xd, 2, 2, 1, 0), &s));
    if (s) {
        onyx_tensor *y = NULL;
        const char *out = "y0";
        CHECK_FAILS(onyx_session_run(s, NULL, NULL, 0, &out, &y, 1), ONYX_INVALID_ARGUMENT,
                    "Scan: the scan outputs times the sequence length overflows int64");
        onyx_tensor_free(y);
    }
    onyx_session_free(s);
    /* one step whose piece [0, 2^40, 2^20] is stacked on axis 1 */
    const int64_t xd2[] = {1, 0, (int64_t)1 << 40, (int64_t)1 << 20};
    mb_model *m = scan_model(xd2, 4, 1, 0, 1);
    CHECK_OK(create(env, m, &s));
    if (s) {
        onyx_tensor *y[2] = {NULL, NULL};
        const char *outs[] = {"sf", "y0"};
        CHECK_OK(onyx_session_run(s, NULL, NULL, 0, outs, y, 2));
        if (y[1]) {
            const int64_t *d = onyx_tensor_dims(y[1]);
            CHECK(onyx_tensor_rank(y[1]) == 4 && d[0] == 0 && d[1] == 1 && d[2] == ((int64_t)1 << 40));
        }
        onyx_tensor_free(y[0]);
        onyx_tensor_free(y[1]);
    }
    onyx_session_free(s);
}

int main(void) {
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    test_depth_space(env);
    test_einsum(env);
    test_lrn(env);
    test_conv_windows(env);
    test_reshape(env);
    test_rnn(env);
    test_tfidf(env);
    test_shape_sums(env);
    test_qlinear_nan(env);
    test_string_raw_data();
    test_fold_huge(env);
    test_quant_edges(env);
    test_empty_huge_axes(env);
    test_scan_sizes(env);
    test_dft_lengths(env);
    onyx_env_free(env);
    CHECK_DONE();
}
