#include "loader/loader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "core/files.h"
#include "core/strmap.h"
#include "format/onyx_file.h"
#include "loader/nesting.h"
#include "loader/tensor_proto.h"
#include "loader/wire.h"
#include "onnx.pb-c.h"

typedef struct load_ctx {
    const ir_model *model;
    const char *base_dir;
    ox_error *err;
    /* raw_data of the main graph's weights, left in the source bytes */
    const uint8_t *src;
    const ox_stripped_model *stripped;
    int mapped; /* src is a file mapping whose pages may be dropped */
    /* an optimized file's weight section (NULL for plain ONNX) */
    const uint8_t *weights;
    size_t weights_size;
} load_ctx;

static int load_graph(load_ctx *lc, const Onnx__GraphProto *gp, ir_graph *parent, ir_graph **out);

/* TypeProto -> ir_type. Unsupported kinds (map, sparse) are errors. */
static int convert_type(const Onnx__TypeProto *tp, const char *what, ir_type *t, ox_error *err) {
    memset(t, 0, sizeof *t);
    t->rank = -1;
    if (!tp) return 0;
    switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE: {
        const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
        t->kind = OX_KIND_TENSOR;
        int et = tt->has_elem_type ? tt->elem_type : 0;
        if (et != 0 && !ox_dtype_valid(et))
            return ox_fail(err, ONYX_INVALID_MODEL, "%s: unknown element type %d", what, et);
        t->dtype = (ox_dtype)et;
        if (tt->shape) {
            if (tt->shape->n_dim > OX_MAX_RANK)
                return ox_fail(err, ONYX_NOT_IMPLEMENTED, "%s: rank %zu exceeds onyx's limit of %d",
                               what, tt->shape->n_dim, OX_MAX_RANK);
            t->rank = (int)tt->shape->n_dim;
            for (size_t i = 0; i < tt->shape->n_dim; i++) {
                const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
                t->dims[i] = -1;
                if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                    d->dim_value >= 0)
                    t->dims[i] = d->dim_value;
                /* "?" is how several exporters (Paddle2ONNX among them) spell
                 * "unknown", not a name shared between dimensions */
                else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                         d->dim_param && d->dim_param[0] && strcmp(d->dim_param, "?") != 0 &&
                         !(t->dim_params[i] = ox_strdup(d->dim_param)))
                    return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
            }
        }
        return 0;
    }
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: {
        const Onnx__TypeProto *inner = tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE
                                           ? tp->sequence_type->elem_type
                                           : tp->optional_type->elem_type;
        ir_type it;
        if (convert_type(inner, what, &it, err) != 0) return -1;
        t->kind = tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ? OX_KIND_SEQUENCE
                                                                          : OX_KIND_OPTIONAL;
        t->dtype = it.dtype;
        ir_type_clear(&it);
        return 0;
    }
    case ONNX__TYPE_PROTO__VALUE__NOT_SET: return 0;
    default:
        return ox_fail(err, ONYX_NOT_IMPLEMENTED, "%s: map and sparse tensor types are not supported",
                       what);
    }
}

/* Once copied, a weight's file pages are not needed again; dropping them
 * keeps resident memory near one copy of the weights while loading. */
static void drop_pages(const uint8_t *p, size_t n) { ox_drop_mapped_pages(p, n, NULL); }

/* Models from IR version 1 may leave AttributeProto.type unset; the
 * populated field then tells the type. */
static ir_attr_type deduce_attr_type(const Onnx__AttributeProto *ap) {
    if (ap->has_f) return IR_ATTR_FLOAT;
    if (ap->has_i) return IR_ATTR_INT;
    if (ap->has_s) return IR_ATTR_STRING;
    if (ap->t) return IR_ATTR_TENSOR;
    if (ap->g) return IR_ATTR_GRAPH;
    if (ap->n_floats) return IR_ATTR_FLOATS;
    if (ap->n_ints) return IR_ATTR_INTS;
    if (ap->n_strings) return IR_ATTR_STRINGS;
    if (ap->n_tensors) return IR_ATTR_TENSORS;
    if (ap->n_graphs) return IR_ATTR_GRAPHS;
    return IR_ATTR_UNDEFINED;
}

