/* CPU kernels of the signal operators. Transforms run in double: an
 * iterative radix-2 FFT for power-of-two lengths, a direct sum with a
 * twiddle table for short other lengths, and Bluestein's chirp-z
 * re-expression as a power-of-two convolution for long ones. */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"
#include "ops/op.h"

extern const ox_kernel_table ox_cpu_kernels_signal;

#define TWO_PI 6.283185307179586476925286766559

/* Below this length a non-power-of-two transform is summed directly. */
#define DIRECT_MAX 64

/* ---- FFT plans ---- */

typedef enum plan_kind { PLAN_POW2, PLAN_DIRECT, PLAN_BLUESTEIN } plan_kind;

typedef struct fft_plan {
    int64_t n;
    int sign; /* -1 forward, +1 inverse (unscaled) */
    plan_kind kind;
    /* PLAN_POW2: cos/sin of sign*2*pi*k/n for k < n/2.
     * PLAN_DIRECT: the same for k < n. */
    double *tc, *ts;
    /* PLAN_BLUESTEIN: an inner power-of-two plan of length m, the chirp
     * exp(sign*i*pi*k^2/n) for k < n, and the FFT of the conjugate-chirp
     * filter. */
    struct fft_plan *inner;
    int64_t m;
    double *cr, *ci;
    double *fr, *fi;
} fft_plan;

static int is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

static void plan_free(fft_plan *p) {
    if (!p) return;
    free(p->tc);
    free(p->ts);
    free(p->cr);
    free(p->ci);
    free(p->fr);
    free(p->fi);
    plan_free(p->inner);
    free(p);
}

static void fft_pow2(const fft_plan *p, double *re, double *im) {
    const int64_t n = p->n;
    /* bit-reversal permutation */
    for (int64_t i = 1, j = 0; i < n; i++) {
        int64_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j |= bit;
        if (i < j) {
            double t = re[i];
            re[i] = re[j];
            re[j] = t;
            t = im[i];
            im[i] = im[j];
            im[j] = t;
        }
    }
    for (int64_t len = 2; len <= n; len <<= 1) {
        int64_t half = len >> 1, stride = n / len;
        for (int64_t s = 0; s < n; s += len) {
            for (int64_t k = 0; k < half; k++) {
                double wr = p->tc[k * stride], wi = p->ts[k * stride];
                int64_t a = s + k, b = a + half;
                double xr = re[b] * wr - im[b] * wi;
                double xi = re[b] * wi + im[b] * wr;
                re[b] = re[a] - xr;
                im[b] = im[a] - xi;
                re[a] += xr;
                im[a] += xi;
            }
        }
    }
}

/* Scratch a transform of plan p needs, in doubles. */
static int64_t plan_scratch(const fft_plan *p) {
    if (p->kind == PLAN_DIRECT) return 2 * p->n;
    if (p->kind == PLAN_BLUESTEIN) return 2 * p->m;
    return 0;
}

