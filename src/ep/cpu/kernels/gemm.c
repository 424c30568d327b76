/* The float32 and float64 GEMM (gemm.h): packed, cache-blocked products
 * on register tiles, the dispatch of every product by its shape, constant
 * weights packed once, and the window geometry the convolution and
 * pooling kernels share. The unpacked paths for small and vector-shaped
 * float32 products are in gemm_rows.c. */
#include "ep/cpu/kernels/gemm.h"
#include "ep/cpu/kernels/gemm_job.h"
#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/gemm_tile.h"

#include "core/checked.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "ep/cpu/kernels/store_avx2.h"
#define OX_GEMM_X86 1
#endif

/* Register tile of the inner kernel (MR rows x NR columns of C) and the
 * cache blocks around it: an MC x KC block of A stays in L2 while a
 * KC x NR sliver of B stays in L1. MC must be a multiple of MR and NC of
 * NR. */
#define MR OX_GEMM_MR
#define NR OX_GEMM_NR
#define MC 72
#define KC 256
#define NC 256

/* Below this many multiply-adds packing costs more than it saves. */
#define SMALL_WORK 4096

typedef float v4f __attribute__((vector_size(16)));

/* ---------------------------------------------------------------- */
/* inner kernels: acc (MR x NR, row-major) = sum_k a[k][0..MR) x b[k][0..NR) */

static void kernel_generic(int64_t kc, const float *restrict a, const float *restrict b,
                           float *restrict acc) {
    v4f c[MR][NR / 4];
    for (int i = 0; i < MR; i++)
        for (int j = 0; j < NR / 4; j++) c[i][j] = (v4f){0, 0, 0, 0};
    for (int64_t k = 0; k < kc; k++) {
        v4f bv[NR / 4];
        memcpy(bv, b, sizeof bv);
        for (int i = 0; i < MR; i++) {
            v4f av = (v4f){0, 0, 0, 0} + a[i];
            for (int j = 0; j < NR / 4; j++) c[i][j] += av * bv[j];
        }
        a += MR;
        b += NR;
    }
    memcpy(acc, c, sizeof c);
}

/* float64 kernels: MR x NR64 tiles */
#define NR64 8

typedef double v2d __attribute__((vector_size(16)));

static void kernel_generic_f64(int64_t kc, const double *restrict a, const double *restrict b,
                               double *restrict acc) {
    v2d c[MR][NR64 / 2];
    for (int i = 0; i < MR; i++)
        for (int j = 0; j < NR64 / 2; j++) c[i][j] = (v2d){0, 0};
    for (int64_t k = 0; k < kc; k++) {
        v2d bv[NR64 / 2];
        memcpy(bv, b, sizeof bv);
        for (int i = 0; i < MR; i++) {
            v2d av = (v2d){0, 0} + a[i];
            for (int j = 0; j < NR64 / 2; j++) c[i][j] += av * bv[j];
        }
        a += MR;
        b += NR64;
    }
    memcpy(acc, c, sizeof c);
}

#ifdef OX_GEMM_X86
__attribute__((target("avx2,fma"))) static void kernel_avx2_f64(int64_t kc,
                                                                const double *restrict a,
                                                                const double *restrict b,
                                                                double *restrict acc) {
    __m256d c[MR][2];
    for (int i = 0; i < MR; i++) c[i][0] = c[i][1] = _mm256_setzero_pd();
    for (int64_t k = 0; k < kc; k++) {
        __m256d b0 = _mm256_loadu_pd(b), b1 = _mm256_loadu_pd(b + 4);
        for (int i = 0; i < MR; i++) {
            __m256d av = _mm256_broadcast_sd(a + i);
            c[i][0] = _mm256_fmadd_pd(av, b0, c[i][0]);
            c[i][1] = _mm256_fmadd_pd(av, b1, c[i][1]);
        }
        a += MR;
        b += NR64;
    }
    for (int i = 0; i < MR; i++) {
        _mm256_storeu_pd(acc + i * NR64, c[i][0]);
        _mm256_storeu_pd(acc + i * NR64 + 4, c[i][1]);
    }
}
#endif

typedef void (*kernel_f64)(int64_t kc, const double *a, const double *b, double *acc);

int ox_gemm_avx2(void) {
#ifdef OX_GEMM_X86
    return ox_cpu_isa_active() >= OX_ISA_AVX2;
#else
    return 0;
#endif
}

static kernel_f64 pick_kernel_f64(void) {
#ifdef OX_GEMM_X86
    if (ox_gemm_avx2()) return kernel_avx2_f64;
#endif
    return kernel_generic_f64;
}

/* Row updates used when writing a finished register tile back to C. */
static void row_axpy_f64(double *c, const double *a, double alpha, int64_t n) {
    for (int64_t x = 0; x < n; x++) c[x] += alpha * a[x];
}
static void row_set_f64(double *c, const double *a, double alpha, int64_t n) {
    for (int64_t x = 0; x < n; x++) c[x] = alpha * a[x];
}

/* ---------------------------------------------------------------- */
/* packed path, instantiated for float and double */

