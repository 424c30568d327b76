/* Device faults on the Vulkan provider (lavapipe in CI), through the
 * public API: a run whose device is lost, out of memory or hung (injected
 * with the provider option `inject`, the form of ONYX_VK_INJECT) must
 * complete on the CPU with the CPU's outputs; the next run must use the
 * remade device; the node must go to the CPU for the session and, through
 * the cache file, for a later session; concurrent runs during a loss must
 * all succeed; the memory budget must make runs fall back, not fail; bad
 * options and a corrupt cache must be handled. Tolerances: a rescued run
 * is the CPU's (1e-6); a device run of these small products 1e-4. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model_builder.h"

#define N_IN 64
#define BATCH 4

/* Mesa's lavapipe leaks a one-time set-up each time the loader loads it
 * and unloads it with the last instance, where LeakSanitizer cannot name
 * it: one Vulkan session stays open to the end, reachable from here, so
 * the driver stays loaded. */
static onyx_session *keep_driver_loaded;

static uint8_t *g_model;
static size_t g_len;
static const onyx_tensor *g_x;
static float g_ref[BATCH * N_IN];

/* x [4, 64] -> MatMul_0 (W1) -> Relu_1 -> MatMul_2 (W2) -> y */
static uint8_t *make_model(size_t *len) {
    mb_model *m = mb_new(17);
    int64_t xd[2] = {BATCH, N_IN}, wd[2] = {N_IN, N_IN};
    static float w1[N_IN * N_IN], w2[N_IN * N_IN];
    for (int i = 0; i < N_IN * N_IN; i++) {
        w1[i] = (float)((i * 37 % 101) - 50) / 400.0f;
        w2[i] = (float)((i * 53 % 97) - 48) / 300.0f;
    }
    mb_input(m, "x", ONYX_FLOAT32, xd, 2);
    mb_init_float(m, "w1", wd, 2, w1);
    mb_init_float(m, "w2", wd, 2, w2);
    mb_node(m, "MatMul", "x,w1", "h");
    mb_node(m, "Relu", "h", "r");
    mb_node(m, "MatMul", "r,w2", "y");
    mb_output(m, "y", ONYX_FLOAT32, xd, 2);
    uint8_t *buf = mb_serialize(m, len);
    mb_free(m);
    return buf;
}

static onyx_status *make_session(onyx_env *env, const char *providers, const char *inject,
                                 const char *budget, const char *cache, onyx_session **out) {
    onyx_session_options *o = NULL;
    onyx_status *st = onyx_session_options_create(&o);
    const char *names[2] = {"vulkan", "cpu"};
    if (!st && strcmp(providers, "cpu") == 0) st = onyx_session_options_set_providers(o, names + 1, 1);
    else if (!st) st = onyx_session_options_set_providers(o, names, 2);
    if (!st && inject) st = onyx_session_options_set_provider_option(o, "vulkan", "inject", inject);
    if (!st && budget) st = onyx_session_options_set_provider_option(o, "vulkan", "memory_budget", budget);
    if (!st && cache) st = onyx_session_options_set_cache_dir(o, cache);
    if (!st) st = onyx_session_create_from_buffer(env, g_model, g_len, o, out);
    onyx_session_options_free(o);
    return st;
}

/* Runs s once; the largest difference from the reference, or -1 on failure. */
static double run_diff(onyx_session *s) {
    const char *in = "x", *outn = "y";
    onyx_tensor *y = NULL;
    onyx_status *st = onyx_session_run(s, &in, &g_x, 1, &outn, &y, 1);
    if (st) {
        fprintf(stderr, "run failed: %s\n", onyx_status_message(st));
        onyx_status_free(st);
        return -1;
    }
    const float *p = onyx_tensor_data(y);
    double worst = 0;
    for (int i = 0; i < BATCH * N_IN; i++) {
        double d = fabs((double)p[i] - (double)g_ref[i]);
        if (!(d <= worst)) worst = d; /* NaN counts as the worst */
    }
    onyx_tensor_free(y);
    return worst;
}

static onyx_provider_stats stats(const onyx_session *s) {
    onyx_provider_stats st;
    memset(&st, 0, sizeof st);
    CHECK_OK(onyx_session_provider_stats(s, "vulkan", &st));
    return st;
}

