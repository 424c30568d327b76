/* CPU kernels of the ai.onnx.ml operators. Attributes come from model
 * files and are checked here like inputs: every index into a node, leaf,
 * feature or class list is bounds-checked, and tree walks are bounded so
 * that a cyclic tree in a hostile model fails instead of hanging. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"

/* ---- ArrayFeatureExtractor ---- */

static int array_feature_extractor_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ctx->inputs[0], *y = ctx->inputs[1];
    ox_tensor *z = ctx->outputs[0];
    int64_t last = x->dims[x->rank - 1], n = ox_tensor_numel(y);
    int64_t rows = last ? ox_tensor_numel(x) / last : 0;
    const int64_t *idx = y->data;
    for (int64_t j = 0; j < n; j++)
        if (idx[j] < -last || idx[j] >= last)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "ArrayFeatureExtractor: index %lld is outside [%lld, %lld)",
                                  (long long)idx[j], (long long)-last, (long long)last);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < n; j++) {
            int64_t k = idx[j] < 0 ? idx[j] + last : idx[j];
            if (ox_cpu_copy_elems(ctx, z, r * n + j, x, r * last + k, 1)) return -1;
        }
    return 0;
}

/* ---- Binarizer ---- */

static int binarizer_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ctx->inputs[0];
    ox_tensor *y = ctx->outputs[0];
    double threshold = ir_attr_float(ctx->node, "threshold", 0.0f);
    int64_t n = ox_tensor_numel(x);
    for (int64_t i = 0; i < n; i++)
        ox_set_f64(y->data, y->dtype, (size_t)i,
                   ox_get_f64(x->data, x->dtype, (size_t)i) > threshold ? 1.0 : 0.0);
    return 0;
}

/* ---- LabelEncoder ---- */

/* One list of keys or values, from a *_strings/_int64s/_floats attribute
 * or a 1-D tensor attribute. */
typedef struct ml_list {
    ox_dtype dtype; /* ONYX_STRING, an integer type, or a float type */
    int64_t n;
    const char *const *strings;
    const int64_t *ints;
    const float *floats;
    const ox_tensor *t;
} ml_list;

static int find_list(const ir_node *n, const char *prefix, ml_list *l) {
    char name[64];
    memset(l, 0, sizeof *l);
    const ir_attr *a;
    snprintf(name, sizeof name, "%s_strings", prefix);
    if ((a = ir_node_attr(n, name))) {
        l->dtype = ONYX_STRING;
        l->n = (int64_t)a->n;
        l->strings = (const char *const *)a->strings;
        return 0;
    }
    snprintf(name, sizeof name, "%s_int64s", prefix);
    if ((a = ir_node_attr(n, name))) {
        l->dtype = ONYX_INT64;
        l->n = (int64_t)a->n;
        l->ints = a->ints;
        return 0;
    }
    snprintf(name, sizeof name, "%s_floats", prefix);
    if ((a = ir_node_attr(n, name))) {
        l->dtype = ONYX_FLOAT32;
        l->n = (int64_t)a->n;
        l->floats = a->floats;
        return 0;
    }
    snprintf(name, sizeof name, "%s_tensor", prefix);
    if ((a = ir_node_attr(n, name)) && a->t) {
        l->dtype = a->t->dtype;
        l->n = ox_tensor_numel(a->t);
        l->t = a->t;
        if (l->dtype == ONYX_STRING) l->strings = (const char *const *)a->t->data;
        return 0;
    }
    return -1;
}

static const char *list_string(const ml_list *l, int64_t i) { return l->strings[i]; }

static double list_f64(const ml_list *l, int64_t i) {
    if (l->ints) return (double)l->ints[i];
    if (l->floats) return (double)l->floats[i];
    return ox_get_f64(l->t->data, l->t->dtype, (size_t)i);
}

static int64_t list_i64(const ml_list *l, int64_t i) {
    if (l->ints) return l->ints[i];
    if (l->floats) return (int64_t)l->floats[i];
    return ox_get_i64(l->t->data, l->t->dtype, (size_t)i);
}

