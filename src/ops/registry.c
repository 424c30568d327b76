/* The operator schema registry: one table per family. */
#include <string.h>

#include "ops/attr_table.h"
#include "ops/op.h"

extern const ox_op_table ox_ops_elementwise;
extern const ox_op_table ox_ops_reduce;
extern const ox_op_table ox_ops_conv;
extern const ox_op_table ox_ops_linalg;
extern const ox_op_table ox_ops_pool;
extern const ox_op_table ox_ops_normalization;
extern const ox_op_table ox_ops_transform;
extern const ox_op_table ox_ops_index;
extern const ox_op_table ox_ops_image;
extern const ox_op_table ox_ops_recurrent;
extern const ox_op_table ox_ops_signal;
extern const ox_op_table ox_ops_quantize;
extern const ox_op_table ox_ops_loss;
extern const ox_op_table ox_ops_random;
extern const ox_op_table ox_ops_text;
extern const ox_op_table ox_ops_control;
extern const ox_op_table ox_ops_sequence;
extern const ox_op_table ox_ops_attention;
extern const ox_op_table ox_ops_ml;
extern const ox_op_table ox_ops_contrib;
extern const ox_op_table ox_ops_codec;
extern const ox_op_table ox_ops_cast;
extern const ox_op_table ox_ops_onyx_matmul;
extern const ox_op_table ox_ops_onyx_attention;

static const ox_op_table *const FAMILIES[] = {
    &ox_ops_elementwise, &ox_ops_reduce,        &ox_ops_conv,      &ox_ops_linalg,
    &ox_ops_pool,        &ox_ops_normalization, &ox_ops_transform, &ox_ops_index,
    &ox_ops_image,       &ox_ops_recurrent,     &ox_ops_signal,    &ox_ops_quantize,
    &ox_ops_loss,        &ox_ops_random,        &ox_ops_text,      &ox_ops_control,
    &ox_ops_sequence,    &ox_ops_attention,     &ox_ops_ml,        &ox_ops_contrib,
    &ox_ops_codec,       &ox_ops_cast,
    &ox_ops_onyx_matmul,
    &ox_ops_onyx_attention,
};

/* ONNX versions an operator, not an opset: Reshape-14 stays in force at
 * opsets 14..18 until Reshape-19 replaces it. Schemas and kernels state the
 * operator versions they implement (min_opset..max_opset), so a node is
 * matched by the version in force at its opset. Domains outside ONNX's
 * tables (com.microsoft, onyx) version by opset directly. */
int ox_op_since_version(const char *domain, const char *name, int opset) {
    const ox_attr_schema *s = ox_attr_schema_find(domain, name, opset);
    return s ? s->since_version : opset;
}

static const ox_op_schema *find(const char *domain, const char *name, int opset, int any) {
    if (!any) opset = ox_op_since_version(domain, name, opset);
    for (size_t f = 0; f < sizeof FAMILIES / sizeof FAMILIES[0]; f++)
        for (size_t i = 0; i < FAMILIES[f]->count; i++) {
            const ox_op_schema *s = &FAMILIES[f]->ops[i];
            /* the first letters differ for most entries: no call then */
            if (s->name[0] != name[0] || strcmp(s->name, name) != 0 || strcmp(s->domain, domain) != 0)
                continue;
            if (any || (opset >= s->min_opset && opset <= s->max_opset)) return s;
        }
    return NULL;
}

const ox_op_schema *ox_op_find(const char *domain, const char *name, int opset) {
    return find(domain, name, opset, 0);
}

const ox_op_schema *ox_op_find_any(const char *domain, const char *name) {
    return find(domain, name, 0, 1);
}

static int attr_key_cmp(const ox_attr_schema *s, const char *domain, const char *op) {
    int c = strcmp(s->domain, domain);
    return c ? c : strcmp(s->op, op);
}

/* Every node's lookups pass through here (validation, inference,
 * placement, kernel choice), so a million-node graph must not scan the
 * table per call: tools/gen/gen_op_attrs.py writes it sorted by (domain,
 * op, since_version) in byte order, which a binary search walks. */
const ox_attr_schema *ox_attr_schema_find(const char *domain, const char *op, int opset) {
    int lo = 0, hi = OX_ATTR_SCHEMA_COUNT;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (attr_key_cmp(&OX_ATTR_SCHEMAS[mid], domain, op) < 0) lo = mid + 1;
        else hi = mid;
    }
    const ox_attr_schema *best = NULL;
    for (int i = lo; i < OX_ATTR_SCHEMA_COUNT && attr_key_cmp(&OX_ATTR_SCHEMAS[i], domain, op) == 0; i++)
        if (OX_ATTR_SCHEMAS[i].since_version <= opset) best = &OX_ATTR_SCHEMAS[i];
    return best;
}
