/* CPU kernels of GridSample and AffineGrid. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/image.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"

/* ================================================================ */
/* GridSample
 *
 * Sampling follows torch.nn.functional.grid_sample, which the operator
 * mirrors, generalised to any number of spatial axes (GridSample-20):
 * each axis is resolved on its own (unnormalise, pad, pick 1, 2 or 4
 * taps) and a point's taps are the tensor product over the axes.
 * Coordinates are computed in the element type: with float data every
 * step is rounded to float (a double operation rounded to float is
 * exactly the float operation), so ties in nearest mode resolve the same
 * way as a float implementation. */

enum { GS_LINEAR, GS_NEAREST, GS_CUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };

#define GS_MAXTAP 64 /* taps per point: 4^3 for tricubic */
#define GS_BLOCK 64  /* points whose taps are computed together */

typedef struct gs_params {
    int mode, pad, align, f32, r;
    int64_t size[OX_MAX_RANK];   /* spatial extents */
    int64_t stride[OX_MAX_RANK]; /* plane strides of the spatial axes */
} gs_params;

static inline double gs_r(const gs_params *g, double v) { return g->f32 ? (double)(float)v : v; }

static double gs_unnormalize(const gs_params *g, double c, int64_t size) {
    if (g->align) return gs_r(g, gs_r(g, gs_r(g, c + 1.0) / 2.0) * (double)(size - 1));
    return gs_r(g, gs_r(g, gs_r(g, gs_r(g, c + 1.0) * (double)size) - 1.0) / 2.0);
}

static double gs_clip(double v, int64_t size) {
    double hi = (double)(size - 1);
    if (!(v > 0.0)) return isnan(v) ? v : 0.0;
    return v > hi ? hi : v;
}

/* Reflects v into [lo2/2, hi2/2] (bounds given doubled so they stay
 * integral), bouncing off each border as often as needed. */
static double gs_reflect(const gs_params *g, double v, double lo2, double hi2) {
    if (lo2 == hi2) return 0.0;
    double lo = lo2 / 2.0, span = (hi2 - lo2) / 2.0;
    v = fabs(gs_r(g, v - lo));
    double extra = gs_r(g, fmod(v, span));
    double flips = floor(gs_r(g, v / span));
    if (fmod(flips, 2.0) == 0.0) return gs_r(g, extra + lo);
    return gs_r(g, gs_r(g, span - extra) + lo);
}

static double gs_pad(const gs_params *g, double v, int64_t size) {
    if (g->pad == GS_BORDER) return gs_clip(v, size);
    if (g->pad == GS_REFLECTION) {
        if (g->align)
            v = gs_reflect(g, v, 0.0, 2.0 * (double)(size - 1));
        else
            v = gs_reflect(g, v, -1.0, 2.0 * (double)size - 1.0);
        return gs_clip(v, size);
    }
    return v;
}

/* Valid integer index for an integral coordinate, or -1. */
static int64_t gs_index(double v, int64_t size) {
    if (!(v >= 0.0 && v <= (double)(size - 1))) return -1;
    return (int64_t)v;
}

static int gs_axis_taps(int mode) { return mode == GS_LINEAR ? 2 : mode == GS_NEAREST ? 1 : 4; }

/* Taps of coordinate c (normalised) on spatial axis d: input indices
 * (-1: outside, contributes nothing) and weights. 0 when the coordinate
 * is not finite, which makes the whole point sample nothing. */
