/* Schemas of the normalization operators: BatchNormalization,
 * InstanceNormalization, LayerNormalization, GroupNormalization,
 * RMSNormalization, LpNormalization, LRN and MeanVarianceNormalization. */
#include <inttypes.h>
#include <string.h>

#include "ops/normalization.h"
#include "ops/op.h"

extern const ox_op_table ox_ops_normalization;

/* Input i must be 1-D with n entries (n < 0: unknown). */
static int check_vec(ox_infer_ctx *c, int i, const char *what, int64_t n) {
    const ir_type *t = ox_infer_in(c, i);
    if (!t || t->rank < 0) return 0;
    if (t->rank != 1)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s must be 1-D, got rank %d",
                             c->node->op_type, what, t->rank);
    if (n >= 0 && t->dims[0] >= 0 && t->dims[0] != n)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: %s has %lld values, expected %lld (one per channel)",
                             c->node->op_type, what, (long long)t->dims[0], (long long)n);
    return 0;
}

/* ---- BatchNormalization ---- */

int ox_batchnorm_training(const ir_node *n) {
    int extra = 0;
    for (int i = 1; i < n->n_outputs; i++)
        if (n->outputs[i] >= 0) extra = 1;
    if (n->opset >= 14) return ir_attr_int(n, "training_mode", 0) != 0;
    if (n->opset <= 6) return !ir_attr_int(n, "is_test", 0) && extra;
    return extra;
}

static int infer_batchnorm(ox_infer_ctx *c) {
    static const char *const names[5] = {"X", "scale", "B", "mean", "var"};
    for (int i = 0; i < 5; i++)
        if (ox_infer_need_tensor(c, i, names[i]) ||
            ox_infer_check_float(c, i, names[i], c->node->opset >= 9))
            return -1;
    if (c->node->opset < 15) {
        for (int i = 1; i < 5; i++)
            if (ox_infer_same_dtype(c, 0, i, "X", names[i])) return -1;
    } else if (ox_infer_same_dtype(c, 1, 2, "scale", "B") ||
               ox_infer_same_dtype(c, 3, 4, "mean", "var")) {
        return -1;
    }
    const ir_type *x = ox_infer_in(c, 0);
    int spatial = c->node->opset < 9 ? (int)ir_attr_int(c->node, "spatial", 1) : 1;
    if (x->rank >= 0 && x->rank < 2)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "BatchNormalization: X must have rank >= 2, got %d", x->rank);
    int64_t ch = x->rank >= 2 ? x->dims[1] : -1;
    if (spatial) {
        for (int i = 1; i < 5; i++)
            if (check_vec(c, i, names[i], ch)) return -1;
    } else if (x->rank >= 0) {
        /* per-activation parameters: shape X.shape[1:] */
        for (int i = 1; i < 5; i++) {
            const ir_type *t = ox_infer_in(c, i);
            if (t->rank < 0) continue;
            int64_t n, want;
            if (ox_infer_numel_known(c, t->dims, t->rank, names[i], &n) != 0 ||
                ox_infer_numel_known(c, x->dims + 1, x->rank - 1, "X.shape[1:]", &want) != 0)
                return -1;
            if (n >= 0 && want >= 0 && n != want)
                return ox_infer_fail(
                    c, ox_infer_bad_code(c),
                    "BatchNormalization: %s has %lld values, expected %lld (spatial=0)", names[i],
                    (long long)n, (long long)want);
        }
    }
    if (ox_infer_set_output(c, 0, x->dtype, x->dims, x->rank)) return -1;
    int training = ox_batchnorm_training(c->node);
    const ir_type *mean = ox_infer_in(c, 3);
    for (int i = 1; i < c->n_outputs && i < 5; i++) {
        if (!ox_infer_out(c, i)) continue;
        if (!training && c->node->opset >= 14)
            return ox_infer_fail(c, ONYX_INVALID_MODEL,
                                 "BatchNormalization: outputs running_mean/running_var need training_mode=1");
        if (ox_infer_set_output(c, i, mean->dtype, mean->dims, mean->rank)) return -1;
    }
    return 0;
}

/* ---- InstanceNormalization ---- */

static int infer_instancenorm(ox_infer_ctx *c) {
    static const char *const names[3] = {"input", "scale", "B"};
    /* version 22 adds bfloat16 */
    int bf16 = ox_op_since_version(c->node->domain, "InstanceNormalization", c->node->opset) >= 22;
    for (int i = 0; i < 3; i++)
        if (ox_infer_need_tensor(c, i, names[i]) || ox_infer_check_float(c, i, names[i], bf16) ||
            (i && ox_infer_same_dtype(c, 0, i, "input", names[i])))
            return -1;
    const ir_type *x = ox_infer_in(c, 0);
    if (x->rank >= 0 && x->rank < 3)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "InstanceNormalization: input must have rank >= 3, got %d", x->rank);
    int64_t ch = x->rank >= 2 ? x->dims[1] : -1;
    if (check_vec(c, 1, "scale", ch) || check_vec(c, 2, "B", ch)) return -1;
    return ox_infer_set_output(c, 0, x->dtype, x->dims, x->rank);
}

