/* Depthwise convolution eight channels at a time (see conv_fast.h). On
 * a 7x7 or 14x14 plane the per-plane kernel of conv_depthwise.c spends
 * most of its time around the arithmetic (phase rows, a vector mostly
 * past the row end, the set-up per plane), and on large planes it was
 * measured 1.5 to 2 times slower than this one too. Here a block of eight
 * channels is first laid out channel-innermost in a zero-padded tile (the
 * padded plane, each position holding the eight channels' values; rows
 * turned with 8x8 in-register transposes), so that one vector holds one
 * position of eight channels: each kernel tap is one load and one
 * multiply-add per four output positions, whatever the plane's width.
 * The bias and a clamp or HardSwish are applied in registers; the
 * results are turned back into the planes row by row. AVX2, and on
 * AVX-512 machines blocks of sixteen channels (two transposes of eight)
 * for kernels of 16 taps or more; multiplier 1 only. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "ep/cpu/kernels/conv_fast.h"

#include "ep/cpu/kernels/transpose8.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define OX_DWC_X86 1
#endif

#define CB 8 /* channels per block: one AVX2 vector */
/* the padded tile may not exceed this many floats (8 MiB) */
#define DWC_MAX_TILE ((int64_t)1 << 21)
/* the widest kernel row dwc_step_row takes */
#define DWC_MAX_KW 5

typedef struct dwc_job {
    const ox_dw_args *a;
    const ox_stop *stop;
    ox_threadpool *pool; /* lends each task its tile */
    int64_t PH, PW, blocks; /* tile rows and columns, channel blocks per image */
    int cbw;                /* channels per block: 8 (AVX2) or 16 (AVX-512) */
    int64_t slack;          /* floats past the tile that a last step may read */
    atomic_int failed;
} dwc_job;

#ifdef OX_DWC_X86
/* Rows of len floats of nc channels (channel c's row at src + c *
 * stride) into channel-innermost positions ps floats apart: dst[i * ps +
 * c], eight positions at a time through transpose8, lanes of absent
 * channels zero. The ragged end is loaded masked and stored as whole
 * positions: the positions from len up to the next multiple of eight are
 * written as zeros, so dst must have room for them (a per-position store
 * loop there became a memcpy call per row, an eighth of a 7x7 plane's
 * time). */
__attribute__((target("avx2,fma"), always_inline)) static inline void
to_channel_inner8(const float *src, int64_t stride, int nc, int64_t len, float *dst, int64_t ps) {
    int64_t i = 0;
    for (; i + 8 <= len; i += 8) ox_planes_to_positions8(src + i, stride, nc, dst + i * ps, ps);
    if (i < len) {
        const __m256i m = ox_lanes_below((int)(len - i));
        __m256 r[8];
        for (int c = 0; c < CB; c++)
            r[c] = c < nc ? _mm256_maskload_ps(src + c * stride + i, m) : _mm256_setzero_ps();
        ox_transpose8(r);
        for (int q = 0; q < 8; q++) _mm256_storeu_ps(dst + (i + q) * ps, r[q]);
    }
}

/* The same for a block of cbw (8 or 16) channels, eight at a time. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
to_channel_inner(const float *src, int64_t stride, int nc, int64_t len, float *dst, int cbw) {
    for (int h = 0; h < cbw; h += CB)
        to_channel_inner8(src + h * stride, stride, nc - h < 0 ? 0 : nc - h < CB ? nc - h : CB, len, dst + h, cbw);
}

/* The in-register epilogue of a block's sums: bias holds the block's
 * biases, one per lane, zero past its channels. */
typedef struct dwc_epi {
    const float *bias;
    float lo, hi;
    int in_reg, hswish, has_bias;
} dwc_epi;

