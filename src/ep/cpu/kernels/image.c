/* CPU kernels of the image operators RoiAlign, MaxRoiPool and
 * NonMaxSuppression, and
 * the family's kernel table, which also lists the kernels of resize.c
 * (Resize, Upsample) and grid_sample.c (GridSample, AffineGrid). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/gemm.h"
#include "ep/cpu/kernels/image.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"

extern const ox_kernel_table ox_cpu_kernels_image;

/* ================================================================ */
/* RoiAlign */

/* Bins never sample more than this many points per axis. */
#define RA_MAX_GRID 65536

typedef struct ra_sample {
    int64_t off[4];
    double w[4];
} ra_sample;

typedef struct ra_job {
    const double *x, *rois;
    const int64_t *bidx;
    double *y;
    int64_t C, H, W, oh, ow;
    int64_t gh_fixed; /* sampling_ratio, 0 = adaptive */
    double scale, offset;
    int half_pixel, max_mode;
    size_t max_samples;    /* largest gh * gw over all rois */
    unsigned char *failed; /* per roi: its sample buffer could not be allocated */
} ra_job;

/* Bilinear taps of one sample point; points beyond one pixel outside the
 * map contribute nothing. */
static void ra_taps(const ra_job *j, double yy, double xx, ra_sample *s) {
    if (!(yy >= -1.0 && yy <= (double)j->H && xx >= -1.0 && xx <= (double)j->W)) {
        for (int k = 0; k < 4; k++) {
            s->off[k] = 0;
            s->w[k] = 0.0;
        }
        return;
    }
    if (yy <= 0) yy = 0;
    if (xx <= 0) xx = 0;
    int64_t y0 = (int64_t)yy, x0 = (int64_t)xx, y1, x1;
    if (y0 >= j->H - 1) {
        y0 = y1 = j->H - 1;
        yy = (double)y0;
    } else {
        y1 = y0 + 1;
    }
    if (x0 >= j->W - 1) {
        x0 = x1 = j->W - 1;
        xx = (double)x0;
    } else {
        x1 = x0 + 1;
    }
    double ly = yy - (double)y0, lx = xx - (double)x0, hy = 1.0 - ly, hx = 1.0 - lx;
    s->off[0] = y0 * j->W + x0;
    s->off[1] = y0 * j->W + x1;
    s->off[2] = y1 * j->W + x0;
    s->off[3] = y1 * j->W + x1;
    s->w[0] = hy * hx;
    s->w[1] = hy * lx;
    s->w[2] = ly * hx;
    s->w[3] = ly * lx;
}

static int64_t ra_grid(double len, int64_t bins) {
    double g = ceil(len / (double)bins);
    if (!(g > 0.0)) return 0;
    if (g > RA_MAX_GRID) return -1;
    return (int64_t)g;
}

/* Sampling grid of one roi (rows, columns) and its bin sizes; -1 grid
 * when adaptive sampling would need too many points. */
static void ra_roi_geom(const ra_job *j, int64_t r, double *sh, double *sw, double *bh, double *bw,
                        int64_t *gh, int64_t *gw) {
    const double *roi = j->rois + 4 * r;
    *sw = roi[0] * j->scale - j->offset;
    *sh = roi[1] * j->scale - j->offset;
    double rw = roi[2] * j->scale - j->offset - *sw, rh = roi[3] * j->scale - j->offset - *sh;
    if (!j->half_pixel) {
        /* the legacy mode never lets a roi shrink below one pixel */
        if (!(rw >= 1.0)) rw = 1.0;
        if (!(rh >= 1.0)) rh = 1.0;
    }
    *bh = rh / (double)j->oh;
    *bw = rw / (double)j->ow;
    *gh = j->gh_fixed > 0 ? j->gh_fixed : ra_grid(rh, j->oh);
    *gw = j->gh_fixed > 0 ? j->gh_fixed : ra_grid(rw, j->ow);
}

/* The taps of bin (ph, pw) of a roi (its corner sh, sw, bin sizes bh,
 * bw, grid gh x gw) into buf; returns their count, gh * gw. */
