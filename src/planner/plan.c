#include "planner/plan.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/pack.h"

static int add_slot(ox_plan *p, int *cap, int value, int device, int ep) {
    if (p->n_slots == *cap) {
        int ncap = *cap ? *cap * 2 : 16;
        ox_slot_info *ns = realloc(p->slots, (size_t)ncap * sizeof *ns);
        if (!ns) return -1;
        p->slots = ns;
        *cap = ncap;
    }
    ox_slot_info *s = &p->slots[p->n_slots];
    memset(s, 0, sizeof *s);
    s->value = value;
    s->device = device;
    s->ep = ep;
    return p->n_slots++;
}

static int add_step(ox_plan *p, int *cap, ox_step st) {
    if (p->n_steps == *cap) {
        int ncap = *cap ? *cap * 2 : 16;
        ox_step *ns = realloc(p->steps, (size_t)ncap * sizeof *ns);
        if (!ns) return -1;
        p->steps = ns;
        *cap = ncap;
    }
    p->steps[p->n_steps] = st;
    return p->n_steps++;
}

/* Slot holding `value` on `device`, adding a copy step when the value
 * lives elsewhere. copy_of[value * n_eps + ep] caches copies per device. */
static int slot_on_device(ox_plan *p, int *slot_cap, int *step_cap, int value, int ep,
                          int device, int *copy_of, int n_eps) {
    if (p->slots[value].device == device) return value;
    int *cached = &copy_of[value * n_eps + ep];
    if (*cached >= 0) return *cached;
    int s = add_slot(p, slot_cap, value, device, ep);
    if (s < 0) return -1;
    /* weights do not change between runs: one upload serves them all */
    p->slots[s].resident = p->slots[value].is_const;
    ox_step st = {.kind = OX_STEP_COPY, .node = -1, .src = value, .dst = s};
    if (add_step(p, step_cap, st) < 0) return -1;
    *cached = s;
    return s;
}

/* The alignment of offsets into the provider's device arenas (at least
 * the host arena's), or 0 when it has none: its slots are allocated one
 * by one. */
static size_t device_arena_align(ox_ep *ep) {
    const ox_ep_ops *o = ep->ops;
    if (ep->device == OX_DEVICE_HOST || !o->arena_new || !o->arena_free || !o->arena_view) return 0;
    size_t a = o->arena_align ? o->arena_align(ep) : OX_ARENA_ALIGN;
    if (a == 0 || (a & (a - 1)) != 0) return 0; /* not a power of two: no arena */
    return a < OX_ARENA_ALIGN ? OX_ARENA_ALIGN : a;
}

/* Inputs a node reads only the shape of (Shape, Size): they are used
 * where they live, so a device tensor costs no copy and no wait. */
static int reads_only_shape(const ir_node *n, int k) {
    return k == 0 && n->domain[0] == '\0' &&
           (strcmp(n->op_type, "Shape") == 0 || strcmp(n->op_type, "Size") == 0);
}

/* The order of the steps when devices hold nodes: of the nodes ready to
 * run, a device node first (it records work), then a host node that reads
 * no device data, and last a host node that does, whose copy to the host
 * waits for everything recorded so far. Work for the device thus gathers
 * between the waits instead of each wait taking a part of it: two device
 * branches that each end in a CPU node waited twice in ready order
 * (device, CPU (wait), device, CPU (wait)) and wait once in this one
 * (unit.partition; fasterrcnn on Vulkan: 15 submissions per run to 14). */
typedef struct sched_ctx {
    const ir_graph *g;
    ox_ep *const *eps;
} sched_ctx;

enum { SCHED_DEVICE, SCHED_HOST, SCHED_HOST_WAITS, SCHED_CLASSES };

static int sched_class(void *user, int i) {
    const sched_ctx *c = user;
    const ir_node *n = &c->g->nodes[i];
    if (c->eps[n->ep]->device != OX_DEVICE_HOST) return SCHED_DEVICE;
    for (int k = 0; k < ir_node_dep_count(n); k++) {
        int v = ir_node_dep(n, k);
        if (v < 0 || (k < n->n_inputs && reads_only_shape(n, k))) continue;
        int p = c->g->values[v].producer;
        if (p >= 0 && c->eps[c->g->nodes[p].ep]->device != OX_DEVICE_HOST) return SCHED_HOST_WAITS;
    }
    return SCHED_HOST;
}

static int step_order(const ir_graph *g, ox_ep *const *eps, int *order, ox_error *err) {
    int devices = 0;
    for (int i = 0; i < g->n_nodes && !devices; i++) devices = eps[g->nodes[i].ep]->device != OX_DEVICE_HOST;
    if (!devices) return ir_graph_toposort(g, order, err);
    sched_ctx c = {g, eps};
    return ir_graph_toposort_by(g, order, SCHED_CLASSES, sched_class, &c, err);
}

