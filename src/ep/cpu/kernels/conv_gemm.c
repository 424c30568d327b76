/* Convolution as GEMM with prepacked weights and a fused epilogue (see
 * conv_fast.h). Loop order per task (a block of output positions of one
 * image and group, and a range of weight row panels): for each KC-deep
 * slab the column block is packed once into NR-wide panels; each panel
 * (KC x NR, in L1) then meets every weight panel of the range (streamed
 * from L2). The last slab's tile gets the epilogue right after it is
 * stored, while it is still in L1. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "ep/cpu/kernels/conv_fast.h"
#include "ep/cpu/kernels/conv_tile_avx2.h"
#include "ep/cpu/kernels/conv_tile_avx512.h"
#include "ep/cpu/kernels/exp_fma_avx2.h"
#include "ep/cpu/kernels/activation_row.h"
#include "ep/cpu/kernels/elementwise.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define OX_CONV_X86 1
#endif

#define MR OX_CONV_MR
#define KC OX_CONV_KC

/* ---------------------------------------------------------------- */
/* activations and the epilogue */

/* The epilogue compiled once per variant: the activations' loops then
 * run on the variant's vector width. */
#define DEF_EPILOGUE(SUF, TARGET, FMA)                                                               \
    TARGET static void epilogue_##SUF(float *c, int64_t ldc, int64_t rows, int64_t cols,            \
                                      const float *bias, const float *z, int64_t ldz,               \
                                      const ox_act *act) {                                          \
        for (int64_t i = 0; i < rows; i++) {                                                        \
            float *cr = c + i * ldc;                                                                \
            const float bv = bias ? bias[i] : 0.0f;                                                 \
            /* the common cases in one pass over the row */                                         \
            if (act->kind == OX_ACT_RELU || act->kind == OX_ACT_NONE) {                             \
                const float lo = act->kind == OX_ACT_RELU ? 0.0f : -INFINITY;                       \
                if (z) {                                                                            \
                    const float *zr = z + i * ldz;                                                  \
                    for (int64_t x = 0; x < cols; x++) {                                            \
                        float v = cr[x] + bv + zr[x];                                               \
                        cr[x] = sel_f32(v < lo, lo, v);                                             \
                    }                                                                               \
                } else {                                                                            \
                    for (int64_t x = 0; x < cols; x++) {                                            \
                        float v = cr[x] + bv;                                                       \
                        cr[x] = sel_f32(v < lo, lo, v);                                             \
                    }                                                                               \
                }                                                                                   \
                continue;                                                                           \
            }                                                                                       \
            if (bias) {                                                                             \
                for (int64_t x = 0; x < cols; x++) cr[x] += bv;                                     \
            }                                                                                       \
            if (z) {                                                                                \
                const float *zr = z + i * ldz;                                                      \
                for (int64_t x = 0; x < cols; x++) cr[x] += zr[x];                                  \
            }                                                                                       \
            ox_act_row(act, cr, cols, FMA);                                                         \
        }                                                                                           \
    }

DEF_EPILOGUE(portable, , 0)
#ifdef OX_CONV_X86
DEF_EPILOGUE(avx2, __attribute__((target("avx2,fma"))), 1)
DEF_EPILOGUE(avx512, __attribute__((target("avx512f"))), 2)
#endif

void ox_conv_epilogue(float *c, int64_t ldc, int64_t rows, int64_t cols, const float *bias,
                      const float *z, int64_t ldz, const ox_act *act, ox_cpu_isa isa) {
#ifdef OX_CONV_X86
    if (isa == OX_ISA_AVX512) {
        epilogue_avx512(c, ldc, rows, cols, bias, z, ldz, act);
        return;
    }
    if (isa == OX_ISA_AVX2) {
        epilogue_avx2(c, ldc, rows, cols, bias, z, ldz, act);
        return;
    }
#endif
    (void)isa;
    epilogue_portable(c, ldc, rows, cols, bias, z, ldz, act);
}

/* ---------------------------------------------------------------- */
/* packing */

