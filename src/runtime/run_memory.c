/* A run's memory (see run_ctx.h): slots allocated from the memory plan's
 * arenas or the providers, weights' device copies made once, copies
 * between host and device, the device arenas a run takes, and the
 * providers' streams. Every byte allocated here at run time is reserved
 * against the session's memory limit first (ox_session_reserve). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/log.h"
#include "runtime/run_ctx.h"

void ox_run_release_slot(run_ctx *rc, int s) {
    run_slot *rs = &rc->slots[s];
    if (rs->mode == SLOT_DEVICE) {
        rc->s->eps[rs->ep]->ops->free(rc->s->eps[rs->ep], rc->streams[rs->ep], rs->hdr.data);
        ox_value_uncharge(&rs->hdr);
    } else if (rs->mode == SLOT_VALUE) {
        ox_tensor_free(rs->t);
    }
    rs->mode = SLOT_EMPTY;
    rs->t = NULL;
}

/* Slot s's bytes in this run's arena of its memory space, when the
 * memory plan placed it there with room for nbytes; else NULL. A
 * host-only run leaves device slots to the host allocator. */
static void *planned_memory(const run_ctx *rc, int s, size_t nbytes) {
    const ox_slot_info *si = &rc->ge->plan.slots[s];
    if (!si->planned || !rc->mem || rc->mem->offset[s] == SIZE_MAX || rc->mem->size[s] < nbytes)
        return NULL;
    size_t off = rc->mem->offset[s];
    if (si->device == OX_DEVICE_HOST) return rc->arena ? rc->arena + off : NULL;
    if (ox_run_host_only(rc) || !rc->dev_arena || !rc->dev_arena[si->ep]) return NULL;
    ox_ep *ep = rc->s->eps[si->ep];
    void *storage = rc->views ? rc->views + (size_t)s * rc->view_stride : NULL;
    return ep->ops->arena_view(ep, rc->dev_arena[si->ep], off, nbytes, storage);
}

int ox_run_alloc_slot(run_ctx *rc, int s, ox_dtype dtype, const int64_t *dims, int rank) {
    onyx_session *ses = rc->s;
    const ir_graph *g = rc->ge->graph;
    const ox_slot_info *si = &rc->ge->plan.slots[s];
    run_slot *rs = &rc->slots[s];
    ox_error *err = rc->err;
    size_t nbytes;
    if (ox_bytes_for(dtype, dims, rank, &nbytes, err) != 0 || ox_check_alloc_size(nbytes, err) != 0)
        return -1;
    if (rs->mode != SLOT_EMPTY) {
        if (rs->t->dtype == dtype && ox_shape_equal(rs->t->dims, rs->t->rank, dims, rank)) return 0;
        return ox_fail(err, ONYX_RUNTIME_ERROR, "value '%s' was already produced with another shape",
                       g->values[si->value].name);
    }
    ox_tensor *caller = rc->caller_out[s];
    if (caller) {
        if (caller->dtype != dtype || !ox_shape_equal(caller->dims, caller->rank, dims, rank)) {
            char a[128], b[128];
            return ox_fail(err, ONYX_INVALID_ARGUMENT,
                           "output '%s': the caller's tensor is %s %s but the model produces %s %s",
                           g->values[si->value].name, ox_dtype_name(caller->dtype),
                           ox_shape_str(caller->dims, caller->rank, a, sizeof a),
                           ox_dtype_name(dtype), ox_shape_str(dims, rank, b, sizeof b));
        }
        rs->t = caller;
        rs->mode = SLOT_BORROWED;
        return 0;
    }
    if (rc->observed && rc->observed[s] < nbytes) rc->observed[s] = nbytes;
    memset(&rs->hdr, 0, sizeof rs->hdr);
    rs->hdr.kind = OX_KIND_TENSOR;
    rs->hdr.dtype = dtype;
    rs->hdr.rank = rank;
    memcpy(rs->hdr.dims, dims, (size_t)rank * sizeof *dims);
    rs->hdr.nbytes = nbytes;
    rs->hdr.device = ox_run_slot_device(rc, s);
    if (dtype == ONYX_STRING) {
        if (rs->hdr.device != OX_DEVICE_HOST)
            return ox_fail(err, ONYX_NOT_IMPLEMENTED, "string tensors cannot live on a device");
        /* refused before allocating: the header, the pointers and one
         * byte per empty string; charged exactly once made */
        size_t need = sizeof(ox_tensor) + nbytes + nbytes / sizeof(char *);
        if (ox_session_reserve(ses, need, err) != 0) return -1;
        rs->t = ox_tensor_new(dtype, dims, rank, err);
        ox_mem_unreserve(&ses->mem, need);
        if (!rs->t) return -1;
        rs->mode = SLOT_VALUE;
        return ox_session_charge_value(ses, rs->t, err);
    }
    void *planned = planned_memory(rc, s, nbytes);
    if (planned) {
        rs->hdr.data = planned;
        rs->t = &rs->hdr;
        rs->mode = SLOT_BORROWED;
        return 0;
    }
    int e = ox_run_slot_ep(rc, s);
    ox_ep *ep = ses->eps[e];
    if (ox_session_reserve(ses, nbytes, err) != 0) return -1;
    rs->hdr.data = ep->ops->alloc(ep, rc->streams[e], nbytes);
    if (!rs->hdr.data) {
        ox_mem_unreserve(&ses->mem, nbytes);
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory allocating %zu bytes for '%s'", nbytes,
                       g->values[si->value].name);
    }
    rs->hdr.account = &ses->mem;
    rs->hdr.charged = nbytes;
    rs->t = &rs->hdr;
    rs->mode = SLOT_DEVICE;
    rs->ep = e;
    return 0;
}

