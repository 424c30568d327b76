/* The block_channels pass and the channel-blocked kernels (BlockChannels,
 * BlockedConv, UnblockChannels) on a graph of convolutions with every
 * corner the kernels have: planar and blocked inputs, channel counts
 * that are no multiple of 16, a residual from a blocked convolution and
 * one from a graph input, strides 2 with asymmetric pads onto a plane
 * small enough for the reduction to go in slabs (432 products: four),
 * dilation 2, a 5x5 kernel, planes that are no multiple of the
 * 6-position tile, two images, activations applied in the tile and
 * after it. Every result must match the same graph run
 * plain (level NONE: Conv, Add and activation nodes) within 5e-6 of
 * (1 + |value|): the blocked sums add the same products in another order
 * (the largest difference seen over every variant: 5.6e-7).
 *   - kernels: the graph written by hand with the onyx operators, under
 *     the machine's best tiles, then ONYX_CPU_ISA=avx2 and portable, so
 *     every tile variant is checked on every machine;
 *   - pass: the plain graph at level ALL, whose node counts show what
 *     the pass blocked (on AVX-512 only; a shallow convolution that would
 *     need a reorder stays planar by the cost rule);
 *   - capture (onyx check's view of a run) reports blocked values under
 *     their planar names, in the planar layout, once;
 *   - hand-written blocked operators that do not fit get a clean error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ep/cpu/kernels/cpu_isa.h"
#include "model_builder.h"

enum { N = 2, C = 20, H = 11, W = 13, M1 = 48, M3 = 64, M4 = 36, M5 = 40, M6 = 16, OH3 = 5, OW3 = 6 };

static float frand(unsigned *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* Weights [m, c, k, k] scaled by 1 / sqrt(c k k), so sums stay near 1. */
static void weights(mb_model *m, const char *name, int64_t mo, int64_t c, int64_t k, unsigned *seed) {
    const int64_t n = mo * c * k * k, d[] = {mo, c, k, k};
    float *w = malloc((size_t)n * sizeof *w);
    for (int64_t i = 0; i < n; i++) w[i] = frand(seed) / sqrtf((float)(c * k * k));
    mb_init_float(m, name, d, 4, w);
    free(w);
}

static void bias(mb_model *m, const char *name, int64_t mo, unsigned *seed) {
    float b[64];
    const int64_t d[] = {mo};
    for (int64_t i = 0; i < mo; i++) b[i] = frand(seed) * 0.5f;
    mb_init_float(m, name, d, 1, b);
}

static const char *OUTS[] = {"y3", "y4", "y5", "y6"};
enum { NOUT = 4 };

/* One node of the onyx domain. */
static void onyx_node(mb_model *m, const char *op, const char *in, const char *out) {
    mb_node(m, op, in, out);
    mb_domain(m, "onyx", 1);
}

/* The graph as an exporter writes it, or (blocked set) the same graph
 * written by hand with the onyx operators the block_channels pass makes,
 * so that the kernels run without the pass (which takes only AVX-512
 * machines) under every ISA cap. */
