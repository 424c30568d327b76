/* The fuse_conv_activation pass (level ALL): Conv chains become onyx
 * FusedConv nodes (Relu, Clip from constant inputs, Sigmoid, HardSigmoid,
 * HardSwish, x * Sigmoid(x), x * Clip(x + 3, 0, 6) / 6 after a folded
 * Mul/Add by constants, LeakyRelu, Tanh, a residual Add before Relu),
 * while a Conv whose output is a graph output or has a second reader
 * (a subgraph's capture included) keeps its activation node. The outputs match the unfused graph (level
 * BASIC) within 1e-5 of their magnitude: the folded constants differ by
 * one float32 rounding and both graphs use the same activation code. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model_builder.h"

enum { C = 3, M = 4, H = 8, W = 8, K = 3, OH = H - K + 1, OW = W - K + 1, NOUT = 14 };

static const char *OUTS[NOUT] = {"y1", "y2", "y3", "y4", "y5", "y6", "y7",
                                 "y8", "y9", "y10", "c10", "y11", "y11b", "y12"};

static float frand(unsigned *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static uint8_t *model(size_t *len) {
    unsigned seed = 4242;
    mb_model *m = mb_new(17);
    int64_t dx[] = {1, C, H, W}, dy[] = {1, M, OH, OW}, dw[] = {M, C, K, K}, dm[] = {M},
            dc[] = {1, M, 1, 1}, one[] = {1};
    mb_input(m, "x", ONYX_FLOAT32, dx, 4);
    mb_input(m, "r", ONYX_FLOAT32, dy, 4);
    for (int i = 0; i < NOUT; i++) mb_output(m, OUTS[i], ONYX_FLOAT32, dy, 4);
    float w[M * C * K * K], b[M], ch[M];
    for (int i = 0; i < M; i++) {
        b[i] = frand(&seed);
        ch[i] = frand(&seed);
    }
    float s = 1.75f, three = 3.0f, zero = 0.0f, six = 6.0f, lo = -0.3f, hi = 0.4f;
    /* a weight per Conv: equal nodes would be merged by eliminate_common */
    for (int k = 1; k <= 12; k++) {
        char name[8];
        snprintf(name, sizeof name, "w%d", k);
        for (int i = 0; i < M * C * K * K; i++) w[i] = frand(&seed);
        mb_init_float(m, name, dw, 4, w);
    }
    mb_init_float(m, "b", dm, 1, b);
    mb_init_float(m, "ch", dc, 4, ch);
    mb_init_float(m, "s", one, 1, &s);
    mb_init_float(m, "three", NULL, 0, &three);
    mb_init_float(m, "zero", NULL, 0, &zero);
    mb_init_float(m, "six", NULL, 0, &six);
    mb_init_float(m, "lo", NULL, 0, &lo);
    mb_init_float(m, "hi", NULL, 0, &hi);
    mb_node(m, "Conv", "x,w1,b", "c1");
    mb_node(m, "Relu", "c1", "y1");
    mb_node(m, "Conv", "x,w2", "c2");
    mb_node(m, "Add", "r,c2", "a2");
    mb_node(m, "Relu", "a2", "y2");
    mb_node(m, "Conv", "x,w3,b", "c3");
    mb_node(m, "Mul", "s,c3", "m3");
    mb_node(m, "Add", "m3,ch", "t3");
    mb_node(m, "Add", "t3,three", "p3");
    mb_node(m, "Clip", "p3,zero,six", "q3");
    mb_node(m, "Mul", "t3,q3", "u3");
    mb_node(m, "Div", "u3,six", "y3");
    mb_node(m, "Conv", "x,w4", "c4");
    mb_node(m, "Sigmoid", "c4", "s4");
    mb_node(m, "Mul", "s4,c4", "y4");
    mb_node(m, "Conv", "x,w5,b", "c5");
    mb_node(m, "Clip", "c5,lo,hi", "y5");
    mb_node(m, "Conv", "x,w6,b", "c6");
    mb_node(m, "HardSigmoid", "c6", "y6");
    mb_attr_float(m, "alpha", 0.25f);
    mb_attr_float(m, "beta", 0.4f);
    mb_node(m, "Conv", "x,w7,b", "c7");
    mb_node(m, "LeakyRelu", "c7", "y7");
    mb_attr_float(m, "alpha", 0.3f);
    mb_node(m, "Conv", "x,w8,b", "c8");
    mb_node(m, "Tanh", "c8", "y8");
    mb_node(m, "Conv", "x,w9,b", "c9");
    mb_node(m, "HardSwish", "c9", "y9");
    /* not fused: c10 is a graph output, c11 has two readers */
    mb_node(m, "Conv", "x,w10,b", "c10");
    mb_node(m, "Relu", "c10", "y10");
    mb_node(m, "Conv", "x,w11,b", "c11");
    mb_node(m, "Relu", "c11", "y11");
    mb_node(m, "Sigmoid", "c11", "y11b");
    mb_node(m, "Conv", "x,w12,b", "c12");
    mb_node(m, "Sigmoid", "c12", "y12");
    uint8_t *buf = mb_serialize(m, len);
    mb_free(m);
    return buf;
}

