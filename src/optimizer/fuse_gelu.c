/* Gelu pattern fusion (level ALL): the exact GELU as exporters before
 * ONNX 20 spell it out,
 *   y = (x * (Erf(x / sqrt 2) + 1)) * 0.5    or   (x * 0.5) * (Erf(x / sqrt 2) + 1)
 * (x / sqrt 2 also as x * (1 / sqrt 2); every product and sum in either
 * operand order), becomes one Gelu node: ONNX's Gelu when the model
 * imports opset 20 or later, else com.microsoft's Gelu (the same exact
 * function; onyx and ONNX Runtime both run it; only where every provider
 * of the session does, ox_pass_may_fuse). The MatMul fusion then
 * takes it as a FusedMatMul activation. Constants are matched to within a
 * float32 rounding; intermediate values with another reader, a name that
 * must stay or a subgraph reading them leave the pattern alone. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "optimizer/opt_util.h"
#include "optimizer/optimizer.h"

typedef struct ctx {
    const ir_graph *g;
    const ox_readers *r;
    const unsigned char *pinned;
} ctx;

static int is_op(const ir_node *n, const char *op) {
    return !n->domain[0] && strcmp(n->op_type, op) == 0 && n->n_outputs == 1 && n->outputs[0] >= 0;
}

/* The node that alone reads v, or -1. */
static int sole(const ctx *c, int v) {
    if (v < 0 || c->pinned[v] || c->r->count[v] != 1) return -1;
    int j = c->r->node[v];
    return c->g->nodes[j].n_implicit ? -1 : j;
}

static int near(float a, double b) { return fabs((double)a - b) <= 1e-6 * fabs(b); }

/* Whether value v is a float32 scalar constant close to want. */
static int is_const(const ctx *c, int v, double want) {
    const ox_tensor *t = ox_const_value(c->g, v);
    return t && t->dtype == ONYX_FLOAT32 && ox_tensor_numel(t) == 1 &&
           near(*(const float *)t->data, want);
}

/* For a binary node n reading v: its other input, or -1. */
static int other_input(const ir_node *n, int v) {
    if (n->n_inputs != 2) return -1;
    if (n->inputs[0] == v) return n->inputs[1];
    if (n->inputs[1] == v) return n->inputs[0];
    return -1;
}

/* Matches the pattern from its first node d (x / sqrt 2); fills the nodes
 * it spans (5) and returns its output value, or -1. */
static int match(const ctx *c, int d, int *nodes) {
    const ir_graph *g = c->g;
    const ir_node *dn = &g->nodes[d];
    if (dn->n_inputs != 2) return -1;
    int x = dn->inputs[0];
    if (!((is_op(dn, "Div") && is_const(c, dn->inputs[1], M_SQRT2)) ||
          (is_op(dn, "Mul") &&
           (is_const(c, dn->inputs[1], M_SQRT1_2) ||
            (is_const(c, dn->inputs[0], M_SQRT1_2) && (x = dn->inputs[1]) >= 0)))))
        return -1;
    int e = sole(c, dn->outputs[0]);
    if (e < 0 || !is_op(&g->nodes[e], "Erf")) return -1;
    int a = sole(c, g->nodes[e].outputs[0]);
    if (a < 0 || !is_op(&g->nodes[a], "Add") ||
        !is_const(c, other_input(&g->nodes[a], g->nodes[e].outputs[0]), 1.0))
        return -1;
    int m = sole(c, g->nodes[a].outputs[0]);
    if (m < 0 || !is_op(&g->nodes[m], "Mul")) return -1;
    int f = other_input(&g->nodes[m], g->nodes[a].outputs[0]);
    nodes[0] = d;
    nodes[1] = e;
    nodes[2] = a;
    nodes[3] = m;
    if (f == x) {
        /* (x * (1 + erf)) * 0.5 */
        int h = sole(c, g->nodes[m].outputs[0]);
        if (h < 0 || !is_op(&g->nodes[h], "Mul") ||
            !is_const(c, other_input(&g->nodes[h], g->nodes[m].outputs[0]), 0.5))
            return -1;
        nodes[4] = h;
        return g->nodes[h].outputs[0];
    }
    /* (x * 0.5) * (1 + erf) */
    int h = f >= 0 ? g->values[f].producer : -1;
    if (h < 0 || sole(c, f) != m || !is_op(&g->nodes[h], "Mul") ||
        other_input(&g->nodes[h], x) < 0 || !is_const(c, other_input(&g->nodes[h], x), 0.5))
        return -1;
    nodes[4] = h;
    return g->nodes[m].outputs[0];
}

int ox_pass_fuse_gelu(ox_pass_ctx *pc, ir_graph *g) {
    int any = 0;
    for (int i = 0; i < g->n_nodes && !any; i++) any = is_op(&g->nodes[i], "Erf");
    if (!any) return 0;
    int64_t opset = ir_model_opset(pc->model, "");
    int standard = opset >= 20;
    if (!standard && !ox_pass_may_fuse(pc, "com.microsoft", "Gelu")) return 0;
    ox_readers r;
    unsigned char *pinned, *dead;
    if (ox_match_state_init(g, &r, &pinned, &dead) != 0)
        return ox_fail(pc->err, ONYX_OUT_OF_MEMORY, "out of memory");
    ctx c = {g, &r, pinned};
    int changes = 0, rc = 0;
    for (int i = 0; i < g->n_nodes && rc == 0; i++) {
        int nodes[5];
        if (dead[i]) continue;
        int out = match(&c, i, nodes);
        if (out < 0) continue;
        int skip = 0;
        for (int k = 0; k < 5; k++) skip |= dead[nodes[k]];
        if (skip) continue;
        /* node i (the division) becomes the Gelu of x */
        ir_node *n = &g->nodes[i];
        int x = n->inputs[0];
        if (strcmp(n->op_type, "Mul") == 0 && is_const(&c, x, M_SQRT1_2)) x = n->inputs[1];
        if (ox_node_retype(n, "Gelu", standard ? "" : "com.microsoft", standard ? (int)opset : 1,
                           pc->err)) {
            rc = -1;
            break;
        }
        n->n_inputs = 1;
        n->inputs[0] = x;
        ox_node_set_output(g, i, 0, out);
        for (int k = 1; k < 5 && rc == 0; k++) rc = ox_merge_node(g, dead, i, nodes[k], pc->err);
        if (rc != 0) break;
        changes++;
    }
    if (rc == 0 && changes) {
        if (!standard && ox_model_import_domain(pc->model, "com.microsoft", 1, pc->err) != 0)
            rc = -1;
        else if (ir_graph_remove_nodes(g, dead) != 0)
            rc = ox_fail(pc->err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    ox_match_state_free(&r, pinned, dead);
    return rc == 0 ? changes : -1;
}