/* Whether input element i of x equals key k; float NaN keys match NaN. */
static int key_matches(const ox_tensor *x, int64_t i, const ml_list *keys, int64_t k) {
    if (x->dtype == ONYX_STRING)
        return keys->dtype == ONYX_STRING && strcmp(((char **)x->data)[i], list_string(keys, k)) == 0;
    if (keys->dtype == ONYX_STRING) return 0;
    if (ox_dtype_is_float(x->dtype) || ox_dtype_is_float(keys->dtype)) {
        double a = ox_get_f64(x->data, x->dtype, (size_t)i), b = list_f64(keys, k);
        return a == b || (isnan(a) && isnan(b));
    }
    return ox_get_i64(x->data, x->dtype, (size_t)i) == list_i64(keys, k);
}

/* Writes value j of `values` (or the default when j < 0) as element i. */
static int write_value(ox_kernel_ctx *ctx, ox_tensor *y, int64_t i, const ml_list *values,
                       int64_t j) {
    const ir_node *n = ctx->node;
    if (y->dtype == ONYX_STRING) {
        const char *s;
        const ir_attr *dt = ir_node_attr(n, "default_tensor");
        if (j >= 0)
            s = list_string(values, j);
        else if (dt && dt->t && dt->t->dtype == ONYX_STRING && ox_tensor_numel(dt->t) > 0)
            s = ((char **)dt->t->data)[0];
        else
            s = ir_attr_string(n, "default_string", "_Unused");
        return ox_cpu_str_assign(ctx, &((char **)y->data)[i], s);
    }
    if (j >= 0) {
        if (ox_dtype_is_float(y->dtype))
            ox_set_f64(y->data, y->dtype, (size_t)i, list_f64(values, j));
        else
            ox_set_i64(y->data, y->dtype, (size_t)i, list_i64(values, j));
        return 0;
    }
    const ir_attr *dt = ir_node_attr(n, "default_tensor");
    if (dt && dt->t && dt->t->dtype != ONYX_STRING && ox_tensor_numel(dt->t) > 0) {
        if (ox_dtype_is_float(y->dtype))
            ox_set_f64(y->data, y->dtype, (size_t)i, ox_get_f64(dt->t->data, dt->t->dtype, 0));
        else
            ox_set_i64(y->data, y->dtype, (size_t)i, ox_get_i64(dt->t->data, dt->t->dtype, 0));
    } else if (ox_dtype_is_float(y->dtype)) {
        ox_set_f64(y->data, y->dtype, (size_t)i, ir_attr_float(n, "default_float", -0.0f));
    } else {
        ox_set_i64(y->data, y->dtype, (size_t)i, ir_attr_int(n, "default_int64", -1));
    }
    return 0;
}

/* Version 1: strings to their index in classes_strings, or int64 indices
 * back to the class strings. */
static int label_encoder_v1(ox_kernel_ctx *ctx, const ir_attr *classes) {
    const ox_tensor *x = ctx->inputs[0];
    ox_tensor *y = ctx->outputs[0];
    int64_t n = ox_tensor_numel(x), nc = (int64_t)classes->n;
    for (int64_t i = 0; i < n; i++) {
        if (x->dtype == ONYX_STRING) {
            int64_t found = ir_attr_int(ctx->node, "default_int64", -1);
            for (int64_t k = 0; k < nc; k++)
                if (strcmp(((char **)x->data)[i], classes->strings[k]) == 0) found = k;
            ((int64_t *)y->data)[i] = found;
        } else {
            int64_t k = ox_get_i64(x->data, x->dtype, (size_t)i);
            const char *s = k >= 0 && k < nc ? classes->strings[k]
                                             : ir_attr_string(ctx->node, "default_string", "_Unused");
            if (ox_cpu_str_assign(ctx, &((char **)y->data)[i], s)) return -1;
        }
    }
    return 0;
}

/* Keys are searched from the last, so a repeated key maps to its last
 * value, as the spec says. O(elements x keys). */
