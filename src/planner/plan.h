/* Execution planning: the schedule of steps (kernel runs and copies
 * between devices), the slots that hold values during a run, their
 * lifetimes, and the memory plan that packs intermediates into one arena
 * per memory space (the host, each device with arenas) once their sizes
 * are known. */
#ifndef ONYX_PLANNER_PLAN_H
#define ONYX_PLANNER_PLAN_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "ep/ep.h"
#include "ir/ir.h"

typedef enum ox_step_kind {
    OX_STEP_NODE = 0,
    OX_STEP_COPY = 1, /* slot src (one device) -> slot dst (another) */
} ox_step_kind;

typedef struct ox_step {
    ox_step_kind kind;
    int node;     /* OX_STEP_NODE: node index */
    int src, dst; /* OX_STEP_COPY: slots */
    int *in_slots;  /* OX_STEP_NODE: slot per node input (-1 omitted) */
    int *out_slots; /* slot per node output (-1 omitted) */
    int *implicit_slots; /* slot per node->implicit value (outer scope of subgraphs) */
    int n_release;  /* slots whose last use is this step */
    int *release;
} ox_step;

typedef struct ox_slot_info {
    int value;     /* graph value id this slot holds (a copy holds the same value) */
    int device;    /* device the slot's data lives on */
    int ep;        /* provider that allocates it (index into the session's list) */
    int is_const;  /* initializer: bound at run start, never released */
    int is_input;  /* graph input: bound to the caller's tensor */
    int is_output; /* graph output on the host: handed to the caller */
    int resident;  /* device copy of an initializer: made by the first run
                      that needs it and kept by the graph for later runs */
    int compact;   /* resident, and every node reading it reads the
                      provider's compact form (ox_ep_ops.reads_compact) */
    int planned;   /* eligible for an arena (produced, not an output, not kept:
                      the host's, or its provider's device arena) */
    int view;      /* output 0 of a reshaping node (output_views_input): shares
                      the memory of that node's input 0 when the run finds
                      matching bytes; never in the arena itself, and the
                      slot it views lives as long as it does */
} ox_slot_info;

/* Arena layout for one set of input shapes. */
typedef struct ox_mem_plan {
    int64_t *signature; /* concatenated input dims, for lookup */
    size_t sig_len;
    size_t *offset; /* per slot; SIZE_MAX when not in the arena */
    size_t *size;
    size_t arena_bytes; /* the host arena */
    size_t *ep_bytes;   /* per provider: its device arena (0: none) */
    size_t naive_bytes; /* sum of planned sizes without reuse, for reports */
    int users;          /* runs using it now (guarded by the plan's lock) */
    int evicted;        /* dropped from the cache; freed when users reach 0 */
    struct ox_mem_plan *next;
} ox_mem_plan;

typedef struct ox_plan {
    int n_steps;
    ox_step *steps;
    int n_slots;
    ox_slot_info *slots;
    int *output_slots; /* per graph output: the host slot holding it */
    int *input_slots;  /* per graph input value: its slot */
    int *lifetimes;    /* per slot: defining step, last step alive */
    int n_eps;
    /* per provider: the alignment of its device arena's offsets, or 0
     * when its device slots are allocated one by one (the host's
     * providers, and devices without arenas) */
    size_t *arena_align;
    /* memory plans, most recent first, guarded by lock */
    pthread_mutex_t lock;
    ox_mem_plan *mem_plans;
    int n_mem_plans;
    int mem_plans_built;
} ox_plan;

/* What the session knows against a placement: fn(user, node, e) returns 1
 * when node must not go to provider e (a device fault recorded for it);
 * never asked about the last provider, the CPU. */
typedef struct ox_place_veto {
    int (*fn)(void *user, const ir_node *node, int e);
    void *user;
} ox_place_veto;
/* Assigns node->ep for every node: the first provider (by priority) whose
 * supports() accepts the node and that veto (may be NULL) allows; fails
 * naming the node when none does. */
int ox_partition(ir_graph *g, ox_ep *const *eps, int n_eps, const ox_place_veto *veto,
                 ox_error *err);

/* Builds steps, slots (including copies at device boundaries) and
 * lifetimes from a partitioned graph. Once it returns, success or not,
 * the plan must go to ox_plan_free; plan->slots is then non-NULL unless
 * the very first allocation failed (an empty graph too has its arrays),
 * so an owner that zeroes plans can tell a built one. */
int ox_plan_build(const ir_graph *g, ox_ep *const *eps, int n_eps, ox_plan *plan, ox_error *err);
void ox_plan_free(ox_plan *plan);

/* Memory plans: find one for a signature, or build one from sizes
 * observed in a run (size[slot], 0 = not allocated). Both return the plan
 * held for the caller, who gives it back with ox_plan_release_mem; a plan
 * evicted from the cache meanwhile is freed by its last user. The cache
 * keeps the 8 most recent signatures. Thread-safe. */
const ox_mem_plan *ox_plan_find_mem(ox_plan *plan, const int64_t *sig, size_t sig_len);
const ox_mem_plan *ox_plan_add_mem(ox_plan *plan, const int64_t *sig, size_t sig_len,
                                   const size_t *sizes);
void ox_plan_release_mem(ox_plan *plan, const ox_mem_plan *mem);

#endif
