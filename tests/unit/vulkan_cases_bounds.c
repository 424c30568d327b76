/* Bounded work on the Vulkan provider: masked device limits and the
 * work budgets through provider options (unit.vulkan_ep.bounded sets
 * ONYX_VK_LIMITS for the whole suite instead), their errors, dispatches
 * split over slices of their grid, submissions bounded by work, and the
 * fence timeout. Values are compared with the CPU within 1e-4 relative +
 * 1e-5 absolute (MatMul: other summation orders) and, between a split and
 * an unsplit run of the same shader, bit for bit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ep/vulkan/vk_ep.h"
#include "runtime/session.h"
#include "model_builder.h"
#include "vulkan_case.h"

/* A session on {"vulkan" with place=all and these options, "cpu"}. */
static onyx_status *session_with(const uint8_t *buf, size_t len, const char *const *kv, int n_kv,
                                 onyx_session **s) {
    onyx_session_options *o = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    const char *providers[] = {"vulkan", "cpu"};
    CHECK_OK(onyx_session_options_set_providers(o, providers, 2));
    CHECK_OK(onyx_session_options_set_provider_option(o, "vulkan", "place", "all"));
    /* the timeout case's fault would otherwise be recorded in the user's cache */
    CHECK_OK(onyx_session_options_set_cache_dir(o, ""));
    for (int i = 0; i + 1 < n_kv; i += 2)
        CHECK_OK(onyx_session_options_set_provider_option(o, "vulkan", kv[i], kv[i + 1]));
    *s = NULL;
    onyx_status *st = onyx_session_create_from_buffer(env, buf, len, o, s);
    onyx_session_options_free(o);
    return st;
}

/* y = Relu(a @ b), a [m, k], b [k, n]. */
static uint8_t *matmul_model(int64_t m, int64_t k, int64_t n, size_t *len) {
    int64_t ad[] = {m, k}, bd[] = {k, n}, yd[] = {m, n};
    mb_model *mb = mb_new(13);
    mb_input(mb, "a", ONYX_FLOAT32, ad, 2);
    mb_input(mb, "b", ONYX_FLOAT32, bd, 2);
    mb_node(mb, "MatMul", "a,b", "h");
    mb_node(mb, "Relu", "h", "y");
    mb_output(mb, "y", ONYX_FLOAT32, yd, 2);
    uint8_t *buf = mb_serialize(mb, len);
    mb_free(mb);
    return buf;
}

/* Runs the MatMul model once; y (owned by the caller) and the stats after. */
static onyx_tensor *run_matmul(onyx_session *s, onyx_tensor *a, onyx_tensor *b, onyx_provider_stats *st,
                               const char *fail_needle) {
    const char *in[] = {"a", "b"}, *out = "y";
    const onyx_tensor *ins[] = {a, b};
    onyx_tensor *y = NULL;
    onyx_status *r = onyx_session_run(s, in, ins, 2, &out, &y, 1);
    if (fail_needle) {
        CHECK(r && strstr(onyx_status_message(r), fail_needle));
        if (r) printf("failed as expected: %s\n", onyx_status_message(r));
    } else {
        CHECK(!r);
        if (r) fprintf(stderr, "run failed: %s\n", onyx_status_message(r));
    }
    if (r) onyx_status_free(r);
    CHECK_OK(onyx_session_provider_stats(s, "vulkan", st));
    return y;
}

static onyx_tensor *filled(int64_t r, int64_t c, int seed) {
    int64_t d[] = {r, c};
    onyx_tensor *t = NULL;
    CHECK_OK(onyx_tensor_create(ONYX_FLOAT32, d, 2, &t));
    float *p = onyx_tensor_data(t);
    for (int64_t i = 0; i < r * c; i++) p[i] = (float)((i * 37 + seed) % 23) / 11.0f - 1.0f;
    return t;
}

/* Malformed settings are the caller's mistake: creation fails naming the
 * setting and, for an unknown name, listing the known ones. */
