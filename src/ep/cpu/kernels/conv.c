/* CPU kernels of Conv, ConvTranspose and Col2Im, and the convolution
 * family's kernel table (ConvInteger and QLinearConv, DeformConv and
 * CausalConvWithState live in their own files: conv_extra.h).
 *
 * Forward convolution lowers each (image, group) to a GEMM: the weights
 * (Mg x Cg*kernel) times an im2col matrix (Cg*kernel x output positions)
 * built chunk by chunk, so scratch memory stays bounded and chunks can
 * run in parallel. Transposed convolution does the reverse: a GEMM into
 * a column matrix that is scattered (col2im) into the output. The grid
 * walks (im2col, col2im, the packed im2col of the fast paths) are in
 * conv_grid.c; the float32 fast paths' kernels in conv_fast.h's files. */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "ep/cpu/kernels/conv_extra.h"
#include "ep/cpu/kernels/conv_fast.h"
#include "ep/cpu/kernels/conv_geom.h"
#include "ep/cpu/kernels/conv_grid.h"
#include "ep/cpu/kernels/conv_q8.h"
#include "ep/cpu/kernels/gemm.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/cpu/kernels/saturate.h"
#include "ep/ep.h"
#include "format/artefacts.h"

extern const ox_kernel_table ox_cpu_kernels_conv;

/* Python-style floor division, for possibly negative padding totals. */
static int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

/* ================================================================ */
/* geometry */

/* x and w are the data and weight tensors, y the preallocated output. */
/* ConvTranspose output length on spatial axis i: the full length
 * stride * (in - 1) + output_padding + (k - 1) * dil + 1 less the pads,
 * which SAME auto_pad or output_shape (*want) split from the full length.
 * Every term is a model attribute, so each step is checked; returns 0
 * when one overflows int64. */
static int transpose_axis(const conv_geom *g, int i, int64_t opad, const int64_t *want, int ap,
                          int64_t *pb, int64_t *pe, int64_t *o) {
    int64_t ek, full, total;
    if (!ox_muladd_i64(g->k[i] - 1, g->dil[i], 1, &ek) ||
        !ox_muladd_i64(g->stride[i], g->in[i] - 1, opad, &full) || !ox_add_i64(full, ek, &full))
        return 0;
    if (want || ap == OX_PAD_SAME_UPPER || ap == OX_PAD_SAME_LOWER) {
        int64_t w;
        if (want) w = *want;
        else if (!ox_mul_i64(g->in[i], g->stride[i], &w)) return 0;
        if (!ox_sub_i64(full, w, &total)) return 0;
        if (ap == OX_PAD_SAME_UPPER) {
            *pb = floor_div(total, 2);
            *pe = total - *pb;
        } else {
            *pe = floor_div(total, 2);
            *pb = total - *pe;
        }
    } else if (ap == OX_PAD_VALID) {
        *pb = *pe = 0;
    }
    return ox_sub_i64(full, *pb, o) && ox_sub_i64(*o, *pe, o);
}

int ox_conv_geom_make(ox_kernel_ctx *ctx, const ox_tensor *x, const ox_tensor *w, const ox_tensor *y,
                      int transpose, conv_geom *g) {
    const char *op = ctx->node->op_type;
    if (x->rank < 3 || w->rank != x->rank || y->rank != x->rank)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: X must have rank >= 3 and W the same rank (got %d and %d)", op,
                              x->rank, w->rank);
    int r = x->rank - 2;
    g->r = r;
    g->N = x->dims[0];
    g->C = x->dims[1];
    g->G = ir_attr_int(ctx->node, "group", 1);
    if (g->G < 1) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: group must be >= 1", op);
    if (!transpose) {
        g->M = w->dims[0];
        g->Cg = w->dims[1];
        int64_t need;
        if (!ox_mul_i64(g->Cg, g->G, &need) || need != g->C)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: input channels %lld do not match weight channels %lld * group %lld",
                                  op, (long long)g->C, (long long)g->Cg, (long long)g->G);
        if (g->M % g->G)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: %lld output channels are not divisible by group %lld", op,
                                  (long long)g->M, (long long)g->G);
        g->Mg = g->M / g->G;
    } else {
        if (w->dims[0] != g->C || g->C % g->G)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: input channels %lld do not match weight's %lld (group %lld)", op,
                                  (long long)g->C, (long long)w->dims[0], (long long)g->G);
        g->Cg = g->C / g->G;
        g->Mg = w->dims[1];
        if (!ox_mul_i64(g->Mg, g->G, &g->M))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: output channels %lld * group %lld overflow int64", op,
                                  (long long)g->Mg, (long long)g->G);
    }
    if (y->dims[0] != g->N || y->dims[1] != g->M)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "%s: output shape does not match inputs", op);
    const int64_t *ks, *strides, *dils, *pads;
    if (ox_cpu_attr_ints(ctx, "kernel_shape", r, &ks) ||
        ox_cpu_attr_ints(ctx, "strides", r, &strides) ||
        ox_cpu_attr_ints(ctx, "dilations", r, &dils) || ox_cpu_attr_ints(ctx, "pads", 2 * r, &pads))
        return -1;
    int ap = ox_parse_auto_pad(ir_attr_string(ctx->node, "auto_pad", "NOTSET"));
    if (ap < 0) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: unknown auto_pad", op);
    const int64_t *opad = NULL, *oshape = NULL;
    size_t nos = 0;
    if (transpose) {
        if (ox_cpu_attr_ints(ctx, "output_padding", r, &opad)) return -1;
        oshape = ir_attr_ints(ctx->node, "output_shape", &nos);
        if (oshape && (int)nos != r && (int)nos != r + 2)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: bad output_shape", op);
    }
    g->in_sz = g->out_sz = g->k_sz = 1;
    for (int i = 0; i < r; i++) {
        g->in[i] = x->dims[i + 2];
        g->k[i] = w->dims[i + 2];
        if (ks && ks[i] != g->k[i])
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: kernel_shape does not match W", op);
        g->stride[i] = strides ? strides[i] : 1;
        g->dil[i] = dils ? dils[i] : 1;
        if (g->stride[i] < 1 || g->dil[i] < 1 || g->k[i] < 1)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: kernel sizes, strides and dilations must be positive", op);
        int64_t pb = pads ? pads[i] : 0, pe = pads ? pads[i + r] : 0, o;
        if (!transpose) {
            if (ox_window_axis(g->in[i], g->k[i], g->stride[i], g->dil[i], ap, 0, &pb, &pe, &o))
                return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                      "%s: kernel does not fit the padded input on spatial axis %d", op, i);
        } else {
            const int64_t *want = oshape ? &oshape[nos - (size_t)r + (size_t)i] : NULL;
            if (!transpose_axis(g, i, opad ? opad[i] : 0, want, ap, &pb, &pe, &o))
                return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                      "%s: output size on spatial axis %d overflows int64 (kernel %lld, "
                                      "stride %lld, dilation %lld, input %lld)",
                                      op, i, (long long)g->k[i], (long long)g->stride[i],
                                      (long long)g->dil[i], (long long)g->in[i]);
        }
        if (o != y->dims[i + 2])
            return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR,
                                  "%s: output size %lld on spatial axis %d differs from the computed %lld",
                                  op, (long long)y->dims[i + 2], i, (long long)o);
        g->out[i] = o;
        g->pb[i] = pb;
        /* an empty weight or input may still declare huge spatial dims */
        if (!ox_mul_i64(g->in_sz, g->in[i], &g->in_sz) || !ox_mul_i64(g->out_sz, g->out[i], &g->out_sz) ||
            !ox_mul_i64(g->k_sz, g->k[i], &g->k_sz))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: the input, output or kernel spatial sizes multiply past int64", op);
    }
    return 0;
}


