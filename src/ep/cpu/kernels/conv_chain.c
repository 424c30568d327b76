/* onyx ConvDepthwise (schema in src/ops/contrib.c): a network's first
 * convolution (at most 4 input and 16 output channels: colour planes in,
 * MobileNetV3's 3 -> 16 stem) whose output only a depthwise convolution
 * reads, computed a band of the depthwise layer's output rows at a time
 * with the first output never leaving the cache, nor its channels the
 * vector lanes.
 *
 * Run as two convolutions, the first writes its 16 planes (800 KB per
 * 224x224 image, past a core's L2 with its input) and the depthwise
 * kernel reads them back and turns them channel-innermost through 8x8
 * transposes before any arithmetic (half of its time on MobileNetV3's
 * 112x112 layer). Here each task computes the first output's rows its
 * band reads with the 16 output channels in the lanes of one vector (a
 * tile of R positions of a row, one weight vector and R broadcast inputs
 * per product, bias and activation in registers), straight into a
 * zero-padded channel-innermost tile, which is the layout the depthwise
 * arithmetic (ox_dw_tile16_rows) reads: only its output, a quarter of
 * the first output at stride 2, is turned back into planes. Bands
 * recompute the first output's rows that two neighbours share (one in
 * sixteen for a 3x3 stride-2 depthwise layer).
 *
 * AVX-512 machines; elsewhere, or for shapes the tile does not take, the
 * two convolutions run one after the other over a whole intermediate
 * tensor (the pool's scratch buffer). */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/threadpool.h"
#include "ep/cpu/kernels/activation.h"
#include "ep/cpu/kernels/conv_extra.h"
#include "ep/cpu/kernels/conv_fast.h"
#include "ep/cpu/kernels/conv_geom.h"
#include "ep/cpu/kernels/gemm.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define OX_CH_X86 1
#include "ep/cpu/kernels/conv_tile_avx512.h"
#endif

extern const ox_kernel_table ox_cpu_kernels_conv_chain;

#define LANES 16    /* output channels per vector, and floats per tile position */
#define CH_MAX_C 4  /* the first convolution's input channels at most */
/* positions per register tile: 16 sums, a weight and the broadcasts fit
 * the 32 registers, and the stems of 224-, 256-, 320- and 640-pixel
 * images at stride 2 (rows of 112, 128, 160, 320) are whole tiles: with
 * 12, MobileNetV3's 112 took ten tiles, 120 positions */
#define CH_R 16
#define CH_MAX_K 11 /* its kernel's sides at most */
/* the tile one band fills aims at this size: well inside a core's L2
 * beside the input rows and the output row */
#define CH_TILE_BYTES ((int64_t)256 << 10)

typedef struct chain_state {
    ox_cpu_isa isa;
    float *lanes; /* W as K x 16 (k-major, zero past M), or NULL */
} chain_state;

/* The depthwise layer's geometry attributes as a Conv node's: a view of
 * the node whose strides, pads and dilations are depthwise_*, group the
 * channel count, so that ox_conv_geom_make reads and checks them. */
typedef struct dw_view {
    ir_node node;
    ir_attr attrs[4];
} dw_view;

static void dw_view_make(const ir_node *node, int64_t channels, dw_view *v) {
    static const char *const names[3] = {"strides", "pads", "dilations"};
    int n = 0;
    memset(v, 0, sizeof *v);
    for (int i = 0; i < 3; i++) {
        char key[32];
        snprintf(key, sizeof key, "depthwise_%s", names[i]);
        size_t len = 0;
        const int64_t *ints = ir_attr_ints(node, key, &len);
        if (!ints) continue;
        v->attrs[n] = (ir_attr){.name = (char *)names[i], .type = IR_ATTR_INTS, .n = len, .ints = (int64_t *)ints};
        n++;
    }
    v->attrs[n++] = (ir_attr){.name = (char *)"group", .type = IR_ATTR_INT, .i = channels};
    v->node = *node;
    v->node.attrs = v->attrs;
    v->node.n_attrs = n;
}

typedef struct chain_job {
    const conv_geom *g1, *g2; /* the convolution, then the depthwise layer */
    const float *x, *b1, *w2, *b2;
    float *y;
    ox_act act1, act2;
    ox_cpu_isa isa;
    ox_threadpool *pool;
    const ox_stop *stop;
    const float *lanes;
    int64_t ob, bands;    /* depthwise output rows per band, bands per image */
    int64_t tile_rows;    /* padded rows one band's tile holds */
    int64_t PW;           /* positions per tile row */
    int64_t rowlen;       /* floats per padded input row */
    int64_t slack;        /* floats past the tile the last steps may read */
    atomic_int failed, declined;
} chain_job;

