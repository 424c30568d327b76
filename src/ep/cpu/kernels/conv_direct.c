/* 2-D convolution without im2col (see conv_fast.h). The input is first
 * copied into zero-padded phase planes: for strides (sh, sw), padded row
 * y and column x of a channel go to phase (y % sh, x % sw) at row y / sh
 * and column x / sw (stride 1: one phase, the padded plane itself). Then
 * for output row oh and the 16 output columns from ow0, the column
 * matrix's row for input channel c and kernel tap (kh, kw) is simply 16
 * consecutive floats: phase ((kh dh) % sh, (kw dw) % sw) of channel c,
 * row oh + (kh dh) / sh, from column ow0 + (kw dw) / sw, one load pair.
 * The register tile is the im2col path's (6 output channels x 16
 * columns, or 32 on AVX-512 machines; packed weights), but the B side
 * needs no packing: with few
 * output channels (a 96 -> 24 channel 3x3 convolution reuses each packed
 * column only 4 times) building the column matrix cost about as much as
 * the products. Each phase row carries a column block's floats of slack
 * (16, or 32 with the AVX-512 tile), so the loads for a ragged last
 * column block stay inside it; those lanes are never
 * stored.
 *
 * The phase planes are made a band of output rows at a time, by the task
 * that computes the band, into its own buffer of about L2_BAND_BYTES:
 * the rows the band reads are then still in cache when its tiles load
 * them. (Padding every plane first, as this file once did, wrote a
 * network's first layer's whole input, 1.2 MiB for two 224x224 images,
 * before any tile read it back, and the tiles then waited on memory:
 * MobileNetV3's first convolution took 3 times as long in the model as
 * alone.) */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "ep/cpu/kernels/conv_fast.h"
#include "ep/cpu/kernels/conv_tile_avx2.h"
#include "ep/cpu/kernels/conv_tile_avx512.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define OX_DC_X86 1
#endif

#define MR OX_CONV_MR
#define KC OX_CONV_KC
#define NR 16
/* a band's phase rows may not exceed this many floats (256 MiB); larger
 * inputs take the im2col path, which needs no copy */
#define MAX_PADDED ((int64_t)1 << 26)
/* the size a band's phase rows aim at: well inside a core's L2 (1 MiB
 * on Zen 4, 1.25-2 MiB on recent Intel cores). Consecutive bands share
 * the rows the kernel's lower taps read, which are copied twice: at
 * 128 KiB a 32-channel 128x128 input (3x3 stride 2) made bands of one
 * output row, each copying two phase rows for one, and the convolution
 * took 0.62 ms; at 256 KiB, bands of four rows, 0.50 ms. */
#define L2_BAND_BYTES ((int64_t)256 << 10)

#ifdef OX_DC_X86
/* The even and odd floats of s[0, 2 nk) into e[0, nk) and o[0, nk), nk a
 * multiple of 8: each pair of loads split into both. */
__attribute__((target("avx2"))) static void split_avx2(const float *s, float *e, float *o, int64_t nk) {
    for (int64_t k = 0; k < nk; k += 8) {
        __m256 a = _mm256_loadu_ps(s + 2 * k), b = _mm256_loadu_ps(s + 2 * k + 8);
        /* evens (odds) of each 128-bit half, then the halves in order */
        __m256 ev = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
        __m256 od = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
        ev = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), _MM_SHUFFLE(3, 1, 2, 0)));
        od = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(od), _MM_SHUFFLE(3, 1, 2, 0)));
        _mm256_storeu_ps(e + k, ev);
        _mm256_storeu_ps(o + k, od);
    }
}
#endif

typedef struct dc_job {
    const ox_conv_direct_args *a;
    const ox_stop *stop;
    ox_threadpool *pool;       /* lends each task its band buffer */
    int64_t PW;                /* columns of one phase plane */
    int64_t ob, bands;         /* output rows per band, bands per image */
    int64_t BH;                /* phase rows one band reads */
    int64_t row, plane, chan;  /* floats per phase row, band of a phase, channel */
    int64_t *off;              /* per column-matrix row k: its offset in a band's planes */
    int64_t Cg, panels, chunk_panels, mchunks;
    atomic_int failed;
    int in_tile;   /* the tile applies the epilogue as it stores */
    int wide;      /* AVX-512: column blocks of 2 NR, in dc_tile_avx512 */
    float lo, hi;    /* the clamp's bounds */
    ox_tile_act act; /* or the activation instead of the clamp */
} dc_job;

