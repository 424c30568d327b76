/* Vulkan-versus-CPU cases for the fused operators on the Vulkan provider.
 * onyx FusedConv (vk_nn_conv.c, shaders/conv_epilogue.glsl): every
 * activation through the implicit-GEMM shader, the depthwise one and the
 * float16-weight variant, a residual Z, the input scale S (one row, or
 * one per image), the fusion pass writing FusedConv in a session with the
 * device (so the fused node lands there), and a Z that broadcasts, which
 * the device declines to the CPU at run time. onyx FusedMatMul
 * (vk_kernels.c, shaders/matmul.glsl) with every activation, transB, a
 * bias, A of rank 1 and 4; com.microsoft Gelu; and the passes fusing an
 * exporter's MatMul + bias + Erf-written GELU into one FusedMatMul on the
 * device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ep/vulkan/vk_ep.h"
#include "runtime/session.h"
#include "vulkan_case.h"

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

typedef struct fused_case {
    const char *activation;
    int n_params;
    float params[2];
    int depthwise;   /* else a 3x3 Conv of 5 to 7 channels (the GEMM shader) */
    int residual;    /* Z with the output's shape */
    int scale;       /* S: 1 one row [1, C, 1, 1], 2 one per image [N, C, 1, 1] */
} fused_case;

static const fused_case FUSED[] = {
    {"", 0, {0}, 0, 1, 0},
    {"Relu", 0, {0}, 0, 1, 2},
    {"Clip", 2, {-0.5f, 1.5f}, 0, 0, 1},
    {"Sigmoid", 0, {0}, 1, 1, 0},
    {"HardSigmoid", 2, {0.3f, 0.4f}, 0, 0, 0},
    {"HardSwish", 0, {0}, 1, 0, 2},
    {"SiLU", 0, {0}, 0, 1, 1},
    {"LeakyRelu", 1, {0.2f}, 1, 1, 1},
    {"Tanh", 0, {0}, 0, 0, 2},
    {"Gelu", 0, {0}, 1, 0, 0},
    {"GeluTanh", 0, {0}, 0, 1, 0},
};

/* x [2, C, 9, 8] -> FusedConv (3x3, pads 1, bias) with the case's
 * activation, Z and S. */
static void fused_kernel_cases(void) {
    for (size_t i = 0; i < LEN(FUSED); i++) {
        const fused_case *k = &FUSED[i];
        char label[128];
        snprintf(label, sizeof label, "FusedConv %s %s%s%s", k->activation[0] ? k->activation : "none",
                 k->depthwise ? "depthwise" : "3x3", k->residual ? " + Z" : "",
                 k->scale == 1 ? ", S per channel" : k->scale == 2 ? ", S per image" : "");
        vcase c;
        vc_begin(&c, label, 13, TOL_MM);
        int64_t C = k->depthwise ? 6 : 5, M = k->depthwise ? 6 : 7;
        int64_t xd[] = {2, C, 9, 8}, wd[] = {M, k->depthwise ? 1 : C, 3, 3}, bd[] = {M}, yd[] = {2, M, 9, 8};
        int64_t sd[] = {k->scale == 2 ? 2 : 1, C, 1, 1}, pads[] = {1, 1, 1, 1};
        vc_input(&c, "x", xd, 4, -3, 3);
        vc_input(&c, "w", wd, 4, -1, 1);
        vc_input(&c, "b", bd, 1, -1, 1);
        if (k->residual) vc_input(&c, "z", yd, 4, -2, 2);
        if (k->scale) vc_input(&c, "s", sd, 4, 0, 2);
        char ins[32];
        snprintf(ins, sizeof ins, "x,w,b,%s%s", k->residual ? "z" : "", k->scale ? ",s" : "");
        mb_node(c.m, "FusedConv", ins, "y");
        mb_domain(c.m, "onyx", 1);
        mb_attr_ints(c.m, "pads", pads, 4);
        if (k->depthwise) mb_attr_int(c.m, "group", C);
        if (k->activation[0]) mb_attr_string(c.m, "activation", k->activation);
        if (k->n_params) mb_attr_floats(c.m, "activation_params", k->params, (size_t)k->n_params);
        vc_run(&c, 1);
    }
    /* the pointwise path (1x1, no pads) with S and Z, as a gated projection
     * with a residual is written, and weights that float16 holds, so the
     * device reads them as halves (nn_conv_gemm_w16) */
    {
        vcase c;
        vc_begin(&c, "FusedConv pointwise, S and Z, float16-exact weights", 13, TOL_MM);
        int64_t xd[] = {2, 24, 7, 7}, wd[] = {16, 24, 1, 1}, yd[] = {2, 16, 7, 7}, sd[] = {2, 24, 1, 1};
        float w[16 * 24];
        for (int i = 0; i < 16 * 24; i++) w[i] = (float)((i * 37) % 129 - 64) / 64.0f;
        vc_input(&c, "x", xd, 4, -1, 1);
        mb_init_float(c.m, "w", wd, 4, w);
        c.n_weights = c.half_weights = 1;
        vc_input(&c, "z", yd, 4, -1, 1);
        vc_input(&c, "s", sd, 4, 0, 1);
        mb_node(c.m, "FusedConv", "x,w,,z,s", "y");
        mb_domain(c.m, "onyx", 1);
        mb_attr_string(c.m, "activation", "Relu");
        vc_run(&c, 1);
    }
}

