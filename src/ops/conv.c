/* Schemas of the convolution operators: Conv, ConvTranspose, the
 * quantized ConvInteger and QLinearConv, Col2Im, DeformConv and
 * CausalConvWithState. */
#include <string.h>

#include "core/checked.h"
#include "ops/op.h"
#include "ops/window.h"

extern const ox_op_table ox_ops_conv;

/* ---- helpers ---- */

/* Reads an INTS attribute that must have `want` entries (when present). */
static int ints_attr(ox_infer_ctx *c, const char *name, int want, const int64_t **vals) {
    size_t n = 0;
    *vals = ir_attr_ints(c->node, name, &n);
    if (*vals && (int)n != want)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "%s: attribute '%s' has %zu values, expected %d", c->node->op_type,
                             name, n, want);
    return 0;
}

static int parse_auto_pad(ox_infer_ctx *c, int *mode) {
    const char *s = ir_attr_string(c->node, "auto_pad", "NOTSET");
    if (!*s || !strcmp(s, "NOTSET"))
        *mode = 0;
    else if (!strcmp(s, "SAME_UPPER"))
        *mode = 1;
    else if (!strcmp(s, "SAME_LOWER"))
        *mode = 2;
    else if (!strcmp(s, "VALID"))
        *mode = 3;
    else
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: unknown auto_pad '%s'", c->node->op_type,
                             s);
    return 0;
}

/* ceil(a / b) for a >= 0, b > 0 without the a + b - 1 that overflows. */
static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* Dilated kernel extent (k - 1) * d + 1 on spatial axis i. */
static int window_extent(ox_infer_ctx *c, int64_t k, int64_t d, int i, int64_t *ek) {
    return ox_infer_mul(c, ONYX_INVALID_MODEL, k - 1, d, ek,
                        "the dilated kernel extent on spatial axis %d", i) ||
           ox_infer_add(c, ONYX_INVALID_MODEL, *ek, 1, ek,
                        "the dilated kernel extent on spatial axis %d", i);
}

int ox_infer_window(ox_infer_ctx *c, const int64_t *in, int r, const int64_t *kernel, int use_ceil,
                    int64_t *out) {
    const int64_t *strides, *dils, *pads;
    int mode;
    if (ints_attr(c, "strides", r, &strides) || ints_attr(c, "dilations", r, &dils) ||
        ints_attr(c, "pads", 2 * r, &pads) || parse_auto_pad(c, &mode))
        return -1;
    int ceil_mode = use_ceil ? (int)ir_attr_int(c->node, "ceil_mode", 0) : 0;
    for (int i = 0; i < r; i++) {
        int64_t s = strides ? strides[i] : 1, d = dils ? dils[i] : 1, k = kernel[i];
        int64_t pb = pads && mode == 0 ? pads[i] : 0, pe = pads && mode == 0 ? pads[i + r] : 0;
        if (s < 1 || d < 1)
            return ox_infer_fail(c, ONYX_INVALID_MODEL,
                                 "%s: strides and dilations must be positive", c->node->op_type);
        if (pb < 0 || pe < 0)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: pads must not be negative",
                                 c->node->op_type);
        if (k < 1) {
            if (k < 0 || in[i] < 0) {
                out[i] = -1;
                continue;
            }
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: kernel size must be positive",
                                 c->node->op_type);
        }
        if (in[i] < 0) {
            out[i] = -1;
            continue;
        }
        int64_t ek, span, o;
        if (window_extent(c, k, d, i, &ek)) return -1;
        if (mode == 1 || mode == 2) {
            out[i] = ceil_div(in[i], s);
            continue;
        }
        const onyx_code bad = ox_infer_bad_code(c);
        if (ox_infer_add(c, bad, in[i], pb, &span, "input size plus pads on spatial axis %d", i) ||
            ox_infer_add(c, bad, span, pe, &span, "input size plus pads on spatial axis %d", i))
            return -1;
        if (span < ek)
            return ox_infer_fail(
                c, bad,
                "%s: kernel extent %lld is larger than the padded input %lld on spatial axis %d",
                c->node->op_type, (long long)ek, (long long)span, i);
        span -= ek;
        if (ox_infer_add(c, bad, ceil_mode ? ceil_div(span, s) : span / s, 1, &o,
                         "output size on spatial axis %d", i))
            return -1;
        /* ceil mode drops a last window that would start in the end padding;
         * (o - 1) * s <= span + s - 1 could still pass INT64_MAX */
        int64_t start, lim = in[i] + pb; /* in[i] + pb <= span + ek: no overflow */
        if (ceil_mode && o > 1 && (!ox_mul_i64(o - 1, s, &start) || start >= lim)) o--;
        out[i] = o;
    }
    return 0;
}

