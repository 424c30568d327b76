/* The CPU kernels of the channel-blocked operators (schemas in
 * src/ops/contrib.c, written by the optimizer pass block_channels):
 *   BlockChannels    [N, C, S...] -> [N, ceil(C/16), S..., 16]
 *   UnblockChannels  the inverse (attribute `channels`)
 *   BlockedConv      a Conv of one group with blocked (or planar) input
 *                    and blocked output, bias, residual and activation
 *                    in its epilogue.
 * With 16 output channels in the lanes of a vector and the positions
 * broadcast, a register tile stores whole vectors of one position's
 * channels, which is where the next convolution reads them: no im2col,
 * no transposes between convolutions, and every plane size fills the
 * lanes (a 7x7 plane wastes none).
 *
 * Weights are packed once at session creation, per group of the tile's
 * output blocks (blocked_weights_pack), so that a tile reads one stream.
 * Padding is made by copying the input into a zero-bordered scratch
 * buffer once per run, so the tiles never test bounds. */
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/layout.h"
#include "core/stop.h"
#include "core/threadpool.h"
#include "ep/cpu/kernels/conv_nchwc.h"
#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/cpu/kernels/transpose8.h"

/* ---------------------------------------------------------------- */
/* BlockChannels and UnblockChannels */

typedef struct reorder_job {
    const float *x;
    float *y;
    int64_t C, Cb, S; /* channels, their blocks, positions per image */
    int block;        /* 1: planar to blocked; 0: back */
    ox_cpu_isa isa;
} reorder_job;

#if defined(__x86_64__) && defined(__GNUC__)
/* ox_layout_block and ox_layout_unblock (core/layout.h) eight channels
 * by eight positions at a time, through 8x8 transposes in registers:
 * the scalar loops moved 1.7 G floats/s, which made the reorders around
 * a blocked convolution cost more than blocking saved on MobileNetV3's
 * layers. The ragged end of a plane goes one position at a time (whole
 * vectors there would write into the next block). */
__attribute__((target("avx2,fma"))) static void block_avx2(const float *planar, float *blocked, int64_t C,
                                                           int64_t S, int64_t n, int64_t cb) {
    int64_t bo, po;
    const int64_t cn = ox_layout_block_at(C, S, n, cb, &bo, &po);
    const float *src = planar + po;
    float *dst = blocked + bo;
    for (int h = 0; h < NCHWC_B; h += 8) {
        const int nh = cn - h < 0 ? 0 : cn - h < 8 ? (int)(cn - h) : 8;
        int64_t p = 0;
        for (; p + 8 <= S; p += 8) ox_planes_to_positions8(src + h * S + p, S, nh, dst + p * NCHWC_B + h, NCHWC_B);
        for (; p < S; p++)
            for (int c = 0; c < 8; c++) dst[p * NCHWC_B + h + c] = c < nh ? src[(h + c) * S + p] : 0.0f;
    }
}

__attribute__((target("avx2,fma"))) static void unblock_avx2(const float *blocked, float *planar, int64_t C,
                                                             int64_t S, int64_t n, int64_t cb) {
    int64_t bo, po;
    const int64_t cn = ox_layout_block_at(C, S, n, cb, &bo, &po);
    const float *src = blocked + bo;
    float *dst = planar + po;
    for (int h = 0; h < cn; h += 8) {
        const int nh = cn - h < 8 ? (int)(cn - h) : 8;
        int64_t p = 0;
        for (; p + 8 <= S; p += 8) ox_positions_to_planes8(src + p * NCHWC_B + h, NCHWC_B, nh, dst + h * S + p, S);
        for (; p < S; p++)
            for (int c = 0; c < nh; c++) dst[(h + c) * S + p] = src[p * NCHWC_B + h + c];
    }
}
#endif

/* One (image, block) pair per item. */
static void reorder_items(void *arg, int64_t begin, int64_t end) {
    const reorder_job *j = arg;
    for (int64_t it = begin; it < end; it++) {
        const int64_t n = it / j->Cb, cb = it - n * j->Cb;
#if defined(__x86_64__) && defined(__GNUC__)
        if (j->isa >= OX_ISA_AVX2) {
            if (j->block) block_avx2(j->x, j->y, j->C, j->S, n, cb);
            else unblock_avx2(j->x, j->y, j->C, j->S, n, cb);
            continue;
        }
#endif
        if (j->block) ox_layout_block(j->x, j->y, j->C, j->S, n, cb);
        else ox_layout_unblock(j->x, j->y, j->C, j->S, n, cb);
    }
}

