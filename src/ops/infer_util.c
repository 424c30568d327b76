/* Helpers shared by the families' inference functions. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/checked.h"
#include "ops/op.h"

int ox_infer_fail(ox_infer_ctx *c, onyx_code code, const char *fmt, ...) {
    char buf[OX_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return ox_fail(c->err, code, "%s", buf);
}

const ir_type *ox_infer_in(const ox_infer_ctx *c, int i) {
    if (i < 0 || i >= c->n_inputs || !c->inputs) return NULL;
    if (c->node && i < c->node->n_inputs && c->node->inputs[i] < 0) return NULL;
    return c->inputs[i];
}

ox_dtype ox_infer_in_dtype(const ox_infer_ctx *c, int i) {
    const ir_type *t = ox_infer_in(c, i);
    return t ? t->dtype : ONYX_UNDEFINED;
}

int ox_infer_in_rank(const ox_infer_ctx *c, int i) {
    const ir_type *t = ox_infer_in(c, i);
    return t && t->kind == OX_KIND_TENSOR ? t->rank : -1;
}

const ox_tensor *ox_infer_in_value(const ox_infer_ctx *c, int i) {
    if (!ox_infer_in(c, i) || !c->values) return NULL;
    return c->values[i];
}

onyx_code ox_infer_bad_code(const ox_infer_ctx *c) {
    return c->runtime ? ONYX_INVALID_ARGUMENT : ONYX_INVALID_MODEL;
}

int ox_infer_set_output(ox_infer_ctx *c, int i, ox_dtype dtype, const int64_t *dims, int rank) {
    ir_type *o = ox_infer_out(c, i);
    if (!o) return 0;
    if (rank > OX_MAX_RANK)
        return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED, "%s: output rank %d exceeds onyx's limit of %d",
                             c->node->op_type, rank, OX_MAX_RANK);
    if (rank < 0)
        ox_type_set_unknown_shape(o, dtype);
    else
        ox_type_set_shape(o, dtype, dims, rank);
    return 0;
}

ir_type *ox_infer_out(ox_infer_ctx *c, int i) {
    if (i >= c->n_outputs) return NULL;
    if (c->node && i < c->node->n_outputs && c->node->outputs[i] < 0) return NULL;
    return &c->outputs[i];
}

void ox_type_set_shape(ir_type *t, ox_dtype dtype, const int64_t *dims, int rank) {
    if (!t) return;
    t->kind = OX_KIND_TENSOR;
    t->dtype = dtype;
    t->rank = rank;
    for (int i = 0; i < rank && i < OX_MAX_RANK; i++) t->dims[i] = dims ? dims[i] : -1;
}

void ox_type_set_unknown_shape(ir_type *t, ox_dtype dtype) {
    if (!t) return;
    t->kind = OX_KIND_TENSOR;
    t->dtype = dtype;
    t->rank = -1;
}

int ox_infer_same_as_input(ox_infer_ctx *c, int out, int in) {
    ir_type *o = ox_infer_out(c, out);
    if (!o) return 0;
    if (in >= c->n_inputs || !c->inputs[in])
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "input %d is required", in);
    const ir_type *t = c->inputs[in];
    o->kind = t->kind;
    o->dtype = t->dtype;
    o->rank = t->rank;
    for (int i = 0; i < t->rank; i++) o->dims[i] = t->dims[i];
    return 0;
}

/* Unknown dims (-1) broadcast optimistically: with a known d != 1 the
 * result is d; with 1 the result is the other side. */
int ox_broadcast_dims(const int64_t *a, int ra, const int64_t *b, int rb, int64_t *out, int *rout) {
    int r = ra > rb ? ra : rb;
    for (int i = 0; i < r; i++) {
        int64_t da = i < r - ra ? 1 : a[i - (r - ra)];
        int64_t db = i < r - rb ? 1 : b[i - (r - rb)];
        int64_t d;
        if (da == db)
            d = da;
        else if (da == 1)
            d = db;
        else if (db == 1)
            d = da;
        else if (da < 0)
            d = db;
        else if (db < 0)
            d = da;
        else
            return -1;
        out[i] = d;
    }
    *rout = r;
    return 0;
}

