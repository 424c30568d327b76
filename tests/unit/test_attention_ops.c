/* Attention through the public API against a direct double-precision
 * evaluation of its definition, on the combinations the ONNX suite does
 * not reach: 3-D GQA inputs with a past cache and a short 1-D mask,
 * integer and boolean masks broadcast over heads, is_causal with an
 * external cache (nonpad_kv_seqlen), sliding windows (Attention-25) with
 * and without it, fully masked rows, and a query longer than one block
 * of the kernel. Then the errors: masks that do not broadcast, head
 * counts that do not divide. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "model_builder.h"

static onyx_env *env;

/* One Attention case in the 4-D view; rank3 packs Q, K, V and Y as
 * [B, S, heads * size]. */
typedef struct acase {
    int opset, rank3, causal;
    int64_t B, hq, hkv, sq, skv, past, dk, dv;
    int64_t left, right;   /* -1: unbounded (opset 25 attributes) */
    int mask_rank;         /* 0: no mask */
    int64_t mdims[4];
    onyx_dtype mask_dt;    /* FLOAT, BOOL or INT32 */
    const int64_t *nonpad; /* NULL: no input */
} acase;

static uint32_t rng_state = 12345;
static float frand(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)((rng_state >> 8) & 0xffff) / 65536.0f - 0.5f;
}

static int64_t numel(const int64_t *d, int r) {
    int64_t n = 1;
    for (int i = 0; i < r; i++) n *= d[i];
    return n;
}

/* Element (b, h, s, d) of a tensor held 4-D or packed 3-D. */
static double at4(const float *x, int rank3, int64_t H, int64_t S, int64_t D, int64_t b, int64_t h,
                  int64_t s, int64_t d) {
    return rank3 ? x[((b * S + s) * H + h) * D + d] : x[((b * H + h) * S + s) * D + d];
}

/* Additive mask value for score (b, h, i, j) or -inf. */
static double mask_at(const acase *c, const void *m, int64_t b, int64_t h, int64_t i, int64_t j) {
    int64_t want[4] = {b, h, i, j}, off = 0, stride = 1;
    if (j >= c->mdims[c->mask_rank - 1]) return -INFINITY;
    for (int d = c->mask_rank - 1; d >= 0; d--) {
        int64_t dim = c->mdims[d], idx = want[4 - c->mask_rank + d];
        off += (dim == 1 ? 0 : idx) * stride;
        stride *= dim;
    }
    if (c->mask_dt == ONYX_BOOL) return ((const uint8_t *)m)[off] ? 0.0 : -INFINITY;
    if (c->mask_dt == ONYX_INT32) return ((const int32_t *)m)[off];
    return ((const float *)m)[off];
}

/* Y of the case by the definition, in double. */
static void reference(const acase *c, const float *q, const float *k, const float *v,
                      const float *pk, const float *pv, const void *m, double *y) {
    int64_t T = c->past + c->skv, grp = c->hq / c->hkv;
    double scale = 1.0 / sqrt((double)c->dk);
    double *sc = malloc(sizeof(double) * (size_t)T);
    for (int64_t b = 0; b < c->B; b++)
        for (int64_t h = 0; h < c->hq; h++)
            for (int64_t i = 0; i < c->sq; i++) {
                int64_t kh = h / grp;
                int64_t off = c->nonpad ? c->nonpad[b] - c->sq : c->past, pos = i + off;
                double mx = -INFINITY;
                for (int64_t j = 0; j < T; j++) {
                    double dot = 0;
                    for (int64_t d = 0; d < c->dk; d++) {
                        double kv = j < c->past ? pk[((b * c->hkv + kh) * c->past + j) * c->dk + d]
                                                : at4(k, c->rank3, c->hkv, c->skv, c->dk, b, kh, j - c->past, d);
                        dot += at4(q, c->rank3, c->hq, c->sq, c->dk, b, h, i, d) * kv;
                    }
                    double bias = c->mask_rank ? mask_at(c, m, b, h, i, j) : 0.0;
                    if (c->causal && j > pos) bias = -INFINITY;
                    if (c->left >= 0 && pos - j > c->left) bias = -INFINITY;
                    if (c->right >= 0 && j - pos > c->right) bias = -INFINITY;
                    if (c->nonpad && j >= c->nonpad[b]) bias = -INFINITY;
                    sc[j] = dot * scale + bias;
                    if (sc[j] > mx) mx = sc[j];
                }
                double sum = 0;
                for (int64_t j = 0; j < T; j++) {
                    sc[j] = mx == -INFINITY ? 0.0 : exp(sc[j] - mx);
                    sum += sc[j];
                }
                for (int64_t e = 0; e < c->dv; e++) {
                    double acc = 0;
                    for (int64_t j = 0; j < T; j++) {
                        double vv = j < c->past ? pv[((b * c->hkv + kh) * c->past + j) * c->dv + e]
                                                : at4(v, c->rank3, c->hkv, c->skv, c->dv, b, kh, j - c->past, e);
                        acc += sum > 0 ? sc[j] / sum * vv : 0.0;
                    }
                    int64_t yo = c->rank3 ? ((b * c->sq + i) * c->hq + h) * c->dv + e
                                          : ((b * c->hq + h) * c->sq + i) * c->dv + e;
                    y[yo] = acc;
                }
            }
    free(sc);
}

