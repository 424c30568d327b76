/* Pad folding: a constant-mode Pad of the spatial axes whose every reader
 * is a convolution or a max pool taking it as its input becomes those
 * readers' own padding, and the Pad goes (D-FINE's and HGNetV2's stems pad
 * a Relu's output by one row and column before a 2x2 max pool and a
 * convolution: a copy of a 16 x 128 x 128 tensor, 0.04-0.06 ms of a
 * 7 ms run, for padding the kernels add for free).
 *
 * The value padded must be the one the reader's own padding stands for:
 *   - Conv (and onyx FusedConv): zero;
 *   - MaxPool: minus infinity, or zero where the Pad's input is a Relu's
 *     output (never below zero, so a zero never wins over an input value:
 *     the spatial pads are each smaller than the kernel, with unit
 *     dilation, so every window holds an input value). Strides of one or
 *     ceil_mode 0, so that the output's size and windows are the padded
 *     tensor's (with ceil_mode a last window starting in the end padding
 *     is dropped, one starting in a Pad's border is not); no Indices
 *     output (they would count the padded tensor's positions).
 * A reader with auto_pad other than NOTSET, a reader of anything else,
 * negative pads (cropping), pads on the batch or channel axis, a value
 * other than these, or a Pad output the graph shows by name leave the Pad
 * as it is. Float inputs (a constant_value of another type is not
 * read). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "optimizer/opt_util.h"
#include "optimizer/optimizer.h"

#define FP_MAX_RANK 8

/* A Pad of n's kind: its rank (from the pads' count), its begin and end
 * pads (pads[0..rank) and pads[rank..2 rank)) and value; 0 when n is not
 * a constant-mode float Pad with constant pads and value. */
static int pad_of(const ir_graph *g, const ir_node *n, int64_t *pads, float *value) {
    if (!ox_is_op(n, "Pad") || n->n_inputs < 1 || n->inputs[0] < 0 ||
        n->n_outputs != 1 || n->outputs[0] < 0 || n->n_implicit)
        return 0;
    if (strcmp(ir_attr_string(n, "mode", "constant"), "constant") != 0) return 0;
    size_t count = 0;
    *value = 0.0f;
    if (n->opset < 11) {
        const int64_t *p = ir_attr_ints(n, "pads", &count);
        if (!p || count == 0 || count % 2 || count > 2 * FP_MAX_RANK) return 0;
        memcpy(pads, p, count * sizeof *pads);
        const ir_attr *v = ir_node_attr(n, "value");
        if (v) *value = v->f;
        return (int)(count / 2);
    }
    /* opset 11+: pads and constant_value as inputs; axes (18+) not taken */
    if (n->n_inputs < 2 || n->inputs[1] < 0 || (n->n_inputs > 3 && n->inputs[3] >= 0)) return 0;
    const ox_tensor *p = ox_const_value(g, n->inputs[1]);
    if (!p || p->dtype != ONYX_INT64 || p->rank != 1 || p->dims[0] % 2 || p->dims[0] == 0 ||
        p->dims[0] > 2 * FP_MAX_RANK)
        return 0;
    memcpy(pads, p->data, (size_t)p->dims[0] * sizeof *pads);
    if (n->n_inputs > 2 && n->inputs[2] >= 0) {
        const ox_tensor *v = ox_const_value(g, n->inputs[2]);
        if (!v || v->dtype != ONYX_FLOAT32 || ox_tensor_numel(v) != 1) return 0;
        *value = ((const float *)v->data)[0];
    }
    return (int)(p->dims[0] / 2);
}

/* 1 when v is a Relu's output (the pass runs before fuse_conv_activation
 * folds a Relu into its convolution) */
static int is_relu(const ir_graph *g, int v) {
    const int p = g->values[v].producer;
    return p >= 0 && ox_is_op(&g->nodes[p], "Relu");
}

/* The reader's spatial attribute `name` (count spatial values), default
 * def, into out; 0 when it has another length. */
static int spatial_ints(const ir_node *n, const char *name, int count, int64_t def, int64_t *out) {
    size_t got = 0;
    const int64_t *v = ir_attr_ints(n, name, &got);
    if (!v) {
        for (int i = 0; i < count; i++) out[i] = def;
        return 1;
    }
    if (got != (size_t)count) return 0;
    memcpy(out, v, (size_t)count * sizeof *out);
    return 1;
}

/* 1 when reader r (reading the Pad's output at input 0 only) can take
 * the Pad's spatial pads sp (begin, then end; s axes) and value. */
