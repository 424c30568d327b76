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

/* Copies `model` without the raw_data payloads of ModelProto.graph's
 * initializers. slices[i] describes initializer i (in the order protobuf
 * merges them). Fails only on malformed wire data or out of memory; the
 * caller may then fall back to unpacking the original bytes. */
int ox_strip_initializer_data(const uint8_t *model, size_t size, uint8_t **stripped,
                              size_t *stripped_size, ox_raw_slice **slices, size_t *n_slices,
                              ox_error *err);

#endif
