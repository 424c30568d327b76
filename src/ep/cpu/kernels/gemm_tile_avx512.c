/* The float32 GEMM's AVX-512 register tile (see gemm_tile.h). Where a
 * core runs two 512-bit multiply-adds per cycle (Intel Xeon server
 * cores), sixteen lanes double what the AVX2 tile can reach: 176 against
 * 95 GFLOP/s of multiply-adds in registers on one core of an Intel Xeon
 * with AVX-512 FP16 (2.75 and 2.97 GHz). On AMD Zen 4, which runs a
 * 512-bit operation in two halves, the peak is the same either way. */
#include "ep/cpu/kernels/gemm_tile.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define MR OX_GEMM_MR
#define NR OX_GEMM_NR

/* The first `cols` of a panel's 16 columns. */
__attribute__((target("avx512f"), always_inline)) static inline __mmask16 cols_mask(int cols) {
    return cols >= NR ? (__mmask16)0xFFFF : cols <= 0 ? (__mmask16)0 : (__mmask16)((1u << cols) - 1);
}

/* rows x 16 (np 1) or rows x 32 (np 2): rows * np independent chains of
 * multiply-adds, 12 for a full tile of two panels, enough to cover the
 * multiply-add's latency on both of a core's 512-bit units. */
__attribute__((target("avx512f"), always_inline)) static inline void
tile512(const int rows, const int np, int64_t kc, const float *restrict a, const int64_t a_row,
        const int64_t a_k, const float *restrict b, int64_t ldbp, int64_t pstep, float *c, int64_t ldc,
        int cols, int mode, float alpha, float beta) {
    __m512 acc[2][MR];
#pragma GCC unroll 2
    for (int h = 0; h < np; h++)
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++)
            if (i < rows) acc[h][i] = _mm512_setzero_ps();
    /* as the AVX2 tile: packed panels are read in order, so the line
     * B_AHEAD bytes on is asked for (an address only, never
     * dereferenced), and the tile's rows of C are asked for now, to be
     * there when the sums are done */
    const int ahead = ldbp == NR;
#pragma GCC unroll 2
    for (int h = 0; h < np; h++)
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++)
            if (i < rows) __builtin_prefetch(c + i * ldc + h * NR, 1, 3);
    for (int64_t k = 0; k < kc; k++) {
        if (ahead) {
            __builtin_prefetch((const void *)((uintptr_t)b + OX_GEMM_B_AHEAD), 0, 3);
            if (np == 2) __builtin_prefetch((const void *)((uintptr_t)(b + pstep) + OX_GEMM_B_AHEAD), 0, 3);
        }
        __m512 bv[2];
#pragma GCC unroll 2
        for (int h = 0; h < np; h++) bv[h] = _mm512_loadu_ps(b + h * pstep);
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++)
            if (i < rows) {
                const __m512 av = _mm512_set1_ps(a[i * a_row]);
#pragma GCC unroll 2
                for (int h = 0; h < np; h++) acc[h][i] = _mm512_fmadd_ps(av, bv[h], acc[h][i]);
            }
        a += a_k;
        b += ldbp;
    }
    const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 2
    for (int h = 0; h < np; h++) {
        const __mmask16 m = cols_mask(cols - h * NR);
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++)
            if (i < rows) {
                float *cr = c + i * ldc + h * NR;
                __m512 r = _mm512_mul_ps(va, acc[h][i]);
                if (mode == OX_GEMM_TILE_ADD)
                    r = _mm512_add_ps(_mm512_maskz_loadu_ps(m, cr), r);
                else if (mode == OX_GEMM_TILE_BETA)
                    r = _mm512_add_ps(r, _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(m, cr)));
                _mm512_mask_storeu_ps(cr, m, r);
            }
    }
}

/* One instance per tile height and panel count, so the sums stay in
 * registers. */
#define TILE512_CASE(R)                                                                        \
    case R:                                                                                    \
        if (pstep)                                                                             \
            tile512(R, 2, kc, a, a_row, a_k, b, ldbp, pstep, c, ldc, cols, mode, alpha, beta); \
        else                                                                                   \
            tile512(R, 1, kc, a, a_row, a_k, b, ldbp, 0, c, ldc, cols, mode, alpha, beta);     \
        break;

/* A packed panel (a_row 1) and A in place (a_k 1) each get their own
 * instances: with the strides constants, each broadcast is one load. */
__attribute__((target("avx512f"))) static void tile512_packed(int rows, int cols, int64_t kc, const float *a,
                                                              const float *b, int64_t ldbp, int64_t pstep,
                                                              float *c, int64_t ldc, int mode, float alpha,
                                                              float beta) {
    const int64_t a_row = 1, a_k = MR;
    switch (rows) {
        TILE512_CASE(1) TILE512_CASE(2) TILE512_CASE(3) TILE512_CASE(4) TILE512_CASE(5)
        default: TILE512_CASE(6)
    }
}

__attribute__((target("avx512f"))) static void tile512_in_place(int rows, int cols, int64_t kc, const float *a,
                                                                int64_t a_row, const float *b, int64_t ldbp,
                                                                int64_t pstep, float *c, int64_t ldc, int mode,
                                                                float alpha, float beta) {
    const int64_t a_k = 1;
    switch (rows) {
        TILE512_CASE(1) TILE512_CASE(2) TILE512_CASE(3) TILE512_CASE(4) TILE512_CASE(5)
        default: TILE512_CASE(6)
    }
}

void ox_gemm_tile_avx512(int rows, int cols, int64_t kc, const float *a, int64_t a_row, int64_t a_k,
                         const float *b, int64_t ldbp, int64_t pstep, float *c, int64_t ldc, int mode,
                         float alpha, float beta) {
    if (a_k == 1)
        tile512_in_place(rows, cols, kc, a, a_row, b, ldbp, pstep, c, ldc, mode, alpha, beta);
    else
        tile512_packed(rows, cols, kc, a, b, ldbp, pstep, c, ldc, mode, alpha, beta);
}

#endif
