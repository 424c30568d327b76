/* The Vulkan provider's normalizations (float32): BatchNormalization in
 * inference (a per-channel affine map, nn_bn_prep.comp then
 * nn_affine.comp), and Instance, Group and Layer normalization, which
 * normalize equal blocks of the input by their own statistics
 * (nn_norm.comp). Statistics accumulate in float, in a tree, where the
 * CPU uses double: these results match it within the reduction
 * tolerance. */
#include <inttypes.h>
#include <string.h>

#include "ep/vulkan/vk_nn.h"
#include "ops/normalization.h"
#include "ops/op.h"

OX_VK_SHADER(nn_bn_prep)
OX_VK_SHADER(nn_affine)
OX_VK_SHADER(nn_norm)

/* ---- placement ---- */

static int extra_outputs(const ir_node *node) {
    for (int i = 1; i < node->n_outputs; i++)
        if (node->outputs[i] >= 0) return 1;
    return 0;
}

/* Inference only: training statistics and the running-statistics
 * outputs stay on the CPU. */
int ox_vk_nn_s_batchnorm(const ir_node *node, const ir_type *const *in, int n) {
    return n == 5 && ox_vk_f32_inputs(in, n, 5) && in[0]->rank >= 2 && !ox_batchnorm_training(node) &&
           !extra_outputs(node);
}

int ox_vk_nn_s_instancenorm(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    return n == 3 && ox_vk_f32_inputs(in, n, 3) && in[0]->rank >= 3;
}

int ox_vk_nn_s_groupnorm(const ir_node *node, const ir_type *const *in, int n) {
    return n == 3 && ox_vk_f32_inputs(in, n, 3) && in[0]->rank >= 2 &&
           ir_attr_int(node, "num_groups", 0) >= 1;
}

/* Whether a LayerNormalization parameter of type t is, on the
 * normalized axes [axis, rank) of x, either one value or laid out like
 * them (no broadcasting inside): the shader indexes it by position. An
 * unknown extent of x is taken as the parameter's own, since the
 * parameter must broadcast to it. */
static int ln_param_ok(const ir_type *t, const ir_type *x, int axis) {
    if (t->rank < 0) return 0;
    int64_t n = ox_vk_known_numel(t);
    if (n == 1) return 1;
    int nr = x->rank - axis;
    if (n < 0 || t->rank > nr) return 0;
    for (int d = 0; d < nr; d++) {
        int td = d - (nr - t->rank);
        int64_t pd = td >= 0 ? t->dims[td] : 1, xd = x->dims[axis + d];
        if (pd == 1 && xd != 1) return 0; /* broadcast along this axis, or x's extent unknown */
        if (pd != 1 && xd >= 0 && xd != pd) return 0;
    }
    return 1;
}

/* X's rank may be unknown (a decoder's reshaped activations) when the
 * axis counts from the end: the normalized axes are then the last -axis
 * ones, of unknown extent. */
int ox_vk_nn_s_layernorm(const ir_node *node, const ir_type *const *in, int n) {
    if (n < 2 || n > 3 || !ox_vk_f32_inputs(in, n, 2) || extra_outputs(node)) return 0;
    int64_t axis = ir_attr_int(node, "axis", -1);
    ir_type x = *in[0];
    if (x.rank < 0) {
        if (axis >= 0 || axis < -OX_MAX_RANK) return 0;
        x.rank = (int)-axis;
        for (int d = 0; d < x.rank; d++) x.dims[d] = -1;
    }
    int r = x.rank;
    if (r < 1 || axis < -r || axis >= r) return 0;
    if (axis < 0) axis += r;
    return ln_param_ok(in[1], &x, (int)axis) && (n < 3 || !in[2] || ln_param_ok(in[2], &x, (int)axis));
}

/* ---- kernels ---- */

static int check_io(ox_kernel_ctx *c) { return ox_vk_check_io(c, ox_vk_nn_host_inputs(c->node)); }

int ox_vk_nn_batchnorm(ox_kernel_ctx *c) {
    if (check_io(c) != 0) return -1;
    const ox_tensor *x = c->inputs[0];
    ox_tensor *y = c->outputs[0];
    if (x->rank < 2)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "BatchNormalization: X must have rank >= 2");
    int64_t C = x->dims[1], n = ox_tensor_numel(x);
    static const char *const names[5] = {"X", "scale", "B", "mean", "var"};
    for (int i = 1; i < 5; i++)
        if (ox_tensor_numel(c->inputs[i]) != C)
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                                  "BatchNormalization: %s has %" PRId64 " values, expected %" PRId64,
                                  names[i], ox_tensor_numel(c->inputs[i]), C);
    if (n == 0) return 0;
    vk_ep *v = ox_vk_of(c);
    vk_buf *ab = ox_vk_scratch(c, sizeof(float) * 2 * (size_t)C);
    if (!ab) return -1;
    struct { uint32_t C; float eps; } pp = {(uint32_t)C, ir_attr_float(c->node, "epsilon", 1e-5f)};
    vk_dispatch prep = {.shader = &VK_SHADER_nn_bn_prep,
                        .bufs = {ox_vk_buf(c->inputs[1]), ox_vk_buf(c->inputs[2]), ox_vk_buf(c->inputs[3]),
                                 ox_vk_buf(c->inputs[4]), ab},
                        .push = &pp, .push_bytes = sizeof pp, .groups = {ox_vk_groups(v, C, v->wg, 0), 1, 1}};
    struct { uint32_t n, C, inner; } pa = {(uint32_t)n, (uint32_t)C, (uint32_t)(n / x->dims[0] / C)};
    vk_dispatch apply = {.shader = &VK_SHADER_nn_affine, .bufs = {ox_vk_buf(x), ab, ox_vk_buf(y)},
                         .push = &pa, .push_bytes = sizeof pa,
                         .groups = {ox_vk_groups(v, n, v->wg, 0), 1, 1}};
    int rc = ox_vk_run(c, &prep);
    if (rc == 0) rc = ox_vk_run(c, &apply);
    ox_vk_scratch_free(c, ab);
    return rc;
}