/* The blocked shape of planar dims (rank r >= 3): [N, Cb, S..., 16]. */
static int blocked_matches(const ox_tensor *pl, const ox_tensor *bl) {
    if (bl->rank != pl->rank + 1 || bl->dims[0] != pl->dims[0] || bl->dims[bl->rank - 1] != NCHWC_B ||
        bl->dims[1] != (pl->dims[1] + NCHWC_B - 1) / NCHWC_B)
        return 0;
    for (int d = 2; d < pl->rank; d++)
        if (bl->dims[d] != pl->dims[d]) return 0;
    return 1;
}

static int reorder_run(ox_kernel_ctx *ctx, const ox_tensor *pl, const ox_tensor *bl, int block) {
    const ox_tensor *in = block ? pl : bl;
    if (in->dtype != ONYX_FLOAT32 || pl->rank < 3 || !blocked_matches(pl, bl))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: expected float32 [N, C, spatial...] and its blocked form [N, ceil(C/%d), "
                              "spatial..., %d]",
                              ctx->node->op_type, NCHWC_B, NCHWC_B);
    int64_t S = 1;
    for (int d = 2; d < pl->rank; d++) S *= pl->dims[d];
    const ox_cpu_isa *isa = ctx->state;
    reorder_job j = {block ? pl->data : bl->data, block ? bl->data : pl->data, pl->dims[1], bl->dims[1], S,
                     block, isa ? *isa : ox_cpu_isa_active()};
    const int64_t items = pl->dims[0] * bl->dims[1];
    if (items > 0 && S > 0) ox_parallel_for(ctx->pool, items, 1, reorder_items, &j);
    return 0;
}

/* The reorders' instruction set, chosen once (ONYX_CPU_ISA checked
 * at session creation, as for every kernel that picks one). */
static int reorder_init(const ox_kernel_init *in, void **state, ox_error *err) {
    (void)in;
    *state = NULL;
    ox_cpu_isa *isa = malloc(sizeof *isa);
    if (!isa) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    if (ox_cpu_isa_choose(isa, err) != 0) {
        free(isa);
        return -1;
    }
    *state = isa;
    return 0;
}

static const char *reorder_describe(const void *state) {
    const ox_cpu_isa *isa = state;
    return isa && *isa >= OX_ISA_AVX2 ? "8x8 transposes, avx2" : "portable";
}

static int block_channels_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = ox_cpu_input(ctx, 0);
    return reorder_run(ctx, X, ctx->outputs[0], 1);
}

static int unblock_channels_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = ox_cpu_input(ctx, 0);
    ox_tensor *Y = ctx->outputs[0];
    if (Y->rank >= 2 && Y->dims[1] != ir_attr_int(ctx->node, "channels", -1))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "UnblockChannels: the output has %lld channels, "
                              "the attribute channels says %lld",
                              (long long)Y->dims[1], (long long)ir_attr_int(ctx->node, "channels", -1));
    return reorder_run(ctx, Y, X, 0);
}

/* ---------------------------------------------------------------- */
/* BlockedConv */

typedef struct blocked_weights {
    float *w;    /* see blocked_weights_pack */
    float *bias; /* Mb * 16 */
    int64_t M, C, KK;
} blocked_weights;

typedef struct blocked_state {
    ox_cpu_isa isa;
    int packed; /* weights packed at session creation */
    blocked_weights bw;
} blocked_state;

static void blocked_weights_free(blocked_weights *bw) {
    free(bw->w);
    free(bw->bias);
    bw->w = bw->bias = NULL;
}

/* Output blocks per register tile in the variant isa. */
static int tile_blocks(ox_cpu_isa isa) { return isa == OX_ISA_AVX512 ? NCHWC_NB : 1; }

/* Packs W [M, C, KH, KW] and B (M values or NULL) for tiles of `group`
 * output blocks: per group of blocks (the last may have fewer, gb), per
 * kernel position and input channel, the gb blocks' 16 weights side by
 * side, so that a tile reads one stream of gb vectors per channel. Group
 * g starts at block g * group, KK * C * 16 floats per block before it. */
