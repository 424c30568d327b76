/* CPU kernels of the linear-algebra operators. Float32 products go
 * through the packed GEMM in gemm.c; other element types use plain
 * loops. */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/gemm.h"
#include "ep/ep.h"

extern const ox_kernel_table ox_cpu_kernels_linalg;

static const ox_tensor *input(const ox_kernel_ctx *ctx, int i) {
    return i < ctx->n_inputs ? ctx->inputs[i] : NULL;
}

static int oom(ox_kernel_ctx *ctx) {
    return ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "%s: out of memory", ctx->node->op_type);
}

/* float16 / bfloat16 run through float32 copies. */
static float *to_f32(const ox_tensor *t) {
    int64_t n = ox_tensor_numel(t);
    float *f = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    if (!f) return NULL;
    const uint16_t *h = t->data;
    if (t->dtype == ONYX_FLOAT16)
        for (int64_t i = 0; i < n; i++) f[i] = ox_half_to_float(h[i]);
    else
        for (int64_t i = 0; i < n; i++) f[i] = ox_bf16_to_float(h[i]);
    return f;
}

static void from_f32(ox_tensor *t, const float *f) {
    int64_t n = ox_tensor_numel(t);
    uint16_t *h = t->data;
    if (t->dtype == ONYX_FLOAT16)
        for (int64_t i = 0; i < n; i++) h[i] = ox_float_to_half(f[i]);
    else
        for (int64_t i = 0; i < n; i++) h[i] = ox_float_to_bf16(f[i]);
}


/* Saturating double -> integer conversions (truncating, like a cast). */
static int64_t sat_i64(double v) {
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

static uint64_t sat_u64(double v) {
    if (!(v > 0)) return 0;
    if (v >= 18446744073709551615.0) return UINT64_MAX;
    return (uint64_t)v;
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
GEMM_INT(uint32_t, uint32_t, sat_u64, gemm_u32)
GEMM_INT(uint64_t, uint64_t, sat_u64, gemm_u64)

static int gemm_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *A = input(ctx, 0), *B = input(ctx, 1), *C = input(ctx, 2);
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
        if (ox_gemm_f32(ctx->pool, ta, tb, M, N, K, alpha, A->data, lda, B->data, ldb,
                        C ? beta : 0.0f, Y->data, N))
            return oom(ctx);
        return 0;
    case ONYX_FLOAT64:
        if (C && beta != 0.0f) fill_c_f64(Y->data, C->data, cv, M, N);
        return ox_gemm_f64(ctx->pool, ta, tb, M, N, K, alpha, A->data, lda, B->data, ldb,
                           C ? beta : 0.0, Y->data, N);
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16: {
        float *a = to_f32(A), *b = to_f32(B), *c = C ? to_f32(C) : NULL;
        float *y = malloc(sizeof(float) * (size_t)(M * N));
        int rc = 0;
        if (!a || !b || !y || (C && !c)) {
            rc = oom(ctx);
        } else {
            if (C && beta != 0.0f) fill_c_f32(y, c, cv, M, N);
            if (ox_gemm_f32(ctx->pool, ta, tb, M, N, K, alpha, a, lda, b, ldb, C ? beta : 0.0f, y, N))
                rc = oom(ctx);
            else
                from_f32(Y, y);
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
    int dtype; /* ONYX_FLOAT32 or ONYX_FLOAT64 */
    atomic_int failed;
} mm_job;

static int mm_one(const mm_job *j, int64_t idx, ox_threadpool *pool) {
    const mm_plan *p = j->p;
    int64_t ao, bo;
    mm_offsets(p, idx, &ao, &bo);
    int64_t yo = idx * p->M * p->N;
    if (j->dtype == ONYX_FLOAT32)
        return ox_gemm_f32(pool, 0, 0, p->M, p->N, p->K, 1.0f, (const float *)j->A + ao, p->K,
                           (const float *)j->B + bo, p->N, 0.0f, (float *)j->Y + yo, p->N);
    return ox_gemm_f64(pool, 0, 0, p->M, p->N, p->K, 1.0, (const double *)j->A + ao, p->K,
                       (const double *)j->B + bo, p->N, 0.0, (double *)j->Y + yo, p->N);
}

static void mm_batch_range(void *arg, int64_t b0, int64_t b1) {
    mm_job *j = arg;
    for (int64_t i = b0; i < b1; i++)
        if (mm_one(j, i, j->pool)) atomic_store(&j->failed, 1);
}

static int mm_float(ox_kernel_ctx *ctx, const mm_plan *p, const void *A, const void *B, void *Y,
                    int dtype) {
    if (p->nb == 0 || p->M == 0 || p->N == 0) return 0;
    mm_job j = {p, A, B, Y, ctx->pool, dtype, 0};
    atomic_init(&j.failed, 0);
    if (p->b_count == 1 && p->a_full) {
        /* every A matrix meets the same B: one tall product */
        int64_t rows = p->nb * p->M;
        int rc = dtype == ONYX_FLOAT32
                     ? ox_gemm_f32(ctx->pool, 0, 0, rows, p->N, p->K, 1.0f, A, p->K, B, p->N, 0.0f, Y,
                                   p->N)
                     : ox_gemm_f64(ctx->pool, 0, 0, rows, p->N, p->K, 1.0, A, p->K, B, p->N, 0.0, Y,
                                   p->N);
        return rc ? oom(ctx) : 0;
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
    return atomic_load(&j.failed) ? oom(ctx) : 0;
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

static int matmul_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *A = input(ctx, 0), *B = input(ctx, 1);
    ox_tensor *Y = ctx->outputs[0];
    mm_plan p;
    if (mm_plan_make(ctx, A, B, &p)) return -1;
    if (ox_tensor_numel(Y) != p.nb * p.M * p.N)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "MatMul: output shape does not match inputs");
    switch (A->dtype) {
    case ONYX_FLOAT32:
    case ONYX_FLOAT64:
        return mm_float(ctx, &p, A->data, B->data, Y->data, A->dtype);
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16: {
        float *a = to_f32(A), *b = to_f32(B);
        int64_t ny = ox_tensor_numel(Y);
        float *y = malloc(sizeof(float) * (size_t)(ny > 0 ? ny : 1));
        int rc;
        if (!a || !b || !y) {
            rc = oom(ctx);
        } else {
            rc = mm_float(ctx, &p, a, b, y, ONYX_FLOAT32);
            if (!rc) from_f32(Y, y);
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

static const ox_kernel_def KERNELS[] = {
    {"", "Gemm", 1, 17, gemm_compute, supports_gemm_types, NULL, NULL},
    {"", "MatMul", 1, 17, matmul_compute, supports_gemm_types, NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_linalg = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
