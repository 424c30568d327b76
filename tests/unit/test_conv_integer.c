/* ConvInteger (the byte im2col of conv_q8.c and the 8-bit GEMM) against a
 * direct int32 convolution in this file, bit for bit, under every
 * instruction-set variant this machine has: 1-D, 2-D and 3-D windows,
 * strides, dilations and pads that put taps in the padding (which must
 * read the zero point), groups, a batch of two, uint8 and int8 inputs and
 * weights, a scalar and a per-channel weight zero point. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ep/cpu/kernels/cpu_isa.h"
#include "model_builder.h"
#include "onyx.h"

typedef struct ccase {
    int r;                 /* spatial rank */
    int64_t N, C, M, G;
    int64_t in[3], k[3], stride[3], dil[3], pads[6];
    int x_signed, w_signed, w_zp_per_channel;
} ccase;

static uint32_t next(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

static int32_t byte_at(const uint8_t *v, int is_signed, int64_t i) { return is_signed ? (int8_t)v[i] : v[i]; }

static int64_t out_len(const ccase *c, int d) {
    int64_t ek = (c->k[d] - 1) * c->dil[d] + 1;
    return (c->in[d] + c->pads[d] + c->pads[d + c->r] - ek) / c->stride[d] + 1;
}

/* y[n][m][o...] by the definition, in wrapping uint32 like int32 */
static void reference(const ccase *c, const uint8_t *x, const uint8_t *w, int32_t xz, const int32_t *wz, int32_t *y) {
    int64_t out[3] = {1, 1, 1}, in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, P = 1, IS = 1, KS = 1;
    for (int d = 0; d < c->r; d++) {
        out[d] = out_len(c, d);
        in[d] = c->in[d];
        k[d] = c->k[d];
        P *= out[d];
        IS *= in[d];
        KS *= k[d];
    }
    const int64_t Cg = c->C / c->G, Mg = c->M / c->G;
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t m = 0; m < c->M; m++)
            for (int64_t p = 0; p < P; p++) {
                int64_t o[3] = {0, 0, 0}, q = p;
                for (int d = c->r - 1; d >= 0; d--) {
                    o[d] = q % out[d];
                    q /= out[d];
                }
                uint32_t acc = 0;
                int64_t grp = m / Mg;
                for (int64_t ci = 0; ci < Cg; ci++)
                    for (int64_t t = 0; t < KS; t++) {
                        int64_t kk[3] = {0, 0, 0}, tt = t, off = 0, inside = 1;
                        for (int d = c->r - 1; d >= 0; d--) {
                            kk[d] = tt % k[d];
                            tt /= k[d];
                        }
                        for (int d = 0; d < c->r; d++) {
                            int64_t i = o[d] * c->stride[d] - c->pads[d] + kk[d] * c->dil[d];
                            inside &= i >= 0 && i < in[d];
                            off = off * in[d] + i;
                        }
                        int32_t xv = inside ? byte_at(x, c->x_signed, (n * c->C + grp * Cg + ci) * IS + off) : xz;
                        int32_t wv = byte_at(w, c->w_signed, (m * Cg + ci) * KS + t);
                        acc += (uint32_t)((xv - xz) * (wv - wz[c->w_zp_per_channel ? m : 0]));
                    }
                y[(n * c->M + m) * P + p] = (int32_t)acc;
            }
}

