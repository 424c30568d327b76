/* The float32 convolution paths of the CPU provider (prepacked GEMM with
 * and without im2col, from a padded input, Winograd, depthwise) and onyx FusedConv's epilogue (bias,
 * residual Z, every activation) and input scale S (applied as the 1x1
 * GEMM packs X, or by a scaled copy; an S of another shape refused at
 * creation and at run) against a direct reference computed in
 * double: odd sizes, groups, pads, strides, dilations, 1-D to 3-D, an
 * empty batch, weights as constants (packed at session creation) and as
 * graph inputs (packed per run), one and two threads. Every case runs
 * under every instruction-set variant this machine has (ONYX_CPU_ISA caps
 * the kernels' choice; the portable one always runs). Tolerance: 2e-5
 * plus 2e-5 of the magnitude of the reference and of the sum of |terms|,
 * which bounds float32 accumulation over these sizes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ep/cpu/kernels/conv_fast.h"
#include "model_builder.h"

typedef struct conv_case {
    const char *name;
    int r;
    int64_t N, C, M, G;
    int64_t in[3], k[3], stride[3], dil[3], pads[6];
    int bias, z, w_input, threads; /* z 2: Z of shape [N, M, 1, ...], broadcast */
    const char *act; /* NULL: plain Conv; else onyx FusedConv with it */
    float params[2];
    int n_params;
} conv_case;

static float frand(unsigned *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static double act_ref(const conv_case *c, double x) {
    const char *a = c->act ? c->act : "";
    double p0 = c->params[0], p1 = c->params[1];
    if (!strcmp(a, "Relu")) return x > 0 ? x : 0;
    if (!strcmp(a, "Clip")) return x < p0 ? p0 : x > p1 ? p1 : x;
    if (!strcmp(a, "Sigmoid")) return 1 / (1 + exp(-x));
    if (!strcmp(a, "HardSigmoid")) {
        double v = p0 * x + p1;
        return v < 0 ? 0 : v > 1 ? 1 : v;
    }
    if (!strcmp(a, "HardSwish")) {
        double v = x / 6 + 0.5;
        return x * (v < 0 ? 0 : v > 1 ? 1 : v);
    }
    if (!strcmp(a, "SiLU")) return x / (1 + exp(-x));
    if (!strcmp(a, "LeakyRelu")) return x >= 0 ? x : p0 * x;
    if (!strcmp(a, "Tanh")) return tanh(x);
    if (!strcmp(a, "Gelu")) return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    if (!strcmp(a, "GeluTanh")) return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    return x;
}

static int64_t out_size(const conv_case *c, int d) {
    int64_t ek = (c->k[d] - 1) * c->dil[d] + 1;
    return (c->in[d] + c->pads[d] + c->pads[d + c->r] - ek) / c->stride[d] + 1;
}

static int64_t prod(const int64_t *v, int n) {
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= v[i];
    return p;
}

/* y and, per element, the sum of |terms| (for the tolerance) */
static void reference(const conv_case *c, const float *x, const float *w, const float *b, const float *z,
                      double *y, double *mag) {
    int r = c->r;
    int64_t out[3] = {1, 1, 1}, in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, dl[3] = {1, 1, 1},
            pb[3] = {0, 0, 0};
    /* padded to three axes with leading ones */
    for (int d = 0; d < r; d++) {
        int e = 3 - r + d;
        out[e] = out_size(c, d);
        in[e] = c->in[d];
        k[e] = c->k[d];
        s[e] = c->stride[d];
        dl[e] = c->dil[d];
        pb[e] = c->pads[d];
    }
    int64_t Cg = c->C / c->G, Mg = c->M / c->G, P = prod(out, 3), I = prod(in, 3), KS = prod(k, 3);
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t m = 0; m < c->M; m++)
            for (int64_t p = 0; p < P; p++) {
                int64_t o0 = p / (out[1] * out[2]), o1 = p / out[2] % out[1], o2 = p % out[2];
                double acc = b ? b[m] : 0, mg = fabs(acc);
                int64_t grp = m / Mg;
                for (int64_t cc = 0; cc < Cg; cc++)
                    for (int64_t q = 0; q < KS; q++) {
                        int64_t k0 = q / (k[1] * k[2]), k1 = q / k[2] % k[1], k2 = q % k[2];
                        int64_t i0 = o0 * s[0] + k0 * dl[0] - pb[0], i1 = o1 * s[1] + k1 * dl[1] - pb[1],
                                i2 = o2 * s[2] + k2 * dl[2] - pb[2];
                        if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2]) continue;
                        double t = (double)x[(n * c->C + grp * Cg + cc) * I + (i0 * in[1] + i1) * in[2] + i2] *
                                   w[(m * Cg + cc) * KS + q];
                        acc += t;
                        mg += fabs(t);
                    }
                int64_t at = (n * c->M + m) * P + p;
                if (z) {
                    double zv = c->z == 2 ? z[n * c->M + m] : z[at];
                    acc += zv;
                    mg += fabs(zv);
                }
                y[at] = act_ref(c, acc);
                mag[at] = mg;
            }
}

