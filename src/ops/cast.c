/* Schemas of Cast and CastLike through Cast-28 / CastLike-25.
 *
 * Versions: Cast-1 names the target with a string; Cast-6/9/13 add
 * types; Cast-19 adds the float8 types and `saturate`; Cast-21 int4/uint4;
 * Cast-23 float4e2m1; Cast-24 float8e8m0 and `round_mode`; Cast-25
 * int2/uint2; Cast-28 float6. CastLike follows with 15/19/21/23/24/25.
 * Every element type except complex numbers (and UNDEFINED) can be cast
 * to every other; onyx accepts the newer types at any version, since a
 * model that names them cannot have come from an older exporter anyway. */
#include <inttypes.h>
#include <string.h>

#include "core/dtype.h"
#include "ops/op.h"

extern const ox_op_table ox_ops_cast;

static int castable(ox_dtype t) {
    return ox_dtype_valid((int)t) && t != ONYX_COMPLEX64 && t != ONYX_COMPLEX128;
}

/* Cast-1 named the target type with a string: ONNX's DataType names. */
static ox_dtype legacy_type_name(const char *s) {
    static const struct {
        const char *name;
        ox_dtype t;
    } names[] = {
        {"FLOAT", ONYX_FLOAT32},   {"UINT8", ONYX_UINT8},    {"INT8", ONYX_INT8},
        {"UINT16", ONYX_UINT16},   {"INT16", ONYX_INT16},    {"INT32", ONYX_INT32},
        {"INT64", ONYX_INT64},     {"STRING", ONYX_STRING},  {"BOOL", ONYX_BOOL},
        {"FLOAT16", ONYX_FLOAT16}, {"DOUBLE", ONYX_FLOAT64}, {"UINT32", ONYX_UINT32},
        {"UINT64", ONYX_UINT64},   {"BFLOAT16", ONYX_BFLOAT16},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) return names[i].t;
    return ONYX_UNDEFINED;
}

/* Fails when input i has a known element type Cast cannot read. */
static int check_input(ox_infer_ctx *c, int i) {
    const ir_type *t = ox_infer_in(c, i);
    if (!t) return 0;
    if (t->kind != OX_KIND_TENSOR)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: input %d must be a tensor",
                             c->node->op_type, i);
    if (t->dtype == ONYX_UNDEFINED || castable(t->dtype)) return 0;
    return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED, "%s: input %d has type %s, which cannot be cast",
                         c->node->op_type, i, ox_dtype_name(t->dtype));
}

/* saturate (Cast-19) and round_mode (Cast-24) take a fixed set of values. */
static int check_cast_attrs(ox_infer_ctx *c) {
    int64_t sat = ir_attr_int(c->node, "saturate", 1);
    if (sat != 0 && sat != 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: saturate must be 0 or 1, got %" PRId64,
                             c->node->op_type, sat);
    const char *mode = ir_attr_string(c->node, "round_mode", "up");
    if (strcmp(mode, "up") != 0 && strcmp(mode, "down") != 0 && strcmp(mode, "nearest") != 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "%s: round_mode must be \"up\", \"down\" or \"nearest\", got \"%s\"",
                             c->node->op_type, mode);
    return 0;
}

static int shape_like_input(ox_infer_ctx *c, ox_dtype dtype) {
    ir_type *o = ox_infer_out(c, 0);
    const ir_type *x = ox_infer_in(c, 0);
    if (!o) return 0;
    if (!x || x->rank < 0)
        ox_type_set_unknown_shape(o, dtype);
    else
        ox_type_set_shape(o, dtype, x->dims, x->rank);
    return 0;
}

static int infer_cast(ox_infer_ctx *c) {
    const ir_attr *a = ir_node_attr(c->node, "to");
    if (!a) return ox_infer_fail(c, ONYX_INVALID_MODEL, "Cast: attribute 'to' is required");
    ox_dtype to;
    if (a->type == IR_ATTR_STRING) {
        to = legacy_type_name(a->s ? a->s : "");
        if (to == ONYX_UNDEFINED)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Cast: unknown target type \"%s\"",
                                 a->s ? a->s : "");
    } else {
        if (a->i < 0 || a->i > INT32_MAX || !ox_dtype_valid((int)a->i))
            return ox_infer_fail(c, ONYX_INVALID_MODEL,
                                 "Cast: 'to' = %" PRId64 " is not a valid data type", a->i);
        to = (ox_dtype)a->i;
    }
    if (!castable(to))
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Cast: cannot cast to %s (complex types are "
                             "not Cast targets)", ox_dtype_name(to));
    if (check_input(c, 0) != 0 || check_cast_attrs(c) != 0) return -1;
    return shape_like_input(c, to);
}

static int infer_castlike(ox_infer_ctx *c) {
    if (check_input(c, 0) != 0 || check_input(c, 1) != 0 || check_cast_attrs(c) != 0) return -1;
    return shape_like_input(c, ox_infer_in_dtype(c, 1));
}

static const ox_op_schema OPS[] = {
    {"", "Cast", 1, 28, 1, 1, 1, 1, infer_cast},
    {"", "CastLike", 15, 25, 2, 2, 1, 1, infer_castlike},
};

const ox_op_table ox_ops_cast = {OPS, sizeof OPS / sizeof OPS[0]};
