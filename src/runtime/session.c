/* Session creation: load, validate, optimize, infer, partition, plan,
 * and prepare kernels once, so runs only execute. */
#include "runtime/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/files.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/strmap.h"
#include "format/artefacts.h"
#include "loader/loader.h"
#include "ops/op.h"
#include "optimizer/optimizer.h"

int ox_env_add_provider(onyx_env *env, const char *name, ox_ep_factory create, ox_error *err) {
    for (int i = 0; i < env->n_providers; i++)
        if (strcmp(env->providers[i].name, name) == 0) {
            env->providers[i].create = create;
            return 0;
        }
    if (env->n_providers == OX_MAX_REGISTERED_EPS)
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "too many registered providers (at most %d)",
                       OX_MAX_REGISTERED_EPS);
    env->providers[env->n_providers].name = name;
    env->providers[env->n_providers].create = create;
    env->providers[env->n_providers].list_devices = NULL;
    env->n_providers++;
    return 0;
}

int ox_env_set_device_lister(onyx_env *env, const char *name, ox_device_lister list, ox_error *err) {
    for (int i = 0; i < env->n_providers; i++)
        if (strcmp(env->providers[i].name, name) == 0) {
            env->providers[i].list_devices = list;
            return 0;
        }
    return ox_fail(err, ONYX_INVALID_ARGUMENT, "no provider '%s' to give a device lister", name);
}

static int names_cpu(const onyx_session_options *opts) {
    for (int i = 0; i < opts->n_providers; i++)
        if (strcmp(opts->providers[i], "cpu") == 0) return 1;
    return 0;
}

/* Every provider option names a provider the session will create. */
static int check_option_targets(const onyx_session_options *opts, ox_error *err) {
    for (int i = 0; opts && i < opts->n_ep_options; i++) {
        const char *p = opts->ep_options[i].provider;
        int listed = strcmp(p, "cpu") == 0;
        for (int k = 0; k < opts->n_providers && !listed; k++) listed = strcmp(opts->providers[k], p) == 0;
        if (!listed)
            return ox_fail(err, ONYX_INVALID_ARGUMENT,
                           "option '%s' is for provider '%s', which the session's providers do not name",
                           opts->ep_options[i].key, p);
    }
    return 0;
}

