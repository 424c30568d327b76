/* Vulkan-versus-CPU cases for the kernels of src/ep/vulkan/vk_kernels_data.c
 * (and vk_data_ew.c, vk_data_resize.c): data movement over every element
 * size (4-byte words, 8-byte word pairs, bool bytes), elementwise
 * operators with broadcasting, Where, Cast and Resize. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "vulkan_case.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
#define MAXV 4096

/* An int32/int64/bool input of this shape with varied values (negative
 * ones too; int64 ones beyond 32 bits when `wide`). */
static void int_input(vcase *c, const char *name, int dtype, const int64_t *dims, int rank, int wide) {
    static int64_t v[MAXV];
    int64_t n = count(dims, rank);
    CHECK(n <= MAXV);
    for (int64_t i = 0; i < n; i++) {
        int64_t k = (i * 7919 + 13) % 101 - 50;
        if (dtype == ONYX_BOOL) k = (i * 5 + i / 3) % 3 == 0;
        if (wide && i % 3 == 1) k = k * 4294967311LL + (i % 2 ? INT64_MIN / 3 : 0);
        v[i] = k;
    }
    vc_input_int(c, name, dtype, dims, rank, v);
}

/* A data input of any movable type the cases use. */
static void data_input(vcase *c, const char *name, int dtype, const int64_t *dims, int rank) {
    if (dtype == ONYX_FLOAT32)
        vc_input(c, name, dims, rank, -5, 5);
    else
        int_input(c, name, dtype, dims, rank, dtype == ONYX_INT64);
}

static const int DTYPES[] = {ONYX_FLOAT32, ONYX_INT64, ONYX_BOOL, ONYX_INT32};

static void transpose_cases(void) {
    static const struct {
        int rank;
        int64_t dims[6], perm[6];
        int has_perm;
    } SH[] = {
        {4, {2, 3, 5, 7}, {0, 2, 3, 1}, 1},
        {4, {3, 1, 4, 5}, {3, 1, 0, 2}, 1},
        {3, {5, 17, 3}, {0}, 0}, /* default: reversed */
        {2, {33, 65}, {1, 0}, 1},
        {6, {2, 3, 1, 2, 3, 2}, {5, 3, 1, 0, 4, 2}, 1},
        {3, {2, 0, 3}, {2, 0, 1}, 1}, /* empty */
        {0, {0}, {0}, 0},             /* scalar */
    };
    for (size_t s = 0; s < N_OF(SH); s++)
        for (size_t t = 0; t < N_OF(DTYPES); t++) {
            vcase c;
            char label[96];
            snprintf(label, sizeof label, "Transpose shape %zu %s", s, onyx_dtype_name(DTYPES[t]));
            vc_begin(&c, label, 13, TOL_EW);
            data_input(&c, "x", DTYPES[t], SH[s].dims, SH[s].rank);
            mb_node(c.m, "Transpose", "x", "y");
            if (SH[s].has_perm) mb_attr_ints(c.m, "perm", SH[s].perm, (size_t)SH[s].rank);
            vc_output(&c, "y", DTYPES[t]);
            vc_run(&c, 1);
        }
}

static void concat_cases(void) {
    static const struct {
        int rank, axis;
        int64_t a[4], b[4], d[4];
    } SH[] = {
        {3, 1, {2, 3, 5}, {2, 1, 5}, {2, 4, 5}},
        {3, -1, {2, 3, 5}, {2, 3, 1}, {2, 3, 7}},
        {2, 0, {0, 3}, {5, 3}, {1, 3}}, /* an empty input */
        {1, 0, {17}, {1}, {257}},
        {4, 2, {1, 2, 3, 4}, {1, 2, 5, 4}, {1, 2, 1, 4}},
    };
    static const int TYPES[] = {ONYX_FLOAT32, ONYX_INT64, ONYX_INT32, ONYX_BOOL};
    for (size_t s = 0; s < N_OF(SH); s++)
        for (size_t t = 0; t < N_OF(TYPES); t++) {
            vcase c;
            char label[96];
            snprintf(label, sizeof label, "Concat shape %zu %s", s, onyx_dtype_name(TYPES[t]));
            vc_begin(&c, label, 13, TOL_EW);
            data_input(&c, "a", TYPES[t], SH[s].a, SH[s].rank);
            data_input(&c, "b", TYPES[t], SH[s].b, SH[s].rank);
            data_input(&c, "d", TYPES[t], SH[s].d, SH[s].rank);
            mb_node(c.m, "Concat", "a,b,d", "y");
            mb_attr_int(c.m, "axis", SH[s].axis);
            vc_output(&c, "y", TYPES[t]);
            vc_run(&c, 1);
        }
    /* one input */
    int64_t d[] = {3, 4};
    vcase c;
    vc_begin(&c, "Concat one input", 13, TOL_EW);
    vc_input(&c, "a", d, 2, -1, 1);
    mb_node(c.m, "Concat", "a", "y");
    mb_attr_int(c.m, "axis", 1);
    vc_run(&c, 1);
    /* bool parts that split output words, five inputs */
    int64_t b1[] = {3, 1, 2}, b2[] = {3, 3, 2}, b3[] = {3, 0, 2};
    vc_begin(&c, "Concat bool unaligned parts", 13, TOL_EW);
    int_input(&c, "a", ONYX_BOOL, b1, 3, 0);
    int_input(&c, "b", ONYX_BOOL, b2, 3, 0);
    int_input(&c, "d", ONYX_BOOL, b3, 3, 0);
    int_input(&c, "e", ONYX_BOOL, b1, 3, 0);
    int_input(&c, "f", ONYX_BOOL, b2, 3, 0);
    mb_node(c.m, "Concat", "a,b,d,e,f", "y");
    mb_attr_int(c.m, "axis", 1);
    vc_output(&c, "y", ONYX_BOOL);
    vc_run(&c, 1);
    /* uint8 through Casts on the device */
    vc_begin(&c, "Concat uint8", 13, TOL_EW);
    int_input(&c, "a", ONYX_INT32, b1, 3, 0);
    int_input(&c, "b", ONYX_INT32, b2, 3, 0);
    mb_node(c.m, "Cast", "a", "ua");
    mb_attr_int(c.m, "to", ONYX_UINT8);
    mb_node(c.m, "Cast", "b", "ub");
    mb_attr_int(c.m, "to", ONYX_UINT8);
    mb_node(c.m, "Concat", "ua,ub,ua", "u");
    mb_attr_int(c.m, "axis", -2);
    mb_node(c.m, "Cast", "u", "y");
    mb_attr_int(c.m, "to", ONYX_INT32);
    vc_output(&c, "y", ONYX_INT32);
    vc_run(&c, 4);
}

