/* Runs a planned session: binds inputs without copying, walks the steps,
 * infers each node's output shapes from the actual inputs, has their
 * outputs allocated (run_memory.c: the memory plan's arenas or the
 * providers), runs kernels and copies, and frees each value after its
 * last use. Between nodes it checks whether the run was cancelled or ran
 * out of time. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/log.h"
#include "ops/op.h"
#include "runtime/node_host.h"
#include "runtime/run_ctx.h"
#include "runtime/session.h"

/* Appends to buf at *off, never past size. */
static void append(char *buf, size_t size, size_t *off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t size, size_t *off, const char *fmt, ...) {
    if (*off >= size) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *off, size - *off, fmt, ap);
    va_end(ap);
    if (n > 0) *off += (size_t)n;
}

/* "node 'add' (Add)" with its iteration when a Loop/Scan kernel reports
 * one, then the node whose body runs it, outwards to the main graph. */
static void describe_place(const run_ctx *rc, const ir_node *n, int64_t iteration, char *buf,
                           size_t size) {
    char label[300];
    size_t off = 0;
    buf[0] = '\0';
    append(buf, size, &off, "%s", ir_node_label(n, label, sizeof label));
    if (iteration >= 0) append(buf, size, &off, ", iteration %lld", (long long)iteration);
    for (const run_ctx *r = rc; r->parent; r = r->parent) {
        const ir_node *pn = &r->parent->ge->graph->nodes[r->parent_step->node];
        append(buf, size, &off, " in the body of %s", ir_node_label(pn, label, sizeof label));
        if (r->parent_iteration >= 0)
            append(buf, size, &off, ", iteration %lld", (long long)r->parent_iteration);
    }
}

/* Fails the run for `why` (cancelled or out of time), naming node n. */
static int fail_stop(const run_ctx *rc, const ir_node *n, int64_t iteration, onyx_code why) {
    char where[768];
    describe_place(rc, n, iteration, where, sizeof where);
    return ox_run_control_fail(rc->ctl, why, where, rc->err);
}

/* Fails the run when it was cancelled or is out of time, naming node n. */
static int check_stop(const run_ctx *rc, const ir_node *n, int64_t iteration) {
    onyx_code why = ox_run_control_poll(rc->ctl);
    return why == ONYX_OK ? 0 : fail_stop(rc, n, iteration, why);
}

int ox_kernel_should_stop(ox_kernel_ctx *ctx) {
    node_exec *ne = ctx->exec;
    if (!ne) return 0; /* constant folding runs outside any run */
    return check_stop(ne->rc, ctx->node, ne->iteration) != 0;
}

/* The kernel's ox_stop: may run on worker threads, so it only records why
 * it stopped; the executor reports it once the kernel returns. */
static int poll_stop(const ox_stop *self) {
    node_exec *ne = (node_exec *)self;
    if (atomic_load_explicit(&ne->stop_code, memory_order_relaxed)) return 1;
    onyx_code why = ox_run_control_poll(ne->rc->ctl);
    if (why == ONYX_OK) return 0;
    atomic_store_explicit(&ne->stop_code, (int)why, memory_order_relaxed);
    return 1;
}

void ox_kernel_set_iteration(ox_kernel_ctx *ctx, int64_t iteration) {
    node_exec *ne = ctx->exec;
    if (ne) ne->iteration = iteration;
}

ox_tensor *ox_kernel_output(ox_kernel_ctx *ctx, int i, ox_dtype dtype, const int64_t *dims,
                            int rank) {
    node_exec *ne = ctx->exec;
    if (i < 0 || i >= ctx->n_outputs) {
        ox_fail(ctx->err, ONYX_RUNTIME_ERROR, "kernel asked for output %d of %d", i, ctx->n_outputs);
        return NULL;
    }
    if (!ne) { /* host execution outside a plan (constant folding) */
        if (ctx->outputs[i]) {
            if (ctx->outputs[i]->dtype == dtype &&
                ox_shape_equal(ctx->outputs[i]->dims, ctx->outputs[i]->rank, dims, rank))
                return ctx->outputs[i];
            ox_fail(ctx->err, ONYX_RUNTIME_ERROR, "output %d was already produced with another shape", i);
            return NULL;
        }
        ctx->outputs[i] = ox_tensor_new(dtype, dims, rank, ctx->err);
        return ctx->outputs[i];
    }
    int s = ne->step->out_slots[i];
    if (s < 0) return NULL; /* omitted optional output: nothing to write */
    if (ox_run_alloc_slot(ne->rc, s, dtype, dims, rank) != 0) return NULL;
    ctx->outputs[i] = ne->rc->slots[s].t;
    return ctx->outputs[i];
}

int ox_kernel_set_output(ox_kernel_ctx *ctx, int i, ox_tensor *value) {
    node_exec *ne = ctx->exec;
    if (i < 0 || i >= ctx->n_outputs) {
        ox_tensor_free(value);
        return ox_fail(ctx->err, ONYX_RUNTIME_ERROR, "kernel set output %d of %d", i, ctx->n_outputs);
    }
    if (!ne) {
        ox_tensor_free(ctx->outputs[i]);
        ctx->outputs[i] = value;
        return 0;
    }
    int s = ne->step->out_slots[i];
    if (s < 0) {
        ox_tensor_free(value);
        return 0;
    }
    /* values kernels build (sequences, Loop results) count like any
     * other run-time memory from here on */
    if (ox_session_charge_value(ne->rc->s, value, ctx->err) != 0) {
        ox_tensor_free(value);
        return -1;
    }
    run_slot *rs = &ne->rc->slots[s];
    if (rs->mode != SLOT_EMPTY) ox_run_release_slot(ne->rc, s);
    rs->t = value;
    rs->mode = SLOT_VALUE;
    ctx->outputs[i] = value;
    return 0;
}

