/* The register tiles of the channel-blocked convolution (conv_nchwc.h):
 * np output positions by nb blocks of 16 output channels. For each input
 * channel, every position's value is broadcast once and meets each
 * block's weight vector; the sums stay in registers over the whole
 * reduction (kernel positions x input channels), start from the bias and
 * leave through the epilogue: + z, then the activation (the clamps,
 * HardSwish, Sigmoid and SiLU in the tile, the others over the stored
 * run by ox_act_bias_rows). Each output takes the same chain of
 * multiply-adds, in the same order, in every variant. The variants
 * repeat the walk over the reduction's units on purpose: moved into
 * shared inline helpers, it cost the AVX-512 tile a tenth of its speed
 * (GCC then kept fewer sums in registers; 168 -> 150 GFLOP/s on a
 * 1024 -> 256 1x1), so a change here needs bench/blocked_conv_bench. */
#include <math.h>

#include "ep/cpu/kernels/conv_fast.h"
#include "ep/cpu/kernels/conv_nchwc.h"

/* The offsets of positions [q, q + np) in x (one division per tile: a
 * division per position cost a 64-channel 1x1 tile a fifth of its time). */
static inline void tile_offsets(const nchwc_conv *cv, int64_t q, int np, int64_t *off) {
    int64_t oh = q / cv->OW, ow = q - oh * cv->OW;
    for (int p = 0; p < np; p++) {
        off[p] = oh * cv->sh * cv->x_row + ow * cv->sw * cv->x_pos;
        if (++ow == cv->OW) ow = 0, oh++;
    }
}

/* The tile epilogue's activation, or -1 when the stored run takes it. */
static inline int tile_act(const nchwc_conv *cv, int exp, ox_tile_epilogue *e) {
    e->bias = e->z = NULL;
    e->ldz = 0;
    return ox_tile_activation(&cv->act, exp, &e->lo, &e->hi, &e->act) ? 0 : -1;
}

/* The activation the tile left to the stored runs. */
static void finish_runs(const nchwc_conv *cv, float *y, int64_t q, int np, int64_t mb, int nb, ox_cpu_isa isa) {
    for (int j = 0; j < nb; j++)
        ox_act_bias_rows(&cv->act, y + ((mb + j) * cv->OP + q) * NCHWC_B, 1, np * NCHWC_B, np * NCHWC_B, NULL,
                         isa);
}

