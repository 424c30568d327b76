/* The Vulkan driver denylist and faked device records: each rule kind
 * (an operator, an operator on a dtype, an operator with an attribute
 * value, a feature, a dispatch size, the whole device) fires on a record
 * faked through ONYX_VK_FAKE_DEVICE, version and device id ranges match
 * at their bounds and not past them, the embedded GCN (Polaris) rules
 * fire on a faked RX 580, and a record no rule names loses nothing.
 * Placement is read through the public API (onyx_session_node_provider);
 * capabilities and the dispatch budget from the provider record; the
 * info log line from stderr. Malformed files fail naming file and line.
 * The real device (lavapipe here) runs the work throughout. Exact checks:
 * no tolerance applies. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "ep/vulkan/vk_internal.h"
#include "model_builder.h"
#include "runtime/session.h"

#define SKIPPED 77

static onyx_env *env;
/* keeps the driver loaded until exit, never freed (see test_vulkan_ep.c:
 * lavapipe leaks once per load, and only a loaded driver's frames can be
 * named in tests/lsan_suppressions.txt) */
static ox_ep *keep_driver_loaded;
static char tmpdir[] = "/tmp/onyx-denylist-XXXXXX";
static uint8_t *model;
static size_t model_len;

/* Relu -> (Conv, Conv group=2, onyx FusedConv group=2: a rule naming an
 * operator covers onyx's fused form of it); Gather with int64 and with
 * int32 indices. */
static void build_model(void) {
    mb_model *m = mb_new(13);
    int64_t xd[] = {1, 4, 6, 6}, w1d[] = {4, 4, 3, 3}, w2d[] = {4, 2, 3, 3}, dd[] = {5, 3}, id[] = {4};
    float w1[144], w2[72], d[15];
    for (int i = 0; i < 144; i++) w1[i] = (float)(i % 7) * 0.1f;
    for (int i = 0; i < 72; i++) w2[i] = (float)(i % 5) * 0.1f;
    for (int i = 0; i < 15; i++) d[i] = (float)i;
    mb_input(m, "x", ONYX_FLOAT32, xd, 4);
    mb_input(m, "i64", ONYX_INT64, id, 1);
    mb_input(m, "i32", ONYX_INT32, id, 1);
    mb_init_float(m, "w1", w1d, 4, w1);
    mb_init_float(m, "w2", w2d, 4, w2);
    mb_init_float(m, "d", dd, 2, d);
    mb_node(m, "Relu", "x", "r");
    mb_node(m, "Conv", "r,w1", "c1");
    mb_node(m, "Conv", "r,w2", "c2");
    mb_attr_int(m, "group", 2);
    mb_node(m, "FusedConv", "r,w2", "f2");
    mb_domain(m, "onyx", 1);
    mb_attr_int(m, "group", 2);
    mb_attr_string(m, "activation", "Relu");
    mb_node(m, "Gather", "d,i64", "g64");
    mb_node(m, "Gather", "d,i32", "g32");
    mb_output(m, "c1", ONYX_FLOAT32, NULL, -1);
    mb_output(m, "c2", ONYX_FLOAT32, NULL, -1);
    mb_output(m, "f2", ONYX_FLOAT32, NULL, -1);
    mb_output(m, "g64", ONYX_FLOAT32, NULL, -1);
    mb_output(m, "g32", ONYX_FLOAT32, NULL, -1);
    model = mb_serialize(m, &model_len);
    mb_free(m);
}

static const char *write_file(const char *name, const char *text) {
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return path;
}

/* stderr captured into a file while sessions are made (the info log) */
static int saved_stderr = -1;
static int capturing; /* sessions log at info level only while captured */
static void capture_begin(void) {
    capturing = 1;
    char path[256];
    snprintf(path, sizeof path, "%s/stderr.txt", tmpdir);
    fflush(stderr);
    saved_stderr = dup(2);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);
}
static char *capture_end(void) {
    capturing = 0;
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    char path[256];
    snprintf(path, sizeof path, "%s/stderr.txt", tmpdir);
    FILE *f = fopen(path, "r");
    static char text[16384];
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = '\0';
    if (f) fclose(f);
    return text;
}

