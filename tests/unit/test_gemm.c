/* The float32 GEMM (ep/cpu/kernels/gemm.c) on every path it takes: a row
 * vector (against B as given, against small weights as given, and
 * against weights of 64K floats or more through their pack: ragged last
 * panel, K no multiple of 4, several slabs), few rows with op(B) transposed, small products, and the packed
 * path with A read in place or packed (transposed), B packed or read in
 * place or packed once beforehand (weights), several K slabs, ragged edge
 * tiles; all four transpositions,
 * leading dimensions past the matrix width, alpha and beta (beta 0 must
 * not read C: it starts as NaN), one and two threads. Reference in double;
 * tolerance 1e-5 of the sum of |terms| plus 1e-6. Fully connected
 * products (B as given or as weights) give the same bits with one
 * thread or three. All of it under each tile the machine can run: the
 * best (AVX-512 where the machine has it), then ONYX_CPU_ISA=avx2 and
 * portable. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/threadpool.h"
#include "ep/cpu/kernels/gemm.h"

static float val(int64_t i, int salt) { return (float)((i * (7 + salt) + salt) % 23) / 11.0f - 1.0f; }

static void one(ox_threadpool *pool, int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha,
                float beta, int packed) {
    /* rows padded past the matrix, except for K a multiple of 1024: A's
     * rows are then 4 KiB apart, which makes the packed path pack A (not
     * transposed) instead of reading it in place */
    const int64_t pad = K % 1024 == 0 ? 0 : 3;
    const int64_t lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + 5;
    const int64_t arows = ta ? K : M, brows = tb ? N : K;
    float *a = malloc(sizeof(float) * (size_t)(arows * lda + 1));
    float *b = malloc(sizeof(float) * (size_t)(brows * ldb + 1));
    float *c = malloc(sizeof(float) * (size_t)(M * ldc + 1));
    if (!a || !b || !c) {
        check_failures++;
        goto out;
    }
    for (int64_t i = 0; i < arows * lda; i++) a[i] = val(i, 1);
    for (int64_t i = 0; i < brows * ldb; i++) b[i] = val(i, 2);
    for (int64_t i = 0; i < M * ldc; i++) c[i] = beta == 0.0f ? NAN : val(i, 3);
    float *c0 = malloc(sizeof(float) * (size_t)(M * ldc + 1));
    if (!c0) {
        check_failures++;
        goto out;
    }
    memcpy(c0, c, sizeof(float) * (size_t)(M * ldc));
    if (packed) {
        /* packed 2: B is zeros once the weights are made, so only their
         * pack gives the right product (shapes that take the packed path) */
        float *bcopy = malloc(sizeof(float) * (size_t)(brows * ldb + 1));
        memcpy(bcopy, b, sizeof(float) * (size_t)(brows * ldb));
        ox_gemm_weights *w = ox_gemm_weights_new(tb, K, N, bcopy, ldb);
        CHECK(w != NULL && !ox_gemm_weights_packed(w));
        float *c1 = malloc(sizeof(float) * (size_t)(M * ldc + 1));
        memcpy(c1, c, sizeof(float) * (size_t)(M * ldc));
        /* twice: the first product packs, the second uses the pack */
        CHECK(ox_gemm_f32_weights(pool, NULL, M, alpha, a, lda, w, beta, c1, ldc) == 0);
        if (packed == 2) {
            CHECK(ox_gemm_weights_packed(w));
            memset(bcopy, 0, sizeof(float) * (size_t)(brows * ldb));
        }
        CHECK(ox_gemm_f32_weights(pool, NULL, M, alpha, a, lda, w, beta, c, ldc) == 0);
        CHECK(memcmp(c, c1, sizeof(float) * (size_t)(M * ldc)) == 0);
        free(c1);
        ox_gemm_weights_free(w);
        free(bcopy);
    } else {
        CHECK(ox_gemm_f32(pool, NULL, ta, tb, M, N, K, alpha, a, lda, b, ldb, beta, c, ldc) == 0);
    }
    int bad = 0;
    for (int64_t i = 0; i < M && bad < 3; i++)
        for (int64_t x = 0; x < N && bad < 3; x++) {
            double s = 0, mag = 0;
            for (int64_t k = 0; k < K; k++) {
                double av = ta ? a[k * lda + i] : a[i * lda + k];
                double bv = tb ? b[x * ldb + k] : b[k * ldb + x];
                s += av * bv;
                mag += fabs(av * bv);
            }
            double want = alpha * s + (beta == 0.0f ? 0.0 : beta * (double)c0[i * ldc + x]);
            double tol = 1e-5 * (fabs(alpha) * mag + (beta == 0.0f ? 0.0 : fabs(beta) * fabs(c0[i * ldc + x]))) + 1e-6;
            if (!(fabs(c[i * ldc + x] - want) <= tol)) {
                fprintf(stderr, "ta %d tb %d M %lld N %lld K %lld alpha %g beta %g: C[%lld][%lld] = %.9g, want %.9g\n",
                        ta, tb, (long long)M, (long long)N, (long long)K, alpha, beta, (long long)i,
                        (long long)x, c[i * ldc + x], want);
                bad++;
            }
        }
    /* the padding between rows of C is never written */
    for (int64_t i = 0; i < M && !bad; i++)
        for (int64_t x = N; x < ldc; x++)
            if (memcmp(&c[i * ldc + x], &c0[i * ldc + x], sizeof(float)) != 0) bad++;
    CHECK(bad == 0);
    free(c0);