static void run(onyx_session *s, onyx_tensor **outs) {
    static float x[C * H * W], r[M * OH * OW];
    unsigned seed = 99;
    for (int i = 0; i < C * H * W; i++) x[i] = frand(&seed) * 2.0f;
    for (int i = 0; i < M * OH * OW; i++) r[i] = frand(&seed);
    int64_t dx[] = {1, C, H, W}, dr[] = {1, M, OH, OW};
    onyx_tensor *t[2] = {NULL, NULL};
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, dx, 4, x, sizeof x, &t[0]));
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, dr, 4, r, sizeof r, &t[1]));
    const char *in[] = {"x", "r"};
    CHECK_OK(onyx_session_run(s, in, (const onyx_tensor *const *)t, 2, OUTS, outs, NOUT));
    onyx_tensor_free(t[0]);
    onyx_tensor_free(t[1]);
}

/* A graph with an If: Conv -> BatchNormalization -> Relu still folds and
 * fuses beside it, while a Conv
 * whose output the If's branches read keeps its Relu (the capture is a
 * second reader). Values as the unfused graph's within 1e-5. */
static void test_beside_subgraph(onyx_env *env) {
    unsigned seed = 7;
    static float w[M * C * K * K], k1[1] = {0.5f};
    for (int i = 0; i < M * C * K * K; i++) w[i] = frand(&seed);
    int64_t dx[] = {1, C, H, W}, dy[] = {1, M, OH, OW}, dw[] = {M, C, K, K}, d1[] = {1};
    mb_model *then_b = mb_new(17), *else_b = mb_new(17), *m = mb_new(17);
    mb_output(then_b, "t", ONYX_FLOAT32, dy, 4);
    mb_node(then_b, "Add", "c2,k", "t");
    mb_output(else_b, "e", ONYX_FLOAT32, dy, 4);
    mb_node(else_b, "Sub", "c2,k", "e");
    mb_input(m, "x", ONYX_FLOAT32, dx, 4);
    mb_input(m, "cond", ONYX_BOOL, NULL, 0);
    mb_output(m, "r1", ONYX_FLOAT32, dy, 4);
    mb_output(m, "r2", ONYX_FLOAT32, dy, 4);
    mb_output(m, "yi", ONYX_FLOAT32, dy, 4);
    mb_init_float(m, "w", dw, 4, w);
    mb_init_float(m, "k", d1, 1, k1);
    static const float scale[M] = {1.5f, -0.5f, 2.0f, 0.25f}, shift[M] = {0.1f, 0.2f, -0.3f, 0.0f},
                       mean[M] = {0.05f, -0.1f, 0.2f, 0.0f}, var[M] = {1.0f, 0.5f, 2.0f, 0.8f};
    int64_t dm[] = {M};
    mb_init_float(m, "bs", dm, 1, scale);
    mb_init_float(m, "bb", dm, 1, shift);
    mb_init_float(m, "bm", dm, 1, mean);
    mb_init_float(m, "bv", dm, 1, var);
    mb_node(m, "Conv", "x,w", "c0");
    mb_node(m, "BatchNormalization", "c0,bs,bb,bm,bv", "c1");
    mb_node(m, "Relu", "c1", "r1");
    mb_node(m, "Conv", "x,w", "c2");
    mb_node(m, "Relu", "c2", "r2");
    mb_node(m, "If", "cond", "yi");
    mb_attr_graph(m, "then_branch", then_b);
    mb_attr_graph(m, "else_branch", else_b);
    size_t len = 0;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *s[2] = {NULL, NULL};
    onyx_session_options *o = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    for (int l = 0; l < 2; l++) {
        CHECK_OK(onyx_session_options_set_optimization_level(o, l ? ONYX_OPT_ALL : ONYX_OPT_NONE));
        CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &s[l]));
    }
    if (s[0] && s[1]) {
        CHECK(check_count_op(s[1], "FusedConv") == 1);
        CHECK(check_count_op(s[1], "BatchNormalization") == 0);
        CHECK(check_count_op(s[1], "Conv") == 1);
        CHECK(check_count_op(s[1], "Relu") == 1);
        static float x[C * H * W];
        for (int i = 0; i < C * H * W; i++) x[i] = frand(&seed) * 2.0f;
        unsigned char cond = 1;
        onyx_tensor *out[2][3] = {{NULL}};
        const char *in[] = {"x", "cond"}, *on[] = {"r1", "r2", "yi"};
        for (int l = 0; l < 2; l++) {
            onyx_tensor *t[2] = {NULL, NULL};
            CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, dx, 4, x, sizeof x, &t[0]));
            CHECK_OK(onyx_tensor_wrap(ONYX_BOOL, NULL, 0, &cond, 1, &t[1]));
            CHECK_OK(onyx_session_run(s[l], in, (const onyx_tensor *const *)t, 2, on, out[l], 3));
            onyx_tensor_free(t[0]);
            onyx_tensor_free(t[1]);
        }
        for (int k = 0; k < 3; k++) {
            if (!out[0][k] || !out[1][k]) {
                check_failures++;
                continue;
            }
            const float *a = onyx_tensor_data(out[0][k]), *b = onyx_tensor_data(out[1][k]);
            /* the folded BatchNormalization rounds differently */
            for (int i = 0; i < M * OH * OW; i++) CHECK_NEAR(b[i], a[i], 1e-5 * (1.0 + fabs(a[i])));
        }
        for (int l = 0; l < 2; l++)
            for (int k = 0; k < 3; k++) onyx_tensor_free(out[l][k]);
    }
    onyx_session_free(s[0]);
    onyx_session_free(s[1]);
    onyx_session_options_free(o);
    free(buf);
}

