/* The Vulkan provider's Conv, onyx FusedConv and ConvTranspose (float32,
 * one to three spatial axes, any group). Conv runs as a tiled implicit GEMM
 * (nn_conv_gemm.comp) or, with one input channel per group (depthwise),
 * as a direct kernel (nn_conv_dw.comp); ConvTranspose gathers each
 * output element from the input positions that reach it
 * (nn_convt.comp). The geometry (auto_pad, output sizes) is resolved
 * here exactly as the CPU kernels resolve it. */
#include <inttypes.h>
#include <string.h>

#include "ep/cpu/kernels/activation.h"
#include "ep/cpu/kernels/gemm.h"
#include "ep/vulkan/vk_nn.h"

OX_VK_SHADER(nn_conv_gemm)
OX_VK_SHADER(nn_conv_dw)
OX_VK_SHADER(nn_convt)
OX_VK_SHADER(nn_conv_gemm_w16)
OX_VK_SHADER(nn_conv_dw_w16)
OX_VK_SHADER(nn_convt_w16)
OX_VK_SHADER(nn_conv_gemm_s)
OX_VK_SHADER(nn_conv_gemm_s_w16)

/* Push constants of the convolution shaders (nn_conv.glsl): axes in
 * (depth, height, width) order, 1-D and 2-D padded in front with axes of
 * extent 1. */
typedef struct conv_push {
    uint32_t N, Cg, Mg, G;
    uint32_t in[3], out[3], k[3], s[3], d[3];
    int32_t pad[3];
    uint32_t flags;
    float alpha, beta; /* FusedConv's activation parameters */
} conv_push;

/* flags; FusedConv's activation (ox_act_kind) from bit CONV_ACT_SHIFT */
enum { CONV_BIAS = 1, CONV_POINTWISE = 2, CONV_Z = 4, CONV_S = 8, CONV_S_PER_IMAGE = 16 };
#define CONV_ACT_SHIFT 8

/* ---- placement ---- */

static int conv_common(const ir_node *node, const ir_type *const *in, int n) {
    if (n < 2 || n > 3 || !ox_vk_f32_inputs(in, n, 2)) return 0;
    if (!ox_vk_nn_rank_in(in[0], 3, 2 + VK_NN_MAX_SPATIAL)) return 0;
    if (in[1]->rank >= 0 && in[1]->rank != in[0]->rank) return 0;
    if (n == 3 && in[2] && in[2]->rank > 1) return 0;
    int64_t group = ir_attr_int(node, "group", 1);
    return group >= 1 && group <= VK_NN_MAX_ATTR && ox_vk_nn_window_attrs_ok(node, in[0]->rank - 2);
}

int ox_vk_nn_s_conv(const ir_node *node, const ir_type *const *in, int n) {
    return conv_common(node, in, n);
}

/* FusedConv: Conv's inputs, then Z and S (float32 when given). */
int ox_vk_nn_s_fused_conv(const ir_node *node, const ir_type *const *in, int n) {
    ox_act act;
    if (n < 2 || n > 5 || !ox_vk_f32_inputs(in, n, 2) || ox_act_of_node(node, &act) != 0) return 0;
    return conv_common(node, in, n < 3 ? n : 3);
}

int ox_vk_nn_s_conv_transpose(const ir_node *node, const ir_type *const *in, int n) {
    return conv_common(node, in, n);
}

/* ---- geometry ---- */

static int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* ConvTranspose's output length on one axis and its leading pad: the
 * full length stride * (in - 1) + output_padding + (k - 1) * dil + 1,
 * less the pads, which SAME auto_pad or output_shape (want >= 0) split
 * off it (the larger half at the end for SAME_UPPER). Attributes are
 * bounded by supports(), so nothing here overflows int64. */
