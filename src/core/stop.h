/* A stop request that long loops can poll without knowing what asked for
 * it: kernels and the shared helpers they call (gemm) check it between
 * blocks of work so a cancelled or timed-out run ends promptly even inside
 * one long kernel call. The owner (the executor, per node) supplies poll;
 * it is thread-safe, cheap (an atomic load and a coarse clock read) and,
 * once it has returned nonzero, keeps returning nonzero. A NULL stop never
 * stops. A loop that stops early leaves its output unspecified: the owner
 * discards it and fails the run. */
#ifndef ONYX_CORE_STOP_H
#define ONYX_CORE_STOP_H

typedef struct ox_stop ox_stop;
struct ox_stop {
    int (*poll)(const ox_stop *self);
};

static inline int ox_stop_requested(const ox_stop *s) { return s && s->poll(s); }

#endif
