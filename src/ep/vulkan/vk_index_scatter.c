/* The index family's kernels that address by index tuples or write
 * through indices: GatherND, ScatterND, ScatterElements, and NonZero,
 * whose output shape depends on the data (its table rows are in
 * vk_kernels_index.c). */
#include "ep/vulkan/vk_index.h"

OX_VK_SHADER(index_gather_nd)
OX_VK_SHADER(index_copy)
OX_VK_SHADER(index_scatter_nd)
OX_VK_SHADER(index_scatter_elements)
OX_VK_SHADER(index_nonzero_count)
OX_VK_SHADER(index_nonzero_scan)
OX_VK_SHADER(index_nonzero_write)

static uint32_t groups_for(ox_kernel_ctx *c, int64_t n) {
    return ox_vk_groups(ox_vk_of(c), n, ox_vk_of(c)->wg, 0);
}

static int check_io(ox_kernel_ctx *c) { return ox_vk_check_io(c, ox_vk_index_host_inputs(c->node)); }

/* ---- GatherND ---- */

static int64_t batch_dims_of(const ir_node *node) {
    return ox_op_since_version(node->domain, node->op_type, node->opset) >= 12
               ? ir_attr_int(node, "batch_dims", 0) : 0;
}

int ox_vk_s_gather_nd(const ir_node *node, const ir_type *const *in, int n) {
    if (n != 2 || !ox_vk_idx_words_type(in[0]) || !ox_vk_idx_type(in[1])) return 0;
    int64_t b = batch_dims_of(node);
    return in[0]->rank >= 1 && in[0]->rank <= OX_VK_IDX_RANK && in[1]->rank >= 1 && b >= 0 &&
           b < in[0]->rank && b < in[1]->rank;
}

int ox_vk_k_gather_nd(ox_kernel_ctx *c) {
    if (check_io(c) != 0) return -1;
    const ox_tensor *x = c->inputs[0], *ind = c->inputs[1];
    ox_tensor *y = c->outputs[0];
    int r = x->rank, q = ind->rank;
    int64_t b = batch_dims_of(c->node);
    if (q < 1 || b < 0 || b >= r || b >= q || r > OX_VK_IDX_RANK)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "GatherND: bad ranks or batch_dims");
    int64_t m = ind->dims[q - 1];
    if (m < 1 || m > r - b)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                              "GatherND: the last indices dimension must be in [1, %" PRId64 "]", r - b);
    int64_t batches = 1, per_batch = 1, slice = 1, batch_stride = 1;
    for (int a = 0; a < b; a++) {
        if (x->dims[a] != ind->dims[a])
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                                  "GatherND: batch dimension %d differs: data %" PRId64
                                  ", indices %" PRId64, a, x->dims[a], ind->dims[a]);
        batches *= x->dims[a];
    }
    for (int a = (int)b; a < q - 1; a++) per_batch *= ind->dims[a];
    for (int a = (int)(b + m); a < r; a++) slice *= x->dims[a];
    for (int a = (int)b; a < r; a++) batch_stride *= x->dims[a];
    int64_t n = batches * per_batch * slice;
    if (ox_tensor_numel(y) != n)
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "GatherND: output has the wrong size");
    if (n == 0) return 0;
    struct {
        uint32_t n, m, slice, per_batch, batch_stride, idx64, words;
        uint32_t dims[OX_VK_IDX_RANK], xs[OX_VK_IDX_RANK];
    } p = {(uint32_t)n, (uint32_t)m, (uint32_t)slice, (uint32_t)per_batch, (uint32_t)batch_stride,
           ind->dtype == ONYX_INT64, ox_vk_idx_words(x), {0}, {0}};
    int64_t xs[OX_MAX_RANK];
    ox_vk_idx_strides(x, xs);
    for (int k = 0; k < m; k++) {
        p.dims[k] = (uint32_t)x->dims[b + k];
        p.xs[k] = (uint32_t)xs[b + k];
    }
    /* the components address different axes: no one axis to name */
    vk_index_check ck = {.indices = ind, .axis_size = m == 1 ? x->dims[b] : -1,
                         .axis = m == 1 ? (int)b : -1};
    vk_dispatch d = {.shader = &VK_SHADER_index_gather_nd,
                     .bufs = {ox_vk_buf(x), ox_vk_buf(ind), ox_vk_buf(y)}, .push = &p,
                     .push_bytes = sizeof p, .groups = {groups_for(c, n), 1, 1}, .check = &ck};
    return ox_vk_run(c, &d);
}