static void run_case(onyx_env *env, const ccase *c, const char *isa, uint64_t seed) {
    int64_t xd[5] = {c->N, c->C}, wd[5] = {c->M, c->C / c->G}, nx = c->N * c->C, nw = c->M * (c->C / c->G), P = 1;
    for (int d = 0; d < c->r; d++) {
        xd[2 + d] = c->in[d];
        wd[2 + d] = c->k[d];
        nx *= c->in[d];
        nw *= c->k[d];
        P *= out_len(c, d);
    }
    const onyx_dtype xt = c->x_signed ? ONYX_INT8 : ONYX_UINT8, wt = c->w_signed ? ONYX_INT8 : ONYX_UINT8;
    const int64_t nwz = c->w_zp_per_channel ? c->M : 1;
    mb_model *m = mb_new(10);
    mb_input(m, "x", xt, xd, 2 + c->r);
    mb_input(m, "w", wt, wd, 2 + c->r);
    mb_input(m, "xz", xt, NULL, 0);
    mb_input(m, "wz", wt, &nwz, 1);
    mb_output(m, "y", ONYX_INT32, NULL, -1);
    mb_node(m, "ConvInteger", "x,w,xz,wz", "y");
    mb_attr_ints(m, "strides", c->stride, (size_t)c->r);
    mb_attr_ints(m, "dilations", c->dil, (size_t)c->r);
    mb_attr_ints(m, "pads", c->pads, 2 * (size_t)c->r);
    mb_attr_int(m, "group", c->G);
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *s = NULL;
    onyx_tensor *t[4] = {0}, *y = NULL;
    int32_t *want = malloc(sizeof(int32_t) * (size_t)(c->N * c->M * P));
    int32_t wz[64];
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, NULL, &s));
    free(buf);
    const int64_t zdims[1] = {nwz};
    CHECK_OK(onyx_tensor_create(xt, xd, 2 + c->r, &t[0]));
    CHECK_OK(onyx_tensor_create(wt, wd, 2 + c->r, &t[1]));
    CHECK_OK(onyx_tensor_create(xt, NULL, 0, &t[2]));
    CHECK_OK(onyx_tensor_create(wt, zdims, 1, &t[3]));
    if (!s || !t[0] || !t[1] || !t[2] || !t[3] || !want || nwz > 64) {
        check_failures++;
        goto out;
    }
    uint8_t *x = onyx_tensor_data(t[0]), *w = onyx_tensor_data(t[1]);
    uint8_t *xzb = onyx_tensor_data(t[2]), *wzb = onyx_tensor_data(t[3]);
    for (int64_t i = 0; i < nx; i++) x[i] = (uint8_t)next(&seed);
    for (int64_t i = 0; i < nw; i++) w[i] = (uint8_t)next(&seed);
    xzb[0] = (uint8_t)next(&seed);
    for (int64_t i = 0; i < nwz; i++) {
        wzb[i] = (uint8_t)next(&seed);
        wz[i] = byte_at(wzb, c->w_signed, i);
    }
    reference(c, x, w, byte_at(xzb, c->x_signed, 0), wz, want);
    const char *in_names[] = {"x", "w", "xz", "wz"}, *out_name = "y";
    CHECK_OK(onyx_session_run(s, in_names, (const onyx_tensor *const *)t, 4, &out_name, &y, 1));
    if (!y) goto out;
    CHECK(onyx_tensor_dtype(y) == ONYX_INT32 && onyx_tensor_numel(y) == c->N * c->M * P);
    const int32_t *got = onyx_tensor_data(y);
    int64_t bad = 0;
    for (int64_t i = 0; i < c->N * c->M * P && i < onyx_tensor_numel(y); i++)
        if (got[i] != want[i] && bad++ < 3)
            fprintf(stderr, "[%s] rank %d x%s w%s: y[%lld] = %d, want %d\n", isa, c->r, c->x_signed ? "s8" : "u8",
                    c->w_signed ? "s8" : "u8", (long long)i, got[i], want[i]);
    CHECK(bad == 0);
out:
    for (int i = 0; i < 4; i++) onyx_tensor_free(t[i]);
    onyx_tensor_free(y);
    onyx_session_free(s);
    free(want);
}

int main(void) {
    static const char *const isas[] = {"portable", "avx2", "avx512"};
    static const ccase cases[] = {
        /* 2-D, 3x3, pad 1, stride 1: taps in the padding on every edge */
        {2, 1, 5, 7, 1, {9, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 0, 1, 1},
        /* stride 2, dilation 2, uneven pads, groups, batch 2 */
        {2, 2, 6, 4, 2, {13, 10}, {3, 2}, {2, 3}, {2, 1}, {2, 0, 1, 3}, 1, 1, 0},
        /* 1x1 over many channels: K past 256 (the float32 path's runs) */
        {2, 1, 300, 33, 1, {5, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 0, 0, 1},
        /* 7x7 stride 2 pad 3 with uint8 weights */
        {2, 1, 3, 8, 1, {20, 17}, {7, 7}, {2, 2}, {1, 1}, {3, 3, 3, 3}, 1, 0, 1},
        /* depthwise: one channel per group */
        {2, 2, 4, 4, 4, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 0, 1, 0},
        /* 1-D and 3-D windows take the generic im2col */
        {1, 2, 3, 5, 1, {19}, {4}, {3}, {2}, {5, 2}, 0, 1, 1},
        {3, 1, 2, 3, 1, {4, 5, 6}, {2, 3, 2}, {1, 2, 1}, {2, 1, 1}, {1, 0, 1, 1, 2, 0}, 1, 0, 1},
    };
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    ox_cpu_isa best = ox_cpu_isa_best();
    uint64_t seed = 7;
    for (int v = 0; v <= (int)best; v++) {
        setenv("ONYX_CPU_ISA", isas[v], 1);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(env, &cases[i], isas[v], seed++);
    }
    onyx_env_free(env);
    CHECK_DONE();
}
