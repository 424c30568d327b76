/* Schemas of the indexing operators: gathers and scatters driven by index
 * tensors, selections (TopK, NonZero, Compress, Unique) and the ops that
 * build or mask tensors by position (OneHot, Trilu, ReverseSequence).
 * Index values are only known at run time, so inference validates shapes
 * and index types; the kernels check every index value. */
#include <string.h>

#include "ops/op.h"

extern const ox_op_table ox_ops_index;




static int check_index_type(ox_infer_ctx *c, int i, const char *what) {
    ox_dtype t = ox_infer_in_dtype(c, i);
    if (t != ONYX_UNDEFINED && t != ONYX_INT32 && t != ONYX_INT64)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: '%s' must be int32 or int64, got %s", c->node->op_type, what,
                             ox_dtype_name(t));
    return 0;
}

/* ---- Gather ---- */

static int infer_gather(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    if (check_index_type(c, 1, "indices") != 0) return -1;
    int r = ox_infer_in_rank(c, 0), q = ox_infer_in_rank(c, 1);
    int64_t axis = ir_attr_int(c->node, "axis", 0);
    if (r == 0) return ox_infer_fail(c, ox_infer_bad_code(c), "Gather: data must have rank >= 1, got a scalar");
    if (r > 0 && (axis < -r || axis >= r))
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Gather: axis %lld is out of range for rank %d (allowed [%d, %d])",
                             (long long)axis, r, -r, r - 1);
    if (r < 0 || q < 0) return ox_infer_set_output(c, 0, dt, NULL, -1);
    if (axis < 0) axis += r;
    const ir_type *x = ox_infer_in(c, 0), *ind = ox_infer_in(c, 1);
    int ro = r - 1 + q;
    if (ro > OX_MAX_RANK)
        return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED, "Gather: output rank %d exceeds onyx's limit of %d", ro,
                             OX_MAX_RANK);
    int64_t out[OX_MAX_RANK];
    int k = 0;
    for (int i = 0; i < axis; i++) out[k++] = x->dims[i];
    for (int i = 0; i < q; i++) out[k++] = ind->dims[i];
    for (int i = (int)axis + 1; i < r; i++) out[k++] = x->dims[i];
    if (c->runtime && x->dims[axis] == 0 && ox_numel(ind->dims, q) > 0)
        return ox_infer_fail(c, ONYX_INVALID_ARGUMENT,
                             "Gather: cannot take indices from axis %lld, which has size 0", (long long)axis);
    return ox_infer_set_output(c, 0, dt, out, ro);
}

/* ---- GatherElements ---- */

static int check_axis(ox_infer_ctx *c, int64_t axis, int r, int64_t *out) {
    if (axis < -r || axis >= r)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: axis %lld is out of range for rank %d (allowed [%d, %d])",
                             c->node->op_type, (long long)axis, r, -r, r - 1);
    *out = axis < 0 ? axis + r : axis;
    return 0;
}

static int infer_gather_elements(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    if (check_index_type(c, 1, "indices") != 0) return -1;
    int r = ox_infer_in_rank(c, 0), q = ox_infer_in_rank(c, 1);
    const ir_type *x = ox_infer_in(c, 0), *ind = ox_infer_in(c, 1);
    int64_t axis = 0;
    if (r == 0) return ox_infer_fail(c, ox_infer_bad_code(c), "GatherElements: data must have rank >= 1");
    if (r > 0 && check_axis(c, ir_attr_int(c->node, "axis", 0), r, &axis) != 0) return -1;
    if (r >= 0 && q >= 0 && r != q)
        return ox_infer_fail(c, ox_infer_bad_code(c), "GatherElements: data has rank %d but indices have rank %d", r, q);
    if (q < 0) return ox_infer_set_output(c, 0, dt, NULL, -1);
    if (r >= 0)
        for (int a = 0; a < r; a++)
            if (a != axis && x->dims[a] >= 0 && ind->dims[a] > x->dims[a])
                return ox_infer_fail(c, ox_infer_bad_code(c), "GatherElements: indices dim %d (%lld) exceeds data dim %lld", a,
                                     (long long)ind->dims[a], (long long)x->dims[a]);
    return ox_infer_set_output(c, 0, dt, ind->dims, q);
}

