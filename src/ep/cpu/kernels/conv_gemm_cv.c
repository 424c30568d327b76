/* A convolution's GEMM with the output channels in the vector lanes and
 * the positions broadcast (see conv_fast.h), for small planes on AVX-512.
 *
 * The GEMM of conv_gemm.c holds positions in its lanes: a 7x7 plane's 49
 * positions fill 32 + 16 + 8 lanes' worth of tiles (56 computed for 49),
 * so ResNet-50's layer 4 ran at seven eighths of the tile's rate. Here a
 * register tile is 7 positions x 48 channels (21 sums of 16 lanes, three
 * weight vectors, one broadcast: 25 of the 32 registers): positions come
 * in sevens (49 = 7 x 7, 196 = 28 x 7) and channels in sixteens.
 *
 * Weights are packed once, transposed: slabs of CV_KC rows of K, in each
 * a block of 48 channels is kc rows of 48 floats (zero past M). A task
 * takes one channel block; per slab its weights (24 KiB) stay in L1
 * while every position tile meets them, the tiles' partial sums kept in
 * a positions x channels matrix YT. The output is then YT turned back
 * into planes, with the epilogue applied to them. */
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "ep/cpu/kernels/conv_fast.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define OX_CV_X86 1
#endif

#define CV_KC 128 /* rows of K per slab: a block's slab is 24 KiB */
#define CV_NB 48  /* channels per block: three vectors */
#define CV_R 7    /* positions per tile */
/* scratch floats a pass over several images may take (16 MiB) */
#define CV_PASS_FLOATS ((int64_t)1 << 22)

size_t ox_conv_cv_bytes(int64_t M, int64_t K) {
    int64_t Mp = (M + CV_NB - 1) / CV_NB * CV_NB, n;
    if (M < 1 || K < 1 || !ox_mul_i64(Mp, K, &n) || n > (int64_t)(SIZE_MAX / 8)) return 0;
    return (size_t)n * sizeof(float);
}

int ox_conv_cv_pack(const float *w, int64_t M, int64_t K, ox_conv_packed *out) {
    memset(out, 0, sizeof *out);
    size_t bytes = ox_conv_cv_bytes(M, K);
    if (!bytes) return -1;
    float *d = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!d) return -1;
    const int64_t Mp = (M + CV_NB - 1) / CV_NB * CV_NB;
    /* W's rows read in order, each written down its block's column (read
     * down W's columns instead, ResNet-50's session took 20 ms more) */
    for (int64_t m = 0; m < Mp; m++) {
        const int64_t b = m / CV_NB * CV_NB, c = m - b;
        for (int64_t k0 = 0; k0 < K; k0 += CV_KC) {
            const int64_t kc = K - k0 < CV_KC ? K - k0 : CV_KC;
            float *col = d + k0 * Mp + b * kc + c;
            for (int64_t k = 0; k < kc; k++) col[k * CV_NB] = m < M ? w[m * K + k0 + k] : 0.0f;
        }
    }
    *out = (ox_conv_packed){.G = 1, .Mg = M, .K = K, .Mp = Mp, .data = d};
    return 0;
}

int ox_conv_cv_suits(int64_t P, int64_t M, int64_t K) {
    /* K: with few products per output the turn back into planes and the
     * separate epilogue cost more than the idle lanes (MobileNetV3's 96 ->
     * 576 on 7x7: 0.135 ms by the GEMM, 0.140 this way; its 576 -> 96 0.142
     * against 0.121) */
    if (P < CV_R || P > 1024 || M < 32 || K < 256) return 0;
    /* a tenth or more of the GEMM's lanes idle, and the channels fill
     * their vectors about as well (the ragged last vector) */
    const double positions = ox_conv_gemm_lane_use(OX_ISA_AVX512, P);
    const double channels = (double)M / (double)((M + 15) / 16 * 16);
    return positions <= 0.9 && channels >= positions + 0.05;
}

#ifdef OX_CV_X86
/* R positions x NV vectors of channels over kc rows: w the block's slab
 * (kc rows of 48), b row k's positions at b + k * ldb; the sums added to
 * what yt holds when add (a later slab), then stored (row r of yt, ldy
 * apart, the block's channels). */
