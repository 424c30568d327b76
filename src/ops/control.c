/* Schemas of the control-flow operators If, Loop and Scan. Their results
 * come out of running a subgraph, so at run time inference only checks
 * the node against its body and leaves allocation to the kernel
 * (data_dependent). Statically, types come from the body's declared
 * outputs and the node's inputs; shapes only where every source agrees. */
#include <string.h>

#include "core/checked.h"
#include "ops/op.h"

extern const ox_op_table ox_ops_control;

static const ir_graph *body_attr(ox_infer_ctx *c, const char *name) {
    const ir_attr *a = ir_node_attr(c->node, name);
    if (!a || !a->g) {
        ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: the '%s' graph attribute is required", c->node->op_type, name);
        return NULL;
    }
    return a->g;
}

/* Declared type of output i of a body, or NULL when the model gives none. */
static const ir_type *body_out(const ir_graph *g, int i) {
    const ir_value *v = &g->values[g->outputs[i]];
    return v->has_type ? &v->type : NULL;
}

/* Output type from two descriptions of the same value (either may be
 * NULL): the kind and type of whichever knows them, the shape only where
 * both agree, since either may be what the run actually produces. */
static void merge_into(ir_type *o, const ir_type *a, const ir_type *b) {
    if (!o) return;
    const ir_type *k = a && (a->dtype != ONYX_UNDEFINED || a->kind != OX_KIND_TENSOR) ? a : b;
    ox_type_set_unknown_shape(o, k ? k->dtype : ONYX_UNDEFINED);
    o->kind = k ? k->kind : OX_KIND_TENSOR;
    if (o->dtype == ONYX_UNDEFINED && a && b) o->dtype = a->dtype != ONYX_UNDEFINED ? a->dtype : b->dtype;
    if (!a || !b || a->kind != OX_KIND_TENSOR || b->kind != OX_KIND_TENSOR || a->rank < 0 ||
        a->rank != b->rank)
        return;
    o->rank = a->rank;
    for (int d = 0; d < a->rank; d++) o->dims[d] = a->dims[d] == b->dims[d] ? a->dims[d] : -1;
}

/* A condition or trip count: one element of the given type. */
static int check_flag(ox_infer_ctx *c, int i, ox_dtype want, const char *what) {
    const ir_type *t = ox_infer_in(c, i);
    if (!t) return 0;
    if (t->kind != OX_KIND_TENSOR && c->runtime)
        return ox_infer_fail(c, ONYX_INVALID_ARGUMENT, "%s: '%s' must be a tensor", c->node->op_type, what);
    if (t->dtype != ONYX_UNDEFINED && t->dtype != want)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: '%s' must be %s, got %s",
                             c->node->op_type, what, ox_dtype_name(want), ox_dtype_name(t->dtype));
    int64_t n = ox_infer_numel(t->dims, t->rank);
    if (n >= 0 && n != 1)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: '%s' must hold exactly one value, got %lld", c->node->op_type,
                             what, (long long)n);
    return 0;
}

/* ---- If ---- */

static int infer_if(ox_infer_ctx *c) {
    const ir_graph *tg = body_attr(c, "then_branch");
    if (!tg) return -1;
    const ir_graph *eg = body_attr(c, "else_branch");
    if (!eg) return -1;
    if (check_flag(c, 0, ONYX_BOOL, "cond") != 0) return -1;
    if (tg->n_outputs != c->n_outputs || eg->n_outputs != c->n_outputs)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "If: the node has %d outputs but then_branch has %d and else_branch %d",
                             c->n_outputs, tg->n_outputs, eg->n_outputs);
    for (int i = 0; i < c->n_outputs; i++) {
        const ir_type *a = body_out(tg, i), *b = body_out(eg, i);
        if (a && b && a->kind == b->kind && a->dtype != ONYX_UNDEFINED && b->dtype != ONYX_UNDEFINED &&
            a->dtype != b->dtype)
            return ox_infer_fail(c, ONYX_INVALID_MODEL,
                                 "If: output %d is %s in then_branch but %s in else_branch", i,
                                 ox_dtype_name(a->dtype), ox_dtype_name(b->dtype));
        merge_into(ox_infer_out(c, i), a, b);
    }
    c->data_dependent = c->runtime;
    return 0;
}

/* ---- Loop ---- */

