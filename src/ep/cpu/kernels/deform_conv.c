/* CPU kernel of DeformConv (opsets 19 and 22), N-D.
 *
 * Each kernel tap of each output position samples the input at its
 * regular position moved by a learned offset, bilinearly (zero outside
 * the input), scaled by an optional mask. Per (image, group) those
 * samples form a column matrix (Cg * taps x output positions, built in
 * chunks to bound memory) that one GEMM with the group's weights turns
 * into the output, as in an im2col convolution. Works in float64, which
 * keeps every float type's result exact to its own precision. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "ep/cpu/kernels/conv_extra.h"
#include "ep/cpu/kernels/gemm.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"

#define DC_COL_CAP (1 << 20) /* column matrix elements per chunk */

typedef struct dc_geom {
    int r;
    int64_t N, C, M, G, Cg, Mg, OG, Cog; /* Cog: channels per offset group */
    int64_t in[OX_MAX_RANK], k[OX_MAX_RANK], out[OX_MAX_RANK];
    int64_t stride[OX_MAX_RANK], dil[OX_MAX_RANK], pb[OX_MAX_RANK];
    int64_t in_sz, out_sz, k_sz;
} dc_geom;

/* Bilinear sample of plane x (extents g->in) at point p; taps outside
 * the input count as zero. */
static double dc_sample(const dc_geom *g, const double *x, const double *p) {
    int64_t lo[OX_MAX_RANK];
    double fr[OX_MAX_RANK];
    for (int d = 0; d < g->r; d++) {
        double f = floor(p[d]);
        /* a point a full pixel or more outside reads nothing */
        if (!(f >= -1.0 && f <= (double)g->in[d] - 1.0)) return 0.0;
        lo[d] = (int64_t)f;
        fr[d] = p[d] - f;
    }
    double acc = 0.0;
    for (int t = 0; t < (1 << g->r); t++) {
        double w = 1.0;
        int64_t off = 0;
        int ok = 1;
        for (int d = 0; d < g->r && ok; d++) {
            int hi = (t >> (g->r - 1 - d)) & 1;
            int64_t i = lo[d] + hi;
            if (i < 0 || i >= g->in[d]) ok = 0;
            off = off * g->in[d] + i;
            w *= hi ? fr[d] : 1.0 - fr[d];
        }
        if (ok && w != 0.0) acc += w * x[off];
    }
    return acc;
}

/* One chunk of a column matrix: input channels [grp * Cg, (grp + 1) *
 * Cg) of image n at output positions [p0, p1), row (c * k_sz + kk) for
 * channel c of the group and kernel tap kk. */
typedef struct dc_job {
    const dc_geom *g;
    const double *x, *offset, *mask;
    int64_t n, grp, p0, p1;
    double *col;
} dc_job;

/* Rows [row0, row1) of the chunk's column matrix. */
static void dc_columns(void *arg, int64_t row0, int64_t row1) {
    const dc_job *j = arg;
    const dc_geom *g = j->g;
    const double *offset = j->offset, *mask = j->mask;
    const int64_t n = j->n, p0 = j->p0, p1 = j->p1;
    const int r = g->r;
    const int64_t nc = p1 - p0;
    for (int64_t row = row0; row < row1; row++) {
        int64_t cl = row / g->k_sz, kk = row % g->k_sz;
        int64_t c = j->grp * g->Cg + cl, og = c / g->Cog;
        const double *xp = j->x + (n * g->C + c) * g->in_sz;
        double *dst = j->col + row * nc;
        int64_t kpos[OX_MAX_RANK], rem = kk;
        for (int d = r - 1; d >= 0; d--) {
            kpos[d] = rem % g->k[d];
            rem /= g->k[d];
        }
        /* offset channels (og, kk, d); mask channel (og, kk) */
        const double *offk = offset + ((n * g->OG + og) * g->k_sz + kk) * r * g->out_sz;
        const double *mk = mask ? mask + ((n * g->OG + og) * g->k_sz + kk) * g->out_sz : NULL;
        for (int64_t p = p0; p < p1; p++) {
            int64_t o[OX_MAX_RANK];
            rem = p;
            for (int d = r - 1; d >= 0; d--) {
                o[d] = rem % g->out[d];
                rem /= g->out[d];
            }
            double pt[OX_MAX_RANK];
            for (int d = 0; d < r; d++)
                pt[d] = (double)(o[d] * g->stride[d] - g->pb[d] + kpos[d] * g->dil[d]) +
                        offk[d * g->out_sz + p];
            double m = mk ? mk[p] : 1.0;
            dst[p - p0] = m == 0.0 ? 0.0 : m * dc_sample(g, xp, pt);
        }
    }
}