static float *rand_buf(int64_t n) {
    float *p = malloc(sizeof(float) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) p[i] = frand() * 2.0f;
    return p;
}

static onyx_tensor *tensor(onyx_dtype dt, const int64_t *dims, int rank, const void *data) {
    onyx_tensor *t = NULL;
    CHECK_OK(onyx_tensor_create(dt, dims, rank, &t));
    if (t && onyx_tensor_nbytes(t)) memcpy(onyx_tensor_data(t), data, onyx_tensor_nbytes(t));
    return t;
}

/* Builds and runs the case; compares Y with the reference unless
 * `fail_needle` is set, in which case the run must fail with it. */
static void run_case(const char *what, const acase *c, const char *fail_needle) {
    int64_t qd[4], kd[4], vd[4];
    int r = c->rank3 ? 3 : 4;
    if (c->rank3) {
        int64_t q3[3] = {c->B, c->sq, c->hq * c->dk}, k3[3] = {c->B, c->skv, c->hkv * c->dk},
                v3[3] = {c->B, c->skv, c->hkv * c->dv};
        memcpy(qd, q3, sizeof q3);
        memcpy(kd, k3, sizeof k3);
        memcpy(vd, v3, sizeof v3);
    } else {
        int64_t q4[4] = {c->B, c->hq, c->sq, c->dk}, k4[4] = {c->B, c->hkv, c->skv, c->dk},
                v4[4] = {c->B, c->hkv, c->skv, c->dv};
        memcpy(qd, q4, sizeof q4);
        memcpy(kd, k4, sizeof k4);
        memcpy(vd, v4, sizeof v4);
    }
    int64_t pkd[4] = {c->B, c->hkv, c->past, c->dk}, pvd[4] = {c->B, c->hkv, c->past, c->dv};
    float *q = rand_buf(numel(qd, r)), *k = rand_buf(numel(kd, r)), *v = rand_buf(numel(vd, r));
    float *pk = rand_buf(numel(pkd, 4)), *pv = rand_buf(numel(pvd, 4));
    int64_t nm = c->mask_rank ? numel(c->mdims, c->mask_rank) : 0;
    void *m = malloc(4 * (size_t)(nm + 1));
    for (int64_t i = 0; i < nm; i++) {
        if (c->mask_dt == ONYX_BOOL) ((uint8_t *)m)[i] = frand() > -0.2f;
        else if (c->mask_dt == ONYX_INT32) ((int32_t *)m)[i] = (int32_t)(frand() * 6);
        else ((float *)m)[i] = frand() * 3;
    }
    mb_model *mb = mb_new(c->opset);
    char ins[128];
    snprintf(ins, sizeof ins, "q,k,v,%s,%s,%s%s", c->mask_rank ? "m" : "", c->past ? "pk" : "",
             c->past ? "pv" : "", c->nonpad ? ",np" : "");
    mb_node(mb, "Attention", ins, "y");
    if (c->rank3) {
        mb_attr_int(mb, "q_num_heads", c->hq);
        mb_attr_int(mb, "kv_num_heads", c->hkv);
    }
    if (c->causal) mb_attr_int(mb, "is_causal", 1);
    if (c->left >= 0) mb_attr_int(mb, "left_window_size", c->left);
    if (c->right >= 0) mb_attr_int(mb, "right_window_size", c->right);
    const char *names[7];
    onyx_tensor *t[7];
    int n = 0;
    names[n] = "q", t[n++] = tensor(ONYX_FLOAT32, qd, r, q);
    names[n] = "k", t[n++] = tensor(ONYX_FLOAT32, kd, r, k);
    names[n] = "v", t[n++] = tensor(ONYX_FLOAT32, vd, r, v);
    if (c->mask_rank) names[n] = "m", t[n++] = tensor(c->mask_dt, c->mdims, c->mask_rank, m);
    if (c->past) {
        names[n] = "pk", t[n++] = tensor(ONYX_FLOAT32, pkd, 4, pk);
        names[n] = "pv", t[n++] = tensor(ONYX_FLOAT32, pvd, 4, pv);
    }
    int64_t npd[1] = {c->B};
    if (c->nonpad) names[n] = "np", t[n++] = tensor(ONYX_INT64, npd, 1, c->nonpad);
    for (int i = 0; i < n; i++)
        mb_input(mb, names[i], onyx_tensor_dtype(t[i]), onyx_tensor_dims(t[i]), -1);
    mb_output(mb, "y", ONYX_FLOAT32, NULL, -1);
    size_t len;
    uint8_t *buf = mb_serialize(mb, &len);
    mb_free(mb);
    onyx_session *s = NULL;
    onyx_status *st = onyx_session_create_from_buffer(env, buf, len, NULL, &s);
    free(buf);
    onyx_tensor *y = NULL;
    const char *out_names[1] = {"y"};
    if (!st) st = onyx_session_run(s, names, (const onyx_tensor *const *)t, (size_t)n, out_names, &y, 1);
    if (fail_needle) {
        if (!st || !strstr(onyx_status_message(st), fail_needle)) {
            fprintf(stderr, "%s: expected a failure naming '%s', got %s\n", what, fail_needle,
                    st ? onyx_status_message(st) : "success");
            check_failures++;
        }
    } else if (st) {
        fprintf(stderr, "%s: %s\n", what, onyx_status_message(st));
        check_failures++;
    } else {
        int64_t ny = c->B * c->hq * c->sq * c->dv;
        double *ref = malloc(sizeof(double) * (size_t)(ny + 1));
        reference(c, q, k, v, pk, pv, m, ref);
        const float *got = onyx_tensor_data(y);
        int bad = onyx_tensor_numel(y) != ny;
        for (int64_t i = 0; !bad && i < ny; i++)
            if (fabs(got[i] - ref[i]) > 1e-4 + 1e-4 * fabs(ref[i])) {
                fprintf(stderr, "%s: Y[%lld] = %.7g, expected %.7g\n", what, (long long)i, got[i], ref[i]);
                bad = 1;
            }
        if (bad) check_failures++;
        free(ref);
    }
    onyx_status_free(st);
    onyx_tensor_free(y);
    onyx_session_free(s);
    for (int i = 0; i < n; i++) onyx_tensor_free(t[i]);
    free(q), free(k), free(v), free(pk), free(pv), free(m);
}

