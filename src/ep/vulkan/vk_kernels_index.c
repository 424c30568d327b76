/* The Vulkan provider's kernels for the index operators and reductions:
 * GatherElements, TopK, ArgMax/ArgMin and the float32 reductions here;
 * GatherND, ScatterND, ScatterElements and NonZero in vk_index_scatter.c.
 *
 * int64 indices and outputs are pairs of 32-bit words (low word first):
 * no shader needs 64-bit integers, so everything works on devices without
 * shaderInt64 (ONYX_VK_DISABLE=int64). Every index a shader follows is
 * checked against the size it addresses (vk_index_check): a bad one, even
 * an int64 beyond 32 bits that would truncate into range, fails the run
 * naming it, and nothing is read or written through it. */
#include "ep/vulkan/vk_index.h"

OX_VK_SHADER(index_gather_elements)
OX_VK_SHADER(index_topk)
OX_VK_SHADER(index_arg)
OX_VK_SHADER(reduce_float)

/* ---- shared helpers (vk_index.h) ---- */

int ox_vk_idx_type(const ir_type *t) {
    return t && t->kind == OX_KIND_TENSOR && (t->dtype == ONYX_INT32 || t->dtype == ONYX_INT64);
}

int ox_vk_idx_words_type(const ir_type *t) {
    if (!t || t->kind != OX_KIND_TENSOR) return 0;
    return t->dtype == ONYX_FLOAT32 || t->dtype == ONYX_INT32 || t->dtype == ONYX_INT64;
}

uint32_t ox_vk_idx_words(const ox_tensor *t) { return t->dtype == ONYX_INT64 ? 2u : 1u; }

void ox_vk_idx_strides(const ox_tensor *t, int64_t *st) {
    int64_t s = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        st[d] = s;
        s *= t->dims[d];
    }
}

int ox_vk_idx_elements_fit(ox_kernel_ctx *c, const ox_tensor *x, const ox_tensor *ind, int64_t axis) {
    for (int a = 0; a < x->rank; a++)
        if (a != axis && ind->dims[a] > x->dims[a])
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                                  "%s: indices dimension %d (%" PRId64 ") exceeds the data's (%" PRId64 ")",
                                  c->node->op_type, a, ind->dims[a], x->dims[a]);
    return 0;
}

void ox_vk_idx_elements_walk(const ox_tensor *x, const ox_tensor *ind, uint32_t *dims, uint32_t *xs) {
    int64_t st[OX_MAX_RANK];
    ox_vk_idx_strides(x, st);
    for (int a = 0; a < x->rank; a++) {
        dims[a] = (uint32_t)ind->dims[a];
        xs[a] = (uint32_t)st[a];
    }
}

/* ---- GatherElements ---- */

static int axis_of(const ir_node *node, int rank, int64_t dflt, int64_t *axis) {
    int64_t a = ir_attr_int(node, "axis", dflt);
    if (a < -rank || a >= rank) return 0;
    *axis = a < 0 ? a + rank : a;
    return 1;
}

/* Indices of unknown rank (a Tile of a data-dependent shape, in the
 * DETR heads) are taken: the kernel checks the ranks at run time, where
 * a mismatch is the model's error on any provider. */
static int s_gather_elements(const ir_node *node, const ir_type *const *in, int n) {
    int64_t axis;
    return n == 2 && ox_vk_idx_words_type(in[0]) && ox_vk_idx_type(in[1]) && in[0]->rank >= 1 &&
           in[0]->rank <= OX_VK_IDX_RANK && (in[1]->rank < 0 || in[1]->rank == in[0]->rank) &&
           axis_of(node, in[0]->rank, 0, &axis);
}

