/* Conv epilogue fusion (level ALL). Rewrites chains that start at a
 * float32 Conv with constant weights:
 *   1. Mul or Add by a constant that is one value or one value per output
 *      channel (PaddlePaddle exports write an affine block this way):
 *      folded into the weights and bias as new constants, like
 *      fuse_conv_bn (products in double, rounded once);
 *   2. then an Add of another value Z with the Conv output's shape (a
 *      residual connection);
 *   3. then one activation in the forms exporters write: Relu, Clip (min
 *      and max from constant inputs or attributes), Sigmoid, HardSigmoid,
 *      HardSwish, x * Sigmoid(x) (SiLU), x * Clip(x + 3, 0, 6) / 6
 *      (HardSwish), LeakyRelu, Tanh.
 * And before the chain, for a 1x1 Conv of one group:
 *   0. its input a Mul of x by one factor per image and input channel
 *      ([N, C, 1, 1]: a squeeze-and-excitation block's gate), read by
 *      nothing else: the FusedConv takes x and the factors (input S) and
 *      scales x as it reads it, so the scaled tensor is never written.
 * A chain with an input scale, a residual or an activation becomes one onyx FusedConv
 * (schema in src/ops/contrib.c), which the CPU provider computes with the
 * epilogue applied to each output tile while it is in cache. Every value
 * the chain consumes inside itself must have no other reader and must not
 * be a graph output. Sessions with a device provider that does not run
 * FusedConv skip the pass (ox_pass_may_fuse). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strmap.h"
#include "core/tensor.h"
#include "optimizer/opt_util.h"
#include "optimizer/optimizer.h"

/* The node reading v through exactly one input slot, when v has one
 * reader and is not a graph output; else -1. The reader lists are built
 * once per pass run: rewrites only move a chain's final output to the
 * Conv and drop the chain's nodes, so the lists stay right for every
 * value asked about later (values downstream of a chain are never
 * chain-internal). */
static int sole_reader(const ir_graph *g, const ox_reader_lists *r, int v, const unsigned char *dead) {
    if (v < 0 || g->values[v].is_output || ox_reader_count(r, v) != 1) return -1;
    int j = r->node[r->start[v]];
    return dead[j] ? -1 : j;
}

/* A float32 constant input k of n, or NULL. */
static const ox_tensor *const_f32(const ir_graph *g, const ir_node *n, int k) {
    if (k >= n->n_inputs || n->inputs[k] < 0) return NULL;
    const ir_value *v = &g->values[n->inputs[k]];
    if (!v->init || v->is_input || v->init->kind != OX_KIND_TENSOR || v->init->dtype != ONYX_FLOAT32)
        return NULL;
    return v->init;
}

/* The one float of a float32 constant input, into *out. */
static int const_scalar(const ir_graph *g, const ir_node *n, int k, float *out) {
    const ox_tensor *t = const_f32(g, n, k);
    if (!t || ox_tensor_numel(t) != 1) return 0;
    *out = ((const float *)t->data)[0];
    return 1;
}

/* The other input of a two-input node reading v (-1 when both read v). */
static int other_input(const ir_node *n, int v) {
    if (n->n_inputs != 2) return -1;
    if (n->inputs[0] == v && n->inputs[1] != v) return 1;
    if (n->inputs[1] == v && n->inputs[0] != v) return 0;
    return -1;
}

/* A constant broadcasting to one value per output channel of an output of
 * rank r with M channels: 1 value, or M on axis 1 (right-aligned) with
 * ones elsewhere. Returns 1 (scalar), 2 (per channel) or 0. */
static int channel_const(const ox_tensor *t, int r, int64_t M) {
    if (!t || t->rank > r) return 0;
    int64_t n = ox_tensor_numel(t);
    if (n == 1) return 1;
    if (n != M || t->rank < r - 1) return 0;
    int axis = 1 - (r - t->rank);
    for (int d = 0; d < t->rank; d++)
        if (t->dims[d] != (d == axis ? M : 1)) return 0;
    return 2;
}

