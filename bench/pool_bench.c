/* The intra-op thread pool's dispatch cost: ox_parallel_for over a range
 * of tiny work items (a few hundred nanoseconds in all), timed against
 * the same work done inline, for each thread count given (default 1 2).
 * Prints the median and minimum per call over 20000 calls, and the ratio
 * to inline work: the cost a small operator pays for being parallel.
 *
 * usage: pool_bench [THREADS ...] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_clock.h"

#include "core/threadpool.h"

#define CALLS 20000
#define ITEMS 256

static void work(void *arg, int64_t b, int64_t e) {
    float *v = arg;
    for (int64_t i = b; i < e; i++) v[i] = v[i] * 0.5f + 1.0f;
}

/* median and minimum nanoseconds per call */
static void time_calls(ox_threadpool *pool, float *v, double *median, double *min) {
    static double t[CALLS];
    for (int i = 0; i < CALLS; i++) {
        double t0 = bench_now_ns();
        if (pool)
            ox_parallel_for(pool, ITEMS, 16, work, v);
        else
            work(v, 0, ITEMS);
        t[i] = bench_now_ns() - t0;
    }
    qsort(t, CALLS, sizeof t[0], bench_cmp_double);
    *median = t[CALLS / 2];
    *min = t[0];
}

int main(int argc, char **argv) {
    static float v[ITEMS];
    double inline_med, inline_min;
    time_calls(NULL, v, &inline_med, &inline_min);
    printf("inline: median %.0f ns, min %.0f ns per call (%d items)\n", inline_med, inline_min, ITEMS);
    int defaults[] = {1, 2};
    int n = argc > 1 ? argc - 1 : 2;
    for (int i = 0; i < n; i++) {
        int threads = argc > 1 ? atoi(argv[i + 1]) : defaults[i];
        ox_threadpool *pool = ox_threadpool_create(threads);
        if (!pool) {
            fprintf(stderr, "pool_bench: cannot make a pool of %d threads\n", threads);
            return 1;
        }
        double med, min;
        time_calls(pool, v, &med, &min);
        printf("threads %d: median %.0f ns, min %.0f ns per call; %.1fx the inline median\n", threads,
               med, min, med / inline_med);
        ox_threadpool_free(pool);
    }
    return 0;
}
