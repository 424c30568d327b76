/* CPU kernels of RotaryEmbedding-23, LinearAttention-27, SwiGLU-28 and
 * FlexAttention (ai.onnx.preview). Element types other than float32 are
 * computed in float32 (double for float64) and rounded once on store,
 * except where the reference rounds intermediate values in the input's
 * own precision and a single rounding would differ by more than the
 * tolerance (noted at each place). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/attention_ops.h"
#include "ep/cpu/kernels/gemm.h"
#include "ep/cpu/kernels/kernel_util.h"

/* Rounds v to the precision of t (float16 and bfloat16; others as is). */
static float round_to(ox_dtype t, float v) {
    if (t == ONYX_FLOAT16) return ox_half_to_float(ox_float_to_half(v));
    if (t == ONYX_BFLOAT16) return ox_bf16_to_float(ox_float_to_bf16(v));
    return v;
}

static float load_f(const ox_tensor *t, int64_t i) {
    if (t->dtype == ONYX_FLOAT32) return ((const float *)t->data)[i];
    return (float)ox_get_f64(t->data, t->dtype, (size_t)i);
}

static void store_f(ox_tensor *t, int64_t i, float v) {
    if (t->dtype == ONYX_FLOAT32)
        ((float *)t->data)[i] = v;
    else
        ox_set_f64(t->data, t->dtype, (size_t)i, v);
}

/* a * b * c * d for non-negative dims, or -1 when it would not fit in
 * memory as doubles. */
static int64_t checked_numel(int64_t a, int64_t b, int64_t c, int64_t d) {
    int64_t v[4] = {a, b, c, d}, r = 1;
    for (int i = 0; i < 4; i++) {
        if (v[i] < 0 || (v[i] && r > INT64_MAX / 8 / v[i])) return -1;
        r *= v[i];
    }
    return (uint64_t)r * 8 < SIZE_MAX ? r : -1;
}

/* ================================================================ */
/* RotaryEmbedding-23 */

/* One head's rotation in float32: pairs (x[i], x[i + half]), or
 * (x[2i], x[2i + 1]) interleaved, turned by the angle whose cosine and
 * sine are c[i] and s[i]. Each product is rounded, then the sum, as the
 * written-out form (x * cos + rotate_half(x) * sin) computes it. */
static void rotate_f32(const float *restrict x, float *restrict y, const float *restrict c,
                       const float *restrict s, int64_t half, int inter) {
    if (inter) {
        for (int64_t i = 0; i < half; i++) {
            const float x1 = x[2 * i], x2 = x[2 * i + 1];
            y[2 * i] = c[i] * x1 - s[i] * x2;
            y[2 * i + 1] = s[i] * x1 + c[i] * x2;
        }
        return;
    }
    for (int64_t i = 0; i < half; i++) {
        const float x1 = x[i], x2 = x[i + half];
        y[i] = c[i] * x1 - s[i] * x2;
        y[i + half] = s[i] * x1 + c[i] * x2;
    }
}

/* The same for float16 and bfloat16 (and any type load_f reads): each
 * product and sum is rounded in the input type, as in the reference. */
static void rotate_rounded(const ox_tensor *X, ox_tensor *Y, const ox_tensor *C, const ox_tensor *S,
                           int64_t base, int64_t crow, int64_t half, int inter) {
    const ox_dtype t = X->dtype;
    for (int64_t i = 0; i < half; i++) {
        int64_t i1 = inter ? base + 2 * i : base + i, i2 = inter ? i1 + 1 : i1 + half;
        float c = load_f(C, crow + i), sn = load_f(S, crow + i);
        float x1 = load_f(X, i1), x2 = load_f(X, i2);
        store_f(Y, i1, round_to(t, round_to(t, c * x1) - round_to(t, sn * x2)));
        store_f(Y, i2, round_to(t, round_to(t, sn * x1) + round_to(t, c * x2)));
    }
}