/* Weights' device copies that every reader takes in the provider's
 * compact form (ox_ep_ops.reads_compact). */
static void mark_compact(const ir_graph *g, ox_ep *const *eps, ox_plan *p) {
    for (int s = 0; s < p->n_slots; s++) {
        const ox_ep_ops *o = eps[p->slots[s].ep]->ops;
        p->slots[s].compact = p->slots[s].resident && o->reads_compact && o->upload_weight;
    }
    for (int i = 0; i < p->n_steps; i++) {
        const ox_step *st = &p->steps[i];
        if (st->kind != OX_STEP_NODE) continue;
        const ir_node *n = &g->nodes[st->node];
        ox_ep *ep = eps[n->ep];
        for (int k = 0; k < n->n_inputs; k++) {
            int s = st->in_slots[k];
            if (s >= 0 && p->slots[s].compact && !ep->ops->reads_compact(ep, n, k))
                p->slots[s].compact = 0;
        }
        /* a subgraph reading it from the outer scope: not asked, not compact */
        for (int k = 0; k < n->n_implicit; k++) p->slots[st->implicit_slots[k]].compact = 0;
    }
}

/* Marks the outputs of reshaping nodes as views of their input 0 (see
 * ox_slot_info.view) and extends the lifetime of the memory they view:
 * the root of a chain of views (Reshape of a Squeeze of a value) lives
 * until the last reader of any view of it. Graph outputs are never views
 * (the caller owns them), nor are values the run does not produce. */
static int plan_views(const ir_graph *g, ox_ep *const *eps, ox_plan *p, int *last_use,
                      const int *def_step) {
    int *root = malloc(((size_t)p->n_slots + 1) * sizeof *root);
    if (!root) return -1;
    for (int s = 0; s < p->n_slots; s++) root[s] = -1;
    for (int i = 0; i < p->n_steps; i++) {
        const ox_step *st = &p->steps[i];
        if (st->kind != OX_STEP_NODE) continue;
        const ir_node *n = &g->nodes[st->node];
        ox_ep *ep = eps[n->ep];
        if (!ep->ops->output_views_input || !ep->ops->output_views_input(ep, n)) continue;
        int in = st->in_slots[0], out = st->out_slots[0];
        if (in < 0 || out < 0) continue;
        ox_slot_info *o = &p->slots[out];
        if (o->is_output || o->is_input || o->is_const || o->resident ||
            o->device != p->slots[in].device)
            continue;
        o->view = 1;
        root[out] = root[in] >= 0 ? root[in] : in;
    }
    for (int s = 0; s < p->n_slots; s++) {
        if (root[s] < 0) continue;
        int end = last_use[s] > def_step[s] ? last_use[s] : def_step[s];
        if (end > last_use[root[s]]) last_use[root[s]] = end;
    }
    free(root);
    return 0;
}

