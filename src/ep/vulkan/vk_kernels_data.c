/* The Vulkan provider's kernels for data movement (Transpose, Concat,
 * Slice, Split, Expand, Tile, Pad, Identity and the reshaping copies), and
 * the family's one kernel table, which also lists the elementwise, Where
 * and Cast kernels of vk_data_ew.c and Resize of vk_data_resize.c.
 *
 * Movement is by bits: 4-byte elements (float32, int32, uint32) as words,
 * 8-byte ones (int64, uint64, float64) as pairs of words, bool, int8 and
 * uint8 as bytes. Every movement kernel except Pad describes its work as
 * a strided copy (copy_plan: an iteration space with a source and a
 * destination stride per dimension) run by data_copy.comp. Shapes,
 * starts, pads and repeats are host inputs (ox_vk_data_host_inputs), read
 * with plain pointers; output shapes come from inference. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ep/vulkan/vk_data.h"

OX_VK_SHADER(data_copy)
OX_VK_SHADER(data_pad)
OX_VK_SHADER(data_concat_bytes)

#define COPY_MAX_RANK 7 /* data_copy.comp's dimensions: 6 plus a word pair */

/* ---- shared helpers (vk_data.h) ---- */

int vkd_elem_bytes(ox_dtype t) {
    switch (t) {
    case ONYX_FLOAT32: case ONYX_INT32: case ONYX_UINT32: return 4;
    case ONYX_INT64: case ONYX_UINT64: case ONYX_FLOAT64: return 8;
    case ONYX_BOOL: case ONYX_UINT8: case ONYX_INT8: return 1;
    default: return 0;
    }
}

int vkd_movable(const ir_type *t) {
    return t && t->kind == OX_KIND_TENSOR && vkd_elem_bytes(t->dtype) != 0;
}

void vkd_bcast_strides(const ox_tensor *t, int r, int64_t *st) {
    int64_t s = 1;
    for (int d = r - 1; d >= 0; d--) {
        int td = d - (r - t->rank);
        if (td < 0 || t->dims[td] == 1) {
            st[d] = 0;
        } else {
            st[d] = s;
            s *= t->dims[td];
        }
    }
}

int vkd_have_output(ox_kernel_ctx *c, int i) {
    if (i < c->n_outputs && c->outputs[i]) return 0;
    return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "vulkan %s: output %d has no shape", c->node->op_type, i);
}

/* Row-major element strides of a shape. */
static void row_strides(const int64_t *dims, int r, int64_t *st) {
    int64_t s = 1;
    for (int d = r - 1; d >= 0; d--) {
        st[d] = s;
        s *= dims[d];
    }
}

/* Reads an int32 or int64 host tensor of at most max values; -1 when it
 * is neither or too long. */
static int read_ints(ox_kernel_ctx *c, int k, const char *what, int64_t *out, int max) {
    const ox_tensor *t = k < c->n_inputs ? c->inputs[k] : NULL;
    if (!t) return 0;
    int64_t n = ox_tensor_numel(t);
    if ((t->dtype != ONYX_INT64 && t->dtype != ONYX_INT32) || n > max)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: '%s' must be at most %d int32/int64 values",
                              c->node->op_type, what, max);
    for (int64_t i = 0; i < n; i++)
        out[i] = t->dtype == ONYX_INT64 ? ((const int64_t *)t->data)[i] : ((const int32_t *)t->data)[i];
    return (int)n;
}

/* ---- the strided copy ---- */

typedef struct copy_plan {
    int rank;
    int64_t dims[COPY_MAX_RANK], ss[COPY_MAX_RANK], ds[COPY_MAX_RANK], mods[COPY_MAX_RANK];
    int64_t sbase, dbase;
} copy_plan;

typedef struct copy_push {
    uint32_t n, mode;
    int32_t sbase;
    uint32_t dbase;
    uint32_t dims[COPY_MAX_RANK];
    int32_t ss[COPY_MAX_RANK];
    uint32_t ds[COPY_MAX_RANK];
    /* the 7th dimension is only ever an 8-byte element's word pair, which
     * never wraps: one modulus fewer leaves room for the grid (grid.glsl) */
    uint32_t mods[COPY_MAX_RANK - 1];
} copy_push;