__attribute__((target("avx512f"), always_inline)) static inline void
cv_tile_r(const int R, const int NV, int64_t kc, const float *w, const float *b, int64_t ldb, float *yt,
          int64_t ldy, int add) {
    __m512 acc[CV_R][3];
#pragma GCC unroll 7
    for (int r = 0; r < CV_R; r++)
#pragma GCC unroll 3
        for (int v = 0; v < 3; v++)
            if (r < R && v < NV) acc[r][v] = _mm512_setzero_ps();
    for (int64_t k = 0; k < kc; k++) {
        __m512 wv[3];
#pragma GCC unroll 3
        for (int v = 0; v < 3; v++)
            if (v < NV) wv[v] = _mm512_loadu_ps(w + 16 * v);
#pragma GCC unroll 7
        for (int r = 0; r < CV_R; r++)
            if (r < R) {
                const __m512 x = _mm512_set1_ps(b[r]);
#pragma GCC unroll 3
                for (int v = 0; v < 3; v++)
                    if (v < NV) acc[r][v] = _mm512_fmadd_ps(x, wv[v], acc[r][v]);
            }
        w += CV_NB;
        b += ldb;
    }
#pragma GCC unroll 7
    for (int r = 0; r < CV_R; r++)
#pragma GCC unroll 3
        for (int v = 0; v < 3; v++)
            if (r < R && v < NV) {
                float *p = yt + r * ldy + 16 * v;
                if (add) acc[r][v] = _mm512_add_ps(acc[r][v], _mm512_loadu_ps(p));
                _mm512_storeu_ps(p, acc[r][v]);
            }
}

#define CV_TILE_NV(R, NV, ...)                                                                      \
    switch (NV) {                                                                                   \
    case 1: cv_tile_r(R, 1, __VA_ARGS__); break;                                                    \
    case 2: cv_tile_r(R, 2, __VA_ARGS__); break;                                                    \
    default: cv_tile_r(R, 3, __VA_ARGS__); break;                                                   \
    }

/* cv_tile_r with R and NV made constants */
__attribute__((target("avx512f"))) static void cv_tile(int R, int NV, int64_t kc, const float *w,
                                                       const float *b, int64_t ldb, float *yt, int64_t ldy,
                                                       int add) {
    switch (R) {
    case 1: CV_TILE_NV(1, NV, kc, w, b, ldb, yt, ldy, add) break;
    case 2: CV_TILE_NV(2, NV, kc, w, b, ldb, yt, ldy, add) break;
    case 3: CV_TILE_NV(3, NV, kc, w, b, ldb, yt, ldy, add) break;
    case 4: CV_TILE_NV(4, NV, kc, w, b, ldb, yt, ldy, add) break;
    case 5: CV_TILE_NV(5, NV, kc, w, b, ldb, yt, ldy, add) break;
    case 6: CV_TILE_NV(6, NV, kc, w, b, ldb, yt, ldy, add) break;
    default: CV_TILE_NV(7, NV, kc, w, b, ldb, yt, ldy, add) break;
    }
}

typedef struct cv_job {
    const ox_conv_gemm_args *a;
    const ox_stop *stop;
    int64_t n0;      /* the pass's first image */
    float *cols;     /* their column matrices, when built: image i's row k at cols + (i * K + k) * P */
    float *yt;       /* their P x Mp partial sums, image i's at yt + i * P * Mp */
    int64_t blocks;  /* channel blocks of 48 */
    int64_t halves;  /* position tiles split in this many ranges per block */
} cv_job;

/* Rows [r0, r1) of the pass's column matrices (image r / K, row r % K),
 * im2col or X times its input scale, in parallel: built on one thread it
 * was a tenth of a 3x3 512 -> 512 convolution on 7x7 at two threads. The
 * scaled X (a 1x1, one group) is made here, in the scratch the products
 * read, not as a copy of the whole input before the convolution. */
static void cv_rows(void *arg, int64_t r0, int64_t r1) {
    const cv_job *j = arg;
    const ox_conv_gemm_args *a = j->a;
    const int64_t P = a->P, K = a->w->K;
    while (r0 < r1) {
        const int64_t i = r0 / K, k0 = r0 - i * K, k1 = r1 - i * K < K ? r1 - i * K : K, n = j->n0 + i;
        float *restrict d = j->cols + i * K * P;
        if (a->cols) {
            a->cols(a->cols_arg, n, 0, k0, k1 - k0, 0, P, (int)P, d + k0 * P);
        } else {
            const float *restrict x = a->x + n * a->x_img, *restrict f = a->x_scale + n * a->x_scale_img;
            for (int64_t k = k0; k < k1; k++)
                for (int64_t p = 0; p < P; p++) d[k * P + p] = x[k * P + p] * f[k];
        }
        r0 += k1 - k0;
    }
}