int ox_rotary_embedding_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = ox_cpu_input(ctx, 0), *C = ox_cpu_input(ctx, 1), *S = ox_cpu_input(ctx, 2),
                    *P = ox_cpu_input(ctx, 3);
    ox_tensor *Y = ctx->outputs[0];
    const ir_node *n = ctx->node;
    if (X->rank != 3 && X->rank != 4)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "RotaryEmbedding: input must be 3-D or 4-D, got rank %d",
                              X->rank);
    int64_t B = X->dims[0], H, Sq, D;
    if (X->rank == 4) {
        H = X->dims[1];
        Sq = X->dims[2];
        D = X->dims[3];
    } else {
        H = ir_attr_int(n, "num_heads", 0);
        Sq = X->dims[1];
        if (H <= 0 || X->dims[2] % H)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "RotaryEmbedding: hidden size %lld must be a multiple of num_heads %lld",
                                  (long long)X->dims[2], (long long)H);
        D = X->dims[2] / H;
    }
    int64_t rot = ir_attr_int(n, "rotary_embedding_dim", 0);
    if (rot == 0) rot = D;
    if (rot < 0 || rot > D || rot % 2)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "RotaryEmbedding: rotary_embedding_dim %lld must be even and at most the head "
                              "size %lld",
                              (long long)rot, (long long)D);
    int64_t half = rot / 2;
    int inter = ir_attr_int(n, "interleaved", 0) != 0;
    if (C->rank < 1 || C->dims[C->rank - 1] != half || !ox_shape_equal(C->dims, C->rank, S->dims, S->rank))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "RotaryEmbedding: cos_cache and sin_cache must have the same shape with last "
                              "dimension %lld (rotary dim / 2)",
                              (long long)half);
    /* onyx.RotaryEmbedding's caches may be shared by the batch */
    const int shared_ok = strcmp(n->domain, "onyx") == 0;
    int64_t max_pos = 0;
    if (P) {
        if (C->rank != 2 || P->rank != 2 || P->dims[0] != B || P->dims[1] != Sq)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "RotaryEmbedding: with position_ids [%lld, %lld] the caches must be 2-D",
                                  (long long)B, (long long)Sq);
        max_pos = C->dims[0];
    } else if (C->rank != 3 || (C->dims[0] != B && !(shared_ok && C->dims[0] == 1)) || C->dims[1] != Sq) {
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "RotaryEmbedding: without position_ids the caches must be [%s%lld, %lld, %lld]",
                              shared_ok ? "1 or " : "", (long long)B, (long long)Sq, (long long)half);
    }
    /* one table for every batch entry */
    const int64_t cache_b = !P && C->dims[0] == 1 ? 0 : 1;
    ox_dtype t = X->dtype;
    for (int64_t b = 0; b < B; b++)
        for (int64_t s = 0; s < Sq; s++) {
            int64_t crow;
            if (P) {
                int64_t pos = ((const int64_t *)P->data)[b * Sq + s];
                if (pos < 0 || pos >= max_pos)
                    return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                          "RotaryEmbedding: position id %lld is outside the caches' %lld rows",
                                          (long long)pos, (long long)max_pos);
                crow = pos * half;
            } else {
                crow = (b * cache_b * Sq + s) * half;
            }
            for (int64_t h = 0; h < H; h++) {
                int64_t base = X->rank == 4 ? ((b * H + h) * Sq + s) * D : ((b * Sq + s) * H + h) * D;
                if (t == ONYX_FLOAT32)
                    rotate_f32((const float *)X->data + base, (float *)Y->data + base,
                               (const float *)C->data + crow, (const float *)S->data + crow, half, inter);
                else
                    rotate_rounded(X, Y, C, S, base, crow, half, inter);
                if (rot < D) {
                    size_t es = ox_dtype_size(t);
                    memcpy((char *)Y->data + (size_t)(base + rot) * es,
                           (const char *)X->data + (size_t)(base + rot) * es, (size_t)(D - rot) * es);
                }
            }
        }
    return 0;
}

/* ================================================================ */
/* SwiGLU-28: Y = A * sigmoid(alpha * A) * B */