/* Spatial rank of a conv-like op from X (input 0) and W (input 1) into
 * *r; -1 when neither rank is known. */
static int conv_rank(ox_infer_ctx *c, int *r) {
    const ir_type *x = ox_infer_in(c, 0), *w = ox_infer_in(c, 1);
    *r = -1;
    if (x->rank >= 0 && x->rank < 3)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: input X must have rank >= 3 (N, C, spatial...), got %d",
                             c->node->op_type, x->rank);
    if (w->rank >= 0 && x->rank >= 0 && w->rank != x->rank)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: weight W has rank %d but input X has rank %d", c->node->op_type,
                             w->rank, x->rank);
    if (w->rank >= 0 && w->rank < 3)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: weight W must have rank >= 3, got %d",
                             c->node->op_type, w->rank);
    if (x->rank >= 0)
        *r = x->rank - 2;
    else if (w->rank >= 0)
        *r = w->rank - 2;
    return 0;
}

/* Kernel spatial sizes from kernel_shape or W; -1 where unknown. */
static int conv_kernel(ox_infer_ctx *c, int r, int64_t *k) {
    const ir_type *w = ox_infer_in(c, 1);
    const int64_t *ks;
    if (ints_attr(c, "kernel_shape", r, &ks)) return -1;
    for (int i = 0; i < r; i++) {
        int64_t wk = w->rank >= 0 ? w->dims[i + 2] : -1;
        if (ks && wk >= 0 && ks[i] != wk)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: kernel_shape[%d] = %lld but W has %lld there",
                                 c->node->op_type, i, (long long)ks[i], (long long)wk);
        k[i] = ks ? ks[i] : wk;
    }
    return 0;
}

/* Shape of a forward convolution for X = input xi and W = input wi. */
static int infer_conv_shape(ox_infer_ctx *c, ox_dtype out_dtype) {
    const ir_type *x = ox_infer_in(c, 0), *w = ox_infer_in(c, 1);
    int r;
    if (conv_rank(c, &r)) return -1;
    if (r < 0) return ox_infer_set_output(c, 0, out_dtype, NULL, -1);
    int64_t group = ir_attr_int(c->node, "group", 1);
    if (group < 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: group must be >= 1", c->node->op_type);
    int64_t ch = x->rank >= 0 ? x->dims[1] : -1;
    int64_t m = w->rank >= 0 ? w->dims[0] : -1, wc = w->rank >= 0 ? w->dims[1] : -1;
    int64_t need = 0;
    int fits = ox_mul_i64(wc, group, &need); /* group is an attribute: any size */
    if (ch >= 0 && wc >= 0 && (!fits || ch != need))
        return ox_infer_fail(
            c, ox_infer_bad_code(c),
            "%s: input channels %lld do not match weight channels %lld * group %lld",
            c->node->op_type, (long long)ch, (long long)wc, (long long)group);
    if (m >= 0 && m % group != 0)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: %lld output channels are not divisible by group %lld",
                             c->node->op_type, (long long)m, (long long)group);
    int64_t k[OX_MAX_RANK], in[OX_MAX_RANK], out[OX_MAX_RANK + 2];
    if (conv_kernel(c, r, k)) return -1;
    for (int i = 0; i < r; i++) in[i] = x->rank >= 0 ? x->dims[i + 2] : -1;
    if (ox_infer_window(c, in, r, k, 0, out + 2)) return -1;
    out[0] = x->rank >= 0 ? x->dims[0] : -1;
    out[1] = m;
    return ox_infer_set_output(c, 0, out_dtype, out, r + 2);
}