/* scale: FusedConv's input S, 0 none, 1 [N, C, 1, ...], 2 [1, C, 1, ...] */
static void run_case(onyx_env *env, const conv_case *c, int scale, const char *const *isas, int n_isas) {
    unsigned seed = 777;
    int r = c->r;
    int64_t dx[5] = {c->N, c->C}, dw[5] = {c->M, c->C / c->G}, dy[5] = {c->N, c->M}, db[1] = {c->M},
            dz[5] = {c->N, c->M, 1, 1, 1};
    for (int d = 0; d < r; d++) {
        dx[d + 2] = c->in[d];
        dw[d + 2] = c->k[d];
        dy[d + 2] = out_size(c, d);
    }
    if (c->z != 2) memcpy(dz, dy, sizeof dz);
    int64_t nx = prod(dx, r + 2), nw = prod(dw, r + 2), ny = prod(dy, r + 2), nz = prod(dz, r + 2);
    float *x = malloc(sizeof(float) * (size_t)(nx + 1)), *w = malloc(sizeof(float) * (size_t)(nw + 1));
    float *b = malloc(sizeof(float) * (size_t)(c->M + 1)), *z = malloc(sizeof(float) * (size_t)(ny + 1));
    double *ref = malloc(sizeof(double) * (size_t)(ny + 1)), *mag = malloc(sizeof(double) * (size_t)(ny + 1));
    for (int64_t i = 0; i < nx; i++) x[i] = frand(&seed);
    for (int64_t i = 0; i < nw; i++) w[i] = frand(&seed);
    for (int64_t i = 0; i < c->M; i++) b[i] = frand(&seed);
    for (int64_t i = 0; i < ny; i++) z[i] = frand(&seed);
    /* S: X's channels scaled (as the Mul the optimizer fused computes it) */
    int64_t ds[5] = {scale == 1 ? c->N : 1, c->C, 1, 1, 1}, ns = ds[0] * c->C;
    float *sc = malloc(sizeof(float) * (size_t)(ns + 1)), *xr = malloc(sizeof(float) * (size_t)(nx + 1));
    for (int64_t i = 0; i < ns; i++) sc[i] = frand(&seed);
    for (int64_t i = 0; i < nx; i++) {
        const int64_t n = i / (nx / (c->N ? c->N : 1)), ch = i / prod(dx + 2, r) % c->C;
        xr[i] = scale ? x[i] * sc[(scale == 1 ? n * c->C : 0) + ch] : x[i];
    }
    reference(c, xr, w, c->bias ? b : NULL, c->z ? z : NULL, ref, mag);

    mb_model *m = mb_new(17);
    mb_input(m, "x", ONYX_FLOAT32, dx, r + 2);
    if (c->w_input)
        mb_input(m, "w", ONYX_FLOAT32, dw, r + 2);
    else
        mb_init_float(m, "w", dw, r + 2, w);
    if (c->bias) mb_init_float(m, "b", db, 1, b);
    /* a broadcast Z is declared without a shape, as when the optimizer
     * fused a residual whose sizes it could not know */
    if (c->z) mb_input(m, "z", ONYX_FLOAT32, dz, c->z == 2 ? -1 : r + 2);
    mb_output(m, "y", ONYX_FLOAT32, dy, r + 2);
    if (scale) mb_input(m, "s", ONYX_FLOAT32, ds, r + 2);
    char ins[32];
    snprintf(ins, sizeof ins, "x,w,%s%s%s", c->bias ? "b" : "", c->z || scale ? (c->z ? ",z" : ",") : "",
             scale ? ",s" : "");
    mb_node(m, c->act ? "FusedConv" : "Conv", ins, "y");
    if (c->act) {
        mb_domain(m, "onyx", 1);
        mb_attr_string(m, "activation", c->act);
        if (c->n_params) mb_attr_floats(m, "activation_params", c->params, (size_t)c->n_params);
    }
    int64_t pads[6];
    memcpy(pads, c->pads, sizeof pads);
    mb_attr_ints(m, "strides", c->stride, (size_t)r);
    mb_attr_ints(m, "dilations", c->dil, (size_t)r);
    mb_attr_ints(m, "pads", pads, (size_t)(2 * r));
    mb_attr_int(m, "group", c->G);
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);

    onyx_session_options *o = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_threads(o, c->threads));
    /* the node as written, on the kernel path the case names: level all
     * would make a deep convolution a channel-blocked one
     * (unit.blocked_conv tests that) */
    CHECK_OK(onyx_session_options_set_optimization_level(o, ONYX_OPT_BASIC));
    /* Sigmoid and SiLU: the AVX2 and AVX-512 tiles and rows share one exp
     * and give the same bits (the first FMA variant's output, kept) where
     * both took the same path (the channels-in-lanes GEMM adds its sums
     * in other slabs) */
    const int exp_act = c->act && (!strcmp(c->act, "Sigmoid") || !strcmp(c->act, "SiLU"));
    float *fma_out = NULL;
    char fma_path[200] = "";
    for (int v = 0; v < n_isas; v++) {
        /* kernels choose their variant at session creation */
        setenv("ONYX_CPU_ISA", isas[v], 1);
        onyx_session *s = NULL;
        CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &s));
        if (!s) break;
        char what[200] = "";
        onyx_session_node_kernel(s, 0, what, sizeof what);
        int winograd = strncmp(c->name, "winograd", 8) == 0;
        if (winograd != (strstr(what, "winograd") != NULL) ||
            (strstr(what, ", ") && !strstr(what, isas[v])))
            fprintf(stderr, "%s [%s]: kernel is %s\n", c->name, isas[v], what);
        CHECK(winograd == (strstr(what, "winograd") != NULL));
        /* "winograd F(2x2..." and "winograd F(4x4..." cases name their tile */
        if (winograd && strstr(c->name, "F(")) {
            char tile[6] = "";
            memcpy(tile, strstr(c->name, "F("), 5);
            CHECK(strstr(what, tile) != NULL);
        }
        /* "lanes ..." cases take the channels-in-lanes GEMM on AVX-512,
         * and no other variant does */
        if (!strcmp(isas[v], "avx512") && !strncmp(c->name, "lanes", 5) && !strstr(what, "channels-in-lanes")) {
            fprintf(stderr, "%s [%s]: kernel is %s\n", c->name, isas[v], what);
            check_failures++;
        }
        if (strcmp(isas[v], "avx512") != 0) CHECK(strstr(what, "channels-in-lanes") == NULL);
        /* a description that names a variant names this one */
        CHECK(!strstr(what, ", ") || strstr(what, isas[v]) != NULL);
        onyx_tensor *t[4] = {NULL, NULL, NULL, NULL}, *out = NULL;
        const char *names[4] = {"x", NULL, NULL, NULL};
        int k = 1;
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, dx, r + 2, x, sizeof(float) * (size_t)nx, &t[0]));
        if (c->w_input) {
            names[k] = "w";
            CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, dw, r + 2, w, sizeof(float) * (size_t)nw, &t[k++]));
        }
        if (c->z) {
            names[k] = "z";
            CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, dz, r + 2, z, sizeof(float) * (size_t)nz, &t[k++]));
        }
        if (scale) {
            names[k] = "s";
            CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, ds, r + 2, sc, sizeof(float) * (size_t)ns, &t[k++]));
        }
        const char *on[] = {"y"};
        CHECK_OK(onyx_session_run(s, names, (const onyx_tensor *const *)t, (size_t)k, on, &out, 1));
        if (out) {
            const float *y = onyx_tensor_data(out);
            int bad = 0;
            for (int64_t i = 0; i < ny && bad < 5; i++) {
                double tol = 2e-5 + 2e-5 * (fabs(ref[i]) + mag[i]);
                if (!(fabs(y[i] - ref[i]) <= tol)) {
                    fprintf(stderr, "%s [%s]: y[%lld] = %.9g, expected %.9g\n", c->name, isas[v], (long long)i,
                            y[i], ref[i]);
                    bad++;
                }
            }
            CHECK(bad == 0);
            /* the path: the description without its ", isa" */
            char path[200];
            snprintf(path, sizeof path, "%s", what);
            if (strrchr(path, ',')) *strrchr(path, ',') = '\0';
            if (exp_act && strcmp(isas[v], "portable") != 0) {
                if (!fma_out && (fma_out = malloc(sizeof(float) * (size_t)(ny > 0 ? ny : 1)))) {
                    memcpy(fma_out, y, sizeof(float) * (size_t)ny);
                    snprintf(fma_path, sizeof fma_path, "%s", path);
                } else if (fma_out && !strcmp(fma_path, path) &&
                           memcmp(fma_out, y, sizeof(float) * (size_t)ny) != 0) {
                    fprintf(stderr, "%s [%s]: not the bits of the first FMA variant\n", c->name, isas[v]);
                    check_failures++;
                }
            }
        }
        for (int i = 0; i < 4; i++) onyx_tensor_free(t[i]);
        onyx_tensor_free(out);
        onyx_session_free(s);
    }
    unsetenv("ONYX_CPU_ISA");
    free(fma_out);
    onyx_session_options_free(o);
    free(buf);
    free(x);
    free(w);
    free(b);
    free(z);
    free(sc);
    free(xr);
    free(ref);
    free(mag);
}