/* In-place unscaled transform of (re, im), length p->n. */
static void fft_run(const fft_plan *p, double *re, double *im, double *scratch) {
    const int64_t n = p->n;
    if (p->kind == PLAN_POW2) {
        fft_pow2(p, re, im);
    } else if (p->kind == PLAN_DIRECT) {
        double *or_ = scratch, *oi = scratch + n;
        for (int64_t k = 0; k < n; k++) {
            double sr = 0, si = 0;
            int64_t idx = 0; /* j*k mod n, kept exact */
            for (int64_t j = 0; j < n; j++) {
                double wr = p->tc[idx], wi = p->ts[idx];
                sr += re[j] * wr - im[j] * wi;
                si += re[j] * wi + im[j] * wr;
                idx += k;
                if (idx >= n) idx -= n;
            }
            or_[k] = sr;
            oi[k] = si;
        }
        memcpy(re, or_, (size_t)n * sizeof(double));
        memcpy(im, oi, (size_t)n * sizeof(double));
    } else {
        const int64_t m = p->m;
        double *ar = scratch, *ai = scratch + m;
        for (int64_t k = 0; k < n; k++) {
            ar[k] = re[k] * p->cr[k] - im[k] * p->ci[k];
            ai[k] = re[k] * p->ci[k] + im[k] * p->cr[k];
        }
        for (int64_t k = n; k < m; k++) ar[k] = ai[k] = 0.0;
        fft_pow2(p->inner, ar, ai);
        for (int64_t k = 0; k < m; k++) {
            double xr = ar[k] * p->fr[k] - ai[k] * p->fi[k];
            double xi = ar[k] * p->fi[k] + ai[k] * p->fr[k];
            /* conjugating before and after a forward FFT inverts it */
            ar[k] = xr;
            ai[k] = -xi;
        }
        fft_pow2(p->inner, ar, ai);
        const double inv_m = 1.0 / (double)m;
        for (int64_t k = 0; k < n; k++) {
            double yr = ar[k] * inv_m, yi = -ai[k] * inv_m;
            re[k] = yr * p->cr[k] - yi * p->ci[k];
            im[k] = yr * p->ci[k] + yi * p->cr[k];
        }
    }
}

static fft_plan *plan_new(int64_t n, int sign) {
    fft_plan *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->n = n;
    p->sign = sign;
    if (is_pow2(n) || n <= DIRECT_MAX) {
        p->kind = is_pow2(n) ? PLAN_POW2 : PLAN_DIRECT;
        int64_t cnt = p->kind == PLAN_POW2 ? (n / 2 > 0 ? n / 2 : 1) : n;
        p->tc = malloc((size_t)cnt * sizeof(double));
        p->ts = malloc((size_t)cnt * sizeof(double));
        if (!p->tc || !p->ts) goto fail;
        for (int64_t k = 0; k < cnt; k++) {
            double a = TWO_PI * (double)k / (double)n;
            p->tc[k] = cos(a);
            p->ts[k] = sign * sin(a);
        }
        return p;
    }
    p->kind = PLAN_BLUESTEIN;
    int64_t m = 1;
    while (m < 2 * n - 1) m <<= 1;
    p->m = m;
    p->inner = plan_new(m, -1);
    p->cr = malloc((size_t)n * sizeof(double));
    p->ci = malloc((size_t)n * sizeof(double));
    p->fr = calloc((size_t)m, sizeof(double));
    p->fi = calloc((size_t)m, sizeof(double));
    if (!p->inner || !p->cr || !p->ci || !p->fr || !p->fi) goto fail;
    for (int64_t k = 0; k < n; k++) {
        /* k^2 mod 2n keeps the angle small and exact */
        uint64_t q = ((uint64_t)k * (uint64_t)k) % (uint64_t)(2 * n);
        double a = (TWO_PI / 2) * (double)q / (double)n;
        p->cr[k] = cos(a);
        p->ci[k] = sign * sin(a);
    }
    /* filter: conj(chirp) at offsets 0..n-1 and, wrapped, -(n-1)..-1 */
    p->fr[0] = p->cr[0];
    p->fi[0] = -p->ci[0];
    for (int64_t k = 1; k < n; k++) {
        p->fr[k] = p->fr[m - k] = p->cr[k];
        p->fi[k] = p->fi[m - k] = -p->ci[k];
    }
    fft_pow2(p->inner, p->fr, p->fi);
    return p;
fail:
    plan_free(p);
    return NULL;
}

/* ---- element access ---- */

static inline double load(const void *d, ox_dtype t, int64_t i) {
    if (t == ONYX_FLOAT32) return ((const float *)d)[i];
    if (t == ONYX_FLOAT64) return ((const double *)d)[i];
    return ox_get_f64(d, t, (size_t)i);
}

static inline void store(void *d, ox_dtype t, int64_t i, double v) {
    if (t == ONYX_FLOAT32)
        ((float *)d)[i] = (float)v;
    else if (t == ONYX_FLOAT64)
        ((double *)d)[i] = v;
    else
        ox_set_f64(d, t, (size_t)i, v);
}

