/* CPU kernels of the indexing operators. Index tensors are read as int64
 * whatever their stored width, normalised when negative and checked
 * against the axis they address before any element is touched. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/index_util.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"

extern const ox_kernel_table ox_cpu_kernels_index;

/* ---- helpers shared with kernels/scatter.c (index_util.h) ---- */

static int is_str(const ox_tensor *t) { return t->dtype == ONYX_STRING; }

int64_t ox_cpu_index_at(const ox_tensor *t, int64_t i) {
    switch (t->dtype) {
    case ONYX_INT64: return ((const int64_t *)t->data)[i];
    case ONYX_INT32: return ((const int32_t *)t->data)[i];
    default: return ox_get_i64(t->data, t->dtype, (size_t)i);
    }
}

static int index_type_ok(ox_dtype t) { return t == ONYX_INT32 || t == ONYX_INT64 || t == ONYX_UNDEFINED; }

/* Normalises index v against an axis of size n; fails naming the value,
 * where it was found and the allowed range. */
int ox_cpu_index_norm(ox_kernel_ctx *ctx, const char *what, int64_t pos, int64_t v, int64_t n, int axis,
                      int64_t *out) {
    int64_t w = v < 0 ? v + n : v;
    if (v < -n || w < 0 || w >= n) {
        if (n == 0)
            return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR,
                                  "%s: %s[%" PRId64 "] = %" PRId64 " cannot index axis %d, which has size 0",
                                  ctx->node->op_type, what, pos, v, axis);
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR,
                              "%s: %s[%" PRId64 "] = %" PRId64 " is out of range for axis %d of size %" PRId64
                              " (allowed [%" PRId64 ", %" PRId64 "])",
                              ctx->node->op_type, what, pos, v, axis, n, -n, n - 1);
    }
    *out = w;
    return 0;
}

static int64_t *read_indices(ox_kernel_ctx *ctx, const ox_tensor *ind, const char *what, int64_t n_axis,
                             int axis) {
    int64_t n = ox_tensor_numel(ind);
    int64_t *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v) {
        ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        if (ox_cpu_index_norm(ctx, what, i, ox_cpu_index_at(ind, i), n_axis, axis, &v[i]) != 0) {
            free(v);
            return NULL;
        }
    }
    return v;
}

/* ---- Gather ---- */

typedef struct gather_job {
    const char *src;
    char *dst;
    const int64_t *idx;
    int64_t nidx, n_axis, inner;
    size_t es;
} gather_job;

static void gather_run(void *arg, int64_t begin, int64_t end) {
    const gather_job *j = arg;
    size_t blk = (size_t)j->inner * j->es;
    for (int64_t w = begin; w < end; w++) {
        int64_t o = w / j->nidx, k = w % j->nidx;
        const char *s = j->src + ((size_t)(o * j->n_axis + j->idx[k])) * blk;
        memcpy(j->dst + (size_t)w * blk, s, blk);
    }
}

static int k_gather(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ctx->inputs[0], *ind = ctx->inputs[1];
    ox_tensor *y = ctx->outputs[0];
    if (!x || !ind) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Gather: data and indices are required");
    if (!y) return 0;
    int r = x->rank;
    int64_t axis = ir_attr_int(ctx->node, "axis", 0);
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Gather: axis is out of range for rank %d", r);
    int64_t outer = ox_numel(x->dims, (int)axis);
    int64_t n_axis = x->dims[axis];
    int64_t inner = ox_numel(x->dims + axis + 1, r - (int)axis - 1);
    int64_t nidx = ox_tensor_numel(ind);
    if (ox_tensor_numel(y) != outer * nidx * inner)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Gather: output has the wrong size");
    int64_t *idx = read_indices(ctx, ind, "indices", n_axis, (int)axis);
    if (!idx) return -1;
    int rc = 0;
    if (is_str(x)) {
        for (int64_t o = 0; o < outer && rc == 0; o++)
            for (int64_t k = 0; k < nidx && rc == 0; k++)
                rc = ox_cpu_copy_elems(ctx, y, (o * nidx + k) * inner, x, (o * n_axis + idx[k]) * inner, inner);
    } else if (outer * nidx * inner > 0) {
        gather_job j = {x->data, y->data, idx, nidx, n_axis, inner, ox_dtype_size(x->dtype)};
        int64_t grain = inner >= 1024 ? 1 : 1024 / inner;
        ox_parallel_for(ctx->pool, outer * nidx, grain, gather_run, &j);
    }
    free(idx);
    return rc;
}

static int supports_gather(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    return n >= 2 && (!in[1] || index_type_ok(in[1]->dtype));
}

/* ---- more helpers ---- */

