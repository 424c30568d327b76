#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/dtype.h"
#include "core/strmap.h"
#include "ir/ir.h"

ir_graph *ir_graph_new(const char *name, ir_graph *parent) {
    ir_graph *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->name = ox_strdup(name ? name : "");
    g->name_index = ox_strmap_new();
    g->parent = parent;
    if (!g->name || !g->name_index) {
        ir_graph_free(g);
        return NULL;
    }
    return g;
}

void ir_type_clear(ir_type *t) {
    for (int i = 0; i < OX_MAX_RANK; i++) {
        free(t->dim_params[i]);
        t->dim_params[i] = NULL;
    }
}

int ir_type_copy(ir_type *dst, const ir_type *src) {
    if (dst == src) return 0;
    ir_type_clear(dst);
    *dst = *src;
    for (int i = 0; i < OX_MAX_RANK; i++) {
        dst->dim_params[i] = NULL;
        if (src->dim_params[i] && !(dst->dim_params[i] = ox_strdup(src->dim_params[i]))) return -1;
    }
    return 0;
}

void ir_attr_clear(ir_attr *a) {
    free(a->name);
    free(a->s);
    ox_tensor_free(a->t);
    ir_graph_free(a->g);
    free(a->floats);
    free(a->ints);
    if (a->strings)
        for (size_t i = 0; i < a->n; i++) free(a->strings[i]);
    free(a->strings);
    if (a->tensors)
        for (size_t i = 0; i < a->n; i++) ox_tensor_free(a->tensors[i]);
    free(a->tensors);
    if (a->graphs)
        for (size_t i = 0; i < a->n; i++) ir_graph_free(a->graphs[i]);
    free(a->graphs);
    ir_type_clear(&a->type_proto);
    memset(a, 0, sizeof *a);
}

static void node_clear(ir_node *n) {
    free(n->name);
    free(n->op_type);
    free(n->domain);
    free(n->inputs);
    free(n->outputs);
    free(n->implicit);
    for (int i = 0; i < n->n_attrs; i++) ir_attr_clear(&n->attrs[i]);
    free(n->attrs);
    for (int i = 0; i < n->n_origins; i++) free(n->origins[i]);
    free(n->origins);
}

void ir_graph_free(ir_graph *g) {
    if (!g) return;
    for (int i = 0; i < g->n_nodes; i++) node_clear(&g->nodes[i]);
    free(g->nodes);
    for (int i = 0; i < g->n_values; i++) {
        free(g->values[i].name);
        ir_type_clear(&g->values[i].type);
        ox_tensor_free(g->values[i].init);
    }
    free(g->values);
    free(g->inputs);
    free(g->outputs);
    ox_strmap_free(g->name_index);
    free(g->name);
    free(g);
}

void ir_model_free(ir_model *m) {
    if (!m) return;
    free(m->producer_name);
    free(m->producer_version);
    for (int i = 0; i < m->n_opsets; i++) free(m->opsets[i].domain);
    free(m->opsets);
    ir_graph_free(m->graph);
    /* after the graph: its weights may point into the backing bytes */
    if (m->backing_mapped)
        munmap(m->backing, m->backing_size);
    else
        free(m->backing);
    free(m);
}

int ir_graph_find(const ir_graph *g, const char *name) {
    int id;
    return ox_strmap_get(g->name_index, name, &id) ? id : -1;
}

