/* The fuse_rmsnorm pass (src/optimizer/fuse_rmsnorm.c) and the
 * SimplifiedLayerNormalization kernel it hands the work to, on RMS
 * normalizations written out as exporters write them, over [4, 16, 256]
 * (64 rows: the kernel splits them over two threads):
 *   a: the torch.export-based exporter's form at opset 18 (Pow by a float
 *      2, ReduceMean with its axes as an input, Reciprocal, Mul by x, the
 *      weight's Mul);
 *   b: TorchScript's at opset 18 (Pow by an integer 2, 1 / s by Div, Mul
 *      the other way round, a Cast to float32, the weight's Mul last),
 *      with x also read by a residual Add;
 *   c: x * x and Div(x, s) without a weight (a scale of ones is added);
 *   d: the sum of squares and epsilon also a graph output: not fused;
 *   e: a mean over axis 1 instead of the last: not fused.
 * At level ALL three SimplifiedLayerNormalization nodes and two
 * ReduceMeans remain (d's and e's), and every output matches level BASIC
 * within TOL (the kernel sums the squares in double, the written-out form
 * in float32), at one and at two threads. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model_builder.h"
#include "session_util.h"

enum { B = 4, L = 16, H = 256, NOUT = 6 };
/* in units of (1e-5 + |value|); the largest difference seen on an AMD
 * Zen 4: 2.3e-7 */
#define TOL 2e-6

static const char *const OUTS[NOUT] = {"ya", "yb", "yc", "yd", "ve", "ye"};
static const int64_t DX[3] = {B, L, H};

static float frand(unsigned *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 65536.0f - 0.5f;
}

static uint8_t *model(size_t *len) {
    mb_model *m = mb_new(18);
    int64_t dx[] = {B, L, H}, dh[] = {H}, d1[] = {1}, dve[] = {B, 1, H};
    mb_input(m, "x", ONYX_FLOAT32, dx, 3);
    for (int k = 0; k < NOUT; k++)
        mb_output(m, OUTS[k], ONYX_FLOAT32, k == 4 ? dve : dx, 3);
    float w[H], two = 2.0f, one = 1.0f, eps5 = 1e-5f, eps6 = 1e-6f;
    unsigned seed = 7;
    for (int i = 0; i < H; i++) w[i] = 1.0f + frand(&seed);
    int64_t last[] = {-1}, axis1[] = {1}, two_i[] = {2};
    mb_init_float(m, "w", dh, 1, w);
    mb_init_float(m, "two", NULL, 0, &two);
    mb_init_int64(m, "two_i", NULL, 0, two_i);
    mb_init_float(m, "one", NULL, 0, &one);
    mb_init_float(m, "eps5", NULL, 0, &eps5);
    mb_init_float(m, "eps6", NULL, 0, &eps6);
    mb_init_int64(m, "last", d1, 1, last);
    mb_init_int64(m, "axis1", d1, 1, axis1);
    /* a */
    mb_node(m, "Pow", "x,two", "pa");
    mb_node(m, "ReduceMean", "pa,last", "ma");
    mb_node(m, "Add", "ma,eps6", "aa");
    mb_node(m, "Sqrt", "aa", "sa");
    mb_node(m, "Reciprocal", "sa", "ra");
    mb_node(m, "Mul", "x,ra", "na");
    mb_node(m, "Mul", "w,na", "ya");
    /* b: on x2 = x + 1, which the residual reads too */
    mb_node(m, "Add", "x,one", "x2");
    mb_node(m, "Pow", "x2,two_i", "pb");
    mb_node(m, "ReduceMean", "pb,last", "mb");
    mb_node(m, "Add", "eps5,mb", "ab");
    mb_node(m, "Sqrt", "ab", "sb");
    mb_node(m, "Div", "one,sb", "rb");
    mb_node(m, "Mul", "rb,x2", "nb");
    mb_node(m, "Cast", "nb", "cb");
    mb_attr_int(m, "to", ONYX_FLOAT32);
    mb_node(m, "Mul", "cb,w", "gb");
    mb_node(m, "Add", "gb,x2", "yb");
    /* c */
    mb_node(m, "Neg", "x", "x3");
    mb_node(m, "Mul", "x3,x3", "pc");
    mb_node(m, "ReduceMean", "pc,last", "mc");
    mb_node(m, "Add", "mc,eps6", "ac");
    mb_node(m, "Sqrt", "ac", "sc");
    mb_node(m, "Div", "x3,sc", "yc");
    /* d: the mean read elsewhere too (each case on its own input, so
     * that common-subexpression elimination keeps them apart) */
    mb_node(m, "Sub", "x,one", "x4");
    mb_node(m, "Pow", "x4,two", "pd");
    mb_node(m, "ReduceMean", "pd,last", "md");
    mb_node(m, "Add", "md,eps6", "ad");
    mb_node(m, "Sqrt", "ad", "sd");
    mb_node(m, "Div", "x4,sd", "nd");
    mb_node(m, "Mul", "nd,w", "yd0");
    mb_node(m, "Add", "yd0,md", "yd");
    /* e: over axis 1 */
    mb_node(m, "Abs", "x", "x5");
    mb_node(m, "Pow", "x5,two", "pe");
    mb_node(m, "ReduceMean", "pe,axis1", "ve");
    mb_node(m, "Add", "ve,eps6", "ae");
    mb_node(m, "Sqrt", "ae", "se");
    mb_node(m, "Div", "x5,se", "ye");
    uint8_t *buf = mb_serialize(m, len);
    mb_free(m);
    return buf;
}