/* A session on {vulkan[, cpu]} with the denylist option `file` (NULL:
 * the embedded rules), every node the kernels take kept on the device,
 * logging at info level while stderr is captured; *st gets the failure. */
static onyx_session *session(const char *file, int with_cpu, onyx_status **st) {
    onyx_session_options *o = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    const char *names[] = {"vulkan", "cpu"};
    CHECK_OK(onyx_session_options_set_providers(o, names, with_cpu ? 2 : 1));
    CHECK_OK(onyx_session_options_set_provider_option(o, "vulkan", "place", "all"));
    if (file) CHECK_OK(onyx_session_options_set_provider_option(o, "vulkan", "denylist", file));
    CHECK_OK(onyx_session_options_set_optimization_level(o, ONYX_OPT_NONE));
    CHECK_OK(onyx_session_options_set_log_level(o, capturing ? ONYX_LOG_INFO : ONYX_LOG_ERROR));
    onyx_session *s = NULL;
    *st = onyx_session_create_from_buffer(env, model, model_len, o, &s);
    onyx_session_options_free(o);
    return s;
}

/* Where the node making `output` runs. */
static const char *where(const onyx_session *s, const char *output) {
    for (size_t i = 0; i < onyx_session_node_count(s); i++)
        if (strcmp(onyx_session_node_output_name(s, i, 0), output) == 0) return onyx_session_node_provider(s, i);
    return "?";
}

static vk_ep *vulkan_of(onyx_session *s) {
    for (int i = 0; i < s->n_eps; i++)
        if (strcmp(s->eps[i]->name, "vulkan") == 0) return (vk_ep *)s->eps[i];
    return NULL;
}

/* Placement of r (Relu), c1 (Conv), c2 (Conv group 2), g64, g32, f2
 * (FusedConv group 2) as a string of 'v'/'c', e.g. "vvcvvc"; the log goes
 * to *log when asked. */
static void placement(const char *file, const char *fake, char out[7], char **log) {
    if (fake) setenv("ONYX_VK_FAKE_DEVICE", fake, 1);
    else unsetenv("ONYX_VK_FAKE_DEVICE");
    onyx_status *st = NULL;
    capture_begin();
    onyx_session *s = session(file, 1, &st);
    char *text = capture_end();
    if (log) *log = text;
    strcpy(out, "??????");
    if (st) {
        fprintf(stderr, "session (fake %s): %s\n", fake ? fake : "none", onyx_status_message(st));
        onyx_status_free(st);
        check_failures++;
        return;
    }
    static const char *const OUT[] = {"r", "c1", "c2", "g64", "g32", "f2"};
    for (int i = 0; i < 6; i++) out[i] = strcmp(where(s, OUT[i]), "vulkan") == 0 ? 'v' : 'c';
    onyx_session_free(s);
}

#define EXPECT_PLACED(file, fake, want)                                                        \
    do {                                                                                       \
        char got_[7];                                                                          \
        placement(file, fake, got_, NULL);                                                     \
        if (strcmp(got_, want) != 0) {                                                         \
            fprintf(stderr, "%s:%d: fake %s: placement %s, expected %s\n", __FILE__, __LINE__, \
                    fake ? fake : "none", got_, want);                                         \
            check_failures++;                                                                  \
        }                                                                                      \
    } while (0)

static const char *RX580 = "0x1002:0x67df:radv:21.0.0:3";