/* ---- GatherND ---- */

static int infer_gather_nd(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    if (ox_infer_in_dtype(c, 1) != ONYX_UNDEFINED && ox_infer_in_dtype(c, 1) != ONYX_INT64)
        return ox_infer_fail(c, ox_infer_bad_code(c), "GatherND: indices must be int64, got %s", ox_dtype_name(ox_infer_in_dtype(c, 1)));
    int r = ox_infer_in_rank(c, 0), q = ox_infer_in_rank(c, 1);
    const ir_type *x = ox_infer_in(c, 0), *ind = ox_infer_in(c, 1);
    int64_t b = c->node->opset >= 12 ? ir_attr_int(c->node, "batch_dims", 0) : 0;
    if (b < 0) return ox_infer_fail(c, ONYX_INVALID_MODEL, "GatherND: batch_dims %lld is negative", (long long)b);
    if (r == 0 || q == 0) return ox_infer_fail(c, ox_infer_bad_code(c), "GatherND: data and indices must have rank >= 1");
    if ((r >= 0 && b >= r) || (q >= 0 && b >= q))
        return ox_infer_fail(c, ox_infer_bad_code(c), "GatherND: batch_dims %lld must be below both ranks (%d, %d)", (long long)b,
                             r, q);
    if (r < 0 || q < 0) return ox_infer_set_output(c, 0, dt, NULL, -1);
    int64_t m = ind->dims[q - 1];
    if (m < 0) return ox_infer_set_output(c, 0, dt, NULL, -1);
    if (m < 1 || m > r - b)
        return ox_infer_fail(c, ox_infer_bad_code(c), "GatherND: the last indices dim is %lld but must be in [1, %lld]",
                             (long long)m, (long long)(r - b));
    for (int a = 0; a < b; a++)
        if (x->dims[a] >= 0 && ind->dims[a] >= 0 && x->dims[a] != ind->dims[a])
            return ox_infer_fail(c, ox_infer_bad_code(c), "GatherND: batch dim %d differs: data %lld, indices %lld", a,
                                 (long long)x->dims[a], (long long)ind->dims[a]);
    int64_t out[OX_MAX_RANK * 2];
    int ro = 0;
    for (int a = 0; a < q - 1; a++) out[ro++] = ind->dims[a];
    for (int a = (int)(b + m); a < r; a++) out[ro++] = x->dims[a];
    return ox_infer_set_output(c, 0, dt, out, ro);
}

/* ---- ScatterND / ScatterElements / Scatter ---- */

static int check_reduction(ox_infer_ctx *c) {
    const char *red = ir_attr_string(c->node, "reduction", "none");
    if (strcmp(red, "none") != 0 && strcmp(red, "add") != 0 && strcmp(red, "mul") != 0 &&
        strcmp(red, "max") != 0 && strcmp(red, "min") != 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: unknown reduction '%s'", c->node->op_type, red);
    /* max and min only exist from version 18 on */
    int ver = ox_op_since_version(c->node->domain, c->node->op_type, c->node->opset);
    if ((strcmp(red, "max") == 0 || strcmp(red, "min") == 0) && ver < 18)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s-%d: reduction '%s' needs version 18 or later",
                             c->node->op_type, ver, red);
    if (strcmp(red, "none") != 0 && ox_infer_in_dtype(c, 0) == ONYX_STRING)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: reduction '%s' is not defined for strings", c->node->op_type, red);
    return 0;
}

