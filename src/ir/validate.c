/* Structural validation of a loaded model. Every error names the graph,
 * node and value involved so a user can find it in a model viewer. */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/op_memo.h"
#include "ops/attr_table.h"
#include "ops/op.h"

static int defined_in_ancestor(const ir_graph *g, const char *name) {
    for (const ir_graph *p = g->parent; p; p = p->parent) {
        int v = ir_graph_find(p, name);
        if (v < 0) continue;
        const ir_value *val = &p->values[v];
        if (val->producer >= 0 || val->is_input || val->init || val->outer) return 1;
    }
    return 0;
}

static int is_defined(ir_graph *g, int v) {
    ir_value *val = &g->values[v];
    if (val->producer >= 0 || val->is_input || val->init || val->outer) return 1;
    if (defined_in_ancestor(g, val->name)) {
        val->outer = 1;
        return 1;
    }
    return 0;
}

/* Finds "name:" in the generated "a:1,b:7" list; returns the type code
 * or -1 when the attribute is unknown. */
static int schema_attr_type(const char *list, const char *name) {
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *colon = strchr(p, ':');
        if (!colon) break;
        if ((size_t)(colon - p) == n && strncmp(p, name, n) == 0) return atoi(colon + 1);
        const char *comma = strchr(colon, ',');
        if (!comma) break;
        p = comma + 1;
    }
    return -1;
}

static const char *attr_type_name(int t) {
    static const char *const NAMES[] = {"undefined", "float",   "int",     "string",
                                        "tensor",    "graph",   "floats",  "ints",
                                        "strings",   "tensors", "graphs",  "sparse_tensor",
                                        "sparse_tensors", "type_proto", "type_protos"};
    return t >= 0 && t < (int)(sizeof NAMES / sizeof NAMES[0]) ? NAMES[t] : "unknown";
}

/* A node's label for an error message, made only when one is written
 * (in the function's own label_buf): validation of a valid graph formats
 * nothing. */
#define LABEL ir_node_label(n, label_buf, sizeof label_buf)

static int check_attributes(const ir_node *n, const ox_attr_schema *s, ox_error *err) {
    char label_buf[300];
    if (n->domain[0] && strcmp(n->domain, "ai.onnx.ml") != 0) return 0;
    if (!s) return 0;
    for (int i = 0; i < n->n_attrs; i++) {
        const ir_attr *a = &n->attrs[i];
        int want = schema_attr_type(s->attrs, a->name);
        if (want < 0)
            return ox_fail(err, ONYX_INVALID_MODEL,
                           "%s: attribute '%s' is not defined for %s at opset %d", LABEL, a->name,
                           n->op_type, n->opset);
        if (want != (int)a->type)
            return ox_fail(err, ONYX_INVALID_MODEL,
                           "%s: attribute '%s' must be of type %s, the model gives %s", LABEL,
                           a->name, attr_type_name(want), attr_type_name((int)a->type));
    }
    return 0;
}

static int check_operator(const ir_graph *g, const ir_node *n, const ox_op_schema *s, ox_error *err) {
    char label_buf[300];
    if (n->opset < 0)
        return ox_fail(err, ONYX_INVALID_MODEL,
                       "%s in graph '%s': domain '%s' is not in the model's opset imports", LABEL,
                       g->name, n->domain[0] ? n->domain : "ai.onnx");
    if (!s) {
        const ox_op_schema *any = ox_op_find_any(n->domain, n->op_type);
        if (any)
            return ox_fail(err, ONYX_NOT_IMPLEMENTED,
                           "%s: onyx implements %s versions %d..%d; the model's opset %d uses "
                           "%s-%d",
                           LABEL, n->op_type, any->min_opset, any->max_opset, n->opset,
                           n->op_type, ox_op_since_version(n->domain, n->op_type, n->opset));
        if (ox_attr_schema_find(n->domain, n->op_type, n->opset))
            return ox_fail(err, ONYX_NOT_IMPLEMENTED,
                           "%s: operator %s (domain '%s', opset %d) is not implemented by onyx",
                           LABEL, n->op_type, n->domain[0] ? n->domain : "ai.onnx", n->opset);
        return ox_fail(err, ONYX_INVALID_MODEL,
                       "%s: unknown operator %s in domain '%s' (opset %d)", LABEL, n->op_type,
                       n->domain[0] ? n->domain : "ai.onnx", n->opset);
    }
    int nin = ir_node_input_count(n);
    if (nin < s->min_inputs || (s->max_inputs >= 0 && n->n_inputs > s->max_inputs))
        return ox_fail(err, ONYX_INVALID_MODEL, "%s: has %d inputs, %s takes %d..%d", LABEL,
                       n->n_inputs, n->op_type, s->min_inputs, s->max_inputs);
    int nout = n->n_outputs;
    if (nout < s->min_outputs || (s->max_outputs >= 0 && nout > s->max_outputs))
        return ox_fail(err, ONYX_INVALID_MODEL, "%s: has %d outputs, %s gives %d..%d", LABEL, nout,
                       n->op_type, s->min_outputs, s->max_outputs);
    for (int k = 0; k < s->min_inputs && k < n->n_inputs; k++)
        if (n->inputs[k] < 0)
            return ox_fail(err, ONYX_INVALID_MODEL, "%s: required input %d is empty", LABEL, k);
    return 0;
}

static int validate_graph(ir_op_memo *memo, ir_graph *g, ox_error *err) {
    char label_buf[300];
    for (int i = 0; i < g->n_nodes; i++) {
        ir_node *n = &g->nodes[i];
        ir_op_lookup found = ir_op_memo_get(memo, n);
        if (check_operator(g, n, found.op, err) != 0) return -1;
        if (check_attributes(n, found.attrs, err) != 0) return -1;
        for (int k = 0; k < n->n_inputs; k++) {
            int v = n->inputs[k];
            if (v >= 0 && !is_defined(g, v))
                return ox_fail(err, ONYX_INVALID_MODEL,
                               "%s in graph '%s': input '%s' is not produced by any node, graph "
                               "input or initializer",
                               LABEL, g->name, g->values[v].name);
        }
        for (int a = 0; a < n->n_attrs; a++) {
            ir_attr *at = &n->attrs[a];
            if (at->g && validate_graph(memo, at->g, err) != 0) return -1;
            for (size_t j = 0; at->graphs && j < at->n; j++)
                if (validate_graph(memo, at->graphs[j], err) != 0) return -1;
        }
    }
    for (int i = 0; i < g->n_outputs; i++) {
        int v = g->outputs[i];
        if (!is_defined(g, v))
            return ox_fail(err, ONYX_INVALID_MODEL,
                           "graph '%s': output '%s' is not produced by any node, input or "
                           "initializer",
                           g->name, g->values[v].name);
    }
    int *order = malloc(((size_t)g->n_nodes + 1) * sizeof *order);
    if (!order) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    int rc = ir_graph_toposort(g, order, err);
    free(order);
    return rc;
}

int ir_validate(ir_model *m, ox_error *err) {
    if (!m->graph) return ox_fail(err, ONYX_INVALID_MODEL, "model has no graph");
    ir_op_memo memo;
    if (ir_op_memo_init(&memo) != 0) {
        ir_op_memo_free(&memo);
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    int rc = validate_graph(&memo, m->graph, err);
    ir_op_memo_free(&memo);
    return rc;
}