static int convert_attr(load_ctx *lc, const Onnx__AttributeProto *ap, ir_graph *owner, ir_attr *a,
                        const ir_node *node, const ox_raw_slice *raw) {
    ox_error *err = lc->err;
    char label_buf[256]; /* the node's label, made only for an error */
#define node_label ir_node_label(node, label_buf, sizeof label_buf)
    a->name = ox_strdup(ap->name ? ap->name : "");
    if (!a->name) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    if (ap->ref_attr_name && ap->ref_attr_name[0])
        return ox_fail(err, ONYX_INVALID_MODEL,
                       "%s: attribute '%s' refers to a function attribute outside a function",
                       node_label, a->name);
    a->type = ap->has_type ? (ir_attr_type)ap->type : deduce_attr_type(ap);
    switch (a->type) {
    case IR_ATTR_FLOAT: a->f = ap->f; return 0;
    case IR_ATTR_INT: a->i = ap->i; return 0;
    case IR_ATTR_STRING:
        a->s = malloc(ap->s.len + 1);
        if (!a->s) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        if (ap->s.len) memcpy(a->s, ap->s.data, ap->s.len);
        a->s[ap->s.len] = '\0';
        a->s_len = ap->s.len;
        return 0;
    case IR_ATTR_TENSOR:
        if (!ap->t)
            return ox_fail(err, ONYX_INVALID_MODEL, "%s: tensor attribute '%s' has no tensor",
                           node_label, a->name);
        if (ox_tensor_from_proto_raw(ap->t, raw ? lc->src + raw->offset : NULL, raw ? raw->length : 0,
                                     lc->base_dir, &a->t, err) != 0)
            return -1;
        if (raw && lc->mapped) drop_pages(lc->src + raw->offset, raw->length);
        return 0;
    case IR_ATTR_GRAPH:
        if (!ap->g)
            return ox_fail(err, ONYX_INVALID_MODEL, "%s: graph attribute '%s' has no graph",
                           node_label, a->name);
        return load_graph(lc, ap->g, owner, &a->g);
    case IR_ATTR_FLOATS:
        a->n = ap->n_floats;
        a->floats = malloc(a->n * sizeof(float) + 1);
        if (!a->floats) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        if (a->n) memcpy(a->floats, ap->floats, a->n * sizeof(float));
        return 0;
    case IR_ATTR_INTS:
        a->n = ap->n_ints;
        a->ints = malloc(a->n * sizeof(int64_t) + 1);
        if (!a->ints) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        if (a->n) memcpy(a->ints, ap->ints, a->n * sizeof(int64_t));
        return 0;
    case IR_ATTR_STRINGS:
        a->strings = calloc(ap->n_strings + 1, sizeof(char *));
        if (!a->strings) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        a->n = ap->n_strings;
        for (size_t i = 0; i < a->n; i++) {
            a->strings[i] = malloc(ap->strings[i].len + 1);
            if (!a->strings[i]) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
            if (ap->strings[i].len) memcpy(a->strings[i], ap->strings[i].data, ap->strings[i].len);
            a->strings[i][ap->strings[i].len] = '\0';
        }
        return 0;
    case IR_ATTR_TENSORS:
        a->tensors = calloc(ap->n_tensors + 1, sizeof(ox_tensor *));
        if (!a->tensors) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        a->n = ap->n_tensors;
        for (size_t i = 0; i < a->n; i++)
            if (ox_tensor_from_proto(ap->tensors[i], lc->base_dir, &a->tensors[i], err) != 0)
                return -1;
        return 0;
    case IR_ATTR_GRAPHS:
        a->graphs = calloc(ap->n_graphs + 1, sizeof(ir_graph *));
        if (!a->graphs) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        a->n = ap->n_graphs;
        for (size_t i = 0; i < a->n; i++)
            if (load_graph(lc, ap->graphs[i], owner, &a->graphs[i]) != 0) return -1;
        return 0;
    case IR_ATTR_TYPE_PROTO: return convert_type(ap->tp, a->name, &a->type_proto, err);
    case IR_ATTR_SPARSE_TENSOR:
        return ox_fail(err, ONYX_NOT_IMPLEMENTED, "%s: sparse tensor attribute '%s' is not supported",
                       node_label, a->name);
    default:
        return ox_fail(err, ONYX_INVALID_MODEL, "%s: attribute '%s' has unknown type %d", node_label,
                       a->name, (int)a->type);
    }
}

