/* 3x3 stride-1 convolutions by Winograd's minimal filtering F(2x2, 3x3)
 * (see conv_fast.h). Each 2x2 block of outputs ("tile") of an output
 * channel is A^T [sum over c of U(m, c) .* V(c, tile)] A, with
 *   U(m, c)    = G g(m, c) G^T   the 3x3 kernel made 4x4, once per session
 *   V(c, tile) = B^T d B         the tile's 4x4 input patch d transformed
 * so the 16 positions k of the 4x4 products are 16 independent matrix
 * products over the channels, M[k] (M x T) = U[k] (M x C) V[k] (C x T),
 * which the convolution GEMM runs on U packed as 16 groups. That is 16
 * multiplies per 4 outputs per channel pair instead of 36: 2.25 times
 * fewer. The transforms use only additions and halvings (with F(2x2, 3x3)
 * the values stay within a few ulps of the direct sum; larger tiles would
 * trade accuracy for fewer products).
 *
 * The input is first copied into zero-padded planes with room for every
 * tile's patch (and 16 floats of slack per row for the vector loads), so
 * the transforms never test bounds. Tiles are taken a band of tile rows
 * at a time, so that a band's V and M stay in cache between the input
 * transform, the products and the output transform; eight tiles of a row
 * are transformed at once, one vector lane each. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "ep/cpu/kernels/conv_fast.h"

#define TILES 16 /* 4x4 transformed positions */
/* the padded copy may not exceed this many floats (256 MiB) */
#define MAX_PADDED ((int64_t)1 << 26)
/* bytes of V and M of one band, about what stays in a core's L2 */
#define BAND_BYTES ((int64_t)768 << 10)

typedef float v8f __attribute__((vector_size(32)));

/* ---------------------------------------------------------------- */
/* weights */

/* U = G g G^T for one 3x3 kernel g, G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1];
 * u[k] with k = 4 i + j. */