static int64_t transpose_axis(int64_t in, int64_t k, int64_t s, int64_t d, int64_t opad,
                              int64_t want, int ap, int64_t *pb, int64_t *pe) {
    int64_t full = s * (in - 1) + opad + (k - 1) * d + 1;
    if (want >= 0 || ap == OX_PAD_SAME_UPPER || ap == OX_PAD_SAME_LOWER) {
        int64_t total = full - (want >= 0 ? want : in * s);
        if (ap == OX_PAD_SAME_UPPER) {
            *pb = floor_div(total, 2);
            *pe = total - *pb;
        } else {
            *pe = floor_div(total, 2);
            *pb = total - *pe;
        }
    } else if (ap == OX_PAD_VALID) {
        *pb = *pe = 0;
    }
    return full - *pb - *pe;
}

/* Fills p from the tensors and attributes, checking channels and the
 * output shape against what the attributes give. */
static int conv_geom(ox_kernel_ctx *c, int transpose, conv_push *p) {
    const char *op = c->node->op_type;
    const ox_tensor *x = c->inputs[0], *w = c->inputs[1];
    const ox_tensor *b = c->n_inputs > 2 ? c->inputs[2] : NULL;
    const ox_tensor *y = c->outputs[0];
    int r = x->rank - 2;
    if (r < 1 || r > VK_NN_MAX_SPATIAL || w->rank != x->rank || y->rank != x->rank)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                              "%s: X must have rank 3 to 5 and W the same rank (got %d and %d)", op,
                              x->rank, w->rank);
    int64_t G = ir_attr_int(c->node, "group", 1), C = x->dims[1], M, Cg, Mg;
    if (G < 1) return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: group must be >= 1", op);
    if (!transpose) {
        M = w->dims[0];
        Cg = w->dims[1];
        if (Cg * G != C || M % G)
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                                  "%s: %" PRId64 " input and %" PRId64 " output channels do not match "
                                  "W's %" PRId64 " per group with group %" PRId64, op, C, M, Cg, G);
        Mg = M / G;
    } else {
        if (w->dims[0] != C || C % G)
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                                  "%s: input channels %" PRId64 " do not match W's %" PRId64
                                  " (group %" PRId64 ")", op, C, w->dims[0], G);
        Cg = C / G;
        Mg = w->dims[1];
        M = Mg * G;
    }
    if (y->dims[0] != x->dims[0] || y->dims[1] != M)
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "%s: output shape does not match inputs", op);
    if (b && ox_tensor_numel(b) != M)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: B has %" PRId64 " values, expected %" PRId64,
                              op, ox_tensor_numel(b), M);
    const int64_t *ks, *st, *dl, *pads, *opad = NULL, *oshape = NULL;
    if (ox_vk_nn_attr_ints(c, "kernel_shape", r, &ks) || ox_vk_nn_attr_ints(c, "strides", r, &st) ||
        ox_vk_nn_attr_ints(c, "dilations", r, &dl) || ox_vk_nn_attr_ints(c, "pads", 2 * r, &pads))
        return -1;
    size_t nos = 0;
    if (transpose) {
        if (ox_vk_nn_attr_ints(c, "output_padding", r, &opad)) return -1;
        oshape = ir_attr_ints(c->node, "output_shape", &nos);
        if (oshape && (int)nos != r && (int)nos != r + 2)
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: output_shape has %zu values", op, nos);
    }
    int ap = ox_parse_auto_pad(ir_attr_string(c->node, "auto_pad", "NOTSET"));
    if (ap < 0) return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: unknown auto_pad", op);
    *p = (conv_push){.N = (uint32_t)x->dims[0], .Cg = (uint32_t)Cg, .Mg = (uint32_t)Mg,
                     .G = (uint32_t)G, .flags = b ? CONV_BIAS : 0};
    int pointwise = !transpose;
    for (int a = 0; a < VK_NN_MAX_SPATIAL; a++) {
        int i = a - (VK_NN_MAX_SPATIAL - r); /* the tensor's spatial axis, < 0 for padding axes */
        if (i < 0) {
            p->in[a] = p->out[a] = p->k[a] = p->s[a] = p->d[a] = 1;
            p->pad[a] = 0;
            continue;
        }
        int64_t in = x->dims[i + 2], k = w->dims[i + 2], s = st ? st[i] : 1, d = dl ? dl[i] : 1;
        int64_t pb = pads ? pads[i] : 0, pe = pads ? pads[i + r] : 0, o;
        if (ks && ks[i] != k)
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: kernel_shape does not match W", op);
        if (k < 1 || k > VK_NN_MAX_ATTR || in > OX_VK_MAX_ELEMS)
            return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "vulkan %s: kernel extent %" PRId64
                                  " on spatial axis %d is out of the supported range", op, k, i);
        if (!transpose) {
            if (ox_window_axis(in, k, s, d, ap, 0, &pb, &pe, &o))
                return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                                      "%s: kernel does not fit the padded input on spatial axis %d", op, i);
        } else {
            int64_t want = oshape ? oshape[nos - (size_t)r + (size_t)i] : -1;
            o = transpose_axis(in, k, s, d, opad ? opad[i] : 0, want, ap, &pb, &pe);
        }
        if (o != y->dims[i + 2])
            return ox_kernel_fail(c, ONYX_RUNTIME_ERROR,
                                  "%s: output size %" PRId64 " on spatial axis %d differs from the computed %"
                                  PRId64, op, y->dims[i + 2], i, o);
        if (pb > VK_NN_MAX_ATTR || pb < -VK_NN_MAX_ATTR)
            return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "vulkan %s: padding %" PRId64
                                  " on spatial axis %d is out of the supported range", op, pb, i);
        p->in[a] = (uint32_t)in;
        p->out[a] = (uint32_t)o;
        p->k[a] = (uint32_t)k;
        p->s[a] = (uint32_t)s;
        p->d[a] = (uint32_t)d;
        p->pad[a] = (int32_t)pb;
        if (k != 1 || s != 1 || pb != 0 || o != in) pointwise = 0;
    }
    if (pointwise) p->flags |= CONV_POINTWISE;
    return 0;
}