static int name_list(ir_graph *g, size_t n, char **names, int **ids, int *count, ox_error *err) {
    *ids = malloc((n + 1) * sizeof(int));
    if (!*ids) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    *count = (int)n;
    for (size_t i = 0; i < n; i++) {
        if (!names[i] || !names[i][0]) {
            (*ids)[i] = -1; /* omitted optional input/output */
            continue;
        }
        int v = ir_graph_value(g, names[i], err);
        if (v < 0) return -1;
        (*ids)[i] = v;
    }
    return 0;
}

static int load_node(load_ctx *lc, const Onnx__NodeProto *np, ir_graph *g) {
    ox_error *err = lc->err;
    if (!np->op_type || !np->op_type[0])
        return ox_fail(err, ONYX_INVALID_MODEL, "graph '%s': node %d '%s' has no op_type", g->name,
                       g->n_nodes, np->name ? np->name : "");
    int idx = ir_graph_add_node(g, np->name, np->op_type, np->domain, err);
    if (idx < 0) return -1;
    ir_node *n = &g->nodes[idx];
    int64_t ver = ir_model_opset(lc->model, n->domain);
    n->opset = ver > 0 && ver < 1000000 ? (int)ver : -1;
    n->ep = -1;
    if (name_list(g, np->n_input, np->input, &n->inputs, &n->n_inputs, err) != 0) return -1;
    n = &g->nodes[idx];
    if (name_list(g, np->n_output, np->output, &n->outputs, &n->n_outputs, err) != 0) return -1;
    n = &g->nodes[idx];
    for (int k = 0; k < n->n_outputs; k++) {
        int v = n->outputs[k];
        if (v < 0) continue;
        char label[256];
        if (g->values[v].producer >= 0 || g->values[v].init || g->values[v].is_input)
            return ox_fail(err, ONYX_INVALID_MODEL,
                           "%s: output '%s' is already defined elsewhere in graph '%s' (names must "
                           "be assigned once)",
                           ir_node_label(n, label, sizeof label), g->values[v].name, g->name);
        g->values[v].producer = idx;
    }
    n->attrs = calloc(np->n_attribute + 1, sizeof(ir_attr));
    if (!n->attrs) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; i < np->n_attribute; i++) {
        n->n_attrs = (int)i + 1;
        for (size_t j = 0; j < i; j++)
            if (np->attribute[j]->name && np->attribute[i]->name &&
                strcmp(np->attribute[j]->name, np->attribute[i]->name) == 0)
            {
                char label[256];
                return ox_fail(err, ONYX_INVALID_MODEL, "%s: attribute '%s' given twice",
                               ir_node_label(&g->nodes[idx], label, sizeof label),
                               np->attribute[i]->name);
            }
        const ox_raw_slice *raw =
            g->parent ? NULL : ox_stripped_attr(lc->stripped, (size_t)idx, i);
        if (convert_attr(lc, np->attribute[i], g, &g->nodes[idx].attrs[i], &g->nodes[idx], raw) != 0)
            return -1;
    }
    return 0;
}

