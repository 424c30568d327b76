/* 3x3 stride-1 convolutions by Winograd's minimal filtering F(2x2, 3x3)
 * or F(4x4, 3x3) (see conv_fast.h). Each s x s block of outputs ("tile",
 * s = 2 or 4) of an output channel is A^T [sum over c of U(m, c) .* V(c,
 * tile)] A, with
 *   U(m, c)    = G g(m, c) G^T   the 3x3 kernel made (s+2)x(s+2), once
 *   V(c, tile) = B^T d B         the tile's (s+2)x(s+2) input patch d
 * so the (s+2)^2 positions k of the products are independent matrix
 * products over the channels, M[k] (M x T) = U[k] (M x C) V[k] (C x T),
 * which the convolution GEMM runs on U packed as (s+2)^2 groups.
 * F(2x2, 3x3): 16 multiplies per 4 outputs per channel pair instead of
 * 36 (2.25 times fewer), with transforms of additions and halvings that
 * keep the values within a few ulps of the direct sum. F(4x4, 3x3): 36
 * per 16 (4 times fewer), transforms with the points 0, +-1, +-2
 * (factors up to 8 and 1/24), a few times the rounding error of the
 * direct sum; its U is 36/16 times larger, so it suits shallow layers
 * on large planes (conv.c chooses).
 *
 * The input is first copied into zero-padded planes with room for every
 * tile's patch (and slack per row for the vector loads), so the
 * transforms never test bounds; for F(4x4, 3x3) each padded row is
 * stored as four phases (columns 4q, 4q+1, 4q+2, 4q+3), so eight
 * neighbouring tiles' patch column j is one plain vector load. Tiles are
 * taken a band of tile rows at a time, so that a band's V and M stay in
 * cache between the input transform, the products and the output
 * transform; eight tiles of a row are transformed at once, one vector
 * lane each. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "ep/cpu/kernels/conv_fast.h"

/* transformed positions: (s + 2)^2 */
#define POS2 16
#define POS4 36
#define POS_MAX POS4
/* the padded copy may not exceed this many floats (256 MiB) */
#define MAX_PADDED ((int64_t)1 << 26)
/* bytes of V and M of one band, about what stays in a core's L2 */
#define BAND_BYTES ((int64_t)768 << 10)

typedef float v8f __attribute__((vector_size(32)));

/* ---------------------------------------------------------------- */
/* weights */

/* U = G g G^T for one 3x3 kernel g, G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1];
 * u[k] with k = 4 i + j. */
static void kernel_transform2(const float *g, float *u) {
    float t[4][3];
    for (int j = 0; j < 3; j++) {
        float g0 = g[j], g1 = g[3 + j], g2 = g[6 + j];
        t[0][j] = g0;
        t[1][j] = (g0 + g1 + g2) * 0.5f;
        t[2][j] = (g0 - g1 + g2) * 0.5f;
        t[3][j] = g2;
    }
    for (int i = 0; i < 4; i++) {
        u[4 * i + 0] = t[i][0];
        u[4 * i + 1] = (t[i][0] + t[i][1] + t[i][2]) * 0.5f;
        u[4 * i + 2] = (t[i][0] - t[i][1] + t[i][2]) * 0.5f;
        u[4 * i + 3] = t[i][2];
    }
}

/* G x for F(4x4, 3x3): G = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6;
 * 1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1], in double */
static void g6(double x0, double x1, double x2, double *o) {
    o[0] = x0 / 4;
    o[1] = -(x0 + x1 + x2) / 6;
    o[2] = -(x0 - x1 + x2) / 6;
    o[3] = x0 / 24 + x1 / 12 + x2 / 6;
    o[4] = x0 / 24 - x1 / 12 + x2 / 6;
    o[5] = x2;
}

/* U = G g G^T, u[k] with k = 6 i + j, rounded once from double */
static void kernel_transform4(const float *g, float *u) {
    double t[6][3], r[6];
    for (int j = 0; j < 3; j++) {
        g6(g[j], g[3 + j], g[6 + j], r);
        for (int i = 0; i < 6; i++) t[i][j] = r[i];
    }
    for (int i = 0; i < 6; i++) {
        g6(t[i][0], t[i][1], t[i][2], r);
        for (int j = 0; j < 6; j++) u[6 * i + j] = (float)r[j];
    }
}

