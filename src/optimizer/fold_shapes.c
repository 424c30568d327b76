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
 * a constant under its own name and the node goes. */
#include <stdlib.h>
#include <string.h>

#include "ops/transform.h"
#include "optimizer/opt_util.h"
#include "optimizer/optimizer.h"

static int is_op(const ir_node *n, const char *op) { return !n->domain[0] && strcmp(n->op_type, op) == 0; }

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

/* Integer entries of a constant input (int32 or int64, at most max). */
static int const_ints(const ir_graph *g, const ir_node *n, int k, int64_t *out, int max, int *count) {
    if (!ir_node_has_input(n, k)) return -1;
    const ox_tensor *t = ox_const_value(g, n->inputs[k]);
    if (!t || t->rank > 1 || (t->dtype != ONYX_INT64 && t->dtype != ONYX_INT32)) return -1;
    int64_t cnt = ox_tensor_numel(t);
    if (cnt > max) return -1;
    for (int64_t i = 0; i < cnt; i++)
        out[i] = t->dtype == ONYX_INT64 ? ((const int64_t *)t->data)[i] : ((const int32_t *)t->data)[i];
    *count = (int)cnt;
    return 0;
}

/* The Shape node producing input 0 of n, or NULL. */
static const ir_node *shape_source(const ir_graph *g, const ir_node *n) {
    if (n->n_inputs < 1 || n->inputs[0] < 0) return NULL;
    int p = g->values[n->inputs[0]].producer;
    return p >= 0 && is_op(&g->nodes[p], "Shape") ? &g->nodes[p] : NULL;
}

/* The folded output of node n, or NULL when it does not fold. */
static ox_tensor *fold(const ir_graph *g, const ir_node *n, ox_error *err) {
    int64_t ent[OX_MAX_RANK], vals[OX_MAX_RANK];
    int len = 0;
    if (n->n_outputs < 1 || n->outputs[0] < 0) return NULL;
    if (is_op(n, "Shape")) {
        if (shape_entries(g, n, ent, &len) != 0) return NULL;
        for (int i = 0; i < len; i++)
            if (ent[i] < 0) return NULL;
        int64_t d = len;
        return int64_tensor(ent, &d, 1, err);
    }
    if (is_op(n, "Size")) {
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
    if (is_op(n, "Gather")) {
        int64_t axis = ir_attr_int(n, "axis", 0);
        if (axis != 0 && axis != -1) return NULL;
        const ox_tensor *idx = ox_const_value(g, n->inputs[1]);
        int cnt = 0;
        if (!idx || const_ints(g, n, 1, vals, OX_MAX_RANK, &cnt) != 0) return NULL;
        for (int i = 0; i < cnt; i++) {
            int64_t j = vals[i] < 0 ? vals[i] + len : vals[i];
            if (j < 0 || j >= len || ent[j] < 0) return NULL; /* out of range: left to fail at run time */
            vals[i] = ent[j];
        }
        return int64_tensor(vals, idx->dims, idx->rank, err);
    }
    if (is_op(n, "Slice") && n->opset >= 10) {
        int64_t st[1], en[1], ax[1] = {0}, sp[1] = {1};
        int ns = 0, ne = 0, na = 1, np = 1;
        if (const_ints(g, n, 1, st, 1, &ns) || const_ints(g, n, 2, en, 1, &ne) || ns != 1 || ne != 1)
            return NULL;
        if (ir_node_has_input(n, 3) && (const_ints(g, n, 3, ax, 1, &na) || na != 1)) return NULL;
        if (ir_node_has_input(n, 4) && (const_ints(g, n, 4, sp, 1, &np) || np != 1)) return NULL;
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

int ox_pass_fold_shapes(ox_pass_ctx *ctx, ir_graph *g) {
    int any = 0;
    for (int i = 0; i < g->n_nodes && !any; i++)
        any = is_op(&g->nodes[i], "Shape") || is_op(&g->nodes[i], "Size");
    if (!any || ox_infer_quietly(g) != 0) return 0;
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
