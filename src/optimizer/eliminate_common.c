/* Common-subexpression elimination (level BASIC).
 *
 * Constants: two constant values (initializers that are not graph inputs,
 * or folded constants) of the same element type, shape and bytes are one;
 * readers of the later read the first. Only constants up to
 * MAX_CONST_BYTES are compared: shape arguments and small parameters,
 * which exporters repeat by the hundred; weights are rarely repeated and
 * hashing them would cost a pass over every weight per round.
 *
 * Nodes: two nodes with the same operator, domain, opset, attributes and
 * inputs (after the merges above) compute the same outputs; readers of
 * the later node's outputs read the first's and the later node goes.
 * Never merged: random operators (two samples differ), nodes with
 * subgraphs, nodes whose outputs are graph outputs or read by subgraph
 * bodies by name (the names must stay), and nodes whose output slots
 * differ in which are present. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "optimizer/opt_util.h"
#include "optimizer/optimizer.h"

#define MAX_CONST_BYTES ((size_t)64 << 10)

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static uint64_t fnv_str(uint64_t h, const char *s) { return fnv(h, s, strlen(s) + 1); }

static int is_random(const ir_node *n) {
    static const char *const OPS[] = {
        "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
        "Bernoulli",    "Multinomial",   "Dropout"};
    if (n->domain[0]) return 1; /* other domains: no promise they are pure */
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
        if (strcmp(n->op_type, OPS[i]) == 0) return 1;
    return 0;
}

static int tensor_equal(const ox_tensor *a, const ox_tensor *b) {
    if (!a || !b) return a == b;
    if (a->kind != OX_KIND_TENSOR || b->kind != OX_KIND_TENSOR) return 0;
    if (a->dtype != b->dtype || a->rank != b->rank || a->nbytes != b->nbytes) return 0;
    if (a->dtype == ONYX_STRING) return 0;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return 0;
    return a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0;
}

static uint64_t tensor_hash(const ox_tensor *t) {
    uint64_t h = 1469598103934665603ull;
    h = fnv(h, &t->dtype, sizeof t->dtype);
    h = fnv(h, &t->rank, sizeof t->rank);
    h = fnv(h, t->dims, (size_t)t->rank * sizeof t->dims[0]);
    return t->nbytes ? fnv(h, t->data, t->nbytes) : h;
}

static int attr_equal(const ir_attr *a, const ir_attr *b) {
    if (strcmp(a->name, b->name) != 0 || a->type != b->type) return 0;
    switch (a->type) {
    case IR_ATTR_FLOAT: return memcmp(&a->f, &b->f, sizeof a->f) == 0;
    case IR_ATTR_INT: return a->i == b->i;
    case IR_ATTR_STRING: return a->s_len == b->s_len && memcmp(a->s, b->s, a->s_len) == 0;
    case IR_ATTR_TENSOR: return tensor_equal(a->t, b->t);
    case IR_ATTR_FLOATS:
        return a->n == b->n &&
               (!a->n || memcmp(a->floats, b->floats, a->n * sizeof *a->floats) == 0);
    case IR_ATTR_INTS:
        return a->n == b->n && (!a->n || memcmp(a->ints, b->ints, a->n * sizeof *a->ints) == 0);
    case IR_ATTR_STRINGS:
        if (a->n != b->n) return 0;
        for (size_t i = 0; i < a->n; i++)
            if (strcmp(a->strings[i], b->strings[i]) != 0) return 0;
        return 1;
    case IR_ATTR_TENSORS:
        if (a->n != b->n) return 0;
        for (size_t i = 0; i < a->n; i++)
            if (!tensor_equal(a->tensors[i], b->tensors[i])) return 0;
        return 1;
    default: return 0; /* graphs, sparse tensors, types: never merged */
    }
}

/* Attributes are compared by name, in any order. */
static int node_equal(const ir_node *a, const ir_node *b) {
    if (strcmp(a->op_type, b->op_type) != 0 || strcmp(a->domain, b->domain) != 0 ||
        a->opset != b->opset || a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs ||
        a->n_attrs != b->n_attrs || a->n_implicit || b->n_implicit)
        return 0;
    for (int k = 0; k < a->n_inputs; k++)
        if (a->inputs[k] != b->inputs[k]) return 0;
    for (int k = 0; k < a->n_outputs; k++)
        if ((a->outputs[k] < 0) != (b->outputs[k] < 0)) return 0;
    for (int i = 0; i < a->n_attrs; i++) {
        const ir_attr *other = ir_node_attr(b, a->attrs[i].name);
        if (!other || !attr_equal(&a->attrs[i], other)) return 0;
    }
    return 1;
}