static int scalar_input(const ox_tensor *t, int64_t *v) {
    if (!t || ox_tensor_numel(t) != 1) return -1;
    if (t->dtype != ONYX_INT32 && t->dtype != ONYX_INT64) return -1;
    *v = ox_get_i64(t->data, t->dtype, 0);
    return 0;
}

/* ---- DFT ---- */

/* One worker's memory: re and im lines of length L, then the plan's
 * scratch. NULL, with *failed set, when out of memory. */
static double *line_buffers(const fft_plan *p, int64_t L, atomic_int *failed) {
    double *buf = malloc((size_t)(2 * L + plan_scratch(p)) * sizeof(double));
    if (!buf) atomic_store(failed, 1);
    return buf;
}

/* The transformed axis splits the input into outer x n_in x inner
 * complex lines (the last dimension holds 1 or 2 parts). */
typedef struct dft_job {
    const fft_plan *plan;
    const void *x;
    ox_dtype xt;
    int parts;
    int64_t n_in, inner, len, n_out;
    double scale;
    void *y;
    ox_dtype yt;
    /* IRFFT: the input is the one-sided half of a Hermitian spectrum and
     * the output the real signal (one part per value) */
    int irfft;
    atomic_int failed;
} dft_job;

static void dft_lines(void *arg, int64_t l0, int64_t l1) {
    dft_job *j = arg;
    const int64_t L = j->len, take = j->n_in < L ? j->n_in : L;
    double *buf = line_buffers(j->plan, L, &j->failed);
    if (!buf) return;
    double *re = buf, *im = buf + L, *scratch = buf + 2 * L;
    for (int64_t line = l0; line < l1; line++) {
        int64_t o = line / j->inner, i = line % j->inner;
        /* IRFFT reads bins 0 .. L/2 and mirrors the rest from them */
        const int64_t read = j->irfft ? (take < L / 2 + 1 ? take : L / 2 + 1) : take;
        for (int64_t k = 0; k < read; k++) {
            int64_t at = ((o * j->n_in + k) * j->inner + i) * j->parts;
            re[k] = load(j->x, j->xt, at);
            im[k] = j->parts == 2 ? load(j->x, j->xt, at + 1) : 0.0;
        }
        for (int64_t k = read; k < L; k++) re[k] = im[k] = 0.0;
        if (j->irfft)
            for (int64_t k = L / 2 + 1; k < L; k++) {
                /* X[L - k] is always among the bins read (or zero) */
                re[k] = re[L - k];
                im[k] = -im[L - k];
            }
        fft_run(j->plan, re, im, scratch);
        for (int64_t k = 0; k < j->n_out; k++) {
            if (j->irfft) {
                /* the imaginary parts of bins 0 and L/2 only add an
                 * imaginary component, which a real output drops */
                store(j->y, j->yt, (o * j->n_out + k) * j->inner + i, re[k] * j->scale);
                continue;
            }
            int64_t at = ((o * j->n_out + k) * j->inner + i) * 2;
            store(j->y, j->yt, at, re[k] * j->scale);
            store(j->y, j->yt, at + 1, im[k] * j->scale);
        }
    }
    free(buf);
}

