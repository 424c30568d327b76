/* Identity elimination: Identity, Dropout in inference, and a Cast to
 * the type its input already has forward their input unchanged;
 * consumers read the input directly. (Exported detectors cast float
 * tensors to float: Faster R-CNN copied its pooled regions, 0.2 ms a
 * run, for nothing.) */
#include <stdlib.h>
#include <string.h>

#include "optimizer/opt_util.h"
#include "optimizer/optimizer.h"

static int is_passthrough(const ir_graph *g, const ir_node *n) {
    if (n->domain[0] || n->n_inputs < 1 || n->inputs[0] < 0 || n->n_outputs < 1) return 0;
    if (strcmp(n->op_type, "Identity") == 0) return n->n_outputs == 1;
    if (strcmp(n->op_type, "Cast") == 0) {
        /* only a type that inference or the model established */
        const ir_value *x = &g->values[n->inputs[0]];
        return n->n_outputs == 1 && x->has_type && x->type.dtype != ONYX_UNDEFINED &&
               ir_attr_int(n, "to", ONYX_UNDEFINED) == (int64_t)x->type.dtype;
    }
    if (strcmp(n->op_type, "Dropout") != 0) return 0;
    /* The mask output, if requested, must be computed. */
    for (int k = 1; k < n->n_outputs; k++)
        if (n->outputs[k] >= 0) return 0;
    /* training_mode (opset 12+) must be absent or a constant false. */
    if (n->n_inputs > 2 && n->inputs[2] >= 0) {
        const ox_tensor *t = g->values[n->inputs[2]].init;
        if (!t || g->values[n->inputs[2]].is_input || ox_tensor_numel(t) != 1 ||
            ((const uint8_t *)t->data)[0] != 0)
            return 0;
    }
    return 1;
}

/* The value v stands for once removed Identities forward their inputs:
 * forward[v] is the input of the removed node that produced v, or -1.
 * Paths are shortened as they are followed, so chains of Identities cost
 * linear time overall. */
static int resolve(int *forward, int v) {
    int root = v;
    while (forward[root] >= 0) root = forward[root];
    while (forward[v] >= 0) {
        int next = forward[v];
        forward[v] = root;
        v = next;
    }
    return root;
}

static void resolve_inputs(ir_node *n, int *forward) {
    for (int k = 0; k < n->n_inputs; k++)
        if (n->inputs[k] >= 0) n->inputs[k] = resolve(forward, n->inputs[k]);
}

int ox_pass_eliminate_identity(ox_pass_ctx *ctx, ir_graph *g) {
    unsigned char *dead = calloc((size_t)g->n_nodes + 1, 1);
    int *forward = malloc(((size_t)g->n_values + 1) * sizeof *forward);
    /* graph outputs and values subgraph bodies read by name keep their
     * producers */
    unsigned char *pinned = ox_pinned_values(g);
    if (!dead || !forward || !pinned) {
        free(dead);
        free(forward);
        free(pinned);
        return ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    for (int v = 0; v < g->n_values; v++) forward[v] = -1;
    int changes = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        ir_node *n = &g->nodes[i];
        /* reads what earlier removals forward, as if rewritten at once */
        resolve_inputs(n, forward);
        if (!is_passthrough(g, n)) continue;
        int in = n->inputs[0], out = n->outputs[0];
        if (pinned[out] || in == out) continue;
        forward[out] = in;
        dead[i] = 1;
        changes++;
    }
    /* nodes before a removed Identity read its output too */
    for (int i = 0; changes && i < g->n_nodes; i++) resolve_inputs(&g->nodes[i], forward);
    int rc = changes && ir_graph_remove_nodes(g, dead) != 0
                 ? ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory")
                 : changes;
    free(dead);
    free(forward);
    free(pinned);
    return rc;
}
