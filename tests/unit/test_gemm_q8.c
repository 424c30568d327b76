/* The exact 8-bit GEMM (ep/cpu/kernels/gemm_q8.c) against a plain int32
 * reference, bit for bit, on every path this machine has (ONYX_CPU_ISA
 * caps the choice: avx512 takes VNNI where the CPU has it, the others the
 * float32 path): all four signedness pairs, zero points per matrix, per
 * row of A and per column of B, extreme values (every product at its
 * largest), K past the float32 path's runs of 256 and not a multiple of
 * 4, ragged rows and columns, row strides past the width, B packed
 * once, two threads, and sums that wrap past 2^31. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/threadpool.h"
#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/gemm_q8.h"

static uint32_t rng_next(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

/* extreme: every value at the far end of the range from its zero point
 * (see zeros), so every product is 255 * 255 in magnitude */
static void fill(uint8_t *v, int64_t n, int is_signed, int extreme, uint64_t *s) {
    for (int64_t i = 0; i < n; i++) {
        uint32_t r = rng_next(s);
        v[i] = extreme ? (uint8_t)(is_signed ? 0x7f : 0) : (uint8_t)r;
    }
}

static int32_t at(const uint8_t *v, int is_signed, int64_t i) { return is_signed ? (int8_t)v[i] : v[i]; }

static void zeros(int32_t *z, int64_t n, int is_signed, int extreme, uint64_t *s) {
    for (int64_t i = 0; i < n; i++) {
        uint32_t r = rng_next(s);
        int32_t v = extreme ? (is_signed ? -128 : 255) : (int32_t)(r % 256);
        z[i] = is_signed && !extreme ? v - 128 : v;
    }
}

typedef struct qcase {
    int64_t M, N, K;
    int sa, sb;        /* signedness of A and B */
    int per_a, per_b;  /* zero point per row / column */
    int extreme, packed;
} qcase;

static void run(ox_threadpool *pool, const qcase *c, const char *isa, uint64_t seed) {
    const int64_t M = c->M, N = c->N, K = c->K, lda = K + 3, ldb = N + 5, ldc = N + 2;
    const int64_t brows = K;
    uint8_t *a = malloc((size_t)(M * lda)), *b = malloc((size_t)(brows * ldb));
    int32_t *za = malloc(sizeof(int32_t) * (size_t)M), *zb = malloc(sizeof(int32_t) * (size_t)N);
    int32_t *got = malloc(sizeof(int32_t) * (size_t)(M * ldc));
    if (!a || !b || !za || !zb || !got) {
        check_failures++;
        goto out;
    }
    uint64_t s = seed;
    fill(a, M * lda, c->sa, c->extreme, &s);
    fill(b, brows * ldb, c->sb, c->extreme, &s);
    zeros(za, M, c->sa, c->extreme, &s);
    zeros(zb, N, c->sb, c->extreme, &s);
    for (int64_t i = 0; i < M * ldc; i++) got[i] = 0x5a5a5a5a;
    ox_q8_matrix qa = {a, c->sa, lda, za, c->per_a};
    ox_q8_matrix qb = {b, c->sb, ldb, zb, c->per_b};
    int rc;
    if (c->packed) {
        ox_q8_packed_b *p = ox_q8_pack_b(K, N, &qb);
        CHECK(p != NULL);
        if (!p) goto out;
        rc = ox_gemm_q8_packed(pool, NULL, M, &qa, p, got, ldc);
        ox_q8_packed_b_free(p);
    } else {
        rc = ox_gemm_q8(pool, NULL, M, N, K, &qa, &qb, got, ldc);
    }
    CHECK(rc == 0);
    int64_t bad = 0;
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            uint32_t want = 0;
            int32_t zam = za[c->per_a ? m : 0], zbn = zb[c->per_b ? n : 0];
            for (int64_t k = 0; k < K; k++) {
                int32_t bv = at(b, c->sb, k * ldb + n);
                want += (uint32_t)((at(a, c->sa, m * lda + k) - zam) * (bv - zbn));
            }
            if ((uint32_t)got[m * ldc + n] != want && bad++ < 3)
                fprintf(stderr, "[%s %s] M=%lld N=%lld K=%lld s=%d%d z=%d%d x=%d p=%d: C[%lld][%lld] = %d, want %d\n",
                        isa, ox_gemm_q8_path(), (long long)M, (long long)N, (long long)K, c->sa, c->sb, c->per_a,
                        c->per_b, c->extreme, c->packed, (long long)m, (long long)n, got[m * ldc + n], (int32_t)want);
        }
    CHECK(bad == 0);
    /* the padding between rows of C is never written */
    for (int64_t m = 0; m < M; m++) CHECK(got[m * ldc + N] == 0x5a5a5a5a && got[m * ldc + N + 1] == 0x5a5a5a5a);
out:
    free(a);
    free(b);
    free(za);
    free(zb);
    free(got);
}

int main(void) {
    static const char *const isas[] = {"portable", "avx2", "avx512"};
    ox_cpu_isa best = ox_cpu_isa_best();
    ox_threadpool *pool = ox_threadpool_create(2);
    static const int64_t shapes[][3] = {{1, 1, 1},   {1, 16, 64},  {3, 33, 7},   {8, 32, 4},
                                        {9, 31, 257}, {17, 70, 300}, {70, 5, 513}, {65, 48, 96}};
    for (int v = 0; v <= (int)best; v++) {
        setenv("ONYX_CPU_ISA", isas[v], 1);
        if (v < (int)OX_ISA_AVX512) CHECK(strcmp(ox_gemm_q8_path(), "float32") == 0);
        uint64_t seed = 1;
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            for (int signs = 0; signs < 4; signs++)
                for (int variant = 0; variant < 4; variant++) {
                    qcase c = {shapes[si][0], shapes[si][1], shapes[si][2], signs & 1, signs >> 1,
                               variant & 1, variant >> 1, variant == 3, (int)(si % 3 != 0)};
                    run(variant == 2 ? pool : NULL, &c, isas[v], seed++);
                }
        /* every product at 255 * 255 over K = 40000: the sum wraps past
         * 2^31 and must wrap exactly as int32 arithmetic does */
        qcase wrap = {2, 3, 40000, 0, 0, 0, 0, 1, 0};
        run(pool, &wrap, isas[v], seed++);
        qcase wrap_signed = {2, 17, 40000, 1, 1, 1, 1, 1, 1};
        run(NULL, &wrap_signed, isas[v], seed++);
    }
    ox_threadpool_free(pool);
    CHECK_DONE();
}