int ir_graph_value(ir_graph *g, const char *name, ox_error *err) {
    int id = ir_graph_find(g, name);
    if (id >= 0) return id;
    if (g->n_values == g->cap_values) {
        int ncap = g->cap_values ? g->cap_values * 2 : 64;
        ir_value *nv = realloc(g->values, (size_t)ncap * sizeof *nv);
        if (!nv) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        g->values = nv;
        g->cap_values = ncap;
    }
    ir_value *v = &g->values[g->n_values];
    memset(v, 0, sizeof *v);
    v->name = ox_strdup(name);
    v->producer = -1;
    v->blocked_of = -1;
    v->type.rank = -1;
    if (!v->name || ox_strmap_put(g->name_index, name, g->n_values) != 0) {
        free(v->name);
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    return g->n_values++;
}

int ir_graph_add_node(ir_graph *g, const char *name, const char *op_type, const char *domain,
                      ox_error *err) {
    if (g->n_nodes == g->cap_nodes) {
        int ncap = g->cap_nodes ? g->cap_nodes * 2 : 64;
        ir_node *nn = realloc(g->nodes, (size_t)ncap * sizeof *nn);
        if (!nn) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        g->nodes = nn;
        g->cap_nodes = ncap;
    }
    ir_node *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    n->name = ox_strdup(name ? name : "");
    n->op_type = ox_strdup(op_type ? op_type : "");
    n->domain = ox_strdup(ir_canonical_domain(domain));
    if (!n->name || !n->op_type || !n->domain) {
        node_clear(n);
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    return g->n_nodes++;
}

const char *ir_canonical_domain(const char *domain) {
    if (!domain || strcmp(domain, "ai.onnx") == 0) return "";
    return domain;
}

int64_t ir_model_opset(const ir_model *m, const char *domain) {
    const char *d = ir_canonical_domain(domain);
    for (int i = 0; i < m->n_opsets; i++)
        if (strcmp(m->opsets[i].domain, d) == 0) return m->opsets[i].version;
    return -1;
}

const ir_attr *ir_node_attr(const ir_node *n, const char *name) {
    for (int i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}

int64_t ir_attr_int(const ir_node *n, const char *name, int64_t dflt) {
    const ir_attr *a = ir_node_attr(n, name);
    return a && a->type == IR_ATTR_INT ? a->i : dflt;
}

float ir_attr_float(const ir_node *n, const char *name, float dflt) {
    const ir_attr *a = ir_node_attr(n, name);
    if (!a) return dflt;
    if (a->type == IR_ATTR_FLOAT) return a->f;
    if (a->type == IR_ATTR_INT) return (float)a->i;
    return dflt;
}

const char *ir_attr_string(const ir_node *n, const char *name, const char *dflt) {
    const ir_attr *a = ir_node_attr(n, name);
    return a && a->type == IR_ATTR_STRING ? a->s : dflt;
}

const int64_t *ir_attr_ints(const ir_node *n, const char *name, size_t *count) {
    const ir_attr *a = ir_node_attr(n, name);
    if (!a || a->type != IR_ATTR_INTS) {
        *count = 0;
        return NULL;
    }
    *count = a->n;
    return a->ints;
}

const float *ir_attr_floats(const ir_node *n, const char *name, size_t *count) {
    const ir_attr *a = ir_node_attr(n, name);
    if (!a || a->type != IR_ATTR_FLOATS) {
        *count = 0;
        return NULL;
    }
    *count = a->n;
    return a->floats;
}

int ir_node_input_count(const ir_node *n) {
    int c = n->n_inputs;
    while (c > 0 && n->inputs[c - 1] < 0) c--;
    return c;
}

const char *ir_node_label(const ir_node *n, char *buf, size_t size) {
    if (n->name && n->name[0])
        snprintf(buf, size, "node '%s' (%s%s%s)", n->name, n->domain[0] ? n->domain : "",
                 n->domain[0] ? "." : "", n->op_type);
    else
        snprintf(buf, size, "unnamed %s%s%s node", n->domain[0] ? n->domain : "",
                 n->domain[0] ? "." : "", n->op_type);
    return buf;
}


/* The ready queues of ir_graph_toposort_by: queue[2c] and queue[2c + 1]
 * the head and tail of class c (-1: empty), next[] the links. */
static void enqueue(int *queue, int *next, int c, int n_classes, int node) {
    if (c < 0) c = 0;
    if (c >= n_classes) c = n_classes - 1;
    next[node] = -1;
    if (queue[2 * c + 1] >= 0)
        next[queue[2 * c + 1]] = node;
    else
        queue[2 * c] = node;
    queue[2 * c + 1] = node;
}

static int dequeue(int *queue, int *next, int n_classes) {
    for (int c = 0; c < n_classes; c++) {
        int node = queue[2 * c];
        if (node < 0) continue;
        queue[2 * c] = next[node];
        if (queue[2 * c] < 0) queue[2 * c + 1] = -1;
        return node;
    }
    return -1;
}

/* Kahn's algorithm; values produced outside the graph (inputs,
 * initializers, outer scope) are ready from the start. Ready nodes wait
 * in one first-in first-out queue per class (linked through next[]), and
 * the next node is the oldest of the lowest class that has one. */
int ir_graph_toposort_by(const ir_graph *g, int *order, int n_classes,
                         int (*class_of)(void *user, int node), void *user, ox_error *err) {
    int n = g->n_nodes;
    if (n_classes < 1) n_classes = 1;
    int *pending = calloc((size_t)n + 1, sizeof *pending);
    int *next = malloc(((size_t)n + 1) * sizeof *next);
    int *queue = malloc(2 * (size_t)n_classes * sizeof *queue); /* head, tail per class */
    int *consumers_start = calloc((size_t)g->n_values + 1, sizeof *consumers_start);
    int total_edges = 0;
    if (!pending || !next || !queue || !consumers_start) goto oom;
    for (int c = 0; c < 2 * n_classes; c++) queue[c] = -1;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < ir_node_dep_count(&g->nodes[i]); k++) {
            int v = ir_node_dep(&g->nodes[i], k);
            if (v >= 0 && g->values[v].producer >= 0) {
                pending[i]++;
                consumers_start[v + 1]++;
                total_edges++;
            }
        }
    for (int v = 0; v < g->n_values; v++) consumers_start[v + 1] += consumers_start[v];
    int *consumers = malloc(((size_t)total_edges + 1) * sizeof *consumers);
    int *fill = calloc((size_t)g->n_values + 1, sizeof *fill);
    if (!consumers || !fill) {
        free(consumers);
        free(fill);
        goto oom;
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < ir_node_dep_count(&g->nodes[i]); k++) {
            int v = ir_node_dep(&g->nodes[i], k);
            if (v >= 0 && g->values[v].producer >= 0)
                consumers[consumers_start[v] + fill[v]++] = i;
        }
    int tail = 0;
    for (int i = 0; i < n; i++)
        if (pending[i] == 0) enqueue(queue, next, class_of ? class_of(user, i) : 0, n_classes, i);
    for (int i; (i = dequeue(queue, next, n_classes)) >= 0;) {
        order[tail++] = i;
        const ir_node *nd = &g->nodes[i];
        for (int k = 0; k < nd->n_outputs; k++) {
            int v = nd->outputs[k];
            if (v < 0) continue;
            for (int c = consumers_start[v]; c < consumers_start[v + 1]; c++)
                if (--pending[consumers[c]] == 0)
                    enqueue(queue, next, class_of ? class_of(user, consumers[c]) : 0, n_classes, consumers[c]);
        }
    }
    int rc = 0;
    if (tail != n) {
        int stuck = -1;
        for (int i = 0; i < n && stuck < 0; i++)
            if (pending[i] > 0) stuck = i;
        char label[256];
        rc = ox_fail(err, ONYX_INVALID_MODEL,
                     "graph '%s' has a cycle: %d of %d nodes can never run, e.g. %s", g->name,
                     n - tail, n, ir_node_label(&g->nodes[stuck], label, sizeof label));
    }
    free(consumers);
    free(fill);
    free(pending);
    free(consumers_start);
    free(next);
    free(queue);
    return rc;
oom:
    free(pending);
    free(consumers_start);
    free(next);
    free(queue);
    return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
}

int ir_graph_toposort(const ir_graph *g, int *order, ox_error *err) {
    return ir_graph_toposort_by(g, order, 1, NULL, NULL, err);
}

int ir_graph_remove_nodes(ir_graph *g, const unsigned char *dead) {
    int *new_index = malloc(((size_t)g->n_nodes + 1) * sizeof *new_index);
    if (!new_index) return -1;
    int k = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        if (dead[i]) {
            for (int o = 0; o < g->nodes[i].n_outputs; o++) {
                int v = g->nodes[i].outputs[o];
                if (v >= 0 && g->values[v].producer == i) g->values[v].producer = -1;
            }
            node_clear(&g->nodes[i]);
            new_index[i] = -1;
            continue;
        }
        new_index[i] = k;
        if (k != i) g->nodes[k] = g->nodes[i];
        k++;
    }
    g->n_nodes = k;
    for (int v = 0; v < g->n_values; v++)
        if (g->values[v].producer >= 0) g->values[v].producer = new_index[g->values[v].producer];
    free(new_index);
    return 0;
}

/* Which values are already implicit inputs of the node being resolved:
 * seen[v] == node + 1. Grows with the values subgraphs add to g. */
typedef struct implicit_set {
    int *seen;
    int cap;
} implicit_set;

/* Marks v as an implicit input of node; returns 1 when it already was,
 * -1 when out of memory. */
static int mark_implicit(implicit_set *set, int node, int v) {
    if (v >= set->cap) {
        int cap = set->cap ? set->cap : 64;
        while (cap <= v) cap *= 2;
        int *ns = realloc(set->seen, (size_t)cap * sizeof *ns);
        if (!ns) return -1;
        memset(ns + set->cap, 0, (size_t)(cap - set->cap) * sizeof *ns);
        set->seen = ns;
        set->cap = cap;
    }
    if (set->seen[v] == node + 1) return 1;
    set->seen[v] = node + 1;
    return 0;
}

static int add_implicit(ir_node *n, int node, int v, implicit_set *set) {
    int known = mark_implicit(set, node, v);
    if (known != 0) return known < 0 ? -1 : 0;
    /* capacity doubles at powers of two, so appending stays linear */
    int count = n->n_implicit;
    if ((count & (count - 1)) == 0) {
        int *ni = realloc(n->implicit, (size_t)(count ? 2 * count : 1) * sizeof *ni);
        if (!ni) return -1;
        n->implicit = ni;
    }
    n->implicit[n->n_implicit++] = v;
    return 0;
}

/* Subgraph bodies are resolved first so that a value read two levels down
 * becomes an outer value of the middle graph, then an implicit input of
 * the node in this graph. */
static int collect_outer(ir_graph *g, int ref, ir_graph *sub, implicit_set *set, ox_error *err) {
    if (ir_resolve_implicit_inputs(sub, err) != 0) return -1;
    for (int v = 0; v < sub->n_values; v++) {
        if (!sub->values[v].outer) continue;
        int id = ir_graph_find(g, sub->values[v].name);
        if (id < 0) {
            id = ir_graph_value(g, sub->values[v].name, err);
            if (id < 0) return -1;
            g->values[id].outer = 1;
        }
        if (add_implicit(&g->nodes[ref], ref, id, set) != 0)
            return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    return 0;
}

int ir_resolve_implicit_inputs(ir_graph *g, ox_error *err) {
    implicit_set set = {NULL, 0};
    int rc = 0;
    for (int i = 0; i < g->n_nodes && rc == 0; i++) {
        /* a second resolution of the same graph keeps the list it has */
        for (int k = 0; k < g->nodes[i].n_implicit && rc == 0; k++)
            if (mark_implicit(&set, i, g->nodes[i].implicit[k]) < 0)
                rc = ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        for (int a = 0; a < g->nodes[i].n_attrs && rc == 0; a++) {
            ir_attr *at = &g->nodes[i].attrs[a];
            if (at->g) rc = collect_outer(g, i, at->g, &set, err);
            for (size_t j = 0; at->graphs && j < at->n && rc == 0; j++)
                rc = collect_outer(g, i, at->graphs[j], &set, err);
        }
    }
    free(set.seen);
    return rc;
}

int ir_graph_max_inputs(const ir_graph *g) {
    int m = 0;
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].n_inputs > m) m = g->nodes[i].n_inputs;
    return m;
}

