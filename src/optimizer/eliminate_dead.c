/* Dead-code elimination (level BASIC): a node none of whose outputs is
 * read by another node, captured by a subgraph body or a graph output is
 * removed; so, in the same sweep, are the nodes that only it read. ONNX
 * operators have no side effects, so nothing else can observe such a
 * node (random operators included: an unread sample changes nothing).
 * A node with at least one read output stays whole, its unread optional
 * outputs included. */
#include <stdlib.h>

#include "optimizer/opt_util.h"
#include "optimizer/optimizer.h"

int ox_pass_eliminate_dead(ox_pass_ctx *ctx, ir_graph *g) {
    ox_readers r = {0};
    int *order = malloc(((size_t)g->n_nodes + 1) * sizeof *order);
    unsigned char *dead = calloc((size_t)g->n_nodes + 1, 1);
    if (!order || !dead || ox_readers_init(&r, g) != 0) {
        free(order);
        free(dead);
        ox_readers_free(&r);
        return ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    int rc = ir_graph_toposort(g, order, ctx->err);
    int changes = 0;
    /* consumers before producers: a removed node releases its inputs'
     * readers, so whole unread chains go in one sweep */
    for (int oi = g->n_nodes - 1; rc == 0 && oi >= 0; oi--) {
        int i = order[oi];
        const ir_node *n = &g->nodes[i];
        int live = 0;
        for (int k = 0; k < n->n_outputs && !live; k++) {
            int v = n->outputs[k];
            live = v >= 0 && (r.count[v] > 0 || g->values[v].is_output);
        }
        if (live) continue;
        dead[i] = 1;
        changes++;
        for (int k = 0; k < n->n_inputs + n->n_implicit; k++) {
            int v = k < n->n_inputs ? n->inputs[k] : n->implicit[k - n->n_inputs];
            if (v >= 0) r.count[v]--;
        }
    }
    if (rc == 0 && changes && ir_graph_remove_nodes(g, dead) != 0)
        rc = ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    free(order);
    free(dead);
    ox_readers_free(&r);
    return rc == 0 ? changes : -1;
}
