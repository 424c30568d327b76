/* Constants nothing reads any more (inputs of folded nodes, say) are
 * freed: they would otherwise stay resident for the session's life. */
#include <stdlib.h>

#include "optimizer/optimizer.h"

int ox_pass_prune_constants(ox_pass_ctx *ctx, ir_graph *g) {
    unsigned char *used = calloc((size_t)g->n_values + 1, 1);
    if (!used) return ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) used[n->inputs[k]] = 1;
        for (int k = 0; k < n->n_implicit; k++) used[n->implicit[k]] = 1;
    }
    int changes = 0;
    for (int v = 0; v < g->n_values; v++) {
        ir_value *val = &g->values[v];
        if (!val->init || used[v] || val->is_input || val->is_output) continue;
        ox_tensor_free(val->init);
        val->init = NULL;
        changes++;
    }
    free(used);
    return changes;
}
