/* CPU kernels of the image operators: Resize/Upsample, GridSample,
 * RoiAlign and NonMaxSuppression.
 *
 * Resize precomputes, per axis, which input indices and weights feed each
 * output position (the sampling is separable, so an N-d output value is
 * the tensor product of the per-axis taps). Axes whose taps are the
 * identity drop out of the inner loops, which leaves the usual NCHW case
 * as a 2-D plane kernel. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"

extern const ox_kernel_table ox_cpu_kernels_image;

/* Stores a computed value into any numeric element type. Integers round
 * to nearest and saturate, so an interpolated value never wraps around
 * and NaN never reaches an integer conversion. */
static void store_value(void *data, ox_dtype t, size_t i, double v) {
    double lo, hi;
    switch (t) {
    case ONYX_INT8:
        lo = -128.0;
        hi = 127.0;
        break;
    case ONYX_UINT8:
        lo = 0.0;
        hi = 255.0;
        break;
    case ONYX_INT16:
        lo = -32768.0;
        hi = 32767.0;
        break;
    case ONYX_UINT16:
        lo = 0.0;
        hi = 65535.0;
        break;
    case ONYX_INT32:
        lo = -2147483648.0;
        hi = 2147483647.0;
        break;
    case ONYX_UINT32:
        lo = 0.0;
        hi = 4294967295.0;
        break;
    case ONYX_INT64:
        lo = -9223372036854775808.0;
        hi = 9223372036854774784.0;
        break;
    case ONYX_UINT64: {
        double r = isnan(v) ? 0.0 : nearbyint(v);
        uint64_t u = r <= 0 ? 0 : r >= 18446744073709549568.0 ? UINT64_MAX : (uint64_t)r;
        ((uint64_t *)data)[i] = u;
        return;
    }
    default:
        ox_set_f64(data, t, i, v);
        return;
    }
    double r = isnan(v) ? 0.0 : nearbyint(v);
    if (r < lo) r = lo;
    if (r > hi) r = hi;
    ox_set_i64(data, t, i, (int64_t)r);
}

/* Float32 view of a float tensor: the data itself for float32, else a
 * converted heap copy (returned in *owned for the caller to free). */
static const float *as_f32(const ox_tensor *t, float **owned) {
    *owned = NULL;
    if (t->dtype == ONYX_FLOAT32) return (const float *)t->data;
    int64_t n = ox_tensor_numel(t);
    float *b = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    if (!b) return NULL;
    for (int64_t i = 0; i < n; i++)
        b[i] = (float)ox_get_f64(t->data, t->dtype, (size_t)i);
    *owned = b;
    return b;
}

static const double *as_f64(const ox_tensor *t, double **owned) {
    *owned = NULL;
    if (t->dtype == ONYX_FLOAT64) return (const double *)t->data;
    int64_t n = ox_tensor_numel(t);
    double *b = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (!b) return NULL;
    if (t->dtype == ONYX_FLOAT32) {
        const float *f = (const float *)t->data;
        for (int64_t i = 0; i < n; i++)
            b[i] = f[i];
    } else {
        for (int64_t i = 0; i < n; i++)
            b[i] = ox_get_f64(t->data, t->dtype, (size_t)i);
    }
    *owned = b;
    return b;
}

/* ================================================================ */
/* Resize / Upsample */

enum { RS_NEAREST, RS_LINEAR, RS_CUBIC };
enum { CT_HALF_PIXEL, CT_PYTORCH, CT_ALIGN, CT_ASYM, CT_TF_NN, CT_TF_CROP };
enum { NR_PREFER_FLOOR, NR_PREFER_CEIL, NR_FLOOR, NR_CEIL };

typedef struct rs_axis {
    int64_t in, out;
    int ntap;
    int identity;
    int64_t *idx;           /* [out * ntap], always a valid input index */
    double *w;              /* [out * ntap] */
    unsigned char *outside; /* [out]: maps outside the input (crop mode) */
} rs_axis;

typedef struct rs_plan {
    int rank, mode, ctm, nearest, exclude;
    double cubic_a, extrap;
    rs_axis ax[OX_MAX_RANK];
} rs_plan;

static void rs_plan_free(rs_plan *p) {
    for (int d = 0; d < p->rank; d++) {
        free(p->ax[d].idx);
        free(p->ax[d].w);
        free(p->ax[d].outside);
    }
}

static int parse_mode(const char *s) {
    if (strcmp(s, "nearest") == 0) return RS_NEAREST;
    if (strcmp(s, "linear") == 0 || strcmp(s, "bilinear") == 0) return RS_LINEAR;
    if (strcmp(s, "cubic") == 0) return RS_CUBIC;
    return -1;
}