/* Input row sr (IW floats) into its two column phases at stride 2 (d0,
 * d1: phases 0 and 1), phase f's column q holding input column
 * 2 q + f - pw: the even input columns fill one phase and the odd ones
 * the other, from one pass of loads. Every first layer and downsampling
 * convolution copies its input this way; splitting each phase from its
 * own pass read every row twice and took 15% of a 32 -> 16 channel 3x3
 * stride-2 convolution on 128x128 (D-FINE's). Only [0, PW) is written:
 * the slack past it stays as dc_tasks zeroed it. */
static void split_row2(const dc_job *j, const float *sr, float *d0, float *d1) {
    const ox_conv_direct_args *a = j->a;
    const int64_t PW = j->PW, IW = a->IW, fe = a->pw % 2;
    float *even = fe ? d1 : d0, *odd = fe ? d0 : d1;
    /* the phase columns of input columns 0 (even) and 1 (odd) */
    const int64_t qe = (a->pw - fe) / 2, qo = (a->pw - (1 - fe) + 1) / 2;
    const int64_t he = qe + (IW + 1) / 2 < PW ? qe + (IW + 1) / 2 : PW, ho = qo + IW / 2 < PW ? qo + IW / 2 : PW;
    memset(even, 0, sizeof(float) * (size_t)(qe < PW ? qe : PW));
    memset(odd, 0, sizeof(float) * (size_t)(qo < PW ? qo : PW));
    /* whole vectors of pairs: the loads end by input column 2 nk <= IW,
     * the stores inside [0, PW) */
    int64_t nk = IW / 2, room = PW - (qe > qo ? qe : qo);
    if (nk > room) nk = room;
    nk = nk > 0 ? nk / 8 * 8 : 0;
#ifdef OX_DC_X86
    split_avx2(sr, even + qe, odd + qo, nk);
#else
    nk = 0;
#endif
    for (int64_t q = qe + nk; q < he; q++) even[q] = sr[2 * (q - qe)];
    for (int64_t q = qo + nk; q < ho; q++) odd[q] = sr[2 * (q - qo) + 1];
    memset(even + he, 0, sizeof(float) * (size_t)(PW - he));
    memset(odd + ho, 0, sizeof(float) * (size_t)(PW - ho));
}

/* The phase rows [R0, R0 + BH) of the Cg channels of image n, group grp,
 * into buf (band layout: channel, phase, row); each row's [0, PW). */
static void pad_band(const dc_job *j, int64_t n, int64_t grp, int64_t R0, float *buf) {
    const ox_conv_direct_args *a = j->a;
    const int64_t sh = a->sh, sw = a->sw, G = a->w->G, PW = j->PW;
    for (int64_t c = 0; c < j->Cg; c++) {
        const float *s = a->x + ((n * G + grp) * j->Cg + c) * a->IH * a->IW;
        for (int64_t fy = 0; fy < sh; fy++) {
            float *dy = buf + c * j->chan + fy * sw * j->plane;
            for (int64_t r = 0; r < j->BH; r++) {
                const int64_t ih = (R0 + r) * sh + fy - a->ph;
                if (ih < 0 || ih >= a->IH) {
                    for (int64_t fx = 0; fx < sw; fx++)
                        memset(dy + fx * j->plane + r * j->row, 0, sizeof(float) * (size_t)PW);
                    continue;
                }
                const float *xr = s + ih * a->IW;
                if (sw == 2) {
                    split_row2(j, xr, dy + r * j->row, dy + j->plane + r * j->row);
                    continue;
                }
                for (int64_t fx = 0; fx < sw; fx++) {
                    float *dr = dy + fx * j->plane + r * j->row;
                    /* phase columns q read input column q * sw + fx - pw:
                     * those in [lo, hi) lie inside the input */
                    int64_t lo = a->pw - fx <= 0 ? 0 : (a->pw - fx + sw - 1) / sw;
                    int64_t hi = a->IW + a->pw - fx <= 0 ? 0 : (a->IW + a->pw - fx - 1) / sw + 1;
                    if (hi > PW) hi = PW;
                    if (lo > hi) lo = hi;
                    const float *sr = xr + lo * sw + fx - a->pw;
                    memset(dr, 0, sizeof(float) * (size_t)lo);
                    if (sw == 1)
                        memcpy(dr + lo, sr, sizeof(float) * (size_t)(hi - lo));
                    else
                        for (int64_t q = 0; q < hi - lo; q++) dr[lo + q] = sr[q * sw];
                    memset(dr + hi, 0, sizeof(float) * (size_t)(PW - hi));
                }
            }
        }
    }
}