static size_t ra_bin_samples(const ra_job *j, double sh, double sw, double bh, double bw, int64_t gh,
                             int64_t gw, int64_t ph, int64_t pw, ra_sample *buf) {
    size_t ns = 0;
    for (int64_t iy = 0; iy < gh; iy++) {
        double yy = sh + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
        for (int64_t ix = 0; ix < gw; ix++) {
            double xx = sw + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
            ra_taps(j, yy, xx, &buf[ns++]);
        }
    }
    return ns;
}

/* What a path does with one bin of roi r: its ns sample taps s, averaged
 * over count (gh * gw, at least 1). */
typedef void (*ra_bin_fn)(const ra_job *j, const void *path, int64_t r, int64_t ph, int64_t pw,
                          const ra_sample *s, size_t ns, double count);

/* Rois [begin, end): each bin's sample taps made and handed to bin. */
static void ra_rois(const ra_job *j, int64_t begin, int64_t end, ra_bin_fn bin, const void *path) {
    ra_sample *buf = malloc((j->max_samples > 0 ? j->max_samples : 1) * sizeof *buf);
    for (int64_t r = begin; r < end; r++) {
        if (!buf) {
            j->failed[r] = 1;
            continue;
        }
        double sh, sw, bh, bw;
        int64_t gh, gw;
        ra_roi_geom(j, r, &sh, &sw, &bh, &bw, &gh, &gw);
        const double count = (double)(gh * gw > 1 ? gh * gw : 1);
        for (int64_t ph = 0; ph < j->oh; ph++)
            for (int64_t pw = 0; pw < j->ow; pw++) {
                const size_t ns = ra_bin_samples(j, sh, sw, bh, bw, gh, gw, ph, pw, buf);
                bin(j, path, r, ph, pw, buf, ns, count);
            }
    }
    free(buf);
}

/* The reference bin: one channel at a time, in double. */
static void ra_bin_f64(const ra_job *j, const void *path, int64_t r, int64_t ph, int64_t pw,
                       const ra_sample *s, size_t ns, double count) {
    (void)path;
    const double *xb = j->x + j->bidx[r] * j->C * j->H * j->W;
    double *yr = j->y + r * j->C * j->oh * j->ow;
    for (int64_t c = 0; c < j->C; c++) {
        const double *xp = xb + c * j->H * j->W;
        double acc = 0.0;
        for (size_t i = 0; i < ns; i++) {
            const ra_sample *q = &s[i];
            if (j->max_mode) {
                /* the operator's max pools the weighted corner values */
                double m = q->w[0] * xp[q->off[0]];
                for (int k = 1; k < 4; k++) {
                    double v = q->w[k] * xp[q->off[k]];
                    if (v > m) m = v;
                }
                acc = i == 0 || m > acc ? m : acc;
            } else {
                acc += q->w[0] * xp[q->off[0]] + q->w[1] * xp[q->off[1]] + q->w[2] * xp[q->off[2]] +
                       q->w[3] * xp[q->off[3]];
            }
        }
        yr[(c * j->oh + ph) * j->ow + pw] = j->max_mode ? acc : acc / count;
    }
}

static void ra_range(void *arg, int64_t begin, int64_t end) { ra_rois(arg, begin, end, ra_bin_f64, NULL); }

/* float32, average mode: the feature map turned channel-innermost once
 * per call (xt: per image, H * W positions of C floats), so each sample
 * tap adds a weight times C consecutive floats into the bin's C sums,
 * eight at a time. The reference path above gathers one channel at a
 * time in double: Faster R-CNN's box head (50 rois of 256 channels, 7x7
 * bins of 2x2 samples) took 5.3 ms there, serially converting its input
 * and output. The sampling geometry and tap weights are the reference's
 * (double, ra_taps), each weight rounded to float; the sums are float,
 * in sample then tap order (multiplies and adds, the same on every
 * machine), divided by the sample count at the end. */
#define RA_XT_MAX ((int64_t)1 << 24) /* floats of the turned map */

/* channels one pass of a bin's sums keeps in registers */
#define RA_CB 32

typedef struct ra_f32_job {
    const ra_job *j;
    const float *xt; /* N x (H W) x C */
    float *y;
} ra_f32_job;

/* One bin of one roi: its ns samples' taps (s, each weight rounded to
 * float) summed over every channel, RA_CB channels at a time, then
 * written to the bin's place in each channel's plane (yb, planes bins
 * apart). */
