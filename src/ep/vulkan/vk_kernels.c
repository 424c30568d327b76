/* The Vulkan provider's kernels: float32 elementwise operators with numpy
 * broadcasting, MatMul, Gemm and onyx FusedMatMul, Softmax and LogSoftmax
 * over any axis, and Gather of 32-bit elements. Each checks what it is
 * given, fills the push constants of its shader and records its dispatch
 * (ox_vk_run).
 *
 * Placement: the kernel's supports() checks types and ranks; ox_vk_claims
 * adds the device's limits for sizes known at load time. Every input is a
 * plain data tensor (no shape-like inputs), since the current interface
 * copies every input of a device node to the device. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "ep/cpu/kernels/activation.h"
#include "ep/vulkan/vk_kernel.h"

OX_VK_SHADER(unary)
OX_VK_SHADER(binary)
OX_VK_SHADER(matmul)
OX_VK_SHADER(matmul_w16)
OX_VK_SHADER(softmax)
OX_VK_SHADER(softmax_subgroup)
OX_VK_SHADER(gather)

#define MAX_RANK_BINARY 6
#define MAX_BATCH_RANK 4

/* ---- placement ---- */

static int s_unary(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    return ox_vk_f32_inputs(in, n, 1);
}

static int s_gelu(const ir_node *node, const ir_type *const *in, int n) {
    const char *ap = ir_attr_string(node, "approximate", "none");
    return ox_vk_f32_inputs(in, n, 1) && (strcmp(ap, "none") == 0 || strcmp(ap, "tanh") == 0);
}

/* Ranks unknown at load time (decoders fed by data-dependent shapes) are
 * taken: the kernels check them at run time, and an output needing more
 * folded dimensions than the shaders hold is the only refusal then. */
static int s_binary(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    return n == 2 && ox_vk_f32_inputs(in, n, 2) && in[0]->rank <= MAX_RANK_BINARY &&
           in[1]->rank <= MAX_RANK_BINARY;
}

static int s_matmul(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    return n == 2 && ox_vk_f32_inputs(in, n, 2) && in[0]->rank != 0 && in[1]->rank != 0 &&
           in[0]->rank <= MAX_BATCH_RANK + 2 && in[1]->rank <= MAX_BATCH_RANK + 2;
}

/* FusedMatMul: A [..., M, K] or [K], B a matrix, an optional bias. */
static int s_fused_matmul(const ir_node *node, const ir_type *const *in, int n) {
    ox_act act;
    return n >= 2 && n <= 3 && ox_vk_f32_inputs(in, n, 2) && in[0]->rank != 0 && in[1]->rank == 2 &&
           ox_act_of_node(node, &act) == 0;
}

static int s_gemm(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    return n >= 2 && n <= 3 && ox_vk_f32_inputs(in, n, 2) && in[0]->rank == 2 && in[1]->rank == 2 &&
           (n < 3 || !in[2] || (in[2]->rank >= 0 && in[2]->rank <= 2));
}

/* Softmax and LogSoftmax as rows: (outer, len, inner) with the row's
 * elements `inner` apart. From opset 13 the axis is one dimension
 * (default -1); before, the input is coerced to 2-D at `axis` (default 1)
 * and each row is everything from the axis on. 0 when axis is outside
 * the rank. */
static int softmax_rows(const ir_node *node, int rank, const int64_t *dims, int64_t *outer,
                        int64_t *len, int64_t *inner) {
    int v13 = node->opset >= 13;
    int64_t axis = ir_attr_int(node, "axis", v13 ? -1 : 1);
    if (axis < -rank || axis >= rank) return 0;
    if (axis < 0) axis += rank;
    if (!dims) return 1;
    *outer = 1;
    *len = 1;
    *inner = 1;
    for (int d = 0; d < rank; d++) {
        if (d < axis) *outer *= dims[d];
        else if (d == axis || !v13) *len *= dims[d];
        else *inner *= dims[d];
    }
    return 1;
}

static int s_softmax(const ir_node *node, const ir_type *const *in, int n) {
    return n == 1 && ox_vk_f32_inputs(in, n, 1) && in[0]->rank >= 1 &&
           softmax_rows(node, in[0]->rank, NULL, NULL, NULL, NULL);
}

