/* im2col of a 2-D float32 convolution written straight into the GEMM's
 * packed column panels (ox_conv_cols_2d in conv_fast.h).
 *
 * Per k-row (channel, kh, kw) the output columns ow whose input column
 * ow * sw + kw * dw - pw lies in [0, IW) form one range [lo, hi), found
 * by division once per kernel column. Each output-row segment of the
 * chunk is then a zero run, a contiguous or strided copy and a zero run,
 * with no per-element bounds test; a whole segment is zero when its input row is
 * in the vertical padding. With stride 1 and the output as wide as the
 * input, a kernel column that reads whole input rows reads one stretch of
 * the plane for the whole chunk, one copy instead of one per output row.
 * A cursor walks the panel layout and splits the runs at panel
 * boundaries without dividing.
 *
 * Most runs are shorter than a panel (nr floats), so they are plain loops
 * the compiler vectorizes; this file is built without GCC's rewriting of
 * such loops into memset/memcpy calls, which cost more than the copy. */
#include <stdint.h>

#include "ep/cpu/kernels/conv_fast.h"

typedef struct panel_cur {
    float *d;       /* the next column, or the end of the panel row when within == nr */
    int64_t within; /* its column inside the current panel */
    int64_t jump;   /* from the end of a panel's row to the same row of the next panel */
} panel_cur;

/* The next piece: the rest of the current panel's row, at most len. The
 * cursor moves on to the next panel only here, when a piece follows, so
 * it never points past the buffer. */
static inline int64_t cur_piece(panel_cur *c, int nr, int64_t len) {
    if (c->within == nr) {
        c->d += c->jump;
        c->within = 0;
    }
    return nr - c->within < len ? nr - c->within : len;
}

static inline void cur_advance(panel_cur *c, int64_t piece) {
    c->d += piece;
    c->within += piece;
}

static inline void cur_zero(panel_cur *c, int nr, int64_t len) {
    while (len > 0) {
        int64_t piece = cur_piece(c, nr, len);
        float *d = c->d;
        for (int64_t u = 0; u < piece; u++) d[u] = 0.0f;
        cur_advance(c, piece);
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
        cur_advance(c, piece);
        len -= piece;
        if (len == 0) break;
        /* only while an element follows, so s stays inside the row (a
         * stride near INT64_MAX that fits one window would overflow) */
        s += piece * sw;
    }
}

/* [lo, hi): the output columns whose input column ow * sw + kw * dw - pw
 * lies in [0, IW), and off = kw * dw - pw. The geometry check keeps
 * IW + pw and (KW - 1) * dw within int64 and pw >= 0, so neither off nor
 * IW - off overflows. */
static void kw_range(const ox_cols2d_geom *g, int64_t kw, int64_t *off, int64_t *lo, int64_t *hi) {
    const int64_t sw = g->sw, o = kw * g->dw - g->pw, lim = g->IW - o;
    int64_t l = o >= 0 ? 0 : -o / sw + (-o % sw != 0);
    int64_t h = lim <= 0 ? 0 : lim / sw + (lim % sw != 0);
    if (l > g->OW) l = g->OW;
    if (h < l) h = l;
    if (h > g->OW) h = g->OW;
    *off = o;
    *lo = l;
    *hi = h;
}

/* kernel widths up to this get their ranges computed once per call
 * rather than once per row (divisions cost as much as a short row) */
#define KW_TABLE 16

/* nr is a constant at each call below, so the piece loops specialize */
static inline void cols_2d_nr(const ox_cols2d_geom *g, const float *x, int64_t k0, int64_t kc,
                              int64_t p0, int64_t p1, const int nr, float *dst) {
    const int64_t IH = g->IH, IW = g->IW, OW = g->OW, KW = g->KW, KH = g->k_sz / KW;
    const int64_t sh = g->sh, sw = g->sw, dh = g->dh, ph = g->ph;
    const int64_t ncols = p1 - p0, oh0 = p0 / OW, ow0 = p0 % OW, OH = g->OH;
    /* output position p reads input position p + constant for kernel
     * columns that need no horizontal padding (stride 1, same width) */
    const int flat = sh == 1 && sw == 1 && OW == IW;
    const int64_t tail = ncols % nr ? nr - ncols % nr : 0;
    int64_t offs[KW_TABLE], los[KW_TABLE], his[KW_TABLE];
    const int table = KW <= KW_TABLE;
    for (int64_t i = 0; table && i < KW; i++) kw_range(g, i, &offs[i], &los[i], &his[i]);
    /* (channel, kh, kw) of row k0, then counted up row by row */
    int64_t ch = k0 / g->k_sz, kh = k0 % g->k_sz / KW, kw = k0 % g->k_sz % KW;
    for (int64_t row = k0; row < k0 + kc; row++) {
        const float *plane = x + ch * g->plane;
        int64_t off, lo, hi;
        if (table) {
            off = offs[kw];
            lo = los[kw];
            hi = his[kw];
        } else {
            kw_range(g, kw, &off, &lo, &hi);
        }
        panel_cur cur = {dst + (row - k0) * nr, 0, (int64_t)nr * kc - nr};
        int64_t oh = oh0, ow = ow0, khoff = kh * dh - ph;
        if (flat && lo == 0 && hi == OW) {
            /* every input row is read whole, so the valid output rows
             * [ohA, ohB) read one stretch of the plane (a valid row
             * bounds |khoff| * IW by the plane or the output size) */
            int64_t ohA = khoff < 0 ? -khoff : 0, ohB = IH - khoff;
            ohA = ohA < OH ? ohA : OH;
            ohB = ohB < ohA ? ohA : ohB > OH ? OH : ohB;
            int64_t ca = ohA * OW - p0, cb = ohB * OW - p0;
            ca = ca < 0 ? 0 : ca > ncols ? ncols : ca;
            cb = cb < ca ? ca : cb > ncols ? ncols : cb;
            cur_zero(&cur, nr, ca);
            if (cb > ca) cur_copy(&cur, nr, plane + ((p0 + ca) + khoff * IW), 1, cb - ca);
            cur_zero(&cur, nr, ncols - cb + tail);
        } else {
            for (int64_t col = 0; col < ncols;) {
                int64_t len = OW - ow < ncols - col ? OW - ow : ncols - col, end = ow + len;
                int64_t ih = oh * sh + khoff;
                if (ih < 0 || ih >= IH) {
                    cur_zero(&cur, nr, len);
                } else {
                    int64_t a = lo < ow ? ow : lo > end ? end : lo;
                    int64_t b = hi < a ? a : hi > end ? end : hi;
                    cur_zero(&cur, nr, a - ow);
                    /* the index is summed before the pointer moves: a * sw
                     * alone may reach past the row when off < 0 */
                    if (b > a) cur_copy(&cur, nr, plane + (ih * IW + (a * sw + off)), sw, b - a);
                    cur_zero(&cur, nr, end - b);
                }
                col += len;
                oh++;
                ow = 0;
            }
            cur_zero(&cur, nr, tail);
        }
        if (++kw == KW) {
            kw = 0;
            if (++kh == KH) {
                kh = 0;
                ch++;
            }
        }
    }
}