/* A plan over `dims` with a contiguous destination; the caller sets the
 * source strides. */
static void plan_init(copy_plan *p, const int64_t *dims, int r) {
    memset(p, 0, sizeof *p);
    p->rank = r;
    for (int d = 0; d < r; d++) p->dims[d] = dims[d];
    row_strides(dims, r, p->ds);
}

/* Drops dimensions of 1 and merges neighbours both sides walk as one
 * (and neither wraps), so the shader's index walk stays short. */
static void plan_fold(copy_plan *p) {
    int k = 0;
    for (int d = 0; d < p->rank; d++) {
        if (p->dims[d] == 1) continue;
        if (k > 0 && !p->mods[k - 1] && !p->mods[d] && p->ss[k - 1] == p->ss[d] * p->dims[d] &&
            p->ds[k - 1] == p->ds[d] * p->dims[d]) {
            p->dims[k - 1] *= p->dims[d];
            p->ss[k - 1] = p->ss[d];
            p->ds[k - 1] = p->ds[d];
            continue;
        }
        p->dims[k] = p->dims[d];
        p->ss[k] = p->ss[d];
        p->ds[k] = p->ds[d];
        p->mods[k] = p->mods[d];
        k++;
    }
    p->rank = k;
}

/* Runs plan p (in elements of `eb` bytes) from src into dst. Byte
 * elements need a contiguous destination starting at 0. */
static int run_copy(ox_kernel_ctx *c, const ox_tensor *src, ox_tensor *dst, copy_plan *p, int eb) {
    int64_t n = 1;
    for (int d = 0; d < p->rank; d++) n *= p->dims[d];
    if (n == 0) return 0;
    if (eb == 8) {
        /* a word pair per element: an inner dimension of two words */
        for (int d = 0; d < p->rank; d++) {
            p->ss[d] *= 2;
            p->ds[d] *= 2;
        }
        p->sbase *= 2;
        p->dbase *= 2;
        p->dims[p->rank] = 2;
        p->ss[p->rank] = 1;
        p->ds[p->rank] = 1;
        p->mods[p->rank] = 0;
        p->rank++;
        n *= 2;
    }
    plan_fold(p);
    int fits = p->sbase >= 0 && p->sbase <= INT32_MAX && p->dbase >= 0 && p->dbase <= INT32_MAX;
    for (int d = 0; d < p->rank; d++) fits = fits && p->ss[d] >= -INT32_MAX && p->ss[d] <= INT32_MAX;
    if (p->rank == COPY_MAX_RANK && p->mods[COPY_MAX_RANK - 1]) fits = 0;
    if (p->rank > COPY_MAX_RANK || n > INT32_MAX || !fits)
        return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "vulkan %s: copy of %" PRId64 " words in %d dimensions",
                              c->node->op_type, n, p->rank);
    copy_push q = {.n = (uint32_t)n, .mode = (uint32_t)p->rank | (eb == 1 ? 0x100u : 0u),
                   .sbase = (int32_t)p->sbase, .dbase = (uint32_t)p->dbase};
    for (int d = 0; d < p->rank; d++) {
        q.dims[d] = (uint32_t)p->dims[d];
        q.ss[d] = (int32_t)p->ss[d];
        q.ds[d] = (uint32_t)p->ds[d];
        if (d < COPY_MAX_RANK - 1) q.mods[d] = (uint32_t)p->mods[d];
    }
    vk_dispatch d = {.shader = &VK_SHADER_data_copy, .bufs = {ox_vk_buf(src), ox_vk_buf(dst)},
                     .push = &q, .push_bytes = sizeof q,
                     .groups = {ox_vk_groups(ox_vk_of(c), eb == 1 ? (n + 3) / 4 : n, ox_vk_of(c)->wg, 0), 1, 1}};
    return ox_vk_run(c, &d);
}

