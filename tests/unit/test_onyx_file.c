/* Optimized model files (src/format/onyx_file.c, onyx_compile_model): a
 * compiled model runs to the same bits as its source from a path and from
 * a buffer (copied, borrowed); its header records the source's SHA-256;
 * an ONNX twin with external data reloads to the same bits; and every kind
 * of bad file (truncated at any point, a flipped byte in each section,
 * another format version, a wrong checksum, extra bytes) is refused with
 * a clear error, never run. SHA-256 and the section checksum are checked
 * against known values. The artefact cache: a second session reuses the
 * first one's packed weights; a corrupted byte, another onyx version or
 * another CPU record make it pack again and rewrite the file; outputs are
 * the same bits throughout; an empty cache folder turns caching off.
 * Two processes running the same optimized file share its weight pages:
 * each maps them from the page cache and copies nothing. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "core/hash.h"
#include "core/le.h"
#include "format/onyx_file.h"
#include "model_builder.h"

#define CH 4
#define HW 6

static char dir[256];

static void make_model(const char *path) {
    mb_model *m = mb_conv_chain(CH, HW);
    CHECK(m && mb_save(m, path) == 0);
    mb_free(m);
}

static uint8_t *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    uint8_t *buf = aligned_alloc(64, ((size_t)n + 63) / 64 * 64);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* The fixed input every run here uses. */
static onyx_tensor *make_input(void) {
    onyx_tensor *x = NULL;
    int64_t dims[4] = {1, CH, HW, HW};
    CHECK_OK(onyx_tensor_create(ONYX_FLOAT32, dims, 4, &x));
    float *xd = x ? onyx_tensor_data(x) : NULL;
    for (int i = 0; xd && i < CH * HW * HW; i++) xd[i] = (float)((i * 37) % 17) * 0.1f - 0.8f;
    return x;
}

/* Runs the model on a fixed input, from path or from buf (borrowed or
 * copied), with cache folder `cache` (NULL: the default); NULL when the
 * session fails (*why says why). from_cache, when given, tells whether the
 * convolution took its packed weights from the artefact cache. */
static onyx_tensor *run_with(onyx_env *env, const char *path, const void *buf, size_t len, int borrow,
                             const char *cache, int *from_cache, onyx_status **why) {
    onyx_session_options *o = NULL;
    onyx_session *s = NULL;
    onyx_tensor *x = NULL, *y = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_threads(o, 1));
    CHECK_OK(onyx_session_options_set_borrow_buffer(o, borrow));
    if (cache) CHECK_OK(onyx_session_options_set_cache_dir(o, cache));
    *why = path ? onyx_session_create(env, path, o, &s) : onyx_session_create_from_buffer(env, buf, len, o, &s);
    onyx_session_options_free(o);
    if (*why) return NULL;
    if (from_cache) *from_cache = -1;
    for (size_t i = 0; from_cache && i < onyx_session_node_count(s); i++) {
        if (!strstr(onyx_session_node_op_type(s, i), "Conv")) continue;
        char what[200];
        onyx_session_node_kernel(s, i, what, sizeof what);
        *from_cache = strstr(what, "artefact cache") != NULL;
    }
    x = make_input();
    const char *in = "x", *out = "y";
    *why = onyx_session_run(s, &in, (const onyx_tensor *const *)&x, 1, &out, &y, 1);
    onyx_tensor_free(x);
    onyx_session_free(s);
    return y;
}

static onyx_tensor *run_once(onyx_env *env, const char *path, const void *buf, size_t len, int borrow,
                             onyx_status **why) {
    return run_with(env, path, buf, len, borrow, NULL, NULL, why);
}

static int same(const onyx_tensor *a, const onyx_tensor *b) {
    return a && b && onyx_tensor_nbytes(a) == onyx_tensor_nbytes(b) &&
           memcmp(onyx_tensor_data((onyx_tensor *)a), onyx_tensor_data((onyx_tensor *)b),
                  onyx_tensor_nbytes(a)) == 0;
}

