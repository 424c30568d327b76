/* The public C API: argument checks and conversion of internal errors to
 * statuses; all work happens in the runtime. */
#include "onyx.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/status.h"
#include "format/writer.h"
#include "core/strmap.h"
#include "core/tensor.h"
#include "ep/ep.h"
#include "loader/loader.h"
#include "runtime/compile.h"
#include "runtime/session.h"
#ifdef ONYX_HAVE_VULKAN
#include "ep/vulkan/vk_ep.h"
#endif

#define CHECK_ARG(cond, what) \
    do { \
        if (!(cond)) return ox_status_new(ONYX_INVALID_ARGUMENT, "%s: %s", __func__, what); \
    } while (0)

const char *onyx_version(void) { return ONYX_VERSION_STRING; }

const char *onyx_dtype_name(onyx_dtype dtype) { return ox_dtype_name(dtype); }

onyx_dtype onyx_dtype_from_name(const char *name) {
    return name ? ox_dtype_from_name(name) : ONYX_UNDEFINED;
}

/* ---- environment ---- */

onyx_status *onyx_env_create(onyx_env **out) {
    CHECK_ARG(out, "out is NULL");
    *out = NULL;
    onyx_env *env = calloc(1, sizeof *env);
    if (!env) return ox_status_new(ONYX_OUT_OF_MEMORY, "out of memory");
    env->log_level = ONYX_LOG_WARNING;
    ox_error err = {0};
    if (ox_env_add_provider(env, "cpu", ox_cpu_ep_create, &err) != 0 ||
        ox_env_set_device_lister(env, "cpu", ox_cpu_list_devices, &err) != 0) {
        free(env);
        return ox_status_from_error(&err);
    }
#ifdef ONYX_HAVE_VULKAN
    /* offered whenever built; whether a device is there is found out when
     * a session creates it */
    if (ox_env_add_provider(env, "vulkan", ox_vulkan_ep_create, &err) != 0 ||
        ox_env_set_device_lister(env, "vulkan", ox_vulkan_list_devices, &err) != 0) {
        free(env);
        return ox_status_from_error(&err);
    }
#endif
    *out = env;
    return NULL;
}

void onyx_env_free(onyx_env *env) { free(env); }

onyx_status *onyx_env_set_log_level(onyx_env *env, onyx_log_level level) {
    CHECK_ARG(env, "env is NULL");
    CHECK_ARG(level >= ONYX_LOG_ERROR && level <= ONYX_LOG_VERBOSE, "unknown log level");
    env->log_level = level;
    return NULL;
}

size_t onyx_env_provider_count(const onyx_env *env) { return env ? (size_t)env->n_providers : 0; }

const char *onyx_env_provider_name(const onyx_env *env, size_t index) {
    return env && index < (size_t)env->n_providers ? env->providers[index].name : NULL;
}

/* ---- devices ---- */

struct onyx_device_list {
    ox_device_list l;
};

onyx_status *onyx_env_list_devices(const onyx_env *env, const char *provider, onyx_device_list **out) {
    CHECK_ARG(out, "out is NULL");
    *out = NULL;
    CHECK_ARG(env, "env is NULL");
    CHECK_ARG(provider, "provider is NULL");
    const ox_provider_entry *e = NULL;
    char names[256] = "";
    size_t off = 0;
    for (int i = 0; i < env->n_providers; i++) {
        if (strcmp(env->providers[i].name, provider) == 0) e = &env->providers[i];
        if (off < sizeof names)
            off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", i ? ", " : "",
                                    env->providers[i].name);
    }
    if (!e)
        return ox_status_new(ONYX_INVALID_ARGUMENT, "unknown execution provider '%s' (this build offers: %s)",
                             provider, names);
    if (!e->list_devices)
        return ox_status_new(ONYX_NOT_IMPLEMENTED, "provider '%s' cannot list its devices", provider);
    onyx_device_list *l = calloc(1, sizeof *l);
    if (!l) return ox_status_new(ONYX_OUT_OF_MEMORY, "out of memory");
    ox_error err = {0};
    if (e->list_devices(&l->l, &err) != 0) {
        onyx_device_list_free(l);
        return ox_status_from_error(&err);
    }
    *out = l;
    return NULL;
}

