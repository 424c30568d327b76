/* Schemas of the data-movement operators: reshaping, transposing,
 * joining, splitting and slicing tensors, plus the small ops that only
 * describe or build shapes (Shape, Size, Constant, Range...). Padding and
 * cropping (Pad, CenterCropPad) live in ops/transform_pad.c; this table
 * registers them. Their outputs' shapes often depend on the values of
 * shape-like inputs, which are known at run time and, for constants,
 * already at load. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/op.h"
#include "ops/transform.h"

extern const ox_op_table ox_ops_transform;

/* ---- small helpers (some shared with ops/transform_pad.c, see transform.h) ---- */



/* Shape-like inputs only count when their value is a tensor. */
static const ox_tensor *in_val(const ox_infer_ctx *c, int i) {
    const ox_tensor *t = ox_infer_in_value(c, i);
    return t && t->kind == OX_KIND_TENSOR ? t : NULL;
}


/* Output of known rank whose dims are all unknown. */
int ox_transform_set_rank_only(ox_infer_ctx *c, int i, ox_dtype dt, int rank) {
    int64_t d[OX_MAX_RANK];
    if (rank > OX_MAX_RANK) return ox_infer_set_output(c, i, dt, NULL, -1);
    for (int k = 0; k < rank; k++) d[k] = -1;
    return ox_infer_set_output(c, i, dt, d, rank);
}

/* Integer entries of a 0-D or 1-D constant input. *known = 0 when its
 * value is not available (static inference of a computed input). */
int ox_transform_read_ints(ox_infer_ctx *c, int i, const char *what, int64_t *out, int max, int *count,
                           int *known) {
    const ox_tensor *t = in_val(c, i);
    *count = 0;
    *known = 0;
    if (!t) return 0;
    if (!ox_dtype_is_integer(t->dtype))
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: '%s' must be an integer tensor, got %s", c->node->op_type,
                             what, ox_dtype_name(t->dtype));
    if (t->rank > 1)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: '%s' must be 1-D, got rank %d", c->node->op_type, what,
                             t->rank);
    int64_t n = ox_tensor_numel(t);
    if (n > max)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: '%s' has %lld entries, at most %d are allowed",
                             c->node->op_type, what, (long long)n, max);
    for (int64_t k = 0; k < n; k++) out[k] = ox_get_i64(t->data, t->dtype, (size_t)k);
    *count = (int)n;
    *known = 1;
    return 0;
}

/* Scalar integer input (0-D or a 1-element 1-D tensor). */
static int read_scalar_int(ox_infer_ctx *c, int i, const char *what, int64_t *v, int *known) {
    int64_t tmp[1] = {0};
    int n;
    *known = 0;
    const ox_tensor *t = in_val(c, i);
    if (t && ox_tensor_numel(t) != 1)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: '%s' must hold exactly one value, got %lld",
                             c->node->op_type, what, (long long)ox_tensor_numel(t));
    if (ox_transform_read_ints(c, i, what, tmp, 1, &n, known) != 0) return -1;
    if (*known) *v = tmp[0];
    return 0;
}

/* Attribute list or, from `input_opset` on, input `idx`. Returns the
 * number of entries (-1 when the list is absent, -2 when it exists but its
 * value is not known yet). */
int ox_transform_attr_or_input_ints(ox_infer_ctx *c, const char *attr, int input_opset, int idx,
                                    int64_t *out, int max, int *failed) {
    *failed = 0;
    if (c->node->opset < input_opset) {
        size_t n = 0;
        const int64_t *v = ir_attr_ints(c->node, attr, &n);
        if (!ir_node_attr(c->node, attr)) return -1;
        if (n > (size_t)max) {
            *failed = 1;
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: attribute '%s' has %zu entries, at most %d are allowed",
                                 c->node->op_type, attr, n, max);
        }
        if (n) memcpy(out, v, n * sizeof *v);
        return (int)n;
    }
    if (!ir_node_has_input(c->node, idx)) return -1;
    int n, known;
    if (ox_transform_read_ints(c, idx, attr, out, max, &n, &known) != 0) {
        *failed = 1;
        return -1;
    }
    return known ? n : -2;
}

/* Product of dims[lo, hi) or -1 when one is unknown (0 wins over unknown). */
static int64_t prod_range(const int64_t *dims, int lo, int hi) {
    return ox_infer_numel_or_zero(dims + lo, hi - lo);
}

static const char *shape_str(const int64_t *dims, int rank, char *buf, size_t n) {
    return ox_shape_str(dims, rank, buf, n);
}

/* A requested shape as written in the model (-1 and 0 kept literally). */
static const char *list_str(const int64_t *v, int count, char *buf, size_t n) {
    size_t off = 0;
    if (n == 0) return buf;
    off += (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < count && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, "%s%lld", i ? "," : "", (long long)v[i]);
    if (off < n) snprintf(buf + off, n - off, "]");
    return buf;
}

/* ---- Reshape ---- */

