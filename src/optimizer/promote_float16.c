/* Float16 computed in float32, as ONNX Runtime's CPU provider runs a
 * float16 model: the CPU's kernels are float32 ones (a float16 node would
 * convert its inputs and weights on every run and round its output), so
 * the float16 nodes that have them read and write float32 twins of their
 * float16 values instead. A float16 constant they read becomes a float32
 * constant once, at load; other float16 values they read (graph inputs,
 * outputs of nodes left in float16) are cast up where read; a value they
 * write is cast back down for the graph's outputs and for readers left
 * in float16. Between promoted nodes values stay float32: the result is
 * the float32 computation rounded to float16 at the edges.
 *
 * On every provider: a device that could run float16 natively then runs
 * the model as the CPU does, so results agree across devices. Not in
 * graphs with subgraphs (their bodies read outer values by name). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "optimizer/opt_util.h"
#include "optimizer/optimizer.h"

/* ai.onnx operators whose float32 kernels take float16 values over
 * unchanged: no attribute or input names a float type (Cast, Constant,
 * RandomNormal...), and every float input and output may be float32
 * together. */
static const char *const PROMOTED[] = {
    "Abs", "Add", "AveragePool", "BatchNormalization", "Ceil", "Clip", "Concat", "Conv",
    "ConvTranspose", "Div", "Einsum", "Elu", "Erf", "Exp", "Expand", "Flatten", "Floor", "Gather",
    "GatherElements", "Gelu", "Gemm", "GlobalAveragePool", "GlobalMaxPool", "HardSigmoid",
    "HardSwish", "Identity", "InstanceNormalization", "LayerNormalization", "LeakyRelu", "Log",
    "LogSoftmax", "MatMul", "Max", "MaxPool", "Mean", "Min", "Mul", "Neg", "Pad", "Pow",
    "PRelu", "Reciprocal", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceSum", "Relu",
    "Reshape", "Resize", "Shape", "Sigmoid", "Sin", "Size", "Slice", "Softmax", "Softplus",
    "Split", "Sqrt", "Squeeze", "Sub", "Sum", "Tanh", "Tile", "Transpose", "Unsqueeze", "Where",
};

static int listed(const char *op) {
    for (size_t i = 0; i < sizeof PROMOTED / sizeof PROMOTED[0]; i++)
        if (strcmp(op, PROMOTED[i]) == 0) return 1;
    return 0;
}

static int is_f16(const ir_graph *g, int v) {
    return v >= 0 && g->values[v].has_type && g->values[v].type.kind == OX_KIND_TENSOR &&
           g->values[v].type.dtype == ONYX_FLOAT16;
}

/* Whether node n runs in float32: a listed operator with at least one
 * float16 value and every value's type known. */
static int promotable(const ir_graph *g, const ir_node *n) {
    if (n->domain[0] || !listed(n->op_type)) return 0;
    int any = 0;
    for (int k = 0; k < n->n_inputs + n->n_outputs; k++) {
        int v = k < n->n_inputs ? n->inputs[k] : n->outputs[k - n->n_inputs];
        if (v < 0) continue;
        if (!g->values[v].has_type) return 0;
        any |= is_f16(g, v);
    }
    return any;
}

/* A new value named after v (a fresh name), typed as v but float32. */
static int twin_value(ir_graph *g, int v, ox_error *err) {
    int t = ox_add_value(g, g->values[v].name, "float32", err);
    if (t < 0) return -1;
    if (ir_type_copy(&g->values[t].type, &g->values[v].type) != 0)
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    g->values[t].type.dtype = ONYX_FLOAT32;
    g->values[t].has_type = 1;
    return t;
}

