/* Shape folding (level BASIC): the dimensions that static shape inference
 * pins down become constants, so the Shape -> Gather -> Concat ->
 * Reshape chains exporters write fold into constant Reshape targets
 * (constant folding takes them from here).
 *   Shape(x)                 all dimensions in [start, end) known
 *   Size(x)                  all dimensions known
 *   Gather(Shape(x), i)      the gathered dimensions known (the batch
 *                            dimension of a dynamic-batch model is not,
 *                            the others are)
 *   Slice(Shape(x), ...)     the sliced dimensions known
 * A dimension is known when inference gives it a value; symbolic
 * dimensions (dim_params) never count. The folded node's output becomes
 * a constant under its own name and the node goes.
 *
 * Shape arithmetic of dynamic-batch exports keeps the batch unknown, so
 * Reshape targets such as Concat(batch, 197, 3, 64) stay computed and
 * inference, which sees no constant target, knows only the Reshape's
 * rank; everything downstream then loses its static dimensions. Before
 * folding, the pass therefore tracks the partly known entries of small
 * int64 shape vectors (through Shape, Gather, Unsqueeze, Squeeze, Concat,
 * Slice, Cast and scalar Add/Sub/Mul) and gives each Reshape whose
 * target it knows in part the dimensions it determines (a positive entry;
 * 0: the input's dimension; -1: the rest of the input's elements when all
 * else is known), then infers again, until nothing more is learnt. */
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "ops/transform.h"
#include "optimizer/opt_util.h"
#include "optimizer/optimizer.h"

/* The entries of Shape node n's output, -1 where unknown, in out[0..*len).
 * Returns -1 when even its length is unknown. */
static int shape_entries(const ir_graph *g, const ir_node *n, int64_t *out, int *len) {
    if (n->n_inputs < 1 || n->inputs[0] < 0) return -1;
    const ir_value *x = &g->values[n->inputs[0]];
    if (!x->has_type || x->type.kind != OX_KIND_TENSOR || x->type.rank < 0) return -1;
    int64_t r = x->type.rank, start = 0, end = r;
    if (n->opset >= 15) {
        start = ir_attr_int(n, "start", 0);
        end = ir_attr_int(n, "end", r);
    }
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = start < 0 ? 0 : (start > r ? r : start);
    end = end < 0 ? 0 : (end > r ? r : end);
    *len = 0;
    for (int64_t d = start; d < end; d++) out[(*len)++] = x->type.dims[d];
    return 0;
}

static ox_tensor *int64_tensor(const int64_t *vals, const int64_t *dims, int rank, ox_error *err) {
    ox_tensor *t = ox_tensor_new(ONYX_INT64, dims, rank, err);
    if (t && t->nbytes) memcpy(t->data, vals, t->nbytes);
    return t;
}

/* The Shape node producing input 0 of n, or NULL. */
static const ir_node *shape_source(const ir_graph *g, const ir_node *n) {
    if (n->n_inputs < 1 || n->inputs[0] < 0) return NULL;
    int p = g->values[n->inputs[0]].producer;
    return p >= 0 && ox_is_op(&g->nodes[p], "Shape") ? &g->nodes[p] : NULL;
}