static int infer_reshape(ox_infer_ctx *c) {
    const ir_type *x = ox_infer_in(c, 0);
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    int64_t shape[OX_MAX_RANK];
    int n, failed;
    n = ox_transform_attr_or_input_ints(c, "shape", 5, 1, shape, OX_MAX_RANK, &failed);
    if (failed) return -1;
    if (n == -1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Reshape: the target shape is missing");
    if (n == -2) {
        const ir_type *s = ox_infer_in(c, 1);
        if (s && s->rank == 1 && s->dims[0] >= 0 && s->dims[0] <= OX_MAX_RANK)
            return ox_transform_set_rank_only(c, 0, dt, (int)s->dims[0]);
        return ox_infer_set_output(c, 0, dt, NULL, -1);
    }
    int allowzero = c->node->opset >= 14 ? (int)ir_attr_int(c->node, "allowzero", 0) : 0;
    int xr = x && x->kind == OX_KIND_TENSOR ? x->rank : -1;
    int infer_at = -1, has_zero = 0;
    int64_t out[OX_MAX_RANK];
    for (int i = 0; i < n; i++) {
        int64_t v = shape[i];
        if (v == -1) {
            if (infer_at >= 0)
                return ox_infer_fail(c, ox_infer_bad_code(c), "Reshape: shape has more than one -1 (entries %d and %d)",
                                     infer_at, i);
            infer_at = i;
            out[i] = -1;
        } else if (v < -1) {
            return ox_infer_fail(c, ox_infer_bad_code(c), "Reshape: shape[%d] = %lld is invalid (only -1 may be negative)",
                                 i, (long long)v);
        } else if (v == 0 && !allowzero) {
            if (xr >= 0 && i >= xr)
                return ox_infer_fail(c, ox_infer_bad_code(c),
                                     "Reshape: shape[%d] is 0 (copy the input dim) but the input has rank %d",
                                     i, xr);
            out[i] = xr >= 0 ? x->dims[i] : -1;
        } else {
            if (v == 0) has_zero = 1;
            out[i] = v;
        }
    }
    if (allowzero && has_zero && infer_at >= 0)
        return ox_infer_fail(c, ox_infer_bad_code(c), "Reshape: with allowzero=1 the shape cannot hold both 0 and -1");
    int64_t total = -1;
    if (xr >= 0 && ox_infer_numel_known(c, x->dims, xr, "the input", &total)) return -1;
    int64_t known = 1;
    int unknown = 0;
    for (int i = 0; i < n; i++) {
        if (i == infer_at) continue;
        if (out[i] < 0)
            unknown = 1;
        else if (ox_infer_mul(c, ox_infer_bad_code(c), known, out[i], &known,
                              "the product of the target shape's dims (at shape[%d])", i))
            return -1;
    }
    char b1[256], b2[256];
    if (total >= 0 && !unknown) {
        if (infer_at >= 0) {
            if (known == 0) {
                if (total != 0)
                    return ox_infer_fail(c, ox_infer_bad_code(c), "Reshape: cannot reshape %s (%lld elements) to %s",
                                         shape_str(x->dims, xr, b1, sizeof b1), (long long)total,
                                         list_str(shape, n, b2, sizeof b2));
                return ox_infer_fail(c, ox_infer_bad_code(c),
                                     "Reshape: the -1 in %s is ambiguous because the other dims multiply to 0",
                                     list_str(shape, n, b2, sizeof b2));
            }
            if (total % known != 0)
                return ox_infer_fail(c, ox_infer_bad_code(c),
                                     "Reshape: cannot reshape %s (%lld elements) to %s: %lld is not a multiple of %lld",
                                     shape_str(x->dims, xr, b1, sizeof b1), (long long)total,
                                     list_str(shape, n, b2, sizeof b2), (long long)total, (long long)known);
            out[infer_at] = total / known;
        } else if (known != total) {
            return ox_infer_fail(c, ox_infer_bad_code(c), "Reshape: cannot reshape %s (%lld elements) to %s (%lld elements)",
                                 shape_str(x->dims, xr, b1, sizeof b1), (long long)total,
                                 shape_str(out, n, b2, sizeof b2), (long long)known);
        }
    } else if (c->runtime) {
        return ox_infer_fail(c, ox_infer_bad_code(c), "Reshape: the input shape is not known");
    }
    return ox_infer_set_output(c, 0, dt, out, n);
}

/* ---- Flatten ---- */

static int infer_flatten(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    const ir_type *x = ox_infer_in(c, 0);
    int r = ox_infer_in_rank(c, 0);
    int64_t axis = ir_attr_int(c->node, "axis", 1);
    int64_t out[2] = {-1, -1};
    if (r < 0) {
        if (axis == 0) out[0] = 1;
        return ox_infer_set_output(c, 0, dt, out, 2);
    }
    if (axis < -r || axis > r)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Flatten: axis %lld is out of range for rank %d (allowed [%d, %d])",
                             (long long)axis, r, -r, r);
    if (axis < 0) axis += r;
    out[0] = prod_range(x->dims, 0, (int)axis);
    out[1] = prod_range(x->dims, (int)axis, r);
    if (out[0] == OX_NUMEL_OVERFLOW || out[1] == OX_NUMEL_OVERFLOW) {
        char b[256];
        return ox_infer_fail(c, ox_infer_bad_code(c), "Flatten: the element count of %s overflows int64",
                             shape_str(x->dims, r, b, sizeof b));
    }
    return ox_infer_set_output(c, 0, dt, out, 2);
}

/* ---- Transpose ---- */

static int infer_transpose(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    const ir_type *x = ox_infer_in(c, 0);
    int r = ox_infer_in_rank(c, 0);
    size_t np = 0;
    const int64_t *perm = ir_attr_ints(c->node, "perm", &np);
    int has_perm = ir_node_attr(c->node, "perm") != NULL;
    if (r < 0) {
        if (has_perm && np <= OX_MAX_RANK) return ox_transform_set_rank_only(c, 0, dt, (int)np);
        return ox_infer_set_output(c, 0, dt, NULL, -1);
    }
    int64_t out[OX_MAX_RANK];
    if (!has_perm) {
        for (int i = 0; i < r; i++) out[i] = x->dims[r - 1 - i];
        return ox_infer_set_output(c, 0, dt, out, r);
    }
    if ((int)np != r)
        return ox_infer_fail(c, ox_infer_bad_code(c), "Transpose: perm has %zu entries but the input has rank %d", np, r);
    int seen[OX_MAX_RANK] = {0};
    for (int i = 0; i < r; i++) {
        int64_t p = perm[i];
        if (p < 0) p += r;
        if (p < 0 || p >= r)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Transpose: perm[%d] = %lld is out of range for rank %d", i,
                                 (long long)perm[i], r);
        if (seen[p])
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Transpose: perm repeats axis %lld", (long long)p);
        seen[p] = 1;
        out[i] = x->dims[p];
    }
    return ox_infer_set_output(c, 0, dt, out, r);
}