/* ---- ScatterND and ScatterElements ---- */

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

static int reduction_of(const char *s) {
    if (strcmp(s, "none") == 0) return RED_NONE;
    if (strcmp(s, "add") == 0) return RED_ADD;
    if (strcmp(s, "mul") == 0) return RED_MUL;
    if (strcmp(s, "max") == 0) return RED_MAX;
    if (strcmp(s, "min") == 0) return RED_MIN;
    return -1;
}

/* The reduction a node applies, as the CPU reads it: ScatterND always
 * reads the attribute, ScatterElements from opset 16. -1 when unknown. */
static int node_reduction(const ir_node *node) {
    if (strcmp(node->op_type, "ScatterElements") == 0 && node->opset < 16) return RED_NONE;
    return reduction_of(ir_attr_string(node, "reduction", "none"));
}

/* Data and updates of one word type; a reduction needs float32 or int32
 * (one word, combined by compare-and-swap). */
static int scatter_types(const ir_node *node, const ir_type *const *in, int n) {
    if (n != 3 || !ox_vk_idx_words_type(in[0]) || !ox_vk_idx_type(in[1]) || !in[2] ||
        in[2]->kind != OX_KIND_TENSOR || in[2]->dtype != in[0]->dtype)
        return 0;
    int red = node_reduction(node);
    return red == RED_NONE || (red > 0 && in[0]->dtype != ONYX_INT64);
}

int ox_vk_s_scatter_nd(const ir_node *node, const ir_type *const *in, int n) {
    return scatter_types(node, in, n) && in[0]->rank >= 1 && in[1]->rank >= 1;
}

int ox_vk_s_scatter_elements(const ir_node *node, const ir_type *const *in, int n) {
    int64_t axis = ir_attr_int(node, "axis", 0);
    return scatter_types(node, in, n) && in[0]->rank >= 1 && in[0]->rank <= OX_VK_IDX_RANK &&
           in[1]->rank == in[0]->rank && axis >= -in[0]->rank && axis < in[0]->rank;
}

/* y = data, the start of every scatter. */
static int copy_data(ox_kernel_ctx *c, const ox_tensor *x, ox_tensor *y) {
    int64_t words = ox_tensor_numel(x) * ox_vk_idx_words(x);
    if (words == 0) return 0;
    uint32_t n = (uint32_t)words;
    vk_dispatch d = {.shader = &VK_SHADER_index_copy, .bufs = {ox_vk_buf(x), ox_vk_buf(y)},
                     .push = &n, .push_bytes = sizeof n, .groups = {groups_for(c, words), 1, 1}};
    return ox_vk_run(c, &d);
}

static int scatter_setup(ox_kernel_ctx *c, int *red) {
    if (check_io(c) != 0) return -1;
    *red = node_reduction(c->node);
    if (*red < 0)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: unknown reduction '%s'", c->node->op_type,
                              ir_attr_string(c->node, "reduction", "none"));
    const ox_tensor *x = c->inputs[0], *up = c->inputs[2];
    if (up->dtype != x->dtype || (*red != RED_NONE && x->dtype == ONYX_INT64))
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: updates must be of the data's type",
                              c->node->op_type);
    return copy_data(c, x, c->outputs[0]);
}