static void kernel_transform(const float *g, float *u) {
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

size_t ox_conv_winograd_bytes(int64_t M, int64_t C) { return ox_conv_packed_bytes(TILES, M, C); }

int ox_conv_winograd_pack(const float *w, int64_t M, int64_t C, ox_conv_packed *out) {
    memset(out, 0, sizeof *out);
    size_t n;
    if (M < 1 || C < 1 || !ox_conv_winograd_bytes(M, C) ||
        !ox_mul_size((size_t)TILES * (size_t)M, (size_t)C, &n))
        return -1;
    /* 16 groups of an M x C matrix: group k holds every U(m, c)[k] */
    float *u = malloc(n * sizeof(float));
    if (!u) return -1;
    for (int64_t m = 0; m < M; m++)
        for (int64_t c = 0; c < C; c++) {
            float uk[TILES];
            kernel_transform(w + (m * C + c) * 9, uk);
            for (int k = 0; k < TILES; k++) u[(k * M + m) * C + c] = uk[k];
        }
    int rc = ox_conv_pack_weights(u, TILES, M, C, out);
    free(u);
    return rc;
}

/* ---------------------------------------------------------------- */
/* transforms, written once with generic vectors and inlined into each
 * instruction-set variant */

typedef struct wino_job {
    const ox_conv_winograd_args *a;
    int64_t TH, TW;      /* tile rows and columns */
    int64_t PH, PW;      /* rows and columns of a padded plane */
    float *pad;          /* C padded planes of one image */
    int64_t n;           /* the image */
    int64_t th0, bt;     /* the band's first tile row, its tile count */
    int64_t nr, Pp;      /* the GEMM's panel width; bt rounded up to it */
    float *v, *mm;       /* the band's V (16 x C x bt) and M (16 x M x bt) */
} wino_job;

static void pad_planes(void *arg, int64_t c0, int64_t c1) {
    const wino_job *j = arg;
    const ox_conv_winograd_args *a = j->a;
    for (int64_t c = c0; c < c1; c++) {
        const float *s = a->x + (j->n * a->C + c) * a->IH * a->IW;
        float *d = j->pad + c * j->PH * j->PW;
        for (int64_t r = 0; r < j->PH; r++) {
            float *dr = d + r * j->PW;
            int64_t iy = r - a->ph;
            if (iy < 0 || iy >= a->IH) {
                memset(dr, 0, sizeof(float) * (size_t)j->PW);
                continue;
            }
            /* padded column q holds input column q - pw */
            int64_t lo = a->pw, hi = a->pw + a->IW < j->PW ? a->pw + a->IW : j->PW;
            memset(dr, 0, sizeof(float) * (size_t)lo);
            memcpy(dr + lo, s + iy * a->IW, sizeof(float) * (size_t)(hi - lo));
            memset(dr + hi, 0, sizeof(float) * (size_t)(j->PW - hi));
        }
    }
}

/* (a macro: a function returning a vector by value would change its ABI
 * between the variants) */
#define LOAD8(v, p) memcpy(&(v), (p), sizeof(v8f))

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
static inline __attribute__((always_inline)) void input_tiles(const float *p, int64_t PW, v8f v[16]) {
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

/* Items [i0, i1) of the band into V, item i being channel i % C of
 * panel i / C (a band of a deep layer may hold a single panel, and
 * channels then share the work between threads), written straight in
 * the layout the GEMM's tiles read (conv_fast.h, x_packed): per
 * position k a group of C rows, in slabs of OX_CONV_KC rows, each slab
 * in panels of nr tiles. Channel by channel, so that each position's
 * writes run on through the panel; tiles past the band are zeros. */
static inline __attribute__((always_inline)) void input_band(const wino_job *j, int64_t i0,
                                                             int64_t i1) {
    const int64_t C = j->a->C, bt = j->bt, nr = j->nr, Pp = j->Pp, TW = j->TW;
    const int64_t kstride = C * Pp;
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
                for (int k = 0; k < TILES; k++)
                    memset(panel + k * kstride + q, 0, sizeof(float) * (size_t)(nr - q));
                break;
            }
            int64_t r = t / TW, tw = t % TW, run = TW - tw;
            if (run > 8) run = 8;
            if (run > nr - q) run = nr - q;
            if (run > bt - t) run = bt - t;
            v8f v[TILES];
            input_tiles(plane + 2 * (j->th0 + r) * j->PW + 2 * tw, j->PW, v);
            if (run == 8) {
                for (int k = 0; k < TILES; k++) memcpy(panel + k * kstride + q, &v[k], sizeof(v8f));
            } else {
                for (int k = 0; k < TILES; k++)
                    memcpy(panel + k * kstride + q, &v[k], sizeof(float) * (size_t)run);
            }
            q += run;
        }
    }
}

/* Y = A^T M A for eight tiles, A^T = [1 1 1 0; 0 1 -1 -1], plus the bias;
 * y[2 i + jj] lane q is output (row i, column 2 q + jj) of the eight. */
