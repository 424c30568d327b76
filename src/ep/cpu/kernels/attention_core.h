/* Body of the Attention kernel for one compute type, included by
 * attention.c once per type: AT is the element type the products are
 * computed in (float for float32/float16/bfloat16 inputs, double for
 * float64), AT_GEMM the shared GEMM for it and AT_NAME(x) suffixes the
 * function names. Everything that does not depend on AT lives in
 * attention.c. */

/* Loads n elements of a tensor of type t into AT, each multiplied by s
 * and rounded back to t (s is 1 for no scaling): the reference scales Q
 * and K in their own precision before the product. */
static void AT_NAME(att_load)(AT *dst, const void *src, ox_dtype t, int64_t n, AT s) {
    if (t == ONYX_FLOAT32 || t == ONYX_FLOAT64) {
        for (int64_t i = 0; i < n; i++)
            dst[i] = (AT)(t == ONYX_FLOAT32 ? ((const float *)src)[i] : ((const double *)src)[i]) * s;
        return;
    }
    for (int64_t i = 0; i < n; i++) dst[i] = (AT)att_round(t, (float)(ox_get_f64(src, t, (size_t)i) * s));
}

/* Stores n AT values as elements [off, off + n) of a tensor of type t. */
static void AT_NAME(att_store)(void *dst, ox_dtype t, int64_t off, const AT *src, int64_t n) {
    switch (t) {
    case ONYX_FLOAT32:
        for (int64_t i = 0; i < n; i++) ((float *)dst)[off + i] = (float)src[i];
        break;
    case ONYX_FLOAT64:
        for (int64_t i = 0; i < n; i++) ((double *)dst)[off + i] = (double)src[i];
        break;
    case ONYX_FLOAT16:
        for (int64_t i = 0; i < n; i++) ((uint16_t *)dst)[off + i] = ox_float_to_half((float)src[i]);
        break;
    default:
        for (int64_t i = 0; i < n; i++) ((uint16_t *)dst)[off + i] = ox_float_to_bf16((float)src[i]);
        break;
    }
}

/* Rounds n values to the precision of t: float16 and bfloat16, and
 * float32 when AT is wider (softmax_precision FLOAT of float64 inputs). */
static void AT_NAME(att_round_row)(AT *x, int64_t n, ox_dtype t) {
    if (t == ONYX_FLOAT32 && sizeof(AT) > sizeof(float)) {
        for (int64_t i = 0; i < n; i++) x[i] = (AT)(float)x[i];
        return;
    }
    if (t != ONYX_FLOAT16 && t != ONYX_BFLOAT16) return;
    for (int64_t i = 0; i < n; i++) x[i] = (AT)att_round(t, (float)x[i]);
}

/* Softmax of one row in place, in double when asked (softmax_precision,
 * float64 inputs) or float otherwise; a row with no finite maximum
 * becomes zeros rather than NaN. */
static void AT_NAME(att_softmax)(AT *x, int64_t n, int in_double, ox_cpu_isa isa) {
#ifdef AT_SOFTMAX_FAST
    if (!in_double) {
        AT_SOFTMAX_FAST(x, n, isa);
        return;
    }
#else
    (void)in_double;
    (void)isa;
#endif
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < n; j++)
        if (x[j] > mx) mx = x[j];
    if (mx == -INFINITY) mx = 0;
    for (int64_t j = 0; j < n; j++) {
        double e = exp((double)x[j] - mx);
        x[j] = (AT)e;
        sum += e;
    }
    if (sum == 0) sum = 1;
    for (int64_t j = 0; j < n; j++) x[j] = (AT)((double)x[j] / sum);
}

/* Softmax of a float16/bfloat16 row as the reference computes it in
 * that type: the shifted scores, their exponentials, the sum and the
 * quotients are each rounded to t. */
static void AT_NAME(att_softmax_low)(AT *x, int64_t n, ox_dtype t) {
    AT mx = -(AT)INFINITY;
    for (int64_t j = 0; j < n; j++)
        if (x[j] > mx) mx = x[j];
    if (mx == -(AT)INFINITY) mx = 0;
    float sum = 0;
    for (int64_t j = 0; j < n; j++) {
        x[j] = (AT)att_round(t, expf(att_round(t, (float)(x[j] - mx))));
        sum += (float)x[j];
        /* numpy sums float16 in float, but bfloat16 (a user type) one
         * rounded addition at a time */
        if (t == ONYX_BFLOAT16) sum = att_round(t, sum);
    }
    sum = att_round(t, sum);
    if (sum == 0) sum = 1;
    for (int64_t j = 0; j < n; j++) x[j] = (AT)att_round(t, (float)x[j] / sum);
}

