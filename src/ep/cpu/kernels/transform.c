/* CPU kernels of the data-movement operators. None of them does
 * arithmetic on elements, so they work on raw bytes with the element size
 * and support every dtype; strings are the exception, since each element
 * is an owned heap pointer that must be duplicated, never shared. Pad and
 * CenterCropPad are in kernels/transform_pad.c, registered here. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/kernel_util.h"
#include "ep/cpu/kernels/transform_util.h"
#include "ep/ep.h"
#include "ops/op.h"
#include "ops/transform.h"

extern const ox_kernel_table ox_cpu_kernels_transform;

/* ---- element copying ---- */

static int is_str(const ox_tensor *t) { return t->dtype == ONYX_STRING; }

static int copy_all(ox_kernel_ctx *ctx, ox_tensor *dst, const ox_tensor *src) {
    int64_t n = ox_tensor_numel(src);
    if (ox_tensor_numel(dst) != n || dst->dtype != src->dtype)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "%s: output does not match the input's size",
                              ctx->node->op_type);
    return ox_cpu_copy_elems(ctx, dst, 0, src, 0, n);
}

static int need_io(ox_kernel_ctx *ctx) {
    if (ctx->n_inputs < 1 || !ctx->inputs[0])
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: the input is missing", ctx->node->op_type);
    if (ctx->inputs[0]->kind != OX_KIND_TENSOR)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: the input must be a tensor", ctx->node->op_type);
    return 0;
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze: same bytes, new shape ---- */

static int k_copy(ox_kernel_ctx *ctx) {
    if (need_io(ctx) != 0) return -1;
    if (!ctx->outputs[0]) return 0;
    return copy_all(ctx, ctx->outputs[0], ctx->inputs[0]);
}

/* ---- Identity: tensors, sequences and optionals ---- */

static int k_identity(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ctx->n_inputs > 0 ? ctx->inputs[0] : NULL;
    if (!x) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Identity: the input is missing");
    if (x->kind == OX_KIND_TENSOR) {
        if (!ctx->outputs[0]) return 0;
        return copy_all(ctx, ctx->outputs[0], x);
    }
    ox_tensor *c = ox_tensor_clone(x, ctx->err);
    if (!c) return -1;
    return ox_kernel_set_output(ctx, 0, c);
}

/* ---- strided copies: Transpose, Slice, Expand, Tile, DepthToSpace ---- */

/* Tile views a rank-r tensor as 2r axes. */
#define SC_MAX (2 * OX_MAX_RANK)

typedef struct strided_job {
    const char *src;
    char *dst;
    size_t es;
    int rank;                 /* row axes plus the walked last axis */
    int64_t base;             /* input element offset of output element 0 */
    int64_t odims[SC_MAX];
    int64_t istride[SC_MAX];  /* input stride (elements) of each output axis */
    int64_t inner;            /* contiguous run copied at once (elements) */
} strided_job;

/* Rows of the output: all output axes but the last one, which is walked
 * with its input stride (or copied whole when it is contiguous). */
static void strided_rows(void *arg, int64_t begin, int64_t end) {
    const strided_job *j = arg;
    int r = j->rank;
    int64_t last = r ? j->odims[r - 1] : 1;
    int64_t ls = r ? j->istride[r - 1] : 1;
    int64_t idx[SC_MAX];
    int64_t rem = begin, off = j->base;
    for (int a = r - 2; a >= 0; a--) {
        idx[a] = rem % j->odims[a];
        rem /= j->odims[a];
        off += idx[a] * j->istride[a];
    }
    size_t es = j->es;
    size_t row_bytes = (size_t)(last * j->inner) * es;
    for (int64_t row = begin; row < end; row++) {
        char *d = j->dst + (size_t)row * row_bytes;
        if (j->inner > 1 || ls == 1) {
            if (ls == j->inner || last == 1) {
                memcpy(d, j->src + (size_t)off * es, row_bytes);
            } else {
                size_t blk = (size_t)j->inner * es;
                for (int64_t k = 0; k < last; k++)
                    memcpy(d + (size_t)k * blk, j->src + (size_t)(off + k * ls) * es, blk);
            }
        } else {
            switch (es) {
            case 1: {
                const uint8_t *s = (const uint8_t *)j->src + off;
                for (int64_t k = 0; k < last; k++) ((uint8_t *)d)[k] = s[k * ls];
                break;
            }
            case 2: {
                const uint16_t *s = (const uint16_t *)j->src + off;
                for (int64_t k = 0; k < last; k++) ((uint16_t *)d)[k] = s[k * ls];
                break;
            }
            case 4: {
                const uint32_t *s = (const uint32_t *)j->src + off;
                for (int64_t k = 0; k < last; k++) ((uint32_t *)d)[k] = s[k * ls];
                break;
            }
            case 8: {
                const uint64_t *s = (const uint64_t *)j->src + off;
                for (int64_t k = 0; k < last; k++) ((uint64_t *)d)[k] = s[k * ls];
                break;
            }
            default:
                for (int64_t k = 0; k < last; k++)
                    memcpy(d + (size_t)k * es, j->src + (size_t)(off + k * ls) * es, es);
            }
        }
        /* advance the odometer over the row axes */
        for (int a = r - 2; a >= 0; a--) {
            off += j->istride[a];
            if (++idx[a] < j->odims[a]) break;
            off -= idx[a] * j->istride[a];
            idx[a] = 0;
        }
    }
}

/* 2-D transpose in cache-sized tiles: the strided walk above thrashes the
 * cache when both dims are large. */
#define TILE 32
/* One band of TILE input rows, in 8x8 blocks whose fixed trip counts the
 * compiler unrolls; the band's source lines stay in L1 across blocks. */
#define TRANSPOSE2D(T)                                                                         \
    static void transpose2d_##T(const T *s, T *d, int64_t rows, int64_t cols, int64_t band) { \
        int64_t i0 = band * TILE, ie = i0 + TILE < rows ? i0 + TILE : rows;                   \
        for (int64_t j1 = 0; j1 < cols; j1 += 8)                                               \
            for (int64_t i1 = i0; i1 < ie; i1 += 8) {                                          \
                if (i1 + 8 <= ie && j1 + 8 <= cols) {                                          \
                    for (int a = 0; a < 8; a++)                                                \
                        for (int b = 0; b < 8; b++)                                            \
                            d[(j1 + a) * rows + i1 + b] = s[(i1 + b) * cols + j1 + a];         \
                } else {                                                                       \
                    for (int64_t j = j1; j < j1 + 8 && j < cols; j++)                          \
                        for (int64_t i = i1; i < i1 + 8 && i < ie; i++)                        \
                            d[j * rows + i] = s[i * cols + j];                                 \
                }                                                                              \
            }                                                                                  \
    }
