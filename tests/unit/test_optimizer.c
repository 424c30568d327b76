/* Optimization levels really differ: at ONYX_OPT_ALL a BatchNormalization
 * after a Conv with constant weights is folded into the Conv (one node
 * fewer), with outputs equal to the unfolded graph's within float32
 * rounding; a Conv whose output has a second reader keeps its
 * BatchNormalization, and a weight shared by two Convs is not changed
 * in place. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model_builder.h"

enum { C = 3, M = 4, H = 6, W = 6, K = 3 };

static float frand(unsigned *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 65536.0f - 0.5f;
}

/* x -> Conv(w, b) -> BN -> y;  x -> Conv(w) -> BN2 -> y2 and also Relu(c2) -> r */
static uint8_t *conv_bn_model(size_t *len) {
    unsigned seed = 12345;
    mb_model *m = mb_new(17);
    int64_t dx[] = {1, C, H, W}, dy[] = {1, M, H - K + 1, W - K + 1};
    int64_t dw[] = {M, C, K, K}, dm[] = {M};
    mb_input(m, "x", ONYX_FLOAT32, dx, 4);
    mb_output(m, "y", ONYX_FLOAT32, dy, 4);
    mb_output(m, "y2", ONYX_FLOAT32, dy, 4);
    mb_output(m, "r", ONYX_FLOAT32, dy, 4);
    float w[M * C * K * K], b[M], sc[M], bi[M], mean[M], var[M];
    for (int i = 0; i < M * C * K * K; i++) w[i] = frand(&seed);
    for (int i = 0; i < M; i++) {
        b[i] = frand(&seed);
        sc[i] = 1.0f + frand(&seed);
        bi[i] = frand(&seed);
        mean[i] = frand(&seed);
        var[i] = 0.6f + frand(&seed);
    }
    mb_init_float(m, "w", dw, 4, w);
    mb_init_float(m, "b", dm, 1, b);
    mb_init_float(m, "scale", dm, 1, sc);
    mb_init_float(m, "beta", dm, 1, bi);
    mb_init_float(m, "mean", dm, 1, mean);
    mb_init_float(m, "var", dm, 1, var);
    mb_node(m, "Conv", "x,w,b", "c");
    mb_node(m, "BatchNormalization", "c,scale,beta,mean,var", "y");
    mb_attr_float(m, "epsilon", 1e-3f);
    /* same weight, no bias; its output has a second reader */
    mb_node(m, "Conv", "x,w", "c2");
    mb_node(m, "BatchNormalization", "c2,scale,beta,mean,var", "y2");
    mb_node(m, "Relu", "c2", "r");
    uint8_t *buf = mb_serialize(m, len);
    mb_free(m);
    return buf;
}

static void run(onyx_session *s, onyx_tensor **outs) {
    static float x[C * H * W];
    unsigned seed = 99;
    for (int i = 0; i < C * H * W; i++) x[i] = frand(&seed) * 4.0f;
    int64_t dx[] = {1, C, H, W};
    onyx_tensor *tx = NULL;
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, dx, 4, x, sizeof x, &tx));
    const char *in[] = {"x"}, *out[] = {"y", "y2", "r"};
    CHECK_OK(onyx_session_run(s, in, (const onyx_tensor *const *)&tx, 1, out, outs, 3));
    onyx_tensor_free(tx);
}

int main(void) {
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    size_t len;
    uint8_t *buf = conv_bn_model(&len);
    onyx_session *basic = NULL, *all = NULL;
    onyx_session_options *o = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_optimization_level(o, ONYX_OPT_BASIC));
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &basic));
    CHECK_OK(onyx_session_options_set_optimization_level(o, ONYX_OPT_ALL));
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &all));
    if (!basic || !all) CHECK_DONE();
    CHECK(check_count_op(basic, "BatchNormalization") == 2);
    CHECK(check_count_op(all, "BatchNormalization") == 1); /* c2 has a second reader */
    CHECK(check_count_op(all, "Conv") == 2);

    onyx_tensor *ob[3] = {NULL, NULL, NULL}, *oa[3] = {NULL, NULL, NULL};
    run(basic, ob);
    run(all, oa);
    size_t n = (size_t)M * (H - K + 1) * (W - K + 1);
    for (int k = 0; k < 3; k++) {
        if (!ob[k] || !oa[k]) continue;
        const float *b = onyx_tensor_data(ob[k]), *a = onyx_tensor_data(oa[k]);
        /* one float32 rounding of the folded weights per product term:
         * relative 1e-5 of the magnitude, with a floor for values near 0 */
        for (size_t i = 0; i < n; i++) CHECK_NEAR(a[i], b[i], 1e-5 * (1.0 + fabs(b[i])));
    }
    for (int k = 0; k < 3; k++) {
        onyx_tensor_free(ob[k]);
        onyx_tensor_free(oa[k]);
    }
    free(buf);
    onyx_session_options_free(o);
    onyx_session_free(basic);
    onyx_session_free(all);
    onyx_env_free(env);
    CHECK_DONE();
}