static int check(ox_kernel_ctx *c) {
    if (ox_vk_check_io(c, ox_vk_data_host_inputs(c->node)) != 0) return -1;
    for (int i = 0; i < c->n_outputs; i++)
        if (vkd_have_output(c, i) != 0) return -1;
    return 0;
}

/* ---- placement ---- */

static int s_movable_rank(const ir_type *t, int min_rank) {
    return vkd_movable(t) && t->rank >= min_rank && t->rank <= VKD_MAX_RANK;
}

/* Integer inputs the host reads (optional ones may be absent). */
static int int_inputs(const ir_type *const *in, int n, int from) {
    for (int i = from; i < n; i++)
        if (in[i] && !ox_vk_is_tensor(in[i], ONYX_INT64) && !ox_vk_is_tensor(in[i], ONYX_INT32)) return 0;
    return 1;
}

static int s_copy(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    return n >= 1 && vkd_movable(in[0]) && int_inputs(in, n, 1);
}

static int s_transpose(const ir_node *node, const ir_type *const *in, int n) {
    if (n != 1 || !s_movable_rank(in[0], 0)) return 0;
    size_t np = 0;
    const int64_t *perm = ir_attr_ints(node, "perm", &np);
    if (!perm) return 1;
    if ((int)np != in[0]->rank) return 0;
    int seen[OX_MAX_RANK] = {0};
    for (size_t i = 0; i < np; i++) {
        if (perm[i] < 0 || perm[i] >= (int64_t)np || seen[perm[i]]) return 0;
        seen[perm[i]] = 1;
    }
    return 1;
}

static int axis_ok(const ir_node *node, int r, int64_t dflt) {
    int64_t a = ir_attr_int(node, "axis", dflt);
    return a >= -r && a < r;
}

/* Concat writes each input into a strided part of the output. */
static int s_concat(const ir_node *node, const ir_type *const *in, int n) {
    if (n < 1 || !in[0]) return 0;
    for (int i = 0; i < n; i++) {
        if (!in[i] || !s_movable_rank(in[i], 1) || in[i]->dtype != in[0]->dtype ||
            in[i]->rank != in[0]->rank)
            return 0;
    }
    return ir_node_attr(node, "axis") && axis_ok(node, in[0]->rank, 0);
}

static int s_slice(const ir_node *node, const ir_type *const *in, int n) {
    return n >= 1 && s_movable_rank(in[0], 1) && (node->opset < 10 || (n >= 3 && int_inputs(in, n, 1)));
}

static int s_split(const ir_node *node, const ir_type *const *in, int n) {
    return n >= 1 && s_movable_rank(in[0], 1) && int_inputs(in, n, 1) &&
           axis_ok(node, in[0]->rank, 0);
}

/* The output's rank is the shape's length (or the input's): at most 6
 * when it is known here. */
static int s_expand(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    return n == 2 && s_movable_rank(in[0], 0) && int_inputs(in, n, 1) && in[1] && in[1]->rank == 1 &&
           in[1]->dims[0] <= VKD_MAX_RANK;
}

static int s_tile(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    return n == 2 && s_movable_rank(in[0], 1) && int_inputs(in, n, 1);
}

static int pad_mode(const ir_node *node) {
    const char *m = ir_attr_string(node, "mode", "constant");
    if (!strcmp(m, "constant")) return 0;
    if (!strcmp(m, "reflect")) return 1;
    if (!strcmp(m, "edge")) return 2;
    if (!strcmp(m, "wrap") && node->opset >= 19) return 3;
    return -1;
}

static int s_pad(const ir_node *node, const ir_type *const *in, int n) {
    if (n < 1 || !s_movable_rank(in[0], 1) || pad_mode(node) < 0) return 0;
    if (node->opset < 11) return n == 1 && ir_node_attr(node, "pads");
    if (n < 2 || !in[1] || !int_inputs(in, n > 2 ? 2 : n, 1)) return 0;
    if (n > 2 && in[2] && (in[2]->kind != OX_KIND_TENSOR || in[2]->dtype != in[0]->dtype)) return 0;
    return n <= 3 || !in[3] || int_inputs(in, 4, 3);
}