/* A weight's device copy (NULL with err set): the provider's upload,
 * compact when every reader takes that form, or its allocator and copy. */
static void *upload_weight(ox_ep *ep, const ox_tensor *src, int compact, ox_error *err) {
    if (ep->ops->upload_weight) return ep->ops->upload_weight(ep, src, compact, err);
    void *d = ep->ops->alloc(ep, NULL, src->nbytes);
    if (!d) {
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of device memory (%zu bytes)", src->nbytes);
        return NULL;
    }
    if (ep->ops->copy_from_host(ep, NULL, d, src->data, src->nbytes, err) != 0) {
        ep->ops->free(ep, NULL, d);
        return NULL;
    }
    return d;
}

/* The device copy of initializer slot st->src for resident slot st->dst:
 * the first run to need it uploads it under the graph's lock, and every
 * later run borrows it. */
static int bind_resident(run_ctx *rc, const ox_step *st, const ox_tensor *src) {
    ox_graph_exec *ge = rc->ge;
    const ox_slot_info *di = &ge->plan.slots[st->dst];
    ox_ep *dep = rc->s->eps[di->ep];
    int r = 0;
    pthread_mutex_lock(&ge->arena_lock);
    ox_tensor *t = ge->resident[st->dst];
    if (!t) {
        t = calloc(1, sizeof *t);
        if (!t) {
            r = ox_fail(rc->err, ONYX_OUT_OF_MEMORY, "out of memory");
        } else {
            t->kind = OX_KIND_TENSOR;
            t->dtype = src->dtype;
            t->rank = src->rank;
            memcpy(t->dims, src->dims, (size_t)src->rank * sizeof *src->dims);
            t->nbytes = src->nbytes;
            t->device = di->device;
            t->data = upload_weight(dep, src, di->compact, rc->err);
            if (t->data) {
                ge->resident[st->dst] = t;
            } else {
                ox_error_prefix(rc->err, "weight '%s'", ge->graph->values[di->value].name);
                free(t);
                t = NULL;
                r = -1;
            }
        }
    }
    pthread_mutex_unlock(&ge->arena_lock);
    if (r != 0) return -1;
    rc->slots[st->dst].t = t;
    rc->slots[st->dst].mode = SLOT_BORROWED;
    return 0;
}

int ox_run_exec_copy(run_ctx *rc, const ox_step *st) {
    onyx_session *s = rc->s;
    const ox_plan *plan = &rc->ge->plan;
    const ir_graph *g = rc->ge->graph;
    const ox_tensor *src = rc->slots[st->src].t;
    if (!src)
        return ox_fail(rc->err, ONYX_RUNTIME_ERROR, "value '%s' has no value to copy",
                       g->values[plan->slots[st->src].value].name);
    if (src->kind != OX_KIND_TENSOR || src->dtype == ONYX_STRING)
        return ox_fail(rc->err, ONYX_NOT_IMPLEMENTED,
                       "only numeric tensors can move between devices ('%s')",
                       g->values[plan->slots[st->src].value].name);
    if (ox_run_host_only(rc) && plan->slots[st->src].is_const) {
        /* a weight: the session keeps it, the run may read it in place */
        rc->slots[st->dst].t = (ox_tensor *)src;
        rc->slots[st->dst].mode = SLOT_BORROWED;
        return 0;
    }
    if (plan->slots[st->dst].resident && rc->ge->resident && !ox_run_host_only(rc))
        return bind_resident(rc, st, src);
    if (ox_run_alloc_slot(rc, st->dst, src->dtype, src->dims, src->rank) != 0) return -1;
    ox_tensor *dst = rc->slots[st->dst].t;
    if (ox_run_host_only(rc)) {
        if (src->nbytes && dst->data != src->data) memcpy(dst->data, src->data, src->nbytes);
        return 0;
    }
    const ox_slot_info *si = &plan->slots[st->src], *di = &plan->slots[st->dst];
    ox_ep *sep = s->eps[si->ep], *dep = s->eps[di->ep];
    void *ss = rc->streams[si->ep], *ds = rc->streams[di->ep];
    if (si->device == OX_DEVICE_HOST)
        return dep->ops->copy_from_host(dep, ds, dst->data, src->data, src->nbytes, rc->err);
    if (di->device == OX_DEVICE_HOST)
        return sep->ops->copy_to_host(sep, ss, dst->data, src->data, src->nbytes, rc->err);
    void *stage = malloc(src->nbytes ? src->nbytes : 1);
    if (!stage) return ox_fail(rc->err, ONYX_OUT_OF_MEMORY, "out of memory");
    int r = sep->ops->copy_to_host(sep, ss, stage, src->data, src->nbytes, rc->err);
    if (r == 0) r = dep->ops->copy_from_host(dep, ds, dst->data, stage, src->nbytes, rc->err);
    free(stage);
    return r;
}

