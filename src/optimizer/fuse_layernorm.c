/* LayerNormalization pattern fusion (level ALL): the normalization over
 * the last axis as exporters before opset 17 write it out,
 *   m = ReduceMean(x, [-1]);  d = x - m;  v = ReduceMean(d^2, [-1])
 *   y = d / Sqrt(v + eps) * gamma + beta        (beta optional)
 * (d^2 as Pow(d, 2) or d * d; the axis as -1 or rank - 1) becomes one
 * LayerNormalization(x, gamma, beta, axis = -1, epsilon = eps). Below
 * opset 17 it is the ONNX-domain LayerNormalization that ONNX Runtime
 * registers for opsets 1..16 with the same semantics (src/ops/contrib.c),
 * which onyx runs with its opset-17 kernel. gamma and beta must be float32
 * constants of the last dimension's size; every intermediate value must
 * have no other reader and no name to keep. */
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

static int sole(const ctx *c, int v) { return ox_sole_reader(c->g, c->r, c->pinned, v); }

/* Matches from the first ReduceMean (node i); fills nodes[0..*count) and
 * the parameters; returns the output value or -1. */
static int match(const ctx *c, int i, int *nodes, int *count, int *gamma, int *beta, float *eps) {
    const ir_graph *g = c->g;
    const ir_node *m = &g->nodes[i];
    if (!ox_is_op_chain(m, "ReduceMean")) return -1;
    int x = m->inputs[0];
    const ir_value *xv = &g->values[x];
    int rank = xv->has_type ? xv->type.rank : -1;
    if (rank < 1 || xv->type.dtype != ONYX_FLOAT32 || !ox_mean_over_last_axis(c->g, m, rank)) return -1;
    int64_t h = xv->type.dims[rank - 1];
    if (h <= 0) return -1;
    int n = 0;
    nodes[n++] = i;
    int s = sole(c, m->outputs[0]);
    if (s < 0 || !ox_is_op_chain(&g->nodes[s], "Sub") || g->nodes[s].inputs[0] != x ||
        g->nodes[s].n_inputs != 2)
        return -1;
    nodes[n++] = s;
    int d = g->nodes[s].outputs[0];
    /* d's readers: the square (Pow(d, 2), or Mul(d, d) reading it twice)
     * and the division */
    if (d < 0 || c->pinned[d] || c->r->count[d] < 2 || c->r->count[d] > 3) return -1;
    int sq = -1, div = -1;
    for (int j = 0; j < g->n_nodes; j++) {
        const ir_node *nd = &g->nodes[j];
        int reads = 0;
        for (int k = 0; k < nd->n_inputs; k++) reads += nd->inputs[k] == d;
        if (!reads) continue;
        if (ox_is_op_chain(nd, "Div") && nd->inputs[0] == d && reads == 1)
            div = j;
        else if (ox_is_op_chain(nd, "Mul") && reads == 2)
            sq = j;
        else if (ox_is_op_chain(nd, "Pow") && reads == 1 && nd->inputs[0] == d) {
            const ox_tensor *e = ox_const_scalar_f32(c->g, nd->inputs[1]);
            if (e && *(const float *)e->data == 2.0f) sq = j;
        }
    }
    if (sq < 0 || div < 0 || c->r->count[d] != (ox_is_op_chain(&g->nodes[sq], "Mul") ? 3 : 2)) return -1;
    nodes[n++] = sq;
    int v = sole(c, g->nodes[sq].outputs[0]);
    if (v < 0 || !ox_mean_over_last_axis(c->g, &g->nodes[v], rank)) return -1;
    nodes[n++] = v;
    int ae = sole(c, g->nodes[v].outputs[0]);
    if (ae < 0 || !ox_is_op_chain(&g->nodes[ae], "Add")) return -1;
    const ox_tensor *et = ox_const_scalar_f32(c->g, ox_other_input(&g->nodes[ae], g->nodes[v].outputs[0]));
    if (!et) return -1;
    *eps = *(const float *)et->data;
    nodes[n++] = ae;
    int sr = sole(c, g->nodes[ae].outputs[0]);
    if (sr < 0 || !ox_is_op_chain(&g->nodes[sr], "Sqrt")) return -1;
    nodes[n++] = sr;
    if (sole(c, g->nodes[sr].outputs[0]) != div ||
        g->nodes[div].inputs[1] != g->nodes[sr].outputs[0])
        return -1;
    nodes[n++] = div;
    int mg = sole(c, g->nodes[div].outputs[0]);
    if (mg < 0 || !ox_is_op_chain(&g->nodes[mg], "Mul")) return -1;
    *gamma = ox_other_input(&g->nodes[mg], g->nodes[div].outputs[0]);
    const ox_tensor *gt = ox_const_value(g, *gamma);
    if (!gt || gt->dtype != ONYX_FLOAT32 || gt->rank != 1 || gt->dims[0] != h) return -1;
    nodes[n++] = mg;
    int out = g->nodes[mg].outputs[0];
    *beta = -1;
    int ab = sole(c, out);
    if (ab >= 0 && ox_is_op_chain(&g->nodes[ab], "Add")) {
        int b = ox_other_input(&g->nodes[ab], out);
        const ox_tensor *bt = ox_const_value(g, b);
        if (bt && bt->dtype == ONYX_FLOAT32 && bt->rank == 1 && bt->dims[0] == h) {
            *beta = b;
            nodes[n++] = ab;
            out = g->nodes[ab].outputs[0];
        }
    }
    *count = n;
    return out;
}

int ox_pass_fuse_layernorm(ox_pass_ctx *pc, ir_graph *g) {
    int any = 0;
    for (int i = 0; i < g->n_nodes && !any; i++) any = ox_is_op_chain(&g->nodes[i], "ReduceMean");
    if (!any || ox_infer_quietly(g) != 0) return 0;
    int64_t opset = ir_model_opset(pc->model, "");
    ox_readers r;
    unsigned char *pinned, *dead;
    if (ox_match_state_init(g, &r, &pinned, &dead) != 0)
        return ox_fail(pc->err, ONYX_OUT_OF_MEMORY, "out of memory");
    ctx c = {g, &r, pinned};
    int changes = 0, rc = 0;
    for (int i = 0; i < g->n_nodes && rc == 0; i++) {
        int nodes[10], count = 0, gamma, beta;
        float eps;
        if (dead[i]) continue;
        int out = match(&c, i, nodes, &count, &gamma, &beta, &eps);
        if (out < 0) continue;
        /* the first ReduceMean becomes the LayerNormalization */
        const int params[2] = {gamma, beta};
        int done = ox_rewrite_normalization(g, opset, i, "LayerNormalization", g->nodes[i].inputs[0], params, 2,
                                            eps, out, nodes, count, dead, pc->err);
        if (done < 0) {
            rc = -1;
            break;
        }
        changes += done;
    }
    if (rc == 0 && changes && ir_graph_remove_nodes(g, dead) != 0)
        rc = ox_fail(pc->err, ONYX_OUT_OF_MEMORY, "out of memory");
    ox_match_state_free(&r, pinned, dead);
    return rc == 0 ? changes : -1;
}