#define DEF_PACKED(T, SUF, NRT)                                                                 \
    typedef struct gemm_job_##SUF {                                                             \
        int ta, tb;                                                                             \
        int64_t M, N, K;                                                                        \
        T alpha, beta;                                                                          \
        const T *A;                                                                             \
        int64_t lda;                                                                            \
        const T *B;                                                                             \
        int64_t ldb;                                                                            \
        T *C;                                                                                   \
        int64_t ldc;                                                                            \
        int64_t tiles_n;                                                                        \
        const ox_stop *stop;                                                                    \
        kernel_##SUF kernel;                                                                    \
        atomic_int failed;                                                                      \
    } gemm_job_##SUF;                                                                           \
                                                                                                \
    /* op(A)[m0, m0+mc) x [k0, k0+kc) into MR-row panels, k-major inside a                      \
     * panel, zero rows past mc */                                                              \
    static void pack_a_##SUF(const gemm_job_##SUF *j, int64_t m0, int64_t mc, int64_t k0,       \
                             int64_t kc, T *ap) {                                               \
        for (int64_t p = 0; p < mc; p += MR) {                                                  \
            int64_t rows = mc - p < MR ? mc - p : MR;                                           \
            T *dst = ap + p * kc;                                                               \
            if (!j->ta) {                                                                       \
                for (int64_t i = 0; i < rows; i++) {                                            \
                    const T *src = j->A + (m0 + p + i) * j->lda + k0;                           \
                    for (int64_t k = 0; k < kc; k++) dst[k * MR + i] = src[k];                  \
                }                                                                               \
            } else {                                                                            \
                for (int64_t k = 0; k < kc; k++) {                                              \
                    const T *src = j->A + (k0 + k) * j->lda + m0 + p;                           \
                    for (int64_t i = 0; i < rows; i++) dst[k * MR + i] = src[i];                \
                }                                                                               \
            }                                                                                   \
            for (int64_t i = rows; i < MR; i++)                                                 \
                for (int64_t k = 0; k < kc; k++) dst[k * MR + i] = 0;                           \
        }                                                                                       \
    }                                                                                           \
                                                                                                \
    /* op(B)[k0, k0+kc) x [n0, n0+nc) into NRT-column panels, zero columns                      \
     * past nc */                                                                               \
    static void pack_b_##SUF(const gemm_job_##SUF *j, int64_t k0, int64_t kc, int64_t n0,       \
                             int64_t nc, T *bp) {                                               \
        for (int64_t q = 0; q < nc; q += NRT) {                                                 \
            int64_t cols = nc - q < NRT ? nc - q : NRT;                                         \
            T *dst = bp + q * kc;                                                               \
            if (!j->tb) {                                                                       \
                for (int64_t k = 0; k < kc; k++) {                                              \
                    const T *src = j->B + (k0 + k) * j->ldb + n0 + q;                           \
                    T *d = dst + k * NRT;                                                       \
                    if (cols == NRT) {                                                          \
                        memcpy(d, src, NRT * sizeof(T));                                        \
                    } else {                                                                    \
                        int64_t c = 0;                                                          \
                        for (; c < cols; c++) d[c] = src[c];                                    \
                        for (; c < NRT; c++) d[c] = 0;                                          \
                    }                                                                           \
                }                                                                               \
            } else {                                                                            \
                for (int64_t c = 0; c < cols; c++) {                                            \
                    const T *src = j->B + (n0 + q + c) * j->ldb + k0;                           \
                    for (int64_t k = 0; k < kc; k++) dst[k * NRT + c] = src[k];                 \
                }                                                                               \
                for (int64_t c = cols; c < NRT; c++)                                            \
                    for (int64_t k = 0; k < kc; k++) dst[k * NRT + c] = 0;                      \
            }                                                                                   \
        }                                                                                       \
    }                                                                                           \
                                                                                                \
    static void store_tile_##SUF(const gemm_job_##SUF *j, T *c, const T *acc, int64_t rows,     \
                                 int64_t cols, int first) {                                     \
        for (int64_t i = 0; i < rows; i++) {                                                    \
            T *cr = c + i * j->ldc;                                                             \
            const T *ar = acc + i * NRT;                                                        \
            if (!first) {                                                                       \
                row_axpy_##SUF(cr, ar, j->alpha, cols);                                         \
            } else if (j->beta == 0) {                                                          \
                row_set_##SUF(cr, ar, j->alpha, cols);                                          \
            } else {                                                                            \
                for (int64_t x = 0; x < cols; x++) cr[x] = j->alpha * ar[x] + j->beta * cr[x];  \
            }                                                                                   \
        }                                                                                       \
    }                                                                                           \
                                                                                                \
    static void gemm_tiles_##SUF(void *arg, int64_t t0, int64_t t1) {                           \
        gemm_job_##SUF *j = arg;                                                                \
        int64_t kmax = j->K < KC ? j->K : KC;                                                   \
        T *ap = malloc(sizeof(T) * (size_t)(MC * kmax + NC * kmax));                            \
        if (!ap) {                                                                              \
            atomic_store(&j->failed, 1);                                                        \
            return;                                                                             \
        }                                                                                       \
        T *bp = ap + MC * kmax;                                                                 \
        T acc[MR * NRT];                                                                        \
        for (int64_t t = t0; t < t1; t++) {                                                     \
            int64_t m0 = (t / j->tiles_n) * MC, n0 = (t % j->tiles_n) * NC;                     \
            int64_t mc = j->M - m0 < MC ? j->M - m0 : MC;                                       \
            int64_t nc = j->N - n0 < NC ? j->N - n0 : NC;                                       \
            for (int64_t k0 = 0; k0 < j->K; k0 += KC) {                                         \
                if (ox_stop_requested(j->stop)) break;                                          \
                int64_t kc = j->K - k0 < KC ? j->K - k0 : KC;                                   \
                pack_b_##SUF(j, k0, kc, n0, nc, bp);                                            \
                pack_a_##SUF(j, m0, mc, k0, kc, ap);                                            \
                for (int64_t q = 0; q < nc; q += NRT) {                                         \
                    int64_t cols = nc - q < NRT ? nc - q : NRT;                                 \
                    for (int64_t p = 0; p < mc; p += MR) {                                      \
                        int64_t rows = mc - p < MR ? mc - p : MR;                               \
                        j->kernel(kc, ap + p * kc, bp + q * kc, acc);                           \
                        store_tile_##SUF(j, j->C + (m0 + p) * j->ldc + n0 + q, acc, rows, cols, \
                                         k0 == 0);                                              \
                    }                                                                           \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
        free(ap);                                                                               \
    }                                                                                           \
                                                                                                \
    static int gemm_packed_##SUF(ox_threadpool *pool, const ox_stop *stop, int ta, int tb,      \
                                 int64_t M, int64_t N, int64_t K, T alpha, const T *A,          \
                                 int64_t lda, const T *B, int64_t ldb, T beta, T *C,            \
                                 int64_t ldc) {                                                 \
        gemm_job_##SUF j = {.ta = ta, .tb = tb, .M = M, .N = N, .K = K, .alpha = alpha,         \
                            .beta = beta, .A = A, .lda = lda, .B = B, .ldb = ldb, .C = C,       \
                            .ldc = ldc, .stop = stop};                                          \
        atomic_init(&j.failed, 0);                                                              \
        j.kernel = pick_kernel_##SUF();                                                         \
        j.tiles_n = (N + NC - 1) / NC;                                                          \
        int64_t tiles = ((M + MC - 1) / MC) * j.tiles_n;                                        \
        ox_parallel_for(pool, tiles, 1, gemm_tiles_##SUF, &j);                                  \
        return atomic_load(&j.failed) ? -1 : 0;                                                 \
    }

