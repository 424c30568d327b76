/* Watching runs without changing them: the capture hook of run options
 * (values, order and names; results bitwise equal with and without it),
 * fault injection (selects a node by name, through fused origins, by
 * provider; leaves caller memory alone; off in sessions that say so) and
 * the node description API cross-checking relies on. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ep/testing/test_ep.h"
#include "model_builder.h"
#include "runtime/session.h"

#define C_IN 2
#define C_OUT 4
#define HW 8
#define FEATURES (C_OUT * HW * HW)
#define CLASSES 3

/* Conv_0 -> Relu_1 -> Reshape_2 -> MatMul_3 -> Add_4: at level all the
 * Conv absorbs the Relu and the MatMul the Add. */
static uint8_t *make_model(size_t *len) {
    static float w[C_OUT * C_IN * 9], b[C_OUT], w2[FEATURES * CLASSES], b2[CLASSES];
    for (size_t i = 0; i < sizeof w / sizeof *w; i++) w[i] = (float)((int)(i % 7) - 3) * 0.125f;
    for (int i = 0; i < C_OUT; i++) b[i] = 0.25f * (float)(i - 1);
    for (size_t i = 0; i < sizeof w2 / sizeof *w2; i++) w2[i] = (float)((int)(i % 5) - 2) * 0.0625f;
    for (int i = 0; i < CLASSES; i++) b2[i] = (float)i;
    mb_model *m = mb_new(17);
    int64_t xd[4] = {1, C_IN, HW, HW}, wd[4] = {C_OUT, C_IN, 3, 3}, bd[1] = {C_OUT};
    int64_t w2d[2] = {FEATURES, CLASSES}, b2d[1] = {CLASSES}, sd[1] = {2}, shape[2] = {1, -1};
    int64_t yd[2] = {1, CLASSES}, pads[4] = {1, 1, 1, 1};
    mb_input(m, "x", 1, xd, 4);
    mb_output(m, "y", 1, yd, 2);
    mb_init_float(m, "w", wd, 4, w);
    mb_init_float(m, "b", bd, 1, b);
    mb_init_float(m, "w2", w2d, 2, w2);
    mb_init_float(m, "b2", b2d, 1, b2);
    mb_init_int64(m, "shape", sd, 1, shape);
    mb_node(m, "Conv", "x,w,b", "c");
    mb_attr_ints(m, "pads", pads, 4);
    mb_node(m, "Relu", "c", "r");
    mb_node(m, "Reshape", "r,shape", "f");
    mb_node(m, "MatMul", "f,w2", "mm");
    mb_node(m, "Add", "mm,b2", "y");
    uint8_t *buf = mb_serialize(m, len);
    mb_free(m);
    return buf;
}

typedef struct capture_log {
    int calls;
    int order_ok;
    long last_node;
    int names_ok;
    const onyx_session *s;
    float first_value; /* element 0 of the Conv's captured output */
} capture_log;

static void on_capture(void *user, size_t node, size_t out, const char *name,
                       const onyx_tensor *value) {
    capture_log *log = user;
    if ((long)node < log->last_node) log->order_ok = 0;
    log->last_node = (long)node;
    const char *expected = onyx_session_node_output_name(log->s, node, out);
    if (!expected || strcmp(expected, name) != 0) log->names_ok = 0;
    if (log->calls == 0 && onyx_tensor_dtype(value) == ONYX_FLOAT32)
        log->first_value = ((const float *)onyx_tensor_data((onyx_tensor *)value))[0];
    log->calls++;
}

/* Sessions name the test provider first when this is set. */
static int use_test_provider;

static onyx_session *open_session(onyx_env *env, const uint8_t *model, size_t len,
                                  onyx_opt_level level, const char *fault) {
    onyx_session_options *o = NULL;
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    const char *providers[] = {"test", "cpu"};
    if (use_test_provider) CHECK_OK(onyx_session_options_set_providers(o, providers, 2));
    CHECK_OK(onyx_session_options_set_optimization_level(o, level));
    CHECK_OK(onyx_session_options_set_threads(o, 1));
    if (fault) CHECK_OK(onyx_session_options_set_fault_injection(o, fault));
    CHECK_OK(onyx_session_create_from_buffer(env, model, len, o, &s));
    onyx_session_options_free(o);
    return s;
}