static const char *provider_of(const onyx_session *s, const char *node) {
    for (size_t i = 0; i < onyx_session_node_count(s); i++)
        if (strcmp(onyx_session_node_name(s, i), node) == 0) return onyx_session_node_provider(s, i);
    return "(no such node)";
}

static void temp_dir(char *buf, size_t size, const char *what) {
    const char *t = getenv("TMPDIR");
    snprintf(buf, size, "%s/onyx-fault-%s-XXXXXX", t && t[0] ? t : "/tmp", what);
    if (!mkdtemp(buf)) {
        fprintf(stderr, "cannot make %s\n", buf);
        check_failures++;
    }
}

static void remove_dir(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "note: could not remove %s\n", dir);
}

/* Lines of the one cache file under dir/device-faults, or -1. */
static int cache_lines(const char *dir, const char *must_hold) {
    char cmd[700];
    snprintf(cmd, sizeof cmd, "cat '%s'/device-faults/*.txt 2>/dev/null", dir);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    char line[2048];
    int n = 0, held = !must_hold;
    while (fgets(line, sizeof line, p)) {
        n++;
        if (must_hold && strstr(line, must_hold)) held = 1;
    }
    pclose(p);
    if (!held) {
        fprintf(stderr, "the cache in %s holds no line with '%s'\n", dir, must_hold);
        check_failures++;
    }
    return n;
}

/* One kind of fault at MatMul_2: rescued, then the remade device, then a
 * restart that reads the cache. */
static void test_kind(const char *kind, const char *what) {
    char cache[512], inject[64];
    temp_dir(cache, sizeof cache, kind);
    snprintf(inject, sizeof inject, "%s@MatMul_2", kind);
    onyx_env *env = NULL, *env2 = NULL;
    onyx_session *s = NULL, *again = NULL;
    CHECK_OK(onyx_env_create(&env));
    CHECK_OK(make_session(env, "vulkan", inject, NULL, cache, &s));
    if (!s) goto out;
    CHECK(strcmp(provider_of(s, "MatMul_2"), "vulkan") == 0);
    double d = run_diff(s);
    CHECK(d >= 0 && d <= 1e-6);
    onyx_provider_stats a = stats(s);
    CHECK(a.device_faults == 1 && a.runs_rescued == 1 && a.nodes_denied == 1);
    CHECK(a.device_recoveries == 1);
    d = run_diff(s);
    CHECK(d >= 0 && d <= 1e-4);
    onyx_provider_stats b = stats(s);
    CHECK(b.device_faults == 1 && b.runs_rescued == 1 && b.device_recoveries == 1);
    CHECK(b.kernel_launches > a.kernel_launches); /* MatMul_0 and Relu_1 on the remade device */
    CHECK(cache_lines(cache, what) == 1);
    /* a restart: a new environment and session, the same cache folder */
    CHECK_OK(onyx_env_create(&env2));
    CHECK_OK(make_session(env2, "vulkan", inject, NULL, cache, &again));
    if (!again) goto out;
    CHECK(strcmp(provider_of(again, "MatMul_2"), "cpu") == 0);
    d = run_diff(again);
    CHECK(d >= 0 && d <= 1e-4);
    onyx_provider_stats r = stats(again);
    CHECK(r.device_faults == 0 && r.runs_rescued == 0 && r.nodes_denied == 1);
    CHECK(r.kernel_launches > 0);
out:
    onyx_session_free(s);
    onyx_session_free(again);
    onyx_env_free(env);
    onyx_env_free(env2);
    remove_dir(cache);
}

/* A budget smaller than the weights: every run falls back, none fails,
 * no node is blamed and the device is not remade. */
static void test_memory_budget(void) {
    onyx_env *env = NULL;
    onyx_session *s = NULL;
    CHECK_OK(onyx_env_create(&env));
    CHECK_OK(make_session(env, "vulkan", NULL, "4096", "", &s));
    if (s) {
        for (int run = 1; run <= 2; run++) {
            double d = run_diff(s);
            CHECK(d >= 0 && d <= 1e-6);
            onyx_provider_stats st = stats(s);
            CHECK(st.device_faults >= (uint64_t)run && st.runs_rescued == (uint64_t)run);
            CHECK(st.nodes_denied == 0 && st.device_recoveries == 0);
        }
    }
    onyx_session_free(s);
    /* a budget the model fits: no fault */
    s = NULL;
    CHECK_OK(make_session(env, "vulkan", NULL, "16777216", "", &s));
    if (s) {
        double d = run_diff(s);
        CHECK(d >= 0 && d <= 1e-4);
        onyx_provider_stats st = stats(s);
        CHECK(st.device_faults == 0 && st.runs_rescued == 0 && st.kernel_launches > 0);
    }
    onyx_session_free(s);
    onyx_env_free(env);
}