static void slice_cases(void) {
    static const struct {
        int rank, n;
        int64_t dims[4], starts[4], ends[4], axes[4], steps[4];
        int has_axes, has_steps;
    } SH[] = {
        {2, 2, {5, 7}, {1, 2}, {4, 6}, {0, 1}, {1, 1}, 0, 0},
        {3, 1, {4, 5, 6}, {-1}, {-1000}, {1}, {-1}, 1, 1},               /* reversed, clamped */
        {3, 2, {4, 5, 6}, {0, 5}, {INT64_MAX, 0}, {-1, 0}, {2, -2}, 1, 1}, /* negative axis */
        {1, 1, {17}, {-1000}, {1000}, {0}, {3}, 1, 1},
        {2, 1, {5, 7}, {3}, {1}, {0}, {1}, 1, 1},                        /* empty result */
        {4, 2, {2, 3, 4, 5}, {1, -2}, {3, -1}, {1, 3}, {1, 1}, 1, 1},
        {2, 1, {5, 7}, {6}, {-1000}, {1}, {-3}, 1, 1},
    };
    for (size_t s = 0; s < N_OF(SH); s++)
        for (size_t t = 0; t < N_OF(DTYPES); t++) {
            vcase c;
            char label[96];
            snprintf(label, sizeof label, "Slice shape %zu %s", s, onyx_dtype_name(DTYPES[t]));
            vc_begin(&c, label, 13, TOL_EW);
            data_input(&c, "x", DTYPES[t], SH[s].dims, SH[s].rank);
            int64_t n = SH[s].n;
            /* starts as a run-time input, the rest constants */
            vc_input_int(&c, "starts", ONYX_INT64, &n, 1, SH[s].starts);
            mb_init_int64(c.m, "ends", &n, 1, SH[s].ends);
            mb_init_int64(c.m, "axes", &n, 1, SH[s].axes);
            mb_init_int64(c.m, "steps", &n, 1, SH[s].steps);
            mb_node(c.m, "Slice", SH[s].has_steps ? "x,starts,ends,axes,steps" : SH[s].has_axes ? "x,starts,ends,axes" : "x,starts,ends", "y");
            vc_output(&c, "y", DTYPES[t]);
            vc_run(&c, 1);
        }
    /* Slice-1: attributes */
    int64_t d[] = {6, 9}, st[] = {1, -7}, en[] = {5, 100};
    vcase c;
    vc_begin(&c, "Slice-1 attributes", 1, TOL_EW);
    vc_input(&c, "x", d, 2, -1, 1);
    mb_node(c.m, "Slice", "x", "y");
    mb_attr_ints(c.m, "starts", st, 2);
    mb_attr_ints(c.m, "ends", en, 2);
    vc_run(&c, 1);
    /* int32 starts/ends */
    vc_begin(&c, "Slice int32 starts", 13, TOL_EW);
    vc_input(&c, "x", d, 2, -1, 1);
    int64_t two = 2;
    vc_input_int(&c, "s", ONYX_INT32, &two, 1, st);
    vc_input_int(&c, "e", ONYX_INT32, &two, 1, en);
    mb_node(c.m, "Slice", "x,s,e", "y");
    vc_run(&c, 1);
}

static void split_cases(void) {
    int64_t d[] = {4, 7, 3};
    for (size_t t = 0; t < N_OF(DTYPES); t++) {
        vcase c;
        char label[96];
        int dt = DTYPES[t];
        snprintf(label, sizeof label, "Split-13 split input %s", onyx_dtype_name(dt));
        vc_begin(&c, label, 13, TOL_EW);
        data_input(&c, "x", dt, d, 3);
        int64_t sp[] = {2, 0, 5}, ns = 3;
        mb_init_int64(c.m, "split", &ns, 1, sp);
        mb_node(c.m, "Split", "x,split", "a,b,e");
        mb_attr_int(c.m, "axis", -2);
        vc_output(&c, "a", dt);
        vc_output(&c, "b", dt);
        vc_output(&c, "e", dt);
        vc_run(&c, 1);

        snprintf(label, sizeof label, "Split-18 num_outputs %s", onyx_dtype_name(dt));
        vc_begin(&c, label, 18, TOL_EW);
        data_input(&c, "x", dt, d, 3);
        mb_node(c.m, "Split", "x", "a,b,e");
        mb_attr_int(c.m, "axis", 1);
        mb_attr_int(c.m, "num_outputs", 3);
        vc_output(&c, "a", dt);
        vc_output(&c, "b", dt);
        vc_output(&c, "e", dt);
        vc_run(&c, 1);
    }
    vcase c;
    vc_begin(&c, "Split-11 split attribute", 11, TOL_EW);
    vc_input(&c, "x", d, 3, -1, 1);
    int64_t sp[] = {1, 3};
    mb_node(c.m, "Split", "x", "a,b");
    mb_attr_int(c.m, "axis", 0);
    mb_attr_ints(c.m, "split", sp, 2);
    vc_output(&c, "a", ONYX_FLOAT32);
    vc_output(&c, "b", ONYX_FLOAT32);
    vc_run(&c, 1);
    vc_begin(&c, "Split-11 equal parts", 11, TOL_EW);
    vc_input(&c, "x", d, 3, -1, 1);
    mb_node(c.m, "Split", "x", "a,b,e");
    mb_attr_int(c.m, "axis", 2);
    vc_output(&c, "a", ONYX_FLOAT32);
    vc_output(&c, "b", ONYX_FLOAT32);
    vc_output(&c, "e", ONYX_FLOAT32);
    vc_run(&c, 1);
}

