/* CPU kernels of the pooling operators. Windowed pools walk, for each
 * output element, only the part of the window that overlaps the input,
 * so padding never costs reads; work is split over output elements. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "core/checked.h"
#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/gemm.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"

extern const ox_kernel_table ox_cpu_kernels_pool;

/* ================================================================ */
/* geometry */

typedef struct pool_geom {
    int r;
    int64_t planes; /* N * C */
    int64_t in[OX_MAX_RANK], k[OX_MAX_RANK], out[OX_MAX_RANK];
    int64_t s[OX_MAX_RANK], d[OX_MAX_RANK], pb[OX_MAX_RANK], pe[OX_MAX_RANK];
    int64_t in_str[OX_MAX_RANK];
    int64_t in_sz, out_sz;
} pool_geom;

static int pool_geom_make(ox_kernel_ctx *ctx, const ox_tensor *x, const ox_tensor *y, pool_geom *g) {
    const char *op = ctx->node->op_type;
    size_t nk = 0;
    const int64_t *k = ir_attr_ints(ctx->node, "kernel_shape", &nk);
    if (!k || nk == 0 || (int)nk + 2 != x->rank || y->rank != x->rank)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: kernel_shape does not match input rank %d",
                              op, x->rank);
    int r = (int)nk;
    const int64_t *strides, *dils, *pads;
    if (ox_cpu_attr_ints(ctx, "strides", r, &strides) ||
        ox_cpu_attr_ints(ctx, "dilations", r, &dils) || ox_cpu_attr_ints(ctx, "pads", 2 * r, &pads))
        return -1;
    int ap = ox_parse_auto_pad(ir_attr_string(ctx->node, "auto_pad", "NOTSET"));
    if (ap < 0) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: unknown auto_pad", op);
    int ceil_mode = (int)ir_attr_int(ctx->node, "ceil_mode", 0);
    g->r = r;
    g->planes = x->dims[0] * x->dims[1];
    if (y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1])
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "%s: output shape does not match input", op);
    g->in_sz = g->out_sz = 1;
    for (int i = 0; i < r; i++) {
        g->in[i] = x->dims[i + 2];
        g->k[i] = k[i];
        g->s[i] = strides ? strides[i] : 1;
        g->d[i] = dils ? dils[i] : 1;
        g->pb[i] = pads ? pads[i] : 0;
        g->pe[i] = pads ? pads[i + r] : 0;
        if (ox_window_axis(g->in[i], g->k[i], g->s[i], g->d[i], ap, ceil_mode, &g->pb[i], &g->pe[i],
                           &g->out[i]))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: invalid window on spatial axis %d (kernel %lld, input %lld)", op,
                                  i, (long long)k[i], (long long)g->in[i]);
        if (g->out[i] != y->dims[i + 2])
            return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "%s: output shape does not match input", op);
        /* the window walk computes (out - 1) * stride - pad_begin, the
         * input plus both pads and pad_begin plus a dilation: all must fit */
        int64_t t;
        if (g->out[i] > 0 && (!ox_mul_i64(g->out[i] - 1, g->s[i], &t) || !ox_sub_i64(t, g->pb[i], &t) ||
                              !ox_add_i64(g->in[i], g->pb[i], &t) || !ox_add_i64(t, g->pe[i], &t) ||
                              !ox_add_i64(g->pb[i], g->d[i], &t)))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: window arithmetic on spatial axis %d overflows (stride %lld, "
                                  "pads %lld and %lld, dilation %lld)",
                                  op, i, (long long)g->s[i], (long long)g->pb[i], (long long)g->pe[i],
                                  (long long)g->d[i]);
        /* an empty batch or channel axis leaves the spatial sizes free */
        if (!ox_mul_i64(g->in_sz, g->in[i], &g->in_sz) || !ox_mul_i64(g->out_sz, g->out[i], &g->out_sz))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: spatial sizes overflow 64 bits (input %lld at axis %d)", op,
                                  (long long)g->in[i], i);
    }
    g->in_str[r - 1] = 1;
    for (int i = r - 2; i >= 0; i--) g->in_str[i] = g->in_str[i + 1] * g->in[i + 1];
    return 0;
}

/* Window of output position o (multi-index): start coordinate and the
 * range [k0, k1) of kernel taps that land inside the input per axis.
 * Returns 0 when the window misses the input entirely. */
static int window(const pool_geom *g, const int64_t *o, int64_t *st, int64_t *k0, int64_t *k1) {
    int nonempty = 1;
    for (int i = 0; i < g->r; i++) {
        int64_t s = o[i] * g->s[i] - g->pb[i], dl = g->d[i];
        int64_t a = s < 0 ? (-s + dl - 1) / dl : 0;
        int64_t b = g->in[i] - s <= 0 ? 0 : (g->in[i] - s + dl - 1) / dl;
        if (b > g->k[i]) b = g->k[i];
        st[i] = s;
        k0[i] = a;
        k1[i] = b;
        if (b <= a) nonempty = 0;
    }
    return nonempty;
}

static void next_pos(const pool_geom *g, int64_t *o) {
    for (int i = g->r - 1; i >= 0; i--) {
        if (++o[i] < g->out[i]) return;
        o[i] = 0;
    }
}

static void pos_of(const pool_geom *g, int64_t p, int64_t *o) {
    for (int i = g->r - 1; i >= 0; i--) {
        o[i] = p % g->out[i];
        p /= g->out[i];
    }
}

/* Runs BODY for every in-range tap of the window (st, k0, k1); `idx` is
 * the tap's flat offset inside the plane. */