/* ---- kernels ---- */

static int check_io(ox_kernel_ctx *c) { return ox_vk_check_io(c, ox_vk_nn_host_inputs(c->node)); }

/* The dispatch of Conv, and of FusedConv with its Z and S (either may be
 * NULL) and its epilogue's flags and parameters already in p. */
static int conv_dispatch(ox_kernel_ctx *c, conv_push *p, const ox_tensor *z, const ox_tensor *s) {
    ox_tensor *y = c->outputs[0];
    const ox_tensor *b = c->n_inputs > 2 ? c->inputs[2] : NULL;
    vk_ep *v = ox_vk_of(c);
    vk_dispatch d = {.bufs = {ox_vk_buf(c->inputs[0]), ox_vk_buf(c->inputs[1]), b ? ox_vk_buf(b) : NULL,
                              ox_vk_buf(y), z ? ox_vk_buf(z) : NULL, s ? ox_vk_buf(s) : NULL},
                     .push = p, .push_bytes = sizeof *p};
    uint64_t window = (uint64_t)p->k[0] * p->k[1] * p->k[2];
    int half = ox_vk_buf(c->inputs[1])->half; /* weights stored as float16 */
    if (p->Cg == 1) {
        /* depthwise: nothing to reduce over channels, one element per invocation */
        d.shader = half ? &VK_SHADER_nn_conv_dw_w16 : &VK_SHADER_nn_conv_dw;
        d.groups[0] = ox_vk_groups(v, ox_tensor_numel(y), v->wg, 0);
        d.groups[1] = d.groups[2] = 1;
        d.cost = window;
    } else {
        int64_t cols = (int64_t)p->N * p->out[0] * p->out[1] * p->out[2];
        /* the variants reading S scale X in the inner gather (conv_epilogue.glsl) */
        d.shader = s ? (half ? &VK_SHADER_nn_conv_gemm_s_w16 : &VK_SHADER_nn_conv_gemm_s)
                     : (half ? &VK_SHADER_nn_conv_gemm_w16 : &VK_SHADER_nn_conv_gemm);
        /* a 4 tile x 4 tile output block per tile x tile workgroup
         * (64 x 64 over 256 invocations): 16 outputs each */
        uint32_t blk = 4 * v->tile;
        d.groups[0] = ox_vk_groups(v, cols, blk, 0);
        d.groups[1] = ox_vk_groups(v, p->Mg, blk, 1);
        d.groups[2] = ox_vk_groups(v, p->G, 1, 2);
        d.invocations = v->tile * v->tile;
        d.cost = 16 * window * p->Cg;
    }
    return ox_vk_run(c, &d);
}