size_t onyx_device_list_count(const onyx_device_list *list) { return list ? (size_t)list->l.n : 0; }

size_t onyx_device_property_count(const onyx_device_list *list, size_t device) {
    return list && device < (size_t)list->l.n ? (size_t)list->l.devs[device].n : 0;
}

onyx_status *onyx_device_property(const onyx_device_list *list, size_t device, size_t index,
                                  const char **key, const char **value) {
    CHECK_ARG(list, "list is NULL");
    CHECK_ARG(key && value, "key or value is NULL");
    CHECK_ARG(device < (size_t)list->l.n, "device index out of range");
    CHECK_ARG(index < (size_t)list->l.devs[device].n, "property index out of range");
    *key = list->l.devs[device].props[index].key;
    *value = list->l.devs[device].props[index].value;
    return NULL;
}

const char *onyx_device_property_find(const onyx_device_list *list, size_t device, const char *key) {
    if (!list || !key || device >= (size_t)list->l.n) return NULL;
    const ox_device_info *d = &list->l.devs[device];
    for (int i = 0; i < d->n; i++)
        if (strcmp(d->props[i].key, key) == 0) return d->props[i].value;
    return NULL;
}

void onyx_device_list_free(onyx_device_list *list) {
    if (!list) return;
    ox_devlist_free(&list->l);
    free(list);
}

/* ---- options ---- */

onyx_status *onyx_session_options_create(onyx_session_options **out) {
    CHECK_ARG(out, "out is NULL");
    *out = calloc(1, sizeof **out);
    if (!*out) return ox_status_new(ONYX_OUT_OF_MEMORY, "out of memory");
    (*out)->opt_level = ONYX_OPT_ALL;
    return NULL;
}

void onyx_session_options_free(onyx_session_options *opts) {
    if (!opts) return;
    for (int i = 0; i < opts->n_ep_options; i++) {
        free(opts->ep_options[i].provider);
        free(opts->ep_options[i].key);
        free(opts->ep_options[i].value);
    }
    free(opts->ep_options);
    for (int i = 0; i < opts->n_providers; i++) free(opts->providers[i]);
    free(opts->external_data_dir);
    free(opts->fault_spec);
    free(opts->cache_dir);
    free(opts);
}

onyx_status *onyx_session_options_set_threads(onyx_session_options *opts, int threads) {
    CHECK_ARG(opts, "opts is NULL");
    CHECK_ARG(threads >= 0 && threads <= 1024, "threads must be 0 (one per core) to 1024");
    opts->threads = threads;
    return NULL;
}

onyx_status *onyx_session_options_set_providers(onyx_session_options *opts,
                                                const char *const *names, size_t count) {
    CHECK_ARG(opts, "opts is NULL");
    CHECK_ARG(count == 0 || names, "names is NULL");
    CHECK_ARG(count <= OX_MAX_EPS, "too many providers (at most 8)");
    for (size_t i = 0; i < count; i++) {
        CHECK_ARG(names[i] && names[i][0], "empty provider name");
        for (size_t j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0)
                return ox_status_new(ONYX_INVALID_ARGUMENT, "provider '%s' is listed twice",
                                     names[i]);
    }
    for (int i = 0; i < opts->n_providers; i++) free(opts->providers[i]);
    opts->n_providers = 0;
    for (size_t i = 0; i < count; i++) {
        opts->providers[i] = ox_strdup(names[i]);
        if (!opts->providers[i]) return ox_status_new(ONYX_OUT_OF_MEMORY, "out of memory");
        opts->n_providers++;
    }
    return NULL;
}