/* Makes provider `name` with the options given for it. */
static ox_ep *make_provider(ox_ep_factory f, const char *name, const onyx_session_options *opts,
                            const char *cache_dir, ox_error *err) {
    int n = 0, total = opts ? opts->n_ep_options : 0;
    const char **keys = calloc((size_t)total + 1, sizeof *keys);
    const char **values = calloc((size_t)total + 1, sizeof *values);
    if (!keys || !values) {
        free(keys);
        free(values);
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    for (int i = 0; i < total; i++)
        if (strcmp(opts->ep_options[i].provider, name) == 0) {
            keys[n] = opts->ep_options[i].key;
            values[n++] = opts->ep_options[i].value;
        }
    ox_ep_options eo = {n, keys, values, cache_dir};
    ox_ep *ep = f(&eo, err);
    free(keys);
    free(values);
    return ep;
}

static int create_providers(onyx_session *s, const onyx_session_options *opts, ox_error *err) {
    onyx_env *env = s->env;
    int n_named = opts ? opts->n_providers : 0;
    if (check_option_targets(opts, err) != 0) return -1;
    for (int i = 0; i <= n_named; i++) {
        const char *name = i < n_named ? opts->providers[i] : "cpu";
        if (i == n_named && s->n_eps > 0 && strcmp(s->eps[s->n_eps - 1]->name, "cpu") == 0) break;
        if (i < n_named && strcmp(name, "cpu") == 0 && i != n_named - 1)
            return ox_fail(err, ONYX_INVALID_ARGUMENT,
                           "provider 'cpu' must be last: it is the fallback for every node");
        ox_ep_factory f = NULL;
        for (int k = 0; k < env->n_providers; k++)
            if (strcmp(env->providers[k].name, name) == 0) f = env->providers[k].create;
        if (!f) {
            char list[256] = "";
            size_t off = 0;
            for (int k = 0; k < env->n_providers && off < sizeof list; k++)
                off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", k ? ", " : "",
                                        env->providers[k].name);
            return ox_fail(err, ONYX_INVALID_ARGUMENT,
                           "unknown execution provider '%s' (this build offers: %s)", name, list);
        }
        for (int k = 0; k < s->n_eps; k++)
            if (strcmp(s->eps[k]->name, name) == 0)
                return ox_fail(err, ONYX_INVALID_ARGUMENT, "provider '%s' is listed twice", name);
        if (s->n_eps == OX_MAX_EPS + 1)
            return ox_fail(err, ONYX_INVALID_ARGUMENT, "too many providers (at most %d)",
                           OX_MAX_EPS);
        ox_ep *ep = make_provider(f, name, opts, s->faults.cache_dir, err);
        if (!ep && i < n_named && strcmp(name, "cpu") != 0 && names_cpu(opts) &&
            err->code != ONYX_INVALID_ARGUMENT) {
            /* A provider that cannot start here (no driver, no device):
             * the caller named "cpu" as the fallback, so its nodes go to
             * the providers after it; without "cpu" in the list the
             * caller asked for that device alone, and it is an error. A
             * mistake in the caller's options for it is always an error. */
            ox_log(s->log_level, ONYX_LOG_WARNING,
                   "provider '%s' is unavailable, its nodes fall back to the next providers: %s",
                   name, err->msg);
            ox_error_clear(err);
            continue;
        }
        if (!ep) {
            ox_error_prefix(err, "provider '%s'", name);
            return -1;
        }
        s->eps[s->n_eps++] = ep;
        const char *note = ep->ops->notice ? ep->ops->notice(ep) : NULL;
        if (note) ox_log(s->log_level, ONYX_LOG_INFO, "provider '%s': %s", name, note);
    }
    return 0;
}

static int prepare_kernels(onyx_session *s, ox_graph_exec *ge, ox_error *err) {
    ir_graph *g = ge->graph;
    ge->kernels = calloc((size_t)g->n_nodes + 1, sizeof *ge->kernels);
    ge->states = calloc((size_t)g->n_nodes + 1, sizeof *ge->states);
    ge->declined = calloc((size_t)g->n_nodes + 1, sizeof *ge->declined);
    ge->schemas = calloc((size_t)g->n_nodes + 1, sizeof *ge->schemas);
    if (!ge->kernels || !ge->states || !ge->schemas || !ge->declined)
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < g->n_nodes; i++) {
        ir_node *n = &g->nodes[i];
        ox_ep *ep = s->eps[n->ep];
        /* looked up once here rather than by name on every run */
        ge->schemas[i] = ox_op_find(n->domain, n->op_type, n->opset);
        if (!ge->schemas[i] || !ge->schemas[i]->infer)
            return ox_fail(err, ONYX_NOT_IMPLEMENTED, "no schema for %s", n->op_type);
        ge->kernels[i] = ep->ops->find_kernel(ep, n);
        if (!ge->kernels[i])
            return ox_fail(err, ONYX_NOT_IMPLEMENTED, "provider '%s' has no kernel for %s", ep->name,
                           n->op_type);
        if (!ge->kernels[i]->init) continue;
        const ox_tensor **consts = calloc((size_t)n->n_inputs + 1, sizeof *consts);
        if (!consts) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        for (int k = 0; k < n->n_inputs; k++) {
            int v = n->inputs[k];
            consts[k] = v >= 0 && !g->values[v].is_input ? g->values[v].init : NULL;
        }
        int out0 = n->n_outputs > 0 ? n->outputs[0] : -1;
        ox_kernel_init in = {n, consts, n->n_inputs, ge->graph == s->graph ? s->artefacts : NULL,
                             out0 >= 0 ? g->values[out0].name : NULL,
                             out0 >= 0 && g->values[out0].has_type ? &g->values[out0].type : NULL};
        int rc = ge->kernels[i]->init(&in, &ge->states[i], err);
        free(consts);
        if (rc != 0) {
            char label[300];
            ox_error_prefix(err, "%s", ir_node_label(n, label, sizeof label));
            return -1;
        }
    }
    return 0;
}

