/* The 8-bit quantization rows (ep/cpu/kernels/quantize.c) give the same
 * bytes on every instruction-set variant this machine has as on the
 * portable one: QuantizeLinear to uint8 and int8 and DynamicQuantizeLinear
 * over values that round half to even (x / scale = k + 0.5), saturate at
 * both ends, are NaN (the zero point), infinite (saturated), -0.0, and a
 * length that leaves a ragged end for the scalar loop. Also the values
 * themselves for a few of them, so the portable path is checked too. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ep/cpu/kernels/cpu_isa.h"
#include "model_builder.h"
#include "onyx.h"

#define N 45

/* Runs a one-node model on x; out receives the first output's bytes (n)
 * and, for DynamicQuantizeLinear, scale and zero point. */
static void run(onyx_env *env, const char *op, onyx_dtype yt, const float *x, uint8_t *out, float *scale,
                uint8_t *zp) {
    const int64_t dx[] = {N}, d1[] = {1};
    mb_model *m = mb_new(19);
    mb_input(m, "x", ONYX_FLOAT32, dx, 1);
    mb_output(m, "y", yt, dx, 1);
    if (strcmp(op, "QuantizeLinear") == 0) {
        const float s = 0.5f;
        mb_init_float(m, "s", d1, 0, &s);
        mb_input(m, "z", yt, NULL, 0);
        mb_node(m, op, "x,s,z", "y");
    } else {
        mb_output(m, "ys", ONYX_FLOAT32, NULL, 0);
        mb_output(m, "yz", ONYX_UINT8, NULL, 0);
        mb_node(m, op, "x", "y,ys,yz");
    }
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *s = NULL;
    onyx_tensor *in[2] = {NULL, NULL}, *o[3] = {NULL, NULL, NULL};
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, NULL, &s));
    free(buf);
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, dx, 1, (void *)x, N * sizeof *x, &in[0]));
    CHECK_OK(onyx_tensor_create(yt, NULL, 0, &in[1]));
    if (s && in[0] && in[1]) {
        /* the zero point: 10 (uint8) or -3 (int8) */
        *(uint8_t *)onyx_tensor_data(in[1]) = yt == ONYX_UINT8 ? 10 : (uint8_t)(int8_t)-3;
        const char *in_names[] = {"x", "z"}, *out_names[] = {"y", "ys", "yz"};
        int quant = strcmp(op, "QuantizeLinear") == 0;
        CHECK_OK(onyx_session_run(s, in_names, (const onyx_tensor *const *)in, quant ? 2 : 1, out_names, o,
                                  quant ? 1 : 3));
        if (o[0]) memcpy(out, onyx_tensor_data(o[0]), N);
        if (o[1]) *scale = *(const float *)onyx_tensor_data(o[1]);
        if (o[2]) *zp = *(const uint8_t *)onyx_tensor_data(o[2]);
    }
    for (int i = 0; i < 3; i++) onyx_tensor_free(o[i]);
    onyx_tensor_free(in[0]);
    onyx_tensor_free(in[1]);
    onyx_session_free(s);
}

int main(void) {
    static const char *const isas[] = {"portable", "avx2", "avx512"};
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    float x[N], finite[N];
    for (int i = 0; i < N; i++) x[i] = (float)(i - 22) * 0.25f; /* x / 0.5 = k / 2: ties every other */
    x[3] = NAN;
    x[5] = -0.0f;
    x[7] = 1e9f;
    x[8] = -1e9f;
    x[9] = INFINITY;
    x[44] = 200.25f; /* in the ragged end: 400.5 -> saturated */
    memcpy(finite, x, sizeof x);
    finite[3] = 1.0f;
    finite[7] = 2.0f;
    finite[8] = -2.0f;
    finite[9] = 3.0f; /* DynamicQuantizeLinear refuses infinities */
    ox_cpu_isa best = ox_cpu_isa_best();
    static const onyx_dtype types[] = {ONYX_UINT8, ONYX_INT8};
    for (int t = 0; t < 2; t++) {
        uint8_t want[N], got[N];
        float s0 = 0, s1 = 0;
        uint8_t z0 = 0, z1 = 0;
        setenv("ONYX_CPU_ISA", "portable", 1);
        run(env, "QuantizeLinear", types[t], x, want, &s0, &z0);
        /* spot values: 0.75 / 0.5 = 1.5 -> 2, 0.25 / 0.5 = 0.5 -> 0, NaN and -0 -> zp, 1e9 saturates */
        int32_t zp = types[t] == ONYX_UINT8 ? 10 : -3;
        int32_t v25 = types[t] == ONYX_UINT8 ? want[25] : (int8_t)want[25];
        int32_t v23 = types[t] == ONYX_UINT8 ? want[23] : (int8_t)want[23];
        int32_t v3 = types[t] == ONYX_UINT8 ? want[3] : (int8_t)want[3];
        int32_t v5 = types[t] == ONYX_UINT8 ? want[5] : (int8_t)want[5];
        int32_t v7 = types[t] == ONYX_UINT8 ? want[7] : (int8_t)want[7];
        CHECK(v25 == zp + 2 && v23 == zp + 0 && v3 == zp && v5 == zp);
        CHECK(v7 == (types[t] == ONYX_UINT8 ? 255 : 127));
        for (int v = 1; v <= (int)best; v++) {
            setenv("ONYX_CPU_ISA", isas[v], 1);
            run(env, "QuantizeLinear", types[t], x, got, &s1, &z1);
            CHECK(memcmp(want, got, N) == 0);
        }
    }
    uint8_t want[N], got[N];
    float s0 = 0, s1 = 0;
    uint8_t z0 = 0, z1 = 0;
    setenv("ONYX_CPU_ISA", "portable", 1);
    run(env, "DynamicQuantizeLinear", ONYX_UINT8, finite, want, &s0, &z0);
    /* the range [-5.5, 200.25] */
    CHECK_NEAR(s0, 205.75f / 255.0f, 1e-6);
    for (int v = 1; v <= (int)best; v++) {
        setenv("ONYX_CPU_ISA", isas[v], 1);
        run(env, "DynamicQuantizeLinear", ONYX_UINT8, finite, got, &s1, &z1);
        CHECK(memcmp(want, got, N) == 0 && s0 == s1 && z0 == z1);
    }
    onyx_env_free(env);
    CHECK_DONE();
}
