/* Schemas of the image operators: Resize, Upsample, GridSample, RoiAlign
 * and NonMaxSuppression. Resize output sizes come from the scales or sizes
 * inputs, so they resolve statically only when those are constants. */
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
    return ox_infer_numel(t->dims, t->rank);
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
    static const char *const ctms[] = {"half_pixel", "pytorch_half_pixel",   "align_corners",
                                       "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    if (!full) return check_string_attr(c, "mode", "nearest", old_modes, 3);
    if (check_string_attr(c, "mode", "nearest", modes, 3) ||
        check_string_attr(c, "coordinate_transformation_mode", "half_pixel", ctms, 6) ||
        check_string_attr(c, "nearest_mode", "round_prefer_floor", nms, 4))
        return -1;
    int64_t ex = ir_attr_int(c->node, "exclude_outside", 0);
    if (ex != 0 && ex != 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: exclude_outside must be 0 or 1",
                             c->node->op_type);
    return 0;
}

/* Output sizes from scales: floor(in * scale), computed in double from the
 * float scale like the reference does. */
static int dims_from_scales(ox_infer_ctx *c, const ir_type *x, int rank, const double *sc, int n, int min_one,
                            int64_t *out) {
    if (n != rank)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: scales has %d values but the input has rank %d", c->node->op_type,
                             n, rank);
    for (int i = 0; i < n; i++) {
        if (!(sc[i] > 0) || !isfinite(sc[i]))
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: scales must be positive, got %g on axis %d", c->node->op_type,
                                 sc[i], i);
        if (min_one && sc[i] < 1)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: scales must be >= 1, got %g on axis %d", c->node->op_type,
                                 sc[i], i);
        int64_t in = x && x->rank >= 0 ? x->dims[i] : -1;
        if (in < 0) {
            out[i] = -1;
            continue;
        }
        double o = floor((double)in * sc[i]);
        if (o > 4.0e18)
            return ox_infer_fail(c, ox_infer_bad_code(c), "%s: output size on axis %d is too large",
                                 c->node->op_type, i);
        out[i] = (int64_t)o;
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

/* Shared by Resize (all versions) and Upsample. `scales_in` is the input
 * index of scales (-1: from the attribute), `sizes_in` that of sizes (-1:
 * none), `roi_in` that of roi (-1: none). */
static int infer_resize_common(ox_infer_ctx *c, int scales_in, int sizes_in, int roi_in, int min_one) {
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
    int nsc = 0;
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
        if (dims_from_scales(c, x, rank, sc, nsc, min_one, out)) return -1;
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
    if (rank < 0) {
        int64_t n = len_scales > 0 ? len_scales : len_sizes;
        if (n > OX_MAX_RANK)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: scales or sizes has more values than the maximum rank",
                                 c->node->op_type);
        rank = n > 0 ? (int)n : -1;
    }
    if (rank > 0 && ((len_scales > 0 && len_scales != rank) || (len_sizes > 0 && len_sizes != rank)))
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: %s has %lld values but the input has rank %d", c->node->op_type,
                             len_scales > 0 ? "scales" : "sizes",
                             (long long)(len_scales > 0 ? len_scales : len_sizes), rank);
    if (roi_in >= 0 && c->runtime) {
        const char *ctm = ir_attr_string(c->node, "coordinate_transformation_mode", "half_pixel");
        int64_t nr = input_len(c, roi_in);
        if (strcmp(ctm, "tf_crop_and_resize") == 0 && nr != 2 * (int64_t)rank)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: roi has %lld values, expected %d (2 * rank)",
                                 c->node->op_type, (long long)nr, 2 * rank);
    }
    const ox_tensor *sv = ox_infer_in_value(c, scales_in);
    if (len_scales > 0 && sv) {
        if (read_scales_value(c, sv, sc, &nsc)) return -1;
        if (dims_from_scales(c, x, rank, sc, nsc, min_one, out)) return -1;
        return ox_infer_set_output(c, 0, dt, out, rank);
    }
    const ox_tensor *zv = sizes_in >= 0 ? ox_infer_in_value(c, sizes_in) : NULL;
    if (len_sizes > 0 && zv) {
        int64_t vals[OX_MAX_RANK];
        int cnt = 0, known = 0;
        if (ox_infer_int_list(c, sizes_in, vals, OX_MAX_RANK, &cnt, &known)) return -1;
        if (known) {
            for (int i = 0; i < cnt; i++) {
                if (vals[i] < 0)
                    return ox_infer_fail(c, ox_infer_bad_code(c),
                                         "%s: sizes must be >= 0, got %lld on axis %d",
                                         c->node->op_type, (long long)vals[i], i);
                if (vals[i] > 0 && x->rank >= 0 && x->dims[i] == 0)
                    return ox_infer_fail(c, ox_infer_bad_code(c),
                                         "%s: cannot resize empty axis %d to size %lld",
                                         c->node->op_type, i, (long long)vals[i]);
            }
            return ox_infer_set_output(c, 0, dt, vals, cnt);
        }
    }
    if (c->runtime)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: scales or sizes value is not available",
                             c->node->op_type);
    for (int i = 0; i < rank; i++)
        out[i] = -1;
    return ox_infer_set_output(c, 0, dt, out, rank);
}

