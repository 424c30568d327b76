/* CPU kernels of the Attention, RotaryEmbedding and the other
 * transformer-block operators of ai.onnx (opset 23+) and of FlexAttention
 * (ai.onnx.preview). Attention works on blocks of query rows: for each
 * (batch, head, block) the scores Q K^T go through the shared GEMM into a
 * rows x total_sequence buffer, get softcap, the combined bias (mask,
 * causal frontier, sliding window, padding) and softmax in place, and a
 * second GEMM multiplies them into V. The other kernels are in
 * attention_ops.c. */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "ep/cpu/kernels/attention_ops.h"
#include "ep/cpu/kernels/elementwise.h"
#include "ep/cpu/kernels/gemm.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"
#include "ops/op.h"

extern const ox_kernel_table ox_cpu_kernels_attention;

/* Query rows per work item: bounds the score buffer at ATT_BLOCK x
 * total_sequence_length and gives the thread pool enough items. */
#define ATT_BLOCK 64

/* Everything one Attention node needs to know, resolved from its inputs
 * and attributes. Shapes are in the 4-D view [B, heads, seq, head_size]. */
typedef struct att_plan {
    int64_t B, hq, hkv, sq, skv, past, total, dk, dv;
    int rank3;                /* inputs and Y are 3-D [B, seq, heads * size] */
    int mode;                 /* qk_matmul_output_mode */
    int softmax_double;       /* softmax computed in double */
    ox_cpu_isa isa;           /* the float softmax row's (ox_softmax_row_for) */
    ox_dtype t;               /* type of Q, K, Y */
    ox_dtype softmax_t;       /* softmax_precision, or UNDEFINED */
    double scale, softcap;
    int causal;
    int64_t left, right;      /* window sizes, -1 unbounded */
    const ox_tensor *mask;    /* attn_mask or NULL */
    int mask_bool;
    int64_t mlen, ms[4];      /* mask's last dim; strides over [B, hq, sq, total], 0 = broadcast */
    const int64_t *nonpad;    /* nonpad_kv_seqlen or NULL */
} att_plan;

/* Rounds v to the precision of t (float16 and bfloat16 only). */
static inline float att_round(ox_dtype t, float v) {
    if (t == ONYX_FLOAT16) return ox_half_to_float(ox_float_to_half(v));
    if (t == ONYX_BFLOAT16) return ox_bf16_to_float(ox_float_to_bf16(v));
    return v;
}

/* A window wider than every query-key distance allows every key, as the
 * unbounded -1 does; clamping it to total + sq + 1 (the widest distance,
 * with an external cache's negative offset) keeps the frontier arithmetic
 * pos +- window within int64 for attribute values up to INT64_MAX. */
static void att_clamp_windows(att_plan *p) {
    int64_t wide;
    if (ox_add_i64(p->total, p->sq, &wide) || ox_add_i64(wide, 1, &wide)) wide = INT64_MAX / 4;
    if (p->left > wide) p->left = wide;
    if (p->right > wide) p->right = wide;
}

/* Keys before the query block: the past cache, or for an external cache
 * the valid keys minus the queries (may be negative). */
static inline int64_t att_offset(const att_plan *p, int64_t b) {
    return p->nonpad && !p->past ? p->nonpad[b] - p->sq : p->past;
}

/* Keys [0, n) that query rows up to `last` of batch b may attend: the
 * keys past the causal or right-window frontier, the padding and a short
 * mask are -inf for every row, so their scores need not be computed. */
static int64_t att_live_cols(const att_plan *p, int64_t b, int64_t last) {
    int64_t n = p->total;
    if (p->nonpad && p->nonpad[b] < n) n = p->nonpad[b];
    if (p->mask && p->mlen < n) n = p->mlen;
    if (p->causal || p->right >= 0) {
        int64_t lim = last + att_offset(p, b) + 1 + (p->causal ? 0 : p->right);
        if (lim < n) n = lim;
    }
    return n < 0 ? 0 : n;
}

/* Keys [*lo, *hi) (within [0, n)) that row i of batch b may attend as
 * far as the causal frontier, the window, the padding and a short mask
 * go: each of these rules allows one interval of keys. */
