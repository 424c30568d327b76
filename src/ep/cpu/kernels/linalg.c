/* CPU kernels of the linear-algebra operators. Float32 products go
 * through the packed GEMM in gemm.c; other element types use plain
 * loops. */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "ep/cpu/kernels/gemm.h"
#include "ep/cpu/kernels/gemm_q8.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/cpu/kernels/saturate.h"
#include "ep/ep.h"

extern const ox_kernel_table ox_cpu_kernels_linalg;


/* Unsigned Gemm results clamp negatives (from a negative alpha or beta)
 * to 0 rather than wrapping like saturate.h's sat_u64. */
static uint64_t sat_u64_nonneg(double v) {
    if (!(v > 0)) return 0;
    return sat_u64(v);
}

/* ================================================================ */
/* Gemm */

/* Broadcast view of Gemm's C against an M x N output. */
typedef struct cview {
    int64_t rs, cs; /* element strides, 0 along broadcast axes */
} cview;

static int gemm_cview(ox_kernel_ctx *ctx, const ox_tensor *c, int64_t M, int64_t N, cview *v) {
    int64_t cm = 1, cn = 1;
    if (c->rank == 1) {
        cn = c->dims[0];
    } else if (c->rank == 2) {
        cm = c->dims[0];
        cn = c->dims[1];
    } else if (c->rank > 2) {
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Gemm: C must have rank <= 2");
    }
    if ((cm != 1 && cm != M) || (cn != 1 && cn != N))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "Gemm: C of shape [%lld,%lld] cannot be broadcast to [%lld,%lld]",
                              (long long)cm, (long long)cn, (long long)M, (long long)N);
    v->rs = cm == 1 ? 0 : cn;
    v->cs = cn == 1 ? 0 : 1;
    return 0;
}

#define GEMM_FILL_C(T, NAME)                                                                  \
    static void NAME(T *y, const T *c, cview v, int64_t M, int64_t N) {                       \
        for (int64_t i = 0; i < M; i++)                                                       \
            for (int64_t j = 0; j < N; j++) y[i * N + j] = c[i * v.rs + j * v.cs];            \
    }
GEMM_FILL_C(float, fill_c_f32)
GEMM_FILL_C(double, fill_c_f64)

/* Integer Gemm: exact wrap-around products (computed unsigned so that
 * overflow is defined); alpha and beta other than 1 go through double
 * and truncate, like a cast of the float result. */
#define GEMM_INT(T, U, SAT, NAME)                                                             \
    static void NAME(const T *A, const T *B, const T *C, cview cv, T *Y, int64_t M, int64_t N, \
                     int64_t K, int ta, int tb, float alpha, float beta) {                    \
        int64_t lda = ta ? M : K, ldb = tb ? K : N;                                           \
        for (int64_t i = 0; i < M; i++)                                                       \
            for (int64_t j = 0; j < N; j++) {                                                 \
                U acc = 0;                                                                    \
                for (int64_t k = 0; k < K; k++) {                                             \
                    U a = (U)(ta ? A[k * lda + i] : A[i * lda + k]);                          \
                    U b = (U)(tb ? B[j * ldb + k] : B[k * ldb + j]);                          \
                    acc += a * b;                                                             \
                }                                                                             \
                T cval = C ? C[i * cv.rs + j * cv.cs] : 0;                                    \
                if (alpha == 1.0f && (beta == 1.0f || !C))                                    \
                    Y[i * N + j] = (T)(acc + (U)cval);                                        \
                else                                                                          \
                    Y[i * N + j] = (T)SAT((double)alpha * (double)(T)acc +                    \
                                          (C ? (double)beta * (double)cval : 0.0));           \
            }                                                                                 \
    }
GEMM_INT(int32_t, uint32_t, sat_i64, gemm_i32)
GEMM_INT(int64_t, uint64_t, sat_i64, gemm_i64)
GEMM_INT(uint32_t, uint32_t, sat_u64_nonneg, gemm_u32)
GEMM_INT(uint64_t, uint64_t, sat_u64_nonneg, gemm_u64)

/* A constant float32 B becomes weights packed once, on the first product
 * that takes the packed path (the small-product paths read B itself). */
static int gemm_init(const ox_kernel_init *in, void **state, ox_error *err) {
    (void)err;
    const ox_tensor *B = in->n_inputs > 1 ? in->consts[1] : NULL;
    *state = NULL;
    if (B && B->dtype == ONYX_FLOAT32 && B->rank == 2) {
        int tb = ir_attr_int(in->node, "transB", 0) != 0;
        *state = ox_gemm_weights_new(tb, B->dims[tb ? 1 : 0], B->dims[tb ? 0 : 1], B->data,
                                     B->dims[1]);
    }
    return 0; /* without weights (or memory for them) B is packed per run */
}

static void gemm_release(void *state) { ox_gemm_weights_free(state); }

static const char *gemm_describe(const void *state) {
    return ox_gemm_weights_packed(state) ? "gemm on weights packed once" : NULL;
}