static inline int positions(int s) { return s == 4 ? POS4 : POS2; }

size_t ox_conv_winograd_bytes(int64_t M, int64_t C, int s) {
    return ox_conv_packed_bytes(positions(s), M, C);
}

int ox_conv_winograd_pack(const float *w, int64_t M, int64_t C, int s, ox_conv_packed *out) {
    memset(out, 0, sizeof *out);
    const int np = positions(s);
    size_t n;
    if (M < 1 || C < 1 || (s != 2 && s != 4) || !ox_conv_winograd_bytes(M, C, s) ||
        !ox_mul_size((size_t)np * (size_t)M, (size_t)C, &n))
        return -1;
    /* np groups of an M x C matrix: group k holds every U(m, c)[k] */
    float *u = malloc(n * sizeof(float));
    if (!u) return -1;
    for (int64_t m = 0; m < M; m++)
        for (int64_t c = 0; c < C; c++) {
            float uk[POS_MAX];
            if (s == 4) kernel_transform4(w + (m * C + c) * 9, uk);
            else kernel_transform2(w + (m * C + c) * 9, uk);
            for (int k = 0; k < np; k++) u[(k * M + m) * C + c] = uk[k];
        }
    int rc = ox_conv_pack_weights(u, np, M, C, out);
    free(u);
    return rc;
}

/* ---------------------------------------------------------------- */
/* transforms, written once with generic vectors and inlined into each
 * instruction-set variant */

typedef struct wino_job {
    const ox_conv_winograd_args *a;
    int s;               /* output tile size (2 or 4) */
    int64_t TH, TW;      /* tile rows and columns */
    int64_t PH, PW;      /* rows of a padded plane, floats per padded row */
    int64_t PQ;          /* F(4x4): floats per phase of a padded row */
    float *pad;          /* C padded planes of one image */
    int64_t n;           /* the image */
    int64_t th0, bt;     /* the band's first tile row, its tile count */
    int64_t nr, Pp;      /* the GEMM's panel width; bt rounded up to it */
    float *v, *mm;       /* the band's V (np x C x bt) and M (np x M x bt) */
    atomic_int *failed;  /* set by a step that could not get memory */
} wino_job;

/* (a macro: a function returning a vector by value would change its ABI
 * between the variants) */
#define LOAD8(v, p) memcpy(&(v), (p), sizeof(v8f))

/* Padded rows of channels [c0, c1): F(2x2, 3x3) as plain rows (padded
 * column q holds input column q - pw), F(4x4, 3x3) as four phases of PQ
 * floats (phase f, element q: padded column 4 q + f), made from the
 * plain row (row, PW floats) by splitting 32 columns at a time. */
