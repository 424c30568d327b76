/* Partitioning with a second provider: the test provider takes float32
 * Add, Mul and Relu on its own (simulated) device memory; everything
 * else falls back to the CPU. Copies appear exactly at the boundaries and
 * the results equal a CPU-only run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ep/testing/test_ep.h"
#include "model_builder.h"
#include "runtime/session.h"

static uint8_t *model(size_t *len) {
    mb_model *m = mb_new(13);
    int64_t d[] = {2, 4};
    mb_input(m, "x", ONYX_FLOAT32, d, 2);
    mb_input(m, "idx", ONYX_INT64, d, 2);
    mb_output(m, "y", ONYX_FLOAT32, d, 2);
    mb_output(m, "n", ONYX_INT64, d, 2);
    float c[8] = {-1, 0.5f, 2, -3, 1, 1, 1, 1};
    mb_init_float(m, "c", d, 2, c);
    mb_node(m, "Add", "x,c", "a");     /* test device */
    mb_node(m, "Relu", "a", "r");      /* test device, no copy in between */
    mb_node(m, "Sigmoid", "r", "sg");  /* CPU: copy r to host */
    mb_node(m, "Mul", "sg,c", "y");    /* test device: copy sg and c to device, y back */
    mb_node(m, "Add", "idx,idx", "n"); /* int64: falls back to the CPU */
    uint8_t *buf = mb_serialize(m, len);
    mb_free(m);
    return buf;
}

/* A provider that cannot start here, as a device provider on a machine
 * without its driver. */
static ox_ep *unavailable_create(const ox_ep_options *opts, ox_error *err) {
    (void)opts;
    ox_fail(err, ONYX_NOT_IMPLEMENTED, "no such device here");
    return NULL;
}

static void run(onyx_session *s, float *y, int64_t *n) {
    float x[8] = {1, 2, 3, 4, -5, -6, 7, 8};
    int64_t idx[8] = {1, 2, 3, 4, 5, 6, (int64_t)1 << 40, -7};
    int64_t d[] = {2, 4};
    onyx_tensor *tx = NULL, *ti = NULL, *outs[2] = {NULL, NULL};
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, d, 2, x, sizeof x, &tx));
    CHECK_OK(onyx_tensor_wrap(ONYX_INT64, d, 2, idx, sizeof idx, &ti));
    const char *in[] = {"x", "idx"}, *out[] = {"y", "n"};
    const onyx_tensor *ins[] = {tx, ti};
    CHECK_OK(onyx_session_run(s, in, ins, 2, out, outs, 2));
    if (outs[0]) memcpy(y, onyx_tensor_data(outs[0]), 8 * sizeof(float));
    if (outs[1]) memcpy(n, onyx_tensor_data(outs[1]), 8 * sizeof(int64_t));
    onyx_tensor_free(outs[0]);
    onyx_tensor_free(outs[1]);
    onyx_tensor_free(tx);
    onyx_tensor_free(ti);
}

/* A session of model m (freed here) on the test provider, then the CPU;
 * light (NULL: none) is the test provider's option of that name. */
static onyx_session *test_session_light(onyx_env *env, mb_model *m, const char *light) {
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session_options *o = NULL;
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    const char *providers[] = {"test", "cpu"};
    CHECK_OK(onyx_session_options_set_providers(o, providers, 2));
    if (light) CHECK_OK(onyx_session_options_set_provider_option(o, "test", "light", light));
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &s));
    onyx_session_options_free(o);
    free(buf);
    return s;
}

static onyx_session *test_session(onyx_env *env, mb_model *m) { return test_session_light(env, m, NULL); }

/* The provider of the node making value `out`. */
static const char *provider_of(const onyx_session *s, const char *out) {
    for (size_t i = 0; i < onyx_session_node_count(s); i++)
        if (strcmp(onyx_session_node_output_name(s, i, 0), out) == 0) return onyx_session_node_provider(s, i);
    return "?";
}