static int s_gather(const ir_node *node, const ir_type *const *in, int n) {
    if (n != 2 || !in[0] || !in[1] || in[0]->kind != OX_KIND_TENSOR ||
        in[1]->kind != OX_KIND_TENSOR)
        return 0;
    if (in[0]->dtype != ONYX_FLOAT32 && in[0]->dtype != ONYX_INT32) return 0;
    if (in[1]->dtype != ONYX_INT64 && in[1]->dtype != ONYX_INT32) return 0;
    int r = in[0]->rank;
    int64_t axis = ir_attr_int(node, "axis", 0);
    return r >= 1 && axis >= -r && axis < r && in[1]->rank >= 0;
}

/* Element count of the broadcast of a and b, leaving out the last
 * skip_a (skip_b) dimensions of each; -1 if unknown. */
static int64_t broadcast_numel(const ir_type *a, int skip_a, const ir_type *b, int skip_b) {
    int ra = a->rank - skip_a, rb = b->rank - skip_b;
    if (ra < 0) ra = 0;
    if (rb < 0) rb = 0;
    int r = ra > rb ? ra : rb;
    int64_t n = 1;
    for (int i = 0; i < r; i++) {
        int da = ra - 1 - i, db = rb - 1 - i;
        int64_t x = da >= 0 ? a->dims[da] : 1, y = db >= 0 ? b->dims[db] : 1;
        if (x < 0 || y < 0) return -1;
        int64_t d = x == 1 ? y : x;
        if (d && n > INT64_MAX / d) return INT64_MAX;
        n *= d;
    }
    return n;
}

/* The elementwise unary kernels bind tensors past one storage buffer's
 * range in windows (run_unary). */
static int windowed_op(const char *op) {
    static const char *const OPS[] = {"Relu", "Sigmoid", "Tanh", "Exp",  "Neg",       "Abs",
                                      "Sqrt", "Erf",     "Gelu", "LeakyRelu"};
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
        if (strcmp(op, OPS[i]) == 0) return 1;
    return 0;
}

int ox_vk_claims(const vk_ep *v, const ir_node *node, const ir_type *const *in, int n) {
    /* every shader needs workgroups of at least VK_WG_MIN invocations: under a lower
     * (masked) limit the whole graph stays on the CPU */
    if (!ox_vk_wg_ok(v)) return 0;
    const char *op = node->op_type;
    int windowed = windowed_op(op);
    for (int i = 0; i < n; i++)
        if (in[i] && !(windowed ? ox_vk_fits_windowed : ox_vk_fits)(v, ox_vk_known_numel(in[i]),
                                                                   ox_dtype_size(in[i]->dtype)))
            return 0;
    int64_t out = -1;
    int ranks_known = n >= 2 && in[0] && in[1] && in[0]->rank >= 0 && in[1]->rank >= 0;
    if (!ranks_known && (!strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") ||
                         !strcmp(op, "Div") || !strcmp(op, "MatMul")))
        return 1; /* sizes checked at run time */
    if (!strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") || !strcmp(op, "Div")) {
        out = broadcast_numel(in[0], 0, in[1], 0);
    } else if (!strcmp(op, "MatMul")) {
        const ir_type *a = in[0], *b = in[1];
        int64_t m = a->rank >= 2 ? a->dims[a->rank - 2] : 1, nn = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
        int64_t batch = broadcast_numel(a, 2, b, 2);
        if (m >= 0 && nn >= 0 && batch >= 0)
            out = m && nn && batch > INT64_MAX / m / nn ? INT64_MAX : batch * m * nn;
    } else if (!strcmp(op, "Gemm")) {
        int ta = ir_attr_int(node, "transA", 0) != 0, tb = ir_attr_int(node, "transB", 0) != 0;
        int64_t m = in[0]->dims[ta ? 1 : 0], nn = in[1]->dims[tb ? 0 : 1];
        if (m >= 0 && nn >= 0) out = m && nn > INT64_MAX / m ? INT64_MAX : m * nn;
    } else if (!strcmp(op, "Gather")) {
        int64_t d = ox_vk_known_numel(in[0]), i = ox_vk_known_numel(in[1]);
        int64_t axis = ir_attr_int(node, "axis", 0);
        if (axis < 0) axis += in[0]->rank;
        int64_t len = in[0]->dims[axis];
        if (d >= 0 && i >= 0 && len > 0) out = d / len > INT64_MAX / (i ? i : 1) ? INT64_MAX : d / len * i;
    }
    return ox_vk_fits(v, out, 4);
}