static int k_gather_elements(ox_kernel_ctx *c) {
    if (ox_vk_check_io(c, ox_vk_index_host_inputs(c->node)) != 0) return -1;
    const ox_tensor *x = c->inputs[0], *ind = c->inputs[1];
    ox_tensor *y = c->outputs[0];
    int r = x->rank;
    int64_t axis;
    if (!axis_of(c->node, r, 0, &axis) || ind->rank != r || r > OX_VK_IDX_RANK)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                              "GatherElements: axis or indices rank does not match the data");
    if (ox_vk_idx_elements_fit(c, x, ind, axis) != 0) return -1;
    int64_t n = ox_tensor_numel(ind);
    if (n == 0) return 0;
    struct {
        uint32_t n, rank, axis, axis_len, idx64, words, dims[OX_VK_IDX_RANK], xs[OX_VK_IDX_RANK];
    } p = {(uint32_t)n, (uint32_t)r, (uint32_t)axis, (uint32_t)x->dims[axis],
           ind->dtype == ONYX_INT64, ox_vk_idx_words(x), {0}, {0}};
    ox_vk_idx_elements_walk(x, ind, p.dims, p.xs);
    vk_index_check ck = {.indices = ind, .axis_size = x->dims[axis], .axis = (int)axis};
    vk_dispatch d = {.shader = &VK_SHADER_index_gather_elements,
                     .bufs = {ox_vk_buf(x), ox_vk_buf(ind), ox_vk_buf(y)}, .push = &p,
                     .push_bytes = sizeof p,
                     .groups = {ox_vk_groups(ox_vk_of(c), n, ox_vk_of(c)->wg, 0), 1, 1}, .check = &ck};
    return ox_vk_run(c, &d);
}

/* ---- TopK ---- */

/* Rows longer than this stay on the CPU when known at load: the rank
 * count costs up to len^2 comparisons per row when K is close to len. */
#define TOPK_MAX_LEN 65536

static int s_topk(const ir_node *node, const ir_type *const *in, int n) {
    int64_t axis;
    if (n != 2 || !ox_vk_is_tensor(in[0], ONYX_FLOAT32) || !ox_vk_is_tensor(in[1], ONYX_INT64))
        return 0;
    if (in[0]->rank < 1 || !axis_of(node, in[0]->rank, -1, &axis)) return 0;
    return in[0]->dims[axis] <= TOPK_MAX_LEN;
}

static int k_topk(ox_kernel_ctx *c) {
    if (ox_vk_check_io(c, ox_vk_index_host_inputs(c->node)) != 0) return -1;
    const ox_tensor *x = c->inputs[0], *kt = c->inputs[1];
    ox_tensor *vals = c->outputs[0], *inds = c->n_outputs > 1 ? c->outputs[1] : NULL;
    int64_t axis;
    if (!axis_of(c->node, x->rank, -1, &axis))
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "TopK: axis is out of range");
    if (!kt || kt->dtype != ONYX_INT64 || ox_tensor_numel(kt) != 1)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "TopK: K must be a single int64");
    int64_t k = ((const int64_t *)kt->data)[0], len = x->dims[axis];
    if (k < 0 || k > len)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                              "TopK: K = %" PRId64 " is out of range for axis %" PRId64
                              " of size %" PRId64, k, axis, len);
    int64_t n = ox_tensor_numel(x);
    if (k == 0 || n == 0 || (!vals && !inds)) return 0;
    int64_t inner = 1;
    for (int d = (int)axis + 1; d < x->rank; d++) inner *= x->dims[d];
    int largest = c->node->opset >= 11 ? ir_attr_int(c->node, "largest", 1) != 0 : 1;
    struct { uint32_t n, len, inner, k, largest, outs; } p = {
        (uint32_t)n, (uint32_t)len, (uint32_t)inner, (uint32_t)k, (uint32_t)largest,
        (vals ? 1u : 0u) | (inds ? 2u : 0u)};
    vk_dispatch d = {.shader = &VK_SHADER_index_topk,
                     .bufs = {ox_vk_buf(x), vals ? ox_vk_buf(vals) : NULL,
                              inds ? ox_vk_buf(inds) : NULL},
                     .push = &p, .push_bytes = sizeof p,
                     .groups = {ox_vk_groups(ox_vk_of(c), n, ox_vk_of(c)->wg, 0), 1, 1}};
    return ox_vk_run(c, &d);
}