#define FOR_EACH_TAP(g, st, k0, k1, BODY)                                                       \
    do {                                                                                        \
        const int L_ = (g)->r - 1;                                                              \
        int64_t kk_[OX_MAX_RANK];                                                               \
        for (int i_ = 0; i_ < L_; i_++) kk_[i_] = (k0)[i_];                                     \
        for (;;) {                                                                              \
            int64_t base_ = (st)[L_];                                                           \
            for (int i_ = 0; i_ < L_; i_++)                                                     \
                base_ += ((st)[i_] + kk_[i_] * (g)->d[i_]) * (g)->in_str[i_];                   \
            for (int64_t t_ = (k0)[L_]; t_ < (k1)[L_]; t_++) {                                  \
                int64_t idx = base_ + t_ * (g)->d[L_];                                          \
                BODY                                                                            \
            }                                                                                   \
            int i_ = L_ - 1;                                                                    \
            for (; i_ >= 0; i_--) {                                                             \
                if (++kk_[i_] < (k1)[i_]) break;                                                \
                kk_[i_] = (k0)[i_];                                                             \
            }                                                                                   \
            if (i_ < 0) break;                                                                  \
        }                                                                                       \
    } while (0)

/* Column-major (storage_order 1) flat offset of a row-major one. */
static int64_t col_major(const pool_geom *g, int64_t idx) {
    int64_t coord[OX_MAX_RANK];
    for (int i = g->r - 1; i >= 0; i--) {
        coord[i] = idx % g->in[i];
        idx /= g->in[i];
    }
    int64_t res = 0, mul = 1;
    for (int i = 0; i < g->r; i++) {
        res += coord[i] * mul;
        mul *= g->in[i];
    }
    return res;
}

/* ================================================================ */
/* windowed pools */

enum { POOL_MAX, POOL_AVG, POOL_LP };

typedef struct pool_job {
    const pool_geom *g;
    int kind;
    const void *x;
    void *y;
    int64_t *ind; /* MaxPool indices or NULL */
    int col_major;
    int include_pad;
    double p; /* LpPool exponent */
    const ox_stop *stop;
} pool_job;

/* MaxPool with the Indices output: one output element at a time, so the
 * winning tap's position is known. */
#define DEF_ARGMAX(T, SUF)                                                                      \
    static void pool_range_##SUF(void *arg, int64_t e0, int64_t e1) {                           \
        const pool_job *j = arg;                                                                \
        const pool_geom *g = j->g;                                                              \
        int64_t o[OX_MAX_RANK], st[OX_MAX_RANK], k0[OX_MAX_RANK], k1[OX_MAX_RANK];              \
        pos_of(g, e0 % g->out_sz, o);                                                           \
        for (int64_t e = e0; e < e1; e++) {                                                     \
            if (((e - e0) & 63) == 0 && ox_stop_requested(j->stop)) return;                     \
            int64_t plane = e / g->out_sz;                                                      \
            const T *x = (const T *)j->x + plane * g->in_sz;                                    \
            T best = 0;                                                                         \
            int64_t arg_i = -1;                                                                 \
            if (window(g, o, st, k0, k1))                                                       \
                FOR_EACH_TAP(g, st, k0, k1, {                                                   \
                    T v = x[idx];                                                               \
                    if (arg_i < 0 || v > best) {                                                \
                        best = v;                                                               \
                        arg_i = idx;                                                            \
                    }                                                                           \
                });                                                                             \
            ((T *)j->y)[e] = best;                                                              \
            int64_t at = arg_i < 0 ? 0 : (j->col_major ? col_major(g, arg_i) : arg_i);          \
            j->ind[e] = plane * g->in_sz + at;                                                  \
            next_pos(g, o);                                                                     \
        }                                                                                       \
    }

DEF_ARGMAX(float, f32)
DEF_ARGMAX(double, f64)
DEF_ARGMAX(int8_t, i8)
DEF_ARGMAX(uint8_t, u8)

static void run_pool_range(ox_kernel_ctx *ctx, pool_job *j, ox_dtype dt) {
    int64_t total = j->g->planes * j->g->out_sz;
    int64_t taps = 1;
    /* only sets the grain: saturates rather than overflows */
    for (int i = 0; i < j->g->r; i++)
        if (!ox_mul_i64(taps, j->g->k[i], &taps)) taps = INT64_MAX;
    int64_t grain = taps >= 4096 ? 1 : 4096 / (taps > 0 ? taps : 1);
    ox_range_fn fn = dt == ONYX_FLOAT32  ? pool_range_f32
                     : dt == ONYX_FLOAT64 ? pool_range_f64
                     : dt == ONYX_INT8    ? pool_range_i8
                                          : pool_range_u8;
    ox_parallel_for(ctx->pool, total, grain, fn, j);
}

/* ---------------------------------------------------------------- */
/* Row-wise pools (everything but MaxPool's Indices): one output row
 * (the last spatial axis) at a time. Window bounds per output index come
 * from per-axis tables built once, and along the last axis each kernel
 * column updates the contiguous run of outputs it reaches. */

typedef struct rows_job {
    const pool_geom *g;
    int kind;
    const void *x;
    void *y;
    const ox_stop *stop;
    int include_pad;
    double p;
    int64_t rows_per_plane;
    /* per axis i, arrays of length out[i]: window start, first and end tap inside the input,
     * taps inside the padded extent */
    const int64_t *st[OX_MAX_RANK], *k0[OX_MAX_RANK], *k1[OX_MAX_RANK], *pc[OX_MAX_RANK];
    /* last axis, per kernel column kf + c of the live ones [kf, kl): outputs [lo[c], hi[c]) it reaches */
    const int64_t *lo, *hi;
    int64_t kf, kl;
    /* some output on the last axis has a window of padding only */
    int empty_cols;
} rows_job;