static int infer_scatter_nd(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    if (check_reduction(c) != 0) return -1;
    if (ox_infer_in_dtype(c, 1) != ONYX_UNDEFINED && ox_infer_in_dtype(c, 1) != ONYX_INT64)
        return ox_infer_fail(c, ox_infer_bad_code(c), "ScatterND: indices must be int64, got %s", ox_dtype_name(ox_infer_in_dtype(c, 1)));
    if (ox_infer_in_dtype(c, 2) != ONYX_UNDEFINED && dt != ONYX_UNDEFINED && ox_infer_in_dtype(c, 2) != dt)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "ScatterND: updates have type %s but data has %s",
                             ox_dtype_name(ox_infer_in_dtype(c, 2)), ox_dtype_name(dt));
    int r = ox_infer_in_rank(c, 0), q = ox_infer_in_rank(c, 1), u = ox_infer_in_rank(c, 2);
    const ir_type *x = ox_infer_in(c, 0), *ind = ox_infer_in(c, 1), *up = ox_infer_in(c, 2);
    if (r == 0 || q == 0) return ox_infer_fail(c, ox_infer_bad_code(c), "ScatterND: data and indices must have rank >= 1");
    if (r >= 0 && q >= 0 && u >= 0 && ind->dims[q - 1] >= 0) {
        int64_t k = ind->dims[q - 1];
        if (k < 1 || k > r)
            return ox_infer_fail(c, ox_infer_bad_code(c), "ScatterND: the last indices dim is %lld but must be in [1, %d]",
                                 (long long)k, r);
        int want = q - 1 + r - (int)k;
        if (u != want)
            return ox_infer_fail(c, ox_infer_bad_code(c), "ScatterND: updates have rank %d, expected %d", u, want);
        for (int a = 0; a < u; a++) {
            int64_t e = a < q - 1 ? ind->dims[a] : x->dims[k + a - (q - 1)];
            if (e >= 0 && up->dims[a] >= 0 && e != up->dims[a]) {
                char b1[256];
                return ox_infer_fail(c, ox_infer_bad_code(c), "ScatterND: updates shape %s does not match indices and data (dim %d should be %lld)",
                                     ox_shape_str(up->dims, u, b1, sizeof b1), a, (long long)e);
            }
        }
    }
    if (r < 0) return ox_infer_set_output(c, 0, dt, NULL, -1);
    return ox_infer_set_output(c, 0, dt, x->dims, r);
}

static int infer_scatter_elements(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    if (check_reduction(c) != 0) return -1;
    if (check_index_type(c, 1, "indices") != 0) return -1;
    if (ox_infer_in_dtype(c, 2) != ONYX_UNDEFINED && dt != ONYX_UNDEFINED && ox_infer_in_dtype(c, 2) != dt)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: updates have type %s but data has %s", c->node->op_type,
                             ox_dtype_name(ox_infer_in_dtype(c, 2)), ox_dtype_name(dt));
    int r = ox_infer_in_rank(c, 0), q = ox_infer_in_rank(c, 1), u = ox_infer_in_rank(c, 2);
    const ir_type *x = ox_infer_in(c, 0), *ind = ox_infer_in(c, 1), *up = ox_infer_in(c, 2);
    if (r == 0) return ox_infer_fail(c, ox_infer_bad_code(c), "%s: data must have rank >= 1", c->node->op_type);
    int64_t axis = 0;
    if (r > 0 && check_axis(c, ir_attr_int(c->node, "axis", 0), r, &axis) != 0) return -1;
    if ((r >= 0 && q >= 0 && r != q) || (q >= 0 && u >= 0 && q != u))
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: data, indices and updates must have the same rank (%d, %d, %d)",
                             c->node->op_type, r, q, u);
    if (q >= 0 && u >= 0)
        for (int a = 0; a < q; a++)
            if (ind->dims[a] >= 0 && up->dims[a] >= 0 && ind->dims[a] != up->dims[a]) {
                char b1[256], b2[256];
                return ox_infer_fail(c, ox_infer_bad_code(c), "%s: indices shape %s differs from updates shape %s", c->node->op_type,
                                     ox_shape_str(ind->dims, q, b1, sizeof b1), ox_shape_str(up->dims, u, b2, sizeof b2));
            }
    if (r < 0) return ox_infer_set_output(c, 0, dt, NULL, -1);
    if (q >= 0)
        for (int a = 0; a < r; a++)
            if (a != axis && x->dims[a] >= 0 && ind->dims[a] > x->dims[a])
                return ox_infer_fail(c, ox_infer_bad_code(c), "%s: indices dim %d (%lld) exceeds data dim %lld", c->node->op_type, a,
                                     (long long)ind->dims[a], (long long)x->dims[a]);
    return ox_infer_set_output(c, 0, dt, x->dims, r);
}

