/* Rotary position embedding pattern fusion (level ALL): LLaMA's, Qwen's,
 * Mistral's and their kind's apply_rotary_pos_emb as exporters before
 * opset 23 write it out, on 4-D queries or keys x [B, H, S, D],
 *   y = x * cos + Concat(-x[..., D/2:], x[..., :D/2], axis = -1) * sin
 * (rotate_half: two Slices of the last axis, a Neg, a Concat; the
 * products and the sum either way round), becomes one
 * onyx.RotaryEmbedding(x, cos_cache, sin_cache) (src/ops/attention.c):
 * ONNX RotaryEmbedding-23 without position ids, non-interleaved, rotating
 * the whole head, whose kernel reads x once instead of seven nodes
 * reading and writing it again.
 *
 * cos and sin must be float32 constants of shape [.., S, D] that
 * broadcast over the heads (a 1 there or no dimension) and whose two
 * halves of the last axis are equal, as rotary tables built by
 * cat(freqs, freqs) are; the caches become their first halves,
 * [1 or B, S, D / 2]. The shapes must be static (a sequence length the
 * export fixed, where the tables fold to constants). Every intermediate
 * value must have no other reader and no name to keep; x may have other
 * readers. Only when every provider of the session runs the operator
 * (ox_pass_may_fuse). */
#include <stdlib.h>
#include <string.h>

#include "optimizer/opt_util.h"
#include "optimizer/optimizer.h"

typedef struct ctx {
    const ir_graph *g;
    const ox_readers *r;
    const unsigned char *pinned;
} ctx;

typedef struct match {
    int nodes[7], x, cos, sin;
    int64_t dims[4];
} match;

static int sole(const ctx *c, int v) { return ox_sole_reader(c->g, c->r, c->pinned, v); }

/* Node n's input k as one constant integer (int32 or int64); 0 when it
 * is not one. */
static int const_int1(const ir_graph *g, const ir_node *n, int k, int64_t *out) {
    int count = 0;
    return ox_const_ints(g, n, k, out, 1, &count) == 0 && count == 1;
}

/* Node n slices x's last axis (of size d) from `from` to at least `to`
 * (to == d: to the end, a larger end clamped), step 1. */
static int slices_last(const ir_graph *g, const ir_node *n, int x, int64_t d, int64_t from, int64_t to) {
    if (!ox_is_op_chain(n, "Slice") || n->opset < 10 || n->n_inputs < 4 || n->inputs[0] != x) return 0;
    int64_t start, end, axis, step = 1;
    if (!const_int1(g, n, 1, &start) || !const_int1(g, n, 2, &end) || !const_int1(g, n, 3, &axis)) return 0;
    if (ir_node_has_input(n, 4) && !const_int1(g, n, 4, &step)) return 0;
    if ((axis != 3 && axis != -1) || step != 1) return 0;
    if (start < 0) start += d;
    if (end < 0) end += d;
    return start == from && (to == d ? end >= d : end == to);
}

/* The constant behind v when it is a float32 rotary table for x's dims:
 * [.., S, D] broadcasting over B (1 or B) and H (1), both halves of the
 * last axis equal; else NULL. */
static const ox_tensor *rotary_table(const ir_graph *g, int v, const int64_t *dims) {
    const ox_tensor *t = ox_const_value(g, v);
    if (!t || t->dtype != ONYX_FLOAT32 || t->rank < 2 || t->rank > 4) return NULL;
    int64_t td[4] = {1, 1, 1, 1};
    for (int k = 0; k < t->rank; k++) td[4 - t->rank + k] = t->dims[k];
    if ((td[0] != 1 && td[0] != dims[0]) || td[1] != 1 || td[2] != dims[2] || td[3] != dims[3]) return NULL;
    const int64_t half = dims[3] / 2, rows = td[0] * td[2];
    const float *p = t->data;
    for (int64_t r = 0; r < rows; r++)
        if (memcmp(p + r * dims[3], p + r * dims[3] + half, (size_t)half * sizeof *p) != 0) return NULL;
    return t;
}

