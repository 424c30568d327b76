/* The fuse_rotary pass (src/optimizer/fuse_rotary.c) and the kernel of
 * onyx.RotaryEmbedding it hands the work to, on rotary embeddings written
 * out as exporters write apply_rotary_pos_emb, over x [2, 4, 8, 16]:
 *   a: the torch.export-based exporter's form (Mul(x, cos), Slices of
 *      axis -1 with steps, ending at INT64_MAX, Neg, Concat, Mul by sin,
 *      Add), tables [1, 1, 8, 16];
 *   b: the products and the sum the other way round, Slices of axis 3
 *      without steps ending at 16, tables [8, 16], x also read by a
 *      residual Add;
 *   c: a cosine table whose halves differ: not fused;
 *   d: the rotated half also a graph output: not fused;
 *   e: tables per batch entry, [2, 1, 8, 16].
 * At level ALL three onyx.RotaryEmbedding nodes and two Negs remain (c's
 * and d's), and every output equals level BASIC's bit for bit: the kernel
 * rounds each product and then the sum, as the written-out nodes do.
 * Then the operator alone on caches of one table for the batch, which
 * only the onyx domain's accepts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model_builder.h"
#include "session_util.h"

enum { B = 2, H = 4, S = 8, D = 16, HALF = D / 2, NOUT = 6 };

static const char *const OUTS[NOUT] = {"ya", "yb", "yc", "yd", "cd", "ye"};
static const int64_t DX[4] = {B, H, S, D};

static float frand(unsigned *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 65536.0f - 0.5f;
}

/* A rotary table of rows rows: each row's two halves equal, unless
 * `uneven` (then one element of the second half differs). */
static void table(float *t, int rows, unsigned seed, int uneven) {
    for (int r = 0; r < rows; r++)
        for (int i = 0; i < HALF; i++) t[r * D + i] = t[r * D + HALF + i] = 2.0f * frand(&seed);
    if (uneven) t[D - 1] += 0.5f;
}

/* The torch.export-based exporter's form on input x with tables cos and
 * sin: nodes named after `tag`, the rotated half as `rot` (a name the
 * caller may make an output), the result as `out`. */
static void exported_rotary(mb_model *m, const char *x, const char *cos, const char *sin, const char *tag,
                            const char *rot, const char *out) {
    char in[64], mc[16], s1[16], s2[16], ng[16], q[16];
    snprintf(mc, sizeof mc, "m%s", tag);
    snprintf(s1, sizeof s1, "s1%s", tag);
    snprintf(s2, sizeof s2, "s2%s", tag);
    snprintf(ng, sizeof ng, "n%s", tag);
    snprintf(q, sizeof q, "q%s", tag);
    snprintf(in, sizeof in, "%s,%s", x, cos);
    mb_node(m, "Mul", in, mc);
    snprintf(in, sizeof in, "%s,zero,half,last,step", x);
    mb_node(m, "Slice", in, s1);
    snprintf(in, sizeof in, "%s,half,big,last,step", x);
    mb_node(m, "Slice", in, s2);
    mb_node(m, "Neg", s2, ng);
    snprintf(in, sizeof in, "%s,%s", ng, s1);
    mb_node(m, "Concat", in, rot);
    mb_attr_int(m, "axis", -1);
    snprintf(in, sizeof in, "%s,%s", rot, sin);
    mb_node(m, "Mul", in, q);
    snprintf(in, sizeof in, "%s,%s", mc, q);
    mb_node(m, "Add", in, out);
}

