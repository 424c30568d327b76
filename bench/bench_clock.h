/* What the C micro-benchmarks share: a monotonic clock in nanoseconds
 * and a comparison of doubles for qsort (to take medians). */
#ifndef ONYX_BENCH_CLOCK_H
#define ONYX_BENCH_CLOCK_H

#include <time.h>

static inline double bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#endif