#ifdef OX_CH_X86
/* R positions x 16 output channels over all products of the first
 * convolution: padded input row `row` (channel c, kernel row kh: row c
 * KH + kh) at rp[row] + col, tap kw of position r at column r SW + kw
 * DW from there; the sums, with the bias and the activation when the
 * tile applies it, stored as R positions of 16 floats. SW, KWC and DWC
 * constants for the common stems (0: as g1 says). */
__attribute__((target("avx512f,avx2,fma"), always_inline)) static inline void
lanes_tile(const int R, const int64_t SW, const int64_t KWC, const int64_t DWC, const chain_job *j,
           const ox_tile_epilogue *e, int in_reg, const float *const *rp, int64_t col, float *out) {
    const conv_geom *g = j->g1;
    const int64_t rows = g->C * g->k[0], KW = KWC ? KWC : g->k[1], DW = DWC ? DWC : g->dil[1];
    const float *wk = j->lanes;
    __m512 acc[CH_R];
#pragma GCC unroll 16
    for (int r = 0; r < R; r++) acc[r] = _mm512_setzero_ps();
    for (int64_t row = 0; row < rows; row++) {
        const float *pr = rp[row] + col;
#pragma GCC unroll 11
        for (int64_t kw = 0; kw < KW; kw++, wk += LANES) {
            const __m512 wv = _mm512_load_ps(wk);
#pragma GCC unroll 16
            for (int r = 0; r < R; r++) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(pr[r * SW + kw * DW]), wv, acc[r]);
        }
    }
    const __m512 bias = e->bias ? _mm512_loadu_ps(e->bias) : _mm512_setzero_ps();
#pragma GCC unroll 16
    for (int r = 0; r < R; r++) {
        __m512 s = acc[r];
        if (in_reg) {
            /* as ox_conv_epilogue: the bias, then the activation */
            if (e->bias) s = _mm512_add_ps(s, bias);
            s = ox_tile_act_avx512(e, s);
        }
        _mm512_storeu_ps(out + r * LANES, s);
    }
}

__attribute__((target("avx512f,avx2,fma"), always_inline)) static inline void
lanes_row_at(const int64_t SW, const int64_t KWC, const int64_t DWC, const chain_job *j, const ox_tile_epilogue *e,
             int in_reg, const float *const *rp, float *out) {
    for (int64_t ow = 0; ow < j->g1->out[1]; ow += CH_R)
        lanes_tile(CH_R, SW, KWC, DWC, j, e, in_reg, rp, ow * SW, out + ow * LANES);
}

/* One output row of the first convolution from its padded input rows
 * (rp: one per channel and kernel row) into out: OW positions of 16
 * floats, and up to CH_R - 1 more past them (computed, to be
 * overwritten). */
__attribute__((target("avx512f,avx2,fma"))) static void lanes_row(const chain_job *j, const ox_tile_epilogue *e,
                                                                  int in_reg, const float *const *rp, float *out) {
    const conv_geom *g = j->g1;
    if (g->stride[1] == 2 && g->k[1] == 3 && g->dil[1] == 1) lanes_row_at(2, 3, 1, j, e, in_reg, rp, out);
    else if (g->stride[1] == 2 && g->k[1] == 7 && g->dil[1] == 1) lanes_row_at(2, 7, 1, j, e, in_reg, rp, out);
    else if (g->stride[1] == 1 && g->k[1] == 3 && g->dil[1] == 1) lanes_row_at(1, 3, 1, j, e, in_reg, rp, out);
    else lanes_row_at(g->stride[1], 0, 0, j, e, in_reg, rp, out);
}

/* Input rows [r0, r0 + nr) of image n (rows outside the input zero), per
 * channel, into ib (rowlen floats each, channel c's rows from c nr):
 * padded column q holds input column q - pw. Each row is copied once per
 * band, however many first-output rows read it (three kernel rows at
 * stride 2: copied per output row, the rows took an eighth of the time). */