static void ra_f32_bin(const float *xb, int64_t C, const ra_sample *s, size_t ns, float count, float *yb,
                       int64_t bins) {
    int64_t c0 = 0;
    for (; c0 + RA_CB <= C; c0 += RA_CB) {
        ox_v4f acc[RA_CB / 4];
        for (int i = 0; i < RA_CB / 4; i++) acc[i] = OX_V4F_SPLAT(0.0f);
        for (size_t q = 0; q < ns; q++)
            for (int k = 0; k < 4; k++) {
                const ox_v4f wv = OX_V4F_SPLAT((float)s[q].w[k]);
                const float *xp = xb + s[q].off[k] * C + c0;
                for (int i = 0; i < RA_CB / 4; i++) {
                    ox_v4f x;
                    OX_V4F_LOAD(x, xp + 4 * i);
                    acc[i] += wv * x;
                }
            }
        float sums[RA_CB];
        memcpy(sums, acc, sizeof sums);
        for (int c = 0; c < RA_CB; c++) yb[(c0 + c) * bins] = sums[c] / count;
    }
    for (int64_t c = c0; c < C; c++) {
        float a = 0.0f;
        for (size_t q = 0; q < ns; q++)
            for (int k = 0; k < 4; k++) a += (float)s[q].w[k] * xb[s[q].off[k] * C + c];
        yb[c * bins] = a / count;
    }
}

static void ra_bin_f32(const ra_job *j, const void *path, int64_t r, int64_t ph, int64_t pw,
                       const ra_sample *s, size_t ns, double count) {
    const ra_f32_job *f = path;
    const int64_t bins = j->oh * j->ow;
    ra_f32_bin(f->xt + j->bidx[r] * j->H * j->W * j->C, j->C, s, ns, (float)count,
               f->y + r * j->C * bins + ph * j->ow + pw, bins);
}

static void ra_f32_range(void *arg, int64_t begin, int64_t end) {
    const ra_f32_job *f = arg;
    ra_rois(f->j, begin, end, ra_bin_f32, f);
}

/* Runs the float32 path when it applies (0: it does not, nothing done;
 * -1 out of memory; 1 done). */
static int roialign_f32(ox_kernel_ctx *ctx, const ox_tensor *x, ra_job *j, int64_t R, float *y) {
    int64_t HW = j->H * j->W, n_img = x->dims[0], all;
    if (j->max_mode || !ox_mul_i64(HW, j->C, &all) || !ox_mul_i64(all, n_img, &all) || all > RA_XT_MAX)
        return 0;
    /* the pool's scratch when it is free: no allocation per run */
    int lent = 0;
    float *xt = ox_threadpool_scratch(ctx->pool, sizeof(float) * (size_t)(all > 0 ? all : 1), &lent);
    if (!xt) return -1;
    const float *xs = x->data;
    for (int64_t n = 0; n < n_img; n++)
        for (int64_t c = 0; c < j->C; c++) {
            const float *src = xs + (n * j->C + c) * HW;
            float *dst = xt + n * HW * j->C + c;
            for (int64_t p = 0; p < HW; p++) dst[p * j->C] = src[p];
        }
    ra_f32_job f = {.j = j, .xt = xt, .y = y};
    ox_parallel_for(ctx->pool, R, 1, ra_f32_range, &f);
    ox_threadpool_scratch_done(ctx->pool, xt, lent);
    return 1;
}