/* ---- TensorScatter ---- */

/* The KV-cache update: the output is past_cache's type and shape; update
 * may differ from it only along `axis` (not 0, the batch axis), where it is
 * not longer; write_indices holds one int64 start per batch entry. */
static int infer_tensor_scatter(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0), ut = ox_infer_in_dtype(c, 1);
    if (ut != ONYX_UNDEFINED && dt != ONYX_UNDEFINED && ut != dt)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "TensorScatter: update has type %s but past_cache has %s",
                             ox_dtype_name(ut), ox_dtype_name(dt));
    const char *mode = ir_attr_string(c->node, "mode", "linear");
    if (strcmp(mode, "linear") != 0 && strcmp(mode, "circular") != 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "TensorScatter: unknown mode '%s' (expected linear or circular)",
                             mode);
    ox_dtype wt = ox_infer_in_dtype(c, 2);
    if (wt != ONYX_UNDEFINED && wt != ONYX_INT64)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "TensorScatter: write_indices must be int64, got %s",
                             ox_dtype_name(wt));
    int r = ox_infer_in_rank(c, 0), u = ox_infer_in_rank(c, 1), w = ox_infer_in_rank(c, 2);
    const ir_type *x = ox_infer_in(c, 0), *up = ox_infer_in(c, 1), *wi = ox_infer_in(c, 2);
    if (r < 0) return ox_infer_set_output(c, 0, dt, NULL, -1);
    if (r < 2)
        return ox_infer_fail(c, ox_infer_bad_code(c), "TensorScatter: past_cache must have rank >= 2, got %d", r);
    int64_t axis = 0;
    if (check_axis(c, ir_attr_int(c->node, "axis", -2), r, &axis) != 0) return -1;
    if (axis == 0) return ox_infer_fail(c, ONYX_INVALID_MODEL, "TensorScatter: axis cannot be 0, the batch axis");
    if (u >= 0 && u != r)
        return ox_infer_fail(c, ox_infer_bad_code(c), "TensorScatter: update has rank %d but past_cache has %d", u, r);
    for (int a = 0; u >= 0 && a < r; a++) {
        int64_t pd = x->dims[a], ud = up->dims[a];
        if (pd < 0 || ud < 0) continue;
        if (a == axis ? ud > pd : ud != pd)
            return ox_infer_fail(c, ox_infer_bad_code(c), "TensorScatter: update dim %d is %lld but past_cache's is %lld%s",
                                 a, (long long)ud, (long long)pd,
                                 a == axis ? " (it may not exceed it)" : " (they must match)");
    }
    if (w >= 0 && (w != 1 || (wi->dims[0] >= 0 && x->dims[0] >= 0 && wi->dims[0] != x->dims[0])))
        return ox_infer_fail(c, ox_infer_bad_code(c), "TensorScatter: write_indices must have shape [%lld]",
                             (long long)x->dims[0]);
    return ox_infer_set_output(c, 0, dt, x->dims, r);
}

/* ---- TopK ---- */