static int load_graph(load_ctx *lc, const Onnx__GraphProto *gp, ir_graph *parent, ir_graph **out) {
    ox_error *err = lc->err;
    ir_graph *g = ir_graph_new(gp->name, parent);
    *out = g;
    if (!g) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    if (gp->n_sparse_initializer)
        return ox_fail(err, ONYX_NOT_IMPLEMENTED, "graph '%s': sparse initializers are not supported",
                       g->name);
    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        if (!tp->name || !tp->name[0])
            return ox_fail(err, ONYX_INVALID_MODEL, "graph '%s': initializer %zu has no name", g->name,
                           i);
        int v = ir_graph_value(g, tp->name, err);
        if (v < 0) return -1;
        if (g->values[v].init)
            return ox_fail(err, ONYX_INVALID_MODEL, "graph '%s': initializer '%s' is defined twice",
                           g->name, tp->name);
        ox_tensor *t;
        const ox_raw_slice *raw =
            !parent && i < lc->stripped->n_inits && lc->stripped->inits[i].present ? &lc->stripped->inits[i] : NULL;
        if (lc->weights && !parent && ox_tensor_proto_in_section(tp, OX_ONYX_WEIGHTS)) {
            if (ox_tensor_from_section(tp, lc->weights, lc->weights_size, OX_ONYX_ALIGN, &t, err) != 0)
                return -1;
        } else if (ox_tensor_from_proto_raw(tp, raw ? lc->src + raw->offset : NULL,
                                            raw ? raw->length : 0, lc->base_dir, &t, err) != 0) {
            return -1;
        }
        if (raw && lc->mapped) drop_pages(lc->src + raw->offset, raw->length);
        ir_value *val = &g->values[v];
        val->init = t;
        val->has_type = 1;
        val->type.kind = OX_KIND_TENSOR;
        val->type.dtype = t->dtype;
        val->type.rank = t->rank;
        memcpy(val->type.dims, t->dims, sizeof t->dims);
    }
    g->inputs = malloc((gp->n_input + 1) * sizeof(int));
    if (!g->inputs) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        if (!vi->name || !vi->name[0])
            return ox_fail(err, ONYX_INVALID_MODEL, "graph '%s': input %zu has no name", g->name, i);
        int v = ir_graph_value(g, vi->name, err);
        if (v < 0) return -1;
        ir_value *val = &g->values[v];
        if (val->is_input)
            return ox_fail(err, ONYX_INVALID_MODEL, "graph '%s': input '%s' is listed twice", g->name,
                           vi->name);
        g->inputs[g->n_inputs++] = v;
        val->is_input = 1;
        if (!val->init) {
            char what[300];
            snprintf(what, sizeof what, "input '%s'", vi->name);
            if (convert_type(vi->type, what, &val->type, err) != 0) return -1;
            val->has_type = vi->type != NULL;
        }
    }
    for (size_t i = 0; i < gp->n_node; i++)
        if (load_node(lc, gp->node[i], g) != 0) return -1;
    g->outputs = malloc((gp->n_output + 1) * sizeof(int));
    if (!g->outputs) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; i < gp->n_output; i++) {
        const Onnx__ValueInfoProto *vi = gp->output[i];
        if (!vi->name || !vi->name[0])
            return ox_fail(err, ONYX_INVALID_MODEL, "graph '%s': output %zu has no name", g->name, i);
        int v = ir_graph_value(g, vi->name, err);
        if (v < 0) return -1;
        g->outputs[g->n_outputs++] = v;
        ir_value *val = &g->values[v];
        val->is_output = 1;
        if (vi->type && !val->init) {
            char what[300];
            snprintf(what, sizeof what, "output '%s'", vi->name);
            /* an output listed twice (or also an input) is typed again:
             * the last type wins, and the earlier one's dim_param names
             * must be freed first */
            ir_type_clear(&val->type);
            if (convert_type(vi->type, what, &val->type, err) != 0) return -1;
            val->has_type = 1;
        }
    }
    /* value_info annotations seed inference for intermediate values. */
    for (size_t i = 0; i < gp->n_value_info; i++) {
        const Onnx__ValueInfoProto *vi = gp->value_info[i];
        if (!vi->name || !vi->type) continue;
        int v = ir_graph_find(g, vi->name);
        if (v < 0 || g->values[v].has_type) continue;
        if (convert_type(vi->type, vi->name, &g->values[v].type, err) != 0) return -1;
        g->values[v].has_type = 1;
    }
    return 0;
}

