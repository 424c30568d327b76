/* CPU kernels of the sequence and optional operators. A sequence output is
 * always a fresh value: inputs belong to the run and may be read again by
 * other nodes, so items are deep copies, never shared pointers. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"

extern const ox_kernel_table ox_cpu_kernels_sequence;

static const char *op(const ox_kernel_ctx *ctx) { return ctx->node->op_type; }

static int need_kind(ox_kernel_ctx *ctx, int i, ox_kind want, const char *what) {
    const ox_tensor *t = i < ctx->n_inputs ? ctx->inputs[i] : NULL;
    if (!t) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: '%s' is required", op(ctx), what);
    if (t->kind != want)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: '%s' must be a %s", op(ctx), what,
                              want == OX_KIND_SEQUENCE ? "sequence"
                              : want == OX_KIND_OPTIONAL ? "optional"
                                                         : "tensor");
    return 0;
}

static ox_dtype elem_type(const ox_tensor *t) {
    return t->kind == OX_KIND_TENSOR ? t->dtype : t->elem_dtype;
}

/* Reads position input i (dflt when omitted), adds n to a negative value
 * and checks the result lies in [0, hi]. */
static int read_pos(ox_kernel_ctx *ctx, int i, int64_t dflt, int64_t n, int64_t hi, int64_t *out) {
    const ox_tensor *t = i < ctx->n_inputs ? ctx->inputs[i] : NULL;
    int64_t p = dflt;
    if (t) {
        if (t->kind != OX_KIND_TENSOR || (t->dtype != ONYX_INT32 && t->dtype != ONYX_INT64) ||
            ox_tensor_numel(t) != 1)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: 'position' must be one int32 or int64 value", op(ctx));
        p = ox_get_i64(t->data, t->dtype, 0);
    }
    int64_t w = p < 0 ? p + n : p;
    if (p < -n || w < 0 || w > hi)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: position %" PRId64 " is out of range for a sequence of %" PRId64
                              " tensors (allowed %" PRId64 "..%" PRId64 ")",
                              op(ctx), p, n, -n, hi);
    *out = w;
    return 0;
}

static int hand_over(ox_kernel_ctx *ctx, int i, ox_tensor *value) {
    if (!value) return -1;
    return ox_kernel_set_output(ctx, i, value);
}

/* A copy of seq with item `skip` left out (-1: none) and `extra` (taken)
 * placed at `at` (-1: nowhere). */
static ox_tensor *rebuild(ox_kernel_ctx *ctx, const ox_tensor *seq, ox_dtype elem, int64_t skip,
                          ox_tensor *extra, int64_t at) {
    ox_tensor *out = ox_sequence_new(elem, ctx->err);
    if (!out) {
        ox_tensor_free(extra);
        return NULL;
    }
    for (int64_t i = 0; i <= seq->n_items; i++) {
        if (i == at) {
            ox_tensor *e = extra;
            extra = NULL;
            if (ox_sequence_push(out, e, ctx->err) != 0) goto fail;
        }
        if (i == seq->n_items) break;
        if (i == skip) continue;
        ox_tensor *c = ox_tensor_clone(seq->items[i], ctx->err);
        if (!c || ox_sequence_push(out, c, ctx->err) != 0) goto fail;
    }
    return out;
fail:
    ox_tensor_free(extra);
    ox_tensor_free(out);
    return NULL;
}

/* ---- SequenceEmpty / SequenceConstruct ---- */

static int k_sequence_empty(ox_kernel_ctx *ctx) {
    ox_dtype dt = (ox_dtype)ir_attr_int(ctx->node, "dtype", ONYX_FLOAT32);
    return hand_over(ctx, 0, ox_sequence_new(dt, ctx->err));
}