static int gemm_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *A = ox_cpu_input(ctx, 0), *B = ox_cpu_input(ctx, 1), *C = ox_cpu_input(ctx, 2);
    ox_tensor *Y = ctx->outputs[0];
    const ir_node *nd = ctx->node;
    int ta = ir_attr_int(nd, "transA", 0) != 0, tb = ir_attr_int(nd, "transB", 0) != 0;
    float alpha = ir_attr_float(nd, "alpha", 1.0f), beta = ir_attr_float(nd, "beta", 1.0f);
    if (A->rank != 2 || B->rank != 2)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Gemm: A and B must be 2-D");
    int64_t M = A->dims[ta ? 1 : 0], K = A->dims[ta ? 0 : 1];
    int64_t N = B->dims[tb ? 0 : 1];
    if (B->dims[tb ? 1 : 0] != K)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Gemm: inner dimensions %lld and %lld differ",
                              (long long)K, (long long)B->dims[tb ? 1 : 0]);
    if (Y->rank != 2 || Y->dims[0] != M || Y->dims[1] != N)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Gemm: output shape does not match inputs");
    cview cv = {0, 0};
    if (C && gemm_cview(ctx, C, M, N, &cv)) return -1;
    if (M == 0 || N == 0) return 0;
    int64_t lda = A->dims[1], ldb = B->dims[1];
    switch (A->dtype) {
    case ONYX_FLOAT32:
        if (C && beta != 0.0f) fill_c_f32(Y->data, C->data, cv, M, N);
        ox_gemm_weights *w = ctx->state;
        if (w && !ta && ox_gemm_weights_k(w) == K && ox_gemm_weights_n(w) == N) {
            if (ox_gemm_f32_weights(ctx->pool, ctx->stop, M, alpha, A->data, lda, w,
                                    C ? beta : 0.0f, Y->data, N))
                return ox_cpu_oom(ctx);
            return 0;
        }
        if (ox_gemm_f32(ctx->pool, ctx->stop, ta, tb, M, N, K, alpha, A->data, lda, B->data, ldb,
                        C ? beta : 0.0f, Y->data, N))
            return ox_cpu_oom(ctx);
        return 0;
    case ONYX_FLOAT64:
        if (C && beta != 0.0f) fill_c_f64(Y->data, C->data, cv, M, N);
        return ox_gemm_f64(ctx->pool, ctx->stop, ta, tb, M, N, K, alpha, A->data, lda, B->data, ldb,
                           C ? beta : 0.0, Y->data, N);
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16: {
        float *a = ox_cpu_to_f32(A), *b = ox_cpu_to_f32(B), *c = C ? ox_cpu_to_f32(C) : NULL;
        float *y = malloc(sizeof(float) * (size_t)(M * N));
        int rc = 0;
        if (!a || !b || !y || (C && !c)) {
            rc = ox_cpu_oom(ctx);
        } else {
            if (C && beta != 0.0f) fill_c_f32(y, c, cv, M, N);
            if (ox_gemm_f32(ctx->pool, ctx->stop, ta, tb, M, N, K, alpha, a, lda, b, ldb, C ? beta : 0.0f, y, N))
                rc = ox_cpu_oom(ctx);
            else
                ox_cpu_from_f32(Y, y);
        }
        free(a);
        free(b);
        free(c);
        free(y);
        return rc;
    }
    case ONYX_INT32:
        gemm_i32(A->data, B->data, C ? C->data : NULL, cv, Y->data, M, N, K, ta, tb, alpha, beta);
        return 0;
    case ONYX_INT64:
        gemm_i64(A->data, B->data, C ? C->data : NULL, cv, Y->data, M, N, K, ta, tb, alpha, beta);
        return 0;
    case ONYX_UINT32:
        gemm_u32(A->data, B->data, C ? C->data : NULL, cv, Y->data, M, N, K, ta, tb, alpha, beta);
        return 0;
    case ONYX_UINT64:
        gemm_u64(A->data, B->data, C ? C->data : NULL, cv, Y->data, M, N, K, ta, tb, alpha, beta);
        return 0;
    default:
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "Gemm: element type %s is not supported",
                              ox_dtype_name(A->dtype));
    }
}

static int supports_gemm_types(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    (void)node;
    if (n_inputs < 1 || !inputs[0]) return 1;
    switch (inputs[0]->dtype) {
    case ONYX_FLOAT32:
    case ONYX_FLOAT64:
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16:
    case ONYX_INT32:
    case ONYX_INT64:
    case ONYX_UINT32:
    case ONYX_UINT64:
    case ONYX_UNDEFINED:
        return 1;
    default:
        return 0;
    }
}

/* ================================================================ */
/* numpy matmul batching, shared by MatMul, MatMulInteger, QLinearMatMul */

typedef struct mm_plan {
    int64_t M, N, K;
    int64_t nb;        /* number of output matrices */
    int br;            /* batch rank */
    int64_t bdims[OX_MAX_RANK];
    int64_t astr[OX_MAX_RANK], bstr[OX_MAX_RANK]; /* in elements; 0 when broadcast */
    int a_full;        /* A's batch covers the whole output batch contiguously */
    int64_t b_count;   /* number of distinct B matrices */
} mm_plan;

static int mm_plan_make(ox_kernel_ctx *ctx, const ox_tensor *a, const ox_tensor *b, mm_plan *p) {
    const char *op = ctx->node->op_type;
    if (a->rank < 1 || b->rank < 1)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: inputs must have rank >= 1", op);
    int ra = a->rank, rb = b->rank;
    p->M = ra == 1 ? 1 : a->dims[ra - 2];
    p->K = a->dims[ra - 1];
    int64_t kb = rb == 1 ? b->dims[0] : b->dims[rb - 2];
    p->N = rb == 1 ? 1 : b->dims[rb - 1];
    if (kb != p->K)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "%s: inner dimensions do not match: A has %lld columns, B has %lld rows",
                              op, (long long)p->K, (long long)kb);
    int ba = ra > 2 ? ra - 2 : 0, bb = rb > 2 ? rb - 2 : 0;
    int r = ba > bb ? ba : bb;
    p->br = r;
    int64_t sa = p->M * p->K, sb = p->K * p->N;
    p->nb = 1;
    p->b_count = 1;
    int64_t a_count = 1;
    for (int d = r - 1; d >= 0; d--) {
        int64_t da = d < r - ba ? 1 : a->dims[d - (r - ba)];
        int64_t db = d < r - bb ? 1 : b->dims[d - (r - bb)];
        if (da != db && da != 1 && db != 1)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "%s: batch dimensions %lld and %lld cannot be broadcast", op,
                                  (long long)da, (long long)db);
        p->bdims[d] = da == 1 ? db : da;
        p->astr[d] = da == 1 ? 0 : sa;
        p->bstr[d] = db == 1 ? 0 : sb;
        sa *= da;
        sb *= db;
        p->nb *= p->bdims[d];
        a_count *= da;
        p->b_count *= db;
    }
    p->a_full = a_count == p->nb;
    return 0;
}

static void mm_offsets(const mm_plan *p, int64_t idx, int64_t *ao, int64_t *bo) {
    int64_t a = 0, b = 0;
    for (int d = p->br - 1; d >= 0; d--) {
        int64_t i = idx % p->bdims[d];
        idx /= p->bdims[d];
        a += i * p->astr[d];
        b += i * p->bstr[d];
    }
    *ao = a;
    *bo = b;
}

/* ================================================================ */
/* MatMul */

