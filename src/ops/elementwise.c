/* Schemas of the elementwise operators: unary math and activations,
 * broadcasting binary arithmetic, comparisons and logic, variadic
 * Min/Max/Sum/Mean, Where, Clip and the Softmax family (Cast and CastLike
 * are in cast.c). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/dtype.h"
#include "ops/op.h"

extern const ox_op_table ox_ops_elementwise;

#define MT(t) (1u << (t))
#define M_FLOAT (MT(ONYX_FLOAT32) | MT(ONYX_FLOAT64) | MT(ONYX_FLOAT16) | MT(ONYX_BFLOAT16))
#define M_SINT (MT(ONYX_INT8) | MT(ONYX_INT16) | MT(ONYX_INT32) | MT(ONYX_INT64))
#define M_UINT (MT(ONYX_UINT8) | MT(ONYX_UINT16) | MT(ONYX_UINT32) | MT(ONYX_UINT64))
#define M_NUM (M_FLOAT | M_SINT | M_UINT)
#define M_FLOAT8                                                                \
    (MT(ONYX_FLOAT8E4M3FN) | MT(ONYX_FLOAT8E4M3FNUZ) | MT(ONYX_FLOAT8E5M2) |      \
     MT(ONYX_FLOAT8E5M2FNUZ))
#define M_BOOL MT(ONYX_BOOL)
#define M_STR MT(ONYX_STRING)
#define M_CASTABLE (M_NUM | M_BOOL | M_STR)
#define M_ANY (M_CASTABLE | MT(ONYX_COMPLEX64) | MT(ONYX_COMPLEX128))

static uint32_t mask_of(ox_dtype t) { return t > 0 && t < 32 ? 1u << t : 0; }

static const char *type_list(uint32_t mask, char *buf, size_t n) {
    size_t off = 0;
    buf[0] = '\0';
    for (int t = 1; t < OX_DTYPE_COUNT && t < 32 && off < n; t++) {
        if (!(mask & (1u << t))) continue;
        int w = snprintf(buf + off, n - off, "%s%s", off ? ", " : "", ox_dtype_name((ox_dtype)t));
        if (w < 0) break;
        off += (size_t)w;
    }
    return buf;
}

/* Fails when input i has a known element type outside mask. */
static int check_type(ox_infer_ctx *c, int i, uint32_t mask) {
    const ir_type *t = ox_infer_in(c, i);
    char buf[256];
    if (!t) return 0;
    if (t->kind != OX_KIND_TENSOR)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: input %d must be a tensor",
                             c->node->op_type, i);
    if (t->dtype == ONYX_UNDEFINED || (mask_of(t->dtype) & mask)) return 0;
    return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: input %d has type %s; expected one of %s",
                         c->node->op_type, i, ox_dtype_name(t->dtype),
                         type_list(mask, buf, sizeof buf));
}

/* Fails when two inputs have different known element types. */
static int check_same(ox_infer_ctx *c, int i, int j) {
    ox_dtype a = ox_infer_in_dtype(c, i), b = ox_infer_in_dtype(c, j);
    if (a == ONYX_UNDEFINED || b == ONYX_UNDEFINED || a == b) return 0;
    return ox_infer_fail(c, ONYX_INVALID_MODEL,
                         "%s: input %d has type %s but input %d has type %s; they must match",
                         c->node->op_type, i, ox_dtype_name(a), j, ox_dtype_name(b));
}

/* Output `out` gets input `in`'s shape with element type dtype. */
static int shape_like(ox_infer_ctx *c, int out, int in, ox_dtype dtype) {
    ir_type *o = ox_infer_out(c, out);
    const ir_type *x = ox_infer_in(c, in);
    if (!o) return 0;
    if (!x || x->rank < 0)
        ox_type_set_unknown_shape(o, dtype);
    else
        ox_type_set_shape(o, dtype, x->dims, x->rank);
    return 0;
}

/* ---- unary ---- */

