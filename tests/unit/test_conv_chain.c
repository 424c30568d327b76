/* The fuse_conv_depthwise pass and the onyx ConvDepthwise kernel
 * (conv_chain.c), on three image-sized convolution + depthwise pairs of
 * three images with planes that are no multiple of any tile:
 *   A: 3 -> 16, 3x3 stride 2 + HardSwish (16 x 120 x 101, 776 KB per
 *      image), then a 3x3 stride-2 depthwise layer with asymmetric pads
 *      (top 1, left 0, bottom 1, right 1) + Relu;
 *   B: 3 -> 12, 5x5 without bias, LeakyRelu (applied after the tile)
 *      (12 x 239 x 201), then a 3x3 depthwise layer of dilation 2 +
 *      Clip(-0.5, 0.7);
 *   C: pair A's shape with its first output also a graph output: not
 *      fused;
 *   D: 3 -> 8, 3x3 stride 1 + Sigmoid (applied in the tile), then a 5x5
 *      stride-2 depthwise layer without bias or activation;
 *   E: 3 -> 16, 7x7 stride 2, then a 3x3 stride-1 depthwise layer +
 *      Sigmoid (applied over the planes after it).
 * At level ALL the pass must leave four ConvDepthwise nodes, and every
 * output must match level NONE (Conv, activation and Conv nodes) within
 * 1e-6 of (1 + |value|) (the fused activations are computed in the
 * convolutions' epilogues, the plain ones by their own kernels, and the
 * first convolution's sums in another order; the largest difference
 * seen on an AMD Zen 4 over every variant: 1.4e-7), at one and two
 * threads, under the machine's best kernels, ONYX_CPU_ISA=avx2 and
 * portable (where the kernel runs the two convolutions whole, one after
 * the other). Hand-written ConvDepthwise nodes with depthwise weights of
 * the wrong shape or none, depthwise_strides of one value, an unknown
 * depthwise activation, or a depthwise kernel larger than its padded
 * input fail at session creation with a message naming the fault; the
 * same node without one runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model_builder.h"

enum { N = 3, C = 3, H = 239, W = 201, NOUT = 6 };
/* the tolerance, in units of (1 + |value|) */
#define TOL 1e-6

static const char *OUTS[NOUT] = {"ya", "yb", "yc", "c3", "yd", "ye"};