static void op_rules(void) {
    const char *f = write_file("ops.txt",
                               "# every node kind, on AMD records only\n"
                               "rule relu\nvendor 0x1002\ndisable op=Relu\nreason test\nref https://example.org/relu\n"
                               "rule gather64\nvendor 0x1002\ndisable op=Gather dtype=int64\nreason test\n"
                               "ref https://example.org/g\n"
                               "rule grouped\nvendor 0x1002\ndisable op=Conv attr=group>1\nreason test\n"
                               "ref https://example.org/c\n");
    EXPECT_PLACED(NULL, NULL, "vvvvvv");       /* lavapipe, embedded rules: nothing disabled */
    EXPECT_PLACED(f, NULL, "vvvvvv");          /* lavapipe's record matches no AMD rule */
    EXPECT_PLACED(f, RX580, "cvccvc");         /* op; op+dtype (int64 only); op+attr (group 2 only) */
    char got[7], *log = NULL;
    placement(f, RX580, got, &log);
    CHECK(strstr(log, "onyx [info] provider 'vulkan': driver denylist: rule 'relu'") != NULL);
    CHECK(strstr(log, "disables op Gather on int64") != NULL);
    CHECK(strstr(log, "disables op Conv with group>1") != NULL);
    placement(f, NULL, got, &log);
    CHECK(strstr(log, "driver denylist") == NULL);

    /* the environment variable does what the option does */
    setenv("ONYX_VK_DENYLIST", f, 1);
    EXPECT_PLACED(NULL, RX580, "cvccvc");
    unsetenv("ONYX_VK_DENYLIST");
}

static void ranges(void) {
    const char *f = write_file("ranges.txt",
                               "rule mesa21\nvendor 0x1002\ndevice 0x67c0-0x67ff\ndriver RADV\n"
                               "version_from 21.0\nversion_below 21.3\ndisable op=Relu\n"
                               "reason test\nref https://example.org/a\n"
                               "rule nv\nvendor 0x10de\ndriver_id 4\nversion_from 535.0\nversion_below 535.105\n"
                               "disable op=Relu\nreason test\nref https://example.org/b\n");
    /* version range, RADV's VK_MAKE_VERSION encoding: from inclusive, below exclusive */
    EXPECT_PLACED(f, "0x1002:0x67df:radv:20.3.5:3", "vvvvvv");
    EXPECT_PLACED(f, "0x1002:0x67df:radv:21.0.0:3", "cvvvvv");
    EXPECT_PLACED(f, "0x1002:0x67df:radv:21.2.9:3", "cvvvvv");
    EXPECT_PLACED(f, "0x1002:0x67df:radv:21.3.0:3", "vvvvvv");
    /* device id range: bounds inclusive */
    EXPECT_PLACED(f, "0x1002:0x67bf:radv:21.1.0:3", "vvvvvv");
    EXPECT_PLACED(f, "0x1002:0x67c0:radv:21.1.0:3", "cvvvvv");
    EXPECT_PLACED(f, "0x1002:0x67ff:radv:21.1.0:3", "cvvvvv");
    EXPECT_PLACED(f, "0x1002:0x6800:radv:21.1.0:3", "vvvvvv");
    /* driver name (case-insensitive) */
    EXPECT_PLACED(f, "0x1002:0x67df:AMD open-source driver:21.1.0:2", "vvvvvv");
    /* NVIDIA's 10.8.8.6-bit encoding, and the driver id */
    EXPECT_PLACED(f, "0x10de:0x2204:NVIDIA:535.104.5.0:4", "cvvvvv");
    EXPECT_PLACED(f, "0x10de:0x2204:NVIDIA:535.105.0.0:4", "vvvvvv");
    EXPECT_PLACED(f, "0x10de:0x2204:NVIDIA:535.104.5.0:5", "vvvvvv");

    uint32_t v[4], in[4] = {535, 104, 5, 0};
    ox_vk_driver_version(0x10de, 4, ox_vk_driver_version_encode(0x10de, 4, in), v);
    CHECK(v[0] == 535 && v[1] == 104 && v[2] == 5 && v[3] == 0);
    char text[64];
    ox_vk_driver_version_text(0x8086, 5, (101u << 14) | 4972u, text, sizeof text); /* Intel Windows 18.14 */
    CHECK(strcmp(text, "101.4972") == 0);
    ox_vk_driver_version_text(0x1002, 3, (23u << 22) | (1u << 12) | 4u, text, sizeof text);
    CHECK(strcmp(text, "23.1.4") == 0);
}

