/* The float32 Softmax/LogSoftmax row in every vector width it is built for
 * (ep/cpu/kernels/softmax_row.inc), on every variant this CPU can run:
 * lengths 1 to 67 (every tail), a long row, ordinary values, large spreads
 * (exp underflows to 0), equal values, +-0, -inf, +inf and NaN. The
 * unfused variants must give the scalar row's bits; the fused (FMA)
 * variants must give the first fused variant's bits (so AVX2 and AVX-512
 * machines agree), and the scalar row's values within 1e-6 relative (the
 * exp's rounding; LogSoftmax within 1e-6 absolute). Scores 87 or more
 * below the maximum (a causal mask) give exactly 0, never a subnormal, in
 * every variant. Then a Softmax node
 * through a session: under ONYX_CPU_ISA=portable the same values as under
 * the best ISA (bitwise when that is unfused), and within 2e-6 relative of
 * a double-precision softmax; and a row of 65536 within 2e-6 of one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ep/cpu/kernels/conv_fast.h"
#include "ep/cpu/kernels/elementwise.h"
#include "model_builder.h"

static uint32_t rng = 12345;
static float next_float(float scale) {
    rng = rng * 1664525u + 1013904223u;
    return ((float)(rng >> 8) / 16777216.0f - 0.5f) * scale;
}

/* Row kinds: 0 ordinary, 1 wide spread, 2 all equal, 3 with specials. */
static void fill(float *x, int64_t n, int kind) {
    for (int64_t i = 0; i < n; i++) {
        x[i] = kind == 0 ? next_float(8.0f) : kind == 1 ? next_float(400.0f) : kind == 2 ? 1.5f : next_float(6.0f);
    }
    if (kind == 3 && n > 2) {
        static const float special[] = {0.0f, -0.0f, -INFINITY, 88.0f, -120.0f};
        for (int64_t i = 0; i < n; i += 3) x[i] = special[(i / 3) % 5];
    }
}

static int same_bits(const float *a, const float *b, int64_t n) {
    return memcmp(a, b, sizeof(float) * (size_t)n) == 0;
}

static void test_variants(void) {
    size_t nv = 0;
    const ox_softmax_row_variant *v = ox_softmax_row_variants(&nv);
    CHECK(nv >= 2 && strcmp(v[0].name, "scalar") == 0);
    ox_cpu_isa best = ox_cpu_isa_best();
    int ran = 0;
    enum { MAXN = 1000 };
    float *x = malloc(sizeof(float) * MAXN), *ref = malloc(sizeof(float) * MAXN),
          *got = malloc(sizeof(float) * MAXN);
    float *fused = malloc(sizeof(float) * MAXN);
    size_t first_fused = 0;
    for (size_t k = 1; k < nv; k++)
        if (v[k].fused && !first_fused && v[k].isa <= (int)best) first_fused = k;
    for (size_t k = 1; k < nv; k++) {
        if (v[k].isa > (int)best) continue;
        ran++;
        for (int64_t n = 1; n <= 68; n++) {
            int64_t len = n == 68 ? MAXN : n;
            for (int kind = 0; kind < 4; kind++)
                for (int log_sm = 0; log_sm < 2; log_sm++) {
                    fill(x, len, kind);
                    v[0].row(x, ref, len, log_sm);
                    v[k].row(x, got, len, log_sm);
                    if (!v[k].fused) {
                        if (!same_bits(ref, got, len)) {
                            fprintf(stderr, "%s: n %lld, kind %d, log %d differs from scalar\n",
                                    v[k].name, (long long)len, kind, log_sm);
                            check_failures++;
                        }
                        continue;
                    }
                    v[first_fused].row(x, fused, len, log_sm);
                    if (!same_bits(fused, got, len)) {
                        fprintf(stderr, "%s: n %lld, kind %d, log %d differs from %s\n", v[k].name,
                                (long long)len, kind, log_sm, v[first_fused].name);
                        check_failures++;
                    }
                    int bad = 0;
                    for (int64_t i = 0; i < len; i++) {
                        if (isnan(ref[i]) || isinf(ref[i])) {
                            bad += !(same_bits(ref + i, got + i, 1) || (isnan(ref[i]) && isnan(got[i])));
                            continue;
                        }
                        double tol = log_sm ? 1e-6 : 1e-6 * fabs(ref[i]) + 1e-38;
                        bad += !(fabs((double)got[i] - ref[i]) <= tol);
                    }
                    if (bad) {
                        fprintf(stderr, "%s: n %lld, kind %d, log %d: %d values past 1e-6 of scalar\n",
                                v[k].name, (long long)len, kind, log_sm, bad);
                        check_failures++;
                    }
                }
        }
        /* NaN anywhere: a NaN row, as the scalar gives it */
        for (int64_t at = 0; at < 20; at++) {
            fill(x, 20, 0);
            x[at] = NAN;
            v[0].row(x, ref, 20, 0);
            v[k].row(x, got, 20, 0);
            for (int64_t i = 0; i < 20; i++) CHECK(isnan(ref[i]) == isnan(got[i]));
        }
    }
    CHECK(ran >= 1);
    printf("row variants run: %d of %zu\n", ran, nv - 1);
    free(fused);
    free(x);
    free(ref);
    free(got);
}

/* A long row of close values (every exponential of one size: the sum's
 * worst case) against a softmax in double, in every variant: the sixteen
 * partial sums are float over the blocks of sixteen, each adding n / 16
 * terms, so their error grows with the row; at 65536 elements within 2e-6
 * relative (measured on AMD Zen 4: 2.4e-7, 3.0e-7 for the FMA rows, the
 * exp's rounding; one float sum over the row measured 4.7e-6). */
