#include "optimizer/opt_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strmap.h"

int ox_readers_init(ox_readers *r, const ir_graph *g) {
    r->count = calloc((size_t)g->n_values + 1, sizeof *r->count);
    r->node = malloc(((size_t)g->n_values + 1) * sizeof *r->node);
    if (!r->count || !r->node) {
        ox_readers_free(r);
        return -1;
    }
    for (int v = 0; v < g->n_values; v++) r->node[v] = -1;
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_inputs + n->n_implicit; k++) {
            int v = k < n->n_inputs ? n->inputs[k] : n->implicit[k - n->n_inputs];
            if (v < 0) continue;
            r->count[v]++;
            r->node[v] = i;
        }
    }
    return 0;
}

void ox_readers_free(ox_readers *r) {
    free(r->count);
    free(r->node);
    r->count = r->node = NULL;
}

unsigned char *ox_pinned_values(const ir_graph *g) {
    unsigned char *p = calloc((size_t)g->n_values + 1, 1);
    if (!p) return NULL;
    for (int v = 0; v < g->n_values; v++) p[v] = (unsigned char)(g->values[v].is_output != 0);
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i].n_implicit; k++) p[g->nodes[i].implicit[k]] = 1;
    return p;
}

const ox_tensor *ox_const_value(const ir_graph *g, int v) {
    if (v < 0 || v >= g->n_values) return NULL;
    const ir_value *val = &g->values[v];
    if (!val->init || val->is_input || val->init->kind != OX_KIND_TENSOR) return NULL;
    return val->init;
}

int ox_sole_reader(const ir_graph *g, const ox_readers *r, const unsigned char *pinned, int v) {
    if (v < 0 || pinned[v] || r->count[v] != 1) return -1;
    int j = r->node[v];
    return g->nodes[j].n_implicit ? -1 : j;
}

int ox_const_ints(const ir_graph *g, const ir_node *n, int k, int64_t *out, int max, int *count) {
    if (!ir_node_has_input(n, k)) return -1;
    const ox_tensor *t = ox_const_value(g, n->inputs[k]);
    if (!t || t->rank > 1 || (t->dtype != ONYX_INT64 && t->dtype != ONYX_INT32)) return -1;
    const int64_t cnt = ox_tensor_numel(t);
    if (cnt > max) return -1;
    for (int64_t i = 0; i < cnt; i++)
        out[i] = t->dtype == ONYX_INT64 ? ((const int64_t *)t->data)[i] : ((const int32_t *)t->data)[i];
    *count = (int)cnt;
    return 0;
}

int ox_other_input(const ir_node *n, int v) {
    if (n->n_inputs != 2) return -1;
    if (n->inputs[0] == v) return n->inputs[1];
    if (n->inputs[1] == v) return n->inputs[0];
    return -1;
}

const ox_tensor *ox_const_scalar_f32(const ir_graph *g, int v) {
    const ox_tensor *t = ox_const_value(g, v);
    return t && t->dtype == ONYX_FLOAT32 && ox_tensor_numel(t) == 1 ? t : NULL;
}

int ox_mean_over_last_axis(const ir_graph *g, const ir_node *n, int rank) {
    if (!ox_is_op_chain(n, "ReduceMean") || ir_attr_int(n, "keepdims", 1) != 1) return 0;
    int64_t axis;
    if (n->opset < 18) {
        size_t cnt = 0;
        const int64_t *a = ir_attr_ints(n, "axes", &cnt);
        if (!a || cnt != 1) return 0;
        axis = a[0];
    } else {
        if (!ir_node_has_input(n, 1) || n->n_inputs > 2) return 0;
        const ox_tensor *t = ox_const_value(g, n->inputs[1]);
        if (!t || t->dtype != ONYX_INT64 || ox_tensor_numel(t) != 1) return 0;
        axis = *(const int64_t *)t->data;
    }
    return axis == -1 || (rank > 0 && axis == rank - 1);
}

int ox_rewrite_normalization(ir_graph *g, int64_t opset, int i, const char *op, int x, const int *params,
                             int n_params, float eps, int out, const int *nodes, int count, unsigned char *dead,
                             ox_error *err) {
    for (int k = 0; k < count; k++)
        if (dead[nodes[k]]) return 0;
    ir_node *n = &g->nodes[i];
    for (int a = 0; a < n->n_attrs; a++) ir_attr_clear(&n->attrs[a]);
    n->n_attrs = 0;
    if (ox_node_retype(n, op, "", (int)opset, err) || ox_node_set_float(n, "epsilon", eps, err) ||
        ox_node_set_int(n, "axis", -1, err))
        return -1;
    for (int k = 0; k < n_params; k++)
        if (ox_node_set_input(n, k + 1, params[k], err)) return -1;
    n->inputs[0] = x;
    int used = 1 + n_params;
    while (used > 1 && n->inputs[used - 1] < 0) used--;
    n->n_inputs = used;
    ox_node_set_output(g, i, 0, out);
    for (int k = 1; k < count; k++)
        if (ox_merge_node(g, dead, i, nodes[k], err) != 0) return -1;
    return 1;
}