static uint8_t *model(size_t *len, int blocked) {
    unsigned seed = 2026;
    mb_model *m = mb_new(17);
    const int64_t dx[] = {N, C, H, W}, dz[] = {N, M4, H, W}, d3[] = {N, M3, OH3, OW3}, d4[] = {N, M4, H, W},
                  d5[] = {N, M5, H, W}, d6[] = {N, M6, H, W};
    mb_input(m, "x", ONYX_FLOAT32, dx, 4);
    mb_input(m, "z", ONYX_FLOAT32, dz, 4);
    mb_output(m, "y3", ONYX_FLOAT32, d3, 4);
    mb_output(m, "y4", ONYX_FLOAT32, d4, 4);
    mb_output(m, "y5", ONYX_FLOAT32, d5, 4);
    mb_output(m, "y6", ONYX_FLOAT32, d6, 4);
    weights(m, "w1", M1, C, 1, &seed);
    weights(m, "w2", M1, M1, 3, &seed);
    weights(m, "w3", M3, M1, 3, &seed);
    weights(m, "w4", M4, M1, 3, &seed);
    weights(m, "w5", M5, M1, 5, &seed);
    weights(m, "w6", M6, M1, 1, &seed);
    bias(m, "b1", M1, &seed);
    bias(m, "b2", M1, &seed);
    bias(m, "b3", M3, &seed);
    bias(m, "b4", M4, &seed);
    const int64_t p1[] = {1, 1, 1, 1}, p2[] = {2, 2, 2, 2}, s2[] = {2, 2}, d2[] = {2, 2}, pa[] = {1, 0, 0, 1};
    const float leaky = 0.1f;
    if (blocked) {
        onyx_node(m, "BlockedConv", "x,w1,b1", "r1b");
        mb_attr_string(m, "activation", "Relu");
        onyx_node(m, "BlockedConv", "r1b,w2,b2,r1b", "r2b");
        mb_attr_ints(m, "pads", p1, 4);
        mb_attr_string(m, "activation", "Relu");
        onyx_node(m, "BlockedConv", "r2b,w3,b3", "y3b");
        mb_attr_ints(m, "strides", s2, 2);
        mb_attr_ints(m, "pads", pa, 4);
        mb_attr_string(m, "activation", "LeakyRelu");
        mb_attr_floats(m, "activation_params", &leaky, 1);
        onyx_node(m, "BlockChannels", "z", "zb");
        onyx_node(m, "BlockedConv", "r2b,w4,b4,zb", "y4b");
        mb_attr_ints(m, "pads", p2, 4);
        mb_attr_ints(m, "dilations", d2, 2);
        mb_attr_string(m, "activation", "HardSwish");
        onyx_node(m, "BlockedConv", "r2b,w5", "y5b");
        mb_attr_ints(m, "pads", p2, 4);
        mb_attr_string(m, "activation", "Sigmoid");
        const char *outs[][3] = {{"y3b", "y3", "64"}, {"y4b", "y4", "36"}, {"y5b", "y5", "40"}, {"r2b", "r2", "48"}};
        for (int i = 0; i < 4; i++) {
            onyx_node(m, "UnblockChannels", outs[i][0], outs[i][1]);
            mb_attr_int(m, "channels", atoi(outs[i][2]));
        }
        mb_node(m, "Conv", "r2,w6", "y6");
    } else {
        /* 1x1 on the planar graph input; 48 channels: 3 blocks */
        mb_node(m, "Conv", "x,w1,b1", "c1");
        mb_node(m, "Relu", "c1", "r1");
        /* 3x3 on blocks, with r1 (blocked) as the residual */
        mb_node(m, "Conv", "r1,w2,b2", "c2");
        mb_attr_ints(m, "pads", p1, 4);
        mb_node(m, "Add", "c2,r1", "a2");
        mb_node(m, "Relu", "a2", "r2");
        /* strides 2, pads top 1 and right 1 only, LeakyRelu after the
         * tile; 5 tiles of 6 positions: the reduction goes in slabs */
        mb_node(m, "Conv", "r2,w3,b3", "c3");
        mb_attr_ints(m, "strides", s2, 2);
        mb_attr_ints(m, "pads", pa, 4);
        mb_node(m, "LeakyRelu", "c3", "y3");
        mb_attr_float(m, "alpha", leaky);
        /* dilation 2, a residual from a graph input, HardSwish; 36 channels */
        mb_node(m, "Conv", "r2,w4,b4", "c4");
        mb_attr_ints(m, "pads", p2, 4);
        mb_attr_ints(m, "dilations", d2, 2);
        mb_node(m, "Add", "c4,z", "a4");
        mb_node(m, "HardSwish", "a4", "y4");
        /* 5x5 without bias: 1200 products per output */
        mb_node(m, "Conv", "r2,w5", "c5");
        mb_attr_ints(m, "pads", p2, 4);
        mb_node(m, "Sigmoid", "c5", "y5");
        /* 48 products per output and a graph output: a reorder would
         * cost more than blocking saves, so it stays a planar Conv */
        mb_node(m, "Conv", "r2,w6", "y6");
    }
    uint8_t *buf = mb_serialize(m, len);
    mb_free(m);
    return buf;
}