static int roialign_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ox_cpu_input(ctx, 0), *rois = ox_cpu_input(ctx, 1),
                    *bi = ox_cpu_input(ctx, 2);
    ox_tensor *y = ctx->outputs[0];
    if (!x || !rois || !bi || !y)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "RoiAlign: inputs X, rois and batch_indices are required");
    if (x->rank != 4)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "RoiAlign: X must be 4-D, got rank %d", x->rank);
    if (rois->rank != 2 || rois->dims[1] != 4)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "RoiAlign: rois must have shape (num_rois, 4)");
    if (bi->rank != 1 || bi->dims[0] != rois->dims[0])
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "RoiAlign: batch_indices must have shape (%lld)",
                              (long long)rois->dims[0]);
    if (!ox_dtype_is_float(x->dtype) || !ox_dtype_is_float(rois->dtype) ||
        !ox_dtype_is_integer(bi->dtype))
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "RoiAlign: unsupported input types");
    ra_job j;
    memset(&j, 0, sizeof j);
    const ir_node *node = ctx->node;
    j.oh = ir_attr_int(node, "output_height", 1);
    j.ow = ir_attr_int(node, "output_width", 1);
    j.gh_fixed = ir_attr_int(node, "sampling_ratio", 0);
    j.scale = ir_attr_float(node, "spatial_scale", 1.0f);
    const char *mode = ir_attr_string(node, "mode", "avg");
    const char *ctm = node->opset >= 16 ? ir_attr_string(node, "coordinate_transformation_mode", "half_pixel")
                                        : "output_half_pixel";
    if (j.oh < 1 || j.ow < 1 || j.gh_fixed < 0 || j.gh_fixed > RA_MAX_GRID)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "RoiAlign: invalid output size or sampling_ratio");
    if (strcmp(mode, "avg") != 0 && strcmp(mode, "max") != 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "RoiAlign: unsupported mode '%s'", mode);
    j.max_mode = strcmp(mode, "max") == 0;
    if (strcmp(ctm, "half_pixel") == 0)
        j.half_pixel = 1;
    else if (strcmp(ctm, "output_half_pixel") != 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "RoiAlign: unsupported coordinate_transformation_mode '%s'", ctm);
    j.offset = j.half_pixel ? 0.5 : 0.0;
    int64_t R = rois->dims[0];
    j.C = x->dims[1];
    j.H = x->dims[2];
    j.W = x->dims[3];
    int64_t odims[4] = {R, j.C, j.oh, j.ow};
    if (!ox_shape_equal(y->dims, y->rank, odims, 4))
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "RoiAlign: output shape does not match inputs");
    int64_t total = ox_tensor_numel(y);
    if (total == 0) return 0;
    if (j.H == 0 || j.W == 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "RoiAlign: X has an empty spatial dimension");
    int64_t *bidx = malloc(sizeof(int64_t) * (size_t)R);
    if (!bidx) return ox_cpu_oom(ctx);
    for (int64_t r = 0; r < R; r++) {
        bidx[r] = ox_get_i64(bi->data, bi->dtype, (size_t)r);
        if (bidx[r] < 0 || bidx[r] >= x->dims[0]) {
            long long v = (long long)bidx[r];
            free(bidx);
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "RoiAlign: batch_indices[%lld] = %lld is out of range for batch size %lld",
                                  (long long)r, v, (long long)x->dims[0]);
        }
    }
    j.bidx = bidx;
    double *xo = NULL, *ro = NULL, *yo = NULL;
    int rc = 0;
    const int f32 = x->dtype == ONYX_FLOAT32 && y->dtype == ONYX_FLOAT32;
    j.rois = ox_image_as_f64(rois, &ro);
    if (!j.rois) rc = ox_cpu_oom(ctx);
    for (int64_t r = 0; r < R && rc == 0; r++) {
        double sh, sw, bh, bw;
        int64_t gh, gw;
        ra_roi_geom(&j, r, &sh, &sw, &bh, &bw, &gh, &gw);
        if (gh < 0 || gw < 0 || gh * gw > (int64_t)1 << 24)
            rc = ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                "RoiAlign: roi %lld is too large for adaptive sampling", (long long)r);
        else if ((size_t)(gh * gw) > j.max_samples)
            j.max_samples = (size_t)(gh * gw);
    }
    if (rc == 0 && !(j.failed = calloc((size_t)R, 1))) rc = ox_cpu_oom(ctx);
    int done = 0;
    if (rc == 0 && f32) {
        done = roialign_f32(ctx, x, &j, R, y->data);
        if (done < 0) rc = ox_cpu_oom(ctx);
        for (int64_t r = 0; r < R && rc == 0 && done; r++)
            if (j.failed[r]) rc = ox_cpu_oom(ctx);
    }
    if (rc == 0 && !done) {
        j.x = ox_image_as_f64(x, &xo);
        j.y = y->dtype == ONYX_FLOAT64 ? y->data : (yo = malloc(sizeof(double) * (size_t)total));
        if (!j.x || !j.y) rc = ox_cpu_oom(ctx);
    }
    if (rc == 0 && !done) {
        ox_parallel_for(ctx->pool, R, 1, ra_range, &j);
        for (int64_t r = 0; r < R && rc == 0; r++)
            if (j.failed[r]) rc = ox_cpu_oom(ctx);
        if (rc == 0 && yo)
            for (int64_t i = 0; i < total; i++)
                ox_set_f64(y->data, y->dtype, (size_t)i, yo[i]);
    }
    free(j.failed);
    free(xo);
    free(ro);
    free(yo);
    free(bidx);
    return rc;
}