static inline __attribute__((always_inline)) void pad_rows(const wino_job *j, int64_t c0, int64_t c1,
                                                           const int s) {
    const ox_conv_winograd_args *a = j->a;
    /* the plain row: on the stack up to outputs about 2000 wide */
    float stack_row[2048], *row = NULL;
    if (s == 4) {
        row = j->PW <= 2048 ? stack_row : malloc(sizeof(float) * (size_t)j->PW);
        if (!row) {
            atomic_store(j->failed, 1);
            return;
        }
    }
    const int64_t lo = a->pw, hi = a->pw + a->IW < j->PW ? a->pw + a->IW : j->PW;
    for (int64_t c = c0; c < c1; c++) {
        const float *src = a->x + (j->n * a->C + c) * a->IH * a->IW;
        float *d = j->pad + c * j->PH * j->PW;
        for (int64_t r = 0; r < j->PH; r++) {
            float *dr = d + r * j->PW;
            int64_t iy = r - a->ph;
            if (iy < 0 || iy >= a->IH) {
                memset(dr, 0, sizeof(float) * (size_t)j->PW);
                continue;
            }
            float *plain = s == 4 ? row : dr;
            memset(plain, 0, sizeof(float) * (size_t)lo);
            memcpy(plain + lo, src + iy * a->IW, sizeof(float) * (size_t)(hi - lo));
            memset(plain + hi, 0, sizeof(float) * (size_t)(j->PW - hi));
            if (s == 2) continue;
            for (int64_t q = 0; q < j->PQ; q += 8) {
                v8f x0, x1, x2, x3;
                LOAD8(x0, row + 4 * q);
                LOAD8(x1, row + 4 * q + 8);
                LOAD8(x2, row + 4 * q + 16);
                LOAD8(x3, row + 4 * q + 24);
                v8f e0 = __builtin_shufflevector(x0, x1, 0, 2, 4, 6, 8, 10, 12, 14);
                v8f o0 = __builtin_shufflevector(x0, x1, 1, 3, 5, 7, 9, 11, 13, 15);
                v8f e1 = __builtin_shufflevector(x2, x3, 0, 2, 4, 6, 8, 10, 12, 14);
                v8f o1 = __builtin_shufflevector(x2, x3, 1, 3, 5, 7, 9, 11, 13, 15);
                v8f f[4] = {__builtin_shufflevector(e0, e1, 0, 2, 4, 6, 8, 10, 12, 14),
                            __builtin_shufflevector(o0, o1, 0, 2, 4, 6, 8, 10, 12, 14),
                            __builtin_shufflevector(e0, e1, 1, 3, 5, 7, 9, 11, 13, 15),
                            __builtin_shufflevector(o0, o1, 1, 3, 5, 7, 9, 11, 13, 15)};
                for (int ph = 0; ph < 4; ph++) memcpy(dr + ph * j->PQ + q, &f[ph], sizeof(v8f));
            }
        }
    }
    if (row != stack_row) free(row);
}

/* The four patch columns of eight neighbouring tiles from one padded
 * row: tile q's column j is p[2 q + j]. */
static inline __attribute__((always_inline)) void patch_row(const float *p, v8f d[4]) {
    v8f a0, a1, b0, b1;
    LOAD8(a0, p);
    LOAD8(a1, p + 8);
    LOAD8(b0, p + 2);
    LOAD8(b1, p + 10);
    d[0] = __builtin_shufflevector(a0, a1, 0, 2, 4, 6, 8, 10, 12, 14);
    d[1] = __builtin_shufflevector(a0, a1, 1, 3, 5, 7, 9, 11, 13, 15);
    d[2] = __builtin_shufflevector(b0, b1, 0, 2, 4, 6, 8, 10, 12, 14);
    d[3] = __builtin_shufflevector(b0, b1, 1, 3, 5, 7, 9, 11, 13, 15);
}

/* V = B^T d B for eight tiles, B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]. */
static inline __attribute__((always_inline)) void input_tiles2(const float *p, int64_t PW, v8f v[16]) {
    v8f d[4][4], t[4][4];
    for (int i = 0; i < 4; i++) patch_row(p + i * PW, d[i]);
    for (int j = 0; j < 4; j++) {
        t[0][j] = d[0][j] - d[2][j];
        t[1][j] = d[1][j] + d[2][j];
        t[2][j] = d[2][j] - d[1][j];
        t[3][j] = d[1][j] - d[3][j];
    }
    for (int i = 0; i < 4; i++) {
        v[4 * i + 0] = t[i][0] - t[i][2];
        v[4 * i + 1] = t[i][1] + t[i][2];
        v[4 * i + 2] = t[i][2] - t[i][1];
        v[4 * i + 3] = t[i][1] - t[i][3];
    }
}

/* B^T x for F(4x4, 3x3): B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0;
 * 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1] */
static inline __attribute__((always_inline)) void bt6(const v8f x[6], v8f r[6]) {
    const v8f x12 = x[1] + x[2], x34 = x[3] + x[4], d21 = x[2] - x[1], d43 = x[4] - x[3];
    const v8f d42 = x[4] - x[2], d31 = x[3] - x[1];
    r[0] = 4.0f * x[0] - 5.0f * x[2] + x[4];
    r[1] = x34 - 4.0f * x12;
    r[2] = d43 - 4.0f * d21;
    r[3] = d42 + 2.0f * d31;
    r[4] = d42 - 2.0f * d31;
    r[5] = 4.0f * x[1] - 5.0f * x[3] + x[5];
}