/* Appends Cast(from) -> to, converting to dtype. */
static int add_cast(ir_graph *g, int opset, int from, int to, ox_dtype dtype, ox_error *err) {
    char name[512];
    snprintf(name, sizeof name, "%s/cast_%s", g->values[to].name, ox_dtype_name(dtype));
    int i = ir_graph_add_node(g, name, "Cast", "", err);
    if (i < 0) return -1;
    ir_node *n = &g->nodes[i];
    n->opset = opset;
    if (!(n->outputs = malloc(sizeof *n->outputs))) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    n->n_outputs = 1;
    n->outputs[0] = -1;
    ox_node_set_output(g, i, 0, to);
    if (ox_node_set_input(n, 0, from, err) != 0 || ox_node_set_int(n, "to", dtype, err) != 0) return -1;
    return 0;
}

/* The float32 twin of v (< n_orig) for a promoted reader: a converted
 * constant, or a Cast of v. */
static int twin_for_reader(ir_graph *g, int opset, int v, ox_error *err) {
    const ox_tensor *c = ox_const_value(g, v);
    if (c) {
        ox_tensor *f = ox_tensor_new(ONYX_FLOAT32, c->dims, c->rank, err);
        if (!f) return -1;
        ox_half_to_float_n(c->data, f->data, ox_tensor_numel(c));
        return ox_add_constant(g, g->values[v].name, "float32", f, err);
    }
    int t = twin_value(g, v, err);
    if (t < 0 || add_cast(g, opset, v, t, ONYX_FLOAT32, err) != 0) return -1;
    return t;
}

int ox_pass_promote_float16(ox_pass_ctx *ctx, ir_graph *g) {
    if (ox_graph_has_subgraphs(g)) return 0;
    int any = 0;
    for (int v = 0; v < g->n_values && !any; v++) any = is_f16(g, v);
    /* the types of the values between nodes come from inference */
    if (!any || ox_infer_quietly(g) != 0) return 0;
    const int n_nodes = g->n_nodes, n_values = g->n_values;
    int opset = (int)ir_model_opset(ctx->model, "");
    unsigned char *prom = calloc((size_t)n_nodes + 1, 1);
    int *twin = malloc(((size_t)n_values + 1) * sizeof *twin);
    unsigned char *lost = calloc((size_t)n_values + 1, 1); /* its producer writes the twin now */
    if (!prom || !twin || !lost) {
        free(prom);
        free(twin);
        free(lost);
        return ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    int changes = 0, rc = 0;
    for (int i = 0; i < n_nodes; i++) changes += prom[i] = (unsigned char)promotable(g, &g->nodes[i]);
    for (int v = 0; v < n_values; v++) twin[v] = -1;
    /* promoted writers write twins */
    for (int i = 0; rc == 0 && i < n_nodes; i++)
        for (int k = 0; prom[i] && rc == 0 && k < g->nodes[i].n_outputs; k++) {
            int v = g->nodes[i].outputs[k];
            if (!is_f16(g, v)) continue;
            if ((twin[v] = twin_value(g, v, ctx->err)) < 0) rc = -1;
            else {
                ox_node_set_output(g, i, k, twin[v]);
                lost[v] = 1;
            }
        }
    /* promoted readers read twins; the values they need cast down */
    for (int i = 0; rc == 0 && i < n_nodes; i++)
        for (int k = 0; rc == 0 && k < g->nodes[i].n_inputs; k++) {
            int v = g->nodes[i].inputs[k];
            if (v < 0 || v >= n_values || !is_f16(g, v)) continue;
            if (!prom[i]) {
                /* a float16 reader of a promoted writer's value: cast down */
                if (lost[v] == 1 && (rc = add_cast(g, opset, twin[v], v, ONYX_FLOAT16, ctx->err)) == 0)
                    lost[v] = 2;
                continue;
            }
            if (twin[v] < 0 && (twin[v] = twin_for_reader(g, opset, v, ctx->err)) < 0) rc = -1;
            else g->nodes[i].inputs[k] = twin[v];
        }
    for (int o = 0; rc == 0 && o < g->n_outputs; o++) {
        int v = g->outputs[o];
        if (v < n_values && lost[v] == 1 && (rc = add_cast(g, opset, twin[v], v, ONYX_FLOAT16, ctx->err)) == 0)
            lost[v] = 2;
    }
    free(prom);
    free(twin);
    free(lost);
    return rc == 0 ? changes : -1;
}
