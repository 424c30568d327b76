/* Schemas of the linear quantization operators: QuantizeLinear and
 * DequantizeLinear through version 28, and DynamicQuantizeLinear.
 *
 * Versions: 10 per-tensor (float32 <-> int8/uint8, int32 for Dequantize);
 * 13 per-axis (`axis`); 19 float16/bfloat16 x and scale, float8 outputs
 * and `saturate`; 21 blocked quantization (`block_size`), `output_dtype`
 * (Quantize), int16/uint16, int4/uint4; 23 float4e2m1, Quantize's
 * `precision` and Dequantize's `output_dtype`; 24 float8e8m0 scales;
 * 25 int2/uint2; 28 float6. */
#include <inttypes.h>

#include "core/checked.h"
#include "core/dtype.h"
#include "ops/op.h"

extern const ox_op_table ox_ops_quantize;

static int version(const ox_infer_ctx *c) {
    return ox_op_since_version(c->node->domain, c->node->op_type, c->node->opset);
}

/* Quantized element types (QuantizeLinear's outputs, DequantizeLinear's x). */
static int quantized_type(ox_dtype t) {
    switch (t) {
    case ONYX_INT8: case ONYX_UINT8: case ONYX_INT16: case ONYX_UINT16:
    case ONYX_INT4: case ONYX_UINT4: case ONYX_INT2: case ONYX_UINT2:
    case ONYX_FLOAT8E4M3FN: case ONYX_FLOAT8E4M3FNUZ: case ONYX_FLOAT8E5M2:
    case ONYX_FLOAT8E5M2FNUZ: case ONYX_FLOAT4E2M1: case ONYX_FLOAT6E2M3: case ONYX_FLOAT6E3M2:
        return 1;
    default: return 0;
    }
}

static int float_type(ox_dtype t) {
    return t == ONYX_FLOAT32 || t == ONYX_FLOAT16 || t == ONYX_BFLOAT16;
}

/* Checks the scale (input 1) and zero point (input 2) against x (input
 * 0). Three layouts: one value for the whole tensor; from version 13 a
 * 1-D tensor with one value per slice along `axis`; from version 21 a
 * tensor of x's rank whose `axis` dimension is ceil(D / block_size)
 * (blocked quantization). */
static int check_quant_params(ox_infer_ctx *c, const char *scale_name, const char *zp_name) {
    const ir_type *x = ox_infer_in(c, 0), *s = ox_infer_in(c, 1), *z = ox_infer_in(c, 2);
    const char *op = c->node->op_type;
    int v = version(c);
    int64_t block = ir_attr_int(c->node, "block_size", 0);
    if (block < 0)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: block_size must be positive, got %" PRId64,
                             op, block);
    /* one value each is per-tensor whatever the ranks ([] with [1] occurs
     * in the ONNX tests); otherwise the shapes must match */
    if (z && s->rank >= 0 && z->rank >= 0 &&
        !(ox_infer_numel(s->dims, s->rank) == 1 && ox_infer_numel(z->dims, z->rank) == 1)) {
        int differ = s->rank != z->rank;
        for (int i = 0; !differ && i < s->rank; i++)
            differ = s->dims[i] >= 0 && z->dims[i] >= 0 && s->dims[i] != z->dims[i];
        if (differ) {
            char a[128], b[128];
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: %s %s and %s %s must have the same shape", op, scale_name,
                                 ox_shape_str(s->dims, s->rank, a, sizeof a), zp_name,
                                 ox_shape_str(z->dims, z->rank, b, sizeof b));
        }
    }
    if (s->rank < 0) return 0;
    int64_t n = ox_infer_numel(s->dims, s->rank);
    if (v < 13) {
        if (s->rank > 1 || (n >= 0 && n != 1))
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: %s must be a scalar before version 13 (per-axis needs "
                                 "version 13), got rank %d with %lld values",
                                 op, scale_name, s->rank, (long long)n);
        return 0;
    }
    if (n == 1 || x->rank < 0) return 0; /* per-tensor, or nothing to check against */
    if (block > 0 && v >= 21) {
        if (s->rank != x->rank)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: blocked quantization needs %s of x's rank %d, got rank %d",
                                 op, scale_name, x->rank, s->rank);
        int axis;
        if (ox_norm_axis(c, ir_attr_int(c->node, "axis", 1), x->rank, &axis)) return -1;
        for (int d = 0; d < x->rank; d++) {
            if (x->dims[d] < 0 || s->dims[d] < 0) continue;
            /* ceiling division that cannot overflow for any block_size */
            int64_t want = d == axis ? x->dims[d] / block + (x->dims[d] % block != 0) : x->dims[d];
            if (s->dims[d] != want)
                return ox_infer_fail(c, ox_infer_bad_code(c),
                                     "%s: %s has %lld values along dimension %d; x has %lld there "
                                     "and block_size is %lld, so it needs %lld",
                                     op, scale_name, (long long)s->dims[d], d,
                                     (long long)x->dims[d], (long long)block, (long long)want);
        }
        return 0;
    }
    if (s->rank > 1)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: %s must be a scalar or 1-D (or give block_size for blocked "
                             "quantization), got rank %d",
                             op, scale_name, s->rank);
    if (s->rank == 1) {
        int axis;
        if (ox_norm_axis(c, ir_attr_int(c->node, "axis", 1), x->rank, &axis)) return -1;
        if (n >= 0 && x->dims[axis] >= 0 && x->dims[axis] != n)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: %s has %lld values but x has %lld along axis %d (per-axis "
                                 "quantization needs one per slice)",
                                 op, scale_name, (long long)n, (long long)x->dims[axis], axis);
    }
    return 0;
}

