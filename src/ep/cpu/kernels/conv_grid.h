/* Walks over a convolution's grid of positions (conv.c's lowering to
 * GEMMs): im2col and col2im over a chunk of positions, for any spatial
 * rank and float or double, and the float32 im2col that writes the
 * packed panels of the fast GEMM paths (conv_fast.h). */
#ifndef ONYX_EP_CPU_KERNELS_CONV_GRID_H
#define ONYX_EP_CPU_KERNELS_CONV_GRID_H

#include <stdint.h>

#include "ep/cpu/kernels/conv_fast.h"
#include "ep/cpu/kernels/conv_geom.h"

/* im2col / col2im over a chunk of grid positions [p0, p1).
 *
 * Both walk a "grid" (output positions for im2col, input positions for
 * col2im) and map grid position q and kernel offset kp to a "target"
 * coordinate q * stride + kp * dil - pad per axis. Runs along the last
 * axis are handled in one go so the per-element work is a bounds test. */

typedef struct win_map {
    int r;
    const int64_t *grid, *tgt, *stride, *dil, *pad;
    int64_t tgt_str[OX_MAX_RANK];
} win_map;

static inline void win_map_init(win_map *m, const conv_geom *g, int gather) {
    m->r = g->r;
    m->grid = gather ? g->out : g->in;
    m->tgt = gather ? g->in : g->out;
    m->stride = g->stride;
    m->dil = g->dil;
    m->pad = g->pb;
    m->tgt_str[g->r - 1] = 1;
    for (int d = g->r - 2; d >= 0; d--) m->tgt_str[d] = m->tgt_str[d + 1] * m->tgt[d + 1];
}

static inline void kernel_pos(const conv_geom *g, int64_t kk, int64_t *kpos) {
    for (int d = g->r - 1; d >= 0; d--) {
        kpos[d] = kk % g->k[d];
        kk /= g->k[d];
    }
}

static inline void grid_pos(const win_map *m, int64_t p, int64_t *o) {
    for (int d = m->r - 1; d >= 0; d--) {
        o[d] = p % m->grid[d];
        p /= m->grid[d];
    }
}

/* Offset into the target plane of the row that grid position o and
 * kernel position kpos reach on every axis but the last; -1 when that
 * row falls in the padding. */
static inline int64_t lead_offset(const win_map *m, const int64_t *o, const int64_t *kpos) {
    int64_t off = 0;
    for (int d = 0; d < m->r - 1; d++) {
        int64_t i = o[d] * m->stride[d] + kpos[d] * m->dil[d] - m->pad[d];
        if (i < 0 || i >= m->tgt[d]) return -1;
        off += i * m->tgt_str[d];
    }
    return off;
}

/* Moves grid position o on by len along the last axis, carrying over. */
static inline void grid_step(const win_map *m, int64_t *o, int64_t len) {
    const int L = m->r - 1;
    o[L] += len;
    for (int d = L; d > 0 && o[d] >= m->grid[d]; d--) {
        o[d] = 0;
        o[d - 1]++;
    }
}

/* col[(c * k_sz + kk - r0) * nc + (p - p0)] = x[c][target of p, kk], or 0
 * in the padding, for the rows c * k_sz + kk in [r0, r1) and grid
 * positions p in [p0, p1) (m from win_map_init(.., gather 1)) */
void ox_conv_im2col_f32(const conv_geom *g, const win_map *m, const float *x, int64_t p0, int64_t p1,
                        int64_t r0, int64_t r1, float *col);
void ox_conv_im2col_f64(const conv_geom *g, const win_map *m, const double *x, int64_t p0, int64_t p1,
                        int64_t r0, int64_t r1, double *col);
/* y[m][target of p, kk] += col[(m * k_sz + kk) * nc + (p - p0)] (m from
 * win_map_init(.., gather 0)) */
void ox_conv_col2im_f32(const conv_geom *g, const win_map *m, const float *col, int64_t p0, int64_t p1,
                        float *y);
void ox_conv_col2im_f64(const conv_geom *g, const win_map *m, const double *col, int64_t p0, int64_t p1,
                        double *y);

/* The float32 im2col of one convolution in the packed layout of the
 * fast GEMM paths (an ox_conv_cols_fn, arg the job) */
typedef struct ox_conv_cols_job {
    const conv_geom *g;
    win_map map;
    ox_cols2d_geom g2; /* rank 2: the fast path's geometry */
    const float *x;
} ox_conv_cols_job;

static inline void ox_conv_cols_job_init(ox_conv_cols_job *j, const conv_geom *g, const float *x) {
    *j = (ox_conv_cols_job){.g = g, .x = x};
    win_map_init(&j->map, g, 1);
    if (g->r == 2)
        j->g2 = (ox_cols2d_geom){.IH = g->in[0], .IW = g->in[1], .OH = g->out[0], .OW = g->out[1],
                                 .KW = g->k[1], .sh = g->stride[0], .sw = g->stride[1],
                                 .dh = g->dil[0], .dw = g->dil[1], .ph = g->pb[0], .pw = g->pb[1],
                                 .k_sz = g->k_sz, .plane = g->in_sz};
}

void ox_conv_cols(const void *arg, int64_t n, int64_t grp, int64_t k0, int64_t kc, int64_t p0, int64_t p1,
                  int nr, float *dst);

#endif