TRANSPOSE2D(uint8_t)
TRANSPOSE2D(uint16_t)
TRANSPOSE2D(uint32_t)
TRANSPOSE2D(uint64_t)

typedef struct t2d_job {
    const void *src;
    void *dst;
    size_t es;
    int64_t batch, rows, cols; /* batch of [rows, cols] -> [cols, rows] */
} t2d_job;

static void t2d_run(void *arg, int64_t begin, int64_t end) {
    const t2d_job *j = arg;
    int64_t tiles = (j->rows + TILE - 1) / TILE;
    size_t mat = (size_t)(j->rows * j->cols) * j->es;
    for (int64_t w = begin; w < end; w++) {
        int64_t b = w / tiles, t = w % tiles;
        const char *s = (const char *)j->src + (size_t)b * mat;
        char *d = (char *)j->dst + (size_t)b * mat;
        switch (j->es) {
        case 1: transpose2d_uint8_t((const uint8_t *)s, (uint8_t *)d, j->rows, j->cols, t); break;
        case 2: transpose2d_uint16_t((const uint16_t *)s, (uint16_t *)d, j->rows, j->cols, t); break;
        case 4: transpose2d_uint32_t((const uint32_t *)s, (uint32_t *)d, j->rows, j->cols, t); break;
        default: transpose2d_uint64_t((const uint64_t *)s, (uint64_t *)d, j->rows, j->cols, t); break;
        }
    }
}

/* Fills the whole of dst (contiguous) from src: output element with
 * coordinates (i_0..i_{rank-1}) over dims od reads input element
 * base + sum(i_a * os[a]). Strides may be 0 (broadcast) or negative
 * (reversed slices). `whole` says the view is a permutation of all of src,
 * which allows the tiled 2-D path. */
static int strided_copy(ox_kernel_ctx *ctx, const ox_tensor *src, int64_t base, ox_tensor *dst,
                        int rank, const int64_t *odims, const int64_t *ostrides, int whole) {
    int64_t n = ox_numel(odims, rank);
    if (n <= 0) return 0;
    /* drop size-1 axes, then merge neighbours that stay adjacent and in
     * order in the input: fewer, longer axes mean longer contiguous runs */
    int64_t od[SC_MAX], os[SC_MAX];
    int m = 0;
    for (int i = 0; i < rank; i++) {
        int64_t d = odims[i];
        if (d == 1) continue;
        if (m > 0 && os[m - 1] == ostrides[i] * d) {
            od[m - 1] *= d;
            os[m - 1] = ostrides[i];
            continue;
        }
        od[m] = d;
        os[m] = ostrides[i];
        m++;
    }
    if (is_str(dst)) {
        char *const *sp = src->data;
        char **dp = dst->data;
        int64_t idx[SC_MAX] = {0};
        int64_t off = base;
        for (int64_t o = 0; o < n; o++) {
            if (ox_cpu_str_assign(ctx, &dp[o], sp[off]) != 0) return -1;
            for (int a = m - 1; a >= 0; a--) {
                off += os[a];
                if (++idx[a] < od[a]) break;
                off -= idx[a] * os[a];
                idx[a] = 0;
            }
        }
        return 0;
    }
    size_t es = ox_dtype_size(src->dtype);
    if (m == 0 || (m == 1 && os[0] == 1)) {
        memcpy(dst->data, (const char *)src->data + (size_t)base * es, (size_t)n * es);
        return 0;
    }
    /* batched 2-D transpose: [B, R, C] -> [B, C, R] */
    if (whole && base == 0 && (es == 1 || es == 2 || es == 4 || es == 8) &&
        ((m == 2 && os[0] == 1 && os[1] == od[0]) ||
         (m == 3 && os[0] == od[1] * od[2] && os[1] == 1 && os[2] == od[1]))) {
        t2d_job j = {src->data, dst->data, es, 1, 0, 0};
        if (m == 2) {
            j.rows = od[1];
            j.cols = od[0];
        } else {
            j.batch = od[0];
            j.rows = od[2];
            j.cols = od[1];
        }
        if (j.rows >= 8 && j.cols >= 8) {
            int64_t tiles = (j.rows + TILE - 1) / TILE;
            ox_parallel_for(ctx->pool, j.batch * tiles, 1, t2d_run, &j);
            return 0;
        }
    }
    strided_job j;
    j.src = src->data;
    j.dst = dst->data;
    j.es = es;
    j.base = base;
    j.inner = 1;
    if (os[m - 1] == 1) {
        /* the innermost output axis is contiguous in the input too */
        j.inner = od[m - 1];
        m--;
    }
    j.rank = m;
    for (int a = 0; a < m; a++) {
        j.odims[a] = od[a];
        j.istride[a] = os[a];
    }
    int64_t row_elems = (m ? od[m - 1] : 1) * j.inner;
    int64_t rows = n / row_elems;
    int64_t grain = row_elems >= 4096 ? 1 : 4096 / row_elems;
    ox_parallel_for(ctx->pool, rows, grain, strided_rows, &j);
    return 0;
}

