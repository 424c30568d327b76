/* CPU kernels of the scatter operators: ScatterND, ScatterElements (and
 * Scatter-9, its older name) and TensorScatter, the KV-cache update. They
 * copy the data input and then overwrite, or reduce into, the elements the
 * indices address; every index is checked before it is used. Their table
 * entries are in kernels/index.c. */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "ep/cpu/kernels/index_util.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"

/* ---- reductions shared by the scatters ---- */

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

static int parse_reduction(ox_kernel_ctx *ctx, int *red) {
    const char *s = ir_attr_string(ctx->node, "reduction", "none");
    if (strcmp(s, "none") == 0) *red = RED_NONE;
    else if (strcmp(s, "add") == 0) *red = RED_ADD;
    else if (strcmp(s, "mul") == 0) *red = RED_MUL;
    else if (strcmp(s, "max") == 0) *red = RED_MAX;
    else if (strcmp(s, "min") == 0) *red = RED_MIN;
    else return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: unknown reduction '%s'", ctx->node->op_type, s);
    return 0;
}

#define REDUCE_CASE(DT, T)                                                    \
    case DT: {                                                                \
        T *dp = (T *)d;                                                       \
        const T *sp = (const T *)s;                                           \
        for (int64_t i = 0; i < n; i++) {                                     \
            T a = dp[i], b = sp[i];                                           \
            switch (red) {                                                    \
            case RED_ADD: dp[i] = (T)(a + b); break;                          \
            case RED_MUL: dp[i] = (T)(a * b); break;                          \
            case RED_MAX: dp[i] = a > b ? a : b; break;                       \
            default: dp[i] = a < b ? a : b; break;                            \
            }                                                                 \
        }                                                                     \
        return 0;                                                             \
    }

/* dst[i] = dst[i] (op) src[i] for n elements of type dt. */
static int reduce_into(ox_dtype dt, int red, void *d, const void *s, int64_t n) {
    switch (dt) {
        REDUCE_CASE(ONYX_FLOAT32, float)
        REDUCE_CASE(ONYX_FLOAT64, double)
        REDUCE_CASE(ONYX_INT8, int8_t)
        REDUCE_CASE(ONYX_INT16, int16_t)
        REDUCE_CASE(ONYX_INT32, int32_t)
        REDUCE_CASE(ONYX_UINT8, uint8_t)
        REDUCE_CASE(ONYX_UINT16, uint16_t)
        REDUCE_CASE(ONYX_UINT32, uint32_t)
        REDUCE_CASE(ONYX_UINT64, uint64_t)
    case ONYX_INT64: {
        /* wrap like the narrower ints instead of overflowing signed math */
        int64_t *dp = d;
        const int64_t *sp = s;
        for (int64_t i = 0; i < n; i++) {
            int64_t a = dp[i], b = sp[i];
            switch (red) {
            case RED_ADD: dp[i] = (int64_t)((uint64_t)a + (uint64_t)b); break;
            case RED_MUL: dp[i] = (int64_t)((uint64_t)a * (uint64_t)b); break;
            case RED_MAX: dp[i] = a > b ? a : b; break;
            default: dp[i] = a < b ? a : b; break;
            }
        }
        return 0;
    }
    case ONYX_BOOL: {
        uint8_t *dp = d;
        const uint8_t *sp = s;
        for (int64_t i = 0; i < n; i++) {
            int a = dp[i] != 0, b = sp[i] != 0;
            dp[i] = (uint8_t)((red == RED_ADD || red == RED_MAX) ? (a || b) : (a && b));
        }
        return 0;
    }
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16: {
        uint16_t *dp = d;
        const uint16_t *sp = s;
        int h = dt == ONYX_FLOAT16;
        for (int64_t i = 0; i < n; i++) {
            float a = h ? ox_half_to_float(dp[i]) : ox_bf16_to_float(dp[i]);
            float b = h ? ox_half_to_float(sp[i]) : ox_bf16_to_float(sp[i]);
            float v = red == RED_ADD ? a + b : red == RED_MUL ? a * b : red == RED_MAX ? (a > b ? a : b) : (a < b ? a : b);
            dp[i] = h ? ox_float_to_half(v) : ox_float_to_bf16(v);
        }
        return 0;
    }
    default: return -1;
    }
}

static int reduction_type_ok(ox_dtype t) {
    return t != ONYX_STRING && t != ONYX_COMPLEX64 && t != ONYX_COMPLEX128;
}