static int parse_ctm(const char *s) {
    static const char *const names[] = {"half_pixel", "pytorch_half_pixel",   "align_corners",
                                        "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
    for (int i = 0; i < 6; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

static int parse_nearest(const char *s) {
    static const char *const names[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

/* Keys' cubic convolution kernel with parameter a, at distance d. */
static double cubic_weight(double d, double a) {
    d = fabs(d);
    if (d <= 1.0) return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
    if (d < 2.0) return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
    return 0.0;
}

/* Input coordinate of output position o. len_f is the resized length the
 * formulas divide by: scale * in when scales are given (the reference
 * keeps it fractional), the integer size otherwise. */
static double rs_coord(const rs_plan *p, int64_t o, int64_t in, double scale, double len_f, double roi_s,
                       double roi_e) {
    double x = (double)o;
    switch (p->ctm) {
    case CT_HALF_PIXEL:
        return (x + 0.5) / scale - 0.5;
    case CT_PYTORCH:
        return len_f > 1.0 ? (x + 0.5) / scale - 0.5 : 0.0;
    case CT_ALIGN:
        return len_f == 1.0 ? 0.0 : x * (double)(in - 1) / (len_f - 1.0);
    case CT_ASYM:
        return x / scale;
    case CT_TF_NN:
        return (x + 0.5) / scale;
    default: /* CT_TF_CROP */
        if (len_f > 1.0)
            return roi_s * (double)(in - 1) + x * (roi_e - roi_s) * (double)(in - 1) / (len_f - 1.0);
        return 0.5 * (roi_s + roi_e) * (double)(in - 1);
    }
}

static int64_t clamp_index(int64_t i, int64_t n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }

static int rs_axis_build(rs_plan *p, int d, int64_t in, int64_t out, double scale, double len_f, double roi_s,
                         double roi_e) {
    rs_axis *a = &p->ax[d];
    a->in = in;
    a->out = out;
    a->ntap = p->mode == RS_NEAREST ? 1 : p->mode == RS_LINEAR ? 2 : 4;
    size_t n = (size_t)(out > 0 ? out : 1) * (size_t)a->ntap;
    a->idx = malloc(n * sizeof *a->idx);
    a->w = malloc(n * sizeof *a->w);
    a->outside = calloc((size_t)(out > 0 ? out : 1), 1);
    if (!a->idx || !a->w || !a->outside) return -1;
    int identity = out == in;
    for (int64_t o = 0; o < out; o++) {
        int64_t *ix = a->idx + o * a->ntap;
        double *w = a->w + o * a->ntap;
        double x = rs_coord(p, o, in, scale, len_f, roi_s, roi_e);
        if (p->ctm == CT_TF_CROP && !(x >= 0.0 && x <= (double)(in - 1))) a->outside[o] = 1;
        /* keeps the integer conversions below defined whatever the roi */
        if (!(x >= -4.0)) x = -4.0;
        if (!(x <= (double)in + 4.0)) x = (double)in + 4.0;
        double fl = floor(x), r = x - fl;
        int64_t i0 = (int64_t)fl;
        if (r == 0.0 && p->mode != RS_NEAREST && i0 >= 0 && i0 < in) {
            /* On a sample point both kernels weigh the point itself 1
             * and every neighbour 0; an exact single tap lets unscaled
             * axes drop out as identities. */
            for (int t = 0; t < a->ntap; t++) {
                ix[t] = i0;
                w[t] = t == 0 ? 1.0 : 0.0;
            }
        } else if (p->mode == RS_NEAREST) {
            int64_t k = i0;
            if (r > 0.0) {
                switch (p->nearest) {
                case NR_PREFER_FLOOR:
                    k = r <= 0.5 ? i0 : i0 + 1;
                    break;
                case NR_PREFER_CEIL:
                    k = r < 0.5 ? i0 : i0 + 1;
                    break;
                case NR_FLOOR:
                    k = i0;
                    break;
                default:
                    k = i0 + 1;
                    break;
                }
            }
            ix[0] = clamp_index(k, in);
            w[0] = 1.0;
        } else if (p->mode == RS_LINEAR) {
            ix[0] = clamp_index(i0, in);
            ix[1] = clamp_index(i0 + 1, in);
            w[0] = 1.0 - r;
            w[1] = r;
        } else {
            double sum = 0.0;
            for (int t = 0; t < 4; t++) {
                int64_t k = i0 - 1 + t;
                w[t] = cubic_weight(r - (double)(t - 1), p->cubic_a);
                if (p->exclude && (k < 0 || k >= in)) w[t] = 0.0;
                sum += w[t];
                ix[t] = clamp_index(k, in);
            }
            if (p->exclude && sum != 0.0)
                for (int t = 0; t < 4; t++)
                    w[t] /= sum;
        }
        if (identity) {
            if (a->outside[o] || ix[0] != o || w[0] != 1.0) identity = 0;
            for (int t = 1; t < a->ntap; t++)
                if (w[t] != 0.0) identity = 0;
        }
    }
    a->identity = identity;
    return 0;
}

/* ---- nearest: pure element copies, any fixed-size element type ---- */

typedef struct rs_gather_job {
    const rs_plan *p;
    int64_t *off[OX_MAX_RANK]; /* per axis: input offset (elements) per output position */
    const unsigned char *src;
    unsigned char *dst;
    size_t esz;
    unsigned char extrap[8];
    int64_t row_len; /* output positions on the last axis */
} rs_gather_job;

static void rs_gather_range(void *arg, int64_t begin, int64_t end) {
    const rs_gather_job *j = arg;
    const rs_plan *p = j->p;
    int r = p->rank, last = r - 1;
    int64_t c[OX_MAX_RANK];
    int64_t rem = begin;
    for (int d = last - 1; d >= 0; d--) {
        c[d] = rem % p->ax[d].out;
        rem /= p->ax[d].out;
    }
    const int64_t *ol = j->off[last];
    const unsigned char *outl = p->ax[last].outside;
    size_t esz = j->esz;
    for (int64_t row = begin; row < end; row++) {
        int64_t base = 0;
        int row_out = 0;
        for (int d = 0; d < last; d++) {
            base += j->off[d][c[d]];
            row_out |= p->ax[d].outside[c[d]];
        }
        unsigned char *dst = j->dst + (size_t)(row * j->row_len) * esz;
        const unsigned char *src = j->src + (size_t)base * esz;
        for (int64_t x = 0; x < j->row_len; x++) {
            const unsigned char *s = (row_out || outl[x]) ? j->extrap : src + (size_t)ol[x] * esz;
            switch (esz) {
            case 1:
                dst[x] = *s;
                break;
            case 2:
                memcpy(dst + 2 * x, s, 2);
                break;
            case 4:
                memcpy(dst + 4 * x, s, 4);
                break;
            default:
                memcpy(dst + (size_t)x * esz, s, esz);
                break;
            }
        }
        for (int d = last - 1; d >= 0; d--) {
            if (++c[d] < p->ax[d].out) break;
            c[d] = 0;
        }
    }
}

static int rs_gather(ox_kernel_ctx *ctx, const rs_plan *p, const ox_tensor *x, ox_tensor *y) {
    rs_gather_job j;
    memset(&j, 0, sizeof j);
    j.p = p;
    j.src = x->data;
    j.dst = y->data;
    j.esz = ox_dtype_size(x->dtype);
    if (x->dtype == ONYX_STRING || j.esz == 0 || j.esz > 8)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "%s: element type %s is not supported",
                              ctx->node->op_type, ox_dtype_name(x->dtype));
    store_value(j.extrap, x->dtype, 0, p->extrap);
    int rc = 0;
    int64_t stride = 1;
    for (int d = p->rank - 1; d >= 0; d--) {
        const rs_axis *a = &p->ax[d];
        j.off[d] = malloc(sizeof(int64_t) * (size_t)a->out);
        if (!j.off[d]) {
            rc = ox_cpu_oom(ctx);
            break;
        }
        for (int64_t o = 0; o < a->out; o++)
            j.off[d][o] = a->idx[o] * stride;
        stride *= a->in;
    }
    if (rc == 0) {
        j.row_len = p->ax[p->rank - 1].out;
        int64_t rows = ox_tensor_numel(y) / j.row_len;
        int64_t grain = 4096 / (j.row_len > 0 ? j.row_len : 1) + 1;
        ox_parallel_for(ctx->pool, rows, grain, rs_gather_range, &j);
    }
    for (int d = 0; d < p->rank; d++)
        free(j.off[d]);
    return rc;
}

/* ---- float32 plane kernel: only the last two axes resample ---- */

typedef struct rs_plane_job {
    const rs_plan *p;
    const float *x;
    float *y;
    const rs_axis *ay, *axx; /* NULL ay: rank 1 */
    float *wx;               /* float copy of the last axis' weights */
    int64_t hin, win, hout, wout;
    float extrap;
} rs_plane_job;

static void rs_plane_range(void *arg, int64_t begin, int64_t end) {
    const rs_plane_job *j = arg;
    const rs_axis *ax = j->axx;
    int ntx = ax->ntap;
    for (int64_t r = begin; r < end; r++) {
        int64_t plane = r / j->hout, oy = r % j->hout;
        const float *xp = j->x + plane * j->hin * j->win;
        float *yr = j->y + r * j->wout;
        int nty = 1;
        const int64_t *iy = NULL;
        const double *wy = NULL;
        int64_t iy0 = 0;
        if (j->ay) {
            if (j->ay->outside[oy]) {
                for (int64_t ox = 0; ox < j->wout; ox++)
                    yr[ox] = j->extrap;
                continue;
            }
            nty = j->ay->ntap;
            iy = j->ay->idx + oy * nty;
            wy = j->ay->w + oy * nty;
        }
        if (ntx == 2 && nty == 2) {
            const float *r0 = xp + iy[0] * j->win, *r1 = xp + iy[1] * j->win;
            float w0 = (float)wy[0], w1 = (float)wy[1];
            for (int64_t ox = 0; ox < j->wout; ox++) {
                const int64_t *ix = ax->idx + 2 * ox;
                const float *wx = j->wx + 2 * ox;
                float v = w0 * (wx[0] * r0[ix[0]] + wx[1] * r0[ix[1]]) +
                          w1 * (wx[0] * r1[ix[0]] + wx[1] * r1[ix[1]]);
                yr[ox] = ax->outside[ox] ? j->extrap : v;
            }
            continue;
        }
        for (int64_t ox = 0; ox < j->wout; ox++) {
            if (ax->outside[ox]) {
                yr[ox] = j->extrap;
                continue;
            }
            const int64_t *ix = ax->idx + ntx * ox;
            const float *wx = j->wx + ntx * ox;
            float acc = 0.0f;
            for (int ty = 0; ty < nty; ty++) {
                const float *row = xp + (iy ? iy[ty] : iy0) * j->win;
                float s = 0.0f;
                for (int tx = 0; tx < ntx; tx++)
                    s += wx[tx] * row[ix[tx]];
                acc += (wy ? (float)wy[ty] : 1.0f) * s;
            }
            yr[ox] = acc;
        }
    }
}

static int rs_plane_f32(ox_kernel_ctx *ctx, const rs_plan *p, const ox_tensor *x, ox_tensor *y) {
    rs_plane_job j;
    memset(&j, 0, sizeof j);
    int r = p->rank;
    j.p = p;
    j.x = x->data;
    j.y = y->data;
    j.axx = &p->ax[r - 1];
    j.ay = r >= 2 ? &p->ax[r - 2] : NULL;
    j.win = j.axx->in;
    j.wout = j.axx->out;
    j.hin = j.ay ? j.ay->in : 1;
    j.hout = j.ay ? j.ay->out : 1;
    j.extrap = (float)p->extrap;
    j.wx = malloc(sizeof(float) * (size_t)(j.wout * j.axx->ntap + 1));
    if (!j.wx) return ox_cpu_oom(ctx);
    for (int64_t i = 0; i < j.wout * j.axx->ntap; i++)
        j.wx[i] = (float)j.axx->w[i];
    int64_t planes = 1;
    for (int d = 0; d < r - 2; d++)
        planes *= p->ax[d].out;
    int64_t rows = planes * j.hout;
    int64_t grain = 8192 / (j.wout * j.axx->ntap * (j.ay ? j.ay->ntap : 1) + 1) + 1;
    ox_parallel_for(ctx->pool, rows, grain, rs_plane_range, &j);
    free(j.wx);
    return 0;
}

/* ---- generic: any element type, any set of resampled axes, in double ---- */

typedef struct rs_generic_job {
    const rs_plan *p;
    const double *x;
    void *y;
    ox_dtype dt;
    int64_t in_stride[OX_MAX_RANK];
    int act[OX_MAX_RANK]; /* resampled axes */
    int nact;
} rs_generic_job;

static void rs_generic_range(void *arg, int64_t begin, int64_t end) {
    const rs_generic_job *j = arg;
    const rs_plan *p = j->p;
    int r = p->rank;
    int64_t c[OX_MAX_RANK];
    int64_t rem = begin;
    for (int d = r - 1; d >= 0; d--) {
        c[d] = rem % p->ax[d].out;
        rem /= p->ax[d].out;
    }
    for (int64_t e = begin; e < end; e++) {
        int out = 0;
        int64_t base = 0;
        for (int d = 0; d < r; d++) {
            const rs_axis *a = &p->ax[d];
            out |= a->outside[c[d]];
            if (a->identity) base += c[d] * j->in_stride[d];
        }
        double acc;
        if (out) {
            acc = p->extrap;
        } else if (j->nact == 0) {
            acc = j->x[base];
        } else {
            int t[OX_MAX_RANK] = {0};
            acc = 0.0;
            for (;;) {
                double w = 1.0;
                int64_t off = base;
                for (int k = 0; k < j->nact; k++) {
                    const rs_axis *a = &p->ax[j->act[k]];
                    int64_t pos = c[j->act[k]] * a->ntap + t[k];
                    w *= a->w[pos];
                    off += a->idx[pos] * j->in_stride[j->act[k]];
                }
                if (w != 0.0) acc += w * j->x[off];
                int k = j->nact - 1;
                while (k >= 0 && ++t[k] == p->ax[j->act[k]].ntap)
                    t[k--] = 0;
                if (k < 0) break;
            }
        }
        store_value(j->y, j->dt, (size_t)e, acc);
        for (int d = r - 1; d >= 0; d--) {
            if (++c[d] < p->ax[d].out) break;
            c[d] = 0;
        }
    }
}

static int rs_generic(ox_kernel_ctx *ctx, const rs_plan *p, const ox_tensor *x, ox_tensor *y) {
    rs_generic_job j;
    memset(&j, 0, sizeof j);
    j.p = p;
    j.y = y->data;
    j.dt = y->dtype;
    int64_t s = 1;
    for (int d = p->rank - 1; d >= 0; d--) {
        j.in_stride[d] = s;
        s *= p->ax[d].in;
    }
    for (int d = 0; d < p->rank; d++)
        if (!p->ax[d].identity) j.act[j.nact++] = d;
    double *owned = NULL;
    j.x = as_f64(x, &owned);
    if (!j.x) return ox_cpu_oom(ctx);
    int64_t taps = 1;
    for (int k = 0; k < j.nact; k++)
        taps *= p->ax[j.act[k]].ntap;
    ox_parallel_for(ctx->pool, ox_tensor_numel(y), 16384 / (taps + 1) + 1, rs_generic_range, &j);
    free(owned);
    return 0;
}

/* Reads a scales tensor into doubles; returns its element count. */
static int read_scales(ox_kernel_ctx *ctx, const ox_tensor *t, double *sc, int rank) {
    int64_t n = ox_tensor_numel(t);
    if (n != rank)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: scales has %lld values but the input has rank %d", ctx->node->op_type,
                              (long long)n, rank);
    for (int64_t i = 0; i < n; i++) {
        sc[i] = ox_get_f64(t->data, t->dtype, (size_t)i);
        if (!(sc[i] > 0.0) || !isfinite(sc[i]))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: scales must be positive, got %g on axis %lld", ctx->node->op_type,
                                  sc[i], (long long)i);
    }
    return 0;
}

static int resize_compute(ox_kernel_ctx *ctx) {
    const ir_node *node = ctx->node;
    const char *op = node->op_type;
    const ox_tensor *x = ox_cpu_input(ctx, 0);
    ox_tensor *y = ctx->outputs[0];
    if (!x || !y) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: input X is required", op);
    int rank = x->rank;
    if (rank < 1 || y->rank != rank)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: input must have rank >= 1", op);
    int legacy = strcmp(op, "Upsample") == 0 || node->opset < 11;
    rs_plan p;
    memset(&p, 0, sizeof p);
    p.rank = rank;
    p.mode = parse_mode(ir_attr_string(node, "mode", "nearest"));
    if (legacy) {
        /* Upsample and Resize-10 sample at x / scale and take floor. */
        p.ctm = CT_ASYM;
        p.nearest = NR_FLOOR;
        if (p.mode == RS_CUBIC) p.mode = -1;
    } else {
        p.ctm = parse_ctm(ir_attr_string(node, "coordinate_transformation_mode", "half_pixel"));
        p.nearest = parse_nearest(ir_attr_string(node, "nearest_mode", "round_prefer_floor"));
        p.cubic_a = ir_attr_float(node, "cubic_coeff_a", -0.75f);
        p.exclude = ir_attr_int(node, "exclude_outside", 0) != 0;
        p.extrap = ir_attr_float(node, "extrapolation_value", 0.0f);
    }
    if (p.mode < 0 || p.ctm < 0 || p.nearest < 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: unsupported mode attributes", op);

    double sc[OX_MAX_RANK];
    int have_scales = 0;
    const ox_tensor *roi = NULL;
    if (strcmp(op, "Upsample") == 0 && node->opset < 9) {
        size_t n = 0;
        const float *f = ir_attr_floats(node, "scales", &n);
        if (!f || (int)n != rank)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: attribute 'scales' must have %d values",
                                  op, rank);
        for (int i = 0; i < rank; i++)
            sc[i] = f[i];
        have_scales = 1;
    } else {
        int si = legacy ? 1 : 2;
        const ox_tensor *s = ox_cpu_input(ctx, si);
        const ox_tensor *z = legacy ? NULL : ox_cpu_input(ctx, 3);
        if (!legacy) roi = ox_cpu_input(ctx, 1);
        if (s && ox_tensor_numel(s) > 0) {
            if (read_scales(ctx, s, sc, rank)) return -1;
            have_scales = 1;
        } else if (z && ox_tensor_numel(z) > 0) {
            if (ox_tensor_numel(z) != rank)
                return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                      "%s: sizes has %lld values but the input has rank %d", op,
                                      (long long)ox_tensor_numel(z), rank);
        } else {
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: one of scales and sizes must be given",
                                  op);
        }
    }
    for (int d = 0; d < rank; d++) {
        int64_t in = x->dims[d], out = y->dims[d];
        if (have_scales) {
            double o = floor((double)in * sc[d]);
            if (o != (double)out)
                return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR,
                                      "%s: output size %lld on axis %d does not match scales", op,
                                      (long long)out, d);
        } else if (in == 0 && out != 0) {
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: cannot resize empty axis %d to size %lld",
                                  op, d, (long long)out);
        }
    }
    double roi_v[2 * OX_MAX_RANK];
    if (p.ctm == CT_TF_CROP) {
        if (!roi || ox_tensor_numel(roi) != 2 * rank)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: tf_crop_and_resize needs roi with %d values (2 * rank)", op, 2 * rank);
        for (int i = 0; i < 2 * rank; i++)
            roi_v[i] = ox_get_f64(roi->data, roi->dtype, (size_t)i);
    }
    if (ox_tensor_numel(y) == 0) return 0;

    int rc = 0;
    for (int d = 0; d < rank && rc == 0; d++) {
        int64_t in = x->dims[d], out = y->dims[d];
        double scale = have_scales ? sc[d] : (double)out / (double)in;
        double len_f = have_scales ? scale * (double)in : (double)out;
        double rs = p.ctm == CT_TF_CROP ? roi_v[d] : 0.0, re = p.ctm == CT_TF_CROP ? roi_v[d + rank] : 1.0;
        if (rs_axis_build(&p, d, in, out, scale, len_f, rs, re)) rc = ox_cpu_oom(ctx);
    }
    if (rc == 0) {
        int lead_identity = 1;
        for (int d = 0; d < rank - 2; d++)
            if (!p.ax[d].identity) lead_identity = 0;
        if (p.mode == RS_NEAREST)
            rc = rs_gather(ctx, &p, x, y);
        else if (x->dtype == ONYX_FLOAT32 && lead_identity)
            rc = rs_plane_f32(ctx, &p, x, y);
        else
            rc = rs_generic(ctx, &p, x, y);
    }
    rs_plan_free(&p);
    return rc;
}