static int gs_axis(const gs_params *g, int d, double c, int64_t *idx, double *w) {
    int64_t size = g->size[d];
    double v = gs_unnormalize(g, c, size);
    if (g->mode == GS_CUBIC) {
        /* cubic pads each tap; a coordinate beyond the border region
         * ([-0.5, size - 0.5], or [0, size - 1] with align_corners) is
         * first brought back into it, as the ONNX reference does */
        double lo = g->align ? 0.0 : -0.5, hi = g->align ? (double)(size - 1) : (double)size - 0.5;
        if (v < lo || v > hi) {
            if (g->pad == GS_BORDER)
                v = gs_clip(v, size);
            else if (g->pad == GS_REFLECTION)
                v = g->align ? gs_reflect(g, v, 0.0, 2.0 * (double)(size - 1))
                             : gs_reflect(g, v, -1.0, 2.0 * (double)size - 1.0);
        }
        double f = floor(v);
        if (!isfinite(f)) return 0;
        double t = gs_r(g, v - f);
        for (int k = 0; k < 4; k++) {
            w[k] = gs_r(g, ox_image_cubic_weight(t - (double)(k - 1), -0.75));
            idx[k] = gs_index(gs_pad(g, f - 1.0 + k, size), size);
        }
        return 1;
    }
    v = gs_pad(g, v, size);
    if (!isfinite(v)) return 0;
    if (g->mode == GS_NEAREST) {
        idx[0] = gs_index(nearbyint(v), size);
        w[0] = 1.0;
        return 1;
    }
    double f = floor(v), e = gs_r(g, v - f);
    /* far outside, both taps miss; keeps the conversion below defined */
    if (!(f > -2.0 && f < (double)size + 1.0)) {
        idx[0] = idx[1] = -1;
        w[0] = w[1] = 0.0;
        return 1;
    }
    w[0] = gs_r(g, 1.0 - e);
    w[1] = e;
    idx[0] = gs_index(f, size);
    idx[1] = gs_index(f + 1.0, size);
    return 1;
}

/* Taps (plane offsets and weights) of one sampling point whose grid
 * vector is gv (gv[k] addresses spatial axis r - 1 - k). Out-of-bounds
 * taps get weight 0 and offset 0, which every plane has. */
static void gs_point_taps(const gs_params *g, const double *gv, int64_t *off, double *w) {
    int r = g->r, n = gs_axis_taps(g->mode), K = 1;
    int64_t ai[OX_MAX_RANK][4];
    double aw[OX_MAX_RANK][4];
    int ok = 1;
    for (int d = 0; d < r; d++) {
        K *= n;
        if (!gs_axis(g, d, gv[r - 1 - d], ai[d], aw[d])) ok = 0;
    }
    if (!ok) {
        for (int t = 0; t < K; t++) {
            off[t] = 0;
            w[t] = 0.0;
        }
        return;
    }
    /* axis 0 outermost, the last spatial axis innermost */
    for (int t = 0; t < K; t++) {
        int rem = t, valid = 1;
        int64_t o = 0;
        double wt = 1.0;
        int k[OX_MAX_RANK];
        for (int d = r - 1; d >= 0; d--) {
            k[d] = rem % n;
            rem /= n;
        }
        for (int d = 0; d < r; d++) {
            int64_t i = ai[d][k[d]];
            if (i < 0) {
                valid = 0;
                break;
            }
            o += i * g->stride[d];
            wt = d == 0 ? aw[d][k[d]] : gs_r(g, wt * aw[d][k[d]]);
        }
        off[t] = valid ? o : 0;
        w[t] = valid ? wt : 0.0;
    }
}

typedef struct gs_job {
    gs_params g;
    int64_t C, plane, npix, nblocks; /* npix: output points per batch */
    const float *xf, *gf;
    const double *xd, *gd;
    float *yf;
    double *yd;
    int failed;
} gs_job;

/* A block's taps, point i's K taps at [i * K, i * K + K): packed, so a
 * block of bilinear points stays in L1 while every channel reads it. */
typedef struct gs_taps {
    int64_t off[GS_BLOCK * GS_MAXTAP];
    double w[GS_BLOCK * GS_MAXTAP];
    float wf[GS_BLOCK * GS_MAXTAP];
} gs_taps;

/* One axis of a float32 bilinear point with zeros padding: the steps of
 * gs_unnormalize and gs_axis in float (each exactly the double step
 * rounded to float, as the general path computes them). 0 when the
 * coordinate is not finite. */
static inline int gs_axis_bilinear_f32(int align, float c, int64_t size, int64_t *idx, float *w) {
    float v = align ? (c + 1.0f) / 2.0f * (float)(size - 1) : ((c + 1.0f) * (float)size - 1.0f) / 2.0f;
    if (!isfinite(v)) return 0;
    float f = floorf(v), e = v - f;
    if (!(f > -2.0f && (double)f < (double)size + 1.0)) {
        idx[0] = idx[1] = -1;
        w[0] = w[1] = 0.0f;
        return 1;
    }
    w[0] = 1.0f - e;
    w[1] = e;
    idx[0] = f >= 0.0f && (double)f <= (double)(size - 1) ? (int64_t)f : -1;
    idx[1] = f + 1.0f >= 0.0f && (double)f + 1.0 <= (double)(size - 1) ? (int64_t)f + 1 : -1;
    return 1;
}

