/* im2col and col2im over a convolution's grid (conv_grid.h). */
#include <string.h>

#include "ep/cpu/kernels/conv_grid.h"

#define DEF_IM2COL(T, NAME)                                                                     \
    /* col[(c * k_sz + kk - r0) * nc + (p - p0)] = x[c][target of p, kk] or 0 for the rows   \
     * c * k_sz + kk in [r0, r1) */                                                             \
    void NAME(const conv_geom *g, const win_map *m, const T *x, int64_t p0, int64_t p1,  \
                     int64_t r0, int64_t r1, T *col) {                                          \
        const int L = g->r - 1;                                                                 \
        const int64_t nc = p1 - p0;                                                             \
        int64_t start[OX_MAX_RANK], kpos[OX_MAX_RANK], o[OX_MAX_RANK];                          \
        grid_pos(m, p0, start);                                                                 \
        for (int64_t row = r0; row < r1; row++) {                                               \
            const T *src = x + (row / g->k_sz) * g->in_sz;                                      \
            T *dst = col + (row - r0) * nc;                                                     \
            kernel_pos(g, row % g->k_sz, kpos);                                                 \
            memcpy(o, start, sizeof(int64_t) * (size_t)g->r);                                   \
            const int64_t sL = m->stride[L], inL = m->tgt[L];                                   \
            const int64_t kL = kpos[L] * m->dil[L] - m->pad[L];                                 \
            for (int64_t p = p0; p < p1;) {                                                     \
                int64_t len = m->grid[L] - o[L];                                                \
                if (len > p1 - p) len = p1 - p;                                                 \
                int64_t off = lead_offset(m, o, kpos);                                          \
                if (off < 0) {                                                                  \
                    memset(dst, 0, sizeof(T) * (size_t)len);                                    \
                } else {                                                                        \
                    const T *s = src + off;                                                     \
                    int64_t i0 = o[L] * sL + kL;                                                \
                    if (sL == 1 && i0 >= 0 && i0 + len <= inL) {                                \
                        memcpy(dst, s + i0, sizeof(T) * (size_t)len);                           \
                    } else {                                                                    \
                        for (int64_t t = 0; t < len; t++) {                                     \
                            int64_t i = i0 + t * sL;                                            \
                            dst[t] = (i >= 0 && i < inL) ? s[i] : (T)0;                         \
                        }                                                                       \
                    }                                                                           \
                }                                                                               \
                dst += len;                                                                     \
                p += len;                                                                       \
                grid_step(m, o, len);                                                           \
            }                                                                                   \
        }                                                                                       \
    }

#define DEF_COL2IM(T, NAME)                                                                     \
    /* y[m][target of p, kk] += col[(m * k_sz + kk) * nc + (p - p0)] */                         \
    void NAME(const conv_geom *g, const win_map *m, const T *col, int64_t p0, int64_t p1, \
                     T *y) {                                                                    \
        const int L = g->r - 1;                                                                 \
        const int64_t nc = p1 - p0, rows = g->Mg * g->k_sz;                                     \
        int64_t start[OX_MAX_RANK], kpos[OX_MAX_RANK], o[OX_MAX_RANK];                          \
        grid_pos(m, p0, start);                                                                 \
        for (int64_t row = 0; row < rows; row++) {                                              \
            T *dst = y + (row / g->k_sz) * g->out_sz;                                           \
            const T *src = col + row * nc;                                                      \
            kernel_pos(g, row % g->k_sz, kpos);                                                 \
            memcpy(o, start, sizeof(int64_t) * (size_t)g->r);                                   \
            const int64_t sL = m->stride[L], outL = m->tgt[L];                                  \
            const int64_t kL = kpos[L] * m->dil[L] - m->pad[L];                                 \
            for (int64_t p = p0; p < p1;) {                                                     \
                int64_t len = m->grid[L] - o[L];                                                \
                if (len > p1 - p) len = p1 - p;                                                 \
                int64_t off = lead_offset(m, o, kpos);                                          \
                if (off >= 0) {                                                                 \
                    T *dd = dst + off;                                                          \
                    int64_t i0 = o[L] * sL + kL;                                                \
                    for (int64_t t = 0; t < len; t++) {                                         \
                        int64_t i = i0 + t * sL;                                                \
                        if (i >= 0 && i < outL) dd[i] += src[t];                                \
                    }                                                                           \
                }                                                                               \
                src += len;                                                                     \
                p += len;                                                                       \
                grid_step(m, o, len);                                                           \
            }                                                                                   \
        }                                                                                       \
    }

