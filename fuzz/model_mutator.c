/* Structure-aware ModelProto mutations (see model_mutator.h). Only
 * scalar fields are overwritten and only owned pointers swapped, so the
 * unpacked message is still freed by protobuf-c as it was allocated. */
#include "model_mutator.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "onnx.pb-c.h"

#define MAX_ITEMS 2048
#define MAX_DEPTH 8 /* subgraph depth walked; deeper graphs are left alone */

/* Everything in a model that a mutation may touch, over all subgraphs. */
typedef struct targets {
    Onnx__NodeProto *nodes[MAX_ITEMS];
    size_t n_nodes;
    Onnx__AttributeProto *attrs[MAX_ITEMS];
    size_t n_attrs;
    Onnx__TypeProto__Tensor *types[MAX_ITEMS];
    size_t n_types;
    Onnx__TensorShapeProto__Dimension *dims[MAX_ITEMS];
    size_t n_dims;
    Onnx__TensorProto *tensors[MAX_ITEMS];
    size_t n_tensors;
} targets;

#define PUSH(arr, n, v) \
    do { \
        if ((n) < MAX_ITEMS) (arr)[(n)++] = (v); \
    } while (0)

static void collect_type(targets *t, Onnx__TypeProto *tp, int depth) {
    if (!tp || depth > MAX_DEPTH) return;
    switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE: {
        Onnx__TypeProto__Tensor *tt = tp->tensor_type;
        if (!tt) return;
        PUSH(t->types, t->n_types, tt);
        if (tt->shape)
            for (size_t i = 0; i < tt->shape->n_dim; i++)
                if (tt->shape->dim[i]->value_case ==
                    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
                    PUSH(t->dims, t->n_dims, tt->shape->dim[i]);
        break;
    }
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        if (tp->sequence_type) collect_type(t, tp->sequence_type->elem_type, depth + 1);
        break;
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        if (tp->optional_type) collect_type(t, tp->optional_type->elem_type, depth + 1);
        break;
    default: break;
    }
}

static void collect_values(targets *t, Onnx__ValueInfoProto **v, size_t n) {
    for (size_t i = 0; i < n; i++) collect_type(t, v[i]->type, 0);
}

static void collect_graph(targets *t, Onnx__GraphProto *g, int depth) {
    if (!g || depth > MAX_DEPTH) return;
    collect_values(t, g->input, g->n_input);
    collect_values(t, g->output, g->n_output);
    collect_values(t, g->value_info, g->n_value_info);
    for (size_t i = 0; i < g->n_initializer; i++) PUSH(t->tensors, t->n_tensors, g->initializer[i]);
    for (size_t i = 0; i < g->n_node; i++) {
        Onnx__NodeProto *node = g->node[i];
        PUSH(t->nodes, t->n_nodes, node);
        for (size_t a = 0; a < node->n_attribute; a++) {
            Onnx__AttributeProto *attr = node->attribute[a];
            PUSH(t->attrs, t->n_attrs, attr);
            if (attr->t) PUSH(t->tensors, t->n_tensors, attr->t);
            collect_graph(t, attr->g, depth + 1);
            for (size_t k = 0; k < attr->n_graphs; k++) collect_graph(t, attr->graphs[k], depth + 1);
        }
    }
}

/* Values that overflow, divide by zero, or sit on a boundary. */
static int64_t interesting_int(uint64_t *rng) {
    static const int64_t v[] = {0, 1, -1, 2, 3, -2, 4, 7, 8, 16, 255, 256, 65535, 65536,
                                INT32_MAX, INT32_MIN, (int64_t)1 << 31, (int64_t)1 << 32,
                                (int64_t)1 << 62, INT64_MAX, INT64_MIN, INT64_MAX / 2};
    uint64_t r = fuzz_next(rng);
    if (r % 4 == 0) return (int64_t)(r >> 8) % 9 - 4; /* small, often valid */
    return v[(r >> 8) % (sizeof v / sizeof v[0])];
}

static float interesting_float(uint64_t *rng) {
    static const float v[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 2.0f, 1e-30f, 1e30f, 3.4e38f,
                              -3.4e38f};
    uint64_t r = fuzz_next(rng);
    if (r % 5 == 0) return NAN;
    if (r % 5 == 1) return (r >> 8) % 2 ? INFINITY : -INFINITY;
    return v[(r >> 8) % (sizeof v / sizeof v[0])];
}