/* bytes[0, len) must be refused with a message containing `says`. */
static void expect_refused(onyx_env *env, const uint8_t *bytes, size_t len, const char *says,
                           const char *what) {
    onyx_status *st = NULL;
    onyx_tensor *y = run_once(env, NULL, bytes, len, 0, &st);
    CHECK(y == NULL);
    onyx_tensor_free(y);
    CHECK(st != NULL);
    if (!st) return;
    CHECK(onyx_status_code(st) == ONYX_INVALID_MODEL);
    if (!strstr(onyx_status_message(st), says)) {
        fprintf(stderr, "%s: '%s' does not say '%s'\n", what, onyx_status_message(st), says);
        CHECK(0);
    }
    onyx_status_free(st);
}


static void test_hashes(void) {
    uint8_t d[32];
    char hex[65];
    ox_sha256_digest("abc", 3, d);
    ox_sha256_hex(d, hex);
    CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0);
    ox_sha256_digest("", 0, d);
    ox_sha256_hex(d, hex);
    CHECK(strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0);
    /* two blocks, and the update path split at every offset */
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    for (size_t cut = 0; cut <= strlen(m); cut++) {
        ox_sha256 h;
        ox_sha256_init(&h);
        ox_sha256_update(&h, m, cut);
        ox_sha256_update(&h, m + cut, strlen(m) - cut);
        ox_sha256_final(&h, d);
        ox_sha256_hex(d, hex);
        CHECK(strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0);
    }
    /* every single-bit flip of a buffer changes its checksum */
    uint8_t buf[100];
    for (int i = 0; i < 100; i++) buf[i] = (uint8_t)(i * 7);
    uint64_t sum = ox_checksum64(buf, sizeof buf);
    for (int i = 0; i < 100 * 8; i++) {
        buf[i / 8] ^= (uint8_t)(1u << (i % 8));
        CHECK(ox_checksum64(buf, sizeof buf) != sum);
        buf[i / 8] ^= (uint8_t)(1u << (i % 8));
    }
    CHECK(ox_checksum64(buf, 99) != ox_checksum64(buf, 100));
}

static void test_round_trip(onyx_env *env, const char *src, const char *compiled, const char *twin) {
    onyx_status *st = NULL;
    onyx_tensor *want = run_once(env, src, NULL, 0, 0, &st);
    CHECK_OK(st);
    CHECK_OK(onyx_compile_model(env, src, compiled, ONYX_OPT_ALL, ONYX_FORMAT_ONYX, 0));
    /* 64 bytes: the 16-element bias stays inline, the others go out */
    CHECK_OK(onyx_compile_model(env, src, twin, ONYX_OPT_ALL, ONYX_FORMAT_ONNX, 65));
    char data[512];
    snprintf(data, sizeof data, "%s.data", twin);
    CHECK(access(data, R_OK) == 0);
    onyx_tensor *y = run_once(env, compiled, NULL, 0, 0, &st);
    CHECK_OK(st);
    CHECK(same(y, want));
    onyx_tensor_free(y);
    y = run_once(env, twin, NULL, 0, 0, &st);
    CHECK_OK(st);
    CHECK(same(y, want));
    onyx_tensor_free(y);
    size_t len = 0;
    uint8_t *bytes = read_all(compiled, &len);
    CHECK(bytes != NULL);
    for (int borrow = 0; bytes && borrow < 2; borrow++) {
        y = run_once(env, NULL, bytes, len, borrow, &st);
        CHECK_OK(st);
        CHECK(same(y, want));
        onyx_tensor_free(y);
    }
    /* a buffer that is not 64-byte aligned is copied even when borrowing
     * is allowed: wiping it after creation changes nothing */
    uint8_t *shifted = bytes ? malloc(len + 1) : NULL;
    if (shifted) {
        memcpy(shifted + 1, bytes, len);
        onyx_session_options *o = NULL;
        onyx_session *s = NULL;
        CHECK_OK(onyx_session_options_create(&o));
        CHECK_OK(onyx_session_options_set_borrow_buffer(o, 1));
        CHECK_OK(onyx_session_create_from_buffer(env, shifted + 1, len, o, &s));
        onyx_session_options_free(o);
        memset(shifted, 0, len + 1);
        free(shifted);
        onyx_tensor *x = make_input();
        const char *in = "x", *out = "y";
        y = NULL;
        if (s) CHECK_OK(onyx_session_run(s, &in, (const onyx_tensor *const *)&x, 1, &out, &y, 1));
        CHECK(same(y, want));
        onyx_tensor_free(x);
        onyx_tensor_free(y);
        onyx_session_free(s);
    }
    /* the header names the source */
    size_t src_len = 0;
    uint8_t *src_bytes = read_all(src, &src_len), digest[32];
    ox_onyx_view v;
    ox_error err = {0};
    CHECK(bytes && ox_onyx_parse(bytes, len, 0, &v, &err) == 0);
    if (src_bytes && bytes) {
        ox_sha256_digest(src_bytes, src_len, digest);
        CHECK(memcmp(v.meta.source_sha256, digest, 32) == 0);
        CHECK(v.meta.opt_level == ONYX_OPT_ALL);
        CHECK(strcmp(v.meta.onyx_version, ONYX_VERSION_STRING) == 0);
        CHECK((uintptr_t)v.weights % 64 == 0);
    }
    /* an optimized file is not a source */
    st = onyx_compile_model(env, compiled, twin, ONYX_OPT_ALL, ONYX_FORMAT_ONNX, 0);
    CHECK(st && onyx_status_code(st) == ONYX_INVALID_ARGUMENT);
    onyx_status_free(st);
    st = onyx_compile_model(env, src, compiled, ONYX_OPT_ALL, (onyx_model_format)7, 0);
    CHECK(st && onyx_status_code(st) == ONYX_INVALID_ARGUMENT);
    onyx_status_free(st);
    free(src_bytes);
    free(bytes);
    onyx_tensor_free(want);
}