/* ceil(a / b) for b > 0 without the a + b - 1 that overflows when
 * dilations or pads are near INT64_MAX. */
static int64_t cdiv(int64_t a, int64_t b) { return a / b + (a % b > 0); }

/* Last-axis kernel columns [*kf, *kl) whose taps land inside the input
 * for some output: the others read only padding, so no table or loop
 * covers them; a kernel_shape of 2^40 over huge pads reaches at most
 * in + (out - 1) * s input positions. 0 when the bounds overflow. */
static int live_columns(const pool_geom *g, int64_t *kf, int64_t *kl) {
    int L = g->r - 1;
    int64_t reach, first, end;
    if (!ox_mul_i64(g->out[L] - 1, g->s[L], &reach) || !ox_sub_i64(g->pb[L], reach, &first) ||
        !ox_add_i64(g->in[L], g->pb[L], &end))
        return 0;
    *kf = first <= 0 ? 0 : cdiv(first, g->d[L]);
    *kl = end <= 0 ? 0 : cdiv(end, g->d[L]);
    if (*kl > g->k[L]) *kl = g->k[L];
    if (*kf > *kl) *kf = *kl;
    return 1;
}

/* The per-axis window tables in one allocation; NULL with *why set
 * ("overflow" or "memory") when they cannot be built. */
static int64_t *build_tables(const pool_geom *g, rows_job *j, const char **why) {
    int64_t total = 0;
    size_t bytes;
    *why = "overflow";
    if (!live_columns(g, &j->kf, &j->kl)) return NULL;
    for (int i = 0; i < g->r; i++)
        if (!ox_muladd_i64(4, g->out[i], total, &total)) return NULL;
    if (!ox_muladd_i64(2, j->kl - j->kf, total, &total) || !ox_nbytes_checked(total, sizeof(int64_t), &bytes))
        return NULL;
    *why = "memory";
    int64_t *buf = malloc(bytes ? bytes : 1);
    if (!buf) return NULL;
    int64_t *p = buf;
    for (int i = 0; i < g->r; i++) {
        int64_t *st = p, *k0 = p + g->out[i], *k1 = p + 2 * g->out[i], *pc = p + 3 * g->out[i];
        p += 4 * g->out[i];
        /* window geometry fits int64: ox_window_axis checked in + pads and the kernel extent */
        for (int64_t o = 0; o < g->out[i]; o++) {
            int64_t s = o * g->s[i] - g->pb[i], dl = g->d[i];
            int64_t a = s < 0 ? cdiv(-s, dl) : 0;
            int64_t b = g->in[i] - s <= 0 ? 0 : cdiv(g->in[i] - s, dl);
            if (b > g->k[i]) b = g->k[i];
            int64_t lo = -g->pb[i], hi = g->in[i] + g->pe[i];
            int64_t pa = s < lo ? cdiv(lo - s, dl) : 0;
            int64_t pbnd = hi - s <= 0 ? 0 : cdiv(hi - s, dl);
            if (pbnd > g->k[i]) pbnd = g->k[i];
            st[o] = s;
            k0[o] = a;
            k1[o] = b > a ? b : a;
            pc[o] = pbnd > pa ? pbnd - pa : 0;
        }
        j->st[i] = st;
        j->k0[i] = k0;
        j->k1[i] = k1;
        j->pc[i] = pc;
    }
    int L = g->r - 1;
    int64_t n = j->kl - j->kf, *lo = p, *hi = p + n;
    for (int64_t c = 0; c < n; c++) {
        int64_t off = (j->kf + c) * g->d[L] - g->pb[L], s = g->s[L];
        int64_t a = off >= 0 ? 0 : cdiv(-off, s);
        int64_t lim = g->in[L] - 1 - off;
        int64_t b = lim < 0 ? 0 : lim / s + 1;
        if (b > g->out[L]) b = g->out[L];
        lo[c] = a;
        hi[c] = b > a ? b : a;
    }
    j->lo = lo;
    j->hi = hi;
    j->empty_cols = 0;
    for (int64_t o = 0; o < g->out[L]; o++) j->empty_cols |= j->k1[L][o] == j->k0[L][o];
    return buf;
}

/* Output row t (every axis but the last): its plane, position o[d] and
 * window taps [a[d], b[d]) inside the input on each leading axis d, with
 * kk starting at a; returns the number of those taps, and in *pcount the
 * number inside the padded extent. */
static int64_t row_window(const rows_job *j, int64_t t, int64_t *plane, int64_t *o, int64_t *a,
                          int64_t *b, int64_t *kk, int64_t *pcount) {
    const pool_geom *g = j->g;
    const int L = g->r - 1;
    int64_t orow = t % j->rows_per_plane, ocount = 1;
    *plane = t / j->rows_per_plane;
    *pcount = 1;
    for (int d = L - 1; d >= 0; d--) {
        o[d] = orow % g->out[d];
        orow /= g->out[d];
    }
    for (int d = 0; d < L; d++) {
        a[d] = j->k0[d][o[d]];
        b[d] = j->k1[d][o[d]];
        ocount *= b[d] - a[d];
        *pcount *= j->pc[d][o[d]];
        kk[d] = a[d];
    }
    return ocount;
}

/* The input offset of the window row at taps kk, and the next taps in
 * row-major order (0 after the last). */
static int64_t tap_row(const rows_job *j, const int64_t *o, const int64_t *kk) {
    const pool_geom *g = j->g;
    int64_t base = 0;
    for (int d = 0; d < g->r - 1; d++) base += (j->st[d][o[d]] + kk[d] * g->d[d]) * g->in_str[d];
    return base;
}