void ox_cpu_index_strides(const int64_t *dims, int rank, int64_t *stride) {
    int64_t s = 1;
    for (int a = rank - 1; a >= 0; a--) {
        stride[a] = s;
        s *= dims[a];
    }
}

/* Copies one element (any dtype). */
static int copy_one(ox_kernel_ctx *ctx, ox_tensor *dst, int64_t di, const ox_tensor *src, int64_t si, size_t es) {
    if (is_str(dst)) return ox_cpu_str_assign(ctx, (char **)dst->data + di, ((char *const *)src->data)[si]);
    char *d = (char *)dst->data + (size_t)di * es;
    const char *s = (const char *)src->data + (size_t)si * es;
    switch (es) {
    case 1: *d = *s; break;
    case 2: memcpy(d, s, 2); break;
    case 4: memcpy(d, s, 4); break;
    case 8: memcpy(d, s, 8); break;
    default: memcpy(d, s, es);
    }
    return 0;
}

static int output_wanted(const ox_kernel_ctx *ctx, int i) {
    return i < ctx->n_outputs && i < ctx->node->n_outputs && ctx->node->outputs[i] >= 0;
}

int ox_cpu_index_input(ox_kernel_ctx *ctx, int i, const char *what, const ox_tensor **out) {
    const ox_tensor *t = i < ctx->n_inputs ? ctx->inputs[i] : NULL;
    if (!t) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: input '%s' is missing", ctx->node->op_type, what);
    if (t->kind != OX_KIND_TENSOR)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: input '%s' must be a tensor", ctx->node->op_type, what);
    *out = t;
    return 0;
}

/* ---- GatherElements ---- */

static int k_gather_elements(ox_kernel_ctx *ctx) {
    const ox_tensor *x = NULL, *ind = NULL;
    if (ox_cpu_index_input(ctx, 0, "data", &x) || ox_cpu_index_input(ctx, 1, "indices", &ind)) return -1;
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    int r = x->rank;
    int64_t axis = ir_attr_int(ctx->node, "axis", 0);
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r || ind->rank != r)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "GatherElements: axis or indices rank does not match data");
    for (int a = 0; a < r; a++)
        if (a != axis && ind->dims[a] > x->dims[a])
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "GatherElements: indices dim %d (%lld) exceeds data dim %lld",
                                  a, (long long)ind->dims[a], (long long)x->dims[a]);
    int64_t n = ox_tensor_numel(ind);
    if (n == 0) return 0;
    int64_t xs[OX_MAX_RANK], idx[OX_MAX_RANK] = {0};
    ox_cpu_index_strides(x->dims, r, xs);
    size_t es = ox_dtype_size(x->dtype);
    int64_t off = 0; /* data offset of the current position, axis excluded */
    int64_t n_axis = x->dims[axis];
    for (int64_t i = 0; i < n; i++) {
        int64_t v = 0;
        if (ox_cpu_index_norm(ctx, "indices", i, ox_cpu_index_at(ind, i), n_axis, (int)axis, &v) != 0) return -1;
        if (copy_one(ctx, y, i, x, off + v * xs[axis], es) != 0) return -1;
        for (int a = r - 1; a >= 0; a--) {
            if (a != axis) off += xs[a];
            if (++idx[a] < ind->dims[a]) break;
            if (a != axis) off -= idx[a] * xs[a];
            idx[a] = 0;
        }
    }
    return 0;
}

/* ---- GatherND / ScatterND addressing ---- */

/* Element offset in data of index tuple t (m components starting at data
 * axis b) within batch `batch`; fails on an out-of-range component. */
int ox_cpu_index_nd_offset(ox_kernel_ctx *ctx, const ox_tensor *x, const int64_t *xs, int b, const ox_tensor *ind,
                           int64_t t, int64_t m, int64_t batch_stride, int64_t batch, int64_t *out) {
    int64_t off = batch * batch_stride;
    for (int64_t k = 0; k < m; k++) {
        int64_t pos = t * m + k, v = 0;
        if (ox_cpu_index_norm(ctx, "indices", pos, ox_cpu_index_at(ind, pos), x->dims[b + k], (int)(b + k), &v) != 0) return -1;
        off += v * xs[b + k];
    }
    *out = off;
    return 0;
}