/* ================================================================ */
/* float cores */

/* Scratch cap for one im2col chunk, in elements. */
#define COL_CAP (1 << 20)

typedef struct conv_job {
    const conv_geom *g;
    win_map map;
    const void *x, *w, *b;
    void *y;
    int64_t cols, chunks; /* chunk width and chunk count per (image, group) */
    int direct;           /* 1x1, stride 1, no padding: X is already the column matrix */
    ox_threadpool *pool;
    const ox_stop *stop;
    atomic_int failed;
} conv_job;

static int all_ones_kernel(const conv_geom *g) {
    for (int i = 0; i < g->r; i++)
        if (g->k[i] != 1 || g->stride[i] != 1 || g->pb[i] != 0 || g->in[i] != g->out[i]) return 0;
    return 1;
}

/* Chooses chunking and whether tasks run in parallel (1) or one after
 * another with a parallel GEMM inside (0). */
static int plan_chunks(conv_job *j, int64_t rows, int64_t positions, int64_t outer, int split) {
    int threads = ox_threadpool_size(j->pool);
    int64_t cols = positions > 0 ? positions : 1;
    if (rows * cols > COL_CAP) {
        cols = COL_CAP / (rows > 0 ? rows : 1);
        cols = cols < 64 ? 64 : cols & ~(int64_t)15;
    }
    int64_t chunks = (positions + cols - 1) / cols;
    if (chunks < 1) chunks = 1;
    if (split && outer * chunks < threads && positions >= 512) {
        int64_t want = (threads + outer - 1) / outer;
        int64_t c2 = (positions + want - 1) / want;
        if (c2 < 256) c2 = 256;
        if (c2 < cols) {
            cols = c2;
            chunks = (positions + cols - 1) / cols;
        }
    }
    j->cols = cols;
    j->chunks = chunks;
    return threads > 1 && outer * chunks >= threads;
}

#define DEF_CONV_CORE(T, SUF, GEMM, IM2COL, COL2IM)                                              \
    static void conv_tasks_##SUF(void *arg, int64_t t0, int64_t t1) {                           \
        conv_job *j = arg;                                                                      \
        const conv_geom *g = j->g;                                                              \
        const int64_t K = g->Cg * g->k_sz;                                                      \
        T *buf = NULL;                                                                          \
        if (!j->direct) {                                                                       \
            buf = malloc(sizeof(T) * (size_t)(K * j->cols > 0 ? K * j->cols : 1));              \
            if (!buf) {                                                                         \
                atomic_store(&j->failed, 1);                                                    \
                return;                                                                         \
            }                                                                                   \
        }                                                                                       \
        for (int64_t t = t0; t < t1; t++) {                                                     \
            if (ox_stop_requested(j->stop)) break;                                              \
            int64_t ng = t / j->chunks, ch = t % j->chunks;                                     \
            int64_t n = ng / g->G, grp = ng % g->G;                                             \
            int64_t p0 = ch * j->cols, p1 = p0 + j->cols < g->out_sz ? p0 + j->cols : g->out_sz; \
            const T *xg = (const T *)j->x + (n * g->C + grp * g->Cg) * g->in_sz;                \
            const T *wg = (const T *)j->w + grp * g->Mg * K;                                    \
            T *yg = (T *)j->y + (n * g->M + grp * g->Mg) * g->out_sz;                           \
            const T *bm;                                                                        \
            int64_t ldb;                                                                        \
            if (j->direct) {                                                                    \
                bm = xg + p0;                                                                   \
                ldb = g->in_sz;                                                                 \
            } else {                                                                            \
                IM2COL(g, &j->map, xg, p0, p1, 0, K, buf);                                            \
                bm = buf;                                                                       \
                ldb = p1 - p0;                                                                  \
            }                                                                                   \
            if (GEMM(j->pool, j->stop, 0, 0, g->Mg, p1 - p0, K, (T)1, wg, K, bm, ldb, (T)0, yg + p0,     \
                     g->out_sz)) {                                                              \
                atomic_store(&j->failed, 1);                                                    \
                break;                                                                          \
            }                                                                                   \
            if (j->b) {                                                                         \
                const T *b = (const T *)j->b + grp * g->Mg;                                     \
                for (int64_t mm = 0; mm < g->Mg; mm++) add_bias_##SUF(yg + mm * g->out_sz + p0, b[mm], p1 - p0); \
            }                                                                                   \
        }                                                                                       \
        free(buf);                                                                              \
    }                                                                                           \
                                                                                                \
    /* unused for float32 (conv_f32 runs it); the float64 instance serves \
     * float64 Conv */                                                      \
    __attribute__((unused)) static int conv_core_##SUF(ox_kernel_ctx *ctx, const conv_geom *g,  \
                                                       const T *x, const T *w,                  \
                               const T *b, T *y) {                                              \
        if (g->N == 0 || g->M == 0 || g->out_sz == 0) return 0;                                 \
        conv_job j = {.g = g, .x = x, .w = w, .b = b, .y = y, .pool = ctx->pool, .stop = ctx->stop};               \
        atomic_init(&j.failed, 0);                                                              \
        win_map_init(&j.map, g, 1);                                                             \
        j.direct = all_ones_kernel(g);                                                          \
        int par = plan_chunks(&j, j.direct ? 0 : g->Cg * g->k_sz, g->out_sz, g->N * g->G, 1);   \
        int64_t tasks = g->N * g->G * j.chunks;                                                 \
        if (par)                                                                                \
            ox_parallel_for(ctx->pool, tasks, 1, conv_tasks_##SUF, &j);                         \
        else                                                                                    \
            conv_tasks_##SUF(&j, 0, tasks);                                                     \
        return atomic_load(&j.failed) ? ox_cpu_oom(ctx) : 0;                                    \
    }                                                                                           \
                                                                                                \
    /* one task per (image, group); chunks of input positions inside */                         \
    static void convt_tasks_##SUF(void *arg, int64_t t0, int64_t t1) {                          \
        conv_job *j = arg;                                                                      \
        const conv_geom *g = j->g;                                                              \
        const int64_t rows = g->Mg * g->k_sz;                                                   \
        T *buf = malloc(sizeof(T) * (size_t)(rows * j->cols > 0 ? rows * j->cols : 1));         \
        if (!buf) {                                                                             \
            atomic_store(&j->failed, 1);                                                        \
            return;                                                                             \
        }                                                                                       \
        for (int64_t t = t0; t < t1; t++) {                                                     \
            int64_t n = t / g->G, grp = t % g->G;                                               \
            const T *xg = (const T *)j->x + (n * g->C + grp * g->Cg) * g->in_sz;                \
            const T *wg = (const T *)j->w + grp * g->Cg * rows;                                 \
            T *yg = (T *)j->y + (n * g->M + grp * g->Mg) * g->out_sz;                           \
            for (int64_t mm = 0; mm < g->Mg; mm++) {                                            \
                T bv = j->b ? ((const T *)j->b)[grp * g->Mg + mm] : (T)0;                       \
                T *row = yg + mm * g->out_sz;                                                   \
                for (int64_t p = 0; p < g->out_sz; p++) row[p] = bv;                            \
            }                                                                                   \
            for (int64_t p0 = 0; p0 < g->in_sz; p0 += j->cols) {                                \
                if (ox_stop_requested(j->stop)) break;                                          \
                int64_t p1 = p0 + j->cols < g->in_sz ? p0 + j->cols : g->in_sz;                 \
                if (GEMM(j->pool, j->stop, 1, 0, rows, p1 - p0, g->Cg, (T)1, wg, rows, xg + p0,          \
                         g->in_sz, (T)0, buf, p1 - p0)) {                                       \
                    atomic_store(&j->failed, 1);                                                \
                    break;                                                                      \
                }                                                                               \
                COL2IM(g, &j->map, buf, p0, p1, yg);                                            \
            }                                                                                   \
        }                                                                                       \
        free(buf);                                                                              \
    }                                                                                           \
                                                                                                \
    static int convt_core_##SUF(ox_kernel_ctx *ctx, const conv_geom *g, const T *x, const T *w, \
                                const T *b, T *y) {                                             \
        if (g->N == 0 || g->M == 0 || g->out_sz == 0) return 0;                                 \
        conv_job j = {.g = g, .x = x, .w = w, .b = b, .y = y, .pool = ctx->pool, .stop = ctx->stop};               \
        atomic_init(&j.failed, 0);                                                              \
        win_map_init(&j.map, g, 0);                                                             \
        int par = plan_chunks(&j, g->Mg * g->k_sz, g->in_sz, g->N * g->G, 0);                   \
        int64_t tasks = g->N * g->G;                                                            \
        if (par && tasks >= ox_threadpool_size(ctx->pool))                                      \
            ox_parallel_for(ctx->pool, tasks, 1, convt_tasks_##SUF, &j);                        \
        else                                                                                    \
            convt_tasks_##SUF(&j, 0, tasks);                                                    \
        return atomic_load(&j.failed) ? ox_cpu_oom(ctx) : 0;                                    \
    }

static void add_bias_f32(float *y, float b, int64_t n) { ox_vec_add_scalar(y, b, n); }
static void add_bias_f64(double *y, double b, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] += b;
}