int ox_vk_nn_conv(ox_kernel_ctx *c) {
    if (check_io(c) != 0) return -1;
    conv_push p;
    if (conv_geom(c, 0, &p) != 0) return -1;
    if (ox_tensor_numel(c->outputs[0]) == 0) return 0;
    return conv_dispatch(c, &p, NULL, NULL);
}

/* onyx FusedConv: Y = act(Conv(X * S, W, B) + Z) in one dispatch. Z
 * broadcasting into Y (inference allows it where Y does not grow) goes to
 * the CPU. */
int ox_vk_nn_fused_conv(ox_kernel_ctx *c) {
    if (check_io(c) != 0) return -1;
    ox_act act;
    if (ox_act_of_node(c->node, &act) != 0)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "FusedConv: unknown activation '%s'",
                              ir_attr_string(c->node, "activation", ""));
    const ox_tensor *z = c->n_inputs > 3 ? c->inputs[3] : NULL, *s = c->n_inputs > 4 ? c->inputs[4] : NULL;
    ox_kernel_ctx conv = *c; /* Conv's geometry reads X, W and B alone */
    if (conv.n_inputs > 3) conv.n_inputs = 3;
    conv_push p;
    if (conv_geom(&conv, 0, &p) != 0) return -1;
    ox_tensor *y = c->outputs[0];
    if (ox_tensor_numel(y) == 0) return 0;
    if (z && ox_tensor_numel(z) != ox_tensor_numel(y))
        return ox_kernel_decline(c, "FusedConv: Z broadcasts into the output");
    int64_t C = (int64_t)p.Cg * p.G, sn = s ? ox_tensor_numel(s) : 0;
    if (s && sn != C && sn != (int64_t)p.N * C)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "FusedConv: S holds %lld factors, not one per image "
                              "and input channel", (long long)sn);
    p.flags |= (z ? CONV_Z : 0) | (s ? CONV_S : 0) | (s && sn != C ? CONV_S_PER_IMAGE : 0) |
               (uint32_t)act.kind << CONV_ACT_SHIFT;
    p.alpha = act.p0;
    p.beta = act.p1;
    return conv_dispatch(c, &p, z, s);
}

int ox_vk_nn_conv_transpose(ox_kernel_ctx *c) {
    if (check_io(c) != 0) return -1;
    conv_push p;
    if (conv_geom(c, 1, &p) != 0) return -1;
    ox_tensor *y = c->outputs[0];
    if (ox_tensor_numel(y) == 0) return 0;
    const ox_tensor *b = c->n_inputs > 2 ? c->inputs[2] : NULL;
    vk_dispatch d = {.shader = ox_vk_buf(c->inputs[1])->half ? &VK_SHADER_nn_convt_w16 : &VK_SHADER_nn_convt,
                     .bufs = {ox_vk_buf(c->inputs[0]), ox_vk_buf(c->inputs[1]), b ? ox_vk_buf(b) : NULL,
                              ox_vk_buf(y)},
                     .push = &p, .push_bytes = sizeof p,
                     .groups = {ox_vk_groups(ox_vk_of(c), ox_tensor_numel(y), ox_vk_of(c)->wg, 0), 1, 1},
                     /* an output gathers from every input channel of its group
                      * under the window */
                     .cost = (uint64_t)p.k[0] * p.k[1] * p.k[2] * p.Cg};
    return ox_vk_run(c, &d);
}