typedef struct mm_job {
    const mm_plan *p;
    const void *A, *B;
    void *Y;
    ox_threadpool *pool;
    const ox_stop *stop;
    int dtype; /* ONYX_FLOAT32 or ONYX_FLOAT64 */
    atomic_int failed;
} mm_job;

static int mm_one(const mm_job *j, int64_t idx, ox_threadpool *pool) {
    const mm_plan *p = j->p;
    int64_t ao, bo;
    mm_offsets(p, idx, &ao, &bo);
    int64_t yo = idx * p->M * p->N;
    if (j->dtype == ONYX_FLOAT32)
        return ox_gemm_f32(pool, j->stop, 0, 0, p->M, p->N, p->K, 1.0f, (const float *)j->A + ao, p->K,
                           (const float *)j->B + bo, p->N, 0.0f, (float *)j->Y + yo, p->N);
    return ox_gemm_f64(pool, j->stop, 0, 0, p->M, p->N, p->K, 1.0, (const double *)j->A + ao, p->K,
                       (const double *)j->B + bo, p->N, 0.0, (double *)j->Y + yo, p->N);
}

static void mm_batch_range(void *arg, int64_t b0, int64_t b1) {
    mm_job *j = arg;
    for (int64_t i = b0; i < b1; i++)
        if (mm_one(j, i, j->pool)) atomic_store(&j->failed, 1);
}

/* w: a constant float32 B as weights packed once (matmul_init), or NULL */
static int mm_float(ox_kernel_ctx *ctx, const mm_plan *p, const void *A, const void *B, void *Y,
                    int dtype, ox_gemm_weights *w) {
    if (p->nb == 0 || p->M == 0 || p->N == 0) return 0;
    mm_job j = {p, A, B, Y, ctx->pool, ctx->stop, dtype, 0};
    atomic_init(&j.failed, 0);
    if (p->b_count == 1 && p->a_full) {
        /* every A matrix meets the same B: one tall product */
        int64_t rows = p->nb * p->M;
        if (w && dtype == ONYX_FLOAT32 && ox_gemm_weights_k(w) == p->K && ox_gemm_weights_n(w) == p->N)
            return ox_gemm_f32_weights(ctx->pool, ctx->stop, rows, 1.0f, A, p->K, w, 0.0f, Y, p->N) ? ox_cpu_oom(ctx)
                                                                                                    : 0;
        int rc = dtype == ONYX_FLOAT32
                     ? ox_gemm_f32(ctx->pool, ctx->stop, 0, 0, rows, p->N, p->K, 1.0f, A, p->K, B, p->N, 0.0f, Y,
                                   p->N)
                     : ox_gemm_f64(ctx->pool, ctx->stop, 0, 0, rows, p->N, p->K, 1.0, A, p->K, B, p->N, 0.0, Y,
                                   p->N);
        return rc ? ox_cpu_oom(ctx) : 0;
    }
    int threads = ox_threadpool_size(ctx->pool);
    if (p->nb >= threads && threads > 1) {
        /* workers inside this loop run their products inline */
        int64_t work = p->M * p->N * (p->K ? p->K : 1);
        int64_t grain = work >= 65536 ? 1 : 65536 / work;
        ox_parallel_for(ctx->pool, p->nb, grain, mm_batch_range, &j);
    } else {
        for (int64_t i = 0; i < p->nb; i++)
            if (mm_one(&j, i, ctx->pool)) atomic_store(&j.failed, 1);
    }
    return atomic_load(&j.failed) ? ox_cpu_oom(ctx) : 0;
}

#define MM_INT(T, U, NAME)                                                                    \
    static void NAME(const mm_plan *p, const T *A, const T *B, T *Y) {                        \
        for (int64_t bi = 0; bi < p->nb; bi++) {                                              \
            int64_t ao, bo;                                                                   \
            mm_offsets(p, bi, &ao, &bo);                                                      \
            const T *a = A + ao, *b = B + bo;                                                 \
            T *y = Y + bi * p->M * p->N;                                                      \
            for (int64_t i = 0; i < p->M; i++) {                                              \
                U *row = (U *)(void *)(y + i * p->N);                                         \
                for (int64_t x = 0; x < p->N; x++) row[x] = 0;                                \
                for (int64_t k = 0; k < p->K; k++) {                                          \
                    U av = (U)a[i * p->K + k];                                                \
                    const T *br = b + k * p->N;                                               \
                    for (int64_t x = 0; x < p->N; x++) row[x] += av * (U)br[x];               \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
    }
MM_INT(int32_t, uint32_t, mm_i32)
MM_INT(int64_t, uint64_t, mm_i64)
MM_INT(uint32_t, uint32_t, mm_u32)
MM_INT(uint64_t, uint64_t, mm_u64)

/* A constant float32 matrix B (a linear layer without a bias: LLaMA's)
 * becomes weights packed once, as Gemm's: packed per run, LLaMA's
 * 256 x 688 product took 0.26 ms of 64 rows, twice ONNX Runtime's time. */
static int matmul_init(const ox_kernel_init *in, void **state, ox_error *err) {
    (void)err;
    const ox_tensor *B = in->n_inputs > 1 ? in->consts[1] : NULL;
    *state = NULL;
    if (B && B->dtype == ONYX_FLOAT32 && B->rank == 2)
        *state = ox_gemm_weights_new(0, B->dims[0], B->dims[1], B->data, B->dims[1]);
    return 0; /* without weights (or memory for them) B is packed per run */
}

static int matmul_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *A = ox_cpu_input(ctx, 0), *B = ox_cpu_input(ctx, 1);
    ox_tensor *Y = ctx->outputs[0];
    mm_plan p;
    if (mm_plan_make(ctx, A, B, &p)) return -1;
    if (ox_tensor_numel(Y) != p.nb * p.M * p.N)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "MatMul: output shape does not match inputs");
    switch (A->dtype) {
    case ONYX_FLOAT32:
    case ONYX_FLOAT64:
        return mm_float(ctx, &p, A->data, B->data, Y->data, A->dtype, ctx->state);
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16: {
        float *a = ox_cpu_to_f32(A), *b = ox_cpu_to_f32(B);
        int64_t ny = ox_tensor_numel(Y);
        float *y = malloc(sizeof(float) * (size_t)(ny > 0 ? ny : 1));
        int rc;
        if (!a || !b || !y) {
            rc = ox_cpu_oom(ctx);
        } else {
            rc = mm_float(ctx, &p, a, b, y, ONYX_FLOAT32, NULL);
            if (!rc) ox_cpu_from_f32(Y, y);
        }
        free(a);
        free(b);
        free(y);
        return rc;
    }
    case ONYX_INT32:
        mm_i32(&p, A->data, B->data, Y->data);
        return 0;
    case ONYX_INT64:
        mm_i64(&p, A->data, B->data, Y->data);
        return 0;
    case ONYX_UINT32:
        mm_u32(&p, A->data, B->data, Y->data);
        return 0;
    case ONYX_UINT64:
        mm_u64(&p, A->data, B->data, Y->data);
        return 0;
    default:
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "MatMul: element type %s is not supported",
                              ox_dtype_name(A->dtype));
    }
}