/* FusedConv's S that is not one factor per image and input channel: a
 * declared shape fails session creation, an undeclared one the run, each
 * with a message that names S. */
static void test_bad_scale(onyx_env *env) {
    int64_t dx[4] = {2, 3, 4, 4}, dw[4] = {5, 3, 1, 1}, dbad[4] = {2, 4, 1, 1}, dy[4] = {2, 5, 4, 4};
    float w[15] = {0}, x[96] = {0}, sv[8] = {0};
    for (int declared = 0; declared < 2; declared++) {
        mb_model *m = mb_new(17);
        mb_input(m, "x", ONYX_FLOAT32, dx, 4);
        mb_input(m, "s", ONYX_FLOAT32, dbad, declared ? 4 : -1);
        mb_init_float(m, "w", dw, 4, w);
        mb_output(m, "y", ONYX_FLOAT32, dy, 4);
        mb_node(m, "FusedConv", "x,w,,,s", "y");
        mb_domain(m, "onyx", 1);
        mb_attr_string(m, "activation", "");
        size_t len;
        uint8_t *buf = mb_serialize(m, &len);
        mb_free(m);
        onyx_session *s = NULL;
        if (declared) {
            CHECK_FAILS(onyx_session_create_from_buffer(env, buf, len, NULL, &s), ONYX_INVALID_MODEL,
                        "FusedConv: S");
        } else {
            CHECK_OK(onyx_session_create_from_buffer(env, buf, len, NULL, &s));
            onyx_tensor *t[2] = {NULL, NULL}, *out = NULL;
            CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, dx, 4, x, sizeof x, &t[0]));
            CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, dbad, 4, sv, sizeof sv, &t[1]));
            const char *in[2] = {"x", "s"}, *on[1] = {"y"};
            if (s)
                CHECK_FAILS(onyx_session_run(s, in, (const onyx_tensor *const *)t, 2, on, &out, 1),
                            ONYX_INVALID_ARGUMENT, "FusedConv: S");
            onyx_tensor_free(t[0]);
            onyx_tensor_free(t[1]);
            onyx_tensor_free(out);
        }
        onyx_session_free(s);
        free(buf);
    }
}

