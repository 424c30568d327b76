/* What one run of a graph holds (executor.c, run_memory.c): its slots,
 * its memory (the arenas of the memory plan, the device arenas and the
 * providers' streams) and where it is. Internal to the runtime. */
#ifndef ONYX_RUNTIME_RUN_CTX_H
#define ONYX_RUNTIME_RUN_CTX_H

#include <stdatomic.h>

#include "runtime/session.h"

typedef enum slot_mode {
    SLOT_EMPTY = 0,
    SLOT_BORROWED, /* caller input, initializer, caller output buffer or arena */
    SLOT_DEVICE,   /* data from a provider allocator (ep field) */
    SLOT_VALUE,    /* heap ox_tensor owned by the run (sequences, strings, kernel-made) */
} slot_mode;

typedef struct run_slot {
    ox_tensor hdr;
    ox_tensor *t;
    slot_mode mode;
    int ep;
} run_slot;

typedef struct run_ctx {
    onyx_session *s;
    ox_graph_exec *ge;
    const struct run_ctx *parent; /* enclosing run, for subgraph bodies */
    const ox_step *parent_step;   /* the If/Loop/Scan step running this body */
    int64_t parent_iteration;     /* the parent's iteration running it, or -1 */
    const ox_run_control *ctl;    /* shared by a run and its subgraph runs */
    run_slot *slots;
    ox_tensor **caller_out; /* per slot: caller-provided output tensor */
    const ox_mem_plan *mem;
    char *arena;
    size_t arena_size;
    /* per provider: its device arena for this run (NULL: none, and its
     * slots come from alloc) */
    void **dev_arena;
    /* view_bytes per slot (the largest any provider asks), where device
     * arena views are described; NULL when no device arena is taken */
    unsigned char *views;
    size_t view_stride;
    size_t *observed; /* sizes seen this run, when no memory plan exists yet */
    /* per provider: the run's stream (ox_ep_ops.run_begin) or NULL; made
     * by the top-level graph run, shared by its subgraph runs */
    void **streams;
    ox_error *err;
} run_ctx;

/* What ox_kernel_output needs to find the node's slots. */
typedef struct node_exec {
    ox_stop stop; /* first: poll_stop finds the node_exec from it */
    run_ctx *rc;
    const ox_step *step;
    int64_t iteration;     /* set by Loop/Scan kernels for messages; -1 outside */
    atomic_int stop_code; /* why a poll inside the kernel said stop; 0 if none did */
    int declined;         /* the kernel called ox_kernel_decline */
} node_exec;

/* A run on the CPU alone (ox_run_control.host_only): every value lives in
 * host memory, and a node placed on a device runs its CPU kernel. */
static inline int ox_run_host_only(const run_ctx *rc) { return rc->ctl && rc->ctl->host_only; }
static inline int ox_run_slot_device(const run_ctx *rc, int sl) {
    return ox_run_host_only(rc) ? OX_DEVICE_HOST : rc->ge->plan.slots[sl].device;
}
static inline int ox_run_slot_ep(const run_ctx *rc, int sl) {
    return ox_run_host_only(rc) ? rc->s->n_eps - 1 : rc->ge->plan.slots[sl].ep;
}

/* ---- run_memory.c: values' memory, weights' device copies, copies
 * between devices, device arenas and streams ---- */

/* Frees what slot s holds (a provider block, an owned value) and empties it. */
void ox_run_release_slot(run_ctx *rc, int s);
/* Memory for slot s's tensor of this type and shape: the caller's output
 * buffer, the slot's place in an arena of the memory plan, or a
 * provider's allocation reserved against the session's limit. A slot
 * already filled must match. */
int ox_run_alloc_slot(run_ctx *rc, int s, ox_dtype dtype, const int64_t *dims, int rank);
/* A copy step: a weight's resident device copy (made once), or the
 * value moved between host and device. */
int ox_run_exec_copy(run_ctx *rc, const ox_step *st);
/* The run's device arenas (top-level runs with a memory plan), and their
 * return to the providers before the streams end. */
int ox_run_take_device_arenas(run_ctx *rc);
void ox_run_give_device_arenas(run_ctx *rc);
/* The info line of a new memory plan: its arenas and the bytes without reuse. */
void ox_run_log_mem_plan(onyx_session *s, const ox_mem_plan *m);
/* One stream per provider with a run lifecycle (*out: an entry per
 * provider), and their end: err NULL when the run already failed. */
int ox_run_begin_streams(onyx_session *s, void ***out, ox_error *err);
int ox_run_end_streams(onyx_session *s, void **st, ox_error *err);

#endif
