/* The pool's workers wait for work by spinning on the job generation for
 * a while (WORKER_SPIN_NS), then sleep on a condition variable; the caller waits for
 * the workers by spinning (yielding after a while). A wake-up through the
 * condition variable costs tens of microseconds on a busy machine, many
 * times a small operator's own time, and consecutive operators of one run
 * follow each other within microseconds, so a spinning worker is usually
 * there when the next one starts. The spin is bounded so idle sessions
 * cost nothing. */
#include "core/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield")
#else
#define cpu_relax() ((void)0)
#endif

/* How long a worker polls for the next job before it sleeps, in
 * nanoseconds. Between two parallel operators of a run there are often
 * stretches of small operators run inline (shape work, a Transpose, a
 * TopK) of a few hundred microseconds; a worker that went to sleep in
 * one costs the next parallel operator a wake-up of tens of
 * microseconds (more in a virtual machine), which on DETR at 2 threads
 * made the run slower than at 1 (4.0 against 3.7 ms). Spinning up to
 * 0.5 ms brought it to 2.6 ms. An idle session's workers still sleep
 * after that long. */
#define WORKER_SPIN_NS 500000
/* Polls between two reads of the clock while spinning. */
#define SPIN_CLOCK_EVERY 64
/* Polls of the caller for the workers' end before it starts yielding. */
#define CALLER_SPINS 4096
/* Task blocks the pool keeps for the next tasks (ox_threadpool_block),
 * and the bytes they may hold together. */
#define POOL_BLOCKS 16
#define POOL_BLOCK_BYTES ((size_t)64 << 20)
/* bytes before a block's memory recording its size (one cache line, so
 * the memory stays 64-byte aligned) */
#define BLOCK_HEADER 64

/* One participant's share of a job, in chunks: it takes them from the
 * front, [next, end); others take what is left once theirs is done. On
 * its own cache line: the owner's counter is touched on every chunk. */
typedef struct share {
    _Alignas(64) atomic_int_fast64_t next;
    int64_t end;
} share;

typedef struct job {
    ox_range_fn fn;
    void *arg;
    int64_t n;
    int64_t chunk;
    int parts;
    share *shares; /* per participant: the caller's is 0, worker i's i + 1 */
} job;

struct ox_threadpool {
    int size; /* workers + caller */
    int n_workers;
    pthread_t *workers;
    struct worker_arg *worker_args;
    share *shares; /* the running job's, one per participant */
    pthread_mutex_t lock; /* guards the sleep/wake hand-over only */
    pthread_cond_t wake;
    atomic_flag busy;            /* set by the run that owns the workers */
    _Atomic(job *) current;
    atomic_uint_fast64_t generation; /* bumped once per job */
    atomic_int inside;               /* workers that may be touching a job */
    atomic_int sleepers;             /* workers waiting on `wake` */
    atomic_int stop;
    /* ox_threadpool_scratch's buffer, lent to one operator at a time */
    atomic_flag scratch_busy;
    void *scratch;
    size_t scratch_bytes;
    /* ox_threadpool_block's kept blocks (their headers), under block_lock */
    pthread_mutex_t block_lock;
    void *blocks[POOL_BLOCKS];
    int n_blocks;
    size_t block_bytes;
};

int ox_online_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Runs the chunks of share q that are still untaken. */
static void drain_share(job *j, share *q) {
    for (;;) {
        const int64_t c = atomic_fetch_add(&q->next, 1);
        if (c >= q->end) return;
        const int64_t b = c * j->chunk, e = b + j->chunk < j->n ? b + j->chunk : j->n;
        j->fn(j->arg, b, e);
    }
}

/* Participant p runs its own share, then helps with the others'. The
 * shares are contiguous and the same for every job of the same size, so
 * consecutive operators over the same layout hand each thread the part
 * of the data it wrote itself. That matters where the two cores do not
 * share a cache (this virtual machine has phases in which two-thread runs
 * take near twice their usual time): MobileNetV3-small's two-thread runs
 * took 3.80-3.95 ms there with one counter for all threads, 3.08-3.61
 * with shares. A thread that falls behind (descheduled, or on a slower
 * core) still gets help. */
static void drain(job *j, int p) {
    for (int k = 0; k < j->parts; k++) drain_share(j, &j->shares[(p + k) % j->parts]);
}

/* What a worker thread needs: its pool and its participant number. */
struct worker_arg {
    ox_threadpool *pool;
    int index;
};