/* ---- kernels ---- */

/* Identity and the reshaping operators: the bytes as they are, moved as
 * whole words (buffers are padded to 16 bytes, so a tail word exists). */
static int k_copy(ox_kernel_ctx *c) {
    if (check(c) != 0) return -1;
    const ox_tensor *x = c->inputs[0];
    ox_tensor *y = c->outputs[0];
    if (x->nbytes != y->nbytes || x->dtype != y->dtype)
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "vulkan %s: input and output sizes differ",
                              c->node->op_type);
    int64_t words = (int64_t)((y->nbytes + 3) / 4);
    copy_plan p;
    plan_init(&p, &words, 1);
    p.ss[0] = 1;
    return run_copy(c, x, y, &p, 4);
}

static int k_transpose(ox_kernel_ctx *c) {
    if (check(c) != 0) return -1;
    const ox_tensor *x = c->inputs[0];
    ox_tensor *y = c->outputs[0];
    int r = x->rank;
    int64_t perm[OX_MAX_RANK], st[OX_MAX_RANK];
    size_t np = 0;
    const int64_t *given = ir_attr_ints(c->node, "perm", &np);
    for (int d = 0; d < r; d++) perm[d] = given ? given[d] : r - 1 - d;
    if (given && (int)np != r)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Transpose: perm has %zu entries for rank %d", np, r);
    row_strides(x->dims, r, st);
    copy_plan p;
    plan_init(&p, y->dims, r);
    for (int d = 0; d < r; d++) {
        if (y->dims[d] != x->dims[perm[d]])
            return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "vulkan Transpose: output shape does not match");
        p.ss[d] = st[perm[d]];
    }
    return run_copy(c, x, y, &p, vkd_elem_bytes(x->dtype));
}

/* One byte-type input into its part of the output: whole output words
 * rewritten, keeping the other inputs' bytes (data_concat_bytes.comp). */
static int concat_bytes(ox_kernel_ctx *c, const ox_tensor *x, ox_tensor *y, int axis, int64_t off) {
    int64_t inner = 1, n = ox_tensor_numel(y);
    for (int d = axis + 1; d < y->rank; d++) inner *= y->dims[d];
    if (ox_tensor_numel(x) == 0) return 0;
    struct { uint32_t n, inner, axis, off, len; } q = {(uint32_t)n, (uint32_t)inner, (uint32_t)y->dims[axis],
                                                      (uint32_t)off, (uint32_t)x->dims[axis]};
    vk_dispatch d = {.shader = &VK_SHADER_data_concat_bytes, .bufs = {ox_vk_buf(x), ox_vk_buf(y)},
                     .push = &q, .push_bytes = sizeof q,
                     .groups = {ox_vk_groups(ox_vk_of(c), (n + 3) / 4, ox_vk_of(c)->wg, 0), 1, 1}};
    return ox_vk_run(c, &d);
}

static int k_concat(ox_kernel_ctx *c) {
    if (check(c) != 0) return -1;
    ox_tensor *y = c->outputs[0];
    int r = y->rank;
    int64_t axis = ir_attr_int(c->node, "axis", 0);
    if (axis < 0) axis += r;
    int64_t ost[OX_MAX_RANK], off = 0;
    row_strides(y->dims, r, ost);
    for (int k = 0; k < c->n_inputs; k++) {
        const ox_tensor *x = c->inputs[k];
        if (!x || x->rank != r || x->dtype != y->dtype)
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Concat: input %d does not match", k);
        for (int d = 0; d < r; d++)
            if (d != axis && x->dims[d] != y->dims[d])
                return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Concat: input %d differs off the axis", k);
        if (off + x->dims[axis] > y->dims[axis])
            return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "vulkan Concat: inputs exceed the output");
        int eb = vkd_elem_bytes(x->dtype);
        if (eb == 1) {
            if (concat_bytes(c, x, y, (int)axis, off) != 0) return -1;
            off += x->dims[axis];
            continue;
        }
        copy_plan p;
        plan_init(&p, x->dims, r);
        row_strides(x->dims, r, p.ss);
        for (int d = 0; d < r; d++) p.ds[d] = ost[d];
        p.dbase = off * ost[axis];
        off += x->dims[axis];
        if (run_copy(c, x, y, &p, eb) != 0) return -1;
    }
    return 0;
}

