/* IR -> ModelProto: graphs, nodes and attributes, the whole model and
 * subsets of the main graph. Tensors and types are in write_tensor.c. */
#include "format/writer.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "format/onyx_file.h"
#include "format/write_internal.h"
#include "onnx.pb-c.h"

static int write_graph(wr_ctx *c, const ir_graph *g, Onnx__GraphProto **out);

static char *opt_str(const char *s) { return s && s[0] ? (char *)s : NULL; }

static int write_attr(wr_ctx *c, const ir_node *n, const ir_attr *a, Onnx__AttributeProto **out) {
    Onnx__AttributeProto *ap = wr_alloc(c, sizeof *ap);
    if (!ap) return -1;
    onnx__attribute_proto__init(ap);
    ap->name = a->name ? a->name : "";
    ap->has_type = 1;
    ap->type = (Onnx__AttributeProto__AttributeType)a->type;
    switch (a->type) {
    case IR_ATTR_FLOAT: ap->has_f = 1; ap->f = a->f; break;
    case IR_ATTR_INT: ap->has_i = 1; ap->i = a->i; break;
    case IR_ATTR_STRING:
        ap->has_s = 1;
        ap->s.len = a->s ? a->s_len : 0;
        ap->s.data = (uint8_t *)a->s;
        break;
    case IR_ATTR_TENSOR:
        if (!a->t) goto no_value;
        if (!(ap->t = wr_tensor(c, a->t, NULL))) goto bad_value;
        break;
    case IR_ATTR_GRAPH:
        if (!a->g) goto no_value;
        if (write_graph(c, a->g, &ap->g) != 0) goto bad_value;
        break;
    case IR_ATTR_FLOATS:
        ap->n_floats = a->n;
        ap->floats = a->floats;
        break;
    case IR_ATTR_INTS:
        ap->n_ints = a->n;
        ap->ints = a->ints;
        break;
    case IR_ATTR_STRINGS:
        ap->n_strings = a->n;
        if (!(ap->strings = wr_alloc_array(c, a->n, sizeof *ap->strings))) return -1;
        for (size_t i = 0; i < a->n; i++) {
            ap->strings[i].len = a->strings[i] ? strlen(a->strings[i]) : 0;
            ap->strings[i].data = (uint8_t *)a->strings[i];
        }
        break;
    case IR_ATTR_TENSORS:
        ap->n_tensors = a->n;
        if (!(ap->tensors = wr_alloc_array(c, a->n, sizeof *ap->tensors))) return -1;
        for (size_t i = 0; i < a->n; i++) {
            if (!a->tensors[i]) goto no_value;
            if (!(ap->tensors[i] = wr_tensor(c, a->tensors[i], NULL))) goto bad_value;
        }
        break;
    case IR_ATTR_GRAPHS:
        ap->n_graphs = a->n;
        if (!(ap->graphs = wr_alloc_array(c, a->n, sizeof *ap->graphs))) return -1;
        for (size_t i = 0; i < a->n; i++) {
            if (!a->graphs[i]) goto no_value;
            if (write_graph(c, a->graphs[i], &ap->graphs[i]) != 0) goto bad_value;
        }
        break;
    case IR_ATTR_TYPE_PROTO:
        if (!(ap->tp = wr_type(c, &a->type_proto))) return -1;
        break;
    case IR_ATTR_SPARSE_TENSOR: {
        char label[256];
        return ox_fail(c->err, ONYX_NOT_IMPLEMENTED,
                       "%s: attribute '%s' is a sparse tensor, which the writer does not support",
                       ir_node_label(n, label, sizeof label), ap->name);
    }
    default: {
        char label[256];
        return ox_fail(c->err, ONYX_INVALID_ARGUMENT, "%s: attribute '%s' has unknown type %d",
                       ir_node_label(n, label, sizeof label), ap->name, (int)a->type);
    }
    }
    *out = ap;
    return 0;
no_value: {
    char label[256];
    return ox_fail(c->err, ONYX_INVALID_ARGUMENT, "%s: attribute '%s' has no value",
                   ir_node_label(n, label, sizeof label), ap->name);
}
bad_value:;
    char label[256];
    ox_error_prefix(c->err, "%s, attribute '%s'", ir_node_label(n, label, sizeof label), ap->name);
    return -1;
}

static char **name_list(wr_ctx *c, const ir_graph *g, const int *ids, int n) {
    char **names = wr_alloc_array(c, (size_t)n, sizeof *names);
    if (!names) return NULL;
    for (int i = 0; i < n; i++) names[i] = ids[i] >= 0 ? g->values[ids[i]].name : "";
    return names;
}