int ox_kernel_fail(ox_kernel_ctx *ctx, onyx_code code, const char *fmt, ...) {
    char buf[OX_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return ox_fail(ctx->err, code, "%s", buf);
}

int ox_kernel_decline(ox_kernel_ctx *ctx, const char *fmt, ...) {
    char buf[OX_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    node_exec *ne = ctx->exec;
    if (ne) ne->declined = 1;
    return ox_fail(ctx->err, ONYX_NOT_IMPLEMENTED, "%s", buf);
}

/* A device node that declined (ox_kernel_decline): the CPU provider runs
 * it on host copies of its inputs, and its outputs go where the plan
 * keeps them (device memory, usually). The copies are reserved against
 * the session's memory limit like any run-time memory. */
static int run_declined_node(run_ctx *rc, const ox_step *st, ox_tensor **ins, ox_tensor **outs,
                             const char *why) {
    onyx_session *s = rc->s;
    const ox_plan *plan = &rc->ge->plan;
    const ir_node *n = &rc->ge->graph->nodes[st->node];
    ox_error *err = rc->err;
    ox_ep *cpu = s->eps[s->n_eps - 1]; /* the session always ends with the CPU */
    if (cpu->device != OX_DEVICE_HOST || n->ep == s->n_eps - 1)
        return ox_fail(err, ONYX_NOT_IMPLEMENTED, "%s", why);
    if (!ox_run_host_only(rc)) {
        if (!atomic_exchange(&rc->ge->declined[st->node], 1))
            ox_log(s->log_level, ONYX_LOG_WARNING, "%s node '%s' (%s) runs on the CPU instead: %s",
                   s->eps[n->ep]->name, n->name ? n->name : "", n->op_type, why);
        atomic_fetch_add(&s->cpu_fallbacks[n->ep], 1);
    }
    size_t n_ptrs = (size_t)(n->n_inputs > 0 ? n->n_inputs : 1);
    ox_ep **in_eps = calloc(n_ptrs, sizeof *in_eps);
    void **in_streams = calloc(n_ptrs, sizeof *in_streams);
    ox_tensor **host_out = calloc((size_t)n->n_outputs + 1, sizeof *host_out);
    size_t reserved = 0;
    int r = -1;
    if (!in_eps || !in_streams || !host_out) {
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    for (int k = 0; k < n->n_inputs; k++) {
        if (!ins[k] || ins[k]->device == OX_DEVICE_HOST) continue;
        int e = plan->slots[st->in_slots[k]].ep;
        in_eps[k] = s->eps[e];
        in_streams[k] = rc->streams[e];
        if (!ox_add_size(reserved, ins[k]->nbytes, &reserved)) reserved = SIZE_MAX;
    }
    if (ox_session_reserve(s, reserved, err) != 0) {
        reserved = 0;
        goto done;
    }
    if (ox_run_declined_on_host(cpu, n, ins, in_eps, in_streams, n->n_inputs, host_out,
                                n->n_outputs, s->pool, err) != 0)
        goto done;
    for (int k = 0; k < n->n_outputs; k++) {
        int sl = st->out_slots[k];
        ox_tensor *h = host_out[k];
        if (sl < 0 || !h) continue;
        if (h->kind != OX_KIND_TENSOR || h->dtype == ONYX_STRING) {
            ox_fail(err, ONYX_NOT_IMPLEMENTED, "output %d is not a numeric tensor", k);
            goto done;
        }
        if (!outs[k]) {
            if (ox_run_alloc_slot(rc, sl, h->dtype, h->dims, h->rank) != 0) goto done;
            outs[k] = rc->slots[sl].t;
        } else if (outs[k]->dtype != h->dtype ||
                   !ox_shape_equal(outs[k]->dims, outs[k]->rank, h->dims, h->rank)) {
            ox_fail(err, ONYX_RUNTIME_ERROR, "the CPU kernel gave output %d another shape", k);
            goto done;
        }
        const ox_slot_info *si = &plan->slots[sl];
        if (ox_run_slot_device(rc, sl) == OX_DEVICE_HOST) {
            if (h->nbytes) memcpy(outs[k]->data, h->data, h->nbytes);
        } else if (s->eps[si->ep]->ops->copy_from_host(s->eps[si->ep], rc->streams[si->ep],
                                                         outs[k]->data, h->data, h->nbytes,
                                                         err) != 0) {
            goto done;
        }
    }
    r = 0;
done:
    if (reserved) ox_mem_unreserve(&s->mem, reserved);
    for (int k = 0; host_out && k < n->n_outputs; k++) ox_tensor_free(host_out[k]);
    free(host_out);
    free(in_eps);
    free(in_streams);
    if (r != 0) ox_error_prefix(err, "running the declined node on the CPU");
    return r;
}

static int run_subgraph(ox_kernel_ctx *ctx, const ir_graph *g, ox_tensor *const *inputs,
                        int n_inputs, ox_tensor **outputs, int n_outputs);

static int exec_node_with(run_ctx *rc, const ox_step *st, ox_node_scratch *ns);

/* Infers, allocates and computes one node. */
static int exec_node(run_ctx *rc, const ox_step *st) {
    const ir_node *n = &rc->ge->graph->nodes[st->node];
    ox_error *err = rc->err;
    ox_node_scratch ns;
    /* on the stack for the usual few inputs and outputs: an allocation per
     * node took 1.5% of a small transformer's run (ViT-tiny, perf) */
    _Alignas(max_align_t) char stack[4096];
    void *block = ox_node_scratch_in(&ns, n->n_inputs, n->n_outputs, stack, sizeof stack);
    if (!block) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    int r = exec_node_with(rc, st, &ns);
    if (block != stack) free(block);
    return r;
}

/* When the plan made this node's output a view (ox_slot_info.view) and
 * the input is a tensor with exactly the bytes the inferred output needs,
 * binds the output to the input's memory under the new shape: the node
 * then needs no kernel. Returns 1 when bound. */
static int bind_view(run_ctx *rc, const ox_step *st, const ox_tensor *in, const ir_type *out,
                     int data_dependent) {
    int sl = st->out_slots[0];
    if (sl < 0 || !rc->ge->plan.slots[sl].view || !in || data_dependent) return 0;
    if (in->kind != OX_KIND_TENSOR || out->kind != OX_KIND_TENSOR || out->dtype != in->dtype ||
        out->rank < 0 || rc->slots[sl].mode != SLOT_EMPTY || rc->caller_out[sl])
        return 0;
    int64_t numel = 1;
    for (int d = 0; d < out->rank; d++) {
        if (out->dims[d] < 0) return 0;
        numel *= out->dims[d];
    }
    if (numel != ox_tensor_numel(in)) return 0;
    run_slot *rs = &rc->slots[sl];
    memset(&rs->hdr, 0, sizeof rs->hdr);
    rs->hdr.kind = OX_KIND_TENSOR;
    rs->hdr.dtype = in->dtype;
    rs->hdr.rank = out->rank;
    memcpy(rs->hdr.dims, out->dims, (size_t)out->rank * sizeof *out->dims);
    rs->hdr.data = in->data;
    rs->hdr.nbytes = in->nbytes;
    rs->hdr.device = in->device;
    rs->t = &rs->hdr;
    rs->mode = SLOT_BORROWED;
    return 1;
}

/* 1 when shadow runs disabled node i's device kernel (verify/shadow.c). */
static int forced_to_host(const ox_graph_exec *ge, int i) {
    return ge->force_host && atomic_load_explicit(&ge->force_host[i], memory_order_relaxed);
}

/* Fault injection stands for a faulty kernel: once shadow runs moved the
 * node to the CPU, its outputs are left alone. */
static int injects(const ox_graph_exec *ge, int i) {
    return ge->inject && ge->inject[i] && !forced_to_host(ge, i);
}

static int exec_node_with(run_ctx *rc, const ox_step *st, ox_node_scratch *ns) {
    onyx_session *s = rc->s;
    ox_graph_exec *ge = rc->ge;
    const ir_graph *g = ge->graph;
    const ir_node *n = &g->nodes[st->node];
    ox_error *err = rc->err;
    ox_tensor **ins = ns->ins, **outs = ns->outs;
    ir_type *in_types_store = ns->in_types_store, *out_types = ns->out_types;
    const ir_type **in_types = ns->in_types;
    const ox_tensor **in_vals = ns->in_vals;
    for (int k = 0; k < n->n_inputs; k++) {
        int sl = st->in_slots[k];
        ins[k] = sl >= 0 ? rc->slots[sl].t : NULL;
        in_types[k] = NULL;
        in_vals[k] = NULL;
        if (!ins[k]) {
            if (sl >= 0)
                return ox_fail(err, ONYX_RUNTIME_ERROR, "input '%s' has no value",
                               g->values[ge->plan.slots[sl].value].name);
            continue;
        }
        ox_value_type(ins[k], &in_types_store[k]);
        in_types[k] = &in_types_store[k];
        if (ins[k]->device == OX_DEVICE_HOST) in_vals[k] = ins[k];
    }
    memset(out_types, 0, (size_t)n->n_outputs * sizeof *out_types);
    ox_infer_ctx ic = {.node = n, .n_inputs = n->n_inputs, .inputs = in_types, .values = in_vals,
                       .n_outputs = n->n_outputs, .outputs = out_types, .runtime = 1, .err = err};
    if (ge->schemas[st->node]->infer(&ic) != 0) return -1;
    /* a perturbed view would write into the memory it views */
    int inject = injects(ge, st->node);
    if (!inject && bind_view(rc, st, ins[0], &out_types[0], ic.data_dependent)) return 0;
    for (int k = 0; k < n->n_outputs; k++) {
        outs[k] = NULL;
        int sl = st->out_slots[k];
        if (sl < 0 || ic.data_dependent || out_types[k].kind != OX_KIND_TENSOR) continue;
        if (out_types[k].rank < 0 || out_types[k].dtype == ONYX_UNDEFINED)
            return ox_fail(err, ONYX_RUNTIME_ERROR, "could not determine the shape of output %d", k);
        for (int d = 0; d < out_types[k].rank; d++)
            if (out_types[k].dims[d] < 0)
                return ox_fail(err, ONYX_RUNTIME_ERROR, "could not determine the shape of output %d", k);
        if (ox_run_alloc_slot(rc, sl, out_types[k].dtype, out_types[k].dims, out_types[k].rank) != 0)
            return -1;
        outs[k] = rc->slots[sl].t;
    }
    if (!ic.data_dependent && ox_outputs_all_empty(n, out_types)) return 0;
    if (ox_run_host_only(rc) && n->ep != s->n_eps - 1)
        return run_declined_node(rc, st, ins, outs, "the run completes on the CPU");
    if (forced_to_host(ge, st->node))
        return run_declined_node(rc, st, ins, outs,
                                 ge->force_host[st->node] == OX_FORCE_HOST_FAULT
                                     ? "its device failed while running it (a device fault)"
                                     : "its kernel is disabled after a verification mismatch");
    node_exec ne = {.stop = {poll_stop}, .rc = rc, .step = st, .iteration = -1};
    atomic_init(&ne.stop_code, 0);
    ox_kernel_ctx kc = {.node = n, .n_inputs = n->n_inputs, .inputs = ins,
                        .n_outputs = n->n_outputs, .outputs = outs, .pool = s->pool,
                        .state = ge->states[st->node], .ep = s->eps[n->ep],
                        .stream = rc->streams[n->ep], .err = err,
                        .exec = &ne, .stop = &ne.stop, .run_subgraph = run_subgraph};
    int failed = ge->kernels[st->node]->compute(&kc) != 0;
    onyx_code stopped = (onyx_code)atomic_load(&ne.stop_code);
    if (stopped != ONYX_OK && (!failed || !ox_is_stop_code(err->code))) {
        /* the kernel cut its work short: whatever it wrote is discarded */
        ox_error_clear(err);
        return fail_stop(rc, n, ne.iteration, stopped);
    }
    if (failed && ne.declined) {
        char why[OX_ERROR_MSG_MAX];
        snprintf(why, sizeof why, "%s", err->msg);
        ox_error_clear(err);
        if (run_declined_node(rc, st, ins, outs, why) != 0) return -1;
        failed = 0;
    }
    if (failed) {
        if (err->code == ONYX_OK) ox_fail(err, ONYX_RUNTIME_ERROR, "kernel failed");
        return -1;
    }
    for (int k = 0; k < n->n_outputs; k++) {
        int sl = st->out_slots[k];
        if (sl >= 0 && rc->slots[sl].mode == SLOT_EMPTY)
            return ox_fail(err, ONYX_RUNTIME_ERROR, "kernel did not produce output %d ('%s')", k,
                           g->values[n->outputs[k]].name);
    }
    return 0;
}

/* ---- input binding ---- */

static int find_graph_input(const onyx_session *s, const char *name) {
    const ir_graph *g = s->graph;
    for (int i = 0; i < g->n_inputs; i++)
        if (strcmp(g->values[g->inputs[i]].name, name) == 0) return g->inputs[i];
    return -1;
}

static int check_input(const onyx_session *s, int v, const ox_tensor *t, ox_error *err) {
    const ir_value *val = &s->graph->values[v];
    const ir_type *ty = &val->type;
    char a[160], b[160];
    if (!t) return ox_fail(err, ONYX_INVALID_ARGUMENT, "input '%s' is NULL", val->name);
    if (!val->has_type) return 0;
    if (t->kind != ty->kind)
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "input '%s' must be a %s, got a %s", val->name,
                       ty->kind == OX_KIND_TENSOR ? "tensor" : ty->kind == OX_KIND_SEQUENCE ? "sequence" : "optional",
                       t->kind == OX_KIND_TENSOR ? "tensor" : t->kind == OX_KIND_SEQUENCE ? "sequence" : "optional");
    if (t->kind != OX_KIND_TENSOR) return 0;
    if (ty->dtype != ONYX_UNDEFINED && t->dtype != ty->dtype)
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "input '%s' must be %s, got %s", val->name,
                       ox_dtype_name(ty->dtype), ox_dtype_name(t->dtype));
    if (ty->rank >= 0 && t->rank != ty->rank)
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "input '%s' must have rank %d (shape %s), got shape %s",
                       val->name, ty->rank, ox_shape_str(ty->dims, ty->rank, a, sizeof a),
                       ox_shape_str(t->dims, t->rank, b, sizeof b));
    for (int d = 0; ty->rank >= 0 && d < ty->rank; d++)
        if (ty->dims[d] >= 0 && ty->dims[d] != t->dims[d])
            return ox_fail(err, ONYX_INVALID_ARGUMENT, "input '%s' must have shape %s, got %s (dimension %d)",
                           val->name, ox_shape_str(ty->dims, ty->rank, a, sizeof a),
                           ox_shape_str(t->dims, t->rank, b, sizeof b), d);
    if (t->nbytes && !t->data)
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "input '%s' has no data", val->name);
    return 0;
}

