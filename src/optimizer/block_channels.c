/* Channel-blocked layout between convolutions (level ALL, sessions whose
 * only provider is the CPU). Each float32 Conv or onyx FusedConv of one
 * group with constant weights, a 4-D input and at least 16 output
 * channels becomes an onyx BlockedConv (schema in src/ops/contrib.c),
 * whose output holds 16 channels per position together ([N, ceil(M/16),
 * H, W, 16]). Its readers then see:
 *   - another BlockedConv reading it as X or Z: the blocked value itself,
 *     so a chain of convolutions (with residual additions fused into
 *     them) never turns back to planes;
 *   - anything else (pooling, a graph output, a subgraph's capture): one
 *     UnblockChannels node writing the original value, under its name.
 * A BlockedConv whose X comes from elsewhere reads it planar, as it is;
 * a residual Z from elsewhere is blocked once by a BlockChannels node.
 * The kernels keep their epilogues (bias, residual, activation) and
 * their sums' order per output is the GEMM tile's, so values stay within
 * the model tests' tolerances.
 *
 * The layout is the CPU kernels' business, so the pass does not run for
 * sessions with a device provider, nor for a portable compile; and it
 * pays only with the AVX-512 tile (6 positions x 64 channels): on AVX2
 * (ONYX_CPU_ISA=avx2 on an Intel Xeon) the blocked tile of 6 positions x
 * 16 channels made ResNet-50 14% slower than the planar GEMM, so there
 * the pass leaves the graph alone.
 *
 * Where 512-bit operations run in two halves (AMD Zen 4; ox_cpu_512_split)
 * the blocked tile does as many multiply-adds per cycle as the planar
 * ones, and a 3x3 convolution that Winograd's path takes stays planar:
 * Winograd does 2.25 to 4 times fewer of them. ResNet-50 on Zen 4, one
 * thread, per node: 64 -> 64 on 56x56 1.05 ms by F(4x4, 3x3) against
 * 2.06 blocked, 256 -> 256 on 14x14 1.72 by F(2x2, 3x3) against 2.05;
 * the model 77-78 -> 70-73 ms (RT-DETR-small 14.4-14.7 -> 12.9-13.4).
 * On an Intel Xeon, with two full 512-bit units, the blocked tile beat
 * Winograd (256 -> 256 on 14x14: 1.72 against 2.5 ms). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/conv_extra.h"
#include "ep/cpu/kernels/cpu_isa.h"
#include "ops/contrib.h"
#include "optimizer/opt_util.h"
#include "optimizer/optimizer.h"

static const ir_type *typed(const ir_graph *g, int v) {
    return v >= 0 && g->values[v].has_type ? &g->values[v].type : NULL;
}

/* 1 when node n becomes a BlockedConv; keep_winograd: the CPU splits
 * 512-bit operations, so Winograd's convolutions stay planar. */
static int convertible(const ir_graph *g, const ir_node *n, int keep_winograd) {
    if (!ox_is_conv(n) || n->n_outputs != 1 || n->outputs[0] < 0 || n->n_inputs < 2 || n->n_implicit) return 0;
    if (n->n_inputs > 4 && n->inputs[4] >= 0) return 0; /* FusedConv's input scale S */
    const ir_type *x = typed(g, n->inputs[0]), *y = typed(g, n->outputs[0]);
    const ox_tensor *w = ox_const_value(g, n->inputs[1]);
    if (!x || !y || x->dtype != ONYX_FLOAT32 || x->rank != 4 || y->rank != 4 || !w ||
        w->dtype != ONYX_FLOAT32 || w->rank != 4 || w->dims[0] < OX_CHANNEL_BLOCK)
        return 0;
    if (x->dims[1] < 1 || x->dims[1] != w->dims[1] || ir_attr_int(n, "group", 1) != 1) return 0;
    /* one output position per image: the planar kernel runs it as a fully
     * connected layer over all images at once, four times faster than
     * a tile of one position (MobileNetV3's squeeze-and-excitation) */
    if (y->dims[2] == 1 && y->dims[3] == 1) return 0;
    if (keep_winograd && ox_conv_takes_winograd(n, w, y)) return 0;
    const char *pad = ir_attr_string(n, "auto_pad", "NOTSET");
    if (strcmp(pad, "NOTSET") != 0 && strcmp(pad, "VALID") != 0) return 0;
    if (n->n_inputs > 2 && n->inputs[2] >= 0 && !ox_const_value(g, n->inputs[2])) return 0;
    if (n->n_inputs > 3 && n->inputs[3] >= 0) { /* Z: the output's shape, or one image for all */
        const ir_type *z = typed(g, n->inputs[3]);
        if (!z || z->dtype != ONYX_FLOAT32 || z->rank != 4) return 0;
        for (int d = 1; d < 4; d++)
            if (z->dims[d] < 0 || z->dims[d] != y->dims[d]) return 0;
        if (z->dims[0] >= 0 && y->dims[0] >= 0 && z->dims[0] != y->dims[0] && z->dims[0] != 1) return 0;
    }
    return 1;
}

