/* MatMulInteger over batches of A against one B (folded into one product
 * of all of A's rows: linalg.c's qmm_int32) and against a B per matrix
 * or a broadcast A (one product per matrix), bit for bit against the
 * definition in this file, under every instruction-set variant this
 * machine has: B a constant (packed at session creation) or an input
 * (packed per run), uint8 and int8, A zero points scalar, per row and
 * per row of each matrix ([matrices, M, 1]), B zero points scalar and
 * per column. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ep/cpu/kernels/cpu_isa.h"
#include "model_builder.h"
#include "onyx.h"

typedef struct mcase {
    int ra, rb;            /* ranks of A and B */
    int64_t ad[3], bd[3];  /* their dims */
    int a_signed, b_signed;
    int za_per_row, zb_per_col; /* za_per_row 2: one per row of each matrix */
    int b_const;           /* B an initializer (packed once) */
} mcase;

static uint32_t next(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

static int32_t byte_at(const uint8_t *v, int is_signed, int64_t i) { return is_signed ? (int8_t)v[i] : v[i]; }

static int64_t numel(const int64_t *d, int r) {
    int64_t n = 1;
    for (int i = 0; i < r; i++) n *= d[i];
    return n;
}

static void run_case(onyx_env *env, const mcase *c, const char *isa, uint64_t seed) {
    const int64_t M = c->ad[c->ra - 2], K = c->ad[c->ra - 1], N = c->bd[c->rb - 1];
    const int64_t na = c->ra == 3 ? c->ad[0] : 1, nbm = c->rb == 3 ? c->bd[0] : 1;
    const int64_t nb = na > nbm ? na : nbm;
    const int64_t nza = c->za_per_row == 2 ? na * M : c->za_per_row ? M : 1, nzb = c->zb_per_col ? N : 1;
    /* one per row of each matrix: shaped [matrices, M, 1], as the spec has it */
    const int64_t zad[3] = {c->za_per_row == 2 ? na : nza, M, 1};
    const int zar = c->za_per_row == 2 ? 3 : 1;
    const onyx_dtype at = c->a_signed ? ONYX_INT8 : ONYX_UINT8, bt = c->b_signed ? ONYX_INT8 : ONYX_UINT8;
    uint8_t *a = malloc((size_t)numel(c->ad, c->ra)), *b = malloc((size_t)numel(c->bd, c->rb));
    uint8_t za[64], zb[64];
    int32_t *want = malloc(sizeof(int32_t) * (size_t)(nb * M * N));
    onyx_session *s = NULL;
    onyx_tensor *t[3] = {0}, *y = NULL;
    if (!a || !b || !want || nza > 64 || nzb > 64) {
        check_failures++;
        goto out;
    }
    for (int64_t i = 0; i < numel(c->ad, c->ra); i++) a[i] = (uint8_t)next(&seed);
    for (int64_t i = 0; i < numel(c->bd, c->rb); i++) b[i] = (uint8_t)next(&seed);
    for (int64_t i = 0; i < nza; i++) za[i] = (uint8_t)next(&seed);
    for (int64_t i = 0; i < nzb; i++) zb[i] = (uint8_t)next(&seed);
    for (int64_t m = 0; m < nb; m++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                const int64_t am = na == 1 ? 0 : m, bm = nbm == 1 ? 0 : m;
                uint32_t acc = 0;
                for (int64_t k = 0; k < K; k++) {
                    int32_t av = byte_at(a, c->a_signed, (am * M + i) * K + k) - byte_at(za, c->a_signed, c->za_per_row == 2 ? am * M + i : c->za_per_row ? i : 0);
                    int32_t bv = byte_at(b, c->b_signed, (bm * K + k) * N + j) - byte_at(zb, c->b_signed, c->zb_per_col ? j : 0);
                    acc += (uint32_t)(av * bv);
                }
                want[(m * M + i) * N + j] = (int32_t)acc;
            }
    mb_model *mm = mb_new(10);
    mb_input(mm, "a", at, c->ad, c->ra);
    mb_input(mm, "az", at, zad, zar);
    if (c->b_const) {
        mb_init_bytes(mm, "b", bt, c->bd, c->rb, b);
        mb_init_bytes(mm, "bz", bt, &nzb, 1, zb);
    } else {
        mb_input(mm, "b", bt, c->bd, c->rb);
        mb_input(mm, "bz", bt, &nzb, 1);
    }
    mb_output(mm, "y", ONYX_INT32, NULL, -1);
    mb_node(mm, "MatMulInteger", "a,b,az,bz", "y");
    size_t len;
    uint8_t *buf = mb_serialize(mm, &len);
    mb_free(mm);
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, NULL, &s));
    free(buf);
    CHECK_OK(onyx_tensor_create(at, c->ad, c->ra, &t[0]));
    CHECK_OK(onyx_tensor_create(at, zad, zar, &t[1]));
    if (!c->b_const) CHECK_OK(onyx_tensor_create(bt, c->bd, c->rb, &t[2]));
    onyx_tensor *bz = NULL;
    if (!c->b_const) CHECK_OK(onyx_tensor_create(bt, &nzb, 1, &bz));
    if (!s || !t[0] || !t[1] || (!c->b_const && (!t[2] || !bz))) {
        check_failures++;
        onyx_tensor_free(bz);
        goto out;
    }
    memcpy(onyx_tensor_data(t[0]), a, (size_t)numel(c->ad, c->ra));
    memcpy(onyx_tensor_data(t[1]), za, (size_t)nza);
    const char *names[] = {"a", "az", "b", "bz"}, *out_name = "y";
    const onyx_tensor *ins[4] = {t[0], t[1], t[2], bz};
    if (!c->b_const) {
        memcpy(onyx_tensor_data(t[2]), b, (size_t)numel(c->bd, c->rb));
        memcpy(onyx_tensor_data(bz), zb, (size_t)nzb);
    }
    CHECK_OK(onyx_session_run(s, names, ins, c->b_const ? 2 : 4, &out_name, &y, 1));
    onyx_tensor_free(bz);
    if (!y) goto out;
    CHECK(onyx_tensor_dtype(y) == ONYX_INT32 && onyx_tensor_numel(y) == nb * M * N);
    const int32_t *got = onyx_tensor_data(y);
    int64_t bad = 0;
    for (int64_t i = 0; i < nb * M * N && i < onyx_tensor_numel(y); i++)
        if (got[i] != want[i] && bad++ < 3)
            fprintf(stderr, "[%s] A rank %d B rank %d%s: y[%lld] = %d, want %d\n", isa, c->ra, c->rb,
                    c->b_const ? " (const)" : "", (long long)i, got[i], want[i]);
    CHECK(bad == 0);
