/* Intra-op thread pool, one per session. ox_parallel_for splits [0, n)
 * into chunks of at least `grain` items over the pool's workers and the
 * calling thread: each thread starts on its own contiguous share (the
 * caller the first), the same for every loop of the same size, then
 * helps with what is left of the others'. When another run of the same session holds the workers,
 * the caller computes the whole range itself: concurrent runs never wait
 * on each other and never deadlock. */
#ifndef ONYX_CORE_THREADPOOL_H
#define ONYX_CORE_THREADPOOL_H

#include <stddef.h>
#include <stdint.h>

typedef struct ox_threadpool ox_threadpool;

typedef void (*ox_range_fn)(void *arg, int64_t begin, int64_t end);

/* threads = total parallelism including the caller; <= 1 makes a pool
 * that runs everything inline. NULL on failure. */
ox_threadpool *ox_threadpool_create(int threads);
void ox_threadpool_free(ox_threadpool *pool);
int ox_threadpool_size(const ox_threadpool *pool);
void ox_parallel_for(ox_threadpool *pool, int64_t n, int64_t grain, ox_range_fn fn, void *arg);

/* Working memory of at least `bytes` bytes, 64-byte aligned, for one
 * operator: the pool's own buffer when no other operator holds it (*lent
 * set; it grows to the largest request and stays mapped, so an
 * operator's megabytes of per-run scratch do not cost page faults on
 * every run, as fresh allocations past the C library's mapping threshold
 * do), else a fresh allocation. NULL when out of memory. Give it back
 * with ox_threadpool_scratch_done. */
void *ox_threadpool_scratch(ox_threadpool *pool, size_t bytes, int *lent);
void ox_threadpool_scratch_done(ox_threadpool *pool, void *p, int lent);

/* Working memory for one task of a parallel loop (a band or tile buffer
 * that each task fills and drops): at least `bytes` bytes, 64-byte
 * aligned, the smallest block large enough among those earlier tasks gave
 * back to the pool, else a fresh allocation. A kernel that allocated and
 * freed such buffers on every run made the C library return the top of
 * its heap to the system after the run and fault it back in on the next:
 * a single 3 -> 16 channel convolution (a 260 KiB band buffer) took 0.215
 * ms a run instead of 0.052, four fifths of it in page faults. Thread-safe;
 * pool may be NULL (plain allocations). NULL when out of memory. Give it
 * back with ox_threadpool_block_done, which keeps up to 16 blocks and 64
 * MiB for the next tasks (the smallest go first) and frees the rest. */
void *ox_threadpool_block(ox_threadpool *pool, size_t bytes);
void ox_threadpool_block_done(ox_threadpool *pool, void *p);

int ox_online_cores(void);

#endif
