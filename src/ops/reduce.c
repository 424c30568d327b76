/* Schemas of the reductions (ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/
 * LogSumExp/SumSquare), ArgMax/ArgMin, CumSum and CumProd. */
#include <inttypes.h>
#include <string.h>

#include "core/dtype.h"
#include "ops/op.h"

extern const ox_op_table ox_ops_reduce;

#define MT(t) (1u << (t))
#define M_FLOAT (MT(ONYX_FLOAT32) | MT(ONYX_FLOAT64) | MT(ONYX_FLOAT16) | MT(ONYX_BFLOAT16))
#define M_INT                                                                           \
    (MT(ONYX_INT8) | MT(ONYX_INT16) | MT(ONYX_INT32) | MT(ONYX_INT64) | MT(ONYX_UINT8) | \
     MT(ONYX_UINT16) | MT(ONYX_UINT32) | MT(ONYX_UINT64))
#define M_NUM (M_FLOAT | M_INT)

#define MAX_AXES 64

static int check_numeric(ox_infer_ctx *c, int i) {
    const ir_type *t = ox_infer_in(c, i);
    if (!t) return 0;
    if (t->kind != OX_KIND_TENSOR)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: input %d must be a tensor",
                             c->node->op_type, i);
    if (t->dtype == ONYX_UNDEFINED || (t->dtype < 32 && (MT(t->dtype) & M_NUM))) return 0;
    return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: input %d has type %s; expected a numeric type",
                         c->node->op_type, i, ox_dtype_name(t->dtype));
}

/* ---- Reduce* ---- */

/* Element types beyond the numeric ones that a Reduce* version accepts:
 * ReduceMax/ReduceMin-20 add bool; ReduceLogSum/ReduceLogSumExp-28 drop
 * the integer types (their empty reduction is minus infinity). */
static int check_reduce_type(ox_infer_ctx *c) {
    const char *op = c->node->op_type;
    const ir_type *t = ox_infer_in(c, 0);
    int ver = ox_op_since_version(c->node->domain, op, c->node->opset);
    if (!t || t->kind != OX_KIND_TENSOR || t->dtype == ONYX_UNDEFINED) return check_numeric(c, 0);
    if (t->dtype == ONYX_BOOL && (strcmp(op, "ReduceMax") == 0 || strcmp(op, "ReduceMin") == 0)) {
        if (ver >= 20) return 0;
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "%s-%d: input has type bool, which needs %s-20 (opset 20)", op,
                             ver, op);
    }
    if (ver >= 28 && !ox_dtype_is_float(t->dtype) &&
        (strcmp(op, "ReduceLogSum") == 0 || strcmp(op, "ReduceLogSumExp") == 0))
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "%s-%d: input has type %s; expected a floating-point type", op, ver,
                             ox_dtype_name(t->dtype));
    return check_numeric(c, 0);
}

static int infer_reduce(ox_infer_ctx *c) {
    const char *op = c->node->op_type;
    if (check_reduce_type(c) != 0) return -1;
    const ir_type *x = ox_infer_in(c, 0);
    ir_type *o = ox_infer_out(c, 0);
    if (!x || !o) return 0;
    ox_dtype dt = x->dtype;
    int keep = ir_attr_int(c->node, "keepdims", 1) != 0;
    int noop = ir_attr_int(c->node, "noop_with_empty_axes", 0) != 0;

    int64_t axes[MAX_AXES];
    int n_axes = 0, known = 1;
    if (ir_node_has_input(c->node, 1) && ox_infer_in(c, 1)) {
        const ir_type *at = ox_infer_in(c, 1);
        if (at->dtype != ONYX_UNDEFINED && at->dtype != ONYX_INT64)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: axes must be int64, got %s", op,
                                 ox_dtype_name(at->dtype));
        if (ox_infer_int_list(c, 1, axes, MAX_AXES, &n_axes, &known) != 0) return -1;
    } else {
        size_t n = 0;
        const int64_t *a = ir_attr_ints(c->node, "axes", &n);
        if (n > MAX_AXES)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: %zu axes given, at most %d", op, n,
                                 MAX_AXES);
        if (n) memcpy(axes, a, n * sizeof *axes);
        n_axes = (int)n;
    }
    if (x->rank < 0) {
        ox_type_set_unknown_shape(o, dt);
        return 0;
    }
    int r = x->rank;
    if (!known) {
        /* axes only known at run time: with keepdims the rank survives */
        if (keep) {
            ox_type_set_shape(o, dt, NULL, r);
            for (int i = 0; i < r; i++) o->dims[i] = x->dims[i] == 1 ? 1 : -1;
        } else {
            ox_type_set_unknown_shape(o, dt);
        }
        return 0;
    }
    if (n_axes == 0 && noop) return ox_infer_same_as_input(c, 0, 0);
    int red[OX_MAX_RANK] = {0};
    for (int k = 0; k < n_axes; k++) {
        int64_t a = axes[k];
        if (a < -r || a >= r)
            return ox_infer_fail(c, ONYX_INVALID_ARGUMENT,
                                 "%s: axis %" PRId64 " is out of range for rank %d", op, a, r);
        if (a < 0) a += r;
        if (red[a])
            return ox_infer_fail(c, ONYX_INVALID_ARGUMENT, "%s: axis %" PRId64 " is repeated", op,
                                 axes[k]);
        red[a] = 1;
    }
    if (n_axes == 0)
        for (int i = 0; i < r; i++) red[i] = 1;
    int64_t dims[OX_MAX_RANK];
    int orank = 0;
    for (int i = 0; i < r; i++) {
        if (!red[i])
            dims[orank++] = x->dims[i];
        else if (keep)
            dims[orank++] = 1;
    }
    ox_type_set_shape(o, dt, dims, orank);
    return 0;
}