int ox_conv_pack_weights(const float *w, int64_t G, int64_t Mg, int64_t K, ox_conv_packed *out) {
    memset(out, 0, sizeof *out);
    int64_t Mp = (Mg + MR - 1) / MR * MR, n;
    if (!ox_mul_i64(G, Mp, &n) || !ox_mul_i64(n, K, &n) || n > (int64_t)(SIZE_MAX / 8)) return -1;
    size_t bytes = ((size_t)(n > 0 ? n : 1) * sizeof(float) + 63) / 64 * 64;
    float *d = aligned_alloc(64, bytes);
    if (!d) return -1;
    for (int64_t g = 0; g < G; g++) {
        const float *wg = w + g * Mg * K;
        float *dg = d + g * Mp * K;
        for (int64_t k0 = 0; k0 < K; k0 += KC) {
            int64_t kc = K - k0 < KC ? K - k0 : KC;
            float *slab = dg + k0 * Mp;
            for (int64_t p = 0; p < Mp; p += MR) {
                float *dst = slab + p * kc;
                for (int64_t i = 0; i < MR; i++) {
                    if (p + i < Mg) {
                        const float *src = wg + (p + i) * K + k0;
                        for (int64_t k = 0; k < kc; k++) dst[k * MR + i] = src[k];
                    } else {
                        for (int64_t k = 0; k < kc; k++) dst[k * MR + i] = 0.0f;
                    }
                }
            }
        }
    }
    out->G = G;
    out->Mg = Mg;
    out->K = K;
    out->Mp = Mp;
    out->data = d;
    return 0;
}

size_t ox_conv_packed_bytes(int64_t G, int64_t Mg, int64_t K) {
    int64_t Mp = (Mg + MR - 1) / MR * MR, n;
    if (G < 1 || K < 1 || !ox_mul_i64(G, Mp, &n) || !ox_mul_i64(n, K, &n) || n > (int64_t)(SIZE_MAX / 8))
        return 0;
    return (size_t)n * sizeof(float);
}

void ox_conv_packed_free(ox_conv_packed *p) {
    if (!p) return;
    free(p->data);
    p->data = NULL;
}

/* rows [0, kc) x columns [0, ncols) of src (row stride lds) into nr-wide
 * panels, k-major, zero columns past ncols; row k times scale[k] when
 * scale is given (an input scale, ox_conv_gemm_args.x_scale) */
static void pack_cols(const float *src, int64_t lds, int64_t kc, int64_t ncols, int nr, const float *scale,
                      float *dst) {
    /* row by row, each row's columns read in order: the order the
     * hardware prefetchers follow (panel by panel, a block of 256
     * columns read 128 bytes from each of kc rows in turn, kc streams at
     * once, and a 1x1 convolution on a 56x56 plane waited on them) */
    const int64_t whole = ncols / nr * nr;
    for (int64_t k = 0; k < kc; k++) {
        const float *s = src + k * lds;
        float *d = dst + k * nr;
        if (scale) {
            /* x * s as the Mul it replaces computes it: the same bits */
            const float f = scale[k];
            typedef float v8f __attribute__((vector_size(32)));
            for (int64_t q = 0; q < whole; q += nr)
                for (int i = 0; i < nr; i += 8) { /* nr: a multiple of 8 */
                    v8f t;
                    memcpy(&t, s + q + i, sizeof t);
                    t *= f;
                    memcpy(d + q * kc + i, &t, sizeof t);
                }
            for (int64_t q = whole; q < ncols; q++) d[whole * kc + q - whole] = s[q] * f;
        } else {
            for (int64_t q = 0; q < whole; q += nr) memcpy(d + q * kc, s + q, sizeof(float) * (size_t)nr);
            if (whole < ncols) memcpy(d + whole * kc, s + whole, sizeof(float) * (size_t)(ncols - whole));
        }
        if (whole < ncols) memset(d + whole * kc + ncols - whole, 0, sizeof(float) * (size_t)(nr - (ncols - whole)));
    }
}

/* ---------------------------------------------------------------- */
/* register tiles: C[rows x cols] (=|+=) A panel (kc x MR) x B panel
 * (kc x nr) */

typedef float v4f __attribute__((vector_size(16)));

