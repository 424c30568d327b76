/* Vulkan-versus-CPU cases for the kernels of src/ep/vulkan/vk_kernels_nn.c
 * (and vk_nn_*.c): Conv through both shaders (implicit GEMM, depthwise)
 * over every auto_pad mode, groups, strides, dilations, 1-D to 3-D and
 * tile-edge sizes; ConvTranspose; the pools; the normalizations;
 * GridSample in every mode, 4-D and 5-D. Nodes the provider leaves to the CPU (4-D
 * spatial convolutions, MaxPool's Indices, training BatchNormalization,
 * LayerNormalization's statistics outputs, broadcast parameters, bicubic
 * sampling) are checked to fall back. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "vulkan_case.h"

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

/* A float32 input declared with model_dims (-1: a symbolic "batch", -2:
 * an unnamed unknown extent) and
 * fed with tensor_dims, filled from [lo, hi). */
static void dyn_input(vcase *c, const char *name, const int64_t *model_dims, const int64_t *dims, int rank,
                      float lo, float hi) {
    CHECK(c->n_in < VC_MAX_IN);
    mb_input(c->m, name, ONYX_FLOAT32, model_dims, rank);
    onyx_tensor *t = NULL;
    CHECK_OK(onyx_tensor_create(ONYX_FLOAT32, dims, rank, &t));
    float *p = onyx_tensor_data(t);
    for (int64_t i = 0; i < count(dims, rank); i++) p[i] = frand(lo, hi);
    c->names[c->n_in] = name;
    c->ins[c->n_in++] = t;
}

/* ---- Conv ---- */

typedef struct conv_case {
    const char *label;
    int r;                        /* spatial axes */
    int64_t n, c, m, group;
    int64_t in[3], k[3];
    int64_t strides[3], dil[3];   /* 0: attribute absent */
    int64_t pads[6];
    int has_pads;
    const char *auto_pad;         /* NULL: absent */
    int bias;
} conv_case;

static const conv_case CONV[] = {
    {"Conv 3x3 pad 1 bias", 2, 2, 6, 10, 1, {11, 13}, {3, 3}, {0}, {0}, {1, 1, 1, 1}, 1, NULL, 1},
    {"Conv stride 2 dilation 2 asymmetric pads", 2, 2, 5, 7, 1, {12, 15}, {3, 2}, {2, 2}, {2, 2},
     {0, 1, 2, 0}, 1, NULL, 0},
    {"Conv group 2", 2, 1, 6, 4, 2, {9, 10}, {3, 2}, {1, 2}, {0}, {1, 0, 1, 1}, 1, NULL, 1},
    {"Conv group 3, 7 channels per group", 2, 2, 21, 9, 3, {6, 7}, {3, 3}, {0}, {0}, {1, 1, 1, 1}, 1, NULL, 1},
    {"Conv depthwise stride 2", 2, 2, 8, 8, 8, {13, 11}, {3, 3}, {2, 2}, {0}, {1, 1, 1, 1}, 1, NULL, 1},
    {"Conv depthwise multiplier 2, dilation", 2, 1, 5, 10, 5, {10, 9}, {3, 3}, {0}, {2, 1}, {2, 1, 2, 1}, 1,
     NULL, 0},
    {"Conv depthwise 5x5 SAME_UPPER", 2, 1, 16, 16, 16, {14, 14}, {5, 5}, {2, 2}, {0}, {0}, 0, "SAME_UPPER", 1},
    {"Conv one input channel", 2, 2, 1, 7, 1, {9, 8}, {3, 3}, {0}, {0}, {0}, 0, NULL, 1},
    {"Conv SAME_UPPER stride 2", 2, 1, 3, 5, 1, {10, 9}, {4, 3}, {2, 2}, {0}, {0}, 0, "SAME_UPPER", 0},
    {"Conv SAME_LOWER stride 2", 2, 1, 3, 5, 1, {10, 9}, {4, 3}, {2, 2}, {0}, {0}, 0, "SAME_LOWER", 1},
    {"Conv VALID", 2, 2, 4, 3, 1, {7, 8}, {3, 3}, {0}, {0}, {0}, 0, "VALID", 1},
    {"Conv pointwise over several tiles", 2, 2, 70, 65, 1, {9, 9}, {1, 1}, {0}, {0}, {0}, 0, NULL, 1},
    {"Conv pointwise stride 2", 2, 1, 18, 20, 1, {9, 9}, {1, 1}, {2, 2}, {0}, {0}, 0, NULL, 0},
    {"Conv 3x3 64 to 96 channels", 2, 1, 64, 96, 1, {20, 20}, {3, 3}, {0}, {0}, {1, 1, 1, 1}, 1, NULL, 1},
    {"Conv 1-D", 1, 2, 5, 6, 1, {37}, {5}, {3}, {0}, {2, 2}, 1, NULL, 1},
    {"Conv 1-D depthwise dilated", 1, 1, 4, 4, 4, {30}, {3}, {0}, {3}, {3, 3}, 1, NULL, 0},
    {"Conv 3-D", 3, 1, 3, 4, 1, {5, 6, 7}, {2, 3, 3}, {1, 2, 1}, {0}, {0, 1, 1, 1, 0, 1}, 1, NULL, 1},
    {"Conv empty batch", 2, 0, 3, 4, 1, {5, 5}, {3, 3}, {0}, {0}, {0}, 0, NULL, 1},
    {"Conv kernel larger than input with pads", 2, 1, 2, 3, 1, {2, 3}, {5, 5}, {0}, {0}, {2, 2, 2, 2}, 1, NULL,
     1},
};