/* Slice: starts/ends/axes/steps from attributes (before opset 10) or host
 * inputs, clamped as the spec says; the output shape is inference's. */
static int k_slice(ox_kernel_ctx *c) {
    if (check(c) != 0) return -1;
    const ox_tensor *x = c->inputs[0];
    ox_tensor *y = c->outputs[0];
    int r = x->rank;
    int64_t st[OX_MAX_RANK], sv[OX_MAX_RANK], ev[OX_MAX_RANK], av[OX_MAX_RANK], pv[OX_MAX_RANK];
    int ns, ne, na = -1, np = -1;
    if (c->node->opset < 10) {
        size_t a = 0, b = 0, e = 0;
        const int64_t *s_ = ir_attr_ints(c->node, "starts", &a), *e_ = ir_attr_ints(c->node, "ends", &b);
        const int64_t *x_ = ir_attr_ints(c->node, "axes", &e);
        if (!s_ || !e_ || a > OX_MAX_RANK || b > OX_MAX_RANK || e > OX_MAX_RANK)
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Slice: starts and ends are required");
        ns = (int)a;
        ne = (int)b;
        memcpy(sv, s_, a * sizeof *sv);
        memcpy(ev, e_, b * sizeof *ev);
        if (x_) {
            na = (int)e;
            memcpy(av, x_, e * sizeof *av);
        }
    } else {
        if ((ns = read_ints(c, 1, "starts", sv, OX_MAX_RANK)) < 0 ||
            (ne = read_ints(c, 2, "ends", ev, OX_MAX_RANK)) < 0)
            return -1;
        if (c->n_inputs > 3 && c->inputs[3] && (na = read_ints(c, 3, "axes", av, OX_MAX_RANK)) < 0) return -1;
        if (c->n_inputs > 4 && c->inputs[4] && (np = read_ints(c, 4, "steps", pv, OX_MAX_RANK)) < 0) return -1;
    }
    if (ns != ne || (na >= 0 && na != ns) || (np >= 0 && np != ns))
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Slice: starts, ends, axes and steps differ in length");
    row_strides(x->dims, r, st);
    copy_plan p;
    plan_init(&p, y->dims, r);
    for (int d = 0; d < r; d++) p.ss[d] = st[d];
    for (int i = 0; i < ns; i++) {
        int64_t a = na >= 0 ? av[i] : i, step = np >= 0 ? pv[i] : 1;
        if (a < 0) a += r;
        if (a < 0 || a >= r || step == 0)
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Slice: bad axis or zero step");
        int64_t dim = x->dims[a], s = sv[i];
        if (s < 0) s += dim;
        if (step > 0)
            s = s < 0 ? 0 : s > dim ? dim : s;
        else
            s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
        p.sbase += s * st[a];
        /* an axis of at most one element never steps (and a huge step
         * would overflow the stride) */
        p.ss[a] = y->dims[a] > 1 ? st[a] * step : 0;
    }
    return run_copy(c, x, y, &p, vkd_elem_bytes(x->dtype));
}

/* Split: each output's part starts where the previous one ended, so the
 * output shapes inference made give every offset. */
static int k_split(ox_kernel_ctx *c) {
    if (check(c) != 0) return -1;
    const ox_tensor *x = c->inputs[0];
    int r = x->rank;
    int64_t axis = ir_attr_int(c->node, "axis", 0);
    if (axis < 0) axis += r;
    int64_t st[OX_MAX_RANK], off = 0;
    row_strides(x->dims, r, st);
    for (int k = 0; k < c->n_outputs; k++) {
        ox_tensor *y = c->outputs[k];
        if (y->rank != r || off + y->dims[axis] > x->dims[axis])
            return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "vulkan Split: output %d does not fit the input", k);
        copy_plan p;
        plan_init(&p, y->dims, r);
        for (int d = 0; d < r; d++) p.ss[d] = st[d];
        p.sbase = off * st[axis];
        off += y->dims[axis];
        if (run_copy(c, x, y, &p, vkd_elem_bytes(x->dtype)) != 0) return -1;
    }
    return 0;
}

