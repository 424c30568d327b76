/* MatMul + bias + activation fusion (level ALL): the linear layers of
 * transformer blocks and detection heads,
 *   Y = act(MatMul(A, W) + b)     W a constant [K, N] float32 matrix,
 *                                 b a constant with N values on the last axis
 * become one onyx.FusedMatMul(A, W, b) node with the activation as an
 * attribute (src/ops/onyx_matmul.c), computing the same values (the
 * same float operations, in the same order) in one pass over the output
 * instead of three. The activation is one of Relu, Clip, Sigmoid,
 * HardSigmoid, HardSwish, LeakyRelu, Tanh, Gelu (ONNX 20's, either
 * approximation, or com.microsoft's Gelu / one-input FastGelu, as the
 * Gelu pattern pass writes them), or x * Sigmoid(x) (SiLU). A MatMul whose
 * product has another reader, or is a graph output or read by a subgraph
 * by name, is left alone, and so is an Add or activation in that
 * position. Without a constant bias an activation fuses too (LLaMA's SiLU
 * gate, x W then x * Sigmoid(x): the activation in the product's
 * epilogue). A MatMul alone stays: the plain kernel packs constant
 * weights once too.
 *
 * Gemm(A, B, C) with a constant B, C absent or a constant bias of N
 * values, transA 0, alpha and beta 1, followed by an activation, becomes
 * the same FusedMatMul (with its transB: the weights stay as stored, so
 * loading an optimized file copies nothing); a Gemm alone already adds its bias in one pass and is
 * left as it is. Only where every provider of the session runs
 * FusedMatMul (ox_pass_may_fuse): a device provider that runs MatMul, Add
 * and the activations but not this operator keeps them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "optimizer/opt_util.h"
#include "optimizer/optimizer.h"

static int is_op(const ir_node *n, const char *domain, const char *op) {
    return strcmp(n->domain, domain) == 0 && strcmp(n->op_type, op) == 0;
}

/* A float32 scalar constant input k of n, or dflt when omitted; -1 when
 * it is given but not a constant scalar. */
static int const_scalar(const ir_graph *g, const ir_node *n, int k, float dflt, float *out) {
    *out = dflt;
    if (!ir_node_has_input(n, k)) return 0;
    const ox_tensor *t = ox_const_value(g, n->inputs[k]);
    if (!t || t->dtype != ONYX_FLOAT32 || ox_tensor_numel(t) != 1) return -1;
    *out = *(const float *)t->data;
    return 0;
}

typedef struct act_match {
    const char *name;
    float params[2];
    size_t n_params;
    int nodes[2]; /* nodes it replaces (-1: none) */
    int out;      /* the value it ends in */
} act_match;

/* The activation that alone reads value y, in m; 0 when there is one. */
static int match_activation(const ir_graph *g, const ox_readers *r, const unsigned char *pinned,
                            int y, act_match *m) {
    memset(m, 0, sizeof *m);
    m->nodes[0] = m->nodes[1] = -1;
    if (y < 0 || pinned[y]) return -1;
    if (r->count[y] == 2) {
        /* SiLU: y * Sigmoid(y) */
        int mul = r->node[y];
        const ir_node *mn = &g->nodes[mul];
        if (!is_op(mn, "", "Mul") || mn->n_inputs != 2 || mn->n_outputs != 1) return -1;
        int other = mn->inputs[0] == y ? mn->inputs[1] : mn->inputs[1] == y ? mn->inputs[0] : -1;
        if (other < 0 || other == y) return -1;
        int s = g->values[other].producer;
        if (s < 0 || !is_op(&g->nodes[s], "", "Sigmoid") || g->nodes[s].inputs[0] != y ||
            ox_sole_reader(g, r, pinned, other) != mul)
            return -1;
        m->name = "SiLU";
        m->nodes[0] = s;
        m->nodes[1] = mul;
        m->out = mn->outputs[0];
        return m->out >= 0 ? 0 : -1;
    }
    int j = ox_sole_reader(g, r, pinned, y);
    if (j < 0) return -1;
    const ir_node *n = &g->nodes[j];
    if (n->n_inputs < 1 || n->inputs[0] != y || n->n_outputs < 1 || n->outputs[0] < 0) return -1;
    for (int k = 1; k < n->n_outputs; k++)
        if (n->outputs[k] >= 0) return -1;
    m->nodes[0] = j;
    m->out = n->outputs[0];
    if (!n->domain[0]) {
        static const char *const PLAIN[] = {"Relu", "Sigmoid", "Tanh", "HardSwish"};
        for (size_t i = 0; i < sizeof PLAIN / sizeof PLAIN[0]; i++)
            if (strcmp(n->op_type, PLAIN[i]) == 0) {
                m->name = PLAIN[i];
                return 0;
            }
        if (strcmp(n->op_type, "LeakyRelu") == 0) {
            m->name = "LeakyRelu";
            m->params[0] = ir_attr_float(n, "alpha", 0.01f);
            m->n_params = 1;
            return 0;
        }
        if (strcmp(n->op_type, "HardSigmoid") == 0) {
            m->name = "HardSigmoid";
            m->params[0] = ir_attr_float(n, "alpha", 0.2f);
            m->params[1] = ir_attr_float(n, "beta", 0.5f);
            m->n_params = 2;
            return 0;
        }
        if (strcmp(n->op_type, "Clip") == 0) {
            m->name = "Clip";
            m->n_params = 2;
            if (n->opset < 11) {
                m->params[0] = ir_attr_float(n, "min", -3.402823e+38f);
                m->params[1] = ir_attr_float(n, "max", 3.402823e+38f);
                return 0;
            }
            return const_scalar(g, n, 1, -INFINITY, &m->params[0]) ||
                           const_scalar(g, n, 2, INFINITY, &m->params[1])
                       ? -1
                       : 0;
        }
        if (strcmp(n->op_type, "Gelu") == 0) {
            const char *ap = ir_attr_string(n, "approximate", "none");
            m->name = strcmp(ap, "tanh") == 0   ? "GeluTanh"
                      : strcmp(ap, "none") == 0 ? "Gelu"
                                                : NULL;
            return m->name ? 0 : -1;
        }
        return -1;
    }
    if (is_op(n, "com.microsoft", "Gelu") && n->n_inputs == 1) {
        m->name = "Gelu";
        return 0;
    }
    if (is_op(n, "com.microsoft", "FastGelu") && ir_node_input_count(n) == 1) {
        m->name = "GeluTanh";
        return 0;
    }
    return -1;
}

