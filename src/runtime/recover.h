/* Device faults. A run that fails because a device was lost, ran out of
 * memory or stopped answering (ox_ep_ops.fault_count moved while it ran)
 * is run again with the same inputs on the CPU alone
 * (ox_run_control.host_only), so the caller gets correct outputs; the
 * provider remakes its device for later runs (resident weights are
 * dropped first and uploaded again on first use); the node that was
 * running goes to the CPU for the rest of the session and is recorded in
 * a per-device cache on disk, so later sessions of the same model on the
 * same device and driver place it on the CPU. A device that cannot be
 * remade leaves every later run of the session on the CPU. */
#ifndef ONYX_RUNTIME_RECOVER_H
#define ONYX_RUNTIME_RECOVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/error.h"
#include "core/tensor.h"
#include "ir/ir.h"
#include "onyx.h"

struct onyx_session;
struct ox_run_control;

/* One node the cache records against a device. */
typedef struct ox_fault_entry {
    char *op, *name, *what;
} ox_fault_entry;

typedef struct ox_fault_cache {
    char *path; /* the device's file, NULL without a cache folder */
    ox_fault_entry *entries; /* this model's */
    int n;
} ox_fault_cache;

typedef struct ox_fault_state {
    char *cache_dir;      /* NULL: nothing is kept on disk */
    uint64_t fingerprint; /* of the optimized graph: keys the cache's entries */
    atomic_int host_only; /* a device could not be remade: every run uses the CPU */
    /* per provider (index as in onyx_session.eps) */
    ox_fault_cache caches[OX_MAX_EPS + 1];
    atomic_ullong rescued[OX_MAX_EPS + 1]; /* runs completed on the CPU after a fault */
    atomic_ullong denied[OX_MAX_EPS + 1];  /* nodes moved to the CPU for a fault */
    pthread_mutex_t lock; /* cache file appends */
    int lock_made;
} ox_fault_state;

/* After optimization, before placement: the graph's fingerprint, and
 * each device provider's entries for this model in the cache folder
 * (cache_dir, resolved by the session before its providers are made: the
 * options', else ONYX_CACHE_DIR, else $XDG_CACHE_HOME/onyx, else
 * ~/.cache/onyx; "" turns it off). An unreadable or malformed cache is
 * ignored, never trusted: it only ever moves nodes to the CPU. */
int ox_faults_setup(struct onyx_session *s, ox_error *err);
/* The placement veto (ox_place_veto.fn) for the main graph: 1 when the
 * cache records a fault of node on provider e. */
int ox_faults_veto(void *session, const ir_node *node, int e);
void ox_faults_free(ox_fault_state *f);

/* ox_session_run_ctl with the recovery above. */
int ox_session_run_guarded(struct onyx_session *s, const struct ox_run_control *ctl,
                           const char *const *in_names, const ox_tensor *const *ins,
                           size_t n_in, const char *const *out_names, ox_tensor **outs,
                           size_t n_out, ox_error *err);

#endif