static void run(onyx_session *s, const onyx_run_options *ro, onyx_tensor **outs) {
    static float x[N * C * H * W], z[N * M4 * H * W];
    unsigned seed = 77;
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = frand(&seed);
    for (size_t i = 0; i < sizeof z / sizeof z[0]; i++) z[i] = frand(&seed);
    const int64_t dx[] = {N, C, H, W}, dz[] = {N, M4, H, W};
    onyx_tensor *t[2] = {NULL, NULL};
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, dx, 4, x, sizeof x, &t[0]));
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, dz, 4, z, sizeof z, &t[1]));
    const char *in[] = {"x", "z"};
    CHECK_OK(onyx_session_run_with_options(s, ro, in, (const onyx_tensor *const *)t, 2, OUTS, outs, NOUT));
    onyx_tensor_free(t[0]);
    onyx_tensor_free(t[1]);
}

static onyx_session *session(onyx_env *env, const uint8_t *buf, size_t len, onyx_opt_level level) {
    onyx_session_options *o = NULL;
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_optimization_level(o, level));
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &s));
    onyx_session_options_free(o);
    return s;
}

/* Outputs of a against b, within 5e-6 of (1 + |b|). */
static void compare(onyx_session *a, onyx_session *b, const char *what) {
    onyx_tensor *av[NOUT] = {NULL}, *bv[NOUT] = {NULL};
    run(a, NULL, av);
    run(b, NULL, bv);
    for (int k = 0; k < NOUT; k++) {
        if (!av[k] || !bv[k]) {
            check_failures++;
            continue;
        }
        size_t n = (size_t)onyx_tensor_numel(av[k]);
        CHECK((int64_t)n == onyx_tensor_numel(bv[k]) && n > 0);
        check_close_f32(what, OUTS[k], onyx_tensor_data(av[k]), onyx_tensor_data(bv[k]), n, 5e-6);
        onyx_tensor_free(av[k]);
        onyx_tensor_free(bv[k]);
    }
}

/* The kernels: the hand-written blocked graph (level NONE, so exactly as
 * written) against the planar graph, with the tiles of isa (NULL: the
 * machine's best). */
static void test_kernels(onyx_env *env, const char *isa) {
    if (isa) setenv("ONYX_CPU_ISA", isa, 1);
    size_t len = 0, blen = 0;
    uint8_t *buf = model(&len, 0), *bbuf = model(&blen, 1);
    onyx_session *ref = session(env, buf, len, ONYX_OPT_NONE), *blk = session(env, bbuf, blen, ONYX_OPT_NONE);
    if (ref && blk) {
        CHECK(check_count_op(blk, "BlockedConv") == 5);
        char what[64];
        snprintf(what, sizeof what, "blocked graph, ISA %s", isa ? isa : "best");
        compare(blk, ref, what);
    }
    onyx_session_free(ref);
    onyx_session_free(blk);
    free(buf);
    free(bbuf);
    unsetenv("ONYX_CPU_ISA");
}

/* The pass: at level ALL on an AVX-512 machine it writes the blocked
 * graph above (c1..c5 blocked; BlockChannels for z; UnblockChannels for
 * the three outputs and for r2, which the planar Conv reads); elsewhere,
 * and under ONYX_CPU_ISA=avx2, it leaves the graph alone. Where 512-bit
 * operations run in two halves (split: ONYX_CPU_512=split, or unset on
 * an AMD Zen 4) the 3x3 c2, which Winograd's path takes, stays planar,
 * and so does c1 (20 products per output, and r1 would need a reorder
 * for c2): c3..c5 blocked, BlockChannels for z, UnblockChannels for the
 * three outputs. Values match either way. */