static int supports_roialign(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    return ox_cpu_image_float_inputs(node, inputs, n_inputs);
}


/* ================================================================ */
/* MaxRoiPool: Caffe-style RoI max pooling. Roi corners are scaled and
 * rounded to whole pixels (both ends inclusive, at least one pixel);
 * bin (ph, pw) covers rows floor(ph * h / PH) .. ceil((ph + 1) * h / PH)
 * of the roi, clipped to the map, and an empty bin yields 0. */

static int maxroipool_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ox_cpu_input(ctx, 0), *rois = ox_cpu_input(ctx, 1);
    ox_tensor *y = ctx->outputs[0];
    if (!x || !rois)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "MaxRoiPool: inputs X and rois are required");
    if (x->rank != 4 || rois->rank != 2 || rois->dims[1] != 5)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "MaxRoiPool: X must be (N, C, H, W) and rois (num_rois, 5)");
    if (!ox_dtype_is_float(x->dtype) || !ox_dtype_is_float(rois->dtype))
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "MaxRoiPool: X and rois must be float tensors");
    size_t np = 0;
    const int64_t *ps = ir_attr_ints(ctx->node, "pooled_shape", &np);
    if (!ps || np != 2 || ps[0] < 1 || ps[1] < 1)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "MaxRoiPool: pooled_shape must be two positive values");
    double scale = ir_attr_float(ctx->node, "spatial_scale", 1.0f);
    int64_t R = rois->dims[0], N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
    int64_t PH = ps[0], PW = ps[1];
    int64_t odims[4] = {R, C, PH, PW};
    if (!ox_shape_equal(y->dims, y->rank, odims, 4) || y->dtype != x->dtype)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "MaxRoiPool: output shape does not match inputs");
    if (ox_tensor_numel(y) == 0) return 0;
    double *xo = NULL, *ro = NULL;
    const double *xd = ox_image_as_f64(x, &xo), *rd = ox_image_as_f64(rois, &ro);
    int rc = 0;
    if (!xd || !rd) {
        rc = ox_cpu_oom(ctx);
        goto done;
    }
    for (int64_t r = 0; r < R && rc == 0; r++) {
        const double *roi = rd + 5 * r;
        double bd = roi[0];
        if (!(bd >= 0.0 && bd < (double)N) || bd != floor(bd)) {
            rc = ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                "MaxRoiPool: roi %lld has batch index %g, outside [0, %lld)",
                                (long long)r, bd, (long long)N);
            break;
        }
        double c4[4];
        for (int k = 0; k < 4; k++) {
            c4[k] = round(roi[k + 1] * scale);
            /* keeps the conversions below defined for absurd rois */
            if (!(c4[k] > -4.0e15)) c4[k] = -4.0e15;
            if (!(c4[k] < 4.0e15)) c4[k] = 4.0e15;
        }
        int64_t sw = (int64_t)c4[0], sh = (int64_t)c4[1], ew = (int64_t)c4[2], eh = (int64_t)c4[3];
        int64_t rh = eh - sh + 1 > 1 ? eh - sh + 1 : 1, rw = ew - sw + 1 > 1 ? ew - sw + 1 : 1;
        double bh = (double)rh / (double)PH, bw = (double)rw / (double)PW;
        for (int64_t c = 0; c < C; c++) {
            const double *plane = xd + ((int64_t)bd * C + c) * H * W;
            for (int64_t ph = 0; ph < PH; ph++) {
                int64_t h0 = (int64_t)floor((double)ph * bh) + sh, h1 = (int64_t)ceil((double)(ph + 1) * bh) + sh;
                h0 = h0 < 0 ? 0 : h0 > H ? H : h0;
                h1 = h1 < 0 ? 0 : h1 > H ? H : h1;
                for (int64_t pw = 0; pw < PW; pw++) {
                    int64_t w0 = (int64_t)floor((double)pw * bw) + sw,
                            w1 = (int64_t)ceil((double)(pw + 1) * bw) + sw;
                    w0 = w0 < 0 ? 0 : w0 > W ? W : w0;
                    w1 = w1 < 0 ? 0 : w1 > W ? W : w1;
                    double m = 0.0;
                    if (h1 > h0 && w1 > w0) {
                        m = -INFINITY;
                        for (int64_t i = h0; i < h1; i++)
                            for (int64_t k = w0; k < w1; k++)
                                if (plane[i * W + k] > m || isnan(plane[i * W + k])) m = plane[i * W + k];
                    }
                    ox_set_f64(y->data, y->dtype, (size_t)(((r * C + c) * PH + ph) * PW + pw), m);
                }
            }
        }
    }