static int k_gather_nd(ox_kernel_ctx *ctx) {
    const ox_tensor *x = NULL, *ind = NULL;
    if (ox_cpu_index_input(ctx, 0, "data", &x) || ox_cpu_index_input(ctx, 1, "indices", &ind)) return -1;
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    int r = x->rank, q = ind->rank;
    int64_t b = ctx->node->opset >= 12 ? ir_attr_int(ctx->node, "batch_dims", 0) : 0;
    if (q < 1 || b < 0 || b >= r || b >= q)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "GatherND: bad ranks or batch_dims");
    int64_t m = ind->dims[q - 1];
    if (m < 1 || m > r - b)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "GatherND: the last indices dim must be in [1, %lld]",
                              (long long)(r - b));
    for (int a = 0; a < b; a++)
        if (x->dims[a] != ind->dims[a])
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "GatherND: batch dim %d differs: data %lld, indices %lld", a,
                                  (long long)x->dims[a], (long long)ind->dims[a]);
    int64_t xs[OX_MAX_RANK];
    ox_cpu_index_strides(x->dims, r, xs);
    int64_t batches = ox_numel(x->dims, (int)b);
    int64_t per_batch = ox_numel(ind->dims + b, q - 1 - (int)b); /* tuples per batch */
    int64_t slice = ox_numel(x->dims + b + m, r - (int)(b + m));
    int64_t batch_stride = ox_numel(x->dims + b, r - (int)b);
    if (ox_tensor_numel(y) != batches * per_batch * slice)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "GatherND: output has the wrong size");
    for (int64_t bi = 0; bi < batches; bi++)
        for (int64_t t = 0; t < per_batch; t++) {
            int64_t tuple = bi * per_batch + t, off = 0;
            if (ox_cpu_index_nd_offset(ctx, x, xs, (int)b, ind, tuple, m, batch_stride, bi, &off) != 0) return -1;
            if (ox_cpu_copy_elems(ctx, y, tuple * slice, x, off, slice) != 0) return -1;
        }
    return 0;
}

/* ---- ordering of elements (TopK, Unique) ---- */

/* Total order on one dtype's elements; NaN sorts above every number and
 * equal to other NaNs so that sorting stays consistent. */
static int cmp_float(double a, double b) {
    int na = a != a, nb = b != b;
    if (na || nb) return na - nb;
    return a < b ? -1 : a > b;
}

static int cmp_elem(ox_dtype t, const void *data, int64_t i, int64_t j) {
    switch (t) {
    case ONYX_FLOAT32: return cmp_float(((const float *)data)[i], ((const float *)data)[j]);
    case ONYX_FLOAT64: return cmp_float(((const double *)data)[i], ((const double *)data)[j]);
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16: return cmp_float(ox_get_f64(data, t, (size_t)i), ox_get_f64(data, t, (size_t)j));
    case ONYX_INT8:
    case ONYX_INT16:
    case ONYX_INT32:
    case ONYX_INT64: {
        int64_t a = ox_get_i64(data, t, (size_t)i), b = ox_get_i64(data, t, (size_t)j);
        return a < b ? -1 : a > b;
    }
    case ONYX_UINT8:
    case ONYX_UINT16:
    case ONYX_UINT32:
    case ONYX_UINT64:
    case ONYX_BOOL: {
        uint64_t a = (uint64_t)ox_get_i64(data, t, (size_t)i), b = (uint64_t)ox_get_i64(data, t, (size_t)j);
        if (t == ONYX_BOOL) {
            a = a != 0;
            b = b != 0;
        }
        return a < b ? -1 : a > b;
    }
    case ONYX_STRING: {
        const char *a = ((char *const *)data)[i], *b = ((char *const *)data)[j];
        int c = strcmp(a ? a : "", b ? b : "");
        return c < 0 ? -1 : c > 0;
    }
    case ONYX_COMPLEX64: {
        const float *p = data;
        int c = cmp_float(p[2 * i], p[2 * j]);
        return c ? c : cmp_float(p[2 * i + 1], p[2 * j + 1]);
    }
    case ONYX_COMPLEX128: {
        const double *p = data;
        int c = cmp_float(p[2 * i], p[2 * j]);
        return c ? c : cmp_float(p[2 * i + 1], p[2 * j + 1]);
    }
    default: return 0;
    }
}

typedef int (*cmp_fn)(void *arg, int64_t a, int64_t b);

/* Stable merge sort of ids; tmp holds n entries. */
static void msort(int64_t *a, int64_t *tmp, int64_t n, cmp_fn cmp, void *arg) {
    if (n < 2) return;
    if (n <= 16) {
        for (int64_t i = 1; i < n; i++) {
            int64_t v = a[i], j = i;
            while (j > 0 && cmp(arg, a[j - 1], v) > 0) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = v;
        }
        return;
    }
    int64_t h = n / 2;
    msort(a, tmp, h, cmp, arg);
    msort(a + h, tmp, n - h, cmp, arg);
    if (cmp(arg, a[h - 1], a[h]) <= 0) return;
    memcpy(tmp, a, (size_t)h * sizeof *a);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n) a[k++] = cmp(arg, a[j], tmp[i]) < 0 ? a[j++] : tmp[i++];
    while (i < h) a[k++] = tmp[i++];
}