/* Waits until the generation moves past `seen` (or the pool stops);
 * returns the new generation. The sleeper count and the generation are
 * sequentially consistent, so a dispatcher that saw no sleeper bumped the
 * generation before this worker could read it, and one that saw a
 * sleeper broadcasts under the lock the sleeper holds until it waits. */
static int64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t wait_for_job(ox_threadpool *pool, uint64_t seen) {
    int64_t until = mono_ns() + WORKER_SPIN_NS;
    for (int i = 1;; i++) {
        uint64_t g = atomic_load(&pool->generation);
        if (g != seen || atomic_load(&pool->stop)) return g;
        cpu_relax();
        if (i % SPIN_CLOCK_EVERY == 0 && mono_ns() >= until) break;
    }
    pthread_mutex_lock(&pool->lock);
    atomic_fetch_add(&pool->sleepers, 1);
    uint64_t g;
    while ((g = atomic_load(&pool->generation)) == seen && !atomic_load(&pool->stop))
        pthread_cond_wait(&pool->wake, &pool->lock);
    atomic_fetch_sub(&pool->sleepers, 1);
    pthread_mutex_unlock(&pool->lock);
    return g;
}

static void *worker_main(void *p) {
    const struct worker_arg *wa = p;
    ox_threadpool *pool = wa->pool;
    const int index = wa->index;
    uint64_t seen = 0;
    for (;;) {
        seen = wait_for_job(pool, seen);
        if (atomic_load(&pool->stop)) break;
        /* counted before reading `current`: a caller that has already
         * withdrawn its job (and so may free it) makes this read NULL */
        atomic_fetch_add(&pool->inside, 1);
        job *j = atomic_load(&pool->current);
        if (j) drain(j, index < j->parts ? index : 0);
        atomic_fetch_sub(&pool->inside, 1);
    }
    return NULL;
}

static void wake_sleepers(ox_threadpool *pool) {
    if (atomic_load(&pool->sleepers) == 0) return;
    pthread_mutex_lock(&pool->lock);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
}

ox_threadpool *ox_threadpool_create(int threads) {
    ox_threadpool *pool = calloc(1, sizeof *pool);
    if (!pool) return NULL;
    if (threads < 1) threads = 1;
    pool->size = threads;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_mutex_init(&pool->block_lock, NULL);
    pthread_cond_init(&pool->wake, NULL);
    atomic_flag_clear(&pool->busy);
    atomic_flag_clear(&pool->scratch_busy);
    atomic_init(&pool->current, NULL);
    atomic_init(&pool->generation, 0);
    atomic_init(&pool->inside, 0);
    atomic_init(&pool->sleepers, 0);
    atomic_init(&pool->stop, 0);
    if (threads > 1) {
        pool->workers = calloc((size_t)threads - 1, sizeof *pool->workers);
        pool->worker_args = calloc((size_t)threads - 1, sizeof *pool->worker_args);
        pool->shares = aligned_alloc(64, sizeof(share) * (size_t)threads);
        if (!pool->workers || !pool->worker_args || !pool->shares) {
            ox_threadpool_free(pool);
            return NULL;
        }
        for (int i = 0; i < threads - 1; i++) {
            pool->worker_args[i] = (struct worker_arg){pool, i + 1};
            if (pthread_create(&pool->workers[i], NULL, worker_main, &pool->worker_args[i]) != 0) break;
            pool->n_workers++;
        }
    }
    return pool;
}

void ox_threadpool_free(ox_threadpool *pool) {
    if (!pool) return;
    atomic_store(&pool->stop, 1);
    pthread_mutex_lock(&pool->lock);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < pool->n_workers; i++) pthread_join(pool->workers[i], NULL);
    free(pool->workers);
    free(pool->worker_args);
    free(pool->shares);
    free(pool->scratch);
    for (int i = 0; i < pool->n_blocks; i++) free(pool->blocks[i]);
    pthread_mutex_destroy(&pool->block_lock);
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->wake);
    free(pool);
}

int ox_threadpool_size(const ox_threadpool *pool) { return pool ? pool->size : 1; }

/* bytes rounded up to whole 64-byte lines (what aligned_alloc takes) */
static size_t lines(size_t bytes) { return (bytes + 63) / 64 * 64; }

void *ox_threadpool_scratch(ox_threadpool *pool, size_t bytes, int *lent) {
    *lent = 0;
    if (bytes == 0 || bytes > SIZE_MAX - 64) return NULL;
    if (!pool || atomic_flag_test_and_set(&pool->scratch_busy)) return aligned_alloc(64, lines(bytes));
    if (pool->scratch_bytes < bytes) {
        free(pool->scratch);
        pool->scratch = aligned_alloc(64, lines(bytes));
        pool->scratch_bytes = pool->scratch ? bytes : 0;
        if (!pool->scratch) {
            atomic_flag_clear(&pool->scratch_busy);
            return NULL;
        }
    }
    *lent = 1;
    return pool->scratch;
}