/* The folded output of node n, or NULL when it does not fold. */
static ox_tensor *fold(const ir_graph *g, const ir_node *n, ox_error *err) {
    int64_t ent[OX_MAX_RANK], vals[OX_MAX_RANK];
    int len = 0;
    if (n->n_outputs < 1 || n->outputs[0] < 0) return NULL;
    if (ox_is_op(n, "Shape")) {
        if (shape_entries(g, n, ent, &len) != 0) return NULL;
        for (int i = 0; i < len; i++)
            if (ent[i] < 0) return NULL;
        int64_t d = len;
        return int64_tensor(ent, &d, 1, err);
    }
    if (ox_is_op(n, "Size")) {
        const ir_value *x = n->inputs[0] >= 0 ? &g->values[n->inputs[0]] : NULL;
        if (!x || !x->has_type || x->type.kind != OX_KIND_TENSOR || x->type.rank < 0) return NULL;
        int64_t total = 1;
        for (int d = 0; d < x->type.rank; d++) {
            if (x->type.dims[d] < 0) return NULL;
            if (x->type.dims[d] && total > INT64_MAX / x->type.dims[d]) return NULL;
            total *= x->type.dims[d];
        }
        return int64_tensor(&total, NULL, 0, err);
    }
    const ir_node *sh = shape_source(g, n);
    if (!sh || shape_entries(g, sh, ent, &len) != 0) return NULL;
    if (ox_is_op(n, "Gather")) {
        int64_t axis = ir_attr_int(n, "axis", 0);
        if (axis != 0 && axis != -1) return NULL;
        const ox_tensor *idx = ox_const_value(g, n->inputs[1]);
        int cnt = 0;
        if (!idx || ox_const_ints(g, n, 1, vals, OX_MAX_RANK, &cnt) != 0) return NULL;
        for (int i = 0; i < cnt; i++) {
            int64_t j = vals[i] < 0 ? vals[i] + len : vals[i];
            if (j < 0 || j >= len || ent[j] < 0)
                return NULL; /* out of range: left to fail at run time */
            vals[i] = ent[j];
        }
        return int64_tensor(vals, idx->dims, idx->rank, err);
    }
    if (ox_is_op(n, "Slice") && n->opset >= 10) {
        int64_t st[1], en[1], ax[1] = {0}, sp[1] = {1};
        int ns = 0, ne = 0, na = 1, np = 1;
        if (ox_const_ints(g, n, 1, st, 1, &ns) || ox_const_ints(g, n, 2, en, 1, &ne) || ns != 1 ||
            ne != 1)
            return NULL;
        if (ir_node_has_input(n, 3) && (ox_const_ints(g, n, 3, ax, 1, &na) || na != 1)) return NULL;
        if (ir_node_has_input(n, 4) && (ox_const_ints(g, n, 4, sp, 1, &np) || np != 1)) return NULL;
        int64_t dims[1] = {len}, start[1], step[1], out[1];
        ox_error local = {0};
        if (ox_transform_slice_plan(dims, 1, st, en, ax, sp, 1, start, step, out, &local) != 0)
            return NULL;
        for (int64_t i = 0; i < out[0]; i++) {
            vals[i] = ent[start[0] + i * step[0]];
            if (vals[i] < 0) return NULL;
        }
        return int64_tensor(vals, out, 1, err);
    }
    return NULL;
}

/* ---- partly known shape vectors ---- */

typedef struct pvec {
    int len;    /* -1: nothing known */
    int scalar; /* a 0-D value (len 1) */
    int64_t e[OX_MAX_RANK];
    unsigned char known[OX_MAX_RANK];
} pvec;

static int pv_from_const(const ox_tensor *t, pvec *p) {
    if (!t || t->rank > 1 || (t->dtype != ONYX_INT64 && t->dtype != ONYX_INT32)) return -1;
    int64_t n = ox_tensor_numel(t);
    if (n > OX_MAX_RANK) return -1;
    p->len = (int)n;
    p->scalar = t->rank == 0;
    for (int64_t i = 0; i < n; i++) {
        p->e[i] =
            t->dtype == ONYX_INT64 ? ((const int64_t *)t->data)[i] : ((const int32_t *)t->data)[i];
        p->known[i] = 1;
    }
    return 0;
}

/* The partial value of value v: from pv (computed) or a constant. */
static const pvec *pv_of(const ir_graph *g, pvec *pv, int v, pvec *tmp) {
    if (v < 0) return NULL;
    if (pv[v].len >= 0) return &pv[v];
    return pv_from_const(ox_const_value(g, v), tmp) == 0 ? tmp : NULL;
}

/* a op b, with *ok 0 when it overflows (the value is then not known). */
static int64_t arith(const char *op, int64_t a, int64_t b, int *ok) {
    int64_t r = 0;
    if (strcmp(op, "Add") == 0) *ok = ox_add_i64(a, b, &r);
    else if (strcmp(op, "Sub") == 0) *ok = ox_sub_i64(a, b, &r);
    else *ok = ox_mul_i64(a, b, &r);
    return *ok ? r : 0;
}