int ox_plan_build(const ir_graph *g, ox_ep *const *eps, int n_eps, ox_plan *p, ox_error *err) {
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->lock, NULL);
    /* slot and step indices are ints: copies can add one slot per value
     * and provider, and one step per slot */
    if (g->n_values > INT_MAX / (2 * (n_eps + 1)) || g->n_nodes > INT_MAX / 4)
        return ox_fail(err, ONYX_INVALID_MODEL,
                       "graph '%s': %d nodes and %d values are more than onyx can plan",
                       g->name, g->n_nodes, g->n_values);
    /* One slot per value and one step per node, plus room for copies.
     * Allocated even for an empty graph: a plan that owns its arrays is
     * one its owner frees (see ox_plan_free). */
    int slot_cap = g->n_values + 16, step_cap = g->n_nodes + 16, host_ep = n_eps - 1;
    p->slots = malloc((size_t)slot_cap * sizeof *p->slots);
    p->steps = malloc((size_t)step_cap * sizeof *p->steps);
    int *order = malloc(((size_t)g->n_nodes + 1) * sizeof *order);
    int *copy_of = malloc(((size_t)g->n_values * (size_t)n_eps + 1) * sizeof *copy_of);
    int *last_use = NULL, *def_step = NULL;
    unsigned char *late_slot = NULL;
    p->n_eps = n_eps;
    p->arena_align = calloc((size_t)n_eps + 1, sizeof *p->arena_align);
    if (!p->slots || !p->steps || !order || !copy_of || !p->arena_align) goto oom;
    for (int e = 0; e < n_eps; e++) p->arena_align[e] = device_arena_align(eps[e]);
    for (size_t i = 0; i < (size_t)g->n_values * (size_t)n_eps; i++) copy_of[i] = -1;
    if (step_order(g, eps, order, err) != 0) goto fail;

    for (int v = 0; v < g->n_values; v++) {
        const ir_value *val = &g->values[v];
        int ep = val->producer >= 0 ? g->nodes[val->producer].ep : host_ep;
        if (add_slot(p, &slot_cap, v, eps[ep]->device, ep) < 0) goto oom;
        p->slots[v].is_const = val->init != NULL && !val->is_input;
        p->slots[v].is_input = val->is_input || val->outer;
    }
    for (int oi = 0; oi < g->n_nodes; oi++) {
        const ir_node *n = &g->nodes[order[oi]];
        int dev = eps[n->ep]->device;
        /* inputs a device kernel reads on the host stay there */
        uint32_t host_read = 0;
        if (dev != OX_DEVICE_HOST && eps[n->ep]->ops->host_inputs)
            host_read = eps[n->ep]->ops->host_inputs(eps[n->ep], n);
        int *ins = malloc(((size_t)n->n_inputs + 1) * sizeof *ins);
        int *outs = malloc(((size_t)n->n_outputs + 1) * sizeof *outs);
        if (!ins || !outs) {
            free(ins);
            free(outs);
            goto oom;
        }
        for (int k = 0; k < n->n_inputs; k++) {
            int on_host = k < 32 && (host_read >> k & 1u);
            ins[k] = n->inputs[k] < 0            ? -1
                     : reads_only_shape(n, k) ? n->inputs[k]
                                              : slot_on_device(p, &slot_cap, &step_cap, n->inputs[k],
                                                       on_host ? host_ep : n->ep,
                                                       on_host ? OX_DEVICE_HOST : dev, copy_of, n_eps);
            if (n->inputs[k] >= 0 && ins[k] < 0) {
                free(ins);
                free(outs);
                goto oom;
            }
        }
        for (int k = 0; k < n->n_outputs; k++) outs[k] = n->outputs[k];
        int *imp = malloc(((size_t)n->n_implicit + 1) * sizeof *imp);
        if (!imp) {
            free(ins);
            free(outs);
            goto oom;
        }
        for (int k = 0; k < n->n_implicit; k++) {
            imp[k] = slot_on_device(p, &slot_cap, &step_cap, n->implicit[k], n->ep, dev, copy_of, n_eps);
            if (imp[k] < 0) {
                free(ins);
                free(outs);
                free(imp);
                goto oom;
            }
        }
        ox_step st = {.kind = OX_STEP_NODE, .node = order[oi], .src = -1, .dst = -1,
                      .in_slots = ins, .out_slots = outs, .implicit_slots = imp};
        if (add_step(p, &step_cap, st) < 0) {
            free(ins);
            free(outs);
            free(imp);
            goto oom;
        }
    }
    p->output_slots = malloc(((size_t)g->n_outputs + 1) * sizeof(int));
    p->input_slots = malloc(((size_t)g->n_inputs + 1) * sizeof(int));
    if (!p->output_slots || !p->input_slots) goto oom;
    for (int i = 0; i < g->n_inputs; i++) p->input_slots[i] = g->inputs[i];
    for (int i = 0; i < g->n_outputs; i++) {
        int s = slot_on_device(p, &slot_cap, &step_cap, g->outputs[i], host_ep, OX_DEVICE_HOST,
                               copy_of, n_eps);
        if (s < 0) goto oom;
        p->output_slots[i] = s;
        p->slots[s].is_output = 1;
    }

    /* Lifetimes: a slot is defined by one step and dies after its last
     * reader; outputs, inputs and constants live for the whole run. */
    last_use = malloc(((size_t)p->n_slots + 1) * sizeof *last_use);
    def_step = malloc(((size_t)p->n_slots + 1) * sizeof *def_step);
    late_slot = calloc((size_t)p->n_slots + 1, 1);
    if (!last_use || !def_step || !late_slot) goto oom;
    for (int s = 0; s < p->n_slots; s++) last_use[s] = def_step[s] = -1;
    for (int i = 0; i < p->n_steps; i++) {
        ox_step *st = &p->steps[i];
        if (st->kind == OX_STEP_COPY) {
            last_use[st->src] = i;
            def_step[st->dst] = i;
            continue;
        }
        const ir_node *n = &g->nodes[st->node];
        for (int k = 0; k < n->n_inputs; k++)
            if (st->in_slots[k] >= 0) last_use[st->in_slots[k]] = i;
        /* inputs the device may read back once the run's work is waited
         * for keep their bytes to the run's end (set below) */
        ox_ep *nep = eps[n->ep];
        uint32_t late = nep->device != OX_DEVICE_HOST && nep->ops->inputs_read_late
                            ? nep->ops->inputs_read_late(nep, n)
                            : 0;
        for (int k = 0; k < n->n_inputs && k < 32; k++)
            if ((late >> k & 1u) && st->in_slots[k] >= 0) late_slot[st->in_slots[k]] = 1;
        for (int k = 0; k < n->n_implicit; k++) last_use[st->implicit_slots[k]] = i;
        for (int k = 0; k < n->n_outputs; k++)
            if (st->out_slots[k] >= 0) def_step[st->out_slots[k]] = i;
    }
    for (int sl = 0; sl < p->n_slots; sl++)
        if (late_slot[sl]) last_use[sl] = p->n_steps - 1;
    mark_compact(g, eps, p);
    if (plan_views(g, eps, p, last_use, def_step) != 0) goto oom;
    int *count = calloc((size_t)p->n_steps + 1, sizeof *count);
    if (!count) goto oom;
    for (int s = 0; s < p->n_slots; s++) {
        ox_slot_info *si = &p->slots[s];
        int keep = si->is_output || si->is_input || si->is_const || si->resident;
        si->planned = !keep && !si->view && def_step[s] >= 0 &&
                      (si->device == OX_DEVICE_HOST || p->arena_align[si->ep] != 0);
        if (keep || def_step[s] < 0) {
            last_use[s] = -1;
            continue;
        }
        if (last_use[s] < def_step[s]) last_use[s] = def_step[s];
        count[last_use[s]]++;
    }
    for (int i = 0; i < p->n_steps; i++) {
        p->steps[i].release = malloc(((size_t)count[i] + 1) * sizeof(int));
        if (!p->steps[i].release) {
            free(count);
            goto oom;
        }
    }
    free(count);
    for (int s = 0; s < p->n_slots; s++)
        if (last_use[s] >= 0) {
            ox_step *st = &p->steps[last_use[s]];
            st->release[st->n_release++] = s;
        }
    free(order);
    free(copy_of);
    /* lifetimes are needed again to pack the arena once sizes are known */
    p->lifetimes = malloc(((size_t)p->n_slots * 2 + 1) * sizeof(int));
    if (!p->lifetimes) {
        free(last_use);
        free(def_step);
        free(late_slot);
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    for (int s = 0; s < p->n_slots; s++) {
        p->lifetimes[2 * s] = def_step[s];
        p->lifetimes[2 * s + 1] = last_use[s] >= 0 ? last_use[s] : p->n_steps;
    }
    free(last_use);
    free(def_step);
    free(late_slot);
    return 0;
oom:
    ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
fail:
    free(order);
    free(copy_of);
    free(last_use);
    free(def_step);
    free(late_slot);
    return -1;
}