/* Partitions, plans and prepares one graph. */
static int build_exec(onyx_session *s, ir_graph *g, ox_graph_exec *ge, ox_error *err) {
    ge->graph = g;
    pthread_mutex_init(&ge->arena_lock, NULL);
    /* the main graph's nodes whose device failed them before stay off it */
    ox_place_veto veto = {ox_faults_veto, s};
    if (ox_partition(g, s->eps, s->n_eps, ge == &s->main ? &veto : NULL, err) != 0) return -1;
    if (ox_plan_build(g, s->eps, s->n_eps, &ge->plan, err) != 0) return -1;
    if (prepare_kernels(s, ge, err) != 0) return -1;
    ge->exec_nodes = calloc((size_t)g->n_nodes + 1, sizeof *ge->exec_nodes);
    ge->resident = calloc((size_t)ge->plan.n_slots + 1, sizeof *ge->resident);
    if (!ge->exec_nodes || !ge->resident) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    int k = 0;
    for (int i = 0; i < ge->plan.n_steps; i++)
        if (ge->plan.steps[i].kind == OX_STEP_NODE) ge->exec_nodes[k++] = ge->plan.steps[i].node;
    return 0;
}

static void free_exec(onyx_session *s, ox_graph_exec *ge) {
    free(ge->force_host); /* made before the rest (ox_faults_setup) */
    ge->force_host = NULL;
    if (!ge->graph) return;
    for (int i = 0; ge->resident && i < ge->plan.n_slots; i++) {
        ox_tensor *t = ge->resident[i];
        if (!t) continue;
        ox_ep *ep = s->eps[ge->plan.slots[i].ep];
        ep->ops->free(ep, NULL, t->data);
        free(t);
    }
    free(ge->resident);
    if (ge->states && ge->kernels)
        for (int i = 0; i < ge->graph->n_nodes; i++)
            if (ge->states[i] && ge->kernels[i] && ge->kernels[i]->release)
                ge->kernels[i]->release(ge->states[i]);
    free(ge->states);
    free(ge->declined);
    free(ge->inject);
    free(ge->kernels);
    free(ge->schemas);
    free(ge->exec_nodes);
    if (ge->plan.slots || ge->plan.steps) ox_plan_free(&ge->plan);
    for (ox_arena *a = ge->free_arenas, *next; a; a = next) {
        next = a->next;
        free(a->data);
        free(a);
    }
    pthread_mutex_destroy(&ge->arena_lock);
    ge->graph = NULL;
}

/* Subgraph bodies of every node, depth first, each with its own plan. */
static int build_subgraphs(onyx_session *s, ir_graph *g, ox_error *err) {
    for (int i = 0; i < g->n_nodes; i++)
        for (int a = 0; a < g->nodes[i].n_attrs; a++) {
            ir_attr *at = &g->nodes[i].attrs[a];
            size_t count = at->g ? 1 : at->graphs ? at->n : 0;
            for (size_t j = 0; j < count; j++) {
                ir_graph *sub = at->g ? at->g : at->graphs[j];
                ox_graph_exec **ns = realloc(s->subs, ((size_t)s->n_subs + 1) * sizeof *ns);
                if (!ns) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
                s->subs = ns;
                ox_graph_exec *ge = calloc(1, sizeof *ge);
                if (!ge) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
                s->subs[s->n_subs++] = ge;
                if (build_exec(s, sub, ge, err) != 0) {
                    ox_error_prefix(err, "subgraph '%s' of attribute '%s'", sub->name, at->name);
                    return -1;
                }
                if (build_subgraphs(s, sub, err) != 0) return -1;
            }
        }
    return 0;
}

ox_graph_exec *ox_session_find_exec(onyx_session *s, const ir_graph *g) {
    if (s->main.graph == g) return &s->main;
    for (int i = 0; i < s->n_subs; i++)
        if (s->subs[i]->graph == g) return s->subs[i];
    return NULL;
}