static int k_sequence_construct(ox_kernel_ctx *ctx) {
    for (int i = 0; i < ctx->n_inputs; i++)
        if (need_kind(ctx, i, OX_KIND_TENSOR, "inputs") != 0) return -1;
    ox_dtype dt = ctx->inputs[0]->dtype;
    for (int i = 1; i < ctx->n_inputs; i++)
        if (ctx->inputs[i]->dtype != dt)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "SequenceConstruct: input %d is %s but input 0 is %s", i,
                                  ox_dtype_name(ctx->inputs[i]->dtype), ox_dtype_name(dt));
    ox_tensor *seq = ox_sequence_new(dt, ctx->err);
    if (!seq) return -1;
    for (int i = 0; i < ctx->n_inputs; i++) {
        ox_tensor *c = ox_tensor_clone(ctx->inputs[i], ctx->err);
        if (!c || ox_sequence_push(seq, c, ctx->err) != 0) {
            ox_tensor_free(seq);
            return -1;
        }
    }
    return ox_kernel_set_output(ctx, 0, seq);
}

/* ---- SequenceAt / SequenceInsert / SequenceErase / SequenceLength ---- */

static int k_sequence_at(ox_kernel_ctx *ctx) {
    if (need_kind(ctx, 0, OX_KIND_SEQUENCE, "input_sequence") != 0) return -1;
    const ox_tensor *seq = ctx->inputs[0];
    int64_t n = seq->n_items, p = 0;
    if (ctx->n_inputs < 2 || !ctx->inputs[1])
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "SequenceAt: 'position' is required");
    if (read_pos(ctx, 1, 0, n, n - 1, &p) != 0) return -1;
    return hand_over(ctx, 0, ox_tensor_clone(seq->items[p], ctx->err));
}

static int k_sequence_insert(ox_kernel_ctx *ctx) {
    if (need_kind(ctx, 0, OX_KIND_SEQUENCE, "input_sequence") != 0) return -1;
    if (need_kind(ctx, 1, OX_KIND_TENSOR, "tensor") != 0) return -1;
    const ox_tensor *seq = ctx->inputs[0], *t = ctx->inputs[1];
    ox_dtype dt = seq->elem_dtype;
    if (dt != ONYX_UNDEFINED && dt != t->dtype)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "SequenceInsert: the sequence holds %s but the tensor is %s",
                              ox_dtype_name(dt), ox_dtype_name(t->dtype));
    int64_t n = seq->n_items, p = 0;
    if (read_pos(ctx, 2, n, n, n, &p) != 0) return -1;
    ox_tensor *c = ox_tensor_clone(t, ctx->err);
    if (!c) return -1;
    return hand_over(ctx, 0, rebuild(ctx, seq, t->dtype, -1, c, p));
}

static int k_sequence_erase(ox_kernel_ctx *ctx) {
    if (need_kind(ctx, 0, OX_KIND_SEQUENCE, "input_sequence") != 0) return -1;
    const ox_tensor *seq = ctx->inputs[0];
    int64_t n = seq->n_items, p = 0;
    if (n == 0) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "SequenceErase: cannot erase from an empty sequence");
    if (read_pos(ctx, 1, -1, n, n - 1, &p) != 0) return -1;
    return hand_over(ctx, 0, rebuild(ctx, seq, seq->elem_dtype, p, NULL, -1));
}

static int k_sequence_length(ox_kernel_ctx *ctx) {
    if (need_kind(ctx, 0, OX_KIND_SEQUENCE, "input_sequence") != 0) return -1;
    if (ctx->node->outputs[0] < 0) return 0;
    ox_tensor *o = ox_kernel_output(ctx, 0, ONYX_INT64, NULL, 0);
    if (!o) return -1;
    *(int64_t *)o->data = ctx->inputs[0]->n_items;
    return 0;
}

/* ---- SplitToSequence ---- */