int main(void) {
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    size_t len;
    uint8_t *buf = model(&len);
    onyx_session *basic = NULL, *all = NULL;
    onyx_session_options *o = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_optimization_level(o, ONYX_OPT_BASIC));
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &basic));
    CHECK_OK(onyx_session_options_set_optimization_level(o, ONYX_OPT_ALL));
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &all));
    if (!basic || !all) CHECK_DONE();
    /* before */
    CHECK(check_count_op(basic, "Conv") == 12);
    CHECK(check_count_op(basic, "FusedConv") == 0);
    /* after: ten chains fused, two Convs keep their readers */
    CHECK(check_count_op(all, "FusedConv") == 10);
    CHECK(check_count_op(all, "Conv") == 2);
    CHECK(check_count_op(all, "Relu") == 2);
    CHECK(check_count_op(all, "Sigmoid") == 1);
    CHECK(check_count_op(all, "Mul") == 0);
    CHECK(check_count_op(all, "Add") == 0);
    CHECK(check_count_op(all, "Div") == 0);
    CHECK(check_count_op(all, "Clip") == 0);
    CHECK(check_count_op(all, "HardSigmoid") == 0);
    CHECK(check_count_op(all, "HardSwish") == 0);
    CHECK(check_count_op(all, "LeakyRelu") == 0);
    CHECK(check_count_op(all, "Tanh") == 0);

    onyx_tensor *ob[NOUT] = {0}, *oa[NOUT] = {0};
    run(basic, ob);
    run(all, oa);
    for (int k = 0; k < NOUT; k++) {
        if (!ob[k] || !oa[k]) continue;
        const float *b = onyx_tensor_data(ob[k]), *a = onyx_tensor_data(oa[k]);
        int bad = 0;
        for (int i = 0; i < M * OH * OW && bad < 3; i++)
            if (!(fabs(a[i] - b[i]) <= 1e-5 * (1.0 + fabs(b[i])))) {
                fprintf(stderr, "%s[%d] = %.9g fused, %.9g unfused\n", OUTS[k], i, a[i], b[i]);
                bad++;
            }
        CHECK(bad == 0);
    }
    for (int k = 0; k < NOUT; k++) {
        onyx_tensor_free(ob[k]);
        onyx_tensor_free(oa[k]);
    }
    test_beside_subgraph(env);
    free(buf);
    onyx_session_options_free(o);
    onyx_session_free(basic);
    onyx_session_free(all);
    onyx_env_free(env);
    CHECK_DONE();
}