void ox_threadpool_scratch_done(ox_threadpool *pool, void *p, int lent) {
    if (lent) atomic_flag_clear(&pool->scratch_busy);
    else free(p);
}

void ox_parallel_for(ox_threadpool *pool, int64_t n, int64_t grain, ox_range_fn fn, void *arg) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    if (!pool || pool->n_workers == 0 || n <= grain || atomic_flag_test_and_set(&pool->busy)) {
        fn(arg, 0, n);
        return;
    }
    int parts = pool->n_workers + 1;
    int64_t chunk = (n + parts * 4 - 1) / (parts * 4);
    if (chunk < grain) chunk = grain;
    /* the chunks dealt out in contiguous shares, in participant order */
    const int64_t chunks = (n + chunk - 1) / chunk;
    for (int p = 0; p < parts; p++) {
        atomic_init(&pool->shares[p].next, chunks * p / parts);
        pool->shares[p].end = chunks * (p + 1) / parts;
    }
    job j = {.fn = fn, .arg = arg, .n = n, .chunk = chunk, .parts = parts, .shares = pool->shares};
    atomic_store(&pool->current, &j);
    atomic_fetch_add(&pool->generation, 1);
    wake_sleepers(pool);
    drain(&j, 0);
    /* Withdraw the job, then wait for the workers that got hold of it
     * (they may be inside their last chunk; j lives on this stack). A
     * worker that was not scheduled in time finds no job and is not
     * waited for: every item was done when drain returned here. */
    atomic_store(&pool->current, NULL);
    for (int i = 0; atomic_load(&pool->inside) > 0; i++) {
        if (i < CALLER_SPINS)
            cpu_relax();
        else
            sched_yield();
    }
    atomic_flag_clear(&pool->busy);
}

/* a block's usable bytes, recorded in its header */
static size_t block_size(const void *head) {
    size_t n;
    memcpy(&n, head, sizeof n);
    return n;
}

void *ox_threadpool_block(ox_threadpool *pool, size_t bytes) {
    if (bytes > SIZE_MAX - BLOCK_HEADER - 64) return NULL;
    bytes = lines(bytes ? bytes : 1);
    if (pool) {
        pthread_mutex_lock(&pool->block_lock);
        int best = -1;
        for (int i = 0; i < pool->n_blocks; i++) {
            const size_t n = block_size(pool->blocks[i]);
            if (n >= bytes && (best < 0 || n < block_size(pool->blocks[best]))) best = i;
        }
        void *head = NULL;
        if (best >= 0) {
            head = pool->blocks[best];
            pool->block_bytes -= block_size(head);
            pool->blocks[best] = pool->blocks[--pool->n_blocks];
        }
        pthread_mutex_unlock(&pool->block_lock);
        if (head) return (char *)head + BLOCK_HEADER;
    }
    char *head = aligned_alloc(64, BLOCK_HEADER + bytes);
    if (!head) return NULL;
    memcpy(head, &bytes, sizeof bytes);
    return head + BLOCK_HEADER;
}

void ox_threadpool_block_done(ox_threadpool *pool, void *p) {
    if (!p) return;
    char *head = (char *)p - BLOCK_HEADER;
    const size_t n = block_size(head);
    if (!pool || n > POOL_BLOCK_BYTES) {
        free(head);
        return;
    }
    pthread_mutex_lock(&pool->block_lock);
    /* room: the smallest kept blocks go, while they are smaller than this one */
    while (pool->n_blocks > 0 && (pool->n_blocks == POOL_BLOCKS || pool->block_bytes + n > POOL_BLOCK_BYTES)) {
        int small = 0;
        for (int i = 1; i < pool->n_blocks; i++)
            if (block_size(pool->blocks[i]) < block_size(pool->blocks[small])) small = i;
        if (block_size(pool->blocks[small]) >= n) break;
        pool->block_bytes -= block_size(pool->blocks[small]);
        free(pool->blocks[small]);
        pool->blocks[small] = pool->blocks[--pool->n_blocks];
    }
    if (pool->n_blocks < POOL_BLOCKS && pool->block_bytes + n <= POOL_BLOCK_BYTES) {
        pool->blocks[pool->n_blocks++] = head;
        pool->block_bytes += n;
        head = NULL;
    }
    pthread_mutex_unlock(&pool->block_lock);
    free(head);
}