static const ox_dtype FLOATS[] = {ONYX_FLOAT16, ONYX_FLOAT32, ONYX_FLOAT64, ONYX_BFLOAT16};
static const ox_dtype Q8[] = {ONYX_INT8, ONYX_UINT8};

/* ---- Conv ---- */

static int check_bias(ox_infer_ctx *c, int bi, int64_t m, const char *what) {
    const ir_type *b = ox_infer_in(c, bi);
    if (!b || b->rank < 0) return 0;
    if (b->rank != 1)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s must be 1-D, got rank %d",
                             c->node->op_type, what, b->rank);
    if (m >= 0 && b->dims[0] >= 0 && b->dims[0] != m)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: %s has %lld values but there are %lld output channels",
                             c->node->op_type, what, (long long)b->dims[0], (long long)m);
    return 0;
}

static int infer_conv(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "X") || ox_infer_need_tensor(c, 1, "W")) return -1;
    if (ox_infer_check_dtype(c, 0, "X", FLOATS, 4) || ox_infer_same_dtype(c, 0, 1, "X", "W"))
        return -1;
    if (ox_infer_in(c, 2) && ox_infer_same_dtype(c, 0, 2, "X", "B")) return -1;
    const ir_type *w = ox_infer_in(c, 1);
    if (check_bias(c, 2, w->rank >= 1 ? w->dims[0] : -1, "bias B")) return -1;
    ox_dtype dt = ox_infer_in(c, 0)->dtype != ONYX_UNDEFINED ? ox_infer_in(c, 0)->dtype : w->dtype;
    return infer_conv_shape(c, dt);
}

/* ---- ConvInteger ---- */

static int check_zero_point(ox_infer_ctx *c, int zi, int ti, const char *what, int64_t len) {
    const ir_type *z = ox_infer_in(c, zi), *t = ox_infer_in(c, ti);
    if (!z) return 0;
    if (z->dtype != ONYX_UNDEFINED && t && t->dtype != ONYX_UNDEFINED && z->dtype != t->dtype)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s has type %s but its tensor is %s",
                             c->node->op_type, what, ox_dtype_name(z->dtype),
                             ox_dtype_name(t->dtype));
    if (z->rank < 0) return 0;
    if (z->rank > 1)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s must be a scalar or 1-D",
                             c->node->op_type, what);
    if (z->rank == 1 && z->dims[0] >= 0 && z->dims[0] != 1 && (len < 0 || z->dims[0] != len))
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s has %lld values, expected 1%s",
                             c->node->op_type, what, (long long)z->dims[0],
                             len >= 0 ? " or one per output channel" : "");
    return 0;
}

static int infer_conv_integer(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "x") || ox_infer_need_tensor(c, 1, "w")) return -1;
    if (ox_infer_check_dtype(c, 0, "x", Q8, 2) || ox_infer_check_dtype(c, 1, "w", Q8, 2)) return -1;
    const ir_type *w = ox_infer_in(c, 1);
    int64_t m = w->rank >= 1 ? w->dims[0] : -1;
    if (check_zero_point(c, 2, 0, "x_zero_point", -1) || check_zero_point(c, 3, 1, "w_zero_point", m))
        return -1;
    return infer_conv_shape(c, ONYX_INT32);
}

/* ---- QLinearConv ---- */

