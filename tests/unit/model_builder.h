/* Builds small ONNX models in memory for tests, through the same
 * protobuf-c code the loader uses, so tests can make well-formed and
 * deliberately broken models without files in the repository. */
#ifndef ONYX_TESTS_MODEL_BUILDER_H
#define ONYX_TESTS_MODEL_BUILDER_H

#include <stddef.h>
#include <stdint.h>

typedef struct mb_model mb_model;

mb_model *mb_new(int64_t opset);
void mb_free(mb_model *m);
/* dims: -1 for a symbolic dim named "batch", -2 for one named "?" (how
 * Paddle2ONNX writes "unknown"); rank -1 for no shape. */
void mb_input(mb_model *m, const char *name, int dtype, const int64_t *dims, int rank);
void mb_output(mb_model *m, const char *name, int dtype, const int64_t *dims, int rank);
void mb_init_float(mb_model *m, const char *name, const int64_t *dims, int rank, const float *data);
void mb_init_int64(mb_model *m, const char *name, const int64_t *dims, int rank, const int64_t *data);
/* float16 values as their bits (raw data). */
void mb_init_half(mb_model *m, const char *name, const int64_t *dims, int rank, const uint16_t *data);
/* int8 or uint8 values (dtype: ONYX_INT8 or ONYX_UINT8) as raw data. */
void mb_init_bytes(mb_model *m, const char *name, int dtype, const int64_t *dims, int rank, const uint8_t *data);
/* An initializer whose bytes live in `location` at offset 0 (external data). */
void mb_init_external(mb_model *m, const char *name, const int64_t *dims, int rank,
                      const char *location, int64_t length);
/* inputs/outputs: comma-separated names; "" entries are omitted slots. */
void mb_node(mb_model *m, const char *op, const char *inputs, const char *outputs);
/* Attributes apply to the most recently added node. */
void mb_attr_int(mb_model *m, const char *name, int64_t v);
void mb_attr_float(mb_model *m, const char *name, float v);
void mb_attr_ints(mb_model *m, const char *name, const int64_t *v, size_t n);
void mb_attr_string(mb_model *m, const char *name, const char *s);
void mb_attr_floats(mb_model *m, const char *name, const float *v, size_t n);
/* Puts the most recent node in `domain`, importing it at `version` (up
 * to four domains besides ai.onnx). */
void mb_domain(mb_model *m, const char *domain, int64_t version);
/* A graph attribute (Loop, Scan, If bodies): body is built like a model
 * (its opset is ignored) and is freed with m. */
void mb_attr_graph(mb_model *m, const char *name, mb_model *body);
/* Serialises to a malloc'd buffer. */
/* x [1, ch, hw, hw] -> Conv (3x3, pads 1, bias) -> Relu -> Add (a constant
 * k shaped like x) -> Softmax (axis 1) -> y, with fixed weights: a small
 * model with a convolution the CPU packs and an output every value of
 * which depends on the weights. NULL when out of memory. */
mb_model *mb_conv_chain(int64_t ch, int64_t hw);

uint8_t *mb_serialize(mb_model *m, size_t *len);
/* Serialises into a file; returns 0 on success. */
int mb_save(mb_model *m, const char *path);

#endif
