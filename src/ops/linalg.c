/* Schemas of the linear-algebra operators: Gemm, MatMul and their
 * integer and quantized forms, Einsum and Det. */
#include <ctype.h>
#include <string.h>

#include "core/checked.h"
#include "ops/op.h"

extern const ox_op_table ox_ops_linalg;

/* ---- small helpers ---- */

/* Merges two facts about the same dimension; -1 when they contradict. */
static int merge_dim(int64_t a, int64_t b, int64_t *out) {
    if (a >= 0 && b >= 0 && a != b) return -1;
    *out = a >= 0 ? a : b;
    return 0;
}

/* Batch dimensions of a numpy matmul: a and b are the leading (batch)
 * dims of the two operands. */
static int matmul_batch(ox_infer_ctx *c, const int64_t *a, int ra, const int64_t *b, int rb,
                        int64_t *out, int *rout) {
    if (ox_broadcast_dims(a, ra, b, rb, out, rout) != 0) {
        char sa[128], sb[128];
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: batch dimensions %s and %s cannot be broadcast", c->node->op_type,
                             ox_shape_str(a, ra, sa, sizeof sa),
                             ox_shape_str(b, rb, sb, sizeof sb));
    }
    return 0;
}

/* Output shape of numpy matmul for inputs ia and ib; dtype is the
 * output element type. */
static int infer_matmul_shape(ox_infer_ctx *c, int ia, int ib, ox_dtype dtype) {
    const ir_type *a = ox_infer_in(c, ia), *b = ox_infer_in(c, ib);
    if (a->rank < 0 || b->rank < 0) return ox_infer_set_output(c, 0, dtype, NULL, -1);
    if (a->rank == 0 || b->rank == 0)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: inputs must have rank >= 1, got ranks %d and %d",
                             c->node->op_type, a->rank, b->rank);
    int64_t ad[OX_MAX_RANK + 1], bd[OX_MAX_RANK + 1];
    int ra = a->rank, rb = b->rank;
    if (ra == 1) {
        ad[0] = 1;
        ad[1] = a->dims[0];
        ra = 2;
    } else {
        memcpy(ad, a->dims, (size_t)ra * sizeof(int64_t));
    }
    if (rb == 1) {
        bd[0] = b->dims[0];
        bd[1] = 1;
        rb = 2;
    } else {
        memcpy(bd, b->dims, (size_t)rb * sizeof(int64_t));
    }
    int64_t k;
    if (merge_dim(ad[ra - 1], bd[rb - 2], &k) != 0)
        return ox_infer_fail(
            c, ox_infer_bad_code(c),
            "%s: inner dimensions do not match: A has %lld columns, B has %lld rows",
            c->node->op_type, (long long)ad[ra - 1], (long long)bd[rb - 2]);
    int64_t out[OX_MAX_RANK + 2];
    int r;
    if (matmul_batch(c, ad, ra - 2, bd, rb - 2, out, &r) != 0) return -1;
    if (a->rank != 1) out[r++] = ad[ra - 2];
    if (b->rank != 1) out[r++] = bd[rb - 1];
    if (r > OX_MAX_RANK)
        return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED, "%s: output rank %d exceeds onyx's limit",
                             c->node->op_type, r);
    return ox_infer_set_output(c, 0, dtype, out, r);
}

/* ---- Gemm ---- */

static const ox_dtype GEMM_TYPES[] = {ONYX_FLOAT16, ONYX_FLOAT32, ONYX_FLOAT64, ONYX_BFLOAT16,
                                      ONYX_INT32,   ONYX_INT64,   ONYX_UINT32,  ONYX_UINT64};

