/* The Vulkan provider's pooling kernels (float32): MaxPool (its single
 * output form) and AveragePool over one to three spatial axes
 * (nn_pool.comp), GlobalAveragePool and GlobalMaxPool over any rank
 * (nn_global_pool.comp). Window geometry comes from ox_window_axis, as
 * on the CPU. */
#include <inttypes.h>
#include <string.h>

#include "ep/cpu/kernels/gemm.h"
#include "ep/vulkan/vk_nn.h"

OX_VK_SHADER(nn_pool)
OX_VK_SHADER(nn_global_pool)

typedef struct pool_push {
    uint32_t planes;
    uint32_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
    uint32_t avg, include_pad;
} pool_push;

/* ---- placement ---- */

/* MaxPool with its Indices output (and so storage_order) stays on the
 * CPU; the kernel_shape must give the spatial rank. */
int ox_vk_nn_s_pool(const ir_node *node, const ir_type *const *in, int n) {
    if (n != 1 || !ox_vk_f32_inputs(in, n, 1) || !ox_vk_nn_rank_in(in[0], 3, 2 + VK_NN_MAX_SPATIAL))
        return 0;
    for (int i = 1; i < node->n_outputs; i++)
        if (node->outputs[i] >= 0) return 0;
    size_t nk = 0;
    const int64_t *k = ir_attr_ints(node, "kernel_shape", &nk);
    return k && (int)nk == in[0]->rank - 2 && ox_vk_nn_window_attrs_ok(node, (int)nk);
}

int ox_vk_nn_s_global_pool(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    return n == 1 && ox_vk_f32_inputs(in, n, 1) && in[0]->rank >= 2;
}

/* ---- kernels ---- */

static int window_pool(ox_kernel_ctx *c, int avg) {
    if (ox_vk_check_io(c, ox_vk_nn_host_inputs(c->node)) != 0) return -1;
    const char *op = c->node->op_type;
    const ox_tensor *x = c->inputs[0];
    ox_tensor *y = c->outputs[0];
    int r = x->rank - 2;
    const int64_t *k, *st, *dl, *pads;
    if (r < 1 || r > VK_NN_MAX_SPATIAL || y->rank != x->rank)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: input must have rank 3 to 5", op);
    if (ox_vk_nn_attr_ints(c, "kernel_shape", r, &k) || ox_vk_nn_attr_ints(c, "strides", r, &st) ||
        ox_vk_nn_attr_ints(c, "dilations", r, &dl) || ox_vk_nn_attr_ints(c, "pads", 2 * r, &pads))
        return -1;
    if (!k) return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: kernel_shape is required", op);
    int ap = ox_parse_auto_pad(ir_attr_string(c->node, "auto_pad", "NOTSET"));
    if (ap < 0) return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: unknown auto_pad", op);
    int ceil_mode = ir_attr_int(c->node, "ceil_mode", 0) != 0;
    if (y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1])
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "%s: output shape does not match input", op);
    pool_push p = {.planes = (uint32_t)(x->dims[0] * x->dims[1]), .avg = (uint32_t)avg,
                   .include_pad = avg && ir_attr_int(c->node, "count_include_pad", 0) != 0};
    for (int a = 0; a < VK_NN_MAX_SPATIAL; a++) {
        int i = a - (VK_NN_MAX_SPATIAL - r); /* < 0: a leading axis of extent 1 */
        if (i < 0) {
            p.in[a] = p.out[a] = p.k[a] = p.s[a] = p.d[a] = 1;
            p.pb[a] = p.pe[a] = 0;
            continue;
        }
        int64_t pb = pads ? pads[i] : 0, pe = pads ? pads[i + r] : 0, o;
        int64_t s = st ? st[i] : 1, d = dl ? dl[i] : 1, in = x->dims[i + 2];
        if (ox_window_axis(in, k[i], s, d, ap, ceil_mode, &pb, &pe, &o))
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                                  "%s: invalid window on spatial axis %d (kernel %" PRId64 ", input %" PRId64 ")",
                                  op, i, k[i], in);
        if (o != y->dims[i + 2])
            return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "%s: output shape does not match input", op);
        /* the shader computes o * s - pb and in + pe in 32-bit signed integers */
        if (in > VK_NN_MAX_ATTR * 1024 || pb > VK_NN_MAX_ATTR || pe > VK_NN_MAX_ATTR ||
            o * s > (int64_t)VK_NN_MAX_ATTR * 1024)
            return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED,
                                  "vulkan %s: window on spatial axis %d is out of the supported range", op, i);
        p.in[a] = (uint32_t)in;
        p.out[a] = (uint32_t)o;
        p.k[a] = (uint32_t)k[i];
        p.s[a] = (uint32_t)s;
        p.d[a] = (uint32_t)d;
        p.pb[a] = (uint32_t)pb;
        p.pe[a] = (uint32_t)pe;
    }
    int64_t n = ox_tensor_numel(y);
    if (n == 0) return 0;
    vk_dispatch dd = {.shader = &VK_SHADER_nn_pool, .bufs = {ox_vk_buf(x), ox_vk_buf(y)}, .push = &p,
                      .push_bytes = sizeof p, .groups = {ox_vk_groups(ox_vk_of(c), n, ox_vk_of(c)->wg, 0), 1, 1},
                      .cost = (uint64_t)p.k[0] * p.k[1] * p.k[2]};
    return ox_vk_run(c, &dd);
}

int ox_vk_nn_maxpool(ox_kernel_ctx *c) { return window_pool(c, 0); }
int ox_vk_nn_avgpool(ox_kernel_ctx *c) { return window_pool(c, 1); }

static int global_pool(ox_kernel_ctx *c, int avg) {
    if (ox_vk_check_io(c, ox_vk_nn_host_inputs(c->node)) != 0) return -1;
    const ox_tensor *x = c->inputs[0];
    ox_tensor *y = c->outputs[0];
    if (x->rank < 2)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: input must have rank >= 2", c->node->op_type);
    int64_t planes = x->dims[0] * x->dims[1];
    if (ox_tensor_numel(y) != planes)
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "%s: output shape does not match input",
                              c->node->op_type);
    if (planes == 0) return 0;
    struct { uint32_t planes, len, avg; } p = {(uint32_t)planes, (uint32_t)(ox_tensor_numel(x) / planes),
                                               (uint32_t)avg};
    vk_dispatch d = {.shader = &VK_SHADER_nn_global_pool, .bufs = {ox_vk_buf(x), ox_vk_buf(y)}, .push = &p,
                     .push_bytes = sizeof p, .groups = {ox_vk_groups(ox_vk_of(c), planes, 1, 0), 1, 1},
                     .cost = (p.len + ox_vk_of(c)->wg - 1) / ox_vk_of(c)->wg}; /* a plane per workgroup */
    return ox_vk_run(c, &d);
}

int ox_vk_nn_global_avg(ox_kernel_ctx *c) { return global_pool(c, 1); }
int ox_vk_nn_global_max(ox_kernel_ctx *c) { return global_pool(c, 0); }