#ifdef OX_DC_X86
/* One 6 x 16 tile over every column-matrix row: weights from the packed
 * panel (slab by slab), columns from the padded planes. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
dc_tile_avx2_r(const int rows, int cols, const float *w_panel0, int64_t Mp, int64_t K, int64_t pi,
               const float *base, const int64_t *off, float *c, int64_t ldc, const ox_tile_epilogue *e) {
    __m256 lo[MR], hi[MR];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        if (i < rows) lo[i] = hi[i] = _mm256_setzero_ps();
    for (int64_t k0 = 0; k0 < K; k0 += KC) {
        const int64_t kc = K - k0 < KC ? K - k0 : KC;
        const float *a = w_panel0 + k0 * Mp + pi * MR * kc;
        const int64_t *o = off + k0;
        for (int64_t k = 0; k < kc; k++) {
            const float *b = base + o[k];
            ox_tile_step_avx2(rows, a, _mm256_loadu_ps(b), _mm256_loadu_ps(b + 8), lo, hi);
            a += MR;
        }
    }
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(cols), lane);
    __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(cols - 8), lane);
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        if (i < rows) ox_tile_store_row_avx2(i, lo[i], hi[i], c + i * ldc, cols, m0, m1, 0, e);
}

__attribute__((target("avx2,fma"))) static void dc_tile_avx2(int rows, int cols, const float *w_panel0,
                                                             int64_t Mp, int64_t K, int64_t pi,
                                                             const float *base, const int64_t *off,
                                                             float *c, int64_t ldc,
                                                             const ox_tile_epilogue *e) {
    OX_CONV_ROWS_CONST(rows, dc_tile_avx2_r, cols, w_panel0, Mp, K, pi, base, off, c, ldc, e)
}

/* The same tile 32 columns wide in AVX-512 vectors (AVX-512 machines,
 * for a block of more than 16 columns): the same sums in the same order
 * per output, so the AVX2 tile's bits, with half the instructions per
 * product (a 32 -> 32 channel 3x3 convolution on 64x64: 0.750 -> 0.705
 * ms on AMD Zen 4, ONNX Runtime 0.709). Its second vector of columns
 * reads the band from b1 floats past the first and stores c1 past it:
 * 16 for 32 consecutive columns, or (dc_tasks' two-row tiles) the next
 * output row's phase row and output row, for planes of at most 16
 * columns, which the 16-column AVX2 tile ran at 62% of the core's peak
 * (a 32 -> 48 channel 3x3 stride-2 convolution to 16x16: 0.097 -> 0.088
 * ms at best, ONNX Runtime 0.088-0.103). */
__attribute__((target("avx512f,avx2,fma"), always_inline)) static inline void
dc_tile_avx512_r(const int rows, __mmask16 m0, __mmask16 m1, int64_t b1, int64_t c1, const float *w_panel0,
                 int64_t Mp, int64_t K, int64_t pi, const float *base, const int64_t *off, float *c, int64_t ldc,
                 const ox_tile_epilogue *e) {
    __m512 lo[MR], hi[MR];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        if (i < rows) lo[i] = hi[i] = _mm512_setzero_ps();
    for (int64_t k0 = 0; k0 < K; k0 += KC) {
        const int64_t kc = K - k0 < KC ? K - k0 : KC;
        const float *a = w_panel0 + k0 * Mp + pi * MR * kc;
        const int64_t *o = off + k0;
        for (int64_t k = 0; k < kc; k++) {
            const float *b = base + o[k];
            ox_tile_step_avx512(rows, a, _mm512_loadu_ps(b), _mm512_loadu_ps(b + b1), lo, hi);
            a += MR;
        }
    }
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        if (i < rows) ox_tile_store_split_avx512(i, lo[i], hi[i], c + i * ldc, c1, m0, m1, 0, e);
}