static int infer_gemm(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "A") || ox_infer_need_tensor(c, 1, "B")) return -1;
    if (c->node->opset < 11 && !ox_infer_in(c, 2))
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Gemm: input C is required before opset 11");
    if (ox_infer_check_dtype(c, 0, "A", GEMM_TYPES, 8) || ox_infer_same_dtype(c, 0, 1, "A", "B"))
        return -1;
    if (ox_infer_in(c, 2) &&
        (ox_infer_need_tensor(c, 2, "C") || ox_infer_same_dtype(c, 0, 2, "A", "C")))
        return -1;
    const ir_type *a = ox_infer_in(c, 0), *b = ox_infer_in(c, 1), *cc = ox_infer_in(c, 2);
    ox_dtype dt = a->dtype;
    if ((a->rank >= 0 && a->rank != 2) || (b->rank >= 0 && b->rank != 2))
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "Gemm: A and B must be 2-D, got ranks %d and %d", a->rank, b->rank);
    int ta = ir_attr_int(c->node, "transA", 0) != 0, tb = ir_attr_int(c->node, "transB", 0) != 0;
    int64_t m = -1, n = -1, ka = -1, kb = -1, k;
    if (a->rank == 2) {
        m = a->dims[ta ? 1 : 0];
        ka = a->dims[ta ? 0 : 1];
    }
    if (b->rank == 2) {
        kb = b->dims[tb ? 1 : 0];
        n = b->dims[tb ? 0 : 1];
    }
    if (merge_dim(ka, kb, &k) != 0)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "Gemm: op(A) has %lld columns but op(B) has %lld rows", (long long)ka,
                             (long long)kb);
    if (cc && cc->rank >= 0) {
        if (cc->rank > 2)
            return ox_infer_fail(c, ox_infer_bad_code(c), "Gemm: C must have rank <= 2, got %d",
                                 cc->rank);
        int64_t want[2] = {m, n};
        for (int i = 0; i < cc->rank; i++) {
            int64_t d = cc->dims[i], w = want[2 - cc->rank + i];
            if (d >= 0 && w >= 0 && d != 1 && d != w)
                return ox_infer_fail(
                    c, ox_infer_bad_code(c),
                    "Gemm: C dimension %lld cannot be broadcast to the output's %lld", (long long)d,
                    (long long)w);
        }
    }
    int64_t dims[2] = {m, n};
    return ox_infer_set_output(c, 0, dt, dims, 2);
}

/* ---- MatMul ---- */

static int infer_matmul(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "A") || ox_infer_need_tensor(c, 1, "B")) return -1;
    if (ox_infer_check_dtype(c, 0, "A", GEMM_TYPES, 8) || ox_infer_same_dtype(c, 0, 1, "A", "B"))
        return -1;
    return infer_matmul_shape(c, 0, 1, ox_infer_in(c, 0)->dtype);
}

/* ---- MatMulInteger ---- */

static const ox_dtype Q8_TYPES[] = {ONYX_INT8, ONYX_UINT8};

/* The matrices of t (the product of its dims but the last two); -1 when
 * some is unknown. */
static int64_t matrices_of(const ir_type *t) {
    if (!t) return -1;
    int64_t n = 1;
    for (int i = 0; i + 2 < t->rank; i++) {
        if (t->dims[i] < 0 || !ox_mul_i64(n, t->dims[i], &n)) return -1;
    }
    return n;
}

/* A zero point must be a scalar or a 1-D tensor of up to `len` entries
 * (per row of A / per column of B), or, as the spec allows for an N-D
 * tensor, one per row (column) of each of its matrices ([D1, D2, M, 1]);
 * its type must match its tensor's. */