/* V = B^T d B for eight tiles: p is the phase-0 element of the first
 * tile in the patch's top padded row, so patch column j of the eight is
 * phase j % 4 from element j / 4. */
static inline __attribute__((always_inline)) void input_tiles4(const float *p, int64_t PW, int64_t PQ,
                                                               v8f v[36]) {
    v8f t[6][6];
    for (int i = 0; i < 6; i++) {
        v8f d[6];
        for (int jj = 0; jj < 6; jj++) LOAD8(d[jj], p + i * PW + (jj & 3) * PQ + (jj >> 2));
        /* the row transform first: t[i] = d_i B */
        bt6(d, t[i]);
    }
    for (int jj = 0; jj < 6; jj++) {
        v8f col[6], r[6];
        for (int i = 0; i < 6; i++) col[i] = t[i][jj];
        bt6(col, r);
        for (int i = 0; i < 6; i++) v[6 * i + jj] = r[i];
    }
}

/* Floats from one position's C x Pp block of V to the next: one line
 * more than the block, so that the positions of a tile, written one
 * after the other, do not all fall in one set of the L1 cache (blocks
 * of a multiple of 4 KiB did: 36 stores 16 KiB apart missed the cache
 * each, a third of F(4x4, 3x3)'s input transform). */
static inline int64_t position_stride(int64_t C, int64_t Pp) { return C * Pp + 16; }

/* Items [i0, i1) of the band into V, item i being channel i % C of
 * panel i / C (a band of a deep layer may hold a single panel, and
 * channels then share the work between threads), written straight in
 * the layout the GEMM's tiles read (conv_fast.h, x_packed): per
 * position k a group of C rows, in slabs of OX_CONV_KC rows, each slab
 * in panels of nr tiles. Channel by channel, so that each position's
 * writes run on through the panel; tiles past the band are zeros. */
static inline __attribute__((always_inline)) void input_band(const wino_job *j, int64_t i0,
                                                             int64_t i1, const int s) {
    const int np = positions(s);
    const int64_t C = j->a->C, bt = j->bt, nr = j->nr, Pp = j->Pp, TW = j->TW;
    const int64_t kstride = position_stride(C, Pp);
    for (int64_t i = i0; i < i1; i++) {
        const int64_t pi = i / C, c = i % C;
        const float *plane = j->pad + c * j->PH * j->PW;
        const int64_t k0 = c / OX_CONV_KC * OX_CONV_KC;
        const int64_t kc = C - k0 < OX_CONV_KC ? C - k0 : OX_CONV_KC;
        float *panel = j->v + k0 * Pp + pi * nr * kc + (c - k0) * nr;
        /* the panel's tiles in runs that stay in one tile row, eight
         * at a time */
        for (int64_t q = 0; q < nr;) {
            int64_t t = pi * nr + q;
            if (t >= bt) {
                for (int k = 0; k < np; k++)
                    memset(panel + k * kstride + q, 0, sizeof(float) * (size_t)(nr - q));
                break;
            }
            int64_t r = t / TW, tw = t % TW, run = TW - tw;
            if (run > 8) run = 8;
            if (run > nr - q) run = nr - q;
            if (run > bt - t) run = bt - t;
            v8f v[POS_MAX];
            if (s == 4) input_tiles4(plane + 4 * (j->th0 + r) * j->PW + tw, j->PW, j->PQ, v);
            else input_tiles2(plane + 2 * (j->th0 + r) * j->PW + 2 * tw, j->PW, v);
            /* all eight lanes while the panel has room for them: the lanes
             * past the run belong to the next run, which writes them
             * after (or to the tiles past the band, zeroed after) */
            if (q + 8 <= nr) {
                for (int k = 0; k < np; k++) memcpy(panel + k * kstride + q, &v[k], sizeof(v8f));
            } else {
                for (int k = 0; k < np; k++)
                    memcpy(panel + k * kstride + q, &v[k], sizeof(float) * (size_t)run);
            }
            q += run;
        }
    }
}