static int k_split_to_sequence(ox_kernel_ctx *ctx) {
    if (need_kind(ctx, 0, OX_KIND_TENSOR, "input") != 0) return -1;
    const ox_tensor *x = ctx->inputs[0];
    const ox_tensor *sp = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
    if (x->rank == 0) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "SplitToSequence: the input must have rank >= 1");
    int64_t axis = ir_attr_int(ctx->node, "axis", 0);
    if (axis < -x->rank || axis >= x->rank)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "SplitToSequence: axis %" PRId64 " is out of range for rank %d",
                              axis, x->rank);
    if (axis < 0) axis += x->rank;
    int64_t len = x->dims[axis];
    int keep = 1;
    int64_t n_parts, chunk = 1;
    int64_t *sizes = NULL;
    if (!sp) {
        /* keepdims only applies to the default split into single slices. */
        keep = ir_attr_int(ctx->node, "keepdims", 1) != 0;
        n_parts = len;
    } else {
        if (sp->kind != OX_KIND_TENSOR || (sp->dtype != ONYX_INT32 && sp->dtype != ONYX_INT64) || sp->rank > 1)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "SplitToSequence: 'split' must be an int32/int64 scalar or 1-D tensor");
        if (sp->rank == 0) {
            chunk = ox_get_i64(sp->data, sp->dtype, 0);
            if (chunk <= 0)
                return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                      "SplitToSequence: 'split' must be positive, got %" PRId64, chunk);
            n_parts = len / chunk + (len % chunk != 0);
        } else {
            n_parts = sp->dims[0];
            sizes = malloc((size_t)(n_parts + 1) * sizeof *sizes);
            if (!sizes) return ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "out of memory");
            int64_t sum = 0;
            for (int64_t i = 0; i < n_parts; i++) {
                int64_t v = ox_get_i64(sp->data, sp->dtype, (size_t)i);
                if (v < 0) {
                    free(sizes);
                    return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                          "SplitToSequence: split[%" PRId64 "] = %" PRId64 " is negative", i, v);
                }
                sizes[i] = v;
                sum += v;
            }
            if (sum != len) {
                free(sizes);
                return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                      "SplitToSequence: the split sizes add up to %" PRId64
                                      " but axis %" PRId64 " has size %" PRId64,
                                      sum, axis, len);
            }
        }
    }
    ox_tensor *seq = ox_sequence_new(x->dtype, ctx->err);
    if (!seq) {
        free(sizes);
        return -1;
    }
    int64_t start = 0;
    for (int64_t i = 0; i < n_parts; i++) {
        int64_t sz = sizes ? sizes[i] : (start + chunk <= len ? chunk : len - start);
        ox_tensor *part = ox_cpu_slab(ctx, x, (int)axis, start, sz, keep);
        if (!part || ox_sequence_push(seq, part, ctx->err) != 0) {
            free(sizes);
            ox_tensor_free(seq);
            return -1;
        }
        start += sz;
    }
    free(sizes);
    return ox_kernel_set_output(ctx, 0, seq);
}

/* ---- ConcatFromSequence ---- */