static int write_node(wr_ctx *c, const ir_graph *g, const ir_node *n, Onnx__NodeProto **out) {
    Onnx__NodeProto *np = wr_alloc(c, sizeof *np);
    if (!np) return -1;
    onnx__node_proto__init(np);
    np->name = opt_str(n->name);
    np->op_type = n->op_type;
    np->domain = opt_str(n->domain);
    np->n_input = (size_t)n->n_inputs;
    np->n_output = (size_t)n->n_outputs;
    if (!(np->input = name_list(c, g, n->inputs, n->n_inputs)) ||
        !(np->output = name_list(c, g, n->outputs, n->n_outputs)))
        return -1;
    np->n_attribute = (size_t)n->n_attrs;
    if (!(np->attribute = wr_alloc_array(c, np->n_attribute, sizeof *np->attribute))) return -1;
    for (int i = 0; i < n->n_attrs; i++)
        if (write_attr(c, n, &n->attrs[i], &np->attribute[i]) != 0) return -1;
    *out = np;
    return 0;
}

static Onnx__ValueInfoProto *value_info(wr_ctx *c, const ir_graph *g, int v) {
    const ir_value *val = &g->values[v];
    return wr_value_info(c, val->name, val->has_type ? &val->type : NULL);
}

/* An intermediate value worth a value_info: made by a node of this graph,
 * typed, and not already described as an output. */
static int wants_value_info(const ir_value *v) {
    return v->producer >= 0 && v->has_type && !v->is_output && !v->is_input && !v->init;
}

/* A graph's weight: the main graph's go to the sink when it takes them. */
static Onnx__TensorProto *initializer(wr_ctx *c, const ir_graph *g, const ir_value *val) {
    if (c->sink && !g->parent) {
        int declined = 0;
        Onnx__TensorProto *tp = wr_tensor_external(c, val->init, val->name, &declined);
        if (tp || !declined) return tp;
    }
    return wr_tensor(c, val->init, val->name);
}

static int write_graph(wr_ctx *c, const ir_graph *g, Onnx__GraphProto **out) {
    Onnx__GraphProto *gp = wr_alloc(c, sizeof *gp);
    if (!gp) return -1;
    onnx__graph_proto__init(gp);
    gp->name = opt_str(g->name);
    size_t n_init = 0, n_vi = 0;
    for (int v = 0; v < g->n_values; v++) {
        const ir_value *val = &g->values[v];
        if (val->init && !val->outer) n_init++;
        if (wants_value_info(val)) n_vi++;
    }
    gp->initializer = wr_alloc_array(c, n_init, sizeof *gp->initializer);
    gp->value_info = wr_alloc_array(c, n_vi, sizeof *gp->value_info);
    gp->input = wr_alloc_array(c, (size_t)g->n_inputs, sizeof *gp->input);
    gp->output = wr_alloc_array(c, (size_t)g->n_outputs, sizeof *gp->output);
    gp->node = wr_alloc_array(c, (size_t)g->n_nodes, sizeof *gp->node);
    if (!gp->initializer || !gp->value_info || !gp->input || !gp->output || !gp->node) return -1;
    /* values in id order: the loader numbers initializers first, in file
     * order, so a written model reads back in the same order */
    for (int v = 0; v < g->n_values; v++) {
        const ir_value *val = &g->values[v];
        if (val->init && !val->outer &&
            !(gp->initializer[gp->n_initializer++] = initializer(c, g, val))) {
            ox_error_prefix(c->err, "graph '%s'", g->name ? g->name : "");
            return -1;
        }
        if (wants_value_info(val) && !(gp->value_info[gp->n_value_info++] = value_info(c, g, v)))
            return -1;
    }
    for (int i = 0; i < g->n_inputs; i++)
        if (!(gp->input[gp->n_input++] = value_info(c, g, g->inputs[i]))) return -1;
    for (int i = 0; i < g->n_outputs; i++)
        if (!(gp->output[gp->n_output++] = value_info(c, g, g->outputs[i]))) return -1;
    for (int i = 0; i < g->n_nodes; i++)
        if (write_node(c, g, &g->nodes[i], &gp->node[gp->n_node++]) != 0) return -1;
    *out = gp;
    return 0;
}

/* An optimized model says so in its metadata (format/onyx_file.h). */
static int compiled_marks(wr_ctx *c, const ir_model *m, Onnx__ModelProto *mp) {
    mp->metadata_props = wr_alloc_array(c, 2, sizeof *mp->metadata_props);
    char *level = wr_alloc(c, 2), *digest = wr_alloc(c, 65);
    if (!mp->metadata_props || !level || !digest) return -1;
    level[0] = (char)('0' + (m->compiled_level >= 0 && m->compiled_level <= 2 ? m->compiled_level : 0));
    ox_sha256_hex(m->source_sha256, digest);
    const char *keys[2] = {OX_ONYX_MARK_LEVEL, OX_ONYX_MARK_SOURCE};
    char *values[2] = {level, digest};
    for (int i = 0; i < 2; i++) {
        Onnx__StringStringEntryProto *e = wr_alloc(c, sizeof *e);
        if (!e) return -1;
        onnx__string_string_entry_proto__init(e);
        e->key = (char *)keys[i];
        e->value = values[i];
        mp->metadata_props[mp->n_metadata_props++] = e;
    }
    return 0;
}

