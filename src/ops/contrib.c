/* Schemas of the com.microsoft contrib operators that ONNX Runtime writes
 * into the graphs it saves (SessionOptions.optimized_model_filepath), so
 * that such files, which users keep, load in onyx. Each is described here
 * from ONNX Runtime's contrib-operator documentation (its operator schema
 * docs); where an operator is an ONNX operator plus an epilogue (FusedConv
 * = Conv, then + Z, then an activation), inference runs the ONNX
 * operator's own inference on a view of the node (ox_contrib_base_view),
 * so both agree by construction. */
#include <string.h>

#include "ops/contrib.h"
#include "ops/op.h"

/* The ONNX operator a fused contrib operator extends, by name. */
static const struct {
    const char *fused, *base;
    int base_opset, base_inputs;
} BASES[] = {
    {"FusedConv", "Conv", 11, 3},
    {"FusedGemm", "Gemm", 13, 3},
    {"FusedMatMul", "MatMul", 13, 2},
    {"FusedMatMulActivation", "MatMul", 13, 2},
    {"LayerNormalization", "LayerNormalization", 17, 3},
};

int ox_contrib_base_view(const ir_node *node, ir_node *view) {
    for (size_t i = 0; i < sizeof BASES / sizeof BASES[0]; i++) {
        if (strcmp(node->op_type, BASES[i].fused) != 0) continue;
        *view = *node;
        view->op_type = (char *)BASES[i].base;
        view->domain = (char *)"";
        view->opset = BASES[i].base_opset;
        if (view->n_inputs > BASES[i].base_inputs) view->n_inputs = BASES[i].base_inputs;
        return 0;
    }
    return -1;
}

/* Runs the base operator's inference on the view of c's node; `inputs`
 * may replace the input types (FusedMatMul's transposed operands). */
static int infer_as_base(ox_infer_ctx *c, const ir_type *const *inputs) {
    ir_node view;
    if (ox_contrib_base_view(c->node, &view) != 0)
        return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED, "%s: no base operator", c->node->op_type);
    const ox_op_schema *s = ox_op_find("", view.op_type, view.opset);
    if (!s || !s->infer)
        return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED, "%s: base operator %s is not available",
                             c->node->op_type, view.op_type);
    ox_infer_ctx sub = *c;
    sub.node = &view;
    sub.n_inputs = view.n_inputs < c->n_inputs ? view.n_inputs : c->n_inputs;
    if (inputs) sub.inputs = inputs;
    int rc = s->infer(&sub);
    c->data_dependent = sub.data_dependent;
    return rc;
}

static const char *const ACTIVATIONS[] = {"Relu", "Sigmoid", "Tanh", "LeakyRelu",
                                          "Clip", "HardSigmoid", "Elu", "Softplus"};

int ox_contrib_activation_known(const char *name) {
    for (size_t i = 0; i < sizeof ACTIVATIONS / sizeof ACTIVATIONS[0]; i++)
        if (strcmp(name, ACTIVATIONS[i]) == 0) return 1;
    return 0;
}

static int check_activation(ox_infer_ctx *c) {
    const char *act = ir_attr_string(c->node, "activation", NULL);
    if (act && !ox_contrib_activation_known(act))
        return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED, "%s: activation '%s' is not supported",
                             c->node->op_type, act);
    return 0;
}

static int infer_fused_conv(ox_infer_ctx *c) {
    if (check_activation(c) || infer_as_base(c, NULL)) return -1;
    /* Z, the residual summed before the activation, has the output's shape */
    const ir_type *z = ox_infer_in(c, 3), *y = ox_infer_out(c, 0);
    if (z && y && z->rank >= 0 && y->rank >= 0) {
        int same = z->rank == y->rank;
        for (int d = 0; same && d < z->rank; d++)
            same = z->dims[d] < 0 || y->dims[d] < 0 || z->dims[d] == y->dims[d];
        if (!same)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "FusedConv: Z must have the output's shape");
    }
    return 0;
}

