/* Device faults (see recover.h): the CPU rerun of a failed run, the
 * provider's recovery, and the per-device cache of nodes whose device
 * failed them.
 *
 * The cache is one text file per provider, device and onyx version,
 * <cache>/device-faults/<provider>-<device key>-onyx-<version>.txt, one
 * line per node: the model's fingerprint (16 hex digits), the node's
 * op type, its name and what happened, separated by tabs. Lines are
 * appended with one write each; a line that does not parse is skipped.
 * Deleting the file forgets every entry. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/files.h"
#include "core/log.h"
#include "core/strmap.h"
#include "runtime/session.h"

/* ---- the model's fingerprint ---- */

static uint64_t fnv(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static uint64_t fnv_str(uint64_t h, const char *s) {
    return fnv(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

/* Structure, names and weight shapes of the optimized graph: what makes
 * a node the same node in a later session of the same model (weights'
 * values do not change what a device fails on, and hashing them would
 * cost a pass over every byte at every creation). */
static uint64_t graph_fingerprint(const ir_graph *g) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        h = fnv_str(h, n->domain);
        h = fnv_str(h, n->op_type);
        h = fnv_str(h, n->name);
        for (int k = 0; k < n->n_inputs; k++)
            h = fnv_str(h, n->inputs[k] >= 0 ? g->values[n->inputs[k]].name : "-");
        for (int k = 0; k < n->n_outputs; k++)
            h = fnv_str(h, n->outputs[k] >= 0 ? g->values[n->outputs[k]].name : "-");
    }
    for (int v = 0; v < g->n_values; v++) {
        const ir_value *val = &g->values[v];
        if (!val->init && !val->is_input) continue;
        h = fnv_str(h, val->name);
        const ir_type *t = &val->type;
        h = fnv(h, &t->dtype, sizeof t->dtype);
        h = fnv(h, &t->rank, sizeof t->rank);
        if (t->rank > 0) h = fnv(h, t->dims, (size_t)t->rank * sizeof *t->dims);
    }
    return h;
}

/* ---- the cache files ---- */

/* Tabs and line ends would break the line format. */
static void clean_field(char *s) {
    for (; *s; s++)
        if (*s == '\t' || *s == '\n' || *s == '\r') *s = ' ';
}

static void free_cache(ox_fault_cache *c) {
    for (int i = 0; i < c->n; i++) {
        free(c->entries[i].op);
        free(c->entries[i].name);
        free(c->entries[i].what);
    }
    free(c->entries);
    free(c->path);
    memset(c, 0, sizeof *c);
}

/* Reads the entries of this model (fingerprint) from c->path. */
static int load_cache(ox_fault_cache *c, uint64_t fingerprint) {
    FILE *f = fopen(c->path, "r");
    if (!f) return 0; /* nothing recorded yet */
    char line[2048];
    int cap = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        line[strcspn(line, "\r\n")] = '\0';
        char *fp = strtok(line, "\t"), *op = strtok(NULL, "\t"), *name = strtok(NULL, "\t"),
             *what = strtok(NULL, "\t");
        if (!fp || !op || !name || strlen(fp) != 16) continue;
        char *end = NULL;
        uint64_t v = strtoull(fp, &end, 16);
        if (*end || v != fingerprint) continue;
        if (c->n == cap) {
            int ncap = cap ? cap * 2 : 8;
            ox_fault_entry *ne = realloc(c->entries, (size_t)ncap * sizeof *ne);
            if (!ne) break;
            c->entries = ne;
            cap = ncap;
        }
        ox_fault_entry *e = &c->entries[c->n];
        e->op = strdup(op);
        e->name = strdup(name);
        e->what = strdup(what ? what : "");
        if (!e->op || !e->name || !e->what) {
            free(e->op);
            free(e->name);
            free(e->what);
            break;
        }
        c->n++;
    }
    fclose(f);
    return 0;
}