static int next_tap_row(const rows_job *j, const int64_t *a, const int64_t *b, int64_t *kk) {
    for (int d = j->g->r - 2; d >= 0; d--) {
        if (++kk[d] < b[d]) return 1;
        kk[d] = a[d];
    }
    return 0;
}

#define DEF_ROWS(T, SUF, LOWEST, VMAX, VADD)                                                    \
    static void rows_range_##SUF(void *arg, int64_t t0, int64_t t1) {                           \
        const rows_job *j = arg;                                                                \
        const pool_geom *g = j->g;                                                              \
        const int L = g->r - 1;                                                                 \
        const int64_t outL = g->out[L], sL = g->s[L];                                           \
        for (int64_t t = t0; t < t1; t++) {                                                     \
            if (ox_stop_requested(j->stop)) return;                                             \
            int64_t plane, pcount, o[OX_MAX_RANK], a[OX_MAX_RANK], b[OX_MAX_RANK], kk[OX_MAX_RANK]; \
            int64_t ocount = row_window(j, t, &plane, o, a, b, kk, &pcount);                    \
            T *y = (T *)j->y + t * outL;                                                        \
            const T *xp = (const T *)j->x + plane * g->in_sz;                                   \
            for (int64_t i = 0; i < outL; i++) y[i] = j->kind == POOL_MAX ? LOWEST : (T)0;     \
            while (ocount > 0) {                                                                \
                const int64_t base = tap_row(j, o, kk);                                         \
                const T *xr = xp + base;                                                        \
                for (int64_t kw = j->kf; kw < j->kl; kw++) {                                    \
                    int64_t off = kw * g->d[L] - g->pb[L];                                      \
                    int64_t lo = j->lo[kw - j->kf], hi = j->hi[kw - j->kf];                     \
                    if (lo >= hi) continue;                                                     \
                    if (j->kind == POOL_MAX) {                                                  \
                        if (sL == 1) {                                                          \
                            VMAX(y + lo, xr + lo + off, hi - lo);                               \
                        } else {                                                                \
                            for (int64_t ow = lo; ow < hi; ow++) {                              \
                                T v = xr[ow * sL + off], cur = y[ow];                           \
                                y[ow] = v > cur ? v : cur;                                      \
                            }                                                                   \
                        }                                                                       \
                    } else if (j->kind == POOL_AVG) {                                           \
                        if (sL == 1)                                                            \
                            VADD(y + lo, xr + lo + off, hi - lo);                               \
                        else                                                                    \
                            for (int64_t ow = lo; ow < hi; ow++) y[ow] += xr[ow * sL + off];    \
                    } else {                                                                    \
                        for (int64_t ow = lo; ow < hi; ow++) {                                  \
                            double v = fabs((double)xr[ow * sL + off]);                         \
                            y[ow] += (T)(j->p == 2.0 ? v * v : j->p == 1.0 ? v : pow(v, j->p)); \
                        }                                                                       \
                    }                                                                           \
                }                                                                               \
                if (!next_tap_row(j, a, b, kk)) break;                                          \
            }                                                                                   \
            /* Max: only windows of padding alone need their 0 */                              \
            if (j->kind == POOL_MAX && ocount > 0 && !j->empty_cols) continue;                 \
            for (int64_t ow = 0; ow < outL; ow++) {                                             \
                int64_t cl = j->k1[L][ow] - j->k0[L][ow];                                       \
                if (j->kind == POOL_MAX) {                                                      \
                    if (ocount * cl == 0) y[ow] = (T)0;                                         \
                } else if (j->kind == POOL_AVG) {                                               \
                    int64_t cnt = j->include_pad ? pcount * j->pc[L][ow] : ocount * cl;         \
                    y[ow] = cnt ? (T)((double)y[ow] / (double)cnt) : (T)0;                      \
                } else {                                                                        \
                    y[ow] = (T)pow((double)y[ow], 1.0 / j->p);                                  \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    }

static void vmax_f64(double *y, const double *x, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (x[i] > y[i]) y[i] = x[i];
}
static void vadd_f64(double *y, const double *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] += x[i];
}
#define DEF_INT_VMAX(T, SUF)                                                                    \
    static void vmax_##SUF(T *y, const T *x, int64_t n) {                                       \
        for (int64_t i = 0; i < n; i++)                                                         \
            if (x[i] > y[i]) y[i] = x[i];                                                       \
    }                                                                                           \
    static void vadd_##SUF(T *y, const T *x, int64_t n) {                                       \
        for (int64_t i = 0; i < n; i++) y[i] = (T)(y[i] + x[i]);                                \
    }
DEF_INT_VMAX(int8_t, i8)
DEF_INT_VMAX(uint8_t, u8)

DEF_ROWS(float, f32, -INFINITY, ox_vec_max, ox_vec_add)
DEF_ROWS(double, f64, -INFINITY, vmax_f64, vadd_f64)
DEF_ROWS(int8_t, i8, INT8_MIN, vmax_i8, vadd_i8)
DEF_ROWS(uint8_t, u8, 0, vmax_u8, vadd_u8)

/* float32 MaxPool with unit dilation and stride 1 or 2 on the last axis
 * (the 2x2 and 3x3 pools of image models): per output row, the maximum
 * over the window's rows of each input column goes into a row padded with
 * -inf, then each output takes the maximum of its kL padded columns, four
 * or (AVX2) eight outputs at a time. The maximum is taken as the general path takes it (a
 * value replaces the current one only when greater: NaN never wins); of
 * equal values (+0 and -0) the first in column order wins instead of the
 * first in row-major order. */