static void test_bad_files(onyx_env *env, const char *compiled) {
    size_t len = 0;
    uint8_t *good = read_all(compiled, &len);
    CHECK(good != NULL);
    if (!good) return;
    uint8_t *bad = aligned_alloc(64, (len + 64) / 64 * 64 + 64);
    /* truncated anywhere: inside the header, the weights, the graph */
    size_t cuts[] = {8, 100, 255, 256, 4096, 4100, len / 2, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        memcpy(bad, good, cuts[i]);
        expect_refused(env, bad, cuts[i], "truncated", "truncated");
    }
    /* extra bytes */
    memcpy(bad, good, len);
    bad[len] = 0;
    expect_refused(env, bad, len + 1, "extra bytes", "extended");
    uint64_t wo = ox_get_le64(good + 88), go = ox_get_le64(good + 104);
    /* a flipped byte in each part */
    struct {
        size_t at;
        const char *says;
    } flips[] = {{20, "header is corrupted"},
                 {60, "header is corrupted"},
                 {wo + 3, "weight section is corrupted"},
                 {go + 5, "graph section is corrupted"},
                 {len - 1, "graph section is corrupted"}};
    for (size_t i = 0; i < sizeof flips / sizeof *flips; i++) {
        memcpy(bad, good, len);
        bad[flips[i].at] ^= 0x40;
        expect_refused(env, bad, len, flips[i].says, "flipped");
    }
    /* another format version (with a consistent header checksum) */
    memcpy(bad, good, len);
    bad[8] = 2;
    ox_put_le64(bad + 248, ox_checksum64(bad, 248));
    expect_refused(env, bad, len, "format version 2", "version");
    /* a wrong stored checksum */
    memcpy(bad, good, len);
    ox_put_le64(bad + 128, ox_get_le64(bad + 128) + 1);
    ox_put_le64(bad + 248, ox_checksum64(bad, 248));
    expect_refused(env, bad, len, "weight section is corrupted", "checksum");
    /* sections past the end, recorded consistently */
    memcpy(bad, good, len);
    ox_put_le64(bad + 112, len);
    ox_put_le64(bad + 248, ox_checksum64(bad, 248));
    expect_refused(env, bad, len, "do not fit", "section");
    /* the same refusals from a path */
    char path[300];
    snprintf(path, sizeof path, "%s/bad.onyx", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(good, 1, len / 2, f) == len / 2);
    if (f) fclose(f);
    onyx_status *st = NULL;
    onyx_tensor *y = run_once(env, path, NULL, 0, 0, &st);
    CHECK(!y && st && onyx_status_code(st) == ONYX_INVALID_MODEL);
    CHECK(st && strstr(onyx_status_message(st), "truncated"));
    onyx_status_free(st);
    free(bad);
    free(good);
}

