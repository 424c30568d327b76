/* Schemas of the image operators: Resize, Upsample, GridSample,
 * AffineGrid, RoiAlign, MaxRoiPool and NonMaxSuppression. Resize output
 * sizes come from the scales or sizes inputs, so they resolve statically
 * only when those are constants. */
#include <math.h>
#include <string.h>

#include "ops/op.h"

extern const ox_op_table ox_ops_image;

/* A tensor input must be a tensor of a float type (UNDEFINED passes:
 * static facts may lack the element type). */
static int check_float_input(ox_infer_ctx *c, int i, const char *what) {
    const ir_type *t = ox_infer_in(c, i);
    if (!t) return 0;
    if (t->kind != OX_KIND_TENSOR)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: input '%s' must be a tensor",
                             c->node->op_type, what);
    if (t->dtype != ONYX_UNDEFINED && !ox_dtype_is_float(t->dtype))
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: input '%s' must be a float tensor, got %s", c->node->op_type,
                             what, ox_dtype_name(t->dtype));
    return 0;
}

/* Number of elements of an optional 1-D input: -1 when unknown. */
static int64_t input_len(const ox_infer_ctx *c, int i) {
    const ox_tensor *v = ox_infer_in_value(c, i);
    if (v) return ox_tensor_numel(v);
    const ir_type *t = ox_infer_in(c, i);
    if (!t) return 0;
    int64_t n = ox_infer_numel(t->dims, t->rank);
    return n == OX_NUMEL_OVERFLOW ? -1 : n; /* no such tensor can be given */
}

/* ================================================================ */
/* Resize / Upsample */

static int check_string_attr(ox_infer_ctx *c, const char *name, const char *dflt, const char *const *allowed,
                             int n) {
    const char *v = ir_attr_string(c->node, name, dflt);
    for (int i = 0; i < n; i++)
        if (strcmp(v, allowed[i]) == 0) return 0;
    return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: unsupported %s '%s'", c->node->op_type, name,
                         v);
}

static int check_resize_attrs(ox_infer_ctx *c, int full) {
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    static const char *const old_modes[] = {"nearest", "linear", "bilinear"};
    /* half_pixel_symmetric arrived with Resize-19 */
    static const char *const ctms[] = {"half_pixel",           "pytorch_half_pixel",
                                       "align_corners",        "asymmetric",
                                       "tf_half_pixel_for_nn", "tf_crop_and_resize",
                                       "half_pixel_symmetric"};
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    static const char *const policies[] = {"stretch", "not_larger", "not_smaller"};
    if (!full) return check_string_attr(c, "mode", "nearest", old_modes, 3);
    int since = ox_op_since_version(c->node->domain, c->node->op_type, c->node->opset);
    if (check_string_attr(c, "mode", "nearest", modes, 3) ||
        check_string_attr(c, "coordinate_transformation_mode", "half_pixel", ctms,
                          since >= 19 ? 7 : 6) ||
        check_string_attr(c, "nearest_mode", "round_prefer_floor", nms, 4))
        return -1;
    if (since >= 18 && check_string_attr(c, "keep_aspect_ratio_policy", "stretch", policies, 3))
        return -1;
    int64_t ex = ir_attr_int(c->node, "exclude_outside", 0);
    if (ex != 0 && ex != 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: exclude_outside must be 0 or 1",
                             c->node->op_type);
    int64_t aa = ir_attr_int(c->node, "antialias", 0);
    if (aa != 0 && aa != 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: antialias must be 0 or 1",
                             c->node->op_type);
    return 0;
}

/* Which axes scales, sizes and roi refer to (Resize-18's 'axes'
 * attribute): ax[0..*n) normalised against rank. Without the attribute
 * every axis, in order. *n is -1 when the rank is not known yet. */