int ox_swiglu_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *A = ox_cpu_input(ctx, 0), *Bt = ox_cpu_input(ctx, 1);
    ox_tensor *Y = ctx->outputs[0];
    if (A->dtype != Bt->dtype || !ox_shape_equal(A->dims, A->rank, Bt->dims, Bt->rank))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "SwiGLU: A and B must have the same type and shape (no broadcasting)");
    double alpha = ir_attr_float(ctx->node, "alpha", 1.0f);
    int64_t n = ox_tensor_numel(A);
    ox_dtype t = A->dtype;
    if (t == ONYX_FLOAT64) {
        const double *a = A->data, *b = Bt->data;
        double *y = Y->data;
        for (int64_t i = 0; i < n; i++) y[i] = a[i] / (1.0 + exp(-alpha * a[i])) * b[i];
        return 0;
    }
    if (t == ONYX_FLOAT32) {
        const float *a = A->data, *b = Bt->data;
        float *y = Y->data;
        float al = (float)alpha;
        for (int64_t i = 0; i < n; i++) {
            float sg = 1.0f / (1.0f + expf(-al * a[i]));
            y[i] = a[i] * sg * b[i];
        }
        return 0;
    }
    /* float16/bfloat16: the reference rounds the sigmoid and each
     * product to the input type */
    for (int64_t i = 0; i < n; i++) {
        float a = load_f(A, i), b = load_f(Bt, i);
        float sg = round_to(t, 1.0f / (1.0f + expf(round_to(t, (float)(-alpha * a)))));
        store_f(Y, i, round_to(t, round_to(t, a * sg) * b));
    }
    return 0;
}

/* ================================================================ */
/* LinearAttention-27: the recurrence run token by token in float32 */

/* Unpacked element (b, h, t, d) of a packed [B, T, H * D] tensor. */
static float packed_at(const ox_tensor *x, int64_t b, int64_t t, int64_t h, int64_t d, int64_t T,
                       int64_t H, int64_t D) {
    return load_f(x, ((b * T + t) * H + h) * D + d);
}