static void fill_info(const ir_value *v, onyx_value_info *info) {
    info->name = v->name;
    info->kind = (onyx_value_kind)v->type.kind;
    info->dtype = v->type.dtype;
    info->rank = v->has_type ? v->type.rank : -1;
    info->dims = v->type.dims;
    info->dim_params = (const char *const *)v->type.dim_params;
}

static int describe_io(onyx_session *s, ox_error *err) {
    ir_graph *g = s->graph;
    s->in_values = calloc((size_t)g->n_inputs + 1, sizeof *s->in_values);
    s->in_info = calloc((size_t)g->n_inputs + 1, sizeof *s->in_info);
    s->out_info = calloc((size_t)g->n_outputs + 1, sizeof *s->out_info);
    if (!s->in_values || !s->in_info || !s->out_info)
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < g->n_inputs; i++) {
        const ir_value *v = &g->values[g->inputs[i]];
        if (v->init) continue; /* an initializer listed as input is optional */
        s->in_values[s->n_in] = g->inputs[i];
        fill_info(v, &s->in_info[s->n_in++]);
    }
    for (int i = 0; i < g->n_outputs; i++) fill_info(&g->values[g->outputs[i]], &s->out_info[s->n_out++]);
    for (int v = 0; v < g->n_values; v++)
        if (g->values[v].init) {
            s->param_count += ox_tensor_numel(g->values[v].init);
            s->param_bytes += (int64_t)g->values[v].init->nbytes;
        }
    return 0;
}

/* At info level: how many nodes each provider runs, and the arena use
 * the planner found; at verbose level, every node's placement. */
static void log_placement(const onyx_session *s) {
    if (s->log_level < ONYX_LOG_INFO) return;
    const ir_graph *g = s->graph;
    for (int e = 0; e < s->n_eps; e++) {
        int count = 0;
        for (int i = 0; i < g->n_nodes; i++) count += g->nodes[i].ep == e;
        ox_log(s->log_level, ONYX_LOG_INFO, "provider %s runs %d of %d nodes", s->eps[e]->name, count,
               g->n_nodes);
    }
    ox_log(s->log_level, ONYX_LOG_INFO, "%d steps (%d values), %d subgraphs", s->main.plan.n_steps,
           s->main.plan.n_slots, s->n_subs);
    for (int i = 0; i < g->n_nodes; i++) {
        char label[300];
        ox_log(s->log_level, ONYX_LOG_VERBOSE, "%s -> %s", ir_node_label(&g->nodes[i], label, sizeof label),
               s->eps[g->nodes[i].ep]->name);
    }
}

/* Fault injection (a testing aid, observe.h): the options' spec, else
 * ONYX_INJECT_FAULT; marks the main graph's nodes it selects. */
static int setup_fault_injection(onyx_session *s, const onyx_session_options *opts,
                                 ox_error *err) {
    const char *spec = opts && opts->fault_spec ? opts->fault_spec : getenv("ONYX_INJECT_FAULT");
    if (ox_fault_spec_parse(&s->fault, spec, s->eps, s->n_eps, err) != 0) return -1;
    if (!s->fault.node) return 0;
    ox_graph_exec *ge = &s->main;
    const ir_graph *g = ge->graph;
    if (!(ge->inject = calloc((size_t)g->n_nodes + 1, 1)))
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    int hits = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        ge->inject[i] = (unsigned char)ox_fault_spec_matches(&s->fault, &g->nodes[i],
                                                             s->eps[g->nodes[i].ep]);
        hits += ge->inject[i];
    }
    ox_log(s->log_level, ONYX_LOG_WARNING,
           "fault injection (a testing aid): outputs of node '%s'%s%s are perturbed in every run; "
           "%d node%s selected",
           s->fault.node, s->fault.provider ? " on provider " : "",
           s->fault.provider ? s->fault.provider : "", hits, hits == 1 ? "" : "s");
    return 0;
}