/* An ONNX twin of an optimized file (ox_onnx_write_file) says in its
 * metadata that its graph is optimized, at which level and from which
 * source: it then loads as the optimized file does (only the passes the
 * session's providers add). A mark that does not parse is ignored. */
static void read_compiled_marks(const Onnx__ModelProto *mp, ir_model *m) {
    int level = -1, have_digest = 0;
    uint8_t digest[32];
    for (size_t i = 0; i < mp->n_metadata_props; i++) {
        const Onnx__StringStringEntryProto *kv = mp->metadata_props[i];
        if (!kv->key || !kv->value) continue;
        if (strcmp(kv->key, OX_ONYX_MARK_LEVEL) == 0 && kv->value[0] >= '0' && kv->value[0] <= '2' &&
            !kv->value[1])
            level = kv->value[0] - '0';
        if (strcmp(kv->key, OX_ONYX_MARK_SOURCE) == 0 && strlen(kv->value) == 64) {
            have_digest = 1;
            for (int k = 0; k < 32 && have_digest; k++) {
                unsigned v;
                have_digest = sscanf(kv->value + 2 * k, "%2x", &v) == 1;
                digest[k] = (uint8_t)v;
            }
        }
    }
    if (level < 0 || !have_digest) return;
    m->compiled = 1;
    m->compiled_level = level;
    memcpy(m->source_sha256, digest, 32);
}