DEF_CONV_CORE(float, f32, ox_gemm_f32, ox_conv_im2col_f32, ox_conv_col2im_f32)
DEF_CONV_CORE(double, f64, ox_gemm_f64, ox_conv_im2col_f64, ox_conv_col2im_f64)

/* ================================================================ */
/* float32: depthwise kernel or GEMM on prepacked weights, with the
 * epilogue (bias, residual, activation) fused (conv_fast.h) */

/* Per-node state, made at session creation: the instruction-set variant
 * (so the kernel choice is fixed for the session), the path and, for
 * the GEMM path, the packed weights. */
typedef enum conv_path {
    CONV_PER_RUN,
    CONV_DEPTHWISE,
    CONV_GEMM_1X1,
    CONV_GEMM_IM2COL,
    CONV_GEMM_DIRECT, /* from the padded input (AVX2), see direct_fits */
    CONV_WINOGRAD,    /* 3x3 stride 1 by F(2x2, 3x3), see winograd_fits */
    CONV_WINOGRAD4,   /* the same by F(4x4, 3x3), see winograd_tile */
    CONV_GEMM_CV,     /* channels in the lanes (small planes, AVX-512), see cv_plane */
    CONV_POOLED,      /* one position per image: a fully connected layer, see pooled_plane */
} conv_path;

typedef struct conv_state {
    ox_cpu_isa isa;
    conv_path path;
    ox_conv_packed packed; /* CONV_GEMM_*: W packed once */
    ox_gemm_weights *fc;   /* CONV_POOLED: W as the weights of a fully connected layer */
    int cached;            /* packed.data lies in the artefact file: not ours to free */
} conv_state;

/* Output channels per group up to which a convolution reads its padded
 * input directly: with more, each packed im2col column is reused
 * by enough weight panels to repay building it, and reading the columns
 * from the padded planes for every panel costs more (ResNet-50's 256- and
 * 512-channel 3x3 convolutions: 14% slower at 1 thread) */
#define DIRECT_MAX_M 64
/* 1 when the geometry suits the convolution from a padded input
 * (conv_direct.c): 2-D, not a plain product (1x1, stride 1, unpadded),
 * few output channels */
static int direct_fits(const conv_geom *g) {
    return g->r == 2 && !all_ones_kernel(g) && g->pb[0] >= 0 && g->pb[1] >= 0 &&
           g->Mg <= DIRECT_MAX_M;
}

/* Input and output channels from which a 3x3 stride-1 convolution takes
 * Winograd's minimal filtering (conv_winograd.c), chosen at session
 * creation from the weights. Once F(4x4, 3x3) came, it paid from 16
 * channels; measured at one thread on AMD Zen 4 (3x3 + Relu, onyx bench
 * medians, the direct GEMM from the padded input against F(4x4), AVX-512
 * and, in brackets, the AVX2 variants): 16 -> 16 on 128x128 0.73 against
 * 0.53 ms (0.83 / 0.76), 16 -> 32 on 128x128 1.47 / 1.12 (1.58 / 1.17),
 * 32 -> 32 on 64x64 0.72 / 0.37 (0.78 / 0.45), 32 -> 24 on 32x32 0.14 /
 * 0.10 (0.14 / 0.10), 32 -> 32 on 16x16 0.055 / 0.043 (0.068 / 0.053);
 * RT-DETR's and D-FINE's backbones have these. Below 16 it did not
 * (AVX2: 8 -> 16 on 128x128 0.40 against 0.47, 12 -> 12 on 64x64 even).
 * (The first bound, 48, was measured on an AVX2 machine with F(2x2,
 * 3x3) alone: 32 -> 32 on 64x64 no faster.) */
#define WINOGRAD_MIN_CHANNELS 16
/* Below this many input or output channels the transforms weigh more
 * against the products, and a small plane does not pay for them: 16 ->
 * 16 on 16x16 0.017 ms direct against 0.022 by F(4x4) with AVX2 (0.018
 * with AVX-512), on 32x32 even with AVX2. Such convolutions take
 * Winograd's path only on a plane of at least WINOGRAD_NARROW_MIN_PLANE
 * positions known at session creation. */
#define WINOGRAD_WIDE_CHANNELS 32
#define WINOGRAD_NARROW_MIN_PLANE 1024
/* The least output positions per image a run takes Winograd's path for,
 * once the session chose it: with fewer (a single 3x3 window) the tiles
 * are mostly padding. Above it the path runs even on small planes, where
 * it used to hand over to the GEMM with weights packed per run, slower
 * still: on AMD Zen 4 at one thread, 64 channels on 16x16 0.20 ms that
 * way against 0.12 by F(4x4, 3x3), 8x8 0.11 against 0.06, 96 on 16x16
 * 0.47 against 0.19, 128 on 8x8 0.26 against 0.19 (RT-DETR's encoder at
 * a 256x256 input). */