static int dc_geom_make(ox_kernel_ctx *ctx, const ox_tensor *X, const ox_tensor *W,
                        const ox_tensor *O, const ox_tensor *B, const ox_tensor *Mk,
                        const ox_tensor *Y, dc_geom *g) {
    const char *op = "DeformConv";
    if (X->rank < 3 || W->rank != X->rank || O->rank != X->rank || Y->rank != X->rank)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: X, W, offset and the output must share one rank >= 3", op);
    int r = X->rank - 2;
    memset(g, 0, sizeof *g);
    g->r = r;
    g->N = X->dims[0];
    g->C = X->dims[1];
    g->M = W->dims[0];
    g->G = ir_attr_int(ctx->node, "group", 1);
    g->OG = ir_attr_int(ctx->node, "offset_group", 1);
    int64_t need = -1;
    if (g->G < 1 || g->OG < 1 || g->C % g->G || g->M % g->G || g->C % g->OG ||
        !ox_mul_i64(W->dims[1], g->G, &need) || need != g->C)
        return ox_kernel_fail(
            ctx, ONYX_INVALID_ARGUMENT,
            "%s: channels (X %lld, W %lld x %lld out) do not divide into group %lld "
            "and offset_group %lld",
            op, (long long)g->C, (long long)W->dims[1], (long long)g->M, (long long)g->G,
            (long long)g->OG);
    g->Cg = g->C / g->G;
    g->Mg = g->M / g->G;
    g->Cog = g->C / g->OG;
    const int64_t *ks, *strides, *dils, *pads;
    if (ox_cpu_attr_ints(ctx, "kernel_shape", r, &ks) ||
        ox_cpu_attr_ints(ctx, "strides", r, &strides) ||
        ox_cpu_attr_ints(ctx, "dilations", r, &dils) || ox_cpu_attr_ints(ctx, "pads", 2 * r, &pads))
        return -1;
    g->in_sz = g->out_sz = g->k_sz = 1;
    for (int i = 0; i < r; i++) {
        g->in[i] = X->dims[i + 2];
        g->k[i] = W->dims[i + 2];
        g->stride[i] = strides ? strides[i] : 1;
        g->dil[i] = dils ? dils[i] : 1;
        g->pb[i] = pads ? pads[i] : 0;
        int64_t pe = pads ? pads[i + r] : 0;
        if ((ks && ks[i] != g->k[i]) || g->k[i] < 1 || g->stride[i] < 1 || g->dil[i] < 1 ||
            g->pb[i] < 0 || pe < 0)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: invalid kernel, stride, dilation or pads on spatial axis %d",
                                  op, i);
        int64_t span = g->in[i] + g->pb[i] + pe - ((g->k[i] - 1) * g->dil[i] + 1);
        g->out[i] = span < 0 ? 0 : span / g->stride[i] + 1;
        if (Y->dims[i + 2] != g->out[i] || O->dims[i + 2] != g->out[i])
            return ox_kernel_fail(
                ctx, ONYX_INVALID_ARGUMENT,
                "%s: offset and output must have %lld positions on spatial axis %d", op,
                (long long)g->out[i], i);
        g->in_sz *= g->in[i];
        g->out_sz *= g->out[i];
        g->k_sz *= g->k[i];
    }
    if (O->dims[0] != g->N || O->dims[1] != g->OG * g->k_sz * r)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: offset must have shape (N, offset_group * %lld * %d, ...)", op,
                              (long long)g->k_sz, r);
    if (Mk && (Mk->rank != X->rank || Mk->dims[0] != g->N || Mk->dims[1] != g->OG * g->k_sz ||
               !ox_shape_equal(Mk->dims + 2, r, g->out, r)))
        return ox_kernel_fail(
            ctx, ONYX_INVALID_ARGUMENT,
            "%s: mask must have shape (N, offset_group * %lld, output positions...)", op,
            (long long)g->k_sz);
    if (B && (B->rank != 1 || B->dims[0] != g->M))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: B must be 1-D with %lld values", op,
                              (long long)g->M);
    if (Y->dims[0] != g->N || Y->dims[1] != g->M)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "%s: output shape does not match inputs",
                              op);
    return 0;
}