/* ---- the artefact cache (prepacked convolution weights) ---- */

/* A run of the optimized file with cache folder `cache`; *from_cache as
 * in run_with. */
static onyx_tensor *cached_run(onyx_env *env, const char *compiled, const char *cache, int *from_cache) {
    onyx_status *st = NULL;
    onyx_tensor *y = run_with(env, compiled, NULL, 0, 0, cache, from_cache, &st);
    CHECK_OK(st);
    return y;
}

/* An artefact file under cache/artefacts other than `other` (NULL: any);
 * "" when there is none. */
static void find_pack(const char *cache, const char *other, char *out, size_t n) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls %s/artefacts/*.pack 2>/dev/null", cache);
    out[0] = 0;
    FILE *p = popen(cmd, "r");
    char line[512];
    while (p && fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = 0;
        if (!other || strcmp(line, other) != 0) snprintf(out, n, "%s", line);
    }
    if (p) pclose(p);
}

static void edit_file(const char *path, size_t at, const char *bytes, size_t len, int reseal_header) {
    size_t n = 0;
    uint8_t *b = read_all(path, &n);
    CHECK(b && at + len <= n);
    if (!b || at + len > n) return;
    memcpy(b + at, bytes, len);
    if (reseal_header) ox_put_le64(b + 248, ox_checksum64(b, 248));
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(b, 1, n, f) == n);
    if (f) fclose(f);
    free(b);
}

static void test_artefact_cache(onyx_env *env, const char *src, const char *compiled) {
    char cache[300], pack[600], other[600];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    onyx_status *st = NULL;
    onyx_tensor *want = run_once(env, src, NULL, 0, 0, &st);
    CHECK_OK(st);
    int hit = 0;
    /* first session: packs and saves */
    onyx_tensor *y = cached_run(env, compiled, cache, &hit);
    CHECK(hit == 0 && same(y, want));
    onyx_tensor_free(y);
    find_pack(cache, NULL, pack, sizeof pack);
    CHECK(pack[0] != 0);
    /* next: reuses, same bits */
    y = cached_run(env, compiled, cache, &hit);
    CHECK(hit == 1 && same(y, want));
    onyx_tensor_free(y);
    /* a corrupted byte in the packed weights: ignored, rebuilt */
    size_t n = 0;
    uint8_t *b = read_all(pack, &n);
    CHECK(b && n > 4096);
    edit_file(pack, n - 5, "\x7f", 1, 0);
    free(b);
    y = cached_run(env, compiled, cache, &hit);
    CHECK(hit == 0 && same(y, want));
    onyx_tensor_free(y);
    y = cached_run(env, compiled, cache, &hit);
    CHECK(hit == 1 && same(y, want));
    onyx_tensor_free(y);
    /* written by another onyx version (a consistent header): ignored,
     * rebuilt. The key is at bytes 16..143 and ends "onyx-VERSION". */
    b = read_all(pack, &n);
    char key[129] = {0};
    if (b) memcpy(key, b + 16, 128);
    free(b);
    char *v = strstr(key, "onyx-");
    CHECK(v != NULL);
    if (v) {
        edit_file(pack, 16 + (size_t)(v - key) + 5, "9", 1, 1);
        y = cached_run(env, compiled, cache, &hit);
        CHECK(hit == 0 && same(y, want));
        onyx_tensor_free(y);
        y = cached_run(env, compiled, cache, &hit);
        CHECK(hit == 1 && same(y, want));
        onyx_tensor_free(y);
    }
    /* another CPU record (the portable kernels): its own file, made anew */
    setenv("ONYX_CPU_ISA", "portable", 1);
    /* the portable kernels round differently: their own reference */
    onyx_tensor *want_portable = run_once(env, src, NULL, 0, 0, &st);
    CHECK_OK(st);
    y = cached_run(env, compiled, cache, &hit);
    CHECK(same(y, want_portable));
    onyx_tensor_free(y);
    onyx_tensor_free(want_portable);
    find_pack(cache, pack, other, sizeof other);
    unsetenv("ONYX_CPU_ISA");
    /* (on a machine whose best is portable the record does not change) */
    if (other[0]) {
        CHECK(hit == 0);
        unlink(other);
    }
    /* a cache folder that cannot be made (a file stands there): the
     * session runs as without a cache, nothing is written */
    char blocked[400];
    snprintf(blocked, sizeof blocked, "%s/blocked", dir);
    FILE *bf = fopen(blocked, "w");
    CHECK(bf != NULL);
    if (bf) fclose(bf);
    y = cached_run(env, compiled, blocked, &hit);
    CHECK(hit == 0 && same(y, want));
    onyx_tensor_free(y);
    y = cached_run(env, compiled, blocked, &hit);
    CHECK(hit == 0 && same(y, want));
    onyx_tensor_free(y);
    unlink(blocked);
    /* caching off: nothing read or written */
    unlink(pack);
    y = cached_run(env, compiled, "", &hit);
    CHECK(hit == 0 && same(y, want));
    onyx_tensor_free(y);
    find_pack(cache, NULL, other, sizeof other);
    CHECK(other[0] == 0);
    rmdir(cache); /* artefacts/ inside it is removed by the caller */
    onyx_tensor_free(want);
}

