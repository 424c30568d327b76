/* Schemas of the Attention, RotaryEmbedding and the other transformer-block
 * operators of ai.onnx (opset 23+), and FlexAttention of ai.onnx.preview. */
#include <string.h>

#include "ops/attention.h"
#include "ops/op.h"

extern const ox_op_table ox_ops_attention;

static const ox_dtype FLOATS[] = {ONYX_FLOAT16, ONYX_FLOAT32, ONYX_FLOAT64, ONYX_BFLOAT16};

/* Checked product of two dims; -1 when either is unknown. */
static int64_t mul_dim(int64_t a, int64_t b) {
    if (a < 0 || b < 0) return -1;
    if (b != 0 && a > INT64_MAX / b) return -1;
    return a * b;
}

static int64_t add_dim(int64_t a, int64_t b) {
    if (a < 0 || b < 0 || a > INT64_MAX - b) return -1;
    return a + b;
}

/* Divides a known hidden size by a head count; -1 when unknown. */
static int split_heads(ox_infer_ctx *c, int64_t hidden, int64_t heads, const char *what,
                       int64_t *out) {
    *out = -1;
    if (hidden < 0 || heads <= 0) return 0;
    if (hidden % heads != 0)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: %s hidden size %lld is not a multiple of its %lld heads",
                             c->node->op_type, what, (long long)hidden, (long long)heads);
    *out = hidden / heads;
    return 0;
}

/* ---- Attention-23/24/25 ---- */