/* The run's device arenas, one per provider the memory plan packed slots
 * for, reserved against the session's memory limit while the run holds
 * them. A device that cannot make one (its allocation limit, its memory)
 * costs nothing but the arena: those slots are then allocated one by one,
 * as before a plan existed. Only top-level runs take them: a subgraph
 * body's recorded work is still pending when its run returns, so its
 * memory must come from the stream, which orders reuse. The provider
 * keeps an arena with the stream between runs, so a device remade after a
 * fault takes its arenas with it. */
int ox_run_take_device_arenas(run_ctx *rc) {
    onyx_session *s = rc->s;
    size_t stride = 0;
    int any = 0;
    for (int e = 0; e < s->n_eps; e++)
        if (rc->mem->ep_bytes[e]) {
            any = 1;
            if (s->eps[e]->ops->view_bytes > stride) stride = s->eps[e]->ops->view_bytes;
        }
    if (!any) return 0;
    rc->dev_arena = calloc((size_t)s->n_eps + 1, sizeof *rc->dev_arena);
    if (stride && rc->dev_arena) rc->views = calloc((size_t)rc->ge->plan.n_slots + 1, stride);
    if (!rc->dev_arena || (stride && !rc->views))
        return ox_fail(rc->err, ONYX_OUT_OF_MEMORY, "out of memory");
    rc->view_stride = stride;
    for (int e = 0; e < s->n_eps; e++) {
        size_t bytes = rc->mem->ep_bytes[e];
        if (!bytes) continue;
        ox_error aerr = {0};
        ox_ep *ep = s->eps[e];
        if (ox_session_reserve(s, bytes, &aerr) == 0 &&
            !(rc->dev_arena[e] = ep->ops->arena_new(ep, rc->streams[e], bytes, &aerr)))
            ox_mem_unreserve(&s->mem, bytes);
        if (!rc->dev_arena[e])
            ox_log(s->log_level, ONYX_LOG_VERBOSE,
                   "%s: no %zu-byte device arena (%s); its tensors are allocated one by one",
                   ep->name, bytes, aerr.msg);
    }
    return 0;
}

/* Before the streams end: the provider keeps the arenas until the device
 * is done with the run. */
void ox_run_give_device_arenas(run_ctx *rc) {
    for (int e = 0; rc->dev_arena && e < rc->s->n_eps; e++)
        if (rc->dev_arena[e]) {
            ox_ep *ep = rc->s->eps[e];
            ep->ops->arena_free(ep, rc->streams[e], rc->dev_arena[e]);
            ox_mem_unreserve(&rc->s->mem, rc->mem->ep_bytes[e]);
        }
    free(rc->dev_arena);
    free(rc->views);
    rc->dev_arena = NULL;
    rc->views = NULL;
}

void ox_run_log_mem_plan(onyx_session *s, const ox_mem_plan *m) {
    char dev[256];
    size_t off = 0;
    dev[0] = '\0';
    for (int e = 0; e < s->n_eps && off < sizeof dev; e++)
        if (m->ep_bytes[e]) {
            int n = snprintf(dev + off, sizeof dev - off, ", %s device arena %zu bytes",
                             s->eps[e]->name, m->ep_bytes[e]);
            if (n > 0) off += (size_t)n;
        }
    ox_log(s->log_level, ONYX_LOG_INFO,
           "memory plan for new input shapes: %zu-byte arena%s (%zu bytes without reuse)",
           m->arena_bytes, dev, m->naive_bytes);
}

/* One stream per provider that has a run lifecycle, for one top-level
 * run; *out has an entry (NULL or a stream) per provider. */
int ox_run_begin_streams(onyx_session *s, void ***out, ox_error *err) {
    void **st = calloc((size_t)s->n_eps + 1, sizeof *st);
    if (!st) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    for (int e = 0; e < s->n_eps; e++) {
        ox_ep *ep = s->eps[e];
        if (!ep->ops->run_begin) continue;
        st[e] = ep->ops->run_begin(ep, err);
        if (!st[e]) {
            for (int k = 0; k < e; k++) {
                ox_error scratch = {0};
                if (st[k]) s->eps[k]->ops->run_end(s->eps[k], st[k], &scratch);
            }
            free(st);
            return -1;
        }
    }
    *out = st;
    return 0;
}

/* Ends every stream of a run; err NULL when the run already failed (its
 * error stands, and the streams only wait and release). */
int ox_run_end_streams(onyx_session *s, void **st, ox_error *err) {
    int rc = 0;
    for (int e = 0; e < s->n_eps; e++) {
        if (!st[e]) continue;
        ox_error scratch = {0};
        if (s->eps[e]->ops->run_end(s->eps[e], st[e], rc == 0 && err ? err : &scratch) != 0) rc = -1;
    }
    free(st);
    return rc;
}