static void tile_portable(int rows, int cols, int64_t kc, const float *restrict a,
                          const float *restrict b, float *c, int64_t ldc, int add,
                          const ox_tile_epilogue *e) {
    v4f acc[MR][4];
    for (int i = 0; i < MR; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = (v4f){0, 0, 0, 0};
    for (int64_t k = 0; k < kc; k++) {
        v4f bv[4];
        memcpy(bv, b, sizeof bv);
        for (int i = 0; i < MR; i++) {
            v4f av = (v4f){0, 0, 0, 0} + a[i];
            for (int j = 0; j < 4; j++) acc[i][j] += av * bv[j];
        }
        a += MR;
        b += 16;
    }
    for (int i = 0; i < rows; i++) {
        float t[16];
        memcpy(t, acc[i], sizeof t);
        float *cr = c + i * ldc;
        if (add)
            for (int x = 0; x < cols; x++) cr[x] += t[x];
        else
            for (int x = 0; x < cols; x++) cr[x] = t[x];
        if (e) {
            const float bv = e->bias ? e->bias[i] : 0.0f;
            const float *zr = e->z ? e->z + i * e->ldz : NULL;
            for (int x = 0; x < cols; x++) {
                float v = cr[x] + bv;
                if (zr) v += zr[x];
                if (e->act == OX_TILE_HARDSWISH) {
                    float h = v * (1.0f / 6.0f) + 0.5f;
                    h = sel_f32(h < 0.0f, 0.0f, h);
                    h = sel_f32(h > 1.0f, 1.0f, h);
                    cr[x] = v * h;
                    continue;
                }
                v = sel_f32(v < e->lo, e->lo, v);
                cr[x] = sel_f32(v > e->hi, e->hi, v);
            }
        }
    }
}

#ifdef OX_CONV_X86
/* Asks for the lines of C (to read when the tile adds to it, else to
 * write) and of the residual the tile's store will read, before its products: a row of either is a
 * plane apart from the next (P floats), a stride the hardware
 * prefetchers do not follow, and the loads otherwise wait on memory at
 * the end of the tile (measured on ResNet-50's 1x1 convolutions with a
 * residual: nearly half the tile's time). */
__attribute__((always_inline)) static inline void tile_prefetch_rows(const int rows, int width,
                                                                     const float *c, int64_t ldc,
                                                                     int add, const ox_tile_epilogue *e) {
    const float *z = e ? e->z : NULL;
    for (int i = 0; i < rows; i++)
        for (int x = 0; x < width; x += 16) {
            if (add) __builtin_prefetch(c + i * ldc + x, 0, 3);
            else __builtin_prefetch(c + i * ldc + x, 1, 3);
            if (z) __builtin_prefetch(z + i * e->ldz + x, 0, 3);
        }
}

__attribute__((target("avx2,fma"), always_inline)) static inline void
tile_avx2_r(const int rows, const int half, int cols, int64_t kc, const float *restrict a,
            const float *restrict b, float *c, int64_t ldc, int add, const ox_tile_epilogue *e) {
    __m256 lo[MR], hi[MR];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        if (i < rows) lo[i] = hi[i] = _mm256_setzero_ps();
    tile_prefetch_rows(rows, half ? 8 : 16, c, ldc, add, e);
    if (half) {
        /* at most 8 columns (a plane's ragged end: 7x7 = 3 panels and 1
         * column): the left half of the tile only */
        ox_tile_steps8_avx2(rows, kc, a, b, 16, lo);
    } else {
        for (int64_t k = 0; k < kc; k++) {
            ox_tile_step_avx2(rows, a, _mm256_loadu_ps(b), _mm256_loadu_ps(b + 8), lo, hi);
            a += MR;
            b += 16;
        }
    }
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(cols), lane);
    __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(cols - 8), lane);
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        if (i < rows) ox_tile_store_row_avx2(i, lo[i], hi[i], c + i * ldc, cols, m0, m1, add, e);
}

