/* Schemas of the linear quantization operators: QuantizeLinear,
 * DequantizeLinear (per-tensor from opset 10, per-axis from 13) and
 * DynamicQuantizeLinear. */
#include "ops/op.h"

extern const ox_op_table ox_ops_quantize;

/* Checks the scale (input 1) and zero point (input 2) against x (input
 * 0): one value for the whole tensor, or from opset 13 a 1-D tensor with
 * one value per slice along `axis`. */
static int check_quant_params(ox_infer_ctx *c, const char *scale_name, const char *zp_name) {
    const ir_type *x = ox_infer_in(c, 0), *s = ox_infer_in(c, 1), *z = ox_infer_in(c, 2);
    if (s->dtype != ONYX_UNDEFINED && s->dtype != ONYX_FLOAT32)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s must be float32, got %s",
                             c->node->op_type, scale_name, ox_dtype_name(s->dtype));
    if (z && s->rank >= 0 && z->rank >= 0) {
        int differ = s->rank != z->rank;
        for (int i = 0; !differ && i < s->rank; i++)
            differ = s->dims[i] >= 0 && z->dims[i] >= 0 && s->dims[i] != z->dims[i];
        if (differ) {
            char a[128], b[128];
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: %s %s and %s %s must have the same shape", c->node->op_type,
                                 scale_name, ox_shape_str(s->dims, s->rank, a, sizeof a), zp_name,
                                 ox_shape_str(z->dims, z->rank, b, sizeof b));
        }
    }
    if (s->rank < 0) return 0;
    int64_t n = ox_infer_numel(s->dims, s->rank);
    if (c->node->opset < 13) {
        if (s->rank > 1 || (n >= 0 && n != 1))
            return ox_infer_fail(
                c, ox_infer_bad_code(c),
                "%s: %s must be a scalar before opset 13 (per-axis needs opset 13), "
                "got rank %d with %lld values",
                c->node->op_type, scale_name, s->rank, (long long)n);
        return 0;
    }
    if (s->rank > 1)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s must be a scalar or 1-D, got rank %d",
                             c->node->op_type, scale_name, s->rank);
    if (s->rank == 1 && x->rank >= 0 && n != 1) {
        int axis;
        if (ox_norm_axis(c, ir_attr_int(c->node, "axis", 1), x->rank, &axis)) return -1;
        if (n >= 0 && x->dims[axis] >= 0 && x->dims[axis] != n)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: %s has %lld values but x has %lld along axis %d (per-axis "
                                 "quantization needs one per slice)",
                                 c->node->op_type, scale_name, (long long)n,
                                 (long long)x->dims[axis], axis);
    }
    return 0;
}

static int infer_quantize(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "x") || ox_infer_need_tensor(c, 1, "y_scale")) return -1;
    const ir_type *x = ox_infer_in(c, 0), *z = ox_infer_in(c, 2);
    if (z && z->kind != OX_KIND_TENSOR)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "QuantizeLinear: y_zero_point must be a tensor");
    if (x->dtype != ONYX_UNDEFINED && x->dtype != ONYX_FLOAT32 && x->dtype != ONYX_INT32)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "QuantizeLinear: x must be float32 or int32, got %s",
                             ox_dtype_name(x->dtype));
    ox_dtype out = ONYX_UINT8;
    if (z && z->dtype != ONYX_UNDEFINED) {
        if (z->dtype != ONYX_UINT8 && z->dtype != ONYX_INT8)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "QuantizeLinear: y_zero_point must be uint8 or int8, got %s",
                                 ox_dtype_name(z->dtype));
        out = z->dtype;
    }
    if (check_quant_params(c, "y_scale", "y_zero_point")) return -1;
    return ox_infer_set_output(c, 0, out, x->dims, x->rank);
}

static int infer_dequantize(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "x") || ox_infer_need_tensor(c, 1, "x_scale")) return -1;
    const ir_type *x = ox_infer_in(c, 0), *z = ox_infer_in(c, 2);
    if (z && z->kind != OX_KIND_TENSOR)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "DequantizeLinear: x_zero_point must be a tensor");
    if (x->dtype != ONYX_UNDEFINED && x->dtype != ONYX_UINT8 && x->dtype != ONYX_INT8 &&
        x->dtype != ONYX_INT32)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "DequantizeLinear: x must be uint8, int8 or int32, got %s",
                             ox_dtype_name(x->dtype));
    if (z && x->dtype != ONYX_UNDEFINED && z->dtype != ONYX_UNDEFINED && z->dtype != x->dtype)
        return ox_infer_fail(
            c, ox_infer_bad_code(c),
            "DequantizeLinear: x_zero_point (%s) must have the element type of x (%s)",
            ox_dtype_name(z->dtype), ox_dtype_name(x->dtype));
    if (check_quant_params(c, "x_scale", "x_zero_point")) return -1;
    return ox_infer_set_output(c, 0, ONYX_FLOAT32, x->dims, x->rank);
}

static int infer_dynamic_quantize(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "x")) return -1;
    const ir_type *x = ox_infer_in(c, 0);
    if (x->dtype != ONYX_UNDEFINED && x->dtype != ONYX_FLOAT32)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "DynamicQuantizeLinear: x must be float32, got %s",
                             ox_dtype_name(x->dtype));
    if (ox_infer_set_output(c, 0, ONYX_UINT8, x->dims, x->rank)) return -1;
    if (ox_infer_set_output(c, 1, ONYX_FLOAT32, NULL, 0)) return -1;
    return ox_infer_set_output(c, 2, ONYX_UINT8, NULL, 0);
}

static const ox_op_schema OPS[] = {
    {"", "QuantizeLinear", 10, 17, 2, 3, 1, 1, infer_quantize},
    {"", "DequantizeLinear", 10, 17, 2, 3, 1, 1, infer_dequantize},
    {"", "DynamicQuantizeLinear", 11, 17, 1, 1, 3, 3, infer_dynamic_quantize},
};

const ox_op_table ox_ops_quantize = {OPS, sizeof OPS / sizeof OPS[0]};