static void feature_dispatch_device(void) {
    const char *f = write_file("caps.txt",
                               "rule f\nvendor 0x1002\ndisable feature=fp16\ndisable dispatch>1000\n"
                               "reason test\nref https://example.org/f\n"
                               "rule whole\nvendor 0x1002\ndevice 0x6900\ndisable device\n"
                               "reason the whole device is broken\nref https://example.org/d\n");
    onyx_status *st = NULL;
    unsetenv("ONYX_VK_FAKE_DEVICE");
    onyx_session *s = session(f, 1, &st);
    CHECK(st == NULL && s && vulkan_of(s));
    uint64_t budget_before = 0;
    if (s && vulkan_of(s)) {
        CHECK(vulkan_of(s)->caps.shader_float16 == 1); /* lavapipe offers fp16 */
        CHECK(vulkan_of(s)->caps.masked == 0);
        budget_before = vulkan_of(s)->dispatch_budget;
        CHECK(budget_before == 0 || budget_before > 1000);
    }
    onyx_session_free(s);
    setenv("ONYX_VK_FAKE_DEVICE", RX580, 1);
    s = session(f, 1, &st);
    CHECK(st == NULL && s && vulkan_of(s));
    if (s && vulkan_of(s)) {
        vk_ep *v = vulkan_of(s);
        CHECK(v->caps.shader_float16 == 0 && v->caps.storage_buffer_16bit == 0);
        CHECK(v->caps.masked == OX_VK_MASK_FP16);
        CHECK(v->dispatch_budget == 1000);
        CHECK(v->caps.faked && v->caps.vendor_id == 0x1002 && v->caps.device_id == 0x67df);
        CHECK(strcmp(v->caps.driver_name, "radv") == 0 && v->caps.driver_id == 3);
    }
    onyx_session_free(s);

    /* the whole device: {vulkan, cpu} falls back to the CPU, {vulkan} fails naming the rule */
    EXPECT_PLACED(f, "0x1002:0x6900:radv:22.0.0:3", "cccccc");
    setenv("ONYX_VK_FAKE_DEVICE", "0x1002:0x6900:radv:22.0.0:3", 1);
    s = session(f, 0, &st);
    CHECK(s == NULL && st && onyx_status_code(st) == ONYX_NOT_IMPLEMENTED);
    if (st) {
        CHECK(strstr(onyx_status_message(st), "rule 'whole'") != NULL);
        CHECK(strstr(onyx_status_message(st), "the whole device is broken") != NULL);
        onyx_status_free(st);
    }
    onyx_session_free(s);
    unsetenv("ONYX_VK_FAKE_DEVICE");
}

