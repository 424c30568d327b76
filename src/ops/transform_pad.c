/* Schemas of the operators that pad or crop a tensor along its axes: Pad
 * (constant, reflect, edge and, from version 19, wrap; axes from 18) and
 * CenterCropPad, which centres the input in a window of a given size.
 * Split from ops/transform.c, whose table registers them. */
#include <string.h>

#include "ops/op.h"
#include "ops/transform.h"

/* ---- Pad ---- */

/* Pad-18 adds an optional 'axes' input: pads then hold 2 * len(axes)
 * entries, for those axes only. Spreads them over all r axes (zeros
 * elsewhere) into full[0, 2r). Fails on out-of-range or repeated axes. */
static int pad_spread(ox_infer_ctx *c, const int64_t *pads, int n, const int64_t *axes, int na, int r,
                      int64_t *full) {
    if (n != 2 * na)
        return ox_infer_fail(c, ox_infer_bad_code(c), "Pad: 'pads' has %d entries but there are %d axes (expected %d)",
                             n, na, 2 * na);
    int seen[OX_MAX_RANK] = {0};
    for (int i = 0; i < 2 * r; i++) full[i] = 0;
    for (int k = 0; k < na; k++) {
        int64_t a = axes[k];
        if (a < -r || a >= r)
            return ox_infer_fail(c, ox_infer_bad_code(c), "Pad: axes[%d] = %lld is out of range for rank %d (allowed [%d, %d])",
                                 k, (long long)a, r, -r, r - 1);
        if (a < 0) a += r;
        if (seen[a]) return ox_infer_fail(c, ox_infer_bad_code(c), "Pad: axis %lld is given twice", (long long)a);
        seen[a] = 1;
        full[a] = pads[k];
        full[a + r] = pads[k + na];
    }
    return 0;
}

int ox_transform_infer_pad(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    const ir_type *x = ox_infer_in(c, 0);
    int r = ox_infer_in_rank(c, 0);
    int ver = ox_op_since_version(c->node->domain, "Pad", c->node->opset);
    const char *mode = ir_attr_string(c->node, "mode", "constant");
    if (strcmp(mode, "constant") != 0 && strcmp(mode, "reflect") != 0 && strcmp(mode, "edge") != 0 &&
        (strcmp(mode, "wrap") != 0 || ver < 19))
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Pad-%d: unknown mode '%s' (expected constant, reflect, edge%s)",
                             ver, mode, ver >= 19 ? " or wrap" : "");
    int has_axes = ir_node_has_input(c->node, 3);
    if (has_axes && ver < 18)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Pad-%d: the 'axes' input needs version 18 or later", ver);
    int64_t pads[2 * OX_MAX_RANK], axes[OX_MAX_RANK];
    int n, failed, na = -1, axes_known = 1;
    n = ox_transform_attr_or_input_ints(c, c->node->opset < 2 ? "paddings" : "pads", 11, 1, pads, 2 * OX_MAX_RANK,
                           &failed);
    if (failed) return -1;
    if (n == -1) return ox_infer_fail(c, ONYX_INVALID_MODEL, "Pad: 'pads' is required");
    if (has_axes && ox_transform_read_ints(c, 3, "axes", axes, OX_MAX_RANK, &na, &axes_known) != 0) return -1;
    if (ir_node_has_input(c->node, 2) && c->node->opset >= 11) {
        const ir_type *cv = ox_infer_in(c, 2);
        if (cv && cv->dtype != ONYX_UNDEFINED && dt != ONYX_UNDEFINED && cv->dtype != dt)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Pad: constant_value has type %s but data has %s",
                                 ox_dtype_name(cv->dtype), ox_dtype_name(dt));
    }
    if (r < 0) return ox_infer_set_output(c, 0, dt, NULL, -1);
    if (n == -2 || !axes_known) return ox_transform_set_rank_only(c, 0, dt, r);
    int64_t full[2 * OX_MAX_RANK];
    if (has_axes) {
        if (pad_spread(c, pads, n, axes, na, r, full) != 0) return -1;
    } else if (n != 2 * r) {
        return ox_infer_fail(c, ox_infer_bad_code(c), "Pad: 'pads' has %d entries but the input has rank %d (expected %d)", n, r,
                             2 * r);
    } else {
        memcpy(full, pads, (size_t)n * sizeof *pads);
    }
    int64_t out[OX_MAX_RANK];
    for (int i = 0; i < r; i++) {
        int64_t d = x->dims[i];
        if (d < 0) {
            out[i] = -1;
            continue;
        }
        if (__builtin_add_overflow(d, full[i], &out[i]) || __builtin_add_overflow(out[i], full[i + r], &out[i]))
            return ox_infer_fail(c, ox_infer_bad_code(c), "Pad: pads %lld and %lld overflow axis %d",
                                 (long long)full[i], (long long)full[i + r], i);
        if (out[i] < 0)
            return ox_infer_fail(c, ox_infer_bad_code(c), "Pad: pads %lld and %lld remove more than the %lld elements of axis %d",
                                 (long long)full[i], (long long)full[i + r], (long long)d, i);
        if (strcmp(mode, "constant") != 0 && d == 0 && (full[i] > 0 || full[i + r] > 0))
            return ox_infer_fail(c, ox_infer_bad_code(c), "Pad: mode '%s' cannot pad axis %d, which is empty", mode, i);
    }
    return ox_infer_set_output(c, 0, dt, out, r);
}