/* ---- run-time helpers ---- */

static vk_ep *vep(ox_kernel_ctx *c) { return ox_vk_of(c); }
static int check_all(ox_kernel_ctx *c) { return ox_vk_check_io(c, ox_vk_core_host_inputs(c->node)); }
static const vk_buf *B(const ox_tensor *t) { return ox_vk_buf(t); }
static uint32_t groups(const vk_ep *v, int64_t n, int64_t per, int dim) {
    return ox_vk_groups(v, n, per, dim);
}
static int dispatch(ox_kernel_ctx *c, const vk_dispatch *d) { return ox_vk_run(c, d); }

/* ---- elementwise, one input ---- */

enum { U_RELU, U_SIGMOID, U_TANH, U_EXP, U_NEG, U_ABS, U_SQRT, U_ERF, U_GELU, U_GELU_TANH,
       U_LEAKY, U_CLIP };

typedef struct unary_push {
    uint32_t n, op;
    float alpha, beta;
} unary_push;

static int run_unary(ox_kernel_ctx *c, uint32_t op, float alpha, float beta) {
    if (ox_vk_check_io_windowed(c, ox_vk_core_host_inputs(c->node)) != 0) return -1;
    const ox_tensor *x = c->inputs[0];
    ox_tensor *y = c->outputs[0];
    int64_t n = ox_tensor_numel(y);
    if (ox_tensor_numel(x) != n || x->dtype != ONYX_FLOAT32 || y->dtype != ONYX_FLOAT32)
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "vulkan %s: input and output differ",
                              c->node->op_type);
    if (n == 0) return 0;
    /* windows of at most one storage buffer's range, starting at offsets
     * the device accepts: one dispatch each when the tensor is larger */
    vk_ep *v = vep(c);
    uint64_t align = v->caps.min_storage_offset_alignment > 4 ? v->caps.min_storage_offset_alignment : 4;
    uint64_t win = v->caps.max_storage_buffer_range / align * align / 4;
    if (win == 0) win = 1;
    for (int64_t at = 0; at < n; at += (int64_t)win) {
        int64_t len = n - at < (int64_t)win ? n - at : (int64_t)win;
        unary_push p = {(uint32_t)len, op, alpha, beta};
        vk_dispatch d = {.shader = &VK_SHADER_unary, .bufs = {B(x), B(y)}, .push = &p,
                         .push_bytes = sizeof p, .groups = {groups(v, len, v->wg, 0), 1, 1}};
        if (len < n)
            for (int b = 0; b < 2; b++) {
                d.offset[b] = (VkDeviceSize)at * 4;
                d.range[b] = (VkDeviceSize)len * 4;
            }
        if (dispatch(c, &d) != 0) return -1;
    }
    return 0;
}

#define UNARY(name, op) \
    static int k_##name(ox_kernel_ctx *c) { return run_unary(c, op, 0, 0); }
UNARY(relu, U_RELU)
UNARY(sigmoid, U_SIGMOID)
UNARY(tanh, U_TANH)
UNARY(exp, U_EXP)
UNARY(neg, U_NEG)
UNARY(abs, U_ABS)
UNARY(sqrt, U_SQRT)
UNARY(erf, U_ERF)

static int k_gelu(ox_kernel_ctx *c) {
    const char *ap = ir_attr_string(c->node, "approximate", "none");
    if (strcmp(ap, "none") && strcmp(ap, "tanh"))
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                              "Gelu: approximate must be \"none\" or \"tanh\", got \"%s\"", ap);
    return run_unary(c, strcmp(ap, "tanh") == 0 ? U_GELU_TANH : U_GELU, 0, 0);
}

static int k_leaky(ox_kernel_ctx *c) {
    return run_unary(c, U_LEAKY, ir_attr_float(c->node, "alpha", 0.01f), 0);
}

/* Clip's bounds: attributes before opset 11, then scalar inputs, which
 * the planner keeps on the host (ox_vk_host_inputs). */