/* ---- Concat ---- */

static int infer_concat(ox_infer_ctx *c) {
    ox_dtype dt = ONYX_UNDEFINED;
    int r = -1, first = -1;
    if (c->n_inputs < 1) return ox_infer_fail(c, ONYX_INVALID_MODEL, "Concat: needs at least one input");
    for (int i = 0; i < c->n_inputs; i++) {
        const ir_type *t = ox_infer_in(c, i);
        if (!t) continue;
        if (dt == ONYX_UNDEFINED) dt = t->dtype;
        else if (t->dtype != ONYX_UNDEFINED && t->dtype != dt)
            return ox_infer_fail(c, ox_infer_bad_code(c), "Concat: input %d has type %s but input 0 has %s", i,
                                 ox_dtype_name(t->dtype), ox_dtype_name(dt));
        if (t->rank < 0) continue;
        if (r < 0) {
            r = t->rank;
            first = i;
        } else if (t->rank != r) {
            return ox_infer_fail(c, ox_infer_bad_code(c), "Concat: input %d has rank %d but input %d has rank %d", i,
                                 t->rank, first, r);
        }
    }
    const ir_attr *a = ir_node_attr(c->node, "axis");
    if (!a && c->node->opset >= 4)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Concat: the 'axis' attribute is required");
    int64_t axis = a ? a->i : 1;
    if (r < 0) return ox_infer_set_output(c, 0, dt, NULL, -1);
    if (r == 0) return ox_infer_fail(c, ox_infer_bad_code(c), "Concat: inputs must have rank >= 1, got scalars");
    if (axis < -r || axis >= r)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Concat: axis %lld is out of range for rank %d (allowed [%d, %d])",
                             (long long)axis, r, -r, r - 1);
    if (axis < 0) axis += r;
    int64_t out[OX_MAX_RANK];
    for (int d = 0; d < r; d++) out[d] = -1;
    int64_t sum = 0;
    int sum_unknown = 0;
    for (int i = 0; i < c->n_inputs; i++) {
        const ir_type *t = ox_infer_in(c, i);
        if (!t || t->rank < 0) {
            sum_unknown = 1;
            continue;
        }
        for (int d = 0; d < r; d++) {
            if (d == axis) continue;
            if (t->dims[d] < 0) continue;
            if (out[d] < 0) {
                out[d] = t->dims[d];
            } else if (out[d] != t->dims[d]) {
                char b1[256], b2[256];
                return ox_infer_fail(c, ox_infer_bad_code(c),
                                     "Concat: input %d has shape %s, which differs from %s outside axis %lld",
                                     i, shape_str(t->dims, r, b1, sizeof b1),
                                     shape_str(ox_infer_in(c, first)->dims, r, b2, sizeof b2), (long long)axis);
            }
        }
        if (t->dims[axis] < 0)
            sum_unknown = 1;
        else if (ox_infer_add(c, ox_infer_bad_code(c), sum, t->dims[axis], &sum,
                              "the concatenated axis size (at input %d)", i))
            return -1;
    }
    out[axis] = sum_unknown ? -1 : sum;
    return ox_infer_set_output(c, 0, dt, out, r);
}

/* ---- Squeeze / Unsqueeze ---- */

static int infer_squeeze(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    const ir_type *x = ox_infer_in(c, 0);
    int r = ox_infer_in_rank(c, 0);
    int64_t axes[OX_MAX_RANK];
    int failed;
    int n = ox_transform_attr_or_input_ints(c, "axes", 13, 1, axes, OX_MAX_RANK, &failed);
    if (failed) return -1;
    if (r < 0 || n == -2) return ox_infer_set_output(c, 0, dt, NULL, -1);
    int drop[OX_MAX_RANK] = {0};
    if (n == -1) {
        /* no axes: every dim of size 1 goes, which needs all dims known */
        for (int i = 0; i < r; i++) {
            if (x->dims[i] < 0) return ox_infer_set_output(c, 0, dt, NULL, -1);
            drop[i] = x->dims[i] == 1;
        }
    } else {
        for (int k = 0; k < n; k++) {
            int64_t a = axes[k];
            if (a < -r || a >= r)
                return ox_infer_fail(c, ox_infer_bad_code(c), "Squeeze: axis %lld is out of range for rank %d (allowed [%d, %d])",
                                     (long long)a, r, -r, r - 1);
            if (a < 0) a += r;
            if (drop[a])
                return ox_infer_fail(c, ox_infer_bad_code(c), "Squeeze: axis %lld is given twice", (long long)a);
            if (x->dims[a] >= 0 && x->dims[a] != 1)
                return ox_infer_fail(c, ox_infer_bad_code(c), "Squeeze: cannot squeeze axis %lld of size %lld (must be 1)",
                                     (long long)a, (long long)x->dims[a]);
            drop[a] = 1;
        }
    }
    int64_t out[OX_MAX_RANK];
    int ro = 0;
    for (int i = 0; i < r; i++)
        if (!drop[i]) out[ro++] = x->dims[i];
    return ox_infer_set_output(c, 0, dt, out, ro);
}