int ir_graph_max_io(const ir_graph *g) {
    int m = ir_graph_max_inputs(g);
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].n_outputs > m) m = g->nodes[i].n_outputs;
    return m;
}

void ir_value_set_constant(ir_graph *g, int v, ox_tensor *t) {
    ir_value *val = &g->values[v];
    val->init = t;
    val->type.kind = OX_KIND_TENSOR;
    val->type.dtype = t->dtype;
    val->type.rank = t->rank;
    memcpy(val->type.dims, t->dims, sizeof t->dims);
    val->has_type = 1;
}

static int add_origin(ir_node *n, const char *name, ox_error *err) {
    if (!name || !name[0]) return 0;
    for (int i = 0; i < n->n_origins; i++)
        if (strcmp(n->origins[i], name) == 0) return 0;
    char **grown = realloc(n->origins, ((size_t)n->n_origins + 1) * sizeof *grown);
    if (!grown) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    n->origins = grown;
    if (!(n->origins[n->n_origins] = ox_strdup(name)))
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    n->n_origins++;
    return 0;
}

int ir_node_absorb(ir_node *into, const ir_node *from, ox_error *err) {
    if (into->n_origins == 0 && add_origin(into, into->name, err) != 0) return -1;
    if (add_origin(into, from->name, err) != 0) return -1;
    for (int i = 0; i < from->n_origins; i++)
        if (add_origin(into, from->origins[i], err) != 0) return -1;
    return 0;
}