static void fill_band_rows(const chain_job *j, int64_t n, int64_t r0, int64_t nr, float *ib) {
    const conv_geom *g = j->g1;
    const int64_t len = j->rowlen, IH = g->in[0], IW = g->in[1];
    const int64_t lead = g->pb[1] < len ? g->pb[1] : len, cols = IW < len - lead ? IW : len - lead;
    for (int64_t c = 0; c < g->C; c++)
        for (int64_t i = 0; i < nr; i++) {
            float *d = ib + (c * nr + i) * len;
            const int64_t ih = r0 + i;
            if (ih < 0 || ih >= IH) {
                memset(d, 0, sizeof(float) * (size_t)len);
                continue;
            }
            memset(d, 0, sizeof(float) * (size_t)lead);
            memcpy(d + lead, j->x + ((n * g->C + c) * IH + ih) * IW, sizeof(float) * (size_t)cols);
            memset(d + lead + cols, 0, sizeof(float) * (size_t)(len - lead - cols));
        }
}

/* Tasks: (image, band of depthwise output rows). Each fills its tile
 * with the first output's rows the band reads (zero rows and columns for
 * the depthwise layer's padding), then computes the band's rows. */
static void chain_tasks(void *arg, int64_t t0, int64_t t1) {
    chain_job *j = arg;
    const conv_geom *g1 = j->g1, *g2 = j->g2;
    const int64_t in_rows = (j->tile_rows - 1) * g1->stride[0] + (g1->k[0] - 1) * g1->dil[0] + 1;
    const int64_t tile = j->tile_rows * j->PW * LANES, rb_n = g1->C * in_rows * j->rowlen,
                  r8_n = (g2->out[1] + 7) / 8 * 8 * LANES;
    const int64_t M = g1->M, taps = g2->k_sz;
    float *buf = ox_threadpool_block(j->pool, sizeof(float) * (size_t)(tile + j->slack + rb_n + r8_n + taps * LANES));
    if (!buf) {
        atomic_store(&j->failed, 1);
        return;
    }
    float *t = buf, *ib = buf + tile + j->slack, *r8 = ib + rb_n;
    memset(t + tile, 0, sizeof(float) * (size_t)j->slack);
    /* the depthwise weights tap-major and both biases, 16 lanes, zero past M */
    float *wd = r8 + r8_n, b1[LANES] = {0}, b2[LANES] = {0};
    for (int64_t k = 0; k < taps; k++)
        for (int64_t c = 0; c < LANES; c++) wd[k * LANES + c] = c < M ? j->w2[c * taps + k] : 0.0f;
    if (j->b1) memcpy(b1, j->b1, sizeof(float) * (size_t)M);
    if (j->b2) memcpy(b2, j->b2, sizeof(float) * (size_t)M);
    float lo = 0.0f, hi = 0.0f;
    ox_tile_act kind = OX_TILE_CLAMP;
    const int in_reg = ox_tile_activation(&j->act1, 1, &lo, &hi, &kind);
    const ox_tile_epilogue e = {j->b1 ? b1 : NULL, NULL, 0, lo, hi, kind};
    const int64_t OW1 = g1->out[1], lead = g2->pb[1], PW = j->PW;
    for (int64_t t_ = t0; t_ < t1 && !atomic_load(&j->declined); t_++) {
        if (ox_stop_requested(j->stop)) break;
        const int64_t n = t_ / j->bands, band = t_ % j->bands;
        const int64_t o0 = band * j->ob, o1 = o0 + j->ob < g2->out[0] ? o0 + j->ob : g2->out[0];
        /* tile row i: padded row o0 sh + i, the first output's row o0 sh + i - ph */
        const int64_t rows = (o1 - 1 - o0) * g2->stride[0] + (g2->k[0] - 1) * g2->dil[0] + 1;
        /* the first output's rows [s0, s1) inside it, and the input rows they read */
        int64_t s0 = o0 * g2->stride[0] - g2->pb[0], s1 = s0 + rows;
        if (s0 < 0) s0 = 0;
        if (s1 > g1->out[0]) s1 = g1->out[0];
        const int64_t r0 = s0 * g1->stride[0] - g1->pb[0];
        const int64_t nr = s1 > s0 ? (s1 - 1 - s0) * g1->stride[0] + (g1->k[0] - 1) * g1->dil[0] + 1 : 0;
        fill_band_rows(j, n, r0, nr, ib);
        for (int64_t i = 0; i < rows; i++) {
            float *tr = t + i * PW * LANES;
            const int64_t s = o0 * g2->stride[0] + i - g2->pb[0];
            if (s < 0 || s >= g1->out[0]) {
                memset(tr, 0, sizeof(float) * (size_t)(PW * LANES));
                continue;
            }
            const float *rp[CH_MAX_C * CH_MAX_K];
            for (int64_t c = 0; c < g1->C; c++)
                for (int64_t kh = 0; kh < g1->k[0]; kh++)
                    rp[c * g1->k[0] + kh] = ib + (c * nr + s * g1->stride[0] - g1->pb[0] + kh * g1->dil[0] - r0) * j->rowlen;
            lanes_row(j, &e, in_reg, rp, tr + lead * LANES);
            memset(tr, 0, sizeof(float) * (size_t)(lead * LANES));
            memset(tr + (lead + OW1) * LANES, 0, sizeof(float) * (size_t)((PW - lead - OW1) * LANES));
            if (!in_reg) /* the bias and activation over the row's positions */
                ox_act_bias_rows(&j->act1, tr + lead * LANES, OW1, M, LANES, j->b1, j->isa);
        }
        ox_dw_args d = {.N = 1, .C = M, .mult = 1, .IH = g2->in[0], .IW = g2->in[1], .OH = g2->out[0],
                        .OW = g2->out[1], .KH = g2->k[0], .KW = g2->k[1], .sh = g2->stride[0],
                        .sw = g2->stride[1], .dh = g2->dil[0], .dw = g2->dil[1], .ph = g2->pb[0],
                        .pw = g2->pb[1], .x = NULL, .w = j->w2, .bias = j->b2,
                        .y = j->y + n * M * g2->out_sz, .act = j->act2, .isa = j->isa};
        if (!ox_dw_tile16_rows(&d, t, PW, wd, b2, o0, o1, r8)) {
            /* not one banded_fits lets through; the whole-tensor path redoes the node */
            atomic_store(&j->declined, 1);
            break;
        }
    }
    ox_threadpool_block_done(j->pool, buf);
}
#endif