__attribute__((target("avx512f,avx2,fma"))) static void
dc_tile_avx512(int rows, __mmask16 m0, __mmask16 m1, int64_t b1, int64_t c1, const float *w_panel0, int64_t Mp,
               int64_t K, int64_t pi, const float *base, const int64_t *off, float *c, int64_t ldc,
               const ox_tile_epilogue *e) {
    OX_CONV_ROWS_CONST(rows, dc_tile_avx512_r, m0, m1, b1, c1, w_panel0, Mp, K, pi, base, off, c, ldc, e)
}

/* Tasks: (image, group, band of output rows, range of weight panels);
 * each pads its band's phase rows, then computes the band's tiles. */
static void dc_tasks(void *arg, int64_t t0, int64_t t1) {
    dc_job *j = arg;
    const ox_conv_direct_args *a = j->a;
    const ox_conv_packed *w = a->w;
    const int64_t Mg = w->Mg, K = w->K, G = w->G, P = a->OH * a->OW;
    const size_t bytes = ((size_t)(j->Cg * j->chan) * sizeof(float) + 63) / 64 * 64;
    float *buf = ox_threadpool_block(j->pool, bytes);
    if (!buf) {
        atomic_store(&j->failed, 1);
        return;
    }
    /* the phase rows' slack past PW, which pad_band never writes: a
     * ragged column block's lanes read it and are not stored */
    memset(buf, 0, bytes);
    for (int64_t t = t0; t < t1; t++) {
        if (ox_stop_requested(j->stop)) break;
        int64_t mc = t % j->mchunks, rest = t / j->mchunks;
        int64_t band = rest % j->bands, ng = rest / j->bands, n = ng / G, grp = ng % G;
        int64_t q0 = mc * j->chunk_panels, q1 = q0 + j->chunk_panels < j->panels ? q0 + j->chunk_panels : j->panels;
        const int64_t oh0 = band * j->ob, oh1 = oh0 + j->ob < a->OH ? oh0 + j->ob : a->OH;
        pad_band(j, n, grp, oh0, buf);
        const float *wg = w->data + grp * w->Mp * K;
        const float *bias = a->bias ? a->bias + grp * Mg : NULL;
        for (int64_t oh = oh0; oh < oh1;) {
            /* a plane at most 16 wide, on AVX-512: output rows oh and oh
             * + 1 in one tile, consecutive in Y */
            const int two = j->wide && a->OW <= NR && oh + 1 < oh1;
            float *yg = a->y + (n * G + grp) * Mg * P + oh * a->OW;
            const float *zg = a->z ? a->z + (n * G + grp) * Mg * P + oh * a->OW : NULL;
            const int64_t step = j->wide ? 2 * NR : NR;
            for (int64_t ow0 = 0; ow0 < a->OW; ow0 += step) {
                int cols = (int)(a->OW - ow0 < step ? a->OW - ow0 : step);
                const float *base = buf + (oh - oh0) * j->row + ow0;
                for (int64_t pi = q0; pi < q1; pi++) {
                    int rows = (int)(Mg - pi * MR < MR ? Mg - pi * MR : MR);
                    float *c = yg + pi * MR * P + ow0;
                    const int epi = bias || zg || a->act.kind != OX_ACT_NONE;
                    ox_tile_epilogue e = {bias ? bias + pi * MR : NULL, zg ? zg + pi * MR * P + ow0 : NULL, P,
                                          j->lo, j->hi, j->act};
                    const ox_tile_epilogue *te = epi && j->in_tile ? &e : NULL;
                    if (two) {
                        const __mmask16 m = (__mmask16)((1u << cols) - 1);
                        dc_tile_avx512(rows, m, m, j->row, a->OW, wg, w->Mp, K, pi, base, j->off, c, P, te);
                    } else if (cols > NR) {
                        __mmask16 m0, m1;
                        ox_tile_masks_avx512(cols, &m0, &m1);
                        dc_tile_avx512(rows, m0, m1, NR, NR, wg, w->Mp, K, pi, base, j->off, c, P, te);
                    } else {
                        dc_tile_avx2(rows, cols, wg, w->Mp, K, pi, base, j->off, c, P, te);
                    }
                    if (epi && !j->in_tile)
                        ox_conv_epilogue(c, P, rows, two ? 2 * cols : cols, e.bias, e.z, P, &a->act, a->isa);
                }
            }
            oh += two ? 2 : 1;
        }
    }
    ox_threadpool_block_done(j->pool, buf);
}
#endif