/* The embedded rules on faked Polaris records. */
static void gcn_rules(void) {
    onyx_status *st = NULL;
    setenv("ONYX_VK_FAKE_DEVICE", RX580, 1);
    capture_begin();
    onyx_session *s = session(NULL, 1, &st);
    char *log = capture_end();
    CHECK(st == NULL && s && vulkan_of(s));
    if (s && vulkan_of(s)) {
        vk_ep *v = vulkan_of(s);
        CHECK(v->caps.masked == (OX_VK_MASK_INT64 | OX_VK_MASK_FP16));
        CHECK(v->caps.shader_int64 == 0 && v->caps.shader_float16 == 0);
        CHECK(v->denylist.n == 2);
    }
    CHECK(strstr(log, "rule 'amd-polaris-int64' (embedded:") != NULL);
    CHECK(strstr(log, "rule 'amd-polaris-fp16'") != NULL);
    onyx_session_free(s);
    EXPECT_PLACED(NULL, RX580, "vvvvvv"); /* no operator rule for Polaris on RADV */
    /* AMDVLK (VkDriverId 2): the device is off, the CPU runs everything */
    EXPECT_PLACED(NULL, "0x1002:0x67df:AMD open-source driver:2023.1.0:2", "cccccc");
    /* AMD's Windows driver (VkDriverId 1): dispatches split under the TDR budget */
    setenv("ONYX_VK_FAKE_DEVICE", "0x1002:0x67df:AMD proprietary driver:23.5.2:1", 1);
    s = session(NULL, 1, &st);
    CHECK(st == NULL && s && vulkan_of(s));
    if (s && vulkan_of(s)) CHECK(vulkan_of(s)->dispatch_budget > 0 && vulkan_of(s)->dispatch_budget <= 16777216);
    onyx_session_free(s);
    /* a Vega card (0x687f) is no Polaris: nothing disabled */
    setenv("ONYX_VK_FAKE_DEVICE", "0x1002:0x687f:radv:21.0.0:3", 1);
    s = session(NULL, 1, &st);
    CHECK(st == NULL && s && vulkan_of(s));
    if (s && vulkan_of(s)) CHECK(vulkan_of(s)->caps.masked == 0 && vulkan_of(s)->denylist.n == 0 &&
                                 vulkan_of(s)->deny_note == NULL);
    onyx_session_free(s);
    unsetenv("ONYX_VK_FAKE_DEVICE");
}

static void expect_malformed(const char *name, const char *text, int line, const char *needle) {
    const char *f = write_file(name, text);
    char where_[300];
    snprintf(where_, sizeof where_, "%s:%d: ", f, line);
    onyx_status *st = NULL;
    onyx_session *s = session(f, 1, &st);
    CHECK(s == NULL && st != NULL);
    if (st) {
        const char *msg = onyx_status_message(st);
        if (onyx_status_code(st) != ONYX_INVALID_ARGUMENT || !strstr(msg, where_) || !strstr(msg, needle)) {
            fprintf(stderr, "%s: expected '%s...%s', got: %s\n", name, where_, needle, msg);
            check_failures++;
        }
        onyx_status_free(st);
    }
    onyx_session_free(s);
}

static void malformed(void) {
    const char *ok = "rule a\nvendor 0x1002\ndisable op=Relu\nreason r\nref https://example.org/x\n";
    char text[512];
    snprintf(text, sizeof text, "%s\n# comment\nrule b\nvendor 0x1002\ncolour blue\n", ok);
    expect_malformed("key.txt", text, 10, "unknown key");
    expect_malformed("noref.txt", "rule a\nvendor 0x1002\ndisable op=Relu\nreason r\n", 1, "rule has no ref");
    expect_malformed("version.txt", "rule a\nvendor 0x1002\nversion_from 21.x\n", 3, "dotted numbers");
    expect_malformed("feature.txt", "rule a\nvendor 1\ndisable feature=fp32\n", 3, "unknown feature");
    expect_malformed("attr.txt", "rule a\nvendor 1\ndisable op=Conv attr=group~1\n", 3, "comparison");
    expect_malformed("range.txt", "rule a\nvendor 1\ndevice 0x20-0x10\n", 3, "range");
    expect_malformed("norule.txt", "\nvendor 1\n", 2, "expected 'rule NAME'");
    expect_malformed("ref.txt", "rule a\nvendor 1\nref example.org\n", 3, "must be a URL");
    /* a missing file is the caller's mistake, named, not a quiet CPU fallback */
    onyx_status *st = NULL;
    onyx_session *s = session("/nonexistent/denylist.txt", 1, &st);
    CHECK(s == NULL && st && onyx_status_code(st) == ONYX_INVALID_ARGUMENT &&
          strstr(onyx_status_message(st), "/nonexistent/denylist.txt") != NULL);
    onyx_status_free(st);
    /* the embedded file parses (the build would not catch a typo in it) */
    ox_vk_denylist l;
    ox_error err = {0};
    CHECK(ox_vk_denylist_load(NULL, &l, &err) == 0);
    CHECK(l.n >= 4 && strcmp(l.source, "embedded") == 0);
    for (int i = 0; i < l.n; i++) CHECK(l.rules[i].reason[0] && strncmp(l.rules[i].ref, "https://", 8) == 0);
    ox_vk_denylist_free(&l);
}