static int k_concat_from_sequence(ox_kernel_ctx *ctx) {
    if (need_kind(ctx, 0, OX_KIND_SEQUENCE, "input_sequence") != 0) return -1;
    const ox_tensor *seq = ctx->inputs[0];
    if (seq->n_items == 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "ConcatFromSequence: the sequence is empty");
    const ox_tensor *first = seq->items[0];
    int new_axis = ir_attr_int(ctx->node, "new_axis", 0) != 0;
    int r = first->rank, ro = r + new_axis;
    int64_t axis = ir_attr_int(ctx->node, "axis", 0);
    if (ro == 0 || axis < -ro || axis >= ro)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "ConcatFromSequence: axis %" PRId64 " is out of range", axis);
    if (ro > OX_MAX_RANK)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "ConcatFromSequence: rank %d exceeds onyx's limit", ro);
    if (axis < 0) axis += ro;
    int64_t dims[OX_MAX_RANK + 1];
    for (int d = 0, j = 0; d < ro; d++) dims[d] = (new_axis && d == axis) ? seq->n_items : first->dims[j++];
    if (!new_axis) dims[axis] = 0;
    for (int i = 0; i < seq->n_items; i++) {
        const ox_tensor *t = seq->items[i];
        int same = t->kind == OX_KIND_TENSOR && t->dtype == first->dtype && t->rank == r;
        for (int d = 0; same && d < r; d++) same = t->dims[d] == first->dims[d] || (!new_axis && d == axis);
        if (!same)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "ConcatFromSequence: item %d does not match the type and shape of item 0", i);
        if (!new_axis) dims[axis] += t->dims[axis];
    }
    if (ctx->node->outputs[0] < 0) return 0;
    ox_tensor *o = ox_kernel_output(ctx, 0, first->dtype, dims, ro);
    if (!o) return -1;
    /* Per index of the axes before `axis`, each item contributes one
     * contiguous block of the output row. */
    int64_t outer = 1, row = 1;
    for (int d = 0; d < axis; d++) outer *= dims[d];
    for (int d = (int)axis; d < ro; d++) row *= dims[d];
    int64_t off = 0;
    for (int i = 0; i < seq->n_items; i++) {
        const ox_tensor *t = seq->items[i];
        int64_t block = 1;
        for (int d = (int)axis; d < r; d++) block *= t->dims[d];
        for (int64_t q = 0; q < outer; q++)
            if (ox_cpu_copy_elems(ctx, o, q * row + off, t, q * block, block) != 0) return -1;
        off += block;
    }
    return 0;
}

/* ---- Optional ---- */

static int k_optional(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ctx->n_inputs > 0 ? ctx->inputs[0] : NULL;
    if (!x) {
        const ir_attr *ta = ir_node_attr(ctx->node, "type");
        ox_dtype dt = ta && ta->type == IR_ATTR_TYPE_PROTO ? ta->type_proto.dtype : ONYX_UNDEFINED;
        return hand_over(ctx, 0, ox_optional_new(dt, NULL, ctx->err));
    }
    if (x->kind == OX_KIND_OPTIONAL)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Optional: the input cannot itself be an optional");
    ox_tensor *c = ox_tensor_clone(x, ctx->err);
    if (!c) return -1;
    return hand_over(ctx, 0, ox_optional_new(elem_type(x), c, ctx->err));
}

static int k_optional_has_element(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ctx->n_inputs > 0 ? ctx->inputs[0] : NULL;
    if (ctx->node->outputs[0] < 0) return 0;
    ox_tensor *o = ox_kernel_output(ctx, 0, ONYX_BOOL, NULL, 0);
    if (!o) return -1;
    *(uint8_t *)o->data = x && (x->kind != OX_KIND_OPTIONAL || x->n_items > 0);
    return 0;
}

static int k_optional_get_element(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ctx->n_inputs > 0 ? ctx->inputs[0] : NULL;
    if (!x) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "OptionalGetElement: the input is required");
    if (x->kind == OX_KIND_OPTIONAL) {
        if (x->n_items == 0)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "OptionalGetElement: the optional is empty");
        x = x->items[0];
    }
    return hand_over(ctx, 0, ox_tensor_clone(x, ctx->err));
}

/* ---- SequenceMap ---- */

static void drop_from(ox_tensor **v, int from, int n) {
    for (int q = from; q < n; q++) {
        ox_tensor_free(v[q]);
        v[q] = NULL;
    }
}