/* tile_avx2_r with the row count made a constant for each case */
__attribute__((target("avx2,fma"), always_inline)) static inline void
tile_avx2_rows(int rows, const int half, int cols, int64_t kc, const float *a, const float *b,
               float *c, int64_t ldc, int add, const ox_tile_epilogue *e) {
    OX_CONV_ROWS_CONST(rows, tile_avx2_r, half, cols, kc, a, b, c, ldc, add, e)
}

/* At most 8 columns take the half tile. */
__attribute__((target("avx2,fma"))) static void tile_avx2(int rows, int cols, int64_t kc,
                                                          const float *a, const float *b, float *c,
                                                          int64_t ldc, int add,
                                                          const ox_tile_epilogue *e) {
    if (cols <= 8) tile_avx2_rows(rows, 1, cols, kc, a, b, c, ldc, add, e);
    else tile_avx2_rows(rows, 0, cols, kc, a, b, c, ldc, add, e);
}

/* width: the columns computed, 32 (two vectors), 16 (a ragged end of at
 * most 16 columns) or 8 (at most 8, in half-width vectors: on cores
 * that split a 512-bit operation in two, half the work of 16) */
__attribute__((target("avx512f,avx2,fma"), always_inline)) static inline void
tile_avx512_r(const int rows, const int width, int cols, int64_t kc, const float *restrict a,
              const float *restrict b, float *c, int64_t ldc, int add, const ox_tile_epilogue *e) {
    __m512 lo[MR], hi[MR];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        if (i < rows) lo[i] = hi[i] = _mm512_setzero_ps();
    tile_prefetch_rows(rows, width, c, ldc, add, e);
    if (width == 8) {
        __m256 q[MR];
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++)
            if (i < rows) q[i] = _mm256_setzero_ps();
        ox_tile_steps8_avx2(rows, kc, a, b, 32, q);
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++)
            if (i < rows) lo[i] = _mm512_zextps256_ps512(q[i]);
    } else if (width == 16) {
        for (int64_t k = 0; k < kc; k++) {
            const __m512 b0 = _mm512_loadu_ps(b);
#pragma GCC unroll 6
            for (int i = 0; i < MR; i++)
                if (i < rows) lo[i] = _mm512_fmadd_ps(_mm512_set1_ps(a[i]), b0, lo[i]);
            a += MR;
            b += 32;
        }
    } else {
        for (int64_t k = 0; k < kc; k++) {
            ox_tile_step_avx512(rows, a, _mm512_loadu_ps(b), _mm512_loadu_ps(b + 16), lo, hi);
            a += MR;
            b += 32;
        }
    }
    __mmask16 m0, m1;
    ox_tile_masks_avx512(cols, &m0, &m1);
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        if (i < rows)
            ox_tile_store_row_avx512(i, lo[i], width == 32 ? hi[i] : lo[i], c + i * ldc, m0, m1, add, e);
}

/* tile_avx512_r with the row count made a constant for each case */
__attribute__((target("avx512f,avx2,fma"), always_inline)) static inline void
tile_avx512_rows(int rows, const int width, int cols, int64_t kc, const float *a, const float *b,
                 float *c, int64_t ldc, int add, const ox_tile_epilogue *e) {
    OX_CONV_ROWS_CONST(rows, tile_avx512_r, width, cols, kc, a, b, c, ldc, add, e)
}

/* The narrowest width that holds the columns; 17 to 24 columns (7x7's
 * ragged end: one panel and 17 columns) as 16 and the rest at 8, so a
 * 7x7 plane costs 56 columns instead of 64. */
__attribute__((target("avx512f,avx2,fma"))) static void tile_avx512(int rows, int cols, int64_t kc,
                                                               const float *a, const float *b,
                                                               float *c, int64_t ldc, int add,
                                                               const ox_tile_epilogue *e) {
    if (cols <= 8) {
        tile_avx512_rows(rows, 8, cols, kc, a, b, c, ldc, add, e);
    } else if (cols <= 16) {
        tile_avx512_rows(rows, 16, cols, kc, a, b, c, ldc, add, e);
    } else if (cols <= 24) {
        tile_avx512_rows(rows, 16, 16, kc, a, b, c, ldc, add, e);
        ox_tile_epilogue right;
        if (e) {
            right = *e;
            if (right.z) right.z += 16;
        }
        tile_avx512_rows(rows, 8, cols - 16, kc, a, b + 16, c + 16, ldc, add, e ? &right : NULL);
    } else {
        tile_avx512_rows(rows, 32, cols, kc, a, b, c, ldc, add, e);
    }
}
#endif

