#include "model_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

/* tests build nodes with hundreds of inputs (test_graph_limits); the
 * node list itself grows (test_graph_scale builds a million nodes) */
#define MAX_ITEMS 1024

struct mb_model {
    Onnx__ModelProto model;
    Onnx__GraphProto graph;
    Onnx__OperatorSetIdProto opset, extra[4];
    Onnx__OperatorSetIdProto *opsets[5];
    Onnx__NodeProto **nodes;
    size_t cap_nodes;
    Onnx__TensorProto *inits[MAX_ITEMS];
    Onnx__ValueInfoProto *inputs[MAX_ITEMS];
    Onnx__ValueInfoProto *outputs[MAX_ITEMS];
    /* every allocation, freed together */
    void **owned;
    size_t n_owned, cap_owned;
    /* bodies attached with mb_attr_graph, freed with their parent */
    mb_model *subs[16];
    size_t n_subs;
};

static void *own(mb_model *m, void *p) {
    if (m->n_owned == m->cap_owned) {
        m->cap_owned = m->cap_owned ? m->cap_owned * 2 : 64;
        m->owned = realloc(m->owned, m->cap_owned * sizeof *m->owned);
    }
    m->owned[m->n_owned++] = p;
    return p;
}

static void *alloc(mb_model *m, size_t n) { return own(m, calloc(1, n ? n : 1)); }

static char *dup(mb_model *m, const char *s) { return own(m, strdup(s)); }

mb_model *mb_new(int64_t opset) {
    mb_model *m = calloc(1, sizeof *m);
    onnx__model_proto__init(&m->model);
    onnx__graph_proto__init(&m->graph);
    onnx__operator_set_id_proto__init(&m->opset);
    m->opset.domain = "";
    m->opset.has_version = 1;
    m->opset.version = opset;
    m->opsets[0] = &m->opset;
    m->model.has_ir_version = 1;
    m->model.ir_version = 8;
    m->model.n_opset_import = 1;
    m->model.opset_import = m->opsets;
    m->model.graph = &m->graph;
    m->graph.name = "test";
    m->graph.initializer = m->inits;
    m->graph.input = m->inputs;
    m->graph.output = m->outputs;
    return m;
}

void mb_free(mb_model *m) {
    if (!m) return;
    for (size_t i = 0; i < m->n_subs; i++) mb_free(m->subs[i]);
    for (size_t i = 0; i < m->n_owned; i++) free(m->owned[i]);
    free(m->owned);
    free(m->nodes);
    free(m);
}