static int k_clip(ox_kernel_ctx *c) {
    float lo = -FLT_MAX, hi = FLT_MAX;
    if (c->node->opset < 11) {
        lo = ir_attr_float(c->node, "min", -FLT_MAX);
        hi = ir_attr_float(c->node, "max", FLT_MAX);
    } else {
        lo = -INFINITY;
        hi = INFINITY;
        for (int k = 1; k <= 2 && k < c->n_inputs; k++) {
            const ox_tensor *b = c->inputs[k];
            if (!b) continue;
            if (b->dtype != ONYX_FLOAT32 || ox_tensor_numel(b) != 1)
                return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Clip: %s must be a float scalar",
                                      k == 1 ? "min" : "max");
            memcpy(k == 1 ? &lo : &hi, b->data, sizeof(float));
        }
    }
    return run_unary(c, U_CLIP, lo, hi);
}

/* ---- elementwise, two inputs with broadcasting ---- */

typedef struct binary_push {
    uint32_t n, rank, op, flags;
    uint32_t dims[MAX_RANK_BINARY], sa[MAX_RANK_BINARY], sb[MAX_RANK_BINARY];
} binary_push;

/* Element strides of t for each dimension of an output of rank r (t's
 * dimensions aligned to the right), 0 where t broadcasts. */
static void bcast_strides(const ox_tensor *t, int r, int64_t *st) {
    int64_t s = 1;
    for (int d = r - 1; d >= 0; d--) {
        int td = d - (r - t->rank);
        if (td < 0 || t->dims[td] == 1) {
            st[d] = 0;
        } else {
            st[d] = s;
            s *= t->dims[td];
        }
    }
}

static int run_binary(ox_kernel_ctx *c, uint32_t op) {
    if (check_all(c) != 0) return -1;
    const ox_tensor *a = c->inputs[0], *b = c->inputs[1];
    ox_tensor *y = c->outputs[0];
    int64_t n = ox_tensor_numel(y);
    if (n == 0) return 0;
    int r = y->rank;
    int64_t sa[OX_MAX_RANK], sb[OX_MAX_RANK];
    bcast_strides(a, r, sa);
    bcast_strides(b, r, sb);
    /* Fold the shape: drop dimensions of 1 and merge neighbours that both
     * inputs walk contiguously (or both broadcast), so most cases end up
     * with one or two dimensions. */
    int64_t fd[OX_MAX_RANK], fa[OX_MAX_RANK], fb[OX_MAX_RANK];
    int k = 0;
    for (int d = 0; d < r; d++) {
        if (y->dims[d] == 1) continue;
        if (k > 0 && fa[k - 1] == sa[d] * y->dims[d] && fb[k - 1] == sb[d] * y->dims[d]) {
            fd[k - 1] *= y->dims[d];
            fa[k - 1] = sa[d];
            fb[k - 1] = sb[d];
            continue;
        }
        fd[k] = y->dims[d];
        fa[k] = sa[d];
        fb[k] = sb[d];
        k++;
    }
    if (k > MAX_RANK_BINARY)
        return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED,
                              "vulkan %s: the broadcast needs %d dimensions (at most %d)",
                              c->node->op_type, k, MAX_RANK_BINARY);
    binary_push p = {.n = (uint32_t)n, .rank = (uint32_t)k, .op = op};
    int64_t na = ox_tensor_numel(a), nb = ox_tensor_numel(b);
    p.flags = (na == n ? 1u : 0u) | (nb == n ? 2u : 0u) | (na == 1 ? 4u : 0u) | (nb == 1 ? 8u : 0u);
    for (int d = 0; d < k; d++) {
        p.dims[d] = (uint32_t)fd[d];
        p.sa[d] = (uint32_t)fa[d];
        p.sb[d] = (uint32_t)fb[d];
    }
    vk_dispatch d = {.shader = &VK_SHADER_binary, .bufs = {B(a), B(b), B(y)}, .push = &p,
                     .push_bytes = sizeof p, .groups = {groups(vep(c), n, vep(c)->wg, 0), 1, 1}};
    return dispatch(c, &d);
}

static int k_add(ox_kernel_ctx *c) { return run_binary(c, 0); }
static int k_sub(ox_kernel_ctx *c) { return run_binary(c, 1); }
static int k_mul(ox_kernel_ctx *c) { return run_binary(c, 2); }
static int k_div(ox_kernel_ctx *c) { return run_binary(c, 3); }

/* ---- MatMul and Gemm ---- */

typedef struct matmul_push {
    uint32_t M, N, K, batch, flags, c_sm, c_sn;
    float alpha, beta;
    uint32_t brank;
    uint32_t bdims[MAX_BATCH_RANK], sa[MAX_BATCH_RANK], sb[MAX_BATCH_RANK];
    float act_a, act_b; /* FusedMatMul's activation parameters */
} matmul_push;

