/* MaxPool on float32 against a direct evaluation of its definition, over
 * the shapes the kernel's paths divide on: 1-D and 2-D, kernel widths 1
 * to 4, strides 1 to 3 (1 and 2 take the row-padded fast path when the
 * dilation is 1), pads 0 to 2, dilations 1 and 2, floor and ceil mode, two
 * images of two channels with odd and even widths, and values including
 * NaN (never the maximum) and -inf. Every output must be the reference's
 * value exactly: a window's largest value (a later value replaces the
 * current one only when greater), 0 for a window of padding alone. The
 * same under ONYX_CPU_ISA=avx2 (the 8-lane rows where the machine has
 * 16) and ONYX_CPU_ISA=portable. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model_builder.h"

static uint32_t rng = 4242;
static float next_value(void) {
    rng = rng * 1664525u + 1013904223u;
    uint32_t r = rng >> 8;
    if (r % 53 == 0) return NAN;
    if (r % 61 == 0) return -INFINITY;
    return ((float)(r % 100000) + 0.5f) / 1000.0f - 50.0f; /* never 0 */
}

typedef struct pool_case {
    int rank; /* spatial axes: 1 or 2 */
    int64_t in[2], k[2], s[2], p[2], d[2];
    int ceil;
} pool_case;

/* y[o] for output position (oy, ox) of plane xp */
static float reference(const pool_case *c, const float *xp, int64_t oy, int64_t ox) {
    int64_t o[2] = {oy, ox};
    int64_t lo[2], n[2];
    for (int a = 0; a < 2; a++) {
        lo[a] = o[a] * c->s[a] - c->p[a];
        n[a] = c->k[a];
    }
    float cur = -INFINITY;
    int any = 0;
    for (int64_t ky = 0; ky < n[0]; ky++) {
        int64_t iy = lo[0] + ky * c->d[0];
        if (iy < 0 || iy >= c->in[0]) continue;
        for (int64_t kx = 0; kx < n[1]; kx++) {
            int64_t ix = lo[1] + kx * c->d[1];
            if (ix < 0 || ix >= c->in[1]) continue;
            any = 1;
            float v = xp[iy * c->in[1] + ix];
            cur = v > cur ? v : cur;
        }
    }
    return any ? cur : 0.0f;
}

static int same(float a, float b) { return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b)); }

static void run_case(onyx_env *env, const pool_case *c) {
    /* a 1-D pool is the 2-D reference with a height of one */
    int r = c->rank;
    int64_t xd[4] = {2, 2, c->in[0], c->in[1]};
    if (r == 1) xd[2] = c->in[1];
    int64_t kd[2], sd[2], dd[2], pd[4];
    for (int a = 0; a < r; a++) {
        int src = r == 1 ? 1 : a;
        kd[a] = c->k[src];
        sd[a] = c->s[src];
        dd[a] = c->d[src];
        pd[a] = pd[a + r] = c->p[src];
    }
    mb_model *m = mb_new(12);
    mb_input(m, "x", ONYX_FLOAT32, xd, 2 + r);
    mb_output(m, "y", ONYX_FLOAT32, NULL, -1);
    mb_node(m, "MaxPool", "x", "y");
    mb_attr_ints(m, "kernel_shape", kd, (size_t)r);
    mb_attr_ints(m, "strides", sd, (size_t)r);
    mb_attr_ints(m, "dilations", dd, (size_t)r);
    mb_attr_ints(m, "pads", pd, 2 * (size_t)r);
    mb_attr_int(m, "ceil_mode", c->ceil);
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    int64_t plane = c->in[0] * c->in[1], n = 4 * plane;
    float *x = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) x[i] = next_value();
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, NULL, &s));
    /* the machine's best variant, then AVX2 (the eight-lane rows of an
     * AVX-512 machine) and the portable one */
    static const char *const caps[] = {NULL, "avx2", "portable"};
    for (int pass = 0; s && pass < 3; pass++) {
        if (caps[pass]) setenv("ONYX_CPU_ISA", caps[pass], 1);
        onyx_tensor *t = NULL, *y = NULL;
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, xd, 2 + r, x, sizeof(float) * (size_t)n, &t));
        const char *in = "x", *on = "y";
        CHECK_OK(onyx_session_run(s, &in, (const onyx_tensor *const *)&t, 1, &on, &y, 1));
        if (y) {
            const int64_t *yd = onyx_tensor_dims(y);
            int64_t oh = r == 1 ? 1 : yd[2], ow = yd[1 + r];
            const float *yp = onyx_tensor_data(y);
            int bad = 0;
            for (int64_t pl = 0; pl < 4 && !bad; pl++)
                for (int64_t oy = 0; oy < oh && !bad; oy++)
                    for (int64_t ox = 0; ox < ow && !bad; ox++) {
                        float want = reference(c, x + pl * plane, oy, ox), got = yp[(pl * oh + oy) * ow + ox];
                        if (!same(want, got)) {
                            fprintf(stderr,
                                    "MaxPool %dD in %lldx%lld k %lld s %lld p %lld d %lld ceil %d: plane %lld "
                                    "(%lld, %lld) got %g want %g\n",
                                    r, (long long)c->in[0], (long long)c->in[1], (long long)c->k[1],
                                    (long long)c->s[1], (long long)c->p[1], (long long)c->d[1], c->ceil,
                                    (long long)pl, (long long)oy, (long long)ox, got, want);
                            check_failures++;
                            bad = 1;
                        }
                    }
        }
        onyx_tensor_free(t);
        onyx_tensor_free(y);
    }
    unsetenv("ONYX_CPU_ISA");
    onyx_session_free(s);
    free(x);
    free(buf);
}

int main(void) {
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    static const int64_t sizes[][2] = {{5, 5}, {8, 9}, {3, 37}, {1, 1}, {4, 70}};
    int cases = 0;
    for (int r = 1; r <= 2; r++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
            for (int64_t k = 1; k <= 4; k++)
                for (int64_t st = 1; st <= 3; st++)
                    for (int64_t p = 0; p <= 2 && p < k; p++)
                        for (int64_t d = 1; d <= 2; d++)
                            for (int ceil = 0; ceil <= 1; ceil++) {
                                int64_t h = r == 1 ? 1 : sizes[z][0];
                                /* the window must fit the padded input */
                                if ((k - 1) * d + 1 > sizes[z][1] + 2 * p || (k - 1) * d + 1 > h + 2 * p) continue;
                                pool_case c = {r, {h, sizes[z][1]}, {r == 1 ? 1 : k, k}, {r == 1 ? 1 : st, st},
                                               {r == 1 ? 0 : p, p}, {r == 1 ? 1 : d, d}, ceil};
                                run_case(env, &c);
                                cases++;
                            }
    printf("%d MaxPool cases\n", cases);
    onyx_env_free(env);
    CHECK_DONE();
}