static void att_row_range(const att_plan *p, int64_t b, int64_t i, int64_t n, int64_t *lo,
                          int64_t *hi) {
    int64_t pos = i + att_offset(p, b), l = 0, h = n;
    if (p->mask && p->mlen < h) h = p->mlen; /* a short mask is padded with -inf */
    if (p->nonpad && p->nonpad[b] < h) h = p->nonpad[b];
    if (p->causal && pos + 1 < h) h = pos + 1;
    if (p->right >= 0 && pos + p->right + 1 < h) h = pos + p->right + 1;
    if (p->left >= 0 && pos - p->left > l) l = pos - p->left;
    if (h < l) h = l;
    *lo = l < n ? l : n;
    *hi = h < n ? h : n;
}

/* Additive value of mask element off: 0 or -inf for a boolean mask. */
static inline double att_mask_at(const att_plan *p, int64_t off) {
    const void *d = p->mask->data;
    if (p->mask_bool) return ((const uint8_t *)d)[off] ? 0.0 : -INFINITY;
    if (p->mask->dtype == ONYX_FLOAT32) return ((const float *)d)[off];
    return ox_get_f64(d, p->mask->dtype, (size_t)off);
}

/* Float softmax of a row in place (see att_softmax): the Softmax
 * kernel's row (ox_softmax_row_for, 16 lanes on AVX-512 machines), so an
 * Attention node's probabilities have the Softmax operator's bits, after
 * a four-lane scan for the maximum, since a row without a finite one
 * becomes zeros here where that row would give NaN. A four-lane row of
 * its own, with its own exp, took two thirds of the kernel's time on
 * DETR's encoder shape (4 heads, 336 tokens, 16 per head: 1.6 ms). */
static void att_softmax_row(float *x, int64_t n, ox_cpu_isa isa) {
    int64_t j = 0;
    float mx = -INFINITY;
    if (n >= 16) {
        /* four independent maxima: one chained through every load was
         * most of the scan's time */
        ox_v4f m[4];
        for (int a = 0; a < 4; a++) m[a] = OX_V4F_SPLAT(-INFINITY);
        for (; j + 16 <= n; j += 16)
            for (int a = 0; a < 4; a++) {
                ox_v4f v;
                OX_V4F_LOAD(v, x + j + 4 * a);
                ox_v4i gt = v > m[a];
                m[a] = (ox_v4f)(((ox_v4i)v & gt) | ((ox_v4i)m[a] & ~gt));
            }
        for (int a = 0; a < 4; a++)
            for (int l = 0; l < 4; l++)
                if (m[a][l] > mx) mx = m[a][l];
    }
    for (; j < n; j++)
        if (x[j] > mx) mx = x[j];
    if (mx == -INFINITY) {
        memset(x, 0, sizeof(float) * (size_t)n);
        return;
    }
    ox_softmax_row_for(isa, n)(x, x, n, 0);
}

#define AT float
#define AT_NAME(x) x##_f32
#define AT_SOFTMAX_FAST att_softmax_row
#define AT_GEMM ox_gemm_f32
#define AT_TANH tanhf
#include "ep/cpu/kernels/attention_core.h"
#undef AT
#undef AT_NAME
#undef AT_GEMM
#undef AT_TANH
#undef AT_SOFTMAX_FAST

#define AT double
#define AT_NAME(x) x##_f64
#define AT_GEMM ox_gemm_f64
#define AT_TANH tanh
#include "ep/cpu/kernels/attention_core.h"
#undef AT
#undef AT_NAME
#undef AT_GEMM
#undef AT_TANH

/* Copies src ([B, S, H * D] when rank3, else [B, H, S, D]) into dst
 * [B, H, total, D] at sequence offset `at`. es is the element size. */
static void att_gather(void *dst, const void *src, size_t es, int64_t B, int64_t H, int64_t S,
                       int64_t D, int rank3, int64_t at, int64_t total) {
    unsigned char *d = dst;
    const unsigned char *s = src;
    size_t row = (size_t)D * es;
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++) {
            unsigned char *o = d + (size_t)(((b * H + h) * total + at) * D) * es;
            if (!rank3) {
                memcpy(o, s + (size_t)((b * H + h) * S * D) * es, (size_t)S * row);
                continue;
            }
            for (int64_t t = 0; t < S; t++)
                memcpy(o + (size_t)t * row, s + (size_t)(((b * S + t) * H + h) * D) * es, row);
        }
}