static int check_scale(ox_infer_ctx *c, int i, const char *what, int64_t len) {
    const ir_type *t = ox_infer_in(c, i);
    if (t->dtype != ONYX_UNDEFINED && t->dtype != ONYX_FLOAT32)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s must be float32, got %s",
                             c->node->op_type, what, ox_dtype_name(t->dtype));
    if (t->rank > 1 || (t->rank == 1 && t->dims[0] >= 0 && t->dims[0] != 1 &&
                        (len < 0 || t->dims[0] != len)))
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s must be a scalar%s", c->node->op_type,
                             what, len >= 0 ? " or have one value per output channel" : "");
    return 0;
}

static int infer_qlinear_conv(ox_infer_ctx *c) {
    static const char *const names[8] = {"x", "x_scale", "x_zero_point", "w",
                                   "w_scale", "w_zero_point", "y_scale", "y_zero_point"};
    for (int i = 0; i < 8; i++)
        if (ox_infer_need_tensor(c, i, names[i])) return -1;
    /* inputs 0 and 3 are X and W; shape helpers expect them at 0 and 1 */
    const ir_type *w = ox_infer_in(c, 3);
    int64_t m = w->rank >= 1 ? w->dims[0] : -1;
    if (ox_infer_check_dtype(c, 0, "x", Q8, 2) || ox_infer_check_dtype(c, 3, "w", Q8, 2) ||
        ox_infer_check_dtype(c, 7, "y_zero_point", Q8, 2))
        return -1;
    if (check_scale(c, 1, "x_scale", -1) || check_scale(c, 4, "w_scale", m) ||
        check_scale(c, 6, "y_scale", -1))
        return -1;
    if (check_zero_point(c, 2, 0, "x_zero_point", -1) || check_zero_point(c, 5, 3, "w_zero_point", m) ||
        check_zero_point(c, 7, 7, "y_zero_point", -1))
        return -1;
    const ir_type *b = ox_infer_in(c, 8);
    if (b && b->dtype != ONYX_UNDEFINED && b->dtype != ONYX_INT32)
        return ox_infer_fail(c, ox_infer_bad_code(c), "QLinearConv: bias B must be int32, got %s",
                             ox_dtype_name(b->dtype));
    if (check_bias(c, 8, m, "bias B")) return -1;
    /* the shared shape code reads X and W as inputs 0 and 1 */
    const ir_type *view[16];
    int n = c->n_inputs < 16 ? c->n_inputs : 16;
    for (int i = 0; i < n; i++) view[i] = c->inputs[i];
    view[1] = c->inputs[3];
    const ir_type *const *orig = c->inputs;
    c->inputs = view;
    int rc = infer_conv_shape(c, ox_infer_in(c, 7)->dtype);
    c->inputs = orig;
    return rc;
}

/* ---- ConvTranspose ---- */

/* s * (in - 1) + output_padding + (k - 1) * d + 1 - pads on spatial axis i,
 * every step checked: strides or dilations of INT64_MAX are refused. */
static int conv_transpose_size(ox_infer_ctx *c, int64_t in, int64_t s, int64_t op, int64_t k,
                               int64_t d, int64_t pb, int64_t pe, int i, int64_t *out) {
    const onyx_code bad = ox_infer_bad_code(c);
    int64_t o, ek;
    if (ox_infer_mul(c, bad, s, in - 1, &o, "stride %lld times (input size - 1) on spatial axis %d",
                     (long long)s, i) ||
        ox_infer_add(c, bad, o, op, &o, "the output size (plus output_padding) on spatial axis %d", i) ||
        window_extent(c, k, d, i, &ek) ||
        ox_infer_add(c, bad, o, ek, &o, "the output size (plus kernel extent) on spatial axis %d", i) ||
        ox_infer_sub(c, bad, o, pb, &o, "the output size (minus pads) on spatial axis %d", i) ||
        ox_infer_sub(c, bad, o, pe, &o, "the output size (minus pads) on spatial axis %d", i))
        return -1;
    if (o < 0)
        return ox_infer_fail(c, bad, "ConvTranspose: output size on spatial axis %d is negative", i);
    *out = o;
    return 0;
}

