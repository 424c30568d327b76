/* CPU kernels of Pad and CenterCropPad. Both fill an output whose every
 * axis is the input's shifted by a leading pad (negative: a crop) and
 * extended or cut at the end; positions outside the input take the
 * constant or, for Pad's other modes, a mirrored, edge or wrapped element.
 * Their table entries are in kernels/transform.c. */
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/kernel_util.h"
#include "ep/cpu/kernels/transform_util.h"
#include "ep/ep.h"
#include "ops/op.h"

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

static int is_str(const ox_tensor *t) { return t->dtype == ONYX_STRING; }

/* Input coordinate that output coordinate i (already shifted by the
 * leading pad) reads, or -1 for the constant. */
static int64_t pad_map(int64_t i, int64_t d, int mode) {
    if (i >= 0 && i < d) return i;
    if (d == 0) return -1;
    switch (mode) {
    case PAD_REFLECT: { /* mirrored around the edge elements */
        if (d == 1) return 0;
        int64_t period = 2 * (d - 1);
        int64_t k = i % period;
        if (k < 0) k += period;
        return k < d ? k : period - k;
    }
    case PAD_EDGE: return i < 0 ? 0 : d - 1;
    case PAD_WRAP: {
        int64_t k = i % d;
        return k < 0 ? k + d : k;
    }
    default: return -1;
    }
}

/* Fills y from x: output coordinate o of axis a reads input coordinate
 * o - pads[a] mapped by `mode`; constant positions take cval (one element
 * of x's type) or, for strings, cstr. The caller has checked that
 * y->dims[a] == x->dims[a] + pads[a] + pads[a + rank]. */
static int pad_fill(ox_kernel_ctx *ctx, const ox_tensor *x, ox_tensor *y, const int64_t *pads, int mode,
                    const unsigned char *cval, const char *cstr) {
    int r = x->rank;
    int64_t total = ox_tensor_numel(y);
    if (total == 0) return 0;
    if (r == 0) return ox_cpu_copy_elems(ctx, y, 0, x, 0, 1);
    size_t es = ox_dtype_size(x->dtype);
    int64_t stride[OX_MAX_RANK], s = 1;
    for (int a = r - 1; a >= 0; a--) {
        stride[a] = s;
        s *= x->dims[a];
    }
    int64_t last = y->dims[r - 1], dl = x->dims[r - 1], pl = pads[r - 1];
    int64_t *map = malloc((size_t)last * sizeof *map);
    if (!map) return ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "%s: out of memory", ctx->node->op_type);
    for (int64_t o = 0; o < last; o++) map[o] = pad_map(o - pl, dl, mode);
    /* every row copies the same middle [lo, hi) of its source row in one
     * block (the input's last axis where the output keeps it), so only
     * the padded ends go element by element */
    int64_t lo = 0, hi = 0;
    while (lo < last && (map[lo] < 0 || map[lo] != lo - pl)) lo++;
    for (hi = lo; hi < last && map[hi] >= 0 && map[hi] == hi - pl;) hi++;
    /* the first output row that is all padding, which later ones copy */
    const char *const_row = NULL;
    int64_t rows = total / last;
    int64_t idx[OX_MAX_RANK] = {0};
    int rc = 0;
    char *out = y->data;
    const char *in = x->data;
    for (int64_t row = 0; row < rows && rc == 0; row++) {
        /* source row for this combination of outer output coordinates */
        int64_t src = 0;
        int fill = 0;
        for (int a = 0; a < r - 1; a++) {
            int64_t sa = pad_map(idx[a] - pads[a], x->dims[a], mode);
            if (sa < 0) {
                fill = 1;
                break;
            }
            src += sa * stride[a];
        }
        int64_t o0 = row * last;
        if (is_str(y)) {
            for (int64_t o = 0; o < last && rc == 0; o++) {
                const char *v = (fill || map[o] < 0) ? cstr : ((char *const *)x->data)[src + map[o]];
                rc = ox_cpu_str_assign(ctx, (char **)y->data + o0 + o, v);
            }
        } else {
            char *d = out + (size_t)o0 * es;
            if (fill && const_row) {
                memcpy(d, const_row, (size_t)last * es);
            } else if (fill) {
                for (int64_t o = 0; o < last; o++) memcpy(d + (size_t)o * es, cval, es);
                const_row = d;
            } else {
                if (hi > lo) memcpy(d + (size_t)lo * es, in + (size_t)(src + lo - pl) * es, (size_t)(hi - lo) * es);
                for (int64_t o = 0; o < last; o++) {
                    if (o == lo) o = hi; /* the block above */
                    if (o == last) break;
                    memcpy(d + (size_t)o * es, map[o] < 0 ? (const char *)cval : in + (size_t)(src + map[o]) * es,
                           es);
                }
            }
        }
        for (int a = r - 2; a >= 0; a--) {
            if (++idx[a] < y->dims[a]) break;
            idx[a] = 0;
        }
    }
    free(map);
    return rc;
}