static void contiguous_strides(const int64_t *dims, int rank, int64_t *stride) {
    int64_t s = 1;
    for (int a = rank - 1; a >= 0; a--) {
        stride[a] = s;
        s *= dims[a];
    }
}

/* Output axis i is input axis perm[i] of src viewed with `dims`. */
static int permute(ox_kernel_ctx *ctx, const ox_tensor *src, ox_tensor *dst, const int64_t *dims,
                   int rank, const int *perm) {
    int64_t stride[OX_MAX_RANK], od[OX_MAX_RANK], os[OX_MAX_RANK];
    contiguous_strides(dims, rank, stride);
    for (int i = 0; i < rank; i++) {
        od[i] = dims[perm[i]];
        os[i] = stride[perm[i]];
    }
    return strided_copy(ctx, src, 0, dst, rank, od, os, 1);
}

/* ---- Transpose ---- */

static int k_transpose(ox_kernel_ctx *ctx) {
    if (need_io(ctx) != 0) return -1;
    const ox_tensor *x = ctx->inputs[0];
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    int r = x->rank;
    int perm[OX_MAX_RANK];
    size_t np = 0;
    const int64_t *p = ir_attr_ints(ctx->node, "perm", &np);
    if (ir_node_attr(ctx->node, "perm")) {
        if ((int)np != r)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Transpose: perm has %zu entries but the input has rank %d",
                                  np, r);
        int seen[OX_MAX_RANK] = {0};
        for (int i = 0; i < r; i++) {
            int64_t v = p[i] < 0 ? p[i] + r : p[i];
            if (v < 0 || v >= r || seen[v])
                return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Transpose: perm is not a permutation of 0..%d",
                                      r - 1);
            seen[v] = 1;
            perm[i] = (int)v;
        }
    } else {
        for (int i = 0; i < r; i++) perm[i] = r - 1 - i;
    }
    return permute(ctx, x, y, x->dims, r, perm);
}

/* ---- Concat ---- */

/* Copies of a few bytes (a stacked box of 4 floats) made by a constant
 * size the compiler inlines, not a call per copy. */
static inline void copy_run(char *d, const char *s, size_t n) {
    switch (n) {
    case 4: memcpy(d, s, 4); break;
    case 8: memcpy(d, s, 8); break;
    case 16: memcpy(d, s, 16); break;
    default: memcpy(d, s, n);
    }
}

/* Concat and Split both move the rows of one whole tensor to or from
 * its parts along an axis: outer row o of the whole is the parts' row o
 * in turn. */
typedef struct parts_job {
    char *whole;
    char **part;    /* per part: its data, NULL for a skipped one */
    size_t *run;    /* per part: bytes of one outer row */
    size_t row;     /* bytes of one outer row of the whole */
    size_t outer;   /* outer rows */
    int n;
    int to_parts;   /* 1: whole -> parts (Split), 0: parts -> whole (Concat) */
} parts_job;

/* len bytes between the whole at w and a part at p, in the job's
 * direction; a lone part may share the whole's memory */
static inline void parts_move(const parts_job *j, char *w, char *p, size_t len) {
    if (w == p) return;
    if (j->to_parts)
        copy_run(p, w, len);
    else
        copy_run(w, p, len);
}

/* Outer rows [o0, o1), each the parts' rows in turn. */
static void parts_rows(void *arg, int64_t o0, int64_t o1) {
    const parts_job *j = arg;
    for (int64_t o = o0; o < o1; o++) {
        char *w = j->whole + (size_t)o * j->row;
        for (int i = 0; i < j->n; i++) {
            if (j->part[i] && j->run[i]) parts_move(j, w, j->part[i] + (size_t)o * j->run[i], j->run[i]);
            w += j->run[i];
        }
    }
}

/* Bytes [b0, b1) of the whole: the pieces of the parts' rows that fall
 * there. */
static void parts_span(const parts_job *j, size_t b0, size_t b1) {
    size_t o = b0 / j->row, at = b0 % j->row;
    while (b0 < b1) {
        char *w = j->whole + o * j->row;
        size_t start = 0;
        for (int i = 0; i < j->n && b0 < b1; i++) {
            if (!j->run[i] || at >= start + j->run[i]) {
                start += j->run[i];
                continue;
            }
            size_t off = at - start, len = j->run[i] - off;
            if (len > b1 - b0) len = b1 - b0;
            if (j->part[i]) parts_move(j, w + at, j->part[i] + o * j->run[i] + off, len);
            b0 += len;
            at += len;
            start += j->run[i];
        }
        o++;
        at = 0;
    }
}