static int infer_topk(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    if (dt == ONYX_STRING || dt == ONYX_BOOL || dt == ONYX_COMPLEX64 || dt == ONYX_COMPLEX128)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "TopK: type %s is not supported", ox_dtype_name(dt));
    int r = ox_infer_in_rank(c, 0);
    const ir_type *x = ox_infer_in(c, 0);
    int64_t k = -1;
    int known = 0;
    if (c->node->opset < 10) {
        if (!ir_node_attr(c->node, "k")) return ox_infer_fail(c, ONYX_INVALID_MODEL, "TopK: attribute 'k' is required");
        k = ir_attr_int(c->node, "k", 0);
        known = 1;
    } else {
        const ir_type *kt = ox_infer_in(c, 1);
        if (!kt) return ox_infer_fail(c, ONYX_INVALID_MODEL, "TopK: input K is required");
        if (kt->dtype != ONYX_UNDEFINED && kt->dtype != ONYX_INT64)
            return ox_infer_fail(c, ox_infer_bad_code(c), "TopK: K must be int64, got %s", ox_dtype_name(kt->dtype));
        const ox_tensor *kv = c->values && c->n_inputs > 1 ? c->values[1] : NULL;
        if (kv) {
            if (kv->kind != OX_KIND_TENSOR || ox_tensor_numel(kv) != 1 || kv->rank > 1)
                return ox_infer_fail(c, ox_infer_bad_code(c), "TopK: K must be a 1-element 1-D tensor");
            k = ox_get_i64(kv->data, kv->dtype, 0);
            known = 1;
        }
    }
    if (known && k < 0) return ox_infer_fail(c, ox_infer_bad_code(c), "TopK: K = %lld is negative", (long long)k);
    if (r < 0) {
        if (ox_infer_set_output(c, 0, dt, NULL, -1) != 0) return -1;
        return ox_infer_set_output(c, 1, ONYX_INT64, NULL, -1);
    }
    if (r == 0) return ox_infer_fail(c, ox_infer_bad_code(c), "TopK: the input must have rank >= 1");
    int64_t axis = 0;
    if (check_axis(c, ir_attr_int(c->node, "axis", -1), r, &axis) != 0) return -1;
    if (known && x->dims[axis] >= 0 && k > x->dims[axis])
        return ox_infer_fail(c, ox_infer_bad_code(c), "TopK: K = %lld exceeds the size %lld of axis %lld", (long long)k,
                             (long long)x->dims[axis], (long long)axis);
    int64_t out[OX_MAX_RANK];
    memcpy(out, x->dims, (size_t)r * sizeof *out);
    out[axis] = known ? k : -1;
    if (ox_infer_set_output(c, 0, dt, out, r) != 0) return -1;
    return ox_infer_set_output(c, 1, ONYX_INT64, out, r);
}

/* ---- NonZero ---- */

static int infer_nonzero(ox_infer_ctx *c) {
    int r = ox_infer_in_rank(c, 0);
    c->data_dependent = 1;
    int64_t out[2] = {r < 0 ? -1 : r, -1};
    return ox_infer_set_output(c, 0, ONYX_INT64, out, 2);
}

/* ---- OneHot ---- */

static int infer_onehot(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 2);
    int q = ox_infer_in_rank(c, 0);
    const ir_type *ind = ox_infer_in(c, 0);
    const ox_tensor *dv = c->values && c->n_inputs > 1 ? c->values[1] : NULL;
    const ox_tensor *vv = c->values && c->n_inputs > 2 ? c->values[2] : NULL;
    if (ox_infer_in_dtype(c, 0) == ONYX_STRING || ox_infer_in_dtype(c, 1) == ONYX_STRING)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "OneHot: indices and depth must be numeric");
    const ir_type *vt = ox_infer_in(c, 2);
    if (vt && vt->rank >= 0 && !(vt->rank == 1 && (vt->dims[0] == 2 || vt->dims[0] < 0)))
        return ox_infer_fail(c, ox_infer_bad_code(c), "OneHot: values must be a 1-D tensor of 2 elements [off, on]");
    if (vv && ox_tensor_numel(vv) != 2)
        return ox_infer_fail(c, ox_infer_bad_code(c), "OneHot: values must hold 2 elements [off, on]");
    int64_t depth = -1;
    if (dv) {
        if (dv->kind != OX_KIND_TENSOR || ox_tensor_numel(dv) != 1)
            return ox_infer_fail(c, ox_infer_bad_code(c), "OneHot: depth must hold exactly one value");
        double d = ox_get_f64(dv->data, dv->dtype, 0);
        /* converting NaN or a value beyond int64 to an integer is undefined */
        if (ox_dtype_is_float(dv->dtype) && !(d > -0x1p62 && d < 0x1p62))
            return ox_infer_fail(c, ox_infer_bad_code(c), "OneHot: depth %g is not a usable size", d);
        depth = ox_dtype_is_float(dv->dtype) ? (int64_t)d : ox_get_i64(dv->data, dv->dtype, 0);
        if (depth < 1) return ox_infer_fail(c, ox_infer_bad_code(c), "OneHot: depth must be positive, got %lld", (long long)depth);
    }
    if (q < 0) return ox_infer_set_output(c, 0, dt, NULL, -1);
    int ro = q + 1;
    int64_t axis = ir_attr_int(c->node, "axis", -1);
    if (axis < -ro || axis >= ro)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "OneHot: axis %lld is out of range for output rank %d",
                             (long long)axis, ro);
    if (axis < 0) axis += ro;
    int64_t out[OX_MAX_RANK + 1];
    for (int a = 0, j = 0; a < ro; a++) out[a] = a == axis ? depth : ind->dims[j++];
    return ox_infer_set_output(c, 0, dt, out, ro);
}