static int infer_loop(ox_infer_ctx *c) {
    const ir_graph *g = body_attr(c, "body");
    if (!g) return -1;
    int n = c->n_inputs - 2;
    int k = c->n_outputs - n;
    if (n < 0 || k < 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "Loop: %d inputs and %d outputs cannot hold %d loop-carried values", c->n_inputs,
                             c->n_outputs, n < 0 ? 0 : n);
    if (g->n_inputs != 2 + n)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "Loop: the body takes %d inputs but must take 2 + %d (iteration, condition, "
                             "loop-carried values)",
                             g->n_inputs, n);
    if (g->n_outputs != 1 + n + k)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "Loop: the body has %d outputs but must have 1 + %d + %d (condition, loop-carried "
                             "values, scan outputs)",
                             g->n_outputs, n, k);
    if (check_flag(c, 0, ONYX_INT64, "M") != 0 || check_flag(c, 1, ONYX_BOOL, "cond") != 0) return -1;
    for (int i = 0; i < n; i++) {
        const ir_type *t = ox_infer_in(c, 2 + i);
        if (!t) return ox_infer_fail(c, ONYX_INVALID_MODEL, "Loop: loop-carried input %d is missing", i);
        const ir_type *bo = body_out(g, 1 + i);
        /* A value of unknown type is reported as a tensor of no type. */
        if (t->kind == OX_KIND_TENSOR && t->dtype == ONYX_UNDEFINED && t->rank < 0) t = NULL;
        if (t && bo && t->kind == bo->kind && t->dtype != ONYX_UNDEFINED && bo->dtype != ONYX_UNDEFINED &&
            t->dtype != bo->dtype)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "Loop: loop-carried value %d enters as %s but the body returns %s",
                                 i, ox_dtype_name(t->dtype), ox_dtype_name(bo->dtype));
        /* After an iteration the value is what the body returned. */
        merge_into(ox_infer_out(c, i), bo, t);
    }
    for (int j = 0; j < k; j++) {
        ir_type *o = ox_infer_out(c, n + j);
        if (!o) continue;
        const ir_type *bo = body_out(g, 1 + n + j);
        if (bo && bo->kind != OX_KIND_TENSOR)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Loop: scan output %d must be a tensor", j);
        ox_type_set_unknown_shape(o, bo ? bo->dtype : ONYX_UNDEFINED);
        if (bo && bo->rank >= 0 && bo->rank < OX_MAX_RANK) {
            o->rank = bo->rank + 1;
            o->dims[0] = -1;
            for (int d = 0; d < bo->rank; d++) o->dims[d + 1] = bo->dims[d];
        }
    }
    c->data_dependent = c->runtime;
    return 0;
}

/* ---- Scan ---- */

/* Reads an optional per-input list attribute of `count` entries. */
static int attr_list(ox_infer_ctx *c, const char *name, int count, const int64_t **out) {
    size_t got = 0;
    *out = ir_attr_ints(c->node, name, &got);
    if (*out && got != (size_t)count)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Scan: '%s' has %zu entries, expected %d", name, got, count);
    return 0;
}

