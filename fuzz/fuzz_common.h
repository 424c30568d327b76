/* Shared by the libFuzzer targets of fuzz/: a quiet environment made once
 * per process, a seeded generator, and the small session options every
 * target uses. A target calls fuzz_fail() when a property the library
 * promises is broken (a status without a message, a round trip that
 * differs); libFuzzer then keeps the input as a crash. */
#ifndef ONYX_FUZZ_COMMON_H
#define ONYX_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "onyx.h"

/* libFuzzer's entry points, declared for -Wmissing-prototypes builds */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

#define fuzz_fail(...) \
    do { \
        fprintf(stderr, "fuzz property broken at %s:%d: ", __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__); \
        fputc('\n', stderr); \
        abort(); \
    } while (0)

/* Every failure must come back as a status with a code and a message. */
static inline void fuzz_check_status(onyx_status *st, const char *what) {
    if (!st) return;
    const char *msg = onyx_status_message(st);
    if (onyx_status_code(st) == ONYX_OK || !msg || !msg[0])
        fuzz_fail("%s failed with code %d and no message", what, (int)onyx_status_code(st));
    onyx_status_free(st);
}

/* One environment per fuzzing process: making it is not what is tested,
 * and a fresh one per input would only slow the fuzzer down. */
static inline onyx_env *fuzz_env(void) {
    static onyx_env *env;
    if (!env) {
        if (onyx_env_create(&env) != NULL) fuzz_fail("onyx_env_create failed");
        onyx_status_free(onyx_env_set_log_level(env, ONYX_LOG_ERROR));
    }
    return env;
}

/* Single-threaded sessions: libFuzzer runs one input at a time, and
 * intra-op threads would only blur the stacks. */
/* Well below scripts/fuzz.sh's -malloc_limit_mb of 2048, and small
 * enough that merely writing that much memory (a huge but legal output)
 * takes well under the 10 s timeout in a sanitizer build. */
#define FUZZ_MEMORY_LIMIT ((size_t)256 << 20)
/* Well below scripts/fuzz.sh's -timeout of 10 s: a model may loop for
 * ever on purpose, and a deployment that runs strangers' models sets a
 * time limit; an input that still reaches libFuzzer's timeout shows a
 * place that does not honour the limit. */
#define FUZZ_TIME_LIMIT_MS 2000

static inline onyx_session_options *fuzz_options(onyx_opt_level level) {
    onyx_session_options *o = NULL;
    if (onyx_session_options_create(&o) != NULL) fuzz_fail("session options");
    onyx_status_free(onyx_session_options_set_threads(o, 1));
    onyx_status_free(onyx_session_options_set_optimization_level(o, level));
    onyx_status_free(onyx_session_options_set_log_level(o, ONYX_LOG_ERROR));
    /* A model may legitimately ask for more memory than the fuzzer's
     * -malloc_limit_mb; a deployment that loads strangers' models sets a
     * limit, and onyx must then refuse cleanly, which is what is tested. */
    onyx_status_free(onyx_session_options_set_memory_limit(o, FUZZ_MEMORY_LIMIT));
    return o;
}

/* FNV-1a: a seed that depends on every byte of the input, so a crash
 * input replays the same shapes and values. */
static inline uint64_t fuzz_hash(const uint8_t *data, size_t size) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 1099511628211ull;
    return h;
}

/* xorshift64*: small and deterministic. */
static inline uint64_t fuzz_next(uint64_t *state) {
    uint64_t x = *state ? *state : 0x9E3779B97F4A7C15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 2685821657736338717ull;
}

#endif