static int k_expand(ox_kernel_ctx *c) {
    if (check(c) != 0) return -1;
    const ox_tensor *x = c->inputs[0];
    ox_tensor *y = c->outputs[0];
    if (x->rank > y->rank)
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "vulkan Expand: output rank below the input's");
    copy_plan p;
    plan_init(&p, y->dims, y->rank);
    vkd_bcast_strides(x, y->rank, p.ss);
    return run_copy(c, x, y, &p, vkd_elem_bytes(x->dtype));
}

/* Tile: the source coordinate wraps at the input's size. */
static int k_tile(ox_kernel_ctx *c) {
    if (check(c) != 0) return -1;
    const ox_tensor *x = c->inputs[0];
    ox_tensor *y = c->outputs[0];
    int r = x->rank;
    if (y->rank != r)
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "vulkan Tile: output rank differs");
    copy_plan p;
    plan_init(&p, y->dims, r);
    row_strides(x->dims, r, p.ss);
    for (int d = 0; d < r; d++) {
        if (x->dims[d] == 0 && y->dims[d] != 0)
            return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "vulkan Tile: output shape does not match");
        if (y->dims[d] != x->dims[d]) p.mods[d] = x->dims[d];
    }
    return run_copy(c, x, y, &p, vkd_elem_bytes(x->dtype));
}

/* ---- Pad ---- */

typedef struct pad_push {
    uint32_t n, rank, mode, words, cval[2];
    uint32_t odims[VKD_MAX_RANK], idims[VKD_MAX_RANK];
    int32_t lo[VKD_MAX_RANK];
} pad_push;

/* The pads per axis (begin at [a], end at [a + r]) from the attribute
 * (Pad-2) or the host inputs, with Pad-18's axes. */
static int pad_amounts(ox_kernel_ctx *c, int r, int64_t *pads) {
    int64_t given[2 * OX_MAX_RANK], axes[OX_MAX_RANK];
    int n, na = -1;
    if (c->node->opset < 11) {
        size_t k = 0;
        const int64_t *a = ir_attr_ints(c->node, "pads", &k);
        if (!a || k > 2 * OX_MAX_RANK) return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Pad: bad 'pads'");
        n = (int)k;
        memcpy(given, a, k * sizeof *given);
    } else if ((n = read_ints(c, 1, "pads", given, 2 * OX_MAX_RANK)) < 0) {
        return -1;
    }
    if (c->node->opset >= 18 && c->n_inputs > 3 && c->inputs[3] &&
        (na = read_ints(c, 3, "axes", axes, OX_MAX_RANK)) < 0)
        return -1;
    if (na < 0) {
        na = r;
        for (int a = 0; a < r; a++) axes[a] = a;
    }
    if (n != 2 * na)
        return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Pad: 'pads' has %d entries for %d axes", n, na);
    memset(pads, 0, 2 * (size_t)r * sizeof *pads);
    for (int k = 0; k < na; k++) {
        int64_t a = axes[k] < 0 ? axes[k] + r : axes[k];
        if (a < 0 || a >= r) return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Pad: axis out of range");
        pads[a] = given[k];
        pads[a + r] = given[k + na];
    }
    return 0;
}

/* The constant as up to two words of the data's type. */
static void pad_constant(ox_kernel_ctx *c, const ox_tensor *x, uint32_t *cval) {
    size_t es = ox_dtype_size(x->dtype);
    unsigned char b[8] = {0};
    const ox_tensor *cv = c->node->opset >= 11 && c->n_inputs > 2 ? c->inputs[2] : NULL;
    if (cv && ox_tensor_numel(cv) > 0) {
        memcpy(b, cv->data, es);
    } else if (c->node->opset < 11) {
        float v = ir_attr_float(c->node, "value", 0.0f);
        int64_t i = (int64_t)v;
        double dv = v;
        switch (x->dtype) {
        case ONYX_FLOAT32: memcpy(b, &v, 4); break;
        case ONYX_FLOAT64: memcpy(b, &dv, 8); break;
        default: memcpy(b, &i, es); break; /* little-endian low bytes */
        }
    }
    memcpy(cval, b, 8);
}