static int infer_unsqueeze(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    const ir_type *x = ox_infer_in(c, 0);
    int r = ox_infer_in_rank(c, 0);
    int64_t axes[OX_MAX_RANK + 1];
    int failed;
    int n = ox_transform_attr_or_input_ints(c, "axes", 13, 1, axes, OX_MAX_RANK, &failed);
    if (failed) return -1;
    if (n == -1) return ox_infer_fail(c, ONYX_INVALID_MODEL, "Unsqueeze: 'axes' is required");
    if (n == -2 || r < 0) return ox_infer_set_output(c, 0, dt, NULL, -1);
    int ro = r + n;
    if (ro > OX_MAX_RANK)
        return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED, "Unsqueeze: output rank %d exceeds onyx's limit of %d", ro,
                             OX_MAX_RANK);
    int ins[OX_MAX_RANK] = {0};
    for (int k = 0; k < n; k++) {
        int64_t a = axes[k];
        if (a < -ro || a >= ro)
            return ox_infer_fail(c, ox_infer_bad_code(c), "Unsqueeze: axis %lld is out of range for output rank %d (allowed [%d, %d])",
                                 (long long)a, ro, -ro, ro - 1);
        if (a < 0) a += ro;
        if (ins[a]) return ox_infer_fail(c, ox_infer_bad_code(c), "Unsqueeze: axis %lld is given twice", (long long)a);
        ins[a] = 1;
    }
    int64_t out[OX_MAX_RANK];
    for (int i = 0, j = 0; i < ro; i++) out[i] = ins[i] ? 1 : x->dims[j++];
    return ox_infer_set_output(c, 0, dt, out, ro);
}

/* ---- Shape / Size ---- */

static int infer_shape(ox_infer_ctx *c) {
    int r = ox_infer_in_rank(c, 0);
    int64_t one[1] = {-1};
    if (r < 0) return ox_infer_set_output(c, 0, ONYX_INT64, one, 1);
    int64_t start = 0, end = r;
    if (c->node->opset >= 15) {
        start = ir_attr_int(c->node, "start", 0);
        end = ir_attr_int(c->node, "end", r);
    }
    if (start < 0) start += r;
    if (end < 0) end += r;
    if (start < 0) start = 0;
    if (start > r) start = r;
    if (end < 0) end = 0;
    if (end > r) end = r;
    one[0] = end > start ? end - start : 0;
    return ox_infer_set_output(c, 0, ONYX_INT64, one, 1);
}

static int infer_size(ox_infer_ctx *c) { return ox_infer_set_output(c, 0, ONYX_INT64, NULL, 0); }

/* ---- Identity ---- */

static int infer_identity(ox_infer_ctx *c) {
    const ir_type *x = ox_infer_in(c, 0);
    ir_type *o = ox_infer_out(c, 0);
    if (!o) return 0;
    if (!x) return ox_infer_fail(c, ONYX_INVALID_MODEL, "Identity: the input is missing");
    if (x->rank < 0 || x->rank > OX_MAX_RANK)
        ox_type_set_unknown_shape(o, x->dtype);
    else
        ox_type_set_shape(o, x->dtype, x->dims, x->rank);
    o->kind = x->kind;
    return 0;
}

/* ---- Constant ---- */

static int infer_constant(ox_infer_ctx *c) {
    const ir_node *n = c->node;
    const char *names[] = {"value", "value_float", "value_floats", "value_int",
                           "value_ints", "value_string", "value_strings", "sparse_value"};
    const ir_attr *found = NULL;
    int which = -1;
    for (int i = 0; i < (int)(sizeof names / sizeof *names); i++) {
        const ir_attr *a = ir_node_attr(n, names[i]);
        if (!a) continue;
        if (found)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Constant: both '%s' and '%s' are set; exactly one is allowed",
                                 found->name, a->name);
        found = a;
        which = i;
    }
    if (!found) return ox_infer_fail(c, ONYX_INVALID_MODEL, "Constant: no value attribute is set");
    int64_t len[1];
    switch (which) {
    case 0:
        if (!found->t || found->t->kind != OX_KIND_TENSOR)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Constant: 'value' is not a tensor");
        return ox_infer_set_output(c, 0, found->t->dtype, found->t->dims, found->t->rank);
    case 1: return ox_infer_set_output(c, 0, ONYX_FLOAT32, NULL, 0);
    case 2: len[0] = (int64_t)found->n; return ox_infer_set_output(c, 0, ONYX_FLOAT32, len, 1);
    case 3: return ox_infer_set_output(c, 0, ONYX_INT64, NULL, 0);
    case 4: len[0] = (int64_t)found->n; return ox_infer_set_output(c, 0, ONYX_INT64, len, 1);
    case 5: return ox_infer_set_output(c, 0, ONYX_STRING, NULL, 0);
    case 6: len[0] = (int64_t)found->n; return ox_infer_set_output(c, 0, ONYX_STRING, len, 1);
    default:
        return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED, "Constant: sparse_value is not supported");
    }
}

/* ---- Slice ---- */

int ox_transform_slice_plan(const int64_t *dims, int rank, const int64_t *starts,
                            const int64_t *ends, const int64_t *axes, const int64_t *steps,
                            int n, int64_t *start_out, int64_t *step_out, int64_t *dims_out,
                            ox_error *err) {
    int seen[OX_MAX_RANK] = {0};
    for (int a = 0; a < rank; a++) {
        start_out[a] = 0;
        step_out[a] = 1;
        dims_out[a] = dims[a];
    }
    for (int i = 0; i < n; i++) {
        int64_t ax = axes ? axes[i] : i;
        if (ax < -rank || ax >= rank)
            return ox_fail(err, ONYX_INVALID_ARGUMENT,
                           "Slice: axes[%d] = %lld is out of range for rank %d (allowed [%d, %d])", i,
                           (long long)ax, rank, -rank, rank - 1);
        if (ax < 0) ax += rank;
        if (seen[ax]) return ox_fail(err, ONYX_INVALID_ARGUMENT, "Slice: axis %lld is given twice", (long long)ax);
        seen[ax] = 1;
        int64_t step = steps ? steps[i] : 1;
        if (step == 0) return ox_fail(err, ONYX_INVALID_ARGUMENT, "Slice: steps[%d] is 0", i);
        step_out[ax] = step;
        int64_t d = dims[ax];
        if (d < 0) {
            dims_out[ax] = -1;
            continue;
        }
        int64_t s = starts[i], e = ends[i], cnt = 0;
        if (s < 0) s += d;
        if (e < 0) e += d;
        if (step > 0) {
            s = s < 0 ? 0 : (s > d ? d : s);
            e = e < 0 ? 0 : (e > d ? d : e);
            if (e > s) cnt = (e - s - 1) / step + 1;
        } else {
            s = s < 0 ? 0 : (s > d - 1 ? d - 1 : s);
            e = e < -1 ? -1 : (e > d - 1 ? d - 1 : e);
            /* |step| without overflowing on INT64_MIN */
            uint64_t mag = (uint64_t)(-(step + 1)) + 1u;
            if (d > 0 && s > e) cnt = (int64_t)((uint64_t)(s - e - 1) / mag) + 1;
        }
        start_out[ax] = cnt ? s : 0;
        dims_out[ax] = cnt;
    }
    return 0;
}