/* 1 when the banded path takes the pair: AVX-512, 2-D, one group, at
 * most 4 input and 16 output channels, kernels of at most 11 taps a side,
 * and the packed weights. */
static int banded_fits(const conv_geom *g1, const conv_geom *g2, const chain_state *st) {
    if (!st || !st->lanes || st->isa < OX_ISA_AVX512 || g1->r != 2 || g1->G != 1) return 0;
    if (g1->C > CH_MAX_C || g1->M > LANES || g1->k[0] > CH_MAX_K || g1->k[1] > CH_MAX_K) return 0;
    for (int i = 0; i < 2; i++)
        if (g2->stride[i] > 8 || g2->k[i] > 64 || g2->dil[i] > 64 || g1->stride[i] > 8 || g1->dil[i] > 8) return 0;
    return 1;
}

static int chain_banded(ox_kernel_ctx *ctx, const chain_state *st, chain_job *j) {
#ifndef OX_CH_X86
    (void)ctx;
    (void)st;
    (void)j;
    return 0;
#else
    const conv_geom *g1 = j->g1, *g2 = j->g2;
    /* tile columns: the depthwise layer's padded extent, and the first
     * output's row after its left padding with the tile's positions past
     * it (computed in whole tiles of CH_R, then zeroed) */
    const int64_t ext_w = (g2->out[1] - 1) * g2->stride[1] + (g2->k[1] - 1) * g2->dil[1] + 1;
    int64_t PW = g2->pb[1] + (g1->out[1] + CH_R - 1) / CH_R * CH_R;
    if (PW < ext_w) PW = ext_w;
    j->PW = PW;
    /* a padded input row covers every column a first-output tile reads */
    const int64_t last = ((g1->out[1] + CH_R - 1) / CH_R * CH_R - 1) * g1->stride[1] + (g1->k[1] - 1) * g1->dil[1] + 1;
    j->rowlen = (last > g1->pb[1] + g1->in[1] ? last : g1->pb[1] + g1->in[1]);
    j->rowlen = (j->rowlen + 15) / 16 * 16;
    /* a last depthwise step reads up to 7 positions past its row */
    j->slack = (7 * g2->stride[1] + (g2->k[1] - 1) * g2->dil[1] + 1) * LANES;
    const int64_t row_bytes = PW * LANES * (int64_t)sizeof(float);
    const int64_t span = (g2->k[0] - 1) * g2->dil[0] + 1;
    int64_t ob = (CH_TILE_BYTES / row_bytes - span) / g2->stride[0] + 1;
    if (ob < 1) ob = 1;
    if (ob > g2->out[0]) ob = g2->out[0];
    const int threads = ox_threadpool_size(ctx->pool);
    if (threads > 1) {
        /* bands of equal height, as many in all as the pool's loop makes
         * chunks (4 per thread) or a multiple of it, so that no thread is
         * left a band more than the other */
        const int64_t want = 4 * (int64_t)threads;
        int64_t total = g1->N * ((g2->out[0] + ob - 1) / ob);
        total = (total + want - 1) / want * want;
        int64_t per_image = (total + g1->N - 1) / g1->N;
        if (per_image > g2->out[0]) per_image = g2->out[0];
        ob = (g2->out[0] + per_image - 1) / per_image;
    }
    j->ob = ob;
    j->bands = (g2->out[0] + ob - 1) / ob;
    j->tile_rows = (ob - 1) * g2->stride[0] + span;
    j->lanes = st->lanes;
    j->isa = st->isa;
    j->pool = ctx->pool;
    j->stop = ctx->stop;
    atomic_init(&j->failed, 0);
    atomic_init(&j->declined, 0);
    ox_parallel_for(ctx->pool, g1->N * j->bands, 1, chain_tasks, j);
    if (atomic_load(&j->failed)) return ox_cpu_oom(ctx);
    return atomic_load(&j->declined) ? 0 : 1;
#endif
}