static int load_bytes(const uint8_t *data, size_t size, int mapped, const ox_onyx_view *onyx,
                      const char *base_dir, ir_model **out, ox_error *err) {
    *out = NULL;
    if (!data || size == 0)
        return ox_fail(err, ONYX_INVALID_MODEL, "the model is empty (0 bytes)");
    ox_stripped_model stripped = {0};
    ox_error ignored = {0};
    Onnx__ModelProto *mp = NULL;
    /* An optimized file's graph holds no weight payloads (they are in its
     * weight section): it is unpacked as it is, with no stripped copy. */
    if (onyx || ox_strip_weights(data, size, &stripped, &ignored) == 0) {
        const uint8_t *bytes = onyx ? data : stripped.bytes;
        size_t n = onyx ? size : stripped.size;
        /* protobuf-c recurses per nested message: measure first */
        if (ox_pb_check_nesting(&onnx__model_proto__descriptor, bytes, n, "model",
                                ONYX_INVALID_MODEL, err) != 0) {
            ox_stripped_model_free(&stripped);
            return -1;
        }
        mp = onnx__model_proto__unpack(NULL, n, bytes);
        /* the stripped copy is unpacked; only the slices are needed now */
        free(stripped.bytes);
        stripped.bytes = NULL;
    }
    if (!mp) {
        ox_stripped_model_free(&stripped);
        return ox_fail(err, ONYX_INVALID_MODEL,
                       "not an ONNX model: the %zu bytes do not parse as a ModelProto (truncated "
                       "or not protobuf)",
                       size);
    }
    int rc = -1;
    ir_model *m = calloc(1, sizeof *m);
    if (!m) {
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    if (!mp->graph) {
        ox_fail(err, ONYX_INVALID_MODEL, "not an ONNX model: it has no graph");
        goto done;
    }
    read_compiled_marks(mp, m);
    m->ir_version = mp->has_ir_version ? mp->ir_version : 0;
    m->producer_name = ox_strdup(mp->producer_name ? mp->producer_name : "");
    m->producer_version = ox_strdup(mp->producer_version ? mp->producer_version : "");
    m->opsets = calloc(mp->n_opset_import + 1, sizeof *m->opsets);
    if (!m->producer_name || !m->producer_version || !m->opsets) {
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *os = mp->opset_import[i];
        const char *d = ir_canonical_domain(os->domain ? os->domain : "");
        if (ir_model_opset(m, d) >= 0) {
            ox_fail(err, ONYX_INVALID_MODEL, "opset for domain '%s' is imported twice",
                    d[0] ? d : "ai.onnx");
            goto done;
        }
        m->opsets[m->n_opsets].domain = ox_strdup(d);
        m->opsets[m->n_opsets].version = os->has_version ? os->version : 1;
        if (!m->opsets[m->n_opsets].domain) {
            ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
            goto done;
        }
        m->n_opsets++;
    }
    /* IR version 1-2 models predate opset_import and mean ai.onnx opset 1. */
    if (mp->n_opset_import == 0) {
        m->opsets[0].domain = ox_strdup("");
        m->opsets[0].version = 1;
        if (!m->opsets[0].domain) {
            ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
            goto done;
        }
        m->n_opsets = 1;
    }
    load_ctx lc = {m, base_dir, err, data, &stripped, mapped, onyx ? onyx->weights : NULL,
                   onyx ? onyx->weights_bytes : 0};
    if (load_graph(&lc, mp->graph, NULL, &m->graph) != 0) goto done;
    rc = 0;
done:
    ox_stripped_model_free(&stripped);
    onnx__model_proto__free_unpacked(mp, NULL);
    if (rc != 0)
        ir_model_free(m);
    else
        *out = m;
    return rc;
}

/* An optimized file in `bytes` (which the caller keeps alive, or hands
 * over as backing): the header and checksums, then its graph with
 * weights that point into the bytes. */
static int load_onyx(const uint8_t *bytes, size_t size, int mapped, const char *base_dir,
                     ir_model **out, ox_error *err) {
    ox_onyx_view v;
    if (ox_onyx_parse(bytes, size, mapped, &v, err) != 0) return -1;
    if (load_bytes(v.graph, v.graph_bytes, 0, &v, base_dir, out, err) != 0) {
        ox_error_prefix(err, "optimized file");
        return -1;
    }
    (*out)->compiled = 1;
    (*out)->compiled_level = (int)v.meta.opt_level;
    memcpy((*out)->source_sha256, v.meta.source_sha256, 32);
    return 0;
}

int ox_load_model(const void *data, size_t size, const char *base_dir, ir_model **out,
                  ox_error *err) {
    return ox_load_model_buffer(data, size, base_dir, 0, out, err);
}

int ox_load_model_buffer(const void *data, size_t size, const char *base_dir, int borrow,
                         ir_model **out, ox_error *err) {
    *out = NULL;
    if (!ox_onyx_sniff(data, size)) return load_bytes(data, size, 0, NULL, base_dir, out, err);
    if (borrow && (uintptr_t)data % OX_ONYX_ALIGN == 0)
        return load_onyx(data, size, 0, base_dir, out, err);
    /* weights are used in place, so they need the alignment the file
     * promises: a copy gets it */
    void *copy = aligned_alloc(OX_ONYX_ALIGN, (size + OX_ONYX_ALIGN - 1) / OX_ONYX_ALIGN * OX_ONYX_ALIGN);
    if (!copy) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory copying a %zu-byte model", size);
    memcpy(copy, data, size);
    if (load_onyx(copy, size, 0, base_dir, out, err) != 0) {
        free(copy);
        return -1;
    }
    (*out)->backing = copy;
    (*out)->backing_size = size;
    return 0;
}

int ox_load_model_file(const char *path, const char *base_dir, ir_model **out, ox_error *err) {
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ox_fail(err, ONYX_IO_ERROR, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return ox_fail(err, ONYX_IO_ERROR, "'%s' is not a regular file", path);
    }
    if (st.st_size == 0) {
        close(fd);
        return ox_fail(err, ONYX_INVALID_MODEL, "the model is empty (0 bytes)");
    }
    size_t size = (size_t)st.st_size;
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return ox_fail(err, ONYX_IO_ERROR, "cannot map '%s': %s", path, strerror(errno));
    if (ox_onyx_sniff(map, size)) {
        /* the weights stay in the mapping: read-only pages of the page
         * cache, shared by every process that loads the file */
        if (load_onyx(map, size, 1, base_dir, out, err) != 0) {
            munmap(map, size);
            return -1;
        }
        (*out)->backing = map;
        (*out)->backing_size = size;
        (*out)->backing_mapped = 1;
        return 0;
    }
    int rc = load_bytes(map, size, 1, NULL, base_dir, out, err);
    munmap(map, size);
    return rc;
}