static int infer_attention(ox_infer_ctx *c) {
    const ir_node *n = c->node;
    int ver = ox_op_since_version(n->domain, n->op_type, n->opset);
    if (ox_infer_need_tensor(c, 0, "Q") || ox_infer_need_tensor(c, 1, "K") ||
        ox_infer_need_tensor(c, 2, "V"))
        return -1;
    if (ox_infer_check_dtype(c, 0, "Q", FLOATS, 4) || ox_infer_check_dtype(c, 2, "V", FLOATS, 4) ||
        ox_infer_same_dtype(c, 0, 1, "Q", "K"))
        return -1;
    const ir_type *q = ox_infer_in(c, 0), *k = ox_infer_in(c, 1), *v = ox_infer_in(c, 2);
    const ir_type *pk = ox_infer_in(c, 4), *pv = ox_infer_in(c, 5);
    if ((pk == NULL) != (pv == NULL))
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "Attention: past_key and past_value must be given together");
    if (pk && (ox_infer_same_dtype(c, 1, 4, "K", "past_key") ||
               ox_infer_same_dtype(c, 2, 5, "V", "past_value")))
        return -1;
    if (ver < 24 && ir_node_input_count(n) > 6)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "Attention-%d takes at most 6 inputs (nonpad_kv_seqlen came in version 24)",
                             ver);
    if (ox_infer_in(c, 6)) {
        static const ox_dtype I64[] = {ONYX_INT64};
        if (ox_infer_check_dtype(c, 6, "nonpad_kv_seqlen", I64, 1)) return -1;
        if (pk)
            return ox_infer_fail(c, ONYX_INVALID_MODEL,
                                 "Attention: nonpad_kv_seqlen cannot be used with past_key/past_value");
    }
    if (ox_infer_in(c, 3)) {
        ox_dtype mt = ox_infer_in_dtype(c, 3);
        if (mt != ONYX_UNDEFINED && mt != ONYX_BOOL && !ox_dtype_is_float(mt) &&
            !ox_dtype_is_integer(mt))
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "Attention: attn_mask has unsupported element type %s",
                                 ox_dtype_name(mt));
    }
    int64_t mode = ir_attr_int(n, "qk_matmul_output_mode", 0);
    if (mode < 0 || mode > 3)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "Attention: qk_matmul_output_mode must be 0..3, got %lld",
                             (long long)mode);
    if (ver >= 25 && (ir_attr_int(n, "left_window_size", -1) < -1 ||
                      ir_attr_int(n, "right_window_size", -1) < -1))
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "Attention: window sizes must be -1 (unbounded) or >= 0");
    int64_t sp = ir_attr_int(n, "softmax_precision", 0);
    if (ir_node_attr(n, "softmax_precision") && sp != ONYX_FLOAT32 && sp != ONYX_FLOAT16 &&
        sp != ONYX_FLOAT64 && sp != ONYX_BFLOAT16)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "Attention: softmax_precision %lld is not a float type", (long long)sp);

    ox_dtype dt = q->dtype;
    if (q->rank < 0 || k->rank < 0 || v->rank < 0) {
        for (int i = 0; i < c->n_outputs; i++)
            if (ox_infer_set_output(c, i, i == 2 ? v->dtype : dt, NULL, -1)) return -1;
        return 0;
    }
    if ((q->rank != 3 && q->rank != 4) || k->rank != q->rank || v->rank != q->rank)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "Attention: Q, K and V must all be 3-D or all 4-D, got ranks %d, %d, %d",
                             q->rank, k->rank, v->rank);
    int64_t B = q->dims[0], hq, hkv, sq, skv, dk, dkk, dv;
    int64_t qh = ir_attr_int(n, "q_num_heads", 0), kh = ir_attr_int(n, "kv_num_heads", 0);
    if (q->rank == 3) {
        if (qh <= 0 || kh <= 0)
            return ox_infer_fail(c, ONYX_INVALID_MODEL,
                                 "Attention: 3-D inputs need positive q_num_heads and kv_num_heads");
        hq = qh;
        hkv = kh;
        sq = q->dims[1];
        skv = k->dims[1];
        if (split_heads(c, q->dims[2], hq, "Q", &dk) || split_heads(c, k->dims[2], hkv, "K", &dkk) ||
            split_heads(c, v->dims[2], hkv, "V", &dv))
            return -1;
    } else {
        if (ver >= 25 && (ir_node_attr(n, "q_num_heads") || ir_node_attr(n, "kv_num_heads")))
            return ox_infer_fail(c, ONYX_INVALID_MODEL,
                                 "Attention: q_num_heads and kv_num_heads must not be set for "
                                 "4-D inputs");
        hq = q->dims[1];
        hkv = k->dims[1];
        if (v->dims[1] >= 0 && hkv >= 0 && v->dims[1] != hkv)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "Attention: K has %lld heads but V has %lld", (long long)hkv,
                                 (long long)v->dims[1]);
        sq = q->dims[2];
        skv = k->dims[2];
        dk = q->dims[3];
        dkk = k->dims[3];
        dv = v->dims[3];
    }
    if (hq > 0 && hkv > 0 && hq % hkv != 0)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "Attention: q heads (%lld) must be a multiple of kv heads (%lld)",
                             (long long)hq, (long long)hkv);
    if (dk >= 0 && dkk >= 0 && dk != dkk)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "Attention: Q head size %lld differs from K head size %lld",
                             (long long)dk, (long long)dkk);
    if (skv >= 0 && v->dims[q->rank == 3 ? 1 : 2] >= 0 && v->dims[q->rank == 3 ? 1 : 2] != skv)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "Attention: K and V sequence lengths differ (%lld and %lld)",
                             (long long)skv, (long long)v->dims[q->rank == 3 ? 1 : 2]);
    int64_t past = 0;
    if (pk) {
        if (pk->rank >= 0 && pk->rank != 4)
            return ox_infer_fail(c, ox_infer_bad_code(c), "Attention: past_key must be 4-D");
        if (pv->rank >= 0 && pv->rank != 4)
            return ox_infer_fail(c, ox_infer_bad_code(c), "Attention: past_value must be 4-D");
        past = pk->rank == 4 ? pk->dims[2] : -1;
    }
    int64_t total = add_dim(past, skv);
    const ir_type *m = ox_infer_in(c, 3);
    if (m && m->rank >= 0) {
        /* broadcast to [B, q_heads, q_seq, total]; a shorter last dim is
         * padded with -inf */
        int64_t want[4] = {B, hq, sq, total};
        if (m->rank < 1 || m->rank > 4)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "Attention: attn_mask must have rank 1..4, got %d", m->rank);
        for (int d = 0; d < m->rank; d++) {
            int td = 4 - m->rank + d;
            int64_t dim = m->dims[d], w = want[td];
            if (dim < 0 || w < 0) continue;
            if (td == 3 ? dim > w : (dim != 1 && dim != w))
                return ox_infer_fail(c, ox_infer_bad_code(c),
                                     "Attention: attn_mask dimension %d (%lld) does not fit %lld", d,
                                     (long long)dim, (long long)w);
        }
    }
    int64_t y[4];
    if (q->rank == 3) {
        y[0] = B;
        y[1] = sq;
        y[2] = mul_dim(hq, dv);
        if (ox_infer_set_output(c, 0, dt, y, 3)) return -1;
    } else {
        y[0] = B;
        y[1] = hq;
        y[2] = sq;
        y[3] = dv;
        if (ox_infer_set_output(c, 0, dt, y, 4)) return -1;
    }
    int64_t pkd[4] = {B, hkv, total, dk}, pvd[4] = {B, hkv, total, dv}, qkd[4] = {B, hq, sq, total};
    if (c->n_outputs > 1 && ox_infer_set_output(c, 1, dt, pkd, 4)) return -1;
    if (c->n_outputs > 2 && ox_infer_set_output(c, 2, v->dtype, pvd, 4)) return -1;
    if (c->n_outputs > 3 && ox_infer_set_output(c, 3, dt, qkd, 4)) return -1;
    return 0;
}