/* ---- Compress ---- */

static int infer_compress(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    int r = ox_infer_in_rank(c, 0);
    const ir_type *x = ox_infer_in(c, 0), *ct = ox_infer_in(c, 1);
    if (ct && ct->dtype != ONYX_UNDEFINED && ct->dtype != ONYX_BOOL)
        return ox_infer_fail(c, ox_infer_bad_code(c), "Compress: condition must be bool, got %s", ox_dtype_name(ct->dtype));
    if (ct && ct->rank >= 0 && ct->rank != 1)
        return ox_infer_fail(c, ox_infer_bad_code(c), "Compress: condition must be 1-D, got rank %d", ct->rank);
    const ir_attr *ax = ir_node_attr(c->node, "axis");
    int64_t axis = 0;
    if (ax && r >= 0 && check_axis(c, ax->i, r, &axis) != 0) return -1;
    const ox_tensor *cv = c->values && c->n_inputs > 1 ? c->values[1] : NULL;
    int64_t limit = -1;
    if (r >= 0) limit = ax ? x->dims[axis] : ox_infer_numel_or_zero(x->dims, r);
    int64_t cnt = -1;
    if (cv && limit >= 0) {
        const uint8_t *b = cv->data;
        int64_t n = ox_tensor_numel(cv);
        cnt = 0;
        for (int64_t i = 0; i < n; i++) {
            if (!b[i]) continue;
            if (i >= limit)
                return ox_infer_fail(c, ox_infer_bad_code(c), "Compress: condition[%lld] is true but the %s has only %lld entries",
                                     (long long)i, ax ? "axis" : "input", (long long)limit);
            cnt++;
        }
    }
    if (!ax) return ox_infer_set_output(c, 0, dt, &cnt, 1);
    if (r < 0) return ox_infer_set_output(c, 0, dt, NULL, -1);
    int64_t out[OX_MAX_RANK];
    memcpy(out, x->dims, (size_t)r * sizeof *out);
    out[axis] = cnt;
    return ox_infer_set_output(c, 0, dt, out, r);
}

/* ---- Unique ---- */

static int infer_unique(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    int r = ox_infer_in_rank(c, 0);
    const ir_type *x = ox_infer_in(c, 0);
    c->data_dependent = 1;
    const ir_attr *ax = ir_node_attr(c->node, "axis");
    int64_t axis = 0, n_in = -1;
    if (ax && r == 0) return ox_infer_fail(c, ox_infer_bad_code(c), "Unique: 'axis' needs an input of rank >= 1");
    if (ax && r > 0 && check_axis(c, ax->i, r, &axis) != 0) return -1;
    int64_t unk[1] = {-1};
    if (!ax) {
        if (ox_infer_set_output(c, 0, dt, unk, 1) != 0) return -1;
        if (r >= 0) n_in = ox_infer_numel_or_zero(x->dims, r);
    } else if (r < 0) {
        if (ox_infer_set_output(c, 0, dt, NULL, -1) != 0) return -1;
    } else {
        int64_t out[OX_MAX_RANK];
        memcpy(out, x->dims, (size_t)r * sizeof *out);
        out[axis] = -1;
        if (ox_infer_set_output(c, 0, dt, out, r) != 0) return -1;
        n_in = x->dims[axis];
    }
    int64_t inv[1] = {n_in};
    if (ox_infer_set_output(c, 1, ONYX_INT64, unk, 1) != 0 || ox_infer_set_output(c, 2, ONYX_INT64, inv, 1) != 0) return -1;
    return ox_infer_set_output(c, 3, ONYX_INT64, unk, 1);
}

/* ---- Trilu ---- */