static int infer_unary(ox_infer_ctx *c, uint32_t mask) {
    if (check_type(c, 0, mask) != 0) return -1;
    return shape_like(c, 0, 0, ox_infer_in_dtype(c, 0));
}

static int infer_unary_float(ox_infer_ctx *c) { return infer_unary(c, M_FLOAT); }
static int infer_unary_num(ox_infer_ctx *c) { return infer_unary(c, M_NUM); }
static int infer_unary_signed(ox_infer_ctx *c) { return infer_unary(c, M_FLOAT | M_SINT); }
static int infer_not(ox_infer_ctx *c) { return infer_unary(c, M_BOOL); }
static int infer_bitwise_not(ox_infer_ctx *c) { return infer_unary(c, M_SINT | M_UINT); }

static int infer_gelu(ox_infer_ctx *c) {
    const char *ap = ir_attr_string(c->node, "approximate", "none");
    if (strcmp(ap, "none") != 0 && strcmp(ap, "tanh") != 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "Gelu: approximate must be \"none\" or \"tanh\", got \"%s\"", ap);
    return infer_unary(c, M_FLOAT);
}

/* Bit width of a BitCast operand; 0 for the types BitCast does not take
 * (string, and float6, which is not among its types). */
static int bitcast_bits(ox_dtype t) {
    if (t == ONYX_STRING || t == ONYX_FLOAT6E2M3 || t == ONYX_FLOAT6E3M2 ||
        !ox_dtype_valid((int)t))
        return 0;
    return ox_dtype_bits(t);
}

static int infer_bitcast(ox_infer_ctx *c) {
    const ir_attr *a = ir_node_attr(c->node, "to");
    if (!a || a->type != IR_ATTR_INT)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "BitCast: integer attribute 'to' is required");
    if (!ox_dtype_valid((int)a->i))
        return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED,
                             "BitCast: 'to' = %" PRId64 " is not a data type onyx supports", a->i);
    ox_dtype to = (ox_dtype)a->i;
    int tb = bitcast_bits(to);
    if (tb == 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "BitCast: cannot reinterpret as %s",
                             ox_dtype_name(to));
    const ir_type *x = ox_infer_in(c, 0);
    if (x && x->kind != OX_KIND_TENSOR)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "BitCast: input must be a tensor");
    ox_dtype from = ox_infer_in_dtype(c, 0);
    if (from != ONYX_UNDEFINED) {
        int fb = bitcast_bits(from);
        if (fb == 0)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "BitCast: cannot reinterpret %s",
                                 ox_dtype_name(from));
        if (fb != tb)
            return ox_infer_fail(c, ONYX_INVALID_MODEL,
                                 "BitCast: %s is %d bits but %s is %d bits; the widths must match",
                                 ox_dtype_name(from), fb, ox_dtype_name(to), tb);
    }
    return shape_like(c, 0, 0, to);
}

/* IsNaN/IsInf-20 add the four float8 formats. */
static int infer_float_to_bool(ox_infer_ctx *c) {
    uint32_t m = M_FLOAT;
    if (ox_op_since_version(c->node->domain, c->node->op_type, c->node->opset) >= 20)
        m |= M_FLOAT8;
    if (check_type(c, 0, m) != 0) return -1;
    return shape_like(c, 0, 0, ONYX_BOOL);
}

static int infer_celu(ox_infer_ctx *c) {
    if (ir_attr_float(c->node, "alpha", 1.0f) == 0.0f)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Celu: alpha must not be 0");
    return infer_unary(c, M_FLOAT);
}

/* A bound given as an input must hold one value of the input's type. */
static int check_scalar_input(ox_infer_ctx *c, int i, const char *what) {
    const ir_type *t = ox_infer_in(c, i);
    if (!t || t->rank < 0) return 0;
    int64_t n;
    if (ox_infer_numel_known(c, t->dims, t->rank, what, &n) != 0) return -1;
    if (n >= 0 && n != 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: %s must be a scalar, got %" PRId64
                             " elements", c->node->op_type, what, n);
    return 0;
}

