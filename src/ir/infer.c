/* Static type and shape inference over a graph, driven by the operator
 * schemas' inference functions. Constants (initializers and Constant
 * nodes) are visible to inference so shape chains resolve at load. */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/op_memo.h"
#include "ops/op.h"

/* The model's declared facts are kept where inference knows less. */
static int merge_type(ir_value *v, const ir_type *inferred, const ir_node *n, ox_error *err) {
    if (!v->has_type) {
        ir_type_copy(&v->type, inferred);
        v->has_type = 1;
        return 0;
    }
    ir_type *t = &v->type;
    if (t->dtype != ONYX_UNDEFINED && inferred->dtype != ONYX_UNDEFINED &&
        t->dtype != inferred->dtype && t->kind == inferred->kind) {
        char label[300];
        return ox_fail(err, ONYX_INVALID_MODEL,
                       "%s: output '%s' is declared %s but the operator produces %s",
                       ir_node_label(n, label, sizeof label), v->name, ox_dtype_name(t->dtype),
                       ox_dtype_name(inferred->dtype));
    }
    if (t->dtype == ONYX_UNDEFINED) t->dtype = inferred->dtype;
    if (inferred->rank >= 0) {
        if (t->rank != inferred->rank) {
            ir_type_clear(t);
            t->rank = inferred->rank;
            for (int i = 0; i < t->rank; i++) t->dims[i] = inferred->dims[i];
        } else {
            /* a dimension inference pins down no longer needs its name */
            for (int i = 0; i < t->rank; i++)
                if (inferred->dims[i] >= 0) {
                    t->dims[i] = inferred->dims[i];
                    free(t->dim_params[i]);
                    t->dim_params[i] = NULL;
                }
        }
    }
    return 0;
}

int ir_infer_shapes(ir_graph *g, ox_error *err) {
    int rc = -1;
    int *order = malloc(((size_t)g->n_nodes + 1) * sizeof *order);
    const ox_tensor **known = calloc((size_t)g->n_values + 1, sizeof *known);
    /* argument arrays for the widest node: nodes have no cap on their inputs */
    size_t widest = (size_t)ir_graph_max_io(g) + 1;
    const ir_type **in_types = calloc(widest, sizeof *in_types);
    const ox_tensor **in_vals = calloc(widest, sizeof *in_vals);
    ir_type *unknown_in = calloc(widest, sizeof *unknown_in);
    ir_type *outs = calloc(widest, sizeof *outs);
    ir_op_memo memo;
    int memo_ok = ir_op_memo_init(&memo) == 0;
    if (!order || !known || !in_types || !in_vals || !unknown_in || !outs || !memo_ok) {
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    if (ir_graph_toposort(g, order, err) != 0) goto done;
    for (int v = 0; v < g->n_values; v++)
        if (g->values[v].init && !g->values[v].is_input) known[v] = g->values[v].init;
    for (int oi = 0; oi < g->n_nodes; oi++) {
        ir_node *n = &g->nodes[order[oi]];
        const ox_op_schema *s = ir_op_memo_get(&memo, n).op;
        if (!s || !s->infer) continue;
        for (int k = 0; k < n->n_inputs; k++) {
            int v = n->inputs[k];
            in_types[k] = NULL;
            in_vals[k] = NULL;
            if (v < 0) continue;
            memset(&unknown_in[k], 0, sizeof unknown_in[k]);
            unknown_in[k].rank = -1;
            in_types[k] = g->values[v].has_type ? &g->values[v].type : &unknown_in[k];
            in_vals[k] = known[v];
        }
        memset(outs, 0, (size_t)n->n_outputs * sizeof *outs);
        for (int k = 0; k < n->n_outputs; k++) outs[k].rank = -1;
        ox_infer_ctx c = {.node = n, .n_inputs = n->n_inputs, .inputs = in_types,
                          .values = in_vals, .n_outputs = n->n_outputs, .outputs = outs,
                          .err = err};
        if (s->infer(&c) != 0) {
            char label[300]; /* made only here: most graphs never fail */
            ox_error_prefix(err, "%s", ir_node_label(n, label, sizeof label));
            goto done;
        }
        for (int k = 0; k < n->n_outputs; k++) {
            int v = n->outputs[k];
            if (v < 0) continue;
            if (merge_type(&g->values[v], &outs[k], n, err) != 0) goto done;
        }
        if (strcmp(n->op_type, "Constant") == 0 && n->domain[0] == '\0' && n->n_outputs == 1 &&
            n->outputs[0] >= 0) {
            const ir_attr *a = ir_node_attr(n, "value");
            if (a && a->t) known[n->outputs[0]] = a->t;
        }
    }
    rc = 0;
done:
    ir_op_memo_free(&memo);
    free(order);
    free(known);
    free(in_types);
    free(in_vals);
    free(unknown_in);
    free(outs);
    return rc;
}