/* A symbolic dimension must take one value across all inputs. */
static int check_symbols(const onyx_session *s, const ox_tensor *const *bound, ox_error *err) {
    const ir_graph *g = s->graph;
    for (int i = 0; i < g->n_inputs; i++) {
        const ir_value *a = &g->values[g->inputs[i]];
        const ox_tensor *ta = bound[i];
        if (!ta || ta->kind != OX_KIND_TENSOR || a->type.rank != ta->rank) continue;
        for (int da = 0; da < ta->rank; da++) {
            const char *sym = a->type.dim_params[da];
            if (!sym) continue;
            for (int j = i; j < g->n_inputs; j++) {
                const ir_value *b = &g->values[g->inputs[j]];
                const ox_tensor *tb = bound[j];
                if (!tb || tb->kind != OX_KIND_TENSOR || b->type.rank != tb->rank) continue;
                for (int db = 0; db < tb->rank; db++)
                    if (b->type.dim_params[db] && strcmp(b->type.dim_params[db], sym) == 0 &&
                        ta->dims[da] != tb->dims[db])
                        return ox_fail(err, ONYX_INVALID_ARGUMENT,
                                       "dimension '%s' is %lld in input '%s' but %lld in input '%s'",
                                       sym, (long long)ta->dims[da], a->name,
                                       (long long)tb->dims[db], b->name);
            }
        }
    }
    return 0;
}