onyx_status *onyx_session_options_set_provider_option(onyx_session_options *opts, const char *provider,
                                                      const char *key, const char *value) {
    CHECK_ARG(opts, "opts is NULL");
    CHECK_ARG(provider && provider[0], "empty provider name");
    CHECK_ARG(key && key[0], "empty option name");
    CHECK_ARG(value, "value is NULL");
    char *copy = ox_strdup(value);
    if (!copy) return ox_status_new(ONYX_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < opts->n_ep_options; i++) {
        struct ox_provider_option *o = &opts->ep_options[i];
        if (strcmp(o->provider, provider) == 0 && strcmp(o->key, key) == 0) {
            free(o->value);
            o->value = copy;
            return NULL;
        }
    }
    if (opts->n_ep_options == 64) {
        free(copy);
        return ox_status_new(ONYX_INVALID_ARGUMENT, "too many provider options (at most 64)");
    }
    struct ox_provider_option *grown =
        realloc(opts->ep_options, ((size_t)opts->n_ep_options + 1) * sizeof *grown);
    if (grown) opts->ep_options = grown;
    struct ox_provider_option o = {ox_strdup(provider), ox_strdup(key), copy};
    if (!grown || !o.provider || !o.key) {
        free(o.provider);
        free(o.key);
        free(copy);
        return ox_status_new(ONYX_OUT_OF_MEMORY, "out of memory");
    }
    opts->ep_options[opts->n_ep_options++] = o;
    return NULL;
}

onyx_status *onyx_session_options_set_optimization_level(onyx_session_options *opts,
                                                         onyx_opt_level level) {
    CHECK_ARG(opts, "opts is NULL");
    CHECK_ARG(level >= ONYX_OPT_NONE && level <= ONYX_OPT_ALL, "unknown optimization level");
    opts->opt_level = level;
    return NULL;
}

onyx_status *onyx_session_options_set_log_level(onyx_session_options *opts, onyx_log_level level) {
    CHECK_ARG(opts, "opts is NULL");
    CHECK_ARG(level >= ONYX_LOG_ERROR && level <= ONYX_LOG_VERBOSE, "unknown log level");
    opts->log_level = level;
    opts->log_level_set = 1;
    return NULL;
}

onyx_status *onyx_session_options_set_memory_limit(onyx_session_options *opts, size_t bytes) {
    CHECK_ARG(opts, "opts is NULL");
    opts->memory_limit = bytes;
    return NULL;
}

onyx_status *onyx_session_options_set_fault_injection(onyx_session_options *opts,
                                                      const char *spec) {
    CHECK_ARG(opts, "opts is NULL");
    char *copy = ox_strdup(spec ? spec : "");
    if (!copy) return ox_status_new(ONYX_OUT_OF_MEMORY, "out of memory");
    free(opts->fault_spec);
    opts->fault_spec = copy;
    return NULL;
}

onyx_status *onyx_session_options_set_cache_dir(onyx_session_options *opts, const char *dir) {
    CHECK_ARG(opts && dir, "NULL argument");
    char *copy = ox_strdup(dir);
    if (!copy) return ox_status_new(ONYX_OUT_OF_MEMORY, "out of memory");
    free(opts->cache_dir);
    opts->cache_dir = copy;
    return NULL;
}

onyx_status *onyx_session_options_set_borrow_buffer(onyx_session_options *opts, int borrow) {
    CHECK_ARG(opts, "opts is NULL");
    opts->borrow_buffer = borrow != 0;
    return NULL;
}

onyx_status *onyx_compile_model(onyx_env *env, const char *model_path, const char *out_path,
                                onyx_opt_level level, onyx_model_format format,
                                size_t external_data_min) {
    CHECK_ARG(env && model_path && out_path, "NULL argument");
    ox_error err = {0};
    if (ox_compile_model(env, model_path, out_path, level, format, external_data_min, &err) != 0) {
        ox_error_prefix(&err, "%s", model_path);
        return ox_status_from_error(&err);
    }
    return NULL;
}

onyx_status *onyx_session_options_set_verify_first_runs(onyx_session_options *opts,
                                                        uint64_t runs, double atol, double rtol) {
    CHECK_ARG(opts, "opts is NULL");
    CHECK_ARG(atol >= 0.0 && rtol >= 0.0, "tolerances must be non-negative numbers");
    opts->verify_runs = runs;
    opts->verify_atol = atol;
    opts->verify_rtol = rtol;
    return NULL;
}