static int blocked_weights_pack(const float *w, const float *b, int64_t M, int64_t C, int64_t KK, int group,
                                blocked_weights *bw) {
    const int64_t Mb = (M + NCHWC_B - 1) / NCHWC_B;
    int64_t n;
    memset(bw, 0, sizeof *bw);
    if (!ox_mul_i64(Mb * NCHWC_B, C, &n) || !ox_mul_i64(n, KK, &n) || n > (int64_t)(SIZE_MAX / 8)) return -1;
    bw->w = aligned_alloc(64, ((size_t)n * sizeof(float) + 63) / 64 * 64);
    bw->bias = aligned_alloc(64, (size_t)Mb * NCHWC_B * sizeof(float));
    if (!bw->w || !bw->bias) {
        blocked_weights_free(bw);
        return -1;
    }
    for (int64_t m = 0; m < Mb * NCHWC_B; m++) {
        const int64_t mb = m / NCHWC_B, g0 = mb / group * group;
        const int64_t gb = Mb - g0 < group ? Mb - g0 : group;
        float *col = bw->w + g0 * KK * C * NCHWC_B + (mb - g0) * NCHWC_B + m % NCHWC_B;
        for (int64_t kk = 0; kk < KK; kk++)
            for (int64_t c = 0; c < C; c++)
                col[(kk * C + c) * gb * NCHWC_B] = m < M ? w[(m * C + c) * KK + kk] : 0.0f;
        bw->bias[m] = m < M && b ? b[m] : 0.0f;
    }
    bw->M = M, bw->C = C, bw->KK = KK;
    return 0;
}

/* The geometry of one run, checked against the tensors. */
typedef struct blocked_geom {
    int64_t N, C, H, W, M, Mb, KH, KW, OH, OW;
    int64_t s[2], d[2], pads[4];
    int blocked_in;
} blocked_geom;

static int blocked_geom_make(ox_kernel_ctx *ctx, const ox_tensor *X, const ox_tensor *Wt, const ox_tensor *B,
                             const ox_tensor *Z, const ox_tensor *Y, blocked_geom *g) {
    if (X->dtype != ONYX_FLOAT32 || Wt->dtype != ONYX_FLOAT32 || (B && B->dtype != ONYX_FLOAT32) ||
        (Z && Z->dtype != ONYX_FLOAT32))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "BlockedConv: X, W, B and Z must be float32");
    if (Wt->rank != 4 || (X->rank != 4 && X->rank != 5))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "BlockedConv: W must be [M, C, KH, KW] and X [N, C, H, W] or [N, ceil(C/%d), H, W, %d]",
                              NCHWC_B, NCHWC_B);
    if (ir_attr_int(ctx->node, "group", 1) != 1)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "BlockedConv: only one group is supported");
    memset(g, 0, sizeof *g);
    g->N = X->dims[0], g->H = X->dims[2], g->W = X->dims[3];
    g->M = Wt->dims[0], g->C = Wt->dims[1], g->KH = Wt->dims[2], g->KW = Wt->dims[3];
    g->Mb = (g->M + NCHWC_B - 1) / NCHWC_B;
    g->blocked_in = X->rank == 5;
    int64_t xc = g->blocked_in ? X->dims[1] * NCHWC_B : X->dims[1];
    if (g->blocked_in ? X->dims[4] != NCHWC_B || X->dims[1] != (g->C + NCHWC_B - 1) / NCHWC_B : xc != g->C)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "BlockedConv: X's channels do not match W's %lld",
                              (long long)g->C);
    if (g->C < 1) /* the tiles step through channel blocks: there must be one */
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "BlockedConv: X has no channels");
    const int64_t *st, *dl, *pd, *ks;
    if (ox_cpu_attr_ints(ctx, "strides", 2, &st) || ox_cpu_attr_ints(ctx, "dilations", 2, &dl) ||
        ox_cpu_attr_ints(ctx, "pads", 4, &pd) || ox_cpu_attr_ints(ctx, "kernel_shape", 2, &ks))
        return -1;
    if (ks && (ks[0] != g->KH || ks[1] != g->KW))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "BlockedConv: kernel_shape does not match W");
    for (int i = 0; i < 2; i++) {
        g->s[i] = st ? st[i] : 1, g->d[i] = dl ? dl[i] : 1;
        g->pads[i] = pd ? pd[i] : 0, g->pads[i + 2] = pd ? pd[i + 2] : 0;
        if (g->s[i] < 1 || g->d[i] < 1 || g->pads[i] < 0 || g->pads[i + 2] < 0 || g->pads[i] > 1 << 20 ||
            g->pads[i + 2] > 1 << 20 || g->d[i] > 1 << 20)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "BlockedConv: strides and dilations must be >= 1 and pads >= 0");
    }
    const int64_t span_h = g->H + g->pads[0] + g->pads[2] - ((g->KH - 1) * g->d[0] + 1);
    const int64_t span_w = g->W + g->pads[1] + g->pads[3] - ((g->KW - 1) * g->d[1] + 1);
    if (g->KH < 1 || g->KW < 1 || span_h < 0 || span_w < 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "BlockedConv: the kernel does not fit the padded input");
    g->OH = span_h / g->s[0] + 1, g->OW = span_w / g->s[1] + 1;
    const int64_t want[5] = {g->N, g->Mb, g->OH, g->OW, NCHWC_B};
    const int z_fits = !Z || (Z->rank == 5 && (Z->dims[0] == 1 || Z->dims[0] == g->N) &&
                              ox_shape_equal(Z->dims + 1, 4, want + 1, 4));
    if (!ox_shape_equal(Y->dims, Y->rank, want, 5) || !z_fits)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "BlockedConv: Y must be [%lld, %lld, %lld, %lld, %d] and Z the same for one image "
                              "or each", (long long)g->N,
                              (long long)g->Mb, (long long)g->OH, (long long)g->OW, NCHWC_B);
    if (B && (B->rank != 1 || B->dims[0] != g->M))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "BlockedConv: B must hold %lld values", (long long)g->M);
    return 0;
}