/* ---- LayerNormalization ---- */

/* Scale/B must broadcast (numpy, one-way) to X.shape[axis:]. */
static int check_ln_param(ox_infer_ctx *c, int i, const char *what, const ir_type *x, int axis) {
    const ir_type *t = ox_infer_in(c, i);
    if (!t || t->rank < 0) return 0;
    int nr = x->rank - axis;
    if (t->rank > nr)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "LayerNormalization: %s has rank %d, more than the %d normalized axes",
                             what, t->rank, nr);
    for (int d = 0; d < t->rank; d++) {
        int64_t v = t->dims[d], w = x->dims[x->rank - t->rank + d];
        if (v >= 0 && w >= 0 && v != 1 && v != w)
            return ox_infer_fail(
                c, ox_infer_bad_code(c),
                "LayerNormalization: %s does not broadcast to the normalized shape", what);
    }
    return 0;
}

static int infer_layernorm(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "X") || ox_infer_need_tensor(c, 1, "Scale") ||
        ox_infer_check_float(c, 0, "X", 1) || ox_infer_same_dtype(c, 0, 1, "X", "Scale"))
        return -1;
    if (ox_infer_in(c, 2) &&
        (ox_infer_need_tensor(c, 2, "B") || ox_infer_same_dtype(c, 0, 2, "X", "B")))
        return -1;
    int64_t stash = ir_attr_int(c->node, "stash_type", 1);
    if (stash != ONYX_FLOAT32 && stash != ONYX_BFLOAT16 && stash != ONYX_FLOAT64 &&
        stash != ONYX_FLOAT16)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "LayerNormalization: unsupported stash_type %lld",
                             (long long)stash);
    const ir_type *x = ox_infer_in(c, 0);
    if (x->rank < 0) {
        if (ox_infer_set_output(c, 0, x->dtype, NULL, -1)) return -1;
        if (ox_infer_set_output(c, 1, (ox_dtype)stash, NULL, -1)) return -1;
        return ox_infer_set_output(c, 2, (ox_dtype)stash, NULL, -1);
    }
    int axis;
    if (ox_norm_axis(c, ir_attr_int(c->node, "axis", -1), x->rank, &axis)) return -1;
    if (check_ln_param(c, 1, "Scale", x, axis) || check_ln_param(c, 2, "B", x, axis)) return -1;
    if (ox_infer_set_output(c, 0, x->dtype, x->dims, x->rank)) return -1;
    int64_t sd[OX_MAX_RANK];
    for (int d = 0; d < x->rank; d++) sd[d] = d < axis ? x->dims[d] : 1;
    if (ox_infer_set_output(c, 1, (ox_dtype)stash, sd, x->rank)) return -1;
    return ox_infer_set_output(c, 2, (ox_dtype)stash, sd, x->rank);
}

/* ---- GroupNormalization ---- */

static int infer_groupnorm(ox_infer_ctx *c) {
    static const char *const names[3] = {"X", "scale", "bias"};
    for (int i = 0; i < 3; i++)
        if (ox_infer_need_tensor(c, i, names[i]) || ox_infer_check_float(c, i, names[i], 1) ||
            (i && ox_infer_same_dtype(c, 0, i, "X", names[i])))
            return -1;
    const ir_attr *ga = ir_node_attr(c->node, "num_groups");
    if (!ga || ga->type != IR_ATTR_INT || ga->i < 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "GroupNormalization: attribute 'num_groups' "
                                                    "is required and must be >= 1");
    int64_t stash = ir_attr_int(c->node, "stash_type", 1);
    if (stash != ONYX_FLOAT32 && stash != ONYX_BFLOAT16 && stash != ONYX_FLOAT64 &&
        stash != ONYX_FLOAT16)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "GroupNormalization: unsupported stash_type %" PRId64, stash);
    const ir_type *x = ox_infer_in(c, 0);
    if (x->rank >= 0 && x->rank < 2)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "GroupNormalization: X must have rank >= 2, got %d", x->rank);
    int64_t ch = x->rank >= 2 ? x->dims[1] : -1;
    if (ch >= 0 && ch % ga->i != 0)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "GroupNormalization: %" PRId64 " channels do not split into %" PRId64
                             " groups", ch, ga->i);
    /* version 18 took one scale/bias per group, version 21 one per channel */
    int per_channel =
        ox_op_since_version(c->node->domain, "GroupNormalization", c->node->opset) >= 21;
    int64_t want = per_channel ? ch : ga->i;
    if (check_vec(c, 1, "scale", want) || check_vec(c, 2, "bias", want)) return -1;
    return ox_infer_set_output(c, 0, x->dtype, x->dims, x->rank);
}

/* ---- RMSNormalization ---- */