onyx_status *onyx_session_options_set_external_data_dir(onyx_session_options *opts,
                                                        const char *dir) {
    CHECK_ARG(opts, "opts is NULL");
    free(opts->external_data_dir);
    opts->external_data_dir = NULL;
    if (dir && !(opts->external_data_dir = ox_strdup(dir)))
        return ox_status_new(ONYX_OUT_OF_MEMORY, "out of memory");
    return NULL;
}

/* ---- sessions ---- */

onyx_status *onyx_session_create(onyx_env *env, const char *model_path,
                                 const onyx_session_options *opts, onyx_session **out) {
    CHECK_ARG(out, "out is NULL");
    *out = NULL;
    CHECK_ARG(env, "env is NULL");
    CHECK_ARG(model_path, "model_path is NULL");
    ox_error err = {0};
    char *dir_copy = ox_strdup(model_path);
    if (!dir_copy) return ox_status_new(ONYX_OUT_OF_MEMORY, "out of memory");
    int rc = ox_session_create_file(env, model_path, dirname(dir_copy), opts, out, &err);
    free(dir_copy);
    if (rc != 0) {
        ox_error_prefix(&err, "%s", model_path);
        return ox_status_from_error(&err);
    }
    return NULL;
}

onyx_status *onyx_session_create_from_buffer(onyx_env *env, const void *data, size_t size,
                                             const onyx_session_options *opts,
                                             onyx_session **out) {
    CHECK_ARG(out, "out is NULL");
    *out = NULL;
    CHECK_ARG(env, "env is NULL");
    CHECK_ARG(data || size == 0, "data is NULL");
    ox_error err = {0};
    if (ox_session_create(env, data, size, NULL, opts, out, &err) != 0)
        return ox_status_from_error(&err);
    return NULL;
}

void onyx_session_free(onyx_session *session) { ox_session_free(session); }

size_t onyx_session_input_count(const onyx_session *s) { return s ? s->n_in : 0; }
size_t onyx_session_output_count(const onyx_session *s) { return s ? s->n_out : 0; }

onyx_status *onyx_session_input_info(const onyx_session *s, size_t index, onyx_value_info *out) {
    CHECK_ARG(s && out, "session or out is NULL");
    if (index >= s->n_in)
        return ox_status_new(ONYX_INVALID_ARGUMENT, "input index %zu out of range (the model has %zu)",
                             index, s->n_in);
    *out = s->in_info[index];
    return NULL;
}

onyx_status *onyx_session_output_info(const onyx_session *s, size_t index, onyx_value_info *out) {
    CHECK_ARG(s && out, "session or out is NULL");
    if (index >= s->n_out)
        return ox_status_new(ONYX_INVALID_ARGUMENT, "output index %zu out of range (the model has %zu)",
                             index, s->n_out);
    *out = s->out_info[index];
    return NULL;
}

size_t onyx_session_node_count(const onyx_session *s) { return s ? (size_t)s->graph->n_nodes : 0; }

static const ir_node *exec_node_at(const onyx_session *s, size_t i) {
    if (!s || i >= (size_t)s->graph->n_nodes) return NULL;
    return &s->graph->nodes[s->main.exec_nodes[i]];
}

const char *onyx_session_node_name(const onyx_session *s, size_t i) {
    const ir_node *n = exec_node_at(s, i);
    return n ? n->name : NULL;
}

const char *onyx_session_node_op_type(const onyx_session *s, size_t i) {
    const ir_node *n = exec_node_at(s, i);
    return n ? n->op_type : NULL;
}

const char *onyx_session_node_domain(const onyx_session *s, size_t i) {
    const ir_node *n = exec_node_at(s, i);
    return n ? n->domain : NULL;
}

const char *onyx_session_node_provider(const onyx_session *s, size_t i) {
    const ir_node *n = exec_node_at(s, i);
    return n ? s->eps[n->ep]->name : NULL;
}

size_t onyx_session_node_input_count(const onyx_session *s, size_t i) {
    const ir_node *n = exec_node_at(s, i);
    return n ? (size_t)n->n_inputs : 0;
}

