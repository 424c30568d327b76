/* Schemas of the pooling operators: MaxPool, AveragePool, LpPool, their
 * global forms, and MaxUnpool. */
#include <string.h>

#include "ops/op.h"
#include "ops/window.h"

extern const ox_op_table ox_ops_pool;

static const ox_dtype FLOATS[] = {ONYX_FLOAT16, ONYX_FLOAT32, ONYX_FLOAT64, ONYX_BFLOAT16};
static const ox_dtype MAXPOOL_TYPES[] = {ONYX_FLOAT16, ONYX_FLOAT32, ONYX_FLOAT64, ONYX_BFLOAT16,
                                         ONYX_INT8,    ONYX_UINT8};

/* Input 0 must be a tensor with one of the allowed element types. */
static int check_x(ox_infer_ctx *c, const ox_dtype *allowed, int n) {
    const ir_type *x = ox_infer_in(c, 0);
    if (!x)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: input X is required", c->node->op_type);
    if (x->kind != OX_KIND_TENSOR)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: input X must be a tensor",
                             c->node->op_type);
    if (x->dtype == ONYX_UNDEFINED) return 0;
    for (int i = 0; i < n; i++)
        if (allowed[i] == x->dtype) return 0;
    return ox_infer_fail(c, ox_infer_bad_code(c), "%s: element type %s is not supported",
                         c->node->op_type, ox_dtype_name(x->dtype));
}

/* Output shape of a windowed pool; also used for MaxPool's Indices. */
static int infer_window_pool(ox_infer_ctx *c, const ox_dtype *allowed, int n_allowed, int use_ceil) {
    if (check_x(c, allowed, n_allowed)) return -1;
    const ir_type *x = ox_infer_in(c, 0);
    size_t nk = 0;
    const int64_t *k = ir_attr_ints(c->node, "kernel_shape", &nk);
    if (!k || nk == 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: attribute 'kernel_shape' is required",
                             c->node->op_type);
    if (nk > OX_MAX_RANK - 2)
        return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED, "%s: too many spatial dimensions",
                             c->node->op_type);
    int r = (int)nk;
    if (x->rank >= 0 && x->rank != r + 2)
        return ox_infer_fail(
            c, ox_infer_bad_code(c),
            "%s: input has rank %d but kernel_shape has %d entries (expected rank %d)",
            c->node->op_type, x->rank, r, r + 2);
    for (int i = 0; i < r; i++)
        if (k[i] < 1)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: kernel_shape entries must be positive",
                                 c->node->op_type);
    int64_t in[OX_MAX_RANK], out[OX_MAX_RANK];
    for (int i = 0; i < r; i++) in[i] = x->rank >= 0 ? x->dims[i + 2] : -1;
    if (ox_infer_window(c, in, r, k, use_ceil, out + 2)) return -1;
    out[0] = x->rank >= 0 ? x->dims[0] : -1;
    out[1] = x->rank >= 0 ? x->dims[1] : -1;
    if (ox_infer_set_output(c, 0, x->dtype, out, r + 2)) return -1;
    return ox_infer_set_output(c, 1, ONYX_INT64, out, r + 2);
}

static int infer_maxpool(ox_infer_ctx *c) {
    int64_t so = ir_attr_int(c->node, "storage_order", 0);
    if (so != 0 && so != 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "MaxPool: storage_order must be 0 or 1");
    /* 8-bit types arrived in opset 12 (bfloat16 with 22: accepted throughout) */
    return infer_window_pool(c, MAXPOOL_TYPES, c->node->opset >= 12 ? 6 : 4, 1);
}

static int infer_avgpool(ox_infer_ctx *c) { return infer_window_pool(c, FLOATS, 4, 1); }

static int infer_lppool(ox_infer_ctx *c) { return infer_window_pool(c, FLOATS, 4, 1); }

static int infer_global_pool(ox_infer_ctx *c) {
    if (check_x(c, FLOATS, 4)) return -1;
    const ir_type *x = ox_infer_in(c, 0);
    if (x->rank < 0) return ox_infer_set_output(c, 0, x->dtype, NULL, -1);
    if (x->rank < 2)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: input must have rank >= 2 (N, C, ...), got %d", c->node->op_type,
                             x->rank);
    int64_t out[OX_MAX_RANK];
    out[0] = x->dims[0];
    out[1] = x->dims[1];
    for (int i = 2; i < x->rank; i++) out[i] = 1;
    return ox_infer_set_output(c, 0, x->dtype, out, x->rank);
}

/* ---- MaxUnpool ---- */

