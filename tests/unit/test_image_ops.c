/* Corners of the image, convolution and signal operators that the ONNX
 * node suite does not reach: MaxRoiPool (no suite test at all), Resize's
 * keep_aspect_ratio_policy with axes under static inference, GridSample
 * and Col2Im in 1-D, DFT-20's inverse one-sided transform with an
 * explicit length, and the failures of malformed geometry. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model_builder.h"

#define F32 ONYX_FLOAT32
#define I64 ONYX_INT64

#define I64S(...) ((const int64_t[]){__VA_ARGS__})
#define F32S(...) ((const float[]){__VA_ARGS__})

static onyx_env *env;

typedef struct arg {
    onyx_dtype dt;
    int rank;
    int64_t dims[5];
    const void *data;
} arg;

#define IN(dt, data, rank, ...) ((arg){(dt), (rank), {__VA_ARGS__}, (data)})
#define ARGS(...) ((const arg[]){__VA_ARGS__}), (int)(sizeof((const arg[]){__VA_ARGS__}) / sizeof(arg))

/* With declare_shapes the graph inputs carry their shapes, so load-time
 * inference sees them; otherwise every check happens at run time. */
static int declare_shapes;

/* Runs m (node reading i0, i1, ..., writing o0) once and frees m. */
static onyx_status *run_model(mb_model *m, const arg *in, int n_in, onyx_tensor **out) {
    static const char *const in_names[] = {"i0", "i1", "i2", "i3", "i4"};
    static const char *const out_names[] = {"o0"};
    for (int i = 0; i < n_in; i++)
        mb_input(m, in_names[i], in[i].dt, in[i].dims, declare_shapes ? in[i].rank : -1);
    mb_output(m, "o0", F32, NULL, -1);
    *out = NULL;
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *s = NULL;
    onyx_status *st = onyx_session_create_from_buffer(env, buf, len, NULL, &s);
    free(buf);
    if (st) return st;
    onyx_tensor *t[5] = {0};
    for (int i = 0; i < n_in && !st; i++) {
        st = onyx_tensor_create(in[i].dt, in[i].dims, in[i].rank, &t[i]);
        if (!st && onyx_tensor_nbytes(t[i])) memcpy(onyx_tensor_data(t[i]), in[i].data, onyx_tensor_nbytes(t[i]));
    }
    if (!st) st = onyx_session_run(s, in_names, (const onyx_tensor *const *)t, (size_t)n_in, out_names, out, 1);
    for (int i = 0; i < n_in; i++) onyx_tensor_free(t[i]);
    onyx_session_free(s);
    return st;
}

/* Output o has these dims and float32 values (within tol). */
static int is_f32(onyx_tensor *o, int rank, const int64_t *dims, const float *v, double tol) {
    if (!o || onyx_tensor_dtype(o) != F32 || onyx_tensor_rank(o) != rank) {
        fprintf(stderr, "  wrong output type or rank\n");
        return 0;
    }
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (onyx_tensor_dims(o)[i] != dims[i]) {
            fprintf(stderr, "  dim %d is %lld, expected %lld\n", i, (long long)onyx_tensor_dims(o)[i],
                    (long long)dims[i]);
            return 0;
        }
        n *= dims[i];
    }
    const float *d = onyx_tensor_data(o);
    for (int64_t i = 0; v && i < n; i++)
        if (!(fabs((double)d[i] - (double)v[i]) <= tol)) {
            fprintf(stderr, "  element %lld is %.9g, expected %.9g\n", (long long)i, d[i], v[i]);
            return 0;
        }
    return 1;
}
#define OUT_IS(o, v, tol, rank, ...) is_f32((o), (rank), I64S(__VA_ARGS__), (v), (tol))

