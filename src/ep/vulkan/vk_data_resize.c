/* Resize (versions 10 to 19) of 4-D float32 data: nearest (every
 * nearest_mode) and linear, with the coordinate transformations
 * half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners,
 * asymmetric and tf_half_pixel_for_nn. Usually only H and W resize, but
 * every axis goes through the same taps.
 *
 * The host builds the taps of every output position in double, by the
 * CPU kernel's formulas, so nearest picks the same input element even
 * where a coordinate lands on a rounding tie; the table goes to the
 * device in a scratch buffer (written before the dispatch that reads it
 * is recorded). Left to the CPU: cubic, tf_crop_and_resize, antialias,
 * keep_aspect_ratio_policy other than stretch, other ranks and types. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ep/vulkan/vk_data.h"
#include "ops/op.h"

OX_VK_SHADER(data_resize)

enum { CT_HALF_PIXEL, CT_PYTORCH, CT_ALIGN, CT_ASYM, CT_TF_NN, CT_TF_CROP, CT_HALF_SYM };
enum { NR_PREFER_FLOOR, NR_PREFER_CEIL, NR_FLOOR, NR_CEIL };

typedef struct rs_attrs {
    int linear, ctm, nearest, exclude;
} rs_attrs;

static int index_of(const char *s, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

/* The attributes this kernel implements, or -1. */
static int parse_attrs(const ir_node *node, rs_attrs *a) {
    static const char *const CTM[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                      "tf_half_pixel_for_nn", "tf_crop_and_resize", "half_pixel_symmetric"};
    static const char *const NEAREST[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    const char *mode = ir_attr_string(node, "mode", "nearest");
    if (strcmp(mode, "nearest") && strcmp(mode, "linear")) return -1;
    a->linear = strcmp(mode, "linear") == 0;
    if (node->opset < 11) {
        /* Resize-10 samples at x / scale, nearest rounding down */
        a->ctm = CT_ASYM;
        a->nearest = NR_FLOOR;
        a->exclude = 0;
        return 0;
    }
    int since = ox_op_since_version(node->domain, node->op_type, node->opset);
    a->ctm = index_of(ir_attr_string(node, "coordinate_transformation_mode", "half_pixel"), CTM,
                      since >= 19 ? 7 : 6);
    a->nearest = index_of(ir_attr_string(node, "nearest_mode", "round_prefer_floor"), NEAREST, 4);
    a->exclude = ir_attr_int(node, "exclude_outside", 0) != 0;
    if (a->ctm < 0 || a->ctm == CT_TF_CROP || a->nearest < 0) return -1;
    if (since >= 18) {
        if (ir_attr_int(node, "antialias", 0) != 0) return -1;
        if (strcmp(ir_attr_string(node, "keep_aspect_ratio_policy", "stretch"), "stretch")) return -1;
        size_t n = 0;
        const int64_t *axes = ir_attr_ints(node, "axes", &n);
        int seen[4] = {0};
        for (size_t i = 0; axes && i < n; i++) {
            int64_t ax = axes[i] < 0 ? axes[i] + 4 : axes[i];
            if (n > 4 || ax < 0 || ax >= 4 || seen[ax]) return -1;
            seen[ax] = 1;
        }
    }
    return 0;
}

/* The axes scales/sizes list (Resize-18's axes, or all four); returns
 * their count. */
static int listed_axes(const ir_node *node, int *ax) {
    size_t n = 0;
    const int64_t *axes = node->opset >= 18 ? ir_attr_ints(node, "axes", &n) : NULL;
    if (!axes) n = 4;
    for (size_t i = 0; i < n; i++) ax[i] = axes ? (int)(axes[i] < 0 ? axes[i] + 4 : axes[i]) : (int)i;
    return (int)n;
}

int vkd_s_resize(const ir_node *node, const ir_type *const *in, int n) {
    rs_attrs a;
    if (n < 1 || !ox_vk_is_tensor(in[0], ONYX_FLOAT32) || in[0]->rank != 4 || parse_attrs(node, &a) != 0)
        return 0;
    int si = node->opset < 11 ? 1 : 2;
    if (n > si && in[si] && !ox_vk_is_tensor(in[si], ONYX_FLOAT32)) return 0;
    if (node->opset >= 11 && n > 3 && in[3] && !ox_vk_is_tensor(in[3], ONYX_INT64)) return 0;
    return 1;
}

/* Input coordinate of output position o (the CPU kernel's rs_coord). */
static double coord(int ctm, int64_t o, int64_t in, int64_t out, double scale, double len_f) {
    double x = (double)o;
    switch (ctm) {
    case CT_HALF_PIXEL: return (x + 0.5) / scale - 0.5;
    case CT_HALF_SYM: return (double)in / 2.0 * (1.0 - (double)out / len_f) + (x + 0.5) / scale - 0.5;
    case CT_PYTORCH: return len_f > 1.0 ? (x + 0.5) / scale - 0.5 : 0.0;
    case CT_ALIGN: return len_f == 1.0 ? 0.0 : x * (double)(in - 1) / (len_f - 1.0);
    case CT_ASYM: return x / scale;
    default: return (x + 0.5) / scale; /* CT_TF_NN */
    }
}

static int64_t clamp_index(int64_t i, int64_t n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }

/* The taps of output position o: four words (i0, i1, w0, w1). */
static void taps(const rs_attrs *a, int64_t o, int64_t in, int64_t out, double scale, double len_f,
                 uint32_t *t) {
    double x = coord(a->ctm, o, in, out, scale, len_f);
    if (!(x >= -4.0)) x = -4.0;
    if (!(x <= (double)in + 4.0)) x = (double)in + 4.0;
    double fl = floor(x), r = x - fl;
    int64_t i0 = (int64_t)fl, k0 = i0, k1 = i0;
    double w0 = 1.0, w1 = 0.0;
    if (!a->linear) {
        if (r > 0.0) {
            switch (a->nearest) {
            case NR_PREFER_FLOOR: k0 = r <= 0.5 ? i0 : i0 + 1; break;
            case NR_PREFER_CEIL: k0 = r < 0.5 ? i0 : i0 + 1; break;
            case NR_FLOOR: break;
            default: k0 = i0 + 1; break;
            }
        }
        k1 = k0;
    } else if (!(r == 0.0 && i0 >= 0 && i0 < in)) {
        /* taps at base and base + 1, x = base + ratio, ratio in (0, 1] */
        int64_t base = r == 0.0 ? i0 - 1 : i0;
        double ratio = x - (double)base;
        k0 = base;
        k1 = base + 1;
        w0 = 1.0 - fabs(-ratio);
        w1 = 1.0 - fabs(1.0 - ratio);
        if (w0 < 0.0) w0 = 0.0;
        if (w1 < 0.0) w1 = 0.0;
        if (a->exclude) {
            if (k0 < 0 || k0 >= in) w0 = 0.0;
            if (k1 < 0 || k1 >= in) w1 = 0.0;
            double sum = w0 + w1;
            if (sum != 0.0) {
                w0 /= sum;
                w1 /= sum;
            }
        }
    }
    float f0 = (float)w0, f1 = (float)w1;
    t[0] = (uint32_t)clamp_index(k0, in);
    t[1] = (uint32_t)clamp_index(k1, in);
    memcpy(&t[2], &f0, 4);
    memcpy(&t[3], &f1, 4);
}

/* Scales (per axis, 1 for N and C) or, from sizes, out / in; have_scales
 * says which, as the coordinate formulas differ. */
static int read_scales(ox_kernel_ctx *c, const ox_tensor *x, double *sc, int *have_scales) {
    int ax[4];
    int legacy = c->node->opset < 11, nax = listed_axes(c->node, ax);
    const ox_tensor *s = c->n_inputs > (legacy ? 1 : 2) ? c->inputs[legacy ? 1 : 2] : NULL;
    const ox_tensor *z = !legacy && c->n_inputs > 3 ? c->inputs[3] : NULL;
    for (int d = 0; d < 4; d++) sc[d] = 1.0;
    *have_scales = 0;
    if (s && ox_tensor_numel(s) > 0) {
        if (ox_tensor_numel(s) != nax || s->dtype != ONYX_FLOAT32)
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Resize: scales must hold %d floats", nax);
        for (int i = 0; i < nax; i++) {
            double v = ((const float *)s->data)[i];
            if (!(v > 0.0) || !isfinite(v))
                return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Resize: scales must be positive, got %g", v);
            sc[ax[i]] = v;
        }
        *have_scales = 1;
    } else if (z && ox_tensor_numel(z) > 0) {
        if (ox_tensor_numel(z) != nax || z->dtype != ONYX_INT64)
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Resize: sizes must hold %d int64 values", nax);
        for (int i = 0; i < nax; i++) {
            int d = ax[i];
            int64_t v = ((const int64_t *)z->data)[i];
            sc[d] = x->dims[d] ? (double)v / (double)x->dims[d] : 1.0;
        }
    } else {
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Resize: one of scales and sizes must be given");
    }
    return 0;
}

int vkd_k_resize(ox_kernel_ctx *c) {
    if (ox_vk_check_io(c, ox_vk_data_host_inputs(c->node)) != 0 || vkd_have_output(c, 0) != 0) return -1;
    const ox_tensor *x = c->inputs[0];
    ox_tensor *y = c->outputs[0];
    rs_attrs a;
    double sc[4];
    int have_scales;
    if (x->rank != 4 || y->rank != 4 || parse_attrs(c->node, &a) != 0)
        return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "vulkan Resize: unsupported attributes or rank");
    if (read_scales(c, x, sc, &have_scales) != 0) return -1;
    int64_t n = ox_tensor_numel(y);
    if (n == 0) return 0;
    if (ox_tensor_numel(x) == 0)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Resize: cannot resize an empty input to a non-empty output");
    size_t words = 4 * (size_t)(y->dims[0] + y->dims[1] + y->dims[2] + y->dims[3]);
    uint32_t *table = malloc(words * sizeof *table);
    if (!table) return ox_kernel_fail(c, ONYX_OUT_OF_MEMORY, "out of memory");
    uint32_t *t = table;
    for (int d = 0; d < 4; d++) {
        int64_t in = x->dims[d], out = y->dims[d];
        double scale = have_scales ? sc[d] : (double)out / (double)in;
        double len_f = have_scales ? scale * (double)in : (double)out;
        for (int64_t o = 0; o < out; o++, t += 4) taps(&a, o, in, out, scale, len_f, t);
    }
    vk_buf *tb = ox_vk_scratch(c, words * sizeof *table);
    int rc = -1;
    if (tb && ox_vk_upload(c, tb, table, words * sizeof *table) == 0) {
        struct { uint32_t n, linear, ind[4], outd[4]; } q = {(uint32_t)n, (uint32_t)a.linear, {0}, {0}};
        for (int d = 0; d < 4; d++) {
            q.ind[d] = (uint32_t)x->dims[d];
            q.outd[d] = (uint32_t)y->dims[d];
        }
        vk_dispatch d = {.shader = &VK_SHADER_data_resize, .bufs = {ox_vk_buf(x), tb, ox_vk_buf(y)},
                         .push = &q, .push_bytes = sizeof q,
                         .groups = {ox_vk_groups(ox_vk_of(c), n, ox_vk_of(c)->wg, 0), 1, 1}};
        rc = ox_vk_run(c, &d);
    }
    free(table);
    ox_vk_scratch_free(c, tb);
    return rc;
}