static int k_pad(ox_kernel_ctx *c) {
    if (check(c) != 0) return -1;
    const ox_tensor *x = c->inputs[0];
    ox_tensor *y = c->outputs[0];
    int r = x->rank, mode = pad_mode(c->node);
    int64_t pads[2 * OX_MAX_RANK];
    if (r > VKD_MAX_RANK || mode < 0 || y->rank != r)
        return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "vulkan Pad: unsupported rank or mode");
    if (pad_amounts(c, r, pads) != 0) return -1;
    int64_t n = ox_tensor_numel(y);
    pad_push q = {.n = (uint32_t)n, .rank = (uint32_t)r, .mode = (uint32_t)mode};
    int eb = vkd_elem_bytes(x->dtype);
    q.words = eb == 1 ? 0u : (uint32_t)(eb / 4);
    for (int d = 0; d < r; d++) {
        if (y->dims[d] != x->dims[d] + pads[d] + pads[d + r])
            return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "Pad: output axis %d does not match the pads", d);
        if (pads[d] > INT32_MAX || pads[d] < INT32_MIN)
            return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "vulkan Pad: pads beyond 32 bits");
        q.odims[d] = (uint32_t)y->dims[d];
        q.idims[d] = (uint32_t)x->dims[d];
        q.lo[d] = (int32_t)pads[d];
    }
    if (n == 0) return 0;
    pad_constant(c, x, q.cval);
    vk_dispatch d = {.shader = &VK_SHADER_data_pad, .bufs = {ox_vk_buf(x), ox_vk_buf(y)}, .push = &q,
                     .push_bytes = sizeof q,
                     .groups = {ox_vk_groups(ox_vk_of(c), eb == 1 ? (n + 3) / 4 : n, ox_vk_of(c)->wg, 0), 1, 1}};
    return ox_vk_run(c, &d);
}

/* Operator versions as the ONNX schemas' since-versions; where a later
 * version only adds types, the range runs on. Versions whose inputs or
 * attributes differ are either handled (opset checks above) or left out:
 * Concat-1 (optional axis), Split-1 (split as an input), Pad-1 and
 * Tile-1. */