static int label_encoder_compute(ox_kernel_ctx *ctx) {
    const ir_attr *classes = ir_node_attr(ctx->node, "classes_strings");
    if (classes) return label_encoder_v1(ctx, classes);
    ml_list keys, values;
    if (find_list(ctx->node, "keys", &keys) || find_list(ctx->node, "values", &values))
        return ox_kernel_fail(ctx, ONYX_INVALID_MODEL, "LabelEncoder: keys or values are missing");
    if (keys.n != values.n)
        return ox_kernel_fail(ctx, ONYX_INVALID_MODEL,
                              "LabelEncoder: %lld keys but %lld values", (long long)keys.n,
                              (long long)values.n);
    if ((values.dtype == ONYX_STRING) != (ctx->outputs[0]->dtype == ONYX_STRING))
        return ox_kernel_fail(ctx, ONYX_INVALID_MODEL, "LabelEncoder: values do not match the output type");
    const ox_tensor *x = ctx->inputs[0];
    int64_t n = ox_tensor_numel(x);
    for (int64_t i = 0; i < n; i++) {
        int64_t j = keys.n - 1;
        while (j >= 0 && !key_matches(x, i, &keys, j)) j--;
        if (write_value(ctx, ctx->outputs[0], i, &values, j)) return -1;
    }
    return 0;
}

/* ---- TreeEnsemble ---- */

enum { MODE_LEQ, MODE_LT, MODE_GTE, MODE_GT, MODE_EQ, MODE_NEQ, MODE_MEMBER };
enum { AGG_AVERAGE, AGG_SUM, AGG_MIN, AGG_MAX };
enum { POST_NONE, POST_SOFTMAX, POST_LOGISTIC, POST_SOFTMAX_ZERO, POST_PROBIT };

typedef struct tree_model {
    int64_t n_nodes, n_leaves, n_trees, n_targets;
    const int64_t *feature, *true_id, *false_id, *true_leaf, *false_leaf, *leaf_target, *roots;
    const int64_t *missing_true; /* may be NULL */
    const ox_tensor *splits, *modes, *weights, *members;
    int64_t *member_start; /* per node: first membership value, or -1 */
} tree_model;

static const int64_t *ints_of(const ir_node *n, const char *name, int64_t want, int64_t *count) {
    size_t c = 0;
    const int64_t *v = ir_attr_ints(n, name, &c);
    if (count) *count = (int64_t)c;
    return v && (want < 0 || (int64_t)c == want) ? v : NULL;
}

static const ox_tensor *tensor_of(const ir_node *n, const char *name, int64_t want) {
    const ir_attr *a = ir_node_attr(n, name);
    if (!a || !a->t || a->t->dtype == ONYX_STRING) return NULL;
    return want < 0 || ox_tensor_numel(a->t) == want ? a->t : NULL;
}