/* e: the clamp epilogue to apply while storing, or NULL */
typedef void (*tile_fn)(int rows, int cols, int64_t kc, const float *a, const float *b, float *c,
                        int64_t ldc, int add, const ox_tile_epilogue *e);

/* ---------------------------------------------------------------- */
/* driver */

/* Most columns in one block of one thread: a slab's packed block
 * (KC x 256 floats) stays in L2 while every weight panel meets it. */
#define NB 256

typedef struct cg_job {
    const ox_conv_gemm_args *a;
    const ox_stop *stop;
    ox_threadpool *pool; /* lends each task its packing buffer */
    tile_fn tile;
    int nr;
    int in_tile;   /* the tile applies the epilogue as it stores */
    float lo, hi;    /* the clamp's bounds */
    ox_tile_act act; /* or the activation instead of the clamp */
    /* tasks: images x groups x column blocks x ranges of weight panels;
     * the np column panels are dealt to nblocks blocks as evenly as
     * whole panels allow */
    int64_t np, nblocks, mchunks, chunk_panels;
    atomic_int failed;
} cg_job;

/* Columns [*p0, *p1) of column block blk. */
static void block_columns(const cg_job *j, int64_t blk, int64_t P, int64_t *p0, int64_t *p1) {
    *p0 = blk * j->np / j->nblocks * j->nr;
    int64_t e = (blk + 1) * j->np / j->nblocks * j->nr;
    *p1 = e < P ? e : P;
}

static void cg_tasks(void *arg, int64_t t0, int64_t t1) {
    cg_job *j = arg;
    const ox_conv_gemm_args *a = j->a;
    const ox_conv_packed *w = a->w;
    const int64_t G = w->G, Mg = w->Mg, K = w->K, P = a->P, M = G * Mg;
    const int64_t kmax = K < KC ? K : KC, nbp = (j->np + j->nblocks - 1) / j->nblocks * j->nr;
    size_t need = (size_t)(kmax * nbp);
    /* columns already packed by the caller need no buffer */
    float *scratch = a->x_packed ? NULL : ox_threadpool_block(j->pool, need * sizeof(float) + 64);
    if (!scratch && !a->x_packed) {
        atomic_store(&j->failed, 1);
        return;
    }
    const int64_t panels = w->Mp / MR, Pp = (P + j->nr - 1) / j->nr * j->nr;
    for (int64_t t = t0; t < t1; t++) {
        int64_t mc = t % j->mchunks, rest = t / j->mchunks;
        int64_t blk = rest % j->nblocks, ng = rest / j->nblocks;
        int64_t n = ng / G, grp = ng % G;
        int64_t p0, p1;
        block_columns(j, blk, P, &p0, &p1);
        const int64_t ncols = p1 - p0;
        int64_t q0 = mc * j->chunk_panels, q1 = q0 + j->chunk_panels < panels ? q0 + j->chunk_panels : panels;
        float *yg = a->y + (n * M + grp * Mg) * P;
        const float *zg = a->z ? a->z + (n * M + grp * Mg) * P : NULL;
        const float *bias = a->bias ? a->bias + grp * Mg : NULL;
        const float *wg = w->data + grp * w->Mp * K;
        for (int64_t k0 = 0; k0 < K; k0 += KC) {
            if (ox_stop_requested(j->stop)) goto done;
            int64_t kc = K - k0 < KC ? K - k0 : KC;
            const float *bp = scratch;
            if (a->x_packed) {
                bp = a->x + n * a->x_img + grp * a->x_grp + k0 * Pp + p0 * kc;
            } else if (!a->cols) {
                const float *src = a->x + n * a->x_img + grp * a->x_grp + k0 * P + p0;
                pack_cols(src, P, kc, ncols, j->nr, a->x_scale ? a->x_scale + n * a->x_scale_img + k0 : NULL,
                          scratch);
            } else {
                a->cols(a->cols_arg, n, grp, k0, kc, p0, p1, j->nr, scratch);
            }
            const float *ws = wg + k0 * w->Mp;
            int add = k0 > 0, last = k0 + kc >= K;
            for (int64_t q = 0; q < ncols; q += j->nr) {
                int cols = (int)(ncols - q < j->nr ? ncols - q : j->nr);
                for (int64_t pi = q0; pi < q1; pi++) {
                    int64_t p = pi * MR;
                    int rows = (int)(Mg - p < MR ? Mg - p : MR);
                    float *c = yg + p * P + p0 + q;
                    const int epi = last && (bias || zg || a->act.kind != OX_ACT_NONE);
                    ox_tile_epilogue e = {bias ? bias + p : NULL, zg ? zg + p * P + p0 + q : NULL, P,
                                          j->lo, j->hi, j->act};
                    j->tile(rows, cols, kc, ws + p * kc, bp + q * kc, c, P, add,
                            epi && j->in_tile ? &e : NULL);
                    if (epi && !j->in_tile)
                        ox_conv_epilogue(c, P, rows, cols, e.bias, e.z, P, &a->act, a->isa);
                }
            }
        }
    }
done:
    ox_threadpool_block_done(j->pool, scratch);
}