static Onnx__ValueInfoProto *value_info(mb_model *m, const char *name, int dtype,
                                        const int64_t *dims, int rank) {
    Onnx__TypeProto__Tensor *tt = alloc(m, sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = dtype;
    if (rank >= 0) {
        Onnx__TensorShapeProto *shape = alloc(m, sizeof *shape);
        onnx__tensor_shape_proto__init(shape);
        shape->n_dim = (size_t)rank;
        shape->dim = alloc(m, (size_t)rank * sizeof *shape->dim);
        for (int i = 0; i < rank; i++) {
            Onnx__TensorShapeProto__Dimension *d = alloc(m, sizeof *d);
            onnx__tensor_shape_proto__dimension__init(d);
            if (dims[i] < 0) {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
                d->dim_param = dims[i] == -2 ? "?" : "batch";
            } else {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
                d->dim_value = dims[i];
            }
            shape->dim[i] = d;
        }
        tt->shape = shape;
    }
    Onnx__TypeProto *tp = alloc(m, sizeof *tp);
    onnx__type_proto__init(tp);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    Onnx__ValueInfoProto *vi = alloc(m, sizeof *vi);
    onnx__value_info_proto__init(vi);
    vi->name = dup(m, name);
    vi->type = tp;
    return vi;
}

void mb_input(mb_model *m, const char *name, int dtype, const int64_t *dims, int rank) {
    m->inputs[m->graph.n_input++] = value_info(m, name, dtype, dims, rank);
}

void mb_output(mb_model *m, const char *name, int dtype, const int64_t *dims, int rank) {
    m->outputs[m->graph.n_output++] = value_info(m, name, dtype, dims, rank);
}

static Onnx__TensorProto *tensor(mb_model *m, const char *name, int dtype, const int64_t *dims,
                                 int rank) {
    Onnx__TensorProto *t = alloc(m, sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = dup(m, name);
    t->has_data_type = 1;
    t->data_type = dtype;
    t->n_dims = (size_t)rank;
    t->dims = alloc(m, (size_t)rank * sizeof(int64_t));
    if (rank > 0) memcpy(t->dims, dims, (size_t)rank * sizeof(int64_t)); /* dims may be NULL */
    m->inits[m->graph.n_initializer++] = t;
    return t;
}

static size_t count(const int64_t *dims, int rank) {
    size_t n = 1;
    for (int i = 0; i < rank; i++) n *= (size_t)dims[i];
    return n;
}

static void init_raw(mb_model *m, const char *name, int dtype, size_t elem, const int64_t *dims, int rank,
                     const void *data) {
    Onnx__TensorProto *t = tensor(m, name, dtype, dims, rank);
    size_t n = count(dims, rank);
    t->has_raw_data = 1;
    t->raw_data.len = n * elem;
    t->raw_data.data = alloc(m, t->raw_data.len);
    if (n) memcpy(t->raw_data.data, data, t->raw_data.len); /* data may be NULL when empty */
}

void mb_init_float(mb_model *m, const char *name, const int64_t *dims, int rank, const float *data) {
    init_raw(m, name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, sizeof(float), dims, rank, data);
}

void mb_init_half(mb_model *m, const char *name, const int64_t *dims, int rank, const uint16_t *data) {
    init_raw(m, name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16, sizeof(uint16_t), dims, rank, data);
}

void mb_init_bytes(mb_model *m, const char *name, int dtype, const int64_t *dims, int rank, const uint8_t *data) {
    init_raw(m, name, dtype, 1, dims, rank, data);
}

void mb_init_int64(mb_model *m, const char *name, const int64_t *dims, int rank, const int64_t *data) {
    Onnx__TensorProto *t = tensor(m, name, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, dims, rank);
    size_t n = count(dims, rank);
    t->n_int64_data = n;
    t->int64_data = alloc(m, n * sizeof(int64_t));
    memcpy(t->int64_data, data, n * sizeof(int64_t));
}

static Onnx__StringStringEntryProto *kv(mb_model *m, const char *k, const char *v) {
    Onnx__StringStringEntryProto *e = alloc(m, sizeof *e);
    onnx__string_string_entry_proto__init(e);
    e->key = dup(m, k);
    e->value = dup(m, v);
    return e;
}

void mb_init_external(mb_model *m, const char *name, const int64_t *dims, int rank,
                      const char *location, int64_t length) {
    Onnx__TensorProto *t = tensor(m, name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, dims, rank);
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    char len[32];
    snprintf(len, sizeof len, "%lld", (long long)length);
    t->n_external_data = 3;
    t->external_data = alloc(m, 3 * sizeof *t->external_data);
    t->external_data[0] = kv(m, "location", location);
    t->external_data[1] = kv(m, "offset", "0");
    t->external_data[2] = kv(m, "length", len);
}

static char **split(mb_model *m, const char *csv, size_t *n) {
    size_t items = 1;
    for (const char *c = csv; *c; c++) items += *c == ',';
    char **out = alloc(m, items * sizeof *out);
    *n = 0;
    if (!csv[0]) return out;
    char *copy = dup(m, csv);
    for (char *p = copy;;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        out[(*n)++] = p;
        if (!comma) break;
        p = comma + 1;
    }
    return out;
}

void mb_node(mb_model *m, const char *op, const char *inputs, const char *outputs) {
    Onnx__NodeProto *n = alloc(m, sizeof *n);
    onnx__node_proto__init(n);
    char name[64];
    snprintf(name, sizeof name, "%s_%zu", op, m->graph.n_node);
    n->name = dup(m, name);
    n->op_type = dup(m, op);
    n->input = split(m, inputs, &n->n_input);
    n->output = split(m, outputs, &n->n_output);
    if (m->graph.n_node == m->cap_nodes) {
        m->cap_nodes = m->cap_nodes ? m->cap_nodes * 2 : 64;
        m->nodes = realloc(m->nodes, m->cap_nodes * sizeof *m->nodes);
        m->graph.node = m->nodes;
    }
    m->nodes[m->graph.n_node++] = n;
}

static Onnx__AttributeProto *attr(mb_model *m, const char *name, int type) {
    Onnx__NodeProto *n = m->nodes[m->graph.n_node - 1];
    if (!n->attribute) n->attribute = alloc(m, MAX_ITEMS * sizeof *n->attribute);
    Onnx__AttributeProto *a = alloc(m, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = dup(m, name);
    a->has_type = 1;
    a->type = type;
    n->attribute[n->n_attribute++] = a;
    return a;
}

void mb_attr_int(mb_model *m, const char *name, int64_t v) {
    Onnx__AttributeProto *a = attr(m, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1;
    a->i = v;
}

void mb_attr_float(mb_model *m, const char *name, float v) {
    Onnx__AttributeProto *a = attr(m, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    a->has_f = 1;
    a->f = v;
}

void mb_attr_ints(mb_model *m, const char *name, const int64_t *v, size_t n) {
    Onnx__AttributeProto *a = attr(m, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->n_ints = n;
    a->ints = alloc(m, n * sizeof(int64_t));
    memcpy(a->ints, v, n * sizeof(int64_t));
}

void mb_attr_floats(mb_model *m, const char *name, const float *v, size_t n) {
    Onnx__AttributeProto *a = attr(m, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
    a->n_floats = n;
    a->floats = alloc(m, n * sizeof(float));
    memcpy(a->floats, v, n * sizeof(float));
}

void mb_domain(mb_model *m, const char *domain, int64_t version) {
    Onnx__NodeProto *n = m->nodes[m->graph.n_node - 1];
    n->domain = dup(m, domain);
    for (size_t i = 0; i < m->model.n_opset_import; i++)
        if (strcmp(m->opsets[i]->domain, domain) == 0) return;
    if (m->model.n_opset_import >= 5) return;
    Onnx__OperatorSetIdProto *o = &m->extra[m->model.n_opset_import - 1];
    onnx__operator_set_id_proto__init(o);
    o->domain = dup(m, domain);
    o->has_version = 1;
    o->version = version;
    m->opsets[m->model.n_opset_import++] = o;
}

void mb_attr_string(mb_model *m, const char *name, const char *s) {
    Onnx__AttributeProto *a = attr(m, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    a->has_s = 1;
    a->s.len = strlen(s);
    a->s.data = (uint8_t *)dup(m, s);
}

void mb_attr_graph(mb_model *m, const char *name, mb_model *body) {
    Onnx__AttributeProto *a = attr(m, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
    body->graph.name = "body";
    a->g = &body->graph;
    m->subs[m->n_subs++] = body;
}

uint8_t *mb_serialize(mb_model *m, size_t *len) {
    *len = onnx__model_proto__get_packed_size(&m->model);
    uint8_t *buf = malloc(*len ? *len : 1);
    onnx__model_proto__pack(&m->model, buf);
    return buf;
}

int mb_save(mb_model *m, const char *path) {
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    FILE *f = fopen(path, "wb");
    int rc = f && fwrite(buf, 1, len, f) == len ? 0 : -1;
    if (f && fclose(f) != 0) rc = -1;
    free(buf);
    return rc;
}

mb_model *mb_conv_chain(int64_t ch, int64_t hw) {
    size_t nw = (size_t)(ch * ch * 9), nk = (size_t)(ch * hw * hw);
    float *w = malloc(nw * sizeof *w), *b = malloc((size_t)ch * sizeof *b), *k = malloc(nk * sizeof *k);
    if (!w || !b || !k) {
        free(w);
        free(b);
        free(k);
        return NULL;
    }
    for (size_t i = 0; i < nw; i++) w[i] = (float)((int)(i % 7) - 3) * 0.25f;
    for (int64_t i = 0; i < ch; i++) b[i] = 0.5f * (float)(i - 1);
    for (size_t i = 0; i < nk; i++) k[i] = (float)(i % 11) * 0.125f - 0.5f;
    mb_model *m = mb_new(17);
    int64_t xd[4] = {1, ch, hw, hw}, wd[4] = {ch, ch, 3, 3}, bd[1] = {ch};
    int64_t pads[4] = {1, 1, 1, 1};
    mb_input(m, "x", 1, xd, 4);
    mb_output(m, "y", 1, xd, 4);
    mb_init_float(m, "w", wd, 4, w);
    mb_init_float(m, "b", bd, 1, b);
    mb_init_float(m, "k", xd, 4, k);
    mb_node(m, "Conv", "x,w,b", "c");
    mb_attr_ints(m, "pads", pads, 4);
    mb_node(m, "Relu", "c", "r");
    mb_node(m, "Add", "r,k", "a");
    mb_node(m, "Softmax", "a", "y");
    mb_attr_int(m, "axis", 1);
    free(w);
    free(b);
    free(k);
    return m;
}