DEF_PACKED(double, f64, NR64)

/* ---------------------------------------------------------------- */
/* float32 packed path: the 6 x 16 register tile of the AVX2 and generic
 * kernels, or the AVX-512 tile (gemm_tile_avx512.c), as f32_arch
 * (gemm_job.h) picks. Packed operands are laid out per
 * KC-deep slab: op(A) as mr-row panels (k-major inside a panel, zero rows
 * past M), op(B) as nr-column panels (zero columns past N). */

/* Row blocks of at most this many rows take the two-panel tile. */
#define WIDE_ROWS 3

/* Products with at most this many row panels read B unpacked. */
#define B_DIRECT_ROWS 3


/* The machine's best tile, capped by ONYX_CPU_ISA (cpu_isa.h). */
static f32_arch pick_arch_f32(void) {
#ifdef OX_GEMM_X86
    /* taller A blocks than the buffered kernels use: repacking B for
     * every block of rows is what held large products back */
    ox_cpu_isa isa = ox_cpu_isa_active();
    if (isa == OX_ISA_AVX512) return (f32_arch){MR, NR, MR * 24, 256, 512, 3};
    if (isa == OX_ISA_AVX2) return (f32_arch){MR, NR, MR * 24, 256, 512, 2};
#endif
    return (f32_arch){MR, NR, MC, KC, NC, 0};
}



#ifdef OX_GEMM_X86
/* The 6 x 16 AVX2 tile, writing straight into C; masked loads read the
 * edge columns of C and plain stores write them (ox_store_cols_avx2).
 * With np 2 it is rows x 32, two panels of B side by side (the second
 * pstep floats after the first): a tile of one to three rows has too
 * few sums to hide the multiply-adds' latency (two rows of one panel are
 * four chains of dependent multiply-adds, a step of each every four
 * cycles on AMD Zen 4, which read B at 52 GB/s), while the same sums in
 * the same order over twice the columns keep the core busy. cols counts
 * the columns of both panels. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
tile256(const int rows, const int np, int64_t kc, const float *restrict a, const int64_t a_row,
        const int64_t a_k, const float *restrict b, int64_t ldbp, int64_t pstep, float *c, int64_t ldc,
        int cols, int mode, float alpha, float beta) {
    __m256 lo[2][MR], hi[2][MR];
#pragma GCC unroll 2
    for (int h = 0; h < np; h++)
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++)
            if (i < rows) lo[h][i] = hi[h][i] = _mm256_setzero_ps();
    /* a packed panel (one cache line of B per k) is read in order, and
     * the panels of a slab follow each other: the line OX_GEMM_B_AHEAD bytes on
     * is asked for (an address only, never dereferenced, so it may lie
     * past the pack) */
    const int ahead = ldbp == NR;
    /* the tile's rows of C are asked for now and used when the sums are
     * done: in a large product they are out of every cache by the time a
     * slab comes back to them (2048^3's C block of 4 MiB per slab), and
     * the tile then waited for them at its end (2048^3: 70 -> 82% of
     * peak) */
#pragma GCC unroll 2
    for (int h = 0; h < np; h++)
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++)
            if (i < rows) {
                __builtin_prefetch(c + i * ldc + h * NR, 1, 3);
                __builtin_prefetch(c + i * ldc + h * NR + 15, 1, 3);
            }
    for (int64_t k = 0; k < kc; k++) {
        if (ahead) {
            __builtin_prefetch((const void *)((uintptr_t)b + OX_GEMM_B_AHEAD), 0, 3);
            if (np == 2) __builtin_prefetch((const void *)((uintptr_t)(b + pstep) + OX_GEMM_B_AHEAD), 0, 3);
        }
        __m256 b0[2], b1[2];
#pragma GCC unroll 2
        for (int h = 0; h < np; h++) {
            b0[h] = _mm256_loadu_ps(b + h * pstep);
            b1[h] = _mm256_loadu_ps(b + h * pstep + 8);
        }
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++)
            if (i < rows) {
                __m256 av = _mm256_broadcast_ss(a + i * a_row);
#pragma GCC unroll 2
                for (int h = 0; h < np; h++) {
                    lo[h][i] = _mm256_fmadd_ps(av, b0[h], lo[h][i]);
                    hi[h][i] = _mm256_fmadd_ps(av, b1[h], hi[h][i]);
                }
            }
        a += a_k;
        b += ldbp;
    }
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
#pragma GCC unroll 2
    for (int h = 0; h < np; h++) {
        const int hc = cols - h * NR < NR ? cols - h * NR : NR;
        __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(hc), lane);
        __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(hc - 8), lane);
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++)
            if (i < rows) {
                float *cr = c + i * ldc + h * NR;
                __m256 r0 = _mm256_mul_ps(va, lo[h][i]), r1 = _mm256_mul_ps(va, hi[h][i]);
                if (mode == OX_GEMM_TILE_ADD) {
                    r0 = _mm256_add_ps(_mm256_maskload_ps(cr, m0), r0);
                    r1 = _mm256_add_ps(_mm256_maskload_ps(cr + 8, m1), r1);
                } else if (mode == OX_GEMM_TILE_BETA) {
                    r0 = _mm256_add_ps(r0, _mm256_mul_ps(vb, _mm256_maskload_ps(cr, m0)));
                    r1 = _mm256_add_ps(r1, _mm256_mul_ps(vb, _mm256_maskload_ps(cr + 8, m1)));
                }
                ox_store_cols_avx2(cr, r0, r1, hc);
            }
    }
}