static void free_mem_plan(ox_mem_plan *m) {
    free(m->signature);
    free(m->ep_bytes);
    free(m->offset);
    free(m->size);
    free(m);
}

void ox_plan_free(ox_plan *p) {
    for (int i = 0; i < p->n_steps; i++) {
        free(p->steps[i].in_slots);
        free(p->steps[i].out_slots);
        free(p->steps[i].implicit_slots);
        free(p->steps[i].release);
    }
    free(p->steps);
    free(p->slots);
    free(p->output_slots);
    free(p->input_slots);
    free(p->lifetimes);
    free(p->arena_align);
    for (ox_mem_plan *m = p->mem_plans, *next; m; m = next) {
        next = m->next;
        free_mem_plan(m);
    }

    pthread_mutex_destroy(&p->lock);
    memset(p, 0, sizeof *p);
}

static ox_mem_plan *find_locked(ox_plan *p, const int64_t *sig, size_t sig_len) {
    for (ox_mem_plan *m = p->mem_plans; m; m = m->next)
        if (m->sig_len == sig_len && memcmp(m->signature, sig, sig_len * sizeof *sig) == 0) return m;
    return NULL;
}

const ox_mem_plan *ox_plan_find_mem(ox_plan *p, const int64_t *sig, size_t sig_len) {
    pthread_mutex_lock(&p->lock);
    ox_mem_plan *found = find_locked(p, sig, sig_len);
    if (found) found->users++;
    pthread_mutex_unlock(&p->lock);
    return found;
}