/* The arithmetic of a block at one vector width: VT holds one position
 * of W channels (W the block's channels). OPS names the intrinsics:
 * setzero, loadu, storeu, fmadd, add, mul, min, max, set1.
 *
 * dwc_finish: the sums of NP positions into r8 (channel-innermost), with
 * the bias and a clamp or HardSwish when in_reg.
 *
 * dwc_step: NP output positions of one row (tile row pointer tr at the
 * first one's window), all taps.
 *
 * dwc_step_row: dwc_step for a kernel row of KW taps at stride S and
 * unit dilation, both constants: each input position of the window row
 * is loaded once and feeds every output position that reads it
 * (position q, tap kw read q * S + kw), where loading per tap read every
 * position KW times and the sums the compiler kept in registers across
 * taps spilled to the stack. Each sum still adds its taps in the order of
 * dwc_step (kh, then kw ascending), so the bits are the same. 8 sums, KW
 * weights and one input take at most 14 vector registers.
 *
 * dwc_row: the steps of output row oh into r8: eight positions per step
 * (eight independent sums: four left the multiply-adds waiting on each
 * other's latency), a ragged end of at most four by a four-position
 * step; a last step past the row end reads the tile's slack (or the next
 * row) and is not stored. Called with xs and kx constant for unit
 * dilation and strides 1 and 2: the eight loads of a tap then address by
 * immediate offsets, where runtime offsets took a register each and
 * spilled the loop's pointers to the stack (about 1.5x the time per
 * tap). KW > 0 (3 or 5, a constant; unit dilation): the steps of
 * dwc_step_row at stride xs / W; 0: dwc_step's, any kernel row.
 *
 * dwc_rows: output row oh, with the constants of the common shapes. */