#define TILE256_CASE(R, NP, AR, AK)                                                            \
    case R:                                                                                    \
        tile256(R, NP, kc, a, AR, AK, b, ldbp, pstep, c, ldc, cols, mode, alpha, beta);        \
        break;

/* A from its packed panel (element (i, k) at a[k * MR + i]); pstep 0:
 * one panel of B, else rows (at most WIDE_ROWS) x two panels */
__attribute__((target("avx2,fma"))) static void kernel_avx2_direct(int rows, int cols, int64_t kc,
                                                                    const float *a, const float *b,
                                                                    int64_t ldbp, int64_t pstep, float *c,
                                                                    int64_t ldc, int mode, float alpha,
                                                                    float beta) {
    if (pstep) {
        switch (rows) {
            TILE256_CASE(1, 2, 1, MR) TILE256_CASE(2, 2, 1, MR)
        default:
            tile256(3, 2, kc, a, 1, MR, b, ldbp, pstep, c, ldc, cols, mode, alpha, beta);
            break;
        }
        return;
    }
    switch (rows) {
        TILE256_CASE(1, 1, 1, MR) TILE256_CASE(2, 1, 1, MR) TILE256_CASE(3, 1, 1, MR)
        TILE256_CASE(4, 1, 1, MR) TILE256_CASE(5, 1, 1, MR)
    default:
        tile256(MR, 1, kc, a, 1, MR, b, ldbp, 0, c, ldc, cols, mode, alpha, beta);
        break;
    }
}

/* A read where it lies (element (i, k) at a[i * lda + k]): no packing */
__attribute__((target("avx2,fma"))) static void kernel_avx2_a_in_place(int rows, int cols, int64_t kc,
                                                                        const float *a, int64_t lda,
                                                                        const float *b, int64_t ldbp,
                                                                        int64_t pstep, float *c, int64_t ldc,
                                                                        int mode, float alpha, float beta) {
    if (pstep) {
        switch (rows) {
            TILE256_CASE(1, 2, lda, 1) TILE256_CASE(2, 2, lda, 1)
        default:
            tile256(3, 2, kc, a, lda, 1, b, ldbp, pstep, c, ldc, cols, mode, alpha, beta);
            break;
        }
        return;
    }
    switch (rows) {
        TILE256_CASE(1, 1, lda, 1) TILE256_CASE(2, 1, lda, 1) TILE256_CASE(3, 1, lda, 1)
        TILE256_CASE(4, 1, lda, 1) TILE256_CASE(5, 1, lda, 1)
    default:
        tile256(MR, 1, kc, a, lda, 1, b, ldbp, 0, c, ldc, cols, mode, alpha, beta);
        break;
    }
}
#endif


/* Six rows of A (lda apart, from src) into a 6-row panel, k-major: the
 * rows are read side by side, so the panel is written in order, and the
 * next panel's rows are asked for as these are copied. Rows far apart
 * each start a stream the hardware prefetcher has not seen: copying them
 * one after another (each 6th float of the panel written) waited on
 * memory, 15% of 2048^3's time, which reached 70% of the core's peak
 * (now 86-88%, gemm_bench). */
static void pack_a_rows6(const float *src, int64_t lda, int64_t kc, float *dst) {
    const float *s0 = src, *s1 = s0 + lda, *s2 = s1 + lda, *s3 = s2 + lda, *s4 = s3 + lda, *s5 = s4 + lda;
    /* an address only, never dereferenced: it may lie past A */
    const uintptr_t next = (uintptr_t)src + (uintptr_t)(6 * lda) * sizeof(float);
    for (int64_t k = 0; k < kc; k++) {
        if (k % 16 == 0)
            for (int64_t i = 0; i < 6; i++)
                __builtin_prefetch((const void *)(next + (uintptr_t)(i * lda + k) * sizeof(float)), 0, 3);
        float *d = dst + k * 6;
        d[0] = s0[k];
        d[1] = s1[k];
        d[2] = s2[k];
        d[3] = s3[k];
        d[4] = s4[k];
        d[5] = s5[k];
    }
}

/* op(A)[m0, m0+mc) x [k0, k0+kc) into mr-row panels */
static void pack_a_f32(int ta, const float *A, int64_t lda, int mr, int64_t m0, int64_t mc,
                       int64_t k0, int64_t kc, float *ap) {
    for (int64_t p = 0; p < mc; p += mr) {
        int64_t rows = mc - p < mr ? mc - p : mr;
        float *dst = ap + p * kc;
        if (!ta && rows == 6 && mr == 6) {
            pack_a_rows6(A + (m0 + p) * lda + k0, lda, kc, dst);
        } else if (!ta) {
            for (int64_t i = 0; i < rows; i++) {
                const float *src = A + (m0 + p + i) * lda + k0;
                for (int64_t k = 0; k < kc; k++) dst[k * mr + i] = src[k];
            }
        } else {
            for (int64_t k = 0; k < kc; k++) {
                const float *src = A + (k0 + k) * lda + m0 + p;
                for (int64_t i = 0; i < rows; i++) dst[k * mr + i] = src[i];
            }
        }
        for (int64_t i = rows; i < mr; i++)
            for (int64_t k = 0; k < kc; k++) dst[k * mr + i] = 0.0f;
    }
}

