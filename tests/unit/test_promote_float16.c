/* A float16 model on the CPU computes in float32 (optimizer pass
 * promote_float16): x (float16 input) -> Conv (float16 weights and bias,
 * initializers) -> Relu -> PRelu (a float16 slope; an identity on the
 * Relu's non-negative values, there because PRelu sorts out of order in
 * byte order, which a binary search of the operator list once missed) ->
 * Add (a float16 constant) -> y (float16 output), with the PRelu's output
 * also read by a Cast to float32 (a reader left in float16) -> r32. At
 * level basic the graph gains exactly three Casts: x up, the PRelu's
 * output down for the Cast, y down; at level none it has only its own.
 * Both levels' outputs are within one float16 rounding step per rounding
 * of a double reference (once at basic, after each node at none), and
 * basic's y is the reference rounded once: one float16 unit in the last
 * place at most. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/dtype.h"
#include "model_builder.h"

#define C_IN 3
#define C_OUT 4
#define HW 6

static float frand(unsigned *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static float half_round(float v) { return ox_half_to_float(ox_float_to_half(v)); }

typedef struct weights {
    uint16_t w[C_OUT * C_IN * 9], b[C_OUT], k[C_OUT], slope[C_OUT], x[C_IN * HW * HW];
} weights;

static uint8_t *model(const weights *wt, size_t *len) {
    mb_model *m = mb_new(17);
    const int64_t dx[] = {1, C_IN, HW, HW}, dy[] = {1, C_OUT, HW, HW};
    const int64_t dw[] = {C_OUT, C_IN, 3, 3}, db[] = {C_OUT}, dk[] = {C_OUT, 1, 1}, pads[] = {1, 1, 1, 1};
    mb_input(m, "x", ONYX_FLOAT16, dx, 4);
    mb_output(m, "y", ONYX_FLOAT16, dy, 4);
    mb_output(m, "r32", ONYX_FLOAT32, dy, 4);
    mb_init_half(m, "w", dw, 4, wt->w);
    mb_init_half(m, "b", db, 1, wt->b);
    mb_init_half(m, "k", dk, 3, wt->k);
    mb_init_half(m, "slope", dk, 3, wt->slope);
    mb_node(m, "Conv", "x,w,b", "c");
    mb_attr_ints(m, "pads", pads, 4);
    mb_node(m, "Relu", "c", "c0");
    mb_node(m, "PRelu", "c0,slope", "r");
    mb_node(m, "Add", "r,k", "y");
    mb_node(m, "Cast", "r", "r32");
    mb_attr_int(m, "to", ONYX_FLOAT32);
    uint8_t *buf = mb_serialize(m, len);
    mb_free(m);
    return buf;
}

/* the Relu's output (before the Add) in double, from the float16 values;
 * per_node: rounded to float16 after the convolution as level none does */
static void reference(const weights *wt, int per_node, double *r) {
    for (int o = 0; o < C_OUT; o++)
        for (int i = 0; i < HW; i++)
            for (int j = 0; j < HW; j++) {
                double acc = ox_half_to_float(wt->b[o]);
                for (int c = 0; c < C_IN; c++)
                    for (int di = 0; di < 3; di++)
                        for (int dj = 0; dj < 3; dj++) {
                            int ii = i + di - 1, jj = j + dj - 1;
                            if (ii < 0 || jj < 0 || ii >= HW || jj >= HW) continue;
                            acc += (double)ox_half_to_float(wt->x[(c * HW + ii) * HW + jj]) *
                                   ox_half_to_float(wt->w[((o * C_IN + c) * 3 + di) * 3 + dj]);
                        }
                if (per_node) acc = half_round((float)acc);
                r[(o * HW + i) * HW + j] = acc > 0 ? acc : 0;
            }
}

static size_t count_casts(const onyx_session *s) {
    size_t n = 0;
    for (size_t i = 0; i < onyx_session_node_count(s); i++) n += strcmp(onyx_session_node_op_type(s, i), "Cast") == 0;
    return n;
}

static void run_level(onyx_env *env, const weights *wt, const uint8_t *buf, size_t len, onyx_opt_level level) {
    onyx_session_options *o = NULL;
    onyx_session *s = NULL;
    const char *cpu[] = {"cpu"};
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_optimization_level(o, level));
    CHECK_OK(onyx_session_options_set_providers(o, cpu, 1));
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &s));
    onyx_session_options_free(o);
    if (!s) return;
    CHECK(count_casts(s) == (level == ONYX_OPT_NONE ? 1u : 4u));
    const int64_t dx[] = {1, C_IN, HW, HW};
    onyx_tensor *tx = NULL, *out[2] = {NULL, NULL};
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT16, dx, 4, (void *)wt->x, sizeof wt->x, &tx));
    const char *in[] = {"x"}, *names[] = {"y", "r32"};
    CHECK_OK(onyx_session_run(s, in, (const onyx_tensor *const *)&tx, 1, names, out, 2));
    static double r[C_OUT * HW * HW];
    reference(wt, level == ONYX_OPT_NONE, r);
    if (out[0] && out[1]) {
        CHECK(onyx_tensor_dtype(out[0]) == ONYX_FLOAT16 && onyx_tensor_dtype(out[1]) == ONYX_FLOAT32);
        const uint16_t *y = onyx_tensor_data(out[0]);
        const float *r32 = onyx_tensor_data(out[1]);
        for (int i = 0; i < C_OUT * HW * HW; i++) {
            double want_r = r[i], want_y = r[i] + ox_half_to_float(wt->k[i / (HW * HW)]);
            /* float16 has 11 significant bits: a unit in the last place
             * is at most 2^-10 of the value; float32 sums add next to nothing */
            double ulp_r = fabs(want_r) / 1024 + 1e-6, ulp_y = fabs(want_y) / 1024 + 1e-6;
            CHECK_NEAR(r32[i], want_r, ulp_r);
            /* level none rounds the sum too: one more step */
            CHECK_NEAR(ox_half_to_float(y[i]), want_y, (level == ONYX_OPT_NONE ? 2 : 1) * ulp_y);
        }
    }
    onyx_tensor_free(tx);
    onyx_tensor_free(out[0]);
    onyx_tensor_free(out[1]);
    onyx_session_free(s);
}

int main(void) {
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    static weights wt;
    unsigned seed = 5;
    for (size_t i = 0; i < sizeof wt.w / sizeof wt.w[0]; i++) wt.w[i] = ox_float_to_half(frand(&seed) * 0.5f);
    for (int i = 0; i < C_OUT; i++) wt.b[i] = ox_float_to_half(frand(&seed));
    for (int i = 0; i < C_OUT; i++) wt.k[i] = ox_float_to_half(frand(&seed) * 4.0f);
    for (int i = 0; i < C_OUT; i++) wt.slope[i] = ox_float_to_half(0.25f);
    for (size_t i = 0; i < sizeof wt.x / sizeof wt.x[0]; i++) wt.x[i] = ox_float_to_half(frand(&seed) * 3.0f);
    size_t len;
    uint8_t *buf = model(&wt, &len);
    run_level(env, &wt, buf, len, ONYX_OPT_NONE);
    run_level(env, &wt, buf, len, ONYX_OPT_BASIC);
    run_level(env, &wt, buf, len, ONYX_OPT_ALL);
    free(buf);
    onyx_env_free(env);
    CHECK_DONE();
}