/* ---- outputs ---- */

static int copy_into_caller(ox_tensor *dst, const ox_tensor *src, const char *name, ox_error *err) {
    if (dst == src) return 0;
    char a[128], b[128];
    if (src->kind != OX_KIND_TENSOR || dst->dtype != src->dtype ||
        !ox_shape_equal(dst->dims, dst->rank, src->dims, src->rank))
        return ox_fail(err, ONYX_INVALID_ARGUMENT,
                       "output '%s': the caller's tensor is %s %s but the model produces %s %s", name,
                       ox_dtype_name(dst->dtype), ox_shape_str(dst->dims, dst->rank, a, sizeof a),
                       ox_dtype_name(src->dtype), ox_shape_str(src->dims, src->rank, b, sizeof b));
    if (src->dtype == ONYX_STRING) {
        char **d = dst->data;
        char *const *sv = src->data;
        int64_t n = ox_tensor_numel(src);
        for (int64_t i = 0; i < n; i++) {
            char *c = strdup(sv[i] ? sv[i] : "");
            if (!c) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
            if (dst->ownership == OX_OWNED) free(d[i]);
            d[i] = c;
        }
        return 0;
    }
    if (src->nbytes) memcpy(dst->data, src->data, src->nbytes);
    return 0;
}

/* Hands slot s to the caller as an owned tensor, moving it when the run
 * owns it, cloning otherwise. */