/* onyx FusedConv (domain "onyx", version 1), written by the optimizer
 * pass fuse_conv_activation and run by the CPU provider with its
 * epilogue fused into the convolution:
 *   inputs  X, W, B (optional), Z (optional: the output's shape, or one
 *           that broadcasts to it without growing it), S (optional: one
 *           factor per image and input channel, [N or 1, C, 1, ..., 1]
 *           of X's rank)
 *   output  Y = activation(Conv(X * S, W, B) + Z)
 *   attributes: Conv's (auto_pad, dilations, group, kernel_shape, pads,
 *   strides), `activation` (string: "" or absent for none, Relu, Clip,
 *   Sigmoid, HardSigmoid, HardSwish, SiLU = x * sigmoid(x), LeakyRelu,
 *   Tanh, Gelu (erf), GeluTanh) and `activation_params` (floats: Clip
 *   min, max; HardSigmoid alpha, beta; LeakyRelu alpha; missing ones take
 *   the ONNX operators' defaults). Inference is Conv's, on a view of the
 *   node, plus the check of Z. */
static const char *const ONYX_ACTIVATIONS[] = {"",        "Relu",      "Clip", "Sigmoid",
                                               "HardSigmoid", "HardSwish", "SiLU", "LeakyRelu",
                                               "Tanh",    "Gelu",      "GeluTanh"};

/* Fails unless the node's attribute `name` (an activation) is one of
 * ONYX_ACTIVATIONS. */
static int check_onyx_activation_named(ox_infer_ctx *c, const char *name) {
    const char *act = ir_attr_string(c->node, name, "");
    for (size_t i = 0; i < sizeof ONYX_ACTIVATIONS / sizeof ONYX_ACTIVATIONS[0]; i++)
        if (strcmp(act, ONYX_ACTIVATIONS[i]) == 0) return 0;
    return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED, "%s: activation '%s' is not supported", c->node->op_type, act);
}

static int check_onyx_activation(ox_infer_ctx *c) { return check_onyx_activation_named(c, "activation"); }

/* Conv's inference (opset 11) on a view of the node with its first three
 * inputs, whose types `inputs` may replace (NULL: the node's own). */
static int infer_as_conv(ox_infer_ctx *c, const ir_type *const *inputs) {
    ir_node view = *c->node;
    view.op_type = (char *)"Conv";
    view.domain = (char *)"";
    view.opset = 11;
    if (view.n_inputs > 3) view.n_inputs = 3;
    const ox_op_schema *s = ox_op_find("", "Conv", 11);
    if (!s || !s->infer)
        return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED, "%s: Conv is not available", c->node->op_type);
    ox_infer_ctx sub = *c;
    sub.node = &view;
    if (inputs) sub.inputs = inputs;
    sub.n_inputs = view.n_inputs < c->n_inputs ? view.n_inputs : c->n_inputs;
    int rc = s->infer(&sub);
    c->data_dependent = sub.data_dependent;
    return rc;
}

static int infer_onyx_fused_conv(ox_infer_ctx *c) {
    int rc = check_onyx_activation(c);
    if (rc == 0) rc = infer_as_conv(c, NULL);
    if (rc) return rc;
    /* Z broadcasts into Y without growing it */
    const ir_type *z = ox_infer_in(c, 3), *y = ox_infer_out(c, 0);
    if (z && y && z->rank >= 0 && y->rank >= 0) {
        int fits = z->rank <= y->rank;
        for (int d = 0; fits && d < z->rank; d++) {
            int64_t zd = z->dims[z->rank - 1 - d], yd = y->dims[y->rank - 1 - d];
            fits = zd < 0 || zd == 1 || yd < 0 || zd == yd;
        }
        if (!fits)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "FusedConv: Z must have the output's shape or broadcast to it");
    }
    /* S: [N or 1, C, 1, ...] of X's rank */
    const ir_type *sc = ox_infer_in(c, 4), *x = ox_infer_in(c, 0);
    if (sc && x && sc->rank >= 0 && x->rank >= 0) {
        int fits = sc->rank == x->rank && sc->rank >= 2;
        for (int d = 0; fits && d < sc->rank; d++) {
            int64_t sd = sc->dims[d], xd = x->dims[d];
            fits = sd < 0 || (d == 0 ? sd == 1 || xd < 0 || sd == xd : d == 1 ? xd < 0 || sd == xd : sd == 1);
        }
        if (!fits)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "FusedConv: S must hold one factor per image and input channel "
                                 "([N or 1, C, 1, ...] of X's rank)");
    }
    return 0;
}

