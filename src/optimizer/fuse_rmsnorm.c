/* RMS normalization pattern fusion (level ALL): the normalization of
 * LLaMA, T5, Qwen and their kind as exporters before opset 23 write it
 * out over the last axis,
 *   s = Sqrt(ReduceMean(x^2, [-1]) + eps)
 *   y = x / s,  x * (1 / s)  or  x * Reciprocal(s),  times w
 * (x^2 as Pow(x, 2), the 2 a float or integer, or x * x; the products either way round; the weight
 * w optional) becomes one SimplifiedLayerNormalization(x, w, axis = -1,
 * epsilon = eps): the ONNX-domain operator ONNX Runtime registers for
 * every opset with these semantics (src/ops/contrib.c), whose kernel
 * sums the squares in double (the written-out form rounds every step to
 * float32). TorchScript's export of torch.rsqrt is the 1 / s form, the
 * torch.export-based exporter's the Reciprocal; a Cast to float32 before
 * the weight (the model casting back to a float32 input's type) is taken
 * in too. w must be a float32
 * constant of the last dimension's size (without one, a constant of ones
 * is added); every intermediate value must have no other reader and no
 * name to keep; x itself may have other readers (a residual). Only when
 * every provider of the session runs the operator (ox_pass_may_fuse). */
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

/* x when node n squares it (Pow(x, 2) or Mul(x, x)), else -1 */
static int squared(const ctx *c, const ir_node *n) {
    if (ox_is_op_chain(n, "Mul") && n->n_inputs == 2 && n->inputs[1] == n->inputs[0]) return n->inputs[0];
    if (!ox_is_op_chain(n, "Pow") || n->n_inputs != 2) return -1;
    /* the exponent 2 as a float or an integer scalar */
    const ox_tensor *e = ox_const_value(c->g, n->inputs[1]);
    if (!e || ox_tensor_numel(e) != 1) return -1;
    const int two = e->dtype == ONYX_FLOAT32 ? *(const float *)e->data == 2.0f
                    : e->dtype == ONYX_INT64 ? *(const int64_t *)e->data == 2
                    : e->dtype == ONYX_INT32 ? *(const int32_t *)e->data == 2
                                             : 0;
    return two ? n->inputs[0] : -1;
}

/* The node that turns s = Sqrt(..) into x / s: Div(x, s), or the Mul of x
 * by 1 / s (Div(1, s)) or Reciprocal(s), which is appended to nodes too;
 * -1 when none. */
static int normalizer(const ctx *c, int x, int s, int *nodes, int *n) {
    const ir_graph *g = c->g;
    int t = sole(c, s);
    if (t < 0) return -1;
    const ir_node *tn = &g->nodes[t];
    if (ox_is_op_chain(tn, "Div") && tn->n_inputs == 2 && tn->inputs[1] == s) {
        if (tn->inputs[0] == x) return t;
        const ox_tensor *one = ox_const_scalar_f32(g, tn->inputs[0]);
        if (!one || *(const float *)one->data != 1.0f) return -1;
    } else if (!(ox_is_op_chain(tn, "Reciprocal") && tn->n_inputs == 1)) {
        return -1;
    }
    int m = sole(c, tn->outputs[0]);
    if (m < 0 || !ox_is_op_chain(&g->nodes[m], "Mul") || ox_other_input(&g->nodes[m], tn->outputs[0]) != x)
        return -1;
    nodes[(*n)++] = t;
    return m;
}

/* Matches from the square (node i); fills nodes[0..*count), the input
 * *xo and the parameters; returns the output value or -1. */
