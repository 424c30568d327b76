/* Schemas of the loss operators (SoftmaxCrossEntropyLoss,
 * NegativeLogLikelihoodLoss) and of Dropout. */
#include <string.h>

#include "ops/op.h"

extern const ox_op_table ox_ops_loss;

/* ---- SoftmaxCrossEntropyLoss / NegativeLogLikelihoodLoss ---- */

static int infer_loss(ox_infer_ctx *c) {
    int sce = strcmp(c->node->op_type, "SoftmaxCrossEntropyLoss") == 0;
    const char *xn = sce ? "scores" : "input", *ln = sce ? "labels" : "target",
               *wn = sce ? "weights" : "weight";
    if (ox_infer_need_tensor(c, 0, xn) || ox_infer_need_tensor(c, 1, ln)) return -1;
    /* bfloat16: SoftmaxCrossEntropyLoss from 13, NegativeLogLikelihoodLoss from 22 */
    int bf16 = c->node->opset >= (sce ? 13 : 22);
    if (ox_infer_check_float(c, 0, xn, bf16)) return -1;
    const ir_type *x = ox_infer_in(c, 0), *l = ox_infer_in(c, 1), *w = ox_infer_in(c, 2);
    if (l->dtype != ONYX_UNDEFINED && l->dtype != ONYX_INT32 && l->dtype != ONYX_INT64)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s must be int32 or int64, got %s",
                             c->node->op_type, ln, ox_dtype_name(l->dtype));
    const char *red = ir_attr_string(c->node, "reduction", "mean");
    int none = strcmp(red, "none") == 0;
    if (!none && strcmp(red, "sum") != 0 && strcmp(red, "mean") != 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "%s: reduction '%s' is not one of 'none', 'sum', 'mean'",
                             c->node->op_type, red);
    if (x->rank >= 0 && x->rank < 2)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: %s must have shape (N, C, d1, ..., dk), got rank %d",
                             c->node->op_type, xn, x->rank);
    if (x->rank >= 0 && l->rank >= 0 && l->rank != x->rank - 1)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: %s has rank %d; with %s of rank %d it must have rank %d",
                             c->node->op_type, ln, l->rank, xn, x->rank, x->rank - 1);
    /* (N, d1, ..., dk), completed from whichever input knows each dim */
    int64_t ldims[OX_MAX_RANK];
    int lrank = x->rank >= 2 ? x->rank - 1 : l->rank;
    for (int i = 0; i < lrank; i++) {
        int64_t a = x->rank >= 2 ? x->dims[i == 0 ? 0 : i + 1] : -1;
        int64_t b = l->rank >= 0 ? l->dims[i] : -1;
        if (a >= 0 && b >= 0 && a != b) {
            char s1[128], s2[128];
            return ox_infer_fail(
                c, ox_infer_bad_code(c), "%s: %s %s does not match %s %s without the class axis",
                c->node->op_type, ln, ox_shape_str(l->dims, l->rank, s1, sizeof s1), xn,
                ox_shape_str(x->dims, x->rank, s2, sizeof s2));
        }
        ldims[i] = a >= 0 ? a : b;
    }
    if (w) {
        if (w->kind != OX_KIND_TENSOR)
            return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s must be a tensor",
                                 c->node->op_type, wn);
        if (x->dtype != ONYX_UNDEFINED && w->dtype != ONYX_UNDEFINED && w->dtype != x->dtype)
            return ox_infer_fail(
                c, ox_infer_bad_code(c), "%s: %s (%s) must have the element type of %s (%s)",
                c->node->op_type, wn, ox_dtype_name(w->dtype), xn, ox_dtype_name(x->dtype));
        if (w->rank >= 0 && w->rank != 1)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: %s must be 1-D (one per class), got rank %d",
                                 c->node->op_type, wn, w->rank);
        if (w->rank == 1 && x->rank >= 2 && w->dims[0] >= 0 && x->dims[1] >= 0 && w->dims[0] != x->dims[1])
            return ox_infer_fail(
                c, ox_infer_bad_code(c), "%s: %s has %lld values but there are %lld classes",
                c->node->op_type, wn, (long long)w->dims[0], (long long)x->dims[1]);
    }
    if (ox_infer_set_output(c, 0, x->dtype, none ? ldims : NULL, none ? lrank : 0)) return -1;
    if (sce) return ox_infer_set_output(c, 1, x->dtype, x->dims, x->rank);
    return 0;
}

/* ---- Dropout ---- (regularisation in inference) */

/* A scalar input: rank 0, or any shape holding one value. */
static int check_scalar(ox_infer_ctx *c, int i, const char *what) {
    const ir_type *t = ox_infer_in(c, i);
    if (!t || t->rank <= 0) return 0;
    for (int d = 0; d < t->rank; d++)
        if (t->dims[d] >= 0 && t->dims[d] != 1)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "Dropout: %s must be a scalar, got rank %d", what, t->rank);
    return 0;
}

static int infer_dropout(ox_infer_ctx *c) {
    int opset = c->node->opset;
    if (ox_infer_need_tensor(c, 0, "data") || ox_infer_check_float(c, 0, "data", opset >= 13))
        return -1;
    const ir_type *x = ox_infer_in(c, 0);
    if (opset >= 12) {
        const ir_type *r = ox_infer_in(c, 1), *t = ox_infer_in(c, 2);
        /* a bfloat16 ratio arrived with Dropout-22 */
        if (r && (r->kind != OX_KIND_TENSOR || !ox_infer_float_ok(r->dtype, opset >= 22)))
            return ox_infer_fail(c, ox_infer_bad_code(c), "Dropout: ratio must be a float16, float32 or "
                                                          "float64%s tensor",
                                 opset >= 22 ? " or bfloat16" : "");
        if (t && (t->kind != OX_KIND_TENSOR || (t->dtype != ONYX_BOOL && t->dtype != ONYX_UNDEFINED)))
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "Dropout: training_mode must be a bool tensor");
        if (check_scalar(c, 1, "ratio") || check_scalar(c, 2, "training_mode")) return -1;
    } else {
        float ratio = ir_attr_float(c->node, "ratio", 0.5f);
        if (!(ratio >= 0.0f && ratio < 1.0f))
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Dropout: ratio %g is outside [0, 1)", (double)ratio);
    }
    if (ox_infer_set_output(c, 0, x->dtype, x->dims, x->rank)) return -1;
    /* the mask is bool from opset 10, the data type before */
    return ox_infer_set_output(c, 1, opset >= 10 ? ONYX_BOOL : x->dtype, x->dims, x->rank);
}

static const ox_op_schema OPS[] = {
    {"", "SoftmaxCrossEntropyLoss", 12, 17, 2, 3, 1, 2, infer_loss},
    {"", "NegativeLogLikelihoodLoss", 12, 22, 2, 3, 1, 1, infer_loss},
    {"", "Dropout", 1, 11, 1, 1, 1, 2, infer_dropout},
    {"", "Dropout", 12, 22, 1, 3, 1, 2, infer_dropout},
};

const ox_op_table ox_ops_loss = {OPS, sizeof OPS / sizeof OPS[0]};