/* Per-thread work of one Attention node: inputs already laid out as
 * dense [B, H, S, D] AT tensors (Q and K scaled). */
typedef struct AT_NAME(att_job) {
    const att_plan *p;
    const AT *q, *k, *v;
    void *y;       /* output Y in its own type */
    void *qk;      /* qk_matmul_output or NULL */
    ox_threadpool *pool; /* for the products when there is a single work item */
    const ox_stop *stop;
    atomic_int failed;
} AT_NAME(att_job);

/* One block of query rows [i0, i0 + rows) of head h of batch b. */
static int AT_NAME(att_block)(AT_NAME(att_job) *j, int64_t b, int64_t h, int64_t i0, int64_t rows,
                              AT *s, AT *out, ox_threadpool *pool) {
    const att_plan *p = j->p;
    int64_t T = p->total, kvh = h / (p->hq / p->hkv);
    const AT *q = j->q + ((b * p->hq + h) * p->sq + i0) * p->dk;
    const AT *k = j->k + (b * p->hkv + kvh) * T * p->dk;
    const AT *v = j->v + (b * p->hkv + kvh) * T * p->dv;
    /* only the keys some row of the block may attend, unless the raw
     * scores are wanted as an output (N columns of row stride T) */
    int64_t N = j->qk ? T : att_live_cols(p, b, i0 + rows - 1);
    if (N > 0 && p->dk > 0) {
        if (AT_GEMM(pool, j->stop, 0, 1, rows, N, p->dk, (AT)1, q, p->dk, k, p->dk, (AT)0, s, T)) return -1;
    } else {
        for (int64_t e = 0; e < rows * T; e++) s[e] = 0;
    }
    /* the type the scores are held in after the product: the input type,
     * or float32 once a (float32) softcap has been applied */
    ox_dtype wt = p->softcap > 0 && p->t != ONYX_FLOAT64 ? ONYX_FLOAT32 : p->t;
    for (int64_t r = 0; r < rows; r++) {
        AT *row = s + r * T;
        int64_t i = i0 + r, qk_off = ((b * p->hq + h) * p->sq + i) * T;
        AT_NAME(att_round_row)(row, N, p->t);
        if (j->qk && p->mode == 0) AT_NAME(att_store)(j->qk, p->t, qk_off, row, N);
        if (p->softcap > 0) {
            /* cap * tanh(x / cap); the reference's float32 cap lifts a
             * float16/bfloat16 row to float32 from here to the softmax */
            AT cap = (AT)p->softcap;
            for (int64_t c = 0; c < N; c++) row[c] = AT_TANH(row[c] / cap) * cap;
        }
        if (j->qk && p->mode == 1) AT_NAME(att_store)(j->qk, p->t, qk_off, row, N);
        /* the bias: -inf outside the row's key interval, plus the mask
         * inside it; a row with no finite bias is fully masked */
        int64_t lo, hi;
        att_row_range(p, b, i, N, &lo, &hi);
        int live = hi > lo;
        for (int64_t c = 0; c < lo; c++) row[c] = -(AT)INFINITY;
        for (int64_t c = hi; c < N; c++) row[c] = -(AT)INFINITY;
        if (p->mask) {
            int64_t mo = b * p->ms[0] + h * p->ms[1] + i * p->ms[2];
            live = 0;
            for (int64_t c = lo; c < hi; c++) {
                double m = att_mask_at(p, mo + c * p->ms[3]);
                if (m != -INFINITY) live = 1;
                row[c] = (AT)((double)row[c] + m);
            }
            AT_NAME(att_round_row)(row + lo, hi - lo, wt);
        }
        /* softmax over the interval only: keys outside it get 0 */
        AT *win = row + lo;
        int64_t nw = hi - lo;
        if (j->qk && p->mode == 2) AT_NAME(att_store)(j->qk, p->t, qk_off, row, N);
        /* the softmax runs in softmax_precision, or else in the input type */
        ox_dtype smt = p->softmax_t != ONYX_UNDEFINED ? p->softmax_t : wt;
        if (live && (smt == ONYX_FLOAT16 || smt == ONYX_BFLOAT16)) {
            AT_NAME(att_round_row)(win, nw, smt);
            AT_NAME(att_softmax_low)(win, nw, smt);
            AT_NAME(att_round_row)(win, nw, p->t);
        } else if (live) {
            /* cast to the softmax precision, then back (rounding) */
            if (p->softmax_t != ONYX_UNDEFINED) AT_NAME(att_round_row)(win, nw, p->softmax_t);
            AT_NAME(att_softmax)(win, nw, p->softmax_double, p->isa);
            if (p->softmax_t != ONYX_UNDEFINED) AT_NAME(att_round_row)(win, nw, p->softmax_t);
            AT_NAME(att_round_row)(win, nw, p->t);
        } else {
            /* fully masked row: zero probabilities, so a zero output row */
            for (int64_t c = lo; c < hi; c++) row[c] = 0;
        }
        for (int64_t c = 0; c < lo; c++) row[c] = 0;
        for (int64_t c = hi; c < N; c++) row[c] = 0;
        if (j->qk && p->mode == 3) AT_NAME(att_store)(j->qk, p->t, qk_off, row, N);
    }
    if (p->dv == 0) return 0;
    if (N > 0) {
        if (AT_GEMM(pool, j->stop, 0, 0, rows, p->dv, N, (AT)1, s, T, v, p->dv, (AT)0, out, p->dv)) return -1;
    } else {
        for (int64_t e = 0; e < rows * p->dv; e++) out[e] = 0;
    }
    for (int64_t r = 0; r < rows; r++) {
        int64_t i = i0 + r, off;
        if (p->rank3)
            off = (b * p->sq + i) * p->hq * p->dv + h * p->dv;
        else
            off = ((b * p->hq + h) * p->sq + i) * p->dv;
        AT_NAME(att_store)(j->y, p->t, off, out + r * p->dv, p->dv);
    }
    return 0;
}

