/* Wire-level surgery on a serialized ModelProto. protobuf-c copies every
 * bytes field it unpacks, so a model's weights would sit in memory twice
 * (the file's bytes and the unpacked copy) before onyx even converts them.
 * Stripping the raw_data of the main graph's initializers before
 * unpacking, and reading those bytes straight from the file later, keeps
 * the peak near one copy of the weights. */
#ifndef ONYX_LOADER_WIRE_H
#define ONYX_LOADER_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* ---- Reading protobuf wire format ---- */

typedef struct ox_wire_reader {
    const uint8_t *base, *p, *end;
} ox_wire_reader;

/* One field as it lies on the wire. */
typedef struct ox_wire_field {
    uint64_t number;
    int wt;                 /* wire type: 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32 */
    const uint8_t *start;   /* the field's key */
    const uint8_t *payload; /* the value (after the length prefix for wire type 2) */
    size_t len;             /* bytes of the value */
} ox_wire_field;

/* Each returns 0, or -1 on malformed or truncated data (groups, wire
 * types 3 and 4, are malformed here as they are for protobuf-c). */
int ox_wire_varint(ox_wire_reader *r, uint64_t *v);
int ox_wire_next(ox_wire_reader *r, ox_wire_field *f);

/* Message nesting onyx accepts: the default recursion limit of Google's
 * protobuf parsers (and so of ONNX Runtime and the onnx package), counted
 * the same way: the top-level message is level 0 and each message field
 * entered adds one. An If nests three levels per branch (GraphProto ->
 * NodeProto -> AttributeProto -> GraphProto), so about 30 nested control
 * flow bodies fit, which no exported model comes near; what protobuf
 * refuses, onyx refuses too, before protobuf-c's recursive unpacker
 * could exhaust the stack. */
#define OX_MAX_MESSAGE_DEPTH 100

/* The message schema that field `number` of a message with `schema`
 * holds, or NULL when the field is not a message. */
typedef const void *(*ox_wire_child_fn)(const void *schema, uint64_t number);

/* Measures, without recursion, how deep messages nest in `data` (a
 * message of `schema`). *depth is the deepest level reached, or limit + 1
 * as soon as limit is exceeded (the walk stops there). Returns -1 on
 * malformed wire data. */
int ox_wire_nesting_depth(const void *schema, ox_wire_child_fn child, const uint8_t *data,
                          size_t size, int limit, int *depth);

/* ---- Stripping weights from a ModelProto ---- */

/* Where initializer i's raw_data lies in the original bytes. */
typedef struct ox_raw_slice {
    size_t offset;
    size_t length;
    int present; /* the initializer had a raw_data field */
} ox_raw_slice;

/* Where the raw_data of tensor attribute `attr` of node `node` (indices
 * in ModelProto.graph) lies: Constant nodes carry many models' weights. */
typedef struct ox_attr_slice {
    size_t node, attr;
    ox_raw_slice raw;
} ox_attr_slice;

typedef struct ox_stripped_model {
    uint8_t *bytes; /* the model without those payloads */
    size_t size;
    ox_raw_slice *inits; /* per initializer of the main graph, in order */
    size_t n_inits;
    ox_attr_slice *attrs; /* tensor attributes of the main graph's nodes */
    size_t n_attrs;
} ox_stripped_model;

/* Copies `model` without the raw_data payloads of the main graph's
 * initializers and node tensor attributes, recording where each lies.
 * Fails only on malformed wire data or out of memory. */
int ox_strip_weights(const uint8_t *model, size_t size, ox_stripped_model *out, ox_error *err);
void ox_stripped_model_free(ox_stripped_model *m);
/* The recorded raw_data of node `node`'s attribute `attr`, or NULL. */
const ox_raw_slice *ox_stripped_attr(const ox_stripped_model *m, size_t node, size_t attr);

#endif