static int infer_maxunpool(ox_infer_ctx *c) {
    if (check_x(c, FLOATS, 4)) return -1;
    const ir_type *x = ox_infer_in(c, 0), *ind = ox_infer_in(c, 1);
    if (!ind) return ox_infer_fail(c, ONYX_INVALID_MODEL, "MaxUnpool: input I is required");
    if (ind->dtype != ONYX_UNDEFINED && ind->dtype != ONYX_INT64)
        return ox_infer_fail(c, ox_infer_bad_code(c), "MaxUnpool: indices must be int64, got %s",
                             ox_dtype_name(ind->dtype));
    if (x->rank >= 0 && ind->rank >= 0) {
        if (x->rank != ind->rank)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "MaxUnpool: X and I must have the same shape");
        for (int i = 0; i < x->rank; i++)
            if (x->dims[i] >= 0 && ind->dims[i] >= 0 && x->dims[i] != ind->dims[i])
                return ox_infer_fail(c, ox_infer_bad_code(c),
                                     "MaxUnpool: X and I must have the same shape");
    }
    size_t nk = 0;
    const int64_t *k = ir_attr_ints(c->node, "kernel_shape", &nk);
    if (!k || nk == 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "MaxUnpool: attribute 'kernel_shape' is required");
    if (nk > OX_MAX_RANK - 2)
        return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED, "MaxUnpool: too many spatial dimensions");
    int r = (int)nk;
    if (x->rank >= 0 && x->rank != r + 2)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "MaxUnpool: input has rank %d but kernel_shape has %d entries",
                             x->rank, r);
    if (ox_infer_in(c, 2)) {
        int64_t vals[OX_MAX_RANK];
        int cnt = 0, known = 0;
        if (ox_infer_int_list(c, 2, vals, OX_MAX_RANK, &cnt, &known)) return -1;
        if (known) {
            if (cnt != r + 2)
                return ox_infer_fail(c, ox_infer_bad_code(c),
                                     "MaxUnpool: output_shape has %d values, expected %d", cnt,
                                     r + 2);
            for (int i = 0; i < cnt; i++)
                if (vals[i] < 0)
                    return ox_infer_fail(c, ox_infer_bad_code(c),
                                         "MaxUnpool: output_shape values must be >= 0");
            return ox_infer_set_output(c, 0, x->dtype, vals, cnt);
        }
        int64_t dims[OX_MAX_RANK];
        for (int i = 0; i < r + 2; i++) dims[i] = -1;
        return ox_infer_set_output(c, 0, x->dtype, dims, r + 2);
    }
    size_t ns = 0, np = 0;
    const int64_t *s = ir_attr_ints(c->node, "strides", &ns), *p = ir_attr_ints(c->node, "pads", &np);
    if ((s && (int)ns != r) || (p && (int)np != 2 * r))
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "MaxUnpool: strides or pads have the wrong length");
    int64_t out[OX_MAX_RANK];
    out[0] = x->rank >= 0 ? x->dims[0] : -1;
    out[1] = x->rank >= 0 ? x->dims[1] : -1;
    for (int i = 0; i < r; i++) {
        int64_t in = x->rank >= 0 ? x->dims[i + 2] : -1;
        int64_t st = s ? s[i] : 1;
        if (st < 1 || k[i] < 1)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "MaxUnpool: kernel sizes and strides must be positive");
        int64_t o = -1;
        const onyx_code bad = ox_infer_bad_code(c);
        if (in >= 0 &&
            (ox_infer_mul(c, bad, in - 1, st, &o, "(input size - 1) times stride on spatial axis %d", i) ||
             ox_infer_add(c, bad, o, k[i], &o, "the output size (plus kernel) on spatial axis %d", i) ||
             (p && (ox_infer_sub(c, bad, o, p[i], &o, "the output size (minus pads) on spatial axis %d", i) ||
                    ox_infer_sub(c, bad, o, p[i + r], &o, "the output size (minus pads) on spatial axis %d", i)))))
            return -1;
        if (in >= 0 && o < 0)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "MaxUnpool: output size is negative on spatial axis %d", i);
        out[i + 2] = o;
    }
    return ox_infer_set_output(c, 0, x->dtype, out, r + 2);
}

static const ox_op_schema OPS[] = {
    {"", "MaxPool", 1, 22, 1, 1, 1, 2, infer_maxpool},
    {"", "AveragePool", 1, 22, 1, 1, 1, 1, infer_avgpool},
    {"", "LpPool", 1, 22, 1, 1, 1, 1, infer_lppool},
    {"", "GlobalAveragePool", 1, 22, 1, 1, 1, 1, infer_global_pool},
    {"", "GlobalMaxPool", 1, 22, 1, 1, 1, 1, infer_global_pool},
    {"", "GlobalLpPool", 1, 22, 1, 1, 1, 1, infer_global_pool},
    {"", "MaxUnpool", 9, 22, 2, 3, 1, 1, infer_maxunpool},
};

const ox_op_table ox_ops_pool = {OPS, sizeof OPS / sizeof OPS[0]};