typedef struct worker {
    onyx_session *s;
    int runs, bad;
} worker;

static void *work(void *arg) {
    worker *w = arg;
    for (int i = 0; i < w->runs; i++) {
        double d = run_diff(w->s);
        if (!(d >= 0 && d <= 1e-4)) w->bad++;
    }
    return NULL;
}

/* Runs in flight on four threads while the device is lost: all succeed. */
static void test_concurrent_loss(void) {
    onyx_env *env = NULL;
    onyx_session *s = NULL;
    CHECK_OK(onyx_env_create(&env));
    CHECK_OK(make_session(env, "vulkan", "device_lost@MatMul_2", NULL, "", &s));
    if (s) {
        enum { THREADS = 4 };
        pthread_t t[THREADS];
        worker w[THREADS];
        for (int i = 0; i < THREADS; i++) {
            w[i] = (worker){s, 6, 0};
            CHECK(pthread_create(&t[i], NULL, work, &w[i]) == 0);
        }
        for (int i = 0; i < THREADS; i++) {
            pthread_join(t[i], NULL);
            CHECK(w[i].bad == 0);
        }
        onyx_provider_stats a = stats(s);
        printf("concurrent: %llu faults, %llu runs rescued, %llu recoveries of 24 runs\n",
               (unsigned long long)a.device_faults, (unsigned long long)a.runs_rescued,
               (unsigned long long)a.device_recoveries);
        CHECK(a.device_faults >= 1 && a.runs_rescued >= 1 && a.device_recoveries >= 1);
        CHECK(a.nodes_denied == 1);
        double d = run_diff(s);
        CHECK(d >= 0 && d <= 1e-4);
        onyx_provider_stats b = stats(s);
        CHECK(b.device_faults == a.device_faults && b.runs_rescued == a.runs_rescued);
    }
    onyx_session_free(s);
    onyx_env_free(env);
}

/* A device that cannot be remade: this run and every later one on the CPU. */
static void test_device_gone(void) {
    onyx_env *env = NULL;
    onyx_session *s = NULL;
    CHECK_OK(onyx_env_create(&env));
    CHECK_OK(make_session(env, "vulkan", "device_gone@MatMul_2", NULL, "", &s));
    if (s) {
        double d = run_diff(s);
        CHECK(d >= 0 && d <= 1e-6);
        onyx_provider_stats a = stats(s);
        CHECK(a.device_faults == 1 && a.runs_rescued == 1 && a.device_recoveries == 0);
        for (int i = 0; i < 2; i++) {
            d = run_diff(s);
            CHECK(d >= 0 && d <= 1e-6);
        }
        onyx_provider_stats b = stats(s);
        /* host-only runs: the device sees nothing more */
        CHECK(b.device_faults == 1 && b.kernel_launches == a.kernel_launches);
        CHECK(b.runs == a.runs);
    }
    onyx_session_free(s);
    onyx_env_free(env);
}