/* The two convolutions one after the other over the whole intermediate. */
static int chain_whole(ox_kernel_ctx *ctx, ox_kernel_ctx *ctx2, const chain_job *j, const float *w1) {
    const conv_geom *g1 = j->g1, *g2 = j->g2;
    int64_t n;
    if (!ox_mul_i64(g1->N * g1->M, g1->out_sz, &n) || n > ((int64_t)1 << 40))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "ConvDepthwise: the intermediate output is too large");
    /* the pool's scratch buffer stays mapped from run to run: a fresh
     * allocation of megabytes would be faulted in on every run */
    int lent = 0;
    float *t = ox_threadpool_scratch(ctx->pool, sizeof(float) * (size_t)(n > 0 ? n : 1), &lent);
    if (!t) return ox_cpu_oom(ctx);
    int rc = ox_conv_f32_unplanned(ctx, g1, j->x, w1, j->b1, &j->act1, t);
    if (rc == 0) rc = ox_conv_f32_unplanned(ctx2, g2, t, j->w2, j->b2, &j->act2, j->y);
    ox_threadpool_scratch_done(ctx->pool, t, lent);
    return rc;
}

static int chain_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = ox_cpu_input(ctx, 0), *W = ox_cpu_input(ctx, 1), *B = ox_cpu_input(ctx, 2),
                    *Wd = ox_cpu_input(ctx, 3), *Bd = ox_cpu_input(ctx, 4);
    ox_tensor *Y = ctx->outputs[0];
    if (!Wd)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "ConvDepthwise: the depthwise weights (input 3) are missing");
    if (X->rank != 4 || W->rank != 4 || Wd->rank != 4)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "ConvDepthwise: X, W and the depthwise weights must have rank 4 (got %d, %d, %d)",
                              X->rank, W->rank, Wd->rank);
    /* the intermediate's shape, from Conv's attributes on X and W */
    int64_t pads[4] = {0, 0, 0, 0}, tdims[4] = {X->dims[0], W->dims[0], 0, 0};
    const int64_t *p = NULL, *s = NULL, *d = NULL;
    if (ox_cpu_attr_ints(ctx, "pads", 4, &p) || ox_cpu_attr_ints(ctx, "strides", 2, &s) ||
        ox_cpu_attr_ints(ctx, "dilations", 2, &d))
        return -1;
    int ap = ox_parse_auto_pad(ir_attr_string(ctx->node, "auto_pad", "NOTSET"));
    if (ap < 0) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "ConvDepthwise: unknown auto_pad");
    for (int i = 0; i < 2; i++) {
        pads[i] = p ? p[i] : 0;
        pads[i + 2] = p ? p[i + 2] : 0;
        if (ox_window_axis(X->dims[i + 2], W->dims[i + 2], s ? s[i] : 1, d ? d[i] : 1, ap, 0, &pads[i],
                           &pads[i + 2], &tdims[i + 2]))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "ConvDepthwise: the kernel does not fit the padded input on spatial axis %d", i);
    }
    ox_tensor T = {.dtype = ONYX_FLOAT32, .rank = 4};
    memcpy(T.dims, tdims, sizeof tdims);
    conv_geom g1, g2;
    if (ox_conv_geom_make(ctx, X, W, &T, 0, &g1) || ox_conv_check_bias(ctx, B, g1.M)) return -1;
    dw_view v;
    dw_view_make(ctx->node, g1.M, &v);
    ox_kernel_ctx ctx2 = *ctx;
    ctx2.node = &v.node;
    if (ox_conv_geom_make(&ctx2, &T, Wd, Y, 0, &g2) || ox_conv_check_bias(ctx, Bd, g2.M)) return -1;
    if (g2.Cg != 1 || g2.M != g1.M)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "ConvDepthwise: the depthwise weights must be [%lld, 1, KH, KW] (got [%lld, %lld, ...])",
                              (long long)g1.M, (long long)Wd->dims[0], (long long)Wd->dims[1]);
    if (X->dtype != ONYX_FLOAT32 || W->dtype != ONYX_FLOAT32 || Wd->dtype != ONYX_FLOAT32 ||
        (B && B->dtype != ONYX_FLOAT32) || (Bd && Bd->dtype != ONYX_FLOAT32))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "ConvDepthwise: every input must be float32");
    chain_job j = {.g1 = &g1, .g2 = &g2, .x = X->data, .b1 = B ? B->data : NULL, .w2 = Wd->data,
                   .b2 = Bd ? Bd->data : NULL, .y = Y->data};
    size_t np = 0;
    const float *params = ir_attr_floats(ctx->node, "depthwise_activation_params", &np);
    if (ox_act_of_node(ctx->node, &j.act1) ||
        ox_act_parse(ir_attr_string(ctx->node, "depthwise_activation", ""), params, np, &j.act2))
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "ConvDepthwise: activation '%s' or '%s' is not supported",
                              ir_attr_string(ctx->node, "activation", ""),
                              ir_attr_string(ctx->node, "depthwise_activation", ""));
    if (g2.out_sz == 0 || g1.N == 0) return 0;
    const chain_state *st = ctx->state;
    if (banded_fits(&g1, &g2, st)) {
        int rc = chain_banded(ctx, st, &j);
        if (rc != 0) return rc < 0 ? -1 : 0;
    }
    return chain_whole(ctx, &ctx2, &j, W->data);
}