size_t onyx_session_node_output_count(const onyx_session *s, size_t i) {
    const ir_node *n = exec_node_at(s, i);
    return n ? (size_t)n->n_outputs : 0;
}

static const char *value_name(const onyx_session *s, int v) {
    return v >= 0 ? s->graph->values[v].name : "";
}

const char *onyx_session_node_input_name(const onyx_session *s, size_t i, size_t k) {
    const ir_node *n = exec_node_at(s, i);
    return n && k < (size_t)n->n_inputs ? value_name(s, n->inputs[k]) : NULL;
}

const char *onyx_session_node_output_name(const onyx_session *s, size_t i, size_t k) {
    const ir_node *n = exec_node_at(s, i);
    return n && k < (size_t)n->n_outputs ? value_name(s, n->outputs[k]) : NULL;
}

size_t onyx_session_node_origin_count(const onyx_session *s, size_t i) {
    const ir_node *n = exec_node_at(s, i);
    return n ? (size_t)n->n_origins : 0;
}

const char *onyx_session_node_origin(const onyx_session *s, size_t i, size_t k) {
    const ir_node *n = exec_node_at(s, i);
    return n && k < (size_t)n->n_origins ? n->origins[k] : NULL;
}

/* The node at execution position i for a text getter, with *size 0 when
 * there is no buffer; NULL (buf emptied) when i is out of range. */
static const ir_node *text_node(const onyx_session *s, size_t i, char *buf, size_t *size) {
    if (!buf) *size = 0;
    const ir_node *n = exec_node_at(s, i);
    if (!n && *size) buf[0] = '\0';
    return n;
}

size_t onyx_session_node_attributes(const onyx_session *s, size_t i, char *buf, size_t size) {
    const ir_node *n = text_node(s, i, buf, &size);
    return n ? ir_node_format_attrs(n, buf, size) : 0;
}

size_t onyx_session_node_kernel(const onyx_session *s, size_t i, char *buf, size_t size) {
    const ir_node *n = text_node(s, i, buf, &size);
    if (!n) return 0;
    int node = s->main.exec_nodes[i];
    const ox_kernel_def *k = s->main.kernels[node];
    const char *variant = k && k->describe ? k->describe(s->main.states[node]) : NULL;
    int w = snprintf(buf, size, "%s %s%s%s%s%s", s->eps[n->ep]->name, n->domain[0] ? n->domain : "",
                     n->domain[0] ? "." : "", k ? k->name : n->op_type, variant ? ": " : "",
                     variant ? variant : "");
    return w > 0 ? (size_t)w : 0;
}

onyx_status *onyx_session_verify_stats(const onyx_session *s, onyx_verify_stats *out) {
    CHECK_ARG(s && out, "NULL argument");
    memset(out, 0, sizeof *out);
    onyx_session *m = (onyx_session *)s; /* atomics are read, not written */
    if (!m->reference) return NULL;
    out->runs_verified = atomic_load(&m->verify_done);
    out->mismatches = atomic_load(&m->verify_mismatches);
    out->nodes_disabled = atomic_load(&m->verify_disabled);
    out->on_reference = atomic_load(&m->on_reference);
    return NULL;
}

size_t onyx_session_verify_report(onyx_session *s, char *buf, size_t size) {
    if (!buf) size = 0;
    if (size) buf[0] = '\0';
    if (!s || !s->reference) return 0;
    pthread_mutex_lock(&s->verify_lock);
    int w = snprintf(buf, size, "%s", s->verify_report);
    pthread_mutex_unlock(&s->verify_lock);
    return w > 0 ? (size_t)w : 0;
}