static int supports_resize(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    (void)node;
    if (n_inputs < 1 || !inputs[0]) return 1;
    ox_dtype t = inputs[0]->dtype;
    return t == ONYX_UNDEFINED || ox_dtype_is_float(t) || ox_dtype_is_integer(t) || t == ONYX_BOOL;
}

/* ================================================================ */
/* GridSample
 *
 * Sampling follows torch.nn.functional.grid_sample, which the operator
 * mirrors. Coordinates are computed in the element type: with float data
 * every step is rounded to float (a double operation rounded to float is
 * exactly the float operation), so ties in nearest mode resolve the same
 * way as a float implementation. */

enum { GS_BILINEAR, GS_NEAREST, GS_BICUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };

typedef struct gs_params {
    int mode, pad, align, f32;
    int64_t h, w;
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

#define GS_MAXTAP 16
#define GS_BLOCK 64

typedef struct gs_taps {
    int64_t off[GS_BLOCK][GS_MAXTAP];
    double w[GS_BLOCK][GS_MAXTAP];
    float wf[GS_BLOCK][GS_MAXTAP];
} gs_taps;

static int gs_ntaps(int mode) { return mode == GS_BILINEAR ? 4 : mode == GS_NEAREST ? 1 : 16; }

/* Taps (plane offsets and weights) of one sampling point. Out-of-bounds
 * taps get weight 0 and offset 0, which every plane has. */
static void gs_point_taps(const gs_params *g, double gx, double gy, int64_t *off, double *w) {
    int64_t H = g->h, W = g->w;
    double ix = gs_unnormalize(g, gx, W), iy = gs_unnormalize(g, gy, H);
    if (g->mode == GS_BICUBIC) {
        const double a = -0.75;
        double fx = floor(ix), fy = floor(iy);
        double tx = gs_r(g, ix - fx), ty = gs_r(g, iy - fy);
        double cx[4], cy[4];
        for (int k = 0; k < 4; k++) {
            cx[k] = gs_r(g, cubic_weight(tx - (double)(k - 1), a));
            cy[k] = gs_r(g, cubic_weight(ty - (double)(k - 1), a));
        }
        for (int ky = 0; ky < 4; ky++)
            for (int kx = 0; kx < 4; kx++) {
                int t = ky * 4 + kx;
                int64_t xi = -1, yi = -1;
                if (isfinite(fx) && isfinite(fy)) {
                    xi = gs_index(gs_pad(g, fx - 1.0 + kx, W), W);
                    yi = gs_index(gs_pad(g, fy - 1.0 + ky, H), H);
                }
                if (xi < 0 || yi < 0) {
                    off[t] = 0;
                    w[t] = 0.0;
                } else {
                    off[t] = yi * W + xi;
                    w[t] = gs_r(g, cx[kx] * cy[ky]);
                }
            }
        return;
    }
    ix = gs_pad(g, ix, W);
    iy = gs_pad(g, iy, H);
    if (g->mode == GS_NEAREST) {
        int64_t xi = -1, yi = -1;
        if (isfinite(ix) && isfinite(iy)) {
            xi = gs_index(nearbyint(ix), W);
            yi = gs_index(nearbyint(iy), H);
        }
        off[0] = xi < 0 || yi < 0 ? 0 : yi * W + xi;
        w[0] = xi < 0 || yi < 0 ? 0.0 : 1.0;
        return;
    }
    if (!(ix > -2.0 && ix < (double)W + 1.0 && iy > -2.0 && iy < (double)H + 1.0)) {
        for (int t = 0; t < 4; t++) {
            off[t] = 0;
            w[t] = 0.0;
        }
        return;
    }
    double fx = floor(ix), fy = floor(iy);
    double ex = gs_r(g, ix - fx), ey = gs_r(g, iy - fy);
    double wx[2] = {gs_r(g, 1.0 - ex), ex}, wy[2] = {gs_r(g, 1.0 - ey), ey};
    for (int ky = 0; ky < 2; ky++)
        for (int kx = 0; kx < 2; kx++) {
            int t = ky * 2 + kx;
            int64_t xi = gs_index(fx + kx, W), yi = gs_index(fy + ky, H);
            if (xi < 0 || yi < 0) {
                off[t] = 0;
                w[t] = 0.0;
            } else {
                off[t] = yi * W + xi;
                w[t] = gs_r(g, wx[kx] * wy[ky]);
            }
        }
}

typedef struct gs_job {
    gs_params g;
    int64_t C, npix, nblocks; /* npix = H_out * W_out per batch */
    const float *xf, *gf;
    const double *xd, *gd;
    float *yf;
    double *yd;
} gs_job;

static void gs_range(void *arg, int64_t begin, int64_t end) {
    const gs_job *j = arg;
    const gs_params *g = &j->g;
    int K = gs_ntaps(g->mode);
    int64_t plane = g->h * g->w;
    gs_taps taps;
    gs_taps *tp = &taps;
    for (int64_t b = begin; b < end; b++) {
        int64_t n = b / j->nblocks, p0 = (b % j->nblocks) * GS_BLOCK;
        int64_t cnt = j->npix - p0 < GS_BLOCK ? j->npix - p0 : GS_BLOCK;
        for (int64_t i = 0; i < cnt; i++) {
            int64_t gi = (n * j->npix + p0 + i) * 2;
            double gx = j->gf ? (double)j->gf[gi] : j->gd[gi];
            double gy = j->gf ? (double)j->gf[gi + 1] : j->gd[gi + 1];
            gs_point_taps(g, gx, gy, tp->off[i], tp->w[i]);
            if (j->xf)
                for (int t = 0; t < K; t++)
                    tp->wf[i][t] = (float)tp->w[i][t];
        }
        for (int64_t c = 0; c < j->C; c++) {
            int64_t xo = (n * j->C + c) * plane, yo = (n * j->C + c) * j->npix + p0;
            if (j->xf) {
                const float *xp = j->xf + xo;
                float *yp = j->yf + yo;
                if (K == 4) {
                    for (int64_t i = 0; i < cnt; i++) {
                        const int64_t *o = tp->off[i];
                        const float *w = tp->wf[i];
                        yp[i] = w[0] * xp[o[0]] + w[1] * xp[o[1]] + w[2] * xp[o[2]] + w[3] * xp[o[3]];
                    }
                } else {
                    for (int64_t i = 0; i < cnt; i++) {
                        float s = 0.0f;
                        for (int t = 0; t < K; t++)
                            s += tp->wf[i][t] * xp[tp->off[i][t]];
                        yp[i] = s;
                    }
                }
            } else {
                const double *xp = j->xd + xo;
                double *yp = j->yd + yo;
                for (int64_t i = 0; i < cnt; i++) {
                    double s = 0.0;
                    for (int t = 0; t < K; t++)
                        s += tp->w[i][t] * xp[tp->off[i][t]];
                    yp[i] = s;
                }
            }
        }
    }
}

static int gridsample_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ox_cpu_input(ctx, 0), *grid = ox_cpu_input(ctx, 1);
    ox_tensor *y = ctx->outputs[0];
    if (!x || !grid || !y)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "GridSample: inputs X and grid are required");
    if (x->rank != 4 || grid->rank != 4 || grid->dims[3] != 2)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "GridSample: expected X (N, C, H, W) and grid (N, H_out, W_out, 2)");
    if (x->dims[0] != grid->dims[0])
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "GridSample: batch of X (%lld) and grid (%lld) differ", (long long)x->dims[0],
                              (long long)grid->dims[0]);
    if (!ox_dtype_is_float(x->dtype) || !ox_dtype_is_float(grid->dtype))
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "GridSample: X and grid must be float tensors");
    int64_t N = x->dims[0], C = x->dims[1];
    int64_t odims[4] = {N, C, grid->dims[1], grid->dims[2]};
    if (!ox_shape_equal(y->dims, y->rank, odims, 4) || y->dtype != x->dtype)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "GridSample: output shape does not match inputs");
    gs_job j;
    memset(&j, 0, sizeof j);
    const char *mode = ir_attr_string(ctx->node, "mode", "bilinear");
    const char *pad = ir_attr_string(ctx->node, "padding_mode", "zeros");
    j.g.mode = strcmp(mode, "bilinear") == 0  ? GS_BILINEAR
               : strcmp(mode, "nearest") == 0 ? GS_NEAREST
               : strcmp(mode, "bicubic") == 0 ? GS_BICUBIC
                                              : -1;
    j.g.pad = strcmp(pad, "zeros") == 0        ? GS_ZEROS
              : strcmp(pad, "border") == 0     ? GS_BORDER
              : strcmp(pad, "reflection") == 0 ? GS_REFLECTION
                                               : -1;
    if (j.g.mode < 0 || j.g.pad < 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "GridSample: unsupported mode '%s' or padding_mode '%s'", mode, pad);
    j.g.align = ir_attr_int(ctx->node, "align_corners", 0) != 0;
    j.g.h = x->dims[2];
    j.g.w = x->dims[3];
    j.C = C;
    j.npix = odims[2] * odims[3];
    int64_t total = ox_tensor_numel(y);
    if (total == 0) return 0;
    if (j.g.h == 0 || j.g.w == 0) {
        /* nothing to sample from: every point is out of bounds */
        memset(y->data, 0, y->nbytes);
        return 0;
    }
    j.g.f32 = x->dtype != ONYX_FLOAT64;
    float *xo = NULL, *go = NULL, *yo = NULL;
    double *xdo = NULL, *gdo = NULL;
    int rc = 0;
    if (j.g.f32) {
        j.xf = as_f32(x, &xo);
        j.gf = as_f32(grid, &go);
        if (x->dtype == ONYX_FLOAT32)
            j.yf = y->data;
        else
            j.yf = yo = malloc(sizeof(float) * (size_t)total);
        if (!j.xf || !j.gf || !j.yf) rc = ox_cpu_oom(ctx);
    } else {
        j.xd = as_f64(x, &xdo);
        j.gd = as_f64(grid, &gdo);
        j.yd = y->data;
        if (!j.xd || !j.gd) rc = ox_cpu_oom(ctx);
    }
    if (rc == 0) {
        j.nblocks = (j.npix + GS_BLOCK - 1) / GS_BLOCK;
        int64_t grain = 256 / (C + 1) + 1;
        ox_parallel_for(ctx->pool, N * j.nblocks, grain, gs_range, &j);
        if (yo)
            for (int64_t i = 0; i < total; i++)
                ox_set_f64(y->data, y->dtype, (size_t)i, yo[i]);
    }
    free(xo);
    free(go);
    free(yo);
    free(xdo);
    free(gdo);
    return rc;
}

