/* Schemas of the ai.onnx.ml operators (classic machine-learning models
 * converted to ONNX: feature extraction, encoders, tree ensembles). */
#include <string.h>

#include "ops/op.h"

/* ArrayFeatureExtractor: X[..., Y] with the indices flattened; a 1-D X
 * gives a [1, n] matrix (as the reference implementation and ONNX Runtime
 * do, though the spec text does not say). */
static int infer_array_feature_extractor(ox_infer_ctx *c) {
    static const ox_dtype T[] = {ONYX_FLOAT32, ONYX_FLOAT64, ONYX_INT64, ONYX_INT32,
                                 ONYX_STRING};
    static const ox_dtype I[] = {ONYX_INT64};
    if (ox_infer_need_tensor(c, 0, "X") || ox_infer_need_tensor(c, 1, "Y") ||
        ox_infer_check_dtype(c, 0, "X", T, 5) || ox_infer_check_dtype(c, 1, "Y", I, 1))
        return -1;
    const ir_type *x = ox_infer_in(c, 0), *y = ox_infer_in(c, 1);
    if (x->rank == 0)
        return ox_infer_fail(c, ox_infer_bad_code(c), "ArrayFeatureExtractor: X must not be a scalar");
    int64_t n = -1;
    if (y->rank >= 0 && ox_infer_numel_known(c, y->dims, y->rank, "Y", &n)) return -1;
    if (x->rank < 0) return ox_infer_set_output(c, 0, x->dtype, NULL, -1);
    int64_t dims[OX_MAX_RANK];
    int rank = x->rank;
    if (rank == 1) {
        dims[0] = 1;
        dims[1] = n;
        rank = 2;
    } else {
        memcpy(dims, x->dims, (size_t)rank * sizeof *dims);
        dims[rank - 1] = n;
    }
    return ox_infer_set_output(c, 0, x->dtype, dims, rank);
}

static int infer_binarizer(ox_infer_ctx *c) {
    static const ox_dtype T[] = {ONYX_FLOAT32, ONYX_FLOAT64, ONYX_INT64, ONYX_INT32};
    if (ox_infer_need_tensor(c, 0, "X") || ox_infer_check_dtype(c, 0, "X", T, 4)) return -1;
    return ox_infer_same_as_input(c, 0, 0);
}

/* LabelEncoder's output type is its values' type: values_strings,
 * values_int64s, values_floats (v2+) or values_tensor (v4); version 1
 * maps strings to int64 and back through classes_strings. */
static int infer_label_encoder(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "X")) return -1;
    const ir_type *x = ox_infer_in(c, 0);
    const ir_node *n = c->node;
    ox_dtype out;
    const ir_attr *vt = ir_node_attr(n, "values_tensor");
    int n_values = !!ir_node_attr(n, "values_strings") + !!ir_node_attr(n, "values_int64s") +
                   !!ir_node_attr(n, "values_floats") + !!vt;
    int n_keys = !!ir_node_attr(n, "keys_strings") + !!ir_node_attr(n, "keys_int64s") +
                 !!ir_node_attr(n, "keys_floats") + !!ir_node_attr(n, "keys_tensor");
    if (ir_node_attr(n, "classes_strings")) {
        out = x->dtype == ONYX_STRING ? ONYX_INT64 : ONYX_STRING;
    } else {
        if (n_values != 1 || n_keys != 1)
            return ox_infer_fail(c, ONYX_INVALID_MODEL,
                                 "LabelEncoder: exactly one keys_* and one values_* attribute must "
                                 "be set (got %d and %d)",
                                 n_keys, n_values);
        if (vt)
            out = vt->t ? vt->t->dtype : ONYX_UNDEFINED;
        else if (ir_node_attr(n, "values_strings"))
            out = ONYX_STRING;
        else if (ir_node_attr(n, "values_int64s"))
            out = ONYX_INT64;
        else
            out = ONYX_FLOAT32;
    }
    return ox_infer_set_output(c, 0, out, x->rank >= 0 ? x->dims : NULL, x->rank);
}

/* TreeEnsemble: X [N, F] -> Y [N, n_targets]. */
static int infer_tree_ensemble(ox_infer_ctx *c) {
    static const ox_dtype T[] = {ONYX_FLOAT32, ONYX_FLOAT64, ONYX_FLOAT16};
    if (ox_infer_need_tensor(c, 0, "X") || ox_infer_check_dtype(c, 0, "X", T, 3)) return -1;
    const ir_type *x = ox_infer_in(c, 0);
    int64_t targets = ir_attr_int(c->node, "n_targets", -1);
    if (targets < 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "TreeEnsemble: n_targets must be at least 1");
    if (x->rank >= 0 && x->rank != 2)
        return ox_infer_fail(c, ox_infer_bad_code(c), "TreeEnsemble: X must be 2-D [N, F], got rank %d",
                             x->rank);
    int64_t dims[2] = {x->rank == 2 ? x->dims[0] : -1, targets};
    return ox_infer_set_output(c, 0, x->dtype, dims, 2);
}

static const ox_op_schema OPS[] = {
    {"ai.onnx.ml", "ArrayFeatureExtractor", 1, 1, 2, 2, 1, 1, infer_array_feature_extractor},
    {"ai.onnx.ml", "Binarizer", 1, 1, 1, 1, 1, 1, infer_binarizer},
    {"ai.onnx.ml", "LabelEncoder", 1, 4, 1, 1, 1, 1, infer_label_encoder},
    {"ai.onnx.ml", "TreeEnsemble", 5, 5, 1, 1, 1, 1, infer_tree_ensemble},
};

const ox_op_table ox_ops_ml = {OPS, sizeof OPS / sizeof OPS[0]};