/* op(B)[k0, k0+kc) x [n0, n0+nc) into nr-column panels */
static void pack_b_f32(int tb, const float *B, int64_t ldb, int nr, int64_t k0, int64_t kc,
                       int64_t n0, int64_t nc, float *bp) {
    for (int64_t q = 0; q < nc; q += nr) {
        int64_t cols = nc - q < nr ? nc - q : nr;
        float *dst = bp + q * kc;
        if (!tb && cols == nr && nr == NR) {
            /* constant-size copies inline; a memcpy call per row would cost
             * more than the copy itself */
            for (int64_t k = 0; k < kc; k++)
                memcpy(dst + k * NR, B + (k0 + k) * ldb + n0 + q, sizeof(float) * NR);
        } else if (!tb) {
            for (int64_t k = 0; k < kc; k++) {
                float *d = dst + k * nr;
                const float *src = B + (k0 + k) * ldb + n0 + q;
                for (int64_t c = 0; c < cols; c++) d[c] = src[c];
                for (int64_t c = cols; c < nr; c++) d[c] = 0.0f;
            }
        } else {
            for (int64_t c = 0; c < cols; c++) {
                const float *src = B + (n0 + q + c) * ldb + k0;
                for (int64_t k = 0; k < kc; k++) dst[k * nr + c] = src[k];
            }
            for (int64_t c = cols; c < nr; c++)
                for (int64_t k = 0; k < kc; k++) dst[k * nr + c] = 0.0f;
        }
    }
}

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

static void store_tile_f32(const gemm_job_f32 *j, float *c, const float *acc, int64_t rows,
                           int64_t cols, int mode) {
    for (int64_t i = 0; i < rows; i++) {
        float *cr = c + i * j->ldc;
        const float *ar = acc + i * NR;
        if (mode == OX_GEMM_TILE_ADD)
            ox_vec_axpy(cr, ar, j->alpha, cols);
        else if (mode == OX_GEMM_TILE_SET)
            ox_vec_affine(cr, ar, j->alpha, 0.0f, cols);
        else
            for (int64_t x = 0; x < cols; x++) cr[x] = j->alpha * ar[x] + j->beta * cr[x];
    }
}

static void gemm_tiles_f32(void *arg, int64_t t0, int64_t t1) {
    gemm_job_f32 *j = arg;
    const f32_arch *ar = &j->ar;
    int64_t kmax = j->K < ar->kc ? j->K : ar->kc;
    size_t need = (size_t)((j->mc + (j->b_direct ? ar->nr : j->nc)) * kmax);
    float *scratch = NULL;
    if (need) {
        scratch = ox_threadpool_block(j->pool, sizeof(float) * need);
        if (!scratch) {
            atomic_store(&j->failed, 1);
            return;
        }
    }
    float *abuf = scratch, *bbuf = scratch + j->mc * kmax;
    float acc[MR * NR];
    const int64_t tiles_m = (j->M + j->mc - 1) / j->mc;
    for (int64_t t = t0; t < t1; t++) {
        /* a task: the row blocks [b0, b1) against one column block; each
         * slab of B is packed once for all of them (B repacked for every
         * row block cost 2048^3 a fifth of its time) */
        const int64_t b0 = (t / j->tiles_n) * j->mblocks, n0 = (t % j->tiles_n) * j->nc;
        const int64_t b1 = b0 + j->mblocks < tiles_m ? b0 + j->mblocks : tiles_m;
        int64_t nc = j->N - n0 < j->nc ? j->N - n0 : j->nc;
        for (int64_t k0 = 0; k0 < j->K; k0 += ar->kc) {
            if (ox_stop_requested(j->stop)) break;
            int64_t kc = j->K - k0 < ar->kc ? j->K - k0 : ar->kc;
            const float *bp = bbuf;
            if (j->pb)
                bp = j->pb->data + k0 * j->pb->Np + n0 * kc;
            else if (!j->b_direct)
                pack_b_f32(j->tb, j->B, j->ldb, ar->nr, k0, kc, n0, nc, bbuf);
            int mode = k0 > 0 ? OX_GEMM_TILE_ADD : j->beta == 0.0f ? OX_GEMM_TILE_SET : OX_GEMM_TILE_BETA;
            for (int64_t blk = b0; blk < b1; blk++) {
                const int64_t m0 = blk * j->mc, mc = j->M - m0 < j->mc ? j->M - m0 : j->mc;
                const float *ap = abuf;
                if (!j->a_in_place) pack_a_f32(j->ta, j->A, j->lda, ar->mr, m0, mc, k0, kc, abuf);
                /* the AVX-512 tile takes panels two at a time (B read
                 * in place: two whole ones), the AVX2 tile only for rows
                 * few enough for its two-panel form */
                const int pairs = ar->direct == 3 || (ar->direct == 2 && !j->b_direct && mc <= WIDE_ROWS);
                for (int64_t q = 0, step; q < nc; q += step) {
                    int64_t pstep = 0;
                    if (pairs && !j->b_direct && nc - q > ar->nr) pstep = ar->nr * kc;
                    if (pairs && j->b_direct && nc - q >= 2 * ar->nr) pstep = ar->nr;
                    step = pstep ? 2 * ar->nr : ar->nr;
                    int cols = (int)(nc - q < step ? nc - q : step);
                    const float *bq = bp + q * kc;
                    int64_t ldbp = ar->nr;
                    if (j->b_direct) {
                        /* full panels are read in place; the ragged last
                         * one is copied so no read runs past a row of B */
                        if (cols == step) {
                            bq = j->B + k0 * j->ldb + n0 + q;
                            ldbp = j->ldb;
                        } else {
                            pack_b_f32(0, j->B, j->ldb, ar->nr, k0, kc, n0 + q, cols, bbuf);
                            bq = bbuf;
                        }
                    }
                    for (int64_t p = 0; p < mc; p += ar->mr) {
                        int rows = (int)(mc - p < ar->mr ? mc - p : ar->mr);
                        float *c = j->C + (m0 + p) * j->ldc + n0 + q;
#ifdef OX_GEMM_X86
                        if (ar->direct == 3) {
                            if (j->a_in_place)
                                ox_gemm_tile_avx512(rows, cols, kc, j->A + (m0 + p) * j->lda + k0, j->lda, 1,
                                                    bq, ldbp, pstep, c, j->ldc, mode, j->alpha, j->beta);
                            else
                                ox_gemm_tile_avx512(rows, cols, kc, ap + p * kc, 1, MR, bq, ldbp, pstep, c,
                                                    j->ldc, mode, j->alpha, j->beta);
                            continue;
                        }
                        if (j->a_in_place) {
                            kernel_avx2_a_in_place(rows, cols, kc, j->A + (m0 + p) * j->lda + k0,
                                                   j->lda, bq, ldbp, pstep, c, j->ldc, mode,
                                                   j->alpha, j->beta);
                            continue;
                        }
                        if (ar->direct == 2) {
                            kernel_avx2_direct(rows, cols, kc, ap + p * kc, bq, ldbp, pstep, c,
                                               j->ldc, mode, j->alpha, j->beta);
                            continue;
                        }
#endif
                        /* never reading B in place: b_direct needs a direct kernel */
                        (void)ldbp;
                        kernel_generic(kc, ap + p * kc, bq, acc);
                        store_tile_f32(j, c, acc, rows, cols, mode);
                    }
                }
            }
        }
    }
    ox_threadpool_block_done(j->pool, scratch);
}

