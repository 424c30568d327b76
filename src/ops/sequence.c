/* Schemas of the sequence and optional operators. Their results are
 * sequences or optionals whose contents exist only once the graph runs,
 * so inference states the kind and element type, and at run time lets
 * the kernel build the value (data_dependent). Kinds of inputs are only
 * checked at run time: statically an input of unknown type looks like a
 * tensor of unknown shape, and the element kind inside an optional is not
 * part of the static type. */
#include <string.h>

#include "ops/op.h"

extern const ox_op_table ox_ops_sequence;

static const char *kind_word(ox_kind k) {
    return k == OX_KIND_SEQUENCE ? "a sequence" : k == OX_KIND_OPTIONAL ? "an optional" : "a tensor";
}

/* Run-time check that input i is of kind `want`. */
static int need_kind(ox_infer_ctx *c, int i, ox_kind want, const char *what) {
    const ir_type *t = ox_infer_in(c, i);
    if (!t || !c->runtime || t->kind == want) return 0;
    return ox_infer_fail(c, ONYX_INVALID_ARGUMENT, "%s: '%s' must be %s, got %s", c->node->op_type,
                         what, kind_word(want), kind_word(t->kind));
}

static void set_container(ox_infer_ctx *c, int i, ox_kind kind, ox_dtype elem) {
    ir_type *o = ox_infer_out(c, i);
    if (!o) return;
    ox_type_set_unknown_shape(o, elem);
    o->kind = kind;
}

/* A position input: an int32/int64 tensor of one element. Returns 1 with
 * *pos set when the value is available, 0 when not, -1 on error. */
static int read_position(ox_infer_ctx *c, int i, int64_t *pos) {
    const ir_type *t = ox_infer_in(c, i);
    if (!t) return 0;
    if (t->dtype != ONYX_UNDEFINED && t->dtype != ONYX_INT32 && t->dtype != ONYX_INT64)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: 'position' must be int32 or int64, got %s", c->node->op_type,
                             ox_dtype_name(t->dtype));
    if (t->kind == OX_KIND_TENSOR && t->rank > 1)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: 'position' must be a scalar, got rank %d", c->node->op_type,
                             t->rank);
    const ox_tensor *v = ox_infer_in_value(c, i);
    if (!v || v->kind != OX_KIND_TENSOR) return 0;
    if (ox_tensor_numel(v) != 1)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: 'position' must hold one value, got %lld", c->node->op_type,
                             (long long)ox_tensor_numel(v));
    *pos = ox_get_i64(v->data, v->dtype, 0);
    return 1;
}

/* ---- SequenceEmpty ---- */

static int infer_sequence_empty(ox_infer_ctx *c) {
    int64_t dt = ir_attr_int(c->node, "dtype", ONYX_FLOAT32);
    if (!ox_dtype_valid((int)dt) || dt == ONYX_UNDEFINED)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "SequenceEmpty: 'dtype' %lld is not a tensor type",
                             (long long)dt);
    c->data_dependent = 1;
    set_container(c, 0, OX_KIND_SEQUENCE, (ox_dtype)dt);
    return 0;
}

/* ---- SequenceConstruct ---- */

static int infer_sequence_construct(ox_infer_ctx *c) {
    ox_dtype dt = ONYX_UNDEFINED;
    for (int i = 0; i < c->n_inputs; i++) {
        const ir_type *t = ox_infer_in(c, i);
        if (!t) return ox_infer_fail(c, ONYX_INVALID_MODEL, "SequenceConstruct: input %d is missing", i);
        if (need_kind(c, i, OX_KIND_TENSOR, "inputs") != 0) return -1;
        if (t->dtype == ONYX_UNDEFINED) continue;
        if (dt != ONYX_UNDEFINED && t->dtype != dt)
            return ox_infer_fail(
                c, ox_infer_bad_code(c),
                "SequenceConstruct: all inputs must have one type; input %d is %s, "
                "earlier ones %s",
                i, ox_dtype_name(t->dtype), ox_dtype_name(dt));
        dt = t->dtype;
    }
    c->data_dependent = 1;
    set_container(c, 0, OX_KIND_SEQUENCE, dt);
    return 0;
}