/* Chunks [c0, c1) of PARTS_CHUNK bytes of the whole. */
#define PARTS_CHUNK ((size_t)64 << 10)
static void parts_chunks(void *arg, int64_t c0, int64_t c1) {
    const parts_job *j = arg;
    const size_t total = j->row * j->outer;
    for (int64_t c = c0; c < c1; c++) {
        const size_t b0 = (size_t)c * PARTS_CHUNK, b1 = b0 + PARTS_CHUNK < total ? b0 + PARTS_CHUNK : total;
        parts_span(j, b0, b1);
    }
}

/* Runs the job over the pool: tasks of at least 64 KiB (smaller copies
 * are not worth a thread). Fewer outer rows than threads (a channel
 * concatenation or split of one image: D-FINE's backbone joins five [1,
 * 16, 128, 128] maps, 5 MiB, in one row) are cut into chunks of the
 * whole's bytes instead, so that every thread copies. */
static void parts_run(ox_threadpool *pool, parts_job *j) {
    const size_t total = j->row * j->outer;
    if (j->outer < (size_t)ox_threadpool_size(pool) && total >= 2 * PARTS_CHUNK) {
        ox_parallel_for(pool, (int64_t)((total + PARTS_CHUNK - 1) / PARTS_CHUNK), 1, parts_chunks, j);
        return;
    }
    int64_t grain = j->row >= PARTS_CHUNK ? 1 : (int64_t)(PARTS_CHUNK / (j->row ? j->row : 1));
    ox_parallel_for(pool, (int64_t)j->outer, grain, parts_rows, j);
}

/* Strings are copied element by element, each copy owning its string. */
static int parts_copy_strings(ox_kernel_ctx *ctx, ox_tensor *whole, ox_tensor *const *parts, int n, int axis,
                              int64_t inner, const int64_t *sizes, int to_parts) {
    const int64_t row = whole->dims[axis] * inner, outer = ox_numel(whole->dims, axis);
    int64_t at = 0;
    for (int i = 0; i < n; i++) {
        if (!parts[i]) {
            at += sizes ? sizes[i] * inner : 0;
            continue;
        }
        const int64_t blk = parts[i]->dims[axis] * inner;
        for (int64_t o = 0; o < outer; o++) {
            int rc = to_parts ? ox_cpu_copy_elems(ctx, parts[i], o * blk, whole, o * row + at, blk)
                              : ox_cpu_copy_elems(ctx, whole, o * row + at, parts[i], o * blk, blk);
            if (rc != 0) return -1;
        }
        at += blk;
    }
    return 0;
}

/* Moves whole's rows to or from the n parts (NULL ones skipped) along
 * axis, whose elements past it number inner per index; the sizes are
 * already checked. sizes (may be NULL when no present part follows a
 * NULL one): each part's size along axis, which places the parts after
 * a NULL one. */
#define PARTS_ON_STACK 16
static int parts_copy(ox_kernel_ctx *ctx, ox_tensor *whole, ox_tensor *const *parts, int n, int axis, int64_t inner,
                      const int64_t *sizes, int to_parts) {
    if (whole->dtype == ONYX_STRING) return parts_copy_strings(ctx, whole, parts, n, axis, inner, sizes, to_parts);
    const size_t es = ox_dtype_size(whole->dtype);
    parts_job j = {.whole = whole->data,
                   .row = (size_t)(whole->dims[axis] * inner) * es,
                   .outer = (size_t)ox_numel(whole->dims, axis),
                   .n = n,
                   .to_parts = to_parts};
    /* a run's tables on the stack for the usual few parts, no allocation */
    char *part_s[PARTS_ON_STACK];
    size_t run_s[PARTS_ON_STACK];
    const int heap = n > PARTS_ON_STACK;
    j.part = heap ? malloc(sizeof *j.part * (size_t)n) : part_s;
    j.run = heap ? malloc(sizeof *j.run * (size_t)n) : run_s;
    int rc = 0;
    if (!j.part || !j.run) {
        rc = ox_cpu_oom(ctx);
    } else {
        for (int i = 0; i < n; i++) {
            j.part[i] = parts[i] ? parts[i]->data : NULL;
            const int64_t size = parts[i] ? parts[i]->dims[axis] : sizes ? sizes[i] : 0;
            j.run[i] = (size_t)(size * inner) * es;
        }
        parts_run(ctx->pool, &j);
    }
    if (heap) {
        free(j.part);
        free(j.run);
    }
    return rc;
}

static int k_concat(ox_kernel_ctx *ctx) {
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    int r = y->rank;
    int64_t axis = ir_attr_int(ctx->node, "axis", 1);
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Concat: axis %lld is out of range for rank %d",
                              (long long)ir_attr_int(ctx->node, "axis", 1), r);
    int64_t inner = ox_numel(y->dims + axis + 1, r - (int)axis - 1);
    int64_t out_blk = y->dims[axis] * inner;
    int64_t at = 0;
    for (int i = 0; i < ctx->n_inputs; i++) {
        const ox_tensor *x = ctx->inputs[i];
        if (!x) continue;
        if (x->kind != OX_KIND_TENSOR || x->rank != r || x->dtype != y->dtype)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Concat: input %d does not match the output", i);
        int64_t blk = x->dims[axis] * inner;
        if (at + blk > out_blk)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Concat: inputs exceed the output size");
        at += blk;
    }
    if (at != out_blk)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Concat: inputs do not fill the output");
    return parts_copy(ctx, y, ctx->inputs, ctx->n_inputs, (int)axis, inner, NULL, 0);
}

