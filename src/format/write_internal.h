/* What writer.c and write_tensor.c share: an arena that owns every
 * protobuf-c message built for one write (freed at once afterwards), and
 * the conversions of tensors and types. Messages point into the IR's own
 * strings and, where the bytes are already as the file wants them, its
 * tensor data, so writing copies weights only when it must repack them. */
#ifndef ONYX_FORMAT_WRITE_INTERNAL_H
#define ONYX_FORMAT_WRITE_INTERNAL_H

#include <stddef.h>

#include "core/error.h"
#include "format/writer.h"
#include "ir/ir.h"
#include "onnx.pb-c.h"

typedef struct wr_block wr_block;

typedef struct wr_ctx {
    wr_block *blocks;
    ox_error *err;
    const ox_weight_sink *sink; /* NULL: every weight inline */
} wr_ctx;

/* Zeroed memory owned by the context; NULL (with err set) when out of
 * memory. */
void *wr_alloc(wr_ctx *c, size_t size);
/* Array of n pointers (n may be 0). */
void *wr_alloc_array(wr_ctx *c, size_t n, size_t elem);
void wr_free_all(wr_ctx *c);

/* name may be NULL (attribute tensors). Only dense tensors; sub-byte
 * types are packed, numeric data little-endian. */
Onnx__TensorProto *wr_tensor(wr_ctx *c, const ox_tensor *t, const char *name);
/* NULL type: a ValueInfoProto without a type. */
/* The tensor as external data the sink has stored, or NULL with *declined
 * set when the sink does not take it (strings, small tensors): the caller
 * then writes it inline. NULL with *declined clear is an error. */
Onnx__TensorProto *wr_tensor_external(wr_ctx *c, const ox_tensor *t, const char *name,
                                      int *declined);
Onnx__TypeProto *wr_type(wr_ctx *c, const ir_type *t);
Onnx__ValueInfoProto *wr_value_info(wr_ctx *c, const char *name, const ir_type *type_or_null);

#endif
