/* Direct depthwise convolution (one input channel per group), 1-D or 2-D,
 * any stride, dilation and padding (see conv_fast.h).
 *
 * Each input row is first copied into `stride` phase rows (stored one
 * after another) with the horizontal padding written as zeros: phase f
 * holds padded columns f, f + s, f + 2s, ... So output column ow and
 * kernel column kw read padded column ow * s + kw * dw, which is element
 * ow + (kw * dw) / s of phase (kw * dw) % s: consecutive output columns
 * read consecutive floats for every stride, and no tap needs a bounds
 * test. Rows in the vertical padding read a zero row. The rows are padded on the right by a
 * few vectors, so whole vectors are computed past the row end and only
 * the stores are cut to length. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "ep/cpu/kernels/conv_fast.h"

/* Taps of one kernel plane handled by the vector kernel. */
#define DW_MAX_TAPS 64
#define DW_ACC 4 /* vectors one step computes (independent sums) */
#define DW_UNROLL DW_ACC /* vectors one step computes along a row, at most */

typedef struct dw_job {
    const ox_dw_args *a;
    const ox_stop *stop;
    ox_threadpool *pool; /* lends each task its phase planes */
    int64_t pwd;                        /* floats per phase row */
    int64_t koff[DW_MAX_TAPS];          /* per kernel column: phase * pwd + index */
    void (*rows)(const struct dw_job *j, const float *planes, const float *zero, const float *w, float *y,
                 int64_t oh0, int64_t oh1);
    atomic_int failed;
} dw_job;

/* The output rows [oh0, oh1) of one plane, VT being a vector of VW
 * floats. Each step computes DW_ACC vectors at once, so that many
 * independent multiply-add chains hide the latency: all along a wide
 * row, or split over 2, 4 or 8 narrower rows. A kernel row in the
 * vertical padding (or a row past the plane's end) reads the zero row
 * `zero` instead, so every step is branch-free. The body is inlined with
 * the common kernel sizes as constants (3x3, 5x5), so their tap loops
 * unroll; KHC and KWC 0 mean "as the arguments say". */