/* ModelProto around graph gp with m's opsets, packed into *out. */
static int pack_model(wr_ctx *c, const ir_model *m, Onnx__GraphProto *gp, int whole, uint8_t **out,
                      size_t *len) {
    Onnx__ModelProto mp;
    onnx__model_proto__init(&mp);
    mp.has_ir_version = 1;
    /* a model made in memory may carry no version: 10 (ONNX 1.16) is the
     * first with the 4-bit types, which any IR may hold */
    mp.ir_version = m->ir_version > 0 ? m->ir_version : 10;
    mp.producer_name = "onyx";
    mp.producer_version = ONYX_VERSION_STRING;
    mp.graph = gp;
    /* a part of an optimized graph is not an optimized model */
    if (whole && m->compiled && compiled_marks(c, m, &mp) != 0) return -1;
    mp.n_opset_import = (size_t)m->n_opsets;
    mp.opset_import = wr_alloc_array(c, mp.n_opset_import, sizeof *mp.opset_import);
    if (!mp.opset_import) return -1;
    for (int i = 0; i < m->n_opsets; i++) {
        Onnx__OperatorSetIdProto *os = wr_alloc(c, sizeof *os);
        if (!os) return -1;
        onnx__operator_set_id_proto__init(os);
        os->domain = m->opsets[i].domain ? m->opsets[i].domain : "";
        os->has_version = 1;
        os->version = m->opsets[i].version;
        mp.opset_import[i] = os;
    }
    size_t size = onnx__model_proto__get_packed_size(&mp);
    if (size > (size_t)INT32_MAX)
        return ox_fail(c->err, ONYX_NOT_IMPLEMENTED,
                       "the model would take %zu bytes, past protobuf's 2 GiB limit on one "
                       "message, and writing weights as external data is not supported",
                       size);
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) return ox_fail(c->err, ONYX_OUT_OF_MEMORY, "out of memory (%zu bytes)", size);
    size_t packed = onnx__model_proto__pack(&mp, buf);
    if (packed != size) {
        free(buf);
        return ox_fail(c->err, ONYX_RUNTIME_ERROR, "protobuf-c packed %zu bytes, expected %zu", packed,
                       size);
    }
    *out = buf;
    *len = size;
    return 0;
}

static int start(const ir_model *m, uint8_t **out, size_t *len, ox_error *err) {
    if (out) *out = NULL;
    if (len) *len = 0;
    if (!m || !m->graph || !out || !len)
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "writing a model needs a model and outputs");
    return 0;
}

int ox_model_write(const ir_model *m, uint8_t **out, size_t *len, ox_error *err) {
    return ox_model_write_with(m, NULL, out, len, err);
}

int ox_model_write_with(const ir_model *m, const ox_weight_sink *sink, uint8_t **out, size_t *len,
                        ox_error *err) {
    ox_error local = {0};
    if (!err) err = &local;
    if (start(m, out, len, err) != 0) return -1;
    wr_ctx c = {NULL, err, sink};
    Onnx__GraphProto *gp = NULL;
    int rc = write_graph(&c, m->graph, &gp);
    if (rc == 0) rc = pack_model(&c, m, gp, 1, out, len);
    wr_free_all(&c);
    return rc;
}

/* ---- subsets ---- */

typedef struct subset {
    const ir_graph *g;
    unsigned char *produced, *read, *listed;
    int *inputs, n_inputs;
    int *inits, n_inits;
} subset;

/* Names a subgraph reads from enclosing scopes (defined nowhere inside
 * it), resolved in g, recursively through nested bodies. */
static void outer_reads(subset *s, const ir_graph *sub, void (*visit)(subset *, int)) {
    for (int v = 0; v < sub->n_values; v++) {
        const ir_value *val = &sub->values[v];
        if (val->outer || (val->producer < 0 && !val->init && !val->is_input)) {
            int id = ir_graph_find(s->g, val->name);
            if (id >= 0) visit(s, id);
        }
    }
    for (int i = 0; i < sub->n_nodes; i++) {
        const ir_node *n = &sub->nodes[i];
        for (int k = 0; k < n->n_attrs; k++) {
            const ir_attr *a = &n->attrs[k];
            if (a->type == IR_ATTR_GRAPH && a->g) outer_reads(s, a->g, visit);
            if (a->type == IR_ATTR_GRAPHS)
                for (size_t j = 0; j < a->n; j++) outer_reads(s, a->graphs[j], visit);
        }
    }
}

