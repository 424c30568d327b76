/* Session helpers the optimizer and kernel tests share: a session over a
 * serialized model at an optimization level, and a run on one float32
 * input named "x". Failures are checks (check.h) of the including test. */
#ifndef ONYX_TESTS_SESSION_UTIL_H
#define ONYX_TESTS_SESSION_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "onyx.h"

/* A session over buf at `level` with `threads` (0: the default count);
 * NULL, with a failed check, when it cannot be made. */
static inline onyx_session *tu_session(onyx_env *env, const uint8_t *buf, size_t len, onyx_opt_level level,
                                       int threads) {
    onyx_session_options *o = NULL;
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_optimization_level(o, level));
    if (threads > 0) CHECK_OK(onyx_session_options_set_threads(o, threads));
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &s));
    onyx_session_options_free(o);
    return s;
}

/* Runs s on the float32 input "x" of the given shape; outs[0..n) get the
 * outputs `names` (NULL where the run failed, with a failed check). */
static inline void tu_run_x(onyx_session *s, const float *x, const int64_t *dims, int rank,
                            const char *const *names, onyx_tensor **outs, size_t n) {
    size_t count = 1;
    for (int d = 0; d < rank; d++) count *= (size_t)dims[d];
    onyx_tensor *tx = NULL;
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, dims, rank, (void *)x, count * sizeof *x, &tx));
    const char *in[] = {"x"};
    for (size_t i = 0; i < n; i++) outs[i] = NULL;
    CHECK_OK(onyx_session_run(s, in, (const onyx_tensor *const *)&tx, 1, names, outs, n));
    onyx_tensor_free(tx);
}

/* How many of s's nodes run operator op of domain ("" the default). */
static inline size_t tu_count_op(const onyx_session *s, const char *domain, const char *op) {
    size_t n = 0;
    for (size_t i = 0; i < onyx_session_node_count(s); i++)
        n += strcmp(onyx_session_node_op_type(s, i), op) == 0 && strcmp(onyx_session_node_domain(s, i), domain) == 0;
    return n;
}

#endif