int ox_linear_attention_compute(ox_kernel_ctx *ctx) {
    const ir_node *n = ctx->node;
    const ox_tensor *Q = ox_cpu_input(ctx, 0), *K = ox_cpu_input(ctx, 1), *V = ox_cpu_input(ctx, 2);
    const ox_tensor *PS = ox_cpu_input(ctx, 3), *G = ox_cpu_input(ctx, 4), *BE = ox_cpu_input(ctx, 5);
    ox_tensor *Y = ctx->outputs[0], *OS = ox_cpu_output(ctx, 1);
    const char *rule = ir_attr_string(n, "update_rule", "gated_delta");
    int gating = !strcmp(rule, "gated") || !strcmp(rule, "gated_delta");
    int delta = !strcmp(rule, "delta") || !strcmp(rule, "gated_delta");
    if (!gating && !delta && strcmp(rule, "linear") != 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "LinearAttention: unknown update_rule '%s'", rule);
    if (gating != (G != NULL) || delta != (BE != NULL))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "LinearAttention: update_rule '%s' %s decay and %s beta", rule,
                              gating ? "requires" : "forbids", delta ? "requires" : "forbids");
    int64_t hq = ir_attr_int(n, "q_num_heads", 0), hkv = ir_attr_int(n, "kv_num_heads", 0);
    if (hq <= 0 || hkv <= 0 || hq % hkv)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "LinearAttention: q_num_heads must be a positive multiple of kv_num_heads");
    if (Q->rank != 3 || K->rank != 3 || V->rank != 3)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "LinearAttention: query, key and value must be 3-D");
    int64_t B = Q->dims[0], T = Q->dims[1];
    if (Q->dims[2] % hq || K->dims[2] % hkv || V->dims[2] % hkv)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "LinearAttention: hidden sizes must be multiples of their head counts");
    int64_t dk = Q->dims[2] / hq, dv = V->dims[2] / hkv, grp = hq / hkv;
    if (K->dims[2] / hkv != dk || K->dims[0] != B || V->dims[0] != B || K->dims[1] != T ||
        V->dims[1] != T)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "LinearAttention: query, key and value shapes do not agree");
    int64_t glen = 0, blen = 0;
    if (G) {
        glen = G->rank == 3 ? G->dims[2] : -1;
        if (G->rank != 3 || G->dims[0] != B || G->dims[1] != T || (glen != hkv && glen != hkv * dk))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "LinearAttention: decay must be [%lld, %lld, %lld or %lld]", (long long)B,
                                  (long long)T, (long long)hkv, (long long)(hkv * dk));
    }
    if (BE) {
        blen = BE->rank == 3 ? BE->dims[2] : -1;
        if (BE->rank != 3 || BE->dims[0] != B || BE->dims[1] != T || (blen != hkv && blen != 1))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "LinearAttention: beta must be [%lld, %lld, %lld or 1]", (long long)B,
                                  (long long)T, (long long)hkv);
    }
    int64_t ns = checked_numel(B, hkv, dk, dv);
    if (ns < 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "LinearAttention: state size overflows");
    if (PS && (PS->rank != 4 || PS->dims[0] != B || PS->dims[1] != hkv || PS->dims[2] != dk ||
               PS->dims[3] != dv))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "LinearAttention: past_state must be [%lld, %lld, %lld, %lld]", (long long)B,
                              (long long)hkv, (long long)dk, (long long)dv);
    double scale = ir_attr_float(n, "scale", 0.0f);
    if (scale == 0.0) scale = 1.0 / sqrt((double)(dk > 0 ? dk : 1));
    float sc = (float)scale;
    float *state = calloc((size_t)(ns + 1), sizeof(float));
    float *kt = malloc(sizeof(float) * (size_t)(dk + 1)), *vt = malloc(sizeof(float) * (size_t)(dv + 1));
    float *out = malloc(sizeof(float) * (size_t)(dv + 1));
    int rc = 0;
    if (!state || !kt || !vt || !out) {
        rc = ox_cpu_oom(ctx);
        goto done;
    }
    if (PS)
        for (int64_t i = 0; i < ns; i++) state[i] = load_f(PS, i);
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < hkv; h++) {
            float *st = state + (b * hkv + h) * dk * dv; /* [dk, dv] */
            for (int64_t t = 0; t < T; t++) {
                for (int64_t d = 0; d < dk; d++) kt[d] = packed_at(K, b, t, h, d, T, hkv, dk);
                for (int64_t m = 0; m < dv; m++) vt[m] = packed_at(V, b, t, h, m, T, hkv, dv);
                if (gating)
                    for (int64_t d = 0; d < dk; d++) {
                        float g = glen == hkv ? load_f(G, (b * T + t) * hkv + h)
                                              : packed_at(G, b, t, h, d, T, hkv, dk);
                        float e = expf(g);
                        for (int64_t m = 0; m < dv; m++) st[d * dv + m] *= e;
                    }
                if (delta) {
                    float beta = load_f(BE, (b * T + t) * blen + (blen == 1 ? 0 : h));
                    /* v <- beta * (v - S^T k) */
                    for (int64_t m = 0; m < dv; m++) {
                        float r = 0;
                        for (int64_t d = 0; d < dk; d++) r += st[d * dv + m] * kt[d];
                        vt[m] = beta * (vt[m] - r);
                    }
                }
                for (int64_t d = 0; d < dk; d++) ox_vec_axpy(st + d * dv, vt, kt[d], dv);
                /* read for every query head sharing this state */
                for (int64_t g = 0; g < grp; g++) {
                    int64_t qh = h * grp + g;
                    for (int64_t m = 0; m < dv; m++) out[m] = 0;
                    for (int64_t d = 0; d < dk; d++)
                        ox_vec_axpy(out, st + d * dv, packed_at(Q, b, t, qh, d, T, hq, dk), dv);
                    for (int64_t m = 0; m < dv; m++)
                        store_f(Y, ((b * T + t) * hq + qh) * dv + m, sc * out[m]);
                }
            }
        }
    if (OS)
        for (int64_t i = 0; i < ns; i++) store_f(OS, i, state[i]);