static inline __attribute__((always_inline)) void output_tiles(const v8f m[16], float b, v8f y[2][2]) {
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

/* Output channels [m0, m1) of the band from M into Y. */
static inline __attribute__((always_inline)) void output_band(const wino_job *j, int64_t m0,
                                                              int64_t m1) {
    const ox_conv_winograd_args *a = j->a;
    const int64_t M = a->M, bt = j->bt, OH = a->OH, OW = a->OW;
    const int64_t rows = bt / j->TW;
    for (int64_t m = m0; m < m1; m++) {
        float b = a->bias ? a->bias[m] : 0.0f;
        float *ym = a->y + (j->n * M + m) * OH * OW;
        for (int64_t r = 0; r < rows; r++) {
            for (int64_t tw = 0; tw < j->TW; tw += 8) {
                int64_t valid = j->TW - tw < 8 ? j->TW - tw : 8, t = r * j->TW + tw;
                v8f mk[TILES], y[2][2];
                const float *src = j->mm + m * bt + t;
                if (valid == 8) {
                    for (int k = 0; k < TILES; k++) LOAD8(mk[k], src + k * M * bt);
                } else {
                    for (int k = 0; k < TILES; k++) {
                        mk[k] = (v8f){0};
                        memcpy(&mk[k], src + k * M * bt, sizeof(float) * (size_t)valid);
                    }
                }
                output_tiles(mk, b, y);
                for (int i = 0; i < 2; i++) {
                    int64_t oy = 2 * (j->th0 + r) + i, ox = 2 * tw;
                    if (oy >= OH) break;
                    /* the 16 outputs of the row, columns interleaved */
                    v8f out[2] = {
                        __builtin_shufflevector(y[i][0], y[i][1], 0, 8, 1, 9, 2, 10, 3, 11),
                        __builtin_shufflevector(y[i][0], y[i][1], 4, 12, 5, 13, 6, 14, 7, 15)};
                    if (OW - ox >= 16) memcpy(ym + oy * OW + ox, out, sizeof out);
                    else memcpy(ym + oy * OW + ox, out, sizeof(float) * (size_t)(OW - ox));
                }
            }
        }
        /* the residual and the activation on the band's rows, while
         * they are in cache */
        if (a->z || a->act.kind != OX_ACT_NONE) {
            const int64_t y0 = 2 * j->th0, y1 = 2 * (j->th0 + rows) < OH ? 2 * (j->th0 + rows) : OH;
            const int64_t off = (j->n * M + m) * OH * OW + y0 * OW, len = (y1 - y0) * OW;
            ox_conv_epilogue(a->y + off, len, 1, len, NULL, a->z ? a->z + off : NULL, len, &a->act,
                             a->isa);
        }
    }
}

static void input_portable(void *arg, int64_t i0, int64_t i1) { input_band(arg, i0, i1); }
static void output_portable(void *arg, int64_t m0, int64_t m1) { output_band(arg, m0, m1); }

#if defined(__x86_64__) && defined(__GNUC__)
#define OX_WINO_X86 1
__attribute__((target("avx2,fma"))) static void input_avx2(void *arg, int64_t i0, int64_t i1) {
    input_band(arg, i0, i1);
}
__attribute__((target("avx2,fma"))) static void output_avx2(void *arg, int64_t m0, int64_t m1) {
    output_band(arg, m0, m1);
}
#endif

/* ---------------------------------------------------------------- */
/* driver */

/* The padded planes' rows and columns for an OH x OW output: every
 * tile's 4x4 patch inside, and 16 floats of slack per row for the vector
 * loads; 0 when the sizes overflow. */
static int padded_plane(int64_t OH, int64_t OW, int64_t *PH, int64_t *PW) {
    const int64_t TH = (OH + 1) / 2, TW = (OW + 1) / 2;
    return ox_add_i64(2 * TH, 2, PH) && ox_add_i64((TW + 7) / 8 * 16, 2 + 16, PW);
}

int ox_conv_winograd_fits(int64_t C, int64_t OH, int64_t OW, int64_t ph, int64_t pw) {
    int64_t PH, PW, plane, n;
    if (C < 1 || OH < 1 || OW < 1 || ph < 0 || pw < 0) return 0;
    return padded_plane(OH, OW, &PH, &PW) && ox_mul_i64(PH, PW, &plane) &&
           ox_mul_i64(C, plane, &n) && n <= MAX_PADDED;
}

/* n floats and 16 more, 64-byte aligned (a size aligned_alloc accepts) */
static float *alloc_floats(int64_t n) {
    return aligned_alloc(64, ((size_t)n * sizeof(float) + 64 + 63) / 64 * 64);
}

typedef struct wino_run {
    wino_job j;             /* the image's job: the band fields unset */
    const ox_stop *stop;
    int64_t band_rows;
    int64_t vf, mf;         /* floats of one band's V and M */
    ox_range_fn input, output;
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
                            .x_grp = a->C * j->Pp, .x_packed = 1, .y = j->mm,
                            .act = {.kind = OX_ACT_NONE}, .isa = a->isa};
    if (ox_conv_gemm_run(pool, r->stop, &ga) != 0) return -1;
    ox_parallel_for(pool, a->M, 1, r->output, j);
    return 0;
}