static float frand(unsigned *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void tensor(mb_model *m, const char *name, const int64_t *dims, int rank, float scale, unsigned *seed) {
    int64_t n = 1;
    for (int d = 0; d < rank; d++) n *= dims[d];
    float *v = malloc(sizeof(float) * (size_t)n);
    if (!v) abort();
    for (int64_t i = 0; i < n; i++) v[i] = scale * frand(seed);
    mb_init_float(m, name, dims, rank, v);
    free(v);
}

static uint8_t *model(size_t *len) {
    unsigned seed = 2024;
    mb_model *m = mb_new(17);
    const int64_t dx[] = {N, C, H, W}, da[] = {N, 16, 60, 50}, db[] = {N, 12, H, W}, dc[] = {N, 16, 120, 101};
    mb_input(m, "x", ONYX_FLOAT32, dx, 4);
    mb_output(m, "ya", ONYX_FLOAT32, da, 4);
    mb_output(m, "yb", ONYX_FLOAT32, db, 4);
    mb_output(m, "yc", ONYX_FLOAT32, da, 4);
    mb_output(m, "c3", ONYX_FLOAT32, dc, 4);
    const int64_t dd[] = {N, 8, 120, 101};
    mb_output(m, "yd", ONYX_FLOAT32, dd, 4);
    mb_output(m, "ye", ONYX_FLOAT32, dc, 4);
    const int64_t w16[] = {16, C, 3, 3}, w12[] = {12, C, 5, 5}, d16[] = {16, 1, 3, 3}, d12[] = {12, 1, 3, 3},
                  b16[] = {16}, b12[] = {12};
    tensor(m, "w1", w16, 4, 0.5f, &seed);
    tensor(m, "b1", b16, 1, 0.2f, &seed);
    tensor(m, "wd1", d16, 4, 0.5f, &seed);
    tensor(m, "bd1", b16, 1, 0.2f, &seed);
    tensor(m, "w2", w12, 4, 0.2f, &seed);
    tensor(m, "wd2", d12, 4, 0.5f, &seed);
    tensor(m, "bd2", b12, 1, 0.2f, &seed);
    tensor(m, "w3", w16, 4, 0.5f, &seed);
    tensor(m, "wd3", d16, 4, 0.5f, &seed);
    const int64_t w8[] = {8, C, 3, 3}, d8[] = {8, 1, 5, 5}, w7[] = {16, C, 7, 7};
    tensor(m, "w4", w8, 4, 0.5f, &seed);
    tensor(m, "wd4", d8, 4, 0.3f, &seed);
    tensor(m, "w5", w7, 4, 0.1f, &seed);
    tensor(m, "wd5", d16, 4, 0.5f, &seed);
    float lo = -0.5f, hi = 0.7f;
    mb_init_float(m, "lo", NULL, 0, &lo);
    mb_init_float(m, "hi", NULL, 0, &hi);
    const int64_t s2[] = {2, 2}, p1[] = {1, 1, 1, 1}, p2[] = {2, 2, 2, 2}, pa[] = {1, 0, 1, 1}, dil2[] = {2, 2};
    /* A */
    mb_node(m, "Conv", "x,w1,b1", "c1");
    mb_attr_ints(m, "strides", s2, 2);
    mb_attr_ints(m, "pads", p1, 4);
    mb_node(m, "HardSwish", "c1", "a1");
    mb_node(m, "Conv", "a1,wd1,bd1", "e1");
    mb_attr_int(m, "group", 16);
    mb_attr_ints(m, "strides", s2, 2);
    mb_attr_ints(m, "pads", pa, 4);
    mb_node(m, "Relu", "e1", "ya");
    /* B */
    mb_node(m, "Conv", "x,w2", "c2");
    mb_attr_ints(m, "pads", p2, 4);
    mb_node(m, "LeakyRelu", "c2", "l2");
    mb_attr_float(m, "alpha", 0.1f);
    mb_node(m, "Conv", "l2,wd2,bd2", "e2");
    mb_attr_int(m, "group", 12);
    mb_attr_ints(m, "pads", p2, 4);
    mb_attr_ints(m, "dilations", dil2, 2);
    mb_node(m, "Clip", "e2,lo,hi", "yb");
    /* C: its first output is shown, so it stays */
    mb_node(m, "Conv", "x,w3,b1", "c3");
    mb_attr_ints(m, "strides", s2, 2);
    mb_attr_ints(m, "pads", p1, 4);
    mb_node(m, "Conv", "c3,wd3", "yc");
    mb_attr_int(m, "group", 16);
    mb_attr_ints(m, "strides", s2, 2);
    mb_attr_ints(m, "pads", pa, 4);
    /* D */
    const int64_t p3[] = {3, 3, 3, 3};
    mb_node(m, "Conv", "x,w4", "c4");
    mb_attr_ints(m, "pads", p1, 4);
    mb_node(m, "Sigmoid", "c4", "s4");
    mb_node(m, "Conv", "s4,wd4", "yd");
    mb_attr_int(m, "group", 8);
    mb_attr_ints(m, "strides", s2, 2);
    mb_attr_ints(m, "pads", p2, 4);
    /* E */
    mb_node(m, "Conv", "x,w5,b1", "c5");
    mb_attr_ints(m, "strides", s2, 2);
    mb_attr_ints(m, "pads", p3, 4);
    mb_node(m, "Conv", "c5,wd5,bd1", "e5");
    mb_attr_int(m, "group", 16);
    mb_attr_ints(m, "pads", p1, 4);
    mb_node(m, "Sigmoid", "e5", "ye");
    uint8_t *buf = mb_serialize(m, len);
    mb_free(m);
    return buf;
}

static onyx_session *session(onyx_env *env, const uint8_t *buf, size_t len, onyx_opt_level level, int threads) {
    onyx_session_options *o = NULL;
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_optimization_level(o, level));
    CHECK_OK(onyx_session_options_set_threads(o, threads));
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &s));
    onyx_session_options_free(o);
    return s;
}

static void run(onyx_session *s, onyx_tensor **outs) {
    static float x[N * C * H * W];
    unsigned seed = 7;
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = frand(&seed);
    const int64_t dx[] = {N, C, H, W};
    onyx_tensor *t = NULL;
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, dx, 4, x, sizeof x, &t));
    const char *in[] = {"x"};
    CHECK_OK(onyx_session_run(s, in, (const onyx_tensor *const *)&t, 1, OUTS, outs, NOUT));
    onyx_tensor_free(t);
}

/* the largest difference any comparison saw, in units of (1 + |value|) */
static double worst_seen;

static void compare(onyx_session *a, onyx_session *b, const char *what) {
    onyx_tensor *av[NOUT] = {NULL}, *bv[NOUT] = {NULL};
    run(a, av);
    run(b, bv);
    for (int k = 0; k < NOUT; k++) {
        if (!av[k] || !bv[k]) {
            check_failures++;
            continue;
        }
        size_t n = (size_t)onyx_tensor_numel(av[k]);
        CHECK((int64_t)n == onyx_tensor_numel(bv[k]) && n > 0);
        double e = check_close_f32(what, OUTS[k], onyx_tensor_data(av[k]), onyx_tensor_data(bv[k]), n, TOL);
        if (e > worst_seen) worst_seen = e;
        onyx_tensor_free(av[k]);
        onyx_tensor_free(bv[k]);
    }
}