/* ---- SequenceAt ---- */

static int infer_sequence_at(ox_infer_ctx *c) {
    if (need_kind(c, 0, OX_KIND_SEQUENCE, "input_sequence") != 0) return -1;
    int64_t pos = 0;
    int known = read_position(c, 1, &pos);
    if (known < 0) return -1;
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    const ox_tensor *seq = ox_infer_in_value(c, 0);
    c->data_dependent = c->runtime;
    if (known && seq && seq->kind == OX_KIND_SEQUENCE) {
        int64_t n = seq->n_items;
        if (pos < -n || pos >= n)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "SequenceAt: position %lld is out of range for a sequence of %lld "
                                 "tensors (allowed %lld..%lld)",
                                 (long long)pos, (long long)n, (long long)-n, (long long)n - 1);
        const ox_tensor *it = seq->items[pos < 0 ? pos + n : pos];
        if (it->kind != OX_KIND_TENSOR)
            return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED, "SequenceAt: sequence items must be tensors");
        return ox_infer_set_output(c, 0, it->dtype, it->dims, it->rank);
    }
    return ox_infer_set_output(c, 0, dt, NULL, -1);
}

/* ---- SequenceInsert ---- */

static int infer_sequence_insert(ox_infer_ctx *c) {
    if (need_kind(c, 0, OX_KIND_SEQUENCE, "input_sequence") != 0) return -1;
    if (need_kind(c, 1, OX_KIND_TENSOR, "tensor") != 0) return -1;
    if (!ox_infer_in(c, 1))
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "SequenceInsert: 'tensor' is required");
    ox_dtype st = ox_infer_in_dtype(c, 0), tt = ox_infer_in_dtype(c, 1);
    const ox_tensor *seq = ox_infer_in_value(c, 0);
    /* An empty sequence read from outside may not know its element type
     * (UNDEFINED); any tensor type may then go in. */
    if (st != ONYX_UNDEFINED && tt != ONYX_UNDEFINED && st != tt)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "SequenceInsert: the sequence holds %s but the tensor is %s",
                             ox_dtype_name(st), ox_dtype_name(tt));
    int64_t pos = 0;
    int known = read_position(c, 2, &pos);
    if (known < 0) return -1;
    if (known && seq && seq->kind == OX_KIND_SEQUENCE) {
        int64_t n = seq->n_items;
        if (pos < -n || pos > n)
            return ox_infer_fail(
                c, ox_infer_bad_code(c),
                "SequenceInsert: position %lld is out of range for a sequence of %lld "
                "tensors (allowed %lld..%lld)",
                (long long)pos, (long long)n, (long long)-n, (long long)n);
    }
    c->data_dependent = 1;
    set_container(c, 0, OX_KIND_SEQUENCE, tt != ONYX_UNDEFINED ? tt : st);
    return 0;
}

/* ---- SequenceErase ---- */

static int infer_sequence_erase(ox_infer_ctx *c) {
    if (need_kind(c, 0, OX_KIND_SEQUENCE, "input_sequence") != 0) return -1;
    int64_t pos = -1;
    int known = read_position(c, 1, &pos);
    if (known < 0) return -1;
    const ox_tensor *seq = ox_infer_in_value(c, 0);
    if (seq && seq->kind == OX_KIND_SEQUENCE && (known || !ox_infer_in(c, 1))) {
        int64_t n = seq->n_items;
        if (n == 0)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "SequenceErase: cannot erase from an empty sequence");
        if (pos < -n || pos >= n)
            return ox_infer_fail(
                c, ox_infer_bad_code(c),
                "SequenceErase: position %lld is out of range for a sequence of %lld "
                "tensors (allowed %lld..%lld)",
                (long long)pos, (long long)n, (long long)-n, (long long)n - 1);
    }
    c->data_dependent = 1;
    set_container(c, 0, OX_KIND_SEQUENCE, ox_infer_in_dtype(c, 0));
    return 0;
}

