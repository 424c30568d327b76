/* Conv + BatchNormalization folding (level ALL). In inference a
 * BatchNormalization after a Conv is a per-output-channel affine map,
 *   y = (conv(x, W) + B - mean) * s + beta,  s = scale / sqrt(var + eps),
 * which equals conv(x, W * s) + (B - mean) * s + beta. With W, B and the
 * four BatchNormalization parameters constant, the pass writes the scaled
 * weights and bias as new constants (W may be shared with other nodes, so
 * it is never changed in place) and removes the BatchNormalization. The
 * products are computed in double and rounded once, so the folded Conv
 * differs from the two-node graph by about one float32 rounding. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimizer/optimizer.h"
#include "optimizer/opt_util.h"

/* A float32 constant (not a graph input) of exactly n elements, or NULL. */
static const ox_tensor *const_f32(const ir_graph *g, const ir_node *n, int k, int64_t numel) {
    if (k >= n->n_inputs || n->inputs[k] < 0) return NULL;
    const ir_value *v = &g->values[n->inputs[k]];
    if (!v->init || v->is_input || v->init->kind != OX_KIND_TENSOR ||
        v->init->dtype != ONYX_FLOAT32)
        return NULL;
    if (numel >= 0 && ox_tensor_numel(v->init) != numel) return NULL;
    return v->init;
}

/* The BatchNormalization that alone reads Conv node ci's output and can
 * fold into it, or -1. r counts the readers of the first n_counted values,
 * once before the pass: folding only swaps a Conv's weights for new
 * constants (values past n_counted), so the counts it asks about stay
 * right throughout. */
static int foldable_bn(const ir_graph *g, const ox_readers *r, int n_counted, int ci) {
    const ir_node *conv = &g->nodes[ci];
    if (conv->domain[0] || strcmp(conv->op_type, "Conv") != 0 || conv->n_outputs != 1) return -1;
    int out = conv->outputs[0];
    if (out < 0 || out >= n_counted || g->values[out].is_output || r->count[out] != 1) return -1;
    const ox_tensor *w = const_f32(g, conv, 1, -1);
    if (!w || w->rank < 3) return -1;
    int64_t m = w->dims[0];
    if (conv->n_inputs > 2 && conv->inputs[2] >= 0 && !const_f32(g, conv, 2, m)) return -1;
    /* the one reader, through its first input */
    int j = r->node[out];
    const ir_node *bn = &g->nodes[j];
    if (bn->n_inputs < 1 || bn->inputs[0] != out) return -1;
    if (bn->domain[0] || strcmp(bn->op_type, "BatchNormalization") != 0) return -1;
    /* training mode has more outputs (running statistics) */
    for (int k = 1; k < bn->n_outputs; k++)
        if (bn->outputs[k] >= 0) return -1;
    if (ir_attr_int(bn, "training_mode", 0) != 0 || bn->n_inputs != 5) return -1;
    for (int k = 1; k < 5; k++)
        if (!const_f32(g, bn, k, m)) return -1;
    return j;
}

static int fold_one(ir_graph *g, int ci, int bi, ox_error *err) {
    ir_node *conv = &g->nodes[ci];
    const ir_node *bn = &g->nodes[bi];
    const ox_tensor *w = g->values[conv->inputs[1]].init;
    int64_t m = w->dims[0], per = ox_tensor_numel(w) / (m ? m : 1);
    const float *scale = const_f32(g, bn, 1, m)->data, *beta = const_f32(g, bn, 2, m)->data;
    const float *mean = const_f32(g, bn, 3, m)->data, *var = const_f32(g, bn, 4, m)->data;
    const ox_tensor *b = conv->n_inputs > 2 && conv->inputs[2] >= 0 ? const_f32(g, conv, 2, m) : NULL;
    double eps = ir_attr_float(bn, "epsilon", 1e-5f);
    ox_tensor *nw = ox_tensor_new(ONYX_FLOAT32, w->dims, w->rank, err);
    int64_t bdim = m;
    ox_tensor *nb = nw ? ox_tensor_new(ONYX_FLOAT32, &bdim, 1, err) : NULL;
    if (!nw || !nb) {
        ox_tensor_free(nw);
        return -1;
    }
    const float *wd = w->data;
    float *nwd = nw->data, *nbd = nb->data;
    for (int64_t c = 0; c < m; c++) {
        double s = (double)scale[c] / sqrt((double)var[c] + eps);
        for (int64_t i = 0; i < per; i++) nwd[c * per + i] = (float)((double)wd[c * per + i] * s);
        double bias = b ? (double)((const float *)b->data)[c] : 0.0;
        nbd[c] = (float)((bias - (double)mean[c]) * s + (double)beta[c]);
    }
    if (ox_conv_replace_weights(g, ci, nw, nb, "bn_folded", err) != 0) return -1;
    conv = &g->nodes[ci];
    bn = &g->nodes[bi];
    /* the Conv now produces the BatchNormalization's output directly */
    int old = conv->outputs[0], y = bn->outputs[0];
    conv->outputs[0] = y;
    g->values[old].producer = -1;
    g->values[y].producer = ci;
    return 0;
}

int ox_pass_fuse_conv_bn(ox_pass_ctx *ctx, ir_graph *g) {
    /* graphs with subgraphs too: a body's capture counts as a reader
     * (ox_readers), so a captured Conv output is never folded away */
    unsigned char *dead = calloc((size_t)g->n_nodes + 1, 1);
    ox_readers r = {0};
    const int n_counted = g->n_values;
    if (!dead || ox_readers_init(&r, g) != 0) {
        free(dead);
        ox_readers_free(&r);
        return ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    int changes = 0, rc = 0;
    for (int i = 0; i < g->n_nodes && rc == 0; i++) {
        if (dead[i]) continue;
        int j = foldable_bn(g, &r, n_counted, i);
        if (j < 0 || dead[j]) continue;
        if (fold_one(g, i, j, ctx->err) != 0) {
            rc = -1;
            break;
        }
        if (ox_merge_node(g, dead, i, j, ctx->err) != 0) {
            rc = -1;
            break;
        }
        changes++;
    }
    if (rc == 0 && changes && ir_graph_remove_nodes(g, dead) != 0)
        rc = ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    free(dead);
    ox_readers_free(&r);
    return rc == 0 ? changes : -1;
}