static int infer_slice(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    const ir_type *x = ox_infer_in(c, 0);
    int r = ox_infer_in_rank(c, 0);
    int64_t st[OX_MAX_RANK], en[OX_MAX_RANK], ax[OX_MAX_RANK], sp[OX_MAX_RANK];
    int ns, ne, na = -1, np = -1, known = 1, kk, failed;
    if (c->node->opset < 10) {
        ns = ox_transform_attr_or_input_ints(c, "starts", 10, 1, st, OX_MAX_RANK, &failed);
        if (failed) return -1;
        ne = ox_transform_attr_or_input_ints(c, "ends", 10, 2, en, OX_MAX_RANK, &failed);
        if (failed) return -1;
        na = ox_transform_attr_or_input_ints(c, "axes", 10, 3, ax, OX_MAX_RANK, &failed);
        if (failed) return -1;
        if (ns < 0 || ne < 0)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Slice: attributes 'starts' and 'ends' are required");
    } else {
        if (!ir_node_has_input(c->node, 1) || !ir_node_has_input(c->node, 2))
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Slice: inputs 'starts' and 'ends' are required");
        if (ox_transform_read_ints(c, 1, "starts", st, OX_MAX_RANK, &ns, &kk) != 0) return -1;
        known &= kk;
        if (ox_transform_read_ints(c, 2, "ends", en, OX_MAX_RANK, &ne, &kk) != 0) return -1;
        known &= kk;
        if (ir_node_has_input(c->node, 3)) {
            if (ox_transform_read_ints(c, 3, "axes", ax, OX_MAX_RANK, &na, &kk) != 0) return -1;
            known &= kk;
        }
        if (ir_node_has_input(c->node, 4)) {
            if (ox_transform_read_ints(c, 4, "steps", sp, OX_MAX_RANK, &np, &kk) != 0) return -1;
            known &= kk;
        }
    }
    if (r < 0) return ox_infer_set_output(c, 0, dt, NULL, -1);
    if (!known) return ox_transform_set_rank_only(c, 0, dt, r);
    if (ne != ns || (na >= 0 && na != ns) || (np >= 0 && np != ns))
        return ox_infer_fail(c, ox_infer_bad_code(c), "Slice: starts, ends, axes and steps must have the same length "
                             "(got %d, %d, %d, %d)", ns, ne, na, np);
    if (na < 0 && ns > r)
        return ox_infer_fail(c, ox_infer_bad_code(c), "Slice: %d starts given for an input of rank %d", ns, r);
    int64_t s0[OX_MAX_RANK], s1[OX_MAX_RANK], out[OX_MAX_RANK];
    if (ox_transform_slice_plan(x->dims, r, st, en, na >= 0 ? ax : NULL, np >= 0 ? sp : NULL, ns, s0, s1,
                                out, c->err) != 0)
        return -1;
    return ox_infer_set_output(c, 0, dt, out, r);
}

/* ---- Split ---- */