/* ================================================================ */
/* MatMulInteger and QLinearMatMul: exact int32 products of
 * zero-point-shifted 8-bit operands */

static int q8_check(ox_kernel_ctx *ctx, const ox_tensor *t, const char *what) {
    if (t->dtype != ONYX_INT8 && t->dtype != ONYX_UINT8)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: %s must be int8 or uint8, got %s",
                              ctx->node->op_type, what, ox_dtype_name(t->dtype));
    return 0;
}

/* Per-tensor, per-row (A) or per-column (B) quantization parameter.
 * `per` is the row/column count, `batch` the matrix count of the tensor
 * it belongs to; the parameter may also hold one value per matrix row. */
typedef struct qparam {
    const ox_tensor *t;
    int64_t mode; /* 0 scalar, 1 per row/column, 2 per matrix and row/column */
    int64_t per;
} qparam;

static int qparam_make(ox_kernel_ctx *ctx, const ox_tensor *t, int64_t per, int64_t batch,
                       const char *what, qparam *q) {
    q->t = t;
    q->per = per;
    q->mode = 0;
    if (!t) return 0;
    int64_t n = ox_tensor_numel(t);
    if (n == 1)
        q->mode = 0;
    else if (n == per)
        q->mode = 1;
    else if (n == per * batch)
        q->mode = 2;
    else
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: %s has %lld values, expected 1 or %lld",
                              ctx->node->op_type, what, (long long)n, (long long)per);
    return 0;
}

static double qparam_at(const qparam *q, int64_t mat, int64_t j) {
    if (!q->t) return 0.0;
    int64_t i = q->mode == 0 ? 0 : q->mode == 1 ? j : mat * q->per + j;
    return ox_get_f64(q->t->data, q->t->dtype, (size_t)i);
}

/* acc[b][i][j] = sum_k (A[i][k] - za) * (B[k][j] - zb) for every output
 * matrix b of the plan; one B is packed once for all of them, or was
 * packed at session creation (packed: B and zb are then constants). */
static int qmm_int32(ox_kernel_ctx *ctx, const mm_plan *p, const ox_tensor *A, const qparam *za,
                     const ox_tensor *B, const qparam *zb, const ox_q8_packed_b *packed, int32_t *acc) {
    if (p->nb == 0 || p->M == 0 || p->N == 0) return 0;
    if (p->K == 0) {
        memset(acc, 0, (size_t)(p->nb * p->M * p->N) * sizeof *acc);
        return 0;
    }
    const int64_t mk = p->M * p->K, kn = p->K * p->N;
    /* one B for matrices of A that follow each other: one product of all
     * their rows (a transformer's [tokens, batch, d] x [d, n] would
     * otherwise be `tokens` products of `batch` rows each) */
    const int fold = p->b_count == 1 && p->a_full;
    const int64_t products = fold ? 1 : p->nb, rows = fold ? p->nb * p->M : p->M;
    int32_t *zero = malloc(sizeof(int32_t) * (size_t)(rows + p->N));
    if (!zero) return ox_cpu_oom(ctx);
    ox_q8_matrix qa = {NULL, A->dtype == ONYX_INT8, p->K, zero, 1};
    ox_q8_matrix qb = {NULL, B->dtype == ONYX_INT8, p->N, zero + rows, 1};
    ox_q8_packed_b *shared = NULL;
    const ox_q8_packed_b *one_b = packed;
    int rc = 0;
    for (int64_t bi = 0; rc == 0 && bi < products; bi++) {
        int64_t ao, bo;
        mm_offsets(p, bi, &ao, &bo);
        /* row i of this product: row i % M of A's matrix ao / mk + i / M */
        for (int64_t i = 0; i < rows; i++) zero[i] = (int32_t)qparam_at(za, ao / mk + i / p->M, i % p->M);
        for (int64_t x = 0; x < p->N; x++) zero[rows + x] = (int32_t)qparam_at(zb, bo / kn, x);
        qa.data = (const uint8_t *)A->data + ao;
        qb.data = (const uint8_t *)B->data + bo;
        int32_t *c = acc + bi * rows * p->N;
        if (p->b_count > 1) {
            rc = ox_gemm_q8(ctx->pool, ctx->stop, rows, p->N, p->K, &qa, &qb, c, p->N);
            continue;
        }
        if (!one_b && !(one_b = shared = ox_q8_pack_b(p->K, p->N, &qb))) rc = -1;
        if (rc == 0) rc = ox_gemm_q8_packed(ctx->pool, ctx->stop, rows, &qa, one_b, c, p->N);
    }
    ox_q8_packed_b_free(shared);
    free(zero);
    return rc ? ox_cpu_oom(ctx) : 0;
}

static int64_t batch_count(const ox_tensor *t) { return t->rank > 2 ? ox_numel(t->dims, t->rank - 2) : 1; }

/* A constant 2-D B with a constant (or no) zero point is packed once at
 * session creation; the products then read the pack. */