static int resize_axes(ox_infer_ctx *c, int use_attr, int rank, int *ax, int *n) {
    size_t na = 0;
    const int64_t *a = use_attr ? ir_attr_ints(c->node, "axes", &na) : NULL;
    if (!a) {
        *n = rank;
        for (int i = 0; i < rank; i++) ax[i] = i;
        return 0;
    }
    if (na > OX_MAX_RANK)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: axes has %zu values, more than the maximum rank",
                             c->node->op_type, na);
    *n = (int)na;
    if (rank < 0) return 0;
    for (size_t i = 0; i < na; i++) {
        if (a[i] < -rank || a[i] >= rank)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: axes[%zu] = %lld is out of range for rank %d",
                                 c->node->op_type, i, (long long)a[i], rank);
        ax[i] = (int)(a[i] < 0 ? a[i] + rank : a[i]);
        for (size_t k = 0; k < i; k++)
            if (ax[k] == ax[i])
                return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: axis %d is listed twice in axes",
                                     c->node->op_type, ax[i]);
    }
    return 0;
}

/* Output sizes from scales: floor(in * scale), computed in double from the
 * float scale like the reference does. sc[i] applies to axis ax[i]; out
 * holds the input dims on entry. */
static int dims_from_scales(ox_infer_ctx *c, const ir_type *x, const int *ax, const double *sc,
                            int n, int min_one, int64_t *out) {
    for (int i = 0; i < n; i++) {
        if (!(sc[i] > 0) || !isfinite(sc[i]))
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: scales must be positive, got %g on axis %d", c->node->op_type,
                                 sc[i], ax[i]);
        if (min_one && sc[i] < 1)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: scales must be >= 1, got %g on axis %d", c->node->op_type,
                                 sc[i], ax[i]);
        int64_t in = x && x->rank >= 0 ? x->dims[ax[i]] : -1;
        if (in < 0) {
            out[ax[i]] = -1;
            continue;
        }
        double o = floor((double)in * sc[i]);
        if (o > 4.0e18)
            return ox_infer_fail(c, ox_infer_bad_code(c), "%s: output size on axis %d is too large",
                                 c->node->op_type, ax[i]);
        out[ax[i]] = (int64_t)o;
    }
    return 0;
}

static int read_scales_value(ox_infer_ctx *c, const ox_tensor *v, double *sc, int *n) {
    if (!ox_dtype_is_float(v->dtype))
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: scales must be a float tensor, got %s",
                             c->node->op_type, ox_dtype_name(v->dtype));
    if (v->rank > 1)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: scales must be 1-D, got rank %d",
                             c->node->op_type, v->rank);
    int64_t cnt = ox_tensor_numel(v);
    if (cnt > OX_MAX_RANK)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: scales has %lld values, more than the maximum rank",
                             c->node->op_type, (long long)cnt);
    for (int64_t i = 0; i < cnt; i++)
        sc[i] = ox_get_f64(v->data, v->dtype, (size_t)i);
    *n = (int)cnt;
    return 0;
}

/* Output sizes from Resize's sizes input (sz[i] for axis ax[i]) under
 * keep_aspect_ratio_policy: "stretch" takes them as they are; the other
 * two scale every listed axis by the smallest ("not_larger") or largest
 * ("not_smaller") ratio sizes / input, rounding half up. out holds the
 * input dims on entry. */
static int dims_from_sizes(ox_infer_ctx *c, const ir_type *x, const int *ax, const int64_t *sz,
                           int n, int64_t *out) {
    const char *policy = ir_attr_string(c->node, "keep_aspect_ratio_policy", "stretch");
    int stretch = ox_op_since_version(c->node->domain, c->node->op_type, c->node->opset) < 18 ||
                  strcmp(policy, "stretch") == 0;
    for (int i = 0; i < n; i++) {
        int64_t in = x && x->rank >= 0 ? x->dims[ax[i]] : -1;
        if (sz[i] < 0)
            return ox_infer_fail(c, ox_infer_bad_code(c), "%s: sizes must be >= 0, got %lld on axis %d",
                                 c->node->op_type, (long long)sz[i], ax[i]);
        if (sz[i] > 0 && in == 0)
            return ox_infer_fail(c, ox_infer_bad_code(c), "%s: cannot resize empty axis %d to size %lld",
                                 c->node->op_type, ax[i], (long long)sz[i]);
        if (stretch) out[ax[i]] = sz[i];
    }
    if (stretch) return 0;
    int larger = strcmp(policy, "not_smaller") == 0;
    double scale = 0.0;
    for (int i = 0; i < n; i++) {
        int64_t in = x && x->rank >= 0 ? x->dims[ax[i]] : -1;
        if (in < 0) {
            for (int k = 0; k < n; k++) out[ax[k]] = -1;
            return 0;
        }
        if (in == 0)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: keep_aspect_ratio_policy '%s' cannot scale empty axis %d",
                                 c->node->op_type, policy, ax[i]);
        double r = (double)sz[i] / (double)in;
        if (i == 0 || (larger ? r > scale : r < scale)) scale = r;
    }
    for (int i = 0; i < n; i++) {
        double o = floor(scale * (double)x->dims[ax[i]] + 0.5);
        if (o > 4.0e18)
            return ox_infer_fail(c, ox_infer_bad_code(c), "%s: output size on axis %d is too large",
                                 c->node->op_type, ax[i]);
        out[ax[i]] = (int64_t)o;
    }
    return 0;
}