/* ---- SequenceLength ---- */

static int infer_sequence_length(ox_infer_ctx *c) {
    if (need_kind(c, 0, OX_KIND_SEQUENCE, "input_sequence") != 0) return -1;
    return ox_infer_set_output(c, 0, ONYX_INT64, NULL, 0);
}

/* ---- SplitToSequence ---- */

static int infer_split_to_sequence(ox_infer_ctx *c) {
    if (need_kind(c, 0, OX_KIND_TENSOR, "input") != 0) return -1;
    const ir_type *x = ox_infer_in(c, 0);
    if (!x) return ox_infer_fail(c, ONYX_INVALID_MODEL, "SplitToSequence: 'input' is required");
    int r = x->kind == OX_KIND_TENSOR ? x->rank : -1;
    int64_t axis = ir_attr_int(c->node, "axis", 0);
    if (r == 0)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "SplitToSequence: the input must have rank >= 1");
    if (r > 0 && (axis < -r || axis >= r))
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "SplitToSequence: axis %lld is out of range for rank %d",
                             (long long)axis, r);
    if (axis < 0 && r > 0) axis += r;
    const ir_type *st = ox_infer_in(c, 1);
    if (st) {
        if (st->dtype != ONYX_UNDEFINED && st->dtype != ONYX_INT32 && st->dtype != ONYX_INT64)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "SplitToSequence: 'split' must be int32 or int64, got %s",
                                 ox_dtype_name(st->dtype));
        if (st->kind == OX_KIND_TENSOR && st->rank > 1)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "SplitToSequence: 'split' must be a scalar or 1-D, got rank %d",
                                 st->rank);
    }
    const ox_tensor *sv = ox_infer_in_value(c, 1);
    if (sv && sv->kind == OX_KIND_TENSOR && r > 0 && x->dims[axis] >= 0) {
        int64_t len = x->dims[axis];
        int64_t n = ox_tensor_numel(sv);
        if (sv->rank == 0) {
            int64_t v = ox_get_i64(sv->data, sv->dtype, 0);
            if (v <= 0 && !(v == 0 && len == 0))
                return ox_infer_fail(c, ox_infer_bad_code(c),
                                     "SplitToSequence: 'split' must be positive, got %lld",
                                     (long long)v);
        } else {
            int64_t sum = 0;
            for (int64_t i = 0; i < n; i++) {
                int64_t v = ox_get_i64(sv->data, sv->dtype, (size_t)i);
                if (v < 0)
                    return ox_infer_fail(c, ox_infer_bad_code(c),
                                         "SplitToSequence: split[%lld] = %lld is negative",
                                         (long long)i, (long long)v);
                sum += v;
            }
            if (sum != len)
                return ox_infer_fail(
                    c, ox_infer_bad_code(c),
                    "SplitToSequence: the split sizes add up to %lld but axis %lld has "
                    "size %lld",
                    (long long)sum, (long long)axis, (long long)len);
        }
    }
    c->data_dependent = 1;
    set_container(c, 0, OX_KIND_SEQUENCE, x->dtype);
    return 0;
}

/* ---- ConcatFromSequence ---- */