static int infer_conv_transpose(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "X") || ox_infer_need_tensor(c, 1, "W")) return -1;
    if (ox_infer_check_dtype(c, 0, "X", FLOATS, 4) || ox_infer_same_dtype(c, 0, 1, "X", "W"))
        return -1;
    if (ox_infer_in(c, 2) && ox_infer_same_dtype(c, 0, 2, "X", "B")) return -1;
    const ir_type *x = ox_infer_in(c, 0), *w = ox_infer_in(c, 1);
    ox_dtype dt = x->dtype != ONYX_UNDEFINED ? x->dtype : w->dtype;
    int r;
    if (conv_rank(c, &r)) return -1;
    int64_t group = ir_attr_int(c->node, "group", 1);
    if (group < 1) return ox_infer_fail(c, ONYX_INVALID_MODEL, "ConvTranspose: group must be >= 1");
    int64_t ch = x->rank >= 0 ? x->dims[1] : -1, wc = w->rank >= 0 ? w->dims[0] : -1;
    if (ch >= 0 && wc >= 0 && ch != wc)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "ConvTranspose: input channels %lld do not match weight's %lld",
                             (long long)ch, (long long)wc);
    if (wc >= 0 && wc % group != 0)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "ConvTranspose: %lld input channels are not divisible by group %lld",
                             (long long)wc, (long long)group);
    int64_t m = -1;
    if (w->rank >= 0 && w->dims[1] >= 0 &&
        ox_infer_mul(c, ONYX_INVALID_MODEL, w->dims[1], group, &m, "output channels (W dim 1 times group)"))
        return -1;
    if (check_bias(c, 2, m, "bias B")) return -1;
    if (r < 0) return ox_infer_set_output(c, 0, dt, NULL, -1);
    int64_t k[OX_MAX_RANK], out[OX_MAX_RANK + 2];
    if (conv_kernel(c, r, k)) return -1;
    const int64_t *strides, *dils, *pads, *opad, *oshape;
    int mode;
    if (ints_attr(c, "strides", r, &strides) || ints_attr(c, "dilations", r, &dils) ||
        ints_attr(c, "pads", 2 * r, &pads) || ints_attr(c, "output_padding", r, &opad) ||
        parse_auto_pad(c, &mode))
        return -1;
    size_t nos = 0;
    oshape = ir_attr_ints(c->node, "output_shape", &nos);
    if (oshape && (int)nos != r && (int)nos != r + 2)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "ConvTranspose: output_shape has %zu values, expected %d",
                             nos, r);
    for (int i = 0; i < r; i++) {
        int64_t s = strides ? strides[i] : 1, d = dils ? dils[i] : 1;
        if (s < 1 || d < 1)
            return ox_infer_fail(c, ONYX_INVALID_MODEL,
                                 "ConvTranspose: strides and dilations must be positive");
        int64_t in = x->rank >= 0 ? x->dims[i + 2] : -1;
        if (oshape) {
            out[i + 2] = oshape[nos - (size_t)r + (size_t)i];
            if (out[i + 2] < 0)
                return ox_infer_fail(c, ONYX_INVALID_MODEL, "ConvTranspose: output_shape[%d] = %lld is negative",
                                     i, (long long)out[i + 2]);
            continue;
        }
        if (in < 0 || k[i] < 0) {
            out[i + 2] = -1;
            continue;
        }
        if (mode == 1 || mode == 2) {
            if (ox_infer_mul(c, ox_infer_bad_code(c), in, s, &out[i + 2],
                             "input size times stride on spatial axis %d", i))
                return -1;
            continue;
        }
        int64_t pb = pads && mode == 0 ? pads[i] : 0, pe = pads && mode == 0 ? pads[i + r] : 0;
        int64_t op = opad ? opad[i] : 0;
        if (pb < 0 || pe < 0 || op < 0)
            return ox_infer_fail(c, ONYX_INVALID_MODEL,
                                 "ConvTranspose: pads and output_padding must not be negative");
        if (conv_transpose_size(c, in, s, op, k[i], d, pb, pe, i, &out[i + 2])) return -1;
    }
    out[0] = x->rank >= 0 ? x->dims[0] : -1;
    out[1] = m;
    return ox_infer_set_output(c, 0, dt, out, r + 2);
}