static int load_tree_model(ox_kernel_ctx *ctx, int64_t features, tree_model *m) {
    const ir_node *n = ctx->node;
    memset(m, 0, sizeof *m);
    m->n_targets = ir_attr_int(n, "n_targets", 0);
    m->feature = ints_of(n, "nodes_featureids", -1, &m->n_nodes);
    m->true_id = ints_of(n, "nodes_truenodeids", m->n_nodes, NULL);
    m->false_id = ints_of(n, "nodes_falsenodeids", m->n_nodes, NULL);
    m->true_leaf = ints_of(n, "nodes_trueleafs", m->n_nodes, NULL);
    m->false_leaf = ints_of(n, "nodes_falseleafs", m->n_nodes, NULL);
    m->leaf_target = ints_of(n, "leaf_targetids", -1, &m->n_leaves);
    m->roots = ints_of(n, "tree_roots", -1, &m->n_trees);
    m->missing_true = ints_of(n, "nodes_missing_value_tracks_true", m->n_nodes, NULL);
    m->splits = tensor_of(n, "nodes_splits", m->n_nodes);
    m->modes = tensor_of(n, "nodes_modes", m->n_nodes);
    m->weights = tensor_of(n, "leaf_weights", m->n_leaves);
    m->members = tensor_of(n, "membership_values", -1);
    if (!m->feature || !m->true_id || !m->false_id || !m->true_leaf || !m->false_leaf ||
        !m->leaf_target || !m->roots || !m->splits || !m->modes || !m->weights ||
        m->modes->dtype != ONYX_UINT8)
        return ox_kernel_fail(ctx, ONYX_INVALID_MODEL,
                              "TreeEnsemble: the nodes_*/leaf_* attributes are missing or differ "
                              "in length");
    const uint8_t *mode = m->modes->data;
    for (int64_t i = 0; i < m->n_nodes; i++) {
        if (mode[i] > MODE_MEMBER || m->feature[i] < 0 || m->feature[i] >= features)
            return ox_kernel_fail(ctx, ONYX_INVALID_MODEL,
                                  "TreeEnsemble: node %lld has mode %d or feature %lld out of range "
                                  "(%lld features)",
                                  (long long)i, mode[i], (long long)m->feature[i],
                                  (long long)features);
        int64_t t = m->true_id[i], f = m->false_id[i];
        int64_t tl = m->true_leaf[i] ? m->n_leaves : m->n_nodes;
        int64_t fl = m->false_leaf[i] ? m->n_leaves : m->n_nodes;
        if (t < 0 || t >= tl || f < 0 || f >= fl)
            return ox_kernel_fail(ctx, ONYX_INVALID_MODEL,
                                  "TreeEnsemble: node %lld branches to %lld/%lld, out of range",
                                  (long long)i, (long long)t, (long long)f);
    }
    for (int64_t i = 0; i < m->n_leaves; i++)
        if (m->leaf_target[i] < 0 || m->leaf_target[i] >= m->n_targets)
            return ox_kernel_fail(ctx, ONYX_INVALID_MODEL,
                                  "TreeEnsemble: leaf %lld targets %lld, outside [0, %lld)",
                                  (long long)i, (long long)m->leaf_target[i],
                                  (long long)m->n_targets);
    for (int64_t i = 0; i < m->n_trees; i++)
        if (m->roots[i] < 0 || m->roots[i] >= m->n_nodes)
            return ox_kernel_fail(ctx, ONYX_INVALID_MODEL, "TreeEnsemble: tree root %lld out of range",
                                  (long long)m->roots[i]);
    /* membership sets: consecutive runs of membership_values separated by
     * NaN, one per BRANCH_MEMBER node in node order */
    m->member_start = malloc(((size_t)m->n_nodes + 1) * sizeof *m->member_start);
    if (!m->member_start) return ox_cpu_oom(ctx);
    int64_t pos = 0, nm = m->members ? ox_tensor_numel(m->members) : 0;
    for (int64_t i = 0; i < m->n_nodes; i++) {
        m->member_start[i] = -1;
        if (mode[i] != MODE_MEMBER) continue;
        if (pos > nm)
            return ox_kernel_fail(ctx, ONYX_INVALID_MODEL,
                                  "TreeEnsemble: membership_values has too few sets");
        m->member_start[i] = pos;
        while (pos < nm && !isnan(ox_get_f64(m->members->data, m->members->dtype, (size_t)pos)))
            pos++;
        pos++; /* past the NaN */
    }
    return 0;
}

static int member_of(const tree_model *m, int64_t node, double v) {
    int64_t nm = ox_tensor_numel(m->members);
    for (int64_t p = m->member_start[node]; p < nm; p++) {
        double s = ox_get_f64(m->members->data, m->members->dtype, (size_t)p);
        if (isnan(s)) break;
        if (s == v) return 1;
    }
    return 0;
}

static int goes_true(const tree_model *m, int64_t node, double v) {
    if (isnan(v) && m->missing_true && m->missing_true[node]) return 1;
    double s = ox_get_f64(m->splits->data, m->splits->dtype, (size_t)node);
    switch (((const uint8_t *)m->modes->data)[node]) {
    case MODE_LEQ: return v <= s;
    case MODE_LT: return v < s;
    case MODE_GTE: return v >= s;
    case MODE_GT: return v > s;
    case MODE_EQ: return v == s;
    case MODE_NEQ: return v != s;
    default: return member_of(m, node, v);
    }
}

/* The leaf a row reaches from `root`, or -1 when the walk does not end
 * within n_nodes steps (a cycle). A root whose both branches name the
 * same leaf is a single-leaf tree. */
static int64_t walk(const tree_model *m, int64_t root, const ox_tensor *x, int64_t row, int64_t f) {
    int64_t node = root;
    for (int64_t steps = 0; steps <= m->n_nodes; steps++) {
        if (m->true_leaf[node] && m->false_leaf[node] && m->true_id[node] == m->false_id[node])
            return m->true_id[node];
        double v = ox_get_f64(x->data, x->dtype, (size_t)(row * f + m->feature[node]));
        int t = goes_true(m, node, v);
        int64_t next = t ? m->true_id[node] : m->false_id[node];
        if (t ? m->true_leaf[node] : m->false_leaf[node]) return next;
        node = next;
    }
    return -1;
}