/* A task's work: a run of position tiles of one block group of one
 * image. Runs are as long as the pool allows while it still has about
 * two tasks per thread to deal: a group's weights then meet many tiles
 * in one thread's caches, where runs of a fixed 16 tiles made both
 * threads of a pair load every group (ResNet-50's 3x3 on 14x14 ran 1.64
 * times faster at two threads than at one; ONNX Runtime's, 1.97).
 * Small planes (fewer than NCHWC_SMALL tiles) go in slabs of the
 * reduction whose weights (at most about 128 input channels by 4
 * blocks: 32 KiB) stay in L1 while every tile of the task meets them,
 * the tiles' partial sums waiting in the output. */
#define NCHWC_SMALL 16
#define NCHWC_SLAB_CHANNELS 128

typedef struct tiles_job {
    nchwc_conv cv;
    const float *x, *z;
    float *y;
    int64_t x_img, z_img;       /* floats per input image, per Z image (0: one for all) */
    int64_t groups, tiles, runs; /* per image: block groups, position tiles, runs per group */
    int64_t run;                 /* tiles per run */
    int64_t slab;               /* reduction units per slab */
    int nbt;                    /* blocks per tile */
    ox_cpu_isa isa;
    const ox_stop *stop;
} tiles_job;

static void one_tile(const tiles_job *j, const float *x, const float *z, float *y, int64_t t, int64_t mb,
                     int64_t u0, int64_t u1, const char *pf, int64_t lines) {
    const nchwc_conv *cv = &j->cv;
    const int64_t q = t * NCHWC_NP;
    const int np = (int)(cv->OP - q < NCHWC_NP ? cv->OP - q : NCHWC_NP);
    const int nb = (int)(cv->Mb - mb < j->nbt ? cv->Mb - mb : j->nbt);
    if (u1 == cv->KK * cv->Cb) {
        /* the lines the epilogue reads (z) and writes (y), asked for
         * before the products so that they arrive meanwhile (here, not in
         * the tile, whose 24 sums then no longer fit the registers) */
        for (int b = 0; b < nb; b++)
            for (int p = 0; p < np; p++) {
                const int64_t at = ((mb + b) * cv->OP + q + p) * NCHWC_B;
                if (z) __builtin_prefetch(z + at, 0, 3);
                __builtin_prefetch(y + at, 1, 3);
            }
    }
#if defined(__x86_64__) && defined(__GNUC__)
    if (j->isa == OX_ISA_AVX512) {
        /* spread over the tile's units (a burst before the tile stalled
         * it), the rest of fewer than one per unit at once */
        const int64_t per_unit = lines / (u1 - u0), rest = lines - per_unit * (u1 - u0);
        for (int64_t l = 0; l < rest; l++) __builtin_prefetch(pf + l * 64, 0, 2);
        if (per_unit)
            ox_nchwc_tile_avx512_pf(cv, x, z, y, q, np, mb, nb, u0, u1, pf + rest * 64, per_unit);
        else
            ox_nchwc_tile_avx512(cv, x, z, y, q, np, mb, nb, u0, u1);
        return;
    }
#endif
    for (int64_t l = 0; l < lines; l++) __builtin_prefetch(pf + l * 64, 0, 2);
#if defined(__x86_64__) && defined(__GNUC__)
    if (j->isa == OX_ISA_AVX2) {
        ox_nchwc_tile_avx2(cv, x, z, y, q, np, mb, u0, u1);
        return;
    }
#endif
    ox_nchwc_tile_portable(cv, x, z, y, q, np, mb, u0, u1);
}