/* Scores more than 87 below the row's maximum (a causal mask's -inf or
 * float's lowest, and a ramp down to -100 across that bound) give exactly
 * 0 in every variant, never a subnormal (which the processor handles on
 * a slow path); the rest still sum to 1. */
static void test_floor(void) {
    size_t nv = 0;
    const ox_softmax_row_variant *v = ox_softmax_row_variants(&nv);
    ox_cpu_isa best = ox_cpu_isa_best();
    enum { N = 80 };
    float x[N], y[N];
    for (size_t k = 0; k < nv; k++) {
        if (v[k].isa > (int)best) continue;
        for (int kind = 0; kind < 2; kind++) {
            for (int i = 0; i < N; i++)
                x[i] = kind == 0 ? (i < N / 2 ? next_float(4.0f) : (i % 2 ? -INFINITY : -3.4028235e38f))
                                 : 3.0f - (float)i * 1.3f; /* 3 down to -99.7 */
            v[k].row(x, y, N, 0);
            double sum = 0;
            int bad = 0;
            for (int i = 0; i < N; i++) {
                sum += y[i];
                /* never a subnormal; zero where masked (kind 0's second
                 * half) or 87 or more below the ramp's maximum, 3 */
                const int zero = kind == 0 ? i >= N / 2 : x[i] - 3.0f < -87.0f;
                bad += (y[i] != 0.0f && fabsf(y[i]) < 1.17549435e-38f) || (zero && y[i] != 0.0f);
            }
            if (bad || fabs(sum - 1.0) > 1e-6) {
                fprintf(stderr, "%s: floor row %d: %d bad values, sum %.9g\n", v[k].name, kind, bad, sum);
                check_failures++;
            }
        }
    }
}

static void test_long_row(void) {
    enum { N = 65536 };
    size_t nv = 0;
    const ox_softmax_row_variant *v = ox_softmax_row_variants(&nv);
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
    double *want = malloc(sizeof(double) * N);
    CHECK(x && y && want);
    if (!x || !y || !want) goto out;
    for (int64_t i = 0; i < N; i++) x[i] = next_float(0.5f);
    double mx = -INFINITY, sum = 0;
    for (int64_t i = 0; i < N; i++) mx = fmax(mx, x[i]);
    for (int64_t i = 0; i < N; i++) sum += exp((double)x[i] - mx);
    for (int64_t i = 0; i < N; i++) want[i] = exp((double)x[i] - mx) / sum;
    for (size_t k = 0; k < nv; k++) {
        if (v[k].isa > (int)ox_cpu_isa_best()) continue;
        v[k].row(x, y, N, 0);
        double worst = 0;
        for (int64_t i = 0; i < N; i++) worst = fmax(worst, fabs(y[i] - want[i]) / want[i]);
        printf("%s: a row of %d, largest relative error %.3g\n", v[k].name, N, worst);
        CHECK(worst <= 2e-6);
    }
out:
    free(x);
    free(y);
    free(want);
}

/* Softmax over the last axis of [3, 5, 37] through a session. */
static void test_node(onyx_env *env) {
    mb_model *m = mb_new(13);
    int64_t d[3] = {3, 5, 37};
    mb_input(m, "x", ONYX_FLOAT32, d, 3);
    mb_output(m, "y", ONYX_FLOAT32, d, 3);
    mb_node(m, "Softmax", "x", "y");
    mb_attr_int(m, "axis", -1);
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    enum { N = 3 * 5 * 37 };
    float x[N], y[2][N];
    fill(x, N, 0);
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, NULL, &s));
    for (int pass = 0; s && pass < 2; pass++) {
        if (pass == 1) setenv("ONYX_CPU_ISA", "portable", 1);
        onyx_tensor *t = NULL, *out = NULL;
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, d, 3, x, sizeof x, &t));
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, d, 3, y[pass], sizeof y[pass], &out));
        const char *in = "x", *on = "y";
        CHECK_OK(onyx_session_run(s, &in, (const onyx_tensor *const *)&t, 1, &on, &out, 1));
        onyx_tensor_free(t);
        onyx_tensor_free(out);
    }
    unsetenv("ONYX_CPU_ISA");
    /* the best ISA's row is fused on AVX2 machines: then the values agree */
    if (ox_cpu_isa_best() >= OX_ISA_AVX2) {
        for (int i = 0; i < N; i++) CHECK_NEAR(y[0][i], y[1][i], 1e-6 * y[1][i] + 1e-38);
    } else {
        CHECK(same_bits(y[0], y[1], N));
    }
    for (int r = 0; r < 15; r++) {
        double mx = -INFINITY, sum = 0;
        for (int i = 0; i < 37; i++) mx = fmax(mx, x[r * 37 + i]);
        for (int i = 0; i < 37; i++) sum += exp((double)x[r * 37 + i] - mx);
        for (int i = 0; i < 37; i++) {
            double want = exp((double)x[r * 37 + i] - mx) / sum;
            CHECK_NEAR(y[0][r * 37 + i], want, 2e-6 * want + 1e-12);
        }
    }
    onyx_session_free(s);
    free(buf);
}

int main(void) {
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    test_variants();
    if (env) test_node(env);
    test_floor();
    test_long_row();
    onyx_env_free(env);
    CHECK_DONE();
}