/* Tasks [t0, t1): channel block t / halves, its share t % halves of the
 * position tiles, every slab. */
static void cv_blocks(void *arg, int64_t t0, int64_t t1) {
    const cv_job *j = arg;
    const ox_conv_gemm_args *a = j->a;
    const ox_conv_packed *w = a->w;
    const int64_t P = a->P, K = w->K, Mp = w->Mp, M = w->Mg;
    const int64_t all = (P + CV_R - 1) / CV_R;
    for (int64_t t = t0; t < t1; t++) {
        if (ox_stop_requested(j->stop)) return;
        const int64_t img = t / (j->blocks * j->halves), r = t - img * j->blocks * j->halves;
        const int64_t blk = r / j->halves, part = r % j->halves;
        const float *b = a->cols || a->x_scale ? j->cols + img * K * P : a->x + (j->n0 + img) * a->x_img;
        float *yt = j->yt + img * P * Mp;
        const int64_t c0 = blk * CV_NB;
        const int64_t left = M - c0, nv = left >= CV_NB ? 3 : (left + 15) / 16;
        const int64_t first = all * part / j->halves, tiles = all * (part + 1) / j->halves - first;
        for (int64_t k0 = 0; k0 < K; k0 += CV_KC) {
            const int64_t kc = K - k0 < CV_KC ? K - k0 : CV_KC;
            const float *ws = w->data + k0 * Mp + c0 * kc;
            /* the block's next slab, asked of memory a share per tile: in a
             * model the weights come from memory on every run (ResNet-50's
             * layer 4 reads 35 MiB), and the tiles would wait on them. Into
             * L2: into L1 it pushed out the slab in use (layer 4's nine
             * such convolutions 16.4 -> 18.0 ms; into L2 16.9 -> 16.0) */
            const int64_t k1 = k0 + kc, kc1 = K - k1 < CV_KC ? K - k1 : CV_KC;
            const char *next = k1 < K ? (const char *)(w->data + k1 * Mp + c0 * kc1) : NULL;
            const int64_t lines = kc1 * CV_NB * (int64_t)sizeof(float) / 64;
            for (int64_t i = 0; i < tiles; i++) {
                const int64_t p = (first + i) * CV_R;
                const int R = (int)(P - p < CV_R ? P - p : CV_R);
                if (next)
                    for (int64_t l = lines * i / tiles; l < lines * (i + 1) / tiles; l++)
                        _mm_prefetch(next + l * 64, _MM_HINT_T1);
                cv_tile(R, (int)nv, kc, ws, b + k0 * P + p, P, yt + p * Mp + c0, Mp, k0 > 0);
            }
        }
    }
}

typedef struct cv_out_job {
    const ox_conv_gemm_args *a;
    const float *yt; /* the pass's partial sums, image i's at yt + i * P * Mp */
    int64_t n0;      /* the pass's first image */
    int64_t groups;  /* groups of 16 output channels per image */
} cv_out_job;