/* Shared by Resize (all versions) and Upsample. `scales_in` is the input
 * index of scales (-1: from the attribute), `sizes_in` that of sizes (-1:
 * none), `roi_in` that of roi (-1: none); `use_axes` reads Resize-18's
 * axes attribute. */
static int infer_resize_common(ox_infer_ctx *c, int scales_in, int sizes_in, int roi_in, int min_one,
                               int use_axes) {
    const ir_type *x = ox_infer_in(c, 0);
    if (!x)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: input X is required", c->node->op_type);
    if (x->kind != OX_KIND_TENSOR)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: input X must be a tensor",
                             c->node->op_type);
    ox_dtype dt = x->dtype;
    int rank = x->rank;
    if (rank == 0)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: input X must have rank >= 1",
                             c->node->op_type);
    if (roi_in >= 0 && check_float_input(c, roi_in, "roi")) return -1;
    if (scales_in >= 0 && check_float_input(c, scales_in, "scales")) return -1;
    if (sizes_in >= 0) {
        const ir_type *s = ox_infer_in(c, sizes_in);
        if (s && s->dtype != ONYX_UNDEFINED && s->dtype != ONYX_INT64)
            return ox_infer_fail(c, ox_infer_bad_code(c), "%s: sizes must be int64, got %s",
                                 c->node->op_type, ox_dtype_name(s->dtype));
    }
    int64_t out[OX_MAX_RANK];
    double sc[OX_MAX_RANK];
    int ax[OX_MAX_RANK], nax = 0, nsc = 0;
    if (scales_in < 0) {
        size_t n = 0;
        const float *f = ir_attr_floats(c->node, "scales", &n);
        if (!f || n == 0)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: attribute 'scales' is required",
                                 c->node->op_type);
        if (n > OX_MAX_RANK)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: too many scales", c->node->op_type);
        for (size_t i = 0; i < n; i++)
            sc[i] = f[i];
        nsc = (int)n;
        if (rank < 0) rank = nsc;
        if (nsc != rank)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: scales has %d values but the input has rank %d",
                                 c->node->op_type, nsc, rank);
        if (resize_axes(c, 0, rank, ax, &nax)) return -1;
        for (int i = 0; i < rank; i++) out[i] = x->rank >= 0 ? x->dims[i] : -1;
        if (dims_from_scales(c, x, ax, sc, nsc, min_one, out)) return -1;
        return ox_infer_set_output(c, 0, dt, out, rank);
    }
    int64_t len_scales = input_len(c, scales_in);
    int64_t len_sizes = sizes_in >= 0 ? input_len(c, sizes_in) : 0;
    if (len_scales > 0 && len_sizes > 0)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: only one of scales and sizes may be given", c->node->op_type);
    if (len_scales == 0 && len_sizes == 0)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: one of scales and sizes must be given",
                             c->node->op_type);
    if (resize_axes(c, use_axes, rank, ax, &nax)) return -1;
    if (rank < 0 && nax < 0) {
        /* without axes, scales or sizes cover every axis */
        int64_t n = len_scales > 0 ? len_scales : len_sizes;
        if (n > OX_MAX_RANK)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: scales or sizes has more values than the maximum rank",
                                 c->node->op_type);
        if (n > 0) {
            rank = (int)n;
            if (resize_axes(c, use_axes, rank, ax, &nax)) return -1;
        }
    }
    int64_t given = len_scales > 0 ? len_scales : len_sizes;
    if (nax >= 0 && given > 0 && given != nax)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s has %lld values but %s %d",
                             c->node->op_type, len_scales > 0 ? "scales" : "sizes", (long long)given,
                             nax == rank && !ir_node_attr(c->node, "axes") ? "the input has rank"
                                                                            : "axes lists",
                             nax);
    if (rank < 0) return ox_infer_set_output(c, 0, dt, NULL, -1);
    if (roi_in >= 0 && c->runtime) {
        const char *ctm = ir_attr_string(c->node, "coordinate_transformation_mode", "half_pixel");
        int64_t nr = input_len(c, roi_in);
        if (strcmp(ctm, "tf_crop_and_resize") == 0 && nr != 2 * (int64_t)nax)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: roi has %lld values, expected %d (2 per resized axis)",
                                 c->node->op_type, (long long)nr, 2 * nax);
    }
    for (int i = 0; i < rank; i++) out[i] = x->rank >= 0 ? x->dims[i] : -1;
    const ox_tensor *sv = ox_infer_in_value(c, scales_in);
    if (len_scales > 0 && sv) {
        if (read_scales_value(c, sv, sc, &nsc)) return -1;
        if (dims_from_scales(c, x, ax, sc, nsc, min_one, out)) return -1;
        return ox_infer_set_output(c, 0, dt, out, rank);
    }
    const ox_tensor *zv = sizes_in >= 0 ? ox_infer_in_value(c, sizes_in) : NULL;
    if (len_sizes > 0 && zv) {
        int64_t vals[OX_MAX_RANK];
        int cnt = 0, known = 0;
        if (ox_infer_int_list(c, sizes_in, vals, OX_MAX_RANK, &cnt, &known)) return -1;
        if (known) {
            if (dims_from_sizes(c, x, ax, vals, cnt, out)) return -1;
            return ox_infer_set_output(c, 0, dt, out, rank);
        }
    }
    if (c->runtime)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: scales or sizes value is not available",
                             c->node->op_type);
    /* resized axes stay unknown until the values are; the others keep theirs */
    for (int i = 0; i < nax; i++) out[ax[i]] = -1;
    return ox_infer_set_output(c, 0, dt, out, rank);
}