static void expand_tile_cases(void) {
    static const struct {
        int rx, rs;
        int64_t x[4], shape[4];
    } EX[] = {
        {2, 3, {3, 1}, {2, 3, 4}},
        {1, 2, {5}, {3, 1}},
        {3, 2, {2, 1, 5}, {3, 1}}, /* shape of lower rank */
        {0, 3, {0}, {2, 3, 2}},    /* scalar */
        {2, 2, {1, 3}, {0, 3}},    /* empty */
    };
    for (size_t s = 0; s < N_OF(EX); s++)
        for (size_t t = 0; t < N_OF(DTYPES); t++) {
            vcase c;
            char label[96];
            snprintf(label, sizeof label, "Expand shape %zu %s", s, onyx_dtype_name(DTYPES[t]));
            vc_begin(&c, label, 13, TOL_EW);
            data_input(&c, "x", DTYPES[t], EX[s].x, EX[s].rx);
            int64_t ns = EX[s].rs;
            vc_input_int(&c, "shape", ONYX_INT64, &ns, 1, EX[s].shape);
            mb_node(c.m, "Expand", "x,shape", "y");
            vc_output(&c, "y", DTYPES[t]);
            vc_run(&c, 1);
        }
    static const struct {
        int r;
        int64_t x[4], rep[4];
    } TI[] = {
        {3, {2, 3, 5}, {2, 1, 3}},
        {1, {7}, {5}},
        {4, {1, 2, 3, 2}, {3, 2, 1, 2}},
        {2, {3, 4}, {0, 2}},
    };
    for (size_t s = 0; s < N_OF(TI); s++)
        for (size_t t = 0; t < N_OF(DTYPES); t++) {
            vcase c;
            char label[96];
            snprintf(label, sizeof label, "Tile shape %zu %s", s, onyx_dtype_name(DTYPES[t]));
            vc_begin(&c, label, 13, TOL_EW);
            data_input(&c, "x", DTYPES[t], TI[s].x, TI[s].r);
            int64_t nr = TI[s].r;
            mb_init_int64(c.m, "rep", &nr, 1, TI[s].rep);
            mb_node(c.m, "Tile", "x,rep", "y");
            vc_output(&c, "y", DTYPES[t]);
            vc_run(&c, 1);
        }
}

static void pad_cases(void) {
    static const char *MODES[] = {"constant", "reflect", "edge", "wrap"};
    static const struct {
        int r;
        int64_t x[4], pads[8];
    } SH[] = {
        {2, {4, 5}, {1, 2, 3, 2}},
        {3, {2, 3, 6}, {0, 1, -2, 1, 0, 3}}, /* a crop */
        {4, {1, 2, 5, 5}, {0, 0, 2, 2, 0, 0, 2, 2}},
        {1, {17}, {4, 5}},
    };
    for (size_t m = 0; m < N_OF(MODES); m++)
        for (size_t s = 0; s < N_OF(SH); s++)
            for (size_t t = 0; t < N_OF(DTYPES); t++) {
                vcase c;
                char label[96];
                int dt = DTYPES[t];
                snprintf(label, sizeof label, "Pad %s shape %zu %s", MODES[m], s, onyx_dtype_name(dt));
                vc_begin(&c, label, 19, TOL_EW);
                data_input(&c, "x", dt, SH[s].x, SH[s].r);
                int64_t np = 2 * SH[s].r, one = 1, cv[] = {dt == ONYX_INT64 ? -5000000000LL : 1};
                vc_input_int(&c, "pads", ONYX_INT64, &np, 1, SH[s].pads);
                if (m == 0 && dt != ONYX_FLOAT32) {
                    vc_input_int(&c, "v", dt, &one, 0, cv);
                    mb_node(c.m, "Pad", "x,pads,v", "y");
                } else if (m == 0) {
                    vc_input(&c, "v", NULL, 0, 2, 3);
                    mb_node(c.m, "Pad", "x,pads,v", "y");
                } else {
                    mb_node(c.m, "Pad", "x,pads", "y");
                }
                mb_attr_string(c.m, "mode", MODES[m]);
                vc_output(&c, "y", dt);
                vc_run(&c, 1);
            }
    /* Pad-18 axes; Pad-2 attributes; wrap before 19 is not a mode */
    int64_t d[] = {3, 4, 5}, pads[] = {2, 1, 0, 3}, ax[] = {-1, 0}, na = 2, np = 4;
    vcase c;
    vc_begin(&c, "Pad-18 axes", 18, TOL_EW);
    vc_input(&c, "x", d, 3, -1, 1);
    mb_init_int64(c.m, "pads", &np, 1, pads);
    mb_init_int64(c.m, "axes", &na, 1, ax);
    mb_node(c.m, "Pad", "x,pads,,axes", "y");
    mb_attr_string(c.m, "mode", "reflect");
    vc_run(&c, 1);
    int64_t p6[] = {1, 0, 2, 0, 3, 1};
    vc_begin(&c, "Pad-2 attributes", 2, TOL_EW);
    vc_input(&c, "x", d, 3, -1, 1);
    mb_node(c.m, "Pad", "x", "y");
    mb_attr_ints(c.m, "pads", p6, 6);
    mb_attr_float(c.m, "value", -2.5f);
    vc_run(&c, 1);
    vc_begin(&c, "Pad-2 edge", 2, TOL_EW);
    vc_input(&c, "x", d, 3, -1, 1);
    mb_node(c.m, "Pad", "x", "y");
    mb_attr_ints(c.m, "pads", p6, 6);
    mb_attr_string(c.m, "mode", "edge");
    vc_run(&c, 1);
}