static int infer_trilu(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    int r = ox_infer_in_rank(c, 0);
    if (r >= 0 && r < 2) return ox_infer_fail(c, ox_infer_bad_code(c), "Trilu: the input must have rank >= 2, got %d", r);
    const ir_type *kt = ox_infer_in(c, 1);
    if (kt && kt->rank > 0 && !(kt->rank == 1 && kt->dims[0] == 1))
        return ox_infer_fail(c, ox_infer_bad_code(c), "Trilu: k must be a scalar");
    if (kt && kt->dtype != ONYX_UNDEFINED && kt->dtype != ONYX_INT64)
        return ox_infer_fail(c, ox_infer_bad_code(c), "Trilu: k must be int64, got %s", ox_dtype_name(kt->dtype));
    if (r < 0) return ox_infer_set_output(c, 0, dt, NULL, -1);
    return ox_infer_set_output(c, 0, dt, ox_infer_in(c, 0)->dims, r);
}

/* ---- ReverseSequence ---- */

static int infer_reverse_sequence(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    int r = ox_infer_in_rank(c, 0);
    const ir_type *x = ox_infer_in(c, 0), *lt = ox_infer_in(c, 1);
    int64_t ba = ir_attr_int(c->node, "batch_axis", 1), ta = ir_attr_int(c->node, "time_axis", 0);
    if (!((ba == 0 && ta == 1) || (ba == 1 && ta == 0)))
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "ReverseSequence: batch_axis and time_axis must be 0 and 1 in "
                             "some order, got %lld and %lld", (long long)ba, (long long)ta);
    if (lt && lt->dtype != ONYX_UNDEFINED && lt->dtype != ONYX_INT64)
        return ox_infer_fail(c, ox_infer_bad_code(c), "ReverseSequence: sequence_lens must be int64, got %s",
                             ox_dtype_name(lt->dtype));
    if (lt && lt->rank >= 0 && lt->rank != 1)
        return ox_infer_fail(c, ox_infer_bad_code(c), "ReverseSequence: sequence_lens must be 1-D, got rank %d", lt->rank);
    if (r < 0) return ox_infer_set_output(c, 0, dt, NULL, -1);
    if (r < 2) return ox_infer_fail(c, ox_infer_bad_code(c), "ReverseSequence: the input must have rank >= 2, got %d", r);
    if (lt && lt->rank == 1 && lt->dims[0] >= 0 && x->dims[ba] >= 0 && lt->dims[0] != x->dims[ba])
        return ox_infer_fail(c, ox_infer_bad_code(c), "ReverseSequence: sequence_lens has %lld entries but the batch axis has %lld",
                             (long long)lt->dims[0], (long long)x->dims[ba]);
    return ox_infer_set_output(c, 0, dt, x->dims, r);
}

static const ox_op_schema SCHEMAS[] = {
    {"", "Gather", 1, 17, 2, 2, 1, 1, infer_gather},
    {"", "GatherElements", 11, 17, 2, 2, 1, 1, infer_gather_elements},
    {"", "GatherND", 11, 17, 2, 2, 1, 1, infer_gather_nd},
    {"", "ScatterND", 11, 18, 3, 3, 1, 1, infer_scatter_nd},
    {"", "ScatterElements", 11, 18, 3, 3, 1, 1, infer_scatter_elements},
    {"", "Scatter", 9, 10, 3, 3, 1, 1, infer_scatter_elements},
    {"", "TensorScatter", 24, 24, 2, 3, 1, 1, infer_tensor_scatter},
    {"", "TopK", 1, 24, 1, 2, 2, 2, infer_topk},
    {"", "NonZero", 9, 17, 1, 1, 1, 1, infer_nonzero},
    {"", "OneHot", 9, 28, 3, 3, 1, 1, infer_onehot},
    {"", "Compress", 9, 28, 2, 2, 1, 1, infer_compress},
    {"", "Unique", 11, 28, 1, 1, 1, 4, infer_unique},
    {"", "Trilu", 14, 17, 1, 2, 1, 1, infer_trilu},
    {"", "ReverseSequence", 10, 28, 2, 2, 1, 1, infer_reverse_sequence},
};

const ox_op_table ox_ops_index = {SCHEMAS, sizeof SCHEMAS / sizeof SCHEMAS[0]};