#define DEF_DWC(SUF, VT, W, TARGET, SETZERO, LOADU, STOREU, FMADD, ADD, MUL, MIN, MAX, SET1)          \
    TARGET __attribute__((always_inline)) static inline void dwc_finish_##SUF(VT s[8], const dwc_epi *e, \
                                                                              float *r8, const int NP) { \
        const VT sixth = SET1(1.0f / 6.0f), half = SET1(0.5f), zero = SETZERO(), one = SET1(1.0f);     \
        const VT bias = LOADU(e->bias), lo = SET1(e->lo), hi = SET1(e->hi);                            \
        _Pragma("GCC unroll 8") for (int q = 0; q < NP; q++) {                                         \
            VT v = s[q];                                                                               \
            if (e->in_reg) {                                                                           \
                /* as ox_conv_epilogue: the bias, then the activation */                              \
                if (e->has_bias) v = ADD(v, bias);                                                     \
                if (e->hswish) {                                                                       \
                    VT h = ADD(MUL(v, sixth), half);                                                   \
                    v = MUL(v, MIN(one, MAX(zero, h)));                                                \
                } else {                                                                               \
                    v = MIN(hi, MAX(lo, v));                                                           \
                }                                                                                      \
            }                                                                                          \
            STOREU(r8 + q * W, v);                                                                     \
        }                                                                                              \
    }                                                                                                  \
    TARGET __attribute__((always_inline)) static inline void dwc_step_##SUF(                          \
        const float *tr, int64_t PW, const ox_dw_args *a, const float *w8, int64_t xs, int64_t kx,     \
        const dwc_epi *e, float *r8, const int NP) {                                                   \
        VT s[8];                                                                                       \
        _Pragma("GCC unroll 8") for (int q = 0; q < NP; q++) s[q] = SETZERO();                         \
        for (int64_t kh = 0; kh < a->KH; kh++) {                                                       \
            const float *row = tr + kh * a->dh * PW * W;                                               \
            const float *wr = w8 + kh * a->KW * W;                                                     \
            for (int64_t kw = 0; kw < a->KW; kw++) {                                                   \
                const VT wv = LOADU(wr + kw * W);                                                      \
                const float *p = row + kw * kx;                                                        \
                _Pragma("GCC unroll 8") for (int q = 0; q < NP; q++) s[q] = FMADD(LOADU(p + q * xs), wv, s[q]); \
            }                                                                                          \
        }                                                                                              \
        dwc_finish_##SUF(s, e, r8, NP);                                                                \
    }                                                                                                  \
    TARGET __attribute__((always_inline)) static inline void dwc_step_row_##SUF(                      \
        const float *tr, int64_t PW, const ox_dw_args *a, const float *w8, const int S, const int KW,  \
        const dwc_epi *e, float *r8, const int NP) {                                                   \
        VT s[8];                                                                                       \
        _Pragma("GCC unroll 8") for (int q = 0; q < NP; q++) s[q] = SETZERO();                         \
        for (int64_t kh = 0; kh < a->KH; kh++) {                                                       \
            const float *row = tr + kh * a->dh * PW * W;                                               \
            VT wv[DWC_MAX_KW];                                                                         \
            _Pragma("GCC unroll 8") for (int kw = 0; kw < KW; kw++) wv[kw] = LOADU(w8 + (kh * KW + kw) * W); \
            _Pragma("GCC unroll 32") for (int i = 0; i < (NP - 1) * S + KW; i++) {                     \
                const VT v = LOADU(row + i * W);                                                       \
                _Pragma("GCC unroll 8") for (int kw = 0; kw < KW; kw++) {                              \
                    const int d = i - kw;                                                              \
                    if (d >= 0 && d % S == 0 && d / S < NP) s[d / S] = FMADD(v, wv[kw], s[d / S]);     \
                }                                                                                      \
            }                                                                                          \
        }                                                                                              \
        dwc_finish_##SUF(s, e, r8, NP);                                                                \
    }                                                                                                  \
    TARGET __attribute__((always_inline)) static inline void dwc_row_##SUF(                           \
        const float *t, int64_t oh, int64_t PW, const ox_dw_args *a, const float *w8, const int64_t xs, \
        const int64_t kx, const int KW, const dwc_epi *e, float *r8) {                                 \
        for (int64_t ow = 0; ow < a->OW; ow += 8) {                                                    \
            const float *tr = t + (oh * a->sh * PW + ow * a->sw) * W;                                  \
            /* eight positions, or four for a ragged end of at most four */                          \
            if (ow + 4 < a->OW) {                                                                      \
                if (KW) dwc_step_row_##SUF(tr, PW, a, w8, (int)(xs / W), KW, e, r8 + ow * W, 8);       \
                else dwc_step_##SUF(tr, PW, a, w8, xs, kx, e, r8 + ow * W, 8);                         \
            } else {                                                                                   \
                if (KW) dwc_step_row_##SUF(tr, PW, a, w8, (int)(xs / W), KW, e, r8 + ow * W, 4);       \
                else dwc_step_##SUF(tr, PW, a, w8, xs, kx, e, r8 + ow * W, 4);                         \
            }                                                                                          \
        }                                                                                              \
    }                                                                                                  \
    TARGET static void dwc_rows_##SUF(const float *t, int64_t oh, int64_t PW, const ox_dw_args *a,     \
                                      const float *w8, const dwc_epi *e, float *r8) {                  \
        const int64_t xs = a->sw * W, kx = a->dw * W;                                                  \
        if (kx == W && xs == W && a->KW == 3)                                                          \
            dwc_row_##SUF(t, oh, PW, a, w8, W, W, 3, e, r8);                                           \
        else if (kx == W && xs == W && a->KW == 5)                                                     \
            dwc_row_##SUF(t, oh, PW, a, w8, W, W, 5, e, r8);                                           \
        else if (kx == W && xs == 2 * W && a->KW == 3)                                                 \
            dwc_row_##SUF(t, oh, PW, a, w8, 2 * W, W, 3, e, r8);                                       \
        else if (kx == W && xs == 2 * W && a->KW == 5)                                                 \
            dwc_row_##SUF(t, oh, PW, a, w8, 2 * W, W, 5, e, r8);                                       \
        else if (xs == W && kx == W)                                                                   \
            dwc_row_##SUF(t, oh, PW, a, w8, W, W, 0, e, r8);                                           \
        else if (xs == 2 * W && kx == W)                                                               \
            dwc_row_##SUF(t, oh, PW, a, w8, 2 * W, W, 0, e, r8);                                       \
        else                                                                                           \
            dwc_row_##SUF(t, oh, PW, a, w8, xs, kx, 0, e, r8);                                         \
    }