/* 0..15 as a 1x1x4x4 map. */
static const float MAP[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

/* ---- MaxRoiPool ---- */

static mb_model *maxroipool(float scale) {
    mb_model *m = mb_new(22);
    mb_node(m, "MaxRoiPool", "i0,i1", "o0");
    mb_attr_ints(m, "pooled_shape", I64S(2, 2), 2);
    mb_attr_float(m, "spatial_scale", scale);
    return m;
}

static void test_maxroipool(void) {
    onyx_tensor *o;
    /* the whole map in 2x2 bins; a roi hanging off the top-left corner,
     * whose bins outside the map are empty (0); a one-pixel roi (corners
     * round half away from zero: 2.5 -> 3, 3.4 -> 3) */
    const float rois[15] = {0, 0, 0, 3, 3, 0, -6, -6, 0, 0, 0, 2.5f, 2.5f, 3.4f, 3.4f};
    CHECK_OK(run_model(maxroipool(1.0f), ARGS(IN(F32, MAP, 4, 1, 1, 4, 4), IN(F32, rois, 2, 3, 5)), &o));
    CHECK(OUT_IS(o, F32S(5, 7, 13, 15, 0, 0, 0, 0, 15, 15, 15, 15), 0, 4, 3, 1, 2, 2));
    onyx_tensor_free(o);
    /* at half scale 2.6 lands on pixel 1.3 -> 1 */
    const float half[5] = {0, 2.6f, 2.6f, 2.6f, 2.6f};
    CHECK_OK(run_model(maxroipool(0.5f), ARGS(IN(F32, MAP, 4, 1, 1, 4, 4), IN(F32, half, 2, 1, 5)), &o));
    CHECK(OUT_IS(o, F32S(5, 5, 5, 5), 0, 4, 1, 1, 2, 2));
    onyx_tensor_free(o);
    const float bad_batch[5] = {1, 0, 0, 1, 1};
    CHECK_FAILS(run_model(maxroipool(1.0f), ARGS(IN(F32, MAP, 4, 1, 1, 4, 4), IN(F32, bad_batch, 2, 1, 5)), &o),
                ONYX_INVALID_ARGUMENT, "roi 0 has batch index 1, outside [0, 1)");
    onyx_tensor_free(o);
    CHECK_FAILS(run_model(maxroipool(1.0f), ARGS(IN(F32, MAP, 4, 1, 1, 4, 4), IN(F32, MAP, 2, 4, 4)), &o),
                ONYX_INVALID_ARGUMENT, "rois");
    onyx_tensor_free(o);
}

/* ---- Resize-19: axes and keep_aspect_ratio_policy ---- */

static mb_model *resize_sizes(const char *policy) {
    mb_model *m = mb_new(19);
    mb_init_int64(m, "sizes", I64S(2), 1, I64S(3, 8));
    mb_node(m, "Resize", "i0,,,sizes", "o0");
    mb_attr_ints(m, "axes", I64S(-1, 2), 2);
    mb_attr_string(m, "keep_aspect_ratio_policy", policy);
    return m;
}

static void test_resize_policy(void) {
    onyx_tensor *o;
    /* sizes (3, 8) for axes (3, 2) of a 4x4 map: not_larger scales both
     * by 3/4 (3x3), not_smaller by 2 (8x8); at load and at run time */
    for (declare_shapes = 0; declare_shapes < 2; declare_shapes++) {
        CHECK_OK(run_model(resize_sizes("not_larger"), ARGS(IN(F32, MAP, 4, 1, 1, 4, 4)), &o));
        CHECK(OUT_IS(o, NULL, 0, 4, 1, 1, 3, 3));
        onyx_tensor_free(o);
        CHECK_OK(run_model(resize_sizes("not_smaller"), ARGS(IN(F32, MAP, 4, 1, 1, 4, 4)), &o));
        CHECK(OUT_IS(o, NULL, 0, 4, 1, 1, 8, 8));
        onyx_tensor_free(o);
        CHECK_OK(run_model(resize_sizes("stretch"), ARGS(IN(F32, MAP, 4, 1, 1, 4, 4)), &o));
        CHECK(OUT_IS(o, NULL, 0, 4, 1, 1, 8, 3));
        onyx_tensor_free(o);
    }
    declare_shapes = 0;
    CHECK_FAILS(run_model(resize_sizes("not_larger"), ARGS(IN(F32, NULL, 4, 1, 1, 0, 4)), &o),
                ONYX_INVALID_ARGUMENT, "cannot resize empty axis 2 to size 8");
    onyx_tensor_free(o);
}

/* ---- Resize nearest: the gather's fast paths ---- */

static mb_model *resize_nearest(int64_t h, int64_t w) {
    mb_model *m = mb_new(19);
    mb_init_int64(m, "sizes", I64S(2), 1, I64S(h, w));
    mb_node(m, "Resize", "i0,,,sizes", "o0");
    mb_attr_ints(m, "axes", I64S(2, 3), 2);
    mb_attr_string(m, "coordinate_transformation_mode", "asymmetric");
    mb_attr_string(m, "nearest_mode", "floor");
    return m;
}

/* A 2x3x5 map to h x w: each output the input at (floor(y in / out),
 * floor(x in / out)); 2x on both axes takes the doubling path and
 * copies every second row, 7x11 the plain gather with repeated rows,
 * 3x10 doubling columns without repeating rows. */
static void test_resize_nearest(void) {
    float x[30], want[2 * 7 * 11];
    for (int i = 0; i < 30; i++) x[i] = (float)(i * 7 % 30) - 3.5f;
    static const int64_t sizes[][2] = {{6, 10}, {7, 11}, {3, 10}};
    for (int t = 0; t < 3; t++) {
        const int64_t h = sizes[t][0], w = sizes[t][1];
        for (int64_t c = 0; c < 2; c++)
            for (int64_t oy = 0; oy < h; oy++)
                for (int64_t ox = 0; ox < w; ox++)
                    want[(c * h + oy) * w + ox] = x[(c * 3 + oy * 3 / h) * 5 + ox * 5 / w];
        onyx_tensor *o;
        CHECK_OK(run_model(resize_nearest(h, w), ARGS(IN(F32, x, 4, 1, 2, 3, 5)), &o));
        CHECK(OUT_IS(o, want, 0, 4, 1, 2, h, w));
        onyx_tensor_free(o);
    }
}

/* ---- Resize to the input's own size: a copy ---- */

/* Every mode and transformation but tf_crop_and_resize samples an input
 * point for each output when the sizes match (linear and cubic weigh it
 * 1 and every neighbour 0, so a NaN or infinity stays where it is); the
 * output is the input, bit for bit. */
static void test_resize_same_size(void) {
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    static const char *const ctms[] = {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel"};
    float x[2 * 3 * 5];
    for (int i = 0; i < 30; i++) x[i] = (float)(i * 11 % 30) * 0.37f - 4.0f;
    x[7] = NAN;
    x[13] = INFINITY;
    for (int mo = 0; mo < 3; mo++)
        for (int ct = 0; ct < 4; ct++) {
            mb_model *m = mb_new(19);
            mb_init_int64(m, "sizes", I64S(4), 1, I64S(1, 2, 3, 5));
            mb_node(m, "Resize", "i0,,,sizes", "o0");
            mb_attr_string(m, "mode", modes[mo]);
            mb_attr_string(m, "coordinate_transformation_mode", ctms[ct]);
            onyx_tensor *o;
            CHECK_OK(run_model(m, ARGS(IN(F32, x, 4, 1, 2, 3, 5)), &o));
            CHECK(o && onyx_tensor_numel(o) == 30 && memcmp(onyx_tensor_data(o), x, sizeof x) == 0);
            onyx_tensor_free(o);
        }
}

/* ---- GridSample-20 in 1-D ---- */

static mb_model *gridsample(const char *mode, const char *pad) {
    mb_model *m = mb_new(22);
    mb_node(m, "GridSample", "i0,i1", "o0");
    mb_attr_string(m, "mode", mode);
    mb_attr_string(m, "padding_mode", pad);
    mb_attr_int(m, "align_corners", 1);
    return m;
}

static void test_gridsample_1d(void) {
    onyx_tensor *o;
    /* x = 0 1 2 3, samples at -1, 0.5, 1.5, -2: pixel coordinates 0,
     * 2.25, 3.75 and -1.5 with align_corners */
    const float grid[4] = {-1.0f, 0.5f, 1.5f, -2.0f};
    CHECK_OK(run_model(gridsample("linear", "zeros"), ARGS(IN(F32, MAP, 3, 1, 1, 4), IN(F32, grid, 3, 1, 4, 1)), &o));
    CHECK(OUT_IS(o, F32S(0, 2.25f, 0.75f, 0), 1e-6, 3, 1, 1, 4));
    onyx_tensor_free(o);
    CHECK_OK(run_model(gridsample("linear", "border"), ARGS(IN(F32, MAP, 3, 1, 1, 4), IN(F32, grid, 3, 1, 4, 1)), &o));
    CHECK(OUT_IS(o, F32S(0, 2.25f, 3, 0), 1e-6, 3, 1, 1, 4));
    onyx_tensor_free(o);
    /* reflection about the end samples: 3.75 -> 2.25 -> 2, -1.5 -> 1.5,
     * which rounds half to even -> 2 */
    CHECK_OK(run_model(gridsample("nearest", "reflection"), ARGS(IN(F32, MAP, 3, 1, 1, 4), IN(F32, grid, 3, 1, 4, 1)), &o));
    CHECK(OUT_IS(o, F32S(0, 2, 2, 2), 0, 3, 1, 1, 4));
    onyx_tensor_free(o);
    CHECK_FAILS(run_model(gridsample("linear", "zeros"), ARGS(IN(F32, MAP, 3, 1, 1, 4), IN(F32, grid, 3, 1, 2, 2)), &o),
                ONYX_INVALID_ARGUMENT, "grid's last dimension must be 1");
    onyx_tensor_free(o);
}

/* ---- GridSample 2-D bilinear on float32 ----
 * Float32 bilinear sampling with zeros padding has a path of its own. (1)
 * Where every tap lies inside the plane, padding does not matter, so it
 * must give the general path's bits, which border padding takes. (2) Over
 * grids with values outside, on the edges, NaN and +-inf, it must match the
 * float64 sampling of the same values within 1e-5 (0 where a coordinate
 * is not finite): the float coordinate ((c + 1) * size - 1) / 2 takes three
 * roundings of at most 1e-6 each at these sizes (|(c + 1) * size| < 24),
 * so it is off by up to 1.5e-6 after the halving, and neighbouring values
 * differ by up to 4: 6e-6, plus the weights' rounding. Both alignments,
 * odd plane sizes. */
static void gridsample_run(const char *pad, int align, const int64_t *xd, const void *x, const int64_t *gd,
                           const void *grid, int f64, void *y, size_t ybytes) {
    mb_model *m = mb_new(16);
    int t = f64 ? ONYX_FLOAT64 : ONYX_FLOAT32;
    mb_input(m, "x", t, xd, 4);
    mb_input(m, "g", t, gd, 4);
    mb_output(m, "y", t, NULL, -1);
    mb_node(m, "GridSample", "x,g", "y");
    mb_attr_string(m, "mode", "bilinear");
    mb_attr_string(m, "padding_mode", pad);
    mb_attr_int(m, "align_corners", align);
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    size_t es = f64 ? 8 : 4;
    onyx_session *s = NULL;
    onyx_tensor *in[2] = {NULL, NULL}, *out = NULL;
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, NULL, &s));
    CHECK_OK(onyx_tensor_wrap(t, xd, 4, (void *)x, es * (size_t)(xd[0] * xd[1] * xd[2] * xd[3]), &in[0]));
    CHECK_OK(onyx_tensor_wrap(t, gd, 4, (void *)grid, es * (size_t)(gd[0] * gd[1] * gd[2] * 2), &in[1]));
    int64_t yd[4] = {xd[0], xd[1], gd[1], gd[2]};
    CHECK_OK(onyx_tensor_wrap(t, yd, 4, y, ybytes, &out));
    const char *names[2] = {"x", "g"}, *on = "y";
    if (s) CHECK_OK(onyx_session_run(s, names, (const onyx_tensor *const *)in, 2, &on, &out, 1));
    onyx_tensor_free(in[0]);
    onyx_tensor_free(in[1]);
    onyx_tensor_free(out);
    onyx_session_free(s);
    free(buf);
}