static void conv_setup(vcase *c, const conv_case *k, const char *op, int transpose) {
    int64_t xd[5] = {k->n, k->c}, wd[5];
    wd[0] = transpose ? k->c : k->m;
    wd[1] = transpose ? k->m / k->group : k->c / k->group;
    for (int i = 0; i < k->r; i++) {
        xd[i + 2] = k->in[i];
        wd[i + 2] = k->k[i];
    }
    int64_t bd[1] = {k->m};
    vc_input(c, "x", xd, k->r + 2, -1, 1);
    vc_input(c, "w", wd, k->r + 2, -1, 1);
    if (k->bias) vc_input(c, "b", bd, 1, -1, 1);
    mb_node(c->m, op, k->bias ? "x,w,b" : "x,w", "y");
    if (k->group != 1) mb_attr_int(c->m, "group", k->group);
    if (k->strides[0]) mb_attr_ints(c->m, "strides", k->strides, (size_t)k->r);
    if (k->dil[0]) mb_attr_ints(c->m, "dilations", k->dil, (size_t)k->r);
    if (k->has_pads) mb_attr_ints(c->m, "pads", k->pads, 2 * (size_t)k->r);
    if (k->auto_pad) mb_attr_string(c->m, "auto_pad", k->auto_pad);
}

static void conv_cases(void) {
    for (size_t i = 0; i < LEN(CONV); i++) {
        vcase c;
        vc_begin(&c, CONV[i].label, 13, TOL_MM);
        conv_setup(&c, &CONV[i], "Conv", 0);
        vc_run(&c, 1);
    }
    /* kernel_shape given, opset 22, weights and bias resident on the device */
    {
        vcase c;
        vc_begin(&c, "Conv-22 initializer weights", 22, TOL_MM);
        int64_t xd[] = {1, 3, 8, 8}, wd[] = {4, 3, 3, 3}, bd[] = {4}, ks[] = {3, 3}, pads[] = {1, 1, 1, 1};
        float w[108], b[4];
        for (int i = 0; i < 108; i++) w[i] = frand(-1, 1);
        for (int i = 0; i < 4; i++) b[i] = frand(-1, 1);
        vc_input(&c, "x", xd, 4, -1, 1);
        mb_init_float(c.m, "w", wd, 4, w);
        mb_init_float(c.m, "b", bd, 1, b);
        c.n_weights = 2;
        mb_node(c.m, "Conv", "x,w,b", "y");
        mb_attr_ints(c.m, "kernel_shape", ks, 2);
        mb_attr_ints(c.m, "pads", pads, 4);
        vc_run(&c, 1);
    }
    /* a chain through the device: Conv, BatchNormalization, Relu, MaxPool */
    {
        vcase c;
        vc_begin(&c, "Conv BatchNormalization Relu MaxPool chain", 15, TOL_MM);
        int64_t xd[] = {1, 3, 16, 16}, wd[] = {8, 3, 3, 3}, cd[] = {8}, ks[] = {3, 3}, st[] = {2, 2},
                pads[] = {1, 1, 1, 1};
        vc_input(&c, "x", xd, 4, -1, 1);
        vc_input(&c, "w", wd, 4, -1, 1);
        vc_input(&c, "s", cd, 1, 0.5f, 1.5f);
        vc_input(&c, "bb", cd, 1, -1, 1);
        vc_input(&c, "mean", cd, 1, -0.5f, 0.5f);
        vc_input(&c, "var", cd, 1, 0.5f, 2);
        mb_node(c.m, "Conv", "x,w", "h");
        mb_attr_ints(c.m, "pads", pads, 4);
        mb_node(c.m, "BatchNormalization", "h,s,bb,mean,var", "bn");
        mb_node(c.m, "Relu", "bn", "r");
        mb_node(c.m, "MaxPool", "r", "y");
        mb_attr_ints(c.m, "kernel_shape", ks, 2);
        mb_attr_ints(c.m, "strides", st, 2);
        mb_attr_ints(c.m, "pads", pads, 4);
        vc_run(&c, 4);
    }
    /* extents unknown when nodes are placed: a symbolic batch and image size */
    {
        vcase c;
        vc_begin(&c, "Conv symbolic batch and size, then GlobalAveragePool", 13, TOL_MM);
        int64_t md[] = {-1, 4, -2, -2}, xd[] = {3, 4, 9, 7}, wd[] = {5, 4, 3, 3}, st[] = {2, 2};
        dyn_input(&c, "x", md, xd, 4, -1, 1);
        vc_input(&c, "w", wd, 4, -1, 1);
        mb_node(c.m, "Conv", "x,w", "h");
        mb_attr_ints(c.m, "strides", st, 2);
        mb_attr_string(c.m, "auto_pad", "SAME_UPPER");
        mb_node(c.m, "GlobalAveragePool", "h", "y");
        vc_run(&c, 2);
    }
    /* four spatial axes: left to the CPU */
    {
        vcase c;
        vc_begin(&c, "Conv 4-D spatial falls back", 13, TOL_MM);
        int64_t xd[] = {1, 2, 3, 3, 3, 3}, wd[] = {2, 2, 2, 2, 2, 2};
        vc_input(&c, "x", xd, 6, -1, 1);
        vc_input(&c, "w", wd, 6, -1, 1);
        mb_node(c.m, "Conv", "x,w", "y");
        vc_run(&c, 0);
    }
    /* channels that do not match the weights: both providers fail the run */
    {
        vcase c;
        vc_begin(&c, "Conv channel mismatch fails", 13, TOL_MM);
        int64_t xd[] = {1, 3, 5, 5}, wd[] = {2, 2, 3, 3};
        vc_input(&c, "x", xd, 4, -1, 1);
        mb_input(c.m, "w", ONYX_FLOAT32, NULL, -1);
        onyx_tensor *w = NULL;
        CHECK_OK(onyx_tensor_create(ONYX_FLOAT32, wd, 4, &w));
        memset(onyx_tensor_data(w), 0, onyx_tensor_nbytes(w));
        c.names[c.n_in] = "w";
        c.ins[c.n_in++] = w;
        mb_node(c.m, "Conv", "x,w", "y");
        vc_run_expect(&c, 1, "channels");
    }
}

