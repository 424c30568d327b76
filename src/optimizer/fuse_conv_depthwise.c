/* Convolution + depthwise fusion: a network's first convolution (Conv or
 * onyx FusedConv with at most an activation; at most 4 input and 16
 * output channels, one group, kernel sides up to 11) whose output only a
 * depthwise convolution reads becomes one onyx ConvDepthwise, which the
 * CPU provider runs a band of output rows at a time with the first
 * output kept channel-innermost in cache, where the depthwise arithmetic
 * reads it (src/ep/cpu/kernels/conv_chain.c: MobileNetV3's stem and first
 * depthwise layer).
 *
 * Taken where the first output is large (at least CHAIN_MIN_BYTES per
 * image). Both convolutions need constant float32 weights and explicit
 * padding (auto_pad NOTSET); the depthwise layer padding below its
 * kernel's extent. Runs after fuse_conv_activation, so both activations
 * are already in the convolutions. */
#include <stdlib.h>
#include <string.h>

#include "optimizer/opt_util.h"
#include "optimizer/optimizer.h"

/* the first output's bytes per image from which the pair is fused: past
 * half a core's L2 it no longer stays in cache beside the layers' other
 * data */
#define CHAIN_MIN_BYTES ((int64_t)512 << 10)
/* the kernel's limits: input and output channels, kernel sides, strides
 * and dilations of the first convolution */
#define CHAIN_MAX_C 4
#define CHAIN_MAX_M 16
#define CHAIN_MAX_K 11
#define CHAIN_MAX_STEP 8

/* The constant float32 4-D weights of convolution n, or NULL. */
static const ox_tensor *weights4(const ir_graph *g, const ir_node *n) {
    if (n->n_inputs < 2 || n->inputs[1] < 0) return NULL;
    const ox_tensor *w = ox_const_value(g, n->inputs[1]);
    return w && w->dtype == ONYX_FLOAT32 && w->rank == 4 && w->dims[0] >= 1 ? w : NULL;
}

/* 1 when n is a convolution the pass may take: no residual or input
 * scale, one output, explicit padding, 2-D constant weights. */
static int plain_conv(const ir_graph *g, const ir_node *n) {
    return ox_is_conv(n) && n->n_inputs >= 2 && n->n_inputs <= 3 && n->n_outputs == 1 && n->outputs[0] >= 0 &&
           !n->n_implicit && strcmp(ir_attr_string(n, "auto_pad", "NOTSET"), "NOTSET") == 0 && weights4(g, n);
}

/* The attribute `name` of n as `count` integers (def when absent); 0
 * when present with another count. */
static int ints_or(const ir_node *n, const char *name, size_t count, int64_t def, int64_t *out) {
    size_t have = 0;
    const int64_t *v = ir_attr_ints(n, name, &have);
    if (v && have != count) return 0;
    for (size_t i = 0; i < count; i++) out[i] = v ? v[i] : def;
    return 1;
}

/* 1 when d is a depthwise convolution the kernel bands: [M, 1, KH, KW]
 * weights, group M, padding below the kernel's extent. */
static int depthwise_fits(const ir_graph *g, const ir_node *d, int64_t *strides, int64_t *pads,
                          int64_t *dils) {
    if (!plain_conv(g, d)) return 0;
    const ox_tensor *w = weights4(g, d);
    if (w->dims[1] != 1 || ir_attr_int(d, "group", 1) != w->dims[0]) return 0;
    if (!ints_or(d, "strides", 2, 1, strides) || !ints_or(d, "pads", 4, 0, pads) ||
        !ints_or(d, "dilations", 2, 1, dils))
        return 0;
    for (int i = 0; i < 2; i++) {
        if (strides[i] < 1 || strides[i] > CHAIN_MAX_STEP || dils[i] < 1 || dils[i] > 64 || w->dims[i + 2] > 64)
            return 0;
        const int64_t ext = (w->dims[i + 2] - 1) * dils[i] + 1;
        if (pads[i] < 0 || pads[i + 2] < 0 || pads[i] >= ext || pads[i + 2] >= ext) return 0;
    }
    return 1;
}

/* 1 when c is a first convolution the kernel bands. */
static int first_fits(const ir_graph *g, const ir_node *c) {
    if (!plain_conv(g, c) || ir_attr_int(c, "group", 1) != 1) return 0;
    const ox_tensor *w = weights4(g, c);
    int64_t strides[2], dils[2];
    if (w->dims[0] > CHAIN_MAX_M || w->dims[1] > CHAIN_MAX_C || w->dims[2] > CHAIN_MAX_K ||
        w->dims[3] > CHAIN_MAX_K || !ints_or(c, "strides", 2, 1, strides) || !ints_or(c, "dilations", 2, 1, dils))
        return 0;
    for (int i = 0; i < 2; i++)
        if (strides[i] > CHAIN_MAX_STEP || dils[i] > CHAIN_MAX_STEP) return 0;
    return 1;
}