typedef struct norm_push {
    uint32_t blocks, len, bmod, bmul, pdiv, flags;
    float eps;
} norm_push;

enum { NORM_BIAS = 1, NORM_SCALE_ONE = 2, NORM_BIAS_ONE = 4 };

static int run_norm(ox_kernel_ctx *c, norm_push *p, const ox_tensor *s, const ox_tensor *b) {
    const ox_tensor *x = c->inputs[0];
    ox_tensor *y = c->outputs[0];
    if (ox_tensor_numel(x) == 0) return 0;
    if (b) p->flags |= NORM_BIAS;
    p->eps = ir_attr_float(c->node, "epsilon", 1e-5f);
    vk_dispatch d = {.shader = &VK_SHADER_nn_norm,
                     .bufs = {ox_vk_buf(x), ox_vk_buf(s), b ? ox_vk_buf(b) : NULL, ox_vk_buf(y)},
                     .push = p, .push_bytes = sizeof *p,
                     .groups = {ox_vk_groups(ox_vk_of(c), p->blocks, 1, 0), 1, 1},
                     /* two passes over a block per workgroup */
                     .cost = 2 * ((p->len + ox_vk_of(c)->wg - 1) / ox_vk_of(c)->wg)};
    return ox_vk_run(c, &d);
}

int ox_vk_nn_instancenorm(ox_kernel_ctx *c) {
    if (check_io(c) != 0) return -1;
    const ox_tensor *x = c->inputs[0], *s = c->inputs[1], *b = c->inputs[2];
    if (x->rank < 3)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "InstanceNormalization: input must have rank >= 3");
    int64_t C = x->dims[1];
    if (ox_tensor_numel(s) != C || ox_tensor_numel(b) != C)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                              "InstanceNormalization: scale and B must have %" PRId64 " values", C);
    int64_t blocks = x->dims[0] * C, len = blocks ? ox_tensor_numel(x) / blocks : 0;
    /* the parameter index is the channel: block % C, nothing from the position */
    norm_push p = {(uint32_t)blocks, (uint32_t)len, (uint32_t)(C ? C : 1), 1, (uint32_t)(len ? len : 1), 0, 0};
    return run_norm(c, &p, s, b);
}

int ox_vk_nn_groupnorm(ox_kernel_ctx *c) {
    if (check_io(c) != 0) return -1;
    const ox_tensor *x = c->inputs[0], *s = c->inputs[1], *b = c->inputs[2];
    const ir_node *nd = c->node;
    if (x->rank < 2)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "GroupNormalization: X must have rank >= 2, got %d",
                              x->rank);
    int64_t G = ir_attr_int(nd, "num_groups", 0), N = x->dims[0], C = x->dims[1];
    if (G < 1 || C % G != 0)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                              "GroupNormalization: %" PRId64 " channels do not split into %" PRId64 " groups",
                              C, G);
    /* one scale and bias per group in version 18, per channel from 21 */
    int per_channel = ox_op_since_version(nd->domain, "GroupNormalization", nd->opset) >= 21;
    int64_t want = per_channel ? C : G;
    if (ox_tensor_numel(s) != want || ox_tensor_numel(b) != want)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                              "GroupNormalization: scale and bias must have %" PRId64 " values (one per %s)",
                              want, per_channel ? "channel" : "group");
    int64_t cpg = C / G, inner = N && C ? ox_tensor_numel(x) / (N * C) : 0, len = cpg * inner;
    norm_push p = {(uint32_t)(N * G), (uint32_t)len, (uint32_t)G, per_channel ? (uint32_t)cpg : 1u,
                   (uint32_t)(per_channel ? (inner ? inner : 1) : (len ? len : 1)), 0, 0};
    return run_norm(c, &p, s, b);
}

int ox_vk_nn_layernorm(ox_kernel_ctx *c) {
    if (check_io(c) != 0) return -1;
    const ox_tensor *x = c->inputs[0], *s = c->inputs[1];
    const ox_tensor *b = c->n_inputs > 2 ? c->inputs[2] : NULL;
    int64_t axis = ir_attr_int(c->node, "axis", -1);
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis >= x->rank)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "LayerNormalization: axis out of range");
    int64_t D = 1;
    for (int d = (int)axis; d < x->rank; d++) D *= x->dims[d];
    int64_t n = ox_tensor_numel(x), ns = ox_tensor_numel(s), nb = b ? ox_tensor_numel(b) : 1;
    if ((ns != D && ns != 1) || (nb != D && nb != 1))
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                              "LayerNormalization: Scale and B must have %" PRId64 " values or one", D);
    norm_push p = {(uint32_t)(D ? n / D : 0), (uint32_t)D, 1, 0, 1,
                   (ns == 1 ? NORM_SCALE_ONE : 0u) | (nb == 1 ? NORM_BIAS_ONE : 0u), 0};
    return run_norm(c, &p, s, b);
}
