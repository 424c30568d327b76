/* IR -> ONNX ModelProto bytes: the inverse of src/loader. Used to save a
 * model onyx has loaded (and possibly optimized) and to cut out a part of
 * a graph as a model of its own (onyx check --save-subgraph). */
#ifndef ONYX_FORMAT_WRITER_H
#define ONYX_FORMAT_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "ir/ir.h"

/* Serialises the whole model: ir_version, producer "onyx" with onyx's
 * version, opset imports, the main graph (inputs as listed, initializer-
 * backed ones included; outputs; value_info for typed intermediate values;
 * every constant as an initializer; nodes in graph order with all their
 * attributes) and subgraph bodies, recursively, whose outer-scope reads
 * stay references by name. Weights are written inline (raw_data), so a
 * model past protobuf's 2 GiB message limit is refused. The caller frees
 * *out with free(). */
int ox_model_write(const ir_model *m, uint8_t **out, size_t *len, ox_error *err);

/* Where ox_model_write_with stores the main graph's weights instead of
 * writing them inline: an optimized file's weight section, or an ONNX
 * external-data file. `store` receives each weight's bytes (in `layout`)
 * and returns the offset it put them at; the written TensorProto then
 * names `location`, that offset and the length as ONNX external data. */
typedef enum ox_weight_layout {
    OX_WEIGHTS_ONNX = 0,   /* as ONNX stores raw_data: 2- and 4-bit types packed */
    OX_WEIGHTS_MEMORY = 1, /* as onyx holds them: one element per byte, usable in place */
} ox_weight_layout;

typedef struct ox_weight_sink {
    int (*store)(void *ctx, const void *bytes, size_t len, uint64_t *offset, ox_error *err);
    void *ctx;
    const char *location;
    size_t min_bytes; /* smaller weights stay inline */
    ox_weight_layout layout;
} ox_weight_sink;

/* ox_model_write with the main graph's numeric weights of at least
 * sink->min_bytes given to the sink (sink NULL: all inline). Subgraph
 * bodies keep theirs inline. */
int ox_model_write_with(const ir_model *m, const ox_weight_sink *sink, uint8_t **out, size_t *len,
                        ox_error *err);

/* Serialises only the nodes i of m's main graph g with keep[i] set, as a
 * model of their own: its inputs are the values kept nodes read that no
 * kept node produces and that are not constants (in first-use order, with
 * g's types where known); constants they read become initializers; its
 * outputs are the values kept nodes produce that no kept node reads, and
 * kept nodes' outputs that are outputs of g. Opset imports are m's. */
int ox_graph_write_subset(const ir_model *m, const ir_graph *g, const unsigned char *keep,
                          uint8_t **out, size_t *len, ox_error *err);

#endif