/* Whether blocking node n pays even where it needs a reorder
 * (BlockChannels or UnblockChannels) beside it. A reorder moves each
 * element once, and the blocked tile saves about a tenth of a planar
 * convolution's time: worth it from 384 products per output. (Measured
 * again once the reorders went through 8x8 transposes, 2 to 3 times
 * faster: thresholds of 64 to 256 made MobileNetV3 at most 1.5% faster
 * and RT-DETR up to 4% slower, whose stem convolutions of 16 and 32
 * output channels, 144 and 288 products, run slower blocked than as a
 * planar GEMM.) */
static int pays_with_reorder(const ir_graph *g, const ir_node *n) {
    const ox_tensor *w = ox_const_value(g, n->inputs[1]);
    return w->dims[1] * w->dims[2] * w->dims[3] >= 384;
}

/* 1 when node j reads value v only where a BlockedConv takes blocks (X
 * or Z) and is itself blocked. */
static int reads_blocked(const ir_graph *g, const unsigned char *conv, int j, int v) {
    const ir_node *n = &g->nodes[j];
    for (int k = 0; k < n->n_implicit; k++)
        if (n->implicit[k] == v) return 0;
    for (int k = 0; k < n->n_inputs; k++)
        if (n->inputs[k] == v && (!conv[j] || (k != 0 && k != 3))) return 0;
    return 1;
}

/* Drops the candidates whose saving would not pay for the reorders they
 * need (pays_with_reorder), until none changes: dropping one can make its
 * neighbours need a reorder. */
static int keep_worthwhile(const ir_graph *g, const unsigned char *pinned, unsigned char *conv) {
    ox_reader_lists r;
    if (ox_reader_lists_init(&r, g) != 0) return -1;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < g->n_nodes; i++) {
            if (!conv[i]) continue;
            const ir_node *n = &g->nodes[i];
            const int y = n->outputs[0];
            if (pays_with_reorder(g, n)) continue;
            int reorder = pinned[y];
            if (n->n_inputs > 3 && n->inputs[3] >= 0) {
                const int zp = g->values[n->inputs[3]].producer;
                reorder |= zp < 0 || !conv[zp];
            }
            for (int k = r.start[y]; k < r.start[y + 1] && !reorder; k++)
                reorder = !reads_blocked(g, conv, r.node[k], y);
            if (reorder) conv[i] = 0, changed = 1;
        }
    }
    ox_reader_lists_free(&r);
    return 0;
}

/* Appends node op(from) -> to of the onyx domain. */
static int add_reorder(ir_graph *g, const char *op, int from, int to, int64_t channels, ox_error *err) {
    char name[512];
    snprintf(name, sizeof name, "%s/%s", g->values[to].name, op);
    int i = ir_graph_add_node(g, name, op, "onyx", err);
    if (i < 0) return -1;
    ir_node *n = &g->nodes[i];
    n->opset = 1;
    if (!(n->outputs = malloc(sizeof *n->outputs))) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    n->n_outputs = 1;
    n->outputs[0] = -1;
    ox_node_set_output(g, i, 0, to);
    if (ox_node_set_input(n, 0, from, err) != 0) return -1;
    return channels > 0 ? ox_node_set_int(n, "channels", channels, err) : 0;
}

/* The blocked twin of planar value v (blocked[v]), made by a
 * BlockChannels node the first time it is asked for. */
static int blocked_twin(ir_graph *g, int *blocked, int v, ox_error *err) {
    if (blocked[v] >= 0) return blocked[v];
    int b = ox_add_value(g, g->values[v].name, "blocked", err);
    if (b < 0 || add_reorder(g, "BlockChannels", v, b, 0, err) != 0) return -1;
    g->values[b].blocked_of = v;
    return blocked[v] = b;
}