/* ---- Shape, Size ---- */

static int k_shape(ox_kernel_ctx *ctx) {
    if (need_io(ctx) != 0) return -1;
    const ox_tensor *x = ctx->inputs[0];
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    int r = x->rank;
    int64_t start = 0, end = r;
    if (ctx->node->opset >= 15) {
        start = ir_attr_int(ctx->node, "start", 0);
        end = ir_attr_int(ctx->node, "end", r);
    }
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = start < 0 ? 0 : (start > r ? r : start);
    end = end < 0 ? 0 : (end > r ? r : end);
    int64_t n = end > start ? end - start : 0;
    if (ox_tensor_numel(y) != n || y->dtype != ONYX_INT64)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Shape: output has the wrong size");
    int64_t *d = y->data;
    for (int64_t i = 0; i < n; i++) d[i] = x->dims[start + i];
    return 0;
}

static int k_size(ox_kernel_ctx *ctx) {
    if (need_io(ctx) != 0) return -1;
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    *(int64_t *)y->data = ox_tensor_numel(ctx->inputs[0]);
    return 0;
}

/* ---- Constant ---- */

static int k_constant(ox_kernel_ctx *ctx) {
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    const ir_node *n = ctx->node;
    const ir_attr *a;
    int64_t cnt = ox_tensor_numel(y);
    if ((a = ir_node_attr(n, "value")) != NULL) {
        if (!a->t || a->t->kind != OX_KIND_TENSOR || a->t->dtype != y->dtype || ox_tensor_numel(a->t) != cnt)
            return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Constant: 'value' does not match the output");
        return ox_cpu_copy_elems(ctx, y, 0, a->t, 0, cnt);
    }
    if ((a = ir_node_attr(n, "value_float")) != NULL) {
        *(float *)y->data = a->f;
        return 0;
    }
    if ((a = ir_node_attr(n, "value_int")) != NULL) {
        *(int64_t *)y->data = a->i;
        return 0;
    }
    if ((a = ir_node_attr(n, "value_floats")) != NULL) {
        if ((int64_t)a->n != cnt) return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Constant: size mismatch");
        if (cnt) memcpy(y->data, a->floats, (size_t)cnt * sizeof(float));
        return 0;
    }
    if ((a = ir_node_attr(n, "value_ints")) != NULL) {
        if ((int64_t)a->n != cnt) return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Constant: size mismatch");
        if (cnt) memcpy(y->data, a->ints, (size_t)cnt * sizeof(int64_t));
        return 0;
    }
    if ((a = ir_node_attr(n, "value_string")) != NULL)
        return ox_cpu_str_assign(ctx, (char **)y->data, a->s);
    if ((a = ir_node_attr(n, "value_strings")) != NULL) {
        if ((int64_t)a->n != cnt) return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Constant: size mismatch");
        for (int64_t i = 0; i < cnt; i++)
            if (ox_cpu_str_assign(ctx, (char **)y->data + i, a->strings[i]) != 0) return -1;
        return 0;
    }
    return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "Constant: only dense values are supported");
}

/* ---- reading shape-like inputs (shared through transform_util.h) ---- */

int ox_cpu_transform_read_ints(ox_kernel_ctx *ctx, int i, const char *what, int64_t *out, int max, int *count) {
    const ox_tensor *t = i < ctx->n_inputs ? ctx->inputs[i] : NULL;
    *count = -1;
    if (!t) return 0;
    if (t->kind != OX_KIND_TENSOR || !ox_dtype_is_integer(t->dtype) || t->rank > 1)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: '%s' must be a 1-D integer tensor",
                              ctx->node->op_type, what);
    int64_t n = ox_tensor_numel(t);
    if (n > max)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: '%s' has %lld entries, at most %d are allowed",
                              ctx->node->op_type, what, (long long)n, max);
    for (int64_t k = 0; k < n; k++) out[k] = ox_get_i64(t->data, t->dtype, (size_t)k);
    *count = (int)n;
    return 0;
}

int ox_cpu_transform_attr_ints(ox_kernel_ctx *ctx, const char *name, int64_t *out, int max, int *count) {
    size_t n = 0;
    const int64_t *v = ir_attr_ints(ctx->node, name, &n);
    *count = -1;
    if (!ir_node_attr(ctx->node, name)) return 0;
    if (n > (size_t)max)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: '%s' has too many entries", ctx->node->op_type, name);
    if (n) memcpy(out, v, n * sizeof *v);
    *count = (int)n;
    return 0;
}

/* ---- Slice ---- */

