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

int ox_add_constant(ir_graph *g, const char *base, const char *what, ox_tensor *t,
                    ox_error *err) {
    char name[512];
    /* a fresh name: the model may already use the obvious one */
    for (int suffix = 0;; suffix++) {
        snprintf(name, sizeof name, "%s/%s.%d", base && base[0] ? base : "onyx", what, suffix);
        if (ir_graph_find(g, name) < 0) break;
    }
    int v = ir_graph_value(g, name, err);
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
