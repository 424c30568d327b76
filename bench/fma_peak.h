/* The core's float32 peak, measured, not taken from a data sheet
 * (gemm_bench, blocked_conv_bench): twelve independent chains of fused
 * multiply-adds in registers, 256-bit and, where the machine has AVX-512,
 * 512-bit, the faster of the two (the FMA units' throughput at the clock
 * the core runs under that load: on AMD Zen 4, whose 512-bit operations
 * take two passes, both give the same; an Intel Xeon with two 512-bit
 * units gives 1.85x at a lower clock). 0 without AVX2 and FMA. */
#ifndef ONYX_BENCH_FMA_PEAK_H
#define ONYX_BENCH_FMA_PEAK_H

#include <time.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define FMA12(F)                                                                                   \
    a0 = F(a0, b, c), a1 = F(a1, b, c), a2 = F(a2, b, c), a3 = F(a3, b, c), a4 = F(a4, b, c),      \
    a5 = F(a5, b, c), a6 = F(a6, b, c), a7 = F(a7, b, c), a8 = F(a8, b, c), a9 = F(a9, b, c),      \
    a10 = F(a10, b, c), a11 = F(a11, b, c)
/* GFLOP/s of n rounds of 12 independent FMAs of LANES-lane vectors V
 * (intrinsics prefix P) in a function NAME built for TARGET; the chains
 * start at different values, so no two are the same one, and their sum
 * goes to sink, so the loop is not dropped. */
#define DEF_FMA_PEAK(NAME, TARGET, P, V, LANES)                                                    \
    __attribute__((target(TARGET))) static double NAME(long n, volatile float *sink) {              \
        V a0 = P##_set1_ps(0.1f), a1 = P##_set1_ps(0.2f), a2 = P##_set1_ps(0.3f),                     \
          a3 = P##_set1_ps(0.4f), a4 = P##_set1_ps(0.5f), a5 = P##_set1_ps(0.6f),                     \
          a6 = P##_set1_ps(0.7f), a7 = P##_set1_ps(0.8f), a8 = P##_set1_ps(0.9f),                     \
          a9 = P##_set1_ps(1.0f), a10 = P##_set1_ps(1.1f), a11 = P##_set1_ps(1.2f);                   \
        const V b = P##_set1_ps(0.999f), c = P##_set1_ps(0.001f);                                   \
        struct timespec t0, t1;                                                                     \
        clock_gettime(CLOCK_MONOTONIC, &t0);                                                        \
        for (long k = 0; k < n; k++) FMA12(P##_fmadd_ps);                                           \
        clock_gettime(CLOCK_MONOTONIC, &t1);                                                        \
        V s = P##_add_ps(P##_add_ps(P##_add_ps(a0, a1), P##_add_ps(a2, a3)),                        \
                         P##_add_ps(P##_add_ps(a4, a5), P##_add_ps(a6, a7)));                       \
        s = P##_add_ps(s, P##_add_ps(P##_add_ps(a8, a9), P##_add_ps(a10, a11)));                    \
        float lanes[LANES];                                                                         \
        P##_storeu_ps(lanes, s);                                                                    \
        *sink = lanes[0];                                                                           \
        double dt = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);     \
        return (double)n * 12 * 2 * LANES / dt * 1e-9;                                              \
    }

DEF_FMA_PEAK(fma_peak_avx2, "avx2,fma", _mm256, __m256, 8)
DEF_FMA_PEAK(fma_peak_avx512, "avx512f", _mm512, __m512, 16)

static double fma_peak(void) {
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return 0;
    volatile float sink = 0; /* keeps the sums, so the loop is not dropped */
    const int wide = __builtin_cpu_supports("avx512f");
    double best = 0;
    for (int r = 0; r < 5; r++) {
        double g = fma_peak_avx2(50000000, &sink);
        if (g > best) best = g;
        g = wide ? fma_peak_avx512(25000000, &sink) : 0;
        if (g > best) best = g;
    }
    return best;
}
#else
static double fma_peak(void) { return 0; }
#endif

#endif