void ox_nchwc_tile_portable(const nchwc_conv *cv, const float *x, const float *z, float *y, int64_t q,
                            int np, int64_t mb, int64_t u0, int64_t u1) {
    int64_t off[NCHWC_NP];
    float acc[NCHWC_NP][NCHWC_B];
    tile_offsets(cv, q, np, off);
    float *yo = y + (mb * cv->OP + q) * NCHWC_B;
    for (int p = 0; p < np; p++)
        for (int l = 0; l < NCHWC_B; l++) acc[p][l] = u0 ? yo[p * NCHWC_B + l] : cv->bias[mb * NCHWC_B + l];
    const float *wm = cv->w + mb * cv->KK * cv->C * NCHWC_B;
    /* unit u is kernel position kk, channels from c0: stepped, not
     * divided (a division per unit cost a deep 1x1 tile 5%) */
    int64_t kk = u0 / cv->Cb, c0 = (u0 - kk * cv->Cb) * NCHWC_B;
    for (int64_t u = u0; u < u1; u++, c0 += NCHWC_B) {
        if (c0 >= cv->C) c0 = 0, kk++;
        const float *xb = x + (c0 / NCHWC_B) * cv->x_cb + cv->k_off[kk];
        const float *wb = wm + (kk * cv->C + c0) * NCHWC_B;
        const int64_t cn = cv->C - c0 < NCHWC_B ? cv->C - c0 : NCHWC_B;
        for (int64_t c = 0; c < cn; c++)
            for (int p = 0; p < np; p++) {
                const float v = xb[off[p] + c * cv->x_c];
                for (int l = 0; l < NCHWC_B; l++) acc[p][l] = fmaf(v, wb[c * NCHWC_B + l], acc[p][l]);
            }
    }
    if (u1 < cv->KK * cv->Cb) { /* partial sums, for the next slab */
        for (int p = 0; p < np; p++)
            for (int l = 0; l < NCHWC_B; l++) yo[p * NCHWC_B + l] = acc[p][l];
        return;
    }
    ox_tile_epilogue e;
    const int in_tile = tile_act(cv, 0, &e) == 0;
    const float *zo = z ? z + (mb * cv->OP + q) * NCHWC_B : NULL;
    for (int p = 0; p < np; p++)
        for (int l = 0; l < NCHWC_B; l++) {
            float v = acc[p][l];
            if (zo) v += zo[p * NCHWC_B + l];
            if (in_tile && e.act == OX_TILE_CLAMP) {
                v = v < e.lo ? e.lo : v; /* NaN passes, as in the vector tiles */
                v = v > e.hi ? e.hi : v;
            } else if (in_tile && e.act == OX_TILE_HARDSWISH) {
                float h = v * (1.0f / 6.0f) + 0.5f;
                h = h < 0.0f ? 0.0f : h > 1.0f ? 1.0f : h;
                v = v * h;
            }
            yo[p * NCHWC_B + l] = v;
        }
    if (!in_tile) finish_runs(cv, y, q, np, mb, 1, OX_ISA_PORTABLE);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include "ep/cpu/kernels/conv_tile_avx2.h"
#include "ep/cpu/kernels/conv_tile_avx512.h"

/* cn input channels (x_c apart) of one unit into the NP x NB sums. */
__attribute__((target("avx512f,avx2,fma"), always_inline)) static inline void
tile_steps_avx512(const int NP, const int NB, const int64_t cn, const int64_t xc, const float *const *xp,
                  const float *wb, __m512 (*acc)[NCHWC_NB]) {
    /* one channel per iteration: unrolled further (-O3), the loop ran
     * out of registers and at two thirds of the speed */
#pragma GCC unroll 1
    for (int64_t c = 0; c < cn; c++) {
        __m512 w[NCHWC_NB];
        #pragma GCC unroll 4
        for (int j = 0; j < NB; j++) w[j] = _mm512_loadu_ps(wb + (c * NB + j) * NCHWC_B);
        #pragma GCC unroll 6
        for (int p = 0; p < NP; p++) {
            const __m512 v = _mm512_set1_ps(xp[p][c * xc]);
            #pragma GCC unroll 4
            for (int j = 0; j < NB; j++) acc[p][j] = _mm512_fmadd_ps(v, w[j], acc[p][j]);
        }
    }
}

/* NP positions x NB blocks, constants once inlined. */
__attribute__((target("avx512f,avx2,fma"), always_inline)) static inline void
tile_avx512(const int NP, const int NB, const nchwc_conv *cv, const float *x, const float *z, float *y,
            int64_t q, int64_t mb, int64_t u0, int64_t u1, const char *pf, int64_t pfn) {
    int64_t off[NCHWC_NP];
    __m512 acc[NCHWC_NP][NCHWC_NB];
    tile_offsets(cv, q, NP, off);
    #pragma GCC unroll 4
    for (int j = 0; j < NB; j++) {
        const float *yo = y + ((mb + j) * cv->OP + q) * NCHWC_B;
        const __m512 b = _mm512_loadu_ps(cv->bias + (mb + j) * NCHWC_B);
        #pragma GCC unroll 6
        for (int p = 0; p < NP; p++) acc[p][j] = u0 ? _mm512_loadu_ps(yo + p * NCHWC_B) : b;
    }
    const float *wm = cv->w + mb * cv->KK * cv->C * NCHWC_B;
    const int64_t xc = cv->x_c;
    /* unit u is kernel position kk, channels from c0: stepped, not
     * divided (a division per unit cost a deep 1x1 tile 5%) */
    int64_t kk = u0 / cv->Cb, c0 = (u0 - kk * cv->Cb) * NCHWC_B;
    for (int64_t u = u0; u < u1; u++, c0 += NCHWC_B) {
        if (c0 >= cv->C) c0 = 0, kk++;
        for (int64_t k = 0; k < pfn; k++, pf += 64) __builtin_prefetch(pf, 0, 2);
        const float *xb = x + (c0 / NCHWC_B) * cv->x_cb + cv->k_off[kk];
        const float *wb = wm + (kk * cv->C + c0) * NB * NCHWC_B;
        const int64_t cn = cv->C - c0 < NCHWC_B ? cv->C - c0 : NCHWC_B;
        const float *xp[NCHWC_NP];
        #pragma GCC unroll 6
        for (int p = 0; p < NP; p++) xp[p] = xb + off[p];
        if (cn == NCHWC_B && xc == 1) /* a whole block of blocked input: constant strides */
            tile_steps_avx512(NP, NB, NCHWC_B, 1, xp, wb, acc);
        else
            tile_steps_avx512(NP, NB, cn, xc, xp, wb, acc);
    }
    if (u1 < cv->KK * cv->Cb) { /* partial sums, for the next slab */
        #pragma GCC unroll 4
        for (int j = 0; j < NB; j++)
            #pragma GCC unroll 6
            for (int p = 0; p < NP; p++) _mm512_storeu_ps(y + ((mb + j) * cv->OP + q + p) * NCHWC_B, acc[p][j]);
        return;
    }
    ox_tile_epilogue e;
    const int in_tile = tile_act(cv, 1, &e) == 0, clamp = in_tile && e.act == OX_TILE_CLAMP;
    #pragma GCC unroll 4
    for (int j = 0; j < NB; j++) {
        float *yo = y + ((mb + j) * cv->OP + q) * NCHWC_B;
        const float *zo = z ? z + ((mb + j) * cv->OP + q) * NCHWC_B : NULL;
        #pragma GCC unroll 6
        for (int p = 0; p < NP; p++) {
            __m512 v = acc[p][j];
            if (zo) v = _mm512_add_ps(v, _mm512_loadu_ps(zo + p * NCHWC_B));
            /* the clamp as ox_tile_act_avx512 makes it, without its switch */
            if (clamp) v = _mm512_min_ps(_mm512_set1_ps(e.hi), _mm512_max_ps(_mm512_set1_ps(e.lo), v));
            else if (in_tile) v = ox_tile_act_avx512(&e, v);
            _mm512_storeu_ps(yo + p * NCHWC_B, v);
        }
    }
    if (!in_tile) finish_runs(cv, y, q, NP, mb, NB, OX_ISA_AVX512);
}

#define TILE512(NP, NB) tile_avx512(NP, NB, cv, x, z, y, q, mb, u0, u1, pf, pfn)
#define TILE512_NB(NP)                                                                          \
    switch (nb) {                                                                               \
    case 1: TILE512(NP, 1); break;                                                              \
    case 2: TILE512(NP, 2); break;                                                              \
    case 3: TILE512(NP, 3); break;                                                              \
    default: TILE512(NP, 4); break;                                                             \
    }
#define TILE512_NP                                                                              \
    switch (np) {                                                                               \
    case 1: TILE512_NB(1); break;                                                               \
    case 2: TILE512_NB(2); break;                                                               \
    case 3: TILE512_NB(3); break;                                                               \
    case 4: TILE512_NB(4); break;                                                               \
    case 5: TILE512_NB(5); break;                                                               \
    default: TILE512_NB(6); break;                                                              \
    }

/* Two functions, not one with a test: with the prefetch's code beside
 * it, GCC laid out the tile without one a tenth slower. */
__attribute__((target("avx512f,avx2,fma"))) void ox_nchwc_tile_avx512(const nchwc_conv *cv, const float *x,
                                                                     const float *z, float *y, int64_t q,
                                                                     int np, int64_t mb, int nb, int64_t u0,
                                                                     int64_t u1) {
    const char *const pf = NULL;
    const int64_t pfn = 0;
    TILE512_NP
}

__attribute__((target("avx512f,avx2,fma"))) void ox_nchwc_tile_avx512_pf(const nchwc_conv *cv, const float *x,
                                                                        const float *z, float *y, int64_t q,
                                                                        int np, int64_t mb, int nb, int64_t u0,
                                                                        int64_t u1, const char *pf, int64_t pfn) {
    TILE512_NP
}

/* NP positions x one block, each position's 16 lanes in two vectors. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
tile_avx2(const int NP, const nchwc_conv *cv, const float *x, const float *z, float *y, int64_t q, int64_t mb,
          int64_t u0, int64_t u1) {
    int64_t off[NCHWC_NP];
    __m256 lo[NCHWC_NP], hi[NCHWC_NP];
    tile_offsets(cv, q, NP, off);
    float *yo = y + (mb * cv->OP + q) * NCHWC_B;
    const __m256 b0 = _mm256_loadu_ps(cv->bias + mb * NCHWC_B), b1 = _mm256_loadu_ps(cv->bias + mb * NCHWC_B + 8);
    #pragma GCC unroll 6
    for (int p = 0; p < NP; p++) {
        lo[p] = u0 ? _mm256_loadu_ps(yo + p * NCHWC_B) : b0;
        hi[p] = u0 ? _mm256_loadu_ps(yo + p * NCHWC_B + 8) : b1;
    }
    const float *wm = cv->w + mb * cv->KK * cv->C * NCHWC_B;
    const int64_t xc = cv->x_c;
    /* unit u is kernel position kk, channels from c0: stepped, not
     * divided (a division per unit cost a deep 1x1 tile 5%) */
    int64_t kk = u0 / cv->Cb, c0 = (u0 - kk * cv->Cb) * NCHWC_B;
    for (int64_t u = u0; u < u1; u++, c0 += NCHWC_B) {
        if (c0 >= cv->C) c0 = 0, kk++;
        const float *xb = x + (c0 / NCHWC_B) * cv->x_cb + cv->k_off[kk];
        const float *wb = wm + (kk * cv->C + c0) * NCHWC_B;
        const int64_t cn = cv->C - c0 < NCHWC_B ? cv->C - c0 : NCHWC_B;
        const float *xp[NCHWC_NP];
        #pragma GCC unroll 6
        for (int p = 0; p < NP; p++) xp[p] = xb + off[p];
        for (int64_t c = 0; c < cn; c++) {
            const __m256 w0 = _mm256_loadu_ps(wb + c * NCHWC_B), w1 = _mm256_loadu_ps(wb + c * NCHWC_B + 8);
            #pragma GCC unroll 6
            for (int p = 0; p < NP; p++) {
                const __m256 v = _mm256_broadcast_ss(xp[p] + c * xc);
                lo[p] = _mm256_fmadd_ps(v, w0, lo[p]);
                hi[p] = _mm256_fmadd_ps(v, w1, hi[p]);
            }
        }
    }
    if (u1 < cv->KK * cv->Cb) { /* partial sums, for the next slab */
        #pragma GCC unroll 6
        for (int p = 0; p < NP; p++) {
            _mm256_storeu_ps(yo + p * NCHWC_B, lo[p]);
            _mm256_storeu_ps(yo + p * NCHWC_B + 8, hi[p]);
        }
        return;
    }
    ox_tile_epilogue e;
    const int in_tile = tile_act(cv, 1, &e) == 0;
    const float *zo = z ? z + (mb * cv->OP + q) * NCHWC_B : NULL;
    #pragma GCC unroll 6
    for (int p = 0; p < NP; p++) {
        __m256 v0 = lo[p], v1 = hi[p];
        if (zo) {
            v0 = _mm256_add_ps(v0, _mm256_loadu_ps(zo + p * NCHWC_B));
            v1 = _mm256_add_ps(v1, _mm256_loadu_ps(zo + p * NCHWC_B + 8));
        }
        if (in_tile) v0 = ox_tile_act_avx2(&e, v0), v1 = ox_tile_act_avx2(&e, v1);
        _mm256_storeu_ps(yo + p * NCHWC_B, v0);
        _mm256_storeu_ps(yo + p * NCHWC_B + 8, v1);
    }
    if (!in_tile) finish_runs(cv, y, q, NP, mb, 1, OX_ISA_AVX2);
}

__attribute__((target("avx2,fma"))) void ox_nchwc_tile_avx2(const nchwc_conv *cv, const float *x, const float *z,
                                                           float *y, int64_t q, int np, int64_t mb, int64_t u0,
                                                           int64_t u1) {
    switch (np) {
    case 1: tile_avx2(1, cv, x, z, y, q, mb, u0, u1); break;
    case 2: tile_avx2(2, cv, x, z, y, q, mb, u0, u1); break;
    case 3: tile_avx2(3, cv, x, z, y, q, mb, u0, u1); break;
    case 4: tile_avx2(4, cv, x, z, y, q, mb, u0, u1); break;
    case 5: tile_avx2(5, cv, x, z, y, q, mb, u0, u1); break;
    default: tile_avx2(6, cv, x, z, y, q, mb, u0, u1); break;
    }
}
#endif