static uint8_t *model(size_t *len) {
    mb_model *m = mb_new(18);
    int64_t d1[] = {1};
    mb_input(m, "x", ONYX_FLOAT32, DX, 4);
    for (int k = 0; k < NOUT; k++) mb_output(m, OUTS[k], ONYX_FLOAT32, DX, 4);
    static float cos1[S * D], sin1[S * D], cos_bad[S * D], cosb[B * S * D], sinb[B * S * D];
    table(cos1, S, 1, 0);
    table(sin1, S, 2, 0);
    table(cos_bad, S, 3, 1);
    table(cosb, B * S, 4, 0);
    table(sinb, B * S, 5, 0);
    int64_t t4[] = {1, 1, S, D}, t2[] = {S, D}, tb[] = {B, 1, S, D};
    mb_init_float(m, "cos4", t4, 4, cos1);
    mb_init_float(m, "sin4", t4, 4, sin1);
    mb_init_float(m, "cos2", t2, 2, cos1);
    mb_init_float(m, "sin2", t2, 2, sin1);
    mb_init_float(m, "cos_bad", t4, 4, cos_bad);
    mb_init_float(m, "cosb", tb, 4, cosb);
    mb_init_float(m, "sinb", tb, 4, sinb);
    int64_t zero[] = {0}, half[] = {HALF}, big[] = {INT64_MAX}, end[] = {D}, last[] = {-1}, three[] = {3},
            one_i[] = {1};
    float one = 1.0f;
    mb_init_int64(m, "zero", d1, 1, zero);
    mb_init_int64(m, "half", d1, 1, half);
    mb_init_int64(m, "big", d1, 1, big);
    mb_init_int64(m, "end", d1, 1, end);
    mb_init_int64(m, "last", d1, 1, last);
    mb_init_int64(m, "three", d1, 1, three);
    mb_init_int64(m, "step", d1, 1, one_i);
    mb_init_float(m, "one", NULL, 0, &one);
    /* a */
    exported_rotary(m, "x", "cos4", "sin4", "a", "ca", "ya");
    /* b: on xb = x + 1, which a residual Add reads too */
    mb_node(m, "Add", "x,one", "xb");
    mb_node(m, "Mul", "cos2,xb", "mb");
    mb_node(m, "Slice", "xb,zero,half,three", "s1b");
    mb_node(m, "Slice", "xb,half,end,three", "s2b");
    mb_node(m, "Neg", "s2b", "nb");
    mb_node(m, "Concat", "nb,s1b", "cb");
    mb_attr_int(m, "axis", 3);
    mb_node(m, "Mul", "sin2,cb", "qb");
    mb_node(m, "Add", "qb,mb", "rb");
    mb_node(m, "Add", "rb,xb", "yb");
    /* c: halves of the cosine differ (each case on its own input, so
     * that common-subexpression elimination keeps them apart) */
    mb_node(m, "Sub", "x,one", "xc");
    exported_rotary(m, "xc", "cos_bad", "sin4", "c", "cc", "yc");
    /* d: the rotated half is an output too */
    mb_node(m, "Abs", "x", "xd");
    exported_rotary(m, "xd", "cos4", "sin4", "d", "cd", "yd");
    /* e: one table per batch entry */
    mb_node(m, "Mul", "x,x", "xe");
    exported_rotary(m, "xe", "cosb", "sinb", "e", "ce", "ye");
    uint8_t *buf = mb_serialize(m, len);
    mb_free(m);
    return buf;
}

/* The operators directly, caches [1, S, D/2] for a batch of B = 2:
 * onyx.RotaryEmbedding shares the one table over the batch (its output
 * equals RotaryEmbedding-23's with the table repeated per entry, bit for
 * bit), RotaryEmbedding-23 refuses it. */
static uint8_t *operator_model(const char *domain, int64_t cache_b, size_t *len) {
    mb_model *m = mb_new(23);
    int64_t dc[] = {cache_b, S, HALF};
    mb_input(m, "x", ONYX_FLOAT32, DX, 4);
    mb_input(m, "c", ONYX_FLOAT32, dc, 3);
    mb_input(m, "s", ONYX_FLOAT32, dc, 3);
    mb_output(m, "y", ONYX_FLOAT32, DX, 4);
    mb_node(m, "RotaryEmbedding", "x,c,s", "y");
    if (domain[0]) mb_domain(m, domain, 1);
    uint8_t *buf = mb_serialize(m, len);
    mb_free(m);
    return buf;
}