static int qmm_init(const ox_kernel_init *in, int zb_input, void **state) {
    const ox_tensor *B = in->n_inputs > zb_input - 2 ? in->consts[zb_input - 2] : NULL;
    const ox_tensor *ZB = in->n_inputs > zb_input ? in->consts[zb_input] : NULL;
    int has_zb = in->n_inputs > zb_input && in->node->inputs[zb_input] >= 0;
    *state = NULL;
    if (!B || B->rank != 2 || (B->dtype != ONYX_INT8 && B->dtype != ONYX_UINT8) || (has_zb && !ZB) ||
        (ZB && (ZB->dtype != B->dtype || (ox_tensor_numel(ZB) != 1 && ox_tensor_numel(ZB) != B->dims[1]))))
        return 0;
    int64_t K = B->dims[0], N = B->dims[1];
    int32_t *zero = calloc((size_t)(N > 0 ? N : 1), sizeof *zero);
    if (!zero) return 0;
    for (int64_t n = 0; ZB && n < N; n++)
        zero[n] = (int32_t)ox_get_i64(ZB->data, ZB->dtype, ox_tensor_numel(ZB) == 1 ? 0 : (size_t)n);
    ox_q8_matrix qb = {B->data, B->dtype == ONYX_INT8, N, zero, 1};
    *state = ox_q8_pack_b(K, N, &qb); /* NULL (no memory, empty B): packed per run */
    free(zero);
    return 0;
}

static void qmm_release(void *state) { ox_q8_packed_b_free(state); }

static const char *qmm_describe(const void *state) {
    return state ? "8-bit gemm on weights packed once" : NULL;
}

static int matmul_integer_init(const ox_kernel_init *in, void **state, ox_error *err) {
    (void)err;
    return qmm_init(in, 3, state);
}

static int qlinear_matmul_init(const ox_kernel_init *in, void **state, ox_error *err) {
    (void)err;
    return qmm_init(in, 5, state);
}

static int matmul_integer_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *A = ox_cpu_input(ctx, 0), *B = ox_cpu_input(ctx, 1);
    ox_tensor *Y = ctx->outputs[0];
    if (q8_check(ctx, A, "A") || q8_check(ctx, B, "B")) return -1;
    mm_plan p;
    if (mm_plan_make(ctx, A, B, &p)) return -1;
    if (Y->dtype != ONYX_INT32 || ox_tensor_numel(Y) != p.nb * p.M * p.N)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "MatMulInteger: output does not match inputs");
    qparam za, zb;
    const ox_tensor *ZA = ox_cpu_input(ctx, 2), *ZB = ox_cpu_input(ctx, 3);
    if ((ZA && ZA->dtype != A->dtype) || (ZB && ZB->dtype != B->dtype))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "MatMulInteger: zero points must match their inputs' types");
    if (qparam_make(ctx, ZA, p.M, batch_count(A), "a_zero_point", &za) ||
        qparam_make(ctx, ZB, p.N, batch_count(B), "b_zero_point", &zb))
        return -1;
    return qmm_int32(ctx, &p, A, &za, B, &zb, ctx->state, Y->data);
}

/* Rounds a float32 value to the precision of scale type t. */
static float scale_round(ox_dtype t, float v) {
    if (t == ONYX_FLOAT16) return ox_half_to_float(ox_float_to_half(v));
    if (t == ONYX_BFLOAT16) return ox_bf16_to_float(ox_float_to_bf16(v));
    return v;
}

static int qlinear_matmul_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *A = ox_cpu_input(ctx, 0), *B = ox_cpu_input(ctx, 3),
                    *YZ = ox_cpu_input(ctx, 7);
    ox_tensor *Y = ctx->outputs[0];
    if (q8_check(ctx, A, "a") || q8_check(ctx, B, "b") || q8_check(ctx, YZ, "y_zero_point")) return -1;
    mm_plan p;
    if (mm_plan_make(ctx, A, B, &p)) return -1;
    if (Y->dtype != YZ->dtype || ox_tensor_numel(Y) != p.nb * p.M * p.N)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "QLinearMatMul: output does not match inputs");
    const ox_tensor *SA = ox_cpu_input(ctx, 1), *SB = ox_cpu_input(ctx, 4), *SY = ox_cpu_input(ctx, 6);
    if (!SA || !SB || !SY || SA->dtype != SB->dtype || SA->dtype != SY->dtype ||
        (SA->dtype != ONYX_FLOAT32 && SA->dtype != ONYX_FLOAT16 && SA->dtype != ONYX_BFLOAT16))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "QLinearMatMul: a_scale, b_scale and y_scale must share one type of "
                              "float32, float16 or bfloat16");
    qparam za, zb, sa, sb, sy, zy;
    int64_t ba = batch_count(A), bb = batch_count(B);
    if (qparam_make(ctx, ox_cpu_input(ctx, 2), p.M, ba, "a_zero_point", &za) ||
        qparam_make(ctx, ox_cpu_input(ctx, 5), p.N, bb, "b_zero_point", &zb) ||
        qparam_make(ctx, ox_cpu_input(ctx, 1), p.M, ba, "a_scale", &sa) ||
        qparam_make(ctx, ox_cpu_input(ctx, 4), p.N, bb, "b_scale", &sb) ||
        qparam_make(ctx, ox_cpu_input(ctx, 6), 1, 1, "y_scale", &sy) ||
        qparam_make(ctx, YZ, 1, 1, "y_zero_point", &zy))
        return -1;
    int64_t ny = p.nb * p.M * p.N;
    int32_t *acc = malloc(sizeof(int32_t) * (size_t)(ny > 0 ? ny : 1));
    if (!acc) return ox_cpu_oom(ctx);
    if (qmm_int32(ctx, &p, A, &za, B, &zb, ctx->state, acc)) {
        free(acc);
        return -1;
    }
    double lo = Y->dtype == ONYX_UINT8 ? 0 : -128, hi = Y->dtype == ONYX_UINT8 ? 255 : 127;
    double yzp = qparam_at(&zy, 0, 0);
    float ys = (float)qparam_at(&sy, 0, 0);
    ox_dtype st = sa.t->dtype;
    for (int64_t bi = 0; bi < p.nb; bi++) {
        int64_t ao, bo;
        mm_offsets(&p, bi, &ao, &bo);
        int64_t mk = p.M * p.K, kn = p.K * p.N;
        int64_t amat = mk > 0 ? ao / mk : 0, bmat = kn > 0 ? bo / kn : 0;
        for (int64_t i = 0; i < p.M; i++)
            for (int64_t x = 0; x < p.N; x++) {
                /* the multiplier is formed in the scales' own precision
                 * (float32, or float16/bfloat16 since version 21) */
                float mult = scale_round(st, (float)qparam_at(&sa, amat, i) *
                                                 (float)qparam_at(&sb, bmat, x));
                mult = scale_round(st, mult / ys);
                int64_t e = (bi * p.M + i) * p.N + x;
                double v = nearbyint((double)acc[e] * (double)mult) + yzp;
                v = v < lo ? lo : v > hi ? hi : v;
                /* a zero or NaN scale makes v NaN, which the clamp
                 * keeps: the saturating store maps it to 0 (as
                 * ONNX Runtime does) instead of an undefined cast */
                if (Y->dtype == ONYX_UINT8)
                    ((uint8_t *)Y->data)[e] = sat_u8(v);
                else
                    ((int8_t *)Y->data)[e] = sat_i8(v);
            }
    }
    free(acc);
    return 0;
}

