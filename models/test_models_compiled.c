/* test_models --compiled DIR: each case compiled (onyx_compile_model) into
 * an optimized file and an ONNX twin with external data; the .onnx model
 * runs first and must match ONNX Runtime's references, then the optimized
 * file (mapped from its path, copied from a buffer, borrowed from an
 * aligned buffer) and the twin, each on the same providers, must give its
 * outputs bit for bit and hold as many weights, of as many bytes: no
 * initializer is lost on the way. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_models.h"

/* A session over a path, or over a buffer (borrowed or copied). */
static onyx_session *open_session(onyx_env *env, const char *providers, const char *path,
                                  const void *buf, size_t size, int borrow, const char *what) {
    onyx_session_options *o = NULL;
    onyx_session *s = NULL;
    onyx_status *st = case_options(providers, -1, &o);
    if (!st && borrow) st = onyx_session_options_set_borrow_buffer(o, 1);
    if (!st) st = path ? onyx_session_create(env, path, o, &s) : onyx_session_create_from_buffer(env, buf, size, o, &s);
    onyx_session_options_free(o);
    if (st) fail_status(what, st);
    return s;
}

static int same_bits(onyx_tensor *a, onyx_tensor *b) {
    if (onyx_tensor_kind(a) != ONYX_KIND_TENSOR || onyx_tensor_kind(b) != ONYX_KIND_TENSOR ||
        onyx_tensor_dtype(a) != onyx_tensor_dtype(b) || onyx_tensor_rank(a) != onyx_tensor_rank(b) ||
        onyx_tensor_nbytes(a) != onyx_tensor_nbytes(b))
        return 0;
    for (int i = 0; i < onyx_tensor_rank(a); i++)
        if (onyx_tensor_dims(a)[i] != onyx_tensor_dims(b)[i]) return 0;
    return memcmp(onyx_tensor_data(a), onyx_tensor_data(b), onyx_tensor_nbytes(a)) == 0;
}

/* Runs s and compares every output with want, bit for bit, and its
 * weights with the original session's. */
static int matches(onyx_session *s, const test_case *c, onyx_tensor **want, const onyx_session *orig,
                   const char *what, double create_s) {
    onyx_tensor **outs = calloc(c->n_outputs + 1, sizeof *outs);
    int rc = outs && run_inputs(s, c, outs, what) == 0 ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < c->n_outputs; i++)
        if (!same_bits(outs[i], want[i])) {
            printf("  FAIL: %s: output '%s' differs from the .onnx model's\n", what, c->outputs[i].name);
            rc = -1;
        }
    int64_t n = onyx_session_parameter_count(s), bytes = onyx_session_parameter_bytes(s);
    int64_t n0 = onyx_session_parameter_count(orig), bytes0 = onyx_session_parameter_bytes(orig);
    if (rc == 0 && (n != n0 || bytes != bytes0)) {
        printf("  FAIL: %s: %lld weights of %lld bytes, the .onnx session has %lld of %lld\n", what,
               (long long)n, (long long)bytes, (long long)n0, (long long)bytes0);
        rc = -1;
    }
    if (rc == 0)
        printf("  %s: outputs identical, %lld weights (create %.1f ms)\n", what, (long long)n,
               create_s * 1e3);
    for (size_t i = 0; outs && i < c->n_outputs; i++) onyx_tensor_free(outs[i]);
    free(outs);
    return rc;
}

/* The file's bytes in a buffer aligned to 64 (borrowable) or not. */
static void *read_file(const char *path, size_t *size, int aligned) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    void *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        rewind(f);
        /* one byte in: an unaligned copy the session must not borrow */
        uint8_t *raw = n > 0 ? (aligned ? aligned_alloc(64, ((size_t)n + 63) / 64 * 64) : malloc((size_t)n + 1)) : NULL;
        uint8_t *at = raw && !aligned ? raw + 1 : raw;
        if (raw && fread(at, 1, (size_t)n, f) == (size_t)n) {
            *size = (size_t)n;
            buf = raw;
        } else {
            free(raw);
        }
    }
    fclose(f);
    return buf;
}

static int variant(onyx_env *env, const test_case *c, const char *providers, const char *path,
                   int buffer, int borrow, onyx_tensor **want, const onyx_session *orig,
                   const char *what) {
    size_t size = 0;
    void *buf = buffer ? read_file(path, &size, borrow) : NULL;
    if (buffer && !buf) {
        printf("  FAIL: cannot read %s\n", path);
        return -1;
    }
    const uint8_t *at = buf && !borrow ? (const uint8_t *)buf + 1 : buf;
    double t0 = now_s();
    onyx_session *s = open_session(env, providers, buffer ? NULL : path, at, size, borrow, what);
    double t1 = now_s();
    int rc = s ? matches(s, c, want, orig, what, t1 - t0) : -1;
    onyx_session_free(s);
    free(buf);
    return rc;
}

int compiled_case(onyx_env *env, const test_case *c, const char *providers, const char *dir) {
    printf("== %s compiled (%s)\n", c->name, c->model);
    char onyx_path[1024], twin_path[1024];
    snprintf(onyx_path, sizeof onyx_path, "%s/%s.onyx", dir, c->name);
    snprintf(twin_path, sizeof twin_path, "%s/%s.onnx", dir, c->name);
    onyx_tensor **want = calloc(c->n_outputs + 1, sizeof *want);
    int rc = -1;
    mkdir(dir, 0755); /* may exist; a failure shows when compiling */
    double t0 = now_s();
    onyx_session *orig = want ? open_session(env, providers, c->model, NULL, 0, 0, c->model) : NULL;
    double t1 = now_s();
    if (!orig || run_inputs(orig, c, want, "the .onnx model") != 0) goto out;
    printf("  .onnx: create %.1f ms\n", (t1 - t0) * 1e3);
    rc = 0;
    for (size_t i = 0; i < c->n_outputs; i++) {
        printf("  %s ", c->outputs[i].name);
        if (compare_output(&c->outputs[i], want[i]) != 0) rc = -1;
    }
    onyx_status *st = onyx_compile_model(env, c->model, onyx_path, ONYX_OPT_ALL, ONYX_FORMAT_ONYX, 0);
    /* every weight of 1 KiB or more in the twin's external-data file */
    if (!st) st = onyx_compile_model(env, c->model, twin_path, ONYX_OPT_ALL, ONYX_FORMAT_ONNX, 1024);
    if (st) {
        rc = fail_status("onyx_compile_model", st);
        goto out;
    }
    if (variant(env, c, providers, onyx_path, 0, 0, want, orig, ".onyx mapped") != 0) rc = -1;
    if (variant(env, c, providers, onyx_path, 1, 0, want, orig, ".onyx copied") != 0) rc = -1;
    if (variant(env, c, providers, onyx_path, 1, 1, want, orig, ".onyx borrowed") != 0) rc = -1;
    if (variant(env, c, providers, twin_path, 0, 0, want, orig, "ONNX twin") != 0) rc = -1;
out:
    for (size_t i = 0; want && i < c->n_outputs; i++) onyx_tensor_free(want[i]);
    free(want);
    if (!providers || !keep_driver_loaded(orig)) onyx_session_free(orig);
    printf("%s %s (compiled)\n", rc == 0 ? "PASS" : "FAIL", c->name);
    return rc;
}