/* Y = A^T M A for eight tiles, A^T = [1 1 1 0; 0 1 -1 -1], plus the bias;
 * y[i][jj] lane q is output (row i, column 2 q + jj) of the eight. */
static inline __attribute__((always_inline)) void output_tiles2(const v8f m[16], float b, v8f y[4][4]) {
    v8f s[2][4];
    for (int j = 0; j < 4; j++) {
        s[0][j] = m[j] + m[4 + j] + m[8 + j];
        s[1][j] = m[4 + j] - m[8 + j] - m[12 + j];
    }
    for (int i = 0; i < 2; i++) {
        y[i][0] = s[i][0] + s[i][1] + s[i][2] + b;
        y[i][1] = s[i][1] - s[i][2] - s[i][3] + b;
    }
}

/* A^T x for F(4x4, 3x3): A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0;
 * 0 1 1 4 4 0; 0 1 -1 8 -8 1] */
static inline __attribute__((always_inline)) void at6(const v8f x[6], v8f o[4]) {
    const v8f s12 = x[1] + x[2], d12 = x[1] - x[2], s34 = x[3] + x[4], d34 = x[3] - x[4];
    o[0] = x[0] + s12 + s34;
    o[1] = d12 + 2.0f * d34;
    o[2] = s12 + 4.0f * s34;
    o[3] = d12 + 8.0f * d34 + x[5];
}

/* Y = A^T M A for eight tiles plus the bias; y[i][jj] lane q is output
 * (row i, column 4 q + jj) of the eight. */
static inline __attribute__((always_inline)) void output_tiles4(const v8f m[36], float b, v8f y[4][4]) {
    v8f t[4][6];
    for (int jj = 0; jj < 6; jj++) {
        v8f col[6], o[4];
        for (int i = 0; i < 6; i++) col[i] = m[6 * i + jj];
        at6(col, o);
        for (int i = 0; i < 4; i++) t[i][jj] = o[i];
    }
    for (int i = 0; i < 4; i++) {
        at6(t[i], y[i]);
        for (int jj = 0; jj < 4; jj++) y[i][jj] += b;
    }
}

/* zip of the low and of the high halves of two vectors */
#define ZIP_LO(x, y) __builtin_shufflevector(x, y, 0, 8, 1, 9, 2, 10, 3, 11)
#define ZIP_HI(x, y) __builtin_shufflevector(x, y, 4, 12, 5, 13, 6, 14, 7, 15)

/* Output channels [m0, m1) of the band from M into Y, then the residual
 * and the activation on the band's rows while they are in cache. */
static inline __attribute__((always_inline)) void output_band(const wino_job *j, int64_t m0,
                                                              int64_t m1, const int s) {
    const int np = positions(s);
    const ox_conv_winograd_args *a = j->a;
    const int64_t M = a->M, bt = j->bt, OH = a->OH, OW = a->OW;
    const int64_t rows = bt / j->TW;
    for (int64_t m = m0; m < m1; m++) {
        float b = a->bias ? a->bias[m] : 0.0f;
        float *ym = a->y + (j->n * M + m) * OH * OW;
        for (int64_t r = 0; r < rows; r++) {
            for (int64_t tw = 0; tw < j->TW; tw += 8) {
                const int64_t t = r * j->TW + tw;
                v8f mk[POS_MAX], y[4][4];
                const float *src = j->mm + m * bt + t;
                /* eight lanes even past the row's tiles (M ends in slack):
                 * their outputs lie past OW and are not stored */
                for (int k = 0; k < np; k++) LOAD8(mk[k], src + k * M * bt);
                if (s == 4) output_tiles4(mk, b, y);
                else output_tiles2(mk, b, y);
                for (int i = 0; i < s; i++) {
                    int64_t oy = s * (j->th0 + r) + i, ox = s * tw;
                    if (oy >= OH) break;
                    /* the row's outputs of the eight tiles, columns
                     * interleaved */
                    v8f out[4];
                    if (s == 4) {
                        v8f lo02 = ZIP_LO(y[i][0], y[i][2]), hi02 = ZIP_HI(y[i][0], y[i][2]);
                        v8f lo13 = ZIP_LO(y[i][1], y[i][3]), hi13 = ZIP_HI(y[i][1], y[i][3]);
                        out[0] = ZIP_LO(lo02, lo13);
                        out[1] = ZIP_HI(lo02, lo13);
                        out[2] = ZIP_LO(hi02, hi13);
                        out[3] = ZIP_HI(hi02, hi13);
                    } else {
                        out[0] = ZIP_LO(y[i][0], y[i][1]);
                        out[1] = ZIP_HI(y[i][0], y[i][1]);
                    }
                    /* whole vectors, then what is left of the row */
                    float *yr = ym + oy * OW + ox;
                    const int64_t left = OW - ox < 8 * s ? OW - ox : 8 * s;
                    int u = 0;
                    for (; 8 * (u + 1) <= left; u++) memcpy(yr + 8 * u, &out[u], sizeof(v8f));
                    if (8 * u < left) memcpy(yr + 8 * u, &out[u], sizeof(float) * (size_t)(left - 8 * u));
                }
            }
        }
        if (a->z || a->act.kind != OX_ACT_NONE) {
            const int64_t y0 = s * j->th0, y1 = s * (j->th0 + rows) < OH ? s * (j->th0 + rows) : OH;
            const int64_t off = (j->n * M + m) * OH * OW + y0 * OW, len = (y1 - y0) * OW;
            ox_conv_epilogue(a->y + off, len, 1, len, NULL, a->z ? a->z + off : NULL, len, &a->act,
                             a->isa);
        }
    }
}