/* ---- TopK ---- */

typedef struct topk_cmp {
    ox_dtype t;
    const void *data;
    int64_t base, stride;
    int largest;
} topk_cmp;

static int topk_order(void *arg, int64_t a, int64_t b) {
    const topk_cmp *c = arg;
    int v = cmp_elem(c->t, c->data, c->base + a * c->stride, c->base + b * c->stride);
    return c->largest ? -v : v;
}

/* float32 TopK by a bounded heap: each value becomes a 64-bit key that
 * orders as the comparison sort does (the value's order-preserving bits,
 * -0 as +0, every NaN above +inf, negated for largest; the index below,
 * so ties keep the lower index first), and a max-heap keeps the k
 * smallest keys seen: most values are rejected by one compare with the
 * root, O(n) instead of a full O(n log n) sort of every line. */
static uint64_t topk_key(float v, int largest, int64_t i) {
    uint32_t u;
    if (v == 0.0f) v = 0.0f;
    memcpy(&u, &v, sizeof u);
    if (v != v) u = 0xFFFFFFFFu; /* NaN: the largest */
    else u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    if (largest) u = ~u;
    return ((uint64_t)u << 32) | (uint64_t)i;
}

static void heap_down(uint64_t *h, int64_t n, int64_t i) {
    for (;;) {
        int64_t l = 2 * i + 1, big = i;
        if (l < n && h[l] > h[big]) big = l;
        if (l + 1 < n && h[l + 1] > h[big]) big = l + 1;
        if (big == i) return;
        uint64_t t = h[i];
        h[i] = h[big];
        h[big] = t;
        i = big;
    }
}

/* The k first indices of line base (stride `stride`, n values) in TopK
 * order, into out; heap holds k keys. */
static void topk_line_f32(const float *x, int64_t base, int64_t stride, int64_t n, int64_t k,
                          int largest, uint64_t *heap, int64_t *out) {
    for (int64_t i = 0; i < k; i++) heap[i] = topk_key(x[base + i * stride], largest, i);
    for (int64_t i = k / 2 - 1; i >= 0; i--) heap_down(heap, k, i);
    for (int64_t i = k; i < n; i++) {
        uint64_t key = topk_key(x[base + i * stride], largest, i);
        if (key < heap[0]) {
            heap[0] = key;
            heap_down(heap, k, 0);
        }
    }
    /* heap sort: the largest key to the end, k times */
    for (int64_t m = k - 1; m > 0; m--) {
        uint64_t t = heap[0];
        heap[0] = heap[m];
        heap[m] = t;
        heap_down(heap, m, 0);
    }
    for (int64_t i = 0; i < k; i++) out[i] = (int64_t)(heap[i] & 0xFFFFFFFFu);
}

static int k_topk(ox_kernel_ctx *ctx) {
    const ox_tensor *x = NULL;
    if (ox_cpu_index_input(ctx, 0, "X", &x)) return -1;
    ox_tensor *vals = ctx->outputs[0], *inds = ctx->n_outputs > 1 ? ctx->outputs[1] : NULL;
    int r = x->rank;
    int64_t axis = ir_attr_int(ctx->node, "axis", -1);
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "TopK: axis is out of range");
    int64_t k;
    if (ctx->node->opset < 10) {
        k = ir_attr_int(ctx->node, "k", 0);
    } else {
        const ox_tensor *kt = NULL;
        if (ox_cpu_index_input(ctx, 1, "K", &kt)) return -1;
        if (ox_tensor_numel(kt) != 1 || !ox_dtype_is_integer(kt->dtype))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "TopK: K must be a single integer");
        k = ox_get_i64(kt->data, kt->dtype, 0);
    }
    int64_t n = x->dims[axis];
    if (k < 0 || k > n)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "TopK: K = %lld is out of range for axis %lld of size %lld",
                              (long long)k, (long long)axis, (long long)n);
    int largest = ctx->node->opset >= 11 ? (int)ir_attr_int(ctx->node, "largest", 1) : 1;
    int64_t outer = ox_numel(x->dims, (int)axis);
    int64_t inner = ox_numel(x->dims + axis + 1, r - (int)axis - 1);
    /* nothing to sort; checked before outer * inner, which may overflow
     * past a zero axis */
    if (k == 0 || ox_tensor_numel(x) == 0) return 0;
    int64_t *ids = malloc((size_t)n * 2 * sizeof *ids);
    if (!ids) return ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "out of memory");
    size_t es = ox_dtype_size(x->dtype);
    topk_cmp c = {x->dtype, x->data, 0, inner, largest};
    /* few of many float32 values: the heap (its keys fit ids' second half) */
    int heap = x->dtype == ONYX_FLOAT32 && n <= (int64_t)UINT32_MAX && k * 4 <= n;
    /* the output order is always sorted, which also satisfies sorted=0 */
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            c.base = o * n * inner + in;
            if (heap) {
                topk_line_f32(x->data, c.base, inner, n, k, largest, (uint64_t *)(ids + n), ids);
            } else {
                for (int64_t i = 0; i < n; i++) ids[i] = i;
                msort(ids, ids + n, n, topk_order, &c);
            }
            for (int64_t i = 0; i < k; i++) {
                int64_t dst = (o * k + i) * inner + in;
                if (vals) memcpy((char *)vals->data + (size_t)dst * es, (const char *)x->data + (size_t)(c.base + ids[i] * inner) * es, es);
                if (inds) ((int64_t *)inds->data)[dst] = ids[i];
            }
        }
    free(ids);
    return 0;
}