static int infer_rmsnorm(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "X") || ox_infer_need_tensor(c, 1, "scale") ||
        ox_infer_check_float(c, 0, "X", 1) || ox_infer_check_float(c, 1, "scale", 1))
        return -1;
    int64_t stash = ir_attr_int(c->node, "stash_type", 1);
    if (stash != ONYX_FLOAT32 && stash != ONYX_BFLOAT16 && stash != ONYX_FLOAT64 &&
        stash != ONYX_FLOAT16)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "RMSNormalization: unsupported stash_type %" PRId64, stash);
    const ir_type *x = ox_infer_in(c, 0), *s = ox_infer_in(c, 1);
    /* The schema names Y's type V (the scale's), but ONNX's own shape
     * inference, function body and reference give Y X's type: models are
     * written against those, so Y follows X. */
    if (x->rank < 0) return ox_infer_set_output(c, 0, x->dtype, NULL, -1);
    int axis;
    if (ox_norm_axis(c, ir_attr_int(c->node, "axis", -1), x->rank, &axis)) return -1;
    /* scale broadcasts one way (numpy) to X */
    if (s->rank > x->rank)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "RMSNormalization: scale has rank %d, more than X's %d", s->rank,
                             x->rank);
    for (int d = 0; d < s->rank && s->rank >= 0; d++) {
        int64_t v = s->dims[d], w = x->dims[x->rank - s->rank + d];
        if (v >= 0 && w >= 0 && v != 1 && v != w)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "RMSNormalization: scale does not broadcast to X");
    }
    return ox_infer_set_output(c, 0, x->dtype, x->dims, x->rank);
}

/* ---- LpNormalization ---- */

static int infer_lpnorm(ox_infer_ctx *c) {
    /* version 22 adds bfloat16 */
    int bf16 = ox_op_since_version(c->node->domain, "LpNormalization", c->node->opset) >= 22;
    if (ox_infer_need_tensor(c, 0, "input") || ox_infer_check_float(c, 0, "input", bf16)) return -1;
    int64_t p = ir_attr_int(c->node, "p", 2);
    if (p != 1 && p != 2)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "LpNormalization: p must be 1 or 2, got %" PRId64, p);
    const ir_type *x = ox_infer_in(c, 0);
    if (x->rank >= 0) {
        int axis;
        if (x->rank == 0)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "LpNormalization: input must have rank >= 1");
        if (ox_norm_axis(c, ir_attr_int(c->node, "axis", -1), x->rank, &axis)) return -1;
    }
    return ox_infer_set_output(c, 0, x->dtype, x->dims, x->rank);
}

/* ---- LRN ---- */

static int infer_lrn(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "X") || ox_infer_check_float(c, 0, "X", 1)) return -1;
    const ir_attr *size = ir_node_attr(c->node, "size");
    if (!size || size->type != IR_ATTR_INT || size->i < 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "LRN: attribute 'size' is required and must be >= 1");
    const ir_type *x = ox_infer_in(c, 0);
    if (x->rank >= 0 && x->rank < 2)
        return ox_infer_fail(c, ox_infer_bad_code(c), "LRN: input must have rank >= 2, got %d",
                             x->rank);
    /* the kernel sums `size` squared terms for each element of a channel
     * plane; like ONNX Runtime, a size whose count overflows is refused */
    int64_t plane = x->rank >= 2 ? ox_infer_numel(x->dims + 2, x->rank - 2) : -1, terms;
    if (plane > 0 &&
        ox_infer_mul(c, ONYX_INVALID_MODEL, size->i, plane, &terms,
                     "size %lld times the %lld elements of a channel plane", (long long)size->i,
                     (long long)plane))
        return -1;
    return ox_infer_set_output(c, 0, x->dtype, x->dims, x->rank);
}

/* ---- MeanVarianceNormalization ---- */

static int infer_mvn(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "X") || ox_infer_check_float(c, 0, "X", 1)) return -1;
    const ir_type *x = ox_infer_in(c, 0);
    if (x->rank >= 0) {
        size_t n = 0;
        const int64_t *axes = ir_attr_ints(c->node, "axes", &n);
        for (size_t i = 0; i < n; i++) {
            int a;
            if (ox_norm_axis(c, axes[i], x->rank, &a)) return -1;
        }
        if (!axes && x->rank < 4)
            return ox_infer_fail(
                c, ox_infer_bad_code(c),
                "MeanVarianceNormalization: default axes [0,2,3] need rank >= 4, got %d", x->rank);
    }
    return ox_infer_set_output(c, 0, x->dtype, x->dims, x->rank);
}

static const ox_op_schema OPS[] = {
    {"", "BatchNormalization", 1, 17, 5, 5, 1, 5, infer_batchnorm},
    {"", "InstanceNormalization", 1, 22, 3, 3, 1, 1, infer_instancenorm},
    {"", "GroupNormalization", 18, 21, 3, 3, 1, 1, infer_groupnorm},
    {"", "RMSNormalization", 23, 23, 2, 2, 1, 1, infer_rmsnorm},
    {"", "LpNormalization", 1, 22, 1, 1, 1, 1, infer_lpnorm},
    {"", "LayerNormalization", 17, 17, 2, 3, 1, 3, infer_layernorm},
    {"", "LRN", 1, 17, 1, 1, 1, 1, infer_lrn},
    {"", "MeanVarianceNormalization", 9, 17, 1, 1, 1, 1, infer_mvn},
};

const ox_op_table ox_ops_normalization = {OPS, sizeof OPS / sizeof OPS[0]};
