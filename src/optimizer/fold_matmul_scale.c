/* A product scaled by a power of two, scaled before the product instead
 * (level ALL): attention's scores
 *   S = MatMul(Q, K^T) / 4          Q [.., L, d], K^T [.., d, L]
 * become MatMul(Q / 4, K^T), so the division runs over the L x d operand
 * (336 x 16 in DETR's encoder) instead of the L x L product (336 x 336).
 * Scaling by 2^e is exact in float (no rounding, away from overflow and
 * the subnormal range), so the results are the same bits; other scales
 * would round differently and are left alone. The rewrite reuses both
 * nodes: the Mul/Div now scales the smaller operand into a new value,
 * and the MatMul produces what the Mul/Div produced. A constant operand
 * (weights) is then folded by fold_constants. Only when the product has
 * no other reader and keeps no name, and when the operands' types are
 * known (ranks, the matrix sizes or that they come at run time). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "optimizer/opt_util.h"
#include "optimizer/optimizer.h"

/* 1 when t is a float32 scalar (at most rank 1) 2^e with |e| <= 16. */
static int power_of_two_scalar(const ox_tensor *t) {
    if (!t || t->dtype != ONYX_FLOAT32 || t->rank > 1 || ox_tensor_numel(t) != 1) return 0;
    float v = *(const float *)t->data;
    if (!isfinite(v) || v == 0.0f) return 0;
    int e;
    float m = frexpf(v, &e);
    return (m == 0.5f || m == -0.5f) && e >= -15 && e <= 17;
}

/* Rows and columns (the last two dimensions) of value v's float32 type;
 * 0 when v has no such type. A dimension not known before the run (a
 * sequence length: DETR's tokens depend on the image size) counts as
 * SYMBOLIC_DIM: the rewrite gives the same bits whichever operand it
 * picks, so a wrong guess costs only speed, on small tensors. The batch
 * dimensions are left out: an operand's never exceed the product's,
 * which broadcasts them, so comparing matrix sizes compares the tensors. */
#define SYMBOLIC_DIM 256
static int matrix_dims(const ir_graph *g, int v, int64_t *rows, int64_t *cols) {
    if (v < 0 || v >= g->n_values || !g->values[v].has_type) return 0;
    const ir_type *t = &g->values[v].type;
    if (t->dtype != ONYX_FLOAT32 || t->rank < 2) return 0;
    *rows = t->dims[t->rank - 2] < 0 ? SYMBOLIC_DIM : t->dims[t->rank - 2];
    *cols = t->dims[t->rank - 1] < 0 ? SYMBOLIC_DIM : t->dims[t->rank - 1];
    return *rows < ((int64_t)1 << 31) && *cols < ((int64_t)1 << 31);
}

/* The operand of MatMul m worth scaling instead of its product: its
 * matrix at most half the product's; -1 when none or sizes are unknown. */
static int smaller_operand(const ir_graph *g, const ir_node *m) {
    int64_t ar, ac, br, bc;
    if (!matrix_dims(g, m->inputs[0], &ar, &ac) || !matrix_dims(g, m->inputs[1], &br, &bc)) return -1;
    int64_t a = ar * ac, b = br * bc, y = ar * bc;
    int k = a <= b ? 0 : 1;
    return (k ? b : a) * 2 <= y ? k : -1;
}

/* A fresh value named after node n's name: "<n>/scaled_operand[.k]";
 * -2 when no such name is free (the rewrite is skipped), -1 out of
 * memory (err set). */
static int fresh_value(ir_graph *g, const ir_node *n, ox_error *err) {
    char name[512];
    for (int k = 0; k < 100; k++) {
        int len = k ? snprintf(name, sizeof name, "%s/scaled_operand.%d", n->name ? n->name : "", k)
                    : snprintf(name, sizeof name, "%s/scaled_operand", n->name ? n->name : "");
        if (len < 0 || (size_t)len >= sizeof name) return -2;
        if (ir_graph_find(g, name) < 0) return ir_graph_value(g, name, err);
    }
    return -2;
}

int ox_pass_fold_matmul_scale(ox_pass_ctx *ctx, ir_graph *g) {
    int any = 0;
    for (int i = 0; i < g->n_nodes && !any; i++) any = ox_is_op(&g->nodes[i], "MatMul");
    if (!any) return 0;
    ox_readers r;
    unsigned char *pinned, *dead;
    if (ox_match_state_init(g, &r, &pinned, &dead) != 0)
        return ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    const int known = g->n_values; /* values made here have no reader counts */
    int changes = 0, rc = 0, inferred = 0;
    for (int i = 0; i < g->n_nodes && rc == 0; i++) {
        ir_node *n = &g->nodes[i];
        int div = ox_is_op(n, "Div");
        if (!(div || ox_is_op(n, "Mul")) || n->n_inputs != 2 || n->n_outputs != 1 || n->n_implicit)
            continue;
        /* Div(product, c); Mul with c on either side */
        for (int side = 0; side < (div ? 1 : 2); side++) {
            int v = n->inputs[side], c = n->inputs[1 - side];
            if (v < 0 || v >= known || pinned[v] || r.count[v] != 1) continue;
            if (!power_of_two_scalar(ox_const_value(g, c))) continue;
            int mi = g->values[v].producer;
            if (mi < 0 || dead[mi]) continue;
            ir_node *m = &g->nodes[mi];
            if (!ox_is_op(m, "MatMul") || m->n_inputs != 2 || m->n_outputs != 1) continue;
            int k = smaller_operand(g, m);
            if (k < 0 && !inferred) {
                /* sizes from inference, once, when the model's own value
                 * types do not give them */
                inferred = 1;
                (void)ox_infer_quietly(g);
                n = &g->nodes[i];
                m = &g->nodes[mi];
                k = smaller_operand(g, m);
            }
            if (k < 0) continue;
            int s = fresh_value(g, n, ctx->err);
            if (s == -2) break;
            if (s < 0) {
                rc = -1;
                break;
            }
            n = &g->nodes[i];
            m = &g->nodes[mi];
            int out = n->outputs[0];
            n->inputs[side] = m->inputs[k];
            ox_node_set_output(g, i, 0, s);
            m->inputs[k] = s;
            ox_node_set_output(g, mi, 0, out);
            changes++;
            break;
        }
    }
    ox_match_state_free(&r, pinned, dead);
    return rc == 0 ? changes : -1;
}