static void test_gridsample_bilinear_2d(void) {
    static const int64_t sizes[][2] = {{6, 7}, {9, 6}, {1, 5}, {5, 1}};
    uint32_t rng = 99;
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
        for (int align = 0; align < 2; align++)
            for (int inside = 0; inside < 2; inside++) {
                int64_t H = sizes[z][0], W = sizes[z][1];
                if (inside && (H < 6 || W < 6)) continue;
                enum { C = 3, P = 61 };
                int64_t xd[4] = {2, C, H, W}, gd[4] = {2, P, 1, 2};
                int64_t nx = 2 * C * H * W;
                float *x = malloc(sizeof(float) * (size_t)nx), g[2 * P * 2], y[2][2 * C * P];
                double *xd64 = malloc(sizeof(double) * (size_t)nx), g64[2 * P * 2], y64[2 * C * P];
                for (int64_t i = 0; i < nx; i++) {
                    rng = rng * 1664525u + 1013904223u;
                    x[i] = (float)(rng >> 8) / 16777216.0f * 4.0f - 2.0f;
                    xd64[i] = x[i];
                }
                static const float special[] = {NAN, INFINITY, -INFINITY, -1.0f, 1.0f, 3.5f, -7.0f, 0.0f};
                for (int i = 0; i < 2 * P * 2; i++) {
                    rng = rng * 1664525u + 1013904223u;
                    float u = (float)(rng >> 8) / 16777216.0f * 2.0f - 1.0f;
                    g[i] = inside ? 0.8f * u : (i % 7 == 3 ? special[(i / 7) % 8] : 1.3f * u);
                    g64[i] = g[i];
                }
                gridsample_run("zeros", align, xd, x, gd, g, 0, y[0], sizeof y[0]);
                if (inside) {
                    gridsample_run("border", align, xd, x, gd, g, 0, y[1], sizeof y[1]);
                    CHECK(memcmp(y[0], y[1], sizeof y[0]) == 0);
                } else {
                    gridsample_run("zeros", align, xd, xd64, gd, g64, 1, y64, sizeof y64);
                    for (int i = 0; i < 2 * C * P; i++) CHECK_NEAR(y[0][i], y64[i], 1e-5 + 1e-5 * fabs(y64[i]));
                }
                free(x);
                free(xd64);
            }
}