static float input_data[C_IN * HW * HW];

/* Runs s on the fixed input; y receives the CLASSES outputs. */
static void run(onyx_session *s, onyx_run_options *ro, float *y) {
    int64_t xd[4] = {1, C_IN, HW, HW}, yd[2] = {1, CLASSES};
    onyx_tensor *x = NULL, *out = NULL;
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, xd, 4, input_data, sizeof input_data, &x));
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, yd, 2, y, CLASSES * sizeof *y, &out));
    const char *in_name = "x", *out_name = "y";
    CHECK_OK(onyx_session_run_with_options(s, ro, &in_name, (const onyx_tensor *const *)&x, 1,
                                           &out_name, &out, 1));
    onyx_tensor_free(x);
    onyx_tensor_free(out);
}

static void test_capture(onyx_env *env, const uint8_t *model, size_t len, onyx_opt_level level) {
    onyx_session *s = open_session(env, model, len, level, "");
    if (!s) return;
    float plain[CLASSES], captured[CLASSES];
    run(s, NULL, plain);
    onyx_run_options *ro = NULL;
    capture_log log = {.order_ok = 1, .last_node = -1, .names_ok = 1, .s = s};
    CHECK_OK(onyx_run_options_create(&ro));
    CHECK_OK(onyx_run_options_set_capture(ro, on_capture, &log));
    run(s, ro, captured);
    /* capture copies values aside; it must not change a bit */
    CHECK(memcmp(plain, captured, sizeof plain) == 0);
    /* one call per node output (every node here has one) */
    CHECK(log.calls == (int)onyx_session_node_count(s));
    CHECK(log.order_ok);
    CHECK(log.names_ok);
    /* the first node is the Conv (fused with the Relu at level all) */
    float conv0 = 0.0f;
    for (int c = 0; c < C_IN; c++)
        for (int ky = 1; ky < 3; ky++)
            for (int kx = 1; kx < 3; kx++)
                conv0 += (float)((int)((c * 9 + ky * 3 + kx) % 7) - 3) * 0.125f *
                         input_data[c * HW * HW + (ky - 1) * HW + (kx - 1)];
    conv0 += -0.25f;
    if (level == ONYX_OPT_ALL && conv0 < 0) conv0 = 0;
    CHECK_NEAR(log.first_value, conv0, 1e-5);
    /* capture off again: no more calls */
    int before = log.calls;
    CHECK_OK(onyx_run_options_set_capture(ro, NULL, NULL));
    run(s, ro, captured);
    CHECK(log.calls == before);
    onyx_run_options_free(ro);
    onyx_session_free(s);
}

static int find_node(const onyx_session *s, const char *op) {
    for (size_t i = 0; i < onyx_session_node_count(s); i++)
        if (strcmp(onyx_session_node_op_type(s, i), op) == 0) return (int)i;
    return -1;
}

/* Node timing adds each node's time to the caller's array, by execution
 * position, over runs; nodes past the count are not timed; results are
 * unchanged; NULL turns it off. */
static void test_node_timing(onyx_env *env, const uint8_t *model, size_t len) {
    onyx_session *s = open_session(env, model, len, ONYX_OPT_NONE, "");
    if (!s) return;
    size_t n = onyx_session_node_count(s);
    CHECK(n >= 2);
    float plain[CLASSES], timed[CLASSES];
    run(s, NULL, plain);
    uint64_t *ns = calloc(n, sizeof *ns), *first = calloc(n, sizeof *first);
    onyx_run_options *ro = NULL;
    CHECK_OK(onyx_run_options_create(&ro));
    CHECK_OK(onyx_run_options_set_node_timing(ro, ns, n));
    run(s, ro, timed);
    CHECK(memcmp(plain, timed, sizeof plain) == 0);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) total += ns[i];
    CHECK(total > 0);
    int conv_at = find_node(s, "Conv");
    CHECK(conv_at >= 0 && (size_t)conv_at < n - 1);
    size_t conv = conv_at >= 0 ? (size_t)conv_at : 0;
    CHECK(ns[conv] > 0);
    memcpy(first, ns, n * sizeof *ns);
    run(s, ro, timed);
    for (size_t i = 0; i < n; i++) CHECK(ns[i] >= first[i]);
    CHECK(ns[conv] > first[conv]);
    /* a shorter array: the last node is not timed */
    memset(ns, 0, n * sizeof *ns);
    ns[n - 1] = 12345;
    CHECK_OK(onyx_run_options_set_node_timing(ro, ns, n - 1));
    run(s, ro, timed);
    CHECK(ns[n - 1] == 12345);
    CHECK(ns[conv] > 0);
    /* off: nothing is added */
    CHECK_OK(onyx_run_options_set_node_timing(ro, NULL, 0));
    memcpy(first, ns, n * sizeof *ns);
    run(s, ro, timed);
    CHECK(memcmp(first, ns, n * sizeof *ns) == 0);
    CHECK_FAILS(onyx_run_options_set_node_timing(ro, NULL, 3), ONYX_INVALID_ARGUMENT, "ns_per_node");
    CHECK_FAILS(onyx_run_options_set_node_timing(NULL, ns, n), ONYX_INVALID_ARGUMENT, "opts");
    onyx_run_options_free(ro);
    free(first);
    free(ns);
    onyx_session_free(s);
}