static void reshape_cases(void) {
    int64_t d[] = {2, 3, 1, 5}, shape[] = {6, -1}, ax[] = {2}, ax2[] = {0, -1}, n1 = 1, n2 = 2;
    for (size_t t = 0; t < N_OF(DTYPES); t++) {
        int dt = DTYPES[t];
        vcase c;
        char label[96];
        snprintf(label, sizeof label, "Reshape %s", onyx_dtype_name(dt));
        vc_begin(&c, label, 14, TOL_EW);
        data_input(&c, "x", dt, d, 4);
        vc_input_int(&c, "s", ONYX_INT64, &n2, 1, shape);
        mb_node(c.m, "Reshape", "x,s", "y");
        vc_output(&c, "y", dt);
        vc_run(&c, 1);
        snprintf(label, sizeof label, "Identity %s", onyx_dtype_name(dt));
        vc_begin(&c, label, 14, TOL_EW);
        data_input(&c, "x", dt, d, 4);
        mb_node(c.m, "Identity", "x", "y");
        vc_output(&c, "y", dt);
        vc_run(&c, 1);
        snprintf(label, sizeof label, "Flatten %s", onyx_dtype_name(dt));
        vc_begin(&c, label, 13, TOL_EW);
        data_input(&c, "x", dt, d, 4);
        mb_node(c.m, "Flatten", "x", "y");
        mb_attr_int(c.m, "axis", 2);
        vc_output(&c, "y", dt);
        vc_run(&c, 1);
        snprintf(label, sizeof label, "Squeeze %s", onyx_dtype_name(dt));
        vc_begin(&c, label, 13, TOL_EW);
        data_input(&c, "x", dt, d, 4);
        mb_init_int64(c.m, "a", &n1, 1, ax);
        mb_node(c.m, "Squeeze", "x,a", "y");
        vc_output(&c, "y", dt);
        vc_run(&c, 1);
        snprintf(label, sizeof label, "Unsqueeze %s", onyx_dtype_name(dt));
        vc_begin(&c, label, 13, TOL_EW);
        data_input(&c, "x", dt, d, 4);
        vc_input_int(&c, "a", ONYX_INT64, &n2, 1, ax2);
        mb_node(c.m, "Unsqueeze", "x,a", "y");
        vc_output(&c, "y", dt);
        vc_run(&c, 1);
    }
    vcase c;
    vc_begin(&c, "Squeeze-11 attribute", 11, TOL_EW);
    vc_input(&c, "x", d, 4, -1, 1);
    mb_node(c.m, "Squeeze", "x", "y");
    vc_run(&c, 1);
    int64_t e[] = {0, 3};
    vc_begin(&c, "Reshape empty", 14, TOL_EW);
    vc_input(&c, "x", e, 2, -1, 1);
    int64_t s0[] = {3, 0};
    vc_input_int(&c, "s", ONYX_INT64, &n2, 1, s0);
    mb_node(c.m, "Reshape", "x,s", "y");
    mb_attr_int(c.m, "allowzero", 1);
    vc_run(&c, 1);
}

static const struct {
    int ra, rb;
    int64_t a[4], b[4];
} BSH[] = {
    {1, 1, {17}, {17}},
    {2, 0, {3, 17}, {0}},
    {2, 2, {5, 17}, {5, 1}},
    {3, 1, {2, 3, 17}, {17}},
    {3, 2, {3, 1, 5}, {4, 1}},
    {2, 2, {0, 3}, {1, 3}},
    {1, 1, {70001}, {70001}},
};