/* ---- Col2Im in 1-D ---- */

static void test_col2im_1d(void) {
    onyx_tensor *o;
    mb_model *m = mb_new(18);
    mb_init_int64(m, "image", I64S(1), 1, I64S(5));
    mb_init_int64(m, "block", I64S(1), 1, I64S(2));
    mb_node(m, "Col2Im", "i0,image,block", "o0");
    mb_attr_ints(m, "strides", I64S(2), 1);
    mb_attr_ints(m, "pads", I64S(1, 0), 2);
    /* blocks start at -1, 1, 3: rows are the two kernel taps */
    const float cols[6] = {1, 2, 3, 10, 20, 30};
    CHECK_OK(run_model(m, ARGS(IN(F32, cols, 3, 1, 2, 3)), &o));
    CHECK(OUT_IS(o, F32S(10, 2, 20, 3, 30), 0, 3, 1, 1, 5));
    onyx_tensor_free(o);
    m = mb_new(18);
    mb_init_int64(m, "image", I64S(1), 1, I64S(5));
    mb_init_int64(m, "block", I64S(1), 1, I64S(2));
    mb_node(m, "Col2Im", "i0,image,block", "o0");
    CHECK_FAILS(run_model(m, ARGS(IN(F32, cols, 3, 1, 2, 3)), &o), ONYX_INVALID_ARGUMENT,
                "input has 3 blocks (dimension 2) but the geometry gives 4");
    onyx_tensor_free(o);
}