/* Where unit u's weights start in a group of one block (times the
 * group's blocks for others): units are consecutive in the packing. */
static inline int64_t unit_weights(const nchwc_conv *cv, int64_t u) {
    const int64_t kk = u / cv->Cb;
    return (kk * cv->C + (u - kk * cv->Cb) * NCHWC_B) * NCHWC_B;
}

/* Items in (image, block group, run of tiles) order. */
static void tiles_items(void *arg, int64_t begin, int64_t end) {
    const tiles_job *j = arg;
    const nchwc_conv *cv = &j->cv;
    const int64_t units = cv->KK * cv->Cb, y_img = cv->Mb * cv->OP * NCHWC_B;
    for (int64_t it = begin; it < end; it++) {
        if (ox_stop_requested(j->stop)) return;
        const int64_t n = it / (j->groups * j->runs), r = it - n * j->groups * j->runs;
        const int64_t grp = r / j->runs, t0 = (r - grp * j->runs) * j->run;
        const int64_t t1 = t0 + j->run < j->tiles ? t0 + j->run : j->tiles;
        const float *x = j->x + n * j->x_img, *z = j->z ? j->z + n * j->z_img : NULL;
        float *y = j->y + n * y_img;
        const int64_t mb = grp * j->nbt, nb = cv->Mb - mb < j->nbt ? cv->Mb - mb : j->nbt;
        const float *wg = cv->w + mb * cv->KK * cv->C * NCHWC_B;
        for (int64_t u0 = 0; u0 < units; u0 += j->slab) {
            const int64_t u1 = u0 + j->slab < units ? u0 + j->slab : units;
            const int64_t u2 = u1 + j->slab < units ? u1 + j->slab : units;
            /* the next slab's weights, asked of memory into L2 a share per
             * tile: a model's weights stream from memory, and a small
             * plane's few tiles left the tile waiting on them */
            const char *next = (const char *)(wg + unit_weights(cv, u1) * nb);
            const int64_t lines =
                u1 < units ? (unit_weights(cv, u2) - unit_weights(cv, u1)) * nb * (int64_t)sizeof(float) / 64 : 0;
            const int64_t share = (lines + (t1 - t0) - 1) / (t1 - t0);
            for (int64_t t = t0; t < t1; t++) {
                const int64_t from = (t - t0) * share;
                const int64_t ask = from < lines ? (lines - from < share ? lines - from : share) : 0;
                one_tile(j, x, z, y, t, mb, u0, u1, ask ? next + from * 64 : NULL, ask);
            }
        }
    }
}

/* Copies the input into a zero-bordered buffer of Hp x Wp positions per
 * plane (blocked: per channel block, 16 lanes a position), planes
 * [begin, end) per call: split over the pool, since every thread would
 * otherwise wait for one to copy (at two threads ResNet-50's 3x3
 * convolutions lost a tenth this way). */
typedef struct pad_job {
    const blocked_geom *g;
    const float *x;
    float *xp;
    int64_t Hp, Wp, lanes;
} pad_job;