static int gemm_packed_f32(ox_threadpool *pool, gemm_job_f32 *j) {
    j->pool = pool;
    j->ar = pick_arch_f32();
    /* a prepacked B fixes the slab depth it was packed with */
    if (j->pb) j->ar.kc = j->pb->kc;
    j->mc = j->ar.mc;
    j->nc = j->ar.nc;
    /* enough tiles to keep every thread busy, without slivers of B so
     * thin that repacking A for each dominates */
    int threads = ox_threadpool_size(pool);
    int64_t tiles_m = (j->M + j->mc - 1) / j->mc;
    while (threads > 1 && j->nc > 4 * j->ar.nr &&
           tiles_m * ((j->N + j->nc - 1) / j->nc) < 4 * threads)
        j->nc = round_up(j->nc / 2, j->ar.nr);
    j->tiles_n = (j->N + j->nc - 1) / j->nc;
    /* with few row panels to share it, packing B costs about as much
     * memory traffic as the product itself */
    j->b_direct = !j->pb && !j->tb && j->ar.direct && j->M <= B_DIRECT_ROWS * j->ar.mr;
    /* broadcasting A's elements from its rows costs the kernel nothing
     * over reading its packed panel, so only a transposed A is packed
     * (gemm_bench: 336x16x336 45 -> 93 GFLOP/s, the large shapes equal
     * or a few percent faster); except when A's rows lie a multiple of 4
     * KiB apart: the six rows a tile reads then share one set of the L1
     * cache (1024^3 87 -> 92 GFLOP/s packed) */
    j->a_in_place = !j->ta && j->ar.direct >= 2 && (j->lda % 1024) != 0;
    /* row blocks per task: all of them on one thread (B packed once per
     * slab), else as few as still give each thread four tasks */
    int64_t mchunks = threads > 1 ? (4 * (int64_t)threads + j->tiles_n - 1) / j->tiles_n : 1;
    if (mchunks > tiles_m) mchunks = tiles_m;
    j->mblocks = (tiles_m + mchunks - 1) / mchunks;
    mchunks = (tiles_m + j->mblocks - 1) / j->mblocks;
    ox_parallel_for(pool, mchunks * j->tiles_n, 1, gemm_tiles_f32, j);
    return atomic_load(&j->failed) ? -1 : 0;
}

/* Weights of at least this many floats (256 KiB) read by a row vector
 * are packed for it: below, they sit in cache, where the dot products
 * read them about as fast, and a pack would only add memory (PP-OCR's
 * squeeze-and-excitation layers at batch 1: 8 MiB of packs, peak 28 ->
 * 36 MiB). */
#define ROW_PACK_MIN 65536

/* Rows of A up to which a transposed B is read in place by dot products,
 * unless B is constant weights: their pack is read as one stream, which
 * the two-panel tile turns into sums faster (MobileNetV3's classifier,
 * 2 x 1024 x 1000 alone: 0.125 -> 0.074 ms on AMD Zen 4). */
#define FEW_ROWS_TB 8

static const ox_gemm_packed_b *weights_pack(ox_gemm_weights *w);

