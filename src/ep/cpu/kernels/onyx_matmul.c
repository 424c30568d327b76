/* CPU kernel of onyx.FusedMatMul (schema in src/ops/onyx_matmul.c):
 * Y = activation(A B + bias), with B a [K, N] matrix (or [N, K] read
 * transposed, with transB). A's leading
 * dimensions are rows of one [rows, K] x [K, N] product, computed by the
 * shared gemm in chunks of rows; each chunk gets its bias and activation
 * right after the gemm wrote it, while it is still in cache, instead of
 * the separate passes over memory of MatMul, Add and the activation. */
#include <stdatomic.h>
#include <stdlib.h>

#include "ep/cpu/kernels/activation.h"
#include "ep/cpu/kernels/gemm.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"

/* Rows per chunk: about this many bytes of Y, so a chunk stays in L2
 * between the gemm and its epilogue. */
#define CHUNK_BYTES (256 << 10)

typedef struct fmm_job {
    const float *A, *B, *bias;
    ox_gemm_weights *w; /* a constant B, packed once, or NULL */
    float *Y;
    int64_t rows, K, N, chunk;
    int trans_b;
    ox_act act;
    ox_cpu_isa isa;
    const ox_stop *stop;
    atomic_int failed;
} fmm_job;

/* Rows [r0, r1) of A B into Y, from the pack when there is one. */
static int product(const fmm_job *j, ox_threadpool *pool, int64_t r0, int64_t r1) {
    if (j->w)
        return ox_gemm_f32_weights(pool, j->stop, r1 - r0, 1.0f, j->A + r0 * j->K, j->K, j->w, 0.0f,
                                   j->Y + r0 * j->N, j->N);
    return ox_gemm_f32(pool, j->stop, 0, j->trans_b, r1 - r0, j->N, j->K, 1.0f, j->A + r0 * j->K,
                       j->K, j->B, j->trans_b ? j->K : j->N, 0.0f, j->Y + r0 * j->N, j->N);
}

static void chunk_range(void *arg, int64_t c0, int64_t c1) {
    fmm_job *j = arg;
    for (int64_t c = c0; c < c1; c++) {
        int64_t r0 = c * j->chunk, r1 = r0 + j->chunk < j->rows ? r0 + j->chunk : j->rows;
        if (product(j, NULL, r0, r1)) {
            atomic_store(&j->failed, 1);
            return;
        }
        ox_act_bias_rows(&j->act, j->Y + r0 * j->N, r1 - r0, j->N, j->N, j->bias, j->isa);
    }
}

static void epilogue_range(void *arg, int64_t r0, int64_t r1) {
    fmm_job *j = arg;
    ox_act_bias_rows(&j->act, j->Y + r0 * j->N, r1 - r0, j->N, j->N, j->bias, j->isa);
}

static int supports_f32(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    (void)node;
    for (int i = 0; i < n_inputs; i++)
        if (inputs[i] && inputs[i]->dtype != ONYX_FLOAT32 && inputs[i]->dtype != ONYX_UNDEFINED)
            return 0;
    return 1;
}