#define MAX_FAST_ROW 4096 /* floats of the padded row, on the stack */

static int64_t max_fast_row_len(const pool_geom *g) {
    const int L = g->r - 1;
    /* outputs rounded up to eight, each reading kL columns from s * ow */
    return (g->out[L] + 8) * g->s[L] + g->k[L] + 8;
}

static int max_fast_fits(const pool_geom *g, int kind, ox_dtype dt) {
    const int L = g->r - 1;
    /* the kernel and the outputs bounded first, so the row's length cannot
     * overflow; then the row and its leading -inf run (pb) fit the stack */
    return dt == ONYX_FLOAT32 && kind == POOL_MAX && g->d[L] == 1 && (g->s[L] == 1 || g->s[L] == 2) &&
           g->k[L] <= 16 && g->out[L] <= MAX_FAST_ROW && max_fast_row_len(g) <= MAX_FAST_ROW &&
           g->pb[L] >= 0 && g->pb[L] <= max_fast_row_len(g);
}

#define MAX_FAST_TAPS 8

/* The fast rows written once for a vector of W floats (4: SSE or
 * portable; 8: AVX2), every function inlined into its variant. The
 * maximum is exact, so both give the same bits. */
#define DEF_MAX_FAST(W, SUF, TARGET, VMAX)                                                       \
    typedef float mf_v_##SUF __attribute__((vector_size(4 * W)));                                \
    typedef int32_t mf_i_##SUF __attribute__((vector_size(4 * W)));                             \
    /* v where v > cur, else cur (NaN never replaces; of equal values cur                        \
     * stays): one MAXPS on x86, whose definition this is */                                   \
    TARGET __attribute__((always_inline)) static inline mf_v_##SUF gk_##SUF(mf_v_##SUF cur,      \
                                                                            mf_v_##SUF v) {     \
        VMAX                                                                                     \
    }                                                                                            \
    /* taps c of W outputs from ow: row[s * (ow + i) + c] */                                     \
    TARGET __attribute__((always_inline)) static inline mf_v_##SUF taps_##SUF(                   \
        const float *row, int64_t s, int64_t ow, int64_t c) {                                    \
        mf_v_##SUF a, b;                                                                         \
        memcpy(&a, row + s * ow + c, sizeof a);                                                  \
        if (s == 1) return a;                                                                    \
        memcpy(&b, row + s * ow + c + W, sizeof b);                                              \
        return EVEN_##W(a, b);                                                                   \
    }                                                                                            \
    /* m[i] = the maximum of rows[0..n)[i] (and of m[i] itself unless                            \
     * first), in row order; the current value starts at -inf, so a NaN                          \
     * never enters */                                                                           \
    TARGET __attribute__((always_inline)) static inline void max_rows_##SUF(                     \
        float *restrict m, const float *const *rows, int n, int64_t cols, int first) {          \
        int64_t i = 0;                                                                           \
        for (; i + W <= cols; i += W) {                                                          \
            mf_v_##SUF cur = (mf_v_##SUF){0} - INFINITY;                                         \
            if (!first) memcpy(&cur, m + i, sizeof cur);                                         \
            for (int r = 0; r < n; r++) {                                                        \
                mf_v_##SUF v;                                                                    \
                memcpy(&v, rows[r] + i, sizeof v);                                               \
                cur = gk_##SUF(cur, v);                                                          \
            }                                                                                    \
            memcpy(m + i, &cur, sizeof cur);                                                     \
        }                                                                                        \
        for (; i < cols; i++) {                                                                  \
            float cur = first ? -INFINITY : m[i];                                                \
            for (int r = 0; r < n; r++) cur = rows[r][i] > cur ? rows[r][i] : cur;               \
            m[i] = cur;                                                                          \
        }                                                                                        \
    }                                                                                            \
    TARGET static void rows_max_fast_##SUF(void *arg, int64_t t0, int64_t t1) {                  \
        const rows_job *j = arg;                                                                 \
        const pool_geom *g = j->g;                                                               \
        const int L = g->r - 1;                                                                  \
        const int64_t outL = g->out[L], sL = g->s[L], kL = g->k[L], pb = g->pb[L];               \
        const int64_t len = max_fast_row_len(g);                                                 \
        /* the input columns some output reads: padded position pb + c < len */                  \
        const int64_t cols = g->in[L] < len - pb ? g->in[L] : len - pb;                          \
        float row[MAX_FAST_ROW];                                                                 \
        for (int64_t t = t0; t < t1; t++) {                                                      \
            if (ox_stop_requested(j->stop)) return;                                              \
            float *y = (float *)j->y + t * outL;                                                 \
            const float *rows[MAX_FAST_TAPS];                                                    \
            if (g->r == 2) {                                                                     \
                /* a plane's output row: its window rows [a, b) at a stride */                   \
                const int64_t oh = t % g->out[0], a = j->k0[0][oh], b = j->k1[0][oh];            \
                const float *xp = (const float *)j->x + (t / g->out[0]) * g->in_sz;              \
                if (a == b) {                                                                    \
                    memset(y, 0, sizeof(float) * (size_t)outL);                                 \
                    continue;                                                                    \
                }                                                                                \
                for (int64_t i = 0; i < pb; i++) row[i] = -INFINITY;                             \
                for (int64_t i = pb + cols; i < len; i++) row[i] = -INFINITY;                    \
                for (int64_t r0 = a; r0 < b; r0 += MAX_FAST_TAPS) {                              \
                    const int n = (int)(b - r0 < MAX_FAST_TAPS ? b - r0 : MAX_FAST_TAPS);        \
                    for (int r = 0; r < n; r++)                                                  \
                        rows[r] = xp + (j->st[0][oh] + (r0 + r) * g->d[0]) * g->in_str[0];       \
                    max_rows_##SUF(row + pb, rows, n, cols, r0 == a);                            \
                }                                                                                \
            } else {                                                                             \
                int64_t plane, pcount, o[OX_MAX_RANK], a[OX_MAX_RANK], b[OX_MAX_RANK], kk[OX_MAX_RANK]; \
                const int64_t ocount = row_window(j, t, &plane, o, a, b, kk, &pcount);           \
                if (ocount == 0) {                                                               \
                    memset(y, 0, sizeof(float) * (size_t)outL);                                  \
                    continue;                                                                    \
                }                                                                                \
                const float *xp = (const float *)j->x + plane * g->in_sz;                        \
                for (int64_t i = 0; i < pb; i++) row[i] = -INFINITY;                             \
                for (int64_t i = pb + cols; i < len; i++) row[i] = -INFINITY;                    \
                /* the window's rows, up to MAX_FAST_TAPS at a time, in one pass */              \
                int n = 0, first = 1, more;                                                      \
                do {                                                                             \
                    rows[n++] = xp + tap_row(j, o, kk);                                          \
                    more = next_tap_row(j, a, b, kk);                                            \
                    if (n == MAX_FAST_TAPS || !more) {                                           \
                        max_rows_##SUF(row + pb, rows, n, cols, first);                          \
                        n = 0;                                                                   \
                        first = 0;                                                               \
                    }                                                                            \
                } while (more);                                                                  \
            }                                                                                    \
            int64_t ow = 0;                                                                      \
            for (; ow + W <= outL; ow += W) {                                                    \
                mf_v_##SUF cur = (mf_v_##SUF){0} - INFINITY;                                     \
                for (int64_t c = 0; c < kL; c++) cur = gk_##SUF(cur, taps_##SUF(row, sL, ow, c)); \
                memcpy(y + ow, &cur, sizeof cur);                                                \
            }                                                                                    \
            for (; ow < outL; ow++) {                                                            \
                float cur = -INFINITY;                                                           \
                for (int64_t c = 0; c < kL; c++) {                                               \
                    float v = row[sL * ow + c];                                                  \
                    cur = v > cur ? v : cur;                                                     \
                }                                                                                \
                y[ow] = cur;                                                                     \
            }                                                                                    \
            /* a window of padding alone gives 0, as in the general path */                      \
            if (j->empty_cols)                                                                   \
                for (ow = 0; ow < outL; ow++)                                                    \
                    if (j->k1[L][ow] == j->k0[L][ow]) y[ow] = 0.0f;                              \
        }                                                                                        \
    }