/* ---- ConvTranspose ---- */

static void conv_transpose_cases(void) {
    static const conv_case CT[] = {
        {"ConvTranspose stride 2 pads 1 bias", 2, 2, 4, 3, 1, {5, 6}, {3, 3}, {2, 2}, {0}, {1, 1, 1, 1}, 1, NULL,
         1},
        {"ConvTranspose group 2 dilation 2", 2, 1, 4, 6, 2, {4, 5}, {3, 2}, {1, 2}, {2, 2}, {0}, 0, NULL, 0},
        {"ConvTranspose stride 3 asymmetric pads", 2, 1, 3, 2, 1, {4, 4}, {4, 4}, {3, 2}, {0}, {1, 0, 2, 1}, 1,
         NULL, 1},
        {"ConvTranspose SAME_UPPER", 2, 1, 2, 3, 1, {4, 5}, {3, 3}, {2, 2}, {0}, {0}, 0, "SAME_UPPER", 1},
        {"ConvTranspose SAME_LOWER", 2, 1, 2, 3, 1, {4, 5}, {3, 3}, {2, 2}, {0}, {0}, 0, "SAME_LOWER", 0},
        {"ConvTranspose 1-D", 1, 2, 3, 4, 1, {9}, {4}, {2}, {0}, {1, 0}, 1, NULL, 1},
        {"ConvTranspose 3-D", 3, 1, 2, 3, 1, {3, 4, 3}, {2, 3, 2}, {2, 1, 2}, {0}, {0}, 0, NULL, 1},
        {"ConvTranspose depthwise", 2, 1, 6, 6, 6, {7, 7}, {4, 4}, {2, 2}, {0}, {1, 1, 1, 1}, 1, NULL, 1},
        {"ConvTranspose empty batch", 2, 0, 2, 3, 1, {4, 4}, {3, 3}, {0}, {0}, {0}, 0, NULL, 0},
    };
    for (size_t i = 0; i < LEN(CT); i++) {
        vcase c;
        vc_begin(&c, CT[i].label, 13, TOL_MM);
        conv_setup(&c, &CT[i], "ConvTranspose", 1);
        vc_run(&c, 1);
    }
    static const int64_t OP[] = {1, 0};
    /* full size 11 x 13: cropped, and grown past it (negative pads) */
    static const int64_t OS[][2] = {{10, 12}, {12, 14}};
    static const char *const LABELS[] = {"ConvTranspose output_padding", "ConvTranspose output_shape",
                                         "ConvTranspose output_shape past the full size"};
    for (int v = 0; v < 3; v++) {
        vcase c;
        const conv_case k = {"", 2, 1, 3, 2, 1, {5, 6}, {3, 3}, {2, 2}, {0}, {0}, 0, NULL, 1};
        vc_begin(&c, LABELS[v], 11, TOL_MM);
        conv_setup(&c, &k, "ConvTranspose", 1);
        if (v)
            mb_attr_ints(c.m, "output_shape", OS[v - 1], 2);
        else
            mb_attr_ints(c.m, "output_padding", OP, 2);
        vc_run(&c, 1);
    }
}

