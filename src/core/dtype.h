/* Element types. Values equal ONNX TensorProto.DataType so a model's
 * data_type field maps with no table. */
#ifndef ONYX_CORE_DTYPE_H
#define ONYX_CORE_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#include "onyx.h"

typedef onyx_dtype ox_dtype;

/* Size of one element in bytes; 0 for UNDEFINED; sizeof(char *) for
 * STRING, whose data is an array of NUL-terminated heap strings. */
size_t ox_dtype_size(ox_dtype t);
const char *ox_dtype_name(ox_dtype t);
/* Parses names as written by ox_dtype_name ("float32", "int64", ...). */
ox_dtype ox_dtype_from_name(const char *name);
int ox_dtype_valid(int t);
int ox_dtype_is_float(ox_dtype t);   /* float16/bfloat16/float32/float64 */
int ox_dtype_is_signed_int(ox_dtype t);
int ox_dtype_is_unsigned_int(ox_dtype t);
int ox_dtype_is_integer(ox_dtype t); /* signed or unsigned, not bool */

float ox_half_to_float(uint16_t h);
uint16_t ox_float_to_half(float f);
float ox_bf16_to_float(uint16_t b);
uint16_t ox_float_to_bf16(float f); /* round to nearest even */

/* Generic element access through double, for code that is not
 * performance-critical (constant folding, printing, tests). int64 values
 * beyond 2^53 lose precision here: use ox_get_i64 for indices. */
double ox_get_f64(const void *data, ox_dtype t, size_t i);
void ox_set_f64(void *data, ox_dtype t, size_t i, double v);
int64_t ox_get_i64(const void *data, ox_dtype t, size_t i);
void ox_set_i64(void *data, ox_dtype t, size_t i, int64_t v);

#endif