/* Runs s on x (and w) into y[8]; the test provider's stats in *st. */
static void run_xw(onyx_session *s, const float *x, const float *w, float *y, ox_test_ep_stats *st) {
    int64_t d[] = {2, 4};
    onyx_tensor *tx = NULL, *tw = NULL, *out = NULL;
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, d, 2, (void *)x, 8 * sizeof(float), &tx));
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, d, 2, (void *)w, 8 * sizeof(float), &tw));
    const char *in[] = {"x", "w"}, *outn[] = {"y"};
    const onyx_tensor *ins[] = {tx, tw};
    CHECK_OK(onyx_session_run(s, in, ins, 2, outn, &out, 1));
    if (out) memcpy(y, onyx_tensor_data(out), 8 * sizeof(float));
    onyx_tensor_free(out);
    onyx_tensor_free(tx);
    onyx_tensor_free(tw);
    ox_test_ep_get_stats(s->eps[0], st);
}

/* A model with float32 inputs x and w and output y, all of shape XW,
 * for the caller's nodes. */
static const int64_t XW[] = {2, 4};
static mb_model *x_w_model(void) {
    mb_model *m = mb_new(13);
    mb_input(m, "x", ONYX_FLOAT32, XW, 2);
    mb_input(m, "w", ONYX_FLOAT32, XW, 2);
    mb_output(m, "y", ONYX_FLOAT32, XW, 2);
    return m;
}

/* Placement and order that save waits for the device:
 * - a light device node reading what the host made, read only by the
 *   host, runs on the CPU (on the device it is a round trip): Add(s1, a)
 *   below, which Mul(x, x)'s group would keep on the device; Relu(a),
 *   whose input the device made, stays;
 * - device work that is ready runs before host nodes that wait for the
 *   device: Relu(a) and Mul(t, t) are recorded before Sigmoid(a) reads a,
 *   so one submission runs all three device nodes (in ready order the
 *   first wait ran Mul(x, x) alone and Sigmoid(b) waited again). */
static void test_waits(onyx_env *env) {
    mb_model *m = x_w_model();
    mb_node(m, "Mul", "x,x", "a");    /* test device */
    mb_node(m, "Sigmoid", "a", "s1"); /* CPU, waits for a */
    mb_node(m, "Add", "s1,a", "r1");  /* light, host input, host reader: to the CPU */
    mb_node(m, "Relu", "a", "r2");    /* light, device input: stays */
    mb_node(m, "Sigmoid", "w", "t");  /* CPU, no wait */
    mb_node(m, "Mul", "t,t", "b");    /* test device */
    mb_node(m, "Sigmoid", "b", "s2"); /* CPU, waits for b */
    mb_node(m, "Sub", "r1,s2", "u");  /* CPU */
    mb_node(m, "Sub", "u,r2", "y");   /* CPU, reads r2 */
    onyx_session *s = test_session_light(env, m, "Relu,Add");
    if (!s) return;
    CHECK(strcmp(provider_of(s, "r1"), "cpu") == 0);
    CHECK(strcmp(provider_of(s, "r2"), "test") == 0);
    float x[8] = {1, -2, 3, -4, 0.5f, -0.25f, 2, -1}, w[8] = {0, 1, -1, 2, -2, 3, -3, 4}, y[8] = {0};
    ox_test_ep_stats st;
    run_xw(s, x, w, y, &st);
    for (int i = 0; i < 8; i++) {
        float a = x[i] * x[i], s1 = 1.0f / (1.0f + expf(-a)), t = 1.0f / (1.0f + expf(-w[i]));
        float s2 = 1.0f / (1.0f + expf(-t * t));
        CHECK_NEAR(y[i], ((s1 + a) - s2) - a, 1e-5);
    }
    /* x and t go over, a, b and r2 come back, all work in one submission
     * (Add on the device: s1 over, r1 back, a second submission) */
    CHECK(st.submits == 1);
    CHECK(st.copies_from_host == 2 && st.copies_to_host == 3);
    onyx_session_free(s);
}