/* flags: the activation (ox_act_kind) from this bit on */
#define MATMUL_ACT_SHIFT 8

static int run_matmul(ox_kernel_ctx *c, matmul_push *p, const ox_tensor *a, const ox_tensor *b,
                      const ox_tensor *cc) {
    ox_tensor *y = c->outputs[0];
    if (ox_tensor_numel(y) == 0) return 0;
    vk_ep *v = vep(c);
    /* B stored as float16: a weight (vk_weights.c) */
    vk_dispatch d = {.shader = B(b)->half ? &VK_SHADER_matmul_w16 : &VK_SHADER_matmul,
                     .bufs = {B(a), B(b), cc ? B(cc) : NULL, B(y)},
                     .push = p, .push_bytes = sizeof *p,
                     .groups = {groups(v, p->N, v->tile, 0), groups(v, p->M, v->tile, 1),
                                groups(v, p->batch, 1, 2)},
                     .cost = p->K ? p->K : 1, /* one output per invocation */
                     .invocations = v->tile * v->tile};
    return dispatch(c, &d);
}

static int k_matmul(ox_kernel_ctx *c) {
    if (check_all(c) != 0) return -1;
    const ox_tensor *a = c->inputs[0], *b = c->inputs[1];
    int ra = a->rank, rb = b->rank;
    if (ra < 1 || rb < 1) return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "MatMul: scalar operand");
    int64_t M = ra >= 2 ? a->dims[ra - 2] : 1, K = a->dims[ra - 1];
    int64_t Kb = rb >= 2 ? b->dims[rb - 2] : b->dims[0], N = rb >= 2 ? b->dims[rb - 1] : 1;
    if (K != Kb)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "MatMul: inner dimensions %" PRId64
                              " and %" PRId64 " differ", K, Kb);
    /* batch dimensions of each input (all but the matrix's), aligned right */
    int ba = ra > 2 ? ra - 2 : 0, bb = rb > 2 ? rb - 2 : 0, br = ba > bb ? ba : bb;
    if (br > MAX_BATCH_RANK)
        return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "vulkan MatMul: %d batch dimensions (at most %d)",
                              br, MAX_BATCH_RANK);
    matmul_push p = {.M = (uint32_t)M, .N = (uint32_t)N, .K = (uint32_t)K, .alpha = 1.0f,
                     .brank = (uint32_t)br};
    int64_t batch = 1, step_a = M * K, step_b = K * N;
    for (int d = br - 1; d >= 0; d--) {
        int da = d - (br - ba), db = d - (br - bb);
        int64_t xa = da >= 0 ? a->dims[da] : 1, xb = db >= 0 ? b->dims[db] : 1;
        if (xa != xb && xa != 1 && xb != 1)
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                                  "MatMul: batch dimensions %" PRId64 " and %" PRId64 " differ", xa, xb);
        p.bdims[d] = (uint32_t)(xa == 1 ? xb : xa);
        p.sa[d] = xa == 1 ? 0 : (uint32_t)step_a;
        p.sb[d] = xb == 1 ? 0 : (uint32_t)step_b;
        step_a *= xa;
        step_b *= xb;
        batch *= p.bdims[d];
    }
    p.batch = (uint32_t)batch;
    if (ox_tensor_numel(c->outputs[0]) != batch * M * N)
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "vulkan MatMul: output size does not match");
    return run_matmul(c, &p, a, b, NULL);
}