static int infer_resize(ox_infer_ctx *c) {
    int op = c->node->opset;
    if (op < 11) {
        if (check_resize_attrs(c, 0)) return -1;
        if (!ox_infer_in(c, 1))
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Resize: input scales is required");
        return infer_resize_common(c, 1, -1, -1, 0, 0);
    }
    if (check_resize_attrs(c, 1)) return -1;
    int since = ox_op_since_version(c->node->domain, c->node->op_type, op);
    return infer_resize_common(c, 2, 3, 1, 0, since >= 18);
}

static int infer_upsample(ox_infer_ctx *c) {
    if (check_resize_attrs(c, 0)) return -1;
    if (c->node->opset < 9) return infer_resize_common(c, -1, -1, -1, 1, 0);
    if (!ox_infer_in(c, 1))
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Upsample: input scales is required");
    return infer_resize_common(c, 1, -1, -1, 1, 0);
}

/* ================================================================ */
/* GridSample */

static int infer_gridsample(ox_infer_ctx *c) {
    /* GridSample-20 renamed bilinear / bicubic to linear / cubic and went
     * N-D; 16 is 2-D only */
    static const char *const modes16[] = {"bilinear", "nearest", "bicubic"};
    static const char *const modes20[] = {"linear", "nearest", "cubic"};
    static const char *const pads[] = {"zeros", "border", "reflection"};
    int since = ox_op_since_version(c->node->domain, c->node->op_type, c->node->opset);
    int nd = since >= 20;
    if (check_string_attr(c, "mode", nd ? "linear" : "bilinear", nd ? modes20 : modes16, 3) ||
        check_string_attr(c, "padding_mode", "zeros", pads, 3))
        return -1;
    int64_t ac = ir_attr_int(c->node, "align_corners", 0);
    if (ac != 0 && ac != 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "GridSample: align_corners must be 0 or 1");
    const ir_type *x = ox_infer_in(c, 0), *g = ox_infer_in(c, 1);
    if (!x || !g) return ox_infer_fail(c, ONYX_INVALID_MODEL, "GridSample: inputs X and grid are required");
    if (check_float_input(c, 0, "X") || check_float_input(c, 1, "grid")) return -1;
    if (!nd) {
        if (x->rank >= 0 && x->rank != 4)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "GridSample: X must be 4-D (N, C, H, W), got rank %d", x->rank);
        if (g->rank >= 0 && g->rank != 4)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "GridSample: grid must be 4-D (N, H_out, W_out, 2), got rank %d",
                                 g->rank);
    }
    if (x->rank >= 0 && x->rank < 3)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "GridSample: X must have rank >= 3 (N, C, D1, ...), got %d", x->rank);
    if (x->rank >= 0 && g->rank >= 0 && g->rank != x->rank)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "GridSample: grid has rank %d but X has rank %d; they must match",
                             g->rank, x->rank);
    int rank = x->rank >= 0 ? x->rank : g->rank;
    if (rank < 0) return ox_infer_set_output(c, 0, x->dtype, NULL, -1);
    if (g->rank >= 0 && g->dims[rank - 1] >= 0 && g->dims[rank - 1] != rank - 2)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "GridSample: grid's last dimension must be %d (one per spatial axis), got %lld",
                             rank - 2, (long long)g->dims[rank - 1]);
    int64_t xn = x->rank >= 0 ? x->dims[0] : -1, gn = g->rank >= 0 ? g->dims[0] : -1;
    if (xn >= 0 && gn >= 0 && xn != gn)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "GridSample: batch of X (%lld) and grid (%lld) differ", (long long)xn,
                             (long long)gn);
    int64_t out[OX_MAX_RANK];
    out[0] = xn >= 0 ? xn : gn;
    out[1] = x->rank >= 0 ? x->dims[1] : -1;
    for (int d = 2; d < rank; d++) out[d] = g->rank >= 0 ? g->dims[d - 1] : -1;
    return ox_infer_set_output(c, 0, x->dtype, out, rank);
}

