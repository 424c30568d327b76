/* Schemas of the recurrent operators RNN, GRU and LSTM (opsets 7 and 14:
 * 14 adds the batch-major layout). The three share one shape contract
 * and differ only in their number of gates. */
#include <stdint.h>
#include <strings.h>

#include "ops/op.h"

extern const ox_op_table ox_ops_recurrent;

/* Gates per direction, and activation functions per direction. */
static void op_shape(const char *op, int *gates, int *n_acts) {
    if (op[0] == 'L') {
        *gates = 4;
        *n_acts = 3;
    } else if (op[0] == 'G') {
        *gates = 3;
        *n_acts = 2;
    } else {
        *gates = 1;
        *n_acts = 1;
    }
}

static const char *const ACTIVATIONS[] = {
    "Relu",     "Tanh", "Sigmoid", "Affine",   "LeakyRelu", "ThresholdedRelu",
    "ScaledTanh", "HardSigmoid", "Elu", "Softsign", "Softplus",
};

static int check_activations(ox_infer_ctx *c, int n_acts, int dirs) {
    const char *op = c->node->op_type;
    const ir_attr *a = ir_node_attr(c->node, "activations");
    if (!a) return 0;
    if (a->type != IR_ATTR_STRINGS)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: attribute activations must be a list of strings", op);
    /* A forward RNN's documented default lists two functions, so a list
     * for both directions is accepted (and its tail ignored) for one. */
    if (a->n != (size_t)n_acts && a->n != (size_t)(2 * n_acts))
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "%s: activations lists %zu functions; expected %d per direction (%d for "
                             "%d direction%s)",
                             op, a->n, n_acts, n_acts * dirs, dirs, dirs > 1 ? "s" : "");
    for (size_t k = 0; k < a->n; k++) {
        int found = 0;
        for (size_t j = 0; j < sizeof ACTIVATIONS / sizeof ACTIVATIONS[0]; j++)
            if (a->strings[k] && strcasecmp(a->strings[k], ACTIVATIONS[j]) == 0) found = 1;
        if (!found)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: unknown activation function '%s'", op,
                                 a->strings[k] ? a->strings[k] : "");
    }
    return 0;
}

/* Checks input i against an expected shape (entries -1: not checked). */
static int check_shape(ox_infer_ctx *c, int i, const char *what, const int64_t *want, int rank,
                       const char *layout_text) {
    const ir_type *t = ox_infer_in(c, i);
    if (!t || t->rank < 0) return 0;
    const char *op = c->node->op_type;
    char got[160], exp[160];
    if (t->rank != rank)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s must have rank %d %s, got shape %s",
                             op, what, rank, layout_text,
                             ox_shape_str(t->dims, t->rank, got, sizeof got));
    for (int k = 0; k < rank; k++) {
        if (want[k] >= 0 && t->dims[k] >= 0 && want[k] != t->dims[k]) {
            int64_t shown[OX_MAX_RANK];
            for (int q = 0; q < rank; q++) shown[q] = want[q] >= 0 ? want[q] : t->dims[q];
            return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s has shape %s but %s expects %s",
                                 op, what, ox_shape_str(t->dims, t->rank, got, sizeof got),
                                 layout_text, ox_shape_str(shown, rank, exp, sizeof exp));
        }
    }
    return 0;
}

/* a * b when both are known (else -1); fails naming hidden_size when the
 * product overflows. */
static int mul_known(ox_infer_ctx *c, onyx_code code, int64_t a, int64_t b, int64_t *out) {
    *out = -1;
    if (a < 0 || b < 0) return 0;
    return ox_infer_mul(c, code, a, b, out, "%lld times hidden_size", (long long)a);
}

