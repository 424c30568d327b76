/* Corrupted models: thousands of deterministic mutations of a real model
 * (flipped bytes, truncations, splices, forged varints) must each load
 * or fail with a status; a crash, a hang or a sanitizer report is a bug.
 * Mutants that still load are run once on a valid input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MUTANTS 3000

static uint64_t next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static uint8_t *read_all(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)len);
    if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *n = (size_t)len;
    return buf;
}

/* One of a few mutation kinds, chosen and placed by the generator. */
static size_t mutate(const uint8_t *src, size_t n, uint8_t *dst, uint64_t *rng) {
    memcpy(dst, src, n);
    size_t pos = (size_t)(next(rng) % n);
    switch (next(rng) % 5) {
    case 0: dst[pos] ^= (uint8_t)(1u << (next(rng) % 8)); return n;
    case 1: dst[pos] = (uint8_t)next(rng); return n;
    case 2: return pos; /* truncation */
    case 3: { /* a forged huge varint, e.g. a length or a dimension */
        size_t k = 0;
        while (k < 9 && pos + k < n) dst[pos + k++] = 0xff;
        if (pos + k < n) dst[pos + k] = 0x01;
        return n;
    }
    default: { /* copy a run of bytes from elsewhere */
        size_t from = (size_t)(next(rng) % n), len = 1 + (size_t)(next(rng) % 16);
        for (size_t k = 0; k < len && pos + k < n && from + k < n; k++) dst[pos + k] = src[from + k];
        return n;
    }
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: test_corrupt_models MODEL INPUT\n");
        return 2;
    }
    size_t n;
    uint8_t *model = read_all(argv[1], &n);
    CHECK(model != NULL && n > 0);
    if (!model) CHECK_DONE();
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    onyx_tensor *x = NULL;
    CHECK_OK(onyx_tensor_load(argv[2], &x));
    uint8_t *buf = malloc(n);
    uint64_t rng = 0x2545f4914f6cdd1dULL;
    int loaded = 0, rejected = 0;
    for (int i = 0; i < MUTANTS; i++) {
        size_t len = mutate(model, n, buf, &rng);
        onyx_session *s = NULL;
        onyx_status *st = onyx_session_create_from_buffer(env, buf, len, NULL, &s);
        if (st) {
            /* a failure must say something and leave no session behind */
            CHECK(s == NULL);
            CHECK(onyx_status_message(st)[0] != '\0');
            CHECK(onyx_status_code(st) != ONYX_OK);
            onyx_status_free(st);
            rejected++;
            continue;
        }
        loaded++;
        onyx_value_info info;
        if (onyx_session_input_count(s) == 1 && onyx_session_output_count(s) >= 1 &&
            !onyx_session_input_info(s, 0, &info)) {
            onyx_value_info oinfo;
            onyx_status *os = onyx_session_output_info(s, 0, &oinfo);
            onyx_status_free(os);
            onyx_tensor *y = NULL;
            const char *in = info.name, *out = oinfo.name;
            onyx_status *rs = onyx_session_run(s, &in, (const onyx_tensor *const *)&x, 1, &out, &y, 1);
            onyx_status_free(rs); /* a mutated model may reject the input: fine */
            onyx_tensor_free(y);
        }
        onyx_session_free(s);
    }
    printf("%d mutants: %d loaded, %d rejected with a status\n", MUTANTS, loaded, rejected);
    CHECK(rejected > 0);
    free(buf);
    free(model);
    onyx_tensor_free(x);
    onyx_env_free(env);
    CHECK_DONE();
}