static void test_pass(onyx_env *env, const char *isa, const char *split) {
    if (isa) setenv("ONYX_CPU_ISA", isa, 1);
    setenv("ONYX_CPU_512", split, 1);
    const int blocks = ox_cpu_isa_active() == OX_ISA_AVX512, halves = strcmp(split, "split") == 0;
    size_t len = 0;
    uint8_t *buf = model(&len, 0);
    onyx_session *ref = session(env, buf, len, ONYX_OPT_NONE), *opt = session(env, buf, len, ONYX_OPT_ALL);
    if (ref && opt) {
        CHECK(check_count_op(opt, "BlockedConv") == (blocks ? halves ? 3u : 5u : 0u));
        CHECK(check_count_op(opt, "BlockChannels") == (blocks ? 1u : 0u));
        CHECK(check_count_op(opt, "UnblockChannels") == (blocks ? halves ? 3u : 4u : 0u));
        CHECK(check_count_op(opt, "FusedConv") == (blocks ? halves ? 2u : 0u : 5u));
        char what[64];
        snprintf(what, sizeof what, "%s, 512-bit %s", blocks ? "pass" : "no pass", split);
        compare(opt, ref, what);
    }
    onyx_session_free(ref);
    onyx_session_free(opt);
    free(buf);
    unsetenv("ONYX_CPU_ISA");
    unsetenv("ONYX_CPU_512");
}

/* A chain x -> 1x1 (20 -> 48, Relu) -> 3x3 (48 -> 48, Relu, the shape
 * Winograd's path takes) -> 3x3 stride 2 (48 -> 64) -> y, with the
 * plane's sizes known or (open_planes) unknown until a run, as in an
 * exporter's dynamic axes. */
static uint8_t *winograd_chain(size_t *len, int open_planes) {
    unsigned seed = 11;
    mb_model *m = mb_new(17);
    const int64_t dx[] = {N, C, H, W}, ox[] = {N, C, -2, -2}, p1[] = {1, 1, 1, 1}, s2[] = {2, 2};
    mb_input(m, "x", ONYX_FLOAT32, open_planes ? ox : dx, 4);
    mb_output(m, "y", ONYX_FLOAT32, NULL, -1);
    weights(m, "wa", M1, C, 1, &seed);
    weights(m, "wb", M1, M1, 3, &seed);
    weights(m, "wc", M3, M1, 3, &seed);
    mb_node(m, "Conv", "x,wa", "a");
    mb_node(m, "Relu", "a", "ra");
    mb_node(m, "Conv", "ra,wb", "b");
    mb_attr_ints(m, "pads", p1, 4);
    mb_node(m, "Relu", "b", "rb");
    mb_node(m, "Conv", "rb,wc", "y");
    mb_attr_ints(m, "pads", p1, 4);
    mb_attr_ints(m, "strides", s2, 2);
    uint8_t *buf = mb_serialize(m, len);
    mb_free(m);
    return buf;
}

/* y of the chain on the fixed input. */
static onyx_tensor *run_chain(onyx_session *s) {
    static float x[N * C * H * W];
    unsigned seed = 5;
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = frand(&seed);
    const int64_t dx[] = {N, C, H, W};
    onyx_tensor *t = NULL, *y = NULL;
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, dx, 4, x, sizeof x, &t));
    const char *in[] = {"x"}, *out[] = {"y"};
    CHECK_OK(onyx_session_run(s, in, (const onyx_tensor *const *)&t, 1, out, &y, 1));
    onyx_tensor_free(t);
    return y;
}

/* The split rule decides from the weights, so a session that knows the
 * plane and one that does not (a model with dynamic axes, or its
 * optimized file, whose shapes inference may know differently) make the
 * same graph: under split the 3x3 stays planar either way (and the 1x1
 * before it, which would need a reorder for it), only the stride-2
 * layer blocked; under full all three blocked. Values within 5e-6 of
 * (1 + |value|) of the plain graph. */