int ox_cpu_deform_conv_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = ox_cpu_input(ctx, 0), *W = ox_cpu_input(ctx, 1), *O = ox_cpu_input(ctx, 2);
    const ox_tensor *B = ox_cpu_input(ctx, 3), *Mk = ox_cpu_input(ctx, 4);
    ox_tensor *Y = ctx->outputs[0];
    if (!X || !W || !O)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "DeformConv: X, W and offset are required");
    dc_geom g;
    if (dc_geom_make(ctx, X, W, O, B, Mk, Y, &g)) return -1;
    const ox_tensor *all[5] = {X, W, O, B, Mk};
    for (int i = 0; i < 5; i++)
        if (all[i] && (all[i]->dtype != X->dtype || !ox_dtype_is_float(X->dtype)))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "DeformConv: inputs must share one float element type");
    int64_t ny = ox_tensor_numel(Y);
    if (ny == 0) return 0;
    double *x = ox_cpu_load_f64(X), *w = ox_cpu_load_f64(W), *off = ox_cpu_load_f64(O);
    double *b = B ? ox_cpu_load_f64(B) : NULL, *mk = Mk ? ox_cpu_load_f64(Mk) : NULL;
    int64_t rows = g.Cg * g.k_sz;
    int64_t cols = rows > 0 && rows < DC_COL_CAP ? DC_COL_CAP / rows : 1;
    if (cols > g.out_sz) cols = g.out_sz;
    double *y = malloc(sizeof(double) * (size_t)ny);
    double *col = malloc(sizeof(double) * (size_t)(rows * cols > 0 ? rows * cols : 1));
    int rc = 0;
    if (!x || !w || !off || (B && !b) || (Mk && !mk) || !y || !col) {
        rc = ox_cpu_oom(ctx);
        goto done;
    }
    for (int64_t n = 0; n < g.N && rc == 0; n++)
        for (int64_t grp = 0; grp < g.G && rc == 0; grp++) {
            double *yg = y + (n * g.M + grp * g.Mg) * g.out_sz;
            for (int64_t m = 0; m < g.Mg; m++)
                for (int64_t p = 0; p < g.out_sz; p++)
                    yg[m * g.out_sz + p] = b ? b[grp * g.Mg + m] : 0.0;
            for (int64_t p0 = 0; p0 < g.out_sz && rc == 0; p0 += cols) {
                int64_t p1 = p0 + cols < g.out_sz ? p0 + cols : g.out_sz;
                dc_job job = {&g, x, off, mk, n, grp, p0, p1, col};
                int64_t per_row = (p1 - p0) * ((int64_t)1 << g.r);
                ox_parallel_for(ctx->pool, rows, per_row >= 4096 ? 1 : 4096 / (per_row + 1) + 1,
                                dc_columns, &job);
                /* yg[:, p0:p1] += Wg (Mg x rows) @ col (rows x (p1 - p0)) */
                if (ox_gemm_f64(ctx->pool, ctx->stop, 0, 0, g.Mg, p1 - p0, rows, 1.0, w + grp * g.Mg * rows,
                                rows, col, p1 - p0, 1.0, yg + p0, g.out_sz))
                    rc = ox_cpu_oom(ctx);
            }
        }
    if (rc == 0)
        for (int64_t i = 0; i < ny; i++) ox_set_f64(Y->data, Y->dtype, (size_t)i, y[i]);
done:
    free(x);
    free(w);
    free(off);
    free(b);
    free(mk);
    free(y);
    free(col);
    return rc;
}