#define WINOGRAD_MIN_POSITIONS 16
/* Transformed weights (16 C M floats) past this size are streamed from
 * memory for every band of tiles, and the layers that have them run at
 * low resolution with few tiles to share them: 512 channels on 7x7 (16
 * tiles, 16 MiB) ran 1.1 times faster by the im2col GEMM's 9 C M floats,
 * while 256 channels on 7x7 (4 MiB) still ran 1.8 times faster by
 * Winograd. Decided from the weights alone, at session creation. */
#define WINOGRAD_MAX_WEIGHT_BYTES ((int64_t)8 << 20)
/* The same bound for F(4x4, 3x3), whose weights are 36 C M floats
 * (2.25 times F(2x2, 3x3)'s). Measured at one thread on AMD Zen 4
 * (3x3 + Relu, onyx bench medians), F(4x4) against F(2x2): 64 channels on
 * 56x56 0.95 against 1.28 ms, 128 on 28x28 0.91 against 1.24, 192 on
 * 20x20 1.26 against 1.37, 256 on 28x28 4.1 against 4.7, 256 on 14x14 (9
 * MiB of weights) 1.34 against 1.36. Alone, a node's weights stay in the
 * last-level cache from run to run; in a model they do not, and inside
 * ResNet-50 its five 256-channel 3x3 convolutions took 2.2 ms each by
 * F(4x4) (9 MiB streamed from memory per run) against 1.65 by F(2x2) (4
 * MiB). Hence the bound: 128 channels (2.3 MiB) take F(4x4). */
#define WINOGRAD4_MAX_WEIGHT_BYTES ((int64_t)3 << 20)

/* The Winograd tile (4 or 2) for C input and M output channels: F(4x4)
 * while its weights stay within their bound (ResNet-50's 64 and 128
 * channels, RT-DETR's 64 to 128). */
static int winograd_tile(int64_t C, int64_t M) {
    return 36 * C * M * (int64_t)sizeof(float) <= WINOGRAD4_MAX_WEIGHT_BYTES ? 4 : 2;
}

/* 1 when this run's geometry takes the Winograd path of tile s */
static int winograd_fits(const conv_geom *g, int s) {
    if (g->r != 2 || g->G != 1 || g->k[0] != 3 || g->k[1] != 3 || g->stride[0] != 1 ||
        g->stride[1] != 1 || g->dil[0] != 1 || g->dil[1] != 1 || g->pb[0] < 0 || g->pb[1] < 0 ||
        g->C < WINOGRAD_MIN_CHANNELS || g->M < WINOGRAD_MIN_CHANNELS)
        return 0;
    return g->out_sz >= WINOGRAD_MIN_POSITIONS &&
           ox_conv_winograd_fits(g->C, g->out[0], g->out[1], g->pb[0], g->pb[1], s);
}

/* 1 when the depthwise kernel handles this geometry */
static int depthwise_fits(const conv_geom *g) { return g->Cg == 1 && g->r <= 2; }

/* st: the session's choices for this node (NULL: none, weights packed
 * for this run) */
static int conv_f32_paths(ox_kernel_ctx *ctx, const conv_state *st, const conv_geom *g, const float *x,
                          const float *w, const float *b, const float *z, const ox_act *act, float *y,
                          const float *xs, int64_t xs_img) {
    if (g->N == 0 || g->M == 0 || g->out_sz == 0) return 0;
    ox_cpu_isa isa = st ? st->isa : ox_cpu_isa_active();
    if (depthwise_fits(g)) {
        int two = g->r == 2, L = g->r - 1;
        ox_dw_args d = {.N = g->N, .C = g->C, .mult = g->Mg,
                        .IH = two ? g->in[0] : 1, .IW = g->in[L],
                        .OH = two ? g->out[0] : 1, .OW = g->out[L],
                        .KH = two ? g->k[0] : 1, .KW = g->k[L],
                        .sh = two ? g->stride[0] : 1, .sw = g->stride[L],
                        .dh = two ? g->dil[0] : 1, .dw = g->dil[L],
                        .ph = two ? g->pb[0] : 0, .pw = g->pb[L],
                        .x = x, .w = w, .bias = b, .z = z, .y = y, .act = *act, .isa = isa};
        int rc = ox_conv_depthwise_f32(ctx->pool, ctx->stop, &d);
        if (rc < 0) return ox_cpu_oom(ctx);
        if (rc > 0) return 0;
    }
    /* A geometry the session's choice did not foresee (dynamic sizes
     * with little work) falls through to the GEMM paths, which then pack
     * W for this run: only the transformed weights are kept. */
    const int wino_s = !st ? 0 : st->path == CONV_WINOGRAD4 ? 4 : st->path == CONV_WINOGRAD ? 2 : 0;
    if (wino_s && st->packed.data && st->packed.Mg == g->M && st->packed.K == g->C &&
        winograd_fits(g, wino_s)) {
        ox_conv_winograd_args wa = {.u = &st->packed, .s = wino_s, .N = g->N, .C = g->C, .M = g->M,
                                    .IH = g->in[0], .IW = g->in[1], .OH = g->out[0],
                                    .OW = g->out[1], .ph = g->pb[0], .pw = g->pb[1], .x = x,
                                    .bias = b, .z = z, .y = y, .act = *act, .isa = isa};
        int rc = ox_conv_winograd_f32(ctx->pool, ctx->stop, &wa);
        if (rc < 0) return ox_cpu_oom(ctx);
        if (rc > 0) return 0;
    }
    if (g->G == 1 && g->in_sz == 1 && all_ones_kernel(g)) {
        /* one position per image (a squeeze-and-excitation block's
         * layers on pooled [N, C, 1, 1]): Y[n, :] = W X[n, :] for every
         * image is one product X W^T, a fully connected layer, not one
         * ragged column of the packed tile per image (MobileNetV3's
         * 576 -> 144: 0.058 -> 0.02 ms). With W packed as that layer's
         * weights the few rows of X read each weight once for all the
         * images (576 -> 144 at batch 2 in the model, weights no longer
         * in cache: 0.045 -> 0.029 ms); else W's rows are read in place. */
        int rc = st && st->path == CONV_POOLED && ox_gemm_weights_k(st->fc) == g->C &&
                         ox_gemm_weights_n(st->fc) == g->M
                     ? ox_gemm_f32_weights(ctx->pool, ctx->stop, g->N, 1.0f, x, g->C, st->fc, 0.0f, y, g->M)
                     : ox_gemm_f32(ctx->pool, ctx->stop, 0, 1, g->N, g->M, g->C, 1.0f, x, g->C, w, g->C,
                                   0.0f, y, g->M);
        if (rc != 0) return ox_cpu_oom(ctx);
        if (b || z || act->kind != OX_ACT_NONE)
            for (int64_t n = 0; n < g->N; n++)
                ox_conv_epilogue(y + n * g->M, 1, g->M, 1, b, z ? z + n * g->M : NULL, 1, act, isa);
        return 0;
    }
    const int64_t K = g->Cg * g->k_sz;
    ox_conv_cols_job cj;
    ox_conv_cols_job_init(&cj, g, x);
    ox_conv_gemm_args ga = {.N = g->N, .P = g->out_sz, .x = x, .x_img = g->C * g->in_sz,
                            .x_grp = g->Cg * g->in_sz, .cols = all_ones_kernel(g) ? NULL : ox_conv_cols,
                            .cols_arg = &cj, .x_scale = xs, .x_scale_img = xs_img, .bias = b, .z = z,
                            .y = y, .act = *act, .isa = isa};
    if (st && st->path == CONV_GEMM_CV && g->G == 1 && st->packed.Mg == g->M && st->packed.K == K) {
        ga.w = &st->packed;
        int rc = ox_conv_cv_run(ctx->pool, ctx->stop, &ga);
        if (rc != 0) return rc < 0 ? ox_cpu_oom(ctx) : 0;
    }
    ox_conv_packed own = {0}, *pw = &own;
    if (st && st->path != CONV_GEMM_CV && st->packed.data && st->packed.G == g->G && st->packed.Mg == g->Mg &&
        st->packed.K == K)
        pw = (ox_conv_packed *)&st->packed;
    else if (ox_conv_pack_weights(w, g->G, g->Mg, K, &own))
        return ox_cpu_oom(ctx);
    if (direct_fits(g)) {
        ox_conv_direct_args da = {.w = pw, .N = g->N, .IH = g->in[0], .IW = g->in[1],
                                  .OH = g->out[0], .OW = g->out[1], .KH = g->k[0], .KW = g->k[1],
                                  .sh = g->stride[0], .sw = g->stride[1], .dh = g->dil[0],
                                  .dw = g->dil[1], .ph = g->pb[0], .pw = g->pb[1],
                                  .x = x, .bias = b, .z = z, .y = y, .act = *act, .isa = isa};
        int rc = ox_conv_direct_f32(ctx->pool, ctx->stop, &da);
        if (rc != 0) {
            ox_conv_packed_free(&own);
            return rc < 0 ? ox_cpu_oom(ctx) : 0;
        }
    }
    ga.w = pw;
    int rc = ox_conv_gemm_run(ctx->pool, ctx->stop, &ga);
    ox_conv_packed_free(&own);
    return rc ? ox_cpu_oom(ctx) : 0;
}