/* ---- CenterCropPad ---- */

/* Each listed axis takes the size `shape` gives (cropped or zero-padded
 * around the centre); the other axes are kept. */
int ox_transform_infer_center_crop_pad(ox_infer_ctx *c) {
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    const ir_type *x = ox_infer_in(c, 0);
    int r = ox_infer_in_rank(c, 0);
    ox_dtype st = ox_infer_in_dtype(c, 1);
    if (st != ONYX_UNDEFINED && st != ONYX_INT32 && st != ONYX_INT64)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "CenterCropPad: 'shape' must be int32 or int64, got %s",
                             ox_dtype_name(st));
    int64_t shape[OX_MAX_RANK];
    int n, known;
    if (ox_transform_read_ints(c, 1, "shape", shape, OX_MAX_RANK, &n, &known) != 0) return -1;
    for (int k = 0; known && k < n; k++)
        if (shape[k] < 0)
            return ox_infer_fail(c, ox_infer_bad_code(c), "CenterCropPad: shape[%d] = %lld is negative", k,
                                 (long long)shape[k]);
    if (r < 0) return ox_infer_set_output(c, 0, dt, NULL, -1);
    size_t na = 0;
    const int64_t *axes = ir_attr_ints(c->node, "axes", &na);
    int has_axes = ir_node_attr(c->node, "axes") != NULL;
    if (!has_axes) na = (size_t)r;
    if (na > (size_t)r)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "CenterCropPad: 'axes' has %zu entries but the input has rank %d",
                             na, r);
    int target[OX_MAX_RANK], seen[OX_MAX_RANK] = {0};
    for (int k = 0; k < (int)na; k++) {
        int64_t a = has_axes ? axes[k] : k;
        if (a < -r || a >= r)
            return ox_infer_fail(c, ONYX_INVALID_MODEL,
                                 "CenterCropPad: axes[%d] = %lld is out of range for rank %d (allowed [%d, %d])", k,
                                 (long long)a, r, -r, r - 1);
        if (a < 0) a += r;
        if (seen[a]) return ox_infer_fail(c, ONYX_INVALID_MODEL, "CenterCropPad: axis %lld is given twice", (long long)a);
        seen[a] = 1;
        target[k] = (int)a;
    }
    if (!known) {
        const ir_type *s = ox_infer_in(c, 1);
        if (s && s->rank == 1 && s->dims[0] >= 0 && s->dims[0] != (int64_t)na)
            return ox_infer_fail(c, ox_infer_bad_code(c), "CenterCropPad: 'shape' has %lld entries for %zu axes",
                                 (long long)s->dims[0], na);
        int64_t out[OX_MAX_RANK];
        memcpy(out, x->dims, (size_t)r * sizeof *out);
        for (int k = 0; k < (int)na; k++) out[target[k]] = -1;
        return ox_infer_set_output(c, 0, dt, out, r);
    }
    if (n != (int)na)
        return ox_infer_fail(c, ox_infer_bad_code(c), "CenterCropPad: 'shape' has %d entries for %zu axes", n, na);
    int64_t out[OX_MAX_RANK];
    memcpy(out, x->dims, (size_t)r * sizeof *out);
    for (int k = 0; k < n; k++) out[target[k]] = shape[k];
    return ox_infer_set_output(c, 0, dt, out, r);
}