static int k_slice(ox_kernel_ctx *ctx) {
    if (need_io(ctx) != 0) return -1;
    const ox_tensor *x = ctx->inputs[0];
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    int r = x->rank;
    int64_t st[OX_MAX_RANK], en[OX_MAX_RANK], ax[OX_MAX_RANK], sp[OX_MAX_RANK];
    int ns, ne, na, np = -1;
    if (ctx->node->opset < 10) {
        if (ox_cpu_transform_attr_ints(ctx, "starts", st, OX_MAX_RANK, &ns) ||
            ox_cpu_transform_attr_ints(ctx, "ends", en, OX_MAX_RANK, &ne) ||
            ox_cpu_transform_attr_ints(ctx, "axes", ax, OX_MAX_RANK, &na))
            return -1;
    } else {
        if (ox_cpu_transform_read_ints(ctx, 1, "starts", st, OX_MAX_RANK, &ns) ||
            ox_cpu_transform_read_ints(ctx, 2, "ends", en, OX_MAX_RANK, &ne) ||
            ox_cpu_transform_read_ints(ctx, 3, "axes", ax, OX_MAX_RANK, &na) ||
            ox_cpu_transform_read_ints(ctx, 4, "steps", sp, OX_MAX_RANK, &np))
            return -1;
    }
    if (ns < 0 || ne != ns || (na >= 0 && na != ns) || (np >= 0 && np != ns) || (na < 0 && ns > r))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Slice: starts, ends, axes and steps do not match");
    int64_t start[OX_MAX_RANK], step[OX_MAX_RANK], od[OX_MAX_RANK];
    if (ox_transform_slice_plan(x->dims, r, st, en, na >= 0 ? ax : NULL, np >= 0 ? sp : NULL, ns, start,
                                step, od, ctx->err) != 0)
        return -1;
    if (!ox_shape_equal(od, r, y->dims, y->rank))
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Slice: output has the wrong shape");
    int64_t stride[OX_MAX_RANK], os[OX_MAX_RANK], base = 0;
    contiguous_strides(x->dims, r, stride);
    for (int a = 0; a < r; a++) {
        base += start[a] * stride[a];
        /* a huge step only matters when it selects more than one element,
         * and then it is bounded by the axis size */
        os[a] = od[a] > 1 ? step[a] * stride[a] : 0;
    }
    return strided_copy(ctx, x, base, y, r, od, os, 0);
}

/* ---- Split ---- */

/* The size along the axis (of size d) of each of Split's outputs, read
 * from the node as inference reads it: the 'split' input, the attribute
 * before opset 13, else equal parts (ox_split_even_size). The kernel
 * needs it where an omitted output, which has no tensor here, comes
 * before a present one. Inference at run time has already checked the
 * list against the outputs and the axis; the count is checked again here
 * because out holds one entry per output. */
static int split_sizes(ox_kernel_ctx *ctx, int64_t d, int64_t *out) {
    const int n = ctx->n_outputs;
    const ox_tensor *s = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
    size_t count = 0;
    const int64_t *attr = !s && ctx->node->opset < 13 ? ir_attr_ints(ctx->node, "split", &count) : NULL;
    if (s || attr) {
        if (s && (s->dtype != ONYX_INT64 || ox_tensor_numel(s) != n))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Split: 'split' must hold %d int64 sizes", n);
        if (attr && count != (size_t)n)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Split: 'split' has %zu entries for %d outputs",
                                  count, n);
        memcpy(out, s ? s->data : attr, sizeof *out * (size_t)n);
        return 0;
    }
    const int by_count = ir_node_attr(ctx->node, "num_outputs") != NULL;
    for (int i = 0; i < n; i++) out[i] = ox_split_even_size(d, n, i, by_count);
    return 0;
}

static int k_split(ox_kernel_ctx *ctx) {
    if (need_io(ctx) != 0) return -1;
    const ox_tensor *x = ctx->inputs[0];
    int r = x->rank;
    int64_t axis = ir_attr_int(ctx->node, "axis", 0);
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Split: axis is out of range for rank %d", r);
    const int n = ctx->n_outputs;
    int64_t inner = ox_numel(x->dims + axis + 1, r - (int)axis - 1);
    int64_t in_blk = x->dims[axis] * inner;
    /* the output shapes inference produced carry the split sizes, but an
     * omitted output has no tensor here: where a present one follows it,
     * every size comes from the node */
    int64_t sizes_s[PARTS_ON_STACK], *sizes = NULL;
    for (int i = 1; i < n && !sizes; i++)
        if (ctx->outputs[i] && !ctx->outputs[i - 1]) {
            sizes = n <= PARTS_ON_STACK ? sizes_s : malloc(sizeof *sizes * (size_t)n);
            if (!sizes) return ox_cpu_oom(ctx);
        }
    int rc = sizes ? split_sizes(ctx, x->dims[axis], sizes) : 0;
    int64_t at = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        ox_tensor *y = ctx->outputs[i];
        if (y && (y->rank != r || y->dtype != x->dtype || (sizes && y->dims[axis] != sizes[i])))
            rc = ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Split: output %d has the wrong shape", i);
        const int64_t size = y ? y->dims[axis] : sizes ? sizes[i] : 0;
        if (rc == 0 && (size < 0 || size > x->dims[axis] || at + size * inner > in_blk))
            rc = ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Split: outputs exceed the input");
        at += size * inner;
    }
    if (rc == 0) rc = parts_copy(ctx, ctx->inputs[0], ctx->outputs, n, (int)axis, inner, sizes, 1);
    if (sizes != sizes_s) free(sizes);
    return rc;
}

/* ---- Expand ---- */

static int k_expand(ox_kernel_ctx *ctx) {
    if (need_io(ctx) != 0) return -1;
    const ox_tensor *x = ctx->inputs[0];
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    int r = y->rank, xr = x->rank;
    if (xr > r) return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Expand: output rank is below the input's");
    int64_t stride[OX_MAX_RANK], os[OX_MAX_RANK];
    contiguous_strides(x->dims, xr, stride);
    for (int a = 0; a < r; a++) {
        int xa = a - (r - xr);
        if (xa < 0 || x->dims[xa] == 1) {
            os[a] = 0;
        } else if (x->dims[xa] == y->dims[a]) {
            os[a] = stride[xa];
        } else {
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Expand: input dim %d of size %lld cannot become %lld", xa,
                                  (long long)x->dims[xa], (long long)y->dims[a]);
        }
    }
    return strided_copy(ctx, x, 0, y, r, y->dims, os, 0);
}