/* Writes n updates at dst element di with the reduction. */
static int scatter_write(ox_kernel_ctx *ctx, ox_tensor *y, int64_t di, const ox_tensor *up, int64_t si, int64_t n,
                         int red) {
    if (red == RED_NONE) return ox_cpu_copy_elems(ctx, y, di, up, si, n);
    size_t es = ox_dtype_size(y->dtype);
    if (reduce_into(y->dtype, red, (char *)y->data + (size_t)di * es, (const char *)up->data + (size_t)si * es, n) != 0)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "%s: reductions are not supported for %s", ctx->node->op_type,
                              ox_dtype_name(y->dtype));
    return 0;
}

/* Data, indices and updates, the inputs of every scatter. */
static int scatter_inputs(ox_kernel_ctx *ctx, const ox_tensor **x, const ox_tensor **ind,
                          const ox_tensor **up) {
    if (ox_cpu_index_input(ctx, 0, "data", x) || ox_cpu_index_input(ctx, 1, "indices", ind) ||
        ox_cpu_index_input(ctx, 2, "updates", up))
        return -1;
    return 0;
}

/* ---- ScatterND ---- */

int ox_cpu_scatter_nd(ox_kernel_ctx *ctx) {
    const ox_tensor *x = NULL, *ind = NULL, *up = NULL;
    if (scatter_inputs(ctx, &x, &ind, &up) != 0) return -1;
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    int red;
    if (parse_reduction(ctx, &red) != 0) return -1;
    int r = x->rank, q = ind->rank;
    if (q < 1) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "ScatterND: indices must have rank >= 1");
    int64_t m = ind->dims[q - 1];
    if (m < 1 || m > r)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "ScatterND: the last indices dim must be in [1, %d]", r);
    int64_t tuples = ox_numel(ind->dims, q - 1);
    int64_t slice = ox_numel(x->dims + m, r - (int)m);
    if (ox_tensor_numel(up) != tuples * slice || up->dtype != x->dtype)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "ScatterND: updates must have %lld elements of type %s",
                              (long long)(tuples * slice), ox_dtype_name(x->dtype));
    if (ox_cpu_copy_elems(ctx, y, 0, x, 0, ox_tensor_numel(x)) != 0) return -1;
    int64_t xs[OX_MAX_RANK];
    ox_cpu_index_strides(x->dims, r, xs);
    for (int64_t t = 0; t < tuples; t++) {
        int64_t off = 0;
        if (ox_cpu_index_nd_offset(ctx, x, xs, 0, ind, t, m, 0, 0, &off) != 0) return -1;
        if (scatter_write(ctx, y, off, up, t * slice, slice, red) != 0) return -1;
    }
    return 0;
}

/* ---- ScatterElements / Scatter ---- */

/* The common case: no reduction, int64 indices, 4- or 8-byte elements
 * (float32, int64, ...; not strings), walked along rows so the loop body
 * is a load, a range check and a store. The dims after `axis` that the
 * indices cover whole are one row (contiguous in indices and output
 * alike), so a row is long where the model allows it. The work is split
 * over one dim other than `axis` (the row's own if no outer one has more
 * than one coordinate): updates whose targets can coincide differ only
 * in their `axis` coordinate, so they fall to one task, which visits them
 * in the serial order, and duplicate indices end with the same value
 * whatever the threads. Faster R-CNN's box pooling scatters 627K floats
 * along axis 0 of [50, 256, 7, 7]: 1.28 ms on one thread, rows of 7 then
 * of 12544; 0.72 ms on two. */
typedef struct se_job {
    const int64_t *ix;
    const void *up;
    void *y;
    int r, axis, split;          /* r: dims after merging the row's */
    int64_t dims[OX_MAX_RANK];   /* of indices and updates, the last one a row */
    int64_t xs[OX_MAX_RANK];     /* y's strides (the row's: 1, or 0 along `axis`) */
    int64_t n_axis;
    size_t es;
    _Atomic int64_t bad;         /* the first index out of range, or INT64_MAX */
} se_job;

