/* The intra-op thread pool: every item of a parallel range runs exactly
 * once at any pool size (ranges shorter than the threads, of one chunk,
 * uneven shares; loop after loop on one pool), and the pool's scratch buffer is lent to one
 * holder at a time (a second holder gets memory of its own), kept
 * between loans, grown to the largest request and 64-byte aligned; task
 * blocks come back as the smallest kept block large enough, at most 16
 * kept (the smallest dropped first), 64-byte aligned, and tasks on every
 * thread taking and giving back blocks each get memory of their own. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/threadpool.h"

typedef struct counts {
    atomic_int hits[1000];
} counts;

static void count_range(void *arg, int64_t b, int64_t e) {
    counts *c = arg;
    for (int64_t i = b; i < e; i++) atomic_fetch_add(&c->hits[i], 1);
}

/* Every item exactly once, over sizes and grains that leave the shares
 * empty, uneven or of one chunk, loop after loop on one pool (each loop
 * deals its shares anew) */
static void test_ranges(int threads) {
    ox_threadpool *pool = ox_threadpool_create(threads);
    CHECK(pool != NULL);
    if (!pool) return;
    counts *c = calloc(1, sizeof *c);
    CHECK(c != NULL);
    static const int64_t sizes[] = {1, 2, 3, 5, 7, 64, 999, 1000};
    static const int64_t grains[] = {1, 7, 300};
    for (size_t si = 0; c && si < sizeof sizes / sizeof sizes[0]; si++)
        for (size_t gi = 0; gi < sizeof grains / sizeof grains[0]; gi++) {
            for (int i = 0; i < 1000; i++) atomic_store(&c->hits[i], 0);
            ox_parallel_for(pool, sizes[si], grains[gi], count_range, c);
            int bad = 0;
            for (int i = 0; i < 1000; i++) bad += atomic_load(&c->hits[i]) != (i < sizes[si]);
            if (bad) fprintf(stderr, "  %d threads, n %lld, grain %lld: %d items wrong\n", threads,
                             (long long)sizes[si], (long long)grains[gi], bad);
            CHECK(bad == 0);
        }
    free(c);
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

static void test_blocks(void) {
    ox_threadpool *pool = ox_threadpool_create(2);
    CHECK(pool != NULL);
    if (!pool) return;
    /* given back, the same block again for a request it covers */
    char *a = ox_threadpool_block(pool, 1000), *b = ox_threadpool_block(pool, 3000);
    CHECK(a && b && a != b && (uintptr_t)a % 64 == 0 && (uintptr_t)b % 64 == 0);
    if (a) memset(a, 1, 1000);
    if (b) memset(b, 2, 3000);
    ox_threadpool_block_done(pool, b);
    ox_threadpool_block_done(pool, a);
    char *c = ox_threadpool_block(pool, 900); /* the smaller one that fits: a */
    CHECK(c == a && c && c[999] == 1);
    char *d = ox_threadpool_block(pool, 2000); /* only b fits */
    CHECK(d == b);
    char *e = ox_threadpool_block(pool, 5000); /* none kept: a new one */
    CHECK(e && e != a && e != b);
    ox_threadpool_block_done(pool, c);
    ox_threadpool_block_done(pool, d);
    ox_threadpool_block_done(pool, e);
    /* seventeen of 1 to 17 KiB (the first three are a, b and e again, the
     * smallest kept that fit) given back: sixteen are kept and the
     * smallest, k[0] (a, 1 KiB), is dropped, so a 1 KiB request gets the
     * smallest of the rest, k[1] (b, 3000 bytes) */
    char *k[17];
    for (int i = 0; i < 17; i++) k[i] = ox_threadpool_block(pool, (size_t)(i + 1) << 10);
    for (int i = 0; i < 17; i++) ox_threadpool_block_done(pool, k[i]);
    char *f = ox_threadpool_block(pool, 1 << 10);
    CHECK(f == k[1] && k[0] == a && k[1] == b);
    ox_threadpool_block_done(pool, f);
    /* no pool: plain memory */
    char *g = ox_threadpool_block(NULL, 100);
    CHECK(g && (uintptr_t)g % 64 == 0);
    ox_threadpool_block_done(NULL, g);
    ox_threadpool_free(pool);
}

typedef struct block_job {
    ox_threadpool *pool;
    atomic_int bad;
} block_job;

/* each item fills a block with its own byte and reads it back */
static void block_range(void *arg, int64_t b, int64_t e) {
    block_job *j = arg;
    for (int64_t i = b; i < e; i++) {
        size_t n = (size_t)(1 + i % 7) * 4096;
        unsigned char *p = ox_threadpool_block(j->pool, n);
        if (!p) {
            atomic_fetch_add(&j->bad, 1);
            continue;
        }
        memset(p, (int)(i & 0xff), n);
        for (size_t k = 0; k < n; k += 511)
            if (p[k] != (unsigned char)(i & 0xff)) atomic_fetch_add(&j->bad, 1);
        ox_threadpool_block_done(j->pool, p);
    }
}

static void test_blocks_threads(int threads) {
    block_job j = {.pool = ox_threadpool_create(threads)};
    CHECK(j.pool != NULL);
    if (!j.pool) return;
    atomic_init(&j.bad, 0);
    for (int r = 0; r < 20; r++) ox_parallel_for(j.pool, 200, 1, block_range, &j);
    CHECK(atomic_load(&j.bad) == 0);
    ox_threadpool_free(j.pool);
}

int main(void) {
    for (int t = 1; t <= 5; t++) test_ranges(t);
    test_scratch();
    test_blocks();
    for (int t = 1; t <= 4; t++) test_blocks_threads(t);
    return check_failures ? 1 : 0;
}