static int check_zero_point(ox_infer_ctx *c, int zi, int ti, const char *what, int64_t len) {
    const ir_type *z = ox_infer_in(c, zi), *t = ox_infer_in(c, ti);
    if (!z) return 0;
    if (z->dtype != ONYX_UNDEFINED && t && t->dtype != ONYX_UNDEFINED && z->dtype != t->dtype)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s has type %s but its tensor is %s",
                             c->node->op_type, what, ox_dtype_name(z->dtype),
                             ox_dtype_name(t->dtype));
    if (z->rank > 1 && ox_numel(z->dims, z->rank) != 1) {
        /* a per-row/column zero point broadcast like the matrix (M x 1 or 1 x N) */
        int64_t n = 1;
        int known = 1;
        for (int i = 0; i < z->rank; i++)
            if (z->dims[i] < 0) known = 0;
        if (known && !ox_numel_checked(z->dims, z->rank, &n))
            return ox_infer_fail(c, ox_infer_bad_code(c), "%s: the element count of %s overflows int64",
                                 c->node->op_type, what);
        const int64_t mats = matrices_of(t);
        if (known && len >= 0 && n != len && !(mats > 1 && n / mats == len && n % mats == 0))
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "%s: %s has %lld values, expected 1 or %lld", c->node->op_type,
                                 what, (long long)n, (long long)len);
        return 0;
    }
    if (z->rank == 1 && z->dims[0] >= 0 && len >= 0 && z->dims[0] != 1 && z->dims[0] != len)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s has %lld values, expected 1 or %lld",
                             c->node->op_type, what, (long long)z->dims[0], (long long)len);
    return 0;
}

static int64_t rows_of(const ir_type *t) {
    if (!t || t->rank < 1) return -1;
    return t->rank == 1 ? 1 : t->dims[t->rank - 2];
}

static int64_t cols_of(const ir_type *t) {
    if (!t || t->rank < 1) return -1;
    return t->rank == 1 ? 1 : t->dims[t->rank - 1];
}

static int infer_matmul_integer(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "A") || ox_infer_need_tensor(c, 1, "B")) return -1;
    if (ox_infer_check_dtype(c, 0, "A", Q8_TYPES, 2) ||
        ox_infer_check_dtype(c, 1, "B", Q8_TYPES, 2))
        return -1;
    if (check_zero_point(c, 2, 0, "a_zero_point", rows_of(ox_infer_in(c, 0))) ||
        check_zero_point(c, 3, 1, "b_zero_point", cols_of(ox_infer_in(c, 1))))
        return -1;
    return infer_matmul_shape(c, 0, 1, ONYX_INT32);
}

/* ---- QLinearMatMul ---- */

/* Scales are float32 up to QLinearMatMul-10; version 21 also allows
 * float16 and bfloat16, the same type for all three scales. */
static int check_scale(ox_infer_ctx *c, int i, const char *what) {
    const ir_type *t = ox_infer_in(c, i);
    int v21 = ox_op_since_version(c->node->domain, c->node->op_type, c->node->opset) >= 21;
    if (t->dtype == ONYX_UNDEFINED || t->dtype == ONYX_FLOAT32) return 0;
    if (v21 && (t->dtype == ONYX_FLOAT16 || t->dtype == ONYX_BFLOAT16)) return 0;
    return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s must be %s, got %s", c->node->op_type,
                         what, v21 ? "float32, float16 or bfloat16" : "float32",
                         ox_dtype_name(t->dtype));
}

/* Element types QLinearMatMul-21 allows beyond int8/uint8 (the float8
 * formats) are not handled yet: name them in the error. */
static int check_q8_or_fail(ox_infer_ctx *c, int i, const char *what) {
    ox_dtype t = ox_infer_in_dtype(c, i);
    if (t == ONYX_UNDEFINED || t == ONYX_INT8 || t == ONYX_UINT8) return 0;
    return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED,
                         "QLinearMatMul: %s has element type %s; onyx handles int8 and uint8 only",
                         what, ox_dtype_name(t));
}