static int infer_clip(ox_infer_ctx *c) {
    if (c->node->opset < 11) {
        if (check_type(c, 0, M_FLOAT) != 0) return -1;
    } else {
        if (check_type(c, 0, M_NUM) != 0) return -1;
        for (int i = 1; i <= 2; i++) {
            if (!ox_infer_in(c, i)) continue;
            if (check_same(c, 0, i) != 0) return -1;
            if (check_scalar_input(c, i, i == 1 ? "min" : "max") != 0) return -1;
        }
    }
    return shape_like(c, 0, 0, ox_infer_in_dtype(c, 0));
}

/* ---- binary and variadic ---- */

/* Before opset 7 broadcasting had to be asked for with broadcast=1, and B
 * then broadcast onto A, so the output is A's shape. */
static int legacy_broadcast(ox_infer_ctx *c) {
    return c->node->opset < 7 && ir_attr_int(c->node, "broadcast", 0) != 0;
}

static int infer_binary(ox_infer_ctx *c, uint32_t mask, int same, ox_dtype out_dtype) {
    if (check_type(c, 0, mask) != 0 || check_type(c, 1, mask) != 0) return -1;
    if (same && check_same(c, 0, 1) != 0) return -1;
    ox_dtype dt = out_dtype;
    if (dt == ONYX_UNDEFINED)
        dt = ox_infer_in_dtype(c, 0) ? ox_infer_in_dtype(c, 0) : ox_infer_in_dtype(c, 1);
    if (legacy_broadcast(c)) return shape_like(c, 0, 0, dt);
    ir_type *o = ox_infer_out(c, 0);
    if (!o) return 0;
    return ox_infer_broadcast(c, 0, 2, dt, o);
}

static int infer_arith(ox_infer_ctx *c) { return infer_binary(c, M_NUM, 1, ONYX_UNDEFINED); }
static int infer_compare(ox_infer_ctx *c) { return infer_binary(c, M_NUM, 1, ONYX_BOOL); }
/* Equal-19 adds strings. */
static int infer_equal(ox_infer_ctx *c) {
    uint32_t m = M_NUM | M_BOOL;
    if (ox_op_since_version(c->node->domain, "Equal", c->node->opset) >= 19) m |= M_STR;
    return infer_binary(c, m, 1, ONYX_BOOL);
}
static int infer_bitwise(ox_infer_ctx *c) {
    return infer_binary(c, M_SINT | M_UINT, 1, ONYX_UNDEFINED);
}
static int infer_logical(ox_infer_ctx *c) { return infer_binary(c, M_BOOL, 1, ONYX_BOOL); }

static int infer_pow(ox_infer_ctx *c) {
    /* the exponent may have another type; the result has the base's */
    if (check_type(c, 0, M_NUM) != 0 || check_type(c, 1, M_NUM) != 0) return -1;
    if (c->node->opset < 7 && check_same(c, 0, 1) != 0) return -1;
    if (legacy_broadcast(c)) return shape_like(c, 0, 0, ox_infer_in_dtype(c, 0));
    ir_type *o = ox_infer_out(c, 0);
    if (!o) return 0;
    return ox_infer_broadcast(c, 0, 2, ox_infer_in_dtype(c, 0), o);
}

static int infer_mod(ox_infer_ctx *c) {
    int64_t fm = ir_attr_int(c->node, "fmod", 0);
    if (fm != 0 && fm != 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Mod: fmod must be 0 or 1, got %" PRId64, fm);
    return infer_binary(c, M_NUM, 1, ONYX_UNDEFINED);
}

static int infer_bitshift(ox_infer_ctx *c) {
    const char *dir = ir_attr_string(c->node, "direction", NULL);
    if (!dir || (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0))
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "BitShift: direction must be \"LEFT\" or \"RIGHT\"%s%s%s",
                             dir ? ", got \"" : "", dir ? dir : "", dir ? "\"" : "");
    /* BitShift-28 adds the signed types (arithmetic right shift) */
    uint32_t m = M_UINT;
    if (ox_op_since_version(c->node->domain, "BitShift", c->node->opset) >= 28) m |= M_SINT;
    return infer_binary(c, m, 1, ONYX_UNDEFINED);
}