/* Reshape on the device with its shape read on the host, from a weight
 * and from a caller's input: the shape is never copied to the device,
 * the executor infers the output shape from it, and the data stays on the
 * device between Add, Reshape and Relu. */
static void test_host_inputs(onyx_env *env) {
    mb_model *m = mb_new(13);
    int64_t d[] = {2, 4}, d2[] = {4, 2}, one[] = {2}, sd[] = {2};
    mb_input(m, "x", ONYX_FLOAT32, d, 2);
    mb_input(m, "shape", ONYX_INT64, one, 1);
    mb_output(m, "y", ONYX_FLOAT32, d2, 2);
    mb_output(m, "z", ONYX_FLOAT32, NULL, 0);
    float c[8] = {-1, 0.5f, 2, -3, 1, 1, 1, 1};
    mb_init_float(m, "c", d, 2, c);
    int64_t fixed[2] = {4, 2};
    mb_init_int64(m, "fixed", sd, 1, fixed);
    mb_node(m, "Add", "x,c", "a");
    mb_node(m, "Reshape", "a,fixed", "r");
    mb_node(m, "Relu", "r", "y");
    mb_node(m, "Reshape", "a,shape", "z");
    onyx_session *s = test_session(env, m);
    if (!s) return;
    for (size_t i = 0; i < onyx_session_node_count(s); i++)
        CHECK(strcmp(onyx_session_node_provider(s, i), "test") == 0);
    float x[8] = {1, 2, 3, 4, -5, -6, 7, 8};
    for (int r = 0; r < 2; r++) {
        int64_t shape[2] = {r ? 8 : 1, r ? 1 : 8};
        onyx_tensor *tx = NULL, *ts = NULL, *outs[2] = {NULL, NULL};
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, d, 2, x, sizeof x, &tx));
        CHECK_OK(onyx_tensor_wrap(ONYX_INT64, one, 1, shape, sizeof shape, &ts));
        const char *in[] = {"x", "shape"}, *out[] = {"y", "z"};
        const onyx_tensor *ins[] = {tx, ts};
        CHECK_OK(onyx_session_run(s, in, ins, 2, out, outs, 2));
        if (outs[0] && outs[1]) {
            CHECK(onyx_tensor_rank(outs[0]) == 2 && onyx_tensor_dims(outs[0])[0] == 4);
            CHECK(onyx_tensor_dims(outs[1])[0] == shape[0] && onyx_tensor_dims(outs[1])[1] == shape[1]);
            const float *y = onyx_tensor_data(outs[0]), *z = onyx_tensor_data(outs[1]);
            for (int i = 0; i < 8; i++) {
                float a = x[i] + c[i];
                CHECK_NEAR(z[i], a, 1e-6);
                CHECK_NEAR(y[i], a > 0 ? a : 0, 1e-6);
            }
        }
        onyx_tensor_free(outs[0]);
        onyx_tensor_free(outs[1]);
        onyx_tensor_free(tx);
        onyx_tensor_free(ts);
    }
    ox_test_ep_stats st;
    ox_test_ep_get_stats(s->eps[0], &st);
    CHECK(st.kernel_runs == 2 * 4);
    /* x each run, c once; neither shape ever */
    CHECK(st.copies_from_host == 2 + 1);
    CHECK(st.copies_to_host == 2 * 2);
    onyx_session_free(s);
}

/* An arena's bytes serve one slot after another within a run, while the
 * device's work is only recorded: an upload into bytes that recorded work
 * still reads must wait for that work. Here the planner gives the upload
 * of sw the bytes of the upload of x, which the recorded Relu and Add
 * read and which are dead by then; nothing flushes in between (Sigmoid
 * reads the caller's w, not the device). */
