/* The per-call cost of onyx_session_run on a tiny model, from C: the
 * baseline bench/python_overhead.py compares the Python binding with.
 *
 * usage: run_overhead MODEL [RUNS]
 * MODEL has one float32 input of at most 64 elements once its symbolic
 * dimensions are 1. Each call does what one Python run() asks of the C
 * API: the input wrapped over caller memory, onyx allocating the output,
 * the output freed. Prints {"median_us": ..., "min_us": ...} over batches
 * of 1000 calls, on one thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "onyx.h"

#define BATCH 1000

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int fail(onyx_status *st) {
    fprintf(stderr, "run_overhead: %s\n", onyx_status_message(st));
    onyx_status_free(st);
    return 1;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static onyx_status *one_call(onyx_session *s, const char *in_name, const char *out_name,
                             const int64_t *dims, int rank, float *data, size_t nbytes) {
    onyx_tensor *in = NULL, *out = NULL;
    onyx_status *st = onyx_tensor_wrap(ONYX_FLOAT32, dims, rank, data, nbytes, &in);
    if (!st) st = onyx_session_run(s, &in_name, (const onyx_tensor *const *)&in, 1, &out_name, &out, 1);
    onyx_tensor_free(in);
    onyx_tensor_free(out);
    return st;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: run_overhead MODEL [RUNS]\n");
        return 2;
    }
    long runs = argc == 3 ? strtol(argv[2], NULL, 10) : 20000;
    if (runs < BATCH) runs = BATCH;
    onyx_env *env = NULL;
    onyx_session_options *opts = NULL;
    onyx_session *s = NULL;
    onyx_status *st = onyx_env_create(&env);
    if (!st) st = onyx_session_options_create(&opts);
    if (!st) st = onyx_session_options_set_threads(opts, 1);
    if (!st) st = onyx_session_create(env, argv[1], opts, &s);
    if (st) return fail(st);
    onyx_value_info in, out;
    if ((st = onyx_session_input_info(s, 0, &in)) || (st = onyx_session_output_info(s, 0, &out)))
        return fail(st);
    int64_t dims[8];
    int64_t n = 1;
    if (in.rank < 0 || in.rank > 8 || in.dtype != ONYX_FLOAT32) {
        fprintf(stderr, "run_overhead: want one float32 input of rank <= 8\n");
        return 1;
    }
    for (int i = 0; i < in.rank; i++) n *= dims[i] = in.dims[i] > 0 ? in.dims[i] : 1;
    float data[64] = {0};
    if (n > 64) {
        fprintf(stderr, "run_overhead: the input has more than 64 elements\n");
        return 1;
    }
    size_t nbytes = (size_t)n * sizeof(float);
    for (int i = 0; i < 100; i++) /* warm-up: plans, arenas */
        if ((st = one_call(s, in.name, out.name, dims, in.rank, data, nbytes))) return fail(st);
    long batches = runs / BATCH;
    double *per_call = malloc((size_t)batches * sizeof *per_call);
    if (!per_call) return 1;
    for (long b = 0; b < batches; b++) {
        double t0 = now_s();
        for (int i = 0; i < BATCH; i++)
            if ((st = one_call(s, in.name, out.name, dims, in.rank, data, nbytes))) return fail(st);
        per_call[b] = (now_s() - t0) / BATCH * 1e6;
    }
    qsort(per_call, (size_t)batches, sizeof *per_call, cmp_double);
    printf("{\"median_us\": %.3f, \"min_us\": %.3f, \"runs\": %ld}\n", per_call[batches / 2],
           per_call[0], batches * BATCH);
    free(per_call);
    onyx_session_free(s);
    onyx_session_options_free(opts);
    onyx_env_free(env);
    return 0;
}