static void test_describe(onyx_env *env, const uint8_t *model, size_t len) {
    onyx_session *s = open_session(env, model, len, ONYX_OPT_ALL, "");
    if (!s) return;
    int conv = find_node(s, "FusedConv");
    CHECK(conv >= 0);
    if (conv >= 0) {
        CHECK(onyx_session_node_origin_count(s, (size_t)conv) == 2);
        CHECK(strcmp(onyx_session_node_origin(s, (size_t)conv, 0), "Conv_0") == 0);
        CHECK(strcmp(onyx_session_node_origin(s, (size_t)conv, 1), "Relu_1") == 0);
        CHECK(onyx_session_node_origin(s, (size_t)conv, 2) == NULL);
        char attrs[256], kernel[128];
        size_t need = onyx_session_node_attributes(s, (size_t)conv, attrs, sizeof attrs);
        CHECK(need == strlen(attrs));
        CHECK(strstr(attrs, "pads=[1,1,1,1]") != NULL);
        CHECK(strstr(attrs, "activation=\"Relu\"") != NULL);
        /* snprintf-style: a short buffer is cut and the full length returned */
        char small[4];
        CHECK(onyx_session_node_attributes(s, (size_t)conv, small, sizeof small) == need);
        CHECK(strlen(small) == 3);
        onyx_session_node_kernel(s, (size_t)conv, kernel, sizeof kernel);
        CHECK(strncmp(kernel, "cpu onyx.FusedConv", 18) == 0);
        CHECK(onyx_session_node_input_count(s, (size_t)conv) == 3);
        CHECK(strcmp(onyx_session_node_input_name(s, (size_t)conv, 0), "x") == 0);
        CHECK(strcmp(onyx_session_node_output_name(s, (size_t)conv, 0), "r") == 0);
        CHECK(onyx_session_node_input_name(s, (size_t)conv, 9) == NULL);
    }
    int mm = find_node(s, "FusedMatMul");
    CHECK(mm >= 0 && onyx_session_node_origin_count(s, (size_t)mm) == 2);
    int reshape = find_node(s, "Reshape");
    CHECK(reshape >= 0 && onyx_session_node_origin_count(s, (size_t)reshape) == 0);
    /* a name the graph lacks is refused before anything is written */
    const char *missing[] = {"Relu_1"}; /* merged into the FusedConv */
    CHECK_FAILS(onyx_session_save_subgraph(s, missing, 1, "observe-never-written.onnx"),
                ONYX_NOT_FOUND, "has no node 'Relu_1'");
    FILE *written = fopen("observe-never-written.onnx", "rb");
    CHECK(written == NULL);
    if (written) fclose(written);
    CHECK(onyx_session_node_attributes(s, 999, NULL, 0) == 0);
    CHECK(onyx_session_node_kernel(s, 999, NULL, 0) == 0);
    onyx_session_free(s);
    /* without optimization nothing is merged */
    s = open_session(env, model, len, ONYX_OPT_NONE, "");
    if (s) {
        for (size_t i = 0; i < onyx_session_node_count(s); i++)
            CHECK(onyx_session_node_origin_count(s, i) == 0);
        onyx_session_free(s);
    }
}

