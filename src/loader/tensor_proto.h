/* Conversion from ONNX TensorProto (and the test suite's SequenceProto /
 * OptionalProto files) to onyx tensors. */
#ifndef ONYX_LOADER_TENSOR_PROTO_H
#define ONYX_LOADER_TENSOR_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/tensor.h"

struct Onnx__TensorProto;

/* Converts a parsed TensorProto. External data is resolved against
 * base_dir; when base_dir is NULL and the tensor is external, fails with
 * an error naming the tensor. */
int ox_tensor_from_proto(const struct Onnx__TensorProto *tp, const char *base_dir,
                         ox_tensor **out, ox_error *err);

/* As above, with the raw_data bytes supplied separately (the loader strips
 * them from the message before unpacking). raw NULL: use the message's. */
int ox_tensor_from_proto_raw(const struct Onnx__TensorProto *tp, const void *raw, size_t raw_len,
                             const char *base_dir, ox_tensor **out, ox_error *err);

/* An optimized file's weights (src/format/onyx_file.h): TensorProtos whose
 * external-data location is the section's reserved name refer to bytes
 * of that section, stored as onyx holds them in memory. */
int ox_tensor_proto_in_section(const struct Onnx__TensorProto *tp, const char *section);
/* A tensor that borrows its bytes from the section (the section outlives
 * it), after checking type, shape, length, bounds and alignment. */
int ox_tensor_from_section(const struct Onnx__TensorProto *tp, const uint8_t *section,
                           size_t section_size, size_t align, ox_tensor **out, ox_error *err);

/* Parses serialized bytes holding a TensorProto (kind TENSOR), a
 * SequenceProto (SEQUENCE) or an OptionalProto (OPTIONAL), as in the
 * suite's input_N.pb/output_N.pb. */
int ox_value_from_pb_bytes(const void *data, size_t size, ox_kind kind, ox_tensor **out,
                           ox_error *err);

/* Fails when serialized SequenceProto/OptionalProto bytes nest containers
 * deeper than OX_MAX_MESSAGE_DEPTH (measured without recursion);
 * malformed bytes pass, for the reader to report. */
int ox_pb_container_check(const void *data, size_t size, ox_error *err);

#endif