/* ---- Tile ---- */

static int k_tile(ox_kernel_ctx *ctx) {
    if (need_io(ctx) != 0) return -1;
    const ox_tensor *x = ctx->inputs[0];
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    int r = x->rank;
    if (y->rank != r) return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Tile: output has the wrong rank");
    /* output axis a is (repeat, original) = two axes of the view, with
     * the repeat axis reading the same input again (stride 0) */
    int64_t stride[OX_MAX_RANK], od[SC_MAX], os[SC_MAX];
    contiguous_strides(x->dims, r, stride);
    for (int a = 0; a < r; a++) {
        if (x->dims[a] == 0) {
            if (y->dims[a] != 0) return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Tile: output has the wrong shape");
            od[2 * a] = 0;
        } else {
            if (y->dims[a] % x->dims[a] != 0)
                return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Tile: output has the wrong shape");
            od[2 * a] = y->dims[a] / x->dims[a];
        }
        os[2 * a] = 0;
        od[2 * a + 1] = x->dims[a];
        os[2 * a + 1] = stride[a];
    }
    return strided_copy(ctx, x, 0, y, 2 * r, od, os, 0);
}

/* ---- DepthToSpace / SpaceToDepth ---- */

static int k_depth_to_space(ox_kernel_ctx *ctx) {
    if (need_io(ctx) != 0) return -1;
    const ox_tensor *x = ctx->inputs[0];
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    int64_t b = ir_attr_int(ctx->node, "blocksize", 0), bb;
    if (x->rank != 4 || b <= 0 || !ox_mul_i64(b, b, &bb) || x->dims[1] % bb != 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "DepthToSpace: bad input shape or blocksize");
    int64_t n = x->dims[0], c = x->dims[1] / bb, h = x->dims[2], w = x->dims[3];
    const char *mode = ctx->node->opset >= 11 ? ir_attr_string(ctx->node, "mode", "DCR") : "DCR";
    if (strcmp(mode, "CRD") == 0) {
        const int64_t v[6] = {n, c, b, b, h, w};
        const int perm[6] = {0, 1, 4, 2, 5, 3};
        return permute(ctx, x, y, v, 6, perm);
    }
    const int64_t v[6] = {n, b, b, c, h, w};
    const int perm[6] = {0, 3, 4, 1, 5, 2};
    return permute(ctx, x, y, v, 6, perm);
}

static int k_space_to_depth(ox_kernel_ctx *ctx) {
    if (need_io(ctx) != 0) return -1;
    const ox_tensor *x = ctx->inputs[0];
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    int64_t b = ir_attr_int(ctx->node, "blocksize", 0);
    if (x->rank != 4 || b <= 0 || x->dims[2] % b != 0 || x->dims[3] % b != 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "SpaceToDepth: bad input shape or blocksize");
    const int64_t v[6] = {x->dims[0], x->dims[1], x->dims[2] / b, b, x->dims[3] / b, b};
    /* version 28 adds CRD: the channel stays the outer part of the new depth */
    int crd = ox_op_since_version(ctx->node->domain, ctx->node->op_type, ctx->node->opset) >= 28 &&
              strcmp(ir_attr_string(ctx->node, "mode", "DCR"), "CRD") == 0;
    const int dcr_perm[6] = {0, 3, 5, 1, 2, 4}, crd_perm[6] = {0, 1, 3, 5, 2, 4};
    return permute(ctx, x, y, v, 6, crd ? crd_perm : dcr_perm);
}

/* ---- Range ---- */

static int k_range(ox_kernel_ctx *ctx) {
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    const ox_tensor *s = ctx->inputs[0], *d = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
    if (!s || !d || ox_tensor_numel(s) != 1 || ox_tensor_numel(d) != 1)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Range: start and delta must be scalars");
    int64_t n = ox_tensor_numel(y);
    switch (y->dtype) {
    case ONYX_FLOAT32: {
        float a = *(const float *)s->data, st = *(const float *)d->data;
        for (int64_t i = 0; i < n; i++) ((float *)y->data)[i] = a + (float)i * st;
        break;
    }
    case ONYX_FLOAT64: {
        double a = *(const double *)s->data, st = *(const double *)d->data;
        for (int64_t i = 0; i < n; i++) ((double *)y->data)[i] = a + (double)i * st;
        break;
    }
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16: {
        /* Range-27: the values are computed in the stash type (float by
         * default, or double) and rounded once, since adding in 16 bits
         * loses exactness quickly */
        double a = ox_get_f64(s->data, s->dtype, 0), st = ox_get_f64(d->data, d->dtype, 0);
        int dbl = ir_attr_int(ctx->node, "stash_type", ONYX_FLOAT32) == ONYX_FLOAT64;
        for (int64_t i = 0; i < n; i++) {
            double v = dbl ? a + (double)i * st : (double)((float)a + (float)i * (float)st);
            ox_set_f64(y->data, y->dtype, (size_t)i, v);
        }
        break;
    }
    case ONYX_INT16:
    case ONYX_INT32:
    case ONYX_INT64: {
        /* every value lies between start and limit, but i * st alone can
         * exceed int64 when the span does; modular arithmetic gives the
         * exact in-range result */
        int64_t a = ox_get_i64(s->data, s->dtype, 0), st = ox_get_i64(d->data, d->dtype, 0);
        for (int64_t i = 0; i < n; i++)
            ox_set_i64(y->data, y->dtype, (size_t)i, (int64_t)((uint64_t)a + (uint64_t)i * (uint64_t)st));
        break;
    }
    default:
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "Range: type %s is not supported", ox_dtype_name(y->dtype));
    }
    return 0;
}