static uint64_t node_hash(const ir_node *n) {
    uint64_t h = fnv_str(1469598103934665603ull, n->op_type);
    h = fnv_str(h, n->domain);
    h = fnv(h, &n->opset, sizeof n->opset);
    h = fnv(h, n->inputs, (size_t)n->n_inputs * sizeof *n->inputs);
    h = fnv(h, &n->n_outputs, sizeof n->n_outputs);
    /* attribute names only: order-independent and enough to spread */
    uint64_t names = 0;
    for (int i = 0; i < n->n_attrs; i++) names += fnv_str(1469598103934665603ull, n->attrs[i].name);
    return fnv(h, &names, sizeof names);
}

/* Open-addressing table of ids by hash; returns the slot for h holding an
 * id that same() accepts, or the empty slot where it belongs. */
typedef struct table {
    int *ids;
    uint64_t *hashes;
    size_t cap;
} table;

static int table_init(table *t, size_t items) {
    t->cap = 16;
    while (t->cap < 2 * items + 2) t->cap *= 2;
    t->ids = malloc(t->cap * sizeof *t->ids);
    t->hashes = malloc(t->cap * sizeof *t->hashes);
    if (!t->ids || !t->hashes) return -1;
    for (size_t i = 0; i < t->cap; i++) t->ids[i] = -1;
    return 0;
}

static void table_free(table *t) {
    free(t->ids);
    free(t->hashes);
}

typedef int (*same_fn)(const ir_graph *g, int a, int b);

static size_t table_find(const table *t, const ir_graph *g, uint64_t h, int id, same_fn same) {
    size_t i = (size_t)h & (t->cap - 1);
    while (t->ids[i] >= 0 && !(t->hashes[i] == h && same(g, t->ids[i], id)))
        i = (i + 1) & (t->cap - 1);
    return i;
}

static int same_const(const ir_graph *g, int a, int b) {
    return tensor_equal(g->values[a].init, g->values[b].init);
}

static int same_node(const ir_graph *g, int a, int b) {
    return node_equal(&g->nodes[a], &g->nodes[b]);
}

static int mergeable_const(const ir_graph *g, const unsigned char *pinned, int v) {
    const ox_tensor *t = ox_const_value(g, v);
    return t && !pinned[v] && t->dtype != ONYX_STRING && t->nbytes <= MAX_CONST_BYTES;
}

static int mergeable_node(const ir_graph *g, const unsigned char *pinned, const ir_node *n) {
    if (is_random(n) || n->n_outputs == 0 || n->n_implicit) return 0;
    for (int a = 0; a < n->n_attrs; a++)
        if (n->attrs[a].g || n->attrs[a].graphs) return 0;
    for (int k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] >= 0 && pinned[n->outputs[k]]) return 0;
    (void)g;
    return 1;
}

int ox_pass_eliminate_common(ox_pass_ctx *ctx, ir_graph *g) {
    unsigned char *pinned = ox_pinned_values(g);
    unsigned char *dead = calloc((size_t)g->n_nodes + 1, 1);
    int *forward = malloc(((size_t)g->n_values + 1) * sizeof *forward);
    int *order = malloc(((size_t)g->n_nodes + 1) * sizeof *order);
    table consts = {0}, nodes = {0};
    int rc = 0, changes = 0;
    if (!pinned || !dead || !forward || !order || table_init(&consts, (size_t)g->n_values) ||
        table_init(&nodes, (size_t)g->n_nodes)) {
        rc = ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    for (int v = 0; v < g->n_values; v++) forward[v] = -1;
    for (int v = 0; v < g->n_values; v++) {
        if (!mergeable_const(g, pinned, v)) continue;
        uint64_t h = tensor_hash(g->values[v].init);
        size_t s = table_find(&consts, g, h, v, same_const);
        if (consts.ids[s] >= 0) {
            forward[v] = consts.ids[s];
            changes++;
        } else {
            consts.ids[s] = v;
            consts.hashes[s] = h;
        }
    }
    if ((rc = ir_graph_toposort(g, order, ctx->err)) != 0) goto done;
    /* producers first, so a node's inputs are final when it is hashed */
    for (int oi = 0; oi < g->n_nodes; oi++) {
        int i = order[oi];
        ir_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) n->inputs[k] = ox_forward_resolve(forward, n->inputs[k]);
        if (!mergeable_node(g, pinned, n)) continue;
        uint64_t h = node_hash(n);
        size_t s = table_find(&nodes, g, h, i, same_node);
        if (nodes.ids[s] < 0) {
            nodes.ids[s] = i;
            nodes.hashes[s] = h;
            continue;
        }
        const ir_node *first = &g->nodes[nodes.ids[s]];
        for (int k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] >= 0) forward[n->outputs[k]] = first->outputs[k];
        if ((rc = ox_merge_node(g, dead, nodes.ids[s], i, ctx->err)) != 0) goto done;
        changes++;
    }
    ox_forward_apply(g, forward);
    if (changes && ir_graph_remove_nodes(g, dead) != 0)
        rc = ox_fail(ctx->err, ONYX_OUT_OF_MEMORY, "out of memory");
done:
    free(pinned);
    free(dead);
    free(forward);
    free(order);
    table_free(&consts);
    table_free(&nodes);
    return rc == 0 ? changes : -1;
}