static int supports_topk(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    if (n < 1 || !in[0]) return 1;
    ox_dtype t = in[0]->dtype;
    return t != ONYX_STRING && t != ONYX_COMPLEX64 && t != ONYX_COMPLEX128;
}

/* ---- NonZero ---- */

static int is_nonzero(const ox_tensor *x, int64_t i, size_t es) {
    if (is_str(x)) {
        const char *s = ((char *const *)x->data)[i];
        return s && s[0];
    }
    switch (x->dtype) {
    case ONYX_FLOAT32: return ((const float *)x->data)[i] != 0.0f;
    case ONYX_FLOAT64: return ((const double *)x->data)[i] != 0.0;
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16: return (((const uint16_t *)x->data)[i] & 0x7fff) != 0; /* +-0 */
    case ONYX_COMPLEX64: return ((const float *)x->data)[2 * i] != 0.0f || ((const float *)x->data)[2 * i + 1] != 0.0f;
    case ONYX_COMPLEX128: return ((const double *)x->data)[2 * i] != 0.0 || ((const double *)x->data)[2 * i + 1] != 0.0;
    default: {
        const unsigned char *p = (const unsigned char *)x->data + (size_t)i * es;
        for (size_t k = 0; k < es; k++)
            if (p[k]) return 1;
        return 0;
    }
    }
}

static int k_nonzero(ox_kernel_ctx *ctx) {
    const ox_tensor *x = NULL;
    if (ox_cpu_index_input(ctx, 0, "X", &x)) return -1;
    int64_t n = ox_tensor_numel(x), nnz = 0;
    size_t es = ox_dtype_size(x->dtype);
    for (int64_t i = 0; i < n; i++) nnz += is_nonzero(x, i, es);
    int r = x->rank;
    int64_t dims[2] = {r, nnz};
    ox_tensor *y = ox_kernel_output(ctx, 0, ONYX_INT64, dims, 2);
    if (!y) return -1;
    int64_t *out = y->data;
    int64_t idx[OX_MAX_RANK] = {0}, j = 0;
    for (int64_t i = 0; i < n; i++) {
        if (is_nonzero(x, i, es)) {
            for (int a = 0; a < r; a++) out[a * nnz + j] = idx[a];
            j++;
        }
        for (int a = r - 1; a >= 0; a--) {
            if (++idx[a] < x->dims[a]) break;
            idx[a] = 0;
        }
    }
    return 0;
}

/* ---- OneHot ---- */

static int k_onehot(ox_kernel_ctx *ctx) {
    const ox_tensor *ind = NULL, *dep = NULL, *vals = NULL;
    if (ox_cpu_index_input(ctx, 0, "indices", &ind) || ox_cpu_index_input(ctx, 1, "depth", &dep) ||
        ox_cpu_index_input(ctx, 2, "values", &vals))
        return -1;
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    if (ox_tensor_numel(dep) != 1 || ox_tensor_numel(vals) != 2 || vals->dtype != y->dtype)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "OneHot: depth must be one value and values two");
    int64_t depth = ox_dtype_is_float(dep->dtype) ? (int64_t)ox_get_f64(dep->data, dep->dtype, 0)
                                                  : ox_get_i64(dep->data, dep->dtype, 0);
    int ro = ind->rank + 1;
    int64_t axis = ir_attr_int(ctx->node, "axis", -1);
    if (axis < 0) axis += ro;
    if (axis < 0 || axis >= ro || y->rank != ro || y->dims[axis] != depth)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "OneHot: output has the wrong shape");
    int64_t outer = ox_numel(ind->dims, (int)axis);
    int64_t inner = ox_numel(ind->dims + axis, ind->rank - (int)axis);
    int64_t total = ox_tensor_numel(y);
    for (int64_t i = 0; i < total; i++)
        if (ox_cpu_copy_elems(ctx, y, i, vals, 0, 1) != 0) return -1;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t pos = o * inner + i;
            int64_t v;
            if (ox_dtype_is_float(ind->dtype)) {
                /* range-check before truncating: converting NaN or a value
                 * beyond int64 is undefined, and such an index is off anyway */
                double f = ox_get_f64(ind->data, ind->dtype, (size_t)pos);
                if (!(f > -(double)depth - 1.0 && f < (double)depth)) continue;
                v = (int64_t)f;
            } else {
                v = ox_get_i64(ind->data, ind->dtype, (size_t)pos);
            }
            if (v < 0) v += depth;
            if (v < 0 || v >= depth) continue; /* out of range: all off */
            if (ox_cpu_copy_elems(ctx, y, (o * depth + v) * inner + i, vals, 1, 1) != 0) return -1;
        }
    return 0;
}