int main(void) {
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    size_t len = 0;
    uint8_t *buf = model(&len);
    float *x = malloc(sizeof(float) * B * L * H);
    unsigned seed = 99;
    for (int i = 0; i < B * L * H; i++) x[i] = 4.0f * frand(&seed) + (float)(i % 7) * 0.25f;
    onyx_session *basic = tu_session(env, buf, len, ONYX_OPT_BASIC, 1);
    onyx_tensor *want[NOUT];
    if (basic) {
        CHECK(tu_count_op(basic, "", "ReduceMean") == 5);
        tu_run_x(basic, x, DX, 3, OUTS, want, NOUT);
    }
    for (int threads = 1; threads <= 2 && basic; threads++) {
        onyx_session *all = tu_session(env, buf, len, ONYX_OPT_ALL, threads);
        if (!all) continue;
        CHECK(tu_count_op(all, "", "SimplifiedLayerNormalization") == 3);
        CHECK(tu_count_op(all, "", "ReduceMean") == 2);
        CHECK(tu_count_op(all, "", "Reciprocal") == 0);
        onyx_tensor *got[NOUT];
        tu_run_x(all, x, DX, 3, OUTS, got, NOUT);
        for (int k = 0; k < NOUT; k++) {
            CHECK(got[k] && want[k] && onyx_tensor_numel(got[k]) == onyx_tensor_numel(want[k]));
            if (!got[k] || !want[k] || onyx_tensor_numel(got[k]) != onyx_tensor_numel(want[k])) continue;
            const float *a = onyx_tensor_data(got[k]), *b = onyx_tensor_data(want[k]);
            double worst = 0;
            for (int64_t i = 0; i < onyx_tensor_numel(got[k]); i++) {
                double d = fabs((double)a[i] - b[i]) / (1e-5 + fabs((double)b[i]));
                if (d > worst) worst = d;
            }
            if (worst > TOL) fprintf(stderr, "  %s at %d threads: %g of (1e-5 + |value|)\n", OUTS[k], threads, worst);
            CHECK(worst <= TOL);
            onyx_tensor_free(got[k]);
        }
        onyx_session_free(all);
    }
    if (basic)
        for (int k = 0; k < NOUT; k++) onyx_tensor_free(want[k]);
    onyx_session_free(basic);
    free(x);
    free(buf);
    onyx_env_free(env);
    CHECK_DONE();
}