/* Resident bytes of the mappings of `path` in process pid's smaps:
 * shared (Shared_Clean + Shared_Dirty: pages other processes map too;
 * a file just written is still dirty in the page cache) and private
 * (Private_Clean + Private_Dirty + Anonymous: pages this one alone holds,
 * copies among them). */
static int mapped_bytes(pid_t pid, const char *path, long long *shared, long long *private) {
    char name[64], line[512];
    snprintf(name, sizeof name, "/proc/%d/smaps", (int)pid);
    FILE *f = fopen(name, "r");
    if (!f) return -1;
    int in = 0;
    *shared = *private = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8];
        int at = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perms, &at) == 3 && at > 0) {
            char *nl = strchr(line + at, '\n');
            if (nl) *nl = '\0';
            in = strcmp(line + at, path) == 0;
            continue;
        }
        long long kb;
        if (!in) continue;
        if (sscanf(line, "Shared_Clean: %lld kB", &kb) == 1 ||
            sscanf(line, "Shared_Dirty: %lld kB", &kb) == 1)
            *shared += kb * 1024;
        else if (sscanf(line, "Private_Clean: %lld kB", &kb) == 1 ||
                 sscanf(line, "Private_Dirty: %lld kB", &kb) == 1 ||
                 sscanf(line, "Anonymous: %lld kB", &kb) == 1)
            *private += kb * 1024;
    }
    fclose(f);
    return 0;
}

/* A session that adds a 1 MiB constant to its input, kept alive: the
 * Add reads the constant where the file maps it. */
static onyx_session *add_session(onyx_env *env, const char *path, int64_t n) {
    onyx_session_options *o = NULL;
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_threads(o, 1));
    CHECK_OK(onyx_session_options_set_cache_dir(o, ""));
    CHECK_OK(onyx_session_create(env, path, o, &s));
    onyx_session_options_free(o);
    onyx_tensor *x = NULL, *y = NULL;
    CHECK_OK(onyx_tensor_create(ONYX_FLOAT32, &n, 1, &x));
    if (!s || !x) return s;
    memset(onyx_tensor_data(x), 0, (size_t)n * sizeof(float));
    const char *in = "x", *out = "y";
    CHECK_OK(onyx_session_run(s, &in, (const onyx_tensor *const *)&x, 1, &out, &y, 1));
    /* y = x + w with x zero: w itself, read from the file */
    const float *yd = y ? onyx_tensor_data(y) : NULL;
    CHECK(yd && yd[0] == 0.5f && yd[n - 1] == (float)(n - 1) * 0.25f + 0.5f);
    onyx_tensor_free(x);
    onyx_tensor_free(y);
    return s;
}