/* Folds y = conv(x) * s (mul) or conv(x) + s into new weights and bias. */
static int fold_affine(ir_graph *g, int ci, const ox_tensor *s, int kind, int mul, ox_error *err) {
    ir_node *conv = &g->nodes[ci];
    const ox_tensor *w = g->values[conv->inputs[1]].init;
    int64_t M = w->dims[0], per = ox_tensor_numel(w) / M;
    const ox_tensor *b = conv->n_inputs > 2 && conv->inputs[2] >= 0 ? g->values[conv->inputs[2]].init : NULL;
    const float *sd = s->data;
    ox_tensor *nw = NULL, *nb = ox_tensor_new(ONYX_FLOAT32, &M, 1, err);
    if (!nb) return -1;
    if (mul && !(nw = ox_tensor_new(ONYX_FLOAT32, w->dims, w->rank, err))) {
        ox_tensor_free(nb);
        return -1;
    }
    float *nbd = nb->data;
    for (int64_t c = 0; c < M; c++) {
        double sv = sd[kind == 2 ? c : 0];
        double bias = b ? (double)((const float *)b->data)[c] : 0.0;
        nbd[c] = (float)(mul ? bias * sv : bias + sv);
        if (mul)
            for (int64_t i = 0; i < per; i++)
                ((float *)nw->data)[c * per + i] = (float)((double)((const float *)w->data)[c * per + i] * sv);
    }
    return ox_conv_replace_weights(g, ci, nw, nb, "fused", err);
}

/* Z may take the Conv output's place in an Add without changing the
 * output's shape: same rank, and on every axis the same known size or a
 * size unknown on both sides (a dynamic batch). Should an unknown size
 * turn out to broadcast, the FusedConv kernel broadcasts Z into Y, or
 * fails the run when Y would have to grow; it never computes a wrong
 * shape silently. */
static int residual_fits(const ir_graph *g, int z, int y) {
    const ir_value *zv = &g->values[z], *yv = &g->values[y];
    if (!zv->has_type || !yv->has_type || zv->type.kind != OX_KIND_TENSOR ||
        zv->type.dtype != ONYX_FLOAT32 || zv->type.rank < 0 || zv->type.rank != yv->type.rank)
        return 0;
    for (int d = 0; d < zv->type.rank; d++)
        if (zv->type.dims[d] != yv->type.dims[d]) return 0;
    return 1;
}

/* The shape of value v when it is a float32 tensor of rank 4, or NULL. */
static const ir_type *rank4_f32(const ir_graph *g, int v) {
    const ir_value *val = v >= 0 ? &g->values[v] : NULL;
    if (!val || !val->has_type || val->type.kind != OX_KIND_TENSOR || val->type.dtype != ONYX_FLOAT32 ||
        val->type.rank != 4)
        return NULL;
    return &val->type;
}

/* Step 0: when Conv node ci (1x1, one group, C input channels) reads
 * Mul(x, s) and nothing else reads that product, with s [N or 1, C, 1,
 * 1] and x [N, C, H, W] the product's own shape, sets *x, *s and *mul
 * (the Mul node) and returns 1. A batch unknown on both sides counts as
 * equal; should it differ at run time, the kernel fails the run rather
 * than compute a wrong shape. */
static int input_scale(const ir_graph *g, const ox_reader_lists *r, const unsigned char *dead, int ci,
                       const ox_tensor *w, int *x, int *s, int *mul) {
    const ir_node *conv = &g->nodes[ci];
    if (w->rank != 4 || w->dims[2] != 1 || w->dims[3] != 1 || ir_attr_int(conv, "group", 1) != 1) return 0;
    const int v = conv->inputs[0];
    if (v < 0 || sole_reader(g, r, v, dead) != ci || g->values[v].producer < 0) return 0;
    const int m = g->values[v].producer;
    const ir_node *n = &g->nodes[m];
    if (dead[m] || !ox_is_op(n, "Mul") || n->n_inputs != 2 || n->n_outputs != 1) return 0;
    const ir_type *vt = rank4_f32(g, v);
    /* a pooled plane (one position) is itself the gate's shape: not this */
    if (!vt || vt->dims[1] != w->dims[1] || (vt->dims[2] == 1 && vt->dims[3] == 1) ||
        n->inputs[0] == n->inputs[1])
        return 0;
    for (int k = 0; k < 2; k++) {
        const ir_type *xt = rank4_f32(g, n->inputs[k]), *st = rank4_f32(g, n->inputs[1 - k]);
        if (!xt || !st) continue;
        int fits = st->dims[1] == vt->dims[1] && st->dims[2] == 1 && st->dims[3] == 1 &&
                   (st->dims[0] == 1 || st->dims[0] == vt->dims[0]);
        for (int d = 0; fits && d < 4; d++) fits = xt->dims[d] == vt->dims[d];
        if (!fits) continue;
        *x = n->inputs[k];
        *s = n->inputs[1 - k];
        *mul = m;
        return 1;
    }
    return 0;
}