/* ---- FlexAttention (ai.onnx.preview) ---- */

static int infer_flex_attention(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "Q") || ox_infer_need_tensor(c, 1, "K") ||
        ox_infer_need_tensor(c, 2, "V"))
        return -1;
    if (ox_infer_check_dtype(c, 0, "Q", FLOATS, 4) || ox_infer_same_dtype(c, 0, 1, "Q", "K") ||
        ox_infer_same_dtype(c, 0, 2, "Q", "V"))
        return -1;
    const ir_type *q = ox_infer_in(c, 0), *k = ox_infer_in(c, 1), *v = ox_infer_in(c, 2);
    if (q->rank < 0 || k->rank < 0 || v->rank < 0)
        return ox_infer_set_output(c, 0, q->dtype, NULL, -1);
    if (q->rank != 4 || k->rank != 4 || v->rank != 4)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "FlexAttention: Q, K and V must be 4-D, got ranks %d, %d, %d",
                             q->rank, k->rank, v->rank);
    if (q->dims[1] > 0 && k->dims[1] > 0 && q->dims[1] % k->dims[1] != 0)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "FlexAttention: q heads (%lld) must be a multiple of kv heads (%lld)",
                             (long long)q->dims[1], (long long)k->dims[1]);
    if (q->dims[3] >= 0 && k->dims[3] >= 0 && q->dims[3] != k->dims[3])
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "FlexAttention: Q head size %lld differs from K head size %lld",
                             (long long)q->dims[3], (long long)k->dims[3]);
    int64_t sp = ir_attr_int(c->node, "softmax_precision", 0);
    if (ir_node_attr(c->node, "softmax_precision") && sp != ONYX_FLOAT32 && sp != ONYX_FLOAT16 &&
        sp != ONYX_FLOAT64 && sp != ONYX_BFLOAT16)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "FlexAttention: softmax_precision %lld is not a float type",
                             (long long)sp);
    int64_t y[4] = {q->dims[0], q->dims[1], q->dims[2], v->dims[3]};
    return ox_infer_set_output(c, 0, q->dtype, y, 4);
}

/* ---- RotaryEmbedding-23 (and onyx.RotaryEmbedding, src/ops/onyx_attention.c) ---- */

int ox_infer_rotary_embedding(ox_infer_ctx *c) {
    static const ox_dtype RT[] = {ONYX_FLOAT32, ONYX_FLOAT16, ONYX_BFLOAT16};
    if (ox_infer_need_tensor(c, 0, "input") || ox_infer_need_tensor(c, 1, "cos_cache") ||
        ox_infer_need_tensor(c, 2, "sin_cache"))
        return -1;
    if (ox_infer_check_dtype(c, 0, "input", RT, 3) ||
        ox_infer_same_dtype(c, 0, 1, "input", "cos_cache") ||
        ox_infer_same_dtype(c, 0, 2, "input", "sin_cache"))
        return -1;
    if (ox_infer_in(c, 3)) {
        static const ox_dtype I64[] = {ONYX_INT64};
        if (ox_infer_check_dtype(c, 3, "position_ids", I64, 1)) return -1;
    }
    const ir_type *x = ox_infer_in(c, 0);
    if (x->rank >= 0 && x->rank != 3 && x->rank != 4)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "RotaryEmbedding: input must be 3-D or 4-D, got rank %d", x->rank);
    if (x->rank == 3 && ir_attr_int(c->node, "num_heads", 0) <= 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "RotaryEmbedding: a 3-D input needs a positive num_heads attribute");
    if (ir_attr_int(c->node, "rotary_embedding_dim", 0) < 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "RotaryEmbedding: rotary_embedding_dim must not be negative");
    return ox_infer_same_as_input(c, 0, 0);
}

/* ---- LinearAttention-27 ---- */

