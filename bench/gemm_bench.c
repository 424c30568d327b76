/* GFLOP/s of the float32 GEMM alone on square and convolution-like
 * shapes, single-threaded (no pool) so results compare with one-core
 * BLAS figures, each also as a share of the core's float32 peak
 * (fma_peak.h: measured).
 * usage: gemm_bench [seconds-per-shape] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ep/cpu/kernels/gemm.h"

#include "fma_peak.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    double budget = argc > 1 ? atof(argv[1]) : 0.5;
    static const int64_t shapes[][3] = {
        {256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024}, {2048, 2048, 2048}, {64, 3136, 576}, {256, 784, 2304},
        {16, 12544, 144}, {197, 192, 768},
        /* attention: scores x V and Q x K^T of one head (DETR encoder) */
        {336, 16, 336}, {336, 336, 16},
    };
    const double peak = fma_peak();
    if (peak > 0) printf("float32 peak (measured FMA throughput, one core): %.1f GFLOP/s\n", peak);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int64_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        float *a = malloc(sizeof(float) * (size_t)(M * K));
        float *b = malloc(sizeof(float) * (size_t)(K * N));
        float *c = malloc(sizeof(float) * (size_t)(M * N));
        if (!a || !b || !c) return 1;
        for (int64_t i = 0; i < M * K; i++) a[i] = (float)((i * 7) % 13) * 0.1f - 0.6f;
        for (int64_t i = 0; i < K * N; i++) b[i] = (float)((i * 5) % 11) * 0.1f - 0.5f;
        ox_gemm_f32(NULL, NULL, 0, 0, M, N, K, 1.0f, a, K, b, N, 0.0f, c, N);
        double best = 1e30, t_end = now_s() + budget;
        int reps = 0;
        do {
            double t0 = now_s();
            ox_gemm_f32(NULL, NULL, 0, 0, M, N, K, 1.0f, a, K, b, N, 0.0f, c, N);
            double dt = now_s() - t0;
            if (dt < best) best = dt;
            reps++;
        } while (now_s() < t_end || reps < 3);
        const double g = 2.0 * (double)M * (double)N * (double)K / best * 1e-9;
        printf("M=%-5lld N=%-6lld K=%-5lld %8.1f GFLOP/s", (long long)M, (long long)N, (long long)K, g);
        if (peak > 0) printf("  %5.1f%% of peak", 100.0 * g / peak);
        printf("\n");
        free(a);
        free(b);
        free(c);
    }
    return 0;
}