static ox_tensor *take_output(run_ctx *rc, int s) {
    run_slot *rs = &rc->slots[s];
    ox_tensor *t = NULL;
    if (rs->mode == SLOT_VALUE) {
        t = rs->t;
    } else if (rs->mode == SLOT_DEVICE && rs->t == &rs->hdr &&
               ox_run_slot_device(rc, s) == OX_DEVICE_HOST) {
        /* the moved data keeps its charge; the new header is counted too,
         * as a Loop may keep one per iteration */
        if (ox_session_reserve(rc->s, sizeof *t, rc->err) != 0) return NULL;
        t = malloc(sizeof *t);
        if (!t) {
            ox_mem_unreserve(&rc->s->mem, sizeof *t);
            ox_fail(rc->err, ONYX_OUT_OF_MEMORY, "out of memory");
            return NULL;
        }
        *t = rs->hdr;
        t->charged += sizeof *t;
        t->ownership = OX_OWNED; /* host provider memory is plain aligned heap */
    } else {
        t = ox_tensor_clone(rs->t, rc->err);
        if (t && ox_session_charge_value(rc->s, t, rc->err) != 0) {
            ox_tensor_free(t);
            t = NULL;
        }
        return t;
    }
    rs->t = t;
    rs->mode = SLOT_BORROWED; /* now the caller's; later requests clone it */
    return t;
}

static int graph_output_index(const ir_graph *g, const char *name) {
    for (int i = 0; i < g->n_outputs; i++)
        if (strcmp(g->values[g->outputs[i]].name, name) == 0) return i;
    return -1;
}

/* Binds a subgraph's outer-scope values to the enclosing run's tensors. */
static int bind_outer(run_ctx *rc) {
    const ir_graph *g = rc->ge->graph;
    for (int v = 0; v < g->n_values; v++) {
        if (!g->values[v].outer) continue;
        const ir_graph *pg = rc->parent->ge->graph;
        const ox_step *ps = rc->parent_step;
        const ir_node *pn = &pg->nodes[ps->node];
        int pv = ir_graph_find(pg, g->values[v].name);
        const ox_tensor *t = NULL;
        for (int k = 0; k < pn->n_implicit && !t; k++)
            if (pn->implicit[k] == pv) t = rc->parent->slots[ps->implicit_slots[k]].t;
        if (!t)
            return ox_fail(rc->err, ONYX_RUNTIME_ERROR, "subgraph '%s': outer value '%s' has no value",
                           g->name, g->values[v].name);
        rc->slots[v].t = (ox_tensor *)t;
        rc->slots[v].mode = SLOT_BORROWED;
    }
    return 0;
}