static void pad_planes(void *arg, int64_t begin, int64_t end) {
    const pad_job *j = arg;
    const blocked_geom *g = j->g;
    const int64_t lanes = j->lanes, Hp = j->Hp, Wp = j->Wp;
    const size_t row = (size_t)(g->W * lanes) * sizeof(float);
    for (int64_t pl = begin; pl < end; pl++) {
        const float *src = j->x + pl * g->H * g->W * lanes;
        float *dst = j->xp + pl * Hp * Wp * lanes;
        memset(dst, 0, (size_t)(g->pads[0] * Wp * lanes) * sizeof(float));
        for (int64_t h = 0; h < g->H; h++) {
            float *d = dst + (g->pads[0] + h) * Wp * lanes;
            memset(d, 0, (size_t)(g->pads[1] * lanes) * sizeof(float));
            memcpy(d + g->pads[1] * lanes, src + h * g->W * lanes, row);
            memset(d + (g->pads[1] + g->W) * lanes, 0, (size_t)((Wp - g->pads[1] - g->W) * lanes) * sizeof(float));
        }
        const int64_t below = Hp - g->pads[0] - g->H;
        memset(dst + (g->pads[0] + g->H) * Wp * lanes, 0, (size_t)(below * Wp * lanes) * sizeof(float));
    }
}

static int blocked_conv_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = ox_cpu_input(ctx, 0), *Wt = ox_cpu_input(ctx, 1), *B = ox_cpu_input(ctx, 2),
                    *Z = ox_cpu_input(ctx, 3);
    ox_tensor *Y = ctx->outputs[0];
    const blocked_state *st = ctx->state;
    blocked_geom g;
    if (!X || !Wt || blocked_geom_make(ctx, X, Wt, B, Z, Y, &g)) return -1;
    ox_act act;
    if (ox_act_of_node(ctx->node, &act))
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "BlockedConv: activation '%s' is not supported",
                              ir_attr_string(ctx->node, "activation", ""));
    const int64_t KK = g.KH * g.KW, OP = g.OH * g.OW;
    if (g.N == 0 || OP == 0 || g.M == 0) return 0;
    blocked_weights own = {0}, *bw = &own;
    const ox_cpu_isa isa = st ? st->isa : ox_cpu_isa_active();
    if (st && st->packed && st->bw.M == g.M && st->bw.C == g.C && st->bw.KK == KK) {
        bw = (blocked_weights *)&st->bw;
    } else if (blocked_weights_pack(Wt->data, B ? B->data : NULL, g.M, g.C, KK, tile_blocks(isa), &own)) {
        return ox_cpu_oom(ctx);
    }
    const int padded = g.pads[0] || g.pads[1] || g.pads[2] || g.pads[3];
    const int64_t Hp = g.H + g.pads[0] + g.pads[2], Wp = g.W + g.pads[1] + g.pads[3];
    const int64_t lanes = g.blocked_in ? NCHWC_B : 1;
    const int64_t planes = g.blocked_in ? (g.C + NCHWC_B - 1) / NCHWC_B : g.C;
    /* the padded copy's size: pads from a model file may be huge */
    int64_t x_img, x_all;
    if (!ox_mul_i64(planes * lanes, Hp, &x_img) || !ox_mul_i64(x_img, Wp, &x_img) ||
        !ox_mul_i64(x_img, g.N, &x_all) || x_all > (int64_t)(SIZE_MAX / 2 / sizeof(float))) {
        blocked_weights_free(&own);
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "BlockedConv: the padded input is too large");
    }
    int64_t *k_off = malloc((size_t)KK * sizeof *k_off);
    float *xp = NULL;
    int lent = 0;
    if (padded) xp = ox_threadpool_scratch(ctx->pool, (size_t)x_all * sizeof(float), &lent);
    if (!k_off || (padded && !xp)) {
        free(k_off);
        if (xp) ox_threadpool_scratch_done(ctx->pool, xp, lent);
        blocked_weights_free(&own);
        return ox_cpu_oom(ctx);
    }
    if (padded) {
        pad_job pj = {&g, X->data, xp, Hp, Wp, lanes};
        ox_parallel_for(ctx->pool, g.N * planes, 1, pad_planes, &pj);
    }
    const int64_t x_pos = lanes, x_row = Wp * lanes;
    for (int64_t kh = 0; kh < g.KH; kh++)
        for (int64_t kw = 0; kw < g.KW; kw++) k_off[kh * g.KW + kw] = kh * g.d[0] * x_row + kw * g.d[1] * x_pos;
    tiles_job j = {
        .cv = {.C = g.C, .Cb = (g.C + NCHWC_B - 1) / NCHWC_B, .M = g.M, .Mb = g.Mb, .OW = g.OW, .OP = OP, .KK = KK, .k_off = k_off,
               .sh = g.s[0], .sw = g.s[1], .x_row = x_row, .x_pos = x_pos,
               .x_cb = g.blocked_in ? Hp * Wp * NCHWC_B : NCHWC_B * Hp * Wp, .x_c = g.blocked_in ? 1 : Hp * Wp,
               .w = bw->w, .bias = bw->bias, .act = act},
        .x = padded ? xp : X->data, .z = Z ? Z->data : NULL, .y = Y->data, .x_img = x_img,
        .z_img = Z && Z->dims[0] == g.N ? g.Mb * OP * NCHWC_B : 0,
        .nbt = tile_blocks(isa), .isa = isa, .stop = ctx->stop};
    j.groups = (g.Mb + j.nbt - 1) / j.nbt;
    j.tiles = (OP + NCHWC_NP - 1) / NCHWC_NP;
    const int64_t parts = ox_threadpool_size(ctx->pool) > 1 ? ox_threadpool_size(ctx->pool) : 1;
    int64_t per_group = (parts * 2 + g.N * j.groups - 1) / (g.N * j.groups);
    if (per_group > j.tiles) per_group = j.tiles;
    j.run = (j.tiles + per_group - 1) / per_group;
    j.runs = (j.tiles + j.run - 1) / j.run;
    /* slabs on a small plane (fewer than NCHWC_SMALL tiles): its weights
     * meet few positions, so they stream from memory (ResNet-50's
     * 7x7 layers: 1.08 ms for 2048 -> 512 in one pass, 0.97 in slabs);
     * elsewhere the group's weights stay in L2 for the tiles of the run,
     * and one pass saves reloading the partial sums (its 3x3 layers on
     * 56x56 and 28x28: 1.59 ms in slabs, 1.45 in one pass) */
    j.slab = j.tiles < NCHWC_SMALL ? NCHWC_SLAB_CHANNELS / (g.C < NCHWC_B ? g.C : NCHWC_B) : g.KH * g.KW * j.cv.Cb;
    ox_parallel_for(ctx->pool, g.N * j.groups * j.runs, 1, tiles_items, &j);
    free(k_off);
    if (xp) ox_threadpool_scratch_done(ctx->pool, xp, lent);
    blocked_weights_free(&own);
    return 0;
}