/* ---- Col2Im ---- */

static int infer_col2im(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "input") || ox_infer_need_tensor(c, 1, "image_shape") ||
        ox_infer_need_tensor(c, 2, "block_shape"))
        return -1;
    const ir_type *x = ox_infer_in(c, 0), *is = ox_infer_in(c, 1), *bs = ox_infer_in(c, 2);
    for (int i = 1; i <= 2; i++) {
        const ir_type *t = ox_infer_in(c, i);
        const char *what = i == 1 ? "image_shape" : "block_shape";
        if (t->dtype != ONYX_UNDEFINED && t->dtype != ONYX_INT64)
            return ox_infer_fail(c, ox_infer_bad_code(c), "Col2Im: %s must be int64, got %s", what,
                                 ox_dtype_name(t->dtype));
        if (t->rank >= 0 && t->rank != 1)
            return ox_infer_fail(c, ox_infer_bad_code(c), "Col2Im: %s must be 1-D, got rank %d",
                                 what, t->rank);
    }
    if (x->rank >= 0 && x->rank != 3)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "Col2Im: input must be 3-D [N, C * prod(block_shape), L], got rank %d",
                             x->rank);
    int64_t img[OX_MAX_RANK], blk[OX_MAX_RANK];
    int ni = 0, nb = 0, ki = 0, kb = 0;
    if (ox_infer_int_list(c, 1, img, OX_MAX_RANK, &ni, &ki) ||
        ox_infer_int_list(c, 2, blk, OX_MAX_RANK, &nb, &kb))
        return -1;
    int64_t r = ki ? ni : is->rank == 1 ? is->dims[0] : bs->rank == 1 ? bs->dims[0] : -1;
    if (kb && r >= 0 && nb != r)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "Col2Im: image_shape has %lld values but block_shape %d", (long long)r, nb);
    if (r < 0) return ox_infer_set_output(c, 0, x->dtype, NULL, -1);
    if (r < 1 || r > OX_MAX_RANK - 2)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "Col2Im: image_shape must have 1 to %d values, got %lld", OX_MAX_RANK - 2,
                             (long long)r);
    const int64_t *strides, *dils, *pads;
    if (ints_attr(c, "strides", (int)r, &strides) || ints_attr(c, "dilations", (int)r, &dils) ||
        ints_attr(c, "pads", 2 * (int)r, &pads))
        return -1;
    int64_t out[OX_MAX_RANK];
    out[0] = x->rank == 3 ? x->dims[0] : -1;
    out[1] = -1;
    int64_t ksz = 1, blocks = 1;
    for (int i = 0; i < r; i++) {
        out[i + 2] = ki ? img[i] : -1;
        if (ki && img[i] < 0)
            return ox_infer_fail(c, ox_infer_bad_code(c), "Col2Im: image_shape[%d] is negative", i);
        if (kb && blk[i] < 1)
            return ox_infer_fail(c, ox_infer_bad_code(c), "Col2Im: block_shape[%d] must be >= 1", i);
        int64_t s = strides ? strides[i] : 1, d = dils ? dils[i] : 1;
        int64_t pb = pads ? pads[i] : 0, pe = pads ? pads[i + r] : 0;
        if (s < 1 || d < 1 || pb < 0 || pe < 0)
            return ox_infer_fail(c, ONYX_INVALID_MODEL,
                                 "Col2Im: strides and dilations must be positive, pads not negative");
        const onyx_code bad = ox_infer_bad_code(c);
        if (ki && kb) {
            int64_t span, ek;
            if (window_extent(c, blk[i], d, i, &ek) ||
                ox_infer_add(c, bad, img[i], pb, &span, "image size plus pads on axis %d", i) ||
                ox_infer_add(c, bad, span, pe, &span, "image size plus pads on axis %d", i))
                return -1;
            if (span < ek)
                return ox_infer_fail(c, bad,
                                     "Col2Im: the dilated block does not fit the padded image on axis %d", i);
            if (ox_infer_mul(c, bad, blocks, (span - ek) / s + 1, &blocks, "the block count (at axis %d)", i))
                return -1;
        }
        if (kb && ox_infer_mul(c, bad, ksz, blk[i], &ksz, "prod(block_shape) (at axis %d)", i)) return -1;
    }
    if (kb && x->rank == 3 && x->dims[1] >= 0) {
        if (x->dims[1] % ksz != 0)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "Col2Im: input dimension 1 (%lld) is not a multiple of prod(block_shape) = %lld",
                                 (long long)x->dims[1], (long long)ksz);
        out[1] = x->dims[1] / ksz;
    }
    if (ki && kb && x->rank == 3 && x->dims[2] >= 0 && x->dims[2] != blocks)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "Col2Im: input has %lld blocks (dimension 2) but the geometry gives %lld",
                             (long long)x->dims[2], (long long)blocks);
    return ox_infer_set_output(c, 0, x->dtype, out, (int)r + 2);
}