/* onyx ConvDepthwise (domain "onyx", version 1), written by the
 * optimizer pass fuse_conv_depthwise: a 2-D convolution whose output
 * only a depthwise convolution reads, run by the CPU provider a band of
 * output rows at a time (src/ep/cpu/kernels/conv_chain.c):
 *   inputs  X, W, B (optional), Wd ([M, 1, KH, KW], M = W's output
 *           channels), Bd (optional, [M])
 *   output  Y = act2(DepthwiseConv(act1(Conv(X, W, B)), Wd, Bd))
 *   attributes: the convolution's as FusedConv has them (auto_pad,
 *   dilations, group, kernel_shape, pads, strides, activation,
 *   activation_params); the depthwise convolution's as
 *   depthwise_strides, depthwise_pads, depthwise_dilations (explicit
 *   padding; group M), depthwise_activation and
 *   depthwise_activation_params.
 * Inference is Conv's for the intermediate on a view of the node, then
 * the depthwise layer's window arithmetic. */
static int infer_conv_depthwise(ox_infer_ctx *c) {
    if (check_onyx_activation(c) || check_onyx_activation_named(c, "depthwise_activation") ||
        infer_as_conv(c, NULL))
        return -1;
    ir_type *t = ox_infer_out(c, 0);
    const ir_type *wd = ox_infer_in(c, 3);
    if (!t || t->rank < 0) return 0;
    if (t->rank != 4)
        return ox_infer_fail(c, ox_infer_bad_code(c), "ConvDepthwise: X must have rank 4, got %d", t->rank);
    if (!wd) return ox_infer_fail(c, ox_infer_bad_code(c), "ConvDepthwise: the depthwise weights (input 3) are missing");
    if (wd->rank >= 0 && (wd->rank != 4 || (wd->dims[1] >= 0 && wd->dims[1] != 1) ||
                          (wd->dims[0] >= 0 && t->dims[1] >= 0 && wd->dims[0] != t->dims[1])))
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "ConvDepthwise: the depthwise weights must be [M, 1, KH, KW] with M the "
                             "convolution's output channels");
    size_t ns = 0, np = 0, nd = 0;
    const int64_t *st = ir_attr_ints(c->node, "depthwise_strides", &ns),
                  *pd = ir_attr_ints(c->node, "depthwise_pads", &np),
                  *dl = ir_attr_ints(c->node, "depthwise_dilations", &nd);
    if ((st && ns != 2) || (pd && np != 4) || (dl && nd != 2))
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "ConvDepthwise: depthwise_strides and depthwise_dilations need 2 values, "
                             "depthwise_pads 4");
    int64_t dims[4] = {t->dims[0], t->dims[1], -1, -1};
    for (int i = 0; i < 2; i++) {
        int64_t s = st ? st[i] : 1, d = dl ? dl[i] : 1, pb = pd ? pd[i] : 0, pe = pd ? pd[i + 2] : 0;
        int64_t k = wd->rank == 4 ? wd->dims[i + 2] : -1, in = t->dims[i + 2];
        if (s < 1 || d < 1 || pb < 0 || pe < 0 || s > ((int64_t)1 << 30) || d > ((int64_t)1 << 30) ||
            pb > ((int64_t)1 << 30) || pe > ((int64_t)1 << 30))
            return ox_infer_fail(c, ONYX_INVALID_MODEL,
                                 "ConvDepthwise: depthwise strides and dilations must be in [1, 2^30], pads "
                                 "in [0, 2^30]");
        if (k < 1 || in < 0 || k > ((int64_t)1 << 30) || in > ((int64_t)1 << 40)) continue;
        int64_t span = (k - 1) * d + 1, room = in + pb + pe;
        if (room < span)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "ConvDepthwise: the depthwise kernel does not fit the padded input on "
                                 "spatial axis %d",
                                 i);
        dims[i + 2] = (room - span) / s + 1;
    }
    return ox_infer_set_output(c, 0, ONYX_FLOAT32, dims, 4);
}