static void binary_float_cases(void) {
    static const struct {
        const char *op;
        int opset;
        float alo, ahi, blo, bhi;
        int out;
    } OPS[] = {
        {"Pow", 15, 0.1f, 4, -3, 3, ONYX_FLOAT32},
        {"Max", 13, -4, 4, -4, 4, ONYX_FLOAT32},
        {"Min", 13, -4, 4, -4, 4, ONYX_FLOAT32},
        {"Mod", 13, -40, 40, 0.5f, 7, ONYX_FLOAT32},
        {"Mod", 13, -40, 40, -7, -0.5f, ONYX_FLOAT32},
        {"Equal", 13, -2, 2, -2, 2, ONYX_BOOL},
        {"Less", 13, -2, 2, -2, 2, ONYX_BOOL},
        {"Greater", 13, -2, 2, -2, 2, ONYX_BOOL},
        {"LessOrEqual", 16, -2, 2, -2, 2, ONYX_BOOL},
        {"GreaterOrEqual", 16, -2, 2, -2, 2, ONYX_BOOL},
    };
    for (size_t o = 0; o < N_OF(OPS); o++)
        for (size_t s = 0; s < N_OF(BSH); s++) {
            vcase c;
            char label[96];
            snprintf(label, sizeof label, "%s [%g,%g) shapes %zu", OPS[o].op, OPS[o].blo, OPS[o].bhi, s);
            vc_begin(&c, label, OPS[o].opset, TOL_EW);
            vc_input(&c, "a", BSH[s].a, BSH[s].ra, OPS[o].alo, OPS[o].ahi);
            vc_input(&c, "b", BSH[s].b, BSH[s].rb, OPS[o].blo, OPS[o].bhi);
            /* equal values for the comparisons: b copies a where shapes agree */
            if (OPS[o].out == ONYX_BOOL && s == 0) {
                float *pa = onyx_tensor_data(c.ins[0]), *pb = onyx_tensor_data(c.ins[1]);
                for (int i = 0; i < 17; i += 3) pb[i] = pa[i];
            }
            mb_node(c.m, OPS[o].op, "a,b", "y");
            if (!strcmp(OPS[o].op, "Mod")) mb_attr_int(c.m, "fmod", 1);
            vc_output(&c, "y", OPS[o].out);
            vc_run(&c, 1);
        }
    /* Pow of negative bases: integral exponents keep a sign, others NaN */
    int64_t d[] = {64};
    vcase c;
    vc_begin(&c, "Pow negative bases", 15, TOL_EW);
    vc_input(&c, "a", d, 1, -3, 3);
    vc_input(&c, "b", d, 1, -3, 3);
    float *pb = onyx_tensor_data(c.ins[1]);
    for (int i = 0; i < 64; i++) pb[i] = i % 3 ? (float)(i % 7 - 3) : pb[i];
    mb_node(c.m, "Pow", "a,b", "y");
    vc_run(&c, 1);
    /* Max/Min over three broadcast inputs, and over one */
    int64_t d1[] = {3, 1, 5}, d2[] = {4, 1}, d3[] = {5};
    static const char *MM[] = {"Max", "Min"};
    for (int k = 0; k < 2; k++) {
        char label[64];
        snprintf(label, sizeof label, "%s three inputs", MM[k]);
        vc_begin(&c, label, 13, TOL_EW);
        vc_input(&c, "a", d1, 3, -4, 4);
        vc_input(&c, "b", d2, 2, -4, 4);
        vc_input(&c, "e", d3, 1, -4, 4);
        mb_node(c.m, MM[k], "a,b,e", "y");
        vc_run(&c, 1);
        snprintf(label, sizeof label, "%s one input", MM[k]);
        vc_begin(&c, label, 13, TOL_EW);
        vc_input(&c, "a", d1, 3, -4, 4);
        mb_node(c.m, MM[k], "a", "y");
        vc_run(&c, 1);
    }
    /* integer Mod is the CPU's */
    vc_begin(&c, "Mod int32 (not claimed)", 13, TOL_EW);
    int_input(&c, "a", ONYX_INT32, d, 1, 0);
    int64_t nz[64];
    for (int i = 0; i < 64; i++) nz[i] = i % 5 + 1;
    vc_input_int(&c, "b", ONYX_INT32, d, 1, nz);
    mb_node(c.m, "Mod", "a,b", "y");
    vc_output(&c, "y", ONYX_INT32);
    vc_run(&c, 0);
}

static void logic_cases(void) {
    static const char *CMP[] = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"};
    for (size_t o = 0; o < N_OF(CMP); o++)
        for (size_t s = 0; s < N_OF(BSH); s++) {
            if (BSH[s].a[0] == 70001) continue;
            vcase c;
            char label[96];
            snprintf(label, sizeof label, "%s int32 shapes %zu", CMP[o], s);
            vc_begin(&c, label, 16, TOL_EW);
            int_input(&c, "a", ONYX_INT32, BSH[s].a, BSH[s].ra, 0);
            int_input(&c, "b", ONYX_INT32, BSH[s].b, BSH[s].rb, 0);
            mb_node(c.m, CMP[o], "a,b", "y");
            vc_output(&c, "y", ONYX_BOOL);
            vc_run(&c, 1);
        }
    static const char *LOG[] = {"And", "Or", "Xor", "Equal"};
    for (size_t o = 0; o < N_OF(LOG); o++)
        for (size_t s = 0; s < N_OF(BSH); s++) {
            if (BSH[s].a[0] == 70001) continue;
            vcase c;
            char label[96];
            snprintf(label, sizeof label, "%s bool shapes %zu", LOG[o], s);
            vc_begin(&c, label, 13, TOL_EW);
            int_input(&c, "a", ONYX_BOOL, BSH[s].a, BSH[s].ra, 0);
            int_input(&c, "b", ONYX_BOOL, BSH[s].b, BSH[s].rb, 0);
            mb_node(c.m, LOG[o], "a,b", "y");
            vc_output(&c, "y", ONYX_BOOL);
            vc_run(&c, 1);
        }
    int64_t shapes[][2] = {{1, 1}, {3, 5}, {17, 3}, {0, 2}};
    for (int s = 0; s < 4; s++) {
        vcase c;
        char label[64];
        snprintf(label, sizeof label, "Not shape %d", s);
        vc_begin(&c, label, 13, TOL_EW);
        int_input(&c, "a", ONYX_BOOL, shapes[s], 2, 0);
        mb_node(c.m, "Not", "a", "y");
        vc_output(&c, "y", ONYX_BOOL);
        vc_run(&c, 1);
    }
    /* int64 comparisons: values beyond 32 bits, equal high or low words */
    static const int64_t A64[] = {0, -1, 1, 4294967296LL, 4294967295LL, -4294967296LL, INT64_MIN, INT64_MAX,
                                  5, -5, 1LL << 40, (1LL << 40) + 1};
    static const int64_t B64[] = {0, 1, -1, 4294967295LL, 4294967296LL, -4294967295LL, INT64_MAX, INT64_MIN,
                                  5, -4, (1LL << 40) + 1, 1LL << 40};
    int64_t n12 = 12;
    for (size_t o = 0; o < N_OF(CMP); o++) {
        vcase c;
        char label[96];
        snprintf(label, sizeof label, "%s int64", CMP[o]);
        vc_begin(&c, label, 16, TOL_EW);
        vc_input_int(&c, "a", ONYX_INT64, &n12, 1, A64);
        vc_input_int(&c, "b", ONYX_INT64, &n12, 1, B64);
        mb_node(c.m, CMP[o], "a,b", "y");
        vc_output(&c, "y", ONYX_BOOL);
        vc_run(&c, 1);
        snprintf(label, sizeof label, "%s int64 broadcast", CMP[o]);
        vc_begin(&c, label, 16, TOL_EW);
        int64_t da[] = {3, 4}, db[] = {4};
        vc_input_int(&c, "a", ONYX_INT64, da, 2, A64);
        vc_input_int(&c, "b", ONYX_INT64, db, 1, B64 + 4);
        mb_node(c.m, CMP[o], "a,b", "y");
        vc_output(&c, "y", ONYX_BOOL);
        vc_run(&c, 1);
    }
    /* uint8 comparisons are left to the CPU */
    int64_t d[] = {5};
    vcase c;
    vc_begin(&c, "Less uint8 (not claimed)", 13, TOL_EW);
    int_input(&c, "a", ONYX_INT32, d, 1, 0);
    mb_node(c.m, "Cast", "a", "u");
    mb_attr_int(c.m, "to", ONYX_UINT8);
    mb_node(c.m, "Less", "u,u", "y");
    vc_output(&c, "y", ONYX_BOOL);
    vc_run(&c, 1);
}

