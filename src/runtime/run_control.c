#include "runtime/run_control.h"

#include <string.h>
#include <time.h>

#include "core/checked.h"

/* The coarse clock is read from the vDSO without a system call, at the
 * cost of a resolution of a few milliseconds, which a limit in
 * milliseconds tolerates. */
#ifdef CLOCK_MONOTONIC_COARSE
#define OX_RUN_CLOCK CLOCK_MONOTONIC_COARSE
#else
#define OX_RUN_CLOCK CLOCK_MONOTONIC
#endif

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(OX_RUN_CLOCK, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t ox_run_clock_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void ox_run_control_start(ox_run_control *c, const onyx_run_options *opts) {
    memset(c, 0, sizeof *c);
    c->opts = opts;
    c->limit_ms = opts ? atomic_load_explicit(&opts->time_limit_ms, memory_order_relaxed) : 0;
    c->start_ns = now_ns();
    c->deadline_ns = 0;
    c->capture = opts ? opts->capture : NULL;
    c->capture_user = opts ? opts->capture_user : NULL;
    c->node_ns = opts ? opts->node_ns : NULL;
    c->node_ns_count = opts ? opts->node_ns_count : 0;
    int64_t span, deadline;
    /* a limit too large to add to the clock is no limit at all */
    if (c->limit_ms && c->limit_ms <= (uint64_t)INT64_MAX &&
        ox_mul_i64((int64_t)c->limit_ms, 1000000, &span) &&
        ox_add_i64(c->start_ns, span, &deadline))
        c->deadline_ns = deadline;
}

onyx_code ox_run_control_poll(const ox_run_control *c) {
    if (!c || !c->opts) return ONYX_OK;
    if (atomic_load_explicit(&c->opts->cancelled, memory_order_relaxed)) return ONYX_CANCELLED;
    if (c->deadline_ns && now_ns() >= c->deadline_ns) return ONYX_TIMEOUT;
    return ONYX_OK;
}

int ox_run_control_fail(const ox_run_control *c, onyx_code why, const char *where, ox_error *err) {
    if (why == ONYX_CANCELLED) return ox_fail(err, ONYX_CANCELLED, "run cancelled at %s", where);
    long long elapsed_ms = (long long)((now_ns() - c->start_ns) / 1000000);
    return ox_fail(err, ONYX_TIMEOUT, "run exceeded its time limit of %llu ms at %s (%lld ms elapsed)",
                   (unsigned long long)c->limit_ms, where, elapsed_ms);
}
