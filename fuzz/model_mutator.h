/* A structure-aware mutator for ONNX models: byte-level mutations of a
 * ModelProto almost always break the protobuf encoding and stop in the
 * parser, so half of the time the model is unpacked with protobuf-c, one
 * field that shape inference and the kernels read is changed (an integer
 * attribute, a dimension, an element type, an opset, an initializer
 * value, the operator of a node, the order of a node's inputs) and the
 * model is packed again. */
#ifndef ONYX_FUZZ_MODEL_MUTATOR_H
#define ONYX_FUZZ_MODEL_MUTATOR_H

#include <stddef.h>
#include <stdint.h>

/* Mutates the model in data[0..size) in place (at most max_size bytes)
 * and returns its new size, as LLVMFuzzerCustomMutator does. */
size_t fuzz_mutate_model(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

#endif