static const ox_kernel_def KERNELS[] = {
    {"", "Identity", 1, 25, k_copy, s_copy, NULL, NULL, NULL},
    {"", "Reshape", 1, 25, k_copy, s_copy, NULL, NULL, NULL},
    {"", "Flatten", 1, 25, k_copy, s_copy, NULL, NULL, NULL},
    {"", "Squeeze", 1, 25, k_copy, s_copy, NULL, NULL, NULL},
    {"", "Unsqueeze", 1, 25, k_copy, s_copy, NULL, NULL, NULL},
    {"", "Transpose", 1, 25, k_transpose, s_transpose, NULL, NULL, NULL},
    {"", "Concat", 4, 13, k_concat, s_concat, NULL, NULL, NULL},
    {"", "Slice", 1, 13, k_slice, s_slice, NULL, NULL, NULL},
    {"", "Split", 2, 18, k_split, s_split, NULL, NULL, NULL},
    {"", "Expand", 8, 13, k_expand, s_expand, NULL, NULL, NULL},
    {"", "Tile", 6, 13, k_tile, s_tile, NULL, NULL, NULL},
    {"", "Pad", 2, 25, k_pad, s_pad, NULL, NULL, NULL},
    {"", "Pow", 7, 15, vkd_k_pow, vkd_s_pow, NULL, NULL, NULL},
    {"", "Max", 8, 13, vkd_k_max, vkd_s_minmax, NULL, NULL, NULL},
    {"", "Min", 8, 13, vkd_k_min, vkd_s_minmax, NULL, NULL, NULL},
    {"", "Mod", 10, 13, vkd_k_mod, vkd_s_mod, NULL, NULL, NULL},
    {"", "Equal", 7, 19, vkd_k_equal, vkd_s_compare, NULL, NULL, NULL},
    {"", "Less", 7, 13, vkd_k_less, vkd_s_compare, NULL, NULL, NULL},
    {"", "Greater", 7, 13, vkd_k_greater, vkd_s_compare, NULL, NULL, NULL},
    {"", "LessOrEqual", 12, 16, vkd_k_less_equal, vkd_s_compare, NULL, NULL, NULL},
    {"", "GreaterOrEqual", 12, 16, vkd_k_greater_equal, vkd_s_compare, NULL, NULL, NULL},
    {"", "And", 7, 7, vkd_k_and, vkd_s_logical, NULL, NULL, NULL},
    {"", "Or", 7, 7, vkd_k_or, vkd_s_logical, NULL, NULL, NULL},
    {"", "Xor", 7, 7, vkd_k_xor, vkd_s_logical, NULL, NULL, NULL},
    {"", "Not", 1, 1, vkd_k_not, vkd_s_not, NULL, NULL, NULL},
    {"", "Reciprocal", 6, 13, vkd_k_unary, vkd_s_unary, NULL, NULL, NULL},
    {"", "Log", 6, 13, vkd_k_unary, vkd_s_unary, NULL, NULL, NULL},
    {"", "Floor", 6, 13, vkd_k_unary, vkd_s_unary, NULL, NULL, NULL},
    {"", "Ceil", 6, 13, vkd_k_unary, vkd_s_unary, NULL, NULL, NULL},
    {"", "Round", 11, 22, vkd_k_unary, vkd_s_unary, NULL, NULL, NULL},
    {"", "Sin", 7, 22, vkd_k_unary, vkd_s_unary, NULL, NULL, NULL},
    {"", "Cos", 7, 22, vkd_k_unary, vkd_s_unary, NULL, NULL, NULL},
    {"", "HardSigmoid", 6, 22, vkd_k_unary, vkd_s_unary, NULL, NULL, NULL},
    {"", "HardSwish", 14, 22, vkd_k_unary, vkd_s_unary, NULL, NULL, NULL},
    {"", "Softplus", 1, 22, vkd_k_unary, vkd_s_unary, NULL, NULL, NULL},
    {"", "Sign", 9, 13, vkd_k_unary, vkd_s_unary, NULL, NULL, NULL},
    {"", "Elu", 6, 22, vkd_k_unary, vkd_s_unary, NULL, NULL, NULL},
    {"", "Selu", 6, 22, vkd_k_unary, vkd_s_unary, NULL, NULL, NULL},
    {"", "Where", 9, 16, vkd_k_where, vkd_s_where, NULL, NULL, NULL},
    {"", "Cast", 6, 25, vkd_k_cast, vkd_s_cast, NULL, NULL, NULL},
    {"", "Resize", 10, 19, vkd_k_resize, vkd_s_resize, NULL, NULL, NULL},
};

const ox_kernel_table ox_vk_kernels_data = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};

/* Shapes, starts/ends/axes/steps, split sizes, repeats, pads and the pad
 * constant, and Resize's roi/scales/sizes are read on the host. */
uint32_t ox_vk_data_host_inputs(const ir_node *node) {
    if (node->domain[0] != '\0') return 0;
    const char *op = node->op_type;
    int v = node->opset;
    if (!strcmp(op, "Slice")) return v >= 10 ? 0x1eu : 0;
    if (!strcmp(op, "Split")) return v >= 13 ? 0x2u : 0;
    if (!strcmp(op, "Expand") || !strcmp(op, "Tile")) return 0x2u;
    if (!strcmp(op, "Pad")) return v >= 11 ? 0xeu : 0;
    if (!strcmp(op, "Reshape")) return v >= 5 ? 0x2u : 0;
    if (!strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze")) return v >= 13 ? 0x2u : 0;
    if (!strcmp(op, "Resize")) return v >= 11 ? 0xeu : 0x2u;
    return 0;
}
