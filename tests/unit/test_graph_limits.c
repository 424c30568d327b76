/* Nodes have no cap on their inputs or outputs: a Concat of 300 inputs
 * and a Split into 300 outputs (torchvision's SSDLite export has a Concat
 * of more than 64) load, fold, infer, partition and run, in the main graph
 * and where constant folding evaluates them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model_builder.h"

#define WIDE 300

/* y = Concat(x_0 .. x_{WIDE-1}) along axis 0, each x_i of shape [1, 2];
 * then Split back into WIDE outputs, and z = the last of them + a
 * constant Concat of WIDE initializers (folded at load). */
static uint8_t *wide_model(size_t *len) {
    mb_model *m = mb_new(17);
    int64_t d1[] = {1, 2}, dy[] = {WIDE, 2};
    size_t cap = (size_t)WIDE * 16;
    char *ins = calloc(1, cap), *outs = calloc(1, cap), *consts = calloc(1, cap);
    char name[32];
    for (int i = 0; i < WIDE; i++) {
        snprintf(name, sizeof name, "x%d", i);
        mb_input(m, name, ONYX_FLOAT32, d1, 2);
        snprintf(ins + strlen(ins), cap - strlen(ins), "%sx%d", i ? "," : "", i);
        snprintf(outs + strlen(outs), cap - strlen(outs), "%ss%d", i ? "," : "", i);
        snprintf(consts + strlen(consts), cap - strlen(consts), "%sc%d", i ? "," : "", i);
        float c[2] = {(float)i, (float)-i};
        snprintf(name, sizeof name, "c%d", i);
        mb_init_float(m, name, d1, 2, c);
    }
    mb_output(m, "y", ONYX_FLOAT32, dy, 2);
    mb_output(m, "z", ONYX_FLOAT32, dy, 2);
    mb_output(m, "last", ONYX_FLOAT32, d1, 2);
    mb_node(m, "Concat", ins, "y");
    mb_attr_int(m, "axis", 0);
    mb_node(m, "Split", "y", outs);
    mb_attr_int(m, "axis", 0);
    mb_node(m, "Concat", consts, "cc"); /* all constant: folded at load */
    mb_attr_int(m, "axis", 0);
    mb_node(m, "Add", "y,cc", "z");
    snprintf(name, sizeof name, "s%d", WIDE - 1);
    mb_node(m, "Identity", name, "last");
    uint8_t *buf = mb_serialize(m, len);
    mb_free(m);
    free(ins);
    free(outs);
    free(consts);
    return buf;
}

int main(void) {
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    size_t len;
    uint8_t *buf = wide_model(&len);
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, NULL, &s));
    if (!s) CHECK_DONE();
    onyx_tensor *xt[WIDE];
    const char *in_names[WIDE];
    char *names = calloc(WIDE, 16);
    float xv[WIDE][2];
    int64_t d1[] = {1, 2};
    for (int i = 0; i < WIDE; i++) {
        snprintf(names + 16 * i, 16, "x%d", i);
        in_names[i] = names + 16 * i;
        xv[i][0] = (float)(2 * i);
        xv[i][1] = (float)(2 * i + 1);
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, d1, 2, xv[i], sizeof xv[i], &xt[i]));
    }
    const char *out_names[] = {"y", "z", "last"};
    onyx_tensor *outs[3] = {NULL, NULL, NULL};
    CHECK_OK(onyx_session_run(s, in_names, (const onyx_tensor *const *)xt, WIDE, out_names, outs, 3));
    if (outs[0] && outs[1] && outs[2]) {
        const float *y = onyx_tensor_data(outs[0]), *z = onyx_tensor_data(outs[1]);
        const float *last = onyx_tensor_data(outs[2]);
        for (int i = 0; i < WIDE; i++) {
            CHECK(y[2 * i] == (float)(2 * i) && y[2 * i + 1] == (float)(2 * i + 1));
            /* z = y + (i, -i) */
            CHECK(z[2 * i] == (float)(3 * i) && z[2 * i + 1] == (float)(i + 1));
        }
        CHECK(last[0] == (float)(2 * WIDE - 2) && last[1] == (float)(2 * WIDE - 1));
    }
    for (int i = 0; i < 3; i++) onyx_tensor_free(outs[i]);
    for (int i = 0; i < WIDE; i++) onyx_tensor_free(xt[i]);
    free(names);
    free(buf);
    onyx_session_free(s);
    onyx_env_free(env);
    CHECK_DONE();
}
