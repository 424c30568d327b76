/* Storing the first columns of AVX2 vectors without masked stores (see
 * ox_store_part_avx2): the register tiles' ragged column ends. */
#ifndef ONYX_EP_CPU_KERNELS_STORE_AVX2_H
#define ONYX_EP_CPU_KERNELS_STORE_AVX2_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* The first n (1 to 7) lanes of v to p, without a masked store (a masked
 * store is microcoded on AMD's cores, dozens of cycles: a 7x7 plane's
 * ragged column group paid it on every row of every tile). */
__attribute__((target("avx2"), always_inline)) static inline void ox_store_part_avx2(float *p, __m256 v,
                                                                                    int n) {
    __m128 h = _mm256_castps256_ps128(v);
    if (n >= 4) {
        _mm_storeu_ps(p, h);
        h = _mm256_extractf128_ps(v, 1);
        p += 4;
        n -= 4;
    }
    if (n >= 2) {
        _mm_storel_pi((__m64 *)(void *)p, h);
        h = _mm_movehl_ps(h, h);
        p += 2;
        n -= 2;
    }
    if (n) _mm_store_ss(p, h);
}

/* Columns [0, cols) of the 16 in (r0, r1) to cr, cols at most 16. */
__attribute__((target("avx2"), always_inline)) static inline void ox_store_cols_avx2(float *cr, __m256 r0,
                                                                                    __m256 r1, int cols) {
    if (cols >= 8) {
        _mm256_storeu_ps(cr, r0);
        if (cols == 16) _mm256_storeu_ps(cr + 8, r1);
        else if (cols > 8) ox_store_part_avx2(cr + 8, r1, cols - 8);
    } else {
        ox_store_part_avx2(cr, r0, cols);
    }
}

#endif

#endif
