/* Hostile shape and attribute numbers: a model may set any of them to
 * INT64_MAX, INT64_MIN or 2^32. Each case is refused with a clear error
 * (never a crash or a silently wrong shape), and the kernels touched on
 * the way still give the right values for ordinary numbers. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "model_builder.h"

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
    onyx_env_free(env);
    CHECK_DONE();
}