#define DEF_DW_ROWS(SUF, VT, VW, TARGET)                                                          \
    typedef float VT __attribute__((vector_size(VW * 4)));                                        \
    TARGET __attribute__((always_inline)) static inline void dw_body_##SUF(                       \
        const dw_job *j, const float *planes, const float *zero, const float *w, float *y,        \
        int64_t oh0, int64_t oh1, const int64_t KHC, const int64_t KWC) {                         \
        const ox_dw_args *a = j->a;                                                               \
        const int64_t KH = KHC ? KHC : a->KH, KW = KWC ? KWC : a->KW, OW = a->OW, pwd = j->pwd;   \
        const int U = OW <= VW ? 1 : OW <= 2 * VW ? 2 : OW <= 4 * VW ? 4 : DW_ACC, RT = DW_ACC / U; \
        VT wv[DW_MAX_TAPS];                                                                       \
        for (int64_t t = 0; t < KH * KW; t++) wv[t] = (VT){0} + w[t];                             \
        /* vector u's row and column within a step (no division in the loop) */                    \
        int64_t ru[DW_ACC], cu[DW_ACC];                                                           \
        _Pragma("GCC unroll 8") for (int u = 0; u < DW_ACC; u++) {                                                        \
            ru[u] = u / U;                                                                        \
            cu[u] = (int64_t)(u % U) * VW;                                                        \
        }                                                                                         \
        for (int64_t oh = oh0; oh < oh1; oh += RT) {                                              \
            for (int64_t ow = 0; ow < OW; ow += (int64_t)U * VW) {                                \
                VT acc[DW_ACC];                                                                        \
                _Pragma("GCC unroll 8") for (int u = 0; u < DW_ACC; u++) acc[u] = (VT){0};                                     \
                for (int64_t kh = 0; kh < KH; kh++) {                                             \
                    const float *src[DW_ACC];                                                          \
                    _Pragma("GCC unroll 8") for (int u = 0; u < DW_ACC; u++) {                                                 \
                        int64_t r = oh + ru[u], ih = r * a->sh - a->ph + kh * a->dh;              \
                        int64_t col = ow + cu[u];                                                 \
                        src[u] = (r < oh1 && ih >= 0 && ih < a->IH ? planes + ih * a->sw * pwd : zero) + col; \
                    }                                                                             \
                    const VT *wr = wv + kh * KW;                                                  \
                    for (int64_t kw = 0; kw < KW; kw++) {                                         \
                        const int64_t off = j->koff[kw];                                          \
                        _Pragma("GCC unroll 8") for (int u = 0; u < DW_ACC; u++) {                                             \
                            VT v;                                                                 \
                            memcpy(&v, src[u] + off, sizeof v);                                   \
                            acc[u] += wr[kw] * v;                                                 \
                        }                                                                         \
                    }                                                                             \
                }                                                                                 \
                _Pragma("GCC unroll 8") for (int u = 0; u < DW_ACC; u++) {                                                     \
                    int64_t r = oh + ru[u], o = ow + cu[u];                                       \
                    if (r >= oh1 || o >= OW) continue;                                            \
                    float *yr = y + r * OW + o;                                                   \
                    if (o + VW <= OW)                                                             \
                        memcpy(yr, &acc[u], sizeof acc[u]);                                       \
                    else                                                                          \
                        memcpy(yr, &acc[u], sizeof(float) * (size_t)(OW - o));                    \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    }                                                                                             \
    TARGET static void dw_rows_##SUF(const dw_job *j, const float *planes, const float *zero,     \
                                     const float *w, float *y, int64_t oh0, int64_t oh1) {        \
        if (j->a->KH == 3 && j->a->KW == 3)                                                     \
            dw_body_##SUF(j, planes, zero, w, y, oh0, oh1, 3, 3);                                 \
        else if (j->a->KH == 5 && j->a->KW == 5)                                                \
            dw_body_##SUF(j, planes, zero, w, y, oh0, oh1, 5, 5);                                 \
        else                                                                                      \
            dw_body_##SUF(j, planes, zero, w, y, oh0, oh1, 0, 0);                                 \
    }

DEF_DW_ROWS(portable, dw_v4f, 4, )
#if defined(__x86_64__) && defined(__GNUC__)
DEF_DW_ROWS(avx2, dw_v8f, 8, __attribute__((target("avx2,fma"))))
DEF_DW_ROWS(avx512, dw_v16f, 16, __attribute__((target("avx512f"))))
#endif

/* Phase planes of input plane x (IH x IW) into planes. */
static void fill_phases(const ox_dw_args *a, int64_t pwd, const float *x, float *planes) {
    const int64_t s = a->sw, IW = a->IW;
    for (int64_t f = 0; f < s; f++) {
        for (int64_t ih = 0; ih < a->IH; ih++) {
            const float *xr = x + ih * IW;
            float *d = planes + (ih * s + f) * pwd;
            if (s == 1) {
                /* column jj of the row holds input column jj - pw */
                int64_t lo = a->pw < pwd ? a->pw : pwd;
                int64_t hi = a->pw + IW < pwd ? a->pw + IW : pwd;
                if (hi < lo) hi = lo;
                memset(d, 0, sizeof(float) * (size_t)lo);
                memcpy(d + lo, xr, sizeof(float) * (size_t)(hi - lo));
                memset(d + hi, 0, sizeof(float) * (size_t)(pwd - hi));
                continue;
            }
            /* jj in [lo, hi) reads input column jj * s + f - pw */
            int64_t lo = a->pw - f <= 0 ? 0 : (a->pw - f + s - 1) / s;
            int64_t hi = IW - 1 + a->pw - f < 0 ? 0 : (IW - 1 + a->pw - f) / s + 1;
            if (lo > pwd) lo = pwd;
            if (hi > pwd) hi = pwd;
            if (hi < lo) hi = lo;
            memset(d, 0, sizeof(float) * (size_t)lo);
            const float *xs = xr + lo * s + f - a->pw;
            if (s == 2)
                for (int64_t jj = 0; jj < hi - lo; jj++) d[lo + jj] = xs[2 * jj];
            else
                for (int64_t jj = 0; jj < hi - lo; jj++) d[lo + jj] = xs[jj * s];
            memset(d + hi, 0, sizeof(float) * (size_t)(pwd - hi));
        }
    }
}

static void dw_tasks(void *arg, int64_t t0, int64_t t1) {
    dw_job *j = arg;
    const ox_dw_args *a = j->a;
    /* the phase planes, then one zero row with room for the phase
     * offsets a kernel column adds */
    size_t n = (size_t)(a->sw * a->IH * j->pwd), nz = (size_t)(a->sw * j->pwd);
    float *planes = ox_threadpool_block(j->pool, sizeof(float) * (n + nz));
    if (!planes) {
        atomic_store(&j->failed, 1);
        return;
    }
    float *zero = planes + n;
    memset(zero, 0, sizeof(float) * nz);
    const int64_t M = a->C * a->mult, plane_out = a->OH * a->OW;
    int64_t filled = -1;
    for (int64_t t = t0; t < t1; t++) {
        if (ox_stop_requested(j->stop)) break;
        int64_t nimg = t / M, m = t % M, c = m / a->mult;
        int64_t src = nimg * a->C + c;
        if (src != filled) {
            fill_phases(a, j->pwd, a->x + src * a->IH * a->IW, planes);
            filled = src;
        }
        float *y = a->y + t * plane_out;
        j->rows(j, planes, zero, a->w + m * a->KH * a->KW, y, 0, a->OH);
        const float *bias = a->bias ? a->bias + m : NULL;
        if (bias || a->z || a->act.kind != OX_ACT_NONE) {
            /* one bias for the whole plane: the plane is handled as one row */
            ox_conv_epilogue(y, plane_out, 1, plane_out, bias, a->z ? a->z + t * plane_out : NULL,
                             plane_out, &a->act, a->isa);
        }
    }
    ox_threadpool_block_done(j->pool, planes);
}

int ox_conv_depthwise_f32(ox_threadpool *pool, const ox_stop *stop, const ox_dw_args *a) {
    if (a->KH * a->KW > DW_MAX_TAPS || a->KW > DW_MAX_TAPS) return 0;
    /* multiplier 1 on AVX2: eight channels at a time */
    int rc = ox_conv_depthwise_blocked_f32(pool, stop, a);
    if (rc != 0) return rc;
    dw_job j = {.a = a, .stop = stop, .pool = pool, .rows = dw_rows_portable};
#if defined(__x86_64__) && defined(__GNUC__)
    if (a->isa == OX_ISA_AVX512)
        j.rows = dw_rows_avx512;
    else if (a->isa == OX_ISA_AVX2)
        j.rows = dw_rows_avx2;
#endif
    /* the widest padded column any output reads, per phase, plus room for
     * the whole vectors one step computes past the row end (U vectors of
     * VW floats, as the rows function picks them: narrow planes need
     * little, so their phase rows stay short); every term is an
     * attribute, so each step is checked and a shape past it is left to
     * the general path */
    const int64_t vw = a->isa == OX_ISA_AVX512 ? 16 : a->isa == OX_ISA_AVX2 ? 8 : 4;
    const int64_t u = a->OW <= vw ? 1 : a->OW <= 2 * vw ? 2 : DW_UNROLL;
    int64_t span, last, pwd, per, planes;
    if (!ox_mul_i64(a->OW - 1, a->sw, &span) || !ox_muladd_i64(a->KW - 1, a->dw, span, &last) ||
        !ox_add_i64(last / a->sw + 1, u * vw, &pwd) || !ox_mul_i64(pwd, a->IH, &per) ||
        !ox_mul_i64(per, a->sw, &per) || per > (int64_t)1 << 28)
        return 0;
    j.pwd = pwd;
    for (int64_t kw = 0; kw < a->KW; kw++) {
        int64_t c = kw * a->dw;
        j.koff[kw] = (c % a->sw) * pwd + c / a->sw;
    }
    atomic_init(&j.failed, 0);
    if (!ox_mul_i64(a->N, a->C * a->mult, &planes)) return 0;
    int64_t work = a->OH * a->OW * a->KH * a->KW;
    ox_parallel_for(pool, planes, work >= 16384 ? 1 : 16384 / (work > 0 ? work : 1), dw_tasks, &j);
    return atomic_load(&j.failed) ? -1 : 1;
}