out:
    free(a);
    free(b);
    free(c);
}

static void all_paths(void) {
    static const int64_t shapes[][3] = {
        {1, 37, 50},   {1, 300, 700}, {5, 9, 17},    {7, 1, 40},    {13, 29, 31},  {6, 16, 336},
        {37, 16, 336}, {64, 70, 300}, {100, 33, 513}, {150, 200, 64}, {17, 350, 257}, {300, 47, 1},
        /* rows 4 KiB apart (A packed), several row blocks per task */
        {160, 40, 1024},
        /* one to three rows against weights: the two-panel tile, its
         * second panel ragged (20, 45, 100 columns), several slabs */
        {2, 45, 300},  {3, 100, 513}, {3, 20, 100},  {2, 33, 70},
    };
    ox_threadpool *pools[2] = {NULL, ox_threadpool_create(2)};
    for (int p = 0; p < 2; p++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int t = 0; t < 4; t++) {
                int64_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
                for (int packed = 0; packed < ((t & 1) ? 1 : 2); packed++) {
                    one(pools[p], t & 1, t >> 1, M, N, K, 1.0f, 0.0f, packed);
                    one(pools[p], t & 1, t >> 1, M, N, K, 0.5f, 1.0f, packed);
                    one(pools[p], t & 1, t >> 1, M, N, K, 1.0f, 0.25f, packed);
                }
            }
    /* large enough for the packed path: the pack alone is read */
    for (int p = 0; p < 2; p++) {
        one(pools[p], 0, 0, 64, 70, 300, 1.0f, 0.0f, 2);
        one(pools[p], 0, 1, 150, 200, 64, 1.0f, 0.25f, 2);
        one(pools[p], 0, 0, 37, 16, 336, 1.0f, 0.0f, 2);
        /* a row vector against weights of 64K floats or more: their pack
         * (ragged last panel, K no multiple of 4, several slabs) */
        one(pools[p], 0, 0, 1, 300, 700, 1.0f, 0.0f, 2);
        one(pools[p], 0, 1, 1, 101, 701, 0.5f, 1.0f, 2);
    }
    /* a row vector against weights this large reads their pack (above:
     * B zeroed once packed; here the pack exists after one product) */
    {
        enum { K = 700, N = 300 };
        float *a = calloc(K, sizeof(float)), *b = calloc((size_t)K * N, sizeof(float)), *c = calloc(N, sizeof(float));
        ox_gemm_weights *w = ox_gemm_weights_new(0, K, N, b, N);
        CHECK(w && ox_gemm_f32_weights(NULL, NULL, 1, 1.0f, a, K, w, 0.0f, c, N) == 0);
        CHECK(w && ox_gemm_weights_packed(w));
        CHECK(ox_gemm_weights_new(0, 0, N, b, N) == NULL);
        ox_gemm_weights_free(w);
        free(a);
        free(b);
        free(c);
    }
    /* Fully connected products (one row, and few rows against a
     * transposed B) give the same bits whatever the pool: the column
     * ranges it hands out begin at other columns with three threads
     * than with one (few rows: 16384 / (M K) = 11 columns per range),
     * and a column's value must not depend on where its range begins. */
    {
        /* K N past ROW_PACK_MIN: one row against the weights reads the pack */
        enum { M = 2, K = 700, N = 101 };
        ox_threadpool *three = ox_threadpool_create(3);
        float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * N * K);
        float *c1 = malloc(sizeof(float) * M * N), *c3 = malloc(sizeof(float) * M * N);
        for (int64_t i = 0; i < M * K; i++) a[i] = val(i, 3) * 1.37f;
        for (int64_t i = 0; i < N * K; i++) b[i] = val(i, 5) * 0.71f;
        for (int64_t rows = 1; rows <= M; rows++) {
            CHECK(ox_gemm_f32(NULL, NULL, 0, 1, rows, N, K, 1.0f, a, K, b, K, 0.0f, c1, N) == 0);
            CHECK(ox_gemm_f32(three, NULL, 0, 1, rows, N, K, 1.0f, a, K, b, K, 0.0f, c3, N) == 0);
            CHECK(memcmp(c1, c3, sizeof(float) * (size_t)(rows * N)) == 0);
            /* as weights (packed; two rows: the two-panel tile, whose
             * pairs of panels begin elsewhere in other column blocks) */
            ox_gemm_weights *w = ox_gemm_weights_new(1, K, N, b, K);
            CHECK(w && ox_gemm_f32_weights(NULL, NULL, rows, 1.0f, a, K, w, 0.0f, c1, N) == 0);
            CHECK(w && ox_gemm_f32_weights(three, NULL, rows, 1.0f, a, K, w, 0.0f, c3, N) == 0);
            CHECK(memcmp(c1, c3, sizeof(float) * (size_t)(rows * N)) == 0);
            ox_gemm_weights_free(w);
        }
        ox_threadpool_free(three);
        free(a);
        free(b);
        free(c1);
        free(c3);
    }
    ox_threadpool_free(pools[1]);
}

int main(void) {
    static const char *const caps[] = {NULL, "avx2", "portable"};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        if (caps[i]) setenv("ONYX_CPU_ISA", caps[i], 1);
        all_paths();
    }
    unsetenv("ONYX_CPU_ISA");
    CHECK_DONE();
}