onyx_status *onyx_session_save_subgraph(const onyx_session *s, const char *const *names,
                                        size_t count, const char *path) {
    CHECK_ARG(s && path && (names || count == 0), "NULL argument");
    CHECK_ARG(count > 0, "no nodes named");
    const ir_graph *g = s->graph;
    unsigned char *keep = calloc((size_t)g->n_nodes + 1, 1);
    if (!keep) return ox_status_new(ONYX_OUT_OF_MEMORY, "out of memory");
    onyx_status *st = NULL;
    for (size_t k = 0; k < count && !st; k++) {
        int found = 0;
        for (int i = 0; i < g->n_nodes; i++)
            if (names[k] && strcmp(g->nodes[i].name, names[k]) == 0) keep[i] = 1, found = 1;
        if (!found)
            st = ox_status_new(ONYX_NOT_FOUND, "the session's graph has no node '%s'",
                               names[k] ? names[k] : "(null)");
    }
    uint8_t *buf = NULL;
    size_t len = 0;
    ox_error err = {0};
    if (!st && ox_graph_write_subset(s->model, g, keep, &buf, &len, &err) != 0)
        st = ox_status_from_error(&err);
    free(keep);
    if (!st) {
        FILE *f = fopen(path, "wb");
        int ok = f && fwrite(buf, 1, len, f) == len;
        if (f && fclose(f) != 0) ok = 0;
        if (!ok) st = ox_status_new(ONYX_IO_ERROR, "cannot write '%s': %s", path, strerror(errno));
    }
    free(buf);
    return st;
}

onyx_status *onyx_session_provider_stats(const onyx_session *s, const char *provider,
                                         onyx_provider_stats *out) {
    CHECK_ARG(s && provider && out, "NULL argument");
    memset(out, 0, sizeof *out);
    for (int e = 0; e < s->n_eps; e++) {
        ox_ep *ep = s->eps[e];
        if (strcmp(ep->name, provider) != 0) continue;
        if (ep->ops->get_stats) ep->ops->get_stats(ep, out);
        out->cpu_fallbacks = atomic_load(&((onyx_session *)s)->cpu_fallbacks[e]);
        onyx_session *ms = (onyx_session *)s;
        out->device_faults = ep->ops->fault_count ? ep->ops->fault_count(ep) : 0;
        out->runs_rescued = atomic_load(&ms->faults.rescued[e]);
        out->nodes_denied = atomic_load(&ms->faults.denied[e]);
        return NULL;
    }
    return ox_status_new(ONYX_INVALID_ARGUMENT, "the session does not use provider '%s'", provider);
}

size_t onyx_session_opset_count(const onyx_session *s) { return s ? (size_t)s->model->n_opsets : 0; }

onyx_status *onyx_session_opset(const onyx_session *s, size_t index, const char **domain,
                                int64_t *version) {
    CHECK_ARG(s && domain && version, "NULL argument");
    if (index >= (size_t)s->model->n_opsets)
        return ox_status_new(ONYX_INVALID_ARGUMENT, "opset index %zu out of range", index);
    *domain = s->model->opsets[index].domain;
    *version = s->model->opsets[index].version;
    return NULL;
}

int64_t onyx_session_parameter_count(const onyx_session *s) { return s ? s->param_count : 0; }
int64_t onyx_session_parameter_bytes(const onyx_session *s) { return s ? s->param_bytes : 0; }

/* Sub-byte inputs are held one element per byte (see onyx.h); a byte
 * outside the type's range (say a packed pair, or int4 -1 as 0x0f) would
 * silently read as another value, so it is refused here. */
static onyx_status *check_subbyte_input(const char *name, const onyx_tensor *t) {
    if (!t || t->kind != OX_KIND_TENSOR || t->device != 0 || !ox_dtype_is_subbyte(t->dtype))
        return NULL;
    int bits = ox_dtype_bits(t->dtype);
    int is_signed = t->dtype == ONYX_INT4 || t->dtype == ONYX_INT2;
    int lo = is_signed ? -(1 << (bits - 1)) : 0, hi = is_signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
    const uint8_t *d = t->data;
    int64_t n = ox_tensor_numel(t);
    for (int64_t i = 0; d && i < n; i++) {
        int v = is_signed ? (int)(int8_t)d[i] : (int)d[i];
        if (v < lo || v > hi)
            return ox_status_new(ONYX_INVALID_ARGUMENT,
                                 "input '%s': element %lld holds byte 0x%02x, outside %s's range; "
                                 "onyx holds %s unpacked, one %s per byte (%d..%d)",
                                 name ? name : "?", (long long)i, d[i], ox_dtype_name(t->dtype),
                                 ox_dtype_name(t->dtype),
                                 is_signed ? "sign-extended value" : "value", lo, hi);
    }
    return NULL;
}