static int dft_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ctx->inputs[0];
    const ox_tensor *lt = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
    ox_tensor *y = ctx->outputs[0];
    const int r = x->rank;
    /* DFT-20 takes the axis as input 2 (default -2, the last signal axis)
     * and drops the leading batch axis; DFT-17 has an attribute */
    int v20 = ox_op_since_version(ctx->node->domain, "DFT", ctx->node->opset) >= 20;
    int64_t axis = v20 ? -2 : ir_attr_int(ctx->node, "axis", 1);
    const ox_tensor *at = v20 && ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
    if (at && scalar_input(at, &axis) != 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "DFT: axis must be an int32 or int64 scalar");
    int inverse = ir_attr_int(ctx->node, "inverse", 0) != 0;
    int onesided = ir_attr_int(ctx->node, "onesided", 0) != 0;
    int irfft = inverse && onesided;
    long long axis_given = (long long)axis;
    if (axis < 0) axis += r;
    if (r < (v20 ? 2 : 3) || axis < 0 || axis > r - 2)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "DFT: axis %lld is out of range for rank %d (the last dimension holds "
                              "the real and imaginary parts)",
                              axis_given, r);
    int parts = (int)x->dims[r - 1];
    if (parts != 1 && parts != 2)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "DFT: the last input dimension must be 1 or 2, got %d", parts);
    int64_t L = x->dims[axis];
    if (irfft && !lt && (!ox_sub_i64(L, 1, &L) || !ox_mul_i64(L, 2, &L)))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "DFT: the one-sided inverse length 2 * (bins - 1) overflows int64 (%lld bins)",
                              (long long)x->dims[axis]);
    if (lt) {
        if (scalar_input(lt, &L) != 0)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "DFT: dft_length must be an integer scalar");
        if (L <= 0)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "DFT: dft_length must be positive, got %lld",
                                  (long long)L);
    }
    if (irfft && L <= 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "DFT: the transform length is %lld; an inverse one-sided transform of %lld "
                              "bins needs dft_length",
                              (long long)L, (long long)x->dims[axis]);
    int64_t n_out = onesided && !inverse ? L / 2 + 1 : L;
    if (y->rank != r || y->dims[axis] != n_out || y->dims[r - 1] != (irfft ? 1 : 2))
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "DFT: output shape does not match the transform");
    /* an empty output has nothing to compute, and the dims around a zero
     * axis may multiply past int64; otherwise they are the output's own */
    if (ox_tensor_numel(y) == 0) return 0;
    /* a one-sided transform of nothing would still have one bin to write */
    if (L == 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "DFT: the signal along axis %lld is empty; a one-sided transform needs at "
                              "least one sample", axis_given);
    int64_t inner = ox_numel(x->dims + axis + 1, r - 2 - (int)axis), lines = 0;
    if (!ox_mul_i64(ox_numel(x->dims, (int)axis), inner, &lines) || lines <= 0)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "DFT: the number of transformed lines overflows int64");

    fft_plan *plan = plan_new(L, inverse ? 1 : -1);
    if (!plan) return ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "DFT: out of memory");
    dft_job j = {plan,   x->data, x->dtype, parts, x->dims[axis], inner, L, n_out,
                 inverse ? 1.0 / (double)L : 1.0, y->data, y->dtype, irfft, 0};
    int64_t grain = L >= 4096 ? 1 : 4096 / L;
    ox_parallel_for(ctx->pool, lines, grain, dft_lines, &j);
    plan_free(plan);
    if (atomic_load(&j.failed)) return ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "DFT: out of memory");
    return 0;
}

/* ---- STFT ---- */

typedef struct stft_job {
    const fft_plan *plan;
    const void *x;
    ox_dtype xt;
    int parts;
    int64_t slen, frames, step, len, n_out;
    const void *w; /* NULL: rectangular */
    ox_dtype wt;
    void *y;
    ox_dtype yt;
    atomic_int failed;
} stft_job;

static void stft_frames(void *arg, int64_t f0, int64_t f1) {
    stft_job *j = arg;
    const int64_t L = j->len;
    double *buf = line_buffers(j->plan, L, &j->failed);
    if (!buf) return;
    double *re = buf, *im = buf + L, *scratch = buf + 2 * L;
    for (int64_t fr = f0; fr < f1; fr++) {
        int64_t b = fr / j->frames, f = fr % j->frames;
        for (int64_t k = 0; k < L; k++) {
            int64_t at = (b * j->slen + f * j->step + k) * j->parts;
            double w = j->w ? load(j->w, j->wt, k) : 1.0;
            re[k] = load(j->x, j->xt, at) * w;
            im[k] = j->parts == 2 ? load(j->x, j->xt, at + 1) * w : 0.0;
        }
        fft_run(j->plan, re, im, scratch);
        for (int64_t k = 0; k < j->n_out; k++) {
            int64_t at = (fr * j->n_out + k) * 2;
            store(j->y, j->yt, at, re[k]);
            store(j->y, j->yt, at + 1, im[k]);
        }
    }
    free(buf);
}

