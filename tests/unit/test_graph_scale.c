/* Session creation scales with the graph: a chain of a million Neg nodes
 * loads, validates, sorts, optimizes, infers, partitions, plans, runs and
 * packs its arena well inside the CTest timeout (a stage quadratic in the
 * number of nodes takes hours here), and so do a chain where every other
 * node is an Identity the optimizer removes and a chain of Conv +
 * BatchNormalization pairs the optimizer fuses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model_builder.h"
#include "runtime/session.h"

#define WIDTH 4

/* x -> op(0) -> t0 -> op(1) -> ... -> y, each value [1, WIDTH]; op(i) is
 * Neg, or Identity for odd i when `identities` is set. */
static onyx_session *session_from(onyx_env *env, mb_model *m) {
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *s = NULL;
    onyx_session_options *o = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_threads(o, 1));
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &s));
    onyx_session_options_free(o);
    free(buf);
    return s;
}

static onyx_session *chain(onyx_env *env, long n, int identities) {
    mb_model *m = mb_new(13);
    int64_t d[] = {1, WIDTH};
    mb_input(m, "x", ONYX_FLOAT32, d, 2);
    mb_output(m, "y", ONYX_FLOAT32, d, 2);
    char in[32] = "x", out[32];
    for (long i = 0; i < n; i++) {
        snprintf(out, sizeof out, i == n - 1 ? "y" : "t%ld", i);
        mb_node(m, identities && i % 2 ? "Identity" : "Neg", in, out);
        memcpy(in, out, sizeof in);
    }
    return session_from(env, m);
}

/* x [1, 1, 1, WIDTH] through `pairs` of Conv (1x1, weight -1, no bias)
 * and BatchNormalization (identity statistics, epsilon 0): folding gives
 * each Conv weight -1 and bias 0, so y = (-1)^pairs * x. */
static onyx_session *conv_bn_chain(onyx_env *env, long pairs) {
    mb_model *m = mb_new(13);
    int64_t d[] = {1, 1, 1, WIDTH}, dw[] = {1, 1, 1, 1}, dc[] = {1};
    mb_input(m, "x", ONYX_FLOAT32, d, 4);
    mb_output(m, "y", ONYX_FLOAT32, d, 4);
    float w = -1.0f, one = 1.0f, zero = 0.0f;
    mb_init_float(m, "w", dw, 4, &w);
    mb_init_float(m, "one", dc, 1, &one);
    mb_init_float(m, "zero", dc, 1, &zero);
    char in[32] = "x", mid[32], out[32];
    for (long i = 0; i < pairs; i++) {
        snprintf(mid, sizeof mid, "c%ld", i);
        snprintf(out, sizeof out, i == pairs - 1 ? "y" : "b%ld", i);
        char conv_in[64], bn_in[96];
        snprintf(conv_in, sizeof conv_in, "%s,w", in);
        mb_node(m, "Conv", conv_in, mid);
        snprintf(bn_in, sizeof bn_in, "%s,one,zero,zero,one", mid);
        mb_node(m, "BatchNormalization", bn_in, out);
        mb_attr_float(m, "epsilon", 0.0f);
        memcpy(in, out, sizeof in);
    }
    return session_from(env, m);
}

/* Runs twice (recording, then with the arena plan): y = sign * x. */
static void check_runs(onyx_session *s, int rank, float sign) {
    float x[WIDTH] = {1.5f, -2.0f, 0.0f, 3.25f};
    int64_t d[] = {1, 1, 1, WIDTH};
    onyx_tensor *tx = NULL;
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, d + 4 - rank, rank, x, sizeof x, &tx));
    const char *in = "x", *out = "y";
    for (int run = 0; run < 2; run++) {
        onyx_tensor *ty = NULL;
        CHECK_OK(onyx_session_run(s, &in, (const onyx_tensor *const *)&tx, 1, &out, &ty, 1));
        if (!ty) continue;
        const float *y = onyx_tensor_data(ty);
        for (int i = 0; i < WIDTH; i++) CHECK(y[i] == sign * x[i]);
        onyx_tensor_free(ty);
    }
    onyx_tensor_free(tx);
}

int main(void) {
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));

    /* an odd count, so y = -x */
    long n = 1000001;
    onyx_session *s = chain(env, n, 0);
    if (s) {
        CHECK(s->graph->n_nodes == n);
        check_runs(s, 2, -1.0f);
        /* n - 1 intermediates of 16 bytes, two alive at a time, each
         * rounded up to the arena's 64-byte alignment */
        ox_plan_stats st;
        ox_session_plan_stats(s, &st);
        CHECK(st.mem_plans_built == 1);
        CHECK(st.naive_bytes == (size_t)(n - 1) * WIDTH * sizeof(float));
        CHECK(st.arena_bytes == 2 * 64);
        onyx_session_free(s);
    }

    /* 200000 nodes, the 100000 Identity ones removed at load (even count
     * of Negs left, so y = x) */
    n = 200000;
    s = chain(env, n, 1);
    if (s) {
        CHECK(s->graph->n_nodes == n / 2 + 1); /* the last Identity produces output y */
        check_runs(s, 2, 1.0f);
        onyx_session_free(s);
    }

    /* 50001 Conv + BatchNormalization pairs fused into 50001 Convs */
    n = 50001;
    s = conv_bn_chain(env, n);
    if (s) {
        CHECK(s->graph->n_nodes == n);
        check_runs(s, 4, -1.0f);
        onyx_session_free(s);
    }
    onyx_env_free(env);
    CHECK_DONE();
}