int ox_infer_broadcast(ox_infer_ctx *c, int first, int count, ox_dtype dtype, ir_type *out) {
    int64_t dims[OX_MAX_RANK];
    int rank = 0;
    for (int k = first; k < first + count; k++) {
        const ir_type *t = k < c->n_inputs ? c->inputs[k] : NULL;
        if (!t) continue;
        if (t->rank < 0) {
            ox_type_set_unknown_shape(out, dtype);
            return 0;
        }
        int64_t tmp[OX_MAX_RANK];
        int r;
        if (ox_broadcast_dims(dims, rank, t->dims, t->rank, tmp, &r) != 0) {
            char a[128], b[128];
            return ox_infer_fail(c, ONYX_INVALID_ARGUMENT,
                                 "shapes %s and %s cannot be broadcast together",
                                 ox_shape_str(dims, rank, a, sizeof a),
                                 ox_shape_str(t->dims, t->rank, b, sizeof b));
        }
        memcpy(dims, tmp, sizeof tmp);
        rank = r;
    }
    ox_type_set_shape(out, dtype, dims, rank);
    return 0;
}

int ox_norm_axis(ox_infer_ctx *c, int64_t axis, int rank, int *out) {
    if (axis < -(int64_t)rank || axis >= rank || (rank == 0 && axis != 0))
        return ox_infer_fail(c, ONYX_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                             (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return 0;
}

int ox_require_rank(ox_infer_ctx *c, int i, int min_rank, int max_rank) {
    const ir_type *t = i < c->n_inputs ? c->inputs[i] : NULL;
    if (!t) return ox_infer_fail(c, ONYX_INVALID_MODEL, "input %d is required", i);
    if (t->rank < 0) return 0;
    if (t->rank < min_rank || (max_rank >= 0 && t->rank > max_rank)) {
        if (max_rank == min_rank)
            return ox_infer_fail(c, ONYX_INVALID_ARGUMENT, "input %d must have rank %d, got %d", i,
                                 min_rank, t->rank);
        return ox_infer_fail(c, ONYX_INVALID_ARGUMENT, "input %d has rank %d, expected %d..%d", i,
                             t->rank, min_rank, max_rank);
    }
    return 0;
}

int ox_infer_int_list(ox_infer_ctx *c, int i, int64_t *vals, int max, int *count, int *known) {
    *count = 0;
    *known = 0;
    const ox_tensor *v = i < c->n_inputs && c->values ? c->values[i] : NULL;
    if (!v) return 0;
    if (!ox_dtype_is_integer(v->dtype))
        return ox_infer_fail(c, ONYX_INVALID_ARGUMENT, "input %d must be an integer tensor, got %s", i,
                             ox_dtype_name(v->dtype));
    if (v->rank > 1)
        return ox_infer_fail(c, ONYX_INVALID_ARGUMENT, "input %d must be 1-D, got rank %d", i, v->rank);
    int64_t n = ox_tensor_numel(v);
    if (n > max)
        return ox_infer_fail(c, ONYX_INVALID_ARGUMENT, "input %d has %lld values, at most %d allowed", i,
                             (long long)n, max);
    for (int64_t k = 0; k < n; k++) vals[k] = ox_get_i64(v->data, v->dtype, (size_t)k);
    *count = (int)n;
    *known = 1;
    return 0;
}

int ox_infer_need_tensor(ox_infer_ctx *c, int i, const char *what) {
    const ir_type *t = ox_infer_in(c, i);
    if (!t)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: input %d (%s) is required",
                             c->node->op_type, i, what);
    if (t->kind != OX_KIND_TENSOR)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: input %d (%s) must be a tensor",
                             c->node->op_type, i, what);
    return 0;
}

static int unsupported_type(ox_infer_ctx *c, const char *what, ox_dtype t) {
    return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s has unsupported element type %s",
                         c->node->op_type, what, ox_dtype_name(t));
}

int ox_infer_check_dtype(ox_infer_ctx *c, int i, const char *what, const ox_dtype *allowed, int n) {
    const ir_type *t = ox_infer_in(c, i);
    if (!t || t->dtype == ONYX_UNDEFINED) return 0;
    for (int k = 0; k < n; k++)
        if (allowed[k] == t->dtype) return 0;
    return unsupported_type(c, what, t->dtype);
}