static void AT_NAME(att_range)(void *arg, int64_t w0, int64_t w1) {
    AT_NAME(att_job) *j = arg;
    const att_plan *p = j->p;
    int64_t rows_max = p->sq < ATT_BLOCK ? p->sq : ATT_BLOCK;
    AT *s = malloc(sizeof(AT) * (size_t)(rows_max * p->total + 1));
    AT *out = malloc(sizeof(AT) * (size_t)(rows_max * p->dv + 1));
    if (!s || !out) {
        atomic_store(&j->failed, 1);
    } else {
        int64_t nblk = (p->sq + ATT_BLOCK - 1) / ATT_BLOCK;
        for (int64_t w = w0; w < w1; w++) {
            if (ox_stop_requested(j->stop)) break;
            int64_t blk = w % nblk, bh = w / nblk;
            int64_t i0 = blk * ATT_BLOCK, rows = p->sq - i0 < ATT_BLOCK ? p->sq - i0 : ATT_BLOCK;
            if (AT_NAME(att_block)(j, bh / p->hq, bh % p->hq, i0, rows, s, out, j->pool)) {
                atomic_store(&j->failed, 1);
                break;
            }
        }
    }
    free(s);
    free(out);
}

/* Runs the whole node: converts the gathered Q, K and V (of the input
 * type, dense [B, H, S, D]) into AT, then the blocks in parallel. */
static int AT_NAME(att_run)(ox_kernel_ctx *ctx, const att_plan *p, const void *qraw,
                            const void *kraw, const void *vraw, ox_dtype vt, void *y, void *qk) {
    int64_t nq = p->B * p->hq * p->sq * p->dk, nk = p->B * p->hkv * p->total * p->dk,
            nv = p->B * p->hkv * p->total * p->dv;
    AT *q = malloc(sizeof(AT) * (size_t)(nq + 1)), *k = malloc(sizeof(AT) * (size_t)(nk + 1)),
       *v = malloc(sizeof(AT) * (size_t)(nv + 1));
    int rc = 0;
    if (!q || !k || !v) {
        rc = ox_cpu_oom(ctx);
        goto done;
    }
    /* sqrt(scale) in the input type, as the reference casts it */
    AT root = p->t == ONYX_FLOAT64 ? (AT)sqrt(p->scale) : (AT)att_round(p->t, (float)sqrt(p->scale));
    AT_NAME(att_load)(q, qraw, p->t, nq, root);
    AT_NAME(att_load)(k, kraw, p->t, nk, root);
    AT_NAME(att_load)(v, vraw, vt, nv, (AT)1);
    int64_t nblk = (p->sq + ATT_BLOCK - 1) / ATT_BLOCK, work = p->B * p->hq * nblk;
    if (work == 0) goto done;
    AT_NAME(att_job) j = {p, q, k, v, y, qk, NULL, ctx->stop, 0};
    atomic_init(&j.failed, 0);
    if (work == 1) {
        j.pool = ctx->pool;
        AT_NAME(att_range)(&j, 0, 1);
    } else {
        ox_parallel_for(ctx->pool, work, 1, AT_NAME(att_range), &j);
    }
    if (atomic_load(&j.failed)) rc = ox_cpu_oom(ctx);
done:
    free(q);
    free(k);
    free(v);
    return rc;
}