static int stft_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ctx->inputs[0], *st = ctx->inputs[1];
    const ox_tensor *w = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
    const ox_tensor *fl = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
    ox_tensor *y = ctx->outputs[0];
    int onesided = ir_attr_int(ctx->node, "onesided", 1) != 0;
    if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "STFT: signal must have shape [batch, signal_length, 1 or 2]");
    int64_t step, L = -1;
    if (scalar_input(st, &step) != 0 || step <= 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "STFT: frame_step must be a positive integer scalar");
    if (fl && (scalar_input(fl, &L) != 0 || L <= 0))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "STFT: frame_length must be a positive integer scalar");
    if (w) {
        if (w->rank != 1)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "STFT: window must have rank 1");
        if (L >= 0 && L != w->dims[0])
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "STFT: window length %lld differs from frame_length %lld",
                                  (long long)w->dims[0], (long long)L);
        L = w->dims[0];
    }
    if (L <= 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "STFT: the frame length must be positive");
    int64_t slen = x->dims[1];
    if (slen < L)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "STFT: signal length %lld is shorter than the frame length %lld",
                              (long long)slen, (long long)L);
    int64_t frames = (slen - L) / step + 1, n_out = onesided ? L / 2 + 1 : L;
    if (y->rank != 4 || y->dims[0] != x->dims[0] || y->dims[1] != frames || y->dims[2] != n_out)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "STFT: output shape does not match the transform");
    int64_t total = x->dims[0] * frames;
    if (total == 0) return 0;
    fft_plan *plan = plan_new(L, -1);
    if (!plan) return ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "STFT: out of memory");
    stft_job j = {plan,  x->data, x->dtype, (int)x->dims[2], slen,    frames,   step, L, n_out,
                  w ? w->data : NULL, w ? w->dtype : ONYX_FLOAT32, y->data, y->dtype, 0};
    int64_t grain = L >= 4096 ? 1 : 4096 / L;
    ox_parallel_for(ctx->pool, total, grain, stft_frames, &j);
    plan_free(plan);
    if (atomic_load(&j.failed)) return ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "STFT: out of memory");
    return 0;
}

/* ---- windows: a0 - a1 cos(x) + a2 cos(2x), x = 2 pi n / N ---- */

static int window_compute(ox_kernel_ctx *ctx, double a0, double a1, double a2) {
    ox_tensor *y = ctx->outputs[0];
    int64_t size;
    if (scalar_input(ctx->inputs[0], &size) != 0 || size < 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: size must be a non-negative integer scalar",
                              ctx->node->op_type);
    if (ox_tensor_numel(y) != size)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "%s: output shape does not match size",
                              ctx->node->op_type);
    int periodic = ir_attr_int(ctx->node, "periodic", 1) != 0;
    int64_t N = periodic ? size : size - 1;
    for (int64_t k = 0; k < size; k++) {
        /* a symmetric window of one point has no period: it is 1 */
        double v = 1.0;
        if (N > 0) {
            double x = TWO_PI * (double)k / (double)N;
            v = a0 - a1 * cos(x) + a2 * cos(2.0 * x);
        }
        store(y->data, y->dtype, k, v);
    }
    return 0;
}

static int hann_compute(ox_kernel_ctx *ctx) { return window_compute(ctx, 0.5, 0.5, 0.0); }
static int hamming_compute(ox_kernel_ctx *ctx) {
    return window_compute(ctx, 25.0 / 46.0, 21.0 / 46.0, 0.0);
}
static int blackman_compute(ox_kernel_ctx *ctx) { return window_compute(ctx, 0.42, 0.5, 0.08); }