/* Packs a constant W (and B) once. */
static int blocked_conv_init(const ox_kernel_init *in, void **state, ox_error *err) {
    *state = NULL;
    ox_cpu_isa isa;
    if (ox_cpu_isa_choose(&isa, err) != 0) return -1;
    blocked_state *st = calloc(1, sizeof *st);
    if (!st) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    st->isa = isa;
    *state = st;
    const ox_tensor *w = in->n_inputs > 1 ? in->consts[1] : NULL;
    const ox_tensor *b = in->n_inputs > 2 ? in->consts[2] : NULL;
    const int b_missing = in->n_inputs <= 2 || in->node->inputs[2] < 0;
    if (!w || w->dtype != ONYX_FLOAT32 || w->rank != 4 || (!b && !b_missing)) return 0;
    if (b && (b->dtype != ONYX_FLOAT32 || b->rank != 1 || b->dims[0] != w->dims[0])) return 0;
    if (blocked_weights_pack(w->data, b ? b->data : NULL, w->dims[0], w->dims[1], w->dims[2] * w->dims[3],
                             tile_blocks(isa), &st->bw) == 0)
        st->packed = 1;
    return 0;
}

static void blocked_conv_release(void *state) {
    blocked_state *st = state;
    if (!st) return;
    blocked_weights_free(&st->bw);
    free(st);
}

static const char *blocked_conv_describe(const void *state) {
    static const char *const names[3] = {"channel-blocked direct convolution, portable",
                                         "channel-blocked direct convolution, avx2",
                                         "channel-blocked direct convolution, avx512"};
    const blocked_state *st = state;
    return st ? names[st->isa] : NULL;
}

static const ox_kernel_def KERNELS[] = {
    {"onyx", "BlockChannels", 1, 1, block_channels_compute, ox_cpu_supports_f32, reorder_init, free,
     reorder_describe},
    {"onyx", "UnblockChannels", 1, 1, unblock_channels_compute, ox_cpu_supports_f32, reorder_init, free,
     reorder_describe},
    {"onyx", "BlockedConv", 1, 1, blocked_conv_compute, ox_cpu_supports_f32, blocked_conv_init, blocked_conv_release,
     blocked_conv_describe},
};

const ox_kernel_table ox_cpu_kernels_nchwc = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