static void test_arena_reuse(onyx_env *env) {
    mb_model *m = x_w_model();
    mb_node(m, "Relu", "x", "a");     /* test device: x copied over */
    mb_node(m, "Add", "a,x", "b");    /* reads x's bytes, the last time */
    mb_node(m, "Sigmoid", "w", "sw"); /* CPU */
    mb_node(m, "Add", "b,sw", "y");   /* sw copied over, into x's bytes */
    onyx_session *s = test_session(env, m);
    if (!s) return;
    float x[8] = {1, -2, 3, -4, 5, -6, 7, -8}, w[8] = {0, 1, -1, 2, -2, 3, -3, 4};
    for (int r = 0; r < 3; r++) {
        onyx_tensor *tx = NULL, *tw = NULL, *out = NULL;
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, XW, 2, x, sizeof x, &tx));
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, XW, 2, w, sizeof w, &tw));
        const char *in[] = {"x", "w"}, *outn[] = {"y"};
        const onyx_tensor *ins[] = {tx, tw};
        CHECK_OK(onyx_session_run(s, in, ins, 2, outn, &out, 1));
        if (out) {
            const float *y = onyx_tensor_data(out);
            for (int i = 0; i < 8; i++) {
                float a = x[i] > 0 ? x[i] : 0;
                CHECK_NEAR(y[i], a + x[i] + 1.0f / (1.0f + expf(-w[i])), 1e-6);
            }
        }
        onyx_tensor_free(out);
        onyx_tensor_free(tx);
        onyx_tensor_free(tw);
    }
    ox_test_ep_stats st;
    ox_test_ep_get_stats(s->eps[0], &st);
    /* runs two and three: X, a, b, SW and the device's y in the arena, and
     * each run's upload of sw waited for the recorded Relu and Add */
    CHECK(st.arena_views == 2 * 5);
    CHECK(st.ordered_uploads == 2);
    onyx_session_free(s);
}