/* ---- pools ---- */

typedef struct pool_case {
    const char *label, *op;
    int r;
    int64_t in[5];
    int64_t k[3], strides[3], dil[3]; /* 0: absent */
    int64_t pads[6];
    int has_pads, ceil, include_pad;
    const char *auto_pad;
    int opset;
} pool_case;

static void pool_cases(void) {
    static const pool_case P[] = {
        {"MaxPool 3x3 stride 2 pad 1", "MaxPool", 2, {2, 3, 17, 16}, {3, 3}, {2, 2}, {0}, {1, 1, 1, 1}, 1, 0, 0,
         NULL, 12},
        {"MaxPool ceil_mode", "MaxPool", 2, {1, 2, 10, 11}, {3, 2}, {2, 3}, {0}, {0}, 0, 1, 0, NULL, 12},
        {"MaxPool dilations asymmetric pads", "MaxPool", 2, {1, 3, 12, 9}, {2, 3}, {1, 2}, {2, 2},
         {1, 0, 0, 2}, 1, 0, 0, NULL, 12},
        {"MaxPool SAME_UPPER", "MaxPool", 2, {1, 2, 7, 8}, {3, 3}, {2, 2}, {0}, {0}, 0, 0, 0, "SAME_UPPER", 12},
        {"MaxPool SAME_LOWER", "MaxPool", 2, {1, 2, 7, 8}, {2, 2}, {2, 2}, {0}, {0}, 0, 0, 0, "SAME_LOWER", 22},
        {"MaxPool 1-D", "MaxPool", 1, {2, 3, 25}, {4}, {3}, {0}, {1, 2}, 1, 0, 0, NULL, 8},
        {"MaxPool 3-D", "MaxPool", 3, {1, 2, 5, 6, 7}, {2, 2, 3}, {2, 1, 2}, {0}, {0}, 0, 1, 0, NULL, 12},
        {"MaxPool-1", "MaxPool", 2, {1, 2, 6, 6}, {2, 2}, {2, 2}, {0}, {0}, 0, 0, 0, NULL, 1},
        {"AveragePool 3x3 pads", "AveragePool", 2, {2, 3, 11, 10}, {3, 3}, {2, 2}, {0}, {1, 1, 1, 1}, 1, 0, 0,
         NULL, 19},
        {"AveragePool count_include_pad", "AveragePool", 2, {2, 3, 11, 10}, {3, 3}, {2, 2}, {0}, {1, 1, 1, 1},
         1, 0, 1, NULL, 19},
        {"AveragePool ceil_mode count_include_pad", "AveragePool", 2, {1, 2, 10, 9}, {3, 3}, {2, 2}, {0},
         {1, 1, 0, 0}, 1, 1, 1, NULL, 19},
        {"AveragePool dilations", "AveragePool", 2, {1, 2, 10, 9}, {2, 2}, {1, 1}, {2, 3}, {0}, 0, 0, 0, NULL,
         19},
        {"AveragePool SAME_UPPER", "AveragePool", 2, {1, 2, 7, 8}, {3, 3}, {2, 2}, {0}, {0}, 0, 0, 0,
         "SAME_UPPER", 11},
        {"AveragePool 1-D", "AveragePool", 1, {2, 3, 25}, {4}, {2}, {0}, {0}, 0, 0, 0, NULL, 7},
        {"AveragePool 3-D include pad", "AveragePool", 3, {1, 2, 5, 6, 7}, {3, 3, 3}, {2, 2, 2}, {0},
         {1, 1, 1, 1, 1, 1}, 1, 0, 1, NULL, 11},
        {"AveragePool empty", "AveragePool", 2, {0, 2, 5, 5}, {2, 2}, {0}, {0}, {0}, 0, 0, 0, NULL, 11},
    };
    for (size_t i = 0; i < LEN(P); i++) {
        const pool_case *k = &P[i];
        vcase c;
        vc_begin(&c, k->label, k->opset, strcmp(k->op, "MaxPool") == 0 ? TOL_EW : TOL_MM);
        vc_input(&c, "x", k->in, k->r + 2, -4, 4);
        mb_node(c.m, k->op, "x", "y");
        mb_attr_ints(c.m, "kernel_shape", k->k, (size_t)k->r);
        if (k->strides[0]) mb_attr_ints(c.m, "strides", k->strides, (size_t)k->r);
        if (k->dil[0]) mb_attr_ints(c.m, "dilations", k->dil, (size_t)k->r);
        if (k->has_pads) mb_attr_ints(c.m, "pads", k->pads, 2 * (size_t)k->r);
        if (k->ceil) mb_attr_int(c.m, "ceil_mode", 1);
        if (k->include_pad) mb_attr_int(c.m, "count_include_pad", 1);
        if (k->auto_pad) mb_attr_string(c.m, "auto_pad", k->auto_pad);
        vc_run(&c, 1);
    }
    /* MaxPool's Indices output stays on the CPU */
    {
        vcase c;
        vc_begin(&c, "MaxPool with Indices falls back", 12, TOL_EW);
        int64_t xd[] = {1, 2, 6, 6}, ks[] = {2, 2};
        vc_input(&c, "x", xd, 4, -4, 4);
        mb_node(c.m, "MaxPool", "x", "y,i");
        mb_attr_ints(c.m, "kernel_shape", ks, 2);
        vc_output(&c, "y", ONYX_FLOAT32);
        vc_output(&c, "i", ONYX_INT64);
        vc_run(&c, 0);
    }
    static const struct {
        int rank;
        int64_t d[4];
    } G[] = {{4, {2, 5, 7, 9}}, {4, {1, 3, 70, 70}}, {3, {2, 4, 1}}, {3, {3, 2, 300}}, {4, {0, 3, 4, 4}},
             {4, {2, 3, 0, 4}}};
    for (int op = 0; op < 2; op++)
        for (size_t i = 0; i < LEN(G); i++) {
            vcase c;
            char label[64];
            snprintf(label, sizeof label, "%s case %zu", op ? "GlobalMaxPool" : "GlobalAveragePool", i);
            vc_begin(&c, label, op ? 1 : 22, op ? TOL_EW : TOL_MM);
            vc_input(&c, "x", G[i].d, G[i].rank, -4, 4);
            mb_node(c.m, op ? "GlobalMaxPool" : "GlobalAveragePool", "x", "y");
            vc_run(&c, 1);
        }
}