/* Appends one entry; a cache that cannot be written is logged, not fatal. */
static void append_cache(onyx_session *s, ox_fault_cache *c, const ir_node *n, const char *what) {
    if (!c->path) return;
    char op[128], name[1024], w[256], line[1600];
    snprintf(op, sizeof op, "%s", n->op_type);
    snprintf(name, sizeof name, "%s", n->name ? n->name : "");
    snprintf(w, sizeof w, "%s", what);
    clean_field(op);
    clean_field(name);
    clean_field(w);
    int len = snprintf(line, sizeof line, "%016" PRIx64 "\t%s\t%s\t%s\n", s->faults.fingerprint, op,
                       name, w);
    if (len <= 0 || (size_t)len >= sizeof line) return;
    pthread_mutex_lock(&s->faults.lock);
    char *dir = strdup(c->path);
    int ok = 0, why = ENOMEM;
    if (dir) {
        char *slash = strrchr(dir, '/');
        if (slash) *slash = '\0';
        if (ox_mkdir_p(dir) == 0) {
            /* one write of one line in append mode: two processes adding
             * at once interleave whole lines */
            int fd = open(c->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
            if (fd >= 0) {
                ok = write(fd, line, (size_t)len) == (ssize_t)len;
                if (close(fd) != 0) ok = 0;
            }
        }
        /* read before the unlock and free, which may change it */
        why = errno;
        free(dir);
    }
    pthread_mutex_unlock(&s->faults.lock);
    if (!ok)
        ox_log(s->log_level, ONYX_LOG_WARNING, "cannot record the device fault in '%s': %s",
               c->path, strerror(why));
}

int ox_faults_setup(onyx_session *s, ox_error *err) {
    ox_fault_state *f = &s->faults;
    pthread_mutex_init(&f->lock, NULL);
    f->lock_made = 1;
    atomic_init(&f->host_only, 0);
    for (int e = 0; e <= OX_MAX_EPS; e++) {
        atomic_init(&f->rescued[e], 0);
        atomic_init(&f->denied[e], 0);
    }
    f->fingerprint = graph_fingerprint(s->graph);
    if (!s->main.force_host &&
        !(s->main.force_host = calloc((size_t)s->graph->n_nodes + 1, sizeof *s->main.force_host)))
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    for (int e = 0; e < s->n_eps && f->cache_dir; e++) {
        ox_ep *ep = s->eps[e];
        if (!ep->ops->device_key || !ep->ops->fault_count) continue; /* devices that fault */
        const char *key = ep->ops->device_key(ep);
        char path[4096];
        int len = snprintf(path, sizeof path, "%s/device-faults/%s-%s-onyx-%s.txt", f->cache_dir,
                           ep->name, key, onyx_version());
        if (len <= 0 || (size_t)len >= sizeof path) continue;
        if (!(f->caches[e].path = strdup(path))) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        load_cache(&f->caches[e], f->fingerprint);
    }
    return 0;
}

int ox_faults_veto(void *session, const ir_node *n, int e) {
    onyx_session *s = session;
    const ox_fault_cache *c = &s->faults.caches[e];
    for (int i = 0; i < c->n; i++) {
        if (strcmp(c->entries[i].op, n->op_type) != 0) continue;
        char name[1024];
        snprintf(name, sizeof name, "%s", n->name ? n->name : "");
        clean_field(name);
        if (strcmp(c->entries[i].name, name) != 0) continue;
        atomic_fetch_add(&s->faults.denied[e], 1);
        ox_log(s->log_level, ONYX_LOG_WARNING,
               "node '%s' (%s) is placed on the CPU, not on %s: its device failed running it "
               "before (%s; recorded in '%s')",
               name, n->op_type, s->eps[e]->name, c->entries[i].what, c->path);
        return 1;
    }
    return 0;
}

void ox_faults_free(ox_fault_state *f) {
    for (int e = 0; e <= OX_MAX_EPS; e++) free_cache(&f->caches[e]);
    free(f->cache_dir);
    f->cache_dir = NULL;
    if (f->lock_made) pthread_mutex_destroy(&f->lock);
    f->lock_made = 0;
}

/* ---- recovery ---- */

/* Frees the device copies of weights kept on ep (ox_ep_ops.recover calls
 * it while no run uses the device); runs upload them again. */
static void drop_resident(void *user, ox_ep *ep) {
    onyx_session *s = user;
    int idx = -1;
    for (int e = 0; e < s->n_eps; e++)
        if (s->eps[e] == ep) idx = e;
    for (int g = -1; g < s->n_subs; g++) {
        ox_graph_exec *ge = g < 0 ? &s->main : s->subs[g];
        if (!ge->resident) continue;
        pthread_mutex_lock(&ge->arena_lock);
        for (int sl = 0; sl < ge->plan.n_slots; sl++) {
            ox_tensor *t = ge->resident[sl];
            if (!t || ge->plan.slots[sl].ep != idx) continue;
            ep->ops->free(ep, NULL, t->data);
            free(t);
            ge->resident[sl] = NULL;
        }
        pthread_mutex_unlock(&ge->arena_lock);
    }
}

/* The node of the main graph the fault names, or -1. */
static int main_node_index(const onyx_session *s, const ir_node *n) {
    const ir_graph *g = s->graph;
    if (!n || g->n_nodes == 0) return -1;
    /* compared as addresses: a node of a subgraph body is not in the array */
    uintptr_t a = (uintptr_t)n, lo = (uintptr_t)g->nodes, hi = (uintptr_t)(g->nodes + g->n_nodes);
    if (a < lo || a >= hi) return -1;
    return (int)(n - g->nodes);
}

/* Moves the faulting node to the CPU for this session and records it. */
static void deny_node(onyx_session *s, int e, const ox_ep_fault *f) {
    int i = main_node_index(s, f->node);
    if (i < 0) return;
    if (atomic_exchange(&s->main.force_host[i], OX_FORCE_HOST_FAULT) == OX_FORCE_HOST_FAULT) return;
    atomic_fetch_add(&s->faults.denied[e], 1);
    const ir_node *n = &s->graph->nodes[i];
    char what[160];
    snprintf(what, sizeof what, "%s%s", f->kind, f->injected ? " (injected)" : "");
    const ox_fault_cache *c = &s->faults.caches[e];
    ox_log(s->log_level, ONYX_LOG_WARNING,
           "node '%s' (%s) runs on the CPU from now on: %s failed running it (%s)%s%s%s",
           n->name ? n->name : "", n->op_type, s->eps[e]->name, what,
           c->path ? "; recorded in '" : "", c->path ? c->path : "", c->path ? "'" : "");
    append_cache(s, &s->faults.caches[e], n, what);
}

/* The device provider whose fault count moved since `seen`, or that is
 * still unusable; -1 when the failure was no device fault. */
static int faulted_provider(onyx_session *s, const uint64_t *seen, ox_ep_fault *f) {
    for (int e = 0; e < s->n_eps; e++) {
        ox_ep *ep = s->eps[e];
        if (!ep->ops->fault_count || !ep->ops->last_fault) continue;
        memset(f, 0, sizeof *f);
        int unusable = ep->ops->last_fault(ep, f);
        if (f->count != seen[e] || unusable) return e;
    }
    return -1;
}

int ox_session_run_guarded(onyx_session *s, const ox_run_control *ctl, const char *const *in_names,
                           const ox_tensor *const *ins, size_t n_in, const char *const *out_names,
                           ox_tensor **outs, size_t n_out, ox_error *err) {
    ox_run_control host = *ctl;
    host.host_only = 1;
    if (atomic_load(&s->faults.host_only))
        return ox_session_run_ctl(s, &host, in_names, ins, n_in, out_names, outs, n_out, err);
    uint64_t seen[OX_MAX_EPS + 1] = {0};
    for (int e = 0; e < s->n_eps; e++)
        if (s->eps[e]->ops->fault_count) seen[e] = s->eps[e]->ops->fault_count(s->eps[e]);
    if (ox_session_run_ctl(s, ctl, in_names, ins, n_in, out_names, outs, n_out, err) == 0) return 0;
    /* a cancelled or timed-out run is the caller's doing */
    if (ox_is_stop_code(err->code)) return -1;
    ox_ep_fault f;
    int e = faulted_provider(s, seen, &f);
    if (e < 0) return -1;
    ox_ep *ep = s->eps[e];
    /* the run's error is the fault's, or one it caused (another run's
     * fault left the device unusable) */
    int same = strstr(err->msg, f.message) != NULL;
    ox_log(s->log_level, ONYX_LOG_WARNING, "%s; the run completes on the CPU%s%s%s", f.message,
           same ? "" : " (", same ? "" : err->msg, same ? "" : ")");
    deny_node(s, e, &f);
    ox_error rerr = {0};
    if (ep->ops->recover && ep->ops->recover(ep, drop_resident, s, &rerr) != 0) {
        atomic_store(&s->faults.host_only, 1);
        ox_log(s->log_level, ONYX_LOG_ERROR,
               "%s cannot be used again (%s): every later run of this session uses the CPU",
               ep->name, rerr.msg);
    }
    ox_error_clear(err);
    if (ox_session_run_ctl(s, &host, in_names, ins, n_in, out_names, outs, n_out, err) != 0) {
        if (!ox_is_stop_code(err->code))
            ox_error_prefix(err, "the CPU rerun after a device fault (%s)", f.message);
        return -1;
    }
    atomic_fetch_add(&s->faults.rescued[e], 1);
    return 0;
}