/* 1 when conv_f32_paths reaches a GEMM that reads X as the column
 * matrix (1x1, one group: the packed GEMM, or on small planes the
 * channels-in-lanes one), which applies an input scale as it copies X. */
static int scale_in_pack(const conv_geom *g) {
    return g->G == 1 && g->in_sz > 1 && all_ones_kernel(g) && !depthwise_fits(g);
}

/* X times S (xs: per image, one factor per channel) into a new buffer,
 * for the paths that read X elsewhere than the packing; NULL when out of
 * memory. */
static float *scale_input(const conv_geom *g, const float *x, const float *xs, int64_t xs_img) {
    float *t = malloc(sizeof(float) * (size_t)(g->N * g->C * g->in_sz));
    if (!t) return NULL;
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t c = 0; c < g->C; c++) {
            const float f = xs[n * xs_img + c];
            const float *src = x + (n * g->C + c) * g->in_sz;
            float *d = t + (n * g->C + c) * g->in_sz;
            for (int64_t p = 0; p < g->in_sz; p++) d[p] = src[p] * f;
        }
    return t;
}

/* The float convolution: Y = act(Conv(X * S, W, b) + z), with S (xs,
 * xs_img: one factor per image and input channel) absent when xs is
 * NULL. The 1x1 GEMMs scale X as they pack it; the other paths (which
 * the optimizer's fusion does not make) read a scaled copy. */
static int conv_f32(ox_kernel_ctx *ctx, const conv_geom *g, const float *x, const float *w,
                    const float *b, const float *z, const ox_act *act, float *y, const float *xs,
                    int64_t xs_img) {
    if (g->N == 0 || g->M == 0 || g->out_sz == 0) return 0;
    float *scaled = NULL;
    if (xs && !scale_in_pack(g)) {
        scaled = scale_input(g, x, xs, xs_img);
        if (!scaled) return ox_cpu_oom(ctx);
        x = scaled;
        xs = NULL;
    }
    int rc = conv_f32_paths(ctx, ctx->state, g, x, w, b, z, act, y, xs, xs_img);
    free(scaled);
    return rc;
}

int ox_conv_f32_unplanned(ox_kernel_ctx *ctx, const conv_geom *g, const float *x, const float *w, const float *b,
                          const ox_act *act, float *y) {
    return conv_f32_paths(ctx, NULL, g, x, w, b, NULL, act, y, NULL, 0);
}

/* 1 when every stride attribute is 1 (or there is none). */
static int unit_strides(const ir_node *node) {
    size_t n = 0;
    const int64_t *v = ir_attr_ints(node, "strides", &n);
    for (size_t i = 0; v && i < n; i++)
        if (v[i] != 1) return 0;
    return 1;
}

/* 1 when W's spatial sizes are all 1 and the attributes make the
 * convolution a plain product (no im2col). */
static int pointwise(const ir_node *node, const ox_tensor *w) {
    for (int d = 2; d < w->rank; d++)
        if (w->dims[d] != 1) return 0;
    if (!unit_strides(node)) return 0;
    size_t n = 0;
    const int64_t *v = ir_attr_ints(node, "pads", &n);
    for (size_t i = 0; v && i < n; i++)
        if (v[i] != 0) return 0;
    const char *ap = ir_attr_string(node, "auto_pad", "NOTSET");
    return strcmp(ap, "NOTSET") == 0 || strcmp(ap, "VALID") == 0;
}

/* 1 when W and the attributes make a convolution Winograd's path takes
 * (the run checks the geometry again: pads, sizes, the work); plane:
 * the output positions per image known at session creation, else 0. A
 * plane known to be smaller than WINOGRAD_MIN_POSITIONS would only fall
 * through to the GEMM with weights packed per run. */
static int winograd_weights(const ir_node *node, const ox_tensor *w, int64_t plane) {
    if (w->rank != 4 || w->dims[2] != 3 || w->dims[3] != 3 || ir_attr_int(node, "group", 1) != 1 ||
        w->dims[0] < WINOGRAD_MIN_CHANNELS || w->dims[1] < WINOGRAD_MIN_CHANNELS ||
        (plane > 0 && plane < WINOGRAD_MIN_POSITIONS) ||
        ((w->dims[0] < WINOGRAD_WIDE_CHANNELS || w->dims[1] < WINOGRAD_WIDE_CHANNELS) &&
         plane < WINOGRAD_NARROW_MIN_PLANE) ||
        w->dims[0] * w->dims[1] * 16 * (int64_t)sizeof(float) > WINOGRAD_MAX_WEIGHT_BYTES ||
        !unit_strides(node))
        return 0;
    size_t n = 0;
    const int64_t *d = ir_attr_ints(node, "dilations", &n);
    for (size_t i = 0; d && i < n; i++)
        if (d[i] != 1) return 0;
    return 1;
}

/* The output positions per image of type t when inference knew its
 * spatial sizes, else 0. */
static int64_t plane_of(const ir_type *t) {
    if (!t || t->rank < 3) return 0;
    int64_t P = 1;
    for (int d = 2; d < t->rank; d++) {
        if (t->dims[d] < 1 || t->dims[d] > ((int64_t)1 << 20)) return 0;
        P *= t->dims[d];
    }
    return P;
}

static int64_t known_plane(const ox_kernel_init *in) { return plane_of(in->out_type); }

int ox_conv_takes_winograd(const ir_node *node, const ox_tensor *w, const ir_type *out) {
    return w->dtype == ONYX_FLOAT32 && winograd_weights(node, w, plane_of(out));
}