/* pinned: ox_pinned_values of the graph before the rewrite (which only
 * adds values, so the original ones keep their ids). */
static int rewrite(ir_graph *g, const unsigned char *conv, const unsigned char *pinned, int n_conv_nodes,
                   int *blocked, int64_t *channels, ox_error *err) {
    const int n_values = g->n_values;
    /* each BlockedConv writes a new blocked value */
    for (int i = 0; i < n_conv_nodes; i++) {
        if (!conv[i]) continue;
        ir_node *n = &g->nodes[i];
        const int y = n->outputs[0];
        const int b = ox_add_value(g, g->values[y].name, "blocked", err);
        if (b < 0) return -1;
        g->values[b].blocked_of = y;
        channels[y] = ox_const_value(g, n->inputs[1])->dims[0];
        ox_node_set_output(g, i, 0, b);
        blocked[y] = b;
        if (ox_node_retype(n, "BlockedConv", "onyx", 1, err) != 0) return -1;
        if (n->n_inputs > 4) n->n_inputs = 4; /* FusedConv's omitted S */
        if (strcmp(ir_attr_string(n, "auto_pad", "NOTSET"), "VALID") == 0 &&
            ox_node_set_string(n, "auto_pad", "NOTSET", err) != 0)
            return -1;
    }
    /* X reads the blocked value when there is one; Z always does */
    for (int i = 0; i < n_conv_nodes; i++) {
        if (!conv[i]) continue;
        const int x = g->nodes[i].inputs[0];
        if (x < n_values && blocked[x] >= 0) g->nodes[i].inputs[0] = blocked[x];
        if (g->nodes[i].n_inputs > 3 && g->nodes[i].inputs[3] >= 0) {
            const int z = blocked_twin(g, blocked, g->nodes[i].inputs[3], err);
            if (z < 0) return -1;
            g->nodes[i].inputs[3] = z;
        }
    }
    /* planar values still read (or seen by name) come back from blocks */
    ox_readers r;
    if (ox_readers_init(&r, g) != 0) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    int rc = 0;
    for (int v = 0; v < n_values && rc == 0; v++)
        if (channels[v] > 0 && (r.count[v] > 0 || pinned[v]))
            rc = add_reorder(g, "UnblockChannels", blocked[v], v, channels[v], err);
    ox_readers_free(&r);
    return rc;
}

int ox_pass_block_channels(ox_pass_ctx *ctx, ir_graph *g) {
    if (!ctx->cpu_only || ox_cpu_isa_active() != OX_ISA_AVX512) return 0;
    /* shape inference (and the CPU's 512-bit width) only where there is
     * a convolution to look at: in the pipeline's later rounds they are
     * all blocked already */
    int any = 0, split = 0;
    for (int i = 0; i < g->n_nodes && !any; i++) any = ox_is_conv(&g->nodes[i]);
    if (!any) return 0;
    if (ox_cpu_512_split(&split, ctx->err) != 0) return -1;
    ox_infer_quietly(g);
    const int n_nodes = g->n_nodes, n_values = g->n_values;
    unsigned char *conv = calloc((size_t)n_nodes, 1), *pinned = ox_pinned_values(g);
    int *blocked = malloc(((size_t)n_values + 1) * sizeof *blocked);
    int64_t *channels = calloc((size_t)n_values + 1, sizeof *channels);
    int changes = 0, rc = conv && pinned && blocked && channels ? 0 : -1;
    for (int i = 0; rc == 0 && i < n_nodes; i++) conv[i] = (unsigned char)convertible(g, &g->nodes[i], split);
    if (rc == 0) rc = keep_worthwhile(g, pinned, conv);
    if (rc != 0) ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; rc == 0 && i < n_nodes; i++) changes += conv[i];
    if (rc == 0 && changes) {
        for (int v = 0; v < n_values; v++) blocked[v] = -1;
        /* blocked[] is indexed by the original values only (rewrite asks
         * for no others) */
        rc = rewrite(g, conv, pinned, n_nodes, blocked, channels, ctx->err);
        if (rc == 0) rc = ox_model_import_domain(ctx->model, "onyx", 1, ctx->err);
    }
    free(conv);
    free(pinned);
    free(blocked);
    free(channels);
    return rc ? -1 : changes;
}