typedef struct chain {
    int out;           /* the chain's current output value */
    int z;             /* residual, or -1 */
    int x, s;          /* with an input scale (else -1): the Conv reads x, scaled by s */
    const char *act;   /* NULL: none */
    float params[2];
    int n_params;
    int drop[8], n_drop; /* nodes the FusedConv replaces */
} chain;

static int clip_bounds(const ir_graph *g, const ir_node *n, float *lo, float *hi) {
    *lo = -INFINITY;
    *hi = INFINITY;
    if (n->opset < 11) {
        *lo = ir_attr_float(n, "min", -INFINITY);
        *hi = ir_attr_float(n, "max", INFINITY);
        return 1;
    }
    if (n->n_inputs > 1 && n->inputs[1] >= 0 && !const_scalar(g, n, 1, lo)) return 0;
    if (n->n_inputs > 2 && n->inputs[2] >= 0 && !const_scalar(g, n, 2, hi)) return 0;
    return 1;
}

/* x * Clip(x + 3, 0, 6) / 6 (or * (1/6)) reading v through the Add and
 * the Mul: fills the chain and returns 1. */
static int match_hardswish_parts(const ir_graph *g, const ox_reader_lists *r, const unsigned char *dead, int v,
                                 chain *c) {
    if (ox_reader_count(r, v) != 2 || g->values[v].is_output) return 0;
    int a = r->node[r->start[v]], m = r->node[r->start[v] + 1];
    if (ox_is_op(&g->nodes[m], "Add")) {
        int t = a;
        a = m;
        m = t;
    }
    if (dead[a] || dead[m] || !ox_is_op(&g->nodes[a], "Add") || !ox_is_op(&g->nodes[m], "Mul")) return 0;
    const ir_node *add = &g->nodes[a];
    float three, lo, hi, six;
    int k = other_input(add, v);
    if (k < 0 || !const_scalar(g, add, k, &three) || three != 3.0f) return 0;
    int ci = sole_reader(g, r, add->outputs[0], dead);
    if (ci < 0 || !ox_is_op(&g->nodes[ci], "Clip") || g->nodes[ci].inputs[0] != add->outputs[0] ||
        !clip_bounds(g, &g->nodes[ci], &lo, &hi) || lo != 0.0f || hi != 6.0f)
        return 0;
    const ir_node *mul = &g->nodes[m];
    int ko = other_input(mul, v);
    if (ko < 0 || mul->inputs[ko] != g->nodes[ci].outputs[0] || sole_reader(g, r, g->nodes[ci].outputs[0], dead) != m)
        return 0;
    int di = sole_reader(g, r, mul->outputs[0], dead);
    if (di < 0) return 0;
    const ir_node *d = &g->nodes[di];
    if (d->n_inputs != 2 || d->inputs[0] != mul->outputs[0] || !const_scalar(g, d, 1, &six)) return 0;
    if (!((ox_is_op(d, "Div") && six == 6.0f) || (ox_is_op(d, "Mul") && fabsf(six - 1.0f / 6.0f) < 1e-7f))) return 0;
    c->act = "HardSwish";
    c->drop[c->n_drop++] = a;
    c->drop[c->n_drop++] = ci;
    c->drop[c->n_drop++] = m;
    c->drop[c->n_drop++] = di;
    c->out = d->outputs[0];
    return 1;
}

/* The activation reading c->out, if any: extends the chain. */
static void match_activation(const ir_graph *g, const ox_reader_lists *r, const unsigned char *dead, chain *c) {
    int v = c->out;
    if (match_hardswish_parts(g, r, dead, v, c)) return;
    /* x * Sigmoid(x) */
    if (ox_reader_count(r, v) == 2 && !g->values[v].is_output) {
        int s = r->node[r->start[v]], m = r->node[r->start[v] + 1];
        if (ox_is_op(&g->nodes[m], "Sigmoid")) {
            int t = s;
            s = m;
            m = t;
        }
        if (!dead[s] && !dead[m] && ox_is_op(&g->nodes[s], "Sigmoid") && ox_is_op(&g->nodes[m], "Mul")) {
            int so = g->nodes[s].outputs[0], k = other_input(&g->nodes[m], v);
            if (k >= 0 && g->nodes[m].inputs[k] == so && sole_reader(g, r, so, dead) == m) {
                c->act = "SiLU";
                c->drop[c->n_drop++] = s;
                c->drop[c->n_drop++] = m;
                c->out = g->nodes[m].outputs[0];
            }
        }
        return;
    }
    int j = sole_reader(g, r, v, dead);
    if (j < 0) return;
    const ir_node *n = &g->nodes[j];
    if (n->n_inputs < 1 || n->inputs[0] != v || n->n_outputs < 1) return;
    if (ox_is_op(n, "Relu") || ox_is_op(n, "Sigmoid") || ox_is_op(n, "Tanh") || ox_is_op(n, "HardSwish")) {
        c->act = n->op_type;
    } else if (ox_is_op(n, "HardSigmoid")) {
        c->act = "HardSigmoid";
        c->params[0] = ir_attr_float(n, "alpha", 0.2f);
        c->params[1] = ir_attr_float(n, "beta", 0.5f);
        c->n_params = 2;
    } else if (ox_is_op(n, "LeakyRelu")) {
        c->act = "LeakyRelu";
        c->params[0] = ir_attr_float(n, "alpha", 0.01f);
        c->n_params = 1;
    } else if (ox_is_op(n, "Clip")) {
        if (!clip_bounds(g, n, &c->params[0], &c->params[1])) return;
        c->act = "Clip";
        c->n_params = 2;
    } else {
        return;
    }
    c->drop[c->n_drop++] = j;
    c->out = n->outputs[0];
}