/* 1 when the session knows the output has one position per image and
 * the convolution is a plain product over the channels (1x1, unit
 * strides, no padding, one group): a fully connected layer on pooled
 * features. */
static int pooled_plane(const ox_kernel_init *in, const ox_tensor *w, int64_t G) {
    return G == 1 && known_plane(in) == 1 && pointwise(in->node, w);
}

/* 1 when the session takes the channels-in-lanes GEMM for this node: one
 * group, AVX-512, an output plane known now whose positions would leave a
 * tenth of the position-lane tiles idle (ox_conv_cv_suits). */
static int cv_plane(const ox_kernel_init *in, ox_cpu_isa isa, int64_t G, int64_t M, int64_t K) {
    return isa >= OX_ISA_AVX512 && G == 1 && ox_conv_cv_suits(known_plane(in), M, K);
}

/* W packed for the GEMM: taken from the artefact file when an earlier
 * session of this model on this machine saved it (the layout is the same
 * for every ISA variant), else packed and offered to the file. Returns
 * -1 when packing fails (the run then packs per call). */
static int pack_or_reuse(const ox_kernel_init *in, const float *w, int64_t G, int64_t Mg, int64_t K,
                         int winograd, conv_state *st) {
    /* which layout (winograd): Winograd's tile, 2 or 4, for its (winograd
     * + 2)^2 groups of Mg x (K / 9) transformed weights; 0 for the GEMM's
     * panels; -1 for the channels-in-lanes GEMM's transposed blocks */
    const int cv = winograd < 0;
    size_t bytes = cv ? ox_conv_cv_bytes(Mg, K)
                   : winograd ? ox_conv_winograd_bytes(Mg, K / 9, winograd)
                              : ox_conv_packed_bytes(G, Mg, K);
    if (winograd > 0) G = (winograd + 2) * (winograd + 2), K /= 9;
    char name[512];
    int n = in->artefacts && in->key && bytes
                ? snprintf(name, sizeof name, "%s/%s/%lldx%lldx%lld",
                           cv ? "convcv" : winograd == 4 ? "wino4" : winograd ? "wino" : "conv", in->key,
                           (long long)G, (long long)Mg, (long long)K)
                : -1;
    int named = n > 0 && (size_t)n < sizeof name;
    const void *saved = named ? ox_artefacts_find(in->artefacts, name, bytes) : NULL;
    if (saved) {
        st->packed = (ox_conv_packed){G, Mg, K, (int64_t)(bytes / sizeof(float) / (size_t)(G * K)),
                                      (float *)(uintptr_t)saved};
        st->cached = 1;
        return 0;
    }
    if ((cv ? ox_conv_cv_pack(w, Mg, K, &st->packed)
         : winograd ? ox_conv_winograd_pack(w, Mg, K, winograd, &st->packed)
                    : ox_conv_pack_weights(w, G, Mg, K, &st->packed)) != 0)
        return -1;
    /* losing the chance to save only costs the next session the packing */
    if (named) (void)ox_artefacts_add(in->artefacts, name, st->packed.data, bytes);
    return 0;
}

/* Chooses the variant once; packs a constant float32 W for the GEMM
 * path (any other W is packed per call). */
static int conv_init(const ox_kernel_init *in, void **state, ox_error *err) {
    const ir_node *node = in->node;
    const ox_tensor *const *consts = in->consts;
    int n_inputs = in->n_inputs;
    *state = NULL;
    ox_cpu_isa isa;
    if (ox_cpu_isa_choose(&isa, err) != 0) return -1;
    const ox_tensor *w = n_inputs > 1 ? consts[1] : NULL;
    conv_state *st = calloc(1, sizeof *st);
    if (!st) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    st->isa = isa;
    st->path = CONV_PER_RUN;
    *state = st;
    if (!w || w->dtype != ONYX_FLOAT32 || w->rank < 3 || w->dims[0] < 1) return 0;
    int64_t G = ir_attr_int(node, "group", 1), M = w->dims[0];
    if (G < 1 || M % G) return 0; /* the run reports the mismatch */
    int64_t K = ox_tensor_numel(w) / M;
    if (w->dims[1] == 1 && w->rank <= 4) { /* depthwise: read in place */
        st->path = CONV_DEPTHWISE;
        return 0;
    }
    if (winograd_weights(node, w, known_plane(in))) {
        const int s = winograd_tile(w->dims[1], M);
        if (pack_or_reuse(in, w->data, 1, M, K, s, st) == 0)
            st->path = s == 4 ? CONV_WINOGRAD4 : CONV_WINOGRAD;
        return 0;
    }
    if (pooled_plane(in, w, G)) {
        st->fc = ox_gemm_weights_new(1, K, M, w->data, K);
        if (st->fc) st->path = CONV_POOLED;
        return 0;
    }
    if (cv_plane(in, isa, G, M, K)) {
        if (pack_or_reuse(in, w->data, 1, M, K, -1, st) == 0) st->path = CONV_GEMM_CV;
        return 0;
    }
    if (pack_or_reuse(in, w->data, G, M / G, K, 0, st) == 0)
        st->path = pointwise(node, w) ? CONV_GEMM_1X1
                   : isa >= OX_ISA_AVX2 && w->rank == 4 && M / G <= DIRECT_MAX_M
                       ? CONV_GEMM_DIRECT
                       : CONV_GEMM_IM2COL;
    return 0;
}

static const char *conv_describe(const void *state) {
    static const char *const names[9][3] = {
        {"weights packed per run, portable", "weights packed per run, avx2",
         "weights packed per run, avx512"},
        {"depthwise, portable", "depthwise, avx2", "depthwise, avx512"},
        {"1x1 gemm on packed weights, portable", "1x1 gemm on packed weights, avx2",
         "1x1 gemm on packed weights, avx512"},
        {"im2col gemm on packed weights, portable", "im2col gemm on packed weights, avx2",
         "im2col gemm on packed weights, avx512"},
        {"gemm from the padded input on packed weights, portable",
         "gemm from the padded input on packed weights, avx2",
         "gemm from the padded input on packed weights, avx512"},
        {"winograd F(2x2,3x3) on transformed weights, portable",
         "winograd F(2x2,3x3) on transformed weights, avx2",
         "winograd F(2x2,3x3) on transformed weights, avx512"},
        {"winograd F(4x4,3x3) on transformed weights, portable",
         "winograd F(4x4,3x3) on transformed weights, avx2",
         "winograd F(4x4,3x3) on transformed weights, avx512"},
        {"channels-in-lanes gemm on packed weights, portable",
         "channels-in-lanes gemm on packed weights, avx2",
         "channels-in-lanes gemm on packed weights, avx512"},
        {"one position per image: fully connected, portable", "one position per image: fully connected, avx2",
         "one position per image: fully connected, avx512"},
    };
    static const char *const cached[6][3] = {
        {"1x1 gemm on packed weights from the artefact cache, portable",
         "1x1 gemm on packed weights from the artefact cache, avx2",
         "1x1 gemm on packed weights from the artefact cache, avx512"},
        {"im2col gemm on packed weights from the artefact cache, portable",
         "im2col gemm on packed weights from the artefact cache, avx2",
         "im2col gemm on packed weights from the artefact cache, avx512"},
        {"gemm from the padded input on packed weights from the artefact cache, portable",
         "gemm from the padded input on packed weights from the artefact cache, avx2",
         "gemm from the padded input on packed weights from the artefact cache, avx512"},
        {"winograd F(2x2,3x3) on transformed weights from the artefact cache, portable",
         "winograd F(2x2,3x3) on transformed weights from the artefact cache, avx2",
         "winograd F(2x2,3x3) on transformed weights from the artefact cache, avx512"},
        {"winograd F(4x4,3x3) on transformed weights from the artefact cache, portable",
         "winograd F(4x4,3x3) on transformed weights from the artefact cache, avx2",
         "winograd F(4x4,3x3) on transformed weights from the artefact cache, avx512"},
        {"channels-in-lanes gemm on packed weights from the artefact cache, portable",
         "channels-in-lanes gemm on packed weights from the artefact cache, avx2",
         "channels-in-lanes gemm on packed weights from the artefact cache, avx512"},
    };
    const conv_state *st = state;
    if (st && st->cached && st->path >= CONV_GEMM_1X1 && st->path <= CONV_GEMM_CV)
        return cached[st->path - CONV_GEMM_1X1][st->isa];
    return st ? names[st->path][st->isa] : NULL;
}