static onyx_status *run_operator(onyx_env *env, const char *domain, int64_t cache_b, const float *x,
                                 const float *cs, onyx_tensor **y) {
    size_t len = 0;
    uint8_t *buf = operator_model(domain, cache_b, &len);
    onyx_session *s = tu_session(env, buf, len, ONYX_OPT_NONE, 1);
    free(buf);
    *y = NULL;
    if (!s) return NULL;
    const int64_t dc[] = {cache_b, S, HALF};
    const size_t cn = (size_t)(cache_b * S * HALF);
    onyx_tensor *in[3] = {NULL, NULL, NULL};
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, DX, 4, (void *)x, sizeof(float) * B * H * S * D, &in[0]));
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, dc, 3, (void *)cs, sizeof(float) * cn, &in[1]));
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, dc, 3, (void *)(cs + cn), sizeof(float) * cn, &in[2]));
    const char *names[] = {"x", "c", "s"}, *out = "y";
    onyx_status *st = onyx_session_run(s, names, (const onyx_tensor *const *)in, 3, &out, y, 1);
    for (int k = 0; k < 3; k++) onyx_tensor_free(in[k]);
    onyx_session_free(s);
    return st;
}

static void test_shared_caches(onyx_env *env, const float *x) {
    /* cs: cos then sin for one entry ([1, S, HALF] each), cs2 the same
     * repeated for both entries */
    static float cs[2 * S * HALF], cs2[2 * B * S * HALF];
    unsigned seed = 5;
    for (int i = 0; i < 2 * S * HALF; i++) cs[i] = 2.0f * frand(&seed);
    for (int t = 0; t < 2; t++)
        for (int b = 0; b < B; b++)
            memcpy(cs2 + (t * B + b) * S * HALF, cs + t * S * HALF, sizeof(float) * S * HALF);
    onyx_tensor *shared = NULL, *repeated = NULL, *refused = NULL;
    CHECK_OK(run_operator(env, "onyx", 1, x, cs, &shared));
    CHECK_OK(run_operator(env, "", B, x, cs2, &repeated));
    CHECK(shared && repeated &&
          memcmp(onyx_tensor_data(shared), onyx_tensor_data(repeated), onyx_tensor_nbytes(repeated)) == 0);
    CHECK_FAILS(run_operator(env, "", 1, x, cs, &refused), ONYX_INVALID_ARGUMENT,
                "without position_ids the caches must be [2, 8, 8]");
    onyx_tensor_free(shared);
    onyx_tensor_free(repeated);
    onyx_tensor_free(refused);
}

int main(void) {
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    size_t len = 0;
    uint8_t *buf = model(&len);
    float *x = malloc(sizeof(float) * B * H * S * D);
    unsigned seed = 99;
    for (int i = 0; i < B * H * S * D; i++) x[i] = 4.0f * frand(&seed);
    onyx_session *basic = tu_session(env, buf, len, ONYX_OPT_BASIC, 1);
    onyx_session *all = tu_session(env, buf, len, ONYX_OPT_ALL, 1);
    if (basic && all) {
        CHECK(tu_count_op(basic, "", "Neg") == 5);
        CHECK(tu_count_op(all, "onyx", "RotaryEmbedding") == 3);
        CHECK(tu_count_op(all, "", "Neg") == 2);
        onyx_tensor *want[NOUT], *got[NOUT];
        tu_run_x(basic, x, DX, 4, OUTS, want, NOUT);
        tu_run_x(all, x, DX, 4, OUTS, got, NOUT);
        for (int k = 0; k < NOUT; k++) {
            const int same = got[k] && want[k] && onyx_tensor_nbytes(got[k]) == onyx_tensor_nbytes(want[k]) &&
                             memcmp(onyx_tensor_data(got[k]), onyx_tensor_data(want[k]),
                                    onyx_tensor_nbytes(want[k])) == 0;
            if (!same) fprintf(stderr, "  %s differs from level BASIC's\n", OUTS[k]);
            CHECK(same);
            onyx_tensor_free(got[k]);
            onyx_tensor_free(want[k]);
        }
    }
    onyx_session_free(all);
    onyx_session_free(basic);
    test_shared_caches(env, x);
    free(x);
    free(buf);
    onyx_env_free(env);
    CHECK_DONE();
}