static int create(onyx_env *env, const char *path, const void *data, size_t size,
                  const char *base_dir, const onyx_session_options *opts, onyx_session **out,
                  ox_error *err);

/* Shadow runs (verify/shadow.c): the reference session over the same
 * model, and the per-node switch that moves a wrong device kernel to the
 * CPU. */
static int setup_shadow_runs(onyx_session *s, const char *path, const void *data, size_t size,
                             const char *base_dir, const onyx_session_options *opts,
                             ox_error *err) {
    if (!opts || !opts->verify_runs) return 0;
    onyx_session_options ro = {0};
    char cpu[] = "cpu", none[] = "";
    ro.threads = opts->threads;
    ro.n_providers = 1;
    ro.providers[0] = cpu;
    ro.opt_level = ONYX_OPT_NONE;
    ro.log_level = s->log_level;
    ro.log_level_set = 1;
    ro.external_data_dir = opts->external_data_dir;
    ro.memory_limit = opts->memory_limit;
    ro.fault_spec = none;
    if (create(s->env, path, data, size, base_dir, &ro, &s->reference, err) != 0) {
        ox_error_prefix(err, "the reference session of shadow runs");
        return -1;
    }
    s->verify_runs = opts->verify_runs;
    s->verify_atol = opts->verify_atol;
    s->verify_rtol = opts->verify_rtol;
    pthread_mutex_init(&s->verify_lock, NULL);
    return 0;
}

/* The artefact file of an optimized model on this machine
 * (format/artefacts.h), keyed on the source model's digest, the level,
 * whether the CPU is alone (the graph differs), the CPU's key (machine and
 * kernel variant) and onyx's version. Only for optimized files: a plain
 * .onnx has no digest at hand, and computing one costs about what the
 * packing saves. A bad file is ignored here and rewritten after. */
static void open_artefacts(onyx_session *s, onyx_opt_level level, int cpu_only) {
    if (!s->model->compiled || !s->faults.cache_dir) return;
    ox_ep *cpu = s->eps[s->n_eps - 1];
    char source[65], key[OX_ARTEFACT_KEY_BYTES], name[65], path[4096];
    ox_sha256_hex(s->model->source_sha256, source);
    int n = snprintf(key, sizeof key, "%s L%d %s %s onyx-%s", source, (int)level,
                     cpu_only ? "cpu-only" : "with-devices",
                     cpu->ops->device_key ? cpu->ops->device_key(cpu) : "cpu", onyx_version());
    if (n < 0 || (size_t)n >= sizeof key) return;
    uint8_t digest[32];
    ox_sha256_digest(key, (size_t)n, digest);
    ox_sha256_hex(digest, name);
    n = snprintf(path, sizeof path, "%s/artefacts/cpu-%.40s.pack", s->faults.cache_dir, name);
    if (n < 0 || (size_t)n >= sizeof path) return;
    const char *why = NULL;
    s->artefacts = ox_artefacts_open(path, key, &why);
    if (why && strcmp(why, "none yet") != 0)
        ox_log(s->log_level, ONYX_LOG_INFO, "artefact cache '%s' ignored (%s): it is made again",
               path, why);
}

/* After the kernels are prepared: what they reused, and a new file when
 * they computed anything (the cache only saves time: a failure to write
 * is a warning). */
static void save_artefacts(onyx_session *s) {
    if (!s->artefacts) return;
    size_t found = ox_artefacts_found(s->artefacts), added = ox_artefacts_added(s->artefacts);
    if (found)
        ox_log(s->log_level, ONYX_LOG_INFO, "artefact cache: %zu prepacked weights reused", found);
    ox_error err = {0};
    if (added && ox_artefacts_save(s->artefacts, &err) != 0)
        ox_log(s->log_level, ONYX_LOG_WARNING, "artefact cache not saved: %s", err.msg);
    else if (added)
        ox_log(s->log_level, ONYX_LOG_INFO, "artefact cache: %zu prepacked weights saved", added);
}

