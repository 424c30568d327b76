/* Run control: what lets a caller stop a run in progress (a cancel flag
 * any thread may set, a time limit), and the checks the executor and
 * long-running kernels make. */
#ifndef ONYX_RUNTIME_RUN_CONTROL_H
#define ONYX_RUNTIME_RUN_CONTROL_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/error.h"
#include "onyx.h"

struct onyx_run_options {
    atomic_int cancelled;            /* stays set until reset */
    atomic_uint_fast64_t time_limit_ms; /* 0: none */
    onyx_capture_fn capture;            /* NULL: none (runtime/observe.c) */
    void *capture_user;
    uint64_t *node_ns; /* NULL: no node timing */
    size_t node_ns_count;
};

/* One run's view of its options, fixed when the run starts. */
typedef struct ox_run_control {
    const onyx_run_options *opts; /* NULL: the run cannot be stopped */
    uint64_t limit_ms;
    int64_t start_ns;
    int64_t deadline_ns; /* 0: no time limit */
    /* the options' capture hook; shadow runs (verify/shadow.c) put their
     * own here for the runs they bisect */
    onyx_capture_fn capture;
    void *capture_user;
    /* the options' node timing (NULL: off): nanoseconds added per node */
    uint64_t *node_ns;
    size_t node_ns_count;
    /* the run uses host memory and CPU kernels only, whatever the plan
     * placed on a device (runtime/recover.c: a run rescued from a device
     * fault, or every run once the device cannot be remade) */
    int host_only;
} ox_run_control;

void ox_run_control_start(ox_run_control *c, const onyx_run_options *opts);

/* A fine monotonic clock in nanoseconds (node timing). */
int64_t ox_run_clock_ns(void);

/* ONYX_OK while the run may go on, else ONYX_CANCELLED or ONYX_TIMEOUT.
 * Cheap enough for every node: one relaxed atomic load, and a coarse
 * monotonic clock read (no system call) only when a time limit is set. */
onyx_code ox_run_control_poll(const ox_run_control *c);

/* Fills err for a stop `why` (from ox_run_control_poll) at `where`, a
 * description such as "node 'loop' (Loop), iteration 12"; returns -1. */
int ox_run_control_fail(const ox_run_control *c, onyx_code why, const char *where, ox_error *err);

/* 1 for the codes of a stopped run: their messages already say where the
 * run stopped, so callers on the way out do not prefix them. */
static inline int ox_is_stop_code(onyx_code code) {
    return code == ONYX_CANCELLED || code == ONYX_TIMEOUT;
}

#endif