/* ================================================================ */
/* AffineGrid */

static int infer_affine_grid(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "theta") || ox_infer_need_tensor(c, 1, "size") ||
        ox_infer_check_float(c, 0, "theta", 1))
        return -1;
    int64_t ac = ir_attr_int(c->node, "align_corners", 0);
    if (ac != 0 && ac != 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "AffineGrid: align_corners must be 0 or 1");
    const ir_type *th = ox_infer_in(c, 0), *sz = ox_infer_in(c, 1);
    if (sz->dtype != ONYX_UNDEFINED && sz->dtype != ONYX_INT64)
        return ox_infer_fail(c, ox_infer_bad_code(c), "AffineGrid: size must be int64, got %s",
                             ox_dtype_name(sz->dtype));
    if (th->rank >= 0 && th->rank != 3)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "AffineGrid: theta must be 3-D (N, 2, 3) or (N, 3, 4), got rank %d", th->rank);
    int64_t len = input_len(c, 1);
    if (len >= 0 && len != 4 && len != 5)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "AffineGrid: size must hold 4 (N, C, H, W) or 5 (N, C, D, H, W) values, got %lld",
                             (long long)len);
    int64_t v[5];
    int cnt = 0, known = 0;
    if (ox_infer_int_list(c, 1, v, 5, &cnt, &known)) return -1;
    if (!known) {
        if (len < 0) return ox_infer_set_output(c, 0, th->dtype, NULL, -1);
        /* (N, spatial..., r) with r = len - 2 */
        int64_t out[5] = {th->rank == 3 ? th->dims[0] : -1, -1, -1, -1, -1};
        out[len - 1] = len - 2;
        return ox_infer_set_output(c, 0, th->dtype, out, (int)len);
    }
    int r = cnt - 2;
    for (int i = 0; i < cnt; i++)
        if (v[i] < 0)
            return ox_infer_fail(c, ox_infer_bad_code(c), "AffineGrid: size[%d] is negative (%lld)", i,
                                 (long long)v[i]);
    if (th->rank == 3) {
        int64_t want[3] = {v[0], r, r + 1};
        for (int i = 0; i < 3; i++)
            if (th->dims[i] >= 0 && th->dims[i] != want[i])
                return ox_infer_fail(c, ox_infer_bad_code(c),
                                     "AffineGrid: theta must have shape (%lld, %d, %d) for this size",
                                     (long long)v[0], r, r + 1);
    }
    int64_t out[5];
    out[0] = v[0];
    for (int d = 0; d < r; d++) out[d + 1] = v[d + 2];
    out[r + 1] = r;
    return ox_infer_set_output(c, 0, th->dtype, out, r + 2);
}