int ox_forward_resolve(int *forward, int v) {
    int root = v;
    while (forward[root] >= 0) root = forward[root];
    while (forward[v] >= 0) {
        int next = forward[v];
        forward[v] = root;
        v = next;
    }
    return root;
}

void ox_forward_apply(ir_graph *g, int *forward) {
    for (int i = 0; i < g->n_nodes; i++) {
        ir_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) n->inputs[k] = ox_forward_resolve(forward, n->inputs[k]);
    }
}

/* Input k of node n, counting a subgraph's captures of outer values
 * after the explicit inputs. */
static int read_value(const ir_node *n, int k) {
    return k < n->n_inputs ? n->inputs[k] : n->implicit[k - n->n_inputs];
}

int ox_reader_lists_init(ox_reader_lists *r, const ir_graph *g) {
    r->start = calloc((size_t)g->n_values + 2, sizeof *r->start);
    int total = 0;
    for (int i = 0; i < g->n_nodes; i++) total += g->nodes[i].n_inputs + g->nodes[i].n_implicit;
    r->node = malloc(((size_t)total + 1) * sizeof *r->node);
    if (!r->start || !r->node) {
        ox_reader_lists_free(r);
        return -1;
    }
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i].n_inputs + g->nodes[i].n_implicit; k++) {
            int v = read_value(&g->nodes[i], k);
            if (v >= 0) r->start[v + 2]++;
        }
    for (int v = 0; v < g->n_values; v++) r->start[v + 2] += r->start[v + 1];
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i].n_inputs + g->nodes[i].n_implicit; k++) {
            int v = read_value(&g->nodes[i], k);
            if (v >= 0) r->node[r->start[v + 1]++] = i;
        }
    return 0;
}

void ox_reader_lists_free(ox_reader_lists *r) {
    free(r->start);
    free(r->node);
    r->start = r->node = NULL;
}

int ox_add_value(ir_graph *g, const char *base, const char *what, ox_error *err) {
    char name[512];
    /* a fresh name: the model may already use the obvious one */
    for (int suffix = 0;; suffix++) {
        snprintf(name, sizeof name, "%s/%s.%d", base && base[0] ? base : "onyx", what, suffix);
        if (ir_graph_find(g, name) < 0) break;
    }
    return ir_graph_value(g, name, err);
}

int ox_add_constant(ir_graph *g, const char *base, const char *what, ox_tensor *t, ox_error *err) {
    int v = ox_add_value(g, base, what, err);
    if (v < 0) {
        ox_tensor_free(t);
        return -1;
    }
    ir_value_set_constant(g, v, t);
    return v;
}

int ox_infer_quietly(ir_graph *g) {
    ox_error local = {0};
    int rc = ir_infer_shapes(g, &local);
    ox_error_clear(&local);
    return rc;
}

int ox_model_import_domain(ir_model *m, const char *domain, int64_t version, ox_error *err) {
    if (ir_model_opset(m, domain) >= 0) return 0;
    ir_opset *no = realloc(m->opsets, ((size_t)m->n_opsets + 1) * sizeof *no);
    if (!no) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    m->opsets = no;
    no[m->n_opsets].domain = ox_strdup(domain);
    if (!no[m->n_opsets].domain) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    no[m->n_opsets].version = version;
    m->n_opsets++;
    return 0;
}