/* ---- ArgMax / ArgMin ---- */

static int infer_arg(ox_infer_ctx *c) {
    if (check_numeric(c, 0) != 0) return -1;
    const ir_type *x = ox_infer_in(c, 0);
    ir_type *o = ox_infer_out(c, 0);
    if (!x || !o) return 0;
    int keep = ir_attr_int(c->node, "keepdims", 1) != 0;
    if (x->rank < 0) {
        ox_type_set_unknown_shape(o, ONYX_INT64);
        return 0;
    }
    int axis;
    if (ox_norm_axis(c, ir_attr_int(c->node, "axis", 0), x->rank, &axis) != 0) return -1;
    int64_t dims[OX_MAX_RANK];
    int orank = 0;
    for (int i = 0; i < x->rank; i++) {
        if (i != axis)
            dims[orank++] = x->dims[i];
        else if (keep)
            dims[orank++] = 1;
    }
    ox_type_set_shape(o, ONYX_INT64, dims, orank);
    return 0;
}

/* ---- CumSum / CumProd ---- */

static int infer_cumsum(ox_infer_ctx *c) {
    const char *op = c->node->op_type;
    if (check_numeric(c, 0) != 0) return -1;
    const ir_type *at = ox_infer_in(c, 1);
    if (!at) return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: the axis input is required", op);
    if (at->dtype != ONYX_UNDEFINED && at->dtype != ONYX_INT32 && at->dtype != ONYX_INT64)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: axis must be int32 or int64, got %s", op,
                             ox_dtype_name(at->dtype));
    if (at->rank > 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: axis must be a scalar, got rank %d", op,
                             at->rank);
    const ir_type *x = ox_infer_in(c, 0);
    const ox_tensor *av = c->values && c->n_inputs > 1 ? c->values[1] : NULL;
    if (av && x && x->rank >= 0) {
        if (ox_tensor_numel(av) != 1)
            return ox_infer_fail(c, ONYX_INVALID_ARGUMENT,
                                 "%s: axis must hold one value, got %" PRId64, op,
                                 ox_tensor_numel(av));
        int axis;
        if (ox_norm_axis(c, ox_get_i64(av->data, av->dtype, 0), x->rank, &axis) != 0) return -1;
    }
    return ox_infer_same_as_input(c, 0, 0);
}

/* max: the newest version; 13/18 moved axes from attribute to input (read
 * from whichever the node has), 20 added bool to Max/Min, 28 restricted
 * LogSum/LogSumExp to floats. */
#define R(name, max) {"", name, 1, max, 1, 2, 1, 1, infer_reduce}

static const ox_op_schema OPS[] = {
    R("ReduceSum", 13),
    R("ReduceMean", 18),
    R("ReduceMax", 20),
    R("ReduceMin", 20),
    R("ReduceProd", 18),
    R("ReduceL1", 18),
    R("ReduceL2", 18),
    R("ReduceLogSum", 28),
    R("ReduceLogSumExp", 28),
    R("ReduceSumSquare", 18),
    {"", "ArgMax", 1, 13, 1, 1, 1, 1, infer_arg},
    {"", "ArgMin", 1, 13, 1, 1, 1, 1, infer_arg},
    {"", "CumSum", 11, 14, 2, 2, 1, 1, infer_cumsum},
    {"", "CumProd", 26, 26, 2, 2, 1, 1, infer_cumsum},
};

const ox_op_table ox_ops_reduce = {OPS, sizeof OPS / sizeof OPS[0]};