/* r[i] = [a_i0 .. a_i15] becomes r[j] = [a_0j .. a_15j] */
__attribute__((target("avx512f"), always_inline)) static inline void transpose16(__m512 r[16]) {
    __m512 t[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {
        r[4 * i + 0] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int h = 0; h < 2; h++)
        for (int i = 0; i < 4; i++) {
            t[8 * h + i] = _mm512_shuffle_f32x4(r[8 * h + i], r[8 * h + 4 + i], 0x88);
            t[8 * h + 4 + i] = _mm512_shuffle_f32x4(r[8 * h + i], r[8 * h + 4 + i], 0xdd);
        }
    for (int i = 0; i < 8; i++) {
        r[i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0x88);
        r[8 + i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0xdd);
    }
}

/* Output channels [16 g0, 16 g1): YT's columns turned into planes
 * sixteen positions x sixteen channels at a time (a scalar copy took as
 * long as a 96 -> 576 convolution's products on 7x7), then the epilogue
 * over them. */
__attribute__((target("avx512f"))) static void cv_image_out(const cv_out_job *o, int64_t i, int64_t g0,
                                                            int64_t g1) {
    const ox_conv_gemm_args *a = o->a;
    const int64_t P = a->P, Mp = a->w->Mp, M = a->w->Mg, n = o->n0 + i;
    const float *yt = o->yt + i * P * Mp;
    float *y = a->y + n * M * P;
    const float *z = a->z ? a->z + n * M * P : NULL;
    const int64_t m0 = g0 * 16, m1 = g1 * 16 < M ? g1 * 16 : M;
    for (int64_t m = m0; m < m1; m += 16) {
        const int mc = (int)(m1 - m < 16 ? m1 - m : 16);
        for (int64_t p = 0; p < P; p += 16) {
            const int pc = (int)(P - p < 16 ? P - p : 16);
            const __mmask16 keep = (__mmask16)(pc == 16 ? 0xFFFF : (1u << pc) - 1);
            __m512 r[16];
            /* columns m .. m + 15 lie inside YT's Mp; those past the
             * channels computed are never stored */
            for (int c = 0; c < 16; c++)
                r[c] = c < pc ? _mm512_loadu_ps(yt + (p + c) * Mp + m) : _mm512_setzero_ps();
            transpose16(r);
            for (int c = 0; c < mc; c++) _mm512_mask_storeu_ps(y + (m + c) * P + p, keep, r[c]);
        }
    }
    if (m0 < m1 && (a->bias || z || a->act.kind != OX_ACT_NONE))
        ox_conv_epilogue(y + m0 * P, P, m1 - m0, P, a->bias ? a->bias + m0 : NULL, z ? z + m0 * P : NULL, P,
                         &a->act, a->isa);
}

/* Items [t0, t1): image t / groups, its output channels' group t % groups. */
static void cv_out(void *arg, int64_t t0, int64_t t1) {
    const cv_out_job *o = arg;
    while (t0 < t1) {
        const int64_t i = t0 / o->groups, g0 = t0 - i * o->groups;
        const int64_t g1 = t1 - i * o->groups < o->groups ? t1 - i * o->groups : o->groups;
        cv_image_out(o, i, g0, g1);
        t0 += g1 - g0;
    }
}
#endif

int ox_conv_cv_run(ox_threadpool *pool, const ox_stop *stop, const ox_conv_gemm_args *a) {
#ifndef OX_CV_X86
    (void)pool;
    (void)stop;
    (void)a;
    return 0;
#else
    const ox_conv_packed *w = a->w;
    if (a->isa < OX_ISA_AVX512 || w->G != 1 || a->x_packed || a->P < 1 || a->P > 1024) return 0;
    const int64_t P = a->P, K = w->K, M = w->Mg, Mp = w->Mp;
    /* per image the column matrix (im2col or scaled X, when there is
     * one) and YT; a pass takes as many images as fit CV_PASS_FLOATS, so
     * that its three phases are one dispatch each (per image, MobileNetV3's
     * batch of two ran slower at two threads than at one) */
    int64_t cols_n = 0, yt_n, img_n;
    if ((a->cols || a->x_scale) && !ox_mul_i64(K, P, &cols_n)) return 0;
    if (!ox_mul_i64(P, Mp, &yt_n) || cols_n > (int64_t)1 << 28 || yt_n > (int64_t)1 << 28) return 0;
    img_n = cols_n + yt_n;
    int64_t per_pass = CV_PASS_FLOATS / img_n;
    if (per_pass < 1) per_pass = 1;
    if (per_pass > a->N) per_pass = a->N;
    int lent = 0;
    float *mem = ox_threadpool_scratch(pool, (size_t)(img_n * per_pass) * sizeof(float), &lent);
    if (!mem) return -1;
    const int threads = ox_threadpool_size(pool);
    for (int64_t n0 = 0; n0 < a->N && !ox_stop_requested(stop); n0 += per_pass) {
        const int64_t n = a->N - n0 < per_pass ? a->N - n0 : per_pass;
        /* blocks of 48 channels deal unevenly to few threads (512
         * channels: 11 blocks, 6 and 5): each block's tiles in two ranges */
        cv_job j = {.a = a, .stop = stop, .n0 = n0, .cols = mem, .yt = mem + cols_n * per_pass,
                    .blocks = Mp / CV_NB, .halves = threads > 1 && P >= 2 * CV_R ? 2 : 1};
        if (a->cols || a->x_scale) ox_parallel_for(pool, n * K, 64, cv_rows, &j);
        ox_parallel_for(pool, n * j.blocks * j.halves, 1, cv_blocks, &j);
        cv_out_job o = {.a = a, .yt = j.yt, .n0 = n0, .groups = (M + 15) / 16};
        ox_parallel_for(pool, n * o.groups, 1, cv_out, &o);
    }
    ox_threadpool_scratch_done(pool, mem, lent);
    return 1;
#endif
}