static int k_gemm(ox_kernel_ctx *c) {
    if (check_all(c) != 0) return -1;
    const ox_tensor *a = c->inputs[0], *b = c->inputs[1];
    const ox_tensor *cc = c->n_inputs > 2 ? c->inputs[2] : NULL;
    int ta = ir_attr_int(c->node, "transA", 0) != 0, tb = ir_attr_int(c->node, "transB", 0) != 0;
    if (a->rank != 2 || b->rank != 2)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Gemm: A and B must be matrices");
    int64_t M = a->dims[ta ? 1 : 0], K = a->dims[ta ? 0 : 1];
    int64_t Kb = b->dims[tb ? 1 : 0], N = b->dims[tb ? 0 : 1];
    if (K != Kb)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Gemm: inner dimensions %" PRId64
                              " and %" PRId64 " differ", K, Kb);
    matmul_push p = {.M = (uint32_t)M, .N = (uint32_t)N, .K = (uint32_t)K, .batch = 1,
                     .flags = (ta ? 1u : 0u) | (tb ? 2u : 0u),
                     .alpha = ir_attr_float(c->node, "alpha", 1.0f),
                     .beta = ir_attr_float(c->node, "beta", 1.0f)};
    if (cc && ox_tensor_numel(cc) > 0) {
        /* C broadcasts to (M, N) from a scalar, a row, a column or a matrix */
        int64_t cm = cc->rank == 2 ? cc->dims[0] : 1, cn = cc->rank >= 1 ? cc->dims[cc->rank - 1] : 1;
        if ((cm != 1 && cm != M) || (cn != 1 && cn != N))
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Gemm: C does not broadcast to (%" PRId64
                                  ", %" PRId64 ")", M, N);
        p.flags |= 4u;
        p.c_sm = cm == 1 ? 0 : (uint32_t)cn;
        p.c_sn = cn == 1 ? 0 : 1;
    } else {
        cc = NULL;
    }
    return run_matmul(c, &p, a, b, cc);
}

/* onyx FusedMatMul: act(A op(B) + bias) in one dispatch. B is a matrix,
 * so A's leading dimensions are rows of one product. */
static int k_fused_matmul(ox_kernel_ctx *c) {
    if (check_all(c) != 0) return -1;
    const ox_tensor *a = c->inputs[0], *b = c->inputs[1];
    const ox_tensor *bias = c->n_inputs > 2 ? c->inputs[2] : NULL;
    ox_act act;
    if (ox_act_of_node(c->node, &act) != 0)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "FusedMatMul: unknown activation '%s'",
                              ir_attr_string(c->node, "activation", ""));
    int tb = ir_attr_int(c->node, "transB", 0) != 0;
    if (a->rank < 1 || b->rank != 2)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "FusedMatMul: A must have rank 1 or more and B 2");
    int64_t K = a->dims[a->rank - 1], Kb = b->dims[tb ? 1 : 0], N = b->dims[tb ? 0 : 1];
    if (K != Kb)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "FusedMatMul: inner dimensions %" PRId64
                              " and %" PRId64 " differ", K, Kb);
    int64_t M = K ? ox_tensor_numel(a) / K : 0;
    if (ox_tensor_numel(c->outputs[0]) != M * N)
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "vulkan FusedMatMul: output size does not match");
    if (bias && ox_tensor_numel(bias) != N)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "FusedMatMul: bias has %" PRId64
                              " values, expected %" PRId64, ox_tensor_numel(bias), N);
    matmul_push p = {.M = (uint32_t)M, .N = (uint32_t)N, .K = (uint32_t)K, .batch = 1,
                     .flags = (tb ? 2u : 0u) | (bias ? 4u : 0u) | (uint32_t)act.kind << MATMUL_ACT_SHIFT,
                     .c_sn = 1, .alpha = 1.0f, .beta = 1.0f, .act_a = act.p0, .act_b = act.p1};
    return run_matmul(c, &p, a, b, bias);
}

/* ---- Softmax ---- */

static int run_softmax(ox_kernel_ctx *c, uint32_t log) {
    if (check_all(c) != 0) return -1;
    const ox_tensor *x = c->inputs[0];
    ox_tensor *y = c->outputs[0];
    int64_t outer, len, inner;
    if (!softmax_rows(c->node, x->rank, x->dims, &outer, &len, &inner))
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: axis is out of range for rank %d",
                              c->node->op_type, x->rank);
    if (ox_tensor_numel(x) == 0) return 0;
    struct { uint32_t rows, len, inner, log; } p = {(uint32_t)(outer * inner), (uint32_t)len,
                                                     (uint32_t)inner, log};
    vk_ep *v = vep(c);
    vk_dispatch d = {.shader = v->caps.subgroup_reduce ? &VK_SHADER_softmax_subgroup : &VK_SHADER_softmax,
                     .bufs = {B(x), B(y)}, .push = &p, .push_bytes = sizeof p,
                     .groups = {groups(v, p.rows, 1, 0), 1, 1},
                     /* three passes over a row, wg invocations to a row */
                     .cost = 3 * ((p.len + v->wg - 1) / v->wg)};
    return dispatch(c, &d);
}

