/* GFLOP/s of the CPU provider's channel-blocked convolution
 * (onyx.BlockedConv) on ResNet-50's shapes, through the public API, each
 * also as a share of the core's float32 peak (fma_peak.h: measured). One
 * node per session: blocked input and output, bias and Relu, optimization
 * level none so the node runs as written; one thread by default. Best and
 * median of the runs in `seconds` per shape. With one copy the weights
 * and activations stay warm in the caches; with `copies` sessions of
 * each shape run in turn, each run finds its weights in L3 or memory, as
 * a convolution inside a model does (ResNet-50's weights are 100 MB);
 * one thread only, since the copies' pools would compete for the cores.
 *
 *   blocked_conv_bench [seconds-per-shape [threads [copies]]]   (default 0.5 1 1) */
#include <stdio.h>
#include <stdlib.h>

#include "bench_clock.h"
#include "fma_peak.h"
#include "model_builder.h"
#include "onyx.h"

/* sessions per shape at most: 64 copies of the largest weights (8 MiB) */
#define MAX_COPIES 64

typedef struct shape {
    int64_t C, M, H, K, stride;
} shape;

static const shape SHAPES[] = {
    {64, 64, 56, 3, 1},  {64, 256, 56, 1, 1},   {256, 64, 56, 1, 1},  {128, 128, 28, 3, 1},
    {256, 256, 14, 3, 1}, {1024, 256, 14, 1, 1}, {256, 1024, 14, 1, 1}, {512, 512, 7, 3, 1},
    {2048, 512, 7, 1, 1}, {512, 2048, 7, 1, 1},  {1024, 2048, 14, 1, 2},
};

static uint8_t *model(const shape *s, size_t *len) {
    const int64_t Cb = (s->C + 15) / 16, Mb = (s->M + 15) / 16, pad = s->K / 2;
    const int64_t OH = (s->H + 2 * pad - s->K) / s->stride + 1;
    const int64_t dx[] = {1, Cb, s->H, s->H, 16}, dy[] = {1, Mb, OH, OH, 16}, dw[] = {s->M, s->C, s->K, s->K},
                  db[] = {s->M}, pads[] = {pad, pad, pad, pad}, strides[] = {s->stride, s->stride};
    const int64_t nw = s->M * s->C * s->K * s->K;
    float *w = malloc((size_t)nw * sizeof *w), *b = malloc((size_t)s->M * sizeof *b);
    if (!w || !b) exit(1);
    for (int64_t i = 0; i < nw; i++) w[i] = (float)((i * 7) % 13) * 0.01f - 0.06f;
    for (int64_t i = 0; i < s->M; i++) b[i] = 0.1f;
    mb_model *m = mb_new(17);
    mb_input(m, "x", ONYX_FLOAT32, dx, 5);
    mb_output(m, "y", ONYX_FLOAT32, dy, 5);
    mb_init_float(m, "w", dw, 4, w);
    mb_init_float(m, "b", db, 1, b);
    mb_node(m, "BlockedConv", "x,w,b", "y");
    mb_domain(m, "onyx", 1);
    mb_attr_ints(m, "pads", pads, 4);
    mb_attr_ints(m, "strides", strides, 2);
    mb_attr_string(m, "activation", "Relu");
    uint8_t *buf = mb_serialize(m, len);
    mb_free(m);
    free(w);
    free(b);
    return buf;
}

static int fail(onyx_status *st) {
    fprintf(stderr, "blocked_conv_bench: %s\n", onyx_status_message(st));
    onyx_status_free(st);
    return 1;
}

int main(int argc, char **argv) {
    const double budget = argc > 1 ? atof(argv[1]) : 0.5;
    const int threads = argc > 2 ? atoi(argv[2]) : 1;
    const int copies = argc > 3 ? atoi(argv[3]) : 1;
    if (threads < 1 || copies < 1 || copies > MAX_COPIES) {
        fprintf(stderr, "usage: blocked_conv_bench [seconds-per-shape [threads [copies (1..%d)]]]\n", MAX_COPIES);
        return 2;
    }
    if (copies > 1 && threads > 1) {
        /* each session has its own pool, whose workers spin a while after
         * a run: the next copy's run then shares the cores with them (the
         * medians came out twice the best runs) */
        fprintf(stderr, "blocked_conv_bench: copies above 1 need one thread (each copy's pool would compete)\n");
        return 2;
    }
    const double peak = fma_peak();
    if (peak > 0) printf("float32 peak (measured FMA throughput, one core): %.1f GFLOP/s\n", peak);
    onyx_env *env = NULL;
    onyx_status *st = onyx_env_create(&env);
    if (st) return fail(st);
    for (size_t k = 0; k < sizeof SHAPES / sizeof SHAPES[0]; k++) {
        const shape *s = &SHAPES[k];
        size_t len = 0;
        uint8_t *buf = model(s, &len);
        onyx_session *sess[MAX_COPIES];
        for (int c = 0; c < copies; c++) {
            onyx_session_options *o = NULL;
            if ((st = onyx_session_options_create(&o)) || (st = onyx_session_options_set_threads(o, threads)) ||
                (st = onyx_session_options_set_optimization_level(o, ONYX_OPT_NONE)) ||
                (st = onyx_session_create_from_buffer(env, buf, len, o, &sess[c])))
                return fail(st);
            onyx_session_options_free(o);
        }
        free(buf);
        const int64_t Cb = (s->C + 15) / 16, nx = Cb * s->H * s->H * 16, dx[] = {1, Cb, s->H, s->H, 16};
        float *x = malloc((size_t)nx * sizeof *x);
        if (!x) return 1;
        for (int64_t i = 0; i < nx; i++) x[i] = (float)((i * 5) % 11) * 0.1f - 0.5f;
        onyx_tensor *tx = NULL;
        if ((st = onyx_tensor_wrap(ONYX_FLOAT32, dx, 5, x, (size_t)nx * sizeof *x, &tx))) return fail(st);
        const char *in = "x", *out = "y";
        double times[4096];
        int n = 0;
        const double end = bench_now_ns() + budget * 1e9;
        for (int r = 0; n < 4096 && (r < 3 + 5 || bench_now_ns() < end); r++) {
            onyx_tensor *ty = NULL;
            const double t0 = bench_now_ns();
            if ((st = onyx_session_run(sess[r % copies], &in, (const onyx_tensor *const *)&tx, 1, &out, &ty, 1)))
                return fail(st);
            const double dt = bench_now_ns() - t0;
            onyx_tensor_free(ty);
            if (r >= 3) times[n++] = dt; /* after three warm-up runs */
        }
        qsort(times, (size_t)n, sizeof times[0], bench_cmp_double);
        const int64_t OH = (s->H + 2 * (s->K / 2) - s->K) / s->stride + 1;
        const double flop = 2.0 * (double)(s->M * s->C * s->K * s->K * OH * OH);
        const double g = flop / times[0];
        printf("%5lld -> %-5lld %lldx%lld stride %lld on %3lldx%-3lld  best %7.3f ms  median %7.3f ms  %6.1f GFLOP/s",
               (long long)s->C, (long long)s->M, (long long)s->K, (long long)s->K, (long long)s->stride,
               (long long)s->H, (long long)s->H, times[0] * 1e-6, times[n / 2] * 1e-6, g);
        if (peak > 0) printf("  %5.1f%% of %d x peak", 100.0 * g / (peak * threads), threads);
        printf("\n");
        onyx_tensor_free(tx);
        free(x);
        for (int c = 0; c < copies; c++) onyx_session_free(sess[c]);
    }
    onyx_env_free(env);
    return 0;
}