/* Conv, a residual Add and Relu as an exporter writes them: the fusion
 * pass makes them one FusedConv in the session with the device too, and
 * that node runs there (three nodes on the device without the fusion). */
static void fused_by_the_optimizer_case(void) {
    vcase c;
    vc_begin(&c, "Conv + Add + Relu fused for the device", 13, TOL_MM);
    int64_t xd[] = {1, 4, 10, 10}, wd[] = {6, 4, 3, 3}, bd[] = {6}, yd[] = {1, 6, 10, 10}, pads[] = {1, 1, 1, 1};
    float w[6 * 4 * 9], b[6];
    for (int i = 0; i < 6 * 4 * 9; i++) w[i] = frand(-1, 1);
    for (int i = 0; i < 6; i++) b[i] = frand(-1, 1);
    vc_input(&c, "x", xd, 4, -1, 1);
    vc_input(&c, "r", yd, 4, -1, 1);
    mb_init_float(c.m, "w", wd, 4, w);
    mb_init_float(c.m, "b", bd, 1, b);
    c.n_weights = 2;
    mb_node(c.m, "Conv", "x,w,b", "h");
    mb_attr_ints(c.m, "pads", pads, 4);
    mb_node(c.m, "Add", "h,r", "a");
    mb_node(c.m, "Relu", "a", "y");
    vc_run(&c, 1);
}

/* Z [1, M, 1, 1] broadcasts into Y, which the shader does not do: the
 * node is placed on the device and declines at run time, and the CPU's
 * result comes back. */
static void fused_decline_case(void) {
    mb_model *m = mb_new(13);
    int64_t xd[] = {1, 3, 6, 6}, wd[] = {4, 3, 3, 3}, zd[] = {1, 4, 1, 1};
    mb_input(m, "x", ONYX_FLOAT32, xd, 4);
    mb_input(m, "w", ONYX_FLOAT32, wd, 4);
    mb_input(m, "z", ONYX_FLOAT32, zd, 4);
    mb_node(m, "FusedConv", "x,w,,z", "y");
    mb_domain(m, "onyx", 1);
    mb_attr_string(m, "activation", "Relu");
    mb_output(m, "y", ONYX_FLOAT32, NULL, -1);
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *vk = vc_session(buf, len, 1), *cpu = vc_session(buf, len, 0);
    free(buf);
    onyx_tensor *in[3] = {0}, *yv = NULL, *yc = NULL;
    const int64_t *dims[] = {xd, wd, zd};
    for (int i = 0; i < 3; i++) {
        CHECK_OK(onyx_tensor_create(ONYX_FLOAT32, dims[i], 4, &in[i]));
        float *p = onyx_tensor_data(in[i]);
        for (int64_t j = 0; p && j < onyx_tensor_numel(in[i]); j++) p[j] = frand(-1, 1);
    }
    const char *names[] = {"x", "w", "z"}, *out = "y";
    n_cases++;
    if (vk && cpu) {
        CHECK(vc_on_vulkan(vk) == 1);
        CHECK_OK(onyx_session_run(vk, names, (const onyx_tensor *const *)in, 3, &out, &yv, 1));
        CHECK_OK(onyx_session_run(cpu, names, (const onyx_tensor *const *)in, 3, &out, &yc, 1));
        onyx_provider_stats st;
        CHECK_OK(onyx_session_provider_stats(vk, "vulkan", &st));
        CHECK(st.cpu_fallbacks == 1);
    }
    if (yv && yc) {
        CHECK(onyx_tensor_numel(yv) == 4 * 4 * 4);
        CHECK(memcmp(onyx_tensor_data(yv), onyx_tensor_data(yc), onyx_tensor_nbytes(yc)) == 0);
    }
    onyx_tensor_free(yv);
    onyx_tensor_free(yc);
    for (int i = 0; i < 3; i++) onyx_tensor_free(in[i]);
    onyx_session_free(vk);
    onyx_session_free(cpu);
}