done:
    free(xo);
    free(ro);
    return rc;
}

/* ================================================================ */
/* NonMaxSuppression */

typedef struct nms_box {
    double x0, y0, x1, y1, area;
} nms_box;

typedef struct nms_cand {
    double score;
    int64_t index;
} nms_cand;

/* Highest score first; equal scores keep box order. */
static int nms_cmp(const void *a, const void *b) {
    const nms_cand *p = a, *q = b;
    if (p->score > q->score) return -1;
    if (p->score < q->score) return 1;
    return p->index < q->index ? -1 : p->index > q->index;
}

/* Overlap test; boxes without area never suppress anything. */
static int nms_suppresses(const nms_box *a, const nms_box *b, double thr) {
    if (!(a->area > 0.0) || !(b->area > 0.0)) return 0;
    double iw = fmin(a->x1, b->x1) - fmax(a->x0, b->x0);
    double ih = fmin(a->y1, b->y1) - fmax(a->y0, b->y0);
    if (!(iw > 0.0) || !(ih > 0.0)) return 0;
    double inter = iw * ih;
    double uni = a->area + b->area - inter;
    if (!(uni > 0.0)) return 0;
    return inter / uni > thr;
}

static int scalar_input(ox_kernel_ctx *ctx, int i, const char *what, double *v, int64_t *iv) {
    const ox_tensor *t = ox_cpu_input(ctx, i);
    if (!t) return 0;
    if (ox_tensor_numel(t) != 1)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "NonMaxSuppression: %s must hold a single value",
                              what);
    if (iv)
        *iv = ox_get_i64(t->data, t->dtype, 0);
    else
        *v = ox_get_f64(t->data, t->dtype, 0);
    return 1;
}

