/* Constant folding: a node whose inputs are all constants is run once on
 * the CPU provider at load and replaced by its result. */
#include <stdlib.h>
#include <string.h>

#include "optimizer/optimizer.h"
#include "runtime/node_host.h"

/* Folded results above this size are left to run time: folding would
 * trade a cheap op for a large resident tensor, and at load no session
 * memory limit applies (a few bytes of model could ask for gigabytes).
 * The host run refuses such outputs before allocating them. */
#define MAX_FOLDED_BYTES ((size_t)64 << 20)

static int is_nondeterministic(const ir_node *n) {
    static const char *const OPS[] = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                      "RandomUniformLike", "Bernoulli", "Multinomial"};
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
        if (strcmp(n->op_type, OPS[i]) == 0) return 1;
    return 0;
}

static int foldable(const ir_graph *g, const ir_node *n) {
    if (n->domain[0] || is_nondeterministic(n) || n->n_outputs == 0) return 0;
    for (int a = 0; a < n->n_attrs; a++)
        if (n->attrs[a].g || n->attrs[a].graphs) return 0;
    for (int k = 0; k < n->n_inputs; k++) {
        int v = n->inputs[k];
        if (v < 0) continue;
        const ir_value *val = &g->values[v];
        if (!val->init || val->is_input || val->init->kind != OX_KIND_TENSOR) return 0;
    }
    return 1;
}

/* A Constant node with a tensor `value` hands that tensor over as is:
 * for models that keep their weights in Constant nodes, running the
 * kernel would copy every weight once more. */
static int take_constant_value(ir_node *n, ox_tensor **out) {
    if (strcmp(n->op_type, "Constant") != 0 || n->domain[0] || n->n_outputs != 1 || n->outputs[0] < 0)
        return 0;
    for (int a = 0; a < n->n_attrs; a++)
        if (strcmp(n->attrs[a].name, "value") == 0 && n->attrs[a].t) {
            *out = n->attrs[a].t;
            n->attrs[a].t = NULL;
            return 1;
        }
    return 0;
}

int ox_pass_fold_constants(ox_pass_ctx *ctx, ir_graph *g) {
    int changes = 0;
    unsigned char *dead = calloc((size_t)g->n_nodes + 1, 1);
    int *order = malloc(((size_t)g->n_nodes + 1) * sizeof *order);
    /* argument arrays for the widest node: nodes have no cap on their inputs */
    size_t widest = (size_t)ir_graph_max_io(g) + 1;
    ox_tensor **ins = calloc(widest, sizeof *ins), **outs = calloc(widest, sizeof *outs);
    if (!dead || !order || !ins || !outs) {
        free(dead);
        free(order);
        free(ins);
        free(outs);
        return ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    if (ir_graph_toposort(g, order, ctx->err) != 0) {
        free(dead);
        free(order);
        free(ins);
        free(outs);
        return -1;
    }
    for (int oi = 0; oi < g->n_nodes; oi++) {
        int i = order[oi];
        ir_node *n = &g->nodes[i];
        if (!foldable(g, n)) continue;
        if (take_constant_value(n, outs)) {
            ir_value_set_constant(g, n->outputs[0], outs[0]);
            dead[i] = 1;
            changes++;
            continue;
        }
        for (int k = 0; k < n->n_inputs; k++) ins[k] = n->inputs[k] >= 0 ? g->values[n->inputs[k]].init : NULL;
        ox_error local = {0};
        /* A node that fails here is left in place so the error surfaces,
         * with its context, when the model runs. */
        if (ox_run_node_on_host(ctx->cpu, n, ins, n->n_inputs, outs, n->n_outputs, MAX_FOLDED_BYTES,
                                ctx->pool, &local) != 0)
            continue;
        size_t bytes = 0;
        int ok = 1;
        for (int k = 0; k < n->n_outputs; k++) {
            if (n->outputs[k] < 0) continue;
            if (!outs[k] || outs[k]->kind != OX_KIND_TENSOR) ok = 0;
            else bytes += outs[k]->nbytes;
        }
        if (!ok || bytes > MAX_FOLDED_BYTES) {
            for (int k = 0; k < n->n_outputs; k++) ox_tensor_free(outs[k]);
            continue;
        }
        for (int k = 0; k < n->n_outputs; k++) {
            if (n->outputs[k] < 0)
                ox_tensor_free(outs[k]);
            else
                ir_value_set_constant(g, n->outputs[k], outs[k]);
        }
        dead[i] = 1;
        changes++;
    }
    int rc = changes && ir_graph_remove_nodes(g, dead) != 0
                 ? ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory")
                 : changes;
    free(dead);
    free(order);
    free(ins);
    free(outs);
    return rc;
}
