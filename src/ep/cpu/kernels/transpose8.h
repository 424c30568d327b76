/* 8x8 float transposes in AVX2 registers, for the kernels that turn
 * planes into channel-innermost positions and back: the depthwise
 * convolution's tiles (conv_depthwise_cb.c) and the channel-blocked
 * layout's reorders (conv_nchwc.c). x86 with GCC or Clang only. */
#ifndef ONYX_EP_CPU_KERNELS_TRANSPOSE8_H
#define ONYX_EP_CPU_KERNELS_TRANSPOSE8_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* r[i] = [a_i0 .. a_i7] becomes r[j] = [a_0j .. a_7j]: eight positions of
 * eight channels turned between channel-innermost and planar order. */
__attribute__((target("avx2,fma"), always_inline)) static inline void ox_transpose8(__m256 r[8]) {
    __m256 t[8], u[8];
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int h = 0; h < 2; h++) {
        __m256 a = t[4 * h], b = t[4 * h + 1], c = t[4 * h + 2], d = t[4 * h + 3];
        u[4 * h + 0] = _mm256_shuffle_ps(a, c, _MM_SHUFFLE(1, 0, 1, 0));
        u[4 * h + 1] = _mm256_shuffle_ps(a, c, _MM_SHUFFLE(3, 2, 3, 2));
        u[4 * h + 2] = _mm256_shuffle_ps(b, d, _MM_SHUFFLE(1, 0, 1, 0));
        u[4 * h + 3] = _mm256_shuffle_ps(b, d, _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int i = 0; i < 4; i++) {
        r[i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x20);
        r[4 + i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x31);
    }
}

/* A mask of the lanes below n. */
__attribute__((target("avx2,fma"), always_inline)) static inline __m256i ox_lanes_below(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Eight positions of nc (at most 8) planes, channel c's at src + c *
 * stride, into channel-innermost positions ps floats apart: dst[q * ps +
 * c], the lanes past nc zero. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
ox_planes_to_positions8(const float *src, int64_t stride, int nc, float *dst, int64_t ps) {
    __m256 r[8];
    for (int c = 0; c < 8; c++) r[c] = c < nc ? _mm256_loadu_ps(src + c * stride) : _mm256_setzero_ps();
    ox_transpose8(r);
    for (int q = 0; q < 8; q++) _mm256_storeu_ps(dst + q * ps, r[q]);
}

/* The inverse: eight channel-innermost positions ps floats apart into
 * the first nc planes, channel c's at dst + c * stride. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
ox_positions_to_planes8(const float *src, int64_t ps, int nc, float *dst, int64_t stride) {
    __m256 r[8];
    for (int q = 0; q < 8; q++) r[q] = _mm256_loadu_ps(src + q * ps);
    ox_transpose8(r);
    for (int c = 0; c < nc; c++) _mm256_storeu_ps(dst + c * stride, r[c]);
}
#endif

#endif
