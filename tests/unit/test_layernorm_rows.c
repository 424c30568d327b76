/* The float32 LayerNormalization row (ep/cpu/kernels/layernorm_row.c) on
 * every variant this CPU can run: lengths 1 to 67 (every tail of the
 * blocks of sixteen) and 1000, with and without bias, ordinary values,
 * values with a large common offset (the variance is a small difference
 * of large numbers) and constant rows (variance 0: y is bias). Every
 * variant must give the scalar row's bits, mean and inverse deviation;
 * the scalar row must be within 1e-6 relative (2e-6 absolute near 0) of
 * the same formula in long double. Then a LayerNormalization node through
 * a session: the same bits under ONYX_CPU_ISA=portable as under the best
 * ISA, and the mean and inverse deviation outputs agree with the rows'. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/layernorm_row.h"
#include "model_builder.h"

static uint32_t rng = 777;
static float next_float(float scale) {
    rng = rng * 1664525u + 1013904223u;
    return ((float)(rng >> 8) / 16777216.0f - 0.5f) * scale;
}

/* kind 0: ordinary; 1: 1000 + small values; 2: constant */
static void fill(float *x, int64_t n, int kind) {
    for (int64_t i = 0; i < n; i++)
        x[i] = kind == 0 ? next_float(6.0f) : kind == 1 ? 1000.0f + next_float(0.5f) : -2.25f;
}

static void reference(const float *x, int64_t n, const double *sc, const double *bi, double eps,
                      double *want) {
    long double s = 0, q = 0;
    for (int64_t i = 0; i < n; i++) s += x[i];
    long double m = s / n;
    for (int64_t i = 0; i < n; i++) q += (x[i] - m) * (x[i] - m);
    long double iv = 1.0L / sqrtl(q / n + eps);
    for (int64_t i = 0; i < n; i++) want[i] = (double)((x[i] - m) * iv * sc[i] + (bi ? bi[i] : 0));
}

static void test_variants(void) {
    size_t nv = 0;
    const ox_layernorm_row_variant *v = ox_layernorm_row_variants(&nv);
    CHECK(nv >= 1 && strcmp(v[0].name, "scalar") == 0);
    ox_cpu_isa best = ox_cpu_isa_best();
    enum { MAXN = 1000 };
    float *x = malloc(sizeof(float) * MAXN), *ref = malloc(sizeof(float) * MAXN),
          *got = malloc(sizeof(float) * MAXN);
    double *sc = malloc(sizeof(double) * MAXN), *bi = malloc(sizeof(double) * MAXN),
           *want = malloc(sizeof(double) * MAXN);
    for (int i = 0; i < MAXN; i++) {
        sc[i] = 1.0 + next_float(1.0f);
        bi[i] = next_float(2.0f);
    }
    int ran = 0;
    for (size_t k = 0; k < nv; k++) {
        if (v[k].isa > (int)best) continue;
        ran++;
        for (int64_t n = 1; n <= 68; n++) {
            int64_t len = n == 68 ? MAXN : n;
            for (int kind = 0; kind < 3; kind++)
                for (int with_bias = 0; with_bias < 2; with_bias++) {
                    const double *b = with_bias ? bi : NULL;
                    fill(x, len, kind);
                    double m0, i0, m1, i1;
                    v[0].row(x, ref, len, sc, b, 1e-5, &m0, &i0);
                    v[k].row(x, got, len, sc, b, 1e-5, &m1, &i1);
                    if (memcmp(ref, got, sizeof(float) * (size_t)len) != 0 || m0 != m1 || i0 != i1) {
                        fprintf(stderr, "%s: n %lld, kind %d, bias %d differs from scalar\n", v[k].name,
                                (long long)len, kind, with_bias);
                        check_failures++;
                    }
                    if (k) continue;
                    reference(x, len, sc, b, 1e-5, want);
                    for (int64_t i = 0; i < len; i++) CHECK_NEAR(ref[i], want[i], 1e-6 * fabs(want[i]) + 2e-6);
                }
        }
    }
    CHECK(ran >= 1);
    printf("row variants run: %d of %zu\n", ran, nv);
    free(x);
    free(ref);
    free(got);
    free(sc);
    free(bi);
    free(want);
}

/* LayerNormalization over the last axis of [4, 3, 45] (with its mean and
 * inverse deviation outputs) through a session, under the best ISA and
 * under ONYX_CPU_ISA=portable. */
static void test_node(onyx_env *env) {
    mb_model *m = mb_new(17);
    int64_t d[3] = {4, 3, 45}, dp[1] = {45}, ds[3] = {4, 3, 1};
    enum { N = 4 * 3 * 45, R = 12 };
    float scale[45], bias[45];
    for (int i = 0; i < 45; i++) {
        scale[i] = 0.5f + next_float(1.0f);
        bias[i] = next_float(1.0f);
    }
    mb_input(m, "x", ONYX_FLOAT32, d, 3);
    mb_init_float(m, "s", dp, 1, scale);
    mb_init_float(m, "b", dp, 1, bias);
    mb_output(m, "y", ONYX_FLOAT32, d, 3);
    mb_output(m, "mean", ONYX_FLOAT32, ds, 3);
    mb_output(m, "inv", ONYX_FLOAT32, ds, 3);
    mb_node(m, "LayerNormalization", "x,s,b", "y,mean,inv");
    mb_attr_int(m, "axis", -1);
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    float x[N], y[2][N], mean[2][R], inv[2][R];
    fill(x, N, 0);
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, NULL, &s));
    for (int pass = 0; s && pass < 2; pass++) {
        if (pass == 1) setenv("ONYX_CPU_ISA", "portable", 1);
        onyx_tensor *t = NULL, *out[3] = {NULL, NULL, NULL};
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, d, 3, x, sizeof x, &t));
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, d, 3, y[pass], sizeof y[pass], &out[0]));
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, ds, 3, mean[pass], sizeof mean[pass], &out[1]));
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, ds, 3, inv[pass], sizeof inv[pass], &out[2]));
        const char *in = "x", *on[3] = {"y", "mean", "inv"};
        CHECK_OK(onyx_session_run(s, &in, (const onyx_tensor *const *)&t, 1, on, out, 3));
        onyx_tensor_free(t);
        for (int o = 0; o < 3; o++) onyx_tensor_free(out[o]);
    }
    unsetenv("ONYX_CPU_ISA");
    CHECK(memcmp(y[0], y[1], sizeof y[0]) == 0);
    CHECK(memcmp(mean[0], mean[1], sizeof mean[0]) == 0 && memcmp(inv[0], inv[1], sizeof inv[0]) == 0);
    double sc[45], bi[45], want[45];
    for (int i = 0; i < 45; i++) {
        sc[i] = scale[i];
        bi[i] = bias[i];
    }
    for (int r = 0; r < R; r++) {
        reference(x + r * 45, 45, sc, bi, 1e-5, want);
        for (int i = 0; i < 45; i++) CHECK_NEAR(y[0][r * 45 + i], want[i], 1e-6 * fabs(want[i]) + 2e-6);
        double s = 0;
        for (int i = 0; i < 45; i++) s += x[r * 45 + i];
        CHECK_NEAR(mean[0][r], s / 45, 1e-6);
    }
    onyx_session_free(s);
    free(buf);
}

int main(void) {
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    test_variants();
    test_node(env);
    onyx_env_free(env);
    CHECK_DONE();
}