static void unary_cases(void) {
    static const struct {
        const char *op;
        float lo, hi;
        int opset;
    } OPS[] = {
        {"Reciprocal", 0.1f, 10, 13}, {"Reciprocal", -10, -0.1f, 13}, {"Log", 0.001f, 100, 13},
        {"Floor", -10, 10, 13},       {"Ceil", -10, 10, 13},          {"Round", -10, 10, 22},
        {"Sin", -6.3f, 6.3f, 22},     {"Cos", -6.3f, 6.3f, 22},       {"HardSigmoid", -6, 6, 22},
        {"HardSwish", -6, 6, 22},     {"Softplus", -20, 20, 22},      {"Sign", -3, 3, 13},
        {"Elu", -5, 5, 22},           {"Elu", -0.001f, 0.001f, 22},   {"Selu", -5, 5, 22},
        {"Softplus", -0.01f, 0.01f, 22}, {"Sin", -1000, 1000, 22}, {"Cos", -1000, 1000, 22},
        {"Log", 1e-30f, 1e30f, 13},
    };
    static const int64_t SH[][2] = {{1, 1}, {3, 17}, {0, 4}, {300, 257}};
    for (size_t k = 0; k < N_OF(OPS); k++)
        for (int s = 0; s < 4; s++) {
            vcase c;
            char label[96];
            snprintf(label, sizeof label, "%s [%g,%g) shape %d", OPS[k].op, OPS[k].lo, OPS[k].hi, s);
            vc_begin(&c, label, OPS[k].opset, TOL_EW);
            vc_input(&c, "x", SH[s], 2, OPS[k].lo, OPS[k].hi);
            /* halves for Round, zeros for Sign */
            float *p = onyx_tensor_data(c.ins[0]);
            for (int64_t i = 0; i < count(SH[s], 2); i += 5) {
                if (!strcmp(OPS[k].op, "Round")) p[i] = (float)(i % 21 - 10) + 0.5f;
                if (!strcmp(OPS[k].op, "Sign")) p[i] = 0.0f;
            }
            mb_node(c.m, OPS[k].op, "x", "y");
            if (!strcmp(OPS[k].op, "HardSigmoid")) {
                mb_attr_float(c.m, "alpha", 0.3f);
                mb_attr_float(c.m, "beta", 0.4f);
            }
            if (!strcmp(OPS[k].op, "Elu") && s == 1) mb_attr_float(c.m, "alpha", 0.5f);
            if (!strcmp(OPS[k].op, "Selu") && s == 1) {
                mb_attr_float(c.m, "alpha", 1.5f);
                mb_attr_float(c.m, "gamma", 2.0f);
            }
            vc_run(&c, 1);
        }
}

static void where_cases(void) {
    static const struct {
        int rc, rx, ry;
        int64_t c[3], x[3], y[3];
    } SH[] = {
        {1, 1, 1, {17}, {17}, {17}},
        {2, 1, 2, {3, 1}, {5}, {3, 5}},
        {3, 0, 2, {2, 1, 4}, {0}, {3, 1}},
        {2, 2, 2, {0, 3}, {1, 3}, {0, 1}},
        {3, 3, 3, {2, 3, 5}, {2, 3, 5}, {1, 1, 1}},
    };
    for (size_t s = 0; s < N_OF(SH); s++)
        for (size_t t = 0; t < N_OF(DTYPES); t++) {
            vcase c;
            char label[96];
            int dt = DTYPES[t];
            snprintf(label, sizeof label, "Where shapes %zu %s", s, onyx_dtype_name(dt));
            vc_begin(&c, label, 16, TOL_EW);
            int_input(&c, "c", ONYX_BOOL, SH[s].c, SH[s].rc, 0);
            data_input(&c, "x", dt, SH[s].x, SH[s].rx);
            data_input(&c, "y", dt, SH[s].y, SH[s].ry);
            mb_node(c.m, "Where", "c,x,y", "o");
            vc_output(&c, "o", dt);
            vc_run(&c, 1);
        }
}

/* Cast between float32, int32, int64, bool and uint8; uint8 values come
 * from a Cast of int32 (both nodes on the device). */