/* ---- Compress ---- */

static int k_compress(ox_kernel_ctx *ctx) {
    const ox_tensor *x = NULL, *cond = NULL;
    if (ox_cpu_index_input(ctx, 0, "input", &x) || ox_cpu_index_input(ctx, 1, "condition", &cond)) return -1;
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    const ir_attr *ax = ir_node_attr(ctx->node, "axis");
    int r = x->rank;
    int64_t axis = ax ? ax->i : 0;
    if (axis < 0) axis += r;
    if (ax && (axis < 0 || axis >= r)) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Compress: axis is out of range");
    int64_t outer = ax ? ox_numel(x->dims, (int)axis) : 1;
    int64_t len = ax ? x->dims[axis] : ox_tensor_numel(x);
    int64_t inner = ax ? ox_numel(x->dims + axis + 1, r - (int)axis - 1) : 1;
    int64_t nc = ox_tensor_numel(cond), kept = 0;
    const uint8_t *c = cond->data;
    for (int64_t i = 0; i < nc; i++) {
        if (!c[i]) continue;
        if (i >= len)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Compress: condition[%lld] is true beyond size %lld",
                                  (long long)i, (long long)len);
        kept++;
    }
    if (ox_tensor_numel(y) != outer * kept * inner)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Compress: output has the wrong size");
    int64_t at = 0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < nc && i < len; i++) {
            if (!c[i]) continue;
            if (ox_cpu_copy_elems(ctx, y, at, x, (o * len + i) * inner, inner) != 0) return -1;
            at += inner;
        }
    return 0;
}

/* ---- Unique ---- */

typedef struct unique_cmp {
    ox_dtype t;
    const void *data;
    int64_t outer, n, inner; /* slice i is data[o, i, :] for every o */
} unique_cmp;

static int slice_order(void *arg, int64_t a, int64_t b) {
    const unique_cmp *c = arg;
    for (int64_t o = 0; o < c->outer; o++)
        for (int64_t k = 0; k < c->inner; k++) {
            int64_t base = o * c->n * c->inner + k;
            int v = cmp_elem(c->t, c->data, base + a * c->inner, base + b * c->inner);
            if (v) return v;
        }
    return 0;
}

static int first_order(void *arg, int64_t a, int64_t b) {
    const int64_t *first = arg;
    return first[a] < first[b] ? -1 : first[a] > first[b];
}