/* ================================================================ */
/* Det: LU factorisation with partial pivoting, in double */

static int det_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *X = ox_cpu_input(ctx, 0);
    ox_tensor *Y = ctx->outputs[0];
    if (X->rank < 2 || X->dims[X->rank - 1] != X->dims[X->rank - 2])
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Det: input must be [..., n, n]");
    if (!ox_dtype_is_float(X->dtype))
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "Det: element type %s is not supported",
                              ox_dtype_name(X->dtype));
    int64_t n = X->dims[X->rank - 1], count = ox_numel(X->dims, X->rank - 2);
    double *m = malloc(sizeof(double) * (size_t)(n * n > 0 ? n * n : 1));
    if (!m) return ox_cpu_oom(ctx);
    for (int64_t b = 0; b < count; b++) {
        for (int64_t i = 0; i < n * n; i++) m[i] = ox_get_f64(X->data, X->dtype, (size_t)(b * n * n + i));
        double det = 1.0;
        for (int64_t c = 0; c < n && det != 0.0; c++) {
            int64_t piv = c;
            for (int64_t r = c + 1; r < n; r++)
                if (fabs(m[r * n + c]) > fabs(m[piv * n + c])) piv = r;
            if (m[piv * n + c] == 0.0) {
                det = 0.0;
                break;
            }
            if (piv != c) {
                for (int64_t k = 0; k < n; k++) {
                    double t = m[c * n + k];
                    m[c * n + k] = m[piv * n + k];
                    m[piv * n + k] = t;
                }
                det = -det;
            }
            double d = m[c * n + c];
            det *= d;
            for (int64_t r = c + 1; r < n; r++) {
                double f = m[r * n + c] / d;
                if (f == 0.0) continue;
                for (int64_t k = c; k < n; k++) m[r * n + k] -= f * m[c * n + k];
            }
        }
        ox_set_f64(Y->data, Y->dtype, (size_t)b, det);
    }
    free(m);
    return 0;
}

/* ================================================================ */
/* Einsum: every output element is a sum over the contracted labels of
 * the product of the operands; labels are walked with an odometer that
 * moves each operand's offset by that label's stride. */

#define EIN_MAX_LABELS (52 + OX_MAX_RANK)

typedef struct ein_term {
    int n;
    int labels[OX_MAX_RANK + 1]; /* -1 marks the ellipsis */
    int has_ell;
} ein_term;

static int ein_letter(int ch) {
    if (ch >= 'a' && ch <= 'z') return ch - 'a';
    if (ch >= 'A' && ch <= 'Z') return 26 + ch - 'A';
    return -1;
}

static int ein_parse(ox_kernel_ctx *ctx, const char **p, const char *end, ein_term *t) {
    t->n = 0;
    t->has_ell = 0;
    const char *s = *p;
    while (s < end && *s != ',' && *s != '-') {
        if (*s == ' ' || *s == '\t') {
            s++;
            continue;
        }
        int lab;
        if (*s == '.') {
            if (end - s < 3 || s[1] != '.' || s[2] != '.' || t->has_ell)
                return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Einsum: malformed ellipsis");
            t->has_ell = 1;
            lab = -1;
            s += 3;
        } else {
            lab = ein_letter((unsigned char)*s);
            if (lab < 0) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Einsum: bad character in equation");
            s++;
        }
        if (t->n > OX_MAX_RANK) return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "Einsum: term too long");
        t->labels[t->n++] = lab;
    }
    *p = s;
    return 0;
}

/* Copies between a strided view (labels `labs`, strides `str`) and a
 * dense buffer laid out in the order of `labs`. */
static void ein_copy(void *dense, void *strided, size_t es, const int *labs, int n,
                     const int64_t *size, const int64_t *str, int to_dense) {
    int64_t idx[EIN_MAX_LABELS] = {0}, total = 1, off = 0;
    for (int k = 0; k < n; k++) total *= size[labs[k]];
    for (int64_t e = 0; e < total; e++) {
        if (es == 4) {
            float *d = (float *)dense + e, *s = (float *)strided + off;
            if (to_dense) *d = *s;
            else *s = *d;
        } else {
            double *d = (double *)dense + e, *s = (double *)strided + off;
            if (to_dense) *d = *s;
            else *s = *d;
        }
        for (int k = n - 1; k >= 0; k--) {
            int l = labs[k];
            off += str[l];
            if (++idx[k] < size[l]) break;
            off -= str[l] * size[l];
            idx[k] = 0;
        }
    }
}

/* Two operands whose labels are each batch (both inputs and output), row
 * (first input and output), column (second input and output) or
 * contracted (both inputs, not output) become a batched GEMM. Sets *done
 * when it handled the node. */