/* Without a cache folder nothing is written and a later session forgets. */
static void test_cache_off_and_corrupt(void) {
    char dir[512];
    temp_dir(dir, sizeof dir, "corrupt");
    onyx_env *env = NULL;
    onyx_session *s = NULL;
    CHECK_OK(onyx_env_create(&env));
    CHECK_OK(make_session(env, "vulkan", "oom@MatMul_2", NULL, "", &s));
    if (s) CHECK(run_diff(s) >= 0);
    onyx_session_free(s);
    s = NULL;
    CHECK_OK(make_session(env, "vulkan", NULL, NULL, "", &s));
    if (s) CHECK(strcmp(provider_of(s, "MatMul_2"), "vulkan") == 0);
    onyx_session_free(s);
    /* a cache file of garbage, and a line for another model: ignored */
    char cmd[2000];
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s/device-faults' && for f in vulkan-a vulkan-b; do printf "
             "'garbage\\n\\t\\t\\nffffffffffffffff\\tMatMul\\tMatMul_2\\tdevice lost\\n' > "
             "'%s/device-faults/'$f.txt; done; head -c 3000 /dev/urandom >> '%s/device-faults/vulkan-a.txt'",
             dir, dir, dir);
    CHECK(system(cmd) == 0);
    s = NULL;
    CHECK_OK(make_session(env, "vulkan", NULL, NULL, dir, &s));
    if (s) {
        CHECK(strcmp(provider_of(s, "MatMul_2"), "vulkan") == 0);
        CHECK(run_diff(s) >= 0);
    }
    onyx_session_free(s);
    /* a cache folder that cannot be made (under a file): the fault is
     * still handled, the node still moves for the session, only the
     * record is lost (a warning says so) */
    s = NULL;
    CHECK_OK(make_session(env, "vulkan", "oom@MatMul_2", NULL, "/dev/null/onyx-cache", &s));
    if (s) {
        double d = run_diff(s);
        CHECK(d >= 0 && d <= 1e-6);
        onyx_provider_stats st = stats(s);
        CHECK(st.device_faults == 1 && st.runs_rescued == 1 && st.nodes_denied == 1);
    }
    onyx_session_free(s);
    onyx_env_free(env);
    remove_dir(dir);
}

static void test_bad_options(void) {
    onyx_env *env = NULL;
    onyx_session *s = NULL;
    CHECK_OK(onyx_env_create(&env));
    CHECK_FAILS(make_session(env, "vulkan", "explode@MatMul_2", NULL, "", &s), ONYX_INVALID_ARGUMENT,
                "is not KIND@NODE (KIND: device_lost, oom, timeout, device_gone)");
    CHECK_FAILS(make_session(env, "vulkan", "oom@", NULL, "", &s), ONYX_INVALID_ARGUMENT,
                "'oom@' is not KIND@NODE");
    CHECK_FAILS(make_session(env, "vulkan", NULL, "-5", "", &s), ONYX_INVALID_ARGUMENT,
                "memory_budget='-5' is not a positive byte count");
    CHECK_FAILS(make_session(env, "vulkan", NULL, "12k", "", &s), ONYX_INVALID_ARGUMENT,
                "memory_budget='12k'");
    CHECK(s == NULL);
    onyx_env_free(env);
}

int main(void) {
    g_model = make_model(&g_len);
    onyx_env *env = NULL;
    onyx_session *cpu = NULL, *probe = NULL;
    CHECK_OK(onyx_env_create(&env));
    onyx_status *st = make_session(env, "vulkan", NULL, NULL, "", &probe);
    if (st) {
        int skip = getenv("ONYX_VK_ALLOW_NO_DEVICE") != NULL;
        fprintf(stderr, "no Vulkan device: %s%s\n", onyx_status_message(st), skip ? " (skipped)" : "");
        onyx_status_free(st);
        onyx_env_free(env);
        free(g_model);
        return skip ? 77 : 1;
    }
    keep_driver_loaded = probe;
    CHECK_OK(make_session(env, "cpu", NULL, NULL, "", &cpu));
    int64_t xd[2] = {BATCH, N_IN};
    onyx_tensor *x = NULL;
    CHECK_OK(onyx_tensor_create(ONYX_FLOAT32, xd, 2, &x));
    if (!cpu || !x) return 1;
    float *xp = onyx_tensor_data(x);
    for (int i = 0; i < BATCH * N_IN; i++) xp[i] = (float)((i * 29 % 61) - 30) / 10.0f;
    g_x = x;
    const char *in = "x", *outn = "y";
    onyx_tensor *y = NULL;
    CHECK_OK(onyx_session_run(cpu, &in, &g_x, 1, &outn, &y, 1));
    if (!y) return 1;
    memcpy(g_ref, onyx_tensor_data(y), sizeof g_ref);
    onyx_tensor_free(y);

    test_kind("device_lost", "device lost (injected)");
    test_kind("oom", "out of device memory (injected)");
    test_kind("timeout", "timeout (injected)");
    test_memory_budget();
    test_concurrent_loss();
    test_device_gone();
    test_cache_off_and_corrupt();
    test_bad_options();

    onyx_tensor_free(x);
    onyx_session_free(cpu);
    free(g_model);
    if (check_failures) fprintf(stderr, "%d check(s) failed\n", check_failures);
    return check_failures ? 1 : 0;
}
