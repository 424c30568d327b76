/* LayerNormalization rows (see layernorm_row.h): a portable one and an
 * AVX2 one with the same arithmetic in the same order. Every operation is
 * a double add, subtract, multiply or divide (no fused multiply-add), so
 * the AVX2 lanes round as the scalar loop does. */
#include "ep/cpu/kernels/layernorm_row.h"

#include <math.h>

#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/kernel_util.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

static double mean_of(double sum, int64_t D) { return D ? sum / (double)D : 0; }

static double inv_std(double ss, int64_t D, double eps) {
    return 1.0 / sqrt((D ? ss / (double)D : 0) + eps);
}

static void row_scalar(const float *x, float *y, int64_t D, const double *scale, const double *bias,
                       double eps, double *mean, double *inv) {
    /* element i of the whole blocks of sixteen into sum i % 16, the rest
     * into sum 0 */
    double s[16] = {0};
    int64_t i = 0;
    for (; i + 16 <= D; i += 16)
        for (int k = 0; k < 16; k++) s[k] += (double)x[i + k];
    for (; i < D; i++) s[0] += (double)x[i];
    const double m = mean_of(ox_sum16_tree(s), D);
    double q[16] = {0};
    for (i = 0; i + 16 <= D; i += 16)
        for (int k = 0; k < 16; k++) {
            double d = (double)x[i + k] - m;
            q[k] += d * d;
        }
    for (; i < D; i++) {
        double d = (double)x[i] - m;
        q[0] += d * d;
    }
    double iv = inv_std(ox_sum16_tree(q), D, eps);
    if (bias)
        for (i = 0; i < D; i++) y[i] = (float)(((double)x[i] - m) * iv * scale[i] + bias[i]);
    else
        for (i = 0; i < D; i++) y[i] = (float)(((double)x[i] - m) * iv * scale[i]);
    *mean = m;
    *inv = iv;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* Four floats of x as doubles. */
__attribute__((target("avx2"))) static inline __m256d load4d(const float *x) {
    return _mm256_cvtps_pd(_mm_loadu_ps(x));
}

__attribute__((target("avx2"))) static void row_avx2(const float *x, float *y, int64_t D,
                                                     const double *scale, const double *bias,
                                                     double eps, double *mean, double *inv) {
    /* acc[a] lane l holds partial sum 4 * a + l, as the scalar s[] */
    __m256d acc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
    int64_t i = 0;
    for (; i + 16 <= D; i += 16)
        for (int a = 0; a < 4; a++) acc[a] = _mm256_add_pd(acc[a], load4d(x + i + 4 * a));
    double s[16];
    for (int a = 0; a < 4; a++) _mm256_storeu_pd(s + 4 * a, acc[a]);
    for (; i < D; i++) s[0] += (double)x[i];
    const double m = mean_of(ox_sum16_tree(s), D);
    const __m256d mv = _mm256_set1_pd(m);
    for (int a = 0; a < 4; a++) acc[a] = _mm256_setzero_pd();
    for (i = 0; i + 16 <= D; i += 16)
        for (int a = 0; a < 4; a++) {
            __m256d d = _mm256_sub_pd(load4d(x + i + 4 * a), mv);
            acc[a] = _mm256_add_pd(acc[a], _mm256_mul_pd(d, d));
        }
    double q[16];
    for (int a = 0; a < 4; a++) _mm256_storeu_pd(q + 4 * a, acc[a]);
    for (; i < D; i++) {
        double d = (double)x[i] - m;
        q[0] += d * d;
    }
    double iv = inv_std(ox_sum16_tree(q), D, eps);
    const __m256d ivv = _mm256_set1_pd(iv);
    for (i = 0; i + 4 <= D; i += 4) {
        __m256d v = _mm256_mul_pd(_mm256_mul_pd(_mm256_sub_pd(load4d(x + i), mv), ivv),
                                  _mm256_loadu_pd(scale + i));
        if (bias) v = _mm256_add_pd(v, _mm256_loadu_pd(bias + i));
        _mm_storeu_ps(y + i, _mm256_cvtpd_ps(v));
    }
    for (; i < D; i++) {
        double v = ((double)x[i] - m) * iv * scale[i];
        y[i] = (float)(bias ? v + bias[i] : v);
    }
    *mean = m;
    *inv = iv;
}
#endif

static const ox_layernorm_row_variant VARIANTS[] = {
    {"scalar", OX_ISA_PORTABLE, row_scalar},
#if defined(__x86_64__) && defined(__GNUC__)
    {"avx2", OX_ISA_AVX2, row_avx2},
#endif
};

const ox_layernorm_row_variant *ox_layernorm_row_variants(size_t *count) {
    *count = sizeof VARIANTS / sizeof VARIANTS[0];
    return VARIANTS;
}

ox_layernorm_row_fn ox_layernorm_row_for(int isa) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (isa == OX_ISA_AVX2 || isa == OX_ISA_AVX512) return row_avx2;
#endif
    (void)isa;
    return row_scalar;
}
