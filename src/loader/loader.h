/* ONNX ModelProto bytes -> ir_model. */
#ifndef ONYX_LOADER_LOADER_H
#define ONYX_LOADER_LOADER_H

#include <stddef.h>

#include "core/error.h"
#include "ir/ir.h"

/* Parses and converts a model. base_dir resolves external data (NULL:
 * external tensors are an error naming the tensor). The result is not yet
 * validated: call ir_validate. */
int ox_load_model(const void *data, size_t size, const char *base_dir, ir_model **out,
                  ox_error *err);

/* As ox_load_model, and for an optimized file (.onyx, sniffed by its
 * magic): borrow set uses the caller's bytes in place when they are
 * 64-byte aligned (the caller keeps them alive as long as the model),
 * else the model keeps a copy. */
int ox_load_model_buffer(const void *data, size_t size, const char *base_dir, int borrow,
                         ir_model **out, ox_error *err);

/* Loads a model file through a read-only mapping, so weights are copied
 * once from the page cache instead of being read and then unpacked; an
 * optimized file's weights are used in the mapping, which the model
 * keeps. */
int ox_load_model_file(const char *path, const char *base_dir, ir_model **out, ox_error *err);

#endif
