/* The AVX2 register tile of the convolutions (conv_gemm.c and
 * conv_direct.c): its k step, and storing one of its rows (16 columns as
 * two vectors) into C, added to what C holds (a later K slab), then the
 * epilogue of ox_tile_epilogue (a clamp, HardSwish, Sigmoid or SiLU) when
 * one is given. */
#ifndef ONYX_EP_CPU_KERNELS_CONV_TILE_AVX2_H
#define ONYX_EP_CPU_KERNELS_CONV_TILE_AVX2_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "ep/cpu/kernels/conv_fast.h"
#include "ep/cpu/kernels/exp_fma_avx2.h"
#include "ep/cpu/kernels/store_avx2.h"

/* One k step of a tile of `rows` (at most OX_CONV_MR) rows: row i gains
 * a[i] times the 16 columns (b0, b1). Inlined with rows a constant, the
 * sums stay in registers. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
ox_tile_step_avx2(const int rows, const float *a, __m256 b0, __m256 b1, __m256 *lo, __m256 *hi) {
#pragma GCC unroll 6
    for (int i = 0; i < OX_CONV_MR; i++)
        if (i < rows) {
            __m256 av = _mm256_broadcast_ss(a + i);
            lo[i] = _mm256_fmadd_ps(av, b0, lo[i]);
            hi[i] = _mm256_fmadd_ps(av, b1, hi[i]);
        }
}

/* kc k steps of the tile's left eight columns only (a ragged end of at
 * most 8): row i gains a[i] times the 8 floats at b, b moving ldb per
 * step (the packed panel's width). */
__attribute__((target("avx2,fma"), always_inline)) static inline void
ox_tile_steps8_avx2(const int rows, int64_t kc, const float *a, const float *b, int64_t ldb, __m256 *acc) {
    for (int64_t k = 0; k < kc; k++) {
        const __m256 b0 = _mm256_loadu_ps(b);
#pragma GCC unroll 6
        for (int i = 0; i < OX_CONV_MR; i++)
            if (i < rows) acc[i] = _mm256_fmadd_ps(_mm256_broadcast_ss(a + i), b0, acc[i]);
        a += OX_CONV_MR;
        b += ldb;
    }
}

/* The epilogue's activation on one vector of sums (bias and residual
 * added). max(lo, v) and min(hi, v) return v when it is NaN. */
__attribute__((target("avx2,fma"), always_inline)) static inline __m256
ox_tile_act_avx2(const ox_tile_epilogue *e, __m256 v) {
    switch (e->act) {
    case OX_TILE_SIGMOID: return ox_exp_act8(0, v);
    case OX_TILE_SILU: return ox_exp_act8(1, v);
    case OX_TILE_HARDSWISH: {
        const __m256 h = _mm256_add_ps(_mm256_mul_ps(v, _mm256_set1_ps(1.0f / 6.0f)), _mm256_set1_ps(0.5f));
        return _mm256_mul_ps(v, _mm256_min_ps(_mm256_set1_ps(1.0f), _mm256_max_ps(_mm256_setzero_ps(), h)));
    }
    default: return _mm256_min_ps(_mm256_set1_ps(e->hi), _mm256_max_ps(_mm256_set1_ps(e->lo), v));
    }
}

/* Row i of the tile (r0: columns 0-7, r1: 8-15) into cr; m0 and m1 mask
 * the first `cols` columns. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
ox_tile_store_row_avx2(int i, __m256 r0, __m256 r1, float *cr, int cols, __m256i m0, __m256i m1,
                       int add, const ox_tile_epilogue *e) {
    if (add) {
        r0 = _mm256_add_ps(_mm256_maskload_ps(cr, m0), r0);
        r1 = _mm256_add_ps(_mm256_maskload_ps(cr + 8, m1), r1);
    }
    if (e) {
        const __m256 bv = _mm256_set1_ps(e->bias ? e->bias[i] : 0.0f);
        r0 = _mm256_add_ps(r0, bv);
        r1 = _mm256_add_ps(r1, bv);
        if (e->z) {
            const float *zr = e->z + i * e->ldz;
            r0 = _mm256_add_ps(r0, _mm256_maskload_ps(zr, m0));
            r1 = _mm256_add_ps(r1, _mm256_maskload_ps(zr + 8, m1));
        }
        r0 = ox_tile_act_avx2(e, r0);
        r1 = ox_tile_act_avx2(e, r1);
    }
    ox_store_cols_avx2(cr, r0, r1, cols);
}
#endif

#endif