static int infer_qlinear_matmul(ox_infer_ctx *c) {
    static const char *const names[8] = {"a", "a_scale", "a_zero_point", "b",
                                   "b_scale", "b_zero_point", "y_scale", "y_zero_point"};
    for (int i = 0; i < 8; i++)
        if (ox_infer_need_tensor(c, i, names[i])) return -1;
    if (check_q8_or_fail(c, 0, "a") || check_q8_or_fail(c, 3, "b") ||
        check_q8_or_fail(c, 7, "y_zero_point"))
        return -1;
    if (check_scale(c, 1, "a_scale") || check_scale(c, 4, "b_scale") || check_scale(c, 6, "y_scale"))
        return -1;
    if (ox_infer_same_dtype(c, 1, 4, "a_scale", "b_scale") ||
        ox_infer_same_dtype(c, 1, 6, "a_scale", "y_scale"))
        return -1;
    if (check_zero_point(c, 2, 0, "a_zero_point", rows_of(ox_infer_in(c, 0))) ||
        check_zero_point(c, 5, 3, "b_zero_point", cols_of(ox_infer_in(c, 3))))
        return -1;
    const ir_type *yz = ox_infer_in(c, 7);
    if (yz->rank > 0 && ox_numel(yz->dims, yz->rank) > 1)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "QLinearMatMul: y_zero_point must be a scalar");
    return infer_matmul_shape(c, 0, 3, yz->dtype);
}

/* ---- Det ---- */

static const ox_dtype FLOAT_TYPES[] = {ONYX_FLOAT16, ONYX_FLOAT32, ONYX_FLOAT64, ONYX_BFLOAT16};

static int infer_det(ox_infer_ctx *c) {
    /* bfloat16 (last in FLOAT_TYPES) joins in Det-22 */
    int n_types = ox_op_since_version(c->node->domain, "Det", c->node->opset) >= 22 ? 4 : 3;
    if (ox_infer_need_tensor(c, 0, "X") || ox_infer_check_dtype(c, 0, "X", FLOAT_TYPES, n_types))
        return -1;
    const ir_type *x = ox_infer_in(c, 0);
    if (x->rank < 0) return ox_infer_set_output(c, 0, x->dtype, NULL, -1);
    if (x->rank < 2)
        return ox_infer_fail(c, ox_infer_bad_code(c), "Det: input must have rank >= 2, got %d",
                             x->rank);
    int64_t a = x->dims[x->rank - 2], b = x->dims[x->rank - 1], n;
    if (merge_dim(a, b, &n) != 0)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "Det: matrices must be square, got %lld x %lld", (long long)a,
                             (long long)b);
    return ox_infer_set_output(c, 0, x->dtype, x->dims, x->rank - 2);
}

/* ---- Einsum ---- */

/* Parsed equation. Letters are numbered 0..51 (a-z, A-Z); the ellipsis
 * stands for `ell_rank` broadcast dimensions. Each operand term lists
 * its labels in order, with -1 marking where the ellipsis sits. */
typedef struct einsum_term {
    int n;           /* number of entries, ellipsis counted once */
    int labels[OX_MAX_RANK + 1];
    int has_ellipsis;
} einsum_term;

static int einsum_letter(int ch) {
    if (ch >= 'a' && ch <= 'z') return ch - 'a';
    if (ch >= 'A' && ch <= 'Z') return 26 + ch - 'A';
    return -1;
}

static int einsum_parse_term(ox_infer_ctx *c, const char **p, const char *end, einsum_term *t) {
    t->n = 0;
    t->has_ellipsis = 0;
    const char *s = *p;
    while (s < end && *s != ',' && *s != '-') {
        if (isspace((unsigned char)*s)) {
            s++;
            continue;
        }
        int lab;
        if (*s == '.') {
            if (end - s < 3 || s[1] != '.' || s[2] != '.' || t->has_ellipsis)
                return ox_infer_fail(c, ONYX_INVALID_MODEL, "Einsum: malformed ellipsis in equation");
            t->has_ellipsis = 1;
            lab = -1;
            s += 3;
        } else {
            lab = einsum_letter((unsigned char)*s);
            if (lab < 0)
                return ox_infer_fail(c, ONYX_INVALID_MODEL, "Einsum: unexpected character '%c' in equation",
                                     *s);
            s++;
        }
        if (t->n >= OX_MAX_RANK + 1)
            return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED, "Einsum: too many labels in one term");
        t->labels[t->n++] = lab;
    }
    *p = s;
    return 0;
}