DEF_IM2COL(float, ox_conv_im2col_f32)
DEF_IM2COL(double, ox_conv_im2col_f64)
DEF_COL2IM(float, ox_conv_col2im_f32)
DEF_COL2IM(double, ox_conv_col2im_f64)


/* im2col of rows [k0, k0 + kc) and positions [p0, p1) written straight
 * into the GEMM's packed layout: nr-wide panels, k-major, the ragged
 * last panel zero-filled. 2-D convolutions, the common case, take
 * conv_cols2d.c's path without per-element tests; other ranks walk the
 * grid here. */
void ox_conv_cols(const void *arg, int64_t n, int64_t grp, int64_t k0, int64_t kc, int64_t p0,
                  int64_t p1, int nr, float *dst) {
    const ox_conv_cols_job *c = arg;
    const conv_geom *g = c->g;
    const win_map *m = &c->map;
    const float *x = c->x + (n * g->C + grp * g->Cg) * g->in_sz;
    if (g->r == 2) {
        ox_conv_cols_2d(&c->g2, x, k0, kc, p0, p1, nr, dst);
        return;
    }
    const int L = g->r - 1;
    const int64_t ncols = p1 - p0, pstride = (int64_t)nr * kc;
    int64_t start[OX_MAX_RANK], kpos[OX_MAX_RANK], o[OX_MAX_RANK];
    grid_pos(m, p0, start);
    const int64_t sL = m->stride[L], inL = m->tgt[L];
    for (int64_t row = k0; row < k0 + kc; row++) {
        const float *src = x + (row / g->k_sz) * g->in_sz;
        float *base = dst + (row - k0) * nr;
        kernel_pos(g, row % g->k_sz, kpos);
        memcpy(o, start, sizeof(int64_t) * (size_t)g->r);
        const int64_t kL = kpos[L] * m->dil[L] - m->pad[L];
        for (int64_t col = 0; col < ncols;) {
            int64_t len = m->grid[L] - o[L];
            if (len > ncols - col) len = ncols - col;
            int64_t off = lead_offset(m, o, kpos);
            const float *s = off < 0 ? NULL : src + off;
            int64_t i0 = o[L] * sL + kL;
            /* the run [col, col + len) in pieces that stay in one panel */
            for (int64_t t = 0; t < len;) {
                int64_t q = (col + t) / nr, within = (col + t) % nr;
                int64_t piece = nr - within < len - t ? nr - within : len - t;
                float *d = base + q * pstride + within;
                int64_t i = i0 + t * sL;
                if (!s) {
                    memset(d, 0, sizeof(float) * (size_t)piece);
                } else if (sL == 1 && i >= 0 && i + piece <= inL) {
                    memcpy(d, s + i, sizeof(float) * (size_t)piece);
                } else {
                    for (int64_t u = 0; u < piece; u++) {
                        d[u] = (i >= 0 && i < inL) ? s[i] : 0.0f;
                        /* not past the last: a stride near INT64_MAX that
                         * fits one window would overflow */
                        if (u + 1 < piece) i += sL;
                    }
                }
                t += piece;
            }
            col += len;
            grid_step(m, o, len);
        }
        if (ncols % nr) {
            float *d = base + (ncols / nr) * pstride + ncols % nr;
            memset(d, 0, sizeof(float) * (size_t)(nr - ncols % nr));
        }
    }
}

