/* The AVX-512 twin of conv_tile_avx2.h's row store (conv_gemm.c and
 * conv_direct.c): 32 columns of a tile row as two vectors, the epilogue
 * by the same operations, so both give the AVX2 tile's bits. */
#ifndef ONYX_EP_CPU_KERNELS_CONV_TILE_AVX512_H
#define ONYX_EP_CPU_KERNELS_CONV_TILE_AVX512_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "ep/cpu/kernels/conv_fast.h"
#include "ep/cpu/kernels/exp_fma_avx2.h"

/* One k step of a tile of `rows` (at most OX_CONV_MR) rows, 32 columns
 * wide: row i gains a[i] times the columns (b0, b1), as ox_tile_step_avx2
 * does for 16. */
__attribute__((target("avx512f,avx2,fma"), always_inline)) static inline void
ox_tile_step_avx512(const int rows, const float *a, __m512 b0, __m512 b1, __m512 *lo, __m512 *hi) {
#pragma GCC unroll 6
    for (int i = 0; i < OX_CONV_MR; i++)
        if (i < rows) {
            const __m512 av = _mm512_set1_ps(a[i]);
            lo[i] = _mm512_fmadd_ps(av, b0, lo[i]);
            hi[i] = _mm512_fmadd_ps(av, b1, hi[i]);
        }
}

/* The masks of a row's first `cols` columns (of 32) in its two vectors
 * (integer work only: callers without the AVX-512 target use it too). */
__attribute__((always_inline)) static inline void ox_tile_masks_avx512(int cols, __mmask16 *m0,
                                                                                       __mmask16 *m1) {
    *m0 = cols >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << cols) - 1);
    *m1 = cols >= 32 ? (__mmask16)0xFFFF : cols > 16 ? (__mmask16)((1u << (cols - 16)) - 1) : (__mmask16)0;
}

/* ox_tile_act_avx2 on sixteen lanes; Sigmoid and SiLU by ox_exp_act16,
 * the same bits as the activation rows' */
__attribute__((target("avx512f,avx2,fma"), always_inline)) static inline __m512
ox_tile_act_avx512(const ox_tile_epilogue *e, __m512 v) {
    switch (e->act) {
    case OX_TILE_SIGMOID: return ox_exp_act16(0, v);
    case OX_TILE_SILU: return ox_exp_act16(1, v);
    case OX_TILE_HARDSWISH: {
        const __m512 h = _mm512_add_ps(_mm512_mul_ps(v, _mm512_set1_ps(1.0f / 6.0f)), _mm512_set1_ps(0.5f));
        return _mm512_mul_ps(v, _mm512_min_ps(_mm512_set1_ps(1.0f), _mm512_max_ps(_mm512_setzero_ps(), h)));
    }
    default: return _mm512_min_ps(_mm512_set1_ps(e->hi), _mm512_max_ps(_mm512_set1_ps(e->lo), v));
    }
}

/* Row i of an AVX-512 tile into cr: r0 at cr and r1 at cr + h (h = 16
 * for 32 consecutive columns; conv_direct.c's two-row tiles put the
 * second output row there), masks m0 and m1 selecting the lanes to
 * store; added to what C holds when add (a later K slab), then the
 * epilogue e when given (as ox_tile_store_row_avx2), its residual read
 * at the same offsets. */
__attribute__((target("avx512f,avx2,fma"), always_inline)) static inline void
ox_tile_store_split_avx512(int i, __m512 r0, __m512 r1, float *cr, int64_t h, __mmask16 m0, __mmask16 m1,
                           int add, const ox_tile_epilogue *e) {
    if (add) {
        r0 = _mm512_add_ps(_mm512_maskz_loadu_ps(m0, cr), r0);
        r1 = _mm512_add_ps(_mm512_maskz_loadu_ps(m1, cr + h), r1);
    }
    if (e) {
        const __m512 bv = _mm512_set1_ps(e->bias ? e->bias[i] : 0.0f);
        r0 = _mm512_add_ps(r0, bv);
        r1 = _mm512_add_ps(r1, bv);
        if (e->z) {
            const float *zr = e->z + i * e->ldz;
            r0 = _mm512_add_ps(r0, _mm512_maskz_loadu_ps(m0, zr));
            r1 = _mm512_add_ps(r1, _mm512_maskz_loadu_ps(m1, zr + h));
        }
        r0 = ox_tile_act_avx512(e, r0);
        r1 = ox_tile_act_avx512(e, r1);
    }
    _mm512_mask_storeu_ps(cr, m0, r0);
    if (m1) _mm512_mask_storeu_ps(cr + h, m1, r1);
}

/* Row i of an AVX-512 tile (r0: columns 0-15, r1: 16-31) into cr, masks
 * m0 and m1 selecting the first `cols` columns. */
__attribute__((target("avx512f,avx2,fma"), always_inline)) static inline void
ox_tile_store_row_avx512(int i, __m512 r0, __m512 r1, float *cr, __mmask16 m0, __mmask16 m1, int add,
                         const ox_tile_epilogue *e) {
    ox_tile_store_split_avx512(i, r0, r1, cr, 16, m0, m1, add, e);
}
#endif

#endif
