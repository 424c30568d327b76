/* Saturating float -> integer conversion shared by the CPU kernels that
 * convert (Cast, elementwise stores). C leaves out-of-range float-to-integer
 * conversion undefined: values are truncated toward zero into int64
 * (saturating there, NaN -> 0) and then wrapped to narrower types, which is
 * what common hardware paths do. */
#ifndef ONYX_EP_CPU_KERNELS_SATURATE_H
#define ONYX_EP_CPU_KERNELS_SATURATE_H

#include <stdint.h>

static inline int64_t sat_i64(double v) {
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}
static inline uint64_t sat_u64(double v) {
    if (v != v) return 0;
    if (v >= 18446744073709551615.0) return UINT64_MAX;
    if (v < 0) return (uint64_t)sat_i64(v);
    return (uint64_t)v;
}
static inline int8_t sat_i8(double v) { return (int8_t)sat_i64(v); }
static inline int16_t sat_i16(double v) { return (int16_t)sat_i64(v); }
static inline int32_t sat_i32(double v) { return (int32_t)sat_i64(v); }
static inline uint8_t sat_u8(double v) { return (uint8_t)sat_i64(v); }
static inline uint16_t sat_u16(double v) { return (uint16_t)sat_i64(v); }
static inline uint32_t sat_u32(double v) { return (uint32_t)sat_i64(v); }

#endif