static int k_softmax(ox_kernel_ctx *c) { return run_softmax(c, 0); }
static int k_logsoftmax(ox_kernel_ctx *c) { return run_softmax(c, 1); }

/* ---- Gather ---- */

static int k_gather(ox_kernel_ctx *c) {
    if (check_all(c) != 0) return -1;
    const ox_tensor *x = c->inputs[0], *ind = c->inputs[1];
    ox_tensor *y = c->outputs[0];
    int64_t axis = ir_attr_int(c->node, "axis", 0);
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis >= x->rank)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Gather: axis out of range");
    int64_t inner = 1;
    for (int d = (int)axis + 1; d < x->rank; d++) inner *= x->dims[d];
    int64_t n = ox_tensor_numel(y), nidx = ox_tensor_numel(ind);
    if (n == 0) return 0;
    struct { uint32_t n, inner, nidx, axis, idx64; } p = {
        (uint32_t)n, (uint32_t)inner, (uint32_t)nidx, (uint32_t)x->dims[axis],
        ind->dtype == ONYX_INT64};
    vk_index_check ck = {.indices = ind, .axis_size = x->dims[axis], .axis = (int)axis};
    vk_dispatch d = {.shader = &VK_SHADER_gather, .bufs = {B(x), B(ind), B(y)}, .push = &p,
                     .push_bytes = sizeof p, .groups = {groups(vep(c), n, vep(c)->wg, 0), 1, 1},
                     .check = &ck};
    return dispatch(c, &d);
}

/* Since-versions as in the ONNX schemas; before opset 6 the unary
 * operators carried consumed_inputs and the binary ones a broadcast
 * attribute, which these kernels do not implement. */
static const ox_kernel_def KERNELS[] = {
    {"", "Add", 7, 14, k_add, s_binary, NULL, NULL, NULL},
    {"", "Sub", 7, 14, k_sub, s_binary, NULL, NULL, NULL},
    {"", "Mul", 7, 14, k_mul, s_binary, NULL, NULL, NULL},
    {"", "Div", 7, 14, k_div, s_binary, NULL, NULL, NULL},
    {"", "Relu", 6, 14, k_relu, s_unary, NULL, NULL, NULL},
    {"", "Sigmoid", 6, 13, k_sigmoid, s_unary, NULL, NULL, NULL},
    {"", "Tanh", 6, 13, k_tanh, s_unary, NULL, NULL, NULL},
    {"", "Exp", 6, 13, k_exp, s_unary, NULL, NULL, NULL},
    {"", "Neg", 6, 13, k_neg, s_unary, NULL, NULL, NULL},
    {"", "Abs", 6, 13, k_abs, s_unary, NULL, NULL, NULL},
    {"", "Sqrt", 6, 13, k_sqrt, s_unary, NULL, NULL, NULL},
    {"", "Erf", 9, 13, k_erf, s_unary, NULL, NULL, NULL},
    {"", "Gelu", 20, 20, k_gelu, s_gelu, NULL, NULL, NULL},
    /* the exact GELU as ONNX Runtime names it before opset 20 */
    {"com.microsoft", "Gelu", 1, 1, k_gelu, s_gelu, NULL, NULL, NULL},
    {"", "LeakyRelu", 6, 16, k_leaky, s_unary, NULL, NULL, NULL},
    {"", "Clip", 6, 13, k_clip, s_unary, NULL, NULL, NULL},
    {"", "MatMul", 1, 13, k_matmul, s_matmul, NULL, NULL, NULL},
    {"", "Gemm", 7, 13, k_gemm, s_gemm, NULL, NULL, NULL},
    {"onyx", "FusedMatMul", 1, 1, k_fused_matmul, s_fused_matmul, NULL, NULL, NULL},
    {"", "Softmax", 1, 13, k_softmax, s_softmax, NULL, NULL, NULL},
    {"", "LogSoftmax", 1, 13, k_logsoftmax, s_softmax, NULL, NULL, NULL},
    {"", "Gather", 1, 13, k_gather, s_gather, NULL, NULL, NULL},
};

const ox_kernel_table ox_vk_kernels = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};

/* Inputs the kernels read on the host: Clip's bounds (opset 11+). */
uint32_t ox_vk_core_host_inputs(const ir_node *node) {
    if (strcmp(node->op_type, "Clip") == 0 && node->domain[0] == '\0' && node->opset >= 11)
        return 1u << 1 | 1u << 2;
    return 0;
}
