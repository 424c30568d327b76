/* IR validation at load: every structural error is reported with the
 * node or value it concerns, never a crash. */
#include <stdlib.h>

#include "check.h"
#include "model_builder.h"

static onyx_env *env;
static const int64_t D[] = {2, 3};

static mb_model *base(void) {
    mb_model *m = mb_new(13);
    mb_input(m, "x", ONYX_FLOAT32, D, 2);
    mb_output(m, "y", ONYX_FLOAT32, D, 2);
    return m;
}

static onyx_status *load(mb_model *m) {
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    onyx_session *s = NULL;
    onyx_status *st = onyx_session_create_from_buffer(env, buf, len, NULL, &s);
    onyx_session_free(s);
    free(buf);
    mb_free(m);
    return st;
}

int main(void) {
    CHECK_OK(onyx_env_create(&env));

    mb_model *m = base();
    mb_node(m, "Relu", "x", "y");
    CHECK_OK(load(m));

    /* an input no one defines (e.g. a missing initializer) */
    m = base();
    mb_node(m, "Add", "x,missing_weight", "y");
    CHECK_FAILS(load(m), ONYX_INVALID_MODEL,
                "input 'missing_weight' is not produced by any node, graph input or initializer");

    /* a cycle: a -> b -> a */
    m = base();
    mb_node(m, "Add", "x,b", "a");
    mb_node(m, "Relu", "a", "b");
    mb_node(m, "Relu", "b", "y");
    CHECK_FAILS(load(m), ONYX_INVALID_MODEL, "has a cycle");

    /* a value assigned twice */
    m = base();
    mb_node(m, "Relu", "x", "y");
    mb_node(m, "Sigmoid", "x", "y");
    CHECK_FAILS(load(m), ONYX_INVALID_MODEL, "output 'y' is already defined");

    /* an unknown operator names op, domain, opset and node */
    m = base();
    mb_node(m, "FrobnicateTensor", "x", "y");
    CHECK_FAILS(load(m), ONYX_INVALID_MODEL,
                "node 'FrobnicateTensor_0' (FrobnicateTensor): unknown operator FrobnicateTensor "
                "in domain 'ai.onnx' (opset 13)");

    /* an attribute of the wrong type */
    m = base();
    mb_node(m, "Softmax", "x", "y");
    mb_attr_float(m, "axis", 1.0f);
    CHECK_FAILS(load(m), ONYX_INVALID_MODEL, "attribute 'axis' must be of type int, the model gives float");

    /* an attribute the operator does not have */
    m = base();
    mb_node(m, "Relu", "x", "y");
    mb_attr_int(m, "alpha", 2);
    CHECK_FAILS(load(m), ONYX_INVALID_MODEL, "attribute 'alpha' is not defined for Relu");

    /* an output nobody produces */
    m = base();
    mb_node(m, "Relu", "x", "z");
    CHECK_FAILS(load(m), ONYX_INVALID_MODEL, "output 'y' is not produced");

    /* too few inputs */
    m = base();
    mb_node(m, "Add", "x", "y");
    CHECK_FAILS(load(m), ONYX_INVALID_MODEL, "has 1 inputs, Add takes 2..2");

    /* shapes that cannot broadcast are found by inference at load */
    m = mb_new(13);
    int64_t d2[] = {2, 4};
    mb_input(m, "x", ONYX_FLOAT32, D, 2);
    mb_input(m, "z", ONYX_FLOAT32, d2, 2);
    mb_output(m, "y", ONYX_FLOAT32, D, 2);
    mb_node(m, "Add", "x,z", "y");
    CHECK_FAILS(load(m), ONYX_INVALID_ARGUMENT, "cannot be broadcast");

    onyx_env_free(env);
    CHECK_DONE();
}