/* onyx_env_list_devices: lavapipe's record, faked values, errors. */
static void listing(void) {
    onyx_device_list *l = NULL;
    CHECK_OK(onyx_env_list_devices(env, "vulkan", &l));
    CHECK(onyx_device_list_count(l) >= 1);
    CHECK(strcmp(onyx_device_property_find(l, 0, "usable"), "yes") == 0);
    CHECK(onyx_device_property_find(l, 0, "faked") == NULL);
    CHECK(onyx_device_property_find(l, 0, "memory_heap.0") != NULL);
    const char *k, *v;
    CHECK_OK(onyx_device_property(l, 0, 0, &k, &v));
    CHECK(strcmp(k, "provider") == 0 && strcmp(v, "vulkan") == 0);
    CHECK_FAILS(onyx_device_property(l, 0, 100000, &k, &v), ONYX_INVALID_ARGUMENT, "out of range");
    onyx_device_list_free(l);
    setenv("ONYX_VK_FAKE_DEVICE", "0x1002:0x67df:AMD open-source driver:2023.1.0:2", 1);
    CHECK_OK(onyx_env_list_devices(env, "vulkan", &l));
    CHECK(strcmp(onyx_device_property_find(l, 0, "vendor_id"), "0x1002 (AMD)") == 0);
    CHECK(strncmp(onyx_device_property_find(l, 0, "faked"), "yes", 3) == 0);
    CHECK(strcmp(onyx_device_property_find(l, 0, "usable"), "no") == 0);
    CHECK(strstr(onyx_device_property_find(l, 0, "unusable_reason"), "amd-polaris-amdvlk") != NULL);
    onyx_device_list_free(l);
    setenv("ONYX_VK_FAKE_DEVICE", "0x1002", 1);
    CHECK_FAILS(onyx_env_list_devices(env, "vulkan", &l), ONYX_INVALID_ARGUMENT, "ONYX_VK_FAKE_DEVICE");
    unsetenv("ONYX_VK_FAKE_DEVICE");
    CHECK_FAILS(onyx_env_list_devices(env, "tpu", &l), ONYX_INVALID_ARGUMENT, "unknown execution provider 'tpu'");
    CHECK(l == NULL);
    CHECK_OK(onyx_env_list_devices(env, "cpu", &l));
    CHECK(onyx_device_list_count(l) == 1);
    CHECK(atoi(onyx_device_property_find(l, 0, "cores_online")) >= 1);
    CHECK(strstr(onyx_device_property_find(l, 0, "isa_levels"), "portable") != NULL);
    onyx_device_list_free(l);
}

int main(void) {
    CHECK_OK(onyx_env_create(&env));
    unsetenv("ONYX_VK_DENYLIST");
    unsetenv("ONYX_VK_FAKE_DEVICE");
    unsetenv("ONYX_VK_DISABLE");
    ox_error err = {0};
    keep_driver_loaded = ox_vulkan_ep_create(NULL, &err);
    if (!keep_driver_loaded) {
        const char *allow = getenv("ONYX_VK_ALLOW_NO_DEVICE");
        onyx_env_free(env);
        if (allow && strcmp(allow, "1") == 0) {
            printf("SKIPPED: no usable Vulkan device (%s)\n", err.msg);
            return SKIPPED;
        }
        fprintf(stderr, "FAILED: no usable Vulkan device: %s\n", err.msg);
        return 1;
    }
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    build_model();
    op_rules();
    ranges();
    feature_dispatch_device();
    gcn_rules();
    malformed();
    listing();
    free(model);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    onyx_env_free(env);
    if (check_failures) fprintf(stderr, "%d check(s) failed\n", check_failures);
    else printf("vulkan denylist: all checks passed\n");
    return check_failures ? 1 : 0;
}