/* ---- DFT-20: IRFFT with an explicit length ---- */

static mb_model *irfft(int64_t len) {
    mb_model *m = mb_new(20);
    mb_init_int64(m, "len", I64S(0), 0, I64S(len)); /* a scalar */
    mb_init_int64(m, "axis", I64S(0), 0, I64S(0));
    mb_node(m, "DFT", "i0,len,axis", "o0");
    mb_attr_int(m, "inverse", 1);
    mb_attr_int(m, "onesided", 1);
    return m;
}

static void test_dft_irfft(void) {
    onyx_tensor *o;
    /* bins 4, 1-i, 0 of a Hermitian spectrum: the real signal of length
     * 4 (bin 2 is the Nyquist bin), then of length 3, which reads only
     * bins 0 and 1: 1/3 * (4 + 2 Re((1 - i) e^(2 pi i t / 3))) */
    const float bins[6] = {4, 0, 1, -1, 0, 0};
    CHECK_OK(run_model(irfft(4), ARGS(IN(F32, bins, 2, 3, 2)), &o));
    CHECK(OUT_IS(o, F32S(1.5f, 1.5f, 0.5f, 0.5f), 1e-6, 2, 4, 1));
    onyx_tensor_free(o);
    CHECK_OK(run_model(irfft(3), ARGS(IN(F32, bins, 2, 3, 2)), &o));
    CHECK(OUT_IS(o, F32S(2.0f, 1.5773503f, 0.42264973f), 1e-6, 2, 3, 1));
    onyx_tensor_free(o);
    const float one_bin[2] = {1, 0};
    mb_model *m = mb_new(20);
    mb_node(m, "DFT", "i0", "o0");
    mb_attr_int(m, "inverse", 1);
    mb_attr_int(m, "onesided", 1);
    CHECK_FAILS(run_model(m, ARGS(IN(F32, one_bin, 3, 1, 1, 2)), &o), ONYX_INVALID_ARGUMENT,
                "inverse one-sided transform of 1 bin needs dft_length");
    onyx_tensor_free(o);
}