/* the range functions of one variant: each step for each tile size */
#define DEF_STEPS(SUF, TARGET)                                                                     \
    TARGET static void pad2_##SUF(void *arg, int64_t c0, int64_t c1) { pad_rows(arg, c0, c1, 2); } \
    TARGET static void pad4_##SUF(void *arg, int64_t c0, int64_t c1) { pad_rows(arg, c0, c1, 4); } \
    TARGET static void input2_##SUF(void *arg, int64_t i0, int64_t i1) { input_band(arg, i0, i1, 2); } \
    TARGET static void input4_##SUF(void *arg, int64_t i0, int64_t i1) { input_band(arg, i0, i1, 4); } \
    TARGET static void output2_##SUF(void *arg, int64_t m0, int64_t m1) { output_band(arg, m0, m1, 2); } \
    TARGET static void output4_##SUF(void *arg, int64_t m0, int64_t m1) { output_band(arg, m0, m1, 4); }

DEF_STEPS(portable, )
#if defined(__x86_64__) && defined(__GNUC__)
#define OX_WINO_X86 1
DEF_STEPS(avx2, __attribute__((target("avx2,fma"))))
/* the same eight-lane code with AVX-512's 32 vector registers: the
 * F(4x4, 3x3) transforms hold 36 vectors */
DEF_STEPS(avx512, __attribute__((target("avx512f,avx512vl,avx2,fma"))))
#endif

/* ---------------------------------------------------------------- */
/* driver */

/* The padded planes' rows and floats per row for an OH x OW output in
 * tiles of s x s: every tile's (s+2)x(s+2) patch inside, and slack per
 * row for the vector loads (F(4x4, 3x3): four phases of *PQ floats, the
 * eight tiles' loads reading up to element TW + 8 of a phase); 0 when
 * the sizes overflow. */
static int padded_plane(int s, int64_t OH, int64_t OW, int64_t *PH, int64_t *PW, int64_t *PQ) {
    const int64_t TH = (OH + s - 1) / s, TW = (OW + s - 1) / s;
    if (!ox_add_i64(s * TH, 2, PH)) return 0;
    if (s == 4) {
        *PQ = (TW + 8 + 7) / 8 * 8;
        return ox_mul_i64(*PQ, 4, PW);
    }
    *PQ = 0;
    return ox_add_i64((TW + 7) / 8 * 16, 2 + 16, PW);
}