static int infer_resize(ox_infer_ctx *c) {
    int op = c->node->opset;
    if (op < 11) {
        if (check_resize_attrs(c, 0)) return -1;
        if (!ox_infer_in(c, 1))
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Resize: input scales is required");
        return infer_resize_common(c, 1, -1, -1, 0);
    }
    if (check_resize_attrs(c, 1)) return -1;
    return infer_resize_common(c, 2, 3, 1, 0);
}

static int infer_upsample(ox_infer_ctx *c) {
    if (check_resize_attrs(c, 0)) return -1;
    if (c->node->opset < 9) return infer_resize_common(c, -1, -1, -1, 1);
    if (!ox_infer_in(c, 1))
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Upsample: input scales is required");
    return infer_resize_common(c, 1, -1, -1, 1);
}

/* ================================================================ */
/* GridSample */

static int infer_gridsample(ox_infer_ctx *c) {
    static const char *const modes[] = {"bilinear", "nearest", "bicubic"};
    static const char *const pads[] = {"zeros", "border", "reflection"};
    if (check_string_attr(c, "mode", "bilinear", modes, 3) ||
        check_string_attr(c, "padding_mode", "zeros", pads, 3))
        return -1;
    int64_t ac = ir_attr_int(c->node, "align_corners", 0);
    if (ac != 0 && ac != 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "GridSample: align_corners must be 0 or 1");
    const ir_type *x = ox_infer_in(c, 0), *g = ox_infer_in(c, 1);
    if (!x || !g) return ox_infer_fail(c, ONYX_INVALID_MODEL, "GridSample: inputs X and grid are required");
    if (check_float_input(c, 0, "X") || check_float_input(c, 1, "grid")) return -1;
    if (x->rank >= 0 && x->rank != 4)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "GridSample: X must be 4-D (N, C, H, W), got rank %d", x->rank);
    if (g->rank >= 0 && g->rank != 4)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "GridSample: grid must be 4-D (N, H_out, W_out, 2), got rank %d",
                             g->rank);
    if (g->rank == 4 && g->dims[3] >= 0 && g->dims[3] != 2)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "GridSample: grid's last dimension must be 2, got %lld",
                             (long long)g->dims[3]);
    int64_t xn = x->rank == 4 ? x->dims[0] : -1, gn = g->rank == 4 ? g->dims[0] : -1;
    if (xn >= 0 && gn >= 0 && xn != gn)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "GridSample: batch of X (%lld) and grid (%lld) differ", (long long)xn,
                             (long long)gn);
    int64_t out[4] = {xn >= 0 ? xn : gn, x->rank == 4 ? x->dims[1] : -1, g->rank == 4 ? g->dims[1] : -1,
                      g->rank == 4 ? g->dims[2] : -1};
    return ox_infer_set_output(c, 0, x->dtype, out, 4);
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
    {"", "Resize", 10, 17, 1, 4, 1, 1, infer_resize},
    {"", "Upsample", 7, 17, 1, 2, 1, 1, infer_upsample},
    {"", "GridSample", 16, 17, 2, 2, 1, 1, infer_gridsample},
    {"", "RoiAlign", 10, 17, 3, 3, 1, 1, infer_roialign},
    {"", "NonMaxSuppression", 10, 17, 2, 5, 1, 1, infer_nms},
};

const ox_op_table ox_ops_image = {OPS, sizeof OPS / sizeof OPS[0]};