static int k_sequence_map(ox_kernel_ctx *ctx) {
    const ir_attr *ba = ir_node_attr(ctx->node, "body");
    if (!ba || !ba->g) return ox_kernel_fail(ctx, ONYX_INVALID_MODEL, "SequenceMap: the 'body' graph is required");
    const ir_graph *g = ba->g;
    int ni = ctx->n_inputs, no = ctx->n_outputs;
    if (g->n_inputs != ni || g->n_outputs != no)
        return ox_kernel_fail(ctx, ONYX_INVALID_MODEL, "SequenceMap: the body's inputs and outputs do not match the node's");
    if (!ctx->run_subgraph)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "SequenceMap: subgraphs cannot run here");
    if (need_kind(ctx, 0, OX_KIND_SEQUENCE, "input_sequence") != 0) return -1;
    int n = ctx->inputs[0]->n_items;
    for (int i = 1; i < ni; i++) {
        const ox_tensor *t = ctx->inputs[i];
        if (!t) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "SequenceMap: input %d is missing", i);
        if (t->kind == OX_KIND_SEQUENCE && t->n_items != n)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "SequenceMap: input %d has %d items but input 0 has %d",
                                  i, t->n_items, n);
    }
    ox_tensor **args = calloc((size_t)ni + 1, sizeof *args);
    ox_tensor **res = calloc((size_t)no + 1, sizeof *res);
    ox_tensor **outs = calloc((size_t)no + 1, sizeof *outs);
    int rc = -1;
    if (!args || !res || !outs) {
        ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    for (int o = 0; o < no; o++) {
        const ir_value *bv = &g->values[g->outputs[o]];
        outs[o] = ox_sequence_new(bv->has_type ? bv->type.dtype : ONYX_UNDEFINED, ctx->err);
        if (!outs[o]) goto done;
    }
    for (int k = 0; k < n; k++) {
        ox_kernel_set_iteration(ctx, k);
        if (ox_kernel_should_stop(ctx)) goto done;
        for (int i = 0; i < ni; i++)
            args[i] = ctx->inputs[i]->kind == OX_KIND_SEQUENCE ? ctx->inputs[i]->items[k] : ctx->inputs[i];
        if (ctx->run_subgraph(ctx, g, args, ni, res, no) != 0) goto done;
        for (int o = 0; o < no; o++) {
            ox_tensor *r = res[o];
            res[o] = NULL;
            if (r->kind != OX_KIND_TENSOR) {
                ox_tensor_free(r);
                drop_from(res, o + 1, no);
                ox_kernel_fail(ctx, ONYX_INVALID_MODEL, "SequenceMap: body output %d must be a tensor", o);
                goto done;
            }
            if (outs[o]->elem_dtype == ONYX_UNDEFINED) outs[o]->elem_dtype = outs[o]->dtype = r->dtype;
            if (ox_sequence_push(outs[o], r, ctx->err) != 0) {
                drop_from(res, o + 1, no);
                goto done;
            }
        }
    }
    ox_kernel_set_iteration(ctx, -1);
    rc = 0;
    for (int o = 0; o < no; o++) {
        ox_tensor *s = outs[o];
        outs[o] = NULL;
        if (ox_kernel_set_output(ctx, o, s) != 0) rc = -1;
    }
done:
    if (outs) drop_from(outs, 0, no);
    free(args);
    free(res);
    free(outs);
    return rc;
}

static const ox_kernel_def KERNELS[] = {
    {"", "SequenceEmpty", 11, 17, k_sequence_empty, NULL, NULL, NULL, NULL},
    {"", "SequenceConstruct", 11, 17, k_sequence_construct, NULL, NULL, NULL, NULL},
    {"", "SequenceAt", 11, 17, k_sequence_at, NULL, NULL, NULL, NULL},
    {"", "SequenceInsert", 11, 17, k_sequence_insert, NULL, NULL, NULL, NULL},
    {"", "SequenceErase", 11, 17, k_sequence_erase, NULL, NULL, NULL, NULL},
    {"", "SequenceLength", 11, 17, k_sequence_length, NULL, NULL, NULL, NULL},
    {"", "SplitToSequence", 11, 24, k_split_to_sequence, NULL, NULL, NULL, NULL},
    {"", "ConcatFromSequence", 11, 17, k_concat_from_sequence, NULL, NULL, NULL, NULL},
    {"", "Optional", 15, 28, k_optional, NULL, NULL, NULL, NULL},
    {"", "OptionalHasElement", 15, 28, k_optional_has_element, NULL, NULL, NULL, NULL},
    {"", "OptionalGetElement", 15, 28, k_optional_get_element, NULL, NULL, NULL, NULL},
    {"", "SequenceMap", 17, 17, k_sequence_map, NULL, NULL, NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_sequence = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