/* The channel-blocked layout of the onyx domain (version 1), written by
 * the optimizer pass block_channels for the CPU provider: a float32
 * tensor [N, C, S...] held as [N, ceil(C/16), S..., 16], channel c at
 * block c / 16, lane c % 16 (OX_CHANNEL_BLOCK). Lanes past C in the
 * last block are never read by the operators below.
 *   BlockChannels    X [N, C, S...] -> Y blocked (lanes past C zero)
 *   UnblockChannels  X blocked, attribute `channels` = C -> Y [N, C, S...]
 *   BlockedConv      inputs X ([N, C, H, W], or blocked; C >= 1), W [M,
 *                    C, KH, KW] (one group), B (optional, [M]), Z (optional,
 *                    blocked like Y); output Y [N, ceil(M/16), OH, OW,
 *                    16] = activation(Conv(X, W, B) + Z); attributes:
 *                    Conv's (explicit pads, no auto_pad, group 1) and
 *                    FusedConv's `activation` and `activation_params`.
 * Inference of BlockedConv is Conv's on the planar view of X. */
static int blocked_dims(ox_infer_ctx *c, const ir_type *t, int64_t *dims, int *rank) {
    if (t->rank < 3 || t->rank >= OX_MAX_RANK)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: expected [N, C, spatial...] (rank 3 to %d), got rank %d",
                             c->node->op_type, OX_MAX_RANK - 1, t->rank);
    for (int d = 0; d < t->rank; d++) dims[d] = t->dims[d];
    if (dims[1] >= 0) dims[1] = dims[1] / OX_CHANNEL_BLOCK + (dims[1] % OX_CHANNEL_BLOCK != 0);
    dims[t->rank] = OX_CHANNEL_BLOCK;
    *rank = t->rank + 1;
    return 0;
}

static int infer_block_channels(ox_infer_ctx *c) {
    const ir_type *x = ox_infer_in(c, 0);
    if (ox_infer_check_dtype(c, 0, "X", (const ox_dtype[]){ONYX_FLOAT32}, 1)) return -1;
    if (!x || x->rank < 0) return ox_infer_set_output(c, 0, ONYX_FLOAT32, NULL, -1);
    int64_t dims[OX_MAX_RANK];
    int rank = 0;
    if (blocked_dims(c, x, dims, &rank)) return -1;
    return ox_infer_set_output(c, 0, ONYX_FLOAT32, dims, rank);
}

static int infer_unblock_channels(ox_infer_ctx *c) {
    const ir_type *x = ox_infer_in(c, 0);
    const int64_t ch = ir_attr_int(c->node, "channels", -1);
    if (ox_infer_check_dtype(c, 0, "X", (const ox_dtype[]){ONYX_FLOAT32}, 1)) return -1;
    if (ch < 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "UnblockChannels: attribute channels must be >= 1");
    if (!x || x->rank < 0) return ox_infer_set_output(c, 0, ONYX_FLOAT32, NULL, -1);
    if (x->rank < 4 || (x->dims[x->rank - 1] >= 0 && x->dims[x->rank - 1] != OX_CHANNEL_BLOCK) ||
        (x->dims[1] >= 0 && x->dims[1] != ch / OX_CHANNEL_BLOCK + (ch % OX_CHANNEL_BLOCK != 0)))
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "UnblockChannels: X must be [N, ceil(%lld/%d), spatial..., %d]", (long long)ch,
                             OX_CHANNEL_BLOCK, OX_CHANNEL_BLOCK);
    int64_t dims[OX_MAX_RANK];
    for (int d = 0; d < x->rank - 1; d++) dims[d] = x->dims[d];
    dims[1] = ch;
    return ox_infer_set_output(c, 0, ONYX_FLOAT32, dims, x->rank - 1);
}