onyx_status *onyx_session_run_with_options(onyx_session *session,
                                           const onyx_run_options *run_options,
                                           const char *const *input_names,
                                           const onyx_tensor *const *inputs, size_t input_count,
                                           const char *const *output_names, onyx_tensor **outputs,
                                           size_t output_count) {
    CHECK_ARG(session, "session is NULL");
    for (size_t i = 0; inputs && i < input_count; i++) {
        onyx_status *st = check_subbyte_input(input_names ? input_names[i] : NULL, inputs[i]);
        if (st) return st;
    }
    ox_error err = {0};
    if (ox_session_run(session, run_options, input_names, inputs, input_count, output_names,
                       outputs, output_count, &err) != 0)
        return ox_status_from_error(&err);
    return NULL;
}

onyx_status *onyx_session_run(onyx_session *session, const char *const *input_names,
                              const onyx_tensor *const *inputs, size_t input_count,
                              const char *const *output_names, onyx_tensor **outputs,
                              size_t output_count) {
    return onyx_session_run_with_options(session, NULL, input_names, inputs, input_count,
                                         output_names, outputs, output_count);
}

size_t onyx_session_memory_in_use(const onyx_session *session) {
    return session ? atomic_load_explicit(&session->mem.in_use, memory_order_relaxed) : 0;
}

/* ---- run options ---- */

onyx_status *onyx_run_options_create(onyx_run_options **out) {
    CHECK_ARG(out, "out is NULL");
    *out = malloc(sizeof **out);
    if (!*out) return ox_status_new(ONYX_OUT_OF_MEMORY, "out of memory");
    atomic_init(&(*out)->cancelled, 0);
    atomic_init(&(*out)->time_limit_ms, 0);
    (*out)->capture = NULL;
    (*out)->capture_user = NULL;
    (*out)->node_ns = NULL;
    (*out)->node_ns_count = 0;
    return NULL;
}

onyx_status *onyx_run_options_set_capture(onyx_run_options *opts, onyx_capture_fn fn,
                                          void *user) {
    CHECK_ARG(opts, "opts is NULL");
    opts->capture = fn;
    opts->capture_user = fn ? user : NULL;
    return NULL;
}

onyx_status *onyx_run_options_set_node_timing(onyx_run_options *opts, uint64_t *ns_per_node,
                                              size_t count) {
    CHECK_ARG(opts, "opts is NULL");
    CHECK_ARG(ns_per_node || count == 0, "ns_per_node is NULL but count is not 0");
    opts->node_ns = ns_per_node;
    opts->node_ns_count = ns_per_node ? count : 0;
    return NULL;
}

void onyx_run_options_free(onyx_run_options *opts) { free(opts); }

onyx_status *onyx_run_options_set_time_limit_ms(onyx_run_options *opts, uint64_t ms) {
    CHECK_ARG(opts, "opts is NULL");
    atomic_store_explicit(&opts->time_limit_ms, ms, memory_order_relaxed);
    return NULL;
}

onyx_status *onyx_run_options_cancel(onyx_run_options *opts) {
    CHECK_ARG(opts, "opts is NULL");
    atomic_store_explicit(&opts->cancelled, 1, memory_order_relaxed);
    return NULL;
}

onyx_status *onyx_run_options_reset_cancel(onyx_run_options *opts) {
    CHECK_ARG(opts, "opts is NULL");
    atomic_store_explicit(&opts->cancelled, 0, memory_order_relaxed);
    return NULL;
}

int onyx_run_options_is_cancelled(const onyx_run_options *opts) {
    return opts ? atomic_load_explicit(&opts->cancelled, memory_order_relaxed) : 0;
}

/* ---- tensors ---- */