/* The product; w (or NULL) holds op(B) as constant weights, packed once. */
static int gemm_f32(ox_threadpool *pool, const ox_stop *stop, int trans_a, int trans_b, int64_t M,
                    int64_t N, int64_t K, float alpha, const float *A, int64_t lda, const float *B,
                    int64_t ldb, ox_gemm_weights *w, float beta, float *C, int64_t ldc) {
    if (M <= 0 || N <= 0) return 0;
    gemm_job_f32 j = {.ta = trans_a != 0,
                      .tb = trans_b != 0,
                      .M = M,
                      .N = N,
                      .K = K,
                      .alpha = alpha,
                      .beta = beta,
                      .A = A,
                      .lda = lda,
                      .B = B,
                      .ldb = ldb,
                      .C = C,
                      .ldc = ldc,
                      .stop = stop};
    atomic_init(&j.failed, 0);
    if (K <= 0 || alpha == 0.0f) {
        ox_gemm_scale_rows(C, ldc, 0, M, N, beta);
        return 0;
    }
    if (M == 1 && w && !j.ta && N * K >= ROW_PACK_MIN && (j.pb = weights_pack(w)) != NULL) {
        const int64_t per_panel = K * NR;
        ox_parallel_for(pool, j.pb->Np / NR, per_panel >= 16384 ? 1 : 16384 / per_panel, ox_gemm_row_vector_packed_range, &j);
        return 0;
    }
    if (M == 1) {
        ox_parallel_for(pool, N, K >= 64 ? 64 : 1024, ox_gemm_row_vector_range, &j);
        return 0;
    }
    if (!j.ta && j.tb && M <= FEW_ROWS_TB && !w) {
        int64_t per_col = M * K;
        ox_parallel_for(pool, N, per_col >= 16384 ? 1 : 16384 / per_col, ox_gemm_few_rows_tb_range, &j);
        return 0;
    }
    int64_t work = M * N * K;
    if (work <= SMALL_WORK || N == 1) {
        int64_t per_row = N * K;
        int64_t grain = per_row >= 65536 ? 1 : 65536 / (per_row ? per_row : 1);
        ox_parallel_for(pool, M, grain, ox_gemm_rows_direct_range, &j);
        return 0;
    }
    /* here, on the packed path, and for a row vector (above) is the
     * weights' pack worth making */
    j.pb = w ? weights_pack(w) : NULL;
    return gemm_packed_f32(pool, &j);
}

int ox_gemm_f32(ox_threadpool *pool, const ox_stop *stop, int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
                float alpha, const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                float *C, int64_t ldc) {
    return gemm_f32(pool, stop, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, NULL, beta, C, ldc);
}

int ox_gemm_pack_b_f32(int trans_b, int64_t K, int64_t N, const float *B, int64_t ldb,
                       ox_gemm_packed_b *out) {
    memset(out, 0, sizeof *out);
    if (K <= 0 || N <= 0) return -1;
    f32_arch ar = pick_arch_f32();
    int64_t Np = round_up(N, ar.nr), n;
    if (!ox_mul_i64(Np, K, &n) || n > (int64_t)(SIZE_MAX / sizeof(float)) - 16) return -1;
    float *d = aligned_alloc(64, ((size_t)n * sizeof(float) + 63) / 64 * 64);
    if (!d) return -1;
    /* slab by slab, each as the run-time packing lays out one tile of
     * the whole width */
    for (int64_t k0 = 0; k0 < K; k0 += ar.kc) {
        int64_t kc = K - k0 < ar.kc ? K - k0 : ar.kc;
        pack_b_f32(trans_b != 0, B, ldb, ar.nr, k0, kc, 0, N, d + k0 * Np);
    }
    *out = (ox_gemm_packed_b){.trans_b = trans_b != 0, .K = K, .N = N, .Np = Np, .kc = ar.kc,
                              .bytes = (size_t)n * sizeof(float), .data = d};
    return 0;
}

void ox_gemm_packed_b_free(ox_gemm_packed_b *p) {
    if (!p) return;
    free(p->data);
    p->data = NULL;
}

struct ox_gemm_weights {
    int trans_b;
    int64_t K, N, ldb;
    const float *B;
    pthread_mutex_t lock;  /* held while packing */
    _Atomic(ox_gemm_packed_b *) pb; /* NULL until packed */
    atomic_int failed;     /* packing ran out of memory: never retried */
};

ox_gemm_weights *ox_gemm_weights_new(int trans_b, int64_t K, int64_t N, const float *B,
                                     int64_t ldb) {
    if (K < 1 || N < 1 || !B) return NULL;
    ox_gemm_weights *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    if (pthread_mutex_init(&w->lock, NULL) != 0) {
        free(w);
        return NULL;
    }
    w->trans_b = trans_b != 0;
    w->K = K;
    w->N = N;
    w->B = B;
    w->ldb = ldb;
    atomic_init(&w->pb, NULL);
    atomic_init(&w->failed, 0);
    return w;
}