/* Capture and fault injection after a node of the main graph ran. */
static int observe_node(run_ctx *rc, const ox_step *st, size_t pos) {
    const ox_graph_exec *ge = rc->ge;
    int inject = injects(ge, st->node);
    onyx_capture_fn capture = rc->ctl ? rc->ctl->capture : NULL;
    if (!inject && !capture) return 0;
    const ir_node *n = &ge->graph->nodes[st->node];
    ox_observed *outs = calloc((size_t)n->n_outputs + 1, sizeof *outs);
    if (!outs) return ox_fail(rc->err, ONYX_OUT_OF_MEMORY, "out of memory");
    for (int k = 0; k < n->n_outputs; k++) {
        int sl = st->out_slots[k];
        if (sl < 0) continue;
        int e = ox_run_slot_ep(rc, sl);
        outs[k] = (ox_observed){rc->slots[sl].t, rc->s->eps[e], rc->streams[e]};
    }
    int r = ox_observe_node(ge->graph, n, pos, inject, capture, rc->ctl->capture_user, outs,
                            n->n_outputs, rc->err);
    free(outs);
    return r;
}

/* exec_node, timed into the run options' node timing when it is on and
 * pos (the node's execution position in the main graph) is not -1. */
static int timed_exec_node(run_ctx *rc, const ox_step *st, int pos) {
    const ox_run_control *ctl = rc->ctl;
    if (pos < 0 || !ctl || !ctl->node_ns || (size_t)pos >= ctl->node_ns_count)
        return exec_node(rc, st);
    int64_t t0 = ox_run_clock_ns();
    int r = exec_node(rc, st);
    int64_t dt = ox_run_clock_ns() - t0;
    __atomic_fetch_add(&ctl->node_ns[pos], (uint64_t)(dt > 0 ? dt : 0), __ATOMIC_RELAXED);
    return r;
}

/* Runs one graph. bound[i] is the value of graph input i (NULL: its
 * initializer); caller_bufs[o] an optional caller buffer for graph output o;
 * want[o] says whether results[o] must be produced (owned by the caller). */