/* the even lanes of a and then of b */
#define EVEN_4(a, b) __builtin_shufflevector(a, b, 0, 2, 4, 6)
#define EVEN_8(a, b) __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14)
#define EVEN_16(a, b) __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30)

#if defined(__x86_64__) && defined(__SSE__)
DEF_MAX_FAST(4, sse, , return (mf_v_sse)_mm_max_ps((__m128)v, (__m128)cur);)
DEF_MAX_FAST(8, avx2, __attribute__((target("avx2"))),
             return (mf_v_avx2)_mm256_max_ps((__m256)v, (__m256)cur);)
DEF_MAX_FAST(16, avx512, __attribute__((target("avx512f"))),
             return (mf_v_avx512)_mm512_max_ps((__m512)v, (__m512)cur);)
#else
DEF_MAX_FAST(4, sse, , mf_i_sse gt = v > cur; return (mf_v_sse)(((mf_i_sse)v & gt) | ((mf_i_sse)cur & ~gt));)
#endif

static int run_rows(ox_kernel_ctx *ctx, pool_job *pj, ox_dtype dt) {
    const pool_geom *g = pj->g;
    rows_job j = {.g = g, .kind = pj->kind, .x = pj->x, .y = pj->y, .include_pad = pj->include_pad, .p = pj->p,
                  .stop = pj->stop};
    const char *why;
    int64_t *tabs = build_tables(g, &j, &why);
    if (!tabs && why[0] == 'm') return ox_cpu_oom(ctx);
    if (!tabs)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: pooling window tables overflow int64 (kernel %lld on the last axis)",
                              ctx->node->op_type, (long long)g->k[g->r - 1]);
    j.rows_per_plane = g->out_sz / g->out[g->r - 1];
    /* work per row only sets the grain; it saturates instead of overflowing */
    int64_t rows = g->planes * j.rows_per_plane, work = j.kl - j.kf;
    for (int i = 0; i < g->r; i++)
        if (!ox_mul_i64(work, i == g->r - 1 ? g->out[i] : g->k[i], &work)) work = INT64_MAX;
    ox_range_fn fast = rows_max_fast_sse;
#if defined(__x86_64__) && defined(__SSE__)
    /* sixteen lanes for stride 1 only: stride 2's even lanes of two
     * 512-bit vectors cost more on AMD Zen 4 than two 256-bit halves
     * (ResNet-50's 3x3/2 over 64x112x112: 0.159 ms at eight lanes, 0.176
     * at sixteen; D-FINE's 2x2/1 over 16x129x129: 0.099 and 0.076) */
    if (ox_cpu_isa_active() >= OX_ISA_AVX512 && g->s[g->r - 1] == 1) fast = rows_max_fast_avx512;
    else if (ox_cpu_isa_active() >= OX_ISA_AVX2) fast = rows_max_fast_avx2;