static int infer_concat_from_sequence(ox_infer_ctx *c) {
    if (need_kind(c, 0, OX_KIND_SEQUENCE, "input_sequence") != 0) return -1;
    const ir_attr *ax = ir_node_attr(c->node, "axis");
    if (!ax) return ox_infer_fail(c, ONYX_INVALID_MODEL, "ConcatFromSequence: the 'axis' attribute is required");
    int64_t new_axis = ir_attr_int(c->node, "new_axis", 0);
    if (new_axis != 0 && new_axis != 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "ConcatFromSequence: 'new_axis' must be 0 or 1, got %lld",
                             (long long)new_axis);
    ox_dtype dt = ox_infer_in_dtype(c, 0);
    const ox_tensor *seq = ox_infer_in_value(c, 0);
    if (!seq || seq->kind != OX_KIND_SEQUENCE) return ox_infer_set_output(c, 0, dt, NULL, -1);
    if (seq->n_items == 0)
        return ox_infer_fail(
            c, ox_infer_bad_code(c),
            "ConcatFromSequence: the sequence is empty, so the result has no shape");
    const ox_tensor *first = seq->items[0];
    int r = first->rank;
    int ro = r + (int)new_axis;
    int64_t axis = ax->i;
    if (axis < -ro || axis >= ro || (ro == 0))
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "ConcatFromSequence: axis %lld is out of range for %s of rank %d",
                             (long long)axis, new_axis ? "stacking tensors" : "tensors", r);
    if (axis < 0) axis += ro;
    int64_t out[OX_MAX_RANK + 1];
    char a[160], b[160];
    for (int d = 0, j = 0; d < ro; d++) out[d] = (new_axis && d == axis) ? 0 : first->dims[j++];
    for (int i = 0; i < seq->n_items; i++) {
        const ox_tensor *t = seq->items[i];
        if (t->kind != OX_KIND_TENSOR || t->dtype != first->dtype)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "ConcatFromSequence: item %d is not a %s tensor like item 0", i,
                                 ox_dtype_name(first->dtype));
        int same = t->rank == r;
        for (int d = 0; same && d < r; d++)
            same = t->dims[d] == first->dims[d] || (!new_axis && d == axis);
        if (!same)
            return ox_infer_fail(
                c, ox_infer_bad_code(c),
                "ConcatFromSequence: item %d has shape %s, which does not match item 0's "
                "%s%s",
                i, ox_shape_str(t->dims, t->rank, a, sizeof a),
                ox_shape_str(first->dims, r, b, sizeof b),
                new_axis ? "" : " outside the concatenation axis");
        if (new_axis)
            out[axis] += 1;
        else if (i > 0)
            out[axis] += t->dims[axis];
    }
    return ox_infer_set_output(c, 0, first->dtype, out, ro);
}

/* ---- Optional ---- */

static int infer_optional(ox_infer_ctx *c) {
    const ir_type *t = ox_infer_in(c, 0);
    const ir_attr *ta = ir_node_attr(c->node, "type");
    ox_dtype dt = ONYX_UNDEFINED;
    if (t) {
        if (c->runtime && t->kind == OX_KIND_OPTIONAL)
            return ox_infer_fail(c, ONYX_INVALID_ARGUMENT, "Optional: the input cannot itself be an optional");
        dt = t->dtype;
        if (ta && ta->type == IR_ATTR_TYPE_PROTO && ta->type_proto.dtype != ONYX_UNDEFINED &&
            dt != ONYX_UNDEFINED && ta->type_proto.dtype != dt)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "Optional: the 'type' attribute says %s but the input is %s",
                                 ox_dtype_name(ta->type_proto.dtype), ox_dtype_name(dt));
    } else if (ta && ta->type == IR_ATTR_TYPE_PROTO) {
        dt = ta->type_proto.dtype;
    } else {
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "Optional: without an input, the 'type' attribute must give the element type");
    }
    c->data_dependent = 1;
    set_container(c, 0, OX_KIND_OPTIONAL, dt);
    return 0;
}

/* ---- OptionalHasElement ---- */

/* A plain tensor or sequence counts as present, as opset 18 states; earlier
 * models reach this too when a loop-carried optional comes back from the
 * body as the bare value. */
static int infer_optional_has_element(ox_infer_ctx *c) {
    return ox_infer_set_output(c, 0, ONYX_BOOL, NULL, 0);
}

/* ---- OptionalGetElement ---- */