static int infer_linear_attention(ox_infer_ctx *c) {
    static const ox_dtype LT[] = {ONYX_FLOAT16, ONYX_FLOAT32, ONYX_BFLOAT16};
    const ir_node *n = c->node;
    if (ox_infer_need_tensor(c, 0, "query") || ox_infer_need_tensor(c, 1, "key") ||
        ox_infer_need_tensor(c, 2, "value"))
        return -1;
    if (ox_infer_check_dtype(c, 0, "query", LT, 3) ||
        ox_infer_same_dtype(c, 0, 1, "query", "key") ||
        ox_infer_same_dtype(c, 0, 2, "query", "value"))
        return -1;
    if (ox_infer_in(c, 3) && ox_infer_check_dtype(c, 3, "past_state", LT, 3)) return -1;
    if (ox_infer_in(c, 4) && ox_infer_same_dtype(c, 0, 4, "query", "decay")) return -1;
    if (ox_infer_in(c, 5) && ox_infer_same_dtype(c, 0, 5, "query", "beta")) return -1;
    const char *rule = ir_attr_string(n, "update_rule", "gated_delta");
    int gating = !strcmp(rule, "gated") || !strcmp(rule, "gated_delta");
    int delta = !strcmp(rule, "delta") || !strcmp(rule, "gated_delta");
    if (!gating && !delta && strcmp(rule, "linear") != 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "LinearAttention: unknown update_rule '%s' (expected linear, gated, "
                             "delta or gated_delta)",
                             rule);
    if (gating != (ox_infer_in(c, 4) != NULL))
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "LinearAttention: update_rule '%s' %s decay",
                             rule, gating ? "requires" : "forbids");
    if (delta != (ox_infer_in(c, 5) != NULL))
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "LinearAttention: update_rule '%s' %s beta",
                             rule, delta ? "requires" : "forbids");
    int64_t hq = ir_attr_int(n, "q_num_heads", 0), hkv = ir_attr_int(n, "kv_num_heads", 0);
    if (hq <= 0 || hkv <= 0 || hq % hkv != 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "LinearAttention: q_num_heads (%lld) must be a positive multiple of "
                             "kv_num_heads (%lld)",
                             (long long)hq, (long long)hkv);
    const ir_type *q = ox_infer_in(c, 0), *k = ox_infer_in(c, 1), *v = ox_infer_in(c, 2);
    ox_dtype dt = q->dtype;
    ox_dtype st = ox_infer_in(c, 3) ? ox_infer_in_dtype(c, 3) : dt;
    if (q->rank < 0 || k->rank < 0 || v->rank < 0) {
        if (ox_infer_set_output(c, 0, dt, NULL, -1)) return -1;
        return ox_infer_set_output(c, 1, st, NULL, -1);
    }
    if (q->rank != 3 || k->rank != 3 || v->rank != 3)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "LinearAttention: query, key and value must be 3-D (B, T, H*D)");
    int64_t dk, dkk, dv;
    if (split_heads(c, q->dims[2], hq, "query", &dk) || split_heads(c, k->dims[2], hkv, "key", &dkk) ||
        split_heads(c, v->dims[2], hkv, "value", &dv))
        return -1;
    if (dk >= 0 && dkk >= 0 && dk != dkk)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "LinearAttention: query head size %lld differs from key head size %lld",
                             (long long)dk, (long long)dkk);
    int64_t y[3] = {q->dims[0], q->dims[1], mul_dim(hq, dv)};
    int64_t s[4] = {q->dims[0], hkv, dk, dv};
    if (ox_infer_set_output(c, 0, dt, y, 3)) return -1;
    return ox_infer_set_output(c, 1, st, s, 4);
}

/* ---- SwiGLU-28 ---- */

static int infer_swiglu(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "A") || ox_infer_need_tensor(c, 1, "B")) return -1;
    if (ox_infer_check_dtype(c, 0, "A", FLOATS, 4) || ox_infer_same_dtype(c, 0, 1, "A", "B"))
        return -1;
    const ir_type *a = ox_infer_in(c, 0), *b = ox_infer_in(c, 1);
    if (a->rank >= 0 && b->rank >= 0) {
        int same = a->rank == b->rank;
        for (int i = 0; same && i < a->rank; i++)
            if (a->dims[i] >= 0 && b->dims[i] >= 0 && a->dims[i] != b->dims[i]) same = 0;
        if (!same) {
            char sa[128], sb[128];
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "SwiGLU: A %s and B %s must have the same shape (no broadcasting)",
                                 ox_shape_str(a->dims, a->rank, sa, sizeof sa),
                                 ox_shape_str(b->dims, b->rank, sb, sizeof sb));
        }
    }
    return ox_infer_same_as_input(c, 0, a->rank >= 0 ? 0 : 1);
}

static const ox_op_schema OPS[] = {
    {"", "Attention", 23, 25, 3, 7, 1, 4, infer_attention},
    {"", "RotaryEmbedding", 23, 23, 3, 4, 1, 1, ox_infer_rotary_embedding},
    {"", "LinearAttention", 27, 27, 3, 6, 2, 2, infer_linear_attention},
    {"", "SwiGLU", 28, 28, 2, 2, 1, 1, infer_swiglu},
    {"ai.onnx.preview", "FlexAttention", 1, 1, 3, 3, 1, 1, infer_flex_attention},
};

const ox_op_table ox_ops_attention = {OPS, sizeof OPS / sizeof OPS[0]};