static int exec_graph(onyx_session *s, ox_graph_exec *ge, const run_ctx *parent,
                      const ox_step *parent_step, int64_t parent_iteration,
                      const ox_run_control *ctl, const ox_tensor *const *bound,
                      ox_tensor *const *caller_bufs, const int *want, ox_tensor **results,
                      ox_error *err) {
    const ir_graph *g = ge->graph;
    ox_plan *p = &ge->plan;
    int rc_val = -1;
    run_ctx rc = {.s = s, .ge = ge, .parent = parent, .parent_step = parent_step,
                  .parent_iteration = parent_iteration, .ctl = ctl, .err = err};
    if (parent) {
        rc.streams = parent->streams;
    } else if (ctl && ctl->host_only) {
        /* no device is touched: a stream per provider, none of them open */
        if (!(rc.streams = calloc((size_t)s->n_eps + 1, sizeof *rc.streams)))
            return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    } else if (ox_run_begin_streams(s, &rc.streams, err) != 0) {
        return -1;
    }
    int64_t *sig = malloc(((size_t)g->n_inputs * (OX_MAX_RANK + 2) + 1) * sizeof *sig);
    rc.slots = calloc((size_t)p->n_slots + 1, sizeof *rc.slots);
    rc.caller_out = calloc((size_t)p->n_slots + 1, sizeof *rc.caller_out);
    if (!sig || !rc.slots || !rc.caller_out) {
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    size_t sig_len = 0;
    for (int i = 0; i < g->n_inputs; i++) {
        int v = g->inputs[i];
        const ox_tensor *t = bound[i];
        if (!t) {
            if (!g->values[v].init) {
                ox_fail(err, ONYX_INVALID_ARGUMENT, "input '%s' was not given", g->values[v].name);
                goto done;
            }
            t = g->values[v].init;
        }
        rc.slots[v].t = (ox_tensor *)t;
        rc.slots[v].mode = SLOT_BORROWED;
        sig[sig_len++] = t->kind == OX_KIND_TENSOR ? t->rank : -1 - t->n_items;
        for (int d = 0; t->kind == OX_KIND_TENSOR && d < t->rank; d++) sig[sig_len++] = t->dims[d];
    }
    for (int v = 0; v < g->n_values; v++)
        if (p->slots[v].is_const) {
            rc.slots[v].t = g->values[v].init;
            rc.slots[v].mode = SLOT_BORROWED;
        }
    if (parent && bind_outer(&rc) != 0) goto done;
    for (int o = 0; caller_bufs && o < g->n_outputs; o++)
        if (caller_bufs[o]) rc.caller_out[p->output_slots[o]] = caller_bufs[o];

    /* Outer values are part of what the plan depends on only through
     * shapes inferred at run time; subgraph plans are keyed on inputs. */
    rc.mem = ox_plan_find_mem(p, sig, sig_len);
    if (rc.mem) {
        rc.arena = ox_arena_take(s, ge, rc.mem->arena_bytes, &rc.arena_size, err);
        if (!rc.arena) {
            ox_error_prefix(err, "the memory arena of graph '%s'", g->name);
            goto done;
        }
        if (!parent && !ox_run_host_only(&rc) && ox_run_take_device_arenas(&rc) != 0) goto done;
    } else {
        rc.observed = calloc((size_t)p->n_slots + 1, sizeof *rc.observed);
        if (!rc.observed) {
            ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
            goto done;
        }
    }

    int node_pos = 0; /* execution position, as the public API counts nodes */
    for (int i = 0; i < p->n_steps; i++) {
        const ox_step *st = &p->steps[i];
        int r;
        if (st->kind == OX_STEP_COPY) {
            r = ox_run_exec_copy(&rc, st);
        } else {
            r = check_stop(&rc, &g->nodes[st->node], -1);
            if (r == 0) r = timed_exec_node(&rc, st, parent ? -1 : node_pos);
            if (r == 0 && !parent) r = observe_node(&rc, st, (size_t)node_pos++);
            if (r != 0 && !ox_is_stop_code(err->code)) {
                char label[300];
                ox_error_prefix(err, "%s", ir_node_label(&g->nodes[st->node], label, sizeof label));
            }
        }
        if (r != 0) goto done;
        for (int k = 0; k < st->n_release; k++) {
            int sl = st->release[k];
            /* A view slot that had to own its bytes (its kernel ran: fault
             * injection, a data-dependent shape) may be viewed by later
             * views, whose lifetimes the plan extended only on the chain's
             * root: it lives to the end of the run. */
            if (p->slots[sl].view && rc.slots[sl].mode != SLOT_BORROWED) continue;
            ox_run_release_slot(&rc, sl);
        }
    }
    for (int o = 0; o < g->n_outputs; o++) {
        int sl = p->output_slots[o];
        const char *name = g->values[g->outputs[o]].name;
        if (!want[o]) continue;
        if (!rc.slots[sl].t) {
            ox_fail(err, ONYX_RUNTIME_ERROR, "output '%s' was not produced", name);
            goto done;
        }
        if (caller_bufs && caller_bufs[o] &&
            copy_into_caller(caller_bufs[o], rc.slots[sl].t, name, err) != 0)
            goto done;
    }
    for (int o = 0; o < g->n_outputs; o++) {
        results[o] = NULL;
        if (!want[o] || (caller_bufs && caller_bufs[o])) continue;
        results[o] = take_output(&rc, p->output_slots[o]);
        if (!results[o]) {
            ox_error_prefix(err, "output '%s'", g->values[g->outputs[o]].name);
            for (int k = 0; k < o; k++) {
                ox_tensor_free(results[k]);
                results[k] = NULL;
            }
            goto done;
        }
    }
    if (rc.observed && !ox_run_host_only(&rc)) {
        /* without a plan (out of memory) the next run simply records again;
         * a host-only run's sizes are not the plan's (device values on the host) */
        const ox_mem_plan *m = ox_plan_add_mem(p, sig, sig_len, rc.observed);
        if (m && ge == &s->main) ox_run_log_mem_plan(s, m);
        ox_plan_release_mem(p, m);
    }
    rc_val = 0;
done:
    if (rc.slots) {
        for (int sl = 0; sl < p->n_slots; sl++) {
            run_slot *rs = &rc.slots[sl];
            int keep = 0;
            for (int o = 0; rc_val == 0 && o < g->n_outputs && !keep; o++)
                keep = rs->t && (results[o] == rs->t || (caller_bufs && caller_bufs[o] == rs->t));
            if (keep) continue;
            ox_run_release_slot(&rc, sl);
        }
    }
    /* the device may still be working on what the run recorded: its
     * streams end (and wait) before the arena and plan are handed back */
    ox_run_give_device_arenas(&rc);
    if (!parent && ox_run_end_streams(s, rc.streams, rc_val == 0 ? err : NULL) != 0) rc_val = -1;
    if (rc.arena) ox_arena_give(s, ge, rc.arena, rc.arena_size);
    ox_plan_release_mem(p, rc.mem);
    free(rc.observed);
    free(rc.slots);
    free(rc.caller_out);
    free(sig);
    return rc_val;
}

static int run_subgraph(ox_kernel_ctx *ctx, const ir_graph *g, ox_tensor *const *inputs,
                        int n_inputs, ox_tensor **outputs, int n_outputs) {
    node_exec *ne = ctx->exec;
    if (!ne) return ox_fail(ctx->err, ONYX_NOT_IMPLEMENTED, "subgraphs cannot run outside a session");
    onyx_session *s = ne->rc->s;
    ox_graph_exec *ge = ox_session_find_exec(s, g);
    if (!ge) return ox_fail(ctx->err, ONYX_RUNTIME_ERROR, "subgraph '%s' was not prepared", g->name);
    if (n_inputs != g->n_inputs)
        return ox_fail(ctx->err, ONYX_INVALID_MODEL, "subgraph '%s' takes %d inputs, given %d", g->name,
                       g->n_inputs, n_inputs);
    if (n_outputs != g->n_outputs)
        return ox_fail(ctx->err, ONYX_INVALID_MODEL, "subgraph '%s' has %d outputs, %d expected",
                       g->name, g->n_outputs, n_outputs);
    int *want = malloc(((size_t)n_outputs + 1) * sizeof *want);
    if (!want) return ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < n_outputs; i++) want[i] = 1;
    int r = exec_graph(s, ge, ne->rc, ne->step, ne->iteration, ne->rc->ctl,
                       (const ox_tensor *const *)inputs, NULL, want, outputs, ctx->err);
    free(want);
    if (r != 0 && !ox_is_stop_code(ctx->err->code))
        ox_error_prefix(ctx->err, "in subgraph '%s'", g->name);
    return r;
}

int ox_session_run(onyx_session *s, const onyx_run_options *run_options,
                   const char *const *in_names, const ox_tensor *const *ins, size_t n_in,
                   const char *const *out_names, ox_tensor **outs, size_t n_out, ox_error *err) {
    ox_run_control ctl;
    ox_run_control_start(&ctl, run_options); /* the time limit counts from here */
    if (s->reference)
        return ox_shadow_run(s, &ctl, in_names, ins, n_in, out_names, outs, n_out, err);
    return ox_session_run_guarded(s, &ctl, in_names, ins, n_in, out_names, outs, n_out, err);
}