static int infer_optional_get_element(ox_infer_ctx *c) {
    const ir_type *t = ox_infer_in(c, 0);
    if (!t) return ox_infer_fail(c, ONYX_INVALID_MODEL, "OptionalGetElement: the input is required");
    /* Like OptionalHasElement, a bare value is its own element. */
    const ox_tensor *v = ox_infer_in_value(c, 0);
    ox_kind kind = OX_KIND_TENSOR;
    if (v && v->kind == OX_KIND_OPTIONAL) {
        if (v->n_items == 0)
            return ox_infer_fail(c, ONYX_INVALID_ARGUMENT, "OptionalGetElement: the optional is empty");
        kind = v->items[0]->kind;
    } else if (v) {
        kind = v->kind;
    } else if (t->kind == OX_KIND_SEQUENCE) {
        kind = OX_KIND_SEQUENCE;
    }
    c->data_dependent = 1;
    set_container(c, 0, kind, t->dtype);
    return 0;
}

/* ---- SequenceMap ---- */

static int infer_sequence_map(ox_infer_ctx *c) {
    const ir_attr *ba = ir_node_attr(c->node, "body");
    if (!ba || !ba->g) return ox_infer_fail(c, ONYX_INVALID_MODEL, "SequenceMap: the 'body' graph is required");
    const ir_graph *g = ba->g;
    if (g->n_inputs != c->n_inputs)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "SequenceMap: the body takes %d inputs but the node has %d",
                             g->n_inputs, c->n_inputs);
    if (g->n_outputs != c->n_outputs)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "SequenceMap: the body has %d outputs but the node has %d",
                             g->n_outputs, c->n_outputs);
    if (need_kind(c, 0, OX_KIND_SEQUENCE, "input_sequence") != 0) return -1;
    int64_t len = -1;
    for (int i = 0; i < c->n_inputs; i++) {
        const ox_tensor *v = ox_infer_in_value(c, i);
        if (!ox_infer_in(c, i))
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "SequenceMap: input %d is missing", i);
        if (!v || v->kind != OX_KIND_SEQUENCE) continue;
        if (len >= 0 && v->n_items != len)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "SequenceMap: input %d has %d items but input 0 has %lld", i,
                                 v->n_items, (long long)len);
        len = v->n_items;
    }
    for (int o = 0; o < c->n_outputs; o++) {
        const ir_value *bv = &g->values[g->outputs[o]];
        set_container(c, o, OX_KIND_SEQUENCE, bv->has_type ? bv->type.dtype : ONYX_UNDEFINED);
    }
    c->data_dependent = 1;
    return 0;
}

static const ox_op_schema OPS[] = {
    {"", "SequenceEmpty", 11, 17, 0, 0, 1, 1, infer_sequence_empty},
    {"", "SequenceConstruct", 11, 17, 1, -1, 1, 1, infer_sequence_construct},
    {"", "SequenceAt", 11, 17, 2, 2, 1, 1, infer_sequence_at},
    {"", "SequenceInsert", 11, 17, 2, 3, 1, 1, infer_sequence_insert},
    {"", "SequenceErase", 11, 17, 1, 2, 1, 1, infer_sequence_erase},
    {"", "SequenceLength", 11, 17, 1, 1, 1, 1, infer_sequence_length},
    {"", "SplitToSequence", 11, 24, 1, 2, 1, 1, infer_split_to_sequence},
    {"", "ConcatFromSequence", 11, 17, 1, 1, 1, 1, infer_concat_from_sequence},
    {"", "Optional", 15, 28, 0, 1, 1, 1, infer_optional},
    {"", "OptionalHasElement", 15, 17, 1, 1, 1, 1, infer_optional_has_element},
    /* from version 18 the input may be left out: the answer is then false */
    {"", "OptionalHasElement", 18, 28, 0, 1, 1, 1, infer_optional_has_element},
    {"", "OptionalGetElement", 15, 28, 1, 1, 1, 1, infer_optional_get_element},
    {"", "SequenceMap", 17, 17, 1, -1, 1, -1, infer_sequence_map},
};

const ox_op_table ox_ops_sequence = {OPS, sizeof OPS / sizeof OPS[0]};