static ir_attr *attr_slot(ir_node *n, const char *name, ox_error *err) {
    for (int i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0) {
            char *keep = n->attrs[i].name;
            n->attrs[i].name = NULL;
            ir_attr_clear(&n->attrs[i]);
            n->attrs[i].name = keep;
            return &n->attrs[i];
        }
    ir_attr *na = realloc(n->attrs, ((size_t)n->n_attrs + 1) * sizeof *na);
    if (!na) {
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    n->attrs = na;
    ir_attr *a = &na[n->n_attrs];
    memset(a, 0, sizeof *a);
    if (!(a->name = ox_strdup(name))) {
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    n->n_attrs++;
    return a;
}

int ox_node_set_string(ir_node *n, const char *name, const char *s, ox_error *err) {
    ir_attr *a = attr_slot(n, name, err);
    if (!a) return -1;
    a->type = IR_ATTR_STRING;
    if (!(a->s = ox_strdup(s))) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    a->s_len = strlen(s);
    return 0;
}

int ox_node_set_float(ir_node *n, const char *name, float v, ox_error *err) {
    ir_attr *a = attr_slot(n, name, err);
    if (!a) return -1;
    a->type = IR_ATTR_FLOAT;
    a->f = v;
    return 0;
}

int ox_node_set_int(ir_node *n, const char *name, int64_t v, ox_error *err) {
    ir_attr *a = attr_slot(n, name, err);
    if (!a) return -1;
    a->type = IR_ATTR_INT;
    a->i = v;
    return 0;
}

int ox_node_set_floats(ir_node *n, const char *name, const float *v, size_t count, ox_error *err) {
    ir_attr *a = attr_slot(n, name, err);
    if (!a) return -1;
    a->type = IR_ATTR_FLOATS;
    if (!(a->floats = malloc((count ? count : 1) * sizeof *a->floats)))
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    if (count) memcpy(a->floats, v, count * sizeof *v);
    a->n = count;
    return 0;
}

int ox_node_set_ints(ir_node *n, const char *name, const int64_t *v, size_t count, ox_error *err) {
    ir_attr *a = attr_slot(n, name, err);
    if (!a) return -1;
    a->type = IR_ATTR_INTS;
    if (!(a->ints = malloc((count ? count : 1) * sizeof *a->ints)))
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    if (count) memcpy(a->ints, v, count * sizeof *v);
    a->n = count;
    return 0;
}

int ox_node_retype(ir_node *n, const char *op_type, const char *domain, int opset, ox_error *err) {
    char *op = ox_strdup(op_type), *dom = ox_strdup(domain);
    if (!op || !dom) {
        free(op);
        free(dom);
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    free(n->op_type);
    free(n->domain);
    n->op_type = op;
    n->domain = dom;
    n->opset = opset;
    return 0;
}

int ox_node_set_input(ir_node *n, int k, int v, ox_error *err) {
    if (k >= n->n_inputs) {
        int *ni = realloc(n->inputs, ((size_t)k + 1) * sizeof *ni);
        if (!ni) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        for (int i = n->n_inputs; i <= k; i++) ni[i] = -1;
        n->inputs = ni;
        n->n_inputs = k + 1;
    }
    n->inputs[k] = v;
    return 0;
}

void ox_node_set_output(ir_graph *g, int i, int k, int v) {
    ir_node *n = &g->nodes[i];
    int old = n->outputs[k];
    if (old >= 0 && g->values[old].producer == i) g->values[old].producer = -1;
    n->outputs[k] = v;
    g->values[v].producer = i;
}

int ox_match_state_init(const ir_graph *g, ox_readers *r, unsigned char **pinned,
                        unsigned char **dead) {
    memset(r, 0, sizeof *r);
    *pinned = ox_pinned_values(g);
    *dead = calloc((size_t)g->n_nodes + 1, 1);
    if (*pinned && *dead && ox_readers_init(r, g) == 0) return 0;
    ox_match_state_free(r, *pinned, *dead);
    *pinned = *dead = NULL;
    return -1;
}

void ox_match_state_free(ox_readers *r, unsigned char *pinned, unsigned char *dead) {
    free(pinned);
    free(dead);
    ox_readers_free(r);
}

/* A new constant named after Conv node ci: "<conv>/<what>_<tag>.k". */
static int conv_constant(ir_graph *g, int ci, const char *what, const char *tag, ox_tensor *t,
                         ox_error *err) {
    char label[64];
    snprintf(label, sizeof label, "%s_%s", what, tag);
    const ir_node *conv = &g->nodes[ci];
    return ox_add_constant(g, conv->name && conv->name[0] ? conv->name : "Conv", label, t, err);
}

int ox_conv_replace_weights(ir_graph *g, int ci, ox_tensor *nw, ox_tensor *nb, const char *tag,
                            ox_error *err) {
    ir_node *conv = &g->nodes[ci];
    if (conv->n_inputs < 3) {
        int *ni = realloc(conv->inputs, 3 * sizeof *ni);
        if (!ni) {
            ox_tensor_free(nw);
            ox_tensor_free(nb);
            return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        }
        conv->inputs = ni;
        conv->inputs[2] = -1;
        conv->n_inputs = 3;
    }
    int vw = -1;
    if (nw && (vw = conv_constant(g, ci, "W", tag, nw, err)) < 0) {
        ox_tensor_free(nb);
        return -1;
    }
    int vb = conv_constant(g, ci, "B", tag, nb, err);
    if (vb < 0) return -1;
    conv = &g->nodes[ci]; /* adding values may move the node array */
    if (vw >= 0) conv->inputs[1] = vw;
    conv->inputs[2] = vb;
    return 0;
}

int ox_merge_node(ir_graph *g, unsigned char *dead, int into, int from, ox_error *err) {
    dead[from] = 1;
    return ir_node_absorb(&g->nodes[into], &g->nodes[from], err);
}
