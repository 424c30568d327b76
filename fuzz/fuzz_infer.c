/* Fuzz target: session creation alone (load, validate, optimize, shape
 * inference, partition, plan) on mutated models, at the optimization
 * level the first input byte chooses (byte % 3); the rest of the input is
 * the model. The structure-aware mutator of model_mutator.c changes
 * attributes, dimensions, types and initializers of valid models, which
 * is what shape inference computes with. */
#include "fuzz_common.h"
#include "model_mutator.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    onyx_session_options *o = fuzz_options((onyx_opt_level)(data[0] % 3));
    onyx_session *s = NULL;
    onyx_status *st = onyx_session_create_from_buffer(fuzz_env(), data + 1, size - 1, o, &s);
    onyx_session_options_free(o);
    if (st && s) fuzz_fail("session create failed but returned a session");
    fuzz_check_status(st, "onyx_session_create_from_buffer");
    /* what a caller reads back must be there for every input and output */
    for (size_t i = 0; s && i < onyx_session_input_count(s); i++) {
        onyx_value_info info;
        if (onyx_session_input_info(s, i, &info) != NULL || !info.name)
            fuzz_fail("input %zu has no description", i);
    }
    for (size_t i = 0; s && i < onyx_session_output_count(s); i++) {
        onyx_value_info info;
        if (onyx_session_output_info(s, i, &info) != NULL || !info.name)
            fuzz_fail("output %zu has no description", i);
    }
    onyx_session_free(s);
    return 0;
}

/* The level byte is kept (changed now and then); the model after it gets
 * the model mutator. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
    if (size < 2 || max_size < 2) return LLVMFuzzerMutate(data, size, max_size);
    if (seed % 16 == 0) {
        data[0] = (uint8_t)(data[0] + 1);
        return size;
    }
    return 1 + fuzz_mutate_model(data + 1, size - 1, max_size - 1, seed);
}