static void se_range(void *arg, int64_t d0, int64_t d1) {
    se_job *j = arg;
    const int r = j->r, axis = j->axis, last = r - 1;
    const int64_t inner = j->dims[last], n_axis = j->n_axis, ax_stride = j->xs[axis];
    const int64_t step = axis == last ? 0 : j->xs[last]; /* y offset per row step */
    /* the task's part of each row, or of the outer dims */
    const int64_t c0 = j->split == last ? d0 : 0, c1 = j->split == last ? d1 : inner;
    const int64_t *restrict ix = j->ix;
    int64_t idx[OX_MAX_RANK] = {0}, lim[OX_MAX_RANK];
    for (int a = 0; a < last; a++) lim[a] = a == j->split ? d1 : j->dims[a];
    if (j->split < last) idx[j->split] = d0;
    for (;;) {
        /* the row's first element, and its target less the axis term */
        int64_t base = 0, off = 0;
        for (int a = 0; a < last; a++) {
            base = base * j->dims[a] + idx[a];
            if (a != axis) off += idx[a] * j->xs[a];
        }
        base *= inner;
        for (int64_t c = c0; c < c1; c++) {
            int64_t v = ix[base + c];
            if (v < -n_axis || v >= n_axis) {
                int64_t seen = atomic_load(&j->bad);
                while (base + c < seen && !atomic_compare_exchange_weak(&j->bad, &seen, base + c)) {
                }
                return;
            }
            v += v < 0 ? n_axis : 0;
            const int64_t at = off + c * step + v * ax_stride;
            if (j->es == 4)
                ((uint32_t *restrict)j->y)[at] = ((const uint32_t *restrict)j->up)[base + c];
            else
                ((uint64_t *restrict)j->y)[at] = ((const uint64_t *restrict)j->up)[base + c];
        }
        /* the next row: the odometer over the dims before it */
        int a = last - 1;
        for (; a >= 0; a--) {
            if (++idx[a] < lim[a]) break;
            idx[a] = a == j->split ? d0 : 0;
        }
        if (a < 0) return;
    }
}

static int scatter_elements_plain(ox_kernel_ctx *ctx, ox_tensor *y, const ox_tensor *ind,
                                  const ox_tensor *up, const int64_t *xs, int axis, size_t es) {
    se_job j = {.ix = ind->data, .up = up->data, .y = y->data, .axis = axis, .split = -1,
                .n_axis = y->dims[axis], .es = es};
    atomic_init(&j.bad, INT64_MAX);
    /* the row: the last dim, and before it those after `axis` whose
     * following dims the indices cover whole */
    int first = ind->rank - 1;
    while (first - 1 > axis && ind->dims[first] == y->dims[first]) first--;
    j.r = first + 1;
    for (int a = 0; a < first; a++) {
        j.dims[a] = ind->dims[a];
        j.xs[a] = xs[a];
    }
    j.dims[first] = 1;
    for (int a = first; a < ind->rank; a++) j.dims[first] *= ind->dims[a];
    j.xs[first] = xs[ind->rank - 1];
    for (int a = 0; a < j.r && j.split < 0; a++)
        if (a != axis && a < j.r - 1 && j.dims[a] > 1) j.split = a;
    if (j.split < 0 && j.r - 1 != axis) j.split = j.r - 1;
    const int64_t n = ox_tensor_numel(ind);
    if (j.split < 0) {
        /* the row is `axis` and nothing before it varies: one task */
        j.split = 0;
        se_range(&j, 0, j.dims[0]);
    } else {
        const int64_t per = n / j.dims[j.split];
        ox_parallel_for(ctx->pool, j.dims[j.split], per >= 16384 ? 1 : 16384 / (per > 0 ? per : 1), se_range, &j);
    }
    int64_t bad = atomic_load(&j.bad);
    if (bad != INT64_MAX) {
        int64_t ignored;
        return ox_cpu_index_norm(ctx, "indices", bad, j.ix[bad], j.n_axis, axis, &ignored);
    }
    return 0;
}

int ox_cpu_scatter_elements(ox_kernel_ctx *ctx) {
    const ox_tensor *x = NULL, *ind = NULL, *up = NULL;
    if (scatter_inputs(ctx, &x, &ind, &up) != 0) return -1;
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    int red = RED_NONE;
    if (ctx->node->opset >= 16 && parse_reduction(ctx, &red) != 0) return -1;
    int r = x->rank;
    int64_t axis = ir_attr_int(ctx->node, "axis", 0);
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r || ind->rank != r || up->rank != r || !ox_shape_equal(ind->dims, r, up->dims, r) ||
        up->dtype != x->dtype)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: data, indices and updates do not match",
                              ctx->node->op_type);
    for (int a = 0; a < r; a++)
        if (a != axis && ind->dims[a] > x->dims[a])
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: indices dim %d (%lld) exceeds data dim %lld",
                                  ctx->node->op_type, a, (long long)ind->dims[a], (long long)x->dims[a]);
    if (ox_cpu_copy_elems(ctx, y, 0, x, 0, ox_tensor_numel(x)) != 0) return -1;
    int64_t n = ox_tensor_numel(ind);
    int64_t xs[OX_MAX_RANK], idx[OX_MAX_RANK] = {0};
    ox_cpu_index_strides(x->dims, r, xs);
    int64_t off = 0, n_axis = x->dims[axis];
    size_t es = ox_dtype_size(x->dtype);
    if (red == RED_NONE && ind->dtype == ONYX_INT64 && x->dtype != ONYX_STRING && (es == 4 || es == 8) && n > 0)
        return scatter_elements_plain(ctx, y, ind, up, xs, (int)axis, es);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = 0;
        if (ox_cpu_index_norm(ctx, "indices", i, ox_cpu_index_at(ind, i), n_axis, (int)axis, &v) != 0) return -1;
        if (scatter_write(ctx, y, off + v * xs[axis], up, i, 1, red) != 0) return -1;
        for (int a = r - 1; a >= 0; a--) {
            if (a != axis) off += xs[a];
            if (++idx[a] < ind->dims[a]) break;
            if (a != axis) off -= idx[a] * xs[a];
            idx[a] = 0;
        }
    }
    return 0;
}

