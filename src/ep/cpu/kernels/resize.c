/* CPU kernels of Resize and Upsample.
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

#include "ep/cpu/kernels/image.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"
#include "ops/op.h"

/* ================================================================ */
/* Resize / Upsample */

enum { RS_NEAREST, RS_LINEAR, RS_CUBIC };
enum { CT_HALF_PIXEL, CT_PYTORCH, CT_ALIGN, CT_ASYM, CT_TF_NN, CT_TF_CROP, CT_HALF_SYM };
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
    int rank, mode, ctm, nearest, exclude, antialias;
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

/* `sym` admits half_pixel_symmetric (Resize-19 on). */
static int parse_ctm(const char *s, int sym) {
    static const char *const names[] = {"half_pixel",           "pytorch_half_pixel",
                                        "align_corners",        "asymmetric",
                                        "tf_half_pixel_for_nn", "tf_crop_and_resize",
                                        "half_pixel_symmetric"};
    for (int i = 0; i < (sym ? 7 : 6); i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

static int parse_nearest(const char *s) {
    static const char *const names[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

/* Input coordinate of output position o. len_f is the resized length the
 * formulas divide by: scale * in when scales are given (the reference
 * keeps it fractional), the integer size otherwise. */
static double rs_coord(const rs_plan *p, int64_t o, int64_t in, int64_t out, double scale,
                       double len_f, double roi_s, double roi_e) {
    double x = (double)o;
    switch (p->ctm) {
    case CT_HALF_PIXEL:
        return (x + 0.5) / scale - 0.5;
    case CT_HALF_SYM: {
        /* half_pixel with the output's integer extent centred on the
         * input: shifts by the part of the fractional size that floor()
         * dropped, spread evenly over both ends */
        double offset = (double)in / 2.0 * (1.0 - (double)out / len_f);
        return offset + (x + 0.5) / scale - 0.5;
    }
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

/* First tap offset (relative to the sample's left neighbour) of a linear
 * or cubic filter. With antialias and a downscale the filter is
 * stretched by 1 / scale, so more input samples contribute; otherwise
 * linear spans offsets [0, 2) and cubic [-1, 3). */
static int64_t rs_tap_start(const rs_plan *p, double s) {
    double reach = p->mode == RS_LINEAR ? 1.0 : 2.0;
    return (int64_t)floor(-reach / s) + 1;
}

static int rs_axis_build(rs_plan *p, int d, int64_t in, int64_t out, double scale, double len_f,
                         double roi_s, double roi_e) {
    rs_axis *a = &p->ax[d];
    a->in = in;
    a->out = out;
    /* the filter is stretched only when downscaling: s < 1 */
    double s = p->antialias && p->mode != RS_NEAREST && scale < 1.0 ? scale : 1.0;
    int64_t start = p->mode == RS_NEAREST ? 0 : rs_tap_start(p, s);
    int64_t ntap = p->mode == RS_NEAREST ? 1 : 2 - 2 * start;
    /* out >= 1 means scale >= ~1/in, so a stretched filter spans at most a
     * few times the input; anything wider is a degenerate request */
    if (ntap > 8 * in + 8 || ntap > INT32_MAX) return -2;
    a->ntap = (int)ntap;
    size_t n = (size_t)(out > 0 ? out : 1) * (size_t)a->ntap;
    a->idx = malloc(n * sizeof *a->idx);
    a->w = malloc(n * sizeof *a->w);
    a->outside = calloc((size_t)(out > 0 ? out : 1), 1);
    if (!a->idx || !a->w || !a->outside) return -1;
    int identity = out == in;
    for (int64_t o = 0; o < out; o++) {
        int64_t *ix = a->idx + o * a->ntap;
        double *w = a->w + o * a->ntap;
        double x = rs_coord(p, o, in, out, scale, len_f, roi_s, roi_e);
        if (p->ctm == CT_TF_CROP && !(x >= 0.0 && x <= (double)(in - 1))) a->outside[o] = 1;
        /* keeps the integer conversions below defined whatever the roi */
        if (!(x >= -4.0)) x = -4.0;
        if (!(x <= (double)in + 4.0)) x = (double)in + 4.0;
        double fl = floor(x), r = x - fl;
        int64_t i0 = (int64_t)fl;
        if (r == 0.0 && p->mode != RS_NEAREST && s == 1.0 && i0 >= 0 && i0 < in) {
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
        } else {
            /* taps at base + start ... base + start + ntap - 1, where base
             * is the left neighbour and x = base + ratio, ratio in (0, 1] */
            int64_t base = r == 0.0 ? i0 - 1 : i0;
            double ratio = x - (double)base, sum = 0.0;
            for (int t = 0; t < a->ntap; t++) {
                int64_t off = start + t, k = base + off;
                double dist = ((double)off - ratio) * s;
                double wt = p->mode == RS_LINEAR ? 1.0 - fabs(dist) : ox_image_cubic_weight(dist, p->cubic_a);
                if (p->mode == RS_LINEAR && wt < 0.0) wt = 0.0;
                w[t] = wt;
                ix[t] = k;
                sum += wt;
            }
            /* a stretched filter is normalised to keep the signal level */
            if (s < 1.0 && sum != 0.0)
                for (int t = 0; t < a->ntap; t++) w[t] /= sum;
            if (p->exclude) {
                sum = 0.0;
                for (int t = 0; t < a->ntap; t++) {
                    if (ix[t] < 0 || ix[t] >= in) w[t] = 0.0;
                    sum += w[t];
                }
                if (sum != 0.0)
                    for (int t = 0; t < a->ntap; t++) w[t] /= sum;
            }
            for (int t = 0; t < a->ntap; t++) ix[t] = clamp_index(ix[t], in);
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
    int last_outside; /* some output position of the last axis lies outside */
    int last_double;  /* the last axis doubles: output x reads input x / 2 */
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
    const unsigned char *prev = NULL; /* the previous output row of this range */
    int64_t prev_base = -1;
    int prev_out = 0;
    for (int64_t row = begin; row < end; row++) {
        int64_t base = 0;
        int row_out = 0;
        for (int d = 0; d < last; d++) {
            base += j->off[d][c[d]];
            row_out |= p->ax[d].outside[c[d]];
        }
        unsigned char *dst = j->dst + (size_t)(row * j->row_len) * esz;
        const unsigned char *src = j->src + (size_t)base * esz;
        /* an upsampled row repeats the one before it: copied whole */
        const int same = prev && base == prev_base && row_out == prev_out;
        prev = dst, prev_base = base, prev_out = row_out;
        if (same) {
            memcpy(dst, dst - (size_t)j->row_len * esz, (size_t)j->row_len * esz);
            goto next;
        }
        if (!row_out && !j->last_outside && esz == 4 && j->last_double) {
            /* a feature pyramid's 2x upsampling: each element twice */
            uint32_t *d4 = (uint32_t *)(void *)dst;
            const int64_t half = j->row_len / 2;
            for (int64_t i = 0; i < half; i++) {
                uint32_t v;
                memcpy(&v, src + (size_t)i * 4, 4);
                d4[2 * i] = v;
                d4[2 * i + 1] = v;
            }
            goto next;
        }
        if (!row_out && !j->last_outside && esz == 4) {
            /* the common case: a plain gather of 4-byte elements */
            uint32_t *d4 = (uint32_t *)(void *)dst;
            for (int64_t x = 0; x < j->row_len; x++) memcpy(d4 + x, src + (size_t)ol[x] * 4, 4);
            goto next;
        }
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
    next:
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
    ox_image_store(j.extrap, x->dtype, 0, p->extrap);
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
        j.last_double = j.row_len % 2 == 0;
        for (int64_t o = 0; o < j.row_len; o++) {
            j.last_outside |= p->ax[p->rank - 1].outside[o];
            j.last_double &= j.off[p->rank - 1][o] == o / 2;
        }
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
            const double *wx = ax->w + ntx * ox;
            /* cubic and antialiased filters have negative lobes and many
             * taps, so their sums cancel: double weights and sums */
            double acc = 0.0;
            for (int ty = 0; ty < nty; ty++) {
                const float *row = xp + (iy ? iy[ty] : iy0) * j->win;
                double s = 0.0;
                for (int tx = 0; tx < ntx; tx++)
                    s += wx[tx] * row[ix[tx]];
                acc += (wy ? wy[ty] : 1.0) * s;
            }
            yr[ox] = (float)acc;
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
        ox_image_store(j->y, j->dt, (size_t)e, acc);
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
    j.x = ox_image_as_f64(x, &owned);
    if (!j.x) return ox_cpu_oom(ctx);
    int64_t taps = 1;
    for (int k = 0; k < j.nact; k++)
        taps *= p->ax[j.act[k]].ntap;
    ox_parallel_for(ctx->pool, ox_tensor_numel(y), 16384 / (taps + 1) + 1, rs_generic_range, &j);
    free(owned);
    return 0;
}

/* Reads a scales tensor of `want` values (one per resized axis) into
 * doubles. */
static int read_scales(ox_kernel_ctx *ctx, const ox_tensor *t, double *sc, int want) {
    int64_t n = ox_tensor_numel(t);
    if (n != want)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: scales has %lld values, expected %d (one per resized axis)",
                              ctx->node->op_type, (long long)n, want);
    for (int64_t i = 0; i < n; i++) {
        sc[i] = ox_get_f64(t->data, t->dtype, (size_t)i);
        if (!(sc[i] > 0.0) || !isfinite(sc[i]))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: scales must be positive, got %g on axis %lld", ctx->node->op_type,
                                  sc[i], (long long)i);
    }
    return 0;
}

int ox_cpu_resize_compute(ox_kernel_ctx *ctx) {
    const ir_node *node = ctx->node;
    const char *op = node->op_type;
    const ox_tensor *x = ox_cpu_input(ctx, 0);
    ox_tensor *y = ctx->outputs[0];
    if (!x || !y) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: input X is required", op);
    int rank = x->rank;
    if (rank < 1 || y->rank != rank)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: input must have rank >= 1", op);
    int legacy = strcmp(op, "Upsample") == 0 || node->opset < 11;
    int since = legacy ? 0 : ox_op_since_version(node->domain, op, node->opset);
    rs_plan p;
    memset(&p, 0, sizeof p);
    p.rank = rank;
    p.mode = parse_mode(ir_attr_string(node, "mode", "nearest"));
    const char *policy = "stretch";
    if (legacy) {
        /* Upsample and Resize-10 sample at x / scale and take floor. */
        p.ctm = CT_ASYM;
        p.nearest = NR_FLOOR;
        if (p.mode == RS_CUBIC) p.mode = -1;
    } else {
        p.ctm = parse_ctm(ir_attr_string(node, "coordinate_transformation_mode", "half_pixel"),
                          since >= 19);
        p.nearest = parse_nearest(ir_attr_string(node, "nearest_mode", "round_prefer_floor"));
        p.cubic_a = ir_attr_float(node, "cubic_coeff_a", -0.75f);
        p.exclude = ir_attr_int(node, "exclude_outside", 0) != 0;
        p.extrap = ir_attr_float(node, "extrapolation_value", 0.0f);
        if (since >= 18) {
            p.antialias = ir_attr_int(node, "antialias", 0) != 0;
            policy = ir_attr_string(node, "keep_aspect_ratio_policy", "stretch");
        }
    }
    int keep = strcmp(policy, "stretch") != 0;
    if (p.mode < 0 || p.ctm < 0 || p.nearest < 0 ||
        (keep && strcmp(policy, "not_larger") != 0 && strcmp(policy, "not_smaller") != 0))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: unsupported mode attributes", op);

    /* axes that scales, sizes and roi list (Resize-18's 'axes'; all of
     * them otherwise); the others keep scale 1 and their size */
    int ax[OX_MAX_RANK], nax = rank;
    for (int d = 0; d < rank; d++) ax[d] = d;
    size_t n_axes = 0;
    const int64_t *axes_attr = since >= 18 ? ir_attr_ints(node, "axes", &n_axes) : NULL;
    if (axes_attr) {
        if (n_axes > (size_t)rank)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: axes has %zu values for rank %d",
                                  op, n_axes, rank);
        nax = (int)n_axes;
        int seen[OX_MAX_RANK] = {0};
        for (int i = 0; i < nax; i++) {
            int64_t a = axes_attr[i];
            if (a < -rank || a >= rank || seen[a < 0 ? a + rank : a])
                return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                      "%s: axes[%d] = %lld is out of range or repeated", op, i,
                                      (long long)a);
            ax[i] = (int)(a < 0 ? a + rank : a);
            seen[ax[i]] = 1;
        }
    }

    double sc[OX_MAX_RANK];
    int64_t want[OX_MAX_RANK];
    int have_scales = 0, kept = 0; /* kept: sizes adjusted by the policy */
    for (int d = 0; d < rank; d++) {
        sc[d] = 1.0;
        want[d] = x->dims[d];
    }
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
            double v[OX_MAX_RANK];
            if (read_scales(ctx, s, v, nax)) return -1;
            for (int i = 0; i < nax; i++) sc[ax[i]] = v[i];
            have_scales = 1;
        } else if (z && ox_tensor_numel(z) > 0) {
            if (ox_tensor_numel(z) != nax || !ox_dtype_is_integer(z->dtype))
                return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                      "%s: sizes must hold %d integers, got %lld values of %s", op,
                                      nax, (long long)ox_tensor_numel(z), ox_dtype_name(z->dtype));
            double pick = 0.0;
            for (int i = 0; i < nax; i++) {
                int64_t v = ox_get_i64(z->data, z->dtype, (size_t)i), in = x->dims[ax[i]];
                if (v < 0 || (in == 0 && (v != 0 || keep)))
                    return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                          "%s: cannot resize axis %d of size %lld to %lld", op, ax[i],
                                          (long long)in, (long long)v);
                want[ax[i]] = v;
                double r = in ? (double)v / (double)in : 1.0;
                sc[ax[i]] = r;
                if (i == 0 || (strcmp(policy, "not_smaller") == 0 ? r > pick : r < pick)) pick = r;
            }
            if (keep) {
                /* one scale for every listed axis, sizes rounded half up */
                for (int i = 0; i < nax; i++) {
                    sc[ax[i]] = pick;
                    want[ax[i]] = (int64_t)floor(pick * (double)x->dims[ax[i]] + 0.5);
                }
                have_scales = kept = 1;
            }
        } else {
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: one of scales and sizes must be given",
                                  op);
        }
    }
    for (int d = 0; d < rank; d++) {
        int64_t in = x->dims[d], out = y->dims[d];
        int64_t expect = have_scales ? (int64_t)floor((double)in * sc[d]) : want[d];
        if (kept) expect = want[d];
        if (expect != out)
            return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR,
                                  "%s: output size %lld on axis %d differs from the computed %lld", op,
                                  (long long)out, d, (long long)expect);
    }
    double roi_s[OX_MAX_RANK], roi_e[OX_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        roi_s[d] = 0.0;
        roi_e[d] = 1.0;
    }
    if (p.ctm == CT_TF_CROP) {
        if (!roi || ox_tensor_numel(roi) != 2 * nax || !ox_dtype_is_float(roi->dtype))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: tf_crop_and_resize needs a float roi with %d values (2 per resized axis)",
                                  op, 2 * nax);
        for (int i = 0; i < nax; i++) {
            roi_s[ax[i]] = ox_get_f64(roi->data, roi->dtype, (size_t)i);
            roi_e[ax[i]] = ox_get_f64(roi->data, roi->dtype, (size_t)(i + nax));
        }
    }
    if (ox_tensor_numel(y) == 0) return 0;

    int rc = 0;
    for (int d = 0; d < rank && rc == 0; d++) {
        int64_t in = x->dims[d], out = y->dims[d];
        double scale = have_scales ? sc[d] : (double)out / (double)in;
        double len_f = have_scales ? scale * (double)in : (double)out;
        int b = rs_axis_build(&p, d, in, out, scale, len_f, roi_s[d], roi_e[d]);
        if (b == -2)
            rc = ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                "%s: scale %g on axis %d is too small for an antialiased filter", op,
                                scale, d);
        else if (b)
            rc = ox_cpu_oom(ctx);
    }
    if (rc == 0) {
        int lead_identity = 1, all_identity = 1;
        for (int d = 0; d < rank; d++)
            if (!p.ax[d].identity) {
                all_identity = 0;
                if (d < rank - 2) lead_identity = 0;
            }
        if (all_identity)
            /* every output sample is an input point (a detector's resize of
             * an image already at its size: 1.2 MB, 0.53 -> 0.09 ms) */
            memcpy(y->data, x->data, (size_t)ox_tensor_numel(y) * ox_dtype_size(y->dtype));
        else if (p.mode == RS_NEAREST)
            rc = rs_gather(ctx, &p, x, y);
        else if (x->dtype == ONYX_FLOAT32 && lead_identity)
            rc = rs_plane_f32(ctx, &p, x, y);
        else
            rc = rs_generic(ctx, &p, x, y);
    }
    rs_plan_free(&p);
    return rc;
}

int ox_cpu_resize_supports(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    (void)node;
    if (n_inputs < 1 || !inputs[0]) return 1;
    ox_dtype t = inputs[0]->dtype;
    return t == ONYX_UNDEFINED || ox_dtype_is_float(t) || ox_dtype_is_integer(t) || t == ONYX_BOOL;
}