DEF_DWC(avx2, __m256, 8, __attribute__((target("avx2,fma"))), _mm256_setzero_ps, _mm256_loadu_ps,
        _mm256_storeu_ps, _mm256_fmadd_ps, _mm256_add_ps, _mm256_mul_ps, _mm256_min_ps, _mm256_max_ps,
        _mm256_set1_ps)
DEF_DWC(avx512, __m512, 16, __attribute__((target("avx512f,avx2,fma"))), _mm512_setzero_ps, _mm512_loadu_ps,
        _mm512_storeu_ps, _mm512_fmadd_ps, _mm512_add_ps, _mm512_mul_ps, _mm512_min_ps, _mm512_max_ps,
        _mm512_set1_ps)

/* One block: channels [c0, c0 + nc) of image n (nc at most the block
 * width j->cbw). t: the tile, w8: the block's weights tap-major, r8: one
 * output row, channel-innermost. The bias and a clamp or HardSwish are
 * applied to the sums while they are in registers (in_reg), each
 * channel's bias one lane; any other epilogue runs over the planes
 * afterwards. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
dwc_block_at(const dwc_job *j, int64_t n, int64_t c0, int nc, float *t, float *w8, float *r8, const int cbw) {
    const ox_dw_args *a = j->a;
    const int64_t PH = j->PH, PW = j->PW, taps = a->KH * a->KW, plane = a->OH * a->OW;
    const float *x0 = a->x + (n * a->C + c0) * a->IH * a->IW;
    /* the input columns and rows inside the tile; only the rest, the
     * padding, is zeroed (zeroing the whole tile first wrote 400 KiB per
     * block of a 112x112 plane, as much time as the arithmetic) */
    const int64_t lead = a->pw < PW ? a->pw : PW;
    const int64_t cols = a->IW < PW - lead ? a->IW : PW - lead;
    const int64_t r0 = a->ph < PH ? a->ph : PH, r1 = a->IH < PH - r0 ? r0 + a->IH : PH;
    memset(t, 0, sizeof(float) * (size_t)(r0 * PW * cbw));
    for (int64_t py = r0; py < r1; py++) {
        float *tr = t + py * PW * cbw;
        memset(tr, 0, sizeof(float) * (size_t)(lead * cbw));
        memset(tr + (lead + cols) * cbw, 0, sizeof(float) * (size_t)((PW - lead - cols) * cbw));
        /* the zeros to_channel_inner writes past the row's columns land on
         * its right padding, on rows below (written after it) or on the
         * slack (7 positions at least) */
        if (cols > 0) to_channel_inner(x0 + (py - r0) * a->IW, a->IH * a->IW, nc, cols, tr + lead * cbw, cbw);
    }
    memset(t + r1 * PW * cbw, 0, sizeof(float) * (size_t)((PH - r1) * PW * cbw + j->slack));
    to_channel_inner(a->w + c0 * taps, taps, nc, taps, w8, cbw);
    float lo = 0.0f, hi = 0.0f;
    ox_tile_act kind = OX_TILE_CLAMP;
    /* a clamp or HardSwish; other activations run over the planes after */
    int in_reg = !a->z && ox_tile_activation(&a->act, 0, &lo, &hi, &kind);
    /* each channel's bias one lane, zero past the block's channels */
    float bias[2 * CB] = {0};
    if (a->bias) memcpy(bias, a->bias + c0, sizeof(float) * (size_t)nc);
    const dwc_epi e = {bias, lo, hi, in_reg, kind == OX_TILE_HARDSWISH, a->bias != NULL};
    for (int64_t oh = 0; oh < a->OH; oh++) {
        if (ox_stop_requested(j->stop)) return;
        if (cbw == 2 * CB)
            dwc_rows_avx512(t, oh, PW, a, w8, &e, r8);
        else
            dwc_rows_avx2(t, oh, PW, a, w8, &e, r8);
        /* the row back into the planes: eight positions of eight channels
         * at a time */
        float *y0 = a->y + (n * a->C + c0) * plane + oh * a->OW;
        for (int h = 0; h < nc; h += CB) {
            const int nh = nc - h < CB ? nc - h : CB;
            float *yh = y0 + h * plane;
            int64_t o = 0;
            for (; o + 8 <= a->OW; o += 8) ox_positions_to_planes8(r8 + o * cbw + h, cbw, nh, yh + o, plane);
            if (o < a->OW && oh * a->OW + o + 8 <= plane) {
                /* a ragged end whose whole vectors stay inside the plane: the
                 * lanes past the row land on the rows after it, which are
                 * written later (AMD's masked stores are slow) */
                ox_positions_to_planes8(r8 + o * cbw + h, cbw, nh, yh + o, plane);
                o = a->OW;
            }
            for (; o < a->OW; o++)
                for (int c = 0; c < nh; c++) yh[c * plane + o] = r8[o * cbw + h + c];
        }
    }
    for (int c = 0; c < nc && !in_reg; c++) {
        int64_t m = c0 + c;
        float *yp = a->y + (n * a->C + m) * plane;
        const float *bias_m = a->bias ? a->bias + m : NULL;
        if (bias_m || a->z || a->act.kind != OX_ACT_NONE)
            /* one bias for the whole plane: the plane is handled as one row */
            ox_conv_epilogue(yp, plane, 1, plane, bias_m, a->z ? a->z + (n * a->C + m) * plane : NULL,
                             plane, &a->act, a->isa);
    }
}