void ox_plan_release_mem(ox_plan *p, const ox_mem_plan *mem) {
    if (!mem) return;
    ox_mem_plan *m = (ox_mem_plan *)mem;
    pthread_mutex_lock(&p->lock);
    int free_it = --m->users == 0 && m->evicted;
    pthread_mutex_unlock(&p->lock);
    if (free_it) free_mem_plan(m);
}

/* The arena of one memory space: the host's (ep -1: every slot in host
 * memory) or provider ep's device arena. Sizes are rounded up to the
 * space's alignment, so the packed offsets are multiples of it too.
 * Fills m->offset and m->size for those slots; returns the arena's bytes
 * or SIZE_MAX. */
static size_t pack_space(const ox_plan *p, const size_t *sizes, int ep, size_t *scratch,
                         ox_mem_plan *m) {
    size_t align = ep < 0 ? OX_ARENA_ALIGN : p->arena_align[ep];
    for (int s = 0; s < p->n_slots; s++) {
        const ox_slot_info *si = &p->slots[s];
        int mine = si->planned && (ep < 0 ? si->device == OX_DEVICE_HOST
                                          : si->device != OX_DEVICE_HOST && si->ep == ep);
        scratch[s] = 0;
        if (!mine || sizes[s] == 0) continue;
        if (sizes[s] > SIZE_MAX - align) return SIZE_MAX;
        scratch[s] = (sizes[s] + align - 1) / align * align;
    }
    size_t *off = malloc(((size_t)p->n_slots + 1) * sizeof *off);
    if (!off) return SIZE_MAX;
    size_t bytes = ox_pack_arena(p->n_slots, scratch, p->lifetimes, p->n_steps, off);
    for (int s = 0; bytes != SIZE_MAX && s < p->n_slots; s++)
        if (scratch[s]) {
            m->offset[s] = off[s];
            m->size[s] = scratch[s];
            m->naive_bytes += sizes[s];
        }
    free(off);
    return bytes;
}

/* Offsets for every planned slot: the host arena, then one per provider
 * with device arenas. */
static int pack_memory(const ox_plan *p, const size_t *sizes, ox_mem_plan *m) {
    size_t *scratch = malloc(((size_t)p->n_slots + 1) * sizeof *scratch);
    if (!scratch) return -1;
    for (int s = 0; s < p->n_slots; s++) {
        m->offset[s] = SIZE_MAX;
        m->size[s] = 0;
    }
    int rc = 0;
    m->arena_bytes = pack_space(p, sizes, -1, scratch, m);
    if (m->arena_bytes == SIZE_MAX) rc = -1;
    for (int e = 0; rc == 0 && e < p->n_eps; e++) {
        if (!p->arena_align[e]) continue;
        m->ep_bytes[e] = pack_space(p, sizes, e, scratch, m);
        if (m->ep_bytes[e] == SIZE_MAX) rc = -1;
    }
    free(scratch);
    return rc;
}

const ox_mem_plan *ox_plan_add_mem(ox_plan *p, const int64_t *sig, size_t sig_len,
                                   const size_t *sizes) {
    ox_mem_plan *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->signature = malloc((sig_len + 1) * sizeof *sig);
    m->offset = malloc(((size_t)p->n_slots + 1) * sizeof *m->offset);
    m->size = malloc(((size_t)p->n_slots + 1) * sizeof *m->size);
    m->ep_bytes = calloc((size_t)p->n_eps + 1, sizeof *m->ep_bytes);
    if (!m->signature || !m->offset || !m->size || !m->ep_bytes) {
        free_mem_plan(m);
        return NULL;
    }
    if (sig_len) memcpy(m->signature, sig, sig_len * sizeof *sig);
    m->sig_len = sig_len;
    if (pack_memory(p, sizes, m) != 0) {
        free_mem_plan(m);
        return NULL;
    }
    m->users = 1;
    ox_mem_plan *evict = NULL;
    pthread_mutex_lock(&p->lock);
    ox_mem_plan *existing = find_locked(p, sig, sig_len);
    if (existing) {
        /* another run planned the same shapes first: use that one */
        existing->users++;
        pthread_mutex_unlock(&p->lock);
        free_mem_plan(m);
        return existing;
    }
    m->next = p->mem_plans;
    p->mem_plans = m;
    p->mem_plans_built++;
    if (++p->n_mem_plans > 8) {
        ox_mem_plan *prev = p->mem_plans;
        for (int i = 0; i < 7; i++) prev = prev->next;
        evict = prev->next;
        prev->next = NULL;
        p->n_mem_plans = 8;
        evict->evicted = 1;
        if (evict->users > 0) evict = NULL; /* its last user frees it */
    }
    pthread_mutex_unlock(&p->lock);
    if (evict) free_mem_plan(evict);
    return m;
}