static int einsum_as_gemm(ox_kernel_ctx *ctx, const int64_t *size, int64_t (*str)[EIN_MAX_LABELS],
                          int (*occ)[EIN_MAX_LABELS], const int *order, int n_out, int n_all,
                          int *done) {
    int lb[EIN_MAX_LABELS], lm[EIN_MAX_LABELS], ln[EIN_MAX_LABELS], lk[EIN_MAX_LABELS];
    int nb = 0, nm = 0, nn = 0, nk = 0;
    *done = 0;
    for (int k = 0; k < n_all; k++) {
        int l = order[k], a = occ[0][l], b = occ[1][l];
        if (a > 1 || b > 1) return 0; /* diagonals */
        if (k < n_out) {
            if (a && b) lb[nb++] = l;
            else if (a) lm[nm++] = l;
            else if (b) ln[nn++] = l;
            else return 0;
        } else {
            if (!(a && b)) return 0; /* summed over one operand only */
            lk[nk++] = l;
        }
    }
    ox_tensor *Y = ctx->outputs[0];
    const ox_tensor *A = ctx->inputs[0], *B = ctx->inputs[1];
    if (A->dtype != Y->dtype || B->dtype != Y->dtype) return 0;
    int64_t NB = 1, M = 1, N = 1, K = 1;
    for (int k = 0; k < nb; k++) NB *= size[lb[k]];
    for (int k = 0; k < nm; k++) M *= size[lm[k]];
    for (int k = 0; k < nn; k++) N *= size[ln[k]];
    for (int k = 0; k < nk; k++) K *= size[lk[k]];
    size_t es = ox_dtype_size(Y->dtype);
    int la[EIN_MAX_LABELS], lbb[EIN_MAX_LABELS], ly[EIN_MAX_LABELS];
    int na = 0, nbb = 0, ny = 0;
    for (int k = 0; k < nb; k++) la[na++] = lbb[nbb++] = ly[ny++] = lb[k];
    for (int k = 0; k < nm; k++) la[na++] = ly[ny++] = lm[k];
    for (int k = 0; k < nk; k++) la[na++] = lbb[nbb++] = lk[k];
    for (int k = 0; k < nn; k++) lbb[nbb++] = ly[ny++] = ln[k];
    int64_t ystr[EIN_MAX_LABELS] = {0}, s = 1;
    for (int k = n_out - 1; k >= 0; k--) {
        ystr[order[k]] = s;
        s *= size[order[k]];
    }
    void *ap = malloc(es * (size_t)(NB * M * K > 0 ? NB * M * K : 1));
    void *bp = malloc(es * (size_t)(NB * K * N > 0 ? NB * K * N : 1));
    void *cp = malloc(es * (size_t)(NB * M * N > 0 ? NB * M * N : 1));
    int rc = 0;
    if (!ap || !bp || !cp) {
        rc = ox_cpu_oom(ctx);
        goto out;
    }
    ein_copy(ap, A->data, es, la, na, size, str[0], 1);
    ein_copy(bp, B->data, es, lbb, nbb, size, str[1], 1);
    for (int64_t b = 0; b < NB && !rc; b++) {
        int r = es == 4 ? ox_gemm_f32(ctx->pool, ctx->stop, 0, 0, M, N, K, 1.0f, (float *)ap + b * M * K, K,
                                      (float *)bp + b * K * N, N, 0.0f, (float *)cp + b * M * N, N)
                        : ox_gemm_f64(ctx->pool, ctx->stop, 0, 0, M, N, K, 1.0, (double *)ap + b * M * K, K,
                                      (double *)bp + b * K * N, N, 0.0, (double *)cp + b * M * N, N);
        if (r) rc = ox_cpu_oom(ctx);
    }
    if (!rc) ein_copy(cp, Y->data, es, ly, ny, size, ystr, 0);
    *done = 1;
out:
    free(ap);
    free(bp);
    free(cp);
    return rc;
}

