/* Sessions: a loaded, optimized, partitioned and planned model, ready to
 * run from any number of threads. */
#ifndef ONYX_RUNTIME_SESSION_H
#define ONYX_RUNTIME_SESSION_H

#include <pthread.h>
#include <stdatomic.h>

#include "core/threadpool.h"
#include "ep/devices.h"
#include "ep/ep.h"
#include "ir/ir.h"
#include "onyx.h"
#include "planner/plan.h"
#include "runtime/observe.h"
#include "runtime/run_control.h"

/* Providers a session may name; the CPU provider comes on top of them as
 * the final fallback when it is not named, hence the +1 in sessions. */
#define OX_MAX_EPS 8

/* after OX_MAX_EPS, which it sizes its per-provider arrays with */
#include "runtime/recover.h"
/* Provider factories an environment may hold. */
#define OX_MAX_REGISTERED_EPS 32

typedef ox_ep *(*ox_ep_factory)(const ox_ep_options *opts, ox_error *err);

typedef struct ox_provider_entry {
    const char *name;
    ox_ep_factory create;
    ox_device_lister list_devices; /* NULL: the provider cannot list its devices */
} ox_provider_entry;

struct onyx_env {
    onyx_log_level log_level;
    int n_providers;
    ox_provider_entry providers[OX_MAX_REGISTERED_EPS];
};

struct onyx_session_options {
    int threads;
    int n_providers;
    char *providers[OX_MAX_EPS];
    onyx_opt_level opt_level;
    onyx_log_level log_level;
    int log_level_set;
    char *external_data_dir;
    size_t memory_limit; /* 0: unlimited */
    char *fault_spec;    /* NULL: ONYX_INJECT_FAULT; "": none (observe.h) */
    char *cache_dir;     /* NULL: ONYX_CACHE_DIR or the default; "": none (recover.h) */
    uint64_t verify_runs; /* shadow runs (verify/shadow.c); 0: none */
    double verify_atol, verify_rtol;
    int borrow_buffer;    /* an optimized file in a caller's buffer is used in place */
    /* optimize for any provider (no fusions into CPU-only operators), as
     * an optimized file is: set by ox_compile_model, not by the API */
    int portable;
    /* provider options, one per (provider, key): setting again replaces */
    int n_ep_options;
    struct ox_provider_option {
        char *provider, *key, *value; /* owned */
    } *ep_options;
};

/* An arena buffer kept between runs so steady-state runs do not allocate. */
typedef struct ox_arena {
    void *data;
    size_t size;
    struct ox_arena *next;
} ox_arena;

/* One graph (the main graph or a subgraph body) ready to execute. */
typedef struct ox_graph_exec {
    ir_graph *graph;
    ox_plan plan;
    const ox_kernel_def **kernels; /* per node */
    const struct ox_op_schema **schemas; /* per node: inference at run time */
    void **states;                 /* per node, from kernel init */
    int *exec_nodes;               /* node indices in execution order */
    pthread_mutex_t arena_lock;
    ox_arena *free_arenas;
    /* per plan slot: the device copy of an initializer once made
     * (plan.slots[i].resident), guarded by arena_lock; freed with the
     * session, not counted against its memory limit (weights are not) */
    ox_tensor **resident;
    /* per node: set once the node declined its device (ox_kernel_decline)
     * and the warning saying so was logged */
    atomic_uchar *declined;
    /* per node: its outputs are perturbed (fault injection, observe.h);
     * NULL when no node is */
    unsigned char *inject;
    /* per node of the main graph (NULL in subgraph bodies): the CPU runs
     * it instead of its device, because shadow runs found its device
     * kernel wrong (verify/shadow.c) or its device failed while running
     * it (runtime/recover.c) */
    atomic_uchar *force_host;
} ox_graph_exec;

/* ox_graph_exec.force_host values */
#define OX_FORCE_HOST_MISMATCH 1
#define OX_FORCE_HOST_FAULT 2