/* Loads from a file (path set) or from memory. */
static int create(onyx_env *env, const char *path, const void *data, size_t size,
                  const char *base_dir, const onyx_session_options *opts, onyx_session **out,
                  ox_error *err) {
    *out = NULL;
    onyx_session *s = calloc(1, sizeof *s);
    if (!s) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    s->env = env;
    s->mem.limit = opts ? opts->memory_limit : 0;
    atomic_init(&s->mem.in_use, 0);
    s->log_level = opts && opts->log_level_set ? opts->log_level : env->log_level;
    if (opts && opts->external_data_dir) base_dir = opts->external_data_dir;
    if ((path ? ox_load_model_file(path, base_dir, &s->model, err)
              : ox_load_model_buffer(data, size, base_dir, opts && opts->borrow_buffer, &s->model,
                                     err)) != 0)
        goto fail;
    s->graph = s->model->graph;
    if (ir_validate(s->model, err) != 0) goto fail;
    if (ir_resolve_implicit_inputs(s->graph, err) != 0) goto fail;
    int threads = opts && opts->threads > 0 ? opts->threads : ox_online_cores();
    s->pool = ox_threadpool_create(threads);
    if (!s->pool) {
        ox_fail(err, ONYX_OUT_OF_MEMORY, "cannot start %d threads", threads);
        goto fail;
    }
    /* the cache folder first: providers keep their per-device caches there */
    s->faults.cache_dir = ox_cache_dir_resolve(opts ? opts->cache_dir : NULL);
    if (create_providers(s, opts, err) != 0) goto fail;
    /* an optimized file's graph is already at its level: the passes run
     * again for what depends on the providers (fusions into CPU-only
     * operators when the CPU is the only one) and find little else */
    onyx_opt_level level = opts ? opts->opt_level : ONYX_OPT_ALL;
    int portable = opts && opts->portable, cpu_only = s->n_eps == 1 && !portable;
    if (ox_optimize_logged(s->model, level, s->eps[s->n_eps - 1], s->eps, s->n_eps - 1, portable, s->pool,
                           s->log_level, err) != 0)
        goto fail;
    if (ir_infer_shapes(s->graph, err) != 0) goto fail;
    if (ox_faults_setup(s, err) != 0) goto fail;
    open_artefacts(s, level, cpu_only);
    if (build_exec(s, s->graph, &s->main, err) != 0) goto fail;
    if (build_subgraphs(s, s->graph, err) != 0) goto fail;
    save_artefacts(s);
    if (describe_io(s, err) != 0) goto fail;
    if (setup_fault_injection(s, opts, err) != 0) goto fail;
    if (setup_shadow_runs(s, path, data, size, base_dir, opts, err) != 0) goto fail;
    log_placement(s);
    *out = s;
    return 0;
fail:
    ox_session_free(s);
    return -1;
}

int ox_session_create(onyx_env *env, const void *data, size_t size, const char *base_dir,
                      const onyx_session_options *opts, onyx_session **out, ox_error *err) {
    return create(env, NULL, data, size, base_dir, opts, out, err);
}

int ox_session_create_file(onyx_env *env, const char *path, const char *base_dir,
                           const onyx_session_options *opts, onyx_session **out, ox_error *err) {
    return create(env, path, NULL, 0, base_dir, opts, out, err);
}

void ox_session_free(onyx_session *s) {
    if (!s) return;
    free_exec(s, &s->main);
    for (int i = 0; i < s->n_subs; i++) {
        free_exec(s, s->subs[i]);
        free(s->subs[i]);
    }
    free(s->subs);
    /* after the kernel states, which may point into its file */
    ox_artefacts_free(s->artefacts);
    for (int i = 0; i < s->n_eps; i++) s->eps[i]->ops->destroy(s->eps[i]);
    ox_threadpool_free(s->pool);
    ir_model_free(s->model);
    ox_fault_spec_free(&s->fault);
    ox_faults_free(&s->faults);
    if (s->reference) {
        ox_session_free(s->reference);
        pthread_mutex_destroy(&s->verify_lock);
    }
    free(s->in_values);
    free(s->in_info);
    free(s->out_info);
    free(s);
}