static int infer_split(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    const ir_type *x = ox_infer_in(c, 0);
    int r = ox_infer_in_rank(c, 0);
    int nout = c->n_outputs;
    if (nout < 1) return ox_infer_fail(c, ONYX_INVALID_MODEL, "Split: needs at least one output");
    int64_t axis = ir_attr_int(c->node, "axis", 0);
    int64_t split[256];
    int n = -1, failed = 0;
    const int max_split = (int)(sizeof split / sizeof *split);
    if (c->node->opset < 13 && ir_node_attr(c->node, "split")) {
        n = ox_transform_attr_or_input_ints(c, "split", 13, 1, split, max_split, &failed);
    } else if (c->node->opset >= 13 || (c->node->opset < 2 && ir_node_has_input(c->node, 1))) {
        /* the split list is an input from opset 13 (and optionally at 1) */
        if (ir_node_has_input(c->node, 1)) {
            int known;
            if (ox_transform_read_ints(c, 1, "split", split, max_split, &n, &known) != 0) return -1;
            if (!known) n = -2;
        }
    }
    if (failed) return -1;
    if (ox_op_since_version(c->node->domain, "Split", c->node->opset) >= 18) {
        /* Split-18: sizes come from exactly one of 'split' and 'num_outputs' */
        const ir_attr *na = ir_node_attr(c->node, "num_outputs");
        int has_split = ir_node_has_input(c->node, 1);
        if (na && has_split)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Split: both the 'split' input and 'num_outputs' are given; "
                                 "only one is allowed");
        if (!na && !has_split)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Split: either the 'split' input or 'num_outputs' is required");
        if (na && na->i != nout)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Split: num_outputs = %lld but the node has %d outputs",
                                 (long long)na->i, nout);
    }
    if (n >= 0 && n != nout)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Split: 'split' has %d entries but the node has %d outputs", n,
                             nout);
    for (int i = 0; i < n; i++)
        if (split[i] < 0)
            return ox_infer_fail(c, ox_infer_bad_code(c), "Split: split[%d] = %lld is negative", i, (long long)split[i]);
    if (r < 0) {
        for (int i = 0; i < nout; i++)
            if (ox_infer_set_output(c, i, dt, NULL, -1) != 0) return -1;
        return 0;
    }
    if (r == 0) return ox_infer_fail(c, ox_infer_bad_code(c), "Split: the input must have rank >= 1");
    if (axis < -r || axis >= r)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Split: axis %lld is out of range for rank %d (allowed [%d, %d])",
                             (long long)axis, r, -r, r - 1);
    if (axis < 0) axis += r;
    int64_t d = x->dims[axis];
    int64_t num_outputs = ir_attr_int(c->node, "num_outputs", 0);
    if (n >= 0 && d >= 0) {
        int64_t sum = 0;
        for (int i = 0; i < n; i++)
            if (ox_infer_add(c, ox_infer_bad_code(c), sum, split[i], &sum, "the sum of split sizes (at split[%d])", i))
                return -1;
        if (sum != d)
            return ox_infer_fail(c, ox_infer_bad_code(c), "Split: split sizes add up to %lld but axis %lld has size %lld",
                                 (long long)sum, (long long)axis, (long long)d);
    }
    if (n == -1 && d >= 0 && num_outputs <= 0 && d % nout != 0)
        return ox_infer_fail(c, ox_infer_bad_code(c), "Split: axis %lld of size %lld cannot be split evenly into %d outputs",
                             (long long)axis, (long long)d, nout);
    for (int i = 0; i < nout; i++) {
        int64_t out[OX_MAX_RANK];
        memcpy(out, x->dims, (size_t)r * sizeof *out);
        if (n >= 0)
            out[axis] = split[i];
        else if (n == -2 || d < 0)
            out[axis] = -1;
        else
            out[axis] = ox_split_even_size(d, nout, i, num_outputs > 0);
        if (ox_infer_set_output(c, i, dt, out, r) != 0) return -1;
    }
    return 0;
}

/* ---- Expand ---- */

static int infer_expand(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    const ir_type *x = ox_infer_in(c, 0);
    int r = ox_infer_in_rank(c, 0);
    int64_t shape[OX_MAX_RANK];
    int n, known;
    if (ox_transform_read_ints(c, 1, "shape", shape, OX_MAX_RANK, &n, &known) != 0) return -1;
    if (!known) {
        const ir_type *s = ox_infer_in(c, 1);
        if (r >= 0 && s && s->rank == 1 && s->dims[0] >= 0 && s->dims[0] <= OX_MAX_RANK)
            return ox_transform_set_rank_only(c, 0, dt, r > (int)s->dims[0] ? r : (int)s->dims[0]);
        return ox_infer_set_output(c, 0, dt, NULL, -1);
    }
    for (int i = 0; i < n; i++)
        if (shape[i] < 0)
            return ox_infer_fail(c, ox_infer_bad_code(c), "Expand: shape[%d] = %lld is negative", i, (long long)shape[i]);
    if (r < 0) return ox_transform_set_rank_only(c, 0, dt, n);
    int64_t out[OX_MAX_RANK];
    int ro;
    if (ox_broadcast_dims(x->dims, r, shape, n, out, &ro) != 0) {
        char b1[256], b2[256];
        return ox_infer_fail(c, ox_infer_bad_code(c), "Expand: input shape %s cannot be broadcast to %s",
                             shape_str(x->dims, r, b1, sizeof b1), list_str(shape, n, b2, sizeof b2));
    }
    return ox_infer_set_output(c, 0, dt, out, ro);
}

/* ---- Tile ---- */

static int infer_tile(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    const ir_type *x = ox_infer_in(c, 0);
    int r = ox_infer_in_rank(c, 0);
    if (c->node->opset < 6) {
        /* Tile-1: a scalar count of tiles along one axis */
        int64_t tiles = 0, axis = 0;
        int k1, k2;
        if (read_scalar_int(c, 1, "tiles", &tiles, &k1) != 0) return -1;
        if (read_scalar_int(c, 2, "axis", &axis, &k2) != 0) return -1;
        if (r < 0) return ox_infer_set_output(c, 0, dt, NULL, -1);
        if (!k1 || !k2) return ox_transform_set_rank_only(c, 0, dt, r);
        if (axis < -r || axis >= r)
            return ox_infer_fail(c, ox_infer_bad_code(c), "Tile: axis %lld is out of range for rank %d", (long long)axis, r);
        if (axis < 0) axis += r;
        if (tiles < 0) return ox_infer_fail(c, ox_infer_bad_code(c), "Tile: tiles = %lld is negative", (long long)tiles);
        int64_t out[OX_MAX_RANK];
        memcpy(out, x->dims, (size_t)r * sizeof *out);
        if (out[axis] >= 0 && __builtin_mul_overflow(out[axis], tiles, &out[axis]))
            return ox_infer_fail(c, ox_infer_bad_code(c), "Tile: tiles = %lld makes axis %lld too large", (long long)tiles,
                                 (long long)axis);
        return ox_infer_set_output(c, 0, dt, out, r);
    }
    int64_t rep[OX_MAX_RANK];
    int n, known;
    if (ox_transform_read_ints(c, 1, "repeats", rep, OX_MAX_RANK, &n, &known) != 0) return -1;
    if (r < 0) return ox_infer_set_output(c, 0, dt, NULL, -1);
    if (!known) return ox_transform_set_rank_only(c, 0, dt, r);
    if (n != r)
        return ox_infer_fail(c, ox_infer_bad_code(c), "Tile: 'repeats' has %d entries but the input has rank %d", n, r);
    int64_t out[OX_MAX_RANK];
    for (int i = 0; i < r; i++) {
        if (rep[i] < 0)
            return ox_infer_fail(c, ox_infer_bad_code(c), "Tile: repeats[%d] = %lld is negative", i, (long long)rep[i]);
        if (x->dims[i] < 0)
            out[i] = rep[i] == 0 ? 0 : -1;
        else if (__builtin_mul_overflow(x->dims[i], rep[i], &out[i]))
            return ox_infer_fail(c, ox_infer_bad_code(c), "Tile: repeats[%d] = %lld makes axis %d too large", i, (long long)rep[i], i);
    }
    return ox_infer_set_output(c, 0, dt, out, r);
}

