/* Data-movement pairs (level BASIC), all exact:
 *   Transpose(Transpose(x, p), q)   -> Transpose(x, p then q), or x itself
 *                                      when that is the identity
 *   Reshape(Reshape(x, s), t)       -> Reshape(x, t) when t is a constant
 *                                      without 0 entries (a 0 copies a
 *                                      dimension of Reshape's own input,
 *                                      which the rewrite would change)
 *   Unsqueeze(Squeeze(x, a), a) and Squeeze(Unsqueeze(x, a), a)
 *                                   -> x, with constant axes given the
 *                                      same way (attribute before opset
 *                                      13, input from 13) and of one sign,
 *                                      the Squeeze's axes given explicitly
 * The outer node reads x directly; the inner one goes with dead-code
 * elimination once nobody else reads it. A node whose output must keep
 * its name (graph output, subgraph capture) is not replaced by x. */
#include <stdlib.h>
#include <string.h>

#include "optimizer/opt_util.h"
#include "optimizer/optimizer.h"

static int is_op(const ir_node *n, const char *op) {
    return !n->domain[0] && strcmp(n->op_type, op) == 0 && n->n_outputs == 1 &&
           n->outputs[0] >= 0 && n->n_inputs >= 1 && n->inputs[0] >= 0;
}

/* The node producing input 0 of n when it is an op of that type, or -1. */
static int inner(const ir_graph *g, const ir_node *n, const char *op) {
    int p = g->values[n->inputs[0]].producer;
    return p >= 0 && is_op(&g->nodes[p], op) ? p : -1;
}

/* Squeeze/Unsqueeze axes: attribute before opset 13, constant input from
 * 13; -1 when absent or not constant. */
static int axes_of(const ir_graph *g, const ir_node *n, int64_t *out, int max) {
    if (n->opset < 13) {
        size_t cnt = 0;
        const int64_t *a = ir_attr_ints(n, "axes", &cnt);
        if (!a || cnt > (size_t)max) return -1;
        memcpy(out, a, cnt * sizeof *a);
        return (int)cnt;
    }
    if (!ir_node_has_input(n, 1)) return -1;
    const ox_tensor *t = ox_const_value(g, n->inputs[1]);
    if (!t || t->dtype != ONYX_INT64 || t->rank > 1 || ox_tensor_numel(t) > max) return -1;
    int cnt = (int)ox_tensor_numel(t);
    memcpy(out, t->data, (size_t)cnt * sizeof *out);
    return cnt;
}

static int same_axes(const ir_graph *g, const ir_node *a, const ir_node *b) {
    int64_t x[OX_MAX_RANK], y[OX_MAX_RANK];
    int nx = axes_of(g, a, x, OX_MAX_RANK), ny = axes_of(g, b, y, OX_MAX_RANK);
    if (nx <= 0 || nx != ny) return 0;
    for (int i = 0; i < nx; i++)
        if (x[i] != y[i] || (x[i] < 0) != (x[0] < 0)) return 0;
    return 1;
}

int ox_pass_cancel_transforms(ox_pass_ctx *ctx, ir_graph *g) {
    unsigned char *pinned = ox_pinned_values(g);
    int *forward = malloc(((size_t)g->n_values + 1) * sizeof *forward);
    if (!pinned || !forward) {
        free(pinned);
        free(forward);
        return ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    for (int v = 0; v < g->n_values; v++) forward[v] = -1;
    int changes = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        ir_node *n = &g->nodes[i];
        int j;
        if (is_op(n, "Transpose") && (j = inner(g, n, "Transpose")) >= 0) {
            size_t np = 0, nq = 0;
            const int64_t *p = ir_attr_ints(&g->nodes[j], "perm", &np),
                          *q = ir_attr_ints(n, "perm", &nq);
            if (!p || !q || np != nq || np > OX_MAX_RANK) continue;
            int64_t r[OX_MAX_RANK];
            int identity = 1, ok = 1;
            for (size_t k = 0; k < nq && ok; k++) {
                ok = q[k] >= 0 && (size_t)q[k] < np;
                r[k] = ok ? p[q[k]] : 0;
                identity &= r[k] == (int64_t)k;
            }
            if (!ok) continue;
            int x = g->nodes[j].inputs[0];
            if (identity && !pinned[n->outputs[0]]) {
                forward[n->outputs[0]] = x;
            } else {
                const ir_attr *a = ir_node_attr(n, "perm");
                memcpy(a->ints, r, nq * sizeof *r);
                n->inputs[0] = x;
            }
            changes++;
        } else if (is_op(n, "Reshape") && n->n_inputs == 2 && (j = inner(g, n, "Reshape")) >= 0) {
            const ox_tensor *t = ox_const_value(g, n->inputs[1]);
            if (!t || t->dtype != ONYX_INT64) continue;
            int zero = 0;
            for (int64_t k = 0; k < ox_tensor_numel(t); k++)
                zero |= ((const int64_t *)t->data)[k] == 0;
            if (zero && !ir_attr_int(n, "allowzero", 0)) continue;
            n->inputs[0] = g->nodes[j].inputs[0];
            changes++;
        } else if ((is_op(n, "Unsqueeze") && (j = inner(g, n, "Squeeze")) >= 0) ||
                   (is_op(n, "Squeeze") && (j = inner(g, n, "Unsqueeze")) >= 0)) {
            if (pinned[n->outputs[0]] || !same_axes(g, n, &g->nodes[j])) continue;
            forward[n->outputs[0]] = g->nodes[j].inputs[0];
            changes++;
        }
    }
    if (changes) ox_forward_apply(g, forward);
    free(pinned);
    free(forward);
    return changes;
}