/* Packs a constant W for the banded path's tile: K x 16, k-major. */
static int chain_init(const ox_kernel_init *in, void **state, ox_error *err) {
    *state = NULL;
    ox_cpu_isa isa;
    if (ox_cpu_isa_choose(&isa, err) != 0) return -1;
    chain_state *st = calloc(1, sizeof *st);
    if (!st) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    st->isa = isa;
    *state = st;
    const ox_tensor *w = in->n_inputs > 1 ? in->consts[1] : NULL;
    if (isa < OX_ISA_AVX512 || !w || w->dtype != ONYX_FLOAT32 || w->rank != 4 || w->dims[0] < 1 ||
        w->dims[0] > LANES || ir_attr_int(in->node, "group", 1) != 1)
        return 0;
    const int64_t M = w->dims[0], K = ox_tensor_numel(w) / M;
    if (K < 1 || K > CH_MAX_C * CH_MAX_K * CH_MAX_K) return 0;
    /* a failed allocation leaves the run to the whole-tensor path */
    st->lanes = aligned_alloc(64, ((size_t)(K * LANES) * sizeof(float) + 63) / 64 * 64);
    if (st->lanes)
        for (int64_t k = 0; k < K; k++)
            for (int64_t m = 0; m < LANES; m++) st->lanes[k * LANES + m] = m < M ? ((const float *)w->data)[m * K + k] : 0.0f;
    return 0;
}

static const char *chain_describe(const void *state) {
    const chain_state *st = state;
    if (!st) return NULL;
    return st->lanes ? "banded, channels in lanes: convolution into the depthwise tile, avx512"
                     : "two convolutions one after the other";
}

static void chain_release(void *state) {
    chain_state *st = state;
    if (!st) return;
    free(st->lanes);
    free(st);
}

static const ox_kernel_def KERNELS[] = {
    {"onyx", "ConvDepthwise", 1, 1, chain_compute, ox_cpu_supports_f32, chain_init, chain_release, chain_describe},
};

const ox_kernel_table ox_cpu_kernels_conv_chain = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