static void test_split_open_planes(onyx_env *env) {
    if (ox_cpu_isa_active() != OX_ISA_AVX512) return; /* the pass runs only there */
    for (int open = 0; open < 2; open++)
        for (int halves = 0; halves < 2; halves++) {
            setenv("ONYX_CPU_512", halves ? "split" : "full", 1);
            size_t len = 0;
            uint8_t *buf = winograd_chain(&len, open);
            onyx_session *ref = session(env, buf, len, ONYX_OPT_NONE), *opt = session(env, buf, len, ONYX_OPT_ALL);
            if (ref && opt) {
                CHECK(check_count_op(opt, "BlockedConv") == (halves ? 1u : 3u));
                CHECK(check_count_op(opt, "UnblockChannels") == 1u);
                onyx_tensor *a = run_chain(opt), *b = run_chain(ref);
                const size_t n = a && b ? (size_t)onyx_tensor_numel(b) : 0;
                CHECK(n > 0 && (int64_t)n == onyx_tensor_numel(a));
                char what[48];
                snprintf(what, sizeof what, "chain (open %d, split %d)", open, halves);
                if (n) check_close_f32(what, "y", onyx_tensor_data(a), onyx_tensor_data(b), n, 5e-6);
                onyx_tensor_free(a);
                onyx_tensor_free(b);
            }
            onyx_session_free(ref);
            onyx_session_free(opt);
            free(buf);
        }
    unsetenv("ONYX_CPU_512");
}

/* A value of ONYX_CPU_512 other than full or split fails session
 * creation at level ALL with an error naming the variable. */
static void test_bad_split(onyx_env *env) {
    if (ox_cpu_isa_active() != OX_ISA_AVX512) return; /* the pass asks only there */
    setenv("ONYX_CPU_512", "half", 1);
    size_t len = 0;
    uint8_t *buf = model(&len, 0);
    onyx_session_options *o = NULL;
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_optimization_level(o, ONYX_OPT_ALL));
    onyx_status *st = onyx_session_create_from_buffer(env, buf, len, o, &s);
    CHECK(st != NULL && s == NULL);
    if (st) {
        CHECK(strstr(onyx_status_message(st), "ONYX_CPU_512") != NULL);
        onyx_status_free(st);
    }
    onyx_session_free(s);
    onyx_session_options_free(o);
    free(buf);
    unsetenv("ONYX_CPU_512");
}

/* What a run's capture saw of r1 (blocked in the optimized graph, read
 * only by blocked convolutions) and of r2 (blocked, with an
 * UnblockChannels for the planar Conv). */
typedef struct seen {
    float r1[N * M1 * H * W];
    int r1_calls, r1_planar, r2_calls, blocked_names;
} seen;

static void on_capture(void *user, size_t node, size_t output, const char *name, const onyx_tensor *value) {
    seen *s = user;
    (void)node, (void)output;
    const int64_t planar[] = {N, M1, H, W};
    s->blocked_names += strstr(name, "/blocked") != NULL;
    s->r2_calls += strcmp(name, "r2") == 0;
    if (strcmp(name, "r1") != 0) return;
    s->r1_calls++;
    s->r1_planar = onyx_tensor_rank(value) == 4 && memcmp(onyx_tensor_dims(value), planar, sizeof planar) == 0;
    if (s->r1_planar) memcpy(s->r1, onyx_tensor_data((onyx_tensor *)value), sizeof s->r1);
}

/* Capture reports blocked values as the model has them: under the planar
 * name, in the planar layout, once (the UnblockChannels that writes r2
 * reports nothing), with the plain graph's values within 5e-6 of (1 +
 * |value|); no "/blocked" name reaches the caller. */
static void test_capture(onyx_env *env) {
    size_t len = 0;
    uint8_t *buf = model(&len, 0);
    onyx_session *ref = session(env, buf, len, ONYX_OPT_NONE), *opt = session(env, buf, len, ONYX_OPT_ALL);
    static seen a, b;
    onyx_run_options *ra = NULL, *rb = NULL;
    CHECK_OK(onyx_run_options_create(&ra));
    CHECK_OK(onyx_run_options_create(&rb));
    if (ref && opt && ra && rb) {
        CHECK_OK(onyx_run_options_set_capture(ra, on_capture, &a));
        CHECK_OK(onyx_run_options_set_capture(rb, on_capture, &b));
        onyx_tensor *outs[2][NOUT] = {{NULL}};
        run(opt, ra, outs[0]);
        run(ref, rb, outs[1]);
        CHECK(a.r1_calls == 1 && a.r1_planar && a.r2_calls == 1 && a.blocked_names == 0);
        CHECK(b.r1_calls == 1 && b.r1_planar);
        check_close_f32("capture", "r1", a.r1, b.r1, sizeof a.r1 / sizeof a.r1[0], 5e-6);
        for (int k = 0; k < NOUT; k++) onyx_tensor_free(outs[0][k]), onyx_tensor_free(outs[1][k]);
    }
    onyx_run_options_free(ra);
    onyx_run_options_free(rb);
    onyx_session_free(ref);
    onyx_session_free(opt);
    free(buf);
}