int ox_session_run_ctl(onyx_session *s, const ox_run_control *ctl, const char *const *in_names,
                       const ox_tensor *const *ins, size_t n_in, const char *const *out_names,
                       ox_tensor **outs, size_t n_out, ox_error *err) {
    const ir_graph *g = s->graph;
    int rc_val = -1;
    const ox_tensor **bound = calloc((size_t)g->n_inputs + 1, sizeof *bound);
    ox_tensor **bufs = calloc((size_t)g->n_outputs + 1, sizeof *bufs);
    ox_tensor **results = calloc((size_t)g->n_outputs + 1, sizeof *results);
    int *want = calloc((size_t)g->n_outputs + 1, sizeof *want);
    int *out_idx = calloc(n_out + 1, sizeof *out_idx);
    if (!bound || !bufs || !results || !want || !out_idx) {
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    if (n_in && (!in_names || !ins)) {
        ox_fail(err, ONYX_INVALID_ARGUMENT, "input names and tensors must not be NULL");
        goto done;
    }
    for (size_t i = 0; i < n_in; i++) {
        if (!in_names[i]) {
            ox_fail(err, ONYX_INVALID_ARGUMENT, "input name %zu is NULL", i);
            goto done;
        }
        int v = find_graph_input(s, in_names[i]);
        if (v < 0) {
            char list[512] = "";
            size_t off = 0;
            for (size_t k = 0; k < s->n_in && off < sizeof list; k++)
                off += (size_t)snprintf(list + off, sizeof list - off, "%s'%s'", k ? ", " : "",
                                        s->in_info[k].name);
            ox_fail(err, ONYX_INVALID_ARGUMENT, "the model has no input '%s' (inputs: %s)",
                    in_names[i], list);
            goto done;
        }
        int gi = 0;
        while (g->inputs[gi] != v) gi++;
        if (bound[gi]) {
            ox_fail(err, ONYX_INVALID_ARGUMENT, "input '%s' is given twice", in_names[i]);
            goto done;
        }
        if (check_input(s, v, ins[i], err) != 0) goto done;
        bound[gi] = ins[i];
    }
    if (check_symbols(s, bound, err) != 0) goto done;
    if (n_out && (!out_names || !outs)) {
        ox_fail(err, ONYX_INVALID_ARGUMENT, "output names and tensors must not be NULL");
        goto done;
    }
    for (size_t i = 0; i < n_out; i++) {
        int gi = out_names[i] ? graph_output_index(g, out_names[i]) : -1;
        if (gi < 0) {
            ox_fail(err, ONYX_INVALID_ARGUMENT, "the model has no output '%s'",
                    out_names[i] ? out_names[i] : "(null)");
            goto done;
        }
        out_idx[i] = gi;
        want[gi] = 1;
        if (outs[i]) {
            if (bufs[gi] && bufs[gi] != outs[i]) {
                ox_fail(err, ONYX_INVALID_ARGUMENT, "output '%s' is requested twice with two buffers",
                        out_names[i]);
                goto done;
            }
            if (outs[i]->kind != OX_KIND_TENSOR) {
                ox_fail(err, ONYX_INVALID_ARGUMENT, "output '%s': caller buffers must be tensors",
                        out_names[i]);
                goto done;
            }
            bufs[gi] = outs[i];
        }
    }
    if (exec_graph(s, &s->main, NULL, NULL, -1, ctl, bound, bufs, want, results, err) != 0)
        goto done;
    /* what the caller receives is the caller's memory, no longer the
     * session's (and may outlive the session) */
    for (int o = 0; o < g->n_outputs; o++) ox_value_uncharge(results[o]);
    /* Hand each requested output over; one asked for twice is cloned. */
    for (size_t i = 0; i < n_out; i++) {
        int gi = out_idx[i];
        if (outs[i]) continue;
        if (results[gi]) {
            outs[i] = results[gi];
            results[gi] = NULL;
        } else {
            const ox_tensor *src = NULL;
            for (size_t k = 0; k < i && !src; k++)
                if (out_idx[k] == gi) src = outs[k];
            if (!src) src = bufs[gi];
            outs[i] = src ? ox_tensor_clone(src, err) : NULL;
            if (!outs[i]) {
                if (!src) ox_fail(err, ONYX_RUNTIME_ERROR, "output '%s' was not produced", out_names[i]);
                for (size_t k = 0; k < i; k++)
                    if (!bufs[out_idx[k]]) {
                        ox_tensor_free(outs[k]);
                        outs[k] = NULL;
                    }
                goto done;
            }
        }
    }
    rc_val = 0;
done:
    for (int o = 0; results && o < g->n_outputs; o++) ox_tensor_free(results[o]);
    free(bound);
    free(bufs);
    free(results);
    free(want);
    free(out_idx);
    return rc_val;
}

void ox_session_plan_stats(onyx_session *s, ox_plan_stats *out) {
    memset(out, 0, sizeof *out);
    ox_plan *p = &s->main.plan;
    pthread_mutex_lock(&p->lock);
    out->mem_plans_built = p->mem_plans_built;
    if (p->mem_plans) {
        out->arena_bytes = p->mem_plans->arena_bytes;
        out->naive_bytes = p->mem_plans->naive_bytes;
    }
    pthread_mutex_unlock(&p->lock);
}