int main(void) {
    const char *isas[3] = {"portable", NULL, NULL};
    int n_isas = 1;
    if (ox_cpu_isa_best() >= OX_ISA_AVX2) isas[n_isas++] = "avx2";
    if (ox_cpu_isa_best() >= OX_ISA_AVX512) isas[n_isas++] = "avx512";
    printf("variants:");
    for (int i = 0; i < n_isas; i++) printf(" %s", isas[i]);
    printf("\n");

    static const conv_case cases[] = {
        /* name, r, N, C, M, G, in, k, stride, dil, pads, bias, z, w_input, threads, act, params */
        {"3x3 pad 1", 2, 1, 5, 7, 1, {9, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, 0, 0, 1, NULL, {0}, 0},
        {"1x1 direct, residual, relu", 2, 2, 13, 33, 1, {10, 7}, {1, 1}, {1, 1}, {1, 1}, {0}, 1, 1, 0, 1,
         "Relu", {0}, 0},
        {"strided dilated grouped", 2, 2, 6, 4, 2, {13, 12}, {3, 3}, {2, 2}, {2, 2}, {0, 1, 2, 1}, 1, 0, 0, 1,
         "HardSwish", {0}, 0},
        {"1x1 strided", 2, 1, 8, 10, 1, {9, 9}, {1, 1}, {2, 2}, {1, 1}, {0}, 0, 0, 0, 1, "Sigmoid", {0}, 0},
        {"K past one slab, wide", 2, 1, 40, 20, 1, {20, 30}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, 1, 0, 1,
         "LeakyRelu", {0.2f}, 1},
        {"two threads", 2, 1, 24, 50, 1, {17, 19}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, 1, 0, 2, "Clip",
         {-0.5f, 0.75f}, 2},
        {"two threads, few positions", 2, 2, 64, 70, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, 1, 0, 0, 2,
         "Relu", {0}, 0},
        /* Sigmoid and SiLU applied by the AVX2 and AVX-512 tiles as they
         * store (the portable tile leaves them to the epilogue pass): from
         * the padded input with a residual, and 1x1 over ragged widths */
        /* from the padded input in bands of rows (about 256 KiB of phase
         * rows each: 9 bands here), the rows the lower taps read copied
         * into both bands they border */
        {"3x3 padded input, stride 2, nine bands", 2, 1, 48, 20, 1, {70, 66}, {3, 3}, {2, 2}, {1, 1},
         {1, 1, 1, 1}, 1, 0, 0, 1, "Relu", {0}, 0},
        {"3x3 padded input, residual, silu in the tile", 2, 1, 16, 24, 1, {19, 21}, {3, 3}, {2, 2},
         {1, 1}, {1, 1, 1, 1}, 1, 1, 0, 1, "SiLU", {0}, 0},
        {"1x1 ragged widths, residual, sigmoid in the tile", 2, 2, 40, 13, 1, {7, 9}, {1, 1}, {1, 1},
         {1, 1}, {0}, 1, 1, 0, 2, "Sigmoid", {0}, 0},
        /* 3x3 on 7x7 with more output channels than the padded-input
         * path takes: im2col of a small chunk (the tabled gather), 49
         * columns over two panels of 32 or four of 16 */
        {"3x3 on 7x7, im2col of a small chunk", 2, 2, 20, 70, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1},
         {1, 1, 1, 1}, 1, 1, 0, 1, "Relu", {0}, 0},
        /* 1x1 on 7x7 (49 columns: a whole panel, then 17 at once or as
         * 16 and 1 by the tile widths a variant has), two K slabs (the
         * second adds to the first), a residual and HardSwish in the tile */
        /* one position per image: the constant W packed as a fully
         * connected layer's weights (all images in one product); W an
         * input: dot products over its rows */
        {"1x1 on a 1x1 plane, two images, residual, hardsigmoid", 2, 2, 300, 37, 1, {1, 1}, {1, 1},
         {1, 1}, {1, 1}, {0}, 1, 1, 0, 2, "HardSigmoid", {0.2f, 0.5f}, 2},
        {"1x1 on a 1x1 plane, weights as input, no bias", 2, 3, 16, 5, 1, {1, 1}, {1, 1}, {1, 1},
         {1, 1}, {0}, 0, 0, 1, 1, NULL, {0}, 0},
        {"1x1 on 7x7, two slabs, residual, hardswish", 2, 2, 300, 13, 1, {7, 7}, {1, 1}, {1, 1},
         {1, 1}, {0}, 1, 1, 0, 1, "HardSwish", {0}, 0},
        {"weights as input", 2, 1, 7, 9, 1, {8, 6}, {2, 3}, {1, 2}, {1, 1}, {1, 0, 0, 1}, 1, 0, 1, 1,
         "GeluTanh", {0}, 0},
        /* Winograd: 3x3 stride 1 from 16 channels in and out (below 32
         * of either, on a plane of at least 32x32 positions) and enough
         * work, F(4x4, 3x3) while 36 C M floats stay within 3 MiB, else
         * F(2x2, 3x3); odd output sizes (ragged last tile rows and
         * columns: every remainder of 4), asymmetric pads, more channels
         * than one slab, two images; the case names say it, and the
         * kernel must be it */
        {"winograd F(4x4: odd sizes, residual, two threads", 2, 1, 64, 53, 1, {35, 29}, {3, 3}, {1, 1},
         {1, 1}, {1, 1, 1, 1}, 1, 1, 0, 2, "SiLU", {0}, 0},
        {"winograd F(4x4: two slabs, asymmetric pads, two images", 2, 2, 300, 48, 1, {17, 15}, {3, 3},
         {1, 1}, {1, 1}, {1, 0, 0, 1}, 1, 0, 0, 1, "HardSwish", {0}, 0},
        {"winograd F(4x4: clamp, no padding", 2, 1, 48, 96, 1, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {0}, 1, 0,
         0, 1, "Clip", {-0.5f, 0.5f}, 2},
        {"winograd F(4x4: plain conv, no bias", 2, 1, 49, 50, 1, {40, 37}, {3, 3}, {1, 1}, {1, 1},
         {2, 1, 1, 2}, 0, 0, 0, 2, NULL, {0}, 0},
        {"winograd F(4x4: output 32 wide, input rows past a phase block", 2, 1, 48, 48, 1, {34, 70},
         {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, 0, 0, 1, NULL, {0}, 0},
        /* more bands than threads: each thread takes whole bands, the
         * residual and activation applied band by band */
        {"winograd F(4x4: bands per thread, residual, two images", 2, 2, 48, 50, 1, {64, 40}, {3, 3},
         {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, 1, 0, 2, "Relu", {0}, 0},
        /* small planes take the path too (from 16 output positions) */
        {"winograd F(4x4: an 8x8 plane, residual", 2, 1, 64, 64, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1},
         {1, 1, 1, 1}, 1, 1, 0, 2, "Relu", {0}, 0},
        {"winograd F(4x4: a 5x4 plane, two images", 2, 2, 50, 70, 1, {5, 4}, {3, 3}, {1, 1}, {1, 1},
         {1, 1, 1, 1}, 1, 0, 0, 1, "SiLU", {0}, 0},
        /* narrow: 16 channels from 1024 positions, fewer take the GEMM
         * from the padded input, and so do 12 channels on any plane */
        {"winograd F(4x4: 16 channels on a 32x32 plane, residual", 2, 1, 16, 24, 1, {32, 32}, {3, 3},
         {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, 1, 0, 2, "Relu", {0}, 0},
        {"padded input: 16 channels on a 31x32 plane", 2, 1, 16, 16, 1, {31, 32}, {3, 3}, {1, 1}, {1, 1},
         {1, 1, 1, 1}, 1, 0, 0, 1, "SiLU", {0}, 0},
        {"padded input: 12 input channels on a 64x64 plane", 2, 1, 12, 40, 1, {64, 64}, {3, 3}, {1, 1},
         {1, 1}, {1, 1, 1, 1}, 1, 0, 0, 1, NULL, {0}, 0},
        /* a padded row past the transform's stack buffer (2048 floats) */
        {"winograd F(4x4: a row 2100 wide", 2, 1, 48, 48, 1, {3, 2100}, {3, 3}, {1, 1}, {1, 1},
         {1, 1, 1, 1}, 1, 0, 0, 1, NULL, {0}, 0},
        /* deeper: 36 C M floats past 3 MiB */
        {"winograd F(2x2: deep layer, residual, two threads", 2, 1, 300, 250, 1, {9, 7}, {3, 3},
         {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, 1, 0, 2, "Relu", {0}, 0},
        {"winograd F(2x2: odd sizes, two slabs, two images", 2, 2, 300, 260, 1, {9, 15}, {3, 3},
         {1, 1}, {1, 1}, {0, 1, 1, 0}, 1, 0, 0, 1, "SiLU", {0}, 0},
        /* stride 1 with few output channels: from the padded input (AVX2) */
        {"padded input: grouped, dilated, asymmetric pads", 2, 2, 6, 8, 2, {11, 37}, {3, 5}, {1, 1},
         {2, 1}, {2, 0, 1, 3}, 1, 1, 0, 1, "SiLU", {0}, 0},
        {"padded input: weights as input, two threads", 2, 1, 5, 13, 1, {6, 21}, {2, 2}, {1, 1}, {1, 1},
         {0, 1, 1, 0}, 0, 0, 1, 2, NULL, {0}, 0},
        /* many output channels: im2col */
        {"stride 1, many channels", 2, 1, 8, 70, 1, {9, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, 0,
         0, 2, NULL, {0}, 0},
        {"stride 2, many channels", 2, 1, 5, 67, 1, {13, 11}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 1, 1,
         0, 1, "Relu", {0}, 0},
        /* padded input in stride phases: stride 2 x 3, 1x1 stride 2, a
         * first layer (three channels, many positions) */
        {"padded input: strides 2 x 3, dilated", 2, 1, 4, 9, 1, {17, 40}, {3, 3}, {2, 3}, {1, 2},
         {1, 2, 0, 1}, 1, 1, 0, 2, "Clip", {-1.0f, 1.0f}, 2},
        {"padded input: 1x1 stride 2", 2, 2, 6, 10, 1, {9, 14}, {1, 1}, {2, 2}, {1, 1}, {0, 0, 0, 0}, 1, 0,
         0, 1, "HardSwish", {0}, 0},
        {"padded input: first layer", 2, 1, 3, 16, 1, {64, 70}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 1,
         0, 0, 2, "HardSwish", {0}, 0},
        /* planes at most 16 wide: two output rows per AVX-512 tile, an
         * odd last row alone; the residual and an activation applied
         * after the tile over both rows */
        {"padded input: two rows per tile, stride 2, residual, two threads", 2, 2, 10, 14, 1, {25, 29}, {3, 3},
         {2, 2}, {1, 1}, {1, 1, 1, 1}, 1, 1, 0, 2, "LeakyRelu", {0.1f}, 1},
        {"padded input: two rows per tile, 8 wide", 2, 1, 7, 9, 1, {9, 8}, {3, 3}, {1, 1}, {1, 1},
         {1, 1, 1, 1}, 1, 0, 0, 1, "SiLU", {0}, 0},
        {"depthwise 3x3", 2, 2, 8, 8, 8, {13, 17}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, 0, 0, 1, "Clip",
         {0.0f, 6.0f}, 2},
        {"depthwise 5x5 stride 2, multiplier 2", 2, 1, 6, 12, 6, {15, 16}, {5, 5}, {2, 2}, {1, 1},
         {2, 2, 2, 2}, 1, 1, 0, 1, "HardSigmoid", {0.3f, 0.4f}, 2},
        {"depthwise dilated, asymmetric", 2, 1, 5, 5, 5, {11, 23}, {3, 3}, {2, 1}, {2, 3}, {0, 3, 2, 1}, 0,
         0, 0, 2, "SiLU", {0}, 0},
        {"depthwise stride 3, wide", 2, 1, 3, 3, 3, {7, 70}, {3, 4}, {1, 3}, {1, 1}, {1, 2, 1, 0}, 1, 0, 0, 1,
         "Tanh", {0}, 0},
        {"depthwise 1-D", 1, 2, 4, 4, 4, {37}, {7}, {3}, {1}, {3, 2}, 1, 0, 0, 1, "Sigmoid", {0}, 0},
        /* small planes, eight channels per vector: two whole blocks and
         * a part, stride 2, two images, residual, two threads */
        {"depthwise blocked: 19 channels, stride 2", 2, 2, 19, 19, 19, {15, 15}, {3, 3}, {2, 2}, {1, 1},
         {1, 1, 1, 1}, 1, 1, 0, 2, "HardSwish", {0}, 0},
        /* bias and HardSwish applied in registers; rows turned eight
         * columns at a time with a ragged end, a ragged channel block */
        {"depthwise blocked: HardSwish in registers, 13 channels", 2, 1, 13, 13, 13, {23, 29},
         {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, 0, 0, 2, "HardSwish", {0}, 0},
        {"depthwise blocked: a large plane, 5x5 stride 2 x 1", 2, 1, 9, 9, 9, {70, 75}, {5, 5},
         {2, 1}, {1, 1}, {2, 2, 2, 2}, 0, 0, 0, 1, "Relu", {0}, 0},
        /* leading pads past the window's reach (PW < pw, and rows of
         * padding below): only padding is read at some outputs */
        {"depthwise blocked: pads past the window", 2, 1, 9, 9, 9, {2, 1}, {1, 1}, {4, 4}, {1, 1},
         {3, 3, 0, 0}, 1, 0, 0, 1, "Relu", {0}, 0},
        /* kernel rows of constant width and stride (3 or 5 taps, stride 1
         * or 2: each input position loaded once per kernel row), a last
         * step of four positions, a ragged channel block */
        {"depthwise blocked: 5x5 stride 2, a four-position step", 2, 2, 11, 11, 11, {15, 23}, {5, 5},
         {2, 2}, {1, 1}, {2, 2, 2, 2}, 1, 1, 0, 1, "Relu", {0}, 0},
        {"depthwise blocked: 5x5 stride 1, a four-position step", 2, 1, 17, 17, 17, {6, 12}, {5, 5},
         {1, 1}, {1, 1}, {2, 2, 2, 2}, 1, 0, 0, 2, "HardSwish", {0}, 0},
        {"depthwise blocked: 3x3 stride 2, a four-position step", 2, 1, 8, 8, 8, {9, 20}, {3, 3},
         {2, 2}, {1, 1}, {1, 1, 1, 1}, 0, 0, 0, 1, NULL, {0}, 0},
        {"depthwise blocked: pads on every side, 3x3 stride 3", 2, 2, 10, 10, 10, {5, 4}, {3, 3}, {3, 3},
         {1, 1}, {4, 2, 3, 5}, 1, 1, 0, 1, "HardSwish", {0}, 0},
        /* small planes with the output channels in the vector lanes
         * (AVX-512): tiles of 7 positions x 48 channels, a ragged last
         * block of channels, K in slabs of 128 */
        {"lanes: 1x1 on 7x7, ragged channel block, residual", 2, 1, 260, 60, 1, {7, 7}, {1, 1}, {1, 1},
         {1, 1}, {0}, 1, 1, 0, 1, "Relu", {0}, 0},
        {"lanes: 3x3 stride 2 to 7x7, two images, silu, two threads", 2, 2, 30, 110, 1, {13, 13}, {3, 3},
         {2, 2}, {1, 1}, {1, 1, 1, 1}, 1, 0, 0, 2, "SiLU", {0}, 0},
        {"lanes: 1x1 on 5x5, K in three slabs, no bias", 2, 1, 300, 64, 1, {5, 5}, {1, 1}, {1, 1}, {1, 1},
         {0}, 0, 0, 0, 1, NULL, {0}, 0},
        /* images in passes of at most 16 MiB of scratch: 38880 products
         * per output make 1.9 M floats of columns per image, so three
         * images go in a pass of two and a pass of one */
        {"lanes: three images in two passes, residual, two threads", 2, 3, 4320, 48, 1, {13, 13}, {3, 3},
         {2, 2}, {1, 1}, {1, 1, 1, 1}, 1, 1, 0, 2, "Relu", {0}, 0},
        {"lanes: 3x3 plane, 33 channels", 2, 1, 32, 33, 1, {3, 3}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1,
         1, 0, 1, "HardSwish", {0}, 0},
        /* narrow planes: one vector per row, several rows per step */
        {"depthwise 5x5 on 7x7", 2, 2, 6, 6, 6, {7, 7}, {5, 5}, {1, 1}, {1, 1}, {2, 2, 2, 2}, 1, 1, 0, 1,
         "HardSwish", {0}, 0},
        /* a wide row: four vectors along it, the last step past the end */
        {"depthwise 3x3 wide rows", 2, 1, 4, 4, 4, {9, 115}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, 0, 0,
         2, NULL, {0}, 0},
        {"1-D", 1, 1, 6, 5, 1, {29}, {4}, {2}, {2}, {1, 3}, 1, 1, 0, 1, "LeakyRelu", {0.1f}, 1},
        {"3-D", 3, 1, 3, 4, 1, {4, 5, 6}, {2, 3, 3}, {1, 2, 1}, {1, 1, 2}, {0, 1, 1, 1, 0, 1}, 1, 0, 0, 1,
         "Gelu", {0}, 0},
        {"empty batch", 2, 0, 4, 6, 1, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, 1, 0, 1, "Relu", {0},
         0},
        {"residual broadcast per channel", 2, 2, 5, 6, 1, {7, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, 2,
         0, 1, "HardSwish", {0}, 0},
        {"fused, no activation", 2, 1, 3, 6, 3, {6, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 0, 1, 0, 1, "",
         {0}, 0},
        /* 2-D im2col: pads wider than the kernel's reach on every side
         * (whole output rows and columns in the padding) */
        {"2-D pads past the kernel", 2, 1, 3, 5, 1, {5, 4}, {3, 2}, {1, 1}, {1, 1}, {4, 5, 6, 4}, 1, 0, 0,
         1, NULL, {0}, 0},
        {"2-D stride 3, dilation 2", 2, 1, 4, 6, 2, {17, 23}, {3, 3}, {3, 3}, {2, 2}, {2, 1, 1, 3}, 1, 0,
         0, 1, NULL, {0}, 0},
        {"2-D stride 2, rows across blocks and panels", 2, 1, 5, 9, 1, {41, 45}, {3, 3}, {2, 2}, {1, 1},
         {1, 0, 1, 1}, 1, 0, 0, 1, NULL, {0}, 0},
        {"2-D rows across blocks, two threads", 2, 1, 4, 6, 1, {20, 37}, {3, 3}, {1, 1}, {1, 1},
         {1, 1, 1, 1}, 0, 0, 0, 2, NULL, {0}, 0},
        {"2-D stride only across, dilation only down", 2, 1, 3, 4, 1, {19, 29}, {2, 5}, {1, 2}, {2, 1},
         {0, 7, 3, 6}, 1, 0, 0, 1, NULL, {0}, 0},
        {"2-D one column wide", 2, 2, 3, 4, 1, {9, 1}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, 0, 0, 1,
         NULL, {0}, 0},
        {"2-D one row high, stride 2", 2, 1, 3, 4, 1, {1, 33}, {1, 3}, {2, 2}, {1, 1}, {0, 1, 0, 2}, 1, 0,
         0, 1, NULL, {0}, 0},
        /* stride 1, output as wide as the input: whole-plane stretches */
        {"2-D same width, tall pads", 2, 1, 4, 3, 1, {3, 8}, {3, 3}, {1, 1}, {1, 1}, {5, 1, 6, 1}, 1, 0, 0, 1,
         NULL, {0}, 0},
        /* 64 channels x 3x3 = 576 rows: K slabs start inside a channel */
        {"2-D K split in slabs, stride 2", 2, 1, 64, 24, 1, {15, 18}, {3, 3}, {2, 2}, {1, 1},
         {1, 1, 1, 1}, 1, 0, 0, 1, NULL, {0}, 0},
        {"2-D K split in slabs, stride 1", 2, 1, 64, 20, 1, {12, 23}, {3, 3}, {1, 1}, {1, 1},
         {0, 1, 2, 1}, 1, 0, 0, 1, NULL, {0}, 0},
        /* wider than the packer's table of kernel columns */
        {"2-D kernel wider than 16, stride 2", 2, 1, 3, 5, 1, {4, 41}, {2, 19}, {1, 2}, {1, 1},
         {0, 9, 1, 12}, 1, 0, 0, 1, NULL, {0}, 0},
    };
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    for (size_t i = 0; env && i < sizeof cases / sizeof cases[0]; i++) run_case(env, &cases[i], 0, isas, n_isas);
    typedef struct scale_case {
        conv_case c;
        int scale;
    } scale_case;
    static const scale_case scaled[] = {
        /* an input scale S (a squeeze-and-excitation gate the optimizer
         * fused): applied by the 1x1 GEMM as it packs X, per image or one
         * for all, and by the channels-in-lanes GEMM as it makes its columns;
         * the other paths read a scaled copy of X */
        {{"input scale: 1x1 from X, per image, residual", 2, 2, 20, 13, 1, {9, 11}, {1, 1}, {1, 1}, {1, 1},
         {0}, 1, 1, 0, 1, "Relu", {0}, 0}, 1},
        {{"input scale: 1x1, one for all images, two threads", 2, 3, 33, 40, 1, {14, 14}, {1, 1}, {1, 1},
         {1, 1}, {0}, 1, 0, 0, 2, "HardSwish", {0}, 0}, 2},
        {{"input scale: 3x3, a scaled copy", 2, 2, 5, 7, 1, {8, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1,
         0, 0, 1, "", {0}, 0}, 1},
        {{"input scale: depthwise, a scaled copy", 2, 2, 8, 8, 8, {10, 10}, {3, 3}, {1, 1}, {1, 1},
         {1, 1, 1, 1}, 1, 0, 0, 1, "Relu", {0}, 0}, 1},
        {{"lanes: input scale, 1x1 on 7x7, scaled as the columns are made, two threads", 2, 2, 260, 60, 1,
          {7, 7}, {1, 1}, {1, 1}, {1, 1}, {0}, 1, 0, 0, 2, "Relu", {0}, 0},
         1},
    };
    for (size_t i = 0; env && i < sizeof scaled / sizeof scaled[0]; i++)
        run_case(env, &scaled[i].c, scaled[i].scale, isas, n_isas);
    if (env) test_bad_scale(env);
    onyx_env_free(env);
    CHECK_DONE();
}