/* ---- ArgMax / ArgMin ---- */

static int s_arg(const ir_node *node, const ir_type *const *in, int n) {
    int64_t axis;
    return n == 1 && ox_vk_is_tensor(in[0], ONYX_FLOAT32) && in[0]->rank >= 1 &&
           axis_of(node, in[0]->rank, 0, &axis);
}

static int run_arg(ox_kernel_ctx *c, uint32_t is_min) {
    if (ox_vk_check_io(c, ox_vk_index_host_inputs(c->node)) != 0) return -1;
    const ox_tensor *x = c->inputs[0];
    ox_tensor *y = c->outputs[0];
    const char *op = c->node->op_type;
    int64_t axis;
    if (!axis_of(c->node, x->rank, 0, &axis))
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: axis is out of range for rank %d", op,
                              x->rank);
    int64_t len = x->dims[axis], inner = 1;
    for (int d = (int)axis + 1; d < x->rank; d++) inner *= x->dims[d];
    int64_t lines = len ? ox_tensor_numel(x) / len : ox_tensor_numel(y);
    if (lines == 0) return 0;
    if (len == 0) return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: cannot reduce an empty axis", op);
    if (ox_tensor_numel(y) != lines || y->dtype != ONYX_INT64)
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "%s: output shape mismatch", op);
    struct { uint32_t lines, len, inner, is_min, last; } p = {
        (uint32_t)lines, (uint32_t)len, (uint32_t)inner, is_min,
        ir_attr_int(c->node, "select_last_index", 0) != 0};
    vk_dispatch d = {.shader = &VK_SHADER_index_arg, .bufs = {ox_vk_buf(x), ox_vk_buf(y)},
                     .push = &p, .push_bytes = sizeof p,
                     .groups = {ox_vk_groups(ox_vk_of(c), lines, ox_vk_of(c)->wg, 0), 1, 1}};
    return ox_vk_run(c, &d);
}

static int k_argmax(ox_kernel_ctx *c) { return run_arg(c, 0); }
static int k_argmin(ox_kernel_ctx *c) { return run_arg(c, 1); }

/* ---- reductions ---- */

/* op codes of reduce_float.comp */
enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LOGSUMEXP, R_SUMSQ };
#define RED_SLOTS 6
/* up to this many elements per output, one invocation per output */
#define RED_SERIAL 64

typedef struct reduce_push {
    uint32_t n_out, n_red, op, krank, rrank, per_thread;
    uint32_t kd[RED_SLOTS], ks[RED_SLOTS], rd[RED_SLOTS], rs[RED_SLOTS];
} reduce_push;

/* Whether the axes come from input 1 (ReduceSum from version 13, the
 * others from 18) rather than the attribute. */
static int axes_from_input(const ir_node *node) {
    int v = ox_op_since_version(node->domain, node->op_type, node->opset);
    return strcmp(node->op_type, "ReduceSum") == 0 ? v >= 13 : v >= 18;
}

static int s_reduce(const ir_node *node, const ir_type *const *in, int n) {
    if (n < 1 || !ox_vk_is_tensor(in[0], ONYX_FLOAT32) || in[0]->rank < 0 ||
        in[0]->rank > 2 * RED_SLOTS)
        return 0;
    if (n >= 2 && in[1] && (!axes_from_input(node) || !ox_vk_is_tensor(in[1], ONYX_INT64)))
        return 0;
    return n <= 2;
}

/* Marks the reduced dimensions; 1 for "pass the input through"
 * (noop_with_empty_axes with no axes), -1 with ctx failed. */
