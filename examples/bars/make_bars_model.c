/* Writes the bundled example: a tiny hand-weighted CNN that tells a
 * vertical bar from a horizontal one in an 8x8 image, plus one input of
 * each kind as TensorProto files.
 *
 * Graph: image[batch,1,8,8] -> Conv(2 line detectors, pad 1) -> Relu ->
 * GlobalAveragePool -> Flatten -> Gemm(x4) -> Softmax -> probabilities.
 * A vertical bar gives probabilities ~ [0.91, 0.09] (vertical, horizontal).
 *
 * Usage: make_bars_model OUT_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

/* Every protobuf struct built here is tracked and freed at exit. */
typedef struct pool {
    void *items[256];
    int n;
} pool;

static void *pool_alloc(pool *p, size_t size) {
    void *ptr = calloc(1, size);
    if (!ptr || p->n == 256) {
        fprintf(stderr, "make_bars_model: out of memory\n");
        exit(1);
    }
    p->items[p->n++] = ptr;
    return ptr;
}

static void pool_free(pool *p) {
    for (int i = 0; i < p->n; i++) free(p->items[i]);
    p->n = 0;
}

static Onnx__TensorProto *float_tensor(pool *p, const char *name, const int64_t *dims, size_t rank,
                                       float *data, size_t n) {
    Onnx__TensorProto *t = pool_alloc(p, sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = (char *)name;
    t->has_data_type = 1;
    t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    t->n_dims = rank;
    t->dims = (int64_t *)dims;
    t->n_float_data = n;
    t->float_data = data;
    return t;
}

static Onnx__AttributeProto *int_attr(pool *p, const char *name, int64_t v) {
    Onnx__AttributeProto *a = pool_alloc(p, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    a->has_i = 1;
    a->i = v;
    return a;
}

static Onnx__AttributeProto *ints_attr(pool *p, const char *name, int64_t *v, size_t n) {
    Onnx__AttributeProto *a = pool_alloc(p, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    a->n_ints = n;
    a->ints = v;
    return a;
}

static Onnx__NodeProto *node(pool *p, const char *name, const char *op, char **in, size_t nin, char **out,
                             Onnx__AttributeProto **attrs, size_t nattr) {
    Onnx__NodeProto *n = pool_alloc(p, sizeof *n);
    onnx__node_proto__init(n);
    n->name = (char *)name;
    n->op_type = (char *)op;
    n->n_input = nin;
    n->input = in;
    n->n_output = 1;
    n->output = out;
    n->n_attribute = nattr;
    n->attribute = attrs;
    return n;
}

static Onnx__ValueInfoProto *float_value(pool *p, const char *name, const char *batch, int64_t *dims,
                                         size_t rank) {
    Onnx__TensorShapeProto *shape = pool_alloc(p, sizeof *shape);
    onnx__tensor_shape_proto__init(shape);
    shape->n_dim = rank;
    shape->dim = pool_alloc(p, rank * sizeof *shape->dim);
    for (size_t i = 0; i < rank; i++) {
        Onnx__TensorShapeProto__Dimension *d = pool_alloc(p, sizeof *d);
        onnx__tensor_shape_proto__dimension__init(d);
        if (i == 0) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = (char *)batch;
        } else {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = dims[i];
        }
        shape->dim[i] = d;
    }
    Onnx__TypeProto__Tensor *tt = pool_alloc(p, sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    tt->shape = shape;
    Onnx__TypeProto *tp = pool_alloc(p, sizeof *tp);
    onnx__type_proto__init(tp);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    Onnx__ValueInfoProto *vi = pool_alloc(p, sizeof *vi);
    onnx__value_info_proto__init(vi);
    vi->name = (char *)name;
    vi->type = tp;
    return vi;
}

static int write_file(const char *dir, const char *name, const uint8_t *buf, size_t len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, len, f) != len) {
        fprintf(stderr, "make_bars_model: cannot write %s\n", path);
        if (f) fclose(f);
        return -1;
    }
    return fclose(f);
}

static int write_message(const char *dir, const char *name, const ProtobufCMessage *m) {
    size_t len = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = malloc(len ? len : 1);
    protobuf_c_message_pack(m, buf);
    int rc = write_file(dir, name, buf, len);
    free(buf);
    return rc;
}

static int write_image(pool *p, const char *dir, const char *file, int vertical) {
    static float px[64];
    memset(px, 0, sizeof px);
    for (int i = 0; i < 8; i++) px[vertical ? i * 8 + 3 : 3 * 8 + i] = 1.0f;
    static const int64_t dims[] = {1, 1, 8, 8};
    Onnx__TensorProto *t = float_tensor(p, "image", dims, 4, px, 64);
    return write_message(dir, file, &t->base);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: make_bars_model OUT_DIR\n");
        return 1;
    }
    const char *dir = argv[1];
    pool mem = {0}, *p = &mem;
    /* Line detectors: +2 on the centre line, -1 on either side. */
    static float w[18] = {-1, 2, -1, -1, 2, -1, -1, 2, -1, /* vertical */
                          -1, -1, -1, 2, 2, 2, -1, -1, -1}; /* horizontal */
    static float bias[2] = {0, 0};
    static float scale[4] = {4, 0, 0, 4};
    static const int64_t w_dims[] = {2, 1, 3, 3}, b_dims[] = {2}, s_dims[] = {2, 2};
    Onnx__TensorProto *inits[3] = {float_tensor(p, "detectors", w_dims, 4, w, 18),
                                   float_tensor(p, "detector_bias", b_dims, 1, bias, 2),
                                   float_tensor(p, "scale", s_dims, 2, scale, 4)};
    static char *conv_in[] = {"image", "detectors", "detector_bias"}, *conv_out[] = {"responses"};
    static char *relu_out[] = {"activations"}, *gap_out[] = {"pooled"}, *flat_out[] = {"features"};
    static char *gemm_in[] = {"features", "scale"}, *gemm_out[] = {"logits"};
    static char *soft_out[] = {"probabilities"};
    static int64_t pads[] = {1, 1, 1, 1}, kshape[] = {3, 3};
    Onnx__AttributeProto *conv_attrs[] = {ints_attr(p, "pads", pads, 4), ints_attr(p, "kernel_shape", kshape, 2)};
    Onnx__AttributeProto *flat_attrs[] = {int_attr(p, "axis", 1)};
    Onnx__AttributeProto *soft_attrs[] = {int_attr(p, "axis", 1)};
    Onnx__NodeProto *nodes[] = {
        node(p, "line_detectors", "Conv", conv_in, 3, conv_out, conv_attrs, 2),
        node(p, "relu", "Relu", &conv_out[0], 1, relu_out, NULL, 0),
        node(p, "average", "GlobalAveragePool", &relu_out[0], 1, gap_out, NULL, 0),
        node(p, "flatten", "Flatten", &gap_out[0], 1, flat_out, flat_attrs, 1),
        node(p, "classify", "Gemm", gemm_in, 2, gemm_out, NULL, 0),
        node(p, "softmax", "Softmax", &gemm_out[0], 1, soft_out, soft_attrs, 1),
    };
    static int64_t in_dims[] = {-1, 1, 8, 8}, out_dims[] = {-1, 2};
    Onnx__ValueInfoProto *inputs[] = {float_value(p, "image", "batch", in_dims, 4)};
    Onnx__ValueInfoProto *outputs[] = {float_value(p, "probabilities", "batch", out_dims, 2)};

    Onnx__GraphProto graph;
    onnx__graph_proto__init(&graph);
    graph.name = "bars";
    graph.n_node = sizeof nodes / sizeof nodes[0];
    graph.node = nodes;
    graph.n_initializer = 3;
    graph.initializer = inits;
    graph.n_input = 1;
    graph.input = inputs;
    graph.n_output = 1;
    graph.output = outputs;

    Onnx__OperatorSetIdProto opset;
    onnx__operator_set_id_proto__init(&opset);
    opset.domain = "";
    opset.has_version = 1;
    opset.version = 13;
    Onnx__OperatorSetIdProto *opsets[] = {&opset};

    Onnx__ModelProto model;
    onnx__model_proto__init(&model);
    model.has_ir_version = 1;
    model.ir_version = 8;
    model.producer_name = "onyx-examples";
    model.n_opset_import = 1;
    model.opset_import = opsets;
    model.graph = &graph;
    model.doc_string = "Tells a vertical bar (class 0) from a horizontal bar (class 1) in an 8x8 image.";

    int rc = write_message(dir, "bars.onnx", &model.base) != 0 ||
             write_image(p, dir, "vertical_bar.pb", 1) != 0 ||
             write_image(p, dir, "horizontal_bar.pb", 0) != 0;
    pool_free(p);
    return rc;
}