/* ---- DepthToSpace / SpaceToDepth ---- */

static int infer_depth_space(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    const ir_type *x = ox_infer_in(c, 0);
    int r = ox_infer_in_rank(c, 0);
    int to_space = strcmp(c->node->op_type, "DepthToSpace") == 0;
    int64_t b = ir_attr_int(c->node, "blocksize", 0);
    if (!ir_node_attr(c->node, "blocksize") || b <= 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: 'blocksize' must be given and positive", c->node->op_type);
    /* DepthToSpace has 'mode' from version 11, SpaceToDepth from 28 */
    int ver = ox_op_since_version(c->node->domain, c->node->op_type, c->node->opset);
    if (ver >= (to_space ? 11 : 28)) {
        const char *mode = ir_attr_string(c->node, "mode", "DCR");
        if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: unknown mode '%s' (expected DCR or CRD)",
                                 c->node->op_type, mode);
    }
    if (r < 0) return ox_transform_set_rank_only(c, 0, dt, 4);
    if (r != 4) return ox_infer_fail(c, ox_infer_bad_code(c), "%s: the input must have rank 4, got %d", c->node->op_type, r);
    int64_t out[4] = {x->dims[0], -1, -1, -1}, bb;
    /* blocksize 2^32 squares to 0 in wrapping arithmetic, then divides */
    if (ox_infer_mul(c, ONYX_INVALID_MODEL, b, b, &bb, "blocksize %lld squared", (long long)b))
        return -1;
    const onyx_code bad = ox_infer_bad_code(c);
    if (to_space) {
        if (x->dims[1] >= 0) {
            if (x->dims[1] % bb != 0)
                return ox_infer_fail(c, bad, "DepthToSpace: channels %lld are not divisible by blocksize^2 = %lld",
                                     (long long)x->dims[1], (long long)bb);
            out[1] = x->dims[1] / bb;
        }
        for (int a = 2; a < 4; a++)
            if (x->dims[a] >= 0 &&
                ox_infer_mul(c, bad, x->dims[a], b, &out[a], "dim %d times blocksize", a))
                return -1;
    } else {
        if (x->dims[1] >= 0 &&
            ox_infer_mul(c, bad, x->dims[1], bb, &out[1], "channels times blocksize^2"))
            return -1;
        for (int a = 2; a < 4; a++) {
            if (x->dims[a] < 0) continue;
            if (x->dims[a] % b != 0)
                return ox_infer_fail(c, bad, "SpaceToDepth: dim %d of size %lld is not divisible by blocksize %lld",
                                     a, (long long)x->dims[a], (long long)b);
            out[a] = x->dims[a] / b;
        }
    }
    return ox_infer_set_output(c, 0, dt, out, 4);
}

/* ---- Range ---- */

static int infer_range(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    for (int i = 0; i < 3; i++) {
        const ir_type *t = ox_infer_in(c, i);
        if (!t) return ox_infer_fail(c, ONYX_INVALID_MODEL, "Range: start, limit and delta are required");
        if (t->rank > 0 && !(t->rank == 1 && t->dims[0] == 1))
            return ox_infer_fail(c, ox_infer_bad_code(c), "Range: input %d must be a scalar, got rank %d", i, t->rank);
        if (t->dtype != ONYX_UNDEFINED && dt != ONYX_UNDEFINED && t->dtype != dt)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Range: inputs must share one type (%s vs %s)",
                                 ox_dtype_name(dt), ox_dtype_name(t->dtype));
    }
    /* Range-27 adds float16 and bfloat16, computed in the 'stash_type' */
    int ver = ox_op_since_version(c->node->domain, "Range", c->node->opset);
    int low = dt == ONYX_FLOAT16 || dt == ONYX_BFLOAT16;
    if (dt != ONYX_UNDEFINED && dt != ONYX_FLOAT32 && dt != ONYX_FLOAT64 && dt != ONYX_INT16 &&
        dt != ONYX_INT32 && dt != ONYX_INT64 && !(low && ver >= 27))
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Range-%d: type %s is not supported", ver, ox_dtype_name(dt));
    if (ver >= 27) {
        int64_t stash = ir_attr_int(c->node, "stash_type", ONYX_FLOAT32);
        if (stash != ONYX_FLOAT32 && stash != ONYX_FLOAT64)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Range: stash_type %lld is not supported (float or double)",
                                 (long long)stash);
    }
    const ox_tensor *v[3];
    for (int i = 0; i < 3; i++) {
        v[i] = in_val(c, i);
        if (v[i] && ox_tensor_numel(v[i]) != 1)
            return ox_infer_fail(c, ox_infer_bad_code(c), "Range: input %d must hold one value", i);
    }
    int64_t len[1] = {-1};
    if (!v[0] || !v[1] || !v[2]) return ox_infer_set_output(c, 0, dt, len, 1);
    if (ox_dtype_is_float(v[0]->dtype)) {
        double s = ox_get_f64(v[0]->data, v[0]->dtype, 0), l = ox_get_f64(v[1]->data, v[1]->dtype, 0),
               d = ox_get_f64(v[2]->data, v[2]->dtype, 0);
        if (d == 0) return ox_infer_fail(c, ox_infer_bad_code(c), "Range: delta is 0");
        double q = ceil((l - s) / d);
        if (!(q == q) || q > 1e15) return ox_infer_fail(c, ox_infer_bad_code(c), "Range: the output would be too large");
        len[0] = q > 0 ? (int64_t)q : 0;
    } else {
        int64_t s = ox_get_i64(v[0]->data, v[0]->dtype, 0), l = ox_get_i64(v[1]->data, v[1]->dtype, 0),
                d = ox_get_i64(v[2]->data, v[2]->dtype, 0);
        if (d == 0) return ox_infer_fail(c, ox_infer_bad_code(c), "Range: delta is 0");
        /* exact integer ceil((l - s) / d) without overflow */
        __int128 diff = (__int128)l - s;
        __int128 q = 0;
        if ((diff > 0 && d > 0) || (diff < 0 && d < 0)) {
            __int128 ad = d > 0 ? d : -(__int128)d, adf = diff > 0 ? diff : -diff;
            q = (adf + ad - 1) / ad;
        }
        /* INT64_MIN to INT64_MAX by 1 holds 2^64 - 1 values */
        if (q > INT64_MAX)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "Range: the element count from %lld to %lld by %lld overflows int64",
                                 (long long)s, (long long)l, (long long)d);
        len[0] = (int64_t)q;
    }
    return ox_infer_set_output(c, 0, dt, len, 1);
}