static void test_pass(onyx_env *env, const char *isa, int threads) {
    if (isa) setenv("ONYX_CPU_ISA", isa, 1);
    size_t len = 0;
    uint8_t *buf = model(&len);
    onyx_session *ref = session(env, buf, len, ONYX_OPT_NONE, threads),
                 *opt = session(env, buf, len, ONYX_OPT_ALL, threads);
    if (ref && opt) {
        CHECK(check_count_op(opt, "ConvDepthwise") == 4);
        CHECK(check_count_op(ref, "ConvDepthwise") == 0);
        char what[64];
        snprintf(what, sizeof what, "ISA %s, %d thread(s)", isa ? isa : "best", threads);
        compare(opt, ref, what);
    }
    onyx_session_free(ref);
    onyx_session_free(opt);
    free(buf);
    unsetenv("ONYX_CPU_ISA");
}

/* A hand-written ConvDepthwise on a 1 x 3 x 16 x 16 input (3 -> 16,
 * 3x3, pads 1) with one fault: depthwise weights of shape wd_dims (or
 * none, inputs "x,w"), depthwise_strides of n_strides values, and the
 * depthwise activation act. */
static uint8_t *hand_written(const int64_t *wd_dims, size_t n_strides, const char *act, size_t *len) {
    unsigned seed = 5;
    mb_model *m = mb_new(17);
    const int64_t dx[] = {1, C, 16, 16}, dy[] = {1, 16, 16, 16}, w16[] = {16, C, 3, 3}, p1[] = {1, 1, 1, 1},
                  one[] = {1, 1};
    mb_input(m, "x", ONYX_FLOAT32, dx, 4);
    mb_output(m, "y", ONYX_FLOAT32, dy, 4);
    tensor(m, "w", w16, 4, 0.5f, &seed);
    if (wd_dims) tensor(m, "wd", wd_dims, 4, 0.5f, &seed);
    mb_node(m, "ConvDepthwise", wd_dims ? "x,w,,wd" : "x,w", "y");
    mb_domain(m, "onyx", 1);
    mb_attr_ints(m, "pads", p1, 4);
    mb_attr_ints(m, "depthwise_pads", p1, 4);
    mb_attr_ints(m, "depthwise_strides", one, n_strides);
    mb_attr_string(m, "depthwise_activation", act);
    uint8_t *buf = mb_serialize(m, len);
    mb_free(m);
    return buf;
}

/* Each fault fails at session creation with a message naming it. */
static void test_bad_nodes(onyx_env *env) {
    static const int64_t ok[] = {16, 1, 3, 3}, two[] = {16, 2, 3, 3}, wide[] = {16, 1, 21, 21};
    static const struct {
        const int64_t *wd;
        size_t n_strides;
        const char *act, *needle;
        onyx_code code;
    } CASES[] = {
        {two, 2, "", "must be [M, 1, KH, KW]", ONYX_INVALID_MODEL},
        {NULL, 2, "", "the depthwise weights (input 3) are missing", ONYX_INVALID_MODEL},
        {ok, 1, "", "depthwise_strides and depthwise_dilations need 2 values", ONYX_INVALID_MODEL},
        {ok, 2, "Softsign", "activation 'Softsign' is not supported", ONYX_NOT_IMPLEMENTED},
        {wide, 2, "", "does not fit the padded input", ONYX_INVALID_MODEL},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        size_t len = 0;
        uint8_t *buf = hand_written(CASES[i].wd, CASES[i].n_strides, CASES[i].act, &len);
        onyx_session *s = NULL;
        CHECK_FAILS(onyx_session_create_from_buffer(env, buf, len, NULL, &s), CASES[i].code, CASES[i].needle);
        CHECK(s == NULL);
        onyx_session_free(s);
        free(buf);
    }
    /* the same node without a fault runs */
    size_t len = 0;
    uint8_t *buf = hand_written(ok, 2, "Relu", &len);
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, NULL, &s));
    if (s) {
        /* zeros in, no biases: zeros out, from whichever path the machine takes */
        static float x[C * 16 * 16];
        const int64_t dx[] = {1, C, 16, 16};
        onyx_tensor *t = NULL, *y = NULL;
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, dx, 4, x, sizeof x, &t));
        const char *in[] = {"x"}, *out[] = {"y"};
        CHECK_OK(onyx_session_run(s, in, (const onyx_tensor *const *)&t, 1, out, &y, 1));
        if (y) {
            const float *v = onyx_tensor_data(y);
            int zeros = onyx_tensor_numel(y) == 16 * 16 * 16;
            for (int64_t i = 0; zeros && i < onyx_tensor_numel(y); i++) zeros = v[i] == 0.0f;
            CHECK(zeros);
        }
        onyx_tensor_free(t);
        onyx_tensor_free(y);
    }
    onyx_session_free(s);
    free(buf);
}

int main(void) {
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    test_pass(env, NULL, 1);
    test_pass(env, NULL, 2);
    test_pass(env, "avx2", 2);
    test_pass(env, "portable", 1);
    test_bad_nodes(env);
    onyx_env_free(env);
    printf("largest difference from level none: %.3g of (1 + |value|), tolerance %.0e\n", worst_seen, TOL);
    CHECK_DONE();
}