static int supports_float_inputs(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    (void)node;
    for (int i = 0; i < n_inputs && i < 2; i++) {
        if (!inputs[i] || inputs[i]->dtype == ONYX_UNDEFINED) continue;
        if (!ox_dtype_is_float(inputs[i]->dtype)) return 0;
    }
    return 1;
}

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

static void ra_range(void *arg, int64_t begin, int64_t end) {
    const ra_job *j = arg;
    ra_sample *buf = malloc((j->max_samples > 0 ? j->max_samples : 1) * sizeof *buf);
    for (int64_t r = begin; r < end; r++) {
        if (!buf) {
            j->failed[r] = 1;
            continue;
        }
        double sh, sw, bh, bw;
        int64_t gh, gw;
        ra_roi_geom(j, r, &sh, &sw, &bh, &bw, &gh, &gw);
        double count = (double)(gh * gw > 1 ? gh * gw : 1);
        const double *xb = j->x + j->bidx[r] * j->C * j->H * j->W;
        double *yr = j->y + r * j->C * j->oh * j->ow;
        for (int64_t ph = 0; ph < j->oh; ph++)
            for (int64_t pw = 0; pw < j->ow; pw++) {
                size_t ns = 0;
                for (int64_t iy = 0; iy < gh; iy++) {
                    double yy = sh + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
                    for (int64_t ix = 0; ix < gw; ix++) {
                        double xx = sw + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
                        ra_taps(j, yy, xx, &buf[ns++]);
                    }
                }
                for (int64_t c = 0; c < j->C; c++) {
                    const double *xp = xb + c * j->H * j->W;
                    double acc = 0.0;
                    for (size_t s = 0; s < ns; s++) {
                        const ra_sample *q = &buf[s];
                        if (j->max_mode) {
                            /* the operator's max pools the weighted corner values */
                            double m = q->w[0] * xp[q->off[0]];
                            for (int k = 1; k < 4; k++) {
                                double v = q->w[k] * xp[q->off[k]];
                                if (v > m) m = v;
                            }
                            acc = s == 0 || m > acc ? m : acc;
                        } else {
                            acc += q->w[0] * xp[q->off[0]] + q->w[1] * xp[q->off[1]] +
                                   q->w[2] * xp[q->off[2]] + q->w[3] * xp[q->off[3]];
                        }
                    }
                    yr[(c * j->oh + ph) * j->ow + pw] = j->max_mode ? acc : acc / count;
                }
            }
    }
    free(buf);
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
    j.x = as_f64(x, &xo);
    j.rois = as_f64(rois, &ro);
    j.y = y->dtype == ONYX_FLOAT64 ? y->data : (yo = malloc(sizeof(double) * (size_t)total));
    if (!j.x || !j.rois || !j.y) rc = ox_cpu_oom(ctx);
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
    if (rc == 0) {
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
    return supports_float_inputs(node, inputs, n_inputs);
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
    {"", "Resize", 10, 17, resize_compute, supports_resize, NULL, NULL},
    {"", "Upsample", 7, 17, resize_compute, supports_resize, NULL, NULL},
    {"", "GridSample", 16, 17, gridsample_compute, supports_float_inputs, NULL, NULL},
    {"", "RoiAlign", 10, 17, roialign_compute, supports_roialign, NULL, NULL},
    {"", "NonMaxSuppression", 10, 17, nms_compute, supports_float_inputs, NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_image = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