/* The bias of Add node j that adds a constant to value v: its value id,
 * or -1. It must hold n values along the last axis, with a rank that
 * cannot widen the product's (a_rank: A's rank, -1 when unknown). */
static int match_bias(const ir_graph *g, const ir_node *add, int v, int64_t n, int a_rank) {
    if (!is_op(add, "", "Add") || add->n_inputs != 2 || add->n_outputs != 1 || add->outputs[0] < 0)
        return -1;
    int b = add->inputs[0] == v ? add->inputs[1] : add->inputs[1] == v ? add->inputs[0] : -1;
    if (b < 0 || b == v) return -1;
    const ox_tensor *t = ox_const_value(g, b);
    if (!t || t->dtype != ONYX_FLOAT32 || t->rank < 1 || ox_tensor_numel(t) != n ||
        t->dims[t->rank - 1] != n)
        return -1;
    int out_rank = a_rank < 0 ? 1 : (a_rank < 2 ? 1 : a_rank);
    if (t->rank > out_rank) return -1;
    return b;
}

/* MatMul node i with the bias Add node `add` (-1: none, bias -1) and the
 * activation act (act->name NULL: none) as a FusedMatMul. */
static int fuse_one(ir_graph *g, int i, int bias, int add, const act_match *act,
                    unsigned char *dead, ox_error *err) {
    ir_node *n = &g->nodes[i];
    int out = act->name ? act->out : g->nodes[add].outputs[0];
    if (ox_node_retype(n, "FusedMatMul", "onyx", 1, err) || (bias >= 0 && ox_node_set_input(n, 2, bias, err)) ||
        ox_node_set_string(n, "activation", act->name ? act->name : "", err) ||
        (act->n_params &&
         ox_node_set_floats(n, "activation_params", act->params, act->n_params, err)))
        return -1;
    ox_node_set_output(g, i, 0, out);
    if (add >= 0 && ox_merge_node(g, dead, i, add, err) != 0) return -1;
    for (int k = 0; k < 2; k++)
        if (act->nodes[k] >= 0 && ox_merge_node(g, dead, i, act->nodes[k], err) != 0) return -1;
    return 0;
}

/* Gemm node i followed by an activation (in *act) as a FusedMatMul;
 * 1 when fused, 0 when it does not match, -1 on error. */