static int k_unique(ox_kernel_ctx *ctx) {
    const ox_tensor *x = NULL;
    if (ox_cpu_index_input(ctx, 0, "X", &x)) return -1;
    const ir_attr *ax = ir_node_attr(ctx->node, "axis");
    int sorted = (int)ir_attr_int(ctx->node, "sorted", 1);
    int r = x->rank;
    int64_t axis = ax ? ax->i : 0;
    if (axis < 0) axis += r;
    if (ax && (axis < 0 || axis >= r)) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Unique: axis is out of range");
    unique_cmp c = {x->dtype, x->data, 1, ox_tensor_numel(x), 1};
    if (ax) {
        c.outer = ox_numel(x->dims, (int)axis);
        c.n = x->dims[axis];
        c.inner = ox_numel(x->dims + axis + 1, r - (int)axis - 1);
        /* empty slices are all equal: comparing them must not walk the
         * other axes, which may be long ([2^40, 2, 0]) */
        if (c.inner == 0) c.outer = 0;
    }
    int64_t n = c.n;
    /* ids: slices in sorted order; then runs of equal slices are groups.
     * An empty input may still have a huge axis (a zero elsewhere). */
    size_t nbuf;
    if (!ox_nbytes_checked(n ? n : 1, 6 * sizeof(int64_t), &nbuf))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "Unique: %" PRId64 " slices along axis %" PRId64 " need more than SIZE_MAX bytes of "
                              "working memory",
                              n, axis);
    if (ox_check_alloc_size(nbuf, ctx->err) != 0) return -1;
    int64_t *buf = malloc(nbuf);
    if (!buf) return ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "out of memory");
    int64_t *ids = buf, *tmp = buf + n, *first = buf + 2 * n, *count = buf + 3 * n, *group = buf + 4 * n,
            *order = buf + 5 * n;
    for (int64_t i = 0; i < n; i++) ids[i] = i;
    msort(ids, tmp, n, slice_order, &c);
    int64_t u = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i == 0 || slice_order(&c, ids[i - 1], ids[i]) != 0) {
            first[u] = ids[i]; /* stable sort: the earliest occurrence leads its run */
            count[u] = 0;
            u++;
        }
        count[u - 1]++;
        group[ids[i]] = u - 1;
    }
    /* order[j] = group shown at output position j */
    for (int64_t g = 0; g < u; g++) order[g] = g;
    if (!sorted) msort(order, tmp, u, first_order, first);
    int64_t *pos = tmp; /* group -> output position */
    for (int64_t j = 0; j < u; j++) pos[order[j]] = j;
    int rc = 0;
    int64_t ydims[OX_MAX_RANK];
    int yr = 1;
    if (ax) {
        memcpy(ydims, x->dims, (size_t)r * sizeof *ydims);
        ydims[axis] = u;
        yr = r;
    } else {
        ydims[0] = u;
    }
    ox_tensor *y = ox_kernel_output(ctx, 0, x->dtype, ydims, yr);
    if (!y) rc = -1;
    /* an empty y may still have a long outer axis ([2^40, 0, 4] on axis 1) */
    int64_t copies = rc == 0 && ox_tensor_numel(y) > 0 ? c.outer : 0;
    for (int64_t o = 0; rc == 0 && o < copies; o++)
        for (int64_t j = 0; rc == 0 && j < u; j++)
            rc = ox_cpu_copy_elems(ctx, y, (o * u + j) * c.inner, x, (o * n + first[order[j]]) * c.inner, c.inner);
    int64_t ud[1] = {u}, nd[1] = {n};
    if (rc == 0 && output_wanted(ctx, 1)) {
        ox_tensor *t = ox_kernel_output(ctx, 1, ONYX_INT64, ud, 1);
        if (!t) rc = -1;
        else
            for (int64_t j = 0; j < u; j++) ((int64_t *)t->data)[j] = first[order[j]];
    }
    if (rc == 0 && output_wanted(ctx, 2)) {
        ox_tensor *t = ox_kernel_output(ctx, 2, ONYX_INT64, nd, 1);
        if (!t) rc = -1;
        else
            for (int64_t i = 0; i < n; i++) ((int64_t *)t->data)[i] = pos[group[i]];
    }
    if (rc == 0 && output_wanted(ctx, 3)) {
        ox_tensor *t = ox_kernel_output(ctx, 3, ONYX_INT64, ud, 1);
        if (!t) rc = -1;
        else
            for (int64_t j = 0; j < u; j++) ((int64_t *)t->data)[j] = count[order[j]];
    }
    free(buf);
    return rc;
}

/* ---- Trilu ---- */

static int k_trilu(ox_kernel_ctx *ctx) {
    const ox_tensor *x = NULL;
    if (ox_cpu_index_input(ctx, 0, "input", &x)) return -1;
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    int r = x->rank;
    if (r < 2) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Trilu: the input must have rank >= 2");
    int64_t k = 0;
    const ox_tensor *kt = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
    if (kt) {
        if (ox_tensor_numel(kt) != 1 || !ox_dtype_is_integer(kt->dtype))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Trilu: k must be a single integer");
        k = ox_get_i64(kt->data, kt->dtype, 0);
    }
    int upper = (int)ir_attr_int(ctx->node, "upper", 1);
    /* an empty input may still have 2^40 rows of no columns: skip the loop */
    if (ox_tensor_numel(x) == 0) return 0;
    int64_t rows = x->dims[r - 2], cols = x->dims[r - 1];
    int64_t mats = ox_numel(x->dims, r - 2);
    size_t es = ox_dtype_size(x->dtype);
    for (int64_t m = 0; m < mats; m++)
        for (int64_t i = 0; i < rows; i++) {
            /* kept columns form one range [lo, hi) per row */
            int64_t lo = 0, hi = cols;
            if (upper) {
                /* keep j - i >= k, i.e. j >= i + k (clamped without overflow) */
                if (k > cols) lo = cols;
                else if (k < -rows) lo = 0;
                else lo = i + k < 0 ? 0 : (i + k > cols ? cols : i + k);
            } else {
                /* keep j - i <= k */
                if (k > cols) hi = cols;
                else if (k < -rows) hi = 0;
                else hi = i + k + 1 < 0 ? 0 : (i + k + 1 > cols ? cols : i + k + 1);
            }
            int64_t row = (m * rows + i) * cols;
            if (is_str(y)) {
                for (int64_t j = 0; j < cols; j++) {
                    const char *v = (j >= lo && j < hi) ? ((char *const *)x->data)[row + j] : "";
                    if (ox_cpu_str_assign(ctx, (char **)y->data + row + j, v) != 0) return -1;
                }
                continue;
            }
            char *d = (char *)y->data + (size_t)row * es;
            const char *s = (const char *)x->data + (size_t)row * es;
            if (lo >= hi) {
                memset(d, 0, (size_t)cols * es);
                continue;
            }
            memset(d, 0, (size_t)lo * es);
            if (d != s) memcpy(d + (size_t)lo * es, s + (size_t)lo * es, (size_t)(hi - lo) * es);
            memset(d + (size_t)hi * es, 0, (size_t)(cols - hi) * es);
        }
    return 0;
}