static int supports_range(const ir_node *node, const ir_type *const *in, int n) {
    if (n < 1 || !in[0]) return 1;
    ox_dtype t = in[0]->dtype;
    if ((t == ONYX_FLOAT16 || t == ONYX_BFLOAT16) && ox_op_since_version(node->domain, "Range", node->opset) >= 27)
        return 1;
    return t == ONYX_UNDEFINED || t == ONYX_FLOAT32 || t == ONYX_FLOAT64 || t == ONYX_INT16 || t == ONYX_INT32 ||
           t == ONYX_INT64;
}

/* ---- ConstantOfShape ---- */

static int k_constant_of_shape(ox_kernel_ctx *ctx) {
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    const ir_attr *a = ir_node_attr(ctx->node, "value");
    int64_t n = ox_tensor_numel(y);
    if (is_str(y)) {
        const char *v = a && a->t && ox_tensor_numel(a->t) == 1 ? ((char *const *)a->t->data)[0] : "";
        for (int64_t i = 0; i < n; i++)
            if (ox_cpu_str_assign(ctx, (char **)y->data + i, v) != 0) return -1;
        return 0;
    }
    size_t es = ox_dtype_size(y->dtype);
    unsigned char v[16] = {0};
    if (a) {
        if (!a->t || a->t->dtype != y->dtype || ox_tensor_numel(a->t) != 1)
            return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "ConstantOfShape: 'value' does not match the output");
        memcpy(v, a->t->data, es);
    }
    char *d = y->data;
    int zero = 1;
    for (size_t k = 0; k < es; k++) zero &= v[k] == 0;
    if (zero) {
        memset(d, 0, (size_t)n * es);
        return 0;
    }
    for (int64_t i = 0; i < n; i++) memcpy(d + (size_t)i * es, v, es);
    return 0;
}

/* ---- EyeLike ---- */

static int k_eyelike(ox_kernel_ctx *ctx) {
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    if (y->rank != 2 || is_str(y))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "EyeLike: the output must be a 2-D numeric tensor");
    int64_t rows = y->dims[0], cols = y->dims[1];
    int64_t k = ir_attr_int(ctx->node, "k", 0);
    memset(y->data, 0, (size_t)(rows * cols) * ox_dtype_size(y->dtype));
    for (int64_t i = 0; i < rows; i++) {
        /* j = i + k, computed so that a huge |k| cannot overflow */
        if ((k >= 0 && k >= cols) || (k < 0 && -(k + 1) >= i)) continue;
        int64_t j = i + k;
        if (j >= 0 && j < cols) ox_set_f64(y->data, y->dtype, (size_t)(i * cols + j), 1.0);
    }
    return 0;
}

/* ---- table ---- */

static const ox_kernel_def KERNELS[] = {
    {"", "Reshape", 1, 25, k_copy, NULL, NULL, NULL, NULL},
    {"", "Flatten", 1, 25, k_copy, NULL, NULL, NULL, NULL},
    {"", "Squeeze", 1, 25, k_copy, NULL, NULL, NULL, NULL},
    {"", "Unsqueeze", 1, 25, k_copy, NULL, NULL, NULL, NULL},
    {"", "Identity", 1, 25, k_identity, NULL, NULL, NULL, NULL},
    {"", "Transpose", 1, 25, k_transpose, NULL, NULL, NULL, NULL},
    {"", "Concat", 1, 17, k_concat, NULL, NULL, NULL, NULL},
    {"", "Shape", 1, 25, k_shape, NULL, NULL, NULL, NULL},
    {"", "Size", 1, 25, k_size, NULL, NULL, NULL, NULL},
    {"", "Constant", 1, 25, k_constant, NULL, NULL, NULL, NULL},
    {"", "Slice", 1, 17, k_slice, NULL, NULL, NULL, NULL},
    {"", "Split", 1, 18, k_split, NULL, NULL, NULL, NULL},
    {"", "Expand", 8, 17, k_expand, NULL, NULL, NULL, NULL},
    {"", "Tile", 1, 17, k_tile, NULL, NULL, NULL, NULL},
    {"", "Pad", 1, 25, ox_cpu_pad, NULL, NULL, NULL, NULL},
    {"", "CenterCropPad", 18, 18, ox_cpu_center_crop_pad, NULL, NULL, NULL, NULL},
    {"", "DepthToSpace", 1, 28, k_depth_to_space, NULL, NULL, NULL, NULL},
    {"", "SpaceToDepth", 1, 28, k_space_to_depth, NULL, NULL, NULL, NULL},
    {"", "Range", 11, 27, k_range, supports_range, NULL, NULL, NULL},
    {"", "ConstantOfShape", 9, 25, k_constant_of_shape, NULL, NULL, NULL, NULL},
    {"", "EyeLike", 9, 22, k_eyelike, NULL, NULL, NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_transform = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