int ox_vk_k_scatter_nd(ox_kernel_ctx *c) {
    int red;
    if (scatter_setup(c, &red) != 0) return -1;
    const ox_tensor *x = c->inputs[0], *ind = c->inputs[1], *up = c->inputs[2];
    ox_tensor *y = c->outputs[0];
    int r = x->rank, q = ind->rank;
    int64_t m = q >= 1 ? ind->dims[q - 1] : 0;
    if (m < 1 || m > r || m > OX_VK_IDX_RANK)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT,
                              "ScatterND: the last indices dimension must be in [1, %d]", r);
    int64_t tuples = 1, slice = 1;
    for (int a = 0; a < q - 1; a++) tuples *= ind->dims[a];
    for (int a = (int)m; a < r; a++) slice *= x->dims[a];
    int64_t n = tuples * slice;
    if (ox_tensor_numel(up) != n)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "ScatterND: updates must have %" PRId64
                              " elements", n);
    if (n == 0) return 0;
    struct {
        uint32_t n, m, slice, idx64, words, red, is_int;
        uint32_t dims[OX_VK_IDX_RANK], xs[OX_VK_IDX_RANK];
    } p = {(uint32_t)n, (uint32_t)m, (uint32_t)slice, ind->dtype == ONYX_INT64, ox_vk_idx_words(x),
           (uint32_t)red, x->dtype == ONYX_INT32, {0}, {0}};
    int64_t xs[OX_MAX_RANK];
    ox_vk_idx_strides(x, xs);
    for (int k = 0; k < m; k++) {
        p.dims[k] = (uint32_t)x->dims[k];
        p.xs[k] = (uint32_t)xs[k];
    }
    vk_index_check ck = {.indices = ind, .axis_size = m == 1 ? x->dims[0] : -1, .axis = m == 1 ? 0 : -1};
    vk_dispatch d = {.shader = &VK_SHADER_index_scatter_nd,
                     .bufs = {ox_vk_buf(up), ox_vk_buf(ind), ox_vk_buf(y)}, .push = &p,
                     .push_bytes = sizeof p, .groups = {groups_for(c, n), 1, 1}, .check = &ck};
    return ox_vk_run(c, &d);
}

int ox_vk_k_scatter_elements(ox_kernel_ctx *c) {
    int red;
    if (scatter_setup(c, &red) != 0) return -1;
    const ox_tensor *x = c->inputs[0], *ind = c->inputs[1], *up = c->inputs[2];
    ox_tensor *y = c->outputs[0];
    int r = x->rank;
    int64_t axis = ir_attr_int(c->node, "axis", 0);
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r || r > OX_VK_IDX_RANK || ind->rank != r || up->rank != r ||
        !ox_shape_equal(ind->dims, r, up->dims, r))
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: data, indices and updates do not match",
                              c->node->op_type);
    if (ox_vk_idx_elements_fit(c, x, ind, axis) != 0) return -1;
    int64_t n = ox_tensor_numel(ind);
    if (n == 0) return 0;
    struct {
        uint32_t n, rank, axis, axis_len, idx64, words, red, is_int;
        uint32_t dims[OX_VK_IDX_RANK], xs[OX_VK_IDX_RANK];
    } p = {(uint32_t)n, (uint32_t)r, (uint32_t)axis, (uint32_t)x->dims[axis],
           ind->dtype == ONYX_INT64, ox_vk_idx_words(x), (uint32_t)red, x->dtype == ONYX_INT32,
           {0}, {0}};
    ox_vk_idx_elements_walk(x, ind, p.dims, p.xs);
    vk_index_check ck = {.indices = ind, .axis_size = x->dims[axis], .axis = (int)axis};
    vk_dispatch d = {.shader = &VK_SHADER_index_scatter_elements,
                     .bufs = {ox_vk_buf(up), ox_vk_buf(ind), ox_vk_buf(y)}, .push = &p,
                     .push_bytes = sizeof p, .groups = {groups_for(c, n), 1, 1}, .check = &ck};
    return ox_vk_run(c, &d);
}

/* ---- NonZero ---- */