int ox_conv_direct_f32(ox_threadpool *pool, const ox_stop *stop, const ox_conv_direct_args *a) {
#ifndef OX_DC_X86
    (void)pool;
    (void)stop;
    (void)a;
    return 0;
#else
    const ox_conv_packed *w = a->w;
    if (a->isa < OX_ISA_AVX2 || a->KH < 1 || a->KW < 1 || w->K != w->K / (a->KH * a->KW) * a->KH * a->KW)
        return 0;
    if (a->N <= 0 || a->OH <= 0 || a->OW <= 0 || w->Mg <= 0 || w->K <= 0 || a->ph < 0 || a->pw < 0)
        return 0;
    const int64_t Cg = w->K / (a->KH * a->KW);
    dc_job j = {.a = a, .stop = stop, .pool = pool, .Cg = Cg};
    j.in_tile = ox_tile_activation(&a->act, 1, &j.lo, &j.hi, &j.act);
    /* the padded columns every output reads, split into phases, plus the
     * slack of a whole column block past the end of each phase row */
    int64_t span_w, eh, ew, per_row, total;
    if (a->sh < 1 || a->sw < 1 || a->sh > 8 || a->sw > 8 || !ox_muladd_i64(a->KH - 1, a->dh, 1, &eh) ||
        !ox_muladd_i64(a->KW - 1, a->dw, 1, &ew) || !ox_muladd_i64(a->OW - 1, a->sw, ew, &span_w))
        return 0;
    if (span_w < a->pw + a->IW) span_w = a->pw + a->IW;
    j.PW = span_w / a->sw + (span_w % a->sw != 0);
    if (j.PW > MAX_PADDED) return 0;
    j.wide = a->isa >= OX_ISA_AVX512;
    j.row = (j.PW + (j.wide ? 2 : 1) * NR + 7) / 8 * 8;
    /* a band of ob output rows reads ob phase rows and those the kernel's
     * lower taps add; ob makes the band about L2_BAND_BYTES (at least one
     * row), and small enough to give every thread tasks */
    const int64_t extra = (eh - 1) / a->sh;
    if (!ox_mul_i64(Cg * a->sh * a->sw, j.row, &per_row) || per_row > MAX_PADDED) return 0;
    j.ob = L2_BAND_BYTES / (int64_t)sizeof(float) / per_row - extra;
    if (j.ob < 1) j.ob = 1;
    if (j.ob > a->OH) j.ob = a->OH;
    int threads = ox_threadpool_size(pool);
    while (threads > 1 && j.ob > 1 && a->N * w->G * ((a->OH + j.ob - 1) / j.ob) < 4 * threads)
        j.ob = (j.ob + 1) / 2;
    j.bands = (a->OH + j.ob - 1) / j.ob;
    j.BH = j.ob + extra;
    if (!ox_mul_i64(j.BH, j.row, &j.plane) || !ox_mul_i64(j.plane, a->sh * a->sw, &j.chan) ||
        !ox_mul_i64(Cg, j.chan, &total) || total > MAX_PADDED)
        return 0;
    j.off = malloc(sizeof(int64_t) * (size_t)w->K);
    if (!j.off) return -1;
    for (int64_t k = 0; k < w->K; k++) {
        int64_t c = k / (a->KH * a->KW), t = k % (a->KH * a->KW);
        int64_t y = (t / a->KW) * a->dh, x = (t % a->KW) * a->dw;
        j.off[k] = c * j.chan + ((y % a->sh) * a->sw + x % a->sw) * j.plane + (y / a->sh) * j.row + x / a->sw;
    }
    /* enough tasks for every thread: bands first, then ranges of panels */
    j.panels = w->Mp / MR;
    int64_t tasks = a->N * w->G * j.bands;
    j.mchunks = 1;
    if (threads > 1 && tasks < 4 * threads) {
        j.mchunks = (4 * threads + tasks - 1) / tasks;
        if (j.mchunks > j.panels) j.mchunks = j.panels;
    }
    j.chunk_panels = (j.panels + j.mchunks - 1) / j.mchunks;
    j.mchunks = (j.panels + j.chunk_panels - 1) / j.chunk_panels;
    atomic_init(&j.failed, 0);
    ox_parallel_for(pool, tasks * j.mchunks, 1, dc_tasks, &j);
    free(j.off);
    return atomic_load(&j.failed) ? -1 : 1;
#endif
}