/* The partial value node n computes, in *out (len -1 when none). */
static void pv_node(const ir_graph *g, pvec *pv, const ir_node *n, pvec *out) {
    pvec t0, t1;
    out->len = -1;
    out->scalar = 0;
    if (n->domain[0] || n->n_outputs != 1 || n->outputs[0] < 0) return;
    const char *op = n->op_type;
    if (strcmp(op, "Shape") == 0) {
        int len = 0;
        if (shape_entries(g, n, out->e, &len) != 0) return;
        for (int i = 0; i < len; i++) out->known[i] = out->e[i] >= 0;
        out->len = len;
        return;
    }
    const pvec *a = n->n_inputs > 0 ? pv_of(g, pv, n->inputs[0], &t0) : NULL;
    if (!a) return;
    if (strcmp(op, "Cast") == 0) {
        int64_t to = ir_attr_int(n, "to", 0);
        if (to == ONYX_INT64 || to == ONYX_INT32) *out = *a;
        return;
    }
    if (strcmp(op, "Gather") == 0) {
        int64_t axis = ir_attr_int(n, "axis", 0);
        const ox_tensor *it = n->n_inputs > 1 ? ox_const_value(g, n->inputs[1]) : NULL;
        pvec idx;
        if ((axis != 0 && axis != -1) || a->scalar || pv_from_const(it, &idx) != 0) return;
        for (int i = 0; i < idx.len; i++) {
            int64_t j = idx.e[i] < 0 ? idx.e[i] + a->len : idx.e[i];
            if (j < 0 || j >= a->len) return;
            out->e[i] = a->e[j];
            out->known[i] = a->known[j];
        }
        out->len = idx.len;
        out->scalar = idx.scalar;
        return;
    }
    if (strcmp(op, "Unsqueeze") == 0 || strcmp(op, "Squeeze") == 0) {
        /* only the 0-D <-> 1-element moves of shape arithmetic */
        int unsq = op[0] == 'U';
        if (unsq != a->scalar || a->len != 1) return;
        *out = *a;
        out->scalar = !unsq;
        return;
    }
    if (strcmp(op, "Concat") == 0) {
        int len = 0;
        for (int k = 0; k < n->n_inputs; k++) {
            const pvec *p = pv_of(g, pv, n->inputs[k], &t1);
            if (!p || p->scalar || len + p->len > OX_MAX_RANK) return;
            for (int i = 0; i < p->len; i++) {
                out->e[len] = p->e[i];
                out->known[len++] = p->known[i];
            }
        }
        out->len = len;
        return;
    }
    if (strcmp(op, "Slice") == 0 && n->opset >= 10 && !a->scalar) {
        int64_t st[1], en[1], ax[1] = {0}, sp[1] = {1};
        int ns = 0, ne = 0, na = 1, np = 1;
        if (ox_const_ints(g, n, 1, st, 1, &ns) || ox_const_ints(g, n, 2, en, 1, &ne) || ns != 1 ||
            ne != 1)
            return;
        if (ir_node_has_input(n, 3) && (ox_const_ints(g, n, 3, ax, 1, &na) || na != 1)) return;
        if (ir_node_has_input(n, 4) && (ox_const_ints(g, n, 4, sp, 1, &np) || np != 1)) return;
        int64_t dims[1] = {a->len}, start[1], step[1], cnt[1];
        ox_error local = {0};
        if (ox_transform_slice_plan(dims, 1, st, en, ax, sp, 1, start, step, cnt, &local) != 0)
            return;
        for (int64_t i = 0; i < cnt[0]; i++) {
            out->e[i] = a->e[start[0] + i * step[0]];
            out->known[i] = a->known[start[0] + i * step[0]];
        }
        out->len = (int)cnt[0];
        return;
    }
    if ((strcmp(op, "Add") == 0 || strcmp(op, "Sub") == 0 || strcmp(op, "Mul") == 0) &&
        n->n_inputs == 2) {
        const pvec *b = pv_of(g, pv, n->inputs[1], &t1);
        if (!b || a->len != 1 || b->len != 1) return;
        int ok = 0;
        out->e[0] = a->known[0] && b->known[0] ? arith(op, a->e[0], b->e[0], &ok) : 0;
        out->known[0] = (unsigned char)ok;
        out->len = 1;
        out->scalar = a->scalar && b->scalar;
    }
}

/* Gives Reshape node n's output the dimensions its partly known target
 * determines; 1 when its type changed. */