static int set_attr(ir_node *n, const char *name, ir_attr_type type, const char *s, const float *f,
                    int nf) {
    ir_attr *na = realloc(n->attrs, ((size_t)n->n_attrs + 1) * sizeof *na);
    if (!na) return -1;
    n->attrs = na;
    ir_attr *a = &na[n->n_attrs];
    memset(a, 0, sizeof *a);
    a->name = ox_strdup(name);
    a->type = type;
    if (type == IR_ATTR_STRING) {
        a->s = ox_strdup(s);
        a->s_len = strlen(s);
    } else {
        a->floats = malloc(sizeof(float) * (size_t)(nf > 0 ? nf : 1));
        if (a->floats) memcpy(a->floats, f, sizeof(float) * (size_t)nf);
        a->n = (size_t)nf;
    }
    if (!a->name || (type == IR_ATTR_STRING ? !a->s : !a->floats)) {
        ir_attr_clear(a);
        return -1;
    }
    n->n_attrs++;
    return 0;
}

/* The Conv becomes onyx FusedConv producing the chain's output. */
static int rewrite(ir_graph *g, int ci, const chain *c, unsigned char *dead, ox_error *err) {
    ir_node *n = &g->nodes[ci];
    if (c->z >= 0 || c->s >= 0) {
        const int count = c->s >= 0 ? 5 : 4;
        int *ni = realloc(n->inputs, (size_t)count * sizeof *ni);
        if (!ni) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        n->inputs = ni;
        for (int k = n->n_inputs; k < 3; k++) ni[k] = -1;
        ni[3] = c->z;
        if (c->s >= 0) {
            ni[0] = c->x;
            ni[4] = c->s;
        }
        n->n_inputs = count;
    }
    char *op = ox_strdup("FusedConv"), *dom = ox_strdup("onyx");
    if (!op || !dom || set_attr(n, "activation", IR_ATTR_STRING, c->act ? c->act : "", NULL, 0) ||
        (c->n_params && set_attr(n, "activation_params", IR_ATTR_FLOATS, NULL, c->params, c->n_params))) {
        free(op);
        free(dom);
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    free(n->op_type);
    free(n->domain);
    n->op_type = op;
    n->domain = dom;
    n->opset = 1;
    int old = n->outputs[0];
    n->outputs[0] = c->out;
    g->values[old].producer = -1;
    g->values[c->out].producer = ci;
    for (int i = 0; i < c->n_drop; i++)
        if (ox_merge_node(g, dead, ci, c->drop[i], err) != 0) return -1;
    return 0;
}

/* Runs the chain from Conv node ci; returns 1 when it changed the graph. */
static int fuse_one(ir_graph *g, const ox_reader_lists *r, unsigned char *dead, int ci, int affine_only,
                    ox_error *err) {
    const ir_node *conv = &g->nodes[ci];
    if (!ox_is_op(conv, "Conv") || conv->n_outputs != 1 || conv->outputs[0] < 0) return 0;
    const ox_tensor *w = const_f32(g, conv, 1);
    if (!w || w->rank < 3 || w->dims[0] < 1) return 0;
    int64_t M = w->dims[0];
    int has_b = conv->n_inputs > 2 && conv->inputs[2] >= 0;
    const ox_tensor *b = has_b ? const_f32(g, conv, 2) : NULL;
    int bias_const = !has_b || (b && ox_tensor_numel(b) == M);
    chain c = {.out = conv->outputs[0], .z = -1, .x = -1, .s = -1};
    int changed = 0;
    /* 1. constant affine steps */
    while (bias_const) {
        int j = sole_reader(g, r, c.out, dead);
        if (j < 0) break;
        const ir_node *n = &g->nodes[j];
        int mul = ox_is_op(n, "Mul");
        if (!mul && !ox_is_op(n, "Add")) break;
        int k = other_input(n, c.out);
        const ox_tensor *s = k >= 0 ? const_f32(g, n, k) : NULL;
        int kind = channel_const(s, w->rank, M);
        if (!kind) break;
        int out = n->outputs[0];
        if (fold_affine(g, ci, s, kind, mul, err)) return -1;
        /* the Conv now writes the folded node's output */
        ir_node *cv = &g->nodes[ci];
        g->values[cv->outputs[0]].producer = -1;
        cv->outputs[0] = out;
        g->values[out].producer = ci;
        if (ox_merge_node(g, dead, ci, j, err) != 0) return -1;
        c.out = out;
        w = g->values[cv->inputs[1]].init;
        changed = 1;
    }
    if (affine_only) return changed;
    /* 0. an input scale (after the affine steps, which may change W) */
    int mul = -1;
    if (input_scale(g, r, dead, ci, w, &c.x, &c.s, &mul)) c.drop[c.n_drop++] = mul;
    /* 2. residual */
    int j = sole_reader(g, r, c.out, dead);
    if (j >= 0 && ox_is_op(&g->nodes[j], "Add")) {
        int k = other_input(&g->nodes[j], c.out);
        int z = k >= 0 ? g->nodes[j].inputs[k] : -1;
        if (z >= 0 && residual_fits(g, z, c.out) && residual_fits(g, z, g->nodes[j].outputs[0])) {
            c.z = z;
            c.drop[c.n_drop++] = j;
            c.out = g->nodes[j].outputs[0];
        }
    }
    /* 3. activation */
    match_activation(g, r, dead, &c);
    if (c.z < 0 && c.s < 0 && !c.act) return changed;
    if (rewrite(g, ci, &c, dead, err)) return -1;
    return 1;
}

/* Both passes: affine_only folds the constant Mul/Add steps into the
 * Convs (new weights and bias, a plain Conv: any provider runs it); else
 * the whole chain becomes onyx.FusedConv. */
static int fuse_convs(ox_pass_ctx *ctx, ir_graph *g, int affine_only) {
    /* a graph with subgraphs is fine: their captures count as readers
     * (ox_reader_lists_init), and the values a chain drops are read by its next
     * node alone */
    int any = 0;
    for (int i = 0; i < g->n_nodes && !any; i++) any = ox_is_op(&g->nodes[i], "Conv");
    if (!any) return 0;
    /* the residual test needs the shapes; inference is best effort and
     * runs again after the optimizer. An optimized file brings its
     * inferred shapes (value_info), so it is not run twice at load */
    if (!affine_only && !ctx->model->compiled && ir_infer_shapes(g, ctx->err) != 0)
        ox_error_clear(ctx->err);
    unsigned char *dead = calloc((size_t)g->n_nodes + 1, 1);
    ox_reader_lists r = {0};
    if (!dead || ox_reader_lists_init(&r, g) != 0) {
        free(dead);
        ox_reader_lists_free(&r);
        return ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    int changes = 0, rc = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        if (dead[i]) continue;
        int c = fuse_one(g, &r, dead, i, affine_only, ctx->err);
        if (c < 0) {
            rc = -1;
            break;
        }
        changes += c;
    }
    /* the graph now names the onyx domain: import it, as a saved model
     * would need */
    if (rc == 0 && changes && !affine_only && ox_model_import_domain(ctx->model, "onyx", 1, ctx->err) != 0)
        rc = -1;
    if (rc == 0 && changes && ir_graph_remove_nodes(g, dead) != 0)
        rc = ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    free(dead);
    ox_reader_lists_free(&r);
    return rc == 0 ? changes : -1;
}

int ox_pass_fuse_conv_activation(ox_pass_ctx *ctx, ir_graph *g) {
    /* with a device provider that lacks FusedConv in the session, its
     * Convs stay Convs so they can still go there */
    return ox_pass_may_fuse(ctx, "onyx", "FusedConv") ? fuse_convs(ctx, g, 0) : 0;
}

int ox_pass_fold_conv_affine(ox_pass_ctx *ctx, ir_graph *g) {
    /* a plain Conv with new weights runs anywhere: done for every
     * session, so an optimized file carries the folded weights and a
     * CPU session loading it does not compute them again */
    return fuse_convs(ctx, g, 1);
}