out:
    for (int i = 0; i < 3; i++) onyx_tensor_free(t[i]);
    onyx_tensor_free(y);
    onyx_session_free(s);
    free(a);
    free(b);
    free(want);
}

/* A zero point per row of each matrix must hold that many values: [5, 2,
 * 1] for five matrices of 3 rows is refused when the session is made. */
static void bad_zero_point(onyx_env *env) {
    const int64_t ad[3] = {5, 3, 8}, bd[2] = {8, 4}, zd[3] = {5, 2, 1};
    mb_model *m = mb_new(10);
    mb_input(m, "a", ONYX_UINT8, ad, 3);
    mb_input(m, "b", ONYX_UINT8, bd, 2);
    mb_input(m, "az", ONYX_UINT8, zd, 3);
    mb_output(m, "y", ONYX_INT32, NULL, -1);
    mb_node(m, "MatMulInteger", "a,b,az", "y");
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *s = NULL;
    CHECK_FAILS(onyx_session_create_from_buffer(env, buf, len, NULL, &s), ONYX_INVALID_MODEL,
                "a_zero_point has 10 values, expected 1 or 3");
    onyx_session_free(s);
    free(buf);
}

int main(void) {
    static const char *const isas[] = {"portable", "avx2", "avx512"};
    static const mcase cases[] = {
        /* a transformer's [tokens, batch, d] x [d, n]: one product of 17 x 2
         * rows, B packed at creation, per-row and per-column zero points */
        {3, 2, {17, 2, 40}, {40, 37}, 0, 1, 1, 1, 1},
        /* the same with B an input (packed per run), scalar zero points */
        {3, 2, {5, 3, 33}, {33, 40}, 1, 0, 0, 0, 0},
        /* folded, A's zero points per row of each matrix ([5, 3, 1]) */
        {3, 2, {5, 3, 33}, {33, 40}, 0, 1, 2, 1, 1},
        /* a B per matrix with them */
        {3, 3, {2, 3, 6}, {2, 6, 5}, 1, 0, 2, 0, 1},
        /* K past 256 and many columns, int8 both */
        {3, 2, {4, 6, 300}, {300, 70}, 1, 1, 1, 0, 1},
        /* a B per matrix: one product each */
        {3, 3, {2, 3, 6}, {2, 6, 5}, 0, 0, 1, 1, 0},
        /* A broadcast over B's matrices */
        {2, 3, {4, 7}, {3, 7, 9}, 0, 1, 0, 1, 0},
    };
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    ox_cpu_isa best = ox_cpu_isa_best();
    uint64_t seed = 11;
    for (int v = 0; v <= (int)best; v++) {
        setenv("ONYX_CPU_ISA", isas[v], 1);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(env, &cases[i], isas[v], seed++);
    }
    bad_zero_point(env);
    onyx_env_free(env);
    CHECK_DONE();
}