static int refine_reshape(ir_graph *g, const ir_node *n, const pvec *t) {
    int x = n->inputs[0], y = n->outputs[0];
    if (x < 0 || y < 0 || t->scalar || t->len < 1) return 0;
    const ir_value *xv = &g->values[x];
    ir_value *yv = &g->values[y];
    if (!xv->has_type || xv->type.kind != OX_KIND_TENSOR) return 0;
    if (yv->init || (yv->has_type && yv->type.rank >= 0 && yv->type.rank != t->len)) return 0;
    int allowzero = n->opset >= 14 ? (int)ir_attr_int(n, "allowzero", 0) : 0;
    int xr = xv->type.rank;
    int64_t dims[OX_MAX_RANK], known_prod = 1, x_numel = 1;
    int infer_at = -1, all_known = 1;
    for (int d = 0; d < xr; d++) {
        int64_t dd = xv->type.dims[d];
        if (dd < 0 || (x_numel > 0 && dd > INT64_MAX / x_numel))
            x_numel = -1; /* unknown, or too large to be a real tensor */
        else if (x_numel >= 0)
            x_numel *= dd;
    }
    if (xr < 0) x_numel = -1;
    for (int i = 0; i < t->len; i++) {
        dims[i] = -1;
        if (!t->known[i]) {
            all_known = 0;
            continue;
        }
        int64_t v = t->e[i];
        if (v == -1) {
            if (infer_at >= 0) return 0;
            infer_at = i;
        } else if (v == 0 && !allowzero) {
            if (xr >= 0 && i < xr) dims[i] = xv->type.dims[i];
        } else if (v >= 0) {
            dims[i] = v;
        } else {
            return 0; /* invalid: left to fail at run time */
        }
        if (i != infer_at) {
            if (dims[i] < 0)
                all_known = 0;
            else if (known_prod >= 0 && (dims[i] == 0 || known_prod <= INT64_MAX / dims[i]))
                known_prod *= dims[i];
            else
                known_prod = -1; /* overflows: nothing can be inferred */
        }
    }
    if (infer_at >= 0 && all_known && x_numel >= 0 && known_prod > 0 && x_numel % known_prod == 0)
        dims[infer_at] = x_numel / known_prod;
    int changed = 0;
    if (!yv->has_type) {
        memset(&yv->type, 0, sizeof yv->type);
        yv->type.kind = OX_KIND_TENSOR;
        yv->type.dtype = xv->type.dtype;
        yv->type.rank = t->len;
        for (int i = 0; i < t->len; i++) yv->type.dims[i] = -1;
        yv->has_type = 1;
        changed = 1;
    } else if (yv->type.rank < 0) {
        yv->type.rank = t->len;
        for (int i = 0; i < t->len; i++) yv->type.dims[i] = -1;
        changed = 1;
    }
    for (int i = 0; i < t->len; i++)
        if (dims[i] >= 0 && yv->type.dims[i] < 0) {
            yv->type.dims[i] = dims[i];
            free(yv->type.dim_params[i]);
            yv->type.dim_params[i] = NULL;
            changed = 1;
        }
    return changed;
}

/* One sweep in topological order; returns how many Reshape outputs
 * learnt dimensions, -1 when out of memory. */
static int refine(ir_graph *g) {
    int *order = malloc(((size_t)g->n_nodes + 1) * sizeof *order);
    pvec *pv = malloc(((size_t)g->n_values + 1) * sizeof *pv);
    ox_error local = {0};
    if (!order || !pv || ir_graph_toposort(g, order, &local) != 0) {
        free(order);
        free(pv);
        return order && pv ? 0 : -1;
    }
    for (int v = 0; v < g->n_values; v++) pv[v].len = -1;
    int changed = 0;
    for (int oi = 0; oi < g->n_nodes; oi++) {
        const ir_node *n = &g->nodes[order[oi]];
        if (ox_is_op(n, "Reshape") && n->n_inputs >= 2 && n->n_outputs == 1) {
            pvec tmp;
            const pvec *t = pv_of(g, pv, n->inputs[1], &tmp);
            if (t && !ox_const_value(g, n->inputs[1])) changed += refine_reshape(g, n, t);
            continue;
        }
        pvec out;
        pv_node(g, pv, n, &out);
        if (out.len >= 0) pv[n->outputs[0]] = out;
    }
    free(order);
    free(pv);
    return changed;
}

int ox_pass_fold_shapes(ox_pass_ctx *ctx, ir_graph *g) {
    int any = 0;
    for (int i = 0; i < g->n_nodes && !any; i++)
        any = ox_is_op(&g->nodes[i], "Shape") || ox_is_op(&g->nodes[i], "Size");
    if (!any || ox_infer_quietly(g) != 0) return 0;
    /* each refinement can make more shapes known downstream */
    for (int iter = 0; iter < 16; iter++) {
        int r = refine(g);
        if (r < 0) return ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
        if (r == 0 || ox_infer_quietly(g) != 0) break;
    }
    unsigned char *dead = calloc((size_t)g->n_nodes + 1, 1);
    if (!dead) return ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    int changes = 0, rc = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        ir_node *n = &g->nodes[i];
        ox_error local = {0};
        ox_tensor *t = fold(g, n, &local);
        if (!t) continue;
        /* a Gather or Slice folds from its Shape's facts, whose output
         * may have become a constant in this sweep: still the same facts */
        ir_value_set_constant(g, n->outputs[0], t);
        dead[i] = 1;
        changes++;
    }
    if (changes && ir_graph_remove_nodes(g, dead) != 0)
        rc = ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    free(dead);
    return rc == 0 ? changes : -1;
}