/* y under injection at `fault` (NULL: the environment's) vs clean. */
static int perturbed(onyx_env *env, const uint8_t *model, size_t len, onyx_opt_level level,
                     const char *fault) {
    float clean[CLASSES], y[CLASSES];
    onyx_session *s = open_session(env, model, len, level, "");
    onyx_session *f = open_session(env, model, len, level, fault);
    if (!s || !f) {
        onyx_session_free(s);
        onyx_session_free(f);
        return -1;
    }
    run(s, NULL, clean);
    run(f, NULL, y);
    int differs = 0;
    for (int i = 0; i < CLASSES; i++) differs |= !(fabs(y[i] - clean[i]) <= 1e-5);
    onyx_session_free(s);
    onyx_session_free(f);
    return differs;
}

static void test_injection(onyx_env *env, const uint8_t *model, size_t len) {
    CHECK(perturbed(env, model, len, ONYX_OPT_NONE, "Relu_1") == 1);
    /* fused into the Conv: the node computing it is perturbed */
    CHECK(perturbed(env, model, len, ONYX_OPT_ALL, "Relu_1") == 1);
    CHECK(perturbed(env, model, len, ONYX_OPT_ALL, "Add_4@cpu") == 1);
    /* "fused:" only where the node was merged into another */
    CHECK(perturbed(env, model, len, ONYX_OPT_ALL, "fused:Relu_1") == 1);
    CHECK(perturbed(env, model, len, ONYX_OPT_NONE, "fused:Relu_1") == 0);
    CHECK(perturbed(env, model, len, ONYX_OPT_ALL, "fused:Reshape_2") == 0);
    /* "vulkan" is not among the session's providers, so the spec is a
     * node name that matches nothing */
    CHECK(perturbed(env, model, len, ONYX_OPT_ALL, "Add_4@vulkan") == 0);
    CHECK(perturbed(env, model, len, ONYX_OPT_ALL, "no such node") == 0);
    CHECK(perturbed(env, model, len, ONYX_OPT_ALL, "") == 0);
    /* the environment variable applies unless the options say otherwise */
    setenv("ONYX_INJECT_FAULT", "MatMul_3", 1);
    CHECK(perturbed(env, model, len, ONYX_OPT_ALL, NULL) == 1);
    CHECK(perturbed(env, model, len, ONYX_OPT_ALL, "") == 0);
    unsetenv("ONYX_INJECT_FAULT");
    /* the perturbation itself: floats x -> x + 1 + |x| */
    float clean[CLASSES], y[CLASSES];
    onyx_session *s = open_session(env, model, len, ONYX_OPT_NONE, "");
    onyx_session *f = open_session(env, model, len, ONYX_OPT_NONE, "Add_4");
    if (s && f) {
        run(s, NULL, clean);
        run(f, NULL, y);
        for (int i = 0; i < CLASSES; i++) CHECK_NEAR(y[i], clean[i] + 1.0f + fabsf(clean[i]), 1e-5);
    }
    onyx_session_free(s);
    onyx_session_free(f);
    /* Reshape's output is a view of its input: injecting there must
     * neither run into the Relu's memory nor touch the caller's input,
     * and two runs give the same result */
    float before[C_IN * HW * HW], y2[CLASSES];
    memcpy(before, input_data, sizeof before);
    f = open_session(env, model, len, ONYX_OPT_NONE, "Reshape_2");
    if (f) {
        run(f, NULL, y);
        run(f, NULL, y2);
        CHECK(memcmp(y, y2, sizeof y) == 0);
        CHECK(memcmp(before, input_data, sizeof before) == 0);
        onyx_session_free(f);
    }
    CHECK(perturbed(env, model, len, ONYX_OPT_NONE, "Reshape_2") == 1);
}

/* A view of a view: Unsqueeze_1 and Reshape_2 copy nothing, so Relu_3
 * reads Relu_0's bytes. Injected into Unsqueeze_1, the Unsqueeze runs its
 * kernel into bytes of its own, which Reshape_2's view then reads after
 * Unsqueeze_1's last direct reader: they must live on (ASan would see a
 * use after free), and y is the perturbed Relu_0 output, x -> 2x + 1. */