/* ---- CausalConvWithState ---- */

static int infer_causal_conv(ox_infer_ctx *c) {
    static const ox_dtype TYPES[] = {ONYX_FLOAT32, ONYX_FLOAT16, ONYX_BFLOAT16};
    const char *op = "CausalConvWithState";
    if (ox_infer_need_tensor(c, 0, "input") || ox_infer_need_tensor(c, 1, "weight") ||
        ox_infer_check_dtype(c, 0, "input", TYPES, 3) || ox_infer_same_dtype(c, 0, 1, "input", "weight"))
        return -1;
    if (ox_infer_in(c, 2) && ox_infer_same_dtype(c, 0, 2, "input", "bias")) return -1;
    if (ox_infer_in(c, 3) && ox_infer_same_dtype(c, 0, 3, "input", "past_state")) return -1;
    const char *act = ir_attr_string(c->node, "activation", "none");
    if (strcmp(act, "none") && strcmp(act, "silu") && strcmp(act, "swish"))
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "%s: activation '%s' is not one of 'none', 'silu', 'swish'", op, act);
    const ir_type *x = ox_infer_in(c, 0), *w = ox_infer_in(c, 1), *p = ox_infer_in(c, 3);
    if (x->rank >= 0 && x->rank != 3)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: input must be 3-D (batch, channels, length), got rank %d", op, x->rank);
    if (w->rank >= 0 && w->rank != 3)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: weight must be 3-D (channels, 1, k), got rank %d", op, w->rank);
    int64_t n = x->rank == 3 ? x->dims[0] : -1, ch = x->rank == 3 ? x->dims[1] : -1;
    int64_t k = w->rank == 3 ? w->dims[2] : -1;
    if (w->rank == 3) {
        if (ch >= 0 && w->dims[0] >= 0 && w->dims[0] != ch)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: weight has %lld channels but the input %lld", op,
                                 (long long)w->dims[0], (long long)ch);
        if (w->dims[1] >= 0 && w->dims[1] != 1)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: weight's second dimension must be 1 (depthwise), got %lld", op,
                                 (long long)w->dims[1]);
        if (k == 0)
            return ox_infer_fail(c, ox_infer_bad_code(c), "%s: kernel size k must be >= 1", op);
        if (ch < 0) ch = w->dims[0];
    }
    if (check_bias(c, 2, ch, "bias")) return -1;
    int64_t sdims[3] = {n, ch, k >= 1 ? k - 1 : -1};
    if (p && p->rank >= 0) {
        if (p->rank != 3)
            return ox_infer_fail(c, ox_infer_bad_code(c), "%s: past_state must be 3-D, got rank %d", op,
                                 p->rank);
        for (int i = 0; i < 3; i++) {
            if (sdims[i] >= 0 && p->dims[i] >= 0 && p->dims[i] != sdims[i])
                return ox_infer_fail(c, ox_infer_bad_code(c),
                                     "%s: past_state dimension %d is %lld, expected %lld "
                                     "(batch, channels, k - 1)",
                                     op, i, (long long)p->dims[i], (long long)sdims[i]);
            if (sdims[i] < 0) sdims[i] = p->dims[i];
        }
    }
    ox_dtype dt = x->dtype != ONYX_UNDEFINED ? x->dtype : w->dtype;
    int64_t ydims[3] = {sdims[0], sdims[1], x->rank == 3 ? x->dims[2] : -1};
    if (ox_infer_set_output(c, 0, dt, ydims, 3)) return -1;
    return ox_infer_set_output(c, 1, dt, sdims, 3);
}