/* ---- RoiAlign, average mode on float32 (the channel-innermost path) ----
 * Against the operator's definition in double, written here apart from
 * the kernel: 37 channels (one block of 32 and a rest), two images, rois
 * inside, across the map's edges, wholly outside and tiny, adaptive and
 * fixed sampling, both coordinate modes. */

static mb_model *roialign(int64_t oh, int64_t ow, int64_t sr, float scale, const char *ctm) {
    mb_model *m = mb_new(16);
    mb_node(m, "RoiAlign", "i0,i1,i2", "o0");
    mb_attr_int(m, "output_height", oh);
    mb_attr_int(m, "output_width", ow);
    mb_attr_int(m, "sampling_ratio", sr);
    mb_attr_float(m, "spatial_scale", scale);
    mb_attr_string(m, "coordinate_transformation_mode", ctm);
    return m;
}

/* one bilinear sample of plane p (h x w) at (y, x), zero beyond a pixel outside */
static double ra_ref_sample(const float *p, int64_t h, int64_t w, double y, double x) {
    if (y < -1.0 || y > (double)h || x < -1.0 || x > (double)w) return 0.0;
    if (y <= 0) y = 0;
    if (x <= 0) x = 0;
    int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1 = y0 + 1, x1 = x0 + 1;
    if (y0 >= h - 1) y = (double)(y0 = y1 = h - 1);
    if (x0 >= w - 1) x = (double)(x0 = x1 = w - 1);
    double ly = y - (double)y0, lx = x - (double)x0;
    return (1 - ly) * (1 - lx) * p[y0 * w + x0] + (1 - ly) * lx * p[y0 * w + x1] + ly * (1 - lx) * p[y1 * w + x0] +
           ly * lx * p[y1 * w + x1];
}