/* Product of non-negative dims, -1 on overflow. */
static int64_t att_mul(int64_t a, int64_t b, int64_t c, int64_t d) {
    int64_t v[4] = {a, b, c, d}, r = 1;
    for (int i = 0; i < 4; i++) {
        if (v[i] < 0 || (v[i] && r > INT64_MAX / v[i])) return -1;
        r *= v[i];
    }
    return r;
}

static int att_float(ox_dtype t) {
    return t == ONYX_FLOAT32 || t == ONYX_FLOAT64 || t == ONYX_FLOAT16 || t == ONYX_BFLOAT16;
}

/* Resolves dims, attributes and the mask view; fails on inconsistent
 * inputs (inference checked them when shapes were known at load). */
static int att_plan_make(ox_kernel_ctx *ctx, att_plan *p) {
    const ir_node *n = ctx->node;
    const ox_tensor *Q = ox_cpu_input(ctx, 0), *K = ox_cpu_input(ctx, 1), *V = ox_cpu_input(ctx, 2);
    const ox_tensor *M = ox_cpu_input(ctx, 3), *PK = ox_cpu_input(ctx, 4), *PV = ox_cpu_input(ctx, 5);
    const ox_tensor *NP = ox_cpu_input(ctx, 6);
    int ver = ox_op_since_version(n->domain, n->op_type, n->opset);
    memset(p, 0, sizeof *p);
    if (!Q || !K || !V)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Attention: Q, K and V are required");
    if (!att_float(Q->dtype) || K->dtype != Q->dtype || !att_float(V->dtype))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "Attention: Q and K must share a float type and V be float, got %s, %s, %s",
                              ox_dtype_name(Q->dtype), ox_dtype_name(K->dtype), ox_dtype_name(V->dtype));
    int r = Q->rank;
    if ((r != 3 && r != 4) || K->rank != r || V->rank != r)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "Attention: Q, K and V must all be 3-D or all 4-D, got ranks %d, %d, %d",
                              Q->rank, K->rank, V->rank);
    p->t = Q->dtype;
    p->rank3 = r == 3;
    p->B = Q->dims[0];
    if (K->dims[0] != p->B || V->dims[0] != p->B)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Attention: Q, K and V batch sizes differ");
    if (p->rank3) {
        p->hq = ir_attr_int(n, "q_num_heads", 0);
        p->hkv = ir_attr_int(n, "kv_num_heads", 0);
        if (p->hq <= 0 || p->hkv <= 0)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "Attention: 3-D inputs need positive q_num_heads and kv_num_heads");
        if (Q->dims[2] % p->hq || K->dims[2] % p->hkv || V->dims[2] % p->hkv)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "Attention: hidden sizes %lld, %lld, %lld are not multiples of the "
                                  "head counts %lld (Q) and %lld (K, V)",
                                  (long long)Q->dims[2], (long long)K->dims[2], (long long)V->dims[2],
                                  (long long)p->hq, (long long)p->hkv);
        p->sq = Q->dims[1];
        p->skv = K->dims[1];
        p->dk = Q->dims[2] / p->hq;
        if (K->dims[2] / p->hkv != p->dk)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Attention: Q and K head sizes differ");
        p->dv = V->dims[2] / p->hkv;
        if (V->dims[1] != p->skv)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Attention: K and V sequence lengths differ");
    } else {
        p->hq = Q->dims[1];
        p->hkv = K->dims[1];
        p->sq = Q->dims[2];
        p->skv = K->dims[2];
        p->dk = Q->dims[3];
        p->dv = V->dims[3];
        if (K->dims[3] != p->dk || V->dims[1] != p->hkv || V->dims[2] != p->skv)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "Attention: K must be [B, kv_heads, kv_seq, %lld] and V [B, kv_heads, "
                                  "kv_seq, v_head_size]",
                                  (long long)p->dk);
    }
    if (p->hkv <= 0 || p->hq % p->hkv)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "Attention: q heads (%lld) must be a positive multiple of kv heads (%lld)",
                              (long long)p->hq, (long long)p->hkv);
    if ((PK == NULL) != (PV == NULL))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "Attention: past_key and past_value must be given together");
    if (PK) {
        if (PK->rank != 4 || PV->rank != 4 || PK->dtype != K->dtype || PV->dtype != V->dtype ||
            PK->dims[0] != p->B || PK->dims[1] != p->hkv || PK->dims[3] != p->dk ||
            PV->dims[0] != p->B || PV->dims[1] != p->hkv || PV->dims[2] != PK->dims[2] ||
            PV->dims[3] != p->dv)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "Attention: past_key must be [%lld, %lld, past, %lld] and past_value "
                                  "[%lld, %lld, past, %lld] of K's and V's types",
                                  (long long)p->B, (long long)p->hkv, (long long)p->dk,
                                  (long long)p->B, (long long)p->hkv, (long long)p->dv);
        p->past = PK->dims[2];
    }
    p->total = p->past + p->skv;
    if (att_mul(p->B, p->hq, p->sq, p->total) < 0 || att_mul(p->B, p->hkv, p->total, p->dk) < 0 ||
        att_mul(p->B, p->hkv, p->total, p->dv) < 0 || att_mul(p->B, p->hq, p->sq, p->dk) < 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Attention: tensor sizes overflow");
    /* the per-thread score buffer holds ATT_BLOCK rows of `total` doubles */
    if (p->total > INT64_MAX / 8 / ATT_BLOCK || (uint64_t)p->total * 8 * ATT_BLOCK > SIZE_MAX / 2)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "Attention: total sequence length %lld is too large", (long long)p->total);
    if (NP) {
        if (PK)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "Attention: nonpad_kv_seqlen cannot be used with past_key/past_value");
        if (NP->dtype != ONYX_INT64 || ox_tensor_numel(NP) != p->B)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "Attention: nonpad_kv_seqlen must be int64 of shape [%lld]",
                                  (long long)p->B);
        p->nonpad = NP->data;
    }
    p->mode = (int)ir_attr_int(n, "qk_matmul_output_mode", 0);
    if (p->mode < 0 || p->mode > 3)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Attention: qk_matmul_output_mode must be 0..3");
    p->causal = ir_attr_int(n, "is_causal", 0) != 0;
    p->left = ver >= 25 ? ir_attr_int(n, "left_window_size", -1) : -1;
    p->right = ver >= 25 ? ir_attr_int(n, "right_window_size", -1) : -1;
    att_clamp_windows(p);
    p->softcap = ir_attr_float(n, "softcap", 0.0f);
    p->scale = ir_node_attr(n, "scale") ? (double)ir_attr_float(n, "scale", 0.0f)
                                        : 1.0 / sqrt((double)(p->dk > 0 ? p->dk : 1));
    p->softmax_t = ONYX_UNDEFINED;
    if (ir_node_attr(n, "softmax_precision")) {
        int64_t sp = ir_attr_int(n, "softmax_precision", 0);
        if (!att_float((ox_dtype)sp))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "Attention: softmax_precision %lld is not a float type", (long long)sp);
        p->softmax_t = (ox_dtype)sp;
    }
    p->softmax_double = p->t == ONYX_FLOAT64 || p->softmax_t == ONYX_FLOAT64;
    p->isa = ox_cpu_isa_active();
    if (M) {
        if (M->rank < 1 || M->rank > 4)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Attention: attn_mask must have rank 1..4, got %d",
                                  M->rank);
        if (M->dtype != ONYX_BOOL && !att_float(M->dtype) && !ox_dtype_is_integer(M->dtype))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Attention: attn_mask of type %s is not supported",
                                  ox_dtype_name(M->dtype));
        int64_t want[4] = {p->B, p->hq, p->sq, p->total}, stride = 1;
        p->mlen = M->dims[M->rank - 1];
        if (p->mlen > p->total)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "Attention: attn_mask's last dimension %lld exceeds the total sequence "
                                  "length %lld",
                                  (long long)p->mlen, (long long)p->total);
        for (int d = 3; d >= 0; d--) {
            int md = d - (4 - M->rank);
            int64_t dim = md >= 0 ? M->dims[md] : 1;
            if (d < 3 && dim != 1 && dim != want[d])
                return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                      "Attention: attn_mask dimension %d (%lld) does not broadcast to %lld",
                                      md, (long long)dim, (long long)want[d]);
            p->ms[d] = dim == 1 ? 0 : stride;
            stride *= dim;
        }
        /* a mask shorter than the keys is padded with -inf (att_bias),
         * not broadcast, along them */
        p->mask = M;
        p->mask_bool = M->dtype == ONYX_BOOL;
    }
    return 0;
}