int main(void) {
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    ox_error err = {0};
    CHECK(ox_env_add_provider(env, "test", ox_test_ep_create, &err) == 0);
    size_t len;
    uint8_t *buf = model(&len);

    onyx_session *cpu = NULL, *mixed = NULL;
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, NULL, &cpu));
    onyx_session_options *o = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    const char *providers[] = {"test", "cpu"};
    CHECK_OK(onyx_session_options_set_providers(o, providers, 2));
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &mixed));
    if (!cpu || !mixed) CHECK_DONE();

    /* placement, in execution order */
    const char *expect[][2] = {{"Add", "test"}, {"Relu", "test"}, {"Sigmoid", "cpu"},
                               {"Mul", "test"}, {"Add", "cpu"}};
    int found = 0;
    for (size_t i = 0; i < onyx_session_node_count(mixed); i++) {
        const char *op = onyx_session_node_op_type(mixed, i);
        const char *ep = onyx_session_node_provider(mixed, i);
        for (int k = 0; k < 5; k++)
            if (strcmp(op, expect[k][0]) == 0 && strcmp(ep, expect[k][1]) == 0) found++;
        if (strcmp(op, "Add") == 0 && strcmp(ep, "cpu") == 0)
            CHECK(strcmp(onyx_session_node_name(mixed, i), "Add_4") == 0);
    }
    CHECK(found == 5);
    for (size_t i = 0; i < onyx_session_node_count(cpu); i++)
        CHECK(strcmp(onyx_session_node_provider(cpu, i), "cpu") == 0);

    float y_cpu[8], y_mix[8];
    int64_t n_cpu[8], n_mix[8];
    run(cpu, y_cpu, n_cpu);
    run(mixed, y_mix, n_mix);
    for (int i = 0; i < 8; i++) CHECK_NEAR(y_mix[i], y_cpu[i], 1e-6);
    CHECK(memcmp(n_cpu, n_mix, sizeof n_cpu) == 0);
    CHECK(n_mix[6] == (int64_t)1 << 41);

    ox_test_ep_stats st;
    ox_test_ep_get_stats(mixed->eps[0], &st);
    CHECK(st.kernel_runs == 3);
    /* to the device: x, c (for Add), sg, c again is cached -> x, c, sg */
    CHECK(st.copies_from_host == 3);
    /* back to the host: r (for Sigmoid), y (graph output) */
    CHECK(st.copies_to_host == 2);
    /* the weight c stays on the device for the next runs */
    CHECK(st.live_allocations == 1);
    for (int r = 0; r < 2; r++) {
        run(mixed, y_mix, n_mix);
        for (int i = 0; i < 8; i++) CHECK_NEAR(y_mix[i], y_cpu[i], 1e-6);
    }
    ox_test_ep_get_stats(mixed->eps[0], &st);
    CHECK(st.kernel_runs == 9);
    /* later runs upload x and sg only: c is resident */
    CHECK(st.copies_from_host == 3 + 2 * 2);
    CHECK(st.copies_to_host == 2 * 3);
    /* the first run showed the sizes; each later one takes the device's
     * intermediates (the copies of x and sg, a, r and y) from one arena,
     * which this provider frees at the run's end: only c stays */
    CHECK(st.arenas == 2);
    CHECK(st.arena_views == 2 * 5);
    CHECK(st.live_allocations == 1);
    /* the kernels recorded; their work ran at the two copies to the host
     * of each run and at its end (the test provider's results are only
     * right when the executor waits where it must) */
    CHECK(st.streams_begun == 3 && st.streams_ended == 3);
    CHECK(st.flushes == 3 * 3);

    test_host_inputs(env);
    test_arena_reuse(env);
    test_waits(env);

    /* a provider name the environment does not offer */
    onyx_session *bad = NULL;
    const char *unknown[] = {"gpu9000"};
    CHECK_OK(onyx_session_options_set_providers(o, unknown, 1));
    CHECK_FAILS(onyx_session_create_from_buffer(env, buf, len, o, &bad), ONYX_INVALID_ARGUMENT,
                "unknown execution provider 'gpu9000' (this build offers: cpu, ");
    /* the list goes on with the providers of this build ("vulkan") and
     * the test's */
    CHECK_FAILS(onyx_session_create_from_buffer(env, buf, len, o, &bad), ONYX_INVALID_ARGUMENT,
                "test)");
    const char *cpu_first[] = {"cpu", "test"};
    CHECK_OK(onyx_session_options_set_providers(o, cpu_first, 2));
    CHECK_FAILS(onyx_session_create_from_buffer(env, buf, len, o, &bad), ONYX_INVALID_ARGUMENT,
                "provider 'cpu' must be last");

    /* eight named providers: the CPU fallback is appended as a ninth */
    const char *names8[] = {"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"};
    for (int i = 0; i < 8; i++) CHECK(ox_env_add_provider(env, names8[i], ox_test_ep_create, &err) == 0);
    CHECK_OK(onyx_session_options_set_providers(o, names8, 8));
    onyx_session *eight = NULL;
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &eight));
    if (eight) {
        CHECK(eight->n_eps == 9);
        CHECK(strcmp(eight->eps[8]->name, "cpu") == 0);
        float y8[8];
        int64_t n8[8];
        run(eight, y8, n8);
        for (int i = 0; i < 8; i++) CHECK_NEAR(y8[i], y_cpu[i], 1e-6);
        onyx_session_free(eight);
    }
    const char *names9[] = {"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "test"};
    CHECK_FAILS(onyx_session_options_set_providers(o, names9, 9), ONYX_INVALID_ARGUMENT,
                "too many providers (at most 8)");
    const char *twice[] = {"t0", "t0"};
    CHECK_FAILS(onyx_session_options_set_providers(o, twice, 2), ONYX_INVALID_ARGUMENT,
                "provider 't0' is listed twice");

    /* A provider that fails to start: with "cpu" named, its nodes fall
     * back to the providers after it (a warning is logged); named alone,
     * the session fails with its reason. */
    CHECK(ox_env_add_provider(env, "absent", unavailable_create, &err) == 0);
    const char *fallback[] = {"absent", "test", "cpu"};
    CHECK_OK(onyx_session_options_set_providers(o, fallback, 3));
    onyx_session *fb = NULL;
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &fb));
    if (fb) {
        CHECK(fb->n_eps == 2);
        int on_test = 0;
        for (size_t i = 0; i < onyx_session_node_count(fb); i++)
            on_test += strcmp(onyx_session_node_provider(fb, i), "test") == 0;
        CHECK(on_test == 3);
        float yf[8];
        int64_t nf[8];
        run(fb, yf, nf);
        for (int i = 0; i < 8; i++) CHECK_NEAR(yf[i], y_cpu[i], 1e-6);
        onyx_session_free(fb);
    }
    const char *absent_only[] = {"absent"}, *absent_test[] = {"absent", "test"};
    CHECK_OK(onyx_session_options_set_providers(o, absent_only, 1));
    CHECK_FAILS(onyx_session_create_from_buffer(env, buf, len, o, &bad), ONYX_NOT_IMPLEMENTED,
                "provider 'absent': no such device here");
    CHECK_OK(onyx_session_options_set_providers(o, absent_test, 2));
    CHECK_FAILS(onyx_session_create_from_buffer(env, buf, len, o, &bad), ONYX_NOT_IMPLEMENTED,
                "provider 'absent': no such device here");

    /* Provider options: a key the provider does not know, and an option
     * for a provider the session does not use, are errors naming them. */
    const char *test_cpu[] = {"test", "cpu"};
    CHECK_OK(onyx_session_options_set_providers(o, test_cpu, 2));
    CHECK_OK(onyx_session_options_set_provider_option(o, "test", "device", "0"));
    CHECK_FAILS(onyx_session_create_from_buffer(env, buf, len, o, &bad), ONYX_INVALID_ARGUMENT,
                "provider 'test': provider 'test' has no option 'device' (its options: light)");
    /* the light option's list has a bound */
    char long_list[200];
    memset(long_list, 'A', sizeof long_list - 1);
    long_list[sizeof long_list - 1] = '\0';
    onyx_session_options *o3 = NULL;
    CHECK_OK(onyx_session_options_create(&o3));
    CHECK_OK(onyx_session_options_set_providers(o3, test_cpu, 2));
    CHECK_OK(onyx_session_options_set_provider_option(o3, "test", "light", long_list));
    CHECK_FAILS(onyx_session_create_from_buffer(env, buf, len, o3, &bad), ONYX_INVALID_ARGUMENT,
                "test provider: option light is too long");
    onyx_session_options_free(o3);
    onyx_session_options *o2 = NULL;
    CHECK_OK(onyx_session_options_create(&o2));
    CHECK_OK(onyx_session_options_set_providers(o2, test_cpu, 2));
    CHECK_OK(onyx_session_options_set_provider_option(o2, "gpu", "device", "1"));
    CHECK_FAILS(onyx_session_create_from_buffer(env, buf, len, o2, &bad), ONYX_INVALID_ARGUMENT,
                "option 'device' is for provider 'gpu', which the session's providers do not name");
    CHECK_FAILS(onyx_session_options_set_provider_option(o2, "test", "", "1"), ONYX_INVALID_ARGUMENT,
                "empty option name");
    CHECK_FAILS(onyx_session_options_set_provider_option(o2, "test", "k", NULL), ONYX_INVALID_ARGUMENT,
                "value is NULL");
    onyx_session_options_free(o2);

    free(buf);
    onyx_session_options_free(o);
    onyx_session_free(cpu);
    onyx_session_free(mixed);
    onyx_env_free(env);
    CHECK_DONE();
}