static void mutate_attr(Onnx__AttributeProto *a, uint64_t *rng) {
    if (a->n_ints) {
        a->ints[fuzz_next(rng) % a->n_ints] = interesting_int(rng);
    } else if (a->n_floats) {
        a->floats[fuzz_next(rng) % a->n_floats] = interesting_float(rng);
    } else if (a->has_f || a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) {
        a->f = interesting_float(rng);
    } else {
        a->i = interesting_int(rng);
    }
}

/* One element of an initializer, in whichever field holds its data. */
static void mutate_tensor(Onnx__TensorProto *t, uint64_t *rng) {
    int64_t v = interesting_int(rng);
    if (t->n_int64_data) {
        t->int64_data[fuzz_next(rng) % t->n_int64_data] = v;
    } else if (t->n_int32_data) {
        t->int32_data[fuzz_next(rng) % t->n_int32_data] = (int32_t)v;
    } else if (t->n_float_data) {
        t->float_data[fuzz_next(rng) % t->n_float_data] = interesting_float(rng);
    } else if (t->n_dims && fuzz_next(rng) % 8 == 0) {
        t->dims[fuzz_next(rng) % t->n_dims] = v; /* shape against data size */
    } else if (t->has_raw_data && t->raw_data.len >= 8 &&
               t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64) {
        size_t n = t->raw_data.len / 8;
        memcpy(t->raw_data.data + 8 * (fuzz_next(rng) % n), &v, 8);
    } else if (t->has_raw_data && t->raw_data.len) {
        t->raw_data.data[fuzz_next(rng) % t->raw_data.len] = (uint8_t)fuzz_next(rng);
    }
}

/* Swaps two owned strings, so protobuf-c still frees each once. */
static void swap_strings(char **a, char **b) {
    char *t = *a;
    *a = *b;
    *b = t;
}

static int mutate_once(Onnx__ModelProto *m, targets *t, uint64_t *rng) {
    switch (fuzz_next(rng) % 8) {
    case 0:
    case 1:
        if (!t->n_attrs) return 0;
        mutate_attr(t->attrs[fuzz_next(rng) % t->n_attrs], rng);
        return 1;
    case 2:
        if (!t->n_dims) return 0;
        t->dims[fuzz_next(rng) % t->n_dims]->dim_value = interesting_int(rng);
        return 1;
    case 3:
        if (!t->n_types) return 0;
        t->types[fuzz_next(rng) % t->n_types]->elem_type = (int32_t)(fuzz_next(rng) % 30);
        return 1;
    case 4:
        if (t->n_nodes < 2) return 0;
        swap_strings(&t->nodes[fuzz_next(rng) % t->n_nodes]->op_type,
                     &t->nodes[fuzz_next(rng) % t->n_nodes]->op_type);
        return 1;
    case 5: {
        if (!t->n_nodes) return 0;
        Onnx__NodeProto *n = t->nodes[fuzz_next(rng) % t->n_nodes];
        if (n->n_input < 2) return 0;
        swap_strings(&n->input[fuzz_next(rng) % n->n_input], &n->input[fuzz_next(rng) % n->n_input]);
        return 1;
    }
    case 6:
        if (!m->n_opset_import) return 0;
        m->opset_import[fuzz_next(rng) % m->n_opset_import]->version =
            (int64_t)(fuzz_next(rng) % 26);
        return 1;
    default:
        if (!t->n_tensors) return 0;
        mutate_tensor(t->tensors[fuzz_next(rng) % t->n_tensors], rng);
        return 1;
    }
}

static size_t structured(uint8_t *data, size_t size, size_t max_size, uint64_t *rng) {
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, size, data);
    if (!m) return 0;
    targets *t = calloc(1, sizeof *t);
    size_t out = 0;
    if (t) {
        collect_graph(t, m->graph, 0);
        int done = 0;
        for (int tries = 0; tries < 16 && !done; tries++) done = mutate_once(m, t, rng);
        size_t len = onnx__model_proto__get_packed_size(m);
        uint8_t *packed = done && len <= max_size ? malloc(len ? len : 1) : NULL;
        if (packed) { /* never packed over the bytes it was unpacked from */
            out = onnx__model_proto__pack(m, packed);
            memcpy(data, packed, out);
            free(packed);
        }
    }
    free(t);
    onnx__model_proto__free_unpacked(m, NULL);
    return out;
}

size_t fuzz_mutate_model(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
    uint64_t rng = ((uint64_t)seed << 32) ^ seed ^ 0x5DEECE66Dull;
    if (fuzz_next(&rng) % 2) {
        size_t n = structured(data, size, max_size, &rng);
        if (n) return n;
    }
    return LLVMFuzzerMutate(data, size, max_size);
}