/* ================================================================ */
/* RoiAlign */

static int infer_roialign(ox_infer_ctx *c) {
    static const char *const modes[] = {"avg", "max"};
    static const char *const ctms[] = {"half_pixel", "output_half_pixel"};
    if (check_string_attr(c, "mode", "avg", modes, 2)) return -1;
    if (c->node->opset >= 16 && check_string_attr(c, "coordinate_transformation_mode", "half_pixel", ctms, 2))
        return -1;
    int64_t oh = ir_attr_int(c->node, "output_height", 1), ow = ir_attr_int(c->node, "output_width", 1);
    int64_t sr = ir_attr_int(c->node, "sampling_ratio", 0);
    if (oh < 1 || ow < 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "RoiAlign: output_height and output_width must be >= 1");
    if (sr < 0) return ox_infer_fail(c, ONYX_INVALID_MODEL, "RoiAlign: sampling_ratio must be >= 0");
    const ir_type *x = ox_infer_in(c, 0), *r = ox_infer_in(c, 1), *b = ox_infer_in(c, 2);
    if (!x || !r || !b)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "RoiAlign: inputs X, rois and batch_indices are required");
    if (check_float_input(c, 0, "X") || check_float_input(c, 1, "rois")) return -1;
    if (x->dtype != ONYX_UNDEFINED && r->dtype != ONYX_UNDEFINED && x->dtype != r->dtype)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "RoiAlign: rois type %s differs from X type %s",
                             ox_dtype_name(r->dtype), ox_dtype_name(x->dtype));
    if (b->dtype != ONYX_UNDEFINED && !ox_dtype_is_integer(b->dtype))
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "RoiAlign: batch_indices must be int64, got %s",
                             ox_dtype_name(b->dtype));
    if (x->rank >= 0 && x->rank != 4)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "RoiAlign: X must be 4-D (N, C, H, W), got rank %d", x->rank);
    if (r->rank >= 0 && r->rank != 2)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "RoiAlign: rois must be 2-D (num_rois, 4), got rank %d", r->rank);
    if (r->rank == 2 && r->dims[1] >= 0 && r->dims[1] != 4)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "RoiAlign: rois must have 4 columns, got %lld", (long long)r->dims[1]);
    if (b->rank >= 0 && b->rank != 1)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "RoiAlign: batch_indices must be 1-D, got rank %d", b->rank);
    int64_t nr = r->rank == 2 ? r->dims[0] : -1, nb = b->rank == 1 ? b->dims[0] : -1;
    if (nr >= 0 && nb >= 0 && nr != nb)
        return ox_infer_fail(c, ox_infer_bad_code(c), "RoiAlign: %lld rois but %lld batch indices",
                             (long long)nr, (long long)nb);
    int64_t out[4] = {nr >= 0 ? nr : nb, x->rank == 4 ? x->dims[1] : -1, oh, ow};
    return ox_infer_set_output(c, 0, x->dtype, out, 4);
}

/* ================================================================ */
/* MaxRoiPool */

static int infer_maxroipool(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "X") || ox_infer_need_tensor(c, 1, "rois") ||
        ox_infer_check_float(c, 0, "X", 1) || ox_infer_same_dtype(c, 0, 1, "X", "rois"))
        return -1;
    size_t np = 0;
    const int64_t *ps = ir_attr_ints(c->node, "pooled_shape", &np);
    if (!ps || np != 2 || ps[0] < 1 || ps[1] < 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "MaxRoiPool: attribute pooled_shape must be two positive values");
    const ir_type *x = ox_infer_in(c, 0), *r = ox_infer_in(c, 1);
    if (x->rank >= 0 && x->rank != 4)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "MaxRoiPool: X must be 4-D (N, C, H, W), got rank %d", x->rank);
    if (r->rank >= 0 && (r->rank != 2 || (r->dims[1] >= 0 && r->dims[1] != 5)))
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "MaxRoiPool: rois must have shape (num_rois, 5)");
    int64_t out[4] = {r->rank == 2 ? r->dims[0] : -1, x->rank == 4 ? x->dims[1] : -1, ps[0], ps[1]};
    return ox_infer_set_output(c, 0, x->dtype, out, 4);
}