/* Matches from the Concat (node i); fills m; returns the output value or -1. */
static int match_rotary(const ctx *c, int i, match *m) {
    const ir_graph *g = c->g;
    const ir_node *cat = &g->nodes[i];
    if (!ox_is_op_chain(cat, "Concat") || cat->n_inputs != 2) return -1;
    const int64_t axis = ir_attr_int(cat, "axis", 0);
    if (axis != 3 && axis != -1) return -1;
    const int neg_out = cat->inputs[0], first = cat->inputs[1];
    if (neg_out < 0 || first < 0 || g->values[neg_out].producer < 0 || g->values[first].producer < 0) return -1;
    const int ni = g->values[neg_out].producer, s1 = g->values[first].producer;
    const ir_node *neg = &g->nodes[ni];
    if (!ox_is_op_chain(neg, "Neg") || neg->n_inputs != 1 || g->values[neg->inputs[0]].producer < 0) return -1;
    const int s2 = g->values[neg->inputs[0]].producer;
    const int x = g->nodes[s1].n_inputs > 0 ? g->nodes[s1].inputs[0] : -1;
    if (x < 0) return -1;
    const ir_value *xv = &g->values[x];
    if (!xv->has_type || xv->type.dtype != ONYX_FLOAT32 || xv->type.rank != 4) return -1;
    for (int k = 0; k < 4; k++) {
        if (xv->type.dims[k] <= 0) return -1;
        m->dims[k] = xv->type.dims[k];
    }
    const int64_t d = m->dims[3];
    if (d % 2) return -1;
    if (!slices_last(g, &g->nodes[s1], x, d, 0, d / 2) || !slices_last(g, &g->nodes[s2], x, d, d / 2, d) ||
        sole(c, first) != i || sole(c, neg->inputs[0]) != ni || sole(c, neg_out) != i)
        return -1;
    /* Concat(..) * sin */
    const int ms = sole(c, cat->outputs[0]);
    if (ms < 0 || !ox_is_op_chain(&g->nodes[ms], "Mul") || g->nodes[ms].n_inputs != 2) return -1;
    m->sin = ox_other_input(&g->nodes[ms], cat->outputs[0]);
    /* .. + x * cos */
    const int add = sole(c, g->nodes[ms].outputs[0]);
    if (add < 0 || !ox_is_op_chain(&g->nodes[add], "Add") || g->nodes[add].n_inputs != 2) return -1;
    const int xc = ox_other_input(&g->nodes[add], g->nodes[ms].outputs[0]);
    const int mc = xc >= 0 ? g->values[xc].producer : -1;
    if (mc < 0 || !ox_is_op_chain(&g->nodes[mc], "Mul") || g->nodes[mc].n_inputs != 2 || sole(c, xc) != add)
        return -1;
    m->cos = ox_other_input(&g->nodes[mc], x);
    if (m->cos < 0 || m->sin < 0 || !rotary_table(g, m->cos, m->dims) || !rotary_table(g, m->sin, m->dims))
        return -1;
    const int out = g->nodes[add].outputs[0];
    const ir_value *ov = &g->values[out];
    if (!ov->has_type || ov->type.rank != 4) return -1;
    for (int k = 0; k < 4; k++)
        if (ov->type.dims[k] != m->dims[k]) return -1; /* no broadcast past x */
    m->x = x;
    const int nodes[7] = {add, s1, s2, ni, i, ms, mc};
    memcpy(m->nodes, nodes, sizeof nodes);
    return out;
}

/* The cache [1 or B, S, D / 2] of rotary table v (the first half of each
 * row), a new constant named after x; -1 with err set on failure. */
static int cache_of(ir_graph *g, int v, int x, const char *what, ox_error *err) {
    const ox_tensor *t = ox_const_value(g, v);
    const int64_t d = t->dims[t->rank - 1], s = t->dims[t->rank - 2], half = d / 2;
    const int64_t rows = ox_tensor_numel(t) / d;
    int64_t dims[3] = {rows / s, s, half};
    ox_tensor *c = ox_tensor_new_unset(ONYX_FLOAT32, dims, 3, err);
    if (!c) return -1;
    for (int64_t r = 0; r < rows; r++)
        memcpy((float *)c->data + r * half, (const float *)t->data + r * d, (size_t)half * sizeof(float));
    return ox_add_constant(g, g->values[x].name, what, c, err);
}

/* The cache of table v, made once per table (caches[v], -1 before):
 * the layers of a model share their tables, and so their caches. */
static int shared_cache(ir_graph *g, int *caches, int v, int x, const char *what, ox_error *err) {
    if (caches[v] < 0) caches[v] = cache_of(g, v, x, what, err);
    return caches[v];
}

/* The Add (m->nodes[0]) becomes the fused node; the rest merge into it.
 * 1 when rewritten, 0 when an earlier rewrite took one of the nodes. */
static int rewrite(ir_graph *g, const match *m, int *caches, unsigned char *dead, ox_error *err) {
    for (int k = 0; k < 7; k++)
        if (dead[m->nodes[k]]) return 0;
    const int cc = shared_cache(g, caches, m->cos, m->x, "rotary_cos", err);
    const int sc = cc < 0 ? -1 : shared_cache(g, caches, m->sin, m->x, "rotary_sin", err);
    if (sc < 0) return -1;
    ir_node *n = &g->nodes[m->nodes[0]];
    if (ox_node_retype(n, "RotaryEmbedding", "onyx", 1, err) || ox_node_set_input(n, 1, cc, err) ||
        ox_node_set_input(n, 2, sc, err))
        return -1;
    n->inputs[0] = m->x;
    n->n_inputs = 3;
    for (int k = 1; k < 7; k++)
        if (ox_merge_node(g, dead, m->nodes[0], m->nodes[k], err) != 0) return -1;
    return 1;
}

int ox_pass_fuse_rotary(ox_pass_ctx *pc, ir_graph *g) {
    int any = 0;
    for (int i = 0; i < g->n_nodes && !any; i++) any = ox_is_op(&g->nodes[i], "Neg");
    if (!any || !ox_pass_may_fuse(pc, "onyx", "RotaryEmbedding") || ox_infer_quietly(g) != 0) return 0;
    ox_readers r;
    unsigned char *pinned, *dead;
    /* the values the pass adds are caches, never tables: n_values entries */
    int *caches = malloc((size_t)g->n_values * sizeof *caches + 1);
    if (!caches || ox_match_state_init(g, &r, &pinned, &dead) != 0) {
        free(caches);
        return ox_fail(pc->err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    for (int v = 0; v < g->n_values; v++) caches[v] = -1;
    ctx c = {g, &r, pinned};
    int changes = 0, rc = 0;
    for (int i = 0; i < g->n_nodes && rc == 0; i++) {
        match m;
        if (dead[i] || match_rotary(&c, i, &m) < 0) continue;
        const int done = rewrite(g, &m, caches, dead, pc->err);
        if (done < 0) rc = -1;
        changes += done > 0;
    }
    if (rc == 0 && changes && ir_graph_remove_nodes(g, dead) != 0)
        rc = ox_fail(pc->err, ONYX_OUT_OF_MEMORY, "out of memory");
    if (rc == 0 && changes && ox_model_import_domain(pc->model, "onyx", 1, pc->err) != 0) rc = -1;
    ox_match_state_free(&r, pinned, dead);
    free(caches);
    return rc == 0 ? changes : -1;
}