struct onyx_session {
    onyx_env *env;
    ir_model *model;
    ir_graph *graph; /* == main.graph */
    int n_eps;
    ox_ep *eps[OX_MAX_EPS + 1]; /* priority order, cpu last (appended when not named) */
    ox_graph_exec main;
    int n_subs;
    ox_graph_exec **subs; /* every subgraph body (If/Loop/Scan), any depth */
    ox_threadpool *pool;
    /* the artefact file of an optimized model on this machine (prepacked
     * weights; format/artefacts.h), NULL without one */
    struct ox_artefacts *artefacts;
    onyx_log_level log_level;
    /* public description of graph inputs (non-initializer) and outputs */
    size_t n_in, n_out;
    int *in_values;
    onyx_value_info *in_info, *out_info;
    int64_t param_count, param_bytes;
    /* run-time memory of all runs at once, against the options' limit */
    ox_mem_account mem;
    /* per provider: nodes it declined at run time that the CPU ran */
    atomic_ullong cpu_fallbacks[OX_MAX_EPS + 1];
    ox_fault_spec fault; /* testing aid: the node whose outputs are perturbed */
    /* shadow runs (verify/shadow.c): the reference session (CPU provider,
     * no optimization, no fault injection) the first verify_runs runs are
     * compared with; NULL without shadow runs */
    onyx_session *reference;
    uint64_t verify_runs;
    double verify_atol, verify_rtol;
    atomic_ullong verify_claimed, verify_done, verify_mismatches, verify_disabled;
    atomic_int on_reference; /* every run uses the reference from now on */
    pthread_mutex_t verify_lock;
    char verify_report[1024]; /* the last mismatch, under verify_lock */
    /* device faults (runtime/recover.c) */
    ox_fault_state faults;
};

/* The exec of the main graph or of a subgraph body; NULL if unknown. */
ox_graph_exec *ox_session_find_exec(onyx_session *s, const ir_graph *g);

/* Registers a provider factory under a name (used by tests to add the
 * test provider). */
int ox_env_add_provider(onyx_env *env, const char *name, ox_ep_factory create, ox_error *err);
/* Sets the device lister of a registered provider (onyx_env_list_devices). */
int ox_env_set_device_lister(onyx_env *env, const char *name, ox_device_lister list, ox_error *err);

int ox_session_create(onyx_env *env, const void *data, size_t size, const char *base_dir,
                      const onyx_session_options *opts, onyx_session **out, ox_error *err);
/* From a model file, read through a mapping (external data resolves
 * against base_dir unless the options name a folder). */
int ox_session_create_file(onyx_env *env, const char *path, const char *base_dir,
                           const onyx_session_options *opts, onyx_session **out, ox_error *err);
void ox_session_free(onyx_session *s);

/* run_options may be NULL (a run that cannot be stopped). */
int ox_session_run(onyx_session *s, const onyx_run_options *run_options,
                   const char *const *in_names, const ox_tensor *const *ins, size_t n_in,
                   const char *const *out_names, ox_tensor **outs, size_t n_out, ox_error *err);
/* The same under a run control already started (its capture hook used). */
int ox_session_run_ctl(onyx_session *s, const ox_run_control *ctl, const char *const *in_names,
                       const ox_tensor *const *ins, size_t n_in, const char *const *out_names,
                       ox_tensor **outs, size_t n_out, ox_error *err);
/* A run of a session with shadow runs (verify/shadow.c). */
int ox_shadow_run(onyx_session *s, const ox_run_control *ctl, const char *const *in_names,
                  const ox_tensor *const *ins, size_t n_in, const char *const *out_names,
                  ox_tensor **outs, size_t n_out, ox_error *err);

/* ---- run-time memory (arena.c) ---- */

/* Reserves bytes against the session's memory limit; when the limit is in
 * the way, first frees the idle arenas the session keeps for reuse. */
int ox_session_reserve(onyx_session *s, size_t bytes, ox_error *err);
/* Charges the uncharged parts of a value built during a run. */
int ox_session_charge_value(onyx_session *s, ox_tensor *value, ox_error *err);
/* Frees the idle arenas of every graph (their bytes leave the count). */
void ox_session_trim(onyx_session *s);
/* An arena of at least `size` bytes for one run of ge: an idle one, or a
 * new one reserved against the limit. NULL with err set on failure. */
void *ox_arena_take(onyx_session *s, ox_graph_exec *ge, size_t size, size_t *got, ox_error *err);
/* Returns an arena for reuse (or frees it when enough are idle). */
void ox_arena_give(onyx_session *s, ox_graph_exec *ge, void *data, size_t size);
/* Frees the idle arenas of one graph exec, giving back their bytes. */
void ox_arena_free_idle(onyx_session *s, ox_graph_exec *ge);

/* Planner statistics for tests and reports. */
typedef struct ox_plan_stats {
    int mem_plans_built;
    size_t arena_bytes; /* most recent plan */
    size_t naive_bytes; /* same intermediates without reuse */
} ox_plan_stats;
void ox_session_plan_stats(onyx_session *s, ox_plan_stats *out);

#endif
