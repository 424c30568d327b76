/* Fuzz target: model bytes -> onyx_session_create_from_buffer -> one run
 * with every input made up (small shapes, seeded values) -> free.
 *
 * Unknown and symbolic dimensions become 1..3 and values are small
 * numbers, both from a seed hashed from the input bytes, so a crash input
 * replays exactly. Models whose inputs would hold more than
 * MAX_INPUT_ELEMS elements in all are loaded but not run: one execution
 * must stay fast. The run has a time limit and the session a memory
 * limit (fuzz_common.h), as a deployment running strangers' models would
 * set, so a Loop with a huge trip count ends with ONYX_TIMEOUT; what
 * still reaches libFuzzer's -timeout or -rss_limit_mb is a finding. */
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/tensor.h"
#include "fuzz_common.h"
#include "model_mutator.h"

#define MAX_INPUT_ELEMS 4096
#define MAX_SEQ_ITEMS 2

typedef struct run_inputs {
    size_t n;
    const char **names;
    onyx_tensor **values;
} run_inputs;

static int64_t small_dim(uint64_t *rng) { return 1 + (int64_t)(fuzz_next(rng) % 3); }

/* Small values that are valid for every element type and often valid as
 * indices, axes and shapes (negative ones only for signed types). */
static void fill(onyx_tensor *t, uint64_t *rng) {
    ox_dtype dt = t->dtype;
    size_t n = (size_t)ox_tensor_numel(t);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = fuzz_next(rng);
        if (dt == ONYX_STRING) {
            static const char *const words[] = {"", "a", "onyx", "Zz 9"};
            onyx_status_free(onyx_tensor_set_string(t, (int64_t)i, words[r % 4]));
        } else if (ox_dtype_is_float(dt) || dt == ONYX_COMPLEX64 || dt == ONYX_COMPLEX128) {
            if (dt == ONYX_COMPLEX64) ((float *)t->data)[2 * i] = (float)(r % 9) * 0.5f - 2.0f;
            else if (dt == ONYX_COMPLEX128) ((double *)t->data)[2 * i] = (double)(r % 9) * 0.5 - 2.0;
            else ox_set_f64(t->data, dt, i, (double)(r % 9) * 0.5 - 2.0);
        } else if (dt == ONYX_BOOL) {
            ((uint8_t *)t->data)[i] = (uint8_t)(r & 1);
        } else if (ox_dtype_is_unsigned_int(dt) || dt == ONYX_UINT4 || dt == ONYX_UINT2 ||
                   ox_dtype_is_narrow_float(dt)) {
            ox_set_f64(t->data, dt, i, (double)(r % 4));
        } else {
            ox_set_f64(t->data, dt, i, (double)(r % 6) - 2.0);
        }
    }
}

/* A tensor for one input description, or NULL when it would be too big
 * (budget is what is left of MAX_INPUT_ELEMS). */
static onyx_tensor *make_tensor(const onyx_value_info *info, uint64_t *rng, int64_t *budget) {
    int rank = info->rank >= 0 ? info->rank : 1;
    if (rank > OX_MAX_RANK || !ox_dtype_valid((int)info->dtype) || info->dtype == ONYX_UNDEFINED)
        return NULL;
    int64_t dims[OX_MAX_RANK];
    int64_t numel = 1;
    for (int i = 0; i < rank; i++) {
        int64_t d = info->rank >= 0 ? info->dims[i] : -1;
        dims[i] = d >= 0 ? d : small_dim(rng);
        if (dims[i] > MAX_INPUT_ELEMS) return NULL;
        numel *= dims[i];
        if (numel > *budget) return NULL;
    }
    *budget -= numel;
    onyx_tensor *t = NULL;
    onyx_status *st = onyx_tensor_create(info->dtype, dims, rank, &t);
    if (st) {
        onyx_status_free(st);
        return NULL;
    }
    fill(t, rng);
    return t;
}

/* Sequences get one or two tensors, optionals one (made internally: the
 * public API has no constructor for them). */
