/* The intra-op thread pool: every item of a parallel range runs exactly
 * once at any pool size, and the pool's scratch buffer is lent to one
 * holder at a time (a second holder gets memory of its own), kept
 * between loans, grown to the largest request and 64-byte aligned. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "core/threadpool.h"

typedef struct counts {
    atomic_int hits[1000];
} counts;

static void count_range(void *arg, int64_t b, int64_t e) {
    counts *c = arg;
    for (int64_t i = b; i < e; i++) atomic_fetch_add(&c->hits[i], 1);
}

static void test_ranges(int threads) {
    ox_threadpool *pool = ox_threadpool_create(threads);
    CHECK(pool != NULL);
    if (!pool) return;
    counts *c = calloc(1, sizeof *c);
    CHECK(c != NULL);
    if (c) {
        ox_parallel_for(pool, 1000, 7, count_range, c);
        int bad = 0;
        for (int i = 0; i < 1000; i++) bad += atomic_load(&c->hits[i]) != 1;
        CHECK(bad == 0);
        free(c);
    }
    ox_threadpool_free(pool);
}

static void test_scratch(void) {
    ox_threadpool *pool = ox_threadpool_create(2);
    CHECK(pool != NULL);
    if (!pool) return;
    int lent = 0, lent2 = 0;
    char *a = ox_threadpool_scratch(pool, 1000, &lent);
    CHECK(a != NULL && lent == 1 && (uintptr_t)a % 64 == 0);
    /* held: a second request gets its own memory */
    char *b = ox_threadpool_scratch(pool, 10, &lent2);
    CHECK(b != NULL && lent2 == 0 && b != a && (uintptr_t)b % 64 == 0);
    if (a) memset(a, 1, 1000);
    if (b) memset(b, 2, 10);
    ox_threadpool_scratch_done(pool, b, lent2);
    ox_threadpool_scratch_done(pool, a, lent);
    /* free again: the same buffer, its bytes kept */
    char *c = ox_threadpool_scratch(pool, 500, &lent);
    CHECK(c == a && lent == 1 && c && c[999] == 1);
    ox_threadpool_scratch_done(pool, c, lent);
    /* a larger request grows it */
    char *d = ox_threadpool_scratch(pool, 1 << 20, &lent);
    CHECK(d != NULL && lent == 1 && (uintptr_t)d % 64 == 0);
    if (d) memset(d, 3, 1 << 20);
    ox_threadpool_scratch_done(pool, d, lent);
    /* nothing asked, nothing given; no pool: plain memory */
    CHECK(ox_threadpool_scratch(pool, 0, &lent) == NULL && lent == 0);
    char *e = ox_threadpool_scratch(NULL, 100, &lent);
    CHECK(e != NULL && lent == 0);
    ox_threadpool_scratch_done(NULL, e, lent);
    ox_threadpool_free(pool);
}

int main(void) {
    for (int t = 1; t <= 4; t++) test_ranges(t);
    test_scratch();
    return check_failures ? 1 : 0;
}