/* ---- normalizations ---- */

static void batchnorm_cases(void) {
    static const struct {
        int rank, opset;
        int64_t d[4];
        float eps;
    } B[] = {{4, 9, {2, 5, 7, 9}, 0}, {4, 14, {1, 16, 5, 5}, 1e-3f}, {4, 15, {3, 3, 4, 2}, 0},
             {2, 15, {6, 7}, 0},      {3, 15, {2, 4, 300}, 0.1f},    {4, 15, {0, 3, 2, 2}, 0}};
    for (size_t i = 0; i < LEN(B); i++) {
        vcase c;
        char label[64];
        snprintf(label, sizeof label, "BatchNormalization-%d case %zu", B[i].opset, i);
        vc_begin(&c, label, B[i].opset, TOL_MM);
        int64_t cd[] = {B[i].d[1]};
        vc_input(&c, "x", B[i].d, B[i].rank, -3, 3);
        vc_input(&c, "s", cd, 1, -2, 2);
        vc_input(&c, "b", cd, 1, -1, 1);
        vc_input(&c, "mean", cd, 1, -1, 1);
        vc_input(&c, "var", cd, 1, 0.1f, 3);
        mb_node(c.m, "BatchNormalization", "x,s,b,mean,var", "y");
        if (B[i].eps > 0) mb_attr_float(c.m, "epsilon", B[i].eps);
        vc_run(&c, 1);
    }
    /* training statistics stay on the CPU */
    vcase c;
    vc_begin(&c, "BatchNormalization training falls back", 15, TOL_MM);
    int64_t xd[] = {2, 3, 4, 4}, cd[] = {3};
    vc_input(&c, "x", xd, 4, -3, 3);
    vc_input(&c, "s", cd, 1, -2, 2);
    vc_input(&c, "b", cd, 1, -1, 1);
    vc_input(&c, "mean", cd, 1, -1, 1);
    vc_input(&c, "var", cd, 1, 0.1f, 3);
    mb_node(c.m, "BatchNormalization", "x,s,b,mean,var", "y");
    mb_attr_int(c.m, "training_mode", 1);
    vc_run(&c, 0);
}