static void test_roialign_f32(void) {
    enum { N = 2, C = 37, H = 9, W = 11, R = 5, OH = 3, OW = 4 };
    static float x[N * C * H * W];
    for (int i = 0; i < N * C * H * W; i++) x[i] = (float)((i * 37 + 11) % 101) / 25.0f - 2.0f;
    static const float rois[R * 4] = {2, 3, 15, 12,    -6, -4, 9, 7,    30, 1, 40, 30,
                                      50, 50, 60, 60,  7, 7, 7.5f, 7.25f};
    static const int64_t bidx[R] = {0, 1, 1, 0, 1};
    static const int64_t srs[2] = {0, 2};
    static const char *const ctms[2] = {"half_pixel", "output_half_pixel"};
    const float scale = 0.5f;
    for (int k = 0; k < 4; k++) {
        const int64_t sr = srs[k % 2];
        const int half = k < 2;
        static float want[R * C * OH * OW];
        for (int r = 0; r < R; r++) {
            const double off = half ? 0.5 : 0.0;
            double sw = rois[4 * r] * scale - off, sh = rois[4 * r + 1] * scale - off;
            double rw = rois[4 * r + 2] * scale - off - sw, rh = rois[4 * r + 3] * scale - off - sh;
            if (!half) {
                if (rw < 1) rw = 1;
                if (rh < 1) rh = 1;
            }
            double bh = rh / OH, bw = rw / OW;
            int64_t gh = sr ? sr : (int64_t)ceil(rh / OH), gw = sr ? sr : (int64_t)ceil(rw / OW);
            double cnt = (double)(gh * gw > 1 ? gh * gw : 1);
            for (int c = 0; c < C; c++)
                for (int ph = 0; ph < OH; ph++)
                    for (int pw = 0; pw < OW; pw++) {
                        double acc = 0;
                        for (int64_t iy = 0; iy < gh; iy++)
                            for (int64_t ix = 0; ix < gw; ix++)
                                acc += ra_ref_sample(x + (bidx[r] * C + c) * H * W, H, W,
                                                     sh + ph * bh + (iy + 0.5) * bh / (double)gh,
                                                     sw + pw * bw + (ix + 0.5) * bw / (double)gw);
                        want[((r * C + c) * OH + ph) * OW + pw] = (float)(acc / cnt);
                    }
        }
        onyx_tensor *o = NULL;
        CHECK_OK(run_model(roialign(OH, OW, sr, scale, ctms[k / 2]),
                           ARGS(IN(F32, x, 4, N, C, H, W), IN(F32, rois, 2, R, 4), IN(I64, bidx, 1, R)), &o));
        CHECK(is_f32(o, 4, I64S(R, C, OH, OW), want, 1e-5));
        onyx_tensor_free(o);
    }
}

int main(void) {
    CHECK_OK(onyx_env_create(&env));
    if (!env) CHECK_DONE();
    test_maxroipool();
    test_roialign_f32();
    test_resize_policy();
    test_resize_nearest();
    test_resize_same_size();
    test_gridsample_1d();
    test_gridsample_bilinear_2d();
    test_col2im_1d();
    test_dft_irfft();
    onyx_env_free(env);
    CHECK_DONE();
}