/* gs_point_taps for float32, two spatial axes, bilinear, zeros padding:
 * the same four taps and weights, without the general path's doubles
 * and loops over axes. */
static void gs_point_taps_bilinear2d_f32(const gs_params *g, const float *gv, int64_t *off, float *wf) {
    int64_t iy[2], ix[2];
    float wy[2], wx[2];
    if (!gs_axis_bilinear_f32(g->align, gv[1], g->size[0], iy, wy) ||
        !gs_axis_bilinear_f32(g->align, gv[0], g->size[1], ix, wx)) {
        for (int t = 0; t < 4; t++) {
            off[t] = 0;
            wf[t] = 0.0f;
        }
        return;
    }
    for (int t = 0; t < 4; t++) {
        int ky = t >> 1, kx = t & 1, valid = iy[ky] >= 0 && ix[kx] >= 0;
        off[t] = valid ? iy[ky] * g->stride[0] + ix[kx] : 0;
        wf[t] = valid ? wy[ky] * wx[kx] : 0.0f;
    }
}

static void gs_range(void *arg, int64_t begin, int64_t end) {
    gs_job *j = arg;
    const gs_params *g = &j->g;
    int K = 1;
    for (int d = 0; d < g->r; d++) K *= gs_axis_taps(g->mode);
    gs_taps *tp = malloc(sizeof *tp);
    if (!tp) {
        j->failed = 1; /* racy but only ever set to 1 */
        return;
    }
    for (int64_t b = begin; b < end; b++) {
        int64_t n = b / j->nblocks, p0 = (b % j->nblocks) * GS_BLOCK;
        int64_t cnt = j->npix - p0 < GS_BLOCK ? j->npix - p0 : GS_BLOCK;
        /* extents up to 2^24 are exact floats, as the fast path needs */
        const int fast = j->xf && g->r == 2 && g->mode == GS_LINEAR && g->pad == GS_ZEROS &&
                         g->size[0] <= (1 << 24) && g->size[1] <= (1 << 24);
        for (int64_t i = 0; i < cnt; i++) {
            int64_t gi = (n * j->npix + p0 + i) * g->r;
            if (fast) {
                gs_point_taps_bilinear2d_f32(g, j->gf + gi, tp->off + i * K, tp->wf + i * K);
                continue;
            }
            double gv[OX_MAX_RANK];
            for (int d = 0; d < g->r; d++) gv[d] = j->gf ? (double)j->gf[gi + d] : j->gd[gi + d];
            gs_point_taps(g, gv, tp->off + i * K, tp->w + i * K);
            if (j->xf)
                for (int t = 0; t < K; t++) tp->wf[i * K + t] = (float)tp->w[i * K + t];
        }
        for (int64_t c = 0; c < j->C; c++) {
            int64_t xo = (n * j->C + c) * j->plane, yo = (n * j->C + c) * j->npix + p0;
            if (j->xf) {
                const float *xp = j->xf + xo;
                float *yp = j->yf + yo;
                if (K == 4) {
                    for (int64_t i = 0; i < cnt; i++) {
                        const int64_t *o = tp->off + i * 4;
                        const float *w = tp->wf + i * 4;
                        yp[i] =
                            w[0] * xp[o[0]] + w[1] * xp[o[1]] + w[2] * xp[o[2]] + w[3] * xp[o[3]];
                    }
                } else {
                    for (int64_t i = 0; i < cnt; i++) {
                        float s = 0.0f;
                        for (int t = 0; t < K; t++) s += tp->wf[i * K + t] * xp[tp->off[i * K + t]];
                        yp[i] = s;
                    }
                }
            } else {
                const double *xp = j->xd + xo;
                double *yp = j->yd + yo;
                for (int64_t i = 0; i < cnt; i++) {
                    double s = 0.0;
                    for (int t = 0; t < K; t++) s += tp->w[i * K + t] * xp[tp->off[i * K + t]];
                    yp[i] = s;
                }
            }
        }
    }
    free(tp);
}