void ox_gemm_weights_free(ox_gemm_weights *w) {
    if (!w) return;
    ox_gemm_packed_b *pb = atomic_load(&w->pb);
    ox_gemm_packed_b_free(pb);
    free(pb);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

int ox_gemm_weights_packed(const ox_gemm_weights *w) {
    return w && atomic_load_explicit(&((ox_gemm_weights *)w)->pb, memory_order_acquire) != NULL;
}
int64_t ox_gemm_weights_k(const ox_gemm_weights *w) { return w->K; }
int64_t ox_gemm_weights_n(const ox_gemm_weights *w) { return w->N; }

/* The pack, made by the first caller that needs it; NULL when packing
 * failed (the caller then packs per run). */
static const ox_gemm_packed_b *weights_pack(ox_gemm_weights *w) {
    ox_gemm_packed_b *pb = atomic_load_explicit(&w->pb, memory_order_acquire);
    if (pb || atomic_load(&w->failed)) return pb;
    pthread_mutex_lock(&w->lock);
    pb = atomic_load_explicit(&w->pb, memory_order_acquire);
    if (!pb && !atomic_load(&w->failed)) {
        pb = malloc(sizeof *pb);
        if (pb && ox_gemm_pack_b_f32(w->trans_b, w->K, w->N, w->B, w->ldb, pb) == 0) {
            atomic_store_explicit(&w->pb, pb, memory_order_release);
        } else {
            free(pb);
            pb = NULL;
            atomic_store(&w->failed, 1);
        }
    }
    pthread_mutex_unlock(&w->lock);
    return pb;
}

int ox_gemm_f32_weights(ox_threadpool *pool, const ox_stop *stop, int64_t M, float alpha,
                        const float *A, int64_t lda, ox_gemm_weights *w, float beta, float *C,
                        int64_t ldc) {
    return gemm_f32(pool, stop, 0, w->trans_b, M, w->N, w->K, alpha, A, lda, w->B, w->ldb, w, beta,
                    C, ldc);
}


/* ---------------------------------------------------------------- */
/* float64: blocked row updates, parallel over rows */

typedef struct gemm64_job {
    int ta, tb;
    int64_t M, N, K;
    double alpha, beta;
    const double *A;
    int64_t lda;
    const double *B;
    int64_t ldb;
    double *C;
    int64_t ldc;
    const ox_stop *stop;
} gemm64_job;

static void gemm64_rows(void *arg, int64_t r0, int64_t r1) {
    const gemm64_job *j = arg;
    for (int64_t i = r0; i < r1; i++) {
        double *c = j->C + i * j->ldc;
        for (int64_t x = 0; x < j->N; x++) c[x] = j->beta == 0.0 ? 0.0 : c[x] * j->beta;
    }
    const int64_t kb = 128;
    for (int64_t k0 = 0; k0 < j->K; k0 += kb) {
        if (ox_stop_requested(j->stop)) return;
        int64_t k1 = k0 + kb < j->K ? k0 + kb : j->K;
        for (int64_t i = r0; i < r1; i++) {
            double *c = j->C + i * j->ldc;
            for (int64_t k = k0; k < k1; k++) {
                double av = j->alpha * (j->ta ? j->A[k * j->lda + i] : j->A[i * j->lda + k]);
                if (!j->tb) {
                    const double *b = j->B + k * j->ldb;
                    for (int64_t x = 0; x < j->N; x++) c[x] += av * b[x];
                } else {
                    for (int64_t x = 0; x < j->N; x++) c[x] += av * j->B[x * j->ldb + k];
                }
            }
        }
    }
}

int ox_gemm_f64(ox_threadpool *pool, const ox_stop *stop, int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
                double alpha, const double *A, int64_t lda, const double *B, int64_t ldb,
                double beta, double *C, int64_t ldc) {
    if (M <= 0 || N <= 0) return 0;
    if (K > 0 && alpha != 0.0 && M > 1 && N > 1 && M * N * K > SMALL_WORK)
        return gemm_packed_f64(pool, stop, trans_a != 0, trans_b != 0, M, N, K, alpha, A, lda, B, ldb, beta,
                               C, ldc);
    gemm64_job j = {trans_a != 0, trans_b != 0, M, N, K, alpha, beta, A, lda, B, ldb, C, ldc, stop};
    int64_t per_row = N * (K > 0 ? K : 1);
    int64_t grain = per_row >= 32768 ? 1 : 32768 / per_row;
    ox_parallel_for(pool, M, grain, gemm64_rows, &j);
    return 0;
}

/* ---------------------------------------------------------------- */
/* window geometry */

int ox_parse_auto_pad(const char *s) {
    if (!s || !*s || strcmp(s, "NOTSET") == 0) return OX_PAD_NOTSET;
    if (strcmp(s, "SAME_UPPER") == 0) return OX_PAD_SAME_UPPER;
    if (strcmp(s, "SAME_LOWER") == 0) return OX_PAD_SAME_LOWER;
    if (strcmp(s, "VALID") == 0) return OX_PAD_VALID;
    return -1;
}

/* Every step is checked: the attributes come from the model and may be
 * INT64_MAX (inference refuses those first; this stays safe on its own). */
int ox_window_axis(int64_t in, int64_t k, int64_t stride, int64_t dil, int auto_pad,
                   int ceil_mode, int64_t *pad_begin, int64_t *pad_end, int64_t *out) {
    if (k < 1 || stride < 1 || dil < 1 || in < 0) return -1;
    int64_t ek, o, total, span, start;
    if (!ox_muladd_i64(k - 1, dil, 1, &ek)) return -1;
    if (auto_pad == OX_PAD_SAME_UPPER || auto_pad == OX_PAD_SAME_LOWER) {
        o = in / stride + (in % stride != 0);
        /* (o - 1) * stride + ek - in, which stays below stride + ek */
        if (!ox_muladd_i64(o - 1, stride, ek, &total) || !ox_sub_i64(total, in, &total)) return -1;
        if (total < 0) total = 0;
        if (auto_pad == OX_PAD_SAME_UPPER) {
            *pad_begin = total / 2;
            *pad_end = total - total / 2;
        } else {
            *pad_end = total / 2;
            *pad_begin = total - total / 2;
        }
        *out = o;
        return 0;
    }
    if (auto_pad == OX_PAD_VALID) *pad_begin = *pad_end = 0;
    if (*pad_begin < 0 || *pad_end < 0) return -1;
    if (!ox_add_i64(in, *pad_begin, &span) || !ox_add_i64(span, *pad_end, &span) || span < ek)
        return -1;
    span -= ek;
    if (!ox_add_i64(ceil_mode ? span / stride + (span % stride != 0) : span / stride, 1, &o))
        return -1;
    /* a last window that would start inside the end padding is dropped */
    if (ceil_mode && o > 1 && (!ox_mul_i64(o - 1, stride, &start) || start >= in + *pad_begin)) o--;
    *out = o;
    return 0;
}
