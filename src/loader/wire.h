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