static int gs_parse_mode(const char *s) {
    /* GridSample-16 says bilinear / bicubic, 20 on linear / cubic */
    if (!strcmp(s, "linear") || !strcmp(s, "bilinear")) return GS_LINEAR;
    if (!strcmp(s, "nearest")) return GS_NEAREST;
    if (!strcmp(s, "cubic") || !strcmp(s, "bicubic")) return GS_CUBIC;
    return -1;
}

int ox_cpu_gridsample_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ox_cpu_input(ctx, 0), *grid = ox_cpu_input(ctx, 1);
    ox_tensor *y = ctx->outputs[0];
    if (!x || !grid || !y)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "GridSample: inputs X and grid are required");
    int r = x->rank - 2;
    if (r < 1 || grid->rank != x->rank || grid->dims[grid->rank - 1] != r)
        return ox_kernel_fail(
            ctx, ONYX_INVALID_ARGUMENT,
            "GridSample: expected X (N, C, D1..Dr) and grid (N, D1_out..Dr_out, r) "
            "with r >= 1; got ranks %d and %d",
            x->rank, grid->rank);
    if (x->dims[0] != grid->dims[0])
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "GridSample: batch of X (%lld) and grid (%lld) differ",
                              (long long)x->dims[0], (long long)grid->dims[0]);
    if (!ox_dtype_is_float(x->dtype) || !ox_dtype_is_float(grid->dtype))
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED,
                              "GridSample: X and grid must be float tensors");
    int64_t N = x->dims[0], C = x->dims[1];
    int64_t odims[OX_MAX_RANK];
    odims[0] = N;
    odims[1] = C;
    for (int d = 0; d < r; d++) odims[d + 2] = grid->dims[d + 1];
    if (!ox_shape_equal(y->dims, y->rank, odims, x->rank) || y->dtype != x->dtype)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR,
                              "GridSample: output shape does not match inputs");
    gs_job j;
    memset(&j, 0, sizeof j);
    const char *mode = ir_attr_string(ctx->node, "mode", "linear");
    const char *pad = ir_attr_string(ctx->node, "padding_mode", "zeros");
    j.g.mode = gs_parse_mode(mode);
    j.g.pad = strcmp(pad, "zeros") == 0        ? GS_ZEROS
              : strcmp(pad, "border") == 0     ? GS_BORDER
              : strcmp(pad, "reflection") == 0 ? GS_REFLECTION
                                               : -1;
    if (j.g.mode < 0 || j.g.pad < 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "GridSample: unsupported mode '%s' or padding_mode '%s'", mode, pad);
    int K = 1;
    for (int d = 0; d < r && K <= GS_MAXTAP; d++) K *= gs_axis_taps(j.g.mode);
    if (K > GS_MAXTAP)
        return ox_kernel_fail(
            ctx, ONYX_NOT_IMPLEMENTED,
            "GridSample: mode '%s' over %d spatial axes needs more than %d taps per point", mode, r,
            GS_MAXTAP);
    j.g.align = ir_attr_int(ctx->node, "align_corners", 0) != 0;
    j.g.r = r;
    j.plane = 1;
    for (int d = r - 1; d >= 0; d--) {
        j.g.size[d] = x->dims[d + 2];
        j.g.stride[d] = j.plane;
        j.plane *= j.g.size[d];
    }
    j.C = C;
    j.npix = ox_numel(odims + 2, r);
    int64_t total = ox_tensor_numel(y);
    if (total == 0) return 0;
    if (j.plane == 0) {
        /* nothing to sample from: every point is out of bounds */
        memset(y->data, 0, y->nbytes);
        return 0;
    }
    j.g.f32 = x->dtype != ONYX_FLOAT64;
    float *xo = NULL, *go = NULL, *yo = NULL;
    double *xdo = NULL, *gdo = NULL;
    int rc = 0;
    if (j.g.f32) {
        j.xf = ox_image_as_f32(x, &xo);
        j.gf = ox_image_as_f32(grid, &go);
        if (x->dtype == ONYX_FLOAT32)
            j.yf = y->data;
        else
            j.yf = yo = malloc(sizeof(float) * (size_t)total);
        if (!j.xf || !j.gf || !j.yf) rc = ox_cpu_oom(ctx);
    } else {
        j.xd = ox_image_as_f64(x, &xdo);
        j.gd = ox_image_as_f64(grid, &gdo);
        j.yd = y->data;
        if (!j.xd || !j.gd) rc = ox_cpu_oom(ctx);
    }
    if (rc == 0) {
        j.nblocks = (j.npix + GS_BLOCK - 1) / GS_BLOCK;
        int64_t grain = 256 / (C * K / 4 + 1) + 1;
        ox_parallel_for(ctx->pool, N * j.nblocks, grain, gs_range, &j);
        if (j.failed) rc = ox_cpu_oom(ctx);
        if (rc == 0 && yo)
            for (int64_t i = 0; i < total; i++) ox_set_f64(y->data, y->dtype, (size_t)i, yo[i]);
    }
    free(xo);
    free(go);
    free(yo);
    free(xdo);
    free(gdo);
    return rc;
}