/* dwc_block_at with its width a constant: as a variable, the 3x3
 * layers of eight channels took 5-10% longer */
__attribute__((target("avx2,fma"))) static void dwc_block(const dwc_job *j, int64_t n, int64_t c0, int nc,
                                                          float *t, float *w8, float *r8) {
    if (j->cbw == 2 * CB) dwc_block_at(j, n, c0, nc, t, w8, r8, 2 * CB);
    else dwc_block_at(j, n, c0, nc, t, w8, r8, CB);
}

static void dwc_tasks(void *arg, int64_t t0, int64_t t1) {
    dwc_job *j = arg;
    const ox_dw_args *a = j->a;
    const int cbw = j->cbw;
    size_t tile = (size_t)(j->PH * j->PW * cbw + j->slack), w = (size_t)((a->KH * a->KW + 7) / 8 * 8 * cbw),
           row = (size_t)((a->OW + 7) / 8 * 8 * cbw);
    float *buf = ox_threadpool_block(j->pool, (tile + w + row) * sizeof(float));
    if (!buf) {
        atomic_store(&j->failed, 1);
        return;
    }
    for (int64_t t = t0; t < t1; t++) {
        int64_t n = t / j->blocks, c0 = (t % j->blocks) * cbw;
        int nc = (int)(a->C - c0 < cbw ? a->C - c0 : cbw);
        dwc_block(j, n, c0, nc, buf, buf + tile, buf + tile + w);
    }
    ox_threadpool_block_done(j->pool, buf);
}
#endif