static void test_view_chain(onyx_env *env) {
    mb_model *m = mb_new(17);
    int64_t xd[2] = {2, 3}, yd[2] = {3, 2}, ad[1] = {1}, axes[1] = {0}, sd[1] = {2}, shape[2] = {3, 2};
    mb_input(m, "x", 1, xd, 2);
    mb_output(m, "y", 1, yd, 2);
    mb_init_int64(m, "axes", ad, 1, axes);
    mb_init_int64(m, "shape", sd, 1, shape);
    mb_node(m, "Relu", "x", "r");
    mb_node(m, "Unsqueeze", "r,axes", "u");
    mb_node(m, "Reshape", "u,shape", "v");
    mb_node(m, "Relu", "v", "y");
    size_t len = 0;
    uint8_t *model = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *s = model ? open_session(env, model, len, ONYX_OPT_NONE, "Unsqueeze_1") : NULL;
    if (s) {
        float xv[6] = {-1, 0.5f, 2, -3, 0.25f, 4}, yv[6] = {0};
        onyx_tensor *x = NULL, *y = NULL;
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, xd, 2, xv, sizeof xv, &x));
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, yd, 2, yv, sizeof yv, &y));
        const char *in_name = "x", *out_name = "y";
        for (int r = 0; r < 2; r++) {
            CHECK_OK(onyx_session_run(s, &in_name, (const onyx_tensor *const *)&x, 1, &out_name, &y, 1));
            for (int i = 0; i < 6; i++) {
                float relu = xv[i] > 0 ? xv[i] : 0;
                CHECK_NEAR(yv[i], 2 * relu + 1, 1e-6);
            }
        }
        onyx_tensor_free(x);
        onyx_tensor_free(y);
        onyx_session_free(s);
    }
    free(model);
}

/* The test provider keeps Relu, Reshape and Add in simulated device
 * memory and runs recorded work only when its stream is flushed: capture
 * must copy device values out (flushing) and injection write them back. */
static void test_device(onyx_env *env, const uint8_t *model, size_t len) {
    ox_error err = {0};
    CHECK(ox_env_add_provider(env, "test", ox_test_ep_create, &err) == 0);
    use_test_provider = 1;
    onyx_session *s = open_session(env, model, len, ONYX_OPT_NONE, "");
    if (s) {
        int relu = find_node(s, "Relu");
        CHECK(relu >= 0 && strcmp(onyx_session_node_provider(s, (size_t)relu), "test") == 0);
        onyx_session_free(s);
    }
    test_capture(env, model, len, ONYX_OPT_NONE);
    CHECK(perturbed(env, model, len, ONYX_OPT_NONE, "Relu_1@test") == 1);
    CHECK(perturbed(env, model, len, ONYX_OPT_NONE, "Add_4") == 1);
    /* the Relu runs on the test provider, not on the CPU */
    CHECK(perturbed(env, model, len, ONYX_OPT_NONE, "Relu_1@cpu") == 0);
    CHECK(perturbed(env, model, len, ONYX_OPT_NONE, "Conv_0@cpu") == 1);
    use_test_provider = 0;
}

/* A session with shadow runs over the first `runs` runs. */
static onyx_session *open_verified(onyx_env *env, const uint8_t *model, size_t len,
                                   onyx_opt_level level, const char *fault, uint64_t runs) {
    onyx_session_options *o = NULL;
    onyx_session *s = NULL;
    const char *providers[] = {"test", "cpu"};
    CHECK_OK(onyx_session_options_create(&o));
    if (use_test_provider) CHECK_OK(onyx_session_options_set_providers(o, providers, 2));
    CHECK_OK(onyx_session_options_set_optimization_level(o, level));
    CHECK_OK(onyx_session_options_set_threads(o, 1));
    CHECK_OK(onyx_session_options_set_fault_injection(o, fault));
    CHECK_OK(onyx_session_options_set_verify_first_runs(o, runs, 1e-5, 1e-4));
    CHECK_OK(onyx_session_create_from_buffer(env, model, len, o, &s));
    onyx_session_options_free(o);
    return s;
}

/* runs of s, each of whose outputs must match clean within the shadow
 * runs' own tolerance (1e-5 + 1e-4 * |clean|) */
static void runs_match(onyx_session *s, const float *clean, int runs) {
    float y[CLASSES];
    for (int r = 0; r < runs; r++) {
        memset(y, 0, sizeof y);
        run(s, NULL, y);
        for (int i = 0; i < CLASSES; i++) CHECK_NEAR(y[i], clean[i], 1e-5 + 1e-4 * fabs(clean[i]));
    }
}