static int infer_scan(ox_infer_ctx *c) {
    const ir_graph *g = body_attr(c, "body");
    if (!g) return -1;
    int v8 = c->node->opset < 9;
    int first = v8 ? 1 : 0; /* opset 8 puts sequence_lens first */
    const ir_attr *ma = ir_node_attr(c->node, "num_scan_inputs");
    if (!ma) return ox_infer_fail(c, ONYX_INVALID_MODEL, "Scan: the 'num_scan_inputs' attribute is required");
    int64_t m = ma->i;
    int64_t n = 0;
    if (m < 1 || !ox_sub_i64(c->n_inputs - first, m, &n) || n < 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Scan: num_scan_inputs = %lld does not fit %d inputs",
                             (long long)m, c->n_inputs - first);
    int64_t k = c->n_outputs - n;
    if (k < 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Scan: %d outputs cannot hold %lld state values",
                             c->n_outputs, (long long)n);
    if (g->n_inputs != n + m || g->n_outputs != n + k)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "Scan: the body has %d inputs and %d outputs; the node needs %lld and %lld",
                             g->n_inputs, g->n_outputs, (long long)(n + m), (long long)(n + k));
    const int64_t *in_axes = NULL, *in_dirs = NULL, *out_axes = NULL, *out_dirs = NULL;
    if (v8) {
        if (attr_list(c, "directions", (int)m, &in_dirs) != 0) return -1;
        const ir_type *sl = ox_infer_in(c, 0);
        if (sl && sl->dtype != ONYX_UNDEFINED && sl->dtype != ONYX_INT64)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "Scan: 'sequence_lens' must be int64, got %s",
                                 ox_dtype_name(sl->dtype));
        if (sl && sl->rank >= 0 && sl->rank != 1)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "Scan: 'sequence_lens' must be 1-D, got rank %d", sl->rank);
    } else {
        if (attr_list(c, "scan_input_axes", (int)m, &in_axes) != 0 ||
            attr_list(c, "scan_input_directions", (int)m, &in_dirs) != 0 ||
            attr_list(c, "scan_output_axes", (int)k, &out_axes) != 0 ||
            attr_list(c, "scan_output_directions", (int)k, &out_dirs) != 0)
            return -1;
        for (int64_t j = 0; out_dirs && j < k; j++)
            if (out_dirs[j] != 0 && out_dirs[j] != 1)
                return ox_infer_fail(c, ONYX_INVALID_MODEL, "Scan: scan_output_directions[%lld] must be 0 or 1",
                                     (long long)j);
    }
    for (int64_t j = 0; in_dirs && j < m; j++)
        if (in_dirs[j] != 0 && in_dirs[j] != 1)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Scan: direction %lld of scan input %lld must be 0 or 1",
                                 (long long)in_dirs[j], (long long)j);
    /* Sequence length (and batch for opset 8) from the scan inputs. */
    int64_t len = -1, batch = -1;
    for (int64_t j = 0; j < m; j++) {
        const ir_type *t = ox_infer_in(c, (int)(first + n + j));
        if (!t) return ox_infer_fail(c, ONYX_INVALID_MODEL, "Scan: scan input %lld is missing", (long long)j);
        if (c->runtime && t->kind != OX_KIND_TENSOR)
            return ox_infer_fail(c, ONYX_INVALID_ARGUMENT, "Scan: scan input %lld must be a tensor", (long long)j);
        if (t->rank < 0) continue;
        int64_t axis = v8 ? 1 : (in_axes ? in_axes[j] : 0);
        if (axis < -t->rank || axis >= t->rank)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "Scan: axis %lld of scan input %lld is out of range for rank %d",
                                 (long long)axis, (long long)j, t->rank);
        if (axis < 0) axis += t->rank;
        int64_t d = t->dims[axis];
        if (d >= 0 && len >= 0 && d != len)
            return ox_infer_fail(
                c, ox_infer_bad_code(c),
                "Scan: scan input %lld has sequence length %lld but an earlier one has %lld",
                (long long)j, (long long)d, (long long)len);
        if (d >= 0) len = d;
        if (v8 && t->dims[0] >= 0) {
            if (batch >= 0 && batch != t->dims[0])
                return ox_infer_fail(
                    c, ox_infer_bad_code(c),
                    "Scan: scan input %lld has batch size %lld but an earlier one has %lld",
                    (long long)j, (long long)t->dims[0], (long long)batch);
            batch = t->dims[0];
        }
    }
    for (int64_t i = 0; i < n; i++) {
        const ir_type *t = ox_infer_in(c, (int)(first + i));
        if (!t) return ox_infer_fail(c, ONYX_INVALID_MODEL, "Scan: state input %lld is missing", (long long)i);
        if (t->kind == OX_KIND_TENSOR && t->dtype == ONYX_UNDEFINED && t->rank < 0) t = NULL;
        ir_type *o = ox_infer_out(c, (int)i);
        if (!o) continue;
        /* States keep their shape from one iteration to the next. */
        const ir_type *bo = body_out(g, (int)i);
        ox_type_set_unknown_shape(o, t ? t->dtype : bo ? bo->dtype : ONYX_UNDEFINED);
        if (t && t->kind == OX_KIND_TENSOR && t->rank >= 0) {
            o->rank = t->rank;
            memcpy(o->dims, t->dims, (size_t)t->rank * sizeof *t->dims);
        }
    }
    for (int64_t j = 0; j < k; j++) {
        ir_type *o = ox_infer_out(c, (int)(n + j));
        if (!o) continue;
        const ir_type *bo = body_out(g, (int)(n + j));
        if (bo && bo->kind != OX_KIND_TENSOR)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Scan: scan output %lld must be a tensor", (long long)j);
        ox_type_set_unknown_shape(o, bo ? bo->dtype : ONYX_UNDEFINED);
        if (!bo || bo->rank < 0 || bo->rank + 1 + v8 > OX_MAX_RANK) continue;
        int r = bo->rank + 1 + v8;
        int64_t axis = v8 ? 1 : (out_axes ? out_axes[j] : 0);
        if (!v8 && (axis < -(bo->rank + 1) || axis > bo->rank))
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Scan: scan_output_axes[%lld] = %lld is out of range for rank %d",
                                 (long long)j, (long long)axis, bo->rank + 1);
        if (axis < 0) axis += bo->rank + 1;
        o->rank = r;
        for (int d = 0, s = 0; d < r; d++) {
            if (v8 && d == 0)
                o->dims[d] = batch;
            else if (d == axis)
                o->dims[d] = len;
            else
                o->dims[d] = bo->dims[s++];
        }
    }
    c->data_dependent = c->runtime;
    return 0;
}

static const ox_op_schema OPS[] = {
    {"", "If", 1, 25, 1, 1, 1, -1, infer_if},
    {"", "Loop", 1, 25, 0, -1, 1, -1, infer_loop}, /* M and cond may be empty */
    {"", "Scan", 8, 25, 0, -1, 1, -1, infer_scan}, /* opset 8 may omit sequence_lens */
};

const ox_op_table ox_ops_control = {OPS, sizeof OPS / sizeof OPS[0]};
