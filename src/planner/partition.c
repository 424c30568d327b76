/* Node placement: each node goes to the highest-priority provider that
 * supports it with its input types. The CPU provider is always last and
 * is the reference, so an unsupported node falls back to it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/plan.h"

static void describe_inputs(const ir_graph *g, const ir_node *n, char *buf, size_t size) {
    size_t off = 0;
    buf[0] = '\0';
    for (int k = 0; k < n->n_inputs && off + 1 < size; k++) {
        int v = n->inputs[k];
        const char *t = v < 0 ? "-" : ox_dtype_name(g->values[v].type.dtype);
        off += (size_t)snprintf(buf + off, size - off, "%s%s", k ? ", " : "", t);
    }
}

static int place_nodes(ir_graph *g, ox_ep *const *eps, int n_eps, const ir_type **types,
                       ox_error *err);

int ox_partition(ir_graph *g, ox_ep *const *eps, int n_eps, ox_error *err) {
    /* one buffer for the widest node: nodes have no cap on their inputs */
    const ir_type **types = calloc((size_t)ir_graph_max_inputs(g) + 1, sizeof *types);
    if (!types) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    int rc = place_nodes(g, eps, n_eps, types, err);
    free(types);
    return rc;
}

static int place_nodes(ir_graph *g, ox_ep *const *eps, int n_eps, const ir_type **types,
                       ox_error *err) {
    for (int i = 0; i < g->n_nodes; i++) {
        ir_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++)
            types[k] = n->inputs[k] >= 0 ? &g->values[n->inputs[k]].type : NULL;
        n->ep = -1;
        for (int e = 0; e < n_eps && n->ep < 0; e++)
            if (eps[e]->ops->supports(eps[e], n, types, n->n_inputs)) n->ep = e;
        if (n->ep < 0) {
            char label[300], ins[512];
            ir_node_label(n, label, sizeof label);
            describe_inputs(g, n, ins, sizeof ins);
            return ox_fail(err, ONYX_NOT_IMPLEMENTED,
                           "%s: no execution provider supports %s (opset %d) with input types (%s)",
                           label, n->op_type, n->opset, ins);
        }
    }
    return 0;
}