/* Hand-written blocked operators that do not fit together: session
 * creation fails with a message naming the operator, never a crash. */
static void test_bad_blocked_input(onyx_env *env) {
    static const struct {
        const char *what, *op, *msg;
        int64_t w_channels, group, channels, x_lanes;
    } cases[] = {
        /* 20 channels: 2 blocks, not X's 3 */
        {"X's blocks", "BlockedConv", "BlockedConv", 20, 1, 0, 16},
        {"two groups", "BlockedConv", "BlockedConv", 48, 2, 0, 16},
        {"8 lanes", "BlockedConv", "BlockedConv", 48, 1, 0, 8},
        /* 60 channels: 4 blocks, not 3 */
        {"unblocked channels", "UnblockChannels", "UnblockChannels", 0, 1, 60, 16},
        /* W with no input channels for X without blocks: no tile can run */
        {"no channels", "BlockedConv", "BlockedConv", -1, 1, 0, 16},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned seed = 5;
        mb_model *m = mb_new(17);
        const int64_t dx[] = {1, 3, 4, 4, cases[i].x_lanes}, dx0[] = {1, 0, 4, 4}, dw0[] = {16, 0, 1, 1};
        if (cases[i].w_channels < 0)
            mb_input(m, "x", ONYX_FLOAT32, dx0, 4);
        else
            mb_input(m, "x", ONYX_FLOAT32, dx, 5);
        mb_output(m, "y", ONYX_FLOAT32, NULL, -1);
        if (cases[i].w_channels < 0) {
            static const float none[1];
            mb_init_float(m, "w", dw0, 4, none);
            mb_node(m, cases[i].op, "x,w", "y");
        } else if (cases[i].w_channels) {
            weights(m, "w", 16, cases[i].w_channels, 1, &seed);
            mb_node(m, cases[i].op, "x,w", "y");
            if (cases[i].group != 1) mb_attr_int(m, "group", cases[i].group);
        } else {
            mb_node(m, cases[i].op, "x", "y");
            mb_attr_int(m, "channels", cases[i].channels);
        }
        mb_domain(m, "onyx", 1);
        size_t len = 0;
        uint8_t *buf = mb_serialize(m, &len);
        mb_free(m);
        onyx_session *s = NULL;
        onyx_status *st = onyx_session_create_from_buffer(env, buf, len, NULL, &s);
        CHECK(st != NULL && s == NULL);
        if (st && !strstr(onyx_status_message(st), cases[i].msg)) {
            fprintf(stderr, "%s: %s\n", cases[i].what, onyx_status_message(st));
            check_failures++;
        }
        onyx_status_free(st);
        onyx_session_free(s);
        free(buf);
    }
}

int main(void) {
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    test_kernels(env, NULL);
    test_kernels(env, "avx2");
    test_kernels(env, "portable");
    test_pass(env, NULL, "full");
    test_pass(env, NULL, "split");
    test_pass(env, "avx2", "full");
    test_bad_split(env);
    test_split_open_planes(env);
    setenv("ONYX_CPU_512", "full", 1); /* r1 blocked, so its capture is checked */
    test_capture(env);
    unsetenv("ONYX_CPU_512");
    test_bad_blocked_input(env);
    onyx_env_free(env);
    if (check_failures) fprintf(stderr, "%d check(s) failed\n", check_failures);
    return check_failures ? 1 : 0;
}
