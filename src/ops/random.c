/* Schemas of the random generators: RandomNormal/RandomUniform (shape from
 * an attribute), their *Like variants (shape from the input), Bernoulli and
 * Multinomial. Only types and shapes are inferred here; the values are
 * drawn by the kernels. */

#include "ops/op.h"

extern const ox_op_table ox_ops_random;

/* bfloat16 is listed from version 22 on; older models never carry it, so
 * it is accepted at every version. */
static int is_real_float(ox_dtype t) {
    return t == ONYX_FLOAT16 || t == ONYX_FLOAT32 || t == ONYX_FLOAT64 || t == ONYX_BFLOAT16;
}

static int dtype_name_ok(int64_t v) { return v >= 0 && v <= 0x7fffffff && ox_dtype_valid((int)v); }

/* The 'dtype' attribute when present, else `dflt`. Fails on a value that
 * is not a dtype at all; callers check whether it is one they accept. */
static int read_dtype(ox_infer_ctx *c, ox_dtype dflt, ox_dtype *out) {
    const ir_attr *a = ir_node_attr(c->node, "dtype");
    if (!a) {
        *out = dflt;
        return 0;
    }
    if (!dtype_name_ok(a->i))
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: dtype %lld is not a known data type",
                             c->node->op_type, (long long)a->i);
    *out = (ox_dtype)a->i;
    return 0;
}

static int require_float_out(ox_infer_ctx *c, ox_dtype t) {
    if (!is_real_float(t))
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "%s: output dtype must be float16, float32, float64 or bfloat16, got %s",
                             c->node->op_type, ox_dtype_name(t));
    return 0;
}

/* ---- RandomNormal / RandomUniform ---- */

static int infer_random_fixed(ox_infer_ctx *c) {
    ox_dtype dt = ONYX_UNDEFINED;
    if (read_dtype(c, ONYX_FLOAT32, &dt) != 0 || require_float_out(c, dt) != 0) return -1;
    const ir_attr *a = ir_node_attr(c->node, "shape");
    if (!a || a->type != IR_ATTR_INTS)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: the 'shape' attribute is required",
                             c->node->op_type);
    if (a->n > OX_MAX_RANK)
        return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED, "%s: shape has rank %zu, onyx supports at most %d",
                             c->node->op_type, a->n, OX_MAX_RANK);
    int64_t dims[OX_MAX_RANK];
    for (size_t i = 0; i < a->n; i++) {
        if (a->ints[i] < 0)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: shape[%zu] is %lld, dims must be >= 0",
                                 c->node->op_type, i, (long long)a->ints[i]);
        dims[i] = a->ints[i];
    }
    return ox_infer_set_output(c, 0, dt, dims, (int)a->n);
}

/* ---- RandomNormalLike / RandomUniformLike ---- */

static int infer_random_like(ox_infer_ctx *c) {
    const ir_type *x = ox_infer_in(c, 0);
    if (!x) return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: input is required", c->node->op_type);
    if (x->kind != OX_KIND_TENSOR)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: input must be a tensor",
                             c->node->op_type);
    ox_dtype dt = ONYX_UNDEFINED;
    if (read_dtype(c, x->dtype, &dt) != 0) return -1;
    if (dt == ONYX_UNDEFINED)
        return ox_infer_set_output(c, 0, dt, NULL, -1); /* input type not known yet */
    if (require_float_out(c, dt) != 0) return -1;
    return ox_infer_set_output(c, 0, dt, x->dims, x->rank);
}

/* ---- Bernoulli ---- */

static int bernoulli_out_ok(ox_dtype t) {
    switch (t) {
    case ONYX_FLOAT16: case ONYX_FLOAT32: case ONYX_FLOAT64: case ONYX_BFLOAT16:
    case ONYX_UINT8: case ONYX_UINT16: case ONYX_UINT32: case ONYX_UINT64:
    case ONYX_INT8: case ONYX_INT16: case ONYX_INT32: case ONYX_INT64: case ONYX_BOOL:
        return 1;
    default:
        return 0;
    }
}

static int infer_bernoulli(ox_infer_ctx *c) {
    const ir_type *x = ox_infer_in(c, 0);
    if (!x) return ox_infer_fail(c, ONYX_INVALID_MODEL, "Bernoulli: input is required");
    if (x->kind != OX_KIND_TENSOR)
        return ox_infer_fail(c, ox_infer_bad_code(c), "Bernoulli: input must be a tensor");
    if (x->dtype != ONYX_UNDEFINED && !is_real_float(x->dtype))
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "Bernoulli: probabilities must be float16, float32, float64 or bfloat16, got %s",
                             ox_dtype_name(x->dtype));
    ox_dtype dt = ONYX_UNDEFINED;
    if (read_dtype(c, x->dtype, &dt) != 0) return -1;
    if (dt != ONYX_UNDEFINED && !bernoulli_out_ok(dt))
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Bernoulli: output dtype %s is not allowed",
                             ox_dtype_name(dt));
    return ox_infer_set_output(c, 0, dt, x->dims, x->rank);
}

/* ---- Multinomial ---- */

static int infer_multinomial(ox_infer_ctx *c) {
    const ir_type *x = ox_infer_in(c, 0);
    if (!x) return ox_infer_fail(c, ONYX_INVALID_MODEL, "Multinomial: input is required");
    if (x->kind != OX_KIND_TENSOR)
        return ox_infer_fail(c, ox_infer_bad_code(c), "Multinomial: input must be a tensor");
    if (x->dtype != ONYX_UNDEFINED && !is_real_float(x->dtype))
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "Multinomial: input must be float16, float32, float64 or bfloat16, got %s",
                             ox_dtype_name(x->dtype));
    ox_dtype dt = ONYX_UNDEFINED;
    if (read_dtype(c, ONYX_INT32, &dt) != 0) return -1;
    if (dt != ONYX_INT32 && dt != ONYX_INT64)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Multinomial: output dtype must be int32 or int64, got %s",
                             ox_dtype_name(dt));
    int64_t samples = ir_attr_int(c->node, "sample_size", 1);
    if (samples < 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Multinomial: sample_size must be >= 1, got %lld",
                             (long long)samples);
    if (x->rank >= 0 && x->rank != 2)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "Multinomial: input must be 2-D [batch_size, class_size], got rank %d",
                             x->rank);
    int64_t dims[2] = {x->rank == 2 ? x->dims[0] : -1, samples};
    return ox_infer_set_output(c, 0, dt, dims, 2);
}

static const ox_op_schema OPS[] = {
    {"", "RandomNormal", 1, 22, 0, 0, 1, 1, infer_random_fixed},
    {"", "RandomUniform", 1, 22, 0, 0, 1, 1, infer_random_fixed},
    {"", "RandomNormalLike", 1, 22, 1, 1, 1, 1, infer_random_like},
    {"", "RandomUniformLike", 1, 22, 1, 1, 1, 1, infer_random_like},
    {"", "Bernoulli", 15, 22, 1, 1, 1, 1, infer_bernoulli},
    {"", "Multinomial", 7, 22, 1, 1, 1, 1, infer_multinomial},
};

const ox_op_table ox_ops_random = {OPS, sizeof OPS / sizeof OPS[0]};