int ox_conv_winograd_fits(int64_t C, int64_t OH, int64_t OW, int64_t ph, int64_t pw, int s) {
    int64_t PH, PW, PQ, plane, n;
    if (C < 1 || OH < 1 || OW < 1 || ph < 0 || pw < 0 || (s != 2 && s != 4) ||
        OH > INT64_MAX / 8 || OW > INT64_MAX / 8)
        return 0;
    return padded_plane(s, OH, OW, &PH, &PW, &PQ) && ox_mul_i64(PH, PW, &plane) &&
           ox_mul_i64(C, plane, &n) && n <= MAX_PADDED;
}

/* n floats and 16 more of slack for the vector loads, in whole 64-byte
 * lines */
static int64_t padded_floats(int64_t n) { return (n + 16 + 15) / 16 * 16; }

typedef struct wino_run {
    wino_job j;             /* the image's job: the band fields unset */
    const ox_stop *stop;
    int64_t band_rows;
    int64_t vf, mf;         /* floats of one band's V and M, slack included */
    int64_t slots;          /* bands_alone: threads, each with its V and M */
    float *vm;              /* the slots' V and M, one after the other */
    ox_range_fn pad, input, output;
    atomic_int failed;
} wino_run;

/* The band of tile rows from th0 (j->v, j->mm set) through the three
 * steps, each split over the pool's threads (NULL: this thread). */
static int band_run(ox_threadpool *pool, const wino_run *r, wino_job *j, int64_t th0) {
    const ox_conv_winograd_args *a = j->a;
    j->th0 = th0;
    j->bt = (th0 + r->band_rows <= j->TH ? r->band_rows : j->TH - th0) * j->TW;
    j->Pp = (j->bt + j->nr - 1) / j->nr * j->nr;
    ox_parallel_for(pool, j->Pp / j->nr * a->C, 1, r->input, j);
    ox_conv_gemm_args ga = {.w = a->u, .N = 1, .P = j->bt, .x = j->v, .x_img = 0,
                            .x_grp = position_stride(a->C, j->Pp), .x_packed = 1, .y = j->mm,
                            .act = {.kind = OX_ACT_NONE}, .isa = a->isa};
    if (ox_conv_gemm_run(pool, r->stop, &ga) != 0) return -1;
    ox_parallel_for(pool, a->M, 1, r->output, j);
    return 0;
}

/* Slots [s0, s1): slot i runs bands i, i + slots, ... on this thread
 * with V and M of its own. */
static void bands_alone(void *arg, int64_t s0, int64_t s1) {
    wino_run *r = arg;
    for (int64_t i = s0; i < s1; i++) {
        wino_job j = r->j;
        j.v = r->vm + i * (r->vf + r->mf);
        j.mm = j.v + r->vf;
        const int64_t bands = (j.TH + r->band_rows - 1) / r->band_rows;
        for (int64_t b = i; b < bands && !ox_stop_requested(r->stop); b += r->slots)
            if (band_run(NULL, r, &j, b * r->band_rows) != 0) {
                atomic_store(&r->failed, 1);
                return;
            }
    }
}

/* 1 when the threads should take whole bands each rather than share
 * every band: every step of a band is then one thread's, with no
 * waiting between them, which pays once the bands deal out evenly (at
 * most one band in eight idle). */
static int bands_per_thread(int threads, int64_t bands) {
    if (threads <= 1 || bands < threads) return 0;
    const int64_t rounds = (bands + threads - 1) / threads;
    return rounds * threads * 8 <= bands * 9;
}

/* Tile rows per band: at most fit (the rows whose V and M fill
 * BAND_BYTES), and with several threads, as equal as the rows allow over
 * a number of bands that the threads deal out evenly. Few channels make
 * large bands: 16 -> 16 channels on 128x128 made 7 bands of 5 rows (the
 * last of 2), which bands_per_thread rejected, so every band's three steps
 * were shared between the threads, with a wait after each (two threads,
 * AMD Zen 4: 0.39-0.50 ms, no faster than the GEMM from the padded input);
 * 8 bands of 4 rows go 4 to each thread. */
static int64_t band_rows(int threads, int64_t TH, int64_t fit) {
    if (fit < 1) fit = 1;
    if (fit > TH) fit = TH;
    const int64_t least = (TH + fit - 1) / fit;
    if (threads <= 1 || least < threads) return fit;
    const int64_t bands = (least + threads - 1) / threads * threads;
    return (TH + bands - 1) / bands;
}