/* Small chunks (a 4x4 or 8x8 output, the end of a backbone) spend the
 * run-based copy above on its set-up: per row of the column matrix a
 * few runs of a few floats. There the source offset of each (kernel tap,
 * column) pair, or -1 in the padding, is tabled once per call, and each
 * row is a gather from its channel's plane: DETR's last backbone
 * convolution (4x4 output, 96 channels, 3x3) built its columns 3.5 times
 * faster on an AMD Zen 4 machine (the convolution alone 0.078 -> 0.043
 * ms). */
#define TABLE_MAX_COLS 64
#define TABLE_MAX 1024

static inline int cols_2d_table(const ox_cols2d_geom *g, const float *x, int64_t k0, int64_t kc,
                                int64_t p0, int64_t p1, const int nr, float *dst) {
    const int64_t ncols = p1 - p0, k_sz = g->k_sz, KW = g->KW;
    if (ncols > TABLE_MAX_COLS || k_sz * ncols > TABLE_MAX) return 0;
    int32_t off[TABLE_MAX];
    for (int64_t t = 0; t < k_sz; t++) {
        const int64_t kh = t / KW, kw = t % KW;
        for (int64_t q = 0; q < ncols; q++) {
            const int64_t p = p0 + q, oh = p / g->OW, ow = p % g->OW;
            const int64_t ih = oh * g->sh + kh * g->dh - g->ph, iw = ow * g->sw + kw * g->dw - g->pw;
            /* inside the plane (IH * IW <= int32 checked by the caller) */
            off[t * ncols + q] = ih >= 0 && ih < g->IH && iw >= 0 && iw < g->IW ? (int32_t)(ih * g->IW + iw) : -1;
        }
    }
    const int64_t pstride = (int64_t)nr * kc;
    /* (channel, tap) of row k0, then counted up row by row */
    int64_t ch = k0 / k_sz, t = k0 % k_sz;
    for (int64_t row = 0; row < kc; row++) {
        const float *plane = x + ch * g->plane;
        const int32_t *o = off + t * ncols;
        float *d = dst + row * nr;
        for (int64_t q0 = 0; q0 < ncols; q0 += nr, d += pstride, o += nr) {
            const int64_t n = ncols - q0 < nr ? ncols - q0 : nr;
            int64_t q = 0;
            for (; q < n; q++) d[q] = o[q] >= 0 ? plane[o[q]] : 0.0f;
            /* zeros to the end of the last panel */
            for (; q < nr; q++) d[q] = 0.0f;
        }
        if (++t == k_sz) {
            t = 0;
            ch++;
        }
    }
    return 1;
}

/* the tabled gather when it applies, else the runs; nr a constant in
 * each instance below, so the piece loops specialize */
static inline void cols_2d(const ox_cols2d_geom *g, const float *x, int64_t k0, int64_t kc, int64_t p0,
                           int64_t p1, const int nr, float *dst) {
    if (g->plane <= INT32_MAX && cols_2d_table(g, x, k0, kc, p0, p1, nr, dst)) return;
    cols_2d_nr(g, x, k0, kc, p0, p1, nr, dst);
}

void ox_conv_cols_2d(const ox_cols2d_geom *g, const float *x, int64_t k0, int64_t kc, int64_t p0,
                     int64_t p1, int nr, float *dst) {
    if (nr == 16)
        cols_2d(g, x, k0, kc, p0, p1, 16, dst);
    else if (nr == 32)
        cols_2d(g, x, k0, kc, p0, p1, 32, dst);
    else
        cols_2d(g, x, k0, kc, p0, p1, nr, dst);
}