static void conv_release(void *state) {
    conv_state *st = state;
    if (!st) return;
    if (!st->cached) ox_conv_packed_free(&st->packed);
    ox_gemm_weights_free(st->fc);
    free(st);
}

/* ================================================================ */
/* float16 and bfloat16 support: float32 copies in and out */

static int run_half(ox_kernel_ctx *ctx, const conv_geom *g, int transpose) {
    const ox_tensor *X = ox_cpu_input(ctx, 0), *W = ox_cpu_input(ctx, 1), *B = ox_cpu_input(ctx, 2);
    ox_tensor *Y = ctx->outputs[0];
    int64_t ny = ox_tensor_numel(Y);
    float *x = ox_cpu_to_f32(X), *w = ox_cpu_to_f32(W), *b = ox_cpu_to_f32(B);
    float *y = malloc(sizeof(float) * (size_t)(ny > 0 ? ny : 1));
    int rc;
    if (!x || !w || !y || (B && !b)) {
        rc = ox_cpu_oom(ctx);
    } else {
        ox_act none = {OX_ACT_NONE, 0, 0};
        rc = transpose ? convt_core_f32(ctx, g, x, w, b, y) : conv_f32(ctx, g, x, w, b, NULL, &none, y, NULL, 0);
        if (!rc) ox_cpu_from_f32(Y, y);
    }
    free(x);
    free(w);
    free(b);
    free(y);
    return rc;
}

int ox_conv_check_bias(ox_kernel_ctx *ctx, const ox_tensor *b, int64_t m) {
    if (b && (b->rank != 1 || b->dims[0] != m))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: bias must be 1-D with %lld values",
                              ctx->node->op_type, (long long)m);
    return 0;
}

static int conv_like(ox_kernel_ctx *ctx, int transpose) {
    const ox_tensor *X = ox_cpu_input(ctx, 0), *W = ox_cpu_input(ctx, 1), *B = ox_cpu_input(ctx, 2);
    ox_tensor *Y = ctx->outputs[0];
    conv_geom g;
    if (ox_conv_geom_make(ctx, X, W, Y, transpose, &g) || ox_conv_check_bias(ctx, B, g.M)) return -1;
    if (W->dtype != X->dtype || (B && B->dtype != X->dtype))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: X, W and B must share one element type",
                              ctx->node->op_type);
    ox_act none = {OX_ACT_NONE, 0, 0};
    switch (X->dtype) {
    case ONYX_FLOAT32:
        if (transpose) return convt_core_f32(ctx, &g, X->data, W->data, B ? B->data : NULL, Y->data);
        return conv_f32(ctx, &g, X->data, W->data, B ? B->data : NULL, NULL, &none, Y->data, NULL, 0);
    case ONYX_FLOAT64:
        return transpose ? convt_core_f64(ctx, &g, X->data, W->data, B ? B->data : NULL, Y->data)
                         : conv_core_f64(ctx, &g, X->data, W->data, B ? B->data : NULL, Y->data);
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16:
        return run_half(ctx, &g, transpose);
    default:
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "%s: element type %s is not supported",
                              ctx->node->op_type, ox_dtype_name(X->dtype));
    }
}

/* onyx FusedConv (schema in src/ops/contrib.c): Conv of X scaled by S,
 * then + Z, then the activation, all in the convolution's epilogue.
 * float32 only. */
static int fused_conv_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = ox_cpu_input(ctx, 0), *W = ox_cpu_input(ctx, 1), *B = ox_cpu_input(ctx, 2),
                    *Z = ox_cpu_input(ctx, 3), *S = ox_cpu_input(ctx, 4);
    ox_tensor *Y = ctx->outputs[0];
    conv_geom g;
    if (ox_conv_geom_make(ctx, X, W, Y, 0, &g) || ox_conv_check_bias(ctx, B, g.M)) return -1;
    if (X->dtype != ONYX_FLOAT32 || W->dtype != ONYX_FLOAT32 || (B && B->dtype != ONYX_FLOAT32))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "FusedConv: X, W and B must be float32");
    const float *xs = NULL;
    int64_t xs_img = 0;
    if (S) {
        int ok = S->dtype == ONYX_FLOAT32 && S->rank == X->rank && S->dims[1] == X->dims[1] &&
                 (S->dims[0] == 1 || S->dims[0] == X->dims[0]);
        for (int d = 2; ok && d < S->rank; d++) ok = S->dims[d] == 1;
        if (!ok)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "FusedConv: S must be float32 [N or 1, C, 1, ...] of X's rank, one factor "
                                  "per image and input channel (X: %lld images, %lld channels)",
                                  (long long)X->dims[0], (long long)X->dims[1]);
        xs = S->data;
        xs_img = S->dims[0] == 1 ? 0 : X->dims[1];
    }
    int broadcast = Z && !ox_shape_equal(Z->dims, Z->rank, Y->dims, Y->rank);
    if (Z && (Z->dtype != ONYX_FLOAT32 || Z->rank > Y->rank))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "FusedConv: Z must be float32 of the output's rank");
    for (int d = 0; broadcast && d < Z->rank; d++) {
        int64_t zd = Z->dims[Z->rank - 1 - d], yd = Y->dims[Y->rank - 1 - d];
        if (zd != 1 && zd != yd)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "FusedConv: Z (dimension %lld on axis %d) does not broadcast to the output (%lld)",
                                  (long long)zd, Z->rank - 1 - d, (long long)yd);
    }
    ox_act act;
    if (ox_act_of_node(ctx->node, &act))
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "FusedConv: activation '%s' is not supported",
                              ir_attr_string(ctx->node, "activation", ""));
    if (!broadcast)
        return conv_f32(ctx, &g, X->data, W->data, B ? B->data : NULL, Z ? Z->data : NULL, &act, Y->data, xs,
                        xs_img);
    /* a Z that broadcasts (sizes the optimizer could not know): the
     * convolution, then Z and the activation element by element */
    ox_act none = {OX_ACT_NONE, 0, 0};
    if (conv_f32(ctx, &g, X->data, W->data, B ? B->data : NULL, NULL, &none, Y->data, xs, xs_img)) return -1;
    int64_t zs[OX_MAX_RANK], n = ox_tensor_numel(Y), inner = Y->rank ? Y->dims[Y->rank - 1] : 1;
    int64_t st = 1;
    for (int d = Y->rank - 1; d >= 0; d--) {
        int64_t zd = d >= Y->rank - Z->rank ? Z->dims[d - (Y->rank - Z->rank)] : 1;
        zs[d] = zd == 1 ? 0 : st;
        st *= zd;
    }
    float *y = Y->data;
    const float *z = Z->data;
    for (int64_t base = 0; base < n && inner > 0; base += inner) {
        int64_t zi = 0, rest = base;
        for (int d = Y->rank - 1; d >= 0; d--) {
            zi += (rest % Y->dims[d]) * zs[d];
            rest /= Y->dims[d];
        }
        for (int64_t i = 0; i < inner; i++) y[base + i] += z[zi + i * zs[Y->rank - 1]];
        ox_conv_epilogue(y + base, inner, 1, inner, NULL, NULL, 0, &act, ctx->state ? ((const conv_state *)ctx->state)->isa : ox_cpu_isa_active());
    }
    return 0;
}