static void cast_cases(void) {
    static const int TYPES[] = {ONYX_FLOAT32, ONYX_INT32, ONYX_INT64, ONYX_BOOL, ONYX_UINT8};
    static const float SPECIAL[] = {0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 255.9f, 256.0f, -1.0f,
                                    2147483520.0f, 3e9f, -3e9f, 1e19f, -1e19f, 9.2233715e18f,
                                    -9.223372e18f, INFINITY, -INFINITY, NAN, 1e-30f, 16777217.0f,
                                    123456.75f, -7.99f, 4294967296.0f, 6e12f};
    static const int64_t WIDE[] = {0, 1, -1, 255, 256, -256, 2147483647, 2147483648LL, -2147483649LL,
                                   16777217, 16777219, 4294967295LL, 4294967297LL, INT64_MAX, INT64_MIN,
                                   (1LL << 53) + 1, -(1LL << 40) - 3, 0x7fffff8000000001LL,
                                   0x00000100000000ffLL, -0x0000000180000001LL, 9007199791611905LL};
    int64_t nf = N_OF(SPECIAL), nw = N_OF(WIDE);
    for (size_t a = 0; a < N_OF(TYPES); a++)
        for (size_t b = 0; b < N_OF(TYPES); b++) {
            int from = TYPES[a], to = TYPES[b];
            vcase c;
            char label[96];
            snprintf(label, sizeof label, "Cast %s to %s", onyx_dtype_name(from), onyx_dtype_name(to));
            vc_begin(&c, label, 21, TOL_EW);
            int nodes = 1;
            if (from == ONYX_FLOAT32) {
                vc_input(&c, "x", &nf, 1, 0, 1);
                memcpy(onyx_tensor_data(c.ins[0]), SPECIAL, sizeof SPECIAL);
            } else if (from == ONYX_INT64) {
                vc_input_int(&c, "x", ONYX_INT64, &nw, 1, WIDE);
            } else {
                vc_input_int(&c, "x", from == ONYX_UINT8 ? ONYX_INT32 : from, &nw, 1, WIDE);
            }
            if (from == ONYX_UINT8) {
                mb_node(c.m, "Cast", "x", "u");
                mb_attr_int(c.m, "to", ONYX_UINT8);
                mb_node(c.m, "Cast", "u", "y");
                nodes = 2;
            } else {
                mb_node(c.m, "Cast", "x", "y");
            }
            mb_attr_int(c.m, "to", to);
            vc_output(&c, "y", to);
            vc_run(&c, nodes);
        }
    /* an odd count into bytes, and an empty tensor */
    int64_t d[] = {3, 7}, e[] = {0, 3};
    vcase c;
    vc_begin(&c, "Cast float to bool odd size", 13, TOL_EW);
    vc_input(&c, "x", d, 2, -1, 1);
    mb_node(c.m, "Cast", "x", "y");
    mb_attr_int(c.m, "to", ONYX_BOOL);
    vc_output(&c, "y", ONYX_BOOL);
    vc_run(&c, 1);
    vc_begin(&c, "Cast empty", 13, TOL_EW);
    vc_input(&c, "x", e, 2, -1, 1);
    mb_node(c.m, "Cast", "x", "y");
    mb_attr_int(c.m, "to", ONYX_INT64);
    vc_output(&c, "y", ONYX_INT64);
    vc_run(&c, 1);
    vc_begin(&c, "Cast to float16 (not claimed)", 13, TOL_EW);
    vc_input(&c, "x", d, 2, -1, 1);
    mb_node(c.m, "Cast", "x", "y");
    mb_attr_int(c.m, "to", ONYX_FLOAT16);
    vc_output(&c, "y", ONYX_FLOAT16);
    vc_run(&c, 0);
}