/* Shadow runs catch an injected fault, hand back the reference's outputs
 * and stop trusting the node: on a device it moves to the CPU; on the
 * CPU itself every later run goes to the reference. */
static void test_verify(onyx_env *env, const uint8_t *model, size_t len) {
    float clean[CLASSES], y[CLASSES];
    onyx_session *c = open_session(env, model, len, ONYX_OPT_NONE, "");
    if (!c) return;
    run(c, NULL, clean);
    onyx_session_free(c);
    onyx_verify_stats v;
    char report[1024];

    /* a clean session: every verified run matches */
    onyx_session *s = open_verified(env, model, len, ONYX_OPT_ALL, "", 2);
    if (s) {
        for (int r = 0; r < 3; r++) run(s, NULL, y);
        CHECK_OK(onyx_session_verify_stats(s, &v));
        CHECK(v.runs_verified == 2 && v.mismatches == 0 && v.nodes_disabled == 0 && !v.on_reference);
        CHECK(onyx_session_verify_report(s, report, sizeof report) == 0 && report[0] == '\0');
        onyx_session_free(s);
    }

    /* a wrong fusion on the CPU: caught, and later runs use the reference */
    s = open_verified(env, model, len, ONYX_OPT_ALL, "fused:Relu_1", 1);
    if (s) {
        runs_match(s, clean, 3);
        CHECK_OK(onyx_session_verify_stats(s, &v));
        CHECK(v.runs_verified == 1 && v.mismatches == 1 && v.nodes_disabled == 0 && v.on_reference);
        onyx_session_verify_report(s, report, sizeof report);
        CHECK(strstr(report, "run 1: output 'y' differs") == report);
        CHECK(strstr(report, "node 'Conv_0' (onyx.FusedConv) on cpu") != NULL);
        CHECK(strstr(report, "every later run of this session uses the reference") != NULL);
        onyx_session_free(s);
    }

    /* a wrong device kernel: caught, and the CPU runs that node from then
     * on (later runs match without help) */
    use_test_provider = 1; /* registered with env by test_device */
    s = open_verified(env, model, len, ONYX_OPT_NONE, "Relu_1@test", 2);
    if (s) {
        runs_match(s, clean, 3);
        CHECK_OK(onyx_session_verify_stats(s, &v));
        CHECK(v.runs_verified == 2 && v.mismatches == 1 && v.nodes_disabled == 1 && !v.on_reference);
        onyx_session_verify_report(s, report, sizeof report);
        CHECK(strstr(report, "node 'Relu_1' (Relu) on test") != NULL);
        CHECK(strstr(report, "its test kernel is disabled for this session, the CPU runs it") != NULL);
        onyx_provider_stats ps;
        CHECK_OK(onyx_session_provider_stats(s, "test", &ps));
        CHECK(ps.cpu_fallbacks == 2); /* the Relu in runs 2 and 3 */
        onyx_session_free(s);
    }
    use_test_provider = 0;
    onyx_session_options *o = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_FAILS(onyx_session_options_set_verify_first_runs(o, 1, -1.0, 0.0), ONYX_INVALID_ARGUMENT,
                "non-negative");
    CHECK_FAILS(onyx_session_options_set_verify_first_runs(o, 1, 0.0, NAN), ONYX_INVALID_ARGUMENT,
                "non-negative");
    onyx_session_options_free(o);
}

int main(void) {
    for (int i = 0; i < C_IN * HW * HW; i++) input_data[i] = (float)((i * 37) % 19) / 19.0f - 0.4f;
    size_t len = 0;
    uint8_t *model = make_model(&len);
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    CHECK_OK(onyx_env_set_log_level(env, ONYX_LOG_ERROR));
    if (model && env) {
        test_capture(env, model, len, ONYX_OPT_NONE);
        test_capture(env, model, len, ONYX_OPT_ALL);
        test_describe(env, model, len);
        test_node_timing(env, model, len);
        test_injection(env, model, len);
        test_view_chain(env);
        test_device(env, model, len);
        test_verify(env, model, len);
    }
    onyx_env_free(env);
    free(model);
    return check_failures;
}
