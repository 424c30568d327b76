/* Planning: intermediates share arena memory once their lifetimes end,
 * the memory plan is built once per input shape and reused, and a new
 * shape gets its own plan. */
#include <stdlib.h>

#include "check.h"
#include "model_builder.h"
#include "runtime/session.h"

/* A chain of 8 elementwise ops: at most two intermediates are alive at
 * once, so the arena needs about two buffers, not seven. */
static onyx_session *chain(onyx_env *env) {
    mb_model *m = mb_new(13);
    int64_t d[] = {-1, 256};
    mb_input(m, "x", ONYX_FLOAT32, d, 2);
    mb_output(m, "y", ONYX_FLOAT32, d, 2);
    const char *ops[] = {"Relu", "Sigmoid", "Tanh", "Relu", "Sigmoid", "Tanh", "Relu", "Sigmoid"};
    char in[16] = "x", out[16];
    for (int i = 0; i < 8; i++) {
        snprintf(out, sizeof out, i == 7 ? "y" : "t%d", i);
        mb_node(m, ops[i], in, out);
        snprintf(in, sizeof in, "%s", out);
    }
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

static void run(onyx_session *s, int64_t batch, float fill, float *first_out) {
    int64_t d[] = {batch, 256};
    float *x = malloc((size_t)batch * 256 * sizeof *x);
    for (int64_t i = 0; i < batch * 256; i++) x[i] = fill;
    onyx_tensor *tx = NULL, *ty = NULL;
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, d, 2, x, (size_t)batch * 256 * sizeof *x, &tx));
    const char *in = "x", *out = "y";
    CHECK_OK(onyx_session_run(s, &in, (const onyx_tensor *const *)&tx, 1, &out, &ty, 1));
    if (ty) *first_out = ((float *)onyx_tensor_data(ty))[0];
    onyx_tensor_free(tx);
    onyx_tensor_free(ty);
    free(x);
}

static float reference(float v) {
    v = v > 0 ? v : 0;
    v = 1.0f / (1.0f + expf(-v));
    v = tanhf(v);
    v = v > 0 ? v : 0;
    v = 1.0f / (1.0f + expf(-v));
    v = tanhf(v);
    v = v > 0 ? v : 0;
    return 1.0f / (1.0f + expf(-v));
}

int main(void) {
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    onyx_session *s = chain(env);
    if (!s) CHECK_DONE();
    ox_plan_stats st;
    float y = 0;

    run(s, 4, 0.5f, &y);
    CHECK_NEAR(y, reference(0.5f), 1e-6);
    ox_session_plan_stats(s, &st);
    CHECK(st.mem_plans_built == 1);
    /* 7 intermediates of 4 KiB each; lifetimes allow two at a time */
    CHECK(st.naive_bytes == 7 * 4 * 256 * sizeof(float));
    CHECK(st.arena_bytes == 2 * 4 * 256 * sizeof(float));

    /* same shape: the plan is reused, and the arena results are right */
    for (int i = 0; i < 3; i++) {
        run(s, 4, -1.0f + (float)i, &y);
        CHECK_NEAR(y, reference(-1.0f + (float)i), 1e-6);
    }
    ox_session_plan_stats(s, &st);
    CHECK(st.mem_plans_built == 1);

    /* new batch size: one more plan, then reuse again */
    run(s, 16, 2.0f, &y);
    CHECK_NEAR(y, reference(2.0f), 1e-6);
    run(s, 16, 3.0f, &y);
    CHECK_NEAR(y, reference(3.0f), 1e-6);
    ox_session_plan_stats(s, &st);
    CHECK(st.mem_plans_built == 2);
    CHECK(st.arena_bytes == 2 * 16 * 256 * sizeof(float));

    /* back to the first shape: still cached */
    run(s, 4, 1.0f, &y);
    ox_session_plan_stats(s, &st);
    CHECK(st.mem_plans_built == 2);

    /* the cache keeps the 8 most recent shapes: after 8 new ones, batch 4
     * is planned again, and still computes the right values */
    int before = st.mem_plans_built;
    for (int64_t b = 20; b < 28; b++) run(s, b, 0.25f, &y);
    ox_session_plan_stats(s, &st);
    CHECK(st.mem_plans_built == before + 8);
    run(s, 4, 1.5f, &y);
    CHECK_NEAR(y, reference(1.5f), 1e-6);
    ox_session_plan_stats(s, &st);
    CHECK(st.mem_plans_built == before + 9);

    onyx_session_free(s);
    onyx_env_free(env);
    CHECK_DONE();
}