static int infer_blocked_conv(ox_infer_ctx *c) {
    const ir_type *x = ox_infer_in(c, 0), *w = ox_infer_in(c, 1);
    if (check_onyx_activation(c)) return -1;
    if (ir_attr_int(c->node, "group", 1) != 1 || strcmp(ir_attr_string(c->node, "auto_pad", "NOTSET"), "NOTSET"))
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "BlockedConv: group must be 1 and auto_pad absent");
    if (!x || !w || x->rank < 0 || w->rank < 0) return ox_infer_set_output(c, 0, ONYX_FLOAT32, NULL, -1);
    if (w->rank != 4 || (x->rank != 4 && x->rank != 5))
        return ox_infer_fail(c, ox_infer_bad_code(c), "BlockedConv: W must be 4-D and X 4-D or blocked 5-D");
    if (w->dims[1] == 0)
        return ox_infer_fail(c, ox_infer_bad_code(c), "BlockedConv: W has no input channels");
    if (x->rank == 5 && w->dims[1] >= 0 &&
        ((x->dims[1] >= 0 && x->dims[1] != w->dims[1] / OX_CHANNEL_BLOCK + (w->dims[1] % OX_CHANNEL_BLOCK != 0)) ||
         (x->dims[4] >= 0 && x->dims[4] != OX_CHANNEL_BLOCK)))
        return ox_infer_fail(c, ox_infer_bad_code(c), "BlockedConv: blocked X must be [N, ceil(%lld/%d), H, W, %d]",
                             (long long)w->dims[1], OX_CHANNEL_BLOCK, OX_CHANNEL_BLOCK);
    /* X as the planar [N, C, H, W] Conv sees */
    ir_type planar = *x;
    planar.rank = 4;
    planar.dims[1] = w->dims[1];
    const ir_type *ins[3] = {&planar, w, ox_infer_in(c, 2)};
    if (infer_as_conv(c, ins)) return -1;
    ir_type *y = ox_infer_out(c, 0);
    if (!y || y->rank != 4) return 0;
    int64_t dims[OX_MAX_RANK];
    int rank = 0;
    if (blocked_dims(c, y, dims, &rank)) return -1;
    return ox_infer_set_output(c, 0, ONYX_FLOAT32, dims, rank);
}

static int infer_fused_gemm(ox_infer_ctx *c) {
    if (check_activation(c)) return -1;
    return infer_as_base(c, NULL);
}

/* FusedMatMul: MatMul of op(A) and op(B), op transposing the last two
 * dimensions when transA/transB is set; transBatchA/B (moving the batch
 * dimensions) are refused with a clear error. */
static int infer_fused_matmul(ox_infer_ctx *c) {
    if (ir_attr_int(c->node, "transBatchA", 0) || ir_attr_int(c->node, "transBatchB", 0))
        return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED,
                             "%s: transBatchA/transBatchB are not supported", c->node->op_type);
    if (check_activation(c)) return -1;
    if (ox_infer_need_tensor(c, 0, "A") || ox_infer_need_tensor(c, 1, "B")) return -1;
    ir_type t[2];
    const ir_type *ins[2];
    for (int i = 0; i < 2; i++) {
        t[i] = *ox_infer_in(c, i);
        ins[i] = &t[i];
        int trans = (int)ir_attr_int(c->node, i ? "transB" : "transA", 0);
        if (trans && t[i].rank >= 2) {
            int64_t tmp = t[i].dims[t[i].rank - 1];
            t[i].dims[t[i].rank - 1] = t[i].dims[t[i].rank - 2];
            t[i].dims[t[i].rank - 2] = tmp;
        } else if (trans && t[i].rank == 1) {
            return ox_infer_fail(c, ox_infer_bad_code(c), "%s: cannot transpose a 1-D operand",
                                 c->node->op_type);
        }
    }
    return infer_as_base(c, ins);
}