static int conv_compute(ox_kernel_ctx *ctx) { return conv_like(ctx, 0); }
static int conv_transpose_compute(ox_kernel_ctx *ctx) { return conv_like(ctx, 1); }

/* ================================================================ */
/* Col2Im: the scatter half of a transposed convolution on its own. The
 * input's columns are the blocks (sliding-window positions over the
 * padded image) and its rows the (channel, kernel offset) pairs, so the
 * transposed convolution's col2im runs with the block grid as its
 * "input" and the image as its "output". */

static int col2im_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = ox_cpu_input(ctx, 0), *IS = ox_cpu_input(ctx, 1), *BS = ox_cpu_input(ctx, 2);
    ox_tensor *Y = ctx->outputs[0];
    if (!X || !IS || !BS)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "Col2Im: inputs input, image_shape and block_shape are required");
    int64_t r64 = ox_tensor_numel(IS);
    if (X->rank != 3 || IS->rank != 1 || BS->rank != 1 || ox_tensor_numel(BS) != r64 || r64 < 1 ||
        r64 > OX_MAX_RANK - 2 || !ox_dtype_is_integer(IS->dtype) || !ox_dtype_is_integer(BS->dtype))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "Col2Im: expected a 3-D input and 1-D integer image_shape and block_shape "
                              "of one equal length (1 to %d)",
                              OX_MAX_RANK - 2);
    int r = (int)r64;
    const int64_t *strides, *dils, *pads;
    if (ox_cpu_attr_ints(ctx, "strides", r, &strides) || ox_cpu_attr_ints(ctx, "dilations", r, &dils) ||
        ox_cpu_attr_ints(ctx, "pads", 2 * r, &pads))
        return -1;
    conv_geom g;
    memset(&g, 0, sizeof g);
    g.r = r;
    g.N = X->dims[0];
    g.G = 1;
    g.in_sz = g.out_sz = g.k_sz = 1;
    for (int i = 0; i < r; i++) {
        int64_t img = ox_get_i64(IS->data, IS->dtype, (size_t)i);
        int64_t k = ox_get_i64(BS->data, BS->dtype, (size_t)i);
        int64_t s = strides ? strides[i] : 1, d = dils ? dils[i] : 1;
        int64_t pb = pads ? pads[i] : 0, pe = pads ? pads[i + r] : 0;
        if (img < 0 || k < 1 || s < 1 || d < 1 || pb < 0 || pe < 0)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "Col2Im: invalid geometry on spatial axis %d (image %lld, block %lld, "
                                  "stride %lld, dilation %lld, pads %lld/%lld)",
                                  i, (long long)img, (long long)k, (long long)s, (long long)d,
                                  (long long)pb, (long long)pe);
        int64_t span = img + pb + pe - ((k - 1) * d + 1);
        if (span < 0)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "Col2Im: the dilated block does not fit the padded image on axis %d", i);
        g.in[i] = span / s + 1; /* blocks along this axis */
        g.out[i] = img;
        g.k[i] = k;
        g.stride[i] = s;
        g.dil[i] = d;
        g.pb[i] = pb;
        g.in_sz *= g.in[i];
        g.out_sz *= img;
        g.k_sz *= k;
    }
    if (g.k_sz == 0 || X->dims[1] % g.k_sz != 0 || X->dims[2] != g.in_sz)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "Col2Im: input has shape [%lld, %lld, %lld]; expected C * %lld rows and "
                              "%lld blocks",
                              (long long)X->dims[0], (long long)X->dims[1], (long long)X->dims[2],
                              (long long)g.k_sz, (long long)g.in_sz);
    g.C = g.M = g.Cg = g.Mg = X->dims[1] / g.k_sz;
    if (Y->rank != r + 2 || Y->dims[0] != g.N || Y->dims[1] != g.C || Y->dtype != X->dtype ||
        !ox_shape_equal(Y->dims + 2, r, g.out, r))
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Col2Im: output shape does not match inputs");
    int64_t ny = ox_tensor_numel(Y);
    win_map m;
    win_map_init(&m, &g, 0);
    int64_t per_in = g.C * g.k_sz * g.in_sz, per_out = g.C * g.out_sz;
    switch (X->dtype) {
    case ONYX_FLOAT32:
    case ONYX_FLOAT64: {
        memset(Y->data, 0, Y->nbytes);
        for (int64_t n = 0; n < g.N && g.in_sz > 0; n++) {
            if (X->dtype == ONYX_FLOAT32)
                ox_conv_col2im_f32(&g, &m, (const float *)X->data + n * per_in, 0, g.in_sz,
                           (float *)Y->data + n * per_out);
            else
                ox_conv_col2im_f64(&g, &m, (const double *)X->data + n * per_in, 0, g.in_sz,
                           (double *)Y->data + n * per_out);
        }
        return 0;
    }
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16: {
        float *x = ox_cpu_to_f32(X), *y = calloc((size_t)(ny > 0 ? ny : 1), sizeof(float));
        if (!x || !y) {
            free(x);
            free(y);
            return ox_cpu_oom(ctx);
        }
        for (int64_t n = 0; n < g.N && g.in_sz > 0; n++)
            ox_conv_col2im_f32(&g, &m, x + n * per_in, 0, g.in_sz, y + n * per_out);
        ox_cpu_from_f32(Y, y);
        free(x);
        free(y);
        return 0;
    }
    default:
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "Col2Im: element type %s is not supported",
                              ox_dtype_name(X->dtype));
    }
}

static const ox_kernel_def KERNELS[] = {
    {"", "Conv", 1, 22, conv_compute, ox_cpu_supports_float, conv_init, conv_release, conv_describe},
    {"onyx", "FusedConv", 1, 1, fused_conv_compute, ox_cpu_supports_f32, conv_init, conv_release,
     conv_describe},
    {"", "ConvTranspose", 1, 22, conv_transpose_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "ConvInteger", 10, 17, ox_cpu_conv_integer_compute, NULL, NULL, NULL, NULL},
    {"", "QLinearConv", 10, 17, ox_cpu_qlinear_conv_compute, NULL, NULL, NULL, NULL},
    {"", "Col2Im", 18, 18, col2im_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "DeformConv", 19, 22, ox_cpu_deform_conv_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "CausalConvWithState", 27, 27, ox_cpu_causal_conv_compute, ox_cpu_supports_float, NULL, NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_conv = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