int ox_cpu_supports_scatter(const ir_node *node, const ir_type *const *in, int n) {
    const char *red = ir_attr_string(node, "reduction", "none");
    if (n >= 1 && in[0] && strcmp(red, "none") != 0 && !reduction_type_ok(in[0]->dtype)) return 0;
    return 1;
}

/* ---- TensorScatter ---- */

/* present = past with, for every prefix (the axes before `axis`), the
 * update's sequence rows written from write_indices[batch] on. Rows are
 * the contiguous blocks of the axes after `axis`. */
int ox_cpu_tensor_scatter(ox_kernel_ctx *ctx) {
    const ox_tensor *past = NULL, *up = NULL;
    if (ox_cpu_index_input(ctx, 0, "past_cache", &past) || ox_cpu_index_input(ctx, 1, "update", &up)) return -1;
    const ox_tensor *wi = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    int r = past->rank;
    int64_t axis = ir_attr_int(ctx->node, "axis", -2);
    if (axis < -r || axis >= r)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "TensorScatter: axis %lld is out of range for rank %d",
                              (long long)axis, r);
    if (axis < 0) axis += r;
    if (axis == 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "TensorScatter: axis cannot be 0, the batch axis");
    const char *mode = ir_attr_string(ctx->node, "mode", "linear");
    int circular = strcmp(mode, "circular") == 0;
    if (!circular && strcmp(mode, "linear") != 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "TensorScatter: unknown mode '%s' (expected linear or circular)",
                              mode);
    if (up->rank != r || up->dtype != past->dtype)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "TensorScatter: update must be a rank-%d %s tensor", r,
                              ox_dtype_name(past->dtype));
    for (int a = 0; a < r; a++)
        if (a == axis ? up->dims[a] > past->dims[a] : up->dims[a] != past->dims[a])
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "TensorScatter: update dim %d is %lld but the cache's is %lld%s", a,
                                  (long long)up->dims[a], (long long)past->dims[a],
                                  a == axis ? " (it may not exceed it)" : " (they must match)");
    int64_t batch = past->dims[0];
    if (wi && (wi->kind != OX_KIND_TENSOR || wi->dtype != ONYX_INT64 || wi->rank != 1 || wi->dims[0] != batch))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "TensorScatter: write_indices must be a 1-D int64 tensor of batch size %lld",
                              (long long)batch);
    if (ox_cpu_copy_elems(ctx, y, 0, past, 0, ox_tensor_numel(past)) != 0) return -1;
    int64_t max_len = past->dims[axis], len = up->dims[axis];
    int64_t inner = ox_numel(past->dims + axis + 1, r - (int)axis - 1);
    int64_t per_batch = ox_numel(past->dims + 1, (int)axis - 1); /* prefixes per batch entry */
    if (len == 0 || inner == 0 || per_batch == 0) return 0;
    for (int64_t b = 0; b < batch; b++) {
        int64_t start = wi ? ((const int64_t *)wi->data)[b] : 0;
        if (!circular && (start < 0 || start > max_len - len))
            return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR,
                                  "TensorScatter: write_indices[%lld] = %lld with %lld new entries does not fit "
                                  "the cache's %lld (linear mode needs 0 <= index <= %lld)",
                                  (long long)b, (long long)start, (long long)len, (long long)max_len,
                                  (long long)(max_len - len));
        if (circular) {
            start %= max_len; /* len > 0 here, so max_len > 0 */
            if (start < 0) start += max_len;
        }
        for (int64_t p = 0; p < per_batch; p++) {
            int64_t pre = b * per_batch + p;
            for (int64_t s = 0; s < len; s++) {
                int64_t at = start + s;
                if (at >= max_len) at -= max_len; /* only in circular mode */
                if (ox_cpu_copy_elems(ctx, y, (pre * max_len + at) * inner, up, (pre * len + s) * inner, inner) != 0)
                    return -1;
            }
        }
    }
    return 0;
}