static int infer_prelu(ox_infer_ctx *c) {
    if (check_type(c, 0, M_NUM) != 0 || check_same(c, 0, 1) != 0) return -1;
    /* before opset 7 a 1-D slope applied per channel: the output is X */
    if (c->node->opset < 7) return shape_like(c, 0, 0, ox_infer_in_dtype(c, 0));
    ir_type *o = ox_infer_out(c, 0);
    if (!o) return 0;
    return ox_infer_broadcast(c, 0, 2, ox_infer_in_dtype(c, 0), o);
}

static int infer_variadic(ox_infer_ctx *c, uint32_t mask) {
    if (c->n_inputs < 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: needs at least one input",
                             c->node->op_type);
    ox_dtype dt = ONYX_UNDEFINED;
    for (int i = 0; i < c->n_inputs; i++) {
        if (!ox_infer_in(c, i))
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: input %d is missing",
                                 c->node->op_type, i);
        if (check_type(c, i, mask) != 0 || check_same(c, 0, i) != 0) return -1;
        if (dt == ONYX_UNDEFINED) dt = ox_infer_in_dtype(c, i);
    }
    ir_type *o = ox_infer_out(c, 0);
    if (!o) return 0;
    return ox_infer_broadcast(c, 0, c->n_inputs, dt, o);
}

static int infer_minmax(ox_infer_ctx *c) { return infer_variadic(c, M_NUM); }
static int infer_sum(ox_infer_ctx *c) { return infer_variadic(c, M_NUM); }
static int infer_mean(ox_infer_ctx *c) { return infer_variadic(c, M_FLOAT); }

static int infer_where(ox_infer_ctx *c) {
    if (check_type(c, 0, M_BOOL) != 0 || check_type(c, 1, M_ANY) != 0 ||
        check_same(c, 1, 2) != 0)
        return -1;
    ox_dtype dt = ox_infer_in_dtype(c, 1) ? ox_infer_in_dtype(c, 1) : ox_infer_in_dtype(c, 2);
    ir_type *o = ox_infer_out(c, 0);
    if (!o) return 0;
    return ox_infer_broadcast(c, 0, 3, dt, o);
}

/* Cast and CastLike live in cast.c. */

/* ---- Softmax family ---- */

static int infer_softmax(ox_infer_ctx *c) {
    if (check_type(c, 0, M_FLOAT) != 0) return -1;
    const ir_type *x = ox_infer_in(c, 0);
    if (x && x->rank >= 0) {
        int r = x->rank ? x->rank : 1;
        int64_t axis = ir_attr_int(c->node, "axis", c->node->opset < 13 ? 1 : -1);
        if (axis < -r || axis >= r)
            return ox_infer_fail(c, ONYX_INVALID_MODEL,
                                 "%s: axis %" PRId64 " is out of range for rank %d",
                                 c->node->op_type, axis, x->rank);
    }
    return shape_like(c, 0, 0, ox_infer_in_dtype(c, 0));
}

#define U(name, lo, fn) {"", name, lo, 17, 1, 1, 1, 1, fn}
#define B(name, lo, fn) {"", name, lo, 17, 2, 2, 1, 1, fn}
/* Operators with versions past 17. Most of these only add element types
 * (bfloat16 in the opset-22 activations, float8 in IsNaN/IsInf-20); the
 * changes that matter are BitShift-28 (signed types), Equal-19 (strings),
 * Mod-28 (signed zeros spelled out) and Celu-28 (all float types). */
#define UV(name, lo, hi, fn) {"", name, lo, hi, 1, 1, 1, 1, fn}
#define BV(name, lo, hi, fn) {"", name, lo, hi, 2, 2, 1, 1, fn}