int main(void) {
    CHECK_OK(onyx_env_create(&env));
    static const int64_t NP[3] = {7, 3, 0};
    /* 3-D GQA with a past cache and a 1-D float mask two keys short */
    run_case("gqa_3d_past_short_mask",
             &(acase){23, 1, 0, 2, 4, 2, 3, 5, 4, 8, 6, -1, -1, 1, {7}, ONYX_FLOAT32, NULL}, NULL);
    /* integer mask over heads, causal with a past cache */
    run_case("int_mask_causal_past",
             &(acase){23, 0, 1, 2, 3, 3, 4, 3, 2, 5, 5, -1, -1, 3, {3, 4, 5}, ONYX_INT32, NULL}, NULL);
    /* boolean mask broadcast over the batch, MQA */
    run_case("bool_mask_mqa",
             &(acase){23, 0, 0, 2, 4, 1, 5, 6, 0, 8, 3, -1, -1, 4, {1, 4, 5, 6}, ONYX_BOOL, NULL}, NULL);
    /* external cache: causal frontier at nonpad - sq, the last batch
     * entry has no valid key at all (zero rows) */
    run_case("causal_nonpad", &(acase){24, 0, 1, 3, 2, 2, 4, 8, 0, 8, 8, -1, -1, 0, {0}, 0, NP}, NULL);
    /* windows: left only with causal, both sides with padding */
    run_case("window_causal", &(acase){25, 0, 1, 1, 2, 2, 6, 6, 0, 4, 4, 2, -1, 0, {0}, 0, NULL}, NULL);
    run_case("window_nonpad", &(acase){25, 0, 0, 3, 2, 1, 4, 8, 0, 4, 4, 1, 2, 0, {0}, 0, NP}, NULL);
    /* more query rows than one kernel block, causal and a 2-D mask */
    run_case("long_causal_mask",
             &(acase){23, 0, 1, 1, 2, 2, 150, 150, 0, 16, 8, -1, -1, 2, {150, 150}, ONYX_FLOAT32, NULL},
             NULL);
    /* errors */
    run_case("mask_not_broadcast",
             &(acase){23, 0, 0, 1, 2, 2, 3, 4, 0, 4, 4, -1, -1, 3, {3, 3, 4}, ONYX_FLOAT32, NULL},
             "attn_mask");
    run_case("mask_too_long",
             &(acase){23, 0, 0, 1, 2, 2, 3, 4, 0, 4, 4, -1, -1, 2, {3, 5}, ONYX_FLOAT32, NULL},
             "attn_mask");
    run_case("heads_do_not_divide",
             &(acase){23, 1, 0, 1, 3, 2, 3, 4, 0, 4, 4, -1, -1, 0, {0}, 0, NULL}, "multiple");
    onyx_env_free(env);
    if (check_failures) fprintf(stderr, "%d check(s) failed\n", check_failures);
    return check_failures != 0;
}