static onyx_tensor *make_value(const onyx_value_info *info, uint64_t *rng, int64_t *budget) {
    if (info->kind == ONYX_KIND_TENSOR) return make_tensor(info, rng, budget);
    ox_error err = {0};
    if (info->kind == ONYX_KIND_OPTIONAL) {
        onyx_tensor *item = make_tensor(info, rng, budget);
        return item ? ox_optional_new(info->dtype, item, &err) : NULL;
    }
    ox_tensor *seq = ox_sequence_new(info->dtype, &err);
    int n = 1 + (int)(fuzz_next(rng) % MAX_SEQ_ITEMS);
    for (int i = 0; seq && i < n; i++) {
        onyx_tensor *item = make_tensor(info, rng, budget);
        if (!item || ox_sequence_push(seq, item, &err) != 0) {
            ox_tensor_free(item);
            ox_tensor_free(seq);
            return NULL;
        }
    }
    return seq;
}

static void free_inputs(run_inputs *in) {
    for (size_t i = 0; i < in->n; i++) onyx_tensor_free(in->values[i]);
    free(in->names);
    free(in->values);
}

/* 0 when every input could be made within the budget. */
static int make_inputs(const onyx_session *s, uint64_t *rng, run_inputs *in) {
    in->n = onyx_session_input_count(s);
    in->names = calloc(in->n + 1, sizeof *in->names);
    in->values = calloc(in->n + 1, sizeof *in->values);
    if (!in->names || !in->values) return -1;
    int64_t budget = MAX_INPUT_ELEMS;
    for (size_t i = 0; i < in->n; i++) {
        onyx_value_info info;
        if (onyx_session_input_info(s, i, &info) != NULL) fuzz_fail("input_info(%zu)", i);
        in->names[i] = info.name;
        in->values[i] = make_value(&info, rng, &budget);
        if (!in->values[i]) return -1;
    }
    return 0;
}

static void run_once(onyx_session *s, uint64_t seed) {
    run_inputs in = {0};
    size_t n_out = onyx_session_output_count(s);
    const char **out_names = calloc(n_out + 1, sizeof *out_names);
    onyx_tensor **outs = calloc(n_out + 1, sizeof *outs);
    uint64_t rng = seed;
    if (out_names && outs && make_inputs(s, &rng, &in) == 0) {
        for (size_t i = 0; i < n_out; i++) {
            onyx_value_info info;
            if (onyx_session_output_info(s, i, &info) != NULL) fuzz_fail("output_info(%zu)", i);
            out_names[i] = info.name;
        }
        onyx_run_options *ro = NULL;
        if (onyx_run_options_create(&ro) != NULL) fuzz_fail("run options");
        onyx_status_free(onyx_run_options_set_time_limit_ms(ro, FUZZ_TIME_LIMIT_MS));
        onyx_status *st = onyx_session_run_with_options(
            s, ro, in.names, (const onyx_tensor *const *)in.values, in.n, out_names, outs, n_out);
        onyx_run_options_free(ro);
        if (!st)
            for (size_t i = 0; i < n_out; i++)
                if (!outs[i]) fuzz_fail("run succeeded without output '%s'", out_names[i]);
        fuzz_check_status(st, "onyx_session_run");
    }
    for (size_t i = 0; i < n_out && outs; i++) onyx_tensor_free(outs[i]);
    free(outs);
    free(out_names);
    free_inputs(&in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    onyx_session_options *o = fuzz_options(ONYX_OPT_ALL);
    onyx_session *s = NULL;
    onyx_status *st = onyx_session_create_from_buffer(fuzz_env(), data, size, o, &s);
    onyx_session_options_free(o);
    if (st) {
        if (s) fuzz_fail("session create failed but returned a session");
        fuzz_check_status(st, "onyx_session_create_from_buffer");
        return 0;
    }
    run_once(s, fuzz_hash(data, size));
    onyx_session_free(s);
    return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
    return fuzz_mutate_model(data, size, max_size, seed);
}