static int infer_einsum(ox_infer_ctx *c) {
    const char *eq = ir_attr_string(c->node, "equation", NULL);
    if (!eq) return ox_infer_fail(c, ONYX_INVALID_MODEL, "Einsum: attribute 'equation' is required");
    int n_in = ir_node_input_count(c->node);
    if (n_in < 1) return ox_infer_fail(c, ONYX_INVALID_MODEL, "Einsum: needs at least one input");
    if (n_in > OX_MAX_RANK)
        return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED, "Einsum: at most %d operands are supported",
                             OX_MAX_RANK);
    static const ox_dtype ET[] = {ONYX_UINT8, ONYX_UINT16, ONYX_UINT32,  ONYX_UINT64,
                                  ONYX_INT8,  ONYX_INT16,  ONYX_INT32,   ONYX_INT64,
                                  ONYX_FLOAT16, ONYX_FLOAT32, ONYX_FLOAT64, ONYX_BFLOAT16};
    /* bfloat16 (last in ET) joins in Einsum-28 */
    int n_types = ox_op_since_version(c->node->domain, "Einsum", c->node->opset) >= 28 ? 12 : 11;
    for (int i = 0; i < n_in; i++) {
        if (ox_infer_need_tensor(c, i, "operand")) return -1;
        if (i && ox_infer_same_dtype(c, 0, i, "operand 0", "another operand")) return -1;
    }
    if (ox_infer_check_dtype(c, 0, "operand", ET, n_types)) return -1;
    ox_dtype dt = ox_infer_in(c, 0)->dtype;

    const char *end = eq + strlen(eq), *arrow = strstr(eq, "->");
    const char *lhs_end = arrow ? arrow : end;
    einsum_term terms[OX_MAX_RANK];
    int nt = 0;
    const char *p = eq;
    for (;;) {
        if (nt >= n_in)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Einsum: equation has more terms than the %d inputs",
                                 n_in);
        if (einsum_parse_term(c, &p, lhs_end, &terms[nt])) return -1;
        nt++;
        if (p < lhs_end && *p == ',') {
            p++;
            continue;
        }
        if (p != lhs_end)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "Einsum: malformed equation '%s'", eq);
        break;
    }
    if (nt != n_in)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "Einsum: equation has %d terms but there are %d inputs",
                             nt, n_in);
    int64_t label_dim[52];
    int label_count[52] = {0};
    for (int i = 0; i < 52; i++) label_dim[i] = -1;
    int ell_rank = 0, ell_known = 1;
    int64_t ell_dims[OX_MAX_RANK];
    for (int i = 0; i < OX_MAX_RANK; i++) ell_dims[i] = 1;
    for (int i = 0; i < nt; i++) {
        const ir_type *t = ox_infer_in(c, i);
        const einsum_term *tm = &terms[i];
        int fixed = tm->n - tm->has_ellipsis;
        if (t->rank < 0) {
            if (tm->has_ellipsis) ell_known = 0;
            for (int k = 0; k < tm->n; k++)
                if (tm->labels[k] >= 0) label_count[tm->labels[k]]++;
            continue;
        }
        if ((!tm->has_ellipsis && t->rank != fixed) || (tm->has_ellipsis && t->rank < fixed))
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "Einsum: operand %d has rank %d but its term has %d labels", i,
                                 t->rank, fixed);
        int er = t->rank - fixed, d = 0;
        for (int k = 0; k < tm->n; k++) {
            if (tm->labels[k] < 0) {
                /* right-aligned broadcast of the ellipsis dims */
                if (er > ell_rank) {
                    int64_t tmp[OX_MAX_RANK];
                    for (int e = 0; e < er; e++)
                        tmp[e] = e < er - ell_rank ? 1 : ell_dims[e - (er - ell_rank)];
                    memcpy(ell_dims, tmp, sizeof tmp);
                    ell_rank = er;
                }
                for (int e = 0; e < er; e++) {
                    int64_t *slot = &ell_dims[ell_rank - er + e], v = t->dims[d + e];
                    if (*slot == 1 || *slot < 0)
                        *slot = (*slot < 0 && v == 1) ? -1 : v;
                    else if (v != 1 && v >= 0 && v != *slot)
                        return ox_infer_fail(
                            c, ox_infer_bad_code(c),
                            "Einsum: ellipsis dimensions of operand %d do not broadcast", i);
                }
                d += er;
                continue;
            }
            int l = tm->labels[k];
            int64_t v = t->dims[d++];
            label_count[l]++;
            if (label_dim[l] >= 0 && v >= 0 && label_dim[l] != v) {
                return ox_infer_fail(
                    c, ox_infer_bad_code(c), "Einsum: label '%c' has sizes %lld and %lld",
                    l < 26 ? 'a' + l : 'A' + l - 26, (long long)label_dim[l], (long long)v);
            } else if (label_dim[l] < 0) {
                label_dim[l] = v;
            }
        }
    }
    int64_t out[OX_MAX_RANK];
    int r = 0;
    if (arrow) {
        einsum_term ot;
        const char *q = arrow + 2;
        if (einsum_parse_term(c, &q, end, &ot)) return -1;
        if (q != end) return ox_infer_fail(c, ONYX_INVALID_MODEL, "Einsum: malformed output term");
        for (int k = 0; k < ot.n; k++) {
            int l = ot.labels[k];
            if (l < 0) {
                if (!ell_known) return ox_infer_set_output(c, 0, dt, NULL, -1);
                for (int e = 0; e < ell_rank; e++) out[r++] = ell_dims[e];
                continue;
            }
            if (!label_count[l])
                return ox_infer_fail(c, ONYX_INVALID_MODEL,
                                     "Einsum: output label '%c' does not appear in any input",
                                     l < 26 ? 'a' + l : 'A' + l - 26);
            for (int j = 0; j < k; j++)
                if (ot.labels[j] == l)
                    return ox_infer_fail(c, ONYX_INVALID_MODEL, "Einsum: output label repeated");
            if (r >= OX_MAX_RANK)
                return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED, "Einsum: output rank too large");
            out[r++] = label_dim[l];
        }
    } else {
        if (!ell_known) return ox_infer_set_output(c, 0, dt, NULL, -1);
        for (int e = 0; e < ell_rank; e++) out[r++] = ell_dims[e];
        /* implicit output: labels used once, in ASCII order (upper case first) */
        for (int o = 0; o < 52; o++) {
            int l = o < 26 ? o + 26 : o - 26;
            if (label_count[l] == 1) {
                if (r >= OX_MAX_RANK)
                    return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED, "Einsum: output rank too large");
                out[r++] = label_dim[l];
            }
        }
    }
    for (int i = 0; i < nt; i++)
        if (ox_infer_in(c, i)->rank < 0) {
            /* the labels fix the rank; unknown sizes stay -1 */
            int64_t tmp[OX_MAX_RANK];
            for (int k = 0; k < r; k++) tmp[k] = -1;
            return ox_infer_set_output(c, 0, dt, tmp, r);
        }
    return ox_infer_set_output(c, 0, dt, out, r);
}

static const ox_op_schema OPS[] = {
    {"", "Gemm", 1, 17, 2, 3, 1, 1, infer_gemm},
    {"", "MatMul", 1, 17, 2, 2, 1, 1, infer_matmul},
    {"", "MatMulInteger", 10, 17, 2, 4, 1, 1, infer_matmul_integer},
    {"", "QLinearMatMul", 10, 21, 8, 8, 1, 1, infer_qlinear_matmul},
    {"", "Det", 11, 22, 1, 1, 1, 1, infer_det},
    {"", "Einsum", 12, 28, 1, -1, 1, 1, infer_einsum},
};

const ox_op_table ox_ops_linalg = {OPS, sizeof OPS / sizeof OPS[0]};