static int infer_rnn(ox_infer_ctx *c) {
    const ir_node *n = c->node;
    const char *op = n->op_type;
    int gates, n_acts;
    op_shape(op, &gates, &n_acts);
    const int is_lstm = gates == 4;

    const ir_type *x = ox_infer_in(c, 0);
    if (!x || !ox_infer_in(c, 1) || !ox_infer_in(c, 2))
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: inputs X, W and R are required", op);
    for (int i = 0; i < c->n_inputs; i++) {
        const ir_type *t = ox_infer_in(c, i);
        if (t && t->kind != OX_KIND_TENSOR)
            return ox_infer_fail(c, ox_infer_bad_code(c), "%s: input %d must be a tensor", op, i);
    }

    ox_dtype dt = x->dtype;
    if (dt != ONYX_UNDEFINED && dt != ONYX_FLOAT32 && dt != ONYX_FLOAT64 && dt != ONYX_FLOAT16 &&
        dt != ONYX_BFLOAT16)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: X has element type %s; expected a floating-point type", op,
                             ox_dtype_name(dt));
    static const char *const NAMES[] = {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};
    for (int i = 1; i < c->n_inputs && i < 8; i++) {
        const ir_type *t = ox_infer_in(c, i);
        if (!t || t->dtype == ONYX_UNDEFINED) continue;
        if (i == 4) {
            if (t->dtype != ONYX_INT32 && t->dtype != ONYX_INT64)
                return ox_infer_fail(c, ox_infer_bad_code(c),
                                     "%s: sequence_lens must be int32, got %s", op,
                                     ox_dtype_name(t->dtype));
        } else if (dt != ONYX_UNDEFINED && t->dtype != dt) {
            return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s has element type %s but X has %s",
                                 op, NAMES[i], ox_dtype_name(t->dtype), ox_dtype_name(dt));
        }
    }
    if (dt == ONYX_UNDEFINED) dt = ox_infer_in(c, 1)->dtype;

    const char *dir = ir_attr_string(n, "direction", "forward");
    int dirs;
    if (strcasecmp(dir, "forward") == 0 || strcasecmp(dir, "reverse") == 0)
        dirs = 1;
    else if (strcasecmp(dir, "bidirectional") == 0)
        dirs = 2;
    else
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "%s: direction '%s' must be forward, reverse or bidirectional", op, dir);
    int64_t layout = n->opset >= 14 ? ir_attr_int(n, "layout", 0) : 0;
    if (layout != 0 && layout != 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: layout must be 0 or 1, got %lld", op,
                             (long long)layout);
    if (is_lstm) {
        int64_t inf = ir_attr_int(n, "input_forget", 0);
        if (inf != 0 && inf != 1)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: input_forget must be 0 or 1", op);
    }
    if (check_activations(c, n_acts, dirs) != 0) return -1;
    const ir_attr *clip = ir_node_attr(n, "clip");
    if (clip && !(clip->f > 0.0f))
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: clip must be positive, got %g", op,
                             (double)clip->f);

    /* hidden size: the attribute, else what R says */
    const ir_type *w = ox_infer_in(c, 1), *r = ox_infer_in(c, 2);
    int64_t hidden = -1;
    const ir_attr *hs = ir_node_attr(n, "hidden_size");
    if (hs) {
        if (hs->i <= 0)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: hidden_size must be positive, got %lld",
                                 op, (long long)hs->i);
        hidden = hs->i;
    } else if (r->rank == 3 && r->dims[2] >= 0) {
        hidden = r->dims[2];
    } else if (w->rank == 3 && w->dims[1] >= 0) {
        hidden = w->dims[1] / gates;
    }

    int64_t seq = -1, batch = -1, isz = -1;
    if (x->rank >= 0) {
        if (x->rank != 3)
            return ox_infer_fail(c, ox_infer_bad_code(c), "%s: X must have rank 3, got rank %d", op,
                                 x->rank);
        seq = x->dims[layout ? 1 : 0];
        batch = x->dims[layout ? 0 : 1];
        isz = x->dims[2];
    }
    const char *state_text = layout ? "[batch_size, num_directions, hidden_size]"
                                    : "[num_directions, batch_size, hidden_size]";
    int64_t gh, gh2, h3;
    const onyx_code hcode = hs ? ONYX_INVALID_MODEL : ox_infer_bad_code(c);
    if (mul_known(c, hcode, gates, hidden, &gh) || mul_known(c, hcode, 2 * gates, hidden, &gh2) ||
        mul_known(c, hcode, 3, hidden, &h3))
        return -1;
    int64_t want_w[3] = {dirs, gh, isz};
    if (check_shape(c, 1, "W", want_w, 3, "[num_directions, gates*hidden_size, input_size]")) return -1;
    int64_t want_r[3] = {dirs, gh, hidden};
    if (check_shape(c, 2, "R", want_r, 3, "[num_directions, gates*hidden_size, hidden_size]")) return -1;
    int64_t want_b[2] = {dirs, gh2};
    if (check_shape(c, 3, "B", want_b, 2, "[num_directions, 2*gates*hidden_size]")) return -1;
    int64_t want_s[1] = {batch};
    if (check_shape(c, 4, "sequence_lens", want_s, 1, "[batch_size]")) return -1;
    int64_t want_h[3] = {layout ? batch : dirs, layout ? dirs : batch, hidden};
    if (check_shape(c, 5, "initial_h", want_h, 3, state_text)) return -1;
    if (is_lstm) {
        if (check_shape(c, 6, "initial_c", want_h, 3, state_text)) return -1;
        int64_t want_p[2] = {dirs, h3};
        if (check_shape(c, 7, "P", want_p, 2, "[num_directions, 3*hidden_size]")) return -1;
    } else if (c->n_inputs > 6 && (ox_infer_in(c, 6) || ox_infer_in(c, 7))) {
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: takes at most 6 inputs", op);
    }

    /* sequence lengths must lie within the padded sequence */
    const ox_tensor *lens = c->n_inputs > 4 && ox_infer_in(c, 4) && c->values ? c->values[4] : NULL;
    if (lens && lens->kind == OX_KIND_TENSOR && seq >= 0 &&
        (lens->dtype == ONYX_INT32 || lens->dtype == ONYX_INT64)) {
        int64_t cnt = ox_tensor_numel(lens);
        for (int64_t b = 0; b < cnt; b++) {
            int64_t v = ox_get_i64(lens->data, lens->dtype, (size_t)b);
            if (v < 0 || v > seq)
                return ox_infer_fail(
                    c, ox_infer_bad_code(c),
                    "%s: sequence_lens[%lld] = %lld is outside [0, seq_length = %lld]", op,
                    (long long)b, (long long)v, (long long)seq);
        }
    }

    /* Y is [seq, dirs, batch, hidden], or [batch, seq, dirs, hidden] batch-major */
    int64_t ydims[4] = {seq, dirs, batch, hidden};
    if (layout) {
        ydims[0] = batch;
        ydims[1] = seq;
        ydims[2] = dirs;
    }
    ir_type *o;
    if ((o = ox_infer_out(c, 0))) ox_type_set_shape(o, dt, ydims, 4);
    int64_t hdims[3] = {want_h[0], want_h[1], hidden};
    if ((o = ox_infer_out(c, 1))) ox_type_set_shape(o, dt, hdims, 3);
    if (is_lstm && (o = ox_infer_out(c, 2))) ox_type_set_shape(o, dt, hdims, 3);
    return 0;
}

static const ox_op_schema OPS[] = {
    {"", "RNN", 7, 22, 3, 6, 0, 2, infer_rnn},
    {"", "GRU", 7, 22, 3, 6, 0, 2, infer_rnn},
    {"", "LSTM", 7, 22, 3, 8, 0, 3, infer_rnn},
};

const ox_op_table ox_ops_recurrent = {OPS, sizeof OPS / sizeof OPS[0]};