#endif
    ox_range_fn fn = max_fast_fits(g, pj->kind, dt) ? fast
                     : dt == ONYX_FLOAT32  ? rows_range_f32
                     : dt == ONYX_FLOAT64 ? rows_range_f64
                     : dt == ONYX_INT8    ? rows_range_i8
                                          : rows_range_u8;
    ox_parallel_for(ctx->pool, rows, work >= 8192 ? 1 : 8192 / (work ? work : 1), fn, &j);
    free(tabs);
    return 0;
}

/* float32 copies of a float16 or bfloat16 X and room for ny float32
 * results; fails with nothing left allocated when out of memory. */
static int half_buffers(ox_kernel_ctx *ctx, const ox_tensor *X, int64_t ny, float **x, float **y) {
    *x = ox_cpu_to_f32(X);
    *y = malloc(sizeof(float) * (size_t)ny);
    if (*x && *y) return 0;
    free(*x);
    free(*y);
    return ox_cpu_oom(ctx);
}

static int window_pool(ox_kernel_ctx *ctx, int kind) {
    const ox_tensor *X = ox_cpu_input(ctx, 0);
    ox_tensor *Y = ctx->outputs[0];
    ox_tensor *I = ctx->n_outputs > 1 ? ctx->outputs[1] : NULL;
    pool_geom g;
    if (pool_geom_make(ctx, X, Y, &g)) return -1;
    pool_job j = {.g = &g, .kind = kind, .x = X->data, .y = Y->data, .stop = ctx->stop};
    if (kind == POOL_MAX) {
        j.ind = I ? I->data : NULL;
        j.col_major = ir_attr_int(ctx->node, "storage_order", 0) == 1;
    } else if (kind == POOL_AVG) {
        j.include_pad = ir_attr_int(ctx->node, "count_include_pad", 0) != 0;
    } else {
        j.p = ir_attr_float(ctx->node, "p", 2.0f);
        if (!(j.p > 0))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "LpPool: p must be positive");
    }
    if (g.planes * g.out_sz == 0) return 0;
    switch (X->dtype) {
    case ONYX_FLOAT32:
    case ONYX_FLOAT64:
    case ONYX_INT8:
    case ONYX_UINT8:
        if ((X->dtype == ONYX_INT8 || X->dtype == ONYX_UINT8) && kind != POOL_MAX) break;
        if (j.ind) {
            run_pool_range(ctx, &j, X->dtype);
            return 0;
        }
        return run_rows(ctx, &j, X->dtype);
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16: {
        float *x, *y;
        if (half_buffers(ctx, X, ox_tensor_numel(Y), &x, &y) != 0) return -1;
        j.x = x;
        j.y = y;
        int rc = 0;
        if (j.ind)
            run_pool_range(ctx, &j, ONYX_FLOAT32);
        else
            rc = run_rows(ctx, &j, ONYX_FLOAT32);
        if (!rc) ox_cpu_from_f32(Y, y);
        free(x);
        free(y);
        return rc;
    }
    default:
        break;
    }
    return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "%s: element type %s is not supported",
                          ctx->node->op_type, ox_dtype_name(X->dtype));
}

static int maxpool_compute(ox_kernel_ctx *ctx) { return window_pool(ctx, POOL_MAX); }
static int avgpool_compute(ox_kernel_ctx *ctx) { return window_pool(ctx, POOL_AVG); }
static int lppool_compute(ox_kernel_ctx *ctx) { return window_pool(ctx, POOL_LP); }

/* ================================================================ */
/* global pools: one reduction per (n, c) plane */

typedef struct global_job {
    int kind;
    const void *x;
    void *y;
    int64_t len;
    double p;
} global_job;

/* doubles keep one exact-order sum */
static double sum_wide_f64(const double *x, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += x[i];
    return s;
}

#define DEF_GLOBAL(T, SUF, SUM, ATTR)                                                           \
    ATTR static void global_range_##SUF(void *arg, int64_t p0, int64_t p1) {                    \
        const global_job *j = arg;                                                              \
        for (int64_t p = p0; p < p1; p++) {                                                     \
            const T *x = (const T *)j->x + p * j->len;                                          \
            T *y = (T *)j->y + p;                                                               \
            if (j->kind == POOL_MAX) {                                                          \
                T best = j->len ? x[0] : (T)0;                                                  \
                for (int64_t i = 1; i < j->len; i++)                                            \
                    if (x[i] > best) best = x[i];                                               \
                *y = best;                                                                      \
            } else if (j->kind == POOL_AVG) {                                                   \
                double s = SUM(x, j->len);                                                      \
                *y = j->len ? (T)(s / (double)j->len) : (T)0;                                   \
            } else {                                                                            \
                double s = 0;                                                                   \
                for (int64_t i = 0; i < j->len; i++) s += pow(fabs((double)x[i]), j->p);        \
                *y = (T)pow(s, 1.0 / j->p);                                                     \
            }                                                                                   \
        }                                                                                       \
    }

DEF_GLOBAL(float, f32, ox_sum_f32_wide, )
DEF_GLOBAL(double, f64, sum_wide_f64, )
#if defined(__x86_64__) && defined(__GNUC__)
/* the same sums at AVX2's width: four floats widened to doubles per
 * instruction (the SSE2 build takes two); SE blocks pool hundreds of
 * small planes per network */
DEF_GLOBAL(float, f32_avx2, ox_sum_f32_wide, __attribute__((target("avx2"))))
#endif

static ox_range_fn global_range_f32_best(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (ox_cpu_isa_active() >= OX_ISA_AVX2) return global_range_f32_avx2;
#endif
    return global_range_f32;
}