static int infer_float_unary(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "X") || ox_infer_check_float(c, 0, "X", 1)) return -1;
    for (int i = 1; i < c->n_inputs; i++)
        if (ox_infer_in(c, i) && ox_infer_same_dtype(c, 0, i, "X", "bias")) return -1;
    return ox_infer_same_as_input(c, 0, 0);
}

/* The last dimension of input 0, or -1 when unknown. */
static int64_t hidden_size(ox_infer_ctx *c) {
    const ir_type *x = ox_infer_in(c, 0);
    return x->rank >= 1 ? x->dims[x->rank - 1] : -1;
}

/* A 1-D parameter of `hidden` entries (gamma, beta, bias). */
static int check_vector(ox_infer_ctx *c, int i, const char *what, int64_t hidden) {
    const ir_type *p = ox_infer_in(c, i);
    if (!p) return 0;
    if (ox_infer_same_dtype(c, 0, i, "input", what)) return -1;
    if (p->rank >= 0 && (p->rank != 1 || (hidden >= 0 && p->dims[0] >= 0 && p->dims[0] != hidden)))
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s must be 1-D of size %lld",
                             c->node->op_type, what, (long long)hidden);
    return 0;
}

/* Skip[Simplified]LayerNormalization: outputs the normalized sum, the
 * statistics (float32, last dimension 1) and the sum itself. */
static int infer_skip_layernorm(ox_infer_ctx *c) {
    int simplified = strcmp(c->node->op_type, "SkipSimplifiedLayerNormalization") == 0;
    if (ox_infer_need_tensor(c, 0, "input") || ox_infer_need_tensor(c, 1, "skip") ||
        ox_infer_need_tensor(c, 2, "gamma") || ox_infer_check_float(c, 0, "input", 1) ||
        ox_infer_same_dtype(c, 0, 1, "input", "skip"))
        return -1;
    const ir_type *x = ox_infer_in(c, 0), *s = ox_infer_in(c, 1);
    if (x->rank >= 0 && (x->rank < 2 || x->rank > 3))
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: input must be 2-D or 3-D, got rank %d",
                             c->node->op_type, x->rank);
    int64_t h = hidden_size(c);
    if (s->rank >= 0 && x->rank >= 0) {
        if (s->rank < 2 || s->rank > x->rank || (h >= 0 && s->dims[s->rank - 1] >= 0 &&
                                                  s->dims[s->rank - 1] != h))
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: skip must end in the hidden size %lld", c->node->op_type,
                                 (long long)h);
    }
    if (check_vector(c, 2, "gamma", h)) return -1;
    int bias_input = simplified ? 3 : 4;
    if (!simplified && check_vector(c, 3, "beta", h)) return -1;
    if (check_vector(c, bias_input, "bias", h)) return -1;
    if (x->rank < 0) {
        for (int o = 0; o < 4; o++)
            if (ox_infer_set_output(c, o, o == 1 || o == 2 ? ONYX_FLOAT32 : x->dtype, NULL, -1))
                return -1;
        return 0;
    }
    int64_t sd[OX_MAX_RANK];
    for (int d = 0; d < x->rank; d++) sd[d] = d < x->rank - 1 ? x->dims[d] : 1;
    return ox_infer_set_output(c, 0, x->dtype, x->dims, x->rank) ||
                   ox_infer_set_output(c, 1, ONYX_FLOAT32, sd, x->rank) ||
                   ox_infer_set_output(c, 2, ONYX_FLOAT32, sd, x->rank) ||
                   ox_infer_set_output(c, 3, x->dtype, x->dims, x->rank)
               ? -1
               : 0;
}