static void post_transform(int kind, double *s, int64_t n) {
    if (kind == POST_LOGISTIC) {
        for (int64_t i = 0; i < n; i++) s[i] = 1.0 / (1.0 + exp(-s[i]));
    } else if (kind == POST_SOFTMAX || kind == POST_SOFTMAX_ZERO) {
        double mx = -INFINITY, sum = 0.0;
        for (int64_t i = 0; i < n; i++)
            if (!(kind == POST_SOFTMAX_ZERO && s[i] == 0.0) && s[i] > mx) mx = s[i];
        for (int64_t i = 0; i < n; i++) {
            if (kind == POST_SOFTMAX_ZERO && s[i] == 0.0) continue;
            s[i] = exp(s[i] - mx);
            sum += s[i];
        }
        for (int64_t i = 0; i < n; i++)
            if (!(kind == POST_SOFTMAX_ZERO && s[i] == 0.0)) s[i] /= sum;
    }
}

static int tree_ensemble_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ctx->inputs[0];
    ox_tensor *y = ctx->outputs[0];
    int64_t rows = x->dims[0], f = x->dims[1];
    int agg = (int)ir_attr_int(ctx->node, "aggregate_function", AGG_SUM);
    int post = (int)ir_attr_int(ctx->node, "post_transform", POST_NONE);
    if (agg < AGG_AVERAGE || agg > AGG_MAX)
        return ox_kernel_fail(ctx, ONYX_INVALID_MODEL, "TreeEnsemble: aggregate_function %d is unknown",
                              agg);
    if (post < POST_NONE || post > POST_SOFTMAX_ZERO)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED,
                              "TreeEnsemble: post_transform %d is not supported", post);
    tree_model m;
    int rc = load_tree_model(ctx, f, &m);
    double *acc = rc == 0 ? malloc(((size_t)m.n_targets + 1) * sizeof *acc) : NULL;
    if (rc == 0 && !acc) rc = ox_cpu_oom(ctx);
    for (int64_t r = 0; rc == 0 && r < rows; r++) {
        double init = agg == AGG_MIN ? INFINITY : agg == AGG_MAX ? -INFINITY : 0.0;
        for (int64_t t = 0; t < m.n_targets; t++) acc[t] = init;
        for (int64_t k = 0; k < m.n_trees; k++) {
            int64_t leaf = walk(&m, m.roots[k], x, r, f);
            if (leaf < 0) {
                rc = ox_kernel_fail(ctx, ONYX_INVALID_MODEL, "TreeEnsemble: tree %lld has a cycle",
                                    (long long)k);
                break;
            }
            double w = ox_get_f64(m.weights->data, m.weights->dtype, (size_t)leaf);
            double *a = &acc[m.leaf_target[leaf]];
            if (agg == AGG_MIN)
                *a = w < *a ? w : *a;
            else if (agg == AGG_MAX)
                *a = w > *a ? w : *a;
            else
                *a += w;
        }
        for (int64_t t = 0; t < m.n_targets; t++) {
            if (agg == AGG_AVERAGE && m.n_trees) acc[t] /= (double)m.n_trees;
            /* a target no leaf reached stays 0 */
            if (isinf(acc[t])) acc[t] = 0.0;
        }
        post_transform(post, acc, m.n_targets);
        for (int64_t t = 0; t < m.n_targets; t++)
            ox_set_f64(y->data, y->dtype, (size_t)(r * m.n_targets + t), acc[t]);
    }
    free(acc);
    free(m.member_start);
    return rc;
}

static const ox_kernel_def KERNELS[] = {
    {"ai.onnx.ml", "ArrayFeatureExtractor", 1, 1, array_feature_extractor_compute, NULL, NULL,
     NULL, NULL},
    {"ai.onnx.ml", "Binarizer", 1, 1, binarizer_compute, NULL, NULL, NULL, NULL},
    {"ai.onnx.ml", "LabelEncoder", 1, 4, label_encoder_compute, NULL, NULL, NULL, NULL},
    {"ai.onnx.ml", "TreeEnsemble", 5, 5, tree_ensemble_compute, NULL, NULL, NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_ml = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