int ir_node_computes(const ir_node *n, const char *name) {
    if (strcmp(n->name, name) == 0) return 1;
    for (int i = 0; i < n->n_origins; i++)
        if (strcmp(n->origins[i], name) == 0) return 1;
    return 0;
}

/* Appends to buf like snprintf, tracking the length the text needs. */
static void put(char *buf, size_t size, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t size, size_t *len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(*len < size ? buf + *len : NULL, *len < size ? size - *len : 0, fmt, ap);
    va_end(ap);
    if (w > 0) *len += (size_t)w;
}

#define ATTR_LIST_SHOWN 8

size_t ir_node_format_attrs(const ir_node *n, char *buf, size_t size) {
    size_t len = 0;
    if (size) buf[0] = '\0';
    for (int a = 0; a < n->n_attrs; a++) {
        const ir_attr *at = &n->attrs[a];
        put(buf, size, &len, "%s%s=", a ? " " : "", at->name);
        size_t shown = at->n < ATTR_LIST_SHOWN ? at->n : ATTR_LIST_SHOWN;
        switch (at->type) {
        case IR_ATTR_FLOAT: put(buf, size, &len, "%g", (double)at->f); break;
        case IR_ATTR_INT: put(buf, size, &len, "%lld", (long long)at->i); break;
        case IR_ATTR_STRING:
            put(buf, size, &len, "\"%.40s%s\"", at->s ? at->s : "", at->s_len > 40 ? "..." : "");
            break;
        case IR_ATTR_INTS:
        case IR_ATTR_FLOATS:
            put(buf, size, &len, "[");
            for (size_t k = 0; k < shown; k++) {
                if (at->type == IR_ATTR_INTS)
                    put(buf, size, &len, "%s%lld", k ? "," : "", (long long)at->ints[k]);
                else
                    put(buf, size, &len, "%s%g", k ? "," : "", (double)at->floats[k]);
            }
            put(buf, size, &len, "%s]", at->n > shown ? ",..." : "");
            break;
        case IR_ATTR_TENSOR: {
            char sh[96];
            put(buf, size, &len, "tensor(%s %s)", at->t ? ox_dtype_name(at->t->dtype) : "?",
                at->t ? ox_shape_str(at->t->dims, at->t->rank, sh, sizeof sh) : "");
            break;
        }
        case IR_ATTR_GRAPH: put(buf, size, &len, "graph(%s)", at->g && at->g->name ? at->g->name : ""); break;
        default: put(buf, size, &len, "(%zu items)", at->n); break;
        }
    }
    return len;
}