/* ---- MelWeightMatrix ---- */

static double hz_to_mel(double f) { return 2595.0 * log10(1.0 + f / 700.0); }
static double mel_to_hz(double m) { return 700.0 * (pow(10.0, m / 2595.0) - 1.0); }

static int mel_compute(ox_kernel_ctx *ctx) {
    ox_tensor *y = ctx->outputs[0];
    int64_t bins, dft_len, rate;
    if (scalar_input(ctx->inputs[0], &bins) || scalar_input(ctx->inputs[1], &dft_len) ||
        scalar_input(ctx->inputs[2], &rate) || bins <= 0 || dft_len <= 0 || rate <= 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "MelWeightMatrix: num_mel_bins, dft_length and sample_rate must be "
                              "positive integer scalars");
    const ox_tensor *lt = ctx->inputs[3], *ht = ctx->inputs[4];
    if (ox_tensor_numel(lt) != 1 || ox_tensor_numel(ht) != 1)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "MelWeightMatrix: the edge frequencies must be scalars");
    double lo = ox_get_f64(lt->data, lt->dtype, 0), hi = ox_get_f64(ht->data, ht->dtype, 0);
    if (!(lo >= 0) || !(hi > lo))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "MelWeightMatrix: need 0 <= lower_edge_hertz < upper_edge_hertz, got %g and %g",
                              lo, hi);
    const int64_t spec = dft_len / 2 + 1;
    if (y->rank != 2 || y->dims[0] != spec || y->dims[1] != bins)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "MelWeightMatrix: output shape mismatch");
    /* The band edges: num_mel_bins + 2 points evenly spaced on the mel
     * scale (the step divides the range by that point count), mapped
     * back to hertz and then to spectrogram bin indices. */
    int64_t *edge = malloc((size_t)(bins + 2) * sizeof(int64_t));
    double *out = calloc((size_t)(spec * bins), sizeof(double));
    if (!edge || !out) {
        free(edge);
        free(out);
        return ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "MelWeightMatrix: out of memory");
    }
    double mlo = hz_to_mel(lo), mhi = hz_to_mel(hi);
    double mstep = (mhi - mlo) / (double)(bins + 2);
    for (int64_t k = 0; k < bins + 2; k++) {
        double hz = mel_to_hz((double)k * mstep + mlo);
        edge[k] = (int64_t)floor((double)(dft_len + 1) * hz / (double)rate);
    }
    for (int64_t b = 0; b < bins; b++) {
        int64_t left = edge[b], center = edge[b + 1], right = edge[b + 2];
        if (center == left) {
            if (center >= 0 && center < spec) out[center * bins + b] = 1.0;
        } else {
            for (int64_t k = left; k <= center; k++)
                if (k >= 0 && k < spec)
                    out[k * bins + b] = (double)(k - left) / (double)(center - left);
        }
        if (right > center)
            for (int64_t k = center; k < right; k++)
                if (k >= 0 && k < spec)
                    out[k * bins + b] = (double)(right - k) / (double)(right - center);
    }
    for (int64_t k = 0; k < spec * bins; k++) store(y->data, y->dtype, k, out[k]);
    free(edge);
    free(out);
    return 0;
}

static const ox_kernel_def KERNELS[] = {
    {"", "DFT", 17, 20, dft_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "STFT", 17, 17, stft_compute, ox_cpu_supports_float, NULL, NULL, NULL},
    {"", "HannWindow", 17, 17, hann_compute, NULL, NULL, NULL, NULL},
    {"", "HammingWindow", 17, 17, hamming_compute, NULL, NULL, NULL, NULL},
    {"", "BlackmanWindow", 17, 17, blackman_compute, NULL, NULL, NULL, NULL},
    {"", "MelWeightMatrix", 17, 17, mel_compute, NULL, NULL, NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_signal = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