/* ---- DeformConv ---- */

static int infer_deform_conv(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "X") || ox_infer_need_tensor(c, 1, "W") ||
        ox_infer_need_tensor(c, 2, "offset"))
        return -1;
    /* bfloat16 arrived with DeformConv-22; accepted at 19 too */
    if (ox_infer_check_dtype(c, 0, "X", FLOATS, 4) || ox_infer_same_dtype(c, 0, 1, "X", "W") ||
        ox_infer_same_dtype(c, 0, 2, "X", "offset"))
        return -1;
    if (ox_infer_in(c, 3) && ox_infer_same_dtype(c, 0, 3, "X", "B")) return -1;
    if (ox_infer_in(c, 4) && ox_infer_same_dtype(c, 0, 4, "X", "mask")) return -1;
    int64_t og = ir_attr_int(c->node, "offset_group", 1);
    const ir_type *x = ox_infer_in(c, 0), *w = ox_infer_in(c, 1), *o = ox_infer_in(c, 2);
    if (og < 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "DeformConv: offset_group must be >= 1");
    if (x->rank >= 0 && x->dims[1] >= 0 && x->dims[1] % og != 0)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "DeformConv: %lld input channels are not divisible by offset_group %lld",
                             (long long)x->dims[1], (long long)og);
    if (o->rank >= 0 && x->rank >= 0 && o->rank != x->rank)
        return ox_infer_fail(c, ox_infer_bad_code(c), "DeformConv: offset has rank %d but X has rank %d",
                             o->rank, x->rank);
    if (check_bias(c, 3, w->rank >= 1 ? w->dims[0] : -1, "bias B")) return -1;
    ox_dtype dt = x->dtype != ONYX_UNDEFINED ? x->dtype : w->dtype;
    return infer_conv_shape(c, dt);
}

static const ox_op_schema OPS[] = {
    {"", "Conv", 1, 22, 2, 3, 1, 1, infer_conv},
    {"", "ConvTranspose", 1, 22, 2, 3, 1, 1, infer_conv_transpose},
    {"", "ConvInteger", 10, 17, 2, 4, 1, 1, infer_conv_integer},
    {"", "QLinearConv", 10, 17, 8, 9, 1, 1, infer_qlinear_conv},
    {"", "Col2Im", 18, 18, 3, 3, 1, 1, infer_col2im},
    {"", "DeformConv", 19, 22, 3, 5, 1, 1, infer_deform_conv},
    {"", "CausalConvWithState", 27, 27, 2, 4, 1, 2, infer_causal_conv},
};

const ox_op_table ox_ops_conv = {OPS, sizeof OPS / sizeof OPS[0]};