static void resize_cases(void) {
    static const char *CTM[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                "tf_half_pixel_for_nn", "half_pixel_symmetric"};
    static const char *NEAREST[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    static const float SCALES[][2] = {{2, 2}, {0.5f, 0.5f}, {1.5f, 0.6f}, {3, 1}, {0.34f, 2.5f}};
    int64_t d[] = {2, 3, 7, 9};
    for (size_t t = 0; t < N_OF(CTM); t++)
        for (int mode = 0; mode < 5; mode++)
            for (size_t s = 0; s < N_OF(SCALES); s++) {
                vcase c;
                char label[128];
                const char *m = mode < 4 ? "nearest" : "linear";
                snprintf(label, sizeof label, "Resize %s %s %s scales %g,%g", m, CTM[t],
                         mode < 4 ? NEAREST[mode] : "", SCALES[s][0], SCALES[s][1]);
                vc_begin(&c, label, 19, TOL_EW);
                vc_input(&c, "x", d, 4, -3, 3);
                float sc[4] = {1, 1, SCALES[s][0], SCALES[s][1]};
                int64_t four = 4;
                vc_input(&c, "scales", &four, 1, 0, 1);
                memcpy(onyx_tensor_data(c.ins[1]), sc, sizeof sc);
                mb_node(c.m, "Resize", "x,,scales", "y");
                mb_attr_string(c.m, "mode", m);
                mb_attr_string(c.m, "coordinate_transformation_mode", CTM[t]);
                if (mode < 4) mb_attr_string(c.m, "nearest_mode", NEAREST[mode]);
                vc_run(&c, 1);
            }
    /* sizes, Resize-18 axes, exclude_outside, Resize-10/11/13 */
    static const int64_t SIZES[][2] = {{14, 18}, {3, 4}, {10, 5}, {1, 1}};
    for (int s = 0; s < 4; s++)
        for (int lin = 0; lin < 2; lin++) {
            vcase c;
            char label[96];
            snprintf(label, sizeof label, "Resize sizes %lld,%lld %s", (long long)SIZES[s][0],
                     (long long)SIZES[s][1], lin ? "linear" : "nearest");
            vc_begin(&c, label, 13, TOL_EW);
            vc_input(&c, "x", d, 4, -3, 3);
            int64_t sz[4] = {2, 3, SIZES[s][0], SIZES[s][1]}, four = 4;
            vc_input_int(&c, "sizes", ONYX_INT64, &four, 1, sz);
            mb_node(c.m, "Resize", "x,,,sizes", "y");
            mb_attr_string(c.m, "mode", lin ? "linear" : "nearest");
            if (s == 2) mb_attr_string(c.m, "coordinate_transformation_mode", "align_corners");
            vc_run(&c, 1);

            snprintf(label, sizeof label, "Resize-18 axes sizes %d %s", s, lin ? "linear" : "nearest");
            vc_begin(&c, label, 18, TOL_EW);
            vc_input(&c, "x", d, 4, -3, 3);
            int64_t two = 2, ax[] = {2, 3};
            vc_input_int(&c, "sizes", ONYX_INT64, &two, 1, SIZES[s]);
            mb_node(c.m, "Resize", "x,,,sizes", "y");
            mb_attr_string(c.m, "mode", lin ? "linear" : "nearest");
            mb_attr_ints(c.m, "axes", ax, 2);
            mb_attr_int(c.m, "exclude_outside", s == 1);
            vc_run(&c, 1);
        }
    float sc[4] = {1, 1, 2, 3};
    int64_t four = 4;
    vcase c;
    vc_begin(&c, "Resize-10 nearest", 10, TOL_EW);
    vc_input(&c, "x", d, 4, -3, 3);
    mb_init_float(c.m, "scales", &four, 1, sc);
    mb_node(c.m, "Resize", "x,scales", "y");
    vc_run(&c, 1);
    vc_begin(&c, "Resize-10 linear", 10, TOL_EW);
    vc_input(&c, "x", d, 4, -3, 3);
    mb_init_float(c.m, "scales", &four, 1, sc);
    mb_node(c.m, "Resize", "x,scales", "y");
    mb_attr_string(c.m, "mode", "linear");
    vc_run(&c, 1);
    /* two Resizes in one run whose tap tables have the same size: the
     * second's scratch reuses the first's buffer while the first is only
     * recorded, so its table must reach the device in order (a direct
     * write clobbered the first's taps) */
    {
        int64_t d2[] = {1, 2, 4, 4};
        float up[4] = {1, 1, 2, 2}, same[4] = {1, 1, 1, 1};
        vc_begin(&c, "Resize twice, same table size", 13, TOL_EW);
        vc_input(&c, "x", d2, 4, -3, 3);
        mb_init_float(c.m, "up", &four, 1, up);
        mb_init_float(c.m, "same", &four, 1, same);
        mb_node(c.m, "Resize", "x,,up", "h");
        mb_node(c.m, "Resize", "h,,same", "y");
        vc_run(&c, 2);
    }
    float roi[8] = {0};
    vc_begin(&c, "Resize-11 with roi", 11, TOL_EW);
    vc_input(&c, "x", d, 4, -3, 3);
    int64_t eight = 8;
    mb_init_float(c.m, "roi", &eight, 1, roi);
    mb_init_float(c.m, "scales", &four, 1, sc);
    mb_node(c.m, "Resize", "x,roi,scales", "y");
    mb_attr_string(c.m, "mode", "linear");
    vc_run(&c, 1);
    /* left to the CPU */
    static const char *CPU_ONLY[][2] = {{"mode", "cubic"},
                                        {"coordinate_transformation_mode", "tf_crop_and_resize"},
                                        {"keep_aspect_ratio_policy", "not_larger"}};
    for (int k = 0; k < 3; k++) {
        char label[96];
        snprintf(label, sizeof label, "Resize %s (not claimed)", CPU_ONLY[k][1]);
        vc_begin(&c, label, 19, TOL_EW);
        vc_input(&c, "x", d, 4, -3, 3);
        mb_init_float(c.m, "roi", &eight, 1, roi);
        int64_t sz[4] = {2, 3, 5, 5};
        vc_input_int(&c, "sizes", ONYX_INT64, &four, 1, sz);
        mb_node(c.m, "Resize", "x,roi,,sizes", "y");
        mb_attr_string(c.m, CPU_ONLY[k][0], CPU_ONLY[k][1]);
        vc_run(&c, 0);
    }
    vc_begin(&c, "Resize antialias (not claimed)", 19, TOL_EW);
    vc_input(&c, "x", d, 4, -3, 3);
    float half[4] = {1, 1, 0.5f, 0.5f};
    mb_init_float(c.m, "scales", &four, 1, half);
    mb_node(c.m, "Resize", "x,,scales", "y");
    mb_attr_string(c.m, "mode", "linear");
    mb_attr_int(c.m, "antialias", 1);
    vc_run(&c, 0);
    /* N and C resize too (separable taps on every axis) */
    static const float NC[][4] = {{2, 1, 1, 1}, {1, 1.5f, 2, 0.5f}, {0.5f, 2, 1, 1}};
    for (int k = 0; k < 3; k++)
        for (int lin = 0; lin < 2; lin++) {
            char label[96];
            snprintf(label, sizeof label, "Resize N/C scales %d %s", k, lin ? "linear" : "nearest");
            vc_begin(&c, label, 19, TOL_EW);
            vc_input(&c, "x", d, 4, -3, 3);
            vc_input(&c, "scales", &four, 1, 0, 1);
            memcpy(onyx_tensor_data(c.ins[1]), NC[k], sizeof NC[k]);
            mb_node(c.m, "Resize", "x,,scales", "y");
            mb_attr_string(c.m, "mode", lin ? "linear" : "nearest");
            vc_run(&c, 1);
        }
    int64_t ax13[] = {1, -1}, two = 2;
    float s13[] = {2, 0.7f};
    vc_begin(&c, "Resize-18 axes 1,-1", 18, TOL_EW);
    vc_input(&c, "x", d, 4, -3, 3);
    mb_init_float(c.m, "scales", &two, 1, s13);
    mb_node(c.m, "Resize", "x,,scales", "y");
    mb_attr_string(c.m, "mode", "linear");
    mb_attr_ints(c.m, "axes", ax13, 2);
    vc_run(&c, 1);
}

void vulkan_data_cases(void) {
    transpose_cases();
    concat_cases();
    slice_cases();
    split_cases();
    expand_tile_cases();
    pad_cases();
    reshape_cases();
    binary_float_cases();
    logic_cases();
    unary_cases();
    where_cases();
    cast_cases();
    resize_cases();
}
