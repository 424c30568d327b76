/* im2col of a 2-D float32 convolution written straight into the GEMM's
 * packed column panels (ox_conv_cols_2d in conv_fast.h).
 *
 * Per k-row (channel, kh, kw) the output columns ow whose input column
 * ow * sw + kw * dw - pw lies in [0, IW) form one range [lo, hi), found
 * by division once per row. Each output-row segment of the chunk is then
 * a zero run, a contiguous or strided copy and a zero run, with no
 * per-element bounds test; a whole segment is zero when its input row is
 * in the vertical padding. A cursor walks the panel layout and splits
 * the runs at panel boundaries without dividing.
 *
 * Most runs are shorter than a panel (nr floats), so they are plain loops
 * the compiler vectorizes; this file is built without GCC's rewriting of
 * such loops into memset/memcpy calls, which cost more than the copy. */
#include <stdint.h>

#include "ep/cpu/kernels/conv_fast.h"

typedef struct panel_cur {
    float *d;       /* destination of the next column */
    int64_t within; /* its column inside the current panel */
    int64_t jump;   /* from the end of a panel's row to the same row of the next panel */
} panel_cur;

static inline int64_t cur_piece(const panel_cur *c, int nr, int64_t len) {
    return nr - c->within < len ? nr - c->within : len;
}

static inline void cur_advance(panel_cur *c, int nr, int64_t piece) {
    c->d += piece;
    c->within += piece;
    if (c->within == nr) {
        c->d += c->jump;
        c->within = 0;
    }
}

static inline void cur_zero(panel_cur *c, int nr, int64_t len) {
    while (len > 0) {
        int64_t piece = cur_piece(c, nr, len);
        float *d = c->d;
        for (int64_t u = 0; u < piece; u++) d[u] = 0.0f;
        cur_advance(c, nr, piece);
        len -= piece;
    }
}

/* len >= 1 elements s[0], s[sw], ..., all inside one input row */
static inline void cur_copy(panel_cur *c, int nr, const float *s, int64_t sw, int64_t len) {
    for (;;) {
        int64_t piece = cur_piece(c, nr, len);
        float *restrict d = c->d;
        if (sw == 1)
            for (int64_t u = 0; u < piece; u++) d[u] = s[u];
        else if (sw == 2)
            for (int64_t u = 0; u < piece; u++) d[u] = s[2 * u];
        else
            for (int64_t u = 0; u < piece; u++) d[u] = s[u * sw];
        cur_advance(c, nr, piece);
        len -= piece;
        if (len == 0) break;
        /* only while an element follows, so s stays inside the row (a
         * stride near INT64_MAX that fits one window would overflow) */
        s += piece * sw;
    }
}

/* nr is a constant at each call below, so the piece loops specialize */
static inline void cols_2d_nr(const ox_cols2d_geom *g, const float *x, int64_t k0, int64_t kc,
                              int64_t p0, int64_t p1, const int nr, float *dst) {
    const int64_t IH = g->IH, IW = g->IW, OW = g->OW, KW = g->KW;
    const int64_t sh = g->sh, sw = g->sw, dh = g->dh, dw = g->dw, ph = g->ph, pw = g->pw;
    const int64_t ncols = p1 - p0, oh0 = p0 / OW, ow0 = p0 % OW;
    const int64_t tail = ncols % nr ? nr - ncols % nr : 0;
    for (int64_t row = k0; row < k0 + kc; row++) {
        int64_t kk = row % g->k_sz, kh = kk / KW, kw = kk % KW;
        const float *plane = x + (row / g->k_sz) * g->plane;
        /* the geometry check keeps IW + pw and (KW - 1) * dw within int64
         * and pw >= 0, so neither off nor lim overflows */
        int64_t off = kw * dw - pw, lim = IW - off;
        int64_t lo = off >= 0 ? 0 : -off / sw + (-off % sw != 0);
        int64_t hi = lim <= 0 ? 0 : lim / sw + (lim % sw != 0);
        if (lo > OW) lo = OW;
        if (hi < lo) hi = lo;
        if (hi > OW) hi = OW;
        panel_cur cur = {dst + (row - k0) * nr, 0, (int64_t)nr * kc - nr};
        int64_t oh = oh0, ow = ow0;
        for (int64_t col = 0; col < ncols;) {
            int64_t len = OW - ow < ncols - col ? OW - ow : ncols - col, end = ow + len;
            int64_t ih = oh * sh + kh * dh - ph;
            if (ih < 0 || ih >= IH) {
                cur_zero(&cur, nr, len);
            } else {
                int64_t a = lo < ow ? ow : lo > end ? end : lo;
                int64_t b = hi < a ? a : hi > end ? end : hi;
                cur_zero(&cur, nr, a - ow);
                if (b > a) cur_copy(&cur, nr, plane + ih * IW + a * sw + off, sw, b - a);
                cur_zero(&cur, nr, end - b);
            }
            col += len;
            oh++;
            ow = 0;
        }
        cur_zero(&cur, nr, tail);
    }
}

void ox_conv_cols_2d(const ox_cols2d_geom *g, const float *x, int64_t k0, int64_t kc, int64_t p0,
                     int64_t p1, int nr, float *dst) {
    if (nr == 16)
        cols_2d_nr(g, x, k0, kc, p0, p1, 16, dst);
    else if (nr == 32)
        cols_2d_nr(g, x, k0, kc, p0, p1, 32, dst);
    else
        cols_2d_nr(g, x, k0, kc, p0, p1, nr, dst);
}
