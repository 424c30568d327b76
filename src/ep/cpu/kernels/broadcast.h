/* numpy-style broadcasting for CPU kernels with several inputs (binary
 * arithmetic, comparisons, Where, Expand, variadic Sum/Min/Max...).
 *
 * A plan maps every output element to one element of each input. Output
 * dims of size 1 are dropped and neighbouring dims that every input walks
 * the same way are merged, so a same-shape or scalar-broadcast case ends
 * up as one flat run and kernels spend their time in a tight inner loop.
 * Iteration hands a kernel runs ("segments") of consecutive output
 * elements along the innermost planned dim; along a run each input either
 * advances by its innermost stride or stays put (stride 0). */
#ifndef ONYX_EP_CPU_KERNELS_BROADCAST_H
#define ONYX_EP_CPU_KERNELS_BROADCAST_H

#include <stdint.h>

#include "core/tensor.h"
#include "core/threadpool.h"

#define OX_BCAST_MAX_INPUTS 4

typedef struct ox_bcast {
    int n_in;
    int rank; /* planned rank, >= 1 */
    int64_t dims[OX_MAX_RANK];
    /* Element strides of each input along each planned dim (0 = repeat). */
    int64_t strides[OX_BCAST_MAX_INPUTS][OX_MAX_RANK];
    int64_t numel; /* output elements */
} ox_bcast;

/* Broadcast shape of n shapes into out/out_rank. Returns 0, or -1 when
 * two dims differ and neither is 1 (then *bad_axis, if not NULL, is the
 * offending output axis). */
int ox_bcast_shape(int n, const int64_t *const dims[], const int ranks[], int64_t *out,
                   int *out_rank, int *bad_axis);

/* Plans iteration over the output shape out_dims for n inputs (n <=
 * OX_BCAST_MAX_INPUTS) that broadcast to it unidirectionally. Returns -1
 * when an input does not broadcast to the output shape. */
int ox_bcast_plan(ox_bcast *b, int n, const int64_t *const dims[], const int ranks[],
                  const int64_t *out_dims, int out_rank);
/* Same from tensors; NULL inputs are not allowed. */
int ox_bcast_plan_tensors(ox_bcast *b, int n, const ox_tensor *const ins[],
                          const ox_tensor *out);

/* Lengthens short runs (innermost planned dim under 16 elements) by
 * reading one input from a copy written out over the inner dims [j, rank),
 * where every other input is dense: input k, expanded there and kept as
 * it is over the outer dims [0, j) (laid out densely over those along
 * which it changes), then the inner dims merge into one run. */
typedef struct ox_bcast_wide {
    int k, j;
    int64_t elems; /* elements of the copy */
} ox_bcast_wide;

/* Chooses the input and the largest inner block (at least two dims, at
 * least two outer indices) whose copy holds at most cap elements.
 * Returns 0 with w set, or -1 when no input qualifies or the runs are
 * long already. */
int ox_bcast_widen_plan(const ox_bcast *b, int64_t cap, ox_bcast_wide *w);
/* Writes input w->k (data, elem bytes per element) out into buf (w->elems
 * elements) and turns the plan into one that reads it from buf. */
void ox_bcast_widen(ox_bcast *b, const ox_bcast_wide *w, const void *data, size_t elem, void *buf);

/* One run of `len` output elements starting at flat output index out_off.
 * Input k starts at flat element in_off[k] and advances by in_step[k]
 * per element. */
typedef void (*ox_bcast_fn)(void *arg, int64_t out_off, const int64_t *in_off,
                            const int64_t *in_step, int64_t len);

/* Calls fn for the runs covering output elements [begin, end). */
void ox_bcast_walk(const ox_bcast *b, int64_t begin, int64_t end, ox_bcast_fn fn, void *arg);
/* Walks all output elements, split over the pool in chunks of at least
 * grain elements (pool may be NULL). fn must be safe to call from
 * several threads on disjoint output ranges. */
void ox_bcast_run(const ox_bcast *b, ox_threadpool *pool, int64_t grain, ox_bcast_fn fn,
                  void *arg);

/* Copies x, broadcast, into y's shape (Expand, or seeding an accumulator).
 * Works for every element type including strings (y's old strings are
 * freed). Returns 0, or -1 when the types differ, x does not broadcast to
 * y, or a string copy runs out of memory. */
int ox_bcast_copy(const ox_tensor *x, ox_tensor *y, ox_threadpool *pool);

#endif