static int fuse_gemm(ir_graph *g, int i, const ox_readers *r, const unsigned char *pinned,
                     unsigned char *dead, ox_error *err) {
    const ir_node *n = &g->nodes[i];
    if (n->n_outputs != 1 || n->n_inputs < 2 || n->inputs[0] < 0) return 0;
    if (ir_attr_int(n, "transA", 0) != 0 || ir_attr_float(n, "alpha", 1.0f) != 1.0f) return 0;
    const ox_tensor *w = ox_const_value(g, n->inputs[1]);
    if (!w || w->dtype != ONYX_FLOAT32 || w->rank != 2) return 0;
    int tb = ir_attr_int(n, "transB", 0) != 0;
    int64_t nn = w->dims[tb ? 0 : 1];
    int bias = ir_node_has_input(n, 2) ? n->inputs[2] : -1;
    if (bias >= 0) {
        const ox_tensor *c = ox_const_value(g, bias);
        if (!c || c->dtype != ONYX_FLOAT32 || ir_attr_float(n, "beta", 1.0f) != 1.0f ||
            ox_tensor_numel(c) != nn || c->rank < 1 || c->rank > 2 || c->dims[c->rank - 1] != nn)
            return 0;
    }
    act_match act;
    if (match_activation(g, r, pinned, n->outputs[0], &act) != 0 || !act.name) return 0;
    for (int q = 0; q < 2; q++)
        if (act.nodes[q] >= 0 && dead[act.nodes[q]]) return 0;
    ir_node *m = &g->nodes[i];
    for (int a = 0; a < m->n_attrs; a++) ir_attr_clear(&m->attrs[a]);
    m->n_attrs = 0;
    if (ox_node_retype(m, "FusedMatMul", "onyx", 1, err) ||
        (tb && ox_node_set_int(m, "transB", 1, err)) ||
        ox_node_set_string(m, "activation", act.name, err) ||
        (act.n_params && ox_node_set_floats(m, "activation_params", act.params, act.n_params, err)))
        return -1;
    m->n_inputs = bias >= 0 ? 3 : 2;
    ox_node_set_output(g, i, 0, act.out);
    for (int q = 0; q < 2; q++)
        if (act.nodes[q] >= 0 && ox_merge_node(g, dead, i, act.nodes[q], err) != 0) return -1;
    return 1;
}

int ox_pass_fuse_matmul(ox_pass_ctx *ctx, ir_graph *g) {
    int any = 0, may = ox_pass_may_fuse(ctx, "onyx", "FusedMatMul");
    for (int i = 0; i < g->n_nodes && !any && may; i++)
        any = is_op(&g->nodes[i], "", "MatMul") || is_op(&g->nodes[i], "", "Gemm");
    if (!any) return 0;
    /* A's rank decides a bias's fit; types are inferred only when a
     * candidate's A has none (a loaded optimized file has them all) */
    int inferred = 0, typed = 1;
    ox_readers r;
    unsigned char *pinned, *dead;
    if (ox_match_state_init(g, &r, &pinned, &dead) != 0)
        return ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    int changes = 0, rc = 0;
    for (int i = 0; i < g->n_nodes && rc == 0; i++) {
        const ir_node *n = &g->nodes[i];
        if (!dead[i] && is_op(n, "", "Gemm")) {
            int f = fuse_gemm(g, i, &r, pinned, dead, ctx->err);
            if (f < 0) rc = -1;
            changes += f > 0;
            continue;
        }
        if (dead[i] || !is_op(n, "", "MatMul") || n->n_inputs != 2 || n->n_outputs != 1) continue;
        const ox_tensor *w = ox_const_value(g, n->inputs[1]);
        if (!w || w->dtype != ONYX_FLOAT32 || w->rank != 2 || n->inputs[0] < 0) continue;
        if (!g->values[n->inputs[0]].has_type && !inferred) {
            typed = ox_infer_quietly(g) == 0;
            inferred = 1;
        }
        const ir_value *a = &g->values[n->inputs[0]];
        int a_rank = typed && a->has_type ? a->type.rank : -1;
        int add = ox_sole_reader(g, &r, pinned, n->outputs[0]);
        int bias = add >= 0 && !dead[add] ? match_bias(g, &g->nodes[add], n->outputs[0], w->dims[1], a_rank) : -1;
        if (bias < 0) add = -1;
        act_match act;
        if (match_activation(g, &r, pinned, add >= 0 ? g->nodes[add].outputs[0] : n->outputs[0], &act) != 0)
            act.name = NULL;
        if (act.name && ((act.nodes[0] >= 0 && dead[act.nodes[0]]) ||
                         (act.nodes[1] >= 0 && dead[act.nodes[1]])))
            act.name = NULL;
        if (!act.name) act.nodes[0] = act.nodes[1] = -1;
        if (bias < 0 && !act.name) continue;
        if (fuse_one(g, i, bias, add, &act, dead, ctx->err) != 0) {
            rc = -1;
            break;
        }
        changes++;
    }
    if (rc == 0 && changes) {
        if (ox_model_import_domain(ctx->model, "onyx", 1, ctx->err) != 0)
            rc = -1;
        else if (ir_graph_remove_nodes(g, dead) != 0)
            rc = ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    ox_match_state_free(&r, pinned, dead);
    return rc == 0 ? changes : -1;
}