/* ---- ConstantOfShape ---- */

static int infer_constant_of_shape(ox_infer_ctx *c) {
    const ir_attr *a = ir_node_attr(c->node, "value");
    ox_dtype dt = ONYX_FLOAT32;
    if (a) {
        if (!a->t || a->t->kind != OX_KIND_TENSOR || ox_tensor_numel(a->t) != 1)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "ConstantOfShape: 'value' must be a one-element tensor");
        dt = a->t->dtype;
    }
    int64_t shape[OX_MAX_RANK];
    int n, known;
    if (ox_transform_read_ints(c, 0, "input", shape, OX_MAX_RANK, &n, &known) != 0) return -1;
    if (!known) {
        const ir_type *s = ox_infer_in(c, 0);
        if (s && s->rank == 1 && s->dims[0] >= 0 && s->dims[0] <= OX_MAX_RANK)
            return ox_transform_set_rank_only(c, 0, dt, (int)s->dims[0]);
        return ox_infer_set_output(c, 0, dt, NULL, -1);
    }
    for (int i = 0; i < n; i++)
        if (shape[i] < 0)
            return ox_infer_fail(c, ox_infer_bad_code(c), "ConstantOfShape: shape[%d] = %lld is negative", i, (long long)shape[i]);
    return ox_infer_set_output(c, 0, dt, shape, n);
}

/* ---- EyeLike ---- */

static int infer_eyelike(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    const ir_attr *a = ir_node_attr(c->node, "dtype");
    if (a) {
        if (!ox_dtype_valid((int)a->i) || a->i == ONYX_STRING)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "EyeLike: dtype %lld is not supported", (long long)a->i);
        dt = (ox_dtype)a->i;
    }
    const ir_type *x = ox_infer_in(c, 0);
    int r = ox_infer_in_rank(c, 0);
    if (r < 0) return ox_transform_set_rank_only(c, 0, dt, 2);
    if (r != 2) return ox_infer_fail(c, ox_infer_bad_code(c), "EyeLike: the input must have rank 2, got %d", r);
    return ox_infer_set_output(c, 0, dt, x->dims, 2);
}

/* ---- table ---- */

static const ox_op_schema SCHEMAS[] = {
    {"", "Reshape", 1, 25, 1, 2, 1, 1, infer_reshape},
    {"", "Flatten", 1, 25, 1, 1, 1, 1, infer_flatten},
    {"", "Transpose", 1, 25, 1, 1, 1, 1, infer_transpose},
    {"", "Concat", 1, 17, 1, -1, 1, 1, infer_concat},
    {"", "Squeeze", 1, 25, 1, 2, 1, 1, infer_squeeze},
    {"", "Unsqueeze", 1, 25, 1, 2, 1, 1, infer_unsqueeze},
    {"", "Shape", 1, 25, 1, 1, 1, 1, infer_shape},
    {"", "Size", 1, 25, 1, 1, 1, 1, infer_size},
    {"", "Identity", 1, 25, 1, 1, 1, 1, infer_identity},
    {"", "Constant", 1, 25, 0, 0, 1, 1, infer_constant},
    {"", "Slice", 1, 17, 1, 5, 1, 1, infer_slice},
    {"", "Split", 1, 18, 1, 2, 1, -1, infer_split},
    {"", "Expand", 8, 17, 2, 2, 1, 1, infer_expand},
    {"", "Tile", 1, 17, 2, 3, 1, 1, infer_tile},
    {"", "Pad", 1, 25, 1, 4, 1, 1, ox_transform_infer_pad},
    {"", "CenterCropPad", 18, 18, 2, 2, 1, 1, ox_transform_infer_center_crop_pad},
    {"", "DepthToSpace", 1, 28, 1, 1, 1, 1, infer_depth_space},
    {"", "SpaceToDepth", 1, 28, 1, 1, 1, 1, infer_depth_space},
    {"", "Range", 11, 27, 3, 3, 1, 1, infer_range},
    {"", "ConstantOfShape", 9, 25, 1, 1, 1, 1, infer_constant_of_shape},
    {"", "EyeLike", 9, 22, 1, 1, 1, 1, infer_eyelike},
};

const ox_op_table ox_ops_transform = {SCHEMAS, sizeof SCHEMAS / sizeof SCHEMAS[0]};