static int match(const ctx *c, int i, int *nodes, int *count, int *xo, int *w, int64_t *h, float *eps) {
    const ir_graph *g = c->g;
    const int x = *xo = squared(c, &g->nodes[i]);
    if (x < 0) return -1;
    const ir_value *xv = &g->values[x];
    const int rank = xv->has_type ? xv->type.rank : -1;
    if (rank < 1 || xv->type.dtype != ONYX_FLOAT32 || xv->type.dims[rank - 1] <= 0) return -1;
    *h = xv->type.dims[rank - 1];
    int n = 0;
    nodes[n++] = i;
    const int v = sole(c, g->nodes[i].outputs[0]);
    if (v < 0 || !ox_mean_over_last_axis(g, &g->nodes[v], rank)) return -1;
    nodes[n++] = v;
    const int ae = sole(c, g->nodes[v].outputs[0]);
    if (ae < 0 || !ox_is_op_chain(&g->nodes[ae], "Add")) return -1;
    const ox_tensor *et = ox_const_scalar_f32(g, ox_other_input(&g->nodes[ae], g->nodes[v].outputs[0]));
    if (!et || !(*(const float *)et->data >= 0.0f)) return -1;
    *eps = *(const float *)et->data;
    nodes[n++] = ae;
    const int sr = sole(c, g->nodes[ae].outputs[0]);
    if (sr < 0 || !ox_is_op_chain(&g->nodes[sr], "Sqrt") || g->nodes[sr].n_inputs != 1) return -1;
    nodes[n++] = sr;
    const int nm = normalizer(c, x, g->nodes[sr].outputs[0], nodes, &n);
    if (nm < 0) return -1;
    nodes[n++] = nm;
    int out = g->nodes[nm].outputs[0];
    *w = -1;
    /* the weight's Mul, after a Cast to float32 where the model casts the
     * normalized value back to its input's type (LLaMA's and T5's
     * x.to(dtype) in a float32 model); such a Cast is an identity, which
     * eliminate_identity removes only once inference has typed its input */
    int mw = sole(c, out), cast = -1;
    if (mw >= 0 && ox_is_op_chain(&g->nodes[mw], "Cast") && ir_attr_int(&g->nodes[mw], "to", 0) == ONYX_FLOAT32) {
        cast = mw;
        mw = sole(c, g->nodes[cast].outputs[0]);
    }
    const int mw_in = cast >= 0 ? g->nodes[cast].outputs[0] : out;
    if (mw >= 0 && ox_is_op_chain(&g->nodes[mw], "Mul")) {
        const int wv = ox_other_input(&g->nodes[mw], mw_in);
        const ox_tensor *wt = ox_const_value(g, wv);
        if (wt && wt->dtype == ONYX_FLOAT32 && wt->rank == 1 && wt->dims[0] == *h) {
            *w = wv;
            if (cast >= 0) nodes[n++] = cast;
            nodes[n++] = mw;
            out = g->nodes[mw].outputs[0];
        }
    }
    *count = n;
    return out;
}

/* A float32 constant of h ones named after value x, for a normalization
 * without a weight; -1 with err set on failure. */
static int ones(ir_graph *g, int x, int64_t h, ox_error *err) {
    ox_tensor *t = ox_tensor_new_unset(ONYX_FLOAT32, &h, 1, err);
    if (!t) return -1;
    for (int64_t k = 0; k < h; k++) ((float *)t->data)[k] = 1.0f;
    return ox_add_constant(g, g->values[x].name, "rms_scale", t, err);
}

int ox_pass_fuse_rmsnorm(ox_pass_ctx *pc, ir_graph *g) {
    int any = 0;
    for (int i = 0; i < g->n_nodes && !any; i++) any = ox_is_op(&g->nodes[i], "ReduceMean");
    if (!any || !ox_pass_may_fuse(pc, "", "SimplifiedLayerNormalization") || ox_infer_quietly(g) != 0) return 0;
    const int64_t opset = ir_model_opset(pc->model, "");
    ox_readers r;
    unsigned char *pinned, *dead;
    if (ox_match_state_init(g, &r, &pinned, &dead) != 0)
        return ox_fail(pc->err, ONYX_OUT_OF_MEMORY, "out of memory");
    ctx c = {g, &r, pinned};
    int changes = 0, rc = 0;
    for (int i = 0; i < g->n_nodes && rc == 0; i++) {
        int nodes[10], count = 0, x, w;
        int64_t h;
        float eps;
        if (dead[i]) continue;
        const int out = match(&c, i, nodes, &count, &x, &w, &h, &eps);
        if (out < 0) continue;
        /* no ones for a match an earlier one overlaps (the rewrite skips it) */
        int overlap = 0;
        for (int k = 0; k < count; k++) overlap |= dead[nodes[k]];
        if (overlap) continue;
        if (w < 0 && (w = ones(g, x, h, pc->err)) < 0) {
            rc = -1;
            break;
        }
        /* the square becomes the normalization */
        const int done = ox_rewrite_normalization(g, opset, i, "SimplifiedLayerNormalization", x, &w, 1, eps, out,
                                                  nodes, count, dead, pc->err);
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