static int data_input(ox_kernel_ctx *ctx, const ox_tensor **x) {
    *x = ctx->n_inputs > 0 ? ctx->inputs[0] : NULL;
    if (!*x) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: the input is missing", ctx->node->op_type);
    if ((*x)->kind != OX_KIND_TENSOR)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: the input must be a tensor", ctx->node->op_type);
    return 0;
}

/* Output dims must be the input's plus both pads on every axis. */
static int check_out_shape(ox_kernel_ctx *ctx, const ox_tensor *x, const ox_tensor *y, const int64_t *pads) {
    int r = x->rank;
    if (y->rank != r || y->dtype != x->dtype)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "%s: output has the wrong rank or type", ctx->node->op_type);
    for (int a = 0; a < r; a++) {
        int64_t want;
        if (__builtin_add_overflow(x->dims[a], pads[a], &want) || __builtin_add_overflow(want, pads[a + r], &want))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: pads %lld and %lld overflow axis %d",
                                  ctx->node->op_type, (long long)pads[a], (long long)pads[a + r], a);
        if (y->dims[a] != want)
            return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "%s: output axis %d has size %lld, expected %lld",
                                  ctx->node->op_type, a, (long long)y->dims[a], (long long)want);
    }
    return 0;
}

/* ---- Pad ---- */