/* Two processes, each with a live session on the same .onyx, hold its
 * weight pages shared: the 1 MiB constant is resident as shared pages in
 * both, and neither holds a private page of the mapping (no copy, no
 * write). The child signals once its session has run, then waits for the
 * parent to look. */
static void test_shared_pages(onyx_env *env) {
    enum { N = 1 << 18 };
    char src[300], compiled[300], real[4096];
    snprintf(src, sizeof src, "%s/add.onnx", dir);
    snprintf(compiled, sizeof compiled, "%s/add.onyx", dir);
    mb_model *m = mb_new(17);
    int64_t dims[1] = {N};
    float *w = malloc(N * sizeof(float));
    CHECK(m && w);
    if (!m || !w) return;
    for (int i = 0; i < N; i++) w[i] = (float)i * 0.25f + 0.5f;
    mb_input(m, "x", ONYX_FLOAT32, dims, 1);
    mb_output(m, "y", ONYX_FLOAT32, dims, 1);
    mb_init_float(m, "w", dims, 1, w);
    mb_node(m, "Add", "x,w", "y");
    CHECK(mb_save(m, src) == 0);
    mb_free(m);
    free(w);
    CHECK_OK(onyx_compile_model(env, src, compiled, ONYX_OPT_ALL, ONYX_FORMAT_ONYX, 0));
    CHECK(realpath(compiled, real) != NULL);
    int ready[2], done[2];
    CHECK(pipe(ready) == 0 && pipe(done) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        onyx_session *s = add_session(env, compiled, N);
        char c = s && !check_failures ? 'y' : 'n';
        if (write(ready[1], &c, 1) != 1 || read(done[0], &c, 1) != 1) _exit(2);
        _exit(0); /* the session lives until the parent has looked */
    }
    char c = 0;
    CHECK(read(ready[0], &c, 1) == 1 && c == 'y');
    onyx_session *s = add_session(env, compiled, N);
    long long shared = -1, priv = -1, child_shared = -1, child_priv = -1;
    CHECK(mapped_bytes(getpid(), real, &shared, &priv) == 0);
    CHECK(mapped_bytes(child, real, &child_shared, &child_priv) == 0);
    printf("shared pages: this process %lld shared / %lld private bytes, the other %lld / %lld\n",
           shared, priv, child_shared, child_priv);
    CHECK(shared >= (long long)N * 4 && child_shared >= (long long)N * 4);
    CHECK(priv == 0 && child_priv == 0);
    CHECK(write(done[1], "x", 1) == 1);
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    onyx_session_free(s);
    close(ready[0]);
    close(ready[1]);
    close(done[0]);
    close(done[1]);
    unlink(src);
    unlink(compiled);
}

int main(void) {
    snprintf(dir, sizeof dir, "%s/onyx_file_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    CHECK(mkdtemp(dir) != NULL);
    char src[300], compiled[300], twin[300], data[320], bad[300];
    snprintf(src, sizeof src, "%s/model.onnx", dir);
    snprintf(compiled, sizeof compiled, "%s/model.onyx", dir);
    snprintf(twin, sizeof twin, "%s/twin.onnx", dir);
    snprintf(data, sizeof data, "%s/twin.onnx.data", dir);
    snprintf(bad, sizeof bad, "%s/bad.onyx", dir);
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    CHECK_OK(onyx_env_set_log_level(env, ONYX_LOG_ERROR));
    test_hashes();
    make_model(src);
    test_round_trip(env, src, compiled, twin);
    test_bad_files(env, compiled);
    test_artefact_cache(env, src, compiled);
    test_shared_pages(env);
    onyx_env_free(env);
    unlink(src);
    unlink(compiled);
    unlink(twin);
    unlink(data);
    unlink(bad);
    char sub[400];
    snprintf(sub, sizeof sub, "%s/cache/artefacts", dir);
    rmdir(sub);
    snprintf(sub, sizeof sub, "%s/cache", dir);
    rmdir(sub);
    rmdir(dir);
    printf("%s (%d failures)\n", check_failures ? "FAILED" : "ok", check_failures);
    return check_failures ? 1 : 0;
}
