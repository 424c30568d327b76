/* The float32 packed GEMM's register tiles (gemm.c), shared with the
 * AVX-512 tile in its own file (gemm_tile_avx512.c). */
#ifndef ONYX_EP_CPU_KERNELS_GEMM_TILE_H
#define ONYX_EP_CPU_KERNELS_GEMM_TILE_H

#include <stdint.h>

/* A tile's rows (the packed A panels' height) and the packed B panels'
 * width. */
#define OX_GEMM_MR 6
#define OX_GEMM_NR 16

/* How the finished tile meets C: first slab with beta 0, first slab
 * with beta, later slabs adding on. */
enum { OX_GEMM_TILE_SET, OX_GEMM_TILE_BETA, OX_GEMM_TILE_ADD };

/* How far ahead of a packed panel's reads a tile asks for B: packed
 * weights larger than the caches stream from memory (a detector's
 * 51 MiB fully connected layer on a few boxes). */
#define OX_GEMM_B_AHEAD 4096

/* C[rows x cols] (row stride ldc) from kc steps of A and B, as gemm.c's
 * AVX2 tile does it, on sixteen lanes: one 512-bit vector per row per
 * panel of B, where the AVX2 tile needs two. A: element (i, k) at
 * a[i * a_row + k * a_k] (a packed panel: a_row 1, a_k OX_GEMM_MR; A in
 * place: a_row lda, a_k 1). B: a panel of 16 columns, step k at
 * b + k * ldbp; with pstep nonzero, a second panel pstep floats after
 * the first (cols up to 32). mode: OX_GEMM_TILE_*. Each element is the
 * same chain of multiply-adds in k order as the AVX2 tile's. */
void ox_gemm_tile_avx512(int rows, int cols, int64_t kc, const float *a, int64_t a_row, int64_t a_k,
                         const float *b, int64_t ldbp, int64_t pstep, float *c, int64_t ldc, int mode,
                         float alpha, float beta);

#endif