int ox_cpu_pad(ox_kernel_ctx *ctx) {
    const ox_tensor *x;
    if (data_input(ctx, &x) != 0) return -1;
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    int r = x->rank;
    const char *ms = ir_attr_string(ctx->node, "mode", "constant");
    int mode = strcmp(ms, "reflect") == 0 ? PAD_REFLECT
               : strcmp(ms, "edge") == 0  ? PAD_EDGE
               : strcmp(ms, "wrap") == 0  ? PAD_WRAP
                                          : PAD_CONSTANT;
    int64_t pads[2 * OX_MAX_RANK], given[2 * OX_MAX_RANK], axes[OX_MAX_RANK];
    int n, na = -1;
    if (ctx->node->opset < 11) {
        if (ox_cpu_transform_attr_ints(ctx, ctx->node->opset < 2 ? "paddings" : "pads", given, 2 * OX_MAX_RANK, &n) !=
            0)
            return -1;
    } else if (ox_cpu_transform_read_ints(ctx, 1, "pads", given, 2 * OX_MAX_RANK, &n) != 0) {
        return -1;
    }
    /* Pad-18's optional 'axes' input names the axes the pads apply to */
    if (ctx->node->opset >= 18 && ox_cpu_transform_read_ints(ctx, 3, "axes", axes, OX_MAX_RANK, &na) != 0) return -1;
    if (na < 0) {
        if (n != 2 * r)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Pad: 'pads' has %d entries, expected %d for rank %d", n,
                                  2 * r, r);
        memcpy(pads, given, (size_t)n * sizeof *pads);
    } else {
        if (n != 2 * na)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Pad: 'pads' has %d entries, expected %d for %d axes", n,
                                  2 * na, na);
        int seen[OX_MAX_RANK] = {0};
        for (int a = 0; a < 2 * r; a++) pads[a] = 0;
        for (int k = 0; k < na; k++) {
            int64_t a = axes[k];
            if (a < -r || a >= r || seen[a < 0 ? a + r : a])
                return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                      "Pad: axes[%d] = %lld is out of range or repeated for rank %d", k,
                                      (long long)axes[k], r);
            if (a < 0) a += r;
            seen[a] = 1;
            pads[a] = given[k];
            pads[a + r] = given[k + na];
        }
    }
    if (check_out_shape(ctx, x, y, pads) != 0) return -1;
    /* the fill value as one element of the data's type */
    size_t es = ox_dtype_size(x->dtype);
    unsigned char cval[16] = {0};
    const char *cstr = "";
    const ox_tensor *cv = ctx->node->opset >= 11 && ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
    if (cv && ox_tensor_numel(cv) > 0) {
        if (cv->dtype != x->dtype)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Pad: constant_value has type %s but data has %s",
                                  ox_dtype_name(cv->dtype), ox_dtype_name(x->dtype));
        if (is_str(x))
            cstr = ((char *const *)cv->data)[0];
        else
            memcpy(cval, cv->data, es);
    } else if (ctx->node->opset < 11 && !is_str(x)) {
        ox_set_f64(cval, x->dtype, 0, ir_attr_float(ctx->node, "value", 0.0f));
    }
    return pad_fill(ctx, x, y, pads, mode, cval, cstr);
}

/* ---- CenterCropPad ---- */

/* A centred window: an axis of size d becoming s starts (d - s) / 2 into
 * the input when cropping and (s - d) / 2 into the output when padding,
 * both rounded down, so the odd element goes to the end. That is Pad in
 * constant mode (zero) with a leading pad of -(d - s) / 2 or (s - d) / 2. */
int ox_cpu_center_crop_pad(ox_kernel_ctx *ctx) {
    const ox_tensor *x;
    if (data_input(ctx, &x) != 0) return -1;
    ox_tensor *y = ctx->outputs[0];
    if (!y) return 0;
    int r = x->rank;
    int64_t shape[OX_MAX_RANK];
    int n;
    if (ox_cpu_transform_read_ints(ctx, 1, "shape", shape, OX_MAX_RANK, &n) != 0) return -1;
    size_t na = 0;
    const int64_t *axes = ir_attr_ints(ctx->node, "axes", &na);
    int has_axes = ir_node_attr(ctx->node, "axes") != NULL;
    if (!has_axes) na = (size_t)r;
    if (n < 0 || na > (size_t)r || n != (int)na)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "CenterCropPad: 'shape' has %d entries for %zu axes", n, na);
    int64_t pads[2 * OX_MAX_RANK] = {0};
    int seen[OX_MAX_RANK] = {0};
    for (int k = 0; k < n; k++) {
        int64_t a = has_axes ? axes[k] : k;
        if (a < -r || a >= r || seen[a < 0 ? a + r : a])
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "CenterCropPad: axes[%d] = %lld is out of range or repeated for rank %d", k,
                                  (long long)a, r);
        if (a < 0) a += r;
        seen[a] = 1;
        if (shape[k] < 0)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "CenterCropPad: shape[%d] = %lld is negative", k,
                                  (long long)shape[k]);
        int64_t d = x->dims[a], s = shape[k];
        pads[a] = d >= s ? -((d - s) / 2) : (s - d) / 2;
        pads[a + r] = s - d - pads[a];
    }
    if (check_out_shape(ctx, x, y, pads) != 0) return -1;
    unsigned char zero[16] = {0};
    return pad_fill(ctx, x, y, pads, PAD_CONSTANT, zero, "");
}
