/* The Vulkan provider's kernels for convolutions, pooling and
 * normalizations (float32): the family's table, the attribute checks its
 * files share, and GridSample. Conv and ConvTranspose live in
 * vk_nn_conv.c, the pools in vk_nn_pool.c, the normalizations in
 * vk_nn_norm.c. None of these operators has a shape-like input: every
 * input is data on the device. */
#include <inttypes.h>
#include <string.h>

#include "ep/cpu/kernels/gemm.h"
#include "ep/vulkan/vk_nn.h"

OX_VK_SHADER(nn_grid_sample)

/* ---- shared checks ---- */

int ox_vk_nn_attr_ints(ox_kernel_ctx *c, const char *name, int want, const int64_t **v) {
    size_t n = 0;
    *v = ir_attr_ints(c->node, name, &n);
    if (*v && (int)n != want)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: attribute '%s' has %zu values, expected %d",
                              c->node->op_type, name, n, want);
    return 0;
}

/* The attribute is absent, or has `count` values within [lo, hi]. */
static int ints_in(const ir_node *node, const char *name, size_t count, int64_t lo, int64_t hi) {
    size_t n = 0;
    const int64_t *v = ir_attr_ints(node, name, &n);
    if (!v) return 1;
    if (n != count) return 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] < lo || v[i] > hi) return 0;
    return 1;
}

int ox_vk_nn_window_attrs_ok(const ir_node *node, int r) {
    if (r < 1 || r > VK_NN_MAX_SPATIAL) return 0;
    size_t nos = 0;
    ir_attr_ints(node, "output_shape", &nos);
    return ints_in(node, "kernel_shape", (size_t)r, 1, VK_NN_MAX_ATTR) &&
           ints_in(node, "strides", (size_t)r, 1, VK_NN_MAX_ATTR) &&
           ints_in(node, "dilations", (size_t)r, 1, VK_NN_MAX_ATTR) &&
           ints_in(node, "pads", 2 * (size_t)r, 0, VK_NN_MAX_ATTR) &&
           ints_in(node, "output_padding", (size_t)r, 0, VK_NN_MAX_ATTR) &&
           ints_in(node, "output_shape", nos == (size_t)r + 2 ? nos : (size_t)r, 0, OX_VK_MAX_ELEMS) &&
           ox_parse_auto_pad(ir_attr_string(node, "auto_pad", "NOTSET")) >= 0;
}

int ox_vk_nn_rank_in(const ir_type *t, int lo, int hi) {
    return t && t->rank >= lo && t->rank <= hi;
}

/* ---- GridSample ---- */

enum { GS_LINEAR, GS_NEAREST };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };

/* Version 16 names the modes bilinear / bicubic, 20 on linear / cubic;
 * cubic stays on the CPU. */
static int gs_mode(const ir_node *node) {
    const char *m = ir_attr_string(node, "mode", node->opset >= 20 ? "linear" : "bilinear");
    if (!strcmp(m, "linear") || !strcmp(m, "bilinear")) return GS_LINEAR;
    if (!strcmp(m, "nearest")) return GS_NEAREST;
    return -1;
}

static int gs_pad(const ir_node *node) {
    const char *s = ir_attr_string(node, "padding_mode", "zeros");
    return !strcmp(s, "zeros")    ? GS_ZEROS
           : !strcmp(s, "border") ? GS_BORDER
           : !strcmp(s, "reflection") ? GS_REFLECTION
                                      : -1;
}

/* 4-D and 5-D data (two or three spatial axes), the grid of the same
 * rank. */
static int s_grid_sample(const ir_node *node, const ir_type *const *in, int n) {
    if (n != 2 || !ox_vk_f32_inputs(in, n, 2) || gs_mode(node) < 0 || gs_pad(node) < 0) return 0;
    int r = in[0]->rank;
    return (r == 4 || r == 5) && in[1]->rank == r && (in[1]->dims[r - 1] < 0 || in[1]->dims[r - 1] == r - 2);
}