static int can_absorb(const ir_graph *g, const ir_node *r, int y, int x, const int64_t *sp, int s, float value) {
    for (int k = 1; k < r->n_inputs; k++)
        if (r->inputs[k] == y) return 0;
    if (r->n_inputs < 1 || r->inputs[0] != y || r->n_implicit) return 0;
    if (strcmp(ir_attr_string(r, "auto_pad", "NOTSET"), "NOTSET") != 0) return 0;
    int64_t pads[2 * FP_MAX_RANK];
    if (!spatial_ints(r, "pads", 2 * s, 0, pads)) return 0;
    if (ox_is_conv(r)) {
        /* the weights' spatial rank must be the Pad's */
        const ox_tensor *w = r->n_inputs > 1 && r->inputs[1] >= 0 ? ox_const_value(g, r->inputs[1]) : NULL;
        const ir_value *wv = r->n_inputs > 1 && r->inputs[1] >= 0 ? &g->values[r->inputs[1]] : NULL;
        const int wrank = w ? w->rank : wv && wv->has_type ? wv->type.rank : -1;
        uint32_t bits;
        memcpy(&bits, &value, sizeof bits);
        return wrank == s + 2 && bits == 0; /* +0.0 */
    }
    if (!ox_is_op(r, "MaxPool")) return 0;
    for (int k = 1; k < r->n_outputs; k++)
        if (r->outputs[k] >= 0) return 0;
    if (!(value == -INFINITY || (value == 0.0f && is_relu(g, x)))) return 0;
    int64_t kernel[FP_MAX_RANK], strides[FP_MAX_RANK], dil[FP_MAX_RANK];
    size_t kn = 0;
    const int64_t *kv = ir_attr_ints(r, "kernel_shape", &kn);
    if (!kv || kn != (size_t)s) return 0;
    memcpy(kernel, kv, (size_t)s * sizeof *kernel);
    if (!spatial_ints(r, "strides", s, 1, strides) || !spatial_ints(r, "dilations", s, 1, dil)) return 0;
    const int ceil_mode = ir_attr_int(r, "ceil_mode", 0) != 0;
    for (int i = 0; i < s; i++) {
        if (dil[i] != 1 || (ceil_mode && strides[i] != 1)) return 0;
        /* every window keeps an input value: each side's total padding
         * below the kernel */
        if (sp[i] + pads[i] >= kernel[i] || sp[s + i] + pads[s + i] >= kernel[i]) return 0;
    }
    return 1;
}

/* Reader r's pads plus the Pad's spatial ones; r reads x instead. */
static int absorb(ir_node *r, int x, const int64_t *sp, int s, ox_error *err) {
    int64_t pads[2 * FP_MAX_RANK];
    (void)spatial_ints(r, "pads", 2 * s, 0, pads);
    for (int i = 0; i < 2 * s; i++) pads[i] += sp[i];
    if (ox_node_set_ints(r, "pads", pads, (size_t)(2 * s), err) != 0) return -1;
    r->inputs[0] = x;
    return 0;
}

int ox_pass_fold_pad(ox_pass_ctx *ctx, ir_graph *g) {
    ox_reader_lists rl;
    unsigned char *pinned = ox_pinned_values(g), *dead = calloc((size_t)g->n_nodes + 1, 1);
    if (!pinned || !dead || ox_reader_lists_init(&rl, g) != 0) {
        free(pinned);
        free(dead);
        return ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    int changes = 0, rc = 0;
    for (int i = 0; i < g->n_nodes && rc == 0; i++) {
        int64_t pads[2 * FP_MAX_RANK];
        float value;
        const int rank = pad_of(g, &g->nodes[i], pads, &value);
        if (rank < 3) continue;
        const int x = g->nodes[i].inputs[0], y = g->nodes[i].outputs[0], s = rank - 2;
        /* batch and channel unpadded, no cropping */
        int ok = !pinned[y] && ox_reader_count(&rl, y) > 0 && pads[0] == 0 && pads[1] == 0 && pads[rank] == 0 &&
                 pads[rank + 1] == 0;
        int64_t sp[2 * FP_MAX_RANK];
        for (int d = 0; d < s && ok; d++) {
            sp[d] = pads[2 + d];
            sp[s + d] = pads[rank + 2 + d];
            ok = sp[d] >= 0 && sp[s + d] >= 0;
        }
        for (int k = rl.start[y]; k < rl.start[y + 1] && ok; k++)
            ok = can_absorb(g, &g->nodes[rl.node[k]], y, x, sp, s, value);
        if (!ok) continue;
        /* a reader listed twice (reading y at two inputs) was refused above */
        for (int k = rl.start[y]; k < rl.start[y + 1] && rc == 0; k++)
            rc = absorb(&g->nodes[rl.node[k]], x, sp, s, ctx->err);
        dead[i] = 1;
        changes++;
    }
    if (rc == 0 && changes && ir_graph_remove_nodes(g, dead) != 0)
        rc = ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    ox_reader_lists_free(&rl);
    free(pinned);
    free(dead);
    return rc ? -1 : changes;
}