static int reduced_dims(ox_kernel_ctx *c, int rank, int *red) {
    const int64_t *axes = NULL;
    int64_t n = 0;
    const ox_tensor *at = c->n_inputs > 1 ? c->inputs[1] : NULL;
    if (at) {
        if (at->dtype != ONYX_INT64)
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: axes must be int64", c->node->op_type);
        axes = at->data;
        n = ox_tensor_numel(at);
    } else if (!axes_from_input(c->node)) {
        size_t cnt = 0;
        axes = ir_attr_ints(c->node, "axes", &cnt);
        n = (int64_t)cnt;
    }
    for (int d = 0; d < rank; d++) red[d] = n == 0;
    if (n == 0) return ir_attr_int(c->node, "noop_with_empty_axes", 0) != 0;
    for (int64_t k = 0; k < n; k++) {
        if (axes[k] < -rank || axes[k] >= rank)
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                                  "%s: axis %" PRId64 " is out of range for rank %d",
                                  c->node->op_type, axes[k], rank);
        red[axes[k] < 0 ? axes[k] + rank : axes[k]] = 1;
    }
    return 0;
}

/* Folds x's shape into alternating runs of kept and reduced dimensions
 * (dimensions of 1 dropped: they move nothing). */
static int fold_dims(ox_kernel_ctx *c, const ox_tensor *x, const int *red, reduce_push *p) {
    int64_t xs[OX_MAX_RANK];
    ox_vk_idx_strides(x, xs);
    int prev = -1; /* kind of the last run: 0 kept, 1 reduced */
    for (int d = 0; d < x->rank; d++) {
        if (x->dims[d] == 1) continue;
        uint32_t *dims = red[d] ? p->rd : p->kd, *st = red[d] ? p->rs : p->ks;
        uint32_t *cnt = red[d] ? &p->rrank : &p->krank;
        if (prev == red[d]) { /* contiguous with the run before: merge */
            dims[*cnt - 1] *= (uint32_t)x->dims[d];
            st[*cnt - 1] = (uint32_t)xs[d];
            continue;
        }
        if (*cnt == RED_SLOTS)
            return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED,
                                  "vulkan %s: the axes split the input into more than %d runs",
                                  c->node->op_type, RED_SLOTS);
        dims[*cnt] = (uint32_t)x->dims[d];
        st[*cnt] = (uint32_t)xs[d];
        (*cnt)++;
        prev = red[d];
    }
    return 0;
}

static int run_reduce(ox_kernel_ctx *c, uint32_t op) {
    if (ox_vk_check_io(c, ox_vk_index_host_inputs(c->node)) != 0) return -1;
    const ox_tensor *x = c->inputs[0];
    ox_tensor *y = c->outputs[0];
    int red[OX_MAX_RANK];
    int noop = reduced_dims(c, x->rank, red);
    if (noop < 0) return -1;
    reduce_push p = {.op = op};
    if (noop) {
        /* the input unchanged: a max over one element each is the element */
        for (int d = 0; d < x->rank; d++) red[d] = 0;
        p.op = R_MAX;
    }
    if (fold_dims(c, x, red, &p) != 0) return -1;
    int64_t n_out = 1, n_red = 1;
    for (int d = 0; d < x->rank; d++) {
        if (red[d]) n_red *= x->dims[d];
        else n_out *= x->dims[d];
    }
    if (ox_tensor_numel(y) != n_out)
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "%s: output has %" PRId64
                              " elements, expected %" PRId64, c->node->op_type,
                              ox_tensor_numel(y), n_out);
    if (n_out == 0) return 0;
    p.n_out = (uint32_t)n_out;
    p.n_red = (uint32_t)n_red;
    p.per_thread = n_red <= RED_SERIAL;
    vk_ep *v = ox_vk_of(c);
    vk_dispatch d = {.shader = &VK_SHADER_reduce_float, .bufs = {ox_vk_buf(x), ox_vk_buf(y)},
                     .push = &p, .push_bytes = sizeof p,
                     .groups = {p.per_thread ? ox_vk_groups(v, n_out, v->wg, 0)
                                             : ox_vk_groups(v, n_out, 1, 0), 1, 1},
                     .cost = p.per_thread ? p.n_red : (p.n_red + v->wg - 1) / v->wg};
    return ox_vk_run(c, &d);
}