static void error_cases(void) {
    size_t len;
    uint8_t *buf = matmul_model(2, 2, 2, &len);
    static const struct {
        const char *key, *value, *needle;
    } BAD[] = {
        {"limits", "bogus=1", "vulkan: option limits: unknown limit 'bogus' (known: maxStorageBufferRange, "},
        {"limits", "maxStorageBufferRange=12kb",
         "vulkan: option limits: maxStorageBufferRange='12kb' is not a decimal count of at least 4096"},
        {"limits", "maxComputeWorkGroupCount", "vulkan: option limits: 'maxComputeWorkGroupCount' is not name=value"},
        {"limits", "maxComputeWorkGroupCount=0", "maxComputeWorkGroupCount='0' is not a decimal count of at least 1"},
        {"limits", "maxComputeWorkGroupSize=-4", "maxComputeWorkGroupSize='-4' is not a decimal count"},
        {"limits", ",maxStorageBufferRange=65536", "vulkan: option limits: '' is not name=value"},
        {"dispatch_budget", "0", "vulkan: option dispatch_budget='0' is not a decimal count of at least 1"},
        {"fence_timeout_ms", "10s", "vulkan: option fence_timeout_ms='10s' is not a decimal count of at least 0"},
        {"max_buffer", "100", "vulkan: option max_buffer='100' is not a decimal count of at least 4096"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        const char *kv[] = {BAD[i].key, BAD[i].value};
        onyx_session *s = NULL;
        CHECK_FAILS(session_with(buf, len, kv, 2, &s), ONYX_INVALID_ARGUMENT, BAD[i].needle);
        onyx_session_free(s);
    }
    const char *saved = getenv("ONYX_VK_LIMITS");
    char *keep = saved ? strdup(saved) : NULL;
    setenv("ONYX_VK_LIMITS", "dispatchBudget=lots", 1);
    onyx_session *s = NULL;
    CHECK_FAILS(session_with(buf, len, NULL, 0, &s), ONYX_INVALID_ARGUMENT,
                "vulkan: ONYX_VK_LIMITS: dispatchBudget='lots' is not a decimal count of at least 1");
    onyx_session_free(s);
    if (keep) setenv("ONYX_VK_LIMITS", keep, 1);
    else unsetenv("ONYX_VK_LIMITS");
    free(keep);
    free(buf);
}

/* A mask lowers the record's limits; a value above the device's leaves
 * the device's own. The workgroup size follows it (the largest power of
 * two within the limits); under 32 invocations every node stays on the
 * CPU, which still answers. */
static void mask_cases(void) {
    size_t len;
    uint8_t *buf = matmul_model(3, 5, 4, &len);
    onyx_session *plain = NULL, *s = NULL;
    CHECK_OK(session_with(buf, len, NULL, 0, &plain));
    const char *kv[] = {"limits",
                        "maxStorageBufferRange=65536,maxMemoryAllocationSize=1048576,"
                        "maxComputeWorkGroupCount=5,maxComputeWorkGroupSize=4000000000,"
                        "maxComputeWorkGroupInvocations=4000000000"};
    CHECK_OK(session_with(buf, len, kv, 2, &s));
    if (plain && s) {
        const ox_vk_caps *dev = ox_vulkan_ep_caps(plain->eps[0]), *c = ox_vulkan_ep_caps(s->eps[0]);
        CHECK(c->max_storage_buffer_range == (dev->max_storage_buffer_range < 65536 ? dev->max_storage_buffer_range : 65536));
        CHECK(c->max_allocation_size == 1048576 || c->max_allocation_size == dev->max_allocation_size);
        CHECK(c->max_allocation_size <= 1048576);
        for (int d = 0; d < 3; d++) {
            CHECK(c->max_workgroup_count[d] == (dev->max_workgroup_count[d] < 5 ? dev->max_workgroup_count[d] : 5));
            CHECK(c->max_workgroup_size[d] == dev->max_workgroup_size[d]);
        }
        CHECK(c->max_workgroup_invocations == dev->max_workgroup_invocations);
        CHECK(vc_on_vulkan(s) == 2);
    }
    onyx_session_free(s);
    onyx_session_free(plain);
    /* 64 invocations: the provider specializes its shaders to 64 (8 x 8
     * tiles) and keeps the nodes; under 32 it takes none, and the CPU
     * still answers */
    struct {
        const char *limits;
        uint32_t inv, wg, tile;
    } small[] = {{"maxComputeWorkGroupInvocations=64", 64, 64, 8},
                 {"maxComputeWorkGroupInvocations=100", 100, 64, 8},
                 {"maxComputeWorkGroupSize=32", 0, 32, 4},
                 {"maxComputeWorkGroupInvocations=16", 16, 0, 0},
                 {"maxComputeWorkGroupSize=16", 0, 0, 0}};
    for (size_t k = 0; k < sizeof small / sizeof small[0]; k++) {
        const char *small_wg[] = {"limits", small[k].limits};
        CHECK_OK(session_with(buf, len, small_wg, 2, &s));
        if (!s) continue;
        uint32_t tile = 0;
        if (small[k].inv) CHECK(ox_vulkan_ep_caps(s->eps[0])->max_workgroup_invocations == small[k].inv);
        CHECK(ox_vulkan_ep_workgroup(s->eps[0], &tile) == small[k].wg && tile == small[k].tile);
        CHECK(vc_on_vulkan(s) == (small[k].wg ? 2 : 0));
        onyx_tensor *a = filled(3, 5, 1), *b = filled(5, 4, 2);
        onyx_provider_stats st;
        onyx_tensor *y = run_matmul(s, a, b, &st, NULL);
        CHECK(y && (st.kernel_launches > 0) == (small[k].wg != 0));
        for (int64_t r = 0; y && r < 3; r++)
            for (int64_t col = 0; col < 4; col++) {
                double want = 0;
                for (int kk = 0; kk < 5; kk++)
                    want += (double)((float *)onyx_tensor_data(a))[r * 5 + kk] *
                            ((float *)onyx_tensor_data(b))[kk * 4 + col];
                CHECK(fabs(((float *)onyx_tensor_data(y))[r * 4 + col] - (want > 0 ? want : 0)) <=
                      1e-5 * fabs(want) + 1e-6);
            }
        onyx_tensor_free(a);
        onyx_tensor_free(b);
        onyx_tensor_free(y);
        onyx_session_free(s);
        s = NULL;
    }
    free(buf);
}

/* A MatMul of 64 x 96 x 80 under a budget of 4096 units: each 16 x 16
 * tile (256 invocations x K=96 = 24576 units) is over it, so the 5 x 4
 * grid goes as 20 one-group slices (and the Relu's 20 groups as 16 + 4), and every slice passes the submission
 * bound (4 budgets) on its own: the stream submits before each. The
 * result equals the unsplit run's bit for bit. Then the grid-stride
 * shaders with two groups at most per dimension, one per slice. */
static void split_cases(void) {
    size_t len;
    uint8_t *buf = matmul_model(64, 96, 80, &len);
    onyx_session *plain = NULL, *s = NULL;
    const char *kv[] = {"dispatch_budget", "4096"};
    CHECK_OK(session_with(buf, len, NULL, 0, &plain));
    CHECK_OK(session_with(buf, len, kv, 2, &s));
    onyx_tensor *a = filled(64, 96, 3), *b = filled(96, 80, 4);
    if (plain && s) {
        onyx_provider_stats p0, p1, s0, s1;
        CHECK_OK(onyx_session_provider_stats(plain, "vulkan", &p0));
        CHECK_OK(onyx_session_provider_stats(s, "vulkan", &s0));
        onyx_tensor *yp = run_matmul(plain, a, b, &p1, NULL), *ys = run_matmul(s, a, b, &s1, NULL);
        printf("MatMul 64x96x80: unbounded %llu dispatches, %llu submits; budget 4096: %llu "
               "dispatches (%llu split into %llu slices), %llu submits\n",
               (unsigned long long)(p1.kernel_launches - p0.kernel_launches),
               (unsigned long long)(p1.submits - p0.submits),
               (unsigned long long)(s1.kernel_launches - s0.kernel_launches),
               (unsigned long long)(s1.split_dispatches - s0.split_dispatches),
               (unsigned long long)(s1.dispatch_slices - s0.dispatch_slices),
               (unsigned long long)(s1.submits - s0.submits));
        CHECK(p1.split_dispatches == p0.split_dispatches);
        CHECK(s1.kernel_launches - s0.kernel_launches == p1.kernel_launches - p0.kernel_launches);
        /* MatMul: 20 slices; Relu: 20 groups of 256 units, 16 to a slice: 2 */
        CHECK(s1.split_dispatches - s0.split_dispatches == 2);
        CHECK(s1.dispatch_slices - s0.dispatch_slices == 22);
        CHECK(s1.submits - s0.submits >= p1.submits - p0.submits + 19);
        CHECK(yp && ys && memcmp(onyx_tensor_data(yp), onyx_tensor_data(ys), 64 * 80 * sizeof(float)) == 0);
        onyx_tensor_free(yp);
        onyx_tensor_free(ys);
    }
    onyx_session_free(plain);
    onyx_session_free(s);
    onyx_tensor_free(a);
    onyx_tensor_free(b);
    free(buf);

    /* Relu over 70001 elements in at most 2 groups, one group per slice:
     * each invocation strides by the whole grid, not its slice's */
    int64_t n = 70001;
    mb_model *m = mb_new(13);
    mb_input(m, "x", ONYX_FLOAT32, &n, 1);
    mb_node(m, "Relu", "x", "y");
    mb_output(m, "y", ONYX_FLOAT32, &n, 1);
    buf = mb_serialize(m, &len);
    mb_free(m);
    const char *tiny[] = {"limits", "maxComputeWorkGroupCount=2", "dispatch_budget", "256"};
    CHECK_OK(session_with(buf, len, tiny, 4, &s));
    if (s) {
        onyx_tensor *x = NULL, *y = NULL;
        CHECK_OK(onyx_tensor_create(ONYX_FLOAT32, &n, 1, &x));
        float *px = onyx_tensor_data(x);
        for (int64_t i = 0; i < n; i++) px[i] = (float)(i % 7) - 3.0f;
        const char *in = "x", *out = "y";
        CHECK_OK(onyx_session_run(s, &in, (const onyx_tensor *const *)&x, 1, &out, &y, 1));
        int64_t bad = 0;
        for (int64_t i = 0; y && i < n; i++)
            bad += ((float *)onyx_tensor_data(y))[i] != (px[i] > 0 ? px[i] : 0.0f);
        CHECK(y && bad == 0);
        onyx_provider_stats st;
        CHECK_OK(onyx_session_provider_stats(s, "vulkan", &st));
        CHECK(st.kernel_launches == 1 && st.split_dispatches == 1 && st.dispatch_slices == 2);
        onyx_tensor_free(x);
        onyx_tensor_free(y);
        onyx_session_free(s);
    }
    free(buf);
}

/* A submission that outlasts fence_timeout_ms is a device fault (a hung
 * device): the run completes on the CPU and the device is remade. A
 * MatMul of 512^3 takes lavapipe far longer than 1 ms, and one of 4096 x
 * 1024 x 4096 (17 G multiply-adds) any GPU; a budget past the product
 * keeps it in one submission. The result (MatMul then Relu) is checked on
 * its first row within 1e-4 relative + 1e-5. */
static void timeout_case(ox_ep *probe) {
    int cpu = ox_vulkan_ep_caps(probe)->device_type == 4; /* VK_PHYSICAL_DEVICE_TYPE_CPU */
    int64_t mn = cpu ? 512 : 4096, k = cpu ? 512 : 1024;
    size_t len;
    uint8_t *buf = matmul_model(mn, k, mn, &len);
    onyx_session *s = NULL;
    const char *kv[] = {"fence_timeout_ms", "1", "dispatch_budget", "1000000000000000"};
    CHECK_OK(session_with(buf, len, kv, 4, &s));
    if (s) {
        onyx_tensor *a = filled(mn, k, 5), *b = filled(k, mn, 6);
        onyx_provider_stats st;
        onyx_tensor *y = run_matmul(s, a, b, &st, NULL);
        printf("fence timeout: %llu device faults, %llu runs rescued, %llu recoveries\n",
               (unsigned long long)st.device_faults, (unsigned long long)st.runs_rescued,
               (unsigned long long)st.device_recoveries);
        CHECK(st.device_faults == 1 && st.runs_rescued == 1 && st.device_recoveries == 1);
        const float *pa = onyx_tensor_data(a), *pb = onyx_tensor_data(b);
        for (int64_t col = 0; y && col < mn; col++) {
            double want = 0;
            for (int64_t i = 0; i < k; i++) want += (double)pa[i] * pb[i * mn + col];
            if (want < 0) want = 0;
            CHECK(fabs(((const float *)onyx_tensor_data(y))[col] - want) <= 1e-4 * fabs(want) + 1e-5);
        }
        onyx_tensor_free(y);
        onyx_tensor_free(a);
        onyx_tensor_free(b);
        onyx_session_free(s);
    }
    free(buf);
}

/* Relu and Sigmoid over 70001 floats (280 KB) with max_buffer=65536: each
 * runs on the device in 5 windows of at most 16384 elements (bound at
 * offsets, 64 KiB apart), with Relu's result exact and Sigmoid's within
 * 1e-6 of the CPU's; Softmax, which takes no windows, stays on the CPU. */
static void window_case(void) {
    int64_t n = 70001;
    mb_model *m = mb_new(13);
    mb_input(m, "x", ONYX_FLOAT32, &n, 1);
    mb_node(m, "Relu", "x", "r");
    mb_node(m, "Sigmoid", "r", "y");
    mb_node(m, "Softmax", "x", "z");
    mb_output(m, "y", ONYX_FLOAT32, &n, 1);
    mb_output(m, "z", ONYX_FLOAT32, &n, 1);
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *s = NULL;
    const char *kv[] = {"max_buffer", "65536"};
    CHECK_OK(session_with(buf, len, kv, 2, &s));
    free(buf);
    if (!s) return;
    CHECK(onyx_session_node_count(s) == 3);
    for (size_t i = 0; i < onyx_session_node_count(s); i++) {
        int windows = strcmp(onyx_session_node_op_type(s, i), "Softmax") != 0;
        CHECK(strcmp(onyx_session_node_provider(s, i), windows ? "vulkan" : "cpu") == 0);
    }
    onyx_tensor *x = NULL, *out[2] = {NULL, NULL};
    CHECK_OK(onyx_tensor_create(ONYX_FLOAT32, &n, 1, &x));
    float *px = onyx_tensor_data(x);
    for (int64_t i = 0; i < n; i++) px[i] = (float)(i % 13) * 0.5f - 3.0f;
    const char *in = "x", *names[] = {"y", "z"};
    CHECK_OK(onyx_session_run(s, &in, (const onyx_tensor *const *)&x, 1, names, out, 2));
    int64_t bad = 0;
    for (int64_t i = 0; out[0] && i < n; i++) {
        double r = px[i] > 0 ? px[i] : 0.0, want = 1.0 / (1.0 + exp(-r));
        bad += fabs(((float *)onyx_tensor_data(out[0]))[i] - want) > 1e-6;
    }
    CHECK(out[0] && bad == 0);
    onyx_provider_stats st;
    CHECK_OK(onyx_session_provider_stats(s, "vulkan", &st));
    CHECK(st.kernel_launches == 10 && st.cpu_fallbacks == 0);
    onyx_tensor_free(x);
    onyx_tensor_free(out[0]);
    onyx_tensor_free(out[1]);
    onyx_session_free(s);
}

void vulkan_bounds_cases(ox_ep *probe) {
    window_case();
    error_cases();
    mask_cases();
    split_cases();
    timeout_case(probe);
}