static int global_pool(ox_kernel_ctx *ctx, int kind) {
    const ox_tensor *X = ox_cpu_input(ctx, 0);
    ox_tensor *Y = ctx->outputs[0];
    if (X->rank < 2)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: input must have rank >= 2",
                              ctx->node->op_type);
    int64_t planes = X->dims[0] * X->dims[1];
    if (ox_tensor_numel(Y) != planes)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "%s: output shape does not match input",
                              ctx->node->op_type);
    global_job j = {kind, X->data, Y->data, ox_numel(X->dims + 2, X->rank - 2), 0};
    if (kind == POOL_LP) {
        j.p = ir_attr_float(ctx->node, "p", 2.0f);
        if (!(j.p > 0))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "GlobalLpPool: p must be positive");
    }
    if (planes == 0) return 0;
    int64_t grain = j.len >= 8192 ? 1 : 8192 / (j.len ? j.len : 1);
    switch (X->dtype) {
    case ONYX_FLOAT32:
        ox_parallel_for(ctx->pool, planes, grain, global_range_f32_best(), &j);
        return 0;
    case ONYX_FLOAT64:
        ox_parallel_for(ctx->pool, planes, grain, global_range_f64, &j);
        return 0;
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16: {
        float *x, *y;
        if (half_buffers(ctx, X, planes, &x, &y) != 0) return -1;
        j.x = x;
        j.y = y;
        ox_parallel_for(ctx->pool, planes, grain, global_range_f32, &j);
        ox_cpu_from_f32(Y, y);
        free(x);
        free(y);
        return 0;
    }
    default:
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "%s: element type %s is not supported",
                              ctx->node->op_type, ox_dtype_name(X->dtype));
    }
}

static int global_avg_compute(ox_kernel_ctx *ctx) { return global_pool(ctx, POOL_AVG); }
static int global_max_compute(ox_kernel_ctx *ctx) { return global_pool(ctx, POOL_MAX); }
static int global_lp_compute(ox_kernel_ctx *ctx) { return global_pool(ctx, POOL_LP); }

/* ================================================================ */
/* MaxUnpool: scatter X into a zeroed output at the flat indices I.
 * Indices address the unpooled shape implied by the attributes; when
 * output_shape asks for a larger tensor, that shape sits at its origin
 * and the rest is padding (as the ONNX test data expects). */

static int maxunpool_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = ox_cpu_input(ctx, 0), *I = ox_cpu_input(ctx, 1);
    ox_tensor *Y = ctx->outputs[0];
    if (I->dtype != ONYX_INT64 || !ox_shape_equal(X->dims, X->rank, I->dims, I->rank))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "MaxUnpool: I must be int64 with X's shape");
    if (Y->dtype != X->dtype || Y->rank != X->rank || X->rank < 3)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "MaxUnpool: output does not match X");
    int r = X->rank - 2;
    size_t nk = 0, ns = 0, np = 0;
    const int64_t *k = ir_attr_ints(ctx->node, "kernel_shape", &nk);
    const int64_t *st = ir_attr_ints(ctx->node, "strides", &ns), *pd = ir_attr_ints(ctx->node, "pads", &np);
    if (!k || (int)nk != r || (st && (int)ns != r) || (pd && (int)np != 2 * r))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "MaxUnpool: attributes do not match input rank");
    int64_t def[OX_MAX_RANK];
    def[0] = X->dims[0];
    def[1] = X->dims[1];
    int same = Y->dims[0] == def[0] && Y->dims[1] == def[1];
    if (!same)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "MaxUnpool: output_shape must keep N and C");
    for (int i = 0; i < r; i++) {
        def[i + 2] = (X->dims[i + 2] - 1) * (st ? st[i] : 1) + k[i] - (pd ? pd[i] + pd[i + r] : 0);
        if (def[i + 2] < 0) def[i + 2] = 0;
        if (def[i + 2] > Y->dims[i + 2])
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "MaxUnpool: output_shape is smaller than the unpooled size on axis %d", i + 2);
    }
    int64_t ndef = ox_numel(def, X->rank);
    size_t es = ox_dtype_size(X->dtype);
    int64_t n = ox_tensor_numel(X);
    memset(Y->data, 0, Y->nbytes);
    const int64_t *ind = I->data;
    for (int64_t i = 0; i < n; i++) {
        int64_t idx = ind[i];
        if (idx < 0 || idx >= ndef)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "MaxUnpool: index %lld is outside the unpooled tensor of %lld elements",
                                  (long long)idx, (long long)ndef);
        int64_t off = 0, mul = 1;
        for (int d = X->rank - 1; d >= 0; d--) {
            off += (idx % def[d]) * mul;
            idx /= def[d];
            mul *= Y->dims[d];
        }
        memcpy((char *)Y->data + (size_t)off * es, (const char *)X->data + (size_t)i * es, es);
    }
    return 0;
}

/* ================================================================ */

static int supports_maxpool(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    if (n_inputs >= 1 && inputs[0] && (inputs[0]->dtype == ONYX_INT8 || inputs[0]->dtype == ONYX_UINT8))
        return 1;
    return ox_cpu_supports_float(node, inputs, n_inputs);
}

static const ox_kernel_def KERNELS[] = {
    {"", "MaxPool", 1, 22, maxpool_compute, supports_maxpool, NULL, NULL, NULL},
    {"", "AveragePool", 1, 22, avgpool_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "LpPool", 1, 22, lppool_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "GlobalAveragePool", 1, 22, global_avg_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "GlobalMaxPool", 1, 22, global_max_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "GlobalLpPool", 1, 22, global_lp_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "MaxUnpool", 9, 22, maxunpool_compute, ox_cpu_supports_float, NULL, NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_pool = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