/* ---- ReverseSequence ---- */

static int k_reverse_sequence(ox_kernel_ctx *ctx) {
    const ox_tensor *x = NULL, *lens = NULL;
    if (ox_cpu_index_input(ctx, 0, "input", &x) || ox_cpu_index_input(ctx, 1, "sequence_lens", &lens)) return -1;
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    int r = x->rank;
    int ba = (int)ir_attr_int(ctx->node, "batch_axis", 1), ta = (int)ir_attr_int(ctx->node, "time_axis", 0);
    if (r < 2 || !((ba == 0 && ta == 1) || (ba == 1 && ta == 0)))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "ReverseSequence: bad axes or input rank");
    int64_t nb = x->dims[ba], nt = x->dims[ta];
    if (ox_tensor_numel(lens) != nb)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "ReverseSequence: sequence_lens has %lld entries but the batch has %lld",
                              (long long)ox_tensor_numel(lens), (long long)nb);
    int64_t xs[OX_MAX_RANK];
    ox_cpu_index_strides(x->dims, r, xs);
    int64_t inner = xs[1];
    for (int64_t b = 0; b < nb; b++) {
        int64_t len = ox_get_i64(lens->data, lens->dtype, (size_t)b);
        if (len < 0 || len > nt)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "ReverseSequence: sequence_lens[%lld] = %lld is out of range [0, %lld]", (long long)b,
                                  (long long)len, (long long)nt);
        for (int64_t t = 0; t < nt; t++) {
            int64_t st = t < len ? len - 1 - t : t;
            if (ox_cpu_copy_elems(ctx, y, t * xs[ta] + b * xs[ba], x, st * xs[ta] + b * xs[ba], inner) != 0) return -1;
        }
    }
    return 0;
}

static int supports_index_int(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    return n < 2 || !in[1] || index_type_ok(in[1]->dtype);
}

static const ox_kernel_def KERNELS[] = {
    {"", "Gather", 1, 17, k_gather, supports_gather, NULL, NULL, NULL},
    {"", "GatherElements", 11, 17, k_gather_elements, supports_index_int, NULL, NULL, NULL},
    {"", "GatherND", 11, 17, k_gather_nd, NULL, NULL, NULL, NULL},
    {"", "ScatterND", 11, 18, ox_cpu_scatter_nd, ox_cpu_supports_scatter, NULL, NULL, NULL},
    {"", "ScatterElements", 11, 18, ox_cpu_scatter_elements, ox_cpu_supports_scatter, NULL, NULL, NULL},
    {"", "Scatter", 9, 10, ox_cpu_scatter_elements, NULL, NULL, NULL, NULL},
    {"", "TensorScatter", 24, 24, ox_cpu_tensor_scatter, NULL, NULL, NULL, NULL},
    {"", "TopK", 1, 24, k_topk, supports_topk, NULL, NULL, NULL},
    {"", "NonZero", 9, 17, k_nonzero, NULL, NULL, NULL, NULL},
    {"", "OneHot", 9, 28, k_onehot, NULL, NULL, NULL, NULL},
    {"", "Compress", 9, 28, k_compress, NULL, NULL, NULL, NULL},
    {"", "Unique", 11, 28, k_unique, NULL, NULL, NULL, NULL},
    {"", "Trilu", 14, 17, k_trilu, NULL, NULL, NULL, NULL},
    {"", "ReverseSequence", 10, 28, k_reverse_sequence, NULL, NULL, NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_index = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
