/* Overflow-checked integer arithmetic for every number a model file can
 * set: dimensions, attributes (pads, strides, block sizes, window sizes,
 * n-gram indices), element counts and byte sizes. A model is untrusted
 * input, so shape and attribute arithmetic goes through these helpers
 * instead of plain operators; each returns 1 with *out set, or 0 on
 * overflow (then *out is unspecified) and the caller reports an error
 * that names the node and the quantity. */
#ifndef ONYX_CORE_CHECKED_H
#define ONYX_CORE_CHECKED_H

#include <stddef.h>
#include <stdint.h>

static inline int ox_add_i64(int64_t a, int64_t b, int64_t *out) {
    return !__builtin_add_overflow(a, b, out);
}

static inline int ox_sub_i64(int64_t a, int64_t b, int64_t *out) {
    return !__builtin_sub_overflow(a, b, out);
}

static inline int ox_mul_i64(int64_t a, int64_t b, int64_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}

static inline int ox_mul_size(size_t a, size_t b, size_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}

static inline int ox_add_size(size_t a, size_t b, size_t *out) {
    return !__builtin_add_overflow(a, b, out);
}

/* Product of `rank` non-negative dimensions; 0 when one is negative or the
 * product of the non-zero ones overflows int64. An empty shape such as
 * [0, 2^40, 2^40] is refused like a huge one, whichever axis is 0: kernels
 * form partial products of a tensor's axes (strides, outer counts), and
 * this rule keeps every one of them in range. */
static inline int ox_numel_checked(const int64_t *dims, int rank, int64_t *out) {
    int64_t n = 1;
    int empty = 0;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) return 0;
        if (dims[i] == 0) empty = 1;
        else if (__builtin_mul_overflow(n, dims[i], &n)) return 0;
    }
    *out = empty ? 0 : n;
    return 1;
}

/* Sum of n int64 values; 0 when it overflows. */
static inline int ox_sum_i64(const int64_t *v, int n, int64_t *out) {
    int64_t s = 0;
    for (int i = 0; i < n; i++)
        if (__builtin_add_overflow(s, v[i], &s)) return 0;
    *out = s;
    return 1;
}

/* a * b + c, the shape of most window and block arithmetic; 0 on overflow
 * of either step. */
static inline int ox_muladd_i64(int64_t a, int64_t b, int64_t c, int64_t *out) {
    int64_t p;
    return !__builtin_mul_overflow(a, b, &p) && !__builtin_add_overflow(p, c, out);
}

/* numel elements of elem_size bytes as a size_t byte count; 0 when numel
 * is negative or the product overflows. */
static inline int ox_nbytes_checked(int64_t numel, size_t elem_size, size_t *out) {
    if (numel < 0 || (uint64_t)numel > SIZE_MAX) return 0;
    return !__builtin_mul_overflow((size_t)numel, elem_size, out);
}

#endif