int ox_infer_float_ok(ox_dtype t, int allow_bf16) {
    return t == ONYX_UNDEFINED || t == ONYX_FLOAT16 || t == ONYX_FLOAT32 || t == ONYX_FLOAT64 ||
           (allow_bf16 && t == ONYX_BFLOAT16);
}

int ox_infer_check_float(ox_infer_ctx *c, int i, const char *what, int allow_bf16) {
    const ir_type *t = ox_infer_in(c, i);
    if (!t || ox_infer_float_ok(t->dtype, allow_bf16)) return 0;
    return unsupported_type(c, what, t->dtype);
}

int ox_infer_same_dtype(ox_infer_ctx *c, int i, int j, const char *a, const char *b) {
    const ir_type *x = ox_infer_in(c, i), *y = ox_infer_in(c, j);
    if (!x || !y || x->dtype == ONYX_UNDEFINED || y->dtype == ONYX_UNDEFINED ||
        x->dtype == y->dtype)
        return 0;
    return ox_infer_fail(c, ox_infer_bad_code(c),
                         "%s: %s (%s) and %s (%s) must have the same element type",
                         c->node->op_type, a, ox_dtype_name(x->dtype), b, ox_dtype_name(y->dtype));
}

int64_t ox_infer_numel(const int64_t *dims, int rank) {
    if (rank < 0) return -1;
    for (int i = 0; i < rank; i++)
        if (dims[i] < 0) return -1;
    int64_t n;
    return ox_numel_checked(dims, rank, &n) ? n : OX_NUMEL_OVERFLOW;
}

int64_t ox_infer_numel_or_zero(const int64_t *dims, int rank) {
    int unknown = 0;
    for (int i = 0; i < rank; i++) {
        if (dims[i] == 0) return 0;
        if (dims[i] < 0) unknown = 1;
    }
    if (unknown) return -1;
    int64_t n;
    return ox_numel_checked(dims, rank, &n) ? n : OX_NUMEL_OVERFLOW;
}

int ox_infer_numel_known(ox_infer_ctx *c, const int64_t *dims, int rank, const char *what,
                         int64_t *out) {
    *out = ox_infer_numel(dims, rank);
    if (*out != OX_NUMEL_OVERFLOW) return 0;
    char b[256];
    return ox_infer_fail(c, ox_infer_bad_code(c), "%s: the element count of %s %s overflows int64",
                         c->node->op_type, what, ox_shape_str(dims, rank, b, sizeof b));
}

static int overflow_fail(ox_infer_ctx *c, onyx_code code, int64_t a, char op, int64_t b,
                         const char *what, va_list ap) {
    char w[256];
    vsnprintf(w, sizeof w, what, ap);
    return ox_infer_fail(c, code, "%s: %s overflows int64 (%lld %c %lld)", c->node->op_type, w,
                         (long long)a, op, (long long)b);
}

int ox_infer_add(ox_infer_ctx *c, onyx_code code, int64_t a, int64_t b, int64_t *out,
                 const char *what, ...) {
    if (ox_add_i64(a, b, out)) return 0;
    va_list ap;
    va_start(ap, what);
    int r = overflow_fail(c, code, a, '+', b, what, ap);
    va_end(ap);
    return r;
}

int ox_infer_sub(ox_infer_ctx *c, onyx_code code, int64_t a, int64_t b, int64_t *out,
                 const char *what, ...) {
    if (ox_sub_i64(a, b, out)) return 0;
    va_list ap;
    va_start(ap, what);
    int r = overflow_fail(c, code, a, '-', b, what, ap);
    va_end(ap);
    return r;
}

int ox_infer_mul(ox_infer_ctx *c, onyx_code code, int64_t a, int64_t b, int64_t *out,
                 const char *what, ...) {
    if (ox_mul_i64(a, b, out)) return 0;
    va_list ap;
    va_start(ap, what);
    int r = overflow_fail(c, code, a, '*', b, what, ap);
    va_end(ap);
    return r;
}