static void node_reads(subset *s, const ir_node *n, void (*visit)(subset *, int)) {
    for (int k = 0; k < n->n_inputs; k++)
        if (n->inputs[k] >= 0) visit(s, n->inputs[k]);
    for (int k = 0; k < n->n_attrs; k++) {
        const ir_attr *a = &n->attrs[k];
        if (a->type == IR_ATTR_GRAPH && a->g) outer_reads(s, a->g, visit);
        if (a->type == IR_ATTR_GRAPHS)
            for (size_t j = 0; j < a->n; j++) outer_reads(s, a->graphs[j], visit);
    }
}

static void mark_read(subset *s, int v) { s->read[v] = 1; }

/* First use of a value no kept node makes: a constant or an input. */
static void list_source(subset *s, int v) {
    if (s->produced[v] || s->listed[v]) return;
    s->listed[v] = 1;
    if (s->g->values[v].init)
        s->inits[s->n_inits++] = v;
    else
        s->inputs[s->n_inputs++] = v;
}

static int write_subset_graph(wr_ctx *c, const ir_graph *g, const unsigned char *keep, subset *s,
                              Onnx__GraphProto **out) {
    size_t nv = (size_t)g->n_values;
    s->produced = wr_alloc(c, nv + 1);
    s->read = wr_alloc(c, nv + 1);
    s->listed = wr_alloc(c, nv + 1);
    s->inputs = wr_alloc_array(c, nv + 1, sizeof(int));
    s->inits = wr_alloc_array(c, nv + 1, sizeof(int));
    if (!s->produced || !s->read || !s->listed || !s->inputs || !s->inits) return -1;
    int n_kept = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        if (!keep[i]) continue;
        n_kept++;
        const ir_node *n = &g->nodes[i];
        /* graph order is a topological order, so a value a kept node
         * reads is produced (if at all by a kept node) before its use */
        node_reads(s, n, list_source);
        node_reads(s, n, mark_read);
        for (int k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] >= 0) s->produced[n->outputs[k]] = 1;
    }
    Onnx__GraphProto *gp = wr_alloc(c, sizeof *gp);
    if (!gp) return -1;
    onnx__graph_proto__init(gp);
    gp->name = opt_str(g->name);
    gp->node = wr_alloc_array(c, (size_t)n_kept, sizeof *gp->node);
    gp->input = wr_alloc_array(c, (size_t)s->n_inputs, sizeof *gp->input);
    gp->initializer = wr_alloc_array(c, (size_t)s->n_inits, sizeof *gp->initializer);
    gp->output = wr_alloc_array(c, nv, sizeof *gp->output);
    gp->value_info = wr_alloc_array(c, nv, sizeof *gp->value_info);
    if (!gp->node || !gp->input || !gp->initializer || !gp->output || !gp->value_info) return -1;
    for (int i = 0; i < s->n_inputs; i++)
        if (!(gp->input[gp->n_input++] = value_info(c, g, s->inputs[i]))) return -1;
    for (int i = 0; i < s->n_inits; i++) {
        const ir_value *val = &g->values[s->inits[i]];
        if (!(gp->initializer[gp->n_initializer++] = wr_tensor(c, val->init, val->name))) return -1;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        if (!keep[i]) continue;
        const ir_node *n = &g->nodes[i];
        if (write_node(c, g, n, &gp->node[gp->n_node++]) != 0) return -1;
        for (int k = 0; k < n->n_outputs; k++) {
            int v = n->outputs[k];
            if (v < 0) continue;
            const ir_value *val = &g->values[v];
            if (!s->read[v] || val->is_output) {
                if (!(gp->output[gp->n_output++] = value_info(c, g, v))) return -1;
            } else if (val->has_type && !(gp->value_info[gp->n_value_info++] = value_info(c, g, v))) {
                return -1;
            }
        }
    }
    *out = gp;
    return 0;
}

int ox_graph_write_subset(const ir_model *m, const ir_graph *g, const unsigned char *keep,
                          uint8_t **out, size_t *len, ox_error *err) {
    ox_error local = {0};
    if (!err) err = &local;
    if (start(m, out, len, err) != 0) return -1;
    if (!g || !keep)
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "writing a subset needs a graph and its mask");
    if (g->parent)
        return ox_fail(err, ONYX_INVALID_ARGUMENT,
                       "only a subset of the main graph can be written, not of graph '%s'",
                       g->name ? g->name : "");
    wr_ctx c = {NULL, err, NULL};
    subset s = {.g = g};
    Onnx__GraphProto *gp = NULL;
    int rc = write_subset_graph(&c, g, keep, &s, &gp);
    if (rc == 0) rc = pack_model(&c, m, gp, 0, out, len);
    wr_free_all(&c);
    return rc;
}
