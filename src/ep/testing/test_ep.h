/* A provider for tests of placement, copies and fallback: it claims only
 * float32 Add, Mul, Relu and Reshape (whose shape it reads on the host),
 * and keeps its tensors in a simulated device memory that its kernels
 * verify, so a missing or needless copy is caught. Its kernels only
 * record work into the run's stream; the work runs at the stream's
 * flush (a copy to the host, the run's end), as on a real device. Once
 * a memory plan exists its intermediates live in device arenas, whose
 * bytes serve several slots in one run. Option light=Op,Op...: those
 * operators are not worth placing alone (ox_ep_ops.worth_placing; every
 * other one is). */
#ifndef ONYX_EP_TESTING_TEST_EP_H
#define ONYX_EP_TESTING_TEST_EP_H

#include "ep/ep.h"

typedef struct ox_test_ep_stats {
    long copies_to_host;
    long copies_from_host;
    long kernel_runs;
    long live_allocations;
    long streams_begun, streams_ended; /* runs' streams (ox_ep_ops.run_begin/run_end) */
    long flushes;                      /* times the stream was flushed */
    long submits;                      /* flushes that ran recorded work */
    long arenas;                       /* device arenas made (arena_new) */
    long arena_views;                  /* slots placed in them */
    /* uploads that first ran recorded work touching their bytes (an
     * arena's bytes reused within the run) */
    long ordered_uploads;
} ox_test_ep_stats;

#define OX_TEST_DEVICE 1

void ox_test_ep_get_stats(ox_ep *ep, ox_test_ep_stats *out);

#endif