int ox_cpu_image_float_inputs(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    (void)node;
    for (int i = 0; i < n_inputs && i < 2; i++) {
        if (!inputs[i] || inputs[i]->dtype == ONYX_UNDEFINED) continue;
        if (!ox_dtype_is_float(inputs[i]->dtype)) return 0;
    }
    return 1;
}

/* ================================================================ */
/* AffineGrid: grid = theta @ [x, y, (z,) 1] over the base grid of the
 * output size, whose coordinates span [-1, 1] per axis (pixel centres
 * without align_corners, pixel corners' centres with it). */

/* Normalised coordinate of index i on an axis of n samples. */
static double ag_base(int64_t i, int64_t n, int align) {
    if (align) return n > 1 ? -1.0 + 2.0 * (double)i / (double)(n - 1) : -1.0;
    return -1.0 + (2.0 * (double)i + 1.0) / (double)n;
}

int ox_cpu_affine_grid_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *theta = ox_cpu_input(ctx, 0), *size = ox_cpu_input(ctx, 1);
    ox_tensor *y = ctx->outputs[0];
    if (!theta || !size || !y)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "AffineGrid: inputs theta and size are required");
    int64_t ns = ox_tensor_numel(size);
    if (size->rank != 1 || (ns != 4 && ns != 5) || !ox_dtype_is_integer(size->dtype))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "AffineGrid: size must be 1-D int64 (N, C, H, W) or (N, C, D, H, W)");
    int r = (int)ns - 2;
    int64_t sz[5];
    for (int i = 0; i < (int)ns; i++) sz[i] = ox_get_i64(size->data, size->dtype, (size_t)i);
    if (theta->rank != 3 || theta->dims[0] != sz[0] || theta->dims[1] != r ||
        theta->dims[2] != r + 1)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "AffineGrid: theta must have shape (N, %d, %d) for a %d-D size", r,
                              r + 1, r);
    int64_t odims[5] = {sz[0]};
    for (int d = 0; d < r; d++) odims[d + 1] = sz[d + 2];
    odims[r + 1] = r;
    if (!ox_shape_equal(y->dims, y->rank, odims, r + 2) || y->dtype != theta->dtype)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR,
                              "AffineGrid: output shape does not match inputs");
    int align = ir_attr_int(ctx->node, "align_corners", 0) != 0;
    int64_t pts = ox_numel(odims + 1, r);
    for (int64_t n = 0; n < sz[0]; n++) {
        double th[3][4];
        for (int a = 0; a < r; a++)
            for (int b = 0; b <= r; b++)
                th[a][b] =
                    ox_get_f64(theta->data, theta->dtype, (size_t)((n * r + a) * (r + 1) + b));
        for (int64_t p = 0; p < pts; p++) {
            /* base vector (x, y[, z], 1): x walks the last axis */
            double v[4];
            int64_t rem = p;
            for (int d = r - 1; d >= 0; d--) {
                int64_t len = odims[d + 1];
                v[r - 1 - d] = ag_base(rem % len, len, align);
                rem /= len;
            }
            v[r] = 1.0;
            for (int a = 0; a < r; a++) {
                double s = 0.0;
                for (int b = 0; b <= r; b++) s += th[a][b] * v[b];
                ox_set_f64(y->data, y->dtype, (size_t)((n * pts + p) * r + a), s);
            }
        }
    }
    return 0;
}