static void instancenorm_cases(void) {
    static const struct {
        int rank;
        int64_t d[4];
    } I[] = {/* (one element per channel would normalize to exactly B here, while the
              * CPU's x * a + b loses ~1e-4 to cancellation: no such case) */
             {4, {2, 4, 5, 6}}, {3, {1, 3, 1000}}, {3, {2, 2, 2}}, {4, {0, 3, 2, 2}}, {4, {1, 2, 33, 31}}};
    for (size_t i = 0; i < LEN(I); i++) {
        vcase c;
        char label[64];
        snprintf(label, sizeof label, "InstanceNormalization case %zu", i);
        vc_begin(&c, label, i % 2 ? 6 : 22, TOL_MM);
        int64_t cd[] = {I[i].d[1]};
        vc_input(&c, "x", I[i].d, I[i].rank, -3, 5);
        vc_input(&c, "s", cd, 1, -2, 2);
        vc_input(&c, "b", cd, 1, -1, 1);
        mb_node(c.m, "InstanceNormalization", "x,s,b", "y");
        if (i == 1) mb_attr_float(c.m, "epsilon", 1e-2f);
        vc_run(&c, 1);
    }
}

static void layernorm_cases(void) {
    static const struct {
        int rank, axis, srank, bias;
        int64_t d[4], s[4];
        int on_vk;
    } L[] = {
        {3, -1, 1, 1, {2, 7, 33}, {33}, 1},
        {4, 1, 3, 0, {2, 3, 4, 5}, {3, 4, 5}, 1},
        {2, -1, 1, 1, {3, 768}, {768}, 1},
        {3, 2, 1, 1, {2, 3, 5}, {1}, 1},          /* one shared value */
        {3, -2, 2, 1, {2, 4, 6}, {4, 6}, 1},
        {2, 0, 2, 1, {3, 4}, {3, 4}, 1},          /* everything normalized together */
        {3, -1, 1, 1, {0, 2, 5}, {5}, 1},         /* empty */
        {3, -2, 2, 1, {2, 4, 5}, {1, 5}, 0},      /* broadcast inside the normalized shape */
    };
    for (size_t i = 0; i < LEN(L); i++) {
        vcase c;
        char label[64];
        snprintf(label, sizeof label, "LayerNormalization case %zu", i);
        vc_begin(&c, label, 17, TOL_MM);
        vc_input(&c, "x", L[i].d, L[i].rank, -3, 5);
        vc_input(&c, "s", L[i].s, L[i].srank, -2, 2);
        if (L[i].bias) vc_input(&c, "b", L[i].s, L[i].srank, -1, 1);
        mb_node(c.m, "LayerNormalization", L[i].bias ? "x,s,b" : "x,s", "y");
        mb_attr_int(c.m, "axis", L[i].axis);
        if (i == 2) mb_attr_float(c.m, "epsilon", 1e-6f);
        vc_run(&c, L[i].on_vk);
    }
    /* below opset 17: the ONNX-domain form ONNX Runtime registers (and
     * onyx's optimizer writes when it fuses the pattern in such a model,
     * PP-OCRv4's recogniser), the same computation */
    {
        vcase c;
        vc_begin(&c, "LayerNormalization at opset 13", 13, TOL_MM);
        int64_t xd[] = {2, 7, 33}, sd[] = {33};
        vc_input(&c, "x", xd, 3, -3, 5);
        vc_input(&c, "s", sd, 1, -2, 2);
        vc_input(&c, "b", sd, 1, -1, 1);
        mb_node(c.m, "LayerNormalization", "x,s,b", "y");
        mb_attr_int(c.m, "axis", -1);
        vc_run(&c, 1);
    }
    /* a symbolic row count and normalized extent */
    {
        vcase c;
        vc_begin(&c, "LayerNormalization symbolic extents", 17, TOL_MM);
        int64_t md[] = {-1, -2}, xd[] = {5, 40}, sd[] = {40};
        dyn_input(&c, "x", md, xd, 2, -3, 5);
        vc_input(&c, "s", sd, 1, -2, 2);
        vc_input(&c, "b", sd, 1, -1, 1);
        mb_node(c.m, "LayerNormalization", "x,s,b", "y");
        vc_run(&c, 1);
    }
    /* X of unknown rank: the axis counts from the end */
    for (int k = 0; k < 2; k++) {
        vcase c;
        vc_begin(&c, k ? "LayerNormalization unknown rank, broadcast Scale falls back"
                       : "LayerNormalization unknown rank", 17, TOL_MM);
        int64_t xd[] = {2, 3, 4, 24}, sd[] = {4, 24}, sb[] = {1, 24};
        onyx_tensor *t = NULL;
        CHECK_OK(onyx_tensor_create(ONYX_FLOAT32, xd, 4, &t));
        for (int64_t i = 0; i < count(xd, 4); i++) ((float *)onyx_tensor_data(t))[i] = frand(-3, 5);
        mb_input(c.m, "x", ONYX_FLOAT32, NULL, -1);
        c.names[c.n_in] = "x";
        c.ins[c.n_in++] = t;
        vc_input(&c, "s", k ? sb : sd, 2, -2, 2);
        vc_input(&c, "b", sd, 2, -1, 1);
        mb_node(c.m, "LayerNormalization", "x,s,b", "y");
        mb_attr_int(c.m, "axis", -2);
        vc_run(&c, !k);
    }
    /* the Mean and InvStdDev outputs stay on the CPU */
    vcase c;
    vc_begin(&c, "LayerNormalization with statistics falls back", 17, TOL_MM);
    int64_t xd[] = {2, 3, 8}, sd[] = {8};
    vc_input(&c, "x", xd, 3, -3, 5);
    vc_input(&c, "s", sd, 1, -2, 2);
    mb_node(c.m, "LayerNormalization", "x,s", "y,mean,inv");
    vc_output(&c, "y", ONYX_FLOAT32);
    vc_output(&c, "mean", ONYX_FLOAT32);
    vc_output(&c, "inv", ONYX_FLOAT32);
    vc_run(&c, 0);
}