static int k_grid_sample(ox_kernel_ctx *c) {
    if (ox_vk_check_io(c, ox_vk_nn_host_inputs(c->node)) != 0) return -1;
    const ox_tensor *x = c->inputs[0], *grid = c->inputs[1];
    ox_tensor *y = c->outputs[0];
    int r = x->rank - 2;
    if ((r != 2 && r != 3) || grid->rank != x->rank || grid->dims[r + 1] != r || grid->dims[0] != x->dims[0])
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                              "GridSample: expected X (N, C, D1..Dr) and grid (N, D1_out..Dr_out, r) "
                              "with r 2 or 3; got ranks %d and %d", x->rank, grid->rank);
    int64_t N = x->dims[0], C = x->dims[1];
    int ok = y->rank == x->rank && y->dims[0] == N && y->dims[1] == C;
    for (int d = 0; ok && d < r; d++) ok = y->dims[d + 2] == grid->dims[d + 1];
    if (!ok) return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "GridSample: output shape does not match inputs");
    int mode = gs_mode(c->node), pad = gs_pad(c->node);
    if (mode < 0 || pad < 0)
        return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "vulkan GridSample: unsupported mode or padding_mode");
    if (ox_tensor_numel(y) == 0) return 0;
    /* a 4-D input is a 5-D one with a depth of 1 */
    int lead = 3 - r;
    struct { uint32_t N, C, in[3], out[3], mode, pad, align, rank; } p = {
        (uint32_t)N, (uint32_t)C, {1, 1, 1}, {1, 1, 1}, (uint32_t)mode, (uint32_t)pad,
        ir_attr_int(c->node, "align_corners", 0) != 0, (uint32_t)r};
    int64_t points = N;
    for (int d = 0; d < r; d++) {
        p.in[lead + d] = (uint32_t)x->dims[d + 2];
        p.out[lead + d] = (uint32_t)grid->dims[d + 1];
        points *= grid->dims[d + 1];
    }
    vk_dispatch d = {.shader = &VK_SHADER_nn_grid_sample, .bufs = {ox_vk_buf(x), ox_vk_buf(grid), ox_vk_buf(y)},
                     .push = &p, .push_bytes = sizeof p,
                     .groups = {ox_vk_groups(ox_vk_of(c), points, ox_vk_of(c)->wg, 0), 1, 1}};
    return ox_vk_run(c, &d);
}

/* ---- the table ---- */

/* Operator versions as the ONNX schemas number them. Conv and
 * ConvTranspose 1..22, the pools and InstanceNormalization change only
 * in attributes these kernels read with the old defaults or in types;
 * BatchNormalization from 9 (no `spatial`), LayerNormalization 17 and
 * below it the ONNX-domain form ONNX Runtime registers from opset 1 (the
 * same computation; onyx's optimizer writes it in older models),
 * GroupNormalization 18 (per-group parameters) and 21 (per channel),
 * GridSample 16..22 on 4-D and 5-D data. */
static const ox_kernel_def KERNELS[] = {
    {"", "Conv", 1, 22, ox_vk_nn_conv, ox_vk_nn_s_conv, NULL, NULL, NULL},
    {"onyx", "FusedConv", 1, 1, ox_vk_nn_fused_conv, ox_vk_nn_s_fused_conv, NULL, NULL, NULL},
    {"", "ConvTranspose", 1, 22, ox_vk_nn_conv_transpose, ox_vk_nn_s_conv_transpose, NULL, NULL, NULL},
    {"", "MaxPool", 1, 22, ox_vk_nn_maxpool, ox_vk_nn_s_pool, NULL, NULL, NULL},
    {"", "AveragePool", 1, 22, ox_vk_nn_avgpool, ox_vk_nn_s_pool, NULL, NULL, NULL},
    {"", "GlobalAveragePool", 1, 22, ox_vk_nn_global_avg, ox_vk_nn_s_global_pool, NULL, NULL, NULL},
    {"", "GlobalMaxPool", 1, 22, ox_vk_nn_global_max, ox_vk_nn_s_global_pool, NULL, NULL, NULL},
    {"", "BatchNormalization", 9, 15, ox_vk_nn_batchnorm, ox_vk_nn_s_batchnorm, NULL, NULL, NULL},
    {"", "InstanceNormalization", 6, 22, ox_vk_nn_instancenorm, ox_vk_nn_s_instancenorm, NULL, NULL, NULL},
    {"", "LayerNormalization", 1, 17, ox_vk_nn_layernorm, ox_vk_nn_s_layernorm, NULL, NULL, NULL},
    {"", "GroupNormalization", 18, 21, ox_vk_nn_groupnorm, ox_vk_nn_s_groupnorm, NULL, NULL, NULL},
    {"", "GridSample", 16, 22, k_grid_sample, s_grid_sample, NULL, NULL, NULL},
};

const ox_kernel_table ox_vk_kernels_nn = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};

uint32_t ox_vk_nn_host_inputs(const ir_node *node) {
    (void)node;
    return 0;
}