static int einsum_compute(ox_kernel_ctx *ctx) {
    const char *eq = ir_attr_string(ctx->node, "equation", NULL);
    if (!eq) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Einsum: missing equation");
    int nops = ctx->n_inputs;
    if (nops < 1 || nops > OX_MAX_RANK)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Einsum: bad operand count %d", nops);
    ox_tensor *Y = ctx->outputs[0];
    const char *end = eq + strlen(eq), *arrow = strstr(eq, "->");
    const char *lhs_end = arrow ? arrow : end, *p = eq;
    ein_term terms[OX_MAX_RANK], ot;
    for (int i = 0; i < nops; i++) {
        if (ein_parse(ctx, &p, lhs_end, &terms[i])) return -1;
        if (i + 1 < nops) {
            if (p >= lhs_end || *p != ',')
                return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Einsum: equation does not match the inputs");
            p++;
        }
    }
    if (p != lhs_end) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Einsum: equation does not match the inputs");
    /* sizes and per-operand strides of every label; ellipsis dims are
     * labels 52.. (right-aligned) */
    int64_t size[EIN_MAX_LABELS];
    int count[EIN_MAX_LABELS] = {0};
    for (int l = 0; l < EIN_MAX_LABELS; l++) size[l] = -1;
    int ell_rank = 0;
    for (int i = 0; i < nops; i++) {
        const ox_tensor *t = ctx->inputs[i];
        if (!t) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Einsum: missing operand");
        int fixed = terms[i].n - terms[i].has_ell;
        int er = t->rank - fixed;
        if (er < 0 || (!terms[i].has_ell && er != 0))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Einsum: operand %d rank %d does not match its term", i, t->rank);
        if (er > ell_rank) ell_rank = er;
    }
    int64_t (*str)[EIN_MAX_LABELS] = calloc((size_t)nops, sizeof *str);
    int (*occ)[EIN_MAX_LABELS] = calloc((size_t)nops, sizeof *occ);
    if (!str || !occ) {
        free(str);
        free(occ);
        return ox_cpu_oom(ctx);
    }
    int rc = 0;
    for (int i = 0; i < nops && !rc; i++) {
        const ox_tensor *t = ctx->inputs[i];
        int64_t tstr[OX_MAX_RANK];
        int64_t s = 1;
        for (int d = t->rank - 1; d >= 0; d--) {
            tstr[d] = s;
            s *= t->dims[d];
        }
        int fixed = terms[i].n - terms[i].has_ell, er = t->rank - fixed, d = 0;
        for (int k = 0; k < terms[i].n && !rc; k++) {
            int labs[OX_MAX_RANK], nl = 0;
            if (terms[i].labels[k] < 0) {
                for (int e = 0; e < er; e++) labs[nl++] = 52 + ell_rank - er + e;
            } else {
                labs[nl++] = terms[i].labels[k];
            }
            for (int q = 0; q < nl; q++, d++) {
                int l = labs[q];
                int64_t dim = t->dims[d];
                count[l]++;
                occ[i][l]++;
                if (l >= 52) {
                    /* ellipsis dims broadcast numpy-style */
                    if (dim == 1) continue;
                    if (size[l] > 1 && size[l] != dim) rc = -1;
                    size[l] = dim;
                } else {
                    if (size[l] >= 0 && size[l] != dim) rc = -1;
                    size[l] = dim;
                }
                if (rc) {
                    ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Einsum: operand %d dimension %d (size %lld) conflicts with another use of its label",
                                   i, d, (long long)dim);
                    break;
                }
                str[i][l] += tstr[d];
            }
        }
    }
    for (int l = 52; l < 52 + ell_rank; l++)
        if (size[l] < 0) size[l] = 1;
    int order[EIN_MAX_LABELS], n_out = 0, n_all;
    int in_out[EIN_MAX_LABELS] = {0};
    if (!rc) {
        if (arrow) {
            const char *q = arrow + 2;
            if (ein_parse(ctx, &q, end, &ot)) rc = -1;
            for (int k = 0; !rc && k < ot.n; k++) {
                /* an ellipsis may stand for no dims at all ("...ij" on a
                 * 2-D operand), so only labels just appended are marked */
                if (ot.labels[k] < 0) {
                    for (int e = 0; e < ell_rank; e++) in_out[order[n_out++] = 52 + e] = 1;
                } else {
                    if (!count[ot.labels[k]] || in_out[ot.labels[k]]) {
                        rc = ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Einsum: bad output term");
                        break;
                    }
                    in_out[order[n_out++] = ot.labels[k]] = 1;
                }
            }
        } else {
            for (int e = 0; e < ell_rank; e++) order[n_out++] = 52 + e;
            for (int o = 0; o < 52; o++) {
                int l = o < 26 ? o + 26 : o - 26;
                if (count[l] == 1) order[n_out++] = l;
            }
        }
    }
    if (rc) {
        free(str);
        free(occ);
        return -1;
    }
    for (int k = 0; k < n_out; k++) in_out[order[k]] = 1;
    n_all = n_out;
    for (int l = 0; l < 52 + ell_rank; l++)
        if (count[l] && !in_out[l]) order[n_all++] = l;
    int64_t outer = 1, inner = 1;
    int fits = 1;
    for (int k = 0; k < n_out; k++) fits &= ox_mul_i64(outer, size[order[k]], &outer);
    /* many operands with distinct labels multiply up quickly */
    for (int k = n_out; k < n_all; k++) fits &= ox_mul_i64(inner, size[order[k]], &inner);
    if (!fits) {
        free(str);
        free(occ);
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "Einsum: the summed-over label sizes multiply past int64");
    }
    if (ox_tensor_numel(Y) != outer) {
        free(str);
        free(occ);
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Einsum: output size does not match");
    }
    if (nops == 2 && (Y->dtype == ONYX_FLOAT32 || Y->dtype == ONYX_FLOAT64)) {
        int done = 0;
        rc = einsum_as_gemm(ctx, size, str, occ, order, n_out, n_all, &done);
        if (rc || done) {
            free(str);
            free(occ);
            return rc;
        }
    }
    free(occ);
    int is_f = ox_dtype_is_float(Y->dtype);
    /* operands as doubles (floats) or 64-bit integers */
    void *data[OX_MAX_RANK] = {0};
    for (int i = 0; i < nops && !rc; i++) {
        const ox_tensor *t = ctx->inputs[i];
        int64_t n = ox_tensor_numel(t);
        data[i] = malloc(8 * (size_t)(n > 0 ? n : 1));
        if (!data[i]) {
            rc = ox_cpu_oom(ctx);
            break;
        }
        for (int64_t e = 0; e < n; e++) {
            if (is_f)
                ((double *)data[i])[e] = ox_get_f64(t->data, t->dtype, (size_t)e);
            else
                ((int64_t *)data[i])[e] = ox_get_i64(t->data, t->dtype, (size_t)e);
        }
    }
    if (!rc) {
        int64_t idx[EIN_MAX_LABELS] = {0}, off[OX_MAX_RANK] = {0}, since_poll = 0;
        int stopped = 0; /* the executor reports it */
        for (int64_t o = 0; o < outer && !stopped; o++) {
            double accf = 0;
            uint64_t acci = 0;
            for (int64_t c = 0; c < inner; c++) {
                /* every 64k terms, whether within one output or across many */
                if (++since_poll == 65536) {
                    since_poll = 0;
                    if ((stopped = ox_stop_requested(ctx->stop)) != 0) break;
                }
                if (is_f) {
                    double prod = 1;
                    for (int i = 0; i < nops; i++) prod *= ((const double *)data[i])[off[i]];
                    accf += prod;
                } else {
                    uint64_t prod = 1;
                    for (int i = 0; i < nops; i++) prod *= (uint64_t)((const int64_t *)data[i])[off[i]];
                    acci += prod;
                }
                for (int k = n_all - 1; k >= n_out; k--) {
                    int l = order[k];
                    for (int i = 0; i < nops; i++) off[i] += str[i][l];
                    if (++idx[k] < size[l]) break;
                    for (int i = 0; i < nops; i++) off[i] -= str[i][l] * size[l];
                    idx[k] = 0;
                }
            }
            if (is_f)
                ox_set_f64(Y->data, Y->dtype, (size_t)o, accf);
            else
                ox_set_i64(Y->data, Y->dtype, (size_t)o, (int64_t)acci);
            for (int k = n_out - 1; k >= 0; k--) {
                int l = order[k];
                for (int i = 0; i < nops; i++) off[i] += str[i][l];
                if (++idx[k] < size[l]) break;
                for (int i = 0; i < nops; i++) off[i] -= str[i][l] * size[l];
                idx[k] = 0;
            }
        }
    }
    for (int i = 0; i < nops; i++) free(data[i]);
    free(str);
    return rc;
}

static const ox_kernel_def KERNELS[] = {
    {"", "Gemm", 1, 17, gemm_compute, supports_gemm_types, gemm_init, gemm_release, gemm_describe},
    {"", "MatMul", 1, 17, matmul_compute, supports_gemm_types, matmul_init, gemm_release, gemm_describe},
    {"", "MatMulInteger", 10, 17, matmul_integer_compute, NULL, matmul_integer_init, qmm_release, qmm_describe},
    {"", "QLinearMatMul", 10, 21, qlinear_matmul_compute, NULL, qlinear_matmul_init, qmm_release, qmm_describe},
    {"", "Det", 11, 22, det_compute, NULL, NULL, NULL, NULL},
    {"", "Einsum", 12, 28, einsum_compute, NULL, NULL, NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_linalg = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