/* How the shaders test an element (index_nonzero.glsl), -1 if they cannot. */
static int nonzero_kind(ox_dtype t) {
    switch (t) {
    case ONYX_FLOAT32: return 0;
    case ONYX_INT32: return 1;
    case ONYX_INT64: return 2;
    case ONYX_BOOL: return 3;
    default: return -1;
    }
}

int ox_vk_s_nonzero(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    return n == 1 && in[0] && in[0]->kind == OX_KIND_TENSOR && nonzero_kind(in[0]->dtype) >= 0 &&
           in[0]->rank >= 0 && in[0]->rank <= OX_VK_IDX_RANK;
}

typedef struct nonzero_push {
    uint32_t n, kind, blocks, nnz, rank, dims[OX_VK_IDX_RANK];
} nonzero_push;

/* Counts per block of wg elements (one workgroup's), then their prefix
 * sums on the device (the total last); returns the total read back, or -1. */
static int64_t nonzero_count(ox_kernel_ctx *c, const ox_tensor *x, vk_buf *counts,
                             nonzero_push *p) {
    vk_dispatch d = {.shader = &VK_SHADER_index_nonzero_count, .bufs = {ox_vk_buf(x), counts},
                     .push = p, .push_bytes = 3 * sizeof(uint32_t),
                     .groups = {ox_vk_groups(ox_vk_of(c), p->blocks, 1, 0), 1, 1}};
    if (ox_vk_run(c, &d) != 0) return -1;
    vk_dispatch s = {.shader = &VK_SHADER_index_nonzero_scan, .bufs = {counts}, .push = p,
                     .push_bytes = 3 * sizeof(uint32_t), .groups = {1, 1, 1}};
    if (ox_vk_run(c, &s) != 0) return -1;
    uint32_t total = 0;
    if (ox_vk_read_back(c, counts, (size_t)p->blocks * 4, &total, 4) != 0) return -1;
    return total;
}

int ox_vk_k_nonzero(ox_kernel_ctx *c) {
    if (check_io(c) != 0) return -1;
    const ox_tensor *x = c->inputs[0];
    int kind = nonzero_kind(x->dtype), r = x->rank;
    if (kind < 0 || r > OX_VK_IDX_RANK)
        return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "vulkan NonZero: %s input of rank %d",
                              ox_dtype_name(x->dtype), r);
    int64_t n = ox_tensor_numel(x), nnz = 0, wg = ox_vk_of(c)->wg;
    nonzero_push p = {.n = (uint32_t)n, .kind = (uint32_t)kind,
                      .blocks = (uint32_t)((n + wg - 1) / wg), .rank = (uint32_t)r};
    for (int a = 0; a < r; a++) p.dims[a] = (uint32_t)x->dims[a];
    vk_buf *counts = NULL;
    if (n > 0) {
        counts = ox_vk_scratch(c, ((size_t)p.blocks + 1) * 4);
        if (!counts) return -1;
        nnz = nonzero_count(c, x, counts, &p);
        if (nnz < 0) goto fail;
    }
    int64_t dims[2] = {r, nnz};
    ox_tensor *y = ox_kernel_output(c, 0, ONYX_INT64, dims, 2);
    if (!y) goto fail;
    if (check_io(c) != 0) goto fail; /* the output fits one storage buffer */
    if (ox_tensor_numel(y) > 0) {
        p.nnz = (uint32_t)nnz;
        vk_dispatch d = {.shader = &VK_SHADER_index_nonzero_write,
                         .bufs = {ox_vk_buf(x), counts, ox_vk_buf(y)}, .push = &p,
                         .push_bytes = sizeof p,
                         .groups = {ox_vk_groups(ox_vk_of(c), p.blocks, 1, 0), 1, 1}};
        if (ox_vk_run(c, &d) != 0) goto fail;
    }
    ox_vk_scratch_free(c, counts);
    return 0;
fail:
    ox_vk_scratch_free(c, counts);
    return -1;
}