static const ox_op_schema OPS[] = {
    U("Relu", 1, infer_unary_signed),
    U("Sigmoid", 1, infer_unary_float),
    U("Tanh", 1, infer_unary_float),
    U("Exp", 1, infer_unary_float),
    U("Log", 1, infer_unary_float),
    U("Sqrt", 1, infer_unary_float),
    U("Reciprocal", 1, infer_unary_float),
    U("Floor", 1, infer_unary_float),
    U("Ceil", 1, infer_unary_float),
    UV("Round", 11, 22, infer_unary_float),
    UV("Sin", 7, 22, infer_unary_float),
    UV("Cos", 7, 22, infer_unary_float),
    UV("Tan", 7, 22, infer_unary_float),
    UV("Asin", 7, 22, infer_unary_float),
    UV("Acos", 7, 22, infer_unary_float),
    UV("Atan", 7, 22, infer_unary_float),
    UV("Sinh", 9, 22, infer_unary_float),
    UV("Cosh", 9, 22, infer_unary_float),
    UV("Asinh", 9, 22, infer_unary_float),
    UV("Acosh", 9, 22, infer_unary_float),
    UV("Atanh", 9, 22, infer_unary_float),
    U("Erf", 9, infer_unary_float),
    UV("Softplus", 1, 22, infer_unary_float),
    UV("Softsign", 1, 22, infer_unary_float),
    UV("HardSigmoid", 1, 22, infer_unary_float),
    UV("HardSwish", 14, 22, infer_unary_float),
    UV("Elu", 1, 22, infer_unary_float),
    UV("Selu", 1, 22, infer_unary_float),
    UV("Celu", 12, 28, infer_celu),
    U("LeakyRelu", 1, infer_unary_float),
    UV("ThresholdedRelu", 10, 22, infer_unary_float),
    U("Shrink", 9, infer_unary_num),
    U("Abs", 1, infer_unary_num),
    U("Neg", 1, infer_unary_signed),
    U("Sign", 9, infer_unary_num),
    UV("IsNaN", 9, 20, infer_float_to_bool),
    UV("IsInf", 10, 20, infer_float_to_bool),
    U("Not", 1, infer_not),
    {"", "Clip", 1, 17, 1, 3, 1, 1, infer_clip},
    B("Add", 1, infer_arith),
    B("Sub", 1, infer_arith),
    B("Mul", 1, infer_arith),
    B("Div", 1, infer_arith),
    BV("Mod", 10, 28, infer_mod),
    B("Pow", 1, infer_pow),
    B("PRelu", 1, infer_prelu),
    BV("BitShift", 11, 28, infer_bitshift),
    BV("Equal", 1, 19, infer_equal),
    B("Less", 1, infer_compare),
    B("LessOrEqual", 12, infer_compare),
    B("Greater", 1, infer_compare),
    B("GreaterOrEqual", 12, infer_compare),
    B("And", 1, infer_logical),
    B("Or", 1, infer_logical),
    B("Xor", 1, infer_logical),
    {"", "Max", 1, 17, 1, -1, 1, 1, infer_minmax},
    {"", "Min", 1, 17, 1, -1, 1, 1, infer_minmax},
    {"", "Sum", 1, 17, 1, -1, 1, 1, infer_sum},
    {"", "Mean", 1, 17, 1, -1, 1, 1, infer_mean},
    {"", "Where", 9, 17, 3, 3, 1, 1, infer_where},
    U("Softmax", 1, infer_softmax),
    U("LogSoftmax", 1, infer_softmax),
    U("Hardmax", 1, infer_softmax),
    BV("BitwiseAnd", 18, 18, infer_bitwise),
    BV("BitwiseOr", 18, 18, infer_bitwise),
    BV("BitwiseXor", 18, 18, infer_bitwise),
    UV("BitwiseNot", 18, 18, infer_bitwise_not),
    UV("Mish", 18, 22, infer_unary_float),
    UV("Gelu", 20, 20, infer_gelu),
    UV("Swish", 24, 24, infer_unary_float),
    UV("BitCast", 26, 26, infer_bitcast),
};

const ox_op_table ox_ops_elementwise = {OPS, sizeof OPS / sizeof OPS[0]};