int ox_conv_winograd_f32(ox_threadpool *pool, const ox_stop *stop, const ox_conv_winograd_args *a) {
    const int sz = a->s;
    if (!ox_conv_winograd_fits(a->C, a->OH, a->OW, a->ph, a->pw, sz) ||
        a->u->G != positions(sz))
        return 0;
    const int64_t C = a->C, M = a->M;
    const int np = positions(sz);
    wino_run r = {.j = {.a = a, .s = sz, .TH = (a->OH + sz - 1) / sz,
                        .TW = (a->OW + sz - 1) / sz},
                  .stop = stop};
    wino_job *j = &r.j;
    /* the padded planes hold the input rows and columns the tiles read:
     * rows/columns past the input (bottom/right padding or the ragged
     * last tile) are zeros; fits checked their size */
    (void)padded_plane(sz, a->OH, a->OW, &j->PH, &j->PW, &j->PQ);
    const int64_t pad_floats = C * j->PH * j->PW;
    const int threads = ox_threadpool_size(pool);
    r.band_rows = band_rows(threads, j->TH, BAND_BYTES / ((int64_t)sizeof(float) * np * (C + M) * j->TW));
    j->nr = ox_conv_gemm_panel_width(a->isa);
    const int64_t band_max = r.band_rows * j->TW, bands = (j->TH + r.band_rows - 1) / r.band_rows;
    if (!ox_mul_i64(np, position_stride(C, (band_max + j->nr - 1) / j->nr * j->nr), &r.vf) ||
        !ox_mul_i64(np * M, band_max, &r.mf))
        return 0;
    const int four = sz == 4;
    r.pad = four ? pad4_portable : pad2_portable;
    r.input = four ? input4_portable : input2_portable;
    r.output = four ? output4_portable : output2_portable;
#ifdef OX_WINO_X86
    if (a->isa == OX_ISA_AVX2) {
        r.pad = four ? pad4_avx2 : pad2_avx2;
        r.input = four ? input4_avx2 : input2_avx2;
        r.output = four ? output4_avx2 : output2_avx2;
    } else if (a->isa == OX_ISA_AVX512) {
        r.pad = four ? pad4_avx512 : pad2_avx512;
        r.input = four ? input4_avx512 : input2_avx512;
        r.output = four ? output4_avx512 : output2_avx512;
    }
#endif
    atomic_init(&r.failed, 0);
    j->failed = &r.failed;
    const int alone = bands_per_thread(threads, bands);
    r.slots = alone ? threads : 1;
    r.vf = padded_floats(r.vf);
    r.mf = padded_floats(r.mf);
    /* the padded planes, then each slot's V and M: one allocation, the
     * pool's scratch when it is free */
    const int64_t pf = padded_floats(pad_floats);
    int64_t total;
    if (!ox_mul_i64(r.slots, r.vf + r.mf, &total) || !ox_add_i64(total, pf, &total) ||
        total > (int64_t)(SIZE_MAX / sizeof(float)))
        return -1;
    int lent = 0;
    float *mem = ox_threadpool_scratch(pool, (size_t)total * sizeof(float), &lent);
    if (!mem) return -1;
    j->pad = mem;
    r.vm = mem + pf;
    j->v = r.vm;
    j->mm = r.vm + r.vf;
    int rc = 1;
    for (int64_t n = 0; n < a->N && rc == 1; n++) {
        j->n = n;
        ox_parallel_for(pool, C, 1, r.pad, j);
        if (atomic_load(&r.failed)) {
            rc = -1;
            break;
        }
        if (alone) {
            ox_parallel_for(pool, r.slots, 1, bands_alone, &r);
            if (atomic_load(&r.failed)) rc = -1;
            continue;
        }
        for (int64_t b = 0; b < bands && rc == 1; b++) {
            if (ox_stop_requested(stop)) goto done;
            if (band_run(pool, &r, j, b * r.band_rows) != 0) rc = -1;
        }
    }
done:
    ox_threadpool_scratch_done(pool, mem, lent);
    return rc;
}