/* ================================================================ */
/* NonMaxSuppression */

static int check_scalar_input(ox_infer_ctx *c, int i, const char *what, int want_int) {
    const ir_type *t = ox_infer_in(c, i);
    if (!t) return 0;
    if (t->dtype != ONYX_UNDEFINED) {
        int ok = want_int ? ox_dtype_is_integer(t->dtype) : ox_dtype_is_float(t->dtype);
        if (!ok)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "NonMaxSuppression: %s must be %s, got %s", what,
                                 want_int ? "int64" : "float", ox_dtype_name(t->dtype));
    }
    int64_t n = input_len(c, i);
    if (n >= 0 && n != 1)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "NonMaxSuppression: %s must hold a single value, got %lld", what,
                             (long long)n);
    return 0;
}

static int infer_nms(ox_infer_ctx *c) {
    int64_t cpb = ir_attr_int(c->node, "center_point_box", 0);
    if (cpb != 0 && cpb != 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "NonMaxSuppression: center_point_box must be 0 or 1");
    const ir_type *b = ox_infer_in(c, 0), *s = ox_infer_in(c, 1);
    if (!b || !s)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "NonMaxSuppression: inputs boxes and scores are required");
    if (check_float_input(c, 0, "boxes") || check_float_input(c, 1, "scores")) return -1;
    if (b->rank >= 0 && b->rank != 3)
        return ox_infer_fail(
            c, ox_infer_bad_code(c),
            "NonMaxSuppression: boxes must be 3-D (batches, boxes, 4), got rank %d", b->rank);
    if (s->rank >= 0 && s->rank != 3)
        return ox_infer_fail(
            c, ox_infer_bad_code(c),
            "NonMaxSuppression: scores must be 3-D (batches, classes, boxes), got rank %d",
            s->rank);
    if (b->rank == 3 && b->dims[2] >= 0 && b->dims[2] != 4)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "NonMaxSuppression: boxes' last dimension must be 4, got %lld",
                             (long long)b->dims[2]);
    if (b->rank == 3 && s->rank == 3) {
        if (b->dims[0] >= 0 && s->dims[0] >= 0 && b->dims[0] != s->dims[0])
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "NonMaxSuppression: boxes have %lld batches but scores %lld",
                                 (long long)b->dims[0], (long long)s->dims[0]);
        if (b->dims[1] >= 0 && s->dims[2] >= 0 && b->dims[1] != s->dims[2])
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "NonMaxSuppression: %lld boxes but scores cover %lld",
                                 (long long)b->dims[1], (long long)s->dims[2]);
    }
    if (check_scalar_input(c, 2, "max_output_boxes_per_class", 1) ||
        check_scalar_input(c, 3, "iou_threshold", 0) || check_scalar_input(c, 4, "score_threshold", 0))
        return -1;
    c->data_dependent = 1;
    int64_t out[2] = {-1, 3};
    return ox_infer_set_output(c, 0, ONYX_INT64, out, 2);
}

static const ox_op_schema OPS[] = {
    {"", "Resize", 10, 19, 1, 4, 1, 1, infer_resize},
    {"", "Upsample", 7, 17, 1, 2, 1, 1, infer_upsample},
    {"", "GridSample", 16, 22, 2, 2, 1, 1, infer_gridsample},
    {"", "AffineGrid", 20, 20, 2, 2, 1, 1, infer_affine_grid},
    {"", "MaxRoiPool", 1, 22, 2, 2, 1, 1, infer_maxroipool},
    {"", "RoiAlign", 10, 22, 3, 3, 1, 1, infer_roialign},
    {"", "NonMaxSuppression", 10, 17, 2, 5, 1, 1, infer_nms},
};

const ox_op_table ox_ops_image = {OPS, sizeof OPS / sizeof OPS[0]};