#ifdef OX_DWC_X86
/* ox_dw_tile16_rows on an AVX-512 machine */
__attribute__((target("avx512f,avx2,fma"))) static void
tile16_rows(const ox_dw_args *a, const float *tile, int64_t PW, const float *w16, const float *bias16,
            int64_t oh0, int64_t oh1, float *r8) {
    const int cbw = 2 * CB;
    const int64_t plane = a->OH * a->OW;
    const int nc = (int)a->C;
    float lo = 0.0f, hi = 0.0f;
    ox_tile_act kind = OX_TILE_CLAMP;
    int in_reg = !a->z && ox_tile_activation(&a->act, 0, &lo, &hi, &kind);
    const dwc_epi e = {bias16, lo, hi, in_reg, kind == OX_TILE_HARDSWISH, a->bias != NULL};
    for (int64_t oh = oh0; oh < oh1; oh++) {
        dwc_rows_avx512(tile, oh - oh0, PW, a, w16, &e, r8);
        float *y0 = a->y + oh * a->OW;
        for (int h = 0; h < nc; h += CB) {
            const int nh = nc - h < CB ? nc - h : CB;
            float *yh = y0 + h * plane;
            int64_t o = 0;
            for (; o + 8 <= a->OW; o += 8) ox_positions_to_planes8(r8 + o * cbw + h, cbw, nh, yh + o, plane);
            for (; o < a->OW; o++)
                for (int c = 0; c < nh; c++) yh[c * plane + o] = r8[o * cbw + h + c];
        }
    }
    for (int c = 0; c < nc && !in_reg; c++) {
        const float *bias_c = a->bias ? a->bias + c : NULL;
        float *yp = a->y + c * plane + oh0 * a->OW;
        const int64_t n = (oh1 - oh0) * a->OW;
        if (bias_c || a->z || a->act.kind != OX_ACT_NONE)
            ox_conv_epilogue(yp, n, 1, n, bias_c, a->z ? a->z + c * plane + oh0 * a->OW : NULL, n, &a->act, a->isa);
    }
}
#endif

int ox_dw_tile16_rows(const ox_dw_args *a, const float *tile, int64_t PW, const float *w16, const float *bias16,
                      int64_t oh0, int64_t oh1, float *r8) {
#ifndef OX_DWC_X86
    (void)a;
    (void)tile;
    (void)PW;
    (void)w16;
    (void)bias16;
    (void)oh0;
    (void)oh1;
    (void)r8;
    return 0;
#else
    if (a->isa < OX_ISA_AVX512 || a->mult != 1 || a->C < 1 || a->C > 2 * CB || a->N != 1) return 0;
    tile16_rows(a, tile, PW, w16, bias16, oh0, oh1, r8);
    return 1;
#endif
}

int ox_conv_depthwise_blocked_f32(ox_threadpool *pool, const ox_stop *stop, const ox_dw_args *a) {
#ifndef OX_DWC_X86
    (void)pool;
    (void)stop;
    (void)a;
    return 0;
#else
    if (a->isa < OX_ISA_AVX2 || a->mult != 1 || a->ph < 0 || a->pw < 0) return 0;
    /* sixteen channels per block on AVX-512 for kernels of 16 taps or
     * more: half the multiply-adds, the same transposes (MobileNetV3's
     * 5x5 layers took 15-25% less time; its 3x3 ones, where the
     * transposes weigh more, 5-20% more) */
    const int wide = a->isa == OX_ISA_AVX512 && a->KH * a->KW >= 16;
    dwc_job j = {.a = a, .stop = stop, .pool = pool, .cbw = wide ? 2 * CB : CB};
    /* the padded extent the outputs read; the plane sizes are small here,
     * but the kernel extent and strides are attributes: checked, and
     * strides past 8 (no model's) left to the per-plane kernel */
    int64_t ph, pw, cells, eh, ew;
    if (a->sh < 1 || a->sw < 1 || a->sh > 8 || a->sw > 8 || !ox_muladd_i64(a->KH - 1, a->dh, 1, &eh) ||
        !ox_muladd_i64(a->KW - 1, a->dw, 1, &ew) || !ox_muladd_i64(a->OH - 1, a->sh, eh, &ph) ||
        !ox_muladd_i64(a->OW - 1, a->sw, ew, &pw) || !ox_mul_i64(ph, pw, &cells) ||
        cells > DWC_MAX_TILE / j.cbw)
        return 0;
    j.PH = ph;
    j.PW = pw;
    /* a step's last position reads up to 7 * sw columns past the row */
    j.slack = 7 * a->sw * j.cbw;
    j.blocks = (a->C + j.cbw - 1) / j.cbw;
    atomic_init(&j.failed, 0);
    ox_parallel_for(pool, a->N * j.blocks, 1, dwc_tasks, &j);
    return atomic_load(&j.failed) ? -1 : 1;
#endif
}
