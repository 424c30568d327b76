/* Element types. Values equal ONNX TensorProto.DataType so a model's
 * data_type field maps with no table. */
#ifndef ONYX_CORE_DTYPE_H
#define ONYX_CORE_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#include "onyx.h"

typedef onyx_dtype ox_dtype;

/* One past the largest element type value (tables indexed by dtype). */
#define OX_DTYPE_COUNT (ONYX_FLOAT6E3M2 + 1)

/* Size of one element in bytes; 0 for UNDEFINED; sizeof(char *) for
 * STRING, whose data is an array of NUL-terminated heap strings; 1 for
 * the float8 types and for the sub-byte types, which are held unpacked,
 * one element per byte (see onyx.h). */
size_t ox_dtype_size(ox_dtype t);
const char *ox_dtype_name(ox_dtype t);
/* Parses names as written by ox_dtype_name ("float32", "int64",
 * "float8e4m3fn", "int4", ...); also ONNX's upper-case DataType names
 * ("FLOAT", "DOUBLE", "FLOAT8E4M3FN") and ml_dtypes' spellings
 * ("float8_e4m3fn", "float4_e2m1fn", "float8_e8m0fnu"). */
ox_dtype ox_dtype_from_name(const char *name);
int ox_dtype_valid(int t);
int ox_dtype_is_float(ox_dtype t);   /* float16/bfloat16/float32/float64 */
int ox_dtype_is_signed_int(ox_dtype t);   /* int8..int64, not int4/int2 */
int ox_dtype_is_unsigned_int(ox_dtype t); /* uint8..uint64, not uint4/uint2 */
int ox_dtype_is_integer(ox_dtype t); /* signed or unsigned, not bool */

/* ---- the narrow types (ONNX DataType 17..28) ----
 * The predicates above keep their meaning so that existing kernels, which
 * switch on the classic types, are not handed formats they cannot read. */

/* float8 (all five), float4e2m1, float6e2m3, float6e3m2. */
int ox_dtype_is_narrow_float(ox_dtype t);
/* The four float8 formats Cast's `saturate` attribute governs (E4M3FN,
 * E4M3FNUZ, E5M2, E5M2FNUZ); float8e8m0 has its own rules. */
int ox_dtype_is_float8(ox_dtype t);
/* int4, uint4, int2, uint2. */
int ox_dtype_is_narrow_int(ox_dtype t);
/* Range of a narrow integer type. */
void ox_narrow_int_range(ox_dtype t, int64_t *lo, int64_t *hi);
/* v reduced to a narrow integer type by keeping its low bits (what Cast
 * does for integer sources), sign-extended for int4/int2. */
int8_t ox_narrow_int_wrap(ox_dtype t, int64_t v);
/* Bits one element takes in a packed file: 4, 2 or 6 for the sub-byte
 * types, 8 * size otherwise (0 for UNDEFINED and STRING). */
int ox_dtype_bits(ox_dtype t);
int ox_dtype_is_subbyte(ox_dtype t);
/* Bytes n elements take when packed (TensorProto raw_data). */
size_t ox_packed_bytes(ox_dtype t, size_t n);
/* Unpacks n sub-byte elements from src (ox_packed_bytes(t, n) bytes) into
 * one byte each, sign-extending int4/int2. */
void ox_unpack_subbyte(ox_dtype t, const uint8_t *src, size_t n, uint8_t *dst);
/* Packs n unpacked elements into dst (ox_packed_bytes(t, n) bytes, the
 * unused high bits of the last byte zero). */
void ox_pack_subbyte(ox_dtype t, const uint8_t *src, size_t n, uint8_t *dst);

/* Value of one narrow float element (its bit pattern in the low bits). */
float ox_narrow_to_float(ox_dtype t, uint8_t bits);
/* Nearest narrow float to v, ties to even. saturate != 0 clamps values
 * beyond the largest finite one (and infinities) to it; saturate == 0
 * gives NaN, or infinity for E5M2, as Cast-19's tables say. float4 and
 * float6 have neither and always saturate; NaN becomes a zero there, as
 * ml_dtypes (the reference's converter) does. For float8e8m0 this is
 * ox_float_to_e8m0 with round mode "up". */
uint8_t ox_float_to_narrow(ox_dtype t, double v, int saturate);

typedef enum ox_round_mode { OX_ROUND_UP = 0, OX_ROUND_DOWN = 1, OX_ROUND_NEAREST = 2 } ox_round_mode;
/* float8e8m0 (a biased power of two) from f's float32 bits, as Cast-24
 * defines it: the exponent, rounded by mode on the mantissa; saturate
 * keeps a round-up from reaching the NaN code 0xFF. The sign is ignored. */
uint8_t ox_float_to_e8m0(float f, int saturate, ox_round_mode mode);

float ox_half_to_float(uint16_t h);
/* f[i] = ox_half_to_float(h[i]) for i < n, the same bits; with F16C
 * where the CPU has it (about 20x the scalar loop; float16 models convert
 * all their weights at session creation). */
void ox_half_to_float_n(const uint16_t *h, float *f, int64_t n);
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