static void groupnorm_cases(void) {
    static const struct {
        int opset, rank, groups;
        int64_t d[4];
    } G[] = {{18, 4, 3, {2, 6, 5, 7}}, {21, 4, 3, {2, 6, 5, 7}}, {21, 3, 2, {1, 8, 100}},
             {18, 4, 1, {1, 4, 3, 3}}, {21, 4, 4, {1, 4, 3, 3}}, {21, 4, 2, {0, 4, 3, 3}}};
    for (size_t i = 0; i < LEN(G); i++) {
        vcase c;
        char label[64];
        snprintf(label, sizeof label, "GroupNormalization-%d case %zu", G[i].opset, i);
        vc_begin(&c, label, G[i].opset, TOL_MM);
        int64_t pd[] = {G[i].opset >= 21 ? G[i].d[1] : G[i].groups};
        vc_input(&c, "x", G[i].d, G[i].rank, -3, 5);
        vc_input(&c, "s", pd, 1, -2, 2);
        vc_input(&c, "b", pd, 1, -1, 1);
        mb_node(c.m, "GroupNormalization", "x,s,b", "y");
        mb_attr_int(c.m, "num_groups", G[i].groups);
        vc_run(&c, 1);
    }
}

/* ---- GridSample ---- */

static void grid_sample_cases(void) {
    static const char *MODES[] = {"bilinear", "nearest"}, *PADS[] = {"zeros", "border", "reflection"};
    for (int m = 0; m < 2; m++)
        for (int pd = 0; pd < 3; pd++)
            for (int al = 0; al < 2; al++) {
                vcase c;
                char label[96];
                int opset = (m + pd + al) % 2 ? 16 : 22;
                snprintf(label, sizeof label, "GridSample-%d %s %s align_corners %d", opset, MODES[m], PADS[pd],
                         al);
                vc_begin(&c, label, opset, TOL_MM);
                int64_t xd[] = {2, 3, 5, 7}, gd[] = {2, 4, 6, 2};
                vc_input(&c, "x", xd, 4, -2, 2);
                vc_input(&c, "g", gd, 4, -2.5f, 2.5f); /* well past the borders too */
                mb_node(c.m, "GridSample", "x,g", "y");
                mb_attr_string(c.m, "mode", opset >= 20 && m == 0 ? "linear" : MODES[m]);
                mb_attr_string(c.m, "padding_mode", PADS[pd]);
                mb_attr_int(c.m, "align_corners", al);
                vc_run(&c, 1);
            }
    /* grid points on exact half-pixel positions: nearest mode's ties */
    for (int al = 0; al < 2; al++) {
        vcase c;
        vc_begin(&c, al ? "GridSample nearest ties, align_corners" : "GridSample nearest ties", 20, TOL_EW);
        int64_t xd[] = {1, 2, 4, 5}, gd[] = {1, 3, 17, 2};
        float g[3 * 17 * 2];
        for (int i = 0; i < 3 * 17; i++) {
            g[2 * i] = (float)(i % 17) / 8.0f - 1.0f;
            g[2 * i + 1] = (float)(i / 17) / 4.0f - 0.25f;
        }
        vc_input(&c, "x", xd, 4, -2, 2);
        mb_init_float(c.m, "g", gd, 4, g);
        c.n_weights = 1;
        mb_node(c.m, "GridSample", "x,g", "y");
        mb_attr_string(c.m, "mode", "nearest");
        mb_attr_int(c.m, "align_corners", al);
        vc_run(&c, 1);
    }
    /* volumetric (GridSample-20): 5-D data, (x, y, z) points */
    for (int m = 0; m < 2; m++)
        for (int pd = 0; pd < 3; pd++) {
            vcase c;
            char label[96];
            int al = (m + pd) % 2;
            snprintf(label, sizeof label, "GridSample 5-D %s %s align_corners %d", m ? "nearest" : "linear",
                     PADS[pd], al);
            vc_begin(&c, label, 22, TOL_MM);
            int64_t xd[] = {2, 3, 4, 5, 6}, gd[] = {2, 3, 2, 4, 3};
            vc_input(&c, "x", xd, 5, -2, 2);
            vc_input(&c, "g", gd, 5, -1.8f, 1.8f);
            mb_node(c.m, "GridSample", "x,g", "y");
            mb_attr_string(c.m, "mode", m ? "nearest" : "linear");
            mb_attr_string(c.m, "padding_mode", PADS[pd]);
            mb_attr_int(c.m, "align_corners", al);
            vc_run(&c, 1);
        }
    /* axes of one element: every coordinate maps to it, or reflects to it */
    for (int pd = 0; pd < 3; pd++)
        for (int al = 0; al < 2; al++) {
            vcase c;
            char label[96];
            snprintf(label, sizeof label, "GridSample one-row input %s align_corners %d", PADS[pd], al);
            vc_begin(&c, label, 20, TOL_MM);
            int64_t xd[] = {1, 2, 1, 5}, gd[] = {1, 3, 4, 2};
            vc_input(&c, "x", xd, 4, -2, 2);
            vc_input(&c, "g", gd, 4, -1.5f, 1.5f);
            mb_node(c.m, "GridSample", "x,g", "y");
            mb_attr_string(c.m, "padding_mode", PADS[pd]);
            mb_attr_int(c.m, "align_corners", al);
            vc_run(&c, 1);
        }
    /* default attributes, one channel, a large grid */
    {
        vcase c;
        vc_begin(&c, "GridSample defaults large grid", 16, TOL_MM);
        int64_t xd[] = {1, 1, 32, 32}, gd[] = {1, 40, 50, 2};
        vc_input(&c, "x", xd, 4, -2, 2);
        vc_input(&c, "g", gd, 4, -1, 1);
        mb_node(c.m, "GridSample", "x,g", "y");
        vc_run(&c, 1);
    }
    /* bicubic stays on the CPU */
    vcase c;
    vc_begin(&c, "GridSample bicubic falls back", 16, TOL_MM);
    int64_t xd[] = {1, 2, 4, 5}, gd[] = {1, 3, 3, 2};
    vc_input(&c, "x", xd, 4, -2, 2);
    vc_input(&c, "g", gd, 4, -1, 1);
    mb_node(c.m, "GridSample", "x,g", "y");
    mb_attr_string(c.m, "mode", "bicubic");
    vc_run(&c, 0);
}

void vulkan_nn_cases(void) {
    conv_cases();
    conv_transpose_cases();
    pool_cases();
    batchnorm_cases();
    instancenorm_cases();
    layernorm_cases();
    groupnorm_cases();
    grid_sample_cases();
}