static int check_scale_type(ox_infer_ctx *c, const char *name, int allow_int32) {
    ox_dtype t = ox_infer_in(c, 1)->dtype;
    int v = version(c);
    if (t == ONYX_UNDEFINED || t == ONYX_FLOAT32) return 0;
    if (v >= 19 && (t == ONYX_FLOAT16 || t == ONYX_BFLOAT16)) return 0;
    if (v >= 23 && allow_int32 && t == ONYX_INT32) return 0;
    if (v >= 24 && t == ONYX_FLOAT8E8M0) return 0;
    return ox_infer_fail(c, ox_infer_bad_code(c), "%s-%d: %s cannot be %s", c->node->op_type, v,
                         name, ox_dtype_name(t));
}

static int infer_quantize(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "x") || ox_infer_need_tensor(c, 1, "y_scale")) return -1;
    const ir_type *x = ox_infer_in(c, 0), *z = ox_infer_in(c, 2);
    int v = version(c);
    if (z && z->kind != OX_KIND_TENSOR)
        return ox_infer_fail(c, ox_infer_bad_code(c), "QuantizeLinear: y_zero_point must be a tensor");
    if (x->dtype != ONYX_UNDEFINED && x->dtype != ONYX_FLOAT32 && x->dtype != ONYX_INT32 &&
        !(v >= 19 && float_type(x->dtype)))
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "QuantizeLinear-%d: x must be float32%s or int32, got %s", v,
                             v >= 19 ? ", float16, bfloat16" : "", ox_dtype_name(x->dtype));
    if (check_scale_type(c, "y_scale", 1)) return -1;
    int64_t od = v >= 21 ? ir_attr_int(c->node, "output_dtype", 0) : 0;
    if (od != 0 && (od < 0 || od > INT32_MAX || !quantized_type((ox_dtype)od)))
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "QuantizeLinear: output_dtype %" PRId64 " is not a quantized type", od);
    int64_t prec = v >= 23 ? ir_attr_int(c->node, "precision", 0) : 0;
    if (prec != 0 && (prec < 0 || prec > INT32_MAX || !(float_type((ox_dtype)prec) || prec == ONYX_INT32)))
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "QuantizeLinear: precision %" PRId64 " must be a float type", prec);
    ox_dtype out = od ? (ox_dtype)od : ONYX_UINT8;
    if (z && z->dtype != ONYX_UNDEFINED) {
        if (!quantized_type(z->dtype))
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "QuantizeLinear: y_zero_point cannot be %s", ox_dtype_name(z->dtype));
        if (od && z->dtype != (ox_dtype)od)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "QuantizeLinear: output_dtype is %s but y_zero_point is %s; they "
                                 "must match",
                                 ox_dtype_name((ox_dtype)od), ox_dtype_name(z->dtype));
        out = z->dtype;
    }
    if (check_quant_params(c, "y_scale", "y_zero_point")) return -1;
    return ox_infer_set_output(c, 0, out, x->dims, x->rank);
}

static int infer_dequantize(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "x") || ox_infer_need_tensor(c, 1, "x_scale")) return -1;
    const ir_type *x = ox_infer_in(c, 0), *s = ox_infer_in(c, 1), *z = ox_infer_in(c, 2);
    int v = version(c);
    if (z && z->kind != OX_KIND_TENSOR)
        return ox_infer_fail(c, ox_infer_bad_code(c), "DequantizeLinear: x_zero_point must be a tensor");
    if (x->dtype != ONYX_UNDEFINED && x->dtype != ONYX_INT32 && !quantized_type(x->dtype))
        return ox_infer_fail(c, ox_infer_bad_code(c), "DequantizeLinear: x cannot be %s",
                             ox_dtype_name(x->dtype));
    if (z && x->dtype != ONYX_UNDEFINED && z->dtype != ONYX_UNDEFINED && z->dtype != x->dtype)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "DequantizeLinear: x_zero_point (%s) must have the element type of x (%s)",
                             ox_dtype_name(z->dtype), ox_dtype_name(x->dtype));
    if (check_scale_type(c, "x_scale", 0)) return -1;
    if (check_quant_params(c, "x_scale", "x_zero_point")) return -1;
    /* the output has the scale's type unless output_dtype (23) says otherwise */
    int64_t od = v >= 23 ? ir_attr_int(c->node, "output_dtype", 0) : 0;
    ox_dtype out = s->dtype;
    if (od != 0) {
        if (od < 0 || od > INT32_MAX || !float_type((ox_dtype)od))
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "DequantizeLinear: output_dtype %" PRId64
                                 " must be float32, float16 or bfloat16",
                                 od);
        out = (ox_dtype)od;
    } else if (out == ONYX_FLOAT8E8M0) {
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "DequantizeLinear: a float8e8m0 x_scale needs output_dtype to name "
                             "the output type");
    }
    return ox_infer_set_output(c, 0, out, x->dims, x->rank);
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
    {"", "QuantizeLinear", 10, 28, 2, 3, 1, 1, infer_quantize},
    {"", "DequantizeLinear", 10, 28, 2, 3, 1, 1, infer_dequantize},
    {"", "DynamicQuantizeLinear", 11, 28, 1, 1, 3, 3, infer_dynamic_quantize},
};

const ox_op_table ox_ops_quantize = {OPS, sizeof OPS / sizeof OPS[0]};