#define REDUCE(name, op) \
    static int k_##name(ox_kernel_ctx *c) { return run_reduce(c, op); }
REDUCE(rsum, R_SUM)
REDUCE(rmean, R_MEAN)
REDUCE(rmax, R_MAX)
REDUCE(rmin, R_MIN)
REDUCE(rprod, R_PROD)
REDUCE(rl1, R_L1)
REDUCE(rl2, R_L2)
REDUCE(rlogsum, R_LOGSUM)
REDUCE(rlogsumexp, R_LOGSUMEXP)
REDUCE(rsumsq, R_SUMSQ)

/* Operator versions as in the ONNX schemas. Versions differ in what the
 * attributes allow (negative axes from 11, select_last_index from 12,
 * axes as an input from 13/18) and in types; the kernels implement each
 * version's defaults. ReduceMax/ReduceMin-20 only add bool, and TopK-24
 * bfloat16: float32 is the same operator. */
static const ox_kernel_def KERNELS[] = {
    {"", "GatherElements", 11, 13, k_gather_elements, s_gather_elements, NULL, NULL, NULL},
    {"", "TopK", 10, 24, k_topk, s_topk, NULL, NULL, NULL},
    {"", "ArgMax", 1, 13, k_argmax, s_arg, NULL, NULL, NULL},
    {"", "ArgMin", 1, 13, k_argmin, s_arg, NULL, NULL, NULL},
    {"", "ReduceSum", 1, 13, k_rsum, s_reduce, NULL, NULL, NULL},
    {"", "ReduceMean", 1, 18, k_rmean, s_reduce, NULL, NULL, NULL},
    {"", "ReduceMax", 1, 20, k_rmax, s_reduce, NULL, NULL, NULL},
    {"", "ReduceMin", 1, 20, k_rmin, s_reduce, NULL, NULL, NULL},
    {"", "ReduceProd", 1, 18, k_rprod, s_reduce, NULL, NULL, NULL},
    {"", "ReduceL1", 1, 18, k_rl1, s_reduce, NULL, NULL, NULL},
    {"", "ReduceL2", 1, 18, k_rl2, s_reduce, NULL, NULL, NULL},
    {"", "ReduceLogSum", 1, 18, k_rlogsum, s_reduce, NULL, NULL, NULL},
    {"", "ReduceLogSumExp", 1, 18, k_rlogsumexp, s_reduce, NULL, NULL, NULL},
    {"", "ReduceSumSquare", 1, 18, k_rsumsq, s_reduce, NULL, NULL, NULL},
    {"", "GatherND", 11, 13, ox_vk_k_gather_nd, ox_vk_s_gather_nd, NULL, NULL, NULL},
    {"", "ScatterND", 11, 18, ox_vk_k_scatter_nd, ox_vk_s_scatter_nd, NULL, NULL, NULL},
    {"", "ScatterElements", 11, 18, ox_vk_k_scatter_elements, ox_vk_s_scatter_elements, NULL, NULL, NULL},
    {"", "NonZero", 9, 13, ox_vk_k_nonzero, ox_vk_s_nonzero, NULL, NULL, NULL},
};

const ox_kernel_table ox_vk_kernels_index = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};

/* Read on the host: TopK's K and the reductions' axes (input 1). */
uint32_t ox_vk_index_host_inputs(const ir_node *node) {
    if (node->domain[0] != '\0') return 0;
    const char *op = node->op_type;
    if (strcmp(op, "TopK") == 0 || strncmp(op, "Reduce", 6) == 0) return 1u << 1;
    return 0;
}
