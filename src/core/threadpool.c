#include "core/threadpool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct job {
    ox_range_fn fn;
    void *arg;
    int64_t n;
    int64_t chunk;
    atomic_int_fast64_t next;
} job;

struct ox_threadpool {
    int size; /* workers + caller */
    int n_workers;
    pthread_t *workers;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_cond_t done;
    pthread_mutex_t busy; /* held by the run that owns the workers */
    job *current;
    uint64_t generation;
    int active; /* workers still inside the current job */
    int stop;
};

int ox_online_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static void drain(job *j) {
    for (;;) {
        int64_t b = atomic_fetch_add(&j->next, j->chunk);
        if (b >= j->n) return;
        int64_t e = b + j->chunk < j->n ? b + j->chunk : j->n;
        j->fn(j->arg, b, e);
    }
}

static void *worker_main(void *p) {
    ox_threadpool *pool = p;
    uint64_t seen = 0;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (!pool->stop && pool->generation == seen) pthread_cond_wait(&pool->wake, &pool->lock);
        if (pool->stop) break;
        seen = pool->generation;
        job *j = pool->current;
        pthread_mutex_unlock(&pool->lock);
        drain(j);
        pthread_mutex_lock(&pool->lock);
        if (--pool->active == 0) pthread_cond_signal(&pool->done);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

ox_threadpool *ox_threadpool_create(int threads) {
    ox_threadpool *pool = calloc(1, sizeof *pool);
    if (!pool) return NULL;
    if (threads < 1) threads = 1;
    pool->size = threads;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_mutex_init(&pool->busy, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->done, NULL);
    if (threads > 1) {
        pool->workers = calloc((size_t)threads - 1, sizeof *pool->workers);
        if (!pool->workers) {
            ox_threadpool_free(pool);
            return NULL;
        }
        for (int i = 0; i < threads - 1; i++) {
            if (pthread_create(&pool->workers[i], NULL, worker_main, pool) != 0) break;
            pool->n_workers++;
        }
    }
    return pool;
}

void ox_threadpool_free(ox_threadpool *pool) {
    if (!pool) return;
    pthread_mutex_lock(&pool->lock);
    pool->stop = 1;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < pool->n_workers; i++) pthread_join(pool->workers[i], NULL);
    free(pool->workers);
    pthread_mutex_destroy(&pool->lock);
    pthread_mutex_destroy(&pool->busy);
    pthread_cond_destroy(&pool->wake);
    pthread_cond_destroy(&pool->done);
    free(pool);
}

int ox_threadpool_size(const ox_threadpool *pool) { return pool ? pool->size : 1; }

void ox_parallel_for(ox_threadpool *pool, int64_t n, int64_t grain, ox_range_fn fn, void *arg) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    if (!pool || pool->n_workers == 0 || n <= grain || pthread_mutex_trylock(&pool->busy) != 0) {
        fn(arg, 0, n);
        return;
    }
    int parts = pool->n_workers + 1;
    int64_t chunk = (n + parts * 4 - 1) / (parts * 4);
    if (chunk < grain) chunk = grain;
    job j = {.fn = fn, .arg = arg, .n = n, .chunk = chunk};
    atomic_init(&j.next, 0);
    pthread_mutex_lock(&pool->lock);
    pool->current = &j;
    pool->active = pool->n_workers;
    pool->generation++;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    drain(&j);
    pthread_mutex_lock(&pool->lock);
    while (pool->active > 0) pthread_cond_wait(&pool->done, &pool->lock);
    pool->current = NULL;
    pthread_mutex_unlock(&pool->lock);
    pthread_mutex_unlock(&pool->busy);
}