onyx_status *onyx_tensor_create(onyx_dtype dtype, const int64_t *dims, int rank, onyx_tensor **out) {
    CHECK_ARG(out, "out is NULL");
    *out = NULL;
    CHECK_ARG(rank == 0 || dims, "dims is NULL");
    CHECK_ARG(ox_dtype_valid((int)dtype), "unknown dtype");
    ox_error err = {0};
    *out = ox_tensor_new(dtype, dims, rank, &err);
    return *out ? NULL : ox_status_from_error(&err);
}

onyx_status *onyx_tensor_wrap(onyx_dtype dtype, const int64_t *dims, int rank, void *data,
                              size_t nbytes, onyx_tensor **out) {
    CHECK_ARG(out, "out is NULL");
    *out = NULL;
    CHECK_ARG(rank == 0 || dims, "dims is NULL");
    CHECK_ARG(ox_dtype_valid((int)dtype), "unknown dtype");
    CHECK_ARG(dtype != ONYX_STRING, "string tensors cannot wrap caller memory; use onyx_tensor_create");
    ox_error err = {0};
    size_t need;
    if (ox_bytes_for(dtype, dims, rank, &need, &err) != 0) return ox_status_from_error(&err);
    if (need != nbytes)
        return ox_status_new(ONYX_INVALID_ARGUMENT,
                             "buffer has %zu bytes but a %s tensor of this shape needs %zu", nbytes,
                             ox_dtype_name(dtype), need);
    CHECK_ARG(data || need == 0, "data is NULL");
    *out = ox_tensor_wrap(dtype, dims, rank, data, &err);
    return *out ? NULL : ox_status_from_error(&err);
}

void onyx_tensor_free(onyx_tensor *t) { ox_tensor_free(t); }
onyx_value_kind onyx_tensor_kind(const onyx_tensor *t) { return t ? (onyx_value_kind)t->kind : ONYX_KIND_TENSOR; }
onyx_dtype onyx_tensor_dtype(const onyx_tensor *t) {
    if (!t) return ONYX_UNDEFINED;
    return t->kind == OX_KIND_TENSOR ? t->dtype : t->elem_dtype;
}
int onyx_tensor_rank(const onyx_tensor *t) { return t && t->kind == OX_KIND_TENSOR ? t->rank : 0; }
const int64_t *onyx_tensor_dims(const onyx_tensor *t) { return t ? t->dims : NULL; }
int64_t onyx_tensor_numel(const onyx_tensor *t) {
    return t && t->kind == OX_KIND_TENSOR ? ox_tensor_numel(t) : 0;
}
void *onyx_tensor_data(onyx_tensor *t) { return t ? t->data : NULL; }
size_t onyx_tensor_nbytes(const onyx_tensor *t) { return t ? t->nbytes : 0; }

const char *onyx_tensor_string(const onyx_tensor *t, int64_t index) {
    if (!t || t->kind != OX_KIND_TENSOR || t->dtype != ONYX_STRING || index < 0 ||
        index >= ox_tensor_numel(t))
        return NULL;
    const char *s = ((char *const *)t->data)[index];
    return s ? s : "";
}

onyx_status *onyx_tensor_set_string(onyx_tensor *t, int64_t index, const char *value) {
    CHECK_ARG(t && value, "NULL argument");
    CHECK_ARG(t->kind == OX_KIND_TENSOR && t->dtype == ONYX_STRING, "not a string tensor");
    if (index < 0 || index >= ox_tensor_numel(t))
        return ox_status_new(ONYX_INVALID_ARGUMENT, "index %lld out of range for %lld elements",
                             (long long)index, (long long)ox_tensor_numel(t));
    char *c = ox_strdup(value);
    if (!c) return ox_status_new(ONYX_OUT_OF_MEMORY, "out of memory");
    char **s = t->data;
    free(s[index]);
    s[index] = c;
    return NULL;
}

size_t onyx_tensor_item_count(const onyx_tensor *t) {
    return t && t->kind != OX_KIND_TENSOR ? (size_t)t->n_items : 0;
}

const onyx_tensor *onyx_tensor_item(const onyx_tensor *t, size_t index) {
    return t && t->kind != OX_KIND_TENSOR && index < (size_t)t->n_items ? t->items[index] : NULL;
}