done:
    free(state);
    free(kt);
    free(vt);
    free(out);
    return rc;
}

/* ================================================================ */
/* FlexAttention (ai.onnx.preview): scores in the softmax precision go
 * through the optional score_mod and prob_mod subgraphs whole. Computed
 * in double and rounded to the softmax precision where the reference
 * holds values in it. */

/* Runs modifier graph `name` (if the node has it) on t in place. */
static int flex_mod(ox_kernel_ctx *ctx, const char *name, ox_tensor *t) {
    const ir_attr *a = ir_node_attr(ctx->node, name);
    if (!a) return 0;
    if (!a->g)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "FlexAttention: attribute '%s' must be a graph", name);
    if (!ctx->run_subgraph)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "FlexAttention: subgraphs cannot run here");
    ox_tensor *res[1] = {NULL};
    ox_tensor *args[1] = {t};
    if (ctx->run_subgraph(ctx, a->g, args, 1, res, 1)) {
        ox_tensor_free(res[0]);
        return -1;
    }
    int rc = 0;
    if (!res[0] || res[0]->kind != OX_KIND_TENSOR || res[0]->dtype != t->dtype ||
        !ox_shape_equal(res[0]->dims, res[0]->rank, t->dims, t->rank))
        rc = ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                            "FlexAttention: %s must return a %s tensor of the scores' shape", name,
                            ox_dtype_name(t->dtype));
    else
        memcpy(t->data, res[0]->data, ox_dtype_size(t->dtype) * (size_t)ox_tensor_numel(t));
    ox_tensor_free(res[0]);
    return rc;
}