/* The cost of one column panel of `cols` columns in the variant's tile,
 * in units of 16-column vectors: the AVX-512 tile computes 8, 16, 24 or
 * 32 columns (an 8-column part at half a 16-column one's cost). */
static double panel_cost(int nr, int64_t cols) {
    if (nr == 32) return cols > 24 ? 2.0 : cols > 16 ? 1.5 : cols > 8 ? 1.0 : 0.5;
    return cols > 8 ? 1.0 : 0.5;
}

/* Time of the slowest of `threads` threads running `tasks` tasks of
 * the given costs as the pool deals them (ox_parallel_for): chunks of
 * ceil(tasks / (4 threads)) in contiguous shares, one per thread; the
 * thread free first takes its own share's next chunk, or once that is
 * done the next untaken one of the shares after it. */
static double makespan(const double *cost, int64_t tasks, int threads) {
    double load[64] = {0};
    int64_t next[64], end[64];
    if (threads > 64) threads = 64;
    const int64_t chunk = (tasks + 4 * threads - 1) / (4 * threads), chunks = (tasks + chunk - 1) / chunk;
    for (int p = 0; p < threads; p++) {
        next[p] = chunks * p / threads;
        end[p] = chunks * (p + 1) / threads;
    }
    for (;;) {
        int best = 0;
        for (int i = 1; i < threads; i++)
            if (load[i] < load[best]) best = i;
        int q = -1;
        for (int k = 0; k < threads && q < 0; k++)
            if (next[(best + k) % threads] < end[(best + k) % threads]) q = (best + k) % threads;
        if (q < 0) break;
        const int64_t c = next[q]++;
        for (int64_t u = c * chunk; u < (c + 1) * chunk && u < tasks; u++) load[best] += cost[u];
    }
    double m = 0;
    for (int i = 0; i < threads; i++)
        if (load[i] > m) m = load[i];
    return m;
}

/* Splits the product into tasks. One thread: column blocks of at most
 * NB columns, all weight panels in each. More threads: the split into
 * column blocks and ranges of weight panels whose slowest thread
 * finishes first, costing each task its tiles plus packing its columns
 * (as one more weight panel: each range of weight panels packs the same
 * columns again). Uneven blocks cost two threads dearly: ResNet-50's
 * 14x14 planes (196 columns) in blocks of 64, 64, 64 and 4 left one
 * thread 128 columns and the other 68. */