/* The first convolution of a pair the pass may take at node di (the
 * depthwise layer: its geometry into strides, pads and dils), or -1;
 * without the first output's size, which needs the shapes. */
static int pair_at(const ir_graph *g, const ox_readers *r, const unsigned char *pinned, const unsigned char *dead,
                   int di, int64_t *strides, int64_t *pads, int64_t *dils) {
    if (dead[di] || !depthwise_fits(g, &g->nodes[di], strides, pads, dils)) return -1;
    const int x = g->nodes[di].inputs[0];
    const int ci = x >= 0 ? g->values[x].producer : -1;
    if (ci < 0 || dead[ci] || r->count[x] != 1 || pinned[x] || !first_fits(g, &g->nodes[ci])) return -1;
    return weights4(g, &g->nodes[ci])->dims[0] == weights4(g, &g->nodes[di])->dims[0] ? ci : -1;
}

/* 1 when value x, the first output, holds at least CHAIN_MIN_BYTES per
 * image by the shapes inference knows. */
static int large_enough(const ir_graph *g, int x) {
    const ir_type *t = &g->values[x].type;
    if (t->rank != 4) return 0;
    int64_t bytes = (int64_t)sizeof(float);
    for (int d = 1; d < 4; d++) {
        if (t->dims[d] < 1 || t->dims[d] > ((int64_t)1 << 20)) return 0;
        bytes *= t->dims[d];
    }
    return bytes >= CHAIN_MIN_BYTES;
}

/* Node ci (the first convolution) becomes ConvDepthwise producing d's
 * output; d is merged into it. */
static int rewrite(ir_graph *g, unsigned char *dead, int ci, int di, const int64_t *strides, const int64_t *pads,
                   const int64_t *dils, ox_error *err) {
    ir_node *c = &g->nodes[ci];
    const ir_node *d = &g->nodes[di];
    const int wd = d->inputs[1], bd = d->n_inputs > 2 ? d->inputs[2] : -1, out = d->outputs[0];
    const char *act = ir_attr_string(d, "activation", "");
    size_t np = 0;
    const float *params = ir_attr_floats(d, "activation_params", &np);
    if (ox_node_set_input(c, 3, wd, err) || ox_node_set_input(c, 4, bd, err) ||
        ox_node_set_ints(c, "depthwise_strides", strides, 2, err) ||
        ox_node_set_ints(c, "depthwise_pads", pads, 4, err) ||
        ox_node_set_ints(c, "depthwise_dilations", dils, 2, err) ||
        ox_node_set_string(c, "depthwise_activation", act, err) ||
        (np && ox_node_set_floats(c, "depthwise_activation_params", params, np, err)) ||
        ox_node_retype(c, "ConvDepthwise", "onyx", 1, err))
        return -1;
    /* d's output is now c's: c's old output has no producer left */
    ox_node_set_output(g, ci, 0, out);
    return ox_merge_node(g, dead, ci, di, err);
}

int ox_pass_fuse_conv_depthwise(ox_pass_ctx *ctx, ir_graph *g) {
    if (!ox_pass_may_fuse(ctx, "onyx", "ConvDepthwise")) return 0;
    ox_readers r;
    unsigned char *pinned, *dead;
    if (ox_match_state_init(g, &r, &pinned, &dead) != 0) return ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    int64_t strides[2], pads[4], dils[2];
    int any = 0;
    for (int di = 0; di < g->n_nodes && !any; di++) any = pair_at(g, &r, pinned, dead, di, strides, pads, dils) >= 0;
    /* the first output's size needs the shapes (an optimized file brings
     * its own); inferred only for a graph with a pair, so that other
     * models' sessions do not pay for it */
    if (!any || (!ctx->model->compiled && ox_infer_quietly(g) != 0)) {
        ox_match_state_free(&r, pinned, dead);
        return 0;
    }
    int changes = 0, rc = 0;
    for (int di = 0; di < g->n_nodes && rc == 0; di++) {
        const int ci = pair_at(g, &r, pinned, dead, di, strides, pads, dils);
        if (ci < 0 || !large_enough(g, g->nodes[di].inputs[0])) continue;
        if (rewrite(g, dead, ci, di, strides, pads, dils, ctx->err) != 0) {
            rc = -1;
            break;
        }
        changes++;
    }
    if (rc == 0 && changes && ox_model_import_domain(ctx->model, "onyx", 1, ctx->err) != 0) rc = -1;
    if (rc == 0 && changes && ir_graph_remove_nodes(g, dead) != 0)
        rc = ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    ox_match_state_free(&r, pinned, dead);
    return rc == 0 ? changes : -1;
}
