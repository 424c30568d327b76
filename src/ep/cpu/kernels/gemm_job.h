/* What the float32 GEMM's files share (gemm.c: the packed tiles and the
 * dispatch by shape; gemm_rows.c: the unpacked paths for small and
 * vector-shaped products): the job one product is, and the range
 * functions gemm.c hands the pool for the unpacked paths. Internal to
 * the GEMM; kernels call gemm.h. */
#ifndef ONYX_EP_CPU_KERNELS_GEMM_JOB_H
#define ONYX_EP_CPU_KERNELS_GEMM_JOB_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/stop.h"
#include "core/threadpool.h"
#include "ep/cpu/kernels/gemm.h"
#include "ep/cpu/kernels/gemm_tile.h"

typedef struct f32_arch {
    int mr, nr;
    int64_t mc, kc, nc;
    /* 0: generic kernel via a buffer; 2: the AVX2 tile straight into C;
     * 3: the AVX-512 tile (gemm_tile_avx512.c) */
    int direct;
} f32_arch;

typedef struct gemm_job_f32 {
    int ta, tb;
    int64_t M, N, K;
    float alpha, beta;
    const float *A;
    int64_t lda;
    const float *B;
    int64_t ldb;
    float *C;
    int64_t ldc;
    int b_direct;         /* kernels read op(B) rows where they lie */
    int a_in_place;       /* kernels read A (not transposed) where it lies */
    const ox_gemm_packed_b *pb; /* op(B) packed once (weights), or NULL */
    f32_arch ar;
    int64_t mc, nc, tiles_n;
    int64_t mblocks;      /* row blocks of mc rows per task */
    const ox_stop *stop;
    ox_threadpool *pool;  /* lends each task its packing buffers */
    atomic_int failed;
} gemm_job_f32;

/* AVX2 and FMA, unless ONYX_CPU_ISA caps the kernels below them (so the
 * tests run the portable dot products and panels on every machine) */
int ox_gemm_avx2(void);
/* Rows [r0, r1) of C (n columns, row stride ldc) times beta, zeroed
 * when beta is 0 (their old values never read). */
void ox_gemm_scale_rows(float *C, int64_t ldc, int64_t r0, int64_t r1, int64_t n, float beta);
/* ox_range_fn bodies over a gemm_job_f32 (gemm_rows.c): rows of C by
 * dot products or row updates; one row of A over column ranges; few rows
 * of A against a transposed B over column ranges; one row of A against
 * the weights' pack (j->pb) over 16-column panels. */
void ox_gemm_rows_direct_range(void *arg, int64_t r0, int64_t r1);
void ox_gemm_row_vector_range(void *arg, int64_t c0, int64_t c1);
void ox_gemm_few_rows_tb_range(void *arg, int64_t c0, int64_t c1);
void ox_gemm_row_vector_packed_range(void *arg, int64_t p0, int64_t p1);

#endif