int ox_flex_attention_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *Q = ox_cpu_input(ctx, 0), *K = ox_cpu_input(ctx, 1), *V = ox_cpu_input(ctx, 2);
    ox_tensor *Y = ctx->outputs[0];
    if (Q->rank != 4 || K->rank != 4 || V->rank != 4)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "FlexAttention: Q, K and V must be 4-D");
    int64_t B = Q->dims[0], hq = Q->dims[1], L = Q->dims[2], E = Q->dims[3];
    int64_t hkv = K->dims[1], S = K->dims[2], Ev = V->dims[3];
    if (K->dims[0] != B || V->dims[0] != B || K->dims[3] != E || V->dims[1] != hkv || V->dims[2] != S ||
        hkv <= 0 || hq % hkv)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "FlexAttention: K must be [B, kv_heads, S, %lld], V [B, kv_heads, S, Ev] and "
                              "q heads a multiple of kv heads",
                              (long long)E);
    ox_dtype t = Q->dtype, ct = t == ONYX_FLOAT64 ? ONYX_FLOAT64 : ONYX_FLOAT32;
    if (ir_node_attr(ctx->node, "softmax_precision")) {
        ct = (ox_dtype)ir_attr_int(ctx->node, "softmax_precision", 1);
        if (ct != ONYX_FLOAT32 && ct != ONYX_FLOAT64 && ct != ONYX_FLOAT16 && ct != ONYX_BFLOAT16)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "FlexAttention: bad softmax_precision %d", (int)ct);
    }
    double scale = ir_node_attr(ctx->node, "scale") ? (double)ir_attr_float(ctx->node, "scale", 1.0f)
                                                    : 1.0 / sqrt((double)(E > 0 ? E : 1));
    /* sqrt(scale) in float32, then in the input type */
    double ss = sqrtf((float)scale);
    if (t != ONYX_FLOAT64) ss = round_to(t, (float)ss);
    int64_t nq = checked_numel(B, hq, L, E), nk = checked_numel(B, hkv, S, E),
            nv = checked_numel(B, hkv, S, Ev), ns = checked_numel(B, hq, L, S),
            no = checked_numel(1, 1, L, Ev);
    if (nq < 0 || nk < 0 || nv < 0 || ns < 0 || no < 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "FlexAttention: tensor sizes overflow");
    int64_t dims[4] = {B, hq, L, S};
    double *q = malloc(sizeof(double) * (size_t)(nq + 1)), *k = malloc(sizeof(double) * (size_t)(nk + 1));
    double *v = malloc(sizeof(double) * (size_t)(nv + 1)), *s = malloc(sizeof(double) * (size_t)(ns + 1));
    double *o = malloc(sizeof(double) * (size_t)(no + 1));
    ox_tensor *st = ox_tensor_new(ct, dims, 4, ctx->err);
    int rc = 0;
    if (!st) {
        rc = -1;
        goto done;
    }
    if (!q || !k || !v || !s || !o) {
        rc = ox_cpu_oom(ctx);
        goto done;
    }
    for (int64_t i = 0; i < nq; i++) q[i] = round_to(t, (float)(ox_get_f64(Q->data, t, (size_t)i) * ss));
    for (int64_t i = 0; i < nk; i++) k[i] = round_to(t, (float)(ox_get_f64(K->data, t, (size_t)i) * ss));
    if (t == ONYX_FLOAT64) {
        for (int64_t i = 0; i < nq; i++) q[i] = ((const double *)Q->data)[i] * ss;
        for (int64_t i = 0; i < nk; i++) k[i] = ((const double *)K->data)[i] * ss;
    }
    for (int64_t i = 0; i < nv; i++) v[i] = ox_get_f64(V->data, V->dtype, (size_t)i);
    for (int64_t b = 0; b < B && !rc; b++)
        for (int64_t h = 0; h < hq && !rc; h++) {
            int64_t kh = h / (hq / hkv);
            double *sb = s + (b * hq + h) * L * S;
            if (ox_gemm_f64(ctx->pool, ctx->stop, 0, 1, L, S, E, 1.0, q + (b * hq + h) * L * E, E,
                            k + (b * hkv + kh) * S * E, E, 0.0, sb, S))
                rc = ox_cpu_oom(ctx);
        }
    if (rc) goto done;
    /* scores are held in the input type, then in the softmax type */
    for (int64_t i = 0; i < ns; i++) ox_set_f64(st->data, ct, (size_t)i, t == ONYX_FLOAT64 ? s[i] : round_to(t, (float)s[i]));
    if (flex_mod(ctx, "score_mod", st)) {
        rc = -1;
        goto done;
    }
    for (int64_t r = 0; r < B * hq * L; r++) {
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < S; j++) {
            s[r * S + j] = ox_get_f64(st->data, ct, (size_t)(r * S + j));
            if (s[r * S + j] > mx) mx = s[r * S + j];
        }
        for (int64_t j = 0; j < S; j++) {
            s[r * S + j] = exp(s[r * S + j] - mx);
            sum += s[r * S + j];
        }
        for (int64_t j = 0; j < S; j++) ox_set_f64(st->data, ct, (size_t)(r * S + j), s[r * S + j] / sum);
    }
    if (flex_mod(ctx, "prob_mod", st)) {
        rc = -1;
        goto done;
    }
    for (int64_t i = 0; i < ns; i++) s[i] = ox_get_f64(st->data, ct, (size_t)i);
    for (int64_t i = 0; i < nv; i++) v[i] = ct == ONYX_FLOAT64 ? v[i] : round_to(ct, (float)v[i]);
    for (int64_t b = 0; b < B && !rc; b++)
        for (int64_t h = 0; h < hq && !rc; h++) {
            int64_t kh = h / (hq / hkv);
            if (ox_gemm_f64(ctx->pool, ctx->stop, 0, 0, L, Ev, S, 1.0, s + (b * hq + h) * L * S, S,
                            v + (b * hkv + kh) * S * Ev, Ev, 0.0, o, Ev)) {
                rc = ox_cpu_oom(ctx);
                break;
            }
            for (int64_t e = 0; e < L * Ev; e++) {
                double val = ct == ONYX_FLOAT64 ? o[e] : (double)round_to(ct, (float)o[e]);
                ox_set_f64(Y->data, Y->dtype, (size_t)((b * hq + h) * L * Ev + e), val);
            }
        }
done:
    ox_tensor_free(st);
    free(q);
    free(k);
    free(v);
    free(s);
    free(o);
    return rc;
}