static int attention_compute(ox_kernel_ctx *ctx) {
    att_plan p;
    if (att_plan_make(ctx, &p)) return -1;
    const ox_tensor *Q = ox_cpu_input(ctx, 0), *K = ox_cpu_input(ctx, 1), *V = ox_cpu_input(ctx, 2);
    const ox_tensor *PK = ox_cpu_input(ctx, 4), *PV = ox_cpu_input(ctx, 5);
    ox_tensor *Y = ctx->outputs[0], *OK = ox_cpu_output(ctx, 1), *OV = ox_cpu_output(ctx, 2),
              *QK = ox_cpu_output(ctx, 3);
    int64_t ny = att_mul(p.B, p.hq, p.sq, p.dv);
    if (!Y || Y->dtype != p.t || ox_tensor_numel(Y) != ny ||
        (OK && ox_tensor_numel(OK) != att_mul(p.B, p.hkv, p.total, p.dk)) ||
        (OV && ox_tensor_numel(OV) != att_mul(p.B, p.hkv, p.total, p.dv)) ||
        (QK && (QK->dtype != p.t || ox_tensor_numel(QK) != att_mul(p.B, p.hq, p.sq, p.total))))
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Attention: output shapes do not match the inputs");
    size_t ek = ox_dtype_size(K->dtype), ev = ox_dtype_size(V->dtype);
    int64_t nk = att_mul(p.B, p.hkv, p.total, p.dk), nv = att_mul(p.B, p.hkv, p.total, p.dv),
            nq = att_mul(p.B, p.hq, p.sq, p.dk);
    /* the concatenated caches are the present outputs when asked for */
    void *kc = OK ? OK->data : malloc(ek * (size_t)(nk + 1));
    void *vc = OV ? OV->data : malloc(ev * (size_t)(nv + 1));
    void *qc = malloc(ek * (size_t)(nq + 1));
    int rc = 0;
    if (!kc || !vc || !qc) {
        rc = ox_cpu_oom(ctx);
        goto done;
    }
    if (PK) {
        att_gather(kc, PK->data, ek, p.B, p.hkv, p.past, p.dk, 0, 0, p.total);
        att_gather(vc, PV->data, ev, p.B, p.hkv, p.past, p.dv, 0, 0, p.total);
    }
    att_gather(kc, K->data, ek, p.B, p.hkv, p.skv, p.dk, p.rank3, p.past, p.total);
    att_gather(vc, V->data, ev, p.B, p.hkv, p.skv, p.dv, p.rank3, p.past, p.total);
    att_gather(qc, Q->data, ek, p.B, p.hq, p.sq, p.dk, p.rank3, 0, p.sq);
    if (p.t == ONYX_FLOAT64)
        rc = att_run_f64(ctx, &p, qc, kc, vc, V->dtype, Y->data, QK ? QK->data : NULL);
    else
        rc = att_run_f32(ctx, &p, qc, kc, vc, V->dtype, Y->data, QK ? QK->data : NULL);
done:
    if (!OK) free(kc);
    if (!OV) free(vc);
    free(qc);
    return rc;
}

static int supports_attention(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    (void)node;
    for (int i = 0; i < 3 && i < n_inputs; i++)
        if (inputs[i] && inputs[i]->dtype != ONYX_UNDEFINED && !att_float(inputs[i]->dtype)) return 0;
    return 1;
}

static const ox_kernel_def KERNELS[] = {
    {"", "Attention", 23, 25, attention_compute, supports_attention, NULL, NULL, NULL},
    {"", "RotaryEmbedding", 23, 23, ox_rotary_embedding_compute, supports_attention, NULL, NULL, NULL},
    {"", "LinearAttention", 27, 27, ox_linear_attention_compute, supports_attention, NULL, NULL, NULL},
    {"", "SwiGLU", 28, 28, ox_swiglu_compute, supports_attention, NULL, NULL, NULL},
    {"ai.onnx.preview", "FlexAttention", 1, 1, ox_flex_attention_compute, supports_attention, NULL,
     NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_attention = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