static int fused_matmul_compute(ox_kernel_ctx *ctx) {
    const ox_tensor *A = ctx->inputs[0], *B = ctx->inputs[1], *bias = ox_cpu_input(ctx, 2);
    ox_tensor *Y = ctx->outputs[0];
    fmm_job j = {0};
    if (ox_act_of_node(ctx->node, &j.act) != 0) {
        size_t np = 0;
        ir_attr_floats(ctx->node, "activation_params", &np);
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED,
                              "FusedMatMul: activation '%s' with %zu parameters is not supported",
                              ir_attr_string(ctx->node, "activation", ""), np);
    }
    j.trans_b = ir_attr_int(ctx->node, "transB", 0) != 0;
    if (B->rank != 2 || A->rank < 1 || A->dims[A->rank - 1] != B->dims[j.trans_b])
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "FusedMatMul: A's last dimension must match B's %s, B 2-D",
                              j.trans_b ? "columns (transB)" : "rows");
    j.K = B->dims[j.trans_b];
    j.N = B->dims[!j.trans_b];
    j.rows = j.K ? ox_tensor_numel(A) / j.K : (A->rank > 1 ? ox_numel(A->dims, A->rank - 1) : 1);
    if (ox_tensor_numel(Y) != j.rows * j.N)
        return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR,
                              "FusedMatMul: output shape does not match inputs");
    if (bias && (bias->dtype != ONYX_FLOAT32 || ox_tensor_numel(bias) != j.N))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "FusedMatMul: bias must be float32 with N = %lld values",
                              (long long)j.N);
    if (j.rows == 0 || j.N == 0) return 0;
    j.A = A->data;
    j.B = B->data;
    /* the weights are the constant B they were made from */
    ox_gemm_weights *w = ctx->state;
    j.w = w && ox_gemm_weights_k(w) == j.K && ox_gemm_weights_n(w) == j.N ? w : NULL;
    j.bias = bias ? bias->data : NULL;
    j.Y = Y->data;
    j.stop = ctx->stop;
    j.isa = ox_cpu_isa_active();
    atomic_init(&j.failed, 0);
    int64_t chunk = CHUNK_BYTES / (int64_t)sizeof(float) / j.N;
    chunk = chunk < 16 ? 16 : (chunk + 7) / 8 * 8;
    int threads = ox_threadpool_size(ctx->pool);
    int64_t chunks = (j.rows + chunk - 1) / chunk;
    if (threads > 1 && chunks < threads) {
        /* too few chunks to share: one product over the pool, then the
         * epilogue split over rows */
        if (product(&j, ctx->pool, 0, j.rows)) return ox_cpu_oom(ctx);
        int64_t grain = 16384 / j.N;
        ox_parallel_for(ctx->pool, j.rows, grain < 1 ? 1 : grain, epilogue_range, &j);
        return 0;
    }
    if (threads > 1) {
        /* chunks of equal rows, as many for each thread: [1344, 64] x
         * [64, 64] in chunks of 1024 and 320 rows kept one thread 3 times
         * as long as the other */
        chunks = (chunks + threads - 1) / threads * threads;
        chunk = ((j.rows + chunks - 1) / chunks + 7) / 8 * 8;
        chunks = (j.rows + chunk - 1) / chunk;
    }
    j.chunk = chunk;
    ox_parallel_for(ctx->pool, chunks, 1, chunk_range, &j);
    return atomic_load(&j.failed) ? ox_cpu_oom(ctx) : 0;
}

/* A constant B becomes weights packed once, on the first product that
 * takes the packed path (the small-product paths read B itself). */
static int fused_matmul_init(const ox_kernel_init *in, void **state, ox_error *err) {
    (void)err;
    const ox_tensor *B = in->n_inputs > 1 ? in->consts[1] : NULL;
    int tb = ir_attr_int(in->node, "transB", 0) != 0;
    *state = NULL;
    if (B && B->dtype == ONYX_FLOAT32 && B->rank == 2)
        *state = ox_gemm_weights_new(tb, B->dims[tb], B->dims[!tb], B->data, B->dims[1]);
    return 0; /* without weights (or memory for them) B is packed per run */
}

static void fused_matmul_release(void *state) { ox_gemm_weights_free(state); }

static const char *fused_matmul_describe(const void *state) {
    return ox_gemm_weights_packed(state) ? "gemm on weights packed once" : NULL;
}

static const ox_kernel_def KERNELS[] = {
    {"onyx", "FusedMatMul", 1, 1, fused_matmul_compute, supports_f32, fused_matmul_init,
     fused_matmul_release, fused_matmul_describe},
};

const ox_kernel_table ox_cpu_kernels_onyx_matmul = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