static void plan_tasks(cg_job *j, int threads, int64_t outer, int64_t P, int64_t panels, int64_t Mg) {
    j->np = (P + j->nr - 1) / j->nr;
    const int64_t per_block = NB / j->nr, min_blocks = (j->np + per_block - 1) / per_block;
    j->nblocks = min_blocks, j->mchunks = 1, j->chunk_panels = panels;
    if (threads <= 1 || outer >= 8 * (int64_t)threads) return;
    /* the candidates: up to 8 tasks per thread */
    const int64_t max_tasks = 8 * (int64_t)threads;
    double cost[8 * 64];
    if (threads > 64) return;
    double best = -1;
    for (int64_t nb = min_blocks; nb <= j->np && outer * nb <= max_tasks; nb++) {
        for (int64_t mc = 1; mc <= panels && outer * nb * mc <= max_tasks; mc++) {
            const int64_t cp = (panels + mc - 1) / mc, chunks = (panels + cp - 1) / cp;
            if (chunks != mc) continue; /* the same split as a smaller mc */
            cg_job t = *j;
            t.nblocks = nb;
            int64_t n = 0;
            for (int64_t o = 0; o < outer; o++)
                for (int64_t b = 0; b < nb; b++) {
                    int64_t p0, p1;
                    block_columns(&t, b, P, &p0, &p1);
                    double cols = 0;
                    for (int64_t q = p0; q < p1; q += j->nr)
                        cols += panel_cost(j->nr, p1 - q < j->nr ? p1 - q : j->nr);
                    for (int64_t m = 0; m < mc; m++) {
                        int64_t q0 = m * cp, q1 = q0 + cp < panels ? q0 + cp : panels;
                        /* the last panel's rows past Mg cost nothing */
                        double rows = (double)(q1 - q0);
                        if (q1 == panels) rows -= (double)(panels * MR - Mg) / MR;
                        cost[n++] = cols * (rows + 1.0);
                    }
                }
            double m = makespan(cost, n, threads);
            if (best < 0 || m < best * 0.999) {
                best = m;
                j->nblocks = nb, j->mchunks = mc, j->chunk_panels = cp;
            }
        }
    }
}

int ox_conv_gemm_panel_width(ox_cpu_isa isa) {
#ifdef OX_CONV_X86
    if (isa == OX_ISA_AVX512) return 32;
#endif
    (void)isa;
    return 16;
}

double ox_conv_gemm_lane_use(ox_cpu_isa isa, int64_t P) {
    const int nr = ox_conv_gemm_panel_width(isa);
    if (P < 1) return 1.0;
    const double units = (double)(P / nr) * panel_cost(nr, nr) + (P % nr ? panel_cost(nr, P % nr) : 0.0);
    return (double)P / (16.0 * units);
}

int ox_conv_gemm_run(ox_threadpool *pool, const ox_stop *stop, const ox_conv_gemm_args *a) {
    const ox_conv_packed *w = a->w;
    const int64_t G = w->G, Mg = w->Mg, P = a->P;
    if (a->N <= 0 || G * Mg <= 0 || P <= 0) return 0;
    if (w->K <= 0) {
        /* no input channels: the sums are empty */
        for (int64_t n = 0; n < a->N; n++) {
            float *yn = a->y + n * G * Mg * P;
            memset(yn, 0, sizeof(float) * (size_t)(G * Mg * P));
            ox_conv_epilogue(yn, P, G * Mg, P, a->bias, a->z ? a->z + n * G * Mg * P : NULL, P,
                             &a->act, a->isa);
        }
        return 0;
    }
    cg_job j = {.a = a, .stop = stop, .pool = pool, .tile = tile_portable, .nr = 16};
#ifdef OX_CONV_X86
    if (a->isa == OX_ISA_AVX512) {
        j.tile = tile_avx512;
        j.nr = 32;
    } else if (a->isa == OX_ISA_AVX2) {
        j.tile = tile_avx2;
    }
#endif
    /* the portable tile has no exp */
    j.in_tile = ox_tile_activation(&a->act, j.tile != tile_portable, &j.lo, &j.hi, &j.act);
    atomic_init(&j.failed, 0);
    plan_tasks(&j, ox_threadpool_size(pool), a->N * G, P, w->Mp / MR, Mg);
    ox_parallel_for(pool, a->N * G * j.nblocks * j.mchunks, 1, cg_tasks, &j);
    return atomic_load(&j.failed) ? -1 : 0;
}