static int nms_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *boxes = ox_cpu_input(ctx, 0), *scores = ox_cpu_input(ctx, 1);
    if (!boxes || !scores)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "NonMaxSuppression: inputs boxes and scores are required");
    if (boxes->rank != 3 || boxes->dims[2] != 4)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "NonMaxSuppression: boxes must have shape (batches, boxes, 4)");
    if (scores->rank != 3 || scores->dims[0] != boxes->dims[0] || scores->dims[2] != boxes->dims[1])
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "NonMaxSuppression: scores must have shape (%lld, classes, %lld)",
                              (long long)boxes->dims[0], (long long)boxes->dims[1]);
    if (!ox_dtype_is_float(boxes->dtype) || !ox_dtype_is_float(scores->dtype))
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "NonMaxSuppression: boxes and scores must be float");
    int64_t max_out = 0;
    double iou_thr = 0.0, score_thr = 0.0;
    int rc_in = scalar_input(ctx, 2, "max_output_boxes_per_class", NULL, &max_out);
    if (rc_in < 0) return -1;
    if (scalar_input(ctx, 3, "iou_threshold", &iou_thr, NULL) < 0) return -1;
    int has_score_thr = scalar_input(ctx, 4, "score_threshold", &score_thr, NULL);
    if (has_score_thr < 0) return -1;
    if (!(iou_thr >= 0.0 && iou_thr <= 1.0))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "NonMaxSuppression: iou_threshold must be in [0, 1], got %g", iou_thr);
    int center = ir_attr_int(ctx->node, "center_point_box", 0) != 0;
    int64_t B = boxes->dims[0], S = boxes->dims[1], C = scores->dims[1];
    if (max_out < 0) max_out = 0;
    if (max_out > S) max_out = S;

    nms_box *bx = malloc(sizeof *bx * (size_t)(S > 0 ? S : 1));
    nms_cand *cand = malloc(sizeof *cand * (size_t)(S > 0 ? S : 1));
    int64_t *sel = malloc(sizeof *sel * (size_t)(S > 0 ? S : 1));
    int64_t *res = NULL;
    size_t nres = 0, cap = 0;
    int rc = 0;
    if (!bx || !cand || !sel) rc = ox_cpu_oom(ctx);
    for (int64_t b = 0; b < B && rc == 0 && max_out > 0; b++) {
        for (int64_t i = 0; i < S; i++) {
            double v[4];
            for (int k = 0; k < 4; k++)
                v[k] = ox_get_f64(boxes->data, boxes->dtype, (size_t)((b * S + i) * 4 + k));
            nms_box *q = &bx[i];
            if (center) {
                q->x0 = v[0] - v[2] / 2.0;
                q->x1 = v[0] + v[2] / 2.0;
                q->y0 = v[1] - v[3] / 2.0;
                q->y1 = v[1] + v[3] / 2.0;
            } else {
                q->y0 = fmin(v[0], v[2]);
                q->y1 = fmax(v[0], v[2]);
                q->x0 = fmin(v[1], v[3]);
                q->x1 = fmax(v[1], v[3]);
            }
            q->area = (q->x1 - q->x0) * (q->y1 - q->y0);
        }
        for (int64_t c = 0; c < C && rc == 0; c++) {
            /* quadratic in the boxes per class: the executor reports a stop */
            if (ox_stop_requested(ctx->stop)) break;
            int64_t n = 0;
            for (int64_t i = 0; i < S; i++) {
                double s = ox_get_f64(scores->data, scores->dtype, (size_t)((b * C + c) * S + i));
                if (isnan(s) || (has_score_thr && !(s > score_thr))) continue;
                cand[n].score = s;
                cand[n].index = i;
                n++;
            }
            qsort(cand, (size_t)n, sizeof *cand, nms_cmp);
            int64_t ns = 0;
            for (int64_t k = 0; k < n && ns < max_out; k++) {
                if ((k & 1023) == 1023 && ox_stop_requested(ctx->stop)) break;
                const nms_box *q = &bx[cand[k].index];
                int keep = 1;
                for (int64_t s = 0; s < ns && keep; s++)
                    if (nms_suppresses(&bx[sel[s]], q, iou_thr)) keep = 0;
                if (keep) sel[ns++] = cand[k].index;
            }
            if (nres + (size_t)ns > cap) {
                size_t ncap = cap ? cap * 2 : 64;
                while (ncap < nres + (size_t)ns)
                    ncap *= 2;
                int64_t *nr = realloc(res, ncap * 3 * sizeof *nr);
                if (!nr) {
                    rc = ox_cpu_oom(ctx);
                    break;
                }
                res = nr;
                cap = ncap;
            }
            for (int64_t s = 0; s < ns; s++) {
                res[3 * nres] = b;
                res[3 * nres + 1] = c;
                res[3 * nres + 2] = sel[s];
                nres++;
            }
        }
    }
    if (rc == 0) {
        int64_t dims[2] = {(int64_t)nres, 3};
        ox_tensor *out = ox_kernel_output(ctx, 0, ONYX_INT64, dims, 2);
        if (!out)
            rc = -1;
        else if (nres)
            memcpy(out->data, res, nres * 3 * sizeof *res);
    }
    free(bx);
    free(cand);
    free(sel);
    free(res);
    return rc;
}

static const ox_kernel_def KERNELS[] = {
    {"", "Resize", 10, 19, ox_cpu_resize_compute, ox_cpu_resize_supports, NULL, NULL, NULL},
    {"", "Upsample", 7, 17, ox_cpu_resize_compute, ox_cpu_resize_supports, NULL, NULL, NULL},
    {"", "GridSample", 16, 22, ox_cpu_gridsample_compute, ox_cpu_image_float_inputs, NULL, NULL, NULL},
    {"", "AffineGrid", 20, 20, ox_cpu_affine_grid_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "MaxRoiPool", 1, 22, maxroipool_compute, ox_cpu_image_float_inputs, NULL, NULL, NULL},
    {"", "RoiAlign", 10, 22, roialign_compute, supports_roialign, NULL, NULL, NULL},
    {"", "NonMaxSuppression", 10, 17, nms_compute, ox_cpu_image_float_inputs, NULL, NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_image = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