/* A [2, 3, 5, 24] (or [24]) times B [24, 10] (stored [10, 24] with
 * transB), a bias, the activation. */
static void fused_matmul_cases(void) {
    for (size_t i = 0; i < LEN(FUSED); i++) {
        const fused_case *k = &FUSED[i];
        int trans = (int)(i % 2), vector = i == 4, bias = i != 7;
        char label[128];
        snprintf(label, sizeof label, "FusedMatMul %s%s%s%s", k->activation[0] ? k->activation : "none",
                 trans ? " transB" : "", vector ? " A a vector" : "", bias ? " bias" : "");
        vcase c;
        vc_begin(&c, label, 13, TOL_MM);
        int64_t ad[] = {2, 3, 5, 24}, bd[] = {trans ? 10 : 24, trans ? 24 : 10}, cd[] = {10};
        if (vector) vc_input(&c, "a", ad + 3, 1, -3, 3);
        else vc_input(&c, "a", ad, 4, -3, 3);
        vc_input(&c, "b", bd, 2, -1, 1);
        if (bias) vc_input(&c, "c", cd, 1, -1, 1);
        mb_node(c.m, "FusedMatMul", bias ? "a,b,c" : "a,b", "y");
        mb_domain(c.m, "onyx", 1);
        if (trans) mb_attr_int(c.m, "transB", 1);
        if (k->activation[0]) mb_attr_string(c.m, "activation", k->activation);
        if (k->n_params) mb_attr_floats(c.m, "activation_params", k->params, (size_t)k->n_params);
        vc_run(&c, 1);
    }
    {
        vcase c;
        vc_begin(&c, "com.microsoft Gelu", 13, TOL_EW);
        int64_t xd[] = {3, 37};
        vc_input(&c, "x", xd, 2, -5, 5);
        mb_node(c.m, "Gelu", "x", "y");
        mb_domain(c.m, "com.microsoft", 1);
        vc_run(&c, 1);
    }
}

/* x W + b, then GELU as exporters before opset 20 write it
 * (x * 0.5 * (1 + Erf(x / sqrt 2))): fuse_gelu and fuse_matmul make the
 * six nodes one FusedMatMul, which runs on the device. */
static void fused_matmul_by_the_optimizer_case(void) {
    vcase c;
    vc_begin(&c, "MatMul + Add + Erf GELU fused for the device", 17, TOL_MM);
    int64_t xd[] = {4, 32}, wd[] = {32, 16}, bd[] = {16}, one[] = {1};
    float w[32 * 16], b[16], half = 0.5f, one_f = 1.0f, rs2 = 1.41421356f;
    for (int i = 0; i < 32 * 16; i++) w[i] = frand(-0.5f, 0.5f);
    for (int i = 0; i < 16; i++) b[i] = frand(-1, 1);
    vc_input(&c, "x", xd, 2, -2, 2);
    mb_init_float(c.m, "w", wd, 2, w);
    mb_init_float(c.m, "b", bd, 1, b);
    mb_init_float(c.m, "half", one, 0, &half);
    mb_init_float(c.m, "one", one, 0, &one_f);
    mb_init_float(c.m, "sqrt2", one, 0, &rs2);
    c.n_weights = 2;
    mb_node(c.m, "MatMul", "x,w", "h");
    mb_node(c.m, "Add", "h,b", "hb");
    mb_node(c.m, "Div", "hb,sqrt2", "d");
    mb_node(c.m, "Erf", "d", "e");
    mb_node(c.m, "Add", "e,one", "e1");
    mb_node(c.m, "Mul", "hb,e1", "m");
    mb_node(c.m, "Mul", "m,half", "y");
    vc_run(&c, 1);
}

void vulkan_fused_cases(void) {
    fused_kernel_cases();
    fused_matmul_cases();
    fused_matmul_by_the_optimizer_case();
    fused_by_the_optimizer_case();
    fused_decline_case();
}