/* SimplifiedLayerNormalization (RMS normalization over axis..rank-1). */
static int infer_simplified_layernorm(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "X") || ox_infer_need_tensor(c, 1, "scale") ||
        ox_infer_check_float(c, 0, "X", 1))
        return -1;
    const ir_type *x = ox_infer_in(c, 0);
    int64_t stash = ir_attr_int(c->node, "stash_type", 1);
    if (stash != ONYX_FLOAT32)
        return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED,
                             "SimplifiedLayerNormalization: stash_type %lld is not supported",
                             (long long)stash);
    const ir_type *sc = ox_infer_in(c, 1);
    ox_dtype ydt = sc->dtype != ONYX_UNDEFINED ? sc->dtype : x->dtype;
    if (x->rank < 0)
        return ox_infer_set_output(c, 0, ydt, NULL, -1) ||
                       ox_infer_set_output(c, 1, ONYX_FLOAT32, NULL, -1)
                   ? -1
                   : 0;
    int axis;
    if (ox_norm_axis(c, ir_attr_int(c->node, "axis", -1), x->rank, &axis)) return -1;
    int64_t sd[OX_MAX_RANK];
    for (int d = 0; d < x->rank; d++) sd[d] = d < axis ? x->dims[d] : 1;
    return ox_infer_set_output(c, 0, ydt, x->dims, x->rank) ||
                   ox_infer_set_output(c, 1, ONYX_FLOAT32, sd, x->rank)
               ? -1
               : 0;
}

static int infer_layernorm_v1(ox_infer_ctx *c) { return infer_as_base(c, NULL); }

static const ox_op_schema OPS[] = {
    {"com.microsoft", "FusedConv", 1, 1, 2, 4, 1, 1, infer_fused_conv},
    {"onyx", "FusedConv", 1, 1, 2, 5, 1, 1, infer_onyx_fused_conv},
    {"onyx", "ConvDepthwise", 1, 1, 2, 5, 1, 1, infer_conv_depthwise},
    {"onyx", "BlockChannels", 1, 1, 1, 1, 1, 1, infer_block_channels},
    {"onyx", "UnblockChannels", 1, 1, 1, 1, 1, 1, infer_unblock_channels},
    {"onyx", "BlockedConv", 1, 1, 2, 4, 1, 1, infer_blocked_conv},
    {"com.microsoft", "FusedGemm", 1, 1, 2, 3, 1, 1, infer_fused_gemm},
    {"com.microsoft", "FusedMatMul", 1, 1, 2, 2, 1, 1, infer_fused_matmul},
    {"com.microsoft", "FusedMatMulActivation", 1, 1, 2, 2, 1, 1, infer_fused_matmul},
    {"com.microsoft", "QuickGelu", 1, 1, 1, 1, 1, 1, infer_float_unary},
    {"com.microsoft", "Gelu", 1, 1, 1, 1, 1, 1, infer_float_unary},
    {"com.microsoft", "FastGelu", 1, 1, 1, 2, 1, 1, infer_float_unary},
    {"com.microsoft", "BiasGelu", 1, 1, 2, 2, 1, 1, infer_float_unary},
    {"com.microsoft", "SkipLayerNormalization", 1, 1, 3, 5, 1, 4, infer_skip_layernorm},
    {"com.microsoft", "SkipSimplifiedLayerNormalization", 1, 1, 3, 4, 1, 4,
     infer_skip_layernorm},
    /* ONNX Runtime registers these two in the ONNX domain: the first
     * before ONNX had it (opsets 1..16), the second not in ONNX at all */
    {"", "LayerNormalization", 1, 16, 2, 3, 1, 3, infer_layernorm_v1},
    {"", "SimplifiedLayerNormalization", 1, 1000, 2, 2, 1, 2, infer_simplified_layernorm},
};

const ox_op_table ox_ops_contrib = {OPS, sizeof OPS / sizeof OPS[0]};