/* Bands [b0, b1) on this thread, with V and M of its own. */
static void bands_alone(void *arg, int64_t b0, int64_t b1) {
    wino_run *r = arg;
    wino_job j = r->j;
    j.v = alloc_floats(r->vf);
    j.mm = alloc_floats(r->mf);
    for (int64_t b = b0; b < b1 && j.v && j.mm && !ox_stop_requested(r->stop); b++)
        if (band_run(NULL, r, &j, b * r->band_rows) != 0) break;
    if (!j.v || !j.mm) atomic_store(&r->failed, 1);
    free(j.v);
    free(j.mm);
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

int ox_conv_winograd_f32(ox_threadpool *pool, const ox_stop *stop, const ox_conv_winograd_args *a) {
    if (!ox_conv_winograd_fits(a->C, a->OH, a->OW, a->ph, a->pw)) return 0;
    const int64_t C = a->C, M = a->M;
    wino_run r = {.j = {.a = a, .TH = (a->OH + 1) / 2, .TW = (a->OW + 1) / 2}, .stop = stop};
    wino_job *j = &r.j;
    /* the padded planes hold the input rows and columns the tiles read:
     * rows/columns past the input (bottom/right padding or the ragged
     * last tile) are zeros; fits checked their size */
    (void)padded_plane(a->OH, a->OW, &j->PH, &j->PW);
    const int64_t pad_floats = C * j->PH * j->PW;
    r.band_rows = BAND_BYTES / ((int64_t)sizeof(float) * TILES * (C + M) * j->TW);
    if (r.band_rows < 1) r.band_rows = 1;
    if (r.band_rows > j->TH) r.band_rows = j->TH;
    j->nr = ox_conv_gemm_panel_width(a->isa);
    const int64_t band_max = r.band_rows * j->TW, bands = (j->TH + r.band_rows - 1) / r.band_rows;
    if (!ox_mul_i64(TILES * C, (band_max + j->nr - 1) / j->nr * j->nr, &r.vf) ||
        !ox_mul_i64(TILES * M, band_max, &r.mf))
        return 0;
    r.input = input_portable, r.output = output_portable;
#ifdef OX_WINO_X86
    if (a->isa == OX_ISA_AVX2 || a->isa == OX_ISA_AVX512) r.input = input_avx2, r.output = output_avx2;
#endif
    atomic_init(&r.failed, 0);
    const int alone = bands_per_thread(ox_threadpool_size(pool), bands);
    j->pad = alloc_floats(pad_floats);
    if (!alone) {
        j->v = alloc_floats(r.vf);
        j->mm = alloc_floats(r.mf);
    }
    int rc = 1;
    if (!j->pad || (!alone && (!j->v || !j->mm))) {
        rc = -1;
        goto done;
    }
    for (int64_t n = 0; n < a->N && rc == 1; n++) {
        j->n = n;
        ox_parallel_for(pool, C, 1, pad_planes, j);
        if (alone) {
            ox_parallel_for(pool, bands, 1, bands_alone, &r);
            if (atomic_load(&r.failed)) rc = -1;
            continue;
        }
        for (int64_t b = 0; b < bands && rc == 1; b++) {
            if (ox_stop_requested(stop)) goto done;
            if (band_run(pool, &r, j, b * r.band_rows) != 0) rc = -1;
        }
    }
done:
    free(j->pad);
    free(j->v);
    free(j->mm);
    return rc;
}
